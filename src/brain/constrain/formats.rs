//! Value formats that a parameter's description states ("formatted YYYY-MM-DD", "HH:MM",
//! "E.164", "ISO 4217 code") as string patterns for the grammar: a small model otherwise
//! writes the date it read (`2024-03-28` where `MM-DD-YYYY` is asked, `08:00 AM` where
//! `HH:MM` is), and the tool receives a value it cannot read.
//!
//! Only a plain string schema gets a pattern (no enum, const, pattern or format of its
//! own), and only when its description names exactly one format: a description that
//! offers two ("YYYY-MM-DD or MM/DD/YYYY") leaves the value free.

use serde_json::{json, Map, Value};

use crate::tools::spec::ToolSpec;

/// Date and time notations, longest first where one contains another, with the grammar's
/// pattern: the notation itself, or where a model tends to write another unambiguous
/// spelling (ISO dates, `8:00 PM`), that spelling too, which [`normalize`] rewrites.
const DATE_TIME: &[(&str, &str)] = &[
    ("YYYY-MM-DD HH:MM:SS", "^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{1,2}:[0-9]{2}:[0-9]{2}( ?[AaPp][Mm])?$"),
    ("YYYY-MM-DD HH:MM", "^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{1,2}:[0-9]{2}( ?[AaPp][Mm])?$"),
    ("YYYY-MM-DD", "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
    ("YYYY/MM/DD", "^[0-9]{4}[/-][0-9]{2}[/-][0-9]{2}$"),
    ("MM-DD-YYYY", "^([0-9]{2}-[0-9]{2}-[0-9]{4}|[0-9]{4}-[0-9]{2}-[0-9]{2})$"),
    ("DD-MM-YYYY", "^([0-9]{2}-[0-9]{2}-[0-9]{4}|[0-9]{4}-[0-9]{2}-[0-9]{2})$"),
    ("MM/DD/YYYY", "^([0-9]{2}/[0-9]{2}/[0-9]{4}|[0-9]{4}-[0-9]{2}-[0-9]{2})$"),
    ("DD/MM/YYYY", "^([0-9]{2}/[0-9]{2}/[0-9]{4}|[0-9]{4}-[0-9]{2}-[0-9]{2})$"),
    ("DD.MM.YYYY", "^([0-9]{2}\\.[0-9]{2}\\.[0-9]{4}|[0-9]{4}-[0-9]{2}-[0-9]{2})$"),
    ("HH:MM:SS", "^[0-9]{1,2}:[0-9]{2}:[0-9]{2}( ?[AaPp][Mm])?$"),
    ("HH:MM", "^[0-9]{1,2}:[0-9]{2}( ?[AaPp][Mm])?$"),
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

/// The one notation `description` names, if it names exactly one.
fn notation_of(description: &str) -> Option<(&'static str, &'static str)> {
    let mut found: Vec<(&'static str, &'static str)> = Vec::new();
    let mut rest = description.to_string();
    for &(notation, pattern) in DATE_TIME.iter().chain(CODES) {
        if rest.contains(notation) {
            // Taken out, so that `HH:MM` is not found again inside `YYYY-MM-DD HH:MM`.
            rest = rest.replace(notation, " ");
            found.push((notation, pattern));
        }
    }
    match found.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The one date, time or code notation `description` names (`YYYY-MM-DD`, `HH:MM`,
/// `E.164`), if it names exactly one.
pub fn notation(description: &str) -> Option<&'static str> {
    notation_of(description).map(|(notation, _)| notation)
}

/// The pattern for the one format `description` names, if it names exactly one.
pub fn pattern_for(description: &str) -> Option<&'static str> {
    notation_of(description).map(|(_, pattern)| pattern)
}

/// `value` in the notation its description names, when the model wrote it in another
/// spelling of the same date or time (`2024-03-28` for `MM-DD-YYYY`, `8:00 PM` for
/// `HH:MM`); `None` when it is already right or cannot be read unambiguously.
pub fn normalize(value: &str, description: &str) -> Option<String> {
    let (notation, _) = notation_of(description)?;
    let fixed = match notation {
        "YYYY-MM-DD HH:MM:SS" | "YYYY-MM-DD HH:MM" => {
            let (date, time) = value.split_once([' ', 'T'])?;
            let time = time_24h(time, notation.ends_with(":SS"))?;
            format!("{date} {time}")
        }
        "HH:MM:SS" | "HH:MM" => time_24h(value, notation.ends_with(":SS"))?,
        "YYYY/MM/DD" | "MM-DD-YYYY" | "DD-MM-YYYY" | "MM/DD/YYYY" | "DD/MM/YYYY" | "DD.MM.YYYY" => {
            let (y, m, d) = iso_date(&value.replace('/', "-"))?;
            let (y, m, d) = (format!("{y:04}"), format!("{m:02}"), format!("{d:02}"));
            match notation {
                "YYYY/MM/DD" => format!("{y}/{m}/{d}"),
                "MM-DD-YYYY" => format!("{m}-{d}-{y}"),
                "DD-MM-YYYY" => format!("{d}-{m}-{y}"),
                "MM/DD/YYYY" => format!("{m}/{d}/{y}"),
                "DD/MM/YYYY" => format!("{d}/{m}/{y}"),
                _ => format!("{d}.{m}.{y}"),
            }
        }
        _ => return None,
    };
    (fixed != value).then_some(fixed)
}

/// A real date written `YYYY-MM-DD`.
fn iso_date(text: &str) -> Option<(i32, u32, u32)> {
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    chrono::NaiveDate::from_ymd_opt(y, m, d).map(|_| (y, m, d))
}

/// `8:05 pm`, `08:05`, `20:05:30` as a zero-padded 24-hour time.
fn time_24h(text: &str, seconds: bool) -> Option<String> {
    let lower = text.trim().to_ascii_lowercase();
    let (clock, half) = match lower.strip_suffix("am").or_else(|| lower.strip_suffix("pm")) {
        Some(clock) => (clock.trim_end(), Some(lower.ends_with("pm"))),
        None => (lower.as_str(), None),
    };
    let fields: Vec<u32> = clock.split(':').map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let (h, m, s) = match fields.as_slice() {
        [h, m] => (*h, *m, 0),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    let h = match half {
        Some(_) if !(1..=12).contains(&h) => return None,
        Some(true) => h % 12 + 12,
        Some(false) => h % 12,
        None => h,
    };
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(if seconds { format!("{h:02}:{m:02}:{s:02}") } else { format!("{h:02}:{m:02}") })
}

/// Rewrites, in place, each string argument whose description names a date or time
/// notation and whose value is another spelling of one (see [`normalize`]); returns what
/// was rewritten, as `param: old -> new`.
pub fn normalize_args(args: &mut Map<String, Value>, tool: &ToolSpec) -> Vec<String> {
    let mut notes = Vec::new();
    for (key, value) in args.iter_mut() {
        let description = tool.param(key).and_then(|p| p.description.as_deref());
        let (Some(description), Value::String(text)) = (description, &*value) else { continue };
        if let Some(fixed) = normalize(text, description) {
            notes.push(format!("{key}: {text} -> {fixed}"));
            *value = Value::String(fixed);
        }
    }
    notes
}

/// Whether a schema is a plain string: of type string, with no enum, const, pattern or
/// format of its own.
pub fn is_plain_string(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("string")
        && !["enum", "const", "pattern", "format"].iter().any(|k| map.contains_key(*k))
}

/// Gives a plain string schema the pattern its description names.
pub fn add_pattern(map: &mut Map<String, Value>) {
    if !is_plain_string(map) {
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
        assert_eq!(pattern_for("Return date, formatted MM-DD-YYYY."), Some(DATE_TIME[4].1));
        assert_eq!(pattern_for("When, formatted YYYY-MM-DD HH:MM (24-hour, local time)."), Some(DATE_TIME[1].1));
        assert_eq!(pattern_for("Start time, HH:MM, 24-hour clock."), Some(DATE_TIME[10].1));
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
        crate::tools::spec::for_each_raw(&mut schema, &mut add_pattern);
        assert_eq!(schema["properties"]["day"]["pattern"], "^[0-9]{4}-[0-9]{2}-[0-9]{2}$");
        assert!(schema["properties"]["unit"].get("pattern").is_none());
        assert!(schema["properties"]["count"].get("pattern").is_none());
        assert_eq!(schema["properties"]["legs"]["items"]["properties"]["at"]["pattern"], DATE_TIME[10].1);
    }

    #[test]
    fn other_spellings_of_the_same_date_or_time_are_rewritten_to_the_notation() {
        let mdy = "Pick-up date, formatted MM-DD-YYYY.";
        assert_eq!(normalize("2025-07-04", mdy).as_deref(), Some("07-04-2025"));
        assert_eq!(normalize("07-04-2025", mdy), None);
        // Not a real date: left for the tool to refuse.
        assert_eq!(normalize("2025-02-30", mdy), None);
        assert_eq!(normalize("2025-07-04", "Day, formatted DD.MM.YYYY").as_deref(), Some("04.07.2025"));
        let hm = "Start time, HH:MM, 24-hour clock.";
        assert_eq!(normalize("8:05 PM", hm).as_deref(), Some("20:05"));
        assert_eq!(normalize("12:30 am", hm).as_deref(), Some("00:30"));
        assert_eq!(normalize("9:00", hm).as_deref(), Some("09:00"));
        assert_eq!(normalize("08:00", hm), None);
        assert_eq!(normalize("13:00 PM", hm), None);
        let when = "When, formatted YYYY-MM-DD HH:MM (24-hour).";
        assert_eq!(normalize("2025-01-06 8:00 AM", when).as_deref(), Some("2025-01-06 08:00"));
        assert_eq!(normalize("2025-01-06T18:30", when).as_deref(), Some("2025-01-06 18:30"));
        // A description without a notation changes nothing.
        assert_eq!(normalize("2025-07-04", "A date."), None);

        let mut args = serde_json::Map::new();
        args.insert("pickup_date".into(), json!("2025-07-04"));
        args.insert("city".into(), json!("Rome"));
        let parameters = json!({"properties": {"pickup_date": {"type": "string", "description": mdy}, "city": {"type": "string"}}});
        let tool = ToolSpec::parse(&json!({"name": "car.rent", "parameters": parameters}), 0).unwrap();
        assert_eq!(normalize_args(&mut args, &tool), vec!["pickup_date: 2025-07-04 -> 07-04-2025".to_string()]);
        assert_eq!(args["pickup_date"], "07-04-2025");
    }

    #[test]
    fn every_pattern_accepts_what_normalize_writes() {
        let space = super::super::TokenSpace::from_env(llguidance::toktrie::ApproximateTokEnv::single_byte_env()).unwrap();
        let cases = [
            ("formatted MM-DD-YYYY", "2025-07-04"),
            ("formatted MM-DD-YYYY", "07-04-2025"),
            ("HH:MM", "8:05 PM"),
            ("HH:MM", "20:05"),
            ("formatted YYYY-MM-DD HH:MM", "2025-01-06 8:00 AM"),
            ("formatted YYYY-MM-DD HH:MM", "2025-01-06 08:00"),
            ("E.164", "+8613800138000"),
        ];
        for (description, value) in cases {
            let tool = json!({"name": "f", "parameters": {"type": "object", "properties": {"v": {"type": "string", "description": description}}, "required": ["v"]}});
            let tool = ToolSpec::parse(&tool, 0).unwrap();
            let grammar = super::super::lark(&[tool], super::super::Target::Native(super::super::NativeStyle::Hermes));
            let call = format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"v\": \"{value}\"}}}}\n</tool_call>");
            assert!(space.accepts(&grammar, &call).unwrap(), "{description}: {value}");
            let wrong = call.replace(value, "tomorrow");
            assert!(!space.accepts(&grammar, &wrong).unwrap(), "{description}: tomorrow");
        }
    }
}
