use super::Output;
use super::probe::{probe_report, probe_sinks, with_progress};
use crate::error::{Error, Result};
use crate::probe::net::client::ClientConfig;
use crate::probe::net::protocol::Test;
use crate::probe::net::server::{Server, ServerConfig};
use crate::probe::net::{loopback, measure};

/// Which side of a network test this process plays.
pub enum NetMode {
    /// Serve tests to latkit clients until interrupted.
    Server(ServerConfig),
    /// Run a test against `test.client.server`.
    Client(NetTest),
    /// Run a test against a server started in this process on an ephemeral loopback port
    /// (`test.client.server` is replaced by it).
    Loopback(NetTest),
}

/// A client's test and where its report goes.
pub struct NetTest {
    pub client: ClientConfig,
    pub output: Output,
}

/// Refuses message sizes the test cannot carry.
fn check_size(config: &ClientConfig) -> Result<()> {
    let test = config.test;
    if test != Test::TcpThroughput && !(24..=65_000).contains(&config.size) && test != Test::TcpRtt
    {
        return Err(Error::Input(
            "--size for UDP tests must be 24 to 65000 bytes (24 carry the header)".into(),
        ));
    }
    if config.size == 0 || config.size > 1 << 20 {
        return Err(Error::Input("--size must be 1 B to 1 MiB".into()));
    }
    Ok(())
}

/// A test stopped by Ctrl-C reports what it measured, then exits 130.
fn interrupted_is_130() -> Result<()> {
    match crate::interrupt::requested() {
        true => Err(Error::Interrupted),
        false => Ok(()),
    }
}

pub fn run(mode: NetMode) -> Result<()> {
    crate::interrupt::install();
    match mode {
        NetMode::Server(config) => {
            let server = Server::bind(config)?;
            crate::error::say(&format!(
                "latkit net server listening on {} (TCP and UDP)",
                server.local_addr()
            ));
            server.serve(crate::error::say)?;
            Err(Error::Interrupted)
        }
        NetMode::Client(NetTest { client, output }) => {
            check_size(&client)?;
            let sinks = probe_sinks(&output)?;
            let run = with_progress(
                &format!("{} to {}", client.test.name(), client.server),
                output.quiet,
                || measure(&client),
            )?;
            probe_report(run, Vec::new(), &output, sinks)?;
            interrupted_is_130()
        }
        NetMode::Loopback(NetTest { client, output }) => {
            check_size(&client)?;
            let sinks = probe_sinks(&output)?;
            let what = format!("{} on loopback", client.test.name());
            let token = client.token.clone();
            let run = with_progress(&what, output.quiet, || loopback(client, token))?;
            probe_report(run, Vec::new(), &output, sinks)?;
            interrupted_is_130()
        }
    }
}
