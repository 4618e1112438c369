//! The conversation set in `data/conversations/` and `b4 bench --conversations`.
//!
//! The set's expected values are checked against its workspace here, each through the
//! evidence its turn names, computed without our skills (meval, the csv crate,
//! serde_yaml): a value in a file is in that file, a calculation's result is the
//! expression's value, a table figure is what the CSV adds up to. Runs use the mock brain:
//! its accuracy on the shipped set means nothing (it follows cues, not questions), so
//! that run checks the plumbing, and a small set of our own checks known outcomes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use b4_agent::bench::conversations::score::contains;
use b4_agent::bench::conversations::set::{ConvertEvidence, Evidence, TableEvidence, TableOp};
use b4_agent::bench::conversations::{load, ConversationSet, Lang, Turn};
use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tool_names() -> Vec<String> {
    b4_agent::skills::all().iter().map(|s| s.manifest().name.clone()).collect()
}

fn shipped() -> ConversationSet {
    load(&repo().join("data/conversations/questions.json"), &tool_names()).unwrap()
}

/// The held-out set: its own workspace, never tuned on, only reported.
fn holdout() -> ConversationSet {
    load(&repo().join("data/conversations/holdout/questions.json"), &tool_names()).unwrap()
}

fn b4(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b4")).current_dir(dir).args(args).output().unwrap()
}

fn config() -> String {
    repo().join("configs/model.yaml").display().to_string()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn number(alternative: &str) -> Option<f64> {
    alternative.replace(',', "").parse().ok()
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn both_shipped_sets_cover_both_languages_every_kind_of_request_and_follow_ups() {
    for set in [shipped(), holdout()] {
        covers_every_kind(&set);
    }
    // The held-out set asks about files the tuned one never shows.
    let (dev, held) = (shipped(), holdout());
    assert_ne!(dev.workspace, held.workspace);
    let dev_texts: Vec<String> = files_with(&dev.workspace, "").iter().map(|f| std::fs::read_to_string(dev.workspace.join(f)).unwrap()).collect();
    for file in files_with(&held.workspace, "") {
        let text = std::fs::read_to_string(held.workspace.join(&file)).unwrap();
        assert!(!dev_texts.contains(&text), "{file}: the same text is in the tuned set's workspace");
    }
}

fn covers_every_kind(set: &ConversationSet) {
    let conversations = &set.conversations;
    assert!(set.questions() >= 30, "{} questions", set.questions());
    let zh = conversations.iter().filter(|c| c.lang == Lang::Zh).count();
    let en = conversations.iter().filter(|c| c.lang == Lang::En).count();
    assert_eq!(zh, en, "half of the conversations are Chinese");
    let mut categories: BTreeMap<(&str, Lang), usize> = BTreeMap::new();
    for c in conversations {
        *categories.entry((c.category.as_str(), c.lang)).or_default() += 1;
    }
    for category in ["read", "calc", "search", "table", "convert", "two_tasks", "no_tool", "follow_up"] {
        for lang in Lang::ALL {
            assert!(categories.get(&(category, lang)).is_some_and(|n| *n >= 1), "no {category} conversation in {lang:?}");
        }
    }
    let turns: Vec<&Turn> = conversations.iter().flat_map(|c| &c.turns).collect();
    let tools_needed: std::collections::BTreeSet<&str> = turns.iter().flat_map(|t| &t.tools_used).map(String::as_str).collect();
    assert_eq!(tools_needed.into_iter().collect::<Vec<_>>(), ["calculator", "file_reader", "format_converter", "local_file_search", "table_analyzer"]);
    assert!(turns.iter().filter(|t| t.no_tools).count() >= 4);
    for c in conversations {
        assert_eq!(c.turns.len() > 1, c.category == "follow_up", "{}: only follow-ups have several turns", c.id);
        if c.category == "two_tasks" {
            assert!(c.turns[0].must_contain.len() >= 2 && c.turns[0].tools_used.len() >= 2, "{}: both tasks are expected", c.id);
        }
    }
    // A follow-up's second answer must not be derailed by the first: it is checked for
    // something only the second question asks, and against the first one's answer.
    for c in conversations.iter().filter(|c| c.category == "follow_up") {
        assert!(!c.turns[1].must_not_contain.is_empty(), "{}: the second turn guards against the first", c.id);
    }
}

#[test]
fn every_expected_value_is_derived_from_the_workspace_or_the_stated_computation() {
    for set in [shipped(), holdout()] {
        derived_from_evidence(&set);
    }
}

fn derived_from_evidence(set: &ConversationSet) {
    for conversation in &set.conversations {
        for (t, turn) in conversation.turns.iter().enumerate() {
            let place = format!("{} turn {}", conversation.id, t + 1);
            assert_eq!(turn.evidence.len(), turn.must_contain.len(), "{place}: one evidence per group");
            for (group, evidence) in turn.must_contain.iter().zip(&turn.evidence) {
                if let Err(why) = derivable(&set.workspace, group, evidence, &turn.question) {
                    panic!("{place}: {group:?} from {evidence:?}: {why}");
                }
            }
        }
    }
}

/// Whether one alternative of `group` follows from `evidence`.
fn derivable(workspace: &Path, group: &[String], evidence: &Evidence, question: &str) -> Result<(), String> {
    let read = |path: &str| std::fs::read_to_string(workspace.join(path)).map_err(|e| format!("{path}: {e}"));
    let found = match evidence {
        Evidence::File(path) => {
            let text = read(path)?;
            group.iter().any(|alt| contains(&text, alt))
        }
        Evidence::Calc(expression) => {
            // The computation is the question's: each of its numbers is stated there
            // (100 for a percentage).
            for n in expression.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter(|n| !n.is_empty()) {
                let stated = contains(question, n) || (n == "100" && question.contains('%'));
                assert!(stated, "{expression}: {n} is not in the question {question:?}");
            }
            let value = meval::eval_str(expression).map_err(|e| format!("{expression}: {e}"))?;
            group.iter().filter_map(|alt| number(alt)).any(|n| same(n, value))
        }
        Evidence::Table(table) => {
            let (key, value) = table_value(workspace, table)?;
            group.iter().any(|alt| number(alt).is_some_and(|n| same(n, value)) || key.as_deref().is_some_and(|k| k.eq_ignore_ascii_case(alt)))
        }
        Evidence::Convert(ConvertEvidence { path, to }) => {
            assert_eq!(to, "json");
            let data: serde_yaml::Value = serde_yaml::from_str(&read(path)?).map_err(|e| e.to_string())?;
            let converted = serde_json::to_string_pretty(&data).map_err(|e| e.to_string())?;
            group.iter().any(|alt| contains(&converted, alt))
        }
        Evidence::Search(word) => {
            let hits = files_with(workspace, &word.to_lowercase());
            assert!(!hits.is_empty(), "no file has {word:?}");
            group.iter().any(|alt| hits.iter().any(|path| path.contains(alt.as_str())))
        }
        Evidence::Knowledge(note) => !note.trim().is_empty(),
    };
    if found {
        Ok(())
    } else {
        Err("no alternative follows".into())
    }
}

/// A table figure: the value, and with `group_by` the group holding the largest one.
fn table_value(workspace: &Path, table: &TableEvidence) -> Result<(Option<String>, f64), String> {
    let mut reader = csv::Reader::from_path(workspace.join(&table.path)).map_err(|e| e.to_string())?;
    let headers = reader.headers().map_err(|e| e.to_string())?.clone();
    let index = |name: &str| headers.iter().position(|h| h == name).ok_or(format!("no column {name}"));
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    let figure = |rows: &[&csv::StringRecord]| -> Result<f64, String> {
        if table.op == TableOp::Rows {
            return Ok(rows.len() as f64);
        }
        let column = index(table.column.as_deref().ok_or("sum and mean need a column")?)?;
        let values: Vec<f64> = rows.iter().map(|r| r[column].parse::<f64>().map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
        let sum: f64 = values.iter().sum();
        Ok(if table.op == TableOp::Mean { sum / values.len() as f64 } else { sum })
    };
    let all: Vec<&csv::StringRecord> = rows.iter().collect();
    let Some(group_by) = &table.group_by else {
        return Ok((None, figure(&all)?));
    };
    let by = index(group_by)?;
    let mut groups: BTreeMap<&str, Vec<&csv::StringRecord>> = BTreeMap::new();
    for row in &rows {
        groups.entry(&row[by]).or_default().push(row);
    }
    let mut figures: Vec<(String, f64)> = groups.iter().map(|(k, rows)| Ok((k.to_string(), figure(rows)?))).collect::<Result<_, String>>()?;
    figures.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert!(figures.len() < 2 || figures[0].1 > figures[1].1, "{}: the top group is a tie", table.path);
    Ok((Some(figures[0].0.clone()), figures[0].1))
}

/// Workspace paths (with `/`) of files whose name or text has `word` (lowercase).
fn files_with(workspace: &Path, word: &str) -> Vec<String> {
    let mut hits = Vec::new();
    for entry in walkdir::WalkDir::new(workspace).into_iter().map(Result::unwrap).filter(|e| e.file_type().is_file()) {
        let path = entry.path().strip_prefix(workspace).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default().to_lowercase();
        if path.to_lowercase().contains(word) || text.contains(word) {
            hits.push(path);
        }
    }
    hits
}

/// A small set the mock's outcomes are known for: it reads the file a question names,
/// computes the expression it has, and answers with the results, in Chinese (so an English
/// conversation's answer fails for its language); with no cue it calls its default pair
/// (which fails here: there is no docs/agent_intro.txt).
fn small_set(dir: &Path) {
    std::fs::create_dir_all(dir.join("ws/notes")).unwrap();
    std::fs::write(dir.join("ws/notes/door.txt"), "The door code is 4711.\n门禁密码是 4711。\n").unwrap();
    let set = json!({
        "workspace": "ws",
        "conversations": [
            {"id": "read_en", "lang": "en", "category": "read", "turns": [
                {"question": "What is the door code in notes/door.txt?", "must_contain": [["4711"]], "tools_used": ["file_reader"]}]},
            {"id": "calc_zh", "lang": "zh", "category": "calc", "turns": [
                {"question": "计算 (2 + 3) * 4", "must_contain": [["20"]], "must_not_contain": ["14"], "tools_used": ["calculator"]}]},
            {"id": "capital_en", "lang": "en", "category": "no_tool", "turns": [
                {"question": "What is the capital of France?", "must_contain": [["Paris"]], "no_tools": true}]},
            {"id": "follow_zh", "lang": "zh", "category": "follow_up", "turns": [
                {"question": "读取 notes/door.txt", "must_contain": [["4711"]], "tools_used": ["file_reader"]},
                {"question": "再算一下 6 * 7", "must_contain": [["42"]], "must_not_contain": ["4711"], "tools_used": ["calculator"]}]}
        ]
    });
    std::fs::write(dir.join("questions.json"), serde_json::to_string_pretty(&set).unwrap()).unwrap();
}

#[test]
fn a_mock_run_scores_known_outcomes_and_writes_the_reports_and_transcripts() {
    let dir = tempfile::tempdir().unwrap();
    small_set(dir.path());
    let config = config();
    let out = b4(
        dir.path(),
        &["bench", "--model_config", &config, "--conversations", "questions.json", "--mode", "mock", "--tool_calling", "both", "--outdir", "out"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("bench: 4 conversations (5 questions) x 2 settings = 10 questions"), "{stderr}");
    assert!(stderr.contains("[1/10] mock-prompt_json-free read_en#1: FAIL · answered in Chinese, the conversation is in English · file_reader · "), "{stderr}");
    assert!(
        stderr.contains("[3/10] mock-prompt_json-free capital_en#1: FAIL · answered in Chinese, the conversation is in English; missing \"Paris\"; called "),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let table: Vec<String> = stdout.lines().map(|l| l.rsplit_once("  ").map_or(l, |(cells, _time)| cells).trim_end().to_string()).collect();
    assert_eq!(
        table,
        [
            "setting                accuracy     en          zh            conversations",
            "mock-prompt_json-free  60.0% (3/5)  0.0% (0/2)  100.0% (3/3)  50.0% (2/4)",
            "mock-builtin-free      60.0% (3/5)  0.0% (0/2)  100.0% (3/3)  50.0% (2/4)",
        ]
    );

    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!((&report["planned"], &report["completed"], &report["interrupted"]), (&json!(10), &json!(10), &json!(false)));
    assert_eq!((&report["bench_mode"], &report["agent_mode"]), (&json!("mock"), &json!("react")));
    let outcomes: Vec<(Value, Value, Value)> = report["records"]
        .as_array()
        .unwrap()
        .iter()
        .take(5)
        .map(|r| (r["conversation"].clone(), r["turn"].clone(), r["passed"].clone()))
        .collect();
    let want = [("read_en", 1, false), ("calc_zh", 1, true), ("capital_en", 1, false), ("follow_zh", 1, true), ("follow_zh", 2, true)];
    assert_eq!(outcomes, want.map(|(c, t, p)| (json!(c), json!(t), json!(p))).to_vec());
    // The second question of a conversation is answered on its own results.
    let second = &report["records"][4];
    assert_eq!(second["tools"], json!([{"name": "calculator", "args": {"expression": "6 * 7"}, "ok": true}]));
    assert!(second["answer"].as_str().unwrap().contains("6 * 7 = 42"), "{second}");
    let calc = &report["records"][1];
    assert_eq!(calc["tools"], json!([{"name": "calculator", "args": {"expression": "(2 + 3) * 4"}, "ok": true}]));
    assert!(calc["answer"].as_str().unwrap().contains("(2 + 3) * 4 = 20"), "{calc}");
    let first = &report["settings"][0];
    assert_eq!(first["languages"]["zh"], json!({"total": 3, "passed": 3, "accuracy": 1.0}));
    assert_eq!(first["conversations"], json!({"total": 4, "passed": 2, "accuracy": 0.5}));

    let transcript = read_json(&dir.path().join("out/mock-builtin-free/follow_zh.json"));
    let roles: Vec<&str> = transcript.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles[..5], ["user", "assistant", "tool", "assistant", "user"]);
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    for needle in [
        "- set: `questions.json` (4 conversations, 5 questions), workspace `ws`",
        "| mock-prompt_json-free | 60.0% (3/5) | 0.0% (0/2) | 100.0% (3/3) | 50.0% (2/4) |",
        "| follow_zh | 2 | zh | 再算一下 6 * 7 | ✓ | ✓ |",
        "| capital_en | 1 | en | What is the capital of France? | ✗ | ✗ |",
        "## Failures (4)",
        "### mock-builtin-free · capital_en · turn 1",
    ] {
        assert!(md.contains(needle), "report.md lacks {needle:?}:\n{md}");
    }
    // The set's workspace is as it was.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("ws/notes")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["door.txt"]);
}

#[test]
fn ids_limit_and_plan_execute_pick_the_questions_and_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    small_set(dir.path());
    let config = config();
    let out = b4(
        dir.path(),
        &[
            "bench", "--model-config", &config, "--conversations", "questions.json", "--mode", "plan_execute", "--model_name", "mock",
            "--ids", "follow_zh,calc_zh", "--limit", "1", "--outdir", "out",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    let ids: Vec<&Value> = report["records"].as_array().unwrap().iter().map(|r| &r["conversation"]).collect();
    assert_eq!(ids, [&json!("calc_zh")], "--ids keeps the set's order, --limit takes the first");
    assert_eq!((&report["agent_mode"], &report["records"][0]["passed"]), (&json!("plan_execute"), &json!(true)));
}

#[test]
fn a_mock_run_over_the_shipped_set_answers_every_question_in_every_setting() {
    let dir = tempfile::tempdir().unwrap();
    let set = shipped();
    let questions = repo().join("data/conversations/questions.json").display().to_string();
    let config = config();
    let out = b4(
        dir.path(),
        &["bench", "--model_config", &config, "--conversations", &questions, "--mode", "mock", "--tool_calling", "both", "--outdir", "out"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    let records = report["records"].as_array().unwrap();
    assert_eq!(records.len(), 2 * set.questions());
    assert_eq!((&report["completed"], &report["interrupted"]), (&json!(2 * set.questions()), &json!(false)));
    for setting in report["settings"].as_array().unwrap() {
        let name = setting["setting"].as_str().unwrap();
        let mine: Vec<&Value> = records.iter().filter(|r| r["setting"] == name).collect();
        let passed = mine.iter().filter(|r| r["passed"] == true).count();
        assert_eq!(setting["overall"]["total"], json!(set.questions()));
        assert_eq!(setting["overall"]["passed"], json!(passed));
        for conversation in &set.conversations {
            let turns: Vec<&Value> = mine.iter().copied().filter(|r| r["conversation"] == conversation.id.as_str()).collect();
            assert_eq!(turns.len(), conversation.turns.len(), "{name} {}", conversation.id);
            for (record, turn) in turns.iter().zip(&conversation.turns) {
                assert_eq!(record["question"], turn.question.as_str());
                assert_eq!(record["passed"], json!(record["reasons"].as_array().unwrap().is_empty()));
            }
            assert!(dir.path().join("out").join(name).join(format!("{}.json", conversation.id)).is_file());
        }
    }
    assert!(std::fs::read_to_string(dir.path().join("out/report.md")).unwrap().contains("## Summary"));
}

#[test]
fn a_bad_set_is_one_clear_error_line_and_no_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let config = config();
    let run = |text: &str| {
        std::fs::write(dir.path().join("q.json"), text).unwrap();
        let out = b4(dir.path(), &["bench", "--model_config", &config, "--conversations", "q.json", "--mode", "mock", "--outdir", "out"]);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let turn = |t: Value| json!({"workspace": "ws", "conversations": [{"id": "c", "lang": "zh", "turns": [t]}]}).to_string();
    let cases = [
        ("{\"workspace\": ", "error: q.json: not valid JSON: EOF while parsing a value at line 1 column 14"),
        (
            &turn(json!({"question": "计算 12*12", "must_contain": [["144"]], "tools_used": ["calculatr"]})),
            "error: q.json: conversation c, turn 1: tools_used names \"calculatr\", which is not a tool (tools: file_reader, calculator, local_file_search, table_analyzer, format_converter)",
        ),
        (
            &turn(json!({"question": "12*12 等于 144 吗？", "must_contain": [["144"]]})),
            "error: q.json: conversation c, turn 1: the question itself matches every must_contain group, so an answer that restates it would pass",
        ),
        (
            &json!({"workspace": "nope", "conversations": [{"id": "c", "lang": "en", "turns": [{"question": "q", "must_contain": [["a"]]}]}]}).to_string(),
            "error: q.json: workspace nope is not a folder",
        ),
    ];
    for (text, want) in cases {
        let (code, stderr) = run(text);
        assert_eq!((code, stderr.trim_end()), (Some(2), want));
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let (code, stderr) = run(&turn(json!({"question": "q", "must_contian": [["a"]]})));
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with("error: q.json: not valid JSON: unknown field `must_contian`, expected one of"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let out = b4(dir.path(), &["bench", "--conversations", "q.json", "--cases_dir", "cases", "--outdir", "out"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'--conversations <QUESTIONS.json>' cannot be used with '--cases_dir <DIR>'"));
    assert!(!dir.path().join("out/report.json").exists());
}

#[test]
fn sigint_cancels_the_current_question_and_still_writes_the_report() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    small_set(dir.path());
    // A mock that takes ten minutes a decision unless cancelled.
    std::fs::write(dir.path().join("slow.yaml"), "model:\n  name: mock\n  backend: mock\nmodels:\n  mock:\n    backend: mock\n    mock_delay_ms: 600000\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_b4"))
        .current_dir(dir.path())
        .args(["bench", "--model_config", "slow.yaml", "--conversations", "questions.json", "--mode", "mock", "--outdir", "out"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("bench: ") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "b4 ended before the run started");
    }
    // SAFETY: kill only sends a signal to the child we started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert_eq!(rest.lines().last(), Some("interrupted: stopped after 0 of 5 questions; the report covers those 0; nothing half-written"), "{rest}");
    let report = read_json(&dir.path().join("out/report.json"));
    assert_eq!((&report["interrupted"], &report["completed"]), (&json!(true), &json!(0)));
    // The conversation it stopped in keeps its transcript (the question, no answer) when
    // the signal came after the question began.
    let transcript = dir.path().join("out/mock-prompt_json-free/read_en.json");
    if transcript.exists() {
        assert_eq!(read_json(&transcript), json!([{"role": "user", "content": "What is the door code in notes/door.txt?"}]));
    }
    let mut written: Vec<String> = walkdir::WalkDir::new(dir.path().join("out")).into_iter().map(|e| e.unwrap()).filter(|e| e.file_type().is_file()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    written.retain(|name| name != "read_en.json");
    assert_eq!(written, ["report.json", "report.md"]);
}
