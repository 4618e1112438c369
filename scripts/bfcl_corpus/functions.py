"""The functions the corpus offers, in the BFCL shape ("type": "dict", Python type names).

Neighbours sit next to each other on purpose (weather now / forecast / air quality,
length / weight / temperature conversion, flights / trains / hotels ...): the cases use
them as distractors for one another.
"""

_NO = object()


def _p(type_, desc, enum=None, default=_NO, **extra):
    prop = {"type": type_, "description": desc}
    if enum is not None:
        prop["enum"] = enum
    if default is not _NO:
        prop["default"] = default
        shown = "null" if default is None else str(default).lower() if isinstance(default, bool) else default
        prop["description"] = f"{desc} Default: {shown}."
    prop.update(extra)
    return prop


def S(desc, enum=None, default=_NO):
    return _p("string", desc, enum, default)


def I(desc, enum=None, default=_NO):
    return _p("integer", desc, enum, default)


def F(desc, default=_NO):
    return _p("float", desc, None, default)


def B(desc, default=_NO):
    return _p("boolean", desc, None, default)


def L(items, desc, default=_NO):
    return _p("array", desc, None, default, items=items)


def D(desc, required, /, **props):
    return {"type": "dict", "description": desc, "properties": props, "required": required}


FUNCS = {}


def fn(fname, desc, required, /, **props):
    assert fname not in FUNCS, fname
    FUNCS[fname] = {"name": fname, "description": desc, "parameters": {"type": "dict", "properties": props, "required": required}}


CURRENCIES = ["USD", "EUR", "CNY", "JPY", "GBP", "HKD", "KRW", "AUD", "CAD", "CHF", "SGD"]
LANGS = ["en", "zh", "ja", "ko", "fr", "de", "es", "it", "ru", "pt", "ar"]
TEMP = ["celsius", "fahrenheit"]

# ---- weather ----
fn("weather.current", "Get the current weather conditions for a city.", ["city"],
   city=S("City name, e.g. Paris, 上海 or Springfield, IL."),
   unit=S("Temperature unit.", TEMP, "celsius"))
fn("weather.forecast", "Get the daily weather forecast for a city for the next days (today counts as day 1).", ["city", "days"],
   city=S("City name, e.g. Paris or 上海."),
   days=I("Number of days to forecast, 1 to 14."),
   unit=S("Temperature unit.", TEMP, "celsius"),
   include_hourly=B("Also return hourly values.", False))
fn("weather.air_quality", "Get the current air quality index (AQI) of a city.", ["city"],
   city=S("City name."),
   pollutant=S("Which pollutant to report; 'all' reports every one.", ["all", "pm2.5", "pm10", "o3", "no2", "so2", "co"], "all"))
fn("weather.historical", "Get the recorded weather of a city on a past date.", ["city", "date"],
   city=S("City name."),
   date=S("The past date, formatted YYYY-MM-DD."),
   unit=S("Temperature unit.", TEMP, "celsius"))

# ---- math ----
fn("math.factorial", "Compute the factorial n! of a non-negative integer.", ["number"],
   number=I("The non-negative integer n."))
fn("math.gcd", "Greatest common divisor of two integers.", ["a", "b"],
   a=I("First integer."), b=I("Second integer."))
fn("math.lcm", "Least common multiple of a list of positive integers.", ["numbers"],
   numbers=L({"type": "integer"}, "The integers, at least two."))
fn("math.evaluate", "Evaluate an arithmetic expression exactly as written.", ["expression"],
   expression=S("The expression in Python syntax, e.g. (3 + 4) * 2 or 2**10; keep the user's parentheses."),
   precision=I("Digits after the decimal point in the result.", None, 6))
fn("math.solve_quadratic", "Solve a*x^2 + b*x + c = 0 for real or complex roots.", ["a", "b", "c"],
   a=F("Coefficient of x^2."), b=F("Coefficient of x."), c=F("Constant term."))
fn("math.integrate", "Definite integral of a function of x over an interval.", ["function", "lower", "upper"],
   function=S("The integrand in Python syntax using x, e.g. 3*x**2 + 1."),
   lower=F("Lower bound."), upper=F("Upper bound."),
   method=S("Numerical method.", ["simpson", "trapezoid", "gauss"], "simpson"))
fn("math.derivative", "Value of the derivative of a function of x at a point.", ["function", "x"],
   function=S("The function in Python syntax using x, e.g. x**3 - 2*x."),
   x=F("The point where the derivative is evaluated."))
fn("math.prime_factors", "Prime factorization of a positive integer.", ["number"],
   number=I("The integer to factor, at least 2."))
fn("math.is_prime", "Whether an integer is prime.", ["number"],
   number=I("The integer to test."))
fn("stats.mean", "Arithmetic mean of a list of numbers.", ["numbers"],
   numbers=L({"type": "float"}, "The numbers."))
fn("stats.std_dev", "Standard deviation of a list of numbers.", ["numbers"],
   numbers=L({"type": "float"}, "The numbers."),
   sample=B("true for the sample standard deviation (n-1), false for the population one.", True))
fn("stats.median", "Median of a list of numbers.", ["numbers"],
   numbers=L({"type": "float"}, "The numbers."))
fn("geometry.circle_area", "Area of a circle from its radius.", ["radius"],
   radius=F("Radius of the circle."),
   unit=S("Length unit of the radius, e.g. cm or m.", None, "m"))
fn("geometry.triangle_area", "Area of a triangle from its base and height.", ["base", "height"],
   base=F("Length of the base."), height=F("Height on that base."))
fn("geometry.distance", "Euclidean distance between two points in the plane.", ["point_a", "point_b"],
   point_a=L({"type": "float"}, "First point as [x, y]."),
   point_b=L({"type": "float"}, "Second point as [x, y]."))

# ---- units ----
LEN = ["mm", "cm", "m", "km", "inch", "ft", "yd", "mile", "nautical_mile"]
WEIGHT = ["mg", "g", "kg", "t", "oz", "lb", "jin"]
VOL = ["ml", "l", "tsp", "tbsp", "cup", "fl_oz", "gallon"]
fn("unit.convert_length", "Convert a length between units.", ["value", "from_unit", "to_unit"],
   value=F("The length to convert."), from_unit=S("Unit of the value.", LEN), to_unit=S("Unit to convert to.", LEN))
fn("unit.convert_weight", "Convert a mass between units (jin is the Chinese 斤, 500 g).", ["value", "from_unit", "to_unit"],
   value=F("The mass to convert."), from_unit=S("Unit of the value.", WEIGHT), to_unit=S("Unit to convert to.", WEIGHT))
fn("unit.convert_temperature", "Convert a temperature between scales.", ["value", "from_scale", "to_scale"],
   value=F("The temperature."), from_scale=S("Scale of the value.", ["celsius", "fahrenheit", "kelvin"]),
   to_scale=S("Scale to convert to.", ["celsius", "fahrenheit", "kelvin"]))
fn("unit.convert_volume", "Convert a volume between units (US customary cups, fluid ounces and gallons).", ["value", "from_unit", "to_unit"],
   value=F("The volume to convert."), from_unit=S("Unit of the value.", VOL), to_unit=S("Unit to convert to.", VOL))

# ---- finance ----
fn("currency.convert", "Convert an amount of money at today's exchange rate.", ["amount", "from_currency", "to_currency"],
   amount=F("The amount to convert."),
   from_currency=S("ISO 4217 code of the currency converted from.", CURRENCIES),
   to_currency=S("ISO 4217 code of the currency converted to.", CURRENCIES))
fn("currency.history", "Exchange rate between two currencies on a past date.", ["base", "quote", "date"],
   base=S("ISO 4217 code of the base currency.", CURRENCIES),
   quote=S("ISO 4217 code of the quote currency.", CURRENCIES),
   date=S("The date, formatted YYYY-MM-DD."))
fn("stocks.quote", "Latest price of a listed stock.", ["symbol"],
   symbol=S("Ticker symbol in upper case, e.g. AAPL or 0700.HK."),
   exchange=S("Exchange code; leave out to let the symbol decide.", ["NASDAQ", "NYSE", "HKEX", "SSE", "SZSE", "TSE", "LSE"]))
fn("stocks.history", "Daily, weekly or monthly prices of a stock over a date range.", ["symbol", "start_date", "end_date"],
   symbol=S("Ticker symbol in upper case, e.g. MSFT."),
   start_date=S("First day, formatted MM-DD-YYYY."),
   end_date=S("Last day, formatted MM-DD-YYYY."),
   interval=S("Bar size.", ["daily", "weekly", "monthly"], "daily"))
fn("loan.monthly_payment", "Monthly payment of a fixed-rate amortized loan.", ["principal", "annual_rate", "years"],
   principal=F("The amount borrowed."),
   annual_rate=F("Yearly interest rate in percent, e.g. 4.5 for 4.5%."),
   years=I("Term of the loan in years."))
fn("finance.compound_interest", "Final balance of a deposit with compound interest.", ["principal", "rate", "years"],
   principal=F("The starting amount."),
   rate=F("Yearly interest rate as a decimal fraction, e.g. 0.05 for 5%."),
   years=F("How many years the money stays."),
   compounds_per_year=I("How often interest is added per year.", None, 12))
fn("tax.sales_tax", "Sales tax (or VAT) due on a price.", ["amount", "rate_percent"],
   amount=F("The price before tax."),
   rate_percent=F("Tax rate in percent, e.g. 8.25."),
   included=B("true when the amount already includes the tax.", False))
fn("budget.add_expense", "Record an expense in the personal budget.", ["amount", "category", "date"],
   amount=F("Amount spent."),
   currency=S("ISO 4217 code.", CURRENCIES, "USD"),
   category=S("Budget category.", ["food", "transport", "housing", "entertainment", "health", "education", "shopping", "other"]),
   date=S("Day of the expense, formatted YYYY-MM-DD."),
   note=S("Free-text note."))

# ---- travel ----
fn("flights.search", "Search flights between two airports.", ["origin", "destination", "depart_date"],
   origin=S("IATA code of the departure airport, e.g. PEK, SFO."),
   destination=S("IATA code of the arrival airport."),
   depart_date=S("Departure date, formatted YYYY-MM-DD."),
   return_date=S("Return date for a round trip, formatted YYYY-MM-DD; leave out for one way."),
   passengers=I("Number of adult passengers.", None, 1),
   cabin=S("Cabin class.", ["economy", "premium_economy", "business", "first"], "economy"))
fn("flights.status", "Live status of a flight.", ["flight_number"],
   flight_number=S("Airline code and number, e.g. CA981."),
   date=S("Scheduled departure date, formatted YYYY-MM-DD; default today."))
fn("hotels.search", "Search hotels in a city for given nights.", ["city", "check_in", "check_out"],
   city=S("City name."),
   check_in=S("Arrival date, formatted YYYY-MM-DD."),
   check_out=S("Departure date, formatted YYYY-MM-DD."),
   guests=I("Number of guests.", None, 2),
   max_price=F("Highest price per night in US dollars."),
   amenities=L({"type": "string", "enum": ["wifi", "pool", "gym", "parking", "breakfast", "pets"]}, "Amenities the hotel must have."))
fn("trains.search", "Search train tickets between two stations.", ["from_station", "to_station", "date"],
   from_station=S("Departure station or city, e.g. 北京南 or Paris Gare de Lyon."),
   to_station=S("Arrival station or city."),
   date=S("Travel date, formatted YYYY-MM-DD."),
   seat_class=S("Seat class.", ["second", "first", "business"], "second"),
   earliest_departure=S("Earliest departure time, HH:MM, 24-hour clock."))
fn("car_rental.search", "Search rental cars at a pick-up location.", ["location", "pickup_date", "return_date"],
   location=S("City or airport code where the car is picked up."),
   pickup_date=S("Pick-up date, formatted MM-DD-YYYY."),
   return_date=S("Return date, formatted MM-DD-YYYY."),
   car_type=S("Vehicle class.", ["economy", "compact", "suv", "van", "luxury", "electric"], "economy"))
fn("travel.attractions", "Top tourist attractions in a city.", ["city"],
   city=S("City name."),
   category=S("Kind of attraction.", ["any", "museum", "park", "landmark", "shopping", "food"], "any"),
   limit=I("How many to return.", None, 10))

# ---- time ----
fn("time.convert_timezone", "Convert a local date and time from one time zone to another.", ["datetime", "from_tz", "to_tz"],
   datetime=S("Local date and time, formatted YYYY-MM-DD HH:MM (24-hour)."),
   from_tz=S("IANA time zone of the given time, e.g. Asia/Shanghai."),
   to_tz=S("IANA time zone to convert to, e.g. America/New_York."))
fn("time.now", "Current local time in a time zone.", ["timezone"],
   timezone=S("IANA time zone, e.g. Europe/London."))
fn("time.days_between", "Number of days from one date to another.", ["start_date", "end_date"],
   start_date=S("First date, formatted YYYY-MM-DD."),
   end_date=S("Second date, formatted YYYY-MM-DD."),
   business_days_only=B("Count Monday to Friday only.", False))

# ---- calendar ----
fn("calendar.create_event", "Create an event in the user's calendar.", ["title", "date", "start_time"],
   title=S("Event title."),
   date=S("Day of the event, formatted YYYY-MM-DD."),
   start_time=S("Start time, HH:MM, 24-hour clock."),
   duration_minutes=I("Length of the event in minutes.", None, 60),
   attendees=L({"type": "string"}, "Email addresses of the people invited."),
   location=D("Where the event is held.", ["room"],
              room=S("Room name."), floor=I("Floor number."), building=S("Building name.")))
fn("calendar.list_events", "List the events in the user's calendar between two dates.", ["start_date", "end_date"],
   start_date=S("First day, formatted YYYY-MM-DD."),
   end_date=S("Last day, formatted YYYY-MM-DD."),
   keyword=S("Only events whose title contains this text."))
fn("calendar.cancel_event", "Cancel a calendar event by its id.", ["event_id"],
   event_id=S("The event id, e.g. evt_1024."),
   notify_attendees=B("Email the attendees about the cancellation.", True))
fn("reminders.create", "Set a reminder.", ["text", "remind_at"],
   text=S("What to remind about."),
   remind_at=S("When, formatted YYYY-MM-DD HH:MM (24-hour, local time)."),
   repeat=S("Repetition.", ["none", "daily", "weekly", "monthly"], "none"))

# ---- messaging ----
fn("email.send", "Send an email.", ["to", "subject", "body"],
   to=L({"type": "string"}, "Recipient email addresses."),
   subject=S("Subject line."),
   body=S("Plain-text body."),
   cc=L({"type": "string"}, "Email addresses to copy."),
   priority=S("Priority flag.", ["low", "normal", "high"], "normal"))
fn("email.search", "Search the user's mailbox.", ["query"],
   query=S("Words to look for in subject, body or sender."),
   folder=S("Folder to search.", ["inbox", "sent", "archive", "all"], "inbox"),
   unread_only=B("Only unread messages.", False))
fn("sms.send", "Send a text message to a phone number.", ["phone_number", "message"],
   phone_number=S("Phone number in E.164 format, e.g. +8613800138000."),
   message=S("Text of the message."))
fn("chat.post_message", "Post a message in a team chat channel.", ["channel", "text"],
   channel=S("Channel name with its leading #, e.g. #general."),
   text=S("Message text."),
   mention=L({"type": "string"}, "User names to @-mention, without the @."))
fn("contacts.lookup", "Find a contact in the address book by name.", ["name"],
   name=S("Full or partial name."),
   field=S("Which detail to return.", ["all", "phone", "email", "address"], "all"))

# ---- shopping ----
fn("shop.search_products", "Search the online store's catalogue.", ["query"],
   query=S("What to search for."),
   category=S("Department.", ["any", "electronics", "books", "home", "clothing", "sports", "toys", "grocery"], "any"),
   max_price=F("Highest price in US dollars."),
   sort_by=S("Order of results.", ["relevance", "price_asc", "price_desc", "rating"], "relevance"))
fn("shop.add_to_cart", "Add a product to the shopping cart.", ["product_id"],
   product_id=S("The product id, e.g. SKU-10293."),
   quantity=I("How many.", None, 1))
fn("shop.track_order", "Shipping status of an order.", ["order_id"],
   order_id=S("The order number, e.g. 114-3941689-8772232."))
fn("shop.return_item", "Start a return for an item of an order.", ["order_id", "product_id", "reason"],
   order_id=S("The order number."),
   product_id=S("The product id."),
   reason=S("Why it is returned.", ["damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"]))
fn("shop.price_history", "Price history of a product over the last days.", ["product_id"],
   product_id=S("The product id."),
   days=I("How many days back.", None, 90))

# ---- translation / language ----
fn("translate.text", "Translate text into another language.", ["text", "target_language"],
   text=S("The text to translate, exactly as given."),
   target_language=S("ISO 639-1 code of the language to translate into.", LANGS),
   source_language=S("ISO 639-1 code of the text's language, or auto to detect it.", ["auto"] + LANGS, "auto"),
   formality=S("Register of the translation.", ["default", "formal", "informal"], "default"))
fn("translate.detect_language", "Detect the language of a text.", ["text"],
   text=S("The text."))
fn("dictionary.define", "Dictionary definitions of a word.", ["word"],
   word=S("The word, as written."),
   language=S("ISO 639-1 code of the word's language.", LANGS, "en"),
   include_examples=B("Add example sentences.", False))
fn("text.count_words", "Count the words and characters of a text.", ["text"],
   text=S("The text."))

# ---- databases ----
fn("db.query", "Run a read-only SQL query on a database.", ["database", "sql"],
   database=S("Database name."),
   sql=S("One SELECT statement."),
   limit=I("Most rows returned.", None, 100))
fn("db.list_tables", "List the tables of a database.", ["database"],
   database=S("Database name."),
   schema=S("Schema to list.", None, "public"))
fn("db.create_table", "Create a table.", ["database", "table", "columns"],
   database=S("Database name."),
   table=S("New table name."),
   columns=L(D("One column.", ["name", "type"],
               name=S("Column name."),
               type=S("SQL type.", ["INTEGER", "BIGINT", "TEXT", "VARCHAR(255)", "BOOLEAN", "DATE", "TIMESTAMP", "NUMERIC(10,2)"]),
               nullable=B("Whether NULL is allowed.", True)),
             "Columns in order."),
   if_not_exists=B("Do nothing if the table exists.", False))
fn("db.backup", "Back up a database to a file.", ["database", "destination"],
   database=S("Database name."),
   destination=S("Path of the backup file."),
   compress=B("gzip the backup.", True))

# ---- devops ----
fn("k8s.scale_deployment", "Set the replica count of a Kubernetes deployment.", ["deployment", "replicas"],
   deployment=S("Deployment name."),
   replicas=I("Desired number of replicas."),
   namespace=S("Kubernetes namespace.", None, "default"))
fn("k8s.get_pods", "List the pods of a namespace.", ["namespace"],
   namespace=S("Kubernetes namespace."),
   label_selector=S("Label selector, e.g. app=web."),
   status=S("Only pods in this phase.", ["any", "Running", "Pending", "Failed", "Succeeded"], "any"))
fn("k8s.rollout_restart", "Restart the pods of a deployment with a rolling update.", ["deployment"],
   deployment=S("Deployment name."),
   namespace=S("Kubernetes namespace.", None, "default"))
fn("docker.run", "Start a container from an image.", ["image"],
   image=S("Image reference, e.g. nginx:1.25."),
   name=S("Container name."),
   ports=L({"type": "string"}, "Port mappings as HOST:CONTAINER, e.g. 8080:80."),
   detach=B("Run in the background.", True))
fn("ci.trigger_pipeline", "Start a CI pipeline on a branch.", ["repository", "branch"],
   repository=S("Repository as owner/name."),
   branch=S("Branch name."),
   variables=D("Pipeline variables.", [], DEPLOY_ENV=S("Target environment.", ["dev", "staging", "production"]),
               RUN_E2E=B("Run end-to-end tests.")))
fn("logs.search", "Search service logs.", ["service", "query"],
   service=S("Service name."),
   query=S("Text to look for."),
   level=S("Lowest log level.", ["debug", "info", "warn", "error"], "info"),
   since_minutes=I("How far back to look, in minutes.", None, 60))
fn("monitor.cpu_usage", "Recent CPU usage of a host.", ["host"],
   host=S("Host name."),
   window_minutes=I("Averaging window in minutes.", None, 5))

# ---- files ----
fn("files.list", "List the files in a directory.", ["path"],
   path=S("Directory path, e.g. ~/Documents or ./src."),
   pattern=S("Glob pattern the names must match, e.g. *.pdf.", None, "*"),
   recursive=B("Include subdirectories.", False))
fn("files.read", "Read a text file.", ["path"],
   path=S("File path."),
   max_lines=I("Read at most this many lines from the start."))
fn("files.move", "Move or rename a file.", ["source", "destination"],
   source=S("Current path."),
   destination=S("New path."),
   overwrite=B("Replace an existing file at the destination.", False))
fn("files.compress", "Pack files into an archive.", ["paths", "archive_path"],
   paths=L({"type": "string"}, "Files or directories to pack."),
   archive_path=S("Path of the archive to write."),
   format=S("Archive format.", ["zip", "tar.gz", "7z"], "zip"))
fn("files.search_text", "Find files under a directory that contain a text.", ["directory", "text"],
   directory=S("Directory to search."),
   text=S("Text to find."),
   case_sensitive=B("Match case exactly.", False),
   extensions=L({"type": "string"}, "Only files with these extensions, without the dot, e.g. md."))
fn("files.disk_usage", "Disk space used by a directory.", ["path"],
   path=S("Directory path."),
   human_readable=B("Sizes like 1.2G instead of bytes.", True))

# ---- health ----
fn("health.bmi", "Body mass index from weight and height.", ["weight_kg", "height_m"],
   weight_kg=F("Weight in kilograms."), height_m=F("Height in metres, e.g. 1.75."))
fn("health.daily_calories", "Daily calorie needs (Mifflin-St Jeor).", ["age", "sex", "weight_kg", "height_cm"],
   age=I("Age in years."), sex=S("Sex.", ["male", "female"]),
   weight_kg=F("Weight in kilograms."), height_cm=F("Height in centimetres."),
   activity=S("Activity level.", ["sedentary", "light", "moderate", "active", "very_active"], "sedentary"))
fn("health.log_water", "Log water drunk.", ["amount_ml"],
   amount_ml=I("Amount in millilitres."),
   date=S("Day, formatted YYYY-MM-DD; default today."))
fn("health.find_doctor", "Find doctors near a city.", ["city", "specialty"],
   city=S("City name."),
   specialty=S("Medical specialty.", ["general", "pediatrics", "dermatology", "cardiology", "dentistry", "ophthalmology", "orthopedics"]),
   language=S("Language the doctor speaks, ISO 639-1 code.", LANGS))
fn("health.drug_interactions", "Check known interactions between medicines.", ["drugs"],
   drugs=L({"type": "string"}, "Generic names of the medicines, at least two."))
fn("nutrition.lookup", "Nutrition facts of a food for a given weight.", ["food", "grams"],
   food=S("The food, e.g. banana or 米饭."),
   grams=F("Weight in grams."))

# ---- education ----
fn("edu.weighted_average", "Weighted average of scores.", ["scores", "weights"],
   scores=L({"type": "float"}, "The scores."),
   weights=L({"type": "float"}, "The weights, one per score, in the same order."))
fn("edu.search_courses", "Search online courses.", ["topic"],
   topic=S("Subject of the course."),
   level=S("Difficulty.", ["beginner", "intermediate", "advanced"], "beginner"),
   language=S("ISO 639-1 code of the teaching language.", LANGS, "en"),
   free_only=B("Only free courses.", False))
fn("chem.element_info", "A property of a chemical element.", ["element", "property"],
   element=S("Element symbol, e.g. Fe."),
   property=S("Which property.", ["atomic_number", "atomic_mass", "electronegativity", "melting_point", "density"]))
fn("physics.kinetic_energy", "Kinetic energy of a moving body in joules.", ["mass_kg", "velocity_ms"],
   mass_kg=F("Mass in kilograms."), velocity_ms=F("Speed in metres per second."))
fn("library.search_books", "Search the library catalogue.", ["query"],
   query=S("Title, author or keywords."),
   available_only=B("Only books that can be borrowed now.", True),
   language=S("ISO 639-1 code of the book's language."))

# ---- sports ----
fn("sports.match_result", "Result of a team's match on a date.", ["team", "date"],
   team=S("Team name, e.g. Arsenal or 广州队."),
   date=S("Match day, formatted YYYY-MM-DD."))
fn("sports.standings", "League table of a season.", ["league", "season"],
   league=S("League.", ["premier_league", "la_liga", "bundesliga", "serie_a", "csl", "nba", "nfl"]),
   season=S("Season, e.g. 2023-24 (or 2024 for single-year seasons)."),
   top=I("Only the first rows.", None, 20))
fn("sports.player_stats", "Season statistics of a player.", ["player", "season"],
   player=S("Player's full name."),
   season=S("Season, e.g. 2023-24."),
   stat=S("Which statistic.", ["all", "points", "goals", "assists", "rebounds", "minutes"], "all"))
fn("sports.schedule", "Upcoming fixtures of a team.", ["team"],
   team=S("Team name."),
   count=I("How many fixtures.", None, 5))

# ---- maps ----
fn("maps.directions", "Route between two places.", ["origin", "destination"],
   origin=S("Start address or place name."),
   destination=S("End address or place name."),
   mode=S("Travel mode.", ["driving", "walking", "transit", "cycling"], "driving"),
   avoid=L({"type": "string", "enum": ["tolls", "highways", "ferries"]}, "Road types to avoid."))
fn("maps.nearby", "Places of a kind near a location.", ["location", "place_type"],
   location=S("Address or place name to search around."),
   place_type=S("Kind of place.", ["restaurant", "cafe", "pharmacy", "hospital", "gas_station", "atm", "parking", "supermarket"]),
   radius_m=I("Search radius in metres.", None, 1000),
   open_now=B("Only places open now.", False))
fn("maps.geocode", "Coordinates of an address.", ["address"],
   address=S("The address or place name."))
fn("maps.reverse_geocode", "Address at given coordinates.", ["latitude", "longitude"],
   latitude=F("Latitude in decimal degrees."), longitude=F("Longitude in decimal degrees."))

# ---- music / media ----
fn("music.play", "Play a song in the music app.", ["song"],
   song=S("Song title."),
   artist=S("Artist name."),
   shuffle=B("Shuffle the rest of the queue.", False))
fn("music.create_playlist", "Create a playlist.", ["name"],
   name=S("Playlist name."),
   songs=L({"type": "string"}, "Song titles to add, in order."),
   public=B("Visible to other users.", False))
fn("music.lyrics", "Lyrics of a song.", ["song"],
   song=S("Song title."), artist=S("Artist name."))
fn("music.concerts", "Upcoming concerts of an artist.", ["artist"],
   artist=S("Artist name."),
   city=S("Only concerts in this city."))
fn("movies.showtimes", "Cinema showtimes of a film.", ["movie", "city", "date"],
   movie=S("Film title."), city=S("City name."), date=S("Day, formatted YYYY-MM-DD."))
fn("podcasts.search", "Search podcast episodes.", ["query"],
   query=S("Search words."),
   language=S("ISO 639-1 code.", LANGS, "en"),
   max_minutes=I("Longest episode length in minutes."))

# ---- home / food ----
fn("home.set_thermostat", "Set the thermostat of a room.", ["room", "temperature"],
   room=S("Room name."),
   temperature=F("Target temperature in degrees Celsius."),
   mode=S("HVAC mode.", ["auto", "heat", "cool", "off"], "auto"))
fn("home.lights", "Switch the lights of a room.", ["room", "on"],
   room=S("Room name."),
   on=B("true to switch on, false to switch off."),
   brightness=I("Brightness in percent, 1 to 100."))
fn("recipes.search", "Find recipes.", ["ingredients"],
   ingredients=L({"type": "string"}, "Ingredients the recipe must use."),
   diet=S("Diet the recipe must fit.", ["none", "vegetarian", "vegan", "gluten_free", "keto"], "none"),
   max_minutes=I("Longest total cooking time in minutes."))
fn("restaurants.book", "Book a table at a restaurant.", ["restaurant", "date", "time", "party_size"],
   restaurant=S("Restaurant name."),
   date=S("Day, formatted YYYY-MM-DD."),
   time=S("Time, HH:MM, 24-hour clock."),
   party_size=I("Number of people."),
   preferences=D("Seating wishes.", [], outdoor=B("Sit outside."), high_chair=B("A high chair for a child.")))
