//! What the model would name with no question at all: the content-free prior over the
//! offered tools' names, which [`super::constrain::NameCalibration`] divides out of a
//! constrained decision's choice of tool (profile field `name_calibration`).
//!
//! The prompt is the decision's own (same system text, same tools in the same order) with
//! the conversation replaced by one content-free user message ([`CONTENT_FREE`]), followed
//! by the opening of a call in the decision's form up to its name ([`opener`]). Each name's
//! log-probability is read token by token there; the tokens the names share are read once.
//! The system text and tools are the decision's prompt prefix, so the decoder reuses them
//! for the decision that follows: the prior costs the few tokens of the question, the
//! opening and the names.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::constrain::{NamePrior, NativeStyle, Target};
use super::generate::{GenParams, ModelHandle, StopKind, TokenConstraint};
use super::{decision, BrainError};
use crate::protocol::{DecisionStats, Message};

/// The user message of the content-free prompt.
pub const CONTENT_FREE: &str = "N/A";

/// The text of a call in `target`'s form up to its name, as the 0.5B writes it under the
/// grammar: the envelope's first call, or (builtin) the JSON fence it opens its calls with.
/// `None`: a form whose calls are not named after `"name":` (XML, the plan).
pub fn opener(target: Target) -> Option<&'static str> {
    match target {
        Target::Envelope(_) => Some("{\n  \"tool_calls\": [\n    {\n      \"id\": \"call_001\",\n      \"name\": \""),
        Target::Native(NativeStyle::Hermes) => Some("```json\n[\n    {\n        \"name\": \""),
        Target::Native(NativeStyle::Xml) | Target::Plan => None,
    }
}

/// The content-free conversation of `messages`: their system messages, then
/// [`CONTENT_FREE`] as the user's.
pub fn content_free(messages: &[Message]) -> Vec<Message> {
    let mut free: Vec<Message> = messages.iter().filter(|m| matches!(m, Message::System { .. })).cloned().collect();
    free.push(Message::user(CONTENT_FREE));
    free
}

/// Whether `messages` end in a question no call has answered yet: the prior is read for
/// such a question (its prompt has no results in it), so only there is it divided out.
pub fn fresh_question(messages: &[Message]) -> bool {
    super::calls_since_question(messages).is_empty()
}

/// Reads the log-softmax of the first position's logits and writes nothing more (the
/// decoder is asked for one token).
struct Probe {
    row: Arc<Mutex<Option<Vec<f32>>>>,
}

impl TokenConstraint for Probe {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        None
    }

    fn commit(&mut self, _token: u32) -> Result<(), String> {
        Ok(())
    }

    fn is_finished(&self) -> bool {
        false
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let total = top + logits.iter().map(|v| (v - top).exp()).sum::<f32>().ln();
        let mut row = self.row.lock().map_err(|_| "probe lock poisoned".to_string())?;
        *row = Some(logits.iter().map(|v| v - total).collect());
        Ok(true)
    }
}

/// The log-probabilities of the next token after `prompt`.
fn next_token(
    model: &ModelHandle,
    base: &dyn Fn() -> GenParams,
    prompt: &str,
    stats: &mut DecisionStats,
    warnings: &mut Vec<String>,
    cancel: &AtomicBool,
) -> Result<Vec<f32>, BrainError> {
    let row = Arc::new(Mutex::new(None));
    let params = GenParams { max_new_tokens: 1, draft_tokens: 0, constraint: Some(Box::new(Probe { row: row.clone() })), ..base() };
    let generation = model.generate(prompt, params, &mut |_| {}, cancel)?;
    if generation.stop == StopKind::Cancelled {
        return Err(BrainError::Cancelled);
    }
    decision::add_generation(stats, &generation.stats);
    // The prompt cache's warnings (a damaged file refused): the probe reads the system
    // prefix first, so they are the decision's to report.
    warnings.extend(generation.warnings.iter().filter(|w| !warnings.contains(w)).cloned().collect::<Vec<_>>());
    let row = row.lock().map_err(|_| BrainError::Generation("probe lock poisoned".into()))?.take();
    row.ok_or_else(|| BrainError::Generation("the prior's probe got no logits".into()))
}

/// The prior of `names` after `prompt` (the content-free prompt, rendered, with the
/// opening of a call): each name and the closing quote, token by token.
pub fn measure(
    model: &ModelHandle,
    base: &dyn Fn() -> GenParams,
    prompt: &str,
    names: &[String],
    cancel: &AtomicBool,
) -> Result<(NamePrior, DecisionStats, Vec<String>), BrainError> {
    let tokenizer = model.tokenizer();
    let mut stats = DecisionStats::default();
    let mut warnings = Vec::new();
    // Rows read so far, by the text of the name written before them.
    let mut rows: HashMap<String, Vec<f32>> = HashMap::new();
    let mut prior = Vec::with_capacity(names.len());
    for name in names {
        let tokens = tokenizer.encode(&format!("{name}\""))?;
        let mut log_p = 0.0f32;
        for (j, &token) in tokens.iter().enumerate() {
            let written = tokenizer.decode(&tokens[..j])?;
            if !rows.contains_key(&written) {
                let row = next_token(model, base, &format!("{prompt}{written}"), &mut stats, &mut warnings, cancel)?;
                rows.insert(written.clone(), row);
            }
            log_p += rows[&written].get(token as usize).copied().unwrap_or(f32::NEG_INFINITY);
        }
        prior.push((name.clone(), log_p));
    }
    Ok((NamePrior::new(prior), stats, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::constrain::KeyOrder;

    #[test]
    fn the_content_free_conversation_keeps_the_system_text_alone() {
        let messages = [Message::system("memory: likes tea"), Message::user("天气怎么样？"), Message::system("later note")];
        let free = content_free(&messages);
        assert_eq!(free, vec![Message::system("memory: likes tea"), Message::system("later note"), Message::user(CONTENT_FREE)]);
    }

    #[test]
    fn only_a_question_no_call_has_answered_yet_is_fresh() {
        use crate::protocol::{AiMessage, ToolCall, ToolMessage};
        let call: ToolCall = serde_json::from_value(serde_json::json!({"id": "call_001", "name": "weather.current", "args": {"city": "Osaka"}})).unwrap();
        let result = ToolMessage::success(&call, serde_json::json!({"temp_c": 9}));
        let mut messages = vec![Message::system("s"), Message::user("Weather in Osaka?")];
        assert!(fresh_question(&messages));
        messages.push(Message::Assistant(AiMessage::calls(vec![call])));
        messages.push(Message::Tool(result));
        assert!(!fresh_question(&messages));
        // A new question after the finished turn is fresh again.
        messages.push(Message::Assistant(AiMessage::answer("9 °C")));
        messages.push(Message::user("And in Kyoto?"));
        assert!(fresh_question(&messages));
    }

    #[test]
    fn openers_end_where_the_name_begins() {
        for target in [Target::Envelope(KeyOrder::CallsFirst), Target::Native(NativeStyle::Hermes)] {
            assert!(opener(target).unwrap().ends_with("\"name\": \""), "{target:?}");
        }
        assert_eq!(opener(Target::Plan), None);
    }
}
