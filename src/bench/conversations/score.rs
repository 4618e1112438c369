//! Scores one final answer against a turn's expectations.
//!
//! Matching ignores case, reads full-width forms as ASCII (`９：４５` is `9:45`), and drops
//! whitespace except between two ASCII letters or digits (`4 月 18 日` is `4月18日`,
//! `"port":8080` is `"port": 8080`, but `12 5%` stays two words). Then:
//! - an alternative that is a number (`144`, `-4`, `16.65`, `350,000`) matches a number of
//!   the answer with the same value: `1,234.50` matches `1234.5`; `1440` and `14.4` do
//!   not match `144`;
//! - any other alternative matches as text, but not inside a longer word or number:
//!   `east` does not match in `least`, `5%` not in `15%`, `9:45` not in `19:45`.
//!
//! The answer must also be in the conversation's language ([`written_in`]): a Chinese
//! question answered in English fails, and the reverse.

use crate::protocol::StopReason;

use super::set::{Lang, Turn};

/// Whether an answer passed, and why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    pub reasons: Vec<String>,
}

/// Scores a turn's outcome: the final answer (none when the run stopped without one, for
/// `stop`), and the names of the tools called while answering it.
pub fn score(turn: &Turn, lang: Lang, answer: Option<&str>, stop: StopReason, called: &[String]) -> Verdict {
    let mut reasons = Vec::new();
    match answer {
        None => reasons.push(format!("no final answer ({})", stop.describe())),
        Some(answer) => {
            if let Some(other) = written_in(answer).filter(|&written| written != lang) {
                reasons.push(format!("answered in {}, the conversation is in {}", other.name(), lang.name()));
            }
            let prepared = Prepared::new(answer);
            for group in &turn.must_contain {
                if !group.iter().any(|alt| prepared.matches(alt)) {
                    reasons.push(format!("missing {}", one_of(group)));
                }
            }
            for forbidden in turn.must_not_contain.iter().filter(|alt| prepared.matches(alt)) {
                reasons.push(format!("contains {forbidden:?}, which it must not"));
            }
        }
    }
    let called_list = || if called.is_empty() { "no tool".to_string() } else { called.join(", ") };
    for tool in turn.tools_used.iter().filter(|t| !called.contains(t)) {
        reasons.push(format!("did not call {tool} (called {})", called_list()));
    }
    if turn.no_tools && !called.is_empty() {
        reasons.push(format!("called {} though the question needs no tool", called_list()));
    }
    Verdict { passed: reasons.is_empty(), reasons }
}

/// Words an English sentence has and a Chinese one, English names and values aside, does not.
const ENGLISH_WORDS: [&str; 16] =
    ["the", "is", "are", "was", "were", "of", "and", "that", "this", "to", "in", "for", "with", "shows", "there", "it"];

/// The language `answer` is written in, judged on its own words: code blocks, quoted text
/// and paths or names (`docs/会议纪要/x.md`, `dark_mode`) are the files', not the answer's.
/// English when it has three or more of [`ENGLISH_WORDS`] and fewer than four Chinese
/// characters for each (`The average工龄 of employees ... is 3 years.`); Chinese when it has
/// two or more Chinese characters otherwise; `None` when it cannot tell (`122`).
pub fn written_in(answer: &str) -> Option<Lang> {
    let mut own = String::new();
    for (i, piece) in answer.split("```").enumerate() {
        if i % 2 == 0 {
            own.push_str(piece);
            own.push(' ');
        }
    }
    let mut unquoted = String::new();
    let mut quoted = false;
    for c in own.chars() {
        match c {
            '"' => quoted = !quoted,
            '“' | '「' => quoted = true,
            '”' | '」' => quoted = false,
            _ if !quoted => unquoted.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = crate::text::own_words(&unquoted).collect();
    let han = words.iter().flat_map(|w| w.chars()).filter(|&c| crate::text::is_cjk(c)).count();
    let english = words
        .iter()
        .flat_map(|w| w.split(|c: char| !c.is_ascii_alphabetic()))
        .filter(|w| ENGLISH_WORDS.iter().any(|e| w.eq_ignore_ascii_case(e)))
        .count();
    if english >= 3 && han < 4 * english {
        Some(Lang::En)
    } else if han >= 2 {
        Some(Lang::Zh)
    } else {
        None
    }
}

/// Whether `text` matches every `must_contain` group of the turn (tools aside).
pub fn text_passes(turn: &Turn, text: &str) -> bool {
    let prepared = Prepared::new(text);
    turn.must_contain.iter().all(|group| group.iter().any(|alt| prepared.matches(alt)))
}

/// Whether `alternative` appears in `text` by the rules above.
pub fn contains(text: &str, alternative: &str) -> bool {
    Prepared::new(text).matches(alternative)
}

fn one_of(group: &[String]) -> String {
    match group {
        [only] => format!("{only:?}"),
        _ => format!("one of {}", group.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>().join(", ")),
    }
}

/// An answer made ready for matching.
struct Prepared {
    /// Normalized, whitespace squeezed: for text alternatives.
    text: Vec<char>,
    /// The numbers it writes, read from the normalized text with its spaces.
    numbers: Vec<f64>,
}

impl Prepared {
    fn new(text: &str) -> Self {
        let normalized = normalize(text);
        Self { numbers: numbers(&normalized).into_iter().map(|n| n.value).collect(), text: squeeze(&normalized) }
    }

    fn matches(&self, alternative: &str) -> bool {
        let normalized = normalize(alternative.trim());
        if let Some(value) = as_number(&normalized) {
            return self.numbers.iter().any(|&n| same_number(n, value));
        }
        let needle = squeeze(&normalized);
        !needle.is_empty() && (0..self.text.len()).any(|at| self.text[at..].starts_with(&needle) && self.bounded(at, &needle))
    }

    /// The match at `at` does not continue a word or a number on either side.
    fn bounded(&self, at: usize, needle: &[char]) -> bool {
        let before = at.checked_sub(1).map(|i| self.text[i]);
        let end = at + needle.len();
        let (after, after2) = (self.text.get(end).copied(), self.text.get(end + 1).copied());
        let (first, last) = (needle[0], needle[needle.len() - 1]);
        let joined_before = match before {
            Some(b) if first.is_ascii_digit() => b.is_ascii_alphanumeric() || b == '.',
            Some(b) if first.is_ascii_alphanumeric() => b.is_ascii_alphanumeric(),
            _ => false,
        };
        let joined_after = last.is_ascii_digit()
            && match after {
                Some(a) if a.is_ascii_digit() => true,
                Some('.') => after2.is_some_and(|c| c.is_ascii_digit()),
                _ => false,
            };
        !joined_before && !joined_after
    }
}

/// Lowercase, full-width ASCII forms and the ideographic space as ASCII.
fn normalize(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            _ => c,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Drops whitespace, except one space between two ASCII letters or digits.
fn squeeze(text: &str) -> Vec<char> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_whitespace() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let before = start.checked_sub(1).map(|b| chars[b]);
        let after = chars.get(i);
        if before.is_some_and(|c| c.is_ascii_alphanumeric()) && after.is_some_and(|c| c.is_ascii_alphanumeric()) {
            out.push(' ');
        }
    }
    out
}

/// A number written in a text: its value and where it stands (in chars).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Number {
    value: f64,
    start: usize,
    end: usize,
}

/// The numbers of a normalized text: digits with `,` between groups of three and one
/// decimal part; a `-` right before the digits is a sign unless it follows a letter, a
/// digit or `)` (then it is a dash or a minus: `3-4`, `2024-05`).
fn numbers(text: &str) -> Vec<Number> {
    let c: Vec<char> = text.chars().collect();
    let digit = |i: usize| c.get(i).is_some_and(char::is_ascii_digit);
    let mut found = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if !digit(i) {
            i += 1;
            continue;
        }
        let mut start = i;
        let mut written = String::new();
        while digit(i) {
            written.push(c[i]);
            i += 1;
        }
        while c.get(i) == Some(&',') && (1..=3).all(|k| digit(i + k)) && !digit(i + 4) {
            written.extend(&c[i + 1..i + 4]);
            i += 4;
        }
        if c.get(i) == Some(&'.') && digit(i + 1) {
            written.push('.');
            i += 1;
            while digit(i) {
                written.push(c[i]);
                i += 1;
            }
        }
        let signed = start >= 1
            && c[start - 1] == '-'
            && (start < 2 || !(c[start - 2].is_alphanumeric() || c[start - 2] == ')' || c[start - 2] == '.'));
        if signed {
            start -= 1;
            written.insert(0, '-');
        }
        if let Ok(value) = written.parse::<f64>() {
            found.push(Number { value, start, end: i });
        }
    }
    found
}

/// The value of an alternative that is one number and nothing else.
fn as_number(alternative: &str) -> Option<f64> {
    match numbers(alternative).as_slice() {
        [n] if n.start == 0 && n.end == alternative.chars().count() => Some(n.value),
        _ => None,
    }
}

fn same_number(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(must: &[&[&str]], must_not: &[&str]) -> Turn {
        Turn {
            question: "q".into(),
            must_contain: must.iter().map(|g| g.iter().map(|s| s.to_string()).collect()).collect(),
            must_not_contain: must_not.iter().map(|s| s.to_string()).collect(),
            tools_used: vec![],
            no_tools: false,
            evidence: vec![],
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn numbers_match_by_value_and_never_inside_other_numbers() {
        for (answer, alt, want) in [
            ("The result is 144.", "144", true),
            ("12 * 12 = 144.0", "144", true),
            ("1440", "144", false),
            ("14.4", "144", false),
            ("2144", "144", false),
            ("Total revenue: $53,525", "53525", true),
            ("合计 1,234.50 元", "1234.5", true),
            ("约 16.65 美元", "16.65", true),
            ("16.650000000000002", "16.65", true),
            ("16.66", "16.65", false),
            ("It is -4 degrees", "-4", true),
            ("17 + 25 * 3 - 4 = 88", "-4", false),
            ("平均工龄为４.５年", "4.5", true),
            ("共有 8 名员工", "8", true),
            ("350,000 yuan", "350000", true),
            ("350,000 yuan", "350,000", true),
        ] {
            assert_eq!(contains(answer, alt), want, "{alt:?} in {answer:?}");
        }
    }

    #[test]
    fn text_matches_ignore_case_width_and_spacing_but_not_word_edges() {
        for (answer, alt, want) in [
            ("The EAST region leads.", "East", true),
            ("at least 3 regions", "East", false),
            ("发布日期定为 4 月 18 日。", "4月18日", true),
            ("站会 ９：４５ 开始", "9:45", true),
            ("at 19:45", "9:45", false),
            ("先向 15% 的用户开放", "5%", false),
            ("先向 5% 的用户开放", "5%", true),
            ("{\n  \"port\":8080\n}", "\"port\": 8080", true),
            ("port: 8080", "\"port\": 8080", false),
            ("rolled back to 2.0.2.", "2.0.2", true),
            ("version 2.0.23", "2.0.2", false),
            ("happy to help!", "help", true),
            ("It's H₂O.", "H2O", false),
            ("It's H₂O.", "H₂O", true),
        ] {
            assert_eq!(contains(answer, alt), want, "{alt:?} in {answer:?}");
        }
    }

    #[test]
    fn every_group_must_match_and_forbidden_text_fails() {
        let t = turn(&[&["2%", "small slice"], &["144"]], &["Priya"]);
        let ok = score(&t, Lang::En, Some("A canary release ships to a small slice of users first. 12*12 = 144."), StopReason::FinalAnswer, &[]);
        assert_eq!(ok, Verdict { passed: true, reasons: vec![] });
        let half = score(&t, Lang::En, Some("A canary release ships to 2% of users first."), StopReason::FinalAnswer, &[]);
        assert_eq!(half, Verdict { passed: false, reasons: vec!["missing \"144\"".into()] });
        let derailed = score(&t, Lang::En, Some("Ask Priya: 2%, 144"), StopReason::FinalAnswer, &[]);
        assert_eq!(derailed.reasons, vec!["contains \"Priya\", which it must not".to_string()]);
        let restated = score(&t, Lang::En, Some("Look up canary release in docs/glossary.md and compute 12*12."), StopReason::FinalAnswer, &[]);
        assert_eq!(restated.reasons, vec!["missing one of \"2%\", \"small slice\"".to_string(), "missing \"144\"".to_string()]);
    }

    #[test]
    fn tools_are_checked_and_a_stop_without_answer_fails() {
        let mut t = turn(&[&["122"]], &[]);
        t.tools_used = names(&["calculator"]);
        let v = score(&t, Lang::En, Some("122"), StopReason::FinalAnswer, &names(&["file_reader"]));
        assert_eq!(v.reasons, vec!["did not call calculator (called file_reader)".to_string()]);
        let v = score(&t, Lang::En, None, StopReason::RepeatedCall, &[]);
        assert_eq!(
            v.reasons,
            vec![
                "no final answer (stopped: the same tool call was repeated with the same arguments)".to_string(),
                "did not call calculator (called no tool)".to_string(),
            ]
        );
        let mut none = turn(&[&["Tokyo"]], &[]);
        none.no_tools = true;
        assert!(score(&none, Lang::En, Some("Tokyo."), StopReason::FinalAnswer, &[]).passed);
        let v = score(&none, Lang::En, Some("Tokyo."), StopReason::FinalAnswer, &names(&["local_file_search", "file_reader"]));
        assert_eq!(v.reasons, vec!["called local_file_search, file_reader though the question needs no tool".to_string()]);
    }

    #[test]
    fn an_answer_in_the_other_language_fails() {
        // The tuned and held-out sets' answers, as the 0.5B wrote them.
        for (answer, lang) in [
            ("The calculator shows that after buying 7 boxes of apples and giving 3 boxes to a neighbor, there are 24 - 7 - 3 = 14 apples left.", Some(Lang::En)),
            ("The average工龄 of employees in the data/employee.csv file is 36 years.", Some(Lang::En)),
            ("根据提供的结果，数据/原料采购.csv中列出的采购数量是12个。", Some(Lang::Zh)),
            ("config/feature_flags.json 中的开关是 dark_mode, bulk_booking, calendar_sync, sms_reminders。", Some(Lang::Zh)),
            ("The config/app.yaml 文件被转换为 JSON 格式如下：\n\n```json\n{\"name\": \"the app is in the cloud\"}\n```", Some(Lang::Zh)),
            ("根据提供的数据，Bread品类的营业额最高，为4308元。", Some(Lang::Zh)),
            ("The docs/员工手册/请假制度.md file states that “连续病假超过 2 天，需要提供医院证明。”", None),
            ("The meeting is in 会议室 A.", Some(Lang::En)),
            ("122", None),
        ] {
            assert_eq!(written_in(answer), lang, "{answer}");
        }
        let t = turn(&[&["14"]], &[]);
        let v = score(&t, Lang::Zh, Some("The calculator shows that there are 14 apples left."), StopReason::FinalAnswer, &[]);
        assert_eq!(v.reasons, vec!["answered in English, the conversation is in Chinese".to_string()]);
        assert!(score(&t, Lang::Zh, Some("还剩 14 个苹果。"), StopReason::FinalAnswer, &[]).passed);
        assert!(score(&t, Lang::Zh, Some("14"), StopReason::FinalAnswer, &[]).passed);
        let v = score(&t, Lang::En, Some("还剩 14 个苹果。"), StopReason::FinalAnswer, &[]);
        assert_eq!(v.reasons, vec!["answered in Chinese, the conversation is in English".to_string()]);
    }

    #[test]
    fn the_question_alone_passes_only_when_it_holds_the_answer() {
        assert!(!text_passes(&turn(&[&["122"]], &[]), "What is (17 + 25) * 3 - 4?"));
        assert!(text_passes(&turn(&[&["6"]], &[]), "What is 48 / (2 + 6)?"));
    }
}
