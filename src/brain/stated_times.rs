//! Dates and times put back as the request states them.
//!
//! Read off a batch of requests nobody had tuned on (2026-12-06), three ways the 0.5B
//! writes a date or a time the request states plainly, each into a parameter whose
//! description names its format:
//! - the year: under the `YYYY-MM` pattern it starts with the month and fills the year
//!   with it, `1026-10` for "October 2026", `1001-10` for "2025年10月";
//! - a day the month does not have: `2025-11-31` as the last day of November;
//! - the evening on the morning clock: `08:00` for "晚上八点", and other hours than the
//!   one the request states: `17:15` for "at 6:15 am", `16:30` for "from 6:30 pm";
//! - hours where minutes are asked: `duration_minutes: 2` for "停两个半小时".
//!
//! Each is put right only where the request leaves one reading: the year where the request
//! writes exactly one year and the value's is no year at all (before 1900 or after 2199), the day where it is past the month's
//! end (the month's last day, what a 31st of November means), the hour where the request
//! states the same time after noon and never before it, or where the request states one
//! time (and reckons no other from it: "30 minutes before", "提前") and the call has one
//! argument holding a time, and minutes where the value is the
//! number of hours the request states as a length of time.

use serde_json::Value;

use super::constrain::notation;
use crate::protocol::ToolCall;
use crate::tools::spec::ToolSpec;

/// Puts right, in place, the date and time arguments of `calls` (string parameters whose
/// description names a date or time notation) that contradict what `question` states.
/// Returns one line per value changed (`tool: param: old -> new`).
pub fn put_right(calls: &mut [ToolCall], tools: &[ToolSpec], question: &str) -> Vec<String> {
    let years = years_in(question);
    let times = times_in(question);
    // "30 minutes before my 3 pm meeting": a time reckoned from the stated one.
    let lower = question.to_lowercase();
    let reckoned = lower.split(|c: char| !c.is_ascii_alphabetic()).any(|w| OFFSET_WORDS.contains(&w)) || OFFSET_TERMS.iter().any(|t| question.contains(t));
    let mut changed = Vec::new();
    let dates = dates_in(question);
    for call in calls.iter_mut() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else { continue };
        if let ([date], [time], false) = (&dates[..], &times[..], reckoned) {
            changed.extend(add_stated_moment(call, tool, *date, *time));
        }
        let format_of = |param: &str| tool.param(param).and_then(|p| p.description.as_deref()).and_then(notation);
        // Arguments holding a time of day: with one, a request stating one time means it.
        let clocks = call.args.keys().filter(|k| format_of(k).is_some_and(|f| f.contains("HH:MM"))).count();
        changed.extend(minutes_of_hours(call, tool, question));
        for (param, value) in call.args.iter_mut() {
            let Some(text) = value.as_str() else { continue };
            let Some(format) = format_of(param) else { continue };
            if !(format.contains("YYYY") || format.contains("HH")) {
                continue;
            }
            let mut fixed = text.to_string();
            if let [year] = years[..] {
                fixed = with_year(&fixed, year);
            }
            if format.starts_with("YYYY-MM-DD") {
                fixed = within_month(&fixed);
            }
            if format.contains("HH:MM") {
                fixed = after_noon(&fixed, &times);
                if let ([time], 1, false) = (&times[..], clocks, reckoned) {
                    fixed = at_time(&fixed, *time);
                }
            }
            if fixed != text {
                changed.push(format!("{}: {param}: {text} -> {fixed}", call.name));
                *value = Value::String(fixed);
            }
        }
    }
    changed
}

/// Where `tool` has one parameter for a date with its time of day (`YYYY-MM-DD HH:MM`),
/// optional, that `call` leaves out, and no argument of `call` holds the date: that
/// parameter set to the one date and time the request states ("picking us up at 6:15 am on
/// December 20, 2025": `schedule_at: 2025-12-20 06:15`). The 0.5B leaves a stated pick-up
/// time out of a ride booked ahead, and the car comes now.
fn add_stated_moment(call: &mut ToolCall, tool: &ToolSpec, (year, month, day): (i32, u32, u32), (hour, minute): (u32, u32)) -> Option<String> {
    let moments: Vec<(&str, &str)> = tool
        .params()
        .iter()
        .filter_map(|p| Some((p.name.as_str(), p.schema.description.as_deref().and_then(notation)?)))
        .filter(|(_, format)| format.starts_with("YYYY-MM-DD HH:MM"))
        .collect();
    let [(param, format)] = moments[..] else { return None };
    let date = format!("{year:04}-{month:02}-{day:02}");
    let held = call.args.values().any(|v| v.as_str().is_some_and(|s| s.contains(&date)));
    if call.args.contains_key(param) || tool.required().iter().any(|r| r == param) || held {
        return None;
    }
    let seconds = if format.ends_with(":SS") { ":00" } else { "" };
    let value = format!("{date} {hour:02}:{minute:02}{seconds}");
    call.args.insert(param.to_string(), Value::String(value.clone()));
    Some(format!("{}: {param}: left out -> {value}", call.name))
}

/// The dates `text` states with their year, each once: `2025-12-20`, `2025/12/20`,
/// `2025年12月20日`, `December 20, 2025`, `Dec. 20th 2025`, `20 December 2025`.
pub(crate) fn dates_in(text: &str) -> Vec<(i32, u32, u32)> {
    let mut dates = Vec::new();
    let mut push = |date: (i32, u32, u32)| {
        if chrono::NaiveDate::from_ymd_opt(date.0, date.1, date.2).is_some() && !dates.contains(&date) {
            dates.push(date);
        }
    };
    let chars: Vec<char> = text.chars().collect();
    // Figures: year first, then month and day parted by `-`, `/` or 年 月.
    let mut i = 0;
    while i < chars.len() {
        let Some((year, end)) = digits_at(&chars, i).filter(|(y, end)| end - i == 4 && (1900..2200).contains(y)) else {
            i += 1;
            continue;
        };
        if i > 0 && chars[i - 1].is_ascii_digit() {
            i = end;
            continue;
        }
        let part = |at: usize| -> Option<(u32, usize)> {
            let sep = *chars.get(at)?;
            let at = if matches!(sep, '-' | '/' | '年') { skip_spaces(&chars, at + 1) } else { return None };
            let (n, end) = digits_at(&chars, at).filter(|(_, end)| end - at <= 2)?;
            Some((n, skip_spaces(&chars, end)))
        };
        if let Some((month, after_month)) = part(skip_spaces(&chars, end)) {
            let day = match chars.get(after_month) {
                Some('月') => digits_at(&chars, skip_spaces(&chars, after_month + 1)).filter(|(_, e)| chars.get(*e).is_some_and(|c| matches!(c, '日' | '号'))),
                Some('-' | '/') => digits_at(&chars, after_month + 1).filter(|(_, e)| !chars.get(*e).is_some_and(char::is_ascii_digit)),
                _ => None,
            };
            if let Some((day, _)) = day {
                push((year as i32, month, day));
            }
        }
        i = end;
    }
    // Words: a month's name with the day before or after it, and the year after both.
    // Words parted by blanks, commas and full stops alone: "2025/1/9; May 2025" is no 9 May.
    let lower = text.to_lowercase();
    let mut words: Vec<&str> = Vec::new();
    let mut start = None;
    for (at, c) in lower.char_indices().chain([(lower.len(), ';')]) {
        match (c.is_ascii_alphanumeric(), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                words.push(&lower[from..at]);
                start = None;
            }
            _ => {}
        }
        if !(c.is_ascii_alphanumeric() || c.is_whitespace() || matches!(c, ',' | '.')) && words.last().is_some_and(|w| !w.is_empty()) {
            words.push("");
        }
    }
    let day_of = |w: &str| -> Option<u32> {
        let figures = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &w[figures.len()..];
        let day: u32 = figures.parse().ok()?;
        ((1..=31).contains(&day) && matches!(suffix, "" | "st" | "nd" | "rd" | "th")).then_some(day)
    };
    let year_of = |w: &str| w.parse::<i32>().ok().filter(|y| (1900..2200).contains(y) && w.len() == 4);
    for (k, word) in words.iter().enumerate() {
        let Some(month) = month_of(word) else { continue };
        let at = |j: usize| words.get(j).copied();
        if let (Some(day), Some(year)) = (at(k + 1).and_then(day_of), at(k + 2).and_then(year_of)) {
            push((year, month, day));
        } else if let (Some(day), Some(year)) = (k.checked_sub(1).and_then(at).and_then(day_of), at(k + 1).and_then(year_of)) {
            push((year, month, day));
        }
    }
    dates
}

/// The month an English word names (`december`, `dec`), lowercased.
fn month_of(word: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
    MONTHS.iter().position(|m| *m == word || (word.len() == 3 && m.starts_with(word)) || (word == "sept" && *m == "september")).map(|i| i as u32 + 1)
}

/// Words that reckon a time from another: the one time a request states is then not
/// the time its call wants.
const OFFSET_WORDS: &[&str] = &["before", "after", "later", "earlier", "early", "ahead", "prior", "ago"];
const OFFSET_TERMS: &[&str] = &["提前", "之前", "以前", "之后", "以后", "分钟后", "小时后", "分钟前", "小时前", "晚点", "早点"];

/// `value` (a date and time, a date or a time) without its time of day where `text` states
/// that time ("晚上八点" for `20:00`), and without its `YYYY-MM-DD` date where `text`
/// states that date in other words ("December 20, 2025"): what is left of it must still be
/// written in `text` for the value to be the conversation's.
pub fn without_stated_time(value: &str, text: &str) -> String {
    let (head, clock) = value.trim().rsplit_once(' ').unwrap_or(("", value.trim()));
    let fields: Vec<u32> = clock.split(':').map_while(|f| f.parse().ok()).collect();
    let rest = match fields[..] {
        [h, m, ..] if clock.contains(':') && times_in(text).contains(&(h, m)) => head,
        _ => value.trim(),
    };
    let date = |y: &str, m: &str, d: &str| Some((y.parse().ok()?, m.parse().ok()?, d.parse().ok()?));
    let stated = match (rest.get(0..4), rest.get(4..5), rest.get(5..7), rest.get(7..8), rest.get(8..10)) {
        (Some(y), Some("-"), Some(m), Some("-"), Some(d)) => date(y, m, d).is_some_and(|ymd| dates_in(text).contains(&ymd)),
        _ => false,
    };
    if stated { rest[10..].trim().to_string() } else { rest.to_string() }
}

/// The years `text` writes: four digits from 1900 to 2199 standing alone (not part of a
/// longer number), in order, each once.
fn years_in(text: &str) -> Vec<u32> {
    let mut years = Vec::new();
    for run in digit_runs(text) {
        if let (4, Ok(year)) = (run.len(), run.parse::<u32>()) {
            if (1900..2200).contains(&year) && !years.contains(&year) {
                years.push(year);
            }
        }
    }
    years
}

fn digit_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_digit()).filter(|r| !r.is_empty())
}

/// `value` with its one four-digit run replaced by `year`, where it has exactly one and
/// that is no year of ours (`1026-10` -> `2026-10`). A year of ours that is not the stated
/// one stays: "next March" after "born in 2025" is 2026.
fn with_year(value: &str, year: u32) -> String {
    let runs: Vec<&str> = digit_runs(value).filter(|r| r.len() == 4).collect();
    match runs[..] {
        [run] if run.parse::<u32>().is_ok_and(|y| !(1900..2200).contains(&y)) => value.replacen(run, &year.to_string(), 1),
        _ => value.to_string(),
    }
}

/// A `YYYY-MM-DD...` value whose day is past its month's end, on the month's last day.
fn within_month(value: &str) -> String {
    let (Some(y), Some(m), Some(d)) = (value.get(0..4), value.get(5..7), value.get(8..10)) else { return value.to_string() };
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i32>(), m.parse::<u32>(), d.parse::<u32>()) else { return value.to_string() };
    if !(1..=12).contains(&m) || !(29..=31).contains(&d) || chrono::NaiveDate::from_ymd_opt(y, m, d).is_some() {
        return value.to_string();
    }
    let last = (28..d).rev().find(|&day| chrono::NaiveDate::from_ymd_opt(y, m, day).is_some()).unwrap_or(28);
    format!("{}{last:02}{}", &value[..8], &value[10..])
}

/// A value ending in a morning `HH:MM` (or `HH:MM:SS`) that the request states only after
/// noon, twelve hours later (`2025-05-17 08:00` for "晚上八点" -> `2025-05-17 20:00`).
fn after_noon(value: &str, stated: &[(u32, u32)]) -> String {
    let (head, clock) = date_and_clock(value);
    let mut fields = clock.split(':');
    let (Some(h), Some(m)) = (fields.next(), fields.next()) else { return value.to_string() };
    let rest: Vec<&str> = fields.collect();
    let (Ok(hour), Ok(minute)) = (h.parse::<u32>(), m.parse::<u32>()) else { return value.to_string() };
    if hour >= 12 || !stated.contains(&(hour + 12, minute)) || stated.contains(&(hour, minute)) {
        return value.to_string();
    }
    let mut clock = format!("{:02}:{m}", hour + 12);
    for field in rest {
        clock.push(':');
        clock.push_str(field);
    }
    format!("{head}{clock}")
}

/// `value` cut before its time of day: the date with its blank (`"2025-05-17 "`, or `""`
/// for a bare time) and the time (`"08:00"`).
fn date_and_clock(value: &str) -> (&str, &str) {
    match value.rfind(' ') {
        Some(at) => value.split_at(at + 1),
        None => ("", value),
    }
}

/// A value ending in a time of day that is not `time`, the one time the request states,
/// with `time` in its place (`2025-12-20 17:15` for "at 6:15 am" -> `2025-12-20 06:15`).
fn at_time(value: &str, (hour, minute): (u32, u32)) -> String {
    let (head, clock) = date_and_clock(value);
    let fields: Vec<u32> = clock.split(':').map_while(|f| f.parse().ok()).collect();
    match fields[..] {
        [h, m] if (h, m) != (hour, minute) => format!("{head}{hour:02}:{minute:02}"),
        [h, m, s] if (h, m) != (hour, minute) => format!("{head}{hour:02}:{minute:02}:{s:02}"),
        _ => value.to_string(),
    }
}

/// Number arguments counted in minutes (the parameter's name ends in `minutes`, or its
/// description says "in minutes") that hold the hours the request states as a length of
/// time ("for 4 hours", "停两个半小时": `2` -> `150`), set to those hours in minutes.
fn minutes_of_hours(call: &mut ToolCall, tool: &ToolSpec, question: &str) -> Vec<String> {
    let hours = hours_in(question);
    let mut changed = Vec::new();
    for (param, value) in call.args.iter_mut() {
        let described = tool.param(param).and_then(|p| p.description.as_deref()).is_some_and(|d| d.to_lowercase().contains("in minutes"));
        if !(param.ends_with("minutes") || described) {
            continue;
        }
        let Some(x) = value.as_f64() else { continue };
        let matching: Vec<f64> = hours.iter().copied().filter(|&h| x == h || x == h.floor()).collect();
        if let [h] = matching[..] {
            let minutes = (h * 60.0).round() as i64;
            changed.push(format!("{}: {param}: {value} -> {minutes}", call.name));
            *value = Value::from(minutes);
        }
    }
    changed
}

/// The numbers `haystack` (already [`normalized`](crate::text::normalized)) writes
/// ([`numbers_written`](crate::text::numbers_written)), and the minutes of the lengths of
/// time it states in hours: "停三个小时" writes 180 (minutes) as much as 3, so a call that
/// counts the stay in minutes has its value from the request.
pub fn numbers_stated(haystack: &str) -> Vec<f64> {
    let mut numbers = crate::text::numbers_written(haystack);
    numbers.extend(hours_in(haystack).into_iter().map(|h| (h * 60.0).round()));
    numbers
}

/// The lengths of time `text` states in hours: "4 hours", "1.5 hrs", "an hour and a half",
/// "三个小时", "两个半小时", "2小时"; `text` may be [`normalized`](crate::text::normalized).
fn hours_in(text: &str) -> Vec<f64> {
    let lower = text.to_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    let mut hours = Vec::new();
    let squeezed = crate::text::normalized(&lower);
    if ["anhourandahalf", "oneandahalfhours", "一个半小时"].iter().any(|w| squeezed.contains(w)) {
        hours.push(1.5);
    }
    let mut i = 0;
    while i < chars.len() {
        let Some((n, mut end)) = number_at(&chars, i) else {
            i += 1;
            continue;
        };
        if i > 0 && (chars[i - 1].is_ascii_digit() || chars[i - 1] == '.') {
            i = end;
            continue;
        }
        let mut n = f64::from(n);
        // A decimal part: `1.5 hours`.
        if chars.get(end) == Some(&'.') {
            if let Some((frac, frac_end)) = digits_at(&chars, end + 1) {
                n += f64::from(frac) / 10f64.powi((frac_end - end - 1) as i32);
                end = frac_end;
            }
        }
        let rest: String = chars[end..chars.len().min(end + 8)].iter().collect();
        let rest = rest.trim_start();
        let found = if rest.starts_with("个半小时") {
            Some(n + 0.5)
        } else if rest.starts_with("个小时") || rest.starts_with("小时") || ["hours", "hour", "hrs", "hr", "h "].iter().any(|w| rest.starts_with(w)) {
            Some(n)
        } else {
            None
        };
        if let Some(h) = found.filter(|&h| h > 0.0 && !hours.contains(&h)) {
            hours.push(h);
        }
        i = end;
    }
    hours
}

/// The times of day `text` states, on the 24-hour clock: `18:30`, `6:30 pm`, `6pm`,
/// `7 a.m.`, and in Chinese `晚上八点`, `下午两点半`, `上午9点15分`, `晚上 7 点`. An hour
/// without a half of the day (`8点`, `8:00` is taken as written) is what it says.
fn times_in(text: &str) -> Vec<(u32, u32)> {
    let lower = text.to_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    let mut times = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let Some((hour, after)) = number_at(&chars, i) else {
            i += 1;
            continue;
        };
        if i > 0 && (chars[i - 1].is_ascii_digit() || chars[i - 1] == ':') {
            i = after;
            continue;
        }
        // English: `H:MM`, then maybe am / pm.
        let (mut minute, mut j) = (0, after);
        let mut clock = false;
        if chars.get(j) == Some(&':') {
            if let Some((m, end)) = digits_at(&chars, j + 1).filter(|(_, end)| end - (j + 1) == 2) {
                (minute, j, clock) = (m, end, true);
            }
        }
        let k = skip_spaces(&chars, j);
        let half = half_of_day_after(&chars, k).or_else(|| clock.then(|| half_of_day_words(&chars, k)).flatten());
        if let Some((pm, end)) = half {
            if (1..=12).contains(&hour) && minute < 60 {
                times.push((hour % 12 + if pm { 12 } else { 0 }, minute));
            }
            i = end;
            continue;
        }
        if clock {
            if hour < 24 && minute < 60 {
                times.push((hour, minute));
            }
            i = j;
            continue;
        }
        // Chinese: `[上午|下午|晚上...] H 点 [半|一刻|三刻|M 分]`. An hour in Chinese numerals
        // needs a half of the day or minutes with it: `一点` alone is "a little".
        if chars.get(k) == Some(&'点') {
            let (minute, end) = chinese_minutes(&chars, k + 1);
            let before = chinese_half_before(&chars, i);
            let figures = chars[i].is_ascii_digit();
            if hour <= 24 && minute < 60 && (figures || before.is_some() || end > k + 1 || chars.get(k + 1) == Some(&'钟')) {
                let hour = match before {
                    Some(true) if hour < 12 => hour + 12,
                    Some(false) if hour == 12 => 0,
                    _ => hour,
                };
                times.push((hour, minute));
            }
            i = end;
            continue;
        }
        i = after;
    }
    times
}

fn skip_spaces(chars: &[char], mut i: usize) -> usize {
    while chars.get(i) == Some(&' ') {
        i += 1;
    }
    i
}

/// `am` / `a.m.` (false) or `pm` / `p.m.` (true) at `i`, not followed by a letter, and
/// where it ends.
fn half_of_day_after(chars: &[char], i: usize) -> Option<(bool, usize)> {
    let pm = match chars.get(i)? {
        'a' => false,
        'p' => true,
        _ => return None,
    };
    let mut j = i + 1;
    if chars.get(j) == Some(&'.') {
        j += 1;
    }
    if chars.get(j) != Some(&'m') {
        return None;
    }
    j += 1;
    if chars.get(j) == Some(&'.') {
        j += 1;
    }
    (!chars.get(j).is_some_and(|c| c.is_alphanumeric() && c.is_ascii())).then_some((pm, j))
}

/// A half of the day written out after an English time at `i`: "7:40 this evening",
/// "9:30 in the morning", "11:00 tonight"; and where it ends.
fn half_of_day_words(chars: &[char], i: usize) -> Option<(bool, usize)> {
    let rest: String = chars[i.min(chars.len())..].iter().take(20).collect();
    const PHRASES: [(&str, bool); 8] = [
        ("this evening", true),
        ("in the evening", true),
        ("tonight", true),
        ("this afternoon", true),
        ("in the afternoon", true),
        ("at night", true),
        ("this morning", false),
        ("in the morning", false),
    ];
    PHRASES.iter().find(|(phrase, _)| rest.starts_with(phrase)).map(|&(phrase, pm)| (pm, i + phrase.chars().count()))
}

/// Whether the Chinese words just before `i` (spaces skipped) put the hour after noon
/// (`下午`, `晚上`, `傍晚`, `中午`, `今晚`...: true) or before it (`上午`, `早上`, `凌晨`...:
/// false).
fn chinese_half_before(chars: &[char], i: usize) -> Option<bool> {
    let mut end = i;
    while end > 0 && chars[end - 1] == ' ' {
        end -= 1;
    }
    let before: String = chars[end.saturating_sub(2)..end].iter().collect();
    const AFTER_NOON: [&str; 7] = ["下午", "晚上", "傍晚", "中午", "夜里", "今晚", "明晚"];
    const BEFORE_NOON: [&str; 6] = ["上午", "早上", "早晨", "凌晨", "清晨", "明早"];
    if AFTER_NOON.iter().any(|w| before.ends_with(w)) || before.ends_with('晚') {
        Some(true)
    } else if BEFORE_NOON.iter().any(|w| before.ends_with(w)) || before.ends_with('早') {
        Some(false)
    } else {
        None
    }
}

/// The minutes after `点` at `i` (`半` 30, `一刻` 15, `三刻` 45, `15分` / `十五分`, or
/// two figures right after it, `7点15`), and where they end; 0 where none follow.
fn chinese_minutes(chars: &[char], i: usize) -> (u32, usize) {
    let i = skip_spaces(chars, i);
    match chars.get(i) {
        Some('半') => return (30, i + 1),
        Some('一') if chars.get(i + 1) == Some(&'刻') => return (15, i + 2),
        Some('三') if chars.get(i + 1) == Some(&'刻') => return (45, i + 2),
        _ => {}
    }
    match number_at(chars, i) {
        Some((m, end)) if m < 60 => {
            let unit = skip_spaces(chars, end);
            if chars.get(unit) == Some(&'分') {
                (m, unit + 1)
            } else if end - i == 2 && !chars.get(i.wrapping_sub(1)).is_some_and(|&c| c == ' ') {
                // `7点15`: two digits right after the hour; `7 点 4 个人` is a count.
                (m, end)
            } else {
                (0, i)
            }
        }
        _ => (0, i),
    }
}

/// ASCII digits at `i` and where they end.
fn digits_at(chars: &[char], i: usize) -> Option<(u32, usize)> {
    let end = (i..chars.len()).find(|&j| !chars[j].is_ascii_digit()).unwrap_or(chars.len());
    if end == i || end - i > 4 {
        return None;
    }
    chars[i..end].iter().collect::<String>().parse().ok().map(|n| (n, end))
}

/// A number at `i`, in ASCII digits or Chinese numerals up to 59 (`八`, `两`, `十二`,
/// `二十五`), and where it ends.
fn number_at(chars: &[char], i: usize) -> Option<(u32, usize)> {
    if let Some(found) = digits_at(chars, i) {
        return Some(found);
    }
    let digit = |c: char| "零一二三四五六七八九".chars().position(|d| d == c).map(|d| d as u32).or((c == '两').then_some(2));
    let first = *chars.get(i)?;
    if first == '十' {
        return match chars.get(i + 1).copied().and_then(digit) {
            Some(units) if units > 0 => Some((10 + units, i + 2)),
            _ => Some((10, i + 1)),
        };
    }
    let tens = digit(first)?;
    if chars.get(i + 1) == Some(&'十') {
        return match chars.get(i + 2).copied().and_then(digit) {
            Some(units) if units > 0 => Some((tens * 10 + units, i + 3)),
            _ => Some((tens * 10, i + 2)),
        };
    }
    Some((tens, i + 1))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, params: Value) -> ToolSpec {
        ToolSpec::parse_all(&[json!({"name": name, "description": "", "parameters": {"type": "object", "properties": params}})]).unwrap().remove(0)
    }

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn stated_times_are_read_on_the_24_hour_clock() {
        assert_eq!(times_in("from 6:30 pm for 4 hours"), [(18, 30)]);
        assert_eq!(times_in("at 7 a.m. and 11:45, then 9PM"), [(7, 0), (11, 45), (21, 0)]);
        assert_eq!(times_in("2025年5月17日晚上八点我要到静安寺，停三个小时"), [(20, 0)]);
        assert_eq!(times_in("下午两点半开始，停两个半小时"), [(14, 30)]);
        assert_eq!(times_in("订 2025-05-20 晚上 7 点 4 个人的位子"), [(19, 0)]);
        assert_eq!(times_in("上午9点15分和中午12点，凌晨十二点"), [(9, 15), (12, 0), (0, 0)]);
        assert_eq!(times_in("8点见，12 pm 吃饭，7点15出发"), [(8, 0), (12, 0), (7, 15)]);
        assert_eq!(times_in("out since 7:40 this evening, back by 9:15 in the morning"), [(19, 40), (9, 15)]);
        assert_eq!(times_in("八点钟，三点半"), [(8, 0), (3, 30)]);
        // "The same time", "a little cheaper": no hour.
        assert!(times_in("那同一时间换成伦敦是几点？便宜一点的").is_empty());
        // Not times: a date, a price, an amount of hours, a version.
        assert!(times_in("on 2025-06-21, $84.50, 3 hours, v3.2, 两小时").is_empty(), "{:?}", times_in("on 2025-06-21, $84.50, 3 hours, v3.2, 两小时"));
    }

    #[test]
    fn a_stated_year_a_real_day_and_an_evening_hour_are_put_back() {
        let tools = [
            tool("bank.request_statement", json!({"month": {"type": "string", "description": "The month, formatted YYYY-MM."}})),
            tool("fitness.step_count", json!({"start_date": {"type": "string", "description": "First day, YYYY-MM-DD."}, "end_date": {"type": "string", "description": "Last day, YYYY-MM-DD."}})),
            tool("parking.find", json!({"arrive_at": {"type": "string", "description": "Arrival, YYYY-MM-DD HH:MM (24-hour)."}, "note": {"type": "string", "description": "Free text."}})),
        ];
        let mut calls = vec![call("bank.request_statement", json!({"month": "1026-10"}))];
        let changed = put_right(&mut calls, &tools, "Email me my savings account statement for October 2026 as a CSV.");
        assert_eq!(changed, ["bank.request_statement: month: 1026-10 -> 2026-10"]);
        assert_eq!(calls[0].args["month"], "2026-10");

        let mut calls = vec![call("fitness.step_count", json!({"start_date": "2025-11-01", "end_date": "2025-11-31"}))];
        put_right(&mut calls, &tools, "How many steps did I walk in November 2025?");
        assert_eq!(calls[0].args["end_date"], "2025-11-30");
        let mut calls = vec![call("fitness.step_count", json!({"start_date": "2024-02-01", "end_date": "2024-02-31"}))];
        put_right(&mut calls, &tools, "Steps in February 2024?");
        assert_eq!(calls[0].args["end_date"], "2024-02-29");

        let mut calls = vec![call("parking.find", json!({"arrive_at": "2025-05-17 08:00", "note": "08:00 1026"}))];
        let changed = put_right(&mut calls, &tools, "2025年5月17日晚上八点我要到静安寺，停三个小时");
        assert_eq!(changed, ["parking.find: arrive_at: 2025-05-17 08:00 -> 2025-05-17 20:00"]);
        assert_eq!(calls[0].args["note"], "08:00 1026", "a parameter without a date format is left alone");
    }

    #[test]
    fn the_one_stated_time_and_hours_in_minutes_are_put_back() {
        let tools = [
            tool("ride.request", json!({"schedule_at": {"type": "string", "description": "Pickup time, YYYY-MM-DD HH:MM."}})),
            tool("parking.reserve", json!({"start": {"type": "string", "description": "YYYY-MM-DD HH:MM."}, "duration_minutes": {"type": "integer", "description": "How long."}})),
            tool("calendar.block", json!({"start": {"type": "string", "description": "HH:MM."}, "end": {"type": "string", "description": "HH:MM."}})),
        ];
        let mut calls = vec![call("ride.request", json!({"schedule_at": "2025-12-20 17:15"}))];
        put_right(&mut calls, &tools, "Pick us up at 6:15 am on December 20, 2025.");
        assert_eq!(calls[0].args["schedule_at"], "2025-12-20 06:15");

        let mut calls = vec![call("parking.reserve", json!({"start": "2025-08-02 14:30", "duration_minutes": 2}))];
        let changed = put_right(&mut calls, &tools, "2025年8月2日下午两点半开始，停两个半小时");
        assert_eq!(changed, ["parking.reserve: duration_minutes: 2 -> 150"]);
        let mut calls = vec![call("parking.reserve", json!({"start": "2025-06-21 16:30", "duration_minutes": 4}))];
        put_right(&mut calls, &tools, "near Fenway Park on June 21, 2025 from 6:30 pm for 4 hours");
        assert_eq!((&calls[0].args["start"], &calls[0].args["duration_minutes"]), (&json!("2025-06-21 18:30"), &json!(240)));
        assert_eq!(hours_in("for 1.5 hrs, then an hour and a half; 三个小时、2小时"), [1.5, 3.0, 2.0]);

        // The one stated date and time, into the one optional date-and-time parameter left out.
        let ride = || vec![call("ride.request", json!({"pickup": "350 Fifth Avenue"}))];
        let mut calls = ride();
        let changed = put_right(&mut calls, &tools, "Schedule a ride from 350 Fifth Avenue, picking us up at 6:15 am on December 20, 2025.");
        assert_eq!(changed, ["ride.request: schedule_at: left out -> 2025-12-20 06:15"]);
        for question in [
            "Schedule a ride from 350 Fifth Avenue for 30 minutes before my 6:15 am flight on December 20, 2025.",
            "Book a ride from 350 Fifth Avenue at 6:15 am; I land on December 20, 2025 or December 21, 2025.",
            "Book a ride from 350 Fifth Avenue on December 20, 2025.",
        ] {
            let mut calls = ride();
            assert!(put_right(&mut calls, &tools, question).is_empty(), "{question}");
        }
        assert_eq!(
            dates_in("Dec. 20th 2025, December 5, 2026, 3 March 2024, 2025年5月17日晚上八点, 2025-08-02 and 2025/1/9; May 2025, 2025-13-01"),
            [(2025, 5, 17), (2025, 8, 2), (2025, 1, 9), (2025, 12, 20), (2026, 12, 5), (2024, 3, 3)]
        );
        assert_eq!(without_stated_time("2025-12-20 06:15", "at 6:15 am on December 20, 2025"), "");
        assert_eq!(without_stated_time("2025-12-21 06:15", "at 6:15 am on December 20, 2025"), "2025-12-21");
        let stated = numbers_stated(&crate::text::normalized("停三个小时，或者 an hour and a half"));
        assert!(stated.contains(&180.0) && stated.contains(&90.0) && stated.contains(&3.0), "{stated:?}");

        // A time reckoned from the stated one.
        let mut calls = vec![call("ride.request", json!({"schedule_at": "2025-12-20 14:30"}))];
        assert!(put_right(&mut calls, &tools, "Pick me up 30 minutes before my 3 pm meeting on 2025-12-20.").is_empty());
        let mut calls = vec![call("ride.request", json!({"schedule_at": "2025-12-20 14:30"}))];
        assert!(put_right(&mut calls, &tools, "2025年12月20日下午3点开会，提前半小时来接我").is_empty());
        // Two times in one call: which is the stated one is not for us to say.
        let mut calls = vec![call("calendar.block", json!({"start": "09:00", "end": "10:00"}))];
        assert!(put_right(&mut calls, &tools, "Block my calendar from 9:30 am for an hour.").is_empty());
        // Minutes already right, or hours nobody stated.
        let mut calls = vec![call("parking.reserve", json!({"start": "2025-06-21 18:30", "duration_minutes": 240}))];
        assert!(put_right(&mut calls, &tools, "on 2025-06-21 from 6:30 pm for 4 hours").is_empty());
        let mut calls = vec![call("parking.reserve", json!({"start": "2025-06-21 18:30", "duration_minutes": 3}))];
        assert!(put_right(&mut calls, &tools, "on 2025-06-21 from 6:30 pm for 3 minutes").is_empty());
    }

    #[test]
    fn a_time_stated_in_other_words_leaves_the_rest_to_be_written() {
        assert_eq!(without_stated_time("2026-12-05 19:40", "out since 7:40 this evening (December 5, 2026)"), "");
        assert_eq!(without_stated_time("2026-12-06 19:40", "out since 7:40 this evening (December 5, 2026)"), "2026-12-06");
        assert_eq!(without_stated_time("20:00", "晚上八点到"), "");
        assert_eq!(without_stated_time("2026-12-05 18:40", "out since 7:40 this evening"), "2026-12-05 18:40");
        assert_eq!(without_stated_time("2026-12-05", "7:40 this evening"), "2026-12-05");
    }

    #[test]
    fn values_the_request_allows_are_left_alone() {
        let tools = [tool("parking.find", json!({"arrive_at": {"type": "string", "description": "Arrival, YYYY-MM-DD HH:MM."}}))];
        for (value, question) in [
            // Two years written: which one the value wants is not for us to say.
            ("1025-01-05 09:00", "Compare 2024 with 2025: park on January 5 at 9 am."),
            // No year written at all.
            ("2025-01-05 09:00", "Park tomorrow at 9 am."),
            // Another year than the one written: "next January" is the year after.
            ("2026-01-05 09:00", "Since 2025 I park on the 5th; book next January 5 at 9 am."),
            // The morning is stated too, or is what was stated.
            ("2025-01-05 08:00", "Park on 2025-01-05 at 8 am, or at 8 pm."),
            ("2025-01-05 08:00", "2025年1月5日早上八点停车"),
            // A real date, an afternoon hour already right.
            ("2025-11-30 18:30", "On 2025-11-30 from 6:30 pm."),
        ] {
            let mut calls = vec![call("parking.find", json!({"arrive_at": value}))];
            assert!(put_right(&mut calls, &tools, question).is_empty(), "{value} / {question}");
            assert_eq!(calls[0].args["arrive_at"], value);
        }
    }
}
