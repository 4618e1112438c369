//! Values a request names by the parameter's own noun: "restart *the web deployment*" is
//! `deployment: "web"`, "add it to *my Travel deck*" is `deck: "Travel"`.
//!
//! The 0.5B, asked to restart "the web deployment" after checking "host web-03", wrote
//! `deployment: "web-03"` (the host, the longer value next to it); asked to add a word to
//! "my Travel deck", it left `deck` out. A free string parameter whose name ends in a noun the
//! request writes right after one word (after "the", "my", "our", "your", "this"...) is
//! named by that word. It is put in only where that is plain: the call's value starts
//! with the word and goes on past it (`web-03` for `web`), or the call left an optional
//! parameter out or wrote its default, and the word is capitalised (a name: `Travel`); the word is named once,
//! follows a determiner ("the", "my"...), is no everyday adjective ("the new playlist") and no other argument holds it.

use serde_json::Value;

use crate::protocol::ToolCall;
use crate::tools::spec::ToolSpec;

/// Nouns too general to name a value by ("the user name", "the file path").
const GENERAL: &[&str] = &["name", "id", "type", "value", "text", "query", "title", "key", "code", "message", "path", "file", "data", "content", "note", "notes", "description", "format", "mode", "date", "time", "unit"];

/// Words before a noun that are no value of it.
const NOT_VALUES: &[&str] = &[
    "the", "my", "our", "your", "a", "an", "this", "that", "these", "those", "its", "their", "his", "her", "new", "old", "same", "other",
    "each", "every", "current", "default", "existing", "whole", "first", "last", "next", "previous", "all", "any", "some", "one",
    "right", "wrong", "entire", "which", "what", "whose", "to", "in", "of", "for", "from", "on", "at", "by", "with", "and", "or",
];

/// Words a named value follows ("*the* web deployment", "*my* Travel deck").
const DETERMINERS: &[&str] = &["the", "my", "our", "your", "this", "that", "its", "their", "his", "her", "a", "an"];

/// Puts the values `question` names by a parameter's noun into `calls` (see the module
/// docs); each change as `tool: param "old" -> "new"` (or `+ "new"` where added).
pub fn put_right(calls: &mut [ToolCall], tools: &[ToolSpec], question: &str) -> Vec<String> {
    let mut changed = Vec::new();
    for call in calls.iter_mut() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else { continue };
        let Some(properties) = tool.parameters().get("properties").and_then(Value::as_object) else { continue };
        for (param, spec) in properties {
            if spec.get("type").and_then(Value::as_str) != Some("string") || spec.get("enum").is_some() {
                continue;
            }
            let Some(noun) = param.rsplit('_').next().filter(|n| n.len() >= 3 && !GENERAL.contains(n)) else { continue };
            let Some(word) = named_by(question, noun) else { continue };
            let held_elsewhere = call.args.iter().any(|(p, v)| p != param && v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(&word)));
            if held_elsewhere {
                continue;
            }
            let capitalised = word.chars().next().is_some_and(char::is_uppercase);
            let default = spec.get("default").and_then(Value::as_str);
            match call.args.get(param).and_then(Value::as_str) {
                Some(value) if longer_than(value, &word, noun) || (capitalised && default == Some(value) && value != word) => {
                    changed.push(format!("{}: {param} {value:?} -> {word:?}", call.name));
                    call.args.insert(param.clone(), Value::String(word));
                }
                None if !call.args.contains_key(param) && !tool.required().contains(param) && capitalised =>
                {
                    changed.push(format!("{}: {param} + {word:?}", call.name));
                    call.args.insert(param.clone(), Value::String(word));
                }
                _ => {}
            }
        }
    }
    changed
}

/// The one word `question` writes right before `noun` (a whole word, any case), where
/// every mention of the noun has the same one; `None` otherwise.
fn named_by(question: &str, noun: &str) -> Option<String> {
    let words: Vec<&str> = question.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '"' | '\'' | '(' | ')' | '“' | '”' | '，')).filter(|w| !w.is_empty()).collect();
    let mut found: Option<String> = None;
    for (i, w) in words.iter().enumerate() {
        let bare = w.trim_end_matches(['.', '!', '?', '。']);
        if !bare.eq_ignore_ascii_case(noun) || i == 0 {
            continue;
        }
        let before = words[i - 1];
        // After a determiner: "my 'B1 Verbs' deck" names no deck "Verbs".
        let determined = i >= 2 && DETERMINERS.contains(&words[i - 2].to_lowercase().as_str());
        let plain = determined
            && !before.is_empty()
            && before.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '#'))
            && !NOT_VALUES.contains(&before.to_lowercase().as_str());
        if !plain {
            return None;
        }
        match &found {
            Some(earlier) if earlier != before => return None,
            _ => found = Some(before.to_string()),
        }
    }
    found
}

/// Whether `value` is `word` joined to more (`web-03` for `web`), any case: not the
/// phrase itself (`living_room` for "the living room").
fn longer_than(value: &str, word: &str, noun: &str) -> bool {
    let (value, word) = (value.to_lowercase(), word.to_lowercase());
    let Some(rest) = value.strip_prefix(&word) else { return false };
    rest.starts_with(['-', '_', '.']) && !rest[1..].eq_ignore_ascii_case(noun)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        ToolSpec::parse_all(&[
            json!({"name": "k8s.rollout_restart", "description": "", "parameters": {"type": "object", "properties": {
                "deployment": {"type": "string"}, "namespace": {"type": "string"}}, "required": ["deployment"]}}),
            json!({"name": "lang.add_vocab", "description": "", "parameters": {"type": "object", "properties": {
                "term": {"type": "string"}, "deck": {"type": "string", "default": "Default"}, "user_name": {"type": "string"}}, "required": ["term"]}}),
        ])
        .unwrap()
    }

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn a_longer_neighbour_gives_way_to_the_word_before_the_noun() {
        let mut calls = vec![call("k8s.rollout_restart", json!({"deployment": "web-03", "namespace": "prod"}))];
        let question = "Check the CPU on host web-03. If it is above 90%, restart the web deployment in the prod namespace.";
        assert_eq!(put_right(&mut calls, &tools(), question), [r#"k8s.rollout_restart: deployment "web-03" -> "web""#]);
        assert_eq!(calls[0].args["deployment"], "web");
        assert_eq!(calls[0].args["namespace"], "prod");
        // Another value altogether is the model's to choose; so is the phrase written whole.
        for deployment in ["api", "web deployment", "web_deployment"] {
            let mut calls = vec![call("k8s.rollout_restart", json!({"deployment": deployment, "namespace": "prod"}))];
            assert!(put_right(&mut calls, &tools(), question).is_empty(), "{deployment}");
        }
    }

    #[test]
    fn a_name_before_the_noun_fills_an_optional_parameter_left_out() {
        let mut calls = vec![call("lang.add_vocab", json!({"term": "madrugada"}))];
        let question = "Add the Spanish word 'madrugada' to my Travel deck; it means the early hours before dawn.";
        assert_eq!(put_right(&mut calls, &tools(), question), [r#"lang.add_vocab: deck + "Travel""#]);
        // Written as the parameter's default, it is the name all the same.
        let mut calls = vec![call("lang.add_vocab", json!({"term": "madrugada", "deck": "Default"}))];
        assert_eq!(put_right(&mut calls, &tools(), question), [r#"lang.add_vocab: deck "Default" -> "Travel""#]);
        // Not a name, an everyday word, or two different ones: nothing.
        for question in ["Add 'madrugada' to my travel deck.", "Add 'madrugada' to the new deck.", "Add it to the Travel deck, not the Work deck.", "Save it to my 'B1 Verbs' deck."] {
            let mut calls = vec![call("lang.add_vocab", json!({"term": "madrugada"}))];
            assert!(put_right(&mut calls, &tools(), question).is_empty(), "{question}");
        }
        // A general noun ("the Alice name") names nothing.
        let mut calls = vec![call("lang.add_vocab", json!({"term": "madrugada"}))];
        assert!(put_right(&mut calls, &tools(), "Add madrugada under the Alice name.").is_empty());
    }
}
