//! The committed demo inputs, bench cases and workspace files are valid and agree with
//! each other: messages load, expectations are well formed and fair, and every path they
//! mention exists in the repository.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use b4_agent::memory::Memory;
use b4_agent::protocol::{load_messages, messages_from_value, Message, ToolStatus};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The seeds' parameter names of each tool (what expected args may name).
fn tool_params(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "file_reader" => Some(&["path", "max_chars"]),
        "calculator" => Some(&["expression"]),
        "local_file_search" => Some(&["query", "root_dir", "max_results"]),
        "table_analyzer" => Some(&["path", "columns", "group_by"]),
        "format_converter" => Some(&[]),
        _ => None,
    }
}

fn json_files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(prefix) && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_str().unwrap().to_string()
}

/// Workspace-relative paths (`docs/...`, `data/...`) written in a text.
fn paths_in(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || !(c.is_ascii_alphanumeric() || "._-/".contains(c)))
        .map(|t| t.trim_start_matches("./").trim_end_matches('.'))
        .filter(|t| t.starts_with("docs/") || t.starts_with("data/"))
        .map(str::to_string)
        .collect()
}

fn assert_exists(rel: &str, origin: &str) {
    let rel = rel.trim_start_matches("./");
    assert!(repo().join(rel).is_file(), "{origin}: {rel} does not exist in the repository");
}

fn user_question(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })
        .unwrap()
}

#[test]
fn every_demo_messages_file_loads_and_starts_with_a_short_system_message() {
    let files = json_files(&repo().join("data/messages"), "messages_");
    let names: Vec<String> = files.iter().map(|p| stem(p)).collect();
    assert_eq!(
        names,
        vec![
            "messages_multi_tool",
            "messages_no_tool",
            "messages_plan_input",
            "messages_plan_with_results",
            "messages_with_tool"
        ]
    );
    for file in &files {
        let messages = load_messages(file).unwrap_or_else(|e| panic!("{e}"));
        let Some(Message::System { content }) = messages.first() else {
            panic!("{}: does not start with a system message", file.display())
        };
        assert!(content.chars().count() < 200, "{}: system message is not short", file.display());
        assert!(messages.iter().any(|m| matches!(m, Message::User { .. })), "{}: no user message", file.display());
        for message in &messages {
            for path in paths_in(&message.text()) {
                assert_exists(&path, &file.display().to_string());
            }
        }
    }
}

#[test]
fn multi_tool_demo_asks_the_seeds_three_tasks() {
    let messages = load_messages(&repo().join("data/messages/messages_multi_tool.json")).unwrap();
    let question = user_question(&messages);
    for task in ["docs/agent_intro.txt", "3.14 * 5", "Agent"] {
        assert!(question.contains(task), "missing {task:?} in {question:?}");
    }
}

#[test]
fn plan_with_results_answers_every_call_in_order_with_real_file_contents() {
    let file = repo().join("data/messages/messages_plan_with_results.json");
    let messages = load_messages(&file).unwrap();
    let calls = messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant(ai) if !ai.tool_calls.is_empty() => Some(ai.tool_calls.clone()),
            _ => None,
        })
        .expect("an assistant message with tool calls");
    let results: Vec<_> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let call_ids: Vec<(&str, &str)> = calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
    let result_ids: Vec<(&str, &str)> = results.iter().map(|t| (t.tool_call_id.as_str(), t.name.as_str())).collect();
    assert_eq!(call_ids, result_ids);
    assert!(matches!(messages.last(), Some(Message::Tool(_))));

    for result in &results {
        assert_eq!(result.status, ToolStatus::Success);
        let body = result.body().unwrap();
        assert_eq!(body["status"], "success");
        assert!(result.output_text().is_some_and(|t| !t.is_empty()), "{}: no output.content", result.name);
    }

    // The file_reader result is the real file, whole.
    let intro = fs::read_to_string(repo().join("docs/agent_intro.txt")).unwrap();
    let reader = &results[0];
    assert_eq!(reader.output_text().unwrap(), intro);
    let output = &reader.body().unwrap()["output"];
    assert_eq!(output["truncated"], false);
    assert_eq!(output["total_chars"], intro.chars().count());

    // Every result is exactly what the real tool answers today.
    let layer = b4_agent::tools::ToolLayer::new(
        b4_agent::skills::all(),
        b4_agent::skills::Workspace::new(repo()).unwrap(),
        std::time::Duration::from_secs(20),
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for (call, stored) in calls.iter().zip(&results) {
        let fresh = rt.block_on(layer.run(call)).result;
        assert_eq!(&fresh, stored, "{}: stored result differs from the real tool's", call.name);
    }
}

/// Checks one `expected` object, returning the tool names it expects (empty for
/// `no_tool_call`).
fn check_expected(case: &str, expected: &Value, question: &str) -> Vec<String> {
    let obj = expected.as_object().unwrap_or_else(|| panic!("{case}: expected is not an object"));
    if let Some(flag) = obj.get("no_tool_call") {
        assert_eq!(flag, &Value::Bool(true), "{case}: no_tool_call must be true");
        assert_eq!(obj.len(), 1, "{case}: no_tool_call goes alone");
        return Vec::new();
    }
    assert_eq!(obj.keys().collect::<Vec<_>>(), vec!["tool_calls"], "{case}: expected has other keys");
    let calls = obj["tool_calls"].as_array().unwrap_or_else(|| panic!("{case}: tool_calls is not an array"));
    assert!(!calls.is_empty(), "{case}: tool_calls is empty; use no_tool_call");
    let mut names = Vec::new();
    for call in calls {
        let name = call["name"].as_str().unwrap_or_else(|| panic!("{case}: a call without a name"));
        let params = tool_params(name).unwrap_or_else(|| panic!("{case}: unknown tool {name}"));
        let args = call["args"].as_object().unwrap_or_else(|| panic!("{case}: {name}: args is not an object"));
        for (key, accepted) in args {
            assert!(params.contains(&key.as_str()), "{case}: {name} has no parameter {key}");
            let accepted = accepted.as_array().unwrap_or_else(|| panic!("{case}: {name}.{key}: not a list"));
            assert!(!accepted.is_empty(), "{case}: {name}.{key}: no accepted values");
            // Fairness: what the user literally wrote is among the accepted values.
            let literal = accepted.iter().filter_map(Value::as_str).any(|v| !v.is_empty() && question.contains(v));
            assert!(literal, "{case}: {name}.{key}: none of {accepted:?} appears in the question");
            if key == "path" || key == "root_dir" {
                for value in accepted.iter().filter_map(Value::as_str).filter(|v| !v.is_empty()) {
                    assert_exists(value, case);
                }
            }
        }
        names.push(name.to_string());
    }
    names
}

#[test]
fn every_bench_case_has_an_id_messages_and_a_well_formed_expectation() {
    let files = json_files(&repo().join("data/bench_cases"), "case_");
    let mut ids = BTreeSet::new();
    let mut expected_tools = Vec::new();
    for file in &files {
        let origin = file.display().to_string();
        let case: Value = serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
        let id = case["id"].as_str().unwrap_or_else(|| panic!("{origin}: no id"));
        assert_eq!(id, stem(file), "{origin}: id differs from the file name");
        let category = case["category"].as_str().unwrap_or_else(|| panic!("{origin}: no category"));
        assert!(
            ["simple", "multiple", "parallel", "parallel_multiple", "irrelevance"].contains(&category),
            "{origin}: category {category}"
        );
        let messages = messages_from_value(&origin, case["messages"].clone()).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(messages.last(), Some(Message::User { .. })), "{origin}: does not end with the question");
        let question = user_question(&messages);
        for path in paths_in(&question) {
            assert_exists(&path, &origin);
        }
        let tools = check_expected(id, &case["expected"], &question);
        assert_eq!(tools.len() > 1, category.starts_with("parallel"), "{origin}: category vs call count");
        assert_eq!(tools.is_empty(), category == "irrelevance", "{origin}: category vs no_tool_call");
        ids.insert(id.to_string());
        expected_tools.push((id.to_string(), question, tools));
    }
    let want: BTreeSet<String> = [
        "case_calculator",
        "case_direct_answer",
        "case_file_read",
        "case_file_search",
        "case_multi_tool",
        "case_table_analyzer",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(ids, want);

    let by_id = |id: &str| expected_tools.iter().find(|(i, _, _)| i == id).unwrap().clone();
    assert_eq!(by_id("case_calculator").1, "计算 3.14 * 5 - 2.5");
    assert_eq!(by_id("case_direct_answer").1, "法国的首都是哪里？");
    assert_eq!(by_id("case_table_analyzer").1, "分析 data/sample.csv");
    assert_eq!(by_id("case_multi_tool").2, vec!["file_reader", "calculator", "local_file_search"]);
}

#[test]
fn sample_csv_has_twelve_rows_five_columns_and_a_quoted_comma() {
    let mut reader = csv::Reader::from_path(repo().join("data/sample.csv")).unwrap();
    let headers: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(headers, vec!["name", "city", "category", "price", "quantity"]);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r.len() == 5));
    assert!(rows.iter().any(|r| r.get(0) == Some("Pen, blue")));
    assert!(rows.iter().any(|r| r.get(1).is_some_and(|c| c.chars().any(|ch| ('\u{4e00}'..='\u{9fff}').contains(&ch)))));
    for row in &rows {
        row.get(3).unwrap().parse::<f64>().unwrap();
        row.get(4).unwrap().parse::<u64>().unwrap();
    }
}

#[test]
fn workspace_docs_are_found_by_an_agent_search() {
    let mut with_agent = Vec::new();
    for entry in fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if fs::read_to_string(&path).is_ok_and(|t| t.to_lowercase().contains("agent")) {
            with_agent.push(stem(&path));
        }
    }
    with_agent.sort();
    assert!(with_agent.contains(&"agent_intro".to_string()));
    assert!(with_agent.contains(&"agent_guide".to_string()));
}

#[test]
fn committed_memory_gives_global_first_and_relevant_notes() {
    let memory = Memory::open(repo().join("memory"));
    let table = memory.context_for("分析 data/sample.csv，给出价格的平均值", 4000).unwrap();
    assert_eq!(table.notes.first().map(String::as_str), Some("global.md"));
    assert!(table.notes.contains(&"user_prefs.md".to_string()), "{:?}", table.notes);
    assert!(table.text.chars().count() <= 4000);
    let capital = memory.context_for("法国的首都是哪里？", 4000).unwrap();
    assert_eq!(capital.notes, vec!["global.md"]);
    let names: Vec<String> = memory.list().unwrap().into_iter().map(|n| n.name).collect();
    assert!(names.starts_with(&["global.md".to_string()]), "{names:?}");
}
