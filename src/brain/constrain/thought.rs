//! Thinking and constrained decoding together: the model writes its thought freely up to
//! the token that closes it (`</think>`), then the answer is held to the grammar. The
//! thought may not end the turn, and it is closed in time for the answer to fit the budget.

use super::super::generate::TokenConstraint;

/// Tokens kept for the answer: with fewer left, the thought is closed.
const ANSWER_ROOM: usize = 128;

pub struct ThoughtFirst {
    inner: Box<dyn TokenConstraint + Send>,
    /// The token that closes the thought.
    close: u32,
    /// Tokens that end the turn (not allowed inside the thought).
    stops: Vec<u32>,
    thinking: bool,
    remaining: usize,
}

impl ThoughtFirst {
    pub fn new(inner: Box<dyn TokenConstraint + Send>, close: u32, stops: Vec<u32>) -> Self {
        Self { inner, close, stops, thinking: true, remaining: usize::MAX }
    }

    fn must_close(&self) -> bool {
        self.remaining <= ANSWER_ROOM
    }
}

impl TokenConstraint for ThoughtFirst {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        if !self.thinking {
            return self.inner.allowed();
        }
        // Without a vocabulary size, only the forced close can be listed; the rest goes
        // through `mask_logits`.
        self.must_close().then(|| vec![self.close])
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        if !self.thinking {
            return self.inner.mask_logits(logits);
        }
        if self.must_close() {
            for (id, value) in logits.iter_mut().enumerate() {
                if id as u32 != self.close {
                    *value = f32::NEG_INFINITY;
                }
            }
            return Ok((self.close as usize) < logits.len());
        }
        for &stop in &self.stops {
            if let Some(value) = logits.get_mut(stop as usize) {
                *value = f32::NEG_INFINITY;
            }
        }
        Ok(true)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        if self.thinking {
            self.thinking = token != self.close;
            return Ok(());
        }
        self.inner.commit(token)
    }

    fn is_finished(&self) -> bool {
        !self.thinking && self.inner.is_finished()
    }

    fn budget(&mut self, remaining: usize) {
        self.remaining = remaining;
        if !self.thinking {
            self.inner.budget(remaining);
        }
    }

    fn draft(&mut self) -> Vec<u32> {
        if self.thinking {
            return Vec::new();
        }
        self.inner.draft()
    }

    fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
        if !self.thinking {
            return self.inner.valid_prefix(tokens);
        }
        // A draft may run up to the close of the thought (the answer's grammar is not
        // asked about what follows it).
        tokens.iter().position(|&t| t == self.close || self.stops.contains(&t)).unwrap_or(tokens.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allows only token 7, then is finished.
    struct Seven(bool);

    impl TokenConstraint for Seven {
        fn allowed(&mut self) -> Option<Vec<u32>> {
            Some(if self.0 { vec![] } else { vec![7] })
        }
        fn commit(&mut self, token: u32) -> Result<(), String> {
            if token != 7 {
                return Err(format!("{token} is not 7"));
            }
            self.0 = true;
            Ok(())
        }
        fn is_finished(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn the_thought_is_free_but_cannot_end_the_turn_then_the_grammar_holds() {
        let mut c = ThoughtFirst::new(Box::new(Seven(false)), 5, vec![9]);
        c.budget(500);
        let mut logits = vec![0.0; 10];
        assert!(c.mask_logits(&mut logits).unwrap());
        assert_eq!(logits.iter().filter(|v| v.is_finite()).count(), 9);
        assert!(logits[9].is_infinite());
        c.commit(3).unwrap();
        c.commit(5).unwrap();
        assert!(!c.is_finished());
        let mut logits = vec![0.0; 10];
        c.mask_logits(&mut logits).unwrap();
        assert_eq!(logits.iter().position(|v| v.is_finite()), Some(7));
        assert!(c.commit(3).is_err());
        c.commit(7).unwrap();
        assert!(c.is_finished());
    }

    #[test]
    fn a_long_thought_is_closed_in_time_for_the_answer() {
        let mut c = ThoughtFirst::new(Box::new(Seven(false)), 5, vec![9]);
        c.budget(ANSWER_ROOM);
        let mut logits = vec![0.0; 10];
        c.mask_logits(&mut logits).unwrap();
        assert_eq!(logits.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(i, _)| i).collect::<Vec<_>>(), [5]);
        assert_eq!(c.valid_prefix(&[1, 2, 5, 7]), 2);
    }
}
