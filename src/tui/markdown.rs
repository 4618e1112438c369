//! Final answers as Markdown: headings, bold and italic, `code` spans, fenced code
//! blocks, bullet and numbered lists, quotes and rules. A small line-based reader rather
//! than a full CommonMark parser: a model's answer uses these, and anything else shows
//! as the text it is. Wrapping goes through [`wrap_line`], so CJK takes two columns.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::text::{sanitize, str_width, wrap_line};
use super::theme;

/// The lines of `text` at `width` columns, each led by `indent` spaces.
pub fn render(text: &str, width: usize, indent: usize) -> Vec<Line<'static>> {
    let pad = " ".repeat(indent);
    let inner = width.saturating_sub(indent).max(1);
    let mut out = Vec::new();
    let mut in_code = false;
    for raw in sanitize(text).split('\n') {
        let trimmed = raw.trim_start();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let rows = if in_code {
            wrap_line(&[(format!("│ {raw}"), theme::tool_name())], inner, 2)
        } else {
            block_line(raw, inner)
        };
        out.extend(rows.into_iter().map(|mut line| {
            line.spans.insert(0, Span::raw(pad.clone()));
            line
        }));
    }
    out
}

fn block_line(raw: &str, width: usize) -> Vec<Line<'static>> {
    let trimmed = raw.trim_start();
    let lead = str_width(raw) - str_width(trimmed);
    if let Some((level, title)) = heading(trimmed) {
        let style = if level == 1 { theme::answer().add_modifier(Modifier::UNDERLINED) } else { theme::answer() };
        return wrap_line(&inline(title, style), width, 0);
    }
    if trimmed.len() >= 3 && trimmed.chars().all(|c| c == '-' || c == '*' || c == '_') && !trimmed.contains(' ') {
        return vec![Line::from(Span::styled("─".repeat(width.min(40)), theme::dim()))];
    }
    if let Some(rest) = trimmed.strip_prefix("> ") {
        let mut pieces = vec![("▌ ".to_string(), theme::dim())];
        pieces.extend(inline(rest, theme::dim()));
        return wrap_line(&pieces, width, 2);
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(bullet) {
            let mut pieces = vec![(format!("{}• ", " ".repeat(lead)), theme::plain())];
            pieces.extend(inline(rest, theme::plain()));
            return wrap_line(&pieces, width, lead + 2);
        }
    }
    if let Some((number, rest)) = numbered(trimmed) {
        let marker = format!("{}{number} ", " ".repeat(lead));
        let hang = str_width(&marker);
        let mut pieces = vec![(marker, theme::bold())];
        pieces.extend(inline(rest, theme::plain()));
        return wrap_line(&pieces, width, hang);
    }
    wrap_line(&inline(raw, theme::plain()), width, 0)
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&level) {
        if let Some(title) = line[level..].strip_prefix(' ') {
            return Some((level, title.trim()));
        }
    }
    None
}

/// `1. rest` or `1) rest`: the marker and the rest.
fn numbered(line: &str) -> Option<(&str, &str)> {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let after = &line[digits..];
    let rest = after.strip_prefix(". ").or_else(|| after.strip_prefix(") "))?;
    Some((&line[..digits + 1], rest))
}

/// Inline spans: `**bold**`, `__bold__`, `*italic*`, `` `code` ``. Unclosed markers stay
/// as they are.
fn inline(text: &str, base: Style) -> Vec<(String, Style)> {
    let mut out: Vec<(String, Style)> = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let marker = ["**", "__", "`", "*"].into_iter().find(|m| rest.starts_with(m));
        if let Some(marker) = marker {
            let body = &rest[marker.len()..];
            // `2 * 3 * 4` is arithmetic, not emphasis: an opening marker hugs its text.
            if let Some(end) = body.find(marker).filter(|end| *end > 0 && !body.starts_with(' ')) {
                let style = match marker {
                    "`" => theme::tool_name(),
                    "*" => base.add_modifier(Modifier::ITALIC),
                    _ => base.add_modifier(Modifier::BOLD),
                };
                if !plain.is_empty() {
                    out.push((std::mem::take(&mut plain), base));
                }
                out.push((body[..end].to_string(), style));
                rest = &body[end + marker.len()..];
                continue;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            plain.push(c);
        }
        rest = chars.as_str();
    }
    if !plain.is_empty() || out.is_empty() {
        out.push((plain, base));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn blocks_render_as_a_reader_expects() {
        let md = "# 结果\n\n1. 读取 **docs/a.txt**\n- 计算 `3.14 * 5` = 15.7\n```\nlet x = 1;\n```\n> 注意";
        assert_eq!(
            text(&render(md, 40, 2)),
            ["  结果", "  ", "  1. 读取 docs/a.txt", "  • 计算 3.14 * 5 = 15.7", "  │ let x = 1;", "  ▌ 注意"]
        );
    }

    #[test]
    fn inline_markers_style_their_text_and_unclosed_ones_stay() {
        let pieces = inline("a **b** *c* `d` e*f", Style::default());
        let texts: Vec<&str> = pieces.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a ", "b", " ", "c", " ", "d", " e*f"]);
        assert!(pieces[1].1.add_modifier.contains(Modifier::BOLD));
        assert!(pieces[3].1.add_modifier.contains(Modifier::ITALIC));
    }

    #[test]
    fn list_items_wrap_under_their_text_within_the_width() {
        let lines = render("- 一二三四五六七八九十一二三四五", 14, 0);
        let rows = text(&lines);
        assert!(rows.iter().all(|r| str_width(r) <= 14), "{rows:?}");
        assert_eq!(rows[0], "• 一二三四五六");
        assert!(rows[1].starts_with("  "), "{rows:?}");
    }
}
