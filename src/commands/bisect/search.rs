//! The search once the ends are built: verify that they differ, halve the range commit by
//! commit (skipping what does not build or run), and say what was found, as a table and notes.

use super::*;

impl Bisection<'_> {
    /// Verifies the ends, then searches; what was tested, what to say, and how it ended.
    pub(super) fn search(&mut self) -> (Vec<Tested>, Vec<Note>, Result<()>) {
        let mut notes = Vec::new();
        let (good, bad, why_not) = match self.verify() {
            Ok(verified) => verified,
            Err(Stop::Fatal(e)) => return (Vec::new(), notes, Err(e)),
            Err(Stop::Commit(why)) => return (Vec::new(), notes, Err(Error::Peer(why))),
        };
        let mut tested = vec![good, bad];
        if let Some(why) = why_not {
            notes.push(Note::warning(why.clone()));
            return (tested, notes, Err(Error::Failed(why)));
        }
        let mut search = Search::new(self.commits.len());
        let mut step = 0;
        while let Some(i) = search.next() {
            step += 1;
            self.say(&format!(
                "step {step}: testing {} ({}); {} untested commit(s) in the range, about {} more \
                 step(s)",
                self.commits[i].short(),
                self.commits[i].subject,
                search.remaining(),
                search.steps_left()
            ));
            match self.test(i) {
                Ok(t) => {
                    match (&t.skipped, t.side) {
                        (Some((short, why)), _) => {
                            let commit = self.commits[i].short();
                            self.say(&format!("skipping {commit}: {short}"));
                            notes.push(Note::warning(format!(
                                "{commit} skipped, as `git bisect skip`: {short}: {why}"
                            )));
                            search.skip(i);
                        }
                        (None, Some((side, _))) => search.mark(i, side),
                        (None, None) => search.skip(i),
                    }
                    tested.push(t);
                }
                Err(Stop::Fatal(e)) => {
                    let (bad, _) = search.culprit();
                    notes.push(Note::warning(format!(
                        "stopped early: the first bad commit is {} or one of the {} untested \
                         commits before it",
                        self.commits[bad].short(),
                        search.remaining()
                    )));
                    return (tested, notes, Err(e));
                }
                Err(Stop::Commit(why)) => return (tested, notes, Err(Error::Peer(why))),
            }
        }
        notes.extend(self.conclusion(&search, &tested));
        (tested, notes, Ok(()))
    }

    /// The first bad commit, what might be it instead, and how sure the steps were.
    fn conclusion(&self, search: &Search, tested: &[Tested]) -> Vec<Note> {
        let (first, maybe) = search.culprit();
        let commit = &self.commits[first];
        let mut notes = vec![Note::info(format!(
            "first bad commit: {} {} ({})",
            commit.hash, commit.subject, commit.date
        ))];
        if !maybe.is_empty() {
            let list: Vec<&str> = maybe.iter().map(|&i| self.commits[i].short()).collect();
            notes.push(Note::warning(format!(
                "skipped commits just before it may be the first bad instead: {}",
                list.join(", ")
            )));
        }
        let steps: Vec<&Tested> = tested[2..].iter().filter(|t| t.side.is_some()).collect();
        let guessed = steps
            .iter()
            .filter(|t| t.side.is_some_and(|(_, u)| !u))
            .count();
        notes.push(match guessed {
            0 => Note::info(format!(
                "{} tested commit(s), each placed by the U test at alpha {} against both ends' \
                 interleaved rounds; {} checkouts built (the ends included) for {} commits",
                steps.len(),
                self.args.alpha,
                tested.len(),
                self.commits.len()
            )),
            n => Note::warning(format!(
                "{n} of {} tested commits could not be told from both ends within \
                 --max-rounds {} and went with the nearer median: the answer is less certain; \
                 more rounds or a quieter machine would settle them",
                steps.len(),
                self.args.max_rounds
            )),
        });
        notes
    }

    /// The table of every tested commit, in commit order.
    pub(super) fn report(&self, tested: &[Tested], notes: Vec<Note>) -> Report {
        let mut tested: Vec<&Tested> = tested.iter().collect();
        tested.sort_by_key(|t| t.commit);
        let good_median = tested.first().and_then(|t| t.median);
        let (unit, source_unit) = self
            .unit
            .clone()
            .unwrap_or_else(|| (Unit::parse("").unit, String::new()));
        let text = |text: String| Cell::Text { text };
        let rows = tested
            .iter()
            .map(|t| {
                let commit = &self.commits[t.commit];
                let p = |p: Option<f64>| p.map_or(Cell::Empty, |p| text(format!("{p:.3}")));
                let verdict = match (&t.skipped, t.side) {
                    (Some((short, _)), _) => format!("skipped: {short}"),
                    (None, Some((side, true))) => side.name().to_string(),
                    (None, Some((side, false))) => format!("{} (nearer median)", side.name()),
                    (None, None) => String::new(),
                };
                Row {
                    benchmark: commit.short().to_string(),
                    cells: vec![
                        text(commit.short().to_string()),
                        text(commit.subject.clone()),
                        t.median.map_or(Cell::Empty, |value| Cell::Value {
                            value,
                            unit: unit.clone(),
                            source_unit: source_unit.clone(),
                        }),
                        match (t.median, good_median) {
                            (Some(m), Some(g)) if g != 0.0 => {
                                text(format!("{:+.2}%", (m / g - 1.0) * 100.0))
                            }
                            _ => Cell::Empty,
                        },
                        p(t.judged.as_ref().map(|j| j.p_good)),
                        p(t.judged.as_ref().map(|j| j.p_bad)),
                        Cell::Count {
                            count: t.rounds as u64,
                        },
                        text(verdict),
                    ],
                }
            })
            .collect();
        let columns = [
            ("Commit", keys::COMMIT),
            ("Subject", "subject"),
            (self.metric.as_str(), keys::VALUE),
            ("vs good", keys::CHANGE),
            ("p vs good", "p_good"),
            ("p vs bad", "p_bad"),
            ("Rounds", keys::RUNS),
            ("Verdict", "verdict"),
        ]
        .into_iter()
        .map(|(header, key)| Column::new(header, key))
        .collect();
        Report {
            runs: Vec::new(),
            tables: vec![Table {
                title: Some(format!("bisect: {} (median per commit)", self.metric)),
                run: 0,
                cycle: None,
                columns,
                rows,
            }],
            notes,
            verdict: None,
        }
    }
}
