//! How many calls, made visible and adjustable. Asked for two or three things at once
//! ("the weather in Paris and in Tokyo"), small models often stop after the first call:
//! on the dev split that was the largest kind of wrong parallel decision (11 of 66 under
//! prompt_json, 14 under builtin). Each time a call closes, the model chooses between
//! another call and the end of the calls; this wrapper records that choice's margin (in
//! logits, another call's best minus the end's) and adds the profile's bias to another
//! call at the first such choice (after the first call) only: past the model's own margin,
//! it writes a second call, which repeats the first where the request asked for one thing
//! (the decision drops a repeated call) and does the second task where it asked for two.
//!
//! Where the choice is:
//! - a call list in JSON (the envelope's `"tool_calls": [...]`, a fence's array): after
//!   the `}` that closes a call, `,` is another call and `]` the end. One token may close
//!   the call and choose at once (`}},`, `"}]`): at a step where the model's favourite
//!   token closes the call, the bias goes to the tokens that close it without ending the
//!   list;
//! - Hermes blocks: after `</tool_call>`, another `<tool_call>` or the end of the turn.
//!
//! The grammar still bounds the calls ([`super::grammar::MAX_CALLS`]) and their arguments.

use std::sync::Arc;

use super::super::generate::TokenConstraint;
use super::optional::JsonCursor;
use super::{Margin, TokenSpace};

/// The tag after which a Hermes call may be followed by another.
const CALL_END_TAG: &[u8] = b"</tool_call>";

pub struct MoreCalls<C> {
    inner: C,
    space: Arc<TokenSpace>,
    bias: f32,
    cursor: Cursor,
    /// Tokens that can reach or make the choice (see [`edges`]).
    edges: Arc<Vec<u32>>,
    eos: u32,
    margin: Margin,
    /// The choice being measured has its slot in the margins (the last one).
    measuring: bool,
    /// Choices made so far.
    made: usize,
    /// The model's own margin at the latest step, where both ways were open.
    latest: Option<f32>,
}

impl<C> MoreCalls<C> {
    /// Starts a decision's watch; the margins of an earlier attempt are cleared.
    pub fn new(inner: C, space: Arc<TokenSpace>, bias: f32, margin: Margin) -> Self {
        if let Ok(mut m) = margin.lock() {
            m.more_calls.clear();
            m.added_call = false;
        }
        let edges = edges(&space);
        let eos = space.eos();
        Self { inner, space, bias, cursor: Cursor::default(), edges, eos, margin, measuring: false, made: 0, latest: None }
    }

    /// Where `token` leads from the text so far.
    fn way(&self, token: u32) -> Way {
        if token == self.eos {
            return if self.cursor.pending == Some(Pending::Tag) { Way::Done } else { Way::Other };
        }
        let mut after = self.cursor.clone();
        match after.push(&self.space.token_bytes(token)) {
            Some(way) => way,
            None if after.pending.is_some() => Way::Reach,
            None => Way::Other,
        }
    }

    fn record(&mut self, margin: f32) -> Result<(), String> {
        let mut margins = self.margin.lock().map_err(|_| "margin lock poisoned".to_string())?;
        if self.measuring {
            if let Some(last) = margins.more_calls.last_mut() {
                *last = margin;
            }
        } else {
            margins.more_calls.push(margin);
            self.measuring = true;
        }
        Ok(())
    }
}

/// Where a token leads at (or before) the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// Another call.
    More,
    /// The end of the calls.
    Done,
    /// To the choice (a call's last brace, the blanks after it) without making it.
    Reach,
    /// Elsewhere.
    Other,
}

/// What the text so far has just closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// A call in a JSON list.
    Json,
    /// A Hermes call block.
    Tag,
}

/// The text so far as the choice sees it.
#[derive(Clone, Debug, Default)]
struct Cursor {
    json: JsonCursor,
    /// A call has just closed, with nothing but blanks after it.
    pending: Option<Pending>,
    /// The last bytes written outside strings, blanks left out.
    tail: Vec<u8>,
}

/// Open brackets at a call list's level: a fence's array, or the envelope's.
fn at_list(stack: &[u8]) -> bool {
    stack == b"[" || stack == b"{["
}

impl Cursor {
    /// Takes in written bytes; the first choice they make, if any.
    fn push(&mut self, bytes: &[u8]) -> Option<Way> {
        let mut made = None;
        for &b in bytes {
            let blank = b.is_ascii_whitespace();
            if let Some(pending) = self.pending.filter(|_| !blank) {
                self.pending = None;
                let way = match (pending, b) {
                    (Pending::Json, b',') | (Pending::Tag, b'<') => Some(Way::More),
                    (Pending::Json, b']') => Some(Way::Done),
                    _ => None,
                };
                made = made.or(way);
            }
            let in_string = self.json.in_string();
            self.json.push(&[b]);
            if in_string || blank {
                continue;
            }
            if b == b'}' && at_list(self.json.stack()) {
                self.pending = Some(Pending::Json);
            }
            self.tail.push(b);
            if self.tail.len() > CALL_END_TAG.len() {
                self.tail.remove(0);
            }
            if self.tail == CALL_END_TAG {
                self.pending = Some(Pending::Tag);
            }
        }
        made
    }

    /// Inside a call of a JSON list: one of its tokens may close it and choose.
    fn in_call(&self) -> bool {
        let stack = self.json.stack();
        (stack.starts_with(b"[{") || stack.starts_with(b"{[{")) && !at_list(stack)
    }
}

/// The tokens that can close a call or choose after it: those with `}`, `,`, `]` or `<`.
fn edges(space: &Arc<TokenSpace>) -> Arc<Vec<u32>> {
    space.table("call edges", |space| {
        (0..space.vocab_size() as u32)
            .filter(|&id| space.token_bytes(id).iter().any(|b| matches!(b, b'}' | b',' | b']' | b'<')))
            .collect()
    })
}

impl<C: TokenConstraint> TokenConstraint for MoreCalls<C> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.inner.allowed()
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let any = self.inner.mask_logits(logits)?;
        self.latest = None;
        let pending = self.cursor.pending.is_some();
        if !any || !(pending || self.cursor.in_call()) {
            return Ok(any);
        }
        let ways: Vec<(usize, Way)> = self
            .edges
            .iter()
            .chain(std::iter::once(&self.eos))
            .map(|&id| id as usize)
            .filter(|&id| logits.get(id).is_some_and(|v| v.is_finite()))
            .map(|id| (id, self.way(id as u32)))
            .filter(|(_, way)| *way != Way::Other)
            .collect();
        let best = |wanted: &[Way]| ways.iter().filter(|(_, w)| wanted.contains(w)).map(|&(id, _)| logits[id]).fold(f32::NEG_INFINITY, f32::max);
        let favoured = if pending {
            // At the choice: only another call is favoured (blanks keep it open).
            &[Way::More][..]
        } else {
            // Inside a call: only once the model's favourite token closes it.
            let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            if best(&[Way::More, Way::Done, Way::Reach]) < top {
                return Ok(any);
            }
            &[Way::More, Way::Reach][..]
        };
        let (going_on, done) = (best(favoured), best(&[Way::Done]));
        if going_on.is_finite() && done.is_finite() {
            self.latest = Some(going_on - done);
            self.record(going_on - done)?;
        }
        if self.bias != 0.0 && self.made == 0 {
            for (id, way) in &ways {
                if favoured.contains(way) {
                    logits[*id] += self.bias;
                }
            }
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.inner.commit(token)?;
        let made = if token == self.eos { None } else { self.cursor.push(&self.space.token_bytes(token)) };
        if made.is_some() || token == self.eos {
            let added = self.made == 0 && self.bias > 0.0 && made == Some(Way::More) && self.latest.is_some_and(|m| m < 0.0);
            if added {
                self.margin.lock().map_err(|_| "margin lock poisoned".to_string())?.added_call = true;
            }
            self.measuring = false;
            self.made += 1;
        }
        Ok(())
    }

    forward_rest_to_inner!();
}

#[cfg(test)]
mod tests {
    use llguidance::toktrie::ApproximateTokEnv;
    use serde_json::json;

    use super::super::{lark, KeyOrder, Margins, NativeStyle, Target};
    use super::*;
    use crate::tools::spec::ToolSpec;

    #[test]
    fn the_cursor_sees_a_call_close_and_the_choice_after_it() {
        let mut c = Cursor::default();
        assert_eq!(c.push(br#"{"tool_calls": [{"id": "call_001", "name": "f", "args": {"q": "a}, ]"#), None);
        assert!(c.in_call() && c.pending.is_none(), "inside a string");
        assert_eq!(c.push(br#"", "xs": [{"k": 1}]}"#), None);
        assert!(c.in_call() && c.pending.is_none(), "an object in an argument's list is no call");
        assert_eq!(c.push(b"}\n  "), None);
        assert_eq!(c.pending, Some(Pending::Json));
        assert_eq!(c.clone().push(b", {"), Some(Way::More));
        assert_eq!(c.clone().push(b"]"), Some(Way::Done));
        // A fence's list, and a token that closes and chooses at once.
        let mut fence = Cursor::default();
        fence.push(b"```json\n[{\"name\": \"f\", \"arguments\": {\"a\": 1");
        assert_eq!(fence.clone().push(b"}},"), Some(Way::More));
        assert_eq!(fence.clone().push(b"}}]"), Some(Way::Done));
        assert_eq!(fence.clone().push(b"}}"), None);
        // Hermes blocks: the end tag, then another block.
        let mut tags = Cursor::default();
        tags.push(b"<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n");
        assert_eq!(tags.pending, None, "a block's own object closes no list");
        tags.push(b"</tool_call>\n");
        assert_eq!(tags.pending, Some(Pending::Tag));
        assert_eq!(tags.push(b"<tool_call>"), Some(Way::More));
    }

    /// Greedy decoding of a "model" that writes `first`, then prefers ending the calls
    /// (`]`, or the end of turn after a Hermes block) over another (`,`, `<`) by 1, then
    /// writes `more` or `done` as chosen, and ends the turn.
    fn decode(target: Target, first: &str, more: &str, done: &str, bias: f32) -> (String, Margins) {
        let space = Arc::new(TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap());
        let tool = json!({"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}});
        let grammar = lark(&ToolSpec::parse_all(&[tool]).unwrap(), target);
        let margin = Margin::default();
        let mut c = MoreCalls::new(space.constraint(&grammar).unwrap(), space.clone(), bias, margin.clone());
        let eos = space.eos() as usize;
        let mut out = String::new();
        let mut path = first.to_string();
        for _ in 0..200 {
            let mut logits = vec![0.0f32; space.vocab_size()];
            if out == first {
                for (token, value) in [(usize::from(b']'), 5.0), (eos, 5.0), (usize::from(b','), 4.0), (usize::from(b'<'), 4.0)] {
                    logits[token] = value;
                }
            } else {
                logits[path.as_bytes().get(out.len()).map_or(eos, |b| usize::from(*b))] = 5.0;
            }
            c.mask_logits(&mut logits).unwrap();
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            c.commit(best as u32).unwrap();
            if best == eos {
                break;
            }
            if out == first {
                path = format!("{first}{}", if matches!(best as u8, b',' | b'<') { more } else { done });
            }
            out.push(char::from(best as u8));
            if c.is_finished() {
                break;
            }
        }
        let margins = margin.lock().unwrap().clone();
        (out, margins)
    }

    #[test]
    fn the_margin_is_recorded_and_the_bias_can_add_a_call_in_the_envelope() {
        let envelope = Target::Envelope(KeyOrder::CallsFirst);
        let first = r#"{"tool_calls":[{"id":"call_001","name":"f","args":{"a":1}}"#;
        let more = r#",{"id":"call_002","name":"f","args":{"a":2}}],"content":""}"#;
        let done = r#"],"content":""}"#;
        let (out, margins) = decode(envelope, first, more, done, 0.0);
        assert_eq!(out, format!("{first}{done}"));
        assert_eq!((margins.more_calls, margins.added_call), (vec![-1.0], false));
        let (out, margins) = decode(envelope, first, more, done, 1.5);
        assert_eq!(out, format!("{first}{more}"));
        // The model's own margins, before the bias: the second list end was chosen by 5.
        assert_eq!((margins.more_calls, margins.added_call), (vec![-1.0, -5.0], true));
    }

    #[test]
    fn the_margin_is_recorded_and_the_bias_can_add_a_hermes_block() {
        let hermes = Target::Native(NativeStyle::Hermes);
        let first = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
        let more = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 2}}\n</tool_call>";
        let (out, margins) = decode(hermes, first, more, "", 0.0);
        assert_eq!(out, first);
        assert_eq!((margins.more_calls, margins.added_call), (vec![-1.0], false));
        let (out, margins) = decode(hermes, first, more, "", 1.5);
        assert_eq!(out, format!("{first}{more}"));
        assert_eq!((margins.more_calls, margins.added_call), (vec![-1.0, -5.0], true));
    }
}
