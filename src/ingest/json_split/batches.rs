//! The elements a split document yields, parsed on every core in batches and handed back in
//! the file's order.

use super::*;

/// How many bytes of elements go to a worker at a time.
const BATCH: usize = 256 << 10;

/// Parts gathered for a worker: their bytes end to end, and where each starts in them (and
/// on which line of the file, and what it is).
struct Batch {
    seq: u64,
    bytes: Vec<u8>,
    starts: Vec<(usize, u64, Kind)>,
}

impl Batch {
    fn new(seq: u64) -> Batch {
        Batch {
            seq,
            bytes: Vec::with_capacity(BATCH + (4 << 10)),
            starts: Vec::new(),
        }
    }

    /// Each part parsed, in order, up to the first that cannot be.
    fn parse<T>(&self, parse: &(impl Fn(u64, Kind, &[u8]) -> Result<T> + Sync)) -> Result<Vec<T>> {
        let ends = self.starts.iter().skip(1).map(|&(at, _, _)| at);
        self.starts
            .iter()
            .zip(ends.chain([self.bytes.len()]))
            .map(|(&(start, line, kind), end)| parse(line, kind, &self.bytes[start..end]))
            .collect()
    }
}

/// A worker: parses the batches it takes until there are none.
fn parse_batches<T>(
    work: &Mutex<mpsc::Receiver<Batch>>,
    parsed: &mpsc::SyncSender<(u64, Result<Vec<T>>)>,
    parse: &(impl Fn(u64, Kind, &[u8]) -> Result<T> + Sync),
) {
    // The lock is held only while taking a batch.
    while let Ok(batch) = work
        .lock()
        .map_err(drop)
        .and_then(|w| w.recv().map_err(drop))
    {
        if parsed.send((batch.seq, batch.parse(parse))).is_err() {
            break;
        }
    }
}

/// Hands the parsed elements to `record` in document order, until the first error (which
/// it returns, after raising `stop`).
fn in_order<T>(
    done: mpsc::Receiver<(u64, Result<Vec<T>>)>,
    stop: &AtomicBool,
    record: &mut impl FnMut(T),
) -> Result<()> {
    let (mut next, mut waiting, mut failed) = (0, BTreeMap::new(), None);
    for (seq, items) in done {
        waiting.insert(seq, items);
        while let Some(items) = waiting.remove(&next) {
            next += 1;
            match items {
                Ok(items) if failed.is_none() => items.into_iter().for_each(&mut *record),
                Ok(_) => {}
                // Later batches are still taken (so the split is never left waiting to
                // hand one over) and dropped.
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failed.get_or_insert(e);
                }
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

/// As [`split_document`], with the rows and pieces parsed by `parse` on worker threads (the
/// split runs on this one, `field` too) and handed to `record` in document order. Memory
/// holds the few batches in flight; the first error in document order ends the read.
pub fn split_rows<T: Send>(
    path: &str,
    reader: &mut dyn BufRead,
    layout: Layout,
    mut field: impl FnMut(u64, &str, &[u8]) -> Result<()>,
    parse: impl Fn(u64, Kind, &[u8]) -> Result<T> + Sync,
    mut record: impl FnMut(T) + Send,
) -> Result<()> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let stop = AtomicBool::new(false);
    let (batches, work) = mpsc::sync_channel::<Batch>(workers * 2);
    let work = Mutex::new(work);
    let (parsed, done) = mpsc::sync_channel::<(u64, Result<Vec<T>>)>(workers * 2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (work, parsed, parse) = (&work, parsed.clone(), &parse);
            scope.spawn(move || parse_batches(work, &parsed, parse));
        }
        drop(parsed);
        let stop = &stop;
        let collector = scope.spawn(move || in_order(done, stop, &mut record));
        let mut batch = Batch::new(0);
        let split = split_document(path, reader, layout, |line, part| {
            let (kind, bytes) = match part {
                Part::Field(key, value) => return field(line, key, value),
                Part::Rows(kind, bytes) => (kind, bytes),
            };
            batch.starts.push((batch.bytes.len(), line, kind));
            batch.bytes.extend_from_slice(bytes);
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            if batch.bytes.len() >= BATCH {
                let next = Batch::new(batch.seq + 1);
                // The workers outlive the split, so a send cannot fail.
                let _ = batches.send(std::mem::replace(&mut batch, next));
            }
            Ok(())
        });
        if split.is_ok() && !batch.starts.is_empty() {
            let _ = batches.send(batch);
        }
        drop(batches);
        let collected = collector.join().unwrap_or_else(|_| {
            Err(Error::Environment(format!(
                "{path}: a reader thread failed"
            )))
        });
        // A row's error comes before the split's own, which stopped at or after it.
        collected.and(split)
    })
}

/// Appends a streamed array's piece to the pieces before it: the first is taken as it is, not
/// copied.
pub fn join_piece<T>(all: &mut Vec<T>, piece: Vec<T>) {
    if all.is_empty() {
        *all = piece;
    } else {
        all.extend(piece);
    }
}
