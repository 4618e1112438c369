//! The real terminal loop driven by a scripted engine that replays the ReAct and
//! plan_execute runs of `tui_script` (honouring step mode, cancel and settings), for
//! trying the TUI by hand in a terminal or in tmux before the engine exists:
//!
//! ```text
//! cargo test --test tui_live -- --ignored --nocapture
//! ```
//!
//! Ignored by default: it takes over the terminal until Ctrl+C.

mod tui_script;

use std::time::Duration;

use b4_agent::protocol::{AgentMode, Command, Event, Message, Settings};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tui_script::*;

#[test]
#[ignore = "interactive: takes over the terminal until Ctrl+C"]
fn live() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let (commands, command_rx) = unbounded_channel();
        let (event_tx, events) = unbounded_channel();
        tokio::spawn(scripted_engine(command_rx, event_tx));
        b4_agent::tui::run(commands, events, settings(), profiles()).await
    })
}

struct Engine {
    rx: UnboundedReceiver<Command>,
    tx: UnboundedSender<Event>,
    settings: Settings,
    paused: bool,
    cancelled: bool,
    quit: bool,
}

async fn scripted_engine(rx: UnboundedReceiver<Command>, tx: UnboundedSender<Event>) {
    let mut engine = Engine { rx, tx, settings: settings(), paused: false, cancelled: false, quit: false };
    while !engine.quit {
        let Some(command) = engine.rx.recv().await else { break };
        if let Command::Ask { question } = command {
            engine.play(&question).await;
        } else {
            engine.handle(command).await;
        }
    }
}

impl Engine {
    fn send(&self, event: Event) {
        let _ = self.tx.send(event);
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::SetToolCalling(t) => self.settings.tool_calling = t,
            Command::SetMode(m) => self.settings.mode = m,
            Command::SetStepMode(s) => self.settings.step_mode = s,
            Command::SetProfile(name) => {
                self.send(Event::ProfileLoading { name: name.clone() });
                tokio::time::sleep(Duration::from_millis(1500)).await;
                self.send(Event::ProfileReady { name: name.clone(), load_ms: 1500.0 });
                self.settings.profile = name;
            }
            Command::Continue => self.paused = false,
            Command::Cancel => self.cancelled = true,
            Command::Quit => self.quit = true,
            Command::Reset | Command::Ask { .. } => return,
        }
        self.send(Event::Settings(self.settings.clone()));
    }

    /// Waits `delay` while answering commands; false when the run should stop.
    async fn wait(&mut self, delay: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + delay;
        loop {
            tokio::select! {
                command = self.rx.recv() => match command {
                    Some(command) => self.handle(command).await,
                    None => self.quit = true,
                },
                _ = tokio::time::sleep_until(deadline), if !self.paused => return !self.cancelled && !self.quit,
            }
            if self.cancelled || self.quit {
                return false;
            }
        }
    }

    async fn play(&mut self, question: &str) {
        self.cancelled = false;
        let script = match self.settings.mode {
            AgentMode::React => react(React::Final),
            AgentMode::PlanExecute => plan_run(PlanRun::Final),
        };
        let mut in_batch = false;
        let mut batch_size = 1;
        for event in script {
            let event = match event {
                Event::Started { mode, profile, .. } => Event::Started { question: question.into(), mode, profile },
                Event::MessageAppended { message: Message::User { .. } } => {
                    Event::MessageAppended { message: Message::user(question) }
                }
                // The script's own pauses and settings changes are the user's to make here.
                Event::Paused { .. } | Event::Settings(_) => continue,
                Event::TurnStarted { turn, phase, .. } => {
                    Event::TurnStarted { turn, phase, tool_calling: self.settings.tool_calling }
                }
                other => other,
            };
            let pause_before = match &event {
                Event::TurnStarted { turn, .. } => {
                    in_batch = false;
                    Some(format!("decision {turn}"))
                }
                Event::MessageAppended { message: Message::Assistant(ai) } => {
                    batch_size = if self.settings.mode == AgentMode::PlanExecute { 1 } else { ai.tool_calls.len() };
                    None
                }
                Event::ToolStarted { .. } if !in_batch => {
                    in_batch = true;
                    Some(format!("{batch_size} tool call(s)"))
                }
                Event::ToolFinished { .. } if self.settings.mode == AgentMode::PlanExecute => {
                    in_batch = false;
                    None
                }
                _ => None,
            };
            if let (Some(what), true) = (pause_before, self.settings.step_mode) {
                self.paused = true;
                self.send(Event::Paused { what });
                if !self.wait(Duration::ZERO).await {
                    break;
                }
            }
            let delay = match &event {
                Event::Token { .. } => Duration::from_millis(30),
                Event::ToolFinished { .. } => Duration::from_millis(700),
                _ => Duration::from_millis(150),
            };
            if !self.wait(delay).await {
                break;
            }
            self.send(event);
        }
        if self.cancelled {
            self.paused = false;
            self.send(Event::Finished { reason: b4_agent::protocol::StopReason::Cancelled });
        }
    }
}

/// A panic while the TUI runs must leave a usable terminal and a readable message: run
/// it in tmux and look at the pane after it exits.
#[test]
#[ignore = "interactive: takes over the terminal"]
#[should_panic(expected = "deliberate panic")]
fn live_panic_restores_the_terminal() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let (commands, _command_rx) = unbounded_channel();
        let (_event_tx, events) = unbounded_channel();
        tokio::select! {
            result = b4_agent::tui::run(commands, events, settings(), profiles()) => {
                result.expect("tui");
            }
            _ = tokio::time::sleep(Duration::from_secs(1)) => panic!("deliberate panic inside the TUI"),
        }
    });
}
