use crate::analyze::{EnrichOptions, build_report};
use crate::atomic_file::OutputFile;
use crate::cli::{Policy, TimerArgs};
use crate::error::{Error, Result};
use crate::model::{LinearHistogram, TimerInfo, TimerOverall};
use crate::probe::timer::measure::IntervalStats;
use crate::probe::timer::{self, Display, MODE, TimerConfig};
use crate::report::xenomai::{self, Xenomai};
use crate::report::{OutputFormat, Reporter, hgrm, reporter};
use std::io::{self, Write};
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
    // Every output is opened before measuring, so a bad path costs no run.
    let mut out_file = super::open_output(&args.out)?;
    let hgrm_file = super::open_output(&args.hgrm)?;
    let gnuplot_file = match args.gnuplot.as_deref() {
        None | Some("-") => None,
        Some(path) => Some(OutputFile::create(Path::new(path))?),
    };
    let mut stdout = io::stdout().lock();
    let mut buffered_file = out_file.as_mut().map(io::BufWriter::new);
    let out: &mut dyn Write = match buffered_file.as_mut() {
        Some(file) => file,
        None => &mut stdout,
    };
    let format: OutputFormat = args.format.into();
    let xenomai_format = format == OutputFormat::Xenomai;
    let mut live = LiveLines {
        out: &mut *out,
        enabled: xenomai_format,
        quiet: args.quiet,
        lines_per_header: args.lines_per_header,
        info: TimerInfo {
            period_ns: args.period_us * 1000,
            mode: MODE.to_string(),
            priority: config.priority.unwrap_or(0),
            ..TimerInfo::default()
        },
        error: None,
    };
    let outcome = timer::run(&config, &mut live)?;
    if let Some(e) = live.error {
        // A reader that stopped early (`| head`) ended the test; that is not an error.
        return match e.kind() {
            io::ErrorKind::BrokenPipe => Ok(()),
            _ => Err(Error::io("output", e)),
        };
    }

    let mut run = outcome.run;
    if args.gnuplot.is_some() {
        let text = xenomai::shown(&run)
            .and_then(|b| b.histograms.iter().find(|h| h.of == "samples"))
            .map(xenomai::gnuplot)
            .unwrap_or_default();
        write_all(gnuplot_file, text.as_bytes())?;
    }
    for bench in &mut run.benchmarks {
        if !(args.histogram || args.stats || args.gnuplot.is_some()) {
            bench.histograms.clear();
        } else if !args.histogram {
            bench.histograms.iter_mut().for_each(stats_only);
        }
    }
    let report = build_report(vec![run], outcome.notes, &EnrichOptions::default())?;
    let written = if xenomai_format {
        Xenomai {
            live_part_done: true,
        }
        .render(&report, &mut *out)
    } else {
        reporter(format).render(&report, &mut *out)
    };
    written
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("output", e))?;
    drop(buffered_file);
    if let Some(file) = out_file {
        file.commit()?;
    }

    let run = &report.runs[0];
    let shown = xenomai::shown(run);
    if let Some(mut file) = hgrm_file
        && let Some(h) = shown
            .and_then(|b| b.metric("latency"))
            .and_then(|m| m.histogram.as_ref())
    {
        hgrm::write(&h.0, &mut file).map_err(|e| Error::io(&file.name(), e))?;
        file.commit()?;
    }
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    if let Some(path) = &args.check {
        let targets = crate::targets::Targets::load(path)?;
        super::check::gate(
            &targets,
            &report,
            crate::cli::CheckFormat::Table,
            None,
            &mut io::stderr(),
        )?;
    }
    let info = run.timer.as_ref();
    if let Some(hit) = info.and_then(|i| i.break_hit.as_ref()) {
        return Err(Error::Failed(format!(
            "break: thread {} woke {:.3} µs late at {:.3} s (--break {} µs)",
            hit.thread,
            hit.latency_ns as f64 / 1000.0,
            hit.at_s,
            args.break_us.unwrap_or_default()
        )));
    }
    if let (Some(limit), Some(max)) = (
        args.max_us,
        info.and_then(|i| i.overall.as_ref()).map(|o| o.max_ns),
    ) && max as f64 / 1000.0 > limit
    {
        return Err(Error::Failed(format!(
            "maximum latency {:.3} µs exceeded --max {limit} µs",
            max as f64 / 1000.0
        )));
    }
    Ok(())
}

/// Keeps only the HSS statistics of a histogram (Xenomai `-s` without `-h`).
fn stats_only(h: &mut LinearHistogram) {
    if h.reported.is_none() {
        h.reported = Some(h.stats());
        h.counts.clear();
    }
}

/// Writes `bytes` to a file opened earlier, or to stdout.
fn write_all(file: Option<OutputFile>, bytes: &[u8]) -> Result<()> {
    match file {
        Some(mut file) => {
            file.write_all(bytes)
                .map_err(|e| Error::io(&file.name(), e))?;
            file.commit()
        }
        None => io::stdout()
            .lock()
            .write_all(bytes)
            .map_err(|e| Error::io("stdout", e)),
    }
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

/// Xenomai's live lines: the header at the start, then one RTD line per second.
struct LiveLines<'a> {
    out: &'a mut dyn Write,
    enabled: bool,
    quiet: bool,
    lines_per_header: u64,
    info: TimerInfo,
    error: Option<io::Error>,
}

impl LiveLines<'_> {
    /// Writes a line; when the output is gone, stops the test (nobody reads it any more).
    fn emit(&mut self, text: &str) {
        if self.error.is_none()
            && let Err(e) = self
                .out
                .write_all(text.as_bytes())
                .and_then(|_| self.out.flush())
        {
            self.error = Some(e);
            crate::interrupt::request();
        }
    }
}

impl Display for LiveLines<'_> {
    fn started(&mut self, config: &TimerConfig) {
        if !self.enabled {
            return;
        }
        self.emit(&xenomai::header(config.period_us * 1000, MODE));
        self.emit(xenomai::WARMING_UP);
        if self.quiet {
            crate::error::say(&format!(
                "running quietly for {} seconds",
                config.duration_s
            ));
        }
    }

    fn interval(&mut self, index: u64, combined: &IntervalStats, so_far: &TimerOverall) {
        if !self.enabled || self.quiet {
            return;
        }
        if self.lines_per_header > 0 && index % self.lines_per_header == 0 {
            let header = xenomai::rtt_rth(index as i64 + 1, &self.info);
            self.emit(&header);
        }
        self.emit(&xenomai::rtd(
            combined.min,
            combined.avg(),
            combined.max,
            so_far,
        ));
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
