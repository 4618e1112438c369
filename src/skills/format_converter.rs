//! `format_converter(to, path? | content?, from?, output_path?, overwrite=false)`: converts
//! tabular data (CSV rows, or a JSON/YAML list of flat objects) between csv, json, yaml
//! and a markdown pipe table. The result is returned inline or written atomically to a
//! file inside the workspace, never replacing an existing file unless asked.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::workspace::MAX_TEXT_BYTES;
use super::{args, embedded_manifest, Manifest, Skill, SkillError, Workspace};
use crate::protocol::Args;

const NAME: &str = "format_converter";

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

    let table = match from {
        Format::Csv => parse_csv(&text)?,
        Format::Json => {
            let value = serde_json::from_str(&text)
                .map_err(|err| SkillError::new(format!("input is not valid JSON: {err}")))?;
            table_of(value, "JSON")?
        }
        Format::Yaml => {
            let value = serde_yaml::from_str(&text)
                .map_err(|err| SkillError::new(format!("input is not valid YAML: {err}")))?;
            table_of(value, "YAML")?
        }
        Format::Markdown => {
            return Err(SkillError::new(
                "markdown can only be an output format; from must be csv, json or yaml",
            ))
        }
    };
    let converted = render(&table, to)?;

    let mut map = Map::new();
    map.insert("from".into(), json!(from.as_str()));
    map.insert("to".into(), json!(to.as_str()));
    map.insert("rows".into(), json!(table.rows.len()));
    map.insert("columns".into(), json!(table.columns));
    match output_path {
        None => {
            map.insert("content".into(), Value::String(converted));
        }
        Some(output_path) => {
            let written = workspace.write_text(output_path, &converted, overwrite)?;
            let shown = workspace.shown(&written);
            map.insert("output_path".into(), Value::String(shown.clone()));
            map.insert("bytes".into(), json!(converted.len()));
            map.insert(
                "content".into(),
                Value::String(format!(
                    "Converted {} rows from {} to {} and wrote them to {shown} ({} bytes).",
                    table.rows.len(),
                    from.as_str(),
                    to.as_str(),
                    converted.len()
                )),
            );
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

fn parse_csv(text: &str) -> Result<Table, SkillError> {
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
    if let Some(dup) = columns.iter().enumerate().find(|(i, c)| columns.iter().take(*i).any(|p| p == *c)) {
        return Err(SkillError::new(format!("the CSV header names column '{}' twice", dup.1)));
    }
    let mut rows = Vec::new();
    for record in records {
        let record = record.map_err(csv_error)?;
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
/// or `1e3`, which would come back different); everything else stays a string.
fn csv_cell(cell: &str) -> Value {
    if let Ok(n) = cell.parse::<i64>() {
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
fn table_of(value: Value, kind: &str) -> Result<Table, SkillError> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(object) => vec![Value::Object(object)],
        _ => return Err(SkillError::new(format!("{kind} input must be a list of objects (one per row)"))),
    };
    let mut columns: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let Value::Object(row) = item else {
            return Err(SkillError::new(format!(
                "{kind} item {} is not an object; each row must be an object of column: value",
                index + 1
            )));
        };
        for key in row.keys() {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
        rows.push(row);
    }
    Ok(Table { columns, rows })
}

fn render(table: &Table, to: Format) -> Result<String, SkillError> {
    let rows_value = || Value::Array(table.rows.iter().cloned().map(Value::Object).collect());
    match to {
        Format::Json => serde_json::to_string_pretty(&rows_value())
            .map(|text| text + "\n")
            .map_err(|err| SkillError::new(format!("cannot write JSON: {err}"))),
        Format::Yaml => serde_yaml::to_string(&rows_value())
            .map_err(|err| SkillError::new(format!("cannot write YAML: {err}"))),
        Format::Csv => render_csv(table),
        Format::Markdown => render_markdown(table),
    }
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

fn render_csv(table: &Table) -> Result<String, SkillError> {
    if table.columns.is_empty() {
        return Err(no_columns());
    }
    let write_error = |err: csv::Error| SkillError::new(format!("cannot write CSV: {err}"));
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&table.columns).map_err(write_error)?;
    for row in &table.rows {
        writer.write_record(table.columns.iter().map(|c| cell_text(row.get(c)))).map_err(write_error)?;
    }
    let bytes =
        writer.into_inner().map_err(|err| SkillError::new(format!("cannot write CSV: {}", err.error())))?;
    String::from_utf8(bytes).map_err(|err| SkillError::new(format!("cannot write CSV: {err}")))
}

fn render_markdown(table: &Table) -> Result<String, SkillError> {
    if table.columns.is_empty() {
        return Err(no_columns());
    }
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut text = line(table.columns.iter().map(|c| markdown_cell(c)).collect());
    text.push_str(&line(table.columns.iter().map(|_| "---".to_string()).collect()));
    for row in &table.rows {
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
