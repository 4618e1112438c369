//! The decoder on its own thread. A [`ModelHandle`] (cheap to clone) sends requests over a
//! channel to the one thread that owns the loaded model and its KV cache, and that knows
//! which token prefix the cache holds: a new prompt keeps the longest prefix it shares with
//! the cache and only the rest is prefilled. Text streams back in pieces that decode
//! cleanly; a cancel flag stops the decoder within one token.
//!
//! Loaded models are kept process-wide by (path, dtype, device): loading the same profile
//! again returns the running handle.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use serde_json::Value;

use super::config::Profile;
use super::fetch::checked_model_path_reporting;
use super::model::{device_name, load_model_reporting, select_device, CausalLm, LoadedModel, ModelInfo, SavedCache};
use super::progress::{self, LoadProgress, ProgressSink};
use super::template::ChatTemplate;
use super::tokenizer::{DecodeStream, ModelTokenizer};
use super::BrainError;
use crate::protocol::{DecisionStats, Stream};

/// Restricts which tokens may come next (constrained decoding). Called on the decoder
/// thread: `allowed` before each token, then `commit` with the token picked (stop tokens
/// included), then `is_finished`.
pub trait TokenConstraint {
    /// The tokens allowed next; `None` allows all. The others get `-inf` logits.
    fn allowed(&mut self) -> Option<Vec<u32>>;
    /// Records the token that was picked; an error ends the generation with that message.
    fn commit(&mut self, token: u32) -> Result<(), String>;
    /// Whether the output is complete: generation stops with [`StopKind::Constraint`].
    fn is_finished(&self) -> bool;
    /// Before each token: how many tokens the budget has left, this one included (so a
    /// constraint can close its answer in time).
    fn budget(&mut self, _remaining: usize) {}
    /// After a commit: the tokens the constraint forces next, if it knows them (the
    /// grammar allows only one continuation). A draft only: the decoder runs them in one
    /// batch with the token just picked and keeps each one only where the masked logits
    /// pick it anyway, so the output is what one-token steps give.
    fn draft(&mut self) -> Vec<u32> {
        Vec::new()
    }
    /// How many of `tokens`, from the current state on, the constraint would accept (none
    /// is committed). Drafts from elsewhere are cut to this.
    fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
        tokens.len()
    }
    /// Sets the logits of the tokens not allowed next to `-inf`, in place; `Ok(false)` when
    /// none is allowed. The default goes through [`TokenConstraint::allowed`]; a constraint
    /// that has a bitset over a large vocabulary applies it directly.
    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let Some(allowed) = self.allowed() else { return Ok(true) };
        let mut keep = vec![false; logits.len()];
        for &id in &allowed {
            if let Some(k) = keep.get_mut(id as usize) {
                *k = true;
            }
        }
        for (value, keep) in logits.iter_mut().zip(keep) {
            if !keep {
                *value = f32::NEG_INFINITY;
            }
        }
        Ok(!allowed.is_empty())
    }
}

/// A boxed constraint is one too, so that wrappers can stack over any of them.
impl<T: TokenConstraint + ?Sized> TokenConstraint for Box<T> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        (**self).allowed()
    }
    fn commit(&mut self, token: u32) -> Result<(), String> {
        (**self).commit(token)
    }
    fn is_finished(&self) -> bool {
        (**self).is_finished()
    }
    fn budget(&mut self, remaining: usize) {
        (**self).budget(remaining)
    }
    fn draft(&mut self) -> Vec<u32> {
        (**self).draft()
    }
    fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
        (**self).valid_prefix(tokens)
    }
    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        (**self).mask_logits(logits)
    }
}

/// How to decode.
pub struct GenParams {
    pub max_new_tokens: usize,
    pub max_input_tokens: usize,
    pub temperature: f64,
    pub top_p: f64,
    /// Sample (seeded) instead of picking the most likely token.
    pub do_sample: bool,
    pub seed: u64,
    /// Most tokens checked in one batch after a token picked (0: one token per step).
    pub draft_tokens: usize,
    pub constraint: Option<Box<dyn TokenConstraint + Send>>,
    /// A constraint still being made (beside the prefill): taken after the prompt is read,
    /// before the first token; `None` from it decodes free.
    pub constraint_later: Option<mpsc::Receiver<Option<Box<dyn TokenConstraint + Send>>>>,
}

impl Default for GenParams {
    fn default() -> Self {
        Self::from_profile(&Profile::default())
    }
}

impl GenParams {
    pub fn from_profile(profile: &Profile) -> Self {
        Self {
            max_new_tokens: profile.max_new_tokens,
            max_input_tokens: profile.max_input_tokens,
            temperature: profile.temperature,
            top_p: profile.top_p,
            do_sample: profile.do_sample,
            seed: profile.seed,
            draft_tokens: profile.draft_tokens,
            constraint: None,
            constraint_later: None,
        }
    }

    fn sampling(&self) -> Sampling {
        if !self.do_sample || self.temperature < 1e-7 {
            Sampling::ArgMax
        } else if self.top_p > 0.0 && self.top_p < 1.0 {
            Sampling::TopP { p: self.top_p, temperature: self.temperature }
        } else {
            Sampling::All { temperature: self.temperature }
        }
    }
}

impl std::fmt::Debug for GenParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenParams")
            .field("max_new_tokens", &self.max_new_tokens)
            .field("max_input_tokens", &self.max_input_tokens)
            .field("temperature", &self.temperature)
            .field("top_p", &self.top_p)
            .field("do_sample", &self.do_sample)
            .field("seed", &self.seed)
            .field("draft_tokens", &self.draft_tokens)
            .field("constraint", &self.constraint.is_some())
            .field("constraint_later", &self.constraint_later.is_some())
            .finish()
    }
}

/// Why generation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// A stop token (EOS, `<|im_end|>`, `<|endoftext|>`).
    Eos,
    MaxTokens,
    Cancelled,
    /// The constraint finished (or allowed nothing more).
    Constraint,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// The answer text (a final stop token's text is not included).
    pub text: String,
    /// Every token picked, a final stop token included.
    pub tokens: Vec<u32>,
    pub stats: DecisionStats,
    pub stop: StopKind,
    /// What went wrong on the side without stopping the generation (a prompt cache file
    /// refused), one line each.
    pub warnings: Vec<String>,
}

/// What the decoder thread and the handles share read-only.
struct Shared {
    tokenizer: ModelTokenizer,
    template: Option<ChatTemplate>,
    stop_tokens: Vec<u32>,
    info: ModelInfo,
    load_ms: f64,
}

/// What the decoder thread tells the thread that waits for it to load.
enum Loading {
    Progress(LoadProgress),
    Done(Result<Arc<Shared>, BrainError>),
}

enum Request {
    /// `acks`: one message per piece once the caller has handled it (and passed on a
    /// cancel its callback set), so a cancel from the callback lands before the next token
    /// even when tokens come faster than threads wake.
    Generate { prompt: String, params: GenParams, events: mpsc::Sender<Event>, acks: mpsc::Receiver<()>, cancel: Arc<AtomicBool> },
    CachedTokens { reply: mpsc::Sender<Vec<u32>> },
    Reset,
}

enum Event {
    /// `done` of `total` prompt tokens are in the cache.
    Prefill { done: usize, total: usize, reused: usize },
    Piece(String),
    Done(Result<Generation, BrainError>),
}

/// A loaded model running on its decoder thread.
#[derive(Clone)]
pub struct ModelHandle {
    requests: mpsc::Sender<Request>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ModelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelHandle").field("info", &self.shared.info).finish()
    }
}

type CacheKey = (PathBuf, String, String);

fn loaded_models() -> &'static Mutex<HashMap<CacheKey, ModelHandle>> {
    static MODELS: OnceLock<Mutex<HashMap<CacheKey, ModelHandle>>> = OnceLock::new();
    MODELS.get_or_init(|| Mutex::new(HashMap::new()))
}

impl ModelHandle {
    /// The running model for `profile`, loading it on first use.
    pub fn load(profile: &Profile) -> Result<ModelHandle, BrainError> {
        Self::load_reporting(profile, &progress::ignore)
    }

    /// [`ModelHandle::load`], telling `progress` (on this thread) how far verifying the
    /// file and loading the model have come. A model already loaded reports nothing.
    pub fn load_reporting(profile: &Profile, progress: ProgressSink<'_>) -> Result<ModelHandle, BrainError> {
        // No progress bar: the TUI may own the terminal. `b4 chat` and the TUI check
        // with one first (`ensure_model`), so this finds a fresh stamp there; another
        // profile's file may still be hashed here, and `progress` hears of it.
        let path = checked_model_path_reporting(profile, progress)?;
        let path = path.canonicalize().unwrap_or(path);
        let device = select_device(profile.device)?;
        let key = (path.clone(), profile.dtype.to_ascii_lowercase(), device_name(&device).to_string());
        // Held while loading so that two callers never load the same model twice.
        let mut models = loaded_models().lock().map_err(|_| BrainError::Other("model cache lock poisoned".into()))?;
        if let Some(handle) = models.get(&key) {
            return Ok(handle.clone());
        }
        let tokenizer = profile.tokenizer.as_ref().map(PathBuf::from);
        let dtype = profile.dtype.clone();
        let handle = Self::spawn(
            move |report| {
                let started = Instant::now();
                let loaded = load_model_reporting(&path, tokenizer.as_deref(), &dtype, &device, report)?;
                Ok((loaded, started.elapsed().as_secs_f64() * 1000.0))
            },
            progress,
        )?;
        models.insert(key, handle.clone());
        Ok(handle)
    }

    /// Runs an already loaded model on a new decoder thread (not shared through the cache).
    pub fn from_loaded(model: LoadedModel) -> Result<ModelHandle, BrainError> {
        Self::spawn(move |_| Ok((model, 0.0)), &progress::ignore)
    }

    /// Loads on the new decoder thread; its progress reports come back over the channel
    /// and go to `progress` here, so the caller's callback never crosses threads.
    fn spawn<F>(load: F, progress: ProgressSink<'_>) -> Result<ModelHandle, BrainError>
    where
        F: FnOnce(ProgressSink<'_>) -> Result<(LoadedModel, f64), BrainError> + Send + 'static,
    {
        let (requests, inbox) = mpsc::channel::<Request>();
        let (ready_tx, ready_rx) = mpsc::channel::<Loading>();
        thread::Builder::new()
            .name("b4-decoder".into())
            .spawn(move || {
                let report = |p: LoadProgress| {
                    let _ = ready_tx.send(Loading::Progress(p));
                };
                let (model, load_ms) = match load(&report) {
                    Ok(loaded) => loaded,
                    Err(e) => {
                        let _ = ready_tx.send(Loading::Done(Err(e)));
                        return;
                    }
                };
                let LoadedModel { lm, tokenizer, template, stop_tokens, info } = model;
                let shared = Arc::new(Shared { tokenizer, template, stop_tokens, info, load_ms });
                let mut decoder = Decoder { lm, cached: Vec::new(), alternates: Vec::new(), shared: shared.clone(), identity: None };
                if ready_tx.send(Loading::Done(Ok(shared))).is_err() {
                    return;
                }
                decoder.serve(inbox);
            })
            .map_err(|e| BrainError::Other(format!("cannot start the decoder thread: {e}")))?;
        let shared = loop {
            match ready_rx.recv() {
                Ok(Loading::Progress(p)) => progress(p),
                Ok(Loading::Done(result)) => break result?,
                Err(_) => return Err(BrainError::Other("the decoder thread stopped while loading".into())),
            }
        };
        Ok(ModelHandle { requests, shared })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.shared.info
    }

    /// How long loading took (0 for [`ModelHandle::from_loaded`]).
    pub fn load_ms(&self) -> f64 {
        self.shared.load_ms
    }

    pub fn tokenizer(&self) -> &ModelTokenizer {
        &self.shared.tokenizer
    }

    /// The model's chat template, when it has one.
    pub fn chat_template(&self) -> Option<&ChatTemplate> {
        self.shared.template.as_ref()
    }

    pub fn stop_tokens(&self) -> &[u32] {
        &self.shared.stop_tokens
    }

    /// The prompt for `messages` (and `tools`) in the model's chat template, ending with
    /// the assistant turn's opening.
    pub fn render(&self, messages: &[Value], tools: Option<&[Value]>) -> Result<String, BrainError> {
        self.render_template(messages, tools, true)
    }

    /// [`ModelHandle::render`] with the template's thinking switch set.
    pub fn render_thinking(&self, messages: &[Value], tools: Option<&[Value]>, thinking: bool) -> Result<String, BrainError> {
        let template = self.shared.template.as_ref().ok_or_else(|| {
            BrainError::Template(format!("{} has no chat template", self.shared.info.path.display()))
        })?;
        template.render_thinking(messages, tools, true, thinking)
    }

    pub fn render_template(&self, messages: &[Value], tools: Option<&[Value]>, add_generation_prompt: bool) -> Result<String, BrainError> {
        let template = self.shared.template.as_ref().ok_or_else(|| {
            BrainError::Template(format!("{} has no chat template", self.shared.info.path.display()))
        })?;
        template.render(messages, tools, add_generation_prompt)
    }

    pub fn token_count(&self, text: &str) -> Result<usize, BrainError> {
        Ok(self.shared.tokenizer.encode(text)?.len())
    }

    /// Decodes an answer to `prompt` (already rendered), calling `on_token` with each clean
    /// piece of text as it comes. Stops at a stop token, `max_new_tokens`, the constraint's
    /// end, or within one token of `cancel` being set (then `stop` is `Cancelled`).
    pub fn generate(
        &self,
        prompt: &str,
        params: GenParams,
        on_token: &mut dyn FnMut(Stream<'_>),
        cancel: &AtomicBool,
    ) -> Result<Generation, BrainError> {
        type Make = fn() -> Option<Box<dyn TokenConstraint + Send>>;
        self.generate_making(prompt, params, None::<Make>, on_token, cancel)
    }

    /// [`ModelHandle::generate`] with the constraint made by `make` on this thread while
    /// the decoder reads the prompt: the decoder takes it before the first token (`None`
    /// from it decodes free). A grammar's first use in a process waits for the vocabulary's
    /// token space, built while the model loaded; this way the prompt is read meanwhile.
    pub fn generate_making<F: FnOnce() -> Option<Box<dyn TokenConstraint + Send>>>(
        &self,
        prompt: &str,
        mut params: GenParams,
        make: Option<F>,
        on_token: &mut dyn FnMut(Stream<'_>),
        cancel: &AtomicBool,
    ) -> Result<Generation, BrainError> {
        let stop = Arc::new(AtomicBool::new(cancel.load(Ordering::Relaxed)));
        let (events, inbox) = mpsc::channel();
        let (ack, acks) = mpsc::channel();
        let slot = make.is_some().then(|| {
            let (slot, later) = mpsc::sync_channel(1);
            params.constraint_later = Some(later);
            slot
        });
        self.requests
            .send(Request::Generate { prompt: prompt.to_string(), params, events, acks, cancel: stop.clone() })
            .map_err(|_| BrainError::Generation("the decoder thread has stopped".into()))?;
        if let (Some(make), Some(slot)) = (make, slot) {
            // Nobody takes it when the generation ended before its first token.
            let _ = slot.send(make());
        }
        loop {
            match inbox.recv_timeout(Duration::from_millis(5)) {
                // Not acknowledged: the prompt is read while the caller makes the constraint.
                Ok(Event::Prefill { done, total, reused }) => on_token(Stream::Prefill { done, total, reused }),
                Ok(Event::Piece(piece)) => {
                    on_token(Stream::Text(&piece));
                    if cancel.load(Ordering::Relaxed) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    // The decoder waits for this before its next token.
                    let _ = ack.send(());
                }
                Ok(Event::Done(result)) => return result,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(BrainError::Generation("the decoder thread stopped during generation".into()));
                }
            }
            if cancel.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The tokens whose keys and values the cache holds now.
    pub fn cached_tokens(&self) -> Result<Vec<u32>, BrainError> {
        let (reply, answer) = mpsc::channel();
        self.requests
            .send(Request::CachedTokens { reply })
            .map_err(|_| BrainError::Generation("the decoder thread has stopped".into()))?;
        answer.recv().map_err(|_| BrainError::Generation("the decoder thread has stopped".into()))
    }

    /// Empties the KV cache (the next prompt is prefilled in full).
    pub fn reset(&self) -> Result<(), BrainError> {
        self.requests
            .send(Request::Reset)
            .map_err(|_| BrainError::Generation("the decoder thread has stopped".into()))
    }
}

/// A first message shorter than this is not written to disk: its prefill takes well
/// under a second.
const MIN_ON_DISK: usize = 128;

/// Caches kept beside the current one. Two: the other way of passing tools (F2) and one
/// more (a plan's phase, or the conversation before a side question). A 2,000-token cache
/// of the 0.5B model is ~50 MB, of the 1.5B ~115 MB.
const MAX_ALTERNATES: usize = 2;

/// A cache shorter than this is not worth keeping aside: refilling it takes less than a
/// second.
const MIN_KEPT_ASIDE: usize = 64;

/// A KV cache set aside, with the tokens it holds.
struct Alternate {
    tokens: Vec<u32>,
    cache: SavedCache,
}

/// The decoder thread's state: the model, the tokens its cache holds, and caches set aside
/// for prompts that come back (the other way of passing tools, the other phase).
struct Decoder {
    lm: Box<dyn CausalLm>,
    /// Exactly the tokens in the KV cache, in order.
    cached: Vec<u32>,
    /// Oldest first.
    alternates: Vec<Alternate>,
    shared: Arc<Shared>,
    /// The model as the prompt cache on disk knows it (worked out on first use).
    identity: Option<String>,
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Decoder {
    fn serve(&mut self, inbox: mpsc::Receiver<Request>) {
        while let Ok(request) = inbox.recv() {
            match request {
                Request::Generate { prompt, params, events, acks, cancel } => {
                    let mut emit = |event: Event| {
                        // A piece waits for the caller to take it (who may cancel before
                        // the next); prefill progress does not. The caller went away:
                        // nobody wants the rest.
                        let piece = matches!(event, Event::Piece(_));
                        if events.send(event).is_err() || (piece && acks.recv().is_err()) {
                            cancel.store(true, Ordering::Relaxed);
                        }
                    };
                    let result = self.generate(&prompt, params, &mut emit, &cancel);
                    let _ = events.send(Event::Done(result));
                }
                Request::CachedTokens { reply } => {
                    let _ = reply.send(self.cached.clone());
                }
                Request::Reset => {
                    self.lm.clear();
                    self.cached.clear();
                    self.alternates.clear();
                }
            }
        }
    }

    fn forward(&mut self, tokens: &[u32]) -> Result<Tensor, BrainError> {
        self.run_model(tokens, false)
    }

    /// Like [`Decoder::forward`], with the logits of every position.
    fn forward_all(&mut self, tokens: &[u32]) -> Result<Tensor, BrainError> {
        self.run_model(tokens, true)
    }

    /// Runs `tokens` (the logits of every position or of the last) and records them as
    /// cached; a failed forward empties every cache.
    fn run_model(&mut self, tokens: &[u32], every_position: bool) -> Result<Tensor, BrainError> {
        let result = if every_position { self.lm.forward_all(tokens) } else { self.lm.forward(tokens) };
        self.ran(tokens, result)
    }

    /// Like [`Decoder::forward_all`], with each position's hidden row instead of its logits
    /// ([`Decoder::project`] makes them); `None` where the model has no such pass.
    fn forward_hidden(&mut self, tokens: &[u32]) -> Result<Option<Vec<f32>>, BrainError> {
        let Some(result) = self.lm.forward_hidden(tokens) else { return Ok(None) };
        self.ran(tokens, result).map(Some)
    }

    /// The logits of a hidden row (only `ids`' when given, the others `-inf`), with the
    /// ids past the tokenizer's `vocab` at `-inf` as [`logit_values`] leaves them.
    fn project(&mut self, hidden: &[f32], ids: Option<&[u32]>, vocab: usize) -> Result<Vec<f32>, BrainError> {
        Ok(past_vocab_masked(self.lm.project(hidden, ids).map_err(gen_err)?, vocab))
    }

    /// Records a forward call's `tokens` as cached, or on failure empties every cache.
    fn ran<T>(&mut self, tokens: &[u32], result: candle_core::Result<T>) -> Result<T, BrainError> {
        match result {
            Ok(out) => {
                self.cached.extend_from_slice(tokens);
                Ok(out)
            }
            Err(e) => {
                // The cache may hold part of the batch: start clean next time.
                self.lm.clear();
                self.cached.clear();
                self.alternates.clear();
                Err(BrainError::Generation(e.to_string()))
            }
        }
    }

    /// Positions where a later prompt is likely to part from `tokens`: after its first
    /// message (the system prompt and the tools), and before its last turn opens (the
    /// last special token that does not end a turn, e.g. `<|im_start|>` of the assistant:
    /// the next prompt has the answer there, rendered by the template).
    fn turn_bounds(&self, tokens: &[u32]) -> Vec<usize> {
        let shared = &self.shared;
        let first = tokens.iter().position(|t| shared.stop_tokens.contains(t)).map(|i| i + 1);
        let last = tokens.iter().rposition(|&t| shared.tokenizer.is_special(t) && !shared.stop_tokens.contains(&t));
        [first, last].into_iter().flatten().filter(|&i| i > 0 && i < tokens.len()).collect()
    }

    /// The prompt's first message (the system prompt and the tools schema), through its
    /// end-of-turn token: the part of a prompt kept on disk. `None` when there is none, or
    /// it is too short to be worth a file, or it is the whole prompt.
    fn first_message(&self, tokens: &[u32]) -> Option<usize> {
        let end = tokens.iter().position(|t| self.shared.stop_tokens.contains(t))? + 1;
        (end >= MIN_ON_DISK && end < tokens.len()).then_some(end)
    }

    fn identity(&mut self) -> String {
        let info = &self.shared.info;
        self.identity
            .get_or_insert_with(|| prompt_store::model_identity(&info.path, &format!("{} {}", info.device, self.lm.cache_kind())))
            .clone()
    }

    /// Before a prompt is prefilled: when the prompt cache is on and no cache in memory
    /// holds the prompt's first message, loads it from disk into the current cache (the
    /// current one set aside). Returns the tokens loaded, and the first message's length
    /// when it should be saved after the prefill (not on disk yet).
    fn prefix_from_disk(&mut self, tokens: &[u32], warnings: &mut Vec<String>) -> (usize, Option<usize>) {
        let (Some(store), Some(end)) = (prompt_store::current(), self.first_message(tokens)) else {
            return (0, None);
        };
        if !self.lm.can_export() {
            return (0, None);
        }
        let id = self.identity();
        let prefix = &tokens[..end];
        let in_memory = self.alternates.iter().map(|a| common_prefix(&a.tokens, tokens)).chain([common_prefix(&self.cached, tokens)]).max().unwrap_or(0);
        if in_memory >= end {
            return (0, (!store.has(&id, prefix)).then_some(end));
        }
        match store.load(&id, prefix) {
            Ok(Some(image)) => {
                self.set_aside_current();
                if self.lm.import_cache(image) {
                    self.cached = prefix.to_vec();
                    (end, None)
                } else {
                    self.cached.clear();
                    warnings.push("prompt cache: a saved prefix did not fit the model; prefilled instead".into());
                    (0, None)
                }
            }
            Ok(None) => (0, Some(end)),
            Err(e) => {
                warnings.push(e);
                (0, Some(end))
            }
        }
    }

    /// After a prefill: saves the cache of `prefix` (the prompt's first message) to disk.
    fn prefix_to_disk(&mut self, prefix: &[u32], warnings: &mut Vec<String>) {
        let Some(store) = prompt_store::current() else { return };
        if self.cached.get(..prefix.len()) != Some(prefix) {
            return;
        }
        let id = self.identity();
        if let Some(image) = self.lm.export_cache(prefix.len()) {
            if let Err(e) = store.save(&id, prefix, &image) {
                warnings.push(e);
            }
        }
    }

    /// The tokens to check after the one just picked: those the constraint forces, else
    /// a lookup in the prompt and the answer so far ([`lookup`]) cut to what the
    /// constraint accepts; at most `room`.
    fn draft(prompt: &[u32], generated: &[u32], constraint: Option<&mut Box<dyn TokenConstraint + Send>>, room: usize) -> Vec<u32> {
        if room == 0 {
            return Vec::new();
        }
        let mut context = Vec::with_capacity(prompt.len() + generated.len());
        context.extend_from_slice(prompt);
        context.extend_from_slice(generated);
        let Some(constraint) = constraint else {
            return lookup::draft(&context, room);
        };
        let mut forced = constraint.draft();
        if forced.is_empty() {
            forced = lookup::draft(&context, room);
            let valid = constraint.valid_prefix(&forced);
            forced.truncate(valid);
        }
        forced.truncate(room);
        forced
    }

    /// Takes the last `count` cached tokens (a draft not picked) out of the cache.
    fn drop_draft(&mut self, count: usize) -> Result<(), BrainError> {
        let keep = self.cached.len().saturating_sub(count);
        if self.lm.truncate(keep) {
            self.cached.truncate(keep);
            Ok(())
        } else {
            // A model that cannot cut its cache starts clean next time.
            self.lm.clear();
            self.cached.clear();
            Err(BrainError::Generation("the model cannot take a draft back out of its cache".into()))
        }
    }

    /// Makes the cache that shares the longest prefix with `tokens` the current one: an
    /// alternate that shares more than the current cache takes its place (a copy of the
    /// current one is set aside), and a copy of a current cache that `tokens` would mostly
    /// throw away is set aside before the new prompt overwrites it. So switching back and
    /// forth between two prompts (the two ways of passing tools) prefills each one once.
    fn pick_cache(&mut self, tokens: &[u32]) {
        let current = common_prefix(&self.cached, tokens);
        let best = self
            .alternates
            .iter()
            .enumerate()
            .map(|(i, alternate)| (i, common_prefix(&alternate.tokens, tokens)))
            .max_by_key(|&(i, shared)| (shared, i));
        match best {
            Some((i, shared)) if shared > current => {
                let alternate = self.alternates.remove(i);
                self.set_aside_current();
                if self.lm.restore_cache(alternate.cache) {
                    self.cached = alternate.tokens;
                } else {
                    self.lm.clear();
                    self.cached.clear();
                }
            }
            _ if self.cached.len() - current >= MIN_KEPT_ASIDE && current * 2 < self.cached.len() => self.set_aside_current(),
            _ => {}
        }
    }

    /// Sets a copy of the current cache aside (when worth keeping), dropping the oldest
    /// alternate beyond [`MAX_ALTERNATES`].
    fn set_aside_current(&mut self) {
        if self.cached.len() < MIN_KEPT_ASIDE {
            return;
        }
        if let Some(cache) = self.lm.save_cache() {
            self.alternates.push(Alternate { tokens: self.cached.clone(), cache });
            if self.alternates.len() > MAX_ALTERNATES {
                self.alternates.remove(0);
            }
        }
    }

    /// Keeps the longest cached prefix of `tokens` (always leaving at least one token to
    /// run, for its logits); returns how many tokens are reused.
    fn reuse_prefix(&mut self, tokens: &[u32]) -> usize {
        self.pick_cache(tokens);
        let shared = common_prefix(&self.cached, tokens);
        // A recurrent model keeps only what it has a checkpoint for.
        let keep = self.lm.reusable_prefix(shared.min(tokens.len().saturating_sub(1)));
        if self.lm.truncate(keep) {
            self.cached.truncate(keep);
            keep
        } else {
            self.lm.clear();
            self.cached.clear();
            0
        }
    }

    fn generate(
        &mut self,
        prompt: &str,
        mut params: GenParams,
        emit: &mut dyn FnMut(Event),
        cancel: &AtomicBool,
    ) -> Result<Generation, BrainError> {
        let started = Instant::now();
        let shared = self.shared.clone();
        let tokens = shared.tokenizer.encode(prompt)?;
        if tokens.is_empty() {
            return Err(BrainError::Generation("the prompt is empty".into()));
        }
        if tokens.len() > params.max_input_tokens {
            return Err(BrainError::PromptTooLong { tokens: tokens.len(), max: params.max_input_tokens });
        }
        let context = shared.info.context_length;
        if tokens.len() >= context {
            return Err(BrainError::PromptTooLong { tokens: tokens.len(), max: context.saturating_sub(1) });
        }
        let max_new = params.max_new_tokens.min(context - tokens.len());

        let mut warnings = Vec::new();
        let (from_disk, to_save) = self.prefix_from_disk(&tokens, &mut warnings);
        let reused = self.reuse_prefix(&tokens);
        let mut stats = DecisionStats {
            prompt_tokens: tokens.len(),
            reused_tokens: reused,
            prompt_cache_tokens: from_disk.min(reused),
            ..DecisionStats::default()
        };
        let fresh_len = tokens.len() - reused;
        let chunk = self.lm.max_chunk().unwrap_or(fresh_len).max(1);
        let mut logits = None;
        let total = tokens.len();
        if fresh_len > 0 {
            emit(Event::Prefill { done: reused, total, reused });
        }
        // Where the next prompt of the conversation is likely to part from this one: a
        // model whose cache only goes back to checkpoints keeps one there.
        let marks = if self.lm.checkpointed() { self.turn_bounds(&tokens) } else { Vec::new() };
        let mut at = reused;
        while at < total {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            let end = marks.iter().copied().filter(|&m| m > at).fold((at + chunk).min(total), usize::min);
            logits = Some(self.forward(&tokens[at..end])?);
            at = end;
            if marks.contains(&at) {
                self.lm.mark();
            }
            emit(Event::Prefill { done: self.cached.len(), total, reused });
        }
        if self.cached.len() == tokens.len() {
            self.lm.mark();
        }
        stats.prefill_ms = ms_since(started);
        stats.prefill_tok_s = per_second(self.cached.len().saturating_sub(reused), stats.prefill_ms);
        if let Some(prefix) = to_save {
            self.prefix_to_disk(&tokens[..prefix], &mut warnings);
        }
        let Some(logits) = logits.filter(|_| self.cached.len() == tokens.len()) else {
            stats.latency_ms = ms_since(started);
            return Ok(Generation { text: String::new(), tokens: Vec::new(), stats, stop: StopKind::Cancelled, warnings });
        };

        if let Some(later) = params.constraint_later.take() {
            let waiting = Instant::now();
            let constraint = later.recv().map_err(|_| BrainError::Generation("the constraint was never made (its thread stopped)".into()))?;
            stats.grammar_wait_ms = ms_since(waiting);
            params.constraint = constraint.or(params.constraint.take());
            release_free_pages();
        }
        let decode_started = Instant::now();
        let mut processor = LogitsProcessor::from_sampling(params.seed, params.sampling());
        let vocab = shared.tokenizer.vocab_size();
        let mut stream = DecodeStream::new();
        let mut text = String::new();
        let mut generated = Vec::new();
        // Logits of the positions after the last token picked, in order: one row, or one
        // per draft token still to check.
        let mut rows = VecDeque::from([Row::Logits(logit_values(&logits, vocab)?)]);
        // Tokens the grammar forced, run in the cache ahead of being picked.
        let mut draft: VecDeque<u32> = VecDeque::new();
        let mut forwarded = 0usize;
        let mut stop = StopKind::MaxTokens;
        for step in 0..max_new {
            if cancel.load(Ordering::Relaxed) {
                stop = StopKind::Cancelled;
                break;
            }
            if params.constraint.as_ref().is_some_and(|c| c.is_finished()) {
                stop = StopKind::Constraint;
                break;
            }
            let Some(row) = rows.pop_front() else {
                return Err(BrainError::Generation("decoder: no logits for the next token".into()));
            };
            if let Some(c) = params.constraint.as_mut() {
                c.budget(max_new - step);
            }
            let mut values = match row {
                Row::Logits(values) => values,
                Row::Hidden(hidden) => {
                    // The grammar's tokens first: where it allows few, only their rows of
                    // the vocabulary projection are computed.
                    let allowed = params.constraint.as_mut().and_then(|c| {
                        let masking = Instant::now();
                        let allowed = c.allowed();
                        stats.mask_ms += ms_since(masking);
                        allowed
                    });
                    let few = allowed.filter(|ids| ids.len() <= vocab / SPARSE_SHARE);
                    self.project(&hidden, few.as_deref(), vocab)?
                }
            };
            if let Some(c) = params.constraint.as_mut() {
                let masking = Instant::now();
                let any = c.mask_logits(&mut values).map_err(|e| BrainError::Generation(format!("constraint: {e}")))?;
                stats.mask_ms += ms_since(masking);
                if !any {
                    stop = StopKind::Constraint;
                    break;
                }
            }
            let token = sample(&mut processor, values)?;
            if let Some(c) = params.constraint.as_mut() {
                let committing = Instant::now();
                c.commit(token)
                    .map_err(|e| BrainError::Generation(format!("constraint rejected token {token}: {e}")))?;
                stats.mask_ms += ms_since(committing);
            }
            generated.push(token);
            // A draft token picked is already in the cache with its logits; one not picked
            // goes, with the rest of the draft.
            let drafted = match draft.pop_front() {
                Some(expected) if expected == token => {
                    stats.fast_forwarded += 1;
                    true
                }
                Some(_) => {
                    self.drop_draft(draft.len() + 1)?;
                    draft.clear();
                    rows.clear();
                    false
                }
                None => false,
            };
            if shared.stop_tokens.contains(&token) {
                stop = StopKind::Eos;
                break;
            }
            if let Some(piece) = stream.push(&shared.tokenizer, token)? {
                text.push_str(&piece);
                emit(Event::Piece(piece));
            }
            if params.constraint.as_ref().is_some_and(|c| c.is_finished()) {
                stop = StopKind::Constraint;
                break;
            }
            if step + 1 == max_new || drafted {
                continue;
            }
            // The forced tokens after this one (no more than the budget can take) go through
            // the model in the same batch.
            // Only a model that can cut its cache can take a draft back.
            let forced = if shared.info.prefix_reuse {
                let drafting = Instant::now();
                let room = (max_new - step - 2).min(params.draft_tokens);
                let forced = Self::draft(&tokens, &generated, params.constraint.as_mut(), room);
                // The grammar's share of the drafting is the mask's; a lookup alone is not.
                if params.constraint.is_some() {
                    stats.mask_ms += ms_since(drafting);
                }
                forced
            } else {
                Vec::new()
            };
            let mut batch = Vec::with_capacity(forced.len() + 1);
            batch.push(token);
            batch.extend_from_slice(&forced);
            if let Some(hidden) = self.forward_hidden(&batch)? {
                let width = hidden.len() / batch.len();
                rows.extend(hidden.chunks_exact(width.max(1)).map(|h| Row::Hidden(h.to_vec())));
            } else if forced.is_empty() {
                rows.push_back(Row::Logits(logit_values(&self.forward(&[token])?, vocab)?));
            } else {
                let all = self.forward_all(&batch)?;
                for row in 0..batch.len() {
                    rows.push_back(Row::Logits(logit_values(&all.get(row).map_err(gen_err)?, vocab)?));
                }
            }
            draft.extend(forced);
            forwarded += 1;
        }
        // Draft tokens never picked leave the cache.
        if !draft.is_empty() {
            self.drop_draft(draft.len())?;
        }
        stats.fast_forwarded = stats.fast_forwarded.min(generated.len());
        forwarded += stats.fast_forwarded;
        if let Some(rest) = stream.finish(&shared.tokenizer)? {
            text.push_str(&rest);
            emit(Event::Piece(rest));
        }
        // The next prompt of a conversation may go on from the answer.
        self.lm.mark();
        stats.generated_tokens = generated.len();
        stats.decode_ms = ms_since(decode_started);
        stats.decode_tok_s = per_second(forwarded, stats.decode_ms);
        stats.latency_ms = ms_since(started);
        Ok(Generation { text, tokens: generated, stats, stop, warnings })
    }
}

fn gen_err(e: candle_core::Error) -> BrainError {
    BrainError::Generation(e.to_string())
}

/// What the decoder holds for a position not yet picked from: its logits, or its hidden
/// row when the model projects on demand (then only the tokens the grammar allows may be
/// projected).
enum Row {
    Logits(Vec<f32>),
    Hidden(Vec<f32>),
}

/// Where the grammar allows at most this share of the vocabulary (1 / n), only those
/// tokens' logits are computed: one thread over a few thousand rows of the projection beats
/// both threads over all of them.
const SPARSE_SHARE: usize = 8;

/// The logits as values, masked to the tokenizer's vocabulary.
fn logit_values(logits: &Tensor, vocab: usize) -> Result<Vec<f32>, BrainError> {
    let values: Vec<f32> = logits.to_vec1().map_err(gen_err)?;
    Ok(past_vocab_masked(values, vocab))
}

fn past_vocab_masked(mut values: Vec<f32>, vocab: usize) -> Vec<f32> {
    // Ids past the tokenizer's vocabulary (padding rows of the output matrix) never decode.
    for v in values.iter_mut().skip(vocab) {
        *v = f32::NEG_INFINITY;
    }
    values
}

/// The next token from (masked) logits: greedy or sampled as the processor was set up.
fn sample(processor: &mut LogitsProcessor, values: Vec<f32>) -> Result<u32, BrainError> {
    let n = values.len();
    let masked = Tensor::from_vec(values, n, &Device::Cpu).map_err(gen_err)?;
    processor.sample(&masked).map_err(gen_err)
}

/// Gives the allocator's free pages back to the system (about 4 ms). Making a grammar
/// while the prompt is read interleaves two threads' allocations (the token space's
/// temporaries, the prompt cache's layers), which leaves 20-40 MiB of holes in glibc's
/// arenas that would stay resident for the rest of the process (docs/perf.md).
fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory; no pointer is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Milliseconds since `start`.
pub(crate) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// `count` per second over `ms` milliseconds (0 when no time passed).
pub(crate) fn per_second(count: usize, ms: f64) -> f64 {
    if ms > 0.0 {
        count as f64 * 1000.0 / ms
    } else {
        0.0
    }
}

mod lookup;
pub mod prompt_store;

#[cfg(test)]
mod tests;
