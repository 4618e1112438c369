//! What the keys that act do: send or queue the question, cancel, toggle a setting,
//! open the picker, start a new conversation, export. Each returns the commands for the
//! engine; the settings change on screen at once and the engine has the last word.

use super::{App, Focus, Overlay, Pane, RunState};
use crate::protocol::Command;
use crate::tui::cells::HistoryCell;
use crate::tui::export;
use crate::tui::pane::Scrollable;

impl App {
    pub(super) fn submit(&mut self) -> Vec<Command> {
        if self.input.buffer().text().trim().is_empty() {
            return Vec::new();
        }
        let question = self.input.buffer_mut().take();
        if self.run.active {
            self.status.flash(match self.queued.replace(question) {
                Some(_) => "queued (replaces the one queued before): sent when this run ends",
                None => "queued: sent when this run ends · Esc cancels the run",
            });
            return Vec::new();
        }
        self.run = RunState { active: true, ..RunState::default() };
        self.messages.viewport_mut().follow();
        vec![Command::Ask { question }]
    }

    pub(super) fn escape(&mut self) -> Vec<Command> {
        if self.run.active && !self.run.cancelling {
            self.run.cancelling = true;
            self.run.paused = None;
            // A cancel stops everything: the queued question goes back to the input.
            if let Some(question) = self.queued.take() {
                let input = self.input.buffer_mut();
                let typed = input.take();
                input.insert_str(&question);
                if !typed.is_empty() {
                    input.newline();
                    input.insert_str(&typed);
                }
            }
            return vec![Command::Cancel];
        }
        self.focus = Focus::Input;
        Vec::new()
    }

    pub(super) fn toggle_tool_calling(&mut self) -> Vec<Command> {
        self.settings.tool_calling = self.settings.tool_calling.toggled();
        vec![Command::SetToolCalling(self.settings.tool_calling)]
    }

    pub(super) fn toggle_decoding(&mut self) -> Vec<Command> {
        self.settings.decoding = self.settings.decoding.toggled();
        vec![Command::SetDecoding(self.settings.decoding)]
    }

    pub(super) fn toggle_mode(&mut self) -> Vec<Command> {
        self.settings.mode = self.settings.mode.toggled();
        if !self.plan_visible() && self.focus == Focus::Plan {
            self.focus = Focus::Input;
        }
        vec![Command::SetMode(self.settings.mode)]
    }

    pub(super) fn toggle_prompt_cache(&mut self) -> Vec<Command> {
        self.settings.prompt_cache = !self.settings.prompt_cache;
        vec![Command::SetPromptCache(self.settings.prompt_cache)]
    }

    pub(super) fn toggle_step_mode(&mut self) -> Vec<Command> {
        self.settings.step_mode = !self.settings.step_mode;
        let mut commands = vec![Command::SetStepMode(self.settings.step_mode)];
        // Turning step mode off while paused should not leave the run waiting.
        if !self.settings.step_mode && self.run.paused.take().is_some() {
            commands.push(Command::Continue);
        }
        commands
    }

    pub(super) fn open_picker(&mut self) -> Vec<Command> {
        let selected = self.profiles.row_of(&self.settings.profile);
        self.overlay = Some(Overlay::Picker { selected, requested: None });
        Vec::new()
    }

    pub(super) fn new_conversation(&mut self) -> Vec<Command> {
        if self.run.active {
            self.status.flash("busy: Esc cancels the run first");
            return Vec::new();
        }
        self.messages.clear();
        self.raw.clear();
        self.tools.clear();
        self.plan.clear();
        for pane in Pane::ALL {
            self.pane_mut(pane).viewport_mut().follow();
        }
        self.log.new_conversation();
        self.messages.push(HistoryCell::Notice { text: "new conversation".into() });
        vec![Command::Reset]
    }

    pub(super) fn export(&mut self) {
        match export::write_session(&self.export_dir, &self.settings, &self.log, chrono::Local::now()) {
            Ok((json, md)) => {
                let text = format!("session exported to {} and {}", json.display(), md.display());
                self.messages.push(HistoryCell::Notice { text });
            }
            Err(e) => self.messages.push(HistoryCell::Error { text: format!("export failed: {e}") }),
        }
    }
}
