//! Calls (or an envelope, or a plan) in Markdown JSON fences: small models write their
//! calls so despite their template (`MODELS.md`), so the native grammars allow fences of
//! Hermes-style calls and the parser reads any JSON decision in a fence.

use std::ops::Range;

use serde_json::json;

use crate::brain::constrain::grammar::{any_call, json_grammar, Tool, MAX_CALLS};
use crate::brain::parse::{cut_out, has_shape, interpret, scan_json, starts_json, Ctx, Found};

/// The opening of a fenced JSON block.
const FENCE_OPEN: &str = r"/```(json)?[ \t]*\n/";

/// The native grammars' `fences` rule: one to [`MAX_CALLS`] fences, each holding an array
/// of calls (`SEP`, whitespace between tags, is the native grammar's).
///
/// An array, not a single call: the 0.5B opens its fence with `{` when it may, writes one
/// call and closes the fence, however many things the request asks for (0 of 66 parallel
/// requests on the dev split got two calls); held to `[`, it lists one call per item
/// (29 of 66), and a single call is an array of one.
pub(crate) fn lark_rules(tools: &[Tool]) -> String {
    let more = MAX_CALLS - 1;
    let mut out = format!("fences: fence (SEP? fence){{0,{more}}} SEP?\n");
    out.push_str("fence: FENCE_OPEN fenced_calls SEP? \"```\"\n");
    let fenced = json!({"type": "array", "minItems": 1, "maxItems": MAX_CALLS, "items": any_call(tools, "arguments", false)});
    out.push_str(&format!("fenced_calls: %json {}\n", json_grammar(fenced)));
    out.push_str(&format!("FENCE_OPEN: {FENCE_OPEN}\n"));
    out
}

/// JSON in Markdown fences (```json or bare ```), one or many: an envelope, a single call
/// (the 0.5B model's habit), an array of calls, a plan.
pub(super) fn fenced_json(text: &str, _: &Ctx) -> Option<Result<Found, String>> {
    let blocks: Vec<Fence> = fences(text)
        .into_iter()
        .filter(|f| {
            let lang = f.lang.to_ascii_lowercase();
            (lang.is_empty() || lang.contains("json") || lang == "tool_call") && starts_json(f.inner.trim())
        })
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let mut values = Vec::new();
    let mut first_error = None;
    for block in &blocks {
        let scan = scan_json(block.inner, false, has_shape);
        if scan.values.is_empty() {
            first_error = first_error.or(scan.first_error);
        }
        values.extend(scan.values.into_iter().map(|(v, _)| v));
    }
    let outside = cut_out(text, blocks.iter().map(|b| b.outer.clone()));
    // Well-formed JSON of another shape is an example in an answer, not a decision.
    match interpret(values, &outside) {
        Some(found) => Some(Ok(found)),
        None => first_error.map(Err),
    }
}

struct Fence<'a> {
    lang: &'a str,
    inner: &'a str,
    outer: Range<usize>,
}

/// Markdown code fences; an unclosed one runs to the end of the text.
fn fences(text: &str) -> Vec<Fence<'_>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(offset) = text[pos..].find("```") {
        let open = pos + offset;
        let after = open + 3;
        let line_end = text[after..].find('\n').map_or(text.len(), |n| after + n);
        let tag = text[after..line_end].trim();
        let is_lang = tag.chars().all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c));
        let (lang, inner_start) = if is_lang { (tag, (line_end + 1).min(text.len())) } else { ("", after) };
        let (inner_end, outer_end) = match text[inner_start..].find("```") {
            Some(c) => (inner_start + c, inner_start + c + 3),
            None => (text.len(), text.len()),
        };
        out.push(Fence { lang, inner: &text[inner_start..inner_end], outer: open..outer_end });
        pos = outer_end;
    }
    out
}
