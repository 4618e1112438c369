//! Intel AMX int8 tiles for the prefill products of Q8_0 / Q5_0 weights.
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

use super::{vnni, Q8_0Rows, Rows32, QK8_0};

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

/// The `ldtilecfg` operand (palette 1): tiles 0-1 hold block sums (16 rows of 16 i32),
/// 2-3 input rows (16 rows of 32 bytes), 4-5 weights (8 rows of 16 × 4 bytes).
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
    while i < 6 {
        (colsb[i], rows[i]) = match i {
            0 | 1 => (64, 16),
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
