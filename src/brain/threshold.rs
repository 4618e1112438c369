//! A request's numeric condition checked against its tool results.
//!
//! "Check the CPU on host web-03. If it is above 90%, restart the web deployment" is two
//! steps with a test between them. Once the first call's result is in (`cpu_percent: 97.2`),
//! whether the second step is due is arithmetic, not judgement: the 0.5B, asked the request
//! again with the result written in, called `k8s.scale_deployment` with a replica count
//! nobody wrote, and with that dropped it answered that the deployment "needs to be
//! restarted" without restarting it. Where the result says the condition does not hold, a
//! call doing the conditioned action would act against the user's own words.
//!
//! [`holds`] reads one comparison of a number ("above 90%", "under 5", "at least 3", "超过
//! 80%", "低于 10", "90% 以上") and finds the figure it is about among the results' numeric
//! fields: those whose key shares a word with the request (`cpu_percent` for "the CPU"), else
//! for a percentage those whose key says it is one (`usage`, `percent`, `rate`...), else the
//! results' only number. It answers only where every such figure agrees.

use serde_json::Value;

/// How a request compares a figure with its threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Compare {
    Above,
    AtLeast,
    Below,
    AtMost,
}

impl Compare {
    fn test(self, x: f64, threshold: f64) -> bool {
        match self {
            Compare::Above => x > threshold,
            Compare::AtLeast => x >= threshold,
            Compare::Below => x < threshold,
            Compare::AtMost => x <= threshold,
        }
    }
}

/// English comparisons, each a run of whole words before the number.
const WORDS: &[(&str, Compare)] = &[
    ("more than", Compare::Above),
    ("greater than", Compare::Above),
    ("higher than", Compare::Above),
    ("larger than", Compare::Above),
    ("bigger than", Compare::Above),
    ("exceeds", Compare::Above),
    ("exceed", Compare::Above),
    ("above", Compare::Above),
    ("over", Compare::Above),
    ("at least", Compare::AtLeast),
    ("less than", Compare::Below),
    ("lower than", Compare::Below),
    ("fewer than", Compare::Below),
    ("smaller than", Compare::Below),
    ("below", Compare::Below),
    ("under", Compare::Below),
    ("at most", Compare::AtMost),
];

/// Chinese comparisons before the number (longest first where one holds another).
const TERMS: &[(&str, Compare)] = &[
    ("不低于", Compare::AtLeast),
    ("不少于", Compare::AtLeast),
    ("不小于", Compare::AtLeast),
    ("不高于", Compare::AtMost),
    ("不超过", Compare::AtMost),
    ("不大于", Compare::AtMost),
    ("超过", Compare::Above),
    ("高于", Compare::Above),
    ("大于", Compare::Above),
    ("多于", Compare::Above),
    ("低于", Compare::Below),
    ("小于", Compare::Below),
    ("少于", Compare::Below),
    ("不到", Compare::Below),
    ("不足", Compare::Below),
];

/// Chinese comparisons after the number ("90% 以上").
const AFTER: &[(&str, Compare)] = &[("以上", Compare::AtLeast), ("以下", Compare::AtMost)];

/// Signs before the number.
const SIGNS: &[(&str, Compare)] = &[(">=", Compare::AtLeast), ("<=", Compare::AtMost), (">", Compare::Above), ("<", Compare::Below)];

/// Words a key of a percentage has.
const PERCENT_KEYS: &[&str] = &["percent", "pct", "percentage", "usage", "utilization", "util", "ratio", "rate", "load", "share"];

/// One comparison a request makes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Threshold {
    compare: Compare,
    value: f64,
    percent: bool,
}

/// Whether the one numeric condition `question` sets holds on `results` (each call's raw
/// result text): `None` where the question makes no comparison or more than one, no result
/// field is what it compares, or the fields it could be disagree.
pub fn holds(question: &str, results: &[String]) -> Option<bool> {
    let threshold = one_threshold(question)?;
    let mut fields = Vec::new();
    for result in results {
        if let Some(output) = output(result) {
            numeric_fields("", &output, &mut fields);
        }
    }
    let asked: Vec<String> = words(question).collect();
    let named: Vec<f64> = fields.iter().filter(|(key, _)| words(key).any(|k| names(&asked, &k))).map(|(_, x)| *x).collect();
    let percent: Vec<f64> = fields.iter().filter(|(key, _)| words(key).any(|k| PERCENT_KEYS.contains(&k.as_str()))).map(|(_, x)| *x).collect();
    let figures = if !named.is_empty() {
        named
    } else if threshold.percent && !percent.is_empty() {
        percent
    } else if fields.len() == 1 {
        vec![fields[0].1]
    } else {
        return None;
    };
    let verdicts: Vec<bool> = figures.iter().map(|&x| threshold.compare.test(x, threshold.value)).collect();
    let first = *verdicts.first()?;
    verdicts.iter().all(|&v| v == first).then_some(first)
}

/// The question's one comparison of a number; `None` for none or several.
fn one_threshold(question: &str) -> Option<Threshold> {
    let lower = question.to_lowercase();
    let mut found: Vec<(usize, Threshold)> = Vec::new();
    let mut add = |at: usize, threshold: Threshold| {
        if !found.iter().any(|(a, _)| *a == at) {
            found.push((at, threshold));
        }
    };
    // Before the number: a word, a Chinese term or a sign.
    for (at, _) in lower.char_indices() {
        let rest = &lower[at..];
        let starts_word = lower[..at].chars().next_back().is_none_or(|c| !c.is_ascii_alphanumeric());
        let before = WORDS
            .iter()
            .filter(|(w, _)| starts_word && rest.starts_with(w) && rest[w.len()..].chars().next().is_none_or(|c| !c.is_ascii_alphabetic()))
            .chain(TERMS.iter().filter(|(t, _)| rest.starts_with(t) && !shorter_of_a_longer(&lower, at, t)))
            .chain(SIGNS.iter().filter(|(s, _)| rest.starts_with(s) && !(s.len() == 1 && rest[1..].starts_with('='))))
            .next();
        if let Some((word, compare)) = before {
            if let Some((value, percent, _)) = number_at(skip_filler(&rest[word.len()..])) {
                add(at, Threshold { compare: *compare, value, percent });
            }
        }
    }
    // After the number: "90% 以上".
    for (at, c) in lower.char_indices() {
        if !c.is_ascii_digit() || lower[..at].chars().next_back().is_some_and(|p| p.is_ascii_digit() || p == '.') {
            continue;
        }
        if let Some((value, percent, len)) = number_at(&lower[at..]) {
            let after = lower[at + len..].trim_start();
            if let Some((_, compare)) = AFTER.iter().find(|(t, _)| after.starts_with(t)) {
                add(at, Threshold { compare: *compare, value, percent });
            }
        }
    }
    match found.as_slice() {
        [(_, threshold)] => Some(*threshold),
        _ => None,
    }
}

/// Whether the term at `at` is the tail of a longer term there (`超过` in `不超过`).
fn shorter_of_a_longer(text: &str, at: usize, term: &str) -> bool {
    TERMS.iter().any(|(longer, _)| longer.len() > term.len() && longer.ends_with(term) && text[..at + term.len()].ends_with(longer))
}

/// `text` after the blanks, small words and currency signs between a comparison and its
/// number ("is above *the* 90", "more than *about* 5", "more than *$*500").
fn skip_filler(mut text: &str) -> &str {
    loop {
        let trimmed = text.trim_start().trim_start_matches(['$', '¥', '￥', '€', '£']);
        let next = ["than ", "of ", "the ", "about ", "around ", "roughly ", "approximately ", "了"]
            .iter()
            .find_map(|w| trimmed.strip_prefix(w));
        match next {
            Some(rest) => text = rest,
            None => return trimmed,
        }
    }
}

/// The number `text` starts with, whether a percent sign or word follows, and the bytes
/// they take.
fn number_at(text: &str) -> Option<(f64, bool, usize)> {
    let digits = text.char_indices().take_while(|(i, c)| c.is_ascii_digit() || (*c == '.' && *i > 0) || *c == ',').last().map(|(i, c)| i + c.len_utf8())?;
    let written = text[..digits].trim_end_matches(['.', ',']);
    let value: f64 = written.replace(',', "").parse().ok()?;
    let after = &text[written.len()..];
    let spaced = after.trim_start();
    let percent = ["%", "％", "percent", "个百分点"].iter().find(|p| spaced.starts_with(**p));
    let len = match percent {
        Some(p) => text.len() - spaced.len() + p.len(),
        None => written.len(),
    };
    Some((value, percent.is_some(), len))
}

/// A call's output in its raw result text (`{"status": "success", "output": ...}` or any
/// JSON); `None` for a failed call or text that is not JSON.
fn output(result: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(result).ok()?;
    match value.get("status").and_then(Value::as_str) {
        Some("success") => value.get("output").cloned(),
        Some(_) => None,
        None => Some(value),
    }
}

/// Every number in `value` with its key path (`servers.1.cpu_percent`); booleans are not
/// numbers.
fn numeric_fields(path: &str, value: &Value, out: &mut Vec<(String, f64)>) {
    let named = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
    match value {
        Value::Object(map) => map.iter().for_each(|(key, v)| numeric_fields(&named(key), v, out)),
        Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| numeric_fields(&named(&i.to_string()), v, out)),
        Value::Number(n) => out.extend(n.as_f64().map(|x| (path.to_string(), x))),
        _ => {}
    }
}

/// The words of three letters or more of a key path or a question, lower case (keys here
/// are snake case: `cpuPercent` is one word).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 3).map(str::to_lowercase)
}

/// Whether a question word is the key word `key`, or the same word with another ending
/// (both of four letters or more, their first four alike: `temperatures` / `temperature`).
fn names(words: &[String], key: &str) -> bool {
    words.iter().any(|w| w == key || (w.len() >= 4 && key.len() >= 4 && w.get(..4) == key.get(..4)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(output: Value) -> Vec<String> {
        vec![json!({"status": "success", "output": output}).to_string()]
    }

    #[test]
    fn a_comparison_is_read_in_english_chinese_and_signs() {
        let t = |q: &str| one_threshold(q).map(|t| (t.compare, t.value, t.percent));
        assert_eq!(t("If it is above 90%, restart the web deployment."), Some((Compare::Above, 90.0, true)));
        assert_eq!(t("if the balance is less than 1,200.50 send a reminder"), Some((Compare::Below, 1200.5, false)));
        assert_eq!(t("when more than about 5 tickets are open"), Some((Compare::Above, 5.0, false)));
        assert_eq!(t("and if there's more than $500 in it, pay bill BILL-EL-2611 ($131.75)"), Some((Compare::Above, 500.0, false)));
        assert_eq!(t("If usage is at least 80 percent, scale up."), Some((Compare::AtLeast, 80.0, true)));
        assert_eq!(t("如果超过 80%，就扩容到 5 个副本"), Some((Compare::Above, 80.0, true)));
        assert_eq!(t("要是内存不超过90％就不用管"), Some((Compare::AtMost, 90.0, true)));
        assert_eq!(t("如果磁盘使用率在 90% 以上，清理日志"), Some((Compare::AtLeast, 90.0, true)));
        assert_eq!(t("if cpu >= 75 restart it"), Some((Compare::AtLeast, 75.0, false)));
        // None, or two: nothing to go by.
        assert_eq!(t("Restart the web deployment if it is down."), None);
        assert_eq!(t("If it is above 90% or under 10%, alert me."), None);
        // A word inside another is no comparison ("moreover 5", "discover 3").
        assert_eq!(t("Moreover 5 items, discover 3 more."), None);
    }

    #[test]
    fn the_figure_is_the_field_the_request_names_else_a_percentage_else_the_only_one() {
        let cpu = result(json!({"host": "web-03", "cpu_percent": 97.2, "window_minutes": 5}));
        assert_eq!(holds("Check the CPU on host web-03. If it is above 90%, restart the web deployment.", &cpu), Some(true));
        assert_eq!(holds("Check the CPU on host web-03. If it is above 98%, restart the web deployment.", &cpu), Some(false));
        // In Chinese the key is found as a percentage.
        assert_eq!(holds("查一下 web-03 的负载，如果超过 90% 就重启", &result(json!({"load_percent": 42.0, "window_minutes": 5}))), Some(false));
        // The only number.
        assert_eq!(holds("Get my balance; if it is under 100, transfer 200 from savings.", &result(json!({"account": "chk-1", "balance": 80.5}))), Some(true));
        // Two figures that could be it and disagree, or none: not known.
        let two = result(json!({"cpu_percent": 95.0, "memory_percent": 40.0}));
        assert_eq!(holds("如果超过 90% 就重启", &two), None);
        assert_eq!(holds("If it is above 90%, restart it.", &result(json!({"status_text": "ok"}))), None);
        // A failed call tells nothing.
        assert_eq!(holds("If it is above 90%, restart it.", &[r#"{"status":"error","error":"no such host"}"#.to_string()]), None);
        // No comparison: nothing to check.
        assert_eq!(holds("Restart it if it is down.", &cpu), None);
    }
}
