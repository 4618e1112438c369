"""multi_turn cases, each written by hand: a conversation that already holds tool calls and
their results, and the right next decision.

A case is a list of messages: `user(text)`, `ran((name, args, result), ...)` (one
assistant message with those calls, then one tool message per call, in order; a result is
the function's output, or `Failed(text)` for an error), `said(text)` (an assistant
answer), ending where the model must decide. Two kinds:

- `answer(...)`: the results answer the request, so the right decision is an answer with
  no call; `must_contain` lists groups of alternatives (every group required, any one of
  its alternatives enough; numbers match by value, so "22" also accepts "22.0") and
  `example` is a right answer as a person would write it.
- `next_call(...)`: the results leave work to do; the expected calls are written like the
  other categories' (a list value is the accepted values).

The facts an answer must contain come from the tool results, never from the question, so
an answer that restates the question fails.
"""

MULTI_TURN = []


class Failed:
    def __init__(self, error):
        self.error = error


def user(text):
    return ("user", text)


def said(text):
    return ("assistant", text)


def ran(*calls):
    return ("calls", calls)


def answer(functions, messages, must_contain, example):
    MULTI_TURN.append({"functions": functions, "messages": messages, "calls": None,
                       "final": {"must_contain": must_contain, "example": example}})


def next_call(functions, messages, *calls):
    MULTI_TURN.append({"functions": functions, "messages": messages, "calls": list(calls), "final": None})


# ---- weather ----
answer(["weather.current", "weather.forecast", "weather.air_quality"],
       [user("What's the weather in Vancouver right now?"),
        ran(("weather.current", {"city": "Vancouver"},
             {"city": "Vancouver", "temperature": 11.5, "unit": "celsius", "condition": "light rain", "humidity": 87, "wind_kph": 14}))],
       [["11.5"], ["rain", "drizzle"]],
       "It's 11.5 °C with light rain in Vancouver right now, humidity 87%.")
answer(["weather.current", "weather.forecast", "weather.historical"],
       [user("北京和上海现在天气怎么样？"),
        ran(("weather.current", {"city": "北京"}, {"city": "北京", "temperature": 22, "unit": "celsius", "condition": "晴", "humidity": 30}),
            ("weather.current", {"city": "上海"}, {"city": "上海", "temperature": 18, "unit": "celsius", "condition": "小雨", "humidity": 88}))],
       [["22"], ["晴", "sunny", "clear"], ["18"], ["雨", "rain"]],
       "北京现在晴，22°C；上海小雨，18°C，湿度 88%。")
next_call(["weather.current", "weather.historical", "weather.forecast"],
          [user("How was the weather in Denver on July 4, 2022?"),
           ran(("weather.historical", {"city": "Denver", "date": "07/04/2022"},
                Failed("invalid date '07/04/2022': expected YYYY-MM-DD")))],
          ("weather.historical", {"city": ["Denver", "Denver, CO"], "date": "2022-07-04"}))
answer(["weather.forecast", "weather.current", "travel.attractions"],
       [user("帮我查一下东京和大阪未来 3 天的天气。"),
        ran(("weather.forecast", {"city": "东京", "days": 3},
             {"city": "东京", "unit": "celsius", "days": [
                 {"date": "2025-04-11", "high": 17, "low": 9, "condition": "多云"},
                 {"date": "2025-04-12", "high": 15, "low": 10, "condition": "小雨"},
                 {"date": "2025-04-13", "high": 19, "low": 11, "condition": "晴"}]}),
            ("weather.forecast", {"city": "大阪", "days": 3},
             {"city": "大阪", "unit": "celsius", "days": [
                 {"date": "2025-04-11", "high": 18, "low": 10, "condition": "小雨"},
                 {"date": "2025-04-12", "high": 20, "low": 12, "condition": "晴"},
                 {"date": "2025-04-13", "high": 16, "low": 11, "condition": "中雨"}]})),
        said("东京：11 日多云 9–17°C，12 日小雨 10–15°C，13 日晴 11–19°C。大阪：11 日小雨 10–18°C，12 日晴 12–20°C，13 日中雨 11–16°C。"),
        user("那这三天里哪天去大阪不会下雨？")],
       [["2025-04-12", "4月12日", "4 月 12 日", "12日", "12 日", "12号", "12 号"]],
       "4 月 12 日，大阪那天是晴天（12–20°C），另外两天都有雨。")
next_call(["weather.air_quality", "weather.current", "weather.forecast"],
          [user("北京今天空气质量怎么样？"),
           ran(("weather.air_quality", {"city": "北京"}, {"city": "北京", "aqi": 156, "level": "中度污染", "pm2.5": 118, "pm10": 171})),
           said("北京当前 AQI 为 156，属于中度污染，PM2.5 为 118 μg/m³。"),
           user("那成都呢？")],
          ("weather.air_quality", {"city": ["成都", "Chengdu"]}))

# ---- math ----
answer(["math.factorial", "math.gcd", "math.lcm", "math.prime_factors"],
       [user("分别算一下 10 的阶乘、96 和 150 的最大公约数，以及 8、12、18 的最小公倍数。"),
        ran(("math.factorial", {"number": 10}, {"number": 10, "result": 3628800}),
            ("math.gcd", {"a": 96, "b": 150}, {"a": 96, "b": 150, "result": 6}),
            ("math.lcm", {"numbers": [8, 12, 18]}, {"numbers": [8, 12, 18], "result": 72}))],
       [["3628800"], ["6"], ["72"]],
       "10! = 3,628,800；96 和 150 的最大公约数是 6；8、12、18 的最小公倍数是 72。")
answer(["tax.sales_tax", "currency.convert", "finance.compound_interest"],
       [user("A laptop costs $1,849.00 before tax and the rate here is 7.25%. How much is the tax, and what do I pay in total?"),
        ran(("tax.sales_tax", {"amount": 1849.0, "rate_percent": 7.25},
             {"amount": 1849.0, "rate_percent": 7.25, "tax": 134.05, "total": 1983.05}))],
       [["134.05"], ["1983.05"]],
       "The tax is $134.05, so you pay $1,983.05 in total.")

# ---- units ----
answer(["unit.convert_length", "unit.convert_weight", "unit.convert_volume"],
       [user("半程马拉松 13.1 英里，合多少公里？"),
        ran(("unit.convert_length", {"value": 13.1, "from_unit": "mile", "to_unit": "km"},
             {"value": 13.1, "from_unit": "mile", "to_unit": "km", "result": 21.08241}))],
       [["21.08241", "21.0824", "21.082", "21.08", "21.1"]],
       "13.1 英里约等于 21.08 公里（21.08241 km）。")
next_call(["unit.convert_volume", "unit.convert_length", "unit.convert_weight"],
          [user("帮我把 2.5 杯换算成毫升。"),
           ran(("unit.convert_volume", {"value": 2.5, "from_unit": "cup", "to_unit": "ml"},
                {"value": 2.5, "from_unit": "cup", "to_unit": "ml", "result": 591.47})),
           said("2.5 杯约等于 591.47 毫升。"),
           user("那 1 加仑呢？也换成毫升。")],
          ("unit.convert_volume", {"value": 1.0, "from_unit": "gallon", "to_unit": "ml"}))

# ---- money ----
answer(["stocks.quote", "stocks.history", "currency.convert"],
       [user("Where are TSLA, AMD and NVDA trading right now?"),
        ran(("stocks.quote", {"symbol": "TSLA"}, {"symbol": "TSLA", "price": 248.5, "currency": "USD", "change_percent": -1.42}),
            ("stocks.quote", {"symbol": "AMD"}, {"symbol": "AMD", "price": 162.37, "currency": "USD", "change_percent": 0.35}),
            ("stocks.quote", {"symbol": "NVDA"}, {"symbol": "NVDA", "price": 887.89, "currency": "USD", "change_percent": 3.06}))],
       [["248.5"], ["162.37"], ["887.89"]],
       "TSLA is at $248.50 (-1.42%), AMD at $162.37 (+0.35%) and NVDA at $887.89 (+3.06%).")
next_call(["currency.convert", "budget.add_expense", "currency.history"],
          [user("How much is 1,200 EUR in yen? Then log that as a shopping expense in JPY dated 2025-03-14."),
           ran(("currency.convert", {"amount": 1200.0, "from_currency": "EUR", "to_currency": "JPY"},
                {"amount": 1200.0, "from_currency": "EUR", "to_currency": "JPY", "rate": 161.42, "result": 193704.0}))],
          ("budget.add_expense", {"amount": 193704.0, "currency": "JPY", "category": "shopping", "date": "2025-03-14"}))
answer(["loan.monthly_payment", "finance.compound_interest", "tax.sales_tax"],
       [user("Compare the monthly payment on a $400,000 loan at 6.1% over 30 years with the same loan over 15 years."),
        ran(("loan.monthly_payment", {"principal": 400000.0, "annual_rate": 6.1, "years": 30},
             {"monthly_payment": 2424.01, "total_paid": 872643.6, "total_interest": 472643.6}),
            ("loan.monthly_payment", {"principal": 400000.0, "annual_rate": 6.1, "years": 15},
             {"monthly_payment": 3396.6, "total_paid": 611388.0, "total_interest": 211388.0}))],
       [["2424.01", "2424"], ["3396.6", "3397"]],
       "Over 30 years you'd pay $2,424.01 a month; over 15 years $3,396.60 a month, but about $261,000 less interest in total.")
answer(["currency.convert", "currency.history", "stocks.quote"],
       [user("I have 250 GBP left over. What is that in USD, EUR and HKD today?"),
        ran(("currency.convert", {"amount": 250.0, "from_currency": "GBP", "to_currency": "USD"}, {"rate": 1.2684, "result": 317.1}),
            ("currency.convert", {"amount": 250.0, "from_currency": "GBP", "to_currency": "EUR"}, {"rate": 1.1692, "result": 292.3}),
            ("currency.convert", {"amount": 250.0, "from_currency": "GBP", "to_currency": "HKD"}, {"rate": 9.9112, "result": 2477.8}))],
       [["317.1"], ["292.3"], ["2477.8"]],
       "250 GBP is about 317.10 USD, 292.30 EUR or 2,477.80 HKD today.")
next_call(["stocks.quote", "stocks.history", "currency.convert"],
          [user("腾讯（0700.HK）现在多少钱？再查一下它 2025 年 1 月 2 日到 3 月 31 日的周线。"),
           ran(("stocks.quote", {"symbol": "0700.HK"}, {"symbol": "0700.HK", "price": 487.2, "currency": "HKD", "change_percent": 0.87}))],
          ("stocks.history", {"symbol": "0700.HK", "start_date": "01-02-2025", "end_date": "03-31-2025", "interval": "weekly"}))

# ---- travel ----
answer(["flights.status", "flights.search", "time.now"],
       [user("对比一下 CZ3101 和 HU7601 航班今天的状态。"),
        ran(("flights.status", {"flight_number": "CZ3101"},
             {"flight_number": "CZ3101", "status": "delayed", "delay_minutes": 45, "departure_gate": "E12", "estimated_departure": "2025-03-08 14:25"}),
            ("flights.status", {"flight_number": "HU7601"},
             {"flight_number": "HU7601", "status": "on_time", "delay_minutes": 0, "departure_gate": "D07", "estimated_departure": "2025-03-08 13:10"}))],
       [["延误", "晚点", "delayed"], ["45"], ["准点", "正点", "按时", "on time", "on_time"]],
       "CZ3101 延误 45 分钟，预计 14:25 从 E12 登机口起飞；HU7601 准点，13:10 从 D07 起飞。")
answer(["hotels.search", "flights.search", "travel.attractions"],
       [user("Find me a hotel in Lisbon from 2025-09-12 to 2025-09-15 with a pool. Which one is the cheapest?"),
        ran(("hotels.search", {"city": "Lisbon", "check_in": "2025-09-12", "check_out": "2025-09-15", "amenities": ["pool"]},
             {"results": [
                 {"name": "Memmo Príncipe Real", "price_per_night": 212.0, "rating": 4.7, "amenities": ["pool", "wifi", "breakfast"]},
                 {"name": "Lisboa Pessoa Hotel", "price_per_night": 168.0, "rating": 4.5, "amenities": ["pool", "wifi"]},
                 {"name": "Corinthia Lisbon", "price_per_night": 245.0, "rating": 4.6, "amenities": ["pool", "gym", "wifi", "parking"]}]}))],
       [["Pessoa"], ["168"]],
       "The cheapest with a pool is the Lisboa Pessoa Hotel at $168 a night (rated 4.5).")
next_call(["music.concerts", "maps.directions", "calendar.create_event"],
          [user("Look up Adele's upcoming concerts in London, then get me driving directions from King's Cross, London to the venue of the first one."),
           ran(("music.concerts", {"artist": "Adele", "city": "London"},
                {"artist": "Adele", "concerts": [
                    {"date": "2025-08-30", "venue": "Wembley Stadium", "city": "London"},
                    {"date": "2025-08-31", "venue": "Wembley Stadium", "city": "London"}]}))],
          ("maps.directions", {"origin": ["King's Cross, London", "King's Cross"],
                               "destination": ["Wembley Stadium", "Wembley Stadium, London"], "mode": ["driving", ""]}))
next_call(["maps.reverse_geocode", "maps.nearby", "maps.geocode"],
          [user("我现在在 39.9149, 116.4103，附近有什么正在营业的咖啡馆？"),
           ran(("maps.reverse_geocode", {"latitude": 39.9149, "longitude": 116.4103},
                {"address": "北京市东城区王府井大街255号", "district": "东城区", "city": "北京"}))],
          ("maps.nearby", {"location": ["北京市东城区王府井大街255号"], "place_type": "cafe", "open_now": True}))
next_call(["maps.nearby", "restaurants.book", "maps.directions"],
          [user("帮我在外滩附近找评分最高的餐厅，然后订 2025-05-20 晚上 7 点 4 个人的位子。"),
           ran(("maps.nearby", {"location": "外滩", "place_type": "restaurant"},
                {"places": [
                    {"name": "老吉士酒家", "rating": 4.4, "distance_m": 950, "open_now": True},
                    {"name": "外滩三号·云悦", "rating": 4.6, "distance_m": 180, "open_now": True},
                    {"name": "南京大牌档", "rating": 4.1, "distance_m": 620, "open_now": True}]}))],
          ("restaurants.book", {"restaurant": "外滩三号·云悦", "date": "2025-05-20", "time": "19:00", "party_size": 4}))

# ---- time and calendar ----
answer(["time.now", "time.convert_timezone", "time.days_between"],
       [user("纽约现在几点？"),
        ran(("time.now", {"timezone": "America/New_York"},
             {"timezone": "America/New_York", "local_time": "2025-03-08 21:47", "utc_offset": "-05:00", "weekday": "Saturday"}))],
       [["21:47", "9:47", "9点47", "9 点 47"]],
       "纽约现在是 3 月 8 日（周六）晚上 9:47，即 21:47。")
next_call(["calendar.list_events", "calendar.cancel_event", "calendar.create_event"],
          [user("Cancel my dentist appointment between 2025-06-09 and 2025-06-13."),
           ran(("calendar.list_events", {"start_date": "2025-06-09", "end_date": "2025-06-13", "keyword": "dentist"},
                {"events": [{"id": "evt_5531", "title": "Dentist – Dr. Okafor", "date": "2025-06-11", "start_time": "08:30", "attendees": []}]}))],
          ("calendar.cancel_event", {"event_id": "evt_5531"}))

# ---- messaging ----
next_call(["contacts.lookup", "email.send", "sms.send"],
          [user("帮我查一下 Anna Schmidt 的邮箱，然后给她发邮件，主题“周五会议改期”，内容“会议改到下周一上午10点。”"),
           ran(("contacts.lookup", {"name": "Anna Schmidt", "field": "email"},
                {"name": "Anna Schmidt", "email": "anna.schmidt@nordwerk.de", "company": "Nordwerk GmbH"}))],
          ("email.send", {"to": [["anna.schmidt@nordwerk.de"]], "subject": "周五会议改期", "body": "会议改到下周一上午10点。"}))
next_call(["email.search", "sms.send", "contacts.lookup"],
          [user("Find Priya's latest email about the offsite and text her at the number in it: \"I'll be there\"."),
           ran(("email.search", {"query": "Priya offsite"},
                {"messages": [{"from": "Priya Nair <priya.nair@corp.com>", "subject": "Offsite venue confirmed", "date": "2025-04-02",
                               "snippet": "We're at the Harbor Loft on the 17th. Questions? Call or text me on +14155550132."}]}))],
          ("sms.send", {"phone_number": "+14155550132", "message": ["I'll be there", "I'll be there."]}))

# ---- shopping ----
next_call(["shop.search_products", "shop.add_to_cart", "shop.price_history"],
          [user("Find the cheapest USB-C hub under $40 in electronics and add two of them to my cart."),
           ran(("shop.search_products", {"query": "USB-C hub", "category": "electronics", "max_price": 40.0, "sort_by": "price_asc"},
                {"results": [
                    {"product_id": "SKU-20417", "name": "7-in-1 USB-C Hub", "price": 24.99, "rating": 4.3},
                    {"product_id": "SKU-33108", "name": "USB-C Hub Pro", "price": 36.5, "rating": 4.7}]}))],
          ("shop.add_to_cart", {"product_id": "SKU-20417", "quantity": 2}))
answer(["shop.track_order", "shop.return_item", "shop.search_products"],
       [user("我的订单 114-3941689-8772232 到哪了？"),
        ran(("shop.track_order", {"order_id": "114-3941689-8772232"},
             {"order_id": "114-3941689-8772232", "status": "in_transit", "carrier": "顺丰速运", "location": "杭州转运中心",
              "estimated_delivery": "2025-03-16"}))],
       [["杭州"], ["2025-03-16", "3月16日", "3 月 16 日", "16日", "16 日", "16号"]],
       "您的包裹正在运输中，目前在顺丰杭州转运中心，预计 3 月 16 日送达。")

# ---- language ----
next_call(["translate.detect_language", "translate.text", "dictionary.define"],
          [user("What language is 'Onde fica a farmácia mais próxima?' in? Translate it into English."),
           ran(("translate.detect_language", {"text": "Onde fica a farmácia mais próxima?"}, {"language": "pt", "confidence": 0.98}))],
          ("translate.text", {"text": "Onde fica a farmácia mais próxima?", "target_language": "en", "source_language": ["pt", "auto", ""]}))

# ---- databases, devops, files ----
answer(["db.query", "db.list_tables", "db.backup"],
       [user("How many orders were placed in February 2025? The data is in the shop database."),
        ran(("db.query", {"database": "shop", "sql": "SELECT COUNT(*) FROM orders WHERE created_at >= '2025-02-01' AND created_at < '2025-03-01'"},
             {"columns": ["count"], "rows": [[4817]], "row_count": 1}))],
       [["4817"]],
       "4,817 orders were placed in February 2025.")
next_call(["db.list_tables", "db.query", "db.create_table"],
          [user("growth 库里有哪些表？把用户表的前 10 行查出来给我看看。"),
           ran(("db.list_tables", {"database": "growth"}, {"database": "growth", "schema": "public", "tables": ["events", "sessions", "app_users", "daily_metrics"]}))],
          ("db.query", {"database": "growth",
                        "sql": ["SELECT * FROM app_users LIMIT 10", "SELECT * FROM app_users LIMIT 10;", "SELECT * FROM public.app_users LIMIT 10",
                                "SELECT * FROM app_users", "SELECT * FROM app_users;"],
                        "limit": [10, ""]}))
next_call(["k8s.get_pods", "k8s.rollout_restart", "k8s.scale_deployment"],
          [user("Some pods in the payments namespace are failing. Restart the deployment they belong to."),
           ran(("k8s.get_pods", {"namespace": "payments", "status": "Failed"},
                {"namespace": "payments", "pods": [
                    {"name": "ledger-api-7d9f8c6b5-x2kqp", "status": "Failed", "restarts": 7, "labels": {"app": "ledger-api"}, "owner": "deployment/ledger-api"}]}))],
          ("k8s.rollout_restart", {"deployment": "ledger-api", "namespace": "payments"}))
next_call(["logs.search", "k8s.scale_deployment", "k8s.rollout_restart"],
          [user("Check the checkout service's error logs from the last 30 minutes. If it is running out of capacity, scale the checkout deployment in the shop namespace to 8 replicas."),
           ran(("logs.search", {"service": "checkout", "query": "error", "level": "error", "since_minutes": 30},
                {"count": 38, "hits": [
                    {"time": "2025-03-08T10:41:07Z", "level": "error", "message": "upstream pool exhausted: 200/200 workers busy, request queued 4.8s"},
                    {"time": "2025-03-08T10:40:55Z", "level": "error", "message": "timeout after 5000ms waiting for a free worker"}]}))],
          ("k8s.scale_deployment", {"deployment": "checkout", "replicas": 8, "namespace": "shop"}))
next_call(["monitor.cpu_usage", "k8s.rollout_restart", "k8s.scale_deployment"],
          [user("Check the CPU on host web-03. If it is above 90%, restart the web deployment in the prod namespace."),
           ran(("monitor.cpu_usage", {"host": "web-03"}, {"host": "web-03", "cpu_percent": 97.2, "window_minutes": 5}))],
          ("k8s.rollout_restart", {"deployment": "web", "namespace": "prod"}))
answer(["monitor.cpu_usage", "k8s.rollout_restart", "logs.search"],
       [user("Check the CPU on host db-07 and restart the db deployment in the prod namespace only if it is above 90%."),
        ran(("monitor.cpu_usage", {"host": "db-07"}, {"host": "db-07", "cpu_percent": 41.5, "window_minutes": 5}))],
       [["41.5"]],
       "db-07 is at 41.5% CPU over the last 5 minutes, well under 90%, so I did not restart the db deployment.")
next_call(["files.search_text", "files.read", "files.list"],
          [user("Find the file in ~/projects/atlas that mentions 'retention policy' and show me what it says."),
           ran(("files.search_text", {"directory": "~/projects/atlas", "text": "retention policy"},
                {"count": 1, "matches": [{"path": "~/projects/atlas/docs/data-retention.md", "line": 12, "snippet": "## Retention policy"}]}))],
          ("files.read", {"path": "~/projects/atlas/docs/data-retention.md"}))
answer(["files.disk_usage", "files.list", "files.compress"],
       [user("看看 ./logs 目录占了多少空间，再数一下里面有多少个 .gz 文件。"),
        ran(("files.disk_usage", {"path": "./logs"}, {"path": "./logs", "size": "3.4G", "bytes": 3650722201}),
            ("files.list", {"path": "./logs", "pattern": "*.gz"},
             {"path": "./logs", "count": 7, "files": ["app-0301.log.gz", "app-0302.log.gz", "app-0303.log.gz", "app-0304.log.gz",
                                                      "app-0305.log.gz", "app-0306.log.gz", "app-0307.log.gz"]}))],
       [["3.4"], ["7", "七"]],
       "./logs 目录占用 3.4G，里面有 7 个 .gz 文件（app-0301 到 app-0307）。")

# ---- health, science, education ----
answer(["health.bmi", "health.daily_calories", "nutrition.lookup"],
       [user("帮我算下 BMI：身高 175 厘米，体重 68 公斤。"),
        ran(("health.bmi", {"weight_kg": 68.0, "height_m": 1.75}, {"bmi": 22.2, "category": "normal"}))],
       [["22.2"], ["正常", "normal", "健康"]],
       "你的 BMI 是 22.2，属于正常范围。")
answer(["nutrition.lookup", "health.daily_calories", "recipes.search"],
       [user("How many calories are in 150 g of cooked rice, and in 120 g of chicken breast?"),
        ran(("nutrition.lookup", {"food": "cooked rice", "grams": 150.0}, {"food": "cooked rice", "grams": 150, "calories": 195, "protein_g": 4.1}),
            ("nutrition.lookup", {"food": "chicken breast", "grams": 120.0}, {"food": "chicken breast", "grams": 120, "calories": 198, "protein_g": 37.2}))],
       [["195"], ["198"]],
       "150 g of cooked rice has about 195 kcal and 120 g of chicken breast about 198 kcal.")
answer(["chem.element_info", "physics.kinetic_energy", "unit.convert_temperature"],
       [user("铁的熔点和密度分别是多少？"),
        ran(("chem.element_info", {"element": "Fe", "property": "melting_point"}, {"element": "Fe", "property": "melting_point", "value": 1538, "unit": "°C"}),
            ("chem.element_info", {"element": "Fe", "property": "density"}, {"element": "Fe", "property": "density", "value": 7.874, "unit": "g/cm³"}))],
       [["1538"], ["7.874", "7.87"]],
       "铁的熔点是 1538 °C，密度是 7.874 g/cm³。")
answer(["library.search_books", "edu.search_courses", "podcasts.search"],
       [user("图书馆里《球状闪电》现在能借吗？顺便找一门免费的中文天文学入门课。"),
        ran(("library.search_books", {"query": "球状闪电", "language": "zh"},
             {"books": [{"title": "球状闪电", "author": "刘慈欣", "available_copies": 2, "location": "三楼 I247.5"}]}),
            ("edu.search_courses", {"topic": "天文学", "level": "beginner", "language": "zh", "free_only": True},
             {"courses": [{"title": "天文学导论", "provider": "北京大学", "weeks": 8, "free": True}]}))],
       [["2", "两"], ["天文学导论"]],
       "《球状闪电》现在有 2 本可借，在三楼 I247.5；免费的中文入门课可以看北京大学的《天文学导论》，共 8 周。")

# ---- sports ----
answer(["sports.match_result", "sports.schedule", "sports.standings"],
       [user("How did Arsenal do on 2025-02-22?"),
        ran(("sports.match_result", {"team": "Arsenal", "date": "2025-02-22"},
             {"team": "Arsenal", "opponent": "West Ham United", "score": "0-1", "result": "loss", "venue": "home"}))],
       [["West Ham"], ["lost", "loss", "defeat", "beaten", "0-1", "0–1", "1-0"]],
       "Arsenal lost 0-1 at home to West Ham United.")
answer(["sports.standings", "sports.player_stats", "sports.schedule"],
       [user("Who is top of the 2024-25 Premier League, and how many goals has Mohamed Salah scored this season?"),
        ran(("sports.standings", {"league": "premier_league", "season": "2024-25", "top": 1},
             {"league": "premier_league", "season": "2024-25", "rows": [{"position": 1, "team": "Liverpool", "points": 70, "played": 29}]}),
            ("sports.player_stats", {"player": "Mohamed Salah", "season": "2024-25", "stat": "goals"},
             {"player": "Mohamed Salah", "season": "2024-25", "goals": 27}))],
       [["Liverpool"], ["27"]],
       "Liverpool lead with 70 points from 29 games, and Salah has scored 27 goals.")
