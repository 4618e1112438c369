//! Loading a model: a GGUF file chosen by `general.architecture` (`qwen2` on our own
//! forward pass with a truncatable KV cache; `qwen3` and `llama` through
//! candle-transformers' quantized models) or a Hugging Face folder (`config.json`,
//! `tokenizer.json`, `*.safetensors`) for Qwen2 / Qwen3. Each comes with its tokenizer, its
//! chat template and the tokens that end an answer.

mod attention;
mod common;
mod cpu_ops;
mod cpu_qwen2;
pub mod kernels;
mod pool;
mod q5_0;
mod qwen2;
mod qwen35;

use std::collections::HashMap;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_transformers::models::{quantized_llama, quantized_qwen3, qwen2 as hf_qwen2, qwen3 as hf_qwen3};
use serde_json::Value;

pub use cpu_qwen2::CpuQwen2;
pub use qwen2::{Qwen2, Qwen2Config};
pub use qwen35::{CpuQwen35, Qwen35, Qwen35Config, Recurrent};

use super::config;
use super::progress::{self, report_stage, CountedRead, LoadStage, ProgressSink, StageProgress};
use super::template::ChatTemplate;
use super::tokenizer::ModelTokenizer;
use super::BrainError;

/// Token text that ends an answer in the chat formats we know.
const STOP_TOKEN_TEXTS: &[&str] = &["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>"];

/// A causal language model with a KV cache.
pub trait CausalLm: Send {
    /// Runs `tokens` at the positions after the cached ones, caches them, and returns the
    /// logits of the last one as `(vocab,)` f32.
    fn forward(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor>;
    /// [`CausalLm::forward`] with the logits of every position, `(tokens, vocab)` f32. The
    /// default runs the tokens one at a time.
    fn forward_all(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
        let rows = tokens.iter().map(|&t| self.forward(&[t])).collect::<candle_core::Result<Vec<_>>>()?;
        Tensor::stack(&rows, 0)
    }
    /// Runs `tokens` and caches them like [`CausalLm::forward_all`], but stops before the
    /// vocabulary projection: one hidden row per position (`hidden_size` values each), for
    /// [`CausalLm::project`]. `None` (the default): this model projects only inside its
    /// forward, and callers use [`CausalLm::forward_all`].
    fn forward_hidden(&mut self, _tokens: &[u32]) -> Option<candle_core::Result<Vec<f32>>> {
        None
    }
    /// The logits of one row of [`CausalLm::forward_hidden`], `(vocab,)`: every token's,
    /// or only those of `ids` (sorted; the others `-inf`), each the same value as in the
    /// full projection.
    fn project(&mut self, _hidden: &[f32], _ids: Option<&[u32]>) -> candle_core::Result<Vec<f32>> {
        candle_core::bail!("this model has no separate vocabulary projection")
    }
    /// Positions held in the cache.
    fn cached_len(&self) -> usize;
    /// Keeps the first `len` cached positions. Returns false when the model cannot cut its
    /// cache (the caller then clears it and runs the whole prompt).
    fn truncate(&mut self, len: usize) -> bool;
    fn clear(&mut self);
    /// Largest number of tokens one forward call should take; `None`: the whole prompt at once.
    fn max_chunk(&self) -> Option<usize>;
    /// The longest prefix of at most `len` cached positions that [`CausalLm::truncate`]
    /// keeps without running tokens again (a recurrent state goes back only to its
    /// checkpoints). A KV cache keeps any prefix.
    fn reusable_prefix(&self, len: usize) -> usize {
        len.min(self.cached_len())
    }
    /// Whether the cache goes back only to checkpoints ([`CausalLm::mark`]): a recurrent
    /// state. Then a prefill stops where a checkpoint is worth keeping.
    fn checkpointed(&self) -> bool {
        false
    }
    /// The cache up to here is worth coming back to (the end of a prompt); a model whose
    /// state cannot be cut back keeps a checkpoint.
    fn mark(&mut self) {}
    /// A copy of the cache, to be put back later with [`CausalLm::restore_cache`]. `None`:
    /// this model cannot hand its cache over.
    fn save_cache(&self) -> Option<SavedCache> {
        None
    }
    /// Makes a cache [`CausalLm::save_cache`] gave the current one (the current one is
    /// dropped). False, and an empty cache, when it is not this model's.
    fn restore_cache(&mut self, _saved: SavedCache) -> bool {
        self.clear();
        false
    }
    /// Whether [`CausalLm::export_cache`] can give anything.
    fn can_export(&self) -> bool {
        false
    }
    /// Which implementation computes the cache (caches of two never mix).
    fn cache_kind(&self) -> &'static str {
        "other"
    }
    /// The first `len` cached positions as plain values; `None` when this model cannot
    /// hand them out (or holds fewer).
    fn export_cache(&self, _len: usize) -> Option<CacheImage> {
        None
    }
    /// Makes `image` the current cache. False, and an empty cache, when it does not fit
    /// this model.
    fn import_cache(&mut self, _image: CacheImage) -> bool {
        self.clear();
        false
    }
}

/// A model's KV cache as plain values, to be written to disk and read back
/// ([`CausalLm::export_cache`], [`CausalLm::import_cache`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheImage {
    pub n_kv_head: usize,
    pub head_dim: usize,
    /// Positions held.
    pub len: usize,
    /// Per layer, keys then values: `n_kv_head * len * head_dim` values each, head after head.
    pub layers: Vec<(Vec<f32>, Vec<f32>)>,
}

/// A model's KV cache moved out of it (what it holds is the model's own business).
pub struct SavedCache(Box<dyn std::any::Any + Send>);

impl SavedCache {
    fn new<T: std::any::Any + Send>(cache: T) -> Self {
        Self(Box::new(cache))
    }

    fn into_inner<T: std::any::Any>(self) -> Option<T> {
        self.0.downcast::<T>().ok().map(|b| *b)
    }
}

/// Our two Qwen2 passes (candle ops, own CPU pass) own a truncatable cache: the same
/// `CausalLm` over their inherent methods.
macro_rules! truncatable_qwen2 {
    ($model:ty $(, $hidden:ident)?) => {
        impl CausalLm for $model {
            $(
                fn $hidden(&mut self, tokens: &[u32]) -> Option<candle_core::Result<Vec<f32>>> {
                    Some(<$model>::forward_hidden(self, tokens))
                }
                fn project(&mut self, hidden: &[f32], ids: Option<&[u32]>) -> candle_core::Result<Vec<f32>> {
                    <$model>::project(self, hidden, ids)
                }
            )?
            fn forward(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
                <$model>::forward(self, tokens)
            }
            fn forward_all(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
                <$model>::forward_all(self, tokens)
            }
            fn cached_len(&self) -> usize {
                <$model>::cached_len(self)
            }
            fn truncate(&mut self, len: usize) -> bool {
                <$model>::truncate(self, len);
                true
            }
            fn clear(&mut self) {
                <$model>::truncate(self, 0);
            }
            fn save_cache(&self) -> Option<SavedCache> {
                <$model>::save_cache(self).map(SavedCache::new)
            }
            fn restore_cache(&mut self, saved: SavedCache) -> bool {
                let restored = saved.into_inner().is_some_and(|cache| <$model>::restore_cache(self, cache));
                if !restored {
                    <$model>::truncate(self, 0);
                }
                restored
            }
            fn can_export(&self) -> bool {
                <$model>::can_export(self)
            }
            fn cache_kind(&self) -> &'static str {
                stringify!($model)
            }
            fn export_cache(&self, len: usize) -> Option<CacheImage> {
                <$model>::export_cache(self, len)
            }
            fn import_cache(&mut self, image: CacheImage) -> bool {
                let imported = <$model>::import_cache(self, image);
                if !imported {
                    <$model>::truncate(self, 0);
                }
                imported
            }
            fn max_chunk(&self) -> Option<usize> {
                // Cancel is checked between chunks, and the attention scores of a chunk take
                // heads * chunk * context floats. Measured on the 0.5B model: 256 runs as fast
                // as one big batch; 128 is 6% and 64 20% slower.
                Some(256)
            }
        }
    };
}

truncatable_qwen2!(Qwen2);
// Our own CPU pass also hands out hidden rows and projects them on demand.
truncatable_qwen2!(CpuQwen2, forward_hidden);

/// Our two Qwen3.5 passes keep a recurrent state that goes back to checkpoints.
macro_rules! recurrent_qwen35 {
    ($model:ty $(, $hidden:ident)?) => {
        impl CausalLm for $model {
            $(
                fn $hidden(&mut self, tokens: &[u32]) -> Option<candle_core::Result<Vec<f32>>> {
                    Some(<$model>::forward_hidden(self, tokens))
                }
                fn project(&mut self, hidden: &[f32], ids: Option<&[u32]>) -> candle_core::Result<Vec<f32>> {
                    <$model>::project(self, hidden, ids)
                }
            )?
            fn forward(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
                <$model>::forward(self, tokens)
            }
            fn forward_all(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
                <$model>::forward_all(self, tokens)
            }
            fn cached_len(&self) -> usize {
                <$model>::cached_len(self)
            }
            fn truncate(&mut self, len: usize) -> bool {
                // Running the tokens after a checkpoint again can fail like any forward call.
                Recurrent::go_back(self, len).unwrap_or(false)
            }
            fn clear(&mut self) {
                Recurrent::forget(self);
            }
            fn max_chunk(&self) -> Option<usize> {
                Some(256)
            }
            fn reusable_prefix(&self, len: usize) -> usize {
                Recurrent::checkpoints(self).reusable(len)
            }
            fn checkpointed(&self) -> bool {
                true
            }
            fn mark(&mut self) {
                Recurrent::mark_here(self);
            }
            fn save_cache(&self) -> Option<SavedCache> {
                <$model>::save_cache(self).map(SavedCache::new)
            }
            fn restore_cache(&mut self, saved: SavedCache) -> bool {
                let restored = saved.into_inner().is_some_and(|cache| <$model>::restore_cache(self, cache));
                if !restored {
                    Recurrent::forget(self);
                }
                restored
            }
            fn cache_kind(&self) -> &'static str {
                stringify!($model)
            }
        }
    };
}

recurrent_qwen35!(Qwen35);
// Our own CPU pass also hands out hidden rows and projects them on demand.
recurrent_qwen35!(CpuQwen35, forward_hidden);

/// A candle-transformers model: it can only clear its cache, so it tracks the position
/// itself and the caller re-runs the whole prompt.
struct ClearOnly<M> {
    model: M,
    pos: usize,
    device: Device,
    forward: fn(&mut M, &Tensor, usize) -> candle_core::Result<Tensor>,
    clear: fn(&mut M),
}

impl<M: Send> CausalLm for ClearOnly<M> {
    fn forward(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
        let input = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let logits = (self.forward)(&mut self.model, &input, self.pos)?;
        self.pos += tokens.len();
        logits.flatten_all()?.to_dtype(DType::F32)
    }
    fn cached_len(&self) -> usize {
        self.pos
    }
    fn truncate(&mut self, len: usize) -> bool {
        len == self.pos
    }
    fn clear(&mut self) {
        (self.clear)(&mut self.model);
        self.pos = 0;
    }
    fn max_chunk(&self) -> Option<usize> {
        None
    }
}

fn clear_only<M: Send + 'static>(
    model: M,
    device: &Device,
    forward: fn(&mut M, &Tensor, usize) -> candle_core::Result<Tensor>,
    clear: fn(&mut M),
) -> Box<dyn CausalLm> {
    Box::new(ClearOnly { model, pos: 0, device: device.clone(), forward, clear })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelFormat {
    Gguf,
    HfDir,
}

/// What was loaded, for status lines and reports.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub path: PathBuf,
    pub format: ModelFormat,
    pub architecture: String,
    pub context_length: usize,
    pub device: String,
    /// The cache keeps a shared prompt prefix between calls.
    pub prefix_reuse: bool,
}

pub struct LoadedModel {
    pub lm: Box<dyn CausalLm>,
    pub tokenizer: ModelTokenizer,
    pub template: Option<ChatTemplate>,
    /// Tokens that end an answer (EOS, `<|im_end|>`, `<|endoftext|>`...).
    pub stop_tokens: Vec<u32>,
    pub info: ModelInfo,
}

/// The candle device for a profile's `device:` (`auto`: CUDA, then Metal, when compiled in).
pub fn select_device(device: config::Device) -> Result<Device, BrainError> {
    let unavailable = |name: &str, e: candle_core::Error| BrainError::Load {
        path: String::new(),
        reason: format!("device {name} is not available ({e}); build with `--features {name}` on a machine that has one, or use device: cpu"),
    };
    match device {
        config::Device::Cpu => Ok(Device::Cpu),
        config::Device::Cuda => Device::new_cuda(0).map_err(|e| unavailable("cuda", e)),
        config::Device::Metal => Device::new_metal(0).map_err(|e| unavailable("metal", e)),
        config::Device::Auto => {
            if candle_core::utils::cuda_is_available() {
                if let Ok(device) = Device::new_cuda(0) {
                    return Ok(device);
                }
            }
            if candle_core::utils::metal_is_available() {
                if let Ok(device) = Device::new_metal(0) {
                    return Ok(device);
                }
            }
            Ok(Device::Cpu)
        }
    }
}

pub fn device_name(device: &Device) -> &'static str {
    match device {
        Device::Cpu => "cpu",
        Device::Cuda(_) => "cuda",
        Device::Metal(_) => "metal",
    }
}

/// Loads a GGUF file or a Hugging Face folder. `tokenizer` overrides where the tokenizer
/// comes from; `dtype` applies to safetensors weights (`f32`, `f16`, `bf16`).
pub fn load_model(path: &Path, tokenizer: Option<&Path>, dtype: &str, device: &Device) -> Result<LoadedModel, BrainError> {
    load_model_reporting(path, tokenizer, dtype, device, &progress::ignore)
}

/// [`load_model`], telling `progress` which stage runs and how many bytes of the weights
/// are read.
pub fn load_model_reporting(
    path: &Path,
    tokenizer: Option<&Path>,
    dtype: &str,
    device: &Device,
    progress: ProgressSink<'_>,
) -> Result<LoadedModel, BrainError> {
    if path.is_dir() {
        load_hf_dir(path, tokenizer, dtype, device, progress)
    } else {
        load_gguf(path, tokenizer, device, progress)
    }
}

fn load_error(path: &Path, reason: impl std::fmt::Display) -> BrainError {
    BrainError::Load { path: path.display().to_string(), reason: reason.to_string() }
}

/// A `tokenizer.json` that sits next to a GGUF file: `<stem>.tokenizer.json`, or
/// `tokenizer.json` in the same folder.
fn tokenizer_next_to(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    let stem = path.file_stem()?.to_string_lossy();
    [dir.join(format!("{stem}.tokenizer.json")), dir.join("tokenizer.json")]
        .into_iter()
        .find(|p| p.is_file())
}

/// The bytes of all the tensors of a GGUF file: what reading its weights reads.
fn gguf_tensor_bytes(content: &gguf_file::Content) -> u64 {
    content.tensor_infos.values().map(tensor_bytes).sum()
}

/// The bytes of one GGUF tensor's data.
pub fn tensor_bytes(info: &gguf_file::TensorInfo) -> u64 {
    (info.shape.elem_count() / info.ggml_dtype.block_size() * info.ggml_dtype.type_size()) as u64
}

fn load_gguf(path: &Path, tokenizer: Option<&Path>, device: &Device, progress: ProgressSink<'_>) -> Result<LoadedModel, BrainError> {
    // Buffered: the header is some 300,000 small strings (the vocabulary and its merges),
    // read one `read_exact` each; unbuffered that was 0.4 s of system calls per load. The
    // weights' large reads go past the buffer.
    let mut file = std::io::BufReader::with_capacity(1 << 16, crate::input::open_regular(path, "model file")?);
    let mut content = gguf_file::Content::read(&mut file).map_err(|e| load_error(path, format!("not a GGUF file: {e}")))?;
    let md_str = |md: &HashMap<String, gguf_file::Value>, key: &str| md.get(key).and_then(|v| v.to_string().ok()).cloned();
    let architecture = md_str(&content.metadata, "general.architecture").ok_or_else(|| load_error(path, "no general.architecture"))?;
    let context_length = content.metadata.get(&format!("{architecture}.context_length")).and_then(|v| v.to_u32().ok()).unwrap_or(4096) as usize;
    if !matches!(architecture.as_str(), "qwen2" | "qwen3" | "qwen35" | "llama") {
        return Err(load_error(path, format!("GGUF architecture '{architecture}' is not supported (qwen2, qwen3, qwen35, llama)")));
    }
    // The weights are read on their own thread while the tokenizer is built here (each
    // takes a quarter of a second for the 0.5B); the tokenizer takes the `tokenizer.*`
    // entries, which no model reads. This way round the tokenizer's many small allocations,
    // and what its building frees, stay in the main thread's malloc arena with the rest of
    // the process: built on a second thread they left ~30 MiB of fragmented arena resident
    // (docs/perf.md). The weights are a few large buffers, which malloc maps on their own.
    let tokenizer_keys: Vec<String> = content.metadata.keys().filter(|k| k.starts_with("tokenizer.")).cloned().collect();
    let tokenizer_md: HashMap<String, gguf_file::Value> = tokenizer_keys.into_iter().filter_map(|k| content.metadata.remove_entry(&k)).collect();

    report_stage(progress, LoadStage::Tokenizer);
    let weights = StageProgress::start(progress, LoadStage::Weights, gguf_tensor_bytes(&content));
    let (tokenizer_parts, lm) = std::thread::scope(|s| {
        let (weights, architecture) = (&weights, architecture.as_str());
        let lm = std::thread::Builder::new().name("b4-weights".into()).spawn_scoped(s, move || -> Result<(Box<dyn CausalLm>, bool), BrainError> {
            let mut reader = CountedRead::new(&mut file, weights);
            match architecture {
                "qwen2" => load_qwen2(&content, &mut reader, device).map(|lm| (lm, true)).map_err(|e| load_error(path, e)),
                "qwen35" => load_qwen35(&content, &mut reader, device).map(|lm| (lm, true)).map_err(|e| load_error(path, e)),
                "qwen3" => quantized_qwen3::ModelWeights::from_gguf(content, &mut reader, device)
                    .map(|model| (clear_only(model, device, |m, x, pos| m.forward(x, pos), |m| m.clear_kv_cache()), false))
                    .map_err(|e| load_error(path, e)),
                _ => quantized_llama::ModelWeights::from_gguf(content, &mut reader, device)
                    .map(|model| (clear_only(model, device, |m, x, pos| m.forward(x, pos), |m| m.clear_kv_cache()), false))
                    .map_err(|e| load_error(path, e)),
            }
        });
        let tokenizer_parts = (|| -> Result<_, BrainError> {
            let md = &tokenizer_md;
            let tokenizer = match tokenizer.map(Path::to_path_buf).or_else(|| tokenizer_next_to(path)) {
                Some(file) => ModelTokenizer::from_file(&file)?,
                None => ModelTokenizer::from_gguf(md)?,
            };
            let md_u32 = |key: &str| md.get(key).and_then(|v| v.to_u32().ok());
            let token_text = |key: &str| md_u32(key).and_then(|id| tokenizer.token_text(id));
            let template = md_str(md, "tokenizer.chat_template")
                .map(|source| ChatTemplate::new(source, token_text("tokenizer.ggml.bos_token_id"), token_text("tokenizer.ggml.eos_token_id")))
                .transpose()?;
            let stop_tokens = stop_tokens(&tokenizer, md_u32("tokenizer.ggml.eos_token_id").into_iter().collect());
            // The grammar's view of the vocabulary is built beside the weights being read.
            super::constrain::TokenSpace::warm(path, &tokenizer, &stop_tokens);
            Ok((tokenizer, template, stop_tokens))
        })();
        let lm = match lm {
            Ok(handle) => handle.join().unwrap_or_else(|_| Err(load_error(path, "the weights' thread panicked"))),
            Err(e) => Err(load_error(path, format!("cannot start the weights' thread: {e}"))),
        };
        (tokenizer_parts, lm)
    });
    // A broken tokenizer is reported before broken weights, as when they were read in turn.
    let (tokenizer, template, stop_tokens) = tokenizer_parts?;
    let (lm, prefix_reuse) = lm?;
    weights.finish();
    Ok(LoadedModel {
        lm,
        tokenizer,
        template,
        stop_tokens,
        info: ModelInfo {
            path: path.to_path_buf(),
            format: ModelFormat::Gguf,
            architecture,
            context_length,
            device: device_name(device).to_string(),
            prefix_reuse,
        },
    })
}

/// Environment variable that picks the Qwen2 forward pass on the CPU: `candle` for the
/// candle-ops one (for comparisons), anything else or unset for our own.
pub const FORWARD_ENV: &str = "B4_FORWARD";

/// Qwen2 on our own CPU forward pass when the device is the CPU and every matrix type has a
/// kernel; on candle's ops otherwise (GPUs, other quantizations, `B4_FORWARD=candle`).
fn load_qwen2<R: Read + Seek>(content: &gguf_file::Content, file: &mut R, device: &Device) -> candle_core::Result<Box<dyn CausalLm>> {
    let candle_wanted = std::env::var(FORWARD_ENV).is_ok_and(|v| v == "candle");
    if device.is_cpu() && !candle_wanted && cpu_qwen2::supported(content) {
        let config = Qwen2Config::from_gguf(content)?;
        let threads = candle_core::utils::get_num_threads();
        return Ok(Box::new(CpuQwen2::from_gguf(content, file, config, threads)?));
    }
    Ok(Box::new(Qwen2::from_gguf(content, file, device)?))
}

/// Qwen3.5 on our own CPU pass on the CPU, on candle's ops elsewhere (or with
/// `B4_FORWARD=candle`).
fn load_qwen35<R: Read + Seek>(content: &gguf_file::Content, file: &mut R, device: &Device) -> candle_core::Result<Box<dyn CausalLm>> {
    let candle_wanted = std::env::var(FORWARD_ENV).is_ok_and(|v| v == "candle");
    if device.is_cpu() && !candle_wanted {
        let threads = candle_core::utils::get_num_threads();
        return Ok(Box::new(CpuQwen35::from_gguf(content, file, threads)?));
    }
    Ok(Box::new(Qwen35::from_gguf(content, file, device)?))
}

/// EOS ids from the model plus the chat-format end tokens the vocabulary has.
fn stop_tokens(tokenizer: &ModelTokenizer, mut ids: Vec<u32>) -> Vec<u32> {
    for text in STOP_TOKEN_TEXTS {
        if let Some(id) = tokenizer.token_id(text) {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn read_json(path: &Path) -> Result<Value, BrainError> {
    let text = crate::input::read_text(path, crate::input::MODEL_JSON)?;
    serde_json::from_str(&text).map_err(|e| load_error(path, format!("invalid JSON: {e}")))
}

fn weights_dtype(dtype: &str, device: &Device) -> DType {
    match dtype.to_ascii_lowercase().as_str() {
        "f32" | "float32" => DType::F32,
        "f16" | "float16" => DType::F16,
        "bf16" | "bfloat16" => DType::BF16,
        // Quantized names do not apply to safetensors: the CPU computes in f32, GPUs in bf16.
        _ if device.is_cpu() => DType::F32,
        _ => DType::BF16,
    }
}

/// Safetensors weights that count the bytes of each tensor candle takes from them.
struct CountedSafetensors<'p, 'a> {
    inner: MmapedSafetensors,
    progress: &'p StageProgress<'a>,
}

impl CountedSafetensors<'_, '_> {
    fn total_bytes(inner: &MmapedSafetensors) -> u64 {
        inner.tensors().iter().map(|(_, view)| view.data().len() as u64).sum()
    }

    fn count(&self, name: &str) {
        self.progress.advance(self.inner.get(name).map_or(0, |view| view.data().len() as u64));
    }
}

impl SimpleBackend for CountedSafetensors<'_, '_> {
    fn get(&self, shape: Shape, name: &str, init: candle_nn::Init, dtype: DType, device: &Device) -> candle_core::Result<Tensor> {
        let tensor = SimpleBackend::get(&self.inner, shape, name, init, dtype, device)?;
        self.count(name);
        Ok(tensor)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, device: &Device) -> candle_core::Result<Tensor> {
        let tensor = SimpleBackend::get_unchecked(&self.inner, name, dtype, device)?;
        self.count(name);
        Ok(tensor)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        SimpleBackend::contains_tensor(&self.inner, name)
    }
}

fn load_hf_dir(dir: &Path, tokenizer: Option<&Path>, dtype: &str, device: &Device, progress: ProgressSink<'_>) -> Result<LoadedModel, BrainError> {
    let config_path = dir.join("config.json");
    let config = read_json(&config_path)?;
    let model_type = config
        .get("model_type")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            let arch = config.get("architectures")?.get(0)?.as_str()?;
            Some(arch.trim_end_matches("ForCausalLM").to_ascii_lowercase())
        })
        .ok_or_else(|| load_error(&config_path, "no model_type"))?;
    let tokenizer_path = tokenizer.map(Path::to_path_buf).unwrap_or_else(|| dir.join("tokenizer.json"));
    if !tokenizer_path.is_file() {
        return Err(load_error(dir, format!("no tokenizer: {} is missing", tokenizer_path.display())));
    }
    report_stage(progress, LoadStage::Tokenizer);
    let tokenizer = ModelTokenizer::from_file(&tokenizer_path)?;
    let template = match ChatTemplate::from_hf_dir(dir) {
        Ok(template) => Some(template),
        Err(BrainError::Template(m)) if m.contains("has no chat template") => None,
        Err(e) => return Err(e),
    };

    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| load_error(dir, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        // Regular files only: candle opens each one, and a FIFO would block it.
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(load_error(dir, "no *.safetensors weights"));
    }
    if !matches!(model_type.as_str(), "qwen2" | "qwen3" | "qwen3_5" | "qwen3_5_text") {
        return Err(load_error(dir, format!("model_type '{model_type}' is not supported in a Hugging Face folder (qwen2, qwen3, qwen3_5, qwen3_5_text)")));
    }
    let dtype = weights_dtype(dtype, device);
    // SAFETY: the weight files are memory-mapped read-only; like every mmap user we rely on
    // them not being modified while the model is loaded.
    let safetensors = unsafe { MmapedSafetensors::multi(&files) }.map_err(|e| load_error(dir, e))?;
    let weights = StageProgress::start(progress, LoadStage::Weights, CountedSafetensors::total_bytes(&safetensors));
    let backend = CountedSafetensors { inner: safetensors, progress: &weights };
    let vb = candle_nn::VarBuilder::from_backend(Box::new(backend), dtype, device.clone());
    let parse = |e: serde_json::Error| load_error(&config_path, format!("{model_type} config: {e}"));
    let (lm, context_length, prefix_reuse): (Box<dyn CausalLm>, usize, bool) = match model_type.as_str() {
        "qwen3_5" | "qwen3_5_text" => {
            let model = Qwen35::from_hf(&config, vb).map_err(|e| load_error(dir, e))?;
            let context = model.config().context_length;
            (Box::new(model), context, true)
        }
        "qwen2" => {
            let cfg: hf_qwen2::Config = serde_json::from_value(config.clone()).map_err(parse)?;
            let model = hf_qwen2::ModelForCausalLM::new(&cfg, vb).map_err(|e| load_error(dir, e))?;
            (clear_only(model, device, |m, x, pos| m.forward(x, pos), |m| m.clear_kv_cache()), cfg.max_position_embeddings, false)
        }
        _ => {
            let cfg: hf_qwen3::Config = serde_json::from_value(config.clone()).map_err(parse)?;
            let model = hf_qwen3::ModelForCausalLM::new(&cfg, vb).map_err(|e| load_error(dir, e))?;
            (clear_only(model, device, |m, x, pos| m.forward(x, pos), |m| m.clear_kv_cache()), cfg.max_position_embeddings, false)
        }
    };
    weights.finish();

    let mut eos = Vec::new();
    let generation = dir.join("generation_config.json");
    for source in [config.get("eos_token_id").cloned(), read_json(&generation).ok().and_then(|g| g.get("eos_token_id").cloned())] {
        match source {
            Some(Value::Number(n)) => eos.extend(n.as_u64().and_then(|n| u32::try_from(n).ok())),
            Some(Value::Array(list)) => eos.extend(list.iter().filter_map(Value::as_u64).filter_map(|n| u32::try_from(n).ok())),
            _ => {}
        }
    }
    let stop_tokens = stop_tokens(&tokenizer, eos);
    Ok(LoadedModel {
        lm,
        tokenizer,
        template,
        stop_tokens,
        info: ModelInfo {
            path: dir.to_path_buf(),
            format: ModelFormat::HfDir,
            architecture: model_type,
            context_length,
            device: device_name(device).to_string(),
            prefix_reuse,
        },
    })
}

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
