//! Hermes calls, as Qwen2.5's template teaches them:
//! `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, one block a call.

use serde_json::{Map, Value};

use super::native;
use crate::brain::constrain::grammar::{any_call, json_grammar, Tool};
use crate::brain::parse::{decode_call, names_a_tool, remove_blocks, scan_json, strip_fence_markers, tag_blocks, Ctx, Found};
use crate::protocol::ToolCall;

/// The Hermes grammar: a plain answer, `<tool_call>` blocks or fences (see [`native`]).
pub(crate) fn lark(tools: &[Tool]) -> String {
    let mut out = native::lark_start(tools, "call: \"<tool_call>\" SEP? call_json SEP? \"</tool_call>\"\n");
    if !tools.is_empty() {
        out.push_str(&format!("call_json: %json {}\n", json_grammar(any_call(tools, "arguments", false))));
    }
    out
}

/// Hermes: `<tool_call>{"name": ..., "arguments": ...}</tool_call>`, one or many; the
/// closing tag may be missing at the end.
pub(super) fn hermes(text: &str, _: &Ctx) -> Option<Result<Found, String>> {
    let blocks: Vec<_> = tag_blocks(text, "<tool_call>", "</tool_call>")
        .into_iter()
        .filter(|(_, inner, _)| !text[inner.clone()].contains("<function="))
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let mut calls = Vec::new();
    for (n, (_, inner, _)) in blocks.iter().enumerate() {
        let inner = strip_fence_markers(&text[inner.clone()]);
        let scan = scan_json(&inner, true, |v| !tagged_calls(v).is_empty());
        let before = calls.len();
        for (value, _) in scan.values {
            calls.extend(tagged_calls(&value));
        }
        if calls.len() == before {
            let why = scan.first_error.unwrap_or_else(|| "no tool call in it".into());
            calls.push(Err(format!("<tool_call> block {}: {why}", n + 1)));
        }
    }
    if calls.iter().all(Result::is_err) {
        let reason = calls.into_iter().find_map(Result::err).unwrap_or_default();
        return Some(Err(reason));
    }
    let content = remove_blocks(text, "<tool_call>", "</tool_call>").replace("</tool_call>", "");
    Some(Ok(Found { content: strip_fence_markers(&content).trim().to_string(), calls, plan: None }))
}

/// The calls in a `<tool_call>` block's JSON: objects naming a tool, alone or in an array.
fn tagged_calls(value: &Value) -> Vec<Result<ToolCall, String>> {
    let objects: Vec<&Map<String, Value>> = match value {
        Value::Object(obj) => vec![obj],
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    };
    objects.into_iter().filter(|o| names_a_tool(o)).map(decode_call).collect()
}
