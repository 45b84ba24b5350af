use super::{say_warnings, targets, verdict_exit};
use crate::analyze::{EnrichOptions, build_report};
use crate::cli::{Policy, TimerArgs};
use crate::error::{Error, Result};
use crate::model::{Note, TimerInfo, TimerOverall};
use crate::probe::timer::measure::IntervalStats;
use crate::probe::timer::{self, Display, MODE, TimerConfig};
use crate::report::XENOMAI;
use crate::report::sink::{Destination, FanOut, Gnuplot, Hgrm, LiveSecond, Rendered, XenomaiLive};
use std::io;
use std::path::Path;

pub fn run(args: TimerArgs) -> Result<()> {
    let cpus = parse_cpu_list(args.cpu.as_deref())?;
    let keep_buckets = args.histogram || args.gnuplot.is_some();
    let config = TimerConfig {
        period_us: args.period_us,
        duration_s: args.duration_s,
        warmup_s: args.warmup_s,
        cpus,
        priority: (args.policy == Policy::Fifo).then_some(args.priority),
        mlock: !args.no_mlock,
        dma_latency: !args.no_dma_latency,
        method: args.method.into(),
        hist_buckets: args.hist_size as usize,
        bucket_ns: args.bucket_ns,
        keep_buckets,
        freeze_trace: args.freeze_trace,
        break_us: args.break_us,
    };
    // Every output and the targets file are opened before measuring: a bad path costs no run.
    let targets = targets(args.output.check.as_deref())?;
    let mut sinks = sinks(&args)?;
    // From here Ctrl-C stops the test and still reports it.
    crate::interrupt::install();
    if args.histogram && args.duration_s == 0 && !args.output.quiet {
        // `-h` is Xenomai's and cyclictest's histogram; someone asking for help would
        // otherwise watch an endless test start.
        crate::error::say(
            "latkit: -h is --histogram (as in Xenomai and cyclictest), help is --help; \
             measuring until Ctrl-C (-T S stops after S seconds)",
        );
    }
    let mut live = Live {
        sinks: &mut sinks,
        quiet: args.output.quiet,
        xenomai: args.output.format == XENOMAI,
        warned: 0,
        info: TimerInfo {
            period_ns: args.period_us * 1000,
            mode: MODE.to_string(),
            priority: config.priority.unwrap_or(0),
            ..TimerInfo::default()
        },
        error: None,
    };
    let outcome = timer::run(&config, &mut live)?;
    // Warnings of the measuring threads' own setup (SCHED_FIFO) come with the outcome.
    if !args.output.quiet {
        say_warnings(&outcome.notes[live.warned.min(outcome.notes.len())..]);
    }
    if let Some((name, e)) = live.error {
        // A reader that stopped early (`| head`) ended the test; that is not an error.
        return match e.kind() {
            io::ErrorKind::BrokenPipe => Ok(()),
            _ => Err(Error::io(&name, e)),
        };
    }
    let mut run = outcome.run;
    // Without -h or -g the probe kept only the histograms' statistics; without -s either,
    // nothing of them is reported.
    if !(keep_buckets || args.stats) {
        run.benchmarks.iter_mut().for_each(|b| b.histograms.clear());
    }
    let opts = EnrichOptions {
        targets,
        ..EnrichOptions::default()
    };
    let report = build_report(vec![run], outcome.notes, &opts)?;
    sinks.finish(&report)?;
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    verdict_exit(&report)?;
    match crate::analyze::gate::timer_limits(&report.runs, args.break_us, args.max_us) {
        Some(missed) => Err(Error::Failed(missed)),
        None => Ok(()),
    }
}

/// The outputs the arguments ask for: the report (Xenomai's text live, or another format at
/// the end), `--hgrm`, `-g`, and the verdict on stderr for `--check`.
fn sinks(args: &TimerArgs) -> Result<FanOut> {
    let output = &args.output;
    let format = crate::cli::output_format(&output.format)?;
    let dest = Destination::open(output.out.as_deref())?;
    let mut sinks = FanOut::default();
    if format.name == XENOMAI {
        sinks.push(XenomaiLive::new(
            dest,
            output.quiet,
            args.lines_per_header,
            args.histogram,
        ));
    } else {
        sinks.push(Rendered::new(format, dest));
    }
    super::add_extras(&mut sinks, output)?;
    if let Some(path) = &args.hgrm {
        sinks.push(Hgrm(Destination::open(Some(path))?));
    }
    if let Some(target) = &args.gnuplot {
        sinks.push(Gnuplot(Destination::open(Some(Path::new(target)))?));
    }
    sinks.push_verdict_if(output.check.is_some());
    Ok(sinks)
}

/// `0`, `0,2`, `1-3`, `all`: CPUs that exist on this machine.
fn parse_cpu_list(list: Option<&str>) -> Result<Vec<usize>> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    if list == "all" {
        return Ok((0..online).collect());
    }
    let bad = |why: String| {
        Error::Input(format!(
            "--cpu {list}: {why} (expected e.g. `0`, `0,2`, `1-3` or `all`)"
        ))
    };
    let mut cpus = Vec::new();
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let parse = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| bad(format!("`{part}` is not a CPU number or range")))
        };
        let (a, b) = (parse(a)?, parse(b)?);
        if a > b {
            return Err(bad(format!("range `{part}` is backwards")));
        }
        cpus.extend(a..=b);
    }
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= online) {
        return Err(bad(format!(
            "CPU {cpu} does not exist (this machine has {online})"
        )));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
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
            say_warnings(warnings);
        } else if self.xenomai {
            crate::error::say(&format!(
                "running quietly for {} seconds",
                config.duration_s
            ));
        }
        let started = self.sinks.started(&self.info);
        self.keep(started);
    }

    fn interval(&mut self, index: u64, combined: &IntervalStats, so_far: &TimerOverall) {
        if self.error.is_some() {
            return;
        }
        let second = self.sinks.second(&LiveSecond {
            index,
            min_ns: combined.min,
            avg_ns: combined.avg(),
            max_ns: combined.max,
            so_far: so_far.clone(),
        });
        self.keep(second);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list(None).unwrap(), Vec::<usize>::new());
        assert_eq!(parse_cpu_list(Some("0")).unwrap(), [0]);
        let online = std::thread::available_parallelism().unwrap().get();
        assert_eq!(parse_cpu_list(Some("all")).unwrap().len(), online);
        assert!(
            parse_cpu_list(Some("9999"))
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        assert!(parse_cpu_list(Some("x")).is_err());
        assert!(parse_cpu_list(Some("1-0")).is_err());
    }
}
