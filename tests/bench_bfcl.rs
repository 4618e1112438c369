//! `b4 bench --bfcl` on Berkeley Function Calling Leaderboard-format fixtures (JSON lines,
//! `"type": "dict"` and Python type names, ground truth with accepted values), run on
//! the mock brain.
//!
//! What the mock does with each question (it calls the tools its cues name and ignores
//! the offered tools): simple_0 correct; simple_1 wrong ("find" sends it to
//! local_file_search); simple_2 wrong (it adds max_chars, which that file_reader lacks);
//! multiple_0 and multiple_1 correct; parallel_0 correct (two file_reader calls, answers
//! listed in the other order); parallel_multiple_0 correct; both irrelevance questions
//! wrong (the mock always calls something). After tool results it answers with the first
//! sentence of each result's `output.content` (see the multi_turn fixture below).

use std::path::{Path, PathBuf};
use std::process::Command;

use b4_agent::bench::{bfcl, BenchCase};
use b4_agent::tools::spec::{self, Schema, ToolSpec};
use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    repo().join("tests/fixtures").join(name).display().to_string()
}

fn bench(dir: &Path, extra: &[&str]) -> Value {
    let config = repo().join("configs/model.yaml").display().to_string();
    let mut args = vec!["bench".to_string(), "--model_config".into(), config, "--mode".into(), "mock".into(), "--outdir".into(), "out".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = Command::new(env!("CARGO_BIN_EXE_b4")).current_dir(dir).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap()).unwrap()
}

#[test]
fn bfcl_questions_and_answers_are_scored_per_category() {
    let dir = tempfile::tempdir().unwrap();
    let (questions, answers) = (fixture("bfcl/questions.json"), fixture("bfcl/answers.json"));
    let report = bench(dir.path(), &["--bfcl", &questions, "--bfcl-answers", &answers]);

    let setting = &report["settings"][0];
    let overall = &setting["overall"];
    assert_eq!((&overall["decisions"], &overall["valid"], &overall["scored"], &overall["correct"]), (&json!(9), &json!(9), &json!(9), &json!(5)));
    let by_category: Vec<(String, u64, u64)> = setting["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["category"].as_str().unwrap().to_string(), c["stats"]["correct"].as_u64().unwrap(), c["stats"]["scored"].as_u64().unwrap()))
        .collect();
    let want = [("simple", 1, 3), ("multiple", 2, 2), ("parallel", 1, 1), ("parallel_multiple", 1, 1), ("irrelevance", 0, 2)];
    assert_eq!(by_category, want.map(|(c, k, n)| (c.to_string(), k, n)).to_vec());

    let reasons: Vec<(String, Value)> =
        report["records"].as_array().unwrap().iter().map(|r| (r["case"].as_str().unwrap().to_string(), r["reason"].clone())).collect();
    let want = [
        ("simple_0", Value::Null),
        ("simple_1", json!("expected calls to [math.factorial], got [local_file_search]")),
        ("simple_2", json!("file_reader: unknown param 'max_chars' (known: path)")),
        ("multiple_0", Value::Null),
        ("multiple_1", Value::Null),
        ("parallel_0", Value::Null),
        ("parallel_multiple_0", Value::Null),
        ("irrelevance_0", json!("expected no tool call, got 2: [file_reader, local_file_search]")),
        ("irrelevance_1", json!("expected no tool call, got 2: [file_reader, local_file_search]")),
    ];
    assert_eq!(reasons, want.map(|(c, r)| (c.to_string(), r)).to_vec());

    let ai: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/mock-prompt_json-free/parallel_0/ai_message.json")).unwrap()).unwrap();
    let paths: Vec<&Value> = ai["tool_calls"].as_array().unwrap().iter().map(|c| &c["args"]["path"]).collect();
    assert_eq!(paths, [&json!("notes/a.txt"), &json!("notes/b.txt")]);
}

#[test]
fn without_answers_only_irrelevance_is_scored_and_bfcl_mixes_with_case_files() {
    let dir = tempfile::tempdir().unwrap();
    let questions = fixture("bfcl/questions.json");
    let report = bench(dir.path(), &["--bfcl", &questions]);
    let overall = &report["settings"][0]["overall"];
    assert_eq!((&overall["decisions"], &overall["scored"], &overall["correct"]), (&json!(9), &json!(2), &json!(0)));

    let dir = tempfile::tempdir().unwrap();
    let (cases, tools) = (fixture("bench/cases"), fixture("bench/tools_schema.json"));
    let report = bench(dir.path(), &["--cases_dir", &cases, "--tools_schema", &tools, "--bfcl", &questions, "--ids", "simple_0,calc"]);
    let ids: Vec<&Value> = report["cases"].as_array().unwrap().iter().map(|c| &c["case"]).collect();
    assert_eq!(ids, [&json!("calc"), &json!("simple_0")]);
}

#[test]
fn multi_turn_questions_keep_their_tool_results_and_final_answers_are_scored() {
    // multi_turn_0: both results carry a text, the mock's answer quotes both: correct.
    // multi_turn_1: the second result has no text, so the answer uses only the first one
    // (the failure the category is for): wrong. multi_turn_2: the search result leaves a
    // file to read, the mock answers instead: wrong.
    let dir = tempfile::tempdir().unwrap();
    let (questions, answers) = (fixture("bfcl/multi_turn_questions.json"), fixture("bfcl/multi_turn_answers.json"));
    let report = bench(dir.path(), &["--bfcl", &questions, "--bfcl-answers", &answers]);
    let outcome: Vec<(&str, &str, &Value, &Value)> = report["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["case"].as_str().unwrap(), r["category"].as_str().unwrap(), &r["correct"], &r["reason"]))
        .collect();
    let want = [
        ("multi_turn_0", "multi_turn", &json!(true), &Value::Null),
        ("multi_turn_1", "multi_turn", &json!(false), &json!("the answer lacks 6; rain")),
        ("multi_turn_2", "multi_turn", &json!(false), &json!("expected 1 call ([files.read]), got a final answer")),
    ];
    assert_eq!(outcome, want);
    let categories = &report["settings"][0]["categories"];
    assert_eq!((&categories[0]["category"], &categories[0]["stats"]["correct"], &categories[0]["stats"]["scored"]), (&json!("multi_turn"), &json!(1), &json!(3)));
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("| multi_turn | accuracy 33.3% (1/3)"), "{md}");
    assert!(md.contains("| multi_turn_1 | the answer lacks 6; rain |"), "{md}");

    // The decision saw the whole conversation: the request, the calls and both results.
    let ai: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/mock-prompt_json-free/multi_turn_0/ai_message.json")).unwrap()).unwrap();
    assert_eq!(ai["content"], json!("三条中文要点如下：\n1. 北京：晴，22°C。\n2. 上海：小雨，18°C。"));
}

// ---- data/bfcl: the BFCL-format cases we wrote for the constrained-decoding comparison ----

fn data(name: &str) -> PathBuf {
    repo().join("data/bfcl").join(name)
}

/// The value a perfect model would give for a param: the first accepted value that is not
/// the optional marker `""`, with nested specs `{key: [accepted]}` resolved the same way
/// (also inside lists, as in a list of column specs).
fn reference_value(accepted: &[Value]) -> Option<Value> {
    let first = accepted.iter().find(|v| v.as_str() != Some(""))?;
    Some(resolve_specs(first))
}

fn resolve_specs(value: &Value) -> Value {
    match value {
        Value::Object(spec) => Value::Object(
            spec.iter()
                .filter_map(|(k, options)| {
                    let options = options.as_array().cloned().unwrap_or_else(|| vec![options.clone()]);
                    reference_value(&options).map(|v| (k.clone(), v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(resolve_specs).collect()),
        other => other.clone(),
    }
}

/// Every `enum` in `schema` that `value` reaches holds the value, and every key of an
/// object value is one of the schema's.
fn check_enums(value: &Value, schema: &Schema, path: &str) {
    if let Some(allowed) = &schema.enum_values {
        assert!(allowed.contains(value), "{path}: {value} is not one of {allowed:?}");
    }
    match value {
        Value::Object(fields) => {
            for (k, v) in fields {
                let field = schema.property(k).unwrap_or_else(|| panic!("{path}.{k}: not in the schema"));
                check_enums(v, field, &format!("{path}.{k}"));
            }
        }
        Value::Array(items) => {
            if let Some(item) = &schema.items {
                items.iter().for_each(|v| check_enums(v, item, &format!("{path}[]")));
            }
        }
        _ => {}
    }
}

/// Cases per category, in the order the categories first appear.
fn per_category(cases: &[BenchCase]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for case in cases {
        match counts.iter_mut().find(|(c, _)| *c == case.category) {
            Some((_, n)) => *n += 1,
            None => counts.push((case.category.clone(), 1)),
        }
    }
    counts
}

fn is_chinese(case: &BenchCase) -> bool {
    case.messages[0].text().chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// The user's messages of a case, as one text: what an answer that restates the question says.
fn asked(case: &BenchCase) -> String {
    use b4_agent::protocol::Message;
    case.messages.iter().filter(|m| matches!(m, Message::User { .. })).map(Message::text).collect::<Vec<_>>().join(" ")
}

/// Every case has its expectation (no call only for irrelevance, a final answer only for
/// multi_turn), and the answer a perfect model would give scores correct: calls built from
/// the first accepted values, within the schema; for a final answer, the example its author
/// wrote. A final answer that restates the question, or comes with a call, scores wrong.
fn check_reference_answers(cases: &[BenchCase]) {
    use b4_agent::bench::{score, Expected};
    use b4_agent::protocol::{Message, ToolCall};

    for case in cases {
        let tools = case.tools.as_deref().unwrap();
        let expected = case.expected.as_ref().unwrap_or_else(|| panic!("{}: no answer", case.id));
        let has_results = case.messages.iter().any(|m| matches!(m, Message::Tool(_)));
        assert_eq!(has_results, case.category == "multi_turn", "{}: tool results in the question", case.id);
        let calls = match expected {
            Expected::NoToolCall => {
                assert_eq!(case.category, "irrelevance", "{}", case.id);
                continue;
            }
            Expected::FinalAnswer(answer) => {
                assert_eq!(case.category, "multi_turn", "{}", case.id);
                let example = answer.example.as_deref().unwrap_or_else(|| panic!("{}: no example answer", case.id));
                assert_eq!(score::score(expected, &[], example, tools), Ok(()), "{}: the example answer", case.id);
                let restated = score::score(expected, &[], &asked(case), tools);
                assert!(restated.as_ref().is_err_and(|e| e.starts_with("the answer lacks")), "{}: restating the question gives {restated:?}", case.id);
                let name = case.tools.as_ref().and_then(|t| t[0]["function"]["name"].as_str()).unwrap().to_string();
                let with_call = [ToolCall { id: "call_009".into(), name, args: Default::default() }];
                assert!(score::score(expected, &with_call, example, tools).is_err(), "{}: a call instead of the answer", case.id);
                continue;
            }
            Expected::ToolCalls(calls) => calls,
        };
        // The answer a perfect model would give scores correct, and its values are ones
        // the schema (types, enums, nested properties) allows.
        let reference: Vec<ToolCall> = calls
            .iter()
            .map(|c| ToolCall {
                id: String::new(),
                name: c.name.clone(),
                args: c.args.iter().filter_map(|(k, accepted)| reference_value(accepted).map(|v| (k.clone(), v))).collect(),
            })
            .collect();
        assert_eq!(score::score(expected, &reference, "", tools), Ok(()), "{}: {reference:?}", case.id);
        let specs = ToolSpec::parse_all(tools).unwrap();
        for call in &reference {
            let tool = spec::find(&specs, &call.name).unwrap_or_else(|| panic!("{}: {} is not offered", case.id, call.name));
            check_enums(&Value::Object(call.args.clone()), &tool.args, &format!("{}:{}", case.id, call.name));
        }
        // A final answer where a call is due is wrong.
        if case.category == "multi_turn" {
            assert!(score::score(expected, &[], "Done.", tools).is_err(), "{}: an answer instead of the call", case.id);
        }
    }
}

#[test]
fn our_bfcl_cases_load_with_an_answer_for_every_question_and_cover_each_category() {
    let cases = bfcl::load(&data("questions.json"), Some(&data("answers.json"))).unwrap();
    let want = [("simple", 5), ("multiple", 3), ("parallel", 2), ("parallel_multiple", 2), ("irrelevance", 2)];
    assert_eq!(per_category(&cases), want.map(|(c, n)| (c.to_string(), n)).to_vec());
    check_reference_answers(&cases);
    let chinese_questions = cases.iter().filter(|c| is_chinese(c)).count();
    assert!(chinese_questions >= 5, "{chinese_questions} Chinese questions");
}

// ---- data/bfcl/{dev,holdout}: the corpus to tune on (dev) and to report (holdout) ----

const CATEGORIES: [&str; 6] = ["simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "multi_turn"];

/// Cases per category: the five single-turn categories, then multi_turn.
fn counts(single_turn: usize, multi_turn: usize) -> Vec<(String, usize)> {
    CATEGORIES.iter().map(|c| (c.to_string(), if *c == "multi_turn" { multi_turn } else { single_turn })).collect()
}

fn split(name: &str) -> Vec<BenchCase> {
    bfcl::load(&data(&format!("{name}/questions.json")), Some(&data(&format!("{name}/answers.json")))).unwrap()
}

#[test]
fn the_dev_and_holdout_splits_are_balanced_disjoint_and_their_answers_score() {
    use b4_agent::bench::Expected;

    let (dev, holdout) = (split("dev"), split("holdout"));
    for (name, cases, each, multi_turn) in [("dev", &dev, 45, 78), ("holdout", &holdout, 31, 53)] {
        assert_eq!(per_category(cases), counts(each, multi_turn), "{name}");
        check_reference_answers(cases);
        let chinese = cases.iter().filter(|c| is_chinese(c)).count();
        assert!(chinese * 3 >= cases.len(), "{name}: {chinese} of {} questions in Chinese", cases.len());
        // multi_turn: both kinds of decision in each split, in both languages, and answers
        // that must combine two or three results.
        let multi: Vec<&BenchCase> = cases.iter().filter(|c| c.category == "multi_turn").collect();
        let finals: Vec<&&BenchCase> = multi.iter().filter(|c| matches!(c.expected, Some(Expected::FinalAnswer(_)))).collect();
        let next_calls = multi.len() - finals.len();
        assert!(finals.len() * 3 >= multi.len() && next_calls * 3 >= multi.len(), "{name}: {} final answers, {next_calls} next calls", finals.len());
        let chinese = multi.iter().filter(|c| is_chinese(c)).count();
        assert!(chinese * 3 >= multi.len() && chinese * 3 <= multi.len() * 2, "{name}: {chinese} of {} multi_turn cases in Chinese", multi.len());
        let results = |c: &BenchCase| c.messages.iter().filter(|m| m.role() == "tool").count();
        assert!(finals.iter().filter(|c| results(c) >= 2).count() >= 3, "{name}: too few final answers over several results");
    }
    let holdout_percent = holdout.len() * 100 / (dev.len() + holdout.len());
    assert!((35..=45).contains(&holdout_percent), "holdout is {holdout_percent}% of the corpus");

    // No id and no question is in two places (the 14 cases above included), so the
    // splits can be merged with each other or with those cases.
    let seed = bfcl::load(&data("questions.json"), None).unwrap();
    let mut ids = std::collections::BTreeSet::new();
    let mut questions = std::collections::BTreeSet::new();
    for case in dev.iter().chain(&holdout).chain(&seed) {
        assert!(ids.insert(case.id.clone()), "{}: id used twice", case.id);
        assert!(questions.insert(case.messages[0].text().trim().to_lowercase()), "{}: question asked twice", case.id);
    }
}

#[test]
fn the_dev_and_holdout_splits_run_in_a_mock_bench() {
    for (name, each, multi_turn) in [("dev", 45, 78), ("holdout", 31, 53)] {
        let dir = tempfile::tempdir().unwrap();
        let questions = data(&format!("{name}/questions.json")).display().to_string();
        let answers = data(&format!("{name}/answers.json")).display().to_string();
        let report = bench(dir.path(), &["--bfcl", &questions, "--bfcl-answers", &answers, "--decoding", "constrained"]);
        let setting = &report["settings"][0];
        let total = json!(each * 5 + multi_turn);
        let overall = &setting["overall"];
        assert_eq!((&overall["decisions"], &overall["valid"], &overall["scored"]), (&total, &total, &total), "{name}");
        let decisions: Vec<(String, usize)> = setting["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["category"].as_str().unwrap().to_string(), c["stats"]["scored"].as_u64().unwrap() as usize))
            .collect();
        assert_eq!(decisions, counts(each, multi_turn), "{name}");
        // The final-answer cases were scored on the answer's text (the mock's results
        // carry no text to quote, so it misses their facts).
        let final_answer_reasons = report["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["reason"].as_str())
            .filter(|r| r.starts_with("the answer lacks"))
            .count();
        assert!(final_answer_reasons > 0, "{name}: no final answer was scored on its text");
    }
}

#[test]
fn our_bfcl_cases_run_in_a_mock_bench_under_both_decodings() {
    let dir = tempfile::tempdir().unwrap();
    let (questions, answers) = (data("questions.json").display().to_string(), data("answers.json").display().to_string());
    let report = bench(dir.path(), &["--bfcl", &questions, "--bfcl-answers", &answers, "--decoding", "both"]);
    let settings = report["settings"].as_array().unwrap();
    let names: Vec<&str> = settings.iter().map(|s| s["setting"].as_str().unwrap()).collect();
    assert_eq!(names, ["mock-prompt_json-free", "mock-prompt_json-constrained"]);
    for setting in settings {
        let overall = &setting["overall"];
        assert_eq!((&overall["decisions"], &overall["scored"]), (&json!(14), &json!(14)), "{}", setting["setting"]);
        let per_category: Vec<(&str, u64)> = setting["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["category"].as_str().unwrap(), c["stats"]["decisions"].as_u64().unwrap()))
            .collect();
        assert_eq!(per_category, [("simple", 5), ("multiple", 3), ("parallel", 2), ("parallel_multiple", 2), ("irrelevance", 2)]);
    }
    assert_eq!(settings[0]["mask"], Value::Null);
    assert!(settings[1]["mask"].is_object(), "{}", settings[1]);
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("| mask ms/token | – |"), "{md}");
}
