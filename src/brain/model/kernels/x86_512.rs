//! 512-bit Q4_K and Q6_K kernels for several input rows (prefill), AVX-512 VNNI only.
//!
//! Same integer math as the 256-bit `q4k` / `q6k` of [`super`]: `maddubs` of unsigned
//! weights with the i8 inputs, then `vpdpwssd` with the sub-block scales as i16 lanes; the
//! Q4_K mins and the Q6_K `-32` come out with the Q8_K block sums. What differs:
//! - one 512-bit register holds two 32-value sub-blocks, so every input row costs half the
//!   instructions (Zen4 splits 512-bit ops in two, so the gain is the front end's);
//! - weights are unpacked so that a register's two sub-blocks are adjacent in the input
//!   (one 64-byte input load each), and scales are unpacked to i16 lanes once per block;
//! - two weight rows share every input load.

use std::arch::x86_64::*;

use super::{Q4K_BYTES, Q6K_BYTES, Q8K_BYTES};

#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn f16_at(p: *const u8) -> f32 {
    let bits = std::ptr::read_unaligned(p as *const u16);
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits as i32)))
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn load512(p: *const u8) -> __m512i {
    _mm512_loadu_si512(p as *const __m512i)
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn load256(p: *const u8) -> __m256i {
    _mm256_loadu_si256(p as *const __m256i)
}

/// One weight super-block unpacked: four registers of two sub-blocks (values `64 i..64 i +
/// 64` in input order), the matching scales as i16 lanes, and what the block sums are
/// multiplied with (Q4_K: mins per 16 values; Q6_K: `-32 * scale`).
#[derive(Clone, Copy)]
struct Unpacked {
    q: [__m512i; 4],
    s: [__m512i; 2],
    bsum_factors: __m256i,
    /// Q4_K: `(d, -dmin)`; Q6_K: `(d, d)` (its offset is in the integer sum).
    d: f32,
    dmin: f32,
}

impl Unpacked {
    const ZERO: Unpacked = Unpacked {
        q: [unsafe { std::mem::transmute::<[u8; 64], __m512i>([0; 64]) }; 4],
        s: [unsafe { std::mem::transmute::<[u8; 64], __m512i>([0; 64]) }; 2],
        bsum_factors: unsafe { std::mem::transmute::<[u8; 32], __m256i>([0; 32]) },
        d: 0.0,
        dmin: 0.0,
    };
}

/// Q4_K's twelve packed scale bytes as (8 scales, 8 mins), 6 bits each.
#[inline]
unsafe fn q4k_scales_mins(p: *const u8) -> [u32; 4] {
    const KMASK1: u32 = 0x3f3f3f3f;
    const KMASK2: u32 = 0x0f0f0f0f;
    const KMASK3: u32 = 0x03030303;
    let s = p as *const u32;
    let (u0, u1, u2) = (std::ptr::read_unaligned(s), std::ptr::read_unaligned(s.add(1)), std::ptr::read_unaligned(s.add(2)));
    [
        u0 & KMASK1,
        (u2 & KMASK2) | (((u0 >> 6) & KMASK3) << 4),
        u1 & KMASK1,
        ((u2 >> 4) & KMASK2) | (((u1 >> 6) & KMASK3) << 4),
    ]
}

/// The scales (i16 lanes of `v`) for `vpdpwssd` with the integer sums of register pairs
/// `(2 j, 2 j + 1)` packed to i16 by `vpackssdw`: in 128-bit lane `L`, i16 lanes `0..4` are
/// lanes `4 L..4 L + 4` of register `2 j`, `4..8` those of `2 j + 1`. Each i32 lane of a
/// register sums four values; scale `G * r + L * G / 4` of a register `r` covers them
/// (`G` scales per register: Q4_K 2, Q6_K 4).
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
fn packed_scales<const G: usize>(v: __m512i) -> [__m512i; 2] {
    // Plain loops: `array::from_fn`'s closures were left as calls, outside the features.
    let mut out = [_mm512_setzero_si512(); 2];
    for (j, o) in out.iter_mut().enumerate() {
        let mut idx = [0i16; 32];
        for (n, x) in idx.iter_mut().enumerate() {
            let (lane, r) = (n / 8, 2 * j + usize::from(n % 8 >= 4));
            *x = (G * r + lane * G / 4) as i16;
        }
        // SAFETY: [i16; 32] and __m512i have the same size.
        *o = _mm512_permutexvar_epi16(unsafe { std::mem::transmute::<[i16; 32], __m512i>(idx) }, v);
    }
    out
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn unpack_q4k(blk: *const u8) -> Unpacked {
    let m4 = _mm512_set1_epi8(0x0F);
    let sm = q4k_scales_mins(blk.add(4));
    // Lanes 0..8: scales, 8..16: mins (i16).
    let sm16 = _mm256_cvtepu8_epi16(_mm_set_epi32(sm[3] as i32, sm[2] as i32, sm[1] as i32, sm[0] as i32));
    let s = packed_scales::<2>(_mm512_castsi256_si512(sm16));
    // Min k for block sums 2k and 2k + 1 (16 values each).
    const MIN_IDX: [i16; 16] = [8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15];
    let min_idx = MIN_IDX;
    let mins = _mm256_permutexvar_epi16(std::mem::transmute::<[i16; 16], __m256i>(min_idx), sm16);
    let mut q = [_mm512_setzero_si512(); 4];
    for h in 0..2 {
        // Bytes 32 j..32 j + 32 hold sub-block 2 j (low nibbles) and 2 j + 1 (high).
        let bits = load512(blk.add(16 + 64 * h));
        let lo = _mm512_and_si512(bits, m4);
        let hi = _mm512_and_si512(_mm512_srli_epi16(bits, 4), m4);
        q[2 * h] = _mm512_shuffle_i64x2(lo, hi, 0b01_00_01_00);
        q[2 * h + 1] = _mm512_shuffle_i64x2(lo, hi, 0b11_10_11_10);
    }
    Unpacked { q, s, bsum_factors: mins, d: f16_at(blk), dmin: -f16_at(blk.add(2)) }
}

#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn unpack_q6k(blk: *const u8) -> Unpacked {
    let m4 = _mm512_set1_epi8(0x0F);
    let m30 = _mm512_set1_epi8(0x30);
    let scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(blk.add(192) as *const __m128i));
    let s = packed_scales::<4>(_mm512_castsi256_si512(scales16));
    let mut q = [_mm512_setzero_si512(); 4];
    for h in 0..2 {
        // Values 128 h + 0..32 / 32..64 / 64..96 / 96..128: low / low / high / high nibbles
        // of the two 32-byte halves of `l`, high bits 0-1 / 2-3 / 4-5 / 6-7 of `hb`.
        let l = load512(blk.add(64 * h));
        let hb = _mm512_broadcast_i64x4(load256(blk.add(128 + 32 * h)));
        // Upper half shifted by 2: its bits 2-3 / 6-7 land where the lower half's 0-1 / 4-5 are.
        let hb = _mm512_srlv_epi16(hb, _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1));
        q[2 * h] = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(hb, 4), m30));
        q[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(hb, m30));
    }
    let d = f16_at(blk.add(208));
    Unpacked { q, s, bsum_factors: _mm256_mullo_epi16(scales16, _mm256_set1_epi16(-32)), d, dmin: d }
}

/// `R` weight rows (`w[r]`, `nb` super-blocks each) of `Q4_K` (`Q6 = false`) or `Q6_K` with
/// `N` Q8_K input rows `xb`: `out[r][t]`.
///
/// # Safety
/// AVX-512 F/BW/VL/VNNI, AVX2, FMA and F16C are available; each `w[r]` has `nb` blocks of
/// the type and each `xb[t]` `nb` Q8_K blocks.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
pub(super) unsafe fn dot<const Q6: bool, const R: usize, const N: usize>(w: [*const u8; R], nb: usize, xb: [*const u8; N]) -> [[f32; N]; R] {
    let mut acc = [[_mm512_setzero_ps(); N]; R];
    for b in 0..nb {
        let mut u = [Unpacked::ZERO; R];
        for (u, w) in u.iter_mut().zip(w) {
            *u = if Q6 { unpack_q6k(w.add(b * Q6K_BYTES)) } else { unpack_q4k(w.add(b * Q4K_BYTES)) };
        }
        for t in 0..N {
            let x = xb[t].add(b * Q8K_BYTES);
            let dx = std::ptr::read_unaligned(x as *const f32);
            let bsums = load256(x.add(260));
            let mut xv = [_mm512_setzero_si512(); 4];
            for (i, v) in xv.iter_mut().enumerate() {
                *v = load512(x.add(4 + 64 * i));
            }
            for r in 0..R {
                let u = &u[r];
                let offset = _mm512_zextsi256_si512(_mm256_madd_epi16(u.bsum_factors, bsums));
                let mut sumi = if Q6 { offset } else { _mm512_setzero_si512() };
                // Four-value sums fit i16 (|63 * 128 * 4| < 2^15), so two registers' sums
                // are packed to i16 and scaled with one vpdpwssd: six multiplies, not eight.
                for j in 0..2 {
                    let d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u.q[2 * j], xv[2 * j]);
                    let d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u.q[2 * j + 1], xv[2 * j + 1]);
                    sumi = _mm512_dpwssd_epi32(sumi, u.s[j], _mm512_packs_epi32(d0, d1));
                }
                acc[r][t] = _mm512_fmadd_ps(_mm512_set1_ps(dx * u.d), _mm512_cvtepi32_ps(sumi), acc[r][t]);
                if !Q6 {
                    acc[r][t] = _mm512_fmadd_ps(_mm512_set1_ps(dx * u.dmin), _mm512_cvtepi32_ps(offset), acc[r][t]);
                }
            }
        }
    }
    let mut out = [[0f32; N]; R];
    for (out, acc) in out.iter_mut().zip(&acc) {
        for (o, a) in out.iter_mut().zip(acc) {
            *o = _mm512_reduce_add_ps(*a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{vnni, Isa, Q4K_BYTES, Q6K_BYTES, Q8K_BYTES};

    /// Old (256-bit, four rows) against new kernel on the same bytes, alternating, best of
    /// many runs (the machine is shared, so single timings are noisy):
    /// `cargo test --release --lib x86_512::tests::speed_vs_256 -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn speed_vs_256() {
        if !Isa::Vnni.available() {
            return;
        }
        let (rows, nb) = (512usize, 6usize);
        let mut s = 12345u64;
        let mut bytes = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s >> 24) as u8 & 0x3f
                })
                .collect()
        };
        let x = bytes(4 * nb * Q8K_BYTES);
        for (name, q6, block) in [("Q4K", false, Q4K_BYTES), ("Q6K", true, Q6K_BYTES)] {
            let w = bytes(rows * nb * block);
            let xb: [*const u8; 4] = std::array::from_fn(|t| x[t * nb * Q8K_BYTES..].as_ptr());
            let (mut best_old, mut best_new) = (f64::MAX, f64::MAX);
            let mut sink = 0f32;
            for _ in 0..40 {
                let start = std::time::Instant::now();
                for j in 0..rows {
                    let p = w[j * nb * block..].as_ptr();
                    // SAFETY: VNNI checked; every row and input has nb blocks.
                    let r = unsafe { if q6 { vnni::q6k::<4>(p, nb, xb) } else { vnni::q4k::<4>(p, nb, xb) } };
                    sink += r[0];
                }
                best_old = best_old.min(start.elapsed().as_secs_f64());
                let start = std::time::Instant::now();
                for j in 0..rows {
                    let p = w[j * nb * block..].as_ptr();
                    // SAFETY: as above.
                    let r = unsafe { if q6 { super::dot::<true, 1, 4>([p], nb, xb) } else { super::dot::<false, 1, 4>([p], nb, xb) } };
                    sink += r[0][0];
                }
                best_new = best_new.min(start.elapsed().as_secs_f64());
            }
            let per = |t: f64| t * 1e9 / (rows * nb * 4) as f64;
            println!("{name}: ns per (weight row, input row, super-block): 256-bit {:.2}, 512-bit {:.2} ({:.2}x) {sink}", per(best_old), per(best_new), best_old / best_new);
        }
    }
}
