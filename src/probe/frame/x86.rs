//! The row converters in x86 vector registers: SSE2 (every x86-64 CPU) eight pixels per step,
//! AVX2 sixteen. Both run one row loop, [`row`], and one body of arithmetic, [`rgba`], the
//! 16-bit form of `convert::channel` in which `packus` does the clamp to a byte; they differ
//! only in how a step's samples are loaded and its pixels stored ([`Step`]).

use super::chroma::Chroma;
use std::arch::x86_64::*;

/// A register of 16-bit lanes. A value proves that the CPU has the instructions: the only
/// way to make one is [`Step::zero`], which is unsafe.
trait Lanes: Copy {
    /// A register like `self` with `value` in every lane.
    fn splat(self, value: i16) -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, k: i16) -> Self;
    /// Arithmetic shift right by 8.
    fn shr8(self) -> Self;
    /// Both registers' lanes clamped to bytes: `self`'s, then `other`'s (per 128-bit half).
    fn pack(self, other: Self) -> Self;
    /// Bytes of `self` and `other` interleaved, from the low or high half (per 128-bit half).
    fn zip8(self, other: Self, high: bool) -> Self;
    /// The same, in 16-bit units.
    fn zip16(self, other: Self, high: bool) -> Self;
}

/// SSE2's 128-bit register.
#[derive(Clone, Copy)]
struct Sse2(__m128i);

/// AVX2's 256-bit register.
#[derive(Clone, Copy)]
struct Avx2(__m256i);

/// Implements [`Lanes`] for one register width from its instructions.
macro_rules! lanes {
    ($ty:ident, $set1:ident, $add:ident, $sub:ident, $mullo:ident, $srai:ident, $packus:ident,
     [$lo8:ident, $hi8:ident], [$lo16:ident, $hi16:ident]) => {
        // SAFETY (each block): a value of this type exists only inside a row function that
        // has its instructions (see `Lanes`).
        impl Lanes for $ty {
            #[inline(always)]
            fn splat(self, value: i16) -> Self {
                $ty(unsafe { $set1(value) })
            }
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                $ty(unsafe { $add(self.0, other.0) })
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                $ty(unsafe { $sub(self.0, other.0) })
            }
            #[inline(always)]
            fn mul(self, k: i16) -> Self {
                $ty(unsafe { $mullo(self.0, $set1(k)) })
            }
            #[inline(always)]
            fn shr8(self) -> Self {
                $ty(unsafe { $srai::<8>(self.0) })
            }
            #[inline(always)]
            fn pack(self, other: Self) -> Self {
                $ty(unsafe { $packus(self.0, other.0) })
            }
            #[inline(always)]
            fn zip8(self, other: Self, high: bool) -> Self {
                let zip = if high { $hi8 } else { $lo8 };
                $ty(unsafe { zip(self.0, other.0) })
            }
            #[inline(always)]
            fn zip16(self, other: Self, high: bool) -> Self {
                let zip = if high { $hi16 } else { $lo16 };
                $ty(unsafe { zip(self.0, other.0) })
            }
        }
    };
}

lanes!(
    Sse2,
    _mm_set1_epi16,
    _mm_add_epi16,
    _mm_sub_epi16,
    _mm_mullo_epi16,
    _mm_srai_epi16,
    _mm_packus_epi16,
    [_mm_unpacklo_epi8, _mm_unpackhi_epi8],
    [_mm_unpacklo_epi16, _mm_unpackhi_epi16]
);
lanes!(
    Avx2,
    _mm256_set1_epi16,
    _mm256_add_epi16,
    _mm256_sub_epi16,
    _mm256_mullo_epi16,
    _mm256_srai_epi16,
    _mm256_packus_epi16,
    [_mm256_unpacklo_epi8, _mm256_unpackhi_epi8],
    [_mm256_unpacklo_epi16, _mm256_unpackhi_epi16]
);

/// RGBA pixels from luma Y and chroma D = U − 128, E = V − 128, one pixel per lane. Per
/// 128-bit half of the lanes, the first register holds its first four pixels, the second
/// its last four.
#[inline(always)]
fn rgba<L: Lanes>(y: L, d: L, e: L) -> [L; 2] {
    // luma + whole + ((42·luma + fraction) >> 8), before the clamp.
    let channel = |luma: L, whole: L, fraction: L| {
        let shifted = luma.mul(42).add(fraction).shr8();
        luma.add(whole).add(shifted)
    };
    let luma = y.sub(y.splat(16));
    let half = y.splat(128);
    let r = channel(luma, e, e.mul(153).add(half));
    let g = channel(luma, y.splat(0).sub(e), e.mul(48).sub(d.mul(100)).add(half));
    let b = channel(luma, d.add(d), d.mul(4).add(half));
    let (rb, ga) = (r.pack(b), g.pack(y.splat(255)));
    let (rg, ba) = (rb.zip8(ga, false), rb.zip8(ga, true));
    [rg.zip16(ba, false), rg.zip16(ba, true)]
}

/// Loading one step's samples into lanes, one pixel per lane, and storing its pixels.
trait Step: Lanes {
    /// Pixels per step.
    const PIXELS: usize;
    /// # Safety
    /// The CPU must have the register's instructions.
    unsafe fn zero() -> Self;
    /// `PIXELS` bytes, one per lane.
    fn widen(self, bytes: &[u8]) -> Self;
    /// `PIXELS` bytes of interleaved U/V pairs as D and E, each pair in its two pixels' lanes.
    fn pairs(self, uv: &[u8]) -> (Self, Self);
    /// `PIXELS / 2` chroma samples, each in its two pixels' lanes, less 128.
    fn samples(self, bytes: &[u8]) -> Self;
    /// Stores what [`rgba`] made, in pixel order.
    fn store(pixels: [Self; 2], out: &mut [u8]);
}

// SAFETY (each unsafe block): a register value exists only where its instructions are
// available (see `Lanes`), and each load or store touches exactly the bytes of its slice.
impl Step for Sse2 {
    const PIXELS: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Sse2(unsafe { _mm_setzero_si128() })
    }
    #[inline(always)]
    fn widen(self, bytes: &[u8]) -> Self {
        let eight: &[u8; 8] = bytes.try_into().unwrap();
        let zero = unsafe { _mm_setzero_si128() };
        Sse2(unsafe { _mm_unpacklo_epi8(_mm_loadl_epi64(eight.as_ptr().cast()), zero) })
    }
    #[inline(always)]
    fn pairs(self, uv: &[u8]) -> (Self, Self) {
        let uv = self.widen(uv).sub(self.splat(128)).0;
        unsafe {
            let d = _mm_shufflehi_epi16::<0b10_10_00_00>(_mm_shufflelo_epi16::<0b10_10_00_00>(uv));
            let e = _mm_shufflehi_epi16::<0b11_11_01_01>(_mm_shufflelo_epi16::<0b11_11_01_01>(uv));
            (Sse2(d), Sse2(e))
        }
    }
    #[inline(always)]
    fn samples(self, bytes: &[u8]) -> Self {
        let mut eight = [0u8; 8];
        eight[..4].copy_from_slice(bytes);
        let w = self.widen(&eight).sub(self.splat(128)).0;
        Sse2(unsafe { _mm_unpacklo_epi16(w, w) })
    }
    #[inline(always)]
    fn store(pixels: [Self; 2], out: &mut [u8]) {
        for (half, pixels) in out.chunks_exact_mut(16).zip(pixels) {
            unsafe { _mm_storeu_si128(half.as_mut_ptr().cast(), pixels.0) };
        }
    }
}

impl Step for Avx2 {
    const PIXELS: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Avx2(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    fn widen(self, bytes: &[u8]) -> Self {
        let sixteen: &[u8; 16] = bytes.try_into().unwrap();
        Avx2(unsafe { _mm256_cvtepu8_epi16(_mm_loadu_si128(sixteen.as_ptr().cast())) })
    }
    #[inline(always)]
    fn pairs(self, uv: &[u8]) -> (Self, Self) {
        // Four pairs per 128-bit half, where the shuffles work.
        let uv = self.widen(uv).sub(self.splat(128)).0;
        unsafe {
            let d = _mm256_shufflehi_epi16::<0b10_10_00_00>(
                _mm256_shufflelo_epi16::<0b10_10_00_00>(uv),
            );
            let e = _mm256_shufflehi_epi16::<0b11_11_01_01>(
                _mm256_shufflelo_epi16::<0b11_11_01_01>(uv),
            );
            (Avx2(d), Avx2(e))
        }
    }
    #[inline(always)]
    fn samples(self, bytes: &[u8]) -> Self {
        // Each byte doubled before widening.
        let eight: &[u8; 8] = bytes.try_into().unwrap();
        let doubled = unsafe {
            let x = _mm_loadl_epi64(eight.as_ptr().cast());
            _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(x, x))
        };
        Avx2(doubled).sub(self.splat(128))
    }
    #[inline(always)]
    fn store([first, last]: [Self; 2], out: &mut [u8]) {
        // Each register holds pixels 0–3 and 8–11, or 4–7 and 12–15: put them in order.
        let ordered = unsafe {
            [
                _mm256_permute2x128_si256::<0x20>(first.0, last.0),
                _mm256_permute2x128_si256::<0x31>(first.0, last.0),
            ]
        };
        for (half, pixels) in out.chunks_exact_mut(32).zip(ordered) {
            unsafe { _mm256_storeu_si256(half.as_mut_ptr().cast(), pixels) };
        }
    }
}

/// Converts whole steps of the row; returns how many pixels it did.
///
/// # Safety
/// The CPU must have `S`'s instructions.
#[inline(always)]
unsafe fn row<S: Step>(out: &mut [u8], luma: &[u8], chroma: &Chroma) -> usize {
    let n = S::PIXELS;
    // SAFETY: the caller's promise.
    let zero = unsafe { S::zero() };
    let steps = luma.len() / n;
    let pixels = out[..steps * n * 4]
        .chunks_exact_mut(n * 4)
        .zip(luma.chunks_exact(n));
    match chroma {
        Chroma::Interleaved(uv) => {
            for ((out, y), uv) in pixels.zip(uv.chunks_exact(n)) {
                let (d, e) = zero.pairs(uv);
                S::store(rgba(zero.widen(y), d, e), out);
            }
        }
        Chroma::Planar(u, v) => {
            let samples = u.chunks_exact(n / 2).zip(v.chunks_exact(n / 2));
            for ((out, y), (u, v)) in pixels.zip(samples) {
                let (d, e) = (zero.samples(u), zero.samples(v));
                S::store(rgba(zero.widen(y), d, e), out);
            }
        }
    }
    steps * n
}

/// Eight pixels per step.
///
/// # Safety
/// The CPU must have SSE2 (every x86-64 CPU does).
#[target_feature(enable = "sse2")]
pub unsafe fn sse2_row(out: &mut [u8], luma: &[u8], chroma: &Chroma) -> usize {
    // SAFETY: the caller's promise.
    unsafe { row::<Sse2>(out, luma, chroma) }
}

/// Sixteen pixels per step.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn avx2_row(out: &mut [u8], luma: &[u8], chroma: &Chroma) -> usize {
    // SAFETY: the caller's promise.
    unsafe { row::<Avx2>(out, luma, chroma) }
}
