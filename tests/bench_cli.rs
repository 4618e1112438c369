//! `b4 bench` end to end on the mock brain over a temp copy of the fixture cases.
//!
//! The mock is deterministic: it calls the tools its cues name (a path, an expression, a
//! search word) and the seeds' default pair when there is no cue. So of the fixture cases
//! `calc`, `read` and `multi` (expected in another order) are correct; `direct` (expects
//! no call), `own_tools` (the mock sends max_chars, which that case's own file_reader
//! lacks) and `wrong_value` are not; `bare` is a messages array, scored for validity only.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A temp dir holding a copy of the fixture cases and the tools schema.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    let fixtures = repo().join("tests/fixtures/bench");
    for entry in std::fs::read_dir(fixtures.join("cases")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, cases.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::copy(fixtures.join("tools_schema.json"), dir.path().join("tools_schema.json")).unwrap();
    dir
}

fn b4(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b4")).current_dir(dir).args(args).output().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn config() -> String {
    repo().join("configs/model.yaml").display().to_string()
}

/// The counts of a Stats object, without the timings.
fn counts(stats: &Value) -> Value {
    json!({
        "decisions": stats["decisions"], "valid": stats["valid"], "validity": stats["validity"],
        "scored": stats["scored"], "correct": stats["correct"], "accuracy": stats["accuracy"], "errors": stats["errors"],
    })
}

#[test]
fn mock_bench_over_both_tool_calling_ways_with_repeats_scores_and_reports() {
    let dir = workspace();
    let config = config();
    let out = b4(
        dir.path(),
        &[
            "bench", "--model_config", &config, "--cases_dir", "cases", "--tools_schema", "tools_schema.json",
            "--mode", "mock", "--tool_calling", "both", "--repeat", "2", "--outdir", "out",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("mock-prompt_json-free  100.0%  50.0% (6/12)"), "{stdout}");
    assert!(stdout.contains("direct       WRONG 2"), "{stdout}");
    assert!(stderr.contains("[28/28] mock-builtin-free wrong_value: WRONG"), "{stderr}");

    let out_dir = dir.path().join("out");
    let report = read_json(&out_dir.join("report.json"));
    assert_eq!((&report["mode"], &report["repeat"], &report["planned"], &report["completed"]), (&json!("mock"), &json!(2), &json!(28), &json!(28)));
    assert_eq!(report["interrupted"], false);
    let names: Vec<&Value> = report["settings"].as_array().unwrap().iter().map(|s| &s["setting"]).collect();
    assert_eq!(names, [&json!("mock-prompt_json-free"), &json!("mock-builtin-free")]);
    for setting in report["settings"].as_array().unwrap() {
        assert_eq!(
            counts(&setting["overall"]),
            json!({"decisions": 14, "valid": 14, "validity": 1.0, "scored": 12, "correct": 6, "accuracy": 0.5, "errors": 0})
        );
        assert_eq!(setting["agreement"], json!({"mean": 1.0, "unanimous": 7, "cases": 7}));
        let categories: Vec<(Value, Value)> =
            setting["categories"].as_array().unwrap().iter().map(|c| (c["category"].clone(), counts(&c["stats"]))).collect();
        assert_eq!(
            categories,
            vec![
                (json!("uncategorized"), json!({"decisions": 2, "valid": 2, "validity": 1.0, "scored": 0, "correct": 0, "accuracy": null, "errors": 0})),
                (json!("simple"), json!({"decisions": 8, "valid": 8, "validity": 1.0, "scored": 8, "correct": 4, "accuracy": 0.5, "errors": 0})),
                (json!("irrelevance"), json!({"decisions": 2, "valid": 2, "validity": 1.0, "scored": 2, "correct": 0, "accuracy": 0.0, "errors": 0})),
                (json!("parallel_multiple"), json!({"decisions": 2, "valid": 2, "validity": 1.0, "scored": 2, "correct": 2, "accuracy": 1.0, "errors": 0})),
            ]
        );
    }
    let outcomes: Vec<(String, Value, Value)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["case"].as_str().unwrap().to_string(), row["cells"][0]["outcome"].clone(), row["cells"][0]["tool_calls"].clone()))
        .collect();
    let want = [
        ("bare", "valid", 1),
        ("calc", "correct", 1),
        ("direct", "incorrect", 2),
        ("multi", "correct", 3),
        ("own_tools", "incorrect", 1),
        ("read", "correct", 1),
        ("wrong_value", "incorrect", 1),
    ];
    assert_eq!(outcomes, want.map(|(c, o, n)| (c.to_string(), json!(o), json!(n))).to_vec());
    let own_tools = report["records"].as_array().unwrap().iter().find(|r| r["case"] == "own_tools").unwrap();
    assert_eq!(own_tools["reason"], "file_reader: unknown param 'max_chars' (known: path)");
    assert_eq!(report["records"].as_array().unwrap().len(), 28);

    let case_dir = out_dir.join("mock-builtin-free/multi/run_2");
    let raw = read_json(&case_dir.join("raw_model_output.json"));
    assert_eq!((&raw["status"], &raw["mode"], &raw["tool_calling"], &raw["profile"]), (&json!("success"), &json!("mock"), &json!("builtin"), &json!("mock")));
    let ai = read_json(&case_dir.join("ai_message.json"));
    let called: Vec<&Value> = ai["tool_calls"].as_array().unwrap().iter().map(|c| &c["name"]).collect();
    assert_eq!(called, [&json!("file_reader"), &json!("calculator"), &json!("local_file_search")]);
    assert_eq!(ai["role"], "assistant");

    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    for needle in [
        "## Settings",
        "| | `mock-prompt_json-free` | `mock-builtin-free` |",
        "| validity | 100.0% (14/14) | 100.0% (14/14) |",
        "| accuracy | 50.0% (6/12) | 50.0% (6/12) |",
        "| agreement | 100.0% (7/7 cases unanimous) | 100.0% (7/7 cases unanimous) |",
        "## By category",
        "| parallel_multiple | accuracy 100.0% (2/2)",
        "## Per case",
        "| calc | simple | ✅ 2/2 · 1 call ·",
        "| direct | irrelevance | ❌ 2/2 · 2 calls ·",
        "| bare | uncategorized | ☑️ 2/2 · 1 call ·",
        "| `mock-builtin-free` | wrong_value | calculator: param 'expression': got \"2 + 2\", expected one of [\"2 + 3\"] |",
        "title \"Latency per case (ms): mock-prompt_json-free\"",
        "title \"Tool calls per case: mock-builtin-free\"",
        "    x-axis [\"bare\", \"calc\", \"direct\", \"multi\", \"own_tools\", \"read\", \"wrong_value\"]",
        "    bar [1, 1, 2, 3, 1, 1, 1]",
        "title \"Validity per setting (%)\"\n    x-axis [\"mock-prompt_json-free\", \"mock-builtin-free\"]\n    y-axis \"validity (%)\" 0 --> 100\n    bar [100, 100]",
        "title \"Accuracy per setting (%)\"\n    x-axis [\"mock-prompt_json-free\", \"mock-builtin-free\"]\n    y-axis \"accuracy (%)\" 0 --> 100\n    bar [50, 50]",
    ] {
        assert!(md.contains(needle), "report.md lacks {needle:?}:\n{md}");
    }
    assert_eq!(md.matches("```mermaid\nxychart-beta\n").count(), 6, "{md}");
}

#[test]
fn kebab_flags_ids_limit_and_plan_execute_on_the_mock_profile() {
    let dir = workspace();
    let config = config();
    let out = b4(
        dir.path(),
        &[
            "bench", "--model-config", &config, "--cases-dir", "cases", "--tools-schema", "tools_schema.json",
            "--mode", "plan_execute", "--model_name", "mock", "--ids", "multi,direct", "--ids", "calc", "--limit", "2", "--outdir", "out",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    let cases: Vec<&Value> = report["cases"].as_array().unwrap().iter().map(|c| &c["case"]).collect();
    assert_eq!(cases, [&json!("calc"), &json!("direct")], "--ids keeps the cases' order, --limit takes the first two");
    assert_eq!(report["mode"], "plan_execute");
    assert_eq!(counts(&report["settings"][0]["overall"]), json!({"decisions": 2, "valid": 2, "validity": 1.0, "scored": 2, "correct": 1, "accuracy": 0.5, "errors": 0}));
    assert_eq!(report["settings"][0]["agreement"], Value::Null);
    let raw = read_json(&dir.path().join("out/mock-prompt_json-free/calc/raw_model_output.json"));
    assert_eq!((&raw["phase"], &raw["mode"]), (&json!("plan"), &json!("plan_execute")));
    assert_eq!(raw["plan"]["plan"][0]["tool_call"]["name"], "calculator");
}

#[test]
fn bad_input_is_one_clear_error() {
    let dir = workspace();
    let config = config();
    let run = |extra: &[&str]| {
        let mut args = vec!["bench", "--model_config", &config, "--mode", "mock", "--outdir", "out"];
        args.extend_from_slice(extra);
        let out = b4(dir.path(), &args);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).trim().to_string())
    };
    assert_eq!(run(&[]), (Some(2), "error: give --cases_dir DIR, --bfcl QUESTIONS.json, or both".into()));
    let (code, err) = run(&["--cases_dir", "cases", "--tools_schema", "tools_schema.json", "--ids", "nope"]);
    assert_eq!(code, Some(2));
    assert!(err.ends_with("error: unknown case id \"nope\" (available: bare, calc, direct, multi, own_tools, read, wrong_value)"), "{err}");
    let (code, err) = run(&["--cases_dir", "cases"]);
    assert_eq!(code, Some(2));
    assert!(err.ends_with("error: case bare: it has no tools and no --tools_schema was given"), "{err}");
    std::fs::write(dir.path().join("cases/zz_broken.json"), "{\"messages\": []}").unwrap();
    let (code, err) = run(&["--cases_dir", "cases", "--tools_schema", "tools_schema.json"]);
    assert_eq!(code, Some(2));
    assert!(err.ends_with("zz_broken.json: messages: is empty"), "{err}");
    assert!(!dir.path().join("out/report.json").exists());
}

#[test]
fn several_profiles_and_both_decodings_make_a_grid_of_settings() {
    let dir = workspace();
    let config = dir.path().join("model.yaml");
    std::fs::write(
        &config,
        "model:\n  backend: mock\nmodels:\n  mock-a:\n    backend: mock\n    display_name: Mock A\n  mock-b:\n    backend: mock\n",
    )
    .unwrap();
    let config = config.display().to_string();
    let out = b4(
        dir.path(),
        &[
            "bench", "--model_config", &config, "--cases_dir", "cases", "--tools_schema", "tools_schema.json", "--mode", "prompt_json",
            "--model_name", "mock-a", "mock-b", "--tool_calling", "builtin", "--decoding", "both", "--ids", "calc", "--outdir", "out",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = read_json(&dir.path().join("out/report.json"));
    let settings: Vec<(Value, Value, Value)> = report["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["setting"].clone(), s["profile_label"].clone(), s["overall"]["correct"].clone()))
        .collect();
    assert_eq!(
        settings,
        vec![
            (json!("mock-a-builtin-free"), json!("Mock A"), json!(1)),
            (json!("mock-a-builtin-constrained"), json!("Mock A"), json!(1)),
            (json!("mock-b-builtin-free"), json!("mock-b"), json!(1)),
            (json!("mock-b-builtin-constrained"), json!("mock-b"), json!(1)),
        ]
    );
    let raw = read_json(&dir.path().join("out/mock-b-builtin-constrained/calc/raw_model_output.json"));
    // The record says what the brain did: the mock decodes nothing, whatever the setting
    // asked (the setting's name and the report carry the request).
    assert_eq!((&raw["decoding"], &raw["tool_calling"], &raw["profile"]), (&Value::Null, &json!("builtin"), &json!("mock-b")));
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("| profile | Mock A | Mock A | mock-b | mock-b |"), "{md}");
}

#[test]
fn two_runs_compare_case_by_case_and_bad_runs_are_one_clear_error() {
    let dir = workspace();
    let config = config();
    let bench = |outdir: &str, ids: &str| {
        let out = b4(
            dir.path(),
            &[
                "bench", "--model_config", &config, "--cases_dir", "cases", "--tools_schema", "tools_schema.json",
                "--mode", "mock", "--ids", ids, "--outdir", outdir,
            ],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    bench("a", "calc,direct,read");
    bench("b", "calc,direct,multi");
    assert_eq!(read_json(&dir.path().join("a/report.json"))["function_order"], "given");
    // The report gives the accuracy's interval beside it.
    let md = std::fs::read_to_string(dir.path().join("a/report.md")).unwrap();
    assert!(md.contains("| accuracy | 66.7% (2/3) |"), "{md}");
    assert!(md.contains("| accuracy, 95% interval | 20.8-93.9% |"), "{md}");
    let interval = &read_json(&dir.path().join("a/report.json"))["settings"][0]["accuracy_interval"];
    assert!((interval[0].as_f64().unwrap() - 0.2077).abs() < 1e-3, "{interval}");

    let out = b4(dir.path(), &["bench", "--compare", "a", "b/report.json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("mock-prompt_json-free: 2 cases in both"), "{stdout}");
    assert!(stdout.contains("not paired    1 only before, 1 only after"), "{stdout}");
    assert!(stdout.contains("right         1 -> 1 of 2 (50.0% -> 50.0%"), "{stdout}");
    assert!(stdout.contains("0 gained, 0 lost (no verdict moved)"), "{stdout}");
    assert!(stdout.contains("text          the same in all 2"), "{stdout}");

    // A verdict that moved with the same text: the case's expected call changed between the runs.
    let read_case = dir.path().join("cases/read.json");
    let mut case = read_json(&read_case);
    bench("c", "read");
    case["expected"] = json!({"tool_calls": [{"name": "calculator", "args": {"expression": ["1+1"]}}]});
    std::fs::write(&read_case, case.to_string()).unwrap();
    bench("d", "read");
    let out = b4(dir.path(), &["bench", "--compare", "c", "d"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("0 gained, 1 lost (exact McNemar p = 1.000: within chance)"), "{stdout}");
    assert!(stdout.contains("lost          read"), "{stdout}");
    assert!(stdout.contains("text          the same in all 1"), "{stdout}");

    // Another order of the offered functions is run and said so.
    let out = b4(
        dir.path(),
        &[
            "bench", "--model_config", &config, "--cases_dir", "cases", "--tools_schema", "tools_schema.json",
            "--mode", "mock", "--ids", "calc", "--function_order", "reversed", "--outdir", "e",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_json(&dir.path().join("e/report.json"))["function_order"], "reversed");
    let md = std::fs::read_to_string(dir.path().join("e/report.md")).unwrap();
    assert!(md.contains("- functions offered in another order than the cases give: reversed"), "{md}");

    let fail = |args: &[&str]| {
        let out = b4(dir.path(), args);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).trim().to_string())
    };
    let (code, err) = fail(&["bench", "--compare", "a", "nowhere"]);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("error: nowhere: cannot read") && err.lines().count() == 1, "{err}");
    let (code, err) = fail(&["bench", "--compare", "a"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, err) = fail(&["bench", "--mode", "mock", "--cases_dir", "cases"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--outdir"), "{err}");
}
