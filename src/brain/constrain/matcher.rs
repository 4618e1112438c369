//! The decoder's [`TokenConstraint`] over an llguidance matcher: before each token the
//! grammar's mask sets every token it does not allow to `-inf` (the others keep their
//! logits, so greedy picks the model's favourite among the allowed ones), then the picked
//! token advances the matcher.

use llguidance::toktrie::SimpleVob;
use llguidance::Matcher;

use super::super::generate::TokenConstraint;

/// One generation's grammar state.
pub struct GrammarConstraint {
    matcher: Matcher,
    /// Ids at or past this are outside the tokenizer (padding rows of the output matrix).
    vocab_size: usize,
    /// The mask of the current state, once computed: the decoder asks for the allowed
    /// tokens (to project only those) and then masks with them.
    mask: Option<SimpleVob>,
}

impl std::fmt::Debug for GrammarConstraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrammarConstraint")
            .field("vocab_size", &self.vocab_size)
            .field("stopped", &self.matcher.is_stopped())
            .finish()
    }
}

const WORD_BITS: usize = 32;

impl GrammarConstraint {
    pub fn new(matcher: Matcher, vocab_size: usize) -> Self {
        Self { matcher, vocab_size, mask: None }
    }

    /// The tokens allowed next; once the grammar is complete, only the end of turn.
    fn mask(&mut self) -> Result<SimpleVob, String> {
        if let Some(mask) = &self.mask {
            return Ok(mask.clone());
        }
        let mask = self.matcher.compute_mask_or_eos().map_err(|e| e.to_string())?;
        self.mask = Some(mask.clone());
        Ok(mask)
    }

    /// Why the grammar stopped, or the matcher's error.
    pub fn state(&self) -> String {
        match self.matcher.get_error() {
            Some(e) => format!("error: {e}"),
            None => format!("{:?}", self.matcher.stop_reason()),
        }
    }
}

impl TokenConstraint for GrammarConstraint {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        let vocab = self.vocab_size;
        // A failed mask allows nothing: the generation ends there.
        let ids = self.mask().map(|m| m.to_list()).unwrap_or_default();
        Some(ids.into_iter().filter(|&id| (id as usize) < vocab).collect())
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        let mask = self.mask()?;
        let words = mask.as_slice();
        let vocab = self.vocab_size;
        let mut any = false;
        for (w, chunk) in logits.chunks_mut(WORD_BITS).enumerate() {
            let base = w * WORD_BITS;
            let mut word = words.get(w).copied().unwrap_or(0);
            if base + WORD_BITS > vocab {
                let keep = vocab.saturating_sub(base);
                word &= if keep >= WORD_BITS { u32::MAX } else { (1u32 << keep) - 1 };
            }
            if word == u32::MAX {
                any = true;
                continue;
            }
            for (bit, value) in chunk.iter_mut().enumerate() {
                if word >> bit & 1 == 0 {
                    *value = f32::NEG_INFINITY;
                } else {
                    any = true;
                }
            }
        }
        Ok(any)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.mask = None;
        self.matcher.consume_token(token).map_err(|e| e.to_string())
    }

    fn is_finished(&self) -> bool {
        self.matcher.is_stopped()
    }

    fn draft(&mut self) -> Vec<u32> {
        self.mask = None;
        if self.matcher.is_stopped() {
            return Vec::new();
        }
        self.matcher.compute_ff_tokens()
    }

    fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
        self.mask = None;
        if self.matcher.is_stopped() {
            return 0;
        }
        let vocab = self.vocab_size;
        let inside = tokens.iter().take_while(|&&t| (t as usize) < vocab).count();
        self.matcher.validate_tokens(&tokens[..inside]).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use llguidance::toktrie::ApproximateTokEnv;
    use serde_json::json;

    use super::super::{lark, KeyOrder, Target, TokenSpace};
    use super::*;

    fn space() -> TokenSpace {
        TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap()
    }

    fn envelope() -> String {
        let tools = [json!({"name": "calculator", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}})];
        lark(&crate::tools::spec::ToolSpec::parse_all(&tools).unwrap(), Target::Envelope(KeyOrder::ContentFirst))
    }

    /// Greedy decoding through the mask of a "model" whose favourite token at each step is
    /// the next byte of `wanted` (then `x`), and whose next choices are `x`, `"`, `:`.
    fn decode(constraint: &mut GrammarConstraint, wanted: &[u8], steps: usize, vocab: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for step in 0..steps {
            if constraint.is_finished() {
                break;
            }
            let mut logits = vec![0.0f32; vocab];
            for (rank, byte) in b"x\":".iter().enumerate() {
                logits[usize::from(*byte)] = 4.0 - rank as f32 * 0.1;
            }
            logits[wanted.get(step).map_or(usize::from(b'x'), |b| usize::from(*b))] = 5.0;
            assert!(constraint.mask_logits(&mut logits).unwrap());
            let best = logits
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(i, _)| i as u32)
                .unwrap();
            constraint.commit(best).unwrap();
            out.push(best);
        }
        out
    }

    #[test]
    fn greedy_stays_greedy_where_the_grammar_allows_the_favourite() {
        let space = space();
        let mut constraint = space.constraint(&envelope()).unwrap();
        let answer = br#"{"content": "3.14 * 5 = 15.7", "tool_calls": []}"#;
        let picked = decode(&mut constraint, answer, answer.len() + 4, space.vocab_size());
        assert_eq!(picked, answer.iter().map(|b| u32::from(*b)).collect::<Vec<_>>());
        // The grammar is complete at `}`: the decoder stops, and only EOS would be left.
        assert!(constraint.is_finished(), "{}", constraint.state());
        let mut logits = vec![1.0f32; space.vocab_size()];
        assert!(constraint.mask_logits(&mut logits).unwrap());
        let finite: Vec<usize> = (0..logits.len()).filter(|&i| logits[i].is_finite()).collect();
        assert_eq!(finite, vec![space.eos() as usize]);
    }

    #[test]
    fn the_mask_steers_a_model_that_breaks_format() {
        let space = space();
        let mut constraint = space.constraint(&envelope()).unwrap();
        // The model wants a fenced block: the mask forces `{"content": "` first.
        let picked = decode(&mut constraint, b"```json", 14, space.vocab_size());
        let text: String = picked.iter().map(|&t| char::from(t as u8)).collect();
        assert_eq!(text, "{\"content\":\"xx");
    }

    #[test]
    fn mask_and_allowed_agree_and_ids_past_the_vocabulary_are_masked() {
        let space = space();
        let mut constraint = space.constraint(&envelope()).unwrap();
        let padded = space.vocab_size() + 40;
        let mut logits = vec![0.0f32; padded];
        assert!(constraint.mask_logits(&mut logits).unwrap());
        let finite: Vec<u32> = (0..padded as u32).filter(|&i| logits[i as usize].is_finite()).collect();
        assert_eq!(finite, vec![u32::from(b'{')]);
        assert_eq!(constraint.allowed(), Some(finite));
    }

    #[test]
    fn a_grammar_compiled_again_is_a_fresh_copy_of_the_first() {
        let space = space();
        let mut first = space.constraint(&envelope()).unwrap();
        let answer = br#"{"content": "ok", "tool_calls": []}"#;
        let picked = decode(&mut first, answer, answer.len() + 1, space.vocab_size());
        assert!(first.is_finished());
        assert_eq!(space.compiled_grammars(), 1);
        // The copy starts where a fresh grammar starts, whatever the first went through.
        let mut second = space.constraint(&envelope()).unwrap();
        assert_eq!(space.compiled_grammars(), 1);
        assert_eq!(second.allowed(), Some(vec![u32::from(b'{')]));
        assert_eq!(decode(&mut second, answer, answer.len() + 1, space.vocab_size()), picked);
        assert!(second.is_finished());
        // Another grammar is compiled and kept beside it.
        let tools = [json!({"name": "other", "parameters": {"type": "object", "properties": {}}})];
        space.constraint(&lark(&crate::tools::spec::ToolSpec::parse_all(&tools).unwrap(), Target::Envelope(KeyOrder::ContentFirst))).unwrap();
        assert_eq!(space.compiled_grammars(), 2);
    }

    #[test]
    fn a_token_the_grammar_refuses_is_an_error() {
        let space = space();
        let mut constraint = space.constraint(&envelope()).unwrap();
        let err = constraint.commit(u32::from(b'`')).unwrap_err();
        assert!(!err.is_empty());
        assert!(constraint.is_finished());
    }
}
