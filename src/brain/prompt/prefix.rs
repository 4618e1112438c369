//! One system prefix for every way and phase: the model's own rendering of the system
//! turn with the tools (the user's system message or the template's default, then the
//! template's tools block), split where the tool list ends.
//!
//! `builtin` ReAct decisions render it through the template as always; every other
//! decision writes the same text itself and puts its way- or phase-specific rules after
//! it: prompt_json after the tool list (instead of the template's call-format lines),
//! plan_execute's builtin decisions after the whole block. Consecutive decisions then
//! share the system prompt's tokens up to the end of the tool list whatever F2 and the
//! phase say, and the model does not prefill them again.

use serde_json::{json, Value};

use crate::brain::template::ChatTemplate;
use crate::protocol::Message;

/// Where the tool list ends in the template's tools block (Hermes and Qwen's XML
/// templates both close it so).
const TOOLS_END: &str = "</tools>";
const MARK: &str = "\u{1}b4-system\u{1}";
const USER_MARK: &str = "\u{1}b4-user\u{1}";

/// The system turn's content as the template writes it with tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemPrefix {
    /// From the start of the content to the end of the tool list: what every decision shares.
    pub shared: String,
    /// The rest of the template's block: its own call-format instructions.
    pub native: String,
}

impl SystemPrefix {
    /// The whole block, as the template renders it for builtin.
    pub fn whole(&self) -> String {
        format!("{}{}", self.shared, self.native)
    }
}

/// The system prefix for `messages` (their own system message, if they start with one) and
/// `tools`, or `None` when the template does not put the tools in the system turn after
/// its content in a way we can write ourselves (then each way keeps its own prompt).
pub fn system_prefix(template: &ChatTemplate, messages: &[Message], tools: &[Value]) -> Option<SystemPrefix> {
    if tools.is_empty() {
        return None;
    }
    // Where a system message's content starts and what closes its turn.
    let probe = template.render(&[json!({"role": "system", "content": MARK})], None, false).ok()?;
    let at = probe.find(MARK)?;
    let (lead, close) = (&probe[..at], &probe[at + MARK.len()..]);
    let close = close.trim_end_matches('\n');
    if close.is_empty() {
        return None;
    }

    let mut turn = Vec::new();
    if let Some(Message::System { content }) = messages.first() {
        turn.push(json!({"role": "system", "content": content}));
    }
    turn.push(json!({"role": "user", "content": USER_MARK}));
    let full = template.render(&turn, Some(tools), false).ok()?;
    let user_at = full.find(USER_MARK)?;
    let content = full[..user_at].strip_prefix(lead)?;
    let end = content.find(close)?;
    let content = &content[..end];
    let split = content.rfind(TOOLS_END)? + TOOLS_END.len();
    let prefix = SystemPrefix { shared: content[..split].to_string(), native: content[split..].to_string() };

    // Written as a plain system message, the block must render exactly as the template
    // renders it with the tools: otherwise it is not the model's own prompt.
    let own = template.render(&[json!({"role": "system", "content": prefix.whole()})], None, false).ok()?;
    full.starts_with(&own).then_some(prefix)
}

/// Qwen2.5's chat template, as the GGUF carries it (the tokenizer fixture).
#[cfg(test)]
pub(crate) fn qwen25() -> ChatTemplate {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizer/chat_template_cases.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    ChatTemplate::new(fixture["chat_template"].as_str().unwrap(), None, None).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<Value> {
        serde_json::from_str(include_str!("../../../tests/fixtures/outputs/tools.json")).unwrap()
    }

    #[test]
    fn qwen25_prefix_is_the_templates_tools_block_split_after_the_list() {
        let template = qwen25();
        let messages = vec![Message::system("记住：用户叫小王。"), Message::user("你好")];
        let prefix = system_prefix(&template, &messages, &tools()).unwrap();
        assert!(prefix.shared.starts_with("记住：用户叫小王。\n\n# Tools\n\n"), "{}", prefix.shared);
        assert!(prefix.shared.ends_with("\n</tools>"), "{}", prefix.shared);
        assert!(prefix.shared.contains("\"name\": \"file_reader\""));
        assert!(prefix.native.starts_with("\n\nFor each function call"), "{}", prefix.native);
        assert!(!prefix.native.contains("<|im_end|>"));

        // Written by hand it is exactly what the template renders with the tools.
        let native = template
            .render(&[json!({"role": "system", "content": "记住：用户叫小王。"}), json!({"role": "user", "content": "你好"})], Some(&tools()), true)
            .unwrap();
        let own = template
            .render(&[json!({"role": "system", "content": prefix.whole()}), json!({"role": "user", "content": "你好"})], None, true)
            .unwrap();
        assert_eq!(own, native);
    }

    #[test]
    fn without_a_system_message_the_templates_default_leads() {
        let prefix = system_prefix(&qwen25(), &[Message::user("hi")], &tools()).unwrap();
        assert!(prefix.shared.starts_with("You are Qwen, created by Alibaba Cloud."), "{}", prefix.shared);
    }

    #[test]
    fn no_tools_or_a_template_without_a_tools_block_means_no_prefix() {
        assert_eq!(system_prefix(&qwen25(), &[Message::user("hi")], &[]), None);
        let plain = ChatTemplate::new(
            "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}",
            None,
            None,
        )
        .unwrap();
        assert_eq!(system_prefix(&plain, &[Message::user("hi")], &tools()), None);
        // Tools put in the first user message (Llama 3.1's way) are not a system prefix.
        let in_user = ChatTemplate::new(
            "{% for m in messages %}<|{{ m.role }}|>{% if m.role == 'user' and tools %}<tools>{{ tools | tojson }}</tools>{% endif %}{{ m.content }}<|end|>{% endfor %}",
            None,
            None,
        )
        .unwrap();
        assert_eq!(system_prefix(&in_user, &[Message::user("hi")], &tools()), None);
    }
}
