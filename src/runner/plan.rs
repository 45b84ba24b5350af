//! What `exec` runs: every command once per combination of its parameters' values, as
//! hyperfine's `-L` and `-P` plan them.

use crate::error::{Error, Result};
use crate::model::ConfigEntry;

/// The most combinations of parameter values a plan may hold.
const MAX_COMBINATIONS: usize = 100_000;

/// One command to time: how it is shown, what is run, the parameters substituted into it.
#[derive(Clone)]
pub struct Planned {
    /// The command line, parameters substituted.
    pub command: String,
    /// The benchmark's name: the command line, or the name `--command-name` gave it.
    pub name: String,
    pub params: Vec<ConfigEntry>,
    /// The untimed commands run around its runs.
    pub helpers: Helpers<Option<String>>,
}

/// The untimed commands around a command's runs, as hyperfine's options of the same names:
/// `--setup` before its runs, `--prepare` before and `--conclude` after each run (warm-ups
/// too), `--cleanup` after its runs. As given (`Helpers<Vec<String>>`: `--prepare` and
/// `--conclude` once for all or once per command), or one command's (`Option<String>`,
/// its parameters substituted).
#[derive(Clone, Debug, Default)]
pub struct Helpers<T> {
    pub setup: T,
    pub prepare: T,
    pub conclude: T,
    pub cleanup: T,
}

impl Helpers<Vec<String>> {
    /// The helpers of the `index`-th planned command, its `params` substituted.
    fn of(&self, index: usize, params: &[ConfigEntry]) -> Helpers<Option<String>> {
        let pick = |given: &[String]| {
            let chosen = if given.len() == 1 {
                given.first()
            } else {
                given.get(index)
            };
            chosen.map(|text| substituted(text, params))
        };
        Helpers {
            setup: pick(&self.setup),
            prepare: pick(&self.prepare),
            conclude: pick(&self.conclude),
            cleanup: pick(&self.cleanup),
        }
    }

    /// Refuses a helper given neither once nor once per planned command.
    fn check(&self, count: usize) -> Result<()> {
        for (option, given) in [("--prepare", &self.prepare), ("--conclude", &self.conclude)] {
            if given.len() > 1 && given.len() != count {
                return Err(Error::Input(format!(
                    "{option} given {} times for {count} command(s) (counting each -L/-P \
                     value and --reference): give it once for all, or once per command",
                    given.len()
                )));
            }
        }
        Ok(())
    }
}

/// `text` with every `{NAME}` of `params` replaced by its value.
fn substituted(text: &str, params: &[ConfigEntry]) -> String {
    params.iter().fold(text.to_string(), |text, p| {
        text.replace(&format!("{{{}}}", p.key), &p.value)
    })
}

/// Every command once per parameter value, `{NAME}` replaced (in its name and helpers too).
pub fn plan(
    commands: Vec<String>,
    names: &[String],
    parameters: &[(String, Vec<String>)],
    helpers: &Helpers<Vec<String>>,
) -> Result<Vec<Planned>> {
    if commands.is_empty() {
        return Err(Error::Input(
            "nothing to time: give the commands as arguments, `latkit exec 'CMD' ['CMD'...]`, \
             or one after --: `latkit exec -- CMD ARGS...`"
                .into(),
        ));
    }
    if names.len() > commands.len() {
        return Err(Error::Input(format!(
            "{} --command-name for {} command(s): give at most one name per command",
            names.len(),
            commands.len()
        )));
    }
    // As hyperfine: names go to the commands in order; the rest are named by their text.
    let named: Vec<(String, Option<&String>)> = commands
        .into_iter()
        .enumerate()
        .map(|(i, command)| (command, names.get(i)))
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
    let mut planned: Vec<Planned> = named
        .iter()
        .flat_map(|(command, name)| {
            combinations.iter().map(|params| Planned {
                command: substituted(command, params),
                // Secrets redacted once the values are in (a name is recorded everywhere a
                // result goes, and a -L value may be the secret).
                name: match name {
                    Some(name) => crate::model::redact::in_text(&substituted(name, params)),
                    None => crate::model::redact::line(&substituted(command, params)),
                },
                params: params.clone(),
                helpers: Helpers::default(),
            })
        })
        .collect();
    helpers.check(planned.len())?;
    for (index, p) in planned.iter_mut().enumerate() {
        p.helpers = helpers.of(index, &p.params);
    }
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

/// The values `-P NAME MIN MAX [-D DELTA]` gives, as hyperfine writes them: whole numbers
/// (steps of 1 without DELTA), or with DELTA decimals counted exactly (`0.3 0.7 -D 0.2`: 0.3,
/// 0.5, 0.7), each written to the places its sum has (MIN's, then the most of MIN's and DELTA's).
pub fn scan(min: &str, max: &str, step: Option<&str>) -> std::result::Result<Vec<String>, String> {
    let number = |text: &str| decimal(text).ok_or_else(|| format!("`{text}` is not a number"));
    let (low, high) = (number(min)?, number(max)?);
    let delta = match step {
        Some(step) => number(step)?,
        None if low.1 > 0 || high.1 > 0 => {
            return Err("decimal bounds need a step: give -D DELTA".into());
        }
        None => (1, 0),
    };
    let places = low.1.max(high.1).max(delta.1);
    let at = |(mantissa, own): (i128, u32)| mantissa * 10i128.pow(places - own);
    let (first, last, by) = (at(low), at(high), at(delta));
    if by <= 0 {
        return Err(format!(
            "the step must be above 0, not {}",
            step.unwrap_or("0")
        ));
    }
    if last < first || (last - first) / by >= MAX_COMBINATIONS as i128 {
        return Err(format!(
            "expected MIN <= MAX with at most {MAX_COMBINATIONS} values between them"
        ));
    }
    let later = low.1.max(delta.1);
    Ok((0..=(last - first) / by)
        .map(|k| match k {
            0 => written(low.0, low.1),
            _ => written((first + k * by) / 10i128.pow(places - later), later),
        })
        .collect())
}

/// A decimal number as an integer and its places after the point (`-0.25`: (-25, 2)); at
/// most 18 places and 30 digits in all, else `None`.
fn decimal(text: &str) -> Option<(i128, u32)> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty()
        || !all_digits(whole)
        || !all_digits(fraction)
        || fraction.len() > 18
        || whole.len() + fraction.len() > 30
    {
        return None;
    }
    let mantissa: i128 = format!("{whole}{fraction}").parse().ok()?;
    Some((sign * mantissa, fraction.len() as u32))
}

/// `mantissa` with `places` digits after the point.
fn written(mantissa: i128, places: u32) -> String {
    let sign = if mantissa < 0 { "-" } else { "" };
    let scale = 10u128.pow(places);
    let (whole, fraction) = (
        mantissa.unsigned_abs() / scale,
        mantissa.unsigned_abs() % scale,
    );
    match places {
        0 => format!("{sign}{whole}"),
        _ => format!("{sign}{whole}.{fraction:0width$}", width = places as usize),
    }
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

    /// hyperfine's own scan cases (sharkdp/hyperfine src/command.rs tests and its `-D` help).
    #[test]
    fn scans_step_as_hyperfines_do() {
        let scan = |min, max, step| scan(min, max, step).unwrap();
        assert_eq!(scan("1", "7", Some("3")), ["1", "4", "7"]);
        assert_eq!(scan("0", "1", Some("0.33")), ["0", "0.33", "0.66", "0.99"]);
        assert_eq!(scan("0.3", "0.7", Some("0.2")), ["0.3", "0.5", "0.7"]);
        assert_eq!(scan("1", "2", Some("0.5")), ["1", "1.5", "2.0"]);
        assert_eq!(scan("-2", "1", None), ["-2", "-1", "0", "1"]);
        assert_eq!(scan("0", "1", Some("0.1")).len(), 11);
        for (min, max, step, why) in [
            ("0.3", "0.7", None, "need a step"),
            ("1", "x", None, "`x` is not a number"),
            ("0", "1", Some("0"), "above 0"),
            ("2", "1", None, "MIN <= MAX"),
            ("0", "100000", None, "at most 100000"),
            ("1e3", "2", None, "not a number"),
        ] {
            let refused = super::scan(min, max, step).unwrap_err();
            assert!(refused.contains(why), "{min} {max} {step:?}: {refused}");
        }
    }

    #[test]
    fn the_same_command_twice_is_two_results() {
        let commands = vec!["sleep 0.1".to_string(); 3];
        let names: Vec<String> = plan(commands, &[], &[], &Helpers::default())
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, ["sleep 0.1", "sleep 0.1 (2)", "sleep 0.1 (3)"]);
    }
}
