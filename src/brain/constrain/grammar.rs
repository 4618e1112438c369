//! The tools schema (OpenAI function format) and the form the answer must take -> an
//! llguidance grammar in its Lark syntax, JSON parts as `%json` sub-grammars.
//!
//! Each call is a `anyOf` over the tools, one branch per tool with the name as a `const`
//! and that tool's parameters schema as the arguments, so the name and the arguments
//! always agree. Parameter objects that list `properties` are closed
//! (`additionalProperties: false`) unless the schema says otherwise; a bare
//! `{"type": "object"}` stays free-form.
//!
//! This module holds what the forms share (the tools as the grammar takes them, JSON
//! sub-grammars, call schemas); each form's own piece is in its format module
//! ([`crate::brain::format`]), chosen by [`lark`].

use serde_json::{json, Map, Value};

use crate::brain::format::{envelope, hermes, plan, xml};
pub use crate::brain::format::envelope::{after_tasks_lark, tasks_lark, NO_TOOL};
pub use crate::brain::format::{KeyOrder, NativeStyle, Target};
use crate::tools::spec::{self, ToolSpec};

/// The most calls (or plan steps) one decision may hold. Without a bound the 0.5B, asked
/// for something no tool does, went on listing calls until the token budget cut its
/// output mid-call; the loop runs the rest on the next turn.
pub const MAX_CALLS: usize = 6;

/// JSON whitespace between tokens: the model's own layout (compact or pretty), bounded so
/// that a run of blank lines cannot use up the token budget.
pub(crate) const WHITESPACE: &str = r"[\x20\x0A\x0D\x09]{1,40}";

/// One tool of the schema, with its arguments schema as the grammar takes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tool<'a> {
    pub(crate) spec: &'a ToolSpec,
    /// The arguments schema, prepared (see [`prepared`]).
    pub(crate) args: Value,
}

/// The Lark grammar for `target` over `tools`.
pub fn lark(tools: &[ToolSpec], target: Target) -> String {
    let tools = grammar_tools(tools);
    match target {
        Target::Envelope(order) => envelope::lark(&tools, order),
        Target::Plan => plan::lark(&tools),
        Target::Native(NativeStyle::Hermes) => hermes::lark(&tools),
        Target::Native(NativeStyle::Xml) => xml::lark(&tools),
    }
}

/// The JSON schema of `target` over `tools`, for a constraint that takes a schema rather
/// than a grammar (a served model's structured output); `None` for the native forms, which
/// are not JSON. It is the `%json` body of [`lark`]'s grammar for the same form.
pub fn json_schema(tools: &[ToolSpec], target: Target) -> Option<Value> {
    let tools = grammar_tools(tools);
    match target {
        Target::Envelope(order) => Some(envelope::envelope_schema(&tools, order)),
        Target::Plan => Some(plan::plan_schema(&tools)),
        Target::Native(_) => None,
    }
}

pub(crate) fn grammar_tools(tools: &[ToolSpec]) -> Vec<Tool<'_>> {
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
pub(crate) fn prepared(schema: &Value) -> Value {
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
pub(crate) fn json_grammar(mut schema: Value) -> String {
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

pub(crate) fn any_call(tools: &[Tool], args_key: &str, with_id: bool) -> Value {
    json!({"anyOf": tools.iter().map(|t| call_schema(t, args_key, with_id)).collect::<Vec<_>>()})
}

/// A Lark string literal (JSON string syntax, which the Lark lexer decodes).
pub(crate) fn literal(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests;
