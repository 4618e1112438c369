//! plan_execute's plan object: `{"reasoning": "...", "plan": [{"step", "description",
//! "tool_call"}]}`, or the envelope's schema A when no tool is needed. The chain's JSON
//! parsers find it (whole, fenced, in text, or as a bare array of steps); this module
//! decodes its steps.

use serde_json::{json, Value};

use super::envelope::{self, answer_schema};
use super::KeyOrder;
use crate::brain::constrain::grammar::{any_call, json_grammar, Tool, MAX_CALLS};
use crate::brain::parse::{decode_call, is_call, text_of, FoundStep};
use crate::brain::prompt::{example_calls, push_tool_list, use_only, Listed};

// ---------------------------------------------------------------------------------------
// Prompt

/// The seeds' plan prompt (Plan phase).
pub(crate) fn system(tools: &[Value], listed: &[Value], place: Listed) -> String {
    let example = example_calls(tools);
    if example.is_empty() {
        return format!("{}\nNo tools are available: always answer with schema A.", envelope::RULES);
    }
    let steps: Vec<Value> = example
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let description = match call.name.as_str() {
                "file_reader" => "Read the document".to_string(),
                "calculator" => "Compute the expression".to_string(),
                other => format!("Call {other}"),
            };
            json!({
                "step": i + 1,
                "description": description,
                "tool_call": {"name": call.name, "args": call.args},
            })
        })
        .collect();
    let shape = json!({"reasoning": "why these steps", "plan": steps});
    let mut text = String::from(
        "You are a local tool agent. First make a plan. Answer ONLY with one JSON object and nothing else:\n",
    );
    text.push_str(&shape.to_string());
    text.push_str(
        "\nOne step per tool call, in the order they should run. If no tool is needed, answer \
with {\"content\":\"final answer text\",\"tool_calls\":[]} instead. ",
    );
    text.push_str(use_only(place));
    push_tool_list(&mut text, listed);
    text
}

// ---------------------------------------------------------------------------------------
// Grammar

/// The plan's grammar: a plan of one to [`MAX_CALLS`] steps, or schema A.
pub(crate) fn lark(tools: &[Tool]) -> String {
    format!("start: %json {}\n", json_grammar(plan_schema(tools)))
}

pub(crate) fn plan_schema(tools: &[Tool]) -> Value {
    if tools.is_empty() {
        return answer_schema(KeyOrder::ContentFirst);
    }
    let step = json!({
        "type": "object",
        "properties": {
            "step": {"type": "integer", "minimum": 1},
            "description": {"type": "string"},
            "tool_call": any_call(tools, "args", true),
        },
        "required": ["step", "description", "tool_call"],
        "additionalProperties": false,
    });
    let plan = json!({
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "plan": {"type": "array", "minItems": 1, "maxItems": MAX_CALLS, "items": step},
        },
        "required": ["reasoning", "plan"],
        "additionalProperties": false,
    });
    json!({"anyOf": [plan, answer_schema(KeyOrder::ContentFirst)]})
}

// ---------------------------------------------------------------------------------------
// Parser

/// The plan's steps, each with its call (or the step itself written as a call).
pub(in crate::brain) fn decode_steps(items: &[Value]) -> Vec<FoundStep> {
    items
        .iter()
        .filter_map(Value::as_object)
        .map(|obj| {
            let call = match obj.get("tool_call") {
                Some(Value::Object(call)) => Some(decode_call(call)),
                Some(Value::Null) | None if is_call(obj) => Some(decode_call(obj)),
                Some(Value::Null) | None => None,
                Some(other) => Some(Err(format!("tool_call is {}", crate::protocol::json_kind(other)))),
            };
            let step = match obj.get("step") {
                Some(Value::Number(n)) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
                Some(Value::String(s)) => s.trim().parse().ok(),
                _ => None,
            };
            FoundStep { step, description: text_of(obj.get("description")), call }
        })
        .collect()
}
