//! Synthetic engine event sequences (what the runtime sends during a ReAct run and a
//! plan_execute run) and helpers to draw the app into a TestBackend.
#![allow(dead_code)]

use b4_agent::protocol::{
    AgentMode, AiMessage, DecisionReport, DecisionStats, Event, Message, Phase, Plan, PlanStep, Settings, StepState, StopReason,
    ToolCall, ToolCalling, ToolMessage,
};
use b4_agent::brain::Decoding;
use b4_agent::tui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;
use unicode_width::UnicodeWidthStr;

pub fn settings() -> Settings {
    Settings {
        profile: "qwen-0.5b".into(),
        mode: AgentMode::React,
        tool_calling: ToolCalling::PromptJson,
        step_mode: false,
        decoding: Decoding::Free,
        strategy: Default::default(),
        prompt_cache: false,
    }
}

pub fn profiles() -> Vec<String> {
    vec!["qwen-0.5b".into(), "qwen-1.5b".into(), "mock".into()]
}

pub fn app() -> App {
    App::new(settings(), profiles())
}

pub fn app_with(events: Vec<Event>) -> App {
    let mut app = app();
    for event in events {
        app.apply(event);
    }
    app
}

/// The screen as text, one line a row, wide characters once (not followed by the blank
/// cell they cover), and the cursor position when one is shown.
pub fn screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal.draw(|f| app.render(f)).expect("draw");
    let backend = terminal.backend();
    let cursor = backend.cursor_visible().then(|| backend.cursor_position());
    let buffer = backend.buffer().clone();
    let mut out = String::new();
    for y in 0..height {
        let mut skip = 0;
        for x in 0..width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buffer[(x, y)].symbol();
            out.push_str(symbol);
            skip = symbol.width().saturating_sub(1);
        }
        out.push('\n');
    }
    if let Some(pos) = cursor {
        out.push_str(&format!("cursor: ({}, {})\n", pos.x, pos.y));
    }
    out
}

/// Draws once (so panes know their sizes, as after a real frame) and returns the buffer.
pub fn draw(app: &App, width: u16, height: u16) -> ratatui::buffer::Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal.draw(|f| app.render(f)).expect("draw");
    terminal.backend().buffer().clone()
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        let commands = app.on_key(key(KeyCode::Char(c)));
        assert!(commands.is_empty(), "typing {c:?} sent {commands:?}");
    }
}

/// Streams `text` as Token events in pieces of a few characters, as a decoder does.
fn tokens(text: &str) -> Vec<Event> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(4).map(|piece| Event::Token { text: piece.iter().collect() }).collect()
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    let args = match args {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    ToolCall { id: id.into(), name: name.into(), args }
}

pub const REACT_QUESTION: &str = "帮我做两件事：1) 阅读 docs/missing.txt；2) 计算 3.14 * 5";

const REACT_RAW_1: &str = "{\"content\": \"\", \"tool_calls\": [\n  {\"id\": \"call_001\", \"name\": \"file_reader\", \"args\": {\"path\": \"docs/missing.txt\", \"max_chars\": 2000}},\n  {\"id\": \"call_002\", \"name\": \"calculator\", \"args\": {\"expression\": \"3.14 * 5\"}}\n]}";

const REACT_ANSWER: &str = "1) 文件 docs/missing.txt 不存在，无法阅读。\n2) 3.14 * 5 = 15.7";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum React {
    /// The question is in, nothing decided yet.
    Started,
    /// The first decision is half streamed.
    Streaming,
    /// Both tool calls started, none finished.
    ToolsRunning,
    /// The calculator succeeded, the file reader failed.
    ToolsDone,
    /// The final answer arrived and the run finished.
    Final,
}

/// A ReAct run: one decision with two parallel tool calls (one fails), then the answer.
pub fn react(upto: React) -> Vec<Event> {
    let reader = call("call_001", "file_reader", json!({"path": "docs/missing.txt", "max_chars": 2000}));
    let calc = call("call_002", "calculator", json!({"expression": "3.14 * 5"}));
    let mut ev = vec![
        Event::Started { question: REACT_QUESTION.into(), mode: AgentMode::React, profile: "qwen-0.5b".into() },
        Event::MemoryLoaded { notes: vec!["用户喜欢简洁的中文回答".into()] },
        Event::MessageAppended { message: Message::system("You are a local agent. Tools: ...") },
        Event::MessageAppended { message: Message::user(REACT_QUESTION) },
    ];
    if upto == React::Started {
        return ev;
    }
    ev.push(Event::TurnStarted { turn: 1, phase: Phase::React, tool_calling: ToolCalling::PromptJson });
    let stream = tokens(REACT_RAW_1);
    let half = stream.len() / 2;
    ev.extend(stream.iter().take(half).cloned());
    if upto == React::Streaming {
        return ev;
    }
    ev.extend(stream.iter().skip(half).cloned());
    let ai = AiMessage::calls(vec![reader.clone(), calc.clone()]);
    ev.push(Event::Decided {
        turn: 1,
        ai: ai.clone(),
        raw: REACT_RAW_1.into(),
        report: report(Phase::React, ToolCalling::PromptJson, DecisionStats {
            prompt_tokens: 812,
            reused_tokens: 0,
            generated_tokens: 71,
            prefill_ms: 950.0,
            decode_ms: 2100.0,
            prefill_tok_s: 854.7,
            decode_tok_s: 33.8,
            latency_ms: 3050.0,
            ..DecisionStats::default()
        }, vec![]),
    });
    ev.push(Event::MessageAppended { message: Message::Assistant(ai) });
    ev.push(Event::ToolStarted { call: reader.clone() });
    ev.push(Event::ToolStarted { call: calc.clone() });
    if upto == React::ToolsRunning {
        return ev;
    }
    let calc_result =
        ToolMessage::success(&calc, json!({"expression": "3.14 * 5", "result": 15.7, "content": "3.14 * 5 = 15.7"}));
    let reader_result = ToolMessage::error(&reader, "file not found: docs/missing.txt");
    ev.push(Event::ToolFinished { call: calc.clone(), result: calc_result.clone(), duration_ms: 0.4 });
    ev.push(Event::ToolFinished { call: reader.clone(), result: reader_result.clone(), duration_ms: 1.2 });
    ev.push(Event::MessageAppended { message: Message::Tool(reader_result) });
    ev.push(Event::MessageAppended { message: Message::Tool(calc_result) });
    if upto == React::ToolsDone {
        return ev;
    }
    ev.push(Event::TurnStarted { turn: 2, phase: Phase::React, tool_calling: ToolCalling::PromptJson });
    let raw = format!("{{\"content\": {}, \"tool_calls\": []}}", serde_json::to_string(REACT_ANSWER).unwrap_or_default());
    ev.extend(tokens(&raw));
    ev.push(Event::Decided {
        turn: 2,
        ai: AiMessage::answer(REACT_ANSWER),
        raw: raw.clone(),
        report: report(Phase::React, ToolCalling::PromptJson, DecisionStats {
            prompt_tokens: 1004,
            reused_tokens: 883,
            generated_tokens: 38,
            prefill_ms: 160.0,
            decode_ms: 1080.0,
            prefill_tok_s: 756.3,
            decode_tok_s: 35.2,
            latency_ms: 1240.0,
            ..DecisionStats::default()
        }, vec![]),
    });
    ev.push(Event::MessageAppended { message: Message::Assistant(AiMessage::answer(REACT_ANSWER)) });
    ev.push(Event::FinalAnswer { content: REACT_ANSWER.into() });
    ev.push(Event::Finished { reason: StopReason::FinalAnswer });
    ev
}

pub const PLAN_QUESTION: &str = "阅读 docs/agent_intro.txt，搜索包含 Agent 的文件，再计算 3.14 * 5";

const PLAN_RAW: &str = "{\"reasoning\": \"First read the intro file, then search for files about Agent, finally compute the product.\",\n \"plan\": [\n  {\"step\": 1, \"description\": \"Read the agent intro file\", \"tool_call\": {\"id\": \"call_001\", \"name\": \"file_reader\", \"args\": {\"path\": \"docs/agent_intro.txt\"}}},\n  {\"step\": 2, \"description\": \"搜索包含 Agent 的文件\", \"tool_call\": {\"id\": \"call_002\", \"name\": \"local_file_search\", \"args\": {\"query\": \"Agent\"}}},\n  {\"step\": 3, \"description\": \"Compute 3.14 * 5\", \"tool_call\": {\"id\": \"call_003\", \"name\": \"calculator\", \"args\": {\"expression\": \"3.14 * 5\"}}}\n ]}";

const INTRO: &str = "Agent 系统通常由模型、工具、记忆和执行循环组成。\n模型负责决策：回答，或者调用工具。\n工具执行具体操作：读文件、计算、搜索。\n记忆保存跨轮次的信息。\n执行循环把这些部分串起来。\nReAct 边想边做；Plan-and-Execute 先列计划再执行。\n小模型需要清晰的提示和宽容的解析。";

const PLAN_ANSWER: &str = "已完成：\n1. docs/agent_intro.txt：Agent 由模型、工具、记忆和执行循环组成。\n2. 搜索失败：搜索目录不存在。\n3. 3.14 * 5 = 15.7";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanRun {
    /// The plan was made; no step ran.
    Planned,
    /// Step 1 done, step 2 started; step mode paused before its tool call.
    Paused,
    /// Step 1 done, step 2 running.
    Running,
    /// Steps done / failed / done, the final answer in.
    Final,
}

fn plan_steps() -> Vec<PlanStep> {
    vec![
        PlanStep {
            step: 1,
            description: "Read the agent intro file".into(),
            tool_call: Some(call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}))),
        },
        PlanStep {
            step: 2,
            description: "搜索包含 Agent 的文件".into(),
            tool_call: Some(call("call_002", "local_file_search", json!({"query": "Agent"}))),
        },
        PlanStep {
            step: 3,
            description: "Compute 3.14 * 5".into(),
            tool_call: Some(call("call_003", "calculator", json!({"expression": "3.14 * 5"}))),
        },
    ]
}

/// A plan_execute run in step mode: a 3-step plan; step 2 fails; a final answer.
pub fn plan_run(upto: PlanRun) -> Vec<Event> {
    let steps = plan_steps();
    let plan = Plan {
        reasoning: "First read the intro file, then search for files about Agent, finally compute the product."
            .into(),
        plan: steps.clone(),
    };
    let mut ev = vec![
        Event::Settings(Settings {
            profile: "qwen-0.5b".into(),
            mode: AgentMode::PlanExecute,
            tool_calling: ToolCalling::PromptJson,
            step_mode: true,
            decoding: Decoding::Free,
            strategy: Default::default(),
            prompt_cache: false,
        }),
        Event::Started { question: PLAN_QUESTION.into(), mode: AgentMode::PlanExecute, profile: "qwen-0.5b".into() },
        Event::MessageAppended { message: Message::user(PLAN_QUESTION) },
        Event::Paused { what: "decision 1".into(), calls: vec![] },
        Event::TurnStarted { turn: 1, phase: Phase::Plan, tool_calling: ToolCalling::PromptJson },
    ];
    ev.extend(tokens(PLAN_RAW));
    ev.push(Event::Decided {
        turn: 1,
        ai: AiMessage::default(),
        raw: PLAN_RAW.into(),
        report: report(Phase::Plan, ToolCalling::PromptJson, DecisionStats {
            prompt_tokens: 904,
            reused_tokens: 0,
            generated_tokens: 164,
            prefill_ms: 1100.0,
            decode_ms: 4900.0,
            prefill_tok_s: 821.8,
            decode_tok_s: 33.5,
            latency_ms: 6000.0,
            ..DecisionStats::default()
        }, vec!["plan: added missing ids".into()]),
    });
    ev.push(Event::PlanCreated { plan });
    // The runtime's order: every step pending, the plan's calls as one assistant message,
    // then each step runs its call (pausing before it in step mode).
    for index in 0..steps.len() {
        ev.push(Event::StepState { index, state: StepState::Pending });
    }
    let calls: Vec<ToolCall> = steps.iter().filter_map(|s| s.tool_call.clone()).collect();
    ev.push(Event::MessageAppended { message: Message::Assistant(AiMessage::calls(calls)) });
    if upto == PlanRun::Planned {
        return ev;
    }
    let results = [
        ToolMessage::success(
            steps[0].tool_call.as_ref().expect("step 1 call"),
            json!({"path": "docs/agent_intro.txt", "content": INTRO}),
        ),
        ToolMessage::error(steps[1].tool_call.as_ref().expect("step 2 call"), "search root not found: docs/search"),
        ToolMessage::success(
            steps[2].tool_call.as_ref().expect("step 3 call"),
            json!({"expression": "3.14 * 5", "result": 15.7, "content": "3.14 * 5 = 15.7"}),
        ),
    ];
    let durations = [3.1, 12.4, 0.3];
    for (i, step) in steps.iter().enumerate() {
        let Some(tool_call) = step.tool_call.clone() else { continue };
        ev.push(Event::StepState { index: i, state: StepState::Running });
        if i == 1 {
            ev.push(Event::Paused {
                what: "1 tool call: local_file_search(query=\"Agent\")".into(),
                calls: vec![tool_call.clone()],
            });
            if upto == PlanRun::Paused {
                return ev;
            }
        }
        ev.push(Event::ToolStarted { call: tool_call.clone() });
        if i == 1 && upto == PlanRun::Running {
            return ev;
        }
        ev.push(Event::ToolFinished { call: tool_call, result: results[i].clone(), duration_ms: durations[i] });
        ev.push(Event::MessageAppended { message: Message::Tool(results[i].clone()) });
        let state = if i == 1 { StepState::Failed } else { StepState::Done };
        ev.push(Event::StepState { index: i, state });
    }
    // The reviewer switched tool passing (F2) and decoding (F6) between decisions.
    ev.push(Event::Settings(Settings {
        profile: "qwen-0.5b".into(),
        mode: AgentMode::PlanExecute,
        tool_calling: ToolCalling::Builtin,
        step_mode: true,
        decoding: Decoding::Constrained,
        strategy: Default::default(),
        prompt_cache: false,
    }));
    ev.push(Event::Paused { what: "decision 2".into(), calls: vec![] });
    ev.push(Event::TurnStarted { turn: 2, phase: Phase::Step, tool_calling: ToolCalling::Builtin });
    let raw = format!("<answer>{PLAN_ANSWER}</answer>");
    ev.extend(tokens(&raw));
    ev.push(Event::Decided {
        turn: 2,
        ai: AiMessage::answer(PLAN_ANSWER),
        raw,
        report: report_with(Phase::Step, ToolCalling::Builtin, Decoding::Constrained, DecisionStats {
            prompt_tokens: 1320,
            reused_tokens: 1068,
            generated_tokens: 61,
            prefill_ms: 310.0,
            decode_ms: 1800.0,
            prefill_tok_s: 812.9,
            decode_tok_s: 33.9,
            latency_ms: 2110.0,
            mask_ms: 54.9,
            grammar_ms: 42.0,
            grammar_wait_ms: 0.0,
            fast_forwarded: 0,
            prompt_cache_tokens: 0,
            ttft_ms: 0.0,
        }, vec![]),
    });
    ev.push(Event::MessageAppended { message: Message::Assistant(AiMessage::answer(PLAN_ANSWER)) });
    ev.push(Event::FinalAnswer { content: PLAN_ANSWER.into() });
    ev.push(Event::Finished { reason: StopReason::FinalAnswer });
    ev
}

/// The brain's report of a decision made by the 0.5B with free decoding.
fn report(phase: Phase, tool_calling: ToolCalling, stats: DecisionStats, warnings: Vec<String>) -> DecisionReport {
    report_with(phase, tool_calling, Decoding::Free, stats, warnings)
}

fn report_with(
    phase: Phase,
    tool_calling: ToolCalling,
    decoding: Decoding,
    stats: DecisionStats,
    warnings: Vec<String>,
) -> DecisionReport {
    DecisionReport {
        format: Some("strict_json".into()),
        stats,
        warnings,
        ..DecisionReport::new("qwen-0.5b", phase, tool_calling, Some(decoding))
    }
}
