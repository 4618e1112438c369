//! `b4 perf`: how fast a profile's model loads, prefills and decodes, measured on fixed
//! token ids, and the same ids through llama.cpp (the `llama_cpp` Python package) in a
//! subprocess when it is installed, so that the two are compared under the same load.
//!
//! Every run starts from an empty KV cache, prefills the prompt in the model's chunks,
//! then decodes greedily for exactly `gen_tokens` tokens (stop tokens do not end it, so
//! both engines do the same work). Figures are medians over the repeats.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::brain::config::{Backend, Profile};
use crate::brain::fetch::checked_model_path;
use crate::brain::format::{Ask, NativeStyle};
use crate::brain::generate::{ms_since, per_second};
use crate::brain::model::{load_model, select_device, CausalLm, LoadedModel};
use crate::brain::prompt::{self, Reminder};
use crate::brain::BrainError;
use crate::protocol::{AiMessage, Message, Phase, Strategy, ToolCall, ToolCalling, ToolMessage};

/// The llama.cpp side, run with `python3` (or `$B4_PYTHON`).
const LLAMA_SCRIPT: &str = include_str!("../scripts/llama_cpp_perf.py");

/// Repository text the long prompt is made of: a file the agent "read", as a tool result.
const LONG_PROMPT_TEXT: &[&str] = &[
    include_str!("../docs/models.md"),
    include_str!("../docs/tools_overview.md"),
    include_str!("../docs/agent_guide.md"),
    include_str!("../docs/memory_overview.md"),
    include_str!("../docs/agent_intro.txt"),
];

/// The reference figures (329-token tool prompt, 2 threads, greedy), printed when
/// llama_cpp is not installed.
pub const REFERENCE_TABLE: &str = "\
| model | engine | prefill tok/s | decode tok/s |
|---|---|---|---|
| Qwen2.5-Coder-0.5B Q4_K_M | llama.cpp (llama-cpp-python 0.3.36) | 85 | 22 |
| same | candle 0.11.1 quantized_qwen2 | 21.5 | 11-12.5 |
| Qwen2.5-Coder-1.5B Q4_K_M | llama.cpp | 34.5 | 11.3 |
| same | candle 0.11.1 | 30.1 | 6.1 |";

#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    #[error("--{flag} must be at least {min} (got {value})")]
    TooSmall { flag: &'static str, min: usize, value: usize },
    #[error("profile '{0}' uses the mock backend: there is no model to measure")]
    Mock(String),
    #[error("profile '{0}' is a served model (backend openai): b4 perf measures in-process models; `b4 bench --model_name` compares a served one")]
    Served(String),
    #[error("profile '{profile}': {source}")]
    Brain { profile: String, source: BrainError },
    #[error("profile '{profile}': {reason}")]
    Model { profile: String, reason: String },
    #[error("llama.cpp run failed: {0}")]
    Llama(String),
}

/// What to measure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfOptions {
    /// Length of the long prompt (the short one is shorter, or cut to this).
    pub prompt_tokens: usize,
    /// Tokens generated per run: the first comes from the prefill, the rest are decoded.
    pub gen_tokens: usize,
    pub repeat: usize,
}

impl PerfOptions {
    pub fn check(&self) -> Result<(), PerfError> {
        let at_least = |flag, min, value| if value < min { Err(PerfError::TooSmall { flag, min, value }) } else { Ok(()) };
        at_least("prompt-tokens", 1, self.prompt_tokens)?;
        // One token comes from the prefill; decode speed needs at least one more.
        at_least("gen-tokens", 2, self.gen_tokens)?;
        at_least("repeat", 1, self.repeat)
    }
}

/// One fixed prompt as token ids.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerfPrompt {
    pub name: String,
    pub ids: Vec<u32>,
}

/// One run: prefill then greedy decode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    pub prefill_ms: f64,
    /// Prefill plus picking the first token.
    pub ttft_ms: f64,
    pub decode_ms: f64,
    pub prefill_tok_s: f64,
    pub decode_tok_s: f64,
    /// The greedy tokens picked.
    pub tokens: Vec<u32>,
}

/// Medians over the runs of one prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptFigures {
    pub prompt: String,
    pub prompt_tokens: usize,
    pub gen_tokens: usize,
    pub prefill_tok_s: f64,
    pub decode_tok_s: f64,
    pub ttft_ms: f64,
    pub runs: Vec<RunFigures>,
}

/// One engine on one model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineFigures {
    pub engine: String,
    /// The kernels or build that ran (ours: the instruction set; llama.cpp: its system info).
    #[serde(default)]
    pub build: String,
    pub threads: usize,
    pub load_ms: f64,
    /// The process's peak resident memory (VmHWM), MiB.
    pub peak_rss_mib: f64,
    pub prompts: Vec<PromptFigures>,
}

/// A second turn that extends the first: prefilling only the new tokens against the
/// cached prefix, and the whole prompt from an empty cache.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReuseFigures {
    pub turn2_tokens: usize,
    pub reused_tokens: usize,
    pub reuse_ms: f64,
    pub cold_ms: f64,
    pub saved_ms: f64,
}

/// ours / llama.cpp for one prompt.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ratio {
    pub prompt: String,
    pub prefill: f64,
    pub decode: f64,
    /// Generated tokens that are the same in both engines (greedy, first run).
    pub same_tokens: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfilePerf {
    pub profile: String,
    pub model: String,
    pub ours: EngineFigures,
    pub reuse: ReuseFigures,
    pub llama_cpp: Option<EngineFigures>,
    /// What one decode step reads of the model file ([`decode_bytes_per_token`]).
    pub decode_bytes: Option<u64>,
    pub ratios: Vec<Ratio>,
    /// Peak RSS ours / llama.cpp's process.
    pub peak_rss_ratio: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfReport {
    pub date: String,
    pub machine: Machine,
    /// `/proc/loadavg` when the run started.
    pub load_before: String,
    pub load_after: String,
    pub options: PerfOptions,
    /// Why there is no llama.cpp column, when there is none.
    pub llama_cpp_missing: Option<String>,
    pub profiles: Vec<ProfilePerf>,
}

/// The machine the figures come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Machine {
    /// CPU model and the vector / matrix extensions it reports ([`cpu_description`]).
    pub cpu: String,
    /// Threads of the read loop (the physical cores, as both engines use).
    pub threads: usize,
    /// The read loop's best pass, GB/s (10^9 bytes); `None` when skipped.
    pub read_gb_s: Option<f64>,
}

/// Bytes the read loop passes over: far past the last-level caches here (the Intel machine
/// reports 260 MiB of L3).
const READ_LOOP_BYTES: usize = 1 << 30;

/// The machine's read bandwidth: `threads` threads each folding its own share of a 1 GiB
/// buffer, best of five passes of each read loop ([`read_loops`]), in GB/s. What a decode
/// that only streams weights could at most reach.
pub fn read_bandwidth_gb_s(threads: usize) -> f64 {
    let words = READ_LOOP_BYTES / 8;
    // On the weights' 2 MiB pages, filled (not zeroed) so that every page is really there
    // before the first pass.
    let mut buffer: Vec<u64> = Vec::with_capacity(words);
    crate::brain::model::kernels::huge_pages(buffer.as_mut_ptr() as *mut u8, READ_LOOP_BYTES);
    buffer.extend(0..words as u64);
    let share = words.div_ceil(threads.max(1));
    let mut best: f64 = 0.0;
    for fold in read_loops() {
        for _ in 0..5 {
            let started = Instant::now();
            std::thread::scope(|s| {
                for part in buffer.chunks(share) {
                    s.spawn(move || std::hint::black_box(fold(part)));
                }
            });
            best = best.max(READ_LOOP_BYTES as f64 / started.elapsed().as_secs_f64() / 1e9);
        }
    }
    best
}

/// The read loops this CPU runs, each the exclusive-or of every word: [`fold_words`], and on
/// x86-64 with AVX2 [`fold_words_avx2`]. Which is faster depends on the CPU: on an AMD EPYC
/// (family 25 model 17) the first, compiled to 512-bit loads, read 15-17 GB/s where 256-bit
/// loads read 41-55; on the Intel Xeon with AMX the first read 27-32, as a C loop.
fn read_loops() -> Vec<fn(&[u64]) -> u64> {
    let mut loops: Vec<fn(&[u64]) -> u64> = vec![fold_words];
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") {
        loops.push(|words| {
            // SAFETY: AVX2 is present (checked just above).
            unsafe { fold_words_avx2(words) }
        });
    }
    loops
}

/// The exclusive-or of every word, 64 at a time (eight cache lines), so that only the loads
/// set the pace: LLVM makes whole-register XORs of this, where eight `wrapping_add` sums came
/// out as 128-bit shuffles that capped the loop at 16-20 GB/s on a machine that reads 28
/// (Intel Xeon with AMX, 2 cores).
fn fold_words(words: &[u64]) -> u64 {
    let mut acc = [0u64; 64];
    let mut chunks = words.chunks_exact(64);
    for chunk in &mut chunks {
        for (a, w) in acc.iter_mut().zip(chunk) {
            *a ^= *w;
        }
    }
    let rest = chunks.remainder().iter().fold(0u64, |a, w| a ^ w);
    acc.iter().fold(rest, |a, w| a ^ w)
}

/// [`fold_words`] with 256-bit loads only: four cache lines a step into four registers.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_words_avx2(words: &[u64]) -> u64 {
    use std::arch::x86_64::*;
    let mut acc = [_mm256_setzero_si256(); 4];
    let mut chunks = words.chunks_exact(32);
    for chunk in &mut chunks {
        let p = chunk.as_ptr() as *const __m256i;
        for (i, a) in acc.iter_mut().enumerate() {
            for k in 0..2 {
                // SAFETY: the chunk holds 32 words, eight 256-bit pieces.
                *a = _mm256_xor_si256(*a, unsafe { _mm256_loadu_si256(p.add(2 * i + k)) });
            }
        }
    }
    let mut lanes = [0u64; 4];
    let folded = _mm256_xor_si256(_mm256_xor_si256(acc[0], acc[1]), _mm256_xor_si256(acc[2], acc[3]));
    // SAFETY: `lanes` holds four words.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, folded) };
    let rest = chunks.remainder().iter().fold(0u64, |a, w| a ^ w);
    lanes.iter().fold(rest, |a, w| a ^ w)
}

/// What one decode step reads of a GGUF model file: every tensor once, except the token
/// embeddings when the file has its own output projection (then one row of them is read).
/// The KV cache comes on top. `None` for a model that is not a readable GGUF file.
pub fn decode_bytes_per_token(path: &Path) -> Option<u64> {
    if !path.is_file() {
        return None;
    }
    let mut file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let content = candle_core::quantized::gguf_file::Content::read(&mut file).ok()?;
    let tied = !content.tensor_infos.contains_key("output.weight");
    let bytes = content
        .tensor_infos
        .iter()
        .filter(|(name, _)| tied || name.as_str() != "token_embd.weight")
        .map(|(_, info)| crate::brain::model::tensor_bytes(info))
        .sum();
    Some(bytes)
}

/// The CPU in words: its model name, family and model numbers, cores, and which of AVX2,
/// AVX-512 VNNI and AMX it reports (`/proc/cpuinfo`).
pub fn cpu_description() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let flags = field("flags");
    let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
    let mut features: Vec<&str> = Vec::new();
    if has("avx2") {
        features.push("AVX2");
    }
    if has("avx512_vnni") {
        features.push("AVX-512 VNNI");
    }
    features.push(if has("amx_int8") && has("amx_tile") { "AMX int8" } else { "no AMX" });
    let name = field("model name");
    let name = if name.is_empty() { std::env::consts::ARCH.to_string() } else { name };
    let vendor = field("vendor_id");
    let numbers = if vendor.is_empty() { String::new() } else { format!(" ({vendor} family {} model {})", field("cpu family"), field("model")) };
    format!("{name}{numbers}, {} cores, {}", physical_cores(), features.join(", "))
}

/// The median of `values` (0 when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v.get(n / 2).copied().unwrap_or(0.0),
        n => (v.get(n / 2 - 1).copied().unwrap_or(0.0) + v.get(n / 2).copied().unwrap_or(0.0)) / 2.0,
    }
}

/// This process's peak resident memory (`VmHWM`), MiB; 0 where /proc is not there.
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// Starts a new peak-memory measurement (Linux: `5` to clear_refs resets VmHWM).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// The two fixed prompts for `model`: a short question, and a ReAct turn whose tool
/// result is repository text, cut to `prompt_tokens`.
pub fn build_prompts(model: &LoadedModel, tools: &[Value], prompt_tokens: usize) -> Result<Vec<PerfPrompt>, BrainError> {
    // A bare chat turn: no tool listing, so it stays short.
    let short = [json!({"role": "user", "content": "What is 17 * 23? Answer with the number only."})];
    let short_text = match &model.template {
        Some(template) => template.render(&short, None, true)?,
        None => "What is 17 * 23? Answer with the number only.".to_string(),
    };
    let short_ids = model.tokenizer.encode(&short_text)?;

    let call = ToolCall { id: "call_0".into(), name: "file_reader".into(), args: json!({"path": "docs/models.md"}).as_object().cloned().unwrap_or_default() };
    let mut body = String::new();
    let mut long_ids = Vec::new();
    // Repeat the text until the prompt is long enough (a few rounds at most).
    for round in 0..64 {
        for text in LONG_PROMPT_TEXT {
            body.push_str(text);
            body.push('\n');
        }
        let messages = vec![
            Message::system("你是一个运行在本地的 Agent 助手，可以调用工具读取文件、计算、搜索文件和分析表格。"),
            Message::user("Read docs/models.md and summarise which model to use on a 2-core machine."),
            Message::Assistant(AiMessage::calls(vec![call.clone()])),
            Message::Tool(ToolMessage::success(&call, json!({"path": "docs/models.md", "content": body}))),
        ];
        long_ids = render_ids(model, &messages, tools)?;
        if long_ids.len() >= prompt_tokens || round == 63 {
            break;
        }
    }
    long_ids.truncate(prompt_tokens);
    let mut short_ids = short_ids;
    short_ids.truncate(prompt_tokens);
    Ok(vec![PerfPrompt { name: "short".into(), ids: short_ids }, PerfPrompt { name: "long".into(), ids: long_ids }])
}

fn render_ids(model: &LoadedModel, messages: &[Message], tools: &[Value]) -> Result<Vec<u32>, BrainError> {
    let input = prompt::build(messages, tools, Ask { phase: Phase::React, way: ToolCalling::PromptJson, style: NativeStyle::Hermes, next_call: false }, Strategy::CallsFirst, Reminder::None, None);
    let text = match &model.template {
        Some(template) => template.render(&input.messages, input.tools.as_deref(), true)?,
        None => input.messages.iter().filter_map(|m| m.get("content").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
    };
    model.tokenizer.encode(&text)
}


fn argmax(logits: &candle_core::Tensor) -> candle_core::Result<u32> {
    let values: Vec<f32> = logits.to_vec1()?;
    let mut best = (0usize, f32::NEG_INFINITY);
    for (i, &v) in values.iter().enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    Ok(best.0 as u32)
}

/// Prefills `ids` after what the cache holds, in the model's chunks; returns the last logits.
fn prefill(lm: &mut dyn CausalLm, ids: &[u32]) -> candle_core::Result<candle_core::Tensor> {
    let chunk = lm.max_chunk().unwrap_or(ids.len()).max(1);
    let mut logits = None;
    for part in ids.chunks(chunk) {
        logits = Some(lm.forward(part)?);
    }
    logits.ok_or_else(|| candle_core::Error::Msg("nothing to prefill".into()))
}

/// One run from an empty cache.
fn run_once(lm: &mut dyn CausalLm, ids: &[u32], gen_tokens: usize) -> candle_core::Result<RunFigures> {
    lm.clear();
    let started = Instant::now();
    let logits = prefill(lm, ids)?;
    let prefill_ms = ms_since(started);
    let mut token = argmax(&logits)?;
    let ttft_ms = ms_since(started);
    let mut tokens = vec![token];
    let decoding = Instant::now();
    for _ in 1..gen_tokens {
        token = argmax(&lm.forward(&[token])?)?;
        tokens.push(token);
    }
    let decode_ms = ms_since(decoding);
    Ok(RunFigures {
        prefill_ms,
        ttft_ms,
        decode_ms,
        prefill_tok_s: per_second(ids.len(), prefill_ms),
        decode_tok_s: per_second(gen_tokens - 1, decode_ms),
        tokens,
    })
}

fn summarise(prompt: &PerfPrompt, gen_tokens: usize, runs: Vec<RunFigures>) -> PromptFigures {
    let pick = |f: fn(&RunFigures) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
    PromptFigures {
        prompt: prompt.name.clone(),
        prompt_tokens: prompt.ids.len(),
        gen_tokens,
        prefill_tok_s: pick(|r| r.prefill_tok_s),
        decode_tok_s: pick(|r| r.decode_tok_s),
        ttft_ms: pick(|r| r.ttft_ms),
        runs,
    }
}

/// Turn 1 is the long prompt and its answer; turn 2 adds a user message after it.
fn measure_reuse(lm: &mut dyn CausalLm, model: &LoadedModel, long: &PerfPrompt, gen_tokens: usize) -> Result<ReuseFigures, String> {
    let err = |e: candle_core::Error| e.to_string();
    let first = run_once(lm, &long.ids, gen_tokens).map_err(err)?;
    let follow_up = model
        .tokenizer
        .encode("<|im_end|>\n<|im_start|>user\nNow the same for a 4-core machine, in one sentence.<|im_end|>\n<|im_start|>assistant\n")
        .map_err(|e| e.to_string())?;
    let mut turn2: Vec<u32> = long.ids.clone();
    turn2.extend_from_slice(&first.tokens);
    turn2.extend_from_slice(&follow_up);
    // The cache holds the prompt and every generated token but the last.
    let cached = lm.cached_len();
    if !lm.truncate(cached) || cached == 0 || cached >= turn2.len() {
        return Err("this model cannot keep a cached prefix".into());
    }
    let started = Instant::now();
    prefill(lm, turn2.get(cached..).unwrap_or_default()).map_err(err)?;
    let reuse_ms = ms_since(started);
    lm.clear();
    let started = Instant::now();
    prefill(lm, &turn2).map_err(err)?;
    let cold_ms = ms_since(started);
    Ok(ReuseFigures { turn2_tokens: turn2.len(), reused_tokens: cached, reuse_ms, cold_ms, saved_ms: cold_ms - reuse_ms })
}

/// Our engine on `profile`: load, then every prompt `repeat` times, then the reuse case.
pub fn measure_ours(profile: &Profile, tools: &[Value], options: &PerfOptions) -> Result<(EngineFigures, ReuseFigures, Vec<PerfPrompt>, PathBuf), PerfError> {
    if profile.backend == Backend::Mock {
        return Err(PerfError::Mock(profile.name.clone()));
    }
    if profile.backend == Backend::OpenAi {
        return Err(PerfError::Served(profile.name.clone()));
    }
    let brain = |source| PerfError::Brain { profile: profile.name.clone(), source };
    let model_err = |reason: String| PerfError::Model { profile: profile.name.clone(), reason };
    let path = checked_model_path(profile, false).map_err(brain)?;
    let device = select_device(profile.device).map_err(brain)?;
    reset_peak_rss();
    let started = Instant::now();
    let tokenizer = profile.tokenizer.as_ref().map(PathBuf::from);
    let mut model = load_model(&path, tokenizer.as_deref(), &profile.dtype, &device).map_err(brain)?;
    let load_ms = ms_since(started);
    let prompts = build_prompts(&model, tools, options.prompt_tokens).map_err(brain)?;
    if prompts.iter().any(|p| p.ids.len() + options.gen_tokens >= model.info.context_length) {
        return Err(model_err(format!("prompt plus generated tokens exceed the context length {}", model.info.context_length)));
    }
    let mut figures = Vec::new();
    for prompt in &prompts {
        let mut runs = Vec::new();
        for _ in 0..options.repeat {
            runs.push(run_once(model.lm.as_mut(), &prompt.ids, options.gen_tokens).map_err(|e| model_err(e.to_string()))?);
        }
        figures.push(summarise(prompt, options.gen_tokens, runs));
    }
    let long = prompts.last().cloned().unwrap_or(PerfPrompt { name: "long".into(), ids: Vec::new() });
    let mut lm = std::mem::replace(&mut model.lm, Box::new(Empty));
    let reuse = measure_reuse(lm.as_mut(), &model, &long, options.gen_tokens).map_err(model_err)?;
    lm.clear();
    let ours = EngineFigures {
        engine: "b4".into(),
        build: crate::brain::model::kernels::kernel_set().to_string(),
        threads: candle_core::utils::get_num_threads(),
        load_ms,
        peak_rss_mib: peak_rss_mib(),
        prompts: figures,
    };
    Ok((ours, reuse, prompts, path))
}

/// Stands in for the model while it is borrowed out of [`LoadedModel`].
struct Empty;

impl CausalLm for Empty {
    fn forward(&mut self, _: &[u32]) -> candle_core::Result<candle_core::Tensor> {
        candle_core::bail!("no model")
    }
    fn cached_len(&self) -> usize {
        0
    }
    fn truncate(&mut self, _: usize) -> bool {
        false
    }
    fn clear(&mut self) {}
    fn max_chunk(&self) -> Option<usize> {
        None
    }
}

/// `$B4_PYTHON`; else the llama.cpp server environment `scripts/llama_server_env.sh`
/// builds for the served-model tests, when it is there; else `python3`.
fn python() -> String {
    if let Ok(python) = std::env::var("B4_PYTHON") {
        return python;
    }
    let env = crate::brain::fetch::cache_folder("B4_LLAMA_SERVER_ENV", LLAMA_SERVER_ENV).join("bin/python");
    if env.exists() {
        return env.display().to_string();
    }
    "python3".into()
}

/// The folder `scripts/llama_server_env.sh` installs llama-cpp-python into, under the cache.
const LLAMA_SERVER_ENV: &str = "llama-server-0.3.36";

/// `None` when `llama_cpp` imports; otherwise why not.
pub fn llama_cpp_missing() -> Option<String> {
    let out = Command::new(python()).args(["-c", "import llama_cpp"]).stdout(Stdio::null()).stderr(Stdio::piped()).output();
    match out {
        Ok(o) if o.status.success() => None,
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            Some(format!("llama_cpp was not found ({})", err.lines().last().unwrap_or("import failed").trim()))
        }
        Err(e) => Some(format!("llama_cpp was not found ({} cannot run: {e})", python())),
    }
}

/// Physical cores (distinct core ids per package in /proc/cpuinfo), else the logical count.
pub fn physical_cores() -> usize {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mut cores = std::collections::BTreeSet::new();
    let (mut package, mut core) = (None, None);
    for line in info.lines().chain(std::iter::once("")) {
        let value = || line.split(':').nth(1).map(|v| v.trim().to_string());
        if line.starts_with("physical id") {
            package = value();
        } else if line.starts_with("core id") {
            core = value();
        } else if line.trim().is_empty() {
            if let (Some(p), Some(c)) = (package.take(), core.take()) {
                cores.insert((p, c));
            }
        }
    }
    if cores.is_empty() {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        cores.len()
    }
}

/// The same prompts through llama.cpp in a Python subprocess.
pub fn measure_llama(model: &Path, prompts: &[PerfPrompt], options: &PerfOptions, timeout: Duration) -> Result<EngineFigures, PerfError> {
    let llama = |m: String| PerfError::Llama(m);
    let dir = tempfile::tempdir().map_err(|e| llama(format!("temp dir: {e}")))?;
    let script = dir.path().join("llama_cpp_perf.py");
    std::fs::write(&script, LLAMA_SCRIPT).map_err(|e| llama(format!("{}: {e}", script.display())))?;
    let longest = prompts.iter().map(|p| p.ids.len()).max().unwrap_or(0);
    let request = json!({
        "model": model,
        "threads": physical_cores(),
        "n_ctx": (longest + options.gen_tokens + 16).max(512),
        "gen_tokens": options.gen_tokens,
        "repeat": options.repeat,
        "prompts": prompts,
    });
    // Output goes to files: llama.cpp logs plenty, and a full pipe would block it.
    let out_path = dir.path().join("out.json");
    let err_path = dir.path().join("err.txt");
    let file = |path: &Path| std::fs::File::create(path).map_err(|e| llama(format!("{}: {e}", path.display())));
    let mut child = Command::new(python())
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .spawn()
        .map_err(|e| llama(format!("cannot start {}: {e}", python())))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(request.to_string().as_bytes()).map_err(|e| llama(format!("writing the request: {e}")))?;
    }
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                return Err(llama(format!("no answer within {} s", timeout.as_secs())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(llama(e.to_string())),
        }
    };
    if !status.success() {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        return Err(llama(format!("{status} ({})", err.trim().lines().last().unwrap_or(""))));
    }
    let stdout = std::fs::read(&out_path).map_err(|e| llama(format!("{}: {e}", out_path.display())))?;
    let raw: Value = serde_json::from_slice(&stdout).map_err(|e| llama(format!("its output is not JSON: {e}")))?;
    let mut engine: EngineFigures = serde_json::from_value(json!({
        "engine": "llama.cpp",
        "build": raw.get("build").cloned().unwrap_or(json!("")),
        "threads": raw.get("threads").cloned().unwrap_or(json!(0)),
        "load_ms": raw.get("load_ms").cloned().unwrap_or(json!(0.0)),
        "peak_rss_mib": raw.get("peak_rss_mib").cloned().unwrap_or(json!(0.0)),
        "prompts": [],
    }))
    .map_err(|e| llama(e.to_string()))?;
    let runs: Vec<Vec<RunFigures>> = serde_json::from_value(raw.get("runs").cloned().unwrap_or(json!([])))
        .map_err(|e| llama(format!("runs: {e}")))?;
    for (prompt, runs) in prompts.iter().zip(runs) {
        engine.prompts.push(summarise(prompt, options.gen_tokens, runs));
    }
    Ok(engine)
}

/// Weights streamed per second while decoding, and the share of the read bandwidth.
fn decode_gb_s(bytes: Option<u64>, tok_s: f64, read_gb_s: Option<f64>) -> String {
    let Some(bytes) = bytes else { return "-".into() };
    let gb_s = bytes as f64 * tok_s / 1e9;
    match read_gb_s {
        Some(read) if read > 0.0 => format!("{gb_s:.1} ({:.0}%)", 100.0 * gb_s / read),
        _ => format!("{gb_s:.1}"),
    }
}

/// ours / llama.cpp per prompt.
pub fn ratios(ours: &EngineFigures, llama: &EngineFigures) -> Vec<Ratio> {
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    ours.prompts
        .iter()
        .zip(&llama.prompts)
        .map(|(o, l)| {
            let first = |p: &PromptFigures| p.runs.first().map(|r| r.tokens.clone()).unwrap_or_default();
            let same_tokens = first(o).iter().zip(first(l).iter()).take_while(|(a, b)| a == b).count();
            Ratio { prompt: o.prompt.clone(), prefill: ratio(o.prefill_tok_s, l.prefill_tok_s), decode: ratio(o.decode_tok_s, l.decode_tok_s), same_tokens }
        })
        .collect()
}

/// The printed table.
pub fn render_table(report: &PerfReport) -> String {
    let mut out = String::new();
    let machine = &report.machine;
    out.push_str(&format!("machine: {}\n", machine.cpu));
    if let Some(gb_s) = machine.read_gb_s {
        out.push_str(&format!("read bandwidth: {gb_s:.1} GB/s ({} threads reading 1 GiB, best of 5 passes of each read loop)\n", machine.threads));
    }
    out.push('\n');
    out.push_str("| profile | engine | prompt | tokens | load ms | prefill tok/s | decode tok/s | decode GB/s | TTFT ms | peak RSS MiB |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for p in &report.profiles {
        for engine in std::iter::once(&p.ours).chain(p.llama_cpp.as_ref()) {
            for f in &engine.prompts {
                out.push_str(&format!(
                    "| {} | {} ({} thr) | {} | {} | {:.0} | {:.1} | {:.1} | {} | {:.0} | {:.0} |\n",
                    p.profile,
                    engine.engine,
                    engine.threads,
                    f.prompt,
                    f.prompt_tokens,
                    engine.load_ms,
                    f.prefill_tok_s,
                    f.decode_tok_s,
                    decode_gb_s(p.decode_bytes, f.decode_tok_s, machine.read_gb_s),
                    f.ttft_ms,
                    engine.peak_rss_mib
                ));
            }
        }
    }
    out.push_str("\ndecode GB/s: the model file's weights read per decode step (the KV cache not counted) times decode tok/s; in brackets, the share of the read bandwidth.\n");
    for p in &report.profiles {
        for engine in std::iter::once(&p.ours).chain(p.llama_cpp.as_ref()).filter(|e| !e.build.is_empty()) {
            out.push_str(&format!("{} on {}: {}\n", engine.engine, p.profile, engine.build));
        }
    }
    let any_ratios = report.profiles.iter().any(|p| !p.ratios.is_empty());
    if any_ratios {
        out.push_str("\n| profile | prompt | prefill ours/llama.cpp | decode ours/llama.cpp | peak RSS ours/llama.cpp | same greedy tokens |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for p in &report.profiles {
            for r in &p.ratios {
                out.push_str(&format!(
                    "| {} | {} | {:.2}x | {:.2}x | {} | {}/{} |\n",
                    p.profile,
                    r.prompt,
                    r.prefill,
                    r.decode,
                    p.peak_rss_ratio.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into()),
                    r.same_tokens,
                    report.options.gen_tokens
                ));
            }
        }
    }
    out.push_str("\n| profile | turn-2 tokens | reused | prefill with reuse ms | cold prefill ms | saved ms |\n|---|---|---|---|---|---|\n");
    for p in &report.profiles {
        let r = &p.reuse;
        out.push_str(&format!(
            "| {} | {} | {} | {:.0} | {:.0} | {:.0} |\n",
            p.profile, r.turn2_tokens, r.reused_tokens, r.reuse_ms, r.cold_ms, r.saved_ms
        ));
    }
    if let Some(why) = &report.llama_cpp_missing {
        out.push_str(&format!("\n{why}; the issue's reference figures instead:\n{REFERENCE_TABLE}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn options_reject_zero_and_single_generated_token() {
        let ok = PerfOptions { prompt_tokens: 16, gen_tokens: 2, repeat: 1 };
        assert!(ok.check().is_ok());
        let zero = PerfOptions { prompt_tokens: 0, ..ok.clone() };
        assert_eq!(zero.check().unwrap_err().to_string(), "--prompt-tokens must be at least 1 (got 0)");
        let one = PerfOptions { gen_tokens: 1, ..ok.clone() };
        assert_eq!(one.check().unwrap_err().to_string(), "--gen-tokens must be at least 2 (got 1)");
        let never = PerfOptions { repeat: 0, ..ok };
        assert_eq!(never.check().unwrap_err().to_string(), "--repeat must be at least 1 (got 0)");
    }

    #[test]
    fn the_read_loop_reads_every_word_and_the_cpu_is_named() {
        // 1003 distinct words: whole chunks of 64 and a remainder; leaving any word out
        // changes the fold.
        let words: Vec<u64> = (1..=1003u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let expected = words.iter().fold(0, |a, w| a ^ w);
        let loops = read_loops();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(loops.len(), if std::is_x86_feature_detected!("avx2") { 2 } else { 1 });
        for fold in loops {
            assert_eq!(fold(&words), expected);
            assert_ne!(fold(&words[..1002]), expected);
            assert_ne!(fold(&words[1..]), expected);
        }
        let cpu = cpu_description();
        assert!(cpu.contains(&format!("{} cores", physical_cores())), "{cpu}");
        assert!(cpu.contains("AMX") || !cfg!(target_arch = "x86_64"), "{cpu}");
    }

    #[test]
    fn peak_rss_is_read_from_proc() {
        assert!(peak_rss_mib() > 0.0);
        assert!(physical_cores() >= 1);
    }
}
