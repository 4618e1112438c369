//! The choice between answering and calling, made visible and adjustable. Small models
//! asked for a decision under a tools prompt call a tool almost whatever the question
//! (the 0.5B called one for 17 of 20 questions no offered tool answers); where the grammar
//! lets the model choose, this wrapper records how strongly it preferred the answer (the
//! margin, in logits) and adds the profile's bias to the answer's tokens.
//!
//! The choice point is where the text so far, whitespace aside, ends with `prefix` and
//! the allowed tokens continue either with the answer (`]` after `{"tool_calls": [`, or
//! `none"` as a task's tool) or with something else (a call, a tool's name). In the
//! model's native formats the choice is the first visible text: a call block or fence
//! opens there, or the answer's text begins.

use std::sync::{Arc, Mutex};

use super::super::generate::TokenConstraint;
use super::TokenSpace;

/// Where the choice is made and what answering looks like there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChoicePoint {
    /// The text before the choice, without whitespace; empty: the start of the answer.
    pub prefix: &'static str,
    /// How the answer's branch continues.
    pub answer: Branch,
}

/// What marks the answer's branch at a choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Branch {
    /// The answer continues with exactly this text.
    Text(&'static str),
    /// Anything that does not open one of these (call openers) is the answer.
    NotOpening(&'static [&'static str]),
}

/// The calls-first envelope: an empty call list is the answer.
pub const EMPTY_CALLS: ChoicePoint = ChoicePoint { prefix: "{\"tool_calls\":[", answer: Branch::Text("]") };
/// The tasks-first envelope: a task whose tool is `none`.
pub const NO_TOOL_TASK: ChoicePoint = ChoicePoint { prefix: "\"tool\":\"", answer: Branch::Text("none\"") };
/// The native formats (Hermes, XML, fences of calls): plain text is the answer.
pub const NATIVE_TEXT: ChoicePoint =
    ChoicePoint { prefix: "", answer: Branch::NotOpening(&["<tool_call>", "<function=", "```"]) };

/// What the watched choices measured, shared with the brain that reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Margins {
    /// The first answer-or-call choice: the answer's best logit minus the call's.
    pub answer: Option<f32>,
    /// Each choice after a call closed ([`super::calls`]) where both ways were open, in
    /// order: another call's best logit minus the end's.
    pub more_calls: Vec<f32>,
    /// The bias made the first such choice: the model preferred to end its calls after the
    /// first, and wrote a second one.
    pub added_call: bool,
    /// Each boolean value chosen ([`super::boolean`]), with its parameter: `true`'s best
    /// logit minus `false`'s.
    pub booleans: Vec<(String, f32)>,
}

/// The margins of one decision, shared with the brain that reports them.
pub type Margin = Arc<Mutex<Margins>>;

pub struct AnswerBias<C> {
    inner: C,
    space: Arc<TokenSpace>,
    point: ChoicePoint,
    bias: f32,
    /// Everything written so far, whitespace removed.
    written: String,
    margin: Margin,
    /// The first choice has been made (later ones are biased but not measured).
    decided: bool,
}

impl<C> AnswerBias<C> {
    pub fn new(inner: C, space: Arc<TokenSpace>, point: ChoicePoint, bias: f32, margin: Margin) -> Self {
        Self { inner, space, point, bias, written: String::new(), margin, decided: false }
    }

    /// How much of the choice's prefix the text ends with, when the next token can reach
    /// the choice: the prefix's last [`REACH`] characters or fewer are still to come.
    fn matched(&self) -> Option<usize> {
        let prefix = self.point.prefix;
        if prefix.is_empty() {
            // The start of the answer: only before anything visible is written.
            return self.written.is_empty().then_some(0);
        }
        let chars: Vec<(usize, char)> = prefix.char_indices().collect();
        let shortest = chars.len().saturating_sub(REACH);
        (shortest..=chars.len())
            .rev()
            .map(|n| chars.get(n).map_or(prefix.len(), |(i, _)| *i))
            .find(|&cut| self.written.ends_with(&prefix[..cut]))
    }

    /// Which way a token, written after `matched` bytes of the prefix, goes.
    fn side(&self, token: u32, matched: usize) -> Side {
        side(self.point, matched, &self.space.visible_text(token))
    }
}

/// Where a token leads from the choice's prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// Past the prefix into the answer (its text agrees with the answer as far as both go).
    Answer,
    /// Past the prefix into something else: a call.
    Call,
    /// Not past the prefix, still on it (blanks, the prefix's own next characters, or
    /// exactly to its end): both ways stay open.
    OnPath,
    /// Off the prefix.
    Off,
}

/// [`Side`] of `text` (whitespace removed) written after `matched` bytes of `point`'s prefix.
fn side(point: ChoicePoint, matched: usize, text: &str) -> Side {
    let prefix = point.prefix;
    let combined = format!("{}{text}", &prefix[..matched]);
    match combined.strip_prefix(prefix) {
        Some("") => Side::OnPath,
        Some(past) => match point.answer {
            Branch::Text(answer) if answer.starts_with(past) || past.starts_with(answer) => Side::Answer,
            Branch::Text(_) => Side::Call,
            Branch::NotOpening(openers) if openers.iter().any(|o| o.starts_with(past) || past.starts_with(o)) => Side::Call,
            Branch::NotOpening(_) => Side::Answer,
        },
        None if prefix.starts_with(&combined) => Side::OnPath,
        None => Side::Off,
    }
}

/// The most characters of the prefix one token may complete on its way to the choice
/// (`[` or `":[` before the answer's `]`).
const REACH: usize = 3;

impl<C: TokenConstraint> TokenConstraint for AnswerBias<C> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.inner.allowed()
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let any = self.inner.mask_logits(logits)?;
        let Some(matched) = self.matched().filter(|_| any) else {
            return Ok(any);
        };
        let sides: Vec<Side> =
            logits.iter().enumerate().map(|(id, v)| if v.is_finite() { self.side(id as u32, matched) } else { Side::Off }).collect();
        // Where one token can go past the prefix into a call (`":[{"` after `{"tool_calls`,
        // the compact JSON the 1.5B writes) but none into the answer, the tokens that stop
        // on the prefix are the answer's way on: they keep it open, the call closes it.
        let answering = if sides.contains(&Side::Answer) { Side::Answer } else { Side::OnPath };
        let (mut best_answer, mut best_other) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
        for (value, side) in logits.iter_mut().zip(sides) {
            if side == answering {
                best_answer = best_answer.max(*value);
                *value += self.bias;
            } else if side == Side::Call {
                best_other = best_other.max(*value);
            }
        }
        if best_answer.is_finite() && best_other.is_finite() && !self.decided {
            // Overwritten until the choice is made: blanks before it choose nothing.
            let mut margin = self.margin.lock().map_err(|_| "margin lock poisoned".to_string())?;
            margin.answer = Some(best_answer - best_other);
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.inner.commit(token)?;
        if !self.decided {
            if let Some(matched) = self.matched() {
                self.decided = matches!(self.side(token, matched), Side::Answer | Side::Call);
            }
        }
        self.written.push_str(&self.space.visible_text(token));
        Ok(())
    }

    forward_rest_to_inner!();
}

#[cfg(test)]
mod tests {
    use llguidance::toktrie::ApproximateTokEnv;
    use serde_json::json;

    use super::super::{lark, KeyOrder, Target};
    use super::*;

    fn space() -> Arc<TokenSpace> {
        Arc::new(TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap())
    }

    /// Greedy decoding of a "model" that always prefers `{` by 2 over `]` and otherwise
    /// writes `wanted`.
    fn decode(bias: f32) -> (String, Option<f32>) {
        let space = space();
        let tools = [json!({"name": "f", "parameters": {"type": "object", "properties": {}}})];
        let grammar = lark(&crate::tools::spec::ToolSpec::parse_all(&tools).unwrap(), Target::Envelope(KeyOrder::CallsFirst));
        let margin = Margin::default();
        let mut c = AnswerBias::new(space.constraint(&grammar).unwrap(), space.clone(), EMPTY_CALLS, bias, margin.clone());
        let mut out = String::new();
        let wanted = br#"{"tool_calls":["#;
        for step in 0..20 {
            let mut logits = vec![0.0f32; space.vocab_size()];
            logits[usize::from(b'{')] = 3.0;
            logits[usize::from(b']')] = 1.0;
            if let Some(b) = wanted.get(step) {
                logits[usize::from(*b)] = 9.0;
            }
            c.mask_logits(&mut logits).unwrap();
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            c.commit(best as u32).unwrap();
            out.push(char::from(best as u8));
            if out.len() > wanted.len() {
                break;
            }
        }
        let m = margin.lock().unwrap().answer;
        (out, m)
    }

    #[test]
    fn tokens_are_sided_by_where_they_lead_from_the_prefix() {
        // `{"tool_calls` written: 12 bytes of the prefix `{"tool_calls":[`.
        for (text, expected) in [
            ("\":[]", Side::Answer),
            ("\":[],\"", Side::Answer),
            ("]", Side::Off),
            ("\":[{\"", Side::Call),
            ("\":[", Side::OnPath),
            ("\":", Side::OnPath),
            ("", Side::OnPath),
            ("\"x", Side::Off),
        ] {
            assert_eq!(side(EMPTY_CALLS, 12, text), expected, "{text}");
        }
        // At the choice itself.
        assert_eq!(side(EMPTY_CALLS, 15, "]"), Side::Answer);
        assert_eq!(side(EMPTY_CALLS, 15, "{\""), Side::Call);
        assert_eq!(side(NO_TOOL_TASK, 8, "no"), Side::Answer);
        assert_eq!(side(NO_TOOL_TASK, 8, "calculator\""), Side::Call);
        // Native formats: a call block or fence opening (or the start of one) is a call.
        for (text, expected) in [
            ("<tool_call>", Side::Call),
            ("<", Side::Call),
            ("``", Side::Call),
            ("```json", Side::Call),
            ("<function=", Side::Call),
            ("The", Side::Answer),
            ("巴黎", Side::Answer),
            ("<b>", Side::Answer),
            ("", Side::OnPath),
        ] {
            assert_eq!(side(NATIVE_TEXT, 0, text), expected, "{text}");
        }
    }

    /// Greedy native decoding of a "model" that prefers a fence by `lead` over text.
    fn decode_native(bias: f32, lead: f32) -> (String, Option<f32>) {
        let space = space();
        let tools = [json!({"name": "f", "parameters": {"type": "object", "properties": {}}})];
        let tools = crate::tools::spec::ToolSpec::parse_all(&tools).unwrap();
        let grammar = lark(&tools, Target::Native(crate::brain::format::NativeStyle::Hermes));
        let margin = Margin::default();
        let mut c = AnswerBias::new(space.constraint(&grammar).unwrap(), space.clone(), NATIVE_TEXT, bias, margin.clone());
        let mut out = String::new();
        for step in 0..4 {
            let mut logits = vec![0.0f32; space.vocab_size()];
            if step == 0 {
                logits[usize::from(b'\n')] = 5.0;
            }
            logits[usize::from(b'`')] = 1.0 + lead;
            logits[usize::from(b'O')] = 1.0;
            logits[usize::from(b'K')] = 0.5;
            c.mask_logits(&mut logits).unwrap();
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            c.commit(best as u32).unwrap();
            out.push(char::from(best as u8));
        }
        let m = margin.lock().unwrap().answer;
        (out, m)
    }

    #[test]
    fn a_native_decision_chooses_at_its_first_visible_text_and_only_there() {
        // A blank first (chooses nothing), then the fence wins by 1.5.
        let (text, margin) = decode_native(0.0, 1.5);
        assert_eq!(text, "\n```");
        assert_eq!(margin, Some(-1.5));
        // Biased past the lead, the text wins; after it, `` ` `` is no call opener any
        // more and no token is biased (`O` stays ahead of `K` as the logits say).
        let (text, margin) = decode_native(2.0, 1.5);
        assert_eq!(text, "\nO``");
        assert_eq!(margin, Some(-1.5));
    }

    #[test]
    fn the_margin_is_recorded_and_the_bias_can_tip_the_choice() {
        let (text, margin) = decode(0.0);
        assert_eq!(text, r#"{"tool_calls":[{"#);
        assert_eq!(margin, Some(-2.0));
        let (text, margin) = decode(2.5);
        assert_eq!(text, r#"{"tool_calls":[]"#);
        // The margin is the model's own, before the bias.
        assert_eq!(margin, Some(-2.0));
    }
}
