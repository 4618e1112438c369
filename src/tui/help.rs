//! The help overlay: the key map of [`super::keys::HELP`], so what is shown is what is bound.

use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};
use ratatui::Frame;

use super::keys;
use super::text::{str_width, truncate};
use super::theme;
use super::view::centered;

/// Draws the key table in the middle of `area`.
pub fn render(frame: &mut Frame, area: Rect) {
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
