//! What a Qwen3.5 cache holds and where it can go back to. Full-attention layers keep K
//! and V, which cut back to any length; a linear layer's recurrent state only moves
//! forward, so copies of all of them are kept at a few positions: those [`Checkpoints::mark`]
//! names (where a prompt or an answer ends: the next prompt of a conversation shares them)
//! and the one before the last call that ran several tokens (a draft rolls back to it).
//! Going back to a position between checkpoints restores the one before it and runs the
//! tokens after it again; both passes (candle ops, our CPU pass) keep their cache this way.

use super::delta::DeltaState;

/// Checkpoints kept at marked positions (where the last few prompts and answers end).
const MAX_MARKS: usize = 6;

#[derive(Clone, Debug)]
struct Checkpoint {
    pos: usize,
    states: Vec<DeltaState>,
}

/// The tokens a cache holds, and checkpoints of its recurrent states.
#[derive(Clone, Debug, Default)]
pub struct Checkpoints {
    history: Vec<u32>,
    marks: Vec<Checkpoint>,
    before_last: Option<Checkpoint>,
}

/// How to go back: the recurrent states at `from`, then the tokens to run again.
pub struct Rewind {
    pub from: usize,
    pub states: States,
    pub replay: Vec<u32>,
}

#[derive(Debug, PartialEq)]
pub enum States {
    /// The current ones are those of `from`.
    Keep,
    /// Fresh ones (`from` is 0).
    Fresh,
    Restore(Vec<DeltaState>),
}

impl Checkpoints {
    pub fn len(&self) -> usize {
        self.history.len()
    }

    /// Tokens have run: they are part of the cache now.
    pub fn extend(&mut self, tokens: &[u32]) {
        self.history.extend_from_slice(tokens);
    }

    /// Before a call of several tokens: keeps `states`, those it starts from.
    pub fn before_call(&mut self, states: Vec<DeltaState>) {
        self.before_last = Some(Checkpoint { pos: self.history.len(), states });
    }

    /// Whether the current position still wants a mark (one per position).
    pub fn wants_mark(&self) -> bool {
        let pos = self.history.len();
        pos > 0 && !self.marks.iter().any(|m| m.pos == pos)
    }

    /// Keeps `states`, those of the current position, as a checkpoint.
    pub fn mark(&mut self, states: Vec<DeltaState>) {
        if !self.wants_mark() {
            return;
        }
        let pos = self.history.len();
        self.marks.push(Checkpoint { pos, states });
        if self.marks.len() > MAX_MARKS {
            self.marks.remove(0);
        }
    }

    /// The longest prefix of at most `len` cached tokens kept without running any again.
    pub fn reusable(&self, len: usize) -> usize {
        if len >= self.history.len() {
            return self.history.len();
        }
        self.marks.iter().chain(&self.before_last).map(|c| c.pos).filter(|&p| p <= len).max().unwrap_or(0)
    }

    /// Goes back to `len` cached tokens (`None` when `len` is past the cache): forgets
    /// what came after the checkpoint it restores and says what to restore and run again.
    pub fn rewind(&mut self, len: usize) -> Option<Rewind> {
        if len > self.history.len() {
            return None;
        }
        if len == self.history.len() {
            return Some(Rewind { from: len, states: States::Keep, replay: Vec::new() });
        }
        let from = self.reusable(len);
        let replay = self.history[from..len].to_vec();
        let states = match self.marks.iter().chain(&self.before_last).find(|c| c.pos == from) {
            Some(c) => States::Restore(c.states.clone()),
            None => States::Fresh,
        };
        self.cut(from);
        Some(Rewind { from, states, replay })
    }

    /// Forgets everything after `len`.
    pub fn cut(&mut self, len: usize) {
        self.history.truncate(len);
        self.marks.retain(|m| m.pos <= len);
        self.before_last = self.before_last.take().filter(|c| c.pos <= len);
    }
}

/// A model whose cache is a recurrent state per linear layer beside attention caches that
/// cut back, kept with [`Checkpoints`]: both Qwen3.5 passes. They give access to their
/// states and checkpoints; going back, marking and clearing are written once, here.
pub trait Recurrent {
    /// The linear layers' states, in layer order.
    fn delta_states(&self) -> Vec<&DeltaState>;
    fn delta_states_mut(&mut self) -> Vec<&mut DeltaState>;
    fn checkpoints(&self) -> &Checkpoints;
    fn checkpoints_mut(&mut self) -> &mut Checkpoints;
    /// Drops what the attention caches hold past `len`.
    fn cut_attention(&mut self, len: usize);
    /// Runs `tokens` after the cached ones (their logits are not needed).
    fn replay(&mut self, tokens: &[u32]) -> candle_core::Result<()>;

    /// Copies of the linear layers' states.
    fn states(&self) -> Vec<DeltaState> {
        self.delta_states().into_iter().cloned().collect()
    }

    fn set_states(&mut self, states: &[DeltaState]) {
        for (state, saved) in self.delta_states_mut().into_iter().zip(states) {
            state.clone_from(saved);
        }
    }

    fn reset_states(&mut self) {
        self.delta_states_mut().into_iter().for_each(DeltaState::reset);
    }

    /// Keeps a checkpoint of the current position, so a later prompt that shares the
    /// tokens so far continues from here.
    fn mark_here(&mut self) {
        if self.checkpoints().wants_mark() {
            let states = self.states();
            self.checkpoints_mut().mark(states);
        }
    }

    /// Before a call of several tokens: keeps the states it starts from.
    fn before_call(&mut self) {
        let states = self.states();
        self.checkpoints_mut().before_call(states);
    }

    /// Keeps the first `len` cached tokens: restores the latest checkpoint at or before
    /// `len` and runs the tokens after it again. False (and nothing changed) when `len` is
    /// past the cache.
    fn go_back(&mut self, len: usize) -> candle_core::Result<bool> {
        let Some(rewind) = self.checkpoints_mut().rewind(len) else { return Ok(false) };
        match &rewind.states {
            States::Keep => {}
            States::Fresh => self.reset_states(),
            States::Restore(states) => self.set_states(states),
        }
        self.cut_attention(rewind.from);
        if !rewind.replay.is_empty() {
            self.replay(&rewind.replay)?;
        }
        Ok(true)
    }

    /// An empty cache.
    fn forget(&mut self) {
        self.reset_states();
        self.cut_attention(0);
        *self.checkpoints_mut() = Checkpoints::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(v: f32) -> Vec<DeltaState> {
        vec![DeltaState { conv: vec![v], state: vec![v] }]
    }

    #[test]
    fn going_back_restores_the_latest_checkpoint_and_replays_the_rest() {
        let mut c = Checkpoints::default();
        c.extend(&[1, 2, 3]);
        c.mark(state(3.0));
        c.before_call(state(3.0));
        c.extend(&[4, 5]);
        c.extend(&[6]);
        assert_eq!((c.reusable(3), c.reusable(4), c.reusable(2), c.reusable(6)), (3, 3, 0, 6));
        let r = c.rewind(5).unwrap();
        assert_eq!((r.from, r.states, r.replay), (3, States::Restore(state(3.0)), vec![4, 5]));
        assert_eq!(c.len(), 3);
        let r = c.rewind(2).unwrap();
        assert_eq!((r.from, r.states, r.replay), (0, States::Fresh, vec![1, 2]));
        assert_eq!(c.rewind(0).unwrap().states, States::Keep);
        assert_eq!((c.len(), c.reusable(1)), (0, 0));
        assert!(c.rewind(1).is_none());
    }

    #[test]
    fn marks_are_bounded_and_one_per_position() {
        let mut c = Checkpoints::default();
        for t in 0..10u32 {
            c.extend(&[t]);
            c.mark(state(t as f32));
            assert!(!c.wants_mark());
        }
        assert_eq!(c.marks.len(), MAX_MARKS);
        assert_eq!(c.reusable(3), 0);
        assert_eq!(c.reusable(9), 9);
    }
}
