//! The tools schema (OpenAI function format) and the form the answer must take -> an
//! llguidance grammar in its Lark syntax, JSON parts as `%json` sub-grammars.
//!
//! Each call is a `anyOf` over the tools, one branch per tool with the name as a `const`
//! and that tool's parameters schema as the arguments, so the name and the arguments
//! always agree. Parameter objects that list `properties` are closed
//! (`additionalProperties: false`) unless the schema says otherwise; a bare
//! `{"type": "object"}` stays free-form.

use serde_json::{json, Map, Value};

use super::ConstrainError;
use crate::tools::spec::{self, ParamKind, Schema, ToolSpec};

/// What the whole answer must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The prompt_json envelope (React and Step phases): `{"content": "", "tool_calls":
    /// [one or more calls]}` or `{"content": "answer", "tool_calls": []}`, keys in this order.
    Envelope(KeyOrder),
    /// The model's own format (builtin, React): a plain answer, or tool-call blocks only.
    Native(NativeStyle),
    /// The plan object `{"reasoning": ..., "plan": [{"step", "description", "tool_call"}]}`,
    /// or the envelope's plain answer when no tool is needed (as the plan prompt allows).
    Plan,
}

/// Which envelope key the model writes, and so decides, first. With content first, a
/// model that starts by restating the task has made it an answer before it reaches its
/// calls, and the exclusive envelope then leaves it none; the 0.5B model does exactly that
/// on a fresh request (`{"content": "3.14 * 5 - 2.5", "tool_calls": [calculator]}` when
/// free). So a fresh request puts the calls first; after tool results, where the expected
/// decision is the answer, the content comes first as in the prompt's schema A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    ContentFirst,
    CallsFirst,
}

/// How a model writes its native tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeStyle {
    /// `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>` (Qwen2.5, Hermes).
    Hermes,
    /// `<tool_call>\n<function=NAME>\n<parameter=KEY>\nvalue\n</parameter>\n</function>\n</tool_call>`
    /// (Qwen3-Coder).
    Xml,
}

impl NativeStyle {
    /// The style a chat template teaches: XML when the template writes `<function=`.
    pub fn of_template(source: &str) -> Self {
        if source.contains("<function=") {
            NativeStyle::Xml
        } else {
            NativeStyle::Hermes
        }
    }
}

/// The most calls (or plan steps) one decision may hold. Without a bound the 0.5B, asked
/// for something no tool does, went on listing calls until the token budget cut its
/// output mid-call; the loop runs the rest on the next turn.
pub const MAX_CALLS: usize = 6;

/// JSON whitespace between tokens: the model's own layout (compact or pretty), bounded so
/// that a run of blank lines cannot use up the token budget.
const WHITESPACE: &str = r"[\x20\x0A\x0D\x09]{1,40}";

/// Whitespace between tags in the native formats.
const TAG_SEPARATOR: &str = r"/[ \t\r\n]{1,8}/";

/// A native plain answer: some visible text, and nothing a parser would read as a call or
/// as reasoning (no `{`, no tool-call or think tags), not opening with a JSON fence (that
/// is the fenced-calls form).
const NATIVE_ANSWER: &str = r"/(?s:[^{]*[^{\s][^{]*)/ & ~/(?s:.*(<tool_call|tool_call>|<function=|<think>|<\/think>).*)/ & ~/(?s:\s*```(json)?[ \t]*\n.*)/";

/// The opening of a fenced JSON block.
const FENCE_OPEN: &str = r"/```(json)?[ \t]*\n/";

/// One tool of the schema, with its arguments schema as the grammar takes it.
#[derive(Clone, Debug, PartialEq)]
struct Tool<'a> {
    spec: &'a ToolSpec,
    /// The arguments schema, prepared (see [`prepared`]).
    args: Value,
}

/// The Lark grammar for `target` over `tools`.
pub fn lark(tools: &[ToolSpec], target: Target) -> String {
    let tools = grammar_tools(tools);
    match target {
        Target::Envelope(order) => format!("start: %json {}\n", json_grammar(envelope_schema(&tools, order))),
        Target::Plan => format!("start: %json {}\n", json_grammar(plan_schema(&tools))),
        Target::Native(NativeStyle::Hermes) => hermes_lark(&tools),
        Target::Native(NativeStyle::Xml) => xml_lark(&tools),
    }
}

fn grammar_tools(tools: &[ToolSpec]) -> Vec<Tool<'_>> {
    let mut out: Vec<Tool> = Vec::new();
    for spec in tools {
        // A repeated name: the first definition is the tool (as a dispatcher keyed by name sees it).
        if out.iter().all(|t| t.spec.name != spec.name) {
            out.push(Tool { spec, args: prepared(spec.parameters()) });
        }
    }
    out
}

/// A schema as the grammar takes it: every object that lists `properties` and says
/// nothing about other keys closed (`additionalProperties: false`, so the model cannot
/// invent parameters), the format a string's description names as its pattern
/// ([`super::formats`]), and plain strings bounded.
fn prepared(schema: &Value) -> Value {
    let mut out = schema.clone();
    spec::for_each_raw(&mut out, &mut |map| {
        if map.contains_key("properties") && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        super::formats::add_pattern(map);
        bound_string(map);
    });
    out
}

/// Longest string argument, in characters, where the schema sets no bound of its own.
/// Greedy small models can loop inside a string ("cos(30) * sin(45) + cos(30) * ..."):
/// unbounded, such a loop runs into the token budget and cuts the decision mid-call, so it
/// no longer parses. 256 characters is far beyond a path, query or expression and keeps a
/// few calls inside the profiles' 512-token budget.
pub const MAX_STRING_CHARS: u64 = 256;

/// Gives a plain string schema without a length bound of its own a `maxLength` of
/// [`MAX_STRING_CHARS`] (after [`super::formats::add_pattern`]: a pattern bounds it).
fn bound_string(map: &mut Map<String, Value>) {
    if super::formats::is_plain_string(map) && !map.contains_key("maxLength") {
        map.insert("maxLength".into(), json!(MAX_STRING_CHARS));
    }
}

/// The schema as a `%json` body, with the whitespace rule, `\uXXXX` for any character (the
/// model's own way of writing it; llguidance keeps `\u` to control characters in strings
/// that have a pattern, like the answer's content, and has no `\/`), and
/// lenient handling of keywords llguidance does not implement (ignored with a warning
/// rather than failing the decision).
fn json_grammar(mut schema: Value) -> String {
    if let Value::Object(map) = &mut schema {
        map.insert(
            "x-guidance".into(),
            json!({
                "whitespace_pattern": WHITESPACE,
                "lenient": true,
                "json_allow_general_unicode_escapes": true,
            }),
        );
    }
    schema.to_string()
}

/// A call object: `{"id"?: string, "name": NAME, <args_key>: ARGS}`, keys in that order.
fn call_schema(tool: &Tool, args_key: &str, with_id: bool) -> Value {
    let mut properties = Map::new();
    if with_id {
        // The prompt's ids: with free ids the 0.5B names a call after its tool and goes on
        // to list every tool the system message mentions.
        properties.insert("id".into(), json!({"type": "string", "pattern": "^call_[0-9]{3}$"}));
    }
    properties.insert("name".into(), json!({"const": tool.spec.name}));
    properties.insert(args_key.into(), tool.args.clone());
    json!({
        "type": "object",
        "properties": properties,
        "required": ["name", args_key],
        "additionalProperties": false,
    })
}

fn any_call(tools: &[Tool], args_key: &str, with_id: bool) -> Value {
    json!({"anyOf": tools.iter().map(|t| call_schema(t, args_key, with_id)).collect::<Vec<_>>()})
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
fn answer_schema(order: KeyOrder) -> Value {
    envelope_object(json!({"type": "string", "pattern": r"\S"}), json!({"type": "array", "maxItems": 0}), order)
}

/// Schema B: empty content and at least one call.
fn calls_schema(tools: &[Tool], order: KeyOrder) -> Value {
    let calls = json!({"type": "array", "minItems": 1, "maxItems": MAX_CALLS, "items": any_call(tools, "args", true)});
    envelope_object(json!({"const": ""}), calls, order)
}

fn envelope_schema(tools: &[Tool], order: KeyOrder) -> Value {
    if tools.is_empty() {
        return answer_schema(order);
    }
    json!({"anyOf": [calls_schema(tools, order), answer_schema(order)]})
}

fn plan_schema(tools: &[Tool]) -> Value {
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

/// A Lark string literal (JSON string syntax, which the Lark lexer decodes).
fn literal(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// `start` of the native formats: an answer; or one or more call blocks; or one or more
/// ```` ```json ```` fences each holding a call or an array of calls (Hermes-style
/// `{"name", "arguments"}`). Whitespace between and after blocks, nothing else.
///
/// The fences are there because small models write their calls that way despite the
/// template (`MODELS.md`; the parser reads them): barred from them, the 0.5B model wrote
/// its calls as lists or YAML in a fence, a useless answer; allowed, it keeps its own
/// format and the calls are checked like any other.
fn native_start(tools: &[Tool], call_rule: &str) -> String {
    let mut out = String::new();
    if tools.is_empty() {
        out.push_str("start: ANSWER\n");
    } else {
        out.push_str("start: ANSWER | calls | fences\n");
        let more = MAX_CALLS - 1;
        out.push_str(&format!("calls: call (SEP? call){{0,{more}}} SEP?\n"));
        out.push_str(call_rule);
        out.push_str(&format!("fences: fence (SEP? fence){{0,{more}}} SEP?\n"));
        out.push_str("fence: FENCE_OPEN fenced_calls SEP? \"```\"\n");
        let fenced = json!({"anyOf": [any_call(tools, "arguments", false), {"type": "array", "minItems": 1, "maxItems": MAX_CALLS, "items": any_call(tools, "arguments", false)}]});
        out.push_str(&format!("fenced_calls: %json {}\n", json_grammar(fenced)));
        out.push_str(&format!("FENCE_OPEN: {FENCE_OPEN}\n"));
        out.push_str(&format!("SEP: {TAG_SEPARATOR}\n"));
    }
    out.push_str(&format!("ANSWER: {NATIVE_ANSWER}\n"));
    out
}

fn hermes_lark(tools: &[Tool]) -> String {
    let mut out = native_start(tools, "call: \"<tool_call>\" SEP? call_json SEP? \"</tool_call>\"\n");
    if !tools.is_empty() {
        out.push_str(&format!("call_json: %json {}\n", json_grammar(any_call(tools, "arguments", false))));
    }
    out
}

/// Qwen3-Coder's XML calls: parameters in the schema's order, required ones present,
/// each value typed by its schema (strings run to `</parameter>`).
fn xml_lark(tools: &[Tool]) -> String {
    let mut out = native_start(tools, "call: \"<tool_call>\" SEP? function SEP? \"</tool_call>\"\n");
    if tools.is_empty() {
        return out;
    }
    let functions: Vec<String> = (0..tools.len()).map(|i| format!("f{i}")).collect();
    out.push_str(&format!("function: {}\n", functions.join(" | ")));
    let mut needs_newline = false;
    for (i, tool) in tools.iter().enumerate() {
        let mut params = String::new();
        for (j, param) in tool.spec.params().iter().enumerate() {
            let rule = format!("f{i}p{j}");
            params.push(' ');
            params.push_str(&rule);
            if !tool.spec.required().contains(&param.name) {
                params.push('?');
            }
            let open = literal(&format!("<parameter={}>", param.name));
            match xml_value(&param.schema) {
                XmlValue::Text => {
                    out.push_str(&format!("{rule}: {open} {rule}v SEP?\n"));
                    out.push_str(&format!("{rule}v[suffix=\"</parameter>\"]: /(?s:.*)/\n"));
                }
                XmlValue::Choices(choices) => {
                    needs_newline = true;
                    let choices: Vec<String> = choices.iter().map(|c| literal(c)).collect();
                    out.push_str(&format!("{rule}: {open} NL? ({}) NL? \"</parameter>\" SEP?\n", choices.join(" | ")));
                }
                XmlValue::Json(schema) => {
                    needs_newline = true;
                    out.push_str(&format!("{rule}: {open} NL? {rule}v NL? \"</parameter>\" SEP?\n"));
                    out.push_str(&format!("{rule}v: %json {}\n", json_grammar(schema)));
                }
            }
        }
        let open = literal(&format!("<function={}>", tool.spec.name));
        out.push_str(&format!("f{i}: {open} SEP?{params} \"</function>\"\n"));
    }
    if needs_newline {
        out.push_str("NL: /\\n/\n");
    }
    out
}

enum XmlValue {
    /// Free text up to `</parameter>`.
    Text,
    /// One of these strings, as they are.
    Choices(Vec<String>),
    /// A JSON value of this schema (numbers, booleans, arrays, objects).
    Json(Value),
}

fn xml_value(schema: &Schema) -> XmlValue {
    let strings = |list: &Vec<Value>| -> Option<Vec<String>> { list.iter().map(|v| v.as_str().map(str::to_string)).collect() };
    if let Some(choices) = schema.enum_values.as_ref().and_then(strings) {
        return XmlValue::Choices(choices);
    }
    if let Some(Value::String(only)) = &schema.constant {
        return XmlValue::Choices(vec![only.clone()]);
    }
    match schema.kinds.as_slice() {
        // Values are bare text here, and the parser reads booleans in any case.
        [ParamKind::Boolean] => XmlValue::Choices(["true", "false", "True", "False"].map(String::from).to_vec()),
        [ParamKind::Integer | ParamKind::Number | ParamKind::Array | ParamKind::Object] => XmlValue::Json(prepared(&schema.raw)),
        _ => XmlValue::Text,
    }
}

#[cfg(test)]
mod tests;
