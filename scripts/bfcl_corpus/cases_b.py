"""parallel, parallel_multiple and irrelevance cases, each written by hand (same
conventions as cases_a)."""

PARALLEL = []
PARALLEL_MULTIPLE = []
IRRELEVANCE = []


def parallel(question, name, *calls):
    assert 2 <= len(calls) <= 4
    PARALLEL.append({"question": question, "functions": [name], "calls": [(name, c) for c in calls]})


def parallel_multiple(question, functions, *calls):
    assert 2 <= len(calls) <= 4 and len({n for n, _ in calls}) >= 2
    assert all(n in functions for n, _ in calls)
    PARALLEL_MULTIPLE.append({"question": question, "functions": functions, "calls": list(calls)})


def irrelevance(question, functions):
    IRRELEVANCE.append({"question": question, "functions": functions, "calls": None})


# ---- parallel: one function, 2-4 calls ----
parallel("What's the weather right now in Madrid, Athens and Cairo?", "weather.current",
         {"city": ["Madrid", "Madrid, Spain"]}, {"city": ["Athens", "Athens, Greece"]}, {"city": ["Cairo", "Cairo, Egypt"]})
parallel("分别查询北京和上海未来 3 天的天气预报。", "weather.forecast",
         {"city": ["北京", "Beijing"], "days": 3}, {"city": ["上海", "Shanghai"], "days": 3})
parallel("Compute the factorials of 8, 12 and 15.", "math.factorial", {"number": 8}, {"number": 12}, {"number": 15})
parallel("Convert 10 km and 42.195 km to miles.", "unit.convert_length",
         {"value": 10.0, "from_unit": "km", "to_unit": "mile"}, {"value": 42.195, "from_unit": "km", "to_unit": "mile"})
parallel("Convert 100°F, 0°F and -40°F to Celsius.", "unit.convert_temperature",
         {"value": 100.0, "from_scale": "fahrenheit", "to_scale": "celsius"}, {"value": 0.0, "from_scale": "fahrenheit", "to_scale": "celsius"},
         {"value": -40.0, "from_scale": "fahrenheit", "to_scale": "celsius"})
parallel("把 100 美元分别换成人民币、日元和欧元。", "currency.convert",
         {"amount": 100.0, "from_currency": "USD", "to_currency": "CNY"}, {"amount": 100.0, "from_currency": "USD", "to_currency": "JPY"},
         {"amount": 100.0, "from_currency": "USD", "to_currency": "EUR"})
parallel("Get me the latest quotes for AAPL, MSFT, GOOGL and AMZN.", "stocks.quote",
         {"symbol": "AAPL"}, {"symbol": "MSFT"}, {"symbol": "GOOGL"}, {"symbol": "AMZN"})
parallel("成都和西安现在的空气质量怎么样？只看 PM10。", "weather.air_quality",
         {"city": ["成都", "Chengdu"], "pollutant": "pm10"}, {"city": ["西安", "Xi'an", "Xian"], "pollutant": "pm10"})
parallel("Evaluate 15 * (4 + 6) and (100 - 36) / 8.", "math.evaluate",
         {"expression": ["15 * (4 + 6)", "15*(4+6)", "15 * (4+6)"]}, {"expression": ["(100 - 36) / 8", "(100-36)/8", "(100 - 36)/8"]})
parallel("求 48 与 180 的最大公约数，以及 1071 与 462 的最大公约数。", "math.gcd", {"a": 48, "b": 180}, {"a": 1071, "b": 462})
parallel("Is 221 prime? And what about 223?", "math.is_prime", {"number": 221}, {"number": 223})
parallel("分别分解 84 和 945 的质因数。", "math.prime_factors", {"number": 84}, {"number": 945})
parallel("What are the areas of circles with radius 3 m and 4.5 m?", "geometry.circle_area",
         {"radius": 3.0, "unit": ["m", ""]}, {"radius": 4.5, "unit": ["m", ""]})
parallel("分别计算 5000 元和 20000 元存 5 年、年利率 3%、每年复利一次的本息和。", "finance.compound_interest",
         {"principal": 5000.0, "rate": 0.03, "years": 5.0, "compounds_per_year": 1}, {"principal": 20000.0, "rate": 0.03, "years": 5.0, "compounds_per_year": 1})
parallel("What's the monthly payment on a $300,000 loan at 6.5% over 30 years, and on the same loan over 15 years?", "loan.monthly_payment",
         {"principal": 300000.0, "annual_rate": 6.5, "years": 30}, {"principal": 300000.0, "annual_rate": 6.5, "years": 15})
parallel("Search one-way economy flights PVG to SIN on 2025-07-01 and SIN to PVG on 2025-07-08.", "flights.search",
         {"origin": "PVG", "destination": "SIN", "depart_date": "2025-07-01", "cabin": ["economy", ""]},
         {"origin": "SIN", "destination": "PVG", "depart_date": "2025-07-08", "cabin": ["economy", ""]})
parallel("查一下 2025-05-01 上海到杭州、2025-05-03 杭州到上海的火车票。", "trains.search",
         {"from_station": ["上海", "Shanghai"], "to_station": ["杭州", "Hangzhou"], "date": "2025-05-01"},
         {"from_station": ["杭州", "Hangzhou"], "to_station": ["上海", "Shanghai"], "date": "2025-05-03"})
parallel("What time is it now in Tokyo, Sydney and São Paulo?", "time.now",
         {"timezone": "Asia/Tokyo"}, {"timezone": "Australia/Sydney"}, {"timezone": "America/Sao_Paulo"})
parallel("Convert 2025-03-10 15:00 Berlin time to New York time and to Singapore time.", "time.convert_timezone",
         {"datetime": "2025-03-10 15:00", "from_tz": "Europe/Berlin", "to_tz": "America/New_York"},
         {"datetime": "2025-03-10 15:00", "from_tz": "Europe/Berlin", "to_tz": "Asia/Singapore"})
parallel("帮我加两个提醒：2025-06-01 09:00 交房租；2025-06-15 20:00 给妈妈打电话。", "reminders.create",
         {"text": ["交房租"], "remind_at": "2025-06-01 09:00"}, {"text": ["给妈妈打电话"], "remind_at": "2025-06-15 20:00"})
parallel("Create two events on 2025-02-03: 'Standup' at 09:15 for 15 minutes and 'Design review' at 15:00 for 45 minutes.", "calendar.create_event",
         {"title": "Standup", "date": "2025-02-03", "start_time": "09:15", "duration_minutes": 15},
         {"title": "Design review", "date": "2025-02-03", "start_time": "15:00", "duration_minutes": 45})
parallel("Email ana@x.io with subject 'Slides' and body 'Attached the deck.', and email raj@x.io with subject 'Budget' and body 'Numbers by Friday please.'",
         "email.send",
         {"to": [["ana@x.io"]], "subject": "Slides", "body": "Attached the deck."},
         {"to": [["raj@x.io"]], "subject": "Budget", "body": "Numbers by Friday please."})
parallel("给 +8613800001111 发短信“会议改到三点”，再给 +8613800002222 发同样的内容。", "sms.send",
         {"phone_number": "+8613800001111", "message": "会议改到三点"}, {"phone_number": "+8613800002222", "message": "会议改到三点"})
parallel("Translate 'Good night' into Spanish, French and Japanese.", "translate.text",
         {"text": "Good night", "target_language": "es", "source_language": ["", "auto", "en"]},
         {"text": "Good night", "target_language": "fr", "source_language": ["", "auto", "en"]},
         {"text": "Good night", "target_language": "ja", "source_language": ["", "auto", "en"]})
parallel("把“欢迎光临”分别翻译成英文和德文。", "translate.text",
         {"text": "欢迎光临", "target_language": "en", "source_language": ["", "auto", "zh"]},
         {"text": "欢迎光临", "target_language": "de", "source_language": ["", "auto", "zh"]})
parallel("Define 'ephemeral' and 'ubiquitous'.", "dictionary.define", {"word": "ephemeral"}, {"word": "ubiquitous"})
parallel("Track orders 111-2223334-4445556 and 222-3334445-5556667.", "shop.track_order",
         {"order_id": "111-2223334-4445556"}, {"order_id": "222-3334445-5556667"})
parallel("把 SKU-1001 加 2 件、SKU-2002 加 1 件到购物车。", "shop.add_to_cart",
         {"product_id": "SKU-1001", "quantity": 2}, {"product_id": "SKU-2002", "quantity": [1, ""]})
parallel("In the shop namespace, scale deployment web to 5 replicas and worker to 2.", "k8s.scale_deployment",
         {"deployment": "web", "replicas": 5, "namespace": "shop"}, {"deployment": "worker", "replicas": 2, "namespace": "shop"})
parallel("List the pods in the monitoring and ingress-nginx namespaces.", "k8s.get_pods", {"namespace": "monitoring"}, {"namespace": "ingress-nginx"})
parallel("查一下 db-01 和 db-02 两台主机最近 10 分钟的 CPU 使用率。", "monitor.cpu_usage",
         {"host": "db-01", "window_minutes": 10}, {"host": "db-02", "window_minutes": 10})
parallel("Back up the users database to /backups/users.sql.gz and the orders database to /backups/orders.sql.gz.", "db.backup",
         {"database": "users", "destination": "/backups/users.sql.gz"}, {"database": "orders", "destination": "/backups/orders.sql.gz"})
parallel("在 shop 数据库分别执行 SELECT COUNT(*) FROM users 和 SELECT COUNT(*) FROM orders。", "db.query",
         {"database": "shop", "sql": ["SELECT COUNT(*) FROM users", "SELECT COUNT(*) FROM users;"]},
         {"database": "shop", "sql": ["SELECT COUNT(*) FROM orders", "SELECT COUNT(*) FROM orders;"]})
parallel("Read README.md, CHANGELOG.md and LICENSE.", "files.read", {"path": ["README.md", "./README.md"]},
         {"path": ["CHANGELOG.md", "./CHANGELOG.md"]}, {"path": ["LICENSE", "./LICENSE"]})
parallel("列出 ./docs 下的 md 文件和 ./images 下的 png 文件。", "files.list",
         {"path": ["./docs", "docs"], "pattern": ["*.md"]}, {"path": ["./images", "images"], "pattern": ["*.png"]})
parallel("Move a.txt to archive/a.txt and b.txt to archive/b.txt.", "files.move",
         {"source": "a.txt", "destination": "archive/a.txt"}, {"source": "b.txt", "destination": "archive/b.txt"})
parallel("Compute the BMI for Tom (80 kg, 1.82 m) and for Lily (55 kg, 1.60 m).", "health.bmi",
         {"weight_kg": 80.0, "height_m": 1.82}, {"weight_kg": 55.0, "height_m": 1.6})
parallel("查一下 100 克米饭和 100 克鸡胸肉的营养成分。", "nutrition.lookup",
         {"food": ["米饭", "rice", "cooked rice"], "grams": 100.0}, {"food": ["鸡胸肉", "chicken breast"], "grams": 100.0})
parallel("Log 250 ml of water for 2025-01-10 and 400 ml for 2025-01-11.", "health.log_water",
         {"amount_ml": 250, "date": "2025-01-10"}, {"amount_ml": 400, "date": "2025-01-11"})
parallel("What are the atomic masses of carbon (C), oxygen (O) and iron (Fe)?", "chem.element_info",
         {"element": "C", "property": "atomic_mass"}, {"element": "O", "property": "atomic_mass"}, {"element": "Fe", "property": "atomic_mass"})
parallel("分别计算质量 1 千克、速度 10 m/s，和质量 0.5 千克、速度 20 m/s 的物体的动能。", "physics.kinetic_energy",
         {"mass_kg": 1.0, "velocity_ms": 10.0}, {"mass_kg": 0.5, "velocity_ms": 20.0})
parallel("What were Barcelona's result on 2024-11-03 and Bayern Munich's on 2024-11-02?", "sports.match_result",
         {"team": ["Barcelona", "FC Barcelona"], "date": "2024-11-03"}, {"team": ["Bayern Munich", "FC Bayern Munich", "Bayern"], "date": "2024-11-02"})
parallel("给我看 2023-24 赛季西甲和德甲的积分榜。", "sports.standings",
         {"league": "la_liga", "season": "2023-24"}, {"league": "bundesliga", "season": "2023-24"})
parallel("Get walking and cycling directions from the Louvre to the Eiffel Tower.", "maps.directions",
         {"origin": ["the Louvre", "Louvre", "Louvre Museum"], "destination": ["the Eiffel Tower", "Eiffel Tower"], "mode": "walking"},
         {"origin": ["the Louvre", "Louvre", "Louvre Museum"], "destination": ["the Eiffel Tower", "Eiffel Tower"], "mode": "cycling"})
parallel("Find the coordinates of 1600 Amphitheatre Parkway, Mountain View and of 天安门广场.", "maps.geocode",
         {"address": ["1600 Amphitheatre Parkway, Mountain View", "1600 Amphitheatre Parkway, Mountain View, CA"]}, {"address": ["天安门广场", "Tiananmen Square"]})
parallel("把周杰伦的《夜曲》和《稻香》的歌词发给我。", "music.lyrics",
         {"song": ["夜曲", "《夜曲》"], "artist": ["周杰伦", "Jay Chou"]}, {"song": ["稻香", "《稻香》"], "artist": ["周杰伦", "Jay Chou"]})
parallel("Find Coldplay concerts in London and Taylor Swift concerts in Tokyo.", "music.concerts",
         {"artist": "Coldplay", "city": "London"}, {"artist": "Taylor Swift", "city": "Tokyo"})
parallel("把客厅的灯打开并调到 60% 亮度，卧室的灯关掉。", "home.lights",
         {"room": "客厅", "on": True, "brightness": 60}, {"room": "卧室", "on": False})
parallel("Set the office to 21 °C and the nursery to 19 °C, both in heat mode.", "home.set_thermostat",
         {"room": "office", "temperature": 21.0, "mode": "heat"}, {"room": "nursery", "temperature": 19.0, "mode": "heat"})
parallel("How much sales tax is due on $80 at 7% and on $1,250 at 9.5%?", "tax.sales_tax",
         {"amount": 80.0, "rate_percent": 7.0}, {"amount": 1250.0, "rate_percent": 9.5})
parallel("查询 2024-09-01 和 2024-09-02 美元兑人民币的汇率。", "currency.history",
         {"base": "USD", "quote": "CNY", "date": "2024-09-01"}, {"base": "USD", "quote": "CNY", "date": "2024-09-02"})
parallel("Showtimes for Inside Out 2 in Seattle on 2024-06-15 and on 2024-06-16.", "movies.showtimes",
         {"movie": "Inside Out 2", "city": ["Seattle", "Seattle, WA"], "date": "2024-06-15"},
         {"movie": "Inside Out 2", "city": ["Seattle", "Seattle, WA"], "date": "2024-06-16"})
parallel("Find hotels in Rome from 2025-08-01 to 2025-08-04 and in Florence from 2025-08-04 to 2025-08-07.", "hotels.search",
         {"city": ["Rome", "Roma"], "check_in": "2025-08-01", "check_out": "2025-08-04"},
         {"city": ["Florence", "Firenze"], "check_in": "2025-08-04", "check_out": "2025-08-07"})
parallel("How many days are there between 2024-02-01 and 2024-03-01, and between 2023-02-01 and 2023-03-01?", "time.days_between",
         {"start_date": "2024-02-01", "end_date": "2024-03-01"}, {"start_date": "2023-02-01", "end_date": "2023-03-01"})
parallel("分别求这两组数的平均数：3, 5, 7 和 10, 20, 30, 40。", "stats.mean", {"numbers": [[3, 5, 7]]}, {"numbers": [[10, 20, 30, 40]]})

# ---- parallel_multiple: 2-4 calls over 2+ functions ----
PM = parallel_multiple
PM("What's the weather in Vancouver now, and the 3-day forecast for Whistler?", ["weather.current", "weather.forecast", "weather.air_quality"],
   ("weather.current", {"city": ["Vancouver", "Vancouver, BC"]}), ("weather.forecast", {"city": "Whistler", "days": 3}))
PM("北京现在天气怎么样？PM2.5 是多少？", ["weather.current", "weather.air_quality", "weather.historical"],
   ("weather.current", {"city": ["北京", "Beijing"]}), ("weather.air_quality", {"city": ["北京", "Beijing"], "pollutant": "pm2.5"}))
PM("Convert 5 miles to km and 20 lb to kg.", ["unit.convert_length", "unit.convert_weight", "unit.convert_volume"],
   ("unit.convert_length", {"value": 5.0, "from_unit": "mile", "to_unit": "km"}), ("unit.convert_weight", {"value": 20.0, "from_unit": "lb", "to_unit": "kg"}))
PM("计算 9 的阶乘，再判断 97 是不是质数。", ["math.factorial", "math.is_prime", "math.prime_factors"],
   ("math.factorial", {"number": 9}), ("math.is_prime", {"number": 97}))
PM("Convert 500 EUR to USD and get Apple's (AAPL) latest stock price.", ["currency.convert", "stocks.quote", "stocks.history"],
   ("currency.convert", {"amount": 500.0, "from_currency": "EUR", "to_currency": "USD"}), ("stocks.quote", {"symbol": "AAPL"}))
PM("Find flights from JFK to CDG on 2025-06-10, and hotels in Paris from 2025-06-10 to 2025-06-15 for 1 guest.",
   ["flights.search", "hotels.search", "car_rental.search", "flights.status"],
   ("flights.search", {"origin": "JFK", "destination": "CDG", "depart_date": "2025-06-10"}),
   ("hotels.search", {"city": ["Paris", "Paris, France"], "check_in": "2025-06-10", "check_out": "2025-06-15", "guests": 1}))
PM("查一下 2025-07-20 北京到西安的火车票，再告诉我西安排名前 5 的景点。", ["trains.search", "travel.attractions", "flights.search"],
   ("trains.search", {"from_station": ["北京", "Beijing"], "to_station": ["西安", "Xi'an", "Xian"], "date": "2025-07-20"}),
   ("travel.attractions", {"city": ["西安", "Xi'an", "Xian"], "limit": 5}))
PM("Set a reminder 'Pi day breakfast' for 2025-03-14 07:00, and add an event 'Math club' on 2025-03-14 at 16:00.",
   ["reminders.create", "calendar.create_event", "calendar.list_events"],
   ("reminders.create", {"text": "Pi day breakfast", "remind_at": "2025-03-14 07:00"}),
   ("calendar.create_event", {"title": "Math club", "date": "2025-03-14", "start_time": "16:00"}))
PM("给 lily@example.com 发邮件，主题“周报”，正文“见附件”；同时在 #team 频道发“周报已发送”。", ["email.send", "chat.post_message", "sms.send"],
   ("email.send", {"to": [["lily@example.com"]], "subject": "周报", "body": "见附件"}), ("chat.post_message", {"channel": "#team", "text": "周报已发送"}))
PM("Look up Kenji Tanaka's email address, and text +819012345678 'Running 10 min late'.", ["contacts.lookup", "sms.send", "email.send"],
   ("contacts.lookup", {"name": "Kenji Tanaka", "field": "email"}), ("sms.send", {"phone_number": "+819012345678", "message": "Running 10 min late"}))
PM("Search the sports department for a yoga mat under $40, and track order 114-9988776-5544332.",
   ["shop.search_products", "shop.track_order", "shop.add_to_cart"],
   ("shop.search_products", {"query": ["yoga mat"], "category": "sports", "max_price": 40.0}), ("shop.track_order", {"order_id": "114-9988776-5544332"}))
PM("把“我爱学习”翻译成英文，并告诉我 'bonjour' 是什么语言。", ["translate.text", "translate.detect_language", "dictionary.define"],
   ("translate.text", {"text": "我爱学习", "target_language": "en", "source_language": ["", "auto", "zh"]}),
   ("translate.detect_language", {"text": "bonjour"}))
PM("List the tables in the hr database and run SELECT * FROM employees WHERE dept = 'R&D' on it with a limit of 10.",
   ["db.list_tables", "db.query", "db.backup"],
   ("db.list_tables", {"database": "hr"}),
   ("db.query", {"database": "hr", "sql": ["SELECT * FROM employees WHERE dept = 'R&D'", "SELECT * FROM employees WHERE dept = 'R&D';"], "limit": 10}))
PM("Scale api-gateway to 8 replicas and restart the auth deployment, both in the prod namespace.",
   ["k8s.scale_deployment", "k8s.rollout_restart", "k8s.get_pods"],
   ("k8s.scale_deployment", {"deployment": "api-gateway", "replicas": 8, "namespace": "prod"}),
   ("k8s.rollout_restart", {"deployment": "auth", "namespace": "prod"}))
PM("在 billing 服务最近 120 分钟 warn 级别以上的日志里搜 “timeout”，再看看主机 billing-host-1 的 CPU 使用率。",
   ["logs.search", "monitor.cpu_usage", "k8s.get_pods"],
   ("logs.search", {"service": "billing", "query": "timeout", "level": "warn", "since_minutes": 120}), ("monitor.cpu_usage", {"host": "billing-host-1"}))
PM("List the *.log files in /var/log/nginx and show how much space /var/log uses.", ["files.list", "files.disk_usage", "files.read"],
   ("files.list", {"path": "/var/log/nginx", "pattern": "*.log"}), ("files.disk_usage", {"path": "/var/log"}))
PM("算一下我的 BMI（70 公斤，1.75 米），再记录我今天喝了 300 毫升水。", ["health.bmi", "health.log_water", "health.daily_calories"],
   ("health.bmi", {"weight_kg": 70.0, "height_m": 1.75}), ("health.log_water", {"amount_ml": 300}))
PM("Find a dermatologist in Boston and check interactions between sertraline and tramadol.",
   ["health.find_doctor", "health.drug_interactions", "maps.nearby"],
   ("health.find_doctor", {"city": ["Boston", "Boston, MA"], "specialty": "dermatology"}),
   ("health.drug_interactions", {"drugs": [["sertraline", "tramadol"], ["tramadol", "sertraline"]]}))
PM("What's the atomic number of gold (Au), and the kinetic energy of a 1500 kg car going 25 m/s?",
   ["chem.element_info", "physics.kinetic_energy", "unit.convert_weight"],
   ("chem.element_info", {"element": "Au", "property": "atomic_number"}), ("physics.kinetic_energy", {"mass_kg": 1500.0, "velocity_ms": 25.0}))
PM("查一下 Los Angeles Lakers 接下来 3 场比赛的赛程，以及 2024-25 赛季 NBA 积分榜。", ["sports.schedule", "sports.standings", "sports.player_stats"],
   ("sports.schedule", {"team": ["Los Angeles Lakers", "Lakers"], "count": 3}), ("sports.standings", {"league": "nba", "season": "2024-25"}))
PM("Driving directions from San Jose to San Francisco avoiding tolls, and cafes within 300 m of Union Square, San Francisco.",
   ["maps.directions", "maps.nearby", "maps.geocode"],
   ("maps.directions", {"origin": ["San Jose", "San Jose, CA"], "destination": ["San Francisco", "San Francisco, CA"], "mode": ["driving", ""], "avoid": [["tolls"]]}),
   ("maps.nearby", {"location": ["Union Square, San Francisco", "Union Square"], "place_type": "cafe", "radius_m": 300}))
PM("播放陈奕迅的《十年》，再查一下他在香港的演唱会。", ["music.play", "music.concerts", "music.lyrics"],
   ("music.play", {"song": ["十年", "《十年》"], "artist": ["陈奕迅", "Eason Chan"]}), ("music.concerts", {"artist": ["陈奕迅", "Eason Chan"], "city": ["香港", "Hong Kong"]}))
PM("Set the living room to 22 °C and switch on the kitchen lights.", ["home.set_thermostat", "home.lights", "reminders.create"],
   ("home.set_thermostat", {"room": "living room", "temperature": 22.0}), ("home.lights", {"room": "kitchen", "on": True}))
PM("找用鸡蛋和番茄做的菜谱，并在“老街饭馆”预订 2025-05-20 18:30 的 2 人位。", ["recipes.search", "restaurants.book", "nutrition.lookup"],
   ("recipes.search", {"ingredients": [["鸡蛋", "番茄"], ["番茄", "鸡蛋"], ["eggs", "tomatoes"], ["egg", "tomato"]]}),
   ("restaurants.book", {"restaurant": "老街饭馆", "date": "2025-05-20", "time": "18:30", "party_size": 2}))
PM("Convert 72°F to Celsius, 2 cups to ml, and 10 oz to grams.", ["unit.convert_temperature", "unit.convert_volume", "unit.convert_weight", "unit.convert_length"],
   ("unit.convert_temperature", {"value": 72.0, "from_scale": "fahrenheit", "to_scale": "celsius"}),
   ("unit.convert_volume", {"value": 2.0, "from_unit": "cup", "to_unit": "ml"}),
   ("unit.convert_weight", {"value": 10.0, "from_unit": "oz", "to_unit": "g"}))
PM("Integrate x**2 from 0 to 3, and find the derivative of x**2 at x = 3.", ["math.integrate", "math.derivative", "math.evaluate"],
   ("math.integrate", {"function": ["x**2", "x ** 2"], "lower": 0.0, "upper": 3.0}), ("math.derivative", {"function": ["x**2", "x ** 2"], "x": 3.0}))
PM("求 2, 4, 6, 8 这组数的平均数和中位数。", ["stats.mean", "stats.median", "stats.std_dev"],
   ("stats.mean", {"numbers": [[2, 4, 6, 8]]}), ("stats.median", {"numbers": [[2, 4, 6, 8]]}))
PM("What's the monthly payment on $25,000 over 5 years at 7%, and the sales tax on a $25,000 car at 6.25%?",
   ["loan.monthly_payment", "tax.sales_tax", "finance.compound_interest"],
   ("loan.monthly_payment", {"principal": 25000.0, "annual_rate": 7.0, "years": 5}), ("tax.sales_tax", {"amount": 25000.0, "rate_percent": 6.25}))
PM("记一笔 2025-04-01 的交通支出 12.5 美元，并把 12.5 美元换成欧元。", ["budget.add_expense", "currency.convert", "tax.sales_tax"],
   ("budget.add_expense", {"amount": 12.5, "currency": ["USD", ""], "category": "transport", "date": "2025-04-01"}),
   ("currency.convert", {"amount": 12.5, "from_currency": "USD", "to_currency": "EUR"}))
PM("Weekly prices of TSLA from January 1, 2024 to June 28, 2024, and its current quote.", ["stocks.history", "stocks.quote", "currency.history"],
   ("stocks.history", {"symbol": "TSLA", "start_date": "01-01-2024", "end_date": "06-28-2024", "interval": "weekly"}), ("stocks.quote", {"symbol": "TSLA"}))
PM("Check the status of flight MU5101 on 2025-01-15 and tell me the current time in Asia/Shanghai.", ["flights.status", "time.now", "flights.search"],
   ("flights.status", {"flight_number": "MU5101", "date": "2025-01-15"}), ("time.now", {"timezone": "Asia/Shanghai"}))
PM("查 2025-08-08 到 2025-08-12 杭州的酒店，并在杭州萧山机场（HGH）租一辆电动车，2025-08-08 取车，2025-08-12 还车。",
   ["hotels.search", "car_rental.search", "flights.search"],
   ("hotels.search", {"city": ["杭州", "Hangzhou"], "check_in": "2025-08-08", "check_out": "2025-08-12"}),
   ("car_rental.search", {"location": ["HGH", "杭州萧山机场", "杭州萧山机场（HGH）"], "pickup_date": "08-08-2025", "return_date": "08-12-2025", "car_type": "electric"}))
PM("How many days are there from 2025-10-01 to 2025-12-31, and which events in that range have 'launch' in the title?",
   ["time.days_between", "calendar.list_events", "calendar.create_event"],
   ("time.days_between", {"start_date": "2025-10-01", "end_date": "2025-12-31"}),
   ("calendar.list_events", {"start_date": "2025-10-01", "end_date": "2025-12-31", "keyword": "launch"}))
PM("Cancel evt_9001, and create 'Team lunch' on 2025-09-05 at 12:00 in room Aurora on floor 2.",
   ["calendar.cancel_event", "calendar.create_event", "reminders.create"],
   ("calendar.cancel_event", {"event_id": "evt_9001"}),
   ("calendar.create_event", {"title": "Team lunch", "date": "2025-09-05", "start_time": "12:00", "location": [{"room": ["Aurora"], "floor": [2]}]}))
PM("在所有文件夹里搜索关于“发票”的邮件，并提醒我 2025-02-28 10:00 处理发票。", ["email.search", "reminders.create", "email.send"],
   ("email.search", {"query": "发票", "folder": "all"}), ("reminders.create", {"text": ["处理发票"], "remind_at": "2025-02-28 10:00"}))
PM("Post 'Build green' in #ci mentioning sam and raj, and email qa@corp.io with subject 'Build 512' and body 'Ready for QA'.",
   ["chat.post_message", "email.send", "sms.send"],
   ("chat.post_message", {"channel": "#ci", "text": "Build green", "mention": [["sam", "raj"], ["raj", "sam"]]}),
   ("email.send", {"to": [["qa@corp.io"]], "subject": "Build 512", "body": "Ready for QA"}))
PM("订单 115-0000111-2223334 里的 SKU-3030 到货损坏了，帮我退货；再把 SKU-3031 加入购物车。", ["shop.return_item", "shop.add_to_cart", "shop.track_order"],
   ("shop.return_item", {"order_id": "115-0000111-2223334", "product_id": "SKU-3030", "reason": "damaged"}), ("shop.add_to_cart", {"product_id": "SKU-3031"}))
PM("Translate 'Thank you for your order' into Italian, and count the words in 'Thank you for your order'.",
   ["translate.text", "text.count_words", "translate.detect_language"],
   ("translate.text", {"text": "Thank you for your order", "target_language": "it", "source_language": ["", "auto", "en"]}),
   ("text.count_words", {"text": "Thank you for your order"}))
PM("Give me the definition of 'kaizen' and translate 'continuous improvement' into Japanese.", ["dictionary.define", "translate.text", "text.count_words"],
   ("dictionary.define", {"word": "kaizen"}),
   ("translate.text", {"text": "continuous improvement", "target_language": "ja", "source_language": ["", "auto", "en"]}))
PM("在 metrics 数据库里创建表 events（列依次为 id BIGINT、ts TIMESTAMP、name TEXT），表已存在就跳过；然后把 metrics 备份到 /bk/metrics.sql。",
   ["db.create_table", "db.backup", "db.query"],
   ("db.create_table", {"database": "metrics", "table": "events", "if_not_exists": True, "columns": [[
       {"name": ["id"], "type": ["BIGINT"], "nullable": ["", True]},
       {"name": ["ts"], "type": ["TIMESTAMP"], "nullable": ["", True]},
       {"name": ["name"], "type": ["TEXT"], "nullable": ["", True]}]]}),
   ("db.backup", {"database": "metrics", "destination": "/bk/metrics.sql"}))
PM("Run nginx:1.25 as a container named edge with port 80:80, and trigger the pipeline for acme/edge on main.",
   ["docker.run", "ci.trigger_pipeline", "k8s.rollout_restart"],
   ("docker.run", {"image": "nginx:1.25", "name": "edge", "ports": [["80:80"]]}), ("ci.trigger_pipeline", {"repository": "acme/edge", "branch": "main"}))
PM("Compress the logs/ folder into logs.7z as 7z, and move old.log to trash/old.log.", ["files.compress", "files.move", "files.list"],
   ("files.compress", {"paths": [["logs/"], ["logs"]], "archive_path": "logs.7z", "format": "7z"}), ("files.move", {"source": "old.log", "destination": "trash/old.log"}))
PM("How many calories a day does a 45-year-old man need (90 kg, 180 cm, sedentary), and what's in 200 g of oatmeal?",
   ["health.daily_calories", "nutrition.lookup", "health.bmi"],
   ("health.daily_calories", {"age": 45, "sex": "male", "weight_kg": 90.0, "height_cm": 180.0, "activity": ["sedentary", ""]}),
   ("nutrition.lookup", {"food": "oatmeal", "grams": 200.0}))
PM("Find free beginner Python courses, and Python books in the library that I can borrow now.",
   ["edu.search_courses", "library.search_books", "podcasts.search"],
   ("edu.search_courses", {"topic": "Python", "level": ["beginner", ""], "free_only": True}),
   ("library.search_books", {"query": "Python", "available_only": [True, ""]}))
PM("计算加权平均：分数 90 和 80，权重 0.6 和 0.4；再算这两个分数的样本标准差。", ["edu.weighted_average", "stats.std_dev", "stats.mean"],
   ("edu.weighted_average", {"scores": [[90, 80]], "weights": [[0.6, 0.4]]}), ("stats.std_dev", {"numbers": [[90, 80]], "sample": [True, ""]}))
PM("What was Arsenal's result on 2024-12-04, and how many goals has Bukayo Saka scored in 2024-25?",
   ["sports.match_result", "sports.player_stats", "sports.schedule"],
   ("sports.match_result", {"team": "Arsenal", "date": "2024-12-04"}), ("sports.player_stats", {"player": "Bukayo Saka", "season": "2024-25", "stat": "goals"}))
PM("坐标 31.2304, 121.4737 是什么地址？再查一下外滩的坐标。", ["maps.reverse_geocode", "maps.geocode", "maps.nearby"],
   ("maps.reverse_geocode", {"latitude": 31.2304, "longitude": 121.4737}), ("maps.geocode", {"address": ["外滩", "上海外滩", "The Bund"]}))
PM("Create a playlist 'Focus' with 'Weightless' and 'Experience', then play 'Weightless' by Marconi Union.",
   ["music.create_playlist", "music.play", "music.lyrics"],
   ("music.create_playlist", {"name": "Focus", "songs": [["Weightless", "Experience"]]}), ("music.play", {"song": "Weightless", "artist": "Marconi Union"}))
PM("找 30 分钟以内、关于睡眠的中文播客，然后播放《晴天》。", ["podcasts.search", "music.play", "music.lyrics"],
   ("podcasts.search", {"query": ["睡眠", "sleep"], "language": "zh", "max_minutes": 30}), ("music.play", {"song": ["晴天", "《晴天》"]}))
PM("Showtimes for 'Ne Zha 2' in Los Angeles on 2025-02-15, and restaurants open now near the TCL Chinese Theatre.",
   ["movies.showtimes", "maps.nearby", "restaurants.book"],
   ("movies.showtimes", {"movie": "Ne Zha 2", "city": ["Los Angeles", "Los Angeles, CA"], "date": "2025-02-15"}),
   ("maps.nearby", {"location": ["TCL Chinese Theatre", "the TCL Chinese Theatre"], "place_type": "restaurant", "open_now": True}))
PM("三亚未来 5 天的天气预报，把 30 摄氏度换算成华氏度，再查三亚现在的空气质量。",
   ["weather.forecast", "unit.convert_temperature", "weather.air_quality", "weather.current"],
   ("weather.forecast", {"city": ["三亚", "Sanya"], "days": 5}),
   ("unit.convert_temperature", {"value": 30.0, "from_scale": "celsius", "to_scale": "fahrenheit"}),
   ("weather.air_quality", {"city": ["三亚", "Sanya"]}))
PM("Is 1000003 prime? Also factor 1001 and compute 7!.", ["math.is_prime", "math.prime_factors", "math.factorial", "math.gcd"],
   ("math.is_prime", {"number": 1000003}), ("math.prime_factors", {"number": 1001}), ("math.factorial", {"number": 7}))
PM("查一下 2025-01-02 欧元兑人民币的汇率，再把 800 欧元分别换成人民币和港币。", ["currency.history", "currency.convert", "stocks.quote"],
   ("currency.history", {"base": "EUR", "quote": "CNY", "date": "2025-01-02"}),
   ("currency.convert", {"amount": 800.0, "from_currency": "EUR", "to_currency": "CNY"}),
   ("currency.convert", {"amount": 800.0, "from_currency": "EUR", "to_currency": "HKD"}))
PM("Current weather in Seoul and in Busan, and convert 1000 KRW to USD.", ["weather.current", "currency.convert", "weather.forecast"],
   ("weather.current", {"city": ["Seoul", "Seoul, South Korea"]}), ("weather.current", {"city": ["Busan", "Busan, South Korea"]}),
   ("currency.convert", {"amount": 1000.0, "from_currency": "KRW", "to_currency": "USD"}))
PM("In the data namespace, list the pods labelled app=kafka, scale kafka-connect to 3 replicas, and search the kafka-connect logs for 'rebalance'.",
   ["k8s.get_pods", "k8s.scale_deployment", "logs.search", "k8s.rollout_restart"],
   ("k8s.get_pods", {"namespace": "data", "label_selector": "app=kafka"}),
   ("k8s.scale_deployment", {"deployment": "kafka-connect", "replicas": 3, "namespace": "data"}),
   ("logs.search", {"service": "kafka-connect", "query": "rebalance"}))

# ---- irrelevance: no offered function answers; close in topic ----
irrelevance("What will the weather be in Paris on 2030-05-01?", ["weather.historical", "weather.current"])
irrelevance("埃菲尔铁塔有多高？", ["maps.geocode", "weather.current"])
irrelevance("Write a short poem about the ocean.", ["translate.text", "text.count_words"])
irrelevance("What's the capital of Australia?", ["weather.current", "time.now"])
irrelevance("5 公斤是多少磅？", ["unit.convert_length", "unit.convert_temperature", "unit.convert_volume"])
irrelevance("How many seconds are in 2 hours and 30 minutes?", ["unit.convert_length", "unit.convert_weight", "unit.convert_volume"])
irrelevance("How much is a 15% tip on an $84 bill?", ["currency.convert", "stocks.quote"])
irrelevance("Who painted the Mona Lisa?", ["travel.attractions", "movies.showtimes"])
irrelevance("帮我取消明天的航班预订 CA1234。", ["flights.search", "flights.status"])
irrelevance("Call my mom.", ["sms.send", "email.send"])
irrelevance("What's the square root of 2 to 10 decimal places?", ["math.factorial", "math.gcd", "math.prime_factors"])
irrelevance("2022 年世界杯的冠军是哪支球队？", ["sports.standings", "sports.schedule"])
irrelevance("How do I sign 'hello' in American Sign Language?", ["translate.text", "translate.detect_language"])
irrelevance("Recommend a good science fiction novel for a long flight.", ["edu.search_courses", "podcasts.search"])
irrelevance("What's the population of Tokyo?", ["weather.current", "time.now", "maps.geocode"])
irrelevance("Delete the file temp.txt for good.", ["files.move", "files.read", "files.list"])
irrelevance("给我讲个笑话吧。", ["text.count_words", "translate.text"])
irrelevance("What's the melting point of table salt (NaCl)?", ["chem.element_info", "physics.kinetic_energy"])
irrelevance("帮我把这张 photo.jpg 转换成 PNG 格式。", ["files.compress", "files.move"])
irrelevance("How many calories do I burn running 5 km?", ["nutrition.lookup", "health.daily_calories", "health.bmi"])
irrelevance("Book me an appointment with Dr. Chen for Friday morning.", ["health.find_doctor", "calendar.list_events"])
irrelevance("帮我把 report.pdf 转成 Word 文档。", ["files.compress", "files.read"])
irrelevance("Order a large pepperoni pizza delivered to my address.", ["restaurants.book", "recipes.search", "maps.nearby"])
irrelevance("Who is the CEO of Apple?", ["stocks.quote", "stocks.history"])
irrelevance("比特币现在多少钱一个？", ["currency.convert", "currency.history"])
irrelevance("Refund my last payment to Netflix.", ["shop.return_item", "shop.track_order"])
irrelevance("Explain the difference between TCP and UDP.", ["logs.search", "monitor.cpu_usage"])
irrelevance("查询一下我的信用卡还剩多少额度。", ["budget.add_expense", "currency.convert"])
irrelevance("Roll back the api deployment in prod to its previous version.", ["k8s.scale_deployment", "k8s.rollout_restart", "k8s.get_pods"])
irrelevance("Drop the table temp_users from the staging database.", ["db.query", "db.create_table", "db.list_tables"])
irrelevance("我家的 Wi-Fi 密码是多少？", ["home.lights", "home.set_thermostat"])
irrelevance("Lock the front door.", ["home.lights", "home.set_thermostat"])
irrelevance("长城是什么时候修建的？", ["travel.attractions", "maps.directions"])
irrelevance("我刚哼了一段旋律，这首歌叫什么名字？", ["music.lyrics", "music.play"])
irrelevance("Summarize the plot of Inception.", ["movies.showtimes", "podcasts.search"])
irrelevance("How much does shipping to Canada cost?", ["shop.track_order", "shop.search_products"])
irrelevance("帮我写一封辞职信，语气礼貌一点。", ["email.send", "email.search"])
irrelevance("What's the derivative of sin(x), as a formula?", ["math.derivative", "math.integrate"])
irrelevance("How many moons does Jupiter have?", ["chem.element_info", "physics.kinetic_energy"])
irrelevance("把手机屏幕亮度调到 50%。", ["home.lights", "home.set_thermostat"])
irrelevance("Show me my blood pressure readings from last week.", ["health.log_water", "health.bmi"])
irrelevance("推荐几部好看的科幻电影。", ["movies.showtimes", "music.concerts"])
irrelevance("Who wrote 'Pride and Prejudice'?", ["dictionary.define", "translate.text"])
irrelevance("Transcribe the audio in meeting.mp3 and translate it into English.", ["translate.text", "files.read"])
irrelevance("帮我把 Excel 表格里 A 列的数字加起来。", ["stats.mean", "files.read"])
irrelevance("When does daylight saving time start in Europe in 2025?", ["time.now", "time.convert_timezone"])
irrelevance("How do I renew my passport?", ["travel.attractions", "flights.search"])
irrelevance("我的快递显示已签收，但我没收到，应该怎么办？", ["shop.track_order", "shop.return_item"])
irrelevance("What's the speed of light in a vacuum?", ["physics.kinetic_energy", "unit.convert_length"])
irrelevance("Who is leading the Tour de France this year?", ["sports.standings", "sports.player_stats"])
irrelevance("How many vowels are in the word 'encyclopedia'?", ["text.count_words", "dictionary.define"])
irrelevance("把我的日历共享给同事 zhang@corp.com，让他能看到我的日程。", ["calendar.list_events", "calendar.create_event"])
irrelevance("日本的 GDP 是多少？", ["currency.convert", "stocks.quote"])
irrelevance("帮我找出这段 Python 代码的错误：print('hi'", ["files.search_text", "logs.search"])
irrelevance("Convert the RGB color (255, 165, 0) to a hex code.", ["unit.convert_length", "unit.convert_volume"])
