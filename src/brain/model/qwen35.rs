//! Qwen3.5 dense text models: layers of Gated DeltaNet linear attention mixed with gated
//! full attention in the pattern the config gives, on candle ops, from a GGUF file
//! (llama.cpp's `qwen35` names and layouts) or a Hugging Face folder (`qwen3_5_text`, or
//! the text part of the multimodal `qwen3_5` checkpoint).
//!
//! Full attention: one projection gives each head's query and an output gate; RMSNorm on
//! queries and keys per head; rotary embedding on the first `rope_dim` dimensions of a
//! head (the two halves of that part, as transformers' `rotate_half`; text positions make
//! Qwen3.5's multimodal rotary the plain one); the output times `sigmoid(gate)`.
//! Linear attention: see [`delta`]. Norms: stored as llama.cpp does (Hugging Face's
//! zero-centred `1 + w` is added up at load), the gated norm of the linear layers as is.
//!
//! The cache: full-attention layers keep K and V and can be cut back to any length; the
//! recurrent state of a linear layer cannot, so the model keeps checkpoints of it (at the
//! positions [`Qwen35::mark`] names, e.g. where a decision's prompt ends, and before each
//! multi-token call, which a rejected draft rolls back to). Cutting back to a position
//! between checkpoints restores the one before it and runs the tokens after it again.

mod checkpoints;
pub mod config;
mod cpu;
pub mod delta;

use std::io::{Read, Seek};

use candle_core::quantized::{gguf_file, QMatMul};
use candle_core::{DType, Device, Module, Tensor, D};
use candle_nn::VarBuilder;

pub use config::Qwen35Config;
pub use cpu::CpuQwen35;
pub use checkpoints::Recurrent;
use checkpoints::Checkpoints;
use delta::{DeltaState, DeltaWeights};

use super::common::{causal_mask, LayerCache};

type Result<T> = candle_core::Result<T>;

/// A weight matrix: quantized (GGUF) or plain in the file's dtype (safetensors).
struct Linear {
    mm: QMatMul,
    dtype: DType,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if self.dtype == DType::F32 {
            return self.mm.forward(x);
        }
        self.mm.forward(&x.to_dtype(self.dtype)?)?.to_dtype(DType::F32)
    }
}

struct FullAttention {
    /// Per head: the query, then its output gate.
    wq: Linear,
    wk: Linear,
    wv: Linear,
    wo: Linear,
    q_norm: Tensor,
    k_norm: Tensor,
    cache: LayerCache,
}

struct LinearAttention {
    qkv: Linear,
    /// The output gate of the gated norm.
    z: Linear,
    alpha: Linear,
    beta: Linear,
    out: Linear,
    conv: Vec<f32>,
    a: Vec<f32>,
    dt_bias: Vec<f32>,
    norm: Vec<f32>,
    state: DeltaState,
}

enum Mixer {
    Full(FullAttention),
    Linear(LinearAttention),
}

struct Layer {
    attn_norm: Tensor,
    post_norm: Tensor,
    mixer: Mixer,
    gate: Linear,
    up: Linear,
    down: Linear,
}

/// Everything a [`Qwen35`] has cached, moved out of it.
pub struct Qwen35Cache {
    kv: Vec<LayerCache>,
    states: Vec<DeltaState>,
    checkpoints: Checkpoints,
}

pub struct Qwen35 {
    config: Qwen35Config,
    embed: QMatMul,
    layers: Vec<Layer>,
    norm: Tensor,
    output: Linear,
    inv_freq: Tensor,
    device: Device,
    checkpoints: Checkpoints,
}

/// Where a model's tensors come from, under llama.cpp's names (`blk.N.…`); each source
/// maps them to its own and applies its conventions.
trait Weights {
    fn matrix(&mut self, name: &str) -> Result<Linear>;
    /// A vector or small matrix as f32 values, row after row.
    fn values(&mut self, name: &str) -> Result<Vec<f32>>;
    fn has(&self, name: &str) -> bool;
    fn embedding(&mut self) -> Result<QMatMul>;
}

struct GgufWeights<'a, R> {
    content: &'a gguf_file::Content,
    reader: &'a mut R,
    device: Device,
}

impl<R: Read + Seek> Weights for GgufWeights<'_, R> {
    fn matrix(&mut self, name: &str) -> Result<Linear> {
        let t = self.content.tensor(self.reader, name, &self.device)?;
        Ok(Linear { mm: QMatMul::from_qtensor(t)?, dtype: DType::F32 })
    }
    fn values(&mut self, name: &str) -> Result<Vec<f32>> {
        self.content.tensor(self.reader, name, &Device::Cpu)?.dequantize(&Device::Cpu)?.flatten_all()?.to_vec1()
    }
    fn has(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }
    fn embedding(&mut self) -> Result<QMatMul> {
        Ok(QMatMul::QTensor(std::sync::Arc::new(self.content.tensor(self.reader, "token_embd.weight", &self.device)?)))
    }
}

/// Hugging Face names: `model.layers.N.…` (`model.language_model.…` in the multimodal
/// checkpoint), zero-centred norms, `A_log`, a `(channels, 1, kernel)` convolution.
struct HfWeights<'a> {
    vb: VarBuilder<'a>,
    prefix: &'static str,
}

impl<'a> HfWeights<'a> {
    fn new(vb: VarBuilder<'a>) -> Self {
        let prefix = if vb.contains_tensor("model.language_model.embed_tokens.weight") { "model.language_model" } else { "model" };
        Self { vb, prefix }
    }

    /// The Hugging Face name of a llama.cpp one, and whether it is a zero-centred norm.
    fn name(&self, gguf: &str) -> (String, bool) {
        let p = self.prefix;
        match gguf {
            "token_embd.weight" => return (format!("{p}.embed_tokens.weight"), false),
            "output_norm.weight" => return (format!("{p}.norm.weight"), true),
            "output.weight" => return ("lm_head.weight".into(), false),
            _ => {}
        }
        let rest = gguf.strip_prefix("blk.").unwrap_or(gguf);
        let (layer, what) = rest.split_once('.').unwrap_or(("0", rest));
        let (hf, centred) = match what {
            "attn_norm.weight" => ("input_layernorm.weight", true),
            "post_attention_norm.weight" => ("post_attention_layernorm.weight", true),
            "attn_q.weight" => ("self_attn.q_proj.weight", false),
            "attn_k.weight" => ("self_attn.k_proj.weight", false),
            "attn_v.weight" => ("self_attn.v_proj.weight", false),
            "attn_output.weight" => ("self_attn.o_proj.weight", false),
            "attn_q_norm.weight" => ("self_attn.q_norm.weight", true),
            "attn_k_norm.weight" => ("self_attn.k_norm.weight", true),
            "attn_qkv.weight" => ("linear_attn.in_proj_qkv.weight", false),
            "attn_gate.weight" => ("linear_attn.in_proj_z.weight", false),
            "ssm_beta.weight" => ("linear_attn.in_proj_b.weight", false),
            "ssm_alpha.weight" => ("linear_attn.in_proj_a.weight", false),
            "ssm_out.weight" => ("linear_attn.out_proj.weight", false),
            "ssm_conv1d.weight" => ("linear_attn.conv1d.weight", false),
            "ssm_dt.bias" => ("linear_attn.dt_bias", false),
            "ssm_a" => ("linear_attn.A_log", false),
            "ssm_norm.weight" => ("linear_attn.norm.weight", false),
            "ffn_gate.weight" => ("mlp.gate_proj.weight", false),
            "ffn_up.weight" => ("mlp.up_proj.weight", false),
            "ffn_down.weight" => ("mlp.down_proj.weight", false),
            other => return (other.to_string(), false),
        };
        (format!("{p}.layers.{layer}.{hf}"), centred)
    }
}

impl Weights for HfWeights<'_> {
    fn matrix(&mut self, name: &str) -> Result<Linear> {
        let (hf, _) = self.name(name);
        let t = self.vb.get_unchecked(&hf)?;
        Ok(Linear { dtype: t.dtype(), mm: QMatMul::Tensor(t) })
    }
    fn values(&mut self, name: &str) -> Result<Vec<f32>> {
        let (hf, centred) = self.name(name);
        let t = self.vb.get_unchecked_dtype(&hf, DType::F32)?.to_device(&Device::Cpu)?.flatten_all()?;
        let t = if centred { (t + 1.0)? } else { t };
        let t = if name.ends_with("ssm_a") { t.exp()?.neg()? } else { t };
        t.to_vec1()
    }
    fn has(&self, name: &str) -> bool {
        self.vb.contains_tensor(&self.name(name).0)
    }
    fn embedding(&mut self) -> Result<QMatMul> {
        Ok(QMatMul::Tensor(self.vb.get_unchecked(&self.name("token_embd.weight").0)?))
    }
}

impl Qwen35 {
    pub fn from_gguf<R: Read + Seek>(content: &gguf_file::Content, reader: &mut R, device: &Device) -> Result<Self> {
        let config = Qwen35Config::from_gguf(content)?;
        Self::load(config, &mut GgufWeights { content, reader, device: device.clone() }, device)
    }

    /// From a folder's `config.json` and its safetensors (`vb`).
    pub fn from_hf(config: &serde_json::Value, vb: VarBuilder<'_>) -> Result<Self> {
        let config = Qwen35Config::from_hf(config)?;
        let device = vb.device().clone();
        Self::load(config, &mut HfWeights::new(vb), &device)
    }

    fn load(config: Qwen35Config, w: &mut dyn Weights, device: &Device) -> Result<Self> {
        let c = &config;
        let tensor = |values: Vec<f32>| Tensor::new(values, device);
        let embed = w.embedding()?;
        let output = if w.has("output.weight") {
            w.matrix("output.weight")?
        } else {
            // Tied embeddings.
            let dtype = match &embed {
                QMatMul::Tensor(t) | QMatMul::TensorF16(t) => t.dtype(),
                QMatMul::QTensor(_) => DType::F32,
            };
            Linear { mm: embed.clone(), dtype }
        };
        let norm = tensor(w.values("output_norm.weight")?)?;
        let mut layers = Vec::with_capacity(c.n_layer);
        for (i, &recurrent) in c.recurrent.iter().enumerate() {
            let n = |suffix: &str| format!("blk.{i}.{suffix}");
            let mixer = if recurrent {
                // The delta rule indexes these by head and channel: a file that lies about
                // their sizes gets an error here, not a panic later.
                let mut sized = |name: &str, len: usize| -> Result<Vec<f32>> {
                    let values = w.values(&n(name))?;
                    if values.len() != len {
                        candle_core::bail!("blk.{i}.{name} has {} values, expected {len}", values.len());
                    }
                    Ok(values)
                };
                let conv = sized("ssm_conv1d.weight", c.conv_dim() * c.conv_kernel)?;
                let a = sized("ssm_a", c.lin_v_heads)?;
                let dt_bias = sized("ssm_dt.bias", c.lin_v_heads)?;
                let norm = sized("ssm_norm.weight", c.lin_v_dim)?;
                Mixer::Linear(LinearAttention {
                    qkv: w.matrix(&n("attn_qkv.weight"))?,
                    z: w.matrix(&n("attn_gate.weight"))?,
                    alpha: w.matrix(&n("ssm_alpha.weight"))?,
                    beta: w.matrix(&n("ssm_beta.weight"))?,
                    out: w.matrix(&n("ssm_out.weight"))?,
                    conv,
                    a,
                    dt_bias,
                    norm,
                    state: DeltaState::new(c),
                })
            } else {
                Mixer::Full(FullAttention {
                    wq: w.matrix(&n("attn_q.weight"))?,
                    wk: w.matrix(&n("attn_k.weight"))?,
                    wv: w.matrix(&n("attn_v.weight"))?,
                    wo: w.matrix(&n("attn_output.weight"))?,
                    q_norm: tensor(w.values(&n("attn_q_norm.weight"))?)?,
                    k_norm: tensor(w.values(&n("attn_k_norm.weight"))?)?,
                    cache: LayerCache::new(),
                })
            };
            layers.push(Layer {
                attn_norm: tensor(w.values(&n("attn_norm.weight"))?)?,
                post_norm: tensor(w.values(&n("post_attention_norm.weight"))?)?,
                mixer,
                gate: w.matrix(&n("ffn_gate.weight"))?,
                up: w.matrix(&n("ffn_up.weight"))?,
                down: w.matrix(&n("ffn_down.weight"))?,
            });
        }
        let inv_freq: Vec<f32> = (0..c.rope_dim).step_by(2).map(|i| 1.0 / c.rope_base.powf(i as f32 / c.rope_dim as f32)).collect();
        let half = inv_freq.len();
        Ok(Self {
            inv_freq: Tensor::from_vec(inv_freq, (1, half), device)?,
            config,
            embed,
            layers,
            norm,
            output,
            device: device.clone(),
            checkpoints: Checkpoints::default(),
        })
    }

    pub fn config(&self) -> &Qwen35Config {
        &self.config
    }

    pub fn cached_len(&self) -> usize {
        self.checkpoints.len()
    }

    pub fn save_cache(&self) -> Option<Qwen35Cache> {
        let kv = self
            .layers
            .iter()
            .filter_map(|l| match &l.mixer {
                Mixer::Full(a) => Some(a),
                Mixer::Linear(_) => None,
            })
            .map(|a| a.cache.copy())
            .collect::<Result<Vec<_>>>()
            .ok()?;
        Some(Qwen35Cache { kv, states: self.states(), checkpoints: self.checkpoints.clone() })
    }

    pub fn restore_cache(&mut self, cache: Qwen35Cache) -> bool {
        let full = self.layers.iter().filter(|l| matches!(l.mixer, Mixer::Full(_))).count();
        if cache.kv.len() != full || cache.states.len() != self.layers.len() - full {
            return false;
        }
        self.set_states(&cache.states);
        let full_layers = self.layers.iter_mut().filter_map(|l| match &mut l.mixer {
            Mixer::Full(a) => Some(a),
            Mixer::Linear(_) => None,
        });
        for (layer, kv) in full_layers.zip(cache.kv) {
            layer.cache = kv;
        }
        self.checkpoints = cache.checkpoints;
        true
    }

    /// Runs `tokens` after the cached ones and returns the logits of the last, `(vocab,)`.
    pub fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.forward_rows(tokens, 1)?.flatten_all()
    }

    /// [`Qwen35::forward`] with the logits of every position, `(tokens, vocab)`.
    pub fn forward_all(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.forward_rows(tokens, tokens.len())?.squeeze(0)
    }

    fn forward_rows(&mut self, tokens: &[u32], rows: usize) -> Result<Tensor> {
        let s = tokens.len();
        if s == 0 {
            candle_core::bail!("forward on no tokens");
        }
        let pos = self.checkpoints.len();
        if pos + s > self.config.context_length {
            candle_core::bail!("{} positions exceed the context length {}", pos + s, self.config.context_length);
        }
        if s > 1 {
            self.before_call();
        }
        let result = self.run(tokens, pos, rows);
        match result {
            Ok(logits) => {
                self.checkpoints.extend(tokens);
                Ok(logits)
            }
            Err(e) => {
                // A layer may have advanced its state: nothing cached can be trusted.
                self.forget();
                Err(e)
            }
        }
    }

    fn run(&mut self, tokens: &[u32], pos: usize, rows: usize) -> Result<Tensor> {
        let s = tokens.len();
        let c = self.config.clone();
        let ids = Tensor::new(tokens, &self.device)?;
        let mut x = self.embed.embedding(&ids)?.to_dtype(DType::F32)?.unsqueeze(0)?;
        let positions = Tensor::arange(pos as u32, (pos + s) as u32, &self.device)?.to_dtype(DType::F32)?.reshape((s, 1))?;
        let angles = positions.matmul(&self.inv_freq)?;
        let (cos, sin) = (angles.cos()?, angles.sin()?);
        let mask = if s > 1 { Some(causal_mask(s, pos, &self.device)?) } else { None };
        let eps = c.rms_eps as f32;
        for layer in &mut self.layers {
            let h = candle_nn::ops::rms_norm(&x, &layer.attn_norm, eps)?;
            let mixed = match &mut layer.mixer {
                Mixer::Full(a) => full_attention(a, &c, &h, &cos, &sin, mask.as_ref())?,
                Mixer::Linear(a) => linear_attention(a, &c, &h)?,
            };
            x = (x + mixed)?;
            let h = candle_nn::ops::rms_norm(&x, &layer.post_norm, eps)?;
            let gate = candle_nn::ops::silu(&layer.gate.forward(&h)?)?;
            x = (layer.down.forward(&(gate * layer.up.forward(&h)?)?)? + x)?;
        }
        let rows = rows.clamp(1, s);
        let last = candle_nn::ops::rms_norm(&x.narrow(1, s - rows, rows)?.contiguous()?, &self.norm, eps)?;
        self.output.forward(&last)?.to_dtype(DType::F32)
    }
}

impl Recurrent for Qwen35 {
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

    fn cut_attention(&mut self, len: usize) {
        for layer in &mut self.layers {
            if let Mixer::Full(a) = &mut layer.mixer {
                a.cache.len = a.cache.len.min(len);
            }
        }
    }

    fn replay(&mut self, tokens: &[u32]) -> Result<()> {
        self.forward_rows(tokens, 1).map(|_| ())
    }
}

fn full_attention(a: &mut FullAttention, c: &Qwen35Config, x: &Tensor, cos: &Tensor, sin: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
    let (b, s, _) = x.dims3()?;
    let hd = c.head_dim;
    let eps = c.rms_eps as f32;
    let q_full = a.wq.forward(x)?.reshape((b, s, c.n_head, 2 * hd))?;
    let q = candle_nn::ops::rms_norm(&q_full.narrow(3, 0, hd)?.contiguous()?, &a.q_norm, eps)?;
    let gate = q_full.narrow(3, hd, hd)?.reshape((b, s, c.n_head * hd))?;
    let k = candle_nn::ops::rms_norm(&a.wk.forward(x)?.reshape((b, s, c.n_kv_head, hd))?, &a.k_norm, eps)?;
    let v = a.wv.forward(x)?.reshape((b, s, c.n_kv_head, hd))?.transpose(1, 2)?.contiguous()?;
    let q = partial_rope(&q.transpose(1, 2)?.contiguous()?, c.rope_dim, cos, sin)?;
    let k = partial_rope(&k.transpose(1, 2)?.contiguous()?, c.rope_dim, cos, sin)?;
    let (k, v) = a.cache.append(&k, &v, c.context_length)?;
    let kv_len = k.dim(2)?;
    // The query heads sharing one K/V head are consecutive: one longer query sequence.
    let n_rep = c.n_head / c.n_kv_head;
    let q = q.reshape((b, c.n_kv_head, n_rep * s, hd))?;
    let scores = (q.matmul(&k.t()?)? * (1.0 / (hd as f64).sqrt()))?;
    let scores = match mask {
        Some(mask) => scores.reshape((b, c.n_kv_head, n_rep, s, kv_len))?.broadcast_add(mask)?.reshape((b, c.n_kv_head, n_rep * s, kv_len))?,
        None => scores,
    };
    let y = candle_nn::ops::softmax_last_dim(&scores)?.matmul(&v)?;
    let y = y.reshape((b, c.n_head, s, hd))?.transpose(1, 2)?.reshape((b, s, c.n_head * hd))?;
    a.wo.forward(&(y * candle_nn::ops::sigmoid(&gate)?)?)
}

/// Rotary embedding on the first `dim` values of each head, `x` `(b, heads, s, head_dim)`.
fn partial_rope(x: &Tensor, dim: usize, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let head_dim = x.dim(D::Minus1)?;
    if dim == 0 {
        return Ok(x.clone());
    }
    let rotated = candle_nn::rotary_emb::rope(&x.narrow(3, 0, dim)?.contiguous()?, cos, sin)?;
    if dim == head_dim {
        return Ok(rotated);
    }
    Tensor::cat(&[rotated, x.narrow(3, dim, head_dim - dim)?], 3)?.contiguous()
}

fn linear_attention(a: &mut LinearAttention, c: &Qwen35Config, x: &Tensor) -> Result<Tensor> {
    let (b, s, _) = x.dims3()?;
    let host = |t: Tensor| -> Result<Vec<f32>> { t.to_dtype(DType::F32)?.to_device(&Device::Cpu)?.flatten_all()?.to_vec1() };
    let qkv = host(a.qkv.forward(x)?)?;
    let z = host(a.z.forward(x)?)?;
    let alpha = host(a.alpha.forward(x)?)?;
    let beta = host(a.beta.forward(x)?)?;
    let width = c.lin_v_heads * c.lin_v_dim;
    let mut out = vec![0.0f32; b * s * width];
    let weights = DeltaWeights { conv: &a.conv, a: &a.a, dt_bias: &a.dt_bias, norm: &a.norm };
    // The recurrence runs on the host (a GPU hands its inputs over once per layer).
    if !delta::run(c, &weights, &mut a.state, &qkv, &z, &alpha, &beta, b * s, &mut out) {
        candle_core::bail!("a linear attention projection has the wrong size");
    }
    let out = Tensor::from_vec(out, (b, s, width), x.device())?;
    a.out.forward(&out)
}
