//! Calls for a request whose action no offered tool does.
//!
//! Asked to do something none of its tools does, a small model calls the nearest one:
//! `files.move` to "Delete the file temp.txt for good", `db.create_table` to "Drop the table
//! temp_users", `home.lights` to "Lock the front door", `files.compress` to "把 photo.jpg
//! 转换成 PNG 格式". Those values are all written in the request, so [`super::made_up`] lets
//! them through; the action is what gives them away. A request whose action is one of a few
//! specific ones ([`ACTIONS`]: delete, drop, lock, transcribe, convert, install, print,
//! pay, unfollow, cancel, refund, upgrade, order), an English one's first verb or a Chinese term anywhere, that no call's tool names
//! (in its name, description or parameter names) is asked again with the offered tools
//! that name it alone ("Convert config/servers.yaml to JSON" read with `file_reader` is
//! asked again with `format_converter`), and where none does, has its calls dropped.

use crate::protocol::ToolCall;
use crate::tools::spec::ToolSpec;

/// Actions: how an English request starts with one, the Chinese terms for it, and the
/// words a tool that does it names (as the start of a word: `delete` is also "deletes").
const ACTIONS: &[(&[&str], &[&str], &[&str])] = &[
    (&["delete", "remove", "erase", "trash", "wipe"], &["删除", "删掉", "删了"], &["delete", "remove", "erase", "trash", "wipe", "drop", "clean"]),
    (&["drop"], &[], &["drop", "delete", "remove"]),
    (&["lock", "unlock"], &["锁上", "锁好", "锁门", "解锁"], &["lock"]),
    (&["transcribe"], &["转录", "转写"], &["transcri", "speech"]),
    (&["convert"], &["转换成", "转换为", "转成", "转为"], &["convert", "conversion", "transform", "translat"]),
    (&["install", "uninstall"], &["安装", "卸载"], &["install"]),
    (&["print"], &["打印"], &["print"]),
    (&["pay"], &["支付", "付款"], &["pay"]),
    (&["unfollow"], &["取关", "取消关注"], &["unfollow"]),
    (&["cancel"], &["取消", "退订"], &["cancel", "delete", "remove", "void", "revoke", "terminat", "unsubscrib"]),
    (&["refund"], &["退款"], &["refund"]),
    (&["upgrade", "downgrade"], &["升级", "降级"], &["upgrad", "downgrad"]),
    (&["order"], &["下单", "订购", "点外卖"], &["order", "purchas", "buy", "checkout"]),
];

/// What an English request may start with before its verb.
const OPENINGS: &[&str] = &["please", "can you", "could you", "would you", "will you", "i want to", "i'd like to", "i need to", "help me", "go ahead and", "kindly", "now"];

/// A request's action that none of its calls' tools does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfit {
    /// The action as the request writes it ("delete", "转换成").
    pub action: String,
    /// The offered tools that do it, by name (none for a request no tool fits).
    pub doers: Vec<String>,
}

/// The action `question` asks for that none of `calls`' tools names, with the tools of
/// `tools` that do. `None` where it asks for none of [`ACTIONS`], or a call's tool does it.
pub fn unfit(calls: &[ToolCall], tools: &[ToolSpec], question: &str) -> Option<Unfit> {
    if calls.is_empty() {
        return None;
    }
    let (action, tool_words) = action(question)?;
    let does = |tool: &ToolSpec| {
        // "to turn a file into JSON use format_converter" is not file_reader's own doing.
        let mut description = tool.description.clone();
        for other in tools.iter().filter(|t| t.name != tool.name) {
            description = description.replace(&other.name, " ");
        }
        let mut text = format!("{} {description}", tool.name);
        for param in tool.params() {
            text.push(' ');
            text.push_str(&param.name);
        }
        let words: Vec<String> = text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
        // "Stop (not delete) a running machine" does not delete: a word after a denial is
        // what the tool does not do.
        let denied = |i: usize| i > 0 && matches!(words[i - 1].as_str(), "not" | "no" | "never" | "without" | "cannot");
        tool_words.iter().any(|t| words.iter().enumerate().any(|(i, w)| w.starts_with(t) && !denied(i)))
    };
    let done = calls.iter().any(|call| tools.iter().find(|t| t.name == call.name).is_none_or(does));
    let doers = tools.iter().filter(|t| does(t)).map(|t| t.name.clone()).collect();
    (!done).then_some(Unfit { action, doers })
}

/// The action `question` asks for: as written, and the words a tool doing it names.
fn action(question: &str) -> Option<(String, &'static [&'static str])> {
    let lower = question.trim().to_lowercase();
    let mut rest = lower.as_str();
    loop {
        let before = rest;
        for opening in OPENINGS {
            if let Some(after) = rest.strip_prefix(opening) {
                rest = after.trim_start_matches([',', ' ']);
            }
        }
        if rest == before {
            break;
        }
    }
    let first = rest.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or_default();
    for (verbs, terms, tool_words) in ACTIONS {
        if verbs.contains(&first) {
            return Some((first.to_string(), tool_words));
        }
        if let Some(term) = terms.iter().find(|t| question.contains(*t)) {
            return Some((term.to_string(), tool_words));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        let tool = |name: &str, description: &str, param: &str| json!({"name": name, "description": description, "parameters": {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]}});
        ToolSpec::parse_all(&[
            tool("files.move", "Move or rename a file.", "source"),
            tool("files.compress", "Pack files into an archive.", "paths"),
            tool("files.delete", "Delete a file.", "path"),
            tool("home.lights", "Switch the lights of a room.", "room"),
            tool("format_converter", "Convert a data file between formats.", "path"),
            tool("translate.text", "Translate text into another language.", "text"),
            tool("file_reader", "Read a text file. To turn it into JSON use format_converter.", "path"),
        ])
        .unwrap()
    }

    fn call(name: &str) -> ToolCall {
        ToolCall { id: "call_001".into(), name: name.into(), args: Default::default() }
    }

    #[test]
    fn an_action_no_calls_tool_does_is_found() {
        let unfit_action = |calls: &[ToolCall], question: &str| unfit(calls, &tools(), question).map(|u| (u.action, u.doers));
        let delete = Some(("delete".to_string(), vec!["files.delete".to_string()]));
        assert_eq!(unfit_action(&[call("files.move")], "Delete the file temp.txt for good."), delete);
        assert_eq!(unfit_action(&[call("files.move")], "Please, can you remove temp.txt?"), Some(("remove".into(), vec!["files.delete".into()])));
        assert_eq!(unfit_action(&[call("home.lights")], "Lock the front door."), Some(("lock".into(), vec![])));
        let convert = Some(("转换成".to_string(), vec!["format_converter".to_string(), "translate.text".to_string()]));
        assert_eq!(unfit_action(&[call("files.compress")], "帮我把这张 photo.jpg 转换成 PNG 格式。"), convert);
        assert_eq!(unfit_action(&[call("file_reader")], "Convert config/servers.yaml to JSON."), Some(("convert".into(), vec!["format_converter".into(), "translate.text".into()])));
        assert_eq!(unfit_action(&[call("translate.text")], "Transcribe meeting.mp3 and translate it into English."), Some(("transcribe".into(), vec![])));
        // A tool that says it does not do the action.
        let stop = ToolSpec::parse_all(&[json!({"name": "cloud.stop_instance", "description": "Stop (not delete) a running cloud virtual machine by its id.", "parameters": {"type": "object", "properties": {"instance_id": {"type": "string"}}}})]).unwrap();
        assert_eq!(unfit(&[call("cloud.stop_instance")], &stop, "帮我把 i-0c55d1e2 这台云服务器彻底删除，不是停机。").map(|u| u.doers), Some(vec![]));
        assert_eq!(unfit_action(&[call("home.lights")], "Cancel my travel insurance policy TRV-55120 and refund the premium."), Some(("cancel".into(), vec!["files.delete".into()])));
        assert_eq!(unfit_action(&[call("home.lights")], "帮我在推特上取消关注 @spam"), Some(("取消关注".into(), vec![])));
        assert_eq!(unfit_action(&[call("home.lights")], "帮我把家里的宽带从 100M 升级到 500M 的套餐。"), Some(("升级".into(), vec![])));
        assert_eq!(unfit_action(&[call("home.lights")], "Can you order a large pepperoni pizza from Tony's for delivery to my hotel?"), Some(("order".into(), vec![])));
    }

    #[test]
    fn an_action_a_tool_does_or_none_of_the_list_is_left_alone() {
        assert_eq!(unfit(&[call("files.delete")], &tools(), "Delete the file temp.txt."), None);
        assert_eq!(unfit(&[call("format_converter")], &tools(), "把 data.csv 转换成 JSON"), None);
        assert_eq!(unfit(&[call("translate.text")], &tools(), "把这句话转成英文"), None);
        // Another of the calls does it.
        assert_eq!(unfit(&[call("files.move"), call("files.delete")], &tools(), "Delete a.txt and move b.txt to c/."), None);
        // Not the request's first verb in English.
        assert_eq!(unfit(&[call("files.move")], &tools(), "Move a.txt to old/, I'll delete it later."), None);
        assert_eq!(unfit(&[call("files.move")], &tools(), "Move a.txt to old/."), None);
        assert_eq!(unfit(&[], &tools(), "Delete a.txt."), None);
    }
}
