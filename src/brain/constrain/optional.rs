//! Optional parameters left out unless asked for. Small models fill every parameter a
//! function offers: `"exchange": "NASDAQ"` for a quote nobody asked on which exchange,
//! `"cc": []`, every amenity of the enum, a return date for a one-way flight. The grammar
//! lets the model close an object once its required keys are written; where it may
//! either close it (`}`) or go on to another key (`,`), this wrapper adds the profile's
//! `omit_optional_bias` to closing. A value the request states still wins when the model
//! is sure of it; one it made up loses.
//!
//! The JSON structure is followed from the text written (strings and escapes included),
//! so the choice is only seen directly inside an object, never inside a string value;
//! text outside JSON (fences, call tags, a plain answer) is not JSON and has no choice.

use std::sync::Arc;

use super::super::generate::TokenConstraint;
use super::TokenSpace;

pub struct OptionalBias<C> {
    inner: C,
    space: Arc<TokenSpace>,
    bias: f32,
    json: JsonCursor,
}

impl<C> OptionalBias<C> {
    pub fn new(inner: C, space: Arc<TokenSpace>, bias: f32) -> Self {
        Self { inner, space, bias, json: JsonCursor::default() }
    }
}

/// Where a token leads at a point directly inside an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Closes the object.
    Close,
    /// Goes on to another key.
    More,
    /// Neither (blanks, or the rest of a value).
    Other,
}

/// [`Step`] of a token's text: the first `}` or `,` it reaches, after nothing but the
/// rest of a number or literal and blanks. Blanks alone close: pretty-printed JSON (the
/// models' own style in a fence) puts the comma right after a value and the brace on a
/// line of its own, so a line break after a value is the way to `}`.
fn step(text: &str) -> Step {
    for c in text.chars() {
        match c {
            '}' => return Step::Close,
            ',' => return Step::More,
            c if c.is_ascii_alphanumeric() || c.is_whitespace() || matches!(c, '.' | '+' | '-') => {}
            _ => return Step::Other,
        }
    }
    if !text.is_empty() && text.chars().all(char::is_whitespace) {
        Step::Close
    } else {
        Step::Other
    }
}

/// The JSON structure around the end of the text so far.
#[derive(Clone, Debug, Default)]
pub(super) struct JsonCursor {
    /// Open objects (`{`) and arrays (`[`).
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
}

impl JsonCursor {
    pub(super) fn push(&mut self, text: &[u8]) {
        for &b in text {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'{' | b'[' => self.stack.push(b),
                b'}' | b']' => {
                    self.stack.pop();
                }
                // A quote outside any JSON value is text, not a string.
                b'"' if !self.stack.is_empty() => self.in_string = true,
                _ => {}
            }
        }
    }

    /// The open objects and arrays, outermost first.
    pub(super) fn stack(&self) -> &[u8] {
        &self.stack
    }

    pub(super) fn in_string(&self) -> bool {
        self.in_string
    }

    /// Directly inside an object, outside any string.
    fn in_object(&self) -> bool {
        !self.in_string && self.stack.last() == Some(&b'{')
    }
}

impl<C: TokenConstraint> TokenConstraint for OptionalBias<C> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.inner.allowed()
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let any = self.inner.mask_logits(logits)?;
        if !any || self.bias == 0.0 || !self.json.in_object() {
            return Ok(any);
        }
        let steps: Vec<(usize, Step)> = logits
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(id, _)| (id, step(&String::from_utf8_lossy(&self.space.token_bytes(id as u32)))))
            .collect();
        let both = steps.iter().any(|(_, s)| *s == Step::Close) && steps.iter().any(|(_, s)| *s == Step::More);
        if both {
            for (id, s) in steps {
                if s == Step::Close {
                    logits[id] += self.bias;
                }
            }
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.inner.commit(token)?;
        self.json.push(&self.space.token_bytes(token));
        Ok(())
    }

    forward_rest_to_inner!();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::single_byte;
    use super::*;

    #[test]
    fn the_cursor_follows_objects_arrays_and_strings() {
        let mut c = JsonCursor::default();
        c.push(br#"```json\n[{"name": "f", "arguments": {"q": "a, b} \" {"#);
        assert!(!c.in_object(), "inside a string value");
        c.push(br#"""#);
        assert!(c.in_object());
        c.push(br#", "tags": ["x""#);
        assert!(!c.in_object(), "inside an array");
        c.push(br#"]}"#);
        assert!(c.in_object(), "back in the call object");
        let mut text = JsonCursor::default();
        text.push(br#"He said "hi"."#);
        assert!(!text.in_object() && text.stack.is_empty());
    }

    #[test]
    fn tokens_step_by_the_first_brace_or_comma_they_reach() {
        for (text, expected) in [("}", Step::Close), ("\n}", Step::Close), ("},", Step::Close), (",", Step::More), (",\n", Step::More), ("0,", Step::More), ("e}", Step::Close), ("\n", Step::Close), ("\n    ", Step::Close), ("", Step::Other), ("0", Step::Other), ("\"", Step::Other), (" \"x", Step::Other)] {
            assert_eq!(step(text), expected, "{text:?}");
        }
    }

    /// Greedy decoding of a "model" that writes `{"name": "f", "arguments": {"a": 1` and
    /// then prefers `,` (another key, `b`) over `}` by 1.
    fn decode(bias: f32) -> String {
        let (space, grammar) = single_byte::hermes(json!({"a": {"type": "integer"}, "b": {"type": "integer"}}), json!(["a"]));
        let mut c = OptionalBias::new(grammar, space.clone(), bias);
        let wanted = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>";
        single_byte::greedy(&mut c, space.vocab_size(), wanted, b'}', wanted.len())
    }

    #[test]
    fn the_bias_can_close_an_object_instead_of_adding_an_optional_key() {
        assert_eq!(decode(0.0), "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>");
        // Past the model's lead of 1, `}` wins where `,` was allowed; inside the string
        // values and before `a` (required) there was no choice to tip.
        let biased = decode(1.5);
        assert!(biased.starts_with("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}"), "{biased}");
        assert!(!biased.contains("\"b\""), "{biased}");
    }
}
