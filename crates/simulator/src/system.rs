//! What the Simulator reads from the operating system: CPU time of processes
//! (`/proc/<pid>/stat`, Linux) and the clock tick it is counted in.

use std::sync::OnceLock;

/// Clock ticks per second assumed when `getconf CLK_TCK` cannot be run (Linux's value).
const DEFAULT_CLOCK_TICKS: f64 = 100.0;

/// User + system CPU seconds of process `pid`, or None if it cannot be read.
pub fn process_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    cpu_seconds_of_stat(&stat, clock_ticks_per_second())
}

/// User + system CPU seconds from the text of a `/proc/<pid>/stat` file. Fields 14 and 15
/// (utime, stime) count after the command name, which is in parentheses and may hold spaces.
fn cpu_seconds_of_stat(stat: &str, ticks_per_second: f64) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user + system) as f64 / ticks_per_second)
}

/// The summed CPU seconds of `pids`; None if `pids` is empty or one cannot be read.
pub fn cpu_of(pids: &[u32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&pid| process_cpu_seconds(pid)).sum()
}

/// This process's CPU seconds.
pub fn own_cpu() -> Option<f64> {
    process_cpu_seconds(std::process::id())
}

/// CPU seconds between two readings, if both exist.
pub fn cpu_difference(start: Option<f64>, end: Option<f64>) -> Option<f64> {
    Some((end? - start?).max(0.0))
}

fn clock_ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|output| String::from_utf8(output.stdout).ok())
            .and_then(|text| text.trim().parse().ok())
            .filter(|&ticks: &f64| ticks > 0.0)
            .unwrap_or(DEFAULT_CLOCK_TICKS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_the_name() {
        let stat = "4242 (java (main) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 30 0 1 2 3";
        assert_eq!(cpu_seconds_of_stat(stat, 100.0), Some(3.0));
        assert_eq!(cpu_seconds_of_stat("garbage", 100.0), None);
    }

    #[test]
    fn reads_this_process() {
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(30) {}
        assert!(own_cpu().unwrap() > 0.0);
        assert_eq!(cpu_of(&[]), None);
        assert_eq!(cpu_difference(Some(1.0), Some(3.5)), Some(2.5));
        assert_eq!(cpu_difference(None, Some(3.5)), None);
    }
}
