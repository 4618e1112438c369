//! The transcript as a list of cells, each rendering itself to lines for a width (the
//! shape of codex's `history_cell`). Tool results fold when long.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::text::{sanitize, wrap_line, wrap_text};
use super::theme;
use crate::protocol::{AgentMode, Plan, ToolCall, ToolMessage, ToolStatus};

/// Logical lines of a tool result shown while it is folded.
pub const FOLDED_LINES: usize = 3;

#[derive(Clone, Debug, PartialEq)]
pub enum HistoryCell {
    /// A conversation started: which mode and profile answer it.
    Session { mode: AgentMode, profile: String },
    User { text: String },
    /// Assistant text; `final_answer` when the run ended on it.
    Assistant { text: String, final_answer: bool },
    /// An assistant message that asked for tools; `planned` when they are a plan's calls,
    /// which run one step at a time.
    ToolCalls { calls: Vec<ToolCall>, planned: bool },
    ToolResult { result: ToolMessage },
    Plan { plan: Plan },
    Memory { notes: Vec<String> },
    /// Something the app or engine reports that is not an error (settings, export...).
    Notice { text: String },
    Warning { text: String },
    Error { text: String },
}

impl HistoryCell {
    /// Whether this cell hides part of itself until expanded.
    pub fn foldable(&self) -> bool {
        match self {
            HistoryCell::ToolResult { result } => result_lines(result).len() > FOLDED_LINES + 1,
            _ => false,
        }
    }

    /// The lines of this cell at `width` columns.
    pub fn lines(&self, width: usize, expanded: bool) -> Vec<Line<'static>> {
        match self {
            HistoryCell::Session { mode, profile } => {
                let label = format!(" {} · {} ", mode.as_str(), profile);
                let rule = width.saturating_sub(super::text::str_width(&label) + 2);
                vec![Line::from(vec![
                    Span::styled("──", theme::dim()),
                    Span::styled(label, theme::dim()),
                    Span::styled("─".repeat(rule), theme::dim()),
                ])]
            }
            HistoryCell::User { text } => {
                let mut out = vec![Line::from(Span::styled("You", theme::user()))];
                out.extend(wrap_text(text, theme::plain(), width, 2));
                out
            }
            HistoryCell::Assistant { text, final_answer } => {
                let head = if *final_answer {
                    Span::styled("Answer", theme::answer())
                } else {
                    Span::styled("Assistant", theme::assistant())
                };
                let mut out = vec![Line::from(head)];
                if *final_answer {
                    out.extend(super::markdown::render(text, width, 2));
                } else {
                    out.extend(wrap_text(text, theme::plain(), width, 2));
                }
                out
            }
            HistoryCell::ToolCalls { calls, planned } => {
                let noun = if calls.len() == 1 { "tool call" } else { "tool calls" };
                let what = if *planned {
                    format!(" → plan: {} {noun}, one per step", calls.len())
                } else {
                    format!(" → {} {noun}", calls.len())
                };
                let mut out = vec![Line::from(vec![
                    Span::styled("Assistant", theme::assistant()),
                    Span::styled(what, theme::dim()),
                ])];
                for call in calls {
                    let pieces = vec![
                        ("  ".to_string(), theme::plain()),
                        (call.name.clone(), theme::tool_name()),
                        (" ".to_string(), theme::plain()),
                        (format_args_inline(&call.args), theme::plain()),
                        (format!("  {}", call.id), theme::dim()),
                    ];
                    out.extend(wrap_line(&pieces, width, 4));
                }
                out
            }
            HistoryCell::ToolResult { result } => tool_result_lines(result, width, expanded),
            HistoryCell::Plan { plan } => {
                let n = plan.plan.len();
                let mut out = vec![Line::from(vec![
                    Span::styled("Plan", theme::assistant()),
                    Span::styled(format!(" · {n} step{}", if n == 1 { "" } else { "s" }), theme::dim()),
                ])];
                if !plan.reasoning.trim().is_empty() {
                    out.extend(wrap_text(&plan.reasoning, theme::dim(), width, 2));
                }
                for (i, step) in plan.plan.iter().enumerate() {
                    let mut pieces = vec![
                        (format!("  {}. ", i + 1), theme::plain()),
                        (sanitize(&step.description), theme::plain()),
                    ];
                    if let Some(call) = &step.tool_call {
                        pieces.push(("  ".to_string(), theme::plain()));
                        pieces.push((call.name.clone(), theme::tool_name()));
                    }
                    out.extend(wrap_line(&pieces, width, 5));
                }
                out
            }
            HistoryCell::Memory { notes } => {
                let n = notes.len();
                let mut out = vec![Line::from(vec![
                    Span::styled("Memory", theme::memory().add_modifier(ratatui::style::Modifier::BOLD)),
                    Span::styled(format!(" · {n} note{} injected", if n == 1 { "" } else { "s" }), theme::dim()),
                ])];
                for note in notes {
                    let pieces = vec![("  • ".to_string(), theme::memory()), (sanitize(note), theme::plain())];
                    out.extend(wrap_line(&pieces, width, 4));
                }
                out
            }
            HistoryCell::Notice { text } => wrap_line(&[(format!("· {text}"), theme::dim())], width, 2),
            HistoryCell::Warning { text } => wrap_line(&[(format!("⚠ {text}"), theme::warn())], width, 2),
            HistoryCell::Error { text } => {
                let mut out = vec![Line::from(Span::styled("Error", theme::failed()))];
                out.extend(wrap_text(text, theme::plain(), width, 2));
                out
            }
        }
    }
}

fn tool_result_lines(result: &ToolMessage, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let (mark, style) = match result.status {
        ToolStatus::Success => ("✓", theme::ok()),
        ToolStatus::Error => ("✗", theme::failed()),
    };
    let mut out = vec![Line::from(vec![
        Span::styled("Tool ", theme::bold()),
        Span::styled(format!("{mark} "), style),
        Span::styled(result.name.clone(), theme::tool_name()),
        Span::styled(format!("  {}", result.tool_call_id), theme::dim()),
    ])];
    let body = result_lines(result);
    let fold = !expanded && body.len() > FOLDED_LINES + 1;
    let shown = if fold { FOLDED_LINES } else { body.len() };
    let text_style = if result.status == ToolStatus::Error { theme::failed() } else { theme::plain() };
    for line in body.iter().take(shown) {
        out.extend(wrap_text(line, text_style, width, 2));
    }
    if fold {
        let hidden = body.len() - FOLDED_LINES;
        out.push(Line::from(Span::styled(
            format!("  … {hidden} more lines · Tab to Messages, e expands"),
            theme::dim(),
        )));
    }
    out
}

/// The readable text of a tool result, one entry a logical line: the output's `content`
/// when there is one, the error for failures, else the output JSON pretty-printed.
pub fn result_lines(result: &ToolMessage) -> Vec<String> {
    let text = result_text(result);
    sanitize(&text).trim_end().split('\n').map(str::to_string).collect()
}

pub fn result_text(result: &ToolMessage) -> String {
    match result.status {
        ToolStatus::Error => result.error_text().unwrap_or_else(|| result.content.clone()),
        ToolStatus::Success => result.output_text().unwrap_or_else(|| {
            match result.body().and_then(|b| b.get("output").cloned()) {
                Some(Value::String(s)) => s,
                Some(other) => serde_json::to_string_pretty(&other).unwrap_or_default(),
                None => result.content.clone(),
            }
        }),
    }
}

/// `path="docs/a.txt" max_chars=2000`: arguments as a person reads them.
pub fn format_args_inline(args: &crate::protocol::Args) -> String {
    args.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s:?}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
