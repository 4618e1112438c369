"""Batch D (written 2026-12-07), multi_turn only: car maintenance, school timetables and homework, museum tickets, gym class booking, parcel shipping, pharmacy prescriptions, appliance warranty and repair."""
from cases_multi import Failed, ran, said, user
from fresh import Batch
from functions import B, D, F, I, L, S, fn  # noqa: F401

BATCH = Batch()

# ---- car maintenance ----
CAR_SERVICES = ["oil_change", "tire_rotation", "brake_inspection", "annual_inspection", "battery_replacement", "recall_repair", "general_repair"]
fn("carcare.service_history", "Past maintenance and repair visits of a vehicle saved in the garage app, newest first: date, service, odometer and cost.", ["vehicle_id"],
   vehicle_id=S("The vehicle id in the garage app, e.g. VH-20931."),
   since=S("Only visits on or after this date, formatted YYYY-MM-DD."),
   limit=I("How many visits to return.", None, 10))
fn("carcare.recall_check", "Open manufacturer safety recalls of a vehicle, looked up by its VIN.", ["vin"],
   vin=S("The 17-character Vehicle Identification Number, e.g. 1HGCV1F34LA012345."))
fn("carcare.find_slots", "Free appointment times at a service center for one kind of service on a date.", ["center_id", "service", "date"],
   center_id=S("Service center id, e.g. SC-118."),
   service=S("Kind of service.", CAR_SERVICES),
   date=S("The day, formatted YYYY-MM-DD."))
fn("carcare.book_service", "Book a maintenance or repair appointment for a vehicle at a service center.", ["vehicle_id", "center_id", "service", "start"],
   vehicle_id=S("The vehicle id in the garage app (e.g. VH-20931) or its 17-character VIN."),
   center_id=S("Service center id, e.g. SC-118."),
   service=S("Kind of service.", CAR_SERVICES),
   start=S("Appointment start, formatted YYYY-MM-DD HH:MM (24-hour, local time)."),
   loaner_car=B("Ask for a loaner car while the vehicle is in the shop.", False),
   notes=S("Anything the mechanic should know, in the user's words."))

# ---- school timetables and homework ----
fn("school.timetable", "A class's lessons on a school day or over its week: period, start and end time (HH:MM), subject, teacher and room.", ["class_id", "date"],
   class_id=S("The class as the school names it, e.g. 7B or 高一(3)班."),
   date=S("The day, formatted YYYY-MM-DD."),
   span=S("Only that day, or the whole school week (Monday to Friday) that holds it.", ["day", "week"], "day"))
fn("school.homework", "Homework set for a student: subject, task, due date (YYYY-MM-DD) and whether it was handed in.", ["student_id"],
   student_id=S("Student id, e.g. STU-40417."),
   due_from=S("Only homework due on or after this date, formatted YYYY-MM-DD."),
   due_to=S("Only homework due on or before this date, formatted YYYY-MM-DD."),
   subject=S("Only this subject, e.g. Math or 语文."),
   include_done=B("Also list homework already handed in.", False))
fn("school.report_absence", "Tell the school that a student will miss a day or some lessons.", ["student_id", "date", "reason"],
   student_id=S("Student id, e.g. STU-40417."),
   date=S("Day of the absence, formatted YYYY-MM-DD."),
   reason=S("Why the student is absent.", ["illness", "medical_appointment", "family", "religious_holiday", "other"]),
   periods=L({"type": "integer"}, "Only these lesson periods (1 to 8); leave out for the whole day."),
   note=S("A message to the class teacher."))
fn("school.exam_results", "A student's marks in one term's exams, per subject, with the class average of each.", ["student_id", "term"],
   student_id=S("Student id, e.g. STU-40417."),
   term=S("School year and term, formatted YYYY-YYYY-T1, -T2 or -T3, e.g. 2024-2025-T2."))


# ---- museum tickets ----
def _ticket_counts(desc):
    return D(desc, [],
             adult=I("Adults, 18 to 64.", None, 0),
             child=I("Children, 6 to 17 (under 6 enter free, without a ticket).", None, 0),
             senior=I("Visitors 65 and over.", None, 0),
             student=I("Students with a valid card.", None, 0))


fn("museum.search_exhibitions", "Exhibitions on view in a city's museums, with exhibition ids, venues and closing dates.", ["city"],
   city=S("City name, e.g. Amsterdam or 上海."),
   date=S("Only exhibitions open on this day, formatted YYYY-MM-DD."),
   keyword=S("Artist, theme or museum name to match."),
   free_only=B("Only exhibitions with free entry.", False))
fn("museum.opening_hours", "Opening hours of a museum on a date, with the last entry time and whether a visit must be booked ahead.", ["museum", "date"],
   museum=S("Museum name, e.g. Rijksmuseum or 中国国家博物馆."),
   date=S("The day, formatted YYYY-MM-DD."))
fn("museum.ticket_availability", "Timed-entry slots of an exhibition on a date: entry time (HH:MM), tickets left, and the price of each ticket type.", ["exhibition_id", "date"],
   exhibition_id=S("The exhibition id from a search, e.g. EXH-5120."),
   date=S("The day of the visit, formatted YYYY-MM-DD."),
   party=_ticket_counts("A group to price; with it the result also holds the group's total."))
fn("museum.book_tickets", "Book timed-entry tickets for an exhibition.", ["exhibition_id", "date", "time", "tickets"],
   exhibition_id=S("The exhibition id, e.g. EXH-5120."),
   date=S("Day of the visit, formatted YYYY-MM-DD."),
   time=S("Entry slot, HH:MM (24-hour clock), one that the availability lists."),
   tickets=_ticket_counts("How many tickets of each type; types left out count as 0."))
fn("museum.cancel_booking", "Cancel a museum ticket booking and refund it.", ["booking_id"],
   booking_id=S("The booking id, e.g. MUS-730245."))

# ---- gym class booking ----
CLASS_TYPES = ["yoga", "pilates", "spin", "hiit", "boxing", "zumba", "aqua"]
fn("gym.class_schedule", "Group classes at one gym club on a date: class id, type, start time (HH:MM), length, instructor and free spots.", ["club", "date"],
   club=S("Club name or id, e.g. Downtown, 国贸店 or GYM-07."),
   date=S("The day, formatted YYYY-MM-DD."),
   class_type=S("Only this kind of class.", ["any"] + CLASS_TYPES, "any"))
fn("gym.book_class", "Book the member a place in one class session.", ["class_id"],
   class_id=S("The class session id from the schedule, e.g. CLS-88120."),
   join_waitlist=B("If the class is full, join its waitlist instead of failing.", False))
fn("gym.cancel_booking", "Cancel one of the member's class bookings.", ["booking_id"],
   booking_id=S("The class booking id, e.g. GB-55012."))
fn("gym.membership", "The member's plan: type, expiry date, whether it is frozen, and group classes left this month.", ["member_id"],
   member_id=S("Member id, e.g. M-300417."))

# ---- parcel shipping ----
fn("parcel.quote", "Compare carriers' prices and delivery times for sending one parcel between two postcodes of a country.", ["from_postcode", "to_postcode", "weight_kg"],
   from_postcode=S("Sender's postcode, e.g. 94107, SW1A 1AA or 200040."),
   to_postcode=S("Recipient's postcode."),
   weight_kg=F("Weight of the packed parcel in kg."),
   country=S("ISO 3166-1 alpha-2 code of the country both postcodes are in.", ["US", "GB", "CN", "DE", "FR", "JP", "CA", "AU"], "US"),
   dimensions_cm=D("Outer size of the box in cm.", ["length", "width", "height"],
                   length=F("Length in cm."), width=F("Width in cm."), height=F("Height in cm.")),
   speed=S("Only services of this speed.", ["any", "economy", "standard", "express"], "any"))
fn("parcel.create_shipment", "Buy the label of one quoted service and create the shipment; the sender is the account's address.", ["quote_id", "recipient"],
   quote_id=S("The quote id of the chosen service, e.g. Q-5521."),
   recipient=D("Who receives the parcel.", ["name", "address"],
               name=S("Full name."), address=S("Street address with city."), phone=S("Phone number as the user gives it.")),
   signature_required=B("The recipient must sign on delivery.", False),
   insured_value=F("Declared value to insure, in the quote's currency; leave out for no insurance."))
fn("parcel.track", "Where a parcel is: its status, estimated delivery date and scan events, newest first.", ["tracking_number"],
   tracking_number=S("The tracking number, e.g. 1Z999AA10123456784 or SF1402887730215."))
fn("parcel.schedule_pickup", "Have a courier collect one or more labelled parcels from the account's address.", ["tracking_numbers", "date"],
   tracking_numbers=L({"type": "string"}, "Tracking numbers of the parcels to collect."),
   date=S("Pickup day, formatted YYYY-MM-DD."),
   window=S("Time of day: morning (08:00-12:00), afternoon (12:00-17:00) or evening (17:00-20:00).", ["morning", "afternoon", "evening"], "afternoon"))

# ---- pharmacy prescriptions ----
fn("pharmacy.prescription_status", "Status of a prescription at the pharmacy: the medicine, whether it is ready for pickup, at which store, and refills left.", ["prescription_id"],
   prescription_id=S("The prescription id, e.g. RX-7730912."))
fn("pharmacy.refill", "Ask the pharmacy to refill a prescription, for pickup at a store or home delivery.", ["prescription_id"],
   prescription_id=S("The prescription id, e.g. RX-7730912."),
   pickup_store=S("Store id to pick it up from, e.g. PH-214; leave out for the store on file."),
   delivery=B("Deliver to the home address on file instead of a pickup.", False))
fn("pharmacy.check_stock", "Which pharmacies near a postcode have a medicine in stock.", ["medicine", "postcode"],
   medicine=S("Medicine name and strength, e.g. amoxicillin 500 mg or 氨氯地平片 5mg."),
   postcode=S("Postcode to search around."),
   radius_km=F("Search radius in km.", 5.0))
fn("pharmacy.find_open", "Pharmacies open at a given time near a place, nearest first.", ["location"],
   location=S("Address or place name."),
   at=S("Date and time they must be open, formatted YYYY-MM-DD HH:MM (24-hour, local time); leave out for now."),
   open_24h_only=B("Only pharmacies open around the clock.", False))

# ---- appliance warranty and repair ----
fn("warranty.check", "Warranty of a registered appliance by its serial number: model, purchase date, coverage end date and what is covered.", ["serial_number"],
   serial_number=S("The serial number on the product's label, e.g. WM8821-KX0392."))
fn("warranty.register_product", "Register an appliance for its manufacturer's warranty.", ["serial_number", "model", "purchase_date"],
   serial_number=S("The serial number on the product's label."),
   model=S("Model number, e.g. WAU28PH9GB."),
   purchase_date=S("Date of purchase, formatted YYYY-MM-DD."),
   retailer=S("Shop it was bought from."))
fn("warranty.book_repair", "Book a technician visit for a faulty appliance; free while it is under warranty.", ["serial_number", "fault", "date"],
   serial_number=S("The serial number, e.g. WM8821-KX0392."),
   fault=S("What is wrong, in the user's words."),
   date=S("Day of the visit, formatted YYYY-MM-DD."),
   window=S("Visit window.", ["08:00-12:00", "12:00-16:00", "16:00-20:00"], "08:00-12:00"),
   address=S("Address of the visit; leave out for the one on file."))
fn("warranty.repair_status", "Progress of a repair job: status, parts, technician and visit date.", ["repair_id"],
   repair_id=S("The repair id, e.g. RPR-60418."))


def _phrasings(subjects, predicates, extra=()):
    """A free-text value as a model may word it: each subject with each predicate, then
    `extra`, each also with a full stop (strings compare trimmed and case-folded only)."""
    out = []
    for text in [f"{s} {p}".strip() for s in subjects for p in predicates] + list(extra):
        for t in (text, text + "."):
            if t not in out:
                out.append(t)
    return out


# ======== multi_turn: the results answer the request ========
BATCH.answer(["carcare.book_service", "carcare.service_history", "carcare.recall_check", "carcare.find_slots"],
             [user("When was my car VH-20931 last in the shop, and does it have any open recalls? The VIN is 4T1B11HK7KU317542."),
              ran(("carcare.service_history", {"vehicle_id": "VH-20931", "limit": 1},
                   {"vehicle_id": "VH-20931", "visits": [{"date": "2025-01-18", "center": "Midtown Auto Care (SC-118)", "service": "oil_change",
                                                          "odometer_km": 48210, "cost": 89.9, "currency": "USD"}]}),
                  ("carcare.recall_check", {"vin": "4T1B11HK7KU317542"},
                   {"vin": "4T1B11HK7KU317542", "model": "2019 Toyota Camry", "open_recalls": [
                       {"campaign": "23V-617", "component": "rearview camera", "issue": "camera image may not display when reversing",
                        "remedy": "software update", "free_of_charge": True}]}))],
             [["2025-01-18", "January 18", "Jan 18", "Jan. 18", "18 January", "18 Jan", "January 18th", "Jan 18th", "Jan. 18th", "18th January",
               "18th of January", "18th Jan", "01/18/2025", "1/18/2025", "1/18", "01/18", "18/01/2025", "2025/01/18"], ["23V-617", "camera"]],
             "Its last visit was on 2025-01-18: an oil change at Midtown Auto Care (48,210 km, $89.90). There is one open recall, 23V-617: "
             "the rearview camera image may not display when reversing. The fix is a free software update.")
BATCH.answer(["school.homework", "school.timetable", "school.exam_results"],
             [user("高一(3)班2025年9月16日下午第一节是什么课？在哪个教室上？"),
              ran(("school.timetable", {"class_id": "高一(3)班", "date": "2025-09-16"},
                   {"class_id": "高一(3)班", "date": "2025-09-16", "weekday": "星期二", "lessons": [
                       {"period": 1, "start": "08:00", "end": "08:45", "subject": "语文", "teacher": "陈老师", "room": "教学楼301"},
                       {"period": 2, "start": "08:55", "end": "09:40", "subject": "数学", "teacher": "李老师", "room": "教学楼301"},
                       {"period": 3, "start": "10:05", "end": "10:50", "subject": "英语", "teacher": "张老师", "room": "教学楼301"},
                       {"period": 4, "start": "11:00", "end": "11:45", "subject": "化学", "teacher": "刘老师", "room": "实验楼102"},
                       {"period": 5, "start": "13:30", "end": "14:15", "subject": "物理", "teacher": "王老师", "room": "实验楼204"},
                       {"period": 6, "start": "14:25", "end": "15:10", "subject": "体育", "teacher": "赵老师", "room": "操场"}]}))],
             [["物理"], ["实验楼204", "实验楼 204", "204"]],
             "下午第一节（13:30–14:15）是物理课，王老师上，在实验楼204。")
BATCH.answer(["museum.book_tickets", "museum.search_exhibitions", "museum.ticket_availability", "museum.opening_hours"],
             [user("We're two adults and a 10-year-old. On Saturday 2025-11-08, which is cheaper in Amsterdam for the three of us, the Vermeer exhibition or the Van Gogh 'Sunflowers' show, and what would it cost in total?"),
              ran(("museum.search_exhibitions", {"city": "Amsterdam", "date": "2025-11-08"},
                   {"exhibitions": [
                       {"exhibition_id": "EXH-5120", "title": "Vermeer: Light and Letters", "venue": "Rijksmuseum", "until": "2026-01-11"},
                       {"exhibition_id": "EXH-5177", "title": "Sunflowers: Van Gogh in Arles", "venue": "Van Gogh Museum", "until": "2026-02-22"},
                       {"exhibition_id": "EXH-5203", "title": "Mondrian and De Stijl", "venue": "Stedelijk Museum", "until": "2025-12-14"}]})),
              ran(("museum.ticket_availability", {"exhibition_id": "EXH-5120", "date": "2025-11-08", "party": {"adult": 2, "child": 1}},
                   {"exhibition_id": "EXH-5120", "date": "2025-11-08", "currency": "EUR",
                    "prices": {"adult": 32.5, "child": 16.0, "senior": 27.5, "student": 20.0}, "party_total": 81.0,
                    "slots": [{"time": "10:00", "left": 6}, {"time": "13:30", "left": 14}]}),
                  ("museum.ticket_availability", {"exhibition_id": "EXH-5177", "date": "2025-11-08", "party": {"adult": 2, "child": 1}},
                   {"exhibition_id": "EXH-5177", "date": "2025-11-08", "currency": "EUR",
                    "prices": {"adult": 25.0, "child": 12.5, "senior": 22.0, "student": 17.5}, "party_total": 62.5,
                    "slots": [{"time": "09:30", "left": 3}, {"time": "15:00", "left": 20}]}))],
             [["Sunflowers", "Van Gogh"], ["62.5", "62.50", "62,50"]],
             "The Van Gogh 'Sunflowers' show is cheaper: €62.50 for the three of you (2 × €25 + €12.50), against €81 for Vermeer at the Rijksmuseum.")
BATCH.answer(["parcel.schedule_pickup", "parcel.track", "parcel.quote"],
             [user("帮我查一下快递单号 SF1402887730215 现在到哪了。"),
              ran(("parcel.track", {"tracking_number": "SF1402887730215"},
                   Failed("tracking number 'SF1402887730215' not found: no shipment with this number in the last 90 days")))],
             [["not found", "没有找到", "未找到", "找不到", "查不到", "没查到", "没有查到", "查询不到", "不存在", "没有记录", "无记录", "没有这个单号", "90",
               "没找到", "未查到", "未查询到", "没有查询到", "无法查询到", "无法查到", "没有该单号", "没有此单号", "无此单号", "查无此"]],
             "没有查到这个单号：系统里近 90 天内没有 SF1402887730215 这票快递的记录。请核对一下单号是否有误，或者向寄件方确认是否已经寄出。")
BATCH.answer(["gym.book_class", "gym.membership", "gym.class_schedule"],
             [user("Which spin classes at the Downtown club on 2025-10-14 still have free spots?"),
              ran(("gym.class_schedule", {"club": "Downtown", "date": "2025-10-14", "class_type": "spin"},
                   {"club": "Downtown", "date": "2025-10-14", "classes": [
                       {"class_id": "CLS-70411", "type": "spin", "start": "06:30", "minutes": 45, "instructor": "Priya", "free_spots": 0},
                       {"class_id": "CLS-70418", "type": "spin", "start": "12:15", "minutes": 30, "instructor": "Marco", "free_spots": 4},
                       {"class_id": "CLS-70425", "type": "spin", "start": "17:45", "minutes": 45, "instructor": "Priya", "free_spots": 0},
                       {"class_id": "CLS-70432", "type": "spin", "start": "19:30", "minutes": 45, "instructor": "Dana", "free_spots": 7}]}))],
             [["12:15", "12:15 pm", "12:15pm", "12:15 p.m.", "12.15 pm", "12.15pm", "Marco", "CLS-70418"],
              ["19:30", "7:30 pm", "7:30pm", "7:30 p.m.", "7:30", "7.30 pm", "7.30pm", "Dana", "CLS-70432"]],
             "Two still have spots: the 12:15 class with Marco (30 min, 4 spots left) and the 19:30 class with Dana (45 min, 7 spots left). "
             "The 06:30 and 17:45 classes are full.")
BATCH.answer(["pharmacy.refill", "pharmacy.check_stock", "pharmacy.prescription_status"],
             [user("我有两张处方，RX-7730912 和 RX-7731458，现在能去取药了吗？"),
              ran(("pharmacy.prescription_status", {"prescription_id": "RX-7730912"},
                   {"prescription_id": "RX-7730912", "medicine": "二甲双胍缓释片 500mg", "status": "ready", "status_text": "已备好，可取药",
                    "store": "朝阳大悦城店 (PH-214)", "hold_until": "2025-06-20", "refills_left": 2}),
                  ("pharmacy.prescription_status", {"prescription_id": "RX-7731458"},
                   {"prescription_id": "RX-7731458", "medicine": "阿托伐他汀钙片 20mg", "status": "pending_doctor_approval",
                    "status_text": "续方待医生审核", "store": "朝阳大悦城店 (PH-214)", "refills_left": 0}))],
             [["已备好", "已经备好", "备好了", "准备好了", "可取药", "可以取", "可以去取", "可以领", "可以拿", "ready"],
              ["审核", "医生", "doctor", "pending", "审批", "批准", "还不能", "暂时不能", "不能取", "还不行", "还没好", "还没备好", "未备好",
               "尚未", "not ready", "not yet"]],
             "一张可以取了：RX-7730912（二甲双胍缓释片 500mg）已备好，可到朝阳大悦城店取药，保留到 2025-06-20。"
             "另一张 RX-7731458（阿托伐他汀钙片 20mg）暂时还不能取，续方正在等医生审核。")
BATCH.answer(["warranty.book_repair", "warranty.repair_status", "warranty.check"],
             [user("Is my dishwasher still under warranty? The serial number is DW4410-MN2281."),
              ran(("warranty.check", {"serial_number": "DW4410-MN2281"},
                   Failed("no registered product with serial number 'DW4410-MN2281' on this account")))],
             [["no registered product", "not registered", "isn't registered", "is not registered", "wasn't registered", "not been registered",
               "unregistered", "not found", "couldn't find", "could not find", "can't find", "cannot find", "no record", "not on your account",
               "isn't on your account", "not in your account", "not on this account", "no product registered", "nothing registered",
               "no product with", "no such", "doesn't appear", "does not appear", "don't see", "wasn't found", "was not found",
               "unable to find", "未注册", "找不到"]],
             "I couldn't check it: there is no registered product with serial number DW4410-MN2281 on your account. Please double-check the "
             "serial on the label; if it is right, the dishwasher was probably never registered, and the manufacturer will need your proof of purchase.")
BATCH.answer(["parcel.create_shipment", "parcel.quote", "parcel.track", "parcel.schedule_pickup"],
             [user("What's the cheapest way to send a 3.2 kg box, 40 x 30 x 20 cm, from 94107 to 10001, and how long would it take?"),
              ran(("parcel.quote", {"from_postcode": "94107", "to_postcode": "10001", "weight_kg": 3.2,
                                    "dimensions_cm": {"length": 40.0, "width": 30.0, "height": 20.0}},
                   {"currency": "USD", "options": [
                       {"quote_id": "Q-8812", "carrier": "UPS", "service": "UPS Ground", "speed": "standard", "price": 24.95,
                        "business_days": "4-5", "deliver_by": "2025-03-20"},
                       {"quote_id": "Q-8813", "carrier": "USPS", "service": "Ground Advantage", "speed": "economy", "price": 18.4,
                        "business_days": "5-7", "deliver_by": "2025-03-24"},
                       {"quote_id": "Q-8814", "carrier": "FedEx", "service": "Priority Overnight", "speed": "express", "price": 61.3,
                        "business_days": "1", "deliver_by": "2025-03-14"}]}))],
             [["18.4", "18.40"], ["5-7", "5–7", "5 - 7", "5 to 7", "five to seven", "2025-03-24", "March 24", "Mar 24", "24 March", "March 24th",
                                  "Mar 24th", "24th March", "24th of March", "3/24", "03/24"]],
             "The cheapest is USPS Ground Advantage at $18.40; it takes 5-7 business days (delivery by 2025-03-24). "
             "UPS Ground costs $24.95 (4-5 days) and FedEx Priority Overnight $61.30 (next day).")
BATCH.answer(["museum.opening_hours", "museum.book_tickets", "museum.search_exhibitions"],
             [user("2025年10月3日中国国家博物馆开门吗？几点到几点？那天有什么特展？"),
              ran(("museum.opening_hours", {"museum": "中国国家博物馆", "date": "2025-10-03"},
                   {"museum": "中国国家博物馆", "date": "2025-10-03", "open": True, "opens": "09:00", "closes": "17:00", "last_entry": "16:00",
                    "booking_required": True, "note": "国庆假期需提前预约，凭身份证入馆"}),
                  ("museum.search_exhibitions", {"city": "北京", "date": "2025-10-03", "keyword": "中国国家博物馆"},
                   {"exhibitions": [
                       {"exhibition_id": "EXH-3306", "title": "丝路瑰宝——新疆文物精品展", "venue": "中国国家博物馆", "until": "2025-12-31", "free": True},
                       {"exhibition_id": "EXH-3311", "title": "宋代书画特展", "venue": "中国国家博物馆", "until": "2025-10-26", "free": False}]}))],
             [["09:00", "9:00", "9点", "九点", "上午9", "早上9", "9时", "九时"], ["17:00", "17点", "下午5", "下午五点", "5点", "五点", "17时", "五时"],
              ["丝路瑰宝", "新疆文物", "宋代书画"]],
             "开。10月3日国家博物馆 09:00–17:00 开放，16:00 停止入馆，国庆期间要提前预约、凭身份证入馆。"
             "那天有两个特展：“丝路瑰宝——新疆文物精品展”（免费）和“宋代书画特展”（展到10月26日）。")
BATCH.answer(["school.exam_results", "school.homework", "school.timetable", "school.report_absence"],
             [user("How did Emma (student STU-40417) do in her exams this term, 2024-2025 term 2, compared with her class? Which subject was her weakest?"),
              ran(("school.exam_results", {"student_id": "STU-40417", "term": "2024-2025-T2"},
                   {"student_id": "STU-40417", "name": "Emma Larsen", "term": "2024-2025-T2", "results": [
                       {"subject": "Mathematics", "mark": 88, "class_average": 74},
                       {"subject": "English", "mark": 91, "class_average": 79},
                       {"subject": "Science", "mark": 67, "class_average": 71},
                       {"subject": "History", "mark": 80, "class_average": 76},
                       {"subject": "French", "mark": 84, "class_average": 70}]}))],
             [["Science"], ["67", "above", "higher than", "better than", "beat", "beats", "outperformed", "exceeded", "ahead of", "below",
                            "lower than", "under the class average", "except", "all but"]],
             "Emma beat the class average in four of five subjects: Mathematics 88 (class 74), English 91 (79), History 80 (76) and French 84 (70). "
             "Her weakest was Science: 67, a little under the class average of 71.")
BATCH.answer(["gym.membership", "gym.class_schedule", "gym.cancel_booking"],
             [user("帮我查下会员号 M-300417 的卡什么时候到期，这个月团课还能上几节？"),
              ran(("gym.membership", {"member_id": "M-300417"},
                   {"member_id": "M-300417", "name": "周敏", "plan": "年卡·标准版", "expires": "2026-02-28", "frozen": False,
                    "classes_per_month": 8, "classes_left_this_month": 3}))],
             [["2026-02-28", "2026年2月28", "2月28", "2 月 28", "02-28", "2026/2/28", "2026/02/28", "2026.2.28", "2026.02.28"],
              ["3", "三节", "三次", "三堂"]],
             "您的年卡·标准版有效期到 2026-02-28，目前没有冻结。这个月的 8 节团课还剩 3 节可以上。")
BATCH.answer(["carcare.find_slots", "carcare.book_service", "carcare.service_history"],
             [user("Does service center SC-118 have any time for a tire rotation before noon on 2025-04-22?"),
              ran(("carcare.find_slots", {"center_id": "SC-118", "service": "tire_rotation", "date": "2025-04-22"},
                   {"center_id": "SC-118", "center": "Midtown Auto Care", "date": "2025-04-22", "service": "tire_rotation", "minutes": 40,
                    "free_slots": ["08:30", "11:15", "13:00", "15:45"]}))],
             [["08:30", "8:30", "8.30 am", "8.30am"], ["11:15", "11.15 am", "11.15am"]],
             "Yes: before noon Midtown Auto Care (SC-118) has 08:30 and 11:15 free on 2025-04-22; a tire rotation takes about 40 minutes. "
             "After noon there are 13:00 and 15:45.")
BATCH.answer(["warranty.check", "warranty.book_repair", "warranty.repair_status", "warranty.register_product"],
             [user("维修单 RPR-60418 现在进展到哪一步了？师傅哪天上门？"),
              ran(("warranty.repair_status", {"repair_id": "RPR-60418"},
                   {"repair_id": "RPR-60418", "product": "海尔冰箱 BCD-470WGHTD", "status": "parts_ordered", "status_text": "配件已下单，等待到货",
                    "part": "制冰机进水阀", "technician": "孙师傅", "visit_date": "2025-07-09", "visit_window": "12:00-16:00"}))],
             [["配件", "parts", "进水阀", "零件", "备件", "到货"], ["2025-07-09", "7月9", "7 月 9", "07-09", "2025/7/9", "2025/07/09", "七月九"]],
             "维修单 RPR-60418 的配件（制冰机进水阀）已经下单，正在等待到货。孙师傅预计 2025-07-09 12:00–16:00 上门维修。")
BATCH.answer(["pharmacy.find_open", "pharmacy.check_stock", "pharmacy.refill", "pharmacy.prescription_status"],
             [user("Which pharmacies around 60614 have amoxicillin 500 mg in stock right now?"),
              ran(("pharmacy.check_stock", {"medicine": "amoxicillin 500 mg", "postcode": "60614"},
                   {"medicine": "amoxicillin 500 mg", "postcode": "60614", "stores": [
                       {"store_id": "PH-5120", "name": "Walgreens", "address": "2550 N Clark St", "distance_km": 0.9, "in_stock": True, "quantity": 120},
                       {"store_id": "PH-5133", "name": "CVS Pharmacy", "address": "2634 N Halsted St", "distance_km": 1.4, "in_stock": False, "quantity": 0},
                       {"store_id": "PH-5147", "name": "Lincoln Park Pharmacy", "address": "1215 W Fullerton Ave", "distance_km": 2.2, "in_stock": True,
                        "quantity": 36}]}))],
             [["Walgreens", "Clark", "PH-5120"], ["Lincoln Park Pharmacy", "Lincoln Park", "Fullerton", "PH-5147"]],
             "Two have it: Walgreens at 2550 N Clark St (0.9 km) and Lincoln Park Pharmacy at 1215 W Fullerton Ave (2.2 km). "
             "The CVS on N Halsted St is out of stock.")

# ======== multi_turn: the results lead to another call ========
BATCH.next_call(["museum.search_exhibitions", "museum.ticket_availability", "museum.book_tickets", "museum.cancel_booking"],
                [user("Get me 2 adult tickets for the Hokusai exhibition in London on 2025-12-06, the first entry slot from 11:00 onwards."),
                 ran(("museum.search_exhibitions", {"city": "London", "date": "2025-12-06", "keyword": "Hokusai"},
                      {"exhibitions": [{"exhibition_id": "EXH-6031", "title": "Hokusai: The Great Wave and Beyond", "venue": "British Museum",
                                        "until": "2026-01-25"}]})),
                 ran(("museum.ticket_availability", {"exhibition_id": "EXH-6031", "date": "2025-12-06"},
                      {"exhibition_id": "EXH-6031", "date": "2025-12-06", "currency": "GBP",
                       "prices": {"adult": 22.0, "child": 0.0, "senior": 19.0, "student": 11.0},
                       "slots": [{"time": "10:00", "left": 8}, {"time": "10:30", "left": 0}, {"time": "11:00", "left": 0},
                                 {"time": "11:30", "left": 5}, {"time": "12:00", "left": 14}]}))],
                ("museum.book_tickets", {"exhibition_id": "EXH-6031", "date": "2025-12-06", "time": "11:30", "tickets": [{"adult": [2]}]}))
BATCH.next_call(["gym.class_schedule", "gym.membership", "gym.book_class", "gym.cancel_booking"],
                [user("帮我约一下国贸店2025年11月5日晚上7点左右的普拉提课。"),
                 ran(("gym.class_schedule", {"club": "国贸店", "date": "2025-11-05", "class_type": "pilates"},
                      {"club": "国贸店", "date": "2025-11-05", "classes": [
                          {"class_id": "CLS-88120", "type": "pilates", "start": "12:00", "minutes": 50, "instructor": "林教练", "free_spots": 6},
                          {"class_id": "CLS-88131", "type": "pilates", "start": "19:00", "minutes": 50, "instructor": "许教练", "free_spots": 4},
                          {"class_id": "CLS-88140", "type": "pilates", "start": "20:30", "minutes": 50, "instructor": "林教练", "free_spots": 9}]}))],
                ("gym.book_class", {"class_id": "CLS-88131"}))
BATCH.next_call(["parcel.track", "parcel.schedule_pickup", "parcel.create_shipment"],
                [user("Have the courier pick up parcels 1Z999AA10123456784 and 1Z999AA10123456791 on March 15, 2025, in the morning."),
                 ran(("parcel.schedule_pickup", {"tracking_numbers": ["1Z999AA10123456784", "1Z999AA10123456791"], "date": "03/15/2025", "window": "morning"},
                      Failed("invalid date '03/15/2025': expected YYYY-MM-DD")))],
                ("parcel.schedule_pickup", {"tracking_numbers": [["1Z999AA10123456784", "1Z999AA10123456791"], ["1Z999AA10123456791", "1Z999AA10123456784"]],
                                            "date": "2025-03-15", "window": "morning"}))
BATCH.next_call(["school.report_absence", "school.timetable", "school.homework", "school.exam_results"],
                [user("我儿子（学号 STU-51230）发烧了，明天2025年4月9日请一天病假，帮我跟学校报备一下；另外看看他4月11日之前还有哪些作业要交。"),
                 ran(("school.report_absence", {"student_id": "STU-51230", "date": "2025-04-09", "reason": "illness"},
                      {"absence_id": "ABS-20933", "student_id": "STU-51230", "date": "2025-04-09", "periods": "all", "status": "recorded",
                       "class_teacher_notified": True}))],
                ("school.homework", {"student_id": "STU-51230", "due_to": ["2025-04-11", "2025-04-10"], "due_from": ["", "2025-04-08", "2025-04-09"]}))
BATCH.next_call(["carcare.service_history", "carcare.find_slots", "carcare.recall_check", "carcare.book_service"],
                [user("Check VIN 1HGCV1F34LA012345 for open recalls. If there's one, book the recall repair at service center SC-204 for 2025-06-03 at 9 am."),
                 ran(("carcare.recall_check", {"vin": "1HGCV1F34LA012345"},
                      {"vin": "1HGCV1F34LA012345", "vehicle_id": "VH-31877", "model": "2020 Honda Accord", "open_recalls": [
                          {"campaign": "20V-314", "component": "fuel pump", "issue": "fuel pump may fail and stall the engine",
                           "remedy": "replace fuel pump", "free_of_charge": True}]}))],
                ("carcare.book_service", {"vehicle_id": ["1HGCV1F34LA012345", "VH-31877"], "center_id": "SC-204", "service": "recall_repair",
                                          "start": "2025-06-03 09:00"}))
BATCH.next_call(["pharmacy.check_stock", "pharmacy.prescription_status", "pharmacy.find_open", "pharmacy.refill"],
                [user("我的处方 RX-8820417 该续药了。帮我在邮编 100020 附近找一家有这个药的药店，续好了我去那儿取。"),
                 ran(("pharmacy.prescription_status", {"prescription_id": "RX-8820417"},
                      {"prescription_id": "RX-8820417", "medicine": "苯磺酸氨氯地平片 5mg", "status": "refill_due", "status_text": "可续方",
                       "refills_left": 3, "store": "望京店 (PH-198)"})),
                 ran(("pharmacy.check_stock", {"medicine": "苯磺酸氨氯地平片 5mg", "postcode": "100020"},
                      {"medicine": "苯磺酸氨氯地平片 5mg", "postcode": "100020", "stores": [
                          {"store_id": "PH-214", "name": "朝阳门店", "address": "朝阳门外大街18号", "distance_km": 1.2, "in_stock": True, "quantity": 40},
                          {"store_id": "PH-231", "name": "国贸店", "address": "建国门外大街1号", "distance_km": 2.0, "in_stock": False, "quantity": 0},
                          {"store_id": "PH-260", "name": "团结湖店", "address": "团结湖路5号", "distance_km": 3.5, "in_stock": True, "quantity": 12}]}))],
                ("pharmacy.refill", {"prescription_id": "RX-8820417", "pickup_store": ["PH-214", "PH-260"]}))
BATCH.next_call(["warranty.register_product", "warranty.check", "warranty.book_repair", "warranty.repair_status"],
                [user("My washing machine stopped draining. The serial is WM8821-KX0392. If it's still under warranty, book a technician for the morning of 2025-08-19."),
                 ran(("warranty.check", {"serial_number": "WM8821-KX0392"},
                      {"serial_number": "WM8821-KX0392", "model": "Bosch Serie 6 WAU28PH9GB", "purchased": "2024-02-14", "covered": True,
                       "coverage_until": "2026-02-14", "covers": ["parts", "labour", "technician visit"]}))],
                ("warranty.book_repair", {"serial_number": "WM8821-KX0392",
                                          "fault": _phrasings(["", "it", "washing machine", "the washing machine", "my washing machine", "washer", "the washer"],
                                                             ["stopped draining", "has stopped draining", "won't drain", "doesn't drain", "does not drain",
                                                              "is not draining", "isn't draining", "not draining", "stopped draining water",
                                                              "not draining water", "won't drain water", "doesn't drain water", "not draining properly"],
                                                             ["drainage problem", "draining problem", "drain problem", "water not draining"]),
                                          "date": "2025-08-19", "window": ["08:00-12:00", ""]}))
BATCH.next_call(["school.homework", "school.report_absence", "school.timetable"],
                [user("Liam (student STU-38812) has a dentist appointment on 2025-02-27 and will miss periods 3 and 4. Please let the school know."),
                 ran(("school.report_absence", {"student_id": "STU-3881", "date": "2025-02-27", "reason": "medical_appointment", "periods": [3, 4]},
                      Failed("student 'STU-3881' not found: student ids are STU- followed by 5 digits")))],
                ("school.report_absence", {"student_id": "STU-38812", "date": "2025-02-27", "reason": "medical_appointment", "periods": [[3, 4], [4, 3]]}))
BATCH.next_call(["parcel.quote", "parcel.track", "parcel.schedule_pickup", "parcel.create_shipment"],
                [user("我要从上海 200040 寄一个 2 公斤的箱子到北京 100027，帮我选最便宜的服务直接下单。收件人李娜，地址北京市朝阳区东三环北路8号，电话 13800138000。"),
                 ran(("parcel.quote", {"from_postcode": "200040", "to_postcode": "100027", "weight_kg": 2.0, "country": "CN"},
                      {"currency": "CNY", "options": [
                          {"quote_id": "Q-5521", "carrier": "顺丰速运", "service": "顺丰标快", "speed": "express", "price": 23.0, "business_days": "1-2"},
                          {"quote_id": "Q-5522", "carrier": "中通快递", "service": "中通标准快递", "speed": "economy", "price": 12.0, "business_days": "2-3"},
                          {"quote_id": "Q-5523", "carrier": "京东物流", "service": "京东特快", "speed": "standard", "price": 19.0, "business_days": "1-2"}]}))],
                ("parcel.create_shipment", {"quote_id": "Q-5522", "recipient": [
                    {"name": ["李娜"],
                     "address": ["北京市朝阳区东三环北路8号", "北京朝阳区东三环北路8号", "北京市朝阳区东三环北路 8 号", "朝阳区东三环北路8号",
                                 "北京市朝阳区东三环北路8号 100027", "北京市朝阳区东三环北路8号，100027", "100027 北京市朝阳区东三环北路8号"],
                     "phone": ["13800138000", "+8613800138000", "+86 13800138000"]}]}))
BATCH.next_call(["gym.book_class", "gym.class_schedule", "gym.cancel_booking", "gym.membership"],
                [user("Cancel my 6 pm boxing booking GB-55012, and instead put me on the waitlist for the 7:30 pm boxing class, CLS-90214."),
                 ran(("gym.cancel_booking", {"booking_id": "GB-55012"},
                      {"booking_id": "GB-55012", "class_id": "CLS-90207", "status": "cancelled", "late_cancel_fee": 0.0}))],
                ("gym.book_class", {"class_id": "CLS-90214", "join_waitlist": True}))
BATCH.next_call(["carcare.book_service", "carcare.find_slots", "carcare.recall_check"],
                [user("Book an oil change for VH-20931 at SC-118 on 2025-05-10, the latest slot before 2 pm, and I'll need a loaner car."),
                 ran(("carcare.find_slots", {"center_id": "SC-118", "service": "oil_change", "date": "2025-05-10"},
                      {"center_id": "SC-118", "center": "Midtown Auto Care", "date": "2025-05-10", "service": "oil_change", "minutes": 45,
                       "free_slots": ["08:00", "10:30", "13:15", "15:00"]}))],
                ("carcare.book_service", {"vehicle_id": "VH-20931", "center_id": "SC-118", "service": "oil_change", "start": "2025-05-10 13:15",
                                          "loaner_car": True}))
BATCH.next_call(["museum.ticket_availability", "museum.cancel_booking", "museum.book_tickets", "museum.opening_hours"],
                [user("故宫那个预约 MUS-730245 帮我取消吧，然后改约同一天下午两点的场次，还是两张成人票。"),
                 ran(("museum.cancel_booking", {"booking_id": "MUS-730245"},
                      {"booking_id": "MUS-730245", "status": "cancelled", "exhibition_id": "EXH-1001", "title": "故宫博物院（中轴线）",
                       "date": "2025-10-18", "time": "09:00", "tickets": {"adult": 2}, "refund": 120.0, "currency": "CNY"})),
                 ran(("museum.ticket_availability", {"exhibition_id": "EXH-1001", "date": "2025-10-18"},
                      {"exhibition_id": "EXH-1001", "date": "2025-10-18", "currency": "CNY",
                       "prices": {"adult": 60.0, "child": 20.0, "senior": 30.0, "student": 20.0},
                       "slots": [{"time": "09:00", "left": 2}, {"time": "11:00", "left": 0}, {"time": "13:00", "left": 5},
                                 {"time": "14:00", "left": 18}, {"time": "15:00", "left": 40}]}))],
                ("museum.book_tickets", {"exhibition_id": "EXH-1001", "date": "2025-10-18", "time": "14:00", "tickets": [{"adult": [2]}]}))

# ======== multi_turn follow-ups: a finished turn, then a new message ========
# the same tool with one argument changed
BATCH.next_call(["gym.book_class", "gym.class_schedule", "gym.membership"],
                [user("What yoga classes does the Riverside club have on 2025-09-12?"),
                 ran(("gym.class_schedule", {"club": "Riverside", "date": "2025-09-12", "class_type": "yoga"},
                      {"club": "Riverside", "date": "2025-09-12", "classes": [
                          {"class_id": "CLS-61004", "type": "yoga", "start": "07:15", "minutes": 60, "instructor": "Hannah", "free_spots": 2},
                          {"class_id": "CLS-61019", "type": "yoga", "start": "18:00", "minutes": 75, "instructor": "Tom", "free_spots": 0}]})),
                 said("On Friday 2025-09-12 Riverside has two yoga classes: 07:15 with Hannah (60 min, 2 spots left) and 18:00 with Tom (75 min, full)."),
                 user("Hmm. What about Sunday the 14th?")],
                ("gym.class_schedule", {"club": ["Riverside", "Riverside club"], "date": "2025-09-14", "class_type": "yoga"}))
BATCH.next_call(["school.timetable", "school.homework", "school.report_absence"],
                [user("初二(5)班2025年3月10日都有什么课？"),
                 ran(("school.timetable", {"class_id": "初二(5)班", "date": "2025-03-10"},
                      {"class_id": "初二(5)班", "date": "2025-03-10", "weekday": "星期一", "lessons": [
                          {"period": 1, "start": "08:00", "end": "08:45", "subject": "数学", "teacher": "黄老师", "room": "教学楼305"},
                          {"period": 2, "start": "08:55", "end": "09:40", "subject": "语文", "teacher": "郑老师", "room": "教学楼305"},
                          {"period": 3, "start": "10:00", "end": "10:45", "subject": "英语", "teacher": "吴老师", "room": "教学楼305"},
                          {"period": 4, "start": "10:55", "end": "11:40", "subject": "生物", "teacher": "钱老师", "room": "实验楼110"},
                          {"period": 5, "start": "13:30", "end": "14:15", "subject": "历史", "teacher": "冯老师", "room": "教学楼305"},
                          {"period": 6, "start": "14:25", "end": "15:10", "subject": "美术", "teacher": "何老师", "room": "艺术楼201"}]})),
                 said("3月10日（周一）初二(5)班共6节课：上午数学、语文、英语、生物（在实验楼110），下午历史和美术（在艺术楼201）。"),
                 user("那周三，3月12日呢？")],
                ("school.timetable", {"class_id": ["初二(5)班", "初二（5）班", "初二5班"], "date": "2025-03-12"}))
BATCH.next_call(["parcel.quote", "parcel.create_shipment", "parcel.schedule_pickup"],
                [user("How much to send a 1.5 kg parcel within the UK, from SW1A 1AA to M1 1AE?"),
                 ran(("parcel.quote", {"from_postcode": "SW1A 1AA", "to_postcode": "M1 1AE", "weight_kg": 1.5, "country": "GB"},
                      {"currency": "GBP", "options": [
                          {"quote_id": "Q-3301", "carrier": "Royal Mail", "service": "Tracked 48", "speed": "economy", "price": 4.19, "business_days": "2-3"},
                          {"quote_id": "Q-3302", "carrier": "Evri", "service": "Standard", "speed": "standard", "price": 3.89, "business_days": "2-4"},
                          {"quote_id": "Q-3303", "carrier": "DPD", "service": "Next Day", "speed": "express", "price": 8.5, "business_days": "1"}]})),
                 said("For 1.5 kg from SW1A 1AA to M1 1AE: Evri Standard £3.89 (2-4 days), Royal Mail Tracked 48 £4.19 (2-3 days), or DPD Next Day £8.50."),
                 user("And if the parcel weighs 4 kg instead?")],
                ("parcel.quote", {"from_postcode": "SW1A 1AA", "to_postcode": "M1 1AE", "weight_kg": 4.0, "country": "GB"}))
BATCH.next_call(["pharmacy.refill", "pharmacy.find_open", "pharmacy.check_stock"],
                [user("Which pharmacies near Union Square, San Francisco will be open at 10 pm on 2025-12-24?"),
                 ran(("pharmacy.find_open", {"location": "Union Square, San Francisco", "at": "2025-12-24 22:00"},
                      {"at": "2025-12-24 22:00", "pharmacies": [
                          {"store_id": "PH-7702", "name": "Walgreens", "address": "135 Powell St", "distance_km": 0.3, "open_until": "24 hours"},
                          {"store_id": "PH-7719", "name": "CVS Pharmacy", "address": "731 Market St", "distance_km": 0.6, "open_until": "23:00"}]})),
                 said("Two will be open at 10 pm on Christmas Eve: Walgreens at 135 Powell St (open 24 hours, 0.3 km) and CVS Pharmacy at 731 Market St (until 11 pm)."),
                 user("And on Christmas Day at the same time?")],
                ("pharmacy.find_open", {"location": ["Union Square, San Francisco", "Union Square", "Union Square, San Francisco, CA", "Union Square San Francisco",
                                                       "Union Square, SF", "Union Square, San Francisco, California"], "at": "2025-12-25 22:00"}))
# a new question for another offered tool
BATCH.next_call(["museum.search_exhibitions", "museum.book_tickets", "museum.ticket_availability", "museum.opening_hours"],
                [user("2025年5月3日上海有哪些美术展？"),
                 ran(("museum.search_exhibitions", {"city": "上海", "date": "2025-05-03"},
                      {"exhibitions": [
                          {"exhibition_id": "EXH-7720", "title": "莫奈与印象派大师展", "venue": "浦东美术馆", "until": "2025-06-30"},
                          {"exhibition_id": "EXH-7734", "title": "海派百年绘画展", "venue": "中华艺术宫", "until": "2025-08-10", "free": True},
                          {"exhibition_id": "EXH-7741", "title": "光影艺术沉浸展", "venue": "西岸美术馆", "until": "2025-05-18"}]})),
                 said("5月3日上海在展的有：浦东美术馆“莫奈与印象派大师展”（展到6月30日）、中华艺术宫“海派百年绘画展”（免费，展到8月10日）"
                      "和西岸美术馆“光影艺术沉浸展”（展到5月18日）。"),
                 user("莫奈那个展当天下午还有票吗？")],
                ("museum.ticket_availability", {"exhibition_id": "EXH-7720", "date": "2025-05-03"}))
BATCH.next_call(["carcare.recall_check", "carcare.service_history", "carcare.book_service", "carcare.find_slots"],
                [user("Show me the last three services on my car, VH-44107."),
                 ran(("carcare.service_history", {"vehicle_id": "VH-44107", "limit": 3},
                      {"vehicle_id": "VH-44107", "model": "2017 Ford Fusion", "visits": [
                          {"date": "2025-02-03", "service": "brake_inspection", "odometer_km": 96420, "cost": 65.0, "currency": "USD"},
                          {"date": "2024-09-12", "service": "oil_change", "odometer_km": 90115, "cost": 79.5, "currency": "USD"},
                          {"date": "2024-03-28", "service": "battery_replacement", "odometer_km": 83760, "cost": 189.0, "currency": "USD"}]})),
                 said("The latest three for your 2017 Ford Fusion: a brake inspection on 2025-02-03 (96,420 km, $65), an oil change on 2024-09-12 "
                      "(90,115 km, $79.50) and a new battery on 2024-03-28 ($189)."),
                 user("Thanks. Are there any open recalls on it? The VIN is 3FA6P0H72HR123456.")],
                ("carcare.recall_check", {"vin": "3FA6P0H72HR123456"}))
BATCH.next_call(["gym.class_schedule", "gym.membership", "gym.book_class", "gym.cancel_booking"],
                [user("我的健身卡（会员号 M-512208）还有多久到期？"),
                 ran(("gym.membership", {"member_id": "M-512208"},
                      {"member_id": "M-512208", "name": "陈立", "plan": "季卡", "expires": "2025-12-31", "frozen": False,
                       "classes_per_month": 4, "classes_left_this_month": 1})),
                 said("您的季卡有效期到 2025-12-31，本月团课还剩 1 节。"),
                 user("好的。那帮我把明天那节动感单车课取消吧，预约号是 GB-66120。")],
                ("gym.cancel_booking", {"booking_id": "GB-66120"}))
BATCH.next_call(["warranty.check", "warranty.repair_status", "warranty.register_product", "warranty.book_repair"],
                [user("Can you check the warranty on my fridge? Serial RF2290-LQ7715."),
                 ran(("warranty.check", {"serial_number": "RF2290-LQ7715"},
                      {"serial_number": "RF2290-LQ7715", "model": "Samsung RF28T5001SR", "purchased": "2023-11-02", "covered": True,
                       "coverage_until": "2025-11-02", "covers": ["parts", "labour"]})),
                 said("Your Samsung RF28T5001SR is covered until 2025-11-02, parts and labour included."),
                 user("Good. The ice maker is leaking water, so please book a technician for the afternoon of 2025-09-02.")],
                ("warranty.book_repair", {"serial_number": "RF2290-LQ7715",
                                          "fault": _phrasings(["the ice maker", "ice maker", "the fridge's ice maker", "fridge ice maker", "the fridge ice maker"],
                                                             ["is leaking water", "leaking water", "is leaking", "leaking", "leaks water", "leaks",
                                                              "has a water leak", "water leak", "leak"],
                                                             ["leaking ice maker", "water leaking from the ice maker", "water leaking from ice maker",
                                                              "water is leaking from the ice maker", "ice maker leaking water inside the fridge"]),
                                          "date": "2025-09-02", "window": "12:00-16:00"}))
# a follow-up the earlier results answer
BATCH.answer(["parcel.track", "parcel.quote", "parcel.schedule_pickup"],
             [user("Where's my package 1Z999AA10123456784?"),
              ran(("parcel.track", {"tracking_number": "1Z999AA10123456784"},
                   {"tracking_number": "1Z999AA10123456784", "carrier": "UPS", "status": "out_for_delivery", "estimated_delivery": "2025-03-18",
                    "events": [
                        {"time": "2025-03-18 07:42", "location": "Brooklyn, NY", "event": "Out for delivery"},
                        {"time": "2025-03-17 23:10", "location": "Secaucus, NJ", "event": "Departed facility"},
                        {"time": "2025-03-17 14:05", "location": "Secaucus, NJ", "event": "Arrived at facility"},
                        {"time": "2025-03-14 18:30", "location": "San Francisco, CA", "event": "Picked up"}]})),
              said("It's out for delivery in Brooklyn since 07:42 this morning and should arrive today, 2025-03-18."),
              user("Which hub did it come through before Brooklyn, and when did it leave there?")],
             [["Secaucus"], ["23:10", "11:10 pm", "11:10pm", "11:10 p.m.", "11:10", "11.10 pm", "11.10pm"]],
             "It came through the UPS facility in Secaucus, NJ: it arrived there on 2025-03-17 at 14:05 and left at 23:10 that night.")
BATCH.answer(["school.timetable", "school.homework", "school.exam_results"],
             [user("帮我看看女儿（学号 STU-62045）这周还有什么作业没交。"),
              ran(("school.homework", {"student_id": "STU-62045", "due_from": "2025-11-17", "due_to": "2025-11-21"},
                   {"student_id": "STU-62045", "homework": [
                       {"subject": "数学", "task": "练习册第45-47页，第3题写出完整步骤", "due": "2025-11-18", "done": False},
                       {"subject": "语文", "task": "背诵《岳阳楼记》第二段", "due": "2025-11-19", "done": False},
                       {"subject": "英语", "task": "Unit 5 作文：My Favourite Season（不少于80词）", "due": "2025-11-21", "done": False}]})),
              said("这周还有3项作业没交：数学练习册（11月18日交）、语文背诵《岳阳楼记》第二段（11月19日）、英语 Unit 5 作文（11月21日）。"),
              user("数学作业具体要做哪几页？")],
             [["45"], ["47"]],
             "数学作业是练习册第 45–47 页，11 月 18 日交，其中第 3 题要写出完整步骤。")
BATCH.answer(["museum.book_tickets", "museum.ticket_availability", "museum.search_exhibitions"],
             [user("Are there tickets left for the Frida Kahlo exhibition EXH-4410 on 2025-07-19?"),
              ran(("museum.ticket_availability", {"exhibition_id": "EXH-4410", "date": "2025-07-19"},
                   {"exhibition_id": "EXH-4410", "title": "Frida Kahlo: Her Photos", "date": "2025-07-19", "currency": "USD",
                    "prices": {"adult": 28.0, "child": 12.0, "senior": 21.0, "student": 18.0},
                    "slots": [{"time": "10:00", "left": 0}, {"time": "12:30", "left": 9}, {"time": "15:00", "left": 22}]})),
              said("Yes: on 2025-07-19 the 12:30 slot has 9 tickets left and 15:00 has 22; 10:00 is sold out. Adult tickets are $28."),
              user("And how much would a ticket be for my mom? She's 68.")],
             [["21"]],
             "Your mom gets the senior rate (65 and over): $21 a ticket.")
# a follow-up no offered function fits
BATCH.answer(["gym.book_class", "gym.cancel_booking", "gym.class_schedule"],
             [user("Book me into the HIIT class CLS-73305 tomorrow morning."),
              ran(("gym.book_class", {"class_id": "CLS-73305"},
                   {"booking_id": "GB-71882", "class_id": "CLS-73305", "type": "hiit", "date": "2025-06-12", "start": "07:00", "club": "Harbourfront",
                    "status": "confirmed"})),
              said("You're booked: HIIT at Harbourfront on 2025-06-12 at 07:00 (booking GB-71882)."),
              user("Perfect, thanks a lot!")],
             [["welcome", "glad", "my pleasure", "no problem", "anytime", "any time", "enjoy", "have a great", "have a good", "happy to help", "have fun",
               "pleasure", "no worries", "sure thing", "good luck", "不客气"]],
             "You're welcome! Enjoy the class tomorrow morning.",
             no_tool=True)
BATCH.answer(["pharmacy.prescription_status", "pharmacy.refill", "pharmacy.find_open"],
             [user("处方 RX-7745031 的药备好了没有？"),
              ran(("pharmacy.prescription_status", {"prescription_id": "RX-7745031"},
                   {"prescription_id": "RX-7745031", "medicine": "布洛芬缓释胶囊 0.3g", "status": "ready", "status_text": "已备好，可取药",
                    "store": "徐家汇店 (PH-318)", "hold_until": "2025-08-08", "refills_left": 0})),
              said("已经备好了：布洛芬缓释胶囊 0.3g 可以到徐家汇店取，药店保留到 2025-08-08。"),
              user("谢谢。顺便问一下，布洛芬一般什么时候吃比较好？空腹吃可以吗？")],
             [["饭后", "餐后", "随餐", "进食后", "吃完饭", "吃饭后", "进餐时", "用餐时", "与食物同服", "和食物一起", "与食物一起",
               "不要空腹", "不建议空腹", "避免空腹", "不宜空腹", "不适合空腹", "最好别空腹", "after meals", "with food"]],
             "一般建议饭后或随餐服用，尽量不要空腹吃，可以减少对胃的刺激；缓释胶囊要整粒吞服，不要掰开或嚼碎。具体剂量请按医嘱或说明书。",
             no_tool=True)
BATCH.answer(["carcare.find_slots", "carcare.book_service", "carcare.recall_check"],
             [user("Book VH-20931 in for a tire rotation at SC-118 on 2025-04-25 at 08:30."),
              ran(("carcare.book_service", {"vehicle_id": "VH-20931", "center_id": "SC-118", "service": "tire_rotation", "start": "2025-04-25 08:30"},
                   {"appointment_id": "APT-40977", "center": "Midtown Auto Care", "start": "2025-04-25 08:30", "service": "tire_rotation",
                    "estimated_minutes": 40, "price": 35.0, "currency": "USD", "status": "confirmed"})),
              said("Booked: a tire rotation at Midtown Auto Care on 2025-04-25 at 08:30 (appointment APT-40977), about 40 minutes, $35."),
              user("Out of curiosity, why do tires need rotating at all?")],
             [["wear", "wears", "worn", "tread", "even", "evenly", "uneven", "unevenly", "磨损"]],
             "Because tires wear unevenly: the front ones carry the steering (and on most cars the drive), so their tread wears faster. "
             "Moving them around evens out the wear, so the set lasts longer and grips more evenly.",
             no_tool=True)
