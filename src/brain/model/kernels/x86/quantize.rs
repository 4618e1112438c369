//! Input rows quantized to Q8_0 and Q8_K with AVX-512, bit for bit what candle's
//! `from_float` writes (its x86 code is scalar, and in a prefill it took 5-8% of the time):
//! the same maximum, the same scale computed in the same f32 operations, each value
//! multiplied by it and rounded half away from zero as `f32::round` does.

use std::arch::x86_64::*;

use super::{Q8K_BYTES, Q8_0_BYTES};

/// `f32::round` lane by lane: the value truncated, plus its sign where the part cut off is
/// at least one half (`v - trunc(v)` is exact for every f32).
#[inline]
#[target_feature(enable = "avx512f")]
fn round_half_away(v: __m512) -> __m512 {
    let t = _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v);
    let up = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(abs(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5));
    let sign = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(i32::MIN));
    let one = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_set1_ps(1.0)), sign));
    _mm512_mask_add_ps(t, up, t, one)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn abs(v: __m512) -> __m512 {
    _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(i32::MAX)))
}

/// Integer-valued lanes as i8 with saturation (Rust's `as i8`).
#[inline]
#[target_feature(enable = "avx512f")]
fn to_i8(v: __m512) -> __m128i {
    _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v))
}

/// One row of `src` (a whole number of 32-value blocks) into Q8_0 blocks at `dst`.
///
/// # Safety
/// AVX-512 F and BW; `dst` has `src.len() / 32` blocks of 34 bytes.
#[target_feature(enable = "avx2,f16c,avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn q8_0_row(src: &[f32], dst: *mut u8) {
    for (b, x) in src.chunks_exact(32).enumerate() {
        let out = dst.add(b * Q8_0_BYTES);
        let (v0, v1) = (_mm512_loadu_ps(x.as_ptr()), _mm512_loadu_ps(x.as_ptr().add(16)));
        let amax = _mm512_reduce_max_ps(_mm512_max_ps(abs(v0), abs(v1)));
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        std::ptr::copy_nonoverlapping(half::f16::from_f32(d).to_le_bytes().as_ptr(), out, 2);
        let id = _mm512_set1_ps(id);
        _mm_storeu_si128(out.add(2) as *mut __m128i, to_i8(round_half_away(_mm512_mul_ps(v0, id))));
        _mm_storeu_si128(out.add(18) as *mut __m128i, to_i8(round_half_away(_mm512_mul_ps(v1, id))));
    }
}

/// One row of `src` (a whole number of 256-value blocks) into Q8_K blocks at `dst`
/// (`d: f32`, 256 values, 16 sums of 16).
///
/// # Safety
/// AVX-512 F and BW; `dst` has `src.len() / 256` blocks of 292 bytes.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn q8k_row(src: &[f32], dst: *mut u8) {
    for (b, x) in src.chunks_exact(256).enumerate() {
        let out = dst.add(b * Q8K_BYTES);
        let v: [__m512; 16] = std::array::from_fn(|k| _mm512_loadu_ps(x.as_ptr().add(16 * k)));
        let amax = _mm512_reduce_max_ps(v.iter().fold(_mm512_setzero_ps(), |m, &v| _mm512_max_ps(m, abs(v))));
        if amax == 0.0 {
            std::ptr::write_bytes(out, 0, Q8K_BYTES);
            continue;
        }
        // candle keeps the first value whose magnitude is the largest, with its sign.
        let first = v.iter().enumerate().find_map(|(k, &v)| {
            let hit = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(abs(v), _mm512_set1_ps(amax));
            (hit != 0).then(|| 16 * k + hit.trailing_zeros() as usize)
        });
        let max = x[first.unwrap_or(0)];
        let iscale = -127.0 / max;
        let scale = _mm512_set1_ps(iscale);
        for (k, v) in v.into_iter().enumerate() {
            let q = _mm512_min_ps(_mm512_max_ps(round_half_away(_mm512_mul_ps(scale, v)), _mm512_set1_ps(-128.0)), _mm512_set1_ps(127.0));
            let sum = _mm512_reduce_add_epi32(_mm512_cvtps_epi32(q));
            _mm_storeu_si128(out.add(4 + 16 * k) as *mut __m128i, to_i8(q));
            std::ptr::copy_nonoverlapping((sum as i16).to_le_bytes().as_ptr(), out.add(260 + 2 * k), 2);
        }
        std::ptr::copy_nonoverlapping((1.0 / iscale).to_le_bytes().as_ptr(), out, 4);
    }
}
