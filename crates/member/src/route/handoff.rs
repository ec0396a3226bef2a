//! Work a reactor gives the other reactors, owned by the reactor as [`Handoff`]: requests for
//! their partitions gathered per target over one read batch, tasks for their inboxes (kept in
//! order when an inbox is full), which of them to wake at the end of the batch, and the other
//! reactors' partitions this reactor holds while it runs a connection's requests on them itself
//! (borrowed: see ARCHITECTURE.md, "Threads and who owns what").

use crate::net::connection::ConnectionShared;
use crate::partition::held::OwnerGuard;
use crate::partition::owner::{Call, PartitionOwner};
use crate::route::envelope::{self, Handoffs};
use crate::route::operations;
use crate::shared::{Shared, Task};
use ferrogrid_protocol::{DecodeError, Message, MessageType, PartitionId};
use std::collections::VecDeque;
use std::sync::Arc;
use tracing::warn;

/// A reactor's dealings with the other reactors.
pub(crate) struct Handoff {
    shared: Arc<Shared>,
    /// Hand-offs that did not fit a target's inbox, per target, in order.
    pub(crate) overflow: Vec<VecDeque<Task>>,
    /// Reactors to wake at the end of this batch.
    pub(crate) wake: Vec<bool>,
    /// Requests for other reactors cut from the connection being processed, per target.
    pub(crate) outgoing: Vec<Handoffs>,
    /// Other reactors' partitions this reactor holds while it processes a connection's
    /// requests (`held.rs`), per reactor, with the deadline of their first timer when taken.
    pub(crate) borrowed: Vec<Option<(OwnerGuard, Option<i64>)>>,
}

impl Handoff {
    pub(crate) fn new(shared: Arc<Shared>) -> Handoff {
        let count = shared.reactor_count();
        Handoff {
            shared,
            overflow: (0..count).map(|_| VecDeque::new()).collect(),
            wake: vec![false; count],
            outgoing: (0..count).map(|_| Handoffs::default()).collect(),
            borrowed: (0..count).map(|_| None).collect(),
        }
    }

    /// Whether tasks wait for room in another reactor's inbox.
    pub(crate) fn has_overflow(&self) -> bool {
        self.overflow.iter().any(|queue| !queue.is_empty())
    }

    /// Whether this reactor holds reactor `target`'s partitions to run `connection`'s next
    /// request on them itself: taken only if nobody holds them (never waited for, so two
    /// reactors cannot wait on each other), and only while none of the connection's requests
    /// for them wait to be handed over, here or in an inbox (they would be overtaken).
    pub(crate) fn borrow(&mut self, connection: &ConnectionShared, target: usize, from_link: bool) -> bool {
        if from_link || connection.queued() > 0 || !self.outgoing[target].is_empty() {
            return false;
        }
        if self.borrowed[target].is_some() {
            return true;
        }
        let Some(mut guard) = self.shared.reactors[target].owner.get().and_then(|lock| lock.try_lock_arc()) else {
            return false;
        };
        guard.tick_clock();
        let next_timer = guard.next_deadline_ms();
        self.borrowed[target] = Some((guard, next_timer));
        true
    }

    /// Lets go of the other reactors' partitions, after writing what was run on them owes
    /// (answers to re-run requests, events, backups), so that those leave in the order the
    /// partitions made them. A timer sooner than the one their reactor sleeps until wakes it.
    /// Returns the bytes written.
    pub(crate) fn give_back(&mut self) -> usize {
        let mut written = 0;
        for target in 0..self.borrowed.len() {
            let Some((mut owner, next_timer)) = self.borrowed[target].take() else { continue };
            owner.flush_persistence();
            written += owner.outbox.flush() + owner.replication.flush();
            if owner.next_deadline_ms().is_some_and(|deadline| next_timer.is_none_or(|next| deadline < next)) {
                self.wake[target] = true;
            }
        }
        written
    }

    /// Gives `task` to reactor `target`: into its inbox (woken at the end of the batch), or,
    /// while its inbox is full or earlier tasks wait, after those.
    pub(crate) fn hand_off(&mut self, target: usize, task: Task) {
        let task =
            if self.overflow[target].is_empty() { self.shared.reactors[target].try_push(task) } else { Err(task) };
        match task {
            Ok(()) => self.wake[target] = true,
            Err(task) => self.overflow[target].push_back(task),
        }
    }

    /// Wakes the reactors given work in this batch.
    pub(crate) fn wake_targets(&mut self) {
        for (target, wake) in self.wake.iter_mut().enumerate() {
            if std::mem::take(wake) {
                self.shared.reactors[target].wake();
            }
        }
    }
}

/// Member traffic read from a link for the other reactors' partitions and calls, gathered per
/// target reactor over one read batch and handed over at its end (`Core::send_member_work`).
#[derive(Debug)]
pub(crate) struct LinkWork {
    /// Backup records for their partitions.
    pub(crate) backups: Vec<Vec<u8>>,
    /// Answers to requests they forwarded (each `u32` LE length-prefixed).
    pub(crate) responses: Vec<Vec<u8>>,
    /// PN counter states for their counters.
    pub(crate) counters: Vec<Vec<u8>>,
}

impl LinkWork {
    pub(crate) fn new(reactors: usize) -> LinkWork {
        LinkWork {
            backups: vec![Vec::new(); reactors],
            responses: vec![Vec::new(); reactors],
            counters: vec![Vec::new(); reactors],
        }
    }
}

/// Running what another reactor handed over, as the owner of its partition.
impl PartitionOwner {
    /// Runs requests another reactor handed over (all from `connection`); answers go to the
    /// outbox. Each request is parsed here, once. Returns how many it ran.
    pub fn run_handed_off(&mut self, connection: &Arc<ConnectionShared>, batch: &Handoffs) -> usize {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut ran = 0;
        for (handoff, bytes) in batch.iter() {
            self.outbox.answered(connection);
            if connection.is_closed() {
                continue;
            }
            let started = std::time::Instant::now();
            let message_type = match self.run_bytes(connection, handoff, bytes, &mut scratch) {
                Ok(message_type) => message_type,
                Err(error) => {
                    warn!(peer = %connection.peer, %error, "closing connection: malformed request");
                    connection.close();
                    continue;
                }
            };
            self.record_latency(message_type, handoff.tenant, started.elapsed());
            ran += 1;
            self.outbox.buffer(connection).extend_from_slice(&scratch);
            scratch.clear();
        }
        self.scratch = scratch;
        ran
    }

    /// Parses, decodes and runs one handed-over request.
    fn run_bytes(
        &mut self,
        connection: &Arc<ConnectionShared>,
        handoff: envelope::Handoff,
        bytes: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<MessageType, DecodeError> {
        let message = Message::parse(bytes)?;
        let message_type = message.message_type();
        let (slot, row) = operations::lookup(message_type).expect("the origin routed it by its row");
        // The origin reactor validated the partition id (a PN counter request has none: its
        // engine finds the counter by name); whether this member still serves a partition
        // the request is bound to is checked here, where it runs.
        let partition = PartitionId(message.partition_id() as u16);
        let local = if row.route.is_partition_bound() {
            match self.serving(partition, handoff.correlation_id, out) {
                Some(local) => local,
                None => return Ok(message_type),
            }
        } else {
            self.replication.local(partition.0 as usize)
        };
        let call = Call {
            connection,
            correlation_id: handoff.correlation_id,
            response_type: message_type.response(),
            source: handoff.source,
            counter_slot: slot,
            partition_id: partition,
            backup_aware: connection.asks_backup_acks(&message),
            local,
        };
        (row.run.expect("partition rows run"))(&message, self, &call, out)?;
        Ok(message_type)
    }
}
