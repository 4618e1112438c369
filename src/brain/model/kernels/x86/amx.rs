//! Intel AMX int8 tiles for the prefill products of Q8_0 / Q5_0 weights, and of Q4_K / Q6_K
//! weights (see [`KPanel`] for how those keep the VNNI kernels' float order).
//!
//! One `tdpbssd` multiplies a tile of 16 input rows by 32 values (one Q8_0 block) with a
//! tile of the same block of 16 weight rows: 16 × 16 exact integer block sums at once,
//! where the VNNI kernel spends eight `vpdpbusd` per weight row and eight input rows. The
//! block sums are the same integers the VNNI kernel makes (it takes the weights' unsigned
//! offset out afterwards; the tiles multiply signed bytes directly), and they are scaled
//! and added in the VNNI eight-row kernel's float order (`wide::row32x8`: even and odd
//! blocks in two accumulators, `fma(d_w * d_x, sum, acc)`, the two added, then a last odd
//! block's own sum), so every output is bit for bit what the VNNI path gives (a test says
//! so) and greedy outputs do not move.
//!
//! Linux hands the tile registers to a process only after it asks
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`); [`available`] asks once and
//! says no where the CPU lacks AMX-TILE / AMX-INT8 or the kernel refuses (a hypervisor that
//! hides AMX, an old kernel), so nothing here can raise SIGILL. Every call loads its own
//! tile configuration (it is per thread) and releases the tiles before it returns.
//! `B4_AMX=0` turns the tiles off (for comparisons).

use std::arch::asm;
use std::arch::x86_64::*;
use std::cell::RefCell;
use std::sync::OnceLock;

use super::{vnni, wide, Q8KRows, Q8_0Rows, Rows32, Q4K_BYTES, Q6K_BYTES, Q8K_BYTES, QK8_0};

/// Input rows in one tile, and weight rows in one panel.
pub(super) const TILE: usize = 16;

/// Bytes of one block of a panel in the tiles' layout: 8 rows of 16 weight rows × 4 values.
const PANEL_BLOCK: usize = 8 * 64;

/// Whether the CPU has AMX-TILE and AMX-INT8 and the kernel lets this process use the tile
/// data (asked once; `B4_AMX=0` says no).
pub(super) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if std::env::var("B4_AMX").is_ok_and(|v| v.trim() == "0") {
            return false;
        }
        let leaf7 = __cpuid_count(7, 0);
        let (tile, int8) = (leaf7.edx & (1 << 24) != 0, leaf7.edx & (1 << 25) != 0);
        tile && int8 && request_tile_data()
    })
}

/// Asks Linux for the tile data state; false where it refuses or is not Linux.
fn request_tile_data() -> bool {
    #[cfg(target_os = "linux")]
    {
        const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
        const XFEATURE_XTILEDATA: libc::c_long = 18;
        // SAFETY: this request only changes which register state the kernel lets the process
        // use; it reads and writes none of our memory.
        unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// The `ldtilecfg` operand (palette 1): tiles 0-1 and 6-7 hold block sums (16 rows of 16
/// i32), 2-3 input rows (16 rows of 32 bytes), 4-5 weights (8 rows of 16 × 4 bytes).
#[repr(C, align(64))]
struct TileConfig {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
    reserved_end: [u8; 16],
}

const CONFIG: TileConfig = {
    let mut colsb = [0u16; 16];
    let mut rows = [0u8; 16];
    let mut i = 0;
    while i < 8 {
        (colsb[i], rows[i]) = match i {
            0 | 1 | 6 | 7 => (64, 16),
            2 | 3 => (32, 16),
            _ => (64, 8),
        };
        i += 1;
    }
    TileConfig { palette: 1, start_row: 0, reserved: [0; 14], colsb, rows, reserved_end: [0; 16] }
};

/// A panel of 16 weight rows unpacked for the tiles, per thread (reused between calls).
#[derive(Default)]
struct Panel {
    /// Per block, 8 rows of 64 bytes: row r holds values `4r..4r + 4` of each weight row.
    values: Vec<u8>,
    /// Per block, the 16 weight rows' scales.
    scales: Vec<f32>,
}

thread_local! {
    static PANEL: RefCell<Panel> = RefCell::default();
}

/// `out[n * m + t] = dot(weight row n, input row t)` for the 16 weight rows from `w` (`nb`
/// Q8_0 or Q5_0 blocks each, `row_bytes` apart) and input rows `0..16 * tiles` of `x`.
///
/// # Safety
/// AVX-512 VNNI and [`available`] hold; `w` has 16 rows, `x` at least `16 * tiles` rows of
/// `nb` blocks, and `out` `15 * m + 16 * tiles` values.
pub(super) unsafe fn panel<const Q5: bool>(w: *const u8, row_bytes: usize, nb: usize, x: Q8_0Rows, tiles: usize, m: usize, out: *mut f32) {
    PANEL.with_borrow_mut(|panel| {
        unpack::<Q5>(w, row_bytes, nb, panel);
        asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(nostack, readonly));
        for tile in 0..tiles {
            tile16::<Q5>(w, row_bytes, nb, x, panel, TILE * tile, m, out);
        }
        asm!("tilerelease", options(nostack, nomem));
    })
}

/// Weight rows `w` into `panel`: values signed (Q5_0's offset of 16 taken off) in the tiles'
/// layout, scales as f32.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn unpack<const Q5: bool>(w: *const u8, row_bytes: usize, nb: usize, panel: &mut Panel) {
    panel.values.resize(nb * PANEL_BLOCK, 0);
    panel.scales.resize(nb * TILE, 0.0);
    let values = panel.values.as_mut_ptr();
    for n in 0..TILE {
        let row = w.add(n * row_bytes);
        for b in 0..nb {
            let (d, q, raw) = vnni::block32::<Q5>(row, b);
            let signed = if Q5 { _mm256_sub_epi8(q, _mm256_set1_epi8(16)) } else { raw };
            let mut pieces = [0u32; 8];
            _mm256_storeu_si256(pieces.as_mut_ptr() as *mut __m256i, signed);
            for (r, piece) in pieces.into_iter().enumerate() {
                std::ptr::write_unaligned(values.add(b * PANEL_BLOCK + r * 64 + n * 4) as *mut u32, piece);
            }
            *panel.scales.get_unchecked_mut(b * TILE + n) = d;
        }
    }
}

/// Input rows `t0..t0 + 16` with the panel, written to `out[n * m + t0 + r]`.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
#[allow(clippy::too_many_arguments)]
unsafe fn tile16<const Q5: bool>(w: *const u8, row_bytes: usize, nb: usize, x: Q8_0Rows, panel: &Panel, t0: usize, m: usize, out: *mut f32) {
    let cols = nb * QK8_0;
    let input = x.values.as_ptr().add(t0 * cols) as *const u8;
    let scales = x.scales.as_ptr().add(t0 * nb);
    let mut even = [_mm512_setzero_ps(); TILE];
    let mut odd = [_mm512_setzero_ps(); TILE];
    let mut sums = [[0i32; TILE]; 2 * TILE];
    let pairs = nb / 2 * 2;
    for b in (0..pairs).step_by(2) {
        asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tileloadd tmm2, [{x0} + {cols}*1]",
            "tileloadd tmm3, [{x1} + {cols}*1]",
            "tileloadd tmm4, [{w0} + {wide}*1]",
            "tileloadd tmm5, [{w1} + {wide}*1]",
            "tdpbssd tmm0, tmm2, tmm4",
            "tdpbssd tmm1, tmm3, tmm5",
            "tilestored [{s0} + {wide}*1], tmm0",
            "tilestored [{s1} + {wide}*1], tmm1",
            x0 = in(reg) input.add(b * QK8_0),
            x1 = in(reg) input.add((b + 1) * QK8_0),
            cols = in(reg) cols,
            w0 = in(reg) panel.values.as_ptr().add(b * PANEL_BLOCK),
            w1 = in(reg) panel.values.as_ptr().add((b + 1) * PANEL_BLOCK),
            wide = in(reg) 64usize,
            s0 = in(reg) sums.as_mut_ptr(),
            s1 = in(reg) sums.as_mut_ptr().add(TILE),
            options(nostack),
        );
        let dw_even = _mm512_loadu_ps(panel.scales.as_ptr().add(b * TILE));
        let dw_odd = _mm512_loadu_ps(panel.scales.as_ptr().add((b + 1) * TILE));
        for r in 0..TILE {
            let (dx_even, dx_odd) = (*scales.add(r * nb + b), *scales.add(r * nb + b + 1));
            let s_even = _mm512_cvtepi32_ps(_mm512_loadu_si512(sums[r].as_ptr() as *const _));
            let s_odd = _mm512_cvtepi32_ps(_mm512_loadu_si512(sums[TILE + r].as_ptr() as *const _));
            even[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw_even, _mm512_set1_ps(dx_even)), s_even, even[r]);
            odd[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw_odd, _mm512_set1_ps(dx_odd)), s_odd, odd[r]);
        }
    }
    let mut total = [[0f32; TILE]; TILE];
    for r in 0..TILE {
        _mm512_storeu_ps(total[r].as_mut_ptr(), _mm512_add_ps(even[r], odd[r]));
    }
    for n in 0..TILE {
        // A last odd block: the four-row VNNI kernel's own sums, as the eight-row kernel adds them.
        let mut tail = [0f32; TILE];
        if pairs < nb {
            for g in 0..TILE / 4 {
                let mut acc = [_mm256_setzero_ps(); 4];
                vnni::add_block32::<Q5, 4>(w.add(n * row_bytes), pairs, &Rows32::<4>::at(x, nb, t0 + 4 * g), &mut acc);
                for (i, a) in acc.into_iter().enumerate() {
                    tail[4 * g + i] = vnni::hsum(a);
                }
            }
        }
        for r in 0..TILE {
            *out.add(n * m + t0 + r) = total[r][n] + tail[r];
        }
    }
}

/// Input tiles the K-quant tiles take for `m` input rows: the whole tiles, and after them a
/// last one of 8 rows or more padded with zero rows (at 45 rows, a short prompt, three tiles
/// of 48 rows cost less than the VNNI kernels' 45). None below one whole tile, so the decode's
/// draft batches (8 rows at most) lay nothing out.
pub(crate) fn k_tiles(m: usize) -> usize {
    if m < TILE {
        return 0;
    }
    m / TILE + usize::from(m % TILE >= TILE / 2)
}

/// Input tiles a Q4_K (`Q6 = false`) or Q6_K call needs before its panels go through the
/// tiles: their panels cost more to unpack than the Q8_0 ones, which fewer tiles do not
/// earn back (`amx_k_speed`: at 32 input rows Q4_K 1.0x the VNNI kernels' pace, at 48 rows
/// 1.2-1.4x; Q6_K 0.8-1.0x at 48 rows, 1.0-1.1x at 64, 1.3x at 256).
pub(super) const fn k_min_tiles(q6: bool) -> usize {
    if q6 {
        5
    } else {
        3
    }
}

/// Bytes of one super-block of a K-quant panel: per lane, a tile of the scaled values' low
/// bytes and one of their high bytes (8 rows of 16 weight rows × 4 values each).
const K_PANEL_BLOCK: usize = 8 * 2 * PANEL_BLOCK;

/// A panel of 16 Q4_K or Q6_K weight rows unpacked for the tiles, per thread.
///
/// The VNNI kernels' float order has eight lanes per weight row and input row: lane `L`
/// holds, per super-block, `Σ_k scale_k · Σ_i q[32 k + 4 L + i] · x[32 k + 4 L + i]` (the
/// four values at `4 L` of each sub-block `k`; Q6_K's scale of the first or second 16 of
/// the sub-block), and each lane is scaled and added in float on its own. So the tiles
/// work lane by lane: one tile product of 32 values (the lane's four of each of the eight
/// sub-blocks) gives that integer for 16 × 16 rows, with the sub-block scale already in
/// the weights. Scaled values need more than a byte (Q4_K up to 945, Q6_K ±8064), so each
/// is split into its low byte (unsigned) and the rest (signed), two products a lane.
#[derive(Default)]
struct KPanel {
    /// Per super-block and lane: the low bytes' tile, then the high bytes' (`K_PANEL_BLOCK`).
    values: Vec<u8>,
    /// Per super-block, the 16 weight rows' scales and (Q4_K) min scales.
    d: Vec<f32>,
    dmin: Vec<f32>,
    /// Per super-block, 8 × 16 pairs of i16: Q4_K's mins `(m[2 l], m[2 l + 1])` for `l` in
    /// `0..4`; Q6_K's scales `(s[2 L], s[2 L + 1])` for `L` in `0..8` (the `-32` offset of
    /// lane `L`).
    pairs: Vec<u32>,
}

thread_local! {
    static K_PANEL: RefCell<KPanel> = RefCell::default();
}

/// As [`panel`] for Q4_K (`Q6 = false`) or Q6_K weights and Q8_K inputs, whose rows
/// `0..16 * tiles` are laid out in `x.lanes` (rows from `m` on are zeros, and are neither
/// read from `x.blocks` nor written): outputs bit for bit those of the VNNI K-quant kernels
/// (`vnni::q4k` / `vnni::q6k`).
///
/// # Safety
/// AVX-512 VNNI and [`available`] hold; `w` has 16 rows of `nb` super-blocks, `x.lanes` at
/// least `16 * tiles` rows, `x.blocks` `min(m, 16 * tiles)` rows, and `out` `16 * m` values;
/// `16 * (tiles - 1) < m`.
pub(super) unsafe fn k_panel<const Q6: bool>(w: *const u8, row_bytes: usize, nb: usize, x: Q8KRows, tiles: usize, m: usize, out: *mut f32) {
    K_PANEL.with_borrow_mut(|panel| {
        unpack_k::<Q6>(w, row_bytes, nb, panel);
        asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(nostack, readonly));
        for tile in 0..tiles {
            k_tile16::<Q6>(nb, x, panel, TILE * tile, m, out);
        }
        asm!("tilerelease", options(nostack, nomem));
    })
}

/// Weight rows `w` into `panel`: each value times its sub-block's scale, split into bytes
/// in the tiles' layout per lane; the scales as f32; the pairs.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn unpack_k<const Q6: bool>(w: *const u8, row_bytes: usize, nb: usize, panel: &mut KPanel) {
    panel.values.resize(nb * K_PANEL_BLOCK, 0);
    panel.d.resize(nb * TILE, 0.0);
    panel.dmin.resize(nb * TILE, 0.0);
    panel.pairs.resize(nb * 8 * TILE, 0);
    let values = panel.values.as_mut_ptr();
    let m4 = _mm256_set1_epi8(0x0F);
    // Super-block by super-block, so each one's 16 KiB of tiles is written while in L1.
    for b in 0..nb {
        // Per sub-block k and weight row n: the low bytes' 4-byte pieces of lanes 0..8, then
        // the high bytes' (one row of a 16 × 16 matrix of pieces, transposed below).
        let mut pieces = [[_mm512_setzero_si512(); TILE]; 8];
        for n in 0..TILE {
            let row = w.add(n * row_bytes);
            // The 32 values of each sub-block, and the scales of its two halves.
            let mut q = [_mm256_setzero_si256(); 8];
            let mut scales = [(0i16, 0i16); 8];
            if Q6 {
                let blk = row.add(b * Q6K_BYTES);
                *panel.d.get_unchecked_mut(b * TILE + n) = vnni::f16_at(blk.add(208));
                let (joined, _) = wide::q6k_unpack(blk);
                for (j, v) in joined.into_iter().enumerate() {
                    q[2 * j] = _mm512_castsi512_si256(v);
                    q[2 * j + 1] = _mm512_extracti64x4_epi64::<1>(v);
                }
                let s: [i8; 16] = std::ptr::read_unaligned(blk.add(192) as *const [i8; 16]);
                for k in 0..8 {
                    scales[k] = (s[2 * k] as i16, s[2 * k + 1] as i16);
                    *panel.pairs.get_unchecked_mut((b * 8 + k) * TILE + n) = pair(s[2 * k] as i16, s[2 * k + 1] as i16);
                }
            } else {
                let blk = row.add(b * Q4K_BYTES);
                *panel.d.get_unchecked_mut(b * TILE + n) = vnni::f16_at(blk);
                *panel.dmin.get_unchecked_mut(b * TILE + n) = vnni::f16_at(blk.add(2));
                // Bytes 0..8: the scales; 8..16: the mins.
                let sm: [u8; 16] = std::mem::transmute(vnni::q4k_scales_mins(blk.add(4)));
                for k in 0..8 {
                    scales[k] = (sm[k] as i16, sm[k] as i16);
                }
                for l in 0..4 {
                    *panel.pairs.get_unchecked_mut((b * 8 + l) * TILE + n) = pair(sm[8 + 2 * l] as i16, sm[8 + 2 * l + 1] as i16);
                }
                for j in 0..4 {
                    let bits = vnni::load(blk.add(16 + 32 * j));
                    q[2 * j] = _mm256_and_si256(bits, m4);
                    q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
                }
            }
            for k in 0..8 {
                let (first, second) = scales[k];
                let s = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(first)), _mm256_set1_epi16(second), 1);
                let scaled = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(q[k]), s);
                pieces[k][n] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(scaled)), _mm512_cvtepi16_epi8(_mm512_srai_epi16::<8>(scaled)), 1);
            }
        }
        // Transposed, column c holds piece c of all 16 weight rows: row k of lane c % 8's low
        // (c < 8) or high tile.
        for (k, rows) in pieces.iter_mut().enumerate() {
            transpose16(rows);
            for (c, row) in rows.iter().enumerate() {
                let at = b * K_PANEL_BLOCK + (c % 8) * 2 * PANEL_BLOCK + (c / 8) * PANEL_BLOCK + k * 64;
                _mm512_storeu_si512(values.add(at) as *mut _, *row);
            }
        }
    }
}

/// A 16 × 16 matrix of i32 (one row a register) transposed in place.
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
fn transpose16(r: &mut [__m512i; TILE]) {
    // Per 128-bit lane: pairs of rows interleaved, then fours, so u[4 g + i] holds, in lane l,
    // column 4 l + i of rows 4 g..4 g + 4.
    let mut t = [_mm512_setzero_si512(); TILE];
    for p in 0..8 {
        t[2 * p] = _mm512_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
    }
    let mut u = [_mm512_setzero_si512(); TILE];
    for g in 0..4 {
        u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    // Then lane l of u[i], u[4 + i], u[8 + i], u[12 + i] side by side: column 4 l + i.
    for i in 0..4 {
        let (v_low, v_high) = (_mm512_shuffle_i32x4::<0x44>(u[i], u[4 + i]), _mm512_shuffle_i32x4::<0xEE>(u[i], u[4 + i]));
        let (w_low, w_high) = (_mm512_shuffle_i32x4::<0x44>(u[8 + i], u[12 + i]), _mm512_shuffle_i32x4::<0xEE>(u[8 + i], u[12 + i]));
        r[i] = _mm512_shuffle_i32x4::<0x88>(v_low, w_low);
        r[4 + i] = _mm512_shuffle_i32x4::<0xDD>(v_low, w_low);
        r[8 + i] = _mm512_shuffle_i32x4::<0x88>(v_high, w_high);
        r[12 + i] = _mm512_shuffle_i32x4::<0xDD>(v_high, w_high);
    }
}

/// Two i16 side by side, as `vpmaddwd` takes them.
fn pair(a: i16, b: i16) -> u32 {
    a as u16 as u32 | (b as u16 as u32) << 16
}

/// Input rows `t0..t0 + 16` with the K-quant panel, written to `out[n * m + t0 + r]`; the
/// rows from `m` on are padding (zero lanes), left out of the blocks read and the outputs.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")]
unsafe fn k_tile16<const Q6: bool>(nb: usize, x: Q8KRows, panel: &KPanel, t0: usize, m: usize, out: *mut f32) {
    let stride = nb * 256;
    let lanes = x.lanes.as_ptr().add(t0 * stride);
    let mut acc = [[_mm512_setzero_ps(); TILE]; 8];
    let mut acc_m = [[_mm512_setzero_ps(); TILE]; 4];
    let mut sums_lo = [[[0i32; TILE]; TILE]; 2];
    let mut sums_hi = [[[0i32; TILE]; TILE]; 2];
    let mut dd = [_mm512_setzero_ps(); TILE];
    let mut dm = [_mm512_setzero_ps(); TILE];
    // Per input row, the pairs its lanes take: Q4_K's 32-value sums (for the mins), Q6_K's
    // 16-value sums (for the offset).
    let mut sums = [[0u32; 8]; TILE];
    let valid = (m - t0).min(TILE);
    for b in 0..nb {
        let dw = _mm512_loadu_ps(panel.d.as_ptr().add(b * TILE));
        let dmin = _mm512_loadu_ps(panel.dmin.as_ptr().add(b * TILE));
        // Padding rows keep their zero scales and sums.
        for r in 0..valid {
            let blk = x.blocks.as_ptr().add(((t0 + r) * nb + b) * Q8K_BYTES);
            let dx = std::ptr::read_unaligned(blk as *const f32);
            // The VNNI kernels' `dx * d` and `-dx * dmin`, per weight row.
            dd[r] = _mm512_mul_ps(dw, _mm512_set1_ps(dx));
            let bsums = vnni::load(blk.add(260));
            if Q6 {
                _mm256_storeu_si256(sums[r].as_mut_ptr() as *mut __m256i, bsums);
            } else {
                dm[r] = _mm512_mul_ps(dmin, _mm512_set1_ps(-dx));
                let q8s = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
                _mm_storeu_si128(sums[r].as_mut_ptr() as *mut __m128i, q8s);
            }
        }
        // Lane by lane, the tiles of one lane run while the vector units scale and add the
        // previous lane's sums (alternate tile registers and buffers).
        for lane in 0..=8 {
            if lane < 8 {
                let tiles = panel.values.as_ptr().add(b * K_PANEL_BLOCK + lane * 2 * PANEL_BLOCK);
                let x = lanes.add(b * 256 + lane * 32);
                let (s0, s1) = (sums_lo[lane & 1].as_mut_ptr(), sums_hi[lane & 1].as_mut_ptr());
                if lane & 1 == 0 {
                    asm!(
                        "tilezero tmm0",
                        "tilezero tmm1",
                        "tileloadd tmm2, [{x} + {stride}*1]",
                        "tileloadd tmm4, [{lo} + {wide}*1]",
                        "tileloadd tmm5, [{hi} + {wide}*1]",
                        "tdpbsud tmm0, tmm2, tmm4",
                        "tdpbssd tmm1, tmm2, tmm5",
                        "tilestored [{s0} + {wide}*1], tmm0",
                        "tilestored [{s1} + {wide}*1], tmm1",
                        x = in(reg) x, stride = in(reg) stride, lo = in(reg) tiles, hi = in(reg) tiles.add(PANEL_BLOCK),
                        wide = in(reg) 64usize, s0 = in(reg) s0, s1 = in(reg) s1,
                        options(nostack),
                    );
                } else {
                    asm!(
                        "tilezero tmm6",
                        "tilezero tmm7",
                        "tileloadd tmm3, [{x} + {stride}*1]",
                        "tileloadd tmm4, [{lo} + {wide}*1]",
                        "tileloadd tmm5, [{hi} + {wide}*1]",
                        "tdpbsud tmm6, tmm3, tmm4",
                        "tdpbssd tmm7, tmm3, tmm5",
                        "tilestored [{s0} + {wide}*1], tmm6",
                        "tilestored [{s1} + {wide}*1], tmm7",
                        x = in(reg) x, stride = in(reg) stride, lo = in(reg) tiles, hi = in(reg) tiles.add(PANEL_BLOCK),
                        wide = in(reg) 64usize, s0 = in(reg) s0, s1 = in(reg) s1,
                        options(nostack),
                    );
                }
            }
            if lane == 0 {
                continue;
            }
            let lane = lane - 1;
            let (low, high) = (&sums_lo[lane & 1], &sums_hi[lane & 1]);
            let offsets = _mm512_loadu_si512(panel.pairs.as_ptr().add((b * 8 + lane) * TILE) as *const _);
            for r in 0..TILE {
                let lo = _mm512_loadu_si512(low[r].as_ptr() as *const _);
                let hi = _mm512_loadu_si512(high[r].as_ptr() as *const _);
                let mut sumi = _mm512_add_epi32(lo, _mm512_slli_epi32::<8>(hi));
                if Q6 {
                    let offset = _mm512_madd_epi16(offsets, _mm512_set1_epi32(sums[r][lane] as i32));
                    sumi = _mm512_sub_epi32(sumi, _mm512_slli_epi32::<5>(offset));
                }
                acc[lane][r] = _mm512_fmadd_ps(dd[r], _mm512_cvtepi32_ps(sumi), acc[lane][r]);
            }
        }
        if !Q6 {
            for l in 0..4 {
                let mins = _mm512_loadu_si512(panel.pairs.as_ptr().add((b * 8 + l) * TILE) as *const _);
                for r in 0..TILE {
                    let prod = _mm512_madd_epi16(mins, _mm512_set1_epi32(sums[r][l] as i32));
                    acc_m[l][r] = _mm512_fmadd_ps(dm[r], _mm512_cvtepi32_ps(prod), acc_m[l][r]);
                }
            }
        }
    }
    let mut total = [[0f32; TILE]; TILE];
    for r in 0..TILE {
        // The VNNI kernels' horizontal sums, lane for lane: ((0 + 4) + (2 + 6)) + ((1 + 5) +
        // (3 + 7)), plus the mins' ((0 + 2) + (1 + 3)).
        let a = |l: usize| acc[l][r];
        let sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a(0), a(4)), _mm512_add_ps(a(2), a(6))), _mm512_add_ps(_mm512_add_ps(a(1), a(5)), _mm512_add_ps(a(3), a(7))));
        let sum = if Q6 {
            sum
        } else {
            let m = |l: usize| acc_m[l][r];
            _mm512_add_ps(sum, _mm512_add_ps(_mm512_add_ps(m(0), m(2)), _mm512_add_ps(m(1), m(3))))
        };
        _mm512_storeu_ps(total[r].as_mut_ptr(), sum);
    }
    for n in 0..TILE {
        for r in 0..valid {
            *out.add(n * m + t0 + r) = total[r][n];
        }
    }
}
