//! Answers that only say the user's message back.
//!
//! Asked "你好呀！" with tools, the 0.5B answered "你好呀！"; asked for something no tool
//! does, it has answered with the request restated. Such an answer tells the user nothing,
//! and the conversation sets fail it by design. So (profile field `reanswer_echoes`) a
//! fresh decision (no tool ran for the question) whose answer says the latest message back
//! ([`echoes`]) is asked again with no tools and a note that the message wants a reply of the
//! model's own ([`note`]). The second answer is kept where it is not an echo too; otherwise
//! the first stands, with a warning.

use std::sync::atomic::AtomicBool;

use super::{Brain, BrainError, Decision, DecisionRequest, TokenSink};
use crate::protocol::{AiMessage, DecisionStatus, Message, Phase, Stream};
use crate::text::in_chinese;

/// Where the raw text goes on when the answer was asked for again.
pub const MARK: &str = "\n\n[the answer said the user's message back: asked again without tools]\n";

/// What the model is told when it is asked again. Asked again with no word on actions, a
/// model may answer an action no tool does ("Lock the front door.") as done.
pub const NOTE: &str = "Reply to the user's latest message with an answer of your own, in the user's language: \
answer what it asks; if it asks you to do something that none of your tools does, say that you cannot do it; \
for a greeting, greet them back and offer your help. Do not repeat the user's words.";

/// [`NOTE`] for `message`: a greeting-like one (short, no question mark) gets an example
/// reply in its language, as the 0.5B follows an example where it does not follow a rule
/// (`brain::courtesy`); a question gets none, which it would copy in place of an answer.
pub fn note(message: &str) -> String {
    let short = message.trim().chars().count() <= 12 && !message.contains(['?', '？']);
    match (short, in_chinese(message)) {
        (true, true) => format!("{NOTE} 例如：你好！有什么可以帮你的吗？"),
        (true, false) => format!("{NOTE} For example: Hi! What can I do for you?"),
        (false, _) => NOTE.to_string(),
    }
}

/// The letters and digits of `text`, lower case: what an echo is judged on.
fn plain(text: &str) -> Vec<char> {
    text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// Whether `answer` only says `message` back: the same letters and digits (punctuation,
/// blanks and case aside), or the message whole with next to nothing added, or all but
/// next to nothing of it.
pub fn echoes(answer: &str, message: &str) -> bool {
    let (a, m) = (plain(answer), plain(message));
    if a.is_empty() || m.is_empty() {
        return false;
    }
    let contains = |long: &[char], short: &[char]| long.windows(short.len()).any(|w| w == short);
    // Within a fifth of the message's length either way.
    let close = a.len() * 5 <= m.len() * 6 && m.len() * 4 <= a.len() * 5;
    a == m || (close && (contains(&a, &m) || (a.len() < m.len() && contains(&m, &a))))
}

/// Asks `request` again on `brain` with no tools and [`note`] where `decided` is a fresh
/// answer that says the latest user message back ([`echoes`]). Nothing is done in a plan,
/// after tool results for the question, or when no tools were offered (that request is
/// the one asked here).
pub fn reanswer(
    brain: &mut dyn Brain,
    decided: &mut Decision,
    request: &DecisionRequest,
    messages: &[Message],
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<(), BrainError> {
    let Some(Message::User { content: message }) = messages.last() else { return Ok(()) };
    if request.phase != Phase::React || request.tools.is_empty() || !decided.ai.tool_calls.is_empty() || !echoes(&decided.ai.content, message) {
        return Ok(());
    }
    on_token(Stream::Text(MARK));
    let mut asked = messages.to_vec();
    asked.push(Message::system(note(message)));
    let without_tools = DecisionRequest { messages: asked, tools: Vec::new(), ..request.clone() };
    let again = brain.decide(&without_tools, on_token, cancel)?;
    decided.raw_output = format!("{}{MARK}{}", decided.raw_output, again.raw_output);
    super::decision::add_generation(&mut decided.report.stats, &again.report.stats);
    let answer = again.ai.content.trim();
    if again.report.status == DecisionStatus::Success && !answer.is_empty() && !echoes(answer, message) {
        decided.report.warnings.push(format!("the answer said the user's message back: asked again without tools (the first: {})", decided.ai.content.trim()));
        decided.ai = AiMessage::answer(answer);
    } else {
        decided.report.warnings.push("the answer said the user's message back; asked again without tools, the model gave no other".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::brain::scripted::{self, Scripted};
    use crate::brain::Profile;
    use crate::protocol::{DecisionReport, ToolCall, ToolCalling, ToolMessage};

    #[test]
    fn an_answer_is_an_echo_when_it_says_the_message_back() {
        for (answer, message) in [
            ("你好呀！", "你好呀！"),
            ("你好呀", "你好呀！"),
            ("Hello there!", "hello there"),
            ("Can you order a large pepperoni pizza for me?", "Can you order a large pepperoni pizza for me, please?"),
            ("Order a large pepperoni pizza for me.", "Can you order a large pepperoni pizza for me?"),
        ] {
            assert!(echoes(answer, message), "{answer} / {message}");
        }
        for (answer, message) in [
            ("你好！有什么可以帮你的吗？", "你好呀！"),
            ("Hi! What can I do for you?", "Hi"),
            ("The capital of France is Paris.", "What is the capital of France?"),
            ("北京今天晴，22°C。", "北京今天天气怎么样？"),
            ("", "你好"),
            ("Hello", "!!!"),
        ] {
            assert!(!echoes(answer, message), "{answer} / {message}");
        }
    }

    #[test]
    fn short_greetings_get_an_example_in_their_language_and_questions_none() {
        assert!(note("你好呀！").ends_with("例如：你好！有什么可以帮你的吗？"));
        assert!(note("Hello!").ends_with("For example: Hi! What can I do for you?"));
        assert_eq!(note("Can you order a large pepperoni pizza for me?"), NOTE);
    }

    fn tools() -> Vec<serde_json::Value> {
        vec![json!({"type": "function", "function": {"name": "calculator", "description": "", "parameters": {"type": "object", "properties": {}}}})]
    }

    fn answered(first: &str, again: &str, messages: &[Message]) -> (Decision, Scripted) {
        let mut brain = Scripted::new(Profile::default(), vec![AiMessage::answer(again)]);
        let request = scripted::request(messages, tools());
        let report = DecisionReport::new("qwen-0.5b", Phase::React, ToolCalling::PromptJson, None);
        let mut decided = Decision { ai: AiMessage::answer(first), raw_output: first.into(), prompt: String::new(), plan: None, report };
        reanswer(&mut brain, &mut decided, &request, messages, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        (decided, brain)
    }

    #[test]
    fn an_echo_is_asked_again_without_tools_and_a_second_echo_changes_nothing() {
        let messages = vec![Message::user("你好呀！")];
        let (decided, brain) = answered("你好呀！", " 你好！有什么可以帮你的吗？ ", &messages);
        assert_eq!(decided.ai, AiMessage::answer("你好！有什么可以帮你的吗？"));
        assert_eq!(brain.offered, [Vec::<String>::new()]);
        assert_eq!(brain.asked[0].last(), Some(&Message::system(note("你好呀！"))));
        assert!(decided.raw_output.contains(MARK));
        let (decided, _) = answered("你好呀！", "你好呀", &messages);
        assert_eq!(decided.ai, AiMessage::answer("你好呀！"));
        assert_eq!(decided.report.warnings.len(), 1);
        // An answer of its own is left alone, and so is an answer after tool results.
        let (_, brain) = answered("你好！需要什么帮助？", "x", &messages);
        assert!(brain.asked.is_empty());
        let call = ToolCall { id: "call_001".into(), name: "calculator".into(), args: Default::default() };
        let after = vec![Message::user("你好呀！"), Message::Tool(ToolMessage::success(&call, json!("你好呀！")))];
        let (_, brain) = answered("你好呀！", "x", &after);
        assert!(brain.asked.is_empty());
    }
}
