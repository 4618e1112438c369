"""Batch B (written 2026-12-06): jobs and HR, news and social media, git hosting and packages, cloud servers and DNS, issue trackers, printing."""
from cases_multi import Failed, ran, said, user
from fresh import Batch
from functions import B, D, F, I, L, S, fn, CURRENCIES, LANGS  # noqa: F401

BATCH = Batch()

# ---- jobs / HR ----
fn("jobs.search", "Search open job postings.", ["keywords"],
   keywords=S("Job title or skills to look for, e.g. data engineer."),
   location=S("City or region of the job, e.g. Berlin or 深圳; leave out for anywhere."),
   remote_only=B("Only fully remote jobs.", False),
   employment_type=S("Kind of contract.", ["any", "full_time", "part_time", "contract", "internship"], "any"),
   min_salary=F("Lowest yearly salary in US dollars."),
   posted_within_days=I("Only postings from the last this many days.", None, 30))
fn("hr.request_leave", "Submit a leave request for an employee.", ["employee_id", "leave_type", "start_date", "days"],
   employee_id=S("Employee id, e.g. E10234."),
   leave_type=S("Kind of leave.", ["annual", "sick", "personal", "parental", "unpaid"]),
   start_date=S("First day of the leave, formatted YYYY-MM-DD."),
   days=I("Number of working days off, the first day included."),
   reason=S("Short reason for the approver."))
fn("hr.leave_balance", "Leave days an employee has left in a year.", ["employee_id"],
   employee_id=S("Employee id, e.g. E10234."),
   leave_type=S("Which balance to report.", ["all", "annual", "sick", "personal"], "all"),
   year=I("Calendar year, e.g. 2025; default the current year."))
fn("hr.get_payslip", "Fetch an employee's payslip for one month.", ["employee_id", "month"],
   employee_id=S("Employee id, e.g. E10234."),
   month=S("Pay month, formatted YYYY-MM."),
   format=S("File format.", ["pdf", "html"], "pdf"))

# ---- news / social media ----
PLATFORMS = ["twitter", "weibo", "linkedin", "facebook", "instagram", "mastodon"]
fn("news.search", "Search news articles.", ["query"],
   query=S("Words to search for."),
   from_date=S("Earliest publication date, formatted YYYY-MM-DD."),
   to_date=S("Latest publication date, formatted YYYY-MM-DD."),
   language=S("ISO 639-1 code of the articles' language.", LANGS),
   sort_by=S("Order of results: relevance, date_desc (newest first) or popularity.", ["relevance", "date_desc", "popularity"], "relevance"),
   max_results=I("How many articles to return.", None, 10))
fn("social.post", "Publish a post right now on one of the user's social media accounts.", ["platform", "text"],
   platform=S("Social network.", PLATFORMS),
   text=S("Text of the post, exactly as given."),
   image_paths=L({"type": "string"}, "Local paths of images to attach."),
   visibility=S("Who can see the post.", ["public", "followers", "private"], "public"))
fn("social.schedule_post", "Schedule a post to be published later on one of the user's social media accounts.", ["platform", "text", "publish_at"],
   platform=S("Social network.", PLATFORMS),
   text=S("Text of the post, exactly as given."),
   publish_at=S("When to publish, formatted YYYY-MM-DD HH:MM (24-hour clock)."),
   timezone=S("IANA time zone of publish_at, e.g. Asia/Shanghai.", None, "UTC"))
fn("social.follower_count", "Number of followers of a social media account.", ["platform", "handle"],
   platform=S("Social network.", PLATFORMS),
   handle=S("Account name without the leading @, e.g. nasa."))

# ---- git hosting / package registries ----
REPO = "Repository as owner/name, e.g. rust-lang/cargo."
fn("git.create_issue", "Open an issue in a hosted git repository.", ["repo", "title"],
   repo=S(REPO),
   title=S("Issue title."),
   body=S("Issue text (Markdown)."),
   labels=L({"type": "string"}, "Label names, e.g. bug."),
   assignees=L({"type": "string"}, "User names to assign, without the @."))
fn("git.list_pull_requests", "List the pull requests of a hosted git repository.", ["repo"],
   repo=S(REPO),
   state=S("Which pull requests.", ["open", "closed", "merged", "all"], "open"),
   author=S("Only those opened by this user name."),
   base_branch=S("Only those targeting this branch, e.g. main."))
fn("git.merge_pull_request", "Merge a pull request of a hosted git repository.", ["repo", "number"],
   repo=S(REPO),
   number=I("Pull request number, e.g. 482 for #482."),
   method=S("How to merge.", ["merge", "squash", "rebase"], "merge"),
   delete_branch=B("Delete the source branch after merging.", False))
fn("git.create_release", "Publish a release of a hosted git repository from a tag.", ["repo", "tag"],
   repo=S(REPO),
   tag=S("Release tag: a v and a full semantic version MAJOR.MINOR.PATCH, e.g. v2.1.0."),
   title=S("Release title; default the tag."),
   notes=S("Release notes (Markdown)."),
   prerelease=B("Mark the release as a pre-release.", False),
   draft=B("Save as a draft without publishing.", False))
REGISTRIES = ["npm", "pypi", "crates", "maven", "go"]
REGISTRY = "Package registry: npm (JavaScript), pypi (Python), crates (Rust, crates.io), maven (Java), go (Go modules)."
fn("pkg.latest_version", "Latest published version of a package in a registry.", ["name", "registry"],
   name=S("Package name as published, e.g. requests or @types/node."),
   registry=S(REGISTRY, REGISTRIES),
   include_prerelease=B("Count pre-release versions too.", False))
fn("pkg.dependencies", "Dependencies of one version of a package in a registry.", ["name", "registry"],
   name=S("Package name as published."),
   registry=S(REGISTRY, REGISTRIES),
   version=S("Semantic version MAJOR.MINOR.PATCH without a leading v, e.g. 4.17.21.", None, "latest"),
   include_dev=B("Also list development dependencies.", False))

# ---- cloud servers / DNS ----
REGION = "Region code, e.g. us-east-1, eu-west-1 or ap-southeast-1."
fn("cloud.create_instance", "Create and start a cloud virtual machine.", ["name", "region", "instance_type", "image"],
   name=S("Instance name."),
   region=S(REGION),
   instance_type=S("Machine size.", ["t3.micro", "t3.small", "t3.medium", "m5.large", "m5.xlarge", "c5.2xlarge"]),
   image=S("Operating system image.", ["ubuntu-22.04", "ubuntu-24.04", "debian-12", "amazon-linux-2023", "windows-2022"]),
   disk=D("Boot disk.", ["size_gb"], size_gb=I("Size in GB."), type=S("Disk kind.", ["ssd", "hdd"], "ssd")),
   tags=L({"type": "string"}, "Tags as key=value, e.g. env=prod."))
fn("cloud.list_instances", "List the cloud virtual machines of a region.", ["region"],
   region=S(REGION),
   state=S("Only instances in this state.", ["all", "running", "stopped"], "all"))
fn("cloud.stop_instance", "Stop (not delete) a running cloud virtual machine by its id.", ["instance_id"],
   instance_id=S("Instance id, e.g. i-0a1b2c3d."),
   force=B("Stop at once without a clean shutdown.", False))
RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "NS"]
fn("dns.list_records", "List the DNS records of a zone.", ["zone"],
   zone=S("Domain of the zone, e.g. example.com."),
   record_type=S("Only records of this type; ANY lists every type.", ["ANY"] + RECORD_TYPES, "ANY"),
   name=S("Only records of this host name relative to the zone, e.g. www; @ for the zone apex."))
fn("dns.create_record", "Add a DNS record to a zone.", ["zone", "record"],
   zone=S("Domain of the zone, e.g. example.com."),
   record=D("The record.", ["name", "type", "value"],
            name=S("Host name relative to the zone, e.g. www or api (not the full domain); @ for the zone apex."),
            type=S("Record type.", RECORD_TYPES),
            value=S("Record value: an IPv4 address for A, an IPv6 address for AAAA, a host name for CNAME and MX, the text for TXT."),
            ttl=I("Time to live in seconds.", None, 3600),
            priority=I("Priority, MX records only.")))

# ---- issue tracker ----
TICKET = "Ticket key, e.g. OPS-142."
fn("tickets.create", "Create a ticket in the issue tracker.", ["project", "summary"],
   project=S("Project key in upper case, e.g. OPS."),
   summary=S("One-line summary."),
   description=S("Details."),
   issue_type=S("Kind of ticket.", ["task", "bug", "story", "epic"], "task"),
   priority=S("Priority.", ["lowest", "low", "medium", "high", "highest"], "medium"),
   due_date=S("Due date, formatted YYYY-MM-DD."))
fn("tickets.assign", "Assign a ticket of the issue tracker to a person.", ["ticket_id", "assignee"],
   ticket_id=S(TICKET),
   assignee=S("User name of the new assignee, e.g. li.wei."))
fn("tickets.transition", "Move a ticket of the issue tracker to another status.", ["ticket_id", "status"],
   ticket_id=S(TICKET),
   status=S("New status.", ["to_do", "in_progress", "in_review", "done", "wont_do"]),
   comment=S("Comment added with the change."))

# ---- printing / scanning ----
COLOR = ["color", "grayscale"]
fn("printer.print_document", "Send a document to a printer.", ["file_path"],
   file_path=S("Path of the file to print, e.g. ~/Documents/report.pdf."),
   printer=S("Printer name; default the system's default printer."),
   copies=I("Number of copies.", None, 1),
   duplex=B("Print on both sides of the paper.", False),
   color_mode=S("Colour or black and white.", COLOR, "color"),
   pages=S("Pages to print, e.g. 1-3,5; default every page."),
   paper_size=S("Paper size.", ["A4", "A3", "Letter", "Legal"], "A4"))
fn("printer.scan", "Scan the page on a scanner to a file; the file format follows the extension of output_path (.pdf, .jpg or .png).", ["output_path"],
   output_path=S("Path of the file to write, e.g. ~/Scans/receipt.pdf."),
   scanner=S("Scanner name; default the system's default scanner."),
   resolution_dpi=I("Resolution in dots per inch.", [150, 300, 600, 1200], 300),
   color_mode=S("Colour or black and white.", COLOR, "color"))


# ======== simple: one function offered, one call ========
BATCH.simple("帮我提交年假申请：工号 E20417，从 2025 年 12 月 15 日开始休两天。", "hr.request_leave",
             {"employee_id": "E20417", "leave_type": "annual", "start_date": "2025-12-15", "days": 2})
BATCH.simple("Publish release v3.2 of acme/widgets and flag it as a pre-release.", "git.create_release",
             {"repo": "acme/widgets", "tag": "v3.2.0", "prerelease": True})
BATCH.simple("Can you pull up my payslip for August 2025 as an HTML page? Employee number E55102.", "hr.get_payslip",
             {"employee_id": "E55102", "month": "2025-08", "format": "html"})
BATCH.simple("在 example.cn 这个域名下加一条 A 记录：api 指向 203.0.113.25，TTL 设为 600 秒。", "dns.create_record",
             {"zone": "example.cn", "record": {"name": "api", "type": "A", "value": "203.0.113.25", "ttl": 600}})
BATCH.simple("Find remote contract gigs for a Go developer that were posted in the last 7 days.", "jobs.search",
             {"keywords": ["Go developer", "Go", "Golang", "Golang developer"], "remote_only": True,
              "employment_type": "contract", "posted_within_days": 7})
BATCH.simple("用 600 dpi 黑白扫描一下，存成 ~/Scans/合同.pdf。", "printer.scan",
             {"output_path": "~/Scans/合同.pdf", "resolution_dpi": 600, "color_mode": "grayscale"})
BATCH.simple("Schedule this LinkedIn post for March 3, 2026 at 9am Berlin time: \"We're hiring backend engineers!\"", "social.schedule_post",
             {"platform": "linkedin", "text": "We're hiring backend engineers!", "publish_at": "2026-03-03 09:00", "timezone": "Europe/Berlin"})

# ======== multiple: one call among look-alike neighbours ========
BATCH.multiple("Merge pull request #482 in octo-org/payments as a squash commit and delete the branch afterwards.",
               ["git.list_pull_requests", "git.merge_pull_request", "git.create_release", "ci.trigger_pipeline"],
               "git.merge_pull_request", {"repo": "octo-org/payments", "number": 482, "method": "squash", "delete_branch": True})
BATCH.multiple("numpy 在 PyPI 上最新的版本号是多少？", ["pkg.dependencies", "pkg.latest_version", "git.create_release"],
               "pkg.latest_version", {"name": "numpy", "registry": "pypi"})
BATCH.multiple("What does lodash 4.17.21 on npm depend on? Include the dev dependencies too.",
               ["pkg.latest_version", "pkg.dependencies", "git.list_pull_requests"],
               "pkg.dependencies", {"name": "lodash", "registry": "npm", "version": "4.17.21", "include_dev": True})
BATCH.multiple("把工单 OPS-311 改成进行中，并备注“已开始排查”。", ["tickets.create", "tickets.assign", "tickets.transition"],
               "tickets.transition", {"ticket_id": "OPS-311", "status": "in_progress", "comment": "已开始排查"})
BATCH.multiple("Show me only the stopped VMs in eu-west-1.",
               ["cloud.create_instance", "cloud.list_instances", "cloud.stop_instance", "dns.list_records"],
               "cloud.list_instances", {"region": "eu-west-1", "state": "stopped"})
BATCH.multiple("帮我查一下微博账号 @人民日报 现在有多少粉丝。", ["social.post", "social.schedule_post", "social.follower_count", "news.search"],
               "social.follower_count", {"platform": "weibo", "handle": "人民日报"})
BATCH.multiple("Print pages 2-5 of ~/Documents/thesis.pdf double-sided on the printer called HP-3F, 3 copies please.",
               ["printer.scan", "printer.print_document", "files.read"],
               "printer.print_document", {"file_path": "~/Documents/thesis.pdf", "printer": "HP-3F", "pages": "2-5", "duplex": True, "copies": 3})

# ======== parallel: one function, one call per item ========
BATCH.parallel("What's the latest version of react on npm, django on PyPI and serde on crates.io?", "pkg.latest_version",
               {"name": "react", "registry": "npm"}, {"name": "django", "registry": "pypi"}, {"name": "serde", "registry": "crates"})
BATCH.parallel("帮我查一下 example.com 的 MX 记录和 TXT 记录。", "dns.list_records",
               {"zone": "example.com", "record_type": "MX"}, {"zone": "example.com", "record_type": "TXT"})
BATCH.parallel("Stop instances i-0a12f9c3 and i-0b77e210, we don't need them over the weekend.", "cloud.stop_instance",
               {"instance_id": "i-0a12f9c3"}, {"instance_id": "i-0b77e210"})
BATCH.parallel("把 OPS-501、OPS-502 和 OPS-507 这三个工单都分配给 zhang.min。", "tickets.assign",
               {"ticket_id": "OPS-501", "assignee": "zhang.min"}, {"ticket_id": "OPS-502", "assignee": "zhang.min"},
               {"ticket_id": "OPS-507", "assignee": "zhang.min"})
BATCH.parallel("How many followers do @nasa on Twitter and @natgeo on Instagram have?", "social.follower_count",
               {"platform": "twitter", "handle": "nasa"}, {"platform": "instagram", "handle": "natgeo"})
BATCH.parallel("分别搜一下 2025 年 11 月 1 日到 11 月 30 日关于“光伏”和“储能”的中文新闻，按时间从新到旧排。", "news.search",
               {"query": "光伏", "from_date": "2025-11-01", "to_date": "2025-11-30", "language": "zh", "sort_by": "date_desc"},
               {"query": "储能", "from_date": "2025-11-01", "to_date": "2025-11-30", "language": "zh", "sort_by": "date_desc"})
BATCH.parallel("Open two issues in acme/cli: \"Crash on empty config\" with the label bug, and \"Add --json flag\" with the label enhancement.",
               "git.create_issue",
               {"repo": "acme/cli", "title": "Crash on empty config", "labels": [["bug"]]},
               {"repo": "acme/cli", "title": "Add --json flag", "labels": [["enhancement"]]})

# ======== parallel_multiple: several functions, several calls ========
BATCH.parallel_multiple("Spin up a t3.small Ubuntu 24.04 VM called web-2 in us-west-2 with a 40 GB disk, and add an A record web2 -> 198.51.100.14 to the shop.example zone.",
                        ["cloud.create_instance", "cloud.list_instances", "dns.create_record", "dns.list_records"],
                        ("cloud.create_instance", {"name": "web-2", "region": "us-west-2", "instance_type": "t3.small", "image": "ubuntu-24.04",
                                                   "disk": {"size_gb": 40}}),
                        ("dns.create_record", {"zone": "shop.example", "record": {"name": "web2", "type": "A", "value": "198.51.100.14"}}))
BATCH.parallel_multiple("用 rebase 的方式合并 lin/notes-app 的 PR #57，另外给这个仓库发布 v1.3.0 版本，标题叫“春季更新”。",
                        ["git.merge_pull_request", "git.create_release", "git.list_pull_requests", "git.create_issue"],
                        ("git.merge_pull_request", {"repo": "lin/notes-app", "number": 57, "method": "rebase"}),
                        ("git.create_release", {"repo": "lin/notes-app", "tag": "v1.3.0", "title": "春季更新"}))
BATCH.parallel_multiple("File a high-priority bug in project WEB titled \"Checkout button unresponsive on Safari\", and move WEB-88 to done.",
                        ["tickets.create", "tickets.assign", "tickets.transition"],
                        ("tickets.create", {"project": "WEB", "summary": "Checkout button unresponsive on Safari", "issue_type": "bug", "priority": "high"}),
                        ("tickets.transition", {"ticket_id": "WEB-88", "status": "done"}))
BATCH.parallel_multiple("工号 E30988：帮我看看年假还剩几天，再把 2025 年 10 月的工资条以 PDF 格式发给我。",
                        ["hr.leave_balance", "hr.get_payslip", "hr.request_leave"],
                        ("hr.leave_balance", {"employee_id": "E30988", "leave_type": "annual"}),
                        ("hr.get_payslip", {"employee_id": "E30988", "month": "2025-10", "format": ["pdf", ""]}))
BATCH.parallel_multiple("Post \"Our v2.0 is live!\" on Mastodon right now, and schedule the same text on LinkedIn for 2025-12-20 18:00 Singapore time (Asia/Singapore).",
                        ["social.post", "social.schedule_post", "social.follower_count"],
                        ("social.post", {"platform": "mastodon", "text": "Our v2.0 is live!"}),
                        ("social.schedule_post", {"platform": "linkedin", "text": "Our v2.0 is live!", "publish_at": "2025-12-20 18:00",
                                                  "timezone": "Asia/Singapore"}))
BATCH.parallel_multiple("Print 2 copies of ~/Downloads/boarding-pass.pdf in black and white, and scan my passport page to ~/Scans/passport.jpg at 600 dpi.",
                        ["printer.print_document", "printer.scan", "files.compress"],
                        ("printer.print_document", {"file_path": "~/Downloads/boarding-pass.pdf", "copies": 2, "color_mode": "grayscale"}),
                        ("printer.scan", {"output_path": "~/Scans/passport.jpg", "resolution_dpi": 600}))
BATCH.parallel_multiple("找一下深圳的 Rust 开发全职岗位，再查查 tokio 在 crates.io 上的最新版本。",
                        ["jobs.search", "pkg.latest_version", "pkg.dependencies", "news.search"],
                        ("jobs.search", {"keywords": ["Rust 开发", "Rust", "Rust开发", "Rust 开发工程师", "Rust developer", "Rust开发工程师", "Rust 工程师", "Rust engineer"],
                                         "location": ["深圳", "Shenzhen"], "employment_type": "full_time"}),
                        ("pkg.latest_version", {"name": "tokio", "registry": "crates"}))

# ======== irrelevance: same topic, no function answers ========
BATCH.irrelevance("Delete the repository acme/old-site permanently.",
                  ["git.create_issue", "git.list_pull_requests", "git.merge_pull_request", "git.create_release"])
BATCH.irrelevance("帮我把 i-0c55d1e2 这台云服务器彻底删除，不是停机。", ["cloud.stop_instance", "cloud.list_instances", "cloud.create_instance"])
BATCH.irrelevance("In your opinion, what time of day should I post on LinkedIn to get the most engagement?",
                  ["social.post", "social.schedule_post", "social.follower_count"])
BATCH.irrelevance("帮我把上个月的加班费改成按 1.5 倍计算。", ["hr.get_payslip", "hr.leave_balance", "hr.request_leave"])
BATCH.irrelevance("Unfollow @spamaccount123 on Twitter for me.", ["social.post", "social.follower_count", "social.schedule_post"])
BATCH.irrelevance("DNS 里的 CNAME 记录和 A 记录有什么区别？", ["dns.list_records", "dns.create_record"])
BATCH.irrelevance("How much toner is left in the office printer HP-3F?", ["printer.print_document", "printer.scan"])

# ======== multi_turn ========
# The results answer it: two results combined.
BATCH.answer(["social.follower_count", "social.post", "news.search"],
             [user("How many followers do we have on Twitter and on LinkedIn? Our handle is acmeworks on both."),
              ran(("social.follower_count", {"platform": "twitter", "handle": "acmeworks"},
                   {"platform": "twitter", "handle": "acmeworks", "followers": 48213, "following": 310}),
                  ("social.follower_count", {"platform": "linkedin", "handle": "acmeworks"},
                   {"platform": "linkedin", "handle": "acmeworks", "followers": 12907, "following": 0}))],
             [["48213"], ["12907"]],
             "acmeworks has 48,213 followers on Twitter and 12,907 on LinkedIn.")
BATCH.answer(["cloud.list_instances", "cloud.stop_instance", "dns.list_records", "dns.create_record"],
             [user("帮我看看 us-east-1 里现在有哪些实例在运行，顺便查一下 example.org 的 A 记录指向哪里。"),
              ran(("cloud.list_instances", {"region": "us-east-1", "state": "running"},
                   {"region": "us-east-1", "instances": [
                       {"id": "i-0f3a9b21", "name": "api-1", "type": "m5.large", "state": "running", "public_ip": "54.210.33.7"},
                       {"id": "i-07c4d812", "name": "worker-1", "type": "t3.medium", "state": "running", "public_ip": "3.91.120.44"}]}),
                  ("dns.list_records", {"zone": "example.org", "record_type": "A"},
                   {"zone": "example.org", "records": [
                       {"name": "@", "type": "A", "value": "54.210.33.7", "ttl": 300},
                       {"name": "www", "type": "A", "value": "54.210.33.7", "ttl": 300}]}))],
             [["api-1", "i-0f3a9b21"], ["worker-1", "i-07c4d812"], ["54.210.33.7"]],
             "us-east-1 里有两台运行中的实例：api-1（i-0f3a9b21，m5.large，公网 IP 54.210.33.7）和 worker-1（i-07c4d812，t3.medium，"
             "公网 IP 3.91.120.44）。example.org 和 www.example.org 的 A 记录都指向 54.210.33.7，也就是 api-1。")
BATCH.answer(["hr.leave_balance", "hr.request_leave", "hr.get_payslip"],
             [user("我还有几天年假和病假？工号 E20417。"),
              ran(("hr.leave_balance", {"employee_id": "E20417"},
                   {"employee_id": "E20417", "year": 2025, "balances": {
                       "annual": {"entitled": 15, "used": 9.5, "remaining": 5.5},
                       "sick": {"entitled": 10, "used": 2, "remaining": 8},
                       "personal": {"entitled": 3, "used": 3, "remaining": 0}}}))],
             [["5.5"], ["8"]],
             "2025 年你的年假还剩 5.5 天（共 15 天，已用 9.5 天），病假还剩 8 天（共 10 天，已用 2 天）。")
# The results lead to another call.
BATCH.next_call(["git.list_pull_requests", "git.merge_pull_request", "git.create_issue"],
                [user("Squash-merge the open PR that dmitri-k opened on acme/web."),
                 ran(("git.list_pull_requests", {"repo": "acme/web", "author": "dmitri-k"},
                      {"repo": "acme/web", "pull_requests": [
                          {"number": 1297, "title": "Fix timezone bug in scheduler", "author": "dmitri-k", "base": "main",
                           "state": "open", "mergeable": True}]}))],
                ("git.merge_pull_request", {"repo": "acme/web", "number": 1297, "method": "squash"}))
BATCH.next_call(["social.schedule_post", "social.post", "social.follower_count"],
                [user("帮我定时在微博发一条“平安夜快乐！”，北京时间 2025 年 12 月 24 日晚上 8 点发。"),
                 ran(("social.schedule_post", {"platform": "weibo", "text": "平安夜快乐！", "publish_at": "2025-12-24 8:00 PM",
                                               "timezone": "Asia/Shanghai"},
                      Failed("invalid publish_at '2025-12-24 8:00 PM': expected YYYY-MM-DD HH:MM, 24-hour clock")))],
                ("social.schedule_post", {"platform": "weibo", "text": ["平安夜快乐！", "平安夜快乐!"], "publish_at": "2025-12-24 20:00",
                                          "timezone": "Asia/Shanghai"}))
# Follow-ups: a finished turn, then a new question.
BATCH.next_call(["tickets.create", "tickets.assign", "tickets.transition"],
                [user("Create a ticket in OPS: \"Rotate TLS certificates on edge proxies\", high priority, due 2026-01-15."),
                 ran(("tickets.create", {"project": "OPS", "summary": "Rotate TLS certificates on edge proxies", "priority": "high",
                                         "due_date": "2026-01-15"},
                      {"ticket_id": "OPS-733", "status": "to_do", "priority": "high", "due_date": "2026-01-15", "assignee": None})),
                 said("Created OPS-733 \"Rotate TLS certificates on edge proxies\" (high priority, due 2026-01-15); it's unassigned and in To Do."),
                 user("Great, assign it to priya.n.")],
                ("tickets.assign", {"ticket_id": "OPS-733", "assignee": "priya.n"}))
BATCH.answer(["pkg.latest_version", "pkg.dependencies", "git.create_release"],
             [user("What are the latest versions of fastapi and pydantic on PyPI?"),
              ran(("pkg.latest_version", {"name": "fastapi", "registry": "pypi"},
                   {"name": "fastapi", "registry": "pypi", "version": "0.118.0", "published": "2025-09-29", "requires_python": ">=3.8"}),
                  ("pkg.latest_version", {"name": "pydantic", "registry": "pypi"},
                   {"name": "pydantic", "registry": "pypi", "version": "2.12.3", "published": "2025-10-17", "requires_python": ">=3.9"})),
              said("fastapi is at 0.118.0 (published 2025-09-29) and pydantic at 2.12.3 (published 2025-10-17)."),
              user("Which of the two needs the newer Python, and which version?")],
             [["pydantic"], ["3.9"]],
             "pydantic: its latest release needs Python 3.9 or newer, while fastapi 0.118.0 still supports 3.8.")
