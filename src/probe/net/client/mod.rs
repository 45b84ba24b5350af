//! The test client: handshake, then one of the four tests, measured on this side's clock.

use super::protocol::{self, Greeting, Received, Reply, Request, SESSION_BYTES, Test, UDP_HEADER};
use crate::error::{Error, Result};
use hdrhistogram::Histogram;
use std::io::{BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

mod throughput;

use throughput::throughput;

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
        /// Packets the rate planned within the duration (or --count).
        scheduled: u64,
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
            // A rate the sender cannot keep still ends at --duration: what it could not send
            // in time shows as sent against scheduled.
            let over = config.count.is_none() && origin.elapsed() >= duration;
            if crate::interrupt::requested() || over {
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
        scheduled: total,
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

/// A socket read or write that timed out rather than failed.
fn would_block(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
