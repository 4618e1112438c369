//! `format_converter(to, path? | content?, from?, output_path?, overwrite=false)`: converts
//! data between csv, json, yaml and a markdown pipe table. JSON and YAML output keep the
//! input's shape (a config's mapping stays a mapping); csv and markdown need rows (a list
//! of objects, or one object as one row). The result is returned inline or written atomically to a
//! file inside the workspace, never replacing an existing file unless asked.
//!
//! Numbers come out as they went in: serde_json here holds no integer past 64 bits and
//! no decimal past f64 precision, so such JSON and YAML numbers are kept as text, digit
//! for digit, and the result says so (`note`). YAML merge keys (`<<: *base`) are applied.
//! The work is linear in the input, checks the call's deadline as it goes, and refuses a
//! csv or markdown table that would be far larger than its input (sparse rows).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Map, Value};

use super::workspace::MAX_TEXT_BYTES;
use super::{args, embedded_manifest, Manifest, Pacer, Skill, SkillError, Workspace};
use crate::protocol::Args;

const NAME: &str = "format_converter";
/// A csv or markdown table has a cell for every row and column, so rows that each name
/// different columns would multiply out. A table from input within the size limit has
/// at most about a cell per input byte; this leaves room and stops the blow-up.
const MAX_CELLS: usize = 2 * MAX_TEXT_BYTES as usize;
/// Values a YAML document may expand to through its aliases (see [`MAX_CELLS`]).
const MAX_YAML_VALUES: usize = 2 * MAX_TEXT_BYTES as usize;
/// How many of the numbers kept as text the note names.
const NOTE_EXAMPLES: usize = 3;

pub struct FormatConverter;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Csv,
    Json,
    Yaml,
    Markdown,
}

impl Format {
    fn parse(name: &str, argument: &str) -> Result<Format, SkillError> {
        match name.trim().trim_start_matches('.').to_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "yaml" | "yml" => Ok(Format::Yaml),
            "markdown" | "md" => Ok(Format::Markdown),
            _ => Err(SkillError::new(format!(
                "unknown format '{name}' for {argument}; use csv, json, yaml or markdown"
            ))),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Markdown => "markdown",
        }
    }
}

/// Rows as objects, plus every column name in first-seen order.
#[derive(Debug, PartialEq)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Map<String, Value>>,
}

impl Skill for FormatConverter {
    fn manifest(&self) -> &Manifest {
        static MANIFEST: OnceLock<Manifest> = OnceLock::new();
        MANIFEST.get_or_init(|| embedded_manifest(NAME, include_str!("../../skills/format_converter.json")))
    }

    /// It may write a file, and two calls writing the same one must not race.
    fn parallel_safe(&self) -> bool {
        false
    }

    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
        call(args, workspace).map_err(|err| err.in_tool(NAME))
    }
}

/// The call itself; [`Skill::run`] names the tool in every error.
fn call(args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
    let to = Format::parse(args::req_str(args, NAME, "to")?, "to")?;
    let path = args::opt_str(args, NAME, "path")?;
    let inline = args::opt_str(args, NAME, "content")?;
    let from = args::opt_str(args, NAME, "from")?.map(|f| Format::parse(f, "from")).transpose()?;
    let output_path = args::opt_str(args, NAME, "output_path")?;
    let overwrite = args::opt_bool(args, NAME, "overwrite")?.unwrap_or(false);

    let (text, from) = match (path, inline) {
        (Some(_), Some(_)) => return Err(SkillError::new("give either path or content, not both")),
        (None, None) => {
            return Err(SkillError::new(
                "give the input as path (a file in the workspace) or as content (the text itself)",
            ))
        }
        (Some(path), None) => {
            let from = match from {
                Some(from) => from,
                None => format_of_path(path)?,
            };
            (workspace.read_text(path)?.text, from)
        }
        (None, Some(content)) => {
            let Some(from) = from else {
                return Err(SkillError::new("with inline content, give from (csv, json or yaml)"));
            };
            if content.len() as u64 > MAX_TEXT_BYTES {
                return Err(SkillError::new(format!(
                    "content is too large (the limit is {} KiB)",
                    MAX_TEXT_BYTES / 1024
                )));
            }
            (content.strip_prefix('\u{feff}').unwrap_or(content).to_string(), from)
        }
    };

    let mut pacer = Pacer::new(workspace);
    // Numbers kept as text because a 64-bit number or an f64 would change them.
    let (value, kept, kind) = match from {
        Format::Csv => (rows_value(&parse_csv(&text, &mut pacer)?), Vec::new(), "CSV"),
        Format::Json => {
            let (text, kept) = quote_inexact_json_numbers(&text, &mut pacer)?;
            let value = serde_json::from_str(&text)
                .map_err(|err| SkillError::new(format!("input is not valid JSON: {err}")))?;
            (value, kept, "JSON")
        }
        Format::Yaml => {
            let (value, kept) = read_yaml(&text, workspace)?;
            (value, kept, "YAML")
        }
        Format::Markdown => {
            return Err(SkillError::new(
                "markdown can only be an output format; from must be csv, json or yaml",
            ))
        }
    };
    // JSON and YAML keep the input's shape (a config's mapping stays a mapping); csv and a
    // markdown table need rows, and a single object is one row.
    let table = match to {
        Format::Csv | Format::Markdown => Some(table_of(value.clone(), kind, &mut pacer)?),
        Format::Json | Format::Yaml => table_of(value.clone(), kind, &mut pacer).ok(),
    };
    let converted = match (&table, to) {
        (Some(table), Format::Csv) => render_csv(table, &mut pacer)?,
        (Some(table), Format::Markdown) => render_markdown(table, &mut pacer)?,
        _ => render_value(&value, to)?,
    };
    let note = kept_note(&kept);

    let mut map = Map::new();
    map.insert("from".into(), json!(from.as_str()));
    map.insert("to".into(), json!(to.as_str()));
    if let Some(table) = &table {
        map.insert("rows".into(), json!(table.rows.len()));
        map.insert("columns".into(), json!(table.columns));
    }
    if let Some(note) = &note {
        map.insert("note".into(), json!(note));
    }
    match output_path {
        None => {
            map.insert("content".into(), Value::String(converted));
        }
        Some(output_path) => {
            let written = workspace.write_text(output_path, &converted, overwrite)?;
            let shown = workspace.shown(&written);
            map.insert("output_path".into(), Value::String(shown.clone()));
            map.insert("bytes".into(), json!(converted.len()));
            let what = table.as_ref().map_or_else(|| "the data".to_string(), |t| format!("{} rows", t.rows.len()));
            let mut content = format!(
                "Converted {what} from {} to {} and wrote them to {shown} ({} bytes).",
                from.as_str(),
                to.as_str(),
                converted.len()
            );
            if let Some(note) = &note {
                content.push(' ');
                content.push_str(note);
            }
            map.insert("content".into(), Value::String(content));
        }
    }
    Ok(Value::Object(map))
}

fn format_of_path(path: &str) -> Result<Format, SkillError> {
    let extension = std::path::Path::new(path.trim())
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "csv" => Ok(Format::Csv),
        "json" => Ok(Format::Json),
        "yaml" | "yml" => Ok(Format::Yaml),
        _ => Err(SkillError::new(format!(
            "cannot tell the format of '{path}' from its extension; give from (csv, json or yaml)"
        ))),
    }
}

fn parse_csv(text: &str, pacer: &mut Pacer) -> Result<Table, SkillError> {
    let csv_error = |err: csv::Error| match err.position() {
        Some(pos) => SkillError::new(format!("bad CSV on line {}: {err}", pos.line())),
        None => SkillError::new(format!("bad CSV: {err}")),
    };
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut records = reader.records();
    let columns: Vec<String> = match records.next() {
        Some(record) => record.map_err(csv_error)?.iter().map(|h| h.trim().to_string()).collect(),
        None => return Ok(Table { columns: Vec::new(), rows: Vec::new() }),
    };
    let mut seen = HashSet::with_capacity(columns.len());
    if let Some(dup) = columns.iter().find(|c| !seen.insert(c.as_str())) {
        return Err(SkillError::new(format!("the CSV header names column '{dup}' twice")));
    }
    let mut rows = Vec::new();
    for record in records {
        let record = record.map_err(csv_error)?;
        pacer.step(record.len().max(1))?;
        if record.len() != columns.len() {
            let line = record.position().map_or(0, csv::Position::line);
            return Err(SkillError::new(format!(
                "CSV line {line} has {} fields but the header has {}",
                record.len(),
                columns.len()
            )));
        }
        rows.push(columns.iter().cloned().zip(record.iter().map(csv_cell)).collect());
    }
    Ok(Table { columns, rows })
}

/// A CSV cell becomes a JSON number only when that is lossless (`42`, `2.5`; not `007`
/// or `1e3`, which would come back different, nor an integer past 64 bits, which JSON
/// here cannot hold); everything else stays a string.
fn csv_cell(cell: &str) -> Value {
    if let Ok(n) = cell.parse::<i64>() {
        if n.to_string() == cell {
            return Value::from(n);
        }
    }
    if let Ok(n) = cell.parse::<u64>() {
        if n.to_string() == cell {
            return Value::from(n);
        }
    }
    if cell.contains('.') {
        if let Ok(f) = cell.parse::<f64>() {
            if f.is_finite() && f.to_string() == cell {
                if let Some(n) = serde_json::Number::from_f64(f) {
                    return Value::Number(n);
                }
            }
        }
    }
    Value::String(cell.to_string())
}

/// A JSON/YAML document as rows: a list of objects, or one object as a single row.
fn table_of(value: Value, kind: &str, pacer: &mut Pacer) -> Result<Table, SkillError> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(object) => vec![Value::Object(object)],
        _ => return Err(SkillError::new(format!("{kind} input must be a list of objects (one per row)"))),
    };
    let mut columns: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut rows = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let Value::Object(row) = item else {
            return Err(SkillError::new(format!(
                "{kind} item {} is not an object; each row must be an object of column: value",
                index + 1
            )));
        };
        pacer.step(row.len().max(1))?;
        for key in row.keys() {
            if !seen.contains(key) {
                seen.insert(key.clone());
                columns.push(key.clone());
            }
        }
        rows.push(row);
    }
    Ok(Table { columns, rows })
}

/// serde_json (without arbitrary precision) reads an integer past 64 bits, or a decimal
/// with more digits than an f64 holds, as the nearest f64: `18446744073709551617` would
/// come out as `18446744073709552000`. Such literals are put in quotes before parsing, so
/// they survive as text, digit for digit. Returns the text to parse and the literals
/// quoted. Strings are skipped; anything that is not a JSON number is left to the parser.
fn quote_inexact_json_numbers<'t>(
    text: &'t str,
    pacer: &mut Pacer,
) -> Result<(Cow<'t, str>, Vec<String>), SkillError> {
    let bytes = text.as_bytes();
    let mut quoted: Option<String> = None;
    let mut copied = 0;
    let mut kept = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                pacer.step(1)?;
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    i += 1;
                }
                let literal = &text[start..i];
                if !json_reads_exactly(literal) {
                    let out = quoted.get_or_insert_with(|| String::with_capacity(text.len() + 64));
                    out.push_str(&text[copied..start]);
                    out.push('"');
                    out.push_str(literal);
                    out.push('"');
                    copied = i;
                    kept.push(literal.to_string());
                }
            }
            _ => i += 1,
        }
    }
    Ok(match quoted {
        Some(mut out) => {
            out.push_str(&text[copied..]);
            (Cow::Owned(out), kept)
        }
        None => (Cow::Borrowed(text), kept),
    })
}

/// Whether serde_json reads this literal as a number of the same value. `true` for what
/// is not a JSON number at all (the parser reports that).
fn json_reads_exactly(literal: &str) -> bool {
    // Integers within 64 bits stay integers (the common case, checked first as it is cheap).
    if !literal.contains(['.', 'e', 'E'])
        && (literal.parse::<u64>().is_ok() || literal.parse::<i64>().is_ok())
    {
        return true;
    }
    let Some(written) = decimal_digits(literal) else {
        return true;
    };
    // Anything else becomes an f64: exact when that f64 is the same decimal number.
    match serde_json::from_str::<f64>(literal) {
        Ok(read) => decimal_digits(&format!("{read:e}")) == Some(written),
        Err(_) => false,
    }
}

/// A JSON number literal as (negative, significant digits, exponent) with the value
/// `0.DIGITS × 10^exponent`, so equal numbers give equal triples however written (`2.50`,
/// `25e-1`); zero is `(false, "", 0)`. `None` for what is not a JSON number (or has an
/// exponent too long to read).
fn decimal_digits(literal: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match literal.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, literal),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => {
            let exponent = &unsigned[at + 1..];
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (&unsigned[..at], exponent.parse::<i64>().ok()?)
        }
        None => (unsigned, 0),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) if !fraction.is_empty() => (whole, fraction),
        Some(_) => return None,
        None => (mantissa, ""),
    };
    let leading_zero_ok = whole == "0" || !whole.starts_with('0');
    if whole.is_empty()
        || !leading_zero_ok
        || !(whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    let leading = (all.len() - significant.len()) as i64;
    let significant = significant.trim_end_matches('0');
    if significant.is_empty() {
        return Some((false, String::new(), 0));
    }
    let point = exponent.checked_add(whole.len() as i64)?.checked_sub(leading)?;
    Some((negative, significant.to_string(), point))
}

/// The note on numbers kept as text, if any were.
fn kept_note(kept: &[String]) -> Option<String> {
    let first = kept.first()?;
    let examples: Vec<&str> = kept.iter().take(NOTE_EXAMPLES).map(String::as_str).collect();
    Some(if kept.len() == 1 {
        format!(
            "The number {first} does not fit a 64-bit number exactly, so it was kept as text, digit for digit."
        )
    } else {
        format!(
            "{} numbers do not fit a 64-bit number exactly, so they were kept as text, digit for digit (e.g. {}).",
            kept.len(),
            examples.join(", ")
        )
    })
}

/// Parses YAML (see [`YamlReader`]); returns the value and the integers kept as text.
fn read_yaml(text: &str, workspace: &Workspace) -> Result<(Value, Vec<String>), SkillError> {
    let mut reader = YamlReader { workspace, values: 0, kept: Vec::new(), stopped: None };
    let read = (&mut reader).deserialize(serde_yaml::Deserializer::from_str(text));
    if let Some(stopped) = reader.stopped {
        return Err(stopped);
    }
    let value = read.map_err(|err| SkillError::new(format!("input is not valid YAML: {err}")))?;
    Ok((value, reader.kept))
}

/// Reads a YAML document into the JSON value model (serde_yaml resolves anchors and
/// aliases on the way) and also: applies merge keys (`<<: *base`, see [`merge_keys`]);
/// keeps integers past 64 bits as their digits; stops at the call's deadline; refuses a
/// document whose aliases expand past [`MAX_YAML_VALUES`] values.
struct YamlReader<'w> {
    workspace: &'w Workspace,
    values: usize,
    kept: Vec<String>,
    /// Why reading stopped, when it was not the YAML's fault.
    stopped: Option<SkillError>,
}

impl YamlReader<'_> {
    fn count<E: de::Error>(&mut self) -> Result<(), E> {
        self.values += 1;
        if self.values > MAX_YAML_VALUES {
            return Err(self.stop(SkillError::new(format!(
                "the YAML expands to more than {MAX_YAML_VALUES} values through its aliases, \
                 far more than its own size; it is not converted"
            ))));
        }
        if self.values.is_multiple_of(1024) {
            if let Err(err) = self.workspace.check_deadline() {
                return Err(self.stop(err));
            }
        }
        Ok(())
    }

    fn stop<E: de::Error>(&mut self, err: SkillError) -> E {
        let error = E::custom(&err.0);
        self.stopped = Some(err);
        error
    }

    fn wide_integer(&mut self, digits: String) -> Value {
        self.kept.push(digits.clone());
        Value::String(digits)
    }
}

impl<'de> DeserializeSeed<'de> for &mut YamlReader<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &mut YamlReader<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        self.count()?;
        Ok(Value::from(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        self.count()?;
        Ok(Value::from(n))
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Value, E> {
        self.count()?;
        Ok(serde_json::Number::from_i128(n).map_or_else(|| self.wide_integer(n.to_string()), Value::Number))
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Value, E> {
        self.count()?;
        Ok(serde_json::Number::from_u128(n).map_or_else(|| self.wide_integer(n.to_string()), Value::Number))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Value, E> {
        self.count()?;
        Ok(serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.count()?;
        Ok(Value::String(s.to_string()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.count()?;
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.count()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(&mut *self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.count()?;
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(&mut *self)?;
            entries.push((key, value));
        }
        merge_keys(entries).map(Value::Object).map_err(de::Error::custom)
    }
}

/// Applies YAML merge keys: `<<: *base` (or `<<: [*a, *b]`) adds each entry of the base
/// mappings that the mapping does not set itself, earlier bases before later ones. The
/// merged entries stand where the `<<` entry stood, so the columns keep a natural order.
fn merge_keys(entries: Vec<(String, Value)>) -> Result<Map<String, Value>, &'static str> {
    if !entries.iter().any(|(key, _)| key == "<<") {
        return Ok(entries.into_iter().collect());
    }
    let own: HashSet<String> =
        entries.iter().filter(|(key, _)| key != "<<").map(|(key, _)| key.clone()).collect();
    let mut map = Map::new();
    for (key, value) in entries {
        if key != "<<" {
            map.insert(key, value);
            continue;
        }
        let bases = match value {
            Value::Object(base) => vec![base],
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::Object(base) => Ok(base),
                    _ => Err(MERGE_ERROR),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(MERGE_ERROR),
        };
        for (base_key, base_value) in bases.into_iter().flatten() {
            if !own.contains(&base_key) && !map.contains_key(&base_key) {
                map.insert(base_key, base_value);
            }
        }
    }
    Ok(map)
}

const MERGE_ERROR: &str = "a merge key (<<) must name a mapping or a list of mappings";

/// The table's rows as a JSON list of objects.
fn rows_value(table: &Table) -> Value {
    Value::Array(table.rows.iter().cloned().map(Value::Object).collect())
}

/// `value` as JSON (pretty) or YAML text.
fn render_value(value: &Value, to: Format) -> Result<String, SkillError> {
    match to {
        Format::Yaml => serde_yaml::to_string(value).map_err(|err| SkillError::new(format!("cannot write YAML: {err}"))),
        _ => serde_json::to_string_pretty(value)
            .map(|text| text + "\n")
            .map_err(|err| SkillError::new(format!("cannot write JSON: {err}"))),
    }
}

/// Refuses a csv or markdown table with more than [`MAX_CELLS`] cells.
fn check_cells(table: &Table, to: Format) -> Result<(), SkillError> {
    if table.columns.is_empty() {
        return Err(no_columns());
    }
    let cells = table.rows.len().saturating_mul(table.columns.len());
    if cells > MAX_CELLS {
        return Err(SkillError::new(format!(
            "{} rows by {} columns is {cells} cells, too many for a {} table (the limit is {MAX_CELLS}); \
             the rows name different columns, so json or yaml, which keep each row's own keys, suit them",
            table.rows.len(),
            table.columns.len(),
            to.as_str()
        )));
    }
    Ok(())
}

/// A cell as flat text: nested values become their JSON text, null an empty cell.
fn cell_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn no_columns() -> SkillError {
    SkillError::new("the input has no columns, so there is no table to write")
}

fn render_csv(table: &Table, pacer: &mut Pacer) -> Result<String, SkillError> {
    check_cells(table, Format::Csv)?;
    let write_error = |err: csv::Error| SkillError::new(format!("cannot write CSV: {err}"));
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&table.columns).map_err(write_error)?;
    for row in &table.rows {
        pacer.step(table.columns.len())?;
        writer.write_record(table.columns.iter().map(|c| cell_text(row.get(c)))).map_err(write_error)?;
    }
    let bytes =
        writer.into_inner().map_err(|err| SkillError::new(format!("cannot write CSV: {}", err.error())))?;
    String::from_utf8(bytes).map_err(|err| SkillError::new(format!("cannot write CSV: {err}")))
}

fn render_markdown(table: &Table, pacer: &mut Pacer) -> Result<String, SkillError> {
    check_cells(table, Format::Markdown)?;
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut text = line(table.columns.iter().map(|c| markdown_cell(c)).collect());
    text.push_str(&line(table.columns.iter().map(|_| "---".to_string()).collect()));
    for row in &table.rows {
        pacer.step(table.columns.len())?;
        text.push_str(&line(table.columns.iter().map(|c| markdown_cell(&cell_text(row.get(c)))).collect()));
    }
    Ok(text)
}

/// A pipe or a line break would end the cell or the row early.
fn markdown_cell(text: &str) -> String {
    text.replace('\\', "\\\\").replace('|', "\\|").replace("\r\n", "<br>").replace(['\n', '\r'], "<br>")
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::time::{Duration, Instant};

    use super::*;

    const CSV: &str = "name,city,sales\n张三,北京,100\n\"Li, Si\",\"上|海\",250.5\n";

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs::create_dir_all(root.join("data")).unwrap();
        fs::write(root.join("data/sample.csv"), CSV).unwrap();
        fs::write(
            root.join("data/rows.json"),
            r#"[{"id": 1, "tags": ["a", "b"]}, {"id": 2, "extra": null, "name": "x\ny"}]"#,
        )
        .unwrap();
        fs::write(root.join("data/rows.yml"), "- id: 7\n  城市: 北京\n- id: 8\n  城市: 上海\n").unwrap();
        let ws = Workspace::new(&root).unwrap();
        (dir, ws)
    }

    fn run(ws: &Workspace, args: Value) -> Result<Value, SkillError> {
        FormatConverter.run(args.as_object().unwrap(), ws)
    }

    #[test]
    fn csv_file_to_json_inline_keeps_numbers_lossless() {
        let (_d, ws) = workspace();
        let expected_text = "[\n  {\n    \"name\": \"张三\",\n    \"city\": \"北京\",\n    \"sales\": 100\n  },\n  \
                             {\n    \"name\": \"Li, Si\",\n    \"city\": \"上|海\",\n    \"sales\": 250.5\n  }\n]\n";
        assert_eq!(
            run(&ws, json!({"path": "data/sample.csv", "to": "json"})).unwrap(),
            json!({"from": "csv", "to": "json", "rows": 2, "columns": ["name", "city", "sales"], "content": expected_text})
        );
        let out = run(&ws, json!({"content": "code,n\n007,1e3\n", "from": "csv", "to": "json"})).unwrap();
        let parsed: Value = serde_json::from_str(out["content"].as_str().unwrap()).unwrap();
        assert_eq!(parsed, json!([{"code": "007", "n": "1e3"}]));
    }

    #[test]
    fn csv_to_markdown_escapes_pipes() {
        let (_d, ws) = workspace();
        let out = run(&ws, json!({"path": "data/sample.csv", "to": "markdown"})).unwrap();
        assert_eq!(
            out["content"],
            "| name | city | sales |\n| --- | --- | --- |\n| 张三 | 北京 | 100 |\n| Li, Si | 上\\|海 | 250.5 |\n"
        );
    }

    #[test]
    fn json_with_nested_and_missing_values_to_csv_and_markdown() {
        let (_d, ws) = workspace();
        let out = run(&ws, json!({"path": "data/rows.json", "to": "csv"})).unwrap();
        assert_eq!(
            out,
            json!({
                "from": "json", "to": "csv", "rows": 2, "columns": ["id", "tags", "extra", "name"],
                "content": "id,tags,extra,name\n1,\"[\"\"a\"\",\"\"b\"\"]\",,\n2,,,\"x\ny\"\n",
            })
        );
        let out = run(&ws, json!({"path": "data/rows.json", "to": "md"})).unwrap();
        assert_eq!(
            out["content"],
            "| id | tags | extra | name |\n| --- | --- | --- | --- |\n| 1 | [\"a\",\"b\"] |  |  |\n| 2 |  |  | x<br>y |\n"
        );
    }

    #[test]
    fn yaml_round_trips_through_json() {
        let (_d, ws) = workspace();
        let out = run(&ws, json!({"path": "data/rows.yml", "to": "json"})).unwrap();
        let json_text = out["content"].as_str().unwrap().to_string();
        assert_eq!(
            serde_json::from_str::<Value>(&json_text).unwrap(),
            json!([{"id": 7, "城市": "北京"}, {"id": 8, "城市": "上海"}])
        );
        let back = run(&ws, json!({"content": json_text, "from": "json", "to": "yaml"})).unwrap();
        assert_eq!(back["content"], "- id: 7\n  城市: 北京\n- id: 8\n  城市: 上海\n");
        // A single object is one row.
        let one = run(&ws, json!({"content": "{\"a\": 1}", "from": "json", "to": "csv"})).unwrap();
        let bom = run(&ws, json!({"content": "\u{feff}名,n\n甲,1\n", "from": "csv", "to": "json"})).unwrap();
        assert_eq!(bom["columns"], json!(["名", "n"]));
        assert_eq!(one["content"], "a\n1\n");
    }

    #[test]
    fn json_and_yaml_keep_the_inputs_shape() {
        let (_d, ws) = workspace();
        let config = "service:\n  name: booking\n  port: 8080\nhosts: [a, b]\n";
        let out = run(&ws, json!({"content": config, "from": "yaml", "to": "json"})).unwrap();
        let parsed: Value = serde_json::from_str(out["content"].as_str().unwrap()).unwrap();
        assert_eq!(parsed, json!({"service": {"name": "booking", "port": 8080}, "hosts": ["a", "b"]}), "a mapping stays a mapping");
        assert_eq!((&out["rows"], &out["columns"]), (&json!(1), &json!(["service", "hosts"])));
        assert_eq!(converted(&ws, "[1, 2, 3]", "json", "yaml"), "- 1\n- 2\n- 3\n", "not rows, but still data");
        let out = run(&ws, json!({"content": "[1, 2]", "from": "json", "to": "yaml"})).unwrap();
        assert!(out.get("rows").is_none() && out.get("columns").is_none(), "{out}");
        assert_eq!(converted(&ws, config, "yaml", "csv"), "service,hosts\n\"{\"\"name\"\":\"\"booking\"\",\"\"port\"\":8080}\",\"[\"\"a\"\",\"\"b\"\"]\"\n");
    }

    #[test]
    fn writes_a_file_and_refuses_to_overwrite_it() {
        let (_d, ws) = workspace();
        let args = json!({"path": "data/sample.csv", "to": "yaml", "output_path": "out/sample.yaml"});
        let out = run(&ws, args.clone()).unwrap();
        let written = fs::read_to_string(ws.root.join("out/sample.yaml")).unwrap();
        assert_eq!(
            written,
            "- name: 张三\n  city: 北京\n  sales: 100\n- name: Li, Si\n  city: 上|海\n  sales: 250.5\n"
        );
        assert_eq!(
            out,
            json!({
                "from": "csv", "to": "yaml", "rows": 2, "columns": ["name", "city", "sales"],
                "output_path": "out/sample.yaml", "bytes": written.len(),
                "content": format!("Converted 2 rows from csv to yaml and wrote them to out/sample.yaml ({} bytes).", written.len()),
            })
        );
        fs::write(ws.root.join("out/sample.yaml"), "mine").unwrap();
        assert_eq!(
            run(&ws, args.clone()),
            Err(SkillError::new(
                "format_converter: 'out/sample.yaml' already exists; not overwriting it (set overwrite to true to replace it)"
            ))
        );
        assert_eq!(fs::read_to_string(ws.root.join("out/sample.yaml")).unwrap(), "mine");
        let mut args = args;
        args["overwrite"] = json!(true);
        run(&ws, args).unwrap();
        assert_eq!(fs::read_to_string(ws.root.join("out/sample.yaml")).unwrap(), written);
    }

    /// The converted text of one inline conversion.
    fn converted(ws: &Workspace, content: &str, from: &str, to: &str) -> String {
        let out = run(ws, json!({"content": content, "from": from, "to": to})).unwrap();
        out["content"].as_str().unwrap().to_string()
    }

    #[test]
    fn csv_numbers_past_64_bits_come_back_digit_for_digit() {
        let (_d, ws) = workspace();
        let csv = "id,n\n1,18446744073709551617\n2,18446744073709551615\n3,-9223372036854775809\n4,0.30000000000000004\n";
        assert_eq!(converted(&ws, csv, "csv", "csv"), csv);
        let json_text = converted(&ws, csv, "csv", "json");
        assert_eq!(
            serde_json::from_str::<Value>(&json_text).unwrap(),
            json!([
                {"id": 1, "n": "18446744073709551617"},
                {"id": 2, "n": 18446744073709551615u64},
                {"id": 3, "n": "-9223372036854775809"},
                {"id": 4, "n": 0.30000000000000004},
            ])
        );
        assert_eq!(
            converted(&ws, csv, "csv", "yaml"),
            "- id: 1\n  n: '18446744073709551617'\n- id: 2\n  n: 18446744073709551615\n\
             - id: 3\n  n: '-9223372036854775809'\n- id: 4\n  n: 0.30000000000000004\n"
        );
        assert_eq!(
            converted(&ws, csv, "csv", "markdown"),
            "| id | n |\n| --- | --- |\n| 1 | 18446744073709551617 |\n| 2 | 18446744073709551615 |\n\
             | 3 | -9223372036854775809 |\n| 4 | 0.30000000000000004 |\n"
        );
        // And back from every format that can be read.
        assert_eq!(converted(&ws, &json_text, "json", "csv"), csv);
        assert_eq!(converted(&ws, &converted(&ws, csv, "csv", "yaml"), "yaml", "csv"), csv);
    }

    #[test]
    fn json_numbers_serde_would_round_are_kept_as_text_with_a_note() {
        let (_d, ws) = workspace();
        let input = r#"[{"n": 18446744073709551617, "x": 0.1000000000000000000001, "ok": 2.50, "min": -9223372036854775808,
            "s": "18446744073709551617 \" 99999999999999999999", "e": 1e400}]"#;
        let out = run(&ws, json!({"content": input, "from": "json", "to": "csv"})).unwrap();
        assert_eq!(
            out,
            json!({
                "from": "json", "to": "csv", "rows": 1, "columns": ["n", "x", "ok", "min", "s", "e"],
                "note": "3 numbers do not fit a 64-bit number exactly, so they were kept as text, digit for digit \
                         (e.g. 18446744073709551617, 0.1000000000000000000001, 1e400).",
                "content": "n,x,ok,min,s,e\n18446744073709551617,0.1000000000000000000001,2.5,-9223372036854775808,\
                            \"18446744073709551617 \"\" 99999999999999999999\",1e400\n",
            })
        );
        let back = converted(&ws, input, "json", "json");
        assert_eq!(
            serde_json::from_str::<Value>(&back).unwrap(),
            json!([{"n": "18446744073709551617", "x": "0.1000000000000000000001", "ok": 2.5, "min": i64::MIN,
                    "s": "18446744073709551617 \" 99999999999999999999", "e": "1e400"}])
        );
        assert_eq!(
            run(
                &ws,
                json!({"content": r#"[{"n": -18446744073709551617}]"#, "from": "json", "to": "markdown"})
            )
            .unwrap(),
            json!({
                "from": "json", "to": "markdown", "rows": 1, "columns": ["n"],
                "note": "The number -18446744073709551617 does not fit a 64-bit number exactly, so it was kept as text, \
                         digit for digit.",
                "content": "| n |\n| --- |\n| -18446744073709551617 |\n",
            })
        );
        // Numbers that read exactly get no note, however they are written.
        let plain = run(
            &ws,
            json!({"content": r#"{"a": 1.0, "b": 25e-1, "c": -0, "d": 9007199254740993}"#, "from": "json", "to": "csv"}),
        );
        assert_eq!(
            plain.unwrap(),
            json!({"from": "json", "to": "csv", "rows": 1, "columns": ["a", "b", "c", "d"], "content": "a,b,c,d\n1.0,2.5,-0.0,9007199254740993\n"})
        );
    }

    #[test]
    fn yaml_wide_integers_are_kept_as_text_and_noted_in_a_written_file() {
        let (_d, ws) = workspace();
        let yaml = "- n: 18446744073709551617\n  m: -170141183460469231731687303715884105728\n  k: 7\n";
        let out = run(&ws, json!({"content": yaml, "from": "yaml", "to": "csv", "output_path": "out/n.csv"}))
            .unwrap();
        let note =
            "2 numbers do not fit a 64-bit number exactly, so they were kept as text, digit for digit \
                    (e.g. 18446744073709551617, -170141183460469231731687303715884105728).";
        assert_eq!(
            out,
            json!({
                "from": "yaml", "to": "csv", "rows": 1, "columns": ["n", "m", "k"], "note": note,
                "output_path": "out/n.csv", "bytes": 70,
                "content": format!("Converted 1 rows from yaml to csv and wrote them to out/n.csv (70 bytes). {note}"),
            })
        );
        assert_eq!(
            fs::read_to_string(ws.root.join("out/n.csv")).unwrap(),
            "n,m,k\n18446744073709551617,-170141183460469231731687303715884105728,7\n"
        );
    }

    #[test]
    fn yaml_merge_keys_are_applied_not_taken_as_a_column() {
        let (_d, ws) = workspace();
        let yaml = "- &base\n  city: 北京\n  unit: kg\n\
                    - <<: *base\n  name: b\n  unit: g\n\
                    - name: c\n  <<: [*base, {extra: 1, unit: t}]\n";
        let out = run(&ws, json!({"content": yaml, "from": "yaml", "to": "csv"})).unwrap();
        assert_eq!(
            out,
            json!({
                "from": "yaml", "to": "csv", "rows": 3, "columns": ["city", "unit", "name", "extra"],
                "content": "city,unit,name,extra\n北京,kg,,\n北京,g,b,\n北京,kg,c,1\n",
            })
        );
        // The merged keys stand where `<<` stood; the row's own keys win.
        assert_eq!(
            serde_json::from_str::<Value>(&converted(&ws, yaml, "yaml", "json")).unwrap(),
            json!([
                {"city": "北京", "unit": "kg"},
                {"city": "北京", "name": "b", "unit": "g"},
                {"name": "c", "city": "北京", "unit": "kg", "extra": 1},
            ])
        );
        let row_order: Vec<String> =
            serde_json::from_str::<Vec<Map<String, Value>>>(&converted(&ws, yaml, "yaml", "json"))
                .unwrap()
                .iter()
                .map(|row| row.keys().cloned().collect::<Vec<_>>().join(","))
                .collect();
        assert_eq!(row_order, ["city,unit", "city,name,unit", "name,city,unit,extra"]);
        assert_eq!(
            run(&ws, json!({"content": "- <<: 5\n  a: 1\n", "from": "yaml", "to": "csv"})),
            Err(SkillError::new(
                "format_converter: input is not valid YAML: .[0]: a merge key (<<) must name a mapping or a list of \
                 mappings at line 1 column 3"
            ))
        );
    }

    /// Converts `content` to every output format, each well within `limit` even in a
    /// debug build on a loaded machine; quadratic work took tens of seconds here.
    fn convert_everywhere_quickly(ws: &Workspace, content: &str, from: &str, limit: Duration) -> Vec<Value> {
        assert!(content.len() as u64 <= MAX_TEXT_BYTES, "{} bytes", content.len());
        ["csv", "json", "yaml", "markdown"]
            .iter()
            .map(|to| {
                let started = Instant::now();
                let out = run(ws, json!({"content": content, "from": from, "to": to}))
                    .unwrap_or_else(|err| panic!("{from} to {to}: {err}"));
                let took = started.elapsed();
                assert!(took < limit, "{from} to {to} took {took:?}");
                out
            })
            .collect()
    }

    #[test]
    fn fifty_thousand_records_convert_in_linear_time() {
        let (_d, ws) = workspace();
        let records: Vec<String> =
            (0..50_000).map(|i| format!(r#"{{"id":{i},"name":"n{i}","v":{i}.5}}"#)).collect();
        let content = format!("[{}]", records.join(","));
        let outs = convert_everywhere_quickly(&ws, &content, "json", Duration::from_secs(5));
        for out in &outs {
            assert_eq!((&out["rows"], &out["columns"]), (&json!(50_000), &json!(["id", "name", "v"])));
        }
        assert!(outs[0]["content"].as_str().unwrap().ends_with("\n49999,n49999,49999.5\n"));
        let csv = outs[0]["content"].as_str().unwrap().to_string();
        convert_everywhere_quickly(&ws, &csv, "csv", Duration::from_secs(5));
    }

    #[test]
    fn a_hundred_thousand_columns_or_keys_convert_in_linear_time() {
        let (_d, ws) = workspace();
        let header: Vec<String> = (0..100_000).map(|i| format!("c{i}")).collect();
        let row: Vec<String> = (0..100_000).map(|i| (i % 10).to_string()).collect();
        let csv = format!("{}\n{}\n", header.join(","), row.join(","));
        let outs = convert_everywhere_quickly(&ws, &csv, "csv", Duration::from_secs(5));
        assert_eq!(outs[0]["content"], csv);
        assert_eq!(outs[1]["columns"].as_array().unwrap().len(), 100_000);
        let object: Vec<String> = (0..100_000).map(|i| format!(r#""k{i}":{}"#, i % 10)).collect();
        let json_text = format!("{{{}}}", object.join(","));
        let outs = convert_everywhere_quickly(&ws, &json_text, "json", Duration::from_secs(5));
        assert_eq!(outs[0]["columns"].as_array().unwrap().len(), 100_000);
        let yaml = outs[2]["content"].as_str().unwrap().to_string();
        convert_everywhere_quickly(&ws, &yaml, "yaml", Duration::from_secs(5));
    }

    #[test]
    fn rows_that_each_name_new_columns_do_not_multiply_out() {
        let (_d, ws) = workspace();
        let records: Vec<String> = (0..50_000).map(|i| format!(r#"{{"k{i}":1}}"#)).collect();
        let content = format!("[{}]", records.join(","));
        for to in ["csv", "markdown"] {
            let started = Instant::now();
            assert_eq!(
                run(&ws, json!({"content": content, "from": "json", "to": to})),
                Err(SkillError::new(format!(
                    "format_converter: 50000 rows by 50000 columns is 2500000000 cells, too many for a {to} table \
                     (the limit is 4194304); the rows name different columns, so json or yaml, which keep each \
                     row's own keys, suit them"
                )))
            );
            assert!(started.elapsed() < Duration::from_secs(5), "{to}: {:?}", started.elapsed());
        }
        let out = run(&ws, json!({"content": content, "from": "json", "to": "yaml"})).unwrap();
        assert!(out["content"].as_str().unwrap().ends_with("- k49999: 1\n"));
    }

    #[test]
    fn yaml_aliases_cannot_expand_without_bound() {
        let (_d, ws) = workspace();
        let keys: Vec<String> = (0..1000).map(|i| format!("k{i}: {i}")).collect();
        let yaml = format!("- &r {{{}}}\n{}", keys.join(", "), "- *r\n".repeat(200_000));
        let started = Instant::now();
        let err = run(&ws, json!({"content": yaml, "from": "yaml", "to": "json"})).unwrap_err().0;
        assert_eq!(
            err,
            "format_converter: the YAML expands to more than 4194304 values through its aliases, far more than \
             its own size; it is not converted"
        );
        // Unbounded expansion would run for minutes and exhaust memory; a busy 2-core
        // machine running the whole suite takes over 10 s for the refusal itself.
        assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    }

    #[test]
    fn a_call_past_its_deadline_stops_promptly() {
        let (_d, ws) = workspace();
        let ws = ws.with_deadline(Instant::now());
        let rows: Vec<String> = (0..50_000).map(|i| format!("{i},n{i}")).collect();
        let csv = format!("id,name\n{}\n", rows.join("\n"));
        let records: Vec<String> = (0..50_000).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
        let json_text = format!("[{}]", records.join(","));
        let yaml: String = (0..50_000).map(|i| format!("- id: {i}\n")).collect();
        for (content, from) in [(&csv, "csv"), (&json_text, "json"), (&yaml, "yaml")] {
            let started = Instant::now();
            assert_eq!(
                run(&ws, json!({"content": content, "from": from, "to": "csv"})),
                Err(SkillError::new("format_converter: stopped: the call ran past its time limit")),
                "{from}"
            );
            assert!(started.elapsed() < Duration::from_secs(1), "{from}: {:?}", started.elapsed());
        }
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let (dir, ws) = workspace();
        fs::write(ws.root.join("data/notes.txt"), "a,b").unwrap();
        let outside = dir.path().join("evil.json");
        let cases = [
            (json!({"to": "json"}), "format_converter: give the input as path (a file in the workspace) or as content (the text itself)".to_string()),
            (json!({"to": "json", "path": "data/sample.csv", "content": "a"}), "format_converter: give either path or content, not both".to_string()),
            (json!({"to": "json", "content": "a,b"}), "format_converter: with inline content, give from (csv, json or yaml)".to_string()),
            (json!({"to": "xml", "content": "a"}), "format_converter: unknown format 'xml' for to; use csv, json, yaml or markdown".to_string()),
            (json!({"to": "json", "content": "a", "from": "markdown"}), "format_converter: markdown can only be an output format; from must be csv, json or yaml".to_string()),
            (json!({"to": "json", "path": "data/notes.txt"}), "format_converter: cannot tell the format of 'data/notes.txt' from its extension; give from (csv, json or yaml)".to_string()),
            (json!({"to": "json", "content": "a,b\n1,2\n3\n", "from": "csv"}), "format_converter: CSV line 3 has 1 fields but the header has 2".to_string()),
            (json!({"to": "json", "content": "a,a\n1,2\n", "from": "csv"}), "format_converter: the CSV header names column 'a' twice".to_string()),
            (json!({"to": "csv", "content": "[1, 2]", "from": "json"}), "format_converter: JSON item 1 is not an object; each row must be an object of column: value".to_string()),
            (json!({"to": "csv", "content": "42", "from": "yaml"}), "format_converter: YAML input must be a list of objects (one per row)".to_string()),
            (json!({"to": "csv", "content": "[]", "from": "json"}), "format_converter: the input has no columns, so there is no table to write".to_string()),
            (json!({"to": "json", "content": "a\n1\n", "from": "csv", "output_path": "../x.json"}), "format_converter: path '../x.json' is outside the workspace; use a path inside it (relative paths start at the workspace root)".to_string()),
            (json!({"to": "json", "content": "a\n1\n", "from": "csv", "output_path": outside.to_str().unwrap()}), format!("format_converter: path '{}' is outside the workspace; use a path inside it (relative paths start at the workspace root)", outside.display())),
            (json!({"to": "json", "content": "a\n1\n", "from": "csv", "overwrite": "yes"}), "format_converter: argument 'overwrite' must be true or false, got \"yes\"".to_string()),
        ];
        for (args, expected) in cases {
            assert_eq!(run(&ws, args.clone()), Err(SkillError::new(expected)), "{args}");
        }
        let err = run(&ws, json!({"to": "csv", "content": "[{", "from": "json"})).unwrap_err().0;
        assert!(err.starts_with("format_converter: input is not valid JSON: "), "{err}");
        let err = run(&ws, json!({"to": "csv", "content": "a: [", "from": "yaml"})).unwrap_err().0;
        assert!(err.starts_with("format_converter: input is not valid YAML: "), "{err}");
        assert!(!outside.exists());
        // Empty JSON still converts to formats that can hold no rows.
        assert_eq!(
            run(&ws, json!({"to": "json", "content": "[]", "from": "json"})).unwrap()["content"],
            "[]\n"
        );
    }
}
