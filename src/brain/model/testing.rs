//! Tiny random models written to temp folders, for tests of the loaders and the decoder.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{Device, Tensor};

use crate::brain::tokenizer::ModelTokenizer;

pub const HIDDEN: usize = 64;
pub const HEADS: usize = 4;
pub const KV_HEADS: usize = 2;
pub const FFN: usize = 128;
pub const LAYERS: usize = 2;
pub const CONTEXT: usize = 256;
pub const TEMPLATE: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// 256 byte tokens, a few merges, `<|im_start|>`, `<|im_end|>` and `<|endoftext|>`.
pub fn toy_vocab() -> (Vec<String>, Vec<String>, Vec<i32>) {
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
pub struct ByteLevelChars;

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

/// Normal values (standard deviation 0.3) from a generator each test thread starts afresh:
/// every run of a test gets the same weights. With weights drawn anew each run, the rare
/// draw that put an activation on a quantization step's edge made a comparison with
/// candle's model fail once in a few runs.
pub fn randn(shape: &[usize]) -> Tensor {
    thread_local! {
        static STATE: std::cell::Cell<u64> = const { std::cell::Cell::new(0x9E37_79B9_7F4A_7C15) };
    }
    // splitmix64, then Box-Muller.
    let next = || {
        STATE.with(|state| {
            let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            state.set(z);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    };
    let uniform = || ((next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|_| {
            let (u1, u2) = (uniform(), uniform());
            ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos() * 0.3) as f32
        })
        .collect();
    Tensor::from_vec(values, shape, &Device::Cpu).unwrap()
}

pub fn near_one(n: usize) -> Tensor {
    (Tensor::ones(n, candle_core::DType::F32, &Device::Cpu).unwrap() + randn(&[n])).unwrap()
}

/// Writes a random GGUF with the toy vocabulary; returns its path. `qwen2` has q/k/v
/// biases, `qwen3` per-head q/k norms, `llama` neither; any other name gets Qwen2 tensors.
pub fn write_tiny_qwen2_gguf(dir: &Path, architecture: &str) -> PathBuf {
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
        match architecture {
            "qwen3" => tensors.extend([
                (p("attn_q_norm.weight"), f(near_one(head_dim))),
                (p("attn_k_norm.weight"), f(near_one(head_dim))),
            ]),
            "llama" => {}
            _ => tensors.extend([
                (p("attn_q.bias"), f(randn(&[HIDDEN]))),
                (p("attn_k.bias"), f(randn(&[KV_HEADS * head_dim]))),
                (p("attn_v.bias"), f(randn(&[KV_HEADS * head_dim]))),
            ]),
        }
        tensors.extend([
            (p("attn_q.weight"), q(randn(&[HIDDEN, HIDDEN]))),
            (p("attn_k.weight"), q(randn(&[KV_HEADS * head_dim, HIDDEN]))),
            (p("attn_v.weight"), q(randn(&[KV_HEADS * head_dim, HIDDEN]))),
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
        (a("attention.key_length"), V::U32(head_dim as u32)),
        (a("rope.dimension_count"), V::U32(head_dim as u32)),
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

/// A random Hugging Face checkpoint folder of `model_type` with the toy tokenizer.
pub fn write_tiny_hf_dir(dir: &Path, model_type: &str) {
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

