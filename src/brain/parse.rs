//! Turns a model's raw text into a decision: one tolerant chain of small parsers, one per
//! output format, tried in the order of [`format::CHAIN`](super::format) (each parser lives
//! with its format there; this module runs the chain and holds what the parsers share).
//!
//! `<think>...</think>` is split off first as reasoning. Each parser either does not
//! recognise the text (`None`), decodes it (`Some(Ok)`, the first one wins), or recognises
//! its format but cannot decode it (`Some(Err)`, remembered: such an output is a
//! [`ParseError`], never silently taken as a plain answer). Text with no structure at all
//! is a final answer, and so is well-formed JSON that is no decision (data the model
//! answered with, a JSON example in a fence).
//!
//! Calls to tools not in the schema are refused: they go to [`Parsed::rejected`] with the
//! reason and are never returned. Calls without an id are numbered `call_001`, ... .
//! Content and tool calls may both be present: the caller applies the exclusivity policy.
//! An envelope carries its own content; around bare calls (Hermes, fences, JSON in text)
//! the text outside them is the content.

use std::collections::HashSet;
use std::ops::Range;

use serde_json::{Map, Value};

use super::format::plan::decode_steps;
use super::format::{Format, CHAIN};
use crate::protocol::{AiMessage, Args, Phase, Plan, PlanStep, ToolCall};
use crate::tools::spec::{self, ParamKind, SpecError, ToolSpec};

/// A decoded model output.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub content: String,
    /// Accepted calls, every one with an id.
    pub tool_calls: Vec<ToolCall>,
    /// `Some` in the Plan phase: the model's plan, or one step per call.
    pub plan: Option<Plan>,
    /// `<think>` text.
    pub reasoning: Option<String>,
    /// The format the output was recognised in (named `strict_json`, `hermes`, ...).
    pub format: Format,
    /// Calls refused, each with its reason (unknown tool, undecodable call).
    pub rejected: Vec<String>,
    /// Argument values rewritten into the notation their description names
    /// (`tool: param: old -> new`).
    pub repaired: Vec<String>,
}

impl Parsed {
    /// The decision as a message: content and calls as they came (both may be set).
    pub fn ai_message(&self) -> AiMessage {
        AiMessage { content: self.content.clone(), tool_calls: self.tool_calls.clone() }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("the model produced no answer")]
    Empty,
    /// The output has structure (JSON, tags, fences) that could not be decoded.
    #[error("{format}: {reason}")]
    Malformed { format: &'static str, reason: String },
    /// The tools schema given to read the output against does not read.
    #[error("tools schema: {0}")]
    Tools(#[from] SpecError),
}

/// Decodes one raw model output against the tools schema (OpenAI function format or bare
/// `{name, parameters}`).
pub fn parse(raw: &str, tools: &[Value], phase: Phase) -> Result<Parsed, ParseError> {
    let text = strip_end_tokens(raw);
    let (reasoning, answer) = split_think(text)?;
    let ctx = Ctx { tools: ToolSpec::parse_all(tools)? };
    match run_chain(&answer, &ctx) {
        Ok((format, found)) => Ok(finish(found, &ctx, phase, format, reasoning)),
        Err(broken) => {
            // Backslashes that are not JSON escapes (`C:\docs`) break otherwise good JSON.
            let repaired = fix_invalid_escapes(&answer).and_then(|fixed| run_chain(&fixed, &ctx).ok());
            match repaired {
                Some((format, found)) if format != Format::PlainText => {
                    Ok(finish(found, &ctx, phase, format, reasoning))
                }
                _ => Err(broken),
            }
        }
    }
}

fn run_chain(answer: &str, ctx: &Ctx) -> Result<(Format, Found), ParseError> {
    let mut broken: Option<(&'static str, String)> = None;
    for (format, parser) in CHAIN {
        match parser(answer, ctx) {
            Some(Ok(found)) => return Ok((format, found)),
            Some(Err(reason)) => {
                broken.get_or_insert((format.name(), reason));
            }
            None => {}
        }
    }
    if let Some((format, reason)) = broken {
        return Err(ParseError::Malformed { format, reason });
    }
    let content = answer.trim();
    if content.is_empty() {
        return Err(ParseError::Empty);
    }
    Ok((Format::PlainText, Found { content: content.to_string(), ..Found::default() }))
}

/// What a parser found, before tool names are checked and ids given.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub(super) content: String,
    pub(super) calls: Vec<Result<ToolCall, String>>,
    pub(super) plan: Option<FoundPlan>,
}

#[derive(Debug)]
pub(super) struct FoundPlan {
    reasoning: String,
    steps: Vec<FoundStep>,
}

#[derive(Debug)]
pub(super) struct FoundStep {
    pub(super) step: Option<usize>,
    pub(super) description: String,
    pub(super) call: Option<Result<ToolCall, String>>,
}

/// The tools, for names and parameter types.
pub(super) struct Ctx {
    tools: Vec<ToolSpec>,
}

impl Ctx {
    fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    fn tool(&self, name: &str) -> Option<&ToolSpec> {
        spec::find(&self.tools, name)
    }

    /// The type a tool's parameter is read as.
    pub(super) fn param_kind(&self, tool: &str, param: &str) -> Option<ParamKind> {
        self.tool(tool)?.param(param)?.main_kind()
    }
}

/// Checks names, numbers ids, builds the plan.
fn finish(
    found: Found,
    ctx: &Ctx,
    phase: Phase,
    format: Format,
    reasoning: Option<String>,
) -> Parsed {
    let mut rejected = Vec::new();
    let mut repaired = Vec::new();
    let mut accept = |call: Result<ToolCall, String>, label: String| match call {
        Err(reason) => {
            rejected.push(format!("{label}{reason}"));
            None
        }
        Ok(call) if ctx.tool(&call.name).is_none() => {
            let known = ctx.names().join(", ");
            rejected.push(format!("{label}{}: unknown tool (available: {known})", call.name));
            None
        }
        Ok(mut call) => {
            if let Some(tool) = ctx.tool(&call.name) {
                let notes = crate::brain::constrain::normalize_args(&mut call.args, tool);
                repaired.extend(notes.into_iter().map(|n| format!("{}: {n}", call.name)));
            }
            Some(call)
        }
    };

    let mut calls = Vec::new();
    // Per plan step: its description and the index of its call in `calls`.
    let mut steps: Vec<(Option<usize>, String, Option<usize>)> = Vec::new();
    let mut plan_reasoning = String::new();
    match found.plan {
        Some(plan) => {
            plan_reasoning = plan.reasoning;
            for (i, step) in plan.steps.into_iter().enumerate() {
                let label = format!("step {}: ", step.step.unwrap_or(i + 1));
                let index = step.call.and_then(|c| accept(c, label)).map(|c| {
                    calls.push(c);
                    calls.len() - 1
                });
                steps.push((step.step, step.description, index));
            }
        }
        None => {
            for call in found.calls {
                if let Some(call) = accept(call, String::new()) {
                    // Without a plan, each call is a step named after its tool.
                    let description = call.name.clone();
                    calls.push(call);
                    steps.push((None, description, Some(calls.len() - 1)));
                }
            }
        }
    }
    number_ids(&mut calls);

    let plan = (phase == Phase::Plan).then(|| Plan {
        reasoning: plan_reasoning,
        plan: steps
            .into_iter()
            .enumerate()
            .map(|(i, (step, description, index))| PlanStep {
                step: step.unwrap_or(i + 1),
                description,
                tool_call: index.and_then(|k| calls.get(k)).cloned(),
            })
            .collect(),
    });
    Parsed { content: found.content, tool_calls: calls, plan, reasoning, format, rejected, repaired }
}

/// Keeps given ids (unless repeated) and gives the others the next free `call_NNN`.
fn number_ids(calls: &mut [ToolCall]) {
    let mut used = HashSet::new();
    for call in calls.iter_mut() {
        let id = call.id.trim().to_string();
        if id.is_empty() || !used.insert(id.clone()) {
            call.id.clear();
        } else {
            call.id = id;
        }
    }
    let mut next = 1;
    for call in calls.iter_mut().filter(|c| c.id.is_empty()) {
        while used.contains(&format!("call_{next:03}")) {
            next += 1;
        }
        call.id = format!("call_{next:03}");
        used.insert(call.id.clone());
    }
}

// ---------------------------------------------------------------------------------------
// Before the chain

/// Drops end-of-turn tokens a decoder may leave at the end.
fn strip_end_tokens(raw: &str) -> &str {
    let mut text = raw.trim_end();
    loop {
        let stripped = ["<|im_end|>", "<|endoftext|>", "<|eot_id|>"]
            .iter()
            .find_map(|t| text.strip_suffix(t));
        match stripped {
            Some(rest) => text = rest.trim_end(),
            None => return text,
        }
    }
}

/// Splits `<think>...</think>` blocks off; a lone `</think>` (the template opened the
/// block) makes everything before it reasoning.
fn split_think(text: &str) -> Result<(Option<String>, String), ParseError> {
    let mut reasoning = Vec::new();
    let mut answer = String::new();
    let mut rest = text;
    if !rest.contains("<think>") {
        if let Some(end) = rest.find("</think>") {
            reasoning.push(rest[..end].trim().to_string());
            rest = &rest[end + "</think>".len()..];
        }
    }
    while let Some(start) = rest.find("<think>") {
        answer.push_str(&rest[..start]);
        let inner = &rest[start + "<think>".len()..];
        match inner.find("</think>") {
            Some(end) => {
                reasoning.push(inner[..end].trim().to_string());
                rest = &inner[end + "</think>".len()..];
            }
            None => {
                if answer.trim().is_empty() {
                    return Err(ParseError::Malformed {
                        format: "think",
                        reason: "the output ended inside <think> without an answer".into(),
                    });
                }
                reasoning.push(inner.trim().to_string());
                rest = "";
            }
        }
    }
    answer.push_str(rest);
    reasoning.retain(|r| !r.is_empty());
    let reasoning = (!reasoning.is_empty()).then(|| reasoning.join("\n\n"));
    Ok((reasoning, answer.trim().to_string()))
}

/// Doubles backslashes that start no JSON escape; `None` when there are none.
fn fix_invalid_escapes(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut changed = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some(&next) if "\"\\/bfnrt".contains(next) => {
                out.push(c);
                out.push(next);
                chars.next();
            }
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                if hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()) {
                    out.push(c);
                } else {
                    out.push_str("\\\\");
                    changed = true;
                }
            }
            _ => {
                out.push_str("\\\\");
                changed = true;
            }
        }
    }
    changed.then_some(out)
}

/// An XML parameter's text as the schema's type; text that does not fit stays a string
/// (validation reports it with the parameter's name).
pub(super) fn typed_value(raw: &str, kind: Option<ParamKind>) -> Value {
    // The format puts the value on its own line: one newline each side is layout.
    let text = raw.strip_prefix('\n').unwrap_or(raw);
    let text = text.strip_suffix('\n').unwrap_or(text);
    kind.and_then(|k| k.read_text(text)).unwrap_or_else(|| Value::String(text.to_string()))
}

// ---------------------------------------------------------------------------------------
// JSON shapes

enum Shape<'a> {
    Envelope(&'a Map<String, Value>),
    Plan(&'a Map<String, Value>),
    Steps(&'a [Value]),
    Call(&'a Map<String, Value>),
    Calls(&'a [Value]),
}

pub(super) fn has_shape(value: &Value) -> bool {
    classify(value).is_some()
}

fn classify(value: &Value) -> Option<Shape<'_>> {
    match value {
        Value::Object(obj) if obj.get("plan").is_some_and(Value::is_array) => Some(Shape::Plan(obj)),
        Value::Object(obj) if obj.contains_key("tool_calls") || obj.contains_key("content") => {
            Some(Shape::Envelope(obj))
        }
        Value::Object(obj) if is_call(obj) => Some(Shape::Call(obj)),
        Value::Array(items) if !items.is_empty() => {
            let objects: Option<Vec<&Map<String, Value>>> = items.iter().map(Value::as_object).collect();
            let objects = objects?;
            if objects.iter().all(|o| o.contains_key("tool_call") || o.contains_key("step")) {
                Some(Shape::Steps(items))
            } else if objects.iter().all(|o| is_call(o)) {
                Some(Shape::Calls(items))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A call written bare in text: a name and its arguments. An object with only a `name`
/// (`{"name": "Alice", "age": 3}` in an answer) is data, not a call.
pub(super) fn is_call(obj: &Map<String, Value>) -> bool {
    names_a_tool(obj)
        && (obj.get("function").is_some_and(Value::is_object)
            || ["arguments", "args", "parameters"].iter().any(|k| obj.contains_key(*k)))
}

/// Inside `<tool_call>` the tag says it is a call: a name is enough.
pub(super) fn names_a_tool(obj: &Map<String, Value>) -> bool {
    obj.get("name").is_some_and(Value::is_string)
        || obj.get("function").is_some_and(|f| f.is_string() || f.get("name").is_some())
}

/// The decision in a list of decoded values: the first envelope or plan, or else every
/// bare call with the surrounding text as content.
pub(super) fn interpret(values: Vec<Value>, outside: &str) -> Option<Found> {
    let whole = values.iter().find_map(|v| match classify(v)? {
        Shape::Envelope(obj) => Some(Found {
            content: text_of(obj.get("content")),
            calls: decode_calls(obj.get("tool_calls")),
            plan: None,
        }),
        Shape::Plan(obj) => Some(Found {
            content: text_of(obj.get("content")),
            calls: Vec::new(),
            plan: Some(FoundPlan {
                reasoning: text_of(obj.get("reasoning")),
                steps: obj.get("plan").and_then(Value::as_array).map(|s| decode_steps(s)).unwrap_or_default(),
            }),
        }),
        Shape::Steps(items) => Some(Found {
            content: String::new(),
            calls: Vec::new(),
            plan: Some(FoundPlan { reasoning: String::new(), steps: decode_steps(items) }),
        }),
        Shape::Call(_) | Shape::Calls(_) => None,
    });
    if whole.is_some() {
        return whole;
    }
    let calls: Vec<_> = values.iter().flat_map(shape_calls).collect();
    (!calls.is_empty()).then(|| Found { content: prose(outside), calls, plan: None })
}

/// The calls in a bare call or array of calls.
fn shape_calls(value: &Value) -> Vec<Result<ToolCall, String>> {
    match classify(value) {
        Some(Shape::Call(obj)) => vec![decode_call(obj)],
        Some(Shape::Calls(items)) => items.iter().filter_map(Value::as_object).map(decode_call).collect(),
        _ => Vec::new(),
    }
}

fn decode_calls(value: Option<&Value>) -> Vec<Result<ToolCall, String>> {
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(obj) => decode_call(obj),
                other => Err(format!("tool call {} is {}, not an object", i + 1, crate::protocol::json_kind(other))),
            })
            .collect(),
        Some(Value::Object(obj)) => vec![decode_call(obj)],
        // Some models write the list as a JSON string.
        Some(Value::String(s)) if starts_json(s.trim()) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Array(_) | Value::Object(_))) => decode_calls(Some(&inner)),
            _ => vec![Err("tool_calls is a string that is not JSON".into())],
        },
        Some(Value::String(s)) if s.trim().is_empty() => Vec::new(),
        Some(other) => vec![Err(format!("tool_calls is {}", crate::protocol::json_kind(other)))],
    }
}

/// Lenient call decoding: the name in `name`, `function` or `function.name`; arguments in
/// `arguments`, `args` or `parameters`, as an object or a JSON string.
pub(super) fn decode_call(obj: &Map<String, Value>) -> Result<ToolCall, String> {
    let inner = obj.get("function").and_then(Value::as_object);
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .or_else(|| obj.get("function").and_then(Value::as_str))
        .or_else(|| inner?.get("name")?.as_str())
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        return Err("a tool call without a tool name".into());
    }
    let raw_args = ["arguments", "args", "parameters"]
        .iter()
        .find_map(|k| inner.and_then(|f| f.get(*k)).or_else(|| obj.get(*k)));
    let args = match raw_args {
        None | Some(Value::Null) => Args::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(Value::String(s)) if s.trim().is_empty() => Args::new(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => map,
            _ => return Err(format!("{name}: arguments are a string that is not a JSON object")),
        },
        Some(other) => {
            return Err(format!("{name}: arguments are {}, not an object", crate::protocol::json_kind(other)))
        }
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    Ok(ToolCall { id, name, args })
}

pub(super) fn text_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Text around bare calls, as content; fence markers dropped, and debris of a broken JSON
/// wrapper (braces) is no answer.
fn prose(outside: &str) -> String {
    let text = strip_fence_markers(outside).trim().to_string();
    if text.contains('{') || text.contains('}') || text.contains("\"tool_calls\"") {
        return String::new();
    }
    text
}

// ---------------------------------------------------------------------------------------
// Text helpers

/// Whether text starts like a JSON object or an array of objects.
pub(super) fn starts_json(text: &str) -> bool {
    let rest = |s: &str| s.trim_start().chars().next();
    match text.chars().next() {
        Some('{') => matches!(rest(&text[1..]), Some('"' | '}')),
        Some('[') => matches!(rest(&text[1..]), Some('{' | ']')),
        _ => false,
    }
}

pub(super) struct Scan {
    /// Decoded values that `keep` accepted, with their byte spans.
    pub(super) values: Vec<(Value, Range<usize>)>,
    /// The last value was cut off and has been closed.
    pub(super) repaired: bool,
    /// Some JSON was cut off and could not be closed.
    pub(super) cut_off: bool,
    pub(super) first_error: Option<String>,
}

/// Decodes every JSON object (or array of objects) in the text, left to right, skipping
/// what does not decode or `keep` refuses (objects inside a refused value are tried).
pub(super) fn scan_json(text: &str, repair: bool, keep: fn(&Value) -> bool) -> Scan {
    let mut scan = Scan { values: Vec::new(), repaired: false, cut_off: false, first_error: None };
    let mut pos = 0;
    while let Some(offset) = text[pos..].find(['{', '[']) {
        let start = pos + offset;
        // `{` and `[` are one byte: start + 1 is a char boundary.
        pos = start + 1;
        let rest = &text[start..];
        if !starts_json(rest) {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) if keep(&value) => {
                let end = start + stream.byte_offset();
                scan.values.push((value, start..end));
                pos = end;
            }
            Some(Err(e)) if e.is_eof() => {
                let closed = if repair { close_cut_off(rest) } else { None };
                match closed.filter(keep) {
                    Some(value) => {
                        scan.values.push((value, start..text.len()));
                        scan.repaired = true;
                        return scan;
                    }
                    None => scan.cut_off = true,
                }
                scan.first_error.get_or_insert_with(|| json_error(&e));
            }
            Some(Err(e)) => {
                scan.first_error.get_or_insert_with(|| json_error(&e));
            }
            // Not a decision's shape: objects inside it may be one.
            Some(Ok(_)) | None => {}
        }
    }
    scan
}

/// Closes JSON that broke off at the end of the text, when it broke off after a complete
/// value (never inside a string or a number: a cut path or count must not run).
fn close_cut_off(text: &str) -> Option<Value> {
    let mut closers = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => closers.push('}'),
            '[' => closers.push(']'),
            '}' | ']' => {
                let expected = closers.pop();
                if expected != Some(c) {
                    return None;
                }
            }
            _ => {}
        }
    }
    if in_string || closers.is_empty() {
        return None;
    }
    let body = text.trim_end();
    let body = body.strip_suffix(',').unwrap_or(body).trim_end();
    if !body.ends_with(['}', ']', '"']) {
        return None;
    }
    let mut closed = body.to_string();
    closed.extend(closers.iter().rev());
    serde_json::from_str(&closed).ok()
}

pub(super) fn json_error(e: &serde_json::Error) -> String {
    if e.is_eof() {
        "JSON cut off before its end".into()
    } else {
        format!("invalid JSON: {e}")
    }
}

/// `open ... close` blocks: (outer span, inner span, closed). A block without its closing
/// tag ends at the next opening tag or at the end of the text.
pub(super) fn tag_blocks(text: &str, open: &str, close: &str) -> Vec<(Range<usize>, Range<usize>, bool)> {
    let mut blocks = Vec::new();
    let mut pos = 0;
    while let Some(offset) = text[pos..].find(open) {
        let start = pos + offset;
        let inner_start = start + open.len();
        let next_open = text[inner_start..].find(open).map(|o| inner_start + o);
        let next_close = text[inner_start..].find(close).map(|o| inner_start + o);
        let (inner_end, outer_end, closed) = match (next_close, next_open) {
            (Some(c), Some(o)) if o < c => (o, o, false),
            (Some(c), _) => (c, c + close.len(), true),
            (None, Some(o)) => (o, o, false),
            (None, None) => (text.len(), text.len(), false),
        };
        blocks.push((start..outer_end, inner_start..inner_end, closed));
        pos = outer_end;
    }
    blocks
}

pub(super) fn remove_blocks(text: &str, open: &str, close: &str) -> String {
    cut_out(text, tag_blocks(text, open, close).into_iter().map(|(outer, _, _)| outer))
}

/// The text with the given (ordered, disjoint) spans removed.
pub(super) fn cut_out(text: &str, spans: impl Iterator<Item = Range<usize>>) -> String {
    let mut out = String::new();
    let mut pos = 0;
    for span in spans {
        if span.start >= pos {
            out.push_str(text.get(pos..span.start).unwrap_or_default());
            pos = span.end;
        }
    }
    out.push_str(text.get(pos..).unwrap_or_default());
    out
}

/// The text without Markdown fence lines (```, ```json).
pub(super) fn strip_fence_markers(inner: &str) -> String {
    inner
        .lines()
        .filter(|line| !line.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<Value> {
        serde_json::from_str(include_str!("../../tests/fixtures/outputs/tools.json")).unwrap()
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        let Value::Object(args) = args else { panic!("args must be an object") };
        ToolCall { id: id.into(), name: name.into(), args }
    }

    fn react(raw: &str) -> Parsed {
        parse(raw, &tools(), Phase::React).unwrap()
    }

    fn calls(format: Format, content: &str, tool_calls: Vec<ToolCall>) -> Parsed {
        Parsed {
            content: content.into(),
            tool_calls,
            plan: None,
            reasoning: None,
            format,
            rejected: vec![],
            repaired: vec![],
        }
    }

    fn answer(format: Format, content: &str) -> Parsed {
        calls(format, content, vec![])
    }

    fn malformed(format: &'static str, reason: &str) -> ParseError {
        ParseError::Malformed { format, reason: reason.into() }
    }

    const AVAILABLE: &str = "available: file_reader, calculator, local_file_search, table_analyzer, format_converter";

    #[test]
    fn strict_envelope_with_two_calls_keeps_their_ids() {
        let raw = r#"{"content":"","tool_calls":[{"id":"call_001","name":"file_reader","args":{"path":"docs/agent_intro.txt","max_chars":2000}},{"id":"call_002","name":"calculator","args":{"expression":"2+2"}}]}"#;
        assert_eq!(
            react(raw),
            calls(
                Format::StrictJson,
                "",
                vec![
                    call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt", "max_chars": 2000})),
                    call("call_002", "calculator", json!({"expression": "2+2"})),
                ]
            )
        );
    }

    #[test]
    fn strict_schema_a_in_chinese_with_escapes() {
        let raw = "{\"content\":\"三条中文要点如下：\\n1. \\\"Agent\\\" 由模型、工具组成\\n2. \\u4e2d文\",\"tool_calls\":[]}";
        assert_eq!(
            react(raw),
            answer(Format::StrictJson, "三条中文要点如下：\n1. \"Agent\" 由模型、工具组成\n2. 中文")
        );
    }

    #[test]
    fn text_before_json_is_dropped_around_an_envelope() {
        let raw = "好的，我来读取文件。\n{\"content\":\"\",\"tool_calls\":[{\"name\":\"file_reader\",\"args\":{\"path\":\"docs/agent_intro.txt\"}}]}";
        assert_eq!(
            react(raw),
            calls(
                Format::JsonInText,
                "",
                vec![call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}))]
            )
        );
    }

    #[test]
    fn json_with_trailing_backticks() {
        let raw = "{\"content\":\"\",\"tool_calls\":[{\"name\":\"calculator\",\"args\":{\"expression\":\"3.14 * 5 - 2.5\"}}]}\n```";
        assert_eq!(
            react(raw),
            calls(Format::JsonInText, "", vec![call("call_001", "calculator", json!({"expression": "3.14 * 5 - 2.5"}))])
        );
    }

    #[test]
    fn one_call_in_a_json_fence_as_the_05b_model_answers() {
        let raw = "```json\n{\n  \"name\": \"file_reader\",\n  \"arguments\": {\n    \"path\": \"docs/agent_intro.txt\"\n  }\n}\n```";
        assert_eq!(
            react(raw),
            calls(Format::FencedJson, "", vec![call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}))])
        );
    }

    #[test]
    fn fenced_array_of_calls_with_prose_as_content() {
        let raw = "I will do all three.\n```json\n[\n  {\"name\": \"file_reader\", \"arguments\": {\"path\": \"docs/agent_intro.txt\"}},\n  {\"name\": \"calculator\", \"arguments\": {\"expression\": \"3.14 * 5\"}},\n  {\"name\": \"local_file_search\", \"arguments\": {\"query\": \"Agent\"}}\n]\n```";
        assert_eq!(
            react(raw),
            calls(
                Format::FencedJson,
                "I will do all three.",
                vec![
                    call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"})),
                    call("call_002", "calculator", json!({"expression": "3.14 * 5"})),
                    call("call_003", "local_file_search", json!({"query": "Agent"})),
                ]
            )
        );
    }

    #[test]
    fn bare_fence_holding_an_envelope_uses_its_content() {
        let raw = "Here is my answer:\n```\n{\"content\": \"巴黎\", \"tool_calls\": []}\n```\nHope it helps.";
        assert_eq!(react(raw), answer(Format::FencedJson, "巴黎"));
    }

    #[test]
    fn calls_in_several_fences() {
        let raw = "```json\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+1\"}}\n```\n\n```json\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2*3\"}}\n```";
        assert_eq!(
            react(raw),
            calls(
                Format::FencedJson,
                "",
                vec![
                    call("call_001", "calculator", json!({"expression": "1+1"})),
                    call("call_002", "calculator", json!({"expression": "2*3"})),
                ]
            )
        );
    }

    #[test]
    fn hermes_two_calls_as_qwen25_writes_them() {
        let raw = "<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"docs/agent_intro.txt\", \"max_chars\": 2000}}\n</tool_call>\n<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"3.14 * 5\"}}\n</tool_call>";
        assert_eq!(
            react(raw),
            calls(
                Format::Hermes,
                "",
                vec![
                    call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt", "max_chars": 2000})),
                    call("call_002", "calculator", json!({"expression": "3.14 * 5"})),
                ]
            )
        );
    }

    #[test]
    fn hermes_without_closing_tag_and_with_text_before() {
        let raw = "I'll read the file first.\n<tool_call>\n  {\"name\": \"file_reader\",\n   \"arguments\": {\"path\": \"docs/agent_intro.txt\"}}\n";
        assert_eq!(
            react(raw),
            calls(
                Format::Hermes,
                "I'll read the file first.",
                vec![call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}))]
            )
        );
    }

    #[test]
    fn hermes_cut_off_before_the_last_brace_is_closed() {
        let raw = "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}";
        assert_eq!(react(raw), calls(Format::Hermes, "", vec![call("call_001", "calculator", json!({"expression": "2+2"}))]));
    }

    #[test]
    fn hermes_arguments_as_a_json_string_and_a_broken_block_refused() {
        let raw = "<tool_call>{\"name\": \"calculator\", \"arguments\": \"{\\\"expression\\\": \\\"7*6\\\"}\"}</tool_call>\n<tool_call>{\"name\": calculator}</tool_call>";
        let parsed = react(raw);
        assert_eq!(
            parsed,
            Parsed {
                rejected: vec![
                    "<tool_call> block 2: invalid JSON: expected value at line 1 column 10".into()
                ],
                ..calls(Format::Hermes, "", vec![call("call_001", "calculator", json!({"expression": "7*6"}))])
            }
        );
    }

    #[test]
    fn hermes_with_nothing_decodable_is_an_error() {
        assert_eq!(
            parse("<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"docs/ag", &tools(), Phase::React),
            Err(malformed("hermes", "<tool_call> block 1: JSON cut off before its end"))
        );
    }

    #[test]
    fn qwen35_xml_as_the_seeds_builtin_run_answered() {
        let raw = "<tool_call>\n<function=file_reader>\n<parameter=path>\ndocs/agent_intro.txt\n</parameter>\n<parameter=max_chars>\n2000\n</parameter>\n</function>\n</tool_call>";
        assert_eq!(
            react(raw),
            calls(
                Format::QwenXml,
                "",
                vec![call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt", "max_chars": 2000}))]
            )
        );
    }

    #[test]
    fn xml_values_are_typed_by_the_schema() {
        let raw = "Let me analyze it.\n<tool_call>\n<function=table_analyzer>\n<parameter=path>\ndata/sample.csv\n</parameter>\n<parameter=columns>\n[\"city\", \"sales\"]\n</parameter>\n<parameter=describe>\nTrue\n</parameter>\n<parameter=threshold>\n0.75\n</parameter>\n<parameter=options>\n{\"sep\": \",\"}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=file_reader>\n<parameter=path>\n  两个空格.txt\n</parameter>\n<parameter=max_chars>\nmany\n</parameter>\n</function>\n</tool_call>";
        assert_eq!(
            react(raw),
            calls(
                Format::QwenXml,
                "Let me analyze it.",
                vec![
                    call(
                        "call_001",
                        "table_analyzer",
                        json!({"path": "data/sample.csv", "columns": ["city", "sales"], "describe": true, "threshold": 0.75, "options": {"sep": ","}})
                    ),
                    // Strings keep their inner spaces; a value that does not fit its type
                    // stays text for validation to report.
                    call("call_002", "file_reader", json!({"path": "  两个空格.txt", "max_chars": "many"})),
                ]
            )
        );
    }

    #[test]
    fn xml_without_closing_tags_before_the_end_tag() {
        let raw = "<tool_call>\n<function=calculator>\n<parameter=expression>\n3.14 * 5\n</tool_call>";
        assert_eq!(
            react(raw),
            calls(Format::QwenXml, "", vec![call("call_001", "calculator", json!({"expression": "3.14 * 5"}))])
        );
    }

    #[test]
    fn xml_cut_off_inside_a_parameter_is_an_error() {
        assert_eq!(
            parse("<tool_call>\n<function=file_reader>\n<parameter=path>\ndocs/age", &tools(), Phase::React),
            Err(malformed("qwen_xml", "file_reader: the output ended inside a parameter"))
        );
    }

    #[test]
    fn bare_call_and_lenient_names_and_arguments() {
        assert_eq!(
            react("{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}"),
            calls(Format::StrictJson, "", vec![call("call_001", "calculator", json!({"expression": "2+2"}))])
        );
        let raw = r#"[{"type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"1+1\"}"}},{"function":"local_file_search","parameters":{"query":"Agent"}},{"id":"x7","name":"file_reader","args":{"path":"a.txt"}}]"#;
        assert_eq!(
            react(raw),
            calls(
                Format::StrictJson,
                "",
                vec![
                    call("call_001", "calculator", json!({"expression": "1+1"})),
                    call("call_002", "local_file_search", json!({"query": "Agent"})),
                    call("x7", "file_reader", json!({"path": "a.txt"})),
                ]
            )
        );
    }

    #[test]
    fn several_bare_calls_in_text() {
        let raw = "Calling:\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+1\"}}\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}";
        assert_eq!(
            react(raw),
            calls(
                Format::JsonInText,
                "Calling:",
                vec![
                    call("call_001", "calculator", json!({"expression": "1+1"})),
                    call("call_002", "calculator", json!({"expression": "2+2"})),
                ]
            )
        );
    }

    #[test]
    fn unknown_tools_are_refused_with_a_reason() {
        let raw = r#"{"content":"","tool_calls":[{"name":"web_search","args":{"q":"x"}},{"name":"calculator","args":{"expression":"2+2"}},{"args":{}}]}"#;
        assert_eq!(
            react(raw),
            Parsed {
                rejected: vec![
                    format!("web_search: unknown tool ({AVAILABLE})"),
                    "a tool call without a tool name".into(),
                ],
                ..calls(Format::StrictJson, "", vec![call("call_001", "calculator", json!({"expression": "2+2"}))])
            }
        );
    }

    #[test]
    fn content_and_calls_together_are_returned_as_they_are() {
        let raw = r#"{"content":"我来帮你计算 3.14 * 5 - 2.5 = 13.2","tool_calls":[{"id":"call_001","name":"calculator","args":{"expression":"3.14 * 5 - 2.5"}}]}"#;
        assert_eq!(
            react(raw),
            calls(
                Format::StrictJson,
                "我来帮你计算 3.14 * 5 - 2.5 = 13.2",
                vec![call("call_001", "calculator", json!({"expression": "3.14 * 5 - 2.5"}))]
            )
        );
    }

    #[test]
    fn json_data_in_an_answer_is_not_a_call() {
        let raw = "示例：\n```json\n{\"name\": \"Alice\", \"age\": 3}\n```";
        assert_eq!(react(raw), answer(Format::PlainText, raw));
    }

    #[test]
    fn a_tagged_call_needs_no_arguments_and_fences_around_tags_are_no_content() {
        let raw = "```xml\n<tool_call>\n{\"name\": \"calculator\"}\n</tool_call>\n```";
        assert_eq!(react(raw), calls(Format::Hermes, "", vec![call("call_001", "calculator", json!({}))]));
    }

    #[test]
    fn plain_text_is_a_final_answer() {
        assert_eq!(react("  法国的首都是巴黎。\n"), answer(Format::PlainText, "法国的首都是巴黎。"));
        assert_eq!(react("集合 {1, 2} 的并集是 {1, 2, 3}"), answer(Format::PlainText, "集合 {1, 2} 的并集是 {1, 2, 3}"));
        let code = "Use this:\n```python\nprint({\"a\": 1})\n```";
        assert_eq!(react(code), answer(Format::PlainText, code));
        assert_eq!(react("Paris<|im_end|>"), answer(Format::PlainText, "Paris"));
    }

    #[test]
    fn empty_output_is_an_error() {
        assert_eq!(parse("  \n<|im_end|>", &tools(), Phase::React), Err(ParseError::Empty));
        assert_eq!(parse("<think>hmm</think>\n", &tools(), Phase::React), Err(ParseError::Empty));
    }

    #[test]
    fn think_blocks_are_kept_apart() {
        let raw = "<think>\n用户想读取文件。\n</think>\n\n{\"content\":\"\",\"tool_calls\":[{\"name\":\"file_reader\",\"args\":{\"path\":\"docs/agent_intro.txt\"}}]}";
        assert_eq!(
            react(raw),
            Parsed {
                reasoning: Some("用户想读取文件。".into()),
                ..calls(Format::StrictJson, "", vec![call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}))])
            }
        );
        // The template opened the block: only its end is in the output.
        assert_eq!(
            react("The user greets me.\n</think>\n\nHello!"),
            Parsed { reasoning: Some("The user greets me.".into()), ..answer(Format::PlainText, "Hello!") }
        );
        assert_eq!(
            parse("<think>\nstill thinking when max_new_tokens hit", &tools(), Phase::React),
            Err(malformed("think", "the output ended inside <think> without an answer"))
        );
    }

    #[test]
    fn truncated_json_without_a_recoverable_call_is_an_error() {
        let raw = r#"{"content":"","tool_calls":[{"name":"file_reader","args":{"path":"docs/ag"#;
        assert_eq!(
            parse(raw, &tools(), Phase::React),
            Err(malformed("strict_json", "JSON cut off before its end"))
        );
        let number = r#"{"content":"","tool_calls":[{"name":"file_reader","args":{"path":"a.txt","max_chars":20"#;
        assert_eq!(
            parse(number, &tools(), Phase::React),
            Err(malformed("strict_json", "JSON cut off before its end"))
        );
    }

    #[test]
    fn json_cut_off_between_values_is_closed() {
        let raw = r#"{"content":"","tool_calls":[{"name":"file_reader","args":{"path":"docs/agent_intro.txt"}}"#;
        assert_eq!(
            react(raw),
            calls(Format::ClosedJson, "", vec![call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}))])
        );
    }

    #[test]
    fn complete_calls_before_a_cut_off_one_are_kept() {
        let raw = r#"{"content":"","tool_calls":[{"name":"calculator","args":{"expression":"1+1"}},{"name":"file_reader","args":{"path":"docs/ag"#;
        assert_eq!(
            react(raw),
            calls(Format::JsonInText, "", vec![call("call_001", "calculator", json!({"expression": "1+1"}))])
        );
    }

    #[test]
    fn backslashes_that_are_no_escapes_are_repaired() {
        let raw = r#"{"content":"","tool_calls":[{"name":"file_reader","args":{"path":"C:\docs\agent.txt"}}]}"#;
        assert_eq!(
            react(raw),
            calls(Format::StrictJson, "", vec![call("call_001", "file_reader", json!({"path": "C:\\docs\\agent.txt"}))])
        );
    }

    #[test]
    fn json_that_is_no_decision_is_the_answer_text() {
        let raw = r#"{"answer": "Paris"}"#;
        assert_eq!(react(raw), answer(Format::PlainText, raw));
    }

    #[test]
    fn ids_are_kept_and_the_rest_numbered_without_clashes() {
        let raw = r#"{"tool_calls":[{"name":"calculator","args":{"expression":"1"}},{"id":"call_001","name":"calculator","args":{"expression":"2"}},{"id":"call_001","name":"calculator","args":{"expression":"3"}}]}"#;
        assert_eq!(
            react(raw),
            calls(
                Format::StrictJson,
                "",
                vec![
                    call("call_002", "calculator", json!({"expression": "1"})),
                    call("call_001", "calculator", json!({"expression": "2"})),
                    call("call_003", "calculator", json!({"expression": "3"})),
                ]
            )
        );
    }

    fn plan_of(reasoning: &str, steps: Vec<(usize, &str, Option<ToolCall>)>) -> Plan {
        Plan {
            reasoning: reasoning.into(),
            plan: steps
                .into_iter()
                .map(|(step, description, tool_call)| PlanStep { step, description: description.into(), tool_call })
                .collect(),
        }
    }

    #[test]
    fn plan_with_reasoning_as_the_seeds_model_wrote_it() {
        let raw = r#"{"reasoning": "First read the file, then search.", "plan": [{"step": 1, "description": "Read the agent intro file", "tool_call": {"id": "call_001", "name": "file_reader", "args": {"path": "docs/agent_intro.txt", "max_chars": 2000}}}, {"step": 2, "description": "Search for files containing 'Agent'", "tool_call": {"id": "call_002", "name": "local_file_search", "args": {"query": "Agent", "max_results": 5}}}]}"#;
        let read = call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt", "max_chars": 2000}));
        let search = call("call_002", "local_file_search", json!({"query": "Agent", "max_results": 5}));
        assert_eq!(
            parse(raw, &tools(), Phase::Plan).unwrap(),
            Parsed {
                plan: Some(plan_of(
                    "First read the file, then search.",
                    vec![
                        (1, "Read the agent intro file", Some(read.clone())),
                        (2, "Search for files containing 'Agent'", Some(search.clone())),
                    ]
                )),
                ..calls(Format::StrictJson, "", vec![read, search])
            }
        );
    }

    #[test]
    fn plan_as_a_bare_array_of_steps_in_a_fence_with_an_unknown_tool() {
        let raw = "```json\n[{\"step\": 1, \"description\": \"读取文档\", \"tool_call\": {\"name\": \"file_reader\", \"arguments\": {\"path\": \"docs/agent_intro.txt\"}}}, {\"step\": 2, \"description\": \"搜索网页\", \"tool_call\": {\"name\": \"web_search\", \"args\": {\"q\": \"Agent\"}}}, {\"step\": 3, \"description\": \"计算\", \"name\": \"calculator\", \"args\": {\"expression\": \"3.14 * 5\"}}]\n```";
        let read = call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}));
        let calc = call("call_002", "calculator", json!({"expression": "3.14 * 5"}));
        assert_eq!(
            parse(raw, &tools(), Phase::Plan).unwrap(),
            Parsed {
                plan: Some(plan_of(
                    "",
                    vec![(1, "读取文档", Some(read.clone())), (2, "搜索网页", None), (3, "计算", Some(calc.clone()))]
                )),
                rejected: vec![format!("step 2: web_search: unknown tool ({AVAILABLE})")],
                repaired: vec![],
                ..calls(Format::FencedJson, "", vec![read, calc])
            }
        );
    }

    #[test]
    fn plan_phase_envelope_becomes_one_step_per_call() {
        let raw = "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>";
        let calc = call("call_001", "calculator", json!({"expression": "2+2"}));
        let read = call("call_002", "file_reader", json!({"path": "a.txt"}));
        assert_eq!(
            parse(raw, &tools(), Phase::Plan).unwrap(),
            Parsed {
                plan: Some(plan_of(
                    "",
                    vec![(1, "calculator", Some(calc.clone())), (2, "file_reader", Some(read.clone()))]
                )),
                ..calls(Format::Hermes, "", vec![calc, read])
            }
        );
        assert_eq!(
            parse(r#"{"content":"巴黎","tool_calls":[]}"#, &tools(), Phase::Plan).unwrap(),
            Parsed { plan: Some(plan_of("", vec![])), ..answer(Format::StrictJson, "巴黎") }
        );
    }

    /// Outputs cut off at every character (max_new_tokens can stop anywhere) parse or fail
    /// cleanly, and never return a call to an unknown tool or without an id.
    #[test]
    fn every_prefix_of_real_shaped_outputs_is_handled() {
        let outputs = [
            "<think>想一想</think>\n<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"文档/介绍.txt\"}}\n</tool_call>",
            "<tool_call>\n<function=table_analyzer>\n<parameter=path>\n数据.csv\n</parameter>\n<parameter=columns>\n[\"a\"]\n</parameter>\n</function>\n</tool_call>",
            "好的：```json\n{\"content\":\"\",\"tool_calls\":[{\"name\":\"web_search\",\"args\":{}},{\"name\":\"calculator\",\"args\":{\"expression\":\"1+1\"}}]}\n```",
            "{\"reasoning\":\"先读\",\"plan\":[{\"step\":1,\"description\":\"读\",\"tool_call\":{\"name\":\"file_reader\",\"args\":{\"path\":\"C:\\docs\"}}}]}",
        ];
        let tools = tools();
        let ctx = Ctx { tools: ToolSpec::parse_all(&tools).unwrap() };
        for output in outputs {
            for (cut, _) in output.char_indices() {
                for phase in [Phase::React, Phase::Plan] {
                    if let Ok(parsed) = parse(&output[..cut], &tools, phase) {
                        for call in &parsed.tool_calls {
                            assert!(!call.id.is_empty() && ctx.tool(&call.name).is_some(), "{cut}: {parsed:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_chain_order_is_written_down_once() {
        let names: Vec<&str> = CHAIN.iter().map(|(format, _)| format.name()).collect();
        assert_eq!(names, ["strict_json", "qwen_xml", "hermes", "fenced_json", "closed_json", "json_in_text"]);
    }
}
