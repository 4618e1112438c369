//! Calls made up to fit a request no offered tool does, dropped.
//!
//! Asked for something none of its tools does (order a pizza, call one's mom, show last
//! week's blood pressure), a small model calls the tool nearest to it anyway and fills its
//! required arguments with values of its own: on the dev split, 11 of the 37 wrong
//! decisions on irrelevance questions (both ways) filled a required number or a phone
//! number the conversation never wrote, and no right decision did. So (profile field
//! `drop_made_up_calls`) such calls are dropped ([`made_up_calls`]); when none is left, the
//! results the question already has are answered from, and with none, the question is
//! asked again with no tools, and that answer is the decision.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::next_step::{collect_leaves, number_stated};
use super::{decision, faithful, synthesis, Brain, BrainError, Decision, DecisionRequest, DecisionStatus, TokenSink};
use crate::protocol::{AiMessage, Message, Stream, ToolCall};
use crate::text::{digits_written, is_cjk, normalized};
use crate::tools::spec::ToolSpec;

/// Where the raw text goes on with the question answered without tools.
pub(crate) const NO_TOOLS_MARK: &str = "\n\n[calls that do not fit the request dropped: the question asked again without tools]\n";

/// Drops `decided`'s made-up calls ([`made_up_calls`], profile field `drop_made_up_calls`),
/// or all of them where the request's action is one none of their tools does
/// ([`super::unfit_action`], `drop_unfit_actions`); when that leaves neither a call nor
/// results to answer from (`answer_from_results` on and results for the question), asks
/// `request` again on `brain` with no tools, and its answer is the decision.
pub fn drop(
    brain: &mut dyn Brain,
    decided: &mut Decision,
    request: &DecisionRequest,
    messages: &[Message],
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<(), BrainError> {
    // The tools were checked when the decision was made.
    let tools = ToolSpec::parse_all(&request.tools).unwrap_or_default();
    let (unfit_on, made_up_on) = (brain.profile().drop_unfit_actions, brain.profile().drop_made_up_calls);
    let mut dropped: Vec<(usize, String)> = Vec::new();
    // The action no offered tool does, where that is why the calls went.
    let mut undoable: Option<String> = None;
    // A fresh request whose action none of the calls' tools does: every call goes.
    let fresh = super::calls_since_question(messages).is_empty();
    let question = super::last_question(messages).map(super::follow_up::new_question);
    if let (true, true, Some(question)) = (unfit_on, fresh, question) {
        if let Some(unfit) = super::unfit_action::unfit(&decided.ai.tool_calls, &tools, question) {
            if redirect(brain, decided, request, &unfit, on_token, cancel)? {
                return Ok(());
            }
            let action = &unfit.action;
            undoable = Some(action.clone());
            dropped = decided.ai.tool_calls.iter().enumerate().map(|(i, c)| (i, format!("a call for \"{action}\", which {} does not do, dropped", c.name))).collect();
        }
    }
    if dropped.is_empty() && made_up_on {
        let made_up = made_up_calls(&decided.ai.tool_calls, &tools, &faithful::stated_text(messages));
        dropped = made_up.into_iter().map(|(i, line)| (i, format!("a call with a value nobody wrote, dropped: {line}"))).collect();
    }
    if dropped.is_empty() {
        return Ok(());
    }
    // Places in ascending order: removed from the last, the others stay where they are.
    for (index, _) in dropped.iter().rev() {
        decided.ai.tool_calls.remove(*index);
    }
    decided.report.warnings.extend(dropped.into_iter().map(|(_, line)| line));
    let answers_from_results = brain.profile().answer_from_results && synthesis::results_for_question(messages).is_some();
    if !decided.ai.tool_calls.is_empty() || answers_from_results {
        return Ok(());
    }
    on_token(Stream::Text(NO_TOOLS_MARK));
    let mut asked = messages.to_vec();
    if let Some(action) = &undoable {
        // Asked again with no word of why, the 0.5B restated the request as its answer
        // ("Can you order a large pepperoni pizza ...?" for an order no tool places).
        asked.push(Message::system(cannot_note(action)));
    }
    let without_tools = DecisionRequest { messages: asked, tools: Vec::new(), ..request.clone() };
    let answered = brain.decide(&without_tools, on_token, cancel)?;
    decision::add_generation(&mut decided.report.stats, &answered.report.stats);
    decided.raw_output.push_str(NO_TOOLS_MARK);
    decided.raw_output.push_str(&answered.raw_output);
    decided.report.warnings.extend(answered.report.warnings.iter().cloned());
    decided.ai = AiMessage::answer(answered.ai.content.trim());
    if decided.ai.content.is_empty() {
        decided.report.status = DecisionStatus::Invalid;
        decided.report.error = Some(answered.report.error.clone().unwrap_or_else(|| "asked without tools, the model gave no answer".into()));
    }
    Ok(())
}

/// What the model is told where the request's action is one no offered tool does.
pub(crate) fn cannot_note(action: &str) -> String {
    format!("None of your tools can do what the user asks here (\"{action}\"). In one or two short sentences, in the user's language, tell them you cannot do it and how they could do it themselves.")
}

/// Asks `request` again with only the tools that do the action its calls do not
/// ([`super::unfit_action`]); where that gives calls, they are the decision, or, where it
/// made several calls (several tasks, this one left out), are added to them (true).
fn redirect(
    brain: &mut dyn Brain,
    decided: &mut Decision,
    request: &DecisionRequest,
    unfit: &super::unfit_action::Unfit,
    on_token: TokenSink<'_>,
    cancel: &AtomicBool,
) -> Result<bool, BrainError> {
    if unfit.doers.is_empty() {
        return Ok(false);
    }
    let doers = crate::tools::spec::only_named(&request.tools, &unfit.doers);
    let mark = format!("\n\n[the request asks to {}, which these calls do not: asked again with {} alone]\n", unfit.action, unfit.doers.join(", "));
    on_token(Stream::Text(&mark));
    let narrowed = DecisionRequest { tools: doers, ..request.clone() };
    let redone = brain.decide(&narrowed, on_token, cancel)?;
    decision::add_generation(&mut decided.report.stats, &redone.report.stats);
    decided.raw_output.push_str(&mark);
    decided.raw_output.push_str(&redone.raw_output);
    if !redone.valid() || redone.ai.tool_calls.is_empty() {
        decided.report.warnings.push(format!("asked again with {} alone for \"{}\", the model made no call", unfit.doers.join(", "), unfit.action));
        return Ok(false);
    }
    let was: Vec<&str> = decided.ai.tool_calls.iter().map(|c| c.name.as_str()).collect();
    decided.report.warnings.extend(redone.report.warnings.iter().cloned());
    if was.len() >= 2 {
        // Several calls: the model saw several tasks and left this one out.
        decided.report.warnings.push(format!("calls to {} do not {}: the calls {} give for it added", was.join(", "), unfit.action, unfit.doers.join(", ")));
        let mut added = redone.ai.tool_calls;
        for call in &mut added {
            let taken = |id: &str| decided.ai.tool_calls.iter().any(|c| c.id == id);
            if taken(&call.id) {
                call.id = (1..).map(|k| format!("call_{k:03}")).find(|id| !taken(id)).unwrap_or_default();
            }
            decided.ai.tool_calls.push(call.clone());
        }
    } else {
        decided.report.warnings.push(format!("calls to {} do not {}: asked again with {} alone", was.join(", "), unfit.action, unfit.doers.join(", ")));
        decided.ai = redone.ai;
    }
    Ok(true)
}

/// The calls of `calls` (their places, with `tool: param = value`) that fill a required
/// argument with a value the conversation (`conversation`: [`faithful::stated_text`]) never writes and
/// that cannot be read from its words: a number (`party_size: 4` to order a pizza, `amount:
/// 1000` to look up a credit card's limit, `amount_ml: 100` to show blood pressure readings)
/// or a string with a run of five figures or more (`phone_number: "+1234567890"` to call
/// one's mom). A small model asked for something no offered tool does fills a tool that is
/// near it with such values. Enum choices, booleans and other strings are not judged (a
/// name may be translated, `Apple` may be `AAPL`); a number's sign and a percentage's
/// fraction are read as written ([`number_stated`]), so is a parameter's default.
pub fn made_up_calls(calls: &[ToolCall], tools: &[ToolSpec], conversation: &str) -> Vec<(usize, String)> {
    let haystack = normalized(conversation);
    // Any figures count, parted by any mark (`2x^2 - 3x - 5` writes 3, though `2-3` would
    // read as a date): a number taken for written only keeps a call.
    let mut numbers = super::stated_times::numbers_stated(&haystack);
    numbers.extend(digits_written(&haystack.replace([',', '-', '/', ':'], " ")));
    let figures_only: String = haystack.chars().filter(|c| !matches!(c, '-' | '+' | '(' | ')' | '.' | '/')).collect();
    let words = Words::of(conversation);
    let mut out = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else { continue };
        let properties = tool.parameters().get("properties");
        let made_up = tool.required().iter().find_map(|param| {
            let value = call.args.get(param)?;
            let spec = properties.and_then(|p| p.get(param));
            if spec.is_some_and(super::next_step::choices_only) {
                return None;
            }
            let default = spec.and_then(|s| s.get("default"));
            let mut leaves = Vec::new();
            required_leaves(value, spec, &mut leaves);
            if let Value::String(text) = value {
                if words.made_up(text) {
                    return Some(format!("{}: {param} = {value}", call.name));
                }
            }
            let unstated = leaves.iter().any(|leaf| match leaf {
                Value::Number(n) => !number_stated(n.as_f64().unwrap_or(f64::NAN), default, &numbers),
                Value::String(text) => long_figures(text).any(|run| !figures_only.contains(run)),
                _ => false,
            });
            unstated.then(|| format!("{}: {param} = {value}", call.name))
        });
        if let Some(line) = made_up {
            out.push((index, line));
        }
    }
    out
}

/// The leaves of `value` (its schema `spec`) that the call must have: inside an object with
/// properties, only its required keys', all the way down. An optional key inside an object
/// (`ttl`, `priority` of a DNS record nobody gave them for) is the model filling what it may
/// leave out: [`super::faithful::drop_unstated_optional`] leaves it out, and it tells nothing of
/// whether the call itself was made up (the record's name, type and value the request wrote).
fn required_leaves<'a>(value: &'a Value, spec: Option<&Value>, out: &mut Vec<&'a Value>) {
    let properties = spec.and_then(|s| s.get("properties")).and_then(Value::as_object);
    match (value, properties) {
        (Value::Object(map), Some(properties)) => {
            let required: Vec<&str> = spec.and_then(|s| s.get("required")).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            for (key, inner) in map {
                if required.contains(&key.as_str()) {
                    required_leaves(inner, properties.get(key), out);
                }
            }
        }
        (Value::Array(items), _) => items.iter().for_each(|v| required_leaves(v, spec.and_then(|s| s.get("items")), out)),
        _ => collect_leaves(value, out),
    }
}

/// The words of a conversation, to judge a required string value by: a placeholder (`...`)
/// is made up in any conversation; in one written in English (no Chinese, Japanese or
/// Korean), so is a value with words none of which the conversation writes, not even
/// their first four letters (`city: "New York"` to say who painted the Mona Lisa,
/// `query: "example query"` to explain TCP). Only words are judged: codes (`AAPL`, `en`),
/// values with figures or signs (paths, `sqrt(2)`, `Asia/Shanghai` for "Beijing time")
/// are read from other words, and nothing is in a conversation in another language,
/// where a value may be its translation.
struct Words {
    lower: String,
    english: bool,
    words: Vec<String>,
}

impl Words {
    fn of(conversation: &str) -> Self {
        Self { lower: conversation.to_lowercase(), english: !conversation.chars().any(is_cjk), words: latin_words(conversation) }
    }

    fn made_up(&self, value: &str) -> bool {
        let value = value.trim();
        if !value.is_empty() && value.chars().all(|c| matches!(c, '.' | '…')) {
            return true;
        }
        let words_only = value.chars().all(|c| c.is_alphabetic() || c.is_whitespace() || matches!(c, '\'' | '.' | ',' | '-' | '&'));
        if !self.english || !words_only || is_code(value) || self.lower.contains(&value.to_lowercase()) {
            return false;
        }
        let stem = |w: &str| w.chars().take(4).collect::<String>();
        let own = latin_words(value);
        !own.is_empty() && !own.iter().any(|w| self.words.iter().any(|c| if w.chars().count() < 4 { c == w } else { stem(c) == stem(w) }))
    }
}

/// The runs of three Latin letters or more in `text`, lowercased.
fn latin_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 3).map(str::to_ascii_lowercase).collect()
}

/// Six or fewer capitals, figures and `. _ -` (`AAPL`, `USD`, `BRK.B`).
fn is_code(value: &str) -> bool {
    value.len() <= 6 && value.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

/// The runs of five figures or more in `text`.
fn long_figures(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_digit()).filter(|run| run.len() >= 5)
}


#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::brain::scripted::Scripted;

    fn tools() -> Vec<ToolSpec> {
        let tool = |name: &str, properties: Value, required: Value| {
            json!({"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties, "required": required}}})
        };
        let tools = [
            tool("restaurants.book", json!({"name": {"type": "string"}, "party_size": {"type": "integer"}, "date": {"type": "string"}}), json!(["name", "party_size"])),
            tool("sms.send", json!({"phone_number": {"type": "string"}, "message": {"type": "string"}}), json!(["phone_number", "message"])),
            tool("stats.median", json!({"numbers": {"type": "array", "items": {"type": "number"}}}), json!(["numbers"])),
            tool("unit.convert", json!({"value": {"type": "number"}, "to": {"type": "string", "enum": ["C", "F"]}, "digits": {"type": "integer", "default": 2}}), json!(["value", "to", "digits"])),
            tool("weather.forecast", json!({"city": {"type": "string"}, "days": {"type": "integer"}}), json!(["city"])),
        ];
        tools.iter().enumerate().map(|(i, t)| ToolSpec::parse(t, i).unwrap()).collect()
    }

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall { id: String::new(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn required_numbers_and_long_figures_nobody_wrote_make_a_call_made_up() {
        let calls = [
            call("restaurants.book", json!({"name": "Pizza Hut", "party_size": 4})),
            call("sms.send", json!({"phone_number": "+1234567890", "message": "Hi mom"})),
        ];
        let found = made_up_calls(&calls, &tools(), "Order a large pepperoni pizza. Then call my mom.");
        let six_thousand = [call("restaurants.book", json!({"name": "A", "party_size": 6000}))];
        assert_eq!(made_up_calls(&six_thousand, &tools(), "转五千欧元，停三个小时").len(), 1);
        assert_eq!(found, [(0, "restaurants.book: party_size = 4".to_string()), (1, r#"sms.send: phone_number = "+1234567890""#.to_string())]);
    }

    #[test]
    fn strings_with_words_an_english_conversation_never_writes_are_made_up() {
        let found = |name: &str, args: Value, conversation: &str| made_up_calls(&[call(name, args)], &tools(), conversation);
        assert_eq!(
            found("weather.forecast", json!({"city": "New York"}), "Who painted the Mona Lisa?"),
            [(0, r#"weather.forecast: city = "New York""#.to_string())]
        );
        assert_eq!(found("weather.forecast", json!({"city": "..."}), "我的快递没收到怎么办？").len(), 1, "a placeholder, any language");
        for (city, conversation) in [
            ("Paris", "What's the weather in paris?"),
            ("New York City", "Weather in New York"),
            ("Hangzhou", "杭州天气怎么样？"),
            ("Europe/Paris", "Weather by Paris time"),
            ("Asia/Shanghai", "It's 9am Beijing time"),
            ("NYC", "Weather at home"),
            ("Munich, Germany", "What's it like in Munich?"),
            ("sqrt(2) * pi", "The square root of two times the circle constant"),
            ("docs/budget_2024.md", "Open the budget notes"),
            ("Springfield", "Weather in springfields"),
        ] {
            assert!(found("weather.forecast", json!({"city": city}), conversation).is_empty(), "{city} / {conversation}");
        }
    }

    #[test]
    fn only_the_keys_an_object_requires_are_judged() {
        let record = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "value": {"type": "string"},
            "ttl": {"type": "integer", "default": 3600}, "priority": {"type": "integer"}},
            "required": ["name", "value"]});
        let tool = json!({"type": "function", "function": {"name": "dns.create_record", "parameters": {"type": "object",
            "properties": {"zone": {"type": "string"}, "record": record, "records": {"type": "array", "items": record}}, "required": ["zone", "record"]}}});
        let tools = [ToolSpec::parse(&tool, 0).unwrap()];
        let asked = "Add an A record web2 -> 198.51.100.14 to the shop.example zone.";
        let filled = call("dns.create_record", json!({"zone": "shop.example", "record": {"name": "web2", "value": "198.51.100.14", "ttl": 7200, "priority": 5}}));
        assert!(made_up_calls(&[filled], &tools, asked).is_empty());
        // A required key inside the object still counts, in a list of objects too.
        let invented = call("dns.create_record", json!({"zone": "shop.example", "record": {"name": "web2", "value": "2001:db8::12345"}}));
        assert_eq!(made_up_calls(&[invented], &tools, asked).len(), 1);
        let mut leaves = Vec::new();
        let listed = json!([{"name": "a", "value": "b", "ttl": 5}]);
        required_leaves(&listed, tools[0].parameters().get("properties").and_then(|p| p.get("records")), &mut leaves);
        assert_eq!(leaves, [&json!("a"), &json!("b")]);
    }

    #[test]
    fn values_the_conversation_writes_in_any_notation_are_not_made_up() {
        for (name, args, conversation) in [
            ("restaurants.book", json!({"name": "Luigi's", "party_size": 4}), "Book Luigi's for four."),
            ("restaurants.book", json!({"name": "Luigi's", "party_size": 4}), "订 Luigi's，四个人"),
            ("sms.send", json!({"phone_number": "+86 138-0013-8000", "message": "Hi"}), "Text 13800138000: hi"),
            ("stats.median", json!({"numbers": [3, 9, 1, 7, 5]}), "What's the median of 3, 9, 1, 7, 5?"),
            ("unit.convert", json!({"value": -40, "to": "C", "digits": 2}), "Convert -40°F to Celsius."),
            ("unit.convert", json!({"value": 0.15, "to": "F", "digits": 2}), "15% of it"),
            ("stats.median", json!({"numbers": [2, -3, -5]}), "Solve 2x^2 - 3x - 5 = 0."),
            // A tool's result writes the number; optional ones are not judged.
            ("restaurants.book", json!({"name": "A", "party_size": 6}), "Book the usual.\n{\"party_size\": 6}"),
            ("weather.forecast", json!({"city": "Paris", "days": 14}), "Weather in Paris"),
            // Chinese numerals, and hours counted in minutes.
            ("restaurants.book", json!({"name": "A", "party_size": 5000}), "从我的支票账户转五千欧元"),
            ("restaurants.book", json!({"name": "A", "party_size": 180}), "停三个小时"),
            ("restaurants.book", json!({"name": "A", "party_size": 150}), "停两个半小时"),
        ] {
            let found = made_up_calls(&[call(name, args.clone())], &tools(), conversation);
            assert!(found.is_empty(), "{args} / {conversation}: {found:?}");
        }
    }

    fn skill(name: &str, description: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}})
    }

    fn asked(messages: &[Message], tools: Vec<Value>) -> DecisionRequest {
        crate::brain::scripted::request(messages, tools)
    }

    fn dropped_or_redirected(question: &str, tools: Vec<Value>, made: &str, answers: Vec<AiMessage>) -> (Decision, Vec<Vec<String>>) {
        let profile = super::super::Profile { drop_unfit_actions: true, ..Default::default() };
        let mut brain = Scripted::new(profile, answers);
        let messages = vec![Message::user(question)];
        let request = asked(&messages, tools);
        let call = ToolCall { id: "call_001".into(), name: made.into(), args: json!({"path": "config/servers.yaml"}).as_object().unwrap().clone() };
        let report = crate::protocol::DecisionReport::new("scripted", request.phase, request.tool_calling, None);
        let mut decided = Decision { ai: AiMessage::calls(vec![call]), raw_output: "first".into(), prompt: String::new(), plan: None, report };
        drop(&mut brain, &mut decided, &request, &messages, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        (decided, brain.offered)
    }

    #[test]
    fn a_call_whose_tool_does_not_do_the_action_asked_gives_way_to_one_that_does() {
        let tools = vec![skill("file_reader", "Read a text file."), skill("format_converter", "Convert table data between csv, json and yaml.")];
        let converted = ToolCall { id: "call_001".into(), name: "format_converter".into(), args: json!({"path": "config/servers.yaml"}).as_object().unwrap().clone() };
        let (decided, offered) = dropped_or_redirected("Convert config/servers.yaml to JSON.", tools, "file_reader", vec![AiMessage::calls(vec![converted.clone()])]);
        assert_eq!(offered, [vec!["format_converter".to_string()]]);
        assert_eq!(decided.ai.tool_calls, [converted]);
        assert_eq!(decided.report.warnings, ["calls to file_reader do not convert: asked again with format_converter alone"]);
        assert!(decided.raw_output.starts_with("first") && decided.raw_output.ends_with("redone"), "{}", decided.raw_output);
    }

    #[test]
    fn several_calls_leaving_the_action_out_get_the_call_that_does_it() {
        let tools = vec![skill("file_reader", "Read a text file."), skill("calculator", "Evaluate a math expression."), skill("format_converter", "Convert table data between formats.")];
        let converted = ToolCall { id: "call_001".into(), name: "format_converter".into(), args: json!({"path": "data/sample.csv"}).as_object().unwrap().clone() };
        let profile = super::super::Profile { drop_unfit_actions: true, ..Default::default() };
        let mut brain = Scripted::new(profile, vec![AiMessage::calls(vec![converted])]);
        let messages = vec![Message::user("1) 阅读 docs/agent_intro.txt；2) 计算 3.14 * 5；3) 把 data/sample.csv 转成 markdown 表格。")];
        let request = asked(&messages, tools);
        let made = |id: &str, name: &str| ToolCall { id: id.into(), name: name.into(), args: json!({"path": "x"}).as_object().unwrap().clone() };
        let report = crate::protocol::DecisionReport::new("scripted", request.phase, request.tool_calling, None);
        let mut decided = Decision { ai: AiMessage::calls(vec![made("call_001", "file_reader"), made("call_002", "calculator")]), raw_output: String::new(), prompt: String::new(), plan: None, report };
        drop(&mut brain, &mut decided, &request, &messages, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        let calls: Vec<(&str, &str)> = decided.ai.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
        assert_eq!(calls, [("call_001", "file_reader"), ("call_002", "calculator"), ("call_003", "format_converter")]);
    }

    #[test]
    fn a_call_for_an_action_no_tool_does_is_dropped_and_the_question_answered_without_tools() {
        let tools = vec![skill("home.lights", "Switch the lights of a room."), skill("home.set_thermostat", "Set the thermostat of a room.")];
        let (decided, offered) = dropped_or_redirected("Lock the front door.", tools, "home.lights", vec![AiMessage::answer("I can't lock doors.")]);
        assert_eq!(offered, [Vec::<String>::new()]);
        assert!(decided.ai.tool_calls.is_empty());
        assert_eq!(decided.ai.content, "I can't lock doors.");
        assert_eq!(decided.report.warnings[0], "a call for \"lock\", which home.lights does not do, dropped");
    }

    #[test]
    fn asked_again_without_tools_for_an_action_none_does_the_model_is_told_why() {
        let tools = vec![skill("home.lights", "Switch the lights of a room.")];
        let profile = super::super::Profile { drop_unfit_actions: true, ..Default::default() };
        let mut brain = Scripted::new(profile, vec![AiMessage::answer("I can't lock doors.")]);
        let messages = vec![Message::user("Lock the front door.")];
        let request = asked(&messages, tools);
        let call = ToolCall { id: "call_001".into(), name: "home.lights".into(), args: json!({"path": "hall"}).as_object().unwrap().clone() };
        let report = crate::protocol::DecisionReport::new("scripted", request.phase, request.tool_calling, None);
        let mut decided = Decision { ai: AiMessage::calls(vec![call]), raw_output: String::new(), prompt: String::new(), plan: None, report };
        drop(&mut brain, &mut decided, &request, &messages, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        assert_eq!(brain.asked, [vec![Message::user("Lock the front door."), Message::system(cannot_note("lock"))]]);
    }
}
