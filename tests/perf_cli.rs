//! `b4 perf`: its error lines for bad input, and a tiny real run on the default model
//! (needs it: CI runs `b4 models fetch qwen2.5-coder-0.5b` first). Timings are not
//! asserted, only that every figure is there and positive.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn b4(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b4")).current_dir(dir).args(args).output().unwrap()
}

fn config_arg() -> String {
    repo().join("configs/model.yaml").display().to_string()
}

/// Fails with exactly one line on stderr, naming the problem.
fn fails_with(args: &[&str], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = config_arg();
    let mut all = vec!["perf", "--model_config", config.as_str()];
    all.extend_from_slice(args);
    let out = b4(dir.path(), &all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

#[test]
fn bad_input_is_one_clear_error_line() {
    fails_with(&["--model_name", "nope"], "nope");
    fails_with(&["--model_name", "mock"], "profile 'mock' uses the mock backend");
    fails_with(&["--prompt-tokens", "0"], "--prompt-tokens must be at least 1 (got 0)");
    fails_with(&["--gen-tokens", "0"], "--gen-tokens must be at least 2 (got 0)");
    fails_with(&["--repeat", "0"], "--repeat must be at least 1 (got 0)");
}

fn positive(v: &Value, what: &str) -> f64 {
    let x = v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(x > 0.0, "{what} = {x}");
    x
}

#[test]
fn a_tiny_run_reports_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("perf.json");
    let config = config_arg();
    let out = b4(
        dir.path(),
        &[
            "perf", "--model_config", &config, "--model_name", "qwen-0.5b", "--prompt-tokens", "16", "--gen-tokens", "4",
            "--repeat", "1", "--no-llama-cpp", "--json", json_path.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("| qwen-0.5b | b4 ("), "{stdout}");
    assert!(stdout.contains("llama.cpp skipped"), "{stdout}");
    assert!(stdout.contains("| Qwen2.5-Coder-0.5B Q4_K_M | llama.cpp"), "the reference table: {stdout}");
    assert!(stdout.starts_with("machine: "), "{stdout}");
    assert!(stdout.contains("read bandwidth: "), "{stdout}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(report["options"]["prompt_tokens"], 16);
    let profiles = report["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 1);
    let p = &profiles[0];
    assert_eq!(p["profile"], "qwen-0.5b");
    assert!(p["llama_cpp"].is_null());
    let machine = &report["machine"];
    assert!(machine["cpu"].as_str().unwrap().contains("cores"), "{machine}");
    positive(&machine["read_gb_s"], "read_gb_s");
    // Weights read per decode step: the file's tensor data (after the header: vocabulary,
    // metadata; between tensors only alignment padding), less the token embeddings when the
    // file has its own output projection (then one row of them is read a step).
    let model_path = p["model"].as_str().unwrap();
    let mut file = std::fs::File::open(model_path).unwrap();
    let content = candle_core::quantized::gguf_file::Content::read(&mut file).unwrap();
    let data = std::fs::metadata(model_path).unwrap().len() - content.tensor_data_offset;
    let embeddings = &content.tensor_infos["token_embd.weight"];
    let embedding_bytes = (embeddings.shape.elem_count() / embeddings.ggml_dtype.block_size() * embeddings.ggml_dtype.type_size()) as u64;
    let most = if content.tensor_infos.contains_key("output.weight") { data - embedding_bytes } else { data };
    let padding_at_most = 32 * content.tensor_infos.len() as u64;
    let decode_bytes = positive(&p["decode_bytes"], "decode_bytes");
    assert!(decode_bytes <= most as f64 && decode_bytes > (most - padding_at_most) as f64, "{decode_bytes}, expected {most} less padding");
    let ours = &p["ours"];
    assert!(!ours["build"].as_str().unwrap().is_empty(), "the kernels that ran are named");
    for f in ours["prompts"].as_array().unwrap() {
        let gb_s = decode_bytes * f["decode_tok_s"].as_f64().unwrap() / 1e9;
        assert!(stdout.contains(&format!(" | {gb_s:.1} (")), "decode GB/s {gb_s:.1} in {stdout}");
    }
    positive(&ours["load_ms"], "load_ms");
    positive(&ours["peak_rss_mib"], "peak_rss_mib");
    positive(&ours["threads"], "threads");
    let prompts = ours["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts.iter().map(|f| f["prompt"].as_str().unwrap()).collect();
    assert_eq!(names, ["short", "long"]);
    for f in prompts {
        assert!(f["prompt_tokens"].as_u64().unwrap() <= 16);
        positive(&f["prompt_tokens"], "prompt_tokens");
        positive(&f["prefill_tok_s"], "prefill_tok_s");
        positive(&f["decode_tok_s"], "decode_tok_s");
        positive(&f["ttft_ms"], "ttft_ms");
        let runs = f["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0]["tokens"].as_array().unwrap().len(), 4);
    }
    assert_eq!(prompts[1]["prompt_tokens"], 16, "the long prompt is cut to --prompt-tokens");
    let reuse = &p["reuse"];
    positive(&reuse["reuse_ms"], "reuse_ms");
    positive(&reuse["cold_ms"], "cold_ms");
    assert_eq!(reuse["reused_tokens"], 16 + 3, "the prompt and all generated tokens but the last");
}
