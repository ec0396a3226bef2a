//! Packed placement: connections on as few reactors as the load needs.
//!
//! Two reactors that each carry half the connections run dry between their clients' batches,
//! sleep in `epoll_wait` and are woken again, over and over; one reactor carrying them all finds
//! the next batch waiting and never sleeps. On this project's machines the wake-ups cost more
//! CPU than the requests they serve (BENCHMARKS.md, "Removing the hop"), so a second reactor
//! pays only when the first cannot keep up and a core is there for the second to run on.
//!
//! Reactors `0..active` take new connections (`Shared::least_loaded`). Every period
//! (`ferrogrid.io.packing`, [`PackingConfig`]; 1 s by default) this thread reads each reactor
//! thread's CPU time (`/proc/self/task/<tid>/schedstat`) and the machine's idle time
//! (`/proc/stat`), and [`plan`] decides:
//! - **grow** when every active reactor used at least `saturated-percent` of a core (85) and
//!   the machine had at least `spare-cores-percent` idle (90: almost a whole core): one more reactor
//!   becomes active and takes the busiest connection of the busiest active reactor (the IO
//!   balancer's move, `Task::MigrateBusiest`); the balancer then evens the active reactors out;
//! - **shrink** when the active reactors together used less than `shrink-below-percent` of a
//!   core (50) per reactor that would be left: the last active reactor gives every connection
//!   to the others (`Task::Vacate`).
//!
//! Inactive reactors still own their partitions, timers and sweeps; requests for their
//! partitions run on the reactor that read them (`held.rs`), which finds them free.
//! Without `/proc` (no CPU times) nothing changes: the reactors active at start stay so.

use crate::shared::{Shared, Task};
use ferrogrid_config::PackingConfig;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use tracing::info;

/// What to do with the active reactors.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    Stay,
    Grow,
    Shrink,
}

/// Decides from each reactor's CPU over the period (in cores) and the machine's idle cores.
pub fn plan(active: usize, busy: &[f64], idle_cores: f64, thresholds: &PackingConfig) -> Step {
    let cores = |percent: u32| f64::from(percent) / 100.0;
    let active = active.clamp(1, busy.len());
    let in_use = &busy[..active];
    let saturated = in_use.iter().all(|used| *used >= cores(thresholds.saturated_percent));
    if active < busy.len() && saturated && idle_cores >= cores(thresholds.spare_cores_percent) {
        return Step::Grow;
    }
    if active > 1 && in_use.iter().sum::<f64>() < cores(thresholds.shrink_below_percent) * (active - 1) as f64 {
        return Step::Shrink;
    }
    Step::Stay
}

/// Reactors active at start: 1 when placement is packed, else all.
pub fn initial_active(config: &ferrogrid_config::MemberConfig, reactor_count: usize) -> usize {
    match config.io.initial_placement {
        ferrogrid_config::Placement::Packed => 1,
        _ => reactor_count,
    }
}

/// The calling thread's Linux thread id.
pub fn current_thread_id() -> Option<u64> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// Nanoseconds thread `thread_id` of this process ran on a CPU.
fn thread_cpu_nanos(thread_id: u64) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{thread_id}/schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The machine's (idle, total) clock ticks summed over its CPUs, and the number of CPUs.
fn machine_ticks() -> Option<(u64, u64, usize)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let mut lines = text.lines();
    let fields: Vec<u64> =
        lines.next()?.strip_prefix("cpu ")?.split_whitespace().filter_map(|field| field.parse().ok()).collect();
    let cpus = lines.filter(|line| line.starts_with("cpu")).count();
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let total = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((idle, total, cpus.max(1)))
}

/// One reading of the reactors' CPU time and the machine's ticks.
struct Reading {
    at: Instant,
    reactors: Vec<u64>,
    machine: (u64, u64, usize),
}

fn read(shared: &Shared) -> Option<Reading> {
    let reactors = shared
        .reactors
        .iter()
        .map(|reactor| thread_cpu_nanos(reactor.thread_id.load(Ordering::Acquire)))
        .collect::<Option<Vec<u64>>>()?;
    Some(Reading { at: Instant::now(), reactors, machine: machine_ticks()? })
}

/// Each reactor's cores used and the machine's idle cores between two readings.
fn load_between(before: &Reading, after: &Reading) -> (Vec<f64>, f64) {
    let seconds = after.at.duration_since(before.at).as_secs_f64().max(1e-3);
    let busy = after.reactors.iter().zip(&before.reactors).map(|(a, b)| a.saturating_sub(*b) as f64 / 1e9 / seconds);
    let (idle, total, cpus) = after.machine;
    let ticks = total.saturating_sub(before.machine.1).max(1) as f64;
    let idle_cores = idle.saturating_sub(before.machine.0) as f64 / ticks * cpus as f64;
    (busy.collect(), idle_cores)
}

/// Runs packed placement every configured period until shutdown.
pub fn packing_loop(shared: Arc<Shared>) {
    let mut last = None;
    shared.every(shared.config.io.packing.period(), || {
        let Some(now) = read(&shared) else { return };
        if let Some(before) = last.replace(now) {
            let (busy, idle_cores) = load_between(&before, last.as_ref().expect("just set"));
            apply(&shared, &busy, idle_cores);
        }
    });
}

fn apply(shared: &Shared, busy: &[f64], idle_cores: f64) {
    let active = shared.active_reactors();
    let connections = |index: usize| shared.reactors[index].connections.load(Ordering::Acquire);
    // A reactor past the active ones that still has connections (its vacating did not fit its
    // inbox, or it was given one while it was active) gives them back now.
    for index in active..shared.reactor_count() {
        if connections(index) > 0 && shared.reactors[index].try_push(Task::Vacate { to: 0 }).is_ok() {
            shared.reactors[index].wake();
        }
    }
    match plan(active, busy, idle_cores, &shared.config.io.packing) {
        Step::Stay => {}
        Step::Grow => {
            shared.packing.active_reactors.set(active as u64 + 1);
            shared.packing.grows.add(1);
            info!(active = active + 1, ?busy, idle_cores, "packing: every active reactor saturated, one more active");
            let from =
                (0..active).filter(|index| connections(*index) >= 2).max_by(|a, b| busy[*a].total_cmp(&busy[*b]));
            if let Some(from) = from {
                if shared.reactors[from].try_push(Task::MigrateBusiest { to: active, gap: u64::MAX }).is_ok() {
                    shared.reactors[from].wake();
                }
            }
        }
        Step::Shrink => {
            let last = active - 1;
            shared.packing.active_reactors.set(last as u64);
            shared.packing.shrinks.add(1);
            let to = (0..last).min_by_key(|index| connections(*index)).expect("at least one left");
            info!(active = last, ?busy, "packing: the load fits in fewer reactors");
            if shared.reactors[last].try_push(Task::Vacate { to }).is_ok() {
                shared.reactors[last].wake();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn one_more_reactor_only_when_every_active_one_is_saturated_and_a_core_is_idle() {
        let plan = |active, busy: &[f64], idle| plan(active, busy, idle, &PackingConfig::default());
        assert_eq!(plan(1, &[0.95, 0.0], 1.0), Step::Grow);
        assert_eq!(plan(1, &[0.95, 0.0], 0.2), Step::Stay, "no idle core for a second reactor");
        assert_eq!(plan(1, &[0.87, 0.0], 0.55), Step::Stay, "half a core idle: a second reactor would share one");
        assert_eq!(plan(1, &[0.6, 0.0], 1.0), Step::Stay, "the first reactor keeps up");
        assert_eq!(plan(2, &[0.9, 0.5, 0.0], 2.0), Step::Stay, "one active reactor has room");
        assert_eq!(plan(2, &[0.9, 0.9, 0.0], 1.0), Step::Grow);
        assert_eq!(plan(2, &[0.9, 0.9], 1.0), Step::Stay, "every reactor is active already");
    }

    #[test]
    fn the_last_active_reactor_gives_its_connections_back_when_the_load_fits_in_fewer() {
        let plan = |active, busy: &[f64], idle| plan(active, busy, idle, &PackingConfig::default());
        assert_eq!(plan(2, &[0.2, 0.2], 1.5), Step::Shrink);
        assert_eq!(plan(2, &[0.4, 0.3], 1.5), Step::Stay, "0.7 cores would crowd one reactor");
        assert_eq!(plan(3, &[0.3, 0.3, 0.3], 1.5), Step::Shrink);
        assert_eq!(plan(1, &[0.0, 0.0], 2.0), Step::Stay, "one reactor stays active");
        assert_eq!(plan(0, &[0.0, 0.0], 2.0), Step::Stay, "active is at least one");
    }

    #[test]
    fn the_thresholds_are_settings() {
        let eager = PackingConfig {
            saturated_percent: 60,
            spare_cores_percent: 20,
            shrink_below_percent: 10,
            ..Default::default()
        };
        assert_eq!(plan(1, &[0.65, 0.0], 0.3, &eager), Step::Grow);
        assert_eq!(plan(1, &[0.65, 0.0], 0.3, &PackingConfig::default()), Step::Stay);
        assert_eq!(plan(2, &[0.2, 0.2], 1.5, &eager), Step::Stay, "0.4 cores is not below 0.1 per reactor left");
        assert_eq!(plan(2, &[0.05, 0.0], 1.5, &eager), Step::Shrink);
    }

    /// A member's shared state with `reactors` reactors that do not run: their inboxes keep
    /// what they were sent.
    fn shared(reactors: usize) -> (Arc<Shared>, Vec<crossbeam_channel::Receiver<Task>>) {
        let config = ferrogrid_config::MemberConfig::default();
        let (handles, inboxes): (Vec<_>, Vec<_>) = (0..reactors)
            .map(|_| {
                let (_poll, handle, inbox) = crate::server::new_reactor(&config).unwrap();
                (handle, inbox)
            })
            .unzip();
        let (shared, _events) = crate::server::shared_state(
            config,
            handles,
            {
                let address: std::net::SocketAddr = "127.0.0.1:5701".parse().unwrap();
                (address, address)
            },
            None,
            None,
        );
        (shared, inboxes)
    }

    #[test]
    fn a_packed_member_starts_with_one_active_reactor_and_places_connections_there() {
        let (shared, _inboxes) = shared(2);
        shared.reactors[0].connections.store(7, Ordering::Release);
        assert_eq!(shared.active_reactors(), 1);
        assert_eq!(shared.least_loaded(), 0, "the inactive reactor takes no connection");
        shared.packing.active_reactors.set(2);
        assert_eq!(shared.least_loaded(), 1);
    }

    #[test]
    fn growing_moves_the_busiest_connection_to_the_new_reactor_and_shrinking_vacates_it() {
        let (shared, inboxes) = shared(3);
        shared.reactors[0].connections.store(4, Ordering::Release);
        apply(&shared, &[0.95, 0.0, 0.0], 1.2);
        assert_eq!(shared.active_reactors(), 2);
        assert!(matches!(inboxes[0].try_recv(), Ok(Task::MigrateBusiest { to: 1, gap: u64::MAX })));
        apply(&shared, &[0.95, 0.0, 0.0], 0.1);
        assert_eq!(shared.active_reactors(), 2, "no idle core, no third reactor");
        shared.reactors[1].connections.store(2, Ordering::Release);
        apply(&shared, &[0.2, 0.15, 0.0], 1.5);
        assert_eq!(shared.active_reactors(), 1);
        assert!(matches!(inboxes[1].try_recv(), Ok(Task::Vacate { to: 0 })));
        assert!(inboxes[1].try_recv().is_err(), "one request to vacate per shrink");
        assert_eq!((shared.packing.grows.get(), shared.packing.shrinks.get()), (1, 1));
        assert!(inboxes[0].try_recv().is_err() && inboxes[2].try_recv().is_err());
        shared.reactors[2].connections.store(1, Ordering::Release);
        apply(&shared, &[0.5, 0.0, 0.0], 0.5);
        assert!(matches!(inboxes[2].try_recv(), Ok(Task::Vacate { to: 0 })), "an inactive reactor's connection");
    }

    #[test]
    fn loads_are_read_from_proc() {
        let id = current_thread_id().expect("Linux /proc/thread-self");
        let started = thread_cpu_nanos(id).expect("schedstat of this thread");
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            std::hint::black_box(0);
        }
        assert!(thread_cpu_nanos(id).unwrap() > started, "spinning used CPU time");
        let (idle, total, cpus) = machine_ticks().expect("/proc/stat");
        assert!(idle <= total && cpus >= 1);
    }
}
