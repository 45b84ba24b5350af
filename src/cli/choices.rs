//! Command-line twins of the library's enums, each declared once here with its `--help` text:
//! clap parses these, and `From` hands the library its own type, so library and wire-protocol
//! types carry no clap derive.

use crate::commands::{CheckFormat, DoctorFormat, ListFormat, PageFormat};
use crate::probe::frame::{Converter, Operation, PixelFormat};
use crate::probe::net::protocol::Test;
use crate::probe::timer::WaitMethod;
use crate::report::OutputFormat;
use crate::report::plot::PlotKind;

/// Declares a clap value enum mirroring a library enum variant for variant (the doc comments
/// are the `--help` text) and the conversion into it.
macro_rules! choice {
    ($(#[$meta:meta])* $name:ident => $lib:ident { $($(#[$doc:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum $name {
            $($(#[$doc])* $variant),+
        }

        impl From<$name> for $lib {
            fn from(choice: $name) -> $lib {
                match choice {
                    $($name::$variant => $lib::$variant),+
                }
            }
        }
    };
}

choice!(CheckFormatArg => CheckFormat {
    /// Terminal table.
    Table,
    /// GitHub markdown.
    Markdown,
    /// One self-contained HTML file: the verdict, the budget plot, the results' plots and
    /// tables.
    Html,
});

choice!(PageFormatArg => PageFormat {
    /// GitHub markdown, for a wiki page or a docs folder.
    Markdown,
    /// One self-contained HTML file, with the results' plots.
    Html,
});

choice!(DoctorFormatArg => DoctorFormat {
    /// One line per check, and a line of advice under each problem.
    Text,
    /// The checks as a JSON array.
    Json,
});

choice!(ListFormatArg => ListFormat {
    /// Aligned terminal table.
    Table,
    /// One JSON array of runs.
    Json,
});

choice!(WaitMethodArg => WaitMethod {
    /// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) — cyclictest's default.
    Nanosleep,
    /// A periodic timerfd read — Xenomai's user-mode method.
    Timerfd,
    /// Spin on the clock until the deadline: the OS/hypervisor noise floor.
    Busy,
});

choice!(NetTestArg => Test {
    /// Ping-pong over TCP.
    TcpRtt,
    /// Ping-pong over UDP.
    UdpRtt,
    /// Open-loop UDP at a fixed packet rate.
    UdpRate,
    /// Bulk TCP transfer, timed by the server.
    TcpThroughput,
});

choice!(PixelFormatArg => PixelFormat {
    /// Y plane, then interleaved U/V at quarter resolution (12 bits per pixel).
    Nv12,
    /// Y plane, then U and V planes at quarter resolution (12 bits per pixel).
    I420,
    /// 8-bit R, G, B, A per pixel.
    Rgba,
});

choice!(OperationArg => Operation {
    /// Copy the frame to another buffer.
    Copy,
    /// Convert NV12 or I420 to RGBA.
    Convert,
});

/// `frame --converter`: a converter by name, or the fastest this CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConverterArg {
    /// The fastest this CPU runs.
    Auto,
    /// Two pixels per step in general-purpose registers.
    Scalar,
    /// Eight pixels per step in 128-bit registers (every x86-64 CPU).
    Sse2,
    /// Sixteen pixels per step in 256-bit registers.
    Avx2,
    /// Thirty-two pixels per step in 512-bit registers (AVX-512BW and VBMI).
    Avx512,
}

impl From<ConverterArg> for Converter {
    fn from(choice: ConverterArg) -> Converter {
        match choice {
            ConverterArg::Auto => Converter::fastest(),
            ConverterArg::Scalar => Converter::Scalar,
            ConverterArg::Sse2 => Converter::Sse2,
            ConverterArg::Avx2 => Converter::Avx2,
            ConverterArg::Avx512 => Converter::Avx512,
        }
    }
}

choice!(
    /// `--plot-kind`.
    PlotKindArg => PlotKind {
    /// Latency by percentile (90 %, 99 %, 99.9 %, ... on a log scale), HdrHistogram style.
    Spectrum,
    /// How often each latency occurred, linear and log counts.
    Histogram,
    /// A timer run's per-second min, avg and max, and overruns.
    Series,
    /// Medians with 95 % CI whiskers (% of the baseline), attribution shares stacked.
    Bars,
    /// `compare`: each benchmark's change, significant ones coloured.
    Compare,
    /// `history`: a figure run by run with its CI band and change points.
    Trend,
    /// `check`: a latency budget's stages against the total.
    Budget,
});

/// `--input-format`: `auto` or a name from the format registry, each with its description.
pub fn input_format_parser() -> clap::builder::PossibleValuesParser {
    let auto =
        clap::builder::PossibleValue::new("auto").help("Detect the format from the first 64 KiB");
    clap::builder::PossibleValuesParser::new(
        std::iter::once(auto).chain(
            crate::ingest::format::BUILTIN
                .iter()
                .map(|f| clap::builder::PossibleValue::new(f.name()).help(f.describe())),
        ),
    )
}

/// The format `--input-format` names; `None` for `auto` (detect).
pub fn input_format(name: &str) -> Option<&'static dyn crate::ingest::InputFormat> {
    crate::ingest::format::by_name(crate::ingest::format::BUILTIN, name)
}

/// `--format`: a format from the report-format registry, each offered with its description.
pub fn output_format_parser() -> impl clap::builder::TypedValueParser<Value = &'static OutputFormat>
{
    formats_parser(|_| true)
}

/// `--format` of a comparison: the registry's formats that can show one.
pub fn comparison_format_parser()
-> impl clap::builder::TypedValueParser<Value = &'static OutputFormat> {
    formats_parser(|f| f.can.compare)
}

fn formats_parser(
    offered: fn(&OutputFormat) -> bool,
) -> impl clap::builder::TypedValueParser<Value = &'static OutputFormat> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(
        crate::report::FORMATS
            .iter()
            .filter(|f| offered(f))
            .map(|f| clap::builder::PossibleValue::new(f.name).help(f.help)),
    )
    .try_map(|name| {
        crate::report::output_format(&name).ok_or_else(|| format!("no format called {name}"))
    })
}
