//! The Berkeley Function Calling Leaderboard's files, as published.
//!
//! Questions: one JSON object a line, `{"id", "question", "function"}`; `question` is a list
//! of turns, each a list of `{role, content}` (we ask the first turn; older files give a
//! plain list of messages or a string); `function` lists the tools with `"type": "dict"`
//! and Python type names, mapped here to JSON schema and wrapped in the OpenAI function
//! format. Answers: `{"id", "ground_truth": [{function_name: {param: [accepted...]}}]}`.
//! The category is the id without its trailing number (`parallel_multiple_12` ->
//! `parallel_multiple`); in an `irrelevance` category the right decision is no call.
//! Function names keep their dots (`math.factorial`): the model sees them as written.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::case::{BenchCase, Expected, ExpectedCall};
use super::BenchError;
use crate::protocol::{json_kind, messages_from_value};

/// The JSON schema type for a BFCL (Python) type name; `None` means no type constraint.
pub fn json_type(name: &str) -> Result<Option<&'static str>, String> {
    Ok(Some(match name {
        "dict" | "object" => "object",
        "float" | "number" => "number",
        "int" | "integer" => "integer",
        "bool" | "boolean" => "boolean",
        "str" | "string" => "string",
        "list" | "tuple" | "array" => "array",
        "null" | "None" => "null",
        "any" => return Ok(None),
        other => return Err(format!("unknown type {other:?} (known: dict, float, int, bool, str, string, list, tuple, any)")),
    }))
}

/// A BFCL parameter schema as JSON schema: types mapped, `properties`, `items` and
/// `additionalProperties` mapped recursively, everything else kept.
pub fn to_json_schema(schema: &Value, path: &str) -> Result<Value, String> {
    let Value::Object(obj) = schema else {
        return Ok(schema.clone());
    };
    let mut out = Map::new();
    for (key, value) in obj {
        let mapped = match key.as_str() {
            "type" => match map_type_value(value).map_err(|e| format!("{path}: {e}"))? {
                Some(t) => t,
                None => continue,
            },
            "properties" => match value {
                Value::Object(props) => {
                    let mut mapped = Map::new();
                    for (name, prop) in props {
                        mapped.insert(name.clone(), to_json_schema(prop, &format!("{path}.{name}"))?);
                    }
                    Value::Object(mapped)
                }
                other => return Err(format!("{path}.properties: must be an object, found {}", json_kind(other))),
            },
            "items" => match value {
                Value::Array(items) => Value::Array(
                    items.iter().enumerate().map(|(i, s)| to_json_schema(s, &format!("{path}[{i}]"))).collect::<Result<_, _>>()?,
                ),
                single => to_json_schema(single, &format!("{path}[]"))?,
            },
            "additionalProperties" => to_json_schema(value, &format!("{path}.*"))?,
            _ => value.clone(),
        };
        out.insert(key.clone(), mapped);
    }
    Ok(Value::Object(out))
}

/// `"float"` -> `"number"`; a list of names maps each (any `any` drops the constraint).
fn map_type_value(value: &Value) -> Result<Option<Value>, String> {
    match value {
        Value::String(name) => Ok(json_type(name)?.map(Value::from)),
        Value::Array(names) => {
            let mut mapped = Vec::new();
            for name in names {
                let Some(name) = name.as_str() else {
                    return Err(format!("type: expected names, found {}", json_kind(name)));
                };
                match json_type(name)? {
                    Some(t) => mapped.push(Value::from(t)),
                    None => return Ok(None),
                }
            }
            Ok(Some(Value::Array(mapped)))
        }
        other => Err(format!("type: expected a name, found {}", json_kind(other))),
    }
}

/// One BFCL function as an OpenAI-format tool.
pub fn to_openai_tool(function: &Value) -> Result<Value, String> {
    // Already wrapped: map what is inside.
    if let Some(inner) = function.get("function").filter(|_| function.get("type").and_then(Value::as_str) == Some("function")) {
        return to_openai_tool(inner);
    }
    let name = function.get("name").and_then(Value::as_str).ok_or("function: missing \"name\"")?;
    let description = function.get("description").cloned().unwrap_or(Value::from(""));
    let parameters = match function.get("parameters") {
        Some(p) => to_json_schema(p, name)?,
        None => json!({"type": "object", "properties": {}}),
    };
    Ok(json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}))
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

/// An answers file: id -> expected calls.
pub fn load_answers(path: &Path) -> Result<BTreeMap<String, Vec<ExpectedCall>>, BenchError> {
    let file = path.display().to_string();
    let mut answers = BTreeMap::new();
    for (line, value) in json_lines(path)? {
        let err = |reason: String| BenchError::Line { file: file.clone(), line, reason };
        let id = value.get("id").and_then(Value::as_str).ok_or_else(|| err("missing \"id\"".into()))?;
        let truth = value.get("ground_truth").ok_or_else(|| err("missing \"ground_truth\"".into()))?;
        answers.insert(id.to_string(), ground_truth_calls(truth).map_err(err)?);
    }
    Ok(answers)
}

/// A questions file as cases; with an answers file, each answered question gets its
/// expected calls (irrelevance questions always expect no call; the others without an
/// answer are scored for validity only).
pub fn load(questions: &Path, answers: Option<&Path>) -> Result<Vec<BenchCase>, BenchError> {
    let file = questions.display().to_string();
    let answers = answers.map(load_answers).transpose()?.unwrap_or_default();
    let mut cases = Vec::new();
    for (line, value) in json_lines(questions)? {
        let source = format!("{file}:{line}");
        let mut case = question_case(&source, &value).map_err(|reason| BenchError::Line { file: file.clone(), line, reason })?;
        if case.expected.is_none() {
            case.expected = answers.get(&case.id).cloned().map(Expected::ToolCalls);
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
    fn python_type_names_map_to_json_schema_types() {
        let names = ["dict", "float", "int", "bool", "str", "string", "list", "tuple", "integer", "number", "boolean", "array", "object"];
        let mapped: Vec<_> = names.iter().map(|n| json_type(n).unwrap()).collect();
        let want = ["object", "number", "integer", "boolean", "string", "string", "array", "array", "integer", "number", "boolean", "array", "object"];
        assert_eq!(mapped, want.iter().map(|t| Some(*t)).collect::<Vec<_>>());
        assert_eq!(json_type("any").unwrap(), None);
        assert!(json_type("HashMap").unwrap_err().starts_with("unknown type \"HashMap\""));
    }

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
        assert_eq!(err, "f.x: unknown type \"Pointer\" (known: dict, float, int, bool, str, string, list, tuple, any)");
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
