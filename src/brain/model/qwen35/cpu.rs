//! Qwen3.5 on our own CPU pass, as [`super::super::cpu_qwen2`] does Qwen2: the GGUF blocks
//! read once into [`QuantMatrix`]es, every projection through the shared quantized
//! products on one [`Pool`] ([`cpu_ops::matmul`]), attention over the shared f32 KV cache,
//! and the linear-attention core on slices ([`delta`]). Matrices of a type our kernels do
//! not take (f32 or f16 files, small tensors a quantizer left unquantized) are kept as f32
//! rows and multiplied on the pool too. The math and the cache are those of
//! [`super::Qwen35`] (candle ops); both are checked against transformers and llama.cpp.

use std::io::{Read, Seek, SeekFrom};

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};

use super::super::attention::{self, KvCache};
use super::super::cpu_ops::{matmul, rms_norm, rope, rope_tables, sparse_logits, swiglu};
use super::super::kernels::{QuantInput, QuantMatrix};
use super::super::pool::{Pool, SharedOut};
use super::checkpoints::{Checkpoints, Recurrent};
use super::config::Qwen35Config;
use super::delta::{self, DeltaState, DeltaWeights};

type Result<T> = candle_core::Result<T>;

/// A tensor's name, its shape, the shape expected.
type ShapeCheck<'a> = (&'a str, (usize, usize), (usize, usize));

/// KV cache growth step, in positions.
const CACHE_STEP: usize = 512;

/// A weight matrix: quantized blocks our kernels take, or f32 rows.
enum Proj {
    Quant(QuantMatrix),
    Dense { rows: usize, cols: usize, w: Vec<f32> },
}

impl Proj {
    fn rows(&self) -> usize {
        match self {
            Proj::Quant(q) => q.rows(),
            Proj::Dense { rows, .. } => *rows,
        }
    }

    fn cols(&self) -> usize {
        match self {
            Proj::Quant(q) => q.cols(),
            Proj::Dense { cols, .. } => *cols,
        }
    }

    fn row(&self, r: usize, out: &mut [f32]) {
        match self {
            Proj::Quant(q) => q.dequantize_row(r, out),
            Proj::Dense { cols, w, .. } => {
                if let (Some(src), Some(dst)) = (w.get(r * cols..(r + 1) * cols), out.get_mut(..*cols)) {
                    dst.copy_from_slice(src);
                }
            }
        }
    }

    fn size_in_bytes(&self) -> usize {
        match self {
            Proj::Quant(q) => q.size_in_bytes(),
            Proj::Dense { w, .. } => w.len() * 4,
        }
    }
}

struct Full {
    wq: Proj,
    wk: Proj,
    wv: Proj,
    wo: Proj,
    q_norm: Vec<f32>,
    k_norm: Vec<f32>,
    k_cache: KvCache,
    v_cache: KvCache,
}

struct Linear {
    qkv: Proj,
    z: Proj,
    alpha: Proj,
    beta: Proj,
    out: Proj,
    conv: Vec<f32>,
    a: Vec<f32>,
    dt_bias: Vec<f32>,
    norm: Vec<f32>,
    state: DeltaState,
}

enum Mixer {
    Full(Full),
    Linear(Linear),
}

struct Layer {
    attn_norm: Vec<f32>,
    post_norm: Vec<f32>,
    mixer: Mixer,
    gate: Proj,
    up: Proj,
    down: Proj,
}

/// Activation buffers, sized for the largest chunk seen so far.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    d: Vec<f32>,
    e: Vec<f32>,
    out: Vec<f32>,
    q8_0: QuantInput,
    q8k: QuantInput,
}

/// Everything a [`CpuQwen35`] has cached, moved out of it.
pub struct CpuQwen35Cache {
    kv: Vec<(KvCache, KvCache)>,
    states: Vec<DeltaState>,
    checkpoints: Checkpoints,
}

pub struct CpuQwen35 {
    config: Qwen35Config,
    embed: Proj,
    /// `None`: tied to the embedding.
    output: Option<Proj>,
    norm: Vec<f32>,
    layers: Vec<Layer>,
    inv_freq: Vec<f32>,
    pool: Pool,
    scratch: Scratch,
    checkpoints: Checkpoints,
}

impl CpuQwen35 {
    pub fn from_gguf<R: Read + Seek>(content: &gguf_file::Content, reader: &mut R, threads: usize) -> Result<Self> {
        let config = Qwen35Config::from_gguf(content)?;
        let c = &config;
        let mut proj = |name: &str| -> Result<Proj> {
            let info = content.tensor_infos.get(name).ok_or_else(|| candle_core::Error::Msg(format!("GGUF has no tensor {name}")))?;
            let (rows, cols) = info.shape.dims2()?;
            if QuantMatrix::supports(info.ggml_dtype) {
                reader.seek(SeekFrom::Start(content.tensor_data_offset + info.offset))?;
                let m = QuantMatrix::read(info.ggml_dtype, rows, cols, reader).map_err(|e| candle_core::Error::Msg(format!("{name}: {e}")))?;
                return Ok(Proj::Quant(m));
            }
            let w = content.tensor(reader, name, &Device::Cpu)?.dequantize(&Device::Cpu)?.flatten_all()?.to_vec1::<f32>()?;
            Ok(Proj::Dense { rows, cols, w })
        };
        let embed = proj("token_embd.weight")?;
        let output = if content.tensor_infos.contains_key("output.weight") { Some(proj("output.weight")?) } else { None };
        let mut mats = Vec::with_capacity(c.n_layer);
        for (i, &recurrent) in c.recurrent.iter().enumerate() {
            let mut m = |suffix: &str| proj(&format!("blk.{i}.{suffix}"));
            let names: &[&str] = if recurrent {
                &["attn_qkv.weight", "attn_gate.weight", "ssm_alpha.weight", "ssm_beta.weight", "ssm_out.weight"]
            } else {
                &["attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight"]
            };
            let mut own = names.iter().map(|n| m(n)).collect::<Result<Vec<_>>>()?;
            own.extend([m("ffn_gate.weight")?, m("ffn_up.weight")?, m("ffn_down.weight")?]);
            mats.push(own);
        }
        let mut vector = |name: &str| -> Result<Vec<f32>> { content.tensor(reader, name, &Device::Cpu)?.dequantize(&Device::Cpu)?.flatten_all()?.to_vec1::<f32>() };
        let norm = vector("output_norm.weight")?;
        let mut layers = Vec::with_capacity(c.n_layer);
        for (i, (&recurrent, own)) in c.recurrent.iter().zip(mats).enumerate() {
            let mut v = |suffix: &str| vector(&format!("blk.{i}.{suffix}"));
            let mut own = own.into_iter();
            let mut next = || own.next().ok_or_else(|| candle_core::Error::Msg("missing matrix".into()));
            let mixer = if recurrent {
                Mixer::Linear(Linear {
                    qkv: next()?,
                    z: next()?,
                    alpha: next()?,
                    beta: next()?,
                    out: next()?,
                    conv: v("ssm_conv1d.weight")?,
                    a: v("ssm_a")?,
                    dt_bias: v("ssm_dt.bias")?,
                    norm: v("ssm_norm.weight")?,
                    state: DeltaState::new(c),
                })
            } else {
                Mixer::Full(Full {
                    wq: next()?,
                    wk: next()?,
                    wv: next()?,
                    wo: next()?,
                    q_norm: v("attn_q_norm.weight")?,
                    k_norm: v("attn_k_norm.weight")?,
                    k_cache: KvCache::new(c.n_kv_head, c.head_dim),
                    v_cache: KvCache::new(c.n_kv_head, c.head_dim),
                })
            };
            layers.push(Layer {
                attn_norm: v("attn_norm.weight")?,
                post_norm: v("post_attention_norm.weight")?,
                mixer,
                gate: next()?,
                up: next()?,
                down: next()?,
            });
        }
        let model = Self {
            inv_freq: (0..c.rope_dim).step_by(2).map(|i| 1.0 / c.rope_base.powf(i as f32 / c.rope_dim as f32)).collect(),
            config,
            embed,
            output,
            norm,
            layers,
            pool: Pool::new(threads),
            scratch: Scratch::default(),
            checkpoints: Checkpoints::default(),
        };
        model.check_shapes()?;
        Ok(model)
    }

    /// Every tensor has the shape the configuration implies (a file that lies about its
    /// shapes gets an error here, not wrong outputs or a panic later).
    fn check_shapes(&self) -> Result<()> {
        let c = &self.config;
        let h = c.hidden;
        let (q_dim, kv_dim, v_dim) = (c.n_head * c.head_dim, c.n_kv_head * c.head_dim, c.lin_v_heads * c.lin_v_dim);
        let vocab = self.embed.rows();
        let mut bad = Vec::new();
        let mut want = |what: String, got: (usize, usize), expected: (usize, usize)| {
            if got != expected {
                bad.push(format!("{what} is {got:?}, expected {expected:?}"));
            }
        };
        want("token_embd".into(), (self.embed.rows(), self.embed.cols()), (vocab, h));
        if let Some(o) = &self.output {
            want("output".into(), (o.rows(), o.cols()), (vocab, h));
        }
        want("output_norm".into(), (self.norm.len(), 1), (h, 1));
        for (i, l) in self.layers.iter().enumerate() {
            let ff = l.gate.rows();
            let mut shapes: Vec<ShapeCheck> = vec![
                ("ffn_gate", (l.gate.rows(), l.gate.cols()), (ff, h)),
                ("ffn_up", (l.up.rows(), l.up.cols()), (ff, h)),
                ("ffn_down", (l.down.rows(), l.down.cols()), (h, ff)),
                ("attn_norm", (l.attn_norm.len(), 1), (h, 1)),
                ("post_attention_norm", (l.post_norm.len(), 1), (h, 1)),
            ];
            match &l.mixer {
                Mixer::Full(a) => shapes.extend([
                    ("attn_q", (a.wq.rows(), a.wq.cols()), (2 * q_dim, h)),
                    ("attn_k", (a.wk.rows(), a.wk.cols()), (kv_dim, h)),
                    ("attn_v", (a.wv.rows(), a.wv.cols()), (kv_dim, h)),
                    ("attn_output", (a.wo.rows(), a.wo.cols()), (h, q_dim)),
                    ("attn_q_norm", (a.q_norm.len(), 1), (c.head_dim, 1)),
                    ("attn_k_norm", (a.k_norm.len(), 1), (c.head_dim, 1)),
                ]),
                Mixer::Linear(a) => shapes.extend([
                    ("attn_qkv", (a.qkv.rows(), a.qkv.cols()), (c.conv_dim(), h)),
                    ("attn_gate", (a.z.rows(), a.z.cols()), (v_dim, h)),
                    ("ssm_alpha", (a.alpha.rows(), a.alpha.cols()), (c.lin_v_heads, h)),
                    ("ssm_beta", (a.beta.rows(), a.beta.cols()), (c.lin_v_heads, h)),
                    ("ssm_out", (a.out.rows(), a.out.cols()), (h, v_dim)),
                    ("ssm_conv1d", (a.conv.len(), 1), (c.conv_dim() * c.conv_kernel, 1)),
                    ("ssm_a", (a.a.len(), 1), (c.lin_v_heads, 1)),
                    ("ssm_dt", (a.dt_bias.len(), 1), (c.lin_v_heads, 1)),
                    ("ssm_norm", (a.norm.len(), 1), (c.lin_v_dim, 1)),
                ]),
            }
            for (name, got, expected) in shapes {
                want(format!("blk.{i}.{name}"), got, expected);
            }
        }
        match bad.first() {
            None => Ok(()),
            Some(first) => candle_core::bail!("unexpected tensor shape: {first}"),
        }
    }

    pub fn config(&self) -> &Qwen35Config {
        &self.config
    }

    pub fn cached_len(&self) -> usize {
        self.checkpoints.len()
    }

    /// Bytes of weights held.
    pub fn weight_bytes(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| {
                let mixer: usize = match &l.mixer {
                    Mixer::Full(a) => [&a.wq, &a.wk, &a.wv, &a.wo].iter().map(|m| m.size_in_bytes()).sum(),
                    Mixer::Linear(a) => [&a.qkv, &a.z, &a.alpha, &a.beta, &a.out].iter().map(|m| m.size_in_bytes()).sum::<usize>() + a.conv.len() * 4,
                };
                mixer + [&l.gate, &l.up, &l.down].iter().map(|m| m.size_in_bytes()).sum::<usize>()
            })
            .sum();
        layers + self.embed.size_in_bytes() + self.output.as_ref().map_or(0, Proj::size_in_bytes)
    }

    pub fn save_cache(&self) -> Option<CpuQwen35Cache> {
        let len = self.cached_len();
        let kv = self
            .layers
            .iter()
            .filter_map(|l| match &l.mixer {
                Mixer::Full(a) => Some((a.k_cache.copy_of(len), a.v_cache.copy_of(len))),
                Mixer::Linear(_) => None,
            })
            .collect();
        Some(CpuQwen35Cache { kv, states: self.states(), checkpoints: self.checkpoints.clone() })
    }

    pub fn restore_cache(&mut self, cache: CpuQwen35Cache) -> bool {
        let full = self.layers.iter().filter(|l| matches!(l.mixer, Mixer::Full(_))).count();
        if cache.kv.len() != full || cache.states.len() != self.layers.len() - full {
            return false;
        }
        self.set_states(&cache.states);
        let full_layers = self.layers.iter_mut().filter_map(|l| match &mut l.mixer {
            Mixer::Full(a) => Some(a),
            Mixer::Linear(_) => None,
        });
        for (layer, (k, v)) in full_layers.zip(cache.kv) {
            layer.k_cache = k;
            layer.v_cache = v;
        }
        self.checkpoints = cache.checkpoints;
        true
    }

    pub fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        let logits = self.forward_rows(tokens, 1)?;
        let vocab = logits.len();
        Tensor::from_vec(logits, vocab, &Device::Cpu)
    }

    pub fn forward_all(&mut self, tokens: &[u32]) -> Result<Tensor> {
        let logits = self.forward_rows(tokens, tokens.len())?;
        let vocab = self.embed.rows();
        Tensor::from_vec(logits, (tokens.len(), vocab), &Device::Cpu)
    }

    /// Runs `tokens` and returns the logits of the last `rows` positions, row after row.
    fn forward_rows(&mut self, tokens: &[u32], rows: usize) -> Result<Vec<f32>> {
        let hidden = self.forward_normed(tokens, rows)?;
        self.project_all(&hidden)
    }

    /// Every token's logits for each of the hidden rows `hidden`, row after row (all
    /// threads).
    fn project_all(&mut self, hidden: &[f32]) -> Result<Vec<f32>> {
        let rows = hidden.len() / self.config.hidden;
        let output = self.output.as_ref().unwrap_or(&self.embed);
        let mut logits = vec![0f32; rows * output.rows()];
        let s = &mut self.scratch;
        project(&self.pool, &mut [(output, &mut logits[..])], hidden, rows, &mut s.q8_0, &mut s.q8k)?;
        Ok(logits)
    }

    /// Runs `tokens` and caches them like [`CpuQwen35::forward_all`], but stops before the
    /// vocabulary projection (248,320 rows, the largest matrix of the small models): the
    /// final-normed hidden state of every position, row after row, for
    /// [`CpuQwen35::project`].
    pub fn forward_hidden(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        self.forward_normed(tokens, tokens.len())
    }

    /// The logits of one row of [`CpuQwen35::forward_hidden`]: every token's, or only those
    /// of `ids` (ascending; the others `-inf`), each the same bits as in the full projection.
    pub fn project(&mut self, hidden: &[f32], ids: Option<&[u32]>) -> Result<Vec<f32>> {
        let h = self.config.hidden;
        let hidden = hidden.get(..h).ok_or_else(|| candle_core::Error::Msg("projection of a short hidden row".into()))?;
        let Some(ids) = ids else { return self.project_all(hidden) };
        let s = &mut self.scratch;
        match self.output.as_ref().unwrap_or(&self.embed) {
            Proj::Quant(q) => sparse_logits(q, hidden, ids, &mut s.q8_0, &mut s.q8k),
            Proj::Dense { rows, cols, w } => {
                let mut logits = vec![f32::NEG_INFINITY; *rows];
                for &id in ids {
                    let j = id as usize;
                    let (Some(row), Some(out)) = (w.get(j * cols..(j + 1) * cols), logits.get_mut(j)) else {
                        candle_core::bail!("token id {id} is outside the vocabulary ({rows})");
                    };
                    *out = dense_dot(row, hidden);
                }
                Ok(logits)
            }
        }
    }

    /// Runs `tokens` (checkpoints kept, the state forgotten on an error) and returns the
    /// final-normed hidden states of the last `rows` positions.
    fn forward_normed(&mut self, tokens: &[u32], rows: usize) -> Result<Vec<f32>> {
        let m = tokens.len();
        if m == 0 {
            candle_core::bail!("forward on no tokens");
        }
        let pos = self.checkpoints.len();
        if pos + m > self.config.context_length {
            candle_core::bail!("{} positions exceed the context length {}", pos + m, self.config.context_length);
        }
        let vocab = self.embed.rows();
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= vocab) {
            candle_core::bail!("token id {bad} is outside the vocabulary ({vocab})");
        }
        if m > 1 {
            self.before_call();
        }
        match self.run(tokens, pos, rows) {
            Ok(hidden) => {
                self.checkpoints.extend(tokens);
                Ok(hidden)
            }
            Err(e) => {
                self.forget();
                Err(e)
            }
        }
    }

    /// The layers over `tokens` at `pos..`, then the final norm of the last `rows` positions.
    fn run(&mut self, tokens: &[u32], pos: usize, rows: usize) -> Result<Vec<f32>> {
        let m = tokens.len();
        let c = self.config.clone();
        let h = c.hidden;
        let s = &mut self.scratch;
        s.x.resize(m * h, 0.0);
        for (row, &t) in s.x.chunks_exact_mut(h).zip(tokens) {
            self.embed.row(t as usize, row);
        }
        let (cos, sin) = rope_tables(&self.inv_freq, pos, m);
        let eps = c.rms_eps as f32;
        for layer in &mut self.layers {
            s.h.resize(m * h, 0.0);
            for (src, dst) in s.x.chunks_exact(h).zip(s.h.chunks_exact_mut(h)) {
                rms_norm(src, &layer.attn_norm, eps, dst);
            }
            s.out.resize(m * h, 0.0);
            match &mut layer.mixer {
                Mixer::Full(a) => full_attention(&self.pool, &c, a, s, pos, m, &cos, &sin)?,
                Mixer::Linear(a) => linear_attention(&self.pool, &c, a, s, m)?,
            }
            for (x, o) in s.x.iter_mut().zip(&s.out) {
                *x += o;
            }
            for (src, dst) in s.x.chunks_exact(h).zip(s.h.chunks_exact_mut(h)) {
                rms_norm(src, &layer.post_norm, eps, dst);
            }
            let ff = layer.gate.rows();
            s.a.resize(m * ff, 0.0);
            s.b.resize(m * ff, 0.0);
            project(&self.pool, &mut [(&layer.gate, &mut s.a[..]), (&layer.up, &mut s.b[..])], &s.h, m, &mut s.q8_0, &mut s.q8k)?;
            swiglu(&self.pool, &mut s.a, &s.b)?;
            project(&self.pool, &mut [(&layer.down, &mut s.out[..])], &s.a, m, &mut s.q8_0, &mut s.q8k)?;
            for (x, o) in s.x.iter_mut().zip(&s.out) {
                *x += o;
            }
        }
        let rows = rows.clamp(1, m);
        let last = s.x.get((m - rows) * h..m * h).unwrap_or_default().to_vec();
        s.h.resize(rows * h, 0.0);
        for (src, dst) in last.chunks_exact(h).zip(s.h.chunks_exact_mut(h)) {
            rms_norm(src, &self.norm, eps, dst);
        }
        Ok(s.h[..rows * h].to_vec())
    }
}

impl Recurrent for CpuQwen35 {
    fn delta_states(&self) -> Vec<&DeltaState> {
        self.layers
            .iter()
            .filter_map(|l| match &l.mixer {
                Mixer::Linear(a) => Some(&a.state),
                Mixer::Full(_) => None,
            })
            .collect()
    }

    fn delta_states_mut(&mut self) -> Vec<&mut DeltaState> {
        self.layers
            .iter_mut()
            .filter_map(|l| match &mut l.mixer {
                Mixer::Linear(a) => Some(&mut a.state),
                Mixer::Full(_) => None,
            })
            .collect()
    }

    fn checkpoints(&self) -> &Checkpoints {
        &self.checkpoints
    }

    fn checkpoints_mut(&mut self) -> &mut Checkpoints {
        &mut self.checkpoints
    }

    /// Nothing to do: the next write at a position drops what was cached past it.
    fn cut_attention(&mut self, _len: usize) {}

    fn replay(&mut self, tokens: &[u32]) -> Result<()> {
        self.forward_rows(tokens, 1).map(|_| ())
    }
}

/// Gated full attention of `m` tokens from `s.h` into `s.out`.
#[allow(clippy::too_many_arguments)]
fn full_attention(pool: &Pool, c: &Qwen35Config, a: &mut Full, s: &mut Scratch, pos: usize, m: usize, cos: &[f32], sin: &[f32]) -> Result<()> {
    let hd = c.head_dim;
    let (q_dim, kv_dim) = (c.n_head * hd, c.n_kv_head * hd);
    let eps = c.rms_eps as f32;
    s.a.resize(m * 2 * q_dim, 0.0);
    s.b.resize(m * kv_dim, 0.0);
    s.c.resize(m * kv_dim, 0.0);
    project(pool, &mut [(&a.wq, &mut s.a[..]), (&a.wk, &mut s.b[..]), (&a.wv, &mut s.c[..])], &s.h, m, &mut s.q8_0, &mut s.q8k)?;
    // Each head's query and output gate are side by side: split them.
    s.d.resize(m * q_dim, 0.0);
    s.e.resize(m * q_dim, 0.0);
    let half = c.rope_dim / 2;
    let mut normed = vec![0f32; hd];
    for t in 0..m {
        let (cos_t, sin_t) = (&cos[t * half..(t + 1) * half], &sin[t * half..(t + 1) * half]);
        for head in 0..c.n_head {
            let src = &s.a[(t * c.n_head + head) * 2 * hd..(t * c.n_head + head + 1) * 2 * hd];
            let at = t * q_dim + head * hd;
            rms_norm(&src[..hd], &a.q_norm, eps, &mut normed);
            rope(&mut normed[..c.rope_dim], cos_t, sin_t);
            s.d[at..at + hd].copy_from_slice(&normed);
            s.e[at..at + hd].copy_from_slice(&src[hd..]);
        }
        for head in s.b[t * kv_dim..(t + 1) * kv_dim].chunks_exact_mut(hd) {
            rms_norm(head, &a.k_norm, eps, &mut normed);
            rope(&mut normed[..c.rope_dim], cos_t, sin_t);
            head.copy_from_slice(&normed);
        }
    }
    a.k_cache.write(pos, &s.b[..m * kv_dim], CACHE_STEP);
    a.v_cache.write(pos, &s.c[..m * kv_dim], CACHE_STEP);
    s.a.resize(m * q_dim, 0.0);
    let shape = attention::Shape { n_head: c.n_head, n_kv_head: c.n_kv_head, head_dim: hd };
    attention::attention(pool, shape, &s.d, &a.k_cache, &a.v_cache, pos, m, &mut s.a[..m * q_dim]).map_err(|e| candle_core::Error::Msg(e.to_string()))?;
    for (y, g) in s.a[..m * q_dim].iter_mut().zip(&s.e) {
        *y /= 1.0 + (-g).exp();
    }
    project(pool, &mut [(&a.wo, &mut s.out[..])], &s.a[..m * q_dim], m, &mut s.q8_0, &mut s.q8k)
}

/// Gated DeltaNet of `m` tokens from `s.h` into `s.out`.
fn linear_attention(pool: &Pool, c: &Qwen35Config, a: &mut Linear, s: &mut Scratch, m: usize) -> Result<()> {
    let (nv, width) = (c.lin_v_heads, c.lin_v_heads * c.lin_v_dim);
    s.a.resize(m * c.conv_dim(), 0.0);
    s.b.resize(m * width, 0.0);
    s.c.resize(m * nv, 0.0);
    s.d.resize(m * nv, 0.0);
    project(
        pool,
        &mut [(&a.qkv, &mut s.a[..]), (&a.z, &mut s.b[..]), (&a.alpha, &mut s.c[..]), (&a.beta, &mut s.d[..])],
        &s.h,
        m,
        &mut s.q8_0,
        &mut s.q8k,
    )?;
    s.e.resize(m * width, 0.0);
    let weights = DeltaWeights { conv: &a.conv, a: &a.a, dt_bias: &a.dt_bias, norm: &a.norm };
    // The value heads of the recurrence run on the pool.
    if !delta::run_with(c, &weights, &mut a.state, &s.a, &s.b, &s.c, &s.d, m, &mut s.e, &|n, task| pool.run(n, task).is_ok()) {
        candle_core::bail!("the linear attention step failed");
    }
    project(pool, &mut [(&a.out, &mut s.out[..])], &s.e[..m * width], m, &mut s.q8_0, &mut s.q8k)
}

/// Products of the `m` rows of `x` with several matrices: the quantized ones in one step
/// of the shared kernels, f32 ones on the pool.
fn project(pool: &Pool, items: &mut [(&Proj, &mut [f32])], x: &[f32], m: usize, q8_0: &mut QuantInput, q8k: &mut QuantInput) -> Result<()> {
    let mut quant = Vec::new();
    let mut dense = Vec::new();
    for (p, out) in items.iter_mut() {
        match p {
            Proj::Quant(q) => quant.push((q, &mut **out, None)),
            Proj::Dense { rows, cols, w } => dense.push((*rows, *cols, w, &mut **out)),
        }
    }
    if !quant.is_empty() {
        matmul(pool, &mut quant, x, m, q8_0, q8k)?;
    }
    for (rows, cols, w, out) in dense {
        dense_matmul(pool, w, rows, cols, x, m, out)?;
    }
    Ok(())
}

/// One f32 weight row times one input row, summed in order.
fn dense_dot(w: &[f32], x: &[f32]) -> f32 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

/// `out[t * rows + j] = dot(x row t, w row j)` for f32 `w`, rows split across the pool.
fn dense_matmul(pool: &Pool, w: &[f32], rows: usize, cols: usize, x: &[f32], m: usize, out: &mut [f32]) -> Result<()> {
    if x.len() < m * cols || out.len() < m * rows || w.len() < rows * cols {
        candle_core::bail!("matmul operands disagree in shape");
    }
    let chunk = rows.div_ceil(pool.threads() * 4).max(1);
    let shared = SharedOut::new(out);
    pool.run(rows.div_ceil(chunk), &|k| {
        let range = k * chunk..((k + 1) * chunk).min(rows);
        for t in 0..m {
            let xt = &x[t * cols..(t + 1) * cols];
            // SAFETY: chunks cover disjoint row ranges of each output row; `out` outlives the step.
            let dst = unsafe { shared.slice(t * rows + range.start..t * rows + range.end) };
            for (o, j) in dst.iter_mut().zip(range.clone()) {
                *o = dense_dot(&w[j * cols..(j + 1) * cols], xt);
            }
        }
    })
    .map_err(|e| candle_core::Error::Msg(e.to_string()))
}
