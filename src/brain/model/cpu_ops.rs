//! The steps our own CPU passes share: products of activation rows with quantized
//! matrices on the pool, RMSNorm, SwiGLU and the rotary embedding on plain slices.

use super::kernels::{InputKind, QuantInput, QuantMatrix};
use super::pool::{Pool, SharedOut};

type Result<T> = candle_core::Result<T>;

/// Chunks each thread gets of one matrix product.
const CHUNKS_PER_THREAD: usize = 4;
/// Least multiply-adds in one chunk (some tens of microseconds).
const MIN_CHUNK_WORK: usize = 1 << 20;

/// Weight rows computed at a time inside a chunk.
const ROW_BLOCK: usize = 16;

/// `gate = silu(gate) * up` (candle's silu: `x / (1 + e^-x)`), split across the pool when
/// long (a 256-token chunk of the 1.5B has 2.3 million, each with an exp).
pub fn swiglu(pool: &Pool, gate: &mut [f32], up: &[f32]) -> Result<()> {
    const PER_CHUNK: usize = 16_384;
    let n = gate.len().min(up.len());
    let shared = SharedOut::new(gate);
    pool.run(n.div_ceil(PER_CHUNK), &|c| {
        let range = c * PER_CHUNK..((c + 1) * PER_CHUNK).min(n);
        // SAFETY: chunks cover disjoint ranges of `gate`, which outlives the step.
        let g = unsafe { shared.slice(range.clone()) };
        for (g, u) in g.iter_mut().zip(up.get(range).unwrap_or_default()) {
            *g = *g / (1.0 + (-*g).exp()) * u;
        }
    })
    .map_err(|e| candle_core::Error::Msg(e.to_string()))
}

/// candle's fused RMSNorm: `x / sqrt(mean(x²) + eps) * w`.
pub fn rms_norm(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
    let sum2: f32 = x.iter().map(|v| v * v).sum();
    let norm = (sum2 / x.len() as f32 + eps).sqrt();
    for ((o, &v), &a) in out.iter_mut().zip(x).zip(w) {
        *o = v / norm * a;
    }
}

/// cos and sin of `position * inv_freq[i]` for positions `pos..pos + m`, `(m, head_dim / 2)`.
pub fn rope_tables(inv_freq: &[f32], pos: usize, m: usize) -> (Vec<f32>, Vec<f32>) {
    let angles: Vec<f32> = (pos..pos + m).flat_map(|p| inv_freq.iter().map(move |&f| p as f32 * f)).collect();
    (angles.iter().map(|a| a.cos()).collect(), angles.iter().map(|a| a.sin()).collect())
}

/// Rotary embedding on one head: the first and second halves are the pair's two parts.
pub fn rope(head: &mut [f32], cos: &[f32], sin: &[f32]) {
    let half = head.len() / 2;
    let (a, b) = head.split_at_mut(half);
    for (((x1, x2), &c), &s) in a.iter_mut().zip(b.iter_mut()).zip(cos).zip(sin) {
        let (v1, v2) = (*x1, *x2);
        *x1 = v1 * c - v2 * s;
        *x2 = v1 * s + v2 * c;
    }
}

/// The logits of one hidden row for the vocabulary rows `ids` only (ascending; every other
/// logit `-inf`), on this thread, each the same bits as [`matmul`] gives it (a weight row's
/// product does not depend on the rows computed beside it). A grammar that allows a few
/// hundred tokens needs a few hundred of the vocabulary's rows, not all of them.
pub fn sparse_logits(output: &QuantMatrix, hidden: &[f32], ids: &[u32], q8_0: &mut QuantInput, q8k: &mut QuantInput) -> Result<Vec<f32>> {
    let (vocab, h) = (output.rows(), output.cols());
    let hidden = hidden.get(..h).ok_or_else(|| candle_core::Error::Msg("projection of a short hidden row".into()))?;
    let input = match output.input_kind() {
        InputKind::Q8_0 => q8_0,
        InputKind::Q8K => q8k,
    };
    input.quantize(output.input_kind(), hidden, 1, h);
    let mut logits = vec![f32::NEG_INFINITY; vocab];
    let mut i = 0;
    // Runs of consecutive ids in one call each.
    while i < ids.len() {
        let start = ids[i] as usize;
        let mut end = start + 1;
        while i + 1 < ids.len() && ids[i + 1] as usize == end {
            end += 1;
            i += 1;
        }
        i += 1;
        if end > vocab {
            candle_core::bail!("token id {} is outside the vocabulary ({vocab})", end - 1);
        }
        output.dot_rows(start..end, input, &mut logits[start..end]);
    }
    Ok(logits)
}

/// Products of the `m` rows of `x` with several matrices in one parallel step:
/// `out[t * rows + j] = dot(x row t, weight row j) (+ bias[j])`.
pub fn matmul(
    pool: &Pool,
    items: &mut [(&QuantMatrix, &mut [f32], Option<&[f32]>)],
    x: &[f32],
    m: usize,
    q8_0: &mut QuantInput,
    q8k: &mut QuantInput,
) -> Result<()> {
    let Some(cols) = items.first().map(|(w, _, _)| w.cols()) else { return Ok(()) };
    let x = x.get(..m * cols).ok_or_else(|| candle_core::Error::Msg("matmul input shorter than its shape".into()))?;
    if items.iter().any(|(w, out, _)| w.cols() != cols || out.len() < m * w.rows()) {
        candle_core::bail!("matmul operands disagree in shape");
    }
    if items.iter().any(|(w, _, _)| w.input_kind() == InputKind::Q8_0) {
        if !q8_0.quantize_with(InputKind::Q8_0, x, m, cols, &|n, task| pool.run(n, task).is_ok()) {
            candle_core::bail!("quantizing a matmul input failed");
        }
    }
    if items.iter().any(|(w, _, _)| w.input_kind() == InputKind::Q8K) {
        if !q8k.quantize_with(InputKind::Q8K, x, m, cols, &|n, task| pool.run(n, task).is_ok()) {
            candle_core::bail!("quantizing a matmul input failed");
        }
    }
    // A few chunks per thread (claimed dynamically, so a busy thread takes fewer), each with
    // enough work that claiming it is noise: with chunks of ~20 rows, claims cost the 1.5B's
    // decode half its speed (28 -> 15 tok/s).
    let chunks_per_matrix = pool.threads() * CHUNKS_PER_THREAD;
    let mut chunks = Vec::new();
    for (i, (w, _, _)) in items.iter().enumerate() {
        let rows_per_chunk = w.rows().div_ceil(chunks_per_matrix).max(MIN_CHUNK_WORK / (cols * m).max(1)).max(1);
        let mut start = 0;
        while start < w.rows() {
            let end = (start + rows_per_chunk).min(w.rows());
            chunks.push((i, start..end));
            start = end;
        }
    }
    let outs: Vec<(SharedOut, usize, Option<&[f32]>)> = items.iter_mut().map(|(w, out, bias)| (SharedOut::new(out), w.rows(), *bias)).collect();
    let (q8_0, q8k) = (&*q8_0, &*q8k);
    let weights: Vec<&QuantMatrix> = items.iter().map(|(w, _, _)| *w).collect();
    pool.run(chunks.len(), &|c| {
        let Some((i, range)) = chunks.get(c) else { return };
        let (Some(w), Some(&(out, n, bias))) = (weights.get(*i), outs.get(*i)) else { return };
        let input = if w.input_kind() == InputKind::Q8_0 { q8_0 } else { q8k };
        // Rows in blocks of ROW_BLOCK: a small buffer (a whole chunk's outputs in prefill ran
        // to megabytes, and fresh pages cost their faults), written out as contiguous runs.
        let mut local = vec![0f32; ROW_BLOCK.min(range.len()) * m];
        let mut start = range.start;
        while start < range.end {
            let end = (start + ROW_BLOCK).min(range.end);
            let block = local.get_mut(..(end - start) * m).unwrap_or_default();
            w.dot_rows(start..end, input, block);
            let bias = bias.and_then(|b| b.get(start..end));
            for t in 0..m {
                // SAFETY: chunk ranges of one matrix are disjoint, so `t * n + start..end`
                // is written by this chunk only; `out` outlives the step.
                let dst = unsafe { out.slice(t * n + start..t * n + end) };
                // Column t of the block (iterators: no bounds checks in the loop).
                let column = block.get(t..).unwrap_or_default().iter().step_by(m);
                match bias {
                    Some(bias) => dst.iter_mut().zip(column).zip(bias).for_each(|((o, v), b)| *o = v + b),
                    None => dst.iter_mut().zip(column).for_each(|(o, v)| *o = *v),
                }
            }
            start = end;
        }
    })
    .map_err(|e| candle_core::Error::Msg(e.to_string()))
}
