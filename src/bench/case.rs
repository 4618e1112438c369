//! Bench cases: what to ask and, when known, what the right decision is.
//!
//! A case file is either the seeds' bare messages array (scored for validity only) or an
//! object `{id?, category?, description?, messages, tools?, expected?}` where `expected`
//! is `{"tool_calls":[{"name":..,"args":{"param":[accepted values...]}}]}`,
//! `{"no_tool_call": true}`, or `{"final_answer": {"must_contain": [[alternatives...]]}}`
//! (an answer with no call that states those facts; see [`super::answer`]). `tools`, when
//! present, replace the global tools schema for that case.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::answer::FinalAnswer;
use super::BenchError;
use crate::protocol::{json_kind, messages_from_value, Message};
use crate::tools::spec::ToolSpec;

/// The category of a case that names none.
pub const UNCATEGORIZED: &str = "uncategorized";

#[derive(Clone, Debug, PartialEq)]
pub struct BenchCase {
    pub id: String,
    /// `simple`, `multiple`, `parallel`, `parallel_multiple`, `irrelevance`, or the file's own.
    pub category: String,
    pub messages: Vec<Message>,
    /// Tools for this case only (OpenAI function format); `None` uses the global schema.
    pub tools: Option<Vec<Value>>,
    /// `None`: the case is scored for validity only.
    pub expected: Option<Expected>,
    /// Where it came from: a file, or `file:line` for a BFCL question.
    pub source: String,
}

/// The right decision for a case.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// A final answer, no call (BFCL's irrelevance category).
    NoToolCall,
    /// Exactly these calls, in any order.
    ToolCalls(Vec<ExpectedCall>),
    /// No call, and an answer that states these facts (after tool results that hold them).
    FinalAnswer(FinalAnswer),
}

/// One expected call: for each checked param, the accepted values. A param of the tool
/// that is not listed here is not checked; `""` among the accepted values means the param
/// may be left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub name: String,
    #[serde(default)]
    pub args: BTreeMap<String, Vec<Value>>,
}

impl Expected {
    /// Reads `{"tool_calls":[...]}`, `{"no_tool_call": true}` or `{"final_answer": {...}}`.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let Value::Object(obj) = value else {
            return Err(format!("expected: must be an object, found {}", json_kind(value)));
        };
        let given: Vec<&str> = EXPECTED_KEYS.iter().copied().filter(|k| obj.contains_key(*k)).collect();
        if given.len() > 1 {
            return Err(format!("expected: give one of {}, not {}", EXPECTED_KEYS.join(", "), given.join(" and ")));
        }
        if let Some(flag) = obj.get("no_tool_call") {
            return match flag {
                Value::Bool(true) => Ok(Expected::NoToolCall),
                other => Err(format!("expected.no_tool_call: must be true, found {other}")),
            };
        }
        if let Some(answer) = obj.get("final_answer") {
            return FinalAnswer::from_value(answer).map(Expected::FinalAnswer).map_err(|e| format!("expected.{e}"));
        }
        let Some(calls) = obj.get("tool_calls") else {
            return Err("expected: needs \"tool_calls\", \"no_tool_call\" or \"final_answer\"".into());
        };
        let Value::Array(calls) = calls else {
            return Err(format!("expected.tool_calls: must be an array, found {}", json_kind(calls)));
        };
        if calls.is_empty() {
            return Err("expected.tool_calls: is empty (use {\"no_tool_call\": true} for a final answer)".into());
        }
        calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                serde_json::from_value(call.clone()).map_err(|e| format!("expected.tool_calls[{i}]: {e} (args: {{\"param\": [accepted values]}})"))
            })
            .collect::<Result<Vec<ExpectedCall>, String>>()
            .map(Expected::ToolCalls)
    }

    pub fn to_json(&self) -> Value {
        match self {
            Expected::NoToolCall => json!({"no_tool_call": true}),
            Expected::ToolCalls(calls) => json!({"tool_calls": calls}),
            Expected::FinalAnswer(answer) => json!({"final_answer": answer.to_json()}),
        }
    }
}

const EXPECTED_KEYS: [&str; 3] = ["tool_calls", "no_tool_call", "final_answer"];

const CASE_KEYS: [&str; 6] = ["id", "category", "description", "messages", "tools", "expected"];

/// Reads one case from a parsed file. `default_id` is used when the object has no `id`.
pub fn case_from_value(origin: &str, default_id: &str, value: Value) -> Result<BenchCase, String> {
    let (obj, messages) = match value {
        Value::Array(_) => (None, value),
        Value::Object(mut obj) => {
            if let Some(key) = obj.keys().find(|k| !CASE_KEYS.contains(&k.as_str())) {
                return Err(format!("unknown key {key:?} (known: {})", CASE_KEYS.join(", ")));
            }
            let messages = obj.remove("messages").ok_or("missing \"messages\"")?;
            (Some(obj), messages)
        }
        other => return Err(format!("expected a messages array or a case object, found {}", json_kind(&other))),
    };
    let messages = messages_from_value("messages", messages).map_err(|e| e.to_string())?;
    if messages.is_empty() {
        return Err("messages: is empty".into());
    }
    let mut case = BenchCase {
        id: default_id.to_string(),
        category: UNCATEGORIZED.to_string(),
        messages,
        tools: None,
        expected: None,
        source: origin.to_string(),
    };
    let Some(obj) = obj else {
        return Ok(case);
    };
    if let Some(id) = obj.get("id") {
        case.id = string_field(id, "id")?;
        if case.id.trim().is_empty() {
            return Err("id: is empty".into());
        }
    }
    if let Some(category) = obj.get("category") {
        case.category = string_field(category, "category")?;
    }
    if let Some(tools) = obj.get("tools") {
        case.tools = Some(check_tools(tools)?);
    }
    if let Some(expected) = obj.get("expected") {
        case.expected = Some(Expected::from_value(expected)?);
    }
    Ok(case)
}

fn string_field(value: &Value, field: &str) -> Result<String, String> {
    value.as_str().map(str::to_string).ok_or_else(|| format!("{field}: must be a string, found {}", json_kind(value)))
}

/// A tools list: an array of tools (`{"type":"function","function":{"name":..,...}}`) that
/// read as tool specs.
pub fn check_tools(value: &Value) -> Result<Vec<Value>, String> {
    let Value::Array(tools) = value else {
        return Err(format!("tools: must be an array, found {}", json_kind(value)));
    };
    ToolSpec::parse_all(tools).map_err(|e| format!("tools: {e}"))?;
    Ok(tools.clone())
}

/// Every `*.json` file of `dir`, in file-name order.
pub fn load_dir(dir: &Path) -> Result<Vec<BenchCase>, BenchError> {
    let read_err = |source| BenchError::Read { file: dir.display().to_string(), source };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")))
        .collect();
    files.sort();
    let cases = files.iter().map(|f| load_file(f)).collect::<Result<Vec<_>, _>>()?;
    check_unique(&cases)?;
    Ok(cases)
}

/// One case file.
pub fn load_file(path: &Path) -> Result<BenchCase, BenchError> {
    let file = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::BENCH_CASE)?;
    let value: Value = serde_json::from_str(&text).map_err(|source| BenchError::Json { file: file.clone(), source })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    case_from_value(&file, &stem, value).map_err(|reason| BenchError::Case { file, reason })
}

/// Fails on the first id used by two cases.
pub fn check_unique(cases: &[BenchCase]) -> Result<(), BenchError> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for case in cases {
        if let Some(first) = seen.insert(&case.id, &case.source) {
            return Err(BenchError::DuplicateId { id: case.id.clone(), first: first.to_string(), second: case.source.clone() });
        }
    }
    Ok(())
}

/// The order the offered functions are listed in. A small model favours the first of
/// several plausible functions (on the dev split's `multiple` cases, listed in reverse, the
/// 0.5B's prompt_json accuracy fell from 71% to 40%), so a set whose writers tended to put
/// the right function first reads better than the model is; running it in another order
/// says how much of a figure is the order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum FunctionOrder {
    /// As the case (or the tools schema) lists them.
    #[default]
    Given,
    /// Last first.
    Reversed,
    /// The first moved to the end.
    Rotated,
}

impl FunctionOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            FunctionOrder::Given => "given",
            FunctionOrder::Reversed => "reversed",
            FunctionOrder::Rotated => "rotated",
        }
    }

    pub fn apply(self, tools: &mut [Value]) {
        match self {
            FunctionOrder::Given => {}
            FunctionOrder::Reversed => tools.reverse(),
            FunctionOrder::Rotated => tools.rotate_left(1.min(tools.len())),
        }
    }
}

/// The cases named by `ids` (all when empty), in their own order, then the first `limit`.
pub fn select(cases: Vec<BenchCase>, ids: &[String], limit: Option<usize>) -> Result<Vec<BenchCase>, BenchError> {
    if let Some(missing) = ids.iter().find(|id| !cases.iter().any(|c| &c.id == *id)) {
        let mut available: Vec<&str> = cases.iter().map(|c| c.id.as_str()).take(20).collect();
        if cases.len() > 20 {
            available.push("...");
        }
        return Err(BenchError::UnknownId { id: missing.clone(), available: available.join(", ") });
    }
    let mut chosen: Vec<BenchCase> = cases.into_iter().filter(|c| ids.is_empty() || ids.contains(&c.id)).collect();
    if let Some(limit) = limit {
        chosen.truncate(limit);
    }
    if chosen.is_empty() {
        return Err(BenchError::NoCases);
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Value {
        json!([{"role": "user", "content": text}])
    }

    #[test]
    fn the_function_order_reorders_the_offered_tools_only() {
        let tools = || vec![json!("a"), json!("b"), json!("c")];
        let ordered = |order: FunctionOrder| {
            let mut t = tools();
            order.apply(&mut t);
            t
        };
        assert_eq!(ordered(FunctionOrder::Given), tools());
        assert_eq!(ordered(FunctionOrder::Reversed), [json!("c"), json!("b"), json!("a")]);
        assert_eq!(ordered(FunctionOrder::Rotated), [json!("b"), json!("c"), json!("a")]);
        let mut none: Vec<Value> = Vec::new();
        FunctionOrder::Rotated.apply(&mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn a_bare_messages_array_is_a_validity_only_case_named_after_its_file() {
        let case = case_from_value("dir/case_a.json", "case_a", user("你好")).unwrap();
        assert_eq!(
            case,
            BenchCase {
                id: "case_a".into(),
                category: UNCATEGORIZED.into(),
                messages: vec![Message::user("你好")],
                tools: None,
                expected: None,
                source: "dir/case_a.json".into(),
            }
        );
    }

    #[test]
    fn the_object_form_reads_id_category_tools_and_expected_calls() {
        let value = json!({
            "id": "calc", "category": "simple", "messages": user("计算 1+1"),
            "tools": [{"type": "function", "function": {"name": "calculator", "parameters": {}}}],
            "expected": {"tool_calls": [{"name": "calculator", "args": {"expression": ["1+1", "1 + 1"]}}]}
        });
        let case = case_from_value("f.json", "f", value).unwrap();
        assert_eq!(case.id, "calc");
        assert_eq!(case.category, "simple");
        assert_eq!(case.tools.as_ref().map(Vec::len), Some(1));
        let args = BTreeMap::from([("expression".to_string(), vec![json!("1+1"), json!("1 + 1")])]);
        assert_eq!(case.expected, Some(Expected::ToolCalls(vec![ExpectedCall { name: "calculator".into(), args }])));
    }

    #[test]
    fn no_tool_call_is_read_and_written_back() {
        let expected = Expected::from_value(&json!({"no_tool_call": true})).unwrap();
        assert_eq!(expected, Expected::NoToolCall);
        assert_eq!(expected.to_json(), json!({"no_tool_call": true}));
    }

    #[test]
    fn a_final_answer_is_read_and_written_back() {
        let value = json!({"final_answer": {"must_contain": [["22", "22.0"], ["sunny", "晴"]]}});
        let expected = Expected::from_value(&value).unwrap();
        let groups = vec![vec!["22".to_string(), "22.0".to_string()], vec!["sunny".to_string(), "晴".to_string()]];
        assert_eq!(expected, Expected::FinalAnswer(FinalAnswer { must_contain: groups, example: None }));
        assert_eq!(expected.to_json(), value);
    }

    #[test]
    fn bad_cases_say_what_is_wrong() {
        let err = |v: Value| case_from_value("f.json", "f", v).unwrap_err();
        assert_eq!(err(json!("hi")), "expected a messages array or a case object, found a string");
        assert_eq!(err(json!({"id": "x"})), "missing \"messages\"");
        assert_eq!(err(json!({"messages": user("q"), "expect": {}})), "unknown key \"expect\" (known: id, category, description, messages, tools, expected)");
        assert_eq!(err(json!({"messages": user("q"), "expected": {"no_tool_call": false}})), "expected.no_tool_call: must be true, found false");
        assert_eq!(err(json!({"messages": user("q"), "expected": {}})), "expected: needs \"tool_calls\", \"no_tool_call\" or \"final_answer\"");
        let both = err(json!({"messages": user("q"), "expected": {"no_tool_call": true, "final_answer": {"must_contain": [["x"]]}}}));
        assert_eq!(both, "expected: give one of tool_calls, no_tool_call, final_answer, not no_tool_call and final_answer");
        let no_groups = err(json!({"messages": user("q"), "expected": {"final_answer": {"must_contain": []}}}));
        assert_eq!(no_groups, "expected.final_answer.must_contain: is empty");
        assert_eq!(err(json!([])), "messages: is empty");
        assert_eq!(err(json!([{"role": "robot", "content": "x"}])), "messages: message 0: unknown role \"robot\" (system, user, assistant, tool)");
        assert_eq!(err(json!({"messages": user("q"), "tools": [{"type": "function"}]})), "tools: tool 0: no function.name");
        let args_not_lists = err(json!({"messages": user("q"), "expected": {"tool_calls": [{"name": "c", "args": {"x": "1"}}]}}));
        assert!(args_not_lists.starts_with("expected.tool_calls[0]: invalid type: string \"1\", expected a sequence"), "{args_not_lists}");
    }

    #[test]
    fn a_directory_loads_in_file_order_and_rejects_duplicate_ids() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.json"), user("b").to_string()).unwrap();
        std::fs::write(dir.path().join("a.json"), json!({"id": "first", "messages": user("a")}).to_string()).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a case").unwrap();
        let ids: Vec<String> = load_dir(dir.path()).unwrap().into_iter().map(|c| c.id).collect();
        assert_eq!(ids, vec!["first", "b"]);

        std::fs::write(dir.path().join("c.json"), json!({"id": "b", "messages": user("c")}).to_string()).unwrap();
        let err = load_dir(dir.path()).unwrap_err().to_string();
        assert!(err.starts_with("case id \"b\" appears twice"), "{err}");
    }

    #[test]
    fn a_broken_file_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, "{not json").unwrap();
        let err = load_file(&path).unwrap_err().to_string();
        assert!(err.contains("bad.json: not valid JSON"), "{err}");
    }

    #[test]
    fn select_filters_by_id_then_limits() {
        let cases: Vec<BenchCase> = ["a", "b", "c"].iter().map(|id| case_from_value("f", id, user(id)).unwrap()).collect();
        let ids = |cs: Vec<BenchCase>| cs.into_iter().map(|c| c.id).collect::<Vec<_>>();
        assert_eq!(ids(select(cases.clone(), &[], Some(2)).unwrap()), vec!["a", "b"]);
        assert_eq!(ids(select(cases.clone(), &["c".into(), "a".into()], None).unwrap()), vec!["a", "c"]);
        let err = select(cases.clone(), &["z".into()], None).unwrap_err().to_string();
        assert_eq!(err, "unknown case id \"z\" (available: a, b, c)");
        assert!(matches!(select(cases, &[], Some(0)), Err(BenchError::NoCases)));
    }
}
