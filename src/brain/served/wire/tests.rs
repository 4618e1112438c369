use serde_json::json;

use super::*;
use crate::protocol::{AiMessage, ToolCall};

fn profile(server: ServerKind) -> Profile {
    Profile { name: "srv".into(), server, max_new_tokens: 64, ..Profile::default() }
}

#[test]
fn the_body_is_greedy_streamed_and_carries_builtins_tools() {
    let tools = vec![json!({"type": "function", "function": {"name": "calculator"}})];
    let body = body(&profile(ServerKind::Generic), "qwen", vec![json!({"role": "user", "content": "hi"})], Some(&tools), None);
    assert_eq!(
        body,
        json!({
            "model": "qwen",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": tools,
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 64,
            "temperature": 0.0,
            "top_p": 1.0,
            "seed": 42,
        })
    );
    // llama.cpp gets its repeat penalty turned off; no tools, no `tools` key.
    let body = super::body(&profile(ServerKind::LlamaCppPython), "qwen", vec![], Some(&[]), None);
    assert_eq!(body["repeat_penalty"], json!(1.0));
    assert!(body.get("tools").is_none());
}

#[test]
fn each_server_gets_the_constraint_in_its_own_field() {
    let schema = json!({"type": "object"});
    let fields = |server| Value::Object(constraint_fields(server, &Constraint::JsonSchema(schema.clone())));
    assert_eq!(fields(ServerKind::LlamaCppPython), json!({"response_format": {"type": "json_object", "schema": schema}}));
    let answer = json!({"anyOf": [{"properties": {
        "tool_calls": {"type": "array", "maxItems": 0},
        "content": {"type": "string", "pattern": "\\S"},
        "date": {"type": "string", "pattern": "^[0-9]{4}$"},
    }}]});
    assert_eq!(
        for_llama_cpp(&answer),
        json!({"anyOf": [{"properties": {
            "tool_calls": {"const": []},
            "content": {"type": "string", "minLength": 1},
            "date": {"type": "string", "pattern": "^[0-9]{4}$"},
        }}]})
    );
    assert_eq!(fields(ServerKind::LlamaCpp), json!({"json_schema": schema}));
    assert_eq!(fields(ServerKind::Vllm), json!({"structured_outputs": {"json": schema}}));
    assert_eq!(
        fields(ServerKind::Generic),
        json!({"response_format": {"type": "json_schema", "json_schema": {"name": "decision", "schema": schema, "strict": true}}})
    );
    let lark = Value::Object(constraint_fields(ServerKind::Vllm, &Constraint::Lark("start: \"x\"".into())));
    assert_eq!(lark, json!({"structured_outputs": {"grammar": "start: \"x\""}}));
}

#[test]
fn tool_messages_and_calls_get_their_ids_and_arguments_as_text() {
    let read = ToolCall { id: "call_007".into(), name: "file_reader".into(), args: json!({"path": "a.txt"}).as_object().unwrap().clone() };
    let conversation = vec![
        Message::user("read a.txt"),
        Message::Assistant(AiMessage::calls(vec![read.clone()])),
        Message::Tool(ToolMessage::success(&read, json!({"content": "A"}))),
    ];
    let built = vec![
        json!({"role": "user", "content": "read a.txt"}),
        json!({"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "file_reader", "arguments": {"path": "a.txt"}}}]}),
        json!({"role": "tool", "name": "file_reader", "content": "{\"status\":\"success\"}"}),
        json!({"role": "user", "content": "reminder"}),
    ];
    let wired = messages(&built, &conversation);
    assert_eq!(wired[1]["tool_calls"][0], json!({"id": "call_007", "type": "function", "function": {"name": "file_reader", "arguments": "{\"path\":\"a.txt\"}"}}));
    assert_eq!(wired[2]["tool_call_id"], json!("call_007"));
    assert_eq!(wired[3], built[3]);
    // prompt_json writes decisions as envelope text: the tool message still gets its id.
    let envelope = vec![built[0].clone(), json!({"role": "assistant", "content": "{\"tool_calls\":[]}"}), built[2].clone()];
    assert_eq!(messages(&envelope, &conversation)[2]["tool_call_id"], json!("call_007"));
}

#[test]
fn events_are_read_however_the_bytes_are_split() {
    let text = "data: {\"a\":1}\r\n\r\n: ping\n\ndata: {\"b\":\ndata: 2}\n\ndata: [DONE]\n\n";
    let mut whole = EventStream::default();
    assert_eq!(whole.push(text.as_bytes()), vec!["{\"a\":1}", "{\"b\":\n2}", "[DONE]"]);
    let mut bytewise = EventStream::default();
    let events: Vec<String> = text.as_bytes().iter().flat_map(|b| bytewise.push(&[*b])).collect();
    assert_eq!(events, vec!["{\"a\":1}", "{\"b\":\n2}", "[DONE]"]);
    let mut cut = EventStream::default();
    assert!(cut.push(b"data: {\"c\":3}").is_empty());
    assert_eq!(cut.finish().as_deref(), Some("{\"c\":3}"));
    assert_eq!(cut.finish(), None);
}

#[test]
fn streamed_deltas_build_the_text_the_calls_and_the_figures() {
    let mut completion = Completion::default();
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "short"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "I'll read "}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "它."}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "x", "function": {"name": "file_reader", "arguments": "{\"pa"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"a.txt\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 90, "completion_tokens": 12, "prompt_tokens_details": {"cached_tokens": 64}}}),
    ];
    let shown: String = chunks.iter().map(|c| completion.apply(c).unwrap()).collect();
    assert_eq!(shown, "<think>\nshort\n</think>\n\nI'll read 它.");
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(completion.usage, Some(Usage { prompt_tokens: 90, completion_tokens: 12, cached_tokens: 64 }));
    assert_eq!(completion.server_calls(), 1);
    assert_eq!(
        completion.raw_text(),
        "<think>\nshort\n</think>\n\nI'll read 它.\n<tool_call>\n{\"name\":\"file_reader\",\"arguments\":{\"path\":\"a.txt\"}}\n</tool_call>"
    );
}

#[test]
fn a_whole_response_reads_like_a_stream() {
    let mut completion = Completion::default();
    let whole = json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"2+2\"}"}},
            {"id": "b", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "3*3"}}}
        ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    });
    completion.apply(&whole).unwrap();
    assert_eq!(completion.server_calls(), 2);
    assert!(completion.raw_text().ends_with("<tool_call>\n{\"name\":\"calculator\",\"arguments\":{\"expression\":\"3*3\"}}\n</tool_call>"));
}

#[test]
fn errors_and_hostile_chunks_are_one_line_not_a_panic() {
    let mut completion = Completion::default();
    assert_eq!(completion.apply(&json!({"error": {"message": "model crashed"}})).unwrap_err(), "model crashed");
    assert!(completion.apply(&json!({"id": 1})).unwrap_err().starts_with("a chunk without choices"));
    let huge = json!({"choices": [{"delta": {"tool_calls": [{"index": 4000000000u64, "function": {"name": "x"}}]}}]});
    assert!(completion.apply(&huge).unwrap_err().contains("more than 64"));
    assert_eq!(error_message(r#"{"error":{"message":"Invalid API Key","code":401}}"#), "Invalid API Key");
    assert_eq!(error_message(r#"{"detail":"Not Found"}"#), "Not Found");
    assert_eq!(error_message("<html>\n bad gateway </html>"), "<html> bad gateway </html>");
}
