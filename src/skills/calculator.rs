//! `calculator(expression)`: evaluates arithmetic with meval (`+ - * / % ^`, parentheses,
//! sqrt, sin, ln, ... and pi, e). Users and small models also write `**`, `×`, `÷` and
//! full-width parentheses; those are accepted too.
//!
//! meval computes in f64, which holds integers exactly only below 2^53 (`2^53 + 1` would
//! come back as `9007199254740992`). So integer arithmetic (`+ - * / % ^` on integer
//! literals) is evaluated a second time, exactly, in i128; a result that is neither exact
//! nor safely within f64 precision says so (`"approximate": true`, "about ...").

use std::sync::OnceLock;

use serde_json::{json, Value};

use super::{
    args, embedded_manifest, format_number, format_rounded, integer_value, number_value, rounded_value,
    Manifest, Skill, SkillError, Workspace, F64_EXACT_INTEGERS,
};
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
    Ok(match answer(expression)? {
        Answer::Exact(n) => json!({
            "expression": expression,
            "result": integer_value(n),
            "content": format!("{expression} = {n}"),
        }),
        Answer::Float(x) => json!({
            "expression": expression,
            "result": number_value(x),
            "content": format!("{expression} = {}", format_number(x)),
        }),
        Answer::Approximate(x) => json!({
            "expression": expression,
            "result": rounded_value(x),
            "approximate": true,
            "content": format!("{expression} = about {}", format_rounded(x)),
        }),
    })
}

/// A result, and how far its digits can be trusted.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Integer arithmetic, every digit exact.
    Exact(i128),
    /// A float within f64 precision, shown to 12 significant digits.
    Float(f64),
    /// A float whose digits may be wrong past f64 precision: an integer result beyond
    /// i128, or a value of 2^53 or more, or one computed from such integers.
    Approximate(f64),
}

/// Evaluates with meval (which also validates the expression), then exactly where the
/// expression is integer arithmetic.
fn answer(expression: &str) -> Result<Answer, SkillError> {
    let value = evaluate(expression)?;
    let normalized = normalize(expression);
    let beyond_f64 = value.abs() >= F64_EXACT_INTEGERS;
    Ok(match exact(&normalized) {
        Some(Exact::Value(n)) => Answer::Exact(n),
        Some(Exact::Overflow) => Answer::Approximate(value),
        Some(Exact::NotInteger { big }) if big || beyond_f64 => Answer::Approximate(value),
        None if beyond_f64 || has_inexact_literal(&normalized) => Answer::Approximate(value),
        Some(Exact::NotInteger { .. }) | None => Answer::Float(value),
    })
}

/// Whether a number in an expression that is not integer arithmetic has 16 or more
/// integer digits: from 10^15 an f64 keeps hardly a digit after the point, and past 2^53
/// not every integer, so meval has already rounded it
/// (`9007199254740993.5 - 9007199254740993` gives 2 in f64).
fn has_inexact_literal(expression: &str) -> bool {
    expression.split(|c: char| !c.is_ascii_digit() && c != '.').any(|number| {
        let whole = number.split('.').next().unwrap_or_default().trim_start_matches('0');
        whole.len() >= 16
    })
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

/// [`F64_EXACT_INTEGERS`] as an integer.
const F64_EXACT_INTEGERS_I: u128 = 1 << 53;

/// What evaluating an expression in integers found.
#[derive(Debug, PartialEq)]
enum Exact {
    /// Integer arithmetic all the way, and it fit in i128.
    Value(i128),
    /// A step left the integers (a division with a remainder, a negative power), so
    /// meval's float stands; `big` says an integer beyond 2^53 went into it, so the float
    /// may have lost digits on the way.
    NotInteger { big: bool },
    /// Integer arithmetic past i128.
    Overflow,
}

/// Why a step gave no exact integer; an overflow anywhere outweighs a fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Inexact {
    Fraction,
    Overflow,
}

type Step = Result<i128, Inexact>;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    /// An integer literal; `None` when it does not fit in i128.
    Number(Option<i128>),
    Op(char),
    Open,
    Close,
}

/// Evaluates an expression (already [`normalize`]d and accepted by meval) exactly, if it
/// is integer arithmetic: integer literals, `+ - * / % ^`, unary signs, parentheses.
/// `None` for anything else (functions, constants, decimals), which meval's float covers.
/// The grammar is meval's: `^` binds tighter than a unary sign and groups to the right
/// (`-2^2` is -4, `2^3^2` is 512), signs tighter than `* / %`, those tighter than `+ -`.
fn exact(expression: &str) -> Option<Exact> {
    let tokens = integer_tokens(expression)?;
    let mut parser = IntegerParser { tokens: &tokens, pos: 0, big: false };
    let result = parser.sum()?;
    if parser.pos != tokens.len() {
        return None;
    }
    Some(match result {
        Ok(n) => Exact::Value(n),
        Err(Inexact::Overflow) => Exact::Overflow,
        Err(Inexact::Fraction) => Exact::NotInteger { big: parser.big },
    })
}

/// The tokens of integer arithmetic; `None` at anything else.
fn integer_tokens(expression: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut chars = expression.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '0'..='9' => {
                let mut end = start + 1;
                while let Some((i, d)) = chars.peek().copied() {
                    if !d.is_ascii_digit() {
                        break;
                    }
                    end = i + d.len_utf8();
                    chars.next();
                }
                tokens.push(Token::Number(expression[start..end].parse().ok()));
            }
            '+' | '-' | '*' | '/' | '%' | '^' => tokens.push(Token::Op(c)),
            '(' => tokens.push(Token::Open),
            ')' => tokens.push(Token::Close),
            c if c.is_whitespace() => {}
            _ => return None,
        }
    }
    Some(tokens)
}

/// Recursive descent over [`Token`]s. Each rule returns `None` when it cannot parse, and
/// otherwise the value or why there is none; both operands are always evaluated, so an
/// overflow is found even next to a fraction.
struct IntegerParser<'a> {
    tokens: &'a [Token],
    pos: usize,
    /// An integer beyond 2^53 was computed (see [`Exact::NotInteger`]).
    big: bool,
}

impl IntegerParser<'_> {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.pos).copied()
    }

    fn eat_op(&mut self, ops: &[char]) -> Option<char> {
        match self.peek() {
            Some(Token::Op(op)) if ops.contains(&op) => {
                self.pos += 1;
                Some(op)
            }
            _ => None,
        }
    }

    fn note(&mut self, step: Step) -> Step {
        if let Ok(n) = step {
            self.big |= n.unsigned_abs() > F64_EXACT_INTEGERS_I;
        }
        step
    }

    /// sum := product (('+' | '-') product)*
    fn sum(&mut self) -> Option<Step> {
        let mut left = self.product()?;
        while let Some(op) = self.eat_op(&['+', '-']) {
            let right = self.product()?;
            let step = combine(left, right, |a, b| {
                let sum = if op == '+' { a.checked_add(b) } else { a.checked_sub(b) };
                sum.ok_or(Inexact::Overflow)
            });
            left = self.note(step);
        }
        Some(left)
    }

    /// product := signed (('*' | '/' | '%') signed)*
    fn product(&mut self) -> Option<Step> {
        let mut left = self.signed()?;
        while let Some(op) = self.eat_op(&['*', '/', '%']) {
            let right = self.signed()?;
            let step = combine(left, right, |a, b| match op {
                '*' => a.checked_mul(b).ok_or(Inexact::Overflow),
                // Division by zero never gets here: meval has already refused it.
                '/' if b != 0 && a % b == 0 => a.checked_div(b).ok_or(Inexact::Overflow),
                '%' if b != 0 => a.checked_rem(b).ok_or(Inexact::Overflow),
                _ => Err(Inexact::Fraction),
            });
            left = self.note(step);
        }
        Some(left)
    }

    /// signed := ('+' | '-') signed | power
    fn signed(&mut self) -> Option<Step> {
        match self.eat_op(&['+', '-']) {
            Some('-') => {
                let inner = self.signed()?;
                let step = inner.and_then(|n| n.checked_neg().ok_or(Inexact::Overflow));
                Some(self.note(step))
            }
            Some(_) => self.signed(),
            None => self.power(),
        }
    }

    /// power := atom ('^' signed)?, so `2^3^2` is `2^(3^2)` and `2^-1` parses.
    fn power(&mut self) -> Option<Step> {
        let base = self.atom()?;
        if self.eat_op(&['^']).is_none() {
            return Some(base);
        }
        let exponent = self.signed()?;
        let step = combine(base, exponent, integer_power);
        Some(self.note(step))
    }

    /// atom := integer | '(' sum ')'
    fn atom(&mut self) -> Option<Step> {
        match self.peek()? {
            Token::Number(n) => {
                self.pos += 1;
                let step = n.ok_or(Inexact::Overflow);
                Some(self.note(step))
            }
            Token::Open => {
                self.pos += 1;
                let inner = self.sum()?;
                (self.peek()? == Token::Close).then(|| {
                    self.pos += 1;
                    inner
                })
            }
            Token::Op(_) | Token::Close => None,
        }
    }
}

fn combine(left: Step, right: Step, op: impl FnOnce(i128, i128) -> Step) -> Step {
    match (left, right) {
        (Ok(a), Ok(b)) => op(a, b),
        (Err(Inexact::Overflow), _) | (_, Err(Inexact::Overflow)) => Err(Inexact::Overflow),
        _ => Err(Inexact::Fraction),
    }
}

fn integer_power(base: i128, exponent: i128) -> Step {
    match (base, exponent) {
        (1, _) => Ok(1),
        (-1, e) => Ok(if e % 2 == 0 { 1 } else { -1 }),
        (0, e) if e > 0 => Ok(0),
        (_, e) if e < 0 => Err(Inexact::Fraction),
        (b, e) => u32::try_from(e).ok().and_then(|e| b.checked_pow(e)).ok_or(Inexact::Overflow),
    }
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
    fn integer_arithmetic_is_exact_past_f64() {
        assert_eq!(
            run("2^53").unwrap(),
            json!({"expression": "2^53", "result": 9007199254740992u64, "content": "2^53 = 9007199254740992"})
        );
        assert_eq!(
            run("2^53 + 1").unwrap(),
            json!({"expression": "2^53 + 1", "result": 9007199254740993u64, "content": "2^53 + 1 = 9007199254740993"})
        );
        assert_eq!(
            run("2^63 - 1").unwrap(),
            json!({"expression": "2^63 - 1", "result": i64::MAX, "content": "2^63 - 1 = 9223372036854775807"})
        );
        assert_eq!(
            run("-2^63").unwrap(),
            json!({"expression": "-2^63", "result": i64::MIN, "content": "-2^63 = -9223372036854775808"})
        );
        // Past 64 bits the JSON result is the digits as a string: serde_json has no wider
        // integers, and a float would round them.
        assert_eq!(
            run("2**64").unwrap(),
            json!({"expression": "2**64", "result": "18446744073709551616", "content": "2**64 = 18446744073709551616"})
        );
        assert_eq!(run("99999999999999999 * 3").unwrap()["result"], json!(299999999999999997u64));
        assert_eq!(run("(2^62 + 2) / 2").unwrap()["result"], json!(2305843009213693953u64));
        // In f64, 2^61 + 1 is 2^61 and this would be 2.
        assert_eq!(run("(2^61 + 1) % 10").unwrap()["result"], json!(3));
        assert_eq!(run("3^80 / 3^79").unwrap()["result"], json!(3));
    }

    #[test]
    fn results_beyond_exact_say_they_are_approximate() {
        assert_eq!(
            run("2^200").unwrap(),
            json!({"expression": "2^200", "result": 1.60693804426e60, "approximate": true, "content": "2^200 = about 1.60693804426e60"})
        );
        // The float of an overflowed integer calculation may be wrong in every digit.
        assert_eq!(
            run("2^200 - 2^200 + 1").unwrap(),
            json!({"expression": "2^200 - 2^200 + 1", "result": 1, "approximate": true, "content": "2^200 - 2^200 + 1 = about 1"})
        );
        // A fraction next to integers past 2^53: the float lost the 0.5.
        assert_eq!(
            run("1/2 + 3^35 - 3^35").unwrap(),
            json!({"expression": "1/2 + 3^35 - 3^35", "result": 0, "approximate": true, "content": "1/2 + 3^35 - 3^35 = about 0"})
        );
        assert_eq!(run("(3^40 + 2) / 2").unwrap()["content"], "(3^40 + 2) / 2 = about 6.07883272953e18");
        // Floats of 2^53 or more are never written as exact-looking digits.
        assert_eq!(
            run("sqrt(2^106)").unwrap(),
            json!({"expression": "sqrt(2^106)", "result": 9.00719925474e15, "approximate": true, "content": "sqrt(2^106) = about 9.00719925474e15"})
        );
        assert_eq!(run("1.5 * 2^60").unwrap()["content"], "1.5 * 2^60 = about 1.72938225691e18");
        // A decimal literal f64 already rounded: the true answer is 0.5.
        assert_eq!(
            run("9007199254740993.5 - 9007199254740993").unwrap(),
            json!({"expression": "9007199254740993.5 - 9007199254740993", "result": 2, "approximate": true,
                   "content": "9007199254740993.5 - 9007199254740993 = about 2"})
        );
        assert_eq!(run("4503599627370496.5 * 2 - 9007199254740992").unwrap()["approximate"], true);
        assert_eq!(
            run("999999999999999.5 * 2").unwrap(),
            json!({"expression": "999999999999999.5 * 2", "result": 1999999999999999i64, "content": "999999999999999.5 * 2 = 1999999999999999"})
        );
        // Within f64 precision nothing changes.
        assert_eq!(
            run("0.1 + 0.2").unwrap(),
            json!({"expression": "0.1 + 0.2", "result": 0.3, "content": "0.1 + 0.2 = 0.3"})
        );
        assert_eq!(
            run("7 / 2").unwrap(),
            json!({"expression": "7 / 2", "result": 3.5, "content": "7 / 2 = 3.5"})
        );
        assert_eq!(run("1e15 + 0.5").unwrap()["content"], "1e15 + 0.5 = 1e15");
    }

    #[test]
    fn the_integer_evaluator_reads_expressions_as_meval_does() {
        let exact_cases = [
            "-2^2",
            "2^3^2",
            "-2*3^2",
            "2*-3",
            "2 - -2",
            "--1",
            "+-+3",
            "-(2+3)*4",
            "(1+2)*(3-4)/3",
            "8/2/2",
            "7 % -3",
            "-7 % 3",
            "0^0",
            "(-2)^3",
            "(-1)^-3",
            "1^-5",
            "10 - 2 - 3",
            "2^2*3",
            "100 % 7 * 2",
            "（1 + 2）× 3",
            "007 + 1",
        ];
        for expression in exact_cases {
            let float = evaluate(expression).unwrap();
            match answer(expression) {
                Ok(Answer::Exact(n)) => assert_eq!(n as f64, float, "{expression}"),
                other => panic!("{expression}: {other:?}"),
            }
        }
        for (expression, float) in
            [("2^-1", 0.5), ("10/4", 2.5), ("2^2^-1", 2f64.powf(0.5)), ("1.5 + 1", 2.5)]
        {
            assert_eq!(answer(expression), Ok(Answer::Float(float)), "{expression}");
        }
        assert_eq!(exact("sqrt(4)"), None);
        assert_eq!(exact("1e3"), None);
        assert_eq!(exact(&"9".repeat(50)), Some(Exact::Overflow));
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
