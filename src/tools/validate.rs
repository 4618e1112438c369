//! Checks a call's arguments against its tool's JSON schema before it runs, so that a bad
//! call is answered with what was wrong and the brain can correct itself.
//!
//! Covers the subset of JSON schema our manifests use: `type` (string, integer, number,
//! boolean, array, object, or a list of them), `properties`, `required`,
//! `additionalProperties: false`, `enum`, `items`, `minimum`/`maximum`.

use serde_json::Value;

use crate::protocol::json_kind;

/// Validates `args` against `schema`; the error names the offending field.
pub fn validate_args(schema: &Value, args: &Value) -> Result<(), String> {
    check(schema, args, "")
}

fn field_name(path: &str) -> String {
    if path.is_empty() {
        "arguments".into()
    } else {
        format!("argument '{path}'")
    }
}

fn check(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    if let Some(expected) = schema.get("type") {
        let types: Vec<&str> = match expected {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| has_type(value, t)) {
            return Err(format!("{} must be {}, got {}", field_name(path), types.join(" or "), json_kind(value)));
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.contains(value) {
            let list: Vec<String> = options.iter().map(Value::to_string).collect();
            return Err(format!("{} must be one of {}, got {value}", field_name(path), list.join(", ")));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            if n < min {
                return Err(format!("{} must be >= {min}, got {n}", field_name(path)));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            if n > max {
                return Err(format!("{} must be <= {max}, got {n}", field_name(path)));
            }
        }
    }
    match value {
        Value::Object(obj) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(required)) = schema.get("required") {
                for key in required.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(key) {
                        return Err(format!("missing required {}", field_name(&join(path, key))));
                    }
                }
            }
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (key, item) in obj {
                match props.and_then(|p| p.get(key)) {
                    Some(sub) => check(sub, item, &join(path, key))?,
                    None if closed => {
                        let known: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                        return Err(format!(
                            "unknown {} (known: {})",
                            field_name(&join(path, key)),
                            known.join(", ")
                        ));
                    }
                    None => {}
                }
            }
            Ok(())
        }
        Value::Array(items) => match schema.get("items") {
            Some(sub) => items.iter().enumerate().try_for_each(|(i, item)| check(sub, item, &format!("{path}[{i}]"))),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "string" => value.is_string(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "max_chars": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "columns": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_valid_arguments() {
        assert_eq!(validate_args(&schema(), &json!({"path": "a.txt", "max_chars": 10, "mode": "a", "columns": ["x"]})), Ok(()));
        assert_eq!(validate_args(&schema(), &json!({"path": "a.txt", "max_chars": 10.0})), Ok(()));
    }

    #[test]
    fn names_what_is_wrong() {
        let cases = [
            (json!({}), "missing required argument 'path'"),
            (json!({"path": 3}), "argument 'path' must be string, got a number"),
            (json!({"path": "a", "max_chars": "2000"}), "argument 'max_chars' must be integer, got a string"),
            (json!({"path": "a", "max_chars": 0}), "argument 'max_chars' must be >= 1, got 0"),
            (json!({"path": "a", "mode": "c"}), "argument 'mode' must be one of \"a\", \"b\", got \"c\""),
            (json!({"path": "a", "columns": ["x", 1]}), "argument 'columns[1]' must be string, got a number"),
            (json!({"path": "a", "file": "b"}), "unknown argument 'file' (known: path, max_chars, mode, columns)"),
            (json!(["a"]), "arguments must be object, got an array"),
        ];
        for (args, expected) in cases {
            assert_eq!(validate_args(&schema(), &args), Err(expected.to_string()), "{args}");
        }
    }
}
