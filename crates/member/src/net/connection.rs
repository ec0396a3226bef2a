//! A client connection: the reactor-owned half ([`Connection`]) and the half any reactor may
//! write responses to ([`ConnectionShared`]).
//!
//! Reading, decoding and the connection's state belong to the owning reactor alone. Writing is
//! shared: the reactor that ran an operation appends the response to the outbound buffer and
//! writes it to the socket itself ("write-through"), so responses never pass through a
//! response queue or another thread. The outbound lock is per connection and held only to
//! append and write; partition data is never touched under it.

use crate::net::tls::TlsSession;
use ferrogrid_protocol::frame::{StreamDecoder, StreamLimits};
use ferrogrid_protocol::Uuid;
use mio::net::TcpStream;
use mio::Token;
use parking_lot::Mutex;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// Where the answer to one request goes: its connection, and the correlation id and response
/// type the client waits for.
#[derive(Debug, Clone)]
pub struct ReplyTo {
    pub connection: std::sync::Arc<ConnectionShared>,
    pub correlation_id: i64,
    pub response_type: ferrogrid_protocol::MessageType,
}

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
    stream: TcpStream,
    /// The TLS session when the member serves TLS; every use of the socket goes through it,
    /// under its lock (`tls.rs`). `None`: plain bytes, and no cost beyond this check.
    tls: Option<Box<Mutex<TlsSession>>>,
    outbound: Mutex<Outbound>,
    closed: AtomicBool,
    /// Requests handed to other reactors (or fanned out) and not yet answered.
    in_flight: AtomicUsize,
    /// Hand-offs and map-wide shares of this connection waiting in other reactors' inboxes:
    /// while any wait, its requests are not run on other reactors' partitions directly (they
    /// would overtake them).
    queued: AtomicUsize,
    /// The authenticated client's uuid (lock owner identity), set once at authentication.
    client: OnceLock<Uuid>,
    /// The client's tenant (0: the default tenant), set once at authentication.
    tenant: OnceLock<u16>,
    /// The correlation id of the client's local backup listener on this connection (its
    /// backup events carry it), once registered.
    backup_listener: OnceLock<i64>,
}

/// Outbound bytes of one connection. At most one thread writes to the socket at a time (the
/// one that set `writing`); threads that append meanwhile leave their bytes to it, so the
/// syscall happens outside the lock and concurrent responses coalesce into one write.
#[derive(Debug, Default)]
struct Outbound {
    /// Appended and not yet taken by a writer.
    queued: Vec<u8>,
    /// Taken by the current writer (or left over when the socket refused more).
    unsent: Vec<u8>,
    /// Bytes of `unsent` already accepted by the socket.
    unsent_offset: usize,
    /// A thread is writing outside the lock; it takes `queued` before it stops.
    writing: bool,
    /// The socket refused a write; the owner reactor resumes on the next writable event.
    blocked: bool,
}

impl Outbound {
    fn pending(&self) -> usize {
        self.queued.len() + self.unsent.len() - self.unsent_offset
    }

    /// Makes the caller the writer if nobody is writing and the socket is not full; moves
    /// queued bytes behind any unsent ones. Returns the bytes to write and their offset.
    fn become_writer(&mut self) -> Option<(Vec<u8>, usize)> {
        if self.writing || self.blocked || self.pending() == 0 {
            return None;
        }
        self.writing = true;
        if self.unsent.is_empty() {
            std::mem::swap(&mut self.unsent, &mut self.queued);
        } else {
            self.unsent.extend_from_slice(&self.queued);
            self.queued.clear();
        }
        let offset = std::mem::take(&mut self.unsent_offset);
        Some((std::mem::take(&mut self.unsent), offset))
    }
}

impl ConnectionShared {
    #[cfg(test)]
    pub fn new(id: ConnectionId, peer: SocketAddr, stream: TcpStream) -> ConnectionShared {
        ConnectionShared::with_tls(id, peer, stream, None)
    }

    /// A connection whose bytes pass through `tls` when it is given.
    pub fn with_tls(
        id: ConnectionId,
        peer: SocketAddr,
        stream: TcpStream,
        tls: Option<TlsSession>,
    ) -> ConnectionShared {
        ConnectionShared {
            id,
            peer,
            stream,
            tls: tls.map(|session| Box::new(Mutex::new(session))),
            outbound: Mutex::new(Outbound::default()),
            closed: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
            client: OnceLock::new(),
            tenant: OnceLock::new(),
            backup_listener: OnceLock::new(),
        }
    }

    /// Records the client's local backup listener (Client.LocalBackupListener; first wins).
    pub fn set_backup_listener(&self, correlation_id: i64) {
        let _ = self.backup_listener.set(correlation_id);
    }

    /// The correlation id of the client's local backup listener here, if it registered one.
    /// Whether a request on this connection asks for backup acknowledgements it can get: the
    /// flag, and a local backup listener here (a forwarded request's connection, a member
    /// link, has none).
    pub fn asks_backup_acks(&self, message: &ferrogrid_protocol::Message<'_>) -> bool {
        message.initial_flags() & ferrogrid_protocol::frame::BACKUP_AWARE != 0 && self.backup_listener().is_some()
    }

    pub fn backup_listener(&self) -> Option<i64> {
        self.backup_listener.get().copied()
    }

    /// Records the client this connection authenticated as (first authentication wins).
    pub fn set_client(&self, client: Uuid) {
        let _ = self.client.set(client);
    }

    /// Records the client's tenant (first authentication wins).
    pub fn set_tenant(&self, tenant: u16) {
        let _ = self.tenant.set(tenant);
    }

    /// The client's tenant (0: the default tenant, or not authenticated).
    pub fn tenant(&self) -> u16 {
        self.tenant.get().copied().unwrap_or(0)
    }

    /// The authenticated client's uuid (nil before authentication).
    pub fn client_uuid(&self) -> Uuid {
        self.client.get().copied().unwrap_or_default()
    }

    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Whether the connection speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Reads once into `buffer`: the socket's bytes, or on a TLS connection decrypted ones
    /// (then `WouldBlock` means the socket is drained). Only the owner reactor reads.
    pub fn read(&self, buffer: &mut [u8]) -> io::Result<usize> {
        match &self.tls {
            None => (&self.stream).read(buffer),
            Some(tls) => tls.lock().read(&self.stream, buffer),
        }
    }

    /// Queues `bytes` (whole messages) and writes as much as the socket accepts now, unless
    /// another thread is writing, which then writes these bytes too. Bytes for a closed
    /// connection are dropped: its client has gone.
    /// Returns the bytes this call wrote to the socket (its own and others' queued ones).
    pub fn send(&self, bytes: &[u8]) -> usize {
        if bytes.is_empty() || self.is_closed() {
            return 0;
        }
        let batch = {
            let mut outbound = self.outbound.lock();
            outbound.queued.extend_from_slice(bytes);
            outbound.become_writer()
        };
        match batch {
            Some((batch, offset)) => self.write_as_writer(batch, offset),
            None => 0,
        }
    }

    /// As [`ConnectionShared::send`], taking the bytes: when nobody is writing and nothing
    /// waits, the caller's buffer itself is written, without copying it (the usual case of a
    /// reactor writing a read batch's answers); `bytes` comes back empty, possibly another
    /// buffer.
    pub fn send_from(&self, bytes: &mut Vec<u8>) -> usize {
        if bytes.is_empty() {
            return 0;
        }
        if self.is_closed() {
            bytes.clear();
            return 0;
        }
        let batch = {
            let mut outbound = self.outbound.lock();
            if !outbound.writing && !outbound.blocked && outbound.pending() == 0 {
                outbound.writing = true;
                outbound.unsent_offset = 0;
                let mut spare = std::mem::take(&mut outbound.unsent);
                spare.clear();
                std::mem::swap(bytes, &mut spare);
                Some((spare, 0))
            } else {
                outbound.queued.extend_from_slice(bytes);
                bytes.clear();
                outbound.become_writer()
            }
        };
        match batch {
            Some((batch, offset)) => self.write_as_writer(batch, offset),
            None => 0,
        }
    }

    /// Called by the owner reactor on a writable event; returns the bytes written.
    pub fn on_writable(&self) -> usize {
        // Records rustls made earlier (handshake, or a batch the socket refused) go first.
        if let Some(tls) = &self.tls {
            match tls.lock().flush(&self.stream) {
                Ok(()) => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return 0,
                Err(_) => {
                    self.mark_closed();
                    return 0;
                }
            }
        }
        let batch = {
            let mut outbound = self.outbound.lock();
            outbound.blocked = false;
            outbound.become_writer()
        };
        match batch {
            Some((batch, offset)) => self.write_as_writer(batch, offset),
            None => 0,
        }
    }

    /// Bytes waiting for the socket; the owner stops reading requests while this is high.
    pub fn pending_bytes(&self) -> usize {
        self.outbound.lock().pending()
    }

    /// Writes `batch[offset..]` and whatever others queue meanwhile, until all is written or
    /// the socket is full. Only the thread that became writer calls this.
    fn write_as_writer(&self, mut batch: Vec<u8>, mut offset: usize) -> usize {
        let mut written = 0;
        loop {
            let before = offset;
            let outcome = self.write_out(&batch, &mut offset);
            written += offset - before;
            let mut outbound = self.outbound.lock();
            debug_assert!(outbound.writing && outbound.unsent.is_empty());
            match outcome {
                WriteOutcome::Done if outbound.queued.is_empty() => {
                    outbound.writing = false;
                    batch.clear();
                    if batch.capacity() <= RETAINED_OUTBOUND_BYTES {
                        outbound.unsent = batch;
                    }
                    return written;
                }
                WriteOutcome::Done => {
                    batch.clear();
                    std::mem::swap(&mut batch, &mut outbound.queued);
                    offset = 0;
                }
                WriteOutcome::Full => {
                    outbound.unsent = batch;
                    outbound.unsent_offset = offset;
                    outbound.writing = false;
                    outbound.blocked = true;
                    return written;
                }
                WriteOutcome::Failed => {
                    outbound.writing = false;
                    outbound.queued.clear();
                    self.mark_closed();
                    return written;
                }
            }
        }
    }

    fn write_out(&self, batch: &[u8], offset: &mut usize) -> WriteOutcome {
        if let Some(tls) = &self.tls {
            return match tls.lock().write(&self.stream, batch, offset) {
                Ok(()) => WriteOutcome::Done,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => WriteOutcome::Full,
                Err(_) => WriteOutcome::Failed,
            };
        }
        while *offset < batch.len() {
            match (&self.stream).write(&batch[*offset..]) {
                Ok(0) => return WriteOutcome::Failed,
                Ok(count) => *offset += count,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return WriteOutcome::Full,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                // The reader side sees the same failure and closes the connection.
                Err(_) => return WriteOutcome::Failed,
            }
        }
        WriteOutcome::Done
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

    /// Notes work of this connection queued in another reactor's inbox.
    pub fn begin_queued(&self, count: usize) {
        self.queued.fetch_add(count, Ordering::AcqRel);
    }

    /// Notes that queued work of this connection has run.
    pub fn end_queued(&self) {
        let before = self.queued.fetch_sub(1, Ordering::AcqRel);
        assert!(before >= 1, "queued count underflow");
    }

    /// Work of this connection still waiting in other reactors' inboxes.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Closes the socket; later sends are dropped.
    pub fn close(&self) {
        let was_closed = self.closed.swap(true, Ordering::AcqRel);
        if let (Some(tls), false) = (&self.tls, was_closed) {
            tls.lock().close(&self.stream);
        }
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

enum WriteOutcome {
    Done,
    Full,
    Failed,
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
        /// 0: the default tenant (no tenants configured).
        tenant: u16,
    },
    /// `FGM` seen: another member; its Hello comes next.
    MemberHello,
    /// A link to another member.
    Member { peer: ferrogrid_cluster::MemberId },
}

impl ConnectionState {
    /// Past the handshake (a client authenticated, or a member identified).
    pub fn is_established(&self) -> bool {
        matches!(self, ConnectionState::Authenticated { .. } | ConnectionState::Member { .. })
    }
}

/// Inbound bytes not yet consumed, in a buffer that grows only as far as the limits allow.
#[derive(Debug)]
pub struct ReadBuffer {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
    /// Free space offered to the last read.
    last_read_capacity: usize,
}

/// Initial and retained read-buffer size.
const READ_BUFFER_BYTES: usize = 64 << 10;

impl Default for ReadBuffer {
    fn default() -> Self {
        ReadBuffer { bytes: vec![0; READ_BUFFER_BYTES], start: 0, end: 0, last_read_capacity: 0 }
    }
}

impl ReadBuffer {
    pub fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// How many bytes the last read could have returned.
    pub fn last_read_capacity(&self) -> usize {
        self.last_read_capacity
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
        self.last_read_capacity = self.bytes.len() - self.end;
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
    /// Requests received on this connection.
    pub requests: u64,
    /// Requests received since the IO balancer last looked (its measure of a connection's load).
    pub requests_since_balance: u64,
    /// A link to another member that this member opened (its Hello is already sent).
    pub outgoing: bool,
    /// The port it came in on (a link this member opened: [`Port::Member`]).
    pub port: Port,
}

/// Which listener accepted a connection, and so which protocols it may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Port {
    /// The one port of a member without a client endpoint: clients and members.
    Shared,
    /// The member endpoint beside a client endpoint: members only.
    Member,
    /// The client endpoint: clients only.
    Client,
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
            requests: 0,
            requests_since_balance: 0,
            outgoing: false,
            port: Port::Shared,
        }
    }
}

#[cfg(test)]
impl ConnectionShared {
    /// A connection over loopback for unit tests, and the client's end of its socket, which
    /// reads nothing unless the test does.
    pub(crate) fn loopback(id: u64) -> (std::sync::Arc<ConnectionShared>, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let client = std::net::TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (server, peer) = listener.accept().expect("accept");
        server.set_nonblocking(true).expect("non-blocking");
        let shared = ConnectionShared::new(ConnectionId(id), peer, TcpStream::from_std(server));
        (std::sync::Arc::new(shared), client)
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
