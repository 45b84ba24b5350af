//! The test client: handshake, then one of the four tests, measured on this side's clock.

use super::protocol::{self, Greeting, Received, Reply, Request, SESSION_BYTES, Test, UDP_HEADER};
use crate::error::{Error, Result};
use hdrhistogram::Histogram;
use std::io::{BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub server: SocketAddr,
    pub test: Test,
    pub size: usize,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
    pub warmup: Duration,
    pub rate: u64,
    /// tcp-throughput sends this many bytes; `None` sends for the duration, as iperf3 does.
    pub bytes: Option<u64>,
    pub chunk: usize,
    pub token: Option<String>,
}

/// What a test measured; every time in ns.
pub enum Measurement {
    RoundTrips {
        rtt: Histogram<u64>,
        lost: u64,
    },
    Rate {
        latency: Histogram<u64>,
        sent: u64,
        received: u64,
        duplicated: u64,
        reordered: u64,
    },
    Throughput {
        /// The server's report; `None` when interrupted before it came.
        received: Option<Received>,
        first_chunk_ns: Option<u64>,
        first_send_ns: u64,
        first_send_bytes: usize,
        sent: u64,
    },
}

/// How long the client waits for any answer of the server on the control connection.
const ANSWER_WAIT: Duration = Duration::from_secs(10);

fn io_err(what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| match would_block(&e) {
        true => Error::Peer(format!(
            "{what}: no answer from the server within {} s",
            ANSWER_WAIT.as_secs()
        )),
        false => Error::Peer(format!("{what}: {e}")),
    }
}

fn histogram() -> Histogram<u64> {
    // 1 ns to 60 s at three significant digits is always a valid configuration.
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

struct Connection {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    reply: Reply,
}

fn handshake(config: &ClientConfig, duration: Duration) -> Result<Connection> {
    let addr = config.server;
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(io_err(&format!("connecting to {addr}")))?;
    stream.set_read_timeout(Some(ANSWER_WAIT)).ok();
    stream.set_nodelay(true).ok();
    let mut reader = BufReader::new(stream.try_clone().map_err(io_err("socket"))?);
    let greeting: Greeting = protocol::receive(&mut reader).map_err(io_err(&format!("{addr}")))?;
    if greeting.proto != protocol::PROTO || greeting.version != protocol::VERSION {
        return Err(Error::Peer(format!(
            "{addr} speaks {} version {}, not {} version {}",
            greeting.proto,
            greeting.version,
            protocol::PROTO,
            protocol::VERSION
        )));
    }
    let nonce = protocol::nonce();
    let proof = match (&config.token, greeting.auth) {
        (Some(token), _) => Some(protocol::proof(token, "client", &greeting.nonce, &nonce)),
        (None, true) => return Err(Error::Peer(format!("{addr} requires --token"))),
        (None, false) => None,
    };
    let request = Request {
        version: protocol::VERSION,
        test: config.test,
        size: if config.test == Test::TcpThroughput {
            config.chunk
        } else {
            config.size
        },
        duration_ms: duration.as_millis() as u64,
        bytes: config.bytes.unwrap_or(0),
        nonce: nonce.clone(),
        proof,
    };
    let mut writer = stream.try_clone().map_err(io_err("socket"))?;
    protocol::send(&mut writer, &request).map_err(io_err("sending the request"))?;
    let reply: Reply = protocol::receive(&mut reader).map_err(io_err("reading the reply"))?;
    if !reply.ok {
        return Err(Error::Peer(format!(
            "{addr} refused: {}",
            reply.error.unwrap_or_default()
        )));
    }
    if let Some(token) = &config.token {
        let proven = reply
            .proof
            .as_deref()
            .is_some_and(|p| protocol::verify(token, "server", &nonce, &greeting.nonce, p));
        if !proven {
            return Err(Error::Peer(format!(
                "{addr} could not prove it knows the token"
            )));
        }
    }
    Ok(Connection {
        stream,
        reader,
        reply,
    })
}

/// Whether to go on: within the duration and the count.
fn more(started: Instant, done: u64, config: &ClientConfig, duration: Duration) -> bool {
    match config.count {
        Some(n) => done < n,
        None => started.elapsed() < duration,
    }
}

pub fn run(config: &ClientConfig) -> Result<Measurement> {
    let duration = config.duration.unwrap_or(Duration::from_secs(5));
    let mut conn = handshake(config, duration + config.warmup)?;
    let stopped = || crate::interrupt::requested();
    match config.test {
        Test::TcpRtt => {
            let mut buf = vec![0u8; config.size];
            let mut rtt = histogram();
            let mut round_trip = |conn: &mut Connection| -> Result<u64> {
                let t0 = Instant::now();
                conn.stream.write_all(&buf).map_err(io_err("send"))?;
                conn.reader
                    .read_exact(&mut buf)
                    .map_err(io_err("receive"))?;
                Ok(t0.elapsed().as_nanos() as u64)
            };
            let warm = Instant::now();
            while warm.elapsed() < config.warmup && !stopped() {
                round_trip(&mut conn)?;
            }
            let (started, mut done) = (Instant::now(), 0);
            while more(started, done, config, duration) && !stopped() {
                rtt.saturating_record(round_trip(&mut conn)?);
                done += 1;
            }
            Ok(Measurement::RoundTrips { rtt, lost: 0 })
        }
        Test::UdpRtt => udp_rtt(config, &conn, duration).and_then(|m| not_ended(&mut conn, m)),
        Test::UdpRate => udp_rate(config, &conn, duration).and_then(|m| not_ended(&mut conn, m)),
        Test::TcpThroughput => throughput(config, conn, duration),
    }
}

/// A UDP test's measurement, unless the server ended the session early: then the packets it
/// stopped answering would read as losses, so its reason is the result.
fn not_ended(conn: &mut Connection, measurement: Measurement) -> Result<Measurement> {
    // A notice sent earlier is already waiting; otherwise nothing comes and the wait is short.
    conn.stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .ok();
    match protocol::receive::<protocol::Ended>(&mut conn.reader) {
        Ok(ended) => Err(Error::Peer(format!(
            "{} ended the test early: {}",
            conn_peer(conn),
            ended.reason
        ))),
        Err(_) => Ok(measurement),
    }
}

fn conn_peer(conn: &Connection) -> String {
    conn.stream
        .peer_addr()
        .map_or_else(|_| "the server".to_string(), |a| a.to_string())
}

fn udp_socket(config: &ClientConfig, reply: &Reply) -> Result<(UdpSocket, [u8; SESSION_BYTES])> {
    let port = reply
        .udp_port
        .ok_or_else(|| Error::Peer("server gave no UDP port".into()))?;
    let session = hex::decode(reply.session.as_deref().unwrap_or_default())
        .ok()
        .and_then(|s| <[u8; SESSION_BYTES]>::try_from(s).ok())
        .ok_or_else(|| Error::Peer("server gave no valid UDP session".into()))?;
    let local: SocketAddr = if config.server.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    }
    .parse()
    .map_err(|_| Error::Peer("local address".into()))?;
    let socket = UdpSocket::bind(local).map_err(io_err("binding UDP"))?;
    socket
        .connect(SocketAddr::new(config.server.ip(), port))
        .map_err(io_err("UDP connect"))?;
    Ok((socket, session))
}

fn packet(size: usize, session: &[u8; SESSION_BYTES], seq: u64, stamp: u64) -> Vec<u8> {
    let mut p = vec![0u8; size.max(UDP_HEADER)];
    p[..SESSION_BYTES].copy_from_slice(session);
    p[SESSION_BYTES..SESSION_BYTES + 8].copy_from_slice(&seq.to_le_bytes());
    p[SESSION_BYTES + 8..UDP_HEADER].copy_from_slice(&stamp.to_le_bytes());
    p
}

fn read_u64(p: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(b)
}

fn udp_rtt(config: &ClientConfig, conn: &Connection, duration: Duration) -> Result<Measurement> {
    let (socket, session) = udp_socket(config, &conn.reply)?;
    socket
        .set_read_timeout(Some(Duration::from_millis(500)))
        .ok();
    let mut rtt = histogram();
    let mut reply = vec![0u8; config.size.max(UDP_HEADER)];
    let (mut seq, mut lost) = (0u64, 0u64);
    let mut round_trip = |seq: u64| -> Result<Option<u64>> {
        let t0 = Instant::now();
        socket
            .send(&packet(config.size, &session, seq, 0))
            .map_err(io_err("UDP send"))?;
        loop {
            match socket.recv(&mut reply) {
                // A late answer to an earlier, already counted-lost packet: skip it.
                Ok(n) if n >= UDP_HEADER && read_u64(&reply, SESSION_BYTES) != seq => continue,
                Ok(_) => return Ok(Some(t0.elapsed().as_nanos() as u64)),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(Error::Peer(format!("UDP receive: {e}"))),
            }
        }
    };
    let warm = Instant::now();
    while warm.elapsed() < config.warmup && !crate::interrupt::requested() {
        round_trip(seq)?;
        seq += 1;
    }
    let (started, mut done) = (Instant::now(), 0);
    while more(started, done, config, duration) && !crate::interrupt::requested() {
        match round_trip(seq)? {
            Some(ns) => rtt.saturating_record(ns),
            None => lost += 1,
        }
        seq += 1;
        done += 1;
    }
    Ok(Measurement::RoundTrips { rtt, lost })
}

/// Open loop: packets leave on a fixed schedule whatever the replies do, and each latency
/// counts from the packet's scheduled time, so a stall shows up in every packet it delays.
fn udp_rate(config: &ClientConfig, conn: &Connection, duration: Duration) -> Result<Measurement> {
    if config.rate == 0 {
        return Err(Error::Input("--rate must be at least 1 packet/s".into()));
    }
    let (socket, session) = udp_socket(config, &conn.reply)?;
    let receiver = socket.try_clone().map_err(io_err("UDP socket"))?;
    receiver
        .set_read_timeout(Some(Duration::from_millis(100)))
        .ok();
    let origin = Instant::now();
    let period_ns = 1_000_000_000 / config.rate;
    let total = config
        .count
        .unwrap_or(duration.as_nanos() as u64 / period_ns)
        .max(1);
    let done = std::sync::atomic::AtomicBool::new(false);
    let (latency, sent, received, duplicated, reordered) = std::thread::scope(|scope| {
        let listener = scope.spawn(|| {
            listen(
                &receiver,
                &session,
                (total, period_ns),
                config.size,
                origin,
                &done,
            )
        });
        let mut sent = 0;
        for seq in 0..total {
            if crate::interrupt::requested() {
                break;
            }
            let scheduled = seq * period_ns;
            wait_until(origin, scheduled);
            if socket
                .send(&packet(config.size, &session, seq, scheduled))
                .is_ok()
            {
                sent += 1;
            }
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        let (latency, received, duplicated, reordered) =
            listener.join().unwrap_or_else(|_| (histogram(), 0, 0, 0));
        (latency, sent, received, duplicated, reordered)
    });
    Ok(Measurement::Rate {
        latency,
        sent,
        received,
        duplicated,
        reordered,
    })
}

/// Sleeps most of the way to `scheduled` ns after `origin`, and spins the last 100 µs.
fn wait_until(origin: Instant, scheduled: u64) {
    loop {
        let left = scheduled.saturating_sub(origin.elapsed().as_nanos() as u64);
        match left {
            0 => break,
            l if l > 200_000 => std::thread::sleep(Duration::from_nanos(l - 100_000)),
            _ => std::hint::spin_loop(),
        }
    }
}

/// Receives the echoed packets of a rate test (`total` sent one per `period_ns`) until the
/// sender is `done` and every packet came back or half a second passed: their latencies and how many were received,
/// duplicated and reordered.
fn listen(
    receiver: &UdpSocket,
    session: &[u8],
    (total, period_ns): (u64, u64),
    size: usize,
    origin: Instant,
    done: &std::sync::atomic::AtomicBool,
) -> (Histogram<u64>, u64, u64, u64) {
    let mut latency = histogram();
    let mut seen = vec![false; total as usize];
    let (mut received, mut duplicated, mut reordered, mut highest) =
        (0u64, 0u64, 0u64, None::<u64>);
    let mut buf = vec![0u8; size.max(UDP_HEADER)];
    let mut grace: Option<Instant> = None;
    loop {
        if done.load(std::sync::atomic::Ordering::Acquire) {
            let g = *grace.get_or_insert_with(Instant::now);
            if g.elapsed() > Duration::from_millis(500) || received + duplicated >= total {
                break;
            }
        }
        let Ok(n) = receiver.recv(&mut buf) else {
            continue;
        };
        if n < UDP_HEADER || buf[..SESSION_BYTES] != *session {
            continue;
        }
        // When it was due comes from this side's schedule, never from the echo: a server
        // cannot make a packet look early or late.
        let seq = read_u64(&buf, SESSION_BYTES);
        let scheduled = seq.saturating_mul(period_ns);
        let now = origin.elapsed().as_nanos() as u64;
        match seen.get_mut(seq as usize) {
            Some(true) => duplicated += 1,
            Some(slot) => {
                *slot = true;
                received += 1;
                latency.saturating_record(now.saturating_sub(scheduled));
                if highest.is_some_and(|h| seq < h) {
                    reordered += 1;
                }
                highest = highest.max(Some(seq));
            }
            None => {}
        }
    }
    (latency, received, duplicated, reordered)
}

/// How long a server may accept nothing, or owe its report, before the client gives up.
const STALL: Duration = Duration::from_secs(5);
/// How often a blocked send looks up for Ctrl-C and the deadline.
const SEND_SLICE: Duration = Duration::from_millis(100);

/// Why sending stopped before all was sent.
enum Stop {
    Interrupted,
    /// The server accepted nothing for [`STALL`] (it stopped reading), or the deadline passed.
    Stalled,
    Failed(std::io::Error),
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Writes all of `data` in slices of [`SEND_SLICE`], so that Ctrl-C, a server that stopped
/// reading and the run's deadline each end the wait; what was written counts in `sent`.
fn send_all(
    stream: &mut TcpStream,
    mut data: &[u8],
    deadline: Option<Instant>,
    sent: &mut u64,
) -> std::result::Result<(), Stop> {
    let mut progress = Instant::now();
    while !data.is_empty() {
        match stream.write(data) {
            Ok(0) => return Err(Stop::Failed(std::io::ErrorKind::WriteZero.into())),
            Ok(n) => {
                data = &data[n..];
                *sent += n as u64;
                progress = Instant::now();
            }
            Err(e) if would_block(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Stop::Failed(e)),
        }
        if crate::interrupt::requested() {
            return Err(Stop::Interrupted);
        }
        if progress.elapsed() > STALL || deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Stop::Stalled);
        }
    }
    Ok(())
}

fn throughput(config: &ClientConfig, conn: Connection, duration: Duration) -> Result<Measurement> {
    let Connection {
        mut stream,
        mut reader,
        ..
    } = conn;
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "the server".into(), |a| a.to_string());
    stream.set_write_timeout(Some(SEND_SLICE)).ok();
    let chunk = vec![0x5au8; config.chunk];
    let started = Instant::now();
    // The server acknowledges the first chunk with one byte and reports at the end; read
    // both on the side while this thread writes.
    let (report_tx, report) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut ack = [0u8; 1];
        let read = reader.read_exact(&mut ack).and_then(|_| {
            let first_chunk = started.elapsed().as_nanos() as u64;
            protocol::receive::<Received>(&mut reader).map(|r| (first_chunk, r))
        });
        let _ = report_tx.send(read);
    });
    let sending = Sending { peer, started };
    let by_bytes = config.bytes;
    // A run by time ends at its duration; by bytes, only a stall ends it early.
    let deadline = by_bytes.is_none().then(|| started + duration + STALL);
    let t0 = Instant::now();
    let first_send_bytes = match stream.write(&chunk) {
        Ok(n) => n,
        Err(e) if would_block(&e) => 0,
        Err(e) => return Err(send_failed(e)),
    };
    let first_send_ns = t0.elapsed().as_nanos() as u64;
    let mut sent = first_send_bytes as u64;
    let mut stop = send_all(&mut stream, &chunk[first_send_bytes..], deadline, &mut sent).err();
    while stop.is_none()
        && !crate::interrupt::requested()
        && match by_bytes {
            Some(bytes) => sent < bytes,
            None => started.elapsed() < duration,
        }
    {
        let n = match by_bytes {
            Some(bytes) => (bytes - sent).min(config.chunk as u64) as usize,
            None => config.chunk,
        };
        stop = send_all(&mut stream, &chunk[..n], deadline, &mut sent).err();
    }
    match stop {
        Some(Stop::Failed(e)) => return Err(send_failed(e)),
        Some(Stop::Stalled) => {
            let _ = stream.shutdown(Shutdown::Both);
            return Err(Error::Peer(format!(
                "{} stopped reading: it accepted nothing for {} s, after {sent} bytes in {:.1} s",
                sending.peer,
                STALL.as_secs(),
                started.elapsed().as_secs_f64()
            )));
        }
        Some(Stop::Interrupted) | None => {}
    }
    let received = sending.report(&stream, &report, sent)?;
    Ok(Measurement::Throughput {
        first_chunk_ns: received.as_ref().map(|r| r.0),
        received: received.map(|r| r.1),
        first_send_ns,
        first_send_bytes,
        sent,
    })
}

/// The report a throughput test waits for, as the reading thread hands it over.
type Report = std::sync::mpsc::Receiver<std::io::Result<(u64, Received)>>;

/// A throughput test past its sending.
struct Sending {
    peer: String,
    started: Instant,
}

impl Sending {
    /// The server's report (when its first chunk was acknowledged, and what it received)
    /// once sending is over, checked; `None` when interrupted before it came.
    fn report(
        &self,
        stream: &TcpStream,
        report: &Report,
        sent: u64,
    ) -> Result<Option<(u64, Received)>> {
        let (peer, started) = (&self.peer, self.started);
        let interrupted = crate::interrupt::requested();
        let _ = stream.shutdown(Shutdown::Write);
        // Interrupted, the report is waited for briefly: the partial summary must not hang.
        let wait = if interrupted {
            Duration::from_secs(1)
        } else {
            STALL
        };
        Ok(match report.recv_timeout(wait) {
            Ok(Ok((first_chunk, received))) => {
                Some((first_chunk, plausible(peer, received, sent, started)?))
            }
            Ok(Err(e)) if !interrupted => {
                return Err(Error::Peer(format!(
                    "{peer} sent no report: {}",
                    if would_block(&e) {
                        "it did not answer in time".into()
                    } else {
                        e.to_string()
                    }
                )));
            }
            Err(_) if !interrupted => {
                let _ = stream.shutdown(Shutdown::Both);
                return Err(Error::Peer(format!(
                    "{peer} sent no report within {} s of the end of the test",
                    STALL.as_secs()
                )));
            }
            _ => {
                let _ = stream.shutdown(Shutdown::Both);
                crate::error::say_warning(&format!(
                    "interrupted before {peer} reported what it received: the figures are this \
                 side's only ({sent} bytes sent in {:.1} s)",
                    started.elapsed().as_secs_f64()
                ));
                None
            }
        })
    }
}

fn send_failed(e: std::io::Error) -> Error {
    Error::Peer(format!(
        "send: {e} (the server stops a test at its --max-bytes or --max-duration limit)"
    ))
}

/// The server's report, unless it cannot be true: more bytes than were sent, more timed
/// bytes than bytes, or longer receiving than the whole test took on this side.
fn plausible(peer: &str, received: Received, sent: u64, started: Instant) -> Result<Received> {
    let took_ns = started.elapsed().as_nanos() as u64;
    let wrong = if received.bytes > sent {
        Some(format!(
            "{} bytes received, but {sent} were sent",
            received.bytes
        ))
    } else if received.timed_bytes > received.bytes {
        Some(format!(
            "{} bytes timed of {} received",
            received.timed_bytes, received.bytes
        ))
    } else if received.duration_ns > took_ns {
        Some(format!(
            "{:.3} s of receiving, but the test took {:.3} s here",
            received.duration_ns as f64 / 1e9,
            took_ns as f64 / 1e9
        ))
    } else {
        None
    };
    match wrong {
        Some(what) => Err(Error::Peer(format!(
            "{peer} reports {what}: its figures cannot be right, so none are reported"
        ))),
        None => Ok(received),
    }
}
