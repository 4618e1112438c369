//! Tiny random models written to temp files: our Qwen2 forward against candle's
//! `quantized_qwen2`, cache truncation against a fresh prefill, and the GGUF / Hugging Face
//! loaders end to end.

use std::fs::File;

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_qwen2;

use super::testing::*;
use crate::brain::progress::LoadProgress;
use super::*;

fn open_ours(path: &Path) -> Qwen2 {
    let mut file = File::open(path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    Qwen2::from_gguf(&content, &mut file, &Device::Cpu).unwrap()
}

fn open_cpu_pass(path: &Path) -> Box<dyn CausalLm> {
    let mut file = File::open(path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let config = Qwen2Config::from_gguf(&content).unwrap();
    Box::new(CpuQwen2::from_gguf(&content, &mut file, config, 2).unwrap())
}

/// Both Qwen2 passes, by name: each opens the model at a path.
fn both_passes() -> [(&'static str, fn(&Path) -> Box<dyn CausalLm>); 2] {
    [("cpu pass", open_cpu_pass), ("candle ops", |path| Box::new(open_ours(path)))]
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

/// What loading `path` reported, in order.
fn load_reports(path: &Path) -> Vec<LoadProgress> {
    let reports = std::sync::Mutex::new(Vec::new());
    let sink = |p: LoadProgress| reports.lock().unwrap().push(p);
    load_model_reporting(path, None, "f32", &Device::Cpu, &sink).unwrap();
    reports.into_inner().unwrap()
}

/// The reports of one load: the tokenizer, then the weights from none to all `total`
/// bytes, never going back.
fn assert_tokenizer_then_weights(reports: &[LoadProgress], total: u64, what: &str) {
    assert_eq!(reports.first(), Some(&LoadProgress { stage: LoadStage::Tokenizer, done: 0, total: 0 }), "{what}: {reports:?}");
    assert_eq!(reports.get(1), Some(&LoadProgress { stage: LoadStage::Weights, done: 0, total }), "{what}: {reports:?}");
    assert_eq!(reports.last(), Some(&LoadProgress { stage: LoadStage::Weights, done: total, total }), "{what}: {reports:?}");
    assert!(reports[1..].iter().all(|p| p.stage == LoadStage::Weights && p.total == total), "{what}: {reports:?}");
    assert!(reports[1..].windows(2).all(|w| w[0].done < w[1].done), "{what}: {reports:?}");
}

#[test]
fn loading_a_gguf_reports_the_tokenizer_then_the_bytes_of_its_tensors() {
    // qwen2 on our CPU pass; qwen3 and llama on candle's models: each reads through the count.
    for architecture in ["qwen2", "qwen3", "llama"] {
        let dir = tempfile::tempdir().unwrap();
        let path = write_tiny_qwen2_gguf(dir.path(), architecture);
        let reports = load_reports(&path);
        let total = reports.last().map_or(0, |p| p.total);
        // The tensor data is the file after the header; between tensors only alignment
        // padding (under 32 bytes each) is not weights.
        let mut file = File::open(&path).unwrap();
        let content = gguf_file::Content::read(&mut file).unwrap();
        let data = std::fs::metadata(&path).unwrap().len() - content.tensor_data_offset;
        let padding_at_most = 32 * content.tensor_infos.len() as u64;
        assert!(total <= data && data - total < padding_at_most, "{architecture}: total {total}, data {data}");
        assert_tokenizer_then_weights(&reports, total, architecture);
    }
}

#[test]
fn loading_a_hugging_face_folder_reports_the_bytes_of_its_safetensors() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_hf_dir(dir.path(), "qwen2");
    let reports = load_reports(dir.path());
    // A safetensors file is an 8-byte header length, the JSON header, then the tensor data.
    let bytes = std::fs::read(dir.path().join("model.safetensors")).unwrap();
    let header = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    assert_tokenizer_then_weights(&reports, bytes.len() as u64 - 8 - header, "safetensors");
}

#[test]
fn unsupported_architectures_and_bad_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "mamba");
    let err = load_model(&path, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("GGUF architecture 'mamba' is not supported (qwen2, qwen3, qwen35, llama)"), "{err}");
    let junk = dir.path().join("junk.gguf");
    std::fs::write(&junk, b"not a model").unwrap();
    let err = load_model(&junk, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("not a GGUF file"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let err = load_model(empty.path(), None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("config.json"), "{err}");
}

/// The tokenizer is built on a thread of its own while the weights are read: its error still
/// reaches the caller, and comes first when the weights are broken too.
#[test]
fn a_broken_tokenizer_is_reported_even_while_weights_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let tokenizer = dir.path().join("tiny-qwen2.tokenizer.json");
    std::fs::write(&tokenizer, b"{ not json").unwrap();
    let err = load_model(&path, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("tiny-qwen2.tokenizer.json"), "{err}");
    // Weights cut short as well: the tokenizer's error is the one shown.
    let content = gguf_file::Content::read(&mut File::open(&path).unwrap()).unwrap();
    File::options().write(true).open(&path).unwrap().set_len(content.tensor_data_offset + 64).unwrap();
    let err = load_model(&path, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(err.contains("tiny-qwen2.tokenizer.json"), "{err}");
    // With the tokenizer gone, the weights' error.
    std::fs::remove_file(&tokenizer).unwrap();
    let err = load_model(&path, None, "", &Device::Cpu).err().unwrap().to_string();
    assert!(!err.contains("tokenizer"), "{err}");
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
        // Several tokens after a cached prefix equal one run over everything.
        let extended = loaded.lm.forward(&[5, 6, 7]).unwrap();
        loaded.lm.clear();
        let all: Vec<u32> = ids.iter().copied().chain([5, 6, 7]).collect();
        let at_once = loaded.lm.forward(&all).unwrap();
        assert!(max_diff(&extended, &at_once) < 1e-3, "{model_type}: {}", max_diff(&extended, &at_once));
        let eos = loaded.tokenizer.token_id("<|im_end|>").unwrap();
        assert!(loaded.stop_tokens.contains(&eos), "{model_type}");
    }
}

#[test]
fn qwen3_and_llama_ggufs_run_on_candles_models_and_clear_to_start_over() {
    for architecture in ["qwen3", "llama"] {
        let dir = tempfile::tempdir().unwrap();
        let path = write_tiny_qwen2_gguf(dir.path(), architecture);
        let mut loaded = load_model(&path, None, "q8_0", &Device::Cpu).unwrap();
        assert_eq!(loaded.info.architecture, architecture);
        assert!(!loaded.info.prefix_reuse);
        let first = loaded.lm.forward(&PROMPT).unwrap();
        assert_eq!(first.dims(), &[toy_vocab().0.len()], "{architecture}");
        assert_eq!(loaded.lm.cached_len(), PROMPT.len());
        // Extending the cached tokens works without cutting anything...
        assert!(loaded.lm.truncate(PROMPT.len()));
        let extended = loaded.lm.forward(&[7, 8, 9]).unwrap();
        // ...and gives what running everything at once gives.
        loaded.lm.clear();
        let all: Vec<u32> = PROMPT.iter().copied().chain([7, 8, 9]).collect();
        let at_once = loaded.lm.forward(&all).unwrap();
        assert!(max_diff(&extended, &at_once) < 1e-3, "{architecture}: {}", max_diff(&extended, &at_once));
        // A cut in the middle is refused: the caller clears and starts over.
        assert!(!loaded.lm.truncate(4));
        loaded.lm.clear();
        assert_eq!(loaded.lm.cached_len(), 0);
        let again = loaded.lm.forward(&PROMPT).unwrap();
        assert!(max_diff(&first, &again) < 1e-4, "{architecture}");
    }
}


/// Both Qwen2 passes: a cache saved, overwritten by another prompt and restored gives the
/// logits of a fresh prefill of the saved prompt, and the saved copy does not change when
/// the model writes its current cache.
#[test]
fn a_restored_cache_gives_the_logits_of_a_fresh_prefill() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    for (name, open) in both_passes() {
        let mut model = open(&path);
        model.forward(&PROMPT).unwrap();
        let saved = model.save_cache().unwrap_or_else(|| panic!("{name}: no save"));
        // The current cache is cut back and overwritten in place.
        model.truncate(3);
        model.forward(&[200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210]).unwrap();
        assert!(model.restore_cache(saved), "{name}");
        assert_eq!(model.cached_len(), PROMPT.len(), "{name}");
        let restored = model.forward(&[42, 43]).unwrap();

        let mut fresh = open(&path);
        let whole: Vec<u32> = PROMPT.iter().copied().chain([42, 43]).collect();
        let expected = fresh.forward(&whole).unwrap();
        assert!(max_diff(&restored, &expected) < 1e-3, "{name}: differs by {}", max_diff(&restored, &expected));
    }
}

#[test]
fn every_row_of_a_batch_has_the_logits_of_one_token_steps() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    let draft = [7u32, 42, 260, 8, 9, 10, 11, 12, 13];
    for (name, open) in both_passes() {
        // Batches of every size the decoder sends (a token and up to 8 drafts).
        for n in [1, 2, 4, 8, 9] {
            let mut batched = open(&path);
            batched.forward(&PROMPT).unwrap();
            let all = batched.forward_all(&draft[..n]).unwrap();
            assert_eq!(all.dims(), &[n, toy_vocab().0.len()], "{name}");
            assert_eq!(batched.cached_len(), PROMPT.len() + n, "{name}");

            let mut stepped = open(&path);
            stepped.forward(&PROMPT).unwrap();
            for (row, token) in draft[..n].iter().enumerate() {
                let one = stepped.forward(&[*token]).unwrap();
                let batch_row = all.get(row).unwrap();
                let top = |t: &Tensor| t.argmax(0).unwrap().to_scalar::<u32>().unwrap();
                assert_eq!(top(&batch_row), top(&one), "{name}: batch of {n}, row {row}: another top token");
                // Rows of a batch go through the grouped kernels, whose float order differs
                // from one row's: an activation at an int8 rounding boundary can round the
                // other way (up to 0.13 over 60 random models; 0 on most). The real model's
                // bound is checked in tests/brain_model.rs.
                let diff = max_diff(&batch_row, &one);
                assert!(diff < 0.25, "{name}: batch of {n}, row {row} differs by {diff}");
            }
        }
    }
}

#[test]
fn an_exported_cache_imported_into_a_fresh_model_gives_the_logits_of_a_prefill() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
    for (name, open) in both_passes() {
        let mut model = open(&path);
        assert!(model.can_export(), "{name}");
        model.forward(&PROMPT).unwrap();
        // The first 9 positions of a cache of 13.
        let image = model.export_cache(9).unwrap_or_else(|| panic!("{name}: no export"));
        assert_eq!(image.len, 9);
        assert!(model.export_cache(PROMPT.len() + 1).is_none(), "{name}: more than is cached");

        let mut fresh = open(&path);
        assert!(fresh.import_cache(image.clone()), "{name}");
        assert_eq!(fresh.cached_len(), 9);
        let imported = fresh.forward(&PROMPT[9..]).unwrap();
        let mut whole = open(&path);
        let expected = whole.forward(&PROMPT).unwrap();
        assert!(max_diff(&imported, &expected) < 1e-3, "{name}: differs by {}", max_diff(&imported, &expected));

        // Another shape is refused and leaves an empty cache.
        let mut wrong = image;
        wrong.head_dim += 1;
        let mut other = open(&path);
        other.forward(&PROMPT).unwrap();
        assert!(!other.import_cache(wrong), "{name}");
        assert_eq!(other.cached_len(), 0, "{name}");
    }
}

