//! A connection's bytes, on the reactor that owns it: reading as much as the socket holds,
//! cutting whole messages and handing each to [`Core::handle`] (`dispatch.rs`), within the
//! connection's turn and its backpressure bounds; adding and closing connections.
//!
//! A connection's turn ends after `requests-per-turn` requests or `reads-per-turn` reads; the
//! rest waits on the reactor's retry list. It is not read while its unsent responses exceed
//! `connection-write-buffer-bytes`, while `max-in-flight-per-connection` of its requests run
//! on other reactors or members, while hand-offs wait for a full inbox, or (a client) while a
//! member link is congested.

use crate::net::connection::{Connection, ConnectionId, ConnectionShared, ConnectionState, Port, ReadBuffer};
use crate::net::reactor::Reactor;
use crate::net::tls::TlsSession;
use crate::route::dispatch::{Core, Flow};
use crate::shared::CLIENT_CLEANUP_PERIOD_MS;
use ferrogrid_protocol::frame::{Decoded, StreamDecoder, CLIENT_PROTOCOL_HEADER};
use mio::{Interest, Token};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use tracing::{debug, info, warn};

/// How many requests may be cut from one connection's input between checks of its unsent
/// responses written by other reactors.
const OUTBOUND_CHECK_INTERVAL: usize = 64;

/// Why [`Core::process_input`] stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Every complete message was handled; waiting for more bytes.
    NeedInput,
    /// Stopped on a bound (unsent responses, requests in flight, the connection's turn, its
    /// tenant's share or quota); retry later.
    Throttled,
}

impl Reactor {
    /// Registers a connection's socket (moved here by the IO balancer) with this reactor's poll.
    pub(crate) fn register(&self, connection: &ConnectionShared, token: Token, interest: Interest) -> io::Result<()> {
        self.poll.registry().register(&mut ConnectionStreamRef(connection), token, interest)
    }

    /// Deregisters a connection's socket (closed, or moved to another reactor).
    pub(crate) fn deregister(&self, connection: &ConnectionShared) {
        let _ = self.poll.registry().deregister(&mut ConnectionStreamRef(connection));
    }

    pub(crate) fn on_readable(&mut self, token: Token) {
        let buffer_limit = self.core.authenticated_limits.max_message_bytes as usize + (64 << 10);
        let limits = &self.core.shared.config.limits;
        self.core.turn.budget = limits.requests_per_turn as usize;
        for _ in 0..limits.reads_per_turn {
            let Some(connection) = self.connections.get_mut(token.0) else {
                return;
            };
            // Messages already buffered are processed before reading more. Stopped by its
            // tenant's fair share or rate quota, the connection waits for a retry: its socket may
            // already be drained, and edge-triggered polling would not report it again.
            match self.core.process_input(connection) {
                Err(reason) => return self.close(token, &reason),
                Ok(Progress::Throttled) => return self.schedule_retry(token),
                Ok(Progress::NeedInput) => {}
            }
            self.check_links();
            let connection = &self.connections[token.0];
            if !self.may_read(connection) {
                return self.schedule_retry(token);
            }
            let connection = &mut self.connections[token.0];
            match connection.input.read_from(ConnectionStreamRef(&connection.shared), buffer_limit) {
                Ok(0) => return self.close(token, "closed by peer"),
                Ok(count) => {
                    connection.last_read = Instant::now();
                    self.core.probes().bytes_in.add(count as u64);
                    // (Not on TLS: one record's plaintext says nothing of the socket.)
                    if count < connection.input.last_read_capacity() && !connection.shared.is_tls() {
                        // A short read drained the socket; edge-triggered polling reports new
                        // bytes, so skip the read that would only say "would block".
                        match self.core.process_input(connection) {
                            Err(reason) => return self.close(token, &reason),
                            Ok(Progress::Throttled) => return self.schedule_retry(token),
                            Ok(Progress::NeedInput) => {}
                        }
                        self.core.flush_output(connection);
                        return;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.core.flush_output(connection);
                    return;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return self.close(token, &format!("read failed: {error}")),
            }
        }
        // Fairness: more may be waiting; come back after other connections had a turn.
        if let Some(connection) = self.connections.get_mut(token.0) {
            if let Err(reason) = self.core.process_input(connection) {
                return self.close(token, &reason);
            }
            self.core.flush_output(connection);
        }
        self.core.turn.over = true;
        self.schedule_retry(token);
    }

    pub(crate) fn accept(&mut self, stream: mio::net::TcpStream, peer: std::net::SocketAddr, port: Port) {
        self.add_connection(stream, peer, None, port);
    }

    /// Takes on a connection: accepted on `port` (`link` None), or a link this member opened
    /// (`link` holds its TLS session when the member speaks TLS).
    pub(crate) fn add_connection(
        &mut self,
        mut stream: mio::net::TcpStream,
        peer: std::net::SocketAddr,
        link: Option<Option<TlsSession>>,
        port: Port,
    ) {
        let outgoing = link.is_some();
        // A connection accepted on a TLS port speaks TLS from its first byte.
        let tls = match (&self.core.shared.tls, link) {
            (_, Some(session)) => session,
            (Some(context), None) => match TlsSession::server(&context.server) {
                Ok(session) => Some(session),
                Err(error) => {
                    warn!(%peer, %error, "could not start TLS on a connection");
                    self.core.shared.open_connections.fetch_sub(1, Ordering::AcqRel);
                    return;
                }
            },
            (None, None) => None,
        };
        let entry = self.connections.vacant_entry();
        let token = Token(entry.key());
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(error) = self.poll.registry().register(&mut stream, token, interest) {
            warn!(%peer, %error, "could not register connection");
            self.core.shared.open_connections.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        let id = ConnectionId(self.core.shared.next_connection_id.fetch_add(1, Ordering::Relaxed));
        let shared = Arc::new(ConnectionShared::with_tls(id, peer, stream, tls));
        if shared.is_tls() {
            // A link's ClientHello waits in its session: send it now.
            shared.on_writable();
        }
        let mut connection = Connection::new(shared, token, self.unauthenticated_limits);
        connection.outgoing = outgoing;
        connection.port = port;
        entry.insert(connection);
        self.core.shared.reactors[self.core.index].connections.fetch_add(1, Ordering::AcqRel);
        debug!(%peer, reactor = self.core.index, "connection accepted");
        // Bytes may have arrived before registration: edge-triggered polling would not say so.
        self.on_readable(token);
    }

    pub(crate) fn close(&mut self, token: Token, reason: &str) {
        let Some(connection) = self.connections.try_remove(token.0) else {
            return;
        };
        self.core.probes().bytes_out.add(connection.shared.send(&connection.output) as u64);
        if let ConnectionState::Authenticated { client_uuid, tenant, .. } = connection.state {
            if let Some(runtime) = self.core.shared.tenant(tenant) {
                runtime.connections.fetch_sub(1, Ordering::AcqRel);
            }
            if self.core.shared.client_disconnected(client_uuid) {
                self.core.owner.schedule_client_cleanup(client_uuid, CLIENT_CLEANUP_PERIOD_MS);
            }
            // Its registrations, here (every reactor's, at its next sweep) and on the other
            // members, go with it (as Hazelcast's endpoint does).
            connection.shared.close();
            self.core.shared.sql.connection_closed(connection.shared.id);
            self.core.txn_connection_closed(connection.shared.id);
            self.core.shared.client_closes.fetch_add(1, Ordering::AcqRel);
            let dropped = self.core.shared.relays.drop_closed();
            self.core.unlisten_everywhere(&dropped);
        }
        if matches!(connection.state, ConnectionState::Member { .. }) {
            let event = crate::shared::ClusterEvent::Closed { link: connection.shared.id };
            let _ = self.core.shared.cluster_events.try_send(event);
        }
        self.deregister(&connection.shared);
        connection.shared.close();
        self.core.shared.reactors[self.core.index].connections.fetch_sub(1, Ordering::AcqRel);
        self.core.shared.open_connections.fetch_sub(1, Ordering::AcqRel);
        info!(peer = %connection.shared.peer, reason, "connection closed");
    }

    /// Whether the reactor may read more requests from this connection now.
    pub(crate) fn may_read(&self, connection: &Connection) -> bool {
        let write_limit = self.core.shared.config.limits.connection_write_buffer_bytes as usize;
        let in_flight_limit = self.core.shared.config.limits.max_in_flight_per_connection as usize;
        let member_link = matches!(connection.state, ConnectionState::Member { .. } | ConnectionState::MemberHello);
        !self.core.handoff.has_overflow()
            && connection.shared.in_flight() < in_flight_limit
            && connection.shared.pending_bytes() <= write_limit
            && (member_link || self.core.shared.congested_links.load(Ordering::Acquire) == 0)
    }

    /// Notes whether a member link has more pending than a connection may (a slow or stopped
    /// member): its backlog is bounded by not reading clients, on any reactor, until it drains.
    pub(crate) fn check_links(&mut self) {
        let limit = self.core.shared.config.limits.connection_write_buffer_bytes as usize;
        let links = &self.core.owner.replication.state.links;
        let congested =
            links.iter().map(|(peer, link)| (*peer, link.pending_bytes())).find(|(_, bytes)| *bytes > limit);
        match (self.congested_link, congested) {
            (None, Some((peer, bytes))) => {
                self.core.shared.congested_links.fetch_add(1, Ordering::AcqRel);
                warn!(
                    reactor = self.core.index,
                    member = %format!("{:032x}", peer.0),
                    bytes,
                    limit,
                    "member link congested: client connections are not read until it drains"
                )
            }
            (Some(peer), None) => {
                self.core.shared.congested_links.fetch_sub(1, Ordering::AcqRel);
                let member = format!("{:032x}", peer.0);
                info!(reactor = self.core.index, %member, "member link drained: reading clients again");
            }
            _ => {}
        }
        self.congested_link = congested.map(|(peer, _)| peer);
    }
}

impl Core {
    /// Cuts and handles every complete message buffered on `connection`.
    pub(crate) fn process_input(&mut self, connection: &mut Connection) -> Result<Progress, String> {
        self.turn.link = matches!(connection.state, ConnectionState::Member { .. } | ConnectionState::MemberHello);
        // Its own partitions are taken (waiting if another reactor holds them) before any
        // other's: a reactor waits for a lock only while it holds none.
        self.owner.tick_clock();
        self.turn.request_clock = None;
        let progress = self.process_messages(connection);
        self.send_outgoing(&connection.shared);
        if let ConnectionState::Member { peer } = connection.state {
            self.send_member_work(peer);
        }
        // What ran is in its logs before its answers leave (`connection.output` is written
        // next); answers held for the disk leave after the loop turn's flush.
        self.owner.flush_persistence_before_answers();
        // The other reactors may run requests on this reactor's partitions until it needs
        // them again.
        self.owner.release();
        progress
    }

    pub(crate) fn process_messages(&mut self, connection: &mut Connection) -> Result<Progress, String> {
        let (connection_outgoing, port) = (connection.outgoing, connection.port);
        self.turn.outgoing_link = connection_outgoing;
        let Connection { shared, state, input, decoder, output, requests, requests_since_balance, .. } = connection;
        let write_limit = self.shared.config.limits.connection_write_buffer_bytes as usize;
        let in_flight_limit = self.shared.config.limits.max_in_flight_per_connection as usize;
        for handled in 1usize.. {
            if shared.in_flight() >= in_flight_limit {
                return Ok(Progress::Throttled);
            }
            // Bound the responses a client has not read: stop cutting its requests once they
            // exceed the limit. Inline output is checked on every message; responses other
            // reactors wrote are only visible in the shared buffer, checked periodically.
            if output.len() >= write_limit || handled % OUTBOUND_CHECK_INTERVAL == 1 {
                shared.send(output);
                output.clear();
                if shared.pending_bytes() > write_limit {
                    return Ok(Progress::Throttled);
                }
            }
            if *state == ConnectionState::AwaitingProtocolHeader {
                if !self.read_protocol_header(shared, state, input, decoder, (connection_outgoing, port))? {
                    return Ok(Progress::NeedInput);
                }
                continue;
            }
            if self.turn.budget == 0 && !input.unread().is_empty() {
                self.turn.over = true;
                return Ok(Progress::Throttled);
            }
            if let ConnectionState::Authenticated { tenant, .. } = state {
                if *tenant != 0 && !input.unread().is_empty() && !self.admit(*tenant) {
                    return Ok(Progress::Throttled);
                }
            }
            let decoded = decoder.decode(input.unread()).map_err(|error| format!("malformed input: {error}"))?;
            let flow = match decoded {
                Decoded::NeedMore => return Ok(Progress::NeedInput),
                Decoded::Absorbed { consumed } => {
                    input.consume(consumed);
                    continue;
                }
                Decoded::Message { length } => {
                    let flow = self.handle(shared, state, output, &input.unread()[..length]);
                    input.consume(length);
                    flow
                }
                Decoded::Reassembled { consumed, message } => {
                    input.consume(consumed);
                    self.handle(shared, state, output, &message)
                }
            };
            self.turn.budget = self.turn.budget.saturating_sub(1);
            *requests += 1;
            *requests_since_balance += 1;
            if state.is_established() {
                decoder.set_limits(self.authenticated_limits);
            }
            if let Flow::Close(reason) = flow {
                return Err(reason);
            }
        }
        unreachable!("the loop returns")
    }

    /// Reads a connection's 3-byte protocol header: `CP2` (a client, authentication comes
    /// next) or `FGM` (a member link: this side's `FGM` and Hello are sent back unless this
    /// member opened the link, then the peer's Hello comes next). Returns false while the
    /// header is incomplete. With separate client and member ports (advanced network), each
    /// refuses the other protocol, as Hazelcast's do.
    fn read_protocol_header(
        &mut self,
        shared: &ConnectionShared,
        state: &mut ConnectionState,
        input: &mut ReadBuffer,
        decoder: &mut StreamDecoder,
        (connection_outgoing, port): (bool, Port),
    ) -> Result<bool, String> {
        let unread = input.unread();
        if unread.len() < CLIENT_PROTOCOL_HEADER.len() {
            return Ok(false);
        }
        let header = &unread[..3];
        if port == Port::Member && header == CLIENT_PROTOCOL_HEADER {
            return Err("a client dialled the member port: clients connect to the client endpoint \
                        (advanced-network client-server-socket-endpoint-config)"
                .into());
        }
        if port == Port::Client && header == crate::cluster::peer::MEMBER_PROTOCOL_HEADER {
            return Err("a member dialled the client port: members link over the member endpoint".into());
        }
        if header == crate::cluster::peer::MEMBER_PROTOCOL_HEADER {
            input.consume(3);
            if !connection_outgoing {
                let mut preamble = crate::cluster::peer::MEMBER_PROTOCOL_HEADER.to_vec();
                let address = &self.shared.member_address;
                preamble.extend_from_slice(&crate::cluster::service::hello_message(&self.shared, address));
                shared.send(&preamble);
            }
            *state = ConnectionState::MemberHello;
            decoder.set_limits(self.authenticated_limits);
            return Ok(true);
        }
        if &unread[..3] != CLIENT_PROTOCOL_HEADER {
            return Err(format!("unknown protocol header {:02x?}", &unread[..3]));
        }
        input.consume(3);
        *state = ConnectionState::AwaitingAuthentication;
        Ok(true)
    }

    /// Writes the responses gathered for `connection` during this batch.
    pub(crate) fn flush_output(&self, connection: &mut Connection) {
        let written = connection.shared.send_from(&mut connection.output);
        self.probes().bytes_out.add(written as u64);
    }
}

/// Lets a shared connection's stream be read and deregistered through `&`.
pub(crate) struct ConnectionStreamRef<'a>(&'a ConnectionShared);

impl io::Read for ConnectionStreamRef<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        self.0.read(buffer)
    }
}

impl mio::event::Source for ConnectionStreamRef<'_> {
    fn register(&mut self, registry: &mio::Registry, token: Token, interests: Interest) -> io::Result<()> {
        registry.register(&mut mio::unix::SourceFd(&std::os::fd::AsRawFd::as_raw_fd(self.0.stream())), token, interests)
    }
    fn reregister(&mut self, registry: &mio::Registry, token: Token, interests: Interest) -> io::Result<()> {
        registry.reregister(
            &mut mio::unix::SourceFd(&std::os::fd::AsRawFd::as_raw_fd(self.0.stream())),
            token,
            interests,
        )
    }
    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        registry.deregister(&mut mio::unix::SourceFd(&std::os::fd::AsRawFd::as_raw_fd(self.0.stream())))
    }
}
