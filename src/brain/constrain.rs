//! Constrained decoding: the model's tokens are masked, one step at a time, so that the
//! answer can only be a well-formed decision whose calls name known tools with arguments
//! their schema allows (llguidance, the library llama.cpp and vLLM use for this).
//!
//! - [`grammar`]: tools schema + the form of the answer ([`Target`]) -> a Lark grammar.
//! - [`vocab`]: the model's vocabulary as llguidance sees it ([`TokenSpace`], one per model).
//! - [`matcher`]: the decoder's [`TokenConstraint`](super::generate::TokenConstraint) over
//!   an llguidance matcher ([`GrammarConstraint`]).
//!
//! Which form: the envelope for prompt_json and for plan_execute's step decisions, the
//! model's native call blocks for builtin ReAct decisions (Hermes JSON, or XML when the
//! chat template writes `<function=`), the plan object for the plan decision.

mod grammar;
mod matcher;
mod vocab;

pub use grammar::{lark, NativeStyle, Target};
pub use matcher::GrammarConstraint;
pub use vocab::TokenSpace;

use super::generate::ModelHandle;
use super::{BrainError, DecisionRequest};
use crate::protocol::{Phase, ToolCalling};

#[derive(Debug, thiserror::Error)]
pub enum ConstrainError {
    #[error("tools schema, tool {index}: {reason}")]
    Tool { index: usize, reason: String },
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

/// The form of the answer for a phase and a way of passing tools (the prompt asks for the
/// same: see `prompt::build`).
pub fn target(phase: Phase, way: ToolCalling, style: NativeStyle) -> Target {
    match (phase, way) {
        (Phase::Plan, _) => Target::Plan,
        (Phase::React, ToolCalling::Builtin) => Target::Native(style),
        (Phase::React | Phase::Step, _) => Target::Envelope,
    }
}

/// The constraint for one decision of `request` on `model`.
pub fn for_request(model: &ModelHandle, request: &DecisionRequest) -> Result<GrammarConstraint, ConstrainError> {
    let style = model
        .chat_template()
        .map(|t| NativeStyle::of_template(t.source()))
        .unwrap_or(NativeStyle::Hermes);
    let grammar = lark(&request.tools, target(request.phase, request.tool_calling, style))?;
    TokenSpace::for_model(model)?.constraint(&grammar)
}
