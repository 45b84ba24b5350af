//! The test server: one thread per client, limits on clients, time and bytes, timeouts on
//! every read, and a UDP echo that answers only datagrams carrying a live session id from
//! the address that opened it, with exactly the bytes it received.

use super::protocol::{self, Greeting, Received, Reply, Request, SESSION_BYTES, Test, UDP_HEADER};
use super::quiet::{Throttle, is_exhaustion, wait_readable};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The whole handshake, however the bytes trickle in, must end within this.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_MESSAGE: usize = 1 << 20;
/// Connections still in their handshake at once. Beyond it the oldest is closed to make room,
/// so idle or slow unauthenticated peers can never keep a new client out; authenticated
/// clients are counted apart (`--max-clients`).
const MAX_PENDING: usize = 256;
/// Pauses after failing accepts (out of file descriptors, say).
const INITIAL_ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub bind: SocketAddr,
    pub token: Option<String>,
    pub insecure: bool,
    pub max_clients: usize,
    pub max_duration: Duration,
    pub max_bytes: u64,
}

struct Session {
    /// The control connection's address: the UDP peer must have the same IP.
    peer: IpAddr,
    /// The UDP address of the session's first datagram; later ones must match it, port too.
    udp_peer: Option<SocketAddr>,
    expires: Instant,
}

struct Shared {
    config: ServerConfig,
    sessions: Mutex<HashMap<[u8; SESSION_BYTES], Session>>,
    /// Authenticated clients being served.
    active: AtomicUsize,
    /// Connections in their handshake, oldest first, each with its id: the oldest is shut
    /// down when a new one needs its place.
    pending: Mutex<std::collections::VecDeque<(u64, TcpStream)>>,
    next_pending: std::sync::atomic::AtomicU64,
    stop: AtomicBool,
    udp_port: u16,
    /// Running out of descriptors or memory fails accepts and clients alike, many times a
    /// second: those reports share one throttle.
    exhaustion: Mutex<Throttle>,
    /// Clients that failed otherwise (dropped handshakes, garbage): a flood of them is a line
    /// a second, not a line each.
    failures: Mutex<Throttle>,
}

pub struct Server {
    listener: TcpListener,
    udp: UdpSocket,
    shared: Arc<Shared>,
}

/// Stops a running server when dropped or asked.
#[derive(Clone)]
pub struct StopHandle(Arc<Shared>);

impl StopHandle {
    pub fn stop(&self) {
        self.0.stop.store(true, Ordering::SeqCst);
    }
}

impl Server {
    /// Binds TCP and UDP on the same address. Anything but loopback needs a token or an
    /// explicit `insecure`.
    pub fn bind(config: ServerConfig) -> Result<Server> {
        if !config.bind.ip().is_loopback() && config.token.is_none() && !config.insecure {
            return Err(Error::Input(format!(
                "binding {} exposes the server beyond this host: give --token SECRET (clients must prove they know it) or --insecure",
                config.bind
            )));
        }
        let listener = TcpListener::bind(config.bind)
            .map_err(|e| Error::Environment(format!("binding TCP {}: {e}", config.bind)))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::Environment(e.to_string()))?;
        let udp = UdpSocket::bind(SocketAddr::new(local.ip(), local.port()))
            .or_else(|_| UdpSocket::bind(SocketAddr::new(local.ip(), 0)))
            .map_err(|e| Error::Environment(format!("binding UDP on {}: {e}", local.ip())))?;
        let udp_port = udp
            .local_addr()
            .map_err(|e| Error::Environment(e.to_string()))?
            .port();
        Ok(Server {
            listener,
            udp,
            shared: Arc::new(Shared {
                config,
                sessions: Mutex::new(HashMap::new()),
                active: AtomicUsize::new(0),
                pending: Mutex::new(std::collections::VecDeque::new()),
                next_pending: std::sync::atomic::AtomicU64::new(0),
                stop: AtomicBool::new(false),
                exhaustion: Mutex::new(Throttle::default()),
                failures: Mutex::new(Throttle::default()),
                udp_port,
            }),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or(self.shared.config.bind)
    }

    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(Arc::clone(&self.shared))
    }

    /// Serves until stopped; `log` hears one line per client that finished a test, and at
    /// most one a second of those that failed, with a count of those held back.
    pub fn serve(self, log: impl Fn(&str) + Send + Sync + 'static) -> Result<()> {
        let log = Arc::new(log);
        let udp_shared = Arc::clone(&self.shared);
        let udp = self.udp;
        udp.set_read_timeout(Some(Duration::from_millis(200))).ok();
        let udp_thread = std::thread::spawn(move || echo_udp(&udp, &udp_shared));
        self.listener
            .set_nonblocking(true)
            .map_err(|e| Error::Environment(e.to_string()))?;
        let mut backoff = INITIAL_ACCEPT_BACKOFF;
        while !self.shared.stop.load(Ordering::SeqCst) && !crate::interrupt::requested() {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    backoff = INITIAL_ACCEPT_BACKOFF;
                    let Some(id) = self.shared.admit(&stream) else {
                        continue;
                    };
                    let shared = Arc::clone(&self.shared);
                    let log = Arc::clone(&log);
                    std::thread::spawn(move || match serve_client(stream, peer, id, &shared) {
                        Ok(test) => log(&format!("{peer}: {test} done")),
                        Err(e) => {
                            let kind = match is_exhaustion(&e) {
                                true => &shared.exhaustion,
                                false => &shared.failures,
                            };
                            if let Some(line) = Shared::throttled(kind, &format!("{peer}: {e}")) {
                                log(&line);
                            }
                        }
                    });
                }
                // Waits for the next connection, or a stop, without a fixed pause: a pause
                // of 20 ms let a burst fill the backlog (128), and each connection dropped
                // then waited a second for the client's retry.
                Err(e) if e.kind() == ErrorKind::WouldBlock => wait_readable(&self.listener),
                Err(e) => {
                    // Each failure in a row doubles the pause before the next try.
                    backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                    let line = format!("accept: {e}; retrying in {backoff:?}");
                    if let Some(line) = Shared::throttled(&self.shared.exhaustion, &line) {
                        log(&line);
                    }
                    std::thread::sleep(backoff);
                }
            }
        }
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = udp_thread.join();
        for throttle in [&self.shared.exhaustion, &self.shared.failures] {
            let held = throttle.lock().map_or(0, |mut t| t.take_held());
            if held > 0 {
                log(&format!("{held} more like the last line were held back"));
            }
        }
        Ok(())
    }
}

impl Shared {
    /// Registers a connection starting its handshake, closing the oldest pending one when
    /// all places are taken; `None` when it cannot be registered (no descriptor to spare).
    fn admit(&self, stream: &TcpStream) -> Option<u64> {
        let handle = stream.try_clone().ok()?;
        let id = self.next_pending.fetch_add(1, Ordering::SeqCst);
        let mut pending = self.pending.lock().ok()?;
        while pending.len() >= MAX_PENDING {
            if let Some((_, oldest)) = pending.pop_front() {
                // Its handshake read fails at once and its thread ends.
                let _ = oldest.shutdown(std::net::Shutdown::Both);
            }
        }
        pending.push_back((id, handle));
        Some(id)
    }

    /// The connection `id` finished its handshake (or was closed): its place is free.
    fn release(&self, id: u64) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.retain(|(i, _)| *i != id);
        }
    }

    /// `line` if it may be logged now, with the count of those held back since the last one.
    fn throttled(throttle: &Mutex<Throttle>, line: &str) -> Option<String> {
        let held = throttle.lock().ok()?.admit()?;
        Some(match held {
            0 => line.to_string(),
            n => format!("{line} ({n} more like it since the last line)"),
        })
    }
}

/// Reads from a client within a wall-clock deadline: however the bytes trickle in, no read
/// returns data after it, and none waits longer than `idle` for the next byte.
struct Deadline {
    stream: TcpStream,
    deadline: Instant,
    idle: Duration,
    /// The read timeout set on the socket, so it is changed only when needed.
    armed: Option<Duration>,
}

impl Deadline {
    fn new(stream: TcpStream, deadline: Instant, idle: Duration) -> Self {
        Deadline {
            stream,
            deadline,
            idle,
            armed: None,
        }
    }
}

impl Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                ErrorKind::TimedOut,
                "time limit reached",
            ));
        }
        // Far from the deadline the idle timeout bounds each read; near it, what is left.
        let timeout = left.min(self.idle);
        if left <= self.idle || self.armed != Some(timeout) {
            self.stream.set_read_timeout(Some(timeout))?;
            self.armed = Some(timeout);
        }
        self.stream.read(buf)
    }
}

/// Echoes a datagram only when it carries a live session of its sender's address; the reply
/// is the same bytes, so it is never larger than what came in.
fn echo_udp(udp: &UdpSocket, shared: &Shared) {
    let mut buf = vec![0u8; 65536];
    while !shared.stop.load(Ordering::SeqCst) {
        let Ok((len, from)) = udp.recv_from(&mut buf) else {
            continue;
        };
        if len < UDP_HEADER {
            continue;
        }
        let mut id = [0u8; SESSION_BYTES];
        id.copy_from_slice(&buf[..SESSION_BYTES]);
        let allowed = shared.sessions.lock().map(|mut sessions| {
            let Some(s) = sessions.get_mut(&id) else {
                return false;
            };
            if s.peer != from.ip() || Instant::now() >= s.expires {
                return false;
            }
            // The first datagram binds the session to its port.
            *s.udp_peer.get_or_insert(from) == from
        });
        if allowed.unwrap_or(false) {
            let _ = udp.send_to(&buf[..len], from);
        }
    }
}

fn refuse(stream: &mut TcpStream, why: String) -> std::io::Error {
    let _ = protocol::send(
        stream,
        &Reply {
            ok: false,
            error: Some(why.clone()),
            ..Reply::default()
        },
    );
    std::io::Error::new(ErrorKind::PermissionDenied, why)
}

fn serve_client(
    stream: TcpStream,
    peer: SocketAddr,
    id: u64,
    shared: &Shared,
) -> std::io::Result<String> {
    let handshake = handshake(stream, peer, shared);
    shared.release(id);
    let (mut stream, reader, request, limit, session) = handshake?;
    let deadline = Instant::now() + limit;
    let mut reader = BufReader::new(Deadline::new(reader, deadline, IDLE_TIMEOUT));
    let result = match request.test {
        Test::TcpRtt => echo_tcp(&mut reader, &mut stream, request.size),
        Test::TcpThroughput => receive_bulk(
            &mut reader,
            &mut stream,
            request.size,
            shared.config.max_bytes,
        ),
        // The UDP session lives until the client closes the control connection.
        Test::UdpRtt | Test::UdpRate => wait_for_close(&mut reader),
    };
    if let Ok(mut sessions) = shared.sessions.lock() {
        sessions.remove(&session);
    }
    shared.active.fetch_sub(1, Ordering::SeqCst);
    match result {
        // A read cut short by the time limit (a slow or trickling client included).
        Err(_) if Instant::now() >= deadline => {
            // Say why on the control connection, so the client reports it instead of losses.
            let why = format!(
                "the server's time limit ({} s) ended the test",
                limit.as_secs()
            );
            let _ = protocol::send(
                &mut stream,
                &protocol::Ended {
                    reason: why.clone(),
                },
            );
            Err(std::io::Error::new(ErrorKind::TimedOut, why))
        }
        other => other.map(|_| request.test.name().to_string()),
    }
}

/// The client's request, within the handshake's deadline, in a version this server speaks.
fn receive_request(
    reader: &mut impl std::io::BufRead,
    stream: &mut TcpStream,
) -> std::io::Result<Request> {
    let request: Request = protocol::receive(reader).map_err(|e| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => std::io::Error::new(
            ErrorKind::TimedOut,
            format!("no request within {} s", HANDSHAKE_TIMEOUT.as_secs()),
        ),
        _ => e,
    })?;
    if request.version != protocol::VERSION {
        return Err(refuse(
            stream,
            format!(
                "protocol version {} not supported (this server speaks {})",
                request.version,
                protocol::VERSION
            ),
        ));
    }
    Ok(request)
}

/// Checks the client's proof of the token; returns the server's own proof, or refuses.
fn authenticate(
    stream: &mut TcpStream,
    token: &str,
    server_nonce: &str,
    request: &Request,
) -> std::io::Result<String> {
    let proven = request
        .proof
        .as_deref()
        .is_some_and(|p| protocol::verify(token, "client", server_nonce, &request.nonce, p));
    if !proven {
        return Err(refuse(
            stream,
            "authentication failed: wrong or missing --token".into(),
        ));
    }
    Ok(protocol::proof(
        token,
        "server",
        &request.nonce,
        server_nonce,
    ))
}

/// Registers a UDP session for `peer`'s IP until `limit` from now; expired ones go.
fn open_session(shared: &Shared, session: [u8; SESSION_BYTES], peer: SocketAddr, limit: Duration) {
    if let Ok(mut sessions) = shared.sessions.lock() {
        sessions.retain(|_, s| Instant::now() < s.expires);
        sessions.insert(
            session,
            Session {
                peer: peer.ip(),
                udp_peer: None,
                expires: Instant::now() + limit,
            },
        );
    }
}

type Accepted = (TcpStream, TcpStream, Request, Duration, [u8; SESSION_BYTES]);

/// Greets, reads the request, authenticates and takes a client slot, all within one deadline.
/// Counts one more active client unless `max` already are, exactly under concurrency.
fn take_slot(active: &AtomicUsize, max: usize) -> bool {
    let mut now = active.load(Ordering::SeqCst);
    while now < max {
        match active.compare_exchange_weak(now, now + 1, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return true,
            Err(actual) => now = actual,
        }
    }
    false
}

/// On success the client counts as active until `serve_client` ends.
fn handshake(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: &Shared,
) -> std::io::Result<Accepted> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT))?;
    stream.set_nodelay(true)?;
    let config = &shared.config;
    let server_nonce = protocol::nonce();
    protocol::send(
        &mut stream,
        &Greeting {
            proto: protocol::PROTO.into(),
            version: protocol::VERSION,
            nonce: server_nonce.clone(),
            auth: config.token.is_some(),
        },
    )?;
    let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
    let mut reader = BufReader::new(Deadline::new(
        stream.try_clone()?,
        deadline,
        HANDSHAKE_TIMEOUT,
    ));
    let request = receive_request(&mut reader, &mut stream)?;
    let mut reply = Reply {
        ok: true,
        ..Reply::default()
    };
    if let Some(token) = &config.token {
        reply.proof = Some(authenticate(&mut stream, token, &server_nonce, &request)?);
    }
    if request.size == 0 || request.size > MAX_MESSAGE {
        return Err(refuse(
            &mut stream,
            format!("size {} outside 1..={MAX_MESSAGE} bytes", request.size),
        ));
    }
    if !take_slot(&shared.active, config.max_clients) {
        return Err(refuse(
            &mut stream,
            format!("server busy: {} clients at most", config.max_clients),
        ));
    }
    let limit = config
        .max_duration
        .min(Duration::from_millis(request.duration_ms.max(1)) + Duration::from_secs(5));
    let session = protocol::session_id();
    if matches!(request.test, Test::UdpRtt | Test::UdpRate) {
        open_session(shared, session, peer, limit);
        reply.udp_port = Some(shared.udp_port);
        reply.session = Some(hex::encode(session));
    }
    if let Err(e) = protocol::send(&mut stream, &reply) {
        shared.active.fetch_sub(1, Ordering::SeqCst);
        return Err(e);
    }
    stream.set_write_timeout(Some(IDLE_TIMEOUT))?;
    let reader = reader.into_inner().stream;
    Ok((stream, reader, request, limit, session))
}

fn echo_tcp(reader: &mut impl Read, stream: &mut TcpStream, size: usize) -> std::io::Result<()> {
    let mut buf = vec![0u8; size];
    loop {
        match reader.read_exact(&mut buf) {
            Ok(()) => stream.write_all(&buf)?,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Counts bytes until the client finishes; acknowledges the first chunk with one byte and
/// reports what arrived, timed on this side.
fn receive_bulk(
    reader: &mut impl Read,
    stream: &mut TcpStream,
    chunk: usize,
    max_bytes: u64,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 256 * 1024];
    let (mut total, mut first, mut last, mut acked) =
        (0u64, None::<(Instant, u64)>, Instant::now(), false);
    while total < max_bytes {
        let n = match reader.read(&mut buf) {
            // At the time limit the test ends with what arrived, as at the byte limit.
            Err(e) if e.kind() == ErrorKind::TimedOut => break,
            other => other?,
        };
        if n == 0 {
            break;
        }
        let now = Instant::now();
        first.get_or_insert((now, n as u64));
        last = now;
        total += n as u64;
        if !acked && total >= chunk as u64 {
            stream.write_all(b"A")?;
            acked = true;
        }
    }
    let (duration_ns, timed_bytes) = first.map_or((0, 0), |(at, n)| {
        (last.duration_since(at).as_nanos() as u64, total - n)
    });
    protocol::send(
        stream,
        &Received {
            bytes: total,
            timed_bytes,
            duration_ns,
        },
    )
}

/// Holds a UDP session open until the client closes the control connection; at the time
/// limit the reader fails with `TimedOut`.
fn wait_for_close(reader: &mut impl Read) -> std::io::Result<()> {
    let mut buf = [0u8; 64];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            // An idle control connection is normal while UDP runs.
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}
