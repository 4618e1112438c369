//! The linear-attention core of a Qwen3.5 layer on plain `f32` slices: the causal
//! depthwise convolution over the Q/K/V channels and the gated delta rule with one
//! `k_dim x v_dim` state per value head, token after token. The inner loops run along
//! contiguous value dimensions, so the compiler vectorizes them.
//!
//! Math (transformers' `torch_recurrent_gated_delta_rule`, llama.cpp's
//! `ggml_gated_delta_net`), per value head `h` reading key head `kh`:
//! `q = l2norm(q[kh]) / sqrt(k_dim)`, `k = l2norm(k[kh])`, `S *= exp(g[h])`,
//! `delta = (v[h] - Sᵀk) * beta[h]`, `S += k deltaᵀ`, `out[h] = Sᵀq`.

use super::super::kernels::ParFor;
use super::super::pool::SharedOut;
use super::config::Qwen35Config;

/// A linear-attention layer's recurrent state: the last `conv_kernel - 1` inputs of the
/// convolution and the delta-rule state of every value head.
#[derive(Clone, Debug, PartialEq)]
pub struct DeltaState {
    /// `(conv_kernel - 1) x conv_dim`, oldest row first.
    pub conv: Vec<f32>,
    /// `v_heads x k_dim x v_dim`.
    pub state: Vec<f32>,
}

impl DeltaState {
    pub fn new(c: &Qwen35Config) -> Self {
        Self {
            conv: vec![0.0; (c.conv_kernel - 1) * c.conv_dim()],
            state: vec![0.0; c.lin_v_heads * c.lin_k_dim * c.lin_v_dim],
        }
    }

    pub fn reset(&mut self) {
        self.conv.fill(0.0);
        self.state.fill(0.0);
    }
}

/// The layer's weights the core needs (the projections around it are the caller's).
pub struct DeltaWeights<'a> {
    /// `conv_dim x conv_kernel`.
    pub conv: &'a [f32],
    /// Per value head: `-exp(A_log)`, and the bias added before the softplus.
    pub a: &'a [f32],
    pub dt_bias: &'a [f32],
    /// The gated RMSNorm's weight, `v_dim`.
    pub norm: &'a [f32],
}

/// Runs `m` tokens through the core. `qkv` is `m x conv_dim` (the projection before the
/// convolution), `z` is `m x v_heads*v_dim` (the output gate), `alpha` and `beta` are
/// `m x v_heads` (projections before their activations). Writes `m x v_heads*v_dim` into
/// `out` and advances `st`. One thread. False (nothing changed) when a slice is shorter
/// than the shape says.
#[allow(clippy::too_many_arguments)]
pub fn run(c: &Qwen35Config, w: &DeltaWeights, st: &mut DeltaState, qkv: &[f32], z: &[f32], alpha: &[f32], beta: &[f32], m: usize, out: &mut [f32]) -> bool {
    run_with(c, w, st, qkv, z, alpha, beta, m, out, &|n, task| {
        (0..n).for_each(task);
        true
    })
}

/// [`run`] with the value heads spread by `par` (`par(n, task)` runs `task(0..n)`, in any
/// order and on any threads, and says whether all ran): after the convolution, each head's
/// recurrence over the `m` tokens is independent of the others'.
#[allow(clippy::too_many_arguments)]
pub fn run_with(
    c: &Qwen35Config,
    w: &DeltaWeights,
    st: &mut DeltaState,
    qkv: &[f32],
    z: &[f32],
    alpha: &[f32],
    beta: &[f32],
    m: usize,
    out: &mut [f32],
    par: ParFor,
) -> bool {
    let conv_dim = c.conv_dim();
    let (nk, nv, dk, dv) = (c.lin_k_heads, c.lin_v_heads, c.lin_k_dim, c.lin_v_dim);
    let key_dim = nk * dk;
    let eps = c.rms_eps as f32;
    let width = nv * dv;
    let fits = qkv.len() >= m * conv_dim
        && z.len() >= m * width
        && alpha.len() >= m * nv
        && beta.len() >= m * nv
        && out.len() >= m * width
        && w.conv.len() >= conv_dim * c.conv_kernel
        && w.a.len() >= nv
        && w.dt_bias.len() >= nv
        && w.norm.len() >= dv
        && st.conv.len() >= (c.conv_kernel - 1) * conv_dim
        && st.state.len() >= nv * dk * dv;
    if !fits {
        return false;
    }
    let mixed = convolve(c, w, st, qkv, m);
    // Queries and keys, normalized per head (queries also scaled by 1/sqrt(k_dim)).
    let mut qk = vec![0.0f32; m * 2 * key_dim];
    let q_scale = 1.0 / (dk as f32).sqrt();
    for (t, row) in qk.chunks_exact_mut(2 * key_dim).enumerate() {
        row.copy_from_slice(&mixed[t * conv_dim..t * conv_dim + 2 * key_dim]);
        for (i, head) in row.chunks_exact_mut(dk).enumerate() {
            l2_normalize(head, eps, if i < nk { q_scale } else { 1.0 });
        }
    }
    let states = SharedOut::new(&mut st.state);
    let outs = SharedOut::new(out);
    par(nv, &|h| {
        let kh = c.key_head_of(h);
        // SAFETY: head `h` alone touches its state and its columns of `out`; both outlive
        // the step (checked above to hold every head).
        let s = unsafe { states.slice(h * dk * dv..(h + 1) * dk * dv) };
        let mut kv_mem = vec![0.0f32; dv];
        for t in 0..m {
            let row = &qk[t * 2 * key_dim..(t + 1) * 2 * key_dim];
            let (qh, kh_vec) = (&row[kh * dk..(kh + 1) * dk], &row[key_dim + kh * dk..key_dim + (kh + 1) * dk]);
            let v = &mixed[t * conv_dim + 2 * key_dim + h * dv..t * conv_dim + 2 * key_dim + (h + 1) * dv];
            let decay = (w.a[h] * softplus(alpha[t * nv + h] + w.dt_bias[h])).exp();
            let b = sigmoid(beta[t * nv + h]);
            kv_mem.fill(0.0);
            for (i, srow) in s.chunks_exact_mut(dv).enumerate() {
                let ki = kh_vec[i];
                for (mem, sv) in kv_mem.iter_mut().zip(srow.iter_mut()) {
                    *sv *= decay;
                    *mem += *sv * ki;
                }
            }
            for (mem, &vj) in kv_mem.iter_mut().zip(v) {
                *mem = (vj - *mem) * b;
            }
            // SAFETY: as above.
            let oh = unsafe { outs.slice(t * width + h * dv..t * width + (h + 1) * dv) };
            oh.fill(0.0);
            for (i, srow) in s.chunks_exact_mut(dv).enumerate() {
                let (ki, qi) = (kh_vec[i], qh[i]);
                for ((sv, &d), o) in srow.iter_mut().zip(kv_mem.iter()).zip(oh.iter_mut()) {
                    *sv += ki * d;
                    *o += *sv * qi;
                }
            }
            // Gated RMSNorm: normalize, weight, times SiLU of the gate.
            let gate = &z[t * width + h * dv..t * width + (h + 1) * dv];
            let ms = oh.iter().map(|x| x * x).sum::<f32>() / dv as f32;
            let inv = 1.0 / (ms + eps).sqrt();
            for ((o, &wn), &g) in oh.iter_mut().zip(w.norm).zip(gate) {
                *o = *o * inv * wn * silu(g);
            }
        }
    })
}

/// The causal depthwise convolution (with the kept rows) and SiLU of `m` tokens, `m x
/// conv_dim`; keeps the last `conv_kernel - 1` inputs.
fn convolve(c: &Qwen35Config, w: &DeltaWeights, st: &mut DeltaState, qkv: &[f32], m: usize) -> Vec<f32> {
    let conv_dim = c.conv_dim();
    let kernel = c.conv_kernel;
    let mut mixed = vec![0.0f32; m * conv_dim];
    for (t, y_row) in mixed.chunks_exact_mut(conv_dim).enumerate() {
        let x = &qkv[t * conv_dim..(t + 1) * conv_dim];
        for (ch, y) in y_row.iter_mut().enumerate() {
            let taps = &w.conv[ch * kernel..(ch + 1) * kernel];
            let mut acc = taps[kernel - 1] * x[ch];
            for (r, tap) in taps[..kernel - 1].iter().enumerate() {
                acc += tap * st.conv[r * conv_dim + ch];
            }
            *y = silu(acc);
        }
        if kernel > 1 {
            st.conv.copy_within(conv_dim.., 0);
            let last = (kernel - 2) * conv_dim;
            st.conv[last..last + conv_dim].copy_from_slice(x);
        }
    }
    mixed
}

fn l2_normalize(x: &mut [f32], eps: f32, scale: f32) {
    let inv = scale / (x.iter().map(|v| v * v).sum::<f32>() + eps).sqrt();
    x.iter_mut().for_each(|v| *v *= inv);
}

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn softplus(x: f32) -> f32 {
    // torch's softplus (threshold 20): linear above it.
    if x > 20.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::HeadOrder;
    use super::*;

    fn config(order: HeadOrder) -> Qwen35Config {
        Qwen35Config {
            n_layer: 1,
            hidden: 8,
            vocab: 4,
            context_length: 64,
            rms_eps: 1e-6,
            n_head: 1,
            n_kv_head: 1,
            head_dim: 4,
            rope_dim: 2,
            rope_base: 10_000.0,
            lin_k_heads: 1,
            lin_v_heads: 2,
            lin_k_dim: 2,
            lin_v_dim: 2,
            conv_kernel: 3,
            head_order: order,
            recurrent: vec![true],
        }
    }

    fn inputs(m: usize, c: &Qwen35Config) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        let wave = |n: usize, f: f32| (0..n).map(|i| ((i as f32 + 1.0) * f).sin()).collect::<Vec<_>>();
        let nv_dv = c.lin_v_heads * c.lin_v_dim;
        (wave(m * c.conv_dim(), 0.7), wave(m * nv_dv, 1.3), wave(m * c.lin_v_heads, 0.4), wave(m * c.lin_v_heads, 2.1))
    }

    #[test]
    fn token_by_token_equals_all_at_once() {
        let c = config(HeadOrder::Grouped);
        let conv: Vec<f32> = (0..c.conv_dim() * c.conv_kernel).map(|i| (i as f32 * 0.37).cos()).collect();
        let w = DeltaWeights { conv: &conv, a: &[-0.5, -2.0], dt_bias: &[0.1, -0.3], norm: &[1.0, 0.5] };
        let m = 5;
        let (qkv, z, alpha, beta) = inputs(m, &c);
        let width = c.lin_v_heads * c.lin_v_dim;
        let mut all = DeltaState::new(&c);
        let mut out_all = vec![0.0; m * width];
        assert!(run(&c, &w, &mut all, &qkv, &z, &alpha, &beta, m, &mut out_all));
        let mut one = DeltaState::new(&c);
        let mut out_one = vec![0.0; m * width];
        let cd = c.conv_dim();
        let nv = c.lin_v_heads;
        for t in 0..m {
            let o = &mut out_one[t * width..(t + 1) * width];
            assert!(run(&c, &w, &mut one, &qkv[t * cd..(t + 1) * cd], &z[t * width..(t + 1) * width], &alpha[t * nv..(t + 1) * nv], &beta[t * nv..(t + 1) * nv], 1, o));
        }
        assert_eq!(out_all, out_one);
        assert_eq!(all, one);
        assert!(out_all.iter().all(|v| v.is_finite()) && out_all.iter().any(|v| v.abs() > 1e-3));
    }

    #[test]
    fn the_head_order_decides_which_key_head_a_value_head_reads() {
        let mut c = config(HeadOrder::Grouped);
        c.lin_k_heads = 2;
        c.lin_v_heads = 4;
        let conv: Vec<f32> = (0..c.conv_dim() * c.conv_kernel).map(|i| (i as f32 * 0.37).cos()).collect();
        let w = DeltaWeights { conv: &conv, a: &[-0.5, -2.0, -1.0, -0.1], dt_bias: &[0.0; 4], norm: &[1.0, 1.0] };
        let (qkv, z, alpha, beta) = inputs(2, &c);
        let mut outs = Vec::new();
        for order in [HeadOrder::Grouped, HeadOrder::Tiled] {
            c.head_order = order;
            let mut st = DeltaState::new(&c);
            let mut out = vec![0.0; 2 * 4 * 2];
            assert!(run(&c, &w, &mut st, &qkv, &z, &alpha, &beta, 2, &mut out));
            outs.push(out);
        }
        assert_ne!(outs[0], outs[1]);
    }

    #[test]
    fn inputs_shorter_than_the_shape_are_refused_and_change_nothing() {
        let c = config(HeadOrder::Grouped);
        let conv: Vec<f32> = (0..c.conv_dim() * c.conv_kernel).map(|i| (i as f32 * 0.37).cos()).collect();
        let (qkv, z, alpha, beta) = inputs(2, &c);
        let mut st = DeltaState::new(&c);
        let mut out = vec![0.0; 2 * 4];
        let short_a = DeltaWeights { conv: &conv, a: &[-0.5], dt_bias: &[0.1, -0.3], norm: &[1.0, 0.5] };
        assert!(!run(&c, &short_a, &mut st, &qkv, &z, &alpha, &beta, 2, &mut out));
        let w = DeltaWeights { conv: &conv, a: &[-0.5, -2.0], dt_bias: &[0.1, -0.3], norm: &[1.0, 0.5] };
        assert!(!run(&c, &w, &mut st, &qkv[1..], &z, &alpha, &beta, 2, &mut out));
        assert_eq!(st, DeltaState::new(&c));
    }
}
