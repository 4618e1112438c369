//! B2, the skills: real tools the agent can call. A skill is one file (schema via its
//! manifest in `skills/`, handler, parallel-safety flag, tests).

pub mod calculator;
pub mod file_reader;
pub mod format_converter;
pub mod local_file_search;
pub mod table_analyzer;
pub mod workspace;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::Args;
pub use calculator::Calculator;
pub use file_reader::FileReader;
pub use format_converter::FormatConverter;
pub use local_file_search::LocalFileSearch;
pub use table_analyzer::TableAnalyzer;
pub use workspace::Workspace;

/// A skill's manifest, `skills/NAME.json`: what the model is told about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments (`type: object`, `properties`, `required`).
    pub parameters: Value,
}

/// A tool failure: data for the model, not a crash.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct SkillError(pub String);

impl SkillError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The same error starting with the tool's name (`calculator: ...`), once.
    pub fn in_tool(self, tool: &str) -> Self {
        if self.0.starts_with(&format!("{tool}: ")) {
            self
        } else {
            Self(format!("{tool}: {}", self.0))
        }
    }
}

pub trait Skill: Send + Sync {
    fn manifest(&self) -> &Manifest;

    /// Whether calls may run at the same time as other calls.
    fn parallel_safe(&self) -> bool {
        true
    }

    /// Runs one call with already-validated arguments. The output object always has a
    /// `content` string a person (or the mock brain) can read.
    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError>;
}

/// Every skill the agent has, in the order the tools schema lists them.
pub fn all() -> Vec<std::sync::Arc<dyn Skill>> {
    vec![
        std::sync::Arc::new(FileReader),
        std::sync::Arc::new(Calculator),
        std::sync::Arc::new(LocalFileSearch),
        std::sync::Arc::new(TableAnalyzer),
        std::sync::Arc::new(FormatConverter),
    ]
}

/// Parses a manifest embedded with `include_str!`. A broken manifest is a bug caught by
/// the tests below; at run time it degrades to a manifest whose description says what is
/// wrong instead of crashing the agent.
pub fn embedded_manifest(name: &str, json: &str) -> Manifest {
    serde_json::from_str(json).unwrap_or_else(|err| Manifest {
        name: name.to_string(),
        description: format!("(broken manifest skills/{name}.json: {err})"),
        parameters: serde_json::json!({"type": "object", "properties": {}}),
    })
}

/// 2^53: every integer below it is exact in an f64, not every one above it.
pub const F64_EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// Whether `x` is an integer an f64 holds exactly (so its digits are all true).
pub fn is_exact_integer(x: f64) -> bool {
    x.fract() == 0.0 && x.abs() < F64_EXACT_INTEGERS
}

/// Formats a number the way a person writes it: rounded to 12 significant digits, so
/// float noise disappears (`13.2`, not `13.200000000000001`), no trailing zeros. Exact
/// integers keep every digit.
pub fn format_number(x: f64) -> String {
    if is_exact_integer(x) {
        // `as i64` also turns -0 into 0.
        return (x as i64).to_string();
    }
    format_rounded(x)
}

/// `x` to 12 significant digits even when it is an integer, for values known to be
/// approximate. From 10^12 on it is written as `1.2e15`: plain digits past the twelfth
/// would be made-up zeros that look exact.
pub fn format_rounded(x: f64) -> String {
    let rounded = round_12(x);
    if rounded == 0.0 {
        return "0".to_string();
    }
    if rounded.abs() >= 1e12 || rounded.abs() < 1e-6 {
        return format!("{rounded:e}");
    }
    format!("{rounded}")
}

/// The JSON form of a number: an integer when it is one (`4`, not `4.0`), else the
/// rounded float (see [`rounded_value`]).
pub fn number_value(x: f64) -> Value {
    if is_exact_integer(x) {
        return Value::from(x as i64);
    }
    rounded_value(x)
}

/// The JSON form of `x` to 12 significant digits, as [`format_rounded`] writes it: an
/// integer only while its integer digits are all significant (below 10^12).
pub fn rounded_value(x: f64) -> Value {
    let rounded = round_12(x);
    if rounded.fract() == 0.0 && rounded.abs() < 1e12 {
        return Value::from(rounded as i64);
    }
    serde_json::Number::from_f64(rounded).map(Value::Number).unwrap_or(Value::Null)
}

/// The JSON form of an exact integer: a number while it fits 64 bits, else its digits as
/// a string (serde_json holds no wider integers, and a float would change them).
pub fn integer_value(n: i128) -> Value {
    serde_json::Number::from_i128(n).map_or_else(|| Value::String(n.to_string()), Value::Number)
}

/// `x` rounded to 12 significant digits; exact integers are returned unchanged.
pub fn round_significant(x: f64) -> f64 {
    // Exact integers carry no float noise, and rounding would change big ones.
    if is_exact_integer(x) {
        return x;
    }
    round_12(x)
}

fn round_12(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// Checks the call's deadline once per [`Pacer::EVERY`] units of work (rows, cells,
/// values), so a loop over a big input stops a timed-out call within milliseconds while
/// costing next to nothing.
pub struct Pacer<'a> {
    workspace: &'a Workspace,
    done: usize,
}

impl<'a> Pacer<'a> {
    const EVERY: usize = 1024;

    pub fn new(workspace: &'a Workspace) -> Pacer<'a> {
        Pacer { workspace, done: 0 }
    }

    /// Counts `units` of work; an error once the deadline has passed.
    pub fn step(&mut self, units: usize) -> Result<(), SkillError> {
        self.done = self.done.saturating_add(units);
        if self.done < Self::EVERY {
            return Ok(());
        }
        self.done = 0;
        self.workspace.check_deadline()
    }
}

/// Reading tool arguments defensively: the tool layer has validated them against the
/// schema, but a handler never trusts that and never panics on an odd value.
pub mod args {
    use serde_json::Value;

    use super::SkillError;
    use crate::protocol::Args;

    fn present<'a>(args: &'a Args, name: &str) -> Option<&'a Value> {
        args.get(name).filter(|v| !v.is_null())
    }

    /// An optional string argument (missing and `null` both mean absent).
    pub fn opt_str<'a>(args: &'a Args, tool: &str, name: &str) -> Result<Option<&'a str>, SkillError> {
        match present(args, name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(type_error(tool, name, "a string", other)),
        }
    }

    /// A required string argument.
    pub fn req_str<'a>(args: &'a Args, tool: &str, name: &str) -> Result<&'a str, SkillError> {
        opt_str(args, tool, name)?
            .ok_or_else(|| SkillError::new(format!("{tool}: missing required argument '{name}'")))
    }

    /// An optional non-negative integer; `5.0` counts as 5.
    pub fn opt_u64(args: &Args, tool: &str, name: &str) -> Result<Option<u64>, SkillError> {
        let Some(value) = present(args, name) else {
            return Ok(None);
        };
        if let Some(n) = value.as_u64() {
            return Ok(Some(n));
        }
        match value.as_f64() {
            Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1e15 => Ok(Some(f as u64)),
            _ => Err(type_error(tool, name, "a non-negative integer", value)),
        }
    }

    /// An optional boolean.
    pub fn opt_bool(args: &Args, tool: &str, name: &str) -> Result<Option<bool>, SkillError> {
        match present(args, name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(type_error(tool, name, "true or false", other)),
        }
    }

    /// An optional list of strings; a single string is taken as a list of one.
    pub fn opt_str_list(args: &Args, tool: &str, name: &str) -> Result<Option<Vec<String>>, SkillError> {
        match present(args, name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(type_error(tool, name, "a list of strings", other)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(type_error(tool, name, "a list of strings", other)),
        }
    }

    fn type_error(tool: &str, name: &str, expected: &str, got: &Value) -> SkillError {
        let mut shown = got.to_string();
        if shown.chars().count() > 60 {
            shown = shown.chars().take(60).collect::<String>() + "...";
        }
        SkillError::new(format!("{tool}: argument '{name}' must be {expected}, got {shown}"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn all_lists_the_five_skills_in_schema_order() {
        let names: Vec<String> = all().iter().map(|s| s.manifest().name.clone()).collect();
        assert_eq!(
            names,
            ["file_reader", "calculator", "local_file_search", "table_analyzer", "format_converter"]
        );
    }

    #[test]
    fn every_manifest_is_a_strict_object_schema() {
        for skill in all() {
            let m = skill.manifest();
            assert!(!m.description.is_empty() && !m.description.contains("broken manifest"), "{}", m.name);
            let p = &m.parameters;
            assert_eq!(p["type"], "object", "{}", m.name);
            assert_eq!(p["additionalProperties"], false, "{}", m.name);
            let props = p["properties"].as_object().unwrap_or_else(|| panic!("{} properties", m.name));
            for (key, prop) in props {
                assert!(prop["type"].is_string(), "{}.{key} has a type", m.name);
                assert!(prop["description"].as_str().is_some_and(|d| !d.is_empty()), "{}.{key}", m.name);
            }
            for req in p["required"].as_array().unwrap_or_else(|| panic!("{} required", m.name)) {
                let req = req.as_str().unwrap_or_default();
                assert!(props.contains_key(req), "{} requires unknown {req}", m.name);
            }
        }
    }

    #[test]
    fn only_the_converter_is_not_parallel_safe() {
        let flags: Vec<bool> = all().iter().map(|s| s.parallel_safe()).collect();
        assert_eq!(flags, [true, true, true, true, false]);
    }

    #[test]
    fn errors_name_their_tool_once() {
        assert_eq!(SkillError::new("bad").in_tool("calculator"), SkillError::new("calculator: bad"));
        assert_eq!(
            SkillError::new("calculator: bad").in_tool("calculator"),
            SkillError::new("calculator: bad")
        );
    }

    #[test]
    fn a_broken_manifest_degrades_without_panicking() {
        let m = embedded_manifest("x", "{not json");
        assert_eq!(m.name, "x");
        assert!(m.description.contains("broken manifest skills/x.json"));
    }

    #[test]
    #[allow(clippy::approx_constant)] // 3.14 is the seed example's number, not pi
    fn numbers_are_formatted_without_float_noise() {
        assert_eq!(format_number(3.14 * 5.0 - 2.5), "13.2");
        assert_eq!(format_number(0.1 + 0.2), "0.3");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(1.0 / 3.0), "0.333333333333");
        assert_eq!(format_number(2f64.powi(40)), "1099511627776");
        assert_eq!(format_number(1e21), "1e21");
        assert_eq!(format_number(-1.5e-7), "-1.5e-7");
        assert_eq!(format_number(2f64.powi(52) + 1.0), "4503599627370497");
        assert_eq!(format_number(1234567.891234567), "1234567.89123");
        assert_eq!(number_value(4.0), json!(4));
        assert_eq!(number_value(4503599627370497.0), json!(4503599627370497u64));
        assert_eq!(number_value(13.200000000000001), json!(13.2));
        assert_eq!(number_value(-2.5), json!(-2.5));
    }

    #[test]
    fn big_floats_never_print_as_exact_looking_integers() {
        // 2^53 rounded to 12 digits used to print as 9007199254740000, off by 992.
        assert_eq!(format_number(2f64.powi(53)), "9.00719925474e15");
        assert_eq!(format_number(-(2f64.powi(63))), "-9.22337203685e18");
        assert_eq!(format_number(2f64.powi(53) - 1.0), "9007199254740991");
        // Not an integer, and past 12 significant digits: 1234567890120 would look exact.
        assert_eq!(format_number(1234567890123.5), "1.23456789012e12");
        assert_eq!(format_number(123456789012.7), "123456789013");
        // Known to be approximate: rounded even where the f64 is an exact integer.
        assert_eq!(format_rounded(3002399751580332.0), "3.00239975158e15");
        assert_eq!(format_rounded(1.0), "1");
        assert_eq!(rounded_value(3002399751580332.0), json!(3.00239975158e15));
        assert_eq!(rounded_value(123456.0), json!(123456));
        assert_eq!(number_value(2f64.powi(53)), json!(9.00719925474e15));
        assert_eq!(number_value(1234567890123.5), json!(1234567890120.0));
        assert_eq!(number_value(2.9999999999999996), json!(3));
        assert_eq!(round_significant(2f64.powi(60)), 1.15292150461e18);
        assert!(
            is_exact_integer(2f64.powi(53) - 1.0)
                && !is_exact_integer(2f64.powi(53))
                && !is_exact_integer(0.5)
        );
    }

    #[test]
    fn integers_are_numbers_within_64_bits_and_digits_beyond() {
        assert_eq!(integer_value(-5), json!(-5));
        assert_eq!(integer_value(i128::from(u64::MAX)), json!(u64::MAX));
        assert_eq!(integer_value(i128::from(i64::MIN)), json!(i64::MIN));
        assert_eq!(integer_value(1 << 64), json!("18446744073709551616"));
        assert_eq!(integer_value(i128::from(i64::MIN) - 1), json!("-9223372036854775809"));
    }

    #[test]
    fn the_pacer_checks_the_deadline_once_per_thousand_steps() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap().with_deadline(std::time::Instant::now());
        let mut pacer = Pacer::new(&ws);
        for _ in 0..1023 {
            assert_eq!(pacer.step(1), Ok(()));
        }
        assert_eq!(pacer.step(1), Err(SkillError::new("stopped: the call ran past its time limit")));
        assert_eq!(pacer.step(5000), Err(SkillError::new("stopped: the call ran past its time limit")));
        let unlimited = Workspace::new(dir.path()).unwrap();
        let mut pacer = Pacer::new(&unlimited);
        assert!((0..5000).all(|_| pacer.step(1).is_ok()));
    }

    #[test]
    fn args_are_read_defensively() {
        let a: Args = serde_json::from_value(json!({
            "s": "x", "n": 5.0, "neg": -1, "b": true, "l": ["a", "b"], "one": "c", "bad": [1], "nul": null
        }))
        .unwrap();
        assert_eq!(args::req_str(&a, "t", "s"), Ok("x"));
        assert_eq!(args::opt_str(&a, "t", "nul"), Ok(None));
        assert_eq!(
            args::req_str(&a, "t", "missing"),
            Err(SkillError::new("t: missing required argument 'missing'"))
        );
        assert_eq!(
            args::req_str(&a, "t", "n"),
            Err(SkillError::new("t: argument 'n' must be a string, got 5.0"))
        );
        assert_eq!(args::opt_u64(&a, "t", "n"), Ok(Some(5)));
        assert!(args::opt_u64(&a, "t", "neg").is_err());
        assert_eq!(args::opt_bool(&a, "t", "b"), Ok(Some(true)));
        assert_eq!(args::opt_str_list(&a, "t", "l"), Ok(Some(vec!["a".into(), "b".into()])));
        assert_eq!(args::opt_str_list(&a, "t", "one"), Ok(Some(vec!["c".into()])));
        assert!(args::opt_str_list(&a, "t", "bad").is_err());
    }
}
