//! Each grammar is checked through the llguidance matcher on a one-byte-per-token
//! vocabulary: complete sample answers are accepted or rejected as wholes.

use llguidance::toktrie::ApproximateTokEnv;
use serde_json::json;

use super::super::{ConstrainError, TokenSpace};
use super::*;
use crate::tools::spec::ToolSpec;

fn tools() -> Vec<Value> {
    serde_json::from_value(json!([
        {"type": "function", "function": {
            "name": "file_reader",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {
                "path": {"type": "string", "description": "relative path"},
                "max_chars": {"type": "integer", "minimum": 1, "default": 2000}
            }, "required": ["path"]}}},
        {"type": "function", "function": {
            "name": "format_converter",
            "parameters": {"type": "object", "properties": {
                "to": {"type": "string", "enum": ["csv", "json", "markdown"]},
                "options": {"type": "object", "properties": {
                    "sep": {"type": "string"},
                    "header": {"type": "boolean"}
                }, "required": ["sep"]},
                "columns": {"type": "array", "items": {"type": "string"}},
                "threshold": {"type": "number"},
                "extra": {"type": "object"}
            }, "required": ["to"]}}},
        {"name": "clock", "parameters": {"type": "object", "properties": {}}}
    ]))
    .unwrap()
}

struct Check {
    space: TokenSpace,
    grammar: String,
}

impl Check {
    fn new(tools: &[Value], target: Target) -> Self {
        let space = TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap();
        Check { space, grammar: lark(&ToolSpec::parse_all(tools).unwrap(), target) }
    }

    fn accepts(&self, text: &str) -> bool {
        self.space.accepts(&self.grammar, text).unwrap()
    }

    /// Asserts each sample's verdict, listing every wrong one.
    fn verdicts(&self, accept: &[&str], reject: &[&str]) {
        let mut wrong = Vec::new();
        for text in accept {
            if !self.accepts(text) {
                wrong.push(format!("rejected: {text}"));
            }
        }
        for text in reject {
            if self.accepts(text) {
                wrong.push(format!("accepted: {text}"));
            }
        }
        assert!(wrong.is_empty(), "grammar:\n{}\nwrong verdicts:\n{}", self.grammar, wrong.join("\n"));
    }
}

#[test]
fn envelope_is_either_calls_with_empty_content_or_an_answer() {
    Check::new(&tools(), Target::Envelope(KeyOrder::ContentFirst)).verdicts(
        &[
            r#"{"content": "", "tool_calls": [{"id": "call_001", "name": "file_reader", "args": {"path": "docs/agent_intro.txt", "max_chars": 2000}}]}"#,
            r#"{"content":"","tool_calls":[{"name":"file_reader","args":{"path":"a.txt"}},{"name":"clock","args":{}}]}"#,
            r#"{"content": "The answer is 15.7", "tool_calls": []}"#,
            "{\n  \"content\": \"\",\n  \"tool_calls\": [\n    {\n      \"name\": \"clock\",\n      \"args\": {}\n    }\n  ]\n}",
        ],
        &[
            // Content and calls together, or neither.
            r#"{"content": "Reading it.", "tool_calls": [{"name": "clock", "args": {}}]}"#,
            r#"{"content": "", "tool_calls": []}"#,
            r#"{"content": "   ", "tool_calls": []}"#,
            // Unknown tool, missing keys, extra keys.
            r#"{"content": "", "tool_calls": [{"name": "web_search", "args": {"query": "x"}}]}"#,
            r#"{"content": "", "tool_calls": [{"name": "clock"}]}"#,
            r#"{"tool_calls": [{"name": "clock", "args": {}}]}"#,
            r#"{"content": "", "tool_calls": [{"name": "clock", "args": {}, "why": "time"}]}"#,
            // Ids are the prompt's call_NNN, not tool names.
            r#"{"content": "", "tool_calls": [{"id": "clock", "name": "clock", "args": {}}]}"#,
            // Not JSON alone: fences, text around it.
            "```json\n{\"content\": \"hi\", \"tool_calls\": []}\n```",
            r#"{"content": "hi", "tool_calls": []} and more"#,
        ],
    );
}

#[test]
fn arguments_follow_their_own_tools_parameters() {
    let call = |name: &str, args: &str| format!(r#"{{"content": "", "tool_calls": [{{"name": "{name}", "args": {args}}}]}}"#);
    let accept = [
        call("file_reader", r#"{"path": "a.txt"}"#),
        call("file_reader", r#"{"path": "a.txt", "max_chars": 1}"#),
        call("format_converter", r#"{"to": "markdown"}"#),
        call("format_converter", r#"{"to": "csv", "options": {"sep": ";", "header": true}, "columns": ["a", "b"], "threshold": -0.5e2}"#),
        call("format_converter", r#"{"to": "json", "extra": {"anything": [1, {"deep": null}]}}"#),
    ];
    let reject = [
        // Required parameter missing; a parameter of another tool (name and args disagree).
        call("file_reader", r#"{"max_chars": 5}"#),
        call("file_reader", r#"{"to": "csv"}"#),
        // Types and bounds.
        call("file_reader", r#"{"path": "a.txt", "max_chars": "2000"}"#),
        call("file_reader", r#"{"path": "a.txt", "max_chars": 1.5}"#),
        call("file_reader", r#"{"path": "a.txt", "max_chars": 0}"#),
        call("file_reader", r#"{"path": 7}"#),
        // Enum.
        call("format_converter", r#"{"to": "xml"}"#),
        // Nested object: required key, closed keys, typed values.
        call("format_converter", r#"{"to": "csv", "options": {"header": true}}"#),
        call("format_converter", r#"{"to": "csv", "options": {"sep": ",", "quote": "'"}}"#),
        call("format_converter", r#"{"to": "csv", "options": {"sep": ",", "header": "yes"}}"#),
        // Arrays of strings.
        call("format_converter", r#"{"to": "csv", "columns": [1, 2]}"#),
        call("format_converter", r#"{"to": "csv", "columns": "a,b"}"#),
        call("format_converter", r#"{"to": "csv", "threshold": "high"}"#),
        // Extra parameter.
        call("file_reader", r#"{"path": "a.txt", "encoding": "utf-8"}"#),
    ];
    let accept: Vec<&str> = accept.iter().map(String::as_str).collect();
    let reject: Vec<&str> = reject.iter().map(String::as_str).collect();
    Check::new(&tools(), Target::Envelope(KeyOrder::ContentFirst)).verdicts(&accept, &reject);
}

#[test]
fn strings_take_chinese_and_json_escapes() {
    Check::new(&tools(), Target::Envelope(KeyOrder::ContentFirst)).verdicts(
        &[
            r#"{"content": "", "tool_calls": [{"name": "file_reader", "args": {"path": "数据/销售报表.csv"}}]}"#,
            r#"{"content": "文件说：\"Agent 系统\"\n第二行\t完", "tool_calls": []}"#,
            r#"{"content": "", "tool_calls": [{"name": "file_reader", "args": {"path": "C:\\docs\\a.txt"}}]}"#,
            r#"{"content": "", "tool_calls": [{"name": "file_reader", "args": {"path": "\u4e2d\u6587.txt"}}]}"#,
            r#"{"content": "emoji 🎉 and \u000b", "tool_calls": []}"#,
        ],
        &[
            // A raw line break inside a string, an escape JSON does not have, a lone surrogate.
            "{\"content\": \"line one\nline two\", \"tool_calls\": []}",
            r#"{"content": "C:\docs", "tool_calls": []}"#,
            r#"{"content": "\ud800 alone", "tool_calls": []}"#,
        ],
    );
}

#[test]
fn native_hermes_is_an_answer_or_call_blocks_or_fenced_calls() {
    Check::new(&tools(), Target::Native(NativeStyle::Hermes)).verdicts(
        &[
            "<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"docs/agent_intro.txt\"}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"format_converter\", \"arguments\": {\"to\": \"csv\"}}\n</tool_call>\n",
            "<tool_call>{\"name\":\"clock\",\"arguments\":{}}</tool_call>",
            "文件里写的是 Agent 系统。",
            "3.14 * 5 = 15.7\n\nDone.",
            "The table:\n```\n| a | b |\n```",
            "```python\nprint(3.14 * 5)\n```",
            // The 0.5B model's own way, calls in a JSON fence: held to an array of them.
            "```json\n[{\"name\": \"file_reader\", \"arguments\": {\"path\": \"a.txt\"}}]\n```",
            "```json\n[\n  {\"name\": \"clock\", \"arguments\": {}},\n  {\"name\": \"format_converter\", \"arguments\": {\"to\": \"csv\"}}\n]\n```\n",
            "```\n[{\"name\": \"clock\", \"arguments\": {}}]\n```\n```json\n[{\"name\": \"clock\", \"arguments\": {}}]\n```",
        ],
        &[
            // Narration with a call; a call in a fence; JSON as an answer.
            "I'll read it.\n<tool_call>\n{\"name\": \"clock\", \"arguments\": {}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"clock\", \"arguments\": {}}\n</tool_call>\nDone.",
            "{\"name\": \"clock\", \"arguments\": {}}",
            "Here it is:\n```json\n{\"name\": \"clock\", \"arguments\": {}}\n```",
            // A JSON fence holds calls and nothing else, to known tools with valid arguments.
            "```json\n[\"file_reader\", \"calculator\"]\n```",
            "```\nname: clock\n```",
            "```json\n[]\n```",
            "```json\n[{\"name\": \"web_search\", \"arguments\": {}}]\n```",
            "```json\n[{\"name\": \"file_reader\", \"arguments\": {\"path\": 3}}]\n```",
            "```json\n[{\"name\": \"clock\", \"arguments\": {}}]\n```\nDone.",
            // A single call in a fence: the model would close it after one call of many.
            "```json\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"a.txt\"}}\n```",
            // Unknown tool, the envelope's key, bad arguments, an unclosed block.
            "<tool_call>\n{\"name\": \"web_search\", \"arguments\": {}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"clock\", \"args\": {}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"max_chars\": 3}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"clock\", \"arguments\": {}}",
            // Nothing visible; reasoning tags.
            "",
            " \n ",
            "<think>hmm</think>answer",
        ],
    );
}

#[test]
fn native_xml_types_each_parameter() {
    let xml = |params: &str| format!("<tool_call>\n<function=file_reader>\n{params}</function>\n</tool_call>");
    let accept = [
        xml("<parameter=path>\ndocs/agent_intro.txt\n</parameter>\n<parameter=max_chars>\n2000\n</parameter>\n"),
        xml("<parameter=path>\n路径 with <angle> & spaces\n</parameter>\n"),
        "<tool_call>\n<function=format_converter>\n<parameter=to>\ncsv\n</parameter>\n<parameter=options>\n{\"sep\": \",\", \"header\": false}\n</parameter>\n<parameter=columns>\n[\"a\"]\n</parameter>\n</function>\n</tool_call>".into(),
        "<tool_call>\n<function=clock>\n</function>\n</tool_call>".into(),
        "The time is noon.".into(),
    ];
    let reject = [
        xml("<parameter=path>\na.txt\n</parameter>\n<parameter=max_chars>\nmany\n</parameter>\n"),
        xml("<parameter=max_chars>\n5\n</parameter>\n"),
        xml("<parameter=path>\na.txt\n</parameter>\n<parameter=encoding>\nutf-8\n</parameter>\n"),
        "<tool_call>\n<function=format_converter>\n<parameter=to>\nxml\n</parameter>\n</function>\n</tool_call>".into(),
        "<tool_call>\n<function=web_search>\n</function>\n</tool_call>".into(),
    ];
    let accept: Vec<&str> = accept.iter().map(String::as_str).collect();
    let reject: Vec<&str> = reject.iter().map(String::as_str).collect();
    Check::new(&tools(), Target::Native(NativeStyle::Xml)).verdicts(&accept, &reject);
}

#[test]
fn plan_is_steps_with_calls_or_a_direct_answer() {
    Check::new(&tools(), Target::Plan).verdicts(
        &[
            r#"{"reasoning": "先读再转换", "plan": [{"step": 1, "description": "Read the document", "tool_call": {"name": "file_reader", "args": {"path": "docs/a.txt"}}}, {"step": 2, "description": "Convert", "tool_call": {"name": "format_converter", "args": {"to": "csv"}}}]}"#,
            r#"{"content": "No tool is needed: 2+2 is 4.", "tool_calls": []}"#,
        ],
        &[
            r#"{"reasoning": "nothing to do", "plan": []}"#,
            r#"{"reasoning": "r", "plan": [{"step": 1, "description": "Think"}]}"#,
            r#"{"reasoning": "r", "plan": [{"step": "1", "description": "d", "tool_call": {"name": "clock", "args": {}}}]}"#,
            r#"{"reasoning": "r", "plan": [{"step": 1, "description": "d", "tool_call": {"name": "web_search", "args": {}}}]}"#,
            r#"{"content": "", "tool_calls": [{"name": "clock", "args": {}}]}"#,
        ],
    );
}

#[test]
fn without_tools_only_answers_are_possible() {
    Check::new(&[], Target::Envelope(KeyOrder::ContentFirst)).verdicts(
        &[r#"{"content": "你好！", "tool_calls": []}"#],
        &[r#"{"content": "", "tool_calls": [{"name": "clock", "args": {}}]}"#],
    );
    Check::new(&[], Target::Native(NativeStyle::Hermes))
        .verdicts(&["Hello!"], &["<tool_call>\n{\"name\": \"clock\", \"arguments\": {}}\n</tool_call>"]);
    Check::new(&[], Target::Plan).verdicts(
        &[r#"{"content": "Nothing to plan.", "tool_calls": []}"#],
        &[r#"{"reasoning": "r", "plan": [{"step": 1, "description": "d", "tool_call": {"name": "clock", "args": {}}}]}"#],
    );
}

#[test]
fn parameter_objects_are_closed_unless_free_form() {
    let specs = ToolSpec::parse_all(&tools()).unwrap();
    let tools = grammar_tools(&specs);
    let converter = tools.iter().find(|t| t.spec.name == "format_converter").unwrap();
    assert_eq!(
        converter.args,
        json!({"type": "object", "properties": {
            "to": {"type": "string", "enum": ["csv", "json", "markdown"]},
            "options": {"type": "object", "properties": {
                "sep": {"type": "string", "maxLength": MAX_STRING_CHARS},
                "header": {"type": "boolean"}
            }, "required": ["sep"], "additionalProperties": false},
            "columns": {"type": "array", "items": {"type": "string", "maxLength": MAX_STRING_CHARS}},
            "threshold": {"type": "number"},
            "extra": {"type": "object"}
        }, "required": ["to"], "additionalProperties": false})
    );
    // A tool without a parameters schema takes an empty object.
    let ping = ToolSpec::parse(&json!({"name": "ping"}), 0).unwrap();
    assert_eq!(grammar_tools(std::slice::from_ref(&ping)), vec![Tool { spec: &ping, args: json!({"type": "object", "properties": {}, "additionalProperties": false}) }]);
    // A repeated name: the first definition is the tool.
    let again = ToolSpec::parse(&json!({"name": "ping", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}), 1).unwrap();
    let both = [ping.clone(), again];
    assert_eq!(grammar_tools(&both).iter().map(|t| t.spec).collect::<Vec<_>>(), [&ping]);
}

/// A string argument stops at MAX_STRING_CHARS characters (a looping model cannot run it
/// into the token budget); schemas with their own bound keep it.
#[test]
fn string_arguments_are_bounded() {
    let call = |path: &str| format!(r#"{{"tool_calls": [{{"id": "call_001", "name": "file_reader", "args": {{"path": "{path}"}}}}], "content": ""}}"#);
    let longest = "a".repeat(MAX_STRING_CHARS as usize);
    let too_long = "a".repeat(MAX_STRING_CHARS as usize + 1);
    Check::new(&tools(), Target::Envelope(KeyOrder::CallsFirst)).verdicts(&[&call(&longest), &call("docs/a.txt")], &[&call(&too_long)]);
    let own = ToolSpec::parse_all(&[json!({"name": "t", "parameters": {"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 4000}, "e": {"type": "string", "enum": ["x"]}
    }}})])
    .unwrap();
    assert_eq!(grammar_tools(&own)[0].args["properties"], json!({"s": {"type": "string", "maxLength": 4000}, "e": {"type": "string", "enum": ["x"]}}));
}

#[test]
fn a_tools_schema_that_does_not_read_is_a_constraint_error() {
    let err = ToolSpec::parse_all(&[json!({"type": "function", "function": {"parameters": {}}})]).unwrap_err();
    assert_eq!(ConstrainError::from(err).to_string(), "tools schema, tool 0: no function.name");
}

#[test]
fn the_native_style_comes_from_the_chat_template() {
    assert_eq!(NativeStyle::of_template("{{- '<tool_call>\\n{\"name\": ...' }}"), NativeStyle::Hermes);
    assert_eq!(NativeStyle::of_template("{{- '<tool_call>\\n<function=' + tool_call.name + '>\\n' }}"), NativeStyle::Xml);
}

#[test]
fn calls_first_envelope_puts_the_decision_first() {
    Check::new(&tools(), Target::Envelope(KeyOrder::CallsFirst)).verdicts(
        &[
            r#"{"tool_calls": [{"id": "call_001", "name": "clock", "args": {}}], "content": ""}"#,
            r#"{"tool_calls":[],"content":"你好！"}"#,
        ],
        &[
            r#"{"content": "", "tool_calls": [{"name": "clock", "args": {}}]}"#,
            r#"{"tool_calls": [{"name": "clock", "args": {}}], "content": "Reading the clock."}"#,
            r#"{"tool_calls": [], "content": ""}"#,
        ],
    );
}

#[test]
fn a_decision_holds_at_most_max_calls() {
    let call = r#"{"name": "clock", "args": {}}"#;
    let envelope = |n: usize| format!(r#"{{"content": "", "tool_calls": [{}]}}"#, vec![call; n].join(", "));
    Check::new(&tools(), Target::Envelope(KeyOrder::ContentFirst))
        .verdicts(&[&envelope(1), &envelope(MAX_CALLS)], &[&envelope(MAX_CALLS + 1)]);
    let block = "<tool_call>\n{\"name\": \"clock\", \"arguments\": {}}\n</tool_call>";
    let blocks = |n: usize| vec![block; n].join("\n");
    Check::new(&tools(), Target::Native(NativeStyle::Hermes))
        .verdicts(&[&blocks(1), &blocks(MAX_CALLS)], &[&blocks(MAX_CALLS + 1)]);
}
