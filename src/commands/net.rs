use super::Env;
use super::Output;
use super::probe::{probe_report, probe_sinks, with_progress};
use crate::error::{Error, Result};
use crate::model::Note;
use crate::probe::net::client::ClientConfig;
use crate::probe::net::protocol::Test;
use crate::probe::net::server::{Server, ServerConfig};
use crate::probe::net::{loopback, measure};

/// Which side of a network test this process plays.
pub enum NetMode {
    /// Serve tests to latkit clients until interrupted (its token set from the second).
    Server(ServerConfig, Token),
    /// Run a test against `test.client.server`.
    Client(NetTest),
    /// Run a test against a server started in this process on an ephemeral loopback port
    /// (`test.client.server` is replaced by it).
    Loopback(NetTest),
}

/// A client's tests, run one after the other, and where their report goes.
pub struct NetTest {
    pub tests: Vec<Test>,
    /// Each test's settings (its `test` is set from `tests`).
    pub client: ClientConfig,
    /// Where the client's token comes from (`client.token` is set from it).
    pub token: Token,
    pub output: Output,
}

/// Where the shared secret comes from.
pub enum Token {
    /// `--token`, typed on the command line.
    Given(String),
    /// `--token-file`: its first line.
    File(std::path::PathBuf),
    /// `LATKIT_TOKEN`, when it is set; else none.
    FromEnvironment,
}

impl Token {
    /// The secret, if any: a file is read with the bounds of every file latkit reads (a
    /// regular file of at most 1 MiB), its first line without the line break and trailing
    /// blanks (an editor's, a `\r`); an empty one, or `LATKIT_TOKEN=` set to nothing, is
    /// refused rather than taken as no token.
    fn resolve(self, env: &Env) -> Result<Option<String>> {
        let (secret, from) = match self {
            Token::Given(token) => return Ok(Some(token)),
            Token::File(path) => {
                let text = crate::error::read_text(&path)?;
                warn_if_others_read(&path, env);
                let first = text.lines().next().unwrap_or("").trim_end().to_string();
                (first, path.display().to_string())
            }
            Token::FromEnvironment => match env.vars.set("LATKIT_TOKEN") {
                None => return Ok(None),
                Some(value) => (
                    value.to_string_lossy().into_owned(),
                    "LATKIT_TOKEN".to_string(),
                ),
            },
        };
        match secret.trim().is_empty() {
            true => Err(Error::Input(format!(
                "{}: the token is empty (give the shared secret on its first line)",
                crate::error::visible(&from)
            ))),
            false => Ok(Some(secret)),
        }
    }
}

/// A secret other users can read is no secret: say so (ssh refuses such keys; a container's
/// mounted secret is often 0644, so latkit warns instead).
fn warn_if_others_read(path: &std::path::Path, env: &Env) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        env.console.say_warning(&format!(
            "{}: other users may read this token (mode {:o}): chmod 600 it",
            crate::error::visible(&path.display().to_string()),
            meta.permissions().mode() & 0o777
        ));
    }
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
fn interrupted_is_130(env: &Env) -> Result<()> {
    match env.interrupt.requested() {
        true => Err(Error::Interrupted),
        false => Ok(()),
    }
}

pub fn run(mode: NetMode, env: &Env) -> Result<()> {
    env.interrupt.install();
    match mode {
        NetMode::Server(mut config, token) => {
            config.token = token.resolve(env)?;
            let server = Server::bind(config)?;
            env.console.say(&format!(
                "latkit net server listening on {} (TCP and UDP)",
                server.local_addr()
            ));
            let console = env.console.clone();
            server.serve(move |line| console.say(line))?;
            Err(Error::Interrupted)
        }
        NetMode::Client(net) => each_test(net, "", env, |client| measure(client, env.stamp())),
        NetMode::Loopback(net) => each_test(net, " on loopback", env, |client| {
            loopback(client.clone(), client.token.clone(), env.stamp())
        }),
    }
}

/// Runs each test in turn, all reported together; an interrupt reports the tests that
/// finished (and the one it cut short), then exits 130.
fn each_test(
    net: NetTest,
    place: &str,
    env: &Env,
    measure: impl Fn(&ClientConfig) -> Result<crate::model::Run>,
) -> Result<()> {
    let NetTest {
        tests,
        mut client,
        token,
        output,
    } = net;
    client.token = token.resolve(env)?;
    let configs: Vec<ClientConfig> = tests
        .iter()
        .map(|&test| ClientConfig {
            test,
            ..client.clone()
        })
        .collect();
    configs.iter().try_for_each(check_size)?;
    let sinks = probe_sinks(&output, env)?;
    let progress = env.console.progress(output.quiet);
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for config in &configs {
        let what = match place {
            "" => format!("{} to {}", config.test.name(), config.server),
            _ => format!("{}{place}", config.test.name()),
        };
        let run = with_progress(&what, progress, || measure(config))?;
        if env.interrupt.requested() {
            notes.extend(unreported(config, &run));
            runs.push(run);
            break;
        }
        runs.push(run);
    }
    probe_report(runs, notes, &output, sinks)?;
    interrupted_is_130(env)
}

/// A throughput test interrupted before the server said what it received: what the report
/// holds is this side's alone.
fn unreported(config: &ClientConfig, run: &crate::model::Run) -> Option<Note> {
    let bench = run.benchmarks.first()?;
    (config.test == Test::TcpThroughput && bench.metric("bytes_received").is_none()).then(|| {
        Note::warning(format!(
            "interrupted before {} reported what it received: the figures are this side's \
             only (bytes_sent, first_send_call)",
            config.server
        ))
    })
}
