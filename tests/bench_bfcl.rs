//! `b4 bench --bfcl` on Berkeley Function Calling Leaderboard-format fixtures (JSON lines,
//! `"type": "dict"` and Python type names, ground truth with accepted values), run on
//! the mock brain.
//!
//! What the mock does with each question (it calls the tools its cues name and ignores
//! the offered tools): simple_0 correct; simple_1 wrong ("find" sends it to
//! local_file_search); simple_2 wrong (it adds max_chars, which that file_reader lacks);
//! multiple_0 and multiple_1 correct; parallel_0 correct (two file_reader calls, answers
//! listed in the other order); parallel_multiple_0 correct; both irrelevance questions
//! wrong (the mock always calls something).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    repo().join("tests/fixtures").join(name).display().to_string()
}

fn bench(dir: &Path, extra: &[&str]) -> Value {
    let config = repo().join("configs/model.yaml").display().to_string();
    let mut args = vec!["bench".to_string(), "--model_config".into(), config, "--mode".into(), "mock".into(), "--outdir".into(), "out".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = Command::new(env!("CARGO_BIN_EXE_b4")).current_dir(dir).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap()).unwrap()
}

#[test]
fn bfcl_questions_and_answers_are_scored_per_category() {
    let dir = tempfile::tempdir().unwrap();
    let (questions, answers) = (fixture("bfcl/questions.json"), fixture("bfcl/answers.json"));
    let report = bench(dir.path(), &["--bfcl", &questions, "--bfcl-answers", &answers]);

    let setting = &report["settings"][0];
    let overall = &setting["overall"];
    assert_eq!((&overall["decisions"], &overall["valid"], &overall["scored"], &overall["correct"]), (&json!(9), &json!(9), &json!(9), &json!(5)));
    let by_category: Vec<(String, u64, u64)> = setting["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["category"].as_str().unwrap().to_string(), c["stats"]["correct"].as_u64().unwrap(), c["stats"]["scored"].as_u64().unwrap()))
        .collect();
    let want = [("simple", 1, 3), ("multiple", 2, 2), ("parallel", 1, 1), ("parallel_multiple", 1, 1), ("irrelevance", 0, 2)];
    assert_eq!(by_category, want.map(|(c, k, n)| (c.to_string(), k, n)).to_vec());

    let reasons: Vec<(String, Value)> =
        report["records"].as_array().unwrap().iter().map(|r| (r["case"].as_str().unwrap().to_string(), r["reason"].clone())).collect();
    let want = [
        ("simple_0", Value::Null),
        ("simple_1", json!("expected calls to [math.factorial], got [local_file_search]")),
        ("simple_2", json!("file_reader: unknown param 'max_chars'")),
        ("multiple_0", Value::Null),
        ("multiple_1", Value::Null),
        ("parallel_0", Value::Null),
        ("parallel_multiple_0", Value::Null),
        ("irrelevance_0", json!("expected no tool call, got 2: [file_reader, local_file_search]")),
        ("irrelevance_1", json!("expected no tool call, got 2: [file_reader, local_file_search]")),
    ];
    assert_eq!(reasons, want.map(|(c, r)| (c.to_string(), r)).to_vec());

    let ai: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/mock-prompt_json-free/parallel_0/ai_message.json")).unwrap()).unwrap();
    let paths: Vec<&Value> = ai["tool_calls"].as_array().unwrap().iter().map(|c| &c["args"]["path"]).collect();
    assert_eq!(paths, [&json!("notes/a.txt"), &json!("notes/b.txt")]);
}

#[test]
fn without_answers_only_irrelevance_is_scored_and_bfcl_mixes_with_case_files() {
    let dir = tempfile::tempdir().unwrap();
    let questions = fixture("bfcl/questions.json");
    let report = bench(dir.path(), &["--bfcl", &questions]);
    let overall = &report["settings"][0]["overall"];
    assert_eq!((&overall["decisions"], &overall["scored"], &overall["correct"]), (&json!(9), &json!(2), &json!(0)));

    let dir = tempfile::tempdir().unwrap();
    let (cases, tools) = (fixture("bench/cases"), fixture("bench/tools_schema.json"));
    let report = bench(dir.path(), &["--cases_dir", &cases, "--tools_schema", &tools, "--bfcl", &questions, "--ids", "simple_0,calc"]);
    let ids: Vec<&Value> = report["cases"].as_array().unwrap().iter().map(|c| &c["case"]).collect();
    assert_eq!(ids, [&json!("calc"), &json!("simple_0")]);
}
