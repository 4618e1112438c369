//! The OpenAI chat-completions API as JSON: the request body a decision sends, the
//! server-sent events it streams back, and the error bodies servers answer with. No I/O
//! here (that is [`super::client`]), so each piece is tested on its own.

use serde_json::{json, Map, Value};

use crate::brain::config::{Profile, ServerKind};
use crate::protocol::{Message, ToolMessage};
use crate::text::one_line as cut;

/// How a constrained decision restricts the server's output.
#[derive(Clone, Debug, PartialEq)]
pub enum Constraint {
    /// A JSON schema of the whole answer (the envelope or the plan).
    JsonSchema(Value),
    /// Our llguidance Lark grammar, as vLLM's guidance backend takes it.
    Lark(String),
}

/// The request body of one decision: the prompt messages (see [`messages`]), builtin's
/// tools, the profile's generation settings, streaming with usage, and the constraint in
/// the form `server` takes.
pub fn body(profile: &Profile, model: &str, messages: Vec<Value>, tools: Option<&[Value]>, constraint: Option<&Constraint>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = tools.filter(|t| !t.is_empty()) {
        body.insert("tools".into(), json!(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("max_tokens".into(), json!(profile.max_new_tokens));
    if profile.do_sample && profile.temperature > 1e-7 {
        body.insert("temperature".into(), json!(profile.temperature));
        body.insert("top_p".into(), json!(profile.top_p));
    } else {
        // Greedy, as the in-process brain decodes by default.
        body.insert("temperature".into(), json!(0.0));
        body.insert("top_p".into(), json!(1.0));
    }
    body.insert("seed".into(), json!(profile.seed));
    if matches!(profile.server, ServerKind::LlamaCpp | ServerKind::LlamaCppPython) {
        // llama.cpp penalizes repeats by default (1.1 in llama-cpp-python): a decision that
        // repeats a path or a number from the question must not be pushed off it.
        body.insert("repeat_penalty".into(), json!(1.0));
    }
    if let Some(constraint) = constraint {
        for (key, value) in constraint_fields(profile.server, constraint) {
            body.insert(key, value);
        }
    }
    Value::Object(body)
}

/// The fields that carry `constraint` to a `server`. A Lark grammar only goes to vLLM
/// (the caller asks for one only there); a schema goes where each server takes one.
pub fn constraint_fields(server: ServerKind, constraint: &Constraint) -> Map<String, Value> {
    let mut out = Map::new();
    match (constraint, server) {
        (Constraint::Lark(grammar), _) => {
            out.insert("structured_outputs".into(), json!({"grammar": grammar}));
        }
        (Constraint::JsonSchema(schema), ServerKind::LlamaCpp) => {
            out.insert("json_schema".into(), for_llama_cpp(schema));
        }
        (Constraint::JsonSchema(schema), ServerKind::LlamaCppPython) => {
            out.insert("response_format".into(), json!({"type": "json_object", "schema": for_llama_cpp(schema)}));
        }
        (Constraint::JsonSchema(schema), ServerKind::Vllm) => {
            out.insert("structured_outputs".into(), json!({"json": schema}));
        }
        (Constraint::JsonSchema(schema), ServerKind::Generic | ServerKind::Sglang | ServerKind::Ollama) => {
            out.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "decision", "schema": schema, "strict": true}}),
            );
        }
    }
    out
}

/// `schema` as llama.cpp's schema-to-grammar converter reads it. It takes only patterns
/// anchored with `^...$` and, given any other, drops the whole schema for plain JSON
/// without a word (seen with llama-cpp-python 0.3.36); it reads `maxItems: 0` as no
/// bound. So an unanchored pattern becomes `minLength: 1` when it only asks for a visible
/// character (the answer's `\S`) and is dropped otherwise, and an array of at most none
/// becomes the constant `[]`.
pub fn for_llama_cpp(schema: &Value) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(for_llama_cpp).collect()),
        Value::Object(map) => {
            let mut out: Map<String, Value> = map.iter().map(|(k, v)| (k.clone(), for_llama_cpp(v))).collect();
            if let Some(Value::String(pattern)) = out.get("pattern") {
                if !(pattern.starts_with('^') && pattern.ends_with('$')) {
                    if pattern == r"\S" {
                        out.insert("minLength".into(), json!(1));
                    }
                    out.remove("pattern");
                }
            }
            if out.get("type") == Some(&json!("array")) && out.get("maxItems") == Some(&json!(0)) {
                out.remove("type");
                out.remove("maxItems");
                out.insert("const".into(), json!([]));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The prompt messages (Hugging Face chat messages, as [`crate::brain::prompt::build`]
/// makes them) in the API's shape: each tool message gets the id of the call it answers
/// and each assistant call its id and its arguments as a JSON string, both taken in order
/// from `conversation`, the messages the prompt was built from.
pub fn messages(built: &[Value], conversation: &[Message]) -> Vec<Value> {
    let mut tool_ids = conversation.iter().filter_map(|m| match m {
        Message::Tool(ToolMessage { tool_call_id, .. }) => Some(tool_call_id.clone()),
        _ => None,
    });
    let mut call_ids = conversation.iter().filter_map(|m| match m {
        Message::Assistant(ai) if !ai.tool_calls.is_empty() => Some(ai.tool_calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>()),
        _ => None,
    });
    let mut tools_seen = 0;
    built
        .iter()
        .map(|message| {
            let mut message = message.clone();
            let Some(map) = message.as_object_mut() else { return message };
            match map.get("role").and_then(Value::as_str) {
                Some("tool") => {
                    tools_seen += 1;
                    let id = tool_ids.next().unwrap_or_else(|| format!("call_{tools_seen:03}"));
                    map.insert("tool_call_id".into(), json!(id));
                }
                Some("assistant") => {
                    let ids = map.get("tool_calls").is_some().then(|| call_ids.next()).flatten().unwrap_or_default();
                    if let Some(Value::Array(calls)) = map.get_mut("tool_calls") {
                        for (i, call) in calls.iter_mut().enumerate() {
                            api_call(call, ids.get(i).cloned().unwrap_or_else(|| format!("call_{:03}", i + 1)));
                        }
                    }
                }
                _ => {}
            }
            message
        })
        .collect()
}

/// One assistant call in the API's shape: an id, and the arguments as a JSON string.
fn api_call(call: &mut Value, id: String) {
    let Some(map) = call.as_object_mut() else { return };
    map.insert("id".into(), json!(id));
    map.insert("type".into(), json!("function"));
    if let Some(function) = map.get_mut("function").and_then(Value::as_object_mut) {
        if let Some(arguments) = function.get("arguments").filter(|a| !a.is_string()) {
            let text = arguments.to_string();
            function.insert("arguments".into(), json!(text));
        }
    }
}

/// Splits a server-sent event stream into the `data:` payloads of its events, however
/// the bytes arrive.
#[derive(Default)]
pub struct EventStream {
    pending: Vec<u8>,
    data: Vec<String>,
}

impl EventStream {
    /// Takes the next bytes; returns the payloads of the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                }
            } else if let Some(data) = line.strip_prefix("data:") {
                self.data.push(data.strip_prefix(' ').unwrap_or(data).to_string());
            }
            // Comments (`: ping`), `event:`, `id:` and `retry:` lines carry nothing we use.
        }
        events
    }

    /// The payload of an event the stream ended in the middle of, if any.
    pub fn finish(&mut self) -> Option<String> {
        if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).trim_end().to_string();
            if let Some(data) = line.strip_prefix("data:") {
                self.data.push(data.trim_start().to_string());
            }
        }
        (!self.data.is_empty()).then(|| std::mem::take(&mut self.data).join("\n"))
    }
}

/// Token counts a server reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    /// Prompt tokens the server took from its prefix cache.
    pub cached_tokens: usize,
}

/// A call the server parsed itself, as its deltas build it up.
#[derive(Clone, Debug, Default, PartialEq)]
struct ServerCall {
    name: String,
    arguments: String,
}

/// Most calls one answer may hold (a bound on what a server can make us allocate).
const MAX_SERVER_CALLS: usize = 64;

/// One completion as its chunks (streamed or whole) build it up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    pub content: String,
    /// A reasoning model's thought, where the server splits it off (`reasoning_content`).
    pub reasoning: String,
    calls: Vec<ServerCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    /// Chunks that carried text: the count of generated tokens where no usage comes.
    pub pieces: usize,
}

impl Completion {
    /// Applies one streamed chunk (`chat.completion.chunk`) or a whole response
    /// (`chat.completion`); returns the text it adds, for the raw pane.
    pub fn apply(&mut self, chunk: &Value) -> Result<String, String> {
        if let Some(error) = chunk.get("error") {
            return Err(error_text(error));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_of(usage));
        }
        let mut added = String::new();
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return if chunk.get("usage").is_some() { Ok(added) } else { Err(format!("a chunk without choices: {}", cut(&chunk.to_string(), 200))) };
        };
        for choice in choices.iter().filter(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0) {
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_string());
            }
            // A stream's chunks carry `delta`, a whole response `message`.
            let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) else { continue };
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    if self.reasoning.is_empty() {
                        added.push_str("<think>\n");
                    }
                    self.reasoning.push_str(text);
                    added.push_str(text);
                    break;
                }
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                if !self.reasoning.is_empty() && self.content.is_empty() {
                    added.push_str("\n</think>\n\n");
                }
                self.content.push_str(text);
                added.push_str(text);
                self.pieces += 1;
            }
            for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                // Streamed deltas name their call by index; a whole message lists them in order.
                let index = match call.get("index").and_then(Value::as_u64) {
                    Some(i) => i as usize,
                    None if call.pointer("/function/name").is_some() => self.calls.len(),
                    None => self.calls.len().saturating_sub(1),
                };
                if index >= MAX_SERVER_CALLS {
                    return Err(format!("a tool call numbered {index}: more than {MAX_SERVER_CALLS} in one answer"));
                }
                if self.calls.len() <= index {
                    self.calls.resize(index + 1, ServerCall::default());
                }
                let slot = &mut self.calls[index];
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    slot.name.push_str(name);
                }
                match call.pointer("/function/arguments") {
                    Some(Value::String(part)) => slot.arguments.push_str(part),
                    Some(Value::Object(args)) => slot.arguments.push_str(&Value::Object(args.clone()).to_string()),
                    _ => {}
                }
                self.pieces += 1;
            }
        }
        Ok(added)
    }

    /// The whole output as one raw text for the parser chain: the thought in `<think>`,
    /// the content, then each call the server parsed as a native `<tool_call>` block (so
    /// the same parser checks its name and arguments against the tools).
    pub fn raw_text(&self) -> String {
        let mut out = String::new();
        if !self.reasoning.is_empty() {
            out.push_str(&format!("<think>\n{}\n</think>\n\n", self.reasoning));
        }
        out.push_str(&self.content);
        for call in self.calls.iter().filter(|c| !c.name.is_empty()) {
            let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!(call.arguments));
            let block = json!({"name": call.name, "arguments": arguments});
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("<tool_call>\n{block}\n</tool_call>"));
        }
        out
    }

    /// How many calls the server parsed itself.
    pub fn server_calls(&self) -> usize {
        self.calls.iter().filter(|c| !c.name.is_empty()).count()
    }
}

fn usage_of(usage: &Value) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0) as usize;
    Usage {
        prompt_tokens: count("/prompt_tokens"),
        completion_tokens: count("/completion_tokens"),
        cached_tokens: count("/prompt_tokens_details/cached_tokens"),
    }
}

/// The message of an error body, whatever shape the server gives it: OpenAI's
/// `{"error": {"message"}}`, FastAPI's `{"detail": ...}`, `{"message"}`, or plain text.
pub fn error_message(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => {
            if let Some(error) = value.get("error") {
                error_text(error)
            } else if let Some(detail) = value.get("detail") {
                match detail {
                    Value::String(s) => s.clone(),
                    other => cut(&other.to_string(), 300),
                }
            } else if let Some(message) = value.get("message").and_then(Value::as_str) {
                message.to_string()
            } else {
                cut(&value.to_string(), 300)
            }
        }
        Err(_) => cut(body.trim(), 300),
    }
}

fn error_text(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        other => other.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| cut(&other.to_string(), 300)),
    }
}

#[cfg(test)]
mod tests;
