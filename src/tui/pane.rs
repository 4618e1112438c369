//! What every scrolling pane shares: its scroll position, where it was last drawn and how
//! much it held (kept so keys and the mouse can scroll and hit-test without redoing the
//! layout), the keys that scroll it, and its frame (border, title, scrollbar).

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Alignment, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState};
use ratatui::Frame;

use super::text::{str_width, wrap_text};
use super::theme;

/// A pane's scroll position: following the newest content, or held at a top line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scroll {
    #[default]
    Follow,
    At(usize),
}

/// The last frame's answer for one pane: where, how many lines, how many rows, from which.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Drawn {
    area: Rect,
    total: usize,
    height: usize,
    top: usize,
}

impl Drawn {
    fn max_top(&self) -> usize {
        self.total.saturating_sub(self.height)
    }
}

/// A pane's scroll state and its last drawn geometry. Drawing takes `&self` (a frame is
/// drawn from a shared view of the app), so the geometry sits in a `Cell` the pane owns.
#[derive(Debug, Default)]
pub struct Viewport {
    scroll: Scroll,
    drawn: Cell<Drawn>,
}

/// A pane that scrolls: the app routes focus keys, Page keys and the wheel to it.
pub trait Scrollable {
    fn viewport(&self) -> &Viewport;
    fn viewport_mut(&mut self) -> &mut Viewport;

    /// A key while this pane has the focus; `false` when the pane has no use for it.
    fn on_key(&mut self, key: KeyEvent) -> bool {
        self.viewport_mut().on_key(key)
    }
}

impl Viewport {
    pub fn scroll(&self) -> Scroll {
        self.scroll
    }

    /// Back to following the newest content.
    pub fn follow(&mut self) {
        self.scroll = Scroll::Follow;
    }

    pub fn to_top(&mut self) {
        self.scroll = Scroll::At(0);
    }

    /// Scrolls by `delta` lines from where the pane was last drawn, within its content;
    /// reaching the bottom follows new content again.
    pub fn scroll_by(&mut self, delta: isize) {
        let drawn = self.drawn.get();
        let max_top = drawn.max_top();
        let top = drawn.top.saturating_add_signed(delta).min(max_top);
        self.scroll = if delta > 0 && top >= max_top { Scroll::Follow } else { Scroll::At(top) };
    }

    /// A page: the rows last shown, less one kept for context.
    pub fn page(&mut self, down: bool) {
        let page = self.drawn.get().height.saturating_sub(1).max(1) as isize;
        self.scroll_by(if down { page } else { -page });
    }

    /// The scroll keys every pane understands.
    pub fn on_key(&mut self, key: KeyEvent) -> bool {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_by(1),
            KeyCode::Home | KeyCode::Char('g') => self.to_top(),
            KeyCode::End | KeyCode::Char('G') => self.follow(),
            _ => return false,
        }
        true
    }

    /// Whether the pane was drawn last frame and covers `at`.
    pub fn contains(&self, at: Position) -> bool {
        let area = self.drawn.get().area;
        area.area() > 0 && area.contains(at)
    }

    /// Not on screen this frame: nothing to hit or page through.
    pub fn hide(&self) {
        self.drawn.set(Drawn::default());
    }

    /// The top line to draw for `total` lines in `height` rows.
    fn top_line(&self, total: usize, height: usize, follow_to: Option<usize>) -> usize {
        let max_top = total.saturating_sub(height);
        match self.scroll {
            Scroll::At(top) => top.min(max_top),
            Scroll::Follow => match follow_to {
                // Keep this line (the plan's current step) in view, a little from the top.
                Some(line) => line.saturating_sub(height / 3).min(max_top),
                None => max_top,
            },
        }
    }

    /// Draws the pane's frame and its visible lines into `area`, and remembers what it drew.
    pub fn draw(&self, frame: &mut Frame, area: Rect, focused: bool, text: PaneText) {
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
            self.drawn.set(Drawn { area, total: 0, height, top: 0 });
            return;
        }
        let total = text.lines.len();
        let top = self.top_line(total, height, text.follow_to);
        let visible: Vec<Line> = text.lines.iter().skip(top).take(height).cloned().collect();
        frame.render_widget(Paragraph::new(visible), body);
        self.drawn.set(Drawn { area, total, height, top });
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
            if text.note_more_below && matches!(self.scroll, Scroll::At(_)) && top < total.saturating_sub(height) {
                let below = total - height - top;
                let note = Line::from(Span::styled(format!(" ↓ {below} more (End) "), theme::running()));
                let y = area.y + area.height - 1;
                let width = (str_width(&note.to_string()) as u16).min(area.width.saturating_sub(2));
                frame.render_widget(Paragraph::new(note), Rect { x: area.x + 1, y, width, height: 1 });
            }
        }
    }
}

/// What a pane puts in its frame.
pub struct PaneText<'a> {
    pub title: Vec<Span<'static>>,
    pub bottom: Option<Line<'static>>,
    /// A fixed first line (a table header) that does not scroll.
    pub header: Option<Line<'static>>,
    /// All lines; only the visible ones are copied into the frame.
    pub lines: &'a [Line<'static>],
    /// While following, keep this line (the plan's current step) in view.
    pub follow_to: Option<usize>,
    /// Say how many lines are below when scrolled up (the plan, short, says nothing).
    pub note_more_below: bool,
    /// Shown when there are no lines.
    pub empty: &'static str,
}

impl<'a> PaneText<'a> {
    /// Lines under a title, with the usual "more below" note and nothing else.
    pub fn new(title: Vec<Span<'static>>, lines: &'a [Line<'static>], empty: &'static str) -> Self {
        Self { title, bottom: None, header: None, lines, follow_to: None, note_more_below: true, empty }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn lines(n: usize) -> Vec<Line<'static>> {
        (0..n).map(|i| Line::from(format!("line {i}"))).collect()
    }

    /// Draws `n` lines in a bordered pane `height` rows tall (two of them borders).
    fn draw(view: &Viewport, n: usize, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(20, height)).expect("test terminal");
        let lines = lines(n);
        terminal
            .draw(|f| view.draw(f, f.area(), false, PaneText::new(vec![], &lines, "empty")))
            .expect("draw");
        let buffer = terminal.backend().buffer();
        // The first row inside the border, left of the scrollbar.
        (0..12).map(|x| buffer[(x, 1)].symbol().to_string()).collect::<String>().trim_end().to_string()
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn a_held_position_clamps_to_the_content_after_the_pane_grows() {
        let mut view = Viewport::default();
        // 30 lines in 5 rows: following shows lines 25..30.
        assert_eq!(draw(&view, 30, 7), "│line 25");
        view.scroll_by(-5);
        assert_eq!(view.scroll(), Scroll::At(20));
        assert_eq!(draw(&view, 30, 7), "│line 20");
        // The terminal grows to 20 rows inside: at most line 10 can be the top.
        assert_eq!(draw(&view, 30, 22), "│line 10");
        // Scrolling goes on from what is shown, not from the position held before.
        view.scroll_by(-1);
        assert_eq!(view.scroll(), Scroll::At(9));
        draw(&view, 30, 22);
        view.scroll_by(1);
        assert_eq!(view.scroll(), Scroll::Follow);
    }

    #[test]
    fn scrolling_never_passes_the_first_or_the_last_line() {
        let mut view = Viewport::default();
        draw(&view, 12, 7);
        view.scroll_by(-100);
        assert_eq!(view.scroll(), Scroll::At(0));
        draw(&view, 12, 7);
        view.scroll_by(100);
        assert_eq!(view.scroll(), Scroll::Follow);
        // Content shorter than the pane: nothing to scroll, up holds the top.
        draw(&view, 3, 7);
        view.scroll_by(-1);
        assert_eq!(view.scroll(), Scroll::At(0));
    }

    #[test]
    fn a_page_is_the_rows_shown_less_one() {
        let mut view = Viewport::default();
        draw(&view, 40, 12);
        // Following: top 30 of 40 in 10 rows; a page up is 9 lines.
        view.page(false);
        assert_eq!(view.scroll(), Scroll::At(21));
    }

    #[test]
    fn scroll_keys_move_the_pane_and_others_are_left_alone() {
        let mut view = Viewport::default();
        draw(&view, 30, 7);
        assert!(view.on_key(key(KeyCode::Char('k'))));
        assert_eq!(view.scroll(), Scroll::At(24));
        assert!(view.on_key(key(KeyCode::Home)));
        assert_eq!(view.scroll(), Scroll::At(0));
        assert!(view.on_key(key(KeyCode::Char('G'))));
        assert_eq!(view.scroll(), Scroll::Follow);
        assert!(!view.on_key(key(KeyCode::Char('x'))));
        assert!(!view.on_key(key(KeyCode::Enter)));
    }

    #[test]
    fn a_hidden_pane_is_not_hit() {
        let view = Viewport::default();
        draw(&view, 3, 7);
        assert!(view.contains(Position::new(2, 2)));
        view.hide();
        assert!(!view.contains(Position::new(2, 2)));
    }
}
