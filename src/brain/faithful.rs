//! Argument values kept as the request wrote them: small models copy an expression from
//! the question but drop its brackets (`(17 + 25) * 3 - 4` becomes `17 + 25 * 3 - 4`,
//! another number). When a string argument is, but for brackets and spaces, a stretch of
//! the user's own text that has brackets, the user's text is put back; so are a code
//! written whole (`SKU-55120` for `55120`, [`restore_codes`]) and Chinese full-width marks.
//!
//! They also fill optional parameters nobody asked for: an exchange for a stock quote, a
//! return date for a one-way flight, `cc: []`, a brightness of 50. An optional argument
//! whose value the conversation never writes ([`drop_unstated_optional`]) is left out.

use serde_json::{Map, Value};

use super::next_step::{date_or_time, unwritten};
use crate::protocol::{Message, ToolCall};
use crate::text::{is_cjk, normalized};
use crate::tools::spec::ToolSpec;

const BRACKETS: [char; 6] = ['(', ')', '[', ']', '（', '）'];

/// Restores dropped brackets in `calls`' string arguments from `question`; returns one line
/// per value changed (`tool: param: old -> new`).
pub fn restore_brackets(calls: &mut [ToolCall], question: &str) -> Vec<String> {
    let mut changed = Vec::new();
    if !question.contains(BRACKETS) {
        return changed;
    }
    for call in calls.iter_mut() {
        for (param, value) in call.args.iter_mut() {
            let Some(text) = value.as_str() else { continue };
            if text.contains(BRACKETS) {
                continue;
            }
            if let Some(original) = source_span(question, text) {
                changed.push(format!("{}: {param}: {text:?} -> {original:?}", call.name));
                *value = serde_json::Value::String(original);
            }
        }
    }
    changed
}

/// Restores a code the request writes whole where a call holds only its figures: asked to
/// return "product SKU-55120", the 0.5B wrote `product_id: "55120"`. A string argument with
/// a figure that the question writes only inside one longer code, joined to it by `-` or
/// `_` to parts with letters (`SKU-55120`, `55120_EU`; not the year of `2024-03-01`), gets
/// that code. Returns one line per value changed (`tool: param: old -> new`).
pub fn restore_codes(calls: &mut [ToolCall], question: &str) -> Vec<String> {
    let mut changed = Vec::new();
    let tokens: Vec<&str> = question.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).filter(|t| !t.is_empty()).collect();
    for call in calls.iter_mut() {
        for (param, value) in call.args.iter_mut() {
            let Some(text) = value.as_str() else { continue };
            if text.chars().count() < 3 || !text.chars().any(|c| c.is_ascii_digit()) || tokens.contains(&text) {
                continue;
            }
            let mut codes: Vec<&str> = tokens
                .iter()
                .copied()
                .filter(|token| {
                    let rest = token.strip_suffix(text).and_then(|r| r.strip_suffix(['-', '_'])).or_else(|| token.strip_prefix(text).and_then(|r| r.strip_prefix(['-', '_'])));
                    rest.is_some_and(|r| r.chars().any(|c| c.is_ascii_alphabetic()))
                })
                .collect();
            codes.sort_unstable();
            codes.dedup();
            if let [code] = codes[..] {
                changed.push(format!("{}: {param}: {text:?} -> {code:?}", call.name));
                *value = Value::String(code.to_string());
            }
        }
    }
    changed
}

/// Full-width punctuation of Chinese text and the ASCII marks small models write for it.
const WIDE_MARKS: [(char, char); 8] = [('。', '.'), ('，', ','), ('！', '!'), ('？', '?'), ('：', ':'), ('；', ';'), ('（', '('), ('）', ')')];

/// Restores the request's full-width punctuation in `calls`' string arguments: asked to
/// send "会议改到下周一上午10点。", the 0.5B wrote `会议改到下周一上午10点.`. A string
/// argument with Chinese text and an ASCII mark that reads, mark for mark, as a stretch of
/// `question` where that has the full-width one gets the question's stretch. Returns one
/// line per value changed (`tool: param: old -> new`).
pub fn restore_wide_punctuation(calls: &mut [ToolCall], question: &str) -> Vec<String> {
    let mut changed = Vec::new();
    let narrow = |c: char| WIDE_MARKS.iter().find(|(wide, _)| *wide == c).map_or(c, |&(_, ascii)| ascii);
    let asked: Vec<char> = question.chars().collect();
    let folded: Vec<char> = asked.iter().map(|&c| narrow(c)).collect();
    for call in calls.iter_mut() {
        for (param, value) in call.args.iter_mut() {
            let Some(text) = value.as_str() else { continue };
            let wanted: Vec<char> = text.chars().collect();
            let has_mark = wanted.iter().any(|c| WIDE_MARKS.iter().any(|(_, ascii)| ascii == c));
            if wanted.len() < 4 || !has_mark || !wanted.iter().any(|&c| is_cjk(c)) {
                continue;
            }
            let Some(start) = folded.windows(wanted.len()).position(|w| w == wanted.as_slice()) else { continue };
            let original: String = asked[start..start + wanted.len()].iter().collect();
            if original != text {
                changed.push(format!("{}: {param}: {text:?} -> {original:?}", call.name));
                *value = Value::String(original);
            }
        }
    }
    changed
}

/// Puts the request's own expression in place of one nobody wrote: a small model copies the
/// prompt's example (`2+2`) as the calculation of "read docs/agent_intro.txt and compute
/// 12*12", as its plan step and as its call; it computes a piece of the user's expression
/// (`15 + 27` for `(15 + 27) * 4`) or the right figures the wrong way (`15 / 240` for "15%
/// of 240"). A string argument that is arithmetic alone (figures, operators, brackets) is
/// replaced by the calculation `question` asks for ([`wanted_expression`], when it asks for
/// exactly one) when none of its figures `conversation` writes, or when its figures are
/// some of that calculation's and it is not that calculation. Returns one line per value
/// changed (`tool: param: old -> new`).
pub fn restore_expression(calls: &mut [ToolCall], question: &str, conversation: &str) -> Vec<String> {
    let mut changed = Vec::new();
    let Some(wanted) = wanted_expression(question) else { return changed };
    let written = figures(conversation);
    let parts = figures(&wanted);
    for call in calls.iter_mut() {
        for (param, value) in call.args.iter_mut() {
            let Some(text) = value.as_str() else { continue };
            if expressions_in(text) != [text.trim()] || normalized(text) == normalized(&wanted) {
                continue;
            }
            let nobody_wrote = !figures(text).iter().any(|f| written.contains(f));
            if !nobody_wrote && !some_of(&figures(text), &parts) {
                continue;
            }
            changed.push(format!("{}: {param}: {text:?} -> {wanted:?}", call.name));
            *value = Value::String(wanted.clone());
        }
    }
    changed
}

/// Whether every figure of `part` is one of `whole`'s, each used no more often.
fn some_of(part: &[u64], whole: &[u64]) -> bool {
    let mut left = whole.to_vec();
    part.iter().all(|f| left.iter().position(|w| w == f).map(|i| left.swap_remove(i)).is_some())
}

/// The one calculation `question` asks for: the arithmetic it writes ([`expressions_in`]),
/// or a percentage of a number in words (`15% of 240`, `240 的 15%`), read as
/// `15 * 240 / 100`. `None` when it asks for none, or for more than one.
pub fn wanted_expression(question: &str) -> Option<String> {
    let mut found = expressions_in(question);
    found.extend(percentages_of(question));
    <[String; 1]>::try_from(found).ok().map(|[one]| one)
}

/// `N% of M` (`N percent of M`, a currency sign before `M` allowed) and `M 的 N%` in `text`,
/// each as `N * M / 100`.
fn percentages_of(text: &str) -> Vec<String> {
    let text = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        let before = text[..at].chars().next_back();
        if !c.is_ascii_digit() || before.is_some_and(|b| b.is_ascii_digit() || b == '.' || b == ',') {
            at += c.len_utf8();
            continue;
        }
        let (first, len) = number_at(&text[at..]);
        let after = text[at + len..].trim_start();
        let of = after.strip_prefix('%').or_else(|| after.strip_prefix("percent")).and_then(|r| r.trim_start().strip_prefix("of "));
        if let Some(base) = of.map(|r| r.trim_start().trim_start_matches(['$', '€', '£', '¥'])).filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) {
            out.push(format!("{first} * {} / 100", number_at(base).0));
        } else if let Some(share) = after.strip_prefix('的').map(str::trim_start).filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) {
            let (percent, len) = number_at(share);
            if share[len..].trim_start().starts_with('%') {
                out.push(format!("{percent} * {first} / 100"));
            }
        }
        at += len;
    }
    out
}

/// The number `text` starts with (figures, thousands commas, a decimal point), without its
/// commas, and how many bytes it takes.
fn number_at(text: &str) -> (String, usize) {
    let bytes = text.as_bytes();
    let mut len = 0;
    while len < bytes.len() {
        let b = bytes[len];
        let figure_follows = bytes.get(len + 1).is_some_and(u8::is_ascii_digit);
        if b.is_ascii_digit() || ((b == b',' || b == b'.') && len > 0 && figure_follows) {
            len += 1;
        } else {
            break;
        }
    }
    (text[..len].replace(',', ""), len)
}

/// Adds the calculation the question asks for ([`wanted_expression`]) to a decision that
/// makes other calls but none that computes it: asked to "look up what "canary release"
/// means in docs/glossary.md, and compute 12*12", the 0.5B read the glossary only. The call
/// goes to the one tool that takes an expression. Nothing is added when the decision makes
/// no call (it answers), when a call of the decision or of `earlier` (this turn's) carries
/// every figure of the calculation, or when no tool, or more than one, takes an expression.
/// Returns the call added (`tool: param = expression`).
pub fn add_wanted_expression(calls: &mut Vec<ToolCall>, tools: &[ToolSpec], question: &str, earlier: &[ToolCall]) -> Option<String> {
    if calls.is_empty() {
        return None;
    }
    let wanted = wanted_expression(question)?;
    let Ok([(tool, param)]) = <[_; 1]>::try_from(tools.iter().filter_map(|t| Some((t, expression_param(t)?))).collect::<Vec<_>>()) else {
        return None;
    };
    let needed = figures(&wanted);
    let carries = |call: &ToolCall| {
        let args = Value::Object(call.args.clone());
        let mut leaves = Vec::new();
        super::next_step::collect_leaves(&args, &mut leaves);
        let carried: Vec<u64> = leaves.iter().flat_map(|leaf| figures(&leaf.as_str().map_or_else(|| leaf.to_string(), str::to_string))).collect();
        needed.iter().all(|f| carried.contains(f))
    };
    if calls.iter().chain(earlier).any(carries) {
        return None;
    }
    let id = (calls.len() + 1..).map(|n| format!("call_{n:03}")).find(|id| calls.iter().all(|c| &c.id != id))?;
    let args = Map::from_iter([(param.to_string(), Value::String(wanted.clone()))]);
    calls.push(ToolCall { id, name: tool.name.clone(), args });
    Some(format!("{}: {param} = {wanted:?}", tool.name))
}

/// Adds to `calls` an optional enum argument a call left out when `question` names exactly
/// one of the parameter's choices other than its default: in English as a word of its own
/// ("in a formal register" is `formality: "formal"`, "Maria Gonzalez's phone number" is
/// `field: "phone"`: the 0.5B left both out), in another language by a name
/// [`super::choice_names`] knows for it ("45 元人民币" is `currency: "CNY"`). A choice another
/// argument of the call already holds is not added (`query: "sports"` from "the sports
/// department": the copy [`drop_unstated_optional`] leaves out). Returns one line per
/// argument added (`tool: param = value`).
pub fn add_named_choices(calls: &mut [ToolCall], tools: &[ToolSpec], question: &str) -> Vec<String> {
    let mut added = Vec::new();
    let english = question.is_ascii();
    let words = words_of(question);
    let request = super::choice_names::Request::new(question);
    for call in calls.iter_mut() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else { continue };
        for param in tool.params() {
            if call.args.contains_key(&param.name) || tool.required().contains(&param.name) {
                continue;
            }
            let default = param.schema.raw.get("default");
            let choices: Vec<&str> = param.schema.enum_values.iter().flatten().filter_map(Value::as_str).collect();
            let named_here = if english { Vec::new() } else { request.named(&choices) };
            let named: Vec<&str> = choices
                .iter()
                .copied()
                .filter(|v| if english { v.len() >= 3 && names_choice(&words, v, &choices) } else { named_here.contains(v) })
                .collect();
            // The default named beside another: which one this call wants is not clear
            // ("记一笔 12.5 美元的支出，并把 12.5 美元换成欧元").
            let [choice] = named[..] else { continue };
            if default.and_then(Value::as_str) == Some(choice) {
                continue;
            }
            let held = call.args.values().any(|v| v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(choice)));
            if held {
                continue;
            }
            added.push(format!("{}: {} = {choice:?}", call.name, param.name));
            call.args.insert(param.name.clone(), Value::String(choice.to_string()));
        }
    }
    added
}

/// The words of `text`, lowercased, as an enum's choice is named in it: letters, figures
/// and `_ . + -` inside a word (`price_asc`, `gpt-4`), a sentence's `.` at its end dropped.
pub(crate) fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || "_.+-".contains(c)))
        .map(|w| w.trim_matches(|c: char| ".+-".contains(c)).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `words` ([`words_of`]) name `choice` as a word of its own, or its plural ("the
/// best museums" names `museum`), or as the head of a hyphenated word ("an indoor-only
/// dog" names `indoor`; "non-smoking" names no `non`, and names `smoking` only as a word).
pub(crate) fn names_word(words: &[String], choice: &str) -> bool {
    let choice = choice.to_lowercase();
    let names = |w: &str| w == choice || w.strip_suffix('s').is_some_and(|stem| stem == choice || stem.strip_suffix('e') == Some(choice.as_str()));
    let head = |w: &str| w.split_once('-').is_some_and(|(head, _)| !NEGATIONS.contains(&head) && !choice.contains('-') && names(head));
    words.iter().any(|w| names(w) || head(w))
}

/// Whether `words` ([`words_of`]) name `choice`, one of `choices`: as a word of its own
/// ([`names_word`]), or, for a choice of several parts (`event_postponed`), by a part of
/// five letters or more that no other choice has ("the festival was postponed").
pub(crate) fn names_choice(words: &[String], choice: &str, choices: &[&str]) -> bool {
    let parts = |c: &str| c.to_lowercase().split(['_', '-']).map(str::to_string).collect::<Vec<_>>();
    let own = parts(choice);
    names_word(words, choice)
        || (own.len() >= 2
            && own.iter().any(|part| part.len() >= 5 && names_word(words, part) && !choices.iter().any(|other| !other.eq_ignore_ascii_case(choice) && parts(other).contains(part))))
}

/// Heads of hyphenated words that deny what follows them.
const NEGATIONS: &[&str] = &["non", "no", "not", "anti", "un", "without"];

/// The parameter of `tool` that takes an expression: a string parameter named
/// `expression`, `expr`, `formula` or `equation`.
fn expression_param(tool: &ToolSpec) -> Option<&str> {
    tool.params()
        .iter()
        .find(|p| matches!(p.name.to_ascii_lowercase().as_str(), "expression" | "expr" | "formula" | "equation") && p.schema.kinds.iter().all(|k| k.as_str() == "string"))
        .map(|p| p.name.as_str())
}

/// The arithmetic `text` writes: stretches of figures, operators and brackets with two
/// numbers or more joined by an operator (`12*12`, `(17 + 25) * 3 - 4`), dates aside.
fn expressions_in(text: &str) -> Vec<String> {
    let arithmetic = |c: char| c.is_ascii_digit() || c == ' ' || ".+-*/^%×÷".contains(c) || BRACKETS.contains(&c);
    let mut out = Vec::new();
    for run in text.split(|c: char| !arithmetic(c)) {
        // A leading minus is a sign; a trailing `%` a percentage: both stay.
        let run = run.trim_start_matches(|c: char| c == ' ' || ".+*/^×÷".contains(c));
        let run = run.trim_end_matches(|c: char| c == ' ' || ".+-*/^×÷".contains(c));
        let numbers = run.split(|c: char| !c.is_ascii_digit() && c != '.').filter(|n| n.chars().any(|c| c.is_ascii_digit())).count();
        let operator = run.trim_start_matches(['-', ' ']).contains(['+', '-', '*', '/', '^', '×', '÷']);
        // 2025-03-01, 08/16/2022: a date, not a subtraction.
        let date = !run.contains(' ') && (run.matches('-').count() == 2 || run.matches('/').count() == 2);
        if numbers >= 2 && operator && !date && balanced(run) {
            out.push(run.to_string());
        }
    }
    out
}

/// Whether the latest user message asks for a calculation ([`wanted_expression`] finds
/// one or more) and one of `tools` takes an expression.
pub fn user_writes_an_expression(tools: &[ToolSpec], messages: &[Message]) -> bool {
    let asks = |q: &str| !expressions_in(q).is_empty() || !percentages_of(q).is_empty();
    super::last_question(messages).is_some_and(asks) && tools.iter().any(|t| expression_param(t).is_some())
}

/// Leaves out of `calls` each optional argument (not in its tool's `required`) that states
/// nothing (`""`, `[]`, `{}`) or whose value `conversation` (the text of the user's, the
/// tools' and the system's messages) does not write ([`unwritten`]: a boolean is kept, and
/// an enum's value unless an English conversation never names it, as users of other
/// languages name choices in their own words; a date or time needs its figures written),
/// that lists every choice of an enum, or that copies another argument's
/// value the conversation writes only once. Inside an object argument the same holds for
/// its keys. Returns one line per argument left out (`tool: param = value`).
pub fn drop_unstated_optional(calls: &mut [ToolCall], tools: &[ToolSpec], conversation: &str) -> Vec<String> {
    let stated = Stated { text: conversation, haystack: normalized(conversation), numbers: super::stated_times::numbers_stated(&normalized(conversation)) };
    let mut dropped = Vec::new();
    for call in calls.iter_mut() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else { continue };
        stated.keep_stated(&mut call.args, tool.parameters(), &call.name, &mut dropped);
    }
    dropped
}

/// What the conversation states, looked up three ways.
struct Stated<'a> {
    text: &'a str,
    haystack: String,
    numbers: Vec<f64>,
}

impl Stated<'_> {
    /// Leaves the unstated optional keys out of `args` (an object whose schema is `schema`),
    /// and out of the objects inside it; an object left empty goes too. `path` names it in
    /// the lines pushed to `dropped`.
    fn keep_stated(&self, args: &mut Map<String, Value>, schema: &Value, path: &str, dropped: &mut Vec<String>) {
        let required: Vec<&str> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let properties = schema.get("properties");
        // A value written once that fills two parameters (the departure date as the return
        // date too, the file to convert as the file to write) belongs to the first of them,
        // required ones first: each value may fill as many as the conversation writes it
        // (at least one), and the optional parameters past that hold copies.
        let mut budget: Vec<(String, usize)> = Vec::new();
        let haystack = &self.haystack;
        let mut spend = |value: &str| {
            let value = normalized(value);
            if value.chars().count() < 2 {
                return true;
            }
            let at = budget.iter().position(|(v, _)| *v == value).unwrap_or_else(|| {
                let written = haystack.matches(value.as_str()).count().max(1);
                budget.push((value, written));
                budget.len() - 1
            });
            let left = &mut budget[at].1;
            let some = *left > 0;
            *left = left.saturating_sub(1);
            some
        };
        for (param, value) in args.iter() {
            if let (true, Some(text)) = (required.contains(&param.as_str()), value.as_str()) {
                spend(text);
            }
        }
        args.retain(|param, value| {
            let spec = properties.and_then(|p| p.get(param));
            let here = format!("{path}{}{param}", if path.contains(':') { "." } else { ": " });
            if let (Value::Object(inner), Some(spec)) = (&mut *value, spec) {
                if spec.get("properties").is_some() {
                    self.keep_stated(inner, spec, &here, dropped);
                }
            }
            if required.contains(&param.as_str()) {
                return true;
            }
            let empty = match value {
                Value::String(s) => s.trim().is_empty(),
                Value::Array(items) => items.is_empty(),
                Value::Object(map) => map.is_empty(),
                _ => false,
            };
            let unstated = match value {
                Value::String(text) if !spend(text) => true,
                // A date or time passes `unwritten` in any notation; an optional one must
                // have its figures in the conversation (`08:00` for a train nobody timed).
                // A time the conversation states in other words counts as written:
                // "晚上八点" states `20:00`, "7:40 this evening" `19:40`.
                Value::String(text) if date_or_time(text) => !figures_written(&super::stated_times::without_stated_time(text, self.text), self.text),
                // Every choice of an enum, listed: the schema's list, not the user's.
                Value::Array(items) if spec.is_some_and(|s| every_choice(items, s)) => true,
                Value::String(text) if self.unnamed_choice(text, spec) => true,
                // An object's own keys were looked at above; one whose required keys
                // nobody wrote (`location: {"room": "your_room_name"}`) goes whole.
                Value::Object(inner) => spec.is_some_and(|s| self.required_unwritten(inner, s)),
                _ => unwritten(value, spec, &self.haystack, &self.numbers).is_some(),
            };
            if empty || unstated {
                dropped.push(format!("{here} = {value}"));
                return false;
            }
            true
        });
    }

    /// Whether a required key of the object `args` (its schema `schema`) holds a value the
    /// conversation does not write ([`unwritten`]).
    fn required_unwritten(&self, args: &Map<String, Value>, schema: &Value) -> bool {
        let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
        required.filter_map(|key| Some((key, args.get(key)?))).any(|(key, value)| {
            let spec = schema.get("properties").and_then(|p| p.get(key));
            unwritten(value, spec, &self.haystack, &self.numbers).is_some()
        })
    }

    /// Whether `value` is a choice of `spec`'s enum, not its default, that an English
    /// conversation (letters all ASCII) never names: `formality: "informal"`, `diet:
    /// "vegetarian"` for a question that says neither. In any other language the user names
    /// choices in their own words (`素食`), so they stay; so do codes of three letters or
    /// fewer (`es` for "Spanish", `CNY` for yuan). Blanks, `_` and `-` aside (`very_active`).
    fn unnamed_choice(&self, value: &str, spec: Option<&Value>) -> bool {
        let Some(spec) = spec else { return false };
        let choices: Vec<&str> = spec.get("enum").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let plain = |s: &str| normalized(s).replace(['_', '-'], "");
        choices.contains(&value)
            && spec.get("default").and_then(Value::as_str) != Some(value)
            && value.chars().count() > 3
            && self.text.chars().all(|c| c.is_ascii() || !c.is_alphabetic())
            && !plain(self.text).contains(&plain(value))
            && !names_choice(&words_of(self.text), value, &choices)
    }
}

/// Whether `items` are all the values (three or more) of the enum of `spec`'s items.
fn every_choice(items: &[Value], spec: &Value) -> bool {
    let Some(choices) = spec.get("items").and_then(|i| i.get("enum")).and_then(Value::as_array) else { return false };
    choices.len() >= 3 && choices.iter().all(|c| items.contains(c))
}

/// Whether every figure of `value` but zeros (`2025`, `4`, `12` of `2025-04-12`; `8` of
/// `08:00`) is a figure `text` writes, in any notation.
fn figures_written(value: &str, text: &str) -> bool {
    let written = figures(text);
    figures(value).iter().all(|f| *f == 0 || written.contains(f))
}

/// The runs of digits of `text`, as numbers.
fn figures(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit()).filter_map(|run| run.parse().ok()).collect()
}

/// The text of `messages` values may come from: what the system, the user and the tools
/// wrote, and the assistant's answers (not its calls' arguments).
pub fn stated_text(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        let part = match message {
            Message::System { content } | Message::User { content } => content,
            Message::Assistant(ai) => &ai.content,
            Message::Tool(result) => &result.content,
        };
        text.push_str(part);
        text.push('\n');
    }
    text
}

/// The stretch of `question` that reads as `value` when brackets and spaces are ignored on
/// both sides, if it has brackets (and `value` has more than a few characters).
fn source_span(question: &str, value: &str) -> Option<String> {
    let wanted: Vec<char> = value.chars().filter(|c| !c.is_whitespace()).collect();
    if wanted.len() < 3 {
        return None;
    }
    let chars: Vec<char> = question.chars().collect();
    let skip = |c: char| c.is_whitespace() || BRACKETS.contains(&c);
    for start in 0..chars.len() {
        if chars[start] != wanted[0] && !BRACKETS.contains(&chars[start]) {
            continue;
        }
        let (mut i, mut matched) = (start, 0);
        while i < chars.len() && matched < wanted.len() {
            if chars[i] == wanted[matched] {
                matched += 1;
            } else if !skip(chars[i]) {
                break;
            }
            i += 1;
        }
        if matched < wanted.len() {
            continue;
        }
        // Closing brackets right after the match belong to it.
        while i < chars.len() && matches!(chars[i], ')' | ']' | '）') {
            i += 1;
        }
        // The whole expression, not a piece of a longer one.
        let before = chars[..start].iter().rev().find(|c| !c.is_whitespace());
        let after = chars[i..].iter().find(|c| !c.is_whitespace());
        if before.is_some_and(|&c| continues(c)) || after.is_some_and(|&c| continues(c)) {
            continue;
        }
        let span: String = chars[start..i].iter().collect();
        let span = span.trim();
        // Only brackets inside the value were dropped; brackets around all of it are the
        // sentence's ("fly to Tokyo (NRT)"), not the value's.
        let inner = span.trim_start_matches(['(', '[', '（']).trim_end_matches([')', ']', '）']);
        if inner.contains(BRACKETS) && balanced(span) {
            return Some(span.to_string());
        }
    }
    None
}

/// A character that would carry an expression on past the span.
fn continues(c: char) -> bool {
    c.is_ascii_digit() || "+-*/^%×÷=.".contains(c)
}

fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' | '（' => depth += 1,
            ')' | ']' | '）' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(args: serde_json::Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "calculator".into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn chinese_text_gets_the_requests_full_width_marks_back() {
        let question = "给她发邮件，主题“周五会议改期”，内容“会议改到下周一上午10点。”";
        let mut calls = vec![ToolCall { id: "call_001".into(), name: "email.send".into(), args: json!({"subject": "周五会议改期", "body": "会议改到下周一上午10点."}).as_object().unwrap().clone() }];
        let changed = restore_wide_punctuation(&mut calls, question);
        assert_eq!(calls[0].args["body"], "会议改到下周一上午10点。");
        assert_eq!(changed, ["email.send: body: \"会议改到下周一上午10点.\" -> \"会议改到下周一上午10点。\""]);
        // English text, text the question does not hold, and the question's own marks stay.
        for (value, question) in [("Call me at 10.", "Text her: Call me at 10。"), ("明天见.", "跟他说后天见。"), ("3.14", "计算 3。14")] {
            let mut calls = vec![ToolCall { id: String::new(), name: "f".into(), args: json!({"a": value}).as_object().unwrap().clone() }];
            assert!(restore_wide_punctuation(&mut calls, question).is_empty(), "{value}");
            assert_eq!(calls[0].args["a"], value);
        }
    }

    #[test]
    fn dropped_brackets_come_back_from_the_question() {
        let mut calls = [call(json!({"expression": "17 + 25 * 3 - 4"}))];
        let changed = restore_brackets(&mut calls, "What is (17 + 25) * 3 - 4?");
        assert_eq!(calls[0].args["expression"], "(17 + 25) * 3 - 4");
        assert_eq!(changed, vec![r#"calculator: expression: "17 + 25 * 3 - 4" -> "(17 + 25) * 3 - 4""#]);

        let mut calls = [call(json!({"expression": "125 - 35 / 6 + 2^3"}))];
        restore_brackets(&mut calls, "帮我算一下 (125 - 35) / 6 + 2^3 等于多少？");
        assert_eq!(calls[0].args["expression"], "(125 - 35) / 6 + 2^3");

        let mut calls = [call(json!({"expression": "48/2+4"}))];
        restore_brackets(&mut calls, "What is 48 / (2 + 4)?");
        assert_eq!(calls[0].args["expression"], "48 / (2 + 4)");
    }

    #[test]
    fn values_that_differ_otherwise_or_keep_their_brackets_are_left_alone() {
        for (value, question) in [
            ("17 + 25 * 3", "What is (17 + 25) * 3 - 4?"),
            ("(17 + 25) * 3 - 4", "What is (17 + 25) * 3 - 4?"),
            ("3.14 * 5", "计算 3.14 * 5"),
            ("docs/agent_intro.txt", "读 docs/agent_intro.txt (the intro)"),
            ("ab", "(ab)"),
            ("NRT", "Find flights from Shanghai (PVG) to Tokyo (NRT) on 2025-03-01."),
            ("2 + 4", "What is 48 / (2 + 4)?"),
        ] {
            let mut calls = [call(json!({"expression": value, "n": 3}))];
            let changed = restore_brackets(&mut calls, question);
            assert!(changed.is_empty(), "{value} / {question}: {changed:?}");
            assert_eq!(calls[0].args["expression"], value);
        }
    }

    #[test]
    fn arithmetic_the_user_writes_for_a_tool_that_takes_an_expression() {
        let tool = |param: &str| ToolSpec::parse_all(&[json!({"name": "calc", "description": "", "parameters": {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]}})]).unwrap();
        let asked = |q: &str| vec![Message::user("Read docs/a.md"), Message::user(q)];
        assert!(user_writes_an_expression(&tool("expression"), &asked("What is (17 + 25) * 3 - 4?")));
        assert!(user_writes_an_expression(&tool("formula"), &asked("帮我算一下 (125 - 35) / 6 + 2^3 等于多少？")));
        assert!(!user_writes_an_expression(&tool("city"), &asked("What is (17 + 25) * 3 - 4?")), "no tool takes an expression");
        assert!(!user_writes_an_expression(&tool("expression"), &asked("Which step failed on 2024-05-02?")), "a date is not arithmetic");
        assert!(!user_writes_an_expression(&tool("expression"), &asked("What is the capital of Japan?")));
        assert!(user_writes_an_expression(&tool("expression"), &asked("Unrelated: what's 18% of 2450?")));
    }

    #[test]
    fn an_expression_nobody_wrote_gives_way_to_the_one_the_question_writes() {
        let question = "读取 docs/agent_intro.txt 并计算 12*12";
        let mut calls = [call(json!({"expression": "2+2"}))];
        let changed = restore_expression(&mut calls, question, question);
        assert_eq!(calls[0].args["expression"], "12*12");
        assert_eq!(changed, vec![r#"calculator: expression: "2+2" -> "12*12""#]);

        let question = "What is (17 + 25) * 3 - 4?";
        let mut calls = [call(json!({"expression": "2.5 * 6 + 8"}))];
        restore_expression(&mut calls, question, question);
        assert_eq!(calls[0].args["expression"], "(17 + 25) * 3 - 4");
    }

    #[test]
    fn expressions_with_stated_figures_words_and_unclear_questions_are_left_alone() {
        for (value, question, conversation) in [
            // The value uses a figure the conversation writes (from the question or a tool).
            ("0.15 * 240", "What is 15% of 240 + 10?", ""),
            ("7 * 24 - 3 * 24", "7 boxes of 24, less 3 boxes: 7*24 - 3*24?", ""),
            ("1200 * 0.2", "Take 20% of the total: 5 + 5", "total: 1200"),
            // Not arithmetic alone.
            ("2x^2", "Differentiate 3x^2 + 1 at 2 + 2", ""),
            ("docs/a.txt", "read docs/a.txt and compute 12*12", ""),
            ("42", "compute 12*12", ""),
            // No expression, or two, in the question.
            ("2+2", "How many days are in 2025?", ""),
            ("2+2", "compute 12*12 and 13*13", ""),
            ("2+2", "Book it for 2025-03-01", ""),
            ("2+2", "Book it for 08/16/2022", ""),
        ] {
            let conversation = format!("{question}\n{conversation}");
            let mut calls = [call(json!({"expression": value}))];
            let changed = restore_expression(&mut calls, question, &conversation);
            assert!(changed.is_empty(), "{value} / {question}: {changed:?}");
            assert_eq!(calls[0].args["expression"], value);
        }
        assert_eq!(expressions_in("计算 -5 + 3，再算 (125 - 35) / 6 + 2^3。"), ["-5 + 3", "(125 - 35) / 6 + 2^3"]);
        assert_eq!(expressions_in("15% of 240 is 36. Then 3 apples and 5 pears."), Vec::<String>::new());
    }

    #[test]
    fn a_piece_of_the_users_expression_or_its_figures_used_otherwise_give_way_to_it() {
        for (value, question, wanted) in [
            ("15 + 27", "好的。另外帮我算一下 (15 + 27) * 4", "(15 + 27) * 4"),
            ("15 / 240", "Thanks! Different question: what is 15% of 240?", "15 * 240 / 100"),
            ("18 / 2450", "What's 18 percent of $2,450?", "18 * 2450 / 100"),
            ("2450 * 18", "2450 的 18% 是多少？", "18 * 2450 / 100"),
            ("12 + 12", "compute 12*12", "12*12"),
        ] {
            let mut calls = [call(json!({"expression": value}))];
            let changed = restore_expression(&mut calls, question, question);
            assert_eq!(calls[0].args["expression"], wanted, "{value} / {question}");
            assert_eq!(changed.len(), 1);
        }
        for (value, question) in [
            // The user's own calculation, spaced otherwise, or a figure it does not have.
            ("(15+27)*4", "另外帮我算一下 (15 + 27) * 4"),
            ("0.15 * 240", "What is 15% of 240?"),
            ("42 * 4", "另外帮我算一下 (15 + 27) * 4"),
            // A figure used more often than the user wrote it.
            ("15 + 15 + 27", "另外帮我算一下 (15 + 27) * 4"),
            // Two calculations asked for.
            ("15 / 240", "What is 15% of 240 + 10?"),
            ("15 / 240", "What is 15% of 240, and 20% of 300?"),
        ] {
            let mut calls = [call(json!({"expression": value}))];
            let changed = restore_expression(&mut calls, question, question);
            assert!(changed.is_empty(), "{value} / {question}: {changed:?}");
        }
        assert_eq!(wanted_expression("What is 12.5% of 1,200 dollars?").as_deref(), Some("12.5 * 1200 / 100"));
        assert_eq!(wanted_expression("A 15% tip, please"), None);
        assert_eq!(wanted_expression("Version 2.0 of 3 apps"), None);
    }

    fn tools_with_a_calculator() -> Vec<ToolSpec> {
        let tool = |name: &str, param: &str| json!({"name": name, "description": "", "parameters": {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]}});
        ToolSpec::parse_all(&[tool("file_reader", "path"), tool("calculator", "expression")]).unwrap()
    }

    fn read(path: &str) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "file_reader".into(), args: json!({"path": path}).as_object().unwrap().clone() }
    }

    #[test]
    fn a_calculation_the_request_asks_for_and_no_call_makes_is_added() {
        let question = "Two things, please: look up what \"canary release\" means in docs/glossary.md, and compute 12*12.";
        let mut calls = vec![read("docs/glossary.md")];
        let added = add_wanted_expression(&mut calls, &tools_with_a_calculator(), question, &[]);
        assert_eq!(added.as_deref(), Some(r#"calculator: expression = "12*12""#));
        assert_eq!(calls[1], ToolCall { id: "call_002".into(), name: "calculator".into(), args: json!({"expression": "12*12"}).as_object().unwrap().clone() });

        let mut calls = vec![read("docs/员工手册/请假制度.md")];
        add_wanted_expression(&mut calls, &tools_with_a_calculator(), "查一下 docs/员工手册/请假制度.md；再算一下 2450 的 18%。", &[]);
        assert_eq!(calls[1].args["expression"], "18 * 2450 / 100");
    }

    #[test]
    fn no_calculation_is_added_to_an_answer_a_call_that_makes_it_or_without_one_calculator() {
        let question = "Read docs/a.md and compute 12*12";
        let tools = tools_with_a_calculator();
        // An answer, not calls.
        assert_eq!(add_wanted_expression(&mut vec![], &tools, question, &[]), None);
        // A call of the decision or earlier in the turn carries its figures.
        let mut calls = vec![read("docs/a.md"), call(json!({"expression": "12 * 12"}))];
        assert_eq!(add_wanted_expression(&mut calls, &tools, question, &[]), None);
        let mut calls = vec![read("docs/a.md")];
        assert_eq!(add_wanted_expression(&mut calls, &tools, question, &[call(json!({"expression": "12^2 - 0 * 12"}))]), None);
        let multiply = ToolCall { id: "call_001".into(), name: "math.multiply".into(), args: json!({"a": 12, "b": 12}).as_object().unwrap().clone() };
        assert_eq!(add_wanted_expression(&mut vec![multiply], &tools, question, &[]), None);
        // No calculation asked for, or two.
        for question in ["Read docs/2024-05-02.md", "Read docs/a.md and compute 12*12 and 13*13"] {
            assert_eq!(add_wanted_expression(&mut vec![read("docs/a.md")], &tools, question, &[]), None, "{question}");
        }
        // No tool, or two, take an expression.
        assert_eq!(add_wanted_expression(&mut vec![read("docs/a.md")], &tools[..1], question, &[]), None);
        let two = [tools.clone(), tools_with_a_calculator()].concat();
        assert_eq!(add_wanted_expression(&mut vec![read("docs/a.md")], &two, question, &[]), None);
        assert_eq!(calls.len(), 1);
    }

    fn contacts() -> Vec<ToolSpec> {
        let tool = json!({"name": "contacts.lookup", "parameters": {"type": "object", "properties": {
            "name": {"type": "string"},
            "field": {"type": "string", "enum": ["all", "phone", "email", "address"], "default": "all"},
            "source": {"type": "string", "enum": ["work", "personal"]},
            "tag": {"type": "string", "enum": ["me", "vip"]}
        }, "required": ["name"]}});
        ToolSpec::parse_all(&[tool]).unwrap()
    }

    fn lookup(args: serde_json::Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "contacts.lookup".into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn an_optional_choice_the_request_names_is_added() {
        let mut calls = [lookup(json!({"name": "Maria Gonzalez"}))];
        let added = add_named_choices(&mut calls, &contacts(), "What's Maria Gonzalez's phone number?");
        assert_eq!(added, vec![r#"contacts.lookup: field = "phone""#]);
        assert_eq!(calls[0].args["field"], "phone");

        let mut calls = [lookup(json!({"name": "Kenji"}))];
        add_named_choices(&mut calls, &contacts(), "Look up Kenji's work email.");
        assert_eq!(calls[0].args, lookup(json!({"name": "Kenji", "field": "email", "source": "work"})).args);

        // A plural names its choice too.
        let mut calls = [lookup(json!({"name": "Kenji"}))];
        add_named_choices(&mut calls, &contacts(), "Kenji's emails, please.");
        assert_eq!(calls[0].args["field"], "email");
        assert!(names_word(&words_of("the best museums and addresses"), "museum"));
        assert!(names_word(&words_of("the best museums and addresses"), "address"));
        assert!(!names_word(&words_of("the best museums"), "muse"));
        let reasons = ["event_postponed", "event_cancelled", "cannot_attend", "other"];
        let words = words_of("The festival was postponed and I can't make the new date.");
        assert!(names_choice(&words, "event_postponed", &reasons));
        assert!(!names_choice(&words, "cannot_attend", &reasons));
        assert!(!names_choice(&words_of("an event in town"), "event_postponed", &reasons), "a part other choices share");
        assert!(names_word(&words_of("she'll be an indoor-only dog"), "indoor"));
        assert!(!names_word(&words_of("she'll be an indoor-only dog"), "only"));
        assert!(!names_word(&words_of("a non-smoking room"), "non"));
        assert!(!names_word(&words_of("a non-smoking room"), "smoking"));

        // In Chinese, by a name the choice has there.
        let mut calls = [lookup(json!({"name": "玛丽亚"}))];
        assert_eq!(add_named_choices(&mut calls, &contacts(), "玛丽亚的电话是多少？"), vec![r#"contacts.lookup: field = "phone""#]);
    }

    #[test]
    fn choices_given_defaults_unnamed_two_named_or_held_elsewhere_are_not_added() {
        for (args, question) in [
            // Already given (even otherwise), or the default.
            (json!({"name": "Maria", "field": "email"}), "What's Maria's phone number?"),
            (json!({"name": "Maria"}), "Show all of Maria's details."),
            // Two choices named; a choice inside another word; a short one; none named in Chinese.
            (json!({"name": "Maria"}), "Maria's phone and email, please."),
            (json!({"name": "Maria"}), "Maria's phone, or all of it."),
            (json!({"name": "Maria"}), "Maria's telephone number?"),
            (json!({"name": "Maria"}), "Tell me about Maria."),
            (json!({"name": "Maria"}), "玛丽亚的联系方式是多少？"),
            // Another argument holds the choice.
            (json!({"name": "phone"}), "Look up phone."),
        ] {
            let mut calls = [lookup(args.clone())];
            let added = add_named_choices(&mut calls, &contacts(), question);
            assert!(added.is_empty(), "{question}: {added:?}");
            assert_eq!(calls[0].args, *args.as_object().unwrap());
        }
    }

    #[test]
    fn a_code_the_request_writes_whole_is_restored_from_its_figures() {
        let ret = |id: &str| ToolCall { id: "call_001".into(), name: "shop.return_item".into(), args: json!({"order_id": "112-7781234-0092211", "product_id": id}).as_object().unwrap().clone() };
        let question = "I want to return product SKU-55120 from order 112-7781234-0092211; it arrived damaged.";
        let mut calls = [ret("55120")];
        assert_eq!(restore_codes(&mut calls, question), [r#"shop.return_item: product_id: "55120" -> "SKU-55120""#]);
        assert_eq!(calls[0].args["product_id"], "SKU-55120");
        assert_eq!(calls[0].args["order_id"], "112-7781234-0092211");
        // Written alone too, in two codes, a year of a date, no figure: left as it is.
        for (id, question) in [
            ("55120", "Return SKU-55120 (item 55120) from my order."),
            ("55120", "Return SKU-55120 or EU-55120."),
            ("2024", "Prices from 2024-03-01 on."),
            ("SKU", "Return SKU-55120."),
        ] {
            let mut calls = [ret(id)];
            assert!(restore_codes(&mut calls, question).is_empty(), "{question}");
            assert_eq!(calls[0].args["product_id"], id);
        }
    }

    fn trains() -> Vec<ToolSpec> {
        let tool = json!({"type": "function", "function": {"name": "trains.search", "parameters": {"type": "object", "properties": {
            "from_station": {"type": "string"}, "to_station": {"type": "string"}, "date": {"type": "string"},
            "earliest_departure": {"type": "string"}, "seat": {"type": "string", "enum": ["first", "second"]},
            "amenities": {"type": "array", "items": {"type": "string", "enum": ["wifi", "quiet", "power"]}},
            "return_date": {"type": "string"},
            "passengers": {"type": "integer", "default": 1}, "max_price": {"type": "number"},
            "refundable": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
            "language": {"type": "string", "enum": ["en", "es", "zh"]},
            "coach": {"type": "object", "properties": {"number": {"type": "integer"}, "side": {"type": "string"}, "deck": {"type": "string"}}, "required": ["number"]}
        }, "required": ["from_station", "to_station", "date"]}}});
        ToolSpec::parse_all(&[tool]).unwrap()
    }

    fn search(args: serde_json::Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "trains.search".into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn optional_arguments_nobody_stated_are_left_out() {
        let question = "查 2025-02-14 从北京南到上海虹桥的高铁票，要一等座，两个人，票价 600 元以内。";
        let mut calls = [search(json!({
            "from_station": "北京南", "to_station": "上海虹桥", "date": "2025-02-14",
            "earliest_departure": "08:00", "seat": "first", "amenities": ["wifi", "quiet"],
            "passengers": 2, "max_price": 600, "refundable": false, "tags": []
        }))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), &stated_text(&[Message::user(question)]));
        assert_eq!(dropped, vec![r#"trains.search: earliest_departure = "08:00""#, "trains.search: tags = []"]);
        let kept: Vec<&str> = calls[0].args.keys().map(String::as_str).collect();
        // In Chinese, enum values and booleans may be said in other words; numbers as words count.
        assert_eq!(kept, ["from_station", "to_station", "date", "seat", "amenities", "passengers", "max_price", "refundable"]);
        // A time stated on the 12-hour clock or in words is written: "晚上八点" is 20:00.
        let mut calls = [search(json!({"from_station": "北京南", "to_station": "上海虹桥", "date": "2025-02-14", "earliest_departure": "20:00"}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "查 2025-02-14 晚上八点以后从北京南到上海虹桥的高铁票");
        assert!(dropped.is_empty(), "{dropped:?}");

        // Inside an object the same: its unstated optional keys go, the object stays; an
        // object left empty goes.
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "coach": {"number": 7, "side": "window", "deck": "upper"}}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14, a window seat in coach 7.");
        assert_eq!(dropped, vec![r#"trains.search: coach.deck = "upper""#]);
        assert_eq!(calls[0].args["coach"], json!({"number": 7, "side": "window"}));
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "coach": {"side": "aisle"}}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14.");
        assert_eq!(dropped, vec![r#"trains.search: coach.side = "aisle""#, "trains.search: coach = {}"]);
        assert!(!calls[0].args.contains_key("coach"));
        // An optional object whose required key nobody wrote goes whole.
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "coach": {"number": 12, "side": "window"}}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14, a window seat.");
        assert_eq!(dropped, vec![r#"trains.search: coach = {"number":12,"side":"window"}"#]);
        assert!(!calls[0].args.contains_key("coach"));

        // The schema's whole list of choices, and a value written once but used twice.
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "return_date": "2025-02-14", "amenities": ["quiet", "wifi", "power"]}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14, a quiet coach.");
        assert_eq!(dropped, vec![r#"trains.search: return_date = "2025-02-14""#, r#"trains.search: amenities = ["quiet","wifi","power"]"#]);
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "return_date": "2025-02-14"}))];
        assert!(drop_unstated_optional(&mut calls, &trains(), "A to B on 2025-02-14, back on 2025-02-14.").is_empty());

        // The first parameter keeps the value: the file to convert, not the file to write.
        let converter = ToolSpec::parse_all(&[json!({"name": "format_converter", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "to": {"type": "string", "enum": ["json", "markdown"]}, "output_path": {"type": "string"}
        }, "required": ["to"]}})]).unwrap();
        let mut calls = [ToolCall { id: "call_001".into(), name: "format_converter".into(), args: json!({"path": "data/sample.csv", "to": "markdown", "output_path": "data/sample.csv"}).as_object().unwrap().clone() }];
        let dropped = drop_unstated_optional(&mut calls, &converter, "把 data/sample.csv 转成 markdown 表格。");
        assert_eq!(dropped, vec![r#"format_converter: output_path = "data/sample.csv""#]);
        assert_eq!(calls[0].args["path"], "data/sample.csv");

        // Invented values go: a number the request does not write, a string it does not.
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "max_price": 999, "tags": ["cheap"]}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14, leaving after 8:30.");
        assert_eq!(dropped, vec!["trains.search: max_price = 999", r#"trains.search: tags = ["cheap"]"#]);

        // An enum's choice an English request never names goes; one it names stays (blanks
        // and `_` aside), and so do codes, which users write as words ("in Spanish").
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "seat": "second", "language": "es"}))];
        let dropped = drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14, tickets in Spanish please.");
        assert_eq!(dropped, vec![r#"trains.search: seat = "second""#]);
        assert_eq!(calls[0].args["language"], "es");
        let mut calls = [search(json!({"from_station": "A", "to_station": "B", "date": "2025-02-14", "seat": "second"}))];
        assert!(drop_unstated_optional(&mut calls, &trains(), "From A to B on 2025-02-14 in SECOND class.").is_empty());
    }

    #[test]
    fn required_and_stated_optional_arguments_stay() {
        let text = stated_text(&[
            Message::system("Default city: Chengdu."),
            Message::user("Trains from A to B on 2025-02-14 after 8:30, for the default passengers, tagged Family."),
        ]);
        // Required values are never dropped, even made up; the parameter's default passes; a
        // time keeps its figures in another notation; case and blanks do not matter.
        let mut calls = [search(json!({
            "from_station": "Nowhere", "to_station": "B", "date": "2025-03-01",
            "earliest_departure": "08:30", "passengers": 1, "tags": ["family", "chengdu"]
        }))];
        let before = calls[0].clone();
        assert!(drop_unstated_optional(&mut calls, &trains(), &text).is_empty());
        assert_eq!(calls[0], before);
        // A tool the schema does not have is left to the parser's checks.
        let mut other = [ToolCall { id: "call_002".into(), name: "other".into(), args: json!({"x": ""}).as_object().unwrap().clone() }];
        assert!(drop_unstated_optional(&mut other, &trains(), &text).is_empty());
    }
}
