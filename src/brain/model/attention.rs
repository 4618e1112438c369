//! Causal grouped-query attention over an f32 KV cache, for the CPU forward pass.
//!
//! Cost on long prompts: a 1000-token prefill runs ~170 million query-key products of
//! 64 or 128 values; written as plain loops the compiler kept them scalar (float sums are
//! not reassociated) and `perf` showed attention at 29% of a 0.5B prefill. On x86 with AVX2
//! and FMA, four keys are scored at once (four independent vector sums sharing each load of
//! the query) and the weighted sum of values keeps its accumulators in registers; elsewhere
//! the plain loops run.

use super::pool::{Pool, SharedOut, StepFailed};

/// What attention needs to know about the model.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub n_head: usize,
    pub n_kv_head: usize,
    pub head_dim: usize,
}

/// The cached keys or values of one layer, each key/value head's positions contiguous
/// (`[head][position][head_dim]`), so a unit of attention reads its head's rows as one
/// stream. With positions interleaved by head (`[position][head][head_dim]`) a 1000-position
/// decode step read the 1.5B's caches at ~9 GB/s: each 4 KiB page held 2 KiB of one head,
/// and the prefetchers start over at every page.
#[derive(Default)]
pub struct KvCache {
    n_kv_head: usize,
    head_dim: usize,
    /// Positions each head has room for.
    capacity: usize,
    /// Positions written.
    len: usize,
    data: Vec<f32>,
}

impl KvCache {
    pub fn new(n_kv_head: usize, head_dim: usize) -> Self {
        Self { n_kv_head, head_dim, capacity: 0, len: 0, data: Vec::new() }
    }

    /// Writes `rows` (`(m, n_kv_head * head_dim)`, the layout of the K/V products) at
    /// positions `pos..pos + m`; what was cached past `pos` is dropped. Room grows in steps
    /// of `step` positions (keeping positions `0..pos`).
    pub fn write(&mut self, pos: usize, rows: &[f32], step: usize) {
        let (hd, kv_dim) = (self.head_dim, self.n_kv_head * self.head_dim);
        if kv_dim == 0 {
            return;
        }
        let m = rows.len() / kv_dim;
        if pos + m > self.capacity {
            let capacity = (pos + m).next_multiple_of(step.max(1));
            let mut data = vec![0f32; self.n_kv_head * capacity * hd];
            let kept = pos.min(self.len) * hd;
            for g in 0..self.n_kv_head {
                if let (Some(dst), Some(src)) = (data.get_mut(g * capacity * hd..).and_then(|d| d.get_mut(..kept)), self.data.get(g * self.capacity * hd..).and_then(|d| d.get(..kept))) {
                    dst.copy_from_slice(src);
                }
            }
            self.data = data;
            self.capacity = capacity;
        }
        for (t, row) in rows.chunks_exact(kv_dim).enumerate() {
            for (g, head) in row.chunks_exact(hd).enumerate() {
                let at = (g * self.capacity + pos + t) * hd;
                if let Some(dst) = self.data.get_mut(at..at + hd) {
                    dst.copy_from_slice(head);
                }
            }
        }
        self.len = pos.min(self.len) + m;
    }

    /// A cache holding this one's first `len` positions, with room for just those.
    pub fn copy_of(&self, len: usize) -> KvCache {
        let (hd, len) = (self.head_dim, len.min(self.len));
        let mut data = Vec::with_capacity(self.n_kv_head * len * hd);
        for g in 0..self.n_kv_head {
            if let Some(rows) = self.data.get(g * self.capacity * hd..).and_then(|d| d.get(..len * hd)) {
                data.extend_from_slice(rows);
            }
        }
        KvCache { n_kv_head: self.n_kv_head, head_dim: hd, capacity: len, len, data }
    }

    /// Positions `0..len` of every head, head after head (`n_kv_head * len * head_dim`
    /// values): what [`KvCache::from_rows`] takes back.
    pub fn rows(&self, len: usize) -> Vec<f32> {
        self.copy_of(len).data
    }

    /// A cache holding `len` positions given as [`KvCache::rows`] gives them; `None` when
    /// `data` has another size.
    pub fn from_rows(n_kv_head: usize, head_dim: usize, len: usize, data: Vec<f32>) -> Option<KvCache> {
        (data.len() == n_kv_head * len * head_dim).then_some(KvCache { n_kv_head, head_dim, capacity: len, len, data })
    }

    /// Head `g`'s rows.
    fn head(&self, g: usize) -> Rows<'_> {
        Rows { data: &self.data, stride: self.head_dim, offset: g * self.capacity * self.head_dim }
    }

    /// Whether `n` positions of every head fit the shape `shape` expects.
    fn holds(&self, shape: Shape, n: usize) -> bool {
        self.n_kv_head == shape.n_kv_head && self.head_dim == shape.head_dim && n <= self.len
    }
}

/// `out[t][head]` = softmax over keys `0..=pos + t` of `q·k / sqrt(head_dim)`, applied to
/// the values; `q` is `(m, n_head * head_dim)`, the caches hold at least `pos + m` positions.
#[allow(clippy::too_many_arguments)]
pub fn attention(pool: &Pool, shape: Shape, q: &[f32], k_cache: &KvCache, v_cache: &KvCache, pos: usize, m: usize, out: &mut [f32]) -> Result<(), StepFailed> {
    let Shape { n_head, n_kv_head, head_dim: hd } = shape;
    let n_rep = n_head / n_kv_head.max(1);
    let scale = 1.0 / (hd as f32).sqrt();
    let q_dim = n_head * hd;
    if hd == 0 || q.len() < m * q_dim || out.len() < m * q_dim || !k_cache.holds(shape, pos + m) || !v_cache.holds(shape, pos + m) {
        return Err(StepFailed);
    }
    // One unit of work: a key/value head with the n_rep query heads that share it, for a
    // block of consecutive query positions, so each cached key and value row is read once
    // for all of them (read per head, the 1.5B's decode at 1000 positions pulled ~340 MB a
    // token through L3; read per position, a token checked with three drafts read every
    // layer's cache four times, and attention cost four times one row's). Blocks are as
    // long as leaves every thread a unit: a decode step's rows (up to MAX_ROWS) go together
    // where there are as many key/value heads as threads.
    let rows = m.div_ceil((pool.threads() / n_kv_head.max(1)).max(1)).clamp(1, MAX_ROWS);
    let blocks = m.div_ceil(rows);
    let units = blocks * n_kv_head;
    let n_chunks = units.min(pool.threads() * 16);
    let per_chunk = units.div_ceil(n_chunks.max(1));
    let group = n_rep * hd;
    let shared = SharedOut::new(out);
    let simd = simd_available();
    pool.run(n_chunks, &|c| {
        let mut scores = Vec::new();
        let (mut queries, mut outs, mut seen) = (Vec::new(), Vec::new(), Vec::new());
        for unit in c * per_chunk..((c + 1) * per_chunk).min(units) {
            let (block, g) = (unit / n_kv_head, unit % n_kv_head);
            let ts = block * rows..((block + 1) * rows).min(m);
            let (keys, values) = (k_cache.head(g), v_cache.head(g));
            let last_seen = pos + ts.end;
            if simd && hd.is_multiple_of(8) && keys.fits(last_seen, hd) && values.fits(last_seen, hd) {
                // The block's query heads side by side, each with the keys its position sees.
                queries.clear();
                seen.clear();
                for t in ts.clone() {
                    let start = t * q_dim + g * group;
                    let Some(q) = q.get(start..start + group) else { return };
                    queries.extend_from_slice(q);
                    seen.extend(std::iter::repeat_n(pos + t + 1, n_rep));
                }
                outs.clear();
                outs.resize(queries.len(), 0.0);
                #[cfg(target_arch = "x86_64")]
                // SAFETY: AVX2 and FMA are available (`simd`), both caches hold the block's
                // last `seen` rows of `hd` values at their offsets (`fits`), `queries` and
                // `outs` hold `seen.len()` heads of `hd`.
                unsafe {
                    x86::attend_group(&queries, hd, keys, values, &seen, scale, &mut scores, &mut outs)
                };
                for (i, t) in ts.enumerate() {
                    let start = t * q_dim + g * group;
                    // SAFETY: each unit writes its own positions' heads, and units are split
                    // between chunks without overlap.
                    let dst = unsafe { shared.slice(start..start + group) };
                    dst.copy_from_slice(&outs[i * group..(i + 1) * group]);
                }
            } else {
                for t in ts {
                    let start = t * q_dim + g * group;
                    let Some(queries) = q.get(start..start + group) else { return };
                    // SAFETY: as above.
                    let dst = unsafe { shared.slice(start..start + group) };
                    for (query, dst) in queries.chunks_exact(hd).zip(dst.chunks_exact_mut(hd)) {
                        attend_any(query, keys, values, pos + t + 1, scale, &mut scores, dst);
                    }
                }
            }
        }
    })
}

/// The most query positions one unit of attention takes at once (a decode step's token and
/// its drafts).
const MAX_ROWS: usize = 8;

/// Rows of `head_dim` values at `offset` in each `stride`-wide position of a cache.
#[derive(Clone, Copy)]
struct Rows<'a> {
    data: &'a [f32],
    stride: usize,
    offset: usize,
}

impl Rows<'_> {
    /// Whether rows `0..n` of `len` values are all inside `data`.
    fn fits(&self, n: usize, len: usize) -> bool {
        n == 0 || (n - 1) * self.stride + self.offset + len <= self.data.len()
    }

    fn row(&self, p: usize, len: usize) -> &[f32] {
        let start = p * self.stride + self.offset;
        self.data.get(start..start + len).unwrap_or_default()
    }
}

/// One query against `n` keys, any head size (the portable path).
fn attend_any(query: &[f32], keys: Rows, values: Rows, n: usize, scale: f32, scores: &mut Vec<f32>, out: &mut [f32]) {
    let hd = query.len();
    scores.clear();
    scores.extend((0..n).map(|p| dot(query, keys.row(p, hd)) * scale));
    let sum = softmax_numerators(scores);
    out.fill(0.0);
    for (p, &w) in scores.iter().enumerate() {
        for (o, &v) in out.iter_mut().zip(values.row(p, hd)) {
            *o += w * v;
        }
    }
    for o in out.iter_mut() {
        *o /= sum;
    }
}

fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{softmax_numerators, Rows};

    /// Accumulators of the weighted sum of values kept in registers at once (eight of the
    /// sixteen AVX2 registers; a 128-value head takes two passes).
    const PASS: usize = 8;

    /// Positions whose values stay in L1 while every head of a group adds them up.
    const VALUE_BLOCK: usize = 32;

    /// The `queries.len() / hd` query heads that share one key/value head, head `h` against
    /// keys `0..seen[h]`. Heads of several positions go together: the keys all of them see
    /// are read once for all, the rest per head. Each score, softmax and weighted sum is
    /// worked out exactly as for one head alone: keys in groups of four from key 0 (the
    /// last one to three keys of a head one at a time), values added in position order.
    ///
    /// # Safety
    /// AVX2 and FMA must be available; `hd` a multiple of 8; `keys` and `values` must hold
    /// `max(seen)` rows of `hd` values (`Rows::fits`); `seen` must have one entry per query
    /// head and `out` `queries.len()` values.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn attend_group(queries: &[f32], hd: usize, keys: Rows, values: Rows, seen: &[usize], scale: f32, scores: &mut Vec<f32>, out: &mut [f32]) {
        let heads = queries.len() / hd;
        let chunks = hd / 8;
        let seen = &seen[..heads];
        let n = seen.iter().copied().max().unwrap_or(0);
        let common = seen.iter().copied().min().unwrap_or(0);
        scores.clear();
        scores.resize(heads * n, 0.0);
        let k = keys.data.as_ptr().add(keys.offset);
        let keys_at = (k, keys.stride);
        // The groups of four every head sees, for all heads at once.
        let shared_end = common - common % 4;
        let mut p = 0;
        while p < shared_end {
            four_keys(queries, hd, keys_at, p, 0..heads, n, scale, scores);
            p += 4;
        }
        // Each head's own rest: its further groups of four, then one key at a time.
        for (r, &n_r) in seen.iter().enumerate() {
            let mut p = shared_end;
            while p + 4 <= n_r {
                four_keys(queries, hd, keys_at, p, r..r + 1, n, scale, scores);
                p += 4;
            }
            let q = queries.as_ptr().add(r * hd);
            while p < n_r {
                let mut acc = _mm256_setzero_ps();
                for c in 0..chunks {
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q.add(8 * c)), _mm256_loadu_ps(k.add(p * keys.stride + 8 * c)), acc);
                }
                scores[r * n + p] = hsum(acc) * scale;
                p += 1;
            }
        }
        let mut inv = [0f32; 64];
        let mut inv_big = Vec::new();
        let inv: &mut [f32] = if heads <= inv.len() {
            &mut inv[..heads]
        } else {
            inv_big.resize(heads, 0.0);
            &mut inv_big
        };
        for (r, i) in inv.iter_mut().enumerate() {
            *i = 1.0 / softmax_numerators(scores.get_mut(r * n..r * n + seen[r]).unwrap_or_default());
        }
        // Values in blocks of positions kept in L1 while each head adds them up, eight
        // vector accumulators at a time (a 128-value head takes two passes).
        out.fill(0.0);
        let v = values.data.as_ptr().add(values.offset);
        let mut p0 = 0;
        while p0 < n {
            let p1 = (p0 + VALUE_BLOCK).min(n);
            for (r, &n_r) in seen.iter().enumerate() {
                let p1 = p1.min(n_r);
                if p1 <= p0 {
                    continue;
                }
                let o = out.as_mut_ptr().add(r * hd);
                let w = scores.as_ptr().add(r * n);
                let mut c0 = 0;
                while c0 < chunks {
                    let width = (chunks - c0).min(PASS);
                    let mut acc = [_mm256_setzero_ps(); PASS];
                    for (c, a) in acc.iter_mut().enumerate().take(width) {
                        *a = _mm256_loadu_ps(o.add(8 * (c0 + c)));
                    }
                    for p in p0..p1 {
                        let wv = _mm256_set1_ps(*w.add(p));
                        let row = v.add(p * values.stride + 8 * c0);
                        for (c, a) in acc.iter_mut().enumerate().take(width) {
                            *a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(row.add(8 * c)), *a);
                        }
                    }
                    for (c, a) in acc.iter().enumerate().take(width) {
                        _mm256_storeu_ps(o.add(8 * (c0 + c)), *a);
                    }
                    c0 += width;
                }
            }
            p0 = p1;
        }
        for (r, &i) in inv.iter().enumerate() {
            for o in out.get_mut(r * hd..(r + 1) * hd).unwrap_or_default() {
                *o *= i;
            }
        }
    }

    /// Keys `p..p + 4` (rows of the `stride`-wide cache at `k`) scored against query heads
    /// `heads`, into `scores` (`n` a head), two heads at a time sharing each key load: four
    /// independent sums per head sharing each load of its query, the key rows kept in L1
    /// while every head is scored against them.
    ///
    /// # Safety
    /// As [`attend_group`]'s, and keys `p..p + 4` must be in the cache and in every head's
    /// `n` scores.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn four_keys(queries: &[f32], hd: usize, (k, stride): (*const f32, usize), p: usize, heads: std::ops::Range<usize>, n: usize, scale: f32, scores: &mut [f32]) {
        let chunks = hd / 8;
        let mut r = heads.start;
        while r + 2 <= heads.end {
            let (q0, q1) = (queries.as_ptr().add(r * hd), queries.as_ptr().add((r + 1) * hd));
            let mut a = [_mm256_setzero_ps(); 4];
            let mut b = [_mm256_setzero_ps(); 4];
            for c in 0..chunks {
                let (qa, qb) = (_mm256_loadu_ps(q0.add(8 * c)), _mm256_loadu_ps(q1.add(8 * c)));
                for i in 0..4 {
                    let kv = _mm256_loadu_ps(k.add((p + i) * stride + 8 * c));
                    a[i] = _mm256_fmadd_ps(qa, kv, a[i]);
                    b[i] = _mm256_fmadd_ps(qb, kv, b[i]);
                }
            }
            _mm_storeu_ps(scores.as_mut_ptr().add(r * n + p), _mm_mul_ps(hsum4(a), _mm_set1_ps(scale)));
            _mm_storeu_ps(scores.as_mut_ptr().add((r + 1) * n + p), _mm_mul_ps(hsum4(b), _mm_set1_ps(scale)));
            r += 2;
        }
        for r in r..heads.end {
            let q = queries.as_ptr().add(r * hd);
            let mut a = [_mm256_setzero_ps(); 4];
            for c in 0..chunks {
                let qc = _mm256_loadu_ps(q.add(8 * c));
                for (i, acc) in a.iter_mut().enumerate() {
                    *acc = _mm256_fmadd_ps(qc, _mm256_loadu_ps(k.add((p + i) * stride + 8 * c)), *acc);
                }
            }
            _mm_storeu_ps(scores.as_mut_ptr().add(r * n + p), _mm_mul_ps(hsum4(a), _mm_set1_ps(scale)));
        }
    }

    /// The four horizontal sums of `a`, in order.
    #[inline(always)]
    unsafe fn hsum4(a: [__m256; 4]) -> __m128 {
        let h01 = _mm256_hadd_ps(a[0], a[1]);
        let h23 = _mm256_hadd_ps(a[2], a[3]);
        let h = _mm256_hadd_ps(h01, h23);
        _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1))
    }

    #[inline(always)]
    unsafe fn hsum(a: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        let s = _mm_hadd_ps(s, s);
        _mm_cvtss_f32(_mm_hadd_ps(s, s))
    }
}

/// `e^(s - max)` in place; returns their sum.
fn softmax_numerators(scores: &mut [f32]) -> f32 {
    let max = scores.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let mut sum = 0f32;
    for s in scores.iter_mut() {
        *s = (*s - max).exp();
        sum += *s;
    }
    sum
}

/// f32 dot product in eight running sums.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut ac = a.chunks_exact(8);
    let mut bc = b.chunks_exact(8);
    for (x, y) in (&mut ac).zip(&mut bc) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in ac.remainder().iter().zip(bc.remainder()) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    /// A cache holding `rows` (`(positions, kv_dim)`), written in two parts (the growth keeps
    /// the first).
    fn cache(shape: Shape, rows: &[f32]) -> KvCache {
        let kv_dim = shape.n_kv_head * shape.head_dim;
        let mut c = KvCache::new(shape.n_kv_head, shape.head_dim);
        let first = rows.len() / kv_dim / 2;
        c.write(0, &rows[..first * kv_dim], 8);
        c.write(first, &rows[first * kv_dim..], 8);
        c
    }

    #[test]
    fn the_cache_keeps_earlier_positions_when_it_grows_and_drops_later_ones_on_rewrite() {
        let shape = Shape { n_head: 2, n_kv_head: 2, head_dim: 8 };
        let rows = values(20 * 16, 9);
        let mut c = cache(shape, &rows);
        assert_eq!(c.capacity, 24);
        for p in 0..20 {
            for g in 0..2 {
                assert_eq!(c.head(g).row(p, 8), &rows[p * 16 + g * 8..][..8], "position {p} head {g}");
            }
        }
        // Rewriting from position 5 (a reused prefix) replaces what follows.
        c.write(5, &[1.0; 16], 8);
        assert_eq!(c.head(1).row(5, 8), &[1.0; 8]);
        assert_eq!(c.head(1).row(4, 8), &rows[4 * 16 + 8..][..8]);
    }

    /// Plain softmax attention in f64, the definition.
    fn reference(shape: Shape, q: &[f32], k: &[f32], v: &[f32], pos: usize, m: usize) -> Vec<f32> {
        let Shape { n_head, n_kv_head, head_dim: hd } = shape;
        let kv_dim = n_kv_head * hd;
        let mut out = vec![0f32; m * n_head * hd];
        for t in 0..m {
            for h in 0..n_head {
                let g = h / (n_head / n_kv_head);
                let qv = &q[(t * n_head + h) * hd..][..hd];
                let s: Vec<f64> = (0..=pos + t)
                    .map(|p| qv.iter().zip(&k[p * kv_dim + g * hd..][..hd]).map(|(a, b)| *a as f64 * *b as f64).sum::<f64>() / (hd as f64).sqrt())
                    .collect();
                let max = s.iter().cloned().fold(f64::MIN, f64::max);
                let e: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
                let sum: f64 = e.iter().sum();
                for d in 0..hd {
                    let y: f64 = e.iter().enumerate().map(|(p, w)| w * v[p * kv_dim + g * hd + d] as f64).sum::<f64>() / sum;
                    out[(t * n_head + h) * hd + d] = y as f32;
                }
            }
        }
        out
    }

    #[test]
    fn matches_the_definition_for_each_head_size_with_a_cached_prefix() {
        let pool = Pool::new(2);
        for hd in [64, 128, 40] {
            let shape = Shape { n_head: 6, n_kv_head: 2, head_dim: hd };
            // 70 + 7 positions: several value blocks, and key counts that are not multiples of 4.
            let (pos, m) = (70, 7);
            let kv_dim = 2 * hd;
            let q = values(m * 6 * hd, 1);
            let k = values((pos + m) * kv_dim, 2);
            let v = values((pos + m) * kv_dim, 3);
            let mut out = vec![f32::NAN; m * 6 * hd];
            let (kc, vc) = (cache(shape, &k), cache(shape, &v));
            attention(&pool, shape, &q, &kc, &vc, pos, m, &mut out).unwrap();
            let want = reference(shape, &q, &k, &v, pos, m);
            for (i, (a, b)) in out.iter().zip(&want).enumerate() {
                assert!((a - b).abs() < 1e-5, "hd {hd}, value {i}: {a} vs {b}");
            }
        }
    }

    /// Several positions at once give each position the bits it gets alone: a token checked
    /// with its drafts must pick what it would pick decoded one at a time. Key counts on
    /// either side of multiples of four, rows in one block and in several, one and two
    /// threads.
    #[test]
    fn positions_together_give_the_bits_of_each_alone() {
        for threads in [1, 2] {
            let pool = Pool::new(threads);
            for (n_head, n_kv_head, hd) in [(14, 2, 64), (12, 2, 128), (6, 1, 64), (4, 2, 40)] {
                let shape = Shape { n_head, n_kv_head, head_dim: hd };
                let (kv_dim, q_dim) = (n_kv_head * hd, n_head * hd);
                for (pos, m) in [(0, 3), (69, 2), (70, 3), (71, 5), (72, 8), (33, 19)] {
                    let q = values(m * q_dim, 11);
                    let (k, v) = (values((pos + m) * kv_dim, 12), values((pos + m) * kv_dim, 13));
                    let (kc, vc) = (cache(shape, &k), cache(shape, &v));
                    let mut together = vec![f32::NAN; m * q_dim];
                    attention(&pool, shape, &q, &kc, &vc, pos, m, &mut together).unwrap();
                    for t in 0..m {
                        let mut alone = vec![f32::NAN; q_dim];
                        attention(&pool, shape, &q[t * q_dim..(t + 1) * q_dim], &kc, &vc, pos + t, 1, &mut alone).unwrap();
                        let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&together[t * q_dim..(t + 1) * q_dim]), bits(&alone), "shape {n_head}/{n_kv_head}/{hd}, pos {pos}, row {t} of {m}, {threads} threads");
                    }
                }
            }
        }
    }

    /// The portable path (CPUs without AVX2/FMA) on its own.
    #[test]
    fn the_portable_path_matches_the_definition() {
        let shape = Shape { n_head: 2, n_kv_head: 1, head_dim: 24 };
        let (pos, m) = (5, 1);
        let q = values(2 * 24, 4);
        let k = values(6 * 24, 5);
        let v = values(6 * 24, 6);
        let want = reference(shape, &q, &k, &v, pos, m);
        let mut out = vec![0f32; 24];
        let rows = |data| Rows { data, stride: 24, offset: 0 };
        attend_any(&q[24..], rows(&k), rows(&v), 6, 1.0 / 24f32.sqrt(), &mut Vec::new(), &mut out);
        for (a, b) in out.iter().zip(&want[24..]) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    /// Time of one decode step's attention over every layer's cache (the model's layer count,
    /// so the caches come from memory as in the model), of a step with drafts (2 and 4 rows)
    /// and of a 256-token prefill chunk, at the 0.5B's and the 1.5B's shapes:
    /// `cargo test --release --lib attention::tests::attention_speed -- --ignored --nocapture`
    /// (`THREADS`: another thread count).
    #[test]
    #[ignore]
    fn attention_speed() {
        let threads = std::env::var("THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
        let pool = Pool::new(threads);
        for (name, shape, layers) in [
            ("0.5B", Shape { n_head: 14, n_kv_head: 2, head_dim: 64 }, 24),
            ("1.5B", Shape { n_head: 12, n_kv_head: 2, head_dim: 128 }, 28),
        ] {
            let (kv_dim, q_dim) = (shape.n_kv_head * shape.head_dim, shape.n_head * shape.head_dim);
            for (pos, m) in [(1000, 1), (1000, 2), (1000, 4), (744, 256)] {
                let caches: Vec<(KvCache, KvCache)> = (0..layers)
                    .map(|l| (cache(shape, &values((pos + m) * kv_dim, 2 * l as u32)), cache(shape, &values((pos + m) * kv_dim, 2 * l as u32 + 1))))
                    .collect();
                let q = values(m * q_dim, 7);
                let mut out = vec![0f32; m * q_dim];
                let mut best = f64::MAX;
                for _ in 0..10 {
                    let start = std::time::Instant::now();
                    for (k, v) in &caches {
                        attention(&pool, shape, &q, k, v, pos, m, &mut out).unwrap();
                    }
                    best = best.min(start.elapsed().as_secs_f64());
                }
                println!("{name} pos {pos}, m {m}: {:.3} ms for {layers} layers (best of 10)", best * 1e3);
            }
        }
    }

    #[test]
    fn short_caches_are_an_error() {
        let pool = Pool::new(1);
        let shape = Shape { n_head: 2, n_kv_head: 1, head_dim: 64 };
        let mut out = vec![0f32; 128];
        let short = cache(shape, &[0.0; 128]);
        assert!(attention(&pool, shape, &[0.0; 128], &short, &short, 3, 1, &mut out).is_err());
        // A cache of another shape.
        let other = cache(Shape { n_head: 2, n_kv_head: 2, head_dim: 32 }, &[0.0; 256]);
        assert!(attention(&pool, shape, &[0.0; 128], &other, &other, 0, 1, &mut out).is_err());
    }
}
