//! The tools schema, read once: each tool of an OpenAI-style schema
//! (`{"type": "function", "function": {name, description, parameters}}`, or the bare
//! `{name, description, parameters}`) as a [`ToolSpec`], and the one reading of what its
//! parameters allow. Validation ([`super::validate`]), the answer grammar and the parser's
//! typed values (`brain::constrain`, `brain::parse`), the prompt's example calls and the
//! bench's scorer all ask this module instead of reading the JSON themselves.
//!
//! Type names are JSON schema's, and the Python names BFCL writes (`dict`, `float`, `int`,
//! `bool`, `str`, `list`, `tuple`; `any` means no constraint).
//!
//! Integers: a number with no fractional part is an integer, `3.0` as well as `3` (JSON
//! schema's rule since draft 6). JSON itself does not tell `3.0` from `3`, the skills read
//! `3.0` as 3, and the constrained grammar writes integers without a fraction anyway.
//! BFCL's checker refuses `3.0` only because Python's `json` makes it a float; our scorer
//! follows this rule instead, so a call the tool layer accepts and runs is never scored as
//! a wrong type.

use serde_json::{json, Map, Value};

use crate::protocol::{json_kind, Args};

/// A tools schema that cannot be read: which tool (index, and name when it has one), which
/// field, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tool {index}{}: {reason}", .name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default())]
pub struct SpecError {
    pub index: usize,
    pub name: Option<String>,
    pub reason: String,
}

/// One tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The arguments object: its params (`properties`, in schema order), `required`, and
    /// whether other keys are refused. Its `raw` is the parameters schema as written.
    pub args: Schema,
}

/// One parameter (or a property of an object parameter).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub schema: Schema,
}

/// What one value may be: the parts of JSON schema the tools use.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Schema {
    /// The types allowed; empty: any value.
    pub kinds: Vec<ParamKind>,
    pub description: Option<String>,
    pub enum_values: Option<Vec<Value>>,
    pub constant: Option<Value>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    /// An array's items (an `items` object; a tuple's list of schemas is not checked).
    pub items: Option<Box<Schema>>,
    pub properties: Vec<Param>,
    pub required: Vec<String>,
    /// `additionalProperties: false`: keys other than `properties` are refused.
    pub closed: bool,
    /// The schema as written, for what needs JSON schema itself (the grammar).
    pub raw: Value,
}

/// A JSON type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
    Null,
}

const KNOWN_TYPES: &str = "string, integer, number, boolean, array, object, null; dict, float, int, bool, str, list, tuple, any";

impl ParamKind {
    /// The kind a type name means (JSON schema or BFCL's Python names); `None` for `any`.
    pub fn from_name(name: &str) -> Result<Option<Self>, String> {
        Ok(Some(match name {
            "string" | "str" => Self::String,
            "integer" | "int" => Self::Integer,
            "number" | "float" => Self::Number,
            "boolean" | "bool" => Self::Boolean,
            "array" | "list" | "tuple" => Self::Array,
            "object" | "dict" => Self::Object,
            "null" | "None" => Self::Null,
            "any" => return Ok(None),
            other => return Err(format!("unknown type {other:?} (known: {KNOWN_TYPES})")),
        }))
    }

    /// The JSON schema name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
            Self::Null => "null",
        }
    }

    /// Whether `value` is of this type; an integer is any number without a fraction (see
    /// the module's note).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
            Self::Number => value.is_number(),
            Self::Boolean => value.is_boolean(),
            Self::Array => value.is_array(),
            Self::Object => value.is_object(),
            Self::Null => value.is_null(),
        }
    }

    /// A value of this type written as bare text (an XML call's parameter), or `None` when
    /// the text is not one (strings stay text).
    pub fn read_text(self, text: &str) -> Option<Value> {
        let text = text.trim();
        match self {
            Self::Integer => text.parse::<i64>().ok().map(Value::from).or_else(|| {
                let f = text.parse::<f64>().ok()?;
                (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
            }),
            Self::Number => text
                .parse::<i64>()
                .ok()
                .map(Value::from)
                .or_else(|| text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)),
            Self::Boolean => match text.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Self::Array => serde_json::from_str::<Value>(text).ok().filter(Value::is_array),
            Self::Object => serde_json::from_str::<Value>(text).ok().filter(Value::is_object),
            Self::String | Self::Null => None,
        }
    }

    /// A value of this type for an example call.
    pub fn placeholder(self) -> Value {
        match self {
            Self::Integer => json!(1),
            Self::Number => json!(1.5),
            Self::Boolean => json!(true),
            Self::Array => json!([]),
            Self::Object => json!({}),
            Self::String | Self::Null => json!("..."),
        }
    }
}

impl ToolSpec {
    /// Reads tool number `index` of a tools schema.
    pub fn parse(tool: &Value, index: usize) -> Result<Self, SpecError> {
        let err = |name: Option<&str>, reason: String| SpecError { index, name: name.map(str::to_string), reason };
        if !tool.is_object() {
            return Err(err(None, format!("must be an object, found {}", json_kind(tool))));
        }
        // The `{"type": "function", "function": ...}` wrapper, or the function itself.
        let function = tool.get("function").filter(|f| f.is_object()).unwrap_or(tool);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| err(None, "no function.name".into()))?;
        let description = match function.get("description") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => return Err(err(Some(name), format!("description: must be a text, found {}", json_kind(other)))),
        };
        let parameters = match function.get("parameters") {
            None | Some(Value::Null) => json!({"type": "object", "properties": {}}),
            Some(p) => p.clone(),
        };
        let args = Schema::read(&parameters, "parameters").map_err(|reason| err(Some(name), reason))?;
        Ok(Self { name: name.to_string(), description, args })
    }

    /// Reads every tool of a tools schema; the first that cannot be read is the error.
    pub fn parse_all(tools: &[Value]) -> Result<Vec<Self>, SpecError> {
        tools.iter().enumerate().map(|(i, tool)| Self::parse(tool, i)).collect()
    }

    pub fn params(&self) -> &[Param] {
        &self.args.properties
    }

    /// The schema of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&Schema> {
        self.args.property(name)
    }

    pub fn required(&self) -> &[String] {
        &self.args.required
    }

    /// The parameters schema as written.
    pub fn parameters(&self) -> &Value {
        &self.args.raw
    }

    /// Checks a call's arguments against the parameters.
    pub fn check(&self, args: &Args) -> Result<(), Mismatch> {
        self.args.check(&Value::Object(args.clone()))
    }

    /// Arguments for an example call: a value of the right type for each required
    /// parameter (or the first one when none is required).
    pub fn placeholder_args(&self) -> Map<String, Value> {
        let required = self.required();
        let chosen: Vec<&Param> = if required.is_empty() {
            self.params().iter().take(1).collect()
        } else {
            self.params().iter().filter(|p| required.contains(&p.name)).collect()
        };
        chosen
            .into_iter()
            .map(|p| (p.name.clone(), p.schema.main_kind().map_or_else(|| json!("..."), ParamKind::placeholder)))
            .collect()
    }

    /// The tool in OpenAI function format.
    pub fn to_openai(&self) -> Value {
        openai_tool(&self.name, &Value::from(self.description.as_str()), self.parameters())
    }
}

/// `{"type": "function", "function": {name, description, parameters}}`.
pub fn openai_tool(name: &str, description: &Value, parameters: &Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
}

/// The tool named `name` (the first, when a name is repeated: as a dispatcher keyed by name
/// sees it).
pub fn find<'a>(tools: &'a [ToolSpec], name: &str) -> Option<&'a ToolSpec> {
    tools.iter().find(|t| t.name == name)
}

/// The tools of `tools` (as given) whose names are among `names`, in their order: a request
/// asked again with fewer tools.
pub fn only_named(tools: &[Value], names: &[String]) -> Vec<Value> {
    tools.iter().enumerate().filter(|(i, tool)| ToolSpec::parse(tool, *i).is_ok_and(|spec| names.contains(&spec.name))).map(|(_, tool)| tool.clone()).collect()
}

impl Schema {
    /// Reads a schema; `field` names it in errors (`parameters.properties.city`).
    pub fn read(value: &Value, field: &str) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err(format!("{field}: must be an object, found {}", json_kind(value)));
        };
        let kinds = match map.get("type") {
            None => Vec::new(),
            Some(t) => read_kinds(t).map_err(|e| format!("{field}.type: {e}"))?,
        };
        let enum_values = match map.get("enum") {
            None => None,
            Some(Value::Array(values)) => Some(values.clone()),
            Some(other) => return Err(format!("{field}.enum: must be a list, found {}", json_kind(other))),
        };
        let items = match map.get("items") {
            Some(items @ Value::Object(_)) => Some(Box::new(Self::read(items, &format!("{field}.items"))?)),
            _ => None,
        };
        let properties = match map.get("properties") {
            None => Vec::new(),
            Some(Value::Object(props)) => props
                .iter()
                .map(|(name, p)| {
                    Ok(Param { name: name.clone(), schema: Self::read(p, &format!("{field}.properties.{name}"))? })
                })
                .collect::<Result<_, String>>()?,
            Some(other) => return Err(format!("{field}.properties: must be an object, found {}", json_kind(other))),
        };
        let required = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("{field}.required: must be a list of names"))?,
            Some(other) => return Err(format!("{field}.required: must be a list of names, found {}", json_kind(other))),
        };
        Ok(Self {
            kinds,
            description: map.get("description").and_then(Value::as_str).map(str::to_string),
            enum_values,
            constant: map.get("const").cloned(),
            minimum: map.get("minimum").and_then(Value::as_f64),
            maximum: map.get("maximum").and_then(Value::as_f64),
            items,
            properties,
            required,
            closed: map.get("additionalProperties") == Some(&Value::Bool(false)),
            raw: value.clone(),
        })
    }

    /// Whether `value` is of one of the allowed types.
    pub fn accepts(&self, value: &Value) -> bool {
        self.kinds.is_empty() || self.kinds.iter().any(|k| k.accepts(value))
    }

    /// The type a value is read as: the first allowed one that is not `null`.
    pub fn main_kind(&self) -> Option<ParamKind> {
        self.kinds.iter().copied().find(|k| *k != ParamKind::Null)
    }

    /// The schema of property `name`.
    pub fn property(&self, name: &str) -> Option<&Schema> {
        self.properties.iter().find(|p| p.name == name).map(|p| &p.schema)
    }

    /// Checks `value`, depth first: its type, enum and bounds; an object's required keys,
    /// then each key (unknown ones refused where the schema is closed); an array's items.
    pub fn check(&self, value: &Value) -> Result<(), Mismatch> {
        self.check_at(value, &mut Vec::new())
    }

    fn check_at(&self, value: &Value, path: &mut Vec<Step>) -> Result<(), Mismatch> {
        let fail = |path: &[Step], problem| Err(Mismatch { path: path.to_vec(), problem: Box::new(problem) });
        if !self.accepts(value) {
            return fail(path, Problem::Kind { expected: self.kinds.clone(), got: value.clone() });
        }
        if let Some(allowed) = self.enum_values.as_ref().filter(|allowed| !allowed.contains(value)) {
            return fail(path, Problem::NotAllowed { allowed: allowed.clone(), got: value.clone() });
        }
        if let Some(n) = value.as_f64() {
            if let Some(minimum) = self.minimum.filter(|min| n < *min) {
                return fail(path, Problem::Below { minimum, got: n });
            }
            if let Some(maximum) = self.maximum.filter(|max| n > *max) {
                return fail(path, Problem::Above { maximum, got: n });
            }
        }
        match value {
            Value::Object(obj) => {
                if let Some(missing) = self.required.iter().find(|r| !obj.contains_key(*r)) {
                    path.push(Step::Key(missing.clone()));
                    return fail(path, Problem::Missing);
                }
                for (key, item) in obj {
                    path.push(Step::Key(key.clone()));
                    match self.property(key) {
                        Some(schema) => schema.check_at(item, path)?,
                        None if self.closed => {
                            let known = self.properties.iter().map(|p| p.name.clone()).collect();
                            return fail(path, Problem::Unknown { known });
                        }
                        None => {}
                    }
                    path.pop();
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        path.push(Step::Index(i));
                        schema.check_at(item, path)?;
                        path.pop();
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The kinds a `type` names (a name or a list of names); empty when `any` is among them.
pub fn read_kinds(value: &Value) -> Result<Vec<ParamKind>, String> {
    let names: Vec<&str> = match value {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().map(Value::as_str).collect::<Option<_>>().ok_or("must be type names")?,
        other => return Err(format!("must be a type name, found {}", json_kind(other))),
    };
    let mut kinds = Vec::new();
    for name in names {
        match ParamKind::from_name(name)? {
            Some(kind) => kinds.push(kind),
            // `any` among the types: no constraint at all.
            None => return Ok(Vec::new()),
        }
    }
    Ok(kinds)
}

/// Where in the arguments a value is.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A value the schema does not allow.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub path: Vec<Step>,
    pub problem: Box<Problem>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    Kind { expected: Vec<ParamKind>, got: Value },
    NotAllowed { allowed: Vec<Value>, got: Value },
    Below { minimum: f64, got: f64 },
    Above { maximum: f64, got: f64 },
    /// A required key is missing (the path ends at it).
    Missing,
    /// A key the closed object does not have.
    Unknown { known: Vec<String> },
}

impl Mismatch {
    /// `options.sep`, `columns[1]`.
    pub fn path_text(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Key(key) if out.is_empty() => out.push_str(key),
                Step::Key(key) => out.push_str(&format!(".{key}")),
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// The mismatch in words, naming the value `NOUN 'path'` (`argument 'columns[1]'`; the
    /// whole object is `NOUNs`).
    pub fn describe(&self, noun: &str) -> String {
        let field = match self.path_text() {
            path if path.is_empty() => format!("{noun}s"),
            path => format!("{noun} '{path}'"),
        };
        match self.problem.as_ref() {
            Problem::Kind { expected, got } => {
                let expected: Vec<&str> = expected.iter().map(|k| k.as_str()).collect();
                format!("{field} must be {}, got {}", expected.join(" or "), shown(got))
            }
            Problem::NotAllowed { allowed, got } => {
                let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
                format!("{field} must be one of {}, got {}", allowed.join(", "), shown(got))
            }
            Problem::Below { minimum, got } => format!("{field} must be >= {minimum}, got {got}"),
            Problem::Above { maximum, got } => format!("{field} must be <= {maximum}, got {got}"),
            Problem::Missing => format!("missing required {field}"),
            Problem::Unknown { known } => format!("unknown {field} (known: {})", known.join(", ")),
        }
    }
}

/// JSON text cut to a readable length (on a char boundary).
pub fn shown(value: &Value) -> String {
    const MAX: usize = 160;
    let text = value.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

/// Calls `f` on `schema` and on every schema nested in it (properties, items, additional
/// properties, definitions, `anyOf` branches...), each with its path below `path`
/// (`f.x`, `f.x[]`, `f.*`): the one walk for rewriting raw JSON schema (BFCL's type names,
/// the grammar's closed objects and bounds). The first error stops it.
pub fn walk_raw<E>(schema: &mut Value, path: &str, f: &mut RawVisit<E>) -> Result<(), E> {
    let Value::Object(map) = schema else { return Ok(()) };
    f(map, path)?;
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "patternProperties" | "$defs" | "definitions", Value::Object(children)) => {
                for (name, child) in children.iter_mut() {
                    walk_raw(child, &format!("{path}.{name}"), f)?;
                }
            }
            ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(children)) => {
                for (i, child) in children.iter_mut().enumerate() {
                    walk_raw(child, &format!("{path}[{i}]"), f)?;
                }
            }
            ("items" | "additionalItems", child) => walk_raw(child, &format!("{path}[]"), f)?,
            ("additionalProperties", child) => walk_raw(child, &format!("{path}.*"), f)?,
            _ => {}
        }
    }
    Ok(())
}

/// What [`walk_raw`] calls on each schema object, with its path.
pub type RawVisit<'a, E> = dyn FnMut(&mut Map<String, Value>, &str) -> Result<(), E> + 'a;

/// [`walk_raw`] for a rewrite that cannot fail.
pub fn for_each_raw(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Ok(()) = walk_raw::<std::convert::Infallible>(schema, "", &mut |map, _| {
        f(map);
        Ok(())
    });
}

#[cfg(test)]
mod tests;
