//! The test server: one thread per client, limits on clients, time and bytes, timeouts on
//! every read, and a UDP echo that answers only datagrams carrying a live session id from
//! the address that opened it, with exactly the bytes it received.

use super::protocol::{self, Greeting, Received, Reply, Request, SESSION_BYTES, Test, UDP_HEADER};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_MESSAGE: usize = 1 << 20;

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
    peer: IpAddr,
    expires: Instant,
}

struct Shared {
    config: ServerConfig,
    sessions: Mutex<HashMap<[u8; SESSION_BYTES], Session>>,
    active: AtomicUsize,
    stop: AtomicBool,
    udp_port: u16,
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
            .map_err(|e| Error::Failed(format!("binding TCP {}: {e}", config.bind)))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::Failed(e.to_string()))?;
        let udp = UdpSocket::bind(SocketAddr::new(local.ip(), local.port()))
            .or_else(|_| UdpSocket::bind(SocketAddr::new(local.ip(), 0)))
            .map_err(|e| Error::Failed(format!("binding UDP on {}: {e}", local.ip())))?;
        let udp_port = udp
            .local_addr()
            .map_err(|e| Error::Failed(e.to_string()))?
            .port();
        Ok(Server {
            listener,
            udp,
            shared: Arc::new(Shared {
                config,
                sessions: Mutex::new(HashMap::new()),
                active: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
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

    /// Serves until stopped; `log` hears one line per client.
    pub fn serve(self, log: impl Fn(&str) + Send + Sync + 'static) -> Result<()> {
        let log = Arc::new(log);
        let udp_shared = Arc::clone(&self.shared);
        let udp = self.udp;
        udp.set_read_timeout(Some(Duration::from_millis(200))).ok();
        let udp_thread = std::thread::spawn(move || echo_udp(&udp, &udp_shared));
        self.listener
            .set_nonblocking(true)
            .map_err(|e| Error::Failed(e.to_string()))?;
        while !self.shared.stop.load(Ordering::SeqCst) && !crate::interrupt::requested() {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    let shared = Arc::clone(&self.shared);
                    let log = Arc::clone(&log);
                    std::thread::spawn(move || {
                        let busy = shared.active.fetch_add(1, Ordering::SeqCst)
                            >= shared.config.max_clients;
                        let outcome = serve_client(stream, peer, &shared, busy);
                        shared.active.fetch_sub(1, Ordering::SeqCst);
                        log(&match outcome {
                            Ok(test) => format!("{peer}: {test} done"),
                            Err(e) => format!("{peer}: {e}"),
                        });
                    });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => log(&format!("accept: {e}")),
            }
        }
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = udp_thread.join();
        Ok(())
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
        let allowed = shared.sessions.lock().map(|sessions| {
            sessions
                .get(&id)
                .is_some_and(|s| s.peer == from.ip() && Instant::now() < s.expires)
        });
        if allowed.unwrap_or(false) {
            let _ = udp.send_to(&buf[..len], from);
        }
    }
}

fn refuse(stream: &mut TcpStream, why: String) -> std::io::Result<String> {
    let _ = protocol::send(
        stream,
        &Reply {
            ok: false,
            error: Some(why.clone()),
            ..Reply::default()
        },
    );
    Err(std::io::Error::new(ErrorKind::PermissionDenied, why))
}

fn serve_client(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: &Shared,
    busy: bool,
) -> std::io::Result<String> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
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
    let mut reader = BufReader::new(stream.try_clone()?);
    let request: Request = protocol::receive(&mut reader)?;
    if busy {
        return refuse(
            &mut stream,
            format!("server busy: {} clients at most", config.max_clients),
        );
    }
    if request.version != protocol::VERSION {
        return refuse(
            &mut stream,
            format!(
                "protocol version {} not supported (this server speaks {})",
                request.version,
                protocol::VERSION
            ),
        );
    }
    let mut reply = Reply {
        ok: true,
        ..Reply::default()
    };
    if let Some(token) = &config.token {
        let proven = request
            .proof
            .as_deref()
            .is_some_and(|p| protocol::verify(token, "client", &server_nonce, &request.nonce, p));
        if !proven {
            return refuse(
                &mut stream,
                "authentication failed: wrong or missing --token".into(),
            );
        }
        reply.proof = Some(protocol::proof(
            token,
            "server",
            &request.nonce,
            &server_nonce,
        ));
    }
    if request.size == 0 || request.size > MAX_MESSAGE {
        return refuse(
            &mut stream,
            format!("size {} outside 1..={MAX_MESSAGE} bytes", request.size),
        );
    }
    let limit = config
        .max_duration
        .min(Duration::from_millis(request.duration_ms.max(1)) + Duration::from_secs(5));
    let session = protocol::session_id();
    if matches!(request.test, Test::UdpRtt | Test::UdpRate) {
        if let Ok(mut sessions) = shared.sessions.lock() {
            sessions.retain(|_, s| Instant::now() < s.expires);
            sessions.insert(
                session,
                Session {
                    peer: peer.ip(),
                    expires: Instant::now() + limit,
                },
            );
        }
        reply.udp_port = Some(shared.udp_port);
        reply.session = Some(hex::encode(session));
    }
    protocol::send(&mut stream, &reply)?;
    stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
    let deadline = Instant::now() + limit;
    let result = match request.test {
        Test::TcpRtt => echo_tcp(&mut reader, &mut stream, request.size, deadline),
        Test::TcpThroughput => receive_bulk(
            &mut reader,
            &mut stream,
            request.size,
            config.max_bytes,
            deadline,
        ),
        // The UDP session lives until the client closes the control connection.
        Test::UdpRtt | Test::UdpRate => wait_for_close(&mut reader, deadline),
    };
    if let Ok(mut sessions) = shared.sessions.lock() {
        sessions.remove(&session);
    }
    result.map(|_| request.test.name().to_string())
}

fn echo_tcp(
    reader: &mut impl Read,
    stream: &mut TcpStream,
    size: usize,
    deadline: Instant,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; size];
    while Instant::now() < deadline {
        match reader.read_exact(&mut buf) {
            Ok(()) => stream.write_all(&buf)?,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Counts bytes until the client finishes; acknowledges the first chunk with one byte and
/// reports what arrived, timed on this side.
fn receive_bulk(
    reader: &mut impl Read,
    stream: &mut TcpStream,
    chunk: usize,
    max_bytes: u64,
    deadline: Instant,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 256 * 1024];
    let (mut total, mut first, mut last, mut acked) =
        (0u64, None::<(Instant, u64)>, Instant::now(), false);
    while Instant::now() < deadline && total < max_bytes {
        let n = reader.read(&mut buf)?;
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

fn wait_for_close(reader: &mut impl Read, deadline: Instant) -> std::io::Result<()> {
    let mut buf = [0u8; 64];
    while Instant::now() < deadline {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
