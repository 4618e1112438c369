//! The seeds' JSON envelope: `{"content": "...", "tool_calls": [...]}`, schema A (a final
//! answer) or schema B (calls, content empty). Asked for by prompt_json and by
//! plan_execute's step decisions; content and calls are explicit fields, so both set is a
//! claim the exclusivity policy judges.

use std::ops::Range;

use serde_json::{json, Map, Value};

use super::KeyOrder;
use crate::brain::constrain::grammar::{any_call, grammar_tools, json_grammar, literal, Tool, MAX_CALLS, WHITESPACE};
use crate::brain::constrain::ConstrainError;
use crate::brain::parse::{cut_out, has_shape, interpret, json_error, scan_json, starts_json, Ctx, Found};
use crate::brain::prompt::{example_calls, push_tool_list, use_only, Listed};
use crate::protocol::{AiMessage, Strategy, ToolCall};
use crate::tools::spec::ToolSpec;

// ---------------------------------------------------------------------------------------
// Prompt

pub(crate) const RULES: &str = "You are a local tool agent. Answer ONLY with one JSON object and nothing else.\n\
Valid schema A (final answer, no tools needed):\n\
{\"content\":\"final answer text\",\"tool_calls\":[]}";

/// Small models narrate the call they are about to make in `content`; saying when each
/// schema applies keeps content empty with calls.
pub(crate) const DECIDE_RULE: &str = "When the request needs a file, a calculation, a search or a table, \
use schema B: put every needed call in tool_calls and leave content empty (\"\"). Use schema A \
only to answer directly, or when tool results already answer the request. ";

/// Argument values: the 0.5B translated Chinese text values into English, dropped optional
/// parameters the request gave ("unread", "in cm") and invented ones it did not.
pub(crate) const ARGS_RULE: &str = "Arguments: give every parameter whose value the request states, optional \
ones too, with the value as the request writes it (same words, same language, same numbers), in the \
format the parameter's description asks for; leave out parameters the request does not mention. \
If no listed tool does what the request asks, use schema A and answer it yourself. ";

const ENVELOPE_REMINDER: &str = "Answer ONLY with one JSON object (schema A or schema B).";

pub(crate) const EXCLUSIVE: &str = "content and tool_calls are exclusive: either schema A \
(final answer text and \"tool_calls\":[]) or schema B (\"content\":\"\" and tool calls), never both. \
Answer again with ONLY one JSON object.";

/// Without the question: quoted here, the 0.5B answered with the question itself (the
/// conversation set: prompt_json 6 -> 4 of 32).
pub(crate) fn tools_done_reminder(count: usize) -> String {
    format!(
        "{ENVELOPE_REMINDER} The last {count} ToolMessage(s) contain tool results. If they provide \
the requested information, answer with schema A now and set \"tool_calls\" to exactly []. \
Do not repeat the completed tool calls."
    )
}

/// After results, when the request may need more calls ([`super::Ask::next_call`]): the
/// model is asked whether work remains before it answers.
pub(crate) fn tools_done_continue_reminder(count: usize) -> String {
    format!(
        "{ENVELOPE_REMINDER} The last {count} ToolMessage(s) contain tool results. If the user's \
request still needs another tool call (a next step that uses these results), make it with schema B; \
if the results answer the request, answer with schema A, using the results, and set \"tool_calls\" \
to exactly []. Do not repeat the completed tool calls."
    )
}

pub(crate) fn steps_done_reminder(count: usize) -> String {
    format!(
        "{ENVELOPE_REMINDER} The last {count} ToolMessage(s) contain the results of the plan steps \
done so far. If work remains, call the tools for it with schema B; if the task is done, answer \
with schema A and set \"tool_calls\" to exactly []. Do not repeat the completed tool calls."
    )
}

/// The seeds' envelope rules (React and Step phases).
pub(crate) fn system(tools: &[Value], listed: &[Value], place: Listed, strategy: Strategy) -> String {
    let mut text = String::from(RULES);
    let example = example_calls(tools);
    if example.is_empty() {
        text.push_str("\nNo tools are available: always answer with schema A.");
        return text;
    }
    if strategy == Strategy::TasksFirst {
        text.push_str(&tasks_schema_b(&example[0]));
        text.push_str(use_only(place));
        push_tool_list(&mut text, listed);
        return text;
    }
    // One example call: small models copy a second example call into answers that need
    // one (the 0.5B appended the seeds' calculator("2+2") to a file_reader call).
    let calls: Vec<Value> = example.iter().take(1).map(envelope_call).collect();
    let schema_b = json!({"content": "", "tool_calls": calls});
    text.push_str("\nValid schema B (call one or more tools, content must be empty):\n");
    text.push_str(&schema_b.to_string());
    text.push_str("\nYou may include zero, one, or multiple tool_calls in the array: one call for each task the request names, and no others. ");
    text.push_str(DECIDE_RULE);
    text.push_str(ARGS_RULE);
    text.push_str(use_only(place));
    push_tool_list(&mut text, listed);
    text
}

/// Schema B of the tasks-first envelope: the tasks, each with its tool or "none", then one
/// call per task with a tool (the grammar holds the model to it).
fn tasks_schema_b(example: &ToolCall) -> String {
    let task = json!({"task": "the task in the request's own words", "tool": example.name});
    let schema_b = json!({"tasks": [task], "tool_calls": [envelope_call(example)], "content": ""});
    format!(
        "\nValid schema B (call tools): first list the tasks, one task for each call to make (a request \
that names several cities, numbers, files or people has one task for each of them), each with the listed \
tool that does exactly that task, or \"{NO_TOOL}\" when no listed tool does it (a tool for something \
similar, such as another unit, another kind of date or another action, is not the tool); then one call \
for each task that has a tool, and content empty:\n{schema_b}\nIf every task is \"{NO_TOOL}\", leave \
tool_calls empty and answer in content. Take argument values from the request exactly as it states them, \
in the format the tool's description asks for; leave out optional parameters the request does not give. "
    )
}

/// A decision as the envelope the model was asked to write.
pub(crate) fn envelope_text(ai: &AiMessage) -> String {
    let calls: Vec<Value> = ai.tool_calls.iter().map(envelope_call).collect();
    json!({"content": ai.content, "tool_calls": calls}).to_string()
}

pub(crate) fn envelope_call(call: &ToolCall) -> Value {
    let mut obj = Map::new();
    if !call.id.is_empty() {
        obj.insert("id".into(), json!(call.id));
    }
    obj.insert("name".into(), json!(call.name));
    obj.insert("args".into(), Value::Object(call.args.clone()));
    Value::Object(obj)
}

// ---------------------------------------------------------------------------------------
// Grammar

/// The envelope's grammar: schema B or schema A, keys in `order`.
pub(crate) fn lark(tools: &[Tool], order: KeyOrder) -> String {
    format!("start: %json {}\n", json_grammar(envelope_schema(tools, order)))
}

/// An envelope object with these two values, keys in `order`.
fn envelope_object(content: Value, tool_calls: Value, order: KeyOrder) -> Value {
    let mut properties = Map::new();
    match order {
        KeyOrder::ContentFirst => {
            properties.insert("content".into(), content);
            properties.insert("tool_calls".into(), tool_calls);
        }
        KeyOrder::CallsFirst => {
            properties.insert("tool_calls".into(), tool_calls);
            properties.insert("content".into(), content);
        }
    }
    let required: Vec<&String> = properties.keys().collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Schema A: a final answer with visible text and no calls.
pub(crate) fn answer_schema(order: KeyOrder) -> Value {
    envelope_object(json!({"type": "string", "pattern": r"\S"}), json!({"type": "array", "maxItems": 0}), order)
}

/// Schema B: empty content and at least one call.
fn calls_schema(tools: &[Tool], order: KeyOrder) -> Value {
    let calls = json!({"type": "array", "minItems": 1, "maxItems": MAX_CALLS, "items": any_call(tools, "args", true)});
    envelope_object(json!({"const": ""}), calls, order)
}

pub(crate) fn envelope_schema(tools: &[Tool], order: KeyOrder) -> Value {
    if tools.is_empty() {
        return answer_schema(order);
    }
    json!({"anyOf": [calls_schema(tools, order), answer_schema(order)]})
}

// ---------------------------------------------------------------------------------------
// Tasks-first grammar (the strategy's two stages)

/// The tool a task names when no offered tool does it.
pub const NO_TOOL: &str = "none";

/// Longest task text, in characters: a task restates one part of the request.
const MAX_TASK_CHARS: u64 = 160;

/// The first stage of a tasks-first envelope: `{"tasks": [{"task": "...", "tool": NAME or
/// "none"}, ...]`, one to [`MAX_CALLS`] tasks, ending at the array's `]`. The rest of the
/// answer is [`after_tasks_lark`] for the tasks written.
pub fn tasks_lark(tools: &[ToolSpec]) -> String {
    let tools = grammar_tools(tools);
    let mut names: Vec<Value> = tools.iter().map(|t| json!(t.spec.name)).collect();
    names.push(json!(NO_TOOL));
    let task = json!({
        "type": "object",
        "properties": {
            "task": {"type": "string", "minLength": 1, "maxLength": MAX_TASK_CHARS},
            "tool": {"enum": names},
        },
        "required": ["task", "tool"],
        "additionalProperties": false,
    });
    let more = MAX_CALLS - 1;
    format!(
        "start: \"{{\" WS? {tasks} WS? \":\" WS? \"[\" WS? task (WS? \",\" WS? task){{0,{more}}} WS? \"]\"\n\
task: %json {}\nWS: /{WHITESPACE}/\n",
        json_grammar(task),
        tasks = literal("\"tasks\""),
    )
}

/// The rest of a tasks-first envelope after its tasks: `, "tool_calls": [...], "content":
/// ...}` with exactly one call per entry of `chosen` (the tools the tasks named, in their
/// order; ids `call_001`...), content empty; or, when `chosen` is empty, no calls and a
/// final answer.
pub fn after_tasks_lark(tools: &[ToolSpec], chosen: &[String]) -> Result<String, ConstrainError> {
    let tools = grammar_tools(tools);
    let key = |name: &str| format!("{} WS? \":\" WS?", literal(&format!("\"{name}\"")));
    let mut out = format!("start: WS? \",\" WS? {} \"[\" WS?", key("tool_calls"));
    let mut rules = String::new();
    for (i, name) in chosen.iter().enumerate() {
        let tool = tools
            .iter()
            .find(|t| &t.spec.name == name)
            .ok_or_else(|| ConstrainError::Grammar(format!("a task names {name:?}, which is not a tool")))?;
        let call = json!({
            "type": "object",
            "properties": {
                "id": {"const": format!("call_{:03}", i + 1)},
                "name": {"const": tool.spec.name.clone()},
                "args": tool.args.clone(),
            },
            "required": ["id", "name", "args"],
            "additionalProperties": false,
        });
        if i > 0 {
            out.push_str(" WS? \",\" WS?");
        }
        out.push_str(&format!(" c{i}"));
        rules.push_str(&format!("c{i}: %json {}\n", json_grammar(call)));
    }
    out.push_str(&format!(" WS? \"]\" WS? \",\" WS? {} ", key("content")));
    if chosen.is_empty() {
        out.push_str("answer");
        rules.push_str(&format!("answer: %json {}\n", json_grammar(json!({"type": "string", "pattern": r"\S"}))));
    } else {
        out.push_str(&literal("\"\""));
    }
    out.push_str(" WS? \"}\"\n");
    out.push_str(&rules);
    out.push_str(&format!("WS: /{WHITESPACE}/\n"));
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Parsers

/// The whole text is one JSON value: the prompt_json envelope, a call, calls, a plan.
pub(super) fn strict_json(text: &str, _: &Ctx) -> Option<Result<Found, String>> {
    if !starts_json(text) {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        // Valid JSON of another shape is data the model answered with, not a decision.
        Ok(value) => interpret(vec![value], "").map(Ok),
        Err(e) => Some(Err(json_error(&e))),
    }
}

/// JSON cut off at the end of the output (max_new_tokens, a dropped closing brace),
/// closed when it broke off between values.
pub(super) fn closed_json(text: &str, _: &Ctx) -> Option<Result<Found, String>> {
    let scan = scan_json(text, true, has_shape);
    if !scan.repaired {
        return scan.cut_off.then(|| Err("JSON cut off before its end".into()));
    }
    let (values, spans): (Vec<Value>, Vec<Range<usize>>) = scan.values.into_iter().unzip();
    let outside = cut_out(text, spans.into_iter());
    interpret(values, &outside).map(Ok)
}
