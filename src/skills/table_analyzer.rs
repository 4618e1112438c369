//! `table_analyzer(path, columns?, group_by?, aggregate?, value_column?)`: describes a CSV
//! file: row and column counts, each column's inferred type, number stats, the most
//! common text values, and optionally one aggregate per group.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::{args, embedded_manifest, format_number, number_value, Manifest, Skill, SkillError, Workspace};
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
    let table = CsvTable::parse(&file.text, &file.shown)?;

    let described: Vec<usize> = if wanted.is_empty() {
        (0..table.headers.len()).collect()
    } else {
        wanted.iter().map(|name| table.column_index(name)).collect::<Result<_, _>>()?
    };
    let columns: Vec<ColumnSummary> = described.iter().map(|&i| describe(&table, i)).collect();

    let grouping = match (group_by, aggregate, value_column) {
        (Some(group), aggregate, value) => {
            Some(group_values(&table, group, aggregate.unwrap_or(Aggregate::Count), value)?)
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
    rows: Vec<(u64, Vec<String>)>,
}

impl CsvTable {
    fn parse(text: &str, shown: &str) -> Result<CsvTable, SkillError> {
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
        let mut rows = Vec::new();
        for record in records {
            let record = record.map_err(|err| csv_error(shown, &err))?;
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
        Ok(CsvTable { headers, rows })
    }

    fn column_index(&self, name: &str) -> Result<usize, SkillError> {
        let name = name.trim();
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            SkillError::new(format!(
                "unknown column '{name}'; available columns: {}",
                self.headers.join(", ")
            ))
        })
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

struct NumberStats {
    count: usize,
    sum: f64,
    min: f64,
    max: f64,
}

impl NumberStats {
    fn of(values: impl IntoIterator<Item = f64>) -> Option<NumberStats> {
        let mut stats: Option<NumberStats> = None;
        for v in values {
            stats = Some(match stats {
                None => NumberStats { count: 1, sum: v, min: v, max: v },
                Some(s) => {
                    NumberStats { count: s.count + 1, sum: s.sum + v, min: s.min.min(v), max: s.max.max(v) }
                }
            });
        }
        stats
    }

    fn mean(&self) -> f64 {
        self.sum / self.count as f64
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

fn describe(table: &CsvTable, column: usize) -> ColumnSummary {
    let values: Vec<&str> = table.cells(column).map(|(_, c)| c).filter(|c| !c.is_empty()).collect();
    let kind = if values.is_empty() {
        ColumnType::Empty
    } else if values.iter().all(|v| v.parse::<i64>().is_ok()) {
        ColumnType::Integer
    } else if values.iter().all(|v| parse_number(v).is_some()) {
        ColumnType::Float
    } else {
        ColumnType::Text
    };
    let numbers = match kind {
        ColumnType::Integer | ColumnType::Float => {
            NumberStats::of(values.iter().filter_map(|v| parse_number(v)))
        }
        ColumnType::Text | ColumnType::Empty => None,
    };
    let (unique, top) = if kind == ColumnType::Text {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for v in &values {
            *counts.entry(v).or_default() += 1;
        }
        let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
        let unique = ranked.len();
        // Most common first; ties in value order, so the answer is stable.
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        (unique, ranked.into_iter().take(TOP_VALUES).map(|(v, n)| (v.to_string(), n)).collect())
    } else {
        (0, Vec::new())
    };
    ColumnSummary {
        name: table.headers.get(column).cloned().unwrap_or_default(),
        kind,
        non_empty: values.len(),
        empty: table.rows.len() - values.len(),
        numbers,
        unique,
        top,
    }
}

impl ColumnSummary {
    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), json!(self.name));
        out.insert("type".into(), json!(self.kind.as_str()));
        out.insert("non_empty".into(), json!(self.non_empty));
        out.insert("empty".into(), json!(self.empty));
        if let Some(s) = &self.numbers {
            let stats = json!({
                "count": s.count,
                "sum": number_value(s.sum),
                "mean": number_value(s.mean()),
                "min": number_value(s.min),
                "max": number_value(s.max),
            });
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
                format_number(s.sum),
                format_number(s.mean()),
                format_number(s.min),
                format_number(s.max)
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
    /// (group value, rows in the group, aggregate; `None` when the group has no numbers).
    groups: Vec<(String, usize, Option<f64>)>,
}

fn group_values(
    table: &CsvTable,
    group_by: &str,
    aggregate: Aggregate,
    value_column: Option<&str>,
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
    let mut groups: BTreeMap<String, (usize, Vec<f64>)> = BTreeMap::new();
    for (line, cells) in &table.rows {
        let key = cells.get(key_index).map_or("", String::as_str);
        let key = if key.is_empty() { "(empty)" } else { key };
        let entry = groups.entry(key.to_string()).or_default();
        entry.0 += 1;
        if let (Some(vi), true) = (value_index, aggregate != Aggregate::Count) {
            let cell = cells.get(vi).map_or("", String::as_str);
            if cell.is_empty() {
                continue;
            }
            let value = parse_number(cell).ok_or_else(|| {
                SkillError::new(format!(
                    "value_column '{}' has a non-number value '{cell}' on line {line}",
                    value_column.unwrap_or_default()
                ))
            })?;
            entry.1.push(value);
        }
    }
    let mut groups: Vec<(String, usize, Option<f64>)> = groups
        .into_iter()
        .map(|(key, (rows, values))| {
            let stats = NumberStats::of(values);
            let value = match aggregate {
                Aggregate::Count => Some(rows as f64),
                Aggregate::Sum => Some(stats.as_ref().map_or(0.0, |s| s.sum)),
                Aggregate::Mean => stats.as_ref().map(NumberStats::mean),
                Aggregate::Min => stats.as_ref().map(|s| s.min),
                Aggregate::Max => stats.as_ref().map(|s| s.max),
            };
            (key, rows, value)
        })
        .collect();
    // Number-like group keys (years, ids) read best in numeric order.
    if groups.iter().all(|(k, _, _)| parse_number(k).is_some()) {
        groups.sort_by(|a, b| {
            let (x, y) = (parse_number(&a.0).unwrap_or(0.0), parse_number(&b.0).unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        });
    }
    Ok(Grouping {
        column: group_by.trim().to_string(),
        aggregate,
        value_column: value_column.map(|v| v.trim().to_string()),
        groups,
    })
}

impl Grouping {
    fn to_json(&self) -> Value {
        json!({
            "group_by": self.column,
            "aggregate": self.aggregate.as_str(),
            "value_column": self.value_column,
            "values": self.groups.iter().map(|(key, rows, value)| json!({
                "group": key,
                "rows": rows,
                "value": value.map_or(Value::Null, number_value),
            })).collect::<Vec<_>>(),
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
        for (key, _, value) in &grouping.groups {
            let shown_value = value.map_or("no numbers".to_string(), format_number);
            text.push_str(&format!("\n- {key}: {shown_value}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use std::fs;

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
    fn malformed_and_hostile_input_are_errors() {
        let (_d, ws) = workspace(&[
            ("bad.csv", "a,b\n1,2\n\"x\ny\",3\n4,5,6\n"),
            ("empty.csv", ""),
            ("text.csv", "k,v\na,1\nb,x\n"),
            ("bin.csv", "a,b\n\0\0"),
        ]);
        let cases = [
            (json!({"path": "bad.csv"}), "table_analyzer: 'bad.csv' line 5 has 3 fields but the header has 2"),
            (json!({"path": "empty.csv"}), "table_analyzer: 'empty.csv' is empty (no header row)"),
            (json!({"path": "bin.csv"}), "table_analyzer: 'bin.csv' looks like a binary file (it contains NUL bytes); only text files can be read"),
            (json!({"path": "../x.csv"}), "table_analyzer: path '../x.csv' is outside the workspace; use a path inside it (relative paths start at the workspace root)"),
            (json!({"path": "text.csv", "columns": ["v", "w"]}), "table_analyzer: unknown column 'w'; available columns: k, v"),
            (json!({"path": "text.csv", "group_by": "z"}), "table_analyzer: unknown column 'z'; available columns: k, v"),
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
