//! Matrix products with Q5_0 weights, bit-identical to candle's but vectorized.
//!
//! Why: in the Q4_K_M files of models whose hidden size is not a multiple of 256 (the
//! 0.5B: 896), llama.cpp stores most weights as Q5_0, and candle 0.11 multiplies Q5_0 with
//! a scalar loop (`vec_dot_unopt`) and no batched path; profiling the 0.5B prefill showed
//! that loop as the top cost. This module computes exactly what candle does — inputs
//! quantized to Q8_0 the same way, per block an exact integer dot product, then
//! `sum += (sumi * d_w) * d_x` in block order — so outputs (and greedy tokens) do not
//! change; only the integer part runs on AVX2, and in prefill each weight column is
//! unpacked once for every input row instead of once per row.

use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Result, Tensor};
use half::f16;
use rayon::prelude::*;

pub const BLOCK: usize = 32;
/// Bytes of one Q5_0 block: f16 scale, 4 bytes of high bits, 16 bytes of nibbles.
const Q5_0_BYTES: usize = 22;

/// A Q5_0 weight matrix `(n, k)` (one row per output), kept as GGUF bytes.
pub struct Q5_0Matrix {
    n: usize,
    k: usize,
    bytes: Vec<u8>,
}

/// Inputs quantized to Q8_0: per row `k / 32` scales (f32 of the f16) and `k` values.
struct Q8Rows {
    scales: Vec<f32>,
    values: Vec<i8>,
}

/// One weight row unpacked: values `-16..=15` and per block the scale.
struct Unpacked {
    scales: Vec<f32>,
    values: Vec<i8>,
}

impl Q5_0Matrix {
    /// `None` when `t` is not a 2-d Q5_0 tensor with whole blocks per row.
    pub fn from_qtensor(t: &QTensor) -> Result<Option<Self>> {
        if t.dtype() != GgmlDType::Q5_0 {
            return Ok(None);
        }
        let (n, k) = t.shape().dims2()?;
        if k == 0 || !k.is_multiple_of(BLOCK) {
            return Ok(None);
        }
        let bytes = t.data()?.into_owned();
        if bytes.len() != n * (k / BLOCK) * Q5_0_BYTES {
            return Ok(None);
        }
        Ok(Some(Self { n, k, bytes }))
    }

    /// `x @ W^T` for `x` of shape `(..., k)` (f32 on the CPU): shape `(..., n)`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dims = x.dims().to_vec();
        let Some((&k, batch)) = dims.split_last() else { candle_core::bail!("q5_0 matmul on a scalar") };
        if k != self.k {
            candle_core::bail!("q5_0 matmul: input has {k} columns, weights {}", self.k);
        }
        let m: usize = batch.iter().product();
        let input: Vec<f32> = x.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?;
        let rows = quantize_rows(&input, m, k);
        let mut out = vec![0f32; m * self.n];
        self.matmul(&rows, m, &mut out);
        let mut shape = batch.to_vec();
        shape.push(self.n);
        Tensor::from_vec(out, shape, &Device::Cpu)
    }

    fn block_bytes(&self, row: usize) -> &[u8] {
        let len = (self.k / BLOCK) * Q5_0_BYTES;
        self.bytes.get(row * len..(row + 1) * len).unwrap_or_default()
    }

    /// `out[r * n + c] = dot(input row r, weight row c)`; columns split across threads.
    fn matmul(&self, rows: &Q8Rows, m: usize, out: &mut [f32]) {
        let (n, k) = (self.n, self.k);
        let nb = k / BLOCK;
        // Output is row-major (m, n); workers own column ranges, so they write through a
        // transposed buffer and it is copied back once.
        const COLS: usize = 16;
        let mut by_col = vec![0f32; n * m];
        by_col.par_chunks_mut(COLS * m).enumerate().for_each(|(chunk, dst)| {
            let mut w = Unpacked { scales: vec![0.0; nb], values: vec![0; k] };
            for (i, col_out) in dst.chunks_mut(m).enumerate() {
                let col = chunk * COLS + i;
                unpack_row(self.block_bytes(col), &mut w);
                let row = |r: usize| {
                    (rows.values.get(r * k..(r + 1) * k).unwrap_or_default(), rows.scales.get(r * nb..(r + 1) * nb).unwrap_or_default())
                };
                // Four input rows at a time share each loaded weight block, and their four
                // running sums are independent chains the CPU overlaps.
                let mut groups = col_out.chunks_exact_mut(4);
                let mut r = 0;
                for out4 in &mut groups {
                    let four = [row(r), row(r + 1), row(r + 2), row(r + 3)];
                    out4.copy_from_slice(&dot4(&w, &four));
                    r += 4;
                }
                for o in groups.into_remainder() {
                    let (xs, ds) = row(r);
                    *o = dot(&w, xs, ds);
                    r += 1;
                }
            }
        });
        for (c, col) in by_col.chunks(m).enumerate() {
            for (r, &v) in col.iter().enumerate() {
                if let Some(o) = out.get_mut(r * n + c) {
                    *o = v;
                }
            }
        }
    }
}

/// Dot products of Q5_0 weight rows `rows` (of `w`, GGUF bytes, `cols` values a row) with
/// `m` Q8_0 input rows (`x_scales`: f32 of each block's f16 scale, `x_values`: the i8s):
/// `out[(j - rows.start) * m + t]`, as in [`super::kernels::QuantMatrix::dot_rows`].
pub(super) fn dot_rows(w: &[u8], cols: usize, rows: std::ops::Range<usize>, x_scales: &[f32], x_values: &[i8], m: usize, out: &mut [f32]) {
    let nb = cols / BLOCK;
    let row_bytes = nb * Q5_0_BYTES;
    let mut un = Unpacked { scales: vec![0.0; nb], values: vec![0; cols] };
    let row = |r: usize| (x_values.get(r * cols..(r + 1) * cols).unwrap_or_default(), x_scales.get(r * nb..(r + 1) * nb).unwrap_or_default());
    for (j, out_j) in rows.zip(out.chunks_exact_mut(m.max(1))) {
        let Some(bytes) = w.get(j * row_bytes..(j + 1) * row_bytes) else { return };
        unpack_row(bytes, &mut un);
        let mut groups = out_j.chunks_exact_mut(4);
        let mut r = 0;
        for out4 in &mut groups {
            out4.copy_from_slice(&dot4(&un, &[row(r), row(r + 1), row(r + 2), row(r + 3)]));
            r += 4;
        }
        for o in groups.into_remainder() {
            let (xs, ds) = row(r);
            *o = dot(&un, xs, ds);
            r += 1;
        }
    }
}

/// candle's `BlockQ8_0::from_float`, row by row: per block `d = amax / 127` stored as f16,
/// values `round(x / d)`.
fn quantize_rows(input: &[f32], m: usize, k: usize) -> Q8Rows {
    let nb = k / BLOCK;
    let mut scales = Vec::with_capacity(m * nb);
    let mut values = Vec::with_capacity(m * k);
    for block in input.chunks(BLOCK).take(m * nb) {
        let amax = block.iter().fold(0f32, |a, &x| a.max(x.abs()));
        let d = amax / ((1 << 7) - 1) as f32;
        let id = if d != 0f32 { 1. / d } else { 0. };
        scales.push(f16::from_f32(d).to_f32());
        values.extend(block.iter().map(|&x| f32::round(x * id) as i8));
    }
    Q8Rows { scales, values }
}

/// Q5_0 blocks to values `-16..=15` in candle's order: position `j < 16` is the low
/// nibble of byte `j` with high bit `j`, position `j + 16` the high nibble with bit `j + 16`.
fn unpack_row(bytes: &[u8], out: &mut Unpacked) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            for ((block, scale), values) in bytes.chunks_exact(Q5_0_BYTES).zip(out.scales.iter_mut()).zip(out.values.chunks_exact_mut(BLOCK)) {
                *scale = f16::from_bits(u16::from_le_bytes([block[0], block[1]])).to_f32();
                // SAFETY: AVX2 is available; `block` has 22 bytes and `values` 32.
                unsafe { avx2::unpack_block(block, values) };
            }
            return;
        }
    }
    unpack_row_scalar(bytes, out)
}

fn unpack_row_scalar(bytes: &[u8], out: &mut Unpacked) {
    for ((block, scale), values) in bytes.chunks_exact(Q5_0_BYTES).zip(out.scales.iter_mut()).zip(out.values.chunks_exact_mut(BLOCK)) {
        let d = u16::from_le_bytes([block[0], block[1]]);
        *scale = f16::from_bits(d).to_f32();
        let qh = u32::from_le_bytes([block[2], block[3], block[4], block[5]]);
        let qs = &block[6..22];
        for j in 0..BLOCK / 2 {
            let h0 = (((qh >> j) & 1) << 4) as i32;
            let h1 = (((qh >> (j + 16)) & 1) << 4) as i32;
            values[j] = (((qs[j] & 0x0F) as i32 | h0) - 16) as i8;
            values[j + BLOCK / 2] = (((qs[j] >> 4) as i32 | h1) - 16) as i8;
        }
    }
}

/// `sum over blocks of (sumi * d_w) * d_x`, accumulated in block order like candle.
fn dot(w: &Unpacked, xs: &[i8], x_scales: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available (checked above); the function reads only within
            // the slices it is given.
            return unsafe { avx2::dot(&w.values, &w.scales, xs, x_scales) };
        }
    }
    dot_scalar(&w.values, &w.scales, xs, x_scales)
}

/// [`dot`] for four input rows.
fn dot4(w: &Unpacked, rows: &[(&[i8], &[f32]); 4]) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available; the function reads only within the slices given.
            return unsafe { avx2::dot4(&w.values, &w.scales, rows) };
        }
    }
    rows.map(|(xs, ds)| dot_scalar(&w.values, &w.scales, xs, ds))
}

fn dot_scalar(ws: &[i8], w_scales: &[f32], xs: &[i8], x_scales: &[f32]) -> f32 {
    let mut sumf = 0f32;
    for (((wb, xb), &dw), &dx) in ws.chunks_exact(BLOCK).zip(xs.chunks_exact(BLOCK)).zip(w_scales).zip(x_scales) {
        let sumi: i32 = wb.iter().zip(xb).map(|(&a, &b)| a as i32 * b as i32).sum();
        sumf += sumi as f32 * dw * dx;
    }
    sumf
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::BLOCK;

    /// Exact i32 sums of one block pair, as 8 partial lanes.
    #[inline(always)]
    unsafe fn block_dot(w: *const i8, x: *const i8) -> __m256i {
        let w = _mm256_loadu_si256(w as *const __m256i);
        let x = _mm256_loadu_si256(x as *const __m256i);
        // |w| * (x with w's sign): |w| <= 16, |x| <= 127, so the i16 pair sums cannot saturate.
        let ax = _mm256_sign_epi8(w, w);
        let sy = _mm256_sign_epi8(x, w);
        _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1))
    }

    #[inline(always)]
    unsafe fn hsum(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        let s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01));
        _mm_cvtsi128_si32(s)
    }

    /// One Q5_0 block (22 bytes) to 32 values `-16..=15` (llama.cpp's AVX2 unpacking): the
    /// nibbles, with `0xF0` or-ed in where the high bit is clear (`nibble - 16` as i8).
    #[target_feature(enable = "avx2")]
    pub unsafe fn unpack_block(block: &[u8], out: &mut [i8]) {
        debug_assert!(block.len() >= 22 && out.len() >= BLOCK);
        let qh = u32::from_le_bytes([block[2], block[3], block[4], block[5]]);
        let qs = _mm_loadu_si128(block.as_ptr().add(6) as *const __m128i);
        let nibbles = _mm256_and_si256(
            _mm256_insertf128_si256(_mm256_castsi128_si256(qs), _mm_srli_epi16(qs, 4), 1),
            _mm256_set1_epi8(0x0F),
        );
        // Byte j = 0xFF where bit j of qh is set.
        let spread = _mm256_shuffle_epi8(
            _mm256_set1_epi32(qh as i32),
            _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0),
        );
        let bits = _mm256_cmpeq_epi8(
            _mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe)),
            _mm256_set1_epi64x(-1),
        );
        let high = _mm256_andnot_si256(bits, _mm256_set1_epi8(0xF0u8 as i8));
        _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, _mm256_or_si256(nibbles, high));
    }

    /// The eight integer sums of blocks `b..b + 8` in one vector, lane i = block b + i.
    #[inline(always)]
    unsafe fn eight_sums(w: *const i8, x: *const i8) -> __m256i {
        let h01 = _mm256_hadd_epi32(block_dot(w, x), block_dot(w.add(BLOCK), x.add(BLOCK)));
        let h23 = _mm256_hadd_epi32(block_dot(w.add(2 * BLOCK), x.add(2 * BLOCK)), block_dot(w.add(3 * BLOCK), x.add(3 * BLOCK)));
        let h45 = _mm256_hadd_epi32(block_dot(w.add(4 * BLOCK), x.add(4 * BLOCK)), block_dot(w.add(5 * BLOCK), x.add(5 * BLOCK)));
        let h67 = _mm256_hadd_epi32(block_dot(w.add(6 * BLOCK), x.add(6 * BLOCK)), block_dot(w.add(7 * BLOCK), x.add(7 * BLOCK)));
        let h0123 = _mm256_hadd_epi32(h01, h23);
        let h4567 = _mm256_hadd_epi32(h45, h67);
        _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20), _mm256_permute2x128_si256(h0123, h4567, 0x31))
    }

    /// [`dot`] for four input rows against one weight row.
    #[target_feature(enable = "avx2")]
    pub unsafe fn dot4(ws: &[i8], w_scales: &[f32], rows: &[(&[i8], &[f32]); 4]) -> [f32; 4] {
        let mut nb = w_scales.len().min(ws.len() / BLOCK);
        for (xs, ds) in rows {
            nb = nb.min(ds.len()).min(xs.len() / BLOCK);
        }
        let mut sumf = [0f32; 4];
        let mut b = 0;
        while b + 8 <= nb {
            let wd = _mm256_loadu_ps(w_scales.as_ptr().add(b));
            let mut lanes = [[0f32; 8]; 4];
            for (lane, (xs, ds)) in lanes.iter_mut().zip(rows) {
                let sums = eight_sums(ws.as_ptr().add(b * BLOCK), xs.as_ptr().add(b * BLOCK));
                let scaled = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sums), wd), _mm256_loadu_ps(ds.as_ptr().add(b)));
                _mm256_storeu_ps(lane.as_mut_ptr(), scaled);
            }
            for i in 0..8 {
                for (s, lane) in sumf.iter_mut().zip(&lanes) {
                    *s += lane[i];
                }
            }
            b += 8;
        }
        while b < nb {
            for (s, (xs, ds)) in sumf.iter_mut().zip(rows) {
                let sumi = hsum(block_dot(ws.as_ptr().add(b * BLOCK), xs.as_ptr().add(b * BLOCK)));
                *s += sumi as f32 * w_scales[b] * ds[b];
            }
            b += 1;
        }
        sumf
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn dot(ws: &[i8], w_scales: &[f32], xs: &[i8], x_scales: &[f32]) -> f32 {
        let nb = w_scales.len().min(x_scales.len()).min(ws.len() / BLOCK).min(xs.len() / BLOCK);
        let mut sumf = 0f32;
        let mut b = 0;
        // Eight blocks at a time: their eight integer sums go into one vector, are scaled
        // lane-wise ((sumi * d_w) * d_x, as two separate roundings like the scalar code),
        // then added to the total one by one in block order.
        while b + 8 <= nb {
            let sums = eight_sums(ws.as_ptr().add(b * BLOCK), xs.as_ptr().add(b * BLOCK));
            let scaled = _mm256_mul_ps(
                _mm256_mul_ps(_mm256_cvtepi32_ps(sums), _mm256_loadu_ps(w_scales.as_ptr().add(b))),
                _mm256_loadu_ps(x_scales.as_ptr().add(b)),
            );
            let mut lanes = [0f32; 8];
            _mm256_storeu_ps(lanes.as_mut_ptr(), scaled);
            for v in lanes {
                sumf += v;
            }
            b += 8;
        }
        while b < nb {
            let sumi = hsum(block_dot(ws.as_ptr().add(b * BLOCK), xs.as_ptr().add(b * BLOCK)));
            sumf += sumi as f32 * w_scales[b] * x_scales[b];
            b += 1;
        }
        sumf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::quantized::QMatMul;
    use candle_core::Module;

    /// Same bits as candle's own Q5_0 matmul, for one row (decode) and many (prefill),
    /// with a block count that leaves a remainder after the groups of eight.
    #[test]
    fn matches_candle_bit_for_bit() {
        let device = Device::Cpu;
        let (n, k) = (40, 32 * 11);
        let w = (Tensor::randn(0f32, 1.0, (n, k), &device).unwrap() * 0.05).unwrap();
        let q = QTensor::quantize(&w, GgmlDType::Q5_0).unwrap();
        let ours = Q5_0Matrix::from_qtensor(&q).unwrap().unwrap();
        let theirs = QMatMul::from_qtensor(q).unwrap();
        for m in [1, 7, 12] {
            let x = Tensor::randn(0f32, 1.0, (1, m, k), &device).unwrap();
            let a: Vec<f32> = ours.forward(&x).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            let b: Vec<f32> = theirs.forward(&x).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            assert_eq!(a.len(), m * n);
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "m={m}: {a:?} vs {b:?}");
        }
    }

    #[test]
    fn scalar_and_vector_dot_agree() {
        let device = Device::Cpu;
        let k = 32 * 13;
        let w = Tensor::randn(0f32, 1.0, (1, k), &device).unwrap();
        let q = QTensor::quantize(&w, GgmlDType::Q5_0).unwrap();
        let m = Q5_0Matrix::from_qtensor(&q).unwrap().unwrap();
        let mut un = Unpacked { scales: vec![0.0; k / BLOCK], values: vec![0; k] };
        unpack_row(m.block_bytes(0), &mut un);
        let x: Vec<f32> = Tensor::randn(0f32, 1.0, k, &device).unwrap().to_vec1().unwrap();
        let rows = quantize_rows(&x, 1, k);
        let mut scalar = Unpacked { scales: vec![0.0; k / BLOCK], values: vec![0; k] };
        unpack_row_scalar(m.block_bytes(0), &mut scalar);
        assert_eq!(scalar.values, un.values);
        assert_eq!(scalar.scales, un.scales);
        let s = dot_scalar(&un.values, &un.scales, &rows.values, &rows.scales);
        assert_eq!(dot(&un, &rows.values, &rows.scales).to_bits(), s.to_bits());
    }

    #[test]
    fn other_types_are_not_taken() {
        let w = Tensor::zeros((4, 64), DType::F32, &Device::Cpu).unwrap();
        let q = QTensor::quantize(&w, GgmlDType::Q8_0).unwrap();
        assert!(Q5_0Matrix::from_qtensor(&q).unwrap().is_none());
    }
}
