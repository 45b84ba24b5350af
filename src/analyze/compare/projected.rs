//! benchstat's `-table`, `-row` and `-col` on compare's inputs: every result moved to the
//! table, column and row its projections give it, so that one file's `/format=json` and
//! `/format=gob` become two columns compared row by row, and `-table note` compares each note
//! apart. The comparison itself is then the same as for inputs given as columns.

use super::CompareInput;
use crate::model::{BenchName, Note, Run};
use crate::spec::projection::{Origin, Projections, Which, label};
use rustc_hash::{FxHashMap, FxHashSet};

/// One table's columns, each an input of the comparison, the first the base.
pub struct ProjectedTable {
    /// The table projection's values with their keys (`note: hw on`); empty without `-table`.
    pub heading: String,
    pub columns: Vec<CompareInput>,
}

/// A column being filled: one run for each input run that has results in it.
#[derive(Default)]
struct Column {
    runs: Vec<((usize, usize), Run)>,
}

#[derive(Default)]
struct Table {
    cols: Vec<(Vec<String>, Column)>,
    rows: Vec<Vec<String>>,
    /// The rows found so far, to keep `rows` one each in the order first seen.
    seen_rows: FxHashSet<Vec<String>>,
    /// Each cell's distinct residues (what its results differ in beyond their place).
    cells: FxHashMap<(Vec<String>, Vec<String>), Vec<Residue>>,
}

/// What a result's place leaves out of it, by key.
type Residue = Vec<(String, String)>;

/// The inputs' results laid out by `projections`, tables in their order, and a warning for
/// each kind of cell whose pooled results vary in something no projection names (benchstat's
/// "benchmarks vary in .fullname").
pub fn project(
    inputs: Vec<CompareInput>,
    projections: &Projections,
) -> (Vec<ProjectedTable>, Vec<Note>) {
    let mut tables: Vec<(Vec<String>, Table)> = Vec::new();
    let mut valued = Valued::default();
    for (i, input) in inputs.into_iter().enumerate() {
        for (r, mut run) in input.runs.into_iter().enumerate() {
            let benchmarks = std::mem::take(&mut run.benchmarks);
            let origin = Origin {
                file: &input.label,
                config: &run.config,
            };
            for mut bench in benchmarks {
                let Some(place) = projections.place(&bench, &origin) else {
                    continue;
                };
                valued.see(&place);
                let table = find_or_add(&mut tables, place.table);
                if table.seen_rows.insert(place.row.clone()) {
                    table.rows.push(place.row.clone());
                }
                let residues = (table.cells)
                    .entry((place.row.clone(), place.col.clone()))
                    .or_default();
                if !residues.contains(&place.residue) {
                    residues.push(place.residue);
                }
                let column = find_or_add(&mut table.cols, place.col);
                let at = match column.runs.iter().position(|(from, _)| *from == (i, r)) {
                    Some(at) => at,
                    None => {
                        column.runs.push(((i, r), run.without_benchmarks()));
                        column.runs.len() - 1
                    }
                };
                bench.name = BenchName::plain(&label(&place.row));
                column.runs[at].1.benchmarks.push(bench);
            }
        }
    }
    let mut keys: Vec<Vec<String>> = tables.iter().map(|(k, _)| k.clone()).collect();
    projections.sort(Which::Table, &mut keys);
    let mut notes = valued.unvalued_keys(projections);
    let laid_out = keys
        .into_iter()
        .map(|key| {
            let at = tables.iter().position(|(k, _)| *k == key).expect("a table");
            let (_, table) = tables.swap_remove(at);
            let heading = projections.table_heading(&key);
            notes.extend(pooled_notes(&table, &heading));
            ProjectedTable {
                heading,
                columns: columns(table, projections),
            }
        })
        .collect();
    (laid_out, notes)
}

/// Which projected keys some result had a value for: a key none has is most likely mistyped
/// (`-col /fromat`), and would pool every result in one place.
#[derive(Default)]
struct Valued([Vec<bool>; 3]);

impl Valued {
    fn see(&mut self, place: &crate::spec::projection::Place) {
        for (seen, tuple) in self
            .0
            .iter_mut()
            .zip([&place.table, &place.row, &place.col])
        {
            seen.resize(tuple.len(), false);
            for (s, value) in seen.iter_mut().zip(tuple) {
                *s |= !value.is_empty();
            }
        }
    }

    fn unvalued_keys(&self, projections: &Projections) -> Vec<Note> {
        let which = [
            ("table", Which::Table),
            ("row", Which::Row),
            ("col", Which::Col),
        ];
        (which.iter().zip(&self.0))
            .flat_map(|((option, which), seen)| {
                let keys = projections.keys_of(*which);
                (keys.into_iter().zip(seen))
                    .filter(|(_, seen)| !**seen)
                    .map(|(key, _)| {
                        Note::warning(format!(
                            "-{option} {key}: no result has a value for {key}, so it groups \
                             nothing apart"
                        ))
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

fn find_or_add<T: Default>(list: &mut Vec<(Vec<String>, T)>, key: Vec<String>) -> &mut T {
    let at = match list.iter().position(|(k, _)| *k == key) {
        Some(at) => at,
        None => {
            list.push((key, T::default()));
            list.len() - 1
        }
    };
    &mut list[at].1
}

/// A table's columns in their order, each run's results in the rows' order.
fn columns(mut table: Table, projections: &Projections) -> Vec<CompareInput> {
    projections.sort(Which::Row, &mut table.rows);
    let rows: FxHashMap<String, usize> = (table.rows.iter().enumerate())
        .map(|(at, row)| (label(row), at))
        .collect();
    let mut keys: Vec<Vec<String>> = table.cols.iter().map(|(k, _)| k.clone()).collect();
    projections.sort(Which::Col, &mut keys);
    keys.into_iter()
        .map(|key| {
            let at = table
                .cols
                .iter()
                .position(|(k, _)| *k == key)
                .expect("a column");
            let (_, column) = table.cols.swap_remove(at);
            let runs = (column.runs.into_iter())
                .map(|(_, mut run)| {
                    (run.benchmarks).sort_by_key(|b| rows.get(&b.name.full_name).copied());
                    run
                })
                .collect();
            CompareInput {
                label: label(&key),
                runs,
            }
        })
        .collect()
}

/// How many pooled cells a warning names before it counts the rest.
const CELLS_NAMED: usize = 3;

/// The keys whose values differ between residues (a key one lacks counts as empty).
fn varying_keys(residues: &[Residue]) -> Vec<String> {
    fn value<'a>(residue: &'a [(String, String)], key: &str) -> &'a str {
        (residue.iter())
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
    let mut keys: Vec<String> = Vec::new();
    for (key, _) in residues.iter().flatten() {
        if !keys.contains(key)
            && residues
                .iter()
                .any(|r| value(r, key) != value(&residues[0], key))
        {
            keys.push(key.clone());
        }
    }
    keys
}

/// A warning for each set of keys some cells' results vary in, naming the first cells.
fn pooled_notes(table: &Table, heading: &str) -> Vec<Note> {
    let mut by_keys: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for row in &table.rows {
        for (col, _) in &table.cols {
            let Some(residues) = table.cells.get(&(row.clone(), col.clone())) else {
                continue;
            };
            let varying = varying_keys(residues);
            if varying.is_empty() {
                continue;
            }
            let named = |values: &[String]| match label(values) {
                empty if empty.is_empty() => "\"\"".to_string(),
                shown => shown,
            };
            let cell = format!("{} ({})", named(row), named(col));
            match by_keys.iter_mut().find(|(keys, _)| *keys == varying) {
                Some((_, cells)) => cells.push(cell),
                None => by_keys.push((varying, vec![cell])),
            }
        }
    }
    let within = match heading.is_empty() {
        true => String::new(),
        false => format!(" of table {heading}"),
    };
    by_keys
        .into_iter()
        .map(|(keys, cells)| {
            let mut named = cells[..cells.len().min(CELLS_NAMED)].join(", ");
            if cells.len() > CELLS_NAMED {
                named.push_str(&format!(" and {} more", cells.len() - CELLS_NAMED));
            }
            Note::warning(format!(
                "benchmarks vary in {} in {named}{within}: their results are pooled as one \
                 sample (-ignore {} if that is meant)",
                keys.join(", "),
                keys.join(",")
            ))
        })
        .collect()
}
