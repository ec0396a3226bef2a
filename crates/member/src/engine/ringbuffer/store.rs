//! Ringbuffers: the last `capacity` items added to one named ringbuffer, each with its
//! sequence, in the partition of the name, with synchronous backups and migration through
//! [`PartitionObject`]. Reliable topics are ringbuffers (`_hz_rb_<topic>`) that clients read.
//!
//! Sequences start at 0 and grow by one per item; `head` is the oldest readable item's and
//! `tail` the newest's (`head == tail + 1` when empty). Adding to a full ringbuffer overwrites
//! the oldest item (policy OVERWRITE) or answers −1 (FAIL, which only refuses while items have
//! a time to live: without one, Hazelcast reports the whole capacity as remaining). With
//! `time-to-live-seconds`, items older than that are gone: every replica drops them by the
//! time the owner added them, so expiry needs no records.
//!
//! A read of the next sequence not yet written (readOne of `tail + 1`, readMany with fewer
//! than `min` items after its start) never blocks a reactor: it waits here as a
//! [`ReadWaiter`] (the id its owner answers it by) and is answered through [`Waiters`], in
//! arrival order, by the add that makes it possible. Waiters have no deadline (Hazelcast's
//! reads wait as long as the client does); gone ones ([`Waiters::drop_if_gone`]) are skipped,
//! and when the partition moves they are answered "retry".
//!
//! Owned by the reactor that owns the partition; no locks.

use crate::cluster::peer::{put_bytes, Malformed, Reader, SnapshotWriter};
use crate::engine::request::{Blob, ErrorKind, OpError, Reply, WaiterId, Waiters};
use crate::engine::ringbuffer::request::RingbufferOp;
use crate::engine::settings::SettingsCache;
use crate::engine::structures::ObjectKind;
use crate::partition::object::PartitionObject;
use ferrogrid_config::RingbufferConfig;
use ferrogrid_protocol::Data;
use std::collections::VecDeque;

/// Most items one readMany answers with (Hazelcast's `MAX_BATCH_SIZE`).
pub const MAX_BATCH_SIZE: i32 = 1000;

/// Hazelcast's overflow policies.
const OVERWRITE: i32 = 0;
const FAIL: i32 = 1;

/// Record kinds: an added item, (snapshots) where the sequences are, and (a split-brain
/// merge's replacement) every item gone and the sequences from there on.
const ADD: u8 = 1;
const HEAD: u8 = 2;
const RESET: u8 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    value: Box<[u8]>,
    /// When the owner added it (ms since the epoch): its expiry with a time to live.
    added_ms: i64,
}

/// Where a read is and what it wants: readOne of `sequence`, or readMany from `sequence` of
/// at least `min` and at most `max` items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Read {
    sequence: i64,
    min: usize,
    max: usize,
    one: bool,
    /// Whether a readMany read anything yet (Hazelcast answers next sequence 0 otherwise).
    read_any: bool,
}

/// A read that must wait for items, with what a readMany has read so far (kept, as
/// Hazelcast keeps them, even if they are overwritten meanwhile).
#[derive(Debug)]
pub(crate) struct Pending {
    read: Read,
    items: Vec<(i64, Box<[u8]>)>,
}

/// A waiting read and whom its answer goes to (the owner's waiter table knows).
#[derive(Debug)]
struct ReadWaiter {
    id: WaiterId,
    pending: Pending,
}

/// One ringbuffer in one partition.
#[derive(Debug)]
pub struct RingbufferStore {
    items: VecDeque<Item>,
    /// The sequence of `items[0]` (of the next item when empty).
    head: i64,
    config: RingbufferConfig,
    /// Most bytes of items one read answers with (half of `max-message-bytes`, the rest is
    /// room for frame headers): a readMany stops there (after at least one item) and the
    /// client continues from its next sequence.
    read_limit_bytes: usize,
    held_bytes: usize,
    track_changes: bool,
    /// Sequences added since the last `write_changes`.
    added: Vec<i64>,
    readers: VecDeque<ReadWaiter>,
    /// Whether anything but a read has used it: until then, as in Hazelcast, where a read
    /// does not create a ringbuffer, every readOne and every readMany wanting items waits.
    used: bool,
    /// A merge replaced every item since the last `write_changes`: the backups start over at
    /// this head sequence before the adds.
    reset: Option<i64>,
}

/// What became of a ringbuffer request that did not fail.
#[derive(Debug)]
pub(crate) enum RingDone {
    Answered,
    /// It waits for items: [`RingbufferStore::wait`] parks it.
    Wait(Pending),
}

impl RingbufferStore {
    pub(crate) fn new(config: RingbufferConfig, read_limit_bytes: usize) -> RingbufferStore {
        RingbufferStore {
            items: VecDeque::new(),
            head: 0,
            config,
            read_limit_bytes,
            held_bytes: 0,
            track_changes: false,
            added: Vec::new(),
            readers: VecDeque::new(),
            used: false,
            reset: None,
        }
    }

    /// A map's event journal in one partition (`engine/map/journal.rs`): a ringbuffer that
    /// exists from the map's first use, so reads never wait for it to be created.
    pub(crate) fn journal(config: RingbufferConfig, read_limit_bytes: usize) -> RingbufferStore {
        RingbufferStore { used: true, ..RingbufferStore::new(config, read_limit_bytes) }
    }

    /// Adds one journal event (recorded for the backups); returns its sequence.
    pub(crate) fn append(&mut self, value: Box<[u8]>, now_ms: i64) -> i64 {
        self.push(value, now_ms)
    }

    /// (oldest, newest) sequence: `head` and `tail` (`head == tail + 1` when empty).
    pub(crate) fn sequences(&self) -> (i64, i64) {
        (self.head, self.tail())
    }

    /// Whether reads wait for items.
    pub(crate) fn has_readers(&self) -> bool {
        !self.readers.is_empty()
    }

    /// Its whole state as one body [`PartitionObject::apply_snapshot`] reads (a journal
    /// travels inside its map's snapshot).
    pub(crate) fn write_whole(&self, out: &mut Vec<u8>) {
        out.push(HEAD);
        out.extend_from_slice(&self.head.to_le_bytes());
        for (offset, item) in self.items.iter().enumerate() {
            put_item(out, self.head + offset as i64, item);
        }
    }

    /// What a split-brain merge sends of it (`engine/container_merge.rs`): its head sequence
    /// and items; None if only reads have used it (in Hazelcast it would not exist).
    pub(crate) fn merging(&self) -> Option<(i64, Vec<Box<[u8]>>)> {
        self.used.then(|| (self.head, self.items.iter().map(|item| item.value.clone()).collect()))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Replaces its items with `values` from sequence `head` on (a split-brain merge's
    /// winner: Hazelcast sets the merging ringbuffer's head and tail sequences, so readers
    /// see the merging side's sequences), for the backups too. Items beyond the capacity
    /// leave the oldest first; each item's time to live starts now.
    pub(crate) fn replace(&mut self, head: i64, values: Vec<Box<[u8]>>, now_ms: i64) {
        self.items.clear();
        self.held_bytes = 0;
        self.head = head;
        self.used = true;
        self.added.clear();
        if self.track_changes {
            self.reset = Some(head);
        }
        for value in values {
            self.push(value, now_ms);
        }
    }

    fn tail(&self) -> i64 {
        self.head + self.items.len() as i64 - 1
    }

    fn capacity(&self) -> usize {
        self.config.capacity as usize
    }

    fn ttl_ms(&self) -> i64 {
        i64::from(self.config.time_to_live_seconds) * 1000
    }

    /// Hazelcast's remaining capacity: what is free with a time to live, the whole capacity
    /// without (items are overwritten, never refused).
    fn remaining_capacity(&self) -> usize {
        if self.config.time_to_live_seconds == 0 {
            self.capacity()
        } else {
            self.capacity() - self.items.len()
        }
    }

    fn pop_head(&mut self) {
        if let Some(item) = self.items.pop_front() {
            self.held_bytes -= item.value.len();
            self.head += 1;
        }
    }

    /// Drops the items whose time to live has passed at `now_ms` (oldest first).
    pub(crate) fn expire(&mut self, now_ms: i64) {
        let ttl_ms = self.ttl_ms();
        if ttl_ms == 0 {
            return;
        }
        while self.items.front().is_some_and(|item| item.added_ms.saturating_add(ttl_ms) <= now_ms) {
            self.pop_head();
        }
    }

    fn push(&mut self, value: Box<[u8]>, added_ms: i64) -> i64 {
        if self.items.len() == self.capacity() {
            self.pop_head();
        }
        self.held_bytes += value.len();
        self.items.push_back(Item { value, added_ms });
        let sequence = self.tail();
        if self.track_changes {
            self.added.push(sequence);
        }
        sequence
    }

    fn get(&self, sequence: i64) -> Option<&Item> {
        usize::try_from(sequence - self.head).ok().and_then(|index| self.items.get(index))
    }

    /// Hazelcast's check of a read's start: at most `tail + 1`, not before `head`.
    fn check_read(&self, sequence: i64) -> Result<(), OpError> {
        let (head, tail) = (self.head, self.tail());
        if sequence > tail + 1 {
            let text = format!("sequence:{sequence} is too large. The current tailSequence is:{tail}");
            return Err(OpError::new(ErrorKind::IllegalArgument, text));
        }
        if sequence < head {
            let text = format!(
                "sequence:{sequence} is too small and data store is disabled. The current headSequence is:{head} \
                 tailSequence is:{tail}"
            );
            return Err(OpError::new(ErrorKind::StaleSequence, text));
        }
        Ok(())
    }

    /// One step of a read, as Hazelcast takes it whenever the read may proceed: Ok(true) when
    /// it is to be answered now, Ok(false) when it waits. A readMany starts within
    /// `head..=tail + 1` whatever it asked for, reads what there is (up to `max`) and waits
    /// for the rest of its `min`; readOne of `tail + 1` waits, beyond it or before `head` fails.
    fn advance(&self, pending: &mut Pending) -> Result<bool, OpError> {
        let read = &mut pending.read;
        if !self.used {
            return Ok(!read.one && read.min == 0);
        }
        let next = self.tail() + 1;
        if read.one {
            self.check_read(read.sequence)?;
            return Ok(read.sequence != next);
        }
        read.sequence = read.sequence.clamp(self.head, next);
        if read.min == 0 {
            if read.sequence < next {
                self.read_into(pending)?;
            }
            return Ok(true);
        }
        if pending.items.len() >= read.min {
            return Ok(true);
        }
        if read.sequence == next {
            return Ok(false);
        }
        self.read_into(pending)?;
        Ok(pending.items.len() >= pending.read.min)
    }

    /// Reads items from the read's sequence on, up to its `max` and about `read_limit_bytes`
    /// (at least one item).
    fn read_into(&self, pending: &mut Pending) -> Result<(), OpError> {
        let Pending { read, items } = pending;
        if read.max == 0 {
            // Hazelcast fails too (an index out of bounds) when there is an item to read.
            let text = "maxCount must be at least 1 to read an item";
            return Err(OpError::new(ErrorKind::IllegalArgument, text));
        }
        let mut bytes: usize = items.iter().map(|(_, value)| value.len()).sum();
        while items.len() < read.max {
            let Some(item) = self.get(read.sequence) else { break };
            if !items.is_empty() && bytes + item.value.len() > self.read_limit_bytes {
                break;
            }
            bytes += item.value.len();
            items.push((read.sequence, item.value.clone()));
            read.sequence += 1;
        }
        read.read_any = true;
        Ok(())
    }

    /// The answer to a read that [`RingbufferStore::advance`] finished.
    fn answer<'a>(&'a self, pending: &'a Pending) -> Reply<'a> {
        let read = &pending.read;
        if read.one {
            return Reply::Value(self.get(read.sequence).map(|item| &*item.value));
        }
        let items = pending.items.iter().map(|(sequence, value)| (*sequence, &**value)).collect();
        Reply::ReadMany { items, next_sequence: if read.read_any { read.sequence } else { 0 } }
    }

    /// Parks a read [`execute`] answered [`RingDone::Wait`] for; refused when `max_waiters`
    /// wait already (gone waiters are dropped first). On refusal `id` stays the caller's.
    pub(crate) fn wait(
        &mut self,
        id: WaiterId,
        pending: Pending,
        max_waiters: usize,
        waiters: &mut dyn Waiters,
    ) -> Result<(), OpError> {
        self.readers.retain(|waiter| !waiters.drop_if_gone(waiter.id));
        if self.readers.len() >= max_waiters {
            let text = "too many reads are waiting on this ringbuffer (max-parked-per-key)";
            return Err(OpError::new(ErrorKind::Refused, text));
        }
        self.readers.push_back(ReadWaiter { id, pending });
        Ok(())
    }

    /// Answers the waiting reads that the items now allow (or that now fail), oldest first.
    pub(crate) fn serve_waiters(&mut self, waiters: &mut dyn Waiters) {
        let readers = std::mem::take(&mut self.readers);
        for mut waiter in readers {
            if waiters.drop_if_gone(waiter.id) {
                continue;
            }
            match self.advance(&mut waiter.pending) {
                Ok(false) => self.readers.push_back(waiter),
                Ok(true) => waiters.answer(waiter.id, self.answer(&waiter.pending)),
                Err(failure) => waiters.fail(waiter.id, failure),
            }
        }
    }
}

fn null_check(value: &[u8]) -> Result<(), OpError> {
    match Data(value).type_id() {
        Some(type_id) if type_id != 0 => Ok(()),
        _ => Err(OpError::new(ErrorKind::NullArgument, "Null item is not allowed!")),
    }
}

/// Runs one ringbuffer request at `now_ms`; its answer goes to `reply` unless it waits or
/// fails. After an add, the caller serves the waiters ([`RingbufferStore::serve_waiters`]).
pub(crate) fn execute(
    ring: &mut RingbufferStore,
    op: &RingbufferOp<'_>,
    now_ms: i64,
    reply: &mut dyn FnMut(Reply<'_>),
) -> Result<RingDone, OpError> {
    ring.expire(now_ms);
    if !matches!(op, RingbufferOp::Read { .. }) {
        ring.used = true;
    }
    match op {
        RingbufferOp::Size => reply(Reply::Long(ring.items.len() as i64)),
        RingbufferOp::TailSequence => reply(Reply::Long(ring.tail())),
        RingbufferOp::HeadSequence => reply(Reply::Long(ring.head)),
        RingbufferOp::Capacity => reply(Reply::Long(ring.capacity() as i64)),
        RingbufferOp::RemainingCapacity => reply(Reply::Long(ring.remaining_capacity() as i64)),
        RingbufferOp::Add { values, overflow_policy } => {
            reply(Reply::Long(add(ring, values, *overflow_policy, now_ms)?))
        }
        RingbufferOp::Read { sequence, min, max, one, filter } => {
            if let Some(filter) = filter {
                return Err(refuse_filter(filter));
            }
            if !*one {
                check_counts(ring, *min, *max)?;
            }
            let (min, max) = if *one { (1, 1) } else { (*min as usize, *max as usize) };
            let read = Read { sequence: *sequence, min, max, one: *one, read_any: false };
            let mut pending = Pending { read, items: Vec::new() };
            if !ring.advance(&mut pending)? {
                return Ok(RingDone::Wait(pending));
            }
            reply(ring.answer(&pending));
        }
    }
    Ok(RingDone::Answered)
}

/// A readMany filter is a Java `IFunction` the member would run: ferrogrid runs no Java. A
/// value of a built-in type (a string, a number) fails as Hazelcast fails it.
fn refuse_filter(filter: &[u8]) -> OpError {
    match Data(filter).type_id() {
        Some(type_id @ -23..=-3) => {
            let text =
                format!("a readMany filter must be a com.hazelcast.core.IFunction, not a value of type {type_id}");
            OpError::new(ErrorKind::ClassCast, text)
        }
        _ => {
            let text = "ferrogrid cannot run a ringbuffer readMany filter: it is a Java function on the member";
            OpError::new(ErrorKind::Unsupported, text)
        }
    }
}

/// readMany's bounds, as Hazelcast's proxy checks them.
fn check_counts(ring: &RingbufferStore, min: i32, max: i32) -> Result<(), OpError> {
    let refuse = |text: String| Err(OpError::new(ErrorKind::IllegalArgument, text));
    if min < 0 {
        return refuse("minCount can't be smaller than 0".into());
    }
    if max < min {
        return refuse("maxCount should be equal or larger than minCount".into());
    }
    if min as usize > ring.capacity() {
        return refuse("the minCount should be smaller than or equal to the capacity".into());
    }
    if max > MAX_BATCH_SIZE {
        return refuse(format!("maxCount can't be larger than {MAX_BATCH_SIZE}"));
    }
    Ok(())
}

/// add and addAll: the sequence of the last item added, or −1 (FAIL, and they do not fit).
fn add(ring: &mut RingbufferStore, values: &[Blob<'_>], overflow_policy: i32, now_ms: i64) -> Result<i64, OpError> {
    if overflow_policy != OVERWRITE && overflow_policy != FAIL {
        let text = format!("unknown overflow policy {overflow_policy}: expected 0 (OVERWRITE) or 1 (FAIL)");
        return Err(OpError::new(ErrorKind::IllegalArgument, text));
    }
    values.iter().try_for_each(|value| null_check(value))?;
    if overflow_policy == FAIL && ring.remaining_capacity() < values.len() {
        return Ok(-1);
    }
    let mut last = ring.tail();
    for value in values {
        last = ring.push(value.as_ref().into(), now_ms);
    }
    Ok(last)
}

fn put_item(out: &mut Vec<u8>, sequence: i64, item: &Item) {
    out.push(ADD);
    out.extend_from_slice(&sequence.to_le_bytes());
    out.extend_from_slice(&item.added_ms.to_le_bytes());
    put_bytes(out, &item.value);
}

impl RingbufferStore {
    /// Applies ADD records (and a snapshot's HEAD): an item already here is not added again,
    /// and a gap (items the backup never heard of were overwritten) starts over at the item.
    fn apply_records(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.used = true;
        let mut reader = Reader::new(body);
        while !reader.is_empty() {
            let kind = reader.u8()?;
            let sequence = reader.i64()?;
            match kind {
                ADD => {
                    let added_ms = reader.i64()?;
                    let value: Box<[u8]> = reader.bytes()?.into();
                    let next = self.tail() + 1;
                    if sequence < next {
                        continue;
                    }
                    if sequence > next {
                        self.items.clear();
                        self.held_bytes = 0;
                        self.head = sequence;
                    }
                    if self.items.len() == self.capacity() {
                        self.pop_head();
                    }
                    self.held_bytes += value.len();
                    self.items.push_back(Item { value, added_ms });
                }
                HEAD if self.items.is_empty() => self.head = sequence,
                RESET => {
                    self.items.clear();
                    self.held_bytes = 0;
                    self.head = sequence;
                }
                HEAD => return Err(Malformed::Refused("a ringbuffer's head after its items")),
                other => return Err(Malformed::UnknownChange(other)),
            }
        }
        Ok(())
    }
}

impl PartitionObject for RingbufferStore {
    fn create(_kind: ObjectKind, name: &str, settings: &mut SettingsCache) -> Self {
        RingbufferStore::new(settings.ringbuffer(name), settings.max_message_bytes() / 2)
    }

    fn entry_count(&self) -> usize {
        self.items.len()
    }

    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    fn set_track_changes(&mut self, track: bool) {
        self.track_changes = track;
        if !track {
            self.added.clear();
            self.reset = None;
        }
    }

    fn sync_backup_count(&self) -> usize {
        self.config.backup_count as usize
    }

    fn write_changes(&mut self, body: &mut Vec<u8>) {
        if let Some(head) = self.reset.take() {
            body.push(RESET);
            body.extend_from_slice(&head.to_le_bytes());
        }
        for sequence in std::mem::take(&mut self.added) {
            // An item overwritten by the same operation is skipped: the backup sees the gap.
            if let Some(item) = self.get(sequence) {
                put_item(body, sequence, item);
            }
        }
    }

    fn apply_backup(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body)
    }

    fn write_snapshot(&self, writer: &mut SnapshotWriter<'_>) {
        let head = self.head;
        writer.entry(|out| {
            out.push(HEAD);
            out.extend_from_slice(&head.to_le_bytes());
        });
        for (offset, item) in self.items.iter().enumerate() {
            writer.entry(|out| put_item(out, head + offset as i64, item));
        }
    }

    fn apply_snapshot(&mut self, body: &[u8]) -> Result<(), Malformed> {
        self.apply_records(body)
    }

    fn sweep_expired(&mut self, now_ms: i64, _budget: usize) -> Vec<crate::partition::object::RemovedEntry> {
        self.expire(now_ms);
        Vec::new()
    }

    fn take_waiting(&mut self) -> Vec<WaiterId> {
        self.readers.drain(..).map(|waiter| waiter.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::string_data as item;
    use crate::engine::request::RecordedWaiters;
    use std::borrow::Cow;

    fn config(capacity: u32, time_to_live_seconds: u32) -> RingbufferConfig {
        RingbufferConfig { capacity, time_to_live_seconds, ..RingbufferConfig::DEFAULT }
    }

    /// Runs `op` at `now_ms`: its answer as text, or Err(None) when it waits, Err(Some(kind))
    /// when it fails.
    fn run(ring: &mut RingbufferStore, op: RingbufferOp<'_>, now_ms: i64) -> Result<String, Option<ErrorKind>> {
        let mut answer = String::new();
        match execute(ring, &op, now_ms, &mut |reply| answer = format!("{reply:?}")) {
            Ok(RingDone::Answered) => Ok(answer),
            Ok(RingDone::Wait(_)) => Err(None),
            Err(failure) => Err(Some(failure.kind)),
        }
    }

    fn add_op(values: &[Vec<u8>], overflow_policy: i32) -> RingbufferOp<'_> {
        RingbufferOp::Add { values: values.iter().map(|value| Cow::Borrowed(&value[..])).collect(), overflow_policy }
    }

    fn read(sequence: i64, min: i32, max: i32) -> RingbufferOp<'static> {
        RingbufferOp::Read { sequence, min, max, one: false, filter: None }
    }

    fn read_one(sequence: i64) -> RingbufferOp<'static> {
        RingbufferOp::Read { sequence, min: 1, max: 1, one: true, filter: None }
    }

    /// Runs a read that must wait and parks it.
    fn park(ring: &mut RingbufferStore, op: RingbufferOp<'_>, max_waiters: usize, id: u64) -> Result<(), OpError> {
        match execute(ring, &op, 0, &mut |_| panic!("it waits")).unwrap() {
            RingDone::Wait(pending) => ring.wait(WaiterId(id), pending, max_waiters, &mut RecordedWaiters::default()),
            RingDone::Answered => panic!("answered"),
        }
    }

    #[test]
    fn sequences_overwrite_and_reads_at_the_edges() {
        let mut ring = RingbufferStore::new(config(3, 0), usize::MAX);
        assert_eq!(run(&mut ring, RingbufferOp::TailSequence, 0), Ok("Long(-1)".into()));
        let values: Vec<Vec<u8>> = ["a", "b", "c", "d"].iter().map(|text| item(text)).collect();
        assert_eq!(run(&mut ring, add_op(&values[..1], OVERWRITE), 0), Ok("Long(0)".into()));
        assert_eq!(run(&mut ring, add_op(&values[1..], OVERWRITE), 0), Ok("Long(3)".into()));
        assert_eq!((ring.head, ring.tail(), ring.items.len()), (1, 3, 3), "a was overwritten");
        assert_eq!(run(&mut ring, add_op(&values[..1], FAIL), 0), Ok("Long(4)".into()), "no ttl: FAIL never refuses");
        assert_eq!(run(&mut ring, read_one(0), 0), Err(Some(ErrorKind::StaleSequence)));
        assert_eq!(run(&mut ring, read_one(6), 0), Err(Some(ErrorKind::IllegalArgument)));
        assert_eq!(run(&mut ring, read_one(5), 0), Err(None), "readOne of tail + 1 waits");
        let from_head = run(&mut ring, read(0, 1, 10), 0).unwrap();
        assert!(
            from_head.starts_with("ReadMany { items: [(2, ") && from_head.contains("next_sequence: 5"),
            "{from_head}"
        );
        assert_eq!(run(&mut ring, read(9, 1, 10), 0), Err(None), "beyond the tail: waits at tail + 1");
        let many = run(&mut ring, read(3, 1, 2), 0).unwrap();
        assert!(many.contains("next_sequence: 5") && many.starts_with("ReadMany { items: [(3, "), "{many}");
        assert_eq!(run(&mut ring, read(5, 0, 10), 0).unwrap(), "ReadMany { items: [], next_sequence: 0 }");
        assert_eq!(run(&mut ring, read(2, 0, 0), 0), Err(Some(ErrorKind::IllegalArgument)), "max 0 with items");
        assert_eq!(run(&mut ring, read(0, 4, 10), 0), Err(Some(ErrorKind::IllegalArgument)), "min over capacity");
        assert_eq!(run(&mut ring, read(2, 0, 1001), 0), Err(Some(ErrorKind::IllegalArgument)));
        ring.read_limit_bytes = values[0].len() + 1;
        let limited = run(&mut ring, read(2, 1, 3), 0).unwrap();
        assert!(limited.contains("next_sequence: 3"), "one item within the byte limit: {limited}");
        ring.read_limit_bytes = 1;
        assert!(run(&mut ring, read(2, 1, 3), 0).unwrap().contains("next_sequence: 3"), "at least one item");
        let null = vec![0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(run(&mut ring, add_op(&[null], OVERWRITE), 0), Err(Some(ErrorKind::NullArgument)));
    }

    #[test]
    fn with_a_time_to_live_items_expire_and_fail_refuses() {
        let mut ring = RingbufferStore::new(config(2, 1), usize::MAX);
        let values: Vec<Vec<u8>> = ["a", "b", "c"].iter().map(|text| item(text)).collect();
        assert_eq!(run(&mut ring, add_op(&values[..2], FAIL), 0), Ok("Long(1)".into()));
        assert_eq!(run(&mut ring, add_op(&values[2..], FAIL), 10), Ok("Long(-1)".into()));
        assert_eq!(run(&mut ring, RingbufferOp::RemainingCapacity, 10), Ok("Long(0)".into()));
        assert_eq!(run(&mut ring, RingbufferOp::Size, 1_000), Ok("Long(0)".into()), "expired");
        assert_eq!((ring.head, ring.tail()), (2, 1));
        assert_eq!(run(&mut ring, add_op(&values[2..], FAIL), 1_000), Ok("Long(2)".into()));
    }

    #[test]
    fn waiting_reads_are_served_in_order_by_adds() {
        // Nothing but reads has used it: every read waits, even one beyond tail + 1.
        let mut ring = RingbufferStore::new(config(2, 0), usize::MAX);
        park(&mut ring, read_one(0), 8, 0).unwrap();
        park(&mut ring, read_one(5), 8, 1).unwrap();
        park(&mut ring, read(0, 2, 5), 8, 2).unwrap();
        assert_eq!(run(&mut ring, read(0, 0, 5), 0).unwrap(), "ReadMany { items: [], next_sequence: 0 }");
        assert_eq!(park(&mut ring, read_one(1), 3, 3).unwrap_err().kind, ErrorKind::Refused);
        let values: Vec<Vec<u8>> = ["a", "b", "c"].iter().map(|text| item(text)).collect();
        let mut waiters = RecordedWaiters::default();
        for batch in [&values[..1], &values[1..]] {
            run(&mut ring, add_op(batch, OVERWRITE), 0).unwrap();
            ring.serve_waiters(&mut waiters);
        }
        let ids: Vec<WaiterId> = waiters.answers.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [WaiterId(0), WaiterId(1), WaiterId(2)], "in the order they parked");
        let answers: Vec<String> = waiters.answers.into_iter().map(|(_, answer)| answer).collect();
        assert_eq!(answers.len(), 3, "{answers:?}");
        assert!(answers[0].starts_with("Ok(Value(Some("), "{}", answers[0]);
        assert!(answers[1].contains("IllegalArgument"), "readOne(5) fails once the ringbuffer is used: {}", answers[1]);
        // The readMany kept "a" although the second add overwrote it (capacity 2).
        assert!(
            answers[2].starts_with("Ok(ReadMany { items: [(0, ") && answers[2].contains("next_sequence: 3"),
            "{}",
            answers[2]
        );
        assert!(ring.readers.is_empty());
    }

    #[test]
    fn a_gone_reader_is_dropped_unanswered_and_the_rest_are_taken_by_id() {
        let mut ring = RingbufferStore::new(config(2, 0), usize::MAX);
        for id in 0..3 {
            park(&mut ring, read_one(0), 8, id).unwrap();
        }
        let mut waiters = RecordedWaiters { gone: vec![WaiterId(0)], ..RecordedWaiters::default() };
        // Parking drops gone readers first: the bound counts those still waiting.
        let Ok(RingDone::Wait(pending)) = execute(&mut ring, &read_one(0), 0, &mut |_| panic!("it waits")) else {
            panic!("a read of the next sequence waits")
        };
        let refused = ring.wait(WaiterId(3), pending, 2, &mut waiters);
        assert_eq!(refused.unwrap_err().kind, ErrorKind::Refused);
        assert_eq!(waiters.dropped, [WaiterId(0)]);
        assert_eq!(ring.take_waiting(), [WaiterId(1), WaiterId(2)]);
        park(&mut ring, read_one(0), 8, 4).unwrap();
        waiters.gone.push(WaiterId(4));
        run(&mut ring, add_op(&[item("a")], OVERWRITE), 0).unwrap();
        ring.serve_waiters(&mut waiters);
        assert!(waiters.answers.is_empty(), "a gone reader is not answered");
        assert_eq!(waiters.dropped, [WaiterId(0), WaiterId(4)]);
        assert!(ring.readers.is_empty());
    }

    #[test]
    fn a_backup_and_a_new_replica_mirror_the_owner() {
        let mut owner = RingbufferStore::new(config(3, 0), usize::MAX);
        owner.set_track_changes(true);
        let values: Vec<Vec<u8>> = ["a", "b", "c", "d", "e"].iter().map(|text| item(text)).collect();
        run(&mut owner, add_op(&values[..2], OVERWRITE), 0).unwrap();
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        let mut backup = RingbufferStore::new(config(3, 0), usize::MAX);
        backup.apply_backup(&body).unwrap();
        backup.apply_backup(&body).unwrap();
        run(&mut owner, add_op(&values[2..], OVERWRITE), 0).unwrap();
        let mut body = Vec::new();
        owner.write_changes(&mut body);
        backup.apply_backup(&body).unwrap();
        assert_eq!((backup.head, backup.tail(), &backup.items), (owner.head, owner.tail(), &owner.items));
        assert_eq!(backup.held_bytes, owner.held_bytes);
        let mut snapshot = Vec::new();
        snapshot.push(HEAD);
        snapshot.extend_from_slice(&owner.head.to_le_bytes());
        for (offset, item) in owner.items.iter().enumerate() {
            put_item(&mut snapshot, owner.head + offset as i64, item);
        }
        let mut replica = RingbufferStore::new(config(3, 0), usize::MAX);
        replica.apply_snapshot(&snapshot).unwrap();
        assert_eq!((replica.head, replica.tail(), &replica.items), (owner.head, owner.tail(), &owner.items));
        let empty_head = [HEAD, 7, 0, 0, 0, 0, 0, 0, 0];
        let mut emptied = RingbufferStore::new(config(3, 0), usize::MAX);
        emptied.apply_snapshot(&empty_head).unwrap();
        assert_eq!((emptied.head, emptied.tail()), (7, 6), "an empty ringbuffer keeps its sequences");
        for cut in 0..body.len() {
            let _ = RingbufferStore::new(config(3, 0), usize::MAX).apply_backup(&body[..cut]);
        }
        assert!(RingbufferStore::new(config(3, 0), usize::MAX).apply_backup(&[9, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }
}
