"""Batch A (written 2026-12-06): pets, gardening, real estate and rent, insurance, banking, utility bills."""
from cases_multi import Failed, ran, said, user  # noqa: F401 (Failed kept for the batch API)
from fresh import Batch
from functions import B, D, F, I, L, S, fn, CURRENCIES, LANGS  # noqa: F401

BATCH = Batch()

# ---- pets ----
SPECIES = ["dog", "cat", "rabbit", "bird", "reptile", "other"]
fn("pets.find_vet", "Find veterinary clinics in a city.", ["city"],
   city=S("City name, e.g. Denver or 广州."),
   species=S("Kind of animal the clinic must treat.", SPECIES),
   service=S("Service the clinic must offer.", ["general", "vaccination", "dental", "surgery", "emergency", "grooming"], "general"),
   open_now=B("Only clinics open right now.", False))
fn("pets.book_vet_appointment", "Book an appointment at a veterinary clinic.", ["clinic_id", "pet_name", "species", "date", "time"],
   clinic_id=S("Clinic id as pets.find_vet returns it, e.g. VET-2231."),
   pet_name=S("The pet's name."),
   species=S("Kind of animal.", SPECIES),
   date=S("Day of the visit, formatted YYYY-MM-DD."),
   time=S("Start time, HH:MM, 24-hour clock."),
   reason=S("Reason for the visit.", ["checkup", "vaccination", "dental", "illness", "injury", "follow_up"], "checkup"))
fn("pets.vaccination_schedule", "Recommended vaccinations of a pet with the date each one is due.", ["species", "birth_date"],
   species=S("Kind of animal.", ["dog", "cat", "rabbit", "ferret"]),
   birth_date=S("The pet's date of birth, formatted YYYY-MM-DD."),
   lifestyle=S("Where the pet lives, which decides the optional vaccines.", ["indoor", "outdoor", "mixed"], "mixed"))
fn("pets.food_portion", "Recommended daily portion of dry food for a dog or cat, in grams.", ["species", "weight_kg"],
   species=S("Kind of animal.", ["dog", "cat"]),
   weight_kg=F("Body weight in kilograms."),
   age_years=F("Age in years, e.g. 0.5 for six months."),
   activity=S("How active the pet is.", ["low", "normal", "high"], "normal"),
   neutered=B("Whether the pet is spayed or neutered."))

# ---- gardening ----
fn("garden.plant_info", "Care facts of a plant: light, watering, soil, cold hardiness and toxicity to people and pets.", ["plant"],
   plant=S("Common or botanical name, e.g. monstera or 绿萝."),
   detail=S("Which fact to return.", ["all", "light", "water", "soil", "hardiness", "toxicity"], "all"))
fn("garden.watering_schedule", "Watering plan for a plant over the coming days, adjusted to the local weather forecast.", ["plant", "city"],
   plant=S("Common name of the plant, e.g. basil."),
   city=S("City where the plant grows."),
   location=S("Where the plant stands.", ["indoor", "balcony", "garden_bed", "greenhouse"], "indoor"),
   pot_diameter_cm=F("Diameter of the pot in centimetres; leave out for plants in the ground."),
   days=I("How many days to plan, 1 to 14.", None, 7))
fn("garden.frost_dates", "Average last spring frost and first autumn frost dates of a place, with its hardiness zone.", ["city"],
   city=S("City name."),
   confidence=I("Chance in percent that a frost still comes after the spring date (or before the autumn date).", [10, 30, 50, 90], 30))

# ---- real estate and renting ----
fn("realestate.search_listings", "Search homes listed for rent or for sale.", ["city", "listing_type"],
   city=S("City name, e.g. Austin or 深圳."),
   district=S("Neighbourhood or district within the city, e.g. 南山区 or Brooklyn."),
   listing_type=S("Rentals or homes for sale.", ["rent", "sale"]),
   property_type=S("Kind of home.", ["any", "apartment", "house", "condo", "townhouse", "studio"], "any"),
   min_bedrooms=I("Fewest bedrooms."),
   max_price=F("Highest price in the currency given: the monthly rent for rentals, the asking price for sales."),
   currency=S("ISO 4217 code of max_price.", CURRENCIES, "USD"),
   requirements=D("Features the home must have; give only those asked for.", [],
                  pets_allowed=B("Pets are allowed."), furnished=B("Comes furnished."),
                  parking=B("Has a parking space."), elevator=B("The building has an elevator.")),
   sort_by=S("Order of results.", ["newest", "price_asc", "price_desc", "size_desc"], "newest"))
fn("realestate.estimate_value", "Estimate today's market value of a home.", ["address", "area_sqm"],
   address=S("Street address with the city, e.g. 12 Elm Street, Bristol."),
   area_sqm=F("Living area in square metres."),
   bedrooms=I("Number of bedrooms."),
   year_built=I("Year of construction, e.g. 1998."),
   property_type=S("Kind of home.", ["apartment", "house", "condo", "townhouse"]))
fn("realestate.rental_yield", "Gross and net yearly rental yield of a property from its price and rent.", ["purchase_price", "monthly_rent"],
   purchase_price=F("Price paid for the property."),
   monthly_rent=F("Expected rent per month, in the same currency."),
   annual_costs=F("Yearly costs of owning it (tax, insurance, upkeep), in the same currency."),
   vacancy_rate=F("Expected share of the year the home stands empty, as a decimal fraction, e.g. 0.05 for 5%.", 0.0))
fn("realestate.schedule_viewing", "Book a viewing of a listed home.", ["listing_id", "date", "time", "contact"],
   listing_id=S("Listing id, e.g. LST-88213."),
   date=S("Day of the viewing, formatted YYYY-MM-DD."),
   time=S("Start time, HH:MM, 24-hour clock."),
   contact=D("Who comes to the viewing.", ["name", "phone"],
             name=S("Full name."),
             phone=S("Phone number in E.164 format, e.g. +14155550123."),
             email=S("Email address.")),
   virtual=B("A live video tour instead of a visit.", False))

# ---- insurance ----
fn("insurance.get_quote", "Price quote for a new insurance policy.", ["insurance_type", "coverage_amount", "start_date"],
   insurance_type=S("Kind of insurance.", ["auto", "home", "renters", "pet", "travel", "health", "life"]),
   coverage_amount=F("Most the policy pays out, in the currency given."),
   currency=S("ISO 4217 code of the amounts.", CURRENCIES, "USD"),
   deductible=F("What the policyholder pays per claim before the cover starts, in the same currency."),
   start_date=S("First day of cover, formatted YYYY-MM-DD."),
   term_months=I("Length of the policy in months.", None, 12),
   subject=D("Details of who or what is insured; give those the user states.", [],
             age=I("Age in years of the person or pet insured."),
             postal_code=S("Postal code where the insured home or car is kept."),
             breed=S("Breed, for pet insurance.")))
fn("insurance.file_claim", "File a claim on an existing insurance policy.", ["policy_number", "incident_date", "claim_type", "amount"],
   policy_number=S("Policy number, e.g. POL-4471-AX."),
   incident_date=S("Day the loss happened, formatted YYYY-MM-DD."),
   claim_type=S("Kind of loss.", ["collision", "theft", "water_damage", "fire", "medical", "vet_bill", "trip_cancellation", "other"]),
   amount=F("Amount claimed."),
   currency=S("ISO 4217 code of the amount.", CURRENCIES, "USD"),
   description=S("What happened, in the user's words."))
fn("insurance.claim_status", "Status of a claim already filed: stage, amount approved, payout date.", ["claim_id"],
   claim_id=S("Claim id, e.g. CLM-20931."))
fn("insurance.get_policy", "Details of an existing policy: what it covers, limits, deductible, premium and renewal date.", ["policy_number"],
   policy_number=S("Policy number, e.g. POL-4471-AX."))

# ---- banking ----
ACCOUNTS = ["checking", "savings", "credit_card"]
fn("bank.get_balance", "Current balance of one of the user's bank accounts (for the credit card: the amount owed and the limit).", ["account"],
   account=S("Which account.", ACCOUNTS),
   include_pending=B("Count pending transactions in the balance.", False))
fn("bank.list_transactions", "List the transactions of one of the user's accounts between two dates.", ["account", "start_date", "end_date"],
   account=S("Which account.", ACCOUNTS),
   start_date=S("First day, formatted YYYY-MM-DD."),
   end_date=S("Last day, formatted YYYY-MM-DD."),
   min_amount=F("Only transactions of at least this amount, in the account's currency."),
   merchant=S("Only transactions whose merchant name contains this text."),
   direction=S("Money out (debit), in (credit) or both.", ["all", "debit", "credit"], "all"))
fn("bank.transfer", "Send money from one of the user's accounts to another person's bank account.", ["from_account", "recipient", "amount", "currency"],
   from_account=S("Account the money leaves.", ["checking", "savings"]),
   recipient=D("The receiving account.", ["name", "iban"],
               name=S("Account holder's full name."),
               iban=S("IBAN without spaces, e.g. DE89370400440532013000."),
               bic=S("BIC/SWIFT code of the receiving bank.")),
   amount=F("Amount to send, in the currency given."),
   currency=S("ISO 4217 code of the amount.", CURRENCIES),
   reference=S("Payment reference the recipient sees."),
   execution_date=S("Day to send it, formatted YYYY-MM-DD; leave out to send now."))
fn("bank.freeze_card", "Freeze (block) a debit or credit card so no new payments go through; a temporary freeze can be lifted later.", ["card_last4"],
   card_last4=S("Last four digits of the card number, e.g. 0427."),
   reason=S("Why the card is frozen.", ["lost", "stolen", "suspicious_activity", "temporary"], "temporary"),
   order_replacement=B("Send a new card with a new number.", False))
fn("bank.request_statement", "Send the monthly statement of an account as a file by email.", ["account", "month"],
   account=S("Which account.", ACCOUNTS),
   month=S("Statement month, formatted YYYY-MM."),
   format=S("File format.", ["pdf", "csv"], "pdf"),
   email=S("Email address to send it to; leave out for the address on file."))

# ---- utility bills ----
SERVICES = ["electricity", "water", "gas", "internet"]
fn("utility.get_bill", "The bill of a utility service for a month: bill id, amount due, due date and usage.", ["service", "month"],
   service=S("Which utility.", SERVICES),
   month=S("Billing month, formatted YYYY-MM."))
fn("utility.pay_bill", "Pay a utility bill by its id.", ["bill_id", "amount"],
   bill_id=S("Bill id, e.g. BILL-EL-2503."),
   amount=F("Amount to pay, in the bill's currency."),
   payment_method=S("Account the payment comes from.", ACCOUNTS, "checking"),
   pay_date=S("Day to pay, formatted YYYY-MM-DD; leave out to pay now."))
fn("utility.usage_history", "Monthly consumption of a utility service over the last months (electricity in kWh, water and gas in cubic metres, internet in GB).", ["service"],
   service=S("Which utility.", SERVICES),
   months=I("How many months back, 1 to 24.", None, 6))
fn("utility.report_outage", "Report an outage of a utility service at an address.", ["service", "address"],
   service=S("Which utility.", SERVICES),
   address=S("Street address with the city."),
   started_at=S("When it began, formatted YYYY-MM-DD HH:MM (24-hour, local time)."),
   contact_phone=S("Phone number for updates, in E.164 format, e.g. +14155550123."))


# ======== simple: one function offered, one call ========

BATCH.simple("My puppy Biscuit was born on June 14, 2025 and she'll be an indoor-only dog. Which vaccines does she need, and when?",
             "pets.vaccination_schedule", {"species": "dog", "birth_date": "2025-06-14", "lifestyle": "indoor"})
BATCH.simple("我家猫 4.2 公斤，3 岁了，平时很懒不怎么动，每天该喂多少克干粮？",
             "pets.food_portion", {"species": "cat", "weight_kg": 4.2, "age_years": 3.0, "activity": "low"})
BATCH.simple("Get me a renters insurance quote: $30,000 of coverage with a $500 deductible, starting March 1, 2026, for my apartment in ZIP code 94110.",
             "insurance.get_quote", {"insurance_type": "renters", "coverage_amount": 30000.0, "deductible": 500.0, "start_date": "2026-03-01",
                                     "subject": [{"postal_code": ["94110"]}]})
BATCH.simple("从我的支票账户给张伟转五千欧元，他的 IBAN 是 DE89370400440532013000，附言写“三月房租”。",
             "bank.transfer", {"from_account": "checking", "recipient": [{"name": ["张伟"], "iban": ["DE89370400440532013000"]}],
                               "amount": 5000.0, "currency": "EUR", "reference": ["三月房租"]})
BATCH.simple("I'm eyeing a condo listed at $420,000 that should rent for $2,300 a month. If it sits empty 4% of the year and costs "
             "$5,800 a year in taxes and upkeep, what yield would I get?",
             "realestate.rental_yield", {"purchase_price": 420000.0, "monthly_rent": 2300.0, "annual_costs": 5800.0, "vacancy_rate": 0.04})
BATCH.simple("帮我在杭州西湖区找月租 6000 元以内、至少两居室、可以养宠物的出租房，最便宜的排前面。",
             "realestate.search_listings", {"city": ["杭州", "杭州市", "Hangzhou"], "district": ["西湖区", "西湖"], "listing_type": "rent",
                                            "min_bedrooms": 2, "max_price": 6000.0, "currency": "CNY",
                                            "requirements": [{"pets_allowed": [True]}], "sort_by": "price_asc"})
BATCH.simple("Block my card ending in 0427 right away, it was stolen from my bag. And send me a replacement.",
             "bank.freeze_card", {"card_last4": "0427", "reason": "stolen", "order_replacement": True})


# ======== multiple: look-alike functions offered, one is right ========

UTIL = ["utility.get_bill", "utility.pay_bill", "utility.usage_history", "utility.report_outage"]
BATCH.multiple("The power's been out at 18 Birch Lane, Portland since 7:40 this evening (December 5, 2026). Please report it and text updates to +15035550148.",
               ["utility.report_outage", "utility.get_bill", "utility.usage_history", "utility.pay_bill"], "utility.report_outage",
               {"service": "electricity", "address": ["18 Birch Lane, Portland", "18 Birch Lane, Portland, OR", "18 Birch Lane", "18 Birch Lane, Portland, Oregon"],
                "started_at": "2026-12-05 19:40", "contact_phone": "+15035550148"})
BATCH.multiple("我的储蓄账户现在还有多少钱？把还没入账的交易也算上。",
               ["bank.list_transactions", "bank.get_balance", "bank.request_statement", "bank.transfer"], "bank.get_balance",
               {"account": "savings", "include_pending": True})
BATCH.multiple("Is pothos poisonous to my cat?",
               ["garden.plant_info", "garden.watering_schedule", "garden.frost_dates", "pets.find_vet"], "garden.plant_info",
               {"plant": ["pothos", "Pothos", "Epipremnum aureum"], "detail": "toxicity"})
BATCH.multiple("帮我看看理赔单 CLM-58213 现在处理到哪一步了。",
               ["insurance.file_claim", "insurance.get_policy", "insurance.claim_status"], "insurance.claim_status",
               {"claim_id": "CLM-58213"})
BATCH.multiple("Email me my savings account statement for October 2026 as a CSV, to j.okafor@mailbox.org.",
               ["bank.list_transactions", "bank.request_statement", "bank.get_balance", "email.send"], "bank.request_statement",
               {"account": "savings", "month": "2026-10", "format": "csv", "email": "j.okafor@mailbox.org"})
BATCH.multiple("我想 2026 年 12 月 12 日下午 3 点去看一下房源 LST-77310，联系人李娜，手机 13912345678。",
               ["realestate.search_listings", "realestate.schedule_viewing", "realestate.estimate_value", "calendar.create_event"],
               "realestate.schedule_viewing",
               {"listing_id": "LST-77310", "date": "2026-12-12", "time": "15:00",
                "contact": [{"name": ["李娜"], "phone": ["+8613912345678"]}]})
BATCH.multiple("Find a vet in Leeds that does dental work on rabbits.",
               ["pets.book_vet_appointment", "pets.find_vet", "pets.vaccination_schedule"], "pets.find_vet",
               {"city": ["Leeds", "Leeds, UK"], "species": "rabbit", "service": "dental"})


# ======== parallel: one function, one call per item ========

BATCH.parallel("Pull up my electricity, water and gas bills for November 2026.", "utility.get_bill",
               {"service": "electricity", "month": "2026-11"}, {"service": "water", "month": "2026-11"}, {"service": "gas", "month": "2026-11"})
BATCH.parallel("琴叶榕、龟背竹和虎尾兰分别需要多少光照？", "garden.plant_info",
               {"plant": ["琴叶榕", "fiddle leaf fig", "Fiddle leaf fig", "Ficus lyrata", "fiddle-leaf fig"], "detail": "light"},
               {"plant": ["龟背竹", "monstera", "Monstera", "Monstera deliciosa"], "detail": "light"},
               {"plant": ["虎尾兰", "snake plant", "Snake plant", "Sansevieria", "Sansevieria trifasciata", "Dracaena trifasciata"], "detail": "light"})
BATCH.parallel("When are the average frost dates in Minneapolis, Denver and Atlanta?", "garden.frost_dates",
               {"city": ["Minneapolis", "Minneapolis, MN"]}, {"city": ["Denver", "Denver, CO"]}, {"city": ["Atlanta", "Atlanta, GA"]})
BATCH.parallel("我有两只狗：豆豆 12 公斤，特别能跑；球球 30 公斤，活动量一般。分别算算它们每天该吃多少狗粮。", "pets.food_portion",
               {"species": "dog", "weight_kg": 12.0, "activity": "high"},
               {"species": "dog", "weight_kg": 30.0, "activity": ["normal", ""]})
BATCH.parallel("Can you check where my claims CLM-30418 and CLM-30422 stand?", "insurance.claim_status",
               {"claim_id": "CLM-30418"}, {"claim_id": "CLM-30422"})
BATCH.parallel("尾号 3381 和 9054 的两张卡都丢了，帮我都冻结掉。", "bank.freeze_card",
               {"card_last4": "3381", "reason": "lost"}, {"card_last4": "9054", "reason": "lost"})
BATCH.parallel("Estimate what these are worth: a 3-bedroom house of 145 m² at 12 Elm Street, Bristol, built in 1998, "
               "and a 2-bedroom apartment of 78 m² at 40 Harbour Road, Bristol.", "realestate.estimate_value",
               {"address": "12 Elm Street, Bristol", "area_sqm": 145.0, "bedrooms": 3, "year_built": 1998, "property_type": "house"},
               {"address": "40 Harbour Road, Bristol", "area_sqm": 78.0, "bedrooms": 2, "property_type": "apartment"})


# ======== parallel_multiple: calls over several functions ========

BATCH.parallel_multiple("What's my checking balance? Also list every checking transaction of $200 or more from November 1 to November 30, 2026.",
                        ["bank.get_balance", "bank.list_transactions", "bank.transfer", "bank.freeze_card"],
                        ("bank.get_balance", {"account": "checking"}),
                        ("bank.list_transactions", {"account": "checking", "start_date": "2026-11-01", "end_date": "2026-11-30", "min_amount": 200.0}))
BATCH.parallel_multiple("帮我在 VET-2231 诊所给我家狗旺财约 2026 年 12 月 18 日上午 10 点打疫苗；另外查一下宠物险的报价：保额 2 万美元，"
                        "2027 年 1 月 1 日起保，旺财今年 3 岁。",
                        ["pets.find_vet", "pets.book_vet_appointment", "insurance.get_quote", "insurance.file_claim"],
                        ("pets.book_vet_appointment", {"clinic_id": "VET-2231", "pet_name": "旺财", "species": "dog", "date": "2026-12-18",
                                                       "time": "10:00", "reason": "vaccination"}),
                        ("insurance.get_quote", {"insurance_type": "pet", "coverage_amount": 20000.0, "start_date": "2027-01-01",
                                                 "subject": [{"age": [3]}]}))
BATCH.parallel_multiple("Pay internet bill BILL-NET-2611 ($64.99) with my credit card, and show me my internet data usage for the past 3 months.",
                        ["utility.get_bill", "utility.pay_bill", "utility.usage_history", "bank.get_balance"],
                        ("utility.pay_bill", {"bill_id": "BILL-NET-2611", "amount": 64.99, "payment_method": "credit_card"}),
                        ("utility.usage_history", {"service": "internet", "months": 3}))
BATCH.parallel_multiple("查一下上海和成都的平均霜冻日期，再告诉我蓝莓适合种在什么土壤里。",
                        ["garden.frost_dates", "garden.plant_info", "garden.watering_schedule", "weather.forecast"],
                        ("garden.frost_dates", {"city": ["上海", "Shanghai"]}),
                        ("garden.frost_dates", {"city": ["成都", "Chengdu"]}),
                        ("garden.plant_info", {"plant": ["蓝莓", "blueberry", "blueberries"], "detail": "soil"}))
BATCH.parallel_multiple("Book me a video tour of listing LST-40962 on December 20, 2026 at 11:30 (Maria Gomez, +447700900321), "
                        "and search for condos for sale in Lisbon with at least 2 bedrooms under €450,000.",
                        ["realestate.schedule_viewing", "realestate.search_listings", "realestate.estimate_value", "realestate.rental_yield"],
                        ("realestate.schedule_viewing", {"listing_id": "LST-40962", "date": "2026-12-20", "time": "11:30",
                                                         "contact": [{"name": ["Maria Gomez"], "phone": ["+447700900321"]}], "virtual": True}),
                        ("realestate.search_listings", {"city": ["Lisbon", "Lisboa", "Lisbon, Portugal"], "listing_type": "sale",
                                                        "property_type": "condo", "min_bedrooms": 2, "max_price": 450000.0, "currency": "EUR"}))
BATCH.parallel_multiple("我的车 2026 年 11 月 28 日被追尾了，修车花了 8600 元人民币，用保单 POL-7720-CN 报个理赔，描述写“等红灯时被追尾”；"
                        "顺便查一下这张保单的免赔额是多少。",
                        ["insurance.file_claim", "insurance.get_policy", "insurance.claim_status", "insurance.get_quote"],
                        ("insurance.file_claim", {"policy_number": "POL-7720-CN", "incident_date": "2026-11-28", "claim_type": "collision",
                                                  "amount": 8600.0, "currency": "CNY", "description": "等红灯时被追尾"}),
                        ("insurance.get_policy", {"policy_number": "POL-7720-CN"}))
BATCH.parallel_multiple("Send $250 from checking to Tom Reyes (IBAN GB33BUKB20201555555555, reference 'Dec gardening'), "
                        "and freeze my card ending in 7712 for now; I'll unfreeze it later.",
                        ["bank.transfer", "bank.freeze_card", "bank.get_balance", "utility.pay_bill"],
                        ("bank.transfer", {"from_account": "checking", "recipient": [{"name": ["Tom Reyes"], "iban": ["GB33BUKB20201555555555"]}],
                                           "amount": 250.0, "currency": "USD", "reference": "Dec gardening"}),
                        ("bank.freeze_card", {"card_last4": "7712", "reason": ["temporary", ""]}))


# ======== irrelevance: same topic, but no offered function answers ========

BATCH.irrelevance("Can you raise the credit limit on my credit card to $8,000?",
                  ["bank.get_balance", "bank.freeze_card", "bank.list_transactions", "bank.transfer"])
BATCH.irrelevance("帮我把家里的宽带从 100M 升级到 500M 的套餐。", UTIL)
BATCH.irrelevance("Which plant family do roses belong to?", ["garden.frost_dates", "garden.watering_schedule"])
BATCH.irrelevance("哪些狗狗品种比较适合住公寓的人养？", ["pets.find_vet", "pets.food_portion", "pets.vaccination_schedule"])
BATCH.irrelevance("Cancel my travel insurance policy TRV-55120 and refund the premium.",
                  ["insurance.get_policy", "insurance.claim_status", "insurance.file_claim", "insurance.get_quote"])
BATCH.irrelevance("深圳南山区过去五年的房价走势是怎样的？", ["realestate.search_listings", "realestate.estimate_value", "realestate.rental_yield"])
BATCH.irrelevance("How many kilowatt-hours does a 1,500-watt space heater use if it runs for 6 hours?", ["utility.usage_history", "utility.get_bill"])


# ======== multi_turn: the results answer the request ========

BATCH.answer(["utility.get_bill", "utility.pay_bill", "utility.usage_history", "bank.get_balance"],
             [user("How much do I owe for electricity and gas for December 2026, and when is each due?"),
              ran(("utility.get_bill", {"service": "electricity", "month": "2026-12"},
                   {"bill_id": "BILL-EL-2612", "service": "electricity", "month": "2026-12", "amount_due": 142.38, "currency": "USD",
                    "due_date": "2026-12-28", "usage": 612, "usage_unit": "kWh"}),
                  ("utility.get_bill", {"service": "gas", "month": "2026-12"},
                   {"bill_id": "BILL-GS-2612", "service": "gas", "month": "2026-12", "amount_due": 87.9, "currency": "USD",
                    "due_date": "2027-01-04", "usage": 96, "usage_unit": "m3"}))],
             [["142.38"], ["2026-12-28", "December 28", "Dec 28", "Dec. 28", "28 December", "12/28", "December 28th", "Dec 28th", "28th December", "28th"],
              ["87.9"], ["2027-01-04", "January 4", "Jan 4", "Jan. 4", "4 January", "1/4", "January 4th", "Jan 4th", "4th January"]],
             "Electricity: $142.38 (612 kWh), due 2026-12-28. Gas: $87.90 (96 m³), due 2027-01-04.")
BATCH.answer(["bank.get_balance", "bank.list_transactions", "bank.request_statement"],
             [user("我的支票账户和储蓄账户各还有多少钱？信用卡现在欠了多少？"),
              ran(("bank.get_balance", {"account": "checking"}, {"account": "checking", "balance": 12480.5, "currency": "CNY"}),
                  ("bank.get_balance", {"account": "savings"}, {"account": "savings", "balance": 86300.0, "currency": "CNY"}),
                  ("bank.get_balance", {"account": "credit_card"},
                   {"account": "credit_card", "amount_owed": 4215.7, "credit_limit": 20000.0, "currency": "CNY", "payment_due_date": "2026-12-22"}))],
             [["12480.5"], ["86300", "8.63万"], ["4215.7"]],
             "支票账户余额 12,480.50 元，储蓄账户 86,300.00 元；信用卡目前欠款 4,215.70 元（额度 20,000 元，12 月 22 日前还款）。")
BATCH.answer(["insurance.get_policy", "insurance.file_claim", "insurance.claim_status", "insurance.get_quote"],
             [user("Does my home policy HOM-88120 cover water damage? How much would it pay, and what's my deductible?"),
              ran(("insurance.get_policy", {"policy_number": "HOM-88120"},
                   {"policy_number": "HOM-88120", "type": "home", "status": "active", "currency": "USD", "deductible": 1000,
                    "annual_premium": 1284.0, "renewal_date": "2027-03-15",
                    "coverages": [{"peril": "fire", "limit": 350000}, {"peril": "theft", "limit": 40000},
                                  {"peril": "water_damage", "limit": 25000,
                                   "note": "sudden and accidental pipe bursts only; gradual leaks and flooding excluded"}]}))],
             [["25000"], ["1000"], ["burst", "sudden", "accidental"]],
             "Yes, for sudden and accidental pipe bursts (not gradual leaks or flooding): it pays up to $25,000, and your deductible is $1,000.")


# ======== multi_turn: the results lead to another call ========

BATCH.next_call(["pets.find_vet", "pets.book_vet_appointment", "pets.vaccination_schedule"],
                [user("帮我在成都找一家能看兔子的宠物医院，然后约 2026 年 12 月 9 日下午两点半给我家兔子团团做个体检。"),
                 ran(("pets.find_vet", {"city": "成都", "species": "rabbit"},
                      {"clinics": [{"clinic_id": "VET-3307", "name": "成都宠爱异宠医院", "address": "成都市武侯区玉林北路 18 号",
                                    "species": ["rabbit", "bird", "reptile"], "rating": 4.8}]}))],
                ("pets.book_vet_appointment", {"clinic_id": "VET-3307", "pet_name": "团团", "species": "rabbit", "date": "2026-12-09",
                                               "time": "14:30", "reason": ["checkup", ""]}))
BATCH.next_call(["bank.get_balance", "utility.pay_bill", "utility.get_bill", "bank.transfer"],
                [user("Check my checking balance, and if there's more than $500 in it, pay electricity bill BILL-EL-2611 ($131.75) from checking."),
                 ran(("bank.get_balance", {"account": "checking"}, {"account": "checking", "balance": 2410.55, "currency": "USD"}))],
                ("utility.pay_bill", {"bill_id": "BILL-EL-2611", "amount": 131.75, "payment_method": ["checking", ""]}))


# ======== multi_turn: follow-ups after a finished turn ========

BATCH.next_call(["garden.watering_schedule", "garden.plant_info", "garden.frost_dates", "weather.forecast"],
                [user("How should I water the basil on my balcony in Phoenix this week? It's in a 20 cm pot."),
                 ran(("garden.watering_schedule", {"plant": "basil", "city": "Phoenix", "location": "balcony", "pot_diameter_cm": 20.0},
                      {"plant": "basil", "city": "Phoenix", "location": "balcony", "schedule": [
                          {"date": "2026-12-07", "water_ml": 250}, {"date": "2026-12-09", "water_ml": 250},
                          {"date": "2026-12-11", "water_ml": 300}, {"date": "2026-12-13", "water_ml": 250}],
                       "tip": "Water in the morning; move the pot inside if the night drops below 5 °C."})),
                 said("Water the basil every other day this week: 250 ml on Dec 7 and 9, 300 ml on Dec 11 and 250 ml on Dec 13, "
                      "in the morning. Bring it inside if nights fall below 5 °C."),
                 user("Great. And my tomatoes in the garden bed, for the next 10 days?")],
                ("garden.watering_schedule", {"plant": ["tomatoes", "tomato", "Tomatoes", "Tomato"], "city": ["Phoenix", "Phoenix, AZ"],
                                              "location": "garden_bed", "days": 10}))
BATCH.answer(["bank.transfer", "bank.get_balance", "bank.list_transactions"],
             [user("从储蓄账户给王芳转 1200 英镑，IBAN 是 GB29NWBK60161331926819，附言“生日快乐”。"),
              ran(("bank.transfer", {"from_account": "savings", "recipient": {"name": "王芳", "iban": "GB29NWBK60161331926819"},
                                     "amount": 1200.0, "currency": "GBP", "reference": "生日快乐"},
                   {"transfer_id": "TRF-660231", "status": "completed", "amount": 1200.0, "currency": "GBP", "fee": 0.0,
                    "balance_after": 41580.25})),
              said("已从储蓄账户向王芳转账 1,200 英镑（交易号 TRF-660231），无手续费，储蓄账户余额 41,580.25 英镑。"),
              user("太好了，谢谢你！")],
             [["不客气", "不用谢", "不谢", "客气", "很高兴", "乐意", "荣幸", "随时", "welcome", "glad", "my pleasure", "no problem", "没问题", "应该的"]],
             "不客气！还有需要随时告诉我。",
             no_tool=True)
