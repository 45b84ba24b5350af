//! latkit's network test protocol, version 1.
//!
//! Over TCP, one JSON object per line:
//! 1. server → `Greeting { proto, version, nonce, auth }`
//! 2. client → `Request { version, test, size, …, nonce, proof }`
//! 3. server → `Reply { ok, error, proof, udp_port, session }`
//!
//! With a token, each side proves it knows it without sending it: the client's proof is
//! HMAC-SHA256(token, "client" ‖ server nonce ‖ client nonce), the server's the same with
//! "server" and the nonces swapped. Then the test runs: TCP tests on the same connection, UDP
//! tests on the server's UDP port with datagrams that start with the 8-byte session id, which
//! is the only thing that makes the server answer a datagram.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::io::{self, BufRead, Read, Write};

pub const PROTO: &str = "latkit-net";
pub const VERSION: u32 = 1;
/// A handshake line longer than this is garbage.
pub const MAX_LINE: usize = 4096;
pub const SESSION_BYTES: usize = 8;
/// UDP datagrams carry session id, sequence number and send time.
pub const UDP_HEADER: usize = SESSION_BYTES + 8 + 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// TCP ping-pong of --size bytes.
    TcpRtt,
    /// UDP ping-pong of --size bytes.
    UdpRtt,
    /// UDP at a fixed --rate: latency from each packet's scheduled send time.
    UdpRate,
    /// Bulk TCP transfer: throughput as delivered to the server.
    TcpThroughput,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::TcpRtt => "tcp-rtt",
            Test::UdpRtt => "udp-rtt",
            Test::UdpRate => "udp-rate",
            Test::TcpThroughput => "tcp-throughput",
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Greeting {
    pub proto: String,
    pub version: u32,
    pub nonce: String,
    pub auth: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub version: u32,
    pub test: Test,
    /// Message size for RTT tests, chunk size for throughput.
    pub size: usize,
    /// Upper bound the client intends to run for (the server enforces its own limit).
    pub duration_ms: u64,
    /// Bytes the client intends to send (throughput).
    #[serde(default)]
    pub bytes: u64,
    pub nonce: String,
    #[serde(default)]
    pub proof: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// What the server says after a throughput test, measured on its own clock.
/// Sent by the server on the control connection when it ends a test early.
#[derive(Debug, Serialize, Deserialize)]
pub struct Ended {
    pub reason: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Received {
    pub bytes: u64,
    /// Bytes that arrived after the first read, which starts the clock.
    pub timed_bytes: u64,
    /// From the first read to the last.
    pub duration_ns: u64,
}

pub fn nonce() -> String {
    let mut bytes = [0u8; 16];
    // The OS random source only fails on a broken system; a zero nonce still works, just
    // without replay protection.
    let _ = getrandom::fill(&mut bytes);
    hex::encode(bytes)
}

pub fn session_id() -> [u8; SESSION_BYTES] {
    let mut bytes = [0u8; SESSION_BYTES];
    let _ = getrandom::fill(&mut bytes);
    bytes
}

/// HMAC-SHA256 keyed with the token over role ‖ first nonce ‖ second nonce.
fn mac(token: &str, role: &str, first: &str, second: &str) -> Hmac<Sha256> {
    // HMAC accepts keys of any length.
    let mut mac =
        Hmac::<Sha256>::new_from_slice(token.as_bytes()).expect("HMAC takes any key length");
    mac.update(role.as_bytes());
    mac.update(first.as_bytes());
    mac.update(second.as_bytes());
    mac
}

/// The proof of knowing `token`, hex.
pub fn proof(token: &str, role: &str, first: &str, second: &str) -> String {
    hex::encode(mac(token, role, first, second).finalize().into_bytes())
}

/// Checks a proof in constant time.
pub fn verify(token: &str, role: &str, first: &str, second: &str, claimed: &str) -> bool {
    hex::decode(claimed).is_ok_and(|claimed| {
        mac(token, role, first, second)
            .verify_slice(&claimed)
            .is_ok()
    })
}

pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads one message line, refusing lines longer than [`MAX_LINE`].
pub fn receive<T: for<'de> Deserialize<'de>>(input: &mut impl BufRead) -> io::Result<T> {
    let mut line = Vec::new();
    let read = input
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if read == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed during the handshake",
        ));
    }
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "handshake line too long or cut off",
        ));
    }
    serde_json::from_slice(&line).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad handshake message: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_bind_role_token_and_nonces() {
        let p = proof("s3cret", "client", "aa", "bb");
        assert!(verify("s3cret", "client", "aa", "bb", &p));
        assert!(!verify("other", "client", "aa", "bb", &p));
        assert!(!verify("s3cret", "server", "aa", "bb", &p));
        assert!(!verify("s3cret", "client", "bb", "aa", &p));
        assert!(!verify("s3cret", "client", "aa", "bb", "zz"));
        assert_ne!(nonce(), nonce());
    }

    #[test]
    fn messages_round_trip_and_garbage_is_refused() {
        let mut buf = Vec::new();
        send(
            &mut buf,
            &Reply {
                ok: true,
                udp_port: Some(9),
                ..Reply::default()
            },
        )
        .unwrap();
        let back: Reply = receive(&mut buf.as_slice()).unwrap();
        assert_eq!(back.udp_port, Some(9));
        assert!(receive::<Reply>(&mut &b"not json\n"[..]).is_err());
        assert!(receive::<Reply>(&mut &vec![b'x'; MAX_LINE + 10][..]).is_err());
        assert!(receive::<Reply>(&mut &b""[..]).is_err());
    }
}
