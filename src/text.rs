//! Small text helpers: user-given values shown in one line, and values looked for in text.

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

/// `text` without whitespace, lowercased: how values are looked for in other text.
pub fn normalized(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect()
}

/// Number words a request may use for a count (`two of them`, `两张`).
const NUMBER_WORDS: [(&str, f64); 21] = [
    ("one", 1.0), ("two", 2.0), ("three", 3.0), ("four", 4.0), ("five", 5.0), ("six", 6.0), ("seven", 7.0),
    ("eight", 8.0), ("nine", 9.0), ("ten", 10.0), ("一", 1.0), ("二", 2.0), ("两", 2.0), ("三", 3.0), ("四", 4.0),
    ("五", 5.0), ("六", 6.0), ("七", 7.0), ("八", 8.0), ("九", 9.0), ("十", 10.0),
];

/// The numbers `text` (already [`normalized`]) writes: runs of digits (thousands commas
/// dropped) and number words. A run with `-`, `/` or `:` inside is a date, a time or a code,
/// not numbers (`2025-05-20` does not write 20). A comma may also part a list (`3, 9, 1`,
/// which [`normalized`] makes `3,9,1`), so the numbers on either side count too.
pub fn numbers_written(text: &str) -> Vec<f64> {
    let words = without_numberless_words(text);
    let mut out: Vec<f64> = NUMBER_WORDS.iter().filter(|(w, _)| words.contains(w)).map(|&(_, n)| n).collect();
    out.extend(digits_written(text));
    out.extend(chinese_numbers_written(text));
    if text.contains(',') {
        out.extend(digits_written(&text.replace(',', " ")));
    }
    out
}

/// Everyday words with a number word inside that write no number: "the shop.example zone",
/// "my phone", "money", "often", "content", "weight", "帮我查一下", "一起", "十分". [`normalized`]
/// text has no blanks left to tell where a word starts, so they are named.
const NUMBERLESS_WORDS: &[&str] = &[
    "someone", "anyone", "everyone", "zone", "phone", "money", "honey", "done", "none", "gone", "bone", "tone", "stone",
    "alone", "honest", "component", "often", "content", "written", "attend", "attention", "intend", "extend", "tennis",
    "listen", "kitten", "eaten", "tenant", "tend", "weight", "height", "freight",
    "一下", "一起", "一些", "一定", "一直", "一样", "一般", "统一", "唯一", "十分", "一旦", "万一",
];

/// `text` (lower case) with [`NUMBERLESS_WORDS`] blanked out.
fn without_numberless_words(text: &str) -> String {
    NUMBERLESS_WORDS.iter().fold(text.to_string(), |text, word| text.replace(word, " "))
}

/// The numbers `text` (already [`normalized`]) writes in digits, as [`numbers_written`].
pub fn digits_written(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || matches!(chars[i], '.' | ',' | '-' | '/' | ':')) {
            i += 1;
        }
        let run: String = chars[start..i].iter().collect::<String>().trim_end_matches(['.', ',', '-', '/', ':']).to_string();
        if run.contains(['-', '/', ':']) {
            continue;
        }
        if let Ok(n) = run.replace(',', "").parse::<f64>() {
            out.push(n);
        }
    }
    out
}

/// The numbers `text` writes in Chinese numerals of more than one character, or in
/// figures with a Chinese unit of ten thousand or a thousand: `五千` 5000, `一万二千`
/// 12000, `三百五十` 350, `两千五` 2500 (the unit after the last is understood), `十二`
/// 12, `3万` 30000, `1.5万` 15000. One numeral alone is [`NUMBER_WORDS`]'.
pub fn chinese_numbers_written(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        // Figures with 万 / 千 / 亿 after them.
        if chars[i].is_ascii_digit() && (i == 0 || !(chars[i - 1].is_ascii_digit() || chars[i - 1] == '.')) {
            let end = (i..chars.len()).find(|&j| !(chars[j].is_ascii_digit() || chars[j] == '.')).unwrap_or(chars.len());
            let figures: String = chars[i..end].iter().collect();
            let unit = chars.get(end).and_then(|&c| chinese_unit(c)).filter(|&u| u >= 1000.0);
            if let (Ok(n), Some(unit)) = (figures.parse::<f64>(), unit) {
                out.push(n * unit);
            }
            i = end;
            continue;
        }
        let end = (i..chars.len()).find(|&j| chinese_digit(chars[j]).is_none() && chinese_unit(chars[j]).is_none()).unwrap_or(chars.len());
        if end - i >= 2 {
            if let Some(n) = chinese_number(&chars[i..end]) {
                out.push(n);
            }
        }
        i = end.max(i + 1);
    }
    out
}

fn chinese_digit(c: char) -> Option<f64> {
    "零一二三四五六七八九".chars().position(|d| d == c).map(|d| d as f64).or(match c {
        '〇' => Some(0.0),
        '两' => Some(2.0),
        _ => None,
    })
}

fn chinese_unit(c: char) -> Option<f64> {
    match c {
        '十' => Some(10.0),
        '百' => Some(100.0),
        '千' => Some(1000.0),
        '万' => Some(10_000.0),
        '亿' => Some(100_000_000.0),
        _ => None,
    }
}

/// The value of a run of Chinese numerals, or `None` where it is no number (`万万`).
fn chinese_number(run: &[char]) -> Option<f64> {
    // A run of digits alone reads figure by figure where it is a year or has a zero in it
    // (`二〇二五` is 2025); two or three of them are a range or a repeat (`三四个`, `一一`).
    if run.iter().all(|&c| chinese_digit(c).is_some()) {
        if run.len() < 4 && !run.contains(&'〇') {
            return None;
        }
        return run.iter().try_fold(0.0, |n, &c| Some(n * 10.0 + chinese_digit(c)?));
    }
    let (mut total, mut section, mut digit) = (0.0, 0.0, None::<f64>);
    let mut last_unit = 1.0;
    for &c in run {
        if let Some(d) = chinese_digit(c) {
            if digit.is_some() && d != 0.0 {
                return None;
            }
            digit = (d != 0.0).then_some(d).or(digit);
            continue;
        }
        let unit = chinese_unit(c)?;
        if unit >= 10_000.0 {
            section += digit.take().unwrap_or(0.0);
            if section == 0.0 {
                return None;
            }
            total += section * unit;
            section = 0.0;
        } else {
            // `十二` is 12: a ten with no digit before it is one ten.
            let times = match digit.take() {
                Some(d) => d,
                None if unit == 10.0 => 1.0,
                None => return None,
            };
            section += times * unit;
        }
        last_unit = unit;
    }
    if let Some(d) = digit {
        // `两千五` is 2500, `三万五` 35000: a last digit counts in the unit below the last.
        section += if last_unit >= 100.0 && !run.ends_with(&['零']) && run.len() >= 3 && run[run.len() - 2] != '零' { d * last_unit / 10.0 } else { d };
    }
    Some(total + section)
}

/// A Chinese, Japanese or Korean character (ideographs, kana, hangul).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF | 0x3040..=0x30FF | 0xAC00..=0xD7AF)
}

/// The words of `text` that are its writer's, split at blanks and punctuation: paths, file
/// names and identifiers (`docs/会议纪要/a.md`, `data/员工.csv`, `dark_mode`) are the files'.
pub fn own_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | '，' | '。' | '：' | ':' | '；' | ';' | '(' | ')' | '（' | '）' | '？' | '！' | '、'))
        .filter(|w| !w.is_empty() && !w.contains(['/', '_', '\\', '`']) && !w.trim_end_matches(['.', '!', '?']).contains('.'))
}

/// Whether `text` is written in Chinese (or Japanese or Korean): one of its own words
/// ([`own_words`]) has such a character. "How many rows are in data/员工.csv?" is English.
pub fn in_chinese(text: &str) -> bool {
    own_words(text).any(|w| w.chars().any(is_cjk))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_of_a_text_is_that_of_its_own_words() {
        assert!(in_chinese("data/员工.csv 里员工的平均工龄是多少年？"));
        assert!(in_chinese("好的。另外帮我算一下 (15 + 27) * 4"));
        assert!(!in_chinese("How many purchases are listed in data/原料采购.csv?"));
        assert!(!in_chinese("According to docs/会议纪要/2024-03-12-产品评审.md, what is the budget?"));
        assert!(!in_chinese("What is (3 + 5) * 7?"));
        assert_eq!(own_words("Open config/app.yaml, then notes.md. dark_mode is on.").collect::<Vec<_>>(), ["Open", "then", "is", "on."]);
    }

    #[test]
    fn long_text_keeps_its_ends_and_the_limit() {
        assert_eq!(elide_middle("short", 10), "short");
        assert_eq!(elide_middle("abcdefghij", 5), "ab…ij");
        assert_eq!(elide_middle(&"路".repeat(300), 200).chars().count(), 200);
    }

    #[test]
    fn numbers_of_lists_thousands_and_words() {
        let written = numbers_written(&normalized("What's the median of 3, 9, 1, 7, 5? Pay $1,849.00 for two."));
        for n in [3.0, 9.0, 1.0, 7.0, 5.0, 1849.0, 2.0] {
            assert!(written.contains(&n), "{n} in {written:?}");
        }
        let chinese = numbers_written(&normalized("转五千欧元，一万二千步，三百五十克，两千五，十二点，3万，1.5万，一百零五"));
        for n in [5000.0, 12000.0, 350.0, 2500.0, 12.0, 30000.0, 15000.0, 105.0] {
            assert!(chinese.contains(&n), "{n} in {chinese:?}");
        }
        assert_eq!(chinese_numbers_written("三万五"), [35000.0]);
        assert_eq!(chinese_numbers_written("二〇二五年"), [2025.0]);
        assert!(chinese_numbers_written("三四个，一一列出").is_empty());
        assert!(chinese_numbers_written("万万不可，千万别").is_empty(), "{:?}", chinese_numbers_written("万万不可，千万别"));
        for (text, n) in [("Add an A record to the shop.example zone", 1.0), ("帮我查一下明天的天气", 1.0), ("How often is it written?", 10.0), ("his weight", 8.0), ("十分感谢", 10.0)] {
            assert!(!numbers_written(&normalized(text)).contains(&n), "{text}");
        }
        for (text, n) in [("one zone", 1.0), ("一条记录", 1.0), ("ten tennis balls", 10.0)] {
            assert!(numbers_written(&normalized(text)).contains(&n), "{text}");
        }
        let dates = numbers_written(&normalized("on 2025-05-20 at 08:30"));
        assert!(!dates.contains(&20.0) && !dates.contains(&30.0), "{dates:?}");
    }
}
