use super::choices::NetTestArg;
use clap::{Args, Subcommand};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(subcommand)]
    pub mode: NetMode,
}

#[derive(Debug, Subcommand)]
pub enum NetMode {
    /// Serve tests to latkit clients (loopback only unless told otherwise).
    Server(NetServerArgs),
    /// Run a test against a latkit server.
    Client(NetClientArgs),
    /// Run a test against a server started in this process on an ephemeral loopback port.
    Loopback(NetTestArgs),
}

/// A byte size: `65536`, `64KiB`, `10 MiB`, `1GB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    use crate::model::Dimension;
    let size = crate::model::parse_quantity(text).filter(|(bytes, unit)| {
        let is_size = match &unit.dimension {
            Dimension::Bytes => true,
            Dimension::Count(what) => what.is_empty(),
            _ => false,
        };
        is_size && unit.per.is_none() && *bytes >= 0.0
    });
    size.map(|(bytes, _)| bytes as u64)
        .ok_or_else(|| format!("`{text}` is not a size (expected e.g. 64KiB, 10MiB, 1GB, 65536)"))
}

/// A write size for tcp-throughput: at least a byte, at most what one write sends whole.
fn chunk_size(text: &str) -> Result<u64, String> {
    let bytes = parse_size(text)?;
    match bytes {
        1..=0x10_0000 => Ok(bytes),
        _ => Err(format!("`{text}`: a chunk is 1 B to 1 MiB")),
    }
}

#[derive(Debug, Args)]
pub struct NetServerArgs {
    /// Address to listen on (TCP and UDP). Anything but loopback needs --token or --insecure.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:47000",
          value_parser = address)]
    pub bind: SocketAddr,
    #[command(flatten)]
    pub token: TokenArgs,
    /// Allow a non-loopback bind without a token.
    #[arg(long)]
    pub insecure: bool,
    /// Clients served at once; more are turned away.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_clients: u32,
    /// Longest test a client may run, in seconds.
    #[arg(long, value_name = "S", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
    pub max_duration: u64,
    /// Most bytes one throughput test may send.
    #[arg(long, value_name = "SIZE", default_value = "10GiB", value_parser = parse_size)]
    pub max_bytes: u64,
}

#[derive(Debug, Args)]
pub struct NetClientArgs {
    /// The server, ADDR:PORT.
    #[arg(value_name = "ADDR:PORT", value_parser = address)]
    pub server: SocketAddr,
    #[command(flatten)]
    pub test: NetTestArgs,
}

#[derive(Debug, Args)]
pub struct NetTestArgs {
    /// The tests to run, one after the other (repeatable, or comma-separated) [default:
    /// tcp-rtt,udp-rtt,tcp-throughput].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "TEST")]
    pub test: Vec<NetTestArg>,
    /// Message size for the RTT and rate tests.
    #[arg(long, value_name = "SIZE", default_value = "64", value_parser = parse_size)]
    pub size: u64,
    /// Seconds to measure each test [default: 5].
    #[arg(long, value_name = "S", value_parser = super::seconds)]
    pub duration: Option<f64>,
    /// Round trips or packets to measure instead of a duration.
    #[arg(long, value_name = "N", conflicts_with = "duration",
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub count: Option<u64>,
    /// Seconds of unrecorded round trips first.
    #[arg(long, value_name = "S", default_value_t = 1.0, value_parser = super::seconds)]
    pub warmup: f64,
    /// Packets per second for udp-rate.
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub rate: u64,
    /// Send this many bytes for tcp-throughput instead of sending for the duration.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, conflicts_with = "duration")]
    pub bytes: Option<u64>,
    /// Write size for tcp-throughput (1 B to 1 MiB).
    #[arg(long, value_name = "SIZE", default_value = "64KiB", value_parser = chunk_size)]
    pub chunk: u64,
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

/// The shared secret server and clients prove they know (never sent in the clear): from a
/// file, the command line or `LATKIT_TOKEN`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// Shared secret the server requires and clients prove they know. Other users see a
    /// command line (`ps`): prefer --token-file or LATKIT_TOKEN.
    #[arg(long, value_name = "SECRET", value_parser = secret)]
    pub token: Option<String>,
    /// Read the shared secret from FILE (its first line; keep it mode 600) [default:
    /// LATKIT_TOKEN when set].
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<std::path::PathBuf>,
}

impl From<TokenArgs> for crate::commands::Token {
    fn from(args: TokenArgs) -> Self {
        use crate::commands::Token;
        match (args.token, args.token_file) {
            (Some(token), _) => Token::Given(token),
            (None, Some(file)) => Token::File(file),
            (None, None) => Token::FromEnvironment,
        }
    }
}

/// `ADDR:PORT`, resolved once.
fn address(text: &str) -> Result<SocketAddr, String> {
    text.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            format!("`{text}` is not an address (expected ADDR:PORT, e.g. 127.0.0.1:47000)")
        })
}

/// An empty secret proves nothing: refuse it rather than count it as a token.
fn secret(text: &str) -> Result<String, String> {
    match text {
        "" => Err("the token must not be empty".into()),
        _ => Ok(text.to_string()),
    }
}

impl From<NetMode> for crate::commands::NetMode {
    fn from(mode: NetMode) -> Self {
        use crate::commands::NetMode as M;
        match mode {
            NetMode::Server(s) => M::Server(
                crate::probe::net::server::ServerConfig {
                    bind: s.bind,
                    token: None,
                    insecure: s.insecure,
                    max_clients: s.max_clients as usize,
                    max_duration: Duration::from_secs(s.max_duration),
                    max_bytes: s.max_bytes,
                },
                s.token.into(),
            ),
            NetMode::Client(c) => M::Client(c.test.into_test(c.server)),
            // The probe replaces the address with its own server's.
            NetMode::Loopback(t) => M::Loopback(t.into_test(SocketAddr::from(([127, 0, 0, 1], 0)))),
        }
    }
}

impl NetTestArgs {
    fn into_test(self, server: SocketAddr) -> crate::commands::NetTest {
        let tests = match self.test.is_empty() {
            true => vec![
                crate::probe::net::protocol::Test::TcpRtt,
                crate::probe::net::protocol::Test::UdpRtt,
                crate::probe::net::protocol::Test::TcpThroughput,
            ],
            false => self.test.into_iter().map(Into::into).collect(),
        };
        crate::commands::NetTest {
            tests,
            client: crate::probe::net::client::ClientConfig {
                server,
                test: crate::probe::net::protocol::Test::TcpRtt,
                size: self.size as usize,
                // Both are checked seconds from 0 to a day.
                duration: self.duration.map(Duration::from_secs_f64),
                count: self.count,
                warmup: Duration::from_secs_f64(self.warmup),
                rate: self.rate,
                bytes: self.bytes,
                chunk: self.chunk as usize,
                token: None,
            },
            token: self.token.into(),
            output: self.output.into(),
        }
    }
}
