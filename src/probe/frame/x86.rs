//! The row converters in x86 vector registers: SSE2 (every x86-64 CPU) eight pixels per step,
//! AVX2 sixteen, AVX-512 (with VBMI's byte permutations) thirty-two. All run one loop over a
//! pair of rows, [`rows`], and one body of arithmetic, [`rgba`], the 16-bit form of
//! `convert::channel` in which `packus` does the clamp to a byte; they differ only in how a
//! step's samples are loaded and its pixels stored ([`Step`]).

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

/// AVX-512's 512-bit register (byte and word lanes: AVX-512BW).
#[derive(Clone, Copy)]
struct Avx512(__m512i);

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
lanes!(
    Avx512,
    _mm512_set1_epi16,
    _mm512_add_epi16,
    _mm512_sub_epi16,
    _mm512_mullo_epi16,
    _mm512_srai_epi16,
    _mm512_packus_epi16,
    [_mm512_unpacklo_epi8, _mm512_unpackhi_epi8],
    [_mm512_unpacklo_epi16, _mm512_unpackhi_epi16]
);

/// The bytes of RGBA pixels from luma Y and chroma D = U − 128, E = V − 128, one pixel per
/// lane: per 128-bit part of the lanes (eight pixels), the first register holds their R bytes
/// then their B bytes, the second their G bytes then their A bytes.
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
    [r.pack(b), g.pack(y.splat(255))]
}

/// The pixels of what [`rgba`] made, interleaved within each 128-bit part: the first register
/// holds the part's first four pixels, the second its last four.
#[inline(always)]
fn interleaved<L: Lanes>([rb, ga]: [L; 2]) -> [L; 2] {
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
    /// Stores what [`rgba`] made as pixels, in order.
    fn store(channels: [Self; 2], out: &mut [u8]);
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
    fn store(channels: [Self; 2], out: &mut [u8]) {
        for (half, pixels) in out.chunks_exact_mut(16).zip(interleaved(channels)) {
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
    fn store(channels: [Self; 2], out: &mut [u8]) {
        // Each register holds pixels 0–3 and 8–11, or 4–7 and 12–15: put them in order.
        let [first, last] = interleaved(channels);
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

/// Byte indices for `vpermb`/`vpermt2b`, from a function of the output byte's position.
#[inline(always)]
fn byte_indices(index: impl Fn(usize) -> usize) -> __m512i {
    let bytes: [u8; 64] = std::array::from_fn(|i| index(i) as u8);
    // SAFETY: an unaligned load of the 64 bytes of a local array; called only from the
    // AVX-512 register's methods, which exist only where the CPU has it.
    unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
}

impl Avx512 {
    /// Bytes of `bytes` (at most 64) into the low byte of each 16-bit lane: lane `i` takes
    /// byte `source(i)`; less 128, as chroma is used.
    #[inline(always)]
    fn chroma(self, bytes: &[u8], source: impl Fn(usize) -> usize) -> Self {
        // SAFETY: the masked load reads only `bytes.len()` bytes; VBMI's byte permutation and
        // the zeroing of every odd byte are instructions of this register's row function.
        let permuted = unsafe {
            let loaded =
                _mm512_maskz_loadu_epi8(u64::MAX >> (64 - bytes.len()), bytes.as_ptr().cast());
            let index = byte_indices(|i| source(i / 2));
            _mm512_maskz_permutexvar_epi8(0x5555_5555_5555_5555, index, loaded)
        };
        Avx512(permuted).sub(self.splat(128))
    }
}

impl Step for Avx512 {
    const PIXELS: usize = 32;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Avx512(unsafe { _mm512_setzero_si512() })
    }
    #[inline(always)]
    fn widen(self, bytes: &[u8]) -> Self {
        let bytes: &[u8; 32] = bytes.try_into().unwrap();
        Avx512(unsafe { _mm512_cvtepu8_epi16(_mm256_loadu_si256(bytes.as_ptr().cast())) })
    }
    #[inline(always)]
    fn pairs(self, uv: &[u8]) -> (Self, Self) {
        // Pixel i takes pair i / 2: its U at 2(i / 2), its V after it.
        let uv: &[u8; 32] = uv.try_into().unwrap();
        (self.chroma(uv, |i| i & !1), self.chroma(uv, |i| i | 1))
    }
    #[inline(always)]
    fn samples(self, bytes: &[u8]) -> Self {
        let bytes: &[u8; 16] = bytes.try_into().unwrap();
        self.chroma(bytes, |i| i / 2)
    }
    #[inline(always)]
    fn store([rb, ga]: [Self; 2], out: &mut [u8]) {
        // Pixel 8k + j's bytes sit at 16k + j (R, G) and 16k + 8 + j (B, A) of the 128-bit
        // part k of `rb` and `ga`; a byte permutation over both registers (64 and up: `ga`)
        // gathers sixteen pixels' four bytes in order.
        let pixels = |first: usize| {
            byte_indices(|i| {
                let (pixel, channel) = (first + i / 4, i % 4);
                let at = 16 * (pixel / 8) + pixel % 8 + 8 * (channel / 2);
                at + 64 * (channel % 2)
            })
        };
        for (half, first) in out.chunks_exact_mut(64).zip([0, 16]) {
            // SAFETY: VBMI's two-register byte permutation, in this register's row function;
            // the store writes exactly the 64 bytes of `half`.
            unsafe {
                let bytes = _mm512_permutex2var_epi8(rb.0, pixels(first), ga.0);
                _mm512_storeu_si512(half.as_mut_ptr().cast(), bytes);
            }
        }
    }
}

/// Converts whole steps of two rows that share a row of chroma (4:2:0): each step's chroma is
/// loaded and its terms computed once for both rows' pixels. Returns how many pixels of each
/// row it did.
///
/// # Safety
/// The CPU must have `S`'s instructions.
#[inline(always)]
unsafe fn rows<S: Step>(out: [&mut [u8]; 2], luma: [&[u8]; 2], chroma: &Chroma) -> usize {
    let n = S::PIXELS;
    // SAFETY: the caller's promise.
    let zero = unsafe { S::zero() };
    let steps = luma[0].len().min(luma[1].len()) / n;
    let [out0, out1] = out;
    let pixels = out0[..steps * n * 4]
        .chunks_exact_mut(n * 4)
        .zip(out1[..steps * n * 4].chunks_exact_mut(n * 4))
        .zip(luma[0].chunks_exact(n).zip(luma[1].chunks_exact(n)));
    // Not a closure: a closure would not inherit the row function's target features, and its
    // vector code would not be inlined.
    macro_rules! both {
        ($step:expr, $d:expr, $e:expr) => {{
            let ((out0, out1), (y0, y1)) = $step;
            let (d, e) = ($d, $e);
            S::store(rgba(zero.widen(y0), d, e), out0);
            S::store(rgba(zero.widen(y1), d, e), out1);
        }};
    }
    match chroma {
        Chroma::Interleaved(uv) => {
            for (step, uv) in pixels.zip(uv.chunks_exact(n)) {
                let (d, e) = zero.pairs(uv);
                both!(step, d, e);
            }
        }
        Chroma::Planar(u, v) => {
            let samples = u.chunks_exact(n / 2).zip(v.chunks_exact(n / 2));
            for (step, (u, v)) in pixels.zip(samples) {
                both!(step, zero.samples(u), zero.samples(v));
            }
        }
    }
    steps * n
}

/// The row pair converters, one per register width.
macro_rules! row_pair {
    ($(#[$doc:meta])* $name:ident, $step:ty, $features:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("The CPU must have ", $features, ".")]
        #[target_feature(enable = $features)]
        pub unsafe fn $name(out: [&mut [u8]; 2], luma: [&[u8]; 2], chroma: &Chroma) -> usize {
            // SAFETY: the caller's promise.
            unsafe { rows::<$step>(out, luma, chroma) }
        }
    };
}

row_pair!(
    /// Eight pixels per step (every x86-64 CPU has SSE2).
    sse2_rows, Sse2, "sse2"
);
row_pair!(
    /// Sixteen pixels per step.
    avx2_rows, Avx2, "avx2"
);
row_pair!(
    /// Thirty-two pixels per step.
    avx512_rows, Avx512, "avx512f,avx512bw,avx512vbmi"
);
