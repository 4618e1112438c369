//! A new question after a finished turn, asked as a fresh request.
//!
//! After a turn that ended in an answer, a small model answers the next question too,
//! whatever it asks: on the dev split's follow-ups that need a call (the same tool with new
//! values, `那成都呢？`, or another tool altogether) the 0.5B answered in 14 of 15 under
//! prompt_json and 15 of 15 under builtin, inventing the values. Asked as a fresh request it
//! calls. So (profile field `fresh_follow_up`) such a question is asked as one user message:
//! the earlier turns written into it as context (questions, calls with their results,
//! answers), then the new request. A call that repeats an earlier one, or whose values
//! neither the user nor a tool wrote, is dropped ([`next_step::new_calls`]); with no call
//! left, the conversation decides as before.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::echo;
use super::next_step::{self, spaced, Progress};
use super::synthesis;
use super::{Brain, BrainError, Decision, DecisionRequest, TokenSink};
use crate::protocol::{AiMessage, Message, Phase, Stream, Strategy, ToolCall, ToolCalling};
use crate::text::{normalized, numbers_written};
use crate::tools::spec::ToolSpec;

/// The most characters of one earlier tool result written into the request.
const MAX_RESULT_CHARS: usize = 600;

/// Where the raw text starts when the follow-up was asked afresh.
pub const MARK: &str = "[follow-up asked afresh: the earlier turns written into the request]\n";

/// How the request asked afresh starts, and what comes before its new question.
const EARLIER: &str = "Earlier in this conversation:\n";
const NEW_REQUEST: &str = "\nNew request: ";

/// The new question of a follow-up asked afresh ([`request`]'s user message), else `question`.
pub fn new_question(question: &str) -> &str {
    match question.strip_prefix(EARLIER).and_then(|rest| rest.rsplit_once(NEW_REQUEST)) {
        Some((_, new)) => new,
        None => question,
    }
}

/// `messages` asked afresh, when they end with a new question after a finished turn: the
/// leading system message (if any) and one user message with the earlier turns and the
/// question. `None` when there is no earlier turn with an answer.
pub fn request(messages: &[Message]) -> Option<Vec<Message>> {
    let latest = messages.iter().rposition(|m| matches!(m, Message::User { .. }))?;
    if latest + 1 != messages.len() || !messages[..latest].iter().any(|m| matches!(m, Message::Assistant(_))) {
        return None;
    }
    let Message::User { content: question } = &messages[latest] else { return None };
    let mut out = Vec::new();
    let mut text = String::from(EARLIER);
    let mut results = synthesis::results_with_calls(&messages[..latest]).into_iter();
    for message in &messages[..latest] {
        match message {
            Message::System { .. } => out.push(message.clone()),
            Message::User { content } => text.push_str(&format!("- The user asked: {}\n", content.trim())),
            Message::Assistant(ai) if !ai.content.trim().is_empty() => text.push_str(&format!("- You answered: {}\n", ai.content.trim())),
            Message::Assistant(_) => {}
            Message::Tool(_) => {
                let Some(result) = results.next() else { continue };
                let args = result.call.map(|c| spaced(&Value::Object(c.args.clone())));
                let shown = serde_json::from_str::<Value>(result.content).map_or_else(|_| result.content.to_string(), |v| spaced(&v));
                let cut: String = shown.chars().take(MAX_RESULT_CHARS).collect();
                let more = if cut.len() < shown.len() { " ..." } else { "" };
                text.push_str(&format!("  - {}({}) returned {cut}{more}\n", result.name, args.unwrap_or_default()));
            }
        }
    }
    text.push_str(&format!("{NEW_REQUEST}{}", question.trim()));
    out.push(Message::user(text));
    Some(out)
}

/// The decision for a follow-up asked afresh on `brain`: its answer, or its calls but those
/// that repeat an earlier call or carry a value nobody wrote. `None` (the conversation
/// decides) when `request` is no follow-up, or the fresh decision is invalid or made only
/// calls that were dropped.
pub fn ask(brain: &mut dyn Brain, request: &DecisionRequest, on_token: TokenSink<'_>, cancel: &AtomicBool) -> Result<Option<Decision>, BrainError> {
    if request.phase != Phase::React {
        return Ok(None);
    }
    let Some(messages) = self::request(&request.messages) else { return Ok(None) };
    on_token(Stream::Text(MARK));
    // In the envelope prompt under builtin too: asked afresh in its own format the 0.5B
    // still answered 9 of the dev split's 15 follow-ups that need a call.
    // Uncalibrated: a call of the tool already called is what tells a repeat (divided out,
    // the 0.5B named another tool for what the results already answered, dev multi_turn_103).
    let fresh = DecisionRequest {
        messages,
        tool_calling: ToolCalling::PromptJson,
        strategy: Some(Strategy::CallsFirst),
        name_calibration: Some(0.0),
        ..request.clone()
    };
    let mut decided = brain.decide(&fresh, on_token, cancel)?;
    if !decided.valid() {
        return Ok(None);
    }
    decided.raw_output = format!("{MARK}{}", decided.raw_output);
    decided.report.tool_calling = request.tool_calling;
    let earlier = earlier_calls(&request.messages);
    let tools = ToolSpec::parse_all(&request.tools).unwrap_or_default();
    if decided.ai.tool_calls.is_empty() {
        if repeats_an_earlier_answer(&decided.ai.content, &request.messages) {
            return Ok(Some(ask_pushed(brain, decided, &fresh, &earlier, &tools, &request.messages, on_token, cancel)?));
        }
        decided.report.warnings.push("follow-up asked afresh: answered".into());
        return Ok(Some(decided));
    }
    let (calls, dropped) = next_step::new_calls(decided.ai.tool_calls.clone(), &earlier, &tools, &next_step::conversation_text(&request.messages));
    decided.report.warnings.extend(dropped.iter().map(|why| format!("follow-up: dropped {why}")));
    if calls.is_empty() {
        return Ok(None);
    }
    // The model's first thought was to fetch again what the results hold ("Which one is
    // rated highest?": the search again, then a price history nobody asked for; "哪个地区最少？":
    // the query again, then the list of tables): calls that take nothing from the new
    // question are no new step, and the conversation decides.
    let repeated = dropped.iter().any(|d| matches!(d, next_step::Dropped::Repeat(_)));
    let question = super::last_question(&request.messages).unwrap_or_default();
    if repeated && !calls.iter().any(|call| takes_from(call, &tools, question)) {
        decided.report.warnings.push("follow-up asked afresh: only calls that take nothing from the new question, left to the conversation".into());
        return Ok(None);
    }
    decided.report.warnings.push("follow-up asked afresh: called".into());
    decided.ai = AiMessage::calls(calls);
    Ok(Some(decided))
}

/// How far a follow-up whose fresh answer only repeated an earlier answer is pushed from
/// answering toward a call when it is asked again (logits; as [`next_step`]'s push).
const REPEAT_CALL_PUSH: f32 = 30.0;

/// Whether `answer` says an earlier answer of `messages` again, all of it ([`echo::echoes`]):
/// no answer to a new question. Asked "How many calories are in 240 g of cooked chickpeas?"
/// after a recipe search, the 0.5B gave the recipes' answer word for word, asked afresh too
/// (dev `multi_turn_148`, both ways).
fn repeats_an_earlier_answer(answer: &str, messages: &[Message]) -> bool {
    let latest = messages.iter().rposition(|m| matches!(m, Message::User { .. })).unwrap_or(messages.len());
    !answer.trim().is_empty()
        && messages[..latest].iter().any(|m| matches!(m, Message::Assistant(ai) if !ai.content.trim().is_empty() && echo::echoes(answer, &ai.content)))
}

/// Asks `fresh` again pushed to call, where its answer (`decided`) repeated an earlier one:
/// the new calls that are a next step stand; with none, the first answer does, with a
/// warning either way. The second decision's raw text and figures join the first's.
#[allow(clippy::too_many_arguments)]
fn ask_pushed(
    brain: &mut dyn Brain,
    mut decided: Decision,
    fresh: &DecisionRequest,
    earlier: &Progress,
    tools: &[ToolSpec],
    messages: &[Message],
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<Decision, BrainError> {
    on_token(Stream::Text(REPEAT_MARK));
    let pushed = DecisionRequest { answer_bias: Some(-REPEAT_CALL_PUSH), ..fresh.clone() };
    let again = brain.decide(&pushed, on_token, cancel)?;
    decided.raw_output = format!("{}{REPEAT_MARK}{}", decided.raw_output, again.raw_output);
    super::decision::add_generation(&mut decided.report.stats, &again.report.stats);
    let (calls, dropped) = if again.valid() {
        next_step::new_calls(again.ai.tool_calls.clone(), earlier, tools, &next_step::conversation_text(messages))
    } else {
        (Vec::new(), Vec::new())
    };
    decided.report.warnings.extend(dropped.iter().map(|why| format!("follow-up: dropped {why}")));
    if calls.is_empty() {
        decided.report.warnings.push("follow-up asked afresh: answered with an earlier answer again; asked again pushed to call, no new call: answered".into());
    } else {
        decided.report.warnings.push(format!("follow-up asked afresh: answered with an earlier answer again (the first: {}); asked again pushed to call: called", decided.ai.content.trim()));
        decided.ai = AiMessage::calls(calls);
    }
    Ok(decided)
}

/// Where the raw text goes on when a follow-up's answer repeated an earlier one.
pub const REPEAT_MARK: &str = "\n\n[the answer repeated an earlier answer: asked again pushed to call]\n";

/// Whether `call` holds a value `question` writes: a string (not an enum's choice) or a
/// number (not the parameter's default).
fn takes_from(call: &ToolCall, tools: &[ToolSpec], question: &str) -> bool {
    let haystack = normalized(question);
    let numbers = numbers_written(&haystack);
    let properties = tools.iter().find(|t| t.name == call.name).and_then(|t| t.parameters().get("properties").cloned());
    call.args.iter().any(|(param, value)| {
        let spec = properties.as_ref().and_then(|p| p.get(param));
        if spec.is_some_and(next_step::choices_only) {
            return false;
        }
        let default = spec.and_then(|s| s.get("default"));
        let mut leaves = Vec::new();
        next_step::collect_leaves(value, &mut leaves);
        leaves.iter().any(|leaf| match leaf {
            Value::String(text) => {
                let wanted = normalized(text);
                !wanted.is_empty() && haystack.contains(&wanted)
            }
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                default.and_then(Value::as_f64) != Some(x) && next_step::number_stated(x, None, &numbers)
            }
            _ => false,
        })
    })
}

/// The calls made before the latest question, with their results.
fn earlier_calls(messages: &[Message]) -> Progress {
    let done = synthesis::results_with_calls(messages)
        .into_iter()
        .filter_map(|result| Some((result.call?.clone(), result.content.to_string())))
        .collect();
    Progress { question: String::new(), done }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{ToolCall, ToolMessage};

    fn air(city: &str) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "weather.air_quality".into(), args: json!({"city": city}).as_object().unwrap().clone() }
    }

    fn conversation() -> Vec<Message> {
        vec![
            Message::system("记住：用户叫小王。"),
            Message::user("北京今天空气质量怎么样？"),
            Message::Assistant(AiMessage::calls(vec![air("北京")])),
            Message::Tool(ToolMessage::success(&air("北京"), json!({"city": "北京", "aqi": 156}))),
            Message::Assistant(AiMessage::answer("北京当前 AQI 为 156。")),
            Message::user("那成都呢？"),
        ]
    }

    #[test]
    fn a_follow_up_is_one_request_with_the_earlier_turns_written_in() {
        let asked = request(&conversation()).unwrap();
        assert_eq!(asked[0], Message::system("记住：用户叫小王。"));
        let Message::User { content } = &asked[1] else { panic!("{asked:?}") };
        assert_eq!(
            content,
            "Earlier in this conversation:\n- The user asked: 北京今天空气质量怎么样？\n  - weather.air_quality({\"city\": \"北京\"}) returned \
             {\"status\": \"success\", \"output\": {\"city\": \"北京\", \"aqi\": 156}}\n- You answered: 北京当前 AQI 为 156。\n\nNew request: 那成都呢？"
        );
        assert_eq!(asked.len(), 2);
        assert_eq!(new_question(content), "那成都呢？");
        assert_eq!(new_question("那成都呢？"), "那成都呢？");
    }

    #[test]
    fn only_a_new_question_after_an_earlier_turn_is_a_follow_up() {
        let messages = conversation();
        // The first question; a turn still waiting for its results' answer.
        assert_eq!(request(&messages[..2]), None);
        assert_eq!(request(&messages[..4]), None);
        assert_eq!(request(&[Message::user("hi")]), None);
        // The calls already made are what a fresh call may not repeat.
        let earlier = earlier_calls(&messages);
        assert_eq!(earlier.done.len(), 1);
        assert_eq!(earlier.done[0].0, air("北京"));
    }

    fn tool_call(name: &str, args: Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    /// A search for earbuds with its results and answer, then `question`, asked on a brain
    /// whose fresh decision is `calls`.
    fn asked(question: &str, calls: Vec<ToolCall>) -> Option<Decision> {
        let search = tool_call("shop.search_products", json!({"query": "wireless earbuds", "max_price": 100}));
        let messages = vec![
            Message::user("Search electronics for wireless earbuds under $100."),
            Message::Assistant(AiMessage::calls(vec![search.clone()])),
            Message::Tool(ToolMessage::success(&search, json!({"results": [
                {"product_id": "SKU-41822", "name": "Soundcore Liberty 4 NC", "rating": 4.4},
                {"product_id": "SKU-45210", "name": "Jabra Elite 4", "rating": 4.6}]}))),
            Message::Assistant(AiMessage::answer("Two: Soundcore Liberty 4 NC (4.4) and Jabra Elite 4 (4.6).")),
            Message::user(question),
        ];
        let tools = vec![
            json!({"name": "shop.search_products", "description": "Search products.", "parameters": {"type": "object", "properties": {
                "query": {"type": "string"}, "max_price": {"type": "number"}}, "required": ["query"]}}),
            json!({"name": "shop.price_history", "description": "Price history of a product.", "parameters": {"type": "object", "properties": {
                "product_id": {"type": "string"}, "days": {"type": "integer", "default": 30}}, "required": ["product_id"]}}),
        ];
        let request = crate::brain::scripted::request(&messages, tools);
        let mut brain = crate::brain::scripted::Scripted::new(crate::brain::Profile::default(), vec![AiMessage::calls(calls)]);
        let decided = ask(&mut brain, &request, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        // Asked afresh uncalibrated: a call of the tool already called is how a repeat is told.
        assert_eq!(brain.calibrations, [Some(0.0)]);
        decided
    }

    #[test]
    fn a_follow_up_whose_fresh_calls_fetch_again_and_take_nothing_from_it_is_left_to_the_conversation() {
        let again = tool_call("shop.search_products", json!({"query": "wireless earbuds", "max_price": 100}));
        let history = tool_call("shop.price_history", json!({"product_id": "SKU-41822"}));
        assert!(asked("Which one is rated highest?", vec![again.clone(), history.clone()]).is_none());
        // A value of the new question: a new step.
        let decided = asked("Show the price history of SKU-41822 over 90 days.", vec![again.clone(), history.clone()]).unwrap();
        assert_eq!(decided.ai.tool_calls.len(), 1);
        assert_eq!(decided.ai.tool_calls[0].name, "shop.price_history");
        // No repeat first: the calls stand as before (their values are judged elsewhere).
        let decided = asked("Which one is rated highest?", vec![history]).unwrap();
        assert_eq!(decided.ai.tool_calls.len(), 1);
    }

    #[test]
    fn a_fresh_answer_that_repeats_an_earlier_answer_is_asked_again_pushed_to_call() {
        let search = tool_call("recipes.search", json!({"ingredients": ["chickpeas", "spinach"]}));
        let earlier = "Two fit: Chickpea and Spinach Curry (25 minutes) and Garlicky Chickpeas with Spinach (15 minutes).";
        let messages = vec![
            Message::user("Find me a recipe with chickpeas and spinach."),
            Message::Assistant(AiMessage::calls(vec![search.clone()])),
            Message::Tool(ToolMessage::success(&search, json!({"recipes": [{"title": "Chickpea and Spinach Curry", "minutes": 25}]}))),
            Message::Assistant(AiMessage::answer(earlier)),
            Message::user("Nice. How many calories are in 240 g of cooked chickpeas?"),
        ];
        let tools = vec![
            json!({"name": "recipes.search", "description": "Find recipes.", "parameters": {"type": "object", "properties": {
                "ingredients": {"type": "array", "items": {"type": "string"}}}, "required": ["ingredients"]}}),
            json!({"name": "nutrition.lookup", "description": "Calories of a food.", "parameters": {"type": "object", "properties": {
                "food": {"type": "string"}, "grams": {"type": "number"}}, "required": ["food"]}}),
        ];
        let request = crate::brain::scripted::request(&messages, tools);
        let ask_with = |replies: Vec<AiMessage>| {
            let mut brain = crate::brain::scripted::Scripted::new(crate::brain::Profile::default(), replies);
            let decided = ask(&mut brain, &request, &mut |_| {}, &AtomicBool::new(false)).unwrap().unwrap();
            (decided, brain.pushed)
        };
        let lookup = tool_call("nutrition.lookup", json!({"food": "chickpeas", "grams": 240}));
        // The earlier answer again: asked again pushed to call, and the new call stands.
        let (decided, pushed) = ask_with(vec![AiMessage::answer(earlier), AiMessage::calls(vec![lookup.clone()])]);
        assert_eq!(pushed, [None, Some(-REPEAT_CALL_PUSH)]);
        assert_eq!(decided.ai.tool_calls, [lookup]);
        assert!(decided.raw_output.contains(REPEAT_MARK), "{}", decided.raw_output);
        // Pushed, it only fetched again what the results hold: the answer stands.
        let (decided, pushed) = ask_with(vec![AiMessage::answer(earlier), AiMessage::calls(vec![search.clone()])]);
        assert_eq!(pushed.len(), 2);
        assert!(decided.ai.tool_calls.is_empty() && decided.ai.content == earlier);
        assert!(decided.report.warnings.iter().any(|w| w.contains("no new call")), "{:?}", decided.report.warnings);
        // An answer of its own is not asked again.
        let (decided, pushed) = ask_with(vec![AiMessage::answer("About 390 kcal.")]);
        assert_eq!(pushed, [None]);
        assert_eq!(decided.ai.content, "About 390 kcal.");
    }
}
