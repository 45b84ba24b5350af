//! `latkit calibrate`: the suite against itself (A/A), and what that says about the changes
//! this machine can tell apart from its own noise.

use super::Env;
use super::{Command, exec, gbench, go};
use crate::analyze::Report;
use crate::analyze::noise_floor::{self, Calibration, Floor, POWER};
use crate::analyze::view::{Cell, Column, Row, Table, keys};
use crate::error::{Error, Result};
use crate::model::Note;
use std::path::{Path, PathBuf};

pub struct CalibrateOptions {
    /// A/A rounds.
    pub rounds: u32,
    /// The change to size runs for, in percent.
    pub effect: Option<f64>,
    pub alpha: f64,
    pub save: Option<PathBuf>,
    /// The calibrated command line, as given.
    pub command: Vec<String>,
    pub inner: Box<Command>,
}

/// What the table and the saved file are of: the options but the command to run.
struct Asked {
    effect: Option<f64>,
    alpha: f64,
    command: Vec<String>,
}

pub fn run(args: CalibrateOptions, env: &Env) -> Result<()> {
    env.interrupt.install();
    let asked = Asked {
        effect: args.effect,
        alpha: args.alpha,
        command: args.command,
    };
    let aa = match *args.inner {
        Command::Go(options) => go::against_itself(options, args.rounds, env)?,
        Command::Gbench(options) => gbench::against_itself(options, args.rounds, env)?,
        Command::Exec(options) => exec::against_itself(options, args.rounds, env)?,
        _ => unreachable!("the command line admits go, gbench and exec"),
    };
    let floors = noise_floor::from_rounds(&aa.done.rounds);
    if floors.is_empty() {
        return Err(match aa.done.interrupted {
            true => Error::Interrupted,
            false => Error::Peer(
                "no figure was measured by both arms in two or more rounds, so there is no \
                 noise to tell"
                    .into(),
            ),
        });
    }
    let mut notes = aa.done.notes;
    notes.extend(calibration_notes(&floors, &asked, aa.runs));
    // Figures with the same value in every run (a Go suite's B/op and allocs/op, mostly) are
    // one line, not a row each: nothing about them varies to tabulate.
    let constant: Vec<&Floor> = floors.iter().filter(|f| never_varied(f)).collect();
    notes.extend(constant_note(&constant, &floors));
    let mut report = Report {
        generated: None,
        runs: Vec::new(),
        tables: vec![table(&floors, &asked, aa.runs)],
        notes,
        verdict: None,
    };
    if let Some(path) = &args.save {
        save(path, &floors, &asked, aa.runs, env.host.name())?;
        if !aa.quiet {
            env.console
                .say(&format!("latkit: wrote {}", path.display()));
        }
    }
    aa.sinks.finish(&mut report)?;
    match aa.done.interrupted {
        true => Err(Error::Interrupted),
        false => Ok(()),
    }
}

/// A figure with the same value in every run of both arms.
fn never_varied(floor: &Floor) -> bool {
    floor.spread == 0.0 && floor.paired_spread == 0.0 && floor.aa_change == 0.0
}

/// One line for the figures that never varied, by metric.
fn constant_note(constant: &[&Floor], floors: &[Floor]) -> Option<Note> {
    let mut metrics: Vec<&str> = constant.iter().map(|f| f.metric.as_str()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    let parts: Vec<String> = metrics
        .iter()
        .map(|metric| {
            let of = |list: &[&Floor]| list.iter().filter(|f| f.metric == *metric).count();
            let all = floors.iter().filter(|f| f.metric == *metric).count();
            match of(constant) {
                n if n == all => format!("{metric} of every benchmark"),
                n => format!("{metric} of {n} of {all} benchmarks"),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| {
        Note::info(format!(
            "never varied (the same value in every run, so not tabulated; any change in \
             them shows beside the same repeatability): {}",
            parts.join(", ")
        ))
    })
}

/// The alpha each figure is judged at: a rule over every figure of its metric tests the
/// smallest p at alpha divided by their number.
fn alpha_each(floors: &[Floor], floor: &Floor, alpha: f64) -> f64 {
    let family = floors.iter().filter(|f| f.metric == floor.metric).count();
    alpha / family.max(1) as f64
}

fn table(floors: &[Floor], args: &Asked, runs: u64) -> Table {
    let mut columns = vec![
        Column::new("benchmark", keys::BENCHMARK),
        Column::new("metric", "metric"),
        Column::new("rounds", keys::RUNS),
        Column::new("run to run %", "variation").in_unit("%"),
        Column::new("A/A change (95 % CI)", "aa_change").dropped_at(2),
        Column::new(format!("detectable %, {runs} runs"), "detectable").in_unit("%"),
    ];
    if let Some(effect) = args.effect {
        columns.push(Column::new(format!("runs for {effect}%"), "runs_needed"));
        columns
            .push(Column::new(format!("auto rounds for {effect}%"), "rounds_needed").dropped_at(1));
    }
    let rows = floors
        .iter()
        .filter(|floor| !never_varied(floor))
        .map(|floor| {
            let alpha = alpha_each(floors, floor, args.alpha);
            let interval = floor.aa_interval.map_or_else(String::new, |(low, high)| {
                format!(" ({low:+.1} to {high:+.1})")
            });
            let mut cells = vec![
                Cell::Text {
                    text: floor.shown.clone(),
                },
                Cell::Text {
                    text: floor.metric.clone(),
                },
                Cell::Count {
                    count: floor.rounds as u64,
                },
                Cell::Percent {
                    percent: floor.spread.exp_m1() * 100.0,
                },
                Cell::Text {
                    text: format!("{:+.2} %{interval}", floor.aa_change),
                },
                floor
                    .detectable(runs, alpha)
                    .map_or(Cell::Empty, |percent| Cell::Percent { percent }),
            ];
            if let Some(effect) = args.effect {
                let count = |n: Option<u64>| match n {
                    Some(count) => Cell::Count { count },
                    None => Cell::Text {
                        text: format!("> {}", noise_floor::MOST_RUNS),
                    },
                };
                cells.push(count(floor.runs_needed(effect, alpha)));
                cells.push(count(floor.rounds_needed(effect, alpha)));
            }
            Row {
                benchmark: floor.bench.clone(),
                cells,
            }
        })
        .collect();
    Table {
        title: Some(format!(
            "Noise floor: {} against itself, {} A/A rounds",
            args.command.join(" "),
            floors.iter().map(|f| f.rounds).max().unwrap_or(0)
        )),
        run: 0,
        cycle: None,
        columns,
        rows,
    }
}

/// How to read the table, and the figures whose arms differ with nothing changed.
fn calibration_notes(floors: &[Floor], args: &Asked, runs: u64) -> Vec<Note> {
    let mut notes = vec![Note::info(format!(
        "run to run: the standard deviation of one run, in percent; detectable: the smallest \
         change a one-sided test detects with {:.0} % power with {runs} runs a side (the runs \
         the command takes alone), at alpha {} divided by the number of figures of its metric \
         (Holm's first step for a --fail-on rule over them all); empty when no change can be \
         told with so few",
        POWER * 100.0,
        args.alpha
    ))];
    if args.effect.is_some() {
        notes.push(Note::info(
            "runs for: runs a side a fixed comparison needs; auto rounds: paired rounds a \
             fixed paired design needs (--runs auto decides larger changes sooner)",
        ));
    }
    let counted: Vec<&Floor> = floors.iter().filter(|f| f.counted).collect();
    if let Some(noisiest) = counted
        .iter()
        .map(|f| f.spread.exp_m1() * 100.0)
        .reduce(f64::max)
    {
        notes.push(Note::info(format!(
            "{} counted figure(s) (instructions): run to run they varied by {noisiest:.4} % at \
             most, within the {} % counting floor: the smallest change they tell is the floor, \
             with the three counts a side latkit takes, whatever else the machine does",
            counted.len(),
            crate::analyze::counted::FLOOR_PERCENT
        )));
    }
    let varying: Vec<String> = (floors.iter().filter(|f| f.counts_vary))
        .map(|f| {
            format!(
                "{} {} ({:.2} %)",
                f.shown,
                f.metric,
                f.spread.exp_m1() * 100.0
            )
        })
        .collect();
    if !varying.is_empty() {
        notes.push(Note::warning(format!(
            "counted figure(s) whose counts vary run to run beyond the {} % floor (random \
             seeds, crypto/rand, hashed addresses): {}; their changes are tested as times \
             are, and the table gives the smallest change each tells",
            crate::analyze::counted::FLOOR_PERCENT,
            varying.join(", ")
        )));
    }
    for floor in floors {
        if let Some((low, high)) = floor.aa_interval.filter(|&(l, h)| l > 0.0 || h < 0.0) {
            notes.push(Note::warning(format!(
                "{} {}: the second arm differs from the first by {:+.2} % (95 % CI {low:+.2} \
                 to {high:+.2}) with nothing changed between them: the order of runs matters \
                 on this machine (warm-up, caches, frequency); warm up longer, or interleave \
                 any comparison",
                floor.shown, floor.metric, floor.aa_change
            )));
        }
    }
    notes
}

fn save(
    path: &Path,
    floors: &[Floor],
    args: &Asked,
    runs: u64,
    host: Option<String>,
) -> Result<()> {
    let calibration = Calibration {
        latkit_calibration: 1,
        host,
        command: args.command.clone(),
        runs,
        figures: floors.to_vec(),
    };
    let mut json = serde_json::to_vec_pretty(&calibration)
        .map_err(|e| Error::Output(format!("could not encode the calibration: {e}")))?;
    json.push(b'\n');
    crate::atomic_file::write_file(path, &json)
}

/// Reads a calibration `--save` wrote; on another host than `env`'s it still loads, with a
/// warning.
pub fn load(path: &Path, env: &Env) -> Result<Calibration> {
    let name = path.display().to_string();
    let text = crate::error::read_text(path)?;
    let calibration: Calibration = serde_json::from_str(&text).map_err(|e| {
        Error::Input(format!(
            "{name}:{}: not a latkit calibration ({e}); write one with `latkit calibrate --save`",
            e.line()
        ))
    })?;
    if calibration.latkit_calibration != 1 {
        return Err(Error::Input(format!(
            "{name}: calibration format {} is not one this latkit reads (1)",
            calibration.latkit_calibration
        )));
    }
    let unfit = |s: f64| !(s.is_finite() && s >= 0.0);
    if let Some(f) =
        (calibration.figures.iter()).find(|f| unfit(f.spread) || unfit(f.paired_spread))
    {
        return Err(Error::Input(format!(
            "{name}: {} {}: a spread must be a finite number of zero or more",
            f.bench, f.metric
        )));
    }
    let here = env.host.name();
    if let (Some(there), Some(here)) = (&calibration.host, &here)
        && there != here
    {
        env.console.say_warning(&format!(
            "{name} was calibrated on {there}, not on this host ({here}): its noise floor \
             may not hold here"
        ));
    }
    Ok(calibration)
}
