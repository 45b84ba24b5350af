//! latkit's integration tests, in one binary (one link instead of one per file).
//!
//! Two tiers. `cargo test` runs the hermetic tier: it needs nothing but cargo, sh and coreutils,
//! no root and no network. Tests that need more are marked `ignore` with what they need unless
//! the `interop` feature is on: the real peers (go, benchstat, hyperfine, google/benchmark,
//! cyclictest, criterion, pytest-benchmark, HdrHistogram's Java classes, PostgreSQL, Chromium,
//! git), a real kernel in qemu, latkit's probes on the real clock and sockets, and the long
//! statistical simulations. `bash .ci/setup` installs the peers; the README's test command
//! (`--features interop`) runs both tiers.

mod common;

mod bisect_cli;
// libtest starts tests in name order: the longest (a kernel booted under qemu, three to four
// minutes on one core) sorts near the front, so that it runs beside the others instead of alone
// at the end. (Sorted after the last measuring test instead, it left bisect's measurements
// beside calibrate's unlocked exec runs, and a bisection ended undecided; the suite took as long.)
mod booted_kernel;
mod calibrate_cli;
mod check_cli;
mod cli_docs;
mod compare_cli;
mod conformance;
mod counts_interop;
mod counts_vary_interop;
mod criterion_interop;
mod exec_cli;
mod frame_cli;
mod function_length;
mod fuzz_readers;
mod gate_family;
mod gbench_suite;
mod go_suite;
mod hold_under_attack;
mod hostile;
mod html_plots;
mod input_formats;
mod interleave_cli;
mod layers;
mod net_cli;
mod no_sleeps;
mod noise_floor;
mod output_formats;
mod parse_cli;
mod parser_props;
mod reader_props;
mod readme;
mod rtla_readers;
mod sequential;
mod site_cli;
// The store scenarios run on SQLite and PostgreSQL alike, through the PostgreSQL driver too.
#[cfg(feature = "postgres")]
mod store_faults;
#[cfg(feature = "postgres")]
mod store_suite;
mod terminal_width;
mod timer_cli;
mod timer_interop;
mod timer_kernel_modes;
mod trust;
