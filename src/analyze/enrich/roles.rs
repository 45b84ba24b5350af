//! A table's roles checked on its rows: the part and the baseline each name one benchmark,
//! missing roles are said, and the built-in preset stands aside where its names are unclear.

use super::Group;
use super::table::TableContext;
use crate::analyze::attribution::{Attribution, Pattern};
use crate::error::{Error, Result};
use crate::model::{Benchmark, Note};

/// `ctx` with its roles checked on `group`. A role the user gave (a suite file's, `--baseline`)
/// that names several benchmarks is exit 2 naming them; the built-in `preset`'s stands aside
/// with a warning, its columns left out, never the first of them taken.
pub(super) fn checked<'a>(
    ctx: TableContext<'a>,
    group: &Group,
    preset: bool,
    baseline: Option<&Pattern>,
    notes: &mut Vec<Note>,
) -> Result<TableContext<'a>> {
    let within = ctx.title.as_deref().map(|t| format!(" in {t}"));
    let within = within.unwrap_or_default();
    if let Some(pattern) = baseline {
        baseline_unique(pattern, &group.members, &within)?;
    }
    let ctx = match ctx
        .attribution
        .map(|a| a.check_unique(&group.members, &within))
    {
        Some(Err(why)) if preset => {
            notes.push(Note::warning(format!("{why}; the preset is not applied")));
            TableContext {
                attribution: None,
                baseline: ctx.baseline.filter(|(_, role)| role.is_none()),
                ..ctx
            }
        }
        Some(Err(why)) => return Err(why),
        _ => ctx,
    };
    if let Some(a) = ctx.attribution {
        note_missing_roles(a, &ctx, group, notes);
    }
    Ok(ctx)
}

/// A `--baseline` pattern names one benchmark of a table, or the table cannot say what 100 %
/// is: exit 2 naming those it names.
fn baseline_unique(pattern: &Pattern, members: &[&Benchmark], within: &str) -> Result<()> {
    let named = pattern.naming(members);
    if named.len() > 1 {
        return Err(Error::Input(format!(
            "baseline `{}` names {} benchmarks{within} ({}): name one (its full name, as the \
             harness printed it, names it alone)",
            pattern.glob,
            named.len(),
            named.join(", ")
        )));
    }
    Ok(())
}

/// An info note naming the attribution roles no benchmark of `group` plays.
fn note_missing_roles(a: &Attribution, ctx: &TableContext, group: &Group, notes: &mut Vec<Note>) {
    let names: Vec<_> = group.members.iter().map(|b| &b.name).collect();
    let missing = a.missing_roles(&names);
    if !missing.is_empty() {
        notes.push(Note::info(format!(
            "{}{}: no benchmark for role {}",
            a.name,
            ctx.title
                .as_deref()
                .map(|t| format!(" in {t}"))
                .unwrap_or_default(),
            missing.join(", ")
        )));
    }
}
