//! The input box: the question being typed (its editing keys, its layout as rows) and
//! where it was last drawn, for the mouse. What a run is doing shows in its title.

mod buffer;

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Alignment, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};
use ratatui::Frame;

pub use buffer::{InputBox, InputLayout};

use super::app::RunState;
use super::text::{one_line, truncate};
use super::theme;

/// What a key typed into the input asks of the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKey {
    /// Edited (or ignored): nothing more to do.
    Edited,
    /// Enter: send the text.
    Send,
}

#[derive(Debug, Default)]
pub struct InputPane {
    buffer: InputBox,
    /// Drawing takes `&self`: the area sits in a `Cell` the pane owns.
    area: Cell<Rect>,
}

/// What the input shows besides its text.
pub struct InputLook<'a> {
    pub focused: bool,
    pub run: &'a RunState,
    /// A question waiting for the run to end.
    pub queued: Option<&'a str>,
    pub spinner: &'a str,
}

impl InputPane {
    pub fn buffer(&self) -> &InputBox {
        &self.buffer
    }

    pub fn buffer_mut(&mut self) -> &mut InputBox {
        &mut self.buffer
    }

    /// Whether the input was drawn over `at` last frame.
    pub fn contains(&self, at: Position) -> bool {
        self.area.get().contains(at)
    }

    pub fn on_key(&mut self, key: KeyEvent) -> InputKey {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let input = &mut self.buffer;
        match key.code {
            KeyCode::Enter if alt || shift => input.newline(),
            KeyCode::Char('j') if ctrl => input.newline(),
            KeyCode::Enter => return InputKey::Send,
            KeyCode::Char('u') if ctrl => input.clear(),
            KeyCode::Char('w') if ctrl => input.delete_word_back(),
            KeyCode::Char('a') if ctrl => input.home(),
            KeyCode::Char(c) if !ctrl && !alt => input.insert_char(c),
            KeyCode::Backspace if alt || ctrl => input.delete_word_back(),
            KeyCode::Backspace => input.backspace(),
            KeyCode::Delete => input.delete(),
            KeyCode::Left if ctrl || alt => input.word_left(),
            KeyCode::Right if ctrl || alt => input.word_right(),
            KeyCode::Left => input.left(),
            KeyCode::Right => input.right(),
            KeyCode::Home => input.home(),
            KeyCode::End => input.end(),
            KeyCode::Up => input.up(),
            KeyCode::Down => input.down(),
            _ => {}
        }
        InputKey::Edited
    }

    /// Rows the box takes on a screen `width` wide: up to six of text, the borders, and
    /// one for a queued question.
    pub fn height(&self, width: u16, queued: bool) -> u16 {
        let rows = self.buffer.layout(width.saturating_sub(4) as usize).rows.len() as u16;
        rows.clamp(1, 6) + 2 + u16::from(queued)
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, look: InputLook) {
        self.area.set(area);
        let run = look.run;
        let (title, title_style) = if let Some(what) = &run.paused {
            (format!(" PAUSED before {what} "), theme::running())
        } else if run.cancelling {
            (" cancelling… ".to_string(), theme::warn())
        } else if run.active {
            (format!(" {} working · Esc cancels ", look.spinner), theme::running())
        } else {
            (" Ask ".to_string(), theme::title(look.focused))
        };
        let hint_text = if run.active { " Enter queues · Esc cancels " } else { " Enter send · Alt+Enter newline " };
        let hint = Line::from(Span::styled(hint_text, theme::dim())).alignment(Alignment::Right);
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme::border(look.focused))
            .title(Line::from(Span::styled(truncate(&title, area.width.saturating_sub(4) as usize), title_style)))
            .title_bottom(hint);
        let mut inner = block.inner(area);
        frame.render_widget(block, area);
        if let Some(queued) = look.queued {
            if inner.height > 1 {
                let text = truncate(&format!("⏳ queued: {}", one_line(queued)), inner.width as usize);
                frame.render_widget(Paragraph::new(Line::from(Span::styled(text, theme::running()))), Rect { height: 1, ..inner });
                inner = Rect { y: inner.y + 1, height: inner.height - 1, ..inner };
            }
        }
        let width = inner.width.saturating_sub(2) as usize;
        let layout = self.buffer.layout(width);
        let height = inner.height as usize;
        let top = layout.cursor.0.saturating_sub(height.saturating_sub(1));
        let lines: Vec<Line> = if self.buffer.is_empty() {
            let placeholder = if run.paused.is_some() {
                Span::styled("Space / n / Enter continues · Esc cancels · F5 leaves step mode", theme::running())
            } else {
                Span::styled("Ask a question (中文 works too) · F1 help", theme::dim())
            };
            vec![Line::from(vec![Span::styled("› ", theme::user()), placeholder])]
        } else {
            layout
                .rows
                .iter()
                .enumerate()
                .skip(top)
                .take(height)
                .map(|(i, row)| {
                    let lead = if i == 0 { Span::styled("› ", theme::user()) } else { Span::raw("  ") };
                    Line::from(vec![lead, Span::raw(row.clone())])
                })
                .collect()
        };
        frame.render_widget(Paragraph::new(lines), inner);
        if look.focused {
            let (row, col) = layout.cursor;
            let x = inner.x + 2 + col as u16;
            let y = inner.y + (row - top) as u16;
            if x < inner.x + inner.width && y < inner.y + inner.height {
                frame.set_cursor_position((x, y));
            }
        }
    }
}
