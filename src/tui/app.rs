//! The app's state, pure and testable: engine events in ([`App::apply`]), terminal input
//! in ([`App::on_key`], [`App::on_mouse`], [`App::on_paste`]) with the engine commands it
//! causes out, and [`App::render`] to draw it. No terminal, no channels, no clock of its
//! own: time comes in through [`App::tick`].

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::Frame;

use super::cells::HistoryCell;
use super::export::{self, DecisionRecord, PlanRecord, SessionLog, ToolRunRecord};
use super::profiles::{ModelFile, ProfileEntry};
use super::input::InputBox;
use super::plan::PlanView;
use super::raw::{PrefillProgress, RawPane, RawSegment, RawTurn};
use super::tools::{CallState, ToolsPane};
use crate::brain::Decoding;
use crate::protocol::{AgentMode, Command, Event, Message, Settings, StopReason};

/// Where keys go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Input,
    Messages,
    Raw,
    Tools,
    Plan,
}

/// A pane that scrolls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Messages,
    Raw,
    Tools,
    Plan,
}

impl Pane {
    const ALL: [Pane; 4] = [Pane::Messages, Pane::Raw, Pane::Tools, Pane::Plan];

    fn of(focus: Focus) -> Option<Pane> {
        match focus {
            Focus::Input => None,
            Focus::Messages => Some(Pane::Messages),
            Focus::Raw => Some(Pane::Raw),
            Focus::Tools => Some(Pane::Tools),
            Focus::Plan => Some(Pane::Plan),
        }
    }

    fn focus(self) -> Focus {
        match self {
            Pane::Messages => Focus::Messages,
            Pane::Raw => Focus::Raw,
            Pane::Tools => Focus::Tools,
            Pane::Plan => Focus::Plan,
        }
    }
}

/// One value per scrolling pane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PaneMap<T> {
    messages: T,
    raw: T,
    tools: T,
    plan: T,
}

impl<T> PaneMap<T> {
    fn all(value: T) -> Self
    where
        T: Clone,
    {
        Self { messages: value.clone(), raw: value.clone(), tools: value.clone(), plan: value }
    }

    fn get(&self, pane: Pane) -> &T {
        match pane {
            Pane::Messages => &self.messages,
            Pane::Raw => &self.raw,
            Pane::Tools => &self.tools,
            Pane::Plan => &self.plan,
        }
    }

    fn get_mut(&mut self, pane: Pane) -> &mut T {
        match pane {
            Pane::Messages => &mut self.messages,
            Pane::Raw => &mut self.raw,
            Pane::Tools => &mut self.tools,
            Pane::Plan => &mut self.plan,
        }
    }
}

/// A pane's scroll position: following the newest content, or held at a top line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scroll {
    Follow,
    At(usize),
}

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

/// Where a pane was drawn and how much it holds: the last frame's answer, kept so keys
/// and mouse can scroll and hit-test without redoing the layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PaneGeom {
    pub area: Rect,
    pub total: usize,
    pub height: usize,
    pub top: usize,
}

impl PaneGeom {
    fn max_top(&self) -> usize {
        self.total.saturating_sub(self.height)
    }
}

/// Wrapped message lines for (width, results expanded, cells version).
pub(super) type MessagesCache = (usize, bool, u64, Vec<Line<'static>>);

pub struct App {
    pub(super) settings: Settings,
    /// The settings the engine last confirmed.
    confirmed: Settings,
    pub(super) profiles: Vec<String>,
    /// Each profile's model file, for the picker (absent: not known).
    pub(super) model_files: BTreeMap<String, ModelFile>,
    /// Profiles the engine has loaded, with their load time in ms.
    pub(super) loaded: BTreeMap<String, f64>,
    pub(super) loading: Option<(String, Instant)>,
    pub(super) cells: Vec<HistoryCell>,
    /// Bumped on every change to `cells`, to know when cached lines are stale.
    pub(super) cells_version: u64,
    pub(super) expand_results: bool,
    pending_user_echo: Option<String>,
    /// A question typed while a run was busy: sent when it finishes.
    pub(super) queued: Option<String>,
    /// Commands caused by engine events (a queued question), for the loop to send.
    outbox: Vec<Command>,
    pub(super) raw: RawPane,
    pub(super) tools: ToolsPane,
    pub(super) plan: Option<PlanView>,
    pub(super) run: RunState,
    pub(super) input: InputBox,
    pub(super) focus: Focus,
    pub(super) activity: ActivityTab,
    pub(super) overlay: Option<Overlay>,
    scroll: PaneMap<Scroll>,
    geoms: PaneMap<Cell<PaneGeom>>,
    pub(super) input_area: Cell<Rect>,
    pub(super) messages_cache: RefCell<Option<MessagesCache>>,
    pub(super) now: Instant,
    pub(super) frame_count: u64,
    pub(super) flash: Option<String>,
    log: SessionLog,
    export_dir: PathBuf,
    quit: bool,
}

impl App {
    pub fn new(initial: Settings, profiles: Vec<String>) -> Self {
        Self {
            confirmed: initial.clone(),
            settings: initial,
            profiles,
            model_files: BTreeMap::new(),
            loaded: BTreeMap::new(),
            loading: None,
            cells: Vec::new(),
            cells_version: 0,
            expand_results: false,
            pending_user_echo: None,
            queued: None,
            outbox: Vec::new(),
            raw: RawPane::default(),
            tools: ToolsPane::default(),
            plan: None,
            run: RunState::default(),
            input: InputBox::default(),
            focus: Focus::Input,
            activity: ActivityTab::Raw,
            overlay: None,
            scroll: PaneMap::all(Scroll::Follow),
            geoms: PaneMap::default(),
            input_area: Cell::new(Rect::default()),
            messages_cache: RefCell::new(None),
            now: Instant::now(),
            frame_count: 0,
            flash: None,
            log: SessionLog::default(),
            export_dir: PathBuf::from("outputs"),
            quit: false,
        }
    }

    /// Tells the picker which profiles' model files are present.
    pub fn set_model_files(&mut self, entries: Vec<ProfileEntry>) {
        self.model_files = entries.into_iter().map(|e| (e.name, e.file)).collect();
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
        self.now = now;
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
        &self.input
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_ref()
    }

    pub fn run_state(&self) -> &RunState {
        &self.run
    }

    pub fn scroll(&self, pane: Pane) -> Scroll {
        *self.scroll.get(pane)
    }

    pub fn cells(&self) -> &[HistoryCell] {
        &self.cells
    }

    pub fn results_expanded(&self) -> bool {
        self.expand_results
    }

    pub fn session(&self) -> &SessionLog {
        &self.log
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Advances the clock (elapsed times, spinners).
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        self.frame_count = self.frame_count.wrapping_add(1);
    }

    /// Whether something on screen moves by itself (spinners, elapsed times), so the
    /// loop knows to redraw on ticks.
    pub fn animating(&self) -> bool {
        self.run.thinking || self.tools.any_running() || self.loading.is_some() || self.run.cancelling
    }

    pub fn render(&self, frame: &mut Frame) {
        super::view::render(self, frame);
    }

    /// Whether the plan pane has something to show.
    pub fn plan_visible(&self) -> bool {
        self.plan.is_some() || self.settings.mode == AgentMode::PlanExecute
    }

    // ---- engine events -------------------------------------------------------------

    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Started { question, mode, profile } => {
                self.run = RunState { active: true, ..RunState::default() };
                self.push_cell(HistoryCell::Session { mode, profile: profile.clone() });
                self.push_cell(HistoryCell::User { text: question.clone() });
                self.pending_user_echo = Some(question.clone());
                self.raw.segments.push(RawSegment::Question { text: question.clone() });
                self.log.start_question(question, profile, mode);
                self.tools.clear();
                self.plan = None;
                *self.scroll.get_mut(Pane::Messages) = Scroll::Follow;
            }
            Event::MemoryLoaded { notes } => {
                if !notes.is_empty() {
                    self.log.add_notes(&notes);
                    self.push_cell(HistoryCell::Memory { notes });
                }
            }
            Event::MessageAppended { message } => {
                if let Some(q) = self.log.current() {
                    q.messages.push(message.clone());
                }
                self.on_message(message);
            }
            Event::TurnStarted { turn, phase, tool_calling } => {
                self.run.thinking = true;
                self.run.paused = None;
                // The engine confirms a decoding change before the decision that uses it.
                let mut raw_turn = RawTurn::new(turn, phase, tool_calling);
                raw_turn.decoding = self.confirmed.decoding;
                self.raw.segments.push(RawSegment::Turn(raw_turn));
                self.tools.new_turn(turn);
                self.activity = ActivityTab::Raw;
                *self.scroll.get_mut(Pane::Raw) = Scroll::Follow;
            }
            Event::Token { text } => {
                if self.raw.current().is_none() {
                    let turn = RawTurn::new(0, crate::protocol::Phase::React, self.settings.tool_calling);
                    self.raw.segments.push(RawSegment::Turn(turn));
                }
                if let Some(turn) = self.raw.current_mut() {
                    turn.push(&text);
                }
            }
            Event::Prefill { done, total, reused } => {
                if let Some(turn) = self.raw.current_mut() {
                    let first = turn.prefill.map_or((done, self.now), |p| p.first);
                    turn.prefill = Some(PrefillProgress { done, total, reused, first, at: self.now });
                }
            }
            Event::Decided { turn, ai, raw, report } => {
                self.run.thinking = false;
                let (stats, warnings) = (report.stats.clone(), report.warnings.clone());
                if let Some(current) = self.raw.current_mut() {
                    if current.is_empty() {
                        current.set_text(&raw);
                    }
                    current.stats = Some(stats.clone());
                    current.warnings = warnings.clone();
                    // What the brain says it did, not what the screen asked for.
                    current.phase = report.phase;
                    current.tool_calling = report.tool_calling;
                    // What the brain did: a brain that decoded nothing (the mock) masked nothing.
                    current.decoding = report.decoding.unwrap_or(Decoding::Free);
                }
                // No decoding reported: no model decoded (the mock), so nothing was masked.
                let decoding = report.decoding.unwrap_or(Decoding::Free);
                if let Some(q) = self.log.current() {
                    q.decisions.push(DecisionRecord {
                        turn,
                        profile: report.profile.clone(),
                        phase: report.phase,
                        tool_calling: report.tool_calling,
                        decoding,
                        ai,
                        raw,
                        stats,
                        warnings,
                        stop_reason: None,
                    });
                }
            }
            Event::PlanCreated { plan } => {
                let view = PlanView::new(plan.clone());
                if let Some(q) = self.log.current() {
                    q.plans.push(PlanRecord { plan: plan.clone(), states: view.states.clone() });
                }
                self.plan = Some(view);
                self.push_cell(HistoryCell::Plan { plan });
                *self.scroll.get_mut(Pane::Plan) = Scroll::Follow;
            }
            Event::StepState { index, state } => {
                if let Some(plan) = self.plan.as_mut() {
                    plan.set(index, state);
                }
                if let Some(record) = self.log.current().and_then(|q| q.plans.last_mut()) {
                    if let Some(slot) = record.states.get_mut(index) {
                        *slot = state;
                    }
                }
            }
            Event::ToolStarted { call } => {
                self.run.paused = None;
                self.tools.started(call, self.now);
                self.activity = ActivityTab::Tools;
            }
            Event::ToolFinished { call, result, duration_ms } => {
                if let Some(q) = self.log.current() {
                    q.tool_runs.push(ToolRunRecord { call: call.clone(), status: result.status, duration_ms });
                }
                self.tools.finished(call, result, duration_ms, self.now);
            }
            Event::Paused { what, calls } => {
                self.run.paused = Some(what);
                if !calls.is_empty() {
                    self.tools.pending(calls, self.now);
                    self.activity = ActivityTab::Tools;
                }
            }
            Event::FinalAnswer { content } => {
                if let Some(q) = self.log.current() {
                    q.final_answer = Some(content.clone());
                }
                self.mark_final(content);
            }
            Event::Finished { reason } => {
                self.run = RunState::default();
                for row in self.tools.rows.iter_mut().filter(|r| r.state == CallState::Running) {
                    row.state = CallState::Stopped;
                }
                for row in self.tools.rows.iter_mut().filter(|r| r.state == CallState::Next) {
                    row.state = CallState::Stopped;
                }
                if let Some(q) = self.log.current() {
                    q.stop_reason = Some(reason);
                    if let Some(last) = q.decisions.last_mut() {
                        last.stop_reason = Some(reason);
                    }
                }
                if reason != StopReason::FinalAnswer {
                    self.push_cell(HistoryCell::Warning { text: reason.describe().to_string() });
                }
                if reason == StopReason::BrainError {
                    // A run whose model failed to load ends the wait on it.
                    self.loading = None;
                }
                if let Some(question) = self.queued.take() {
                    self.run = RunState { active: true, ..RunState::default() };
                    self.outbox.push(Command::Ask { question });
                }
            }
            Event::Error { message } => {
                self.log.error(message.clone(), self.run.active);
                self.push_cell(HistoryCell::Error { text: message });
            }
            Event::ProfileLoading { name } => {
                self.push_cell(HistoryCell::Notice { text: format!("loading model {name}…") });
                self.loading = Some((name, self.now));
            }
            Event::ProfileReady { name, load_ms } => {
                self.loading = None;
                let text = format!("model {name} ready (loaded in {:.1} s)", load_ms / 1000.0);
                self.push_cell(HistoryCell::Notice { text });
                self.loaded.insert(name, load_ms);
            }
            Event::Settings(settings) => {
                // The engine went back from a profile it could not load: stop showing the load.
                if let Some((name, _)) = &self.loading {
                    if *name != settings.profile {
                        self.flash = Some(format!("could not load {name}: still on {}", settings.profile));
                        self.loading = None;
                    }
                }
                let loaded = self.loaded.contains_key(&settings.profile);
                for change in describe_changes(&self.confirmed, &settings, loaded) {
                    self.push_cell(HistoryCell::Notice { text: change });
                }
                // The engine switched to the profile picked: progress shows in the status
                // bar (and in the picker, when reopened).
                if let Some(Overlay::Picker { requested: Some(asked), .. }) = &self.overlay {
                    if *asked == settings.profile {
                        self.overlay = None;
                    }
                }
                self.confirmed = settings.clone();
                self.settings = settings;
            }
        }
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::System { .. } => {}
            Message::User { content } => {
                // The question was already shown when the run started.
                if self.pending_user_echo.as_deref() == Some(content.as_str()) {
                    self.pending_user_echo = None;
                } else {
                    self.push_cell(HistoryCell::User { text: content });
                }
            }
            Message::Assistant(ai) => {
                self.pending_user_echo = None;
                if !ai.content.trim().is_empty() {
                    self.push_cell(HistoryCell::Assistant { text: ai.content.clone(), final_answer: false });
                }
                if !ai.tool_calls.is_empty() {
                    // Right after the plan: its calls, run one step at a time.
                    let planned = matches!(self.cells.last(), Some(HistoryCell::Plan { .. }));
                    self.push_cell(HistoryCell::ToolCalls { calls: ai.tool_calls, planned });
                }
            }
            Message::Tool(result) => self.push_cell(HistoryCell::ToolResult { result }),
        }
    }

    /// The final answer is usually the last assistant message: mark it rather than show
    /// the text twice.
    fn mark_final(&mut self, content: String) {
        for cell in self.cells.iter_mut().rev() {
            match cell {
                HistoryCell::Assistant { text, final_answer } if text.trim() == content.trim() => {
                    *final_answer = true;
                    self.cells_version += 1;
                    return;
                }
                HistoryCell::User { .. } => break,
                _ => {}
            }
        }
        self.push_cell(HistoryCell::Assistant { text: content, final_answer: true });
    }

    fn push_cell(&mut self, cell: HistoryCell) {
        self.cells.push(cell);
        self.cells_version += 1;
    }

    // ---- terminal input ------------------------------------------------------------

    /// Any terminal event; returns the commands for the engine.
    pub fn on_event(&mut self, event: crossterm::event::Event) -> Vec<Command> {
        match event {
            crossterm::event::Event::Key(key) => self.on_key(key),
            crossterm::event::Event::Mouse(mouse) => {
                self.on_mouse(mouse);
                Vec::new()
            }
            crossterm::event::Event::Paste(text) => {
                self.on_paste(&text);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub fn on_paste(&mut self, text: &str) {
        if self.overlay.is_some() {
            return;
        }
        self.focus = Focus::Input;
        self.input.insert_str(text);
    }

    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        if self.overlay.is_some() {
            return;
        }
        let at = Position::new(mouse.column, mouse.row);
        let hit = Pane::ALL.into_iter().find(|p| {
            let g = self.geom(*p);
            g.area.area() > 0 && g.area.contains(at)
        });
        match mouse.kind {
            MouseEventKind::ScrollUp => {
                if let Some(pane) = hit {
                    self.scroll_by(pane, -3);
                }
            }
            MouseEventKind::ScrollDown => {
                if let Some(pane) = hit {
                    self.scroll_by(pane, 3);
                }
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(pane) = hit {
                    self.focus = pane.focus();
                } else if self.input_area.get().contains(at) {
                    self.focus = Focus::Input;
                }
            }
            _ => {}
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        self.flash = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
            self.quit = true;
            return vec![Command::Quit];
        }
        match &self.overlay {
            Some(Overlay::Help) => {
                if matches!(key.code, KeyCode::Esc | KeyCode::F(1) | KeyCode::Char('?' | 'q') | KeyCode::Enter) {
                    self.overlay = None;
                }
                return Vec::new();
            }
            Some(Overlay::Picker { .. }) => return self.picker_key(key),
            None => {}
        }
        if let Some(commands) = self.global_key(key) {
            return commands;
        }
        match Pane::of(self.focus) {
            None => self.input_key(key),
            Some(pane) => self.pane_key(pane, key),
        }
    }

    /// Keys that mean the same wherever the focus is; `None` when `key` is not one.
    fn global_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let plain = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
        let empty = self.input.is_empty();
        let commands = match key.code {
            KeyCode::F(1) => {
                self.overlay = Some(Overlay::Help);
                vec![]
            }
            KeyCode::Char('?') if plain && empty => {
                self.overlay = Some(Overlay::Help);
                vec![]
            }
            KeyCode::F(2) => self.toggle_tool_calling(),
            KeyCode::Char('t') if ctrl => self.toggle_tool_calling(),
            KeyCode::F(3) => self.toggle_mode(),
            KeyCode::Char('p') if ctrl => self.toggle_mode(),
            KeyCode::F(4) => self.open_picker(),
            KeyCode::Char('o') if ctrl => self.open_picker(),
            KeyCode::F(5) => self.toggle_step_mode(),
            KeyCode::F(6) => self.toggle_decoding(),
            KeyCode::Char('g') if ctrl => self.toggle_decoding(),
            KeyCode::Char('s') if ctrl => self.toggle_step_mode(),
            KeyCode::Char('e') if ctrl => {
                self.export();
                vec![]
            }
            KeyCode::Char('n') if ctrl => self.new_conversation(),
            KeyCode::Esc => self.escape(),
            KeyCode::Tab => {
                self.cycle_focus(true);
                vec![]
            }
            KeyCode::BackTab => {
                self.cycle_focus(false);
                vec![]
            }
            KeyCode::Char(' ' | 'n') | KeyCode::Enter if plain && empty && self.run.paused.is_some() => {
                self.run.paused = None;
                vec![Command::Continue]
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                let pane = Pane::of(self.focus).unwrap_or(Pane::Messages);
                let page = self.geom(pane).height.saturating_sub(1).max(1) as isize;
                self.scroll_by(pane, if key.code == KeyCode::PageUp { -page } else { page });
                vec![]
            }
            _ => return None,
        };
        Some(commands)
    }

    fn input_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if alt || shift => self.input.newline(),
            KeyCode::Char('j') if ctrl => self.input.newline(),
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('u') if ctrl => self.input.clear(),
            KeyCode::Char('w') if ctrl => self.input.delete_word_back(),
            KeyCode::Char('a') if ctrl => self.input.home(),
            KeyCode::Char(c) if !ctrl && !alt => self.input.insert_char(c),
            KeyCode::Backspace if alt || ctrl => self.input.delete_word_back(),
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left if ctrl || alt => self.input.word_left(),
            KeyCode::Right if ctrl || alt => self.input.word_right(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            KeyCode::Up => self.input.up(),
            KeyCode::Down => self.input.down(),
            _ => {}
        }
        Vec::new()
    }

    fn pane_key(&mut self, pane: Pane, key: KeyEvent) -> Vec<Command> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll_by(pane, -1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_by(pane, 1),
            KeyCode::Home | KeyCode::Char('g') => *self.scroll.get_mut(pane) = Scroll::At(0),
            KeyCode::End | KeyCode::Char('G') => *self.scroll.get_mut(pane) = Scroll::Follow,
            KeyCode::Char('e') | KeyCode::Enter if pane == Pane::Messages => {
                self.expand_results = !self.expand_results;
                self.cells_version += 1;
            }
            // Typing anywhere types into the input.
            KeyCode::Char(c) if !ctrl && !alt => {
                self.focus = Focus::Input;
                self.input.insert_char(c);
            }
            KeyCode::Enter => self.focus = Focus::Input,
            _ => {}
        }
        Vec::new()
    }

    fn picker_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Some(Overlay::Picker { selected, requested }) = self.overlay.as_mut() else {
            return Vec::new();
        };
        let last = self.profiles.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::F(4) => self.overlay = None,
            KeyCode::Char('o') if key.modifiers.contains(KeyModifiers::CONTROL) => self.overlay = None,
            KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *selected = (*selected + 1).min(last),
            KeyCode::Home => *selected = 0,
            KeyCode::End => *selected = last,
            KeyCode::Enter => {
                let Some(name) = self.profiles.get(*selected).cloned() else {
                    return Vec::new();
                };
                if name == self.settings.profile && self.loading.is_none() {
                    self.overlay = None;
                    return Vec::new();
                }
                // The status bar keeps the current profile until the engine confirms.
                *requested = Some(name.clone());
                return vec![Command::SetProfile(name)];
            }
            _ => {}
        }
        Vec::new()
    }

    fn submit(&mut self) -> Vec<Command> {
        if self.input.text().trim().is_empty() {
            return Vec::new();
        }
        if self.run.active {
            let question = self.input.take();
            self.flash = Some(match self.queued.replace(question) {
                Some(_) => "queued (replaces the one queued before): sent when this run ends".into(),
                None => "queued: sent when this run ends · Esc cancels the run".into(),
            });
            return Vec::new();
        }
        let question = self.input.take();
        self.run = RunState { active: true, ..RunState::default() };
        *self.scroll.get_mut(Pane::Messages) = Scroll::Follow;
        vec![Command::Ask { question }]
    }

    fn escape(&mut self) -> Vec<Command> {
        if self.run.active && !self.run.cancelling {
            self.run.cancelling = true;
            self.run.paused = None;
            // A cancel stops everything: the queued question goes back to the input.
            if let Some(question) = self.queued.take() {
                let typed = self.input.take();
                self.input.insert_str(&question);
                if !typed.is_empty() {
                    self.input.newline();
                    self.input.insert_str(&typed);
                }
            }
            return vec![Command::Cancel];
        }
        self.focus = Focus::Input;
        Vec::new()
    }

    fn toggle_tool_calling(&mut self) -> Vec<Command> {
        self.settings.tool_calling = self.settings.tool_calling.toggled();
        vec![Command::SetToolCalling(self.settings.tool_calling)]
    }

    fn toggle_decoding(&mut self) -> Vec<Command> {
        self.settings.decoding = self.settings.decoding.toggled();
        vec![Command::SetDecoding(self.settings.decoding)]
    }

    fn toggle_mode(&mut self) -> Vec<Command> {
        self.settings.mode = self.settings.mode.toggled();
        if !self.plan_visible() && self.focus == Focus::Plan {
            self.focus = Focus::Input;
        }
        vec![Command::SetMode(self.settings.mode)]
    }

    fn toggle_step_mode(&mut self) -> Vec<Command> {
        self.settings.step_mode = !self.settings.step_mode;
        let mut commands = vec![Command::SetStepMode(self.settings.step_mode)];
        // Turning step mode off while paused should not leave the run waiting.
        if !self.settings.step_mode && self.run.paused.take().is_some() {
            commands.push(Command::Continue);
        }
        commands
    }

    fn open_picker(&mut self) -> Vec<Command> {
        let selected = self.profiles.iter().position(|p| *p == self.settings.profile).unwrap_or(0);
        self.overlay = Some(Overlay::Picker { selected, requested: None });
        Vec::new()
    }

    fn new_conversation(&mut self) -> Vec<Command> {
        if self.run.active {
            self.flash = Some("busy: Esc cancels the run first".into());
            return Vec::new();
        }
        self.cells.clear();
        self.cells_version += 1;
        self.raw.clear();
        self.tools.clear();
        self.plan = None;
        self.pending_user_echo = None;
        self.scroll = PaneMap::all(Scroll::Follow);
        self.log.new_conversation();
        self.push_cell(HistoryCell::Notice { text: "new conversation".into() });
        vec![Command::Reset]
    }

    fn export(&mut self) {
        match export::write_session(&self.export_dir, &self.settings, &self.log, chrono::Local::now()) {
            Ok((json, md)) => {
                let text = format!("session exported to {} and {}", json.display(), md.display());
                self.push_cell(HistoryCell::Notice { text });
            }
            Err(e) => self.push_cell(HistoryCell::Error { text: format!("export failed: {e}") }),
        }
    }

    fn focus_order(&self) -> Vec<Focus> {
        let mut order = vec![Focus::Input, Focus::Messages, Focus::Raw, Focus::Tools];
        if self.plan_visible() {
            order.push(Focus::Plan);
        }
        order
    }

    fn cycle_focus(&mut self, forward: bool) {
        let order = self.focus_order();
        let at = order.iter().position(|f| *f == self.focus).unwrap_or(0);
        let next = if forward { (at + 1) % order.len() } else { (at + order.len() - 1) % order.len() };
        self.focus = order.get(next).copied().unwrap_or(Focus::Input);
    }

    pub(super) fn geom(&self, pane: Pane) -> PaneGeom {
        self.geoms.get(pane).get()
    }

    pub(super) fn set_geom(&self, pane: Pane, geom: PaneGeom) {
        self.geoms.get(pane).set(geom);
    }

    /// Scrolls by `delta` lines from where the pane was last drawn; reaching the bottom
    /// follows new content again.
    fn scroll_by(&mut self, pane: Pane, delta: isize) {
        let geom = self.geom(pane);
        let max_top = geom.max_top();
        let top = geom.top.saturating_add_signed(delta).min(max_top);
        *self.scroll.get_mut(pane) = if delta > 0 && top >= max_top { Scroll::Follow } else { Scroll::At(top) };
    }

    /// The top line to draw for a pane holding `total` lines in `height` rows.
    pub(super) fn top_line(&self, pane: Pane, total: usize, height: usize, follow_to: Option<usize>) -> usize {
        let max_top = total.saturating_sub(height);
        match *self.scroll.get(pane) {
            Scroll::At(top) => top.min(max_top),
            Scroll::Follow => match follow_to {
                // Keep this line (the plan's current step) in view, a little from the top.
                Some(line) => line.saturating_sub(height / 3).min(max_top),
                None => max_top,
            },
        }
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
    if old.step_mode != new.step_mode {
        out.push(if new.step_mode {
            "step mode on: pauses before each decision and tool batch (Space/n continues)".to_string()
        } else {
            "step mode off".to_string()
        });
    }
    out
}
