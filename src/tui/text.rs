//! Display-width text helpers: every pane lays text out by terminal columns, not bytes or
//! chars, so CJK (two columns a character) wraps and truncates where the eye expects.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Columns a character takes; control characters take none.
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Columns a string takes.
pub fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Makes text safe for a cell grid: tabs become four spaces, `\r` and other control
/// characters (a model can emit them) are dropped; newlines stay.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Cuts `s` to at most `width` columns, ending with `…` when something was cut.
pub fn truncate(s: &str, width: usize) -> String {
    if str_width(s) <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = char_width(c);
        if used + w > width - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The text on one line: newlines and runs of whitespace become single spaces.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last_space = false;
    for c in sanitize(s).chars() {
        if c.is_whitespace() {
            if !last_space && !out.is_empty() {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out.trim_end().to_string()
}

/// Splits one logical line (no `\n`) of styled pieces into rows of at most `width`
/// columns. Breaks after a space or next to a wide (CJK) character when it can, inside a
/// word only when a word is wider than the row.
pub fn wrap_spans(pieces: &[(String, Style)], width: usize) -> Vec<Vec<(String, Style)>> {
    let width = width.max(1);
    let chars: Vec<(char, Style)> =
        pieces.iter().flat_map(|(text, style)| text.chars().map(move |c| (c, *style))).collect();
    let mut rows: Vec<Vec<(char, Style)>> = Vec::new();
    let mut row: Vec<(char, Style)> = Vec::new();
    let mut row_width = 0usize;
    // Index in `row` after which the row may be cut.
    let mut last_break: Option<usize> = None;
    for (c, style) in chars {
        let w = char_width(c);
        if row_width + w > width && !row.is_empty() && c == ' ' {
            // The row is full and the space is the break itself.
            rows.push(std::mem::take(&mut row));
            row_width = 0;
            last_break = None;
            continue;
        }
        if row_width + w > width && !row.is_empty() {
            let cut = match last_break {
                Some(at) if at > 0 && at < row.len() => at,
                _ => row.len(),
            };
            let rest = row.split_off(cut);
            rows.push(std::mem::take(&mut row));
            // A continuation row does not start with the space it was broken at.
            row = rest.into_iter().skip_while(|(c, _)| *c == ' ').collect();
            row_width = row.iter().map(|(c, _)| char_width(*c)).sum();
            last_break = None;
            if row_width + w > width && !row.is_empty() {
                rows.push(std::mem::take(&mut row));
                row_width = 0;
            }
        }
        if row.is_empty() && c == ' ' && !rows.is_empty() {
            continue;
        }
        let wide = w > 1;
        if wide && !row.is_empty() {
            last_break = Some(row.len());
        }
        row.push((c, style));
        row_width += w;
        if c == ' ' || wide {
            last_break = Some(row.len());
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows.into_iter().map(group_styles).collect()
}

fn group_styles(row: Vec<(char, Style)>) -> Vec<(String, Style)> {
    let mut out: Vec<(String, Style)> = Vec::new();
    for (c, style) in row {
        match out.last_mut() {
            Some((text, s)) if *s == style => text.push(c),
            _ => out.push((c.to_string(), style)),
        }
    }
    out
}

/// Wraps multi-line text in one style into lines of `width` columns, each row led by
/// `indent` spaces.
pub fn wrap_text(text: &str, style: Style, width: usize, indent: usize) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(indent).max(1);
    let pad = " ".repeat(indent);
    sanitize(text)
        .split('\n')
        .flat_map(|logical| wrap_spans(&[(logical.to_string(), style)], inner))
        .map(|row| {
            let mut spans = vec![Span::raw(pad.clone())];
            spans.extend(row.into_iter().map(|(t, s)| Span::styled(t, s)));
            Line::from(spans)
        })
        .collect()
}

/// Wraps one logical line of styled pieces; continuation rows are led by `indent` spaces.
pub fn wrap_line(pieces: &[(String, Style)], width: usize, indent: usize) -> Vec<Line<'static>> {
    let first = wrap_spans(pieces, width);
    let mut out = Vec::new();
    let mut rows = first.into_iter();
    if let Some(row) = rows.next() {
        out.push(Line::from(row.into_iter().map(|(t, s)| Span::styled(t, s)).collect::<Vec<_>>()));
    }
    // Re-wrap the remainder at the narrower width so the indent never overflows.
    let rest: Vec<(String, Style)> = rows.flatten().collect();
    if !rest.is_empty() {
        let pad = " ".repeat(indent);
        for row in wrap_spans(&rest, width.saturating_sub(indent).max(1)) {
            let mut spans = vec![Span::raw(pad.clone())];
            spans.extend(row.into_iter().map(|(t, s)| Span::styled(t, s)));
            out.push(Line::from(spans));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(rows: Vec<Vec<(String, Style)>>) -> Vec<String> {
        rows.into_iter().map(|r| r.into_iter().map(|(t, _)| t).collect()).collect()
    }

    fn wrap(s: &str, width: usize) -> Vec<String> {
        plain(wrap_spans(&[(s.to_string(), Style::default())], width))
    }

    #[test]
    fn widths_count_cjk_as_two_columns() {
        assert_eq!(str_width("abc"), 3);
        assert_eq!(str_width("中文"), 4);
        assert_eq!(str_width("a中b"), 4);
    }

    #[test]
    fn wraps_english_at_spaces() {
        assert_eq!(wrap("the quick brown fox", 10), vec!["the quick ", "brown fox"]);
        assert_eq!(wrap("the quick brown", 9), vec!["the quick", "brown"]);
    }

    #[test]
    fn wraps_cjk_by_columns_never_splitting_a_character() {
        assert_eq!(wrap("一二三四五六七", 5), vec!["一二", "三四", "五六", "七"]);
        for row in wrap("一二三四五六七", 5) {
            assert!(str_width(&row) <= 5, "{row}");
        }
    }

    #[test]
    fn breaks_a_word_longer_than_the_row() {
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
    }

    #[test]
    fn mixed_cjk_and_ascii_wrap_within_width() {
        let rows = wrap("计算 3.14 * 5 的结果并读取 docs/agent_intro.txt", 12);
        assert!(rows.iter().all(|r| str_width(r) <= 12), "{rows:?}");
        assert_eq!(rows.concat().replace(' ', ""), "计算3.14*5的结果并读取docs/agent_intro.txt");
    }

    #[test]
    fn empty_line_is_one_empty_row() {
        assert_eq!(wrap("", 10), vec![""]);
    }

    #[test]
    fn truncate_adds_an_ellipsis_within_width() {
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("中文中文", 5), "中文…");
        assert_eq!(truncate("short", 8), "short");
    }

    #[test]
    fn sanitize_drops_controls_and_expands_tabs() {
        assert_eq!(sanitize("a\tb\r\nc\u{7}"), "a    b\nc");
    }

    #[test]
    fn one_line_collapses_whitespace() {
        assert_eq!(one_line("a\n  b\tc \n"), "a b c");
    }

    #[test]
    fn wrap_text_indents_every_row() {
        let lines = wrap_text("one two three", Style::default(), 8, 2);
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, vec!["  one ", "  two ", "  three"]);
    }
}
