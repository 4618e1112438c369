//! Optional arguments the request states, asked for one at a time. A small model closes a
//! call once its required arguments are written and leaves out optional ones the request
//! gives: `max_lines` for "the first 20 lines", `namespace` for "in the prod namespace",
//! `artist` for "周杰伦《晴天》的歌词", `date` for "flight MU5101 on 2025-01-15". For each
//! optional parameter a call leaves out (strings and numbers), the model is asked to go on
//! from the call as written with that key opened (the decision's own prompt, whose keys and
//! values are mostly in the cache already, so each question costs a few tokens), held to
//! the parameter's schema. The value stays only where the conversation writes it as it is
//! and no other argument of the call holds it; otherwise nothing is added.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::constrain::grammar::{json_grammar, prepared};
use super::constrain::TokenSpace;
use super::generate::{GenParams, ModelHandle, StopKind};
use super::faithful::{names_choice, words_of};
use super::next_step::number_stated;
use super::{decision, BrainError, Decision};
use crate::protocol::ToolCall;
use crate::text::{is_cjk, normalized, numbers_written};
use crate::tools::spec::{Param, ToolSpec};

/// Most tokens one value may take.
const VALUE_TOKENS: usize = 48;

/// Adds to `decided`'s calls the optional arguments `conversation` (the text the user and
/// the tools wrote) states, asking `model` for each one a call leaves out (see the module
/// doc); one warning per argument added.
pub fn add(
    model: &ModelHandle,
    base: impl Fn() -> GenParams,
    decided: &mut Decision,
    tools: &[ToolSpec],
    conversation: &str,
    cancel: &AtomicBool,
) -> Result<(), BrainError> {
    let Some(style) = Style::of(decided.report.format.as_deref()) else { return Ok(()) };
    let space = TokenSpace::for_model(model)?;
    let english = !conversation.chars().any(is_cjk);
    for index in 0..decided.ai.tool_calls.len() {
        let Some(tool) = tools.iter().find(|t| t.name == decided.ai.tool_calls[index].name) else { continue };
        for param in tool.params() {
            let so_far = &decided.ai.tool_calls[index];
            if so_far.args.contains_key(&param.name) || tool.required().contains(&param.name) || !asked(param, english) {
                continue;
            }
            let prompt = format!("{}{}", decided.prompt, style.opened(so_far, &param.name));
            let Ok(constraint) = space.constraint(&value_grammar(param)) else { continue };
            let params = GenParams { max_new_tokens: VALUE_TOKENS, constraint: Some(Box::new(constraint)), ..base() };
            let generation = match model.generate(&prompt, params, &mut |_| {}, cancel) {
                Ok(generation) if generation.stop == StopKind::Cancelled => return Err(BrainError::Cancelled),
                Ok(generation) => generation,
                Err(BrainError::Cancelled) => return Err(BrainError::Cancelled),
                // The decision stands as made (a prompt the reopened call takes past the
                // input budget, say): only this question is not asked.
                Err(e) => {
                    decided.report.warnings.push(format!("optional arguments not asked for: {e}"));
                    return Ok(());
                }
            };
            decision::add_generation(&mut decided.report.stats, &generation.stats);
            let written = generation.text.trim().trim_end_matches([',', '}']);
            let Ok(value) = serde_json::from_str::<Value>(written.trim()) else { continue };
            if stated(&value, param, so_far, conversation, english) && !number_taken(&value, &decided.ai.tool_calls, conversation) {
                decided.report.warnings.push(format!("optional argument the request states, added: {}: {} = {value}", tool.name, param.name));
                decided.ai.tool_calls[index].args.insert(param.name.clone(), value);
            }
        }
    }
    Ok(())
}

/// One value of `param`'s schema, after the blank the model writes after a key's colon,
/// and what comes after a value (`,` or `}`): the model ends a value there, not with the
/// end of its turn.
fn value_grammar(param: &Param) -> String {
    format!("start: SP? v END\nSP: \" \"\nv: %json {}\nEND: /[ \\n]*[,}}]/\n", json_grammar(prepared(&param.schema.raw)))
}

/// Whether an optional parameter is asked for: a string or a number, not a boolean, array
/// or object (their values are not written as they are), and an enum only in an English
/// conversation (in another language its choices are named in other words).
fn asked(param: &Param, english: bool) -> bool {
    let kinds: Vec<&str> = param.schema.kinds.iter().map(|k| k.as_str()).collect();
    let scalar = !kinds.is_empty() && kinds.iter().all(|k| matches!(*k, "string" | "integer" | "number"));
    scalar && (param.schema.enum_values.is_none() || english)
}

/// Whether `value` for `param` is written in `conversation` as it is, is not the
/// parameter's default, and is held by no other argument of `call`.
fn stated(value: &Value, param: &Param, call: &ToolCall, conversation: &str, english: bool) -> bool {
    if param.schema.raw.get("default") == Some(value) {
        return false;
    }
    let others = || call.args.values().filter_map(Value::as_str);
    match value {
        Value::String(text) => {
            let text = text.trim();
            let lower = text.to_lowercase();
            let written = if param.schema.enum_values.is_some() {
                let choices: Vec<&str> = param.schema.enum_values.iter().flatten().filter_map(Value::as_str).collect();
                english && names_choice(&words_of(conversation), &lower, &choices)
            } else {
                text.chars().count() >= 2 && conversation.to_lowercase().contains(&lower)
            };
            written && !others().any(|other| other.to_lowercase().contains(&lower) || lower.contains(&other.to_lowercase()))
        }
        Value::Number(n) => {
            let Some(x) = n.as_f64() else { return false };
            let held = call.args.values().any(|v| v.as_f64() == Some(x))
                || others().any(|other| numbers_written(&normalized(other)).contains(&x));
            number_stated(x, None, &numbers_written(&normalized(conversation))) && !held
        }
        _ => false,
    }
}

/// Whether `value` is a number that `calls` already hold as often as `conversation` writes
/// it: "把客厅的灯调到 60% 亮度，卧室的灯关掉" writes one brightness, for the living room's
/// call; the bedroom's gets none. (A string may be shared: "both in the prod namespace".)
fn number_taken(value: &Value, calls: &[ToolCall], conversation: &str) -> bool {
    let Some(x) = value.as_f64().filter(|_| value.is_number()) else { return false };
    let written = numbers_written(&normalized(conversation)).iter().filter(|&&y| y == x).count();
    let held = calls.iter().flat_map(|c| c.args.values()).filter(|v| v.is_number() && v.as_f64() == Some(x)).count();
    held >= written.max(1)
}

/// How the decision wrote its calls: the text that reopens one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Envelope,
    Hermes,
    Fenced,
}

impl Style {
    fn of(format: Option<&str>) -> Option<Self> {
        match format? {
            "strict_json" => Some(Style::Envelope),
            "hermes" => Some(Style::Hermes),
            "fenced_json" => Some(Style::Fenced),
            _ => None,
        }
    }

    /// `call` written in this style up to its arguments, with `key` opened last.
    fn opened(self, call: &ToolCall, key: &str) -> String {
        let mut args = String::new();
        for (name, value) in &call.args {
            args.push_str(&format!("{}: {value}, ", Value::from(name.as_str())));
        }
        let name = Value::from(call.name.as_str());
        let key = Value::from(key);
        match self {
            Style::Envelope => format!("{{\"tool_calls\": [{{\"id\": \"call_001\", \"name\": {name}, \"args\": {{{args}{key}:"),
            Style::Hermes => format!("<tool_call>\n{{\"name\": {name}, \"arguments\": {{{args}{key}:"),
            Style::Fenced => format!("```json\n[{{\"name\": {name}, \"arguments\": {{{args}{key}:"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn param(schema: Value) -> Param {
        let tool = json!({"name": "f", "parameters": {"type": "object", "properties": {"p": schema}}});
        ToolSpec::parse(&tool, 0).unwrap().params()[0].clone()
    }

    fn call(args: Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "f".into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn values_written_as_they_are_and_held_by_no_other_argument_are_stated() {
        let string = param(json!({"type": "string"}));
        let number = param(json!({"type": "integer", "default": 10}));
        let choice = param(json!({"type": "string", "enum": ["email", "phone"]}));
        let first = call(json!({"path": "config/app.yaml"}));
        assert!(stated(&json!(20), &number, &first, "Show me the first 20 lines of config/app.yaml.", true));
        assert!(!stated(&json!(10), &number, &first, "the first 10 lines", true), "the default");
        assert!(!stated(&json!(30), &number, &first, "the first 20 lines", true), "nobody wrote 30");
        let flight = call(json!({"flight_number": "MU5101", "date": "2025-01-15"}));
        assert!(!stated(&json!(15), &number, &flight, "flight MU5101 on 2025-01-15", true), "a figure of the date");
        let song = call(json!({"song": "晴天"}));
        assert!(stated(&json!("周杰伦"), &string, &song, "把周杰伦《晴天》的歌词给我看看。", false));
        assert!(!stated(&json!("Jay Chou"), &string, &song, "把周杰伦《晴天》的歌词给我看看。", false), "a translation");
        let search = call(json!({"query": "sports"}));
        assert!(!stated(&json!("sports"), &string, &search, "Search the sports department", true), "another argument holds it");
        let lookup = call(json!({"name": "Kenji Tanaka"}));
        assert!(stated(&json!("email"), &choice, &lookup, "Look up Kenji Tanaka's email address.", true));
        assert!(!stated(&json!("phone"), &choice, &lookup, "Look up Kenji Tanaka's email address.", true));
    }

    #[test]
    fn a_number_written_once_goes_to_one_call() {
        let lights = |args: Value| ToolCall { id: String::new(), name: "home.lights".into(), args: args.as_object().unwrap().clone() };
        let living = lights(json!({"room": "客厅", "on": true, "brightness": 60}));
        let bedroom = lights(json!({"room": "卧室", "on": false}));
        let asked = "把客厅的灯打开并调到 60% 亮度，卧室的灯关掉。";
        assert!(number_taken(&json!(60), &[living.clone(), bedroom.clone()], asked));
        assert!(!number_taken(&json!(60), &[lights(json!({"room": "客厅"})), bedroom.clone()], asked));
        assert!(!number_taken(&json!(60), &[living, bedroom], "客厅调到 60%，卧室也调到 60%"), "written twice");
        assert!(!number_taken(&json!("prod"), &[], "both in the prod namespace"));
    }

    #[test]
    fn scalars_are_asked_for_and_choices_only_in_english() {
        assert!(asked(&param(json!({"type": "string"})), false));
        assert!(asked(&param(json!({"type": "number"})), false));
        assert!(!asked(&param(json!({"type": "boolean"})), true));
        assert!(!asked(&param(json!({"type": "array", "items": {"type": "string"}})), true));
        assert!(asked(&param(json!({"type": "string", "enum": ["a", "b"]})), true));
        assert!(!asked(&param(json!({"type": "string", "enum": ["a", "b"]})), false));
    }

    #[test]
    fn a_call_is_reopened_in_the_style_it_was_written_in() {
        let c = ToolCall { id: "call_002".into(), name: "files.read".into(), args: json!({"path": "a.md"}).as_object().unwrap().clone() };
        assert_eq!(Style::Envelope.opened(&c, "max_lines"), r#"{"tool_calls": [{"id": "call_001", "name": "files.read", "args": {"path": "a.md", "max_lines":"#);
        assert_eq!(Style::Hermes.opened(&c, "max_lines"), "<tool_call>\n{\"name\": \"files.read\", \"arguments\": {\"path\": \"a.md\", \"max_lines\":");
        assert_eq!(Style::of(Some("qwen_xml")), None);
    }
}
