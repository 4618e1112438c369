//! A builtin decision that calls every offered tool, once each and in the order offered, has
//! copied the tool list rather than chosen from it: the request is asked again in the JSON
//! envelope.
//!
//! Under its own template the 0.5B answered two of the seeds' six requests ("请阅读
//! docs/agent_intro.txt，并总结主要内容。", "分析 data/sample.csv") with one call of each of the
//! five tools in list order in one fence: `file_reader`, `calculator("2 + 3 * 4")`,
//! `local_file_search("Agent")`, `table_analyzer`, `format_converter`. Its margin for going
//! on after each call was +10 to +15 logits, as sure as in right decisions of several calls,
//! so the added-call check keeps them, and the requests are Chinese, which
//! [`super::extra_call::unasked`] does not judge. Asked in the envelope prompt (prompt_json),
//! as [`super::follow_up`] asks a follow-up afresh, it made the one call each asks for. So
//! (profile field `redo_list_echo`) such a decision is made again that way, and that
//! decision stands, reported under builtin with both raw texts.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::{decision, Brain, BrainError, Decision, DecisionRequest, TokenSink};
use crate::protocol::{Phase, Stream, ToolCall, ToolCalling};
use crate::tools::spec::ToolSpec;

/// Where the raw text goes on with the request asked again.
pub const MARK: &str = "\n\n[every offered tool called once, in the order offered: the request asked again in the JSON envelope]\n";

/// The fewest offered tools whose calls in list order count as the list copied: with two,
/// a request of two tasks asks for both.
pub const MIN_TOOLS: usize = 3;

/// Whether `calls` are one call of each of `tools` (at least [`MIN_TOOLS`]), in the order
/// offered.
pub fn echoes(calls: &[ToolCall], tools: &[Value]) -> bool {
    let Ok(tools) = ToolSpec::parse_all(tools) else { return false };
    tools.len() >= MIN_TOOLS && calls.len() == tools.len() && calls.iter().zip(&tools).all(|(call, tool)| call.name == tool.name)
}

/// Asks `request` again in the JSON envelope where `decided` (builtin, react) copied the tool
/// list ([`echoes`]); the new decision replaces it when valid, keeping both raw texts and the
/// figures of both. Whether it was replaced.
pub fn redo(brain: &mut dyn Brain, decided: &mut Decision, request: &DecisionRequest, on_token: TokenSink<'_>, cancel: &AtomicBool) -> Result<bool, BrainError> {
    if request.tool_calling != ToolCalling::Builtin || request.phase != Phase::React || !decided.valid() || !echoes(&decided.ai.tool_calls, &request.tools) {
        return Ok(false);
    }
    on_token(Stream::Text(MARK));
    let copied: Vec<&str> = decided.ai.tool_calls.iter().map(|c| c.name.as_str()).collect();
    let note = format!("every offered tool called once, in the order offered ({}): asked again in the JSON envelope", copied.join(", "));
    let enveloped = DecisionRequest { tool_calling: ToolCalling::PromptJson, ..request.clone() };
    let mut redone = brain.decide(&enveloped, on_token, cancel)?;
    if !redone.valid() {
        decided.report.warnings.push(format!("{note}, which gave no valid decision: the first one kept"));
        decision::add_generation(&mut decided.report.stats, &redone.report.stats);
        return Ok(false);
    }
    redone.raw_output = format!("{}{MARK}{}", decided.raw_output, redone.raw_output);
    redone.report.tool_calling = request.tool_calling;
    let mut warnings = std::mem::take(&mut decided.report.warnings);
    warnings.push(note);
    warnings.append(&mut redone.report.warnings);
    redone.report.warnings = warnings;
    decision::add_generation(&mut redone.report.stats, &decided.report.stats);
    *decided = redone;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::scripted::{self, Scripted};
    use crate::brain::Profile;
    use crate::protocol::{AiMessage, DecisionReport, Message};
    use serde_json::json;

    fn tool(name: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "description": "d", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}})
    }

    fn call(name: &str) -> ToolCall {
        ToolCall { id: String::new(), name: name.into(), args: json!({"path": "data/sample.csv"}).as_object().unwrap().clone() }
    }

    fn tools() -> Vec<Value> {
        ["file_reader", "calculator", "table_analyzer"].map(tool).to_vec()
    }

    #[test]
    fn every_tool_once_in_list_order_is_the_list_copied() {
        let all = [call("file_reader"), call("calculator"), call("table_analyzer")];
        assert!(echoes(&all, &tools()));
        // Another order, one left out, one twice: chosen, not copied.
        assert!(!echoes(&[call("calculator"), call("file_reader"), call("table_analyzer")], &tools()));
        assert!(!echoes(&all[..2], &tools()));
        assert!(!echoes(&[call("file_reader"), call("calculator"), call("table_analyzer"), call("table_analyzer")], &tools()));
        // Two tools: a request of two tasks asks for both.
        assert!(!echoes(&all[..2], &tools()[..2]));
    }

    fn request(way: ToolCalling) -> DecisionRequest {
        DecisionRequest { tool_calling: way, ..scripted::request(&[Message::user("分析 data/sample.csv")], tools()) }
    }

    fn copied() -> Decision {
        let ai = AiMessage::calls(vec![call("file_reader"), call("calculator"), call("table_analyzer")]);
        let report = DecisionReport::new("qwen-0.5b", Phase::React, ToolCalling::Builtin, None);
        Decision { ai, raw_output: "```json\n[...]\n```".into(), prompt: String::new(), plan: None, report }
    }

    #[test]
    fn a_copied_list_is_asked_again_in_the_envelope_and_that_decision_stands() {
        let mut brain = Scripted::new(Profile::default(), vec![AiMessage::calls(vec![call("table_analyzer")])]);
        let mut decided = copied();
        let asked = redo(&mut brain, &mut decided, &request(ToolCalling::Builtin), &mut |_| {}, &AtomicBool::new(false)).unwrap();
        assert!(asked);
        assert_eq!(brain.ways, [ToolCalling::PromptJson]);
        assert_eq!(decided.ai.tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["table_analyzer"]);
        assert_eq!(decided.report.tool_calling, ToolCalling::Builtin);
        assert!(decided.raw_output.starts_with("```json") && decided.raw_output.ends_with(&format!("{MARK}redone")), "{}", decided.raw_output);
        assert!(decided.report.warnings.iter().any(|w| w.contains("(file_reader, calculator, table_analyzer)")), "{:?}", decided.report.warnings);
    }

    #[test]
    fn prompt_json_and_chosen_calls_are_left_alone() {
        let mut brain = Scripted::new(Profile::default(), vec![]);
        let mut decided = copied();
        assert!(!redo(&mut brain, &mut decided, &request(ToolCalling::PromptJson), &mut |_| {}, &AtomicBool::new(false)).unwrap());
        decided.ai.tool_calls.swap(0, 1);
        assert!(!redo(&mut brain, &mut decided, &request(ToolCalling::Builtin), &mut |_| {}, &AtomicBool::new(false)).unwrap());
        assert!(brain.ways.is_empty());
        assert_eq!(decided.ai.tool_calls.len(), 3);
    }
}
