//! The search once the ends are built: verify that they differ, halve the range commit by
//! commit (skipping what does not build or run), stop at a commit the tests cannot place, and
//! say what was found, as a table and notes.

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
            notes.push(Note::warning(why.to_string()));
            return (tested, notes, Err(why));
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
            let t = match self.test(i) {
                Ok(t) => t,
                Err(Stop::Fatal(e)) => {
                    notes.push(Note::warning(format!(
                        "stopped early: {}",
                        self.range_claim(&search, &tested)
                    )));
                    return (tested, notes, Err(e));
                }
                Err(Stop::Commit(why)) => return (tested, notes, Err(Error::Peer(why))),
            };
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
                (None, None) => {
                    let why = self.undecided(&t, &search, &tested);
                    tested.push(t);
                    notes.push(Note::warning(why.clone()));
                    return (tested, notes, Err(Error::Undecided(why)));
                }
            }
            tested.push(t);
        }
        notes.extend(self.conclusion(&search, &tested));
        let guessed = tested.iter().filter(guessed).count();
        let outcome = match guessed {
            0 => Ok(()),
            n => Err(Error::Undecided(format!(
                "{n} step(s) of the search were guesses (--guess): the named commit is not \
                 decided"
            ))),
        };
        (tested, notes, outcome)
    }

    /// What the steps decided so far say: the commits that must hold the first bad one.
    fn range_claim(&self, search: &Search, tested: &[Tested]) -> String {
        let range = search.range();
        let (first, last) = (*range.start(), *range.end());
        let short = |i: usize| self.commits[i].short();
        let claim = match first == last {
            true => format!("the first bad commit is {}", short(last)),
            false => format!(
                "the first bad commit is one of the {} commits {}..{} (after {}, up to and \
                 including {})",
                last - first + 1,
                short(first - 1),
                short(last),
                short(first - 1),
                short(last)
            ),
        };
        match tested.iter().any(|t| guessed(&t)) {
            true => format!("{claim}, if the guesses (--guess) hold"),
            false => claim,
        }
    }

    /// Why the search stops at `t`, a commit neither test placed: its figures, the range that
    /// holds the first bad commit, and what would place it.
    fn undecided(&self, t: &Tested, search: &Search, tested: &[Tested]) -> String {
        let commit = &self.commits[t.commit];
        let judged = t.judged.as_ref().expect("an undecided commit was measured");
        let advice = undecided_advice(t.needed, t.rounds, self.args.threshold);
        let busy = self.busy().map(|b| format!("; {b}")).unwrap_or_default();
        format!(
            "undecided: {} ({}) could not be placed within --max-rounds {}: {} {:+.2}% from good \
             (p={}), bad {:+.2}% from good (p={} that bad is worse than it), in the same \
             {} rounds; {}; {advice}{busy}",
            commit.short(),
            commit.subject,
            self.args.max_rounds,
            self.metric,
            judged.change,
            p_text(judged.p_good),
            judged.bad_change,
            p_text(judged.p_bad),
            t.rounds,
            self.range_claim(search, tested)
        )
    }

    /// The first bad commit with its own size, what might be it instead, and how sure the
    /// steps were.
    fn conclusion(&self, search: &Search, tested: &[Tested]) -> Vec<Note> {
        let (first, maybe) = search.culprit();
        let commit = &self.commits[first];
        let own = tested
            .iter()
            .find(|t| t.commit == first)
            .and_then(|t| Some((t.judged.as_ref()?, t.level)));
        let size = match own {
            // The bad end itself: its size is the ends' comparison.
            Some((judged, _)) if first == self.commits.len() - 1 => format!(
                ": {} {:+.2}% from good in the ends' rounds",
                self.metric, judged.change
            ),
            Some((judged, level)) => format!(
                ": {} {:+.2}% from good in its own rounds (bad {:+.2}% in them){}",
                self.metric,
                judged.change,
                judged.bad_change,
                match judged.first_of_two(level) {
                    true =>
                        "; bad is worse still, so the range holds more than one change \
                             and this is the first",
                    false => "",
                }
            ),
            None => String::new(),
        };
        let busy = self.busy().map(|b| format!("; {b}")).unwrap_or_default();
        let label = match tested.iter().any(|t| guessed(&t)) {
            true => "first bad commit (a guess: --guess)",
            false => "first bad commit",
        };
        let mut notes = vec![Note::info(format!(
            "{label}: {} {} ({}){size}{busy}",
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
        notes.push(match steps.iter().filter(|t| guessed(t)).count() {
            0 if self.counted_ends.is_some() => Note::info(format!(
                "{} tested commit(s), each counted twice and placed by the size of its change \
                 from the ends' counts, which agreed run to run, as its own two did (beyond {}% \
                 is a change); {} \
                 checkouts built (the ends included) for {} commits",
                steps.len(),
                crate::analyze::counted::least_change(self.args.threshold.unwrap_or(0.0)),
                tested.len(),
                self.commits.len()
            )),
            0 => Note::info(format!(
                "{} tested commit(s), each placed by the signed-rank test on its rounds' ratios \
                 to both ends, measured in a drawn order; a wrong commit, or a second change \
                 that is not there, is named with a chance of at most alpha {} (half for the \
                 ends, half shared by {} planned steps, each spent over its looks); {} \
                 checkouts built (the ends included) for {} commits",
                steps.len(),
                self.args.alpha,
                self.planned_steps(),
                tested.len(),
                self.commits.len()
            )),
            n => Note::warning(format!(
                "{n} of {} tested commits could not be placed within --max-rounds {} and went \
                 with the end they moved less from (--guess): the answer is a guess, not a \
                 verdict; more rounds or counted instructions would decide them",
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
        let (unit, source_unit) = self
            .unit
            .clone()
            .unwrap_or_else(|| (Unit::parse("").unit, String::new()));
        let text = |text: String| Cell::Text { text };
        let rows = tested
            .iter()
            .map(|t| {
                let commit = &self.commits[t.commit];
                let p = |p: Option<f64>| p.map_or(Cell::Empty, |p| text(p_text(p)));
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
                        t.judged
                            .as_ref()
                            .map_or(Cell::Empty, |j| text(format!("{:+.2}%", j.change))),
                        p(t.judged.as_ref().map(|j| j.p_good)),
                        p(t.judged.as_ref().map(|j| j.p_bad)),
                        Cell::Count {
                            count: t.rounds as u64,
                        },
                        text(verdict(t)),
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
            generated: None,
            runs: Vec::new(),
            tables: vec![Table {
                title: Some(format!(
                    "bisect: {} (median per commit; vs good: the median of its rounds' ratios)",
                    self.metric
                )),
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

/// What would place an undecided commit: more rounds when the rounds' spread says how many
/// (fewer than were run means the spread is too uneven to say: the estimate assumes rounds
/// that scatter evenly), or why no number of rounds would.
fn undecided_advice(needed: Option<u64>, rounds: usize, threshold: Option<f64>) -> String {
    const GUESS: &str = "`--guess` goes on with the end it moved less from";
    match needed {
        Some(n) if n > rounds as u64 => {
            format!("about {n} rounds would place it (--max-rounds {n}), or {GUESS}")
        }
        Some(_) => format!(
            "its rounds scatter too unevenly to say how many more would place it: counted \
             instructions (`--measure instructions`) do not scatter so, or {GUESS}"
        ),
        None => format!(
            "its change from good and bad's from it both lie within --threshold {}%: the \
             change is spread over several commits, none beyond the threshold alone",
            threshold.unwrap_or(0.0)
        ),
    }
}

/// A p-value as the table shows it: `counted` where the figure was placed by a count's size.
pub(super) fn p_text(p: f64) -> String {
    match p.is_nan() {
        true => "counted".into(),
        false => format!("{p:.3}"),
    }
}

/// Whether `t`'s side is a guess.
fn guessed(t: &&Tested) -> bool {
    t.side.is_some_and(|(_, basis)| basis == Basis::Guess)
}

/// A row's verdict: `good`, `bad`, `bad (first change)`, `good (guess)`, `undecided`,
/// `skipped: does not build`.
fn verdict(t: &Tested) -> String {
    match (&t.skipped, t.side) {
        (Some((short, _)), _) => format!("skipped: {short}"),
        (None, Some((side, Basis::Guess))) => format!("{} (guess)", side.name()),
        (None, Some((Side::Bad, Basis::Test)))
            if t.judged.as_ref().is_some_and(|j| j.first_of_two(t.level)) =>
        {
            "bad (first change)".into()
        }
        (None, Some((side, Basis::Test))) => side.name().to_string(),
        (None, None) if t.undecided() => "undecided".into(),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::undecided_advice;

    #[test]
    fn advice_never_asks_for_fewer_rounds_than_were_run() {
        let more = undecided_advice(Some(48), 30, None);
        assert!(
            more.starts_with("about 48 rounds would place it (--max-rounds 48)"),
            "{more}"
        );
        // An estimate of 8 after 30 rounds that did not place it: the estimate is no guide.
        for needed in [8, 30] {
            let uneven = undecided_advice(Some(needed), 30, None);
            assert!(!uneven.contains("--max-rounds"), "{uneven}");
            assert!(uneven.contains("`--measure instructions`"), "{uneven}");
            assert!(uneven.contains("`--guess`"), "{uneven}");
        }
        let within = undecided_advice(None, 30, Some(5.0));
        assert!(within.contains("within --threshold 5%"), "{within}");
    }
}
