//! Booleans the request asks for in its own words, made visible and adjustable. A small
//! model writes an optional flag as `false` where the request says it in other words
//! ("matching case exactly" is `case_sensitive`, "现在营业的" is `open_now`, "未读" is
//! `unread_only`): on the dev split, of the optional booleans the 0.5B wrote under
//! prompt_json, every `true` was right, and 5 of the 19 `false` should have been `true`.
//! Where the grammar allows only `true` or `false` next (a boolean value), this wrapper
//! records the model's margin (`true`'s best logit minus `false`'s, with the parameter's
//! name) and adds the profile's `true_bias` to `true`.

use std::sync::Arc;

use super::super::generate::TokenConstraint;
use super::optional::JsonCursor;
use super::{Margin, TokenSpace};

pub struct TrueBias<C> {
    inner: C,
    space: Arc<TokenSpace>,
    bias: f32,
    json: JsonCursor,
    /// The latest bytes written outside strings and the latest string closed: where a
    /// value starts (after `:`) and the key it is for.
    last_mark: u8,
    key: Vec<u8>,
    string: Vec<u8>,
    margin: Margin,
    /// The value being chosen has its slot in the margins (the last one).
    measured: bool,
}

impl<C> TrueBias<C> {
    pub fn new(inner: C, space: Arc<TokenSpace>, bias: f32, margin: Margin) -> Self {
        if let Ok(mut m) = margin.lock() {
            m.booleans.clear();
        }
        Self { inner, space, bias, json: JsonCursor::default(), last_mark: 0, key: Vec::new(), string: Vec::new(), margin, measured: false }
    }

    /// Whether the text so far ends where an object's value starts.
    fn at_value(&self) -> bool {
        !self.json.in_string() && self.last_mark == b':' && self.json.stack().last() == Some(&b'{')
    }

    fn push(&mut self, text: &[u8]) {
        for &b in text {
            let was_in_string = self.json.in_string();
            self.json.push(&[b]);
            if was_in_string {
                if self.json.in_string() {
                    self.string.push(b);
                } else {
                    self.key = std::mem::take(&mut self.string);
                }
            } else if self.json.in_string() {
                self.string.clear();
                self.last_mark = b'"';
            } else if !b.is_ascii_whitespace() {
                self.last_mark = b;
            }
        }
    }
}

/// What a token's text begins, blanks aside: `true`, `false`, nothing yet, or else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    True,
    False,
    Blank,
    Other,
}

fn start(text: &[u8]) -> Start {
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        None if text.is_empty() => Start::Other,
        None => Start::Blank,
        Some(b't') => Start::True,
        Some(b'f') => Start::False,
        Some(_) => Start::Other,
    }
}

impl<C: TokenConstraint> TokenConstraint for TrueBias<C> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.inner.allowed()
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let any = self.inner.mask_logits(logits)?;
        if !any || !self.at_value() {
            return Ok(any);
        }
        let mut starts = Vec::new();
        for (id, value) in logits.iter().enumerate() {
            if value.is_finite() {
                match start(&self.space.token_bytes(id as u32)) {
                    Start::Other => return Ok(any),
                    s => starts.push((id, s)),
                }
            }
        }
        let best = |wanted: Start| starts.iter().filter(|(_, s)| *s == wanted).map(|&(id, _)| logits[id]).fold(f32::NEG_INFINITY, f32::max);
        let (yes, no) = (best(Start::True), best(Start::False));
        if !yes.is_finite() || !no.is_finite() {
            return Ok(any);
        }
        // A blank picked before the value keeps the choice open: its margin is the one at
        // the step that writes the value.
        let mut margins = self.margin.lock().map_err(|_| "margin lock poisoned".to_string())?;
        let key = String::from_utf8_lossy(&self.key).into_owned();
        match margins.booleans.last_mut() {
            Some(last) if self.measured => *last = (key, yes - no),
            _ => margins.booleans.push((key, yes - no)),
        }
        self.measured = true;
        for &(id, s) in &starts {
            if s == Start::True {
                logits[id] += self.bias;
            }
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.inner.commit(token)?;
        let bytes = self.space.token_bytes(token);
        if start(&bytes) != Start::Blank {
            self.measured = false;
        }
        self.push(&bytes);
        Ok(())
    }

    forward_rest_to_inner!();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{single_byte, Margins};
    use super::*;

    /// Greedy decoding of a "model" that writes `{"name": "f", "arguments": {"q": "a:b",
    /// "exact": false}}` and would write `true` second best, by 1.
    fn decode(bias: f32) -> (String, Margins) {
        let (space, grammar) = single_byte::hermes(json!({"q": {"type": "string"}, "exact": {"type": "boolean"}}), json!(["q"]));
        let margin = Margin::default();
        let mut c = TrueBias::new(grammar, space.clone(), bias, margin.clone());
        let wanted = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"a:b\", \"exact\": false}}\n</tool_call>";
        let out = single_byte::greedy(&mut c, space.vocab_size(), wanted, b't', wanted.len() + 8);
        let seen = margin.lock().unwrap().clone();
        (out, seen)
    }

    #[test]
    fn a_boolean_value_is_watched_and_the_bias_can_make_it_true() {
        let (plain, seen) = decode(0.0);
        assert!(plain.contains("\"exact\": false"), "{plain}");
        // One choice only: the string value's `:` and the name's value are not booleans.
        assert_eq!(seen.booleans, [("exact".to_string(), -1.0)]);
        let (biased, _) = decode(1.5);
        assert!(biased.replace(' ', "").contains("\"exact\":true}"), "{biased}");
    }

    #[test]
    fn tokens_start_by_their_first_visible_byte() {
        for (text, expected) in [(&b" true"[..], Start::True), (b"f", Start::False), (b"  ", Start::Blank), (b"\"t", Start::Other), (b"", Start::Other), (b"1", Start::Other)] {
            assert_eq!(start(text), expected, "{text:?}");
        }
    }
}
