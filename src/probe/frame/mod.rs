//! The cost of one pipeline stage on a video frame: copying it, or converting YUV to RGBA in
//! software (BT.601, limited range), timed per frame.

mod chroma;
mod convert;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use convert::Converter;

use crate::error::{Error, Result};
use crate::model::RunBuilder;
use crate::model::{BenchName, Metric, Run};
use hdrhistogram::Histogram;
use std::hint::black_box;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelFormat {
    /// Y plane, then interleaved U/V at quarter resolution (12 bits per pixel).
    Nv12,
    /// Y plane, then U and V planes at quarter resolution (12 bits per pixel).
    I420,
    /// 8-bit R, G, B, A per pixel.
    Rgba,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Copy the frame to another buffer.
    Copy,
    /// Convert NV12 or I420 to RGBA.
    Convert,
}

pub struct FrameConfig {
    pub width: usize,
    pub height: usize,
    pub pixfmt: PixelFormat,
    pub op: Operation,
    pub iterations: u64,
    pub warmup: u64,
    /// The row converter `--op convert` runs.
    pub converter: Converter,
}

impl PixelFormat {
    pub fn frame_bytes(self, width: usize, height: usize) -> usize {
        match self {
            PixelFormat::Nv12 | PixelFormat::I420 => width * height * 3 / 2,
            PixelFormat::Rgba => width * height * 4,
        }
    }

    fn name(self) -> &'static str {
        match self {
            PixelFormat::Nv12 => "nv12",
            PixelFormat::I420 => "i420",
            PixelFormat::Rgba => "rgba",
        }
    }
}

/// A deterministic test pattern: gradients in every plane, so conversion does real work.
fn pattern(bytes: usize) -> Vec<u8> {
    (0..bytes)
        .map(|i| (i.wrapping_mul(31) >> 3) as u8)
        .collect()
}

/// Refuses what cannot be measured: odd sizes, no iterations, nothing to convert, or a
/// converter this CPU cannot run.
fn check(config: &FrameConfig) -> Result<()> {
    let (w, h) = (config.width, config.height);
    if w == 0 || h == 0 || w % 2 == 1 || h % 2 == 1 {
        return Err(Error::Input(format!(
            "--width and --height must be even and non-zero (got {w}x{h}): chroma is subsampled 2x2"
        )));
    }
    if config.iterations == 0 {
        return Err(Error::Input("--iterations must be at least 1".into()));
    }
    if config.op == Operation::Convert && config.pixfmt == PixelFormat::Rgba {
        return Err(Error::Input(
            "--op convert converts nv12 or i420 to RGBA; --pixfmt rgba has nothing to convert"
                .into(),
        ));
    }
    if config.op == Operation::Convert && !config.converter.available() {
        let can: Vec<_> = Converter::ALL
            .into_iter()
            .filter(|c| c.available())
            .map(Converter::name)
            .collect();
        return Err(Error::Input(format!(
            "--converter {}: this CPU cannot run it (it can run: {})",
            config.converter.name(),
            can.join(", ")
        )));
    }
    Ok(())
}

pub fn run(config: &FrameConfig, stamp: crate::env::Stamp) -> Result<Run> {
    check(config)?;
    let (w, h) = (config.width, config.height);
    let frame_bytes = config.pixfmt.frame_bytes(w, h);
    let src = pattern(frame_bytes);
    let out_bytes = match config.op {
        Operation::Copy => frame_bytes,
        Operation::Convert => w * h * 4,
    };
    let mut dst = vec![0u8; out_bytes];
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| Error::Environment(format!("histogram: {e}")))?;
    let started = stamp.clock.now();
    let mut total_ns = 0u128;
    for i in 0..config.warmup + config.iterations {
        let t0 = Instant::now();
        match config.op {
            Operation::Copy => dst.copy_from_slice(black_box(&src)),
            Operation::Convert => convert::convert(
                config.converter,
                black_box(&src),
                &mut dst,
                (w, h),
                config.pixfmt,
            ),
        }
        black_box(&mut dst);
        let ns = t0.elapsed().as_nanos();
        if i >= config.warmup {
            hist.saturating_record(ns as u64);
            total_ns += ns;
        }
    }

    let name = format!(
        "frame/{}/{}/{w}x{h}",
        match config.op {
            Operation::Copy => "copy",
            Operation::Convert => "convert",
        },
        config.pixfmt.name()
    );
    let mut builder = RunBuilder::default();
    let bench = builder.benchmark(&name, None, BenchName::plain);
    // Bandwidth counts the source frame once per operation.
    let bytes_per_second = frame_bytes as f64 * config.iterations as f64 / (total_ns as f64 / 1e9);
    builder.record(bench, "bandwidth", "B/s", bytes_per_second);
    builder.record(bench, "frame_bytes", "B", frame_bytes as f64);
    let mut benchmarks = builder.finish();
    benchmarks[0]
        .metrics
        .insert(0, Metric::time_distribution("time", hist));
    benchmarks[0].iterations = vec![config.iterations];

    let mut settings = vec![
        ("width", w.to_string()),
        ("height", h.to_string()),
        ("pixfmt", config.pixfmt.name().to_string()),
        ("frame_bytes", frame_bytes.to_string()),
        ("iterations", config.iterations.to_string()),
        ("warmup", config.warmup.to_string()),
    ];
    if config.op == Operation::Convert {
        settings.push(("converter", config.converter.name().to_string()));
    }
    Ok(super::probe_run(
        "frame", settings, benchmarks, started, stamp,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sizes() {
        assert_eq!(PixelFormat::Nv12.frame_bytes(1280, 720), 1_382_400);
        assert_eq!(PixelFormat::I420.frame_bytes(1280, 720), 1_382_400);
        assert_eq!(PixelFormat::Rgba.frame_bytes(1280, 720), 3_686_400);
    }
}
