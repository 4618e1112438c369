//! Correctness, checked the way the Berkeley Function Calling Leaderboard's AST checker
//! does: the right function names, the right number of calls (matched one to one in any
//! order), the arguments within the tool's schema, no params the tool does not have, and
//! each checked value equal to one of the accepted values.
//!
//! The schema check is the tool layer's own ([`crate::tools::spec`]): a call scores only if
//! the agent would run it. So an integer is any number without a fraction (`3.0` fits
//! `integer`, unlike BFCL, whose Python checker sees a float; see the spec module), and
//! enums, bounds and nested required keys are checked too. As in BFCL, a param the tool
//! does not have fails even where the schema does not close its object.
//!
//! Value equality: numbers compare by value, so an int is accepted for a float (`5` for
//! `5.0`); strings compare after trimming and Unicode lower-casing, with no punctuation
//! stripped (unlike BFCL, which drops `,./-_*^` and spaces: paths and expressions are
//! meaningful here, so the cases list their spelling variants instead); lists compare
//! element by element; an accepted object is a nested spec `{key: [accepted values]}` as
//! in BFCL (`""` marks an optional key, unknown keys fail). A param of the tool that the
//! expected call does not list is not checked (BFCL instead rejects it; its answers list
//! every param).
//!
//! A final answer expected after tool results is no call and an answer that states the
//! expected facts, checked in [`super::answer`].

use serde_json::Value;

use super::case::{Expected, ExpectedCall};
use crate::protocol::ToolCall;
use crate::tools::spec::{self, shown, ToolSpec};

/// `Ok` when the decision (its calls, and its answer `content`) is the expected one, else
/// why not.
pub fn score(expected: &Expected, calls: &[ToolCall], content: &str, tools: &[Value]) -> Result<(), String> {
    let got = || names(calls.iter().map(|c| c.name.as_str()));
    let expected = match expected {
        Expected::NoToolCall if calls.is_empty() => return Ok(()),
        Expected::NoToolCall => return Err(format!("expected no tool call, got {}: {}", calls.len(), got())),
        Expected::FinalAnswer(answer) if calls.is_empty() => return answer.check(content),
        Expected::FinalAnswer(_) => return Err(format!("expected a final answer, got {}: {}", plural(calls.len()), got())),
        Expected::ToolCalls(expected) => expected,
    };
    let want = names(expected.iter().map(|c| c.name.as_str()));
    if calls.is_empty() {
        return Err(format!("expected {} ({want}), got a final answer", plural(expected.len())));
    }
    if calls.len() != expected.len() {
        let got = names(calls.iter().map(|c| c.name.as_str()));
        return Err(format!("expected {} ({want}), got {} ({got})", plural(expected.len()), calls.len()));
    }
    let mut want_sorted: Vec<&str> = expected.iter().map(|c| c.name.as_str()).collect();
    let mut got_sorted: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    want_sorted.sort_unstable();
    got_sorted.sort_unstable();
    if want_sorted != got_sorted {
        return Err(format!("expected calls to {}, got {}", names(want_sorted.into_iter()), names(got_sorted.into_iter())));
    }
    let specs = ToolSpec::parse_all(tools).map_err(|e| format!("tools schema: {e}"))?;
    let checks: Vec<Vec<Result<(), String>>> =
        expected.iter().map(|e| calls.iter().map(|c| check_call(e, c, spec::find(&specs, &c.name))).collect()).collect();
    let ok: Vec<Vec<bool>> = checks.iter().map(|row| row.iter().map(Result::is_ok).collect()).collect();
    let assignment = max_matching(&ok, calls.len());
    let mut reasons = Vec::new();
    for (i, assigned) in assignment.iter().enumerate() {
        if assigned.is_some() {
            continue;
        }
        // Explain with the first same-named call left unassigned (else any same-named one).
        let taken: Vec<usize> = assignment.iter().flatten().copied().collect();
        let same_name = |j: &usize| calls.get(*j).is_some_and(|c| expected.get(i).is_some_and(|e| e.name == c.name));
        let j = (0..calls.len()).filter(same_name).find(|j| !taken.contains(j)).or_else(|| (0..calls.len()).find(same_name));
        if let Some(Err(reason)) = j.and_then(|j| checks.get(i).and_then(|row| row.get(j))) {
            reasons.push(reason.clone());
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons.join("; "))
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 call".into()
    } else {
        format!("{n} calls")
    }
}

fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    format!("[{}]", names.collect::<Vec<_>>().join(", "))
}

/// For each expected call, the call assigned to it in a maximum one-to-one matching
/// (augmenting paths; calls are few).
fn max_matching(ok: &[Vec<bool>], n_calls: usize) -> Vec<Option<usize>> {
    fn augment(i: usize, ok: &[Vec<bool>], seen: &mut [bool], owner: &mut [Option<usize>]) -> bool {
        for j in 0..seen.len() {
            let fits = ok.get(i).and_then(|row| row.get(j)).copied().unwrap_or(false);
            match seen.get_mut(j) {
                Some(seen_j) if fits && !*seen_j => *seen_j = true,
                _ => continue,
            }
            let free = match owner.get(j).copied().flatten() {
                None => true,
                Some(other) => augment(other, ok, seen, owner),
            };
            if let Some(slot) = owner.get_mut(j).filter(|_| free) {
                *slot = Some(i);
                return true;
            }
        }
        false
    }
    let mut owner: Vec<Option<usize>> = vec![None; n_calls];
    for i in 0..ok.len() {
        augment(i, ok, &mut vec![false; n_calls], &mut owner);
    }
    let mut assignment = vec![None; ok.len()];
    for (j, i) in owner.iter().enumerate() {
        if let Some(slot) = i.and_then(|i| assignment.get_mut(i)) {
            *slot = Some(j);
        }
    }
    assignment
}

/// One call against one expected call; `spec` is the tool's when known.
pub fn check_call(expected: &ExpectedCall, call: &ToolCall, spec: Option<&ToolSpec>) -> Result<(), String> {
    let name = &call.name;
    if *name != expected.name {
        return Err(format!("expected a call to {}, got {name}", expected.name));
    }
    if let Some(spec) = spec {
        let mut args = spec.args.clone();
        args.closed = true;
        args.check(&Value::Object(call.args.clone())).map_err(|m| format!("{name}: {}", m.describe("param")))?;
    }
    for (param, accepted) in &expected.args {
        match call.args.get(param) {
            Some(value) if accepted.iter().any(|a| value_matches(value, a)) => {}
            Some(value) => {
                return Err(format!("{name}: param '{param}': got {}, expected one of {}", shown(value), shown(&Value::from(accepted.clone()))));
            }
            None if accepted.iter().any(is_optional_marker) => {}
            None => return Err(format!("{name}: missing param '{param}' (expected one of {})", shown(&Value::from(accepted.clone())))),
        }
    }
    Ok(())
}

fn is_optional_marker(value: &Value) -> bool {
    value.as_str() == Some("")
}

/// Whether `given` equals the accepted value `accepted` under the rules above.
pub fn value_matches(given: &Value, accepted: &Value) -> bool {
    match (given, accepted) {
        (Value::Object(given), Value::Object(spec)) => {
            given.keys().all(|k| spec.contains_key(k))
                && spec.iter().all(|(key, accepted)| {
                    let options: &[Value] = match accepted {
                        Value::Array(options) => options,
                        single => std::slice::from_ref(single),
                    };
                    match given.get(key) {
                        Some(value) => options.iter().any(|a| value_matches(value, a)),
                        None => options.iter().any(is_optional_marker),
                    }
                })
        }
        (Value::Array(given), Value::Array(accepted)) => {
            given.len() == accepted.len() && given.iter().zip(accepted).all(|(g, a)| value_matches(g, a))
        }
        (Value::String(given), Value::String(accepted)) => normalize(given) == normalize(accepted),
        (Value::Number(given), Value::Number(accepted)) => match (given.as_i64(), accepted.as_i64()) {
            (Some(g), Some(a)) => g == a,
            _ => given.as_f64().zip(accepted.as_f64()).is_some_and(|(g, a)| g == a),
        },
        (Value::Bool(given), Value::Bool(accepted)) => given == accepted,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

fn normalize(text: &str) -> String {
    text.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall { id: String::new(), name: name.into(), args: args.as_object().cloned().unwrap_or_default() }
    }

    fn want(name: &str, args: Value) -> ExpectedCall {
        let args: BTreeMap<String, Vec<Value>> = serde_json::from_value(args).unwrap();
        ExpectedCall { name: name.into(), args }
    }

    fn tools() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "calculator", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}),
            json!({"type": "function", "function": {"name": "file_reader", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "max_chars": {"type": "integer"}}, "required": ["path"]}}}),
            json!({"type": "function", "function": {"name": "area", "parameters": {"type": "dict", "properties": {
                "base": {"type": "float"}, "height": {"type": "float"}, "unit": {"type": "string"},
                "points": {"type": "list", "items": {"type": "int"}},
                "options": {"type": "dict", "properties": {"round": {"type": "boolean"}, "label": {"type": "string"}}}
            }, "required": ["base"]}}}),
        ]
    }

    fn one(expected: ExpectedCall, given: ToolCall) -> Result<(), String> {
        score(&Expected::ToolCalls(vec![expected]), &[given], "", &tools())
    }

    #[test]
    fn the_right_call_is_correct() {
        assert_eq!(one(want("calculator", json!({"expression": ["2 + 2"]})), call("calculator", json!({"expression": "2 + 2"}))), Ok(()));
    }

    #[test]
    fn a_wrong_function_name_fails() {
        let got = one(want("calculator", json!({})), call("file_reader", json!({"path": "a.txt"})));
        assert_eq!(got, Err("expected calls to [calculator], got [file_reader]".into()));
    }

    #[test]
    fn the_number_of_calls_must_match() {
        let expected = Expected::ToolCalls(vec![want("calculator", json!({})), want("file_reader", json!({}))]);
        let got = score(&expected, &[call("calculator", json!({"expression": "1"}))], "", &tools());
        assert_eq!(got, Err("expected 2 calls ([calculator, file_reader]), got 1 ([calculator])".into()));
        let got = score(&expected, &[], "", &tools());
        assert_eq!(got, Err("expected 2 calls ([calculator, file_reader]), got a final answer".into()));
    }

    #[test]
    fn parallel_calls_match_in_any_order_one_to_one() {
        let expected = Expected::ToolCalls(vec![
            want("file_reader", json!({"path": ["a.txt", "b.txt"]})),
            want("calculator", json!({"expression": ["1+1"]})),
            want("file_reader", json!({"path": ["b.txt"]})),
        ]);
        // Greedy pairing would give b.txt (the first call that fits) to the first expected
        // call and leave none for the last; the one-to-one assignment finds the pairing.
        let calls = [
            call("calculator", json!({"expression": "1+1"})),
            call("file_reader", json!({"path": "b.txt"})),
            call("file_reader", json!({"path": "a.txt"})),
        ];
        assert_eq!(score(&expected, &calls, "", &tools()), Ok(()));
        // Two calls to a.txt: the expected call that needs b.txt is left without one.
        let calls = [
            call("calculator", json!({"expression": "1+1"})),
            call("file_reader", json!({"path": "a.txt"})),
            call("file_reader", json!({"path": "a.txt"})),
        ];
        assert_eq!(score(&expected, &calls, "", &tools()), Err("file_reader: param 'path': got \"a.txt\", expected one of [\"b.txt\"]".into()));
    }

    #[test]
    fn required_params_must_be_present() {
        let got = one(want("file_reader", json!({})), call("file_reader", json!({"max_chars": 10})));
        assert_eq!(got, Err("file_reader: missing required param 'path'".into()));
    }

    #[test]
    fn params_the_tool_does_not_have_fail() {
        let got = one(want("calculator", json!({})), call("calculator", json!({"expression": "1", "precision": 2})));
        assert_eq!(got, Err("calculator: unknown param 'precision' (known: expression)".into()));
    }

    #[test]
    fn params_not_listed_in_the_expected_call_are_not_checked() {
        let got = one(want("file_reader", json!({"path": ["a.txt"]})), call("file_reader", json!({"path": "a.txt", "max_chars": 2000})));
        assert_eq!(got, Ok(()));
    }

    #[test]
    fn an_int_is_accepted_for_a_float_and_a_whole_float_for_an_int() {
        assert_eq!(one(want("area", json!({"base": [5.0]})), call("area", json!({"base": 5}))), Ok(()));
        assert_eq!(one(want("area", json!({"base": [5.5]})), call("area", json!({"base": 5}))), Err("area: param 'base': got 5, expected one of [5.5]".into()));
        assert_eq!(one(want("area", json!({"base": [5.0], "points": [[1, 2]]})), call("area", json!({"base": 5, "points": [1, 2.0]}))), Ok(()));
        assert_eq!(
            one(want("area", json!({"base": [5.0]})), call("area", json!({"base": 5, "points": [1, 2.5]}))),
            Err("area: param 'points[1]' must be integer, got 2.5".into())
        );
        assert_eq!(
            one(want("file_reader", json!({})), call("file_reader", json!({"path": "a", "max_chars": 10.5}))),
            Err("file_reader: param 'max_chars' must be integer, got 10.5".into())
        );
        assert_eq!(one(want("area", json!({})), call("area", json!({"base": "5"}))), Err("area: param 'base' must be number, got \"5\"".into()));
    }

    /// What the tool layer would run is what scores as within the schema, and the other way
    /// round: one reading of the schema for both.
    #[test]
    fn scoring_and_validation_agree_on_the_schema() {
        let parameters = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1}, "x": {"type": "number"}, "unit": {"type": "string", "enum": ["m", "km"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}, "required": ["deep"]}
        }, "required": ["n"], "additionalProperties": false});
        let tools = [json!({"type": "function", "function": {"name": "f", "parameters": parameters}})];
        let spec = ToolSpec::parse(&tools[0], 0).unwrap();
        let argument_sets = [
            json!({"n": 3}),
            json!({"n": 3.0}),
            json!({"n": 3.5}),
            json!({"n": "3"}),
            json!({"n": 0}),
            json!({"n": 1, "x": 2}),
            json!({"n": 1, "x": "2"}),
            json!({"n": 1, "unit": "km"}),
            json!({"n": 1, "unit": "公里"}),
            json!({"n": 1, "tags": ["a", "b"]}),
            json!({"n": 1, "tags": ["a", 2]}),
            json!({"n": 1, "opts": {"deep": true}}),
            json!({"n": 1, "opts": {}}),
            json!({"x": 1.5}),
            json!({"n": 1, "extra": true}),
        ];
        let mut refused = 0;
        for args in argument_sets {
            let call = call("f", args.clone());
            let validated = crate::tools::validate::validate_args(&spec, &call.args);
            let scored = score(&Expected::ToolCalls(vec![want("f", json!({}))]), &[call], "", &tools);
            assert_eq!(validated.is_ok(), scored.is_ok(), "{args}: validation {validated:?}, scoring {scored:?}");
            refused += usize::from(scored.is_err());
        }
        assert_eq!(refused, 9);
    }

    #[test]
    fn strings_compare_trimmed_and_case_folded_but_keep_punctuation() {
        let expected = || want("area", json!({"base": [1], "unit": ["Square Meters", "平方米"]}));
        assert_eq!(one(expected(), call("area", json!({"base": 1, "unit": "  square METERS "}))), Ok(()));
        assert_eq!(one(expected(), call("area", json!({"base": 1, "unit": "平方米"}))), Ok(()));
        assert_eq!(
            one(expected(), call("area", json!({"base": 1, "unit": "square-meters"}))),
            Err("area: param 'unit': got \"square-meters\", expected one of [\"Square Meters\",\"平方米\"]".into())
        );
    }

    #[test]
    fn lists_compare_element_by_element_in_order() {
        let expected = || want("area", json!({"base": [1], "points": [[1, 2, 3]]}));
        assert_eq!(one(expected(), call("area", json!({"base": 1, "points": [1, 2, 3]}))), Ok(()));
        assert!(one(expected(), call("area", json!({"base": 1, "points": [3, 2, 1]}))).is_err());
        assert!(one(expected(), call("area", json!({"base": 1, "points": [1, 2]}))).is_err());
        assert!(value_matches(&json!(["A ", "b"]), &json!(["a", "B"])));
    }

    #[test]
    fn nested_objects_compare_key_by_key_with_accepted_values() {
        let expected = || want("area", json!({"base": [1], "options": [{"round": [true], "label": ["Big", ""]}]}));
        assert_eq!(one(expected(), call("area", json!({"base": 1, "options": {"round": true, "label": "big"}}))), Ok(()));
        assert_eq!(one(expected(), call("area", json!({"base": 1, "options": {"round": true}}))), Ok(()), "label is optional");
        assert!(one(expected(), call("area", json!({"base": 1, "options": {"label": "big"}}))).is_err(), "round is not optional");
        assert!(one(expected(), call("area", json!({"base": 1, "options": {"round": false}}))).is_err());
        assert!(one(expected(), call("area", json!({"base": 1, "options": {"round": true, "color": "red"}}))).is_err(), "unknown key");
        assert_eq!(
            one(want("area", json!({"base": [1], "options": [{}]})), call("area", json!({"base": 1, "options": {"round": "yes"}}))),
            Err("area: param 'options.round' must be boolean, got \"yes\"".into())
        );
    }

    #[test]
    fn an_empty_string_among_accepted_values_makes_a_param_optional() {
        let expected = || want("area", json!({"base": [2], "unit": ["m", ""]}));
        assert_eq!(one(expected(), call("area", json!({"base": 2}))), Ok(()));
        assert_eq!(one(expected(), call("area", json!({"base": 2, "unit": "m"}))), Ok(()));
        assert_eq!(
            one(want("area", json!({"base": [2], "unit": ["m"]})), call("area", json!({"base": 2}))),
            Err("area: missing param 'unit' (expected one of [\"m\"])".into())
        );
    }

    #[test]
    fn irrelevance_is_correct_only_without_calls() {
        assert_eq!(score(&Expected::NoToolCall, &[], "", &tools()), Ok(()));
        let got = score(&Expected::NoToolCall, &[call("calculator", json!({"expression": "1"})), call("file_reader", json!({"path": "x"}))], "", &tools());
        assert_eq!(got, Err("expected no tool call, got 2: [calculator, file_reader]".into()));
    }

    #[test]
    fn a_final_answer_needs_no_call_and_the_facts_of_the_results() {
        let groups = json!({"must_contain": [["42"], ["done", "完成"]]});
        let expected = Expected::FinalAnswer(crate::bench::answer::FinalAnswer::from_value(&groups).unwrap());
        assert_eq!(score(&expected, &[], "Job finished: done, 42 rows.", &tools()), Ok(()));
        assert_eq!(score(&expected, &[], "任务完成，共 42 行。", &tools()), Ok(()));
        assert_eq!(score(&expected, &[], "Job finished.", &tools()), Err("the answer lacks 42; done or 完成".into()));
        // The facts in the content do not make up for a call.
        let got = score(&expected, &[call("calculator", json!({"expression": "41 + 1"}))], "done, 42", &tools());
        assert_eq!(got, Err("expected a final answer, got 1 call: [calculator]".into()));
    }

    #[test]
    fn a_tool_missing_from_the_schema_is_checked_on_values_only() {
        let got = one(want("weather", json!({"city": ["Paris"]})), call("weather", json!({"city": "paris", "days": 3})));
        assert_eq!(got, Ok(()));
    }

    #[test]
    fn a_long_expected_list_is_cut_on_a_char_boundary() {
        let accepted: Vec<Value> = (0..60).map(|i| json!(format!("表达式{i}"))).collect();
        let expected = ExpectedCall { name: "calculator".into(), args: BTreeMap::from([("expression".into(), accepted)]) };
        let err = one(expected, call("calculator", json!({"expression": "x"}))).unwrap_err();
        assert!(err.ends_with("...") && err.chars().count() < 260, "{err}");
    }
}
