//! NV12 and I420 to RGBA, BT.601 limited range, in integer arithmetic: one pixel at a time
//! (the reference form, and the tail of every row), or many at a time in vector registers
//! where the CPU has them. Every converter gives the same bytes.

use super::PixelFormat;
use super::chroma::Chroma;

/// Which row converter runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Converter {
    /// Two pixels per step (one chroma sample) in general-purpose registers.
    Scalar,
    /// Eight pixels per step in 128-bit registers (every x86-64 CPU).
    Sse2,
    /// Sixteen pixels per step in 256-bit registers.
    Avx2,
    /// Thirty-two pixels per step in 512-bit registers (AVX-512BW and VBMI).
    Avx512,
}

impl Converter {
    /// Every converter, fastest first.
    pub const ALL: [Converter; 4] = [
        Converter::Avx512,
        Converter::Avx2,
        Converter::Sse2,
        Converter::Scalar,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Converter::Scalar => "scalar",
            Converter::Sse2 => "sse2",
            Converter::Avx2 => "avx2",
            Converter::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run it.
    pub fn available(self) -> bool {
        match self {
            Converter::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Converter::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Converter::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Converter::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vbmi")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Converter::Sse2 | Converter::Avx2 | Converter::Avx512 => false,
        }
    }

    /// The fastest one this CPU can run.
    pub fn fastest() -> Converter {
        Converter::ALL
            .into_iter()
            .find(|c| c.available())
            .unwrap_or(Converter::Scalar)
    }
}

/// BT.601 limited range in integer arithmetic (8 fractional bits, rounded):
/// R = (298(Y−16) + 409E + 128) >> 8, G = (298(Y−16) − 100D − 208E + 128) >> 8,
/// B = (298(Y−16) + 516D + 128) >> 8, with D = U − 128 and E = V − 128. Each whole multiple of
/// 256 is taken out of the shift (298 = 256 + 42, 409 = 256 + 153, −208 = −256 + 48,
/// 516 = 512 + 4), which leaves every term within 16 bits, so the same values come out of
/// 16-bit vector lanes.
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
fn scalar_row(out: &mut [u8], luma: &[u8], chroma: impl Iterator<Item = (u8, u8)>) {
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

/// Converts what it can of two rows that share `chroma` in vector registers; returns how many
/// pixels of each it did (a multiple of two).
fn vector_rows(
    converter: Converter,
    out: [&mut [u8]; 2],
    luma: [&[u8]; 2],
    chroma: &Chroma,
) -> usize {
    match converter {
        Converter::Scalar => 0,
        // SAFETY: every x86-64 CPU has SSE2.
        #[cfg(target_arch = "x86_64")]
        Converter::Sse2 => unsafe { super::x86::sse2_rows(out, luma, chroma) },
        // SAFETY: `convert` asserts that the CPU has AVX2 before choosing it.
        #[cfg(target_arch = "x86_64")]
        Converter::Avx2 => unsafe { super::x86::avx2_rows(out, luma, chroma) },
        // SAFETY: as for AVX2, with AVX-512F, AVX-512BW and AVX-512VBMI.
        #[cfg(target_arch = "x86_64")]
        Converter::Avx512 => unsafe { super::x86::avx512_rows(out, luma, chroma) },
        #[cfg(not(target_arch = "x86_64"))]
        Converter::Sse2 | Converter::Avx2 | Converter::Avx512 => 0,
    }
}

/// Converts one NV12 or I420 frame to RGBA with `converter`, which this CPU must have; the
/// height must be even (each row of chroma serves two rows of pixels).
pub fn convert(
    converter: Converter,
    src: &[u8],
    dst: &mut [u8],
    (width, height): (usize, usize),
    pixfmt: PixelFormat,
) {
    assert!(
        converter.available(),
        "{} is not available",
        converter.name()
    );
    assert!(
        height % 2 == 0,
        "an odd height ({height}) has no chroma row for its last row"
    );
    let (luma, chroma) = src.split_at(width * height);
    let half = width / 2;
    let (u_plane, v_plane) = chroma.split_at(half * (height / 2));
    let pairs = dst
        .chunks_exact_mut(2 * width * 4)
        .zip(luma.chunks_exact(2 * width));
    for (c, (out, luma)) in pairs.enumerate() {
        let chroma = match pixfmt {
            PixelFormat::Nv12 => Chroma::Interleaved(&chroma[c * width..(c + 1) * width]),
            _ => Chroma::Planar(&u_plane[c * half..][..half], &v_plane[c * half..][..half]),
        };
        let (out0, out1) = out.split_at_mut(width * 4);
        let (luma0, luma1) = luma.split_at(width);
        let done = vector_rows(converter, [&mut *out0, &mut *out1], [luma0, luma1], &chroma);
        for (out, luma) in [(out0, luma0), (out1, luma1)] {
            scalar_rest(out, luma, &chroma, done);
        }
    }
}

/// A row's pixels from `done` on, one chroma sample at a time.
fn scalar_rest(out: &mut [u8], luma: &[u8], chroma: &Chroma, done: usize) {
    let (out, luma) = (&mut out[done * 4..], &luma[done..]);
    match *chroma {
        Chroma::Interleaved(uv) => {
            scalar_row(out, luma, uv[done..].chunks_exact(2).map(|p| (p[0], p[1])))
        }
        Chroma::Planar(u, v) => {
            let (u, v) = (&u[done / 2..], &v[done / 2..]);
            scalar_row(out, luma, u.iter().copied().zip(v.iter().copied()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clamp(v: i32) -> u8 {
        v.clamp(0, 255) as u8
    }

    /// BT.601 limited-range YUV to RGBA for one pixel, as written in the standard's integer
    /// form: the reference every converter must match exactly.
    fn yuv_to_rgba(y: u8, u: u8, v: u8, out: &mut [u8]) {
        let c = 298 * (i32::from(y) - 16);
        let (d, e) = (i32::from(u) - 128, i32::from(v) - 128);
        out[0] = clamp((c + 409 * e + 128) >> 8);
        out[1] = clamp((c - 100 * d - 208 * e + 128) >> 8);
        out[2] = clamp((c + 516 * d + 128) >> 8);
        out[3] = 255;
    }

    /// The converters this CPU runs; the test says which it could not.
    fn runnable() -> Vec<Converter> {
        let (run, not): (Vec<_>, Vec<_>) = Converter::ALL.into_iter().partition(|c| c.available());
        if !not.is_empty() {
            eprintln!("not on this CPU, so not tested here: {not:?}");
        }
        run
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

    /// Each vector converter against the reference for every Y, U and V: each U/V pair with
    /// all 256 lumas in one row, through both chroma layouts.
    #[test]
    fn the_vector_converters_match_the_reference_for_every_yuv_triple() {
        // Two rows sharing the chroma row: every luma, in opposite orders.
        let luma: [Vec<u8>; 2] = [(0..=255).collect(), (0..=255).rev().collect()];
        let mut out = [vec![0u8; 256 * 4], vec![0u8; 256 * 4]];
        let mut want = [0u8; 4];
        for converter in runnable() {
            for u in 0..=255u8 {
                for v in 0..=255u8 {
                    let uv = [u, v].repeat(128);
                    let (us, vs) = ([u; 128], [v; 128]);
                    for layout in [Chroma::Interleaved(&uv), Chroma::Planar(&us, &vs)] {
                        let [out0, out1] = &mut out;
                        let done =
                            vector_rows(converter, [out0, out1], [&luma[0], &luma[1]], &layout);
                        if converter != Converter::Scalar {
                            assert_eq!(done, 256, "{converter:?}");
                        }
                        for (out, luma) in out.iter().zip(&luma) {
                            for (i, &y) in luma[..done].iter().enumerate() {
                                yuv_to_rgba(y, u, v, &mut want);
                                let got = &out[i * 4..i * 4 + 4];
                                assert_eq!(got, want, "{converter:?} y={y} u={u} v={v}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn whole_frames_convert_pixel_for_pixel_as_the_reference() {
        // 78 pixels a row: four groups of sixteen (or nine of eight) in vector registers,
        // then the rest one by one.
        let (w, h) = (78, 6);
        let src = super::super::pattern(PixelFormat::Nv12.frame_bytes(w, h));
        let (luma, chroma) = src.split_at(w * h);
        for (converter, pixfmt) in runnable()
            .into_iter()
            .flat_map(|c| [(c, PixelFormat::Nv12), (c, PixelFormat::I420)])
        {
            let mut got = vec![0u8; w * h * 4];
            convert(converter, &src, &mut got, (w, h), pixfmt);
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
            assert_eq!(got, want, "{converter:?} {pixfmt:?}");
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
        convert(Converter::Scalar, &nv12, &mut a, (w, h), PixelFormat::Nv12);
        convert(Converter::Scalar, &i420, &mut b, (w, h), PixelFormat::I420);
        assert_eq!(a, b);
        assert_eq!(
            &a[12..16],
            [255, 255, 255, 255],
            "pixel 3: white with neutral chroma"
        );
    }
}
