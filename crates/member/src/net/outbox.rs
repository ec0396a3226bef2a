//! Bytes a reactor owes to other connections (events, answers to re-run requests and to
//! requests other reactors handed over), gathered per connection over one loop iteration and
//! written once per connection at its end.
//!
//! Answers are always gathered. Events may be refused ([`Outbox::event_buffer`]) when their
//! connection already has too much waiting, so a client that does not read its events cannot
//! grow the member's memory without bound.

use crate::net::connection::ConnectionShared;
use std::sync::Arc;

/// Per-connection output of one reactor iteration. Owned by that reactor.
#[derive(Debug, Default)]
pub struct Outbox {
    entries: Vec<Entry>,
}

/// What one connection is owed from this iteration.
#[derive(Debug)]
struct Entry {
    connection: Arc<ConnectionShared>,
    bytes: Vec<u8>,
    /// How many handed-over requests `bytes` answer.
    answered: usize,
    /// The connection's unsent bytes when the first event for it was offered this iteration
    /// (read once: it takes the connection's outbound lock, which writers contend for).
    pending_bytes: Option<usize>,
}

impl Outbox {
    /// The buffer for `connection` (consecutive writes to one connection share an entry).
    pub fn buffer(&mut self, connection: &Arc<ConnectionShared>) -> &mut Vec<u8> {
        let index = self.entry(connection);
        &mut self.entries[index].bytes
    }

    /// The buffer for an event to `connection`, or None (drop the event) when more than
    /// `limit_bytes` already wait for it: unsent on its socket, as read at the first event
    /// offered to it this iteration, plus gathered here. Checked before each event, so what
    /// waits stays under the limit plus one event.
    pub fn event_buffer(&mut self, connection: &Arc<ConnectionShared>, limit_bytes: usize) -> Option<&mut Vec<u8>> {
        let index = self.entry(connection);
        let entry = &mut self.entries[index];
        let pending_bytes = *entry.pending_bytes.get_or_insert_with(|| connection.pending_bytes());
        (pending_bytes + entry.bytes.len() <= limit_bytes).then_some(&mut entry.bytes)
    }

    /// Notes that a request handed over by `connection`'s reactor has been handled.
    pub fn answered(&mut self, connection: &Arc<ConnectionShared>) {
        let index = self.entry(connection);
        self.entries[index].answered += 1;
    }

    fn entry(&mut self, connection: &Arc<ConnectionShared>) -> usize {
        if let Some(index) = self.entries.iter().rposition(|entry| Arc::ptr_eq(&entry.connection, connection)) {
            return index;
        }
        let entry = Entry { connection: connection.clone(), bytes: Vec::new(), answered: 0, pending_bytes: None };
        self.entries.push(entry);
        self.entries.len() - 1
    }

    /// Writes everything gathered, one send per connection; returns the bytes this thread
    /// wrote to sockets.
    pub fn flush(&mut self) -> usize {
        let mut written = 0;
        for Entry { connection, bytes, answered, .. } in self.entries.drain(..) {
            written += connection.send(&bytes);
            if answered > 0 {
                connection.end_in_flight(answered);
            }
        }
        written
    }
}
