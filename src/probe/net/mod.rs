//! Network latency and throughput between a latkit client and server (or both in one process
//! on loopback).

pub mod client;
pub mod protocol;
mod quiet;
pub mod server;

use crate::env::Stamp;
use crate::error::Result;
use crate::model::RunBuilder;
use crate::model::{BenchName, Metric, Run};
use client::{ClientConfig, Measurement};
use hdrhistogram::Histogram;

/// Runs the client test and turns what it measured into a run.
pub fn measure(config: &ClientConfig, stamp: Stamp) -> Result<Run> {
    let started = stamp.clock.now();
    let measurement = client::run(config)?;
    let name = match config.test {
        protocol::Test::TcpThroughput => {
            format!("net/{}/{}B-chunks", config.test.name(), config.chunk)
        }
        _ => format!("net/{}/{}B", config.test.name(), config.size),
    };
    let mut builder = RunBuilder::default();
    let bench = builder.benchmark(&name, None, BenchName::plain);
    let distributions = record(&mut builder, bench, config, measurement);
    let mut benchmarks = builder.finish();
    for (i, m) in distributions.into_iter().enumerate() {
        benchmarks[0].metrics.insert(i, m);
    }
    let settings = vec![
        (
            crate::model::vocab::SERVER_SETTING,
            config.server.to_string(),
        ),
        ("test", config.test.name().to_string()),
        ("size", config.size.to_string()),
        ("warmup_ms", config.warmup.as_millis().to_string()),
        ("authenticated", config.token.is_some().to_string()),
    ];
    let mut run = super::probe_run("net", settings, benchmarks, started, stamp);
    run.peer_metrics = true;
    Ok(run)
}

/// Records what a test measured on `bench`: counts and rates as figures; the distributions
/// are returned, to go first.
fn record(
    builder: &mut RunBuilder,
    bench: usize,
    config: &ClientConfig,
    measurement: Measurement,
) -> Vec<Metric> {
    let mut distributions = Vec::new();
    match measurement {
        Measurement::RoundTrips { rtt, lost } => {
            // One-way is estimated as half the round trip: it assumes a symmetric path.
            let mut half = Histogram::<u64>::new_from(&rtt);
            for v in rtt.iter_recorded() {
                half.saturating_record_n(v.value_iterated_to() / 2, v.count_at_value());
            }
            distributions.push(Metric::time_distribution("rtt", rtt));
            distributions.push(Metric::time_distribution("one_way_rtt_half", half));
            if config.test == protocol::Test::UdpRtt {
                builder.record(bench, "lost", "packets", lost as f64);
            }
        }
        Measurement::Rate {
            latency,
            scheduled,
            sent,
            received,
            duplicated,
            reordered,
        } => {
            distributions.push(Metric::time_distribution("latency_from_schedule", latency));
            builder.record(bench, "rate", "/s", config.rate as f64);
            builder.record(bench, "scheduled", "packets", scheduled as f64);
            builder.record(bench, "sent", "packets", sent as f64);
            builder.record(bench, "received", "packets", received as f64);
            builder.record(
                bench,
                "lost",
                "packets",
                sent.saturating_sub(received) as f64,
            );
            builder.record(bench, "duplicated", "packets", duplicated as f64);
            builder.record(bench, "reordered", "packets", reordered as f64);
        }
        Measurement::Throughput {
            received,
            first_chunk_ns,
            first_send_ns,
            first_send_bytes,
            sent,
        } => {
            if let Some(received) = received {
                let seconds = received.duration_ns as f64 / 1e9;
                if seconds > 0.0 {
                    let rate = received.timed_bytes as f64 / seconds;
                    // The same rate, labelled in decimal and in binary megabytes.
                    builder.record(bench, "throughput", "MB/s", rate / 1e6);
                    builder.record(bench, "throughput_mib", "MiB/s", rate / 1_048_576.0);
                }
                builder.record(bench, "bytes_received", "B", received.bytes as f64);
            }
            builder.record(bench, "bytes_sent", "B", sent as f64);
            if let Some(ns) = first_chunk_ns {
                builder.record(bench, "first_chunk_ack_rtt", "ns", ns as f64);
            }
            builder.record(bench, "first_send_call", "ns", first_send_ns as f64);
            builder.record(bench, "first_send_call_bytes", "B", first_send_bytes as f64);
        }
    }
    distributions
}

/// Starts a server on an ephemeral loopback port in this process, measures against it, and
/// stops it.
pub fn loopback(mut config: ClientConfig, token: Option<String>, stamp: Stamp) -> Result<Run> {
    let server = server::Server::bind(server::ServerConfig {
        bind: "127.0.0.1:0".parse().expect("a valid literal address"),
        token: token.clone(),
        insecure: false,
        max_clients: 4,
        max_duration: std::time::Duration::from_secs(3600),
        max_bytes: u64::MAX,
    })?;
    config.server = server.local_addr();
    config.token = token;
    let stop = server.stop_handle();
    let serving = std::thread::spawn(move || server.serve(|_| {}));
    let result = measure(&config, stamp);
    stop.stop();
    let _ = serving.join();
    result
}
