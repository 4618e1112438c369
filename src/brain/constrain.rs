//! Constrained decoding: the model's tokens are masked, one step at a time, so that the
//! answer can only be a well-formed decision whose calls name known tools with arguments
//! their schema allows (llguidance, the library llama.cpp and vLLM use for this).
//!
//! - [`grammar`]: tools schema + the form of the answer ([`Target`]) -> a Lark grammar.
//! - [`vocab`]: the model's vocabulary as llguidance sees it ([`TokenSpace`], one per model).
//! - [`matcher`]: the decoder's [`TokenConstraint`](super::generate::TokenConstraint) over
//!   an llguidance matcher ([`GrammarConstraint`]).
//!
//! Which form: the one [`Ask::target`] names (the prompt asks for the same); each form's
//! grammar piece lives with its format in [`super::format`].
//!
//! The grammar is complete when the answer is: the decoder then stops (only the end of
//! turn would be left). An answer cut off by `max_new_tokens` is still cut off.

/// The [`TokenConstraint`] methods a wrapper that only masks and watches leaves to the
/// constraint it wraps (its `inner`).
macro_rules! forward_rest_to_inner {
    () => {
        fn is_finished(&self) -> bool {
            self.inner.is_finished()
        }

        fn budget(&mut self, remaining: usize) {
            self.inner.budget(remaining);
        }

        fn draft(&mut self) -> Vec<u32> {
            self.inner.draft()
        }

        fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
            self.inner.valid_prefix(tokens)
        }
    };
}

mod bias;
mod boolean;
mod calls;
mod closing;
mod formats;
pub(crate) mod grammar;
pub mod grounding;
mod matcher;
mod names;
mod optional;
mod tasks;
mod thought;
mod vocab;

pub use closing::{Closing, RESERVE};
pub use formats::{normalize, normalize_args, notation};
pub use bias::{AnswerBias, Branch, ChoicePoint, Margin, Margins, EMPTY_CALLS, NATIVE_TEXT, NO_TOOL_TASK};
pub use boolean::TrueBias;
pub use calls::MoreCalls;
pub use grammar::{after_tasks_lark, json_schema, lark, tasks_lark, KeyOrder, NativeStyle, Target, NO_TOOL};
pub use matcher::GrammarConstraint;
pub use names::{NameCalibration, NamePrior};
pub use optional::OptionalBias;
pub use tasks::{chosen_tools, TasksFirst};
pub use thought::ThoughtFirst;
pub use vocab::TokenSpace;

use std::sync::Arc;

use super::generate::{ModelHandle, TokenConstraint};
use super::{BrainError, DecisionRequest};
use super::format::{ends_with_results, Ask};
use crate::protocol::{Message, Strategy};
use crate::tools::spec::{SpecError, ToolSpec};

#[derive(Debug, thiserror::Error)]
pub enum ConstrainError {
    #[error("tools schema, {0}")]
    Tools(#[from] SpecError),
    #[error("cannot compile the answer grammar: {0}")]
    Grammar(String),
    #[error("token vocabulary: {0}")]
    Vocabulary(String),
    #[error("grammar matcher: {0}")]
    Matcher(String),
}

impl From<ConstrainError> for BrainError {
    fn from(e: ConstrainError) -> Self {
        BrainError::Other(format!("constrained decoding: {e}"))
    }
}

/// How the choices a small model gets wrong are watched and weighted: answering or
/// calling, and closing an object or adding an optional key.
#[derive(Clone, Debug, Default)]
pub struct Choices {
    /// Added to the answer's logits where the model chooses in the envelope (see [`bias`]).
    pub bias: f32,
    /// Added to the answer's logits where a fresh decision in the model's native format
    /// chooses between text and a call.
    pub native_bias: f32,
    /// Added to another call's logits where a call has just closed (see [`calls`]).
    pub more_calls: f32,
    /// Receives the model's own margins at the choices watched.
    pub margin: Margin,
    /// Added to closing an object where another (optional) key could follow (see
    /// [`optional`]).
    pub omit_optional: f32,
    /// Added to `true` where a boolean value is chosen (see [`boolean`]).
    pub true_bias: f32,
    /// Added to the answer's logits in place of both biases above when the latest user
    /// message gives what a tool takes: a file path ([`grounding::user_names_a_file`];
    /// answered without a call, the file's content is made up), words for the user's files
    /// with a tool that searches them ([`grounding::user_looks_for_a_file`]) or arithmetic
    /// ([`super::faithful::user_writes_an_expression`]; the 0.5B's own sums are often wrong).
    pub input_given: Option<f32>,
    /// The content-free prior over the tools' names and how much of it to divide out where
    /// a call's name is written (see [`names`]).
    pub names: Option<(Arc<NamePrior>, f32)>,
}

impl Choices {
    /// The biases toward the answer for `tools` and `messages`: (envelope, native).
    fn answer_biases(&self, tools: &[ToolSpec], messages: &[Message]) -> (f32, f32) {
        let given = || {
            grounding::user_names_a_file(tools, messages)
                || grounding::user_looks_for_a_file(tools, messages)
                || super::faithful::user_writes_an_expression(tools, messages)
        };
        match self.input_given {
            Some(bias) if given() => (bias, bias),
            _ => (self.bias, self.native_bias),
        }
    }
}

/// The constraint for one decision of `request`, asked as `ask`, on `model` under
/// `strategy`: tasks-first replaces the calls-first envelope (a fresh prompt_json
/// request); every other form is one grammar. Fresh envelope and native decisions have
/// their answer-or-call choice and their number of calls watched.
pub fn for_request(
    model: &ModelHandle,
    request: &DecisionRequest,
    ask: Ask,
    strategy: Strategy,
    choice: &Choices,
) -> Result<Box<dyn TokenConstraint + Send>, ConstrainError> {
    let after_results = ends_with_results(&request.messages);
    let target = ask.target(after_results);
    let space = TokenSpace::for_model(model)?;
    let tools = grounding::grounded(&ToolSpec::parse_all(&request.tools)?, &request.messages)?;
    let finish = |inner: Box<dyn TokenConstraint + Send>| -> Box<dyn TokenConstraint + Send> {
        let inner: Box<dyn TokenConstraint + Send> = match &choice.names {
            Some((prior, strength)) => Box::new(NameCalibration::new(inner, space.clone(), prior.clone(), *strength)),
            None => inner,
        };
        let booleans = TrueBias::new(inner, space.clone(), choice.true_bias, choice.margin.clone());
        Box::new(Closing::new(OptionalBias::new(booleans, space.clone(), choice.omit_optional), space.clone()))
    };
    let (bias, native_bias) = choice.answer_biases(&tools, &request.messages);
    let watched = |inner, point, bias| -> Box<dyn TokenConstraint + Send> {
        let answer = AnswerBias::new(inner, space.clone(), point, bias, choice.margin.clone());
        finish(Box::new(MoreCalls::new(answer, space.clone(), choice.more_calls, choice.margin.clone())))
    };
    if uses_tasks(target, strategy, &tools) && !after_results {
        let inner = TasksFirst::new(space.clone(), &tools)?;
        return Ok(finish(Box::new(AnswerBias::new(inner, space.clone(), NO_TOOL_TASK, bias, choice.margin.clone()))));
    }
    let inner = space.constraint(&lark(&tools, target))?;
    if target == Target::Envelope(KeyOrder::CallsFirst) && !tools.is_empty() {
        return Ok(watched(inner, EMPTY_CALLS, bias));
    }
    if matches!(target, Target::Native(_)) && !tools.is_empty() && !after_results {
        return Ok(watched(inner, NATIVE_TEXT, native_bias));
    }
    Ok(finish(Box::new(inner)))
}

/// Whether a decision of this form is asked tasks-first: a fresh envelope decision with
/// tools to choose from.
pub fn uses_tasks<T>(target: Target, strategy: Strategy, tools: &[T]) -> bool {
    strategy == Strategy::TasksFirst && target == Target::Envelope(KeyOrder::CallsFirst) && !tools.is_empty()
}

/// Greedy decoding over a one-byte vocabulary, for the wrappers' tests.
#[cfg(test)]
pub(crate) mod single_byte {
    use std::sync::Arc;

    use llguidance::toktrie::ApproximateTokEnv;
    use serde_json::{json, Value};

    use super::super::generate::TokenConstraint;
    use super::{lark, GrammarConstraint, NativeStyle, Target, TokenSpace};
    use crate::tools::spec::ToolSpec;

    /// A one-byte vocabulary and the Hermes grammar of one tool `f` with `properties`, `required`.
    pub(crate) fn hermes(properties: Value, required: Value) -> (Arc<TokenSpace>, GrammarConstraint) {
        let space = Arc::new(TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap());
        let tool = json!({"name": "f", "parameters": {"type": "object", "properties": properties, "required": required}});
        let grammar = lark(&ToolSpec::parse_all(&[tool]).unwrap(), Target::Native(NativeStyle::Hermes));
        let constraint = space.constraint(&grammar).unwrap();
        (space, constraint)
    }

    /// The text a "model" decodes under `c` that writes `wanted` byte by byte (logit 5) and
    /// would write `rival` second best (logit 4) at every step, for at most `steps` steps.
    pub(crate) fn greedy(c: &mut dyn TokenConstraint, vocab_size: usize, wanted: &str, rival: u8, steps: usize) -> String {
        let mut out = String::new();
        for _ in 0..steps {
            let mut logits = vec![0.0f32; vocab_size];
            let next = wanted.as_bytes().get(out.len()).copied().unwrap_or(b'\n');
            logits[usize::from(next)] = 5.0;
            logits[usize::from(rival)] = logits[usize::from(rival)].max(4.0);
            c.mask_logits(&mut logits).unwrap();
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            c.commit(best as u32).unwrap();
            out.push(char::from(best as u8));
            if c.is_finished() {
                break;
            }
        }
        out
    }
}
