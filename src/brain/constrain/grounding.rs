//! File paths the conversation names, and only those, as path arguments.
//!
//! A small model fills a path parameter with the path of the prompt's own example
//! (`docs/agent_intro.txt`, in 8 of 28 whole conversations) or one it makes up. A path is not
//! something to guess: it is written by the user or found by a tool. So, in the grammar,
//! a parameter that names a file (`path`, `file`, `file_path`, `*_path`, `*_file`...) of type
//! string may only take a path that a user message or a tool result contains. When the
//! conversation names none, a tool that requires such a parameter cannot be called (the
//! model searches or answers instead) and an optional one is left out.
//!
//! The prompt is not changed (the tools schema the model reads is the one given); only
//! what the grammar lets through.

use serde_json::Value;

use crate::protocol::Message;
use crate::text::is_cjk;
use crate::tools::spec::{openai_tool, Param, SpecError, ToolSpec};

/// Whether a parameter of this name takes a file path.
pub fn names_a_file(param: &str) -> bool {
    let name = param.to_ascii_lowercase();
    matches!(name.as_str(), "path" | "file" | "filename" | "filepath" | "file_name" | "file_path")
        || ["_path", "_file", "_filename", "_filepath"].iter().any(|suffix| name.ends_with(suffix))
}

/// `tools` with each path parameter held to the paths in `messages`; the tools that
/// require a path when there is none are left out.
pub fn grounded(tools: &[ToolSpec], messages: &[Message]) -> Result<Vec<ToolSpec>, SpecError> {
    let paths = paths_in(messages);
    // Bare names the user wrote (`LICENSE`, `Makefile`) may be files too, once the
    // conversation names a path at all.
    let mut allowed = paths.clone();
    if !paths.is_empty() {
        for name in bare_names(messages) {
            if allowed.len() < MAX_PATHS && !allowed.contains(&name) {
                allowed.push(name);
            }
        }
    }
    let mut out = Vec::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let file_params = file_params(tool);
        if file_params.is_empty() {
            out.push(tool.clone());
            continue;
        }
        if paths.is_empty() && file_params.iter().any(|p| tool.required().iter().any(|r| r == p)) {
            continue;
        }
        let mut parameters = tool.parameters().clone();
        if let Some(properties) = parameters.get_mut("properties").and_then(Value::as_object_mut) {
            for name in &file_params {
                if paths.is_empty() {
                    properties.remove(*name);
                } else if let Some(Value::Object(schema)) = properties.get_mut(*name) {
                    schema.insert("enum".into(), Value::Array(allowed.iter().cloned().map(Value::String).collect()));
                }
            }
        }
        out.push(ToolSpec::parse(&openai_tool(&tool.name, &Value::from(tool.description.as_str()), &parameters), index)?);
    }
    Ok(out)
}

/// Whether `param` takes a file path: a string with a file's name (its values listed or not).
fn takes_a_path(param: &Param) -> bool {
    names_a_file(&param.name) && param.schema.kinds.iter().all(|k| k.as_str() == "string")
}

/// The parameters of `tool` that take any file path (not yet held to a list of values).
fn file_params(tool: &ToolSpec) -> Vec<&str> {
    tool.params()
        .iter()
        .filter(|p| takes_a_path(p) && p.schema.enum_values.is_none() && p.schema.constant.is_none())
        .map(|p| p.name.as_str())
        .collect()
}

/// Whether the latest user message names a file path and one of `tools` takes a path: the
/// user points at a file, and what it holds only a tool can tell. `tools` may be
/// [`grounded`] already (their path parameters then list the paths).
pub fn user_names_a_file(tools: &[ToolSpec], messages: &[Message]) -> bool {
    crate::brain::last_question(messages).is_some_and(|text| !paths_in_text(text).is_empty())
        && tools.iter().any(|tool| tool.params().iter().any(takes_a_path))
}

/// Words for the user's files ("Which of my files mentions the VPN?", "我记在某个文件里了，帮我找一下").
const FILE_WORDS: &[&str] = &["file", "files", "document", "documents", "doc", "docs", "文件", "文档", "笔记"];

/// Whether the latest user message speaks of the user's files and one of `tools` searches
/// files: what a file holds, or which file holds it, only a tool can tell. Asked "我记在某个
/// 文件里了，帮我找一下" with `local_file_search` offered, the 0.5B answered "抱歉，我无法协助完成
/// 这个请求。" (builtin). A tool searches files when its name says it searches or finds
/// (`search`, `find`) and its name or description speaks of files.
pub fn user_looks_for_a_file(tools: &[ToolSpec], messages: &[Message]) -> bool {
    let speaks_of_files = |text: &str| {
        let lower = text.to_lowercase();
        let english = lower.split(|c: char| !c.is_ascii_alphabetic()).any(|w| FILE_WORDS.contains(&w));
        english || FILE_WORDS.iter().filter(|w| !w.is_ascii()).any(|w| lower.contains(w))
    };
    let searches_files = |tool: &ToolSpec| {
        let name = tool.name.to_lowercase();
        let about_files = |text: &str| text.to_lowercase().contains("file");
        (name.contains("search") || name.contains("find")) && (about_files(&tool.name) || about_files(&tool.description))
    };
    crate::brain::last_question(messages).is_some_and(speaks_of_files) && tools.iter().any(searches_files)
}

/// Most paths offered to the grammar (a long search result or file can name many).
const MAX_PATHS: usize = 100;

/// The paths written in the user's messages and the tool results, in order of first
/// appearance, each once, at most [`MAX_PATHS`].
pub fn paths_in(messages: &[Message]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for message in messages {
        let text = match message {
            Message::User { content } => content.as_str(),
            Message::Tool(result) => result.content.as_str(),
            Message::System { .. } | Message::Assistant(_) => continue,
        };
        for path in paths_in_text(text) {
            if !paths.contains(&path) && paths.len() < MAX_PATHS {
                paths.push(path);
            }
        }
    }
    paths
}

/// Words of the user's messages that could name a file without looking like a path: ASCII
/// letters first, with a letter or digit after (`LICENSE`, `Makefile`, `notes_v2`).
fn bare_names(messages: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for message in messages {
        let Message::User { content } = message else { continue };
        for word in content.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '\\'))) {
            let word = word.trim_matches('.');
            if !word.contains(['/', '\\']) && word.chars().count() >= 3 && word.starts_with(|c: char| c.is_ascii_alphabetic()) && !out.iter().any(|w| w == word) {
                out.push(word.to_string());
            }
        }
    }
    out
}

/// Characters a path is made of: letters (any script), digits and `_ - . / \ ~ :` (the
/// colon for `C:\`; a URL's `://` rules its run out).
fn path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '\\' | '~' | ':')
}

/// Runs of path characters that look like a path: with a `/` or `\` between names, or a
/// file name with an extension that starts with a letter (`notes.txt`, not `3.14`).
/// Chinese written against a path (`看看docs/a.md里面`) is cut off at the path's ends.
fn paths_in_text(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !path_char(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && path_char(chars[i]) {
            i += 1;
        }
        let run: String = chars[start..i].iter().collect();
        if run.contains("://") {
            continue;
        }
        for candidate in variants(&run) {
            if looks_like_a_path(&candidate) && !out.contains(&candidate) {
                out.push(candidate);
            }
        }
    }
    out
}

/// The run without leading and trailing dots, and with Chinese written against it cut
/// off: before its first ASCII letter or digit (`看看docs/a.md`, but not `会议纪要/a.md`, a
/// folder) and after an extension (`docs/a.md里面`).
fn variants(run: &str) -> Vec<String> {
    let run = run.trim_end_matches(['.', ':']).trim_start_matches(':');
    let run = if run.starts_with("./") || run.starts_with("../") || run.starts_with(".\\") { run } else { run.trim_start_matches('.') };
    let mut chars: Vec<char> = run.chars().collect();
    let lead = chars.iter().take_while(|&&c| is_cjk(c)).count();
    if lead > 0 && chars.get(lead).is_some_and(|c| c.is_ascii_alphanumeric()) {
        chars.drain(..lead);
    }
    let tail = chars.iter().rev().take_while(|&&c| is_cjk(c)).count();
    if tail > 0 {
        let kept: String = chars[..chars.len() - tail].iter().collect();
        if kept.rsplit_once('.').is_some_and(|(_, ext)| !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())) {
            chars.truncate(chars.len() - tail);
        }
    }
    vec![chars.into_iter().collect()]
}

fn looks_like_a_path(candidate: &str) -> bool {
    let has_name = candidate.chars().any(char::is_alphabetic);
    // `docs/a.md`, `./src`, `~/Downloads`, `/var/log`, `logs/`.
    let separated = candidate.contains(['/', '\\']) && candidate.chars().any(|c| c.is_alphanumeric());
    let extension = candidate.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !stem.ends_with(['/', '\\'])
            && (1..=6).contains(&ext.chars().count())
            && ext.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    has_name && (separated || extension)
}

/// A parameters object's `properties`, for tests.
#[cfg(test)]
fn properties(tool: &ToolSpec) -> &serde_json::Map<String, Value> {
    tool.parameters().get("properties").and_then(Value::as_object).expect("properties")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ToolCall, ToolMessage};
    use serde_json::json;

    fn found(text: &str) -> Vec<String> {
        paths_in_text(text)
    }

    #[test]
    fn paths_are_found_in_english_and_chinese_text() {
        assert_eq!(found("Read docs/onboarding.md and tell me who can help."), ["docs/onboarding.md"]);
        assert_eq!(found("Which step failed in logs/deploy-2024-05-02.log, and why?"), ["logs/deploy-2024-05-02.log"]);
        assert_eq!(found("帮我看看 docs/会议纪要/2024-03-12-产品评审.md，会议室预订"), ["docs/会议纪要/2024-03-12-产品评审.md"]);
        assert_eq!(found("读取 notes/travel/出差报销规定.txt，出差的餐补"), ["notes/travel/出差报销规定.txt"]);
        assert_eq!(found("看看docs/a.md里面写了什么"), ["docs/a.md"]);
        assert_eq!(found("会议纪要/评审.md里说了什么"), ["会议纪要/评审.md"]);
        assert_eq!(found("open report.pdf please"), ["report.pdf"]);
        assert_eq!(found("C:\\Users\\me\\notes.txt"), ["C:\\Users\\me\\notes.txt"]);
        assert_eq!(found("Find every .py file under ./src, then ~/Downloads and /var/log."), ["./src", "~/Downloads", "/var/log"]);
        assert_eq!(found("Compress the logs/ folder"), ["logs/"]);
    }

    #[test]
    fn numbers_urls_and_plain_words_are_not_paths() {
        assert!(found("What is 3.14 * 5 - 2.5? And 1/2 of 10?").is_empty(), "{:?}", found("What is 3.14 * 5 - 2.5? 1/2"));
        assert!(found("see https://example.com/a.html").is_empty());
        assert!(found("Hi there, good morning! 你好呀！").is_empty());
        assert!(found("a/b").contains(&"a/b".to_string()));
    }

    fn tools() -> Vec<ToolSpec> {
        let raw = [
            json!({"name": "file_reader", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "max_chars": {"type": "integer"}}, "required": ["path"]}}),
            json!({"name": "format_converter", "description": "Convert", "parameters": {"type": "object", "properties": {"to": {"type": "string", "enum": ["json", "csv"]}, "path": {"type": "string"}, "output_path": {"type": "string"}}, "required": ["to"]}}),
            json!({"name": "calculator", "description": "Math", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}),
        ];
        ToolSpec::parse_all(&raw).unwrap()
    }

    #[test]
    fn the_latest_user_message_names_a_file_a_tool_can_take() {
        let tools = tools();
        let calculator_only: Vec<ToolSpec> = tools.iter().filter(|t| t.name == "calculator").cloned().collect();
        let asked = |texts: &[&str]| -> Vec<Message> {
            texts.iter().enumerate().map(|(i, t)| if i % 2 == 0 { Message::user(*t) } else { Message::Assistant(crate::protocol::AiMessage::answer(*t)) }).collect()
        };
        assert!(user_names_a_file(&tools, &asked(&["Which step failed in logs/deploy-2024-05-02.log?"])));
        assert!(user_names_a_file(&tools, &asked(&["config/feature_flags.json 里哪些功能开关是打开的？"])));
        let named = asked(&["Which step failed in logs/deploy-2024-05-02.log?"]);
        assert!(user_names_a_file(&grounded(&tools, &named).unwrap(), &named), "grounded tools, whose path parameters list the paths, take them too");
        assert!(!user_names_a_file(&calculator_only, &asked(&["Read config/app.yaml"])), "no tool takes a path");
        assert!(!user_names_a_file(&tools, &asked(&["What is 3.14 * 5 - 2.5?"])));
        assert!(!user_names_a_file(&tools, &asked(&["Read config/app.yaml", "It says port 8080.", "Thanks! What is the capital of Japan?"])), "only the latest question counts");
    }

    #[test]
    fn the_latest_user_message_looks_for_a_file_a_tool_can_search() {
        let search = json!({"name": "local_file_search", "description": "Search workspace files for a word.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}});
        let mut with_search = tools();
        with_search.extend(ToolSpec::parse_all(&[search]).unwrap());
        for asked in ["Which of my files mentions the VPN?", "送面粉的那家供应商电话是多少来着？我记在某个文件里了，帮我找一下。", "Find the document about travel costs"] {
            assert!(user_looks_for_a_file(&with_search, &[Message::user(asked)]), "{asked}");
            assert!(!user_looks_for_a_file(&tools(), &[Message::user(asked)]), "no tool searches files: {asked}");
        }
        for asked in ["Who painted the Mona Lisa?", "What is the profile of this user?", "给这个 DNS 加一条记录"] {
            assert!(!user_looks_for_a_file(&with_search, &[Message::user(asked)]), "{asked}");
        }
    }

    #[test]
    fn path_parameters_take_only_the_paths_the_user_or_a_tool_wrote() {
        let call: ToolCall = serde_json::from_value(json!({"id": "c1", "name": "local_file_search", "args": {"query": "VPN"}})).unwrap();
        let messages = vec![
            Message::system("You may read docs/agent_intro.txt."),
            Message::user("Read config/app.yaml"),
            Message::Tool(ToolMessage::success(&call, json!({"matches": [{"path": "docs/onboarding.md", "line": 3}]}))),
        ];
        let tools = grounded(&tools(), &messages).unwrap();
        assert_eq!(tools.len(), 3);
        let enum_of = |tool: &ToolSpec, param: &str| properties(tool)[param]["enum"].clone();
        // Paths first, then the user's bare words (a file may be called `LICENSE`).
        assert_eq!(enum_of(&tools[0], "path"), json!(["config/app.yaml", "docs/onboarding.md", "Read"]), "the system prompt's path is not the user's");
        assert_eq!(enum_of(&tools[1], "output_path"), enum_of(&tools[0], "path"));
        assert_eq!(tools[2], self::tools()[2], "tools without a path parameter are as given");
        let with_license = grounded(&self::tools(), &[Message::user("Read README.md and LICENSE.")]).unwrap();
        assert_eq!(enum_of(&with_license[0], "path"), json!(["README.md", "Read", "and", "LICENSE"]));
    }

    #[test]
    fn with_no_path_in_the_conversation_a_tool_that_needs_one_cannot_be_called() {
        let tools = grounded(&tools(), &[Message::user("Which of my files mentions the VPN?")]).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["format_converter", "calculator"]);
        // The converter's optional path parameters are left out (it can still take content).
        assert!(properties(&tools[0]).get("path").is_none() && properties(&tools[0]).get("output_path").is_none());
        assert!(properties(&tools[0]).get("to").is_some());
    }

    #[test]
    fn file_parameter_names() {
        for name in ["path", "file", "file_path", "filePath", "input_path", "source_file", "FILENAME"] {
            assert!(names_a_file(name), "{name}");
        }
        for name in ["expression", "query", "root_dir", "pathway", "profile", "filter"] {
            assert!(!names_a_file(name), "{name}");
        }
    }
}
