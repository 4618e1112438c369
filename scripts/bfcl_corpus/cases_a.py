"""simple and multiple cases, each written by hand.

An argument given as a list is the list of accepted values; anything else is the one
accepted value (so an array param is written [[...]]). Optional params a case leaves out
are filled in by the generator as "may be left out" (plus their default).
"""

SIMPLE = []
MULTIPLE = []


def simple(question, name, args):
    SIMPLE.append({"question": question, "functions": [name], "calls": [(name, args)]})


def multiple(question, functions, name, args):
    assert name in functions, name
    MULTIPLE.append({"question": question, "functions": functions, "calls": [(name, args)]})


# ---- simple: one function offered, one call ----
simple("What's the weather like in Lisbon right now? Give it to me in fahrenheit.",
       "weather.current", {"city": ["Lisbon", "Lisbon, Portugal"], "unit": "fahrenheit"})
simple("未来5天杭州的天气预报是什么？", "weather.forecast", {"city": ["杭州", "Hangzhou"], "days": 5})
simple("What was the weather in Chicago on March 3, 2021?",
       "weather.historical", {"city": ["Chicago", "Chicago, IL"], "date": "2021-03-03"})
simple("求 84 和 126 的最大公约数。", "math.gcd", {"a": 84, "b": 126})
simple("Evaluate (17 + 25) * 3 - 4 for me.", "math.evaluate", {"expression": ["(17 + 25) * 3 - 4", "(17+25)*3-4", "(17 + 25)*3 - 4"]})
simple("Solve 2x^2 - 3x - 5 = 0.", "math.solve_quadratic", {"a": 2.0, "b": -3.0, "c": -5.0})
simple("What's the integral of 3x^2 + 2x between x = 0 and x = 4?", "math.integrate",
       {"function": ["3*x**2 + 2*x", "3*x**2+2*x", "3 * x**2 + 2 * x", "3*x ** 2 + 2*x"], "lower": 0.0, "upper": 4.0})
simple("求函数 x**3 - 6*x 在 x=2 处的导数值。", "math.derivative", {"function": ["x**3 - 6*x", "x**3-6*x"], "x": 2.0})
simple("Give me the prime factorization of 360.", "math.prime_factors", {"number": 360})
simple("计算这组数据的总体标准差：2, 4, 4, 4, 5, 5, 7, 9。", "stats.std_dev", {"numbers": [[2, 4, 4, 4, 5, 5, 7, 9]], "sample": False})
simple("What's the area of a circle with a radius of 7.5 cm?", "geometry.circle_area", {"radius": 7.5, "unit": "cm"})
simple("把 5 英里换算成公里。", "unit.convert_length", {"value": 5.0, "from_unit": "mile", "to_unit": "km"})
simple("How many pounds is 68 kg?", "unit.convert_weight", {"value": 68.0, "from_unit": "kg", "to_unit": "lb"})
simple("3 斤等于多少千克？", "unit.convert_weight", {"value": 3.0, "from_unit": "jin", "to_unit": "kg"})
simple("Convert 350 degrees Fahrenheit to Celsius.", "unit.convert_temperature", {"value": 350.0, "from_scale": "fahrenheit", "to_scale": "celsius"})
simple("How many millilitres are in 2.5 cups?", "unit.convert_volume", {"value": 2.5, "from_unit": "cup", "to_unit": "ml"})
simple("帮我把 1200 元人民币换成日元。", "currency.convert", {"amount": 1200.0, "from_currency": "CNY", "to_currency": "JPY"})
simple("What was the EUR to GBP exchange rate on 2023-11-15?", "currency.history", {"base": "EUR", "quote": "GBP", "date": "2023-11-15"})
simple("Show me weekly prices of NVDA from January 2, 2024 to March 28, 2024.", "stocks.history",
       {"symbol": "NVDA", "start_date": "01-02-2024", "end_date": "03-28-2024", "interval": "weekly"})
simple("贷款 80 万元，年利率 4.2%，期限 30 年，每月要还多少？", "loan.monthly_payment", {"principal": 800000.0, "annual_rate": 4.2, "years": 30})
simple("If I deposit $5,000 at 3.5% a year compounded quarterly, what will I have after 10 years?", "finance.compound_interest",
       {"principal": 5000.0, "rate": 0.035, "years": 10.0, "compounds_per_year": 4})
simple("Find me a one-way flight from SFO to Tokyo Narita (NRT) on 2025-04-12 for 2 adults in business class.", "flights.search",
       {"origin": "SFO", "destination": "NRT", "depart_date": "2025-04-12", "passengers": 2, "cabin": "business"})
simple("查一下 CA981 航班 2025 年 3 月 8 日的状态。", "flights.status", {"flight_number": "CA981", "date": "2025-03-08"})
simple("Find a hotel in Kyoto from May 3 to May 6, 2025 with breakfast and wifi, under $200 a night.", "hotels.search",
       {"city": ["Kyoto", "Kyoto, Japan"], "check_in": "2025-05-03", "check_out": "2025-05-06", "max_price": 200.0,
        "amenities": [["breakfast", "wifi"], ["wifi", "breakfast"]]})
simple("查 2025-02-14 从北京南到上海虹桥的高铁票，要一等座。", "trains.search",
       {"from_station": ["北京南", "北京南站"], "to_station": ["上海虹桥", "上海虹桥站"], "date": "2025-02-14", "seat_class": "first"})
simple("I need an SUV at Denver airport (DEN) from July 4 to July 9, 2025.", "car_rental.search",
       {"location": ["DEN", "Denver airport", "Denver International Airport"], "pickup_date": "07-04-2025", "return_date": "07-09-2025", "car_type": "suv"})
simple("纽约时间 2025-06-01 09:30 是上海时间几点？", "time.convert_timezone",
       {"datetime": "2025-06-01 09:30", "from_tz": "America/New_York", "to_tz": "Asia/Shanghai"})
simple("How many business days are there between 2025-03-03 and 2025-03-31?", "time.days_between",
       {"start_date": "2025-03-03", "end_date": "2025-03-31", "business_days_only": True})
simple("Schedule 'Quarterly review' on 2025-01-20 at 14:00 for 90 minutes and invite ana@corp.com and li.wei@corp.com.", "calendar.create_event",
       {"title": "Quarterly review", "date": "2025-01-20", "start_time": "14:00", "duration_minutes": 90,
        "attendees": [["ana@corp.com", "li.wei@corp.com"], ["li.wei@corp.com", "ana@corp.com"]]})
simple("从 2025-01-06 开始，每周一早上 8:00 提醒我交周报。", "reminders.create",
       {"text": ["交周报", "提醒我交周报"], "remind_at": "2025-01-06 08:00", "repeat": "weekly"})
simple("Email bob@example.com with the subject 'Invoice 2291' and the body 'Paid today, thanks!' and mark it high priority.", "email.send",
       {"to": [["bob@example.com"]], "subject": "Invoice 2291", "body": "Paid today, thanks!", "priority": "high"})
simple("给 +8613912345678 发一条短信：“我已到楼下”。", "sms.send", {"phone_number": "+8613912345678", "message": "我已到楼下"})
simple("Post 'Deploy finished ✅' in #releases and mention dana.", "chat.post_message",
       {"channel": "#releases", "text": "Deploy finished ✅", "mention": [["dana"]]})
simple("在电子产品类里搜索 500 美元以内的降噪耳机，按评分排序。", "shop.search_products",
       {"query": ["降噪耳机", "noise cancelling headphones", "noise-cancelling headphones"], "category": "electronics", "max_price": 500.0, "sort_by": "rating"})
simple("I want to return product SKU-55120 from order 112-7781234-0092211; it arrived damaged.", "shop.return_item",
       {"order_id": "112-7781234-0092211", "product_id": "SKU-55120", "reason": "damaged"})
simple("Translate 'Where is the nearest train station?' into German, in a formal register.", "translate.text",
       {"text": "Where is the nearest train station?", "target_language": "de", "formality": "formal", "source_language": ["", "auto", "en"]})
simple("“谢谢你的帮助”用韩语怎么说？", "translate.text",
       {"text": ["谢谢你的帮助"], "target_language": "ko", "source_language": ["", "auto", "zh"]})
simple("Define the word 'serendipity' and include example sentences.", "dictionary.define", {"word": "serendipity", "include_examples": True})
simple("On the sales database run SELECT name, total FROM orders WHERE total > 500 and give me at most 20 rows.", "db.query",
       {"database": "sales", "sql": ["SELECT name, total FROM orders WHERE total > 500", "SELECT name, total FROM orders WHERE total > 500;"], "limit": 20})
simple("在 inventory 数据库里创建表 products，列依次为：id INTEGER 不允许为空，name TEXT，price NUMERIC(10,2)。", "db.create_table",
       {"database": "inventory", "table": "products", "columns": [[
           {"name": ["id"], "type": ["INTEGER"], "nullable": [False]},
           {"name": ["name"], "type": ["TEXT"], "nullable": ["", True]},
           {"name": ["price"], "type": ["NUMERIC(10,2)"], "nullable": ["", True]}]]})
simple("Scale the checkout-api deployment in the prod namespace to 6 replicas.", "k8s.scale_deployment",
       {"deployment": "checkout-api", "replicas": 6, "namespace": "prod"})
simple("列出 staging 命名空间里标签为 app=web、状态为 Failed 的 pod。", "k8s.get_pods",
       {"namespace": "staging", "label_selector": "app=web", "status": "Failed"})
simple("Run redis:7.2 in the background as a container named cache, mapping port 6379:6379.", "docker.run",
       {"image": "redis:7.2", "name": "cache", "ports": [["6379:6379"]], "detach": [True, ""]})
simple("Trigger the acme/webshop pipeline on branch release/2.4, deploying to staging with end-to-end tests on.", "ci.trigger_pipeline",
       {"repository": "acme/webshop", "branch": "release/2.4", "variables": [{"DEPLOY_ENV": ["staging"], "RUN_E2E": [True]}]})
simple("递归列出 ~/Downloads 里所有的 pdf 文件。", "files.list", {"path": "~/Downloads", "pattern": ["*.pdf", "*.PDF"], "recursive": True})
simple("Pack report.docx and the charts/ folder into q3_bundle.tar.gz as a tar.gz archive.", "files.compress",
       {"paths": [["report.docx", "charts/"], ["report.docx", "charts"], ["charts/", "report.docx"], ["charts", "report.docx"]],
        "archive_path": "q3_bundle.tar.gz", "format": "tar.gz"})
simple("我体重 62 公斤，身高 1.68 米，BMI 是多少？", "health.bmi", {"weight_kg": 62.0, "height_m": 1.68})
simple("How many calories a day does a 34-year-old woman need: 70 kg, 165 cm, moderately active?", "health.daily_calories",
       {"age": 34, "sex": "female", "weight_kg": 70.0, "height_cm": 165.0, "activity": "moderate"})
simple("我的三门成绩是 85、92、78，权重分别是 0.3、0.5、0.2，帮我算加权平均分。", "edu.weighted_average",
       {"scores": [[85, 92, 78]], "weights": [[0.3, 0.5, 0.2]]})
simple("What's the electronegativity of fluorine (F)?", "chem.element_info", {"element": "F", "property": "electronegativity"})
simple("查一下 2023-24 赛季英超积分榜的前 5 名。", "sports.standings", {"league": "premier_league", "season": "2023-24", "top": 5})
simple("在上海静安寺附近 500 米内找现在营业的药店。", "maps.nearby",
       {"location": ["上海静安寺", "静安寺", "上海市静安寺"], "place_type": "pharmacy", "radius_m": 500, "open_now": True})
simple("Play 'Clair de Lune' by Debussy, and shuffle what comes after.", "music.play",
       {"song": "Clair de Lune", "artist": ["Debussy", "Claude Debussy"], "shuffle": True})
simple("把客厅的空调调到 24 度，制冷模式。", "home.set_thermostat", {"room": "客厅", "temperature": 24.0, "mode": "cool"})
simple("Book a table for 4 at Lucia's on 2025-02-14 at 19:30; we'd like to sit outdoors.", "restaurants.book",
       {"restaurant": "Lucia's", "date": "2025-02-14", "time": "19:30", "party_size": 4, "preferences": [{"outdoor": [True]}]})

# ---- multiple: three or four neighbours offered, one call ----
W = ["weather.current", "weather.forecast", "weather.air_quality", "weather.historical"]
multiple("Is the air in Delhi safe today? Show me the PM2.5 level.", W[:3], "weather.air_quality",
         {"city": ["Delhi", "New Delhi"], "pollutant": "pm2.5"})
multiple("北京接下来 7 天会下雨吗？给我未来 7 天的天气预报。", ["weather.current", "weather.forecast", "weather.historical"], "weather.forecast",
         {"city": ["北京", "Beijing"], "days": 7})
multiple("What was the temperature in Oslo on 2024-12-25, in fahrenheit?", ["weather.current", "weather.forecast", "weather.historical"],
         "weather.historical", {"city": "Oslo", "date": "2024-12-25", "unit": "fahrenheit"})
multiple("Is 7919 a prime number?", ["math.prime_factors", "math.is_prime", "math.gcd"], "math.is_prime", {"number": 7919})
multiple("求 12、18 和 30 的最小公倍数。", ["math.gcd", "math.lcm", "math.prime_factors"], "math.lcm", {"numbers": [[12, 18, 30]]})
multiple("What's the median of 3, 9, 1, 7, 5?", ["stats.mean", "stats.median", "stats.std_dev"], "stats.median", {"numbers": [[3, 9, 1, 7, 5]]})
multiple("算一下 2 的 20 次方减 1。", ["math.evaluate", "math.factorial", "math.prime_factors"], "math.evaluate",
         {"expression": ["2**20 - 1", "2**20-1", "2 ** 20 - 1"]})
multiple("A triangle has a base of 12 m and a height of 5 m. What's its area?", ["geometry.circle_area", "geometry.triangle_area", "geometry.distance"],
         "geometry.triangle_area", {"base": 12.0, "height": 5.0})
multiple("点 (1, 2) 到点 (4, 6) 的距离是多少？", ["geometry.triangle_area", "geometry.distance", "geometry.circle_area"], "geometry.distance",
         {"point_a": [[1, 2]], "point_b": [[4, 6]]})
multiple("How many feet is 1500 metres?", ["unit.convert_length", "unit.convert_weight", "unit.convert_volume"], "unit.convert_length",
         {"value": 1500.0, "from_unit": "m", "to_unit": "ft"})
multiple("300 开尔文是多少摄氏度？", ["unit.convert_temperature", "unit.convert_length", "weather.current"], "unit.convert_temperature",
         {"value": 300.0, "from_scale": "kelvin", "to_scale": "celsius"})
multiple("What's Tencent (0700.HK) trading at on the HKEX right now?", ["stocks.quote", "stocks.history", "currency.convert"], "stocks.quote",
         {"symbol": "0700.HK", "exchange": ["HKEX", ""]})
multiple("100 英镑现在能换多少港币？", ["currency.convert", "currency.history", "stocks.quote"], "currency.convert",
         {"amount": 100.0, "from_currency": "GBP", "to_currency": "HKD"})
multiple("What's the sales tax on a $249.99 purchase at 8.875%?", ["tax.sales_tax", "loan.monthly_payment", "finance.compound_interest"], "tax.sales_tax",
         {"amount": 249.99, "rate_percent": 8.875})
multiple("记一笔账：2025-03-02 午饭花了 45 元人民币，类别是餐饮。", ["budget.add_expense", "tax.sales_tax", "currency.convert"], "budget.add_expense",
         {"amount": 45.0, "currency": "CNY", "category": "food", "date": "2025-03-02", "note": ["", "午饭"]})
multiple("Find flights from LHR to JFK leaving 2025-09-10 and coming back 2025-09-20.", ["flights.search", "flights.status", "hotels.search", "trains.search"],
         "flights.search", {"origin": "LHR", "destination": "JFK", "depart_date": "2025-09-10", "return_date": "2025-09-20"})
multiple("帮我找成都 2025-10-01 入住、2025-10-04 退房的酒店，3 个人，要有停车场。", ["hotels.search", "flights.search", "travel.attractions"], "hotels.search",
         {"city": ["成都", "Chengdu"], "check_in": "2025-10-01", "check_out": "2025-10-04", "guests": 3, "amenities": [["parking"]]})
multiple("What are the best museums to visit in Vienna? Just the top 3.", ["travel.attractions", "hotels.search", "maps.nearby"], "travel.attractions",
         {"city": ["Vienna", "Wien"], "category": "museum", "limit": 3})
multiple("Is flight UA857 on time today?", ["flights.status", "flights.search", "time.now"], "flights.status", {"flight_number": "UA857"})
multiple("伦敦现在几点？", ["time.now", "time.convert_timezone", "weather.current"], "time.now", {"timezone": "Europe/London"})
multiple("How many days are there from 2025-01-01 to 2025-12-25?", ["time.days_between", "calendar.list_events", "reminders.create"], "time.days_between",
         {"start_date": "2025-01-01", "end_date": "2025-12-25"})
multiple("我 2025-04-07 到 2025-04-11 都有哪些日程？", ["calendar.list_events", "calendar.create_event", "calendar.cancel_event"], "calendar.list_events",
         {"start_date": "2025-04-07", "end_date": "2025-04-11"})
multiple("Cancel event evt_2208, but don't notify the attendees.", ["calendar.cancel_event", "calendar.list_events", "email.send"], "calendar.cancel_event",
         {"event_id": "evt_2208", "notify_attendees": False})
multiple("Remind me to water the plants on 2025-05-18 at 18:00.", ["reminders.create", "calendar.create_event", "home.lights"], "reminders.create",
         {"text": ["water the plants", "Water the plants"], "remind_at": "2025-05-18 18:00"})
multiple("在收件箱里搜一下所有带“报销”的未读邮件。", ["email.search", "email.send", "files.search_text"], "email.search",
         {"query": "报销", "folder": ["", "inbox"], "unread_only": True})
multiple("What's Maria Gonzalez's phone number?", ["contacts.lookup", "sms.send", "email.search"], "contacts.lookup",
         {"name": "Maria Gonzalez", "field": "phone"})
multiple("Where's my order 113-5550192-7734410?", ["shop.track_order", "shop.return_item", "shop.add_to_cart"], "shop.track_order",
         {"order_id": "113-5550192-7734410"})
multiple("把商品 SKU-88231 加入购物车，要 3 件。", ["shop.add_to_cart", "shop.search_products", "shop.price_history"], "shop.add_to_cart",
         {"product_id": "SKU-88231", "quantity": 3})
multiple("How has the price of SKU-40017 changed over the last 30 days?", ["shop.price_history", "shop.search_products", "stocks.history"], "shop.price_history",
         {"product_id": "SKU-40017", "days": 30})
multiple("What language is 'Obrigado pela ajuda' written in?", ["translate.detect_language", "translate.text", "dictionary.define"], "translate.detect_language",
         {"text": "Obrigado pela ajuda"})
multiple("“画蛇添足”这个成语是什么意思？", ["dictionary.define", "translate.text", "translate.detect_language"], "dictionary.define",
         {"word": "画蛇添足", "language": "zh"})
multiple("How many words are in 'The quick brown fox jumps over the lazy dog'?", ["text.count_words", "translate.detect_language", "dictionary.define"],
         "text.count_words", {"text": "The quick brown fox jumps over the lazy dog"})
multiple("analytics 数据库里有哪些表？", ["db.list_tables", "db.query", "db.backup"], "db.list_tables", {"database": "analytics"})
multiple("Back up the crm database to /backups/crm_2025-06-30.sql without compression.", ["db.backup", "db.query", "files.compress"], "db.backup",
         {"database": "crm", "destination": "/backups/crm_2025-06-30.sql", "compress": False})
multiple("Restart the payments deployment in the prod namespace.", ["k8s.rollout_restart", "k8s.scale_deployment", "k8s.get_pods"], "k8s.rollout_restart",
         {"deployment": "payments", "namespace": "prod"})
multiple("在 auth-service 的日志里搜索最近 30 分钟 error 级别的 “token expired”。", ["logs.search", "monitor.cpu_usage", "k8s.get_pods"], "logs.search",
         {"service": "auth-service", "query": "token expired", "level": "error", "since_minutes": 30})
multiple("How busy has the CPU on db-node-3 been over the last 15 minutes?", ["monitor.cpu_usage", "logs.search", "files.disk_usage"], "monitor.cpu_usage",
         {"host": "db-node-3", "window_minutes": 15})
multiple("How much disk space is /var/log taking?", ["files.disk_usage", "files.list", "monitor.cpu_usage"], "files.disk_usage", {"path": "/var/log"})
multiple("把 draft.md 重命名为 final.md，如果 final.md 已存在就覆盖它。", ["files.move", "files.compress", "files.read"], "files.move",
         {"source": "draft.md", "destination": "final.md", "overwrite": True})
multiple("Find every .py file under ./src that contains 'TODO', matching case exactly.", ["files.search_text", "files.list", "files.read"], "files.search_text",
         {"directory": ["./src", "src"], "text": "TODO", "case_sensitive": True, "extensions": [["py"]]})
multiple("Show me the first 20 lines of config/app.yaml.", ["files.read", "files.list", "files.search_text"], "files.read",
         {"path": ["config/app.yaml", "./config/app.yaml"], "max_lines": 20})
multiple("我今天喝了 500 毫升水，帮我记一下。", ["health.log_water", "nutrition.lookup", "health.daily_calories"], "health.log_water", {"amount_ml": 500})
multiple("Can I take ibuprofen together with warfarin?", ["health.drug_interactions", "health.find_doctor", "nutrition.lookup"], "health.drug_interactions",
         {"drugs": [["ibuprofen", "warfarin"], ["warfarin", "ibuprofen"]]})
multiple("在广州帮我找一位会说英语的儿科医生。", ["health.find_doctor", "maps.nearby", "health.drug_interactions"], "health.find_doctor",
         {"city": ["广州", "Guangzhou"], "specialty": "pediatrics", "language": "en"})
multiple("How many calories are in 150 g of avocado?", ["nutrition.lookup", "health.daily_calories", "recipes.search"], "nutrition.lookup",
         {"food": "avocado", "grams": 150.0})
multiple("Find a free advanced course on machine learning taught in Chinese.", ["edu.search_courses", "library.search_books", "podcasts.search"], "edu.search_courses",
         {"topic": "machine learning", "level": "advanced", "language": "zh", "free_only": True})
multiple("图书馆里有没有刘慈欣的《三体》？现在借不到的也列出来。", ["library.search_books", "edu.search_courses", "shop.search_products"], "library.search_books",
         {"query": ["三体", "《三体》", "三体 刘慈欣", "刘慈欣 三体", "刘慈欣 《三体》", "《三体》 刘慈欣"], "available_only": False})
multiple("A 2 kg ball moves at 3.5 m/s. What's its kinetic energy?", ["physics.kinetic_energy", "chem.element_info", "unit.convert_weight"], "physics.kinetic_energy",
         {"mass_kg": 2.0, "velocity_ms": 3.5})
multiple("LeBron James 在 2022-23 赛季的得分数据是多少？", ["sports.player_stats", "sports.standings", "sports.match_result"], "sports.player_stats",
         {"player": "LeBron James", "season": "2022-23", "stat": "points"})
multiple("What's the street address at latitude 48.8584, longitude 2.2945?", ["maps.reverse_geocode", "maps.geocode", "maps.directions"], "maps.reverse_geocode",
         {"latitude": 48.8584, "longitude": 2.2945})
multiple("把周杰伦《晴天》的歌词给我看看。", ["music.lyrics", "music.play", "music.concerts"], "music.lyrics",
         {"song": ["晴天", "《晴天》"], "artist": ["周杰伦", "Jay Chou"]})
multiple("Make a public playlist called 'Road Trip' with 'Go Your Own Way' and 'Africa'.", ["music.create_playlist", "music.play", "podcasts.search"],
         "music.create_playlist", {"name": "Road Trip", "songs": [["Go Your Own Way", "Africa"]], "public": True})
multiple("Turn off the bedroom lights.", ["home.lights", "home.set_thermostat", "reminders.create"], "home.lights", {"room": "bedroom", "on": False})
multiple("有没有 30 分钟内能做好的素食菜谱？要用豆腐和西兰花。", ["recipes.search", "nutrition.lookup", "restaurants.book"], "recipes.search",
         {"ingredients": [["豆腐", "西兰花"], ["西兰花", "豆腐"], ["tofu", "broccoli"], ["broccoli", "tofu"]], "diet": "vegetarian", "max_minutes": 30})
multiple("Showtimes for Dune: Part Two in Austin on 2024-03-09, please.", ["movies.showtimes", "music.concerts", "travel.attractions"], "movies.showtimes",
         {"movie": "Dune: Part Two", "city": ["Austin", "Austin, TX"], "date": "2024-03-09"})
