//! The agent on Qwen3.5: `b4 decide` runs the whole decision path (the model's own chat
//! template with its XML tool block, constrained decoding, parsing) on the tiny
//! random-weight fixtures, GGUF and Hugging Face folder, both ways of passing tools; and a
//! two-turn `b4 chat` prefills only the second turn's new tokens. The fixtures' answers
//! are noise (random weights): what is checked is what runs, not what it says.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

const CONFIG: &str = "tests/fixtures/qwen35_model.yaml";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn b4(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b4"))
        .args(args)
        .env("B4_NO_PROMPT_CACHE", "1")
        .current_dir(repo())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn decide_runs_the_whole_path_on_the_gguf_and_the_folder_both_ways() {
    for profile in ["qwen3.5-tiny", "qwen3.5-tiny-hf"] {
        for way in ["prompt_json", "builtin"] {
            let out = tempfile::tempdir().unwrap();
            let args = [
                "decide",
                "--model_config",
                CONFIG,
                "--model_name",
                profile,
                "--tool_calling",
                way,
                "--decoding",
                "constrained",
                "--messages",
                "data/messages/messages_with_tool.json",
                "--tools_schema",
                "data/messages/tools_schema_basic.json",
                "--outdir",
                out.path().to_str().unwrap(),
            ];
            let result = b4(&args);
            let stderr = text(&result.stderr);
            assert!(!stderr.contains("panicked"), "{profile} {way}: {stderr}");
            // Random weights may write a decision that does not parse: that is an invalid
            // decision (exit 1, both files written), never a crash or a load failure.
            assert!(matches!(result.status.code(), Some(0 | 1)), "{profile} {way}: {stderr}");
            let raw: Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("raw_model_output.json")).unwrap()).unwrap();
            let prompt = raw["prompt"].as_str().unwrap();
            // The template's thinking switch is off: the thought is closed before the answer.
            assert!(prompt.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"), "{profile} {way}: {prompt}");
            // builtin: the model's own XML tool block; prompt_json: our envelope prompt.
            assert_eq!(prompt.contains("<function=example_function_name>"), way == "builtin", "{profile} {way}");
            assert_eq!(raw["decoding"], "constrained", "{profile} {way}: {raw}");
            assert!(out.path().join("ai_message.json").is_file());
        }
    }
}

#[test]
fn with_thinking_on_the_thought_comes_first_and_stays_out_of_the_answer() {
    let out = tempfile::tempdir().unwrap();
    let result = b4(&[
        "decide",
        "--model_config",
        CONFIG,
        "--model_name",
        "qwen3.5-tiny-thinking",
        "--tool_calling",
        "builtin",
        "--messages",
        "data/messages/messages_with_tool.json",
        "--tools_schema",
        "data/messages/tools_schema_basic.json",
        "--outdir",
        out.path().to_str().unwrap(),
    ]);
    let stderr = text(&result.stderr);
    assert!(matches!(result.status.code(), Some(0 | 1)) && !stderr.contains("panicked"), "{stderr}");
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("raw_model_output.json")).unwrap()).unwrap();
    let (prompt, raw_text) = (raw["prompt"].as_str().unwrap(), raw["raw_text"].as_str().unwrap());
    assert!(prompt.ends_with("<|im_start|>assistant\n<think>\n"), "{prompt}");
    // The grammar lets the thought run, then closes it in time for the answer it holds.
    let (thought, answer) = raw_text.split_once("</think>").unwrap_or_else(|| panic!("no closed thought: {raw_text:?}"));
    assert_eq!(raw["decoding"], "constrained");
    let ai: Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("ai_message.json")).unwrap()).unwrap();
    let content = ai["content"].as_str().unwrap();
    assert!(!content.contains("</think>"), "{content:?}");
    if !thought.trim().is_empty() {
        assert!(!content.contains(thought.trim()), "the thought leaked into content: {content:?}");
    }
    let _ = answer;
}

#[test]
fn the_second_turn_of_a_chat_reuses_the_first_turns_prompt() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "hello").unwrap();
    let out = b4(&[
        "chat",
        "--model_config",
        CONFIG,
        "--no_memory",
        "--workspace",
        workspace.path().to_str().unwrap(),
        "--json",
        "读一下 a.txt",
        "then what is 2+2?",
    ]);
    let stdout = text(&out.stdout);
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let started = events.iter().filter(|e| e["event"] == "started").count();
    assert_eq!(started, 2, "{stdout}");
    // The first decision of each turn: its prompt and the tokens it reused.
    let mut firsts = Vec::new();
    let mut seen_turns = 0;
    for e in &events {
        if e["event"] == "started" {
            seen_turns += 1;
        }
        if e["event"] == "decided" && firsts.len() < seen_turns {
            let stats = &e["report"]["stats"];
            firsts.push((stats["prompt_tokens"].as_u64().unwrap(), stats["reused_tokens"].as_u64().unwrap()));
        }
    }
    assert_eq!(firsts.len(), 2, "{stdout}");
    let ((_, reused1), (prompt2, reused2)) = (firsts[0], firsts[1]);
    assert_eq!(reused1, 0, "{stdout}");
    // All of turn 1's prompt but its generation prompt comes back: far more than the
    // system prompt alone, less than the whole new prompt.
    assert!(reused2 > prompt2 / 2 && reused2 < prompt2, "reused {reused2} of {prompt2}");
}
