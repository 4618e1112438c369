"""multi_turn follow-up cases, each written by hand: one or two finished turns (the user's
request, the calls, their results, the assistant's answer stating them), then a NEW user
question as the last message. Four kinds of new question:

- `other_tool(...)`: it needs a different function than the earlier turns used (the earlier
  turn is a distractor); the expected call has the values the new question states.
- `same_tool(...)`: the same function again with new values ("那成都呢？", "And Boston?"); the
  expected call has the new values plus those the question keeps from the earlier turn
  (the same unit, dates, cabin ...).
- `answered(...)`: the earlier results already answer it; the right decision is an answer
  with no call, `must_contain` holding facts from those results.
- `no_tool(...)`: no offered function fits (thanks, a general-knowledge question, an
  opinion, a request no function does). The answer line can only say "no call" for
  multi_turn as a final answer with `must_contain`, so the groups hold what any fitting
  reply says (a courtesy, the fact asked, a refusal, a word of caution); unlike the other
  final answers these need not come from the tool results.

Messages are written with the helpers of cases_multi.py. The split is fixed per case (the
first argument): the 315 earlier cases keep the split build.py spaced out for them, and
these 30 add 18 to dev and 12 to holdout with the same mix of kinds and languages.
"""

from cases_multi import ran, said, user

FOLLOW_UP = []

SPLITS = ("dev", "holdout")


def _add(split, kind, functions, messages, calls, final):
    assert split in SPLITS, split
    assert messages[-1][0] == "user" and any(k == "assistant" for k, _ in messages), "a follow-up ends in a new question"
    FOLLOW_UP.append({"functions": functions, "messages": messages, "calls": calls, "final": final,
                      "split": split, "kind": kind, "no_tool": kind == "no_tool"})


def other_tool(split, functions, messages, *calls):
    _add(split, "other_tool", functions, messages, list(calls), None)


def same_tool(split, functions, messages, *calls):
    _add(split, "same_tool", functions, messages, list(calls), None)


def answered(split, functions, messages, must_contain, example):
    _add(split, "answered", functions, messages, None, {"must_contain": must_contain, "example": example})


def no_tool(split, functions, messages, must_contain, example):
    _add(split, "no_tool", functions, messages, None, {"must_contain": must_contain, "example": example})


# ======== a different tool than the earlier turn used ========

other_tool("dev", ["weather.forecast", "weather.current", "currency.convert", "stocks.quote"],
           [user("What's the forecast for Seattle for the next 3 days?"),
            ran(("weather.forecast", {"city": "Seattle", "days": 3},
                 {"city": "Seattle", "unit": "celsius", "days": [
                     {"date": "2025-10-14", "high": 14, "low": 8, "condition": "rain"},
                     {"date": "2025-10-15", "high": 13, "low": 7, "condition": "showers"},
                     {"date": "2025-10-16", "high": 16, "low": 9, "condition": "partly cloudy"}]})),
            said("Seattle: rain on Oct 14 (8–14 °C), showers on Oct 15 (7–13 °C), then partly cloudy on Oct 16 (9–16 °C)."),
            user("Thanks. Also, how much is 300 USD in Canadian dollars (CAD) today?")],
           ("currency.convert", {"amount": 300.0, "from_currency": "USD", "to_currency": "CAD"}))
other_tool("dev", ["math.evaluate", "stocks.quote", "stocks.history", "currency.convert"],
           [user("帮我算一下 (1250 - 380) * 12 等于多少。"),
            ran(("math.evaluate", {"expression": "(1250 - 380) * 12"}, {"expression": "(1250 - 380) * 12", "result": 10440})),
            said("(1250 - 380) × 12 = 10440。"),
            user("好的。再帮我查一下苹果公司（AAPL）现在的股价。")],
           ("stocks.quote", {"symbol": "AAPL"}))
other_tool("holdout", ["flights.status", "flights.search", "reminders.create", "calendar.create_event"],
           [user("Is UA857 on time today?"),
            ran(("flights.status", {"flight_number": "UA857"},
                 {"flight_number": "UA857", "status": "delayed", "delay_minutes": 70, "departure_gate": "G98",
                  "scheduled_departure": "2025-05-14 11:05", "estimated_departure": "2025-05-14 12:15"})),
            said("UA857 is delayed by 70 minutes: it should now leave from gate G98 at 12:15 instead of 11:05."),
            user("Ugh. Set a reminder for 2025-05-14 09:45 that says \"Leave for SFO\".")],
           ("reminders.create", {"text": ["Leave for SFO", "Leave for SFO."], "remind_at": "2025-05-14 09:45"}))
other_tool("dev", ["translate.text", "translate.detect_language", "dictionary.define", "text.count_words"],
           [user("把“谢谢你的帮助”翻译成日语。"),
            ran(("translate.text", {"text": "谢谢你的帮助", "target_language": "ja"},
                 {"translation": "ご協力ありがとうございます", "source_language": "zh", "target_language": "ja"})),
            said("日语是：ご協力ありがとうございます。"),
            user("好。再帮我查一下英文单词 serendipity 的释义，要带例句。")],
           ("dictionary.define", {"word": "serendipity", "include_examples": True}))
other_tool("dev", ["health.bmi", "health.daily_calories", "health.find_doctor", "nutrition.lookup"],
           [user("I'm 1.68 m tall and weigh 74 kg. What's my BMI?"),
            ran(("health.bmi", {"weight_kg": 74.0, "height_m": 1.68}, {"bmi": 26.2, "category": "overweight"})),
            said("Your BMI is 26.2, which is in the overweight range (25 to 29.9)."),
            user("Okay. Can you find me a dermatologist in Austin who speaks Spanish?")],
           ("health.find_doctor", {"city": ["Austin", "Austin, TX"], "specialty": "dermatology", "language": "es"}))
other_tool("holdout", ["trains.search", "hotels.search", "car_rental.search", "flights.search"],
           [user("查一下 2025-04-05 从上海虹桥到杭州东的高铁，要 08:00 以后出发的。"),
            ran(("trains.search", {"from_station": "上海虹桥", "to_station": "杭州东", "date": "2025-04-05", "earliest_departure": "08:00"},
                 {"trains": [
                     {"train_number": "G7501", "depart": "08:12", "arrive": "09:05", "seat_class": "second", "price": 73.0, "seats_left": 46},
                     {"train_number": "G1373", "depart": "08:40", "arrive": "09:36", "seat_class": "second", "price": 73.0, "seats_left": 12},
                     {"train_number": "G7313", "depart": "09:05", "arrive": "10:02", "seat_class": "second", "price": 73.0, "seats_left": 0}]})),
            said("08:00 以后有三趟：G7501 08:12 开、09:05 到，二等座 73 元，余 46 张；G1373 08:40 开、09:36 到，余 12 张；G7313 09:05 开，已售罄。"),
            user("好的。再帮我找一下杭州的酒店，2025-04-05 入住、2025-04-07 退房，每晚不超过 150 美元，要含早餐。")],
           ("hotels.search", {"city": ["杭州", "Hangzhou"], "check_in": "2025-04-05", "check_out": "2025-04-07",
                              "max_price": 150.0, "amenities": [["breakfast"]]}))
other_tool("dev", ["k8s.get_pods", "k8s.rollout_restart", "logs.search", "monitor.cpu_usage"],
           [user("Are all the pods in the staging namespace running?"),
            ran(("k8s.get_pods", {"namespace": "staging"},
                 {"namespace": "staging", "pods": [
                     {"name": "auth-6c7d9b8f4-kq2lz", "status": "Running", "restarts": 0},
                     {"name": "gateway-5f8b7c9d6-p8mzr", "status": "Running", "restarts": 1},
                     {"name": "worker-7b9c5d4f8-t4xnv", "status": "Running", "restarts": 0}]})),
            said("Yes: all 3 pods in staging (auth, gateway and worker) are Running; gateway has restarted once."),
            user("Good. Now search the auth service's logs for \"token expired\" at warn level or above over the last 15 minutes.")],
           ("logs.search", {"service": "auth", "query": "token expired", "level": "warn", "since_minutes": 15}))
other_tool("holdout", ["sports.standings", "sports.schedule", "sports.match_result", "music.concerts"],
           [user("2025 赛季中超积分榜前三是谁？"),
            ran(("sports.standings", {"league": "csl", "season": "2025", "top": 3},
                 {"league": "csl", "season": "2025", "rows": [
                     {"position": 1, "team": "上海海港", "points": 58, "played": 26},
                     {"position": 2, "team": "成都蓉城", "points": 55, "played": 26},
                     {"position": 3, "team": "上海申花", "points": 54, "played": 26}]})),
            said("2025 赛季中超前三：上海海港 58 分，成都蓉城 55 分，上海申花 54 分（都已赛 26 场）。"),
            user("帮我看看成都蓉城接下来的 3 场比赛。")],
           ("sports.schedule", {"team": ["成都蓉城", "Chengdu Rongcheng"], "count": 3}))
other_tool("dev", ["recipes.search", "nutrition.lookup", "restaurants.book", "shop.search_products"],
           [user("Find me a vegetarian recipe with chickpeas and spinach that takes at most 30 minutes."),
            ran(("recipes.search", {"ingredients": ["chickpeas", "spinach"], "diet": "vegetarian", "max_minutes": 30},
                 {"recipes": [
                     {"title": "Chickpea and Spinach Curry", "minutes": 25, "servings": 4, "rating": 4.6},
                     {"title": "Garlicky Chickpeas with Spinach", "minutes": 15, "servings": 2, "rating": 4.4}]})),
            said("Two fit: Chickpea and Spinach Curry (25 minutes, serves 4, rated 4.6) and Garlicky Chickpeas with Spinach (15 minutes, serves 2, rated 4.4)."),
            user("Nice. How many calories are in 240 g of cooked chickpeas?")],
           ("nutrition.lookup", {"food": ["cooked chickpeas", "chickpeas"], "grams": 240.0}))
other_tool("holdout", ["files.list", "files.compress", "files.move", "files.read"],
           [user("What PDFs are in ~/Downloads/invoices?"),
            ran(("files.list", {"path": "~/Downloads/invoices", "pattern": "*.pdf"},
                 {"path": "~/Downloads/invoices", "count": 4,
                  "files": ["INV-2025-031.pdf", "INV-2025-032.pdf", "INV-2025-033.pdf", "receipt-hotel-lyon.pdf"]})),
            said("There are 4 PDFs: INV-2025-031.pdf, INV-2025-032.pdf, INV-2025-033.pdf and receipt-hotel-lyon.pdf."),
            user("Pack the whole ~/Downloads/invoices folder into ~/Desktop/invoices-q1.tar.gz as a tar.gz archive.")],
           ("files.compress", {"paths": [["~/Downloads/invoices"], ["~/Downloads/invoices/"]],
                               "archive_path": "~/Desktop/invoices-q1.tar.gz", "format": "tar.gz"}))
other_tool("dev", ["time.now", "time.convert_timezone", "calendar.create_event", "reminders.create"],
           [user("巴黎现在几点？"),
            ran(("time.now", {"timezone": "Europe/Paris"},
                 {"timezone": "Europe/Paris", "local_time": "2025-03-18 07:20", "utc_offset": "+01:00", "weekday": "Tuesday"})),
            said("巴黎现在是 3 月 18 日（周二）早上 7:20。"),
            user("帮我在日历里建一个日程：标题“和巴黎团队对齐进度”，2025-03-20 16:00 开始，时长 45 分钟。")],
           ("calendar.create_event", {"title": "和巴黎团队对齐进度", "date": "2025-03-20", "start_time": "16:00", "duration_minutes": 45}))
other_tool("holdout", ["currency.convert", "currency.history", "budget.add_expense", "tax.sales_tax"],
           [user("How much is 500 USD in euros?"),
            ran(("currency.convert", {"amount": 500.0, "from_currency": "USD", "to_currency": "EUR"},
                 {"amount": 500.0, "from_currency": "USD", "to_currency": "EUR", "rate": 0.9214, "result": 460.7})),
            said("500 USD is about 460.70 EUR (rate 0.9214)."),
            user("And in pounds?"),
            ran(("currency.convert", {"amount": 500.0, "from_currency": "USD", "to_currency": "GBP"},
                 {"amount": 500.0, "from_currency": "USD", "to_currency": "GBP", "rate": 0.7862, "result": 393.1})),
            said("500 USD is about 393.10 GBP (rate 0.7862)."),
            user("OK, I paid the deposit in euros. Log a 460.70 EUR housing expense dated 2025-02-01 with the note \"Airbnb deposit\".")],
           ("budget.add_expense", {"amount": 460.7, "currency": "EUR", "category": "housing", "date": "2025-02-01", "note": "Airbnb deposit"}))

# ======== the same tool with new values ========

same_tool("dev", ["weather.current", "weather.forecast", "weather.air_quality"],
          [user("What's the temperature in Phoenix right now, in Fahrenheit?"),
           ran(("weather.current", {"city": "Phoenix", "unit": "fahrenheit"},
                {"city": "Phoenix", "temperature": 104, "unit": "fahrenheit", "condition": "sunny", "humidity": 9, "wind_kph": 11})),
           said("It's 104 °F and sunny in Phoenix, humidity 9%."),
           user("And Las Vegas?"),
           ran(("weather.current", {"city": "Las Vegas", "unit": "fahrenheit"},
                {"city": "Las Vegas", "temperature": 99, "unit": "fahrenheit", "condition": "clear", "humidity": 12, "wind_kph": 16})),
           said("Las Vegas is at 99 °F with clear skies, humidity 12%."),
           user("What about Boston?")],
          ("weather.current", {"city": ["Boston", "Boston, MA"], "unit": "fahrenheit"}))
same_tool("holdout", ["unit.convert_weight", "unit.convert_length", "unit.convert_volume", "nutrition.lookup"],
          [user("5 斤是多少公斤？"),
           ran(("unit.convert_weight", {"value": 5.0, "from_unit": "jin", "to_unit": "kg"},
                {"value": 5.0, "from_unit": "jin", "to_unit": "kg", "result": 2.5})),
           said("5 斤等于 2.5 公斤。"),
           user("那 5 斤换算成磅是多少？")],
          ("unit.convert_weight", {"value": 5.0, "from_unit": "jin", "to_unit": "lb"}))
same_tool("dev", ["stocks.history", "stocks.quote", "currency.history"],
          [user("Show me Amazon's (AMZN) monthly prices from 01-02-2025 to 03-31-2025."),
           ran(("stocks.history", {"symbol": "AMZN", "start_date": "01-02-2025", "end_date": "03-31-2025", "interval": "monthly"},
                {"symbol": "AMZN", "currency": "USD", "bars": [
                    {"date": "2025-01-31", "open": 220.22, "close": 237.68},
                    {"date": "2025-02-28", "open": 234.17, "close": 212.28},
                    {"date": "2025-03-31", "open": 213.35, "close": 190.26}]})),
           said("AMZN closed at $237.68 in January, $212.28 in February and $190.26 in March 2025."),
           user("Same thing for MSFT, please.")],
          ("stocks.history", {"symbol": "MSFT", "start_date": "01-02-2025", "end_date": "03-31-2025", "interval": "monthly"}))
same_tool("holdout", ["flights.search", "flights.status", "hotels.search", "car_rental.search"],
          [user("Find business-class flights from SFO to JFK on 2025-07-03 for 2 passengers."),
           ran(("flights.search", {"origin": "SFO", "destination": "JFK", "depart_date": "2025-07-03", "passengers": 2, "cabin": "business"},
                {"flights": [
                    {"flight_number": "UA1916", "depart": "07:00", "arrive": "15:35", "price_per_person": 1289.0, "currency": "USD", "stops": 0},
                    {"flight_number": "AA20", "depart": "10:30", "arrive": "19:05", "price_per_person": 1412.0, "currency": "USD", "stops": 0},
                    {"flight_number": "DL431", "depart": "13:15", "arrive": "21:50", "price_per_person": 1356.0, "currency": "USD", "stops": 0}]})),
           said("Three nonstop options: UA1916 at 07:00 for $1,289 per person, DL431 at 13:15 for $1,356 and AA20 at 10:30 for $1,412."),
           user("Hmm, pricey. What about leaving on 2025-07-05 instead?")],
          ("flights.search", {"origin": "SFO", "destination": "JFK", "depart_date": "2025-07-05", "passengers": 2, "cabin": "business"}))
same_tool("dev", ["maps.nearby", "maps.directions", "maps.geocode"],
          [user("北京南站 500 米内有没有正在营业的药店？"),
           ran(("maps.nearby", {"location": "北京南站", "place_type": "pharmacy", "radius_m": 500, "open_now": True},
                {"places": [
                    {"name": "老百姓大药房（北京南站店）", "rating": 4.2, "distance_m": 230, "open_now": True},
                    {"name": "金象大药房", "rating": 4.5, "distance_m": 410, "open_now": True}]})),
           said("有两家正在营业：老百姓大药房（北京南站店），230 米；金象大药房，410 米，评分 4.5。"),
           user("那同样范围内的 ATM 呢？")],
          ("maps.nearby", {"location": "北京南站", "place_type": "atm", "radius_m": 500, "open_now": [True, "", False]}))
same_tool("dev", ["sports.player_stats", "sports.standings", "sports.schedule"],
          [user("How many assists has LeBron James averaged in the 2024-25 season?"),
           ran(("sports.player_stats", {"player": "LeBron James", "season": "2024-25", "stat": "assists"},
                {"player": "LeBron James", "season": "2024-25", "assists_per_game": 8.2, "games": 70})),
           said("LeBron James is averaging 8.2 assists per game over 70 games in 2024-25."),
           user("And his rebounds?")],
          ("sports.player_stats", {"player": "LeBron James", "season": "2024-25", "stat": "rebounds"}))
same_tool("dev", ["time.convert_timezone", "time.now", "time.days_between", "calendar.create_event"],
          [user("北京时间 2025-04-10 09:00 是洛杉矶几点？"),
           ran(("time.convert_timezone", {"datetime": "2025-04-10 09:00", "from_tz": "Asia/Shanghai", "to_tz": "America/Los_Angeles"},
                {"from": {"datetime": "2025-04-10 09:00", "timezone": "Asia/Shanghai"},
                 "datetime": "2025-04-09 18:00", "timezone": "America/Los_Angeles", "utc_offset": "-07:00"})),
           said("北京时间 4 月 10 日 09:00 是洛杉矶 4 月 9 日 18:00（前一天傍晚 6 点）。"),
           user("那同一时间换成伦敦是几点？")],
          ("time.convert_timezone", {"datetime": "2025-04-10 09:00", "from_tz": "Asia/Shanghai", "to_tz": "Europe/London"}))
same_tool("holdout", ["translate.text", "translate.detect_language", "dictionary.define"],
          [user("Translate \"Where is the nearest train station?\" into French, formal please."),
           ran(("translate.text", {"text": "Where is the nearest train station?", "target_language": "fr", "formality": "formal"},
                {"translation": "Où se trouve la gare la plus proche ?", "source_language": "en", "target_language": "fr"})),
           said("In formal French: « Où se trouve la gare la plus proche ? »"),
           user("And into German, also formal?")],
          ("translate.text", {"text": "Where is the nearest train station?", "target_language": "de",
                              "source_language": ["", "auto", "en"], "formality": "formal"}))

# ======== already answered by the earlier results ========

answered("dev", ["shop.search_products", "shop.add_to_cart", "shop.price_history", "shop.track_order"],
         [user("Search electronics for wireless earbuds under $100."),
          ran(("shop.search_products", {"query": "wireless earbuds", "category": "electronics", "max_price": 100.0},
               {"results": [
                   {"product_id": "SKU-41822", "name": "Soundcore Liberty 4 NC", "price": 79.99, "rating": 4.4},
                   {"product_id": "SKU-39017", "name": "JLab Go Air Pop", "price": 24.99, "rating": 4.1},
                   {"product_id": "SKU-45210", "name": "Jabra Elite 4", "price": 89.0, "rating": 4.6}]})),
          said("Three under $100: Soundcore Liberty 4 NC at $79.99 (rated 4.4), JLab Go Air Pop at $24.99 (4.1) and Jabra Elite 4 at $89.00 (4.6)."),
          user("Which one is rated highest?")],
         [["Jabra", "Elite 4", "SKU-45210"]],
         "The Jabra Elite 4 is rated highest, at 4.6, for $89.00.")
answered("holdout", ["weather.forecast", "weather.current", "weather.historical", "travel.attractions"],
         [user("广州未来 5 天天气怎么样？"),
          ran(("weather.forecast", {"city": "广州", "days": 5},
               {"city": "广州", "unit": "celsius", "days": [
                   {"date": "2025-06-17", "high": 32, "low": 26, "condition": "雷阵雨"},
                   {"date": "2025-06-18", "high": 33, "low": 27, "condition": "多云"},
                   {"date": "2025-06-19", "high": 35, "low": 28, "condition": "晴"},
                   {"date": "2025-06-20", "high": 31, "low": 26, "condition": "大雨"},
                   {"date": "2025-06-21", "high": 30, "low": 25, "condition": "中雨"}]})),
          said("广州未来 5 天：17 日雷阵雨 26–32°C，18 日多云 27–33°C，19 日晴 28–35°C，20 日大雨 26–31°C，21 日中雨 25–30°C。"),
          user("这几天里哪天最热？")],
         [["2025-06-19", "6月19日", "6 月 19 日", "19日", "19 日", "19号", "19 号", "06-19"], ["35"]],
         "6 月 19 日最热，晴，最高 35°C。")
answered("holdout", ["flights.search", "trains.search", "hotels.search", "car_rental.search"],
         [user("Compare flights from CDG to AMS with trains from Paris Gare du Nord to Amsterdam Centraal on 2025-05-09."),
          ran(("flights.search", {"origin": "CDG", "destination": "AMS", "depart_date": "2025-05-09"},
               {"flights": [
                   {"flight_number": "KL1224", "depart": "07:15", "arrive": "08:35", "price": 142.0, "currency": "EUR", "stops": 0},
                   {"flight_number": "AF1640", "depart": "12:30", "arrive": "13:50", "price": 168.0, "currency": "EUR", "stops": 0}]}),
              ("trains.search", {"from_station": "Paris Gare du Nord", "to_station": "Amsterdam Centraal", "date": "2025-05-09"},
               {"trains": [
                   {"train_number": "EST 9313", "operator": "Eurostar", "depart": "08:25", "arrive": "11:44", "seat_class": "second", "price": 89.0, "currency": "EUR"},
                   {"train_number": "EST 9321", "operator": "Eurostar", "depart": "10:25", "arrive": "13:44", "seat_class": "second", "price": 117.0, "currency": "EUR"}]})),
          said("Flights: KL1224 07:15 → 08:35 for €142 and AF1640 12:30 → 13:50 for €168. Trains: Eurostar EST 9313 08:25 → 11:44 for €89 and EST 9321 10:25 → 13:44 for €117."),
          user("So what's the cheapest option overall?")],
         [["EST 9313", "9313", "Eurostar"], ["89"]],
         "The cheapest is the Eurostar train EST 9313 at €89, leaving 08:25 and arriving 11:44.")
answered("dev", ["db.query", "db.list_tables", "db.backup"],
         [user("sales 库里按地区统计一下 2025 年第一季度的销售额。"),
          ran(("db.query", {"database": "sales",
                            "sql": "SELECT region, SUM(amount) AS revenue FROM orders WHERE order_date >= '2025-01-01' AND order_date < '2025-04-01' GROUP BY region ORDER BY revenue DESC"},
               {"columns": ["region", "revenue"], "rows": [["华东", 4821300.5], ["华南", 3967120.0], ["华北", 3105480.75], ["西南", 1288640.2]],
                "row_count": 4})),
          said("2025 年第一季度销售额：华东 4,821,300.50 元，华南 3,967,120.00 元，华北 3,105,480.75 元，西南 1,288,640.20 元。"),
          user("哪个地区最少？")],
         [["西南"], ["1288640.2", "1288640", "128.86", "128.9"]],
         "西南最少，第一季度销售额 1,288,640.20 元。")
answered("dev", ["email.search", "email.send", "contacts.lookup", "sms.send"],
         [user("Find emails about the Q3 invoice in all folders."),
          ran(("email.search", {"query": "Q3 invoice", "folder": "all"},
               {"messages": [
                   {"from": "Marta Ruiz <marta.ruiz@lumenprint.es>", "subject": "Q3 invoice – LP-2291", "date": "2025-10-06",
                    "snippet": "Please find attached our invoice LP-2291 for the Q3 print runs."},
                   {"from": "Accounts Payable <ap@ourco.com>", "subject": "Re: Q3 invoice – LP-2291", "date": "2025-10-09",
                    "snippet": "Approved. Payment is scheduled for 2025-10-20."},
                   {"from": "Marta Ruiz <marta.ruiz@lumenprint.es>", "subject": "Q3 invoice reminder", "date": "2025-10-14",
                    "snippet": "Just a friendly reminder that LP-2291 is due at the end of the month."}]})),
          said("Three emails: Marta Ruiz sent invoice LP-2291 on 2025-10-06, Accounts Payable approved it on 2025-10-09 and scheduled the payment, and Marta sent a reminder on 2025-10-14."),
          user("When is the payment scheduled?")],
         [["2025-10-20", "October 20", "October 20th", "Oct 20", "Oct 20th", "Oct. 20", "20 October", "20th of October", "10/20"]],
         "Accounts Payable scheduled the payment for 2025-10-20 (October 20).")

# ======== no tool fits the new question ========

no_tool("dev", ["shop.track_order", "shop.return_item", "shop.search_products"],
        [user("帮我查一下订单 112-7730914-5520618 的物流。"),
         ran(("shop.track_order", {"order_id": "112-7730914-5520618"},
              {"order_id": "112-7730914-5520618", "status": "out_for_delivery", "carrier": "京东物流", "location": "北京朝阳区望京营业部",
               "estimated_delivery": "2025-11-12"})),
         said("您的包裹正在派送中，目前在京东物流北京朝阳区望京营业部，预计 11 月 12 日送达。"),
         user("好的，谢谢你！")],
        [["客气", "不用谢", "不谢", "很高兴", "乐意", "荣幸", "随时", "祝", "welcome", "glad", "my pleasure", "no problem"]],
        "不客气！祝您收货顺利，有需要随时找我。")
no_tool("holdout", ["flights.search", "flights.status", "hotels.search", "travel.attractions"],
        [user("Find flights from SYD to MEL on 2025-10-03."),
         ran(("flights.search", {"origin": "SYD", "destination": "MEL", "depart_date": "2025-10-03"},
              {"flights": [
                  {"flight_number": "QF409", "depart": "07:00", "arrive": "08:35", "price": 189.0, "currency": "AUD", "stops": 0},
                  {"flight_number": "VA811", "depart": "09:30", "arrive": "11:05", "price": 164.0, "currency": "AUD", "stops": 0},
                  {"flight_number": "JQ506", "depart": "13:45", "arrive": "15:20", "price": 99.0, "currency": "AUD", "stops": 0}]})),
         said("Three nonstop flights on 2025-10-03: QF409 at 07:00 for A$189, VA811 at 09:30 for A$164 and JQ506 at 13:45 for A$99."),
         user("By the way, is Sydney the capital of Australia?")],
        [["Canberra", "堪培拉"]],
        "No. Sydney is Australia's largest city, but the capital is Canberra.")
no_tool("holdout", ["chem.element_info", "unit.convert_temperature", "physics.kinetic_energy"],
        [user("氢和氧的原子量分别是多少？"),
         ran(("chem.element_info", {"element": "H", "property": "atomic_mass"}, {"element": "H", "property": "atomic_mass", "value": 1.008, "unit": "u"}),
             ("chem.element_info", {"element": "O", "property": "atomic_mass"}, {"element": "O", "property": "atomic_mass", "value": 15.999, "unit": "u"})),
         said("氢的原子量约为 1.008，氧约为 15.999。"),
         user("顺便问一下，在标准大气压下，水的沸点是多少摄氏度？")],
        [["100"]],
        "在标准大气压下，水的沸点是 100 摄氏度（100°C）。")
no_tool("dev", ["maps.nearby", "maps.directions", "restaurants.book", "sms.send"],
        [user("Any restaurants open now within 400 m of Union Square, San Francisco?"),
         ran(("maps.nearby", {"location": "Union Square, San Francisco", "place_type": "restaurant", "radius_m": 400, "open_now": True},
              {"places": [
                  {"name": "Sears Fine Food", "rating": 4.4, "distance_m": 120, "open_now": True},
                  {"name": "Tony's Pizza Corner", "rating": 4.3, "distance_m": 260, "open_now": True},
                  {"name": "Kin Khao", "rating": 4.5, "distance_m": 340, "open_now": True}]})),
         said("Three are open now: Sears Fine Food (120 m, rated 4.4), Tony's Pizza Corner (260 m, 4.3) and Kin Khao (340 m, 4.5)."),
         user("Can you order a large pepperoni pizza from Tony's Pizza Corner for delivery to my hotel?")],
        [["can't", "can’t", "cannot", "can not", "unable", "not able", "don't have", "don’t have", "do not have", "not possible",
          "no way", "not available", "isn't available", "can only", "not support", "doesn't support", "does not support", "no tool", "no function", "无法", "不能", "没法", "没有办法"]],
        "Sorry, I can't place delivery orders: I can only book a table or get you directions. You could order from Tony's Pizza Corner by phone or through a delivery app.")
no_tool("dev", ["stocks.quote", "stocks.history", "currency.convert", "finance.compound_interest"],
        [user("What's Palantir (PLTR) trading at?"),
         ran(("stocks.quote", {"symbol": "PLTR"}, {"symbol": "PLTR", "price": 118.42, "currency": "USD", "change_percent": 6.85})),
         said("PLTR is at $118.42, up 6.85% today."),
         user("Wow. Do you think I should put all my savings into it?")],
        [["risk", "risky", "risks", "diversify", "diversified", "diversification", "volatile", "volatility", "financial advice",
          "financial advisor", "financial adviser", "eggs in one basket", "风险", "分散"]],
        "I wouldn't: putting all your savings into one stock is very risky, and PLTR is volatile. Diversify, keep an emergency fund, and talk to a financial advisor before a big move.")
