//! One redactor for every string latkit records from a command line — latkit's own or a
//! measured command's, as words or as one shell line — before it becomes a name, a row, a note
//! or a page: URL userinfo and secret query parameters, `--password=X` and `--token X` (any
//! option whose name says password, token, secret or key), `-u user:pw`, clients' own
//! password flags (mysql's `-pX`, sshpass, redis-cli, docker login), credential headers and
//! cookies, secret assignments, body fields and PostgreSQL connection strings. What it
//! catches is listed in docs/reports.md.

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
    "bearer",
];
/// Options, after their dashes, whose value is a secret whole (openssl's `-pass`, redis-cli's
/// `--pass`).
const SECRET_OPTIONS: &[&str] = &["pass", "passin", "passout", "pwd", "pw"];
/// Options whose value is `user:password` (curl's `-u`, httpie's `--auth`).
const USER_PASSWORD_OPTIONS: &[&str] = &[
    "-u",
    "--user",
    "--proxy-user",
    "-U",
    "--auth",
    "--basic-auth",
    "--proxy-auth",
    "--userpass",
    "--user-password",
];
/// Words in a header's name that make its value a credential (Authorization keeps its
/// scheme: `Bearer ***`).
const CREDENTIAL_HEADER_WORDS: &[&str] = &[
    "auth",
    "token",
    "api-key",
    "apikey",
    "secret",
    "password",
    "session",
    "signature",
    "cookie",
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
/// `NAME=VALUE` where NAME says it holds a secret (`PGPASSWORD=x`, `GITHUB_TOKEN=x`,
/// `MYSQL_PWD=x`, `DB_PASS=x`, `STRIPE_KEY=x`); the value ends at a blank or `&`.
static SECRET_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b([a-z0-9_]*(?:password|passwd|passphrase|token|secret|api_?key|private_key|credential)[a-z0-9_]*|[a-z0-9_]*_(?:pwd|pass|key))=([^\s&]+)",
    )
    .expect("a valid regex")
});
/// A URL query parameter that carries a key or a signature (`?key=`, `&sig=`,
/// `X-Amz-Signature=`, `access_token=`, `?auth=`).
static QUERY_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)([?&;](?:[a-z0-9_.-]*[_.-])?(?:key|apikey|sig|signature|auth|token|secret|password|passwd|pwd|pass|credential|session|sessionid|sid|jwt|code)=)[^&#\s'\x22]+",
    )
    .expect("a valid regex")
});
/// A field of a body (JSON, YAML, a Python dict) whose name says it holds a secret:
/// `"password": "x"`.
static FIELD_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(["'][a-z0-9_-]*(?:password|passwd|passphrase|token|secret|api_?key|credential)[a-z0-9_-]*["']\s*:\s*)("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,}\s]+)"#,
    )
    .expect("a valid regex")
});

/// Whether an option or variable named `name` holds a secret.
fn names_a_secret(name: &str) -> bool {
    let name = name.trim_start_matches('-').to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| name.contains(word)) || SECRET_OPTIONS.contains(&name.as_str())
}

/// Whether a variable named `name` holds a secret: as an option, or `*_PWD`, `*_PASS`,
/// `*_KEY`.
fn names_a_secret_variable(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    names_a_secret(name)
        || ["_pwd", "_pass", "_key"]
            .iter()
            .any(|end| lower.ends_with(end))
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

/// Free text (a note, a tag, an error): URL passwords, secret query parameters and secret
/// assignments redacted.
pub fn in_text(text: &str) -> String {
    let text = URL_PASSWORD.replace_all(text, |c: &regex::Captures| {
        format!("{}{}:{REDACTED}@", &c[1], &c[2])
    });
    let text =
        QUERY_SECRET.replace_all(&text, |c: &regex::Captures| format!("{}{REDACTED}", &c[1]));
    SECRET_ASSIGNMENT
        .replace_all(&text, |c: &regex::Captures| format!("{}={REDACTED}", &c[1]))
        .into_owned()
}

/// A word of a command line as text: [`in_text`], and fields of a body that hold secrets
/// (`-d '{"password":"x"}'`).
fn in_word(word: &str) -> String {
    fields(&in_text(word))
}

/// Fields of a body that hold secrets redacted.
fn fields(text: &str) -> String {
    FIELD_SECRET
        .replace_all(text, |c: &regex::Captures| {
            format!("{}\"{REDACTED}\"", &c[1])
        })
        .into_owned()
}

/// A command line as words (an argv: latkit's own, or a measured command's) as it may be
/// recorded, each secret replaced: the value after a secret option, or in it after `=`; a
/// word holding a whole shell line is redacted as a line. Each program named on the line
/// (`sudo mysql`, `docker exec db mysql`) brings its own options' rules for the words after it.
pub fn command_line(words: &[String]) -> Vec<String> {
    let mut program = Program::default();
    let mut out = Vec::with_capacity(words.len());
    let mut next = Next::Plain;
    for word in words {
        let shown = match std::mem::replace(&mut next, Next::Plain) {
            Next::Secret => REDACTED.to_string(),
            Next::UserPassword => user_password(word),
            Next::Credential if !word.contains(':') => REDACTED.to_string(),
            Next::Credential => user_password(word),
            Next::Cookie => cookie(word),
            Next::Plain => {
                program.see(word);
                let (shown, then) = plain_word(word, &program);
                next = then;
                shown
            }
        };
        out.push(shown);
    }
    out
}

/// A word not taken by the option before it, as recorded, and what the next word is.
fn plain_word(word: &str, program: &Program) -> (String, Next) {
    if let Some(next) = program.takes(word) {
        return (word.to_string(), next);
    }
    let (option, value) = word.split_once('=').unwrap_or((word, ""));
    let option_word = word.starts_with('-');
    let shown = if let Some(shown) = program.attached(word) {
        shown
    } else if let Some(header) = header_option(word) {
        header
    } else if option_word && names_a_secret(option) {
        match word.contains('=') {
            true => format!("{option}={REDACTED}"),
            false => return (word.to_string(), Next::Secret),
        }
    } else if USER_PASSWORD_OPTIONS.contains(&word) {
        return (word.to_string(), Next::UserPassword);
    } else if option_word && USER_PASSWORD_OPTIONS.contains(&option) && word.contains('=') {
        format!("{option}={}", user_password(value))
    } else if let Some(attached) = word.strip_prefix("-u").filter(|v| v.contains(':')) {
        format!("-u{}", user_password(attached))
    } else if word == "--cookie" {
        return (word.to_string(), Next::Cookie);
    } else if option == "--cookie" && word.contains('=') {
        format!("--cookie={}", cookie(value))
    } else if let Some(header) = credential_header(word) {
        header
    } else if is_connection_string(word) {
        without_password(word)
    } else if word.contains(char::is_whitespace) {
        fields(&line(word))
    } else if !value.is_empty() && !option_word && names_a_secret_variable(option) {
        format!("{option}={REDACTED}")
    } else {
        in_word(word)
    };
    (shown, Next::Plain)
}

/// What the next word is, after an option that takes a secret.
enum Next {
    Plain,
    Secret,
    /// `user:password` (curl's `-u`): the user stays.
    UserPassword,
    /// `user:password`, or a token whole (httpie's `-a`).
    Credential,
    /// `name=value; ...` (curl's `-b`): the names stay; a file name stays whole.
    Cookie,
}

/// The program whose options the words are: the first word that is no assignment, then each
/// program latkit knows the options of (`sudo mysql -pX`).
#[derive(Default)]
struct Program {
    name: String,
    /// After `docker login` (or podman's): `-p` is the password.
    login: bool,
}

/// Programs with options of their own that take secrets.
const KNOWN_PROGRAMS: &[&str] = &[
    "sshpass",
    "redis-cli",
    "docker",
    "podman",
    "nerdctl",
    "ab",
    "hey",
    "http",
    "https",
    "xh",
    "curl",
    "mongo",
    "mongosh",
];
/// Programs whose `login` subcommand takes `-p PASSWORD`.
const CONTAINER_CLIENTS: &[&str] = &["docker", "podman", "nerdctl"];

impl Program {
    fn see(&mut self, word: &str) {
        if word.starts_with('-') || word.contains('=') {
            return;
        }
        let base = word.rsplit('/').next().unwrap_or(word);
        let known = KNOWN_PROGRAMS.contains(&base) || MYSQL_FAMILY.contains(&base);
        if self.name.is_empty() || known {
            self.name = base.to_string();
            self.login = false;
        } else if base == "login" && CONTAINER_CLIENTS.contains(&self.name.as_str()) {
            self.login = true;
        }
    }

    /// What the word after this option is, for this program.
    fn takes(&self, word: &str) -> Option<Next> {
        let next = match (self.name.as_str(), word) {
            ("sshpass" | "mongo" | "mongosh", "-p") | ("redis-cli", "-a") => Next::Secret,
            (name, "-p") if self.login && CONTAINER_CLIENTS.contains(&name) => Next::Secret,
            ("ab", "-A" | "-P") | ("hey", "-a") => Next::UserPassword,
            ("http" | "https" | "xh", "-a") => Next::Credential,
            ("ab", "-C") | ("curl", "-b") => Next::Cookie,
            _ => return None,
        };
        Some(next)
    }

    /// A secret attached to its option for this program (mysql's and sshpass's `-pX`).
    fn attached(&self, word: &str) -> Option<String> {
        let takes_p = MYSQL_FAMILY.contains(&self.name.as_str()) || self.name == "sshpass";
        (takes_p && word.starts_with("-p") && word.len() > 2).then(|| format!("-p{REDACTED}"))
    }
}

/// A cookie string's values redacted (`a=***; b=***`); a word with no `=` (a file) as it is.
fn cookie(word: &str) -> String {
    if !word.contains('=') {
        return word.to_string();
    }
    word.split(';')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) => format!("{name}={REDACTED}"),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// A header given joined to its option (`-HAuthorization: X`, `--header=Cookie: X`).
fn header_option(word: &str) -> Option<String> {
    let header = word
        .strip_prefix("--header=")
        .or_else(|| word.strip_prefix("-H").filter(|rest| !rest.is_empty()))?;
    let option = &word[..word.len() - header.len()];
    credential_header(header).map(|shown| format!("{option}{shown}"))
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
    let lower = name.to_ascii_lowercase();
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !valid || !CREDENTIAL_HEADER_WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let value = value.trim();
    let scheme = match value.split_once(char::is_whitespace) {
        Some((scheme, _)) if lower.ends_with("authorization") => {
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
            "curl 'https://example.com/x?monkey=1&page=2'",
            "docker run -p 8080:80 image:tag",
            "mysql -p db",
            "hyperfine -P threads 1 8 'sort -S {threads}'",
            "ssh host:22",
            "cp -b a b",
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

    /// The spellings an audit found reaching every output (issue 75).
    #[test]
    fn headers_client_flags_variables_queries_cookies_and_bodies_are_redacted() {
        for (given, recorded) in [
            (
                "curl -H'Authorization: Bearer X' h",
                "curl '-HAuthorization: Bearer ***' h",
            ),
            (
                "curl --header='Authorization: Bearer X' h",
                "curl '--header=Authorization: Bearer ***' h",
            ),
            (
                "curl -H 'X-Goog-Api-Key: X' h",
                "curl -H 'X-Goog-Api-Key: ***' h",
            ),
            (
                "curl -H 'X-Amz-Security-Token:X' h",
                "curl -H 'X-Amz-Security-Token: ***' h",
            ),
            ("curl --oauth2-bearer X h", "curl --oauth2-bearer '***' h"),
            ("sshpass -p X ssh host", "sshpass -p '***' ssh host"),
            ("sshpass -pX ssh host", "sshpass '-p***' ssh host"),
            ("redis-cli -a X ping", "redis-cli -a '***' ping"),
            ("redis-cli --pass X ping", "redis-cli --pass '***' ping"),
            (
                "docker login -u me -p X reg",
                "docker login -u me -p '***' reg",
            ),
            ("sudo mysql -pX db", "sudo mysql '-p***' db"),
            (
                "docker exec db mysql -uroot -pX",
                "docker exec db mysql -uroot '-p***'",
            ),
            ("env A=1 mysqldump -pX db", "env 'A=1' mysqldump '-p***' db"),
            ("MYSQL_PWD=X mysql db", "'MYSQL_PWD=***' mysql db"),
            ("DB_PASS=X ./bench", "'DB_PASS=***' ./bench"),
            ("STRIPE_KEY=X ./bench", "'STRIPE_KEY=***' ./bench"),
            (
                "curl 'https://h/p?key=X&page=2'",
                "curl 'https://h/p?key=***&page=2'",
            ),
            (
                "curl 'https://b.s3/o?X-Amz-Signature=X&X-Amz-Date=1'",
                "curl 'https://b.s3/o?X-Amz-Signature=***&X-Amz-Date=1'",
            ),
            ("curl 'https://h/?sig=X'", "curl 'https://h/?sig=***'"),
            ("ab -A alice:X http://h/", "ab -A 'alice:***' http://h/"),
            ("hey -a alice:X http://h/", "hey -a 'alice:***' http://h/"),
            ("http -a alice:X h", "http -a 'alice:***' h"),
            ("http -A bearer -a X h", "http -A bearer -a '***' h"),
            ("tool --auth=alice:X", "tool '--auth=alice:***'"),
            (
                "curl -b 'session=X; theme=dark' h",
                "curl -b 'session=***; theme=***' h",
            ),
            ("curl -b jar.txt h", "curl -b jar.txt h"),
            ("ab -C sid=X http://h/", "ab -C 'sid=***' http://h/"),
            ("curl -H 'Cookie: sid=X' h", "curl -H 'Cookie: ***' h"),
            (
                r#"curl -d '{"user":"a","password":"X"}' h"#,
                r#"curl -d '{"user":"a","password":"***"}' h"#,
            ),
            (
                r#"curl -d '{"user": "a", "api_key": "X"}' h"#,
                r#"curl -d '{"user": "a", "api_key": "***"}' h"#,
            ),
            (
                "openssl enc -pass pass:X -in f",
                "openssl enc -pass '***' -in f",
            ),
        ] {
            let shown = line(given);
            assert_eq!(shown, recorded, "{given}");
        }
    }
}
