use crate::error::{Error, Result};

/// How the doctor's checks are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DoctorFormat {
    /// One line per check, and a line of advice under each problem.
    Text,
    /// The checks as a JSON array.
    Json,
}

/// The text's width: a finding or advice longer than a line goes on under itself.
const TEXT_WIDTH: usize = 80;

/// `lead` then `text` wrapped between words within [`TEXT_WIDTH`], its later lines indented
/// to where it started.
fn hanging(lead: &str, text: &str) -> String {
    let indent = lead.chars().count();
    let mut out = String::new();
    for (i, part) in crate::report::wrap(text, Some(TEXT_WIDTH - indent), 0)
        .iter()
        .enumerate()
    {
        match i {
            0 => out += lead,
            _ => out += &" ".repeat(indent),
        }
        out += part.trim_start();
        out.push('\n');
    }
    out
}

pub fn run(format: DoctorFormat, env: &super::Env) -> Result<()> {
    let checks = crate::host::doctor::checks();
    let mut out = String::new();
    match format {
        DoctorFormat::Json => {
            out =
                serde_json::to_string_pretty(&checks).map_err(|e| Error::Output(e.to_string()))?;
            out.push('\n');
        }
        DoctorFormat::Text => {
            for c in &checks {
                let label = format!("{:<5} {:<16} ", c.status.label(), c.name);
                out += &hanging(&label, &c.found);
                if !c.advice.is_empty() {
                    out += &hanging(&format!("{:<22}→ ", ""), &c.advice);
                }
            }
        }
    }
    crate::report::sink::print_whole(&env.console, out.as_bytes())
}
