use super::choices::{ConverterArg, OperationArg, PixelFormatArg};
use clap::Args;

#[derive(Debug, Args)]
pub struct FrameArgs {
    /// Frame width in pixels (even).
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(2..=16_384))]
    pub width: u32,
    /// Frame height in pixels (even).
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(2..=16_384))]
    pub height: u32,
    /// Pixel format of the source frame.
    #[arg(long, value_enum, default_value = "nv12")]
    pub pixfmt: PixelFormatArg,
    /// The stage to time.
    #[arg(long, value_enum, default_value = "copy")]
    pub op: OperationArg,
    /// Timed frames.
    #[arg(long, default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub iterations: u64,
    /// The row converter --op convert runs: the fastest this CPU has (auto: avx512, else
    /// avx2, else sse2 on x86-64, else scalar), or one by name, e.g. scalar to model a
    /// pipeline without vector code. All give the same bytes.
    #[arg(long, value_enum, default_value = "auto")]
    pub converter: ConverterArg,
    /// Untimed frames first (caches, page faults).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub warmup: u64,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

impl From<FrameArgs> for crate::commands::FrameOptions {
    fn from(args: FrameArgs) -> Self {
        crate::commands::FrameOptions {
            stage: crate::probe::frame::FrameConfig {
                width: args.width as usize,
                height: args.height as usize,
                pixfmt: args.pixfmt.into(),
                op: args.op.into(),
                iterations: args.iterations,
                warmup: args.warmup,
                converter: args.converter.into(),
            },
            output: args.output.into(),
        }
    }
}
