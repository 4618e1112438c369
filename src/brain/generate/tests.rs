//! The decoder loop on a tiny random Qwen2 GGUF: prefix reuse, stops, cancel, masks,
//! seeded sampling, streaming. The real-model checks are in `tests/brain_model.rs`.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::brain::model::load_model;
use crate::brain::progress::LoadStage;
use crate::brain::model::testing::write_tiny_qwen2_gguf;

fn tiny() -> (tempfile::TempDir, ModelHandle) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let loaded = load_model(&path, None, "q8_0", &Device::Cpu).unwrap();
    (dir, ModelHandle::from_loaded(loaded).unwrap())
}

fn params(max_new_tokens: usize) -> GenParams {
    GenParams { max_new_tokens, max_input_tokens: 200, ..GenParams::default() }
}

/// Allows a fixed set of tokens, records commits, finishes after `finish_after` tokens.
struct Only {
    allowed: Vec<u32>,
    committed: Arc<Mutex<Vec<u32>>>,
    finish_after: usize,
}

impl TokenConstraint for Only {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        Some(self.allowed.clone())
    }
    fn commit(&mut self, token: u32) -> Result<(), String> {
        if !self.allowed.contains(&token) {
            return Err(format!("{token} was not allowed"));
        }
        self.committed.lock().unwrap().push(token);
        Ok(())
    }
    fn is_finished(&self) -> bool {
        self.committed.lock().unwrap().len() >= self.finish_after
    }
}

/// Byte tokens only (never a stop token), never finished.
fn bytes_only() -> Option<Box<dyn TokenConstraint + Send>> {
    Some(Box::new(Only { allowed: (0..256).collect(), committed: Arc::default(), finish_after: usize::MAX }))
}

fn run(handle: &ModelHandle, prompt: &str, params: GenParams) -> (Generation, Vec<String>) {
    let mut pieces = Vec::new();
    let never = AtomicBool::new(false);
    let generation = handle.generate(prompt, params, &mut |p| {
        if let Stream::Text(text) = p {
            pieces.push(text.to_string())
        }
    }, &never).unwrap();
    (generation, pieces)
}

#[test]
fn greedy_is_deterministic_and_streams_the_whole_text() {
    let (_dir, handle) = tiny();
    let prompt = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n";
    let (first, pieces) = run(&handle, prompt, GenParams { constraint: bytes_only(), ..params(8) });
    handle.reset().unwrap();
    let (second, _) = run(&handle, prompt, GenParams { constraint: bytes_only(), ..params(8) });
    assert_eq!(first.tokens, second.tokens);
    assert_eq!(first.text, second.text);
    assert_eq!(first.stop, StopKind::MaxTokens);
    assert_eq!(first.tokens.len(), 8);
    assert_eq!(pieces.concat(), first.text);
    assert_eq!(first.stats.prompt_tokens, handle.token_count(prompt).unwrap());
    assert_eq!(first.stats.generated_tokens, 8);
    assert!(first.stats.prefill_tok_s > 0.0 && first.stats.decode_tok_s > 0.0, "{:?}", first.stats);
}

#[test]
fn a_prompt_that_extends_the_last_one_prefills_only_the_new_tokens() {
    let (_dir, handle) = tiny();
    let first_prompt = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n";
    let (first, _) = run(&handle, first_prompt, GenParams { constraint: bytes_only(), ..params(4) });
    let prompt_ids = handle.tokenizer().encode(first_prompt).unwrap();
    // The cache holds the prompt and every generated token but the last (never run).
    let mut expected_cache = prompt_ids.clone();
    expected_cache.extend(&first.tokens[..3]);
    assert_eq!(handle.cached_tokens().unwrap(), expected_cache);

    let second_prompt = format!("{first_prompt}{}<|im_end|>\n<|im_start|>user\nmore<|im_end|>\n", first.text);
    let second_ids = handle.tokenizer().encode(&second_prompt).unwrap();
    let shared = expected_cache.iter().zip(&second_ids).take_while(|(a, b)| a == b).count();
    assert!(shared >= prompt_ids.len(), "the second prompt starts with the first");
    let (second, _) = run(&handle, &second_prompt, GenParams { constraint: bytes_only(), ..params(2) });
    assert_eq!(second.stats.reused_tokens, shared);
    assert_eq!(second.stats.prompt_tokens, second_ids.len());

    // Reuse gives what a fresh prefill gives.
    handle.reset().unwrap();
    let (fresh, _) = run(&handle, &second_prompt, GenParams { constraint: bytes_only(), ..params(2) });
    assert_eq!(fresh.stats.reused_tokens, 0);
    assert_eq!(fresh.tokens, second.tokens);

    // The same prompt again reuses all but its last token.
    let (again, _) = run(&handle, &second_prompt, GenParams { constraint: bytes_only(), ..params(1) });
    assert_eq!(again.stats.reused_tokens, second_ids.len() - 1);
}

#[test]
fn too_long_prompts_are_refused() {
    let (_dir, handle) = tiny();
    let never = AtomicBool::new(false);
    let prompt = "x ".repeat(50);
    let n = handle.token_count(&prompt).unwrap();
    let err = handle
        .generate(&prompt, GenParams { max_input_tokens: 10, ..params(1) }, &mut |_| {}, &never)
        .unwrap_err();
    assert!(matches!(err, BrainError::PromptTooLong { tokens, max: 10 } if tokens == n), "{err}");
    let huge = "a ".repeat(300);
    let err = handle
        .generate(&huge, GenParams { max_input_tokens: 10_000, ..params(1) }, &mut |_| {}, &never)
        .unwrap_err();
    assert!(matches!(err, BrainError::PromptTooLong { max: 255, .. }), "{err}");
}

#[test]
fn cancel_stops_within_one_token() {
    let (_dir, handle) = tiny();
    let cancel = AtomicBool::new(true);
    let done = handle.generate("hello", params(5), &mut |_| {}, &cancel).unwrap();
    assert_eq!((done.stop, done.tokens.len()), (StopKind::Cancelled, 0));

    let cancel = AtomicBool::new(false);
    let mut seen = 0;
    let done = handle
        .generate(
            "hello",
            GenParams { constraint: bytes_only(), ..params(50) },
            &mut |piece| {
                if let Stream::Text(_) = piece {
                    seen += 1;
                    cancel.store(true, Ordering::Relaxed);
                }
            },
            &cancel,
        )
        .unwrap();
    assert_eq!(done.stop, StopKind::Cancelled);
    assert!(done.tokens.len() < 50, "stopped early: {}", done.tokens.len());
    // The cache holds exactly what ran: the prompt and the generated tokens fed back
    // (all of them, or all but the last when the stop came before its forward).
    let cached = handle.cached_tokens().unwrap();
    let prompt_ids = handle.tokenizer().encode("hello").unwrap();
    let (head, fed) = cached.split_at(prompt_ids.len());
    assert_eq!(head, prompt_ids.as_slice());
    assert!(done.tokens.starts_with(fed) && fed.len() + 1 >= done.tokens.len(), "{fed:?} vs {:?}", done.tokens);
    assert!(seen >= 1);
}

#[test]
fn the_constraint_masks_every_token_and_can_end_generation() {
    let (_dir, handle) = tiny();
    let h = handle.tokenizer().token_id("h").unwrap();
    let e = handle.tokenizer().token_id("e").unwrap();
    let committed = Arc::new(Mutex::new(Vec::new()));
    let constraint = Only { allowed: vec![h, e], committed: committed.clone(), finish_after: 3 };
    let (done, _) = run(&handle, "hello", GenParams { constraint: Some(Box::new(constraint)), ..params(10) });
    assert_eq!(done.stop, StopKind::Constraint);
    assert_eq!(done.tokens.len(), 3);
    assert!(done.tokens.iter().all(|t| *t == h || *t == e), "{:?}", done.tokens);
    assert_eq!(*committed.lock().unwrap(), done.tokens);
    assert!(done.text.chars().all(|c| c == 'h' || c == 'e'), "{}", done.text);

    // Only the stop token allowed: generation ends at once with no text.
    let im_end = handle.tokenizer().token_id("<|im_end|>").unwrap();
    let only_end = Only { allowed: vec![im_end], committed: Arc::default(), finish_after: usize::MAX };
    let (done, pieces) = run(&handle, "hello", GenParams { constraint: Some(Box::new(only_end)), ..params(10) });
    assert_eq!((done.stop, done.tokens.clone(), done.text.as_str()), (StopKind::Eos, vec![im_end], ""));
    assert!(pieces.is_empty());
}

fn run_making(handle: &ModelHandle, prompt: &str, params: GenParams, make: impl FnOnce() -> Option<Box<dyn TokenConstraint + Send>>) -> (Result<Generation, BrainError>, Vec<(usize, usize)>) {
    let mut progress = Vec::new();
    let never = AtomicBool::new(false);
    let generation = handle.generate_making(prompt, params, Some(make), &mut |p| {
        if let Stream::Prefill { done, total, .. } = p {
            progress.push((done, total));
        }
    }, &never);
    (generation, progress)
}

#[test]
fn a_constraint_made_while_the_prompt_is_read_holds_from_the_first_token() {
    let (_dir, handle) = tiny();
    let h = handle.tokenizer().token_id("h").unwrap();
    let e = handle.tokenizer().token_id("e").unwrap();
    let only = |committed: &Arc<Mutex<Vec<u32>>>| Only { allowed: vec![h, e], committed: committed.clone(), finish_after: 3 };
    let given = Arc::new(Mutex::new(Vec::new()));
    let (up_front, _) = run(&handle, "hello there", GenParams { constraint: Some(Box::new(only(&given))), ..params(10) });
    handle.reset().unwrap();

    let made = Arc::new(Mutex::new(Vec::new()));
    let (later, progress) = run_making(&handle, "hello there", params(10), || Some(Box::new(only(&made))));
    let later = later.unwrap();
    assert_eq!((later.stop, &later.tokens, &later.text), (StopKind::Constraint, &up_front.tokens, &up_front.text));
    assert_eq!(*made.lock().unwrap(), later.tokens);
    // The prompt's progress still comes, in order, to the end.
    assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0), "{progress:?}");
    assert_eq!(progress.last().map(|&(done, total)| done == total), Some(true), "{progress:?}");

    // No constraint made: the tokens of a free decoding.
    handle.reset().unwrap();
    let (free, _) = run(&handle, "hello there", params(4));
    handle.reset().unwrap();
    let (none_made, _) = run_making(&handle, "hello there", params(4), || None);
    assert_eq!(none_made.unwrap().tokens, free.tokens);
}

#[test]
fn a_generation_refused_before_its_first_token_does_not_wait_for_the_constraint() {
    let (_dir, handle) = tiny();
    let long = "hello ".repeat(300);
    let (refused, _) = run_making(&handle, &long, params(4), bytes_only);
    assert!(matches!(refused, Err(BrainError::PromptTooLong { .. })), "{refused:?}");
    // The decoder serves the next request as usual.
    let (next, _) = run_making(&handle, "hello", params(2), bytes_only);
    assert_eq!(next.unwrap().tokens.len(), 2);
}

/// Records the budget it is told before each token.
struct Budgets(Arc<Mutex<Vec<usize>>>);

impl TokenConstraint for Budgets {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        Some((0..256).collect())
    }
    fn commit(&mut self, _token: u32) -> Result<(), String> {
        Ok(())
    }
    fn is_finished(&self) -> bool {
        false
    }
    fn budget(&mut self, remaining: usize) {
        self.0.lock().unwrap().push(remaining);
    }
}

#[test]
fn the_constraint_is_told_the_tokens_left_before_each_token() {
    let (_dir, handle) = tiny();
    let told = Arc::new(Mutex::new(Vec::new()));
    let (done, _) = run(&handle, "hello", GenParams { constraint: Some(Box::new(Budgets(told.clone()))), ..params(5) });
    assert_eq!(done.tokens.len(), 5);
    assert_eq!(*told.lock().unwrap(), vec![5, 4, 3, 2, 1]);
}

#[test]
fn seeded_sampling_repeats() {
    let (_dir, handle) = tiny();
    let sampled = |seed| GenParams { do_sample: true, temperature: 1.5, top_p: 0.95, seed, constraint: bytes_only(), ..params(12) };
    let (a, _) = run(&handle, "hello", sampled(7));
    let (b, _) = run(&handle, "hello", sampled(7));
    assert_eq!(a.tokens, b.tokens);
    let (greedy, _) = run(&handle, "hello", GenParams { constraint: bytes_only(), ..params(12) });
    let others: Vec<Vec<u32>> = (1..6).map(|seed| run(&handle, "hello", sampled(seed)).0.tokens).collect();
    assert!(others.iter().any(|t| *t != greedy.tokens), "sampling differs from greedy for some seed");
}

#[test]
fn handles_are_cheap_clones_of_one_decoder() {
    fn shareable<T: Send + Sync + Clone>() {}
    shareable::<ModelHandle>();
    let (_dir, handle) = tiny();
    let other = handle.clone();
    run(&handle, "hello", GenParams { constraint: bytes_only(), ..params(2) });
    assert_eq!(other.cached_tokens().unwrap(), handle.cached_tokens().unwrap());
    assert!(!other.cached_tokens().unwrap().is_empty());
    let rendered = other.render(&[serde_json::json!({"role": "user", "content": "hi"})], None).unwrap();
    assert_eq!(rendered, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
}

#[test]
fn a_missing_model_names_the_fetch_command() {
    let profile = Profile {
        name: "qwen-0.5b".into(),
        model_name_or_path: "/nonexistent/dir/model.gguf".into(),
        fetch: Some("qwen2.5-coder-0.5b".into()),
        ..Profile::default()
    };
    let err = ModelHandle::load(&profile).unwrap_err().to_string();
    assert_eq!(err, "model file not found: /nonexistent/dir/model.gguf (run `b4 models fetch qwen2.5-coder-0.5b`)");
}

#[test]
fn a_missing_model_with_no_download_says_where_to_put_one() {
    let profile = Profile { name: "qwen3.5-0.8b".into(), model_name_or_path: "/nonexistent/dir/Qwen3.5-0.8B-Q4_K_M.gguf".into(), ..Profile::default() };
    let err = ModelHandle::load(&profile).unwrap_err().to_string();
    assert_eq!(
        err,
        "model not found: /nonexistent/dir/Qwen3.5-0.8B-Q4_K_M.gguf (profile qwen3.5-0.8b has no download: put a GGUF file there, \
         or a Hugging Face folder with config.json, tokenizer.json and *.safetensors, or point its model_name_or_path at yours)"
    );
}

#[test]
fn loading_the_same_profile_twice_returns_the_running_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let profile = Profile { name: "tiny".into(), model_name_or_path: path.display().to_string(), ..Profile::default() };
    let first = ModelHandle::load(&profile).unwrap();
    run(&first, "hello", GenParams { constraint: bytes_only(), ..params(2) });
    let started = Instant::now();
    let second = ModelHandle::load(&profile).unwrap();
    assert!(started.elapsed() < Duration::from_millis(50));
    // Same decoder thread: it already holds the first call's tokens.
    assert_eq!(second.cached_tokens().unwrap(), first.cached_tokens().unwrap());
    assert!(second.load_ms() > 0.0);
}

#[test]
fn load_progress_comes_on_the_callers_thread_and_a_running_model_reports_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let profile = Profile { name: "tiny-progress".into(), model_name_or_path: path.display().to_string(), ..Profile::default() };
    let reports = Mutex::new(Vec::new());
    let sink = |p: LoadProgress| reports.lock().unwrap().push((p.stage, thread::current().id()));
    ModelHandle::load_reporting(&profile, &sink).unwrap();
    let first = std::mem::take(&mut *reports.lock().unwrap());
    let stages: Vec<LoadStage> = first.iter().map(|(stage, _)| *stage).collect();
    assert_eq!(stages.first(), Some(&LoadStage::Tokenizer), "{stages:?}");
    assert_eq!(stages.last(), Some(&LoadStage::Weights), "{stages:?}");
    assert!(first.iter().all(|(_, id)| *id == thread::current().id()), "reports from another thread");
    // Loaded already: the running model comes back at once, with nothing to report.
    ModelHandle::load_reporting(&profile, &sink).unwrap();
    assert_eq!(*reports.lock().unwrap(), vec![]);
}

#[test]
fn prefill_progress_is_streamed_chunk_by_chunk_and_counts_reused_tokens() {
    let (_dir, handle) = tiny();
    let never = AtomicBool::new(false);
    let prefill = |prompt: &str| {
        let mut seen = Vec::new();
        let params = GenParams { max_input_tokens: 5_000, ..params(1) };
        handle
            .generate(
                prompt,
                params,
                &mut |piece| {
                    if let Stream::Prefill { done, total, reused } = piece {
                        seen.push((done, total, reused));
                    }
                },
                &never,
            )
            .unwrap();
        seen
    };
    // The tiny model's context (256) holds one 256-token chunk: a report before it and one
    // after it (longer prompts report after each chunk).
    let prompt = "<|im_start|>user\n".to_string() + &"read the prompt ".repeat(10);
    let total = handle.token_count(&prompt).unwrap();
    assert!(total > 50 && total < 200, "{total}");
    assert_eq!(prefill(&prompt), [(0, total, 0), (total, total, 0)]);
    // The next prompt shares that prefix: only the new tokens are read.
    let longer = prompt.clone() + "and a little more";
    let longer_total = handle.token_count(&longer).unwrap();
    let seen = prefill(&longer);
    let reused = seen.first().map(|s| s.2).unwrap_or_default();
    assert!(reused > total / 2, "{seen:?}");
    assert_eq!(seen.last(), Some(&(longer_total, longer_total, reused)));
}

/// A prompt of about 100 tokens on the tiny model's byte vocabulary, its system text `system`.
fn long_prompt(system: &str, question: &str) -> String {
    format!("<|im_start|>system\n{}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n", system.repeat(6))
}

#[test]
fn switching_between_two_prompts_prefills_each_once_and_answers_as_a_fresh_prefill() {
    let (_dir, handle) = tiny();
    let gen = |prompt: &str| run(&handle, prompt, GenParams { constraint: bytes_only(), ..params(3) }).0;
    let json_way = long_prompt("answer in json ", "hello");
    let builtin_way = long_prompt("tools in the template ", "hello");
    let (json_len, builtin_len) = (handle.token_count(&json_way).unwrap(), handle.token_count(&builtin_way).unwrap());
    assert!(json_len > 80 && builtin_len > 80, "{json_len} {builtin_len}");

    assert_eq!(gen(&json_way).stats.reused_tokens, 0);
    let other = gen(&builtin_way);
    assert!(other.stats.reused_tokens < 10, "only the system header is shared: {:?}", other.stats);
    // Back to the first way, one turn further: its whole first prompt comes from the cache
    // set aside, and the answer is the one a fresh prefill gives.
    let json_next = format!("{json_way}ok<|im_end|>\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n");
    let back = gen(&json_next);
    assert!(back.stats.reused_tokens >= json_len, "reused {} of {json_len}", back.stats.reused_tokens);
    // And the second way's cache was set aside in its turn.
    let again = gen(&builtin_way);
    assert_eq!(again.stats.reused_tokens, builtin_len - 1);

    handle.reset().unwrap();
    let fresh = gen(&json_next);
    assert_eq!(fresh.stats.reused_tokens, 0, "reset drops the caches set aside");
    assert_eq!(fresh.tokens, back.tokens);
}

#[test]
fn at_most_two_caches_are_kept_aside_and_the_oldest_goes_first() {
    let (_dir, handle) = tiny();
    let gen = |prompt: &str| run(&handle, prompt, GenParams { constraint: bytes_only(), ..params(2) }).0;
    let prompts: Vec<String> = ["alpha beta ", "gamma delta ", "epsilon zeta ", "eta theta "].iter().map(|s| long_prompt(s, "hello")).collect();
    for prompt in &prompts {
        assert!(gen(prompt).stats.reused_tokens < 10);
    }
    // Current: the fourth; aside: the second and third; the first was dropped.
    assert!(gen(&prompts[0]).stats.reused_tokens < 10, "the oldest cache was dropped");
    // Now aside: the third and fourth.
    let fourth = handle.token_count(&prompts[3]).unwrap();
    assert_eq!(gen(&prompts[3]).stats.reused_tokens, fourth - 1);
}

/// Allows one sequence of tokens and drafts the rest of it, or (`wrong`) drafts tokens it
/// never allows.
struct Script {
    script: Vec<u32>,
    at: usize,
    wrong: bool,
}

impl TokenConstraint for Script {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        Some(self.script.get(self.at).copied().into_iter().collect())
    }
    fn commit(&mut self, token: u32) -> Result<(), String> {
        if self.script.get(self.at) != Some(&token) {
            return Err(format!("{token} was not allowed"));
        }
        self.at += 1;
        Ok(())
    }
    fn is_finished(&self) -> bool {
        self.at >= self.script.len()
    }
    fn draft(&mut self) -> Vec<u32> {
        let rest = self.script.get(self.at..).unwrap_or_default();
        if self.wrong {
            rest.iter().map(|t| t + 1).collect()
        } else {
            rest.to_vec()
        }
    }
}

fn scripted(script: &[u32], wrong: bool, draft_tokens: usize) -> GenParams {
    let constraint = Script { script: script.to_vec(), at: 0, wrong };
    GenParams { draft_tokens, constraint: Some(Box::new(constraint)), ..params(20) }
}

#[test]
fn forced_tokens_run_in_one_batch_and_the_output_is_what_single_steps_give() {
    let (_dir, handle) = tiny();
    let prompt = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n";
    let prompt_ids = handle.tokenizer().encode(prompt).unwrap();
    let script: Vec<u32> = b"helloworldabc".iter().map(|&b| handle.tokenizer().token_id(&(b as char).to_string()).unwrap()).collect();
    assert_eq!(script.len(), 13);

    let (stepped, _) = run(&handle, prompt, scripted(&script, false, 0));
    assert_eq!(stepped.tokens, script);
    assert_eq!(stepped.stats.fast_forwarded, 0);
    // The last token is never run.
    assert_eq!(handle.cached_tokens().unwrap(), [&prompt_ids[..], &script[..12]].concat());

    // The first token comes from the prompt's logits, the next 7 in one batch with it,
    // then the last 4 in another: 11 fast-forwarded, the last token run in the batch.
    handle.reset().unwrap();
    let (batched, pieces) = run(&handle, prompt, scripted(&script, false, 7));
    assert_eq!(batched.tokens, script);
    assert_eq!(batched.text, "helloworldabc");
    assert_eq!(pieces.concat(), batched.text);
    assert_eq!(batched.stop, StopKind::Constraint);
    assert_eq!(batched.stats.fast_forwarded, 7 + 4);
    assert_eq!(handle.cached_tokens().unwrap(), [&prompt_ids[..], &script[..]].concat());

    // A draft the model does not pick leaves the cache again: same output, nothing gained.
    handle.reset().unwrap();
    let (misled, _) = run(&handle, prompt, scripted(&script, true, 7));
    assert_eq!(misled.tokens, script);
    assert_eq!(misled.stats.fast_forwarded, 0);
    assert_eq!(handle.cached_tokens().unwrap(), [&prompt_ids[..], &script[..12]].concat());
}

#[test]
fn drafts_from_the_context_give_the_tokens_of_one_token_steps() {
    let (_dir, handle) = tiny();
    // A repetitive prompt, so that the lookup finds earlier occurrences to draft from.
    let prompt = format!("<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n", "ab cd ef ".repeat(6));
    for (name, make) in [
        ("greedy", &(|d| GenParams { draft_tokens: d, ..params(40) }) as &dyn Fn(usize) -> GenParams),
        ("sampled", &|d| GenParams { draft_tokens: d, do_sample: true, temperature: 0.8, seed: 3, ..params(40) }),
        ("bytes only", &|d| GenParams { draft_tokens: d, constraint: bytes_only(), ..params(40) }),
    ] {
        handle.reset().unwrap();
        let (stepped, _) = run(&handle, &prompt, make(0));
        handle.reset().unwrap();
        let (batched, _) = run(&handle, &prompt, make(7));
        assert_eq!(batched.tokens, stepped.tokens, "{name}");
        assert_eq!(batched.text, stepped.text, "{name}");
        assert_eq!(batched.stop, stepped.stop, "{name}");
        let cached = handle.cached_tokens().unwrap();
        let prompt_ids = handle.tokenizer().encode(&prompt).unwrap();
        assert_eq!(&cached[..prompt_ids.len()], &prompt_ids[..], "{name}");
        assert_eq!(&cached[prompt_ids.len()..], &batched.tokens[..cached.len() - prompt_ids.len()], "{name}");
    }
}

/// Masks to `Only`'s tokens without saying which they are ahead (`allowed` is `None`), so
/// the decoder projects every token and the mask does the rest.
struct MaskOnly(Only);

impl TokenConstraint for MaskOnly {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        None
    }
    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let allowed = self.0.allowed().unwrap_or_default();
        for (id, value) in logits.iter_mut().enumerate() {
            if !allowed.contains(&(id as u32)) {
                *value = f32::NEG_INFINITY;
            }
        }
        Ok(!allowed.is_empty())
    }
    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.0.commit(token)
    }
    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

/// Where the constraint names the few tokens it allows, only their logits are computed:
/// greedy and sampled generations, with and without drafts, pick what they pick with every
/// token's logits computed and masked (sampling reads every allowed logit's value).
#[test]
fn projecting_only_the_allowed_tokens_picks_what_the_whole_vocabulary_picks() {
    let (_dir, handle) = tiny();
    let vocab = handle.tokenizer().vocab_size();
    let allowed: Vec<u32> = "helowrd abc".chars().map(|c| handle.tokenizer().token_id(&c.to_string().replace(' ', "Ġ")).unwrap()).collect();
    assert!(allowed.len() * SPARSE_SHARE <= vocab, "{} of {vocab} tokens: the projection would not be sparse", allowed.len());
    let prompt = format!("<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n", "hello world ".repeat(4));
    let only = |mask_only: bool| -> Box<dyn TokenConstraint + Send> {
        let only = Only { allowed: allowed.clone(), committed: Arc::default(), finish_after: 30 };
        if mask_only { Box::new(MaskOnly(only)) } else { Box::new(only) }
    };
    for (name, make) in [
        ("greedy", &(|c, d| GenParams { draft_tokens: d, constraint: Some(c), ..params(40) }) as &dyn Fn(Box<dyn TokenConstraint + Send>, usize) -> GenParams),
        ("sampled", &|c, d| GenParams { draft_tokens: d, constraint: Some(c), do_sample: true, temperature: 1.5, seed: 5, ..params(40) }),
    ] {
        for drafts in [0, 7] {
            handle.reset().unwrap();
            let (whole, _) = run(&handle, &prompt, make(only(true), drafts));
            handle.reset().unwrap();
            let (sparse, _) = run(&handle, &prompt, make(only(false), drafts));
            assert_eq!(whole.tokens.len(), 30, "{name}");
            assert_eq!(sparse.tokens, whole.tokens, "{name}, drafts {drafts}");
        }
    }
}
