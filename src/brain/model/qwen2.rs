//! Qwen2 / Qwen2.5 forward pass over a quantized GGUF, with a KV cache we own.
//!
//! The math follows candle-transformers' `quantized_qwen2` (same weights, RoPE, biases,
//! RMSNorm, SwiGLU). What differs: the cache is a preallocated buffer per layer that can
//! be cut back to any length, so a prompt that shares a prefix with the previous one only
//! runs its new tokens; grouped-query attention folds the query heads of a group onto the
//! key/value head instead of copying K and V `n_head / n_kv_head` times; and only the last
//! position goes through the vocabulary projection.
//!
//! Speed (measured with `b4 perf`): Q5_0 weights (most of the 0.5B) go through our own
//! bit-identical vectorized kernel ([`super::q5_0`]) instead of candle's scalar loop, and
//! the token embedding stays quantized (rows are dequantized as they are looked up), which
//! keeps hundreds of MiB of f32 out of memory.

use std::io::{Read, Seek};

use std::sync::Arc;

use candle_core::quantized::{gguf_file, QMatMul, QTensor};
use candle_core::{DType, Device, Module, Tensor};
use candle_transformers::quantized_nn::RmsNorm;

use super::common::{causal_mask, rope_tables, LayerCache};
use super::q5_0::Q5_0Matrix;

type Result<T> = candle_core::Result<T>;

/// The KV cache of every layer, moved out of a [`Qwen2`].
pub struct Qwen2Cache(Vec<LayerCache>);

/// A weight matrix: Q5_0 on our kernel (CPU), anything else on candle's.
enum Linear {
    Q5_0(Q5_0Matrix),
    Candle(QMatMul),
}

impl Linear {
    fn new(t: QTensor, device: &Device) -> Result<Self> {
        if device.is_cpu() {
            if let Some(m) = Q5_0Matrix::from_qtensor(&t)? {
                return Ok(Linear::Q5_0(m));
            }
        }
        Ok(Linear::Candle(QMatMul::from_qtensor(t)?))
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Linear::Q5_0(m) => m.forward(x),
            Linear::Candle(m) => m.forward(x),
        }
    }
}

struct Layer {
    wq: Linear,
    wk: Linear,
    wv: Linear,
    bq: Tensor,
    bk: Tensor,
    bv: Tensor,
    wo: Linear,
    attn_norm: RmsNorm,
    ffn_norm: RmsNorm,
    gate: Linear,
    up: Linear,
    down: Linear,
    cache: LayerCache,
}

/// Model hyper-parameters read from the GGUF metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Qwen2Config {
    pub n_layer: usize,
    pub n_head: usize,
    pub n_kv_head: usize,
    pub hidden: usize,
    pub head_dim: usize,
    pub context_length: usize,
    pub rms_eps: f64,
    pub rope_base: f32,
}

impl Qwen2Config {
    /// The hyper-parameters in a GGUF file's `qwen2.*` metadata.
    pub fn from_gguf(content: &gguf_file::Content) -> Result<Self> {
        let md = |key: &str| {
            content
                .metadata
                .get(key)
                .ok_or_else(|| candle_core::Error::Msg(format!("GGUF metadata has no {key}")))
        };
        let n_head = md("qwen2.attention.head_count")?.to_u32()? as usize;
        let n_kv_head = md("qwen2.attention.head_count_kv")?.to_u32()? as usize;
        let hidden = md("qwen2.embedding_length")?.to_u32()? as usize;
        let config = Qwen2Config {
            n_layer: md("qwen2.block_count")?.to_u32()? as usize,
            n_head,
            n_kv_head,
            hidden,
            head_dim: hidden / n_head.max(1),
            context_length: md("qwen2.context_length")?.to_u32()? as usize,
            rms_eps: f64::from(md("qwen2.attention.layer_norm_rms_epsilon")?.to_f32()?),
            rope_base: md("qwen2.rope.freq_base").and_then(|v| v.to_f32()).unwrap_or(10_000.0),
        };
        if n_head == 0 || n_kv_head == 0 || !n_head.is_multiple_of(n_kv_head) || !hidden.is_multiple_of(n_head) {
            candle_core::bail!("inconsistent head counts: {n_head} heads, {n_kv_head} kv heads, hidden {hidden}");
        }
        Ok(config)
    }
}

pub struct Qwen2 {
    config: Qwen2Config,
    /// Quantized; rows are dequantized when looked up.
    embed: QMatMul,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: Linear,
    cos: Tensor,
    sin: Tensor,
    device: Device,
}

impl Qwen2 {
    pub fn from_gguf<R: Read + Seek>(content: &gguf_file::Content, reader: &mut R, device: &Device) -> Result<Self> {
        let config = Qwen2Config::from_gguf(content)?;
        let mut tensor = |name: &str| content.tensor(reader, name, device);

        let embed_q = Arc::new(tensor("token_embd.weight")?);
        let embed = QMatMul::QTensor(embed_q.clone());
        let output = match tensor("output.weight") {
            Ok(w) => Linear::new(w, device)?,
            // Tied embeddings.
            Err(_) => Linear::Candle(QMatMul::QTensor(embed_q)),
        };
        let norm = RmsNorm::from_qtensor(tensor("output_norm.weight")?, config.rms_eps)?;

        let mut layers = Vec::with_capacity(config.n_layer);
        for i in 0..config.n_layer {
            let mut t = |suffix: &str| tensor(&format!("blk.{i}.{suffix}"));
            layers.push(Layer {
                wq: Linear::new(t("attn_q.weight")?, device)?,
                wk: Linear::new(t("attn_k.weight")?, device)?,
                wv: Linear::new(t("attn_v.weight")?, device)?,
                bq: t("attn_q.bias")?.dequantize(device)?,
                bk: t("attn_k.bias")?.dequantize(device)?,
                bv: t("attn_v.bias")?.dequantize(device)?,
                wo: Linear::new(t("attn_output.weight")?, device)?,
                attn_norm: RmsNorm::from_qtensor(t("attn_norm.weight")?, config.rms_eps)?,
                ffn_norm: RmsNorm::from_qtensor(t("ffn_norm.weight")?, config.rms_eps)?,
                gate: Linear::new(t("ffn_gate.weight")?, device)?,
                up: Linear::new(t("ffn_up.weight")?, device)?,
                down: Linear::new(t("ffn_down.weight")?, device)?,
                cache: LayerCache::new(),
            });
        }
        let (cos, sin) = rope_tables(config.head_dim, config.rope_base, config.context_length, device)?;
        Ok(Self { config, embed, layers, norm, output, cos, sin, device: device.clone() })
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    /// Positions held in the cache.
    pub fn cached_len(&self) -> usize {
        self.layers.first().map(|l| l.cache.len).unwrap_or(0)
    }

    /// Forgets cached positions from `len` on (the buffers stay allocated).
    pub fn truncate(&mut self, len: usize) {
        for layer in &mut self.layers {
            layer.cache.len = layer.cache.len.min(len);
        }
    }

    /// A copy of the KV cache (`None` when a copy fails, e.g. out of device memory).
    pub fn save_cache(&self) -> Option<Qwen2Cache> {
        let layers: Result<Vec<LayerCache>> = self.layers.iter().map(|l| l.cache.copy()).collect();
        layers.ok().map(Qwen2Cache)
    }

    pub fn can_export(&self) -> bool {
        matches!(self.device, Device::Cpu)
    }

    /// The first `len` cached positions as plain values (`None` when fewer are cached, or
    /// off the CPU).
    pub fn export_cache(&self, len: usize) -> Option<super::CacheImage> {
        if !matches!(self.device, Device::Cpu) {
            return None;
        }
        let c = &self.config;
        let values = |t: &Option<Tensor>, held: usize| -> Option<Vec<f32>> {
            if len > held {
                return None;
            }
            match t {
                Some(t) => t.narrow(2, 0, len).ok()?.to_dtype(DType::F32).ok()?.flatten_all().ok()?.to_vec1().ok(),
                None if len == 0 => Some(Vec::new()),
                None => None,
            }
        };
        let layers = self
            .layers
            .iter()
            .map(|l| Some((values(&l.cache.k, l.cache.len)?, values(&l.cache.v, l.cache.len)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(super::CacheImage { n_kv_head: c.n_kv_head, head_dim: c.head_dim, len, layers })
    }

    /// Makes `image` the cache; false, and nothing changed, when its shape is not this
    /// model's (or off the CPU).
    pub fn import_cache(&mut self, image: super::CacheImage) -> bool {
        let c = &self.config;
        if !matches!(self.device, Device::Cpu) || image.layers.len() != self.layers.len() || image.n_kv_head != c.n_kv_head || image.head_dim != c.head_dim || image.len >= c.context_length {
            return false;
        }
        let (n_kv, hd, len) = (image.n_kv_head, image.head_dim, image.len);
        let tensor = |data: Vec<f32>| Tensor::from_vec(data, (1, n_kv, len, hd), &Device::Cpu).ok();
        let Some(caches) = image
            .layers
            .into_iter()
            .map(|(k, v)| Some(LayerCache { k: Some(tensor(k)?), v: Some(tensor(v)?), len }))
            .collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        for (layer, cache) in self.layers.iter_mut().zip(caches) {
            layer.cache = cache;
        }
        true
    }

    /// Makes `cache` (from [`Qwen2::save_cache`] on this model) the current one; false, and
    /// nothing changed, when it has another number of layers.
    pub fn restore_cache(&mut self, cache: Qwen2Cache) -> bool {
        if cache.0.len() != self.layers.len() {
            return false;
        }
        for (layer, saved) in self.layers.iter_mut().zip(cache.0) {
            layer.cache = saved;
        }
        true
    }

    /// Runs `tokens` at positions `cached_len()..`, adds them to the cache and returns the
    /// logits of the last one, shape `(vocab,)`.
    pub fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.forward_rows(tokens, 1)?.flatten_all()
    }

    /// [`Qwen2::forward`] with the logits of every position, shape `(tokens, vocab)`.
    pub fn forward_all(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.forward_rows(tokens, tokens.len())?.squeeze(0)
    }

    /// Runs `tokens`; the logits of the last `rows` positions, `(1, rows, vocab)` f32.
    fn forward_rows(&mut self, tokens: &[u32], rows: usize) -> Result<Tensor> {
        let s = tokens.len();
        if s == 0 {
            candle_core::bail!("forward on no tokens");
        }
        let pos = self.cached_len();
        if pos + s > self.config.context_length {
            candle_core::bail!("{} positions exceed the context length {}", pos + s, self.config.context_length);
        }
        let ids = Tensor::new(tokens, &self.device)?;
        let mut x = self.embed.embedding(&ids)?.unsqueeze(0)?;
        let cos = self.cos.narrow(0, pos, s)?;
        let sin = self.sin.narrow(0, pos, s)?;
        let mask = if s > 1 { Some(causal_mask(s, pos, &self.device)?) } else { None };
        let config = self.config.clone();
        for layer in &mut self.layers {
            let h = layer.attn_norm.forward(&x)?;
            let attn = attention(layer, &config, &h, &cos, &sin, mask.as_ref())?;
            x = (attn + x)?;
            let h = layer.ffn_norm.forward(&x)?;
            let gate = candle_nn::ops::silu(&layer.gate.forward(&h)?)?;
            let mlp = layer.down.forward(&(gate * layer.up.forward(&h)?)?)?;
            x = (mlp + x)?;
        }
        let rows = rows.clamp(1, s);
        let last = x.narrow(1, s - rows, rows)?;
        let last = self.norm.forward(&last)?;
        self.output.forward(&last)?.to_dtype(DType::F32)
    }
}

fn attention(
    layer: &mut Layer,
    c: &Qwen2Config,
    x: &Tensor,
    cos: &Tensor,
    sin: &Tensor,
    mask: Option<&Tensor>,
) -> Result<Tensor> {
    let (b, s, _) = x.dims3()?;
    let heads = |w: &Linear, bias: &Tensor, n: usize| -> Result<Tensor> {
        w.forward(x)?
            .broadcast_add(bias)?
            .reshape((b, s, n, c.head_dim))?
            .transpose(1, 2)?
            .contiguous()
    };
    let q = candle_nn::rotary_emb::rope(&heads(&layer.wq, &layer.bq, c.n_head)?, cos, sin)?;
    let k = candle_nn::rotary_emb::rope(&heads(&layer.wk, &layer.bk, c.n_kv_head)?, cos, sin)?;
    let v = heads(&layer.wv, &layer.bv, c.n_kv_head)?;
    let (k, v) = layer.cache.append(&k, &v, c.context_length)?;
    let kv_len = k.dim(2)?;

    // The query heads sharing one K/V head are consecutive: view them as one longer query
    // sequence against that head, (b, n_kv, n_rep * s, head_dim).
    let n_rep = c.n_head / c.n_kv_head;
    let q = q.reshape((b, c.n_kv_head, n_rep * s, c.head_dim))?;
    let scale = 1.0 / (c.head_dim as f64).sqrt();
    let scores = (q.matmul(&k.t()?)? * scale)?;
    let scores = match mask {
        Some(mask) => scores
            .reshape((b, c.n_kv_head, n_rep, s, kv_len))?
            .broadcast_add(mask)?
            .reshape((b, c.n_kv_head, n_rep * s, kv_len))?,
        None => scores,
    };
    let probs = candle_nn::ops::softmax_last_dim(&scores)?;
    let y = probs.matmul(&v)?;
    let y = y
        .reshape((b, c.n_head, s, c.head_dim))?
        .transpose(1, 2)?
        .reshape((b, s, c.n_head * c.head_dim))?;
    layer.wo.forward(&y)
}
