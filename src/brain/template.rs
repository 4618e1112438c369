//! The model's own Jinja chat template, rendered as Hugging Face's
//! `apply_chat_template(messages, tools=..., add_generation_prompt=...)` does: jinja2 with
//! `trim_blocks`, `lstrip_blocks`, loop controls, Python string methods, and transformers'
//! `tojson` (`json.dumps(..., ensure_ascii=False)` with Python's separators), plus
//! `raise_exception` and `strftime_now`.

use std::path::Path;

use minijinja::value::{Kwargs, Value as JinjaValue};
use minijinja::{Environment, Error as JinjaError, ErrorKind};
use serde_json::Value;

use super::BrainError;

const TEMPLATE_NAME: &str = "chat_template";

pub struct ChatTemplate {
    env: Environment<'static>,
    source: String,
    bos_token: Option<String>,
    eos_token: Option<String>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("chars", &self.source.len()).finish()
    }
}

impl ChatTemplate {
    /// Compiles a template; `bos_token`/`eos_token` are the template variables of that name.
    pub fn new(source: impl Into<String>, bos_token: Option<String>, eos_token: Option<String>) -> Result<Self, BrainError> {
        let source = source.into();
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson_filter);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(TEMPLATE_NAME, source.clone())
            .map_err(|e| BrainError::Template(format!("cannot compile the chat template: {e}")))?;
        Ok(Self { env, source, bos_token, eos_token })
    }

    /// The template of a Hugging Face folder: `chat_template` in `tokenizer_config.json`
    /// (a string, or a list of named templates of which `default` is used), or a
    /// `chat_template.jinja` file.
    pub fn from_hf_dir(dir: &Path) -> Result<Self, BrainError> {
        let jinja = dir.join("chat_template.jinja");
        let config_path = dir.join("tokenizer_config.json");
        let config: Value = match read(&config_path)? {
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| BrainError::Template(format!("{}: {e}", config_path.display())))?,
            None => Value::Null,
        };
        let token = |key: &str| match config.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).map(str::to_string),
            _ => None,
        };
        let source = match config.get("chat_template") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(list)) => list
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some("default"))
                .or_else(|| list.first())
                .and_then(|t| t.get("template"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| BrainError::Template(format!("{}: chat_template list has no template", config_path.display())))?,
            _ => read(&jinja)?.ok_or_else(|| {
                BrainError::Template(format!(
                    "{} has no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja)",
                    dir.display()
                ))
            })?,
        };
        Self::new(source, token("bos_token"), token("eos_token"))
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Renders `messages` (and `tools`, OpenAI function format) into the prompt text.
    pub fn render(&self, messages: &[Value], tools: Option<&[Value]>, add_generation_prompt: bool) -> Result<String, BrainError> {
        self.render_thinking(messages, tools, add_generation_prompt, false)
    }

    /// [`ChatTemplate::render`] with the template's thinking switch (`enable_thinking`) set.
    pub fn render_thinking(&self, messages: &[Value], tools: Option<&[Value]>, add_generation_prompt: bool, thinking: bool) -> Result<String, BrainError> {
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|e| BrainError::Template(e.to_string()))?;
        let context = minijinja::context! {
            messages => JinjaValue::from_serialize(messages),
            tools => tools.map(JinjaValue::from_serialize),
            add_generation_prompt => add_generation_prompt,
            enable_thinking => thinking,
            bos_token => self.bos_token.clone().unwrap_or_default(),
            eos_token => self.eos_token.clone().unwrap_or_default(),
        };
        template.render(context).map_err(|e| BrainError::Template(describe(&e)))
    }
}

/// A model folder's text file, `None` when it is not there.
fn read(path: &Path) -> Result<Option<String>, BrainError> {
    match crate::input::read_text(path, crate::input::MODEL_JSON) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn describe(error: &JinjaError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    text
}

fn raise_exception(message: String) -> Result<JinjaValue, JinjaError> {
    Err(JinjaError::new(ErrorKind::InvalidOperation, message))
}

fn strftime_now(format: String) -> String {
    chrono::Local::now().format(&format).to_string()
}

/// transformers' `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
fn tojson_filter(value: JinjaValue, kwargs: Kwargs) -> Result<JinjaValue, JinjaError> {
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    let indent: Option<JinjaValue> = kwargs.get("indent")?;
    let separators: Option<JinjaValue> = kwargs.get("separators")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() || v.is_undefined() => None,
        Some(v) => match v.as_i64() {
            Some(n) => Some(" ".repeat(usize::try_from(n.max(0)).unwrap_or(0))),
            None => Some(v.as_str().map(str::to_string).unwrap_or_default()),
        },
    };
    let (item_sep, key_sep) = match separators {
        Some(v) if !v.is_none() && !v.is_undefined() => {
            let parts: Vec<String> = v
                .try_iter()?
                .map(|p| p.as_str().map(str::to_string).unwrap_or_default())
                .collect();
            match parts.as_slice() {
                [item, key] => (item.clone(), key.clone()),
                _ => return Err(JinjaError::new(ErrorKind::InvalidOperation, "tojson separators must be a pair")),
            }
        }
        // Python's defaults: ', ' without indent, ',' with it.
        _ => (if indent.is_some() { "," } else { ", " }.to_string(), ": ".to_string()),
    };
    let json = serde_json::to_value(&value)
        .map_err(|e| JinjaError::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    let style = PyJson {
        ensure_ascii: ensure_ascii.unwrap_or(false),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.unwrap_or(false),
    };
    let mut out = String::new();
    style.write(&json, 0, &mut out);
    Ok(JinjaValue::from_safe_string(out))
}

/// Python's `json.dumps` output format.
struct PyJson {
    ensure_ascii: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

impl PyJson {
    fn write(&self, value: &Value, depth: usize, out: &mut String) {
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => out.push_str(&i.to_string()),
                (_, Some(u), _) => out.push_str(&u.to_string()),
                (_, _, Some(f)) => out.push_str(&python_float(f)),
                _ => out.push_str(&n.to_string()),
            },
            Value::String(s) => self.write_str(s, out),
            Value::Array(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                    return;
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(depth + 1, out);
                    self.write(item, depth + 1, out);
                }
                self.newline(depth, out);
                out.push(']');
            }
            Value::Object(map) => {
                if map.is_empty() {
                    out.push_str("{}");
                    return;
                }
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                if self.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                }
                out.push('{');
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(depth + 1, out);
                    self.write_str(key, out);
                    out.push_str(&self.key_sep);
                    self.write(item, depth + 1, out);
                }
                self.newline(depth, out);
                out.push('}');
            }
        }
    }

    fn newline(&self, depth: usize, out: &mut String) {
        if let Some(indent) = &self.indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(indent);
            }
        }
    }

    fn write_str(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c if self.ensure_ascii && !(' '..='~').contains(&c) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sci = format!("{f:e}");
    let Some((mantissa, exp)) = sci.split_once('e') else { return sci };
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{f}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture() -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizer/chat_template_cases.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Every case rendered by transformers' `apply_chat_template` on the Qwen2.5 template
    /// from the GGUF: system+user, tools (Hermes `<tools>` block), assistant tool calls,
    /// tool results (`<tool_response>`).
    #[test]
    fn qwen25_template_renders_like_transformers() {
        let fixture = fixture();
        let template = ChatTemplate::new(fixture["chat_template"].as_str().unwrap(), None, None).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 6);
        for case in cases {
            let messages = case["messages"].as_array().unwrap();
            let tools = case["tools"].as_array().map(Vec::as_slice);
            let add = case["add_generation_prompt"].as_bool().unwrap();
            let rendered = template.render(messages, tools, add).unwrap();
            assert_eq!(rendered, case["rendered"].as_str().unwrap(), "case {}", case["name"]);
        }
    }

    /// The Qwen3.5-shaped template (XML tool calls, a thinking switch; written in the real
    /// one's shape by scripts/qwen35/, which rendered each case with transformers' jinja2).
    #[test]
    fn qwen35_template_renders_like_transformers_thinking_on_and_off() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qwen35/template_renders");
        let template = ChatTemplate::new(std::fs::read_to_string(dir.join("chat_template.jinja")).unwrap(), None, None).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.path().file_stem()?.to_str().map(str::to_string))
            .filter(|n| n != "chat_template")
            .collect();
        names.sort();
        names.dedup();
        assert!(names.len() >= 5, "{names:?}");
        for name in names {
            let case: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
            let expected = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
            let messages = case["messages"].as_array().unwrap();
            let tools = case["tools"].as_array().map(Vec::as_slice);
            let add = case["add_generation_prompt"].as_bool().unwrap_or(false);
            let thinking = case["enable_thinking"].as_bool().unwrap_or(true);
            let rendered = template.render_thinking(messages, tools, add, thinking).unwrap();
            assert_eq!(rendered, expected, "case {name}");
        }
    }

    #[test]
    fn tojson_matches_python_json_dumps() {
        let template = ChatTemplate::new(
            "{{ v | tojson }}|{{ v | tojson(indent=2) }}|{{ v | tojson(ensure_ascii=True, sort_keys=True) }}",
            None,
            None,
        )
        .unwrap();
        let env_render = |v: Value| {
            let t = template.env.get_template(TEMPLATE_NAME).unwrap();
            t.render(minijinja::context! { v => JinjaValue::from_serialize(&v) }).unwrap()
        };
        let out = env_render(json!({"b": [1, 2.5, 1e-5, 1e16, true, null], "a": "引号\"\\\u{1}<&>'é😀", "e": {}}));
        assert_eq!(
            out,
            concat!(
                r#"{"b": [1, 2.5, 1e-05, 1e+16, true, null], "a": "引号\"\\\u0001<&>'é😀", "e": {}}|"#,
                "{\n  \"b\": [\n    1,\n    2.5,\n    1e-05,\n    1e+16,\n    true,\n    null\n  ],\n  \"a\": \"引号\\\"\\\\\\u0001<&>'é😀\",\n  \"e\": {}\n}|",
                r#"{"a": "\u5f15\u53f7\"\\\u0001<&>'\u00e9\ud83d\ude00", "b": [1, 2.5, 1e-05, 1e+16, true, null], "e": {}}"#
            )
        );
    }

    #[test]
    fn python_string_methods_and_helpers_work() {
        let template = ChatTemplate::new(
            "{{ messages[0].content.strip().upper() }}|{{ messages[0].content.split('b')|length }}|{{ 'x'.startswith('x') }}|{{ strftime_now('%Y')|length }}{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}!{% endfor %}",
            None,
            None,
        )
        .unwrap();
        let out = template.render(&[json!({"role": "user", "content": "  abc 你好 "})], None, false).unwrap();
        assert_eq!(out, "ABC 你好|2|True|4!");
    }

    #[test]
    fn raise_exception_becomes_a_template_error() {
        let template = ChatTemplate::new("{{ raise_exception('roles must alternate') }}", None, None).unwrap();
        let err = template.render(&[], None, true).unwrap_err();
        assert!(matches!(&err, BrainError::Template(m) if m.contains("roles must alternate")), "{err}");
    }

    #[test]
    fn bad_templates_and_hf_folders_are_clear_errors() {
        let err = ChatTemplate::new("{% if %}", None, None).unwrap_err().to_string();
        assert!(err.starts_with("chat template: cannot compile"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = ChatTemplate::from_hf_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("has no chat template"), "{err}");
        std::fs::write(
            dir.path().join("tokenizer_config.json"),
            r#"{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "{{ bos_token }}D"}], "bos_token": {"content": "<s>"}}"#,
        )
        .unwrap();
        let template = ChatTemplate::from_hf_dir(dir.path()).unwrap();
        assert_eq!(template.render(&[], None, false).unwrap(), "<s>D");
    }
}
