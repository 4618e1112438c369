//! The final answer written from the tool results, in a prompt of its own.
//!
//! After tool results, a small model asked for its decision in the decision prompt (rules,
//! tools, schema examples, the conversation) often answers with the tool's output pasted
//! whole, the question restated, or a value from the prompt's own example. Once it has
//! chosen to answer, its answer is written again from a short prompt that holds only the
//! question and this question's tool results, and asks for the answer itself (profile field
//! `answer_from_results`).

use serde_json::{json, Value};

use crate::protocol::Message;

/// The most characters of one tool result put in the prompt.
const MAX_RESULT_CHARS: usize = 3000;

const SYSTEM: &str = "You answer the user's question from the tool results you are given. \
Reply with the answer itself, in one to three sentences: use the exact values (numbers, \
names, dates, codes, file names) from the results, do not repeat the question, and do not \
describe the tools. If the results do not answer the question, say what they show.";

/// The user's latest question and the results of the tools called for it (oldest first);
/// `None` when no tool ran since the question.
pub fn results_for_question(messages: &[Message]) -> Option<(&str, Vec<(&str, &str)>)> {
    let asked = messages.iter().rposition(|m| matches!(m, Message::User { .. }))?;
    let Message::User { content: question } = &messages[asked] else { return None };
    let results: Vec<(&str, &str)> = messages[asked + 1..]
        .iter()
        .filter_map(|m| match m {
            Message::Tool(result) => Some((result.name.as_str(), result.content.as_str())),
            _ => None,
        })
        .collect();
    (!results.is_empty()).then_some((question.as_str(), results))
}

/// The chat messages of the answer prompt.
pub fn messages(question: &str, results: &[(&str, &str)]) -> Vec<Value> {
    let mut user = String::from("Tool results:\n");
    for (i, (name, content)) in results.iter().enumerate() {
        let shown: String = content.chars().take(MAX_RESULT_CHARS).collect();
        let cut = if shown.len() < content.len() { " ..." } else { "" };
        user.push_str(&format!("[{}] {name}: {shown}{cut}\n", i + 1));
    }
    // The rules in Chinese for a Chinese question made the 0.5B recite them as its answer.
    user.push_str(&format!("\nQuestion: {question}\nAnswer:"));
    vec![json!({"role": "system", "content": SYSTEM}), json!({"role": "user", "content": user})]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AiMessage, ToolCall, ToolMessage};

    fn call(name: &str) -> ToolCall {
        serde_json::from_value(json!({"id": "c1", "name": name, "args": {}})).unwrap()
    }

    #[test]
    fn only_the_latest_questions_results_are_used() {
        let messages = vec![
            Message::user("What is 2+2?"),
            Message::Assistant(AiMessage::calls(vec![call("calculator")])),
            Message::Tool(ToolMessage::success(&call("calculator"), json!({"result": 4}))),
            Message::Assistant(AiMessage::answer("4")),
            Message::user("读一下 docs/a.md，再算 12*12"),
            Message::Assistant(AiMessage::calls(vec![call("file_reader"), call("calculator")])),
            Message::Tool(ToolMessage::success(&call("file_reader"), json!("灰度发布：先给 5% 的用户"))),
            Message::Tool(ToolMessage::success(&call("calculator"), json!({"result": 144}))),
        ];
        let (question, results) = results_for_question(&messages).unwrap();
        assert_eq!(question, "读一下 docs/a.md，再算 12*12");
        assert_eq!(results.iter().map(|r| r.0).collect::<Vec<_>>(), ["file_reader", "calculator"]);
        let prompt = messages_text(&super::messages(question, &results));
        assert!(prompt.contains("[1] file_reader") && prompt.contains("144") && prompt.ends_with("Question: 读一下 docs/a.md，再算 12*12\nAnswer:"), "{prompt}");
        assert!(!prompt.contains("\"result\":4}"), "an earlier question's result is left out: {prompt}");
    }

    #[test]
    fn no_results_since_the_question_means_nothing_to_rewrite() {
        let messages = vec![
            Message::user("What is 2+2?"),
            Message::Assistant(AiMessage::calls(vec![call("calculator")])),
            Message::Tool(ToolMessage::success(&call("calculator"), json!({"result": 4}))),
            Message::user("Thanks! Hi again."),
        ];
        assert!(results_for_question(&messages).is_none());
        assert!(results_for_question(&[]).is_none());
    }

    #[test]
    fn long_results_are_cut() {
        let long = "x".repeat(MAX_RESULT_CHARS * 2);
        let prompt = messages_text(&messages("q", &[("file_reader", long.as_str())]));
        assert!(prompt.len() < MAX_RESULT_CHARS + 500 && prompt.contains("x ..."), "{}", prompt.len());
    }

    fn messages_text(messages: &[Value]) -> String {
        messages.iter().map(|m| m["content"].as_str().unwrap_or_default()).collect::<Vec<_>>().join("\n")
    }
}
