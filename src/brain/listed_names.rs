//! One call for each name a request lists, where the model called for the first alone.
//!
//! Read off the second batch's dev part (2026-12-06): asked for "上海和成都的平均霜冻日期"
//! or "current weather in Seoul and in Busan", the 0.5B calls the tool for the first name
//! and moves on (or its second call is dropped for a value nobody wrote). The names are not
//! an enum's choices ([`super::choice_names::fan_out`] does those): they are free strings,
//! so a list is read only where it is plain: the value the call holds, written in the
//! request, and right after it a joiner (`和`, `、`, `and`, `,`) and another name (a run of
//! two Chinese characters or more up to a particle like `的`, or capitalised English words).

use serde_json::Value;

use crate::protocol::ToolCall;
use crate::tools::spec::ToolSpec;

/// Adds, for each tool of `calls` with a required free-string parameter whose value the
/// request lists with other names right after it, a call of that tool for each name no
/// call holds yet (a copy of the call, that parameter set to the name). Nothing is done
/// where another argument of the decision holds one of the names (`Asia/Tokyo` for
/// "Tokyo"), where the tool's calls already number the list's names, or where two
/// parameters of a tool could take a list. Returns one line per tool fanned out
/// (`tool: param 上海, 成都`).
pub fn fan_out(calls: &mut Vec<ToolCall>, tools: &[ToolSpec], question: &str) -> Vec<String> {
    let mut changed = Vec::new();
    for name in super::choice_names::tools_called(calls) {
        let Some(tool) = tools.iter().find(|t| t.name == name) else { continue };
        let mine: Vec<usize> = (0..calls.len()).filter(|&i| calls[i].name == name).collect();
        let mut candidates: Vec<(String, usize, Vec<String>)> = Vec::new();
        for param in tool.params() {
            let free_string = param.schema.enum_values.is_none() && param.schema.kinds.iter().all(|k| k.as_str() == "string");
            if !free_string || !tool.required().contains(&param.name) {
                continue;
            }
            for &i in &mine {
                let Some(value) = calls[i].args.get(&param.name).and_then(Value::as_str) else { continue };
                let list = list_from(question, value);
                if list.len() >= 2 {
                    candidates.push((param.name.clone(), i, list));
                    break;
                }
            }
        }
        let [(param, from, list)] = &candidates[..] else { continue };
        if mine.len() >= list.len() {
            continue;
        }
        // Names another argument holds are not this list's to fan out.
        let held_elsewhere = |item: &str| {
            let item = item.to_lowercase();
            calls.iter().enumerate().any(|(i, call)| {
                call.args.iter().any(|(k, v)| !(mine.contains(&i) && k == param) && v.as_str().is_some_and(|s| s.to_lowercase().contains(&item)))
            })
        };
        if list.iter().any(|item| held_elsewhere(item)) {
            continue;
        }
        let held: Vec<&str> = mine.iter().filter_map(|&i| calls[i].args.get(param).and_then(Value::as_str)).collect();
        let missing: Vec<String> = list.iter().filter(|item| !held.contains(&item.as_str())).cloned().collect();
        if missing.is_empty() {
            continue;
        }
        let mut at = *mine.last().unwrap_or(from) + 1;
        for item in &missing {
            let mut call = calls[*from].clone();
            call.args.insert(param.clone(), Value::String(item.clone()));
            let taken = |id: &str| calls.iter().any(|c| c.id == id);
            call.id = (1..).map(|k| format!("call_{k:03}")).find(|id| !taken(id)).unwrap_or_default();
            calls.insert(at, call);
            at += 1;
        }
        changed.push(format!("{name}: {param} {}", list.join(", ")));
    }
    changed
}

/// The names `question` lists starting with `value`: `value` as written there, then each
/// name that follows a joiner ("上海和成都的": 上海, 成都; "Seoul and in Busan": Seoul,
/// Busan; "A、B 和 C"). Just `value` where nothing plain follows it.
fn list_from(question: &str, value: &str) -> Vec<String> {
    let value = value.trim();
    let mut list = vec![value.to_string()];
    if value.is_empty() {
        return list;
    }
    let Some(at) = question.find(value) else { return list };
    let mut rest = &question[at + value.len()..];
    while let Some((name, after)) = next_name(rest) {
        // A Chinese "name" much longer than the value runs on into the sentence ("北京和朋友吃饭").
        let too_long = name.chars().any(crate::text::is_cjk) && name.chars().count() > value.chars().count() + 2;
        if list.contains(&name) || too_long {
            break;
        }
        list.push(name);
        rest = after;
    }
    list
}

/// What joins names in a list; a comma only English ones (`，` parts clauses, not names).
const JOINERS: &[&str] = &["以及", "还有", "和", "与", "及", "跟", "、", ",", " and ", " & "];
const PREPOSITIONS: &[&str] = &["in ", "at ", "for ", "of ", "and "];
/// What ends a Chinese name: particles, measure words, joiners and the like (not `都`,
/// `上`: 成都, 上海).
const STOPS: &[&str] = &[
    "的", "这", "那", "两个", "三个", "几个", "各", "分别", "都是", "都有", "都要", "都在", "之", "等", "呢", "吗", "吧", "了", "在", "附近",
    "现在", "今天", "明天", "和", "与", "及", "跟", "还有", "、",
];

/// The name right after a joiner at the start of `text`, and the text after it.
fn next_name(text: &str) -> Option<(String, &str)> {
    let trimmed = text.trim_start();
    let joiner = JOINERS.iter().find(|j| trimmed.starts_with(j.trim_start()))?;
    let mut rest = trimmed[joiner.trim_start().len()..].trim_start();
    if let Some(p) = PREPOSITIONS.iter().find(|p| rest.starts_with(*p)) {
        rest = rest[p.len()..].trim_start();
    }
    let first = rest.chars().next()?;
    if crate::text::is_cjk(first) && *joiner != "," {
        let end = rest.char_indices().find(|&(i, c)| !crate::text::is_cjk(c) || STOPS.iter().any(|w| rest[i..].starts_with(w))).map_or(rest.len(), |(i, _)| i);
        let name = &rest[..end];
        let count = name.chars().count();
        return (2..=10).contains(&count).then(|| (name.to_string(), &rest[end..]));
    }
    if !first.is_ascii_uppercase() {
        return None;
    }
    // Capitalised words, with the figures that go with them ("Terminal 4").
    let mut end = 0;
    for word in rest.split_inclusive(' ') {
        let bare = word.trim_end().trim_end_matches([',', '.', '?', '!', ';', ':']);
        let capital = bare.chars().next().is_some_and(|c| c.is_ascii_uppercase() || (end > 0 && c.is_ascii_digit()));
        if !capital || bare.is_empty() {
            break;
        }
        end += word.find(bare).unwrap_or(0) + bare.len();
        if bare.len() != word.trim_end().len() {
            break;
        }
        end += word.len() - word.find(bare).unwrap_or(0) - bare.len();
    }
    let name = rest[..end].trim_end();
    (!name.is_empty()).then(|| (name.to_string(), &rest[name.len()..]))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        let tool = |name: &str, properties: Value, required: Value| {
            json!({"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties, "required": required}}})
        };
        let tools = [
            tool("weather.current", json!({"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}), json!(["city"])),
            tool("garden.frost_dates", json!({"city": {"type": "string"}, "confidence": {"type": "integer"}}), json!(["city"])),
            tool("time.now", json!({"timezone": {"type": "string"}}), json!(["timezone"])),
            tool("shop.search", json!({"query": {"type": "string"}, "note": {"type": "string"}}), json!(["query"])),
        ];
        tools.iter().enumerate().map(|(i, t)| ToolSpec::parse(t, i).unwrap()).collect()
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    fn cities(calls: &[ToolCall]) -> Vec<(&str, &str)> {
        calls.iter().map(|c| (c.name.as_str(), c.args.values().next().and_then(Value::as_str).unwrap_or(""))).collect()
    }

    #[test]
    fn each_listed_name_gets_its_call() {
        let mut calls = vec![call("call_001", "garden.frost_dates", json!({"city": "上海", "confidence": 30})), call("call_002", "shop.search", json!({"query": "蓝莓苗"}))];
        let changed = fan_out(&mut calls, &tools(), "查一下上海和成都的平均霜冻日期，再帮我搜蓝莓苗。");
        assert_eq!(changed, ["garden.frost_dates: city 上海, 成都"]);
        assert_eq!(cities(&calls), [("garden.frost_dates", "上海"), ("garden.frost_dates", "成都"), ("shop.search", "蓝莓苗")]);
        assert_eq!(calls[1].id, "call_003");
        assert_eq!(calls[1].args["confidence"], 30);

        let mut calls = vec![call("call_001", "weather.current", json!({"city": "Seoul"}))];
        fan_out(&mut calls, &tools(), "Current weather in Seoul and in Busan, and convert 1000 KRW to USD.");
        assert_eq!(cities(&calls), [("weather.current", "Seoul"), ("weather.current", "Busan")]);

        let mut calls = vec![call("call_001", "weather.current", json!({"city": "北京"}))];
        fan_out(&mut calls, &tools(), "北京、上海和广州现在多少度？");
        assert_eq!(cities(&calls), [("weather.current", "北京"), ("weather.current", "上海"), ("weather.current", "广州")]);
    }

    #[test]
    fn names_not_plainly_listed_or_taken_elsewhere_stay_as_they_are() {
        for (question, calls) in [
            // Another call holds the second name.
            ("Weather in Paris and Tokyo time, please.", vec![call("call_001", "weather.current", json!({"city": "Paris"})), call("call_002", "time.now", json!({"timezone": "Asia/Tokyo"}))]),
            // No name after the joiner.
            ("Weather in Paris and the time in Tokyo.", vec![call("call_001", "weather.current", json!({"city": "Paris"}))]),
            ("查一下上海的天气和成都的霜冻日期", vec![call("call_001", "weather.current", json!({"city": "上海"}))]),
            ("上海和我", vec![call("call_001", "weather.current", json!({"city": "上海"}))]),
            // Already one call each.
            ("上海和成都的天气", vec![call("call_001", "weather.current", json!({"city": "上海"})), call("call_002", "weather.current", json!({"city": "Chengdu"}))]),
            // An optional parameter's value is no subject to fan out.
            ("Search shoes with note Red and Blue", vec![call("call_001", "shop.search", json!({"query": "shoes", "note": "Red"}))]),
        ] {
            let before = calls.clone();
            let mut calls = calls;
            assert!(fan_out(&mut calls, &tools(), question).is_empty(), "{question}");
            assert_eq!(calls, before);
        }
    }

    #[test]
    fn lists_are_read_after_the_value_alone() {
        assert_eq!(list_from("西直门和动物园这两个站接下来的公交车", "西直门"), ["西直门", "动物园"]);
        assert_eq!(list_from("flights to JFK Terminal 4, LAX and Boston Logan.", "JFK Terminal 4"), ["JFK Terminal 4", "LAX", "Boston Logan"]);
        assert_eq!(list_from("Seoul, then Busan", "Seoul"), ["Seoul"]);
        assert_eq!(list_from("北京，然后帮我订票", "北京"), ["北京"]);
        assert_eq!(list_from("在北京和朋友们一起吃饭的地方", "北京"), ["北京"]);
    }
}
