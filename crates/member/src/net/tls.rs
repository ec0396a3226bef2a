//! TLS on one connection: a rustls session between the socket and the connection's plaintext
//! read buffer and outbound bytes, driven by the reactor's readiness events without blocking.
//!
//! The session sits in its connection's shared half behind a mutex (`ConnectionShared`), as
//! any reactor may write responses: every use of the socket on a TLS connection — reading
//! records, writing them, flushing handshake messages and alerts — happens under that mutex,
//! so records leave in the order rustls made them, whichever thread sends them. It is a leaf
//! lock: no other lock is taken while it is held (a writer may hold partition locks when it
//! takes it, never the connection's outbound lock), so it cannot be part of a deadlock.
//!
//! Bounds: rustls holds at most [`TLS_BUFFER_BYTES`] of unsent plaintext and records
//! (`set_buffer_limit`); what it has decrypted and not yet handed over is bounded by rustls
//! itself (one record's worth), and is always drained before more is read from the socket.

use mio::net::TcpStream;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::sync::Arc;

/// Unsent bytes rustls may hold for one connection, plaintext and records together; beyond it
/// a write takes no more, and the connection's outbound bytes wait as they do for a full socket.
pub const TLS_BUFFER_BYTES: usize = 256 << 10;

/// The member's two TLS configurations, made once at start (`tls_files.rs`, `tls_link.rs`).
#[derive(Debug, Clone)]
pub struct TlsContext {
    /// For every connection accepted on the member's port (clients and members).
    pub server: Arc<ServerConfig>,
    /// For links this member opens to other members.
    pub client: Arc<ClientConfig>,
}

/// The TLS state of one connection.
#[derive(Debug)]
pub struct TlsSession {
    connection: rustls::Connection,
}

impl TlsSession {
    /// The server side of a connection accepted on the member's port.
    pub fn server(config: &Arc<ServerConfig>) -> io::Result<TlsSession> {
        let mut connection = ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?;
        connection.set_buffer_limit(Some(TLS_BUFFER_BYTES));
        Ok(TlsSession { connection: connection.into() })
    }

    /// The client side of a link this member opens, with `preamble` (the member protocol's
    /// header and Hello) queued to go once the handshake is done. The ClientHello is sent by
    /// the first `flush`.
    pub fn client(config: &Arc<ClientConfig>, peer: std::net::SocketAddr, preamble: &[u8]) -> io::Result<TlsSession> {
        let name = rustls::pki_types::ServerName::IpAddress(peer.ip().into());
        let mut connection = ClientConnection::new(Arc::clone(config), name).map_err(io::Error::other)?;
        connection.set_buffer_limit(Some(TLS_BUFFER_BYTES));
        let queued = connection.writer().write(preamble)?;
        if queued < preamble.len() {
            return Err(io::Error::other("the member preamble is larger than the TLS buffer"));
        }
        Ok(TlsSession { connection: connection.into() })
    }

    /// Reads decrypted bytes into `buffer`, filling it as far as the socket allows: those
    /// rustls already holds, then records from the socket (rustls reads them a few KiB at a
    /// time) until the buffer is full or the socket would block. `WouldBlock` with nothing
    /// read means the socket is drained, as edge-triggered polling needs. Handshake messages
    /// the records call for are sent on the way. Ok(0) is the end of the stream; a record
    /// rustls refuses (a client speaking plain text, garbage, an untrusted certificate) is
    /// `InvalidData` naming the reason, after the alert that tells the peer.
    pub fn read(&mut self, socket: &TcpStream, buffer: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        loop {
            match self.connection.reader().read(&mut buffer[filled..]) {
                // The end of the stream (close_notify), or a full buffer.
                Ok(0) => return Ok(filled),
                Ok(count) => {
                    filled += count;
                    continue;
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed the socket without close_notify: its end of the stream.
                Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(filled),
                Err(error) => return Err(error),
            }
            // Nothing decrypted is held here, so rustls has room for the next records.
            let count = match self.connection.read_tls(&mut SocketRef(socket)) {
                Ok(count) => count,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock && filled > 0 => return Ok(filled),
                Err(error) => return Err(error),
            };
            if count == 0 {
                // Seen by the reader above: what is left, then the end of the stream.
                continue;
            }
            self.process_records(socket)?;
        }
    }

    /// Decrypts what `read_tls` brought and sends what the handshake calls for.
    fn process_records(&mut self, socket: &TcpStream) -> io::Result<()> {
        if let Err(error) = self.connection.process_new_packets() {
            let _ = self.flush(socket);
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {error}")));
        }
        match self.flush(socket) {
            Ok(()) => Ok(()),
            // The rest goes on the next writable event (`flush` from `on_writable`).
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Encrypts `batch[*offset..]` and writes the records, advancing `offset` past the bytes
    /// rustls took. Ok: all taken and written. `WouldBlock`: the socket (or, before the
    /// handshake ends, rustls' buffer) is full; the rest goes on the next writable event.
    pub fn write(&mut self, socket: &TcpStream, batch: &[u8], offset: &mut usize) -> io::Result<()> {
        loop {
            if *offset < batch.len() {
                *offset += self.connection.writer().write(&batch[*offset..])?;
            }
            if !self.connection.wants_write() {
                if *offset == batch.len() {
                    return Ok(());
                }
                // Plaintext refused with no record to send: the handshake is not over.
                return Err(io::ErrorKind::WouldBlock.into());
            }
            self.write_records(socket)?;
        }
    }

    /// Writes every record rustls holds. `WouldBlock` when the socket is full.
    pub fn flush(&mut self, socket: &TcpStream) -> io::Result<()> {
        while self.connection.wants_write() {
            self.write_records(socket)?;
        }
        Ok(())
    }

    fn write_records(&mut self, socket: &TcpStream) -> io::Result<()> {
        match self.connection.write_tls(&mut SocketRef(socket)) {
            Ok(0) => Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Tells the peer the stream ends (best effort: the socket is about to close).
    pub fn close(&mut self, socket: &TcpStream) {
        self.connection.send_close_notify();
        let _ = self.flush(socket);
    }
}

/// Reads and writes a socket through `&`, as `mio` allows.
struct SocketRef<'a>(&'a TcpStream);

impl Read for SocketRef<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        (&mut &*self.0).read(buffer)
    }
}

impl Write for SocketRef<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        (&mut &*self.0).write(bytes)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
