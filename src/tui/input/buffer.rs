//! The input's text: a multi-line buffer with a cursor (a byte offset always on a char
//! boundary), readline-like moves, and a history of sent questions.

use crate::tui::text::{char_width, sanitize};

#[derive(Clone, Debug, Default)]
pub struct InputBox {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// Which history entry Up/Down is showing; `None` while editing a fresh draft.
    history_pos: Option<usize>,
    /// The draft put aside while browsing history.
    draft: String,
}

/// The visual layout of the input at a given width: the rows to draw and where the
/// cursor is among them (row, column in terminal cells).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputLayout {
    pub rows: Vec<String>,
    pub cursor: (usize, usize),
}

impl InputBox {
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor as a byte offset into [`InputBox::text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn history(&self) -> &[String] {
        &self.history
    }

    pub fn insert_char(&mut self, c: char) {
        self.leave_history();
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Inserts pasted or typed text; `\r\n` and lone `\r` become newlines, tabs spaces.
    pub fn insert_str(&mut self, s: &str) {
        self.leave_history();
        let normalized = sanitize(&s.replace("\r\n", "\n").replace('\r', "\n"));
        self.text.insert_str(self.cursor, &normalized);
        self.cursor += normalized.len();
    }

    pub fn newline(&mut self) {
        self.insert_char('\n');
    }

    pub fn backspace(&mut self) {
        if let Some(prev) = self.prev_boundary(self.cursor) {
            self.leave_history();
            self.text.replace_range(prev..self.cursor, "");
            self.cursor = prev;
        }
    }

    pub fn delete(&mut self) {
        if let Some(next) = self.next_boundary(self.cursor) {
            self.leave_history();
            self.text.replace_range(self.cursor..next, "");
        }
    }

    pub fn left(&mut self) {
        if let Some(prev) = self.prev_boundary(self.cursor) {
            self.cursor = prev;
        }
    }

    pub fn right(&mut self) {
        if let Some(next) = self.next_boundary(self.cursor) {
            self.cursor = next;
        }
    }

    /// To the start of the current line.
    pub fn home(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    /// To the end of the current line.
    pub fn end(&mut self) {
        self.cursor = self.line_end(self.cursor);
    }

    pub fn word_left(&mut self) {
        let before: Vec<(usize, char)> = self.text[..self.cursor].char_indices().collect();
        let mut i = before.len();
        while i > 0 && before.get(i - 1).is_some_and(|(_, c)| c.is_whitespace()) {
            i -= 1;
        }
        while i > 0 && before.get(i - 1).is_some_and(|(_, c)| !c.is_whitespace()) {
            i -= 1;
        }
        self.cursor = before.get(i).map_or(0, |(at, _)| *at);
    }

    pub fn word_right(&mut self) {
        let rest = &self.text[self.cursor..];
        let mut chars = rest.char_indices().peekable();
        while chars.peek().is_some_and(|(_, c)| c.is_whitespace()) {
            chars.next();
        }
        while chars.peek().is_some_and(|(_, c)| !c.is_whitespace()) {
            chars.next();
        }
        self.cursor += chars.peek().map_or(rest.len(), |(at, _)| *at);
    }

    /// Deletes the word before the cursor (Ctrl+W).
    pub fn delete_word_back(&mut self) {
        let end = self.cursor;
        self.word_left();
        if self.cursor < end {
            self.leave_history();
            self.text.replace_range(self.cursor..end, "");
        }
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.history_pos = None;
    }

    /// Takes the text to send: it goes into the history (unless it repeats the last
    /// entry) and the box empties.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.history_pos = None;
        self.draft.clear();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Up: the line above inside multi-line text, else the previous history entry.
    pub fn up(&mut self) {
        let start = self.line_start(self.cursor);
        if start > 0 {
            let col = self.width_between(start, self.cursor);
            let prev_start = self.line_start(start - 1);
            self.cursor = self.at_column(prev_start, col);
            return;
        }
        let pos = match self.history_pos {
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
            Some(0) => return,
            Some(p) => p - 1,
        };
        self.show_history(pos);
    }

    /// Down: the line below inside multi-line text, else the next history entry (and
    /// back to the draft after the newest).
    pub fn down(&mut self) {
        let end = self.line_end(self.cursor);
        if end < self.text.len() {
            let col = self.width_between(self.line_start(self.cursor), self.cursor);
            self.cursor = self.at_column(end + 1, col);
            return;
        }
        match self.history_pos {
            None => {}
            Some(p) if p + 1 < self.history.len() => self.show_history(p + 1),
            Some(_) => {
                self.history_pos = None;
                self.text = std::mem::take(&mut self.draft);
                self.cursor = self.text.len();
            }
        }
    }

    /// Lays the text out in rows of at most `width` columns (wrapping by display width,
    /// never splitting a character) and finds the cursor's cell.
    pub fn layout(&self, width: usize) -> InputLayout {
        let width = width.max(2);
        let mut rows = Vec::new();
        let mut cursor = (0, 0);
        let mut offset = 0;
        for line in self.text.split('\n') {
            let mut row = String::new();
            let mut row_width = 0;
            for (i, c) in line.char_indices() {
                let w = char_width(c);
                if row_width + w > width {
                    rows.push(std::mem::take(&mut row));
                    row_width = 0;
                }
                if offset + i == self.cursor {
                    cursor = (rows.len(), row_width);
                }
                row.push(c);
                row_width += w;
            }
            if offset + line.len() == self.cursor {
                if row_width >= width {
                    // A full row: the cursor goes to the start of an empty row below it.
                    rows.push(std::mem::take(&mut row));
                }
                cursor = (rows.len(), if row.is_empty() { 0 } else { row_width });
            }
            rows.push(row);
            offset += line.len() + 1;
        }
        InputLayout { rows, cursor }
    }

    fn show_history(&mut self, pos: usize) {
        if let Some(entry) = self.history.get(pos) {
            self.history_pos = Some(pos);
            self.text = entry.clone();
            self.cursor = self.text.len();
        }
    }

    /// Editing a recalled entry makes it a fresh draft.
    fn leave_history(&mut self) {
        if self.history_pos.take().is_some() {
            self.draft.clear();
        }
    }

    fn prev_boundary(&self, at: usize) -> Option<usize> {
        self.text[..at].char_indices().next_back().map(|(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> Option<usize> {
        self.text[at..].chars().next().map(|c| at + c.len_utf8())
    }

    fn line_start(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self, at: usize) -> usize {
        self.text[at..].find('\n').map_or(self.text.len(), |i| at + i)
    }

    fn width_between(&self, from: usize, to: usize) -> usize {
        self.text[from..to].chars().map(char_width).sum()
    }

    /// The byte offset in the line starting at `start` closest to column `col` without
    /// passing it.
    fn at_column(&self, start: usize, col: usize) -> usize {
        let end = self.line_end(start);
        let mut used = 0;
        for (i, c) in self.text[start..end].char_indices() {
            let w = char_width(c);
            if used + w > col {
                return start + i;
            }
            used += w;
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(s: &str) -> InputBox {
        let mut input = InputBox::default();
        for c in s.chars() {
            if c == '\n' {
                input.newline();
            } else {
                input.insert_char(c);
            }
        }
        input
    }

    #[test]
    fn cursor_moves_over_cjk_characters_whole() {
        let mut input = typed("中文ab");
        input.left();
        input.left();
        input.left();
        assert_eq!(input.cursor(), "中".len());
        input.backspace();
        assert_eq!(input.text(), "文ab");
        assert_eq!(input.cursor(), 0);
        input.delete();
        assert_eq!(input.text(), "ab");
    }

    #[test]
    fn layout_puts_the_cursor_after_wide_characters() {
        let input = typed("你好");
        assert_eq!(input.layout(10), InputLayout { rows: vec!["你好".into()], cursor: (0, 4) });
    }

    #[test]
    fn layout_wraps_cjk_by_width_and_moves_cursor_to_next_row_when_full() {
        let input = typed("一二三");
        assert_eq!(
            input.layout(4),
            InputLayout { rows: vec!["一二".into(), "三".into()], cursor: (1, 2) }
        );
        let full = typed("一二");
        assert_eq!(
            full.layout(4),
            InputLayout { rows: vec!["一二".into(), String::new()], cursor: (1, 0) }
        );
        let mut middle = typed("一二\nab");
        middle.up();
        middle.end();
        assert_eq!(
            middle.layout(4),
            InputLayout { rows: vec!["一二".into(), String::new(), "ab".into()], cursor: (1, 0) }
        );
    }

    #[test]
    fn layout_of_multi_line_text() {
        let mut input = typed("ab\ncd");
        input.home();
        assert_eq!(input.layout(10), InputLayout { rows: vec!["ab".into(), "cd".into()], cursor: (1, 0) });
    }

    #[test]
    fn up_and_down_move_between_lines_by_column() {
        let mut input = typed("中文abc\nxyz");
        input.up();
        // "xyz" end is column 3; on "中文abc" column 3 falls inside 文, so before it.
        assert_eq!(input.cursor(), "中".len());
        input.down();
        // Column 2 on "xyz" is after "xy".
        assert_eq!(input.cursor(), "中文abc\nxy".len());
    }

    #[test]
    fn history_recalls_sent_entries_and_restores_the_draft() {
        let mut input = typed("first");
        assert_eq!(input.take(), "first");
        input.insert_str("second");
        input.take();
        input.insert_str("draft");
        input.up();
        assert_eq!(input.text(), "second");
        input.up();
        assert_eq!(input.text(), "first");
        input.up();
        assert_eq!(input.text(), "first");
        input.down();
        assert_eq!(input.text(), "second");
        input.down();
        assert_eq!(input.text(), "draft");
        assert_eq!(input.history(), ["first".to_string(), "second".to_string()]);
    }

    #[test]
    fn paste_normalizes_line_endings() {
        let mut input = InputBox::default();
        input.insert_str("a\r\nb\rc\td");
        assert_eq!(input.text(), "a\nb\nc    d");
        assert_eq!(input.cursor(), input.text().len());
    }

    #[test]
    fn word_moves_and_delete_word() {
        let mut input = typed("read the file");
        input.word_left();
        assert_eq!(input.cursor(), "read the ".len());
        input.word_left();
        assert_eq!(input.cursor(), "read ".len());
        input.word_right();
        assert_eq!(input.cursor(), "read the".len());
        input.end();
        input.delete_word_back();
        assert_eq!(input.text(), "read the ");
    }
}
