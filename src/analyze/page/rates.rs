//! Rates as the times they stand for: a rate of items is a time per item, and a pair of
//! benchmarks compares like with like (two times per operation, or two per item).

use super::Found;
use super::wording::{approx, plain, time_text};
use crate::model::{Better, Dimension};

/// The time per item of a rate (`items_per_second`, a count per second, an event rate).
pub(super) fn per_item_of_rate(found: &Found) -> Option<f64> {
    let rate = match &found.metric.unit.dimension {
        Dimension::EventRate => true,
        Dimension::Count(_) => found.metric.unit.better() == Better::Higher,
        _ => false,
    };
    (rate && found.value > 0.0).then(|| 1e9 / found.value)
}

/// A figure as the time it stands for: a time per operation, or a rate's time per item.
pub(super) fn pair_time(found: &Found) -> Option<(f64, &'static str)> {
    match found.metric.unit.dimension {
        Dimension::Time => Some((found.value, "op")),
        _ => per_item_of_rate(found).map(|ns| (ns, "item")),
    }
}

/// The caveat of a pair: the micro-benchmark's time and the realistic one's, each per
/// operation or (of a rate) per item, and their ratio; an operation against an item, or a
/// figure that is neither, is refused.
pub(super) fn pair_caveat(
    micro: &Found,
    realistic: &Found,
    why: Option<&str>,
) -> std::result::Result<String, String> {
    let why = why.map(|w| format!(", {w}")).unwrap_or_default();
    let time = |f: &Found| {
        pair_time(f).ok_or_else(|| {
            format!(
                "a pair compares times or rates, and `{}` {} is in {}",
                f.bench.name.full_name, f.metric.name, f.metric.source_unit
            )
        })
    };
    let ((m, m_per), (r, r_per)) = (time(micro)?, time(realistic)?);
    if m_per != r_per {
        return Err(format!(
            "a pair compares like with like: `{}` is a time per {m_per} and `{}` per {r_per} \
             (give both a time, or both items_per_second)",
            micro.bench.name.full_name, realistic.bench.name.full_name
        ));
    }
    Ok(format!(
        "{} ({}/{m_per}{why}) is an isolated micro-benchmark: a ceiling, not the realistic integration cost ({}: {}/{r_per}, {}x the micro-benchmark's).",
        micro.bench.name.full_name,
        time_text(m),
        realistic.bench.name.full_name,
        time_text(r),
        plain(approx(r / m)),
    ))
}
