//! Quantized weight matrices kept in GGUF's own block layout, and the dot products the
//! CPU forward pass ([`super::cpu_qwen2`]) runs on them.
//!
//! Inputs are quantized the way candle and llama.cpp do it (Q8_0 blocks for Q5_0 / Q8_0
//! weights, Q8_K super-blocks for the K-quants), and each output is the exact integer dot
//! product of every block pair, scaled and summed in f32, so results match candle's own
//! `vec_dot` up to float rounding (the tests compare with it). On x86-64 with AVX2 the
//! kernels of [`x86`] run (AVX-512 VNNI where the CPU has it, chosen once at run time);
//! elsewhere candle's `vec_dot` per pair of rows. One copy of the weights lives in memory: the
//! file's blocks, read straight into typed buffers.

use std::io::Read;
use std::ops::Range;

use candle_core::quantized::k_quants::{BlockQ4K, BlockQ5_0, BlockQ6K, BlockQ8K, BlockQ8_0, GgmlType};
use candle_core::quantized::GgmlDType;

use super::q5_0;

#[cfg(target_arch = "x86_64")]
mod x86;

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
    /// Per Q8_0 block the sum of its values (the SIMD kernels take weight offsets out
    /// with it).
    q8_0_sums: Vec<i32>,
    /// Scales and sums of each group of four rows interleaved per block (`[4 * b + t]`),
    /// so the four-row kernels load them with one vector load.
    q8_0_scales4: Vec<f32>,
    q8_0_sums4: Vec<i32>,
    /// Per group of eight rows and block, the values transposed in 4-byte pieces
    /// (`[(8 * nb * g + 8 * b + k) * 8 + t]`: piece k of row t) and the rows' scales and
    /// sums side by side (`[8 * nb * g + 8 * b + t]`), so one 32-byte load holds a piece of
    /// all eight rows and the VNNI kernel needs no horizontal sums.
    q8_0_values8: Vec<[i8; 4]>,
    q8_0_scales8: Vec<f32>,
    q8_0_sums8: Vec<i32>,
    q8k: Vec<BlockQ8K>,
    /// Per group of four Q8_K rows and block, interleaved (`[(4 * nb * g + 4 * b + t) * n]`):
    /// the rows' scales (`n = 1`), sums of each 32 values (`n = 8`) and the blocks' own
    /// 16-value sums (`n = 16`), so the grouped K-quant kernels load them for four (or two)
    /// rows at once instead of unpacking them per weight row.
    q8k_d4: Vec<f32>,
    q8k_sums4: Vec<i16>,
    q8k_bsums4: Vec<i16>,
    /// The Q8_K values of the grouped rows with each 64-byte quarter of a block reordered:
    /// 4-byte piece i of sub-block 2r, then piece i of sub-block 2r + 1 (the order of the
    /// VNNI Q4_K / Q6_K kernels' weights, whose sums then pack straight into i16 pairs).
    q8k_pairs: Vec<u8>,
    /// Where the AMX tiles run: the Q8_K values of the rows in whole tiles of 16 with each
    /// block reordered by lane (`[(t * nb + b) * 256 + 32 * lane + 4 * k + i]` = value
    /// `32 k + 4 lane + i`), so one strided tile load takes one lane of 16 rows.
    q8k_lanes: Vec<u8>,
}

/// The bytes of a slice of blocks.
fn as_bytes<T: GgmlType>(blocks: &[T]) -> &[u8] {
    // SAFETY: the block types are `repr(C)` plain old data with no padding (their sizes are
    // asserted in candle to be the sum of their fields), so every byte is initialized.
    unsafe { std::slice::from_raw_parts(blocks.as_ptr() as *const u8, std::mem::size_of_val(blocks)) }
}

/// A buffer of `n` zeroed blocks whose bytes `fill` writes (the file's bytes, in order).
fn read_blocks<T: GgmlType>(n: usize, reader: &mut impl Read) -> std::io::Result<Vec<T>> {
    let mut blocks = Vec::with_capacity(n);
    huge_pages(blocks.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    blocks.resize(n, T::zeros());
    // SAFETY: the block types are `repr(C)` structs of integers and f16 (plain old data:
    // every byte pattern is a valid value), so their memory may be written as bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr() as *mut u8, std::mem::size_of_val(blocks.as_slice())) };
    reader.read_exact(bytes)?;
    Ok(blocks)
}

/// Asks the kernel to back `len` bytes at `ptr` (not yet touched) with 2 MiB pages where it
/// can. Decode streams every weight once per token; with 4 KiB pages that is a TLB miss
/// every 4 KiB, and decode was bound by memory at half the machine's bandwidth. `b4 perf`'s
/// read loop asks for the same pages, so that it measures what the weights can be read at.
pub fn huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) & !(PAGE - 1);
        if end > start {
            // SAFETY: the range lies inside one allocation we own; MADV_HUGEPAGE only
            // changes how it is backed, never its contents. Failure (no THP) is harmless.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
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
        self.dot_rows_on(simd::best(), rows, x, out)
    }

    /// [`Self::dot_rows`] on the given kernels (`None`: the portable code).
    fn dot_rows_on(&self, isa: Option<simd::Isa>, rows: Range<usize>, x: &QuantInput, out: &mut [f32]) {
        if x.cols != self.cols || x.kind != Some(self.input_kind()) {
            return;
        }
        let rows = rows.start..rows.end.min(self.rows);
        if rows.is_empty() || simd::dot_rows(isa, self, rows.clone(), x, out) {
            return;
        }
        match &self.blocks {
            Blocks::Q4K(b) => dot_generic(b, self.cols, rows, &x.q8k, x.m, out),
            Blocks::Q6K(b) => dot_generic(b, self.cols, rows, &x.q8k, x.m, out),
            Blocks::Q8_0(b) => dot_generic(b, self.cols, rows, &x.q8_0, x.m, out),
            Blocks::Q5_0(b) => q5_0::dot_rows(as_bytes(b), self.cols, rows, &x.q8_0_scales, &x.q8_0_values, x.m, out),
        }
    }
}

/// Which quantized kernels this CPU runs, in words (`b4 perf` prints it).
pub fn kernel_set() -> &'static str {
    simd::name(simd::best())
}

/// The SIMD kernels where the target has them; elsewhere a stand-in that has none.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{as_bytes, x86, Blocks, QuantInput, QuantMatrix, Range};
    pub(super) use x86::Isa;

    pub(super) fn best() -> Option<Isa> {
        Isa::best()
    }

    pub(super) fn name(isa: Option<Isa>) -> &'static str {
        match isa {
            Some(Isa::Amx) => "x86-64 AVX-512 VNNI, AMX int8 tiles (prefill: Q8_0 / Q5_0, Q4_K from 40 rows, Q6_K from 72)",
            Some(Isa::Vnni) => "x86-64 AVX-512 VNNI",
            Some(Isa::Avx2) => "x86-64 AVX2",
            None => "portable (no AVX2)",
        }
    }

    /// Runs the kernels of `isa`; false when there are none for this case.
    pub(super) fn dot_rows(isa: Option<Isa>, w: &QuantMatrix, rows: Range<usize>, x: &QuantInput, out: &mut [f32]) -> bool {
        let Some(isa) = isa else { return false };
        let q8_0 = x86::Input::Q8_0(x86::Q8_0Rows {
            values: &x.q8_0_values,
            scales: &x.q8_0_scales,
            sums: &x.q8_0_sums,
            scales4: &x.q8_0_scales4,
            sums4: &x.q8_0_sums4,
            values8: &x.q8_0_values8,
            scales8: &x.q8_0_scales8,
            sums8: &x.q8_0_sums8,
        });
        let q8k = x86::Input::Q8K(x86::Q8KRows { blocks: as_bytes(&x.q8k), d4: &x.q8k_d4, sums4: &x.q8k_sums4, bsums4: &x.q8k_bsums4, pairs: &x.q8k_pairs, lanes: &x.q8k_lanes });
        let (ty, bytes, input) = match &w.blocks {
            Blocks::Q8_0(b) => (x86::WeightType::Q8_0, as_bytes(b), q8_0),
            Blocks::Q5_0(b) => (x86::WeightType::Q5_0, as_bytes(b), q8_0),
            Blocks::Q4K(b) => (x86::WeightType::Q4K, as_bytes(b), q8k),
            Blocks::Q6K(b) => (x86::WeightType::Q6K, as_bytes(b), q8k),
        };
        x86::dot_rows(isa, ty, bytes, w.cols, rows, input, x.m, out)
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod simd {
    use super::{QuantInput, QuantMatrix, Range};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Isa {}

    pub(super) fn best() -> Option<Isa> {
        None
    }

    pub(super) fn name(_: Option<Isa>) -> &'static str {
        "portable"
    }

    pub(super) fn dot_rows(_: Option<Isa>, _: &QuantMatrix, _: Range<usize>, _: &QuantInput, _: &mut [f32]) -> bool {
        false
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
        self.quantize_with(kind, x, m, cols, &|n, task| {
            (0..n).for_each(task);
            true
        });
    }

    /// [`Self::quantize`] with the rows' quantization spread over `par` (the forward pass
    /// gives its thread pool: a 256-row prefill chunk of the 1.5B's down projection has 2.3
    /// million inputs, and quantizing them on one thread left the other idle). Returns false
    /// when `par` does (a task failed; the input is then incomplete).
    pub fn quantize_with(&mut self, kind: InputKind, x: &[f32], m: usize, cols: usize, par: ParFor) -> bool {
        self.m = m;
        self.cols = cols;
        self.kind = Some(kind);
        match kind {
            InputKind::Q8_0 => {
                if !quantize_into(&mut self.q8_0, x, m, cols, par) {
                    return false;
                }
                // Split each 34-byte block (f16 scale, 32 values) for the Q5_0 kernel.
                self.q8_0_scales.clear();
                self.q8_0_values.clear();
                self.q8_0_sums.clear();
                for block in as_bytes(&self.q8_0).chunks_exact(34) {
                    self.q8_0_scales.push(half::f16::from_le_bytes([block[0], block[1]]).to_f32());
                    let values = block.get(2..).unwrap_or_default().iter().map(|&b| b as i8);
                    self.q8_0_values.extend(values.clone());
                    self.q8_0_sums.push(values.map(i32::from).sum());
                }
                interleave4(&self.q8_0_scales, m, cols / 32, &mut self.q8_0_scales4);
                interleave4(&self.q8_0_sums, m, cols / 32, &mut self.q8_0_sums4);
                self.transpose8(m, cols / 32);
            }
            InputKind::Q8K => {
                if !quantize_into(&mut self.q8k, x, m, cols, par) {
                    return false;
                }
                self.interleave_q8k(m, cols / 256);
            }
        }
        true
    }
}

impl QuantInput {
    /// Fills `q8_0_values8`, `q8_0_scales8` and `q8_0_sums8` from the split Q8_0 rows
    /// (`m` rows of `nb` blocks; complete groups of eight rows only).
    fn transpose8(&mut self, m: usize, nb: usize) {
        self.q8_0_values8.clear();
        self.q8_0_scales8.clear();
        self.q8_0_sums8.clear();
        let cols = nb * 32;
        for g in 0..m / 8 {
            for b in 0..nb {
                for k in 0..8 {
                    for t in 8 * g..8 * g + 8 {
                        let at = t * cols + 32 * b + 4 * k;
                        let piece = self.q8_0_values.get(at..at + 4).and_then(|p| <[i8; 4]>::try_from(p).ok()).unwrap_or_default();
                        self.q8_0_values8.push(piece);
                    }
                }
                for t in 8 * g..8 * g + 8 {
                    self.q8_0_scales8.push(self.q8_0_scales.get(t * nb + b).copied().unwrap_or(0.0));
                    self.q8_0_sums8.push(self.q8_0_sums.get(t * nb + b).copied().unwrap_or(0));
                }
            }
        }
    }

    /// Fills `q8k_d4`, `q8k_sums4`, `q8k_bsums4` and `q8k_pairs` from the Q8_K blocks of `m`
    /// rows of `nb` blocks (complete groups of four rows only), and where AMX runs
    /// `q8k_lanes` (the tiles [`x86::amx_k_tiles`] counts, a last one padded with zeros).
    fn interleave_q8k(&mut self, m: usize, nb: usize) {
        self.q8k_d4.clear();
        self.q8k_sums4.clear();
        self.q8k_bsums4.clear();
        self.q8k_pairs.clear();
        self.q8k_lanes.clear();
        let grouped = m / 4 * 4;
        let Some(rows) = self.q8k.get(..grouped * nb) else { return };
        let block = |t: usize, b: usize| rows.get(t * nb + b);
        for g in 0..grouped / 4 {
            for b in 0..nb {
                for t in 4 * g..4 * g + 4 {
                    let Some(blk) = block(t, b) else { return };
                    let bytes = as_bytes(std::slice::from_ref(blk));
                    let d = bytes.get(..4).and_then(|d| <[u8; 4]>::try_from(d).ok()).map_or(0.0, f32::from_le_bytes);
                    let mut bsums = [0i16; 16];
                    for (v, p) in bsums.iter_mut().zip(bytes.get(260..292).unwrap_or_default().chunks_exact(2)) {
                        *v = i16::from_le_bytes([p[0], p[1]]);
                    }
                    self.q8k_d4.push(d);
                    self.q8k_sums4.extend(bsums.chunks_exact(2).map(|p| p[0].wrapping_add(p[1])));
                    self.q8k_bsums4.extend_from_slice(&bsums);
                }
            }
        }
        for blk in rows {
            let qs = as_bytes(std::slice::from_ref(blk)).get(4..260).unwrap_or_default();
            for r in 0..4 {
                for i in 0..8 {
                    for k in [2 * r, 2 * r + 1] {
                        self.q8k_pairs.extend_from_slice(qs.get(32 * k + 4 * i..32 * k + 4 * i + 4).unwrap_or_default());
                    }
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        if simd::best() == Some(simd::Isa::Amx) {
            let padded = x86::amx_k_tiles(m) * x86::AMX_TILE;
            for blk in self.q8k.get(..padded.min(m) * nb).unwrap_or_default() {
                let qs = as_bytes(std::slice::from_ref(blk)).get(4..260).unwrap_or_default();
                for lane in 0..8 {
                    for k in 0..8 {
                        self.q8k_lanes.extend_from_slice(qs.get(32 * k + 4 * lane..32 * k + 4 * lane + 4).unwrap_or_default());
                    }
                }
            }
            self.q8k_lanes.resize(padded * nb * 256, 0);
        }
    }
}

/// One row quantized: with AVX-512 where the CPU has it (the same bytes), else by candle.
fn quantize_row<T: GgmlType>(src: &[f32], dst: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let kind = match T::DTYPE {
            GgmlDType::Q8_0 => Some(InputKind::Q8_0),
            GgmlDType::Q8K => Some(InputKind::Q8K),
            _ => None,
        };
        // SAFETY: the block types are plain old data (see `as_bytes`), so any bytes written
        // leave valid blocks.
        let bytes = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, std::mem::size_of_val(dst)) };
        if kind.is_some_and(|kind| x86::quantize_row(kind, src, bytes)) {
            return;
        }
    }
    T::from_float(src, dst);
}

/// Runs `task(i)` for `i` in `0..n`, possibly in parallel; false when a task failed.
pub type ParFor<'a> = &'a (dyn Fn(usize, &(dyn Fn(usize) + Sync)) -> bool + 'a);

/// A block buffer's base pointer, shared by tasks that write disjoint rows.
struct RowsPtr<T>(*mut T);

// SAFETY: tasks write disjoint row ranges (see `quantize_into`), and the blocks are plain data.
unsafe impl<T> Sync for RowsPtr<T> {}

impl<T> RowsPtr<T> {
    fn at(&self, offset: usize) -> *mut T {
        self.0.wrapping_add(offset)
    }
}

/// Per group of four rows of `nb` values, the rows' values side by side: `[4 * b + t]`.
fn interleave4<T: Copy>(src: &[T], m: usize, nb: usize, dst: &mut Vec<T>) {
    dst.clear();
    for group in src.chunks_exact(4 * nb.max(1)).take(m / 4) {
        for b in 0..nb {
            dst.extend(group.iter().skip(b).step_by(nb.max(1)));
        }
    }
}

fn quantize_into<T: GgmlType>(buf: &mut Vec<T>, x: &[f32], m: usize, cols: usize, par: ParFor) -> bool {
    /// Rows per task.
    const ROWS: usize = 16;
    let per_row = cols / T::BLCK_SIZE;
    let m = m.min(x.len() / cols.max(1));
    buf.resize(m * per_row, T::zeros());
    let base = RowsPtr(buf.as_mut_ptr());
    par(m.div_ceil(ROWS), &|c| {
        let rows = c * ROWS..((c + 1) * ROWS).min(m);
        // SAFETY: `buf` has `m * per_row` blocks and outlives the tasks; each task writes the
        // blocks of its own rows only.
        let dst = unsafe { std::slice::from_raw_parts_mut(base.at(rows.start * per_row), rows.len() * per_row) };
        let src = x.get(rows.start * cols..rows.end * cols).unwrap_or_default();
        for (src, dst) in src.chunks_exact(cols.max(1)).zip(dst.chunks_exact_mut(per_row.max(1))) {
            quantize_row(src, dst);
        }
    })
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

    /// Bytes of `n` random blocks of `dtype` with every f16 scale set to `scale`, so all
    /// bit patterns of the quantized values occur (extremes that quantizing never makes).
    fn random_blocks(dtype: GgmlDType, n: usize, seed: u64, scale: half::f16) -> Vec<u8> {
        let (size, scale_offsets): (usize, &[usize]) = match dtype {
            GgmlDType::Q8_0 => (34, &[0]),
            GgmlDType::Q5_0 => (22, &[0]),
            GgmlDType::Q4K => (144, &[0, 2]),
            GgmlDType::Q6K => (210, &[208]),
            other => panic!("no random blocks of {other:?}"),
        };
        let mut s = seed | 1;
        let mut bytes: Vec<u8> = (0..n * size)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect();
        for block in bytes.chunks_exact_mut(size) {
            for &o in scale_offsets {
                block[o..o + 2].copy_from_slice(&scale.to_le_bytes());
            }
        }
        bytes
    }

    fn random_matrix(dtype: GgmlDType, rows: usize, cols: usize, seed: u64) -> QuantMatrix {
        let bytes = random_blocks(dtype, rows * cols / dtype.block_size(), seed, half::f16::from_f32(0.01));
        QuantMatrix::read(dtype, rows, cols, &mut bytes.as_slice()).unwrap()
    }

    /// `w.dot_rows_on(isa)` against candle's plain dot for weight rows `range` and `m`
    /// input rows; outputs outside the range must stay untouched.
    fn check_path(w: &QuantMatrix, isa: Option<simd::Isa>, range: Range<usize>, m: usize, seed: u64) {
        let cols = w.cols();
        let x = values(m * cols, seed);
        let mut input = QuantInput::new();
        input.quantize(w.input_kind(), &x, m, cols);
        let mut out = vec![f32::NAN; (range.len() + 1) * m];
        if isa.is_some() {
            // The SIMD kernels themselves, not a silent fall-back to the portable code.
            assert!(simd::dot_rows(isa, w, range.clone(), &input, &mut out), "{isa:?} refused {:?}", w.dtype());
        } else {
            w.dot_rows_on(isa, range.clone(), &input, &mut out);
        }
        let want = match &w.blocks {
            Blocks::Q4K(b) => reference(b, &x, w.rows(), cols, m),
            Blocks::Q6K(b) => reference(b, &x, w.rows(), cols, m),
            Blocks::Q5_0(b) => reference(b, &x, w.rows(), cols, m),
            Blocks::Q8_0(b) => reference(b, &x, w.rows(), cols, m),
        };
        let dtype = w.dtype();
        for (i, (a, b)) in out.iter().zip(&want[range.start * m..range.end * m]).enumerate() {
            let tol = 1e-4 * b.abs().max(1.0);
            assert!((a - b).abs() <= tol, "{dtype:?} {isa:?} cols={cols} m={m} rows={range:?} output {i}: {a} vs {b}");
        }
        assert!(out[range.len() * m..].iter().all(|v| v.is_nan()), "{dtype:?} {isa:?}: wrote past the range");
    }

    /// The kernels this CPU can run, the portable code included.
    fn paths() -> Vec<Option<simd::Isa>> {
        #[cfg(target_arch = "x86_64")]
        let simd = [x86::Isa::Avx2, x86::Isa::Vnni, x86::Isa::Amx].into_iter().filter(|isa| isa.available()).map(Some).collect();
        #[cfg(not(target_arch = "x86_64"))]
        let simd = Vec::new();
        [vec![None], simd].concat()
    }

    /// Every kernel against candle's plain dot: the model shapes' column counts (896 = 28
    /// Q8_0 blocks, 4864 = 19 super-blocks), odd and even block counts, m = 1, the group
    /// of four and remainders, full and partial row ranges.
    #[test]
    fn every_path_matches_candles_reference_dot() {
        let cases = [
            (GgmlDType::Q8_0, 896),
            (GgmlDType::Q8_0, 32 * 3),
            (GgmlDType::Q8_0, 64),
            (GgmlDType::Q8_0, 128),
            (GgmlDType::Q8_0, 32),
            (GgmlDType::Q5_0, 896),
            (GgmlDType::Q5_0, 32 * 3),
            (GgmlDType::Q4K, 4864),
            (GgmlDType::Q4K, 256),
            (GgmlDType::Q6K, 4864),
            (GgmlDType::Q6K, 256 * 2),
        ];
        for (dtype, cols) in cases {
            let w = matrix(dtype, 9, cols, 5);
            for isa in paths() {
                for m in [1, 2, 3, 4, 5, 7, 16] {
                    check_path(&w, isa, 0..9, m, 100 + m as u64);
                    check_path(&w, isa, 2..7, m, 200 + m as u64);
                }
            }
        }
    }

    /// A row's product is the same bits whichever group of input rows it is computed in:
    /// alone (the one-row decode kernels), in a group of four or of eight, or in the
    /// remainder after them. A prompt read in one batch then gives the same cache and logits
    /// as read in pieces (a kept prefix, the prompt cache) or token by token.
    #[test]
    fn a_row_gives_the_same_bits_in_any_group() {
        let mut differ = Vec::new();
        // Block counts: groups of eight, then pairs, then one block left (28, 13, 3, 1).
        let cases = [(GgmlDType::Q8_0, 896), (GgmlDType::Q8_0, 32 * 13), (GgmlDType::Q5_0, 896), (GgmlDType::Q5_0, 32 * 3), (GgmlDType::Q5_0, 32), (GgmlDType::Q4K, 4864), (GgmlDType::Q6K, 4864), (GgmlDType::Q4K, 256)];
        // Batches that leave three, two, one and no rows after their groups of eight and
        // four (19 = 16 + 3), and the short ones a token and its drafts make.
        for ((dtype, cols), m) in cases.into_iter().flat_map(|case| [19, 2, 3, 5, 6, 7, 8].map(|m| (case, m))) {
            let w = random_matrix(dtype, 3, cols, 11);
            let x = values(m * cols, 17);
            for isa in paths() {
                let mut input = QuantInput::new();
                input.quantize(w.input_kind(), &x, m, cols);
                let mut batched = vec![0f32; 3 * m];
                w.dot_rows_on(isa, 0..3, &input, &mut batched);
                for t in 0..m {
                    let mut one = QuantInput::new();
                    one.quantize(w.input_kind(), &x[t * cols..(t + 1) * cols], 1, cols);
                    let mut out = vec![0f32; 3];
                    w.dot_rows_on(isa, 0..3, &one, &mut out);
                    for j in 0..3 {
                        if out[j].to_bits() != batched[j * m + t].to_bits() {
                            differ.push(format!("{dtype:?} cols {cols} {isa:?} m {m} row {j} input {t}: alone {} in a batch {}", out[j], batched[j * m + t]));
                        }
                    }
                }
            }
        }
        assert!(differ.is_empty(), "{} products differ:\n{}", differ.len(), differ.join("\n"));
    }

    /// Weights of every bit pattern (the extremes of each type's values and scales), which
    /// the kernels' unsigned tricks and i16 pair sums must survive.
    #[test]
    fn every_path_matches_on_random_weight_bits() {
        for dtype in [GgmlDType::Q8_0, GgmlDType::Q5_0, GgmlDType::Q4K, GgmlDType::Q6K] {
            let w = random_matrix(dtype, 6, 1024, 9);
            for isa in paths() {
                for m in [1, 6] {
                    check_path(&w, isa, 0..6, m, 300 + m as u64);
                }
            }
        }
    }

    #[test]
    fn best_kernels_are_the_best_available() {
        let best = simd::best();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(best, paths().into_iter().flatten().max());
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(best, None);
    }

    /// Speed per weight row of every path at the models' shapes, one thread:
    /// `cargo test --release --lib kernels::tests::kernel_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn kernel_speed() {
        let shapes = [
            ("0.5B q/o", GgmlDType::Q5_0, 896, 896),
            ("0.5B k/v", GgmlDType::Q5_0, 128, 896),
            ("0.5B gate/up", GgmlDType::Q5_0, 4864, 896),
            ("0.5B v", GgmlDType::Q8_0, 128, 896),
            ("0.5B output", GgmlDType::Q8_0, 151936, 896),
            ("0.5B down", GgmlDType::Q4K, 896, 4864),
            ("0.5B down", GgmlDType::Q6K, 896, 4864),
            ("1.5B q/o", GgmlDType::Q4K, 1536, 1536),
            ("1.5B k", GgmlDType::Q4K, 256, 1536),
            ("1.5B gate/up", GgmlDType::Q4K, 8960, 1536),
            ("1.5B down", GgmlDType::Q4K, 1536, 8960),
            ("1.5B v", GgmlDType::Q6K, 256, 1536),
            ("1.5B down", GgmlDType::Q6K, 1536, 8960),
            ("1.5B output", GgmlDType::Q6K, 151936, 1536),
        ];
        println!("{:<13} {:<5} {:>13} {:>3} | {:>16} | per path: ns/row GB/s (speed-up)", "shape", "type", "rows x cols", "m", "reference");
        for (name, dtype, rows, cols) in shapes {
            let w = random_matrix(dtype, rows, cols, 1);
            // One row (decode), a token with its drafts (2, 3, 7: the rows left after the
            // groups share one pass over the weights), a prompt's group.
            for m in [1, 2, 3, 7, 16] {
                // The big output matrices with 16 inputs: a slice of rows keeps the run short.
                let bench_rows = if m > 1 { rows.min(8192) } else { rows };
                let mut input = QuantInput::new();
                input.quantize(w.input_kind(), &values(m * cols, 2), m, cols);
                let mut out = vec![0f32; bench_rows * m];
                let row_bytes = w.size_in_bytes() as f64 / rows as f64;
                let mut line = format!("{name:<13} {:<5} {:>13} {m:>3} |", format!("{dtype:?}"), format!("{rows}x{cols}"));
                let mut base = 0.0;
                for isa in paths() {
                    let start = std::time::Instant::now();
                    let mut iters = 0u32;
                    while iters < 2 || start.elapsed().as_secs_f64() < 0.2 {
                        w.dot_rows_on(isa, 0..bench_rows, &input, &mut out);
                        iters += 1;
                    }
                    let ns = start.elapsed().as_secs_f64() * 1e9 / (iters as f64 * bench_rows as f64);
                    if isa.is_none() {
                        base = ns;
                    }
                    line += &format!(" {:>7.1} {:>5.1} ({:>4.1}x) |", ns, row_bytes / ns, base / ns);
                }
                println!("{line}");
            }
        }
        println!("paths: {:?}", paths());
    }

    /// Input rows quantized by `QuantInput` give exactly candle's `from_float` bytes: random
    /// rows at several magnitudes, values that land on halves after scaling (rounded away
    /// from zero), all-zero blocks written over stale bytes, and blocks whose largest
    /// magnitude occurs with both signs (Q8_K keeps the first one's sign).
    #[test]
    fn quantized_inputs_match_candles_from_float() {
        fn check<T: GgmlType>(x: &[f32], what: &str) {
            let mut want = vec![T::zeros(); x.len() / T::BLCK_SIZE];
            T::from_float(x, &mut want);
            // Stale bytes first, as a reused buffer has them.
            let mut got = vec![T::zeros(); want.len()];
            // SAFETY: plain old data blocks (see `as_bytes`).
            unsafe { std::ptr::write_bytes(got.as_mut_ptr() as *mut u8, 0x5a, std::mem::size_of_val(got.as_slice())) };
            quantize_row(x, &mut got);
            assert_eq!(as_bytes(&got), as_bytes(&want), "{:?} {what}", T::DTYPE);
        }
        let n = 1024;
        for (seed, magnitude) in [(1, 1.0), (2, 1e-3), (3, 40.0), (4, 3e4)] {
            let x: Vec<f32> = values(n, seed).iter().map(|v| v * magnitude).collect();
            check::<BlockQ8_0>(&x, &format!("random x {magnitude}"));
            check::<BlockQ8K>(&x, &format!("random x {magnitude}"));
        }
        // Largest magnitude 127 (Q8_0 scale 1) or -127 first (Q8_K scale 1): halves stay halves.
        let mut halves: Vec<f32> = (0..n).map(|i| (i % 64) as f32 - 31.5).collect();
        for block in halves.chunks_mut(32) {
            block[7] = 127.0;
        }
        for block in halves.chunks_mut(256) {
            block[3] = -127.0;
        }
        check::<BlockQ8_0>(&halves, "halves");
        check::<BlockQ8K>(&halves, "halves");
        let mut zeros = values(n, 5);
        zeros[..256].fill(0.0);
        zeros[512..544].fill(-0.0);
        check::<BlockQ8_0>(&zeros, "zero blocks");
        check::<BlockQ8K>(&zeros, "zero blocks");
        let mut both_signs = values(n, 6);
        both_signs[10] = 2.0;
        both_signs[200] = -2.0;
        both_signs[300] = -2.0;
        both_signs[400] = 2.0;
        check::<BlockQ8_0>(&both_signs, "both signs");
        check::<BlockQ8K>(&both_signs, "both signs");
    }

    /// Quantizing a 256-row prefill chunk's inputs, ours against candle's `from_float`, one
    /// thread, best of many:
    /// `cargo test --release --lib kernels::tests::quantize_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn quantize_speed() {
        fn time(f: &mut dyn FnMut()) -> f64 {
            (0..30)
                .map(|_| {
                    let start = std::time::Instant::now();
                    f();
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        }
        fn compare<T: GgmlType>(x: &[f32], cols: usize) {
            let mut out = vec![T::zeros(); x.len() / T::BLCK_SIZE];
            let per_row = cols / T::BLCK_SIZE;
            let ours = time(&mut || x.chunks(cols).zip(out.chunks_mut(per_row)).for_each(|(x, o)| quantize_row(x, o)));
            let candle = time(&mut || x.chunks(cols).zip(out.chunks_mut(per_row)).for_each(|(x, o)| T::from_float(x, o)));
            println!("{:?} {} x {cols}: candle {:.0} us, ours {:.0} us ({:.1}x)", T::DTYPE, x.len() / cols, candle * 1e6, ours * 1e6, candle / ours);
        }
        for cols in [896, 4864] {
            let x = values(256 * cols, 9);
            compare::<BlockQ8_0>(&x, cols);
            compare::<BlockQ8K>(&x, cols);
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
