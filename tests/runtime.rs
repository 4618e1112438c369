//! The runtime's loop and stop reasons, driven by a scripted brain over the real skills in
//! a temp workspace.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use b4_agent::brain::mock::MockBrain;
use b4_agent::brain::{
    Backend, Brain, BrainError, Decision, DecisionRequest, DecisionStatus, Decoding, Exclusivity, Profile, Stream, TokenSink,
};
use b4_agent::memory::Memory;
use b4_agent::protocol::{
    AgentMode, AiMessage, DecisionReport, Event, Settings, Message, Phase, StepState, StopReason, ToolCall, ToolCalling, ToolStatus,
};
use b4_agent::runtime::{Events, Outcome, Run, SharedBrain, StepGate};
use b4_agent::skills::{self, Workspace};
use b4_agent::tools::ToolLayer;
use serde_json::json;

/// Answers with the scripted messages in order; records the phases it was asked for.
struct ScriptedBrain {
    profile: Profile,
    script: VecDeque<Result<AiMessage, String>>,
    phases: Arc<Mutex<Vec<Phase>>>,
}

impl Brain for ScriptedBrain {
    fn profile(&self) -> &Profile {
        &self.profile
    }
    fn decide(&mut self, request: &DecisionRequest, on_token: TokenSink<'_>, _: &AtomicBool) -> Result<Decision, BrainError> {
        self.phases.lock().unwrap().push(request.phase);
        let next = self.script.pop_front().unwrap_or_else(|| Err("script ran out".into()));
        let ai = next.map_err(BrainError::Other)?;
        on_token(Stream::Text("scripted"));
        Ok(decision(ai, "scripted"))
    }
}

/// A successful decision carrying `ai`.
fn decision(ai: AiMessage, raw_output: &str) -> Decision {
    Decision {
        ai,
        raw_output: raw_output.into(),
        prompt: String::new(),
        plan: None,
        report: DecisionReport::new("scripted", Phase::React, ToolCalling::PromptJson, None),
    }
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall { id: String::new(), name: name.into(), args: args.as_object().cloned().unwrap() }
}

struct Fixture {
    _dir: tempfile::TempDir,
    tools: ToolLayer,
    memory: Memory,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::create_dir_all(dir.path().join("memory")).unwrap();
    std::fs::write(dir.path().join("docs/agent_intro.txt"), "Agent 系统通常由模型、工具、记忆和执行循环组成。\n工具调用让模型能够读取本地文件。\n").unwrap();
    std::fs::write(dir.path().join("memory/global.md"), "# Global\nThe agent answers in the user's language.\n").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let memory = Memory::open(dir.path().join("memory"));
    Fixture { tools: ToolLayer::new(skills::all(), ws, Duration::from_secs(10)), memory, _dir: dir }
}

struct Harness<'a> {
    run: Run<'a>,
    rx: tokio::sync::mpsc::UnboundedReceiver<Event>,
}

fn harness<'a>(fx: &'a Fixture, brain: Box<dyn Brain>, mode: AgentMode, max_turns: usize) -> Harness<'a> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let brain: SharedBrain = Arc::new(Mutex::new(brain));
    let run = Run {
        brain,
        tools: &fx.tools,
        memory: Some(&fx.memory),
        events: Events(tx),
        cancel: Arc::new(AtomicBool::new(false)),
        gate: Arc::new(StepGate::new(false)),
        mode,
        settings: Arc::new(Mutex::new(Settings {
            profile: "scripted".into(),
            mode,
            tool_calling: ToolCalling::PromptJson,
            step_mode: false,
            decoding: Decoding::Free,
            strategy: Default::default(),
            prompt_cache: false,
        })),
        exclusivity: Exclusivity::ContentWins,
        max_turns,
        memory_budget: 2000,
    };
    Harness { run, rx }
}

fn scripted(script: Vec<Result<AiMessage, String>>) -> (Box<dyn Brain>, Arc<Mutex<Vec<Phase>>>) {
    let phases = Arc::new(Mutex::new(Vec::new()));
    let brain = ScriptedBrain {
        profile: Profile { name: "scripted".into(), backend: Backend::Mock, ..Default::default() },
        script: script.into(),
        phases: phases.clone(),
    };
    (Box::new(brain), phases)
}

fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn react_runs_tools_then_finishes_with_the_answer() {
    let fx = fixture();
    let (brain, phases) = scripted(vec![
        Ok(AiMessage::calls(vec![
            call("file_reader", json!({"path": "docs/agent_intro.txt"})),
            call("calculator", json!({"expression": "3.14 * 5"})),
        ])),
        Ok(AiMessage::answer("done: 15.7")),
    ]);
    let mut h = harness(&fx, brain, AgentMode::React, 6);
    let mut transcript = Vec::new();
    let outcome = h.run.ask(&mut transcript, "read and compute").await;
    assert_eq!(outcome, Outcome { reason: StopReason::FinalAnswer, answer: Some("done: 15.7".into()), decisions: 2 });
    assert_eq!(*phases.lock().unwrap(), vec![Phase::React, Phase::React]);
    // system(memory), user, assistant(2 calls), 2 tool messages, assistant(answer)
    let roles: Vec<&str> = transcript.iter().map(Message::role).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "tool", "assistant"]);
    let Message::Tool(calc) = &transcript[4] else { panic!() };
    assert_eq!((calc.tool_call_id.as_str(), calc.status), ("call_002", ToolStatus::Success));
    assert_eq!(calc.body().unwrap()["output"]["result"], json!(15.7));
    let events = drain(&mut h.rx);
    assert!(matches!(events.first(), Some(Event::Started { .. })));
    assert!(events.contains(&Event::MemoryLoaded { notes: vec!["global.md".into()] }));
    assert!(events.contains(&Event::FinalAnswer { content: "done: 15.7".into() }));
    assert_eq!(events.last(), Some(&Event::Finished { reason: StopReason::FinalAnswer }));
    let tool_events = events.iter().filter(|e| matches!(e, Event::ToolFinished { .. })).count();
    assert_eq!(tool_events, 2);
    // The finished conversation went into memory.
    let history = fx.memory.history().unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].tools_used, vec!["file_reader", "calculator"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stops_at_max_turns() {
    let fx = fixture();
    let script = (0..5).map(|i| Ok(AiMessage::calls(vec![call("calculator", json!({"expression": format!("{i} + 1")}))]))).collect();
    let (brain, _) = scripted(script);
    let h = harness(&fx, brain, AgentMode::React, 3);
    let outcome = h.run.ask(&mut Vec::new(), "loop").await;
    assert_eq!(outcome, Outcome { reason: StopReason::MaxTurns, answer: None, decisions: 3 });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stops_a_repeated_call_with_the_same_arguments() {
    let fx = fixture();
    let (brain, _) = scripted(vec![
        Ok(AiMessage::calls(vec![call("calculator", json!({"expression": "1 + 1"}))])),
        Ok(AiMessage::calls(vec![call("calculator", json!({"expression": "1 + 1"}))])),
    ]);
    let h = harness(&fx, brain, AgentMode::React, 6);
    let mut transcript = Vec::new();
    let outcome = h.run.ask(&mut transcript, "repeat").await;
    assert_eq!(outcome.reason, StopReason::RepeatedCall);
    // The repeated call was not run again.
    assert_eq!(transcript.iter().filter(|m| matches!(m, Message::Tool(_))).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brain_error_stops_with_its_message() {
    let fx = fixture();
    let (brain, _) = scripted(vec![Err("model exploded".into())]);
    let mut h = harness(&fx, brain, AgentMode::React, 6);
    let outcome = h.run.ask(&mut Vec::new(), "q").await;
    assert_eq!(outcome.reason, StopReason::BrainError);
    assert!(drain(&mut h.rx).contains(&Event::Error { message: "model exploded".into() }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_mode_pauses_and_cancel_stops() {
    let fx = fixture();
    let (brain, _) = scripted(vec![Ok(AiMessage::answer("never"))]);
    let mut h = harness(&fx, brain, AgentMode::React, 6);
    h.run.gate.set_enabled(true);
    let gate = h.run.gate.clone();
    let cancel = h.run.cancel.clone();
    let mut transcript = Vec::new();
    let ask = h.run.ask(&mut transcript, "q");
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.store(true, Ordering::SeqCst);
        gate.release();
    };
    let (outcome, ()) = tokio::join!(ask, canceller);
    assert_eq!(outcome.reason, StopReason::Cancelled);
    assert!(drain(&mut h.rx).contains(&Event::Paused { what: "decision 1".into(), calls: vec![] }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_mode_continues_turn_by_turn() {
    let fx = fixture();
    let (brain, _) = scripted(vec![
        Ok(AiMessage::calls(vec![call("calculator", json!({"expression": "2 ^ 10"}))])),
        Ok(AiMessage::answer("1024")),
    ]);
    let mut h = harness(&fx, brain, AgentMode::React, 6);
    h.run.gate.set_enabled(true);
    let gate = h.run.gate.clone();
    let mut transcript = Vec::new();
    let ask = h.run.ask(&mut transcript, "q");
    let stepper = async {
        // decision 1, tool batch, decision 2
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(150)).await;
            gate.release();
        }
    };
    let (outcome, ()) = tokio::join!(ask, stepper);
    assert_eq!(outcome.answer.as_deref(), Some("1024"));
    let pauses: Vec<(String, usize)> = drain(&mut h.rx)
        .into_iter()
        .filter_map(|e| match e {
            Event::Paused { what, calls } => Some((what, calls.len())),
            _ => None,
        })
        .collect();
    // The tool pause names what is about to run, and carries the calls for the screen.
    assert_eq!(
        pauses,
        vec![
            ("decision 1".to_string(), 0),
            ("1 tool call: calculator(expression=\"2 ^ 10\")".to_string(), 1),
            ("decision 2".to_string(), 0),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_execute_runs_each_step_then_finishes() {
    let fx = fixture();
    let profile = Profile { name: "mock".into(), backend: Backend::Mock, ..Default::default() };
    let mut h = harness(&fx, Box::new(MockBrain::new(profile)), AgentMode::PlanExecute, 6);
    let mut transcript = Vec::new();
    let outcome = h.run.ask(&mut transcript, "读取 docs/agent_intro.txt，计算 2 + 2，再搜索 'Agent'").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    assert!(outcome.answer.unwrap().starts_with("三条中文要点如下：\n1. Agent 系统通常由模型、工具、记忆和执行循环组成。"));
    let events = drain(&mut h.rx);
    let plan = events.iter().find_map(|e| match e {
        Event::PlanCreated { plan } => Some(plan.clone()),
        _ => None,
    });
    assert_eq!(plan.unwrap().plan.len(), 3);
    let done: Vec<(usize, StepState)> = events
        .iter()
        .filter_map(|e| match e {
            Event::StepState { index, state } if *state != StepState::Pending && *state != StepState::Running => Some((*index, *state)),
            _ => None,
        })
        .collect();
    assert_eq!(done, vec![(0, StepState::Done), (1, StepState::Done), (2, StepState::Done)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_step_is_marked_and_the_mock_reports_the_failure() {
    let fx = fixture();
    let profile = Profile { name: "mock".into(), backend: Backend::Mock, ..Default::default() };
    let mut h = harness(&fx, Box::new(MockBrain::new(profile)), AgentMode::PlanExecute, 6);
    let outcome = h.run.ask(&mut Vec::new(), "读取 docs/missing.txt").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    assert!(outcome.answer.unwrap().starts_with("工具调用失败，无法完成请求："));
    assert!(drain(&mut h.rx).contains(&Event::StepState { index: 0, state: StepState::Failed }));
}

/// Records the decoding each request asks for; the first decision also switches the
/// shared setting, as the TUI's F6 does while a decision runs.
struct DecodingRecorder {
    profile: Profile,
    seen: Arc<Mutex<Vec<Option<b4_agent::brain::Decoding>>>>,
    switch: Arc<Mutex<Settings>>,
}

impl Brain for DecodingRecorder {
    fn profile(&self) -> &Profile {
        &self.profile
    }
    fn decide(&mut self, request: &DecisionRequest, _: TokenSink<'_>, _: &AtomicBool) -> Result<Decision, BrainError> {
        let mut seen = self.seen.lock().unwrap();
        seen.push(request.decoding);
        let ai = if seen.len() == 1 {
            self.switch.lock().unwrap().decoding = b4_agent::brain::Decoding::Constrained;
            AiMessage::calls(vec![call("calculator", json!({"expression": "2 + 2"}))])
        } else {
            AiMessage::answer("4")
        };
        Ok(decision(ai, ""))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_decoding_setting_is_read_before_every_decision() {
    use b4_agent::brain::Decoding;
    let fx = fixture();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (brain, _) = scripted(vec![]);
    let settings = harness(&fx, brain, AgentMode::React, 4).run.settings;
    let brain = DecodingRecorder {
        profile: Profile { name: "recorder".into(), backend: Backend::Mock, ..Default::default() },
        seen: seen.clone(),
        switch: settings.clone(),
    };
    let mut h = harness(&fx, Box::new(brain), AgentMode::React, 4);
    h.run.settings = settings;
    let outcome = h.run.ask(&mut Vec::new(), "2 + 2?").await;
    assert_eq!(outcome.reason, StopReason::FinalAnswer);
    assert_eq!(*seen.lock().unwrap(), vec![Some(Decoding::Free), Some(Decoding::Constrained)]);
}

/// Answers with content and tool calls at once, marked invalid as the candle brain marks
/// it under `exclusivity: error`.
struct BothAtOnce {
    profile: Profile,
}

impl Brain for BothAtOnce {
    fn profile(&self) -> &Profile {
        &self.profile
    }
    fn decide(&mut self, request: &DecisionRequest, _: TokenSink<'_>, _: &AtomicBool) -> Result<Decision, BrainError> {
        let mut ai = AiMessage::calls(vec![call("format_converter", json!({
            "content": "a\n1\n", "from": "csv", "to": "json", "output_path": "docs/written.json"
        }))]);
        ai.content = "All done, I wrote the file.".into();
        let mut decision = decision(ai, "{both}");
        decision.report = DecisionReport {
            status: DecisionStatus::Invalid,
            error: Some("content and tool_calls are both set".into()),
            ..DecisionReport::new("both", request.phase, request.tool_calling, None)
        };
        Ok(decision)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_decision_never_runs_its_calls_and_is_no_answer() {
    for mode in [AgentMode::React, AgentMode::PlanExecute] {
        let fx = fixture();
        let brain = BothAtOnce { profile: Profile { name: "both".into(), backend: Backend::Mock, ..Default::default() } };
        let mut h = harness(&fx, Box::new(brain), mode, 6);
        h.run.exclusivity = Exclusivity::Error;
        let mut transcript = Vec::new();
        let outcome = h.run.ask(&mut transcript, "convert it").await;
        assert_eq!(outcome, Outcome { reason: StopReason::InvalidDecision, answer: None, decisions: 1 }, "{mode:?}");
        let events = drain(&mut h.rx);
        assert!(!events.iter().any(|e| matches!(e, Event::ToolStarted { .. } | Event::FinalAnswer { .. })), "{events:?}");
        assert!(events.contains(&Event::Error { message: "invalid decision: content and tool_calls are both set".into() }));
        let reported = events.iter().find_map(|e| match e {
            Event::Decided { report, .. } => Some(report.status),
            _ => None,
        });
        assert_eq!(reported, Some(DecisionStatus::Invalid));
        assert!(!transcript.iter().any(|m| matches!(m, Message::Tool(_))));
        assert!(!fx.tools.workspace().root.join("docs/written.json").exists());
        // A conversation that ended without an answer is not history.
        assert!(fx.memory.history().unwrap().is_empty());
    }
}
