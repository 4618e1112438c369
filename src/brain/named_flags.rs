//! What a request says of a tool's yes-or-no options, in English or Chinese, and the
//! calls' booleans put right by it.
//!
//! Tools take options as booleans (`open_now`, `unread_only`, `overwrite`); users ask for
//! them in their own words ("现在营业的药店", "matching case exactly", "如果已存在就覆盖它").
//! The 0.5B writes such a flag `false`, or leaves it out, as often where the request asks
//! for it as where nobody did, and no bias on its logits separates the two (`true_bias`,
//! docs/bench). The request's words do: a flag is asked for when the request writes what
//! its name says (`business_days_only`: "business days"), what its description says ("Match
//! case exactly."), or a Chinese term for it ([`TERMS`]), and asked against when a
//! negation comes just before ("don't overwrite", "不区分大小写"). A description of the form
//! "true for X, false for Y" is read both ways ("总体标准差" is `sample: false`).

use serde_json::Value;

use crate::protocol::ToolCall;
use crate::tools::spec::{Param, ParamKind, ToolSpec};

/// Chinese terms for what flags' names say: by the whole name (its words joined by a
/// space, fillers like `only` left out) or, where it has no entry, by each of its words.
const TERMS: &[(&str, &[&str])] = &[
    ("unread", &["未读"]),
    ("open now", &["营业", "开门", "开着"]),
    ("open", &["营业", "开门", "开着"]),
    ("business days", &["工作日"]),
    ("workdays", &["工作日"]),
    ("case sensitive", &["区分大小写", "大小写敏感", "大小写完全一致", "大小写一致"]),
    ("overwrite", &["覆盖"]),
    ("replace", &["覆盖", "替换"]),
    ("recursive", &["递归", "子目录", "子文件夹"]),
    ("subdirectories", &["子目录", "子文件夹"]),
    ("free", &["免费"]),
    ("exists", &["存在"]),
    ("hourly", &["逐小时", "每小时", "每个小时"]),
    ("examples", &["例句", "示例", "例子"]),
    ("included", &["含税"]),
    ("notify", &["通知"]),
    ("compress", &["压缩"]),
    ("shuffle", &["随机播放", "打乱"]),
    ("detach", &["后台"]),
    ("background", &["后台"]),
    ("human readable", &["易读", "人类可读"]),
    ("sample", &["样本"]),
    ("population", &["总体"]),
    ("available", &["可借", "有货", "现货"]),
    ("in stock", &["有货", "现货"]),
    ("urgent", &["紧急", "加急"]),
    ("important", &["重要"]),
    ("all day", &["全天"]),
    ("round trip", &["往返"]),
    ("direct", &["直飞", "直达"]),
    ("nonstop", &["直飞", "直达"]),
    ("vegetarian", &["素食", "吃素"]),
    ("pet friendly", &["宠物"]),
    ("attachments", &["附件"]),
    ("force", &["强制"]),
    ("public", &["公开"]),
    ("private", &["私密", "私人"]),
    ("subtitles", &["字幕"]),
    ("accessible", &["无障碍"]),
    ("breakfast", &["早餐", "含早"]),
    ("parking", &["停车"]),
    ("refundable", &["可退"]),
    ("dry run", &["试运行", "演练"]),
    ("archived", &["归档"]),
    ("hidden", &["隐藏"]),
    ("verbose", &["详细"]),
    ("ascending", &["升序"]),
    ("descending", &["降序"]),
];

/// Words of a flag's name that say how, not what: `unread_only` is "unread".
const FILLERS: &[&str] = &["only", "is", "has", "include", "includes", "use", "enable", "enabled", "show", "with", "allow", "if", "flag", "should", "do"];

/// Words of a name that turn it round: `if_not_exists` is asked for by "if it doesn't exist".
const NEGATIONS_IN_NAME: &[&str] = &["not", "no"];

/// Words of a description that say nothing a request would write.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "and", "or", "only", "also", "return", "returns", "whether", "if", "when",
    "true", "false", "default", "is", "are", "be", "it", "its", "that", "this", "these", "those", "with", "from", "as", "than", "instead",
    "like", "can", "do", "does", "nothing", "set", "include", "includes", "about", "all", "any", "values", "value", "results", "one",
];

/// English words that, just before what a flag says, ask against it.
const NEGATIONS: &[&str] = &[
    "not", "no", "don't", "dont", "doesn't", "doesnt", "didn't", "without", "never", "nor", "isn't", "aren't", "won't", "shouldn't",
    "skip", "exclude", "excluding", "ignore", "ignoring", "avoid", "neither",
];

/// Chinese characters that, just before a term, ask against it.
const NEGATIONS_ZH: &[char] = &['不', '别', '没', '无', '勿', '非'];

/// Chinese question forms with a negation in them that do not ask against anything.
const QUESTION_FORMS: &[&str] = &["有没有", "是不是", "要不要", "能不能", "可不可以", "是否"];

/// How many words before a phrase a negation is looked for.
const NEGATION_REACH: usize = 3;

/// What a request says of a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    For,
    Against,
}

/// A request as flags are looked for in it: its English words in lower case, and its
/// whole text for Chinese terms.
pub struct Request {
    words: Vec<String>,
    text: String,
}

impl Request {
    pub fn new(text: &str) -> Self {
        let text = text.replace('’', "'");
        let words = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
            .map(|w| w.trim_matches('\'').to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        Self { words, text }
    }

    /// What the request says of `phrase` (English words, each matched loosely: "exist"
    /// for `exists`, "matching" for `match`), all found within a few words of each other:
    /// for it, or against it where a negation comes just before; `None` where it is not
    /// written.
    fn says_words(&self, phrase: &[String]) -> Option<Said> {
        if phrase.is_empty() {
            return None;
        }
        let reach = phrase.len() + 2;
        for start in 0..self.words.len() {
            if !phrase.iter().any(|p| same_word(p, &self.words[start])) {
                continue;
            }
            let window = &self.words[start..(start + reach).min(self.words.len())];
            if !phrase.iter().all(|p| window.iter().any(|w| same_word(p, w))) {
                continue;
            }
            let last = (0..window.len()).rev().find(|&i| phrase.iter().any(|p| same_word(p, &window[i]))).unwrap_or(0);
            let before = &self.words[start.saturating_sub(NEGATION_REACH)..start + last];
            let negated = before.iter().any(|w| NEGATIONS.contains(&w.as_str()));
            return Some(if negated { Said::Against } else { Said::For });
        }
        None
    }

    /// What the request says through any of the Chinese `terms`.
    fn says_term(&self, terms: &[&str]) -> Option<Said> {
        let mut said = None;
        for term in terms {
            for (at, _) in self.text.match_indices(term) {
                // "有没有开门的药店" asks whether there is one: no negation.
                let mut before = self.text[..at].to_string();
                for question in QUESTION_FORMS {
                    before = before.replace(question, "");
                }
                let negated = before.chars().rev().take(NEGATION_REACH).any(|c| NEGATIONS_ZH.contains(&c));
                let this = if negated { Said::Against } else { Said::For };
                if said.is_some_and(|s| s != this) {
                    return None;
                }
                said = Some(this);
            }
        }
        said
    }

    /// What the request says of a concept: in its English words, else by a Chinese term.
    fn says(&self, words: &[String]) -> Option<Said> {
        self.says_words(words).or_else(|| self.says_term(&terms_for(words)))
    }
}

/// Whether a request's word `written` is the word `word` (a plural's `s` aside, or a long
/// word going on or ending otherwise: `exists` is "exist", `recursive` "recursively").
fn same_word(word: &str, written: &str) -> bool {
    let plain = |w: &str| if w.len() > 3 { w.strip_suffix('s').unwrap_or(w).to_string() } else { w.to_string() };
    if plain(word) == plain(written) {
        return true;
    }
    let n = word.len();
    if n < 5 || !word.is_ascii() {
        return false;
    }
    let stem = if n >= 7 { &word[..n - 2] } else { &word[..n - 1] };
    written.starts_with(stem) && written.len() <= n + 3
}

/// The Chinese terms for a concept: the whole phrase's, else each word's.
fn terms_for(words: &[String]) -> Vec<&'static str> {
    let phrase = words.join(" ");
    if let Some((_, terms)) = TERMS.iter().find(|(key, _)| *key == phrase) {
        return terms.to_vec();
    }
    words.iter().filter_map(|w| TERMS.iter().find(|(key, _)| key == w)).flat_map(|(_, terms)| terms.iter().copied()).collect()
}

/// The content words of `text`: letters only, three or more, stop words left out.
fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .flat_map(|w| w.split('-'))
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_alphabetic()) && !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// What `request` asks of the flag `param`: `Some(true)` or `Some(false)`, `None` where it
/// says nothing (or says both).
fn asked(param: &Param, request: &Request) -> Option<bool> {
    let description = param.schema.description.as_deref().unwrap_or_default();
    // "true for the sample standard deviation (n-1), false for the population one".
    if let Some(sides) = two_sides(description) {
        let named = |side: &[String]| side.iter().any(|w| request.says(std::slice::from_ref(w)) == Some(Said::For));
        match (named(&sides.0), named(&sides.1)) {
            (true, false) => return Some(true),
            (false, true) => return Some(false),
            _ => {}
        }
    }
    let mut turned = false;
    let mut words = Vec::new();
    for w in param.name.split(|c: char| c == '_' || c == '-').map(str::to_lowercase) {
        if NEGATIONS_IN_NAME.contains(&w.as_str()) {
            turned = true;
        } else if !FILLERS.contains(&w.as_str()) && w.len() >= 3 {
            words.push(w);
        }
    }
    if let Some(said) = request.says(&words) {
        return Some((said == Said::For) != turned);
    }
    // The description's first sentence, as a request would write it ("Match case exactly.").
    let first = description.split(". ").next().unwrap_or_default();
    let first = first.split("Default").next().unwrap_or_default();
    // "Sizes like 1.2G instead of bytes": a request naming bytes asks against it.
    let contrasts = [" instead", " rather", " than ", " not ", "n't"].iter().any(|c| first.to_lowercase().contains(c));
    let words = if contrasts { Vec::new() } else { content_words(first) };
    if words.is_empty() || words.len() > 3 {
        return None;
    }
    request.says_words(&words).map(|said| said == Said::For)
}

/// The two sides of a description "true for X, false for Y" (or "to", "when", "if"):
/// the content words each side has and the other has not.
fn two_sides(description: &str) -> Option<(Vec<String>, Vec<String>)> {
    let lower = description.to_lowercase();
    let side = |mark: &str| -> Option<Vec<String>> {
        let at = lower.find(mark)?;
        let rest = &lower[at + mark.len()..];
        let rest = rest.trim_start_matches(|c: char| c.is_alphabetic()).trim_start();
        let end = rest.find([',', ';', '.']).unwrap_or(rest.len());
        Some(content_words(&rest[..end]))
    };
    let yes = side("true ")?;
    let no = side("false ")?;
    let only_yes: Vec<String> = yes.iter().filter(|w| !no.contains(w)).cloned().collect();
    let only_no: Vec<String> = no.iter().filter(|w| !yes.contains(w)).cloned().collect();
    (!only_yes.is_empty() && !only_no.is_empty()).then_some((only_yes, only_no))
}

/// The default of a flag: its schema's, or its description's "Default: true"; else false.
fn default_of(param: &Param) -> bool {
    if let Some(b) = param.schema.raw.get("default").and_then(Value::as_bool) {
        return b;
    }
    let description = param.schema.description.as_deref().unwrap_or_default().to_lowercase();
    description.contains("default: true") || description.contains("default true")
}

/// Puts right each boolean argument of `calls` that `question` asks for or against in so
/// many words: written (or added) as asked, where the call says otherwise. Calls of one tool
/// that the model gave different values for one flag are left alone: it told them apart
/// ("switch the bedroom light off and the kitchen's on"). Returns one line per change
/// (`tool: param false -> true`).
pub fn put_right(calls: &mut [ToolCall], tools: &[ToolSpec], question: &str) -> Vec<String> {
    let request = Request::new(question);
    let mut changed = Vec::new();
    for i in 0..calls.len() {
        let Some(tool) = tools.iter().find(|t| t.name == calls[i].name) else { continue };
        for param in tool.params() {
            if !param.schema.kinds.contains(&ParamKind::Boolean) {
                continue;
            }
            let Some(want) = asked(param, &request) else { continue };
            let written = |call: &ToolCall| call.args.get(&param.name).and_then(Value::as_bool);
            let told_apart = calls.iter().filter(|c| c.name == calls[i].name).filter_map(written).collect::<Vec<_>>();
            if told_apart.windows(2).any(|w| w[0] != w[1]) {
                continue;
            }
            let call = &mut calls[i];
            let now = match call.args.get(&param.name) {
                Some(Value::Bool(b)) => *b,
                None => default_of(param),
                Some(_) => continue,
            };
            if now == want {
                continue;
            }
            let was = call.args.get(&param.name).map_or_else(|| "(left out)".to_string(), Value::to_string);
            changed.push(format!("{}: {} {was} -> {want}", call.name, param.name));
            call.args.insert(param.name.clone(), Value::Bool(want));
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        ToolSpec::parse_all(&[
            json!({"name": "maps.nearby", "parameters": {"type": "object", "properties": {
                "location": {"type": "string"},
                "open_now": {"type": "boolean", "description": "Only places open now. Default: false."},
            }, "required": ["location"]}}),
            json!({"name": "email.search", "parameters": {"type": "object", "properties": {
                "query": {"type": "string"},
                "unread_only": {"type": "boolean", "description": "Only unread messages. Default: false."},
            }, "required": ["query"]}}),
            json!({"name": "files.search_text", "parameters": {"type": "object", "properties": {
                "text": {"type": "string"},
                "case_sensitive": {"type": "boolean", "description": "Match case exactly. Default: false."},
            }, "required": ["text"]}}),
            json!({"name": "files.move", "parameters": {"type": "object", "properties": {
                "source": {"type": "string"},
                "overwrite": {"type": "boolean", "description": "Replace an existing file at the destination. Default: false."},
            }, "required": ["source"]}}),
            json!({"name": "stats.std_dev", "parameters": {"type": "object", "properties": {
                "numbers": {"type": "array"},
                "sample": {"type": "boolean", "default": true, "description": "true for the sample standard deviation (n-1), false for the population one. Default: true."},
            }, "required": ["numbers"]}}),
            json!({"name": "db.create_table", "parameters": {"type": "object", "properties": {
                "table": {"type": "string"},
                "if_not_exists": {"type": "boolean", "description": "Do nothing if the table exists. Default: false."},
            }, "required": ["table"]}}),
            json!({"name": "calendar.cancel", "parameters": {"type": "object", "properties": {
                "event_id": {"type": "string"},
                "notify_attendees": {"type": "boolean", "default": true, "description": "Email the attendees about the cancellation. Default: true."},
            }, "required": ["event_id"]}}),
            json!({"name": "home.lights", "parameters": {"type": "object", "properties": {
                "room": {"type": "string"},
                "on": {"type": "boolean", "description": "true to switch on, false to switch off."},
            }, "required": ["room", "on"]}}),
        ])
        .unwrap()
    }

    fn call(name: &str, args: Value) -> ToolCall {
        serde_json::from_value(json!({"id": "call_001", "name": name, "args": args})).unwrap()
    }

    fn mended(question: &str, name: &str, args: Value) -> (Value, Vec<String>) {
        let mut calls = vec![call(name, args)];
        let changed = put_right(&mut calls, &tools(), question);
        (Value::Object(calls[0].args.clone()), changed)
    }

    #[test]
    fn a_flag_the_request_asks_for_in_its_own_words_is_set() {
        for (question, name, args, want) in [
            ("在上海静安寺附近找现在营业的药店。", "maps.nearby", json!({"location": "静安寺", "open_now": false}), json!({"location": "静安寺", "open_now": true})),
            ("Any cafes near me that are open right now?", "maps.nearby", json!({"location": "me"}), json!({"location": "me", "open_now": true})),
            ("在收件箱里搜一下所有带“报销”的未读邮件。", "email.search", json!({"query": "报销", "unread_only": false}), json!({"query": "报销", "unread_only": true})),
            ("Find 'TODO' under ./src, matching case exactly.", "files.search_text", json!({"text": "TODO"}), json!({"text": "TODO", "case_sensitive": true})),
            ("把 draft.md 重命名为 final.md，如果已存在就覆盖它。", "files.move", json!({"source": "draft.md"}), json!({"source": "draft.md", "overwrite": true})),
            ("计算这组数据的总体标准差：2, 4, 4, 5。", "stats.std_dev", json!({"numbers": [2, 4, 4, 5]}), json!({"numbers": [2, 4, 4, 5], "sample": false})),
            ("Create the users table if it doesn't exist yet.", "db.create_table", json!({"table": "users"}), json!({"table": "users", "if_not_exists": true})),
            ("Cancel it, and don't notify the attendees.", "calendar.cancel", json!({"event_id": "e1"}), json!({"event_id": "e1", "notify_attendees": false})),
            ("搜索 'TODO'，不区分大小写。", "files.search_text", json!({"text": "TODO", "case_sensitive": true}), json!({"text": "TODO", "case_sensitive": false})),
        ] {
            let (args, changed) = mended(question, name, args);
            assert_eq!(args, want, "{question}");
            assert_eq!(changed.len(), 1, "{question}");
        }
    }

    #[test]
    fn flags_the_request_says_nothing_of_are_left_as_written() {
        for (question, name, args) in [
            ("Find pharmacies near the station.", "maps.nearby", json!({"location": "station", "open_now": false})),
            ("Find pharmacies near the station.", "maps.nearby", json!({"location": "station", "open_now": true})),
            ("Search my mail for invoices.", "email.search", json!({"query": "invoices"})),
            ("Find TODO in ./src, case doesn't matter.", "files.search_text", json!({"text": "TODO"})),
            // A question, not a negation: the flag is asked for (written true already).
            ("附近有没有开门的药店？", "maps.nearby", json!({"location": "附近", "open_now": true})),
            ("计算 2, 4, 4, 5 的标准差。", "stats.std_dev", json!({"numbers": [2, 4, 4, 5]})),
            // Short words ("on", "off") are not read: too common to tell the sides apart.
            ("Turn the bedroom lights on.", "home.lights", json!({"room": "bedroom", "on": false})),
            // Said already.
            ("Move a.txt to b.txt, overwriting b.txt.", "files.move", json!({"source": "a.txt", "overwrite": true})),
        ] {
            let (written, changed) = mended(question, name, args.clone());
            assert_eq!(written, args, "{question}");
            assert!(changed.is_empty(), "{question}: {changed:?}");
        }
    }

    #[test]
    fn calls_of_one_tool_told_apart_by_the_model_are_left_alone() {
        let mut calls = vec![
            call("maps.nearby", json!({"location": "A", "open_now": true})),
            call("maps.nearby", json!({"location": "B", "open_now": false})),
        ];
        let before = calls.clone();
        assert!(put_right(&mut calls, &tools(), "Cafes open now near A, and any pharmacy near B").is_empty());
        assert_eq!(calls, before);
    }

    #[test]
    fn words_are_matched_loosely_but_not_too_loosely() {
        assert!(same_word("exists", "exist"));
        assert!(same_word("recursive", "recursively"));
        assert!(same_word("match", "matching"));
        assert!(same_word("days", "day"));
        assert!(!same_word("hourly", "hours"));
        assert!(!same_word("free", "freedom"));
        assert!(!same_word("sensitive", "insensitive"));
    }
}
