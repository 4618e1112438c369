//! The app: engine events in ([`App::apply`], routed to the panes they concern), terminal
//! input in ([`App::on_key`], [`App::on_mouse`], [`App::on_paste`], in `routing.rs`) with
//! the engine commands it causes out, and [`App::render`] to draw it. Each pane owns its
//! content, scroll and geometry and draws itself; the app keeps the run, the settings,
//! the focus and the overlays. No terminal, no channels, no clock of its own: time comes
//! in through [`App::tick`].

mod actions;
mod routing;

use std::path::PathBuf;
use std::time::Instant;

use ratatui::Frame;

pub use routing::{Focus, Pane};

use super::cells::HistoryCell;
use super::clock::Clock;
use super::export::{DecisionRecord, PlanRecord, SessionLog, ToolRunRecord};
use super::input::{InputBox, InputPane};
use super::messages::MessagesPane;
use super::pane::{Scroll, Scrollable};
use super::picker::Profiles;
use super::plan::PlanPane;
use super::profiles::ProfileEntry;
use super::raw::RawPane;
use super::status::StatusBar;
use super::tools::ToolsPane;
use crate::brain::Decoding;
use crate::protocol::{AgentMode, Command, Event, Settings, StopReason};

/// Which pane the compact layout's shared slot shows when the user has not focused one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActivityTab {
    Raw,
    Tools,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlay {
    Help,
    /// The profile picker: the highlighted row and the profile asked for, if any.
    Picker { selected: usize, requested: Option<String> },
}

/// What a run is doing, for the status bar and for which keys mean what.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunState {
    pub active: bool,
    pub thinking: bool,
    pub cancelling: bool,
    /// Step mode: what the runtime waits before.
    pub paused: Option<String>,
}

pub struct App {
    pub(super) settings: Settings,
    /// The settings the engine last confirmed.
    confirmed: Settings,
    pub(super) profiles: Profiles,
    pub(super) messages: MessagesPane,
    pub(super) raw: RawPane,
    pub(super) tools: ToolsPane,
    pub(super) plan: PlanPane,
    pub(super) input: InputPane,
    pub(super) status: StatusBar,
    /// A question typed while a run was busy: sent when it finishes.
    pub(super) queued: Option<String>,
    /// Commands caused by engine events (a queued question), for the loop to send.
    outbox: Vec<Command>,
    pub(super) run: RunState,
    pub(super) focus: Focus,
    pub(super) activity: ActivityTab,
    pub(super) overlay: Option<Overlay>,
    pub(super) clock: Clock,
    log: SessionLog,
    export_dir: PathBuf,
    quit: bool,
}

impl App {
    pub fn new(initial: Settings, profiles: Vec<String>) -> Self {
        Self {
            confirmed: initial.clone(),
            settings: initial,
            profiles: Profiles::new(profiles),
            messages: MessagesPane::default(),
            raw: RawPane::default(),
            tools: ToolsPane::default(),
            plan: PlanPane::default(),
            input: InputPane::default(),
            status: StatusBar::default(),
            queued: None,
            outbox: Vec::new(),
            run: RunState::default(),
            focus: Focus::Input,
            activity: ActivityTab::Raw,
            overlay: None,
            clock: Clock::new(Instant::now()),
            log: SessionLog::default(),
            export_dir: PathBuf::from("outputs"),
            quit: false,
        }
    }

    /// Tells the picker which profiles' model files are present.
    pub fn set_model_files(&mut self, entries: Vec<ProfileEntry>) {
        self.profiles.set_files(entries);
    }

    /// The question waiting for the current run to end.
    pub fn queued(&self) -> Option<&str> {
        self.queued.as_deref()
    }

    /// Commands that engine events caused (a queued question to send), taken once.
    pub fn take_commands(&mut self) -> Vec<Command> {
        std::mem::take(&mut self.outbox)
    }

    /// Sets the clock without moving spinners: events are applied at the time they came.
    pub fn set_now(&mut self, now: Instant) {
        self.clock.set(now);
    }

    /// Where Ctrl+E writes (default `outputs/`).
    pub fn set_export_dir(&mut self, dir: impl Into<PathBuf>) {
        self.export_dir = dir.into();
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn focus(&self) -> Focus {
        self.focus
    }

    pub fn input(&self) -> &InputBox {
        self.input.buffer()
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_ref()
    }

    pub fn run_state(&self) -> &RunState {
        &self.run
    }

    pub fn scroll(&self, pane: Pane) -> Scroll {
        self.pane(pane).viewport().scroll()
    }

    pub fn cells(&self) -> &[HistoryCell] {
        self.messages.cells()
    }

    pub fn results_expanded(&self) -> bool {
        self.messages.expanded()
    }

    pub fn session(&self) -> &SessionLog {
        &self.log
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Advances the clock (elapsed times, spinners).
    pub fn tick(&mut self, now: Instant) {
        self.clock.tick(now);
    }

    /// Whether something on screen moves by itself (spinners, elapsed times), so the
    /// loop knows to redraw on ticks.
    pub fn animating(&self) -> bool {
        self.run.thinking || self.tools.any_running() || self.profiles.loading().is_some() || self.run.cancelling
    }

    pub fn render(&self, frame: &mut Frame) {
        super::view::render(self, frame);
    }

    /// Whether the plan pane has something to show.
    pub fn plan_visible(&self) -> bool {
        self.plan.plan().is_some() || self.settings.mode == AgentMode::PlanExecute
    }

    /// A scrolling pane, for routing keys and the mouse to it.
    pub(super) fn pane(&self, pane: Pane) -> &dyn Scrollable {
        match pane {
            Pane::Messages => &self.messages,
            Pane::Raw => &self.raw,
            Pane::Tools => &self.tools,
            Pane::Plan => &self.plan,
        }
    }

    fn pane_mut(&mut self, pane: Pane) -> &mut dyn Scrollable {
        match pane {
            Pane::Messages => &mut self.messages,
            Pane::Raw => &mut self.raw,
            Pane::Tools => &mut self.tools,
            Pane::Plan => &mut self.plan,
        }
    }

    // ---- engine events -------------------------------------------------------------

    pub fn apply(&mut self, event: Event) {
        let now = self.clock.now;
        match event {
            Event::Started { question, mode, profile } => {
                self.run = RunState { active: true, ..RunState::default() };
                self.messages.started(mode, profile.clone(), question.clone());
                self.raw.question(question.clone());
                self.log.start_question(question, profile, mode);
                self.tools.clear();
                self.plan.clear();
            }
            Event::MemoryLoaded { notes } => {
                if !notes.is_empty() {
                    self.log.add_notes(&notes);
                    self.messages.push(HistoryCell::Memory { notes });
                }
            }
            Event::MessageAppended { message } => {
                if let Some(q) = self.log.current() {
                    q.messages.push(message.clone());
                }
                self.messages.on_message(message);
            }
            Event::TurnStarted { turn, phase, tool_calling } => {
                self.run.thinking = true;
                self.run.paused = None;
                // The engine confirms a decoding change before the decision that uses it.
                self.raw.turn_started(turn, phase, tool_calling, self.confirmed.decoding);
                self.tools.new_turn(turn);
                self.activity = ActivityTab::Raw;
            }
            Event::Token { text } => self.raw.token(&text, self.settings.tool_calling),
            Event::Prefill { done, total, reused } => self.raw.prefill(done, total, reused, now),
            Event::Decided { turn, ai, raw, report } => {
                self.run.thinking = false;
                self.raw.decided(&raw, &report);
                if let Some(q) = self.log.current() {
                    q.decisions.push(DecisionRecord {
                        turn,
                        profile: report.profile,
                        phase: report.phase,
                        tool_calling: report.tool_calling,
                        // No decoding reported: no model decoded (the mock), so nothing was masked.
                        decoding: report.decoding.unwrap_or(Decoding::Free),
                        ai,
                        raw,
                        stats: report.stats,
                        warnings: report.warnings,
                        stop_reason: None,
                    });
                }
            }
            Event::PlanCreated { plan } => {
                self.plan.show(plan.clone());
                if let Some(q) = self.log.current() {
                    let states = self.plan.plan().map(|p| p.states.clone()).unwrap_or_default();
                    q.plans.push(PlanRecord { plan: plan.clone(), states });
                }
                self.messages.push(HistoryCell::Plan { plan });
            }
            Event::StepState { index, state } => {
                self.plan.set_step(index, state);
                if let Some(record) = self.log.current().and_then(|q| q.plans.last_mut()) {
                    if let Some(slot) = record.states.get_mut(index) {
                        *slot = state;
                    }
                }
            }
            Event::ToolStarted { call } => {
                self.run.paused = None;
                self.tools.started(call, now);
                self.activity = ActivityTab::Tools;
            }
            Event::ToolFinished { call, result, duration_ms } => {
                if let Some(q) = self.log.current() {
                    q.tool_runs.push(ToolRunRecord { call: call.clone(), status: result.status, duration_ms });
                }
                self.tools.finished(call, result, duration_ms, now);
            }
            Event::Paused { what, calls } => {
                self.run.paused = Some(what);
                if !calls.is_empty() {
                    self.tools.pending(calls, now);
                    self.activity = ActivityTab::Tools;
                }
            }
            Event::FinalAnswer { content } => {
                if let Some(q) = self.log.current() {
                    q.final_answer = Some(content.clone());
                }
                self.messages.mark_final(content);
            }
            Event::Finished { reason } => self.finished(reason),
            Event::Error { message } => {
                self.log.error(message.clone(), self.run.active);
                self.messages.push(HistoryCell::Error { text: message });
            }
            Event::ProfileLoading { name } => {
                self.messages.push(HistoryCell::Notice { text: format!("loading model {name}…") });
                self.profiles.start_loading(name, now);
            }
            Event::ProfileProgress { name, progress } => self.profiles.progress(&name, progress),
            Event::ProfileReady { name, load_ms } => {
                let text = format!("model {name} ready (loaded in {:.1} s)", load_ms / 1000.0);
                self.messages.push(HistoryCell::Notice { text });
                self.profiles.ready(name, load_ms);
            }
            Event::Settings(settings) => self.confirm_settings(settings),
        }
    }

    fn finished(&mut self, reason: StopReason) {
        self.run = RunState::default();
        self.tools.stop_unfinished();
        if let Some(q) = self.log.current() {
            q.stop_reason = Some(reason);
            if let Some(last) = q.decisions.last_mut() {
                last.stop_reason = Some(reason);
            }
        }
        if reason != StopReason::FinalAnswer {
            self.messages.push(HistoryCell::Warning { text: reason.describe().to_string() });
        }
        if reason == StopReason::BrainError {
            // A run whose model failed to load ends the wait on it.
            self.profiles.stop_loading();
        }
        if let Some(question) = self.queued.take() {
            self.run = RunState { active: true, ..RunState::default() };
            self.outbox.push(Command::Ask { question });
        }
    }

    fn confirm_settings(&mut self, settings: Settings) {
        // The engine went back from a profile it could not load: stop showing the load.
        if self.profiles.loading().is_some_and(|l| l.name != settings.profile) {
            if let Some(name) = self.profiles.stop_loading() {
                self.status.flash(format!("could not load {name}: still on {}", settings.profile));
            }
        }
        let loaded = self.profiles.is_loaded(&settings.profile);
        for change in describe_changes(&self.confirmed, &settings, loaded) {
            self.messages.push(HistoryCell::Notice { text: change });
        }
        // The engine switched to the profile picked: progress shows in the status bar
        // (and in the picker, when reopened).
        if let Some(Overlay::Picker { requested: Some(asked), .. }) = &self.overlay {
            if *asked == settings.profile {
                self.overlay = None;
            }
        }
        self.confirmed = settings.clone();
        self.settings = settings;
    }
}

/// Notices for what changed; `loaded` when the new profile's model is already in memory.
fn describe_changes(old: &Settings, new: &Settings, loaded: bool) -> Vec<String> {
    let mut out = Vec::new();
    if old.profile != new.profile {
        let how = if loaded { " (already loaded: no wait)" } else { "" };
        out.push(format!("model profile → {}{how}", new.profile));
    }
    if old.mode != new.mode {
        out.push(format!("mode → {} (from the next question)", new.mode.as_str()));
    }
    if old.tool_calling != new.tool_calling {
        out.push(format!("tool passing → {} (from the next decision)", new.tool_calling.as_str()));
    }
    if old.decoding != new.decoding {
        out.push(format!("decoding → {} (from the next decision)", new.decoding.as_str()));
    }
    if old.prompt_cache != new.prompt_cache {
        out.push(if new.prompt_cache {
            "prompt cache on disk → on (prompt prefixes saved and read again by later runs)".to_string()
        } else {
            "prompt cache on disk → off (nothing saved or read there)".to_string()
        });
    }
    if old.step_mode != new.step_mode {
        out.push(if new.step_mode {
            "step mode on: pauses before each decision and tool batch (Space/n continues)".to_string()
        } else {
            "step mode off".to_string()
        });
    }
    out
}
