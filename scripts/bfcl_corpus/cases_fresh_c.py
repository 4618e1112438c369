"""Batch C (written 2026-12-06): public transit and rides, parking and EV charging, food delivery and groceries, event tickets, fitness and sleep, language learning, space and earth science."""
from cases_multi import Failed, ran, said, user
from fresh import Batch
from functions import B, D, F, I, L, S, fn, CURRENCIES, LANGS  # noqa: F401

BATCH = Batch()

# ---- public transit and ride hailing ----
TRANSIT_MODES = ["bus", "subway", "tram", "rail", "ferry"]
RIDE_TYPES = ["economy", "comfort", "xl", "premium"]
fn("transit.next_departures", "Next scheduled departures from one public transit stop, soonest first.", ["stop"],
   stop=S("Stop or station name, e.g. Alexanderplatz or 人民广场, or a stop id such as STP-40213."),
   line=S("Only departures of this line or route, e.g. U2, M10 or 2号线."),
   mode=S("Only this kind of vehicle.", ["any"] + TRANSIT_MODES, "any"),
   limit=I("How many departures to return.", None, 5))
fn("transit.plan_trip", "Plan a public transit journey between two places: its legs, transfers, duration in minutes and fare.", ["origin", "destination"],
   origin=S("Start address, stop or place name."),
   destination=S("End address, stop or place name."),
   date=S("Travel date, formatted YYYY-MM-DD; leave out for today."),
   depart_at=S("Departure time, HH:MM, 24-hour clock; leave out to leave now."),
   optimize=S("What the route minimises: total travel time, the number of transfers, or walking distance.", ["time", "transfers", "walking"], "time"),
   modes=L({"type": "string", "enum": TRANSIT_MODES}, "Only use these kinds of vehicle; leave out to allow all."))
fn("ride.estimate_fare", "Estimate the price and pick-up wait of a ride-hailing trip, without booking it.", ["pickup", "dropoff"],
   pickup=S("Pick-up address or place name."),
   dropoff=S("Drop-off address or place name."),
   ride_type=S("Service level: economy (standard car), comfort (newer, roomier car), xl (up to 6 riders), premium (luxury car).", RIDE_TYPES, "economy"))
fn("ride.request", "Book a ride-hailing car, now or for a later pick-up.", ["pickup", "dropoff"],
   pickup=S("Pick-up address or place name."),
   dropoff=S("Drop-off address or place name."),
   ride_type=S("Service level: economy (standard car), comfort (newer, roomier car), xl (up to 6 riders), premium (luxury car).", RIDE_TYPES, "economy"),
   passengers=I("Number of riders.", None, 1),
   schedule_at=S("Pick-up time of a ride booked ahead, formatted YYYY-MM-DD HH:MM (24-hour, local time); leave out for a car now."))
fn("ride.cancel", "Cancel a booked ride by its id.", ["ride_id"],
   ride_id=S("The ride id, e.g. RD-88412."),
   reason=S("Why the ride is cancelled.", ["plans_changed", "driver_too_far", "wrong_address", "booked_by_mistake", "other"], "other"))

# ---- parking and EV charging ----
fn("parking.find", "Find parking lots and garages with free spaces near a place.", ["location", "arrive_at", "duration_minutes"],
   location=S("Address or place name to park near."),
   arrive_at=S("Arrival, formatted YYYY-MM-DD HH:MM (24-hour, local time)."),
   duration_minutes=I("How long the car stays, in minutes."),
   max_price_per_hour=F("Highest hourly rate, in the local currency."),
   covered=B("Only covered or underground garages.", False),
   ev_charging=B("Only lots with EV charging points.", False))
fn("parking.reserve", "Reserve a space in a parking lot.", ["lot_id", "start", "duration_minutes", "vehicle"],
   lot_id=S("The lot id, e.g. PK-3390."),
   start=S("Start of the reservation, formatted YYYY-MM-DD HH:MM (24-hour, local time)."),
   duration_minutes=I("Length of the reservation in minutes."),
   vehicle=D("The car that will park.", ["plate"],
             plate=S("Licence plate as written, e.g. 沪A·12345 or 7ABC123."),
             size=S("Vehicle size.", ["compact", "standard", "large"], "standard"),
             electric=B("Whether it is an electric vehicle.", False)))
fn("ev.find_chargers", "Find EV charging stations around a point, nearest first.", ["latitude", "longitude"],
   latitude=F("Latitude in decimal degrees (south negative)."),
   longitude=F("Longitude in decimal degrees (west negative)."),
   radius_km=F("Search radius in km.", 5.0),
   connector=S("Plug type the car needs.", ["CCS", "CHAdeMO", "Type2", "GB/T", "Tesla"]),
   min_power_kw=F("Lowest charging power in kW, e.g. 50 for fast chargers."),
   available_only=B("Only chargers with a free stall right now.", False))

# ---- food delivery and groceries ----
fn("delivery.search_restaurants", "Find restaurants that deliver to an address.", ["address"],
   address=S("Delivery address."),
   cuisine=S("Kind of food, e.g. pizza, Thai or 川菜."),
   max_delivery_minutes=I("Longest acceptable delivery time in minutes."),
   sort_by=S("Order of results.", ["relevance", "rating", "delivery_time", "delivery_fee"], "relevance"))
fn("delivery.place_order", "Place a food delivery order at one restaurant.", ["restaurant_id", "items", "address"],
   restaurant_id=S("The restaurant id from a search, e.g. RST-2207."),
   items=L(D("One dish.", ["name", "quantity"],
             name=S("Dish name."),
             quantity=I("How many."),
             notes=S("Special request for this dish, e.g. no onions.")),
           "The dishes ordered."),
   address=S("Delivery address."),
   tip_percent=I("Tip for the courier, in percent of the food total."),
   deliver_at=S("Scheduled delivery time today, HH:MM, 24-hour clock; leave out for as soon as possible."))
fn("delivery.track_order", "Where a food delivery order is and when it should arrive.", ["order_id"],
   order_id=S("The delivery order id, e.g. DLV-550193."))
fn("grocery.add_to_list", "Add items to a shopping list in the grocery app.", ["items"],
   items=L({"type": "string"}, "Item names, one per item, as the user says them."),
   list_name=S("Which list.", None, "Groceries"))

# ---- event tickets ----
fn("events.search", "Search live events (concerts, sports, theatre ...) with tickets on sale in a city.", ["city"],
   city=S("City name."),
   keyword=S("Artist, team, show or other words to match."),
   category=S("Kind of event.", ["any", "concert", "sports", "theater", "comedy", "festival"], "any"),
   start_date=S("Earliest date, formatted YYYY-MM-DD."),
   end_date=S("Latest date, formatted YYYY-MM-DD."),
   max_price=F("Highest ticket price in US dollars."))
fn("events.buy_tickets", "Buy tickets for an event.", ["event_id", "quantity"],
   event_id=S("The event id from a search, e.g. EVT-77120."),
   quantity=I("Number of tickets, 1 to 8."),
   seat_type=S("Ticket tier.", ["general", "reserved", "vip"], "general"),
   holder=D("Whose name and email go on the tickets; leave out for the account owner.", ["name", "email"],
            name=S("Full name."), email=S("Email address.")))
fn("events.refund", "Ask for a refund of tickets already bought.", ["order_id"],
   order_id=S("The ticket order id, e.g. TKT-300981."),
   reason=S("Why.", ["event_cancelled", "event_postponed", "cannot_attend", "duplicate_purchase", "other"], "other"),
   tickets=I("How many of the order's tickets to refund; leave out for all of them."))

# ---- fitness and sleep ----
fn("fitness.log_workout", "Record a workout in the fitness diary.", ["activity", "duration_minutes"],
   activity=S("Kind of workout.", ["running", "walking", "cycling", "swimming", "hiking", "strength", "yoga", "rowing"]),
   duration_minutes=I("Length of the workout in minutes."),
   date=S("Day of the workout, formatted YYYY-MM-DD; leave out for today."),
   distance_km=F("Distance covered in km, where it applies."),
   intensity=S("How hard it felt.", ["easy", "moderate", "hard"], "moderate"))
fn("fitness.step_count", "Steps walked per day over a date range, from the phone or watch.", ["start_date", "end_date"],
   start_date=S("First day, formatted YYYY-MM-DD."),
   end_date=S("Last day, formatted YYYY-MM-DD."))
fn("sleep.report", "Sleep summary of one night: bedtime, wake time, total minutes asleep and a sleep score.", ["date"],
   date=S("The date of the morning the user woke up, formatted YYYY-MM-DD."),
   include_stages=B("Break the night down into light, deep and REM sleep.", False))

# ---- language learning ----
fn("lang.add_vocab", "Save a word or phrase to a vocabulary deck for spaced-repetition review.", ["term", "language"],
   term=S("The word or phrase in the language being learned, as written."),
   language=S("ISO 639-1 code of the language being learned.", LANGS),
   meaning=S("Its meaning or translation, in the user's words."),
   deck=S("Deck name.", None, "Default"))
fn("lang.quiz", "Start a practice quiz in a language being learned.", ["language"],
   language=S("ISO 639-1 code of the language being learned.", LANGS),
   skill=S("What the quiz tests.", ["vocabulary", "grammar", "listening", "reading"], "vocabulary"),
   level=S("CEFR level of the questions.", ["A1", "A2", "B1", "B2", "C1", "C2"]),
   questions=I("Number of questions.", None, 10),
   deck=S("Only words of this vocabulary deck."))

# ---- space and earth science ----
fn("space.iss_position", "Current position of the International Space Station over the Earth.", [],
   include_crew=B("Also list the people on board.", False))
fn("space.launches", "Scheduled rocket launches in a date range, earliest first.", [],
   start_date=S("Earliest launch date, formatted YYYY-MM-DD; default today."),
   end_date=S("Latest launch date, formatted YYYY-MM-DD."),
   provider=S("Launch provider, e.g. SpaceX, CASC or Rocket Lab."),
   limit=I("How many launches to return.", None, 10))
fn("space.sun_times", "Sunrise, sunset and day length at a place on a date, in local time.", ["location", "date"],
   location=S("City or place name, e.g. Reykjavík or 拉萨."),
   date=S("The day, formatted YYYY-MM-DD."),
   twilight=S("Twilight times (dawn and dusk) to add besides sunrise and sunset.", ["none", "civil", "nautical", "astronomical"], "none"))
fn("quake.recent", "Recent earthquakes, strongest first, worldwide or within a radius of a point.", [],
   min_magnitude=F("Smallest magnitude (moment magnitude, as in news reports), e.g. 4.5.", 2.5),
   days=I("How many days back to look, 1 to 30.", None, 7),
   latitude=F("Latitude of the centre in decimal degrees; leave out, with longitude, for worldwide."),
   longitude=F("Longitude of the centre in decimal degrees."),
   radius_km=F("Radius around the centre in km.", 500.0))


# ======== simple: one function offered, one call ========
BATCH.simple("2025年5月17日晚上八点我要到静安寺，停三个小时，帮我找个附近还有空位的地下停车场。", "parking.find",
             {"location": ["静安寺", "静安寺附近", "上海静安寺"], "arrive_at": "2025-05-17 20:00", "duration_minutes": 180, "covered": True})
BATCH.simple("Schedule an XL ride for 5 people from 350 Fifth Avenue to JFK Terminal 4, picking us up at 6:15 am on December 20, 2025.",
             "ride.request",
             {"pickup": ["350 Fifth Avenue", "350 Fifth Ave", "350 Fifth Avenue, New York", "350 Fifth Avenue, New York, NY", "350 5th Avenue"],
              "dropoff": ["JFK Terminal 4", "JFK Airport Terminal 4", "JFK airport, Terminal 4", "JFK, Terminal 4"],
              "ride_type": "xl", "passengers": 5, "schedule_at": "2025-12-20 06:15"})
BATCH.simple("What time are sunrise and sunset in Reykjavik on June 21, 2026? Include civil twilight too.", "space.sun_times",
             {"location": ["Reykjavik", "Reykjavík", "Reykjavik, Iceland", "Reykjavík, Iceland"], "date": "2026-06-21", "twilight": "civil"})
BATCH.simple("过去30天里，北纬36.2度、东经138.25度周围800公里内发生过5级以上的地震吗？", "quake.recent",
             {"min_magnitude": 5.0, "days": 30, "latitude": 36.2, "longitude": 138.25, "radius_km": 800.0})
BATCH.simple("Add the Spanish word 'madrugada' to my Travel deck; it means the early hours before dawn.", "lang.add_vocab",
             {"term": "madrugada", "language": "es", "meaning": ["the early hours before dawn", "early hours before dawn"], "deck": "Travel"})
BATCH.simple("帮我记一笔运动：2025年6月8日游泳半小时，强度轻松。", "fitness.log_workout",
             {"activity": "swimming", "duration_minutes": 30, "date": "2025-06-08", "intensity": "easy"})
BATCH.simple("Find theater shows in Chicago from March 3 to March 8, 2026, with tickets under $80.", "events.search",
             {"city": ["Chicago", "Chicago, IL"], "category": "theater", "start_date": "2026-03-03", "end_date": "2026-03-08", "max_price": 80.0})

# ======== multiple: look-alike functions offered, one is right ========
BATCH.multiple("Roughly what would a Comfort ride from Union Station to the Art Institute of Chicago cost right now? Just a quote, don't book anything.",
               ["ride.request", "ride.estimate_fare", "ride.cancel", "transit.plan_trip"], "ride.estimate_fare",
               {"pickup": ["Union Station", "Union Station, Chicago", "Chicago Union Station"],
                "dropoff": ["the Art Institute of Chicago", "Art Institute of Chicago"], "ride_type": "comfort"})
BATCH.multiple("人民广场站接下来的5班地铁2号线都是几点的？",
               ["transit.plan_trip", "transit.next_departures", "trains.search", "maps.directions"], "transit.next_departures",
               {"stop": ["人民广场站", "人民广场"], "line": ["2号线", "2", "地铁2号线", "Line 2"], "mode": ["subway", "", "any"], "limit": [5, ""]})
BATCH.multiple("Get me from King's Cross to Greenwich by public transport on September 14, 2025, leaving at 10:30 am. I want as few changes as possible.",
               ["maps.directions", "transit.plan_trip", "transit.next_departures", "ride.estimate_fare"], "transit.plan_trip",
               {"origin": ["King's Cross", "Kings Cross", "King's Cross, London", "King's Cross St Pancras", "King's Cross Station", "London King's Cross", "Kings Cross, London", "King’s Cross"],
                "destination": ["Greenwich", "Greenwich, London"], "date": "2025-09-14", "depart_at": "10:30", "optimize": "transfers"})
BATCH.multiple("在 PK-3390 停车场帮我预约个车位：2025年8月2日下午两点半开始，停两个半小时，车牌粤B·6M28Q，是电动车。",
               ["parking.find", "parking.reserve", "ev.find_chargers"], "parking.reserve",
               {"lot_id": "PK-3390", "start": "2025-08-02 14:30", "duration_minutes": 150,
                "vehicle": [{"plate": ["粤B·6M28Q", "粤B6M28Q"], "electric": [True]}]})
BATCH.multiple("The Lakeside Jazz Festival was postponed and I can't make the new date. Please refund 2 of the 4 tickets on order TKT-300981.",
               ["events.search", "events.buy_tickets", "events.refund"], "events.refund",
               {"order_id": "TKT-300981", "reason": ["event_postponed", "cannot_attend"], "tickets": 2})
BATCH.multiple("帮我看看2025年11月3日早上醒来之前那一晚睡得怎么样，把深睡、浅睡和REM分开列出来。",
               ["fitness.step_count", "sleep.report", "fitness.log_workout", "health.bmi"], "sleep.report",
               {"date": "2025-11-03", "include_stages": True})
BATCH.multiple("Which SpaceX launches are planned between July 1 and July 31, 2026? Just the first 5.",
               ["space.iss_position", "quake.recent", "space.launches", "space.sun_times"], "space.launches",
               {"provider": "SpaceX", "start_date": "2026-07-01", "end_date": "2026-07-31", "limit": 5})

# ======== parallel: one function, one call per item ========
BATCH.parallel("How much would a ride from SFO to the Ferry Building be in economy, in comfort and in premium?", "ride.estimate_fare",
               *({"pickup": ["SFO", "SFO airport", "San Francisco International Airport"],
                  "dropoff": ["the Ferry Building", "Ferry Building", "Ferry Building, San Francisco"], "ride_type": t}
                 for t in (["economy", ""], "comfort", "premium")))
BATCH.parallel("分别查一下我2025年10月和11月每天的步数。", "fitness.step_count",
               {"start_date": "2025-10-01", "end_date": "2025-10-31"}, {"start_date": "2025-11-01", "end_date": "2025-11-30"})
BATCH.parallel("When are sunrise and sunset on December 21, 2025 in Tromsø and in Cape Town?", "space.sun_times",
               {"location": ["Tromsø", "Tromso", "Tromsø, Norway", "Tromso, Norway"], "date": "2025-12-21"},
               {"location": ["Cape Town", "Cape Town, South Africa"], "date": "2025-12-21"})
BATCH.parallel("西直门和动物园这两个站接下来的公交车，各帮我查3班。", "transit.next_departures",
               {"stop": ["西直门", "西直门站"], "mode": "bus", "limit": 3}, {"stop": ["动物园", "动物园站"], "mode": "bus", "limit": 3})
BATCH.parallel("Save two German words to my 'B1 Verbs' deck: 'verschieben' (to postpone) and 'erledigen' (to take care of).", "lang.add_vocab",
               {"term": "verschieben", "language": "de", "meaning": ["to postpone", "postpone"], "deck": "B1 Verbs"},
               {"term": "erledigen", "language": "de", "meaning": ["to take care of", "take care of"], "deck": "B1 Verbs"})
BATCH.parallel("帮我查一下这两个外卖订单现在到哪了：DLV-550193 和 DLV-550207。", "delivery.track_order",
               {"order_id": "DLV-550193"}, {"order_id": "DLV-550207"})
BATCH.parallel("Look for comedy shows in Austin and in Denver between February 6 and February 8, 2026.", "events.search",
               {"city": ["Austin", "Austin, TX"], "category": "comedy", "start_date": "2026-02-06", "end_date": "2026-02-08"},
               {"city": ["Denver", "Denver, CO"], "category": "comedy", "start_date": "2026-02-06", "end_date": "2026-02-08"})

# ======== parallel_multiple: several functions, several calls ========
BATCH.parallel_multiple("Log a 40-minute easy yoga session on 2025-04-12, and pull my step counts for 2025-04-06 through 2025-04-12.",
                        ["fitness.log_workout", "fitness.step_count", "sleep.report", "health.log_water"],
                        ("fitness.log_workout", {"activity": "yoga", "duration_minutes": 40, "date": "2025-04-12", "intensity": "easy"}),
                        ("fitness.step_count", {"start_date": "2025-04-06", "end_date": "2025-04-12"}))
BATCH.parallel_multiple("把牛奶、鸡蛋和全麦面包加到购物清单里，再帮我看看外卖订单 DLV-612880 送到哪儿了。",
                        ["grocery.add_to_list", "delivery.track_order", "delivery.place_order", "shop.track_order"],
                        ("grocery.add_to_list", {"items": [["牛奶", "鸡蛋", "全麦面包"]], "list_name": ["", "Groceries", "购物清单"]}),
                        ("delivery.track_order", {"order_id": "DLV-612880"}))
BATCH.parallel_multiple("Buy 2 VIP tickets to EVT-77120 in my sister's name, Maya Okafor (maya.okafor@example.com), 3 reserved-seat tickets to "
                        "EVT-77121 for me, and refund order TKT-298114 because that show was cancelled.",
                        ["events.buy_tickets", "events.search", "events.refund"],
                        ("events.buy_tickets", {"event_id": "EVT-77120", "quantity": 2, "seat_type": "vip",
                                                "holder": [{"name": ["Maya Okafor"], "email": ["maya.okafor@example.com"]}]}),
                        ("events.buy_tickets", {"event_id": "EVT-77121", "quantity": 3, "seat_type": "reserved"}),
                        ("events.refund", {"order_id": "TKT-298114", "reason": "event_cancelled"}))
BATCH.parallel_multiple("国际空间站现在飞到哪了？另外告诉我2025年8月12日拉萨的日出和日落时间。",
                        ["space.iss_position", "space.sun_times", "space.launches", "quake.recent"],
                        ("space.iss_position", {}),
                        ("space.sun_times", {"location": ["拉萨", "Lhasa"], "date": "2025-08-12"}))
BATCH.parallel_multiple("Find me a parking spot with EV charging near Fenway Park on June 21, 2025 from 6:30 pm for 4 hours, "
                        "and estimate an economy ride from Back Bay Station to Fenway Park.",
                        ["parking.find", "parking.reserve", "ride.estimate_fare", "ride.request"],
                        ("parking.find", {"location": ["Fenway Park", "Fenway Park, Boston"], "arrive_at": "2025-06-21 18:30",
                                          "duration_minutes": 240, "ev_charging": True}),
                        ("ride.estimate_fare", {"pickup": ["Back Bay Station", "Back Bay Station, Boston"],
                                                "dropoff": ["Fenway Park", "Fenway Park, Boston"], "ride_type": ["economy", ""]}))
BATCH.parallel_multiple("帮我叫一辆舒适型的车，从浦东机场T2到外滩华尔道夫酒店；另外把之前那单 RD-88412 取消掉，是我订错了。",
                        ["ride.request", "ride.cancel", "ride.estimate_fare", "transit.plan_trip"],
                        ("ride.request", {"pickup": ["浦东机场T2", "浦东机场 T2", "浦东国际机场T2", "浦东国际机场 T2", "浦东机场T2航站楼", "浦东国际机场T2航站楼", "上海浦东国际机场T2", "浦东机场2号航站楼"],
                                          "dropoff": ["外滩华尔道夫酒店", "外滩华尔道夫", "上海外滩华尔道夫酒店"], "ride_type": "comfort"}),
                        ("ride.cancel", {"ride_id": "RD-88412", "reason": "booked_by_mistake"}))
BATCH.parallel_multiple("Start a 15-question A2 Japanese grammar quiz, and add 'komorebi' (sunlight filtering through leaves) to my Japanese deck 'Nature'.",
                        ["lang.quiz", "lang.add_vocab", "translate.text", "dictionary.define"],
                        ("lang.quiz", {"language": "ja", "skill": "grammar", "level": "A2", "questions": 15}),
                        ("lang.add_vocab", {"term": "komorebi", "language": "ja", "meaning": "sunlight filtering through leaves", "deck": "Nature"}))

# ======== irrelevance: same-topic functions, none answers ========
BATCH.irrelevance("Cancel my food delivery order DLV-604417, it's been over an hour and nothing has shown up.",
                  ["delivery.track_order", "delivery.place_order", "delivery.search_restaurants", "ride.cancel"])
BATCH.irrelevance("帮我启动 CHG-2231 号充电桩开始充电，充到 90% 就自动停。",
                  ["ev.find_chargers", "parking.find", "parking.reserve"])
BATCH.irrelevance("How much does a monthly unlimited public transport pass cost in Vienna?",
                  ["transit.plan_trip", "transit.next_departures", "ride.estimate_fare"])
BATCH.irrelevance("帮我把2025年9月所有的跑步记录都删掉。",
                  ["fitness.log_workout", "fitness.step_count", "sleep.report", "health.log_water"])
BATCH.irrelevance("Why does the Moon look so much bigger when it's close to the horizon?",
                  ["space.sun_times", "space.iss_position", "space.launches"])
BATCH.irrelevance("有什么适合零基础的日语学习方法推荐吗？",
                  ["lang.quiz", "lang.add_vocab", "translate.text"])
BATCH.irrelevance("List my two Coldplay tickets on the resale marketplace for $180 each.",
                  ["events.search", "events.buy_tickets", "events.refund"])

# ======== multi_turn: the results answer the request ========
BATCH.answer(["sleep.report", "fitness.step_count", "fitness.log_workout"],
             [user("How did I sleep the night before February 10, 2025, and how many steps did I walk on February 10?"),
              ran(("sleep.report", {"date": "2025-02-10"},
                   {"date": "2025-02-10", "bedtime": "23:48", "wake_time": "06:40", "total_minutes": 412, "sleep_score": 78, "awakenings": 2}),
                  ("fitness.step_count", {"start_date": "2025-02-10", "end_date": "2025-02-10"},
                   {"days": [{"date": "2025-02-10", "steps": 11342}], "total_steps": 11342, "daily_average": 11342}))],
             [["412", "6 h 52", "6h 52", "6h52", "6h 52m", "6h52m", "6 hours 52", "6 hours, 52", "6 hours and 52", "6 hr 52", "6 hrs 52", "78", "23:48"], ["11342"]],
             "You slept 412 minutes (6 h 52 min), from 23:48 to 06:40, with a sleep score of 78 and 2 awakenings. "
             "On 2025-02-10 you walked 11,342 steps.")
BATCH.answer(["events.search", "events.buy_tickets", "events.refund"],
             [user("周杰伦2026年3月在上海和北京有演唱会吗？票价多少？"),
              ran(("events.search", {"city": "上海", "keyword": "周杰伦", "category": "concert", "start_date": "2026-03-01", "end_date": "2026-03-31"},
                   {"events": [{"event_id": "EVT-80311", "name": "周杰伦「嘉年华」世界巡回演唱会 上海站", "venue": "上海体育场",
                                "date": "2026-03-14", "time": "19:30", "price_from": 580.0, "currency": "CNY"}]}),
                  ("events.search", {"city": "北京", "keyword": "周杰伦", "category": "concert", "start_date": "2026-03-01", "end_date": "2026-03-31"},
                   {"events": [{"event_id": "EVT-80342", "name": "周杰伦「嘉年华」世界巡回演唱会 北京站", "venue": "国家体育场（鸟巢）",
                                "date": "2026-03-28", "time": "19:30", "price_from": 680.0, "currency": "CNY"}]}))],
             [["2026-03-14", "3月14", "3 月 14", "03-14"], ["580"], ["2026-03-28", "3月28", "3 月 28", "03-28"], ["680"]],
             "都有。上海站是 2026-03-14 晚上 19:30，在上海体育场，票价 580 元起；北京站是 2026-03-28 晚上 19:30，在国家体育场（鸟巢），票价 680 元起。")
BATCH.answer(["ev.find_chargers", "parking.find", "maps.nearby"],
             [user("I'm at 47.6062, -122.3321 and my car takes CCS. Where's the nearest fast charger of at least 150 kW with a free stall right now?"),
              ran(("ev.find_chargers", {"latitude": 47.6062, "longitude": -122.3321, "connector": "CCS", "min_power_kw": 150.0, "available_only": True},
                   {"chargers": [
                       {"charger_id": "CHG-7781", "name": "EVgo Pike Street Garage", "address": "1421 Pike St, Seattle", "distance_km": 0.6,
                        "power_kw": 150, "free_stalls": 2, "price_per_kwh": 0.56, "currency": "USD"},
                       {"charger_id": "CHG-7790", "name": "Electrify America Seattle Center", "address": "305 Harrison St, Seattle", "distance_km": 2.1,
                        "power_kw": 350, "free_stalls": 4, "price_per_kwh": 0.64, "currency": "USD"},
                       {"charger_id": "CHG-7812", "name": "Shell Recharge SODO", "address": "2401 Utah Ave S, Seattle", "distance_km": 3.4,
                        "power_kw": 180, "free_stalls": 1, "price_per_kwh": 0.59, "currency": "USD"}]}))],
             [["Pike Street", "Pike St", "1421 Pike"]],
             "The nearest is EVgo Pike Street Garage at 1421 Pike St, 0.6 km away: 150 kW CCS, 2 stalls free, $0.56/kWh.")

# ======== multi_turn: the results lead to another call ========
BATCH.next_call(["delivery.search_restaurants", "delivery.place_order", "delivery.track_order", "grocery.add_to_list"],
                [user("Find a Thai restaurant that delivers to 221 Baker Street in 30 minutes or less, and from the best-rated one order "
                      "one pad thai with no peanuts and two spring rolls to that address."),
                 ran(("delivery.search_restaurants", {"address": "221 Baker Street", "cuisine": "Thai", "max_delivery_minutes": 30, "sort_by": "rating"},
                      {"restaurants": [
                          {"restaurant_id": "RST-2207", "name": "Thai Orchid", "rating": 4.7, "delivery_minutes": 25, "delivery_fee": 2.49},
                          {"restaurant_id": "RST-1930", "name": "Bangkok Street Kitchen", "rating": 4.5, "delivery_minutes": 20, "delivery_fee": 1.99},
                          {"restaurant_id": "RST-3118", "name": "Siam Noodle Bar", "rating": 4.2, "delivery_minutes": 28, "delivery_fee": 0.0}]}))],
                ("delivery.place_order", {"restaurant_id": "RST-2207", "address": "221 Baker Street", "items": [
                    [{"name": ["pad thai"], "quantity": [1], "notes": ["no peanuts", "without peanuts"]},
                     {"name": ["spring rolls", "spring roll"], "quantity": [2]}],
                    [{"name": ["spring rolls", "spring roll"], "quantity": [2]},
                     {"name": ["pad thai"], "quantity": [1], "notes": ["no peanuts", "without peanuts"]}]]}))
BATCH.next_call(["parking.find", "parking.reserve", "ev.find_chargers"],
                [user("2025年9月20日晚上7点半我要去工人体育场看球，帮我在附近找个停车场，大概停3个小时。"),
                 ran(("parking.find", {"location": "工人体育场", "arrive_at": "2025/09/20 19:30", "duration_minutes": 180},
                      Failed("invalid arrive_at '2025/09/20 19:30': expected YYYY-MM-DD HH:MM")))],
                ("parking.find", {"location": ["工人体育场", "工人体育场附近", "北京工人体育场"], "arrive_at": "2025-09-20 19:30", "duration_minutes": 180}))

# ======== multi_turn follow-ups: a finished turn, then a new question ========
BATCH.next_call(["transit.plan_trip", "transit.next_departures", "ride.estimate_fare", "maps.directions"],
                [user("帮我规划一下2025年10月1日从虹桥火车站到上海迪士尼的公交地铁路线，早上9点出发，换乘越少越好。"),
                 ran(("transit.plan_trip", {"origin": "虹桥火车站", "destination": "上海迪士尼", "date": "2025-10-01", "depart_at": "09:00", "optimize": "transfers"},
                      {"routes": [{"duration_minutes": 85, "transfers": 1, "walking_m": 450, "fare": 7.0, "currency": "CNY", "legs": [
                          {"mode": "subway", "line": "2号线", "from": "虹桥火车站", "to": "江苏路", "depart": "09:03", "arrive": "09:41"},
                          {"mode": "subway", "line": "11号线", "from": "江苏路", "to": "迪士尼", "depart": "09:47", "arrive": "10:28"}]}]})),
                 said("推荐路线只需换乘 1 次：09:03 在虹桥火车站乘 2 号线到江苏路，换乘 11 号线直达迪士尼站，10:28 到达，全程约 85 分钟，票价 7 元。"),
                 user("那10月2日下午两点出发呢？")],
                ("transit.plan_trip", {"origin": ["虹桥火车站", "上海虹桥火车站", "上海虹桥站"],
                                       "destination": ["上海迪士尼", "迪士尼", "上海迪士尼度假区", "上海迪士尼乐园", "迪士尼站"],
                                       "date": "2025-10-02", "depart_at": "14:00", "optimize": "transfers"}))
BATCH.answer(["space.iss_position", "space.launches", "space.sun_times"],
             [user("Where's the International Space Station right now?"),
              ran(("space.iss_position", {},
                   {"latitude": -12.43, "longitude": 143.9, "altitude_km": 418.2, "speed_kmh": 27580, "over": "Coral Sea, off Queensland, Australia",
                    "timestamp": "2025-11-21 03:14 UTC"})),
              said("Right now the ISS is over the Coral Sea off Queensland, Australia (12.43° S, 143.90° E), about 418 km up, moving at 27,580 km/h."),
              user("Neat. Roughly how long does it take to go once around the Earth?")],
             [["90", "91", "92", "92.5", "92.7", "92.8", "92.9", "93", "1.5", "an hour and a half", "one and a half hours", "1.5 hours", "一个半小时"]],
             "About 92 minutes: at roughly 27,600 km/h the ISS circles the Earth about 15 to 16 times a day.",
             no_tool=True)
