//! The page's environment rows: the machine, the toolchain and what the run was given.

use crate::model::Run;

pub(super) fn environment(
    run: &Run,
    runs: usize,
    used: &[(String, usize)],
) -> Vec<(String, String)> {
    let env = &run.environment;
    let config = |key: &str| {
        run.config
            .iter()
            .find(|c| c.key == key)
            .map(|c| c.value.clone())
    };
    let mut rows = Vec::new();
    let cores = config("num_cpus").or_else(|| env.cores.map(|c| c.to_string()));
    let cpu = match (env.cpu_model.clone(), cores, config("mhz_per_cpu")) {
        (model, Some(cores), Some(mhz)) => Some(format!(
            "{}{cores} × {mhz} MHz",
            model.map(|m| format!("{m}, ")).unwrap_or_default()
        )),
        (model, Some(cores), None) => Some(format!(
            "{}{cores} cores",
            model.map(|m| format!("{m}, ")).unwrap_or_default()
        )),
        (model, None, _) => model,
    };
    let os = [env.os.clone(), env.kernel.clone(), env.arch.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let reps: Vec<usize> = used.iter().map(|(_, n)| *n).collect();
    let repetitions = match (reps.iter().min(), reps.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!(
            "{lo} repetition{} per benchmark",
            if *lo == 1 { "" } else { "s" }
        ),
        (Some(lo), Some(hi)) => format!("{lo}–{hi} repetitions per benchmark"),
        _ => String::new(),
    };
    let candidates = [
        ("CPU", cpu),
        ("Caches", config("caches")),
        (
            "Build type",
            config("library_build_type").map(|t| format!("google/benchmark library: {t}")),
        ),
        (
            "CPU scaling",
            config("cpu_scaling_enabled").map(|s| {
                if s == "true" {
                    "on".into()
                } else {
                    "off".into()
                }
            }),
        ),
        ("OS", (!os.is_empty()).then_some(os)),
        ("Host", env.hostname.clone().or_else(|| config("host_name"))),
        ("Virtualisation", env.virtualization.clone()),
        ("Date", run.started.clone()),
        (
            "Runs",
            Some(format!(
                "{runs} run{}{}",
                if runs == 1 { "" } else { "s" },
                if repetitions.is_empty() {
                    String::new()
                } else {
                    format!(", {repetitions}")
                }
            )),
        ),
    ];
    for (key, value) in candidates {
        if let Some(value) = value {
            rows.push((key.to_string(), value));
        }
    }
    rows
}
