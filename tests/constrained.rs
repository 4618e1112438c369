//! Constrained decoding on the real default model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M):
//! every answer parses, names only known tools, and gives arguments their schema allows,
//! on prompts written to break that (narration with calls, several calls, a tool that does
//! not exist), in both ways of passing tools and in the plan phase. Also measures the
//! per-token cost of the mask against the decode time.
//!
//! These tests need the model file: CI runs `b4 models fetch qwen2.5-coder-0.5b` first. A
//! missing file fails them with that instruction; they are never skipped.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, MutexGuard};

use b4_agent::brain::candle::CandleBrain;
use b4_agent::brain::config::ModelConfig;
use b4_agent::brain::constrain::{self, NativeStyle, Target, TokenSpace};
use b4_agent::brain::generate::ModelHandle;
use b4_agent::brain::parse;
use b4_agent::brain::{Brain, Decision, DecisionRequest, Decoding, Exclusivity, Profile};
use b4_agent::protocol::{AiMessage, DecisionStats, Message, Phase, ToolCall, ToolCalling, ToolMessage};
use b4_agent::tools::spec::{self, ToolSpec};
use b4_agent::tools::validate::validate_args;
use serde_json::{json, Value};

/// The profiles' own budget: enough for every answer here (the model pretty-prints its
/// JSON, and the bound on calls per decision keeps a runaway list inside it); a cut-off
/// answer would fail its check.
const MAX_NEW_TOKENS: usize = 512;
/// A plan of three pretty-printed steps takes about 250 tokens.
const MAX_PLAN_TOKENS: usize = 512;

/// One decoder thread and two shared cores: decisions run one at a time, so that the
/// timings are the decoder's own.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn profile(max_new_tokens: usize) -> Profile {
    common::default_model_path();
    let config = ModelConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/model.yaml")).unwrap();
    // The decision's own answer is what these tests check (the rewrite and the next-step
    // check are tested below).
    Profile { max_new_tokens, answer_from_results: false, next_step_check: false, ..config.profile(None).unwrap() }
}

/// The shipped schema's five tools.
fn all_tools() -> Vec<Value> {
    serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/messages/tools_schema_basic.json")).unwrap()).unwrap()
}

/// file_reader, calculator and format_converter (an enum) from the shipped schema.
fn tools() -> Vec<Value> {
    all_tools()
        .into_iter()
        .filter(|t| matches!(t["function"]["name"].as_str(), Some("file_reader" | "calculator" | "format_converter")))
        .collect()
}

const SYSTEM: &str = "你是一个运行在本地的 Agent 助手，可以调用工具读取文件、计算和转换表格。";

/// Narration and calls in one answer.
const MIXED: &str = "先用一句话说明你的计划，然后读取 docs/agent_intro.txt 并计算 3.14 * 5。说明和工具调用都放在同一个回答里。";
/// Several calls at once (the 0.5B model's fenced-single-call case).
const SEVERAL: &str = "帮我做三件事：1) 阅读 docs/agent_intro.txt；2) 计算 3.14 * 5；3) 把 data/sample.csv 转成 markdown 表格。";
/// Nothing for a tool to do.
const GREETING: &str = "你好，请用一句话介绍你自己。";
/// Two calculations (the 0.5B, free, writes one fenced call of one merged expression).
const TWO_SUMS: &str = "Compute 17 * 23 and 144 / 12.";
/// A tool that is not there.
const UNKNOWN: &str = "Use the web_search tool to find today's weather in Beijing, then call send_email with the result.";

fn ask(user: &str) -> Vec<Message> {
    vec![Message::system(SYSTEM), Message::user(user)]
}

/// The seeds' calculator case after the call ran: the answer is due.
fn after_results() -> Vec<Message> {
    let call: ToolCall = serde_json::from_value(json!({"id": "call_001", "name": "calculator", "args": {"expression": "3.14 * 5 - 2.5"}})).unwrap();
    let result = ToolMessage::success(&call, json!({"expression": "3.14 * 5 - 2.5", "result": 13.2}));
    let mut messages = ask("计算 3.14 * 5 - 2.5");
    messages.extend([Message::Assistant(AiMessage::calls(vec![call])), Message::Tool(result)]);
    messages
}

fn request(messages: Vec<Message>, phase: Phase, way: ToolCalling, decoding: Decoding) -> DecisionRequest {
    DecisionRequest {
        messages,
        tools: tools(),
        phase,
        tool_calling: way,
        // Content and calls together would be an invalid decision, not a repaired one.
        exclusivity: Exclusivity::Error,
        decoding: Some(decoding),
        strategy: None,
        more_calls_bias: None,
        answer_bias: None,
        name_calibration: None,
    }
}

fn decide(brain: &mut CandleBrain, request: &DecisionRequest) -> Decision {
    brain.decide(request, &mut |_| {}, &AtomicBool::new(false)).unwrap()
}

/// Prints the cost of the mask per generated token next to the decode time per token,
/// and returns the mask's share of the model's own decode time.
fn report(label: &str, stats: &DecisionStats) -> f64 {
    let tokens = stats.generated_tokens.max(1) as f64;
    let model_ms = (stats.decode_ms - stats.mask_ms).max(1e-9);
    let share = stats.mask_ms / model_ms;
    eprintln!(
        "[constrained] {label}: prompt {} tokens ({} reused, prefill {:.0} ms); {} tokens; decode {:.1} ms/token, mask {:.2} ms/token ({:.1}% of the model's time); grammar {:.0} ms",
        stats.prompt_tokens,
        stats.reused_tokens,
        stats.prefill_ms,
        stats.generated_tokens,
        stats.decode_ms / tokens,
        stats.mask_ms / tokens,
        share * 100.0,
        stats.grammar_ms
    );
    share
}

/// The decision is valid, in the format the way asks for, with content or calls (never
/// both), every call to a known tool with arguments its schema allows.
fn assert_well_formed(label: &str, decision: &Decision, request: &DecisionRequest) {
    let raw = &decision.raw_output;
    assert!(decision.valid(), "{label}: invalid decision ({:?}) from raw output:\n{raw}", decision.report.error);
    // Arguments nobody stated, left out (`omit_unstated_optional`), the calculation or the
    // optional choice the request asks for, added (`add_wanted_expression`, `add_named_choices`),
    // and the call `more_calls_bias` adds, dropped where it does no new work, are the
    // profile's policy, not a repair of what the grammar let through.
    const POLICY: [&str; 5] = [
        "optional argument nobody stated",
        "the calculation the request asks for",
        "optional choice the request names",
        "an added call doing no new work",
        "a call repeating an earlier one of this decision",
    ];
    let repairs: Vec<&String> = decision.report.warnings.iter().filter(|w| !POLICY.iter().any(|p| w.starts_with(p))).collect();
    assert!(repairs.is_empty(), "{label}: warnings {repairs:?} for raw output:\n{raw}");
    let parsed = parse::parse(raw, &request.tools, request.phase).unwrap();
    assert!(parsed.rejected.is_empty(), "{label}: refused calls {:?} in:\n{raw}", parsed.rejected);
    let envelope_style = request.phase != Phase::React || request.tool_calling == ToolCalling::PromptJson;
    if envelope_style {
        assert_eq!(parsed.format, "strict_json", "{label}: not one JSON object:\n{raw}");
    } else {
        let native = ["hermes", "fenced_json", "plain_text"];
        assert!(native.contains(&parsed.format.name()), "{label}: format {} for:\n{raw}", parsed.format);
    }
    let calls: Vec<&ToolCall> = match &decision.plan {
        Some(plan) if !plan.plan.is_empty() => {
            assert!(parsed.content.is_empty(), "{label}: a plan with content:\n{raw}");
            plan.plan.iter().map(|s| s.tool_call.as_ref().unwrap_or_else(|| panic!("{label}: step without a call:\n{raw}"))).collect()
        }
        _ => {
            let answered = !decision.ai.content.trim().is_empty();
            assert!(answered == decision.ai.tool_calls.is_empty(), "{label}: content xor calls expected:\n{raw}");
            decision.ai.tool_calls.iter().collect()
        }
    };
    let specs = ToolSpec::parse_all(&request.tools).unwrap();
    for call in calls {
        let tool = spec::find(&specs, &call.name).unwrap_or_else(|| panic!("{label}: unknown tool {} in:\n{raw}", call.name));
        if let Err(e) = validate_args(tool, &call.args) {
            panic!("{label}: {} {:?}: {e}\nraw:\n{raw}", call.name, call.args);
        }
    }
}

/// Runs each prompt constrained, checks it, and checks that the mask costs under 10% of
/// the model's decode time over all of them.
fn check_prompts(phase: Phase, way: ToolCalling, prompts: Vec<(&str, Vec<Message>)>) -> Vec<Decision> {
    let _serial = serial();
    let max_new_tokens = if phase == Phase::Plan { MAX_PLAN_TOKENS } else { MAX_NEW_TOKENS };
    check_with(&mut CandleBrain::load(&profile(max_new_tokens)).unwrap(), phase, way, prompts)
}

fn check_with(brain: &mut CandleBrain, phase: Phase, way: ToolCalling, prompts: Vec<(&str, Vec<Message>)>) -> Vec<Decision> {
    let mut total = DecisionStats::default();
    let mut decisions = Vec::new();
    for (label, prompt) in prompts {
        let label = format!("{way:?}/{phase:?}/{label}");
        let request = request(prompt, phase, way, Decoding::Constrained);
        let decision = decide(brain, &request);
        eprintln!("[constrained] {label}: {}", decision.raw_output);
        report(&label, &decision.report.stats);
        assert_well_formed(&label, &decision, &request);
        total.decode_ms += decision.report.stats.decode_ms;
        total.mask_ms += decision.report.stats.mask_ms;
        total.generated_tokens += decision.report.stats.generated_tokens;
        total.grammar_ms += decision.report.stats.grammar_ms;
        decisions.push(decision);
    }
    let share = report(&format!("{way:?}/{phase:?} all"), &total);
    assert!(share < 0.10, "the mask took {:.1}% of the decode time (limit 10%)", share * 100.0);
    decisions
}

#[test]
fn prompt_json_decisions_are_envelopes_with_valid_calls() {
    let decisions = check_prompts(
        Phase::React,
        ToolCalling::PromptJson,
        vec![("mixed", ask(MIXED)), ("several", ask(SEVERAL)), ("unknown tool", ask(UNKNOWN)), ("after results", after_results())],
    );
    // The 0.5B reads the file and leaves out the calculation the request writes: the
    // profile adds it (`add_wanted_expression`).
    let calculations: Vec<_> = decisions[0].ai.tool_calls.iter().filter_map(|c| c.args.get("expression")).collect();
    assert_eq!(calculations, [&serde_json::json!("3.14 * 5")], "{}", decisions[0].raw_output);
    // Free, the model restates the task in `content` next to its calls; a fresh request
    // puts the calls first, so they survive the exclusive envelope.
    assert!(!decisions[1].ai.tool_calls.is_empty(), "{}", decisions[1].raw_output);
    // After results the content comes first: the answer.
    assert!(decisions[3].ai.tool_calls.is_empty(), "{}", decisions[3].raw_output);
}

/// Also: greedy stays greedy, and two calculations asked for are two calls (one test, so
/// that all share the template's prompt prefix).
#[test]
fn builtin_decisions_are_native_calls_or_plain_answers_and_a_good_one_is_left_as_it_is() {
    let _serial = serial();
    let mut brain = CandleBrain::load(&profile(MAX_NEW_TOKENS)).unwrap();
    check_with(&mut brain, Phase::React, ToolCalling::Builtin, vec![("mixed", ask(MIXED)), ("unknown tool", ask(UNKNOWN))]);

    // Free, the 0.5B model answers a greeting in plain text, which the native grammar
    // allows: the mask (and the answer's bias at the choice) must then change nothing.
    let free = decide(&mut brain, &request(ask(GREETING), Phase::React, ToolCalling::Builtin, Decoding::Free));
    let greeting = request(ask(GREETING), Phase::React, ToolCalling::Builtin, Decoding::Constrained);
    let constrained = decide(&mut brain, &greeting);
    report("free vs constrained", &constrained.report.stats);
    assert_well_formed("Builtin/React/greeting", &constrained, &greeting);
    let space = TokenSpace::for_model(&ModelHandle::load(&profile(MAX_NEW_TOKENS)).unwrap()).unwrap();
    let grammar = constrain::lark(&ToolSpec::parse_all(&tools()).unwrap(), Target::Native(NativeStyle::Hermes));
    assert!(
        space.accepts(&grammar, free.raw_output.trim_end()).unwrap(),
        "the free answer no longer fits the native format, pick another prompt:\n{}",
        free.raw_output
    );
    assert_eq!(constrained.raw_output, free.raw_output);
    assert_eq!(free.report.stats.mask_ms, 0.0);
    assert!(constrained.report.stats.mask_ms > 0.0);

    // Free, it writes one call in a JSON fence and merges the two calculations into one
    // expression; its fence held to an array of calls, it makes one call for each.
    let free = decide(&mut brain, &request(ask(TWO_SUMS), Phase::React, ToolCalling::Builtin, Decoding::Free));
    let constrained = decide(&mut brain, &request(ask(TWO_SUMS), Phase::React, ToolCalling::Builtin, Decoding::Constrained));
    assert!(free.ai.tool_calls.len() <= 1, "free made several calls now, the case shows nothing:\n{}", free.raw_output);
    let expressions: Vec<_> = constrained.ai.tool_calls.iter().map(|c| (c.name.as_str(), c.args["expression"].as_str().unwrap_or(""))).collect();
    assert_eq!(expressions, [("calculator", "17 * 23"), ("calculator", "144 / 12")], "{}", constrained.raw_output);
}

#[test]
fn plan_decisions_are_plans_of_valid_calls() {
    let decisions = check_prompts(Phase::Plan, ToolCalling::PromptJson, vec![("several", ask(SEVERAL))]);
    assert!(decisions[0].plan.as_ref().is_some_and(|p| !p.plan.is_empty()), "{}", decisions[0].raw_output);
}

#[test]
fn the_token_space_marks_control_tokens_and_ends_on_im_end() {
    let handle = ModelHandle::load(&profile(MAX_NEW_TOKENS)).unwrap();
    let space = TokenSpace::for_model(&handle).unwrap();
    let im_end = handle.tokenizer().token_id("<|im_end|>").unwrap();
    assert_eq!((space.vocab_size(), space.eos()), (handle.tokenizer().vocab_size(), im_end));
    assert!(std::sync::Arc::ptr_eq(&space, &TokenSpace::for_model(&handle).unwrap()), "built once per model");
    let style = NativeStyle::of_template(handle.chat_template().unwrap().source());
    assert_eq!(style, NativeStyle::Hermes, "Qwen2.5's template teaches Hermes calls");

    let hermes = constrain::lark(&ToolSpec::parse_all(&tools()).unwrap(), Target::Native(style));
    // `<tool_call>` is one (non-special) token of this vocabulary, and the grammar takes it.
    assert_eq!(space.tokenize("<tool_call>"), vec![handle.tokenizer().token_id("<tool_call>").unwrap()]);
    let call = "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"3.14 * 5\"}}\n</tool_call>";
    assert!(space.accepts(&hermes, call).unwrap());
    // Control tokens are no text: `<|im_start|>` cannot appear inside an answer.
    assert!(!space.accepts(&hermes, "Hello <|im_start|>user").unwrap());
    assert!(space.accepts(&hermes, "Hello, 你好 <b>world</b>").unwrap());
}

/// F2 in the TUI, as the brain sees it: the same conversation asked in one way, the other,
/// and back. Each way's prompt is prefilled once; going back reuses it from the cache set
/// aside, and the answer is the one the first ask gave.
#[test]
fn switching_the_way_back_and_forth_prefills_each_way_once() {
    let _serial = serial();
    let mut brain = CandleBrain::load(&profile(MAX_NEW_TOKENS)).unwrap();
    ModelHandle::load(&profile(MAX_NEW_TOKENS)).unwrap().reset().unwrap();
    let ask_in = |brain: &mut CandleBrain, way| decide(brain, &request(after_results(), Phase::React, way, Decoding::Constrained));
    let json_first = ask_in(&mut brain, ToolCalling::PromptJson);
    let builtin_first = ask_in(&mut brain, ToolCalling::Builtin);
    let json_again = ask_in(&mut brain, ToolCalling::PromptJson);
    let builtin_again = ask_in(&mut brain, ToolCalling::Builtin);
    for (label, d) in [("prompt_json", &json_first), ("builtin", &builtin_first), ("prompt_json again", &json_again), ("builtin again", &builtin_again)] {
        report(label, &d.report.stats);
    }
    let (json_stats, builtin_stats) = (&json_again.report.stats, &builtin_again.report.stats);
    assert!(json_stats.reused_tokens + 1 >= json_stats.prompt_tokens, "{json_stats:?}");
    assert!(builtin_stats.reused_tokens + 1 >= builtin_stats.prompt_tokens, "{builtin_stats:?}");
    assert!(builtin_first.report.stats.reused_tokens * 2 < builtin_first.report.stats.prompt_tokens, "the two ways' prompts differ early");
    assert_eq!(json_again.raw_output, json_first.raw_output);
    assert_eq!(builtin_again.raw_output, builtin_first.raw_output);
}

/// With `answer_from_results` (the default profile's setting), the answer after the seeds'
/// calculator result is written again from the question and the result: it carries the
/// value, the decision says so, and the raw output keeps both texts.
#[test]
fn the_answer_after_results_is_written_from_the_results() {
    let _serial = serial();
    let mut brain = CandleBrain::load(&Profile { answer_from_results: true, ..profile(MAX_NEW_TOKENS) }).unwrap();
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let decision = decide(&mut brain, &request(after_results(), Phase::React, way, Decoding::Constrained));
        assert!(decision.valid(), "{way:?}: {:?}", decision.report);
        assert!(decision.ai.tool_calls.is_empty());
        assert!(decision.ai.content.contains("13.2"), "{way:?}: {}", decision.ai.content);
        assert!(decision.report.warnings.iter().any(|w| w.starts_with("answer written from the tool results")), "{:?}", decision.report.warnings);
        assert!(decision.raw_output.contains("[answer written from the tool results]"), "{}", decision.raw_output);
    }
}

/// Two tasks with their two results (a glossary read, a calculation): the answer written
/// from the results tells both, in both ways; where the first answer left a result out,
/// that result's own answer was added after it (the warning says which).
#[test]
fn an_answer_from_two_results_tells_both() {
    let _serial = serial();
    let mut brain = CandleBrain::load(&Profile { answer_from_results: true, ..profile(MAX_NEW_TOKENS) }).unwrap();
    let call = |id: &str, name: &str, args: Value| -> ToolCall { serde_json::from_value(json!({"id": id, "name": name, "args": args})).unwrap() };
    let read = call("call_001", "file_reader", json!({"path": "docs/glossary.md"}));
    let times = call("call_002", "calculator", json!({"expression": "12*12"}));
    let glossary = "# Glossary\n\nCanary release: shipping a new version to a small slice of users (we use 2%) before everyone gets it, so problems show up early.\nRollback: going back to the last good version.";
    let messages = vec![
        Message::user("Two things, please: look up what \"canary release\" means in docs/glossary.md, and compute 12*12."),
        Message::Assistant(AiMessage::calls(vec![read.clone(), times.clone()])),
        Message::Tool(ToolMessage::success(&read, json!({"path": "docs/glossary.md", "content": glossary}))),
        Message::Tool(ToolMessage::success(&times, json!({"expression": "12*12", "result": 144}))),
    ];
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let decision = decide(&mut brain, &DecisionRequest { tools: all_tools(), ..request(messages.clone(), Phase::React, way, Decoding::Constrained) });
        assert!(decision.valid() && decision.ai.tool_calls.is_empty(), "{way:?}: {}", decision.raw_output);
        let answer = &decision.ai.content;
        assert!(answer.contains("144"), "{way:?}: {answer}\n{:?}", decision.report.warnings);
        assert!(["2%", "small slice", "slice of users"].iter().any(|w| answer.contains(w)), "{way:?}: {answer}\n{:?}", decision.report.warnings);
        eprintln!("[constrained] {way:?} two results: {:?}", decision.report.warnings);
    }
}

/// With `next_step_check` and `answer_from_results` (the default profile's settings), the
/// decision after results is the check alone: a request of two steps whose first step has
/// its result gets its second step as the decision (the file the search found is read),
/// while a request its result finishes gets its answer written from the results; both ways.
#[test]
fn the_next_step_after_results_is_called_and_a_finished_request_answered() {
    let _serial = serial();
    let mut brain = CandleBrain::load(&Profile { next_step_check: true, answer_from_results: true, ..profile(MAX_NEW_TOKENS) }).unwrap();
    let all = all_tools();
    let search: ToolCall = serde_json::from_value(json!({"id": "call_001", "name": "local_file_search", "args": {"query": "VPN"}})).unwrap();
    let found = ToolMessage::success(
        &search,
        json!({"query": "VPN", "matches": [{"path": "docs/onboarding.md", "line": 14, "snippet": "Connect to the VPN before you open the wiki."}]}),
    );
    let two_steps = vec![
        Message::user("Find the file that mentions the VPN, then read that file."),
        Message::Assistant(AiMessage::calls(vec![search])),
        Message::Tool(found),
    ];
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let decision = decide(&mut brain, &DecisionRequest { tools: all.clone(), ..request(two_steps.clone(), Phase::React, way, Decoding::Constrained) });
        assert!(decision.valid(), "{way:?}: {:?}", decision.report);
        // No generation in the conversation's own prompt came first.
        assert!(decision.raw_output.starts_with("[next step checked"), "{way:?}: {}", decision.raw_output);
        let calls: Vec<(&str, &Value)> = decision.ai.tool_calls.iter().map(|c| (c.name.as_str(), &c.args["path"])).collect();
        assert_eq!(calls, [("file_reader", &json!("docs/onboarding.md"))], "{way:?}: {}", decision.raw_output);
        assert_eq!(decision.report.tool_calling, way);

        let done = decide(&mut brain, &request(after_results(), Phase::React, way, Decoding::Constrained));
        assert!(done.valid() && done.ai.tool_calls.is_empty(), "{way:?}: {}", done.raw_output);
        assert!(done.raw_output.starts_with("[next step checked"), "{way:?}: {}", done.raw_output);
        assert!(done.raw_output.contains("[answer written from the tool results]"), "{way:?}: {}", done.raw_output);
        assert!(done.ai.content.contains("13.2"), "{way:?}: {}", done.ai.content);
    }
}

/// Drafts (the tokens the grammar forces, or those that followed the same words before)
/// change no decision: the seeds' several-calls case and its answer after results, both
/// ways, give the same output token for token with and without them, in fewer steps.
#[test]
fn drafted_tokens_leave_every_decision_as_it_was() {
    let _serial = serial();
    let mut stepped = CandleBrain::load(&Profile { draft_tokens: 0, ..profile(MAX_NEW_TOKENS) }).unwrap();
    let mut drafted = CandleBrain::load(&profile(MAX_NEW_TOKENS)).unwrap();
    assert!(drafted.profile().draft_tokens > 0);
    // The brains share the loaded model and its cache: without this, what an earlier test
    // left in it (in whatever order the tests ran) decides how much of the first prompt is
    // prefilled, and with it the last bits of the logits.
    ModelHandle::load(&profile(MAX_NEW_TOKENS)).unwrap().reset().unwrap();
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        for (label, messages) in [("several", ask(SEVERAL)), ("after results", after_results())] {
            let request = request(messages, Phase::React, way, Decoding::Constrained);
            let one_by_one = decide(&mut stepped, &request);
            let batched = decide(&mut drafted, &request);
            report(&format!("{way:?} {label}, one token per step"), &one_by_one.report.stats);
            report(&format!("{way:?} {label}, drafts"), &batched.report.stats);
            assert_eq!(batched.raw_output, one_by_one.raw_output, "{way:?} {label}");
            assert_eq!(batched.ai, one_by_one.ai, "{way:?} {label}");
            assert_eq!(one_by_one.report.stats.fast_forwarded, 0);
            let (n, ff) = (batched.report.stats.generated_tokens, batched.report.stats.fast_forwarded);
            eprintln!("[constrained] {way:?} {label}: {ff} of {n} tokens fast-forwarded");
            if label == "several" {
                assert!(ff * 5 >= n, "{way:?}: only {ff} of {n} tokens drafted and kept");
            }
        }
    }
}

/// An email with `cc` optional: the 0.5B under prompt_json fills in `cc: []` though nobody
/// is copied (dev case `simple_130`). With `omit_unstated_optional` an optional argument
/// the conversation never states is left out, with a warning; the stated ones stay.
#[test]
fn optional_arguments_nobody_stated_are_left_out() {
    let _serial = serial();
    let email = json!({"type": "function", "function": {"name": "email.send", "description": "Send an email.", "parameters": {"type": "object", "properties": {
        "to": {"type": "array", "description": "Recipient email addresses.", "items": {"type": "string"}},
        "subject": {"type": "string", "description": "Subject line."},
        "body": {"type": "string", "description": "Plain-text body."},
        "cc": {"type": "array", "description": "Email addresses to copy.", "items": {"type": "string"}},
        "priority": {"type": "string", "description": "Priority flag. Default: normal.", "enum": ["low", "normal", "high"], "default": "normal"}
    }, "required": ["to", "subject", "body"]}}});
    let question = "Email bob@example.com with the subject 'Invoice 2291' and the body 'Paid today, thanks!' and mark it high priority.";
    let ask = |way| DecisionRequest { tools: vec![email.clone()], ..request(vec![Message::user(question)], Phase::React, way, Decoding::Constrained) };

    let mut as_decoded = CandleBrain::load(&Profile { omit_unstated_optional: false, ..profile(MAX_NEW_TOKENS) }).unwrap();
    let decoded = decide(&mut as_decoded, &ask(ToolCalling::PromptJson));
    assert_eq!(decoded.ai.tool_calls.first().and_then(|c| c.args.get("cc")), Some(&json!([])), "{}", decoded.raw_output);

    let mut brain = CandleBrain::load(&Profile { omit_unstated_optional: true, ..profile(MAX_NEW_TOKENS) }).unwrap();
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let decision = decide(&mut brain, &ask(way));
        let [call] = decision.ai.tool_calls.as_slice() else { panic!("{way:?}: one call expected: {}", decision.raw_output) };
        let keys: Vec<&str> = call.args.keys().map(String::as_str).collect();
        assert!(keys.iter().all(|k| ["to", "subject", "body", "priority"].contains(k)), "{way:?}: {:?}", call.args);
        assert_eq!((&call.args["to"], &call.args["subject"], call.args.get("priority")), (&json!(["bob@example.com"]), &json!("Invoice 2291"), Some(&json!("high"))), "{way:?}");
        if way == ToolCalling::PromptJson {
            assert!(decision.report.warnings.iter().any(|w| w == "optional argument nobody stated, left out: email.send: cc = []"), "{:?}", decision.report.warnings);
        }
    }
}

/// A follow-up after a finished turn (dev case `multi_turn_104`): asked in the conversation
/// the 0.5B answers with an air quality it makes up for Chengdu; with `fresh_follow_up` the
/// question is asked afresh with the earlier turn written in, and calls, in both ways.
#[test]
fn a_follow_up_question_is_asked_afresh_and_calls() {
    let _serial = serial();
    let tool = |name: &str, description: &str| json!({"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name."}
    }, "required": ["city"]}}});
    let tools = vec![tool("weather.air_quality", "Current air quality (AQI) of a city."), tool("weather.current", "Current weather of a city.")];
    let call: ToolCall = serde_json::from_value(json!({"id": "call_001", "name": "weather.air_quality", "args": {"city": "北京"}})).unwrap();
    let messages = vec![
        Message::user("北京今天空气质量怎么样？"),
        Message::Assistant(AiMessage::calls(vec![call.clone()])),
        Message::Tool(ToolMessage::success(&call, json!({"city": "北京", "aqi": 156, "level": "中度污染"}))),
        Message::Assistant(AiMessage::answer("北京当前 AQI 为 156，属于中度污染。")),
        Message::user("那成都呢？"),
    ];
    let mut brain = CandleBrain::load(&Profile { fresh_follow_up: true, ..profile(MAX_NEW_TOKENS) }).unwrap();
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let ask = DecisionRequest { tools: tools.clone(), ..request(messages.clone(), Phase::React, way, Decoding::Constrained) };
        let decision = decide(&mut brain, &ask);
        assert!(decision.raw_output.starts_with("[follow-up asked afresh"), "{way:?}: {}", decision.raw_output);
        let [call] = decision.ai.tool_calls.as_slice() else { panic!("{way:?}: one call expected: {}", decision.raw_output) };
        assert_eq!((call.name.as_str(), &call.args["city"]), ("weather.air_quality", &json!("成都")), "{way:?}");
        assert_eq!(decision.report.tool_calling, way);
    }
}

/// Two tasks in one request (dev case `parallel_143`): the 0.5B ends its calls after the
/// first, by a wide margin, in both ways; with the profile's `more_calls_bias` it writes the
/// second, which stays because it does what the request asks (cycling) and the first does
/// not. Asked for one thing, the call it adds goes.
#[test]
fn a_second_task_gets_its_call_and_a_call_nobody_asked_for_goes() {
    let _serial = serial();
    let tools = vec![json!({"type": "function", "function": {"name": "maps.directions", "description": "Directions between two places.", "parameters": {"type": "object", "properties": {
        "origin": {"type": "string", "description": "Start place."},
        "destination": {"type": "string", "description": "End place."},
        "mode": {"type": "string", "description": "Travel mode.", "enum": ["driving", "walking", "cycling", "transit"]}
    }, "required": ["origin", "destination"]}}})];
    let ask = |question: &str, way| DecisionRequest { tools: tools.clone(), ..request(vec![Message::user(question)], Phase::React, way, Decoding::Constrained) };
    let both = "Get walking and cycling directions from the Louvre to the Eiffel Tower.";
    let modes = |d: &Decision| d.ai.tool_calls.iter().map(|c| c.args.get("mode").and_then(Value::as_str).unwrap_or("").to_string()).collect::<Vec<_>>();

    let configured = profile(MAX_NEW_TOKENS);
    assert!(configured.more_calls_bias > 0.0, "the default profile adds a call");
    let mut own = CandleBrain::load(&Profile { more_calls_bias: 0.0, ..configured.clone() }).unwrap();
    let mut biased = CandleBrain::load(&configured).unwrap();
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let decided = decide(&mut own, &ask(both, way));
        assert_eq!(modes(&decided), ["walking"], "{way:?}: {}", decided.raw_output);
        let margin = decided.report.more_call_margins.first().copied().unwrap_or_else(|| panic!("{way:?}: no margin recorded"));
        assert!(margin < 0.0 && margin + f64::from(configured.more_calls_bias) > 0.0, "{way:?}: margin {margin}");

        let decided = decide(&mut biased, &ask(both, way));
        assert_eq!(modes(&decided), ["walking", "cycling"], "{way:?}: {}", decided.raw_output);
    }
    let one = decide(&mut biased, &ask("Get walking directions from the Louvre to the Eiffel Tower.", ToolCalling::PromptJson));
    assert_eq!(modes(&one), ["walking"], "{}", one.raw_output);
    let dropped = ["an added call doing no new work, dropped", "a call repeating an earlier one of this decision, dropped"];
    assert!(one.report.warnings.iter().any(|w| dropped.iter().any(|d| w.starts_with(d))), "{:?}", one.report.warnings);
}

/// An optional argument the request states (dev case `parallel_multiple_113`): the 0.5B
/// closes both calls without the namespace; asked for it on its own, it writes `prod`,
/// which the request writes, so it is added. Where the request names no namespace, what
/// the model writes there (its guess, or the default) is not added.
#[test]
fn an_optional_argument_the_request_states_is_added() {
    let _serial = serial();
    let string = |description: &str| json!({"type": "string", "description": description});
    let namespace = json!({"type": "string", "description": "Kubernetes namespace. Default: default.", "default": "default"});
    let tool = |name: &str, description: &str, properties: Value, required: Value| {
        json!({"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": properties, "required": required}}})
    };
    let tools = vec![
        tool("k8s.scale_deployment", "Set the replica count of a Kubernetes deployment.", json!({"deployment": string("Deployment name."), "replicas": {"type": "integer", "description": "Desired number of replicas."}, "namespace": namespace}), json!(["deployment", "replicas"])),
        tool("k8s.rollout_restart", "Restart the pods of a deployment with a rolling update.", json!({"deployment": string("Deployment name."), "namespace": namespace}), json!(["deployment"])),
    ];
    let ask = |question: &str| DecisionRequest { tools: tools.clone(), ..request(vec![Message::user(question)], Phase::React, ToolCalling::PromptJson, Decoding::Constrained) };
    let namespaces = |d: &Decision| d.ai.tool_calls.iter().map(|c| c.args.get("namespace").and_then(Value::as_str).unwrap_or("").to_string()).collect::<Vec<_>>();
    let both = "Scale api-gateway to 8 replicas and restart the auth deployment, both in the prod namespace.";

    let configured = profile(MAX_NEW_TOKENS);
    assert!(configured.add_stated_optional, "the default profile asks for optional arguments");
    let mut own = CandleBrain::load(&Profile { add_stated_optional: false, ..configured.clone() }).unwrap();
    let decided = decide(&mut own, &ask(both));
    assert_eq!(namespaces(&decided), ["", ""], "{}", decided.raw_output);

    let mut asking = CandleBrain::load(&configured).unwrap();
    let decided = decide(&mut asking, &ask(both));
    assert_eq!(namespaces(&decided), ["prod", "prod"], "{}", decided.raw_output);
    assert!(decided.report.warnings.iter().any(|w| w.starts_with("optional argument the request states, added: k8s.scale_deployment: namespace")), "{:?}", decided.report.warnings);
    let one = decide(&mut asking, &ask("Scale api-gateway to 8 replicas."));
    assert_eq!(namespaces(&one), [""], "{}", one.raw_output);
}

/// Offered `weather.current`, `weather.forecast` and `weather.air_quality` in that order
/// and asked for a city's PM2.5 level (dev case `multiple_100`), the 0.5B's first call is of
/// the first weather function; with the content-free prior over the three names divided
/// out (`name_calibration`), of the one listed last that the question asks for.
#[test]
fn a_function_listed_last_is_chosen_once_the_prior_over_names_is_divided_out() {
    let _serial = serial();
    let city = json!({"type": "string", "description": "City name."});
    let unit = json!({"type": "string", "description": "Temperature unit. Default: celsius.", "enum": ["celsius", "fahrenheit"], "default": "celsius"});
    let tool = |name: &str, description: &str, properties: Value, required: Value| {
        json!({"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": properties, "required": required}}})
    };
    let tools = vec![
        tool("weather.current", "Get the current weather conditions for a city.", json!({"city": city, "unit": unit}), json!(["city"])),
        tool("weather.forecast", "Get the daily weather forecast for a city for the next days (today counts as day 1).", json!({"city": city, "days": {"type": "integer", "description": "Number of days to forecast, 1 to 14."}, "unit": unit}), json!(["city", "days"])),
        tool("weather.air_quality", "Get the current air quality index (AQI) of a city.", json!({"city": city, "pollutant": {"type": "string", "description": "Which pollutant to report; 'all' reports every one. Default: all.", "enum": ["all", "pm2.5", "pm10", "o3", "no2", "so2", "co"], "default": "all"}}), json!(["city"])),
    ];
    let question = vec![Message::user("Is the air in Delhi safe today? Show me the PM2.5 level.")];
    let configured = profile(MAX_NEW_TOKENS);
    for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
        let asked = DecisionRequest { tools: tools.clone(), ..request(question.clone(), Phase::React, way, Decoding::Constrained) };
        let named = |calibration: f32| {
            let mut brain = CandleBrain::load(&Profile { name_calibration: calibration, ..configured.clone() }).unwrap();
            let decided = decide(&mut brain, &asked);
            (decided.ai.tool_calls.first().map(|c| c.name.clone()), decided.raw_output)
        };
        let (plain, raw) = named(0.0);
        assert_eq!(plain.as_deref(), Some("weather.current"), "{way:?}: {raw}");
        let (calibrated, raw) = named(1.0);
        assert_eq!(calibrated.as_deref(), Some("weather.air_quality"), "{way:?}: {raw}");
    }
}

/// Under builtin the 0.5B answered the seeds' "分析 data/sample.csv" with one call of each of
/// the five tools in list order; made again in the JSON envelope (`redo_list_echo`, on in
/// the shipped profile) it calls `table_analyzer` alone, and the report stays builtin's.
#[test]
fn a_builtin_decision_that_copies_the_tool_list_is_made_again_in_the_envelope() {
    let _serial = serial();
    let messages = vec![
        Message::system("你是一个运行在本地的 Agent 助手，可以调用工具读取文件、计算、搜索文件和分析表格。请用中文回答。"),
        Message::user("分析 data/sample.csv"),
    ];
    let asked = DecisionRequest { tools: all_tools(), ..request(messages, Phase::React, ToolCalling::Builtin, Decoding::Constrained) };
    // Uncalibrated: with the prior over names divided out (the shipped 0.5), the 0.5B does not
    // copy the list here in the first place.
    let configured = Profile { name_calibration: 0.0, ..profile(MAX_NEW_TOKENS) };
    assert!(configured.redo_list_echo);
    let names = |decided: &Decision| decided.ai.tool_calls.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    let mut brain = CandleBrain::load(&Profile { redo_list_echo: false, ..configured.clone() }).unwrap();
    let copied = decide(&mut brain, &asked);
    assert_eq!(names(&copied), ["file_reader", "calculator", "local_file_search", "table_analyzer", "format_converter"], "{}", copied.raw_output);
    let mut brain = CandleBrain::load(&configured).unwrap();
    let redone = decide(&mut brain, &asked);
    assert_eq!(names(&redone), ["table_analyzer"], "{}", redone.raw_output);
    assert_eq!(redone.ai.tool_calls[0].args["path"], "data/sample.csv");
    assert_eq!(redone.report.tool_calling, ToolCalling::Builtin);
    assert!(redone.raw_output.starts_with(&copied.raw_output) && redone.raw_output.contains(b4_agent::brain::list_echo::MARK), "{}", redone.raw_output);
}
