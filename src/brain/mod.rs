//! B4, the brain: `messages + tools_schema -> AIMessage`.
//!
//! Every brain (the real candle one, the mock) answers the same [`Brain::decide`] call.
//! The real one is a pipeline of small modules: [`prompt`] builds the prompt messages for
//! the chosen tool-calling way, [`template`] renders the model's chat template,
//! [`generate`] decodes on the model's own thread, [`parse`] turns the raw text into a
//! decision.

pub mod candle;
pub mod choice_names;
pub mod config;
pub mod constrain;
pub mod context;
pub mod courtesy;
pub mod echo;
mod decision;
pub mod extra_call;
pub mod faithful;
pub mod fetch;
pub mod follow_up;
pub mod format;
pub mod generate;
pub mod list_echo;
pub mod listed_names;
pub mod made_up;
pub mod mock;
pub mod name_prior;
pub mod named_flags;
pub mod model;
pub mod parse;
pub mod progress;
pub mod prompt;
#[cfg(test)]
mod scripted;
pub mod served;
pub mod stated_optional;
pub mod stated_times;
pub mod next_step;
pub mod noun_values;
pub mod synthesis;
pub mod template;
pub mod threshold;
pub mod tokenizer;
pub mod unfit_action;

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::{AiMessage, DecisionReport, Message, Phase, Plan, ToolCalling};
pub use crate::protocol::{DecisionStatus, Decoding, Strategy, Stream};
pub use config::{Backend, Exclusivity, ModelConfig, Profile, ServerKind};

/// One decision to make.
#[derive(Clone, Debug)]
pub struct DecisionRequest {
    pub messages: Vec<Message>,
    /// Tools in OpenAI function format: `{"type":"function","function":{name,description,parameters}}`.
    pub tools: Vec<Value>,
    pub phase: Phase,
    pub tool_calling: ToolCalling,
    pub exclusivity: Exclusivity,
    /// Overrides the profile's decoding when set.
    pub decoding: Option<Decoding>,
    /// Overrides the profile's decision strategy when set.
    pub strategy: Option<Strategy>,
    /// Overrides the profile's `more_calls_bias` when set (the next-step check asks with none:
    /// there a call more is what it decides).
    pub more_calls_bias: Option<f32>,
    /// Overrides the profile's biases toward answering (`no_call_bias`, `builtin_no_call_bias`,
    /// `input_given_bias`) when set: a request asked again with the tools that do what it
    /// asks and nothing has done is pushed to call one ([`next_step`]).
    pub answer_bias: Option<f32>,
    /// Overrides the profile's `name_calibration` when set: the requests the follow-up and
    /// next-step checks ask afresh are asked with none (they rely on the model naming the
    /// tool it already called, which they then drop as a repeat).
    pub name_calibration: Option<f32>,
}

/// What a brain answers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Decision {
    pub ai: AiMessage,
    /// The model's raw text (the last attempt's when it retried).
    pub raw_output: String,
    /// The rendered prompt the model saw.
    pub prompt: String,
    /// In the plan phase, the plan.
    pub plan: Option<Plan>,
    /// How it was made: phase, way, decoding, format, status, stats, warnings.
    pub report: DecisionReport,
}

impl Decision {
    pub fn valid(&self) -> bool {
        self.report.valid()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BrainError {
    #[error("model file not found: {path} (run `b4 models fetch {fetch}`)")]
    ModelMissing { path: String, fetch: String },
    /// A profile with no pinned download whose file is not there: the user brings it.
    #[error("model not found: {path} (profile {profile} has no download: put a GGUF file there, or a Hugging Face folder with config.json, tokenizer.json and *.safetensors, or point its model_name_or_path at yours)")]
    ModelNotProvided { path: String, profile: String },
    #[error("model file {path} is corrupt: {problem}; run `b4 models fetch {fetch}` to replace it")]
    ModelCorrupt { path: String, problem: String, fetch: String },
    #[error("cannot load model {path}: {reason}")]
    Load { path: String, reason: String },
    #[error("prompt has {tokens} tokens, over max_input_tokens {max}")]
    PromptTooLong { tokens: usize, max: usize },
    #[error("chat template: {0}")]
    Template(String),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("generation failed: {0}")]
    Generation(String),
    #[error("cancelled")]
    Cancelled,
    /// A file of the model folder or profile that could not be read (it names the file).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// A served model's server failed or refused (`backend: openai`).
    #[error("model server {base_url}: {problem}")]
    Server { base_url: String, problem: String },
    #[error("{0}")]
    Other(String),
}

/// The brain a profile names. The mock is instant; a real model loads (once per file,
/// dtype and device) on first use.
pub fn make_brain(profile: &Profile) -> Result<Box<dyn Brain>, BrainError> {
    make_brain_reporting(profile, &progress::ignore)
}

/// [`make_brain`], telling `progress` how far loading the model has come.
pub fn make_brain_reporting(profile: &Profile, progress: progress::ProgressSink<'_>) -> Result<Box<dyn Brain>, BrainError> {
    match profile.backend {
        Backend::Mock => Ok(Box::new(mock::MockBrain::new(profile.clone()))),
        Backend::Candle => Ok(Box::new(candle::CandleBrain::load_reporting(profile, progress)?)),
        Backend::OpenAi => Ok(Box::new(served::ServedBrain::new(profile)?)),
    }
}

/// Receives the prompt's reading progress and each decoded piece of text as they come.
pub type TokenSink<'a> = &'a mut dyn FnMut(Stream<'_>);

pub trait Brain: Send {
    /// The profile this brain runs.
    fn profile(&self) -> &Profile;

    /// Makes one decision. Streams prefill progress and text to `on_token`; stops within
    /// one token (or one prefill chunk) once `cancel` is set.
    fn decide(
        &mut self,
        request: &DecisionRequest,
        on_token: TokenSink<'_>,
        cancel: &AtomicBool,
    ) -> Result<Decision, BrainError>;
}

/// The user's latest question in a conversation.
pub(crate) fn last_question(messages: &[crate::protocol::Message]) -> Option<&str> {
    messages.iter().rev().find_map(|m| match m {
        crate::protocol::Message::User { content } => Some(content.as_str()),
        _ => None,
    })
}

/// The calls made since the latest user message.
pub(crate) fn calls_since_question(messages: &[crate::protocol::Message]) -> Vec<crate::protocol::ToolCall> {
    let start = messages.iter().rposition(|m| matches!(m, crate::protocol::Message::User { .. })).map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter_map(|m| match m {
            crate::protocol::Message::Assistant(ai) => Some(ai.tool_calls.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect()
}
