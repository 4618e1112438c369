//! Qwen2 / Qwen2.5 forward pass on the CPU without candle's tensor ops: the GGUF blocks are
//! read once into [`QuantMatrix`]es, activations live in buffers reused across calls, and
//! every parallel step (the Q/K/V products together, attention, the output product, gate and
//! up together, down, the vocabulary projection) runs on one [`Pool`].
//!
//! Why: on a 2-core machine `perf` showed a decode step through candle spending a third of
//! its time handing ~15 tensor ops per layer to worker threads and waiting at barriers, plus
//! an allocation per op; and candle keeps each K-quant matrix twice (file blocks and a
//! repacked copy), which put the 1.5B model's memory over llama.cpp's by a quarter.
//!
//! The math is [`super::qwen2`]'s (candle-transformers' `quantized_qwen2`): RMSNorm, biased
//! Q/K/V, rotary embeddings on the two halves of each head, grouped-query attention with a
//! causal mask, SwiGLU; inputs to each product are quantized like candle does, so the
//! outputs agree with the candle path to float rounding (`tests/output_equality.rs`).

use std::io::{Read, Seek, SeekFrom};

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};

use super::attention::{self, KvCache};
use super::cpu_ops::{matmul, rms_norm, rope, rope_tables, sparse_logits, swiglu};
use super::kernels::{QuantInput, QuantMatrix};
use super::pool::Pool;
use super::qwen2::Qwen2Config;

type Result<T> = candle_core::Result<T>;


/// KV cache growth step, in positions.
const CACHE_STEP: usize = 512;

struct Layer {
    wq: QuantMatrix,
    wk: QuantMatrix,
    wv: QuantMatrix,
    wo: QuantMatrix,
    gate: QuantMatrix,
    up: QuantMatrix,
    down: QuantMatrix,
    bq: Vec<f32>,
    bk: Vec<f32>,
    bv: Vec<f32>,
    attn_norm: Vec<f32>,
    ffn_norm: Vec<f32>,
    k_cache: KvCache,
    v_cache: KvCache,
}

/// Activation buffers, sized for the largest chunk seen so far.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    attn: Vec<f32>,
    gate: Vec<f32>,
    up: Vec<f32>,
    out: Vec<f32>,
    /// Inputs quantized per kind (a step's matrices may want different kinds).
    q8_0: QuantInput,
    q8k: QuantInput,
}

/// The KV cache of every layer, moved out of a [`CpuQwen2`].
pub struct CpuCache {
    layers: Vec<(KvCache, KvCache)>,
    len: usize,
}

pub struct CpuQwen2 {
    config: Qwen2Config,
    embed: QuantMatrix,
    /// `None`: tied to the embedding.
    output: Option<QuantMatrix>,
    norm: Vec<f32>,
    layers: Vec<Layer>,
    inv_freq: Vec<f32>,
    len: usize,
    pool: Pool,
    scratch: Scratch,
}

/// Whether every matrix of the model in `content` has a type our kernels take.
pub fn supported(content: &gguf_file::Content) -> bool {
    content
        .tensor_infos
        .iter()
        .filter(|(_, info)| info.shape.dims().len() == 2)
        .all(|(_, info)| QuantMatrix::supports(info.ggml_dtype))
}

impl CpuQwen2 {
    pub fn from_gguf<R: Read + Seek>(content: &gguf_file::Content, reader: &mut R, config: Qwen2Config, threads: usize) -> Result<Self> {
        let mut matrix = |name: &str| -> Result<QuantMatrix> {
            let info = content.tensor_infos.get(name).ok_or_else(|| candle_core::Error::Msg(format!("GGUF has no tensor {name}")))?;
            let (rows, cols) = info.shape.dims2()?;
            reader.seek(SeekFrom::Start(content.tensor_data_offset + info.offset))?;
            QuantMatrix::read(info.ggml_dtype, rows, cols, reader).map_err(|e| candle_core::Error::Msg(format!("{name}: {e}")))
        };
        let embed = matrix("token_embd.weight")?;
        let output = if content.tensor_infos.contains_key("output.weight") { Some(matrix("output.weight")?) } else { None };
        let mut layers = Vec::with_capacity(config.n_layer);
        for i in 0..config.n_layer {
            let mut m = |suffix: &str| matrix(&format!("blk.{i}.{suffix}"));
            layers.push(Layer {
                wq: m("attn_q.weight")?,
                wk: m("attn_k.weight")?,
                wv: m("attn_v.weight")?,
                wo: m("attn_output.weight")?,
                gate: m("ffn_gate.weight")?,
                up: m("ffn_up.weight")?,
                down: m("ffn_down.weight")?,
                bq: Vec::new(),
                bk: Vec::new(),
                bv: Vec::new(),
                attn_norm: Vec::new(),
                ffn_norm: Vec::new(),
                k_cache: KvCache::new(config.n_kv_head, config.head_dim),
                v_cache: KvCache::new(config.n_kv_head, config.head_dim),
            });
        }
        let mut vector = |name: &str| -> Result<Vec<f32>> {
            content.tensor(reader, name, &Device::Cpu)?.dequantize(&Device::Cpu)?.flatten_all()?.to_vec1::<f32>()
        };
        let norm = vector("output_norm.weight")?;
        for (i, layer) in layers.iter_mut().enumerate() {
            layer.bq = vector(&format!("blk.{i}.attn_q.bias"))?;
            layer.bk = vector(&format!("blk.{i}.attn_k.bias"))?;
            layer.bv = vector(&format!("blk.{i}.attn_v.bias"))?;
            layer.attn_norm = vector(&format!("blk.{i}.attn_norm.weight"))?;
            layer.ffn_norm = vector(&format!("blk.{i}.ffn_norm.weight"))?;
        }
        let model = Self {
            inv_freq: (0..config.head_dim)
                .step_by(2)
                .map(|i| 1.0 / config.rope_base.powf(i as f32 / config.head_dim as f32))
                .collect(),
            config,
            embed,
            output,
            norm,
            layers,
            len: 0,
            pool: Pool::new(threads),
            scratch: Scratch::default(),
        };
        model.check_shapes()?;
        Ok(model)
    }

    /// Every matrix and vector has the shape the configuration implies (a file that lies
    /// about its shapes gets an error here instead of wrong outputs later).
    fn check_shapes(&self) -> Result<()> {
        let c = &self.config;
        let (h, q_dim, kv_dim) = (c.hidden, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let ff = self.layers.first().map(|l| l.gate.rows()).unwrap_or(0);
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
            for (name, m, shape) in [
                ("attn_q", &l.wq, (q_dim, h)),
                ("attn_k", &l.wk, (kv_dim, h)),
                ("attn_v", &l.wv, (kv_dim, h)),
                ("attn_output", &l.wo, (h, q_dim)),
                ("ffn_gate", &l.gate, (ff, h)),
                ("ffn_up", &l.up, (ff, h)),
                ("ffn_down", &l.down, (h, ff)),
            ] {
                want(format!("blk.{i}.{name}"), (m.rows(), m.cols()), shape);
            }
            for (name, v, len) in [("attn_q.bias", &l.bq, q_dim), ("attn_k.bias", &l.bk, kv_dim), ("attn_v.bias", &l.bv, kv_dim), ("attn_norm", &l.attn_norm, h), ("ffn_norm", &l.ffn_norm, h)] {
                want(format!("blk.{i}.{name}"), (v.len(), 1), (len, 1));
            }
        }
        match bad.first() {
            None => Ok(()),
            Some(first) => candle_core::bail!("unexpected tensor shape: {first}"),
        }
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    pub fn cached_len(&self) -> usize {
        self.len
    }

    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// A copy of the KV cache's positions `0..cached_len()` (a few milliseconds per
    /// thousand positions).
    pub fn save_cache(&self) -> Option<CpuCache> {
        let layers = self.layers.iter().map(|l| (l.k_cache.copy_of(self.len), l.v_cache.copy_of(self.len))).collect();
        Some(CpuCache { layers, len: self.len })
    }

    /// Makes `cache` (from [`CpuQwen2::save_cache`] on this model) the current one; false,
    /// and nothing changed, when it has another number of layers.
    pub fn restore_cache(&mut self, cache: CpuCache) -> bool {
        if cache.layers.len() != self.layers.len() {
            return false;
        }
        for (layer, (k, v)) in self.layers.iter_mut().zip(cache.layers) {
            layer.k_cache = k;
            layer.v_cache = v;
        }
        self.len = cache.len;
        true
    }

    pub fn can_export(&self) -> bool {
        true
    }

    /// The first `len` cached positions as plain values (`None` when fewer are cached).
    pub fn export_cache(&self, len: usize) -> Option<super::CacheImage> {
        if len > self.len {
            return None;
        }
        let c = &self.config;
        let layers = self.layers.iter().map(|l| (l.k_cache.rows(len), l.v_cache.rows(len))).collect();
        Some(super::CacheImage { n_kv_head: c.n_kv_head, head_dim: c.head_dim, len, layers })
    }

    /// Makes `image` the cache; false, and nothing changed, when its shape is not this
    /// model's.
    pub fn import_cache(&mut self, image: super::CacheImage) -> bool {
        let c = &self.config;
        if image.layers.len() != self.layers.len() || image.n_kv_head != c.n_kv_head || image.head_dim != c.head_dim || image.len >= c.context_length {
            return false;
        }
        let (n_kv, hd, len) = (image.n_kv_head, image.head_dim, image.len);
        let Some(caches) = image
            .layers
            .into_iter()
            .map(|(k, v)| Some((KvCache::from_rows(n_kv, hd, len, k)?, KvCache::from_rows(n_kv, hd, len, v)?)))
            .collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        for (layer, (k, v)) in self.layers.iter_mut().zip(caches) {
            layer.k_cache = k;
            layer.v_cache = v;
        }
        self.len = len;
        true
    }

    /// Bytes of weights held (the model's whole resident size but for caches and buffers).
    pub fn weight_bytes(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| [&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down].iter().map(|m| m.size_in_bytes()).sum::<usize>())
            .sum();
        layers + self.embed.size_in_bytes() + self.output.as_ref().map_or(0, |o| o.size_in_bytes())
    }

    /// Runs `tokens` at positions `cached_len()..`, caches them and returns the logits of
    /// the last one, shape `(vocab,)`.
    pub fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        let logits = self.forward_rows(tokens, 1)?;
        let vocab = logits.len();
        Tensor::from_vec(logits, vocab, &Device::Cpu)
    }

    /// [`CpuQwen2::forward`] with the logits of every position, shape `(tokens, vocab)`
    /// (a draft checked in one batch).
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
        matmul(&self.pool, &mut [(output, &mut logits[..], None)], hidden, rows, &mut s.q8_0, &mut s.q8k)?;
        Ok(logits)
    }

    /// Runs `tokens` and caches them like [`CpuQwen2::forward_all`], but stops before the
    /// vocabulary projection: the final-normed hidden state of every position, row after
    /// row, for [`CpuQwen2::project`] to turn into logits when (and where) they are needed.
    pub fn forward_hidden(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        self.forward_normed(tokens, tokens.len())
    }

    /// The logits of one row of [`CpuQwen2::forward_hidden`]: every token's, or only those
    /// of `ids` (the others `-inf`), each the same bits as in the full projection (a weight
    /// row's product does not depend on the rows computed beside it). A grammar that allows
    /// a few hundred tokens needs a few hundred of the vocabulary's rows, not all of them.
    pub fn project(&mut self, hidden: &[f32], ids: Option<&[u32]>) -> Result<Vec<f32>> {
        let h = self.config.hidden;
        let hidden = hidden.get(..h).ok_or_else(|| candle_core::Error::Msg("projection of a short hidden row".into()))?;
        let Some(ids) = ids else { return self.project_all(hidden) };
        let output = self.output.as_ref().unwrap_or(&self.embed);
        sparse_logits(output, hidden, ids, &mut self.scratch.q8_0, &mut self.scratch.q8k)
    }

    /// Runs `tokens` and returns the final-normed hidden states of the last `rows`
    /// positions, row after row.
    fn forward_normed(&mut self, tokens: &[u32], rows: usize) -> Result<Vec<f32>> {
        let m = tokens.len();
        if m == 0 {
            candle_core::bail!("forward on no tokens");
        }
        let pos = self.len;
        if pos + m > self.config.context_length {
            candle_core::bail!("{} positions exceed the context length {}", pos + m, self.config.context_length);
        }
        let vocab = self.embed.rows();
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= vocab) {
            candle_core::bail!("token id {bad} is outside the vocabulary ({vocab})");
        }
        let c = self.config.clone();
        let h = c.hidden;
        let s = &mut self.scratch;
        s.x.resize(m * h, 0.0);
        for (row, &t) in s.x.chunks_exact_mut(h).zip(tokens) {
            self.embed.dequantize_row(t as usize, row);
        }
        let (cos, sin) = rope_tables(&self.inv_freq, pos, m);
        for layer in &mut self.layers {
            layer_forward(&self.pool, &c, layer, s, pos, m, &cos, &sin)?;
        }
        self.len = pos + m;

        // Only the positions asked for go through the vocabulary projection.
        let rows = rows.clamp(1, m);
        let mut hidden = vec![0f32; rows * h];
        let last = s.x.get((m - rows) * h..m * h).unwrap_or_default();
        for (src, dst) in last.chunks_exact(h).zip(hidden.chunks_exact_mut(h)) {
            rms_norm(src, &self.norm, c.rms_eps as f32, dst);
        }
        Ok(hidden)
    }
}

#[allow(clippy::too_many_arguments)]
fn layer_forward(pool: &Pool, c: &Qwen2Config, l: &mut Layer, s: &mut Scratch, pos: usize, m: usize, cos: &[f32], sin: &[f32]) -> Result<()> {
    let h = c.hidden;
    let (q_dim, kv_dim) = (c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
    let ff = l.gate.rows();
    s.h.resize(m * h, 0.0);
    for (src, dst) in s.x.chunks_exact(h).zip(s.h.chunks_exact_mut(h)) {
        rms_norm(src, &l.attn_norm, c.rms_eps as f32, dst);
    }
    s.q.resize(m * q_dim, 0.0);
    s.k.resize(m * kv_dim, 0.0);
    s.v.resize(m * kv_dim, 0.0);
    matmul(
        pool,
        &mut [(&l.wq, &mut s.q[..], Some(&l.bq[..])), (&l.wk, &mut s.k[..], Some(&l.bk[..])), (&l.wv, &mut s.v[..], Some(&l.bv[..]))],
        &s.h,
        m,
        &mut s.q8_0,
        &mut s.q8k,
    )?;
    for t in 0..m {
        let (cos_t, sin_t) = (&cos[t * c.head_dim / 2..(t + 1) * c.head_dim / 2], &sin[t * c.head_dim / 2..(t + 1) * c.head_dim / 2]);
        for head in s.q[t * q_dim..(t + 1) * q_dim].chunks_exact_mut(c.head_dim) {
            rope(head, cos_t, sin_t);
        }
        for head in s.k[t * kv_dim..(t + 1) * kv_dim].chunks_exact_mut(c.head_dim) {
            rope(head, cos_t, sin_t);
        }
    }
    l.k_cache.write(pos, &s.k[..m * kv_dim], CACHE_STEP);
    l.v_cache.write(pos, &s.v[..m * kv_dim], CACHE_STEP);
    s.attn.resize(m * q_dim, 0.0);
    let shape = attention::Shape { n_head: c.n_head, n_kv_head: c.n_kv_head, head_dim: c.head_dim };
    attention::attention(pool, shape, &s.q, &l.k_cache, &l.v_cache, pos, m, &mut s.attn).map_err(|e| candle_core::Error::Msg(e.to_string()))?;
    s.out.resize(m * h, 0.0);
    matmul(pool, &mut [(&l.wo, &mut s.out[..], None)], &s.attn, m, &mut s.q8_0, &mut s.q8k)?;
    for (x, o) in s.x.iter_mut().zip(&s.out) {
        *x += o;
    }

    for (src, dst) in s.x.chunks_exact(h).zip(s.h.chunks_exact_mut(h)) {
        rms_norm(src, &l.ffn_norm, c.rms_eps as f32, dst);
    }
    s.gate.resize(m * ff, 0.0);
    s.up.resize(m * ff, 0.0);
    matmul(pool, &mut [(&l.gate, &mut s.gate[..], None), (&l.up, &mut s.up[..], None)], &s.h, m, &mut s.q8_0, &mut s.q8k)?;
    swiglu(pool, &mut s.gate, &s.up)?;
    matmul(pool, &mut [(&l.down, &mut s.out[..], None)], &s.gate, m, &mut s.q8_0, &mut s.q8k)?;
    for (x, o) in s.x.iter_mut().zip(&s.out) {
        *x += o;
    }
    Ok(())
}
