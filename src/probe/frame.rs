//! The cost of one pipeline stage on a video frame: copying it, or converting YUV to RGBA in
//! software (BT.601, limited range), timed per frame.

use crate::error::{Error, Result};
use crate::model::RunBuilder;
use crate::model::{BenchName, Metric, Run};
use hdrhistogram::Histogram;
use std::hint::black_box;
use std::time::{Instant, SystemTime};

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

/// BT.601 limited range in integer arithmetic (8 fractional bits, rounded):
/// R = (298(Y−16) + 409E + 128) >> 8, G = (298(Y−16) − 100D − 208E + 128) >> 8,
/// B = (298(Y−16) + 516D + 128) >> 8, with D = U − 128 and E = V − 128. Each whole multiple of
/// 256 is taken out of the shift (298 = 256 + 42, 409 = 256 + 153, −208 = −256 + 48,
/// 516 = 512 + 4), which leaves every term within 16 bits, so the same values come out of
/// 16-bit lanes: the form the compiler vectorises.
#[inline(always)]
fn chroma_terms(u: u8, v: u8) -> [[i16; 2]; 3] {
    let (d, e) = (i16::from(u) - 128, i16::from(v) - 128);
    [
        [e, 153 * e + 128],
        [-e, 48 * e - 100 * d + 128],
        [2 * d, 4 * d + 128],
    ]
}

/// One channel: the luma part plus the chroma part, clamped to a byte.
#[inline(always)]
fn channel(luma: i16, [whole, fraction]: [i16; 2]) -> u8 {
    let value = luma + whole + ((42 * luma + fraction) >> 8);
    value.clamp(0, 255) as u8
}

/// One RGBA pixel from its luma and its chroma terms.
#[inline(always)]
fn pixel(y: u8, terms: [[i16; 2]; 3], out: &mut [u8]) {
    let luma = i16::from(y) - 16;
    out[0] = channel(luma, terms[0]);
    out[1] = channel(luma, terms[1]);
    out[2] = channel(luma, terms[2]);
    out[3] = 255;
}

/// One row: each chroma sample's terms computed once for its two pixels, in straight runs of
/// slices the compiler can keep free of bounds checks.
#[inline(always)]
fn convert_row(out: &mut [u8], luma: &[u8], chroma: impl Iterator<Item = (u8, u8)>) {
    for ((out, y), (u, v)) in out
        .chunks_exact_mut(8)
        .zip(luma.chunks_exact(2))
        .zip(chroma)
    {
        let terms = chroma_terms(u, v);
        pixel(y[0], terms, &mut out[..4]);
        pixel(y[1], terms, &mut out[4..]);
    }
}

/// Converts one NV12 or I420 frame to RGBA.
fn convert(src: &[u8], dst: &mut [u8], width: usize, height: usize, pixfmt: PixelFormat) {
    let (luma, chroma) = src.split_at(width * height);
    let half = width / 2;
    let (u_plane, v_plane) = chroma.split_at(half * (height / 2));
    let rows = dst
        .chunks_exact_mut(width * 4)
        .zip(luma.chunks_exact(width));
    for (row, (out, luma)) in rows.enumerate() {
        let c = row / 2;
        let chroma = match pixfmt {
            PixelFormat::Nv12 => Chroma::Interleaved(&chroma[c * width..(c + 1) * width]),
            _ => Chroma::Planar(&u_plane[c * half..][..half], &v_plane[c * half..][..half]),
        };
        // Eight pixels at a time in vector registers, the rest (a multiple of two) one by one.
        // SAFETY: the vector converter needs SSE2, which every x86-64 CPU has.
        #[allow(unused_unsafe)] // elsewhere the stand-in is a safe function
        let done = unsafe { simd::convert_row(out, luma, &chroma) };
        let rest = (&mut out[done * 4..], &luma[done..]);
        match chroma {
            Chroma::Interleaved(uv) => convert_row(
                rest.0,
                rest.1,
                uv[done..].chunks_exact(2).map(|p| (p[0], p[1])),
            ),
            Chroma::Planar(u, v) => convert_row(
                rest.0,
                rest.1,
                u[done / 2..]
                    .iter()
                    .copied()
                    .zip(v[done / 2..].iter().copied()),
            ),
        }
    }
}

/// The converter this build runs: `sse2` (eight pixels per step) on x86-64, else `scalar`.
pub const CONVERTER: &str = simd::NAME;

/// One row's chroma: NV12's interleaved U/V pairs, or I420's separate U and V rows.
enum Chroma<'a> {
    Interleaved(&'a [u8]),
    Planar(&'a [u8], &'a [u8]),
}

/// The row converter in SSE2 (every x86-64 CPU has it), eight pixels per step, in the same
/// 16-bit arithmetic as [`channel`]: `packus` does the clamp to a byte.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::Chroma;
    use std::arch::x86_64::*;

    /// What `frame` reports as the converter in its settings.
    pub const NAME: &str = "sse2";

    /// Converts whole groups of eight pixels of the row; returns how many pixels it did.
    #[target_feature(enable = "sse2")]
    pub fn convert_row(out: &mut [u8], luma: &[u8], chroma: &Chroma) -> usize {
        let groups = luma.len() / 8;
        for k in 0..groups {
            let y = &luma[k * 8..][..8];
            let (d, e) = match chroma {
                Chroma::Interleaved(uv) => interleaved(&uv[k * 8..][..8]),
                Chroma::Planar(u, v) => planar(&u[k * 4..][..4], &v[k * 4..][..4]),
            };
            let rgba = pixels(widen(y), d, e);
            out[k * 32..][..16].copy_from_slice(&bytes(rgba[0]));
            out[k * 32 + 16..][..16].copy_from_slice(&bytes(rgba[1]));
        }
        groups * 8
    }

    fn bytes(v: __m128i) -> [u8; 16] {
        // SAFETY: both are 16 bytes; every bit pattern is a valid [u8; 16].
        unsafe { std::mem::transmute(v) }
    }

    /// Eight bytes as eight 16-bit lanes.
    #[target_feature(enable = "sse2")]
    fn widen(bytes: &[u8]) -> __m128i {
        let mut word = [0u8; 16];
        word[..8].copy_from_slice(bytes);
        // SAFETY: an unaligned load of 16 bytes that exist.
        let v = unsafe { _mm_loadu_si128(word.as_ptr().cast()) };
        _mm_unpacklo_epi8(v, _mm_setzero_si128())
    }

    /// NV12's four U/V pairs as D and E per pixel (each pair twice).
    #[target_feature(enable = "sse2")]
    fn interleaved(uv: &[u8]) -> (__m128i, __m128i) {
        let uv = _mm_sub_epi16(widen(uv), _mm_set1_epi16(128));
        let d = _mm_shufflehi_epi16::<0b10_10_00_00>(_mm_shufflelo_epi16::<0b10_10_00_00>(uv));
        let e = _mm_shufflehi_epi16::<0b11_11_01_01>(_mm_shufflelo_epi16::<0b11_11_01_01>(uv));
        (d, e)
    }

    /// I420's four U and four V samples as D and E per pixel (each sample twice).
    #[target_feature(enable = "sse2")]
    fn planar(u: &[u8], v: &[u8]) -> (__m128i, __m128i) {
        #[target_feature(enable = "sse2")]
        fn twice(x: &[u8]) -> __m128i {
            let mut eight = [0u8; 8];
            eight[..4].copy_from_slice(x);
            let w = _mm_sub_epi16(widen(&eight), _mm_set1_epi16(128));
            _mm_unpacklo_epi16(w, w)
        }
        (twice(u), twice(v))
    }

    /// Eight RGBA pixels (two registers of four) from luma and per-pixel D and E.
    #[target_feature(enable = "sse2")]
    fn pixels(y: __m128i, d: __m128i, e: __m128i) -> [__m128i; 2] {
        /// luma + whole + ((42·luma + fraction) >> 8), clamped to bytes (in the low half).
        #[target_feature(enable = "sse2")]
        fn channel(luma: __m128i, whole: __m128i, fraction: __m128i) -> __m128i {
            let k42 = _mm_mullo_epi16(luma, _mm_set1_epi16(42));
            let shifted = _mm_srai_epi16::<8>(_mm_add_epi16(k42, fraction));
            let value = _mm_add_epi16(_mm_add_epi16(luma, whole), shifted);
            _mm_packus_epi16(value, value)
        }
        #[target_feature(enable = "sse2")]
        fn mul(x: __m128i, k: i16) -> __m128i {
            _mm_mullo_epi16(x, _mm_set1_epi16(k))
        }
        let luma = _mm_sub_epi16(y, _mm_set1_epi16(16));
        let half = _mm_set1_epi16(128);
        let r = channel(luma, e, _mm_add_epi16(mul(e, 153), half));
        let g = channel(
            luma,
            _mm_sub_epi16(_mm_setzero_si128(), e),
            _mm_add_epi16(_mm_sub_epi16(mul(e, 48), mul(d, 100)), half),
        );
        let b = channel(luma, _mm_add_epi16(d, d), _mm_add_epi16(mul(d, 4), half));
        let rg = _mm_unpacklo_epi8(r, g);
        let ba = _mm_unpacklo_epi8(b, _mm_set1_epi8(-1));
        [_mm_unpacklo_epi16(rg, ba), _mm_unpackhi_epi16(rg, ba)]
    }
}

/// Elsewhere the row is converted pixel by pixel.
#[cfg(not(target_arch = "x86_64"))]
mod simd {
    pub const NAME: &str = "scalar";

    pub fn convert_row(_: &mut [u8], _: &[u8], _: &super::Chroma) -> usize {
        0
    }
}

/// A deterministic test pattern: gradients in every plane, so conversion does real work.
fn pattern(bytes: usize) -> Vec<u8> {
    (0..bytes)
        .map(|i| (i.wrapping_mul(31) >> 3) as u8)
        .collect()
}

pub fn run(config: &FrameConfig) -> Result<Run> {
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
    let frame_bytes = config.pixfmt.frame_bytes(w, h);
    let src = pattern(frame_bytes);
    let out_bytes = match config.op {
        Operation::Copy => frame_bytes,
        Operation::Convert => w * h * 4,
    };
    let mut dst = vec![0u8; out_bytes];
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| Error::Failed(format!("histogram: {e}")))?;
    let started = SystemTime::now();
    let mut total_ns = 0u128;
    for i in 0..config.warmup + config.iterations {
        let t0 = Instant::now();
        match config.op {
            Operation::Copy => dst.copy_from_slice(black_box(&src)),
            Operation::Convert => convert(black_box(&src), &mut dst, w, h, config.pixfmt),
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
        settings.push(("converter", CONVERTER.to_string()));
    }
    Ok(super::probe_run("frame", settings, benchmarks, started))
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

    fn clamp(v: i32) -> u8 {
        v.clamp(0, 255) as u8
    }

    /// BT.601 limited-range YUV to RGBA for one pixel, as written in the standard's integer
    /// form: the reference the row converter must match exactly.
    fn yuv_to_rgba(y: u8, u: u8, v: u8, out: &mut [u8]) {
        let c = 298 * (i32::from(y) - 16);
        let (d, e) = (i32::from(u) - 128, i32::from(v) - 128);
        out[0] = clamp((c + 409 * e + 128) >> 8);
        out[1] = clamp((c - 100 * d - 208 * e + 128) >> 8);
        out[2] = clamp((c + 516 * d + 128) >> 8);
        out[3] = 255;
    }

    #[test]
    fn every_yuv_triple_converts_exactly_as_the_reference() {
        let (mut want, mut got) = ([0u8; 4], [0u8; 4]);
        for y in 0..=255u8 {
            for u in 0..=255u8 {
                for v in 0..=255u8 {
                    yuv_to_rgba(y, u, v, &mut want);
                    pixel(y, chroma_terms(u, v), &mut got);
                    assert_eq!(want, got, "y={y} u={u} v={v}");
                }
            }
        }
    }

    /// The vector converter against the reference for every Y, U and V: each U/V pair with
    /// all 256 lumas, eight at a time, through both chroma layouts.
    #[test]
    fn the_vector_converter_matches_the_reference_for_every_yuv_triple() {
        let (mut out, mut want) = ([0u8; 32], [0u8; 4]);
        for u in 0..=255u8 {
            for v in 0..=255u8 {
                let uv = [u, v, u, v, u, v, u, v];
                let (us, vs) = ([u; 4], [v; 4]);
                for layout in [Chroma::Interleaved(&uv), Chroma::Planar(&us, &vs)] {
                    for first in (0..=255u8).step_by(8) {
                        let luma: Vec<u8> = (first..=first + 7).collect();
                        // SAFETY: as in `convert`.
                        #[allow(unused_unsafe)]
                        let done = unsafe { simd::convert_row(&mut out, &luma, &layout) };
                        if done == 0 {
                            return; // no vector converter on this architecture
                        }
                        for (i, y) in luma.iter().enumerate() {
                            yuv_to_rgba(*y, u, v, &mut want);
                            assert_eq!(out[i * 4..i * 4 + 4], want, "y={y} u={u} v={v}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn whole_frames_convert_pixel_for_pixel_as_the_reference() {
        // 70 pixels a row: eight groups of eight in vector registers, then six one by one.
        let (w, h) = (70, 6);
        let src = pattern(PixelFormat::Nv12.frame_bytes(w, h));
        let (luma, chroma) = src.split_at(w * h);
        for pixfmt in [PixelFormat::Nv12, PixelFormat::I420] {
            let mut got = vec![0u8; w * h * 4];
            convert(&src, &mut got, w, h, pixfmt);
            let mut want = vec![0u8; w * h * 4];
            for (px, out) in want.chunks_exact_mut(4).enumerate() {
                let (row, col) = (px / w, px % w);
                let (u, v) = match pixfmt {
                    PixelFormat::Nv12 => {
                        let i = row / 2 * w + (col & !1);
                        (chroma[i], chroma[i + 1])
                    }
                    _ => {
                        let i = row / 2 * (w / 2) + col / 2;
                        (chroma[i], chroma[(w / 2) * (h / 2) + i])
                    }
                };
                yuv_to_rgba(luma[px], u, v, out);
            }
            assert_eq!(got, want, "{pixfmt:?}");
        }
    }

    #[test]
    fn bt601_reference_colours() {
        let mut px = [0u8; 4];
        yuv_to_rgba(16, 128, 128, &mut px);
        assert_eq!(px, [0, 0, 0, 255], "black");
        yuv_to_rgba(235, 128, 128, &mut px);
        assert_eq!(px, [255, 255, 255, 255], "white");
        yuv_to_rgba(81, 90, 240, &mut px);
        assert_eq!(px, [255, 0, 0, 255], "red");
    }

    #[test]
    fn nv12_and_i420_of_the_same_picture_convert_alike() {
        let (w, h) = (4, 2);
        let luma = [16u8, 50, 100, 235, 81, 90, 200, 128];
        let (u, v) = ([90u8, 128], [240u8, 128]);
        let mut nv12 = luma.to_vec();
        nv12.extend([u[0], v[0], u[1], v[1]]);
        let mut i420 = luma.to_vec();
        i420.extend(u);
        i420.extend(v);
        let (mut a, mut b) = (vec![0u8; w * h * 4], vec![0u8; w * h * 4]);
        convert(&nv12, &mut a, w, h, PixelFormat::Nv12);
        convert(&i420, &mut b, w, h, PixelFormat::I420);
        assert_eq!(a, b);
        assert_eq!(
            &a[12..16],
            [255, 255, 255, 255],
            "pixel 3: white with neutral chroma"
        );
    }
}
