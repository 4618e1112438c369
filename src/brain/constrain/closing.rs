//! Constrained answers that close within the token budget. A greedy model can stay inside
//! a JSON string (a looping expression, a long CJK value) until `max_new_tokens` cuts the
//! answer off, and a cut-off answer does not parse. When the budget's last
//! [`RESERVE`] tokens begin, this wrapper lets only closing tokens through wherever the
//! grammar allows one (`"`, `}`, `]`, a closing tag, the end of turn), so the answer ends
//! as soon as its grammar can; where none is allowed (a required key still to come, a
//! pattern still open) the model goes on under the grammar as before.

use std::sync::Arc;

use super::super::generate::TokenConstraint;
use super::TokenSpace;

/// Tokens kept for closing: more than the deepest answer needs to close (a call's string,
/// its object, the call list, the rest of the envelope) with the tokens the grammar forces.
pub const RESERVE: usize = 48;

/// Closing tags of the native formats.
const CLOSING_TAGS: &[&str] = &["</tool_call>", "</function>", "</parameter>"];

pub struct Closing<C> {
    inner: C,
    space: Arc<TokenSpace>,
    kinds: Arc<Vec<Kind>>,
    eos: u32,
    remaining: usize,
    /// Inside a JSON string of the text so far (and just after a backslash in one).
    in_string: bool,
    escaped: bool,
}

/// What a token can close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Other,
    /// A quote, maybe with brackets after it: ends a string.
    Quote,
    /// Only `}` and `]`: ends objects and arrays.
    Bracket,
    /// A closing tag of the native formats.
    Tag,
}

impl<C> Closing<C> {
    pub fn new(inner: C, space: Arc<TokenSpace>) -> Self {
        let kinds = kinds(&space);
        let eos = space.eos();
        Self { inner, space, kinds, eos, remaining: usize::MAX, in_string: false, escaped: false }
    }

    /// Whether `token` closes something where the text is now.
    fn closes(&self, token: usize) -> bool {
        if token == self.eos as usize {
            return true;
        }
        match self.kinds.get(token).copied().unwrap_or(Kind::Other) {
            Kind::Quote => self.in_string,
            Kind::Bracket | Kind::Tag => !self.in_string,
            Kind::Other => false,
        }
    }

    fn track(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string && b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = !self.in_string;
            }
        }
    }
}

/// Each token's [`Kind`], computed once per token space.
fn kinds(space: &Arc<TokenSpace>) -> Arc<Vec<Kind>> {
    space.table("closing kinds", |space| {
        (0..space.vocab_size() as u32)
            .map(|id| {
                let bytes = space.token_bytes(id);
                let text = String::from_utf8_lossy(&bytes);
                let trimmed = text.trim();
                let brackets = |t: &str| !t.is_empty() && t.chars().all(|c| matches!(c, '}' | ']'));
                if CLOSING_TAGS.contains(&trimmed) {
                    Kind::Tag
                } else if let Some(rest) = trimmed.strip_prefix('"') {
                    if rest.is_empty() || brackets(rest) { Kind::Quote } else { Kind::Other }
                } else if brackets(trimmed) {
                    Kind::Bracket
                } else {
                    Kind::Other
                }
            })
            .collect()
    })
}

impl<C: TokenConstraint> TokenConstraint for Closing<C> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.inner.allowed()
    }

    fn budget(&mut self, remaining: usize) {
        self.remaining = remaining;
        self.inner.budget(remaining);
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let any = self.inner.mask_logits(logits)?;
        if !any || self.remaining > RESERVE {
            return Ok(any);
        }
        let closing_allowed = logits.iter().enumerate().any(|(id, v)| v.is_finite() && self.closes(id));
        if closing_allowed {
            for (id, value) in logits.iter_mut().enumerate() {
                if value.is_finite() && !self.closes(id) {
                    *value = f32::NEG_INFINITY;
                }
            }
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.inner.commit(token)?;
        let bytes = self.space.token_bytes(token);
        self.track(&bytes);
        Ok(())
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    fn draft(&mut self) -> Vec<u32> {
        self.inner.draft()
    }

    fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
        self.inner.valid_prefix(tokens)
    }
}

#[cfg(test)]
mod tests {
    use llguidance::toktrie::ApproximateTokEnv;
    use serde_json::json;

    use super::super::{lark, KeyOrder, Target};
    use super::*;

    /// A "model" that writes `{"tool_calls":[{"id":"call_001","name":"calc","args":{"e":"`
    /// and then `x` forever, under a budget of `budget` tokens.
    fn run(budget: usize, close: bool) -> (String, bool) {
        let space = Arc::new(TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap());
        let tools = [json!({"name": "calc", "parameters": {"type": "object", "properties": {"e": {"type": "string"}}, "required": ["e"]}})];
        let grammar = lark(&crate::tools::spec::ToolSpec::parse_all(&tools).unwrap(), Target::Envelope(KeyOrder::CallsFirst));
        let inner = space.constraint(&grammar).unwrap();
        let mut constraint: Box<dyn TokenConstraint> =
            if close { Box::new(Closing::new(inner, space.clone())) } else { Box::new(inner) };
        let wanted = br#"{"tool_calls":[{"id":"call_001","name":"calc","args":{"e":""#;
        let mut out = String::new();
        for step in 0..budget {
            if constraint.is_finished() {
                break;
            }
            constraint.budget(budget - step);
            let mut logits = vec![0.0f32; space.vocab_size()];
            logits[usize::from(wanted.get(step).copied().unwrap_or(b'x'))] = 9.0;
            logits[usize::from(b',')] = 5.0;
            assert!(constraint.mask_logits(&mut logits).unwrap());
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            constraint.commit(best as u32).unwrap();
            out.push(char::from(best as u8));
        }
        (out, constraint.is_finished())
    }

    #[test]
    fn an_answer_looping_in_a_string_closes_within_the_budget() {
        let (text, finished) = run(200, true);
        assert!(finished, "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["tool_calls"][0]["name"], "calc");
        assert!(text.len() <= 200);
        // Before the reserve the model's own choices stand.
        assert!(text.contains(&"x".repeat(200 - RESERVE - 60)), "{text}");
    }

    #[test]
    fn without_the_wrapper_the_same_answer_is_cut_off() {
        let (text, finished) = run(200, false);
        assert!(!finished);
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
    }
}
