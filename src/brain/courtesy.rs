//! Thanks and acknowledgements, answered as such.
//!
//! A message that only thanks or acknowledges ("好的，谢谢你！", "Thanks, that's all") asks
//! for nothing, yet asked as a request with tools the 0.5B echoed it back as its answer
//! ("好的，谢谢！") or reached for a tool. So (profile field `courtesy_replies`) such a message
//! is asked with no tools, and the model is told what the message is and what a reply to it
//! is: the words are still the model's own.

use std::sync::atomic::AtomicBool;

use super::{Brain, BrainError, Decision, DecisionRequest, TokenSink};
use crate::protocol::{AiMessage, DecisionStatus, Message, Phase, Stream};
use crate::text::in_chinese;

/// Where the raw text starts when the message was answered as a courtesy.
pub const MARK: &str = "[a thank-you or acknowledgement: answered without tools]\n";

/// What the model is told when the latest message is a courtesy.
pub const NOTE: &str = "The user's latest message only thanks you or acknowledges your answer: it asks for nothing new. \
Answer it in one short, friendly sentence in the user's language; do not repeat their words or your earlier answer, \
and call no tool.";

/// Words and phrases that thank or acknowledge, lower case; a courtesy is made of these
/// alone (with [`FILLER`], blanks and punctuation). English phrases match at word bounds.
const CORE: &[&str] = &[
    "thank you", "thank u", "thanks", "thx", "ty", "many thanks", "much appreciated", "appreciate it", "appreciated",
    "great", "perfect", "awesome", "cool", "nice", "ok", "okay", "got it", "good", "cheers", "bye", "goodbye",
    "that's all", "that is all", "all good", "sounds good",
    "谢谢", "多谢", "感谢", "谢啦", "谢了", "好的", "好滴", "明白了", "明白", "知道了", "收到", "了解", "太好了", "不错", "辛苦了",
    "再见", "拜拜", "没事了", "就这样", "可以了", "行了",
];

/// Words that go with a courtesy but make none alone.
const FILLER: &[&str] = &[
    "so much", "very much", "a lot", "again", "for your help", "for the help", "for that", "you", "that's", "that is", "it", "oh", "ah",
    "非常", "十分", "你", "您", "啦", "哈", "呀", "哦", "噢", "嗯", "好", "行", "的", "了", "啊", "哈哈", "帮忙", "你的帮助", "您的帮助",
];

/// Whether `message` only thanks or acknowledges: it is made of [`CORE`] and [`FILLER`]
/// pieces (at least one of [`CORE`]), blanks and punctuation, and asks no question.
pub fn is_courtesy(message: &str) -> bool {
    let text = message.trim().to_lowercase();
    if text.is_empty() || text.chars().count() > 60 || text.contains(['?', '？']) {
        return false;
    }
    let mut rest = text.as_str();
    let mut core = false;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || (!c.is_alphanumeric() && c != '\''));
        if rest.is_empty() {
            return core;
        }
        let piece = |list: &[&'static str]| list.iter().copied().filter(|p| starts_with_piece(rest, p)).max_by_key(|p| p.len());
        match (piece(CORE), piece(FILLER)) {
            (Some(c), Some(f)) if f.len() > c.len() => rest = &rest[f.len()..],
            (Some(c), _) => {
                core = true;
                rest = &rest[c.len()..];
            }
            (None, Some(f)) => rest = &rest[f.len()..],
            (None, None) => return false,
        }
    }
}

/// Whether `text` starts with `piece`, ended where a word ends when it is English.
fn starts_with_piece(text: &str, piece: &str) -> bool {
    text.starts_with(piece) && (!piece.is_ascii() || text[piece.len()..].chars().next().is_none_or(|c| !c.is_ascii_alphanumeric()))
}

/// What [`note`] adds for a message in Chinese, and for one in another language: with no
/// example the 0.5B thanked the user back ("Thank you for your assistance!"), and told to
/// say they are welcome it wrote "欢迎！" ("welcome to ...", not "you are welcome").
const IN_CHINESE: &str = "用中文回答，例如：不客气，很高兴能帮到你。";
const IN_ENGLISH: &str = "For example: You're welcome, glad I could help!";

/// [`NOTE`] for `message`, with an example reply in its language.
pub fn note(message: &str) -> String {
    format!("{NOTE} {}", if in_chinese(message) { IN_CHINESE } else { IN_ENGLISH })
}

/// The decision for a latest message that only thanks or acknowledges ([`is_courtesy`]):
/// asked on `brain` with no tools and [`note`]. `None` where the message is something else,
/// or no tools were offered (that request is the one asked here).
pub fn reply(brain: &mut dyn Brain, request: &DecisionRequest, on_token: TokenSink<'_>, cancel: &AtomicBool) -> Result<Option<Decision>, BrainError> {
    let Some(Message::User { content }) = request.messages.last() else { return Ok(None) };
    if request.phase != Phase::React || request.tools.is_empty() || !is_courtesy(content) {
        return Ok(None);
    }
    on_token(Stream::Text(MARK));
    let mut messages = request.messages.clone();
    messages.push(Message::system(note(content)));
    let without_tools = DecisionRequest { messages, tools: Vec::new(), ..request.clone() };
    let mut decided = brain.decide(&without_tools, on_token, cancel)?;
    decided.raw_output = format!("{MARK}{}", decided.raw_output);
    decided.report.tool_calling = request.tool_calling;
    decided.report.warnings.push("a thank-you or acknowledgement: answered without tools".into());
    decided.ai = AiMessage::answer(decided.ai.content.trim());
    if decided.ai.content.is_empty() && decided.report.status == DecisionStatus::Success {
        decided.report.status = DecisionStatus::Invalid;
        decided.report.error = Some("asked to reply to a thank-you, the model gave no answer".into());
    }
    Ok(Some(decided))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::brain::scripted::{self, Scripted};
    use crate::brain::Profile;

    #[test]
    fn thanks_and_acknowledgements_in_both_languages_are_courtesies() {
        for message in ["好的，谢谢你！", "谢谢", "非常感谢您的帮助！", "好的 收到", "Thanks!", "Thank you so much.", "ok, got it", "Great, thanks again!", "Perfect — that's all.", "明白了，辛苦了", "ok"] {
            assert!(is_courtesy(message), "{message}");
        }
        for message in ["Thanks! Now convert 5 miles to km.", "好的，那成都呢？", "谢谢，顺便帮我查一下北京的天气", "Is it okay?", "你好", "Goodness me", "tyre pressure", "Thanks for nothing, what is 2+2"] {
            assert!(!is_courtesy(message), "{message}");
        }
    }

    #[test]
    fn a_courtesy_is_asked_without_tools_and_told_what_it_is() {
        let tools = vec![json!({"type": "function", "function": {"name": "shop.track_order", "description": "", "parameters": {"type": "object", "properties": {}}}})];
        let messages = vec![
            Message::user("帮我查一下订单 112-7730914-5520618 的物流。"),
            Message::Assistant(AiMessage::answer("您的包裹正在派送中。")),
            Message::user("好的，谢谢你！"),
        ];
        let mut brain = Scripted::new(Profile::default(), vec![AiMessage::answer(" 不客气！ ")]);
        let request = scripted::request(&messages, tools.clone());
        let decided = reply(&mut brain, &request, &mut |_| {}, &AtomicBool::new(false)).unwrap().expect("a reply");
        assert_eq!(decided.ai, AiMessage::answer("不客气！"));
        assert_eq!(brain.offered, [Vec::<String>::new()]);
        assert_eq!(brain.asked[0].last(), Some(&Message::system(format!("{NOTE} {IN_CHINESE}"))));
        assert!(decided.raw_output.starts_with(MARK));
        // A request, or a courtesy already asked without tools: not this one's.
        let mut asking = messages.clone();
        asking[2] = Message::user("好的，那明天的呢？");
        assert!(reply(&mut brain, &scripted::request(&asking, tools), &mut |_| {}, &AtomicBool::new(false)).unwrap().is_none());
        assert!(reply(&mut brain, &scripted::request(&messages, Vec::new()), &mut |_| {}, &AtomicBool::new(false)).unwrap().is_none());
    }
}
