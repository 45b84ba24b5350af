//! `tcp-throughput`'s sending side: chunks written in slices, so that Ctrl-C, a server that
//! stopped reading and the deadline each end the wait, then the server's report, refused when
//! it cannot be true.

use super::*;

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

pub(super) fn throughput(
    config: &ClientConfig,
    conn: Connection,
    duration: Duration,
) -> Result<Measurement> {
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
