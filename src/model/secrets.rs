//! Secrets never recorded: connection strings anywhere in a command line are read with the
//! PostgreSQL driver's own parser, so that whatever it would send as a password (quoted,
//! escaped, percent-encoded) is what goes; [`super::redact`] uses them for whole command lines.

/// What a secret is recorded as.
pub const REDACTED: &str = "***";

/// Keywords of a libpq connection string (`host=db port=5432 dbname=bench`).
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "connect_timeout",
    "application_name",
    "options",
    "target_session_attrs",
];

/// Whether `location` is a keyword connection string rather than a SQLite path: the driver
/// reads it, or it opens with a libpq keyword (`host=db`, `password = x`).
pub fn is_keyword_string(location: &str) -> bool {
    let first_key = location.trim_start().split(['=', ' ', '\t']).next();
    location.contains('=')
        && (first_key.is_some_and(|key| KEYWORDS.contains(&key)) || driver_reads(location))
}

#[cfg(feature = "postgres")]
fn driver_reads(location: &str) -> bool {
    location.parse::<postgres::Config>().is_ok()
}

/// Without the driver, only a string that opens with a libpq keyword is a connection string.
#[cfg(not(feature = "postgres"))]
fn driver_reads(_: &str) -> bool {
    false
}

/// Whether `text` is a PostgreSQL location: a `postgres://` URL or a keyword string.
pub fn is_connection_string(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("postgres://") || text.starts_with("postgresql://") || is_keyword_string(text)
}

/// A PostgreSQL location without its password, for messages and records. Read by the driver:
/// without a password it is kept as written; with one it is written back from what the driver
/// read, without it; one the driver cannot read is shown only by its scheme.
#[cfg(feature = "postgres")]
pub fn without_password(location: &str) -> String {
    let config: postgres::Config = match location.parse() {
        Ok(config) => config,
        Err(_) if let Some((scheme, _)) = location.split_once("://") => {
            return format!("{scheme}://{REDACTED} (not a location the driver reads)");
        }
        Err(_) => return format!("{REDACTED} (not a location the driver reads)"),
    };
    if config.get_password().is_none() {
        return location.to_string();
    }
    url_of(&config)
}

/// Without the driver nothing can tell a password from the rest: only the scheme is shown.
#[cfg(not(feature = "postgres"))]
pub fn without_password(location: &str) -> String {
    match location.split_once("://") {
        Some((scheme, _)) => format!("{scheme}://{REDACTED} (no PostgreSQL driver to read it)"),
        None => format!("{REDACTED} (no PostgreSQL driver to read it)"),
    }
}

/// `config` as a `postgres://` URL, password left out.
#[cfg(feature = "postgres")]
fn url_of(config: &postgres::Config) -> String {
    use postgres::config::{Host, SslMode};
    use std::fmt::Write;
    let encode = |text: &str| {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    let mut url = String::from("postgres://");
    if let Some(user) = config.get_user() {
        let _ = write!(url, "{}@", encode(user));
    }
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let name = match host {
                Host::Tcp(name) => encode(name),
                Host::Unix(path) => encode(&path.to_string_lossy()),
            };
            match ports.get(i).or(ports.first().filter(|_| ports.len() == 1)) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    url.push_str(&hosts.join(","));
    url.push('/');
    if let Some(db) = config.get_dbname() {
        url.push_str(&encode(db));
    }
    let mut params = Vec::new();
    if let Some(name) = config.get_application_name() {
        params.push(format!("application_name={}", encode(name)));
    }
    if let Some(options) = config.get_options() {
        params.push(format!("options={}", encode(options)));
    }
    match config.get_ssl_mode() {
        SslMode::Disable => params.push("sslmode=disable".into()),
        SslMode::Require => params.push("sslmode=require".into()),
        _ => {}
    }
    if let Some(timeout) = config.get_connect_timeout() {
        params.push(format!("connect_timeout={}", timeout.as_secs()));
    }
    if !params.is_empty() {
        let _ = write!(url, "?{}", params.join("&"));
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_leave_every_spelling_the_driver_reads() {
        for given in [
            "postgres://ci:s3cret@db.example:5432/bench",
            "postgres://ci@h/x?password=s3cret&sslmode=disable",
            "postgresql://h/x?password=s3cret",
            "postgres://ci:pa?s3cret@h/x",
            "postgres://ci@h/x?pass%77ord=s3cret",
            "host=db password='a s3cret' dbname=bench",
            "host=db password=s3cret",
            "host=db password = s3cret",
            "host=db password= s3cret",
            "host=db password=a\\ s3cret",
        ] {
            let shown = without_password(given);
            assert!(!shown.contains("s3cret"), "{given} → {shown}");
        }
        // What the driver cannot read is not shown at all.
        let unread = without_password("host=db password=s3cret bogus=1");
        assert!(!unread.contains("s3cret"), "{unread}");
        assert!(is_keyword_string("host=127.0.0.1 port=5432 dbname=x"));
        assert!(!is_keyword_string("/var/lib/latkit/history.db"));
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn the_driver_keeps_everything_but_the_password() {
        assert_eq!(
            without_password("postgres://ci:s3cret@db.example:5432/bench"),
            "postgres://ci@db.example:5432/bench"
        );
        let plain = "postgres://ci@127.0.0.1:5432/bench?sslmode=disable";
        assert_eq!(without_password(plain), plain);
    }
}
