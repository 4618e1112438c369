//! The engine: a long-lived task that takes [`Command`]s and sends [`Event`]s. The TUI and
//! `b4 chat` both drive it; it knows nothing about terminals.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::{Events, Run, SharedBrain, StepGate};
use crate::brain::{make_brain_reporting, ModelConfig};
use crate::memory::Memory;
use crate::protocol::{Command, Event, Message, Settings};
use crate::skills::{self, Workspace};
use crate::tools::ToolLayer;

pub struct EngineHandle {
    pub commands: UnboundedSender<Command>,
    pub events: UnboundedReceiver<Event>,
    /// Ends once the engine has served [`Command::Quit`] (or lost its commands) and the
    /// question it was running has stopped: a front end that quits awaits it, so a
    /// decision in flight sees the cancel instead of running on inside a runtime that
    /// waits for it (see [`EngineHandle::shut_down`]).
    pub finished: tokio::task::JoinHandle<()>,
}

impl EngineHandle {
    /// Asks the engine to stop and waits for it, at most `limit`: a running decision is
    /// cancelled (it stops within one token or prefill chunk) and the question's
    /// memory write ends before the process does. Whether it stopped in time.
    pub async fn shut_down(commands: &UnboundedSender<Command>, finished: tokio::task::JoinHandle<()>, limit: Duration) -> bool {
        let _ = commands.send(Command::Quit);
        tokio::time::timeout(limit, finished).await.is_ok()
    }
}

pub struct EngineConfig {
    pub model_config: ModelConfig,
    pub workspace: Workspace,
    /// `memory/` of the workspace; `None` runs without memory.
    pub memory_dir: Option<PathBuf>,
    pub settings: Settings,
}

/// Characters of memory notes put into the context.
const MEMORY_BUDGET: usize = 4000;

/// Starts the engine on the current tokio runtime.
pub fn spawn(config: EngineConfig) -> EngineHandle {
    let (commands, command_rx) = unbounded_channel();
    let (event_tx, events) = unbounded_channel();
    let engine = Engine::new(config, Events(event_tx));
    let finished = tokio::spawn(engine.serve(command_rx));
    EngineHandle { commands, events, finished }
}

/// A background profile load ended.
struct LoadDone {
    name: String,
    /// The profile the engine was on when the switch was asked.
    previous: String,
    ok: bool,
}

struct Engine {
    config: ModelConfig,
    tools: Arc<ToolLayer>,
    memory: Option<Arc<Memory>>,
    events: Events,
    /// The one copy of the settings: commands change it, each decision of a run reads a
    /// snapshot of it (so F2 or F6 during a run applies to the next decision).
    settings: Arc<Mutex<Settings>>,
    transcript: Arc<tokio::sync::Mutex<Vec<Message>>>,
    brains: Arc<Mutex<HashMap<String, SharedBrain>>>,
    cancel: Arc<AtomicBool>,
    gate: Arc<StepGate>,
    running: Option<tokio::task::JoinHandle<()>>,
}

impl Engine {
    fn new(config: EngineConfig, events: Events) -> Self {
        let timeout = Duration::from_secs(config.model_config.runtime.tool_timeout_secs.max(1));
        Self {
            tools: Arc::new(ToolLayer::new(skills::all(), config.workspace, timeout)),
            memory: config.memory_dir.map(|d| Arc::new(Memory::open(d))),
            events,
            gate: Arc::new(StepGate::new(config.settings.step_mode)),
            settings: Arc::new(Mutex::new(config.settings)),
            config: config.model_config,
            transcript: Arc::new(tokio::sync::Mutex::new(Vec::new())),
            brains: Arc::new(Mutex::new(HashMap::new())),
            cancel: Arc::new(AtomicBool::new(false)),
            running: None,
        }
    }

    fn busy(&self) -> bool {
        self.running.as_ref().is_some_and(|h| !h.is_finished())
    }

    async fn serve(mut self, mut commands: UnboundedReceiver<Command>) {
        self.announce();
        let (loads_tx, mut loads) = unbounded_channel::<LoadDone>();
        loop {
            let command = tokio::select! {
                command = commands.recv() => match command {
                    Some(command) => command,
                    None => break,
                },
                Some(done) = loads.recv() => {
                    self.load_done(done);
                    continue;
                }
            };
            match command {
                Command::Ask { question } => self.ask(question),
                Command::SetToolCalling(way) => self.update(|s| s.tool_calling = way),
                Command::SetDecoding(decoding) => self.update(|s| s.decoding = decoding),
                Command::SetPromptCache(on) => {
                    use crate::brain::generate::prompt_store;
                    prompt_store::enable(on.then(|| prompt_store::PromptStore::new(prompt_store::default_dir())));
                    self.update(|s| s.prompt_cache = on);
                }
                Command::SetMode(mode) => self.update(|s| s.mode = mode),
                Command::SetProfile(name) => self.set_profile(name, &loads_tx),
                Command::SetStepMode(on) => {
                    self.gate.set_enabled(on);
                    self.update(|s| s.step_mode = on);
                }
                Command::Continue => self.gate.release(),
                Command::Cancel => {
                    self.cancel.store(true, Ordering::SeqCst);
                    self.gate.release();
                }
                Command::Reset => {
                    if self.busy() {
                        self.events.emit(Event::Error { message: "cannot reset while a question runs (Esc cancels it)".into() });
                    } else {
                        self.transcript.lock().await.clear();
                    }
                }
                Command::Quit => {
                    self.cancel.store(true, Ordering::SeqCst);
                    self.gate.release();
                    break;
                }
            }
        }
        if let Some(running) = self.running.take() {
            let _ = running.await;
        }
    }

    /// The settings now (a copy).
    fn snapshot(&self) -> Settings {
        self.settings.lock().map(|s| s.clone()).unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// Changes the settings and tells the screen what they are now.
    fn update(&self, change: impl FnOnce(&mut Settings)) {
        match self.settings.lock() {
            Ok(mut settings) => change(&mut settings),
            Err(poisoned) => change(&mut poisoned.into_inner()),
        }
        self.announce();
    }

    fn announce(&self) {
        self.events.emit(Event::Settings(self.snapshot()));
    }

    /// Switches to `name` at once (the status bar shows it loading) and loads it in the
    /// background, so the next question starts without the wait; a load that fails
    /// switches back (see [`Engine::load_done`]).
    fn set_profile(&mut self, name: String, loads: &UnboundedSender<LoadDone>) {
        if let Err(e) = self.config.profile(Some(&name)) {
            self.events.emit(Event::Error { message: e.to_string() });
            return;
        }
        let previous = self.snapshot().profile;
        self.update(|s| s.profile = name.clone());
        let (brains, config, events, loads) = (self.brains.clone(), self.config.clone(), self.events.clone(), loads.clone());
        tokio::spawn(async move {
            let loaded = brain_for(&brains, &config, &name, &events).await;
            if let Err(message) = &loaded {
                events.emit(Event::Error { message: format!("{message}; staying on {previous}") });
            }
            let _ = loads.send(LoadDone { name, previous, ok: loaded.is_ok() });
        });
    }

    /// A failed load leaves the engine on the profile it had: the settings go back (unless
    /// another switch came since) and are announced, so the screen stops showing the
    /// load and the next question runs on a brain that works.
    fn load_done(&mut self, done: LoadDone) {
        if done.ok {
            return;
        }
        // Announced even when unchanged: the screen stops showing the load on it.
        self.update(|s| {
            if s.profile == done.name {
                s.profile = done.previous;
            }
        });
    }

    /// Runs `question` after the run before it: a screen that queued a question sends it
    /// on `Finished`, which the run emits a moment before its task ends.
    fn ask(&mut self, question: String) {
        let previous = self.running.take().filter(|h| !h.is_finished());
        let (brains, config, events) = (self.brains.clone(), self.config.clone(), self.events.clone());
        let (tools, memory, transcript) = (self.tools.clone(), self.memory.clone(), self.transcript.clone());
        let (cancel, gate, settings) = (self.cancel.clone(), self.gate.clone(), self.settings.clone());
        let Settings { profile, mode, .. } = self.snapshot();
        self.running = Some(tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            cancel.store(false, Ordering::SeqCst);
            let brain = match brain_for(&brains, &config, &profile, &events).await {
                Ok(brain) => brain,
                Err(message) => {
                    // The question still shows (and is exported), with why it got no answer.
                    events.emit(Event::Started { question, mode, profile });
                    events.emit(Event::Error { message });
                    events.emit(Event::Finished { reason: crate::protocol::StopReason::BrainError });
                    return;
                }
            };
            let run = Run {
                brain,
                tools: &tools,
                memory: memory.as_deref(),
                events: events.clone(),
                cancel,
                gate,
                mode,
                settings,
                exclusivity: config.runtime.exclusivity,
                max_turns: config.runtime.max_turns,
                memory_budget: MEMORY_BUDGET,
            };
            let mut transcript = transcript.lock().await;
            run.ask(&mut transcript, &question).await;
        }));
    }
}

/// The brain of a profile, loaded on first use (with progress events) and kept; the
/// error says why it could not be loaded.
async fn brain_for(
    brains: &Arc<Mutex<HashMap<String, SharedBrain>>>,
    config: &ModelConfig,
    name: &str,
    events: &Events,
) -> Result<SharedBrain, String> {
    if let Some(brain) = brains.lock().ok().and_then(|b| b.get(name).cloned()) {
        return Ok(brain);
    }
    let profile = config
        .profile(Some(name))
        .or_else(|e| if name == config.model.name { Ok(config.model.clone()) } else { Err(e) })
        .map_err(|e| e.to_string())?;
    events.emit(Event::ProfileLoading { name: name.to_string() });
    let started = Instant::now();
    let (progress_events, progress_name) = (events.clone(), name.to_string());
    let loaded = tokio::task::spawn_blocking(move || {
        let report = |progress| progress_events.emit(Event::ProfileProgress { name: progress_name.clone(), progress });
        make_brain_reporting(&profile, &report)
    })
    .await;
    match loaded {
        Ok(Ok(brain)) => {
            let shared: SharedBrain = Arc::new(Mutex::new(brain));
            if let Ok(mut b) = brains.lock() {
                b.insert(name.to_string(), shared.clone());
            }
            events.emit(Event::ProfileReady { name: name.to_string(), load_ms: started.elapsed().as_secs_f64() * 1e3 });
            Ok(shared)
        }
        Ok(Err(e)) => Err(format!("profile {name}: {e}")),
        Err(e) => Err(format!("profile {name}: loading crashed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::model::testing::write_tiny_qwen2_gguf;
    use crate::brain::Profile;
    use crate::protocol::{LoadProgress, LoadStage};

    /// Quitting while a decision runs cancels it: the engine ends at once, not when the
    /// decision would have (here a mock decision of a minute), and the question ends
    /// cancelled.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shutting_down_cancels_the_decision_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let slow = Profile { name: "slow".into(), backend: crate::brain::Backend::Mock, mock_delay_ms: 60_000, ..Profile::default() };
        let model_config = ModelConfig { model: slow.clone(), models: [("slow".to_string(), slow)].into(), ..ModelConfig::default() };
        let settings = Settings {
            profile: "slow".into(),
            mode: crate::protocol::AgentMode::React,
            tool_calling: crate::protocol::ToolCalling::PromptJson,
            step_mode: false,
            decoding: Default::default(),
            strategy: Default::default(),
            prompt_cache: false,
        };
        let workspace = Workspace::new(dir.path()).unwrap();
        let mut handle = spawn(EngineConfig { model_config, workspace, memory_dir: None, settings });
        handle.commands.send(Command::Ask { question: "计算 6 * 7".into() }).unwrap();
        loop {
            match handle.events.recv().await {
                Some(Event::TurnStarted { .. }) => break,
                Some(_) => {}
                None => panic!("the engine ended before its first decision"),
            }
        }
        let started = Instant::now();
        assert!(EngineHandle::shut_down(&handle.commands, handle.finished, Duration::from_secs(20)).await, "the engine did not stop");
        assert!(started.elapsed() < Duration::from_secs(20));
        let mut rest = Vec::new();
        while let Some(event) = handle.events.recv().await {
            rest.push(event);
        }
        assert!(
            rest.iter().any(|e| matches!(e, Event::Finished { reason: crate::protocol::StopReason::Cancelled })),
            "{rest:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_first_load_reports_its_stages_between_loading_and_ready_and_a_second_is_silent() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_tiny_qwen2_gguf(dir.path(), "qwen2");
        let profile = Profile { name: "tiny-engine".into(), model_name_or_path: path.display().to_string(), ..Profile::default() };
        let config = ModelConfig { models: [("tiny-engine".to_string(), profile)].into(), ..ModelConfig::default() };
        let (tx, mut rx) = unbounded_channel();
        let events = Events(tx);
        let brains = Arc::new(Mutex::new(HashMap::new()));
        brain_for(&brains, &config, "tiny-engine", &events).await.unwrap();
        brain_for(&brains, &config, "tiny-engine", &events).await.unwrap();
        drop(events);
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            seen.push(event);
        }
        let name = "tiny-engine".to_string();
        assert_eq!(seen.first(), Some(&Event::ProfileLoading { name: name.clone() }), "{seen:?}");
        assert!(matches!(seen.last(), Some(Event::ProfileReady { name: n, .. }) if *n == name), "{seen:?}");
        let progress: Vec<LoadProgress> = seen[1..seen.len() - 1]
            .iter()
            .map(|e| match e {
                Event::ProfileProgress { name: n, progress } if *n == name => *progress,
                other => panic!("not a progress report of {name}: {other:?}"),
            })
            .collect();
        let total = progress.last().map_or(0, |p| p.total);
        assert!(total > 0, "{progress:?}");
        assert_eq!(progress.first().map(|p| p.stage), Some(LoadStage::Tokenizer), "{progress:?}");
        assert_eq!(progress.last(), Some(&LoadProgress { stage: LoadStage::Weights, done: total, total }));
    }
}
