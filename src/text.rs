//! Small text helpers shared by the places that show user-given values in one line.

/// `text` when it has at most `max` characters, else its head and tail around a `…`, so a
/// 100k-character path in an error line keeps both ends and stays readable.
pub fn elide_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max || max == 0 {
        return text.to_string();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

/// `text` on one line (runs of whitespace made one space), cut to `max` characters with
/// `...` after them when longer.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}...", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_keeps_its_ends_and_the_limit() {
        assert_eq!(elide_middle("short", 10), "short");
        assert_eq!(elide_middle("abcdefghij", 5), "ab…ij");
        assert_eq!(elide_middle(&"路".repeat(300), 200).chars().count(), 200);
    }
}
