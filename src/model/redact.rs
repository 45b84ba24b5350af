//! One redactor for every string latkit records from a command line — latkit's own or a
//! measured command's, as words or as one shell line — before it becomes a name, a row, a note
//! or a page: URL userinfo, `--password=X` and `--token X` (any option whose name says
//! password, token, secret or key), `-u user:pw`, mysql's `-pX`, credential headers
//! (`Authorization: Bearer X`), `*PASSWORD=` / `*TOKEN=` / `*SECRET=` assignments and
//! PostgreSQL connection strings. What it catches is listed in docs/reports.md.

use super::secrets::{REDACTED, is_connection_string, without_password};
use regex::Regex;
use std::sync::LazyLock;

/// Words in an option's or a variable's name that make its value a secret.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "token",
    "secret",
    "apikey",
    "api-key",
    "api_key",
    "private-key",
    "private_key",
    "credential",
];
/// Headers whose value is a credential; Authorization keeps its scheme (`Bearer ***`).
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
    "private-token",
];
/// Programs whose `-pSECRET` (attached) is a password.
const MYSQL_FAMILY: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlshow",
    "mysqlslap",
    "mysqlcheck",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
];

/// `scheme://user:password@`: the password of a URL's userinfo.
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/@\s:]*):([^/@\s]*)@").expect("a valid regex")
});
/// `NAME=VALUE` where NAME says it holds a secret (`PGPASSWORD=x`, `GITHUB_TOKEN=x`).
static SECRET_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b([a-z0-9_]*(?:password|passwd|passphrase|token|secret|api_?key|private_key|credential)[a-z0-9_]*)=(\S+)",
    )
    .expect("a valid regex")
});

/// Whether an option or variable named `name` holds a secret.
fn names_a_secret(name: &str) -> bool {
    let name = name.trim_start_matches('-').to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| name.contains(word))
}

/// A shell line (`exec`'s commands, a name made of one) as it may be recorded. Unchanged when
/// it holds no secret; else its words redacted and joined again, quoted as a shell reads them.
pub fn line(text: &str) -> String {
    let Some(words) = shlex::split(text) else {
        // Quotes that do not close: redact what can be found in the text itself.
        return in_text(text);
    };
    let redacted = command_line(&words);
    if redacted == words {
        // Also what the word split cannot see (a URL inside a word of its own is caught).
        return text.to_string();
    }
    shlex::try_join(redacted.iter().map(String::as_str)).unwrap_or_else(|_| in_text(text))
}

/// Free text (a note, a tag, an error): URL passwords and secret assignments redacted.
pub fn in_text(text: &str) -> String {
    let text = URL_PASSWORD.replace_all(text, |c: &regex::Captures| {
        format!("{}{}:{REDACTED}@", &c[1], &c[2])
    });
    SECRET_ASSIGNMENT
        .replace_all(&text, |c: &regex::Captures| format!("{}={REDACTED}", &c[1]))
        .into_owned()
}

/// A command line as words (an argv: latkit's own, or a measured command's) as it may be
/// recorded, each secret replaced: the value after a secret option, or in it after `=`; a
/// word holding a whole shell line is redacted as a line.
pub fn command_line(words: &[String]) -> Vec<String> {
    let program = words
        .iter()
        .find(|w| !w.contains('='))
        .and_then(|w| w.rsplit('/').next())
        .unwrap_or_default();
    let mysql = MYSQL_FAMILY.contains(&program);
    let mut out = Vec::with_capacity(words.len());
    let mut next = Next::Plain;
    for word in words {
        match std::mem::replace(&mut next, Next::Plain) {
            Next::Secret => {
                out.push(REDACTED.to_string());
                continue;
            }
            Next::UserPassword => {
                out.push(user_password(word));
                continue;
            }
            Next::Plain => {}
        }
        let (option, value) = word.split_once('=').unwrap_or((word, ""));
        let shown = if word.starts_with('-') && names_a_secret(option) {
            match word.contains('=') {
                true => format!("{option}={REDACTED}"),
                false => {
                    next = Next::Secret;
                    word.clone()
                }
            }
        } else if ["-u", "--user", "--proxy-user", "-U"].contains(&word.as_str()) {
            next = Next::UserPassword;
            word.clone()
        } else if let Some(attached) = word.strip_prefix("-u").filter(|v| v.contains(':')) {
            format!("-u{}", user_password(attached))
        } else if mysql && word.starts_with("-p") && word.len() > 2 {
            format!("-p{REDACTED}")
        } else if let Some(header) = credential_header(word) {
            header
        } else if is_connection_string(word) {
            without_password(word)
        } else if word.contains(char::is_whitespace) {
            line(word)
        } else if !value.is_empty() && !word.starts_with('-') && names_a_secret(option) {
            format!("{option}={REDACTED}")
        } else {
            in_text(word)
        };
        out.push(shown);
    }
    out
}

/// What the next word is, after an option that takes a secret.
enum Next {
    Plain,
    Secret,
    /// `user:password` (curl's `-u`): the user stays.
    UserPassword,
}

/// `user:password` with the password redacted; a word with no `:` is a user alone.
fn user_password(word: &str) -> String {
    match word.split_once(':') {
        Some((user, _)) => format!("{user}:{REDACTED}"),
        None => word.to_string(),
    }
}

/// A credential header (`Authorization: Bearer X`) with its value redacted, the scheme of an
/// Authorization kept; `None` for any other word.
fn credential_header(word: &str) -> Option<String> {
    let (name, value) = word.split_once(':')?;
    let name = name.trim();
    if !CREDENTIAL_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return None;
    }
    let value = value.trim();
    let scheme = match value.split_once(char::is_whitespace) {
        Some((scheme, _)) if name.to_ascii_lowercase().ends_with("authorization") => {
            format!("{scheme} ")
        }
        _ => String::new(),
    };
    Some(format!("{name}: {scheme}{REDACTED}"))
}

/// `serialize_with` for a recorded command: redacted whatever it was made from.
pub fn serialize_command<S: serde::Serializer>(
    command: &[String],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&command_line(command), serializer)
}

/// `deserialize_with` for a recorded command: one written before secrets were redacted (an
/// old JSON file or store row) is redacted on reading.
pub fn deserialize_command<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let command: Vec<String> = serde::Deserialize::deserialize(deserializer)?;
    Ok(command_line(&command))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn latkits_secret_options_are_redacted_by_option() {
        assert_eq!(
            command_line(&args(&[
                "latkit", "net", "client", "--token", "hunter2", "-d", "1"
            ])),
            args(&["latkit", "net", "client", "--token", "***", "-d", "1"])
        );
        assert_eq!(
            command_line(&args(&["latkit", "net", "server", "--token=hunter2"])),
            args(&["latkit", "net", "server", "--token=***"])
        );
        assert_eq!(
            command_line(&args(&["latkit", "parse", "/tmp/a=b.txt", "x y"])),
            args(&["latkit", "parse", "/tmp/a=b.txt", "x y"])
        );
    }

    #[test]
    fn connection_strings_lose_their_passwords_as_words_and_in_shell_lines() {
        for given in [
            "postgres://ci:s3cret@db.example:5432/bench",
            "postgresql://h/x?password=s3cret",
            "host=db password='a s3cret' dbname=bench",
            "host=db password = s3cret",
        ] {
            let recorded = command_line(&args(&["latkit", "store", "list", "--db", given]));
            assert!(!recorded.concat().contains("s3cret"), "{recorded:?}");
            let shell = format!("psql {} -c 'select 1'", shlex::try_quote(given).unwrap());
            let recorded = command_line(&args(&["latkit", "exec", &shell]));
            assert!(!recorded.concat().contains("s3cret"), "{recorded:?}");
        }
    }

    #[test]
    fn every_kind_of_secret_in_a_command_line_is_redacted() {
        for (given, recorded) in [
            (
                "curl -u alice:PW https://x",
                "curl -u 'alice:***' https://x",
            ),
            ("curl -ualice:PW https://x", "curl '-ualice:***' https://x"),
            (
                "curl https://bob:TOKEN@host/p",
                "curl 'https://bob:***@host/p'",
            ),
            ("tool --password=X run", "tool '--password=***' run"),
            ("tool --password X run", "tool --password '***' run"),
            ("tool --api-key X", "tool --api-key '***'"),
            ("tool --db-token=X", "tool '--db-token=***'"),
            (
                "curl -H 'Authorization: Bearer X' https://h",
                "curl -H 'Authorization: Bearer ***' https://h",
            ),
            ("curl -H 'X-Api-Key: X' h", "curl -H 'X-Api-Key: ***' h"),
            ("mysql -pX -e 'select 1'", "mysql '-p***' -e 'select 1'"),
            (
                "PGPASSWORD=X psql -c 'select 1'",
                "'PGPASSWORD=***' psql -c 'select 1'",
            ),
            ("GITHUB_TOKEN=X gh api", "'GITHUB_TOKEN=***' gh api"),
            (
                "sh -c 'PGPASSWORD=X psql'",
                "sh -c \"'PGPASSWORD=***' psql\"",
            ),
        ] {
            let shown = line(given);
            assert_eq!(shown, recorded, "{given}");
            assert!(
                !shown.contains("PW") && !shown.contains("TOKEN@"),
                "{shown}"
            );
        }
        // Nothing secret: kept as written, quoting and all.
        for plain in [
            "gzip -c -6 'my file.txt'",
            "sort -u names.txt",
            "ssh -p 2222 host",
            "cp -p a b",
            "curl https://example.com/x?a=b",
        ] {
            assert_eq!(line(plain), plain);
        }
        // Free text and quotes that do not close.
        assert_eq!(
            in_text("failed: https://u:p@h and PGPASSWORD=x"),
            "failed: https://u:***@h and PGPASSWORD=***"
        );
        assert_eq!(line("echo 'https://u:p@h"), "echo 'https://u:***@h");
    }
}
