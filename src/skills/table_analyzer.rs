//! `table_analyzer(path, columns?, group_by?, aggregate?, value_column?)`: describes a CSV
//! file: row and column counts, each column's inferred type, number stats, the most
//! common text values, and optionally one aggregate per group.
//!
//! Integer columns are summed exactly (i128): an f64 sum would print a wrong integer
//! that looks exact once it passes 2^53. A sum or mean that cannot be exact says so
//! (`"approximate": true`, "about ...").

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::{
    args, embedded_manifest, format_number, format_rounded, integer_value, number_value, rounded_value,
    Manifest, Pacer, Skill, SkillError, Workspace, F64_EXACT_INTEGERS,
};
use crate::protocol::Args;

const NAME: &str = "table_analyzer";
const TOP_VALUES: usize = 5;

pub struct TableAnalyzer;

impl Skill for TableAnalyzer {
    fn manifest(&self) -> &Manifest {
        static MANIFEST: OnceLock<Manifest> = OnceLock::new();
        MANIFEST.get_or_init(|| embedded_manifest(NAME, include_str!("../../skills/table_analyzer.json")))
    }

    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
        call(args, workspace).map_err(|err| err.in_tool(NAME))
    }
}

/// The call itself; [`Skill::run`] names the tool in every error.
fn call(args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
    let path = args::req_str(args, NAME, "path")?;
    let wanted = args::opt_str_list(args, NAME, "columns")?.unwrap_or_default();
    let group_by = args::opt_str(args, NAME, "group_by")?;
    let aggregate = args::opt_str(args, NAME, "aggregate")?.map(Aggregate::parse).transpose()?;
    let value_column = args::opt_str(args, NAME, "value_column")?;

    let file = workspace.read_text(path)?;
    let mut pacer = Pacer::new(workspace);
    let table = CsvTable::parse(&file.text, &file.shown, &mut pacer)?;

    let described: Vec<usize> = if wanted.is_empty() {
        (0..table.headers.len()).collect()
    } else {
        wanted.iter().map(|name| table.column_index(name)).collect::<Result<_, _>>()?
    };
    let columns: Vec<ColumnSummary> =
        described.iter().map(|&i| describe(&table, i, &mut pacer)).collect::<Result<_, _>>()?;

    let grouping = match (group_by, aggregate, value_column) {
        (Some(group), aggregate, value) => {
            Some(group_values(&table, group, aggregate.unwrap_or(Aggregate::Count), value, &mut pacer)?)
        }
        (None, Some(_), _) | (None, None, Some(_)) => {
            return Err(SkillError::new(
                "aggregate and value_column need group_by (the column whose values form the groups); \
                     overall sum, mean, min and max of every number column are reported without them",
            ))
        }
        (None, None, None) => None,
    };

    let mut out = Map::new();
    out.insert("path".into(), json!(file.shown));
    out.insert("row_count".into(), json!(table.rows.len()));
    out.insert("column_count".into(), json!(table.headers.len()));
    out.insert("column_names".into(), json!(table.headers));
    out.insert("columns".into(), columns.iter().map(ColumnSummary::to_json).collect());
    if let Some(grouping) = &grouping {
        out.insert("groups".into(), grouping.to_json());
    }
    out.insert("content".into(), json!(summary(&file.shown, &table, &columns, grouping.as_ref())));
    Ok(Value::Object(out))
}

/// The parsed file: header names and data rows with the line each row starts on.
struct CsvTable {
    headers: Vec<String>,
    /// Each header name's first column, so a lookup costs nothing on wide files.
    index: HashMap<String, usize>,
    rows: Vec<(u64, Vec<String>)>,
}

impl CsvTable {
    fn parse(text: &str, shown: &str, pacer: &mut Pacer) -> Result<CsvTable, SkillError> {
        // Flexible, so that a ragged row is reported by us with its line number.
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let mut records = reader.records();
        let headers: Vec<String> = match records.next() {
            Some(Ok(record)) => record.iter().map(str::to_string).collect(),
            Some(Err(err)) => return Err(csv_error(shown, &err)),
            None => return Err(SkillError::new(format!("'{shown}' is empty (no header row)"))),
        };
        let mut index = HashMap::with_capacity(headers.len());
        for (i, header) in headers.iter().enumerate() {
            index.entry(header.clone()).or_insert(i);
        }
        let mut rows = Vec::new();
        for record in records {
            let record = record.map_err(|err| csv_error(shown, &err))?;
            pacer.step(record.len().max(1))?;
            let line = record.position().map_or(0, csv::Position::line);
            if record.len() != headers.len() {
                return Err(SkillError::new(format!(
                    "'{shown}' line {line} has {} fields but the header has {}",
                    record.len(),
                    headers.len()
                )));
            }
            rows.push((line, record.iter().map(str::to_string).collect()));
        }
        Ok(CsvTable { headers, index, rows })
    }

    /// The column named `name`; in another case (`Region` for `region`) when exactly one
    /// header reads so: users and models rarely copy a header's case.
    fn column_index(&self, name: &str) -> Result<usize, SkillError> {
        let name = name.trim();
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        let lower = name.to_lowercase();
        // Each header text once (its first column, as for an exact name).
        let mut same: Vec<usize> = Vec::new();
        for (i, header) in self.headers.iter().enumerate() {
            if header.to_lowercase() == lower && !same.iter().any(|&j| self.headers[j] == *header) {
                same.push(i);
            }
        }
        match same.as_slice() {
            [i] => Ok(*i),
            [] => Err(SkillError::new(format!("unknown column '{name}'; available columns: {}", self.headers.join(", ")))),
            _ => Err(SkillError::new(format!(
                "column '{name}' is ambiguous: the header has {}",
                same.iter().map(|&i| format!("'{}'", self.headers[i])).collect::<Vec<_>>().join(" and ")
            ))),
        }
    }

    fn cells(&self, column: usize) -> impl Iterator<Item = (u64, &str)> {
        self.rows.iter().map(move |(line, cells)| (*line, cells.get(column).map_or("", String::as_str)))
    }
}

fn csv_error(shown: &str, err: &csv::Error) -> SkillError {
    match err.position() {
        Some(pos) => SkillError::new(format!("'{shown}' line {}: {err}", pos.line())),
        None => SkillError::new(format!("'{shown}': {err}")),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ColumnType {
    Integer,
    Float,
    Text,
    Empty,
}

impl ColumnType {
    fn as_str(self) -> &'static str {
        match self {
            ColumnType::Integer => "integer",
            ColumnType::Float => "float",
            ColumnType::Text => "text",
            ColumnType::Empty => "empty",
        }
    }
}

/// A finite number; `inf` and `NaN` are text in a table.
fn parse_number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A number read from a cell: exact while it is an integer, else an f64.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn parse(cell: &str) -> Option<Num> {
        match cell.parse::<i128>() {
            Ok(n) => Some(Num::Int(n)),
            Err(_) => parse_number(cell).map(Num::Float),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(n) => n as f64,
            Num::Float(x) => x,
        }
    }

    /// Whether its f64 form may have lost integer digits (its size is past 2^53).
    fn beyond_exact_f64(self) -> bool {
        match self {
            Num::Int(n) => n.unsigned_abs() > 1 << 53,
            Num::Float(x) => x.abs() >= F64_EXACT_INTEGERS,
        }
    }

    fn compare(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            _ => self.as_f64().partial_cmp(&other.as_f64()).unwrap_or(Ordering::Equal),
        }
    }

    fn to_json(self) -> Value {
        match self {
            Num::Int(n) => integer_value(n),
            Num::Float(x) => number_value(x),
        }
    }

    fn shown(self) -> String {
        match self {
            Num::Int(n) => n.to_string(),
            Num::Float(x) => format_number(x),
        }
    }
}

/// Count, sum, min and max of a column's (or a group's) numbers. The sum stays an exact
/// integer while every value is one and it fits in i128.
struct NumberStats {
    count: usize,
    sum: Num,
    min: Num,
    max: Num,
    /// The sum may be off past f64 precision (an i128 overflow, or integers or a float
    /// sum beyond 2^53).
    sum_approximate: bool,
}

impl NumberStats {
    fn of(
        values: impl IntoIterator<Item = Num>,
        pacer: &mut Pacer,
    ) -> Result<Option<NumberStats>, SkillError> {
        let mut stats: Option<NumberStats> = None;
        for v in values {
            pacer.step(1)?;
            match &mut stats {
                None => {
                    stats = Some(NumberStats { count: 1, sum: v, min: v, max: v, sum_approximate: false });
                }
                Some(s) => s.add(v),
            }
        }
        if let Some(s) = &mut stats {
            s.sum_approximate |= s.sum.beyond_exact_f64() && matches!(s.sum, Num::Float(_));
        }
        Ok(stats)
    }

    fn add(&mut self, v: Num) {
        self.count += 1;
        self.sum = match (self.sum, v) {
            (Num::Int(a), Num::Int(b)) => a.checked_add(b).map(Num::Int).unwrap_or_else(|| {
                self.sum_approximate = true;
                Num::Float(a as f64 + b as f64)
            }),
            (a, b) => {
                self.sum_approximate |= a.beyond_exact_f64() || b.beyond_exact_f64();
                Num::Float(a.as_f64() + b.as_f64())
            }
        };
        if v.compare(self.min) == Ordering::Less {
            self.min = v;
        }
        if v.compare(self.max) == Ordering::Greater {
            self.max = v;
        }
    }

    /// The mean: an exact integer when the exact sum divides evenly.
    fn mean(&self) -> Num {
        let count = self.count.max(1);
        match self.sum {
            Num::Int(sum) => {
                let n = count as i128;
                if sum % n == 0 {
                    Num::Int(sum / n)
                } else {
                    // Whole part and remainder apart, so a big sum keeps its digits.
                    Num::Float((sum / n) as f64 + (sum % n) as f64 / n as f64)
                }
            }
            Num::Float(sum) => Num::Float(sum / count as f64),
        }
    }

    fn mean_approximate(&self) -> bool {
        let mean = self.mean();
        self.sum_approximate || (matches!(mean, Num::Float(_)) && mean.beyond_exact_f64())
    }
}

/// `X`, or `about X` to 12 significant digits when its digits cannot all be trusted.
fn about(value: Num, approximate: bool) -> String {
    match (value, approximate) {
        (Num::Float(x), true) => format!("about {}", format_rounded(x)),
        (value, _) => value.shown(),
    }
}

/// The JSON form: an approximate float is rounded to the digits that can be trusted.
fn value_json(value: Num, approximate: bool) -> Value {
    match (value, approximate) {
        (Num::Float(x), true) => rounded_value(x),
        (value, _) => value.to_json(),
    }
}

struct ColumnSummary {
    name: String,
    kind: ColumnType,
    non_empty: usize,
    empty: usize,
    numbers: Option<NumberStats>,
    /// For text columns: distinct values and the most common ones with their counts.
    unique: usize,
    top: Vec<(String, usize)>,
}

fn describe(table: &CsvTable, column: usize, pacer: &mut Pacer) -> Result<ColumnSummary, SkillError> {
    let mut values: Vec<&str> = Vec::new();
    for (_, cell) in table.cells(column) {
        pacer.step(1)?;
        if !cell.is_empty() {
            values.push(cell);
        }
    }
    // Every cell parsed once: the column is numbers only while every value is one.
    let mut numbers: Option<Vec<Num>> = Some(Vec::with_capacity(values.len()));
    for v in &values {
        pacer.step(1)?;
        match (Num::parse(v), &mut numbers) {
            (Some(n), Some(list)) => list.push(n),
            _ => {
                numbers = None;
                break;
            }
        }
    }
    let kind = match &numbers {
        _ if values.is_empty() => ColumnType::Empty,
        Some(list) if list.iter().all(|n| matches!(n, Num::Int(_))) => ColumnType::Integer,
        Some(_) => ColumnType::Float,
        None => ColumnType::Text,
    };
    let numbers = match numbers {
        Some(list) => NumberStats::of(list, pacer)?,
        None => None,
    };
    let (unique, top) = if kind == ColumnType::Text {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for v in &values {
            pacer.step(1)?;
            *counts.entry(v).or_default() += 1;
        }
        let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
        let unique = ranked.len();
        // Most common first; ties in value order, so the answer is stable.
        ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        (unique, ranked.into_iter().take(TOP_VALUES).map(|(v, n)| (v.to_string(), n)).collect())
    } else {
        (0, Vec::new())
    };
    Ok(ColumnSummary {
        name: table.headers.get(column).cloned().unwrap_or_default(),
        kind,
        non_empty: values.len(),
        empty: table.rows.len() - values.len(),
        numbers,
        unique,
        top,
    })
}

impl ColumnSummary {
    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), json!(self.name));
        out.insert("type".into(), json!(self.kind.as_str()));
        out.insert("non_empty".into(), json!(self.non_empty));
        out.insert("empty".into(), json!(self.empty));
        if let Some(s) = &self.numbers {
            let mut stats = json!({
                "count": s.count,
                "sum": value_json(s.sum, s.sum_approximate),
                "mean": value_json(s.mean(), s.mean_approximate()),
                "min": s.min.to_json(),
                "max": s.max.to_json(),
            });
            if s.mean_approximate() {
                stats["approximate"] = json!(true);
            }
            out.insert("stats".into(), stats);
        }
        if self.kind == ColumnType::Text {
            out.insert("unique".into(), json!(self.unique));
            let top = self.top.iter().map(|(v, n)| json!({"value": v, "count": n})).collect();
            out.insert("top_values".into(), top);
        }
        Value::Object(out)
    }

    fn line(&self) -> String {
        let empty = if self.empty > 0 { format!(" ({} empty)", self.empty) } else { String::new() };
        match (&self.numbers, self.kind) {
            (Some(s), _) => format!(
                "- {} ({}): count {}, sum {}, mean {}, min {}, max {}{empty}",
                self.name,
                self.kind.as_str(),
                s.count,
                about(s.sum, s.sum_approximate),
                about(s.mean(), s.mean_approximate()),
                s.min.shown(),
                s.max.shown()
            ),
            (None, ColumnType::Text) => {
                let top: Vec<String> = self.top.iter().map(|(v, n)| format!("{v} ({n})")).collect();
                format!(
                    "- {} (text): {} values, {} unique; top: {}{empty}",
                    self.name,
                    self.non_empty,
                    self.unique,
                    top.join(", ")
                )
            }
            (None, _) => format!("- {} (empty): no values", self.name),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Aggregate {
    Sum,
    Mean,
    Count,
    Min,
    Max,
}

impl Aggregate {
    fn parse(name: &str) -> Result<Aggregate, SkillError> {
        match name.trim().to_lowercase().as_str() {
            "sum" => Ok(Aggregate::Sum),
            "mean" | "avg" | "average" => Ok(Aggregate::Mean),
            "count" => Ok(Aggregate::Count),
            "min" => Ok(Aggregate::Min),
            "max" => Ok(Aggregate::Max),
            _ => Err(SkillError::new(format!(
                "unknown aggregate '{name}'; use one of sum, mean, count, min, max"
            ))),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Aggregate::Sum => "sum",
            Aggregate::Mean => "mean",
            Aggregate::Count => "count",
            Aggregate::Min => "min",
            Aggregate::Max => "max",
        }
    }
}

struct Grouping {
    column: String,
    aggregate: Aggregate,
    value_column: Option<String>,
    groups: Vec<Group>,
}

struct Group {
    key: String,
    rows: usize,
    /// The aggregate; `None` when the group has no numbers to aggregate.
    value: Option<Num>,
    approximate: bool,
}

fn group_values(
    table: &CsvTable,
    group_by: &str,
    aggregate: Aggregate,
    value_column: Option<&str>,
    pacer: &mut Pacer,
) -> Result<Grouping, SkillError> {
    let key_index = table.column_index(group_by)?;
    let value_index = match (aggregate, value_column) {
        (_, Some(name)) => Some(table.column_index(name)?),
        (Aggregate::Count, None) => None,
        (_, None) => {
            return Err(SkillError::new(format!(
                "aggregate '{}' needs value_column (the number column to aggregate)",
                aggregate.as_str()
            )))
        }
    };
    let mut groups: BTreeMap<&str, (usize, Vec<Num>)> = BTreeMap::new();
    for (line, cells) in &table.rows {
        pacer.step(1)?;
        let key = cells.get(key_index).map_or("", String::as_str);
        let key = if key.is_empty() { "(empty)" } else { key };
        let entry = groups.entry(key).or_default();
        entry.0 += 1;
        if let (Some(vi), true) = (value_index, aggregate != Aggregate::Count) {
            let cell = cells.get(vi).map_or("", String::as_str);
            if cell.is_empty() {
                continue;
            }
            let value = Num::parse(cell).ok_or_else(|| {
                SkillError::new(format!(
                    "value_column '{}' has a non-number value '{cell}' on line {line}",
                    value_column.unwrap_or_default()
                ))
            })?;
            entry.1.push(value);
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (key, (rows, values)) in groups {
        let stats = NumberStats::of(values, pacer)?;
        let (value, approximate) = match (aggregate, &stats) {
            (Aggregate::Count, _) => (Some(Num::Int(rows as i128)), false),
            (Aggregate::Sum, None) => (Some(Num::Int(0)), false),
            (Aggregate::Sum, Some(s)) => (Some(s.sum), s.sum_approximate),
            (Aggregate::Mean, Some(s)) => (Some(s.mean()), s.mean_approximate()),
            (Aggregate::Min, Some(s)) => (Some(s.min), false),
            (Aggregate::Max, Some(s)) => (Some(s.max), false),
            (Aggregate::Mean | Aggregate::Min | Aggregate::Max, None) => (None, false),
        };
        out.push(Group { key: key.to_string(), rows, value, approximate });
    }
    // Number-like group keys (years, ids) read best in numeric order.
    let numeric: Option<Vec<Num>> = out.iter().map(|g| Num::parse(&g.key)).collect();
    if let Some(numbers) = numeric {
        let mut keyed: Vec<(Num, Group)> = numbers.into_iter().zip(out).collect();
        keyed.sort_by(|a, b| a.0.compare(b.0));
        out = keyed.into_iter().map(|(_, group)| group).collect();
    }
    Ok(Grouping {
        column: table.headers[key_index].clone(),
        aggregate,
        value_column: value_index.map(|i| table.headers[i].clone()),
        groups: out,
    })
}

impl Grouping {
    fn to_json(&self) -> Value {
        let values = self
            .groups
            .iter()
            .map(|group| {
                let mut value = json!({
                    "group": group.key,
                    "rows": group.rows,
                    "value": group.value.map_or(Value::Null, |v| value_json(v, group.approximate)),
                });
                if group.approximate {
                    value["approximate"] = json!(true);
                }
                value
            })
            .collect::<Vec<_>>();
        json!({
            "group_by": self.column,
            "aggregate": self.aggregate.as_str(),
            "value_column": self.value_column,
            "values": values,
        })
    }

    fn heading(&self) -> String {
        match (&self.value_column, self.aggregate) {
            (_, Aggregate::Count) | (None, _) => format!("Row count by {}:", self.column),
            (Some(value), aggregate) => {
                format!("{} of {value} by {}:", capitalized(aggregate.as_str()), self.column)
            }
        }
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

fn summary(shown: &str, table: &CsvTable, columns: &[ColumnSummary], grouping: Option<&Grouping>) -> String {
    let mut text = format!(
        "{shown}: {} rows, {} columns ({})",
        table.rows.len(),
        table.headers.len(),
        table.headers.join(", ")
    );
    for column in columns {
        text.push('\n');
        text.push_str(&column.line());
    }
    if let Some(grouping) = grouping {
        text.push('\n');
        text.push_str(&grouping.heading());
        for group in &grouping.groups {
            let value = group.value.map_or("no numbers".to_string(), |v| about(v, group.approximate));
            text.push_str(&format!("\n- {}: {value}", group.key));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::time::{Duration, Instant};

    use super::*;

    const SALES: &str = "\u{feff}name,city,sales,note\n\
                         张三,北京,100,\"likes \"\"tea\"\", coffee\"\n\
                         李四,上海,250.5,\n\
                         王五,北京,300,\"two\nlines\"\n\
                         赵六,广州,50,ok\n";

    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, text).unwrap();
        }
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    fn run(ws: &Workspace, args: Value) -> Result<Value, SkillError> {
        TableAnalyzer.run(args.as_object().unwrap(), ws)
    }

    #[test]
    fn describes_a_quoted_csv_with_a_bom() {
        let (_d, ws) = workspace(&[("data/sales.csv", SALES)]);
        assert_eq!(
            run(&ws, json!({"path": "data/sales.csv"})).unwrap(),
            json!({
                "path": "data/sales.csv",
                "row_count": 4,
                "column_count": 4,
                "column_names": ["name", "city", "sales", "note"],
                "columns": [
                    {"name": "name", "type": "text", "non_empty": 4, "empty": 0, "unique": 4, "top_values": [
                        {"value": "张三", "count": 1}, {"value": "李四", "count": 1},
                        {"value": "王五", "count": 1}, {"value": "赵六", "count": 1}]},
                    {"name": "city", "type": "text", "non_empty": 4, "empty": 0, "unique": 3, "top_values": [
                        {"value": "北京", "count": 2}, {"value": "上海", "count": 1}, {"value": "广州", "count": 1}]},
                    {"name": "sales", "type": "float", "non_empty": 4, "empty": 0,
                        "stats": {"count": 4, "sum": 700.5, "mean": 175.125, "min": 50, "max": 300}},
                    {"name": "note", "type": "text", "non_empty": 3, "empty": 1, "unique": 3, "top_values": [
                        {"value": "likes \"tea\", coffee", "count": 1}, {"value": "ok", "count": 1},
                        {"value": "two\nlines", "count": 1}]},
                ],
                "content": "data/sales.csv: 4 rows, 4 columns (name, city, sales, note)\n\
                            - name (text): 4 values, 4 unique; top: 张三 (1), 李四 (1), 王五 (1), 赵六 (1)\n\
                            - city (text): 4 values, 3 unique; top: 北京 (2), 上海 (1), 广州 (1)\n\
                            - sales (float): count 4, sum 700.5, mean 175.125, min 50, max 300\n\
                            - note (text): 3 values, 3 unique; top: likes \"tea\", coffee (1), ok (1), two\nlines (1) (1 empty)",
            })
        );
    }

    #[test]
    fn columns_filter_and_group_by_sum() {
        let (_d, ws) = workspace(&[("data/sales.csv", SALES)]);
        let out = run(
            &ws,
            json!({"path": "data/sales.csv", "columns": ["sales"], "group_by": "city", "aggregate": "sum", "value_column": "sales"}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({
                "path": "data/sales.csv",
                "row_count": 4,
                "column_count": 4,
                "column_names": ["name", "city", "sales", "note"],
                "columns": [{"name": "sales", "type": "float", "non_empty": 4, "empty": 0,
                    "stats": {"count": 4, "sum": 700.5, "mean": 175.125, "min": 50, "max": 300}}],
                "groups": {"group_by": "city", "aggregate": "sum", "value_column": "sales", "values": [
                    {"group": "上海", "rows": 1, "value": 250.5},
                    {"group": "北京", "rows": 2, "value": 400},
                    {"group": "广州", "rows": 1, "value": 50},
                ]},
                "content": "data/sales.csv: 4 rows, 4 columns (name, city, sales, note)\n\
                            - sales (float): count 4, sum 700.5, mean 175.125, min 50, max 300\n\
                            Sum of sales by city:\n- 上海: 250.5\n- 北京: 400\n- 广州: 50",
            })
        );
    }

    #[test]
    fn column_names_in_another_case_find_their_column() {
        let (_d, ws) = workspace(&[("data/sales.csv", SALES)]);
        let exact = run(&ws, json!({"path": "data/sales.csv", "columns": ["sales"], "group_by": "city", "aggregate": "sum", "value_column": "sales"})).unwrap();
        let cased = run(&ws, json!({"path": "data/sales.csv", "columns": ["Sales"], "group_by": "CITY", "aggregate": "sum", "value_column": " Sales "})).unwrap();
        assert_eq!(cased, exact);
    }

    #[test]
    fn other_aggregates_and_numeric_group_order() {
        let csv = "year,amount,label\n2024,5,a\n9,1,b\n2024,7,\n10,,c\n";
        let (_d, ws) = workspace(&[("t.csv", csv)]);
        let values = |aggregate: &str| {
            let out = run(&ws, json!({"path": "t.csv", "group_by": "year", "aggregate": aggregate, "value_column": "amount"})).unwrap();
            out["groups"]["values"].clone()
        };
        assert_eq!(
            values("mean"),
            json!([{"group": "9", "rows": 1, "value": 1}, {"group": "10", "rows": 1, "value": null}, {"group": "2024", "rows": 2, "value": 6}])
        );
        assert_eq!(values("min")[2]["value"], 5);
        assert_eq!(values("max")[2]["value"], 7);
        assert_eq!(values("count")[2]["value"], 2);
        let out = run(&ws, json!({"path": "t.csv", "group_by": "label"})).unwrap();
        assert_eq!(out["groups"]["aggregate"], "count");
        assert_eq!(
            out["groups"]["values"],
            json!([{"group": "(empty)", "rows": 1, "value": 1}, {"group": "a", "rows": 1, "value": 1},
                   {"group": "b", "rows": 1, "value": 1}, {"group": "c", "rows": 1, "value": 1}])
        );
        assert!(out["content"]
            .as_str()
            .unwrap()
            .ends_with("Row count by label:\n- (empty): 1\n- a: 1\n- b: 1\n- c: 1"));
        assert_eq!(out["columns"][0]["type"], "integer");
        assert_eq!(out["columns"][1]["empty"], 1);
    }

    #[test]
    fn a_header_only_file_has_empty_columns() {
        let (_d, ws) = workspace(&[("h.csv", "a,b\n")]);
        let out = run(&ws, json!({"path": "h.csv"})).unwrap();
        assert_eq!(out["row_count"], 0);
        assert_eq!(out["columns"][0], json!({"name": "a", "type": "empty", "non_empty": 0, "empty": 0}));
        assert_eq!(
            out["content"],
            "h.csv: 0 rows, 2 columns (a, b)\n- a (empty): no values\n- b (empty): no values"
        );
    }

    #[test]
    fn integer_columns_are_summed_exactly() {
        let csv = "g,amount,mixed\na,9007199254740993,1.5\na,9007199254740993,9007199254740993\nb,18446744073709551617,2\n";
        let (_d, ws) = workspace(&[("big.csv", csv)]);
        let out = run(
            &ws,
            json!({"path": "big.csv", "columns": ["amount", "mixed"], "group_by": "g", "aggregate": "sum", "value_column": "amount"}),
        );
        assert_eq!(
            out.unwrap(),
            json!({
                "path": "big.csv",
                "row_count": 3,
                "column_count": 3,
                "column_names": ["g", "amount", "mixed"],
                "columns": [
                    // The sum is past 64 bits, so its digits come as a string; the mean has
                    // a fraction and is past 2^53, so it is approximate.
                    {"name": "amount", "type": "integer", "non_empty": 3, "empty": 0, "stats": {
                        "count": 3, "sum": "18464758472219033603", "mean": 6.15491949074e18,
                        "min": 9007199254740993u64, "max": "18446744073709551617", "approximate": true}},
                    // Floats: an f64 sum of integers past 2^53 cannot be exact.
                    {"name": "mixed", "type": "float", "non_empty": 3, "empty": 0, "stats": {
                        "count": 3, "sum": 9.00719925474e15, "mean": 3.00239975158e15,
                        "min": 1.5, "max": 9007199254740993u64, "approximate": true}},
                ],
                "groups": {"group_by": "g", "aggregate": "sum", "value_column": "amount", "values": [
                    {"group": "a", "rows": 2, "value": 18014398509481986u64},
                    {"group": "b", "rows": 1, "value": "18446744073709551617"},
                ]},
                "content": "big.csv: 3 rows, 3 columns (g, amount, mixed)\n\
                            - amount (integer): count 3, sum 18464758472219033603, mean about 6.15491949074e18, \
                            min 9007199254740993, max 18446744073709551617\n\
                            - mixed (float): count 3, sum about 9.00719925474e15, mean about 3.00239975158e15, \
                            min 1.5, max 9007199254740993\n\
                            Sum of amount by g:\n- a: 18014398509481986\n- b: 18446744073709551617",
            })
        );
    }

    #[test]
    fn sums_past_i128_and_their_groups_say_they_are_approximate() {
        let max = i128::MAX.to_string();
        let csv = format!("g,v\nx,{max}\nx,{max}\ny,-3\ny,-4\n");
        let (_d, ws) = workspace(&[("huge.csv", &csv)]);
        let out = run(&ws, json!({"path": "huge.csv", "columns": ["v"], "group_by": "g", "aggregate": "mean", "value_column": "v"}))
            .unwrap();
        assert_eq!(
            out["columns"][0]["stats"],
            json!({"count": 4, "sum": 3.40282366921e38, "mean": 8.50705917302e37, "min": -4, "max": max, "approximate": true})
        );
        assert_eq!(
            out["groups"]["values"],
            json!([
                {"group": "x", "rows": 2, "value": 1.70141183460e38, "approximate": true},
                {"group": "y", "rows": 2, "value": -3.5},
            ])
        );
        assert!(out["content"]
            .as_str()
            .unwrap()
            .ends_with("Mean of v by g:\n- x: about 1.7014118346e38\n- y: -3.5"));
    }

    #[test]
    fn wide_and_long_files_are_analyzed_in_linear_time() {
        let header: Vec<String> = (0..100_000).map(|i| format!("c{i}")).collect();
        let row: Vec<String> = (0..100_000).map(|i| (i % 10).to_string()).collect();
        let wide = format!("{}\n{}\n{}\n", header.join(","), row.join(","), row.join(","));
        let long: String = std::iter::once("id,name,v\n".to_string())
            .chain((0..100_000).map(|i| format!("{i},n{i},{}.5\n", i % 1000)))
            .collect();
        let (_d, ws) = workspace(&[("wide.csv", &wide), ("long.csv", &long)]);
        let started = Instant::now();
        let out =
            run(&ws, json!({"path": "wide.csv", "columns": ["c99999", "c0"], "group_by": "c5"})).unwrap();
        assert_eq!(
            out["columns"][0],
            json!({"name": "c99999", "type": "integer", "non_empty": 2, "empty": 0,
            "stats": {"count": 2, "sum": 18, "mean": 9, "min": 9, "max": 9}})
        );
        let out = run(&ws, json!({"path": "wide.csv"})).unwrap();
        assert_eq!(out["columns"].as_array().unwrap().len(), 100_000);
        let out = run(
            &ws,
            json!({"path": "long.csv", "group_by": "name", "aggregate": "sum", "value_column": "v"}),
        )
        .unwrap();
        assert_eq!(out["groups"]["values"].as_array().unwrap().len(), 100_000);
        assert_eq!(out["columns"][1]["unique"], 100_000);
        assert_eq!(out["columns"][0]["stats"]["sum"], 4_999_950_000u64);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    #[test]
    fn a_call_past_its_deadline_stops_in_every_loop() {
        let long: String = std::iter::once("id,name\n".to_string())
            .chain((0..50_000).map(|i| format!("{i},n{i}\n")))
            .collect();
        let (_d, ws) = workspace(&[("long.csv", &long)]);
        let late = ws.with_deadline(Instant::now());
        let stopped = Err(SkillError::new("table_analyzer: stopped: the call ran past its time limit"));
        let started = Instant::now();
        assert_eq!(run(&late, json!({"path": "long.csv"})), stopped);
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
        // Each loop on its own, past the parse.
        let stopped = Err(SkillError::new("stopped: the call ran past its time limit"));
        assert_eq!(CsvTable::parse(&long, "long.csv", &mut Pacer::new(&late)).map(|_| ()), stopped);
        let table = CsvTable::parse(&long, "long.csv", &mut Pacer::new(&ws)).unwrap();
        for column in 0..2 {
            assert_eq!(describe(&table, column, &mut Pacer::new(&late)).map(|_| ()), stopped);
        }
        assert_eq!(
            group_values(&table, "name", Aggregate::Count, None, &mut Pacer::new(&late)).map(|_| ()),
            stopped
        );
    }

    #[test]
    fn malformed_and_hostile_input_are_errors() {
        let (_d, ws) = workspace(&[
            ("bad.csv", "a,b\n1,2\n\"x\ny\",3\n4,5,6\n"),
            ("empty.csv", ""),
            ("text.csv", "k,v\na,1\nb,x\n"),
            ("cased.csv", "Region,REGION\na,b\n"),
            ("bin.csv", "a,b\n\0\0"),
        ]);
        let cases = [
            (json!({"path": "bad.csv"}), "table_analyzer: 'bad.csv' line 5 has 3 fields but the header has 2"),
            (json!({"path": "empty.csv"}), "table_analyzer: 'empty.csv' is empty (no header row)"),
            (json!({"path": "bin.csv"}), "table_analyzer: 'bin.csv' looks like a binary file (it contains NUL bytes); only text files can be read"),
            (json!({"path": "../x.csv"}), "table_analyzer: path '../x.csv' is outside the workspace; use a path inside it (relative paths start at the workspace root)"),
            (json!({"path": "text.csv", "columns": ["v", "w"]}), "table_analyzer: unknown column 'w'; available columns: k, v"),
            (json!({"path": "text.csv", "group_by": "z"}), "table_analyzer: unknown column 'z'; available columns: k, v"),
            (json!({"path": "cased.csv", "group_by": "region"}), "table_analyzer: column 'region' is ambiguous: the header has 'Region' and 'REGION'"),
            (json!({"path": "text.csv", "group_by": "k", "aggregate": "sum"}), "table_analyzer: aggregate 'sum' needs value_column (the number column to aggregate)"),
            (json!({"path": "text.csv", "group_by": "k", "aggregate": "median", "value_column": "v"}), "table_analyzer: unknown aggregate 'median'; use one of sum, mean, count, min, max"),
            (json!({"path": "text.csv", "group_by": "k", "aggregate": "sum", "value_column": "v"}), "table_analyzer: value_column 'v' has a non-number value 'x' on line 3"),
            (json!({"path": "text.csv", "columns": [1]}), "table_analyzer: argument 'columns' must be a list of strings, got 1"),
        ];
        for (args, expected) in cases {
            assert_eq!(run(&ws, args.clone()), Err(SkillError::new(expected)), "{args}");
        }
        let err = run(&ws, json!({"path": "text.csv", "aggregate": "sum", "value_column": "v"})).unwrap_err();
        assert!(err.0.starts_with("table_analyzer: aggregate and value_column need group_by"), "{err}");
    }
}
