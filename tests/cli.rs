//! The `b4` binary as a user runs it: decide on the seed inputs, chat on the six bench
//! cases with the mock brain through the real skills, tool, schema, and bad input.

mod common;
use common::copy_dir;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn b4(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b4")).args(args).current_dir(repo()).output().unwrap()
}

/// `b4 ARGS` with its models folder at `models`.
fn b4_with_models(models: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b4")).args(args).env("B4_MODELS_DIR", models).current_dir(repo()).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temp workspace with the repo's docs, data and memory.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["docs", "data", "memory"] {
        copy_dir(&repo().join(sub), &dir.path().join(sub));
    }
    // Only the shipped notes: a developer's own history is not part of the fixture.
    let _ = std::fs::remove_file(dir.path().join("memory/history.md"));
    dir
}


#[test]
fn schema_file_is_what_b4_schema_prints() {
    let out = b4(&["schema"]);
    assert!(out.status.success());
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("data/messages/tools_schema_basic.json")).unwrap()).unwrap();
    assert_eq!(printed, committed, "run: b4 schema > data/messages/tools_schema_basic.json");
    let names: Vec<&str> = printed.as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["file_reader", "calculator", "local_file_search", "table_analyzer", "format_converter"]);
}

#[test]
fn decide_writes_both_files_for_every_seed_input() {
    let out_root = tempfile::tempdir().unwrap();
    let cases = [
        ("messages_no_tool", "mock"),
        ("messages_with_tool", "mock"),
        ("messages_multi_tool", "mock"),
        ("messages_plan_input", "plan_execute"),
        ("messages_plan_with_results", "plan_execute"),
    ];
    for (name, mode) in cases {
        let outdir = out_root.path().join(name);
        let messages = format!("data/messages/{name}.json");
        let mut args = vec![
            "decide",
            "--model_config",
            "configs/model.yaml",
            "--messages",
            &messages,
            "--tools_schema",
            "data/messages/tools_schema_basic.json",
            "--mode",
            mode,
            "--outdir",
            outdir.to_str().unwrap(),
        ];
        if mode == "plan_execute" {
            args.extend(["--model_name", "mock"]);
        }
        let out = b4(&args);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let ai: Value = serde_json::from_str(&std::fs::read_to_string(outdir.join("ai_message.json")).unwrap()).unwrap();
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(outdir.join("raw_model_output.json")).unwrap()).unwrap();
        assert_eq!(ai["role"], "assistant");
        assert_eq!(raw["status"], "success");
        assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), ai);
        let calls = ai["tool_calls"].as_array().unwrap();
        match name {
            // The seeds' three tasks: three calls in one turn.
            "messages_multi_tool" => {
                let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
                assert_eq!(names, vec!["file_reader", "calculator", "local_file_search"]);
                assert_eq!(calls[1]["args"]["expression"], "3.14 * 5");
            }
            "messages_with_tool" => assert_eq!(calls[0]["args"]["path"], "docs/agent_intro.txt"),
            "messages_plan_input" => {
                assert_eq!(raw["phase"], "plan");
                assert_eq!(raw["plan"]["plan"].as_array().unwrap().len(), calls.len());
            }
            "messages_plan_with_results" => {
                assert_eq!(raw["phase"], "step");
                assert!(calls.is_empty());
                assert!(ai["content"].as_str().unwrap().starts_with("三条中文要点如下："));
            }
            _ => {}
        }
    }
}

/// The user question of a bench case.
fn question(case: &str) -> String {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(repo().join("data/bench_cases").join(case)).unwrap()).unwrap();
    let messages = value["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_string()
}

#[test]
fn chat_runs_each_bench_case_to_a_final_answer_through_the_real_skills() {
    let ws = workspace();
    let expectations: [(&str, &[&str], &str); 6] = [
        ("case_file_read.json", &["file_reader"], "1. Agent 系统通常由模型、工具、记忆和执行循环组成。"),
        ("case_calculator.json", &["calculator"], "1. 3.14 * 5 - 2.5 = 13.2"),
        ("case_file_search.json", &["local_file_search"], "matches for 'Agent'"),
        ("case_multi_tool.json", &["file_reader", "calculator", "local_file_search"], "2. 3.14 * 5 = 15.7"),
        ("case_direct_answer.json", &["file_reader", "local_file_search"], "三条中文要点如下："),
        ("case_table_analyzer.json", &["table_analyzer"], "data/sample.csv: 12 rows, 5 columns"),
    ];
    for (case, tools, answer_part) in expectations {
        let q = question(case);
        let out = b4(&["chat", "--model_name", "mock", "--json", "--workspace", ws.path().to_str().unwrap(), &q]);
        assert!(out.status.success(), "{case}: {}", text(&out.stderr));
        let events: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        // Parallel calls finish in any order: compare the names called, not their finishing order.
        let mut called: Vec<&str> = events
            .iter()
            .filter(|e| e["event"] == "tool_finished")
            .map(|e| {
                assert_eq!(e["result"]["status"], "success", "{case}: {e}");
                e["call"]["name"].as_str().unwrap()
            })
            .collect();
        called.sort_unstable();
        let mut expected = tools.to_vec();
        expected.sort_unstable();
        assert_eq!(called, expected, "{case}");
        let answer = events.iter().find(|e| e["event"] == "final_answer").unwrap()["content"].as_str().unwrap();
        assert!(answer.contains(answer_part), "{case}: {answer}");
        assert_eq!(events.last().unwrap(), &serde_json::json!({"event": "finished", "reason": "final_answer"}));
    }
    // Every finished conversation was appended to memory.
    let history = std::fs::read_to_string(ws.path().join("memory/history.md")).unwrap();
    assert_eq!(history.matches("**Question**").count(), 6, "{history}");
}

#[test]
fn tool_command_runs_one_call_and_exits_by_status() {
    let ok = b4(&["tool", "calculator", r#"{"expression":"3.14 * 5 - 2.5"}"#]);
    assert!(ok.status.success());
    let msg: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(msg["status"], "success");
    let body: Value = serde_json::from_str(msg["content"].as_str().unwrap()).unwrap();
    assert_eq!(body["output"]["result"], serde_json::json!(13.2));

    let escape = b4(&["tool", "file_reader", r#"{"path":"../../etc/passwd"}"#]);
    assert_eq!(escape.status.code(), Some(1));
    let msg: Value = serde_json::from_slice(&escape.stdout).unwrap();
    assert_eq!(msg["status"], "error");
}

#[test]
fn bad_input_is_one_clear_error_line_and_a_nonzero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let bad_json = dir.path().join("bad.json");
    std::fs::write(&bad_json, "[{\"role\":\"user\",\"content\":\"hi\"}, {\"role\":\"robot\"}]").unwrap();
    let not_json = dir.path().join("not.json");
    std::fs::write(&not_json, "{oops").unwrap();
    let outdir = dir.path().join("out");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["decide", "--messages", "nope.json", "--tools_schema", "data/messages/tools_schema_basic.json", "--mode", "mock"],
            "nope.json: cannot read",
        ),
        (
            vec!["decide", "--messages", bad_json.to_str().unwrap(), "--tools_schema", "data/messages/tools_schema_basic.json", "--mode", "mock"],
            "message 1: unknown role \"robot\"",
        ),
        (
            vec!["decide", "--messages", not_json.to_str().unwrap(), "--tools_schema", "data/messages/tools_schema_basic.json", "--mode", "mock"],
            "not.json: not valid JSON",
        ),
        (
            vec!["decide", "--messages", "data/messages/messages_no_tool.json", "--tools_schema", not_json.to_str().unwrap(), "--mode", "mock"],
            "not.json: not valid JSON",
        ),
        (vec!["chat", "--model_name", "gpt-9", "hi"], "unknown model_name 'gpt-9'. Available: mock, qwen-0.5b, qwen-1.5b, qwen3.5-0.8b, qwen3.5-4b, server-llama-cpp"),
        (vec!["tool", "nope", "{}"], "unknown tool 'nope'"),
        (vec!["tool", "calculator", "[1]"], "arguments: expected a JSON object"),
        (vec!["chat", "--workspace", "/definitely/missing", "--model_name", "mock", "hi"], "workspace /definitely/missing"),
        (vec!["memory", "show", "../Cargo.toml"], "error: "),
    ];
    for (mut args, expected) in cases {
        if args[0] == "decide" {
            args.extend(["--outdir", outdir.to_str().unwrap()]);
        }
        let out = b4(&args);
        let stderr = text(&out.stderr);
        let stdout = text(&out.stdout);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected) || stdout.contains(expected), "{args:?}: {stderr}{stdout}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let error_lines = stderr.lines().filter(|l| l.starts_with("error")).count();
        assert!(error_lines <= 1, "{args:?}: {stderr}");
    }
}

#[test]
fn a_corrupt_pinned_model_is_refused_before_loading_and_listed_as_corrupt() {
    use sha2::{Digest, Sha256};
    use std::io::{Seek, SeekFrom, Write};

    let asset = b4_agent::brain::fetch::find_asset(common::DEFAULT_ASSET).unwrap();
    let models = tempfile::tempdir().unwrap();
    let path = models.path().join(asset.file);
    // The pinned size with other bytes (a GGUF header, a few weights): a sparse file, so it
    // costs no disk. Before the check, such a file loaded and failed later as a parse error.
    let mut file = std::fs::File::create(&path).unwrap();
    file.set_len(asset.size).unwrap();
    file.write_all(b"GGUF").unwrap();
    file.seek(SeekFrom::Start(asset.size / 2)).unwrap();
    file.write_all(&[0xff; 64]).unwrap();
    drop(file);
    let mut hasher = Sha256::new();
    std::io::copy(&mut std::fs::File::open(&path).unwrap(), &mut hasher).unwrap();
    let actual: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let fix = format!("b4 models fetch {}", asset.name);
    let refusal = format!(
        "error: model file {} is corrupt: sha256 {actual}, expected {}; run `{fix}` to replace it",
        path.display(),
        asset.sha256
    );

    // A decision: one error line with both hashes and the fix; no decision was attempted.
    let outdir = models.path().join("out");
    let decide = [
        "decide",
        "--messages",
        "data/messages/messages_no_tool.json",
        "--tools_schema",
        "data/messages/tools_schema_basic.json",
        "--mode",
        "prompt_json",
        "--outdir",
        outdir.to_str().unwrap(),
    ];
    let out = b4_with_models(models.path(), &decide);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("error")).collect::<Vec<_>>(), vec![refusal.as_str()]);
    assert!(!outdir.join("ai_message.json").exists());
    // The hash is stamped beside the file, so what follows does not hash it again.
    let stamp = std::fs::read_to_string(models.path().join(format!("{}.sha256", asset.file))).unwrap();
    assert_eq!(stamp.lines().next(), Some(format!("{actual}  {}", asset.file).as_str()));

    // The app's start (chat, TUI) stops on it the same way.
    let out = b4_with_models(models.path(), &["chat", "hi"]);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().filter(|l| l.starts_with("error")).collect::<Vec<_>>(), vec![refusal.as_str()]);

    let out = b4_with_models(models.path(), &["models", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let corrupt = format!(
        "corrupt  {:>7.1} MB  {}  (sha256 {actual}, expected {}; {fix})",
        asset.size as f64 / 1e6,
        path.display(),
        asset.sha256
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        vec![
            format!("models folder: {}", models.path().display()),
            format!("{:<12} {corrupt}", "default"),
            format!("{:<12} mock brain (no model file)", "mock"),
            format!("{:<12} {corrupt}", "qwen-0.5b"),
            format!(
                "{:<12} missing  {}  (b4 models fetch qwen2.5-coder-1.5b)",
                "qwen-1.5b",
                models.path().join("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").display()
            ),
            format!(
                "{:<12} missing  {}  (no download: put your GGUF file or Hugging Face folder there)",
                "qwen3.5-0.8b",
                models.path().join("Qwen3.5-0.8B-Q4_K_M.gguf").display()
            ),
            format!(
                "{:<12} missing  {}/models/Qwen3.5-4B  (no download: put your GGUF file or Hugging Face folder there)",
                "qwen3.5-4b",
                std::env::var("HOME").unwrap()
            ),
            format!("{:<12} served    qwen2.5-coder-0.5b at http://127.0.0.1:8080/v1", "server-llama-cpp"),
        ]
    );
}
