//! Tiny random models written to temp files: our Qwen2 forward against candle's
//! `quantized_qwen2`, cache truncation against a fresh prefill, and the GGUF / Hugging Face
//! loaders end to end.

use std::collections::HashMap;

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_qwen2;

use super::*;

const HIDDEN: usize = 64;
const HEADS: usize = 4;
const KV_HEADS: usize = 2;
const FFN: usize = 128;
const LAYERS: usize = 2;
const CONTEXT: usize = 256;
const TEMPLATE: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// 256 byte tokens, a few merges, `<|im_start|>`, `<|im_end|>` and `<|endoftext|>`.
fn toy_vocab() -> (Vec<String>, Vec<String>, Vec<i32>) {
    let mut tokens: Vec<String> = ByteLevelChars::all();
    let merged = ["he", "ll", "hell", "hello", "Ġw"];
    tokens.extend(merged.iter().map(|s| s.to_string()));
    tokens.extend(["<|im_start|>", "<|im_end|>", "<|endoftext|>"].iter().map(|s| s.to_string()));
    let merges = ["h e", "l l", "he ll", "hell o", "Ġ w"].iter().map(|s| s.to_string()).collect();
    let mut types = vec![1; 256 + merged.len()];
    types.extend([3, 3, 3]);
    (tokens, merges, types)
}

/// GPT-2's printable spelling of the 256 bytes.
struct ByteLevelChars;

impl ByteLevelChars {
    fn all() -> Vec<String> {
        let printable = |b: u32| (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
        let mut next = 256u32;
        (0u32..256)
            .map(|b| {
                let code = if printable(b) {
                    b
                } else {
                    next += 1;
                    next - 1
                };
                char::from_u32(code).unwrap().to_string()
            })
            .collect()
    }
}

fn randn(shape: &[usize]) -> Tensor {
    Tensor::randn(0f32, 0.3, shape, &Device::Cpu).unwrap()
}

fn near_one(n: usize) -> Tensor {
    (Tensor::ones(n, candle_core::DType::F32, &Device::Cpu).unwrap() + randn(&[n])).unwrap()
}

/// Writes a random Qwen2 GGUF with the toy vocabulary; returns its path.
fn write_tiny_qwen2_gguf(dir: &Path, architecture: &str) -> PathBuf {
    let (tokens, merges, types) = toy_vocab();
    let vocab = tokens.len();
    let q = |t: Tensor| QTensor::quantize(&t, GgmlDType::Q8_0).unwrap();
    let f = |t: Tensor| QTensor::quantize(&t, GgmlDType::F32).unwrap();
    let head_dim = HIDDEN / HEADS;
    let mut tensors: Vec<(String, QTensor)> = vec![
        ("token_embd.weight".into(), q(randn(&[vocab, HIDDEN]))),
        ("output.weight".into(), q(randn(&[vocab, HIDDEN]))),
        ("output_norm.weight".into(), f(near_one(HIDDEN))),
    ];
    for i in 0..LAYERS {
        let p = |s: &str| format!("blk.{i}.{s}");
        tensors.extend([
            (p("attn_q.weight"), q(randn(&[HIDDEN, HIDDEN]))),
            (p("attn_k.weight"), q(randn(&[KV_HEADS * head_dim, HIDDEN]))),
            (p("attn_v.weight"), q(randn(&[KV_HEADS * head_dim, HIDDEN]))),
            (p("attn_q.bias"), f(randn(&[HIDDEN]))),
            (p("attn_k.bias"), f(randn(&[KV_HEADS * head_dim]))),
            (p("attn_v.bias"), f(randn(&[KV_HEADS * head_dim]))),
            (p("attn_output.weight"), q(randn(&[HIDDEN, HIDDEN]))),
            (p("attn_norm.weight"), f(near_one(HIDDEN))),
            (p("ffn_norm.weight"), f(near_one(HIDDEN))),
            (p("ffn_gate.weight"), q(randn(&[FFN, HIDDEN]))),
            (p("ffn_up.weight"), q(randn(&[FFN, HIDDEN]))),
            (p("ffn_down.weight"), q(randn(&[HIDDEN, FFN]))),
        ]);
    }
    use gguf_file::Value as V;
    let a = |k: &str| format!("{architecture}.{k}");
    let metadata: Vec<(String, V)> = vec![
        ("general.architecture".into(), V::String(architecture.into())),
        (a("block_count"), V::U32(LAYERS as u32)),
        (a("context_length"), V::U32(CONTEXT as u32)),
        (a("embedding_length"), V::U32(HIDDEN as u32)),
        (a("feed_forward_length"), V::U32(FFN as u32)),
        (a("attention.head_count"), V::U32(HEADS as u32)),
        (a("attention.head_count_kv"), V::U32(KV_HEADS as u32)),
        (a("rope.freq_base"), V::F32(1_000_000.0)),
        (a("attention.layer_norm_rms_epsilon"), V::F32(1e-6)),
        ("tokenizer.ggml.model".into(), V::String("gpt2".into())),
        ("tokenizer.ggml.pre".into(), V::String("qwen2".into())),
        ("tokenizer.ggml.tokens".into(), V::Array(tokens.iter().cloned().map(V::String).collect())),
        ("tokenizer.ggml.merges".into(), V::Array(merges.iter().cloned().map(V::String).collect())),
        ("tokenizer.ggml.token_type".into(), V::Array(types.iter().copied().map(V::I32).collect())),
        ("tokenizer.ggml.eos_token_id".into(), V::U32((vocab - 2) as u32)),
        ("tokenizer.chat_template".into(), V::String(TEMPLATE.into())),
    ];
    let path = dir.join(format!("tiny-{architecture}.gguf"));
    let mut file = File::create(&path).unwrap();
    let md: Vec<(&str, &V)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let ts: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    gguf_file::write(&mut file, &md, &ts).unwrap();
    path
}

fn open_ours(path: &Path) -> Qwen2 {
    let mut file = File::open(path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    Qwen2::from_gguf(&content, &mut file, &Device::Cpu).unwrap()
}

fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    let a: Vec<f32> = a.flatten_all().unwrap().to_vec1().unwrap();
    let b: Vec<f32> = b.flatten_all().unwrap().to_vec1().unwrap();
    assert_eq!(a.len(), b.len());
    a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

const PROMPT: [u32; 13] = [104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 33, 10];

#[test]
fn our_qwen2_matches_candles_quantized_qwen2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let mut ours = open_ours(&path);
    let mut file = File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let mut reference = quantized_qwen2::ModelWeights::from_gguf(content, &mut file, &Device::Cpu).unwrap();

    let input = Tensor::new(&PROMPT[..], &Device::Cpu).unwrap().unsqueeze(0).unwrap();
    let theirs = reference.forward(&input, 0).unwrap();
    let mine = ours.forward(&PROMPT).unwrap();
    assert_eq!(mine.dims(), &[toy_vocab().0.len()]);
    assert!(max_diff(&mine, &theirs) < 1e-3, "prefill differs by {}", max_diff(&mine, &theirs));

    // Three decode steps, one token each.
    for (step, token) in [7u32, 42, 260].into_iter().enumerate() {
        let input = Tensor::new(&[token], &Device::Cpu).unwrap().unsqueeze(0).unwrap();
        let theirs = reference.forward(&input, PROMPT.len() + step).unwrap();
        let mine = ours.forward(&[token]).unwrap();
        assert!(max_diff(&mine, &theirs) < 1e-3, "step {step} differs by {}", max_diff(&mine, &theirs));
    }
    assert_eq!(ours.cached_len(), PROMPT.len() + 3);
}

#[test]
fn truncated_cache_gives_the_logits_of_a_fresh_prefill() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let mut reused = open_ours(&path);
    let mut fresh = open_ours(&path);

    // First turn: prompt + two generated tokens. Second turn diverges after 9 tokens.
    reused.forward(&PROMPT).unwrap();
    reused.forward(&[5]).unwrap();
    reused.forward(&[6]).unwrap();
    reused.truncate(9);
    assert_eq!(reused.cached_len(), 9);
    let second: Vec<u32> = PROMPT[..9].iter().copied().chain([200, 201, 202, 203]).collect();
    let via_reuse = reused.forward(&second[9..]).unwrap();
    let via_fresh = fresh.forward(&second).unwrap();
    assert!(max_diff(&via_reuse, &via_fresh) < 1e-3, "differs by {}", max_diff(&via_reuse, &via_fresh));

    // Prefill in chunks equals prefill in one go; growing past the first buffer is fine.
    let long: Vec<u32> = (0..300u32).map(|i| i % 256).collect();
    let mut chunked = open_ours(&path);
    chunked.forward(&long[..100]).unwrap();
    chunked.forward(&long[100..250]).unwrap();
    let a = chunked.forward(&long[250..]).unwrap_err();
    assert!(a.to_string().contains("exceed the context length 256"), "{a}");
    let b = chunked.forward(&long[250..256]).unwrap();
    let mut whole = open_ours(&path);
    let c = whole.forward(&long[..256]).unwrap();
    assert!(max_diff(&b, &c) < 1e-3, "chunked differs by {}", max_diff(&b, &c));
}

#[test]
fn gguf_loader_brings_tokenizer_template_and_stop_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let mut loaded = load_model(&path, None, "q8_0", &Device::Cpu).unwrap();
    assert_eq!(
        loaded.info,
        ModelInfo {
            path: path.clone(),
            format: ModelFormat::Gguf,
            architecture: "qwen2".into(),
            context_length: CONTEXT,
            device: "cpu".into(),
            prefix_reuse: true,
        }
    );
    let im_end = loaded.tokenizer.token_id("<|im_end|>").unwrap();
    let eot = loaded.tokenizer.token_id("<|endoftext|>").unwrap();
    assert_eq!(loaded.stop_tokens, vec![im_end, eot]);
    let messages = [serde_json::json!({"role": "user", "content": "hello"})];
    let prompt = loaded.template.as_ref().unwrap().render(&messages, None, true).unwrap();
    assert_eq!(prompt, "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n");
    let ids = loaded.tokenizer.encode(&prompt).unwrap();
    assert_eq!(ids.first(), loaded.tokenizer.token_id("<|im_start|>").as_ref());
    assert!(ids.contains(&loaded.tokenizer.token_id("hello").unwrap()));
    let logits = loaded.lm.forward(&ids).unwrap();
    assert_eq!(logits.dims(), &[loaded.tokenizer.vocab_size()]);
    assert!(loaded.lm.truncate(2));
    assert_eq!(loaded.lm.cached_len(), 2);
}

#[test]
fn unsupported_architectures_and_bad_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "mamba");
    let err = load_model(&path, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("GGUF architecture 'mamba' is not supported (qwen2, qwen3, llama)"), "{err}");
    let junk = dir.path().join("junk.gguf");
    std::fs::write(&junk, b"not a model").unwrap();
    let err = load_model(&junk, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("not a GGUF file"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let err = load_model(empty.path(), None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("config.json"), "{err}");
}

/// A random Hugging Face checkpoint folder of `model_type` with the toy tokenizer.
fn write_tiny_hf_dir(dir: &Path, model_type: &str) {
    let (tokens, merges, types) = toy_vocab();
    let token_refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let merge_refs: Vec<&str> = merges.iter().map(String::as_str).collect();
    let types: Vec<i64> = types.iter().map(|&t| i64::from(t)).collect();
    let tokenizer = ModelTokenizer::from_bpe_parts(&token_refs, &merge_refs, &types, r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+").unwrap();
    tokenizer.inner().save(dir.join("tokenizer.json"), false).unwrap();
    let vocab = tokens.len();
    let head_dim = HIDDEN / HEADS;
    let qwen3 = model_type == "qwen3";
    let config = serde_json::json!({
        "model_type": model_type, "vocab_size": vocab, "hidden_size": HIDDEN, "intermediate_size": FFN,
        "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
        "head_dim": head_dim, "attention_bias": false,
        "max_position_embeddings": CONTEXT, "sliding_window": CONTEXT, "max_window_layers": LAYERS,
        "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
        "use_sliding_window": false, "hidden_act": "silu", "eos_token_id": vocab - 2
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    std::fs::write(dir.join("tokenizer_config.json"), serde_json::json!({"chat_template": TEMPLATE}).to_string()).unwrap();
    let mut w: HashMap<String, Tensor> = HashMap::new();
    w.insert("model.embed_tokens.weight".into(), randn(&[vocab, HIDDEN]));
    w.insert("lm_head.weight".into(), randn(&[vocab, HIDDEN]));
    w.insert("model.norm.weight".into(), near_one(HIDDEN));
    for i in 0..LAYERS {
        let p = |s: &str| format!("model.layers.{i}.{s}");
        w.insert(p("self_attn.q_proj.weight"), randn(&[HIDDEN, HIDDEN]));
        w.insert(p("self_attn.k_proj.weight"), randn(&[KV_HEADS * head_dim, HIDDEN]));
        w.insert(p("self_attn.v_proj.weight"), randn(&[KV_HEADS * head_dim, HIDDEN]));
        w.insert(p("self_attn.o_proj.weight"), randn(&[HIDDEN, HIDDEN]));
        if qwen3 {
            w.insert(p("self_attn.q_norm.weight"), near_one(head_dim));
            w.insert(p("self_attn.k_norm.weight"), near_one(head_dim));
        } else {
            w.insert(p("self_attn.q_proj.bias"), randn(&[HIDDEN]));
            w.insert(p("self_attn.k_proj.bias"), randn(&[KV_HEADS * head_dim]));
            w.insert(p("self_attn.v_proj.bias"), randn(&[KV_HEADS * head_dim]));
        }
        w.insert(p("mlp.gate_proj.weight"), randn(&[FFN, HIDDEN]));
        w.insert(p("mlp.up_proj.weight"), randn(&[FFN, HIDDEN]));
        w.insert(p("mlp.down_proj.weight"), randn(&[HIDDEN, FFN]));
        w.insert(p("input_layernorm.weight"), near_one(HIDDEN));
        w.insert(p("post_attention_layernorm.weight"), near_one(HIDDEN));
    }
    candle_core::safetensors::save(&w, dir.join("model.safetensors")).unwrap();
}

#[test]
fn hugging_face_folders_load_for_qwen2_and_qwen3() {
    for model_type in ["qwen2", "qwen3"] {
        let dir = tempfile::tempdir().unwrap();
        write_tiny_hf_dir(dir.path(), model_type);
        let mut loaded = load_model(dir.path(), None, "f32", &Device::Cpu).unwrap();
        assert_eq!(loaded.info.architecture, model_type);
        assert_eq!(loaded.info.format, ModelFormat::HfDir);
        assert!(!loaded.info.prefix_reuse);
        let prompt = loaded
            .template
            .as_ref()
            .unwrap()
            .render(&[serde_json::json!({"role": "user", "content": "hello world"})], None, true)
            .unwrap();
        let ids = loaded.tokenizer.encode(&prompt).unwrap();
        let first = loaded.lm.forward(&ids).unwrap();
        assert_eq!(first.dims(), &[toy_vocab().0.len()], "{model_type}");
        let step = loaded.lm.forward(&[5]).unwrap();
        assert_eq!(loaded.lm.cached_len(), ids.len() + 1);
        // These models cannot cut their cache: clearing and running again gives the same.
        assert!(!loaded.lm.truncate(3));
        loaded.lm.clear();
        let again = loaded.lm.forward(&ids).unwrap();
        assert!(max_diff(&first, &again) < 1e-4, "{model_type}");
        assert!(max_diff(&first, &step) > 0.0);
        let eos = loaded.tokenizer.token_id("<|im_end|>").unwrap();
        assert!(loaded.stop_tokens.contains(&eos), "{model_type}");
    }
}
