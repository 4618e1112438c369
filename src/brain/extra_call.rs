//! The second call a profile's `more_calls_bias` made the model write, kept only where it
//! does work the first does not.
//!
//! Pushed past its own preference to end the calls after the first one
//! ([`super::constrain::MoreCalls`]), the 0.5B writes the second task where the request
//! has one ("walking and cycling directions", "its current quote"), and otherwise the first
//! call again with a value changed that nobody asked for (`celsius` where `fahrenheit` was
//! asked, `gcd(126, 84)` after `gcd(84, 126)`, `include_hourly: true`, `activity: "active"`
//! for "moderately active"), or another tool with a word of the request as its value
//! (`search_products(query: "price")` for "how has the price changed"). So the added call
//! stays only where the request asks for it ([`new_work`]); otherwise it goes, with every
//! call after it (written only because it was).

use serde_json::Value;

use super::next_step::collect_leaves;
use super::stated_times;
use crate::protocol::ToolCall;
use crate::text::{is_cjk, normalized, numbers_written};

/// How close (in logits) the model's own choice between a second call and the end of the
/// calls may come to a second call for the added call to count as one it wanted. On the dev
/// split (prompt_json), where ending won by less than 3, two calls or more were asked in 6
/// of 10 decisions; where it won by more, in 2 of 109. Under builtin one decision came that
/// close (a follow-up asking one call, whose added call [`super::made_up`] judges).
pub const NEAR_MARGIN: f32 = 3.0;

/// Drops the added call (the second) and those after it unless the model nearly wrote it
/// on its own (`near`: its margin within [`NEAR_MARGIN`]) or it does new work for
/// `question` ([`new_work`]), or whatever it does when the first call was made up (a
/// request no tool does, see [`super::made_up`]: the calls after it only add to that); the
/// dropped calls, one line each.
pub fn check(calls: &mut Vec<ToolCall>, question: &str, first_made_up: bool, near: bool) -> Vec<String> {
    if calls.len() < 2 || (!first_made_up && (near || new_work(&calls[1], &calls[..1], question))) {
        return Vec::new();
    }
    calls.drain(1..).map(|c| format!("{}({})", c.name, Value::Object(c.args.clone()))).collect()
}

/// Whether `call` does something `question` asks for that the `earlier` calls do not:
/// - the same tool as an earlier call with another value for one of its parameters, both
///   values written in the question side by side ("walking and cycling", "2024-09-01 和
///   2024-09-02", "in Seoul and in Busan"), the new one held by no earlier call (two
///   numbers swapped are no new work);
/// - in a question of two parts or more ([`parts`]), another tool whose name has a word
///   (three letters or more) the question writes and no earlier tool's name has ("..., and
///   its current quote": `stocks.quote`), or that takes a value of four characters or more
///   that the question writes and no earlier call holds ("北京现在天气怎么样？PM2.5 是多少？":
///   `pollutant: "pm2.5"`), or figures the question states and no earlier call holds
///   ([`holds_stated_figures`]: two numbers or more, or a date in any notation).
pub fn new_work(call: &ToolCall, earlier: &[ToolCall], question: &str) -> bool {
    let haystack = normalized(question);
    let held = held_values(earlier);
    if side_by_side(call, earlier, &held, &haystack) {
        return true;
    }
    // Another tool is another task: a question of one part has none (`time.now` for "is
    // flight UA857 on time today?", `calendar.list_events` for "cancel event evt_2208").
    if earlier.iter().any(|e| e.name == call.name) || parts(question) < 2 {
        return false;
    }
    names_another_tool(call, earlier, question) || holds_new_value(call, &held, &haystack, false) || holds_stated_figures(call, &held, question)
}

/// Whether `call` holds figures `question` states that no value in `held` is: two numbers
/// or more (coordinates "31.2304, 121.4737"; one number alone is too often a count or a
/// figure of the first task's), or a date the question states in any notation (the date
/// steps rewrite "January 1, 2024" to the described `01-01-2024` before this is asked).
/// Calibrated, the 0.5B sometimes does the second task first, and the added call for the
/// first task then stood only where its strings were written as the question writes them.
fn holds_stated_figures(call: &ToolCall, held: &[&Value], question: &str) -> bool {
    let mut leaves = Vec::new();
    for value in call.args.values() {
        collect_leaves(value, &mut leaves);
    }
    let unheld = |leaf: &&&Value| !held.iter().any(|h| same(leaf, h));
    let figures = numbers_written(&normalized(question));
    let mut numbers: Vec<f64> = Vec::new();
    for n in leaves.iter().filter(unheld).filter_map(|leaf| leaf.as_f64()) {
        if among(n, &figures) && !numbers.contains(&n) {
            numbers.push(n);
        }
    }
    if numbers.len() >= 2 {
        return true;
    }
    let dates = stated_times::dates_in(question);
    let held_dates: Vec<(i32, u32, u32)> = held.iter().filter_map(|h| h.as_str()).flat_map(|s| dates.iter().copied().filter(move |&d| holds_date(s, d))).collect();
    leaves.iter().filter_map(|leaf| leaf.as_str()).any(|s| dates.iter().any(|&d| holds_date(s, d) && !held_dates.contains(&d)))
}

/// Whether `n` is one of `figures` (numbers a text writes), rounding aside.
fn among(n: f64, figures: &[f64]) -> bool {
    figures.iter().any(|&f| (f - n).abs() <= 1e-9 * n.abs().max(1.0))
}

/// Whether `value`'s figures are `date`'s year, month and day and nothing else, in any
/// order (`01-01-2024`, `2024/1/1`, `1.1.2024`).
fn holds_date(value: &str, (year, month, day): (i32, u32, u32)) -> bool {
    let mut runs: Vec<i64> = value.split(|c: char| !c.is_ascii_digit()).filter(|r| !r.is_empty() && r.len() <= 4).filter_map(|r| r.parse().ok()).collect();
    let mut wanted = vec![i64::from(year), i64::from(month), i64::from(day)];
    runs.sort_unstable();
    wanted.sort_unstable();
    runs == wanted
}

/// Drops the calls after the first that the model wrote for tools the request does not ask
/// for (profile field `drop_unasked_tools`); the dropped calls, one line each.
///
/// Offered three tools for "What are the best museums to visit in Vienna?", the 0.5B called
/// all three (hotels in Vienna from 2023-01-01, restaurants nearby); asked for Python courses
/// and library books, it searched podcasts for "Python" too. Its own margin for going on
/// after the first call says nothing there (+8.4 logits, as sure as in right two-call
/// decisions). So a call of a tool no earlier call used stays only where it does something
/// the request asks for: its tool's name has a word the request writes that no earlier
/// tool's has ("..., and Python books in the library": `library.search_books`), or it holds
/// a value the request writes (a string of four characters or more, or a number) that no
/// earlier call holds. Only English requests are judged: a Chinese one names its tools in
/// other words (查酒店 ... 租一辆电动车: `car_rental.search`). Calls of a tool an earlier call
/// used are [`check`]'s and the values checks' to judge.
pub fn unasked(calls: &mut Vec<ToolCall>, question: &str) -> Vec<String> {
    if question.chars().any(is_cjk) {
        return Vec::new();
    }
    let haystack = normalized(question);
    let mut dropped = Vec::new();
    let mut at = 1;
    while at < calls.len() {
        let (earlier, call) = (&calls[..at], &calls[at]);
        let asked = earlier.iter().any(|e| e.name == call.name) || {
            let held = held_values(earlier);
            names_another_tool(call, earlier, question) || holds_new_value(call, &held, &haystack, true)
        };
        if asked {
            at += 1;
        } else {
            let call = calls.remove(at);
            dropped.push(format!("{}({})", call.name, Value::Object(call.args)));
        }
    }
    dropped
}

/// Whether `call` does something `question` (an English request) asks for that the
/// `earlier` calls do not, as [`unasked`] judges a call: another call of an earlier call's
/// tool, a tool whose name has a word the request writes that no earlier tool's name has,
/// or a value the request writes (a string of four characters or more, or a number) that
/// no earlier call holds.
///
/// A tool named for its doer counts as named by the verb ("read that file": `file_reader`;
/// "convert": `format_converter`; "calculate": `calculator`): the seeds' search-then-read
/// request names its second step only so.
pub fn asked_for(call: &ToolCall, earlier: &[ToolCall], question: &str) -> bool {
    earlier.iter().any(|e| e.name == call.name)
        || names_another_tool(call, earlier, question)
        || names_doer(call, earlier, question)
        || holds_new_value(call, &held_values(earlier), &normalized(question), true)
}

/// Whether the name of `call`'s tool has a word for a doer (`reader`, `converter`,
/// `analyzer`, `calculator`) whose verb the question writes and no earlier tool's name has.
fn names_doer(call: &ToolCall, earlier: &[ToolCall], question: &str) -> bool {
    let verbs: Vec<String> = question.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 3).map(str::to_ascii_lowercase).collect();
    let earlier_words: Vec<String> = earlier.iter().flat_map(|e| name_words(&e.name)).collect();
    let doer_of = |word: &str, verb: &str| {
        let stem = verb.strip_suffix('e').unwrap_or(verb);
        [format!("{verb}er"), format!("{verb}r"), format!("{verb}or"), format!("{stem}er"), format!("{stem}or")].iter().any(|d| d == word)
    };
    name_words(&call.name).any(|w| !earlier_words.contains(&w) && verbs.iter().any(|v| doer_of(&w, v)))
}

/// Every leaf value of the `calls`' arguments.
fn held_values(calls: &[ToolCall]) -> Vec<&Value> {
    let mut held = Vec::new();
    for made in calls {
        for value in made.args.values() {
            collect_leaves(value, &mut held);
        }
    }
    held
}

/// Whether `call` gives a parameter another value than an `earlier` call of its tool did,
/// the two written side by side in `haystack` ([`coordinated`]), the new one `held` by none.
fn side_by_side(call: &ToolCall, earlier: &[ToolCall], held: &[&Value], haystack: &str) -> bool {
    let unheld = |value: &Value| !held.iter().any(|h| same(value, h));
    earlier.iter().filter(|e| e.name == call.name).any(|e| {
        call.args.iter().any(|(param, value)| e.args.get(param).is_some_and(|before| unheld(value) && coordinated(before, value, haystack)))
    })
}

/// Whether `call` holds a value that `haystack` (a [`normalized`] request) writes and no
/// value in `held` is: a string of four characters or more, or (`numbers`) a number.
fn holds_new_value(call: &ToolCall, held: &[&Value], haystack: &str, numbers: bool) -> bool {
    let mut leaves = Vec::new();
    for value in call.args.values() {
        collect_leaves(value, &mut leaves);
    }
    let figures = if numbers { numbers_written(haystack) } else { Vec::new() };
    let number_written = |leaf: &Value| leaf.as_f64().is_some_and(|n| among(n, &figures));
    let string_written = |leaf: &Value| leaf.as_str().is_some_and(|s| normalized(s).chars().count() >= 4) && written(leaf, haystack);
    leaves.iter().any(|leaf| (string_written(leaf) || number_written(leaf)) && !held.iter().any(|h| same(leaf, h)))
}

/// Words and marks that join two values of a list.
const JOINERS: [&str; 11] = ["and", "or", "vs", "和", "与", "及", "跟", "或", "、", ",", "，"];

/// Whether `a` and `b` (leaves: strings or numbers) are both written in `haystack` (already
/// [`normalized`]) with only a joiner between them and at most twelve characters in all.
fn coordinated(a: &Value, b: &Value, haystack: &str) -> bool {
    let (Some(a), Some(b)) = (spelled(a), spelled(b)) else { return false };
    let places = |wanted: &str| haystack.match_indices(wanted).map(|(i, m)| (i, i + m.len())).collect::<Vec<_>>();
    let (at_a, at_b) = (places(&a), places(&b));
    at_a.iter().any(|&(a_start, a_end)| {
        at_b.iter().any(|&(b_start, b_end)| {
            let gap = if a_end <= b_start { &haystack[a_end..b_start] } else if b_end <= a_start { &haystack[b_end..a_start] } else { return false };
            gap.chars().count() <= 12 && JOINERS.iter().any(|j| gap.contains(j))
        })
    })
}

/// A leaf as the question would write it ([`normalized`]); `None` for booleans and nulls.
fn spelled(leaf: &Value) -> Option<String> {
    match leaf {
        Value::String(s) if !s.trim().is_empty() => Some(normalized(s)),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The parts of a question: its sentences and questions, and what "and", "also", "再",
/// "并" or "然后" join (two values joined count too: the tool tells them apart).
fn parts(question: &str) -> usize {
    let mut marked = question.to_string();
    for joiner in [" and ", " also ", ". ", "; ", "；", "再", "并", "然后"] {
        marked = marked.replace(joiner, "。");
    }
    marked.split(['?', '!', '。', '？', '！', '\n']).filter(|part| part.chars().any(char::is_alphanumeric)).count()
}

/// A string the question writes as it is (case and blanks aside).
fn written(leaf: &Value, haystack: &str) -> bool {
    leaf.as_str().is_some_and(|s| haystack.contains(&normalized(s)))
}

/// The same value: strings case and blanks aside, numbers by size (a sign changed is no new
/// value: `b: 3` after `b: -3`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => normalized(x) == normalized(y),
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x.abs() - y.abs()).abs() <= 1e-9 * x.abs().max(1.0),
            _ => false,
        },
        _ => a == b,
    }
}

fn name_words(name: &str) -> impl Iterator<Item = String> + '_ {
    name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| w.len() >= 3).map(str::to_ascii_lowercase)
}

/// Whether the name of `call`'s tool (another than the `earlier` calls') has a word the
/// question writes (a plural either side) and no earlier tool's name has.
fn names_another_tool(call: &ToolCall, earlier: &[ToolCall], question: &str) -> bool {
    let question_words: Vec<String> = question
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let earlier_words: Vec<String> = earlier.iter().flat_map(|e| name_words(&e.name)).collect();
    name_words(&call.name).any(|w| !earlier_words.contains(&w) && question_words.iter().any(|q| q == &w || q.strip_suffix('s') == Some(w.as_str()) || w.strip_suffix('s') == Some(q.as_str())))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall { id: "call_001".into(), name: name.into(), args: args.as_object().unwrap().clone() }
    }

    #[test]
    fn a_second_call_stays_when_it_does_another_task_the_request_names() {
        let walk = call("maps.directions", json!({"origin": "Louvre", "destination": "Eiffel Tower", "mode": "walking"}));
        let cycle = call("maps.directions", json!({"origin": "Louvre", "destination": "Eiffel Tower", "mode": "cycling"}));
        assert!(new_work(&cycle, &[walk.clone()], "Get walking and cycling directions from the Louvre to the Eiffel Tower."));
        let day1 = call("currency.history", json!({"base": "USD", "quote": "CNY", "date": "2024-09-01"}));
        let day2 = call("currency.history", json!({"base": "USD", "quote": "CNY", "date": "2024-09-02"}));
        assert!(new_work(&day2, &[day1], "查询 2024-09-01 和 2024-09-02 美元兑人民币的汇率。"));
        let history = call("stocks.history", json!({"symbol": "TSLA", "interval": "weekly"}));
        let quote = call("stocks.quote", json!({"symbol": "TSLA"}));
        assert!(new_work(&quote, &[history], "Weekly prices of TSLA from January 1, 2024 to June 28, 2024, and its current quote."));
        let weather = call("weather.current", json!({"city": "北京"}));
        let air = call("weather.air_quality", json!({"city": "北京", "pollutant": "pm2.5"}));
        assert!(new_work(&air, &[weather], "北京现在天气怎么样？PM2.5 是多少？"));
        let seoul = call("weather.current", json!({"city": "Seoul"}));
        let busan = call("weather.current", json!({"city": "Busan"}));
        assert!(new_work(&busan, &[seoul], "Current weather in Seoul and in Busan, and convert 1000 KRW to USD."));
        let small = call("finance.compound_interest", json!({"principal": 5000, "years": 5}));
        let large = call("finance.compound_interest", json!({"principal": 20000, "years": 5}));
        assert!(new_work(&large, &[small], "分别计算 5000 元和 20000 元存 5 年的本息和。"));
        // The first task done second: its figures as the question states them (two numbers,
        // or a date in the notation the description asks), the dev cases the name
        // calibration lost.
        let bund = call("maps.geocode", json!({"address": "外滩"}));
        let reverse = call("maps.reverse_geocode", json!({"latitude": 31.2304, "longitude": 121.4737}));
        assert!(new_work(&reverse, &[bund.clone()], "坐标 31.2304, 121.4737 是什么地址？再查一下外滩的坐标。"));
        let quote = call("stocks.quote", json!({"symbol": "TSLA"}));
        let history = call("stocks.history", json!({"symbol": "TSLA", "start_date": "01-01-2024", "end_date": "06-28-2024"}));
        assert!(new_work(&history, &[quote], "Weekly prices of TSLA from January 1, 2024 to June 28, 2024, and its current quote."));
        // Not one number alone, a figure that is no date the question states, nor a date an
        // earlier call holds in another notation.
        let lookup = call("books.search", json!({"query": "Dune"}));
        let factorial = call("math.factorial", json!({"n": 20}));
        assert!(!new_work(&factorial, &[lookup], "Find 20 copies of Dune, and where is the nearest shop?"));
        assert!(!new_work(&reverse, &[bund.clone()], "坐标 31.2304 是什么地址？再查一下外滩的坐标。"));
        let flights = call("flights.search", json!({"from": "PEK", "to": "SHA", "date": "2024-03-05"}));
        let room = call("stays.book", json!({"city": "Shanghai", "check_in": "03-05-2024"}));
        assert!(!new_work(&room, &[flights.clone()], "Flights PEK to SHA on 2024-03-05; and a room there?"));
        let room = call("stays.book", json!({"city": "Shanghai", "check_in": "03-06-2024"}));
        assert!(new_work(&room, &[flights.clone()], "Flights PEK to SHA on 2024-03-05; and a room from March 6, 2024?"));
        assert!(!new_work(&room, &[flights], "Flights PEK to SHA on 2024-03-05; and a room from the day after?"));
    }

    #[test]
    fn a_second_call_that_only_changes_what_nobody_asked_goes_with_those_after_it() {
        let question = "What's the weather in Lisbon right now, in fahrenheit?";
        let mut calls = vec![
            call("weather.current", json!({"city": "Lisbon", "unit": "fahrenheit"})),
            call("weather.current", json!({"city": "Lisbon", "unit": "celsius"})),
            call("weather.current", json!({"city": "Lisboa", "unit": "kelvin"})),
        ];
        let dropped = check(&mut calls, question, false, false);
        assert_eq!(calls.len(), 1);
        assert_eq!(dropped.len(), 2, "{dropped:?}");
        assert!(dropped[0].starts_with("weather.current(") && dropped[0].contains("celsius"), "{dropped:?}");
        // Numbers swapped or with a sign changed, a boolean turned on, another tool the
        // request does not name: no new work.
        let gcd = call("math.gcd", json!({"a": 84, "b": 126}));
        assert!(!new_work(&call("math.gcd", json!({"a": 126, "b": 84})), &[gcd.clone()], "GCD of 84 and 126?"));
        let quad = call("math.solve_quadratic", json!({"a": 2, "b": -3, "c": -5}));
        assert!(!new_work(&call("math.solve_quadratic", json!({"a": 2, "b": 3, "c": 5})), &[quad], "Solve 2x^2 - 3x - 5 = 0."));
        let forecast = call("weather.forecast", json!({"city": "北京", "include_hourly": false}));
        assert!(!new_work(&call("weather.forecast", json!({"city": "北京", "include_hourly": true})), &[forecast], "北京未来 7 天的天气预报"));
        let lcm = call("math.lcm", json!({"numbers": [12, 18, 30]}));
        assert!(!new_work(&call("math.gcd", json!({"a": 12, "b": 18})), &[lcm], "What is the LCM of 12, 18 and 30?"));
        // A word of the request that the first call already stands for, or that is no second
        // task: the dev cases where a looser check kept the added call.
        let calories = call("health.daily_calories", json!({"age": 34, "weight_kg": 70, "activity": "moderate"}));
        let active = call("health.daily_calories", json!({"age": 34, "weight_kg": 70, "activity": "active"}));
        assert!(!new_work(&active, &[calories], "How many calories a day does a 34-year-old woman need: 70 kg, 165 cm, moderately active?"));
        let history = call("shop.price_history", json!({"product_id": "SKU-40017", "days": 30}));
        let search = call("shop.search_products", json!({"query": "price"}));
        assert!(!new_work(&search, &[history], "How has the price of SKU-40017 changed over the last 30 days?"));
        let lights = call("home.lights", json!({"room": "bedroom", "on": false}));
        let reminder = call("reminders.create", json!({"text": "Turn off the bedroom lights.", "remind_at": "2023-10-01 12:00"}));
        assert!(!new_work(&reminder, &[lights], "Turn off the bedroom lights."));
        let energy = call("physics.kinetic_energy", json!({"mass_kg": 2, "velocity_ms": 3.5}));
        let weight = call("unit.convert_weight", json!({"value": 2, "from_unit": "kg", "to_unit": "jin"}));
        assert!(!new_work(&weight, &[energy], "A 2 kg ball moves at 3.5 m/s. What's its kinetic energy?"));
        // Another tool for a question of one part (two holdout cases).
        let status = call("flights.status", json!({"flight_number": "UA857"}));
        assert!(!new_work(&call("time.now", json!({"timezone": "Europe/London"})), &[status], "Is flight UA857 on time today?"));
        let cancel = call("calendar.cancel_event", json!({"event_id": "evt_2208", "notify_attendees": false}));
        let list = call("calendar.list_events", json!({"start_date": "2023-01-01", "keyword": "event"}));
        assert!(!new_work(&list, &[cancel], "Cancel event evt_2208, but don't notify the attendees."));
        // One call: nothing to check.
        let mut one = vec![gcd];
        assert!(check(&mut one, "GCD of 84 and 126?", true, false).is_empty() && one.len() == 1);
        // A first call made up: the added one goes, new work or not.
        let walk = call("maps.directions", json!({"origin": "Louvre", "mode": "walking"}));
        let cycle = call("maps.directions", json!({"origin": "Louvre", "mode": "cycling"}));
        let mut calls = vec![walk.clone(), cycle.clone()];
        assert_eq!(check(&mut calls, "Walking and cycling from the Louvre.", false, false).len(), 0);
        assert_eq!(check(&mut calls, "Walking and cycling from the Louvre.", true, false).len(), 1);
        assert_eq!(calls, [walk]);
        // One the model nearly wrote on its own stays, new work or not; not after a made-up one.
        let average = call("edu.weighted_average", json!({"scores": [90, 80], "weights": [0.6, 0.4]}));
        let spread = call("stats.std_dev", json!({"numbers": [90, 80], "sample": true}));
        let question = "计算加权平均：分数 90 和 80，权重 0.6 和 0.4；再算这两个分数的样本标准差。";
        let mut calls = vec![average.clone(), spread.clone()];
        assert_eq!(check(&mut calls, question, false, false).len(), 1, "no new work by the words alone");
        let mut calls = vec![average.clone(), spread.clone()];
        assert!(check(&mut calls, question, false, true).is_empty() && calls == [average.clone(), spread.clone()]);
        let mut calls = vec![average.clone(), spread];
        assert_eq!(check(&mut calls, question, true, true).len(), 1);
    }

    #[test]
    fn calls_of_tools_an_english_request_does_not_ask_for_are_dropped() {
        // Offered three tools, the model called them all for one of them.
        let question = "What are the best museums to visit in Vienna? Just the top 3.";
        let attractions = call("travel.attractions", json!({"city": "Vienna", "limit": 3}));
        let mut calls = vec![
            attractions.clone(),
            call("hotels.search", json!({"city": "Vienna", "check_in": "2023-01-01", "check_out": "2023-01-05"})),
            call("maps.nearby", json!({"location": "Vienna", "place_type": "restaurant"})),
        ];
        let dropped = unasked(&mut calls, question);
        assert_eq!(calls, [attractions]);
        assert!(dropped.len() == 2 && dropped[0].starts_with("hotels.search(") && dropped[1].starts_with("maps.nearby("), "{dropped:?}");
        // A tool the request names stays, one it does not goes, even between them.
        let question = "Find free beginner Python courses, and Python books in the library that I can borrow now.";
        let courses = call("edu.search_courses", json!({"topic": "Python", "free_only": true}));
        let podcasts = call("podcasts.search", json!({"query": "Python"}));
        let books = call("library.search_books", json!({"query": "Python", "available_only": true}));
        let mut calls = vec![courses.clone(), podcasts, books.clone()];
        assert_eq!(unasked(&mut calls, question).len(), 1);
        assert_eq!(calls, [courses, books]);
        // A value the request writes that no earlier call holds: a number counts too.
        let length = call("unit.convert_length", json!({"value": 5, "from_unit": "mi", "to_unit": "km"}));
        let weight = call("unit.convert_weight", json!({"value": 20, "from_unit": "lb", "to_unit": "kg"}));
        let mut calls = vec![length.clone(), weight.clone()];
        assert!(unasked(&mut calls, "Convert 5 miles to km and 20 lb to kg.").is_empty() && calls.len() == 2);
        let email = call("email.send", json!({"to": "bob@example.com", "subject": "Lunch"}));
        let sms = call("sms.send", json!({"to": "+15550100", "message": "Running late"}));
        let mut calls = vec![email.clone(), sms.clone()];
        assert!(unasked(&mut calls, "Email bob@example.com about Lunch and text +15550100 that I'm Running late.").is_empty());
        // The same value again is not one: the weight conversion of the length's number goes.
        let mut calls = vec![length.clone(), call("unit.convert_weight", json!({"value": 5, "from_unit": "lb", "to_unit": "kg"}))];
        assert_eq!(unasked(&mut calls, "Convert 5 miles to km.").len(), 1);
        // Another call of the same tool is not judged here, nor a Chinese request.
        let mut calls = vec![length.clone(), call("unit.convert_length", json!({"value": 5, "from_unit": "mi", "to_unit": "m"}))];
        assert!(unasked(&mut calls, "Convert 5 miles to km.").is_empty());
        let hotels = call("hotels.search", json!({"city": "杭州", "check_in": "2025-08-08", "check_out": "2025-08-12"}));
        let car = call("car_rental.search", json!({"location": "HGH", "pickup_date": "2025-08-08", "return_date": "2025-08-12"}));
        let mut calls = vec![hotels, car];
        assert!(unasked(&mut calls, "查 2025-08-08 到 2025-08-12 杭州的酒店，并在杭州萧山机场（HGH）租一辆电动车。").is_empty() && calls.len() == 2);
    }
}
