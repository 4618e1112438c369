//! The Messages pane: the transcript as history cells built from the engine's messages,
//! folded or expanded tool results, and its own scroll.

use std::cell::RefCell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use super::cells::HistoryCell;
use super::pane::{PaneText, Scrollable, Viewport};
use super::theme;
use crate::protocol::{AgentMode, Message};

const EMPTY: &str = "Ask the agent something below.\n\nF2 tool passing · F3 mode · F4 model · F5 step mode · F1 all keys";

/// Wrapped lines for (width, results expanded, cells version).
type Wrapped = (usize, bool, u64, Vec<Line<'static>>);

#[derive(Debug, Default)]
pub struct MessagesPane {
    cells: Vec<HistoryCell>,
    /// Bumped on every change to `cells`, to know when the wrapped lines are stale.
    version: u64,
    expanded: bool,
    /// The question shown when its run started, until the engine echoes it as a message.
    pending_echo: Option<String>,
    wrapped: RefCell<Option<Wrapped>>,
    view: Viewport,
}

impl Scrollable for MessagesPane {
    fn viewport(&self) -> &Viewport {
        &self.view
    }

    fn viewport_mut(&mut self) -> &mut Viewport {
        &mut self.view
    }

    /// Besides scrolling, `e` or Enter folds and expands tool results.
    fn on_key(&mut self, key: KeyEvent) -> bool {
        if self.view.on_key(key) {
            return true;
        }
        if matches!(key.code, KeyCode::Char('e') | KeyCode::Enter) {
            self.expanded = !self.expanded;
            self.version += 1;
            return true;
        }
        false
    }
}

impl MessagesPane {
    pub fn cells(&self) -> &[HistoryCell] {
        &self.cells
    }

    pub fn expanded(&self) -> bool {
        self.expanded
    }

    pub fn push(&mut self, cell: HistoryCell) {
        self.cells.push(cell);
        self.version += 1;
    }

    /// A run started: a rule naming the mode and profile, the question, and the view
    /// follows the run.
    pub fn started(&mut self, mode: AgentMode, profile: String, question: String) {
        self.push(HistoryCell::Session { mode, profile });
        self.push(HistoryCell::User { text: question.clone() });
        self.pending_echo = Some(question);
        self.view.follow();
    }

    /// Forgets the transcript (a new conversation).
    pub fn clear(&mut self) {
        self.cells.clear();
        self.version += 1;
        self.pending_echo = None;
    }

    pub fn on_message(&mut self, message: Message) {
        match message {
            Message::System { .. } => {}
            Message::User { content } => {
                // The question was already shown when the run started.
                if self.pending_echo.as_deref() == Some(content.as_str()) {
                    self.pending_echo = None;
                } else {
                    self.push(HistoryCell::User { text: content });
                }
            }
            Message::Assistant(ai) => {
                self.pending_echo = None;
                if !ai.content.trim().is_empty() {
                    self.push(HistoryCell::Assistant { text: ai.content.clone(), final_answer: false });
                }
                if !ai.tool_calls.is_empty() {
                    // Right after the plan: its calls, run one step at a time.
                    let planned = matches!(self.cells.last(), Some(HistoryCell::Plan { .. }));
                    self.push(HistoryCell::ToolCalls { calls: ai.tool_calls, planned });
                }
            }
            Message::Tool(result) => self.push(HistoryCell::ToolResult { result }),
        }
    }

    /// The final answer is usually the last assistant message: mark it rather than show
    /// the text twice.
    pub fn mark_final(&mut self, content: String) {
        for cell in self.cells.iter_mut().rev() {
            match cell {
                HistoryCell::Assistant { text, final_answer } if text.trim() == content.trim() => {
                    *final_answer = true;
                    self.version += 1;
                    return;
                }
                HistoryCell::User { .. } => break,
                _ => {}
            }
        }
        self.push(HistoryCell::Assistant { text: content, final_answer: true });
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, focused: bool) {
        let width = area.width.saturating_sub(2) as usize;
        self.rewrap(width);
        let wrapped = self.wrapped.borrow();
        let lines = wrapped.as_ref().map_or(&[][..], |(_, _, _, lines)| &lines[..]);
        let mut title = vec![Span::styled(" Messages ", theme::title(focused))];
        if focused && self.cells.iter().any(HistoryCell::foldable) {
            let verb = if self.expanded { "e folds results " } else { "e expands results " };
            title.push(Span::styled(verb, theme::dim()));
        }
        self.view.draw(frame, area, focused, PaneText::new(title, lines, EMPTY));
    }

    /// Lays the transcript out again only when the cells, the width or folding changed:
    /// while tokens stream, the messages are not wrapped again on every frame.
    fn rewrap(&self, width: usize) {
        if let Some((w, e, v, _)) = &*self.wrapped.borrow() {
            if *w == width && *e == self.expanded && *v == self.version {
                return;
            }
        }
        let mut lines = Vec::new();
        for (i, cell) in self.cells.iter().enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            lines.extend(cell.lines(width, self.expanded));
        }
        self.wrapped.replace(Some((width, self.expanded, self.version, lines)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    #[test]
    fn the_question_echoed_by_the_engine_is_shown_once_but_a_new_one_is_added() {
        let mut pane = MessagesPane::default();
        pane.started(AgentMode::React, "mock".into(), "你好".into());
        pane.on_message(Message::User { content: "你好".into() });
        pane.on_message(Message::User { content: "again".into() });
        let users: Vec<&HistoryCell> = pane.cells().iter().filter(|c| matches!(c, HistoryCell::User { .. })).collect();
        assert_eq!(users, [&HistoryCell::User { text: "你好".into() }, &HistoryCell::User { text: "again".into() }]);
    }

    #[test]
    fn e_and_enter_fold_results_and_other_letters_are_not_the_panes() {
        let mut pane = MessagesPane::default();
        assert!(pane.on_key(KeyEvent::new(KeyCode::Char('e'), KeyModifiers::NONE)));
        assert!(pane.expanded());
        assert!(pane.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        assert!(!pane.expanded());
        assert!(!pane.on_key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE)));
    }
}
