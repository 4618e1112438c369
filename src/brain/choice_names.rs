//! What a request calls an enum's choices, in English or Chinese, and the calls' choices
//! put right by it.
//!
//! Tools take units, currencies and languages as codes (`m`, `GBP`, `ja`); users name them
//! in words ("5 miles", "100 英镑", "into Japanese"). The 0.5B, writing a call, often
//! picks a choice the request never names where another one is named: `from_unit: "m"`
//! for "Convert 5 miles to km", `from_currency: "USD"` for "把 1200 元人民币换成日元". A
//! choice is named by the request when it writes the choice itself as a word (`km`, `JSON`,
//! "fahrenheit", "miles"), or one of the names this module knows for it ([`NAMES`]): units,
//! currencies and languages, and the everyday choices tools offer (kinds of place, seats,
//! ways to travel, how often, levels, diets, categories: "药店" is `pharmacy`, "一等座"
//! `first`, "每周" `weekly`).

use serde_json::Value;

use crate::tools::spec::ToolSpec;
use crate::protocol::ToolCall;

/// Names of the codes tools take for units, currencies, languages and everyday choices: the code (lower
/// case) and what people call it, English words (whole words, the last one also with
/// `s` or `es`) and Chinese terms (anywhere; longer ones are taken first, so `千克` is not
/// also `克`). A name may stand for codes of different kinds (`pound`: `GBP` and `lb`):
/// only the choices of the parameter at hand are looked up.
const NAMES: &[(&str, &[&str])] = &[
    // Currencies.
    ("usd", &["us dollar", "dollar", "buck", "美元", "美金"]),
    ("eur", &["euro", "欧元", "€"]),
    ("cny", &["yuan", "renminbi", "rmb", "人民币"]),
    ("jpy", &["yen", "japanese yen", "日元", "日币"]),
    ("gbp", &["pound", "pound sterling", "british pound", "sterling", "英镑", "£"]),
    ("hkd", &["hong kong dollar", "港币", "港元"]),
    ("krw", &["korean won", "韩元", "₩"]),
    ("aud", &["australian dollar", "澳元", "澳币"]),
    ("cad", &["canadian dollar", "加元", "加币"]),
    ("chf", &["swiss franc", "franc", "瑞士法郎"]),
    ("sgd", &["singapore dollar", "新加坡元", "新币"]),
    // Lengths.
    ("mm", &["millimetre", "millimeter", "毫米"]),
    ("cm", &["centimetre", "centimeter", "厘米", "公分"]),
    ("m", &["metre", "meter", "米"]),
    ("km", &["kilometre", "kilometer", "千米", "公里"]),
    ("inch", &["英寸"]),
    ("ft", &["foot", "feet", "英尺"]),
    ("yd", &["yard"]),
    ("mile", &["英里"]),
    ("nautical_mile", &["nautical mile", "海里"]),
    // Weights.
    ("mg", &["milligram", "毫克"]),
    ("g", &["gram", "克"]),
    ("kg", &["kilogram", "kilo", "千克", "公斤"]),
    ("t", &["tonne", "ton", "吨"]),
    ("oz", &["ounce", "盎司"]),
    ("lb", &["pound", "lbs", "磅"]),
    ("jin", &["斤"]),
    // Volumes.
    ("ml", &["millilitre", "milliliter", "毫升"]),
    ("l", &["litre", "liter", "升"]),
    ("tsp", &["teaspoon", "茶匙"]),
    ("tbsp", &["tablespoon", "汤匙"]),
    ("cup", &["杯"]),
    ("fl_oz", &["fluid ounce", "液量盎司"]),
    ("gallon", &["加仑"]),
    // Temperature scales.
    ("celsius", &["°c", "摄氏"]),
    ("fahrenheit", &["°f", "华氏"]),
    ("kelvin", &["开尔文", "开氏"]),
    // Languages.
    ("en", &["english", "英语", "英文"]),
    ("zh", &["chinese", "mandarin", "中文", "汉语", "普通话"]),
    ("ja", &["japanese", "日语", "日文"]),
    ("ko", &["korean", "韩语", "韩文"]),
    ("fr", &["french", "法语", "法文"]),
    ("de", &["german", "德语", "德文"]),
    ("es", &["spanish", "西班牙语", "西班牙文"]),
    ("it", &["italian", "意大利语"]),
    ("ru", &["russian", "俄语", "俄文"]),
    ("pt", &["portuguese", "葡萄牙语"]),
    ("ar", &["arabic", "阿拉伯语"]),
    // Kinds of place.
    ("restaurant", &["餐厅", "饭店", "餐馆"]),
    ("cafe", &["coffee shop", "咖啡馆", "咖啡店", "咖啡厅"]),
    ("pharmacy", &["drugstore", "chemist", "药店", "药房"]),
    ("hospital", &["医院"]),
    ("gas_station", &["petrol station", "加油站"]),
    ("atm", &["cash machine", "取款机", "提款机"]),
    ("parking", &["car park", "停车场"]),
    ("supermarket", &["超市"]),
    ("museum", &["博物馆"]),
    ("park", &["公园"]),
    ("landmark", &["地标"]),
    // Seats, cabins and cars.
    ("first", &["一等座", "头等舱"]),
    ("second", &["二等座"]),
    ("business", &["商务座", "商务舱"]),
    ("economy", &["经济舱", "经济型"]),
    ("premium_economy", &["超级经济舱", "高端经济舱"]),
    ("compact", &["紧凑型"]),
    ("luxury", &["豪华"]),
    ("electric", &["电动", "新能源"]),
    ("van", &["面包车"]),
    // Ways to travel.
    ("driving", &["drive", "开车", "驾车", "自驾"]),
    ("walking", &["walk", "on foot", "步行", "走路"]),
    ("transit", &["public transport", "subway", "metro", "公交", "地铁", "公共交通"]),
    ("cycling", &["bike", "bicycle", "骑行", "骑车", "自行车"]),
    // Kinds of public transport.
    ("subway", &["metro", "underground", "tube", "地铁"]),
    ("bus", &["公交车", "巴士"]),
    ("tram", &["streetcar", "有轨电车"]),
    ("ferry", &["轮渡", "渡轮"]),
    // How often.
    ("daily", &["every day", "每天", "每日", "日线"]),
    ("weekly", &["every week", "每周", "每星期", "周线"]),
    ("monthly", &["every month", "每月", "每个月", "月线"]),
    // Levels, priorities, registers.
    ("beginner", &["初级", "入门", "新手"]),
    ("intermediate", &["中级"]),
    ("advanced", &["高级", "进阶"]),
    ("warn", &["warning", "警告"]),
    ("error", &["错误"]),
    ("debug", &["调试"]),
    ("high", &["urgent", "高优先级", "紧急"]),
    ("low", &["低优先级"]),
    ("formal", &["正式"]),
    ("informal", &["casual", "非正式", "随意"]),
    // Diets.
    ("vegetarian", &["素食"]),
    ("vegan", &["纯素", "纯素食"]),
    ("gluten_free", &["gluten-free", "无麸质"]),
    ("keto", &["生酮"]),
    // Shop and expense categories.
    ("electronics", &["电子产品", "数码"]),
    ("books", &["图书", "书籍"]),
    ("home", &["家居"]),
    ("clothing", &["clothes", "服装", "衣服"]),
    ("sports", &["运动", "体育"]),
    ("toys", &["玩具"]),
    ("grocery", &["食品杂货", "杂货"]),
    ("food", &["餐饮"]),
    ("transport", &["交通", "打车"]),
    ("housing", &["房租", "住房"]),
    ("entertainment", &["娱乐"]),
    ("health", &["医疗"]),
    ("education", &["教育"]),
    ("shopping", &["购物"]),
    // Mail folders and contact fields.
    ("inbox", &["收件箱"]),
    ("sent", &["已发送", "发件箱"]),
    ("archive", &["归档"]),
    ("phone", &["电话", "手机号"]),
    ("email", &["邮箱", "电子邮件"]),
    ("address", &["地址"]),
    // Sorting.
    ("price_asc", &["cheapest", "lowest price", "价格从低到高", "最便宜"]),
    ("price_desc", &["most expensive", "highest price", "价格从高到低", "最贵"]),
    ("rating", &["top rated", "best rated", "评分", "好评"]),
    // Leagues.
    ("premier_league", &["英超"]),
    ("la_liga", &["西甲"]),
    ("bundesliga", &["德甲"]),
    ("serie_a", &["意甲"]),
    ("csl", &["中超"]),
    // Doctors.
    ("pediatrics", &["pediatrician", "儿科"]),
    ("dermatology", &["dermatologist", "皮肤科"]),
    ("cardiology", &["cardiologist", "心内科", "心脏科"]),
    ("dentistry", &["dentist", "牙科", "牙医"]),
    ("ophthalmology", &["eye doctor", "ophthalmologist", "眼科"]),
    ("orthopedics", &["orthopedist", "骨科"]),
    // Sports figures, elements' properties, returns, people.
    ("points", &["得分"]),
    ("goals", &["进球"]),
    ("assists", &["助攻"]),
    ("rebounds", &["篮板"]),
    ("atomic_number", &["原子序数"]),
    ("atomic_mass", &["原子质量", "原子量"]),
    ("electronegativity", &["电负性"]),
    ("melting_point", &["熔点"]),
    ("density", &["密度"]),
    ("damaged", &["broken", "损坏", "破损", "坏了"]),
    ("wrong_item", &["发错", "错发"]),
    ("no_longer_needed", &["不需要了", "不想要了"]),
    ("male", &["男性", "男士"]),
    ("female", &["女性", "女士"]),
];

/// English words that are no choice's name when a request writes them: `it` is Italian's
/// code, and "any" or "other" in a request are seldom the choice of that name.
const COMMON_WORDS: &[&str] = &[
    "a", "i", "it", "in", "on", "at", "to", "of", "or", "an", "as", "is", "be", "by", "do", "go", "no", "so", "up", "us",
    "we", "me", "my", "he", "any", "all", "none", "other", "default", "auto",
];

/// A request as choices are looked for in it: its words (figures before a unit dropped:
/// `5km` is `km`), as written and in lower case, each with where it ends and starts in
/// the text, and its whole text in lower case for Chinese terms.
pub struct Request {
    written: Vec<String>,
    words: Vec<String>,
    spans: Vec<(usize, usize)>,
    text: String,
}

impl Request {
    pub fn new(text: &str) -> Self {
        // Lower case keeps the places of what can be a word (ASCII) and of Chinese.
        let lower = text.to_lowercase();
        let (mut written, _) = words_in(text);
        let (words, spans) = words_in(&lower);
        if written.len() != words.len() {
            // A letter whose lower case is not one word with it: no codes as written.
            written = words.clone();
        }
        Self { written, words, spans, text: lower }
    }

    /// The choices of `choices` this request names, in their order: by a name of theirs
    /// (the choice itself, `nautical_mile` as "nautical mile", or one of [`NAMES`]),
    /// longer names first, each place in the request taken once ("Hong Kong dollars" is
    /// not also dollars, `千克` not also `克`); a choice of one or two letters only as
    /// written, case and all (`m` in "5 m").
    pub fn named<'a>(&self, choices: &[&'a str]) -> Vec<&'a str> {
        let places = self.places(choices);
        choices.iter().copied().filter(|c| places.iter().any(|(p, _)| p == c)).collect()
    }

    /// Where the request names each of `choices` (see [`Self::named`]): the choice and the
    /// byte range of the name in the request, in the request's order.
    pub fn places<'a>(&self, choices: &[&'a str]) -> Vec<(&'a str, (usize, usize))> {
        let mut names: Vec<(&'a str, String)> = Vec::new();
        for &choice in choices {
            let own = choice.to_lowercase().replace('_', " ");
            if choice.chars().count() > 2 && !COMMON_WORDS.contains(&own.as_str()) {
                names.push((choice, own));
            }
            if let Some((_, list)) = NAMES.iter().find(|(code, _)| code.eq_ignore_ascii_case(choice)) {
                names.extend(list.iter().map(|name| (choice, name.to_string())));
            }
        }
        names.sort_by_key(|(_, name)| std::cmp::Reverse(name.chars().count()));
        // Chinese terms found are blanked out, keeping every other place where it was.
        let mut text = self.text.clone();
        let mut taken = vec![false; self.words.len()];
        let mut places: Vec<(&str, (usize, usize))> = Vec::new();
        for (choice, name) in names {
            if name.is_ascii() {
                for (first, last) in self.take_phrase(&name, &mut taken) {
                    places.push((choice, (self.spans[first].0, self.spans[last].1)));
                }
            } else {
                let found: Vec<usize> = text.match_indices(&name).map(|(at, _)| at).collect();
                for at in found {
                    text.replace_range(at..at + name.len(), &" ".repeat(name.len()));
                    places.push((choice, (at, at + name.len())));
                }
            }
        }
        for &choice in choices {
            if choice.chars().count() <= 2 && !COMMON_WORDS.contains(&choice) {
                for (i, _) in self.written.iter().enumerate().filter(|(i, w)| *w == choice && !taken[*i]) {
                    places.push((choice, self.spans[i]));
                }
            }
        }
        places.sort_by_key(|(_, span)| *span);
        places
    }

    /// Marks each run of words not yet taken that is `phrase` (its last word also with
    /// `s` or `es`, or, of five letters or more, the start of a longer word); the runs found
    /// (first and last word).
    fn take_phrase(&self, phrase: &str, taken: &mut [bool]) -> Vec<(usize, usize)> {
        let parts: Vec<&str> = phrase.split(' ').collect();
        let Some((last, first)) = parts.split_last() else { return Vec::new() };
        // A long word may also go on ("moderately active" names `moderate`).
        let ends = |word: &str| word == *last || word == format!("{last}s") || word == format!("{last}es") || (last.len() >= 5 && word.starts_with(last));
        let mut found = Vec::new();
        for start in 0..self.words.len().saturating_sub(parts.len() - 1) {
            let span = start..start + parts.len();
            let window = &self.words[span.clone()];
            let matches = window[..first.len()].iter().zip(first).all(|(w, p)| w == p) && ends(&window[first.len()]);
            if matches && !taken[span.clone()].iter().any(|t| *t) {
                taken[span].iter_mut().for_each(|t| *t = true);
                found.push((start, start + parts.len() - 1));
            }
        }
        found
    }

    /// The lists the request names choices in: runs of two or more places with only a
    /// comma, `and`, `or`, `和`, `、` and the like between them ("换成人民币、日元和欧元":
    /// CNY, JPY, EUR), each choice once.
    pub fn lists<'a>(&self, places: &[(&'a str, (usize, usize))]) -> Vec<Vec<&'a str>> {
        let mut lists: Vec<Vec<&str>> = Vec::new();
        let mut current: Vec<&str> = Vec::new();
        let mut end = 0;
        for &(choice, (from, to)) in places {
            let between = self.text.get(end..from).unwrap_or("x");
            if current.is_empty() || !only_separators(between) {
                if current.len() >= 2 {
                    lists.push(std::mem::take(&mut current));
                }
                current.clear();
            }
            if !current.contains(&choice) {
                current.push(choice);
            }
            end = to;
        }
        if current.len() >= 2 {
            lists.push(current);
        }
        lists
    }
}

/// The words of `text` (letters, figures, `_ . '`; figures before a unit dropped: `5km` is
/// `km`; a sentence's `.` at the end dropped) and where each is.
fn words_in(text: &str) -> (Vec<String>, Vec<(usize, usize)>) {
    let mut words = Vec::new();
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let inside = c.is_ascii_alphanumeric() || "_.'".contains(c);
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                let raw = &text[s..i];
                let word = raw.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                let from = s + (raw.len() - word.len());
                let word = word.trim_end_matches('.');
                if !word.is_empty() {
                    words.push(word.to_string());
                    spans.push((from, from + word.len()));
                }
            }
            _ => {}
        }
    }
    (words, spans)
}

/// Whether `text` holds nothing but what joins the items of a list.
fn only_separators(text: &str) -> bool {
    const JOINERS: &[&str] = &["以及", "或者", "还有", "and", "or", "和", "与", "及", "或", "跟", "、", "，", ",", "/", "&", "as well as"];
    let mut rest = text.to_string();
    for joiner in JOINERS {
        rest = rest.replace(joiner, " ");
    }
    rest.trim().is_empty()
}

/// Puts right each enum argument of `calls` whose choice `question` does not name, where it
/// names exactly one other choice of that parameter that no other argument of the call
/// holds ("Convert 5 miles to km": `from_unit: "m"` becomes `"mile"`, `km` being the
/// `to_unit`'s). Returns one line per change (`tool: param "old" -> "new"`).
pub fn put_right(calls: &mut [ToolCall], tools: &[ToolSpec], question: &str) -> Vec<String> {
    let request = Request::new(question);
    let mut changed = Vec::new();
    for call in calls.iter_mut() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else { continue };
        for param in tool.params() {
            let Some(choices) = param.schema.enum_values.as_ref() else { continue };
            let choices: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
            let Some(value) = call.args.get(&param.name).and_then(Value::as_str) else { continue };
            let named = request.named(&choices);
            if named.contains(&value) {
                continue;
            }
            let held = |choice: &str| {
                call.args.iter().any(|(k, v)| k != &param.name && v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(choice)))
            };
            let free: Vec<&str> = named.into_iter().filter(|c| !held(c)).collect();
            let [choice] = free[..] else { continue };
            changed.push(format!("{}: {} {value:?} -> {choice:?}", call.name, param.name));
            call.args.insert(param.name.clone(), Value::String(choice.to_string()));
        }
    }
    changed
}

/// Makes one call of a tool for each choice of a required enum parameter that the request
/// names in a list, where the decision's calls of that tool agree on everything else: "把
/// 100 美元分别换成人民币、日元和欧元" is three conversions, whichever of them (or others) the
/// model wrote; "2023-24 赛季西甲和德甲的积分榜" two tables. Choices another argument of the
/// decision holds are not the list's (`USD` is the amount's, `fahrenheit` another tool's),
/// and where two parameters could take the list, nothing is done. Returns one line per tool
/// fanned out (`tool: to_currency CNY, JPY, EUR`).
pub fn fan_out(calls: &mut Vec<ToolCall>, tools: &[ToolSpec], question: &str) -> Vec<String> {
    let request = Request::new(question);
    let mut changed = Vec::new();
    for name in tools_called(calls) {
        let Some(tool) = tools.iter().find(|t| t.name == name) else { continue };
        let mine: Vec<usize> = (0..calls.len()).filter(|&i| calls[i].name == name).collect();
        let mut candidates: Vec<(String, Vec<&str>)> = Vec::new();
        for param in tool.params() {
            let Some(choices) = param.schema.enum_values.as_ref() else { continue };
            if !tool.required().contains(&param.name) {
                continue;
            }
            let choices: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
            let held = |choice: &str| {
                calls.iter().enumerate().any(|(i, call)| {
                    call.args.iter().any(|(k, v)| !(mine.contains(&i) && *k == param.name) && v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(choice)))
                })
            };
            // A list with a choice another argument holds is not this parameter's.
            for list in request.lists(&request.places(&choices)) {
                if !list.iter().any(|c| held(c)) {
                    candidates.push((param.name.clone(), list));
                }
            }
        }
        let [(param, list)] = &candidates[..] else { continue };
        let first = calls[mine[0]].clone();
        let others = |call: &ToolCall| call.args.iter().filter(|(k, _)| *k != param).map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>();
        if mine.iter().any(|&i| others(&calls[i]) != others(&first)) {
            continue;
        }
        let written: Vec<Option<&str>> = mine.iter().map(|&i| calls[i].args.get(param).and_then(Value::as_str)).collect();
        if written.len() == list.len() && list.iter().all(|c| written.contains(&Some(c))) {
            continue;
        }
        let mut ids: Vec<String> = mine.iter().map(|&i| calls[i].id.clone()).collect();
        let fanned: Vec<ToolCall> = list
            .iter()
            .enumerate()
            .map(|(n, choice)| {
                let mut call = first.clone();
                call.args.insert(param.clone(), Value::String(choice.to_string()));
                if n < ids.len() {
                    call.id = ids[n].clone();
                } else {
                    let taken = |id: &str| calls.iter().any(|c| c.id == id) || ids.iter().any(|i| i == id);
                    let id = (1..).map(|k| format!("call_{k:03}")).find(|id| !taken(id)).unwrap_or_default();
                    ids.push(id.clone());
                    call.id = id;
                }
                call
            })
            .collect();
        let at = mine[0];
        let mut kept: Vec<ToolCall> = Vec::with_capacity(calls.len() + fanned.len());
        for (i, call) in calls.drain(..).enumerate() {
            if i == at {
                kept.extend(fanned.iter().cloned());
            }
            if !mine.contains(&i) {
                kept.push(call);
            }
        }
        *calls = kept;
        changed.push(format!("{name}: {param} {}", list.join(", ")));
    }
    changed
}

/// The tools `calls` call, each once, in the order of their first calls.
pub(crate) fn tools_called(calls: &[ToolCall]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for call in calls {
        if !names.contains(&call.name) {
            names.push(call.name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn named<'a>(text: &str, choices: &[&'a str]) -> Vec<&'a str> {
        Request::new(text).named(choices)
    }

    const LENGTHS: &[&str] = &["mm", "cm", "m", "km", "inch", "ft", "yd", "mile", "nautical_mile"];
    const CURRENCIES: &[&str] = &["USD", "EUR", "CNY", "JPY", "GBP", "HKD", "KRW", "AUD", "CAD", "CHF", "SGD"];
    const LANGUAGES: &[&str] = &["en", "zh", "ja", "ko", "fr", "de", "es", "it", "ru", "pt", "ar"];

    #[test]
    fn choices_are_named_by_code_word_or_chinese_term() {
        assert_eq!(named("Convert 5 miles to km and 20 lb to kg.", LENGTHS), ["km", "mile"]);
        assert_eq!(named("How many feet is 1500 metres?", LENGTHS), ["m", "ft"]);
        assert_eq!(named("Run 10km, then 3 nautical miles", LENGTHS), ["km", "nautical_mile"]);
        assert_eq!(named("帮我把 1200 元人民币换成日元。", CURRENCIES), ["CNY", "JPY"]);
        assert_eq!(named("100 英镑现在能换多少港币？", CURRENCIES), ["GBP", "HKD"]);
        assert_eq!(named("How much is 50 Hong Kong dollars in GBP?", CURRENCIES), ["GBP", "HKD"]);
        assert_eq!(named("Flats under €2,000 a month", CURRENCIES), ["EUR"]);
        assert_eq!(named("a £450 deposit", CURRENCIES), ["GBP"]);
        assert_eq!(named("30°C in Fahrenheit?", &["celsius", "fahrenheit", "kelvin"]), ["celsius", "fahrenheit"]);
        assert_eq!(named("300 开尔文是多少摄氏度？", &["celsius", "fahrenheit", "kelvin"]), ["celsius", "kelvin"]);
        assert_eq!(named("把 2 公斤换算成斤", &["mg", "g", "kg", "jin"]), ["kg", "jin"]);
        assert_eq!(named("Translate it into Japanese.", LANGUAGES), ["ja"]);
        assert_eq!(named("Say it in German, in a formal way", LANGUAGES), ["de"]);
        let activity = ["sedentary", "light", "moderate", "active", "very_active"];
        assert_eq!(named("a 34-year-old woman, moderately active", &activity), ["moderate", "active"]);
        assert_eq!(named("I'm very active", &activity), ["very_active"]);
    }

    #[test]
    fn everyday_choices_are_named_in_chinese_and_other_words() {
        let places = ["restaurant", "cafe", "pharmacy", "hospital", "gas_station", "atm", "parking", "supermarket"];
        assert_eq!(named("在上海静安寺附近 500 米内找现在营业的药店。", &places), ["pharmacy"]);
        assert_eq!(named("Is there a drugstore or a coffee shop nearby?", &places), ["cafe", "pharmacy"]);
        assert_eq!(named("订一张明天北京到上海的一等座", &["second", "first", "business"]), ["first"]);
        assert_eq!(named("每周的收盘价", &["daily", "weekly", "monthly"]), ["weekly"]);
        assert_eq!(named("找一些纯素食的菜谱", &["none", "vegetarian", "vegan"]), ["vegan"]);
        assert_eq!(named("找一些素食菜谱", &["none", "vegetarian", "vegan"]), ["vegetarian"]);
        assert_eq!(named("Directions to the museum on foot", &["driving", "walking", "transit", "cycling"]), ["walking"]);
    }

    #[test]
    fn short_codes_count_only_as_written() {
        assert_eq!(named("I'm 5 m away", LENGTHS), ["m"]);
        assert!(named("I'm far away", LENGTHS).is_empty());
        assert!(named("It is far", LANGUAGES).is_empty());
        assert!(named("Find any headphones", &["any", "electronics"]).is_empty());
        assert!(named("Show my M&A docs", LENGTHS).is_empty());
    }

    fn convert() -> Vec<ToolSpec> {
        ToolSpec::parse_all(&[json!({"name": "unit.convert_length", "parameters": {"type": "object", "properties": {
            "value": {"type": "number"},
            "from_unit": {"type": "string", "enum": LENGTHS},
            "to_unit": {"type": "string", "enum": LENGTHS},
        }, "required": ["value", "from_unit", "to_unit"]}})])
        .unwrap()
    }

    fn call(args: serde_json::Value) -> ToolCall {
        serde_json::from_value(json!({"id": "call_001", "name": "unit.convert_length", "args": args})).unwrap()
    }

    #[test]
    fn an_unnamed_choice_gives_way_to_the_one_named_choice_no_other_argument_holds() {
        let mut calls = vec![call(json!({"value": 5, "from_unit": "m", "to_unit": "km"}))];
        let changed = put_right(&mut calls, &convert(), "Convert 5 miles to km.");
        assert_eq!(changed, [r#"unit.convert_length: from_unit "m" -> "mile""#]);
        assert_eq!(calls[0].args, call(json!({"value": 5, "from_unit": "mile", "to_unit": "km"})).args);
    }

    fn convert_currency() -> Vec<ToolSpec> {
        ToolSpec::parse_all(&[json!({"name": "currency.convert", "parameters": {"type": "object", "properties": {
            "amount": {"type": "number"},
            "from_currency": {"type": "string", "enum": CURRENCIES},
            "to_currency": {"type": "string", "enum": CURRENCIES},
        }, "required": ["amount", "from_currency", "to_currency"]}})])
        .unwrap()
    }

    fn conversion(id: &str, to: &str) -> ToolCall {
        serde_json::from_value(json!({"id": id, "name": "currency.convert", "args": {"amount": 100, "from_currency": "USD", "to_currency": to}})).unwrap()
    }

    #[test]
    fn choices_named_in_a_list_get_a_call_each() {
        let question = "把 100 美元分别换成人民币、日元和欧元。";
        let want = vec![conversion("call_001", "CNY"), conversion("call_002", "JPY"), conversion("call_003", "EUR")];
        // One call written.
        let mut calls = vec![conversion("call_001", "EUR")];
        assert_eq!(fan_out(&mut calls, &convert_currency(), question), ["currency.convert: to_currency CNY, JPY, EUR"]);
        assert_eq!(calls, want);
        // Too many written, one nobody named among them.
        let mut calls = vec![conversion("call_001", "CNY"), conversion("call_002", "JPY"), conversion("call_003", "GBP"), conversion("call_004", "EUR")];
        fan_out(&mut calls, &convert_currency(), question);
        assert_eq!(calls, want);
        // In English.
        let mut calls = vec![conversion("call_001", "EUR")];
        fan_out(&mut calls, &convert_currency(), "Convert 100 USD to yen, euros and pounds.");
        assert_eq!(calls.iter().map(|c| c.args["to_currency"].as_str().unwrap()).collect::<Vec<_>>(), ["JPY", "EUR", "GBP"]);
    }

    #[test]
    fn no_list_or_calls_that_differ_otherwise_are_left_alone() {
        for (question, calls) in [
            // One choice named where the list would be.
            ("Convert 100 USD to EUR.", vec![conversion("call_001", "EUR")]),
            // Written as named already.
            ("100 美元换成人民币和日元", vec![conversion("call_001", "CNY"), conversion("call_002", "JPY")]),
            // Named apart, not as a list.
            ("Convert 100 USD to EUR; my friend has JPY.", vec![conversion("call_001", "EUR")]),
        ] {
            let mut mended = calls.clone();
            assert!(fan_out(&mut mended, &convert_currency(), question).is_empty(), "{question}");
            assert_eq!(mended, calls, "{question}");
        }
        // The calls differ in their amounts: each is its own task.
        let mut other = conversion("call_002", "JPY");
        other.args.insert("amount".into(), json!(50));
        let calls = vec![conversion("call_001", "CNY"), other];
        let mut mended = calls.clone();
        assert!(fan_out(&mut mended, &convert_currency(), "100 美元换成人民币，50 美元换成日元和欧元").is_empty());
        assert_eq!(mended, calls);
    }

    #[test]
    fn places_and_lists_follow_the_request() {
        let request = Request::new("把 100 美元分别换成人民币、日元和欧元");
        let places = request.places(CURRENCIES);
        assert_eq!(places.iter().map(|(c, _)| *c).collect::<Vec<_>>(), ["USD", "CNY", "JPY", "EUR"]);
        assert_eq!(request.lists(&places), [vec!["CNY", "JPY", "EUR"]]);
        let request = Request::new("Show the 2023-24 tables of La Liga and Bundesliga, then the NBA's.");
        let leagues = ["premier_league", "la_liga", "bundesliga", "nba"];
        assert_eq!(request.lists(&request.places(&leagues)), [vec!["la_liga", "bundesliga"]]);
    }

    #[test]
    fn named_choices_and_unclear_ones_are_left_alone() {
        for (question, args) in [
            // Named already.
            ("Convert 5 miles to km.", json!({"value": 5, "from_unit": "mile", "to_unit": "km"})),
            // Two named choices free for one place: which one is not clear.
            ("Convert 5 miles or 5 yards to metres and feet.", json!({"value": 5, "from_unit": "mm", "to_unit": "m"})),
            // Nothing named.
            ("Convert 5 of those to the other unit.", json!({"value": 5, "from_unit": "m", "to_unit": "km"})),
            // The one named choice is the other argument's.
            ("How long is 5 km?", json!({"value": 5, "from_unit": "m", "to_unit": "km"})),
        ] {
            let mut calls = vec![call(args.clone())];
            assert!(put_right(&mut calls, &convert(), question).is_empty(), "{question}");
            assert_eq!(calls[0].args, call(args).args, "{question}");
        }
    }
}
