//! The status bar: the settings the keys change, what the run is doing, and either a
//! one-off message (a flash, until the next key) or the hints that fit.

use std::time::Instant;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::{Focus, RunState};
use super::clock::Clock;
use super::keys;
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
    /// The profile being loaded and since when.
    pub loading: Option<(&'a str, Instant)>,
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
        let state = if let Some((name, since)) = facts.loading {
            let secs = clock.now.saturating_duration_since(since).as_secs();
            format!("{spinner} loading {name} {secs}s")
        } else if run.paused.is_some() {
            "paused".to_string()
        } else if run.cancelling {
            "cancelling".to_string()
        } else if run.thinking {
            format!("{spinner} thinking")
        } else if facts.tools_running {
            format!("{spinner} tools")
        } else if run.active {
            format!("{spinner} working")
        } else {
            "ready".to_string()
        };
        let step = if settings.step_mode { "step on" } else { "step off" };
        // Full names while they leave room for the help hint; shorter ones on a narrow bar.
        let hint_room =
            keys::HINTS.iter().find(|(_, _, p)| *p == 0).map_or(0, |(k, l, _)| str_width(k) + str_width(l) + 3);
        let budget = (area.width as usize).saturating_sub(hint_room + 1);
        let mut labels = [settings.mode.as_str(), settings.tool_calling.as_str(), settings.decoding.as_str()];
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
