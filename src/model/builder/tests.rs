use super::*;

/// Values handed over at once are kept, converted and refused as one by one.
#[test]
fn values_handed_over_at_once_are_recorded_as_one_by_one() {
    let cases: [&[(&str, &[f64])]; 5] = [
        &[("s", &[0.5, 1.0, 2e-9])],
        &[("ms", &[5.0]), ("s", &[0.25, 1.0]), ("us", &[])],
        &[("s", &[1.0, -2.0, 3.0])],
        &[("s", &[1.0, 1e300])],
        &[("s", &[1.0]), ("B", &[2.0])],
    ];
    // Three cases are refused: a negative time, a value too large, a unit of another kind.
    for case in cases {
        let (mut one, mut all) = (RunBuilder::default(), RunBuilder::default());
        let (i, j) = (
            one.benchmark("x", None, BenchName::plain),
            all.benchmark("x", None, BenchName::plain),
        );
        let mut refused = false;
        for &(unit, values) in case {
            let singly = values
                .iter()
                .try_for_each(|v| one.record_checked(i, "t", unit, *v));
            let at_once = all.record_all_checked(j, "t", unit, values.to_vec());
            assert_eq!(singly, at_once, "{case:?}");
            refused |= singly.is_err();
        }
        // A refusal ends a reader's read, so what it leaves behind is never used.
        let values = |b: RunBuilder| b.finish()[0].metrics.first().map(|m| m.values.clone());
        if !refused {
            assert_eq!(values(one), values(all), "{case:?}");
        }
    }
}

#[test]
fn each_value_converts_with_its_own_unit() {
    let mut b = RunBuilder::default();
    let i = b.benchmark("stage", None, BenchName::plain);
    b.record_checked(i, "lat", "ms", 5.0).unwrap();
    b.record_checked(i, "lat", "us", 500.0).unwrap();
    assert!(b.record_checked(i, "lat", "MB/s", 1.0).is_err());
    let benches = b.finish();
    assert_eq!(benches[0].metrics[0].values, [5e6, 5e5]);
}

/// Each value lands in the metric of its name, in order, however many metrics a benchmark
/// has and in whatever order they come: the same as a scan of every metric would give.
fn records_as_a_scan_would(calls: &[(usize, usize)], per_bench: usize) {
    let mut b = RunBuilder::default();
    let mut expected: Vec<Vec<(String, Vec<f64>)>> = vec![Vec::new(); 2];
    for (n, &(bench, metric)) in calls.iter().enumerate() {
        let name = format!("m{}", metric % per_bench);
        let i = b.benchmark(&format!("B{bench}"), None, BenchName::plain);
        b.record(i, &name, "ns", n as f64);
        let metrics = &mut expected[i];
        match metrics.iter_mut().find(|(m, _)| *m == name) {
            Some((_, values)) => values.push(n as f64),
            None => metrics.push((name, vec![n as f64])),
        }
    }
    let got: Vec<Vec<(String, Vec<f64>)>> = b
        .finish()
        .into_iter()
        .map(|bench| {
            bench
                .metrics
                .into_iter()
                .map(|m| (m.name, m.values))
                .collect()
        })
        .collect();
    expected.retain(|metrics| !metrics.is_empty());
    assert_eq!(got, expected);
}

proptest::proptest! {
    #[test]
    fn metrics_are_found_by_name_whatever_their_number_and_order(
        calls in proptest::collection::vec((0..2usize, 0..64usize), 0..400),
        per_bench in 1..64usize,
    ) {
        records_as_a_scan_would(&calls, per_bench);
    }
}

#[test]
fn many_metrics_in_a_repeated_order_and_out_of_it() {
    let many = SCANNED_METRICS * 3;
    let in_order: Vec<_> = (0..many * 3).map(|n| (0, n % many)).collect();
    records_as_a_scan_would(&in_order, many);
    let reversed: Vec<_> = (0..many * 3).map(|n| (1, many - 1 - n % many)).collect();
    records_as_a_scan_would(&reversed, many);
}

#[test]
fn finished_benchmarks_hold_no_room_for_metrics_they_do_not_have() {
    let mut b = RunBuilder::default();
    let i = b.benchmark("one", None, BenchName::plain);
    b.record(i, "ns/op", "ns/op", 1.0);
    let metrics = &b.finish()[0].metrics;
    assert_eq!(metrics.capacity(), metrics.len());
}

#[test]
fn pooling_finds_the_metrics_of_a_wide_benchmark() {
    let wide = |offset: f64| {
        let mut b = RunBuilder::default();
        let i = b.benchmark("wide", None, BenchName::plain);
        for m in 0..SCANNED_METRICS * 2 {
            b.record(i, &format!("m{m}"), "us", offset + m as f64);
        }
        b.finish()
    };
    let mut b = RunBuilder::from_benchmarks(wide(0.0));
    let mut later = wide(100.0);
    later[0].metrics.reverse();
    assert!(b.append(later, None).is_empty());
    let i = b.benchmark("wide", None, BenchName::plain);
    b.record(i, "m3", "ms", 1.0);
    let metrics = &b.finish()[0].metrics;
    assert_eq!(metrics.len(), SCANNED_METRICS * 2);
    assert_eq!(metrics[3].values, [3e3, 103e3, 1e6]);
}

/// A block of values digests as a `write_u64` of each did (the run ids stay what they were),
/// whatever the length and whatever was written before it.
#[cfg(target_endian = "little")]
#[test]
fn values_digest_as_each_written_alone() {
    use siphasher::sip128::{Hasher128, SipHasher13};
    use std::hash::Hasher;
    for len in [0, 1, 63, 64, 65, 1000] {
        let values: Vec<f64> = (0..len).map(|i| (i as f64 * 1.37).sin() * 1e6).collect();
        let (mut blocks, mut alone) = (SipHasher13::new(), SipHasher13::new());
        for digest in [&mut blocks, &mut alone] {
            digest.write(b"odd");
        }
        write_values(&mut blocks, &values);
        values.iter().for_each(|v| alone.write_u64(v.to_bits()));
        assert_eq!(blocks.finish128(), alone.finish128(), "{len} values");
    }
}
