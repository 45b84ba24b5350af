use super::probe::{probe_report, probe_sinks, with_progress};
use crate::cli::{NetArgs, NetMode, NetTestArgs};
use crate::error::{Error, Result};
use crate::probe::net::client::ClientConfig;
use crate::probe::net::protocol::Test;
use crate::probe::net::server::{Server, ServerConfig};
use crate::probe::net::{loopback, measure};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

fn address(text: &str) -> Result<SocketAddr> {
    text.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            Error::Input(format!(
                "`{text}` is not an address (expected ADDR:PORT, e.g. 127.0.0.1:47000)"
            ))
        })
}

fn seconds(what: &str, s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| Error::Input(format!("{what} must be a number of seconds ≥ 0")))
}

/// An empty secret proves nothing: refuse it rather than count it as a token.
fn token(token: &Option<String>) -> Result<Option<String>> {
    match token.as_deref() {
        Some("") => Err(Error::Input("--token must not be empty".into())),
        _ => Ok(token.clone()),
    }
}

fn client_config(server: SocketAddr, args: &NetTestArgs) -> Result<ClientConfig> {
    let test: Test = args.test.into();
    if test != Test::TcpThroughput && !(24..=65_000).contains(&args.size) && test != Test::TcpRtt {
        return Err(Error::Input(
            "--size for UDP tests must be 24 to 65000 bytes (24 carry the header)".into(),
        ));
    }
    if args.size == 0 || args.size > 1 << 20 {
        return Err(Error::Input("--size must be 1 B to 1 MiB".into()));
    }
    Ok(ClientConfig {
        server,
        test,
        size: args.size as usize,
        duration: args
            .duration
            .map(|d| seconds("--duration", d))
            .transpose()?,
        count: args.count,
        warmup: seconds("--warmup", args.warmup)?,
        rate: args.rate,
        bytes: args.bytes,
        chunk: (args.chunk as usize).clamp(1, 1 << 20),
        token: token(&args.token)?,
    })
}

/// A test stopped by Ctrl-C reports what it measured, then exits 130.
fn interrupted_is_130() -> Result<()> {
    match crate::interrupt::requested() {
        true => Err(Error::Interrupted),
        false => Ok(()),
    }
}

pub fn run(args: NetArgs) -> Result<()> {
    crate::interrupt::install();
    match args.mode {
        NetMode::Server(s) => {
            let server = Server::bind(ServerConfig {
                bind: address(&s.bind)?,
                token: token(&s.token)?,
                insecure: s.insecure,
                max_clients: s.max_clients as usize,
                max_duration: Duration::from_secs(s.max_duration),
                max_bytes: s.max_bytes,
            })?;
            crate::error::say(&format!(
                "latkit net server listening on {} (TCP and UDP)",
                server.local_addr()
            ));
            server.serve(crate::error::say)?;
            Err(Error::Interrupted)
        }
        NetMode::Client(c) => {
            let config = client_config(address(&c.server)?, &c.test)?;
            let sinks = probe_sinks(&c.test.output)?;
            let run = with_progress(
                &format!("{} to {}", config.test.name(), config.server),
                c.test.output.quiet,
                || measure(&config),
            )?;
            probe_report(run, &c.test.output, sinks)?;
            interrupted_is_130()
        }
        NetMode::Loopback(t) => {
            let placeholder: SocketAddr = "127.0.0.1:0".parse().expect("a valid literal address");
            let config = client_config(placeholder, &t)?;
            let sinks = probe_sinks(&t.output)?;
            let what = format!("{} on loopback", config.test.name());
            let token = config.token.clone();
            let run = with_progress(&what, t.output.quiet, || loopback(config, token))?;
            probe_report(run, &t.output, sinks)?;
            interrupted_is_130()
        }
    }
}
