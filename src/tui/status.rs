//! The status bar: the settings the keys change, what the run is doing, and either a
//! one-off message (a flash, until the next key) or the hints that fit.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::{Focus, RunState};
use super::clock::Clock;
use super::keys;
use super::loading::Loading;
use super::text::{str_width, truncate};
use super::theme;
use crate::brain::Decoding;
use crate::protocol::{AgentMode, Settings, ToolCalling};

#[derive(Debug, Default)]
pub struct StatusBar {
    flash: Option<String>,
}

/// What the bar reports; the app's state, borrowed for one frame.
pub struct StatusFacts<'a> {
    pub settings: &'a Settings,
    pub run: &'a RunState,
    /// The profile being loaded, since when and how far.
    pub loading: Option<&'a Loading>,
    pub tools_running: bool,
    pub focus: Focus,
    pub clock: &'a Clock,
}

impl StatusBar {
    /// Shows `text` instead of the hints until the next key.
    pub fn flash(&mut self, text: impl Into<String>) {
        self.flash = Some(text.into());
    }

    pub fn clear_flash(&mut self) {
        self.flash = None;
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, facts: StatusFacts) {
        let StatusFacts { settings, run, clock, .. } = facts;
        let spinner = clock.spinner();
        let states = if let Some(loading) = facts.loading {
            loading.status_forms(spinner, clock.now)
        } else if run.paused.is_some() {
            vec!["paused".to_string()]
        } else if run.cancelling {
            vec!["cancelling".to_string()]
        } else if run.thinking {
            vec![format!("{spinner} thinking")]
        } else if facts.tools_running {
            vec![format!("{spinner} tools")]
        } else if run.active {
            vec![format!("{spinner} working")]
        } else {
            vec!["ready".to_string()]
        };
        let step = if settings.step_mode { "step on" } else { "step off" };
        let bold_if = |on: bool| if on { theme::bold() } else { theme::plain() };
        // In the order they show: (name, short name, style).
        let fields = [
            (settings.mode.as_str(), short_mode(settings.mode), theme::plain()),
            (settings.tool_calling.as_str(), short_tool_calling(settings.tool_calling), theme::plain()),
            (settings.decoding.as_str(), short_decoding(settings.decoding), bold_if(settings.decoding == Decoding::Constrained)),
            (step, step, bold_if(settings.step_mode)),
        ];
        // Full names while they leave room for the help hint; shorter ones on a narrow bar.
        let hint_room =
            keys::HINTS.iter().find(|(_, _, p)| *p == 0).map_or(0, |(k, l, _)| str_width(k) + str_width(l) + 3);
        let budget = (area.width as usize).saturating_sub(hint_room + 1);
        // What gives way when the bar is narrow: the state's detail (its forms go from the
        // most detailed), then the settings from the right, so the profile and what the app
        // is doing always show.
        let width = area.width as usize;
        let tries = (0..=fields.len()).rev().flat_map(|kept| states.iter().map(move |state| (kept, state)));
        let mut left = Vec::new();
        for (kept, state) in tries {
            left = left_spans(&settings.profile, &fields[..kept], state, budget);
            if left.iter().map(|s| str_width(&s.content)).sum::<usize>() <= width {
                break;
            }
        }
        let left_width: usize = left.iter().map(|s| str_width(&s.content)).sum();
        let room = (area.width as usize).saturating_sub(left_width + 1);
        let right = match &self.flash {
            Some(flash) => vec![Span::styled(truncate(flash, room), theme::bold())],
            None => hints(keys::hints(facts.focus, run.paused.is_some(), run.active), room),
        };
        let right_width: usize = right.iter().map(|s| str_width(&s.content)).sum();
        let gap = (area.width as usize).saturating_sub(left_width + right_width);
        let mut spans = left;
        spans.push(Span::raw(" ".repeat(gap)));
        spans.extend(right);
        frame.render_widget(Paragraph::new(Line::from(spans)).style(theme::status_bar()), area);
    }
}

/// The profile, the settings in `fields` (full names, shortened from the left while the
/// whole is wider than `budget`) and the state, separated by bars.
fn left_spans(profile: &str, fields: &[(&str, &str, Style)], state: &str, budget: usize) -> Vec<Span<'static>> {
    let mut labels: Vec<&str> = fields.iter().map(|(name, _, _)| *name).collect();
    let width = |labels: &[&str]| str_width(profile) + 2 + labels.iter().map(|l| str_width(l) + 3).sum::<usize>() + str_width(state) + 3;
    for (i, (_, short, _)) in fields.iter().enumerate() {
        if width(&labels) <= budget {
            break;
        }
        labels[i] = short;
    }
    let mut spans = vec![Span::styled(format!(" {profile} "), theme::bold())];
    for (label, (_, _, style)) in labels.iter().zip(fields) {
        spans.push(Span::raw("│"));
        spans.push(Span::styled(format!(" {label} "), *style));
    }
    spans.push(Span::raw("│"));
    spans.push(Span::styled(format!(" {state} "), theme::bold()));
    spans
}

/// The most important hints that fit in `room` columns, shown in their usual order.
fn hints(hints: &[(&str, &str, u8)], room: usize) -> Vec<Span<'static>> {
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
    let mut out = Vec::new();
    for (key, label, _) in hints.iter().filter(|(k, _, _)| keep.contains(k)) {
        out.push(Span::styled(format!(" {key}"), theme::key()));
        out.push(Span::raw(format!(" {label} ")));
    }
    out
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
