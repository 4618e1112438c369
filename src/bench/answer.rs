//! Scoring a final answer: the decision after tool results, when those results already
//! answer the request, is an answer with no call whose text states the facts they hold.
//!
//! The expectation is a list of groups of alternatives (`[["22", "22.0"], ["sunny",
//! "晴"]]`): every group must be met by one of its alternatives. Both texts are compared
//! after Unicode lower-casing, full-width forms read as ASCII (`２２`, `，`), runs of white
//! space as one space, and thousands separators dropped (`1,234.5` is `1234.5`).
//!
//! - An alternative that is a number (`22`, `-3.5`, `1,234.5`) is met by a number in the
//!   answer of the same value: `22` by `22.0` or `22°C`, never by `122` or `22.5`.
//! - Any other alternative is met where it occurs in the answer, and where it begins or
//!   ends with an ASCII letter or digit, it must not run on into one there (`rain` is not
//!   met by `training`, `CA98` not by `CA981`); Chinese text has no such boundary.
//!
//! The cases choose facts that only the tool results hold, so an answer that restates the
//! question fails.

use serde_json::Value;

use crate::protocol::json_kind;

/// What a right final answer must contain.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalAnswer {
    /// Each group: alternatives, one of which the answer must contain.
    pub must_contain: Vec<Vec<String>>,
    /// A right answer as its author wrote it (the corpus tests check that it scores
    /// correct); scoring does not use it.
    pub example: Option<String>,
}

const KEYS: [&str; 2] = ["must_contain", "example"];

impl FinalAnswer {
    /// Reads `{"must_contain": [["22", "22.0"], ["sunny", "晴"]], "example"?: "..."}`.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let Value::Object(obj) = value else {
            return Err(format!("final_answer: must be an object, found {}", json_kind(value)));
        };
        if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("final_answer: unknown key {key:?} (known: {})", KEYS.join(", ")));
        }
        let groups = match obj.get("must_contain") {
            Some(Value::Array(groups)) if !groups.is_empty() => groups,
            Some(Value::Array(_)) => return Err("final_answer.must_contain: is empty".into()),
            Some(other) => return Err(format!("final_answer.must_contain: must be a list of lists of texts, found {}", json_kind(other))),
            None => return Err("final_answer: missing \"must_contain\"".into()),
        };
        let must_contain = groups
            .iter()
            .enumerate()
            .map(|(i, group)| {
                let at = format!("final_answer.must_contain[{i}]");
                let Value::Array(alternatives) = group else {
                    return Err(format!("{at}: must be a list of alternative texts, found {}", json_kind(group)));
                };
                if alternatives.is_empty() {
                    return Err(format!("{at}: is empty"));
                }
                alternatives
                    .iter()
                    .enumerate()
                    .map(|(j, alt)| match alt {
                        Value::String(text) if !text.trim().is_empty() => Ok(text.clone()),
                        Value::String(_) => Err(format!("{at}[{j}]: is blank")),
                        other => Err(format!("{at}[{j}]: must be a text, found {}", json_kind(other))),
                    })
                    .collect()
            })
            .collect::<Result<Vec<Vec<String>>, String>>()?;
        let example = match obj.get("example") {
            None => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => return Err(format!("final_answer.example: must be a text, found {}", json_kind(other))),
        };
        Ok(FinalAnswer { must_contain, example })
    }

    pub fn to_json(&self) -> Value {
        let mut obj = serde_json::Map::new();
        obj.insert("must_contain".into(), Value::from(self.must_contain.clone()));
        if let Some(example) = &self.example {
            obj.insert("example".into(), Value::from(example.clone()));
        }
        Value::Object(obj)
    }

    /// `Ok` when `content` meets every group, else which groups it misses.
    pub fn check(&self, content: &str) -> Result<(), String> {
        if content.trim().is_empty() {
            return Err("expected a final answer, got an empty one".into());
        }
        let text = normalize(content);
        let numbers = numbers_in(&text);
        let missing: Vec<String> = self
            .must_contain
            .iter()
            .filter(|group| !group.iter().any(|alt| meets(&text, &numbers, alt)))
            .map(|group| group.join(" or "))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("the answer lacks {}", missing.join("; ")))
        }
    }
}

/// Whether the normalized answer `text` (with its `numbers`) meets one alternative.
fn meets(text: &str, numbers: &[f64], alternative: &str) -> bool {
    let alternative = normalize(alternative);
    if let Some(value) = as_number(&alternative) {
        return numbers.contains(&value);
    }
    contains_bounded(text, &alternative)
}

/// Lower case, full-width forms as ASCII, white space runs as one space, no thousands
/// separators.
pub fn normalize(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = match c {
            '\u{3000}' => ' ',
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{2212}' => '-',
            other => other,
        };
        if c.is_whitespace() {
            if !spaced.ends_with(' ') && !spaced.is_empty() {
                spaced.push(' ');
            }
        } else {
            spaced.push(c);
        }
    }
    let chars: Vec<char> = spaced.trim_end().chars().collect();
    let digit = |i: usize| chars.get(i).is_some_and(char::is_ascii_digit);
    // A comma between a digit and exactly three digits groups thousands.
    chars
        .iter()
        .enumerate()
        .filter(|&(i, c)| !(*c == ',' && i > 0 && digit(i - 1) && digit(i + 1) && digit(i + 2) && digit(i + 3) && !digit(i + 4)))
        .map(|(_, c)| *c)
        .collect()
}

/// The value of a text that is one number and nothing else (`-3.5`, `22`).
fn as_number(text: &str) -> Option<f64> {
    let numbers = numbers_in(text);
    let whole = text.trim_start_matches(['-', '+']);
    let is_plain = !whole.is_empty() && whole.chars().all(|c| c.is_ascii_digit() || c == '.') && whole.matches('.').count() <= 1;
    match numbers.as_slice() {
        [value] if is_plain => Some(*value),
        _ => None,
    }
}

/// The numbers written in a normalized text: digits with an optional fraction, and a
/// leading `-` as their sign where it does not join two words (`2025-03-08` holds 2025,
/// 3 and 8).
fn numbers_in(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            i += 1;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
        }
        let negative = start > 0
            && chars[start - 1] == '-'
            && !(start > 1 && chars[start - 2].is_ascii_alphanumeric());
        let digits: String = chars[start..i].iter().collect();
        if let Ok(value) = digits.parse::<f64>() {
            numbers.push(if negative { -value } else { value });
        }
    }
    numbers
}

/// `needle` occurs in `haystack` without running on into an ASCII word at an ASCII end.
fn contains_bounded(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let first_is_word = word(needle.chars().next());
    let last_is_word = word(needle.chars().next_back());
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack.get(..at).and_then(|s| s.chars().next_back());
        let after = haystack.get(at + needle.len()..).and_then(|s| s.chars().next());
        let runs_on = (first_is_word && word(before)) || (last_is_word && word(after));
        !runs_on
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn want(groups: Value) -> FinalAnswer {
        FinalAnswer::from_value(&json!({"must_contain": groups})).unwrap()
    }

    #[test]
    fn every_group_must_be_met_by_one_of_its_alternatives() {
        let expected = want(json!([["22", "22.0"], ["sunny", "晴"]]));
        assert_eq!(expected.check("It is sunny in Beijing, 22 °C."), Ok(()));
        assert_eq!(expected.check("北京今天晴，气温22度。"), Ok(()));
        assert_eq!(expected.check("Sunny, 22.0°C"), Ok(()));
        assert_eq!(expected.check("It is sunny."), Err("the answer lacks 22 or 22.0".into()));
        assert_eq!(expected.check("Cloudy, 18 °C."), Err("the answer lacks 22 or 22.0; sunny or 晴".into()));
        assert_eq!(expected.check("  "), Err("expected a final answer, got an empty one".into()));
    }

    #[test]
    fn numbers_match_by_value_not_by_digits() {
        let expected = want(json!([["22"]]));
        for right in ["22", "22.0 degrees", "气温２２℃", "about 22.", "at 22:00"] {
            assert_eq!(expected.check(right), Ok(()), "{right}");
        }
        for wrong in ["122", "22.5", "2.2", "220", "-22"] {
            assert!(expected.check(wrong).is_err(), "{wrong}");
        }
        let negative = want(json!([["-5"]]));
        assert_eq!(negative.check("Low of −5 °C"), Ok(()));
        assert_eq!(negative.check("low of -5"), Ok(()));
        assert!(negative.check("2025-03-05").is_err(), "a date's hyphen is no minus sign");
    }

    #[test]
    fn thousands_separators_and_full_width_forms_are_read_as_plain_digits() {
        let expected = want(json!([["1234.5"], ["$2,000,000"]]));
        assert_eq!(expected.check("Total: 1,234.5 USD, budget $2000000"), Ok(()));
        assert_eq!(expected.check("共 １，２３４.５ 元，预算 $2,000,000"), Ok(()));
        let listed = want(json!([["1,2"]]));
        assert!(listed.check("values 1.2 and 3").is_err(), "1,2 is not a thousands group: a text alternative");
        assert_eq!(listed.check("values 1,2 and 3"), Ok(()));
    }

    #[test]
    fn text_alternatives_do_not_match_inside_a_longer_word() {
        let expected = want(json!([["rain"], ["CA98"]]));
        assert!(expected.check("training on CA98").is_err());
        assert!(expected.check("rain on CA981").is_err());
        assert_eq!(expected.check("Rain (flight CA98)."), Ok(()));
        let chinese = want(json!([["小雨"]]));
        assert_eq!(chinese.check("明天有小雨。"), Ok(()));
    }

    #[test]
    fn restating_the_question_does_not_pass_when_the_facts_come_from_the_results() {
        // Question: weather in Beijing and Shanghai; results: 22 °C sunny, 18 °C light rain.
        let expected = want(json!([["22"], ["18"], ["sunny", "晴"], ["rain", "雨"]]));
        let restated = "北京和上海现在的天气怎么样？What's the weather in Beijing and Shanghai?";
        assert_eq!(expected.check(restated), Err("the answer lacks 22; 18; sunny or 晴; rain or 雨".into()));
        // Using only the first of the two results is wrong too.
        assert_eq!(expected.check("北京晴，22°C。"), Err("the answer lacks 18; rain or 雨".into()));
        assert_eq!(expected.check("北京晴，22°C；上海小雨，18°C。"), Ok(()));
    }

    #[test]
    fn the_format_is_read_and_written_back_and_bad_input_is_named() {
        let value = json!({"must_contain": [["22", "22.0"], ["晴"]], "example": "晴，22°C"});
        let expected = FinalAnswer::from_value(&value).unwrap();
        assert_eq!(expected.must_contain, vec![vec!["22".to_string(), "22.0".to_string()], vec!["晴".to_string()]]);
        assert_eq!(expected.to_json(), value);
        let err = |v: Value| FinalAnswer::from_value(&v).unwrap_err();
        assert_eq!(err(json!("22")), "final_answer: must be an object, found a string");
        assert_eq!(err(json!({})), "final_answer: missing \"must_contain\"");
        assert_eq!(err(json!({"must_contain": []})), "final_answer.must_contain: is empty");
        assert_eq!(err(json!({"must_contain": ["22"]})), "final_answer.must_contain[0]: must be a list of alternative texts, found a string");
        assert_eq!(err(json!({"must_contain": [[]]})), "final_answer.must_contain[0]: is empty");
        assert_eq!(err(json!({"must_contain": [["a", 22]]})), "final_answer.must_contain[0][1]: must be a text, found a number");
        assert_eq!(err(json!({"must_contain": [[" "]]})), "final_answer.must_contain[0][0]: is blank");
        assert_eq!(err(json!({"must_contain": [["a"]], "contains": 1})), "final_answer: unknown key \"contains\" (known: must_contain, example)");
    }
}
