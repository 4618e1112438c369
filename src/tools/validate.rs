//! Checks a call's arguments against its tool's spec before it runs, so that a bad call is
//! answered with what was wrong and the brain can correct itself. What the schema allows
//! is decided in [`super::spec`]: types (an integer is any number without a fraction),
//! `enum`, `minimum`/`maximum`, `required` and `additionalProperties: false` at any depth.

use super::spec::ToolSpec;
use crate::protocol::Args;

/// Validates `args` against `spec`; the error names the offending argument.
pub fn validate_args(spec: &ToolSpec, args: &Args) -> Result<(), String> {
    spec.check(args).map_err(|mismatch| mismatch.describe("argument"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn spec() -> ToolSpec {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "max_chars": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "columns": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path"],
            "additionalProperties": false
        });
        ToolSpec::parse(&json!({"name": "t", "parameters": parameters}), 0).unwrap()
    }

    fn validate(args: Value) -> Result<(), String> {
        validate_args(&spec(), args.as_object().unwrap())
    }

    #[test]
    fn accepts_valid_arguments() {
        assert_eq!(validate(json!({"path": "a.txt", "max_chars": 10, "mode": "a", "columns": ["x"]})), Ok(()));
        assert_eq!(validate(json!({"path": "说明.txt", "max_chars": 10.0})), Ok(()));
    }

    #[test]
    fn names_what_is_wrong() {
        let cases = [
            (json!({}), "missing required argument 'path'"),
            (json!({"path": 3}), "argument 'path' must be string, got 3"),
            (json!({"path": "a", "max_chars": "2000"}), "argument 'max_chars' must be integer, got \"2000\""),
            (json!({"path": "a", "max_chars": 0}), "argument 'max_chars' must be >= 1, got 0"),
            (json!({"path": "a", "mode": "c"}), "argument 'mode' must be one of \"a\", \"b\", got \"c\""),
            (json!({"path": "a", "columns": ["x", 1]}), "argument 'columns[1]' must be string, got 1"),
            (json!({"path": "a", "file": "b"}), "unknown argument 'file' (known: path, max_chars, mode, columns)"),
        ];
        for (args, expected) in cases {
            assert_eq!(validate(args.clone()), Err(expected.to_string()), "{args}");
        }
    }
}
