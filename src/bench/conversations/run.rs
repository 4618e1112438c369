//! Runs every setting x conversation: each conversation on a fresh copy of the set's
//! workspace, its turns asked one after the other in one transcript through the runtime's
//! [`Run`] (the loop `b4 chat` and the TUI drive, with the real skills and tool layer),
//! each final answer scored.
//!
//! Without memory: the set's workspace has none, and notes from an earlier run would
//! change the later ones. `stop` ends the run: the current question is cancelled (its
//! generation ends within a token; it is not recorded) and no other one is asked.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::score::score;
use super::set::{Conversation, ConversationSet, Lang};
use crate::bench::{BenchError, Setting};
use crate::brain::Exclusivity;
use crate::protocol::{AgentMode, Event, Message, Settings, StopReason, ToolStatus};
use crate::runtime::{Events, Run, SharedBrain, StepGate};
use crate::skills::{self, Workspace};
use crate::tools::ToolLayer;

/// Everything one run needs.
#[derive(Clone, Debug)]
pub struct ChatPlan {
    pub set: ConversationSet,
    pub settings: Vec<Setting>,
    /// ReAct, or plan-and-execute.
    pub mode: AgentMode,
    pub max_turns: usize,
    pub exclusivity: Exclusivity,
    pub tool_timeout: Duration,
}

impl ChatPlan {
    /// Questions asked over all settings.
    pub fn questions(&self) -> usize {
        self.settings.len() * self.set.questions()
    }
}

/// A tool call made while answering, and whether it succeeded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolUse {
    pub name: String,
    pub args: Value,
    pub ok: bool,
}

/// One question's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuestionRecord {
    pub setting: String,
    pub conversation: String,
    /// 1-based turn in the conversation.
    pub turn: usize,
    pub lang: Lang,
    pub category: String,
    pub question: String,
    /// The final answer; none when the run stopped without one.
    pub answer: Option<String>,
    pub stop_reason: StopReason,
    /// The calls made for this question, in the order they finished.
    pub tools: Vec<ToolUse>,
    /// What the run reported as errors (an invalid decision, a brain failure).
    pub errors: Vec<String>,
    pub passed: bool,
    /// Why it did not pass.
    pub reasons: Vec<String>,
    /// From the question to the end of its run.
    pub latency_ms: f64,
    pub decisions: usize,
}

/// The question about to be asked.
pub struct QuestionJob<'a> {
    /// 0-based position among all questions of the run.
    pub index: usize,
    pub total: usize,
    pub setting: &'a Setting,
    pub conversation: &'a Conversation,
    /// 1-based.
    pub turn: usize,
}

/// Told about each question and each finished conversation.
pub trait ChatObserver {
    fn started(&mut self, _job: &QuestionJob<'_>) {}
    fn finished(&mut self, job: &QuestionJob<'_>, record: &QuestionRecord) -> anyhow::Result<()>;
    /// The conversation's transcript once it ended (also when the run was interrupted in
    /// it after its first question began).
    fn transcript(&mut self, _setting: &Setting, _conversation: &Conversation, _messages: &[Message]) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The records of a run; `interrupted` when it stopped before the last question.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRun {
    pub records: Vec<QuestionRecord>,
    pub interrupted: bool,
}

/// Runs the plan. `brains` holds one brain per profile name of the settings.
pub async fn run(
    plan: &ChatPlan,
    brains: &BTreeMap<String, SharedBrain>,
    observer: &mut dyn ChatObserver,
    stop: &AtomicBool,
) -> Result<ChatRun, BenchError> {
    let mut result = ChatRun::default();
    let cancel = Arc::new(AtomicBool::new(false));
    let total = plan.questions();
    for setting in &plan.settings {
        let brain = brains.get(&setting.profile.name).ok_or_else(|| BenchError::NoBrain(setting.profile.name.clone()))?;
        for conversation in &plan.set.conversations {
            let copy = tempfile::tempdir().map_err(|source| BenchError::Read { file: "a temp dir".into(), source })?;
            copy_dir(&plan.set.workspace, copy.path())?;
            let workspace = Workspace::new(copy.path())
                .map_err(|e| BenchError::Case { file: copy.path().display().to_string(), reason: e.to_string() })?;
            let tools = ToolLayer::new(skills::all(), workspace, plan.tool_timeout);
            let settings = Arc::new(Mutex::new(Settings {
                profile: setting.profile.name.clone(),
                mode: plan.mode,
                tool_calling: setting.tool_calling,
                step_mode: false,
                decoding: setting.decoding,
                strategy: setting.profile.strategy,
                prompt_cache: crate::brain::generate::prompt_store::current().is_some(),
            }));
            let mut transcript = Vec::new();
            for (index, turn) in conversation.turns.iter().enumerate() {
                if stop.load(Ordering::SeqCst) {
                    result.interrupted = true;
                    break;
                }
                let job = QuestionJob { index: result.records.len(), total, setting, conversation, turn: index + 1 };
                observer.started(&job);
                let (events, mut received) = unbounded_channel();
                let run = Run {
                    brain: brain.clone(),
                    tools: &tools,
                    memory: None,
                    events: Events(events),
                    cancel: cancel.clone(),
                    gate: Arc::new(StepGate::new(false)),
                    mode: plan.mode,
                    settings: settings.clone(),
                    exclusivity: plan.exclusivity,
                    max_turns: plan.max_turns,
                    memory_budget: 0,
                };
                let started = Instant::now();
                let outcome = ask_until_stopped(&run, &mut transcript, &turn.question, stop, &cancel).await;
                let latency_ms = started.elapsed().as_secs_f64() * 1e3;
                if outcome.reason == StopReason::Cancelled {
                    result.interrupted = true;
                    break;
                }
                let (uses, errors) = drain(&mut received);
                let called: Vec<String> = uses.iter().map(|u| u.name.clone()).collect();
                let verdict = score(turn, conversation.lang, outcome.answer.as_deref(), outcome.reason, &called);
                let record = QuestionRecord {
                    setting: setting.name.clone(),
                    conversation: conversation.id.clone(),
                    turn: index + 1,
                    lang: conversation.lang,
                    category: conversation.category.clone(),
                    question: turn.question.clone(),
                    answer: outcome.answer,
                    stop_reason: outcome.reason,
                    tools: uses,
                    errors,
                    passed: verdict.passed,
                    reasons: verdict.reasons,
                    latency_ms,
                    decisions: outcome.decisions,
                };
                observer.finished(&job, &record).map_err(BenchError::Output)?;
                result.records.push(record);
            }
            if !transcript.is_empty() {
                observer.transcript(setting, conversation, &transcript).map_err(BenchError::Output)?;
            }
            if result.interrupted {
                return Ok(result);
            }
        }
    }
    Ok(result)
}

/// How often a running question looks at `stop`.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Asks one question; while it runs, a raised `stop` cancels it. `ask` clears the cancel
/// flag when it starts, so `stop` is passed on until the question ends, not once.
async fn ask_until_stopped(
    run: &Run<'_>,
    transcript: &mut Vec<Message>,
    question: &str,
    stop: &AtomicBool,
    cancel: &AtomicBool,
) -> crate::runtime::Outcome {
    let ask = run.ask(transcript, question);
    tokio::pin!(ask);
    loop {
        tokio::select! {
            outcome = &mut ask => return outcome,
            () = tokio::time::sleep(STOP_POLL) => {
                if stop.load(Ordering::SeqCst) {
                    cancel.store(true, Ordering::SeqCst);
                }
            }
        }
    }
}

/// The calls and errors a question's run reported (its events are all sent by the time
/// `ask` returns).
fn drain(events: &mut UnboundedReceiver<Event>) -> (Vec<ToolUse>, Vec<String>) {
    let (mut uses, mut errors) = (Vec::new(), Vec::new());
    while let Ok(event) = events.try_recv() {
        match event {
            Event::ToolFinished { call, result, .. } => uses.push(ToolUse {
                name: call.name,
                args: Value::Object(call.args),
                ok: result.status == ToolStatus::Success,
            }),
            Event::Error { message } => errors.push(message),
            _ => {}
        }
    }
    (uses, errors)
}

/// Copies the folders and regular files under `from` into `to`. Anything else (a link, a
/// FIFO) is refused: a set's workspace is plain files, and a link could lead out of it.
fn copy_dir(from: &Path, to: &Path) -> Result<(), BenchError> {
    fn read(path: &Path) -> impl Fn(std::io::Error) -> BenchError + '_ {
        move |source| BenchError::Read { file: path.display().to_string(), source }
    }
    for entry in std::fs::read_dir(from).map_err(read(from))? {
        let entry = entry.map_err(read(from))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(read(&source))?;
        if kind.is_dir() {
            std::fs::create_dir(&target).map_err(read(&target))?;
            copy_dir(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target).map_err(read(&source))?;
        } else {
            return Err(BenchError::Case {
                file: source.display().to_string(),
                reason: "not a folder or a regular file; a set's workspace holds only those".into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::conversations::set::Turn;
    use crate::brain::mock::MockBrain;
    use crate::brain::{Backend, Brain, BrainError, Decision, DecisionRequest, Decoding, Profile, TokenSink};
    use crate::protocol::{AiMessage, DecisionReport, ToolCall, ToolCalling};

    fn mock_profile() -> Profile {
        Profile { name: "mock".into(), backend: Backend::Mock, ..Profile::default() }
    }

    fn turn(question: &str, must: &str) -> Turn {
        Turn {
            question: question.into(),
            must_contain: vec![vec![must.into()]],
            must_not_contain: vec![],
            tools_used: vec![],
            no_tools: false,
            evidence: vec![],
        }
    }

    /// A workspace with one note, and a plan over it with the given turns.
    fn plan(dir: &Path, turns: Vec<Turn>) -> ChatPlan {
        std::fs::create_dir_all(dir.join("ws/notes")).unwrap();
        std::fs::write(dir.join("ws/notes/a.txt"), "The door code is 4711.").unwrap();
        // Chinese: the mock brain answers in Chinese, as the seeds' mock does.
        let conversation = Conversation { id: "c".into(), lang: Lang::Zh, category: "x".into(), turns };
        ChatPlan {
            set: ConversationSet { source: "q.json".into(), workspace: dir.join("ws"), conversations: vec![conversation] },
            settings: vec![Setting::new(mock_profile(), ToolCalling::PromptJson, Decoding::Free)],
            mode: AgentMode::React,
            max_turns: 4,
            exclusivity: Exclusivity::default(),
            tool_timeout: Duration::from_secs(5),
        }
    }

    fn brains() -> BTreeMap<String, SharedBrain> {
        let brain: Box<dyn Brain> = Box::new(MockBrain::new(mock_profile()));
        BTreeMap::from([("mock".to_string(), Arc::new(Mutex::new(brain)))])
    }

    #[derive(Default)]
    struct Recorder {
        started: Vec<(usize, usize, String, usize)>,
        transcripts: Vec<usize>,
        stop_after: Option<(usize, Arc<AtomicBool>)>,
    }

    impl ChatObserver for Recorder {
        fn started(&mut self, job: &QuestionJob<'_>) {
            self.started.push((job.index, job.total, job.conversation.id.clone(), job.turn));
        }
        fn finished(&mut self, job: &QuestionJob<'_>, _record: &QuestionRecord) -> anyhow::Result<()> {
            if let Some((after, stop)) = &self.stop_after {
                if job.index + 1 >= *after {
                    stop.store(true, Ordering::SeqCst);
                }
            }
            Ok(())
        }
        fn transcript(&mut self, _: &Setting, _: &Conversation, messages: &[Message]) -> anyhow::Result<()> {
            self.transcripts.push(messages.len());
            Ok(())
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
    }

    #[test]
    fn turns_share_a_transcript_and_each_is_scored_on_its_own_calls() {
        let dir = tempfile::tempdir().unwrap();
        let mut read = turn("Read notes/a.txt", "4711");
        read.tools_used = vec!["file_reader".into()];
        let mut calc = turn("Compute (2 + 3) * 4", "20");
        calc.tools_used = vec!["calculator".into(), "file_reader".into()];
        let plan = plan(dir.path(), vec![read, calc]);
        let stop = AtomicBool::new(false);
        let mut observer = Recorder::default();
        let run = runtime().block_on(run(&plan, &brains(), &mut observer, &stop)).unwrap();
        assert!(!run.interrupted);
        assert_eq!(observer.started, vec![(0, 2, "c".into(), 1), (1, 2, "c".into(), 2)]);
        // user, calls, result, answer; twice.
        assert_eq!(observer.transcripts, vec![8]);
        let first = &run.records[0];
        assert_eq!((first.passed, first.stop_reason, first.decisions), (true, StopReason::FinalAnswer, 2));
        assert_eq!(first.tools, vec![ToolUse { name: "file_reader".into(), args: serde_json::json!({"path": "notes/a.txt", "max_chars": 2000}), ok: true }]);
        assert!(first.answer.as_deref().unwrap().contains("The door code is 4711."));
        let second = &run.records[1];
        assert!(second.answer.as_deref().unwrap().contains("(2 + 3) * 4 = 20"));
        assert_eq!(second.reasons, vec!["did not call file_reader (called calculator)".to_string()]);
        assert_eq!((second.turn, second.lang, second.category.as_str()), (2, Lang::Zh, "x"));
    }

    /// Writes `notes/out.json` with the converter (which never replaces a file), then
    /// answers with the tool's result.
    struct Writer(Profile);

    impl Brain for Writer {
        fn profile(&self) -> &Profile {
            &self.0
        }
        fn decide(&mut self, request: &DecisionRequest, _: TokenSink<'_>, _: &AtomicBool) -> Result<Decision, BrainError> {
            let ai = match request.messages.last() {
                Some(Message::Tool(result)) => AiMessage::answer(format!("{:?}: {}", result.status, result.content)),
                _ => {
                    let args = serde_json::json!({"to": "json", "path": "notes/t.csv", "output_path": "notes/out.json"});
                    AiMessage::calls(vec![ToolCall { id: String::new(), name: "format_converter".into(), args: args.as_object().cloned().unwrap() }])
                }
            };
            let report = DecisionReport::new("writer", request.phase, request.tool_calling, None);
            Ok(Decision { ai, raw_output: String::new(), prompt: String::new(), plan: None, report })
        }
    }

    #[test]
    fn each_conversation_gets_its_own_copy_of_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = plan(dir.path(), vec![turn("Convert notes/t.csv into notes/out.json", "success")]);
        std::fs::write(dir.path().join("ws/notes/t.csv"), "a,b\n1,2\n").unwrap();
        plan.set.conversations.push(Conversation { id: "d".into(), ..plan.set.conversations[0].clone() });
        let brain: Box<dyn Brain> = Box::new(Writer(mock_profile()));
        let brains = BTreeMap::from([("mock".to_string(), Arc::new(Mutex::new(brain)))]);
        let stop = AtomicBool::new(false);
        let run = runtime().block_on(run(&plan, &brains, &mut Recorder::default(), &stop)).unwrap();
        // The second conversation could write the file too: it did not see the first one's.
        let outcomes: Vec<(bool, bool)> = run.records.iter().map(|r| (r.passed, r.tools[0].ok)).collect();
        assert_eq!(outcomes, [(true, true), (true, true)], "{:#?}", run.records);
        let mut names: Vec<_> = std::fs::read_dir(dir.path().join("ws/notes")).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["a.txt", "t.csv"]);
    }

    #[test]
    fn stop_ends_the_run_before_the_next_question() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), vec![turn("Read notes/a.txt", "4711"), turn("Compute 1 + 1", "2")]);
        let stop = Arc::new(AtomicBool::new(false));
        let mut observer = Recorder { stop_after: Some((1, stop.clone())), ..Recorder::default() };
        let run = runtime().block_on(run(&plan, &brains(), &mut observer, &stop)).unwrap();
        assert!(run.interrupted);
        assert_eq!(run.records.len(), 1);
        assert_eq!(observer.transcripts, vec![4]);
    }

    #[test]
    fn a_link_in_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), vec![turn("q", "x")]);
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("ws/notes/link")).unwrap();
        let stop = AtomicBool::new(false);
        let err = runtime().block_on(run(&plan, &brains(), &mut Recorder::default(), &stop)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: not a folder or a regular file; a set's workspace holds only those", dir.path().join("ws/notes/link").display())
        );
    }
}
