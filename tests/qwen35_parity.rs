//! Qwen3.5 computes what transformers and llama.cpp compute: tiny random-weight models
//! (tests/fixtures/qwen35/, written by scripts/qwen35/make_fixtures.py), each as a Hugging
//! Face folder and as llama.cpp's GGUF, with both references' logits for every prompt
//! position and their 32 greedy tokens. Checked here: one prefill, token by token, a
//! prefill that goes on after a reused prefix (a checkpoint, and a cut between
//! checkpoints), and greedy decoding.

use std::path::{Path, PathBuf};

use b4_agent::brain::model::{load_model, CausalLm, CpuQwen35, Qwen35};
use candle_core::quantized::gguf_file;
use candle_core::Device;
use serde_json::Value;

/// Absolute bound on any logit against either reference. Both references and our passes
/// compute in f32 from the same weights (bfloat16 values); what differs is summation
/// order. Measured: transformers vs llama.cpp up to 1.6e-4, ours vs either up to 3e-4, on
/// logits with a standard deviation of about 4. A wrong norm, gate, head order or rotary
/// detail moves them by 0.3 or more (scripts/qwen35 checks each such mistake on the
/// references: `perturbation_max_abs_logit_change` in reference.json).
const TOLERANCE: f32 = 1e-3;

const MODELS: &[&str] = &["tiny", "tied", "pattern-0.8b"];

struct Reference {
    prompt: Vec<u32>,
    /// Per reference: logits of every prompt position, and the greedy continuation.
    refs: Vec<(String, Vec<Vec<f32>>, Vec<u32>)>,
}

/// The fixtures: tests/fixtures/qwen35, or `B4_QWEN35_FIXTURES` (a set just regenerated).
fn fixture(name: &str) -> PathBuf {
    let root = std::env::var_os("B4_QWEN35_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qwen35"));
    root.join(name)
}

fn reference(name: &str) -> Reference {
    let text = std::fs::read_to_string(fixture(name).join("reference.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let ids = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect::<Vec<_>>();
    let refs = ["transformers", "llama_cpp"]
        .iter()
        .map(|who| {
            let r = &v[*who];
            let logits = r["logits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect())
                .collect();
            (who.to_string(), logits, ids(&r["greedy"]))
        })
        .collect();
    Reference { prompt: ids(&v["prompt_ids"]), refs }
}

/// The model three ways: the GGUF on our CPU pass and on candle's ops, the Hugging Face
/// folder on candle's ops.
fn passes(name: &str) -> Vec<(String, Box<dyn CausalLm>)> {
    let gguf = fixture(name).join("model.gguf");
    let read = || {
        let mut file = std::fs::File::open(&gguf).unwrap();
        let content = gguf_file::Content::read(&mut file).unwrap();
        (file, content)
    };
    let (mut file, content) = read();
    let cpu = CpuQwen35::from_gguf(&content, &mut file, 2).unwrap();
    let (mut file, content) = read();
    let candle = Qwen35::from_gguf(&content, &mut file, &Device::Cpu).unwrap();
    let hf = load_model(&fixture(name).join("hf"), None, "f32", &Device::Cpu).unwrap();
    assert!(hf.info.prefix_reuse);
    let loaded = load_model(&gguf, None, "", &Device::Cpu).unwrap();
    assert_eq!((loaded.info.architecture.as_str(), loaded.lm.cache_kind()), ("qwen35", "CpuQwen35"));
    vec![(format!("{name} gguf cpu pass"), Box::new(cpu)), (format!("{name} gguf candle ops"), Box::new(candle)), (format!("{name} hf candle ops"), hf.lm)]
}

fn row(t: &candle_core::Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1().unwrap()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vocabulary sizes differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn argmax(v: &[f32]) -> u32 {
    v.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0 as u32
}

/// Checks `rows` (logits from prompt position `from` on) against both references.
fn check_rows(what: &str, r: &Reference, from: usize, rows: &[Vec<f32>]) {
    for (who, logits, _) in &r.refs {
        for (i, ours) in rows.iter().enumerate() {
            let d = max_diff(ours, &logits[from + i]);
            assert!(d <= TOLERANCE, "{what}: position {} differs from {who} by {d}", from + i);
        }
    }
}

#[test]
fn one_prefill_matches_both_references_at_every_position() {
    for name in MODELS {
        let r = reference(name);
        for (kind, mut lm) in passes(name) {
            let all = lm.forward_all(&r.prompt).unwrap();
            let rows: Vec<Vec<f32>> = (0..r.prompt.len()).map(|i| row(&all.get(i).unwrap())).collect();
            check_rows(&format!("{kind} prefill"), &r, 0, &rows);
            assert_eq!(lm.cached_len(), r.prompt.len());
        }
    }
}

#[test]
fn token_by_token_matches_both_references() {
    for name in MODELS {
        let r = reference(name);
        for (kind, mut lm) in passes(name) {
            let rows: Vec<Vec<f32>> = r.prompt.iter().map(|&t| row(&lm.forward(&[t]).unwrap())).collect();
            check_rows(&format!("{kind} token by token"), &r, 0, &rows);
        }
    }
}

#[test]
fn greedy_decoding_gives_the_references_32_tokens() {
    for name in MODELS {
        let r = reference(name);
        assert_eq!(r.refs[0].2, r.refs[1].2, "{name}: the references disagree");
        for (kind, mut lm) in passes(name) {
            let mut next = argmax(&row(&lm.forward(&r.prompt).unwrap()));
            let mut greedy = vec![next];
            while greedy.len() < r.refs[0].2.len() {
                next = argmax(&row(&lm.forward(&[next]).unwrap()));
                greedy.push(next);
            }
            assert_eq!(greedy, r.refs[0].2, "{kind}");
        }
    }
}

#[test]
fn a_prefill_after_a_reused_prefix_matches_the_references() {
    for name in MODELS {
        let r = reference(name);
        let split = r.prompt.len() / 2;
        for (kind, mut lm) in passes(name) {
            // A first prompt: the shared prefix, a checkpoint, then something else.
            lm.forward_all(&r.prompt[..split]).unwrap();
            lm.mark();
            lm.forward_all(&[r.prompt[0], r.prompt[1], r.prompt[2]]).unwrap();
            lm.forward(&[r.prompt[3]]).unwrap();
            // The second prompt shares the prefix: kept without running it again.
            assert_eq!(lm.reusable_prefix(split + 2), split, "{kind}");
            assert!(lm.truncate(split));
            assert_eq!(lm.cached_len(), split);
            let rest = lm.forward_all(&r.prompt[split..]).unwrap();
            let rows: Vec<Vec<f32>> = (0..r.prompt.len() - split).map(|i| row(&rest.get(i).unwrap())).collect();
            check_rows(&format!("{kind} after a checkpoint"), &r, split, &rows);

            // Cut back between checkpoints: the state before it is restored and the tokens
            // after it run again.
            let cut = split + 2;
            assert!(lm.truncate(cut));
            assert_eq!(lm.cached_len(), cut);
            let rows: Vec<Vec<f32>> = r.prompt[cut..].iter().map(|&t| row(&lm.forward(&[t]).unwrap())).collect();
            check_rows(&format!("{kind} after a cut"), &r, cut, &rows);
        }
    }
}

#[test]
fn a_saved_cache_comes_back_whole() {
    let r = reference("tiny");
    for (kind, mut lm) in passes("tiny") {
        let split = r.prompt.len() - 3;
        lm.forward_all(&r.prompt[..split]).unwrap();
        let saved = lm.save_cache().expect("a cache to save");
        lm.clear();
        lm.forward_all(&r.prompt[3..9]).unwrap();
        assert!(lm.restore_cache(saved));
        assert_eq!(lm.cached_len(), split);
        let rows: Vec<Vec<f32>> = r.prompt[split..].iter().map(|&t| row(&lm.forward(&[t]).unwrap())).collect();
        check_rows(&format!("{kind} restored"), &r, split, &rows);
    }
}

/// The multimodal checkpoint (`qwen3_5`, `text_config`, tensors under
/// `model.language_model.`) loads its text part and computes the same.
#[test]
fn the_text_part_of_a_multimodal_checkpoint_matches_the_references() {
    let r = reference("tiny");
    let source = fixture("tiny").join("hf");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        if name != "model.safetensors" && name != "config.json" {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    let text: Value = serde_json::from_str(&std::fs::read_to_string(source.join("config.json")).unwrap()).unwrap();
    let config = serde_json::json!({"model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": text, "vision_config": {"depth": 1}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let tensors = candle_core::safetensors::load(source.join("model.safetensors"), &Device::Cpu).unwrap();
    let renamed: std::collections::HashMap<String, candle_core::Tensor> = tensors
        .into_iter()
        .map(|(name, t)| (name.strip_prefix("model.").map_or(name.clone(), |rest| format!("model.language_model.{rest}")), t))
        .collect();
    assert!(renamed.keys().any(|k| k.starts_with("model.language_model.layers.0.")));
    candle_core::safetensors::save(&renamed, dir.path().join("model.safetensors")).unwrap();

    let mut loaded = load_model(dir.path(), None, "f32", &Device::Cpu).unwrap();
    assert_eq!(loaded.info.architecture, "qwen3_5");
    let all = loaded.lm.forward_all(&r.prompt).unwrap();
    let rows: Vec<Vec<f32>> = (0..r.prompt.len()).map(|i| row(&all.get(i).unwrap())).collect();
    check_rows("tiny as a multimodal checkpoint", &r, 0, &rows);
}

/// A GGUF converted with its multi-token-prediction block (`nextn_predict_layers`, one
/// more block than the trunk) runs the trunk only.
#[test]
fn a_multi_token_prediction_block_in_the_gguf_is_left_out_of_the_main_pass() {
    let r = reference("tiny");
    let mut file = std::fs::File::open(fixture("tiny").join("model.gguf")).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let names: Vec<String> = content.tensor_infos.keys().cloned().collect();
    let mut tensors: Vec<(String, candle_core::quantized::QTensor)> =
        names.iter().map(|n| (n.clone(), content.tensor(&mut file, n, &Device::Cpu).unwrap())).collect();
    // The extra block: a full-attention layer (a copy of layer 3) plus a nextn tensor.
    for name in names.iter().filter(|n| n.starts_with("blk.3.")) {
        let copy = content.tensor(&mut file, name, &Device::Cpu).unwrap();
        tensors.push((name.replacen("blk.3.", "blk.4.", 1), copy));
    }
    let eh = content.tensor(&mut file, "blk.3.ffn_up.weight", &Device::Cpu).unwrap();
    tensors.push(("blk.4.nextn.eh_proj.weight".into(), eh));
    let mut metadata = content.metadata.clone();
    metadata.insert("qwen35.block_count".into(), gguf_file::Value::U32(5));
    metadata.insert("qwen35.nextn_predict_layers".into(), gguf_file::Value::U32(1));
    let flags = [true, true, true, false, false].iter().map(|&b| gguf_file::Value::Bool(b)).collect();
    metadata.insert("qwen35.attention.recurrent_layers".into(), gguf_file::Value::Array(flags));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("with-mtp.gguf");
    let md: Vec<(&str, &gguf_file::Value)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let ts: Vec<(&str, &candle_core::quantized::QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    gguf_file::write(&mut std::fs::File::create(&path).unwrap(), &md, &ts).unwrap();

    let mut loaded = load_model(&path, None, "", &Device::Cpu).unwrap();
    let all = loaded.lm.forward_all(&r.prompt).unwrap();
    let rows: Vec<Vec<f32>> = (0..r.prompt.len()).map(|i| row(&all.get(i).unwrap())).collect();
    check_rows("tiny with an MTP block", &r, 0, &rows);
}

/// Our CPU pass on `gguf`.
fn cpu_pass(gguf: &Path) -> CpuQwen35 {
    let mut file = std::fs::File::open(gguf).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    CpuQwen35::from_gguf(&content, &mut file, 2).unwrap()
}

/// The fixture `name` with its output projection (the embeddings, where tied) quantized to
/// Q8_0, so that the projection runs on our quantized kernels, not as f32 rows.
fn with_quantized_output(name: &str, dir: &Path) -> PathBuf {
    let mut file = std::fs::File::open(fixture(name).join("model.gguf")).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let output = if content.tensor_infos.contains_key("output.weight") { "output.weight" } else { "token_embd.weight" };
    let tensors: Vec<(String, candle_core::quantized::QTensor)> = content
        .tensor_infos
        .keys()
        .map(|n| {
            let t = content.tensor(&mut file, n, &Device::Cpu).unwrap();
            let t = if n == output {
                candle_core::quantized::QTensor::quantize(&t.dequantize(&Device::Cpu).unwrap(), candle_core::quantized::GgmlDType::Q8_0).unwrap()
            } else {
                t
            };
            (n.clone(), t)
        })
        .collect();
    let path = dir.join(format!("{name}-q8-output.gguf"));
    let md: Vec<(&str, &gguf_file::Value)> = content.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let ts: Vec<(&str, &candle_core::quantized::QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    gguf_file::write(&mut std::fs::File::create(&path).unwrap(), &md, &ts).unwrap();
    path
}

/// Hidden rows handed out by the CPU pass and projected when the decoder picks from them
/// give the forward pass's logits bit for bit: every token's, or only the ids a grammar
/// allows (the others `-inf`); and the pass goes on from them as from `forward_all`. With
/// the fixtures' f32 projection and with a quantized one.
#[test]
fn hidden_rows_projected_on_demand_give_the_forward_logits() {
    let dir = tempfile::tempdir().unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for name in MODELS {
        let r = reference(name);
        for gguf in [fixture(name).join("model.gguf"), with_quantized_output(name, dir.path())] {
            let what = gguf.display();
            let (mut full, mut hidden_pass) = (cpu_pass(&gguf), cpu_pass(&gguf));
            let all = full.forward_all(&r.prompt).unwrap();
            let hidden = hidden_pass.forward_hidden(&r.prompt).unwrap();
            assert_eq!(hidden_pass.cached_len(), r.prompt.len());
            let width = hidden.len() / r.prompt.len();
            for (t, h) in hidden.chunks_exact(width).enumerate() {
                let want = row(&all.get(t).unwrap());
                assert_eq!(bits(&hidden_pass.project(h, None).unwrap()), bits(&want), "{what}: position {t}, every token");
                // Runs and single ids, the last token included.
                let vocab = want.len() as u32;
                let ids: Vec<u32> = (0..vocab).filter(|i| i % 7 < 3 || *i == vocab - 1).collect();
                let sparse = hidden_pass.project(h, Some(&ids)).unwrap();
                for (j, (&got, &w)) in sparse.iter().zip(&want).enumerate() {
                    let asked = ids.binary_search(&(j as u32)).is_ok();
                    assert_eq!(got.to_bits(), if asked { w.to_bits() } else { f32::NEG_INFINITY.to_bits() }, "{what}: position {t}, id {j}");
                }
                assert!(hidden_pass.project(h, Some(&[vocab])).is_err(), "{what}: an id past the vocabulary");
            }
            let next = argmax(&row(&all.get(r.prompt.len() - 1).unwrap()));
            let want = row(&full.forward(&[next]).unwrap());
            let h = hidden_pass.forward_hidden(&[next]).unwrap();
            assert_eq!(bits(&hidden_pass.project(&h, None).unwrap()), bits(&want), "{what}: the step after");
        }
    }
}
