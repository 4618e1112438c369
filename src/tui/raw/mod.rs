//! The Raw output pane: the model's text per decision as it streams, each decision's token
//! counts and speed, the question each run answered, and its own scroll.

mod turn;

use std::time::Instant;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

pub use turn::{grammar_applied, mask_line, phase_name, stats_line, tok_s, PrefillProgress, RawTurn};

use super::pane::{PaneText, Scrollable, Viewport};
use super::text::{one_line, truncate};
use super::theme;
use crate::brain::Decoding;
use crate::protocol::{DecisionReport, Phase, ToolCalling};

const EMPTY: &str = "The model's output streams here token by token, with token counts and speed.";

#[derive(Debug, Default)]
pub struct RawPane {
    pub segments: Vec<RawSegment>,
    view: Viewport,
}

#[derive(Debug)]
pub enum RawSegment {
    /// A new question starts here.
    Question { text: String },
    /// Boxed: a turn is large and questions are small.
    Turn(Box<RawTurn>),
}

impl Scrollable for RawPane {
    fn viewport(&self) -> &Viewport {
        &self.view
    }

    fn viewport_mut(&mut self) -> &mut Viewport {
        &mut self.view
    }
}

impl RawPane {
    pub fn clear(&mut self) {
        self.segments.clear();
    }

    pub fn question(&mut self, text: String) {
        self.segments.push(RawSegment::Question { text });
    }

    /// A decision starts, with the decoding the engine last confirmed; the view follows it.
    pub fn turn_started(&mut self, turn: usize, phase: Phase, tool_calling: ToolCalling, decoding: Decoding) {
        let mut raw_turn = RawTurn::new(turn, phase, tool_calling);
        raw_turn.decoding = decoding;
        self.segments.push(RawSegment::Turn(Box::new(raw_turn)));
        self.view.follow();
    }

    /// A streamed piece; one without a decision started (an engine that skips the event)
    /// opens one.
    pub fn token(&mut self, text: &str, tool_calling: ToolCalling) {
        if self.current().is_none() {
            self.segments.push(RawSegment::Turn(Box::new(RawTurn::new(0, Phase::React, tool_calling))));
        }
        if let Some(turn) = self.current_mut() {
            turn.push(text);
        }
    }

    pub fn prefill(&mut self, done: usize, total: usize, reused: usize, now: Instant) {
        if let Some(turn) = self.current_mut() {
            let first = turn.prefill.map_or((done, now), |p| p.first);
            turn.prefill = Some(PrefillProgress { done, total, reused, first, at: now });
        }
    }

    /// The decision is made: its text (when none streamed), stats and warnings, and what
    /// the brain says it did rather than what the screen asked for.
    pub fn decided(&mut self, raw: &str, report: &DecisionReport) {
        if let Some(current) = self.current_mut() {
            if current.is_empty() {
                current.set_text(raw);
            }
            current.stats = Some(report.stats.clone());
            current.warnings = report.warnings.clone();
            current.phase = report.phase;
            current.tool_calling = report.tool_calling;
            // A brain that decoded nothing (the mock) masked nothing.
            current.decoding = report.decoding.unwrap_or(Decoding::Free);
        }
    }

    pub fn current(&self) -> Option<&RawTurn> {
        self.segments.iter().rev().find_map(|s| match s {
            RawSegment::Turn(t) => Some(&**t),
            RawSegment::Question { .. } => None,
        })
    }

    pub fn current_mut(&mut self) -> Option<&mut RawTurn> {
        self.segments.iter_mut().rev().find_map(|s| match s {
            RawSegment::Turn(t) => Some(&mut **t),
            RawSegment::Question { .. } => None,
        })
    }

    /// All lines; `streaming` puts a cursor after the last decision's text.
    pub fn lines(&self, width: usize, streaming: bool) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let last = self.segments.len().saturating_sub(1);
        for (i, segment) in self.segments.iter().enumerate() {
            if i > 0 {
                out.push(Line::default());
            }
            match segment {
                RawSegment::Question { text } => {
                    let label = truncate(&one_line(text), width.saturating_sub(4));
                    out.push(Line::from(Span::styled(format!("» {label}"), theme::user())));
                }
                RawSegment::Turn(turn) => out.extend(turn.lines(width, streaming && i == last)),
            }
        }
        out
    }

    /// Draws the pane; `thinking` while a decision streams. `tabs` is the title when the
    /// pane shares its slot with the tool calls.
    pub fn render(
        &self,
        frame: &mut Frame,
        area: Rect,
        focused: bool,
        thinking: bool,
        spinner: &str,
        tabs: Option<Vec<Span<'static>>>,
    ) {
        let width = area.width.saturating_sub(2) as usize;
        let current = self.current();
        let title = tabs.unwrap_or_else(|| {
            let mut title = vec![Span::styled(" Raw output ", theme::title(focused))];
            if let Some(turn) = current {
                title.push(Span::styled(format!("turn {} ", turn.turn), theme::dim()));
            }
            title
        });
        let bottom = current.map(|turn| {
            let text = match (&turn.stats, thinking) {
                (_, true) => match turn.prefill {
                    Some(prefill) if turn.streamed_tokens == 0 => format!(" {spinner} {} ", prefill.describe()),
                    _ => format!(" {spinner} streaming · {} tok ", turn.streamed_tokens),
                },
                (Some(stats), false) => format!(
                    " prompt {} · reused {} · gen {}{} ",
                    stats.prompt_shown(),
                    stats.reused_tokens,
                    stats.generated_tokens,
                    tok_s(stats).map(|t| format!(" · {t} tok/s")).unwrap_or_default()
                ),
                (None, false) => format!(" {} tok ", turn.streamed_tokens),
            };
            Line::from(Span::styled(truncate(&text, width), if thinking { theme::running() } else { theme::dim() }))
        });
        let lines = self.lines(width, thinking);
        self.view.draw(frame, area, focused, PaneText { bottom, ..PaneText::new(title, &lines, EMPTY) });
    }
}
