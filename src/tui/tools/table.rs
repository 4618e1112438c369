//! The tool calls as a table for a width. Wide enough, a call is one row with its
//! arguments in a column; narrower, the arguments go on a second, indented row. Each row
//! has a bar on the batch's shared timeline: calls that ran together overlap.

use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{CallState, ToolsPane};
use crate::tui::cells::{format_args_inline, result_text};
use crate::tui::text::{one_line, str_width, truncate};
use crate::tui::theme;

/// The table's header and rows at `width`.
pub(super) fn table(tools: &ToolsPane, width: usize, now: Instant, spinner: &str) -> (Line<'static>, Vec<Line<'static>>) {
    let longest = tools.rows.iter().map(|r| str_width(&r.call.name)).max().unwrap_or(4);
    let columns = Columns::for_width(width, longest);
    let total_ms = tools.span_ms(now);
    let header = columns.line([
        ("state".to_string(), theme::dim()),
        ("tool".to_string(), theme::dim()),
        ("arguments".to_string(), theme::dim()),
        (format!("0–{}", format_duration(total_ms)), theme::dim()),
        ("time".to_string(), theme::dim()),
        ("result".to_string(), theme::dim()),
    ]);
    let mut lines = Vec::new();
    for row in &tools.rows {
        let (state, state_style) = match row.state {
            CallState::Next => ("⏸ next".to_string(), theme::running()),
            CallState::Running => (format!("{spinner} running"), theme::running()),
            CallState::Done => ("✓ done".to_string(), theme::ok()),
            CallState::Failed => ("✗ failed".to_string(), theme::failed()),
            CallState::Stopped => ("■ stopped".to_string(), theme::warn()),
        };
        let (start, end) = row.span_ms(tools.origin, now);
        let (bar, time) = match row.state {
            CallState::Next => (String::new(), String::new()),
            _ => (
                timeline_bar(start, end, total_ms, columns.widths[3]),
                format_duration(row.duration_ms.unwrap_or(end - start)),
            ),
        };
        let result = match &row.result {
            Some(result) => one_line(&result_text(result)),
            None => String::new(),
        };
        let result_style = if row.state == CallState::Failed { theme::failed() } else { theme::plain() };
        let args = one_line(&format_args_inline(&row.call.args));
        lines.push(columns.line([
            (state, state_style),
            (row.call.name.clone(), theme::tool_name()),
            (args.clone(), theme::plain()),
            (bar, state_style),
            (time, theme::dim()),
            (result, result_style),
        ]));
        if columns.args_below() {
            // The second row leads with the call's bar on the timeline, then the arguments.
            let indent = columns.widths[0] + 1;
            let bar = match row.state {
                CallState::Next => String::new(),
                _ => timeline_bar(start, end, total_ms, columns.widths[1].clamp(6, 12)),
            };
            let bar_width = str_width(&bar);
            let text = truncate(&format!("↳ {args}"), width.saturating_sub(indent + bar_width + 1));
            lines.push(Line::from(vec![
                Span::raw(" ".repeat(indent)),
                Span::styled(bar, state_style),
                Span::raw(if bar_width > 0 { " " } else { "" }),
                Span::styled(text, theme::dim()),
            ]));
        }
    }
    (header, lines)
}

/// Column widths of the tool table for an inner width: state, tool, arguments, timeline
/// bar, time, result.
struct Columns {
    widths: [usize; 6],
}

impl Columns {
    fn for_width(width: usize, longest_name: usize) -> Self {
        let state = 9;
        let time = 6;
        let name = longest_name.clamp(4, 18);
        let rest = width.saturating_sub(state + name + time + 4);
        // Arguments and result share what is left; when that is narrow the result keeps
        // the row and the arguments (after the timeline bar) move to a row of their own.
        if rest < 60 {
            return Self { widths: [state, name, 0, 0, time, rest] };
        }
        let bar = 10;
        let rest = rest - bar - 1;
        Self { widths: [state, name, rest * 2 / 5, bar, time, rest - rest * 2 / 5] }
    }

    fn args_below(&self) -> bool {
        self.widths[2] == 0
    }

    fn line(&self, cells: [(String, Style); 6]) -> Line<'static> {
        let mut spans = Vec::new();
        let mut first = true;
        for (i, ((text, style), width)) in cells.into_iter().zip(self.widths).enumerate() {
            if width == 0 {
                continue;
            }
            if !first {
                spans.push(Span::raw(" "));
            }
            first = false;
            let cut = truncate(&text, width);
            let pad = width.saturating_sub(str_width(&cut));
            // Time is right-aligned, the rest left.
            if i == 4 {
                spans.push(Span::raw(" ".repeat(pad)));
                spans.push(Span::styled(cut, style));
            } else {
                spans.push(Span::styled(cut, style));
                if i < 5 {
                    spans.push(Span::raw(" ".repeat(pad)));
                }
            }
        }
        Line::from(spans)
    }
}

pub(super) fn format_duration(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{:.1}s", ms / 1000.0)
    }
}

/// A bar of `width` cells for the span `start..end` on a timeline of `total` ms: the
/// cells it covers are `█` (at least one), the others `·`.
pub fn timeline_bar(start: f64, end: f64, total: f64, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let total = if total > 0.0 { total } else { 1.0 };
    let cell = |ms: f64| ((ms / total) * width as f64).clamp(0.0, width as f64);
    let from = (cell(start).floor() as usize).min(width - 1);
    let to = (cell(end).ceil() as usize).clamp(from + 1, width);
    (0..width).map(|i| if i >= from && i < to { '█' } else { '·' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_place_each_call_on_the_shared_timeline() {
        assert_eq!(timeline_bar(0.0, 10.0, 10.0, 5), "█████");
        assert_eq!(timeline_bar(0.0, 0.1, 10.0, 5), "█····");
        assert_eq!(timeline_bar(5.0, 10.0, 10.0, 4), "··██");
        assert_eq!(timeline_bar(0.0, 0.0, 0.0, 3), "█··");
    }
}
