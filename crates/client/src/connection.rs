//! One authenticated TCP connection to a member, multiplexing many requests.
//!
//! Ownership (see the crate docs for the whole picture):
//! - the **writer task** owns the socket's write half and the outbound queue's receiver. It
//!   takes every request queued since its last write (up to [`WRITE_BATCH_MESSAGES`] and about
//!   [`WRITE_BATCH_BYTES`]), copies them into one buffer, stamping each one's correlation id,
//!   and writes the buffer with one `write_all`: under load, many requests per syscall;
//! - the **reader task** owns the read half, the read buffer and the [`StreamDecoder`]. It cuts
//!   every whole message out of each read, runs event handlers inline, and completes the
//!   pending calls of all responses of that read under one lock;
//! - callers share the [`PendingTable`] (a mutex) and the in-flight semaphore.
//!
//! Invariants:
//! - a call holds one semaphore permit from before it is queued until its response arrives or
//!   the connection closes, so the queue and the pending table never hold more than
//!   `max_in_flight` calls (a member answering requests it has not received could break this
//!   for the queue: that closes the connection, it does not panic);
//! - nothing read from the socket panics: malformed input closes the connection;
//! - the pending table is closed (and emptied) exactly once, under its lock, so a call either
//!   registers before the close (and its receiver then reports the loss) or sees the table
//!   closed and is told it was not sent: no call waits on a dead connection.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ferrogrid_protocol::frame::{Decoded, FRAME_HEADER_SIZE, IS_EVENT};
use ferrogrid_protocol::{DecodeError, Message, StreamDecoder, Uuid};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::debug;

use crate::cluster::ConnectionId;

/// Offset of the correlation id in an encoded request (after the frame header and type).
pub(crate) const CORRELATION_ID_OFFSET: usize = FRAME_HEADER_SIZE + 4;
/// Offset of the message type in an encoded message.
pub(crate) const MESSAGE_TYPE_OFFSET: usize = FRAME_HEADER_SIZE;
/// Bytes of a request's header frame up to and including the partition id.
pub(crate) const REQUEST_HEADER_BYTES: usize = FRAME_HEADER_SIZE + 16;
/// Most requests gathered into one write.
pub const WRITE_BATCH_MESSAGES: usize = 1024;
/// Bytes gathered into one write before it is sent (a larger single request goes alone).
pub const WRITE_BATCH_BYTES: usize = 1 << 20;
/// Free space ensured in the read buffer before each read.
const READ_RESERVE_BYTES: usize = 64 * 1024;
/// Buffers that grew past this (for one large message) are given back afterwards.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Runs on the reader task for each event whose correlation id it is registered under.
pub(crate) type EventHandler = Arc<dyn Fn(ConnectionId, &Message<'_>) + Send + Sync>;

/// What every connection of one client reports to it.
#[derive(Debug, Default)]
pub(crate) struct ClientSignals {
    /// Woken when a connection closes or the member list changes (the maintenance task waits).
    pub wake: Notify,
    /// Responses whose correlation id had no pending call (should stay 0).
    pub unmatched_responses: AtomicU64,
    /// Connections admitted since the client started.
    pub connections_opened: AtomicU64,
}

/// A request on its way to the writer: encoded once, its correlation id stamped on writing.
#[derive(Debug)]
struct Outbound {
    request: Arc<Vec<u8>>,
    correlation_id: i64,
}

/// The call was not queued (the connection is closed): it is safe to send it elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotSent;

/// A sent call waiting for its response; dropping it (on close) tells the waiter it was lost.
#[derive(Debug)]
struct PendingCall {
    reply: oneshot::Sender<Vec<u8>>,
    _permit: OwnedSemaphorePermit,
}

/// Correlation ids are distinct counters: a multiply spreads them, no need for SipHash.
#[derive(Debug, Default, Clone, Copy)]
struct CorrelationHasher(u64);

impl Hasher for CorrelationHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_i64(&mut self, value: i64) {
        self.0 = (value as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[derive(Debug)]
struct PendingTable {
    open: bool,
    calls: HashMap<i64, PendingCall, BuildHasherDefault<CorrelationHasher>>,
}

/// The inbound side's state, built by the handshake and handed to the reader task.
#[derive(Debug)]
pub(crate) struct Input {
    pub buffer: Vec<u8>,
    /// Bytes of `buffer` before this offset are consumed.
    pub start: usize,
    pub decoder: StreamDecoder,
    /// Responses cut from the current read, reused across reads.
    responses: Vec<(i64, Vec<u8>)>,
    completions: Vec<(PendingCall, Vec<u8>)>,
}

impl Input {
    pub fn new() -> Input {
        Input {
            buffer: Vec::with_capacity(READ_RESERVE_BYTES),
            start: 0,
            decoder: StreamDecoder::default(),
            responses: Vec::new(),
            completions: Vec::new(),
        }
    }

    /// Makes room for the next read, dropping consumed bytes first.
    pub fn reserve(&mut self) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        if self.buffer.is_empty() && self.buffer.capacity() > KEEP_BUFFER_BYTES {
            self.buffer = Vec::with_capacity(READ_RESERVE_BYTES);
        }
        if self.buffer.capacity() - self.buffer.len() < READ_RESERVE_BYTES / 2 {
            self.buffer.reserve(READ_RESERVE_BYTES);
        }
    }
}

/// One connection to one member. Shared (`Arc`) by the client's state, its reader and writer
/// tasks and the calls in flight on it.
pub(crate) struct Connection {
    pub id: ConnectionId,
    pub address: SocketAddr,
    pub member_uuid: Uuid,
    epoch: Instant,
    pending: Mutex<PendingTable>,
    permits: Arc<Semaphore>,
    outbound: mpsc::Sender<Outbound>,
    /// Event handlers by the correlation id of their registration.
    events: Mutex<HashMap<i64, EventHandler>>,
    closed: AtomicBool,
    close_signal: watch::Sender<bool>,
    last_read_ms: AtomicU64,
    last_write_ms: AtomicU64,
    signals: Arc<ClientSignals>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.id)
            .field("address", &self.address)
            .field("member_uuid", &self.member_uuid.to_string())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Takes over an authenticated socket (and the bytes read after the authentication
    /// response) and starts its reader and writer tasks. Needs a tokio runtime.
    pub fn start(
        id: ConnectionId,
        member_uuid: Uuid,
        stream: TcpStream,
        address: SocketAddr,
        input: Input,
        max_in_flight: u32,
        signals: Arc<ClientSignals>,
    ) -> Arc<Connection> {
        assert!(max_in_flight > 0, "validated by ClientConfig::validate");
        let (sender, receiver) = mpsc::channel(max_in_flight as usize);
        let connection = Arc::new(Connection {
            id,
            address,
            member_uuid,
            epoch: Instant::now(),
            pending: Mutex::new(PendingTable { open: true, calls: HashMap::default() }),
            permits: Arc::new(Semaphore::new(max_in_flight as usize)),
            outbound: sender,
            events: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            close_signal: watch::Sender::new(false),
            last_read_ms: AtomicU64::new(0),
            last_write_ms: AtomicU64::new(0),
            signals,
            tasks: Mutex::new(Vec::with_capacity(2)),
        });
        let (read_half, write_half) = stream.into_split();
        let reader = tokio::spawn(connection.clone().read_loop(read_half, input));
        let writer = tokio::spawn(connection.clone().write_loop(write_half, receiver));
        connection.tasks.lock().extend([reader, writer]);
        connection
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Calls waiting for a response on this connection.
    pub fn in_flight(&self) -> usize {
        self.pending.lock().calls.len()
    }

    /// Time since the last byte was read.
    pub fn read_idle(&self) -> Duration {
        self.idle(&self.last_read_ms)
    }

    /// Time since the last write completed.
    pub fn write_idle(&self) -> Duration {
        self.idle(&self.last_write_ms)
    }

    fn idle(&self, stamp: &AtomicU64) -> Duration {
        let since_epoch = self.epoch.elapsed();
        since_epoch.saturating_sub(Duration::from_millis(stamp.load(Ordering::Relaxed)))
    }

    fn touch(&self, stamp: &AtomicU64) {
        stamp.store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Routes events carrying `correlation_id` to `handler` until the connection closes.
    /// Register before sending the registration request: events may precede its response.
    pub fn add_event_handler(&self, correlation_id: i64, handler: EventHandler) {
        self.events.lock().insert(correlation_id, handler);
    }

    pub fn remove_event_handler(&self, correlation_id: i64) {
        self.events.lock().remove(&correlation_id);
    }

    /// Queues `request` (encoded with any correlation id; `correlation_id` is stamped on
    /// writing) and returns where its response will arrive. Waits while `max_in_flight` calls
    /// are pending. The receiver fails if the connection closes first: the request may or may
    /// not have reached the member.
    pub async fn call(
        &self,
        correlation_id: i64,
        request: &Arc<Vec<u8>>,
    ) -> Result<oneshot::Receiver<Vec<u8>>, NotSent> {
        assert!(request.len() >= REQUEST_HEADER_BYTES, "a request has a 16-byte header");
        let permit = self.permits.clone().acquire_owned().await.map_err(|_| NotSent)?;
        let (reply, receiver) = oneshot::channel();
        {
            let mut pending = self.pending.lock();
            if !pending.open {
                return Err(NotSent);
            }
            let previous = pending.calls.insert(correlation_id, PendingCall { reply, _permit: permit });
            assert!(previous.is_none(), "correlation id {correlation_id} used twice");
        }
        let outbound = Outbound { request: request.clone(), correlation_id };
        match self.outbound.try_send(outbound) {
            Ok(()) => Ok(receiver),
            Err(error) => {
                self.pending.lock().calls.remove(&correlation_id);
                if let mpsc::error::TrySendError::Full(_) = error {
                    // Every queued request holds a permit until its response: only a member
                    // answering requests it has not yet received can get here.
                    self.close("the member answered requests before they were sent");
                }
                Err(NotSent)
            }
        }
    }

    /// Closes the connection: pending calls learn they were lost, new calls are refused, the
    /// tasks stop and drop the socket. Idempotent; callable from any thread.
    pub fn close(&self, reason: &str) {
        let calls = {
            let mut pending = self.pending.lock();
            if !pending.open {
                return;
            }
            pending.open = false;
            std::mem::take(&mut pending.calls)
        };
        self.closed.store(true, Ordering::Release);
        self.permits.close();
        self.events.lock().clear();
        self.close_signal.send_replace(true);
        debug!(connection = self.id.0, address = %self.address, lost = calls.len(), reason, "connection closed");
        drop(calls);
        self.signals.wake.notify_one();
    }

    /// Closes the connection and waits until its tasks have ended (the socket is closed).
    pub async fn close_and_wait(&self, reason: &str) {
        self.close(reason);
        let tasks = std::mem::take(&mut *self.tasks.lock());
        for task in tasks {
            let _ = task.await;
        }
    }

    async fn read_loop(self: Arc<Self>, mut socket: OwnedReadHalf, mut input: Input) {
        let mut closed = self.close_signal.subscribe();
        let reason = loop {
            if let Err(error) = self.dispatch_input(&mut input) {
                break format!("malformed input: {error}");
            }
            input.reserve();
            tokio::select! {
                biased;
                _ = closed.wait_for(|closed| *closed) => return,
                read = socket.read_buf(&mut input.buffer) => match read {
                    Ok(0) => break "closed by the member".to_owned(),
                    Ok(_) => self.touch(&self.last_read_ms),
                    Err(error) => break format!("read failed: {error}"),
                },
            }
        };
        self.close(&reason);
    }

    /// Handles every whole message in `input`, then completes the responses' calls.
    fn dispatch_input(&self, input: &mut Input) -> Result<(), DecodeError> {
        let Input { buffer, start, decoder, responses, completions } = input;
        loop {
            let rest = &buffer[*start..];
            match decoder.decode(rest)? {
                Decoded::Message { length } => {
                    self.on_message(&rest[..length], responses)?;
                    *start += length;
                }
                Decoded::Reassembled { consumed, message } => {
                    self.on_message(&message, responses)?;
                    *start += consumed;
                }
                Decoded::Absorbed { consumed } => *start += consumed,
                Decoded::NeedMore => break,
            }
        }
        if responses.is_empty() {
            return Ok(());
        }
        let mut unmatched = 0;
        {
            let mut pending = self.pending.lock();
            for (correlation_id, bytes) in responses.drain(..) {
                match pending.calls.remove(&correlation_id) {
                    Some(call) => completions.push((call, bytes)),
                    None => unmatched += 1,
                }
            }
        }
        for (call, bytes) in completions.drain(..) {
            // The waiter may have given up (timeout, cancellation): nothing to do then.
            let _ = call.reply.send(bytes);
        }
        if unmatched > 0 {
            self.signals.unmatched_responses.fetch_add(unmatched, Ordering::Relaxed);
        }
        Ok(())
    }

    fn on_message(&self, bytes: &[u8], responses: &mut Vec<(i64, Vec<u8>)>) -> Result<(), DecodeError> {
        let message = Message::parse(bytes)?;
        if message.initial_flags() & IS_EVENT == 0 {
            responses.push((message.correlation_id(), bytes.to_vec()));
            return Ok(());
        }
        let handler = self.events.lock().get(&message.correlation_id()).cloned();
        if let Some(handler) = handler {
            handler(self.id, &message);
        }
        Ok(())
    }

    async fn write_loop(self: Arc<Self>, mut socket: OwnedWriteHalf, mut outbound: mpsc::Receiver<Outbound>) {
        let mut closed = self.close_signal.subscribe();
        let mut buffer = Vec::with_capacity(READ_RESERVE_BYTES);
        let reason = loop {
            let first = tokio::select! {
                biased;
                _ = closed.wait_for(|closed| *closed) => return,
                first = outbound.recv() => match first { Some(first) => first, None => return },
            };
            buffer.clear();
            append_request(&mut buffer, &first);
            let mut count = 1;
            while count < WRITE_BATCH_MESSAGES && buffer.len() < WRITE_BATCH_BYTES {
                let Ok(next) = outbound.try_recv() else { break };
                append_request(&mut buffer, &next);
                count += 1;
            }
            let written = tokio::select! {
                biased;
                _ = closed.wait_for(|closed| *closed) => return,
                written = socket.write_all(&buffer) => written,
            };
            if let Err(error) = written {
                break format!("write failed: {error}");
            }
            self.touch(&self.last_write_ms);
            if buffer.capacity() > KEEP_BUFFER_BYTES {
                buffer = Vec::with_capacity(READ_RESERVE_BYTES);
            }
        };
        self.close(&reason);
    }
}

/// Copies `request` to the end of `buffer`, stamping its correlation id.
fn append_request(buffer: &mut Vec<u8>, outbound: &Outbound) {
    let at = buffer.len() + CORRELATION_ID_OFFSET;
    buffer.extend_from_slice(&outbound.request);
    buffer[at..at + 8].copy_from_slice(&outbound.correlation_id.to_le_bytes());
}
