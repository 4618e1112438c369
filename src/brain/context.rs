//! Fitting a conversation into the prompt budget: a conversation that outgrows
//! `max_input_tokens` loses its oldest whole turns first (a turn is a user message and
//! everything up to the next one; the leading system message and the current turn stay),
//! then the longest tool results of the current turn are shortened, head and tail kept.
//! What was left out is said in one line that the decision reports as a warning.

use std::borrow::Cow;

use crate::protocol::{Message, ToolMessage};

/// A tool result is never cut below this many characters.
const MIN_RESULT_CHARS: usize = 240;

/// What fitting left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trimmed {
    pub dropped_turns: usize,
    pub dropped_messages: usize,
    pub cut_results: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub budget: usize,
}

impl Trimmed {
    /// The note shown with the decision.
    pub fn note(&self) -> String {
        let mut parts = Vec::new();
        if self.dropped_turns > 0 {
            parts.push(format!(
                "left out the {} oldest turn(s) ({} messages)",
                self.dropped_turns, self.dropped_messages
            ));
        }
        if self.cut_results > 0 {
            parts.push(format!("shortened {} tool result(s)", self.cut_results));
        }
        format!(
            "context: {} to fit max_input_tokens {} ({} -> {} tokens)",
            parts.join(" and "),
            self.budget,
            self.tokens_before,
            self.tokens_after
        )
    }
}

/// `messages` fitted into `budget` tokens as `count` measures the whole prompt for them.
/// Unchanged (borrowed, `None`) when they fit; when even the current turn with every tool
/// result cut short is too long, the shortest version is returned and the caller's
/// length check reports it.
pub fn fit<'a, E>(
    messages: &'a [Message],
    budget: usize,
    mut count: impl FnMut(&[Message]) -> Result<usize, E>,
) -> Result<(Cow<'a, [Message]>, Option<Trimmed>), E> {
    let before = count(messages)?;
    if before <= budget {
        return Ok((Cow::Borrowed(messages), None));
    }
    let system = usize::from(matches!(messages.first(), Some(Message::System { .. })));
    let turns = turn_starts(messages, system);
    let mut trimmed = Trimmed { dropped_turns: 0, dropped_messages: 0, cut_results: 0, tokens_before: before, tokens_after: before, budget };

    // Oldest whole turns first; the current (last) turn always stays.
    let mut kept: Vec<Message> = messages.to_vec();
    for (dropped, &next) in turns.iter().skip(1).enumerate() {
        let candidate: Vec<Message> = messages[..system].iter().chain(&messages[next..]).cloned().collect();
        let tokens = count(&candidate)?;
        trimmed.dropped_turns = dropped + 1;
        trimmed.dropped_messages = next - system;
        trimmed.tokens_after = tokens;
        kept = candidate;
        if tokens <= budget {
            return Ok((Cow::Owned(kept), Some(trimmed)));
        }
    }

    // Then the longest tool results, halved until the prompt fits or they are short.
    loop {
        let longest = kept
            .iter()
            .enumerate()
            .filter_map(|(i, m)| match m {
                Message::Tool(t) if t.content.chars().count() > MIN_RESULT_CHARS => Some((i, t.content.chars().count())),
                _ => None,
            })
            .max_by_key(|&(_, chars)| chars);
        let Some((index, chars)) = longest else { break };
        if let Message::Tool(tool) = &mut kept[index] {
            let was_cut = tool.content.contains(CUT_MARK);
            *tool = ToolMessage { content: shorten(&tool.content, (chars / 2).max(MIN_RESULT_CHARS)), ..tool.clone() };
            if !was_cut {
                trimmed.cut_results += 1;
            }
        }
        trimmed.tokens_after = count(&kept)?;
        if trimmed.tokens_after <= budget {
            break;
        }
    }
    if trimmed.dropped_turns == 0 && trimmed.cut_results == 0 {
        return Ok((Cow::Borrowed(messages), None));
    }
    Ok((Cow::Owned(kept), Some(trimmed)))
}

const CUT_MARK: &str = " characters cut to fit the context] …";

/// Where each turn starts (index of its user message), after the leading system message.
fn turn_starts(messages: &[Message], from: usize) -> Vec<usize> {
    let mut starts: Vec<usize> = (from..messages.len()).filter(|&i| matches!(messages[i], Message::User { .. })).collect();
    if starts.first() != Some(&from) {
        // Messages before the first question belong to the first turn.
        starts.insert(0, from);
    }
    starts
}

/// `text` cut to about `keep` characters: the first two thirds and the last third kept,
/// the cut said in the middle.
fn shorten(text: &str, keep: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= keep {
        return text.to_string();
    }
    let head = keep * 2 / 3;
    let tail = keep - head;
    let cut = chars.len() - head - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push_str(&format!(" … [{cut}{CUT_MARK} "));
    out.extend(&chars[chars.len() - tail..]);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{AiMessage, ToolCall};

    /// One token per character of content: a prompt measure for the tests.
    fn chars(messages: &[Message]) -> Result<usize, ()> {
        Ok(messages
            .iter()
            .map(|m| match m {
                Message::System { content } | Message::User { content } => content.chars().count(),
                Message::Assistant(ai) => ai.content.chars().count() + 20 * ai.tool_calls.len(),
                Message::Tool(t) => t.content.chars().count(),
            })
            .sum())
    }

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "file_reader".into(), args: json!({"path": "a.txt"}).as_object().unwrap().clone() }
    }

    fn turn(question: &str, result: &str, answer: &str, id: &str) -> Vec<Message> {
        vec![
            Message::user(question),
            Message::Assistant(AiMessage::calls(vec![call(id)])),
            Message::Tool(ToolMessage::success(&call(id), json!({"content": result}))),
            Message::Assistant(AiMessage::answer(answer)),
        ]
    }

    fn conversation() -> Vec<Message> {
        let mut messages = vec![Message::system("记住：用户叫小王。")];
        messages.extend(turn("读 a.txt", &"甲".repeat(300), "第一份", "call_001"));
        messages.extend(turn("read b.txt", &"b".repeat(300), "second", "call_002"));
        messages.push(Message::user("现在计算 6 * 7"));
        messages
    }

    #[test]
    fn a_conversation_that_fits_is_left_alone() {
        let messages = conversation();
        let (fitted, trimmed) = fit(&messages, 10_000, chars).unwrap();
        assert!(matches!(fitted, Cow::Borrowed(_)));
        assert_eq!(trimmed, None);
    }

    #[test]
    fn the_oldest_turns_go_first_and_the_system_message_and_question_stay() {
        let messages = conversation();
        let total = chars(&messages).unwrap();
        // Room for everything but the first turn.
        let (fitted, trimmed) = fit(&messages, total - 300, chars).unwrap();
        let trimmed = trimmed.unwrap();
        assert_eq!(fitted.len(), messages.len() - 4);
        assert_eq!(fitted[0], messages[0]);
        assert_eq!(fitted[1], Message::user("read b.txt"));
        assert_eq!(fitted.last(), messages.last());
        assert_eq!((trimmed.dropped_turns, trimmed.dropped_messages, trimmed.cut_results), (1, 4, 0));
        assert!(trimmed.tokens_after <= total - 300 && trimmed.tokens_before == total);
        assert_eq!(
            trimmed.note(),
            format!("context: left out the 1 oldest turn(s) (4 messages) to fit max_input_tokens {} ({total} -> {} tokens)", total - 300, trimmed.tokens_after)
        );

        // Less room: both earlier turns go.
        let (fitted, trimmed) = fit(&messages, 100, chars).unwrap();
        assert_eq!(fitted.as_ref(), &[messages[0].clone(), Message::user("现在计算 6 * 7")]);
        assert_eq!(trimmed.unwrap().dropped_turns, 2);
    }

    #[test]
    fn a_long_tool_result_of_the_current_turn_is_shortened_head_and_tail_kept() {
        let mut messages = vec![Message::user("读 big.txt")];
        let content = format!("开头{}结尾", "中".repeat(5000));
        messages.push(Message::Assistant(AiMessage::calls(vec![call("call_001")])));
        messages.push(Message::Tool(ToolMessage::success(&call("call_001"), json!({"content": content}))));
        let (fitted, trimmed) = fit(&messages, 1500, chars).unwrap();
        let trimmed = trimmed.unwrap();
        assert_eq!((trimmed.dropped_turns, trimmed.cut_results), (0, 1));
        assert!(trimmed.tokens_after <= 1500, "{trimmed:?}");
        let Message::Tool(result) = &fitted[2] else { panic!("the tool result stays") };
        assert!(result.content.contains("开头") && result.content.contains("结尾"), "{}", result.content);
        assert!(result.content.contains("characters cut to fit the context"));
        assert_eq!(result.tool_call_id, "call_001");
        assert!(trimmed.note().contains("shortened 1 tool result(s)"));
    }

    #[test]
    fn what_cannot_fit_comes_back_as_short_as_it_gets() {
        let messages = vec![Message::user("问".repeat(500))];
        let (fitted, trimmed) = fit(&messages, 100, chars).unwrap();
        assert_eq!(fitted.as_ref(), messages.as_slice());
        assert_eq!(trimmed, None);
    }

    #[test]
    fn a_measure_that_fails_is_passed_on() {
        let messages = conversation();
        assert_eq!(fit(&messages, 10, |_| Err::<usize, _>("no tokenizer")).unwrap_err(), "no tokenizer");
    }
}
