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

/// `b4 chat --json ARGS`: the process output, its stdout and the events it printed.
fn chat_json(args: &[&str]) -> (std::process::Output, String, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_b4")).args(["chat", "--json"]).args(args).current_dir(repo()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let events = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    (out, stdout, events)
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
    // The issue asks for the six both ways: measured 12/12 (Intel Xeon, 2026-12-07, since
    // `redo_list_echo`: builtin copied the tool list in two of them); one below leaves room
    // for another CPU's float order.
    assert!(correct >= 11, "correct {correct}/12");
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
    // The shipped profile decides after results by the next-step check alone, in a prompt
    // of its own; the conversation's own decision after results is what extends the prompt.
    let shipped = std::fs::read_to_string(repo().join("configs/model.yaml")).unwrap();
    assert!(shipped.contains("next_step_check: true"));
    let config = ws.path().join("model.yaml");
    std::fs::write(&config, shipped.replace("next_step_check: true", "next_step_check: false")).unwrap();
    let (out, stdout, events) = chat_json(&[
        "--model_config",
        config.to_str().unwrap(),
        "--tool_calling",
        "builtin",
        "--workspace",
        ws.path().to_str().unwrap(),
        "计算 3.14 * 5 - 2.5",
    ]);
    let decided: Vec<&Value> = events.iter().filter(|e| e["event"] == "decided").collect();
    let tools: Vec<&Value> = events.iter().filter(|e| e["event"] == "tool_finished").collect();
    assert!(!tools.is_empty(), "the model called no tool:\n{stdout}");
    assert_eq!(tools[0]["call"]["name"], "calculator", "{stdout}");
    assert_eq!(tools[0]["result"]["status"], "success", "{stdout}");
    assert!(decided.len() >= 2, "{stdout}");
    // The second decision extends the first conversation: its prompt prefix is reused and
    // only the new tokens are prefilled.
    let first = &decided[0]["report"]["stats"];
    let second = &decided[1]["report"]["stats"];
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

/// What one `b4 chat` run on a bench case showed.
struct ChatOutcome {
    case: String,
    way: &'static str,
    /// Every decision parsed (no brain error, no parse failure).
    parsed: bool,
    /// The first decision called the expected tools (or none for a direct question).
    right_tools: bool,
    answered: bool,
    decisions: usize,
}

fn chat_case(case: &Value, way: &'static str) -> ChatOutcome {
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data"] {
        copy_dir(&repo().join(sub), &ws.path().join(sub));
    }
    let question = case["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    let (out, _, events) =
        chat_json(&["--no_memory", "--tool_calling", way, "--workspace", ws.path().to_str().unwrap(), &question]);
    let decided: Vec<&Value> = events.iter().filter(|e| e["event"] == "decided").collect();
    let errors: Vec<&Value> = events.iter().filter(|e| e["event"] == "error").collect();
    let reason = events.iter().rev().find(|e| e["event"] == "finished").map(|e| e["reason"].clone());
    let expected: Vec<&str> = case["expected"]["tool_calls"]
        .as_array()
        .map(|calls| calls.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    let first_calls: Vec<&str> = decided
        .first()
        .and_then(|d| d["ai"]["tool_calls"].as_array())
        .map(|calls| calls.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    let right_tools = if expected.is_empty() {
        !decided.is_empty() && first_calls.is_empty()
    } else {
        expected.iter().all(|name| first_calls.contains(name))
    };
    if !errors.is_empty() {
        println!("{} {way}: errors {errors:?}", case["id"]);
    }
    ChatOutcome {
        case: case["id"].as_str().unwrap().to_string(),
        way,
        parsed: !decided.is_empty() && errors.is_empty() && reason.as_ref().is_some_and(|r| r != "brain_error"),
        right_tools,
        answered: out.status.success() && reason.is_some_and(|r| r == "final_answer"),
        decisions: decided.len(),
    }
}

#[test]
fn chat_answers_the_six_bench_cases_end_to_end_both_ways() {
    model_present();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo().join("data/bench_cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 6);
    let mut outcomes = Vec::new();
    for path in &cases {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for way in ["prompt_json", "builtin"] {
            let outcome = chat_case(&case, way);
            println!(
                "{:<22} {:<12} parsed {:<5} right tools {:<5} answered {:<5} decisions {}",
                outcome.case, outcome.way, outcome.parsed, outcome.right_tools, outcome.answered, outcome.decisions
            );
            outcomes.push(outcome);
        }
    }
    let count = |f: fn(&ChatOutcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    let (parsed, right, answered) = (count(|o| o.parsed), count(|o| o.parsed && o.right_tools), count(|o| o.answered));
    println!("parsed {parsed}/12, right tools {right}/12, answered {answered}/12");
    // Every decision of every chat parses: that is the parser's and the prompts' job.
    assert_eq!(parsed, 12, "a chat had a decision that did not parse");
    // "In most cases" the expected tools are called, and the loop reaches a final answer.
    // Measured on the default (constrained) profile: right tools 9/12, answered 12/12 (free
    // decoding: 7/12 and 10/12); one below each leaves room for another CPU's float order.
    assert!(right >= 8, "right tools in {right}/12 chats");
    assert!(answered >= 11, "final answers in {answered}/12 chats");
}

/// `b4 decide` on the seeds' messages_with_tool with the default profile, in one way.
fn decide_with_tool(way: Option<&str>) -> (Value, Value) {
    decide_with_tool_in(way, &[], &[])
}

/// [`decide_with_tool`] with more arguments and environment variables.
fn decide_with_tool_in(way: Option<&str>, more: &[&str], env: &[(&str, &std::path::Path)]) -> (Value, Value) {
    let out_dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "decide",
        "--mode",
        "prompt_json",
        "--messages",
        "data/messages/messages_with_tool.json",
        "--tools_schema",
        "data/messages/tools_schema_basic.json",
        "--outdir",
        out_dir.path().to_str().unwrap(),
    ];
    if let Some(way) = way {
        args.extend(["--tool_calling", way]);
    }
    args.extend(more);
    let mut command = Command::new(env!("CARGO_BIN_EXE_b4"));
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.args(&args).current_dir(repo()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join(name)).unwrap()).unwrap()
    };
    (read("ai_message.json"), read("raw_model_output.json"))
}

fn calls_file_reader_on_the_intro(ai: &Value) -> bool {
    ai["tool_calls"].as_array().is_some_and(|calls| {
        calls.iter().any(|c| c["name"] == "file_reader" && c["args"]["path"] == "docs/agent_intro.txt")
    })
}

#[test]
fn decide_with_the_default_profile_calls_file_reader_both_ways() {
    model_present();
    let (ai, raw) = decide_with_tool(None);
    assert_eq!(raw["tool_calling"], "prompt_json", "{raw}");
    assert!(calls_file_reader_on_the_intro(&ai), "{ai}\nraw: {}", raw["raw_text"]);
    assert_eq!(ai["content"], "", "{ai}");

    let (ai, raw) = decide_with_tool(Some("builtin"));
    assert_eq!(raw["tool_calling"], "builtin", "{raw}");
    assert!(calls_file_reader_on_the_intro(&ai), "{ai}\nraw: {}", raw["raw_text"]);
    // Parsed from the model's own format (`<tool_call>` blocks, or its habit of a fenced
    // `{"name", "arguments"}`), not from the prompt_json envelope.
    let text = raw["raw_text"].as_str().unwrap_or_default();
    assert!(!text.contains("\"tool_calls\"") && text.contains("\"arguments\""), "raw: {text}");
    assert!(["hermes", "fenced_json", "strict_json", "json_in_text"].contains(&raw["format"].as_str().unwrap_or_default()), "{raw}");
}

/// A conversation far over the profile's `max_input_tokens`: the oldest turns are left out
/// with a note, and the current question is still decided (instead of "prompt too long").
#[test]
fn a_conversation_over_the_budget_is_trimmed_with_a_note_and_decided() {
    model_present();
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![serde_json::json!({"role": "system", "content": "记住：用户叫小王。"})];
    for i in 0..4 {
        let id = format!("call_{:03}", i + 1);
        let body = format!("第{i}部分：Agent 系统通常由模型、工具、记忆和执行循环组成。").repeat(25);
        messages.push(serde_json::json!({"role": "user", "content": format!("读取 docs/part{i}.txt")}));
        messages.push(serde_json::json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "name": "file_reader", "args": {"path": format!("docs/part{i}.txt")}}]}));
        messages.push(serde_json::json!({"role": "tool", "tool_call_id": id, "name": "file_reader", "status": "success", "content": serde_json::json!({"status": "success", "output": {"content": body}}).to_string()}));
        messages.push(serde_json::json!({"role": "assistant", "content": format!("第{i}部分讲的是 Agent 系统的组成。"), "tool_calls": []}));
    }
    messages.push(serde_json::json!({"role": "user", "content": "计算 6 * 7"}));
    let messages_path = dir.path().join("long.json");
    std::fs::write(&messages_path, serde_json::to_string(&messages).unwrap()).unwrap();
    let config = dir.path().join("model.yaml");
    std::fs::write(
        &config,
        "model:\n  name: small\n  backend: candle\n  model_name_or_path: qwen2.5-coder-0.5b-instruct-q4_k_m.gguf\n  fetch: qwen2.5-coder-0.5b\n  max_new_tokens: 256\n  max_input_tokens: 1500\n  decoding: constrained\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_b4"))
        .args(["decide", "--model_config", config.to_str().unwrap(), "--mode", "prompt_json"])
        .args(["--messages", messages_path.to_str().unwrap(), "--tools_schema", "data/messages/tools_schema_basic.json"])
        .args(["--outdir", out_dir.to_str().unwrap()])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |name: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(out_dir.join(name)).unwrap()).unwrap() };
    let (ai, raw) = (read("ai_message.json"), read("raw_model_output.json"));
    let warnings = raw["warnings"].to_string();
    assert!(warnings.contains("context: left out the") && warnings.contains("oldest turn(s)"), "{warnings}");
    assert!(raw["stats"]["prompt_tokens"].as_u64().unwrap() <= 1500, "{}", raw["stats"]);
    assert!(ai["tool_calls"].to_string().contains("calculator"), "{ai}");
}

/// The system prompt's KV cache outlives the process: a second `b4 decide` reads it from
/// the prompt cache on disk instead of prefilling it, and decides exactly as the first; a
/// damaged file is refused with a warning and replaced; `--no-prompt-cache` touches
/// nothing.
#[test]
fn a_second_process_reads_the_system_prompt_from_the_prompt_cache() {
    model_present();
    let dir = tempfile::tempdir().unwrap();
    let env = [("B4_PROMPT_CACHE_DIR", dir.path())];
    let files = || -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir.path()).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        files.sort();
        files
    };
    let stats = |raw: &Value| (raw["stats"]["prompt_cache_tokens"].as_u64().unwrap(), raw["stats"]["reused_tokens"].as_u64().unwrap(), raw["stats"]["prompt_tokens"].as_u64().unwrap());

    let (first_ai, first) = decide_with_tool_in(None, &[], &env);
    assert_eq!(stats(&first).0, 0, "{}", first["stats"]);
    let saved = files();
    assert_eq!(saved.len(), 1, "one file for the system prompt: {saved:?}");

    let (ai, second) = decide_with_tool_in(None, &[], &env);
    let (from_disk, reused, prompt) = stats(&second);
    // Read from disk by the first pass (with name_calibration, the probe of the prior over
    // names), then reused in memory by the decision: at most what it reused.
    assert!(from_disk > prompt / 2 && from_disk <= reused, "{}", second["stats"]);
    assert_eq!(ai, first_ai);
    assert_eq!(second["raw_text"], first["raw_text"]);
    assert_eq!(second["warnings"], first["warnings"]);

    // A damaged file: one warning, a fresh prefill, the same decision, a good file again.
    let mut bytes = std::fs::read(&saved[0]).unwrap();
    let at = bytes.len() / 3;
    bytes[at] ^= 1;
    std::fs::write(&saved[0], &bytes).unwrap();
    let (ai, third) = decide_with_tool_in(None, &[], &env);
    assert_eq!(stats(&third).0, 0, "{}", third["stats"]);
    assert_eq!(ai, first_ai);
    let warnings = third["warnings"].to_string();
    assert!(warnings.contains("ignored and removed: checksum mismatch"), "{warnings}");
    let (_, fourth) = decide_with_tool_in(None, &[], &env);
    assert_eq!(stats(&fourth).0, stats(&second).0, "{}", fourth["stats"]);

    // Off: neither read nor written.
    let before: Vec<_> = files().iter().map(|f| std::fs::metadata(f).unwrap().modified().unwrap()).collect();
    let (ai, off) = decide_with_tool_in(Some("builtin"), &["--no-prompt-cache"], &env);
    assert_eq!(stats(&off).0, 0, "{}", off["stats"]);
    assert!(ai["tool_calls"].is_array());
    let after: Vec<_> = files().iter().map(|f| std::fs::metadata(f).unwrap().modified().unwrap()).collect();
    assert_eq!(before, after, "--no-prompt-cache wrote or touched a file");
}
