//! Drawing the app: the layout (wide: messages left, plan / tools / raw stacked right;
//! compact, below 100x24: messages on top, plan beside a raw/tools slot below), each pane,
//! the input, the status bar and the overlays.

use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState};
use ratatui::Frame;

use super::app::{ActivityTab, App, Focus, Overlay, Pane, PaneGeom, Scroll};
use super::cells::{format_args_inline, result_text};
use super::keys;
use super::profiles::ModelFile;
use super::text::{one_line, str_width, truncate, wrap_line, wrap_text};
use super::theme;
use super::tools::{timeline_bar, CallState};
use crate::brain::Decoding;
use crate::protocol::{AgentMode, StepState, ToolCalling};

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Below this the screen shows only a note asking for more room.
const MIN_WIDTH: u16 = 30;
const MIN_HEIGHT: u16 = 10;

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    for pane in [Pane::Messages, Pane::Raw, Pane::Tools, Pane::Plan] {
        app.set_geom(pane, PaneGeom::default());
    }
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let note = Paragraph::new(vec![
            Line::from(Span::styled("terminal too small", theme::bold())),
            Line::from(format!("{}x{}, need {MIN_WIDTH}x{MIN_HEIGHT}", area.width, area.height)),
        ])
        .alignment(Alignment::Center);
        let middle = Rect { y: area.y + area.height.saturating_sub(2) / 2, height: area.height.min(2), ..area };
        frame.render_widget(note, middle);
        return;
    }
    let input_height = input_height(app, area);
    let [main, input, status] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(input_height), Constraint::Length(1)])
            .areas(area);
    if area.width >= 100 && area.height >= 24 {
        wide_layout(app, frame, main);
    } else {
        compact_layout(app, frame, main);
    }
    draw_input(app, frame, input);
    draw_status(app, frame, status);
    match app.overlay() {
        // Above the status bar, which keeps showing the settings the keys change.
        Some(Overlay::Help) => draw_help(frame, Rect { height: area.height.saturating_sub(1), ..area }),
        Some(Overlay::Picker { selected, requested }) => draw_picker(app, frame, area, *selected, requested.as_deref()),
        None => {}
    }
}

fn wide_layout(app: &App, frame: &mut Frame, main: Rect) {
    let [left, right] = Layout::horizontal([Constraint::Percentage(56), Constraint::Percentage(44)]).areas(main);
    draw_messages(app, frame, left);
    let inner_width = right.width.saturating_sub(2) as usize;
    let tools_height = (tool_table(app, inner_width).1.len() as u16 + 3).clamp(5, (main.height * 2 / 5).max(5));
    let mut constraints = Vec::new();
    if app.plan_visible() {
        let wanted = plan_lines(app, inner_width, usize::MAX).0.len() as u16 + 2;
        constraints.push(Constraint::Length(wanted.clamp(5, (main.height * 2 / 5).max(5))));
    }
    constraints.push(Constraint::Length(tools_height));
    constraints.push(Constraint::Min(3));
    let areas = Layout::vertical(constraints).split(right);
    let mut slots = areas.iter().copied();
    if app.plan_visible() {
        if let Some(area) = slots.next() {
            draw_plan(app, frame, area);
        }
    }
    if let Some(area) = slots.next() {
        draw_tools(app, frame, area, None);
    }
    if let Some(area) = slots.next() {
        draw_raw(app, frame, area, None);
    }
}

fn compact_layout(app: &App, frame: &mut Frame, main: Rect) {
    if main.height < 12 {
        draw_messages(app, frame, main);
        return;
    }
    let bottom_height = (main.height * 2 / 5).clamp(7, 14);
    let [top, bottom] = Layout::vertical([Constraint::Min(3), Constraint::Length(bottom_height)]).areas(main);
    draw_messages(app, frame, top);
    let slot = if app.plan_visible() {
        let [plan, slot] = Layout::horizontal([Constraint::Percentage(42), Constraint::Min(10)]).areas(bottom);
        draw_plan(app, frame, plan);
        slot
    } else {
        bottom
    };
    let tab = match app.focus() {
        Focus::Raw => ActivityTab::Raw,
        Focus::Tools => ActivityTab::Tools,
        _ => app.activity,
    };
    match tab {
        ActivityTab::Raw => draw_raw(app, frame, slot, Some(tab)),
        ActivityTab::Tools => draw_tools(app, frame, slot, Some(tab)),
    }
}

/// In the compact layout raw output and tool calls share a slot: both names in the
/// title, the shown one emphasised.
fn tab_title(shown: ActivityTab, focused: bool, tools: usize) -> Vec<Span<'static>> {
    let raw = Span::styled(" Raw output ", if shown == ActivityTab::Raw { theme::title(focused) } else { theme::dim() });
    let tools_label = if tools > 0 { format!(" Tool calls ({tools}) ") } else { " Tool calls ".to_string() };
    let tools = Span::styled(tools_label, if shown == ActivityTab::Tools { theme::title(focused) } else { theme::dim() });
    vec![raw, Span::styled("│", theme::dim()), tools]
}

struct PaneText<'a> {
    title: Vec<Span<'static>>,
    bottom: Option<Line<'static>>,
    /// A fixed first line (a table header) that does not scroll.
    header: Option<Line<'static>>,
    /// All lines; only the visible ones are copied into the frame.
    lines: &'a [Line<'static>],
    /// Plan: keep this line in view while following.
    follow_to: Option<usize>,
    empty: &'static str,
}

fn draw_pane(app: &App, frame: &mut Frame, area: Rect, pane: Pane, text: PaneText) {
    let focused = app.focus() == focus_of(pane);
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border(focused))
        .title(Line::from(text.title));
    if let Some(bottom) = text.bottom {
        block = block.title_bottom(bottom.alignment(Alignment::Right));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut body = inner;
    if let Some(header) = text.header {
        if body.height > 1 && !text.lines.is_empty() {
            frame.render_widget(Paragraph::new(header), Rect { height: 1, ..body });
            body = Rect { y: body.y + 1, height: body.height - 1, ..body };
        }
    }
    let height = body.height as usize;
    if text.lines.is_empty() {
        let hint = wrap_text(text.empty, theme::dim(), body.width as usize, 0);
        frame.render_widget(Paragraph::new(hint), body);
        app.set_geom(pane, PaneGeom { area, total: 0, height, top: 0 });
        return;
    }
    let total = text.lines.len();
    let top = app.top_line(pane, total, height, text.follow_to);
    let visible: Vec<Line> = text.lines.iter().skip(top).take(height).cloned().collect();
    frame.render_widget(Paragraph::new(visible), body);
    app.set_geom(pane, PaneGeom { area, total, height, top });
    if total > height && area.height > 2 {
        let mut state = ScrollbarState::new(total.saturating_sub(height)).position(top).viewport_content_length(height);
        let bar = Scrollbar::new(ScrollbarOrientation::VerticalRight)
            .begin_symbol(None)
            .end_symbol(None)
            .track_symbol(Some("│"))
            .track_style(theme::border(focused))
            .thumb_symbol("┃")
            .thumb_style(theme::border(true));
        let track = Rect { y: body.y, height: body.height, ..area };
        frame.render_stateful_widget(bar, track, &mut state);
        if matches!(app.scroll(pane), Scroll::At(_)) && top < total.saturating_sub(height) && pane != Pane::Plan {
            let below = total - height - top;
            let note = Line::from(Span::styled(format!(" ↓ {below} more (End) "), theme::running()));
            let y = area.y + area.height - 1;
            let width = (str_width(&note.to_string()) as u16).min(area.width.saturating_sub(2));
            frame.render_widget(Paragraph::new(note), Rect { x: area.x + 1, y, width, height: 1 });
        }
    }
}

fn focus_of(pane: Pane) -> Focus {
    match pane {
        Pane::Messages => Focus::Messages,
        Pane::Raw => Focus::Raw,
        Pane::Tools => Focus::Tools,
        Pane::Plan => Focus::Plan,
    }
}

fn draw_messages(app: &App, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(2) as usize;
    refresh_message_lines(app, width);
    let cache = app.messages_cache.borrow();
    let lines = cache.as_ref().map_or(&[][..], |(_, _, _, lines)| &lines[..]);
    let focused = app.focus() == Focus::Messages;
    let foldable = app.cells.iter().any(|c| c.foldable());
    let mut title = vec![Span::styled(" Messages ", theme::title(focused))];
    if foldable && focused {
        let verb = if app.results_expanded() { "e folds results " } else { "e expands results " };
        title.push(Span::styled(verb, theme::dim()));
    }
    draw_pane(
        app,
        frame,
        area,
        Pane::Messages,
        PaneText {
            title,
            bottom: None,
            header: None,
            lines,
            follow_to: None,
            empty: "Ask the agent something below.\n\nF2 tool passing · F3 mode · F4 model · F5 step mode · F1 all keys",
        },
    );
}

/// Re-lays out the transcript only when the cells, the width or folding changed: while
/// tokens stream, the messages are not wrapped again on every frame.
fn refresh_message_lines(app: &App, width: usize) {
    let expanded = app.results_expanded();
    if let Some((w, e, v, _)) = &*app.messages_cache.borrow() {
        if *w == width && *e == expanded && *v == app.cells_version {
            return;
        }
    }
    let mut lines = Vec::new();
    for (i, cell) in app.cells.iter().enumerate() {
        if i > 0 {
            lines.push(Line::default());
        }
        lines.extend(cell.lines(width, expanded));
    }
    app.messages_cache.replace(Some((width, expanded, app.cells_version, lines)));
}

fn draw_raw(app: &App, frame: &mut Frame, area: Rect, tab: Option<ActivityTab>) {
    let width = area.width.saturating_sub(2) as usize;
    let focused = app.focus() == Focus::Raw;
    let current = app.raw.current();
    let title = match tab {
        Some(tab) => tab_title(tab, focused, app.tools.rows.len()),
        None => {
            let mut title = vec![Span::styled(" Raw output ", theme::title(focused))];
            if let Some(turn) = current {
                title.push(Span::styled(format!("turn {} ", turn.turn), theme::dim()));
            }
            title
        }
    };
    let bottom = current.map(|turn| {
        let text = match (&turn.stats, app.run.thinking) {
            (_, true) => match turn.prefill {
                Some(prefill) if turn.streamed_tokens == 0 => format!(" {} {} ", spinner(app), prefill.describe()),
                _ => format!(" {} streaming · {} tok ", spinner(app), turn.streamed_tokens),
            },
            (Some(stats), false) => format!(
                " prompt {} · reused {} · gen {}{} ",
                stats.prompt_tokens,
                stats.reused_tokens,
                stats.generated_tokens,
                super::raw::tok_s(stats).map(|t| format!(" · {t} tok/s")).unwrap_or_default()
            ),
            (None, false) => format!(" {} tok ", turn.streamed_tokens),
        };
        Line::from(Span::styled(truncate(&text, width), if app.run.thinking { theme::running() } else { theme::dim() }))
    });
    draw_pane(
        app,
        frame,
        area,
        Pane::Raw,
        PaneText {
            title,
            bottom,
            header: None,
            lines: &app.raw.lines(width, app.run.thinking),
            follow_to: None,
            empty: "The model's output streams here token by token, with token counts and speed.",
        },
    );
}

fn draw_tools(app: &App, frame: &mut Frame, area: Rect, tab: Option<ActivityTab>) {
    let width = area.width.saturating_sub(2) as usize;
    let focused = app.focus() == Focus::Tools;
    let tools = &app.tools;
    let title = match tab {
        Some(tab) => {
            let mut title = tab_title(tab, focused, tools.rows.len());
            if let Some(summary) = batch_summary(app).filter(|_| tab == ActivityTab::Tools) {
                title.push(Span::styled(format!(" {summary}"), theme::running()));
            }
            title
        }
        None => {
            let mut title = vec![Span::styled(" Tool calls ", theme::title(focused))];
            if let Some(turn) = tools.turn {
                title.push(Span::styled(format!("turn {turn} "), theme::dim()));
            }
            if let Some(summary) = batch_summary(app) {
                let style = if tools.any_running() { theme::running() } else { theme::dim() };
                title.push(Span::styled(format!("· {summary}"), style));
            }
            title
        }
    };
    let bottom = (!tools.rows.is_empty()).then(|| {
        let mut parts = Vec::new();
        for (state, label, style) in [
            (CallState::Next, "next", theme::running()),
            (CallState::Running, "running", theme::running()),
            (CallState::Done, "done", theme::ok()),
            (CallState::Failed, "failed", theme::failed()),
            (CallState::Stopped, "stopped", theme::warn()),
        ] {
            let n = tools.count(state);
            if n > 0 {
                parts.push(Span::styled(format!(" {n} {label} "), style));
            }
        }
        Line::from(parts)
    });
    let (header, lines) = tool_table(app, width);
    draw_pane(
        app,
        frame,
        area,
        Pane::Tools,
        PaneText {
            title,
            bottom,
            header: Some(header),
            lines: &lines,
            follow_to: None,
            empty: "This turn's tool calls appear here as they run in parallel.",
        },
    );
}

/// The tool table's header and rows at `width`. Wide enough, a call is one row with its
/// arguments in a column; narrower, the arguments go on a second, indented row. Each row
/// has a bar on the batch's shared timeline: calls that ran together overlap.
fn tool_table(app: &App, width: usize) -> (Line<'static>, Vec<Line<'static>>) {
    let tools = &app.tools;
    let longest = tools.rows.iter().map(|r| str_width(&r.call.name)).max().unwrap_or(4);
    let columns = ToolColumns::for_width(width, longest);
    let total_ms = tools.span_ms(app.now);
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
            CallState::Running => (format!("{} running", spinner(app)), theme::running()),
            CallState::Done => ("✓ done".to_string(), theme::ok()),
            CallState::Failed => ("✗ failed".to_string(), theme::failed()),
            CallState::Stopped => ("■ stopped".to_string(), theme::warn()),
        };
        let (start, end) = row.span_ms(tools.origin, app.now);
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

/// The tool pane's title words: how many run at once now, or ran at once.
fn batch_summary(app: &App) -> Option<String> {
    let tools = &app.tools;
    let running = tools.count(CallState::Running);
    let next = tools.count(CallState::Next);
    if running > 1 {
        return Some(format!("running {running} in parallel "));
    }
    if running == 1 {
        return Some("running 1 ".to_string());
    }
    if next > 0 {
        return Some(format!("{next} next (step mode) "));
    }
    let ran = tools.rows.len();
    if ran == 0 {
        return None;
    }
    let at_once = tools.most_at_once(app.now);
    let span = format_duration(tools.span_ms(app.now));
    Some(if at_once > 1 { format!("{ran} calls, {at_once} in parallel · {span} ") } else { format!("{ran} calls · {span} ") })
}

/// Column widths of the tool table for an inner width: state, tool, arguments, timeline
/// bar, time, result.
struct ToolColumns {
    widths: [usize; 6],
}

impl ToolColumns {
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

fn format_duration(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{:.1}s", ms / 1000.0)
    }
}

/// The plan's lines and the line where the current step starts.
fn plan_lines(app: &App, width: usize, height: usize) -> (Vec<Line<'static>>, Option<usize>) {
    let Some(plan) = &app.plan else {
        return (Vec::new(), None);
    };
    let current = plan.current(app.run.active);
    let mut steps = Vec::new();
    for (i, step) in plan.plan.plan.iter().enumerate() {
        let state = plan.states.get(i).copied().unwrap_or(StepState::Pending);
        let (mark, style) = match state {
            StepState::Pending => ("○".to_string(), theme::dim()),
            StepState::Running => (spinner(app).to_string(), theme::running()),
            StepState::Done => ("✓".to_string(), theme::ok()),
            StepState::Failed => ("✗".to_string(), theme::failed()),
        };
        let mut pieces = vec![
            (format!("{mark} "), style),
            (format!("{}. ", i + 1), theme::bold()),
            (one_line(&step.description), theme::plain()),
        ];
        if let Some(call) = &step.tool_call {
            // The tool name only when it fits on the step's line: the steps matter more.
            let used: usize = pieces.iter().map(|(t, _)| str_width(t)).sum();
            if used + 3 + str_width(&call.name) <= width {
                pieces.push((" · ".to_string(), theme::dim()));
                pieces.push((call.name.clone(), theme::tool_name()));
            }
        }
        let mut rows = wrap_line(&pieces, width, 5);
        if current == Some(i) {
            for row in rows.iter_mut() {
                let pad = width.saturating_sub(row.width());
                row.spans.push(Span::raw(" ".repeat(pad)));
                *row = std::mem::take(row).patch_style(theme::selected());
            }
        }
        steps.push(rows);
    }
    let step_count: usize = steps.iter().map(Vec::len).sum();
    let mut out = Vec::new();
    if !plan.plan.reasoning.trim().is_empty() {
        let reasoning = wrap_text(&plan.plan.reasoning, theme::dim(), width, 0);
        // The reasoning goes first when it fits with all steps; steps matter more.
        if reasoning.len() + 1 + step_count <= height {
            out.extend(reasoning);
            out.push(Line::default());
        }
    }
    let current_line = current.map(|c| out.len() + steps.iter().take(c).map(Vec::len).sum::<usize>());
    out.extend(steps.into_iter().flatten());
    (out, current_line)
}

fn draw_plan(app: &App, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(2) as usize;
    let height = area.height.saturating_sub(2) as usize;
    let focused = app.focus() == Focus::Plan;
    let mut title = vec![Span::styled(" Plan ", theme::title(focused))];
    if let Some(plan) = &app.plan {
        let n = plan.states.len();
        title.push(Span::styled(format!("{}/{n} done ", plan.count(StepState::Done)), theme::dim()));
        let failed = plan.count(StepState::Failed);
        if failed > 0 {
            title.push(Span::styled(format!("{failed} failed "), theme::failed()));
        }
    }
    let (lines, follow_to) = plan_lines(app, width, height);
    draw_pane(
        app,
        frame,
        area,
        Pane::Plan,
        PaneText {
            title,
            bottom: None,
            header: None,
            lines: &lines,
            follow_to,
            empty: "plan_execute: the plan appears here, then each step's state.",
        },
    );
}

fn input_height(app: &App, area: Rect) -> u16 {
    let width = area.width.saturating_sub(4) as usize;
    let rows = app.input().layout(width).rows.len() as u16;
    rows.clamp(1, 6) + 2 + u16::from(app.queued().is_some())
}

fn draw_input(app: &App, frame: &mut Frame, area: Rect) {
    app.input_area.set(area);
    let focused = app.focus() == Focus::Input && app.overlay().is_none();
    let run = app.run_state();
    let (title, title_style) = if let Some(what) = &run.paused {
        (format!(" PAUSED before {what} "), theme::running())
    } else if run.cancelling {
        (" cancelling… ".to_string(), theme::warn())
    } else if run.active {
        (format!(" {} working · Esc cancels ", spinner(app)), theme::running())
    } else {
        (" Ask ".to_string(), theme::title(focused))
    };
    let hint_text = if run.active { " Enter queues · Esc cancels " } else { " Enter send · Alt+Enter newline " };
    let hint = Line::from(Span::styled(hint_text, theme::dim())).alignment(Alignment::Right);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border(focused))
        .title(Line::from(Span::styled(truncate(&title, area.width.saturating_sub(4) as usize), title_style)))
        .title_bottom(hint);
    let mut inner = block.inner(area);
    frame.render_widget(block, area);
    if let Some(queued) = app.queued() {
        if inner.height > 1 {
            let text = truncate(&format!("⏳ queued: {}", one_line(queued)), inner.width as usize);
            frame.render_widget(Paragraph::new(Line::from(Span::styled(text, theme::running()))), Rect { height: 1, ..inner });
            inner = Rect { y: inner.y + 1, height: inner.height - 1, ..inner };
        }
    }
    let width = inner.width.saturating_sub(2) as usize;
    let layout = app.input().layout(width);
    let height = inner.height as usize;
    let top = layout.cursor.0.saturating_sub(height.saturating_sub(1));
    let lines: Vec<Line> = if app.input().is_empty() {
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
    if focused {
        let (row, col) = layout.cursor;
        let x = inner.x + 2 + col as u16;
        let y = inner.y + (row - top) as u16;
        if x < inner.x + inner.width && y < inner.y + inner.height {
            frame.set_cursor_position((x, y));
        }
    }
}

fn spinner(app: &App) -> &'static str {
    SPINNER.get((app.frame_count % SPINNER.len() as u64) as usize).copied().unwrap_or("·")
}

fn draw_status(app: &App, frame: &mut Frame, area: Rect) {
    let settings = app.settings();
    let run = app.run_state();
    let state = if let Some((name, since)) = &app.loading {
        let secs = app.now.saturating_duration_since(*since).as_secs();
        format!("{} loading {name} {secs}s", spinner(app))
    } else if run.paused.is_some() {
        "paused".to_string()
    } else if run.cancelling {
        "cancelling".to_string()
    } else if run.thinking {
        format!("{} thinking", spinner(app))
    } else if app.tools.any_running() {
        format!("{} tools", spinner(app))
    } else if run.active {
        format!("{} working", spinner(app))
    } else {
        "ready".to_string()
    };
    let step = if settings.step_mode { "step on" } else { "step off" };
    // Full names while they leave room for the help hint; shorter ones on a narrow bar.
    let hint_room = keys::HINTS.iter().find(|(_, _, p)| *p == 0).map_or(0, |(k, l, _)| str_width(k) + str_width(l) + 3);
    let budget = (area.width as usize).saturating_sub(hint_room + 1);
    let mut labels = [
        settings.mode.as_str(),
        settings.tool_calling.as_str(),
        settings.decoding.as_str(),
    ];
    let short = [short_mode(settings.mode), short_tool_calling(settings.tool_calling), short_decoding(settings.decoding)];
    let fixed = str_width(&settings.profile) + str_width(step) + str_width(&state) + 6 * 2 + 5;
    for (i, s) in short.iter().enumerate() {
        if fixed + labels.iter().map(|l| str_width(l)).sum::<usize>() <= budget {
            break;
        }
        if let Some(label) = labels.get_mut(i) {
            *label = s;
        }
    }
    let [mode, tool_calling, decoding] = labels;
    let left = vec![
        Span::styled(format!(" {} ", settings.profile), theme::bold()),
        Span::raw("│"),
        Span::raw(format!(" {mode} ")),
        Span::raw("│"),
        Span::raw(format!(" {tool_calling} ")),
        Span::raw("│"),
        Span::styled(
            format!(" {decoding} "),
            if settings.decoding == Decoding::Constrained { theme::bold() } else { theme::plain() },
        ),
        Span::raw("│"),
        Span::styled(format!(" {step} "), if settings.step_mode { theme::bold() } else { theme::plain() }),
        Span::raw("│"),
        Span::styled(format!(" {state} "), theme::bold()),
    ];
    let left_width: usize = left.iter().map(|s| str_width(&s.content)).sum();
    let room = (area.width as usize).saturating_sub(left_width + 1);
    let mut right = Vec::new();
    if let Some(flash) = &app.flash {
        right.push(Span::styled(truncate(flash, room), theme::bold()));
    } else {
        // Keep the most important hints that fit, shown in their usual order.
        let hints = keys::hints(app.focus(), run.paused.is_some(), run.active);
        let mut by_priority: Vec<&(&str, &str, u8)> = hints.iter().collect();
        by_priority.sort_by_key(|(_, _, priority)| *priority);
        let mut used = 0;
        let mut keep = Vec::new();
        for (key, label, _) in by_priority {
            let w = str_width(key) + str_width(label) + 3;
            if used + w > room {
                break;
            }
            keep.push(*key);
            used += w;
        }
        for (key, label, _) in hints.iter().filter(|(k, _, _)| keep.contains(k)) {
            right.push(Span::styled(format!(" {key}"), theme::key()));
            right.push(Span::raw(format!(" {label} ")));
        }
    }
    let right_width: usize = right.iter().map(|s| str_width(&s.content)).sum();
    let gap = (area.width as usize).saturating_sub(left_width + right_width);
    let mut spans = left;
    spans.push(Span::raw(" ".repeat(gap)));
    spans.extend(right);
    frame.render_widget(Paragraph::new(Line::from(spans)).style(theme::status_bar()), area);
}

fn short_mode(mode: AgentMode) -> &'static str {
    match mode {
        AgentMode::React => "react",
        AgentMode::PlanExecute => "plan",
    }
}

fn short_tool_calling(way: ToolCalling) -> &'static str {
    match way {
        ToolCalling::PromptJson => "json",
        ToolCalling::Builtin => "builtin",
    }
}

fn short_decoding(decoding: Decoding) -> &'static str {
    match decoding {
        Decoding::Free => "free",
        Decoding::Constrained => "constr",
    }
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height }
}

fn draw_help(frame: &mut Frame, area: Rect) {
    let key_width = keys::HELP.iter().map(|(k, _)| str_width(k)).max().unwrap_or(10);
    let width = (key_width + 46).min(area.width.saturating_sub(2) as usize) as u16;
    let height = (keys::HELP.len() as u16 + 4).min(area.height);
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border(true))
        .title(Line::from(Span::styled(" Keys ", theme::title(true))))
        .title_bottom(Line::from(Span::styled(" Esc closes ", theme::dim())).alignment(Alignment::Right));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let desc_width = (inner.width as usize).saturating_sub(key_width + 3);
    let mut lines = Vec::new();
    for (key, what) in keys::HELP {
        let pad = key_width.saturating_sub(str_width(key));
        lines.push(Line::from(vec![
            Span::raw(" "),
            Span::styled(key.to_string(), theme::key()),
            Span::raw(" ".repeat(pad + 2)),
            Span::raw(truncate(what, desc_width)),
        ]));
    }
    // The blank line goes first when the screen is short.
    if inner.height as usize > keys::HELP.len() + 1 {
        lines.push(Line::default());
    }
    lines.push(Line::from(Span::styled(
        truncate(" Step mode pauses before each decision and tool batch.", inner.width as usize),
        theme::dim(),
    )));
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_picker(app: &App, frame: &mut Frame, area: Rect, selected: usize, requested: Option<&str>) {
    const FOOTER: &str = " ↑↓ choose · Enter load · Esc close ";
    let name_width = app.profiles.iter().map(|p| str_width(p)).max().unwrap_or(8);
    let fix = app.profiles.get(selected).and_then(|name| match app.model_files.get(name) {
        Some(ModelFile::Missing { fix }) => Some(fix.clone()),
        _ => None,
    });
    // Wide enough for the footer and the fix command, so neither is clipped.
    let wanted = (name_width + 34).max(str_width(FOOTER) + 4).max(fix.as_ref().map_or(0, |f| str_width(f) + 12));
    let width = wanted.min(area.width.saturating_sub(2) as usize) as u16;
    let height = (app.profiles.len() as u16 + 6).min(area.height.saturating_sub(1));
    let rect = centered(Rect { height: area.height.saturating_sub(1), ..area }, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border(true))
        .title(Line::from(Span::styled(" Model profile ", theme::title(true))))
        .title_bottom(Line::from(Span::styled(truncate(FOOTER, width.saturating_sub(2) as usize), theme::dim())).alignment(Alignment::Right));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let inner_width = inner.width as usize;
    let mut lines = Vec::new();
    for (i, name) in app.profiles.iter().enumerate() {
        let file = app.model_files.get(name);
        let (tag, tag_style) = if app.loading.as_ref().is_some_and(|(n, _)| n == name) {
            (format!("{} loading", spinner(app)), theme::running())
        } else if *name == app.settings().profile {
            ("current".to_string(), theme::ok())
        } else if app.loaded.contains_key(name) {
            ("loaded".to_string(), theme::ok())
        } else {
            match file {
                Some(ModelFile::Missing { .. }) => ("✗ file missing".to_string(), theme::failed()),
                Some(ModelFile::Present) => ("file present".to_string(), theme::dim()),
                Some(ModelFile::NotNeeded) => ("no file needed".to_string(), theme::dim()),
                None => (String::new(), theme::dim()),
            }
        };
        let pad = (name_width + 3).saturating_sub(str_width(name));
        let mut line = Line::from(vec![
            Span::raw(if i == selected { " ▸ " } else { "   " }),
            Span::styled(name.clone(), theme::bold()),
            Span::raw(" ".repeat(pad)),
            Span::styled(tag, tag_style),
        ]);
        if i == selected {
            let fill = inner_width.saturating_sub(line.width());
            line.spans.push(Span::raw(" ".repeat(fill)));
            line = line.patch_style(theme::selected());
        }
        lines.push(line);
    }
    lines.push(Line::default());
    let status = match (&app.loading, requested, &fix) {
        (Some((name, since)), _, _) => {
            let secs = app.now.saturating_duration_since(*since).as_secs();
            Line::from(Span::styled(format!(" {} loading {name}… {secs}s", spinner(app)), theme::running()))
        }
        (None, Some(name), _) => Line::from(Span::styled(format!(" switching to {name}…"), theme::running())),
        (None, None, Some(fix)) => Line::from(vec![
            Span::styled(" get it: ", theme::dim()),
            Span::styled(truncate(fix, inner_width.saturating_sub(10)), theme::key()),
        ]),
        (None, None, None) => Line::from(Span::styled(" Loaded profiles switch back instantly.", theme::dim())),
    };
    lines.push(status);
    frame.render_widget(Paragraph::new(lines), inner);
}
