//! When each other member was last heard from on its link, for split-brain protection's
//! recently-active rules (`route/protection.rs`).

use ferrogrid_cluster::MemberId;
use std::collections::HashMap;
use std::time::Instant;

/// When each other member was last heard from on its link (any membership message: heartbeats
/// come every `hazelcast.heartbeat.interval.seconds`), for recently-active rules. Written by
/// the cluster service; read only for requests such a rule guards.
#[derive(Debug, Default)]
pub(crate) struct Heard(parking_lot::RwLock<HashMap<MemberId, Instant>>);

impl Heard {
    pub(crate) fn heard(&self, member: MemberId, at: Instant) {
        self.0.write().insert(member, at);
    }

    /// Members of `members` (this member aside) heard within `tolerance_ms` of `now`.
    pub(crate) fn count_within(
        &self,
        members: impl Iterator<Item = MemberId>,
        now: Instant,
        tolerance_ms: u64,
    ) -> usize {
        let heard = self.0.read();
        let recent = |at: &Instant| now.saturating_duration_since(*at).as_millis() <= u128::from(tolerance_ms);
        members.filter(|member| heard.get(member).is_some_and(recent)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn members_count_when_heard_within_the_tolerance() {
        let heard = Heard::default();
        let now = Instant::now();
        heard.heard(MemberId(1), now - Duration::from_millis(100));
        heard.heard(MemberId(2), now - Duration::from_millis(3_000));
        let members = || [MemberId(1), MemberId(2), MemberId(3)].into_iter();
        assert_eq!(heard.count_within(members(), now, 1_000), 1);
        assert_eq!(heard.count_within(members(), now, 5_000), 2);
        assert_eq!(heard.count_within(std::iter::empty(), now, 5_000), 0);
    }
}
