//! Lists of numbers written on one line even inside pretty-printed JSON: a run can hold
//! millions of repetitions, and one number per line would multiply the output and its writing
//! time. Writing the numbers is most of the time a large report takes, so while a report's
//! document is written its runs' long lists are written on every core, a few ahead of the
//! document ([`with_lists_written`]), which takes each as written: memory holds a few lists'
//! text, not all of it.

use super::Run;
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::value::RawValue;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Lists shorter than this are written where they stand.
const WORTH_A_THREAD: usize = 4096;

/// Numbers in lists written ahead of the document and not yet taken, per core, at most (a few
/// MB of text; a longer list is still written ahead when it is the only one in hand).
const AHEAD_PER_CORE: usize = 128 << 10;

/// Numbers a writer takes up at a time, in consecutive lists: fewer hand-overs, each of which
/// can wake a thread.
const GROUP: usize = 32 << 10;

thread_local! {
    /// The lists being written ahead of the document this thread writes.
    static AHEAD: RefCell<Option<Arc<Ahead>>> = const { RefCell::new(None) };
}

/// Long lists written by other threads ahead of the document that takes them. Threads are
/// woken only when one waits for what changed: each wake-up is a system call, and on a VM an
/// interrupt to the other CPU.
struct Ahead {
    /// A list's place by the address and length of its numbers.
    places: FxHashMap<(usize, usize), usize>,
    /// Each list's length.
    lengths: Vec<usize>,
    state: Mutex<AheadState>,
    /// A list was taken, or the document finished: room for writers.
    room: Condvar,
    /// The list the document waits for is written.
    ready: Condvar,
}

struct AheadState {
    lists: Vec<Slot>,
    /// The first list no thread has taken up yet, or past it.
    next: usize,
    /// Numbers in lists being written, or written and not yet taken.
    in_hand: usize,
    limit: usize,
    writers_waiting: usize,
    /// The list the document waits for.
    awaited: Option<usize>,
    /// The document is written (or failed): no more lists are wanted.
    finished: bool,
}

enum Slot {
    Waiting,
    Writing,
    Written(Box<RawValue>),
    Taken,
}

impl Ahead {
    fn lock(&self) -> MutexGuard<'_, AheadState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A writer's next lists to write (consecutive ones, together at least [`GROUP`] numbers
    /// where there are so many), or `None` when there is nothing more to do.
    fn next_to_write(&self) -> Option<Range<usize>> {
        let mut state = self.lock();
        loop {
            while state
                .lists
                .get(state.next)
                .is_some_and(|s| !matches!(s, Slot::Waiting))
            {
                state.next += 1;
            }
            if state.finished || state.next == state.lists.len() {
                return None;
            }
            let start = state.next;
            if state.in_hand == 0 || state.in_hand + self.lengths[start] <= state.limit {
                let mut group = start..start;
                let mut numbers = 0;
                while numbers < GROUP
                    && state
                        .lists
                        .get(group.end)
                        .is_some_and(|s| matches!(s, Slot::Waiting))
                {
                    state.lists[group.end] = Slot::Writing;
                    numbers += self.lengths[group.end];
                    group.end += 1;
                }
                state.in_hand += numbers;
                state.next = group.end;
                return Some(group);
            }
            state.writers_waiting += 1;
            state = self.room.wait(state).unwrap_or_else(|p| p.into_inner());
            state.writers_waiting -= 1;
        }
    }

    fn written(&self, group: Range<usize>, lists: Vec<Box<RawValue>>) {
        let mut state = self.lock();
        let awaited = state.awaited.is_some_and(|at| group.contains(&at));
        for (at, json) in group.zip(lists) {
            state.lists[at] = Slot::Written(json);
        }
        if awaited {
            self.ready.notify_one();
        }
    }

    /// The document's list at `at`: as written ahead, waited for while it is being written,
    /// or `None` (to be written in place) when no writer has taken it up.
    fn take(&self, at: usize) -> Option<Box<RawValue>> {
        let mut state = self.lock();
        loop {
            match std::mem::replace(&mut state.lists[at], Slot::Taken) {
                Slot::Written(json) => {
                    state.in_hand -= self.lengths[at];
                    if state.writers_waiting > 0 {
                        self.room.notify_all();
                    }
                    return Some(json);
                }
                Slot::Writing => {
                    state.lists[at] = Slot::Writing;
                    state.awaited = Some(at);
                    state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
                    state.awaited = None;
                }
                Slot::Waiting | Slot::Taken => return None,
            }
        }
    }

    fn finish(&self) {
        self.lock().finished = true;
        self.room.notify_all();
    }
}

/// `serialize_with` for a list of counts: on one line.
pub(super) fn inline_array<T: Serialize, S: serde::Serializer>(
    items: &[T],
    s: S,
) -> Result<S::Ok, S::Error> {
    serde_json::value::to_raw_value(items)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// `serialize_with` for a list of values: on one line, as written ahead when it was.
pub(super) fn inline_values<S: serde::Serializer>(values: &[f64], s: S) -> Result<S::Ok, S::Error> {
    let key = (values.as_ptr() as usize, values.len());
    let ahead = AHEAD.with(|a| a.borrow().clone());
    let written = ahead.and_then(|ahead| ahead.take(*ahead.places.get(&key)?));
    written.unwrap_or_else(|| write_values(values)).serialize(s)
}

/// `values` as serde_json writes a list of `f64`, on one line: written here number by number
/// into one buffer sized beforehand, which costs about half of serde's element-by-element path.
fn write_values(values: &[f64]) -> Box<RawValue> {
    let mut json = String::with_capacity(values.len() * 12 + 2);
    let mut number = zmij::Buffer::new();
    json.push('[');
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        // serde_json's own rule and formatter: the shortest decimal that reads back as the same
        // f64, and null for what JSON has no number for.
        json.push_str(if v.is_finite() {
            number.format_finite(v)
        } else {
            "null"
        });
    }
    json.push(']');
    // SAFETY: `[`, numbers as serde_json writes them or `null` separated by commas, and `]`:
    // one well-formed JSON value with no whitespace around it.
    unsafe { RawValue::from_string_unchecked(json) }
}

/// Runs `write` (which serializes `runs` on this thread) while the runs' long lists of numbers
/// are written on every core, in the order the document takes them, a few ahead of it.
pub fn with_lists_written<R>(runs: &[Run], write: impl FnOnce() -> R) -> R {
    let lists: Vec<&[f64]> = runs
        .iter()
        .flat_map(|r| &r.benchmarks)
        .flat_map(|b| &b.metrics)
        .map(|m| m.values.as_slice())
        .filter(|v| v.len() >= WORTH_A_THREAD)
        .collect();
    if lists.len() < 2 {
        return write();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ahead = Arc::new(Ahead {
        places: lists
            .iter()
            .enumerate()
            .map(|(at, v)| ((v.as_ptr() as usize, v.len()), at))
            .collect(),
        lengths: lists.iter().map(|v| v.len()).collect(),
        state: Mutex::new(AheadState {
            lists: lists.iter().map(|_| Slot::Waiting).collect(),
            next: 0,
            in_hand: 0,
            limit: cores * AHEAD_PER_CORE,
            writers_waiting: 0,
            awaited: None,
            finished: false,
        }),
        room: Condvar::new(),
        ready: Condvar::new(),
    });
    std::thread::scope(|scope| {
        for _ in 0..cores {
            let (ahead, lists) = (&ahead, &lists);
            scope.spawn(move || {
                while let Some(group) = ahead.next_to_write() {
                    let written = lists[group.clone()].iter().map(|v| write_values(v));
                    ahead.written(group, written.collect());
                }
            });
        }
        let outer = AHEAD.with(|a| a.replace(Some(ahead.clone())));
        let _done = Done {
            ahead: &ahead,
            outer,
        };
        write()
    })
}

/// However the document's writing ends (written, failed part-way, or a panic), this stops
/// the writers, which would otherwise wait for room and keep the scope from ending, and puts
/// back the thread's outer lists.
struct Done<'a> {
    ahead: &'a Ahead,
    outer: Option<Arc<Ahead>>,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        AHEAD.with(|a| *a.borrow_mut() = self.outer.take());
        self.ahead.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, Environment, RunBuilder, Source, SourceKind, new_run};

    /// A run of `long + 1` benchmarks: `long` with two lists of `length + b` numbers each
    /// (written ahead), and one short.
    fn runs_of(long: usize, length: usize) -> Vec<Run> {
        let mut builder = RunBuilder::default();
        for b in 0..=long {
            let bench = builder.benchmark(&format!("B{b}"), None, BenchName::plain);
            let n = if b == long { 10 } else { length + b };
            for i in 0..n {
                builder.record(bench, "ns/op", "ns/op", 1.0 / 3.0 + (i * b) as f64);
                builder.record(bench, "B/op", "B/op", (i % 7) as f64);
            }
        }
        let source = Source {
            kind: SourceKind::File,
            format: "go".into(),
            path: None,
            command: Vec::new(),
        };
        vec![new_run(source, Environment::default(), Vec::new(), builder)]
    }

    fn runs() -> Vec<Run> {
        runs_of(4, WORTH_A_THREAD)
    }

    /// Whether every list written ahead was taken by the document, and how many there were.
    fn all_taken() -> (bool, usize) {
        let ahead = AHEAD
            .with(|a| a.borrow().clone())
            .expect("lists are written ahead");
        let state = ahead.lock();
        let taken = state.lists.iter().all(|s| matches!(s, Slot::Taken));
        (taken && state.in_hand == 0, state.lists.len())
    }

    #[test]
    fn lists_written_ahead_are_written_as_they_would_have_been() {
        let runs = runs();
        let plain = serde_json::to_string_pretty(&runs).unwrap();
        let (threaded, (taken, lists)) = with_lists_written(&runs, || {
            (serde_json::to_string_pretty(&runs).unwrap(), all_taken())
        });
        assert_eq!(lists, 8, "both lists of the four long benchmarks");
        assert!(taken, "each list was taken once, none left over");
        assert_eq!(plain, threaded);
        assert!(plain.contains("\"values\": [0.3333333333333333,1.3333333333333333,"));
        assert!(
            AHEAD.with(|a| a.borrow().is_none()),
            "nothing is kept after"
        );
    }

    #[test]
    fn lists_beyond_what_may_be_in_hand_wait_for_the_document_to_take_some() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Four times the numbers that may be in hand at once, in lists of several groups.
        let length = GROUP * 3 / 2;
        let long = (cores * AHEAD_PER_CORE * 4).div_ceil(length * 2);
        let runs = runs_of(long, length);
        let plain = serde_json::to_string(&runs).unwrap();
        let (threaded, (taken, lists)) = with_lists_written(&runs, || {
            (serde_json::to_string(&runs).unwrap(), all_taken())
        });
        assert_eq!(lists, long * 2);
        assert!(taken, "each list was taken once, none left over");
        assert_eq!(plain, threaded);
    }

    #[test]
    fn a_document_that_takes_lists_out_of_order_twice_or_not_at_all_is_still_written() {
        let runs = runs();
        let reversed: Vec<_> = runs[0].benchmarks.iter().rev().collect();
        let plain = serde_json::to_string(&reversed).unwrap();
        let (first, second) = with_lists_written(&runs, || {
            let first = serde_json::to_string(&reversed).unwrap();
            (first, serde_json::to_string(&reversed).unwrap())
        });
        assert_eq!(first, plain);
        assert_eq!(second, plain, "a list taken already is written again");
        // A document that fails before it takes a list: the writers stop, nothing waits.
        assert_eq!(with_lists_written(&runs, || 7), 7);
    }

    #[test]
    fn a_document_that_panics_part_way_stops_the_writers() {
        // Far more lists than may be in hand: the writers are waiting for room when the
        // document gives up.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let length = GROUP * 3 / 2;
        let long = (cores * AHEAD_PER_CORE * 4).div_ceil(length * 2);
        let (sent, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runs = runs_of(long, length);
            let outcome = std::panic::catch_unwind(|| {
                with_lists_written(&runs, || -> () { panic!("the document failed") })
            });
            let _ = sent.send((outcome.is_err(), AHEAD.with(|a| a.borrow().is_none())));
        });
        let waited = ended.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(
            waited,
            Ok((true, true)),
            "the panic comes back, nothing is kept"
        );
    }

    #[test]
    fn numbers_are_written_as_serde_json_writes_them() {
        let tricky = [
            0.0,
            -0.0,
            1.0,
            -232.0,
            0.1 + 0.2,
            1e15,
            1e16,
            1e21,
            1e22,
            123456789012345680.0,
            1e-7,
            5e-324,
            2.2250738585072014e-308,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        assert_eq!(
            write_values(&tricky).get(),
            serde_json::to_string(&tricky[..]).unwrap()
        );
        assert_eq!(write_values(&[]).get(), "[]");
    }

    proptest::proptest! {
        #[test]
        fn any_numbers_are_written_as_serde_json_writes_them(
            bits in proptest::collection::vec(proptest::num::u64::ANY, 0..64),
        ) {
            let values: Vec<f64> = bits.into_iter().map(f64::from_bits).collect();
            let written = write_values(&values);
            proptest::prop_assert_eq!(written.get(), serde_json::to_string(&values).unwrap());
            let back: Vec<Option<f64>> = serde_json::from_str(written.get()).unwrap();
            let finite = values.iter().map(|v| v.is_finite().then_some(*v));
            proptest::prop_assert!(back.into_iter().zip(finite).all(|(a, b)| a == b));
        }
    }
}
