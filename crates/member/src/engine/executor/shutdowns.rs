//! The executors shut down, per reactor: what the executors' shutdown records and their
//! isShutdown and scheduled task requests read (`executor/rows.rs`). Kept apart from the rows so the
//! fan-out's share context (`wide.rs`) can hold it without importing them.

use std::collections::HashSet;

/// Which executor service a name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ExecutorKind {
    Plain,
    Durable,
    Scheduled,
}

/// The executors shut down: one copy per reactor, touched only by that reactor's shares (as
/// its listener registrations are).
#[derive(Debug, Default)]
pub struct Shutdowns(HashSet<(ExecutorKind, Box<str>)>);

impl Shutdowns {
    pub(crate) fn contains(&self, service: ExecutorKind, name: &str) -> bool {
        self.0.contains(&(service, Box::from(name)))
    }

    pub(crate) fn insert(&mut self, service: ExecutorKind, name: &str) {
        self.0.insert((service, name.into()));
    }

    pub(crate) fn remove(&mut self, service: ExecutorKind, name: &str) {
        self.0.remove(&(service, Box::from(name)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shutdown_is_per_service_and_name_until_forgotten() {
        let mut shutdowns = Shutdowns::default();
        shutdowns.insert(ExecutorKind::Plain, "ex");
        shutdowns.insert(ExecutorKind::Plain, "ex");
        assert!(shutdowns.contains(ExecutorKind::Plain, "ex"));
        assert!(!shutdowns.contains(ExecutorKind::Durable, "ex"), "another service's executor of the same name");
        assert!(!shutdowns.contains(ExecutorKind::Plain, "other"));
        shutdowns.remove(ExecutorKind::Plain, "ex");
        assert!(!shutdowns.contains(ExecutorKind::Plain, "ex"));
    }
}
