use super::Env;
use super::Output;
use super::{say_warnings, targets, verdict_exit};
use crate::analyze::{EnrichOptions, build_report};
use crate::error::{Error, Result};
use crate::model::{Note, TimerInfo, TimerOverall};
use crate::probe::timer::measure::IntervalStats;
use crate::probe::timer::{self, Display, TimerConfig};
use crate::report::sink::{
    Destination, FanOut, Gnuplot, Hgrm, LiveEvent, LiveSecond, Rendered, TimerStatus, XenomaiLive,
};
use std::io;

/// A timer test as Xenomai's `latency` and cyclictest take it: the probe's settings and
/// what is printed and written of it.
pub struct TimerOptions {
    pub probe: TimerConfig,
    /// Data lines per RTT/RTH header; 0 prints none.
    pub lines_per_header: u64,
    /// Print the histograms' buckets (HSD lines).
    pub histogram: bool,
    /// Print the histograms' statistics (HSH/HSS lines).
    pub stats: bool,
    /// The every-sample histogram in Xenomai's gnuplot format (`-` is stdout).
    pub gnuplot: Option<std::path::PathBuf>,
    /// After the summary, fail if the maximum exceeded this many µs.
    pub max_us: Option<f64>,
    /// The distribution as HdrHistogram percentile text.
    pub hgrm: Option<std::path::PathBuf>,
    pub output: Output,
}

pub fn run(args: TimerOptions, env: &Env) -> Result<()> {
    let console = &env.console;
    let keep_buckets = args.histogram || args.gnuplot.is_some();
    let config = TimerConfig {
        keep_buckets,
        ..args.probe.clone()
    };
    // Every output and the targets file are opened before measuring: a bad path costs no run.
    let targets = targets(args.output.check.as_deref())?;
    let mut sinks = sinks(&args, env)?;
    // From here Ctrl-C stops the test and still reports it.
    env.interrupt.install();
    if args.histogram && config.duration_s == 0 && !args.output.quiet {
        say_dash_h_is_the_histogram(console);
    }
    let mut live = Live {
        sinks: &mut sinks,
        quiet: args.output.quiet,
        xenomai: args.output.format.can.follow_a_timer,
        warned: 0,
        info: TimerInfo {
            period_ns: config.period_us * 1000,
            mode: config.mode.xenomai_name().to_string(),
            priority: config.priority.unwrap_or(0),
            requested_s: config.duration_s,
            ..TimerInfo::default()
        },
        error: None,
    };
    let outcome = timer::run(&config, &mut live, env.stamp())?;
    // Warnings of the measuring threads' own setup (SCHED_FIFO) come with the outcome.
    if !args.output.quiet {
        say_warnings(
            &outcome.notes[live.warned.min(outcome.notes.len())..],
            console,
        );
    }
    if let Some((name, e)) = live.error {
        // A reader that stopped early (`| head`) ended the test; that is not an error.
        return match e.kind() {
            io::ErrorKind::BrokenPipe => Ok(()),
            _ => Err(Error::writing(&name, e)),
        };
    }
    let mut run = outcome.run;
    if outcome.interrupted && no_samples(&run) {
        // A table of 0.000s would read as a perfect machine.
        console.say(&format!(
            "latkit: interrupted during the warm-up ({} s): no samples were taken, nothing \
             was measured",
            config.warmup_s
        ));
        return Err(Error::Interrupted);
    }
    // Without -h or -g the probe kept only the histograms' statistics; without -s either,
    // nothing of them is reported.
    if !(keep_buckets || args.stats) {
        run.benchmarks.iter_mut().for_each(|b| b.histograms.clear());
    }
    let opts = EnrichOptions {
        targets,
        ..EnrichOptions::default()
    };
    let mut report = build_report(vec![run], outcome.notes, &opts)?;
    sinks.finish(&mut report)?;
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    if outcome.disturbed.is_some() {
        // The warning that says what changed is in the report and on stderr already.
        return Err(Error::Environment(
            "another tool changed timerlat's settings during the test (see the warning)".into(),
        ));
    }
    verdict_exit(&report, None)?;
    match crate::analyze::gate::timer_limits(&report.runs, config.break_us, args.max_us) {
        Some(missed) => Err(Error::Failed(missed)),
        None => Ok(()),
    }
}

/// `-h` is Xenomai's and cyclictest's histogram; someone asking for help would otherwise
/// watch an endless test start.
fn say_dash_h_is_the_histogram(console: &crate::env::Console) {
    console.say(
        "latkit: -h is --histogram (as in Xenomai and cyclictest), help is --help; measuring \
         until Ctrl-C (-T S stops after S seconds)",
    );
}

/// Whether the test ended before its first sample counted (Ctrl-C in the warm-up).
fn no_samples(run: &crate::model::Run) -> bool {
    run.benchmarks
        .iter()
        .filter_map(|b| b.timer.as_ref())
        .all(|t| t.samples.unwrap_or(0) == 0)
}

/// The outputs the arguments ask for: the report (Xenomai's text live, or another format at
/// the end), `--hgrm`, `-g`, and the verdict on stderr for `--check`.
fn sinks(args: &TimerOptions, env: &super::Env) -> Result<FanOut> {
    let (output, console) = (&args.output, &env.console);
    let format = output.format;
    let dest = Destination::open(output.out.as_deref(), &console.stdout)?;
    let mut sinks = FanOut::new(output.quiet, console, env.report_time()?);
    if format.can.follow_a_timer {
        sinks.push(XenomaiLive::new(
            dest,
            output.quiet,
            args.lines_per_header,
            args.histogram,
        ));
    } else {
        // Nothing else shows on the terminal until the end: a status line does meanwhile.
        if let Some(stderr) = console.progress(output.quiet) {
            sinks.push(TimerStatus::on(stderr));
        }
        sinks.push(Rendered::new(format, dest));
    }
    super::add_extras(&mut sinks, output, &env.vars)?;
    if let Some(path) = &args.hgrm {
        sinks.push(Hgrm(Destination::open(Some(path), &console.stdout)?));
    }
    if let Some(target) = &args.gnuplot {
        sinks.push(Gnuplot(Destination::open(
            Some(target.as_path()),
            &console.stdout,
        )?));
    }
    sinks.push_verdict_if(output.check.is_some());
    Ok(sinks)
}

/// Hands the probe's live progress to every sink; the first output error stops the test
/// (nobody reads it any more).
struct Live<'a> {
    sinks: &'a mut FanOut,
    /// -q: nothing on the terminal but the result.
    quiet: bool,
    /// The report is Xenomai's text, whose `-q` says it runs quietly, as Xenomai does.
    xenomai: bool,
    /// How many setup warnings were already said.
    warned: usize,
    info: TimerInfo,
    error: Option<(String, io::Error)>,
}

impl Live<'_> {
    fn keep(&mut self, result: std::result::Result<(), (String, io::Error)>) {
        if let Err(e) = result {
            self.error = Some(e);
            crate::interrupt::request();
        }
    }
}

impl Display for Live<'_> {
    fn started(&mut self, config: &TimerConfig, warnings: &[Note]) {
        self.warned = warnings.len();
        // The priority in force: none when SCHED_FIFO was refused.
        self.info.priority = config.priority.unwrap_or(0);
        if !self.quiet {
            say_warnings(warnings, self.sinks.console());
        } else if self.xenomai {
            self.sinks.console().say(&format!(
                "running quietly for {} seconds",
                config.duration_s
            ));
        }
        let started = self.sinks.live(&LiveEvent::TimerStarted(&self.info));
        self.keep(started);
    }

    fn interval(&mut self, index: u64, combined: &IntervalStats, so_far: &TimerOverall) {
        if self.error.is_some() {
            return;
        }
        let second = self.sinks.live(&LiveEvent::TimerSecond(&LiveSecond {
            index,
            min_ns: combined.min,
            avg_ns: combined.avg(),
            max_ns: combined.max,
            so_far: so_far.clone(),
        }));
        self.keep(second);
    }
}
