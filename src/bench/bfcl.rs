//! The Berkeley Function Calling Leaderboard's files, as published.
//!
//! Questions: one JSON object a line, `{"id", "question", "function"}`; `question` is a list
//! of turns, each a list of messages (we ask the first turn, all its messages; older files
//! give a plain list of messages or a string); `function` lists the tools with `"type":
//! "dict"` and Python type names, mapped here to JSON schema and wrapped in the OpenAI
//! function format. Answers: `{"id", "ground_truth": [{function_name: {param:
//! [accepted...]}}]}`. The category is the id without its trailing number
//! (`parallel_multiple_12` -> `parallel_multiple`); in an `irrelevance` category the right
//! decision is no call. Function names keep their dots (`math.factorial`): the model sees
//! them as written.
//!
//! Our extension for conversations that already hold tool results (the `multi_turn`
//! category of `data/bfcl/`): the turn's messages may include assistant messages with
//! `tool_calls` and `{"role": "tool", ...}` results in our message shape (each result
//! answers a call of the assistant message before it, by id and function name); the answer
//! line is then either a `ground_truth` (the right next call) or `{"id", "final_answer":
//! {"must_contain": [[alternatives...]], "example"?}}` (no call, and an answer stating
//! those facts; see [`super::answer`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use super::answer::FinalAnswer;
use super::case::{BenchCase, Expected, ExpectedCall};
use super::BenchError;
use crate::protocol::{json_kind, messages_from_value, Message, ToolCall};
use crate::tools::spec::{self, ToolSpec};

/// A BFCL parameter schema as JSON schema: the Python type names mapped at every depth
/// (an `any` among them drops the type), everything else kept.
pub fn to_json_schema(schema: &Value, path: &str) -> Result<Value, String> {
    let mut out = schema.clone();
    spec::walk_raw::<String>(&mut out, path, &mut |map, at| {
        let Some(written) = map.get("type") else { return Ok(()) };
        let kinds = spec::read_kinds(written).map_err(|e| format!("{at}: {e}"))?;
        let mapped: Option<Value> = match (kinds.as_slice(), written) {
            ([], _) => None,
            ([one], Value::String(_)) => Some(one.as_str().into()),
            (kinds, _) => Some(kinds.iter().map(|k| k.as_str()).collect()),
        };
        match mapped {
            Some(mapped) => map.insert("type".into(), mapped),
            None => map.remove("type"),
        };
        Ok(())
    })?;
    Ok(out)
}

/// One BFCL function (Python type names; wrapped or bare) as an OpenAI-format tool in
/// JSON schema types.
pub fn to_openai_tool(function: &Value) -> Result<Value, String> {
    let tool = ToolSpec::parse(function, 0).map_err(|e| match e.name {
        Some(name) => format!("{name}: {}", e.reason),
        None => e.reason,
    })?;
    let parameters = to_json_schema(tool.parameters(), &tool.name)?;
    Ok(spec::openai_tool(&tool.name, &Value::from(tool.description.as_str()), &parameters))
}

/// `simple_3` -> `simple`, `live_parallel_multiple_0-1-2` -> `live_parallel_multiple`.
pub fn category_of(id: &str) -> String {
    let number_follows = |i: usize| id.get(i + 1..).is_some_and(|rest| rest.starts_with(|d: char| d.is_ascii_digit()));
    let cut = id.char_indices().rev().find(|&(i, c)| c == '_' && number_follows(i));
    cut.and_then(|(i, _)| id.get(..i)).unwrap_or(id).to_string()
}

/// One question line as a case (without its expected calls).
pub fn question_case(source: &str, value: &Value) -> Result<BenchCase, String> {
    let id = value.get("id").and_then(Value::as_str).ok_or("missing \"id\"")?;
    let question = value.get("question").ok_or("missing \"question\"")?;
    let first_turn = match question {
        Value::String(text) => json!([{"role": "user", "content": text}]),
        Value::Array(turns) => match turns.first() {
            Some(Value::Array(turn)) => Value::Array(turn.clone()),
            Some(Value::Object(_)) => question.clone(),
            Some(other) => return Err(format!("question: expected turns of messages, found {}", json_kind(other))),
            None => return Err("question: is empty".into()),
        },
        other => return Err(format!("question: expected a list of turns, found {}", json_kind(other))),
    };
    let messages = messages_from_value("question", first_turn).map_err(|e| e.to_string())?;
    if messages.is_empty() {
        return Err("question: the first turn has no messages".into());
    }
    check_tool_results(&messages).map_err(|e| format!("question: {e}"))?;
    let functions = match value.get("function") {
        Some(Value::Array(fs)) => fs.clone(),
        Some(single @ Value::Object(_)) => vec![single.clone()],
        Some(other) => return Err(format!("function: expected a list of functions, found {}", json_kind(other))),
        None => return Err("missing \"function\"".into()),
    };
    let tools = functions
        .iter()
        .enumerate()
        .map(|(i, f)| to_openai_tool(f).map_err(|e| format!("function[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let category = category_of(id);
    let expected = category.ends_with("irrelevance").then_some(Expected::NoToolCall);
    Ok(BenchCase { id: id.to_string(), category, messages, tools: Some(tools), expected, source: source.to_string() })
}

/// Each tool result answers a call of the assistant message before it (its id and its
/// function), once; every call gets its result before the conversation goes on.
pub fn check_tool_results(messages: &[Message]) -> Result<(), String> {
    let mut open: Vec<&ToolCall> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        if let Message::Tool(result) = message {
            let id = &result.tool_call_id;
            let Some(at) = open.iter().position(|c| c.id == *id) else {
                return Err(format!("message {i}: tool result {id:?} answers no open call of the assistant message before it"));
            };
            let call = open.remove(at);
            if call.name != result.name {
                return Err(format!("message {i}: tool result {id:?} is named {}, but call {id:?} is to {}", result.name, call.name));
            }
            continue;
        }
        if let Some(call) = open.first() {
            return Err(format!("message {i}: call {:?} ({}) has no result before it", call.id, call.name));
        }
        if let Message::Assistant(ai) = message {
            for (j, call) in ai.tool_calls.iter().enumerate() {
                if call.id.trim().is_empty() {
                    return Err(format!("message {i}: tool call {j} ({}) has no id", call.name));
                }
                if ai.tool_calls.iter().take(j).any(|c| c.id == call.id) {
                    return Err(format!("message {i}: tool call id {:?} is used twice", call.id));
                }
            }
            open = ai.tool_calls.iter().collect();
        }
    }
    match open.first() {
        Some(call) => Err(format!("call {:?} ({}) has no result", call.id, call.name)),
        None => Ok(()),
    }
}

/// `[{function_name: {param: [accepted...]}}]` as expected calls.
pub fn ground_truth_calls(value: &Value) -> Result<Vec<ExpectedCall>, String> {
    let entries: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        single @ Value::Object(_) => vec![single],
        other => return Err(format!("ground_truth: expected a list, found {}", json_kind(other))),
    };
    let mut calls = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let Value::Object(by_name) = entry else {
            return Err(format!("ground_truth[{i}]: expected {{function_name: {{param: [accepted values]}}}}, found {}", json_kind(entry)));
        };
        for (name, params) in by_name {
            let args: BTreeMap<String, Vec<Value>> = serde_json::from_value(params.clone())
                .map_err(|e| format!("ground_truth[{i}].{name}: {e} (expected {{param: [accepted values]}})"))?;
            calls.push(ExpectedCall { name: name.clone(), args });
        }
    }
    if calls.is_empty() {
        return Err("ground_truth: is empty".into());
    }
    Ok(calls)
}

/// The non-blank lines of a JSON-lines file, parsed, with their 1-based line numbers. A
/// file holding one JSON array is read as its elements.
fn json_lines(path: &Path) -> Result<Vec<(usize, Value)>, BenchError> {
    let file = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::BFCL)?;
    if text.trim_start().starts_with('[') {
        let value: Value = serde_json::from_str(&text).map_err(|source| BenchError::Json { file: file.clone(), source })?;
        let items = match value {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        return Ok(items.into_iter().enumerate().map(|(i, v)| (i + 1, v)).collect());
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map(|v| (i + 1, v))
                .map_err(|e| BenchError::Line { file: file.clone(), line: i + 1, reason: format!("not valid JSON: {e}") })
        })
        .collect()
}

/// An answers file: id -> the expected decision (`ground_truth` calls, or a `final_answer`).
pub fn load_answers(path: &Path) -> Result<BTreeMap<String, Expected>, BenchError> {
    let file = path.display().to_string();
    let mut answers = BTreeMap::new();
    for (line, value) in json_lines(path)? {
        let err = |reason: String| BenchError::Line { file: file.clone(), line, reason };
        let id = value.get("id").and_then(Value::as_str).ok_or_else(|| err("missing \"id\"".into()))?;
        let expected = match (value.get("ground_truth"), value.get("final_answer")) {
            (Some(truth), None) => Expected::ToolCalls(ground_truth_calls(truth).map_err(err)?),
            (None, Some(answer)) => Expected::FinalAnswer(FinalAnswer::from_value(answer).map_err(err)?),
            (Some(_), Some(_)) => return Err(err("give \"ground_truth\" or \"final_answer\", not both".into())),
            (None, None) => return Err(err("missing \"ground_truth\" (or \"final_answer\")".into())),
        };
        if answers.insert(id.to_string(), expected).is_some() {
            return Err(err(format!("a second answer for {id:?}")));
        }
    }
    Ok(answers)
}

/// A questions file as cases; with an answers file, each answered question gets its
/// expected decision (irrelevance questions always expect no call; the others without an
/// answer are scored for validity only).
pub fn load(questions: &Path, answers: Option<&Path>) -> Result<Vec<BenchCase>, BenchError> {
    let file = questions.display().to_string();
    let answers = answers.map(load_answers).transpose()?.unwrap_or_default();
    let mut cases = Vec::new();
    for (line, value) in json_lines(questions)? {
        let source = format!("{file}:{line}");
        let mut case = question_case(&source, &value).map_err(|reason| BenchError::Line { file: file.clone(), line, reason })?;
        if case.expected.is_none() {
            case.expected = answers.get(&case.id).cloned();
        }
        cases.push(case);
    }
    super::case::check_unique(&cases)?;
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_properties_and_items_are_mapped_recursively_and_any_drops_the_type() {
        let bfcl = json!({
            "type": "dict",
            "properties": {
                "point": {"type": "tuple", "items": {"type": "float"}, "description": "x, y"},
                "options": {"type": "dict", "properties": {"depth": {"type": "int"}, "tags": {"type": "list", "items": {"type": "str"}}}},
                "payload": {"type": "any", "description": "anything"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}
            },
            "required": ["point"]
        });
        let schema = to_json_schema(&bfcl, "f").unwrap();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "point": {"type": "array", "items": {"type": "number"}, "description": "x, y"},
                    "options": {"type": "object", "properties": {"depth": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}},
                    "payload": {"description": "anything"},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}
                },
                "required": ["point"]
            })
        );
        let err = to_json_schema(&json!({"type": "dict", "properties": {"x": {"type": "Pointer"}}}), "f").unwrap_err();
        assert!(err.starts_with("f.x: unknown type \"Pointer\" (known: string, integer,"), "{err}");
    }

    #[test]
    fn a_function_is_wrapped_in_the_openai_format() {
        let f = json!({"name": "math.factorial", "description": "n!", "parameters": {"type": "dict", "properties": {"number": {"type": "integer"}}, "required": ["number"]}});
        let tool = to_openai_tool(&f).unwrap();
        let want = json!({"type": "function", "function": {"name": "math.factorial", "description": "n!", "parameters": {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}});
        assert_eq!(tool, want);
        assert_eq!(to_openai_tool(&want).unwrap(), want);
    }

    #[test]
    fn categories_come_from_the_id_prefix() {
        let ids = ["simple_0", "multiple_12", "parallel_3", "parallel_multiple_7", "irrelevance_40", "live_simple_0-0-0", "odd"];
        let cats: Vec<String> = ids.iter().map(|id| category_of(id)).collect();
        assert_eq!(cats, ["simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple", "odd"]);
    }

    #[test]
    fn a_question_uses_its_first_turn_and_irrelevance_expects_no_call() {
        let line = json!({
            "id": "irrelevance_0",
            "question": [[{"role": "user", "content": "Capital of France?"}], [{"role": "user", "content": "later turn"}]],
            "function": [{"name": "area", "description": "", "parameters": {"type": "dict", "properties": {"base": {"type": "int"}}, "required": ["base"]}}]
        });
        let case = question_case("q.json:1", &line).unwrap();
        assert_eq!(case.messages, vec![crate::protocol::Message::user("Capital of France?")]);
        assert_eq!(case.category, "irrelevance");
        assert_eq!(case.expected, Some(Expected::NoToolCall));
        assert_eq!(case.tools.unwrap()[0]["function"]["parameters"]["properties"]["base"]["type"], "integer");
    }

    /// A turn with the user's request, the assistant's calls and their results.
    fn conversation(results: Value) -> Value {
        let mut turn = vec![
            json!({"role": "user", "content": "北京和上海现在天气如何？"}),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_001", "name": "weather.current", "args": {"city": "北京"}},
                {"id": "call_002", "name": "weather.current", "args": {"city": "上海"}}
            ]}),
        ];
        turn.extend(results.as_array().cloned().unwrap_or_default());
        json!({
            "id": "multi_turn_100",
            "question": [turn],
            "function": [{"name": "weather.current", "description": "", "parameters": {"type": "dict", "properties": {"city": {"type": "str"}}, "required": ["city"]}}]
        })
    }

    fn result(id: &str, name: &str, output: Value) -> Value {
        json!({"role": "tool", "tool_call_id": id, "name": name, "status": "success", "content": json!({"status": "success", "output": output}).to_string()})
    }

    #[test]
    fn a_turn_keeps_its_calls_and_results_and_its_category_is_multi_turn() {
        let line = conversation(json!([
            result("call_002", "weather.current", json!({"temp_c": 18})),
            result("call_001", "weather.current", json!({"temp_c": 22}))
        ]));
        let case = question_case("q.json:1", &line).unwrap();
        assert_eq!(case.category, "multi_turn");
        assert_eq!(case.expected, None);
        let roles: Vec<&str> = case.messages.iter().map(Message::role).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool"]);
        let Message::Assistant(ai) = &case.messages[1] else { panic!("{:?}", case.messages[1]) };
        assert_eq!(ai.tool_calls[1].args["city"], json!("上海"));
    }

    #[test]
    fn tool_results_must_answer_the_calls_before_them() {
        let err = |results: Value| question_case("q.json:1", &conversation(results)).unwrap_err();
        let first = result("call_001", "weather.current", json!({}));
        assert_eq!(err(json!([first])), "question: call \"call_002\" (weather.current) has no result");
        assert_eq!(
            err(json!([first, result("call_009", "weather.current", json!({}))])),
            "question: message 3: tool result \"call_009\" answers no open call of the assistant message before it"
        );
        assert_eq!(
            err(json!([first, first])),
            "question: message 3: tool result \"call_001\" answers no open call of the assistant message before it"
        );
        assert_eq!(
            err(json!([first, result("call_002", "weather.forecast", json!({}))])),
            "question: message 3: tool result \"call_002\" is named weather.forecast, but call \"call_002\" is to weather.current"
        );
        assert_eq!(
            err(json!([first, {"role": "user", "content": "然后呢？"}])),
            "question: message 3: call \"call_002\" (weather.current) has no result before it"
        );
        let no_id = json!({"id": "multi_turn_1", "question": [[{"role": "assistant", "content": "", "tool_calls": [{"name": "f", "args": {}}]}]], "function": []});
        assert_eq!(question_case("q", &no_id).unwrap_err(), "question: message 0: tool call 0 (f) has no id");
    }

    #[test]
    fn an_answer_line_gives_the_next_calls_or_a_final_answer() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let lines = [
            json!({"id": "multi_turn_100", "final_answer": {"must_contain": [["22", "22.0"], ["18"]], "example": "北京 22°C，上海 18°C。"}}),
            json!({"id": "multi_turn_101", "ground_truth": [{"files.read": {"path": ["docs/a.md"]}}]}),
        ];
        std::fs::write(&a, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        let answers = load_answers(&a).unwrap();
        let Some(Expected::FinalAnswer(answer)) = answers.get("multi_turn_100") else { panic!("{answers:?}") };
        assert_eq!(answer.must_contain, vec![vec!["22".to_string(), "22.0".to_string()], vec!["18".to_string()]]);
        assert_eq!(answer.example.as_deref(), Some("北京 22°C，上海 18°C。"));
        assert!(matches!(answers.get("multi_turn_101"), Some(Expected::ToolCalls(calls)) if calls[0].name == "files.read"));

        let bad = |line: Value| {
            std::fs::write(&a, format!("{line}\n")).unwrap();
            load_answers(&a).unwrap_err().to_string().replace(&format!("{}:1: ", a.display()), "")
        };
        assert_eq!(bad(json!({"id": "x"})), "missing \"ground_truth\" (or \"final_answer\")");
        assert_eq!(
            bad(json!({"id": "x", "ground_truth": [{"f": {}}], "final_answer": {"must_contain": [["1"]]}})),
            "give \"ground_truth\" or \"final_answer\", not both"
        );
        assert_eq!(bad(json!({"id": "x", "final_answer": {"must_contain": [[1]]}})), "final_answer.must_contain[0][0]: must be a text, found a number");
        std::fs::write(&a, format!("{}\n{}\n", lines[1], lines[1])).unwrap();
        let err = load_answers(&a).unwrap_err().to_string();
        assert_eq!(err, format!("{}:2: a second answer for \"multi_turn_101\"", a.display()));
    }

    #[test]
    fn ground_truth_becomes_expected_calls() {
        let truth = json!([{"spotify.play": {"artist": ["Taylor Swift"], "duration": [20, ""]}}, {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}}]);
        let calls = ground_truth_calls(&truth).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "spotify.play");
        assert_eq!(calls[0].args["duration"], vec![json!(20), json!("")]);
        assert_eq!(calls[1].args["artist"], vec![json!("Maroon 5")]);
        let err = ground_truth_calls(&json!([{"f": {"x": 3}}])).unwrap_err();
        assert!(err.starts_with("ground_truth[0].f: invalid type: integer `3`, expected a sequence"), "{err}");
    }

    #[test]
    fn files_load_with_answers_and_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let q = dir.path().join("q.json");
        let a = dir.path().join("a.json");
        let f = r#"[{"name":"calc","description":"","parameters":{"type":"dict","properties":{"x":{"type":"float"}},"required":["x"]}}]"#;
        std::fs::write(
            &q,
            format!(
                "{{\"id\":\"simple_0\",\"question\":[[{{\"role\":\"user\",\"content\":\"x=2\"}}]],\"function\":{f}}}\n\n{{\"id\":\"simple_1\",\"question\":[[{{\"role\":\"user\",\"content\":\"?\"}}]],\"function\":{f}}}\n"
            ),
        )
        .unwrap();
        std::fs::write(&a, "{\"id\":\"simple_0\",\"ground_truth\":[{\"calc\":{\"x\":[2.0]}}]}\n").unwrap();
        let cases = load(&q, Some(&a)).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].source, format!("{}:1", q.display()));
        assert!(matches!(&cases[0].expected, Some(Expected::ToolCalls(calls)) if calls[0].args["x"] == vec![json!(2.0)]));
        assert_eq!(cases[1].source, format!("{}:3", q.display()));
        assert_eq!(cases[1].expected, None);

        std::fs::write(&q, "{\"id\":\"simple_0\"}\n").unwrap();
        let err = load(&q, None).unwrap_err().to_string();
        assert_eq!(err, format!("{}:1: missing \"question\"", q.display()));
        std::fs::write(&a, "{\"id\":\"x\",\n").unwrap();
        let err = load_answers(&a).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:1: not valid JSON", a.display())), "{err}");
    }
}
