//! Bytes a reactor owes to other connections (events, answers to re-run requests and to
//! requests other reactors handed over), gathered per connection over one loop iteration and
//! written once per connection at its end.

use crate::connection::ConnectionShared;
use std::sync::Arc;

/// Per-connection output of one reactor iteration. Owned by that reactor.
#[derive(Debug, Default)]
pub struct Outbox {
    /// Connection, bytes, and how many handed-over requests those bytes answer.
    entries: Vec<(Arc<ConnectionShared>, Vec<u8>, usize)>,
}

impl Outbox {
    /// The buffer for `connection` (consecutive writes to one connection share an entry).
    pub fn buffer(&mut self, connection: &Arc<ConnectionShared>) -> &mut Vec<u8> {
        let index = self.entry(connection);
        &mut self.entries[index].1
    }

    /// Notes that a request handed over by `connection`'s reactor has been handled.
    pub fn answered(&mut self, connection: &Arc<ConnectionShared>) {
        let index = self.entry(connection);
        self.entries[index].2 += 1;
    }

    fn entry(&mut self, connection: &Arc<ConnectionShared>) -> usize {
        if let Some(index) = self.entries.iter().rposition(|(entry, _, _)| Arc::ptr_eq(entry, connection)) {
            return index;
        }
        self.entries.push((connection.clone(), Vec::new(), 0));
        self.entries.len() - 1
    }

    /// Writes everything gathered, one send per connection; returns the bytes this thread
    /// wrote to sockets.
    pub fn flush(&mut self) -> usize {
        let mut written = 0;
        for (connection, bytes, answered) in self.entries.drain(..) {
            written += connection.send(&bytes);
            if answered > 0 {
                connection.end_in_flight(answered);
            }
        }
        written
    }
}
