//! Value formats that a parameter's description states ("formatted YYYY-MM-DD", "HH:MM",
//! "E.164", "ISO 4217 code") as string patterns for the grammar: a small model otherwise
//! writes the date it read (`2024-03-28` where `MM-DD-YYYY` is asked, `08:00 AM` where
//! `HH:MM` is), and the tool receives a value it cannot read.
//!
//! Only a plain string schema gets a pattern (no enum, const, pattern or format of its
//! own), and only when its description names exactly one format: a description that
//! offers two ("YYYY-MM-DD or MM/DD/YYYY") leaves the value free.

use serde_json::{json, Map, Value};

/// Format notations, longest first where one contains another.
const DATE_TIME: &[(&str, &str)] = &[
    ("YYYY-MM-DD HH:MM:SS", "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"),
    ("YYYY-MM-DD HH:MM", "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}$"),
    ("YYYY-MM-DD", "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
    ("YYYY/MM/DD", "^[0-9]{4}/[0-9]{2}/[0-9]{2}$"),
    ("MM-DD-YYYY", "^[0-9]{2}-[0-9]{2}-[0-9]{4}$"),
    ("DD-MM-YYYY", "^[0-9]{2}-[0-9]{2}-[0-9]{4}$"),
    ("MM/DD/YYYY", "^[0-9]{2}/[0-9]{2}/[0-9]{4}$"),
    ("DD/MM/YYYY", "^[0-9]{2}/[0-9]{2}/[0-9]{4}$"),
    ("DD.MM.YYYY", "^[0-9]{2}\\.[0-9]{2}\\.[0-9]{4}$"),
    ("HH:MM:SS", "^[0-9]{2}:[0-9]{2}:[0-9]{2}$"),
    ("HH:MM", "^[0-9]{2}:[0-9]{2}$"),
    ("YYYY-MM", "^[0-9]{4}-[0-9]{2}$"),
];

/// Code standards, by the name descriptions give them.
const CODES: &[(&str, &str)] = &[
    ("E.164", "^\\+[1-9][0-9]{6,14}$"),
    ("ISO 4217", "^[A-Z]{3}$"),
    ("ISO 639-1", "^[a-z]{2}$"),
    ("ISO 3166-1 alpha-2", "^[A-Z]{2}$"),
    ("ISO 3166-1 alpha-3", "^[A-Z]{3}$"),
];

/// The pattern for the one format `description` names, if it names exactly one.
pub fn pattern_for(description: &str) -> Option<&'static str> {
    let mut found: Vec<&'static str> = Vec::new();
    let mut rest = description.to_string();
    for (notation, pattern) in DATE_TIME.iter().chain(CODES) {
        if rest.contains(notation) {
            // Taken out, so that `HH:MM` is not found again inside `YYYY-MM-DD HH:MM`.
            rest = rest.replace(notation, " ");
            if !found.contains(pattern) {
                found.push(pattern);
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Gives every plain string schema in `schema` (objects' properties and array items, at
/// any depth) the pattern its description names.
pub fn add_patterns(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    add_pattern(map);
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(add_patterns);
    }
    if let Some(items) = map.get_mut("items") {
        add_patterns(items);
    }
}

fn add_pattern(map: &mut Map<String, Value>) {
    let is_string = map.get("type").and_then(Value::as_str) == Some("string");
    let own = ["enum", "const", "pattern", "format"].iter().any(|k| map.contains_key(*k));
    if !is_string || own {
        return;
    }
    if let Some(pattern) = map.get("description").and_then(Value::as_str).and_then(pattern_for) {
        map.insert("pattern".into(), json!(pattern));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_format_a_description_names_becomes_the_pattern() {
        assert_eq!(pattern_for("Return date, formatted MM-DD-YYYY."), Some("^[0-9]{2}-[0-9]{2}-[0-9]{4}$"));
        assert_eq!(pattern_for("When, formatted YYYY-MM-DD HH:MM (24-hour, local time)."), Some(DATE_TIME[1].1));
        assert_eq!(pattern_for("Start time, HH:MM, 24-hour clock."), Some("^[0-9]{2}:[0-9]{2}$"));
        assert_eq!(pattern_for("Phone number in E.164 format, e.g. +8613800138000."), Some("^\\+[1-9][0-9]{6,14}$"));
        assert_eq!(pattern_for("ISO 4217 code of the base currency."), Some("^[A-Z]{3}$"));
        assert_eq!(pattern_for("City name, e.g. Paris."), None);
        // Two formats offered: the value stays free.
        assert_eq!(pattern_for("Date as YYYY-MM-DD or MM/DD/YYYY."), None);
    }

    #[test]
    fn only_plain_strings_get_a_pattern_at_any_depth() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "day": {"type": "string", "description": "Day, formatted YYYY-MM-DD."},
                "unit": {"type": "string", "enum": ["c", "f"], "description": "formatted YYYY-MM-DD"},
                "count": {"type": "integer", "description": "formatted YYYY-MM-DD"},
                "legs": {"type": "array", "items": {"type": "object", "properties": {
                    "at": {"type": "string", "description": "Local time, HH:MM."}
                }}}
            }
        });
        add_patterns(&mut schema);
        assert_eq!(schema["properties"]["day"]["pattern"], "^[0-9]{4}-[0-9]{2}-[0-9]{2}$");
        assert!(schema["properties"]["unit"].get("pattern").is_none());
        assert!(schema["properties"]["count"].get("pattern").is_none());
        assert_eq!(schema["properties"]["legs"]["items"]["properties"]["at"]["pattern"], "^[0-9]{2}:[0-9]{2}$");
    }
}
