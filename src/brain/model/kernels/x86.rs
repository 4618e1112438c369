//! AVX2 and AVX-512 VNNI dot products of quantized weight rows with quantized input rows,
//! for [`super::QuantMatrix::dot_rows`].
//!
//! The kernels follow ggml's AVX2 ones (`ggml-cpu/arch/x86/quants.c`): per block an exact
//! integer dot product, scaled and added to float lanes with FMA. These changes make them
//! faster than candle's copies of those kernels:
//! - each loaded and unpacked weight block is used for up to four input rows (prefill);
//! - signed offsets are taken out of the integer products with the input's precomputed block
//!   sums (`-16` of Q5_0, `-32` of Q6_K), so weights stay unsigned and need no sign tricks;
//! - with AVX-512 VNNI, `vpdpbusd` does the u8 × i8 multiply-add in one instruction;
//! - for Q8_0 / Q5_0 the integer sums of several blocks (eight of one input row, or two of
//!   four rows) share one vector, so the per-block scale costs one lane, not a broadcast.
//!
//! The code of both instruction sets is one macro body compiled twice with different
//! `target_feature`s; only [`avx2_ops`] / [`vnni_ops`] differ.

use std::ops::Range;
use std::sync::OnceLock;

mod amx;
mod quantize;

/// Bytes of one block of each type (ggml's layouts).
pub(super) const Q8_0_BYTES: usize = 34;
pub(super) const Q5_0_BYTES: usize = 22;
pub(super) const Q4K_BYTES: usize = 144;
pub(super) const Q6K_BYTES: usize = 210;
pub(super) const Q8K_BYTES: usize = 292;
const QK8_0: usize = 32;
/// Input rows in one AMX tile: `QuantInput` lays out that many rows at a time for them.
pub(super) const AMX_TILE: usize = amx::TILE;
/// Input tiles (of [`AMX_TILE`] rows) the K-quant tiles take for `m` input rows.
pub(super) use amx::k_tiles as amx_k_tiles;

/// Instruction sets the kernels are built for, best last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Isa {
    Avx2,
    Vnni,
    /// VNNI, with Intel AMX int8 tiles for the prefill products ([`amx`]).
    Amx,
}

impl Isa {
    /// Whether this CPU runs kernels of `self` (detected once: `dot_rows` asks per call).
    pub(crate) fn available(self) -> bool {
        static AVAILABLE: OnceLock<(bool, bool)> = OnceLock::new();
        let (avx2, vnni) = *AVAILABLE.get_or_init(|| {
            let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c");
            let vnni = avx2
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512vnni");
            (avx2, vnni)
        });
        match self {
            Isa::Avx2 => avx2,
            Isa::Vnni => vnni,
            Isa::Amx => vnni && amx::available(),
        }
    }

    /// The best set this CPU has (`None`: no AVX2, use the portable code).
    pub(crate) fn best() -> Option<Isa> {
        [Isa::Amx, Isa::Vnni, Isa::Avx2].into_iter().find(|isa| isa.available())
    }
}

/// How far ahead, in bytes, the one-row (decode) kernels ask for weights: 8 KiB on Intel
/// CPUs, where the cores' own prefetchers left decode at ~60% of the read bandwidth and
/// this took it to ~90% (`docs/perf.md`); none elsewhere (on the AMD machine software
/// prefetch measured no change). `$B4_PREFETCH` (bytes, 0 = none) overrides it.
fn prefetch_distance() -> usize {
    static DISTANCE: OnceLock<usize> = OnceLock::new();
    *DISTANCE.get_or_init(|| match std::env::var("B4_PREFETCH").ok().and_then(|v| v.parse().ok()) {
        Some(bytes) => bytes,
        None if is_intel() => 8192,
        None => 0,
    })
}

/// The CPU's vendor string is "GenuineIntel".
fn is_intel() -> bool {
    let id = std::arch::x86_64::__cpuid(0);
    [id.ebx, id.edx, id.ecx].iter().flat_map(|r| r.to_le_bytes()).eq(*b"GenuineIntel")
}

/// Asks for the cache lines of `span` bytes at [`prefetch_distance`] past `p` (a hint: an
/// address past the weights is never read, so any pointer will do).
#[inline(always)]
fn prefetch_ahead(p: *const u8, span: usize) {
    let distance = prefetch_distance();
    if distance == 0 {
        return;
    }
    let mut offset = 0;
    while offset < span {
        // SAFETY: prefetching does not fault, whatever the address.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.wrapping_add(distance + offset) as *const i8) };
        offset += 64;
    }
}

/// Q8_0 input rows split for SIMD loads: all values of a row contiguous, and per block the
/// scale as f32 and the sum of the block's values.
#[derive(Clone, Copy)]
pub(super) struct Q8_0Rows<'a> {
    pub values: &'a [i8],
    pub scales: &'a [f32],
    pub sums: &'a [i32],
    /// Per group of four rows and block, the four rows' scales and sums side by side.
    pub scales4: &'a [f32],
    pub sums4: &'a [i32],
    /// Per group of eight rows: values in 4-byte pieces of all eight rows, scales, sums
    /// (see `QuantInput`).
    pub values8: &'a [[i8; 4]],
    pub scales8: &'a [f32],
    pub sums8: &'a [i32],
}

/// `N` Q8_0 input rows for one kernel call: values, block scales and block sums.
pub(super) struct Rows32<const N: usize> {
    values: [*const i8; N],
    scales: [*const f32; N],
    sums: [*const i32; N],
}

impl<const N: usize> Rows32<N> {
    /// Rows `t..t + N` of `x` (`nb` blocks a row).
    ///
    /// # Safety
    /// The rows lie in `x`.
    unsafe fn at(x: Q8_0Rows, nb: usize, t: usize) -> Self {
        let cols = nb * QK8_0;
        Rows32 {
            values: std::array::from_fn(|i| x.values.as_ptr().add((t + i) * cols)),
            scales: std::array::from_fn(|i| x.scales.as_ptr().add((t + i) * nb)),
            sums: std::array::from_fn(|i| x.sums.as_ptr().add((t + i) * nb)),
        }
    }
}

/// Weight type of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WeightType {
    Q8_0,
    Q5_0,
    Q4K,
    Q6K,
}

impl WeightType {
    fn block(self) -> (usize, usize) {
        match self {
            WeightType::Q8_0 => (QK8_0, Q8_0_BYTES),
            WeightType::Q5_0 => (QK8_0, Q5_0_BYTES),
            WeightType::Q4K => (256, Q4K_BYTES),
            WeightType::Q6K => (256, Q6K_BYTES),
        }
    }
}

/// The input of a kernel, in the form its weight type takes.
#[derive(Clone, Copy)]
pub(super) enum Input<'a> {
    Q8_0(Q8_0Rows<'a>),
    Q8K(Q8KRows<'a>),
}

/// Q8_K input rows: the blocks as bytes (`d: f32, qs: [i8; 256], bsums: [i16; 16]`) and,
/// per group of four rows and block, their scales, 32-value sums and 16-value sums side by
/// side (`[(4 * nb * g + 4 * b + t) * n]`, `n` = 1, 8, 16).
#[derive(Clone, Copy)]
pub(super) struct Q8KRows<'a> {
    pub blocks: &'a [u8],
    pub d4: &'a [f32],
    pub sums4: &'a [i16],
    pub bsums4: &'a [i16],
    /// The grouped rows' values reordered for the Q4_K kernel (see `QuantInput`).
    pub pairs: &'a [u8],
    /// The rows of whole tiles reordered by lane for the AMX tiles (see `QuantInput`; empty
    /// where the tiles do not run).
    pub lanes: &'a [u8],
}

/// `out[(j - rows.start) * m + t] = dot(weight row j, input row t)` for weights `w` (the
/// bytes of `n_rows` rows of `cols` values of type `ty`) and `m` input rows. Returns false,
/// writing nothing, when the sizes do not fit together (the caller then uses the portable
/// code), so the kernels below may read without bounds checks.
#[allow(clippy::too_many_arguments)]
pub(super) fn dot_rows(isa: Isa, ty: WeightType, w: &[u8], cols: usize, rows: Range<usize>, x: Input, m: usize, out: &mut [f32]) -> bool {
    let (block, block_bytes) = ty.block();
    let nb = cols / block;
    let row_bytes = nb * block_bytes;
    let inputs_fit = match (ty, x) {
        (WeightType::Q8_0 | WeightType::Q5_0, Input::Q8_0(x)) => {
            let (grouped, grouped8) = (m / 4 * 4 * nb, m / 8 * 8 * nb);
            x.values.len() >= m * cols
                && x.scales.len() >= m * nb
                && x.sums.len() >= m * nb
                && x.scales4.len() >= grouped
                && x.sums4.len() >= grouped
                && x.values8.len() * 4 >= grouped8 * QK8_0
                && x.scales8.len() >= grouped8
                && x.sums8.len() >= grouped8
        }
        (WeightType::Q4K | WeightType::Q6K, Input::Q8K(x)) => {
            let grouped = m / 4 * 4 * nb;
            x.blocks.len() >= m * nb * Q8K_BYTES
                && x.d4.len() >= grouped
                && x.sums4.len() >= 8 * grouped
                && x.bsums4.len() >= 16 * grouped
                && x.pairs.len() >= 256 * grouped
        }
        _ => false,
    };
    if !inputs_fit || !isa.available() || !cols.is_multiple_of(block) || w.len() < rows.end.saturating_mul(row_bytes) || out.len() < rows.len().saturating_mul(m) {
        return false;
    }
    let kernel = |isa| Kernel { isa, ty, w, nb, row_bytes, x };
    let panels = rows.len() / amx::TILE;
    let (tiles, laid_out) = match x {
        Input::Q8_0(_) => (m / amx::TILE, true),
        // The K-quant tiles take their inputs in lanes, laid out only where they run, and
        // a last tile padded with zero rows (`amx::k_tiles`).
        Input::Q8K(q8k) => {
            let tiles = amx::k_tiles(m);
            (tiles, tiles >= amx::k_min_tiles(ty == WeightType::Q6K) && q8k.lanes.len() >= tiles * amx::TILE * nb * 256)
        }
    };
    if isa != Isa::Amx || tiles == 0 || panels == 0 || !laid_out {
        vnni_rows(&kernel(isa.min(Isa::Vnni)), rows, 0, m, out);
        return true;
    }
    // The tiles take whole panels of 16 weight rows by 16 input rows; what is left over
    // (rows past the last panel, inputs past the last tile) goes through the VNNI kernels,
    // whose outputs the tiles' equal bit for bit.
    let done = panels * amx::TILE;
    for p in 0..panels {
        let wj = w.as_ptr().wrapping_add((rows.start + p * amx::TILE) * row_bytes);
        let out_p = out.as_mut_ptr().wrapping_add(p * amx::TILE * m);
        // SAFETY: AMX and VNNI are available (`isa.available()` above); the panel's 16 rows
        // lie in `w`, input rows 0..16 * tiles in `x` (for the K-quants: in its lanes, and
        // 0..m in its blocks, with 16 * (tiles - 1) < m) and its outputs in `out` (sizes
        // checked above).
        unsafe {
            match (ty, x) {
                (WeightType::Q5_0, Input::Q8_0(q8)) => amx::panel::<true>(wj, row_bytes, nb, q8, tiles, m, out_p),
                // Q8_0 (`inputs_fit` paired each input kind with its weight types).
                (_, Input::Q8_0(q8)) => amx::panel::<false>(wj, row_bytes, nb, q8, tiles, m, out_p),
                (WeightType::Q6K, Input::Q8K(q8k)) => amx::k_panel::<true>(wj, row_bytes, nb, q8k, tiles, m, out_p),
                (_, Input::Q8K(q8k)) => amx::k_panel::<false>(wj, row_bytes, nb, q8k, tiles, m, out_p),
            }
        }
    }
    let (tiled, rest) = out.split_at_mut(done * m);
    vnni_rows(&kernel(Isa::Vnni), rows.start..rows.start + done, tiles * amx::TILE, m, tiled);
    vnni_rows(&kernel(Isa::Vnni), rows.start + done..rows.end, 0, m, rest);
    true
}

/// The SIMD kernels' loop: weight rows `rows` with input rows `t_start..m` (`t_start` a
/// multiple of 8), into `out[(j - rows.start) * m + t]`. The kernel's sizes are checked.
fn vnni_rows(kernel: &Kernel, rows: Range<usize>, t_start: usize, m: usize, out: &mut [f32]) {
    let (isa, x) = (kernel.isa, kernel.x);
    // Input rows in blocks that stay in L1 while every weight row of the call passes over
    // them (in prefill all m rows are some hundred KiB and came from L2 for each weight row).
    let x_row_bytes = match x {
        Input::Q8_0(_) => kernel.nb * QK8_0,
        Input::Q8K(_) => kernel.nb * Q8K_BYTES,
    };
    let t_block = (16_384 / x_row_bytes.max(1)).clamp(8, 64) / 8 * 8;
    let grouped = isa >= Isa::Vnni;
    let mut t0 = t_start;
    while t0 < m {
        let t1 = (t0 + t_block).min(m);
        for (j, out_j) in rows.clone().zip(out.chunks_exact_mut(m.max(1))) {
            let mut t = t0;
            let mut out_t = out_j.get_mut(t0..t1).unwrap_or_default();
            if grouped {
                let mut eights = out_t.chunks_exact_mut(8);
                for out8 in &mut eights {
                    // SAFETY: j < rows.end and t + 7 < m, checked against the slice sizes
                    // above; t is a multiple of 4 (t0 and t_block are).
                    out8.copy_from_slice(unsafe { &kernel.dot8(j, t) });
                    t += 8;
                }
                out_t = eights.into_remainder();
            }
            let mut groups = out_t.chunks_exact_mut(4);
            for out4 in &mut groups {
                // SAFETY: j < rows.end and t + 3 < m, checked against the slice sizes above.
                out4.copy_from_slice(unsafe { &kernel.dot4(j, t) });
                t += 4;
            }
            // The one to three rows left share one pass over the weight row: a decode
            // step, and the batches of a token and its drafts (two to eight rows).
            // SAFETY: as above, t + rest.len() <= m.
            match groups.into_remainder() {
                [] => {}
                [o] => *o = unsafe { kernel.dot_few::<1>(j, t)[0] },
                rest @ [_, _] => rest.copy_from_slice(unsafe { &kernel.dot_few::<2>(j, t) }),
                rest => rest.copy_from_slice(unsafe { &kernel.dot_few::<3>(j, t) }),
            }
        }
        t0 = t1;
    }
}

/// One input row quantized into `dst` (the bytes of its blocks) with AVX-512, bit for bit
/// candle's `from_float`; false, writing nothing, where the CPU lacks AVX-512 or the sizes
/// do not fit (the caller then runs candle's).
pub(super) fn quantize_row(kind: super::InputKind, src: &[f32], dst: &mut [u8]) -> bool {
    let (block, bytes) = match kind {
        super::InputKind::Q8_0 => (QK8_0, Q8_0_BYTES),
        super::InputKind::Q8K => (256, Q8K_BYTES),
    };
    if !Isa::Vnni.available() || !src.len().is_multiple_of(block) || dst.len() != src.len() / block * bytes {
        return false;
    }
    // SAFETY: AVX-512 F, BW and VL are available (`Isa::Vnni`), and `dst` holds one block per
    // block of `src`.
    unsafe {
        match kind {
            super::InputKind::Q8_0 => quantize::q8_0_row(src, dst.as_mut_ptr()),
            super::InputKind::Q8K => quantize::q8k_row(src, dst.as_mut_ptr()),
        }
    }
    true
}

/// What one call of a kernel needs, sizes checked by [`dot_rows`].
struct Kernel<'a> {
    isa: Isa,
    ty: WeightType,
    w: &'a [u8],
    nb: usize,
    row_bytes: usize,
    x: Input<'a>,
}

impl Kernel<'_> {
    /// Weight row `j` with input rows `t..t + N`, `N` from one to three (a decode step,
    /// or what a batch leaves after its groups): the weights are unpacked once for all
    /// `N`, and each row's product is the same bits as alone.
    ///
    /// # Safety
    /// As [`Self::dot`].
    #[inline]
    unsafe fn dot_few<const N: usize>(&self, j: usize, t: usize) -> [f32; N] {
        let Input::Q8_0(x) = self.x else { return self.dot::<N>(j, t) };
        let w = self.w.as_ptr().add(j * self.row_bytes);
        let nb = self.nb;
        let rows = Rows32::<N>::at(x, nb, t);
        match (self.isa, self.ty) {
            (Isa::Avx2, WeightType::Q5_0) => avx2::row32xn::<true, N>(w, nb, rows),
            (Isa::Vnni | Isa::Amx, WeightType::Q5_0) => vnni::row32xn::<true, N>(w, nb, rows),
            (Isa::Avx2, _) => avx2::row32xn::<false, N>(w, nb, rows),
            (Isa::Vnni | Isa::Amx, _) => vnni::row32xn::<false, N>(w, nb, rows),
        }
    }

    /// Weight row `j` with input rows `t..t + 4`, `t` a multiple of 4.
    ///
    /// # Safety
    /// As [`Self::dot`].
    #[inline]
    unsafe fn dot4(&self, j: usize, t: usize) -> [f32; 4] {
        let x = match self.x {
            Input::Q8K(x) if self.isa >= Isa::Vnni => return self.grouped::<1>(j, t, x)[0],
            Input::Q8K(_) => return self.dot::<4>(j, t),
            Input::Q8_0(x) => x,
        };
        let w = self.w.as_ptr().add(j * self.row_bytes);
        let nb = self.nb;
        let rows = Rows32::<4>::at(x, nb, t);
        // Group t / 4 of the interleaved copies starts at 4 * nb * (t / 4) = nb * t.
        let (scales4, sums4) = (x.scales4.as_ptr().add(nb * t), x.sums4.as_ptr().add(nb * t));
        match (self.isa, self.ty) {
            (Isa::Avx2, WeightType::Q5_0) => avx2::row32x4::<true>(w, nb, rows, scales4, sums4),
            (Isa::Vnni | Isa::Amx, WeightType::Q5_0) => vnni::row32x4::<true>(w, nb, rows, scales4, sums4),
            (Isa::Avx2, _) => avx2::row32x4::<false>(w, nb, rows, scales4, sums4),
            (Isa::Vnni | Isa::Amx, _) => vnni::row32x4::<false>(w, nb, rows, scales4, sums4),
        }
    }

    /// Weight row `j` with input rows `t..t + 8`, `t` a multiple of 8 (VNNI only).
    ///
    /// # Safety
    /// As [`Self::grouped`].
    #[inline]
    unsafe fn dot8(&self, j: usize, t: usize) -> [f32; 8] {
        let x = match self.x {
            Input::Q8K(x) => {
                let [a, b] = self.grouped::<2>(j, t, x);
                return std::array::from_fn(|i| if i < 4 { a[i] } else { b[i - 4] });
            }
            Input::Q8_0(x) => x,
        };
        let w = self.w.as_ptr().add(j * self.row_bytes);
        let nb = self.nb;
        let rows = |t: usize| Rows32::<4>::at(x, nb, t);
        // Group t / 8 starts at 8 * nb * (t / 8) = nb * t pieces, scales and sums.
        let rows8 = wide::Rows8 { values: x.values8.as_ptr().add(nb * t * 8) as *const i8, scales: x.scales8.as_ptr().add(nb * t), sums: x.sums8.as_ptr().add(nb * t) };
        let [a, b] = if self.ty == WeightType::Q5_0 {
            wide::row32x8::<true>(w, nb, rows8, [rows(t), rows(t + 4)])
        } else {
            wide::row32x8::<false>(w, nb, rows8, [rows(t), rows(t + 4)])
        };
        std::array::from_fn(|i| if i < 4 { a[i] } else { b[i - 4] })
    }

    /// Weight row `j` (Q4_K or Q6_K) with the `G` groups of four input rows from `t`.
    ///
    /// # Safety
    /// Row `j` must lie in `w`, rows `t..t + 4 G` in the input, `t` be a multiple of 4, the
    /// interleaved arrays hold those groups, and VNNI be available.
    #[inline]
    unsafe fn grouped<const G: usize>(&self, j: usize, t: usize, x: Q8KRows) -> [[f32; 4]; G] {
        let w = self.w.as_ptr().add(j * self.row_bytes);
        let nb = self.nb;
        // Group t / 4 starts at 4 * nb * (t / 4) = nb * t values of one row each.
        let groups = wide::Groups {
            d4: x.d4.as_ptr().add(nb * t),
            sums4: x.sums4.as_ptr().add(8 * nb * t),
            bsums4: x.bsums4.as_ptr().add(16 * nb * t),
            pairs: x.pairs.as_ptr().add(256 * nb * t),
        };
        match self.ty {
            WeightType::Q6K => wide::q6k_groups::<G>(w, nb, groups),
            _ => wide::q4k_groups::<G>(w, nb, groups),
        }
    }

    /// Weight row `j` with input rows `t..t + N`.
    ///
    /// # Safety
    /// Row `j` must lie in `w`, rows `t..t + N` in the input, and `isa` be available.
    #[inline]
    unsafe fn dot<const N: usize>(&self, j: usize, t: usize) -> [f32; N] {
        let w = self.w.as_ptr().add(j * self.row_bytes);
        let nb = self.nb;
        match self.x {
            Input::Q8_0(x) => {
                let rows = Rows32::<N>::at(x, nb, t);
                match (self.isa, self.ty) {
                    (Isa::Avx2, WeightType::Q5_0) => avx2::row32::<true, N>(w, nb, rows),
                    (Isa::Vnni | Isa::Amx, WeightType::Q5_0) => vnni::row32::<true, N>(w, nb, rows),
                    (Isa::Avx2, _) => avx2::row32::<false, N>(w, nb, rows),
                    (Isa::Vnni | Isa::Amx, _) => vnni::row32::<false, N>(w, nb, rows),
                }
            }
            Input::Q8K(x) => {
                let xb: [*const u8; N] = std::array::from_fn(|i| x.blocks.as_ptr().add((t + i) * nb * Q8K_BYTES));
                match (self.isa, self.ty) {
                    (Isa::Avx2, WeightType::Q6K) => avx2::q6k::<N>(w, nb, xb),
                    (Isa::Vnni | Isa::Amx, WeightType::Q6K) => wide::q6k::<N>(w, nb, xb),
                    (Isa::Avx2, _) => avx2::q4k::<N>(w, nb, xb),
                    (Isa::Vnni | Isa::Amx, _) => wide::q4k::<N>(w, nb, xb),
                }
            }
        }
    }
}

/// The operations where the instruction sets differ, AVX2 versions.
mod avx2_ops {
    use std::arch::x86_64::*;

    /// `acc` + the products of u8 `u` and i8 `s`, four adjacent ones summed per i32 lane.
    /// Callers keep `u * s` pair sums within i16 (`u <= 127` with `|s| <= 127`).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn dpbusd(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)))
    }

    /// `acc` + the products of i16 `a` and `b`, adjacent pairs summed per i32 lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn dpwssd(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
    }

    /// `nibbles` (32 values < 16) with 16 added where bit i of `qh` is set (Q5_0's fifth bit).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn add_high_bits(nibbles: __m256i, qh: u32) -> __m256i {
        // Byte i gets byte i / 8 of qh, then is all ones where its own bit is set.
        let spread = _mm256_shuffle_epi8(
            _mm256_set1_epi32(qh as i32),
            _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0),
        );
        let bits = _mm256_cmpeq_epi8(_mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe)), _mm256_set1_epi64x(-1));
        _mm256_or_si256(nibbles, _mm256_and_si256(bits, _mm256_set1_epi8(0x10)))
    }

    /// Q8_0 weights as `|q|`: with `maddubs` an unsigned 128 + x would overflow its i16
    /// pair sums, so the sign moves to the input instead ([`q8_0_input`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn q8_0_unsigned(q: __m256i) -> __m256i {
        _mm256_sign_epi8(q, q)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn q8_0_input(x: __m256i, q: __m256i) -> __m256i {
        _mm256_sign_epi8(x, q)
    }

    /// No offset: the sign trick keeps the products exact.
    pub(super) const Q8_0_OFFSET_SHIFT: Option<i32> = None;
}

/// The operations where the instruction sets differ, AVX-512 (VNNI, BW, VL) versions.
mod vnni_ops {
    use std::arch::x86_64::*;

    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vnni")]
    pub(super) fn dpbusd(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        _mm256_dpbusd_epi32(acc, u, s)
    }

    /// One instruction for madd + add: the K-quant kernels' per-sub-block scaling.
    #[inline]
    #[allow(dead_code)] // used by the VNNI `q4k` / `q6k`, which only the tests run now
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vnni")]
    pub(super) fn dpwssd(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_dpwssd_epi32(acc, a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl")]
    pub(super) fn add_high_bits(nibbles: __m256i, qh: u32) -> __m256i {
        // qh is the byte mask itself.
        _mm256_mask_add_epi8(nibbles, qh, nibbles, _mm256_set1_epi8(0x10))
    }

    /// Q8_0 weights as `q + 128` (unsigned); `vpdpbusd` sums in i32, so nothing overflows,
    /// and `128 * sum(x)` is taken out afterwards.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn q8_0_unsigned(q: __m256i) -> __m256i {
        _mm256_xor_si256(q, _mm256_set1_epi8(0x80u8 as i8))
    }

    #[inline]
    pub(super) fn q8_0_input(x: __m256i, _q: __m256i) -> __m256i {
        x
    }

    pub(super) const Q8_0_OFFSET_SHIFT: Option<i32> = Some(7);
}

macro_rules! isa_kernels {
    ($isa:ident, $ops:ident, $features:literal) => {
        mod $isa {
            use std::arch::x86_64::*;

            use super::$ops::{add_high_bits, dpbusd, dpwssd, q8_0_input, q8_0_unsigned, Q8_0_OFFSET_SHIFT};
            use super::{Rows32, Q4K_BYTES, Q5_0_BYTES, Q6K_BYTES, Q8_0_BYTES, QK8_0};

            #[inline]
            #[target_feature(enable = $features)]
            pub(super) fn hsum(v: __m256) -> f32 {
                let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
            }

            #[inline]
            #[target_feature(enable = $features)]
            pub(super) fn hsum128(s: __m128) -> f32 {
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
            }

            /// The f16 at `p` (unaligned) as f32.
            #[inline]
            #[target_feature(enable = $features)]
            pub(super) unsafe fn f16_at(p: *const u8) -> f32 {
                let bits = std::ptr::read_unaligned(p as *const u16);
                _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits as i32)))
            }

            #[inline]
            #[target_feature(enable = $features)]
            pub(super) unsafe fn load(p: *const u8) -> __m256i {
                _mm256_loadu_si256(p as *const __m256i)
            }

            /// Q8_0 (`Q5 = false`) or Q5_0 block `b` of weight row `w`: its scale, its values
            /// as unsigned bytes for `dpbusd`, and the raw Q8_0 values (for the sign trick).
            #[inline]
            #[target_feature(enable = $features)]
            pub(super) unsafe fn block32<const Q5: bool>(w: *const u8, b: usize) -> (f32, __m256i, __m256i) {
                if Q5 {
                    let blk = w.add(b * Q5_0_BYTES);
                    let qh = std::ptr::read_unaligned(blk.add(2) as *const u32);
                    let qs = _mm_loadu_si128(blk.add(6) as *const __m128i);
                    // Values 0..16 are the low nibbles, 16..32 the high ones.
                    let nibbles = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(qs, 4), qs), _mm256_set1_epi8(0x0F));
                    let q = add_high_bits(nibbles, qh);
                    (f16_at(blk), q, q)
                } else {
                    let blk = w.add(b * Q8_0_BYTES);
                    let q = load(blk.add(2));
                    (f16_at(blk), q8_0_unsigned(q), q)
                }
            }

            /// Input values `x` ready for `dpbusd` with [`block32`]'s unsigned weights.
            #[inline]
            #[target_feature(enable = $features)]
            fn input32<const Q5: bool>(x: __m256i, raw: __m256i) -> __m256i {
                if Q5 {
                    x
                } else {
                    q8_0_input(x, raw)
                }
            }

            /// log2 of what each input block sum is multiplied by and subtracted: the offset
            /// of the unsigned weights (Q5_0: 16; Q8_0: [`Q8_0_OFFSET_SHIFT`]).
            pub(super) const fn offset_shift<const Q5: bool>() -> Option<i32> {
                if Q5 {
                    Some(4)
                } else {
                    Q8_0_OFFSET_SHIFT
                }
            }

            /// Adds block `b` of weight row `w` times the `N` input rows to `acc`.
            #[inline]
            #[target_feature(enable = $features)]
            pub(super) unsafe fn add_block32<const Q5: bool, const N: usize>(w: *const u8, b: usize, x: &Rows32<N>, acc: &mut [__m256; N]) {
                let (dw, q, raw) = block32::<Q5>(w, b);
                for t in 0..N {
                    let offset = match offset_shift::<Q5>() {
                        Some(shift) => _mm256_zextsi128_si256(_mm_cvtsi32_si128(-(*x.sums[t].add(b) << shift))),
                        None => _mm256_setzero_si256(),
                    };
                    let xq = input32::<Q5>(load(x.values[t].add(b * QK8_0) as *const u8), raw);
                    let sumi = dpbusd(offset, q, xq);
                    let d = _mm256_set1_ps(dw * *x.scales[t].add(b));
                    acc[t] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sumi), acc[t]);
                }
            }

            /// Q8_0 / Q5_0 weight row `w` (`nb` blocks) with `N` input rows.
            ///
            /// # Safety
            /// The features are available; `w` has `nb` blocks, and each input row `nb * 32`
            /// values, `nb` scales and `nb` sums.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn row32<const Q5: bool, const N: usize>(w: *const u8, nb: usize, x: Rows32<N>) -> [f32; N] {
                // Two sets of accumulators: one FMA chain per block would wait on its latency.
                let mut acc0 = [_mm256_setzero_ps(); N];
                let mut acc1 = [_mm256_setzero_ps(); N];
                let mut b = 0;
                while b + 2 <= nb {
                    add_block32::<Q5, N>(w, b, &x, &mut acc0);
                    add_block32::<Q5, N>(w, b + 1, &x, &mut acc1);
                    b += 2;
                }
                if b < nb {
                    add_block32::<Q5, N>(w, b, &x, &mut acc0);
                }
                std::array::from_fn(|t| hsum(_mm256_add_ps(acc0[t], acc1[t])))
            }

            /// The f16 scales of blocks `b..b + 8` of weight row `w` as f32.
            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn eight_scales<const Q5: bool>(w: *const u8, b: usize) -> __m256 {
                let size = if Q5 { Q5_0_BYTES } else { Q8_0_BYTES };
                let d = |i: usize| std::ptr::read_unaligned(w.add((b + i) * size) as *const i16);
                _mm256_cvtph_ps(_mm_set_epi16(d(7), d(6), d(5), d(4), d(3), d(2), d(1), d(0)))
            }

            /// [`row32`] for `N` input rows (one to three: a decode step, or the rows a
            /// batch leaves after its groups of four and eight), bit for bit what [`row32x4`]
            /// (and so every batched kernel) gives each row: a row's product must not depend
            /// on how many rows were read with it, or a prompt read in pieces (a kept prefix,
            /// the prompt cache, token by token) gives other logits than read at once. Each
            /// weight block is unpacked once for the `N` rows. Per row, the integer sums of
            /// eight blocks go into one vector (lane i: block b + i), scaled with one multiply;
            /// the products are then added as [`row32x4`] adds them, the even blocks' and the
            /// odd blocks' in two chains (lanes 0 and 1 of `acc`), the odd block left at the
            /// end through [`add_block32`].
            ///
            /// # Safety
            /// As [`row32`].
            #[target_feature(enable = $features)]
            pub(super) unsafe fn row32xn<const Q5: bool, const N: usize>(w: *const u8, nb: usize, x: Rows32<N>) -> [f32; N] {
                let mut acc = [_mm_setzero_ps(); N];
                let mut b = 0;
                let block_bytes = if Q5 { Q5_0_BYTES } else { Q8_0_BYTES };
                let offsets = |sums: __m256i| match offset_shift::<Q5>() {
                    Some(shift) => _mm256_sll_epi32(sums, _mm_cvtsi32_si128(shift)),
                    None => _mm256_setzero_si256(),
                };
                while b + 8 <= nb {
                    if N == 1 {
                        super::prefetch_ahead(w.add(b * block_bytes), 8 * block_bytes);
                    }
                    let blocks: [(__m256i, __m256i); 8] = std::array::from_fn(|i| {
                        let (_, q, raw) = block32::<Q5>(w, b + i);
                        (q, raw)
                    });
                    let scales = eight_scales::<Q5>(w, b);
                    for t in 0..N {
                        let p: [__m256i; 8] = std::array::from_fn(|i| {
                            let (q, raw) = blocks[i];
                            let xq = input32::<Q5>(load(x.values[t].add((b + i) * QK8_0) as *const u8), raw);
                            dpbusd(_mm256_setzero_si256(), q, xq)
                        });
                        let h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
                        let h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
                        let sumi = _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
                        let sumi = _mm256_sub_epi32(sumi, offsets(_mm256_loadu_si256(x.sums[t].add(b) as *const __m256i)));
                        let d = _mm256_mul_ps(scales, _mm256_loadu_ps(x.scales[t].add(b)));
                        let f = _mm256_cvtepi32_ps(sumi);
                        let (dl, dh) = (_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1));
                        let (fl, fh) = (_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1));
                        // Lanes 0 and 1 of each step: blocks b + 2k and b + 2k + 1.
                        let a = _mm_fmadd_ps(dl, fl, acc[t]);
                        let a = _mm_fmadd_ps(_mm_movehl_ps(dl, dl), _mm_movehl_ps(fl, fl), a);
                        let a = _mm_fmadd_ps(dh, fh, a);
                        acc[t] = _mm_fmadd_ps(_mm_movehl_ps(dh, dh), _mm_movehl_ps(fh, fh), a);
                    }
                    b += 8;
                }
                while b + 2 <= nb {
                    let blocks: [(__m256i, __m256i); 2] = std::array::from_fn(|i| {
                        let (_, q, raw) = block32::<Q5>(w, b + i);
                        (q, raw)
                    });
                    let scales = _mm_set_ps(0.0, 0.0, f16_at(w.add((b + 1) * block_bytes)), f16_at(w.add(b * block_bytes)));
                    for t in 0..N {
                        let p: [__m256i; 2] = std::array::from_fn(|i| {
                            let (q, raw) = blocks[i];
                            let xq = input32::<Q5>(load(x.values[t].add((b + i) * QK8_0) as *const u8), raw);
                            dpbusd(_mm256_setzero_si256(), q, xq)
                        });
                        // Lane 0: block b's sum, lane 1: block b + 1's (the other lanes unused).
                        let h = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_setzero_si256());
                        let sumi = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
                        let sums = _mm256_zextsi128_si256(_mm_loadl_epi64(x.sums[t].add(b) as *const __m128i));
                        let sumi = _mm_sub_epi32(sumi, _mm256_castsi256_si128(offsets(sums)));
                        let d = _mm_mul_ps(scales, _mm_castsi128_ps(_mm_loadl_epi64(x.scales[t].add(b) as *const __m128i)));
                        acc[t] = _mm_fmadd_ps(d, _mm_cvtepi32_ps(sumi), acc[t]);
                    }
                    b += 2;
                }
                let mut tail = [_mm256_setzero_ps(); N];
                if b < nb {
                    add_block32::<Q5, N>(w, b, &x, &mut tail);
                }
                std::array::from_fn(|t| {
                    let pair = _mm_add_ss(acc[t], _mm_movehdup_ps(acc[t]));
                    _mm_cvtss_f32(pair) + hsum(tail[t])
                })
            }

            /// Integer sums of block pair `(w, x)` for four input rows, one per lane of each
            /// 128-bit half: lane t of the low half plus lane t of the high half is row t's.
            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn four_sums<const Q5: bool>(q: __m256i, raw: __m256i, x: &Rows32<4>, b: usize) -> __m256i {
                let p: [__m256i; 4] = std::array::from_fn(|t| {
                    let xq = input32::<Q5>(load(x.values[t].add(b * QK8_0) as *const u8), raw);
                    dpbusd(_mm256_setzero_si256(), q, xq)
                });
                _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]))
            }

            /// [`row32`] for four input rows whose scales and sums are also stored
            /// interleaved (`scales4[4 * b + t]`): two blocks' integer sums of all four rows
            /// are combined into one vector, scaled with one multiply and added with one FMA.
            ///
            /// # Safety
            /// As [`row32`], and `scales4` / `sums4` have `4 * nb` values.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn row32x4<const Q5: bool>(w: *const u8, nb: usize, x: Rows32<4>, scales4: *const f32, sums4: *const i32) -> [f32; 4] {
                let mut acc = _mm256_setzero_ps();
                let mut b = 0;
                while b + 2 <= nb {
                    let (d0, q0, raw0) = block32::<Q5>(w, b);
                    let (d1, q1, raw1) = block32::<Q5>(w, b + 1);
                    let s0 = four_sums::<Q5>(q0, raw0, &x, b);
                    let s1 = four_sums::<Q5>(q1, raw1, &x, b + 1);
                    // Lanes 0..4: block b, rows 0..4; lanes 4..8: block b + 1.
                    let mut sumi = _mm256_add_epi32(_mm256_permute2x128_si256(s0, s1, 0x20), _mm256_permute2x128_si256(s0, s1, 0x31));
                    if let Some(shift) = offset_shift::<Q5>() {
                        let sums = _mm256_loadu_si256(sums4.add(4 * b) as *const __m256i);
                        sumi = _mm256_sub_epi32(sumi, _mm256_sll_epi32(sums, _mm_cvtsi32_si128(shift)));
                    }
                    let dw = _mm256_set_m128(_mm_set1_ps(d1), _mm_set1_ps(d0));
                    let d = _mm256_mul_ps(dw, _mm256_loadu_ps(scales4.add(4 * b)));
                    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sumi), acc);
                    b += 2;
                }
                let mut tail = [_mm256_setzero_ps(); 4];
                if b < nb {
                    add_block32::<Q5, 4>(w, b, &x, &mut tail);
                }
                let halves = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
                let mut out = [0f32; 4];
                _mm_storeu_ps(out.as_mut_ptr(), halves);
                std::array::from_fn(|t| out[t] + hsum(tail[t]))
            }

            /// Q4_K's twelve packed scale bytes as (8 scales, 8 mins), 6 bits each
            /// (ggml's `get_scale_min_k4`, four at a time).
            #[inline]
            pub(super) unsafe fn q4k_scales_mins(p: *const u8) -> [u32; 4] {
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

            /// A Q4_K block's scale, min scale, the eight sub-block scales as i16 (in both
            /// 128-bit halves) and the eight mins as i16.
            #[inline]
            #[target_feature(enable = $features)]
            pub(super) unsafe fn q4k_header(blk: *const u8) -> (f32, f32, __m256i, __m128i) {
                let sm = q4k_scales_mins(blk.add(4));
                let sc = _mm256_cvtepu8_epi16(_mm_set_epi32(sm[3] as i32, sm[2] as i32, sm[1] as i32, sm[0] as i32));
                let mins = _mm256_extracti128_si256(sc, 1);
                (f16_at(blk), f16_at(blk.add(2)), _mm256_permute2x128_si256(sc, sc, 0x00), mins)
            }

            /// Q4_K weight row `w` (`nb` super-blocks) with `N` Q8_K input rows `xb`.
            ///
            /// # Safety
            /// The features are available; `w` has `nb` blocks and each `xb[t]` too.
            #[target_feature(enable = $features)]
            #[allow(dead_code)] // the VNNI instance: replaced by `wide::q4k`, its reference in tests
            pub(super) unsafe fn q4k<const N: usize>(w: *const u8, nb: usize, xb: [*const u8; N]) -> [f32; N] {
                let m4 = _mm256_set1_epi8(0x0F);
                let mut acc = [_mm256_setzero_ps(); N];
                let mut acc_m = [_mm_setzero_ps(); N];
                for b in 0..nb {
                    let blk = w.add(b * Q4K_BYTES);
                    if N == 1 {
                        super::prefetch_ahead(blk, Q4K_BYTES);
                    }
                    let (d, dmin, sc, mins) = q4k_header(blk);
                    // Sub-block k (32 values) with its scale in every i16 lane.
                    let mut q = [_mm256_setzero_si256(); 8];
                    let mut s = [_mm256_setzero_si256(); 8];
                    for j in 0..4 {
                        let bits = load(blk.add(16 + 32 * j));
                        q[2 * j] = _mm256_and_si256(bits, m4);
                        q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
                    }
                    for (k, s) in s.iter_mut().enumerate() {
                        *s = _mm256_shuffle_epi8(sc, _mm256_set1_epi16((2 * k as i16) | ((2 * k as i16 + 1) << 8)));
                    }
                    for t in 0..N {
                        let x = xb[t].add(b * super::Q8K_BYTES);
                        let dx = std::ptr::read_unaligned(x as *const f32);
                        let mut sumi = _mm256_setzero_si256();
                        for k in 0..8 {
                            let p = _mm256_maddubs_epi16(q[k], load(x.add(4 + 32 * k)));
                            sumi = dpwssd(sumi, s[k], p);
                        }
                        acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * d), _mm256_cvtepi32_ps(sumi), acc[t]);
                        // Mins times the sums of each 32 inputs (pairs of Q8_K's 16-value sums).
                        let bsums = load(x.add(260));
                        let q8s = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
                        let prod = _mm_madd_epi16(mins, q8s);
                        acc_m[t] = _mm_fmadd_ps(_mm_set1_ps(-dx * dmin), _mm_cvtepi32_ps(prod), acc_m[t]);
                    }
                }
                std::array::from_fn(|t| hsum(acc[t]) + hsum128(acc_m[t]))
            }

            /// Q6_K's two high bits at `SHIFT` of each byte of `hb`, moved to bits 4 and 5.
            #[inline]
            #[target_feature(enable = $features)]
            fn high_bits<const SHIFT: i32>(hb: __m256i, m2: __m256i) -> __m256i {
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16::<SHIFT>(hb), m2), 4)
            }

            /// Q6_K weight row `w` (`nb` super-blocks) with `N` Q8_K input rows `xb`. Values
            /// are used as unsigned `0..64`; the `-32` offset is `-32 * scale * bsum` per 16
            /// values, from the input's block sums.
            ///
            /// # Safety
            /// As [`q4k`].
            #[target_feature(enable = $features)]
            #[allow(dead_code)] // the VNNI instance: replaced by `wide::q6k`, its reference in tests
            pub(super) unsafe fn q6k<const N: usize>(w: *const u8, nb: usize, xb: [*const u8; N]) -> [f32; N] {
                let m4 = _mm256_set1_epi8(0x0F);
                let m2 = _mm256_set1_epi8(3);
                let mut acc = [_mm256_setzero_ps(); N];
                for b in 0..nb {
                    let blk = w.add(b * Q6K_BYTES);
                    if N == 1 {
                        super::prefetch_ahead(blk, Q6K_BYTES);
                    }
                    let d = f16_at(blk.add(208));
                    let scales = _mm_loadu_si128(blk.add(192) as *const __m128i);
                    let mut q = [_mm256_setzero_si256(); 8];
                    let mut s = [_mm256_setzero_si256(); 8];
                    for h in 0..2 {
                        let l0 = load(blk.add(64 * h));
                        let l1 = load(blk.add(64 * h + 32));
                        let hb = load(blk.add(128 + 32 * h));
                        q[4 * h] = _mm256_or_si256(_mm256_and_si256(l0, m4), high_bits::<0>(hb, m2));
                        q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(l1, m4), high_bits::<2>(hb, m2));
                        q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), high_bits::<4>(hb, m2));
                        q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), high_bits::<6>(hb, m2));
                    }
                    for (k, s) in s.iter_mut().enumerate() {
                        // Scale 2k for the first 16 values of sub-block k, 2k + 1 for the rest.
                        let pick = _mm_set_epi64x(0x0101010101010101 * (2 * k as i64 + 1), 0x0101010101010101 * (2 * k as i64));
                        *s = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, pick));
                    }
                    let scales16 = _mm256_cvtepi8_epi16(scales);
                    for t in 0..N {
                        let x = xb[t].add(b * super::Q8K_BYTES);
                        let dx = std::ptr::read_unaligned(x as *const f32);
                        let offset = _mm256_madd_epi16(scales16, load(x.add(260)));
                        let mut sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
                        for k in 0..8 {
                            let p = _mm256_maddubs_epi16(q[k], load(x.add(4 + 32 * k)));
                            sumi = dpwssd(sumi, s[k], p);
                        }
                        acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * d), _mm256_cvtepi32_ps(sumi), acc[t]);
                    }
                }
                std::array::from_fn(|t| hsum(acc[t]))
            }
        }
    };
}

isa_kernels!(avx2, avx2_ops, "avx2,fma,f16c");
isa_kernels!(vnni, vnni_ops, "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni");

/// The K-quant kernels of the VNNI set on 512-bit registers, two sub-blocks per register:
/// half the instructions (Zen4 runs a 512-bit operation as two 256-bit halves, so the gain
/// is in issuing them). Every integer lane ends up holding exactly what the 256-bit
/// kernel's lane holds (the two halves are added before the float work), and the float work
/// is the same, so results are bit-identical to `vnni::q4k` / `vnni::q6k`: greedy outputs
/// do not move.
mod wide {
    use std::arch::x86_64::*;

    use super::vnni::{add_block32, block32, f16_at, hsum, hsum128, load, offset_shift, q4k_header};
    use super::{Rows32, Q4K_BYTES, Q6K_BYTES, Q8K_BYTES};

    /// A group of eight Q8_0 input rows in the transposed layout of `QuantInput`, from its
    /// first block.
    pub(super) struct Rows8 {
        pub values: *const i8,
        pub scales: *const f32,
        pub sums: *const i32,
    }

    /// As `vnni::row32x4` on eight input rows, bit for bit: one lane per input row, so
    /// each block's eight pieces of four weight values are broadcast to every lane and
    /// multiplied with one load of the eight rows' pieces, and the block sums come out of
    /// `vpdpbusd` whole (the four-row kernel gathers them with horizontal adds). Even and odd
    /// blocks go to separate accumulators, as the four-row kernel's two lane halves; a last
    /// odd block is the four-row kernel's own.
    ///
    /// # Safety
    /// As `vnni::row32x4` for both groups of four (`x`), and `rows8` holds the eight rows'
    /// `nb` blocks.
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn row32x8<const Q5: bool>(w: *const u8, nb: usize, rows8: Rows8, x: [Rows32<4>; 2]) -> [[f32; 4]; 2] {
        let mut acc = [_mm256_setzero_ps(); 2];
        let pairs = nb / 2 * 2;
        for b in 0..pairs {
            let (dw, q, _) = block32::<Q5>(w, b);
            let mut sumi = _mm256_setzero_si256();
            if let Some(shift) = offset_shift::<Q5>() {
                let sums = _mm256_loadu_si256(rows8.sums.add(8 * b) as *const __m256i);
                sumi = _mm256_sub_epi32(sumi, _mm256_sll_epi32(sums, _mm_cvtsi32_si128(shift)));
            }
            let xb = rows8.values.add(256 * b) as *const u8;
            for k in 0..8 {
                let piece = _mm256_permutevar8x32_epi32(q, _mm256_set1_epi32(k as i32));
                sumi = _mm256_dpbusd_epi32(sumi, piece, load(xb.add(32 * k)));
            }
            let d = _mm256_mul_ps(_mm256_set1_ps(dw), _mm256_loadu_ps(rows8.scales.add(8 * b)));
            acc[b & 1] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sumi), acc[b & 1]);
        }
        let mut even = [0f32; 8];
        let mut odd = [0f32; 8];
        _mm256_storeu_ps(even.as_mut_ptr(), acc[0]);
        _mm256_storeu_ps(odd.as_mut_ptr(), acc[1]);
        let mut out = [[0f32; 4]; 2];
        for (g, x) in x.iter().enumerate() {
            let mut tail = [_mm256_setzero_ps(); 4];
            if pairs < nb {
                add_block32::<Q5, 4>(w, pairs, x, &mut tail);
            }
            for t in 0..4 {
                out[g][t] = (even[4 * g + t] + odd[4 * g + t]) + hsum(tail[t]);
            }
        }
        out
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    fn join(lo: __m256i, hi: __m256i) -> __m512i {
        _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1)
    }

    /// Sum over the four sub-block pairs of `scale * maddubs(q, x)`, as the 256-bit
    /// kernels' eight i32 lanes (the pair's two halves added).
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    unsafe fn scaled_sums(q: &[__m512i; 4], s: &[__m512i; 4], x: *const u8, init: __m256i) -> __m256i {
        let sumi = unpaired_sums(q, s, x, _mm512_zextsi256_si512(init));
        _mm256_add_epi32(_mm512_castsi512_si256(sumi), _mm512_extracti64x4_epi64(sumi, 1))
    }

    /// [`scaled_sums`] before its halves are added.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    unsafe fn unpaired_sums(q: &[__m512i; 4], s: &[__m512i; 4], x: *const u8, init: __m512i) -> __m512i {
        let mut sumi = init;
        for j in 0..4 {
            let xv = _mm512_loadu_si512(x.add(4 + 64 * j) as *const __m512i);
            sumi = _mm512_dpwssd_epi32(sumi, s[j], _mm512_maddubs_epi16(q[j], xv));
        }
        sumi
    }

    /// The interleaved per-group values of [`super::Q8KRows`], from the first group of a call.
    #[derive(Clone, Copy)]
    pub(super) struct Groups {
        pub d4: *const f32,
        pub sums4: *const i16,
        pub bsums4: *const i16,
        /// Row-major, `256 * nb` bytes a row.
        pub pairs: *const u8,
    }

    /// Integer sums of one input row's Q4_K or Q6_K super-block in [`super::Q8KRows::pairs`]
    /// order with weights `qp` in the same order: `vpdpbusd` sums four products per i32
    /// (|sum| <= 4 * 63 * 128 < 2^15, so i16 holds it), `vpackssdw` puts the same four values of sub-blocks 2r and
    /// 2r + 1 side by side, and one `vpdpwssd` scales both: six multiplies per row and
    /// block instead of eight. Lanes 4L and 4L + 1 end up holding lane 2L and 2L + 1 of
    /// the 256-bit kernel's eight (exactly: the integers are the same).
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    unsafe fn pair_packed_sums(qp: &[__m512i; 4], scales: &[__m512i; 2], x: *const u8) -> __m512i {
        let mut d = [_mm512_setzero_si512(); 4];
        for (r, d) in d.iter_mut().enumerate() {
            *d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), qp[r], _mm512_loadu_si512(x.add(64 * r) as *const __m512i));
        }
        let sumi = _mm512_dpwssd_epi32(_mm512_setzero_si512(), scales[0], _mm512_packs_epi32(d[0], d[1]));
        let sumi = _mm512_dpwssd_epi32(sumi, scales[1], _mm512_packs_epi32(d[2], d[3]));
        _mm512_add_epi32(sumi, _mm512_shuffle_epi32::<0b01_00_11_10>(sumi))
    }

    /// [`pair_packed_sums`] of two input rows as eight lanes each (`[row 0 | row 1]`, the
    /// 256-bit kernel's lanes), plus `init`.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    unsafe fn two_packed_sums(qp: &[__m512i; 4], scales: &[__m512i; 2], x0: *const u8, x1: *const u8, init: __m512i) -> __m512i {
        let (a, b) = (pair_packed_sums(qp, scales, x0), pair_packed_sums(qp, scales, x1));
        // Lanes 0, 1, 4, 5, 8, 9, 12, 13 of each row: its eight sums in order.
        _mm512_add_epi32(_mm512_permutex2var_epi64(a, _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), b), init)
    }

    /// The index that puts the 4-byte pieces of a register's two 32-byte halves (sub-blocks
    /// 2j and 2j + 1) alternating, the order of [`super::Q8KRows::pairs`].
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    fn alternate_pieces() -> __m512i {
        _mm512_set_epi32(15, 7, 14, 6, 13, 5, 12, 4, 11, 3, 10, 2, 9, 1, 8, 0)
    }

    /// Lane `i` of `v` in lanes `0..8`, lane `i + 1` in `8..16`.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    fn spread_pair(v: __m128, i: i32) -> __m512 {
        let idx = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(i)), _mm256_set1_epi32(i + 1), 1);
        _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(v))
    }

    /// Lane `i` of `v` in lanes `4 i..4 i + 4`.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    fn spread_quad(v: __m128) -> __m512 {
        let idx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
        _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(v))
    }

    /// Each input row's 256-bit float sums, `[[row 4 g + 2 p, row 4 g + 2 p + 1]; 2]` per group.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    fn halves(v: __m512) -> [__m256; 2] {
        [_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)))]
    }

    /// As `vnni::q4k` on `4 G` input rows, bit for bit: the same integer sums and the same
    /// float operations per lane, but two rows share each float instruction (four for the
    /// mins), and their scales and 32-value sums come precomputed per group.
    ///
    /// # Safety
    /// As [`q4k`], and `groups` holds `G` groups of `nb` blocks.
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn q4k_groups<const G: usize>(w: *const u8, nb: usize, groups: Groups) -> [[f32; 4]; G] {
        let m4 = _mm256_set1_epi8(0x0F);
        let mut acc = [[_mm512_setzero_ps(); 2]; G];
        let mut acc_m = [_mm512_setzero_ps(); G];
        for b in 0..nb {
            let blk = w.add(b * Q4K_BYTES);
            let (d, dmin, sc, mins) = q4k_header(blk);
            let mut q = [_mm512_setzero_si512(); 4];
            for j in 0..4 {
                let bits = load(blk.add(16 + 32 * j));
                q[j] = _mm512_permutexvar_epi32(alternate_pieces(), join(_mm256_and_si256(bits, m4), _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4)));
            }
            // Per 128-bit lane the scales of sub-blocks (0, 1, 0, 1, 2, 3, 2, 3) and (4, 5, 4, 5, 6, 7, 6, 7).
            let sc128 = _mm256_castsi256_si128(sc);
            let s = [
                _mm512_broadcast_i32x4(_mm_shuffle_epi8(sc128, _mm_set_epi8(7, 6, 5, 4, 7, 6, 5, 4, 3, 2, 1, 0, 3, 2, 1, 0))),
                _mm512_broadcast_i32x4(_mm_shuffle_epi8(sc128, _mm_set_epi8(15, 14, 13, 12, 15, 14, 13, 12, 11, 10, 9, 8, 11, 10, 9, 8))),
            ];
            let mins4 = _mm512_broadcast_i32x4(mins);
            for g in 0..G {
                let at = g * nb + b;
                let dx = _mm_loadu_ps(groups.d4.add(4 * at));
                // (-dx) * dmin of the one-row kernel is dx * -dmin: the same float.
                let dm = spread_quad(_mm_mul_ps(dx, _mm_set1_ps(-dmin)));
                let prod = _mm512_madd_epi16(mins4, _mm512_loadu_si512(groups.sums4.add(32 * at) as *const __m512i));
                acc_m[g] = _mm512_fmadd_ps(dm, _mm512_cvtepi32_ps(prod), acc_m[g]);
                let dd = _mm_mul_ps(dx, _mm_set1_ps(d));
                for p in 0..2 {
                    let x = |i: usize| groups.pairs.add(256 * ((4 * g + 2 * p + i) * nb + b));
                    let sumi = two_packed_sums(&q, &s, x(0), x(1), _mm512_setzero_si512());
                    acc[g][p] = _mm512_fmadd_ps(spread_pair(dd, 2 * p as i32), _mm512_cvtepi32_ps(sumi), acc[g][p]);
                }
            }
        }
        let mut out = [[0f32; 4]; G];
        for g in 0..G {
            let mut mins = [0f32; 16];
            _mm512_storeu_ps(mins.as_mut_ptr(), acc_m[g]);
            for p in 0..2 {
                for (i, half) in halves(acc[g][p]).into_iter().enumerate() {
                    let t = 2 * p + i;
                    out[g][t] = hsum(half) + hsum128(_mm_loadu_ps(mins.as_ptr().add(4 * t)));
                }
            }
        }
        out
    }

    /// As `vnni::q4k`, bit for bit.
    ///
    /// # Safety
    /// AVX-512 F/BW/VL/VNNI, AVX2, FMA and F16C are available; `w` has `nb` blocks and each
    /// `xb[t]` too.
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn q4k<const N: usize>(w: *const u8, nb: usize, xb: [*const u8; N]) -> [f32; N] {
        let m4 = _mm256_set1_epi8(0x0F);
        let mut acc = [_mm256_setzero_ps(); N];
        let mut acc_m = [_mm_setzero_ps(); N];
        for b in 0..nb {
            let blk = w.add(b * Q4K_BYTES);
            if N == 1 {
                super::prefetch_ahead(blk, Q4K_BYTES);
            }
            let (d, dmin, sc, mins) = q4k_header(blk);
            let scale = |k: usize| _mm256_shuffle_epi8(sc, _mm256_set1_epi16((2 * k as i16) | ((2 * k as i16 + 1) << 8)));
            let mut q = [_mm512_setzero_si512(); 4];
            let mut s = [_mm512_setzero_si512(); 4];
            for j in 0..4 {
                let bits = load(blk.add(16 + 32 * j));
                q[j] = join(_mm256_and_si256(bits, m4), _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4));
                s[j] = join(scale(2 * j), scale(2 * j + 1));
            }
            for t in 0..N {
                let x = xb[t].add(b * Q8K_BYTES);
                let dx = std::ptr::read_unaligned(x as *const f32);
                let sumi = scaled_sums(&q, &s, x, _mm256_setzero_si256());
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * d), _mm256_cvtepi32_ps(sumi), acc[t]);
                let bsums = load(x.add(260));
                let q8s = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
                let prod = _mm_madd_epi16(mins, q8s);
                acc_m[t] = _mm_fmadd_ps(_mm_set1_ps(-dx * dmin), _mm_cvtepi32_ps(prod), acc_m[t]);
            }
        }
        let mut out = [0f32; N];
        for t in 0..N {
            out[t] = hsum(acc[t]) + hsum128(acc_m[t]);
        }
        out
    }

    /// As `vnni::q6k`, bit for bit.
    ///
    /// # Safety
    /// As [`q4k`].
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn q6k<const N: usize>(w: *const u8, nb: usize, xb: [*const u8; N]) -> [f32; N] {
        let mut acc = [_mm256_setzero_ps(); N];
        for b in 0..nb {
            let blk = w.add(b * Q6K_BYTES);
            if N == 1 {
                super::prefetch_ahead(blk, Q6K_BYTES);
            }
            let d = f16_at(blk.add(208));
            let (q, scales) = q6k_unpack(blk);
            let scale = |k: usize| {
                let pick = _mm_set_epi64x(0x0101010101010101 * (2 * k as i64 + 1), 0x0101010101010101 * (2 * k as i64));
                _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, pick))
            };
            let mut s = [_mm512_setzero_si512(); 4];
            for (j, s) in s.iter_mut().enumerate() {
                *s = join(scale(2 * j), scale(2 * j + 1));
            }
            let scales16 = _mm256_cvtepi8_epi16(scales);
            for t in 0..N {
                let x = xb[t].add(b * Q8K_BYTES);
                let dx = std::ptr::read_unaligned(x as *const f32);
                let offset = _mm256_madd_epi16(scales16, load(x.add(260)));
                let init = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
                let sumi = scaled_sums(&q, &s, x, init);
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * d), _mm256_cvtepi32_ps(sumi), acc[t]);
            }
        }
        let mut out = [0f32; N];
        for t in 0..N {
            out[t] = hsum(acc[t]);
        }
        out
    }

    /// Which of a Q6_K block's sixteen scales each i16 of the packed pairs takes (see
    /// [`pair_packed_sums`]): per 128-bit lane L, pieces 2L and 2L + 1 of sub-blocks
    /// (0, 1, 0, 1, 2, 3, 2, 3) (then 4..8); piece i of sub-block k has scale 2k + i / 4.
    const Q6K_PAIR_SCALES: [[i16; 32]; 2] = {
        let mut idx = [[0i16; 32]; 2];
        let mut half = 0;
        while half < 2 {
            let mut n = 0;
            while n < 32 {
                let (lane, word) = (n / 8, n % 8);
                let k = 4 * half + [0, 1, 0, 1, 2, 3, 2, 3][word];
                idx[half][n] = (2 * k + lane / 2) as i16;
                n += 1;
            }
            half += 1;
        }
        idx
    };

    /// Q6_K block `blk` unpacked: values (sub-blocks 2j and 2j + 1 in register j) and the
    /// sixteen scales (i8).
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn q6k_unpack(blk: *const u8) -> ([__m512i; 4], __m128i) {
        let m4 = _mm256_set1_epi8(0x0F);
        let m2 = _mm256_set1_epi8(3);
        let high = |hb: __m256i, shift: i32| -> __m256i {
            _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(hb, _mm_cvtsi32_si128(shift)), m2), 4)
        };
        let scales = _mm_loadu_si128(blk.add(192) as *const __m128i);
        let mut q8 = [_mm256_setzero_si256(); 8];
        for h in 0..2 {
            let l0 = load(blk.add(64 * h));
            let l1 = load(blk.add(64 * h + 32));
            let hb = load(blk.add(128 + 32 * h));
            q8[4 * h] = _mm256_or_si256(_mm256_and_si256(l0, m4), high(hb, 0));
            q8[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(l1, m4), high(hb, 2));
            q8[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), high(hb, 4));
            q8[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), high(hb, 6));
        }
        let mut q = [_mm512_setzero_si512(); 4];
        for j in 0..4 {
            q[j] = join(q8[2 * j], q8[2 * j + 1]);
        }
        (q, scales)
    }

    /// As `vnni::q6k` on `4 G` input rows, bit for bit (see [`q4k_groups`]).
    ///
    /// # Safety
    /// As [`q4k_groups`].
    #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn q6k_groups<const G: usize>(w: *const u8, nb: usize, groups: Groups) -> [[f32; 4]; G] {
        // SAFETY (transmute): [i16; 32] and __m512i have the same size.
        let pair_scales = [std::mem::transmute::<[i16; 32], __m512i>(Q6K_PAIR_SCALES[0]), std::mem::transmute::<[i16; 32], __m512i>(Q6K_PAIR_SCALES[1])];
        let mut acc = [[_mm512_setzero_ps(); 2]; G];
        for b in 0..nb {
            let blk = w.add(b * Q6K_BYTES);
            let d = f16_at(blk.add(208));
            let (q, scales) = q6k_unpack(blk);
            let scales16 = _mm256_cvtepi8_epi16(scales);
            let mut qp = [_mm512_setzero_si512(); 4];
            for (qp, q) in qp.iter_mut().zip(q) {
                *qp = _mm512_permutexvar_epi32(alternate_pieces(), q);
            }
            let s16 = _mm512_zextsi256_si512(scales16);
            let s = [_mm512_permutexvar_epi16(pair_scales[0], s16), _mm512_permutexvar_epi16(pair_scales[1], s16)];
            let scales16 = _mm512_broadcast_i64x4(scales16);
            for g in 0..G {
                let at = g * nb + b;
                let dd = _mm_mul_ps(_mm_loadu_ps(groups.d4.add(4 * at)), _mm_set1_ps(d));
                for p in 0..2 {
                    // Both rows' 16-value sums in one load: the -32 offset of each lane.
                    let bsums = _mm512_loadu_si512(groups.bsums4.add(16 * (4 * at + 2 * p)) as *const __m512i);
                    let offset = _mm512_madd_epi16(scales16, bsums);
                    let init = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32::<5>(offset));
                    let x = |i: usize| groups.pairs.add(256 * ((4 * g + 2 * p + i) * nb + b));
                    let sumi = two_packed_sums(&qp, &s, x(0), x(1), init);
                    acc[g][p] = _mm512_fmadd_ps(spread_pair(dd, 2 * p as i32), _mm512_cvtepi32_ps(sumi), acc[g][p]);
                }
            }
        }
        let mut out = [[0f32; 4]; G];
        for g in 0..G {
            for p in 0..2 {
                for (i, half) in halves(acc[g][p]).into_iter().enumerate() {
                    out[g][2 * p + i] = hsum(half);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random bytes: every bit pattern of scales and values occurs (f16 scales kept finite).
    fn blocks(n: usize, size: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n * size)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 56) as u8
            })
            .collect()
    }

    fn finite_f16(buf: &mut [u8], size: usize, at: usize) {
        for block in buf.chunks_exact_mut(size) {
            block[at + 1] &= 0x3b; // exponent well below infinity
        }
    }

    /// The 512-bit K-quant kernels give exactly the 256-bit VNNI kernels' bits (which the
    /// output-equality transcript was checked with).
    #[test]
    fn wide_k_quant_kernels_are_bit_identical_to_the_256_bit_ones() {
        if !Isa::Vnni.available() {
            return;
        }
        let nb = 6;
        let mut x = blocks(4 * nb, Q8K_BYTES, 3);
        for block in x.chunks_exact_mut(Q8K_BYTES) {
            block[..4].copy_from_slice(&0.013f32.to_le_bytes());
            // bsums consistent with the values, as Q8_K has them.
            for g in 0..16 {
                let sum: i32 = block[4 + 16 * g..4 + 16 * (g + 1)].iter().map(|&v| v as i8 as i32).sum();
                block[260 + 2 * g..262 + 2 * g].copy_from_slice(&(sum as i16).to_le_bytes());
            }
        }
        let xb: [*const u8; 4] = std::array::from_fn(|t| x.as_ptr().wrapping_add(t * nb * Q8K_BYTES));
        let mut w4 = blocks(nb, Q4K_BYTES, 5);
        finite_f16(&mut w4, Q4K_BYTES, 0);
        finite_f16(&mut w4, Q4K_BYTES, 2);
        let mut w6 = blocks(nb, Q6K_BYTES, 7);
        finite_f16(&mut w6, Q6K_BYTES, 208);
        // SAFETY: the features are available (checked), and the buffers hold nb blocks.
        unsafe {
            let (a, b) = (wide::q4k::<4>(w4.as_ptr(), nb, xb), vnni::q4k::<4>(w4.as_ptr(), nb, xb));
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "q4k x4: {a:?} vs {b:?}");
            let (a, b) = (wide::q4k::<1>(w4.as_ptr(), nb, [xb[2]]), vnni::q4k::<1>(w4.as_ptr(), nb, [xb[2]]));
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "q4k x1");
            let (a, b) = (wide::q6k::<4>(w6.as_ptr(), nb, xb), vnni::q6k::<4>(w6.as_ptr(), nb, xb));
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "q6k x4: {a:?} vs {b:?}");
            let (a, b) = (wide::q6k::<1>(w6.as_ptr(), nb, [xb[1]]), vnni::q6k::<1>(w6.as_ptr(), nb, [xb[1]]));
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "q6k x1");
        }
    }

    /// The one-row (decode) K-quant kernels against the 256-bit VNNI ones they equal, timed
    /// in turns on one thread so that a noisy machine moves both alike (the ratio is the
    /// figure): `cargo test --release --lib one_row_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn one_row_speed() {
        if !Isa::Vnni.available() {
            return;
        }
        for (name, rows, nb) in [("1.5B gate/up", 8960, 6), ("1.5B down", 1536, 35)] {
            let x = blocks(nb, Q8K_BYTES, 3);
            let mut w4 = blocks(rows * nb, Q4K_BYTES, 5);
            finite_f16(&mut w4, Q4K_BYTES, 0);
            finite_f16(&mut w4, Q4K_BYTES, 2);
            let mut w6 = blocks(rows * nb, Q6K_BYTES, 7);
            finite_f16(&mut w6, Q6K_BYTES, 208);
            let time = |f: &dyn Fn(usize) -> f32| {
                let start = std::time::Instant::now();
                let mut sum = 0.0;
                for j in 0..rows {
                    sum += f(j);
                }
                std::hint::black_box(sum);
                start.elapsed().as_secs_f64() * 1e9 / rows as f64
            };
            let mut best = [f64::MAX; 4];
            for _ in 0..15 {
                // SAFETY: VNNI is available (checked); every row lies in its buffer.
                let runs: [&dyn Fn(usize) -> f32; 4] = unsafe {
                    [
                        &|j| wide::q4k::<1>(w4.as_ptr().add(j * nb * Q4K_BYTES), nb, [x.as_ptr()])[0],
                        &|j| vnni::q4k::<1>(w4.as_ptr().add(j * nb * Q4K_BYTES), nb, [x.as_ptr()])[0],
                        &|j| wide::q6k::<1>(w6.as_ptr().add(j * nb * Q6K_BYTES), nb, [x.as_ptr()])[0],
                        &|j| vnni::q6k::<1>(w6.as_ptr().add(j * nb * Q6K_BYTES), nb, [x.as_ptr()])[0],
                    ]
                };
                for (b, run) in best.iter_mut().zip(runs) {
                    *b = b.min(time(run));
                }
            }
            println!(
                "{name:<13} {rows}x{}: Q4_K {:.1} ns/row ({:.2}x the 256-bit kernel), Q6_K {:.1} ns/row ({:.2}x)",
                nb * 256,
                best[0],
                best[1] / best[0],
                best[2],
                best[3] / best[2]
            );
        }
    }

    /// `m` input rows of `cols` deterministic values in [-1, 1) quantized by `QuantInput`
    /// for `kind` (Q8_K rows laid out in lanes too where AMX runs).
    fn quantized_input(kind: super::super::InputKind, m: usize, cols: usize, seed: u64) -> super::super::QuantInput {
        let mut s = seed;
        let x: Vec<f32> = (0..m * cols)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
            })
            .collect();
        let mut input = super::super::QuantInput::new();
        input.quantize(kind, &x, m, cols);
        input
    }

    fn q8_0_input(m: usize, nb: usize, seed: u64) -> super::super::QuantInput {
        quantized_input(super::super::InputKind::Q8_0, m, nb * 32, seed)
    }

    fn q8_0_rows(input: &super::super::QuantInput) -> Q8_0Rows<'_> {
        Q8_0Rows {
            values: &input.q8_0_values,
            scales: &input.q8_0_scales,
            sums: &input.q8_0_sums,
            scales4: &input.q8_0_scales4,
            sums4: &input.q8_0_sums4,
            values8: &input.q8_0_values8,
            scales8: &input.q8_0_scales8,
            sums8: &input.q8_0_sums8,
        }
    }

    /// The eight-row Q8_0 / Q5_0 kernel gives exactly the four-row kernel's bits (even and
    /// odd block counts: the odd one ends with a block of its own).
    #[test]
    fn eight_row_q8_0_and_q5_0_kernels_are_bit_identical_to_the_four_row_one() {
        if !Isa::Vnni.available() {
            return;
        }
        for nb in [28, 7] {
            let input = q8_0_input(8, nb, 91);
            for (ty, size) in [(WeightType::Q5_0, Q5_0_BYTES), (WeightType::Q8_0, Q8_0_BYTES)] {
                let mut w = blocks(3 * nb, size, 13);
                finite_f16(&mut w, size, 0);
                let kernel = Kernel { isa: Isa::Vnni, ty, w: &w, nb, row_bytes: nb * size, x: Input::Q8_0(q8_0_rows(&input)) };
                for j in 0..3 {
                    // SAFETY: VNNI is available; row j and input rows 0..8 lie in the buffers.
                    let (eight, four) = unsafe { (kernel.dot8(j, 0), [kernel.dot4(j, 0), kernel.dot4(j, 4)].concat()) };
                    assert_eq!(eight.map(f32::to_bits).to_vec(), four.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "{ty:?} nb {nb} row {j}");
                }
            }
        }
    }

    /// The AMX tiles give exactly the VNNI kernels' bits: one panel called directly (so the
    /// tiles surely ran), and whole calls whose rows and inputs leave remainders past the
    /// panels and tiles, with even, odd and single-block rows of random weight bits.
    #[test]
    fn amx_tiles_are_bit_identical_to_the_vnni_kernels() {
        if !Isa::Amx.available() {
            eprintln!("no AMX here (or B4_AMX=0): the tiles are not tested");
            return;
        }
        for nb in [28, 7, 1] {
            for m in [16, 21, 32, 45] {
                let input = q8_0_input(m, nb, 17 + m as u64);
                let x = Input::Q8_0(q8_0_rows(&input));
                for (ty, size) in [(WeightType::Q5_0, Q5_0_BYTES), (WeightType::Q8_0, Q8_0_BYTES)] {
                    let mut w = blocks(37 * nb, size, 29 + nb as u64);
                    finite_f16(&mut w, size, 0);
                    let Input::Q8_0(q8) = x else { unreachable!() };
                    let tiles = m / amx::TILE;
                    let mut panel = vec![f32::NAN; amx::TILE * m];
                    // SAFETY: AMX is available; w holds 37 rows and the input m >= 16 * tiles rows.
                    unsafe {
                        if ty == WeightType::Q5_0 {
                            amx::panel::<true>(w.as_ptr().add(3 * nb * size), nb * size, nb, q8, tiles, m, panel.as_mut_ptr());
                        } else {
                            amx::panel::<false>(w.as_ptr().add(3 * nb * size), nb * size, nb, q8, tiles, m, panel.as_mut_ptr());
                        }
                    }
                    assert_tiles_match_vnni(ty, &w, nb, x, m, &panel);
                }
            }
        }
    }

    /// A panel's outputs (16 weight rows of `w` from row 3, `m` inputs) against the VNNI
    /// kernels', bit for bit, then whole calls through `dot_rows` with and without the tiles
    /// on row ranges that leave rows past the last panel.
    fn assert_tiles_match_vnni(ty: WeightType, w: &[u8], nb: usize, x: Input, m: usize, panel: &[f32]) {
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        let (block, size) = ty.block();
        // The rows the panel computed: whole tiles, and for the K-quants a padded last one.
        let tiled = match x {
            Input::Q8_0(_) => m / amx::TILE * amx::TILE,
            Input::Q8K(_) => (amx::k_tiles(m) * amx::TILE).min(m),
        };
        let mut want = vec![f32::NAN; amx::TILE * m];
        vnni_rows(&Kernel { isa: Isa::Vnni, ty, w, nb, row_bytes: nb * size, x }, 3..3 + amx::TILE, 0, m, &mut want);
        for (n, (a, b)) in panel.chunks(m).zip(want.chunks(m)).enumerate() {
            assert_eq!(bits(&a[..tiled]), bits(&b[..tiled]), "{ty:?} nb {nb} m {m} panel row {n}");
        }
        for rows in [0..37, 5..21, 3..18, 0..16] {
            let mut amx_out = vec![f32::NAN; rows.len() * m];
            let mut vnni_out = vec![f32::NAN; rows.len() * m];
            assert!(dot_rows(Isa::Amx, ty, w, nb * block, rows.clone(), x, m, &mut amx_out));
            assert!(dot_rows(Isa::Vnni, ty, w, nb * block, rows.clone(), x, m, &mut vnni_out));
            assert_eq!(bits(&amx_out), bits(&vnni_out), "{ty:?} nb {nb} m {m} rows {rows:?}");
        }
    }

    fn q8k_input(m: usize, nb: usize, seed: u64) -> super::super::QuantInput {
        quantized_input(super::super::InputKind::Q8K, m, nb * 256, seed)
    }

    fn q8k_rows(input: &super::super::QuantInput) -> Q8KRows<'_> {
        Q8KRows {
            blocks: super::super::as_bytes(&input.q8k),
            d4: &input.q8k_d4,
            sums4: &input.q8k_sums4,
            bsums4: &input.q8k_bsums4,
            pairs: &input.q8k_pairs,
            lanes: &input.q8k_lanes,
        }
    }

    /// The K-quant tiles give exactly the VNNI kernels' bits, as the Q8_0 / Q5_0 ones do:
    /// one panel called directly, and whole calls with remainders past the panels and tiles
    /// and last tiles padded with zero rows (24, 45, 93 rows), enough tiles for both types'
    /// thresholds, random weight bits (every scale, min and value pattern; Q6_K's negative
    /// scales).
    #[test]
    fn amx_k_quant_tiles_are_bit_identical_to_the_vnni_kernels() {
        if !Isa::Amx.available() {
            eprintln!("no AMX here (or B4_AMX=0): the K-quant tiles are not tested");
            return;
        }
        for nb in [6, 1, 3] {
            for m in [16, 21, 24, 45, 64, 70, 93] {
                let input = q8k_input(m, nb, 41 + m as u64);
                let q8k = q8k_rows(&input);
                let x = Input::Q8K(q8k);
                let tiles = amx::k_tiles(m);
                assert!(q8k.lanes.len() >= tiles * amx::TILE * nb * 256, "the input was laid out for the tiles");
                for (ty, size) in [(WeightType::Q4K, Q4K_BYTES), (WeightType::Q6K, Q6K_BYTES)] {
                    let mut w = blocks(37 * nb, size, 53 + nb as u64);
                    if ty == WeightType::Q4K {
                        finite_f16(&mut w, size, 0);
                        finite_f16(&mut w, size, 2);
                    } else {
                        finite_f16(&mut w, size, 208);
                    }
                    let mut panel = vec![f32::NAN; amx::TILE * m];
                    // SAFETY: AMX is available; w holds 37 rows, the input's lanes 16 * tiles
                    // rows and its blocks m > 16 * (tiles - 1).
                    unsafe {
                        if ty == WeightType::Q6K {
                            amx::k_panel::<true>(w.as_ptr().add(3 * nb * size), nb * size, nb, q8k, tiles, m, panel.as_mut_ptr());
                        } else {
                            amx::k_panel::<false>(w.as_ptr().add(3 * nb * size), nb * size, nb, q8k, tiles, m, panel.as_mut_ptr());
                        }
                    }
                    assert_tiles_match_vnni(ty, &w, nb, x, m, &panel);
                }
            }
        }
    }

    /// `b4 perf` names the input rows from which each K-quant type's tiles run.
    #[test]
    fn the_k_quant_tiles_start_where_the_kernel_name_says() {
        let first = |q6| (1..1000).find(|&m| amx::k_tiles(m) >= amx::k_min_tiles(q6));
        assert_eq!((first(false), first(true)), (Some(40), Some(72)));
        let name = super::super::simd::name(Some(Isa::Amx));
        assert!(name.contains("Q4_K from 40 rows, Q6_K from 72"), "{name}");
        // A last tile of fewer than 8 rows stays on the VNNI kernels.
        assert_eq!((amx::k_tiles(16), amx::k_tiles(23), amx::k_tiles(24), amx::k_tiles(45)), (1, 1, 2, 3));
    }

    /// The AMX tiles against the VNNI kernels on one panel of the 0.5B's gate/up shape
    /// (896 columns), 256 input rows, best of many:
    /// `cargo test --release --lib amx_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn amx_speed() {
        if !Isa::Amx.available() {
            return;
        }
        let (nb, m, rows) = (28, 256, 512);
        let input = q8_0_input(m, nb, 5);
        let x = Input::Q8_0(q8_0_rows(&input));
        for (ty, size) in [(WeightType::Q5_0, Q5_0_BYTES), (WeightType::Q8_0, Q8_0_BYTES)] {
            let mut w = blocks(rows * nb, size, 3);
            finite_f16(&mut w, size, 0);
            let mut out = vec![0f32; amx::TILE * m];
            let mut best = [f64::MAX; 2];
            for _ in 0..50 {
                for (i, isa) in [Isa::Vnni, Isa::Amx].into_iter().enumerate() {
                    let start = std::time::Instant::now();
                    for j in (0..rows).step_by(amx::TILE) {
                        dot_rows(isa, ty, &w, nb * QK8_0, j..j + amx::TILE, x, m, &mut out);
                    }
                    best[i] = best[i].min(start.elapsed().as_secs_f64());
                }
            }
            let per = |t: f64| t * 1e9 / (rows * nb * m) as f64;
            println!("{ty:?} ns per (weight block, input row): VNNI {:.3}, AMX {:.3} ({:.2}x)", per(best[0]), per(best[1]), best[0] / best[1]);
        }
    }

    /// The K-quant tiles against the VNNI kernels on the 1.5B's shapes (1536 columns with 45
    /// input rows, a short prompt, and 64, 80 and 256, and 8960 for its down projection),
    /// best of many; where a type's tiles do not run yet (`amx::k_min_tiles`) both columns
    /// are the VNNI kernels:
    /// `cargo test --release --lib amx_k_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn amx_k_speed() {
        if !Isa::Amx.available() {
            return;
        }
        for (nb, rows, m) in [(6, 512, 45), (6, 512, 64), (6, 512, 80), (6, 512, 256), (35, 128, 256)] {
            let input = q8k_input(m, nb, 5);
            let x = Input::Q8K(q8k_rows(&input));
            for (ty, size) in [(WeightType::Q4K, Q4K_BYTES), (WeightType::Q6K, Q6K_BYTES)] {
                let mut w = blocks(rows * nb, size, 3);
                finite_f16(&mut w, size, if ty == WeightType::Q4K { 0 } else { 208 });
                if ty == WeightType::Q4K {
                    finite_f16(&mut w, size, 2);
                }
                let mut out = vec![0f32; amx::TILE * m];
                let mut best = [f64::MAX; 2];
                for _ in 0..20 {
                    for (i, isa) in [Isa::Vnni, Isa::Amx].into_iter().enumerate() {
                        let start = std::time::Instant::now();
                        for j in (0..rows).step_by(amx::TILE) {
                            dot_rows(isa, ty, &w, nb * 256, j..j + amx::TILE, x, m, &mut out);
                        }
                        best[i] = best[i].min(start.elapsed().as_secs_f64());
                    }
                }
                let per = |t: f64| t * 1e9 / (rows * nb * m) as f64;
                println!("{ty:?} nb {nb} m {m} ns per (weight super-block, input row): VNNI {:.3}, AMX {:.3} ({:.2}x)", per(best[0]), per(best[1]), best[0] / best[1]);
            }
        }
    }

    /// The eight-row Q5_0 kernel against two calls of the four-row one, alternating, best
    /// of many (robust to a busy machine):
    /// `cargo test --release --lib eight_row_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn eight_row_speed() {
        if !Isa::Vnni.available() {
            return;
        }
        let (nb, rows) = (28, 896);
        let input = q8_0_input(8, nb, 5);
        let w = blocks(rows * nb, Q5_0_BYTES, 3);
        let kernel = Kernel { isa: Isa::Vnni, ty: WeightType::Q5_0, w: &w, nb, row_bytes: nb * Q5_0_BYTES, x: Input::Q8_0(q8_0_rows(&input)) };
        let (mut four, mut eight, mut sink) = (f64::MAX, f64::MAX, 0f32);
        for _ in 0..50 {
            let start = std::time::Instant::now();
            for j in 0..rows {
                // SAFETY: VNNI is available; every row and input row lies in the buffers.
                sink += unsafe { kernel.dot4(j, 0)[0] + kernel.dot4(j, 4)[0] };
            }
            four = four.min(start.elapsed().as_secs_f64());
            let start = std::time::Instant::now();
            for j in 0..rows {
                // SAFETY: as above.
                sink += unsafe { kernel.dot8(j, 0)[0] };
            }
            eight = eight.min(start.elapsed().as_secs_f64());
        }
        let per = |t: f64| t * 1e9 / (rows * nb * 8) as f64;
        println!("Q5_0 ns per (weight block, input row): four-row {:.3}, eight-row {:.3} ({:.2}x) {sink}", per(four), per(eight), four / eight);
    }

    /// The grouped K-quant kernels (four and eight input rows, scales and sums interleaved
    /// by `QuantInput`) give exactly the 256-bit VNNI kernels' bits, row by row.
    #[test]
    fn grouped_k_quant_kernels_are_bit_identical_to_the_256_bit_ones() {
        if !Isa::Vnni.available() {
            return;
        }
        let (nb, m) = (6, 11);
        let input = q8k_input(m, nb, 77);
        let rows = q8k_rows(&input);
        let mut w4 = blocks(3 * nb, Q4K_BYTES, 5);
        finite_f16(&mut w4, Q4K_BYTES, 0);
        finite_f16(&mut w4, Q4K_BYTES, 2);
        let mut w6 = blocks(3 * nb, Q6K_BYTES, 7);
        finite_f16(&mut w6, Q6K_BYTES, 208);
        for (ty, w, size) in [(WeightType::Q4K, &w4, Q4K_BYTES), (WeightType::Q6K, &w6, Q6K_BYTES)] {
            let kernel = Kernel { isa: Isa::Vnni, ty, w, nb, row_bytes: nb * size, x: Input::Q8K(rows) };
            for j in 0..3 {
                let one = |t: usize| -> [f32; 4] {
                    let xb: [*const u8; 4] = std::array::from_fn(|i| rows.blocks.as_ptr().wrapping_add((t + i) * nb * Q8K_BYTES));
                    let wj = w.as_ptr().wrapping_add(j * nb * size);
                    // SAFETY: VNNI is available; row j and input rows t..t + 4 lie in the buffers.
                    unsafe { if ty == WeightType::Q6K { vnni::q6k::<4>(wj, nb, xb) } else { vnni::q4k::<4>(wj, nb, xb) } }
                };
                let want: Vec<u32> = [one(0), one(4)].concat().into_iter().map(f32::to_bits).collect();
                // SAFETY: as above, for rows 0..8 (two complete groups).
                let (eight, four) = unsafe { (kernel.dot8(j, 0), kernel.dot4(j, 4)) };
                assert_eq!(eight.map(f32::to_bits).to_vec(), want, "{ty:?} row {j}, eight rows");
                assert_eq!(four.map(f32::to_bits).to_vec(), want[4..], "{ty:?} row {j}, four rows");
            }
        }
    }
}
