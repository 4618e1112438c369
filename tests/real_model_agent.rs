//! The whole agent on the real default model (Qwen2.5-Coder-0.5B, fetched by
//! scripts/test.sh before the tests): the six bench cases through `b4 bench` in both ways
//! of passing tools, and `b4 chat` end to end with prefix reuse between decisions.
//!
//! A small model does not get every case right; these tests hold it to what it does
//! reliably (see docs/bench/ for the measured figures) and fail when parsing, tool
//! passing or the loop break.

mod common;
use common::copy_dir;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn model_present() {
    let out = Command::new(env!("CARGO_BIN_EXE_b4")).args(["models", "list"]).current_dir(repo()).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    let line = list.lines().find(|l| l.starts_with("qwen-0.5b")).unwrap_or_default();
    assert!(line.contains("present"), "the default model is missing: run `b4 models fetch` (scripts/test.sh does)\n{list}");
}


#[test]
fn six_cases_both_ways_parse_and_mostly_call_the_right_tools() {
    model_present();
    let out_dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_b4"))
        .args([
            "bench",
            "--model_config",
            "configs/model.yaml",
            "--cases_dir",
            "data/bench_cases",
            "--tools_schema",
            "data/messages/tools_schema_basic.json",
            "--mode",
            "prompt_json",
            "--tool_calling",
            "both",
            "--model_name",
            "qwen-0.5b",
            "--outdir",
            out_dir.path().to_str().unwrap(),
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    println!("{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("report.json")).unwrap()).unwrap();
    let records = report["records"].as_array().expect("report.json has records");
    assert_eq!(records.len(), 12, "6 cases x 2 ways");
    let valid = records.iter().filter(|r| r["valid"] == true).count();
    let correct = records.iter().filter(|r| r["correct"] == true).count();
    // Every output the model gives here parses (fenced envelopes, fenced native calls).
    assert!(valid >= 11, "valid {valid}/12");
    // "In most cases" the expected tools are called with accepted arguments.
    assert!(correct >= 7, "correct {correct}/12");
    let md = std::fs::read_to_string(out_dir.path().join("report.md")).unwrap();
    assert!(md.contains("prompt_json") && md.contains("builtin") && md.contains("xychart-beta"));
}

#[test]
fn chat_runs_the_loop_on_the_real_model_and_reuses_the_prompt_prefix() {
    model_present();
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data", "memory"] {
        copy_dir(&repo().join(sub), &ws.path().join(sub));
    }
    let _ = std::fs::remove_file(ws.path().join("memory/history.md"));
    let out = Command::new(env!("CARGO_BIN_EXE_b4"))
        .args(["chat", "--json", "--tool_calling", "builtin", "--workspace", ws.path().to_str().unwrap(), "计算 3.14 * 5 - 2.5"])
        .current_dir(repo())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let decided: Vec<&Value> = events.iter().filter(|e| e["event"] == "decided").collect();
    let tools: Vec<&Value> = events.iter().filter(|e| e["event"] == "tool_finished").collect();
    assert!(!tools.is_empty(), "the model called no tool:\n{stdout}");
    assert_eq!(tools[0]["call"]["name"], "calculator", "{stdout}");
    assert_eq!(tools[0]["result"]["status"], "success", "{stdout}");
    assert!(decided.len() >= 2, "{stdout}");
    // The second decision extends the first conversation: its prompt prefix is reused and
    // only the new tokens are prefilled.
    let first = &decided[0]["stats"];
    let second = &decided[1]["stats"];
    let first_prompt = first["prompt_tokens"].as_u64().unwrap();
    let reused = second["reused_tokens"].as_u64().unwrap();
    let prompt = second["prompt_tokens"].as_u64().unwrap();
    assert!(reused >= first_prompt - 2, "reused {reused} of a first prompt of {first_prompt}");
    assert!(prompt - reused < prompt / 3, "prefilled {} of {prompt}", prompt - reused);
    let finished = events.last().unwrap();
    assert_eq!(finished["event"], "finished", "{stdout}");
    assert!(out.status.success(), "no final answer:\n{stdout}");
    let answer = events.iter().find(|e| e["event"] == "final_answer").unwrap()["content"].as_str().unwrap().to_string();
    assert!(answer.contains("13.2"), "{answer}");
}
