//! The model profiles as the app knows them (their model files, which are loaded, which
//! is loading) and the picker overlay that switches between them.

use std::collections::BTreeMap;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};
use ratatui::Frame;

use super::clock::Clock;
use super::loading::Loading;
use super::profiles::{ModelFile, ProfileEntry};
use super::text::{str_width, truncate};
use super::theme;
use super::view::centered;
use crate::protocol::LoadProgress;

const FOOTER: &str = " ↑↓ choose · Enter load · Esc close ";

#[derive(Debug, Default)]
pub struct Profiles {
    names: Vec<String>,
    /// Each profile's model file (absent: not known).
    files: BTreeMap<String, ModelFile>,
    /// Profiles the engine has loaded, with their load time in ms.
    loaded: BTreeMap<String, f64>,
    loading: Option<Loading>,
}

/// What a key in the open picker asks of the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickerKey {
    Stay,
    Close,
    /// Ask the engine for this profile.
    Switch(String),
}

impl Profiles {
    pub fn new(names: Vec<String>) -> Self {
        Self { names, ..Self::default() }
    }

    pub fn set_files(&mut self, entries: Vec<ProfileEntry>) {
        self.files = entries.into_iter().map(|e| (e.name, e.file)).collect();
    }

    /// The profile being loaded, since when and how far.
    pub fn loading(&self) -> Option<&Loading> {
        self.loading.as_ref()
    }

    pub fn start_loading(&mut self, name: String, now: Instant) {
        self.loading = Some(Loading::new(name, now));
    }

    /// A progress report of the load of `name` (ignored when another profile loads now:
    /// a report can come after the switch away from it).
    pub fn progress(&mut self, name: &str, progress: LoadProgress) {
        if let Some(loading) = self.loading.as_mut().filter(|l| l.name == name) {
            loading.progress = Some(progress);
        }
    }

    pub fn ready(&mut self, name: String, load_ms: f64) {
        self.loading = None;
        self.loaded.insert(name, load_ms);
    }

    /// Stops showing a load (it failed); the profile that was loading.
    pub fn stop_loading(&mut self) -> Option<String> {
        self.loading.take().map(|l| l.name)
    }

    pub fn is_loaded(&self, name: &str) -> bool {
        self.loaded.contains_key(name)
    }

    /// The picker's row for `name` (the first when it is not listed).
    pub fn row_of(&self, name: &str) -> usize {
        self.names.iter().position(|p| p == name).unwrap_or(0)
    }

    /// A key while the picker is open on row `selected`; `current` is the profile in use.
    pub fn on_key(&self, key: KeyEvent, selected: &mut usize, current: &str) -> PickerKey {
        let last = self.names.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::F(4) => return PickerKey::Close,
            KeyCode::Char('o') if key.modifiers.contains(KeyModifiers::CONTROL) => return PickerKey::Close,
            KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *selected = (*selected + 1).min(last),
            KeyCode::Home => *selected = 0,
            KeyCode::End => *selected = last,
            KeyCode::Enter => {
                let Some(name) = self.names.get(*selected) else {
                    return PickerKey::Stay;
                };
                if name == current && self.loading.is_none() {
                    return PickerKey::Close;
                }
                return PickerKey::Switch(name.clone());
            }
            _ => {}
        }
        PickerKey::Stay
    }

    /// The picker over `area` (less the status bar): each profile's state, and below the
    /// list what is going on or how to get a missing model.
    pub fn render(&self, frame: &mut Frame, area: Rect, selected: usize, requested: Option<&str>, current: &str, clock: &Clock) {
        let name_width = self.names.iter().map(|p| str_width(p)).max().unwrap_or(8);
        let fix = self.names.get(selected).and_then(|name| match self.files.get(name) {
            Some(ModelFile::Missing { fix }) => Some(fix.clone()),
            _ => None,
        });
        // Wide enough for the footer and the fix command, so neither is clipped.
        let wanted = (name_width + 34).max(str_width(FOOTER) + 4).max(fix.as_ref().map_or(0, |f| str_width(f) + 12));
        let width = wanted.min(area.width.saturating_sub(2) as usize) as u16;
        let height = (self.names.len() as u16 + 6).min(area.height.saturating_sub(1));
        let rect = centered(Rect { height: area.height.saturating_sub(1), ..area }, width, height);
        frame.render_widget(Clear, rect);
        let footer = Line::from(Span::styled(truncate(FOOTER, width.saturating_sub(2) as usize), theme::dim()));
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme::border(true))
            .title(Line::from(Span::styled(" Model profile ", theme::title(true))))
            .title_bottom(footer.alignment(Alignment::Right));
        let inner = block.inner(rect);
        frame.render_widget(block, rect);
        let inner_width = inner.width as usize;
        let mut lines = Vec::new();
        for (i, name) in self.names.iter().enumerate() {
            let (tag, tag_style) = self.tag(name, current, clock);
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
        let status = match (&self.loading, requested, &fix) {
            (Some(loading), _, _) => {
                // The most detailed line that fits (the box is sized for the list, whose
                // row already marks which profile loads).
                let (spinner, name, secs) = (clock.spinner(), &loading.name, loading.secs(clock.now));
                let mut texts: Vec<String> = loading
                    .details()
                    .iter()
                    .flat_map(|d| [format!(" {spinner} loading {name}… {d} {secs}s"), format!(" {spinner} {d} {secs}s")])
                    .collect();
                texts.push(format!(" {spinner} loading {name}… {secs}s"));
                let text = texts.iter().find(|t| str_width(t) <= inner_width).or(texts.last()).map_or(String::new(), |t| truncate(t, inner_width));
                Line::from(Span::styled(text, theme::running()))
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

    /// A profile's state in the list: loading, current, loaded, or its model file's.
    fn tag(&self, name: &str, current: &str, clock: &Clock) -> (String, ratatui::style::Style) {
        if self.loading.as_ref().is_some_and(|l| l.name == name) {
            return (format!("{} loading", clock.spinner()), theme::running());
        }
        if name == current {
            return ("current".to_string(), theme::ok());
        }
        if self.loaded.contains_key(name) {
            return ("loaded".to_string(), theme::ok());
        }
        match self.files.get(name) {
            Some(ModelFile::Missing { .. }) => ("✗ file missing".to_string(), theme::failed()),
            Some(ModelFile::Present) => ("file present".to_string(), theme::dim()),
            Some(ModelFile::NotNeeded) => ("no file needed".to_string(), theme::dim()),
            None => (String::new(), theme::dim()),
        }
    }
}
