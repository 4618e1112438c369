use std::path::Path;

use super::*;

fn read_json(path: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn basic() -> Vec<ToolSpec> {
    let tools = read_json("data/messages/tools_schema_basic.json");
    ToolSpec::parse_all(tools.as_array().unwrap()).unwrap()
}

fn spec(parameters: Value) -> ToolSpec {
    ToolSpec::parse(&json!({"name": "t", "parameters": parameters}), 0).unwrap()
}

#[test]
fn the_basic_tools_schema_reads_into_specs() {
    let specs = basic();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["file_reader", "calculator", "local_file_search", "table_analyzer", "format_converter"]);
    let reader = find(&specs, "file_reader").unwrap();
    assert!(reader.description.starts_with("Read a UTF-8 text file"));
    let params: Vec<(&str, &[ParamKind])> = reader.params().iter().map(|p| (p.name.as_str(), p.schema.kinds.as_slice())).collect();
    assert_eq!(params, [("path", &[ParamKind::String][..]), ("max_chars", &[ParamKind::Integer][..])]);
    assert_eq!(reader.required(), ["path"]);
    assert!(reader.args.closed);
    let max_chars = reader.param("max_chars").unwrap();
    assert_eq!((max_chars.minimum, max_chars.maximum), (Some(1.0), None));
    assert_eq!(max_chars.description.as_deref(), Some("Return at most this many characters (default 2000)."));
    // What is written stays as written, for the grammar and the prompt.
    assert_eq!(reader.to_openai(), read_json("data/messages/tools_schema_basic.json")[0]);
    assert!(find(&specs, "nope").is_none());
}

#[test]
fn the_wrapped_and_the_bare_form_read_alike() {
    let function = json!({"name": "get_weather", "description": "Weather now.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}});
    let wrapped = json!({"type": "function", "function": function.clone()});
    assert_eq!(ToolSpec::parse(&wrapped, 0).unwrap(), ToolSpec::parse(&function, 0).unwrap());
    // No parameters: an empty arguments object.
    let bare = ToolSpec::parse(&json!({"name": "ping"}), 0).unwrap();
    assert_eq!((bare.params().len(), bare.args.kinds.as_slice()), (0, &[ParamKind::Object][..]));
}

/// Every BFCL function, in its own Python type names and as converted for the model, reads
/// into the same spec.
#[test]
fn every_bfcl_function_reads_in_either_spelling() {
    let mut read = 0;
    for file in ["data/bfcl/questions.json", "data/bfcl/dev/questions.json", "data/bfcl/holdout/questions.json"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let question: Value = serde_json::from_str(line).unwrap();
            for (i, function) in question["function"].as_array().unwrap().iter().enumerate() {
                let python = ToolSpec::parse(function, i).unwrap_or_else(|e| panic!("{file}: {}: {e}", question["id"]));
                let converted = crate::bench::bfcl::to_openai_tool(function).unwrap();
                let json_schema = ToolSpec::parse(&converted, i).unwrap();
                assert_eq!(strip_raw(python), strip_raw(json_schema), "{file}: {}", question["id"]);
                read += 1;
            }
        }
    }
    assert!(read > 300, "{read} functions");
}

/// A spec without what was written (which differs in its type names).
fn strip_raw(mut spec: ToolSpec) -> ToolSpec {
    fn strip(schema: &mut Schema) {
        schema.raw = Value::Null;
        schema.properties.iter_mut().for_each(|p| strip(&mut p.schema));
        if let Some(items) = &mut schema.items {
            strip(items);
        }
    }
    strip(&mut spec.args);
    spec
}

#[test]
fn errors_name_the_tool_and_the_field() {
    let err = |tool: Value| ToolSpec::parse(&tool, 3).unwrap_err().to_string();
    assert_eq!(err(json!("calculator")), "tool 3: must be an object, found a string");
    assert_eq!(err(json!({"type": "function", "function": {"parameters": {}}})), "tool 3: no function.name");
    assert_eq!(err(json!({"name": "  "})), "tool 3: no function.name");
    assert_eq!(err(json!({"name": "bad", "parameters": "none"})), "tool 3 (bad): parameters: must be an object, found a string");
    assert_eq!(err(json!({"name": "f", "description": 7})), "tool 3 (f): description: must be a text, found a number");
    assert_eq!(
        err(json!({"name": "f", "parameters": {"type": "dict", "properties": {"p": {"type": "dict", "properties": {"x": {"type": "Pointer"}}}}}})),
        format!("tool 3 (f): parameters.properties.p.properties.x.type: unknown type \"Pointer\" (known: {KNOWN_TYPES})")
    );
    assert_eq!(
        err(json!({"name": "f", "parameters": {"type": "object", "properties": []}})),
        "tool 3 (f): parameters.properties: must be an object, found an array"
    );
    assert_eq!(
        err(json!({"name": "f", "parameters": {"type": "object", "required": "x"}})),
        "tool 3 (f): parameters.required: must be a list of names, found a string"
    );
    assert_eq!(err(json!({"name": "f", "parameters": {"type": "object", "required": [1]}})), "tool 3 (f): parameters.required: must be a list of names");
    assert_eq!(err(json!({"name": "f", "parameters": {"type": {"a": 1}}})), "tool 3 (f): parameters.type: must be a type name, found an object");
    assert_eq!(err(json!({"name": "f", "parameters": {"properties": {"u": {"enum": "c"}}}})), "tool 3 (f): parameters.properties.u.enum: must be a list, found a string");
    let list = [json!({"name": "ok"}), json!({"name": "broken", "parameters": 1})];
    assert_eq!(ToolSpec::parse_all(&list).unwrap_err().to_string(), "tool 1 (broken): parameters: must be an object, found a number");
}

#[test]
fn type_names_are_json_schemas_and_bfcls() {
    let names = ["dict", "float", "int", "bool", "str", "string", "list", "tuple", "integer", "number", "boolean", "array", "object", "null"];
    let kinds: Vec<&str> = names.iter().map(|n| ParamKind::from_name(n).unwrap().unwrap().as_str()).collect();
    let want = ["object", "number", "integer", "boolean", "string", "string", "array", "array", "integer", "number", "boolean", "array", "object", "null"];
    assert_eq!(kinds, want);
    assert_eq!(ParamKind::from_name("any"), Ok(None));
    assert!(ParamKind::from_name("HashMap").unwrap_err().starts_with("unknown type \"HashMap\""));
    // `any` in a list of types lifts the constraint; a list is a union.
    assert!(spec(json!({"type": ["string", "any"]})).args.kinds.is_empty());
    let union = spec(json!({"type": "object", "properties": {"n": {"type": ["null", "integer"]}}}));
    let n = union.param("n").unwrap();
    assert_eq!((n.accepts(&json!(null)), n.accepts(&json!(3)), n.accepts(&json!("3"))), (true, true, false));
    assert_eq!(n.main_kind(), Some(ParamKind::Integer));
}

#[test]
fn an_integer_is_a_number_without_a_fraction() {
    use ParamKind::*;
    let cases = [
        (Integer, json!(3), true),
        (Integer, json!(-3), true),
        (Integer, json!(3.0), true),
        (Integer, json!(u64::MAX), true),
        (Integer, json!(3.5), false),
        (Integer, json!("3"), false),
        (Number, json!(3), true),
        (Number, json!(3.5), true),
        (Number, json!("3.5"), false),
        (String, json!("文件"), true),
        (String, json!(1), false),
        (Boolean, json!(false), true),
        (Boolean, json!("true"), false),
        (Array, json!([]), true),
        (Object, json!({}), true),
        (Object, json!([]), false),
        (Null, json!(null), true),
        (Null, json!(0), false),
    ];
    for (kind, value, fits) in cases {
        assert_eq!(kind.accepts(&value), fits, "{kind:?} {value}");
    }
}

#[test]
fn bare_text_is_read_as_the_type() {
    use ParamKind::*;
    assert_eq!(Integer.read_text(" 42 "), Some(json!(42)));
    assert_eq!(Integer.read_text("3.0"), Some(json!(3)));
    assert_eq!(Integer.read_text("3.5"), None);
    assert_eq!(Number.read_text("2.5"), Some(json!(2.5)));
    assert_eq!(Number.read_text("7"), Some(json!(7)));
    assert_eq!(Boolean.read_text("True"), Some(json!(true)));
    assert_eq!(Boolean.read_text("yes"), None);
    assert_eq!(Array.read_text("[1, \"a\"]"), Some(json!([1, "a"])));
    assert_eq!(Array.read_text("{}"), None);
    assert_eq!(Object.read_text("{\"k\": 1}"), Some(json!({"k": 1})));
    assert_eq!(String.read_text("42"), None);
}

#[test]
fn placeholders_fill_the_required_params_with_their_types() {
    let specs = basic();
    let args = |name: &str| Value::Object(find(&specs, name).unwrap().placeholder_args());
    assert_eq!(args("file_reader"), json!({"path": "..."}));
    let all = spec(json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"}, "l": {"type": "array"},
        "o": {"type": "object"}, "maybe": {"type": ["null", "integer"]}, "free": {}, "skip": {"type": "string"}
    }, "required": ["n", "x", "b", "l", "o", "maybe", "free"]}));
    assert_eq!(
        Value::Object(all.placeholder_args()),
        json!({"n": 1, "x": 1.5, "b": true, "l": [], "o": {}, "maybe": 1, "free": "..."})
    );
    // None required: the first param shows the way.
    assert_eq!(Value::Object(spec(json!({"properties": {"q": {"type": "string"}, "k": {"type": "integer"}}})).placeholder_args()), json!({"q": "..."}));
    assert_eq!(Value::Object(spec(json!({"type": "object"})).placeholder_args()), json!({}));
}

#[test]
fn a_check_names_the_first_mismatch_with_its_path() {
    let spec = spec(json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "max_chars": {"type": "integer", "minimum": 1, "maximum": 100},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "columns": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object", "properties": {"sep": {"type": "string"}}, "required": ["sep"], "additionalProperties": false},
            "free": {"type": "object", "properties": {"k": {"type": "integer"}}}
        },
        "required": ["path"],
        "additionalProperties": false
    }));
    let check = |args: Value| spec.check(args.as_object().unwrap()).map_err(|m| m.describe("argument"));
    assert_eq!(check(json!({"path": "a", "max_chars": 3.0, "mode": "b", "columns": ["x"], "options": {"sep": ";"}, "free": {"k": 1, "z": 2}})), Ok(()));
    let long = "长".repeat(200);
    let cases = [
        (json!({}), "missing required argument 'path'".to_string()),
        (json!({"path": 3}), "argument 'path' must be string, got 3".into()),
        (json!({"path": "a", "max_chars": 2.5}), "argument 'max_chars' must be integer, got 2.5".into()),
        (json!({"path": "a", "max_chars": 0}), "argument 'max_chars' must be >= 1, got 0".into()),
        (json!({"path": "a", "max_chars": 101}), "argument 'max_chars' must be <= 100, got 101".into()),
        (json!({"path": "a", "mode": "c"}), "argument 'mode' must be one of \"a\", \"b\", got \"c\"".into()),
        (json!({"path": "a", "columns": ["x", 1]}), "argument 'columns[1]' must be string, got 1".into()),
        (json!({"path": "a", "options": {}}), "missing required argument 'options.sep'".into()),
        (json!({"path": "a", "options": {"sep": ",", "x": 1}}), "unknown argument 'options.x' (known: sep)".into()),
        (json!({"path": "a", "free": {"k": "1"}}), "argument 'free.k' must be integer, got \"1\"".into()),
        (json!({"path": "a", "file": "b"}), "unknown argument 'file' (known: path, max_chars, mode, columns, options, free)".into()),
        // A long value is shown cut, on a char boundary.
        (json!({"path": [long]}), format!("argument 'path' must be string, got [\"{}...", "长".repeat(158))),
    ];
    for (args, want) in cases {
        assert_eq!(check(args.clone()), Err(want), "{args}");
    }
    let whole = spec.args.check(&json!(["a"])).unwrap_err();
    assert_eq!((whole.path_text(), whole.describe("param")), (String::new(), "params must be object, got [\"a\"]".to_string()));
}

#[test]
fn the_raw_walk_reaches_every_nested_schema_with_its_path() {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "string"}}}},
            "t": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]},
            "u": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "m": {"type": "object", "additionalProperties": {"type": "number"}}
        }
    });
    let mut seen = Vec::new();
    walk_raw::<String>(&mut schema, "f", &mut |map, path| {
        seen.push(format!("{path}:{}", map.get("type").and_then(Value::as_str).unwrap_or("-")));
        map.insert("seen".into(), json!(true));
        Ok(())
    })
    .unwrap();
    assert_eq!(
        seen,
        [
            "f:object", "f.a:array", "f.a[]:object", "f.a[].b:string", "f.t:array", "f.t[0]:integer", "f.t[1]:string", "f.u:-",
            "f.u[0]:string", "f.u[1]:null", "f.m:object", "f.m.*:number"
        ]
    );
    assert_eq!(schema["properties"]["a"]["items"]["properties"]["b"]["seen"], true);
    let stop = walk_raw(&mut schema, "f", &mut |_, path| if path == "f.u" { Err(format!("{path}: no")) } else { Ok(()) });
    assert_eq!(stop, Err("f.u: no".into()));
}
