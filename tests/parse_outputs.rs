//! Raw model outputs in `tests/fixtures/outputs/` parsed against the bench tools.
//!
//! Each `NAME.txt` is one raw output; `NAME.json` says what it must parse to:
//! `{"phase": "react"|"plan"|"step", "parsed": {content, tool_calls, plan, reasoning,
//! format, rejected}}` or `{"phase": ..., "error": "<ParseError text>"}`.
//! `style_*` files are written in the shape real models answer (the seeds' Qwen3.5 run,
//! MODELS.md's note on the 0.5B model); outputs captured from the real model go in as
//! `captured_*` with the same two files.

use std::path::Path;

use b4_agent::brain::parse::{parse, Parsed};
use b4_agent::protocol::Phase;
use serde_json::{json, Value};

fn as_json(parsed: &Parsed) -> Value {
    json!({
        "content": parsed.content,
        "tool_calls": parsed.tool_calls,
        "plan": parsed.plan,
        "reasoning": parsed.reasoning,
        "format": parsed.format,
        "rejected": parsed.rejected,
    })
}

#[test]
fn every_fixture_output_parses_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/outputs");
    let tools: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("tools.json")).unwrap()).unwrap();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "fixtures missing in {}", dir.display());

    for raw_path in names {
        let raw = std::fs::read_to_string(&raw_path).unwrap();
        let expected_path = raw_path.with_extension("json");
        let expected: Value = serde_json::from_str(&std::fs::read_to_string(&expected_path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let phase: Phase = serde_json::from_value(expected["phase"].clone()).unwrap();
        let got = match parse(&raw, &tools, phase) {
            Ok(parsed) => json!({"phase": expected["phase"], "parsed": as_json(&parsed)}),
            Err(e) => json!({"phase": expected["phase"], "error": e.to_string()}),
        };
        let shown = serde_json::to_string_pretty(&got).unwrap_or_default();
        assert_eq!(got, expected, "{}: it parsed to\n{shown}", raw_path.display());
    }
}
