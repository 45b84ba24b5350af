//! What `exec` runs: every command once per combination of its parameters' values, as
//! hyperfine's `-L` and `-P` plan them.

use crate::error::{Error, Result};
use crate::model::ConfigEntry;

/// The most combinations of parameter values a plan may hold.
const MAX_COMBINATIONS: usize = 100_000;

/// One command to time: how it is shown, what is run, the parameters substituted into it.
pub struct Planned {
    /// The command line, parameters substituted.
    pub command: String,
    /// The benchmark's name: the command line, or the name `--command-name` gave it.
    pub name: String,
    pub params: Vec<ConfigEntry>,
}

/// Every command once per parameter value, `{NAME}` replaced (in its name too).
pub fn plan(
    commands: Vec<String>,
    names: &[String],
    parameters: &[(String, Vec<String>)],
) -> Result<Vec<Planned>> {
    if commands.is_empty() {
        return Err(Error::Input(
            "nothing to time: give -c 'CMD' (repeatable) or -- CMD ARGS...".into(),
        ));
    }
    if names.len() > commands.len() {
        return Err(Error::Input(format!(
            "{} --command-name for {} command(s): give at most one name per command",
            names.len(),
            commands.len()
        )));
    }
    // As hyperfine: names go to the commands in order; the rest are named by their text,
    // secrets redacted (a name is recorded everywhere a result goes).
    let named: Vec<(String, String)> = commands
        .into_iter()
        .enumerate()
        .map(|(i, command)| {
            let name = names
                .get(i)
                .map_or_else(|| crate::model::redact::line(&command), |n| n.clone());
            (command, name)
        })
        .collect();
    let count = parameters
        .iter()
        .try_fold(1usize, |n, (_, values)| n.checked_mul(values.len()))
        .filter(|n| *n <= MAX_COMBINATIONS);
    if count.is_none() {
        return Err(Error::Input(format!(
            "the parameters have more than {MAX_COMBINATIONS} combinations of values"
        )));
    }
    let combinations = combinations(parameters);
    let substituted = |text: &str, params: &[ConfigEntry]| {
        params.iter().fold(text.to_string(), |text, p| {
            text.replace(&format!("{{{}}}", p.key), &p.value)
        })
    };
    let mut planned: Vec<Planned> = named
        .iter()
        .flat_map(|(command, name)| {
            combinations.iter().map(|params| Planned {
                command: substituted(command, params),
                name: substituted(name, params),
                params: params.clone(),
            })
        })
        .collect();
    // The same command twice (an A/A check) is two results, not one pooled row: the later
    // ones are numbered, as their position in the list.
    let keys: Vec<(String, Vec<ConfigEntry>)> = planned
        .iter()
        .map(|p| (p.name.clone(), p.params.clone()))
        .collect();
    for (i, p) in planned.iter_mut().enumerate() {
        let earlier = keys[..i].iter().filter(|k| **k == keys[i]).count();
        if earlier > 0 {
            p.name = format!("{} ({})", p.name, earlier + 1);
        }
    }
    Ok(planned)
}

/// Every combination of the parameters' values, the first parameter varying fastest, in the
/// order hyperfine runs `-L a 1,2 -L b 3,4`: a=1 b=3, a=2 b=3, a=1 b=4, a=2 b=4.
fn combinations(parameters: &[(String, Vec<String>)]) -> Vec<Vec<ConfigEntry>> {
    // Nested from the last parameter (outermost) to the first, then listed first to last.
    let nested = parameters
        .iter()
        .rev()
        .fold(vec![Vec::new()], |done, (key, values)| {
            done.iter()
                .flat_map(|prefix| {
                    values.iter().map(move |value| {
                        let mut next = prefix.clone();
                        next.push(ConfigEntry {
                            key: key.clone(),
                            value: value.clone(),
                        });
                        next
                    })
                })
                .collect::<Vec<Vec<ConfigEntry>>>()
        });
    nested
        .into_iter()
        .map(|mut c| {
            c.reverse();
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_command_twice_is_two_results() {
        let commands = vec!["sleep 0.1".to_string(); 3];
        let names: Vec<String> = plan(commands, &[], &[])
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, ["sleep 0.1", "sleep 0.1 (2)", "sleep 0.1 (3)"]);
    }
}
