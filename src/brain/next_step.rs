//! The next step of a request, checked once its first calls have results.
//!
//! After tool results, a small model in the conversation's own prompt answers almost
//! always, also when the request has a second step that uses the first one's result (look
//! up an event, then cancel it; find a product, then add it to the cart): on the dev split
//! the 0.5B answered in all ten such cases, and an answer there tells the user something
//! was done that was not. Asked the same request afresh, with the calls made so far and
//! their results written into it, the same model calls: the next step where one is left,
//! and where none is, the call it already made, again. So (profile field
//! `next_step_check`) before an answer after results, the request is asked that way once:
//! a call that repeats one already made means the request is done and the answer is
//! written; a new call is the decision instead, if its values come from the conversation.
//!
//! With `answer_from_results` on too, the check comes first and alone ([`first`]): the
//! conversation's own decision after results answered in every dev and holdout multi_turn
//! case, and its answer was then written over, so it is not generated.
//!
//! The values check is what keeps this from hurting: a new call with a string value that
//! neither the user nor a tool wrote (an invented product id, a made-up note) is dropped,
//! and with no new call left the answer stands.

use std::sync::atomic::AtomicBool;

use serde_json::{Map, Value};

use super::{decision, synthesis, threshold, Brain, BrainError, Decision, DecisionRequest, Profile, TokenSink};
use crate::protocol::{Message, Phase, Stream, Strategy, ToolCall, ToolCalling};
use crate::text::normalized;
use crate::tools::spec::ToolSpec;

/// The most characters of one tool result put in the request.
const MAX_RESULT_CHARS: usize = 2000;

/// What a request's next step is checked from: the user's latest message, the calls made
/// since with their results (oldest first), and the text values may come from.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub question: String,
    pub done: Vec<(ToolCall, String)>,
}

/// Asks `request`'s latest request afresh on `brain`, with the calls made for it and their
/// results written in ([`request`]), when `messages` end with tool results; a new call whose
/// values come from the conversation ([`new_calls`]) replaces `decided`'s answer.
pub fn check(
    brain: &mut dyn Brain,
    decided: &mut Decision,
    request: &DecisionRequest,
    messages: &[Message],
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<(), BrainError> {
    let Some(progress) = progress(messages) else { return Ok(()) };
    on_token(Stream::Text(decision::NEXT_STEP_MARK));
    let (checked, calls, dropped) = ask(brain, request, messages, &progress, on_token, cancel)?;
    decision::next_step(decided, &checked, calls, &dropped);
    Ok(())
}

/// Whether the decision after tool results is the check alone ([`first`]): with
/// `next_step_check` and `answer_from_results` both on, the conversation's own decision
/// would only write an answer that the one from the results replaces (on the dev and
/// holdout multi_turn cases the 0.5B answered there every time), so it is not generated.
pub fn asked_first(profile: &Profile, request: &DecisionRequest, messages: &[Message]) -> bool {
    profile.next_step_check && profile.answer_from_results && request.phase == Phase::React && progress(messages).is_some()
}

/// The decision after tool results made by the check alone: its new calls, or where it
/// has none, the answer `answer_from_results` writes from the results. `None` when the
/// conversation does not end with results, or neither gave a call or an answer (the
/// conversation's own decision is then made).
pub fn first<B: Brain>(
    brain: &mut B,
    request: &DecisionRequest,
    messages: &[Message],
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
    answer_from_results: impl FnOnce(&B, &mut Decision, &str, &[synthesis::Called<'_>], TokenSink<'_>, &AtomicBool) -> Result<(), BrainError>,
) -> Result<Option<Decision>, BrainError> {
    let Some(progress) = progress(messages) else { return Ok(None) };
    on_token(Stream::Text(decision::NEXT_STEP_MARK.trim_start()));
    let (checked, calls, dropped) = ask(brain, request, messages, &progress, on_token, cancel)?;
    let mut decided = decision::from_next_step(request, checked, calls, &dropped);
    if decided.ai.tool_calls.is_empty() {
        if let Some((question, results)) = synthesis::results_for_question(messages) {
            answer_from_results(brain, &mut decided, question, &results, on_token, cancel)?;
        }
    }
    if decided.ai.content.trim().is_empty() && decided.ai.tool_calls.is_empty() {
        on_token(Stream::Text(decision::NO_ANSWER_YET));
        return Ok(None);
    }
    decided.ai.number_calls();
    Ok(Some(decided))
}

/// Asks `progress`'s request afresh on `brain` and sorts the calls it proposes.
fn ask(
    brain: &mut dyn Brain,
    request: &DecisionRequest,
    messages: &[Message],
    progress: &Progress,
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<(Decision, Vec<ToolCall>, Vec<Dropped>), BrainError> {
    let fresh = DecisionRequest {
        messages: vec![self::request(progress)],
        tool_calling: ToolCalling::PromptJson,
        strategy: Some(Strategy::CallsFirst),
        // A call more is what the check decides: pushed to one after a repeat, the 0.5B
        // made a call the request did not need (dev multi_turn: 1 right, 2 lost).
        more_calls_bias: Some(0.0),
        // Uncalibrated, as the follow-up asked afresh: a repeat is told by its tool's name.
        name_calibration: Some(0.0),
        ..request.clone()
    };
    let mut checked = brain.decide(&fresh, on_token, cancel)?;
    // The tools were checked when the decision was made; unparsable ones here only mean
    // no enum is known.
    let tools = ToolSpec::parse_all(&request.tools).unwrap_or_default();
    let conversation = conversation_text(messages);
    let (mut calls, mut dropped) = new_calls(checked.ai.tool_calls.clone(), progress, &tools, &conversation);
    dropped.extend(unmet_condition(&mut calls, progress, &tools));
    if brain.profile().drop_unasked_tools {
        dropped.extend(unasked_tools(&mut calls, progress));
    }
    if calls.is_empty() {
        if let Some(undone) = undone_action(&progress.question, &progress.done, &tools) {
            let (more, not_next) = ask_undone(brain, &mut checked, &fresh, &undone, progress, &tools, &conversation, on_token, cancel)?;
            calls = more;
            dropped.extend(not_next);
        }
    }
    Ok((checked, calls, dropped))
}

/// Asks `fresh` again with the tools that do what the request asks and no call has done
/// (`undone`), pushed to call; its raw text, figures and warnings go into `checked`. The new
/// calls that are a next step ([`new_calls`]), and those that are not.
#[allow(clippy::too_many_arguments)]
fn ask_undone(
    brain: &mut dyn Brain,
    checked: &mut Decision,
    fresh: &DecisionRequest,
    undone: &Undone,
    progress: &Progress,
    tools: &[ToolSpec],
    conversation: &str,
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<(Vec<ToolCall>, Vec<Dropped>), BrainError> {
    let mark = format!("\n\n[the request asks to {}, which no call has done: asked again with {} alone]\n", undone.action, undone.doers.join(", "));
    on_token(Stream::Text(&mark));
    // Pushed to call: asked this way the 0.5B still answered, with the text of the call it
    // had made ("Cancel my dentist appointment": `calendar.list_events({`). A call whose
    // values nobody wrote is dropped all the same.
    let doers = crate::tools::spec::only_named(&fresh.tools, &undone.doers);
    let pushed = DecisionRequest { tools: doers, answer_bias: Some(-UNDONE_CALL_PUSH), ..fresh.clone() };
    let redone = brain.decide(&pushed, on_token, cancel)?;
    decision::add_generation(&mut checked.report.stats, &redone.report.stats);
    checked.raw_output.push_str(&mark);
    checked.raw_output.push_str(&redone.raw_output);
    checked.report.warnings.extend(redone.report.warnings.iter().cloned());
    let (more, not_next) = new_calls(redone.ai.tool_calls.clone(), progress, tools, conversation);
    checked.report.warnings.push(format!(
        "next step: the request asks to {}, which no call has done: asked again with {} alone, {}",
        undone.action,
        undone.doers.join(", "),
        if more.is_empty() { "no call made" } else { "called" }
    ));
    Ok((more, not_next))
}

/// How far a request asked again for an action no call has done ([`undone_action`]) is
/// pushed from answering toward a call (logits).
const UNDONE_CALL_PUSH: f32 = 30.0;

/// What a request asks to do that none of its calls has done, and the offered tools that do it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undone {
    /// The action as the request writes it ("cancel", "取消").
    pub action: String,
    /// The offered tools whose name says they do it.
    pub doers: Vec<String>,
}

/// Actions a request's second step does once the first has found what it acts on (look up
/// the event, then cancel it): the English words, the Chinese terms, and how a tool that
/// does it names it (a word of its name, split at `.` and `_`).
const STEP_ACTIONS: &[(&[&str], &[&str], &[&str])] = &[
    (&["cancel"], &["取消"], &["cancel"]),
    (&["restart", "reboot"], &["重启"], &["restart", "reboot"]),
    (&["book", "reserve"], &["预订", "预定", "订一", "订个"], &["book", "reserve"]),
    (&["add"], &["加入", "添加", "加到"], &["add"]),
    (&["send", "email"], &["发邮件", "发送", "发给", "发一"], &["send"]),
    (&["delete", "remove"], &["删除", "删掉"], &["delete", "remove"]),
    (&["create", "schedule"], &["创建", "新建"], &["create", "schedule"]),
    (&["return", "refund"], &["退货", "退款"], &["return", "refund"]),
    (&["buy", "purchase"], &["下单", "购买"], &["order", "buy", "purchase", "checkout"]),
    (&["pay"], &["支付", "付款"], &["pay"]),
    (&["transfer"], &["转账"], &["transfer"]),
];

/// Words that make the action depend on what the results show.
const CONDITIONS: &[&str] = &["if", "unless", "whether", "when", "如果", "若", "要是", "的话", "假如", "是否"];

/// Whether `question` makes what it asks hang on a condition.
fn conditional(question: &str) -> bool {
    let lower = question.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).collect();
    CONDITIONS.iter().any(|c| if c.is_ascii() { words.contains(c) } else { question.contains(c) })
}

/// Whether the numeric condition `progress`'s request sets holds on its results
/// ([`threshold::holds`]): `None` where it sets none, or the results do not settle it.
pub fn condition_met(progress: &Progress) -> Option<bool> {
    condition_holds(&progress.question, &progress.done)
}

/// [`condition_met`] for a request and the calls made for it with their results.
fn condition_holds(question: &str, done: &[(ToolCall, String)]) -> Option<bool> {
    if !conditional(question) {
        return None;
    }
    let results: Vec<String> = done.iter().map(|(_, result)| result.clone()).collect();
    threshold::holds(question, &results)
}

/// Whether a word of `tool`'s name (split at `.` and `_`) is one of `names`.
fn named(tool: &str, names: &[&str]) -> bool {
    tool.to_lowercase().split(['.', '_']).any(|w| names.contains(&w))
}

/// The actions `question` asks for ([`STEP_ACTIONS`], in that order) that one of `tools` does
/// by name: the action as written, the tools that do it, and the words such tools are named by.
fn asked_actions<'a>(question: &'a str, tools: &'a [ToolSpec]) -> impl Iterator<Item = (String, Vec<String>, &'static [&'static str])> + 'a {
    let lower = question.to_lowercase();
    let words: Vec<String> = lower.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).map(str::to_string).collect();
    STEP_ACTIONS.iter().filter_map(move |(verbs, terms, names)| {
        let action = verbs.iter().find(|v| words.iter().any(|w| w == *v)).or_else(|| terms.iter().find(|t| question.contains(*t)))?;
        let doers: Vec<String> = tools.iter().filter(|t| named(&t.name, names)).map(|t| t.name.clone()).collect();
        (!doers.is_empty()).then(|| (action.to_string(), doers, *names))
    })
}

/// The action `question` asks for ([`STEP_ACTIONS`]) that none of the `done` calls' tools
/// does, where one of `tools` does it by name: after looking the event up, "Cancel my dentist
/// appointment" still has `calendar.cancel_event` to call. `None` where a done call's tool
/// does it, no tool does, or the action hangs on a condition that the results do not show
/// to hold ("if it is above 90%, restart ..." is due once a result says 97.2; "cancel the
/// dentist if it is on Friday" is the model's to judge).
pub fn undone_action(question: &str, done: &[(ToolCall, String)], tools: &[ToolSpec]) -> Option<Undone> {
    if conditional(question) && condition_holds(question, done) != Some(true) {
        return None;
    }
    asked_actions(question, tools).find_map(|(action, doers, names)| {
        let done_already = done.iter().any(|(call, _)| named(&call.name, names));
        (!done_already).then_some(Undone { action, doers })
    })
}

/// Drops from `calls` those doing an action `progress`'s request asks for only on a numeric
/// condition that its results show not to hold ([`condition_met`]): asked to restart a
/// deployment if the CPU is above 90%, with 42% in the result, a restart acts against the
/// request. Each dropped call comes back with why.
pub fn unmet_condition(calls: &mut Vec<ToolCall>, progress: &Progress, tools: &[ToolSpec]) -> Vec<Dropped> {
    if condition_met(progress) != Some(false) {
        return Vec::new();
    }
    let doers: Vec<String> = asked_actions(&progress.question, tools).flat_map(|(_, doers, _)| doers).collect();
    let mut dropped = Vec::new();
    calls.retain(|call| {
        let conditioned = doers.contains(&call.name);
        if conditioned {
            dropped.push(Dropped::ConditionUnmet(call.name.clone()));
        }
        !conditioned
    });
    dropped
}

/// Drops the new calls of a tool that no call for the request has used and that an English
/// request does not ask for ([`extra_call::asked_for`]; profile field `drop_unasked_tools`,
/// which judges a fresh decision's added calls the same way). With its results in, the
/// 0.5B went on to a step nobody asked for, its values taken from the results: asked when
/// a car was last in the shop and whether it has open recalls, both answered, it looked for
/// free service slots at the garage of the last visit (dev `multi_turn_191`). A Chinese
/// request names its tools in other words and is not judged. Each dropped call comes back
/// with why.
pub fn unasked_tools(calls: &mut Vec<ToolCall>, progress: &Progress) -> Vec<Dropped> {
    if progress.question.chars().any(crate::text::is_cjk) {
        return Vec::new();
    }
    let done: Vec<ToolCall> = progress.done.iter().map(|(call, _)| call.clone()).collect();
    let mut dropped = Vec::new();
    calls.retain(|call| {
        let asked = super::extra_call::asked_for(call, &done, &progress.question);
        if !asked {
            dropped.push(Dropped::Unasked(call.name.clone()));
        }
        asked
    });
    dropped
}

/// The latest request and the calls made for it with their results, when the conversation
/// ends with tool results; `None` otherwise.
pub fn progress(messages: &[Message]) -> Option<Progress> {
    if !matches!(messages.last(), Some(Message::Tool(_))) {
        return None;
    }
    let (question, results) = synthesis::results_for_question(messages)?;
    let done = results
        .into_iter()
        .map(|result| {
            let call = result.call.cloned().unwrap_or_else(|| ToolCall { id: String::new(), name: result.name.to_string(), args: Map::new() });
            (call, result.content.to_string())
        })
        .collect();
    Some(Progress { question: question.to_string(), done })
}

/// What comes between the request and the calls made for it in [`request`]'s message.
const CALLS_MADE: &str = "\n\nCalls already made for this request, with their results:\n";

/// The request itself of a message [`request`] wrote (the text before the calls made and
/// their results), else `text`.
pub fn asked(text: &str) -> &str {
    text.split_once(CALLS_MADE).map_or(text, |(question, _)| question)
}

/// The request asked afresh: one user message with the calls made and their results.
pub fn request(progress: &Progress) -> Message {
    let mut text = format!("{}{CALLS_MADE}", progress.question);
    for (call, result) in &progress.done {
        // Spaced JSON: written compact, the 0.5B answered with the text of a call
        // (`shop.search_products({`) where spaced it made the call.
        let result = serde_json::from_str::<Value>(result).map_or_else(|_| result.clone(), |v| spaced(&v));
        let shown: String = result.chars().take(MAX_RESULT_CHARS).collect();
        let cut = if shown.len() < result.len() { " ..." } else { "" };
        text.push_str(&format!("- {}({}) returned {shown}{cut}\n", call.name, spaced(&Value::Object(call.args.clone()))));
    }
    text.push_str(
        "\nMake the next call this request still needs, with values taken from these results; never repeat a call \
         already made. If nothing is left to do, answer with the results.",
    );
    Message::user(text)
}

/// `value` as JSON on one line with a blank after each `,` and `:` (Python's `json.dumps`).
pub(crate) fn spaced(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("[{}]", items.iter().map(spaced).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let entries: Vec<String> = map.iter().map(|(k, v)| format!("{}: {}", Value::String(k.clone()), spaced(v))).collect();
            format!("{{{}}}", entries.join(", "))
        }
        other => other.to_string(),
    }
}

/// Why a proposed call is not the next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// It repeats a call already made.
    Repeat(String),
    /// A value in it comes from neither the user nor a tool.
    Invented { tool: String, param: String, value: String },
    /// It does what the request asks only on a condition its results show not to hold.
    ConditionUnmet(String),
    /// Its tool is one the (English) request does not ask for.
    Unasked(String),
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dropped::Repeat(tool) => write!(f, "{tool}: repeats a call already made"),
            Dropped::Invented { tool, param, value } => {
                write!(f, "{tool}: {param} = {value:?} comes from neither the user nor a tool result")
            }
            Dropped::ConditionUnmet(tool) => write!(f, "{tool}: the request asks for it only on a condition the results show does not hold"),
            Dropped::Unasked(tool) => write!(f, "{tool}: a tool the request does not ask for"),
        }
    }
}

/// The calls of `proposed` that are a next step: not a repeat of a call in `progress`, and
/// every string value (but an enum's) found in `conversation` (the user's and the tools'
/// text) or shaped like a date or time. The rest come back with why.
pub fn new_calls(proposed: Vec<ToolCall>, progress: &Progress, tools: &[ToolSpec], conversation: &str) -> (Vec<ToolCall>, Vec<Dropped>) {
    let haystack = normalized(conversation);
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for call in proposed {
        if progress.done.iter().any(|(made, _)| repeats(&call, made)) {
            dropped.push(Dropped::Repeat(call.name.clone()));
            continue;
        }
        let schema = tools.iter().find(|t| t.name == call.name).map(|t| t.parameters());
        match invented(&without_earlier_values(&call, progress), schema, &haystack) {
            Some((param, value)) => dropped.push(Dropped::Invented { tool: call.name.clone(), param, value }),
            None => kept.push(call),
        }
    }
    (kept, dropped)
}

/// `call` without the arguments that a call of the same tool already made for this request
/// held as they are. A retry keeps the values of the call it retries: asked to schedule a
/// post "北京时间 ... 晚上 8 点", the first call wrote `timezone: "Asia/Shanghai"` and a
/// time the tool refused; its retry with the time mended was dropped, as the time zone is
/// in no one's words (and so was `duration_minutes: 180` for "停3个小时").
fn without_earlier_values(call: &ToolCall, progress: &Progress) -> ToolCall {
    let mut left = call.clone();
    left.args.retain(|param, value| !progress.done.iter().any(|(made, _)| made.name == call.name && made.args.get(param).is_some_and(|v| same_value(value, v))));
    left
}

/// The user's messages and the tool results of `messages`, one text.
pub fn conversation_text(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        match message {
            Message::User { content } => text.push_str(content),
            Message::Tool(result) => text.push_str(&result.content),
            _ => continue,
        }
        text.push('\n');
    }
    text
}

/// Same tool, and the arguments agree on every key both give (a repeat may add or leave
/// out an optional one).
pub(crate) fn repeats(call: &ToolCall, made: &ToolCall) -> bool {
    call.name == made.name && call.args.iter().all(|(k, v)| made.args.get(k).is_none_or(|w| same_value(v, w)))
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::String(x), Value::String(y)) => x.trim() == y.trim(),
        _ => a == b,
    }
}

/// Whether every value of `call` (an enum's aside) is written in `conversation` (the user's
/// and the tools' text, [`conversation_text`]).
pub(crate) fn values_written(call: &ToolCall, tools: &[ToolSpec], conversation: &str) -> bool {
    let schema = tools.iter().find(|t| t.name == call.name).map(|t| t.parameters());
    invented(call, schema, &normalized(conversation)).is_none()
}

/// The first value of `call` found nowhere in the conversation ([`unwritten`]), with its
/// parameter.
fn invented(call: &ToolCall, schema: Option<&Value>, haystack: &str) -> Option<(String, String)> {
    let numbers = super::stated_times::numbers_stated(haystack);
    call.args.iter().find_map(|(param, value)| {
        let spec = schema.and_then(|s| s.get("properties")).and_then(|p| p.get(param));
        unwritten(value, spec, haystack, &numbers).map(|shown| (param.clone(), shown))
    })
}

/// The first leaf of `value` (a parameter's, `spec` its schema) that the conversation does
/// not write: a string not in `haystack` (already [`normalized`]; a date or time may change
/// notation), or a number that is not the parameter's default and not in `numbers` (those
/// `haystack` writes, in digits or as words; a percentage may be a fraction). An enum's
/// values (an array's of enum items too) are not looked for (the user may name them in
/// another language).
pub(crate) fn unwritten(value: &Value, spec: Option<&Value>, haystack: &str, numbers: &[f64]) -> Option<String> {
    if spec.is_some_and(choices_only) {
        return None;
    }
    let default = spec.and_then(|s| s.get("default"));
    let mut leaves = Vec::new();
    collect_leaves(value, &mut leaves);
    let missing = leaves.into_iter().find(|leaf| match leaf {
        Value::String(s) => !found(s, haystack),
        Value::Number(n) => !number_stated(n.as_f64().unwrap_or(f64::NAN), default, numbers),
        _ => false,
    })?;
    Some(missing.as_str().map_or_else(|| missing.to_string(), str::to_string))
}

/// Whether a parameter (`spec`, its schema) takes a choice of an enum, or an array of them.
pub(crate) fn choices_only(spec: &Value) -> bool {
    let enumerated = |s: &Value| s.get("enum").is_some();
    enumerated(spec) || spec.get("items").is_some_and(enumerated)
}

/// Whether the number `x` is the parameter's `default` or one of `numbers` (those a
/// conversation writes): its size (a sign before the figures is not in `numbers`: `-40°F`),
/// or a fraction written as a percentage and back.
pub(crate) fn number_stated(x: f64, default: Option<&Value>, numbers: &[f64]) -> bool {
    let size = x.abs();
    default.is_some_and(|d| d.as_f64() == Some(x)) || numbers.iter().any(|&y| close(size, y) || close(size * 100.0, y) || close(size, y * 100.0))
}

/// The strings, numbers, booleans and nulls inside `value`, arrays and objects opened.
pub(crate) fn collect_leaves<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| collect_leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_leaves(v, out)),
        leaf => out.push(leaf),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}


/// Whether `value` is written in `haystack` (already [`normalized`]): case, blanks and
/// closing punctuation aside. A date or time may be written in another notation.
fn found(value: &str, haystack: &str) -> bool {
    let wanted = normalized(value.trim_end_matches(['.', '。', '!', '！', '?', '？', ';', '；', ',', '，']));
    wanted.is_empty() || haystack.contains(&wanted) || date_or_time(value)
}


/// Digits with date or time separators and nothing else (`2022-07-04`, `08:30`, `07/04/2022`).
pub(crate) fn date_or_time(value: &str) -> bool {
    let value = value.trim();
    value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(|c| matches!(c, '-' | '/' | ':'))
        && value.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | '/' | ':' | '.' | ' ' | 'T'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{AiMessage, ToolMessage};
    use crate::text::numbers_written;

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    fn dentist() -> Vec<Message> {
        let listed = call("call_001", "calendar.list_events", json!({"start_date": "2025-06-09", "keyword": "dentist"}));
        vec![
            Message::user("Hi"),
            Message::Assistant(AiMessage::answer("Hello!")),
            Message::user("Cancel my dentist appointment between 2025-06-09 and 2025-06-13."),
            Message::Assistant(AiMessage::calls(vec![listed.clone()])),
            Message::Tool(ToolMessage::success(&listed, json!({"events": [{"id": "evt_5531", "title": "Dentist"}]}))),
        ]
    }

    fn schemas() -> Vec<Value> {
        let schema = |name: &str, props: Value| json!({"type": "function", "function": {"name": name, "description": "", "parameters": {"type": "object", "properties": props}}});
        vec![
            schema("calendar.list_events", json!({"start_date": {"type": "string"}, "keyword": {"type": "string"}})),
            schema("calendar.cancel_event", json!({"event_id": {"type": "string"}, "reason": {"type": "string", "enum": ["sick", "other"]}})),
        ]
    }

    fn tools() -> Vec<ToolSpec> {
        ToolSpec::parse_all(&schemas()).unwrap()
    }

    /// The next step of `dentist()` checked on a brain answering `answers` in turn.
    fn checked(answers: Vec<AiMessage>) -> (Decision, crate::brain::scripted::Scripted) {
        checked_after(&dentist(), schemas(), "Done.", answers)
    }

    /// The next step after `messages` (offering `schemas`) checked on a brain answering
    /// `answers` in turn, the decision's own answer being `answer`.
    fn checked_after(messages: &[Message], schemas: Vec<Value>, answer: &str, answers: Vec<AiMessage>) -> (Decision, crate::brain::scripted::Scripted) {
        let mut brain = crate::brain::scripted::Scripted::new(Profile::default(), answers);
        let request = crate::brain::scripted::request(messages, schemas);
        let report = crate::protocol::DecisionReport::new("scripted", Phase::React, ToolCalling::PromptJson, None);
        let mut decided = Decision { ai: AiMessage::answer(answer), raw_output: String::new(), prompt: String::new(), plan: None, report };
        check(&mut brain, &mut decided, &request, messages, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        // Asked afresh uncalibrated, pushed or not: a repeat is told by its tool's name.
        assert!(brain.calibrations.iter().all(|c| *c == Some(0.0)), "{:?}", brain.calibrations);
        (decided, brain)
    }

    #[test]
    fn a_request_whose_action_is_left_undone_is_asked_again_with_the_tools_that_do_it() {
        let listed = call("call_001", "calendar.list_events", json!({"start_date": "2025-06-09", "keyword": "dentist"}));
        let cancel = call("call_001", "calendar.cancel_event", json!({"event_id": "evt_5531"}));
        let (decided, brain) = checked(vec![AiMessage::calls(vec![listed.clone()]), AiMessage::calls(vec![cancel.clone()])]);
        assert_eq!(decided.ai.tool_calls, [cancel]);
        assert_eq!(brain.offered[1], ["calendar.cancel_event"]);
        assert_eq!(brain.pushed, [None, Some(-UNDONE_CALL_PUSH)]);
        // Asked again, a call with a value nobody wrote is dropped: the answer stands.
        let invented = call("call_001", "calendar.cancel_event", json!({"event_id": "evt_0001"}));
        let (decided, _) = checked(vec![AiMessage::calls(vec![listed]), AiMessage::calls(vec![invented])]);
        assert!(decided.ai.tool_calls.is_empty() && decided.ai.content == "Done.", "{:?}", decided.ai);
        assert!(decided.report.warnings.iter().any(|w| w.contains("evt_0001")), "{:?}", decided.report.warnings);
    }

    #[test]
    fn the_latest_request_and_its_results_are_restated() {
        let messages = dentist();
        let progress = progress(&messages).unwrap();
        assert_eq!(progress.question, "Cancel my dentist appointment between 2025-06-09 and 2025-06-13.");
        assert_eq!(progress.done.len(), 1);
        let Message::User { content } = request(&progress) else { panic!() };
        assert!(content.starts_with("Cancel my dentist appointment"), "{content}");
        assert!(content.contains(r#"- calendar.list_events({"start_date": "2025-06-09", "keyword": "dentist"}) returned {"status": "success", "output": {"events": [{"#), "{content}");
        assert!(content.contains("evt_5531") && content.contains("never repeat a call already made"), "{content}");
        assert!(!content.contains("Hello!"), "earlier turns stay out: {content}");
        assert_eq!(asked(&content), progress.question);
        assert_eq!(asked("Cancel it."), "Cancel it.");
        // Not after results: nothing to check.
        assert!(super::progress(&messages[..4]).is_none());
        assert!(super::progress(&[Message::user("hi")]).is_none());
    }

    #[test]
    fn each_result_goes_with_the_latest_call_of_its_id() {
        let mut messages = dentist();
        let cancel = call("call_001", "calendar.cancel_event", json!({"event_id": "evt_5531"}));
        messages.push(Message::Assistant(AiMessage::calls(vec![cancel.clone()])));
        messages.push(Message::Tool(ToolMessage::success(&cancel, json!({"cancelled": true}))));
        let progress = progress(&messages).unwrap();
        let names: Vec<&str> = progress.done.iter().map(|(c, _)| c.name.as_str()).collect();
        assert_eq!(names, ["calendar.list_events", "calendar.cancel_event"]);
        assert_eq!(progress.done[1].0.args["event_id"], "evt_5531");
    }

    #[test]
    fn a_repeated_call_means_done_and_a_new_one_with_known_values_is_the_next_step() {
        let messages = dentist();
        let progress = progress(&messages).unwrap();
        let text = conversation_text(&messages);
        // The same call again (an optional key added): done.
        let again = call("call_001", "calendar.list_events", json!({"start_date": "2025-06-09", "keyword": "dentist", "end_date": "2025-06-13"}));
        let (kept, dropped) = new_calls(vec![again], &progress, &tools(), &text);
        assert!(kept.is_empty());
        assert_eq!(dropped, vec![Dropped::Repeat("calendar.list_events".into())]);
        // The same tool with another value is a new call (a retry in the right format).
        let other = call("call_001", "calendar.list_events", json!({"start_date": "2025-06-10"}));
        assert_eq!(new_calls(vec![other], &progress, &tools(), &text).0.len(), 1);
        // The next step, its id from the result, an enum value not looked for.
        let cancel = call("call_002", "calendar.cancel_event", json!({"event_id": "EVT_5531", "reason": "other"}));
        let (kept, dropped) = new_calls(vec![cancel], &progress, &tools(), &text);
        assert_eq!((kept.len(), dropped.len()), (1, 0));
    }

    #[test]
    fn an_action_no_call_has_done_is_found_with_the_tools_that_do_it() {
        let progress = progress(&dentist()).unwrap();
        let undone = |question: &str, done: &[(ToolCall, String)]| undone_action(question, done, &tools()).map(|u| (u.action, u.doers));
        let cancel = Some(("cancel".to_string(), vec!["calendar.cancel_event".to_string()]));
        assert_eq!(undone(&progress.question, &progress.done), cancel);
        assert_eq!(undone("帮我取消下周的牙医预约", &progress.done), Some(("取消".into(), vec!["calendar.cancel_event".into()])));
        // Done already, asked on a condition, or no tool does it: nothing.
        let cancelled = (call("call_002", "calendar.cancel_event", json!({"event_id": "evt_5531"})), String::new());
        assert_eq!(undone(&progress.question, &[progress.done[0].clone(), cancelled]), None);
        assert_eq!(undone("Check my calendar and cancel the dentist if it is on Friday.", &progress.done), None);
        assert_eq!(undone("如果周五有牙医预约就取消它", &progress.done), None);
        assert_eq!(undone("Restart the web deployment.", &progress.done), None);
        assert_eq!(undone("What is on my calendar next week?", &progress.done), None);
        // A word of the tool's name, not a part of one: `search_books` does not book.
        let shelf = ToolSpec::parse_all(&[json!({"name": "library.search_books", "description": "", "parameters": {"type": "object", "properties": {}}})]).unwrap();
        assert_eq!(undone_action("Find a book on Rust and book it", &[], &shelf), None);
    }

    /// "Check the CPU ... if it is above 90%, restart ..." with the CPU at `cpu` percent,
    /// checked on a brain answering `answers` in turn.
    fn checked_on_condition(cpu: f64, answers: Vec<AiMessage>) -> (Decision, crate::brain::scripted::Scripted) {
        let looked = call("call_001", "monitor.cpu_usage", json!({"host": "web-03"}));
        let messages = vec![
            Message::user("Check the CPU on host web-03. If it is above 90%, restart the web deployment in the prod namespace."),
            Message::Assistant(AiMessage::calls(vec![looked.clone()])),
            Message::Tool(ToolMessage::success(&looked, json!({"host": "web-03", "cpu_percent": cpu, "window_minutes": 5}))),
        ];
        let schema = |name: &str, props: Value| json!({"type": "function", "function": {"name": name, "description": "", "parameters": {"type": "object", "properties": props}}});
        let schemas = vec![
            schema("monitor.cpu_usage", json!({"host": {"type": "string"}})),
            schema("k8s.rollout_restart", json!({"deployment": {"type": "string"}, "namespace": {"type": "string"}})),
            schema("k8s.scale_deployment", json!({"deployment": {"type": "string"}, "replicas": {"type": "integer"}})),
        ];
        checked_after(&messages, schemas, "It needs a restart.", answers)
    }

    #[test]
    fn an_action_on_a_condition_the_results_meet_is_done_and_on_one_they_do_not_is_not() {
        let restart = call("call_002", "k8s.rollout_restart", json!({"deployment": "web", "namespace": "prod"}));
        // 97.2% is above 90%: answered, the request is asked again with the tool that restarts.
        let (decided, brain) = checked_on_condition(97.2, vec![AiMessage::answer("Restarting."), AiMessage::calls(vec![restart.clone()])]);
        assert_eq!(decided.ai.tool_calls, [restart.clone()]);
        assert_eq!(brain.offered[1], ["k8s.rollout_restart"]);
        // 42% is not: nothing is pushed, and a restart the model makes anyway goes.
        let (decided, brain) = checked_on_condition(42.0, vec![AiMessage::answer("No restart needed.")]);
        assert!(decided.ai.tool_calls.is_empty() && brain.offered.len() == 1);
        let (decided, _) = checked_on_condition(42.0, vec![AiMessage::calls(vec![restart])]);
        assert!(decided.ai.tool_calls.is_empty(), "{:?}", decided.ai);
        assert!(decided.report.warnings.iter().any(|w| w.contains("k8s.rollout_restart: the request asks for it only on a condition")), "{:?}", decided.report.warnings);
        // Another tool's call is not the conditioned action: it stays to be judged as before.
        let scale = call("call_002", "k8s.scale_deployment", json!({"deployment": "web"}));
        let (decided, _) = checked_on_condition(42.0, vec![AiMessage::calls(vec![scale.clone()])]);
        assert_eq!(decided.ai.tool_calls, [scale]);
    }

    #[test]
    fn a_new_call_of_a_tool_an_english_request_does_not_ask_for_is_dropped() {
        let history = call("call_001", "carcare.service_history", json!({"vehicle_id": "VH-20931"}));
        let recalls = call("call_002", "carcare.recall_check", json!({"vin": "4T1B11HK7KU317542"}));
        let done = vec![(history.clone(), r#"{"visits": [{"date": "2025-01-18", "center": "SC-118"}]}"#.to_string()), (recalls, "{}".to_string())];
        let question = "When was my car VH-20931 last in the shop, and does it have any open recalls? The VIN is 4T1B11HK7KU317542.";
        let progress = Progress { question: question.into(), done: done.clone() };
        let slots = call("call_003", "carcare.find_slots", json!({"center_id": "SC-118", "service": "oil_change", "date": "2025-01-18"}));
        let mut calls = vec![slots.clone()];
        assert_eq!(unasked_tools(&mut calls, &progress), [Dropped::Unasked("carcare.find_slots".into())]);
        assert!(calls.is_empty());
        // A tool the request names, a value it writes, a tool already called: asked.
        let booking = "Check VH-20931's history, then book an oil change at the center it last visited.";
        let book = call("call_003", "carcare.book_service", json!({"vehicle_id": "VH-20931", "center_id": "SC-118"}));
        let mut calls = vec![book.clone(), history.clone()];
        assert!(unasked_tools(&mut calls, &Progress { question: booking.into(), done: done.clone() }).is_empty());
        assert_eq!(calls, [book, history]);
        let mut calls = vec![call("call_003", "carcare.find_slots", json!({"center_id": "SC-204"}))];
        assert!(unasked_tools(&mut calls, &Progress { question: "Any free slots at SC-204?".into(), done: done.clone() }).is_empty());
        // A tool named for the doer of a verb the request writes: the seeds' search, then read.
        let search = call("call_001", "local_file_search", json!({"query": "VPN"}));
        let read = call("call_002", "file_reader", json!({"path": "docs/onboarding.md", "max_chars": 2000}));
        let found = Progress { question: "Find the file that mentions the VPN, then read that file.".into(), done: vec![(search.clone(), "{}".into())] };
        let mut calls = vec![read.clone()];
        assert!(unasked_tools(&mut calls, &found).is_empty() && calls == [read.clone()]);
        let convert = call("call_002", "format_converter", json!({"path": "docs/onboarding.md"}));
        let mut calls = vec![convert, read];
        let asked = Progress { question: "Find the file that mentions the VPN, then convert it to JSON.".into(), done: vec![(search, "{}".into())] };
        assert_eq!(unasked_tools(&mut calls, &asked), [Dropped::Unasked("file_reader".into())]);
        assert_eq!(calls.len(), 1);
        // A Chinese request is not judged.
        let mut calls = vec![slots];
        assert!(unasked_tools(&mut calls, &Progress { question: "我的车 VH-20931 上次什么时候保养的？".into(), done }).is_empty());
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn a_call_with_an_invented_value_is_dropped() {
        let messages = dentist();
        let progress = progress(&messages).unwrap();
        let text = conversation_text(&messages);
        let cancel = call("call_002", "calendar.cancel_event", json!({"event_id": "1234567890"}));
        let (kept, dropped) = new_calls(vec![cancel], &progress, &tools(), &text);
        assert!(kept.is_empty());
        assert_eq!(dropped[0].to_string(), r#"calendar.cancel_event: event_id = "1234567890" comes from neither the user nor a tool result"#);
    }

    #[test]
    fn a_retry_keeps_the_values_of_the_call_it_retries() {
        let tools = ToolSpec::parse_all(&[json!({"name": "social.schedule_post", "description": "", "parameters": {"type": "object", "properties": {
            "text": {"type": "string"}, "publish_at": {"type": "string"}, "timezone": {"type": "string"}}}})])
        .unwrap();
        let failed = call("call_001", "social.schedule_post", json!({"text": "平安夜快乐！", "publish_at": "2025-12-24 8:00 PM", "timezone": "Asia/Shanghai"}));
        let error = r#"{"status":"error","error":"invalid publish_at '2025-12-24 8:00 PM': expected YYYY-MM-DD HH:MM, 24-hour clock"}"#;
        let progress = Progress { question: "帮我定时在微博发一条“平安夜快乐！”，北京时间 2025 年 12 月 24 日晚上 8 点发。".into(), done: vec![(failed, error.into())] };
        let text = format!("{}\n{error}", progress.question);
        let retry = call("call_002", "social.schedule_post", json!({"text": "平安夜快乐！", "publish_at": "2025-12-24 20:00", "timezone": "Asia/Shanghai"}));
        let (kept, dropped) = new_calls(vec![retry.clone()], &progress, &tools, &text);
        assert_eq!((kept, dropped), (vec![retry], vec![]));
        // A value the earlier call did not hold still has to be written somewhere.
        let elsewhere = call("call_002", "social.schedule_post", json!({"text": "平安夜快乐！", "publish_at": "2025-12-24 20:00", "timezone": "Europe/Paris"}));
        let (kept, dropped) = new_calls(vec![elsewhere], &progress, &tools, &text);
        assert!(kept.is_empty());
        assert_eq!(dropped[0].to_string(), r#"social.schedule_post: timezone = "Europe/Paris" comes from neither the user nor a tool result"#);
    }

    #[test]
    fn numbers_must_be_written_in_the_conversation_or_be_the_default() {
        let tools = ToolSpec::parse_all(&[json!({"type": "function", "function": {"name": "restaurants.book", "description": "", "parameters": {"type": "object", "properties": {
            "party_size": {"type": "integer"}, "date": {"type": "string"}, "hours": {"type": "integer", "default": 2}}}}})])
        .unwrap();
        let messages = vec![Message::user("订 2025-05-20 晚上 7 点 4 个人的位子，预算 1,200 元，再加两瓶水")];
        let progress = Progress { question: String::new(), done: Vec::new() };
        let text = conversation_text(&messages);
        let book = |args: Value| new_calls(vec![call("c", "restaurants.book", args)], &progress, &tools, &text);
        for ok in [json!({"party_size": 4}), json!({"party_size": 1200}), json!({"party_size": 2}), json!({"party_size": 7, "hours": 2}), json!({"date": "2025-05-20"})] {
            assert_eq!(book(ok.clone()).0.len(), 1, "{ok}");
        }
        // 20 is only the date's day, 2025 its year: not written as numbers.
        for invented in [json!({"party_size": 20}), json!({"party_size": 1000000}), json!({"party_size": 4, "hours": 3})] {
            let (kept, dropped) = book(invented.clone());
            assert!(kept.is_empty(), "{invented}");
            assert!(matches!(&dropped[0], Dropped::Invented { .. }), "{dropped:?}");
        }
        assert!(numbers_written(&normalized("rate 7.25% of $1,849.00")).contains(&1849.0));
        assert!(numbers_written("7.25%").contains(&7.25));
    }

    #[test]
    fn values_are_found_whatever_their_case_blanks_and_closing_stop() {
        let haystack = normalized("内容“会议改到下周一上午10点。” Mail Anna.Schmidt@nordwerk.de");
        assert!(found("会议改到下周一上午10点.", &haystack));
        assert!(found("anna.schmidt@nordwerk.de", &haystack));
        assert!(found("2022-07-04", &haystack), "a date in another notation");
        assert!(!found("Free-text note.", &haystack));
        assert!(!found("12345", &haystack));
    }
}
