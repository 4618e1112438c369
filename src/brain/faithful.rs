//! Argument values kept as the request wrote them: small models copy an expression from
//! the question but drop its brackets (`(17 + 25) * 3 - 4` becomes `17 + 25 * 3 - 4`,
//! another number). When a string argument is, but for brackets and spaces, a stretch of
//! the user's own text that has brackets, the user's text is put back.

use crate::protocol::ToolCall;

const BRACKETS: [char; 6] = ['(', ')', '[', ']', '（', '）'];

/// Restores dropped brackets in `calls`' string arguments from `question`; returns one line
/// per value changed (`tool: param: old -> new`).
pub fn restore_brackets(calls: &mut [ToolCall], question: &str) -> Vec<String> {
    let mut changed = Vec::new();
    if !question.contains(BRACKETS) {
        return changed;
    }
    for call in calls.iter_mut() {
        for (param, value) in call.args.iter_mut() {
            let Some(text) = value.as_str() else { continue };
            if text.contains(BRACKETS) {
                continue;
            }
            if let Some(original) = source_span(question, text) {
                changed.push(format!("{}: {param}: {text:?} -> {original:?}", call.name));
                *value = serde_json::Value::String(original);
            }
        }
    }
    changed
}

/// The stretch of `question` that reads as `value` when brackets and spaces are ignored on
/// both sides, if it has brackets (and `value` has more than a few characters).
fn source_span(question: &str, value: &str) -> Option<String> {
    let wanted: Vec<char> = value.chars().filter(|c| !c.is_whitespace()).collect();
    if wanted.len() < 3 {
        return None;
    }
    let chars: Vec<char> = question.chars().collect();
    let skip = |c: char| c.is_whitespace() || BRACKETS.contains(&c);
    for start in 0..chars.len() {
        if chars[start] != wanted[0] && !BRACKETS.contains(&chars[start]) {
            continue;
        }
        let (mut i, mut matched) = (start, 0);
        while i < chars.len() && matched < wanted.len() {
            if chars[i] == wanted[matched] {
                matched += 1;
            } else if !skip(chars[i]) {
                break;
            }
            i += 1;
        }
        if matched < wanted.len() {
            continue;
        }
        // Closing brackets right after the match belong to it.
        while i < chars.len() && matches!(chars[i], ')' | ']' | '）') {
            i += 1;
        }
        // The whole expression, not a piece of a longer one.
        let before = chars[..start].iter().rev().find(|c| !c.is_whitespace());
        let after = chars[i..].iter().find(|c| !c.is_whitespace());
        if before.is_some_and(|&c| continues(c)) || after.is_some_and(|&c| continues(c)) {
            continue;
        }
        let span: String = chars[start..i].iter().collect();
        let span = span.trim();
        // Only brackets inside the value were dropped; brackets around all of it are the
        // sentence's ("fly to Tokyo (NRT)"), not the value's.
        let inner = span.trim_start_matches(['(', '[', '（']).trim_end_matches([')', ']', '）']);
        if inner.contains(BRACKETS) && balanced(span) {
            return Some(span.to_string());
        }
    }
    None
}

/// A character that would carry an expression on past the span.
fn continues(c: char) -> bool {
    c.is_ascii_digit() || "+-*/^%×÷=.".contains(c)
}

fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' | '（' => depth += 1,
            ')' | ']' | '）' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(args: serde_json::Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: "calculator".into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn dropped_brackets_come_back_from_the_question() {
        let mut calls = [call(json!({"expression": "17 + 25 * 3 - 4"}))];
        let changed = restore_brackets(&mut calls, "What is (17 + 25) * 3 - 4?");
        assert_eq!(calls[0].args["expression"], "(17 + 25) * 3 - 4");
        assert_eq!(changed, vec![r#"calculator: expression: "17 + 25 * 3 - 4" -> "(17 + 25) * 3 - 4""#]);

        let mut calls = [call(json!({"expression": "125 - 35 / 6 + 2^3"}))];
        restore_brackets(&mut calls, "帮我算一下 (125 - 35) / 6 + 2^3 等于多少？");
        assert_eq!(calls[0].args["expression"], "(125 - 35) / 6 + 2^3");

        let mut calls = [call(json!({"expression": "48/2+4"}))];
        restore_brackets(&mut calls, "What is 48 / (2 + 4)?");
        assert_eq!(calls[0].args["expression"], "48 / (2 + 4)");
    }

    #[test]
    fn values_that_differ_otherwise_or_keep_their_brackets_are_left_alone() {
        for (value, question) in [
            ("17 + 25 * 3", "What is (17 + 25) * 3 - 4?"),
            ("(17 + 25) * 3 - 4", "What is (17 + 25) * 3 - 4?"),
            ("3.14 * 5", "计算 3.14 * 5"),
            ("docs/agent_intro.txt", "读 docs/agent_intro.txt (the intro)"),
            ("ab", "(ab)"),
            ("NRT", "Find flights from Shanghai (PVG) to Tokyo (NRT) on 2025-03-01."),
            ("2 + 4", "What is 48 / (2 + 4)?"),
        ] {
            let mut calls = [call(json!({"expression": value, "n": 3}))];
            let changed = restore_brackets(&mut calls, question);
            assert!(changed.is_empty(), "{value} / {question}: {changed:?}");
            assert_eq!(calls[0].args["expression"], value);
        }
    }
}
