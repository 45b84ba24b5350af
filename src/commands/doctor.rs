use crate::error::{Error, Result};

/// How the doctor's checks are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DoctorFormat {
    /// One line per check, and a line of advice under each problem.
    Text,
    /// The checks as a JSON array.
    Json,
}

pub fn run(format: DoctorFormat) -> Result<()> {
    let checks = crate::host::doctor::checks();
    let mut out = String::new();
    match format {
        DoctorFormat::Json => {
            out =
                serde_json::to_string_pretty(&checks).map_err(|e| Error::Failed(e.to_string()))?;
            out.push('\n');
        }
        DoctorFormat::Text => {
            for c in &checks {
                out.push_str(&format!(
                    "{:<5} {:<16} {}\n",
                    c.status.label(),
                    c.name,
                    c.found
                ));
                if !c.advice.is_empty() {
                    out.push_str(&format!("{:<22}→ {}\n", "", c.advice));
                }
            }
        }
    }
    crate::report::sink::Destination::Stdout.write_whole(out.as_bytes())
}
