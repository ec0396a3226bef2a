//! The IO balancer: keeps reactors evenly loaded after connections landed unevenly.
//!
//! Every interval it compares the requests each reactor received since the last run and, when
//! the busiest reactor that has at least two connections carries clearly more than the least
//! busy one, asks it to move its busiest connection there (`Task::MigrateBusiest`). The move
//! itself is the reactors' business (`reactor.rs`): the connection's whole reactor-owned half,
//! buffered input included, changes hands, so nothing in flight is lost or reordered.

use crate::shared::{Shared, Task};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tracing::info;

/// A reactor is "clearly" busier when its load exceeds the least busy one's by this factor...
const IMBALANCE_RATIO: f64 = 1.2;
/// ...and by at least this many requests per interval (idle noise is not an imbalance).
const MIN_LOAD_DIFFERENCE: u64 = 100;

/// Chooses (from, to) given each reactor's load over the interval and its connection count.
pub fn plan(loads: &[u64], connections: &[usize]) -> Option<(usize, usize)> {
    assert_eq!(loads.len(), connections.len());
    let from = (0..loads.len()).filter(|index| connections[*index] >= 2).max_by_key(|index| loads[*index])?;
    let to = (0..loads.len()).min_by_key(|index| loads[*index])?;
    let (busy, idle) = (loads[from], loads[to]);
    let imbalanced = busy as f64 > idle as f64 * IMBALANCE_RATIO && busy - idle >= MIN_LOAD_DIFFERENCE;
    (from != to && imbalanced).then_some((from, to))
}

/// Runs the balancer every `interval` until shutdown.
pub fn balancer_loop(shared: Arc<Shared>, interval: Duration) {
    let received = |shared: &Shared| -> Vec<u64> {
        shared.reactors.iter().map(|reactor| reactor.probes.messages_in.get()).collect()
    };
    let mut last = received(&shared);
    shared.every(interval, || {
        let now = received(&shared);
        let loads: Vec<u64> = now.iter().zip(&last).map(|(now, before)| now - before).collect();
        last = now;
        // Only the reactors that take connections are evened out (all, unless packed).
        let active = shared.active_reactors();
        let loads = &loads[..active];
        let connections: Vec<usize> =
            shared.reactors[..active].iter().map(|reactor| reactor.connections.load(Ordering::Acquire)).collect();
        shared.balancer.runs.add(1);
        let Some((from, to)) = plan(loads, &connections) else { return };
        shared.balancer.imbalances_detected.add(1);
        info!(from, to, ?loads, ?connections, "IO balancer: reactors imbalanced");
        let gap = loads[from] - loads[to];
        if shared.reactors[from].try_push(Task::MigrateBusiest { to, gap }).is_ok() {
            shared.balancer.migrations.add(1);
            shared.reactors[from].wake();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_from_the_busiest_reactor_with_two_connections_to_the_least_busy() {
        assert_eq!(plan(&[10_000, 0], &[4, 0]), Some((0, 1)));
        assert_eq!(plan(&[10_000, 5_000, 100], &[1, 3, 1]), Some((1, 2)), "a lone connection cannot move");
        assert_eq!(plan(&[10_000, 9_000], &[2, 2]), None, "within 20%");
        assert_eq!(plan(&[150, 10], &[3, 1]), Some((0, 1)));
        assert_eq!(plan(&[90, 0], &[3, 1]), None, "idle noise");
        assert_eq!(plan(&[10_000, 0], &[1, 0]), None);
    }
}
