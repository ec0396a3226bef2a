//! A client connection: the reactor-owned half ([`Connection`]) and the half any reactor may
//! write responses to ([`ConnectionShared`]).
//!
//! Reading, decoding and the connection's state belong to the owning reactor alone. Writing is
//! shared: the reactor that ran an operation appends the response to the outbound buffer and
//! writes it to the socket itself ("write-through"), so responses never pass through a
//! response queue or another thread. The outbound lock is per connection and held only to
//! append and write; partition data is never touched under it.

use ferrogrid_protocol::frame::{StreamDecoder, StreamLimits};
use ferrogrid_protocol::Uuid;
use mio::net::TcpStream;
use mio::Token;
use parking_lot::Mutex;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Identifies a connection for its whole life (never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnectionId(pub u64);

/// Outbound buffer capacity kept after a large response has been written.
const RETAINED_OUTBOUND_BYTES: usize = 256 << 10;

/// The half of a connection shared with every reactor that answers its requests.
#[derive(Debug)]
pub struct ConnectionShared {
    pub id: ConnectionId,
    pub peer: SocketAddr,
    /// Index of the reactor that owns (reads) this connection.
    pub reactor: usize,
    stream: TcpStream,
    outbound: Mutex<Outbound>,
    closed: AtomicBool,
    /// Requests handed to other reactors (or fanned out) and not yet answered.
    in_flight: AtomicUsize,
}

#[derive(Debug, Default)]
struct Outbound {
    buffer: Vec<u8>,
    /// Bytes of `buffer` already written to the socket.
    written: usize,
    /// The socket refused a write; the owner reactor resumes on the next writable event.
    blocked: bool,
}

impl Outbound {
    fn pending(&self) -> usize {
        self.buffer.len() - self.written
    }
}

impl ConnectionShared {
    pub fn new(id: ConnectionId, peer: SocketAddr, reactor: usize, stream: TcpStream) -> ConnectionShared {
        ConnectionShared {
            id,
            peer,
            reactor,
            stream,
            outbound: Mutex::new(Outbound::default()),
            closed: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
        }
    }

    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Queues `bytes` (whole messages) and writes as much as the socket accepts now.
    /// Bytes for a closed connection are dropped: its client has gone.
    pub fn send(&self, bytes: &[u8]) {
        if bytes.is_empty() || self.is_closed() {
            return;
        }
        let mut outbound = self.outbound.lock();
        outbound.buffer.extend_from_slice(bytes);
        if !outbound.blocked {
            self.write_pending(&mut outbound);
        }
    }

    /// Called by the owner reactor on a writable event.
    pub fn on_writable(&self) {
        let mut outbound = self.outbound.lock();
        outbound.blocked = false;
        self.write_pending(&mut outbound);
    }

    /// Bytes waiting for the socket; the owner stops reading requests while this is high.
    pub fn pending_bytes(&self) -> usize {
        self.outbound.lock().pending()
    }

    fn write_pending(&self, outbound: &mut Outbound) {
        while outbound.pending() > 0 {
            let start = outbound.written;
            match (&self.stream).write(&outbound.buffer[start..]) {
                Ok(0) => {
                    self.mark_closed();
                    return;
                }
                Ok(count) => outbound.written += count,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    outbound.blocked = true;
                    return;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // The reader side sees the same failure and closes the connection.
                    self.mark_closed();
                    return;
                }
            }
        }
        outbound.buffer.clear();
        outbound.written = 0;
        if outbound.buffer.capacity() > RETAINED_OUTBOUND_BYTES {
            outbound.buffer.shrink_to(RETAINED_OUTBOUND_BYTES);
        }
    }

    /// A request left this connection's reactor; its answer is now owed by another.
    pub fn begin_in_flight(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// `count` answers owed by other reactors were written.
    pub fn end_in_flight(&self, count: usize) {
        let before = self.in_flight.fetch_sub(count, Ordering::AcqRel);
        assert!(before >= count, "in-flight count underflow");
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Closes the socket; later sends are dropped.
    pub fn close(&self) {
        self.mark_closed();
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Where a connection is in its life cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionState {
    /// Waiting for the 3-byte `CP2` protocol header.
    AwaitingProtocolHeader,
    /// Header seen; the next message must be an authentication request.
    AwaitingAuthentication,
    Authenticated {
        client_uuid: Uuid,
        client_type: String,
    },
}

/// Inbound bytes not yet consumed, in a buffer that grows only as far as the limits allow.
#[derive(Debug)]
pub struct ReadBuffer {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

/// Initial and retained read-buffer size.
const READ_BUFFER_BYTES: usize = 64 << 10;

impl Default for ReadBuffer {
    fn default() -> Self {
        ReadBuffer { bytes: vec![0; READ_BUFFER_BYTES], start: 0, end: 0 }
    }
}

impl ReadBuffer {
    pub fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    pub fn consume(&mut self, count: usize) {
        assert!(count <= self.end - self.start);
        self.start += count;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.bytes.len() > READ_BUFFER_BYTES {
                self.bytes.truncate(READ_BUFFER_BYTES);
                self.bytes.shrink_to_fit();
            }
        }
    }

    /// Reads once from `source` into free space, making room (up to `limit` bytes of
    /// buffer) when the unread bytes fill it. Ok(0) means end of stream.
    pub fn read_from(&mut self, mut source: impl Read, limit: usize) -> io::Result<usize> {
        if self.end == self.bytes.len() {
            if self.start > 0 {
                self.bytes.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let grown = (self.bytes.len() * 2).min(limit.max(READ_BUFFER_BYTES));
                if grown <= self.bytes.len() {
                    return Err(io::Error::other("read buffer limit reached"));
                }
                self.bytes.resize(grown, 0);
            }
        }
        let count = source.read(&mut self.bytes[self.end..])?;
        self.end += count;
        Ok(count)
    }
}

/// The reactor-owned half of a client connection.
#[derive(Debug)]
pub struct Connection {
    pub shared: std::sync::Arc<ConnectionShared>,
    pub token: Token,
    pub state: ConnectionState,
    pub input: ReadBuffer,
    pub decoder: StreamDecoder,
    pub last_read: Instant,
    /// Responses produced inline during the current read batch, sent once at its end.
    pub output: Vec<u8>,
}

impl Connection {
    pub fn new(shared: std::sync::Arc<ConnectionShared>, token: Token, unauthenticated: StreamLimits) -> Connection {
        Connection {
            shared,
            token,
            state: ConnectionState::AwaitingProtocolHeader,
            input: ReadBuffer::default(),
            decoder: StreamDecoder::new(unauthenticated),
            last_read: Instant::now(),
            output: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_buffer_grows_to_the_limit_and_compacts() {
        let mut buffer = ReadBuffer::default();
        let data = vec![7u8; READ_BUFFER_BYTES * 2];
        let mut source = &data[..];
        while buffer.read_from(&mut source, READ_BUFFER_BYTES * 4).unwrap() > 0 {}
        assert_eq!(buffer.unread().len(), data.len());
        buffer.consume(data.len());
        assert!(buffer.unread().is_empty());
        let mut full = ReadBuffer::default();
        let mut endless = io::repeat(1);
        let mut result = Ok(1);
        while matches!(result, Ok(n) if n > 0) {
            result = full.read_from(&mut endless, READ_BUFFER_BYTES * 2);
        }
        assert!(result.is_err(), "a buffer at its limit refuses to grow");
    }
}
