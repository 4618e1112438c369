//! Qwen3-Coder / Qwen3.5 XML calls:
//! `<tool_call>\n<function=NAME>\n<parameter=KEY>\nvalue\n</parameter>\n</function>\n</tool_call>`,
//! asked for when the chat template writes `<function=`; values typed by the tool's schema.

use serde_json::Value;

use super::native;
use crate::brain::constrain::grammar::{json_grammar, literal, prepared, Tool};
use crate::brain::parse::{remove_blocks, strip_fence_markers, tag_blocks, typed_value, Ctx, Found};
use crate::protocol::{Args, ToolCall};
use crate::tools::spec::{ParamKind, Schema};

// ---------------------------------------------------------------------------------------
// Grammar

/// Qwen3-Coder's XML calls: parameters in the schema's order, required ones present,
/// each value typed by its schema (strings run to `</parameter>`).
pub(crate) fn lark(tools: &[Tool]) -> String {
    let mut out = native::lark_start(tools, "call: \"<tool_call>\" SEP? function SEP? \"</tool_call>\"\n");
    if tools.is_empty() {
        return out;
    }
    let functions: Vec<String> = (0..tools.len()).map(|i| format!("f{i}")).collect();
    out.push_str(&format!("function: {}\n", functions.join(" | ")));
    let mut needs_newline = false;
    for (i, tool) in tools.iter().enumerate() {
        let mut params = String::new();
        for (j, param) in tool.spec.params().iter().enumerate() {
            let rule = format!("f{i}p{j}");
            params.push(' ');
            params.push_str(&rule);
            if !tool.spec.required().contains(&param.name) {
                params.push('?');
            }
            let open = literal(&format!("<parameter={}>", param.name));
            match xml_value(&param.schema) {
                XmlValue::Text => {
                    out.push_str(&format!("{rule}: {open} {rule}v SEP?\n"));
                    out.push_str(&format!("{rule}v[suffix=\"</parameter>\"]: /(?s:.*)/\n"));
                }
                XmlValue::Choices(choices) => {
                    needs_newline = true;
                    let choices: Vec<String> = choices.iter().map(|c| literal(c)).collect();
                    out.push_str(&format!("{rule}: {open} NL? ({}) NL? \"</parameter>\" SEP?\n", choices.join(" | ")));
                }
                XmlValue::Json(schema) => {
                    needs_newline = true;
                    out.push_str(&format!("{rule}: {open} NL? {rule}v NL? \"</parameter>\" SEP?\n"));
                    out.push_str(&format!("{rule}v: %json {}\n", json_grammar(schema)));
                }
            }
        }
        let open = literal(&format!("<function={}>", tool.spec.name));
        out.push_str(&format!("f{i}: {open} SEP?{params} \"</function>\"\n"));
    }
    if needs_newline {
        out.push_str("NL: /\\n/\n");
    }
    out
}

enum XmlValue {
    /// Free text up to `</parameter>`.
    Text,
    /// One of these strings, as they are.
    Choices(Vec<String>),
    /// A JSON value of this schema (numbers, booleans, arrays, objects).
    Json(Value),
}

fn xml_value(schema: &Schema) -> XmlValue {
    let strings = |list: &Vec<Value>| -> Option<Vec<String>> { list.iter().map(|v| v.as_str().map(str::to_string)).collect() };
    if let Some(choices) = schema.enum_values.as_ref().and_then(strings) {
        return XmlValue::Choices(choices);
    }
    if let Some(Value::String(only)) = &schema.constant {
        return XmlValue::Choices(vec![only.clone()]);
    }
    match schema.kinds.as_slice() {
        // Values are bare text here, and the parser reads booleans in any case.
        [ParamKind::Boolean] => XmlValue::Choices(["true", "false", "True", "False"].map(String::from).to_vec()),
        [ParamKind::Integer | ParamKind::Number | ParamKind::Array | ParamKind::Object] => XmlValue::Json(prepared(&schema.raw)),
        _ => XmlValue::Text,
    }
}

// ---------------------------------------------------------------------------------------
// Parser

/// Qwen3-Coder / Qwen3.5 native calls:
/// `<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>`,
/// values typed by the tool's schema.
pub(super) fn qwen_xml(text: &str, ctx: &Ctx) -> Option<Result<Found, String>> {
    const OPEN: &str = "<function=";
    const CLOSE: &str = "</function>";
    if !text.contains(OPEN) {
        return None;
    }
    let mut calls = Vec::new();
    for (_, inner, closed) in tag_blocks(text, OPEN, CLOSE) {
        let block = &text[inner];
        let Some(gt) = block.find('>') else {
            calls.push(Err("a <function= tag cut off before its name ended".to_string()));
            continue;
        };
        let name = block[..gt].trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        let mut body = &block[gt + 1..];
        let mut closed = closed;
        // A missing </function> before </tool_call> is a finished call all the same.
        if let Some(end) = body.find("</tool_call>").filter(|_| !closed) {
            body = &body[..end];
            closed = true;
        }
        calls.push(xml_call(name, body, closed, ctx));
    }
    let content = remove_blocks(&remove_blocks(text, "<tool_call>", "</tool_call>"), OPEN, CLOSE);
    let content = strip_fence_markers(&content.replace("</tool_call>", "")).trim().to_string();
    if calls.iter().all(Result::is_err) {
        let reason = calls.into_iter().find_map(Result::err).unwrap_or_default();
        return Some(Err(reason));
    }
    Some(Ok(Found { content, calls, plan: None }))
}

fn xml_call(name: String, body: &str, closed: bool, ctx: &Ctx) -> Result<ToolCall, String> {
    const OPEN: &str = "<parameter=";
    const CLOSE: &str = "</parameter>";
    if name.is_empty() {
        return Err("a <function=> tag without a tool name".into());
    }
    let mut args = Args::new();
    for (_, inner, param_closed) in tag_blocks(body, OPEN, CLOSE) {
        let runs_to_end = inner.end == body.len();
        let block = &body[inner];
        let Some(gt) = block.find('>') else {
            return Err(format!("{name}: a <parameter= tag cut off"));
        };
        // Without </parameter> the value runs to the next tag; at the very end of a cut-off
        // output it may be incomplete, so the call is refused.
        if !param_closed && !closed && runs_to_end {
            return Err(format!("{name}: the output ended inside a parameter"));
        }
        let key = block[..gt].trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        let value = typed_value(&block[gt + 1..], ctx.param_kind(&name, &key));
        args.insert(key, value);
    }
    Ok(ToolCall { id: String::new(), name, args })
}
