//! The answer formats, one module each, and the one place that says which format a
//! decision asks for ([`Ask::target`]).
//!
//! Each module holds what belongs to its format: the parser that recognises it, its piece
//! of the Lark grammar, and the prompt texts (rules and reminders) that ask for it.
//!
//! - [`envelope`]: the seeds' JSON envelope `{"content", "tool_calls"}` (prompt_json, and
//!   plan_execute's step decisions), also when cut off.
//! - [`native`]: what Hermes and XML calls share (a plain answer, or call blocks or
//!   fences; the native reminders); [`hermes`]: `<tool_call>` JSON; [`xml`]: Qwen's
//!   `<function=...>` calls.
//! - [`fenced`]: calls or an envelope in Markdown JSON fences.
//! - [`plan`]: plan_execute's plan object.
//! - [`loose`]: JSON anywhere in the text, the last resort.
//!
//! Parsing stays tolerant: whatever format was asked for, every parser of the chain (`CHAIN`) is
//! tried in its order (a model may answer in another format than asked), and the one that
//! recognised the output is a [`Format`].

pub mod envelope;
pub mod fenced;
pub mod hermes;
pub mod loose;
pub mod native;
pub mod plan;
pub mod xml;

use serde::Serialize;

use super::parse::{Ctx, Found};
use super::template::ChatTemplate;
use crate::protocol::{Message, Phase, ToolCalling};

/// What the whole answer must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The prompt_json envelope (React and Step phases): `{"content": "", "tool_calls":
    /// [one or more calls]}` or `{"content": "answer", "tool_calls": []}`, keys in this order.
    Envelope(KeyOrder),
    /// The model's own format (builtin, React): a plain answer, or tool-call blocks only.
    Native(NativeStyle),
    /// The plan object `{"reasoning": ..., "plan": [{"step", "description", "tool_call"}]}`,
    /// or the envelope's plain answer when no tool is needed (as the plan prompt allows).
    Plan,
}

/// Which envelope key the model writes, and so decides, first. With content first, a
/// model that starts by restating the task has made it an answer before it reaches its
/// calls, and the exclusive envelope then leaves it none; the 0.5B model does exactly that
/// on a fresh request (`{"content": "3.14 * 5 - 2.5", "tool_calls": [calculator]}` when
/// free). So a fresh request puts the calls first; after tool results, where the expected
/// decision is the answer, the content comes first as in the prompt's schema A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    ContentFirst,
    CallsFirst,
}

/// How a model writes its native tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeStyle {
    /// `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>` (Qwen2.5, Hermes).
    Hermes,
    /// `<tool_call>\n<function=NAME>\n<parameter=KEY>\nvalue\n</parameter>\n</function>\n</tool_call>`
    /// (Qwen3-Coder).
    Xml,
}

impl NativeStyle {
    /// The style a chat template teaches: XML when the template writes `<function=`.
    pub fn of_template(source: &str) -> Self {
        if source.contains("<function=") {
            NativeStyle::Xml
        } else {
            NativeStyle::Hermes
        }
    }
}

/// What one decision is asked in: its phase, the way tools are passed, and the call style
/// the model's chat template teaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    pub phase: Phase,
    pub way: ToolCalling,
    pub style: NativeStyle,
    /// After tool results, an envelope decision chooses calls first (another call or the
    /// answer, the choice watched like a fresh one's) instead of writing its answer first
    /// (the profile's `next_call_after_results`).
    pub next_call: bool,
}

impl Ask {
    /// A decision in `phase` and `way` on a model with this chat template (Hermes calls
    /// without one).
    pub fn new(phase: Phase, way: ToolCalling, template: Option<&ChatTemplate>) -> Self {
        let style = template.map(|t| NativeStyle::of_template(t.source())).unwrap_or(NativeStyle::Hermes);
        Ask { phase, way, style, next_call: false }
    }

    /// The format the answer must take (the prompt asks for it, the grammar holds the
    /// model to it); `after_results`: the conversation ends with tool results.
    ///
    /// The envelope for prompt_json and for plan_execute's step decisions (calls first on
    /// a fresh request, content first after tool results: see [`KeyOrder`]), the model's
    /// native call blocks for builtin ReAct decisions, the plan object for the plan
    /// decision.
    pub fn target(self, after_results: bool) -> Target {
        let order = if after_results && !self.next_call { KeyOrder::ContentFirst } else { KeyOrder::CallsFirst };
        match (self.phase, self.way) {
            (Phase::Plan, _) => Target::Plan,
            (Phase::React, ToolCalling::Builtin) => Target::Native(self.style),
            (Phase::React | Phase::Step, _) => Target::Envelope(order),
        }
    }
}

/// Whether the conversation ends with tool results (the decision after them is expected
/// to answer).
pub fn ends_with_results(messages: &[Message]) -> bool {
    matches!(messages.last(), Some(Message::Tool(_)))
}

impl Target {
    /// The reminder for the one retry after the model sent content and calls together.
    pub fn exclusive_reminder(self) -> &'static str {
        match self {
            Target::Native(_) => native::EXCLUSIVE,
            Target::Envelope(_) | Target::Plan => envelope::EXCLUSIVE,
        }
    }
}

/// The format a model output was recognised in: the parser of the chain (`CHAIN`) that decoded it,
/// or plain text. Reports and tests name it as the parser is named (`strict_json`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// The whole text is one JSON value (an envelope, a call, calls, a plan).
    StrictJson,
    QwenXml,
    Hermes,
    FencedJson,
    /// JSON cut off at the end, closed.
    ClosedJson,
    JsonInText,
    /// No structure: the text is the answer.
    PlainText,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::StrictJson => "strict_json",
            Format::QwenXml => "qwen_xml",
            Format::Hermes => "hermes",
            Format::FencedJson => "fenced_json",
            Format::ClosedJson => "closed_json",
            Format::JsonInText => "json_in_text",
            Format::PlainText => "plain_text",
        }
    }

    /// Whether the output was the JSON envelope, where content and calls are explicit
    /// fields (around native calls, text is narration).
    pub fn is_envelope(self) -> bool {
        matches!(self, Format::StrictJson | Format::ClosedJson)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for Format {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// A parser: `None` when it does not recognise the text, `Some(Err)` when it recognises
/// its format but cannot decode it.
pub(super) type ParseFn = fn(&str, &Ctx) -> Option<Result<Found, String>>;

/// The chain, in the order it is tried. Whole-text JSON first (the prompt_json envelope),
/// then the native tag formats, then JSON in fences, then JSON anywhere in the text (cut-off
/// JSON closed first, so a truncated envelope is read whole rather than in pieces). Text
/// matching none of them is plain text.
pub(super) const CHAIN: [(Format, ParseFn); 6] = [
    (Format::StrictJson, envelope::strict_json),
    (Format::QwenXml, xml::qwen_xml),
    (Format::Hermes, hermes::hermes),
    (Format::FencedJson, fenced::fenced_json),
    (Format::ClosedJson, envelope::closed_json),
    (Format::JsonInText, loose::json_in_text),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_phase_and_way_has_its_form() {
        let hermes = NativeStyle::Hermes;
        let fresh = [
            (Phase::React, ToolCalling::PromptJson, Target::Envelope(KeyOrder::CallsFirst)),
            (Phase::React, ToolCalling::Builtin, Target::Native(hermes)),
            (Phase::Plan, ToolCalling::PromptJson, Target::Plan),
            (Phase::Plan, ToolCalling::Builtin, Target::Plan),
        ];
        for (phase, way, expected) in fresh {
            assert_eq!(Ask { phase, way, style: hermes, next_call: false }.target(false), expected, "{phase:?} {way:?}");
        }
        let after_results = [
            (Phase::React, ToolCalling::PromptJson, Target::Envelope(KeyOrder::ContentFirst)),
            (Phase::React, ToolCalling::Builtin, Target::Native(NativeStyle::Xml)),
            (Phase::Step, ToolCalling::PromptJson, Target::Envelope(KeyOrder::ContentFirst)),
            // plan_execute's steps use the envelope whatever the way (as their prompt does).
            (Phase::Step, ToolCalling::Builtin, Target::Envelope(KeyOrder::ContentFirst)),
        ];
        for (phase, way, expected) in after_results {
            assert_eq!(Ask { phase, way, style: NativeStyle::Xml, next_call: false }.target(true), expected, "{phase:?} {way:?}");
        }
        // `next_call_after_results`: envelope decisions after results choose calls first;
        // the native form and fresh decisions are as they were.
        let next_call = [
            (Phase::React, ToolCalling::PromptJson, Target::Envelope(KeyOrder::CallsFirst)),
            (Phase::React, ToolCalling::Builtin, Target::Native(NativeStyle::Xml)),
            (Phase::Step, ToolCalling::PromptJson, Target::Envelope(KeyOrder::CallsFirst)),
        ];
        for (phase, way, expected) in next_call {
            let ask = Ask { phase, way, style: NativeStyle::Xml, next_call: true };
            assert_eq!(ask.target(true), expected, "{phase:?} {way:?}");
            assert_eq!(ask.target(false), Ask { next_call: false, ..ask }.target(false), "{phase:?} {way:?}");
        }
    }

    #[test]
    fn formats_are_named_as_their_parsers_and_only_the_envelope_is_one() {
        let names: Vec<String> = CHAIN.iter().map(|(f, _)| serde_json::to_value(f).unwrap().as_str().unwrap().to_string()).collect();
        assert_eq!(names, ["strict_json", "qwen_xml", "hermes", "fenced_json", "closed_json", "json_in_text"]);
        let envelopes: Vec<Format> = CHAIN.iter().map(|(f, _)| *f).filter(|f| f.is_envelope()).collect();
        assert_eq!(envelopes, [Format::StrictJson, Format::ClosedJson]);
        assert_eq!(Format::PlainText.to_string(), "plain_text");
    }
}
