//! B1, the runtime: the message loop. ReAct (decide, run tools, decide again until a final
//! answer) and plan-and-execute (plan, run each step, let the brain continue or finish),
//! with loop limits and a clear stop reason. Everything it does is told as [`Event`]s.

pub mod engine;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::brain::{Brain, Decision, DecisionRequest, Exclusivity};
use crate::memory::{HistoryEntry, Memory};
use crate::protocol::{
    AgentMode, AiMessage, Event, Message, Phase, Plan, Settings, StepState, StopReason, Stream, ToolCall,
    ToolStatus,
};
use crate::tools::ToolLayer;

/// A brain shared between the engine and the blocking thread that runs a decision.
pub type SharedBrain = Arc<Mutex<Box<dyn Brain>>>;

/// Where events go.
#[derive(Clone)]
pub struct Events(pub UnboundedSender<Event>);

impl Events {
    pub fn emit(&self, event: Event) {
        // A closed receiver means nobody is watching any more; the run goes on regardless.
        let _ = self.0.send(event);
    }
}

/// Pauses the run before each decision and each tool batch while step mode is on.
pub struct StepGate {
    enabled: AtomicBool,
    wake: tokio::sync::Mutex<UnboundedReceiver<()>>,
    waker: UnboundedSender<()>,
}

impl StepGate {
    pub fn new(enabled: bool) -> Self {
        let (waker, wake) = tokio::sync::mpsc::unbounded_channel();
        Self { enabled: AtomicBool::new(enabled), wake: tokio::sync::Mutex::new(wake), waker }
    }

    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::SeqCst);
        if !on {
            self.release();
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Lets a waiting run go on (Continue, or Cancel so it can notice).
    pub fn release(&self) {
        let _ = self.waker.send(());
    }

    async fn pause(&self, what: &str, calls: &[ToolCall], events: &Events) {
        if !self.enabled() {
            return;
        }
        let mut wake = self.wake.lock().await;
        // Presses made while nothing waited must not skip this pause.
        while wake.try_recv().is_ok() {}
        events.emit(Event::Paused { what: what.to_string(), calls: calls.to_vec() });
        let _ = wake.recv().await;
    }
}

/// What step mode is about to run: `1 tool call: calculator(expression="3.14 * 5")`.
fn describe_calls(calls: &[ToolCall]) -> String {
    let noun = if calls.len() == 1 { "tool call" } else { "tool calls" };
    let each: Vec<String> = calls
        .iter()
        .map(|call| {
            let args: Vec<String> = call
                .args
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => format!("{s:?}"),
                        other => other.to_string(),
                    };
                    let v = if v.chars().count() > 40 { format!("{}…", v.chars().take(39).collect::<String>()) } else { v };
                    format!("{k}={v}")
                })
                .collect();
            format!("{}({})", call.name, args.join(", "))
        })
        .collect();
    format!("{} {noun}: {}", calls.len(), each.join(", "))
}

/// What one question runs with.
pub struct Run<'a> {
    pub brain: SharedBrain,
    pub tools: &'a ToolLayer,
    pub memory: Option<&'a Memory>,
    pub events: Events,
    pub cancel: Arc<AtomicBool>,
    pub gate: Arc<StepGate>,
    pub mode: AgentMode,
    /// The screen's settings, shared with the engine: each decision takes the way of
    /// passing tools and the decoding from a snapshot taken just before it.
    pub settings: Arc<Mutex<Settings>>,
    pub exclusivity: Exclusivity,
    pub max_turns: usize,
    /// Memory notes are put into the context within this many characters.
    pub memory_budget: usize,
}

/// How a question ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub reason: StopReason,
    pub answer: Option<String>,
    pub decisions: usize,
}

impl Run<'_> {
    /// Asks `question` after the `transcript` so far (appended to in place) and drives the
    /// loop to a stop.
    pub async fn ask(&self, transcript: &mut Vec<Message>, question: &str) -> Outcome {
        self.cancel.store(false, Ordering::SeqCst);
        let profile = self.brain.lock().map(|b| b.profile().name.clone()).unwrap_or_default();
        self.events.emit(Event::Started { question: question.to_string(), mode: self.mode, profile });
        self.load_memory(transcript, question);
        self.append(transcript, Message::user(question));
        let start = transcript.len();
        let outcome = match self.mode {
            AgentMode::React => self.react(transcript, start).await,
            AgentMode::PlanExecute => self.plan_execute(transcript, start).await,
        };
        if let Some(answer) = &outcome.answer {
            self.events.emit(Event::FinalAnswer { content: answer.clone() });
            self.save_history(transcript, start, question, answer);
        }
        self.events.emit(Event::Finished { reason: outcome.reason });
        outcome
    }

    fn append(&self, transcript: &mut Vec<Message>, message: Message) {
        self.events.emit(Event::MessageAppended { message: message.clone() });
        transcript.push(message);
    }

    /// Puts memory into the system message: the first message of a new transcript, or an
    /// update of it before a later question.
    fn load_memory(&self, transcript: &mut Vec<Message>, question: &str) {
        let Some(memory) = self.memory else { return };
        let context = memory.context_for(question, self.memory_budget);
        if let Ok(ctx) = &context {
            for warning in &ctx.warnings {
                self.events.emit(Event::Error { message: format!("memory: {warning}") });
            }
        }
        match context {
            Ok(ctx) if !ctx.notes.is_empty() => {
                self.events.emit(Event::MemoryLoaded { notes: ctx.notes.clone() });
                let system = Message::system(ctx.text);
                match transcript.first_mut() {
                    Some(first @ Message::System { .. }) => *first = system,
                    _ => transcript.insert(0, system),
                }
            }
            Ok(_) => {}
            Err(e) => self.events.emit(Event::Error { message: format!("memory: {e}") }),
        }
    }

    fn save_history(&self, transcript: &[Message], start: usize, question: &str, answer: &str) {
        let Some(memory) = self.memory else { return };
        let mut tools_used: Vec<String> = Vec::new();
        for m in &transcript[start..] {
            if let Message::Assistant(ai) = m {
                for c in &ai.tool_calls {
                    if !tools_used.contains(&c.name) {
                        tools_used.push(c.name.clone());
                    }
                }
            }
        }
        let entry = HistoryEntry {
            question: question.to_string(),
            tools_used,
            answer: answer.to_string(),
            at: chrono::Local::now(),
        };
        if let Err(e) = memory.append_history(&entry) {
            self.events.emit(Event::Error { message: format!("memory: {e}") });
        }
    }

    async fn decide(&self, transcript: &[Message], turn: usize, phase: Phase) -> Result<Decision, StopReason> {
        self.gate.pause(&format!("decision {turn}"), &[], &self.events).await;
        if self.cancel.load(Ordering::SeqCst) {
            return Err(StopReason::Cancelled);
        }
        let settings = self.settings.lock().map(|s| s.clone()).unwrap_or_else(|p| p.into_inner().clone());
        let tool_calling = settings.tool_calling;
        self.events.emit(Event::TurnStarted { turn, phase, tool_calling });
        let request = DecisionRequest {
            messages: transcript.to_vec(),
            tools: self.tools.schema(),
            phase,
            tool_calling,
            exclusivity: self.exclusivity,
            decoding: Some(settings.decoding),
            strategy: Some(settings.strategy),
            more_calls_bias: None,
            answer_bias: None,
            name_calibration: None,
        };
        let brain = self.brain.clone();
        let events = self.events.clone();
        let cancel = self.cancel.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut brain = brain.lock().map_err(|_| crate::brain::BrainError::Other("brain lock poisoned".into()))?;
            let mut sink = |piece: Stream<'_>| match piece {
                Stream::Text(text) => events.emit(Event::Token { text: text.to_string() }),
                Stream::Prefill { done, total, reused } => events.emit(Event::Prefill { done, total, reused }),
            };
            brain.decide(&request, &mut sink, &cancel)
        })
        .await;
        let result = joined.unwrap_or_else(|e| Err(crate::brain::BrainError::Other(format!("decision crashed: {e}"))));
        match result {
            Ok(decision) => {
                self.events.emit(Event::Decided {
                    turn,
                    ai: decision.ai.clone(),
                    raw: decision.raw_output.clone(),
                    report: decision.report.clone(),
                });
                if self.cancel.load(Ordering::SeqCst) {
                    return Err(StopReason::Cancelled);
                }
                // An invalid decision is not acted on: its calls never run, and its text
                // (often the raw output itself) is not taken as an answer.
                if !decision.valid() {
                    let why = decision.report.error.as_deref().unwrap_or("the output broke the answer format");
                    self.events.emit(Event::Error { message: format!("invalid decision: {why}") });
                    return Err(StopReason::InvalidDecision);
                }
                Ok(decision)
            }
            Err(crate::brain::BrainError::Cancelled) => Err(StopReason::Cancelled),
            Err(e) => {
                self.events.emit(Event::Error { message: e.to_string() });
                Err(StopReason::BrainError)
            }
        }
    }

    fn stop(reason: StopReason, decisions: usize) -> Outcome {
        Outcome { reason, answer: None, decisions }
    }

    async fn react(&self, transcript: &mut Vec<Message>, start: usize) -> Outcome {
        let mut seen = HashSet::new();
        for turn in 1..=self.max_turns.max(1) {
            let decision = match self.decide(transcript, turn, Phase::React).await {
                Ok(d) => d,
                Err(reason) => return Self::stop(reason, turn),
            };
            if let Some(outcome) = self.act(transcript, start, decision.ai, turn, &mut seen).await {
                return outcome;
            }
        }
        Self::stop(StopReason::MaxTurns, self.max_turns)
    }

    /// Appends the decision; a final answer ends the question, tool calls are run.
    async fn act(
        &self,
        transcript: &mut Vec<Message>,
        _start: usize,
        ai: AiMessage,
        turn: usize,
        seen: &mut HashSet<String>,
    ) -> Option<Outcome> {
        let mut ai = ai;
        ai.number_calls();
        self.append(transcript, Message::Assistant(ai.clone()));
        if ai.tool_calls.is_empty() {
            return Some(Outcome { reason: StopReason::FinalAnswer, answer: Some(ai.content), decisions: turn });
        }
        if ai.tool_calls.iter().any(|c| seen.contains(&call_key(c))) {
            return Some(Self::stop(StopReason::RepeatedCall, turn));
        }
        seen.extend(ai.tool_calls.iter().map(call_key));
        self.run_calls(transcript, &ai.tool_calls).await;
        if self.cancel.load(Ordering::SeqCst) {
            return Some(Self::stop(StopReason::Cancelled, turn));
        }
        None
    }

    /// Runs one batch of calls concurrently and appends one ToolMessage per call.
    async fn run_calls(&self, transcript: &mut Vec<Message>, calls: &[ToolCall]) -> Vec<ToolStatus> {
        self.gate.pause(&describe_calls(calls), calls, &self.events).await;
        let events = &self.events;
        let outcomes = self
            .tools
            .dispatch(
                calls,
                |call| events.emit(Event::ToolStarted { call: call.clone() }),
                |o| {
                    events.emit(Event::ToolFinished {
                        call: o.call.clone(),
                        result: o.result.clone(),
                        duration_ms: o.duration_ms,
                    })
                },
            )
            .await;
        outcomes
            .into_iter()
            .map(|o| {
                let status = o.result.status;
                self.append(transcript, Message::Tool(o.result));
                status
            })
            .collect()
    }

    async fn plan_execute(&self, transcript: &mut Vec<Message>, start: usize) -> Outcome {
        let decision = match self.decide(transcript, 1, Phase::Plan).await {
            Ok(d) => d,
            Err(reason) => return Self::stop(reason, 1),
        };
        let plan = decision.plan.clone().unwrap_or_else(|| plan_from_calls(&decision.ai.tool_calls));
        if plan.plan.is_empty() {
            // No steps: the brain answered directly.
            let mut seen = HashSet::new();
            return self.act(transcript, start, decision.ai, 1, &mut seen).await.unwrap_or(Self::stop(StopReason::MaxTurns, 1));
        }
        self.events.emit(Event::PlanCreated { plan: plan.clone() });
        for index in 0..plan.plan.len() {
            self.events.emit(Event::StepState { index, state: StepState::Pending });
        }
        let mut calls: Vec<ToolCall> = plan.plan.iter().filter_map(|s| s.tool_call.clone()).collect();
        let mut planned = AiMessage::calls(std::mem::take(&mut calls));
        planned.number_calls();
        self.append(transcript, Message::Assistant(planned.clone()));
        let mut seen: HashSet<String> = planned.tool_calls.iter().map(call_key).collect();
        let mut next_call = planned.tool_calls.iter();
        for (index, step) in plan.plan.iter().enumerate() {
            if self.cancel.load(Ordering::SeqCst) {
                return Self::stop(StopReason::Cancelled, 1);
            }
            self.events.emit(Event::StepState { index, state: StepState::Running });
            let state = match step.tool_call.as_ref().and_then(|_| next_call.next()) {
                Some(call) => match self.run_calls(transcript, std::slice::from_ref(call)).await.first() {
                    Some(ToolStatus::Success) => StepState::Done,
                    _ => StepState::Failed,
                },
                None => StepState::Done,
            };
            self.events.emit(Event::StepState { index, state });
        }
        for turn in 2..=self.max_turns.max(2) {
            let decision = match self.decide(transcript, turn, Phase::Step).await {
                Ok(d) => d,
                Err(reason) => return Self::stop(reason, turn),
            };
            if let Some(outcome) = self.act(transcript, start, decision.ai, turn, &mut seen).await {
                return outcome;
            }
        }
        Self::stop(StopReason::MaxTurns, self.max_turns)
    }
}

/// A plan with one step per call, for brains that answered the plan prompt with calls.
pub fn plan_from_calls(calls: &[ToolCall]) -> Plan {
    Plan {
        reasoning: String::new(),
        plan: calls
            .iter()
            .enumerate()
            .map(|(i, c)| crate::protocol::PlanStep { step: i + 1, description: c.name.clone(), tool_call: Some(c.clone()) })
            .collect(),
    }
}

/// Name plus arguments with keys sorted, so `{a,b}` and `{b,a}` are the same call.
fn call_key(call: &ToolCall) -> String {
    let sorted: std::collections::BTreeMap<_, _> = call.args.iter().collect();
    format!("{}{}", call.name, serde_json::to_string(&sorted).unwrap_or_default())
}
