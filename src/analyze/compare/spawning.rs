//! How each side's commands were started: spawned directly, or through a shell whose start-up
//! was subtracted. The two differ by what spawning costs, which a comparison would otherwise
//! read as the command's own change; hyperfine's JSON does not say which it did.

use super::CompareInput;
use crate::model::{Note, Run, SourceKind, vocab};

/// How one input's commands were started, where it timed commands.
#[derive(Clone, Debug, PartialEq)]
enum Spawned {
    /// latkit's own record: `none` (directly) or the shell.
    Recorded(String),
    /// hyperfine's JSON: through its default shell, or directly with `-N`; it does not say.
    Unrecorded,
}

fn spawned(run: &Run) -> Option<Spawned> {
    if run.source.format == "hyperfine" {
        return Some(Spawned::Unrecorded);
    }
    if run.source.kind != SourceKind::Command {
        return None;
    }
    let shell = run.config.iter().find(|c| c.key == vocab::SHELL_SETTING)?;
    Some(Spawned::Recorded(shell.value.clone()))
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
/// (two latkit runs that differ are told apart as their environments are).
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
