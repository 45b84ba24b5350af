use crate::probe::frame::{Operation, PixelFormat};
use clap::Args;

#[derive(Debug, Args)]
pub struct FrameArgs {
    /// Frame width in pixels (even).
    #[arg(long, default_value_t = 1280)]
    pub width: usize,
    /// Frame height in pixels (even).
    #[arg(long, default_value_t = 720)]
    pub height: usize,
    /// Pixel format of the source frame.
    #[arg(long, value_enum, default_value = "nv12")]
    pub pixfmt: PixelFormat,
    /// The stage to time.
    #[arg(long, value_enum, default_value = "copy")]
    pub op: Operation,
    /// Timed frames.
    #[arg(long, default_value_t = 1000)]
    pub iterations: u64,
    /// Untimed frames first (caches, page faults).
    #[arg(long, default_value_t = 50)]
    pub warmup: u64,
    #[command(flatten)]
    pub output: super::ProbeOutputArgs,
}
