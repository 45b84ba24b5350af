use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Rounds of the A/A run: each round runs the suite twice, the two arms taking turns.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(3..=10_000))]
    pub rounds: u32,
    /// A change to size runs for (`2%`): how many runs a side, and how many paired rounds
    /// (`--runs auto`), detect it with 90 % power here.
    #[arg(long, value_name = "PCT", value_parser = super::bisect::percent)]
    pub effect: Option<f64>,
    /// Significance level the gates will use; a family of figures of one metric is judged
    /// at alpha divided by its size (Holm's first step), as a `--fail-on` rule over all of
    /// them would.
    #[arg(long, default_value = "0.05", value_parser = super::compare::alpha)]
    pub alpha: f64,
    /// Save the calibration as JSON to FILE, for `--calibration FILE` on compare, go, gbench
    /// and exec gates.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// The run to calibrate, as latkit takes it: `go …`, `gbench …` or `exec …` (after
    /// `--`). Its output options (--format, --out, --quiet) show the calibration.
    #[arg(value_name = "COMMAND", required = true, num_args = 1.., last = true)]
    pub command: Vec<String>,
}

impl CalibrateArgs {
    pub fn into_options(self) -> crate::error::Result<crate::commands::CalibrateOptions> {
        let inner = super::inner_command(&self.command, self.save.as_deref())?;
        Ok(crate::commands::CalibrateOptions {
            rounds: self.rounds,
            effect: self.effect,
            alpha: self.alpha,
            save: self.save,
            command: self.command,
            inner: Box::new(inner),
        })
    }
}
