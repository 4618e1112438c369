//! The tool's name, weighed against where the tool is listed. Offered several functions, a
//! small model takes the first one that looks plausible: on the dev split, listing the
//! functions in reverse order took the 0.5B's right multiple-function decisions from 32 to
//! 18 of 45 (prompt_json). What it would write with no question at all (the content-free
//! prior, [`super::super::name_prior`]) measures that preference; this wrapper divides it
//! out where a constrained decision writes a call's name ("contextual calibration"): each
//! name `n` gets `-strength * ln p0(n)` added, spread over the name's tokens.
//!
//! A name is written after `"name":` (the envelope's calls, Hermes blocks, a fence's
//! array). Only the decision's first name is weighed: the prior is read where the first call
//! opens, and after one call the model's leaning is another; weighed there too, the 0.5B's
//! second call went to a function listed further down and lost 6 dev parallel_multiple
//! decisions (prompt_json) and gained none. At each step of the first name, a token is weighed by the prior mass of the names its text
//! leads to against the mass of those the text so far leads to; the steps add up to the
//! whole name's weight however the name is split into tokens. Where some allowed token
//! leads to no name (an argument called `name`, whose value is free text), nothing is
//! weighed.

use std::sync::Arc;

use super::super::generate::TokenConstraint;
use super::TokenSpace;

/// The key a call's name is the value of, whitespace removed.
const NAME_KEY: &str = "\"name\":";

/// Each offered name (whitespace removed) with its content-free log-probability.
#[derive(Clone, Debug, PartialEq)]
pub struct NamePrior {
    names: Vec<(String, f32)>,
}

impl NamePrior {
    /// `names` with their log-probabilities (any scale: they are normalized here).
    pub fn new(names: Vec<(String, f32)>) -> Self {
        let names: Vec<(String, f32)> = names.into_iter().map(|(n, lp)| (n.chars().filter(|c| !c.is_whitespace()).collect(), lp)).collect();
        let total = log_sum_exp(names.iter().map(|(_, lp)| *lp));
        Self { names: names.into_iter().map(|(n, lp)| (n, lp - total)).collect() }
    }

    /// The names and their normalized log-probabilities.
    pub fn names(&self) -> &[(String, f32)] {
        &self.names
    }

    /// The log of the prior mass of the names `written` leads to: those it begins, or, when
    /// `closed`, the one it is. `None`: no name.
    fn mass(&self, written: &str, closed: bool) -> Option<f32> {
        let fits = self.names.iter().filter(|(n, _)| if closed { n == written } else { n.starts_with(written) });
        let mass = log_sum_exp(fits.map(|(_, lp)| *lp));
        mass.is_finite().then_some(mass)
    }
}

fn log_sum_exp(values: impl Iterator<Item = f32>) -> f32 {
    let values: Vec<f32> = values.collect();
    let top = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !top.is_finite() {
        return top;
    }
    top + values.iter().map(|v| (v - top).exp()).sum::<f32>().ln()
}

/// Where a text (whitespace removed) stands in a name.
#[derive(Clone, Debug, PartialEq)]
enum Place {
    /// Right after `"name":`, before the value's opening quote.
    Key,
    /// Inside the name's string, this much written.
    In(String),
    /// The name is closed: this one.
    Closed(String),
    /// Anywhere else.
    Outside,
}

/// The [`Place`] at the end of `text` (whitespace removed).
fn place(text: &str) -> Place {
    let Some(at) = text.rfind(NAME_KEY) else { return Place::Outside };
    let rest = &text[at + NAME_KEY.len()..];
    let Some(value) = rest.strip_prefix('"') else {
        return if rest.is_empty() { Place::Key } else { Place::Outside };
    };
    match value.find('"') {
        None if !value.contains('\\') => Place::In(value.to_string()),
        Some(end) if !value[..end].contains('\\') => Place::Closed(value[..end].to_string()),
        _ => Place::Outside,
    }
}

pub struct NameCalibration<C> {
    inner: C,
    space: Arc<TokenSpace>,
    prior: Arc<NamePrior>,
    strength: f32,
    /// Everything written so far, whitespace removed.
    written: String,
}

impl<C> NameCalibration<C> {
    pub fn new(inner: C, space: Arc<TokenSpace>, prior: Arc<NamePrior>, strength: f32) -> Self {
        Self { inner, space, prior, strength, written: String::new() }
    }

    /// The log prior mass of the names `text` (whitespace removed) leads to: `Some(None)`
    /// where it is no longer in a name (the name closed before), `None` where it leads to
    /// no name at all.
    fn mass_at(&self, text: &str) -> Option<Option<f32>> {
        match place(text) {
            Place::Key => Some(Some(0.0)),
            Place::In(partial) => self.prior.mass(&partial, false).map(Some),
            Place::Closed(name) => self.prior.mass(&name, true).map(Some),
            Place::Outside => Some(None),
        }
    }
}

impl<C: TokenConstraint> TokenConstraint for NameCalibration<C> {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.inner.allowed()
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let any = self.inner.mask_logits(logits)?;
        if !any || self.strength == 0.0 {
            return Ok(any);
        }
        if self.written.matches(NAME_KEY).count() > 1 {
            return Ok(any);
        }
        let before = match place(&self.written) {
            Place::Key => 0.0,
            Place::In(partial) => match self.prior.mass(&partial, false) {
                Some(mass) => mass,
                None => return Ok(any),
            },
            Place::Closed(_) | Place::Outside => return Ok(any),
        };
        let mut weights = Vec::new();
        for (id, value) in logits.iter().enumerate() {
            if !value.is_finite() {
                continue;
            }
            let after = format!("{}{}", self.written, self.space.visible_text(id as u32));
            match self.mass_at(&after) {
                // A token that leads to no name: free text, not a choice between names.
                None => return Ok(any),
                Some(None) => {}
                Some(Some(mass)) => weights.push((id, -self.strength * (mass - before))),
            }
        }
        for (id, weight) in weights {
            logits[id] += weight;
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.inner.commit(token)?;
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

    #[test]
    fn places_in_a_name_are_read_from_the_text() {
        assert_eq!(place(r#"{"tool_calls":[{"id":"call_001","name":"#), Place::Key);
        assert_eq!(place(r#"{"tool_calls":[{"id":"call_001","name":"wea"#), Place::In("wea".into()));
        assert_eq!(place(r#"{"name":"weather.now","#), Place::Closed("weather.now".into()));
        // Past the name, it stays the name written.
        assert_eq!(place(r#"{"name":"a","args":{"city":"#), Place::Closed("a".into()));
        assert_eq!(place(r#"{"name":"a","args":{"name":"Bo"#), Place::In("Bo".into()));
        assert_eq!(place(r#"{"tool_calls":["#), Place::Outside);
    }

    #[test]
    fn the_prior_is_normalized_and_masses_add_up_over_shared_prefixes() {
        let prior = NamePrior::new(vec![("a.x".into(), 0.0), ("a.y".into(), 0.0), ("b".into(), 2f32.ln())]);
        let total: f32 = prior.names().iter().map(|(_, lp)| lp.exp()).sum();
        assert!((total - 1.0).abs() < 1e-5);
        assert!((prior.mass("a.", false).unwrap().exp() - 0.5).abs() < 1e-5);
        assert!((prior.mass("a.x", true).unwrap().exp() - 0.25).abs() < 1e-5);
        assert_eq!(prior.mass("c", false), None);
    }

    /// Greedy decoding, one byte a token, of a "model" that writes `wanted` (logit 9) and
    /// otherwise prefers the bytes of `lean` by 1 over the rest, under the envelope grammar
    /// of tools `a_first` and `b_second` and a prior that favours the first.
    fn decode(strength: f32, wanted: &str, lean: &str) -> String {
        let space = Arc::new(TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap());
        let tools: Vec<_> = ["a_first", "b_second"].iter().map(|n| json!({"name": n, "parameters": {"type": "object", "properties": {}}})).collect();
        let grammar = lark(&crate::tools::spec::ToolSpec::parse_all(&tools).unwrap(), Target::Envelope(KeyOrder::CallsFirst));
        let prior = Arc::new(NamePrior::new(vec![("a_first".into(), 0.0), ("b_second".into(), -3.0)]));
        let mut c = NameCalibration::new(space.constraint(&grammar).unwrap(), space.clone(), prior, strength);
        let mut out = String::new();
        for _ in 0..120 {
            if c.is_finished() {
                break;
            }
            let mut logits = vec![0.0f32; space.vocab_size()];
            for b in lean.bytes() {
                logits[usize::from(b)] = 1.0;
            }
            if let Some(b) = wanted.as_bytes().get(out.len()) {
                logits[usize::from(*b)] = 9.0;
            }
            if !c.mask_logits(&mut logits).unwrap() {
                break;
            }
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            c.commit(best as u32).unwrap();
            out.push(char::from(best as u8));
        }
        out
    }

    #[test]
    fn a_name_the_prior_favours_needs_more_than_a_slight_lean_to_be_chosen() {
        // Up to the name the model writes the envelope; there it leans 1 logit to `a`.
        let opening = r#"{"tool_calls":[{"id":"call_001","name":""#;
        let plain = decode(0.0, opening, "a");
        assert!(plain.contains(r#""name":"a_first""#), "{plain}");
        // The prior gives a_first 95% and b_second 5%: divided out, b_second wins by ~2 logits.
        let calibrated = decode(1.0, opening, "a");
        assert!(calibrated.contains(r#""name":"b_second""#), "{calibrated}");
        // The second call's name is the model's own.
        let second = r#"{"tool_calls":[{"id":"call_001","name":"b_second","args":{}},{"id":"call_002","name":""#;
        let two = decode(1.0, second, "a");
        assert!(two.contains(r#""name":"b_second","args":{}},{"id":"call_002","name":"a_first""#), "{two}");
        // A model sure of its name keeps it (9 logits against the prior's 3).
        let sure = decode(1.0, r#"{"tool_calls":[{"id":"call_001","name":"a_first"#, "");
        assert!(sure.contains(r#""name":"a_first""#), "{sure}");
    }
}
