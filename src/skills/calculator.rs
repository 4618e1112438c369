//! `calculator(expression)`: evaluates arithmetic with meval (`+ - * / % ^`, parentheses,
//! sqrt, sin, ln, ... and pi, e). Users and small models also write `**`, `×`, `÷` and
//! full-width parentheses; those are accepted too.

use std::sync::OnceLock;

use serde_json::{json, Value};

use super::{args, embedded_manifest, format_number, number_value, Manifest, Skill, SkillError, Workspace};
use crate::protocol::Args;

const NAME: &str = "calculator";
/// Longer input is not a calculation a person asks for; it also bounds parser recursion.
const MAX_EXPRESSION_CHARS: usize = 200;

pub struct Calculator;

impl Skill for Calculator {
    fn manifest(&self) -> &Manifest {
        static MANIFEST: OnceLock<Manifest> = OnceLock::new();
        MANIFEST.get_or_init(|| embedded_manifest(NAME, include_str!("../../skills/calculator.json")))
    }

    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
        call(args, workspace).map_err(|err| err.in_tool(NAME))
    }
}

/// The call itself; [`Skill::run`] names the tool in every error.
fn call(args: &Args, _workspace: &Workspace) -> Result<Value, SkillError> {
    let expression = args::req_str(args, NAME, "expression")?.trim();
    let result = evaluate(expression)?;
    Ok(json!({
        "expression": expression,
        "result": number_value(result),
        "content": format!("{expression} = {}", format_number(result)),
    }))
}

/// Evaluates one expression to a finite number.
pub fn evaluate(expression: &str) -> Result<f64, SkillError> {
    if expression.is_empty() {
        return Err(SkillError::new("the expression is empty"));
    }
    let chars = expression.chars().count();
    if chars > MAX_EXPRESSION_CHARS {
        return Err(SkillError::new(format!(
            "the expression is too long ({chars} characters; the limit is {MAX_EXPRESSION_CHARS})"
        )));
    }
    let parsed: meval::Expr = normalize(expression)
        .parse()
        .map_err(|err| SkillError::new(format!("cannot evaluate '{expression}': {err}")))?;
    let value = parsed
        .eval_with_context(context())
        .map_err(|err| SkillError::new(format!("cannot evaluate '{expression}': {err}")))?;
    if !value.is_finite() {
        return Err(SkillError::new(format!(
            "'{expression}' has no finite result (division by zero, overflow, or outside a function's domain)"
        )));
    }
    Ok(value)
}

/// Rewrites the common notations meval does not know into ones it does.
fn normalize(expression: &str) -> String {
    expression
        .replace("**", "^")
        .chars()
        .map(|c| match c {
            '×' | '✕' | '·' => '*',
            '÷' => '/',
            '（' => '(',
            '）' => ')',
            '−' | '－' => '-',
            '＋' => '+',
            '，' => ',',
            other => other,
        })
        .collect()
}

/// meval's built-ins plus the logarithms people expect to find.
fn context() -> meval::Context<'static> {
    let mut ctx = meval::Context::new();
    ctx.func("log10", f64::log10);
    ctx.func("log2", f64::log2);
    ctx.var("tau", std::f64::consts::TAU);
    ctx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(expression: &str) -> Result<Value, SkillError> {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        Calculator.run(json!({"expression": expression}).as_object().unwrap(), &ws)
    }

    #[test]
    fn the_seed_example_has_no_float_noise() {
        assert_eq!(
            run("3.14 * 5 - 2.5").unwrap(),
            json!({"expression": "3.14 * 5 - 2.5", "result": 13.2, "content": "3.14 * 5 - 2.5 = 13.2"})
        );
        assert_eq!(
            run(" 2 + 2 ").unwrap(),
            json!({"expression": "2 + 2", "result": 4, "content": "2 + 2 = 4"})
        );
    }

    #[test]
    fn functions_constants_powers_and_precedence() {
        let cases = [
            ("(1 + 2) * 3", 9.0),
            ("2^10", 1024.0),
            ("2**3**2", 512.0),
            ("-2^2", -4.0),
            ("10 % 3", 1.0),
            ("sqrt(16) + abs(-3)", 7.0),
            ("floor(2.7) + ceil(2.1) + round(2.5)", 8.0),
            ("ln(e) + exp(0) + log10(1000) + log2(8)", 8.0),
            ("sin(pi / 2) + cos(0)", 2.0),
            ("max(1, 7, 3) - min(4, 2)", 5.0),
            ("3 × 4 ÷ 2", 6.0),
            ("（1 + 2）× 3", 9.0),
            ("5 − 3", 2.0),
        ];
        for (expression, expected) in cases {
            let value = evaluate(expression).unwrap_or_else(|e| panic!("{expression}: {e}"));
            assert!((value - expected).abs() < 1e-9, "{expression} = {value}, expected {expected}");
        }
        assert_eq!(run("0.1 + 0.2").unwrap()["content"], "0.1 + 0.2 = 0.3");
        assert_eq!(run("1 / 3").unwrap()["result"], json!(0.333333333333));
    }

    #[test]
    fn invalid_and_non_finite_expressions_are_errors() {
        let no_finite = |e: &str| {
            format!("calculator: '{e}' has no finite result (division by zero, overflow, or outside a function's domain)")
        };
        assert_eq!(run("1/0"), Err(SkillError::new(no_finite("1/0"))));
        assert_eq!(run("sqrt(-1)"), Err(SkillError::new(no_finite("sqrt(-1)"))));
        assert_eq!(run("10^400"), Err(SkillError::new(no_finite("10^400"))));
        assert_eq!(run("ln(0)"), Err(SkillError::new(no_finite("ln(0)"))));
        assert_eq!(run(""), Err(SkillError::new("calculator: the expression is empty")));
        // 199 characters is within the limit.
        assert_eq!(evaluate(&format!("{}1", "1+".repeat(99))), Ok(100.0));
        assert_eq!(
            run(&"1+".repeat(101)),
            Err(SkillError::new("calculator: the expression is too long (202 characters; the limit is 200)"))
        );
        for bad in [
            "2 +",
            "(1 + 2",
            "1 + 2)",
            "foo(3)",
            "x + 1",
            "3 apples",
            "import os",
            "1 ++",
            ",",
            "()",
            "sqrt()",
            "max()",
        ] {
            let err = run(bad).unwrap_err().0;
            assert!(err.starts_with(&format!("calculator: cannot evaluate '{bad}': ")), "{bad}: {err}");
        }
    }

    #[test]
    fn odd_argument_values_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let args = json!({"expression": ["1+1"]});
        assert_eq!(
            Calculator.run(args.as_object().unwrap(), &ws),
            Err(SkillError::new("calculator: argument 'expression' must be a string, got [\"1+1\"]"))
        );
    }

    #[test]
    fn junk_input_is_an_error_not_a_panic() {
        let junk = [
            "2^^2",
            "!",
            "1e999",
            "sin",
            "sin(",
            "max(,)",
            "((((",
            "-",
            "--1",
            "1..2",
            "π",
            "∞",
            "1/",
            "%%",
            "atan2(1)",
            "sqrt(1,2)",
            "e^e^e^e",
            "0^-1",
            "1e",
            "2e",
            "\u{0}",
            "；",
            "1 2",
            "sin cos 1",
            "()()",
        ];
        for input in junk {
            if let Ok(value) = evaluate(input) {
                assert!(value.is_finite(), "{input} = {value}");
            }
        }
        assert_eq!(evaluate("--1"), Ok(1.0));
        assert_eq!(evaluate("1e3 + 2"), Ok(1002.0));
    }

    #[test]
    fn deep_nesting_within_the_limit_does_not_crash() {
        let deep = format!("{}1{}", "(".repeat(99), ")".repeat(99));
        assert_eq!(evaluate(&deep), Ok(1.0));
    }
}
