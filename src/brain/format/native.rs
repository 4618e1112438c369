//! What the model's native formats ([`super::hermes`], [`super::xml`]) share, asked for by
//! builtin ReAct decisions: the answer is either plain text, or tool-call blocks (or JSON
//! fences, see [`super::fenced`]) with nothing but whitespace around them. Text around
//! native calls is narration, not a claim to be done.

use super::fenced;
use crate::brain::constrain::grammar::{Tool, MAX_CALLS};
use crate::protocol::Message;

// ---------------------------------------------------------------------------------------
// Prompt

pub(crate) const EXCLUSIVE: &str = "content and tool calls are exclusive: either answer with \
the final answer text alone, or call tools with no other text, never both. Answer again.";

/// After tool results in the model's own format: the 0.5B otherwise calls the same tool
/// again (free, it then invents the tool's answer; constrained, the repeated-call guard
/// stops the run). The question first and "the answer itself" after it lifted the
/// conversation set (7 -> 10 of 32) but made the 0.5B answer `计算 3.14 * 5 - 2.5` with the
/// expression instead of 13.2, so this text stays.
pub(crate) fn done_reminder(messages: &[Message]) -> String {
    let question = crate::brain::last_question(messages);
    format!("工具已经返回了结果。请根据这些结果，用文字直接回答（不要再调用工具）：{}", question.unwrap_or_default())
}

// ---------------------------------------------------------------------------------------
// Grammar

/// Whitespace between tags in the native formats.
const TAG_SEPARATOR: &str = r"/[ \t\r\n]{1,8}/";

/// A native plain answer: some visible text, and nothing a parser would read as a call or
/// as reasoning (no `{`, no tool-call or think tags), not opening with a JSON fence (that
/// is the fenced-calls form).
const NATIVE_ANSWER: &str = r"/(?s:[^{]*[^{\s][^{]*)/ & ~/(?s:.*(<tool_call|tool_call>|<function=|<think>|<\/think>).*)/ & ~/(?s:\s*```(json)?[ \t]*\n.*)/";

/// `start` of the native formats: an answer; or one or more call blocks; or one or more
/// ```` ```json ```` fences each holding an array of calls (Hermes-style
/// `{"name", "arguments"}`). Whitespace between and after blocks, nothing else.
///
/// The fences are there because small models write their calls that way despite the
/// template (`MODELS.md`; the parser reads them): barred from them, the 0.5B model wrote
/// its calls as lists or YAML in a fence, a useless answer; allowed, it keeps its own
/// format and the calls are checked like any other.
pub(crate) fn lark_start(tools: &[Tool], call_rule: &str) -> String {
    let mut out = String::new();
    if tools.is_empty() {
        out.push_str("start: ANSWER\n");
    } else {
        out.push_str("start: ANSWER | calls | fences\n");
        let more = MAX_CALLS - 1;
        out.push_str(&format!("calls: call (SEP? call){{0,{more}}} SEP?\n"));
        out.push_str(call_rule);
        out.push_str(&fenced::lark_rules(tools));
        out.push_str(&format!("SEP: {TAG_SEPARATOR}\n"));
    }
    out.push_str(&format!("ANSWER: {NATIVE_ANSWER}\n"));
    out
}
