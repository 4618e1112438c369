//! The Tool calls pane: the current decision's calls, the ones step mode is about to run,
//! and when each started and finished on one timeline, so calls that ran together are
//! seen together even when they take milliseconds; with its own scroll.

mod table;

use std::time::Instant;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

pub use table::timeline_bar;

use super::pane::{PaneText, Scrollable, Viewport};
use super::theme;
use crate::protocol::{ToolCall, ToolMessage, ToolStatus};

const EMPTY: &str = "This turn's tool calls appear here as they run in parallel.";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallState {
    /// Step mode: about to run once the user continues.
    Next,
    Running,
    Done,
    Failed,
    /// Still running when the run ended (cancelled).
    Stopped,
}

#[derive(Clone, Debug)]
pub struct ToolRow {
    pub call: ToolCall,
    pub state: CallState,
    pub started: Instant,
    /// When the call started, in ms after the first call of this decision's batch.
    pub start_ms: f64,
    pub duration_ms: Option<f64>,
    pub result: Option<ToolMessage>,
}

impl ToolRow {
    /// Start and end on the timeline; a running call ends `now`.
    pub fn span_ms(&self, origin: Option<Instant>, now: Instant) -> (f64, f64) {
        let end = match (self.duration_ms, self.state) {
            (Some(d), _) => self.start_ms + d,
            (None, CallState::Running) => {
                origin.map_or(0.0, |o| now.saturating_duration_since(o).as_secs_f64() * 1e3).max(self.start_ms)
            }
            (None, _) => self.start_ms,
        };
        (self.start_ms, end)
    }
}

#[derive(Debug, Default)]
pub struct ToolsPane {
    pub rows: Vec<ToolRow>,
    /// The decision whose calls these are.
    pub turn: Option<usize>,
    /// When the first call of these rows started: the timeline's zero.
    pub origin: Option<Instant>,
    /// Set when a new decision starts: the last batch stays on screen while the model
    /// thinks and is replaced by the first call of the next batch.
    replace_on_next: bool,
    pending_turn: Option<usize>,
    view: Viewport,
}

impl Scrollable for ToolsPane {
    fn viewport(&self) -> &Viewport {
        &self.view
    }

    fn viewport_mut(&mut self) -> &mut Viewport {
        &mut self.view
    }
}

impl ToolsPane {
    pub fn clear(&mut self) {
        self.rows.clear();
        self.turn = None;
        self.origin = None;
        self.replace_on_next = false;
        self.pending_turn = None;
    }

    pub fn new_turn(&mut self, turn: usize) {
        self.replace_on_next = true;
        self.pending_turn = Some(turn);
    }

    fn replace_if_new(&mut self) {
        if self.replace_on_next {
            self.rows.clear();
            self.origin = None;
            self.turn = self.pending_turn;
            self.replace_on_next = false;
        }
    }

    /// Step mode paused before these calls: they show as next.
    pub fn pending(&mut self, calls: Vec<ToolCall>, now: Instant) {
        self.replace_if_new();
        for call in calls {
            let row = ToolRow { call, state: CallState::Next, started: now, start_ms: 0.0, duration_ms: None, result: None };
            self.put(row);
        }
    }

    pub fn started(&mut self, call: ToolCall, now: Instant) {
        self.replace_if_new();
        let origin = *self.origin.get_or_insert(now);
        // Events come in bursts, so arrival times are coarse; their order is not: a call
        // that starts after another finished (a plan's next step) started after its end.
        let after_finished = self.rows.iter().filter_map(|r| r.duration_ms.map(|d| r.start_ms + d)).fold(0.0, f64::max);
        let start_ms = (now.saturating_duration_since(origin).as_secs_f64() * 1e3).max(after_finished);
        self.put(ToolRow { call, state: CallState::Running, started: now, start_ms, duration_ms: None, result: None });
    }

    fn put(&mut self, row: ToolRow) {
        match self.rows.iter_mut().find(|r| r.call.id == row.call.id && !row.call.id.is_empty()) {
            Some(existing) => *existing = row,
            None => self.rows.push(row),
        }
    }

    pub fn finished(&mut self, call: ToolCall, result: ToolMessage, duration_ms: f64, now: Instant) {
        let state = match result.status {
            ToolStatus::Success => CallState::Done,
            ToolStatus::Error => CallState::Failed,
        };
        let found = self.rows.iter().position(|r| {
            if call.id.is_empty() {
                r.call.name == call.name && r.call.args == call.args && r.state == CallState::Running
            } else {
                r.call.id == call.id
            }
        });
        let index = match found {
            Some(i) => i,
            None => {
                // A finish without a start (an engine that reports only results).
                self.started(call.clone(), now);
                self.rows.len() - 1
            }
        };
        if let Some(row) = self.rows.get_mut(index) {
            row.state = state;
            row.duration_ms = Some(duration_ms);
            row.result = Some(result);
        }
    }

    /// The run ended: calls still running or waiting to run never will.
    pub fn stop_unfinished(&mut self) {
        for row in self.rows.iter_mut().filter(|r| matches!(r.state, CallState::Running | CallState::Next)) {
            row.state = CallState::Stopped;
        }
    }

    pub fn count(&self, state: CallState) -> usize {
        self.rows.iter().filter(|r| r.state == state).count()
    }

    pub fn any_running(&self) -> bool {
        self.rows.iter().any(|r| r.state == CallState::Running)
    }

    /// The timeline's length: the latest end of any call.
    pub fn span_ms(&self, now: Instant) -> f64 {
        self.rows.iter().map(|r| r.span_ms(self.origin, now).1).fold(0.0, f64::max)
    }

    /// The most calls that ran at the same time.
    pub fn most_at_once(&self, now: Instant) -> usize {
        let spans: Vec<(f64, f64)> = self
            .rows
            .iter()
            .filter(|r| r.state != CallState::Next)
            .map(|r| r.span_ms(self.origin, now))
            .collect();
        spans
            .iter()
            .map(|(start, _)| spans.iter().filter(|(s, e)| s <= start && (e > start || s == start)).count())
            .max()
            .unwrap_or(0)
    }

    /// Rows the table needs at `width` (without its header): the wide layout sizes the
    /// pane by it.
    pub fn table_height(&self, width: usize, now: Instant, spinner: &str) -> usize {
        table::table(self, width, now, spinner).1.len()
    }

    /// Draws the pane. `tabs` is the title when the pane shares its slot with the raw
    /// output.
    pub fn render(
        &self,
        frame: &mut Frame,
        area: Rect,
        focused: bool,
        now: Instant,
        spinner: &str,
        tabs: Option<Vec<Span<'static>>>,
    ) {
        let width = area.width.saturating_sub(2) as usize;
        let summary = self.batch_summary(now);
        let title = match tabs {
            Some(mut title) => {
                if let Some(summary) = summary {
                    title.push(Span::styled(format!(" {summary}"), theme::running()));
                }
                title
            }
            None => {
                let mut title = vec![Span::styled(" Tool calls ", theme::title(focused))];
                if let Some(turn) = self.turn {
                    title.push(Span::styled(format!("turn {turn} "), theme::dim()));
                }
                if let Some(summary) = summary {
                    let style = if self.any_running() { theme::running() } else { theme::dim() };
                    title.push(Span::styled(format!("· {summary}"), style));
                }
                title
            }
        };
        let bottom = (!self.rows.is_empty()).then(|| {
            let mut parts = Vec::new();
            for (state, label, style) in [
                (CallState::Next, "next", theme::running()),
                (CallState::Running, "running", theme::running()),
                (CallState::Done, "done", theme::ok()),
                (CallState::Failed, "failed", theme::failed()),
                (CallState::Stopped, "stopped", theme::warn()),
            ] {
                let n = self.count(state);
                if n > 0 {
                    parts.push(Span::styled(format!(" {n} {label} "), style));
                }
            }
            Line::from(parts)
        });
        let (header, lines) = table::table(self, width, now, spinner);
        let text = PaneText { bottom, header: Some(header), ..PaneText::new(title, &lines, EMPTY) };
        self.view.draw(frame, area, focused, text);
    }

    /// The title's words: how many run at once now, or ran at once.
    fn batch_summary(&self, now: Instant) -> Option<String> {
        let running = self.count(CallState::Running);
        let next = self.count(CallState::Next);
        if running > 1 {
            return Some(format!("running {running} in parallel "));
        }
        if running == 1 {
            return Some("running 1 ".to_string());
        }
        if next > 0 {
            return Some(format!("{next} next (step mode) "));
        }
        let ran = self.rows.len();
        if ran == 0 {
            return None;
        }
        let at_once = self.most_at_once(now);
        let span = table::format_duration(self.span_ms(now));
        Some(if at_once > 1 { format!("{ran} calls, {at_once} in parallel · {span} ") } else { format!("{ran} calls · {span} ") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "calculator".into(), args: Default::default() }
    }

    #[test]
    fn calls_started_together_overlap_and_a_later_step_starts_after_the_one_before() {
        let now = Instant::now();
        let mut pane = ToolsPane::default();
        pane.started(call("a"), now);
        pane.started(call("b"), now);
        pane.finished(call("a"), ToolMessage::error(&call("a"), "x"), 2.0, now);
        pane.finished(call("b"), ToolMessage::error(&call("b"), "x"), 3.0, now);
        assert_eq!(pane.most_at_once(now), 2);
        // Step mode's next step: started (in event order) after both finished.
        pane.started(call("c"), now);
        pane.finished(call("c"), ToolMessage::error(&call("c"), "x"), 1.0, now);
        assert_eq!(pane.rows[2].span_ms(pane.origin, now), (3.0, 4.0));
        assert_eq!(pane.most_at_once(now), 2);
        assert_eq!(pane.span_ms(now), 4.0);
    }
}
