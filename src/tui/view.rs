//! The layout: which pane goes where (wide: messages left, plan / tools / raw stacked
//! right; compact, below 100x24: messages on top, plan beside a raw/tools slot below),
//! the input and the status bar under them, overlays on top. Each pane draws itself.

use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::{ActivityTab, App, Focus, Overlay, Pane};
use super::help;
use super::input::InputLook;
use super::status::StatusFacts;
use super::theme;

/// Below this the screen shows only a note asking for more room.
const MIN_WIDTH: u16 = 30;
const MIN_HEIGHT: u16 = 10;

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    // A pane this frame leaves out can be neither scrolled nor clicked.
    for pane in Pane::ALL {
        app.pane(pane).viewport().hide();
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
    let input_height = app.input.height(area.width, app.queued.is_some());
    let [main, input, status] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(input_height), Constraint::Length(1)])
            .areas(area);
    if area.width >= 100 && area.height >= 24 {
        wide_layout(app, frame, main);
    } else {
        compact_layout(app, frame, main);
    }
    let spinner = app.clock.spinner();
    let focused = app.focus == Focus::Input && app.overlay.is_none();
    app.input.render(frame, input, InputLook { focused, run: &app.run, queued: app.queued(), spinner });
    let facts = StatusFacts {
        settings: &app.settings,
        run: &app.run,
        loading: app.profiles.loading(),
        tools_running: app.tools.any_running(),
        focus: app.focus,
        clock: &app.clock,
    };
    app.status.render(frame, status, facts);
    match &app.overlay {
        // Above the status bar, which keeps showing the settings the keys change.
        Some(Overlay::Help) => help::render(frame, Rect { height: area.height.saturating_sub(1), ..area }),
        Some(Overlay::Picker { selected, requested }) => {
            app.profiles.render(frame, area, *selected, requested.as_deref(), &app.settings.profile, &app.clock)
        }
        None => {}
    }
}

fn wide_layout(app: &App, frame: &mut Frame, main: Rect) {
    let [left, right] = Layout::horizontal([Constraint::Percentage(56), Constraint::Percentage(44)]).areas(main);
    draw_messages(app, frame, left);
    let inner_width = right.width.saturating_sub(2) as usize;
    let spinner = app.clock.spinner();
    let most = (main.height * 2 / 5).max(5);
    let tools_height = (app.tools.table_height(inner_width, app.clock.now, spinner) as u16 + 3).clamp(5, most);
    let mut constraints = Vec::new();
    if app.plan_visible() {
        let wanted = app.plan.wanted_lines(inner_width, app.run.active, spinner) as u16 + 2;
        constraints.push(Constraint::Length(wanted.clamp(5, most)));
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
    let tab = match app.focus {
        Focus::Raw => ActivityTab::Raw,
        Focus::Tools => ActivityTab::Tools,
        _ => app.activity,
    };
    match tab {
        ActivityTab::Raw => draw_raw(app, frame, slot, Some(tabs(tab, app.focus == Focus::Raw, app.tools.rows.len()))),
        ActivityTab::Tools => {
            draw_tools(app, frame, slot, Some(tabs(tab, app.focus == Focus::Tools, app.tools.rows.len())))
        }
    }
}

/// In the compact layout raw output and tool calls share a slot: both names in the
/// title, the shown one emphasised.
fn tabs(shown: ActivityTab, focused: bool, tools: usize) -> Vec<Span<'static>> {
    let raw = Span::styled(" Raw output ", if shown == ActivityTab::Raw { theme::title(focused) } else { theme::dim() });
    let tools_label = if tools > 0 { format!(" Tool calls ({tools}) ") } else { " Tool calls ".to_string() };
    let tools = Span::styled(tools_label, if shown == ActivityTab::Tools { theme::title(focused) } else { theme::dim() });
    vec![raw, Span::styled("│", theme::dim()), tools]
}

fn draw_messages(app: &App, frame: &mut Frame, area: Rect) {
    app.messages.render(frame, area, app.focus == Focus::Messages);
}

fn draw_raw(app: &App, frame: &mut Frame, area: Rect, tabs: Option<Vec<Span<'static>>>) {
    let focused = app.focus == Focus::Raw;
    app.raw.render(frame, area, focused, app.run.thinking, app.clock.spinner(), tabs);
}

fn draw_tools(app: &App, frame: &mut Frame, area: Rect, tabs: Option<Vec<Span<'static>>>) {
    let focused = app.focus == Focus::Tools;
    app.tools.render(frame, area, focused, app.clock.now, app.clock.spinner(), tabs);
}

fn draw_plan(app: &App, frame: &mut Frame, area: Rect) {
    app.plan.render(frame, area, app.focus == Focus::Plan, app.run.active, app.clock.spinner());
}

/// A `width` x `height` rect in the middle of `area` (the overlays').
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height }
}
