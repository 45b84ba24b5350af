//! What only a shell understands in a command line: run without a shell, `echo a | wc -l`
//! would time `echo` printing `a | wc -l`, a different command from the one typed.

/// The first piece of shell syntax outside quotes in `command`, as the user wrote it: an
/// operator (`|`, `&&`, `;`, `>`, `(`…), an expansion (`$`, a backquote, a glob, a `~` at a
/// word's start) or a leading `NAME=value` assignment. `None` when words are all there is.
pub fn first(command: &str) -> Option<String> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    let mut escaped = false;
    let mut word_start = true;
    let mut first_word = String::new();
    let mut in_first_word = true;
    for c in command.chars() {
        if escaped {
            escaped = false;
            word_start = false;
            continue;
        }
        match (&quote, c) {
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::Single, _) => {}
            (Quote::Double, '$' | '`') => return Some(c.to_string()),
            (Quote::Double, '\\') => escaped = true,
            (Quote::Double, _) => {}
            (Quote::None, '\\') => escaped = true,
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::None, '|' | '&' | ';' | '<' | '>' | '(' | ')' | '\n') => {
                return Some(c.to_string());
            }
            (Quote::None, '$' | '`' | '*' | '?' | '[') => return Some(c.to_string()),
            (Quote::None, '~') if word_start => return Some(c.to_string()),
            (Quote::None, '=') if in_first_word && is_name(&first_word) => {
                return Some(format!("{first_word}="));
            }
            (Quote::None, c) if c.is_whitespace() => {
                in_first_word &= first_word.is_empty();
                word_start = true;
                continue;
            }
            _ => {}
        }
        if in_first_word {
            first_word.push(c);
        }
        word_start = false;
    }
    None
}

/// A shell variable name: what `NAME=value` assigns to.
fn is_name(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::first;

    #[test]
    fn shell_syntax_is_found_outside_quotes_only() {
        for (command, found) in [
            ("echo a | wc -l", Some("|")),
            ("make && ./run", Some("&")),
            ("sleep 1; true", Some(";")),
            ("cat < in.txt", Some("<")),
            ("ls > out", Some(">")),
            ("echo $HOME", Some("$")),
            ("echo \"$HOME\"", Some("$")),
            ("echo `date`", Some("`")),
            ("ls *.txt", Some("*")),
            ("cat ~/x", Some("~")),
            ("FOO=1 ./bench", Some("FOO=")),
            ("(cd x)", Some("(")),
            ("sleep 0.1", None),
            ("grep 'a|b' file", None),
            ("echo \"a;b\" 'c > d'", None),
            ("echo a\\|b", None),
            ("./bench --size=64 --name x~y", None),
            ("go test -bench=.", None),
        ] {
            assert_eq!(first(command).as_deref(), found, "{command}");
        }
    }
}
