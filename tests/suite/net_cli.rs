//! `latkit net`: every test on loopback, authentication, a bounded stress test of the server,
//! and client and server on two hosts (network namespaces joined by a veth pair).

use crate::common::{first_value, json_of, latkit, metric};
use predicates::prelude::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Network tests load both cores; they take turns.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static NET: Mutex<()> = Mutex::new(());
    NET.lock().unwrap_or_else(|p| p.into_inner())
}

fn bench(doc: &Value) -> &Value {
    &doc["runs"][0]["benchmarks"][0]
}

fn check_round_trips(doc: &Value, count: u64) {
    let b = bench(doc);
    let rtt = &metric(b, "rtt")["percentiles"];
    assert_eq!(rtt["count"], count);
    let half = &metric(b, "one_way_rtt_half")["percentiles"];
    let (p50, half50) = (rtt["p50"].as_f64().unwrap(), half["p50"].as_f64().unwrap());
    assert!(
        (half50 - p50 / 2.0).abs() <= p50 * 0.002 + 1.0,
        "{half50} vs {p50}"
    );
    for pair in ["min", "p50", "p90", "p99", "p99_9", "max"].windows(2) {
        assert!(rtt[pair[0]].as_f64() <= rtt[pair[1]].as_f64());
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn loopback_tcp_and_udp_round_trips() {
    let _turn = one_at_a_time();
    let doc = json_of(latkit().args([
        "net", "loopback", "--test", "tcp-rtt", "--count", "2000", "--warmup", "0.2", "--size",
        "256", "--format", "json",
    ]));
    assert_eq!(bench(&doc)["name"], "net/tcp-rtt/256B");
    check_round_trips(&doc, 2000);
    let doc = json_of(latkit().args([
        "net", "loopback", "--test", "udp-rtt", "--count", "2000", "--warmup", "0.2", "--format",
        "json",
    ]));
    assert_eq!(first_value(bench(&doc), "lost"), 0.0);
    check_round_trips(&doc, 2000);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn loopback_udp_rate_counts_every_packet() {
    let _turn = one_at_a_time();
    let doc = json_of(latkit().args([
        "net", "loopback", "--test", "udp-rate", "--rate", "2000", "--count", "3000", "--format",
        "json",
    ]));
    let b = bench(&doc);
    assert_eq!(first_value(b, "sent"), 3000.0);
    let (received, lost) = (first_value(b, "received"), first_value(b, "lost"));
    assert_eq!(received + lost, 3000.0);
    assert_eq!(first_value(b, "duplicated"), 0.0);
    assert_eq!(
        metric(b, "latency_from_schedule")["percentiles"]["count"].as_f64(),
        Some(received)
    );
    assert_eq!(first_value(b, "rate"), 2000.0);
    assert_eq!(first_value(b, "scheduled"), 3000.0);
    // A rate beyond what the sender keeps still ends at --duration, with a result that says
    // how far short it fell (it ran 8-10 s and ended with exit 6 and nothing).
    let doc = json_of(latkit().args([
        "net",
        "loopback",
        "--test",
        "udp-rate",
        "--rate",
        "1000000",
        "--duration",
        "1",
        "--format",
        "json",
    ]));
    let b = bench(&doc);
    assert_eq!(first_value(b, "scheduled"), 1_000_000.0);
    let sent = first_value(b, "sent");
    assert!(sent > 0.0 && sent <= 1_000_000.0, "{sent}");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn loopback_throughput_is_what_the_server_received() {
    let _turn = one_at_a_time();
    let doc = json_of(latkit().args([
        "net",
        "loopback",
        "--test",
        "tcp-throughput",
        "--bytes",
        "8MiB",
        "--chunk",
        "32KiB",
        "--format",
        "json",
    ]));
    let b = bench(&doc);
    assert_eq!(first_value(b, "bytes_sent"), 8.0 * 1048576.0);
    assert_eq!(first_value(b, "bytes_received"), 8.0 * 1048576.0);
    // One rate, labelled twice: decimal MB/s and binary MiB/s (each scaled to its unit and
    // back, so they may differ in the last bit).
    let (decimal, binary) = (
        first_value(b, "throughput"),
        first_value(b, "throughput_mib"),
    );
    assert!(
        (decimal - binary).abs() <= decimal * 1e-12,
        "{decimal} vs {binary}"
    );
    assert_eq!(metric(b, "throughput")["source_unit"], "MB/s");
    assert_eq!(metric(b, "throughput_mib")["source_unit"], "MiB/s");
    assert!(first_value(b, "throughput") > 0.0);
    assert!(first_value(b, "first_send_call") > 0.0);
    assert!(first_value(b, "first_send_call_bytes") <= 32768.0);
    let table = crate::common::stdout_of(latkit().args([
        "net",
        "loopback",
        "--test",
        "tcp-throughput",
        "--bytes",
        "4MiB",
    ]));
    assert!(
        table.contains("MiB/s") && table.contains("GB/s") || table.contains("MB/s"),
        "{table}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn tokens_are_proven_and_required_off_loopback() {
    let _turn = one_at_a_time();
    let doc = json_of(latkit().args([
        "net", "loopback", "--test", "tcp-rtt", "--count", "100", "--warmup", "0", "--token",
        "s3cret", "--format", "json",
    ]));
    check_round_trips(&doc, 100);
    latkit()
        .args(["net", "server", "--bind", "0.0.0.0:0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--token SECRET"));

    let mut server = Server::start(&["--bind", "127.0.0.1:0", "--token", "right"], None);
    latkit()
        .args([
            "net",
            "client",
            &server.addr,
            "--test",
            "tcp-rtt",
            "--count",
            "10",
        ])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("requires --token"));
    latkit()
        .args([
            "net",
            "client",
            &server.addr,
            "--test",
            "tcp-rtt",
            "--count",
            "10",
            "--token",
            "wrong",
        ])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("authentication failed"));
    latkit()
        .args([
            "net",
            "client",
            &server.addr,
            "--test",
            "udp-rtt",
            "--count",
            "10",
            "--warmup",
            "0",
            "--token",
            "right",
        ])
        .assert()
        .success();
    server.stop();
}

/// The secret kept off the command line: a server reads it from `--token-file`, clients from
/// `LATKIT_TOKEN` or the same file, and neither process's command line (`ps`) shows it.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn a_token_from_a_file_or_the_environment_stays_off_the_command_line() {
    use std::os::unix::fs::PermissionsExt;
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    // Trailing blanks an editor left, and a `\r`, are not the secret's.
    std::fs::write(&file, "file-s3cret  \r\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = file.to_str().unwrap();
    let mut server = Server::start(&["--bind", "127.0.0.1:0", "--token-file", file], None);
    let shown = std::fs::read(format!("/proc/{}/cmdline", server.child.id())).unwrap();
    assert!(!String::from_utf8_lossy(&shown).contains("file-s3cret"));
    let client = |token: &[&str], env: Option<&str>| {
        let mut cmd = latkit();
        cmd.args(["net", "client", &server.addr, "--test", "tcp-rtt"])
            .args(["--count", "10", "--warmup", "0"])
            .args(token)
            .env_remove("LATKIT_TOKEN");
        if let Some(value) = env {
            cmd.env("LATKIT_TOKEN", value);
        }
        cmd.assert()
    };
    client(&["--token-file", file], None).success();
    client(&[], Some("file-s3cret")).success();
    client(&[], Some("wrong"))
        .code(6)
        .stderr(predicate::str::contains("authentication failed"));
    // The command line wins over the environment, as it does everywhere.
    client(&["--token", "file-s3cret"], Some("wrong")).success();
    client(&[], None)
        .code(6)
        .stderr(predicate::str::contains("requires --token"));
    server.stop();
}

/// A `latkit net server` child; reads the address it listens on from its first line.
struct Server {
    child: Child,
    addr: String,
    /// What the server has logged so far, after its first line.
    log: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Server {
    fn start(args: &[&str], netns: Option<&str>) -> Server {
        let latkit = assert_cmd::cargo::cargo_bin("latkit");
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new(crate::common::peer("ip", "apt-get install iproute2"));
                c.args(["netns", "exec", ns]).arg(latkit);
                c
            }
            None => Command::new(latkit),
        };
        let mut child = cmd
            .args(["net", "server"])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split_whitespace()
            .find(|w| w.contains(':') && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        // Keep draining the log so the server never blocks on a full pipe.
        let mut stderr = child.stderr.take().unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut chunk) {
                kept.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        Server { child, addr, log }
    }

    /// The server's log after its first line, once it has stopped.
    fn stopped_log(&mut self) -> String {
        self.stop();
        // The drain thread reads to the end of the pipe the stopped server closed.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::sync::Arc::strong_count(&self.log) > 1 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        String::from_utf8_lossy(&self.log.lock().unwrap()).into_owned()
    }

    fn stop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn server_survives_garbage_vanishing_and_concurrent_clients() {
    let _turn = one_at_a_time();
    let mut server = Server::start(&["--bind", "127.0.0.1:0", "--max-clients", "32"], None);
    let started = Instant::now();
    // 200 garbage connections: random bytes, over-long lines, bad versions, or nothing at all.
    let garbage: Vec<std::thread::JoinHandle<()>> = (0..200)
        .map(|i| {
            let addr = server.addr.clone();
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(&addr) else { return };
                s.set_read_timeout(Some(Duration::from_secs(2))).ok();
                let payload: Vec<u8> = match i % 4 {
                    0 => (0..512).map(|b| (b * 7 + i) as u8).collect(),
                    1 => vec![b'{'; 10_000],
                    2 => b"{\"version\":99,\"test\":\"tcp-rtt\",\"size\":64,\"duration_ms\":10,\"nonce\":\"00\"}\n".to_vec(),
                    _ => Vec::new(), // connect and vanish
                };
                let _ = s.write_all(&payload);
                if i % 8 == 3 {
                    let mut buf = [0u8; 256];
                    let _ = s.read(&mut buf);
                }
            })
        })
        .collect();
    // 16 real clients at once, alongside the garbage.
    let clients: Vec<std::thread::JoinHandle<bool>> = (0..16)
        .map(|i| {
            let addr = server.addr.clone();
            std::thread::spawn(move || {
                let test = if i % 2 == 0 { "tcp-rtt" } else { "udp-rtt" };
                latkit()
                    .args([
                        "net", "client", &addr, "--test", test, "--count", "200", "--warmup", "0",
                        "--format", "json",
                    ])
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
        })
        .collect();
    for g in garbage {
        g.join().unwrap();
    }
    let ok = clients
        .into_iter()
        .map(|c| c.join().unwrap_or(false))
        .filter(|ok| *ok)
        .count();
    assert_eq!(ok, 16, "every concurrent client completes");
    // Afterwards a normal client still gets correct results.
    let doc = json_of(latkit().args([
        "net",
        "client",
        &server.addr,
        "--test",
        "tcp-rtt",
        "--count",
        "500",
        "--warmup",
        "0",
        "--format",
        "json",
    ]));
    check_round_trips(&doc, 500);
    assert!(started.elapsed() < Duration::from_secs(120), "bounded");
    server.stop();
}

/// `latkit net client ADDR --test tcp-rtt --count COUNT --warmup 0`.
fn tcp_rtt(addr: &str, count: u32) -> assert_cmd::Command {
    let mut cmd = latkit();
    cmd.args(["net", "client", addr, "--test", "tcp-rtt", "--count"])
        .arg(count.to_string())
        .args(["--warmup", "0"]);
    cmd
}

/// A flood of connections that drop their handshake is logged a line a second with a count,
/// not a line each (11,000 such connections logged 11,220 lines).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback; `--features interop` runs it"
)]
fn a_flood_of_dropped_handshakes_is_counted_not_logged_one_by_one() {
    let _turn = one_at_a_time();
    let mut server = Server::start(&["--bind", "127.0.0.1:0"], None);
    for _ in 0..2_000 {
        drop(TcpStream::connect(&server.addr).unwrap());
    }
    // A client that completes is still logged, after the flood.
    tcp_rtt(&server.addr, 50).assert().success();
    let log = server.stopped_log();
    let lines = log.lines().count();
    assert!(lines < 60, "{lines} lines:\n{log}");
    assert!(log.contains("more like"), "{log}");
    assert!(log.contains("tcp-rtt") && log.contains("done"), "{log}");
}

/// Two network namespaces joined by a veth pair, removed when dropped.
struct TwoHosts {
    a: String,
    b: String,
}

impl TwoHosts {
    fn create() -> TwoHosts {
        let id = std::process::id();
        let (a, b) = (format!("latkit-a-{id}"), format!("latkit-b-{id}"));
        // What `ip` said is the failure's reason: it goes into the assertion, not around it.
        let ip = |args: &[&str]| {
            let out = Command::new(crate::common::peer("ip", "apt-get install iproute2"))
                .args(args)
                .output()
                .expect("iproute2 is installed");
            assert!(
                out.status.success(),
                "ip {}: {} (network namespaces need root)",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        };
        let hosts = TwoHosts {
            a: a.clone(),
            b: b.clone(),
        };
        ip(&["netns", "add", &a]);
        ip(&["netns", "add", &b]);
        let (va, vb) = (format!("lka{}", id % 100000), format!("lkb{}", id % 100000));
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
        ip(&["link", "set", &va, "netns", &a]);
        ip(&["link", "set", &vb, "netns", &b]);
        ip(&["-n", &a, "addr", "add", "10.199.0.1/24", "dev", &va]);
        ip(&["-n", &b, "addr", "add", "10.199.0.2/24", "dev", &vb]);
        for (ns, dev) in [(&a, &va), (&b, &vb)] {
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        hosts
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new(crate::common::peer("ip", "apt-get install iproute2"))
                .args(["netns", "del", ns])
                .status();
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn client_and_server_on_two_hosts() {
    let _turn = one_at_a_time();
    let hosts = TwoHosts::create();
    let latkit_bin = assert_cmd::cargo::cargo_bin("latkit");
    // Off loopback the server insists on a token.
    let refused = Command::new(crate::common::peer("ip", "apt-get install iproute2"))
        .args(["netns", "exec", &hosts.a])
        .arg(&latkit_bin)
        .args(["net", "server", "--bind", "10.199.0.1:47000"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let mut server = Server::start(
        &["--bind", "10.199.0.1:47000", "--token", "two-hosts"],
        Some(&hosts.a),
    );
    assert_eq!(server.addr, "10.199.0.1:47000");
    for test in ["tcp-rtt", "udp-rtt"] {
        let out = Command::new(crate::common::peer("ip", "apt-get install iproute2"))
            .args(["netns", "exec", &hosts.b])
            .arg(&latkit_bin)
            .args([
                "net",
                "client",
                "10.199.0.1:47000",
                "--test",
                test,
                "--count",
                "300",
                "--warmup",
                "0",
                "--token",
                "two-hosts",
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        check_round_trips(&doc, 300);
        assert_eq!(doc["runs"][0]["config"][0]["value"], "10.199.0.1:47000");
    }
    let out = Command::new(crate::common::peer("ip", "apt-get install iproute2"))
        .args(["netns", "exec", &hosts.b])
        .arg(&latkit_bin)
        .args([
            "net",
            "client",
            "10.199.0.1:47000",
            "--test",
            "tcp-throughput",
            "--bytes",
            "4MiB",
            "--token",
            "two-hosts",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(first_value(bench(&doc), "bytes_received"), 4.0 * 1048576.0);
    server.stop();
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn interrupted_client_reports_what_it_measured_and_exits_130() {
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("net.json");
    let child = Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .args([
            "net",
            "loopback",
            "--test",
            "tcp-rtt",
            "--duration",
            "60",
            "--warmup",
            "0",
            "--format",
            "json",
            "--out",
        ])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    crate::common::interrupt_expecting_130(child);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let count = metric(bench(&doc), "rtt")["percentiles"]["count"]
        .as_u64()
        .unwrap();
    assert!(count > 0, "measured before the interrupt");
}

/// Opens the control connection by hand: reads the greeting, sends `request` (JSON without the
/// version and nonce), and returns the stream, a reader on it and the server's reply.
fn handshake_by_hand(addr: &str, request: &str) -> (TcpStream, BufReader<TcpStream>, Value) {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut greeting = String::new();
    reader.read_line(&mut greeting).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writeln!(writer, "{{\"version\":1,\"nonce\":\"00\",{request}}}").unwrap();
    let mut reply = String::new();
    reader.read_line(&mut reply).unwrap();
    (stream, reader, serde_json::from_str(&reply).unwrap())
}

/// Waits (at most `limit`) for the server to close `stream`, trickling one byte every 200 ms.
fn closed_while_trickling(stream: &mut TcpStream, limit: Duration) -> bool {
    crate::common::interop_only("closed_while_trickling");
    stream.set_nonblocking(true).unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 64];
    while started.elapsed() < limit {
        if stream.write_all(b"x").is_err() {
            return true;
        }
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return true,
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn slow_handshakes_neither_lock_out_clients_nor_live_forever() {
    let _turn = one_at_a_time();
    let server = Server::start(&["--bind", "127.0.0.1:0", "--max-clients", "4"], None);
    // Six connections that send a byte every 200 ms and never finish their request.
    let mut slow: Vec<TcpStream> = (0..6)
        .map(|_| {
            let s = TcpStream::connect(&server.addr).unwrap();
            s.set_nodelay(true).unwrap();
            s
        })
        .collect();
    for s in &mut slow {
        s.write_all(b"{").unwrap();
    }
    // They hold no client slot: a real client is served at once.
    tcp_rtt(&server.addr, 100).assert().success();
    // The whole handshake has one deadline (5 s): trickling does not extend it.
    assert!(
        closed_while_trickling(&mut slow[0], Duration::from_secs(20)),
        "a handshake trickling a byte at a time was never closed"
    );
}

/// More idle connections than the server keeps handshakes for (256) never keep a good client
/// out: the oldest pending handshake makes room for a new one.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn idle_connections_beyond_the_handshake_slots_never_lock_out_a_client() {
    let _turn = one_at_a_time();
    let server = Server::start(&["--bind", "127.0.0.1:0"], None);
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    for attempt in 0..5 {
        let out = latkit()
            .args(["net", "client", &server.addr, "--test", "tcp-rtt"])
            .args(["--count", "20", "--warmup", "0", "-q"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "attempt {attempt} with {} idle connections held: {}",
            idle.len(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn max_duration_holds_against_a_trickling_client() {
    let _turn = one_at_a_time();
    let server = Server::start(&["--bind", "127.0.0.1:0", "--max-duration", "2"], None);
    // An authenticated tcp-rtt client that sends its 1 MiB message a byte at a time.
    let (mut stream, _reader, reply) = handshake_by_hand(
        &server.addr,
        "\"test\":\"tcp-rtt\",\"size\":1048576,\"duration_ms\":600000",
    );
    assert_eq!(reply["ok"], true, "{reply}");
    assert!(
        closed_while_trickling(&mut stream, Duration::from_secs(20)),
        "--max-duration 2 did not end a trickling test"
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn udp_replies_go_only_to_the_sessions_address_and_port() {
    let _turn = one_at_a_time();
    let server = Server::start(&["--bind", "127.0.0.1:0"], None);
    let (_stream, _reader, reply) = handshake_by_hand(
        &server.addr,
        "\"test\":\"udp-rtt\",\"size\":64,\"duration_ms\":10000",
    );
    let port = reply["udp_port"].as_u64().unwrap() as u16;
    let session = hex::decode(reply["session"].as_str().unwrap()).unwrap();
    let mut datagram = session.clone();
    datagram.resize(64, 0);
    let target = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let answered = |socket: &std::net::UdpSocket| {
        socket
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        socket.send_to(&datagram, target).unwrap();
        let mut buf = [0u8; 128];
        socket.recv(&mut buf).is_ok()
    };
    let first = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let other_port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    assert!(answered(&first), "the session's first address is answered");
    assert!(
        !answered(&other_port),
        "the same IP from another port is not"
    );
    assert!(answered(&first));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn a_udp_test_cut_by_the_server_reports_why_and_fails() {
    let _turn = one_at_a_time();
    let server = Server::start(&["--bind", "127.0.0.1:0", "--max-duration", "1"], None);
    latkit()
        .args([
            "net",
            "client",
            &server.addr,
            "--test",
            "udp-rtt",
            "--duration",
            "3",
            "--warmup",
            "0",
        ])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("ended the test early"))
        .stderr(predicate::str::contains("time limit (1 s)"));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn accept_errors_back_off_instead_of_flooding_the_log() {
    let _turn = one_at_a_time();
    // Few file descriptors: accepting fails (EMFILE) while connections keep arriving.
    let mut child = Command::new(crate::common::peer("prlimit", "apt-get install util-linux"))
        .arg("--nofile=24:24")
        .arg(assert_cmd::cargo::cargo_bin("latkit"))
        .args(["net", "server", "--bind", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) is installed");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let addr = first
        .split_whitespace()
        .find(|w| w.starts_with("127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let held: Vec<TcpStream> = (0..40)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let mut log = String::new();
    stderr.read_to_string(&mut log).unwrap();
    let _ = child.wait();
    drop(held);
    // Accepts and the clients accepted between failures run out alike; either way the log
    // hears about it about once a second, not once per connection.
    let exhausted = log
        .lines()
        .filter(|l| l.contains("Too many open files"))
        .count();
    assert!(exhausted >= 1, "the failure is reported: {log}");
    assert!(exhausted <= 5, "{exhausted} lines in 2 s:\n{log}");
}

/// A fake latkit server on loopback: it greets, accepts any request, then does what `then`
/// says with the connection (after the client's request line was read).
fn fake_server(then: impl FnOnce(TcpStream, BufReader<TcpStream>) + Send + 'static) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        writeln!(
            stream,
            "{{\"proto\":\"latkit-net\",\"version\":1,\"nonce\":\"00\",\"auth\":false}}"
        )
        .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request = String::new();
        reader.read_line(&mut request).unwrap();
        writeln!(stream, "{{\"ok\":true}}").unwrap();
        then(stream, reader);
    });
    addr
}

/// A server that accepts the throughput test and never reads a byte: the client gives up
/// within its duration and a stall, says so, and exits 1 (before: it waited forever).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn a_server_that_stops_reading_cannot_hang_the_client() {
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let addr = fake_server(move |_stream, _reader| {
        let _ = done_rx.recv_timeout(Duration::from_secs(30));
    });
    let started = Instant::now();
    let out = latkit()
        .args(["net", "client", &addr, "--test", "tcp-throughput"])
        .args(["--duration", "1"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    drop(done_tx);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(stderr.contains("stopped reading"), "{stderr}");
    assert!(!stderr.contains("os error 11"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// Ctrl-C while the server does not read: the client's own figures, a word on why the
/// server's are missing, and exit 130.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn ctrl_c_against_a_server_that_stopped_reading_gives_the_partial_summary() {
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let addr = fake_server(move |_stream, _reader| {
        let _ = done_rx.recv_timeout(Duration::from_secs(30));
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("net.json");
    let child = Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .args(["net", "client", &addr, "--test", "tcp-throughput"])
        .args(["--duration", "30", "--format", "json", "--out"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let stderr = crate::common::interrupt_expecting_130(child);
    drop(done_tx);
    assert!(stderr.contains("figures are this side's only"), "{stderr}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(first_value(bench(&doc), "bytes_sent") > 0.0);
    // The report says it too, beside the figures it explains.
    let notes = doc["notes"].to_string();
    assert!(notes.contains("figures are this side's only"), "{notes}");
}

/// A server reporting more bytes than were sent is refused, not printed as a rate.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn impossible_figures_from_the_server_are_refused() {
    let addr = fake_server(|mut stream, mut reader| {
        let mut sink = [0u8; 65536];
        let mut acked = false;
        while let Ok(n) = reader.read(&mut sink) {
            if n == 0 {
                break;
            }
            if !acked {
                stream.write_all(b"\x01").unwrap();
                acked = true;
            }
        }
        let lie = "{\"bytes\":18446744073709551615,\"timed_bytes\":1,\"duration_ns\":1}";
        writeln!(stream, "{lie}").unwrap();
    });
    let out = latkit()
        .args(["net", "client", &addr, "--test", "tcp-throughput"])
        .args(["--bytes", "1MiB"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(stderr.contains("cannot be right"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("MB/s"));
}

#[test]
fn a_chunk_of_nothing_is_a_usage_error() {
    latkit()
        .args([
            "net",
            "loopback",
            "--test",
            "tcp-throughput",
            "--chunk",
            "0",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--chunk"));
}

/// `net loopback` with no `--test` runs the usual three, as a user trying it expects, and
/// throughput sends for the duration as iperf3 does (10 MiB took milliseconds on loopback).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real sockets on loopback, timed; `--features interop` runs it"
)]
fn net_defaults_run_round_trips_and_throughput_by_time() {
    let doc = json_of(latkit().args([
        "net",
        "loopback",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--format",
        "json",
        "-q",
    ]));
    let names: Vec<String> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["benchmarks"][0]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "net/tcp-rtt/64B",
            "net/udp-rtt/64B",
            "net/tcp-throughput/65536B-chunks"
        ]
    );
    let throughput = &doc["runs"][2]["benchmarks"][0];
    let sent = crate::common::first_value(throughput, "bytes_sent");
    assert!(
        sent > 10.0 * 1048576.0,
        "one second sends more than 10 MiB: {sent}"
    );
}
