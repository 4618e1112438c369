//! The final answer written from the tool results, in a prompt of its own.
//!
//! After tool results, a small model asked for its decision in the decision prompt (rules,
//! tools, schema examples, the conversation) often answers with the tool's output pasted
//! whole, the question restated, or a value from the prompt's own example. Once it has
//! chosen to answer, its answer is written again from a short prompt that holds only the
//! question and this question's tool results, and asks for the answer itself (profile field
//! `answer_from_results`).

use serde_json::{json, Value};

use super::next_step::collect_leaves;
use super::{decision, BrainError, Decision, TokenSink};
use crate::protocol::{DecisionStats, Message, Stream, ToolCall, ToolStatus};
use crate::text::{digits_written, in_chinese, normalized};

/// The most characters of one tool result put in the prompt.
const MAX_RESULT_CHARS: usize = 3000;

const SYSTEM: &str = "You answer the user's question from the tool results you are given. \
Reply with the answer itself, in one to three sentences: use the exact values (numbers, \
names, dates, codes, file names) from the results, do not repeat the question, and do not \
describe the tools. If the results do not answer the question, say what they show.";

/// One tool result of the question, with the call that made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Called<'a> {
    pub name: &'a str,
    /// The call (`None` when it is not in the messages).
    pub call: Option<&'a ToolCall>,
    pub content: &'a str,
    /// It failed (`status: error`).
    pub failed: bool,
}

/// The user's latest question and the results of the tools called for it (oldest first);
/// `None` when no tool ran since the question.
pub fn results_for_question(messages: &[Message]) -> Option<(&str, Vec<Called<'_>>)> {
    let asked = messages.iter().rposition(|m| matches!(m, Message::User { .. }))?;
    let Message::User { content: question } = &messages[asked] else { return None };
    let results = results_with_calls(&messages[asked + 1..]);
    (!results.is_empty()).then_some((question.as_str(), results))
}

/// Every tool result in `messages` (oldest first), each with the call it answers: ids start
/// again at `call_001` on every turn, so the latest call of its id before it.
pub fn results_with_calls(messages: &[Message]) -> Vec<Called<'_>> {
    let mut calls: Vec<&ToolCall> = Vec::new();
    let mut results = Vec::new();
    for message in messages {
        match message {
            Message::Assistant(ai) => calls.extend(&ai.tool_calls),
            Message::Tool(result) => {
                let call = calls.iter().rev().find(|c| c.id == result.tool_call_id).copied();
                let failed = result.status == ToolStatus::Error;
                results.push(Called { name: result.name.as_str(), call, content: result.content.as_str(), failed });
            }
            _ => {}
        }
    }
    results
}

/// The chat messages of the answer prompt.
pub fn messages(question: &str, results: &[Called<'_>]) -> Vec<Value> {
    let mut user = String::from("Tool results:\n");
    for (i, result) in results.iter().enumerate() {
        user.push_str(&format!("[{}] {}:\n{}\n", i + 1, result.name, shown(result.content)));
    }
    ask(user, question)
}

/// The chat messages of the answer for one result the first answer left out: the question
/// may ask more than this result tells (given the whole question and one result, the 0.5B
/// answered the question's other part again), so the call is named and what its result
/// tells is asked for.
pub fn part_messages(question: &str, result: &Called<'_>) -> Vec<Value> {
    let call = match result.call {
        Some(call) => format!("{}({})", call.name, Value::Object(call.args.clone())),
        None => result.name.to_string(),
    };
    let user = format!(
        "Question: {question}\n\nOne of the tool calls made for it: {call}\nIts result:\n{}\n\nSay{} what this result tells, with its exact values:",
        shown(result.content),
        if in_chinese(question) { " in Chinese" } else { "" }
    );
    vec![json!({"role": "system", "content": SYSTEM}), json!({"role": "user", "content": user})]
}

/// A result as the answer prompt shows it: a successful call's output as `key: value`
/// lines ([`facts`]), anything else as written; cut at [`MAX_RESULT_CHARS`].
fn shown(content: &str) -> String {
    let content = facts(content).unwrap_or_else(|| content.to_string());
    let shown: String = content.chars().take(MAX_RESULT_CHARS).collect();
    let cut = if shown.len() < content.len() { " ..." } else { "" };
    format!("{shown}{cut}")
}

/// The output of a successful call (`{"status": "success", "output": ...}`, or any JSON
/// object) as one `key: value` line per field, nested fields named by their path
/// (`from.timezone: Asia/Shanghai`), lists of plain values on one line, strings without
/// their quotes. Shown the JSON itself, the 0.5B misread it: "Arsenal won" from
/// `"result":"loss"`, one city's weather given for two. `None` for a result that is not
/// JSON, or not an object or list once unwrapped.
fn facts(content: &str) -> Option<String> {
    let value: Value = serde_json::from_str(content).ok()?;
    let output = match value.get("status").and_then(Value::as_str) {
        Some("success") => value.get("output")?,
        Some(_) => return None,
        None => &value,
    };
    if !(output.is_object() || output.is_array()) {
        return None;
    }
    let mut lines = Vec::new();
    fact_lines("", output, &mut lines);
    Some(lines.join("\n"))
}

fn fact_lines(path: &str, value: &Value, lines: &mut Vec<String>) {
    let named = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
    match value {
        Value::Object(map) => map.iter().for_each(|(key, v)| fact_lines(&named(key), v, lines)),
        Value::Array(items) if items.iter().any(|v| v.is_object() || v.is_array()) => {
            for (i, item) in items.iter().enumerate() {
                fact_lines(&named(&(i + 1).to_string()), item, lines);
            }
        }
        Value::Array(items) => lines.push(format!("{path}: {}", items.iter().map(plain).collect::<Vec<_>>().join(", "))),
        leaf => lines.push(format!("{path}: {}", plain(leaf))),
    }
}

/// A plain value as text: a string of one line without quotes. A text of several lines (a
/// file's content) stays quoted, its line breaks written `\n`: shown as lines, the 0.5B took
/// a file's markdown for the prompt's own and described the tool instead of answering.
fn plain(value: &Value) -> String {
    value.as_str().filter(|s| !s.contains('\n')).map_or_else(|| value.to_string(), str::to_string)
}

fn ask(mut user: String, question: &str) -> Vec<Value> {
    // The rules in Chinese for a Chinese question made the 0.5B recite them as its answer.
    // Without a word on the language, the 0.5B answered half the Chinese questions of the
    // conversation sets in English; told only "in Chinese", it left the values out.
    let answer = if in_chinese(question) { "Answer in Chinese, naming the exact values from the results:" } else { "Answer:" };
    user.push_str(&format!("\nQuestion: {question}\n{answer}"));
    vec![json!({"role": "system", "content": SYSTEM}), json!({"role": "user", "content": user})]
}

/// One generation of an answer prompt.
pub(crate) struct Written {
    pub text: String,
    pub stats: DecisionStats,
    pub warnings: Vec<String>,
}

/// Writes `decided`'s answer again from `question` and its `results` ([`messages`]), each
/// prompt generated by `generate`. With one result the answer says nothing of
/// ([`unreflected`]), the answer is what that result tells, asked of it alone, when that
/// answer tells it. With two or more results, each result the answer says
/// nothing of ([`unreflected`]) gets an answer of its own, from the question and that
/// result alone, added after it. The raw text keeps every generation after its mark.
pub(crate) fn write(
    decided: &mut Decision,
    question: &str,
    results: &[Called<'_>],
    on_token: TokenSink<'_>,
    mut generate: impl FnMut(Vec<Value>, TokenSink<'_>) -> Result<Written, BrainError>,
) -> Result<(), BrainError> {
    on_token(Stream::Text(decision::ANSWER_MARK));
    let Written { text, mut stats, mut warnings } = generate(messages(question, results), &mut *on_token)?;
    let mut raw = text.clone();
    let mut answer = text.trim().to_string();
    // What result `i` tells, asked of it alone; every generation is kept in the raw text.
    let mut part = |i: usize, raw: &mut String, stats: &mut DecisionStats, warnings: &mut Vec<String>| -> Result<String, BrainError> {
        let mark = decision::part_mark(i + 1, results[i].name);
        on_token(Stream::Text(&mark));
        let part = generate(part_messages(question, &results[i]), &mut *on_token)?;
        raw.push_str(&mark);
        raw.push_str(&part.text);
        decision::add_generation(stats, &part.stats);
        warnings.extend(part.warnings);
        Ok(without_repeats(&part.text))
    };
    if results.len() == 1 && !unreflected(&answer, question, results).is_empty() {
        // One result the answer says nothing of (the question said again, "好的。另外帮我
        // 算一下 (15 + 27) * 4。"): what the result tells is the answer, when it tells it.
        let text = part(0, &mut raw, &mut stats, &mut warnings)?;
        if !text.is_empty() && unreflected(&text, question, results).is_empty() {
            warnings.push(format!("the answer said nothing of the result ({}): written from the result alone", results[0].name));
            answer = text;
        }
    } else if results.len() >= 2 && !answer.is_empty() {
        for i in unreflected(&answer, question, results) {
            let text = part(i, &mut raw, &mut stats, &mut warnings)?;
            if !text.is_empty() {
                warnings.push(format!("the answer said nothing of result {} ({}): its own answer added", i + 1, results[i].name));
                answer.push('\n');
                answer.push_str(&text);
            }
        }
    }
    decision::answer_from_results(decided, &raw, &answer, &stats, &warnings);
    Ok(())
}

/// The results (their places in `results`) that `answer` says nothing of: it writes none
/// of the values the tool added (a number, a short string value whole, or a number, a long
/// word or four Han characters of a text), values the question already wrote aside. The
/// 0.5B, given two or three results, often answers from one of them alone. A failed call
/// and a result a later call took a value from (a search whose file was then read) are
/// steps, not answers: they are not looked for.
pub fn unreflected(answer: &str, question: &str, results: &[Called<'_>]) -> Vec<usize> {
    let answer = loose(answer);
    let question = loose(question);
    let answer_numbers = digits_written(&answer);
    let question_numbers = digits_written(&question);
    let new_number = |x: f64| !question_numbers.iter().any(|&q| close(x, q, 1e-9));
    let said_number = |x: f64| new_number(x) && answer_numbers.iter().any(|&a| close(x, a, ROUNDING));
    let said_text = |text: &str| {
        let text = loose(text);
        !text.is_empty() && !question.contains(&text) && answer.contains(&text)
    };
    let mut missing = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let content = loose(result.content);
        let used_later = results[i + 1..].iter().filter_map(|r| r.call).any(|call| {
            let mut values = Vec::new();
            call.args.values().for_each(|v| collect_leaves(v, &mut values));
            values.iter().filter_map(|v| v.as_str()).any(|v| {
                let v = loose(v);
                v.chars().count() >= 3 && !question.contains(&v) && content.contains(&v)
            })
        });
        // The same file taken again by a later call (read, then analyzed or converted):
        // the later result is the answer, the read a step.
        let file_again = result.call.is_some_and(|made| {
            let files = file_arguments(made);
            results[i + 1..].iter().filter_map(|r| r.call).any(|later| file_arguments(later).iter().any(|f| files.contains(f)))
        });
        if result.failed || used_later || file_again {
            continue;
        }
        let value = serde_json::from_str::<Value>(result.content).unwrap_or_else(|_| Value::String(result.content.to_string()));
        // What the tool gave, inside the `{"status": ..., "output": ...}` every result has.
        let output = value.get("output").unwrap_or(&value);
        let mut leaves = Vec::new();
        collect_leaves(output, &mut leaves);
        let reflected = leaves.iter().any(|leaf| match leaf {
            Value::Number(n) => n.as_f64().is_some_and(said_number),
            Value::String(s) => {
                (s.chars().count() <= SHORT_VALUE_CHARS && said_text(s))
                    || digits_written(&normalized(s)).into_iter().any(said_number)
                    || runs(s).any(|run| said_text(&run))
            }
            _ => false,
        });
        if !reflected {
            missing.push(i);
        }
    }
    missing
}

/// The string arguments of `call` shaped like a file path (`data/员工.csv`, `notes.md`).
fn file_arguments(call: &ToolCall) -> Vec<String> {
    let mut values = Vec::new();
    call.args.values().for_each(|v| collect_leaves(v, &mut values));
    values
        .into_iter()
        .filter_map(Value::as_str)
        .filter(|v| !v.contains(char::is_whitespace) && v.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric())))
        .map(str::to_string)
        .collect()
}

/// `text` as values are compared: [`normalized`], and `_` taken for a blank (`on_time`).
fn loose(text: &str) -> String {
    normalized(text).replace('_', "")
}

/// `text` with each sentence that repeats an earlier one left out (a small model's greedy
/// answer can loop on one sentence to its token limit), trimmed.
fn without_repeats(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::new();
    for sentence in text.split_inclusive(['.', '。', '!', '！', '?', '？', '\n']) {
        if seen.insert(sentence.trim().to_string()) || sentence.trim().is_empty() {
            out.push_str(sentence);
        }
    }
    out.trim().to_string()
}

/// Strings up to this long are also looked for whole (longer ones only by their numbers and words).
const SHORT_VALUE_CHARS: usize = 60;

/// How far a number in an answer may be from the result's and still be it (rounded).
const ROUNDING: f64 = 0.006;

fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * a.abs().max(b.abs()).max(1e-9)
}

/// What of a long text an answer may quote: its words of six or more letters (shorter
/// ones are as likely the answer's own), and each run of four Han characters.
fn runs(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).flat_map(|word| {
        let chars: Vec<char> = word.chars().collect();
        let han = chars.iter().any(|c| is_han(*c));
        let windows: Vec<String> = if han {
            chars.windows(4).filter(|w| w.iter().all(|c| is_han(*c))).map(|w| w.iter().collect()).collect()
        } else if chars.len() >= 6 && chars.iter().any(|c| c.is_alphabetic()) {
            vec![word.to_string()]
        } else {
            Vec::new()
        };
        windows
    })
}

fn is_han(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
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
        assert_eq!(results.iter().map(|r| r.name).collect::<Vec<_>>(), ["file_reader", "calculator"]);
        let prompt = messages_text(&super::messages(question, &results));
        assert!(prompt.contains("[1] file_reader") && prompt.contains("144") && prompt.ends_with("Question: 读一下 docs/a.md，再算 12*12\nAnswer in Chinese, naming the exact values from the results:"), "{prompt}");
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
        let prompt = messages_text(&messages("q", &[result("file_reader", &long)]));
        assert!(prompt.len() < MAX_RESULT_CHARS + 500 && prompt.contains("x ..."), "{}", prompt.len());
    }

    fn result<'a>(name: &'a str, content: &'a str) -> Called<'a> {
        Called { name, call: None, content, failed: false }
    }

    #[test]
    fn failed_calls_and_results_a_later_call_used_are_steps_not_answers() {
        let search: ToolCall = serde_json::from_value(json!({"id": "call_001", "name": "local_file_search", "args": {"query": "banana"}})).unwrap();
        let read: ToolCall = serde_json::from_value(json!({"id": "call_001", "name": "file_reader", "args": {"path": "notes/recipes/banana.md"}})).unwrap();
        let calc: ToolCall = serde_json::from_value(json!({"id": "call_002", "name": "calculator", "args": {"expression": "2 +"}})).unwrap();
        let messages = vec![
            Message::user("Find my banana bread recipe: how hot is the oven?"),
            Message::Assistant(AiMessage::calls(vec![search.clone()])),
            Message::Tool(ToolMessage::success(&search, json!({"matches": [{"path": "notes/recipes/banana.md"}]}))),
            Message::Assistant(AiMessage::calls(vec![read.clone(), calc.clone()])),
            Message::Tool(ToolMessage::success(&read, json!({"content": "Bake at 175°C for 55 minutes."}))),
            Message::Tool(ToolMessage::error(&calc, "parse error")),
        ];
        let (question, results) = results_for_question(&messages).unwrap();
        assert_eq!(results[1].call, Some(&read), "the latest call of the id");
        assert!(results[2].failed && !results[1].failed);
        assert!(unreflected("It bakes at 175°C for 55 minutes.", question, &results).is_empty());
        assert_eq!(unreflected("I found your recipe.", question, &results), [1]);

        // A file read, then taken again by another tool: the read is a step.
        let table: ToolCall = serde_json::from_value(json!({"id": "call_002", "name": "table_analyzer", "args": {"path": "data/员工.csv"}})).unwrap();
        let read: ToolCall = serde_json::from_value(json!({"id": "call_001", "name": "file_reader", "args": {"path": "data/员工.csv"}})).unwrap();
        let messages = vec![
            Message::user("data/员工.csv 里一共有几名员工？"),
            Message::Assistant(AiMessage::calls(vec![read.clone()])),
            Message::Tool(ToolMessage::success(&read, json!({"content": "姓名,工龄\n张伟,5\n", "total_chars": 151}))),
            Message::Assistant(AiMessage::calls(vec![table.clone()])),
            Message::Tool(ToolMessage::success(&table, json!({"row_count": 8}))),
        ];
        let (question, results) = results_for_question(&messages).unwrap();
        assert!(unreflected("一共有 8 名员工。", question, &results).is_empty());
        assert_eq!(unreflected("我不知道。", question, &results), [1]);
        assert_eq!(file_arguments(&read), ["data/员工.csv"]);
        assert!(file_arguments(&serde_json::from_value(json!({"id": "c", "name": "calculator", "args": {"expression": "3.5 * 2"}})).unwrap()).is_empty());
    }

    #[test]
    fn a_chinese_question_is_answered_in_chinese() {
        let results = [result("calculator", r#"{"status":"success","output":{"result":56}}"#)];
        let asked = messages_text(&messages("(3 + 5) * 7 等于多少？", &results));
        assert!(asked.ends_with("Question: (3 + 5) * 7 等于多少？\nAnswer in Chinese, naming the exact values from the results:"), "{asked}");
        assert!(messages_text(&part_messages("(3 + 5) * 7 等于多少？", &results[0])).ends_with("Say in Chinese what this result tells, with its exact values:"));
        assert!(messages_text(&messages("What is (3 + 5) * 7?", &results)).ends_with("Question: What is (3 + 5) * 7?\nAnswer:"));
        // The language is the question's own words', not the files' it names.
        assert!(messages_text(&messages("How many rows are in data/员工.csv?", &results)).ends_with("Answer:"));
        assert!(messages_text(&part_messages("What is (3 + 5) * 7?", &results[0])).ends_with("Say what this result tells, with its exact values:"));
    }

    #[test]
    fn a_looping_answer_keeps_each_sentence_once() {
        assert_eq!(without_repeats(" Both are on time. It leaves at 13:10. Both are on time. It leaves at 13:10. Both"), "Both are on time. It leaves at 13:10. Both");
        assert_eq!(without_repeats("上海小雨。上海小雨。18 度。"), "上海小雨。18 度。");
    }

    #[test]
    fn a_result_the_answer_says_nothing_of_is_found() {
        let weather = |city: &str, t: i64, sky: &str| json!({"status": "success", "output": {"city": city, "temperature": t, "condition": sky}}).to_string();
        let (beijing, shanghai) = (weather("北京", 22, "晴"), weather("上海", 18, "小雨"));
        let results = [result("weather.current", &beijing), result("weather.current", &shanghai)];
        let question = "北京和上海现在天气怎么样？";
        // The city is the question's own word: naming it says nothing of its result.
        assert_eq!(unreflected("北京和上海现在天气晴朗，温度22°C。", question, &results), [1]);
        assert!(unreflected("北京晴，22°C；上海小雨，18°C。", question, &results).is_empty());
        assert_eq!(unreflected("I could not tell.", question, &results), [0, 1]);

        // A number rounded as answers do; the expression the question wrote is no value.
        let calc = json!({"status": "success", "output": {"expression": "12 * 12", "result": 144.0}}).to_string();
        let loan = json!({"status": "success", "output": {"monthly_payment": 2424.0124}}).to_string();
        let results = [result("calculator", &calc), result("loan.monthly_payment", &loan)];
        assert_eq!(unreflected("You pay $2,424.01 a month; 12 * 12 is what you asked.", "compute 12 * 12 and my loan", &results), [0]);

        // A long text: a word of it or four Han characters of it in a row.
        let glossary = json!({"status": "success", "output": {"path": "docs/glossary.md", "content": "Canary release: shipping a new version to a small slice of users first.\n灰度发布：新版本先向 5% 的用户开放。"}}).to_string();
        let results = [result("file_reader", &glossary), result("calculator", &calc)];
        assert_eq!(unreflected("It means shipping to a few users first.", "What is a canary release? And 12*12?", &results), [1]);
        assert_eq!(unreflected("意思是新版本先向少数用户开放；12*12 = 144。", "灰度发布是什么？再算 12*12", &results), Vec::<usize>::new());
        assert_eq!(unreflected("It is a way to ship; 144.", "What is a canary release? And 12*12?", &results), [0]);
        // `on_time` is said as "on time".
        let flight = json!({"status": "success", "output": {"flight": "HU7601", "status": "on_time"}}).to_string();
        let results = [result("flights.status", &flight), result("calculator", &calc)];
        assert_eq!(unreflected("HU7601 is on time; 144.", "HU7601? 12*12?", &results), Vec::<usize>::new());
    }

    /// `write` with the generations' texts given in turn; the prompts asked come back too.
    fn written(question: &str, results: &[Called<'_>], texts: &[&str]) -> (Decision, Vec<String>) {
        use crate::protocol::{Decoding, DecisionReport, Phase, ToolCalling};
        let report = DecisionReport::new("qwen-0.5b", Phase::React, ToolCalling::PromptJson, Some(Decoding::Constrained));
        let mut decided = Decision { ai: AiMessage::answer("own"), raw_output: String::new(), prompt: String::new(), plan: None, report };
        let mut asked = Vec::new();
        let mut texts = texts.iter();
        write(&mut decided, question, results, &mut |_| {}, |messages, _| {
            asked.push(messages_text(&messages));
            Ok(Written { text: texts.next().unwrap().to_string(), stats: DecisionStats::default(), warnings: Vec::new() })
        })
        .unwrap();
        (decided, asked)
    }

    #[test]
    fn an_answer_that_tells_nothing_of_its_one_result_is_written_from_the_result_alone() {
        let calc = json!({"status": "success", "output": {"expression": "(15 + 27) * 4", "result": 168}}).to_string();
        let results = [result("calculator", &calc)];
        let question = "好的。另外帮我算一下 (15 + 27) * 4";
        let (decided, asked) = written(question, &results, &["好的。另外帮我算一下 (15 + 27) * 4。", "(15 + 27) * 4 的结果是 168。"]);
        assert_eq!(decided.ai.content, "(15 + 27) * 4 的结果是 168。");
        assert!(asked[1].ends_with("Say in Chinese what this result tells, with its exact values:"), "{asked:?}");
        assert!(decided.raw_output.contains("好的。另外帮我算一下") && decided.raw_output.contains("168"), "{}", decided.raw_output);
        // An answer that tells it is kept, with no second generation; so is the first answer
        // when the second tells nothing either.
        let (decided, asked) = written(question, &results, &["结果是 168。"]);
        assert_eq!((decided.ai.content.as_str(), asked.len()), ("结果是 168。", 1));
        let (decided, asked) = written(question, &results, &["好的。", "我不知道。"]);
        assert_eq!((decided.ai.content.as_str(), asked.len()), ("好的。", 2));
    }

    #[test]
    fn a_results_fields_are_shown_one_per_line_without_json() {
        let match_result = json!({"status": "success", "output": {"team": "Arsenal", "opponent": "West Ham United", "score": "0-1", "result": "loss"}}).to_string();
        assert_eq!(facts(&match_result).unwrap(), "team: Arsenal\nopponent: West Ham United\nscore: 0-1\nresult: loss");
        let zones = json!({"status": "success", "output": {"from": {"datetime": "2025-04-10 09:00", "timezone": "Asia/Shanghai"}, "datetime": "2025-04-09 18:00", "tags": ["a", 2]}}).to_string();
        assert_eq!(facts(&zones).unwrap(), "from.datetime: 2025-04-10 09:00\nfrom.timezone: Asia/Shanghai\ndatetime: 2025-04-09 18:00\ntags: a, 2");
        let events = json!({"status": "success", "output": {"events": [{"id": "evt_5531", "date": "2025-06-11"}, {"id": "evt_7"}]}}).to_string();
        assert_eq!(facts(&events).unwrap(), "events.1.id: evt_5531\nevents.1.date: 2025-06-11\nevents.2.id: evt_7");
        // A plain object is shown the same way; text, a failure and a bare value as written.
        assert_eq!(facts(r#"{"row_count": 8}"#).unwrap(), "row_count: 8");
        let file = json!({"status": "success", "output": {"path": "docs/a.md", "content": "# Access\nAsk Priya."}}).to_string();
        assert_eq!(facts(&file).unwrap(), "path: docs/a.md\ncontent: \"# Access\\nAsk Priya.\"");
        assert_eq!(facts("灰度发布：先给 5% 的用户"), None);
        assert_eq!(facts(r#"{"status":"error","error":"no such file"}"#), None);
        assert_eq!(facts(r#"{"status":"success","output":144}"#), None);
        let prompt = messages_text(&messages("How did Arsenal do?", &[result("sports.match_result", &match_result)]));
        assert!(prompt.contains("[1] sports.match_result:\nteam: Arsenal\n") && !prompt.contains("\"loss\""), "{prompt}");
        let prompt = messages_text(&messages("q", &[result("calculator", r#"{"status":"success","output":144}"#)]));
        assert!(prompt.contains(r#"{"status":"success","output":144}"#), "{prompt}");
    }

    fn messages_text(messages: &[Value]) -> String {
        messages.iter().map(|m| m["content"].as_str().unwrap_or_default()).collect::<Vec<_>>().join("\n")
    }
}
