//! Quantized weight matrices kept in GGUF's own block layout, and the dot products the
//! CPU forward pass ([`super::cpu_qwen2`]) runs on them.
//!
//! Inputs are quantized the way candle and llama.cpp do it (Q8_0 blocks for Q5_0 / Q8_0
//! weights, Q8_K super-blocks for the K-quants), and each output is the integer dot product
//! of every block pair scaled and summed in block order, so results match candle's own
//! `vec_dot` (the tests compare with it). One copy of the weights lives in memory: the
//! file's blocks, read straight into typed buffers.

use std::io::Read;
use std::ops::Range;

use candle_core::quantized::k_quants::{BlockQ4K, BlockQ5_0, BlockQ6K, BlockQ8K, BlockQ8_0, GgmlType};
use candle_core::quantized::GgmlDType;

use super::q5_0;

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("weights of type {0:?} are not supported by the CPU kernels")]
    Unsupported(GgmlDType),
    #[error("a row of {cols} values is not a whole number of {block}-value blocks")]
    PartialBlock { cols: usize, block: usize },
    #[error("reading weights: {0}")]
    Io(#[from] std::io::Error),
}

/// Which quantized form a matrix wants its input in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// 32-value blocks (for Q5_0 and Q8_0 weights).
    Q8_0,
    /// 256-value super-blocks with block sums (for Q4_K and Q6_K weights).
    Q8K,
}

enum Blocks {
    Q4K(Vec<BlockQ4K>),
    Q6K(Vec<BlockQ6K>),
    Q5_0(Vec<BlockQ5_0>),
    Q8_0(Vec<BlockQ8_0>),
}

/// A `(rows, cols)` weight matrix, one row per output, in GGUF blocks.
pub struct QuantMatrix {
    rows: usize,
    cols: usize,
    blocks: Blocks,
}

/// `m` input rows of `cols` values, quantized for one [`InputKind`]. Reused between calls
/// so the decode loop does not allocate.
#[derive(Default)]
pub struct QuantInput {
    m: usize,
    cols: usize,
    kind: Option<InputKind>,
    q8_0: Vec<BlockQ8_0>,
    /// The Q8_0 blocks split: each block's scale as f32, and all values in a row.
    q8_0_scales: Vec<f32>,
    q8_0_values: Vec<i8>,
    q8k: Vec<BlockQ8K>,
}

/// The bytes of a slice of blocks.
fn as_bytes<T: GgmlType>(blocks: &[T]) -> &[u8] {
    // SAFETY: the block types are `repr(C)` plain old data with no padding (their sizes are
    // asserted in candle to be the sum of their fields), so every byte is initialized.
    unsafe { std::slice::from_raw_parts(blocks.as_ptr() as *const u8, std::mem::size_of_val(blocks)) }
}

/// A buffer of `n` zeroed blocks whose bytes `fill` writes (the file's bytes, in order).
fn read_blocks<T: GgmlType>(n: usize, reader: &mut impl Read) -> std::io::Result<Vec<T>> {
    let mut blocks = vec![T::zeros(); n];
    // SAFETY: the block types are `repr(C)` structs of integers and f16 (plain old data:
    // every byte pattern is a valid value), so their memory may be written as bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr() as *mut u8, std::mem::size_of_val(blocks.as_slice())) };
    reader.read_exact(bytes)?;
    Ok(blocks)
}

impl QuantMatrix {
    /// Reads `rows * cols` values of `dtype` in GGUF block layout from `reader`.
    pub fn read(dtype: GgmlDType, rows: usize, cols: usize, reader: &mut impl Read) -> Result<Self, KernelError> {
        let block = dtype.block_size();
        if cols == 0 || !cols.is_multiple_of(block) {
            return Err(KernelError::PartialBlock { cols, block });
        }
        let n = rows * (cols / block);
        let blocks = match dtype {
            GgmlDType::Q4K => Blocks::Q4K(read_blocks(n, reader)?),
            GgmlDType::Q6K => Blocks::Q6K(read_blocks(n, reader)?),
            GgmlDType::Q5_0 => Blocks::Q5_0(read_blocks(n, reader)?),
            GgmlDType::Q8_0 => Blocks::Q8_0(read_blocks(n, reader)?),
            other => return Err(KernelError::Unsupported(other)),
        };
        Ok(Self { rows, cols, blocks })
    }

    /// Whether the CPU kernels take weights of this type.
    pub fn supports(dtype: GgmlDType) -> bool {
        matches!(dtype, GgmlDType::Q4K | GgmlDType::Q6K | GgmlDType::Q5_0 | GgmlDType::Q8_0)
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    pub fn dtype(&self) -> GgmlDType {
        match self.blocks {
            Blocks::Q4K(_) => GgmlDType::Q4K,
            Blocks::Q6K(_) => GgmlDType::Q6K,
            Blocks::Q5_0(_) => GgmlDType::Q5_0,
            Blocks::Q8_0(_) => GgmlDType::Q8_0,
        }
    }

    pub fn input_kind(&self) -> InputKind {
        match self.blocks {
            Blocks::Q4K(_) | Blocks::Q6K(_) => InputKind::Q8K,
            Blocks::Q5_0(_) | Blocks::Q8_0(_) => InputKind::Q8_0,
        }
    }

    /// Bytes of weights held.
    pub fn size_in_bytes(&self) -> usize {
        match &self.blocks {
            Blocks::Q4K(b) => std::mem::size_of_val(b.as_slice()),
            Blocks::Q6K(b) => std::mem::size_of_val(b.as_slice()),
            Blocks::Q5_0(b) => std::mem::size_of_val(b.as_slice()),
            Blocks::Q8_0(b) => std::mem::size_of_val(b.as_slice()),
        }
    }

    /// Row `row` as f32 into `out` (`cols` values); nothing is written for a row out of range.
    pub fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        fn one<T: GgmlType>(blocks: &[T], row: usize, cols: usize, out: &mut [f32]) {
            let per_row = cols / T::BLCK_SIZE;
            if let (Some(src), Some(dst)) = (blocks.get(row * per_row..(row + 1) * per_row), out.get_mut(..cols)) {
                T::to_float(src, dst);
            }
        }
        match &self.blocks {
            Blocks::Q4K(b) => one(b, row, self.cols, out),
            Blocks::Q6K(b) => one(b, row, self.cols, out),
            Blocks::Q5_0(b) => one(b, row, self.cols, out),
            Blocks::Q8_0(b) => one(b, row, self.cols, out),
        }
    }

    /// Dot products of weight rows `rows` with every input row:
    /// `out[(j - rows.start) * x.m() + t] = dot(weight row j, input row t)`.
    /// `x` must be quantized for [`Self::input_kind`] with `cols` columns; rows out of
    /// range, or a short `out`, leave the affected outputs untouched.
    pub fn dot_rows(&self, rows: Range<usize>, x: &QuantInput, out: &mut [f32]) {
        if x.cols != self.cols || x.kind != Some(self.input_kind()) {
            return;
        }
        let rows = rows.start..rows.end.min(self.rows);
        match &self.blocks {
            Blocks::Q4K(b) => dot_generic(b, self.cols, rows, &x.q8k, x.m, out),
            Blocks::Q6K(b) => dot_generic(b, self.cols, rows, &x.q8k, x.m, out),
            Blocks::Q8_0(b) => dot_generic(b, self.cols, rows, &x.q8_0, x.m, out),
            Blocks::Q5_0(b) => q5_0::dot_rows(as_bytes(b), self.cols, rows, &x.q8_0_scales, &x.q8_0_values, x.m, out),
        }
    }
}

/// Per pair of rows, candle's own `vec_dot` for the type.
fn dot_generic<T: GgmlType>(w: &[T], cols: usize, rows: Range<usize>, x: &[T::VecDotType], m: usize, out: &mut [f32]) {
    let wb = cols / T::BLCK_SIZE;
    let xb = cols / T::VecDotType::BLCK_SIZE;
    for (j, out_j) in rows.zip(out.chunks_exact_mut(m.max(1))) {
        let Some(w_row) = w.get(j * wb..(j + 1) * wb) else { return };
        for (t, o) in out_j.iter_mut().enumerate() {
            if let Some(x_row) = x.get(t * xb..(t + 1) * xb) {
                *o = T::vec_dot(cols, w_row, x_row);
            }
        }
    }
}

impl QuantInput {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows quantized.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Quantizes `m` rows of `cols` values from `x` (row-major) for `kind`.
    /// `cols` must be a whole number of blocks of the kind (callers check with the matrix).
    pub fn quantize(&mut self, kind: InputKind, x: &[f32], m: usize, cols: usize) {
        self.m = m;
        self.cols = cols;
        self.kind = Some(kind);
        match kind {
            InputKind::Q8_0 => {
                quantize_into(&mut self.q8_0, x, m, cols);
                // Split each 34-byte block (f16 scale, 32 values) for the Q5_0 kernel.
                self.q8_0_scales.clear();
                self.q8_0_values.clear();
                for block in as_bytes(&self.q8_0).chunks_exact(34) {
                    self.q8_0_scales.push(half::f16::from_le_bytes([block[0], block[1]]).to_f32());
                    self.q8_0_values.extend(block[2..].iter().map(|&b| b as i8));
                }
            }
            InputKind::Q8K => quantize_into(&mut self.q8k, x, m, cols),
        }
    }
}

fn quantize_into<T: GgmlType>(buf: &mut Vec<T>, x: &[f32], m: usize, cols: usize) {
    let per_row = cols / T::BLCK_SIZE;
    buf.resize(m * per_row, T::zeros());
    for (src, dst) in x.chunks_exact(cols).zip(buf.chunks_exact_mut(per_row.max(1))).take(m) {
        T::from_float(src, dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in roughly [-1, 1].
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// A matrix of `dtype` quantized by candle from known values, read back through `read`.
    pub(crate) fn matrix(dtype: GgmlDType, rows: usize, cols: usize, seed: u64) -> QuantMatrix {
        let w = candle_core::Tensor::from_vec(values(rows * cols, seed), (rows, cols), &candle_core::Device::Cpu).unwrap();
        let q = candle_core::quantized::QTensor::quantize(&w, dtype).unwrap();
        let bytes = q.data().unwrap().into_owned();
        QuantMatrix::read(dtype, rows, cols, &mut bytes.as_slice()).unwrap()
    }

    fn reference<T: GgmlType>(w: &[T], x: &[f32], rows: usize, cols: usize, m: usize) -> Vec<f32> {
        let mut xq = vec![T::VecDotType::zeros(); m * cols / T::VecDotType::BLCK_SIZE];
        for (src, dst) in x.chunks(cols).zip(xq.chunks_mut(cols / T::VecDotType::BLCK_SIZE)) {
            T::VecDotType::from_float(src, dst);
        }
        let wb = cols / T::BLCK_SIZE;
        let xb = cols / T::VecDotType::BLCK_SIZE;
        let mut out = vec![0f32; rows * m];
        for j in 0..rows {
            for t in 0..m {
                out[j * m + t] = T::vec_dot_unopt(cols, &w[j * wb..(j + 1) * wb], &xq[t * xb..(t + 1) * xb]);
            }
        }
        out
    }

    /// Every type against candle's plain (unvectorized) dot, for one input row (decode)
    /// and several (prefill, with a remainder after groups of four), on a row range.
    #[test]
    fn dot_rows_match_candles_reference_dot() {
        for dtype in [GgmlDType::Q4K, GgmlDType::Q6K, GgmlDType::Q5_0, GgmlDType::Q8_0] {
            let (rows, cols) = (24, 512 + 256 * 3);
            let w = matrix(dtype, rows, cols, 7);
            for m in [1, 5, 8] {
                let x = values(m * cols, 11 + m as u64);
                let mut input = QuantInput::new();
                input.quantize(w.input_kind(), &x, m, cols);
                let range = 3..rows;
                let mut out = vec![f32::NAN; range.len() * m];
                w.dot_rows(range.clone(), &input, &mut out);
                let want = match &w.blocks {
                    Blocks::Q4K(b) => reference(b, &x, rows, cols, m),
                    Blocks::Q6K(b) => reference(b, &x, rows, cols, m),
                    Blocks::Q5_0(b) => reference(b, &x, rows, cols, m),
                    Blocks::Q8_0(b) => reference(b, &x, rows, cols, m),
                };
                for (i, (a, b)) in out.iter().zip(&want[range.start * m..]).enumerate() {
                    let tol = 1e-4 * b.abs().max(1.0);
                    assert!((a - b).abs() <= tol, "{dtype:?} m={m} output {i}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn dequantized_rows_match_candle() {
        for dtype in [GgmlDType::Q4K, GgmlDType::Q6K, GgmlDType::Q5_0, GgmlDType::Q8_0] {
            let (rows, cols) = (3, 512);
            let w = candle_core::Tensor::from_vec(values(rows * cols, 3), (rows, cols), &candle_core::Device::Cpu).unwrap();
            let q = candle_core::quantized::QTensor::quantize(&w, dtype).unwrap();
            let want: Vec<f32> = q.dequantize(&candle_core::Device::Cpu).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            let m = QuantMatrix::read(dtype, rows, cols, &mut q.data().unwrap().as_ref()).unwrap();
            let mut row = vec![0f32; cols];
            m.dequantize_row(2, &mut row);
            assert_eq!(row, want[2 * cols..]);
        }
    }

    #[test]
    fn bad_shapes_and_types_are_errors() {
        let bytes = vec![0u8; 1024];
        assert!(matches!(
            QuantMatrix::read(GgmlDType::Q4K, 1, 100, &mut bytes.as_slice()),
            Err(KernelError::PartialBlock { cols: 100, block: 256 })
        ));
        assert!(matches!(QuantMatrix::read(GgmlDType::F16, 1, 64, &mut bytes.as_slice()), Err(KernelError::Unsupported(_))));
        // Fewer bytes than the shape needs.
        assert!(matches!(QuantMatrix::read(GgmlDType::Q8_0, 100, 64, &mut bytes.as_slice()), Err(KernelError::Io(_))));
    }
}
