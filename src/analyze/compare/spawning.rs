//! How each side's commands were started: spawned directly, or through a shell whose start-up
//! was subtracted. The two differ by what spawning costs, which a comparison would otherwise
//! read as the command's own change; hyperfine's JSON does not say which it did.

use super::CompareInput;
use crate::model::{Note, Run, vocab};

/// How one input's commands were started, where it timed commands.
#[derive(Clone, Debug, PartialEq)]
enum Spawned {
    /// As the run records it: `none` (directly) or the shell.
    Recorded(String),
    /// hyperfine's JSON: through its default shell, or directly with `-N`; it does not say.
    Unrecorded,
}

fn spawned(run: &Run) -> Option<Spawned> {
    let shell = run.config.iter().find(|c| c.key == vocab::SHELL_SETTING)?;
    Some(match shell.value.as_str() {
        vocab::SHELL_UNRECORDED => Spawned::Unrecorded,
        recorded => Spawned::Recorded(recorded.to_string()),
    })
}

fn described(spawned: &Spawned) -> String {
    match spawned {
        Spawned::Recorded(shell) if shell == "none" => "spawned its commands directly".into(),
        Spawned::Recorded(shell) => {
            format!("ran its commands through `{shell}`, its start-up subtracted")
        }
        Spawned::Unrecorded => "is hyperfine's JSON, which does not record whether its commands \
             ran through a shell (hyperfine's default, its start-up subtracted) or were spawned \
             directly (-N)"
            .into(),
    }
}

/// A warning for each input whose commands may have been started otherwise than the base's
/// (two that record it and differ are told apart as their environments are).
pub(super) fn notes(inputs: &[CompareInput]) -> Vec<Note> {
    let of = |input: &CompareInput| input.runs.iter().find_map(spawned);
    let Some(base) = inputs.first().and_then(of) else {
        return Vec::new();
    };
    inputs[1..]
        .iter()
        .filter_map(|input| {
            let other = of(input)?;
            let unsure = base == Spawned::Unrecorded || other == Spawned::Unrecorded;
            (unsure && base != other).then(|| {
                Note::warning(format!(
                    "`{}` {} and `{}` {}: starting a command costs up to a millisecond more \
                     through a shell, so a small change may be the shell's, not the command's; \
                     time both the same way (hyperfine -N, or latkit exec --shell sh)",
                    inputs[0].label,
                    described(&base),
                    input.label,
                    described(&other)
                ))
            })
        })
        .collect()
}
