//! Terminal input to the right place: overlays first, then the keys that mean the same
//! everywhere, then the focused pane or the input. The panes scroll themselves; this
//! decides which one a key, the wheel or a click is for, and what the engine is told.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

use super::{App, Overlay};
use crate::protocol::Command;
use crate::tui::input::InputKey;
use crate::tui::picker::PickerKey;

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
    pub const ALL: [Pane; 4] = [Pane::Messages, Pane::Raw, Pane::Tools, Pane::Plan];

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

impl App {
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
        self.input.buffer_mut().insert_str(text);
    }

    /// The wheel scrolls the pane under the pointer; a click focuses it (or the input).
    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        if self.overlay.is_some() {
            return;
        }
        let at = Position::new(mouse.column, mouse.row);
        let hit = Pane::ALL.into_iter().find(|p| self.pane(*p).viewport().contains(at));
        match mouse.kind {
            MouseEventKind::ScrollUp => {
                if let Some(pane) = hit {
                    self.pane_mut(pane).viewport_mut().scroll_by(-3);
                }
            }
            MouseEventKind::ScrollDown => {
                if let Some(pane) = hit {
                    self.pane_mut(pane).viewport_mut().scroll_by(3);
                }
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(pane) = hit {
                    self.focus = pane.focus();
                } else if self.input.contains(at) {
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
        self.status.clear_flash();
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
            None => match self.input.on_key(key) {
                InputKey::Send => self.submit(),
                InputKey::Edited => Vec::new(),
            },
            Some(pane) => {
                self.pane_key(pane, key);
                Vec::new()
            }
        }
    }

    /// Keys that mean the same wherever the focus is; `None` when `key` is not one.
    fn global_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let plain = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
        let empty = self.input.buffer().is_empty();
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
            KeyCode::F(7) => self.toggle_prompt_cache(),
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
            // The focused pane pages; from the input, the messages do.
            KeyCode::PageUp | KeyCode::PageDown => {
                let pane = Pane::of(self.focus).unwrap_or(Pane::Messages);
                self.pane_mut(pane).viewport_mut().page(key.code == KeyCode::PageDown);
                vec![]
            }
            _ => return None,
        };
        Some(commands)
    }

    /// A key for the focused pane; one it has no use for goes to the input.
    fn pane_key(&mut self, pane: Pane, key: KeyEvent) {
        if self.pane_mut(pane).on_key(key) {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            // Typing anywhere types into the input.
            KeyCode::Char(c) if !ctrl && !alt => {
                self.focus = Focus::Input;
                self.input.buffer_mut().insert_char(c);
            }
            KeyCode::Enter => self.focus = Focus::Input,
            _ => {}
        }
    }

    fn picker_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Some(Overlay::Picker { selected, requested }) = self.overlay.as_mut() else {
            return Vec::new();
        };
        match self.profiles.on_key(key, selected, &self.settings.profile) {
            PickerKey::Stay => Vec::new(),
            PickerKey::Close => {
                self.overlay = None;
                Vec::new()
            }
            PickerKey::Switch(name) => {
                // The status bar keeps the current profile until the engine confirms.
                *requested = Some(name.clone());
                vec![Command::SetProfile(name)]
            }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AgentMode, Event, Phase, Settings, ToolCalling};
    use crate::tui::Scroll;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    /// A run with more messages and raw output than any pane shows at once.
    fn long_run() -> App {
        let settings = Settings {
            profile: "mock".into(),
            mode: AgentMode::React,
            tool_calling: ToolCalling::PromptJson,
            step_mode: false,
            decoding: Default::default(),
            strategy: Default::default(),
            prompt_cache: false,
        };
        let mut app = App::new(settings, vec!["mock".into()]);
        app.apply(Event::Started { question: "q".into(), mode: AgentMode::React, profile: "mock".into() });
        for i in 0..40 {
            app.apply(Event::Error { message: format!("error {i}") });
        }
        app.apply(Event::TurnStarted { turn: 1, phase: Phase::React, tool_calling: ToolCalling::PromptJson });
        for i in 0..40 {
            app.apply(Event::Token { text: format!("line {i}\n") });
        }
        app
    }

    fn draw(app: &App, width: u16, height: u16) {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
        terminal.draw(|f| app.render(f)).expect("draw");
    }

    fn scrolls(app: &App) -> Vec<Scroll> {
        Pane::ALL.into_iter().map(|p| app.scroll(p)).collect()
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn page_up_scrolls_the_focused_pane_only() {
        let mut app = long_run();
        draw(&app, 80, 24);
        app.on_key(key(KeyCode::Tab));
        app.on_key(key(KeyCode::Tab));
        assert_eq!(app.focus(), Focus::Raw);
        app.on_key(key(KeyCode::PageUp));
        let [messages, raw, tools, plan] = scrolls(&app)[..] else { panic!("four panes") };
        assert!(matches!(raw, Scroll::At(_)), "{raw:?}");
        assert_eq!([messages, tools, plan], [Scroll::Follow; 3]);
    }

    #[test]
    fn page_up_from_the_input_scrolls_the_messages_only() {
        let mut app = long_run();
        draw(&app, 80, 24);
        app.on_key(key(KeyCode::PageUp));
        let scrolls = scrolls(&app);
        assert!(matches!(scrolls[0], Scroll::At(_)), "{scrolls:?}");
        assert_eq!(scrolls[1..], [Scroll::Follow; 3]);
    }

    #[test]
    fn the_wheel_over_where_a_pane_was_before_a_resize_scrolls_nothing() {
        let mut app = long_run();
        // Wide: the tool calls are at the top right.
        draw(&app, 120, 40);
        let wheel = MouseEvent { kind: MouseEventKind::ScrollUp, column: 100, row: 2, modifiers: KeyModifiers::NONE };
        app.on_mouse(wheel);
        assert_eq!(app.scroll(Pane::Tools), Scroll::At(0));
        app.pane_mut(Pane::Tools).viewport_mut().follow();
        // Compact at 80x24: nothing is drawn there any more.
        draw(&app, 80, 24);
        app.on_mouse(wheel);
        assert_eq!(scrolls(&app), [Scroll::Follow; 4]);
    }
}
