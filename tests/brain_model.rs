//! The brain's model layer on the real default model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M).
//!
//! These tests need the model file: CI runs `b4 models fetch qwen2.5-coder-0.5b` first. A
//! missing file fails the tests with that instruction; they are never skipped.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use b4_agent::brain::config::{ModelConfig, Profile};
use b4_agent::brain::fetch::find_asset;
use b4_agent::brain::generate::{GenParams, Generation, ModelHandle, StopKind};
use b4_agent::brain::model::{CpuQwen2, Qwen2, Qwen2Config};
use b4_agent::brain::tokenizer::ModelTokenizer;
use b4_agent::protocol::Stream;
use b4_agent::brain::BrainError;
use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};
use serde_json::{json, Value};

const ASSET: &str = "qwen2.5-coder-0.5b";

/// The decoder is one shared thread with one KV cache: tests that look at the cache must
/// not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn model_path() -> PathBuf {
    common::default_model_path()
}

fn default_profile() -> Profile {
    model_path();
    let config = ModelConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/model.yaml")).unwrap();
    config.profile(None).unwrap()
}

fn handle() -> ModelHandle {
    ModelHandle::load(&default_profile()).unwrap()
}

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizer").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn greedy(max_new_tokens: usize) -> GenParams {
    GenParams { max_new_tokens, ..GenParams::from_profile(&default_profile()) }
}

fn generate(handle: &ModelHandle, prompt: &str, params: GenParams) -> (Generation, Vec<String>) {
    let mut pieces = Vec::new();
    let never = AtomicBool::new(false);
    let generation = handle.generate(prompt, params, &mut |p| {
        if let Stream::Text(text) = p {
            pieces.push(text.to_string())
        }
    }, &never).unwrap();
    (generation, pieces)
}

fn user(text: &str) -> Vec<Value> {
    vec![json!({"role": "system", "content": "You are a helpful assistant."}), json!({"role": "user", "content": text})]
}

#[test]
fn tokenizer_from_gguf_matches_the_reference_ids() {
    let mut file = File::open(model_path()).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let tokenizer = ModelTokenizer::from_gguf(&content.metadata).unwrap();
    let tokens = fixture("qwen2.5-coder-tokens.json");
    assert_eq!(tokens["source"]["model_sha256"], find_asset(ASSET).unwrap().sha256);
    let cases = tokens["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let expected: Vec<u32> = case["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        let ids = tokenizer.encode(text).unwrap();
        assert_eq!(ids, expected, "ids of {text:?}");
        assert_eq!(tokenizer.decode(&ids).unwrap(), text, "round trip of {text:?}");
    }
    assert_eq!(tokenizer.token_id("<|im_end|>"), Some(151_645));
    assert!(tokenizer.is_special(151_645));
    assert_eq!(tokenizer.vocab_size(), 151_936);

    // The template the GGUF carries is the one the template fixture was rendered from.
    let template = content.metadata["tokenizer.chat_template"].to_string().unwrap();
    assert_eq!(template, fixture("chat_template_cases.json")["chat_template"].as_str().unwrap());
}

#[test]
fn loading_is_cached_and_renders_the_models_own_template() {
    let _serial = serial();
    let first = handle();
    let started = Instant::now();
    let again = handle();
    assert!(started.elapsed() < Duration::from_millis(100), "second load took {:?}", started.elapsed());
    assert_eq!(again.info(), first.info());
    assert_eq!(first.info().architecture, "qwen2");
    assert!(first.info().prefix_reuse);
    assert_eq!(first.stop_tokens(), &[151_643, 151_645]);

    let cases = fixture("chat_template_cases.json");
    for case in cases["cases"].as_array().unwrap() {
        if case["add_generation_prompt"] != json!(true) {
            continue;
        }
        let messages = case["messages"].as_array().unwrap();
        let tools = case["tools"].as_array().map(Vec::as_slice);
        assert_eq!(first.render(messages, tools).unwrap(), case["rendered"].as_str().unwrap(), "{}", case["name"]);
    }
    let prompt = first.render(&user("你好"), None).unwrap();
    assert_eq!(first.token_count(&prompt).unwrap(), 20);
}

#[test]
fn greedy_generation_is_deterministic_and_streams() {
    let _serial = serial();
    let handle = handle();
    let prompt = handle.render(&user("What is 2+3? Answer with just the number."), None).unwrap();
    handle.reset().unwrap();
    let (first, pieces) = generate(&handle, &prompt, greedy(8));
    handle.reset().unwrap();
    let (second, _) = generate(&handle, &prompt, greedy(8));
    assert_eq!(first.tokens, second.tokens);
    assert_eq!(first.text, second.text);
    assert_eq!(first.stop, StopKind::Eos, "{first:?}");
    assert_eq!(first.text.trim(), "5");
    assert_eq!(pieces.concat(), first.text);
    assert_eq!(first.tokens.last(), Some(&151_645));
    assert_eq!(first.stats.reused_tokens, 0);
    assert_eq!(first.stats.prompt_tokens, handle.token_count(&prompt).unwrap());

    // Chinese streams in whole characters.
    let prompt = handle.render(&user("用中文回答：中国的首都是哪里？只回答城市名。"), None).unwrap();
    let (answer, pieces) = generate(&handle, &prompt, greedy(6));
    assert!(answer.text.contains("北京"), "{answer:?}");
    assert!(pieces.iter().all(|p| !p.contains('\u{FFFD}')), "{pieces:?}");
    assert_eq!(pieces.concat(), answer.text);
}

#[test]
fn a_follow_up_turn_prefills_only_the_new_tokens() {
    let _serial = serial();
    let handle = handle();
    handle.reset().unwrap();
    let mut messages = user("Name one primary color. One word.");
    let first_prompt = handle.render(&messages, None).unwrap();
    let (first, _) = generate(&handle, &first_prompt, greedy(6));
    assert_eq!(first.stats.reused_tokens, 0);
    let cached = handle.cached_tokens().unwrap();
    let first_ids = handle.tokenizer().encode(&first_prompt).unwrap();
    assert_eq!(cached.len(), first_ids.len() + first.tokens.len() - 1);

    messages.push(json!({"role": "assistant", "content": first.text}));
    messages.push(json!({"role": "user", "content": "Another one?"}));
    let second_prompt = handle.render(&messages, None).unwrap();
    let second_ids = handle.tokenizer().encode(&second_prompt).unwrap();
    let shared = cached.iter().zip(&second_ids).take_while(|(a, b)| a == b).count();
    let (second, _) = generate(&handle, &second_prompt, greedy(6));
    assert_eq!(second.stats.reused_tokens, shared);
    // The whole first turn, its answer included, came from the cache.
    assert_eq!(shared, cached.len(), "cache {cached:?}\nprompt {second_ids:?}");
    assert_eq!(second.stats.prompt_tokens - second.stats.reused_tokens, second_ids.len() - cached.len());

    // Reusing the cache answers as a fresh prefill does.
    handle.reset().unwrap();
    let (fresh, _) = generate(&handle, &second_prompt, greedy(6));
    assert_eq!(fresh.stats.reused_tokens, 0);
    assert_eq!(fresh.tokens, second.tokens);
}

#[test]
fn cancel_stops_within_one_token() {
    let _serial = serial();
    let handle = handle();
    let prompt = handle.render(&user("Count from 1 to 50, separated by spaces."), None).unwrap();
    let cancel = AtomicBool::new(false);
    let mut pieces = 0;
    let mut at_cancel = 0;
    let done = handle
        .generate(
            &prompt,
            greedy(64),
            &mut |_| {
                pieces += 1;
                if pieces == 3 {
                    cancel.store(true, Ordering::Relaxed);
                    at_cancel = pieces;
                }
            },
            &cancel,
        )
        .unwrap();
    assert_eq!(done.stop, StopKind::Cancelled);
    // Each piece here is one token: at most the token in flight follows the cancel.
    assert!(done.tokens.len() <= at_cancel + 1, "{} tokens after cancel at {at_cancel}", done.tokens.len());
}

#[test]
fn a_prompt_over_max_input_tokens_is_refused() {
    let _serial = serial();
    let handle = handle();
    let prompt = handle.render(&user(&"很长的问题 ".repeat(40)), None).unwrap();
    let tokens = handle.token_count(&prompt).unwrap();
    let never = AtomicBool::new(false);
    let err = handle
        .generate(&prompt, GenParams { max_input_tokens: 64, ..greedy(4) }, &mut |_| {}, &never)
        .unwrap_err();
    assert!(matches!(err, BrainError::PromptTooLong { tokens: t, max: 64 } if t == tokens), "{err}");
    assert_eq!(err.to_string(), format!("prompt has {tokens} tokens, over max_input_tokens 64"));
}

/// The logits of candle-transformers' `quantized_qwen2` and of one of ours on a real prompt.
fn logits_against_candle_transformers(ours: impl FnOnce(&gguf_file::Content, &mut File, &[u32]) -> Tensor) -> (Vec<f32>, Vec<f32>) {
    let _serial = serial();
    let path = model_path();
    let prompt: Vec<u32> = {
        let handle = handle();
        let text = handle.render(&user("Write a haiku about Rust."), None).unwrap();
        handle.tokenizer().encode(&text).unwrap()
    };
    let mut file = File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let mine = ours(&content, &mut file, &prompt);
    let mut file = File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let mut reference =
        candle_transformers::models::quantized_qwen2::ModelWeights::from_gguf(content, &mut file, &Device::Cpu).unwrap();
    let input = Tensor::new(prompt.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap();
    let theirs = reference.forward(&input, 0).unwrap().flatten_all().unwrap();
    (mine.to_vec1().unwrap(), theirs.to_vec1().unwrap())
}

fn argmax(v: &[f32]) -> usize {
    v.iter().enumerate().fold((0, f32::MIN), |m, (i, &x)| if x > m.1 { (i, x) } else { m }).0
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max)
}

#[test]
fn our_forward_matches_candles_quantized_qwen2_on_the_real_weights() {
    // Same kernels as candle-transformers, so nearly the same bits.
    let (a, b) = logits_against_candle_transformers(|content, file, prompt| {
        Qwen2::from_gguf(content, file, &Device::Cpu).unwrap().forward(prompt).unwrap()
    });
    assert_eq!(argmax(&a), argmax(&b));
    let diff = max_diff(&a, &b);
    assert!(diff < 1e-2, "logits differ by {diff}");
}

#[test]
fn our_cpu_forward_matches_candles_quantized_qwen2_on_the_real_weights() {
    // Other kernels and another float order: over the whole vocabulary candle's own pass
    // moves by up to ~0.35 between a batched and a token-by-token run of one prompt
    // (tests/output_equality.rs), so that is the scale of agreement to expect; a wrong
    // product or position is off by whole units.
    let (a, b) = logits_against_candle_transformers(|content, file, prompt| {
        let config = Qwen2Config::from_gguf(content).unwrap();
        CpuQwen2::from_gguf(content, file, config, 2).unwrap().forward(prompt).unwrap()
    });
    assert_eq!(argmax(&a), argmax(&b));
    let diff = max_diff(&a, &b);
    assert!(diff < 0.5, "logits differ by {diff}");
}
