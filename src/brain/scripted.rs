//! A brain that answers from a script, for tests of the checks that ask the model again:
//! it notes what each request offered and how it was pushed.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::{Brain, BrainError, Decision, DecisionRequest, Exclusivity, Profile, TokenSink};
use crate::protocol::{AiMessage, DecisionReport, Message, Phase, ToolCalling};
use crate::tools::spec::ToolSpec;

pub(crate) struct Scripted {
    pub profile: Profile,
    /// The answers, in the order the requests come.
    pub answers: Vec<AiMessage>,
    /// The tools each request offered, by name.
    pub offered: Vec<Vec<String>>,
    /// Each request's `answer_bias`.
    pub pushed: Vec<Option<f32>>,
    /// Each request's messages.
    pub asked: Vec<Vec<Message>>,
    /// Each request's way of passing tools.
    pub ways: Vec<ToolCalling>,
    /// Each request's `name_calibration`.
    pub calibrations: Vec<Option<f32>>,
}

impl Scripted {
    pub fn new(profile: Profile, answers: Vec<AiMessage>) -> Self {
        Self { profile, answers, offered: Vec::new(), pushed: Vec::new(), asked: Vec::new(), ways: Vec::new(), calibrations: Vec::new() }
    }
}

impl Brain for Scripted {
    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn decide(&mut self, request: &DecisionRequest, _: TokenSink<'_>, _: &AtomicBool) -> Result<Decision, BrainError> {
        let names = ToolSpec::parse_all(&request.tools).unwrap().into_iter().map(|t| t.name).collect();
        self.offered.push(names);
        self.pushed.push(request.answer_bias);
        self.asked.push(request.messages.clone());
        self.ways.push(request.tool_calling);
        self.calibrations.push(request.name_calibration);
        let ai = self.answers.remove(0);
        let report = DecisionReport::new("scripted", request.phase, request.tool_calling, None);
        Ok(Decision { ai, raw_output: "redone".into(), prompt: String::new(), plan: None, report })
    }
}

/// A fresh ReAct request of `messages` offering `tools`, under prompt_json, with no
/// setting of its own.
pub(crate) fn request(messages: &[Message], tools: Vec<Value>) -> DecisionRequest {
    DecisionRequest {
        messages: messages.to_vec(),
        tools,
        phase: Phase::React,
        tool_calling: ToolCalling::PromptJson,
        exclusivity: Exclusivity::RetryThenContent,
        decoding: None,
        strategy: None,
        more_calls_bias: None,
        answer_bias: None,
        name_calibration: None,
    }
}
