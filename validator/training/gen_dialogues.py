#!/usr/bin/env python3
"""Dialogue-simulation data generator for the change-intent head (same / modify / switch).

Simulates multi-turn chat sessions: a persona-driven user (terse, verbose, typo-prone,
code-mixing, polite, blunt, neutral) pursues a goal with attributes (trip, support ticket,
coding problem, document rewrite, shopping, small talk, live data, health/legal question,
cooking, finance, study, fitness, trivia). Each user turn is a structured act
(question type + slot values + requirements + surface decoration) so it can be re-rendered
with exactly one thing changed. The assistant answers every turn in 1-3 sentences.

Pairs are then derived from the sessions: the cached request is a session prefix ending with
an assistant answer; the new request is (usually) the same earlier turns with an edited last
user turn, sometimes a continuation, sometimes another session's context.

    python3 validator/training/gen_dialogues.py --out /tmp/dialogues.jsonl --seed 11

Standard library only; deterministic for a given seed; `generate(seed)` returns the records.
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import re
import string
import sys
from collections import Counter

TARGET_RECORDS = 8000
LABEL_SHARE = (("same", 0.40), ("modify", 0.35), ("switch", 0.25))
MAX_CONTEXT = 8          # earlier messages before the last user turn of "new"

# ----------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------
_FMT = string.Formatter()


def placeholders(tpl: str) -> list[str]:
    return [f for _, f, _, _ in _FMT.parse(tpl) if f]


def wchoice(rng: random.Random, items):
    """items: list of (value, weight)."""
    total = sum(w for _, w in items)
    x = rng.random() * total
    for v, w in items:
        x -= w
        if x < 0:
            return v
    return items[-1][0]


EN_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
            "eighteen", "nineteen", "twenty"]
ZD = "零一二三四五六七八九"


def _zh_under10k(m: int) -> str:
    out, zero, started = "", False, False
    for u, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d, m = divmod(m, u)
        if d:
            if zero and started:
                out += "零"
            out += ZD[d] + name
            zero, started = False, True
        elif started:
            zero = True
    return out


def zh_num(n: int) -> str:
    if n == 2:
        return "两"
    if n < 10:
        return ZD[n]
    if n < 20:
        return "十" + (ZD[n % 10] if n % 10 else "")
    if n >= 100000000:
        return str(n)
    if n < 10000:
        s = _zh_under10k(n)
    else:
        w, r = divmod(n, 10000)
        s = _zh_under10k(w) + "万"
        if r:
            if r < 1000:
                s += "零"
            s += _zh_under10k(r)
    if s.startswith("一十"):
        s = s[1:]
    if len(s) > 1 and s[0] == "二" and s[1] in "百千万":
        s = "两" + s[1:]
    return s


def vtxt(v, lang: str, numz: bool = False) -> str:
    """Render one slot value in a language (tuples are (en, zh[, fact_en, fact_zh]))."""
    if isinstance(v, tuple):
        return v[0] if lang == "en" else v[1]
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        if numz:
            if lang == "en":
                return EN_WORDS[v] if 0 <= v <= 20 else str(v)
            return zh_num(v)
        return str(v)
    if isinstance(v, float):
        return "%g" % v
    return str(v)


def cap_first(s: str) -> str:
    for i, c in enumerate(s):
        if c.isalpha():
            return s[:i] + c.upper() + s[i + 1:] if c.islower() else s
        if not (c.isspace() or c in "\"'(“"):
            return s
    return s


_ARTICLE = re.compile(r"\b([Aa]) (?=(?!one\b|one-|use|uni|UTF|US\b|USB|Usmile)[aeiouAEIOU]|8|11\b|11-|18\b|18-)")


def fix_articles(s: str) -> str:
    """English only: "a air fryer" -> "an air fryer", "a 8-day trip" -> "an 8-day trip"."""
    return _ARTICLE.sub(lambda m: m.group(1) + "n ", s)


def low_first(s: str) -> str:
    if s.startswith(("I ", "I'", "I’")) or len(s) < 2:
        return s
    if s[0].isupper() and s[1].islower():
        return s[0].lower() + s[1:]
    return s


# ----------------------------------------------------------------------------------------
# value pools: (en, zh) pairs unless language-neutral
# ----------------------------------------------------------------------------------------
CITY = [("Kyoto", "京都"), ("Tokyo", "东京"), ("Osaka", "大阪"), ("Seoul", "首尔"), ("Bangkok", "曼谷"),
        ("Singapore", "新加坡"), ("Bali", "巴厘岛"), ("Paris", "巴黎"), ("Rome", "罗马"),
        ("Barcelona", "巴塞罗那"), ("Lisbon", "里斯本"), ("London", "伦敦"), ("Prague", "布拉格"),
        ("Vienna", "维也纳"), ("Istanbul", "伊斯坦布尔"), ("Dubai", "迪拜"), ("New York", "纽约"),
        ("Vancouver", "温哥华"), ("Sydney", "悉尼"), ("Chengdu", "成都"), ("Xi'an", "西安"),
        ("Hong Kong", "香港"), ("Reykjavik", "雷克雅未克"), ("Cape Town", "开普敦"), ("Hanoi", "河内"),
        ("Amsterdam", "阿姆斯特丹"), ("Shanghai", "上海"), ("Beijing", "北京"), ("Hangzhou", "杭州"),
        ("Guangzhou", "广州"), ("Shenzhen", "深圳")]
WHEN = [("March", "三月"), ("April", "四月"), ("May", "五月"), ("June", "六月"), ("July", "七月"),
        ("August", "八月"), ("September", "九月"), ("October", "十月"), ("November", "十一月"),
        ("December", "十二月"), ("January", "一月"), ("February", "二月"), ("early spring", "早春"),
        ("late autumn", "深秋"), ("the Christmas holidays", "圣诞假期"), ("Golden Week", "黄金周"),
        ("Chinese New Year", "春节"), ("the rainy season", "雨季"), ("midsummer", "盛夏"),
        ("the first week of October", "十月第一周"), ("the National Day holiday", "国庆假期")]
DAY = [("today", "今天"), ("tonight", "今晚"), ("tomorrow", "明天"), ("tomorrow morning", "明天早上"),
       ("tomorrow evening", "明天晚上"), ("the day after tomorrow", "后天"), ("this weekend", "这个周末"),
       ("next weekend", "下个周末"), ("on Monday", "周一"), ("on Tuesday", "周二"), ("on Wednesday", "周三"),
       ("on Thursday", "周四"), ("on Friday", "周五"), ("on Saturday", "周六"), ("on Sunday", "周日"),
       ("next Monday", "下周一"), ("this afternoon", "今天下午"), ("this evening", "今天傍晚"),
       ("next week", "下周"), ("on New Year's Day", "元旦那天"), ("over the holiday", "假期期间")]
INTEREST = [("food", "美食"), ("museums", "博物馆"), ("hiking", "徒步"), ("nightlife", "夜生活"),
            ("beaches", "海滩"), ("shopping", "购物"), ("history", "历史古迹"), ("architecture", "建筑"),
            ("photography", "摄影"), ("wine", "葡萄酒"), ("street art", "街头艺术"), ("temples", "寺庙"),
            ("local markets", "本地市集"), ("live music", "现场音乐"), ("cycling", "骑行"),
            ("coffee", "咖啡馆"), ("hot springs", "温泉"), ("theater", "戏剧演出"), ("gardens", "园林"),
            ("vintage shops", "古着店"), ("craft beer", "精酿啤酒")]
DAYS = list(range(2, 22))
PEOPLE = list(range(2, 22))
BUDGET = [800, 1000, 1200, 1500, 1800, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 6000, 7000, 8000,
          9000, 10000, 12000, 15000, 20000]

ORDER = ["#4821307", "#5530912", "#6619043", "#7002318", "#3391475", "#8120664", "#2058831", "#9416702",
         "#1187426", "#6043359", "#7731890", "#3905127", "#5268014", "#8872263", "#4410598", "#2976635",
         "#6350481", "#9083716", "#1624059", "#7519342", "#3048867", "#5791204"]
PRODUCT = [("wireless earbuds", "无线耳机"), ("coffee maker", "咖啡机"), ("air fryer", "空气炸锅"),
           ("desk lamp", "台灯"), ("phone case", "手机壳"), ("winter jacket", "冬季外套"),
           ("blender", "破壁机"), ("smartwatch", "智能手表"), ("office chair", "办公椅"),
           ("robot vacuum", "扫地机器人"), ("electric kettle", "电热水壶"), ("yoga mat", "瑜伽垫"),
           ("backpack", "双肩包"), ("bluetooth speaker", "蓝牙音箱"), ("hair dryer", "吹风机"),
           ("mechanical keyboard", "机械键盘"), ("rice cooker", "电饭煲"), ("running shoes", "跑鞋"),
           ("tablet", "平板电脑"), ("baby stroller", "婴儿推车"), ("microwave", "微波炉"), ("monitor", "显示器")]
PROBLEM = [("arrived broken", "到货就是坏的"), ("won't turn on", "开不了机"), ("is missing parts", "少了零件"),
           ("came in the wrong color", "颜色发错了"), ("is the wrong size", "尺码不对"),
           ("stopped working after a week", "用了一周就坏了"), ("makes a loud noise", "有很大的异响"),
           ("doesn't charge", "充不进电"), ("has a scratch on the screen", "屏幕上有划痕"),
           ("smells like burning plastic", "有一股烧塑料的味道"), ("was never delivered", "一直没送到"),
           ("leaks water", "漏水"), ("keeps disconnecting", "老是断连"), ("overheats", "发热严重"),
           ("came without a manual", "没有附说明书"), ("was already opened", "包装被拆过"),
           ("has a cracked handle", "把手裂了"), ("doesn't match the photos", "和图片不一样"),
           ("shows an error code", "一直显示错误代码"), ("was delivered to the wrong address", "被送到了错误的地址")]
OUTCOME = [("a full refund", "全额退款"), ("a partial refund", "部分退款"), ("a replacement", "换新"),
           ("a repair", "维修"), ("store credit", "店铺余额补偿"), ("an exchange for another color", "换颜色"),
           ("an exchange for a bigger size", "换大一码"), ("an exchange for a smaller size", "换小一码"),
           ("a return label", "退货面单"), ("a technician visit", "上门检修"),
           ("a discount on my next order", "下次购物折扣"), ("a gift card", "礼品卡补偿"),
           ("free express reshipping", "免费加急补发"), ("an order cancellation", "取消订单"),
           ("a refund to my original card", "原路退款"), ("a price adjustment", "差价补偿"),
           ("a warranty claim", "保修服务"), ("an upgrade to the newer model", "升级换新款"),
           ("a pickup from my home", "上门取件"), ("compensation for the delay", "延误赔偿")]

LIBS = {"Python": ["pandas", "NumPy", "requests", "Django", "Flask", "FastAPI", "PyTorch", "SQLAlchemy",
                   "scikit-learn", "Celery"],
        "JavaScript": ["React", "Express", "Vue", "Axios", "Lodash", "Next.js"],
        "TypeScript": ["Angular", "NestJS", "Prisma", "React"],
        "Java": ["Spring Boot", "Hibernate", "JUnit", "Jackson"],
        "Go": ["Gin", "GORM", "Cobra"],
        "Rust": ["Tokio", "Serde", "Actix Web", "Diesel"],
        "Ruby": ["Rails", "Sidekiq", "RSpec"],
        "PHP": ["Laravel", "Symfony", "Guzzle"],
        "Kotlin": ["Ktor", "Exposed"],
        "C#": ["ASP.NET Core", "Entity Framework"]}
CODE_LANG = list(LIBS)
LANGUAGE = ["Python", "JavaScript", "TypeScript", "Java", "Go", "Rust", "C++", "C#", "Kotlin", "Swift",
            "Ruby", "PHP", "Scala", "R", "Julia", "Dart", "Elixir", "Haskell", "Lua", "Perl", "C"]
VERSION = ["1.2", "1.5", "2.0", "2.1", "2.3", "3.0", "3.1", "3.2", "3.8", "3.11", "4.0", "4.2", "5.0",
           "5.1", "16.0", "17.2", "18.3", "0.9", "0.12", "6.4"]
ERROR = [("a connection timeout", "连接超时"), ("an out-of-memory error", "内存溢出"),
         ("a 'module not found' error", "找不到模块的错误"), ("a dependency version conflict", "依赖版本冲突"),
         ("a CORS error", "跨域（CORS）错误"), ("an SSL certificate error", "SSL证书错误"),
         ("a deadlock under load", "高并发下死锁"), ("a null pointer error", "空指针错误"),
         ("a UTF-8 decoding error", "UTF-8解码错误"), ("a permission denied error", "权限不足的错误"),
         ("a stack overflow", "栈溢出"), ("a type mismatch error", "类型不匹配的错误"),
         ("a 'too many open files' error", "“打开文件过多”的错误"), ("a circular import error", "循环导入错误"),
         ("a race condition", "竞态条件问题"), ("a serialization error", "序列化错误"),
         ("a 404 on every route", "所有路由都返回404"), ("a memory leak", "内存泄漏"),
         ("a build failure after upgrading", "升级后编译失败"), ("an authentication error", "认证失败的错误")]
TASK = [("read a CSV file", "读取CSV文件"), ("parse JSON", "解析JSON"),
        ("make an HTTP request with retries", "发带重试的HTTP请求"), ("sort records by date", "按日期排序记录"),
        ("write unit tests", "写单元测试"), ("connect to PostgreSQL", "连接PostgreSQL"), ("upload a file", "上传文件"),
        ("set a request timeout", "设置请求超时"), ("paginate results", "实现分页"), ("cache responses", "缓存响应结果"),
        ("log to a file", "把日志写到文件"), ("parse command-line arguments", "解析命令行参数"),
        ("read environment variables", "读取环境变量"), ("schedule a periodic job", "设置定时任务"),
        ("stream a large file", "流式处理大文件"), ("validate an email address", "校验邮箱地址"),
        ("hash a password", "对密码做哈希"), ("send an email", "发送邮件"), ("deduplicate records", "给记录去重"),
        ("run tasks in parallel", "并行执行任务"), ("read an Excel sheet", "读取Excel表格")]

DOC = [("cover letter", "求职信"), ("resignation email", "辞职邮件"), ("product description", "产品介绍"),
       ("wedding speech", "婚礼致辞"), ("LinkedIn summary", "领英个人简介"), ("apology email", "道歉邮件"),
       ("project proposal", "项目提案"), ("meeting summary", "会议纪要"), ("blog intro", "博客开头"),
       ("press release", "新闻稿"), ("thank-you note", "感谢信"), ("complaint letter", "投诉信"),
       ("grant abstract", "基金申请摘要"), ("job posting", "招聘启事"), ("personal bio", "个人简介"),
       ("reference letter", "推荐信"), ("sales pitch", "销售话术"), ("newsletter", "会员通讯"),
       ("app store description", "应用商店介绍"), ("farewell message", "告别留言"), ("year-end review", "年终总结")]
TONE = [("formal", "正式"), ("casual", "随意"), ("friendly", "亲切"), ("professional", "专业"),
        ("persuasive", "有说服力"), ("enthusiastic", "热情"), ("empathetic", "体贴"), ("confident", "自信"),
        ("humble", "谦虚"), ("playful", "俏皮"), ("neutral", "中立"), ("warm", "温暖"), ("authoritative", "权威"),
        ("apologetic", "诚恳"), ("optimistic", "乐观"), ("diplomatic", "委婉"), ("witty", "幽默"),
        ("sincere", "真诚"), ("urgent", "紧迫"), ("calm", "平和")]
LENGTH = [50, 80, 100, 120, 150, 180, 200, 250, 300, 350, 400, 450, 500, 600, 700, 800, 1000, 1200, 1500, 2000]
AUDIENCE = [("my manager", "我的领导"), ("investors", "投资人"), ("new customers", "新客户"), ("teenagers", "青少年"),
            ("hiring managers", "招聘经理"), ("grant reviewers", "基金评审"), ("the board", "董事会"),
            ("my team", "我的团队"), ("a professor", "教授"), ("retirees", "退休人群"), ("parents", "家长"),
            ("engineers", "工程师"), ("clients in Japan", "日本客户"), ("beginners", "新手"),
            ("journalists", "记者"), ("my landlord", "我的房东"), ("donors", "捐赠人"), ("students", "学生"),
            ("senior executives", "高管"), ("an angry customer", "一位生气的客户")]
HLANG = [("English", "英文"), ("Chinese", "中文"), ("French", "法语"), ("German", "德语"), ("Spanish", "西班牙语"),
         ("Japanese", "日语"), ("Korean", "韩语"), ("Italian", "意大利语"), ("Portuguese", "葡萄牙语"),
         ("Russian", "俄语"), ("Arabic", "阿拉伯语"), ("Dutch", "荷兰语"), ("Swedish", "瑞典语"),
         ("Turkish", "土耳其语"), ("Vietnamese", "越南语"), ("Thai", "泰语"), ("Indonesian", "印尼语"),
         ("Polish", "波兰语"), ("Hindi", "印地语"), ("Greek", "希腊语")]

CATEGORY = [("laptop", "笔记本电脑"), ("robot vacuum", "扫地机器人"), ("portable projector", "便携投影仪"),
            ("espresso machine", "意式咖啡机"), ("noise-cancelling headset", "降噪耳机"),
            ("office chair", "办公椅"), ("air purifier", "空气净化器"), ("e-reader", "电子书阅读器"),
            ("mechanical keyboard", "机械键盘"), ("smartwatch", "智能手表"), ("blender", "破壁机"),
            ("tent", "帐篷"), ("monitor", "显示器"), ("router", "路由器"), ("action camera", "运动相机"),
            ("air fryer", "空气炸锅"), ("gaming mouse", "游戏鼠标"), ("rice cooker", "电饭煲"),
            ("tablet", "平板电脑"), ("electric toothbrush", "电动牙刷"), ("dehumidifier", "除湿机")]
_B = {"laptop": "Dell 戴尔|Lenovo 联想|Apple 苹果|Asus 华硕",
      "robot vacuum": "Roborock 石头|Ecovacs 科沃斯|iRobot iRobot|Dreame 追觅",
      "portable projector": "XGIMI 极米|Epson 爱普生|Dangbei 当贝",
      "espresso machine": "Breville 铂富|De'Longhi 德龙|Philips 飞利浦",
      "noise-cancelling headset": "Sony 索尼|Bose Bose|Apple 苹果|Huawei 华为",
      "office chair": "Herman_Miller 赫曼米勒|Steelcase 世楷|Ikea 宜家",
      "air purifier": "Dyson 戴森|Xiaomi 小米|Philips 飞利浦|Blueair 布鲁雅尔",
      "e-reader": "Kindle Kindle|Kobo Kobo|Boox 文石",
      "mechanical keyboard": "Keychron Keychron|Logitech 罗技|Razer 雷蛇",
      "smartwatch": "Apple 苹果|Garmin 佳明|Huawei 华为|Samsung 三星",
      "blender": "Vitamix 维他密斯|Joyoung 九阳|Ninja Ninja",
      "tent": "MSR MSR|Naturehike 挪客|Coleman 科尔曼",
      "monitor": "Dell 戴尔|LG LG|Samsung 三星",
      "router": "TP-Link TP-Link|Asus 华硕|Xiaomi 小米",
      "action camera": "GoPro GoPro|DJI 大疆|Insta360 影石",
      "air fryer": "Philips 飞利浦|Ninja Ninja|Midea 美的",
      "gaming mouse": "Logitech 罗技|Razer 雷蛇|SteelSeries 赛睿",
      "rice cooker": "Zojirushi 象印|Tiger 虎牌|Midea 美的",
      "tablet": "Apple 苹果|Samsung 三星|Huawei 华为|Xiaomi 小米",
      "electric toothbrush": "Oral-B 欧乐B|Philips 飞利浦|Usmile 笑容加",
      "dehumidifier": "Midea 美的|Deerma 德尔玛|Gree 格力"}
BRANDS = {k: [tuple(x.replace("_", " ") for x in b.split(" ")) for b in v.split("|")] for k, v in _B.items()}
PRICE = [50, 80, 100, 150, 200, 250, 300, 400, 500, 600, 700, 800, 1000, 1200, 1500, 1800, 2000, 2500, 3000, 4000]
FEATURE = [("long battery life", "续航长"), ("a quiet motor", "噪音小"), ("waterproofing", "防水"),
           ("a large capacity", "容量大"), ("fast charging", "支持快充"), ("app control", "能用App控制"),
           ("a lightweight design", "轻便"), ("a long warranty", "保修时间长"), ("easy cleaning", "好清洗"),
           ("a high-resolution screen", "屏幕分辨率高"), ("voice control", "支持语音控制"),
           ("wireless connectivity", "支持无线连接"), ("a compact size", "体积小"), ("energy efficiency", "省电"),
           ("a replaceable filter", "滤网可更换"), ("good cushioning", "缓震好"), ("a long cable", "线够长"),
           ("dual-band Wi-Fi", "支持双频WiFi"), ("image stabilization", "防抖好"), ("a timer function", "有定时功能")]
USE = [("gaming", "打游戏"), ("travel", "出差旅行"), ("a small apartment", "小户型家庭"), ("working from home", "居家办公"),
       ("a family of four", "四口之家"), ("students", "学生党"), ("marathon training", "马拉松训练"),
       ("video editing", "剪视频"), ("a pet owner", "养宠物的家庭"), ("outdoor use", "户外使用"),
       ("daily commuting", "日常通勤"), ("an elderly parent", "家里老人"), ("beginners", "新手"),
       ("a home office", "家庭办公室"), ("photography", "拍照"), ("a dorm room", "宿舍"),
       ("allergy sufferers", "过敏体质的人"), ("heavy daily use", "高强度日常使用"), ("kids", "小孩"), ("a gift", "送礼")]

SUBJECT = [("cats", "猫"), ("the ocean", "大海"), ("coffee", "咖啡"), ("Mondays", "周一"), ("octopuses", "章鱼"),
           ("the Moon", "月亮"), ("pizza", "披萨"), ("penguins", "企鹅"), ("autumn", "秋天"), ("trains", "火车"),
           ("honey", "蜂蜜"), ("volcanoes", "火山"), ("dogs", "狗"), ("rainy days", "下雨天"), ("bicycles", "自行车"),
           ("libraries", "图书馆"), ("chess", "国际象棋"), ("bees", "蜜蜂"), ("the stars", "星星"), ("snow", "雪"),
           ("robots", "机器人"), ("programmers", "程序员")]
LINES = list(range(4, 24))

COMPANY = [("Apple", "苹果"), ("Tesla", "特斯拉"), ("Nvidia", "英伟达"), ("Microsoft", "微软"), ("Alibaba", "阿里巴巴"),
           ("Tencent", "腾讯"), ("Amazon", "亚马逊"), ("Meta", "Meta"), ("BYD", "比亚迪"), ("Toyota", "丰田"),
           ("Samsung", "三星"), ("Netflix", "奈飞"), ("Intel", "英特尔"), ("AMD", "AMD"), ("Xiaomi", "小米"),
           ("Baidu", "百度"), ("Sony", "索尼"), ("Nike", "耐克"), ("Disney", "迪士尼"), ("Boeing", "波音"),
           ("Moutai", "贵州茅台")]
CURRENCY = [("US dollars", "美元"), ("euros", "欧元"), ("Japanese yen", "日元"), ("British pounds", "英镑"),
            ("Chinese yuan", "人民币"), ("Hong Kong dollars", "港币"), ("Korean won", "韩元"),
            ("Swiss francs", "瑞士法郎"), ("Canadian dollars", "加元"), ("Australian dollars", "澳元"),
            ("Singapore dollars", "新加坡元"), ("Thai baht", "泰铢"), ("Indian rupees", "印度卢比"),
            ("Mexican pesos", "墨西哥比索"), ("Brazilian reais", "巴西雷亚尔"), ("Swedish kronor", "瑞典克朗"),
            ("Turkish lira", "土耳其里拉"), ("New Zealand dollars", "新西兰元"), ("Malaysian ringgit", "马来西亚林吉特"),
            ("Russian rubles", "俄罗斯卢布")]
AMOUNT = [50, 100, 200, 250, 300, 500, 800, 1000, 1500, 2000, 2500, 3000, 5000, 8000, 10000, 12000, 15000,
          20000, 50000, 100000]
TEAM = [("the Lakers", "湖人"), ("the Warriors", "勇士"), ("the Celtics", "凯尔特人"), ("Real Madrid", "皇马"),
        ("Barcelona", "巴萨"), ("Manchester United", "曼联"), ("Liverpool", "利物浦"), ("Bayern Munich", "拜仁"),
        ("the Yankees", "洋基队"), ("the Dodgers", "道奇队"), ("Arsenal", "阿森纳"), ("Chelsea", "切尔西"),
        ("Juventus", "尤文图斯"), ("Inter Milan", "国际米兰"), ("PSG", "巴黎圣日耳曼"), ("the Chiefs", "酋长队"),
        ("the Guangdong Southern Tigers", "广东宏远"), ("Shanghai Port", "上海海港"), ("the Knicks", "尼克斯"),
        ("the Bulls", "公牛")]

SYMPTOM = [("a headache", "头疼"), ("a sore throat", "嗓子疼"), ("lower back pain", "腰疼"), ("a dry cough", "干咳"),
           ("dizziness", "头晕"), ("stomach cramps", "胃痉挛"), ("a rash on my arm", "胳膊上起疹子"),
           ("knee pain", "膝盖疼"), ("trouble sleeping", "失眠"), ("a stuffy nose", "鼻塞"), ("heartburn", "烧心"),
           ("itchy eyes", "眼睛痒"), ("a low fever", "低烧"), ("ringing in my ears", "耳鸣"),
           ("numb fingers", "手指发麻"), ("a toothache", "牙疼"),
           ("shortness of breath on the stairs", "爬楼梯时喘不上气"), ("swollen ankles", "脚踝肿"),
           ("chest tightness", "胸闷"), ("diarrhea", "拉肚子"), ("a stiff neck", "脖子僵硬")]
DURATION = list(range(2, 22))
DRUG = [("ibuprofen", "布洛芬"), ("paracetamol", "对乙酰氨基酚"), ("aspirin", "阿司匹林"), ("amoxicillin", "阿莫西林"),
        ("loratadine", "氯雷他定"), ("cetirizine", "西替利嗪"), ("omeprazole", "奥美拉唑"), ("metformin", "二甲双胍"),
        ("melatonin", "褪黑素"), ("vitamin D", "维生素D"), ("naproxen", "萘普生"), ("montelukast", "孟鲁司特"),
        ("azithromycin", "阿奇霉素"), ("diphenhydramine", "苯海拉明"), ("famotidine", "法莫替丁"),
        ("prednisone", "泼尼松"), ("simvastatin", "辛伐他汀"), ("amlodipine", "氨氯地平"),
        ("levothyroxine", "左甲状腺素"), ("dextromethorphan", "右美沙芬")]
CONDITION = [("a fever", "发烧"), ("a migraine", "偏头痛"), ("period cramps", "痛经"), ("a toothache", "牙疼"),
             ("hay fever", "花粉过敏"), ("acid reflux", "胃酸反流"), ("a cold", "感冒"), ("muscle pain", "肌肉酸痛"),
             ("insomnia", "失眠"), ("a sinus infection", "鼻窦炎"), ("an ear infection", "中耳炎"), ("hives", "荨麻疹"),
             ("arthritis pain", "关节炎疼痛"), ("a sore throat", "咽喉痛"), ("back pain", "背痛"),
             ("a sprained ankle", "脚踝扭伤"), ("a hangover", "宿醉头痛"), ("jet lag", "倒时差"), ("a cough", "咳嗽"),
             ("motion sickness", "晕车")]
AGE = [3, 5, 6, 8, 10, 12, 14, 16, 18, 25, 30, 35, 40, 45, 50, 60, 65, 70, 75, 80]
ACTION = [("raise the rent", "涨房租"), ("enter my apartment", "进我的房间"), ("keep my deposit", "扣我的押金"),
          ("evict me", "把我赶走"), ("change the locks", "换锁"), ("turn off the heating", "停暖气"),
          ("sell the apartment", "把房子卖掉"), ("ban guests", "不让我带客人"), ("charge a cleaning fee", "收清洁费"),
          ("cut off the internet", "断网"), ("ask me to move out early", "让我提前搬走"),
          ("remove my belongings", "清走我的东西"), ("add a new roommate", "塞进一个新室友"),
          ("refuse to fix the water heater", "拒绝修热水器"), ("install a camera in the hallway", "在走廊装摄像头"),
          ("ban my cat", "不让我养猫"), ("charge a late fee", "收滞纳金"), ("end the lease", "终止租约"),
          ("increase the deposit", "加押金"), ("shut off the water", "停水")]
REGION = [("California", "加州"), ("Texas", "德州"), ("New York State", "纽约州"), ("Ontario", "安大略省"),
          ("England", "英格兰"), ("Scotland", "苏格兰"), ("Germany", "德国"), ("France", "法国"),
          ("Singapore", "新加坡"), ("Hong Kong", "香港"), ("Shanghai", "上海"), ("Beijing", "北京"),
          ("Shenzhen", "深圳"), ("Australia", "澳大利亚"), ("Japan", "日本"), ("Ireland", "爱尔兰"),
          ("the Netherlands", "荷兰"), ("British Columbia", "不列颠哥伦比亚省"), ("Florida", "佛罗里达州"),
          ("Quebec", "魁北克")]
LEGAL_TASK = [("file a small claims case", "打小额诉讼"), ("get divorced", "办离婚"), ("write a will", "立遗嘱"),
              ("register a small business", "注册一家小公司"), ("contest a parking ticket", "申诉停车罚单"),
              ("break a lease", "提前解除租约"), ("sue my former employer for unpaid wages", "起诉前雇主拖欠工资"),
              ("change my name", "改名字"), ("buy an apartment", "买房"), ("set up a trust", "设立信托"),
              ("dispute a credit card charge", "对信用卡扣款提出争议"), ("adopt a child", "领养孩子"),
              ("sign a prenup", "签婚前协议"), ("apply for a work visa", "申请工作签证"),
              ("report my landlord", "投诉房东"), ("get a restraining order", "申请禁止令"),
              ("register a trademark", "注册商标"), ("settle an inheritance", "办遗产继承"),
              ("fight a speeding ticket", "申诉超速罚单"), ("recover a deposit", "追回押金")]

DISH = [("beef stew", "红烧牛肉"), ("mapo tofu", "麻婆豆腐"), ("lasagna", "千层面"), ("dumplings", "饺子"),
        ("chicken curry", "咖喱鸡"), ("banana bread", "香蕉面包"), ("fried rice", "炒饭"), ("pad thai", "泰式炒河粉"),
        ("tiramisu", "提拉米苏"), ("ramen", "拉面"), ("paella", "西班牙海鲜饭"), ("kung pao chicken", "宫保鸡丁"),
        ("pancakes", "松饼"), ("braised pork belly", "红烧肉"), ("risotto", "意式烩饭"), ("shakshuka", "北非蛋"),
        ("hot pot", "火锅"), ("apple pie", "苹果派"), ("steamed fish", "清蒸鱼"), ("carbonara", "培根蛋酱意面"),
        ("tomato and egg stir-fry", "西红柿炒鸡蛋")]
INGREDIENT = [("butter", "黄油"), ("eggs", "鸡蛋"), ("soy sauce", "生抽"), ("heavy cream", "淡奶油"), ("sugar", "白糖"),
              ("flour", "面粉"), ("garlic", "大蒜"), ("milk", "牛奶"), ("cooking wine", "料酒"), ("cornstarch", "淀粉"),
              ("onion", "洋葱"), ("chili", "辣椒"), ("sesame oil", "香油"), ("parmesan", "帕玛森奶酪"), ("ginger", "姜"),
              ("honey", "蜂蜜"), ("rice vinegar", "米醋"), ("yogurt", "酸奶"), ("baking powder", "泡打粉"),
              ("tomato paste", "番茄膏")]
AMOUNT_F = [1000, 2000, 3000, 5000, 8000, 10000, 12000, 15000, 20000, 25000, 30000, 40000, 50000, 60000, 80000,
            100000, 150000, 200000, 300000, 500000]
RATE = [1.5, 2, 2.5, 3, 3.2, 3.5, 4, 4.5, 4.8, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 10, 12]
YEARS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 18, 20, 25, 30, 35, 40]
CONCEPT = [("photosynthesis", "光合作用"), ("compound interest", "复利"), ("recursion", "递归"),
           ("supply and demand", "供求关系"), ("the Pythagorean theorem", "勾股定理"), ("black holes", "黑洞"),
           ("inflation", "通货膨胀"), ("natural selection", "自然选择"), ("Bayes' theorem", "贝叶斯定理"),
           ("the French Revolution", "法国大革命"), ("machine learning", "机器学习"), ("DNA replication", "DNA复制"),
           ("plate tectonics", "板块构造"), ("derivatives in calculus", "微积分里的导数"), ("blockchain", "区块链"),
           ("the water cycle", "水循环"), ("opportunity cost", "机会成本"), ("quantum entanglement", "量子纠缠"),
           ("the immune system", "免疫系统"), ("Newton's third law", "牛顿第三定律")]
LEVEL = [("a five-year-old", "五岁小孩"), ("a ten-year-old", "十岁的孩子"), ("a middle school student", "初中生"),
         ("a high school student", "高中生"), ("a first-year undergrad", "大一新生"), ("a grad student", "研究生"),
         ("a complete beginner", "零基础的人"), ("my grandmother", "我奶奶"), ("a software engineer", "程序员"),
         ("a business major", "商科学生"), ("a nurse", "护士"), ("an art student", "美术生"),
         ("a busy executive", "忙碌的高管"), ("a history teacher", "历史老师"), ("a non-native speaker", "非母语者"),
         ("someone with a math background", "有数学基础的人"), ("a visual learner", "喜欢看图理解的人"),
         ("a curious teenager", "好奇的青少年"), ("a retired engineer", "退休工程师"), ("a journalist", "记者")]
NQ = list(range(3, 23))
GOAL_F = [("run a 5K", "跑完5公里"), ("run a half marathon", "跑完半马"), ("lose 5 kilos", "减掉5公斤"),
          ("do 10 pull-ups", "做到10个引体向上"), ("build upper-body strength", "练出上肢力量"),
          ("improve my flexibility", "提高柔韧性"), ("fix my posture", "改善体态"),
          ("get back in shape after an injury", "伤后恢复体能"), ("prepare for a hiking trip", "为徒步旅行做准备"),
          ("improve my squat", "提高深蹲水平"), ("build core strength", "练强核心"), ("tone my legs", "练出腿部线条"),
          ("swim 1 km without stopping", "不停歇游完1公里"), ("lower my resting heart rate", "降低静息心率"),
          ("gain muscle", "增肌"), ("improve my balance", "提高平衡能力"), ("hold a 3-minute plank", "平板支撑坚持3分钟"),
          ("cycle 100 km", "骑行100公里"), ("reduce back pain", "缓解腰背疼痛"), ("improve my vertical jump", "提高弹跳")]
WEEKS = list(range(2, 22))
MINUTES = [10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 90, 95, 100, 110, 120]

BOOK = [("Pride and Prejudice", "傲慢与偏见", "Jane Austen", "简·奥斯汀"),
        ("One Hundred Years of Solitude", "百年孤独", "Gabriel García Márquez", "加西亚·马尔克斯"),
        ("The Three-Body Problem", "三体", "Liu Cixin", "刘慈欣"),
        ("Dream of the Red Chamber", "红楼梦", "Cao Xueqin", "曹雪芹"),
        ("Nineteen Eighty-Four", "一九八四", "George Orwell", "乔治·奥威尔"),
        ("The Great Gatsby", "了不起的盖茨比", "F. Scott Fitzgerald", "菲茨杰拉德"),
        ("To Kill a Mockingbird", "杀死一只知更鸟", "Harper Lee", "哈珀·李"),
        ("The Little Prince", "小王子", "Antoine de Saint-Exupéry", "圣埃克苏佩里"),
        ("Norwegian Wood", "挪威的森林", "Haruki Murakami", "村上春树"),
        ("Fortress Besieged", "围城", "Qian Zhongshu", "钱钟书"),
        ("To Live", "活着", "Yu Hua", "余华"),
        ("The Old Man and the Sea", "老人与海", "Ernest Hemingway", "海明威"),
        ("Crime and Punishment", "罪与罚", "Fyodor Dostoevsky", "陀思妥耶夫斯基"),
        ("Jane Eyre", "简·爱", "Charlotte Brontë", "夏洛蒂·勃朗特"),
        ("The Catcher in the Rye", "麦田里的守望者", "J. D. Salinger", "塞林格"),
        ("Harry Potter and the Philosopher's Stone", "哈利·波特与魔法石", "J. K. Rowling", "J.K.罗琳"),
        ("The Kite Runner", "追风筝的人", "Khaled Hosseini", "卡勒德·胡赛尼"),
        ("Wolf Totem", "狼图腾", "Jiang Rong", "姜戎"),
        ("Sapiens", "人类简史", "Yuval Noah Harari", "尤瓦尔·赫拉利"),
        ("The Alchemist", "牧羊少年奇幻之旅", "Paulo Coelho", "保罗·柯艾略"),
        ("Frankenstein", "弗兰肯斯坦", "Mary Shelley", "玛丽·雪莱")]
FILM = [("Inception", "盗梦空间", "Christopher Nolan", "克里斯托弗·诺兰"),
        ("Spirited Away", "千与千寻", "Hayao Miyazaki", "宫崎骏"),
        ("Titanic", "泰坦尼克号", "James Cameron", "詹姆斯·卡梅隆"),
        ("Parasite", "寄生虫", "Bong Joon-ho", "奉俊昊"),
        ("The Godfather", "教父", "Francis Ford Coppola", "弗朗西斯·福特·科波拉"),
        ("Farewell My Concubine", "霸王别姬", "Chen Kaige", "陈凯歌"),
        ("Interstellar", "星际穿越", "Christopher Nolan", "克里斯托弗·诺兰"),
        ("In the Mood for Love", "花样年华", "Wong Kar-wai", "王家卫"),
        ("The Matrix", "黑客帝国", "the Wachowskis", "沃卓斯基姐妹"),
        ("Crouching Tiger, Hidden Dragon", "卧虎藏龙", "Ang Lee", "李安"),
        ("Forrest Gump", "阿甘正传", "Robert Zemeckis", "罗伯特·泽米吉斯"),
        ("The Wandering Earth", "流浪地球", "Frant Gwo", "郭帆"),
        ("Jurassic Park", "侏罗纪公园", "Steven Spielberg", "斯皮尔伯格"),
        ("Amélie", "天使爱美丽", "Jean-Pierre Jeunet", "让-皮埃尔·热内"),
        ("Coco", "寻梦环游记", "Lee Unkrich", "李·昂克里奇"),
        ("The Shawshank Redemption", "肖申克的救赎", "Frank Darabont", "弗兰克·德拉邦特"),
        ("Let the Bullets Fly", "让子弹飞", "Jiang Wen", "姜文"),
        ("Avatar", "阿凡达", "James Cameron", "詹姆斯·卡梅隆"),
        ("La La Land", "爱乐之城", "Damien Chazelle", "达米恩·查泽雷"),
        ("Your Name", "你的名字", "Makoto Shinkai", "新海诚")]
TCOMPANY = [("Apple", "苹果", "Steve Jobs, Steve Wozniak and Ronald Wayne", "乔布斯、沃兹尼亚克和韦恩"),
            ("Tesla", "特斯拉", "Martin Eberhard and Marc Tarpenning", "马丁·艾伯哈德和马克·塔彭宁"),
            ("Nvidia", "英伟达", "Jensen Huang, Chris Malachowsky and Curtis Priem", "黄仁勋、克里斯·马拉科夫斯基和柯蒂斯·普里姆"),
            ("Microsoft", "微软", "Bill Gates and Paul Allen", "比尔·盖茨和保罗·艾伦"),
            ("Alibaba", "阿里巴巴", "Jack Ma and his co-founders", "马云和其他联合创始人"),
            ("Tencent", "腾讯", "Pony Ma and his co-founders", "马化腾和其他联合创始人"),
            ("Amazon", "亚马逊", "Jeff Bezos", "杰夫·贝索斯"),
            ("Facebook", "脸书", "Mark Zuckerberg and his college roommates", "扎克伯格和他的大学室友们"),
            ("BYD", "比亚迪", "Wang Chuanfu", "王传福"),
            ("Toyota", "丰田", "Kiichiro Toyoda", "丰田喜一郎"),
            ("Samsung", "三星", "Lee Byung-chul", "李秉喆"),
            ("Netflix", "奈飞", "Reed Hastings and Marc Randolph", "里德·哈斯廷斯和马克·伦道夫"),
            ("Intel", "英特尔", "Robert Noyce and Gordon Moore", "罗伯特·诺伊斯和戈登·摩尔"),
            ("Xiaomi", "小米", "Lei Jun and his co-founders", "雷军和其他联合创始人"),
            ("Baidu", "百度", "Robin Li and Eric Xu", "李彦宏和徐勇"),
            ("Sony", "索尼", "Masaru Ibuka and Akio Morita", "井深大和盛田昭夫"),
            ("Nike", "耐克", "Phil Knight and Bill Bowerman", "菲尔·奈特和比尔·鲍尔曼"),
            ("Disney", "迪士尼", "Walt and Roy Disney", "华特·迪士尼和罗伊·迪士尼兄弟"),
            ("Boeing", "波音", "William Boeing", "威廉·波音"),
            ("Huawei", "华为", "Ren Zhengfei", "任正非"),
            ("Google", "谷歌", "Larry Page and Sergey Brin", "拉里·佩奇和谢尔盖·布林")]
COUNTRY = [("France", "法国", "Paris", "巴黎"), ("Australia", "澳大利亚", "Canberra", "堪培拉"),
           ("Canada", "加拿大", "Ottawa", "渥太华"), ("Brazil", "巴西", "Brasília", "巴西利亚"),
           ("Turkey", "土耳其", "Ankara", "安卡拉"), ("Kenya", "肯尼亚", "Nairobi", "内罗毕"),
           ("Vietnam", "越南", "Hanoi", "河内"), ("Switzerland", "瑞士", "Bern", "伯尔尼"),
           ("New Zealand", "新西兰", "Wellington", "惠灵顿"), ("Morocco", "摩洛哥", "Rabat", "拉巴特"),
           ("Norway", "挪威", "Oslo", "奥斯陆"), ("Argentina", "阿根廷", "Buenos Aires", "布宜诺斯艾利斯"),
           ("Egypt", "埃及", "Cairo", "开罗"), ("Indonesia", "印度尼西亚", "Jakarta", "雅加达"),
           ("Mongolia", "蒙古", "Ulaanbaatar", "乌兰巴托"), ("Peru", "秘鲁", "Lima", "利马"),
           ("Finland", "芬兰", "Helsinki", "赫尔辛基"), ("Nigeria", "尼日利亚", "Abuja", "阿布贾"),
           ("Kazakhstan", "哈萨克斯坦", "Astana", "阿斯塔纳"), ("Portugal", "葡萄牙", "Lisbon", "里斯本"),
           ("Thailand", "泰国", "Bangkok", "曼谷")]

POOLS = {
    "dest": CITY, "origin": CITY, "city": CITY, "when": WHEN, "day": DAY, "interest": INTEREST, "days": DAYS,
    "people": PEOPLE, "budget": BUDGET, "order": ORDER, "product": PRODUCT, "problem": PROBLEM,
    "outcome": OUTCOME, "language": LANGUAGE, "lang_b": LANGUAGE, "version": VERSION, "error": ERROR,
    "task": TASK, "doc": DOC, "tone": TONE, "length": LENGTH, "audience": AUDIENCE, "from_lang": HLANG,
    "to_lang": HLANG, "category": CATEGORY, "price": PRICE, "feature": FEATURE, "use": USE,
    "subject": SUBJECT, "lines": LINES, "company": COMPANY, "cur_a": CURRENCY, "cur_b": CURRENCY,
    "amount": AMOUNT, "team": TEAM, "symptom": SYMPTOM, "duration": DURATION, "drug": DRUG, "drug2": DRUG,
    "condition": CONDITION, "age": AGE, "action": ACTION, "region": REGION, "legal_task": LEGAL_TASK,
    "dish": DISH, "ingredient": INGREDIENT, "amount_f": AMOUNT_F, "rate": RATE, "years": YEARS,
    "concept": CONCEPT, "level": LEVEL, "nq": NQ, "goal_f": GOAL_F, "weeks": WEEKS, "minutes": MINUTES,
    "book": BOOK, "film": FILM, "tcompany": TCOMPANY, "country": COUNTRY,
}
# slots whose values must differ from each other inside one request
PARTNER = {"origin": "dest", "dest": "origin", "lang_b": "language", "language": "lang_b",
           "from_lang": "to_lang", "to_lang": "from_lang", "cur_a": "cur_b", "cur_b": "cur_a",
           "drug": "drug2", "drug2": "drug", "brand_a": "brand_b", "brand_b": "brand_a"}

# follow-up phrases: how a changed slot is said in "What about {p}?" / "那{p}呢？"
FP = {"days": ("for {v} days", "{v}天"), "people": ("for {v} people", "{v}个人"), "when": ("in {v}", "{v}"),
      "dest": ("in {v}", "{v}"), "origin": ("from {v}", "从{v}出发"), "interest": ("for {v}", "{v}"),
      "budget": ("with ${v}", "预算{v}元"), "day": ("{v}", "{v}"), "city": ("in {v}", "{v}"),
      "outcome": ("if I want {v}", "{v}"), "language": ("in {v}", "{v}"), "lang_b": ("in {v}", "{v}"),
      "version": ("for version {v}", "{v}版本"), "tone": ("in a {v} tone", "{v}的语气"),
      "audience": ("for {v}", "给{v}看"), "length": ("at {v} words", "{v}字"), "to_lang": ("into {v}", "{v}"),
      "price": ("under ${v}", "{v}元以内"), "feature": ("with {v}", "{v}的"), "use": ("for {v}", "{v}"),
      "subject": ("about {v}", "{v}"), "lines": ("with {v} lines", "{v}行"), "company": ("for {v}", "{v}"),
      "amount": ("for {v}", "{v}"), "cur_b": ("in {v}", "{v}"), "team": ("for {v}", "{v}"),
      "duration": ("if it's been {v} days", "{v}天"), "age": ("for a {v}-year-old", "{v}岁"),
      "region": ("in {v}", "{v}"), "dish": ("for {v}", "{v}"), "ingredient": ("for {v}", "{v}"),
      "years": ("over {v} years", "{v}年"), "rate": ("at {v}%", "{v}%"), "amount_f": ("for ${v}", "{v}元"),
      "level": ("for {v}", "给{v}讲"), "nq": ("with {v} questions", "{v}道题"), "weeks": ("over {v} weeks", "{v}周"),
      "minutes": ("with {v}-minute sessions", "每次{v}分钟"), "book": ("{v}", "《{v}》"), "film": ("{v}", "《{v}》"),
      "tcompany": ("{v}", "{v}"), "country": ("{v}", "{v}")}


# ----------------------------------------------------------------------------------------
# question types and domains
# ----------------------------------------------------------------------------------------
class Q:
    """One question type: templates (explicit, terse, pronoun forms) and reply templates.

    slots: what the explicit form mentions; ent: the slot a pronoun form leaves out;
    deps: goal slots the answer depends on although the explicit form need not say them;
    ctxfree: the explicit form is answerable without the conversation;
    pair: ordered slots whose swap is a direction flip; sym: slots whose swap changes nothing.
    """

    def __init__(self, name, slots, en, zh, ten=(), tzh=(), pen=(), pzh=(), ren=(), rzh=(), ent=None,
                 deps=(), ctxfree=False, reqs=False, pair=None, sym=None, follow=(), nochange=(),
                 later=True, partner=None, fp=None, compute=None):
        self.name, self.slots, self.ent = name, list(slots), ent
        self.tpl = {("explicit", "en"): list(en) + list(ten), ("explicit", "zh"): list(zh) + list(tzh),
                    ("pron", "en"): list(pen), ("pron", "zh"): list(pzh)}
        self.n_normal = {"en": len(en), "zh": len(zh)}
        self.ren, self.rzh = list(ren), list(rzh)
        self.deps, self.ctxfree, self.reqs = list(deps), ctxfree, reqs
        self.pair, self.sym, self.follow, self.nochange = pair, sym, list(follow), list(nochange)
        self.later, self.partner, self.fp, self.compute = later, partner, fp or {}, compute
        self.spec = None

    def all_slots(self):
        out = list(self.slots)
        for s in self.deps + ([self.ent] if self.ent else []):
            if s not in out:
                out.append(s)
        return out


class Spec:
    def __init__(self, name, domain, core, qs, open_qs, reqs=(), generic=(), topic=None, weight=1.0):
        self.name, self.domain, self.core = name, domain, list(core)
        self.qs = {q.name: q for q in qs}
        for q in qs:
            q.spec = self
        self.open_qs, self.reqs, self.generic = list(open_qs), list(reqs), list(generic)
        self.topic, self.weight = topic, weight


# requirement clauses: (en positive, en negated, zh positive, zh negated)
TRAVEL_REQS = [
    ("Include a cooking class.", "Don't include a cooking class.", "要安排一节烹饪课。", "不要安排烹饪课。"),
    ("We want to rent a car.", "We don't want to rent a car.", "我们打算租车。", "我们不打算租车。"),
    ("The hotels should have a pool.", "The hotels don't need a pool.", "酒店要带泳池。", "酒店不需要泳池。"),
    ("Add a day trip outside the city.", "No day trips outside the city.", "加一个城外一日游。", "不要安排城外一日游。"),
    ("We'd like to see a live show.", "We don't want to see any shows.", "我们想看一场演出。", "我们不想看演出。"),
    ("Breakfast should be included.", "Breakfast doesn't need to be included.", "要含早餐。", "不用含早餐。"),
    ("Plan some hiking.", "No hiking, please.", "安排点徒步。", "不要安排徒步。"),
    ("Include the main art museum.", "Skip the main art museum.", "要去主要的美术馆。", "不去主要的美术馆。"),
    ("We're traveling with a dog.", "We're not traveling with a dog.", "我们会带着狗。", "我们不带狗。"),
    ("Use public transport only.", "Don't rely on public transport.", "只坐公共交通。", "不要依赖公共交通。"),
    ("Early starts are fine.", "No early starts.", "早起出发没问题。", "不要太早出发。"),
    ("Include a beach day.", "No beach day.", "安排一天海边。", "不要安排海边。"),
    ("We want vegetarian restaurants.", "We don't need vegetarian restaurants.", "要找素食餐厅。", "不需要素食餐厅。"),
    ("Add some nightlife.", "Leave out nightlife.", "加点夜生活。", "不要安排夜生活。"),
    ("Stay in one hotel the whole time.", "Don't stay in one hotel the whole time.", "全程住同一家酒店。", "不要全程住同一家酒店。"),
    ("Include a guided tour.", "No guided tours.", "要有一次导游讲解。", "不要导游讲解。"),
    ("The hotel should be near the train station.", "The hotel doesn't have to be near the train station.", "酒店要靠近火车站。", "酒店不必靠近火车站。"),
    ("Add a spa afternoon.", "No spa visits.", "安排一个下午做SPA。", "不要安排SPA。"),
    ("One of us uses a wheelchair.", "None of us uses a wheelchair.", "我们当中有人坐轮椅。", "我们当中没有人坐轮椅。"),
    ("Travel between cities by train.", "Don't travel between cities by train.", "城市之间坐火车。", "城市之间不坐火车。"),
    ("Leave one rest day.", "Don't leave any rest days.", "留一天休息。", "不要留休息日。"),
]
SUPPORT_REQS = [
    ("I still have the original box.", "I no longer have the original box.", "原包装盒还在。", "原包装盒已经没了。"),
    ("I'd like to keep the accessories.", "I don't want to keep the accessories.", "配件我想留着。", "配件我不想留。"),
    ("Please contact me by email.", "Please don't contact me by email.", "请用邮件联系我。", "请不要用邮件联系我。"),
    ("I can drop it off at a store.", "I can't drop it off at a store.", "我可以送到门店。", "我没法送到门店。"),
    ("The item was a gift.", "The item wasn't a gift.", "这是别人送的礼物。", "这不是礼物。"),
    ("I paid with a credit card.", "I didn't pay with a credit card.", "我是用信用卡付的款。", "我不是用信用卡付的款。"),
    ("I've already tried a factory reset.", "I haven't tried a factory reset yet.", "我已经试过恢复出厂设置。", "我还没试过恢复出厂设置。"),
    ("I'm a premium member.", "I'm not a premium member.", "我是会员。", "我不是会员。"),
    ("It's still under warranty.", "It's no longer under warranty.", "还在保修期内。", "已经过了保修期。"),
    ("I've opened the package.", "I haven't opened the package.", "包装我已经拆了。", "包装我还没拆。"),
    ("I need it resolved before Friday.", "I don't need it resolved before Friday.", "周五前必须解决。", "不用赶在周五前解决。"),
    ("I'm available for a phone call.", "I'm not available for a phone call.", "可以给我打电话。", "不方便接电话。"),
    ("I bought it on sale.", "I didn't buy it on sale.", "我是打折时买的。", "我不是打折时买的。"),
    ("I have photos of the damage.", "I don't have photos of the damage.", "我拍了照片。", "我没有拍照片。"),
    ("This is my second complaint about it.", "This isn't a repeat complaint.", "这是我第二次投诉了。", "这不是重复投诉。"),
    ("I live in a rural area.", "I don't live in a rural area.", "我住在偏远地区。", "我不住在偏远地区。"),
    ("I want to keep the order open.", "I don't want to keep the order open.", "订单先别关。", "订单可以关掉。"),
    ("I used a discount code.", "I didn't use a discount code.", "我用了优惠码。", "我没用优惠码。"),
    ("The seal is still intact.", "The seal isn't intact.", "封条还完好。", "封条已经破了。"),
    ("I need an invoice for it.", "I don't need an invoice.", "我需要发票。", "我不需要发票。"),
]
CODE_REQS = [
    ("Don't use any third-party packages.", "Third-party packages are fine.", "不要用第三方包。", "可以用第三方包。"),
    ("It has to be async.", "It doesn't need to be async.", "必须是异步的。", "不需要异步。"),
    ("Add type hints.", "Skip the type hints.", "加上类型注解。", "不要加类型注解。"),
    ("Include unit tests.", "No unit tests needed.", "附上单元测试。", "不需要单元测试。"),
    ("It must run on Windows.", "It doesn't need to run on Windows.", "必须能在Windows上跑。", "不需要支持Windows。"),
    ("Keep it compatible with older versions.", "Don't worry about older versions.", "要兼容旧版本。", "不用管旧版本兼容。"),
    ("Add comments.", "Don't add comments.", "加上注释。", "不要加注释。"),
    ("Use a class-based approach.", "Don't use classes.", "用类来组织。", "不要用类。"),
    ("Avoid global variables.", "Global variables are OK.", "避免全局变量。", "全局变量可以用。"),
    ("Handle errors explicitly.", "Don't bother with error handling.", "要显式处理异常。", "不用处理异常。"),
    ("It should be thread-safe.", "It doesn't have to be thread-safe.", "要线程安全。", "不需要线程安全。"),
    ("Log every step.", "Don't add logging.", "每一步都打日志。", "不要加日志。"),
    ("It has to work offline.", "It can assume internet access.", "必须能离线运行。", "可以假设有网络。"),
    ("Read the config from environment variables.", "Don't use environment variables for config.", "配置从环境变量读。", "配置不要从环境变量读。"),
    ("Stream the data instead of loading it all.", "Loading everything into memory is fine.", "数据要流式处理。", "全部读进内存也行。"),
    ("Keep it under 30 lines.", "Length doesn't matter.", "控制在30行以内。", "长度无所谓。"),
    ("Use recursion.", "Don't use recursion.", "用递归实现。", "不要用递归。"),
    ("It runs inside Docker.", "It doesn't run inside Docker.", "它跑在Docker里。", "它不跑在Docker里。"),
    ("It must support Unicode input.", "Only ASCII input is needed.", "要支持Unicode输入。", "只需要支持ASCII输入。"),
    ("Return the result as JSON.", "Don't return JSON.", "结果以JSON返回。", "结果不要返回JSON。"),
]
DOC_REQS = [
    ("Use bullet points.", "Don't use bullet points.", "用要点列表。", "不要用要点列表。"),
    ("Mention the deadline.", "Don't mention the deadline.", "提一下截止日期。", "不要提截止日期。"),
    ("Include a call to action.", "Leave out the call to action.", "结尾加上行动号召。", "不要加行动号召。"),
    ("Add a short greeting.", "No greeting.", "开头加一句问候。", "不要问候语。"),
    ("Use British spelling.", "Don't use British spelling.", "用英式拼写。", "不要用英式拼写。"),
    ("Avoid jargon.", "Jargon is fine.", "避免行话。", "行话可以保留。"),
    ("Write it in the first person.", "Don't write it in the first person.", "用第一人称写。", "不要用第一人称。"),
    ("Mention the budget.", "Don't mention the budget.", "要提到预算。", "不要提预算。"),
    ("End with a question.", "Don't end with a question.", "以一个问题结尾。", "不要以问题结尾。"),
    ("Use emojis.", "No emojis.", "加点表情符号。", "不要表情符号。"),
    ("Keep the original headings.", "Drop the original headings.", "保留原来的小标题。", "去掉原来的小标题。"),
    ("Include a sign-off.", "No sign-off.", "加上落款。", "不要落款。"),
    ("Highlight my leadership experience.", "Don't highlight my leadership experience.", "突出我的管理经验。", "不要突出我的管理经验。"),
    ("Split it into paragraphs.", "Don't split it into paragraphs.", "分成几段。", "不要分段。"),
    ("Add a subject line.", "No subject line.", "加一个邮件主题。", "不要邮件主题。"),
    ("Mention the company by name.", "Don't name the company.", "点明公司名字。", "不要提公司名字。"),
    ("Include a quote.", "Don't include any quotes.", "引用一句名言。", "不要引用名言。"),
    ("Thank the reader.", "Don't thank the reader.", "感谢一下读者。", "不要感谢读者。"),
    ("Keep all the numbers.", "Remove the numbers.", "保留所有数字。", "去掉所有数字。"),
    ("Mention my availability next week.", "Don't mention my availability.", "提一下我下周有空。", "不要提我什么时候有空。"),
]
PRODUCT_REQS = [
    ("It must be in stock locally.", "It doesn't need to be in stock locally.", "要本地有现货。", "不需要本地有现货。"),
    ("I want it in black.", "I don't want it in black.", "要黑色的。", "不要黑色的。"),
    ("It should be lightweight.", "Weight doesn't matter.", "要轻一点的。", "重量无所谓。"),
    ("It needs at least a two-year warranty.", "It doesn't need a long warranty.", "至少保修两年。", "不需要长保修。"),
    ("I prefer a well-known brand.", "It doesn't have to be a well-known brand.", "要大牌子的。", "不一定要大牌子。"),
    ("It must ship by Friday.", "It doesn't need to ship by Friday.", "周五前要能发货。", "不用周五前发货。"),
    ("Refurbished is fine.", "I don't want anything refurbished.", "翻新机也可以。", "不要翻新机。"),
    ("It should work with Apple devices.", "It doesn't need to work with Apple devices.", "要兼容苹果设备。", "不需要兼容苹果设备。"),
    ("Bluetooth is required.", "Bluetooth isn't needed.", "必须有蓝牙。", "不需要蓝牙。"),
    ("It needs to be easy to clean.", "Ease of cleaning isn't important.", "要容易清洁。", "清洁方不方便无所谓。"),
    ("It should come with a carrying case.", "It doesn't need a carrying case.", "要带收纳包。", "不需要收纳包。"),
    ("It must be quiet.", "Noise isn't a concern.", "必须安静。", "噪音无所谓。"),
    ("I'd like eco-friendly materials.", "Eco-friendly materials aren't a priority.", "想要环保材料的。", "环保材料不是重点。"),
    ("It must support fast charging.", "Fast charging isn't needed.", "要支持快充。", "不需要快充。"),
    ("It should fit in a small space.", "Size isn't an issue.", "要放得进小空间。", "大小不是问题。"),
    ("I want something without a subscription.", "A subscription is fine.", "不要订阅制的。", "订阅制也可以。"),
    ("It should have a good durability record.", "Durability isn't a big concern.", "耐用性要好。", "耐用性不是重点。"),
    ("It must be safe for kids.", "It doesn't need to be kid-safe.", "要对小孩安全。", "不需要考虑小孩安全。"),
    ("I want to buy it in a store.", "Online-only is fine.", "要能在实体店买到。", "只在网上卖也行。"),
    ("It needs a USB-C port.", "It doesn't need USB-C.", "要有USB-C接口。", "不需要USB-C接口。"),
]
MED_REQS = [
    ("I'm pregnant.", "I'm not pregnant.", "我怀孕了。", "我没有怀孕。"),
    ("I have high blood pressure.", "I don't have high blood pressure.", "我有高血压。", "我没有高血压。"),
    ("I also have a fever.", "I don't have a fever.", "我还有点发烧。", "我没有发烧。"),
    ("I'm on blood thinners.", "I'm not on blood thinners.", "我在吃抗凝药。", "我没在吃抗凝药。"),
    ("I'm over 65.", "I'm not over 65.", "我六十五岁以上。", "我不到六十五岁。"),
    ("It gets worse at night.", "It doesn't get worse at night.", "晚上会加重。", "晚上不会加重。"),
    ("I have diabetes.", "I don't have diabetes.", "我有糖尿病。", "我没有糖尿病。"),
    ("I drink alcohol regularly.", "I don't drink alcohol.", "我经常喝酒。", "我不喝酒。"),
    ("I'm allergic to penicillin.", "I'm not allergic to penicillin.", "我对青霉素过敏。", "我对青霉素不过敏。"),
    ("I had surgery recently.", "I haven't had any recent surgery.", "我最近做过手术。", "我最近没做过手术。"),
    ("I'm breastfeeding.", "I'm not breastfeeding.", "我在哺乳期。", "我不在哺乳期。"),
    ("I smoke.", "I don't smoke.", "我抽烟。", "我不抽烟。"),
    ("It started after a fall.", "It didn't start after a fall.", "是摔了一跤之后开始的。", "不是摔跤后开始的。"),
    ("I have asthma.", "I don't have asthma.", "我有哮喘。", "我没有哮喘。"),
    ("I've lost weight without trying.", "I haven't lost any weight.", "我体重莫名下降了。", "我体重没有变化。"),
    ("It runs in my family.", "It doesn't run in my family.", "我家里人也有这个问题。", "我家里人没有这个问题。"),
    ("I have a kidney condition.", "I don't have any kidney problems.", "我肾功能不太好。", "我肾功能正常。"),
    ("I already took a painkiller today.", "I haven't taken any painkillers today.", "我今天已经吃过止痛药了。", "我今天还没吃过止痛药。"),
    ("I work night shifts.", "I don't work night shifts.", "我上夜班。", "我不上夜班。"),
    ("I'm training for a marathon.", "I'm not doing any intense training.", "我在备战马拉松。", "我没有在做高强度训练。"),
]
LEGAL_REQS = [
    ("I have a written lease.", "I don't have a written lease.", "我有书面租约。", "我没有书面租约。"),
    ("I've lived here for over two years.", "I haven't lived here for two years yet.", "我在这里住了两年多。", "我在这里还没住满两年。"),
    ("The rent is paid up.", "I'm behind on rent.", "房租都交清了。", "我拖欠了房租。"),
    ("I have the messages in writing.", "I don't have anything in writing.", "我有书面聊天记录。", "我没有任何书面记录。"),
    ("The lease is month-to-month.", "The lease isn't month-to-month.", "租约是按月续的。", "租约不是按月续的。"),
    ("The landlord lives in the same building.", "The landlord doesn't live in the building.", "房东就住在同一栋楼。", "房东不住在这栋楼。"),
    ("I sublet one room.", "I don't sublet any rooms.", "我转租了一个房间。", "我没有转租。"),
    ("It's a rent-controlled unit.", "It's not a rent-controlled unit.", "这是限租房。", "这不是限租房。"),
    ("I'm a foreign resident.", "I'm not a foreign resident.", "我是外籍居民。", "我不是外籍居民。"),
    ("I'm on a low income.", "I'm not on a low income.", "我收入比较低。", "我收入不算低。"),
    ("There's a pending dispute already.", "There's no dispute yet.", "我们已经有纠纷在处理中。", "目前还没有纠纷。"),
    ("The apartment is furnished.", "The apartment isn't furnished.", "房子是带家具的。", "房子不带家具。"),
    ("I have a roommate on the lease.", "I don't have a roommate on the lease.", "租约上还有一个室友。", "租约上没有室友。"),
    ("The landlord is a company.", "The landlord isn't a company.", "房东是一家公司。", "房东不是公司。"),
    ("I paid the deposit in cash.", "I didn't pay the deposit in cash.", "押金是现金付的。", "押金不是现金付的。"),
    ("The contract is in English only.", "The contract isn't only in English.", "合同只有英文版。", "合同不只有英文版。"),
    ("I want to stay in the apartment.", "I don't want to stay in the apartment.", "我想继续住下去。", "我不想继续住了。"),
    ("The building is being renovated.", "The building isn't being renovated.", "楼里正在装修。", "楼里没在装修。"),
    ("I've reported it to the housing office.", "I haven't reported it to anyone.", "我已经向住房部门反映过。", "我还没向任何人反映。"),
    ("The issue started last month.", "The issue didn't start recently.", "问题是上个月开始的。", "问题不是最近才开始的。"),
]
COOK_REQS = [
    ("Make it vegetarian.", "It doesn't need to be vegetarian.", "做成素的。", "不用做成素的。"),
    ("Keep it gluten-free.", "It doesn't have to be gluten-free.", "要无麸质。", "不用无麸质。"),
    ("Make it spicy.", "Don't make it spicy.", "要辣一点。", "不要辣。"),
    ("I only have an air fryer.", "I don't have an air fryer.", "我只有空气炸锅。", "我没有空气炸锅。"),
    ("It has to be done in 30 minutes.", "It doesn't need to be quick.", "要三十分钟内做完。", "不赶时间。"),
    ("Use less oil.", "Don't cut back on the oil.", "少放油。", "油不用少放。"),
    ("No nuts, please.", "Nuts are fine.", "不要放坚果。", "可以放坚果。"),
    ("Make it kid-friendly.", "It doesn't have to be kid-friendly.", "要适合小孩吃。", "不用考虑小孩口味。"),
    ("Use a pressure cooker.", "Don't use a pressure cooker.", "用高压锅做。", "不用高压锅。"),
    ("Make it dairy-free.", "It can have dairy.", "不要放奶制品。", "可以放奶制品。"),
    ("Keep the sugar low.", "Don't reduce the sugar.", "少放糖。", "糖不用减。"),
    ("No pork.", "Pork is fine.", "不要猪肉。", "猪肉可以。"),
    ("I want to make it the night before.", "I won't make it ahead.", "我想提前一晚做好。", "我不打算提前做。"),
    ("I'm cooking on a single burner.", "I'm not limited to one burner.", "我只有一个灶头。", "我不止一个灶头。"),
    ("Keep it low-salt.", "Don't reduce the salt.", "要少盐。", "盐不用减。"),
    ("Use fresh herbs.", "Skip the fresh herbs.", "用新鲜香草。", "不用新鲜香草。"),
    ("It's for a party.", "It's not for a party.", "是聚会用的。", "不是聚会用的。"),
    ("It needs to be halal.", "It doesn't need to be halal.", "要清真的。", "不用清真。"),
    ("I don't have an oven.", "I do have an oven.", "我没有烤箱。", "我有烤箱。"),
    ("Use frozen vegetables.", "Don't use frozen vegetables.", "用冷冻蔬菜。", "不要用冷冻蔬菜。"),
]
FIT_REQS = [
    ("I can only train at home.", "I don't have to train at home.", "我只能在家练。", "不一定要在家练。"),
    ("Include running.", "Don't include running.", "要有跑步。", "不要安排跑步。"),
    ("Add yoga on rest days.", "No yoga on rest days.", "休息日加点瑜伽。", "休息日不要瑜伽。"),
    ("I have bad knees.", "My knees are fine.", "我膝盖不好。", "我膝盖没问题。"),
    ("Include a warm-up.", "Skip the warm-up.", "要有热身。", "不要热身环节。"),
    ("Train in the mornings.", "Don't schedule morning sessions.", "安排在早上练。", "不要安排早上练。"),
    ("Use a gym.", "Don't use a gym.", "要去健身房。", "不去健身房。"),
    ("Include swimming.", "No swimming.", "加上游泳。", "不要游泳。"),
    ("Add a deload week.", "No deload week.", "加一个减量周。", "不要减量周。"),
    ("I'm over 50.", "I'm not over 50.", "我五十多岁了。", "我还不到五十岁。"),
    ("Include stretching.", "No stretching sessions.", "要有拉伸。", "不要单独的拉伸课。"),
    ("Add jump rope.", "No jump rope.", "加上跳绳。", "不要跳绳。"),
    ("Use kettlebells.", "Don't use kettlebells.", "用壶铃。", "不用壶铃。"),
    ("I'm a beginner.", "I'm not a beginner.", "我是新手。", "我不是新手。"),
    ("Track heart rate zones.", "Don't bother with heart rate zones.", "按心率区间来练。", "不用管心率区间。"),
    ("Include hill sprints.", "No hill sprints.", "加上坡道冲刺。", "不要坡道冲刺。"),
    ("Add a weekly long run.", "No weekly long run.", "每周一次长距离跑。", "不要每周长距离跑。"),
    ("Include core work.", "Skip core work.", "要有核心训练。", "不要核心训练。"),
    ("I'm recovering from a cold.", "I'm not recovering from anything.", "我感冒刚好。", "我身体没什么问题。"),
    ("Keep weekends free.", "Don't keep weekends free.", "周末不练。", "周末也要练。"),
]

# ---------------------------------------------------------------- travel planning
TRAVEL = Spec("travel", "travel_planning", ["dest", "days", "people"], [
    Q("plan", ["days", "dest", "people"], ent="dest", reqs=True, later=False, follow=["days", "people", "dest"], en=[
        "Plan a {days}-day trip to {dest} for {people} people.",
        "Can you put together a {days}-day itinerary for {dest}? There are {people} of us.",
        "We're {people} people going to {dest} for {days} days. How should we spend each day?",
        "I need a day-by-day plan for {days} days in {dest}, {people} travelers in total.",
        "What would a good {days}-day schedule in {dest} look like for a group of {people}?",
        "Help me organize {days} days of sightseeing in {dest} for {people} people.",
        "{people} of us will be in {dest} for {days} days. Could you map out what to do?",
        "Draft an itinerary: {dest}, {days} days, party of {people}.",
    ], ten=["{dest} itinerary {days} days {people} ppl", "{days} days in {dest}, {people} people, plan pls"], zh=[
        "帮我规划一个{days}天的{dest}行程，我们一共{people}个人。",
        "我们{people}个人要去{dest}玩{days}天，每天怎么安排比较好？",
        "能帮忙做一份{dest}{days}日游的攻略吗？同行{people}人。",
        "{people}个人去{dest}待{days}天，行程该怎么排？",
        "请为{people}位旅客安排一份{dest}{days}天的详细日程。",
        "打算{people}个人一起去{dest}，时间是{days}天，求一个每天的安排。",
        "{dest}{days}天怎么玩比较合理？我们{people}个人。",
        "想去{dest}玩{days}天，{people}人同行，帮我排一下每天去哪儿。",
    ], tzh=["{dest} {days}天 {people}人 行程", "求{dest}{days}日游路线，{people}人"], ren=[
        "Here's a {days}-day outline for {dest}: start with the old town and a food market, give the main sights a full day, and keep the last day light. With {people} people, book restaurants ahead.",
        "Day 1 in {dest}: settle in and walk the historic center. The middle days mix museums, a local market and one half-day excursion, and the final day is free for shopping before you leave.",
    ], rzh=[
        "{dest}{days}天可以这样排：第一天逛老城区和美食市场，中间几天看主要景点，最后一天轻松一点。{people}个人出行，热门餐厅最好提前订。",
        "第一天到{dest}先熟悉环境、逛市中心；中间几天把博物馆、市集和一个半日游穿插安排；最后一天留给购物和返程。",
    ]),
    Q("cost", ["days", "dest", "people"], ent="dest", deps=["days", "people", "dest"], follow=["days", "people"], en=[
        "How much would a {days}-day trip to {dest} cost for {people} people?",
        "What's a realistic budget for {people} people spending {days} days in {dest}?",
        "Roughly how much money do {people} of us need for {days} days in {dest}?",
        "If {people} people go to {dest} for {days} days, what will it cost all in?",
        "Can you estimate the total cost of {days} days in {dest} for {people}?",
        "How expensive is a {days}-day {dest} trip for a group of {people}?",
        "Ballpark figure for {days} days in {dest}, {people} people?",
        "What should {people} travelers budget for {days} days in {dest}?",
    ], ten=["{dest} {days}d {people}ppl cost?", "cost of {dest}, {days} days, {people} people"], zh=[
        "{people}个人去{dest}玩{days}天大概要花多少钱？",
        "{dest}{days}天的行程，{people}个人的预算大概多少合适？",
        "我们{people}个人在{dest}待{days}天，总共得准备多少钱？",
        "去{dest}{days}天，{people}人出行，费用大概是多少？",
        "帮我估算一下{people}个人{dest}{days}日游的总花费。",
        "{days}天的{dest}之旅，{people}个人一共要多少钱？",
        "{people}人去{dest}{days}天，预算要留多少？",
        "想知道{people}个人去{dest}玩{days}天的大致开销。",
    ], tzh=["{dest}{days}天{people}人 多少钱", "{dest} {days}天 {people}人 预算？"], pen=[
        "How much would all of that cost?", "What would the total budget be?",
        "Roughly how much money should we set aside for it?", "How much will this trip cost us in total?",
        "And what would it cost altogether?", "Can you estimate the total cost of that plan?",
        "How expensive would that be overall?", "What's the damage, cost-wise?",
    ], pzh=[
        "这样下来总共要花多少钱？", "整个行程大概多少钱？", "那大概需要准备多少预算？", "算下来一共得花多少？",
        "这一趟总花费大概多少？", "这个安排要多少钱？", "费用方面大概是多少？", "总预算得留多少？",
    ], ren=[
        "For {people} people over {days} days in {dest}, a mid-range trip usually runs about ${n1} per person per day including hotel, food and local transport. Flights are extra.",
        "Budget roughly ${n1} per person per day in {dest}; for {people} people and {days} days that adds up quickly, so mid-range hotels and public transport make the biggest difference.",
    ], rzh=[
        "{people}个人在{dest}玩{days}天，中等标准每人每天大约{n1}元，含住宿、餐饮和市内交通，机票另算。",
        "{dest}每人每天按{n1}元左右估算比较稳妥，{people}个人{days}天算下来不少，住宿和交通是最能省钱的部分。",
    ]),
    Q("weather", ["dest", "when"], ent="dest", deps=["dest"], ctxfree=True, follow=["when", "dest"], en=[
        "What's the weather like in {dest} in {when}?",
        "What kind of weather should I expect in {dest} during {when}?",
        "How's the climate in {dest} around {when}?",
        "Is it usually hot, cold or rainy in {dest} in {when}?",
        "What are typical temperatures in {dest} in {when}?",
        "If I'm in {dest} in {when}, what weather am I looking at?",
        "Tell me about {dest}'s weather in {when}.",
        "How warm or cold does {dest} get in {when}?",
    ], ten=["{dest} weather {when}?", "weather in {dest} during {when}"], zh=[
        "{dest}{when}的天气怎么样？",
        "{when}去{dest}，天气大概是什么样的？",
        "{dest}在{when}一般冷不冷？会下雨吗？",
        "{when}的时候{dest}气温大概多少度？",
        "想了解一下{dest}{when}的气候情况。",
        "{when}在{dest}会碰到什么样的天气？",
        "{dest}{when}热吗？还是会比较凉？",
        "请问{dest}{when}的天气通常如何？",
    ], tzh=["{dest} {when} 天气", "{when}{dest}天气咋样"], pen=[
        "What's the weather like there in {when}?", "What kind of weather should we expect there during {when}?",
        "How's the climate there around {when}?", "Is it usually hot or rainy there in {when}?",
        "What are typical temperatures there in {when}?", "And the weather there in {when}?",
    ], pzh=[
        "那边{when}天气怎么样？", "{when}去那儿，天气大概如何？", "那里{when}冷不冷？会下雨吗？",
        "{when}的时候那边气温大概多少度？", "那边{when}是什么样的气候？", "{when}那里热不热？",
    ], ren=[
        "In {when}, {dest} is usually mild during the day and cooler at night. Expect a few rainy days, so pack a light jacket and an umbrella.",
        "{dest} in {when} typically sees daytime highs around {n3} degrees Celsius with some showers. Layers work best.",
    ], rzh=[
        "{dest}{when}白天一般比较舒适，早晚偏凉，偶尔会下雨，建议带件薄外套和雨伞。",
        "{when}的{dest}白天最高气温大约{n3}度，时有阵雨，穿衣以叠穿为主。",
    ]),
    Q("stay", ["dest", "interest"], ent="dest", deps=["dest"], ctxfree=True, follow=["interest"], en=[
        "Which neighborhood in {dest} is best to stay in if we're into {interest}?",
        "Where should I book a hotel in {dest} if I care mostly about {interest}?",
        "What's the best area of {dest} to base ourselves for {interest}?",
        "We love {interest}. What part of {dest} should we stay in?",
        "For someone who's into {interest}, which district of {dest} makes the best base?",
        "In {dest}, where's a good place to stay for {interest}?",
        "Recommend an area to stay in {dest} that's close to good {interest}.",
        "Which part of {dest} would suit travelers who want {interest}?",
    ], ten=["{dest} where to stay, {interest}", "best {dest} area for {interest}?"], zh=[
        "去{dest}的话，喜欢{interest}住哪个区比较好？",
        "我们对{interest}很感兴趣，在{dest}住哪一带方便？",
        "{dest}哪个片区住着离{interest}比较近？",
        "如果主要冲着{interest}去，{dest}的酒店订在哪里合适？",
        "喜欢{interest}的人去{dest}，住哪儿最方便？",
        "在{dest}想多体验{interest}，推荐住哪个街区？",
        "{dest}住宿选哪个区域，适合爱好{interest}的人？",
        "请推荐一下{dest}适合{interest}爱好者落脚的区域。",
    ], tzh=["{dest} 住哪 {interest}", "{interest}党去{dest}住哪"], pen=[
        "Which neighborhood there is best if we're into {interest}?",
        "Where should we stay there if we mostly care about {interest}?",
        "What's the best area there to base ourselves for {interest}?",
        "Which part of town should we stay in for {interest}?",
        "What's a good area to stay there for {interest}?",
    ], pzh=[
        "喜欢{interest}的话，那边住哪个区比较好？", "冲着{interest}去的话，酒店订在哪一带？",
        "那边哪个片区离{interest}近一点？", "想多体验{interest}，住哪儿方便？", "那里适合{interest}爱好者住的区域是哪块？",
    ], ren=[
        "For {interest}, stay in one of {dest}'s central, walkable districts; you'll be a short ride from most spots. Pick a hotel within a few minutes of a metro stop.",
        "If {interest} is the priority, the older central neighborhoods of {dest} are the best base. They're livelier in the evening and well connected.",
    ], rzh=[
        "如果主要为了{interest}，建议住在{dest}市中心交通方便的区域，离大部分相关地点都不远，选酒店时注意靠近地铁站。",
        "以{interest}为主的话，{dest}的老城区一带最合适，晚上热闹，交通也方便。",
    ]),
    Q("flight", ["origin", "dest", "day"], ent="dest", pair=("origin", "dest"), ctxfree=True,
      follow=["day", "origin"], fp={"dest": ("to {v}", "去{v}")}, en=[
        "Find me flights from {origin} to {dest} {day}.",
        "Are there any flights from {origin} to {dest} {day}?",
        "I need to fly from {origin} to {dest} {day}. What are my options?",
        "What flights go from {origin} to {dest} {day}?",
        "Can I get a plane from {origin} to {dest} {day}?",
        "Look up flights {origin} to {dest}, departing {day}.",
        "Which airlines fly from {origin} to {dest} {day}?",
        "I'd like to book a flight from {origin} to {dest} {day}.",
    ], ten=["flights {origin} to {dest} {day}", "{origin} -> {dest} flight {day}?"], zh=[
        "帮我查一下{day}从{origin}飞{dest}的航班。",
        "{day}有从{origin}到{dest}的飞机吗？",
        "我{day}要从{origin}飞去{dest}，有哪些航班可选？",
        "{origin}飞{dest}，{day}的航班有哪些？",
        "查查{day}{origin}到{dest}的机票。",
        "{day}从{origin}出发去{dest}，能订到哪些航班？",
        "想订一张{day}{origin}飞{dest}的机票。",
        "请问{day}{origin}到{dest}的航班情况如何？",
    ], tzh=["{origin}-{dest} {day} 航班", "{day} {origin}飞{dest}"], pen=[
        "Find me flights there from {origin} {day}.", "Are there any flights there from {origin} {day}?",
        "What flights go there from {origin} {day}?", "Can I fly there from {origin} {day}?",
        "Look up flights from {origin} to there, departing {day}.",
    ], pzh=[
        "帮我查一下{day}从{origin}飞过去的航班。", "{day}从{origin}过去有飞机吗？", "{origin}飞那边，{day}有哪些航班？",
        "查查{day}从{origin}过去的机票。", "{day}从{origin}出发飞过去，能订到哪些航班？",
    ], ren=[
        "{day} there are several options from {origin} to {dest}, including a morning departure with one stop and an evening direct flight. Fares start around ${n1}.",
        "I found a few {origin} to {dest} flights {day}: an early nonstop and two one-stop connections in the afternoon. Book soon, as cheaper fares sell out first.",
    ], rzh=[
        "{day}从{origin}到{dest}有几个选择：上午一班经停航班，晚上还有一班直飞，价格大约{n1}元起。",
        "{day}{origin}飞{dest}有一班早上的直飞和两班下午的转机航班，便宜的票卖得快，建议早点订。",
    ]),
    Q("budget", ["budget"], deps=["dest", "days", "people"], follow=["budget"], en=[
        "Our budget is about ${budget} in total. Can you adjust the plan?",
        "We can spend roughly ${budget} altogether, so please fit the plan to that.",
        "Can you rework it for a total budget of ${budget}?",
        "Make the plan work with ${budget} for everything.",
        "We only have around ${budget} total. What would you change?",
        "Please tailor the itinerary to a ${budget} overall budget.",
        "Let's cap the whole trip at ${budget}. How does the plan look then?",
        "Adjust everything so it comes in at about ${budget}.",
    ], ten=["budget ${budget} total, adjust", "${budget} total budget, redo plan"], zh=[
        "我们总预算大概{budget}元，行程能按这个调整一下吗？",
        "一共只有{budget}块钱左右，帮我把计划改一改。",
        "按总预算{budget}元重新安排一下吧。",
        "整个行程控制在{budget}元左右，要怎么调整？",
        "预算就{budget}元，行程需要怎么改？",
        "能不能把方案调整到总共花{budget}元左右？",
        "全部费用打算控制在{budget}元，计划帮我改一下。",
        "总共{budget}元的预算，这个安排要怎么变？",
    ], tzh=["预算{budget}，重排", "总预算{budget}元 调整下"], ren=[
        "With ${budget} in total, I'd switch to mid-range hotels, use public transport, and keep one paid attraction per day. That keeps {days} days in {dest} for {people} people within budget.",
        "To land at about ${budget}, drop the paid day trip, book a centrally located budget hotel and eat at markets for lunch. The rest of the {dest} plan stays the same.",
    ], rzh=[
        "总预算{budget}元的话，建议住性价比高的酒店、多坐公共交通，每天只安排一个收费景点，这样{people}个人{days}天的{dest}行程基本能控制住。",
        "要控制在{budget}元左右，可以去掉收费的一日游，住市中心的经济型酒店，午饭去市场解决，其余{dest}行程不变。",
    ]),
], ["plan", "plan", "plan", "weather", "flight"], reqs=TRAVEL_REQS, generic=["price", "time", "alternatives"],
    topic=("your {dest} trip", "这趟{dest}之行", "hours", "小时", 1), weight=1.5)

# ---------------------------------------------------------------- customer support
SUPPORT = Spec("support", "customer_support", ["order", "product", "problem", "outcome"], [
    Q("report", ["order", "product", "problem", "outcome"], ent="order", reqs=True, later=False, follow=["outcome"], en=[
        "My order {order}, the {product}, {problem}. I'd like {outcome}.",
        "The {product} from order {order} {problem}, so I'm asking for {outcome}.",
        "Order {order}: my {product} {problem}. Can I get {outcome}?",
        "I received order {order} and the {product} {problem}. Please arrange {outcome}.",
        "Problem with order {order}. The {product} {problem}. What I want is {outcome}.",
        "The {product} I bought (order {order}) {problem}. How do I get {outcome}?",
        "Order number {order}: the {product} {problem}. I'm requesting {outcome}.",
        "Can you help? My {product} from order {order} {problem}, and I'd like {outcome}.",
    ], ten=["order {order} {product} {problem}, want {outcome}", "{order}: {product} {problem}, need {outcome}"], zh=[
        "我的订单{order}里的{product}{problem}，想申请{outcome}。",
        "订单{order}买的{product}{problem}，我要{outcome}。",
        "订单号{order}，{product}{problem}，能给我申请{outcome}吗？",
        "收到订单{order}的{product}，结果{problem}，麻烦安排{outcome}。",
        "{order}这个订单有问题：{product}{problem}，想申请{outcome}。",
        "我在你们这买的{product}（订单{order}）{problem}，怎么申请{outcome}？",
        "订单{order}：{product}{problem}。我的诉求是{outcome}。",
        "帮我处理一下订单{order}，{product}{problem}，我想要{outcome}。",
    ], tzh=["{order} {product}{problem} 要{outcome}", "订单{order}，{product}{problem}，{outcome}"], ren=[
        "Sorry about the {product}. I've flagged order {order} and opened a request for {outcome}; you'll get a confirmation email within {n2} business days.",
        "I'm sorry the {product} {problem}. For order {order} I've started the process for {outcome}. Please keep the item and packaging until we confirm the next steps.",
    ], rzh=[
        "很抱歉{product}出现这个问题。订单{order}已为您提交{outcome}申请，{n2}个工作日内会有邮件通知。",
        "非常抱歉给您带来不便，订单{order}的{outcome}申请已经登记，请先保留商品和包装，等待后续通知。",
    ]),
    Q("status", ["order"], ent="order", deps=["order"], ctxfree=True, en=[
        "Where is my order {order} right now?", "Can you track order {order} for me?",
        "What's the delivery status of order {order}?", "Has order {order} shipped yet, and where is it?",
        "Any update on where order {order} is?", "I'd like to know the current status of order {order}.",
        "Where's {order} at the moment?", "Could you check on the shipping progress of order {order}?",
    ], ten=["status {order}?", "track {order}"], zh=[
        "我的订单{order}现在到哪儿了？", "帮我查一下订单{order}的物流。", "订单{order}发货了吗？现在什么状态？",
        "{order}这个订单目前配送到哪里了？", "能告诉我订单{order}的最新进度吗？", "麻烦看看订单{order}现在的物流状态。",
        "订单{order}怎么还没到，现在在哪？", "想查询订单{order}的配送情况。",
    ], tzh=["查{order}物流", "{order} 到哪了"], pen=[
        "Where is it right now?", "Can you track it for me?", "What's its delivery status?",
        "Has it shipped yet, and where is it?", "Any update on where it is?", "Where's that order at the moment?",
    ], pzh=[
        "它现在到哪儿了？", "帮我查一下这个订单的物流。", "这单发货了吗？现在什么状态？", "现在配送到哪里了？",
        "这个订单最新进度是什么？", "那单现在什么状态？",
    ], ren=[
        "Order {order} left our warehouse {n2} days ago and is with the courier; the latest scan shows it at a local sorting center. Estimated delivery is within {n2} days.",
        "Order {order} has shipped and is in transit. The tracking page shows it arriving in about {n2} days.",
    ], rzh=[
        "订单{order}已于{n2}天前出库，目前在快递公司的本地分拣中心，预计{n2}天内送达。",
        "订单{order}已经发货，正在运输途中，物流显示大约{n2}天后送达。",
    ]),
    Q("timeline", ["order", "outcome"], ent="order", deps=["order"], follow=["outcome"], en=[
        "How long will {outcome} take for order {order}?",
        "For order {order}, how many days until {outcome} goes through?",
        "When can I expect {outcome} on order {order}?",
        "What's the usual timeline for {outcome} on order {order}?",
        "If I go with {outcome} for order {order}, how long is the wait?",
        "How soon will {outcome} be processed for order {order}?",
        "Order {order}: how long does {outcome} normally take?",
        "Roughly how long before {outcome} is done for order {order}?",
    ], ten=["{outcome} for {order}, how long?", "{order} {outcome} eta?"], zh=[
        "订单{order}申请{outcome}的话要多久？", "{order}这个订单申请{outcome}大概需要几天？",
        "订单{order}的{outcome}什么时候能处理好？", "如果订单{order}选{outcome}，要等多长时间？",
        "订单{order}走{outcome}流程一般多久？", "订单{order}申请{outcome}，多久能搞定？",
        "请问订单{order}的{outcome}大概几天能完成？", "{order}要是申请{outcome}，得等多久？",
    ], tzh=["{order} {outcome} 要多久", "{outcome}多久 订单{order}"], pen=[
        "How long will {outcome} take?", "When can I expect {outcome}?", "How many days until {outcome} goes through?",
        "What's the usual timeline for {outcome}?", "How soon will {outcome} be processed?",
    ], pzh=[
        "申请{outcome}的话要多久？", "{outcome}大概需要几天？", "{outcome}什么时候能处理好？", "走{outcome}流程一般多久？",
        "选{outcome}的话要等多长时间？",
    ], ren=[
        "For order {order}, {outcome} usually takes {n2} to {n4} business days once we confirm it. You'll get an email at each step.",
        "{outcome} on order {order} is normally completed within {n4} business days; I'll add a note to prioritize it.",
    ], rzh=[
        "订单{order}的{outcome}一般在确认后{n2}到{n4}个工作日内完成，每一步都会有短信通知。",
        "订单{order}申请{outcome}通常{n4}个工作日内处理完，我这边已经备注加急。",
    ]),
    Q("address", ["order", "city"], ent="order", deps=["order"], follow=["city"], en=[
        "Can I change the delivery address for order {order} to {city}?",
        "I've moved to {city}. Can order {order} be redirected there?",
        "Is it possible to ship order {order} to {city} instead?",
        "Please update the shipping address on order {order}; it should go to {city}.",
        "Could order {order} be delivered to {city} rather than the original address?",
        "How do I switch the delivery city for order {order} to {city}?",
        "Order {order} needs to go to {city} now. Can you change that?",
        "Can you reroute order {order} to an address in {city}?",
    ], ten=["{order} change address to {city}", "ship {order} to {city} instead?"], zh=[
        "订单{order}的收货地址能改到{city}吗？", "我搬到{city}了，订单{order}能改寄过去吗？",
        "能不能把订单{order}改成寄到{city}？", "麻烦把订单{order}的地址更新为{city}的地址。",
        "订单{order}可以送到{city}而不是原来的地址吗？", "怎么把订单{order}的收货城市改成{city}？",
        "订单{order}现在需要寄到{city}，能帮忙改一下吗？", "订单{order}还来得及改地址到{city}吗？",
    ], tzh=["{order} 改地址 {city}", "订单{order}改寄{city}"], pen=[
        "Can I change its delivery address to {city}?", "Can it be redirected to {city}?",
        "Is it possible to ship it to {city} instead?", "Could that order go to {city} rather than the original address?",
        "Can you reroute it to {city}?",
    ], pzh=[
        "它的收货地址能改到{city}吗？", "能改寄到{city}吗？", "这单可以改成送到{city}吗？", "那能不能让它寄到{city}？",
        "这个订单还来得及改到{city}吗？",
    ], ren=[
        "If order {order} hasn't been handed to the courier yet, I can update the address to {city} right away. Otherwise we'll request a redirect, which can add {n2} days.",
        "Done: order {order} will now go to your address in {city}. You'll receive an updated tracking email shortly.",
    ], rzh=[
        "订单{order}如果还没交给快递，我这边可以直接把地址改到{city}；如果已发出，需要申请转寄，大约会多{n2}天。",
        "已为您把订单{order}的收货地址改到{city}，稍后会收到新的物流通知。",
    ]),
], ["report", "report", "report", "status"], reqs=SUPPORT_REQS, generic=["time"],
    topic=("order {order}", "订单{order}", "business days", "个工作日", 1), weight=1.3)

# ---------------------------------------------------------------- code questions
CODE = Spec("code", "code_qa", ["language", "library", "version", "error", "task"], [
    Q("error", ["error", "library", "version", "language"], ent="library", reqs=True, follow=["version"],
      nochange=["language"], later=False, en=[
        "I'm getting {error} with {library} {version} in {language}. How do I fix it?",
        "Using {library} {version} ({language}) and I keep hitting {error}. Any fix?",
        "How can I get rid of {error} in my {language} project? It uses {library} {version}.",
        "{library} {version} on {language} throws {error}. What am I doing wrong?",
        "After setting up {library} {version} in {language}, I see {error}. How do I solve this?",
        "What causes {error} with {library} {version} in {language}, and how do I fix it?",
        "My {language} app with {library} {version} fails with {error}. Help?",
        "Any idea how to fix {error} when running {library} {version} in {language}?",
    ], ten=["{error} {library} {version} {language} fix?", "{library} {version} / {language}: {error}"], zh=[
        "我在{language}里用{library} {version}，一直出现{error}，怎么解决？",
        "{library} {version}（{language}）碰到{error}，该怎么修？",
        "{language}项目用的是{library} {version}，遇到{error}，求解决办法。",
        "用{library} {version}写{language}的时候出现{error}，是哪里出了问题？",
        "{language} + {library} {version} 碰到{error}，怎么处理？",
        "请问{library} {version}在{language}里出现{error}一般是什么原因，怎么修？",
        "我的{language}程序用了{library} {version}，一跑就出现{error}，怎么办？",
        "{library} {version}下{language}出现{error}，有什么修复思路？",
    ], tzh=["{library} {version} {language} {error} 咋办", "{error}，{library} {version}，{language}"], ren=[
        "In {language}, {error} with {library} {version} is most often caused by a mismatched dependency or a missing config value. Pin your dependencies and check the {library} changelog for {version}-specific changes.",
        "That usually means something in your environment doesn't match what {library} {version} expects. Reproduce it in a clean virtual environment, enable debug logging, and compare against a minimal example.",
    ], rzh=[
        "{library} {version}在{language}里出现{error}，通常是依赖版本不匹配或配置缺失导致的。建议先锁定依赖版本，再对照{version}的更新日志检查配置。",
        "这一般说明环境和{library} {version}的要求不一致。可以在干净的虚拟环境里复现，打开调试日志，再和最小示例对比。",
    ]),
    Q("howto", ["task", "library", "language"], ent="library", reqs=True, follow=["language"], nochange=["language"], en=[
        "How do I {task} with {library} in {language}?",
        "What's the right way to {task} using {library} ({language})?",
        "In {language}, how can I {task} with {library}?",
        "Can you show me how to {task} in {language} using {library}?",
        "Using {library}, what's the cleanest way to {task} in {language}?",
        "I want to {task} in my {language} code with {library}. How?",
        "What's the best practice to {task} with {library} in {language}?",
        "Give me an example of how to {task} with {library} in {language}.",
    ], ten=["{language} {library} {task}?", "how to {task} {library} {language}"], zh=[
        "在{language}里怎么用{library}{task}？",
        "用{library}（{language}）{task}的正确写法是什么？",
        "{language}中如何借助{library}{task}？",
        "能演示一下在{language}里用{library}{task}吗？",
        "用{library}的话，{language}里{task}最简洁的方式是什么？",
        "我想在{language}代码里用{library}{task}，怎么写？",
        "{language}用{library}{task}有什么最佳实践？",
        "给个例子：{language}里用{library}怎么{task}。",
    ], tzh=["{language} {library} 怎么{task}", "{library}{task} {language}写法"], pen=[
        "How do I {task} with it in {language}?", "What's the right way to {task} using it?",
        "Can you show me how to {task} with it?", "How would I {task} with that library?", "And how do I {task} with it?",
    ], pzh=[
        "用它怎么{task}？", "那用这个库{task}怎么写？", "能演示一下用它{task}吗？", "在{language}里用它{task}的写法是？",
        "用这个库的话，{task}该怎么做？",
    ], ren=[
        "In {language}, the usual way to {task} with {library} is to use its built-in helpers rather than rolling your own. Start from the official example, wrap it in a small function, and add error handling around the I/O.",
        "{library} has direct support for this. Create the client or object once, call the relevant method, and handle the failure case explicitly; I can paste a {language} snippet if you want.",
    ], rzh=[
        "在{language}里用{library}{task}，一般直接用它自带的接口就行，不用自己造轮子。可以先照官方示例写一个小函数，再加上异常处理。",
        "{library}本身就支持这个操作：先创建一次对象，调用对应的方法，再显式处理失败的情况。需要的话我可以贴一段{language}示例。",
    ]),
    Q("install", ["library", "version"], ent="library", deps=["library"], ctxfree=True, follow=["version"], en=[
        "How do I install {library} {version}?", "What's the command to install version {version} of {library}?",
        "I need {library} pinned to {version}. How do I install that?",
        "How can I get {library} {version} specifically, not the latest?",
        "What are the install instructions for {library} version {version}?",
        "What's the proper way to set up {library} {version}?",
        "How do I add {library} at version {version} to my project?",
        "Can you tell me how to install exactly {library} {version}?",
    ], ten=["install {library} {version}", "{library} {version} install cmd?"], zh=[
        "怎么安装{library} {version}？", "安装{library}的{version}版本用什么命令？", "我需要把{library}固定在{version}，怎么装？",
        "怎样装指定版本的{library}，要{version}，不要最新的？", "{library} {version}的安装步骤是什么？",
        "如何在项目里加入{library} {version}这个版本？", "请告诉我怎么准确安装{library} {version}。",
        "想装{library}的{version}版，具体怎么操作？",
    ], tzh=["装{library} {version}", "{library} {version} 安装命令"], pen=[
        "How do I install version {version} of it?", "What's the command to install it at {version}?",
        "How can I pin it to {version}?", "How do I get version {version} of that library?",
        "What are the install instructions for it, version {version}?",
    ], pzh=[
        "它的{version}版本怎么装？", "这个库装{version}版用什么命令？", "怎么把它固定在{version}？", "那{version}版本的怎么安装？",
        "想装它的{version}，怎么弄？",
    ], ren=[
        "Use your package manager with an explicit pin: list {library} at version {version} in your dependency file and reinstall. Do it in a fresh virtual environment so nothing pulls in a different version.",
        "Pin it explicitly to {version} in your lockfile or requirements, then run a clean install. Check the {library} {version} release notes for any minimum runtime version.",
    ], rzh=[
        "用包管理器显式指定版本即可，比如在依赖文件里写明{library}的{version}版本，然后重新安装。建议在新的虚拟环境里装，避免别的包拉进其他版本。",
        "在锁文件或依赖清单里把{library}固定到{version}，再做一次干净安装，注意看{version}的发布说明里对运行环境的最低要求。",
    ]),
    Q("port", ["language", "lang_b"], pair=("language", "lang_b"), follow=["lang_b"], en=[
        "Rewrite this function from {language} to {lang_b}.", "Can you port this snippet from {language} into {lang_b}?",
        "Translate the {language} code above into {lang_b}.", "How would this {language} code look in {lang_b}?",
        "Convert this from {language} to idiomatic {lang_b}.", "I need this {language} snippet in {lang_b} instead.",
        "Port the code from {language} over to {lang_b}.", "Turn this {language} function into {lang_b}.",
    ], ten=["{language} -> {lang_b}", "convert {language} to {lang_b}"], zh=[
        "把这个函数从{language}改写成{lang_b}。", "能把这段{language}代码移植到{lang_b}吗？",
        "把上面的{language}代码翻译成{lang_b}。", "这段{language}代码用{lang_b}写是什么样？",
        "把这个从{language}转成地道的{lang_b}写法。", "我需要这段{language}代码的{lang_b}版本。",
        "帮我把代码从{language}迁移到{lang_b}。", "这个{language}函数改成{lang_b}怎么写？",
    ], tzh=["{language}转{lang_b}", "{language} 改成 {lang_b}"], ren=[
        "Here's the {lang_b} version: the structure stays the same, but I replaced the {language}-specific idioms with their {lang_b} equivalents and added explicit types where {lang_b} needs them.",
        "Ported to {lang_b}. The main differences from the {language} original are error handling and how collections are iterated.",
    ], rzh=[
        "这是{lang_b}版本：整体结构不变，把{language}特有的写法换成了{lang_b}的惯用写法，并在需要的地方补上了类型声明。",
        "已改写成{lang_b}，和{language}原版相比，主要区别在异常处理和集合遍历的写法上。",
    ]),
], ["error", "error", "howto", "howto", "install"], reqs=CODE_REQS, generic=["alternatives", "shorter"],
    topic=("that {library} code", "这段{library}代码", "minutes", "分钟", 10), weight=1.5)

# ---------------------------------------------------------------- document rewriting
DOCS = Spec("doc", "doc_rewrite", ["doc", "tone", "audience", "length"], [
    Q("rewrite", ["doc", "tone", "audience", "length"], ent="doc", reqs=True, later=False,
      follow=["tone", "audience", "length"], en=[
        "Rewrite my {doc} in a {tone} tone for {audience}, about {length} words.",
        "Can you redo this {doc} so it sounds {tone}? It's for {audience}; keep it around {length} words.",
        "Please polish my {doc} for {audience}: {tone} tone, roughly {length} words.",
        "I need my {doc} rewritten for {audience}, {tone}, and about {length} words long.",
        "Make this {doc} more {tone} for {audience}, around {length} words.",
        "Turn my draft {doc} into a {tone} version aimed at {audience}, about {length} words.",
        "Help me rework this {doc}: the audience is {audience}, the tone {tone}, the length about {length} words.",
        "Could you rewrite the {doc} below with a {tone} voice for {audience}? Target {length} words.",
    ], ten=["{doc} rewrite, {tone}, for {audience}, {length} words", "rewrite {doc}: {tone} / {audience} / {length}w"], zh=[
        "帮我把这份{doc}改写得{tone}一些，读者是{audience}，{length}字左右。",
        "这份{doc}请用{tone}的语气重写，给{audience}看，控制在{length}字左右。",
        "我的{doc}要给{audience}看，麻烦改成{tone}的风格，大概{length}字。",
        "请把下面的{doc}润色一下：面向{audience}，语气{tone}，{length}字上下。",
        "把这篇{doc}改成{tone}的口吻，对象是{audience}，篇幅约{length}字。",
        "能帮我重写{doc}吗？要{tone}一点，写给{audience}，{length}字左右。",
        "{doc}改写需求：{tone}语气，读者{audience}，约{length}字。",
        "这份{doc}是写给{audience}的，请用{tone}的语气改一版，{length}字左右。",
    ], tzh=["{doc} 改写 {tone} 给{audience} {length}字", "改{doc}：{tone}/{audience}/{length}字"], ren=[
        "Here's a {tone} version of your {doc} for {audience}, trimmed to about {length} words. I tightened the opening, removed repetition, and ended with a clear next step.",
        "I rewrote the {doc} with a {tone} voice that should land well with {audience}. It's close to {length} words and keeps all your key points.",
    ], rzh=[
        "这是面向{audience}、语气{tone}的{doc}改写版，约{length}字。开头更直接，删掉了重复的内容，结尾加了明确的下一步。",
        "已按{tone}的语气重写了{doc}，更适合{audience}阅读，篇幅约{length}字，要点都保留了。",
    ]),
    Q("shorten", ["doc", "length"], ent="doc", deps=["doc", "tone", "audience"], follow=["length"], en=[
        "Can you cut my {doc} down to {length} words?", "Shorten the {doc} to about {length} words.",
        "Please trim this {doc} so it's no more than {length} words.",
        "I need the {doc} at roughly {length} words. Can you condense it?", "Make my {doc} shorter: {length} words max.",
        "Condense the {doc} into about {length} words.", "Could you get the {doc} under {length} words?",
        "Reduce this {doc} to a {length}-word version.",
    ], ten=["{doc} -> {length} words", "shorten {doc} {length}w"], zh=[
        "能把我的{doc}压缩到{length}字吗？", "把这份{doc}缩短到{length}字左右。", "请把{doc}删减到{length}字以内。",
        "{doc}太长了，改成{length}字的版本。", "帮我把{doc}精简到大约{length}字。", "{doc}控制在{length}字以内，帮忙压一下。",
        "能不能把这篇{doc}缩成{length}字？", "把{doc}浓缩成{length}字左右的版本。",
    ], tzh=["{doc} 缩到{length}字", "{doc}压到{length}字"], pen=[
        "Can you cut it down to {length} words?", "Shorten it to about {length} words.", "Please trim it to {length} words max.",
        "Could you get it under {length} words?", "Condense that into about {length} words.",
    ], pzh=[
        "能把它压缩到{length}字吗？", "缩短到{length}字左右吧。", "再删减到{length}字以内。", "帮我把它精简成{length}字。",
        "把它改成{length}字的版本。",
    ], ren=[
        "Here's the {doc} cut to about {length} words; I kept the main point and the closing line and dropped the secondary examples.",
        "Trimmed version, roughly {length} words: same message, fewer qualifiers, one example instead of three.",
    ], rzh=[
        "这是压缩到约{length}字的{doc}，保留了核心观点和结尾，删掉了次要的例子。",
        "精简版约{length}字：意思不变，去掉了修饰语，三个例子只留了一个。",
    ]),
    Q("translate", ["doc", "from_lang", "to_lang"], ent="doc", pair=("from_lang", "to_lang"), follow=["to_lang"], en=[
        "Translate my {doc} from {from_lang} into {to_lang}.", "Can you put this {doc} into {to_lang}? It's currently in {from_lang}.",
        "I need a {to_lang} version of my {from_lang} {doc}.", "Please translate the {doc} from {from_lang} into natural {to_lang}.",
        "Convert this {doc} from {from_lang} to {to_lang}, keeping the tone.",
        "How would my {doc} read in {to_lang}? The original is {from_lang}.",
        "Render this {from_lang} {doc} in {to_lang}.", "Translate the {doc} below from {from_lang} to {to_lang}.",
    ], ten=["{doc} {from_lang}->{to_lang}", "translate {doc} {from_lang} to {to_lang}"], zh=[
        "把我的{doc}从{from_lang}翻译成{to_lang}。", "这份{doc}是{from_lang}的，能翻成{to_lang}吗？",
        "我需要这份{from_lang}{doc}的{to_lang}版本。", "请把{doc}从{from_lang}译成地道的{to_lang}。",
        "帮我把这篇{doc}由{from_lang}转成{to_lang}，语气保持不变。", "这份{from_lang}的{doc}用{to_lang}怎么写？",
        "把下面的{doc}从{from_lang}翻到{to_lang}。", "麻烦把{from_lang}写的{doc}翻译成{to_lang}。",
    ], tzh=["{doc} {from_lang}译{to_lang}", "{from_lang}转{to_lang}：{doc}"], pen=[
        "Translate it from {from_lang} into {to_lang}.", "Can you put it into {to_lang}? It's in {from_lang} now.",
        "I need it in {to_lang}; the original is {from_lang}.", "Please translate that from {from_lang} to {to_lang}.",
        "Convert it from {from_lang} to {to_lang}.",
    ], pzh=[
        "把它从{from_lang}翻译成{to_lang}。", "这个能从{from_lang}翻成{to_lang}吗？", "我需要它的{to_lang}版本，原文是{from_lang}。",
        "把这个由{from_lang}转成{to_lang}。", "帮我把它从{from_lang}译成{to_lang}。",
    ], ren=[
        "Here's your {doc} in {to_lang}. I translated from the {from_lang} original and adjusted idioms so it reads naturally rather than word for word.",
        "Translated into {to_lang}. A couple of {from_lang} expressions have no direct equivalent, so I used the closest natural phrasing.",
    ], rzh=[
        "这是译成{to_lang}的{doc}，根据{from_lang}原文意译，调整了习惯表达，读起来更自然。",
        "已翻译成{to_lang}。有几处{from_lang}的说法没有直接对应，我用了最接近的自然表达。",
    ]),
    Q("title", ["doc", "tone"], ent="doc", deps=["doc"], follow=["tone"], en=[
        "Suggest a {tone} title for my {doc}.", "What would be a good {tone} headline for this {doc}?",
        "Give me a {tone} title for the {doc}.", "I need a title for my {doc} that feels {tone}.",
        "Can you come up with a {tone} heading for this {doc}?", "Propose a {tone}-sounding title for the {doc}.",
        "What's a catchy but {tone} name for this {doc}?", "Help me title my {doc}; it should sound {tone}.",
    ], ten=["{tone} title for {doc}", "title ideas {doc}, {tone}"], zh=[
        "给我的{doc}起一个{tone}的标题。", "这份{doc}用什么{tone}的标题比较好？", "帮这篇{doc}想个{tone}一点的标题。",
        "我需要一个听起来{tone}的{doc}标题。", "能为这份{doc}拟一个{tone}风格的题目吗？", "{doc}的标题想要{tone}一些，给个建议。",
        "请给{doc}取个{tone}的名字。", "这篇{doc}配什么样的{tone}标题合适？",
    ], tzh=["{doc}标题 {tone}", "{tone}风格{doc}标题"], pen=[
        "Suggest a {tone} title for it.", "What would be a good {tone} headline for it?", "Give it a {tone} title.",
        "I need a {tone} title for that.", "Can you come up with a {tone} heading for it?",
    ], pzh=[
        "给它起个{tone}的标题。", "这个用什么{tone}的标题好？", "帮它想个{tone}一点的题目。", "给这个拟一个{tone}风格的标题。",
        "它的标题想要{tone}一些，给个建议。",
    ], ren=[
        "Here are three {tone} options for your {doc}: one short and direct, one that leads with the benefit, and one phrased as a question. I'd go with the first.",
        "A {tone} title works best when it names the outcome. For this {doc}, lead with the main result and keep it under ten words.",
    ], rzh=[
        "给你的{doc}拟了三个{tone}风格的标题：一个简短直接，一个突出亮点，一个用提问的方式。个人推荐第一个。",
        "{tone}风格的标题最好直接点出结果，这份{doc}建议用主要成果开头，控制在十五个字以内。",
    ]),
], ["rewrite", "rewrite", "rewrite", "translate"], reqs=DOC_REQS, generic=["shorter"],
    topic=("your {doc}", "你的{doc}", "minutes", "分钟", 5), weight=1.2)

# ---------------------------------------------------------------- shopping
PRODUCTS = Spec("product", "product_recommendation", ["category", "price", "feature", "use"], [
    Q("recommend", ["category", "price", "feature"], ent="category", reqs=True, later=False, follow=["price", "feature"], en=[
        "Recommend a {category} under ${price} with {feature}.",
        "What's a good {category} with {feature} for less than ${price}?",
        "I'm looking for a {category} that has {feature}. My budget is ${price} max.",
        "Which {category} would you suggest under ${price}? It must have {feature}.",
        "What's the best {category} with {feature} that costs under ${price}?",
        "Help me pick a {category} below ${price} that offers {feature}.",
        "Any {category} recommendations with {feature}, staying under ${price}?",
        "I want to buy a {category} with {feature} and spend no more than ${price}. What should I get?",
    ], ten=["{category} under ${price}, {feature}", "best {category} <${price} w/ {feature}"], zh=[
        "推荐一款{price}元以内、{feature}的{category}。",
        "有没有{feature}、价格不超过{price}元的{category}？",
        "想买个{category}，要{feature}，预算最多{price}元。",
        "{price}元以下，{feature}的{category}买哪款好？",
        "帮我挑一款{feature}的{category}，预算{price}元以内。",
        "{price}块以内有什么{feature}的{category}值得买？",
        "求推荐{category}：{feature}，{price}元封顶。",
        "预算{price}元以内，想要{feature}的{category}，选哪个？",
    ], tzh=["{category} {price}内 {feature}", "{price}以内{feature}{category}推荐"], ren=[
        "Under ${price}, look at mid-range {category} models from well-reviewed brands; prioritize {feature} and check recent reviews for reliability. Shortlist two or three and compare warranty terms.",
        "For a {category} with {feature} under ${price}, last year's flagship models are often the best value right now. Avoid the cheapest no-name options.",
    ], rzh=[
        "{price}元以内的{category}，建议看口碑好的中端型号，优先满足{feature}，再看近期评价和保修政策，挑两三款对比一下就好。",
        "{price}元以内又要{feature}的{category}，去年的旗舰款现在通常最划算，尽量别买太便宜的杂牌。",
    ]),
    Q("compare", ["brand_a", "brand_b", "category", "use"], ent="category", sym=("brand_a", "brand_b"), ctxfree=True,
      follow=["use"], nochange=["category"], en=[
        "Is the {brand_a} or the {brand_b} {category} better for {use}?",
        "{brand_a} vs {brand_b} {category}: which is better for {use}?",
        "For {use}, should I get a {brand_a} or a {brand_b} {category}?",
        "Between {brand_a} and {brand_b}, which {category} suits {use} better?",
        "Which would you pick for {use}, a {brand_a} {category} or a {brand_b} one?",
        "Comparing {brand_a} and {brand_b} {category} models, which wins for {use}?",
        "I'm torn between {brand_a} and {brand_b} for a {category}. Which is better for {use}?",
        "Which {category} brand is better for {use}: {brand_a} or {brand_b}?",
    ], ten=["{brand_a} or {brand_b} {category} for {use}?", "{category}: {brand_a} vs {brand_b}, {use}"], zh=[
        "{use}的话，{brand_a}和{brand_b}的{category}哪个更好？",
        "{brand_a}跟{brand_b}的{category}，哪个更适合{use}？",
        "买{category}，{brand_a}和{brand_b}哪个更适合{use}？",
        "{brand_a}和{brand_b}的{category}比一比，{use}选哪个？",
        "纠结{brand_a}还是{brand_b}的{category}，主要是{use}，怎么选？",
        "{category}选{brand_a}好还是{brand_b}好？要适合{use}的。",
        "对比一下{brand_a}和{brand_b}的{category}，哪款更适合{use}？",
        "适合{use}的{category}，{brand_a}和{brand_b}你会选哪个？",
    ], tzh=["{brand_a} vs {brand_b} {category} {use}", "{category} {brand_a}还是{brand_b}？{use}"], pen=[
        "Is {brand_a} or {brand_b} better for {use}?", "Between {brand_a} and {brand_b}, which one is better for {use}?",
        "For {use}, {brand_a} or {brand_b}?", "Which brand would you pick for {use}, {brand_a} or {brand_b}?",
        "{brand_a} vs {brand_b} for {use}: which one?",
    ], pzh=[
        "{brand_a}和{brand_b}哪个更适合{use}？", "适合{use}的话，选{brand_a}还是{brand_b}？", "{brand_a}跟{brand_b}比，{use}哪个好？",
        "如果是{use}，{brand_a}和{brand_b}你选哪个？", "主要是{use}的话，{brand_a}还是{brand_b}？",
    ], ren=[
        "For {use}, both {brand_a} and {brand_b} make solid {category} models. Pick {brand_a} if build quality matters most and {brand_b} if you want more features for the money.",
        "It's close. For {use}, compare the specific {brand_a} and {brand_b} models on warranty and after-sales service, since the core performance is similar.",
    ], rzh=[
        "如果是{use}，{brand_a}和{brand_b}的{category}都不错：看重做工选{brand_a}，看重性价比和功能选{brand_b}。",
        "两家差距不大。{use}的话，建议对比{brand_a}和{brand_b}具体型号的保修和售后，核心性能差不多。",
    ]),
    Q("worth", ["category", "feature", "use"], ent="category", ctxfree=True, follow=["use", "feature"], en=[
        "Is a {category} with {feature} worth it for {use}?",
        "Does {feature} on a {category} justify the extra cost for {use}?",
        "For {use}, is it worth paying more for a {category} with {feature}?",
        "Should I spend extra on {feature} in a {category} if it's for {use}?",
        "How much does {feature} matter in a {category} for {use}?",
        "Is {feature} a must-have in a {category} for {use}, or can I skip it?",
        "Is it worth upgrading to a {category} with {feature} for {use}?",
        "If I mainly need it for {use}, is a {category} with {feature} worth the money?",
    ], ten=["{category} {feature} worth it for {use}?", "{feature} worth it? {category}, {use}"], zh=[
        "{use}的话，{feature}的{category}值得买吗？",
        "{category}是不是{feature}，对{use}来说差别大吗？",
        "为了{feature}多花钱买{category}，{use}值不值？",
        "主要是{use}，{category}有必要选{feature}的吗？",
        "对{use}来说，{category}{feature}重要吗？",
        "{use}买{category}，{feature}是刚需吗？",
        "{feature}的{category}贵一些，{use}划算吗？",
        "如果是{use}，{category}要不要为{feature}加钱？",
    ], tzh=["{category} {feature} 值吗 {use}", "{use} {category}要{feature}吗"], pen=[
        "Is {feature} worth it for {use}?", "For {use}, is it worth paying extra for {feature}?",
        "Does {feature} matter much for {use}?", "Should I spend more to get {feature} if it's for {use}?",
        "Is {feature} a must-have for {use}?",
    ], pzh=[
        "{use}的话，{feature}值得加钱吗？", "{feature}对{use}来说重要吗？", "主要是{use}，有必要选{feature}的吗？",
        "为了{feature}多花钱，{use}划算吗？", "如果是{use}，{feature}是刚需吗？",
    ], ren=[
        "For {use}, {feature} is worth it on a {category} if you'll rely on it daily; otherwise a cheaper model is fine. The price gap is usually about ${n1}.",
        "Honestly, for {use} I'd prioritize {feature} only if the price difference is small. Most mid-range {category} models are good enough without it.",
    ], rzh=[
        "如果是{use}而且天天用，{category}选{feature}的款是值得的；偶尔用的话买便宜款就行，差价一般在{n1}元左右。",
        "说实话，{use}的话只有差价不大时才建议为{feature}加钱，大部分中端{category}不带这个也够用。",
    ]),
], ["recommend", "recommend", "recommend", "compare"], reqs=PRODUCT_REQS, generic=["price", "alternatives"],
    topic=("the {category}", "这款{category}", "days", "天", 1), weight=1.3)

# ---------------------------------------------------------------- small talk
CHAT = Spec("chat", "chitchat", ["subject"], [
    Q("joke", ["subject"], ent="subject", ctxfree=True, follow=["subject"], en=[
        "Tell me a joke about {subject}.", "Got any jokes about {subject}?", "Make me laugh with a joke about {subject}.",
        "Do you know a funny joke involving {subject}?", "I need a good joke about {subject}.",
        "Can you come up with a joke about {subject}?", "Say something funny about {subject}, a joke maybe.",
        "What's your best joke about {subject}?",
    ], ten=["joke about {subject}", "{subject} joke pls"], zh=[
        "讲个关于{subject}的笑话。", "有没有跟{subject}有关的笑话？", "来个{subject}的笑话逗我笑一下。",
        "你知道什么关于{subject}的好笑段子吗？", "我想听一个{subject}相关的笑话。", "能编个关于{subject}的笑话吗？",
        "说个{subject}的笑话呗。", "给我讲一个和{subject}有关的笑话。",
    ], tzh=["{subject}笑话", "来个{subject}段子"], pen=[
        "Tell me a joke about that.", "Got a joke about it?", "Can you make a joke about that?",
        "Now a joke on the same topic.", "What's a funny joke about that?",
    ], pzh=[
        "讲个关于这个的笑话。", "有相关的笑话吗？", "那就这个话题来个笑话。", "能拿它编个笑话吗？", "说个跟它有关的笑话。",
    ], ren=[
        "Here's one: I tried to write a serious essay about {subject}, but it kept turning into a stand-up routine. Want another?",
        "Okay: {subject} walked into a bar. The bartender said, \"We don't serve your kind here.\" Fair enough, it was a pretty abstract bar.",
    ], rzh=[
        "来一个：我本来想写一篇关于{subject}的严肃文章，结果写着写着变成了脱口秀稿子。还想听吗？",
        "有一天{subject}走进一家酒吧，酒保说：“我们这儿不招待你这种。”想想也是，那是一家很抽象的酒吧。",
    ]),
    Q("fact", ["subject"], ent="subject", ctxfree=True, follow=["subject"], en=[
        "Tell me a fun fact about {subject}.", "What's an interesting fact about {subject}?",
        "Share something surprising about {subject}.", "Do you know any cool trivia about {subject}?",
        "Give me one fascinating fact about {subject}.", "I'd love to learn something unusual about {subject}.",
        "What's something most people don't know about {subject}?", "Hit me with a fun fact about {subject}.",
    ], ten=["fun fact {subject}", "{subject} trivia?"], zh=[
        "讲一个关于{subject}的冷知识。", "{subject}有什么有趣的小知识？", "说点关于{subject}让人意外的事。",
        "你知道{subject}有什么好玩的冷知识吗？", "给我分享一个关于{subject}的有趣事实。", "我想了解点{subject}不为人知的小知识。",
        "关于{subject}，有什么大多数人不知道的？", "来个{subject}相关的冷知识。",
    ], tzh=["{subject}冷知识", "{subject} 有趣知识"], pen=[
        "Tell me a fun fact about that.", "What's an interesting fact about it?", "Any cool trivia about that?",
        "Share something surprising about it.", "What's something people don't know about that?",
    ], pzh=[
        "讲个关于这个的冷知识。", "它有什么有趣的小知识？", "关于这个有什么冷知识吗？", "说点它让人意外的事。",
        "这个有什么大多数人不知道的？",
    ], ren=[
        "Here's one about {subject}: it shows up in folklore from dozens of cultures, often with completely opposite meanings.",
        "A fun one: people have been writing about {subject} for thousands of years, and some of the oldest surviving poems mention it.",
    ], rzh=[
        "关于{subject}有个冷知识：它在几十种文化的民间传说里都出现过，而且寓意常常截然相反。",
        "说个有意思的：人类写{subject}已经写了几千年，一些现存最古老的诗歌里就提到过它。",
    ]),
    Q("poem", ["subject", "lines"], ent="subject", ctxfree=True, follow=["lines", "subject"], en=[
        "Write a {lines}-line poem about {subject}.", "Can you compose a {lines}-line poem on {subject}?",
        "I'd like a short poem about {subject}, {lines} lines long.", "Give me {lines} lines of poetry about {subject}.",
        "Write me a poem about {subject}, and keep it to {lines} lines.",
        "Compose a little poem on the theme of {subject}, {lines} lines.",
        "Could you write {lines} lines of verse about {subject}?", "Make up a {lines}-line poem that's about {subject}.",
    ], ten=["{lines}-line poem {subject}", "poem, {subject}, {lines} lines"], zh=[
        "写一首关于{subject}的{lines}行小诗。", "能以{subject}为题写首{lines}行的诗吗？", "帮我写{lines}行关于{subject}的诗。",
        "来一首写{subject}的诗，{lines}行就好。", "以{subject}为主题，作一首{lines}行的诗。",
        "给我写首诗，主题是{subject}，一共{lines}行。", "我想要一首{lines}行的小诗，写{subject}的。",
        "围绕{subject}写一首{lines}行的短诗吧。",
    ], tzh=["{subject} 诗 {lines}行", "写{lines}行诗：{subject}"], pen=[
        "Write a {lines}-line poem about it.", "Can you write {lines} lines of poetry about that?",
        "Now a {lines}-line poem on the same topic.", "Give me a {lines}-line poem about that.",
        "Make it a {lines}-line poem about it.",
    ], pzh=[
        "以这个为题写首{lines}行的诗。", "写{lines}行关于它的诗。", "就这个话题写一首{lines}行的小诗。", "给它写首{lines}行的诗吧。",
        "围绕它写{lines}行诗。",
    ], ren=[
        "Here's a {lines}-line poem about {subject}. It opens with a quiet image, turns to a memory in the middle, and ends on a hopeful note.",
        "A {lines}-line poem on {subject}, written in loose rhyme: the first half describes it, the second half asks what it means to us.",
    ], rzh=[
        "给你写了一首{lines}行的小诗，写{subject}：开头是一个安静的画面，中段转向回忆，结尾落在希望上。",
        "一首{lines}行的诗，主题是{subject}，前半段写景，后半段写它对我们意味着什么。",
    ]),
], ["joke", "fact", "poem"], generic=["shorter"], topic=("that one", "这个", "minutes", "分钟", 1), weight=0.9)

# ---------------------------------------------------------------- live data
REALTIME = Spec("realtime", "realtime", [], [
    Q("weather_rt", ["city", "day"], ent="city", ctxfree=True, follow=["day", "city"], en=[
        "What's the weather in {city} {day}?", "What's the forecast for {city} {day}?",
        "How's the weather looking in {city} {day}?", "Can you check the weather in {city} {day}?",
        "What will the weather be like in {city} {day}?", "Tell me the weather forecast for {city} {day}.",
        "Is the weather going to be nice in {city} {day}?", "Give me the weather in {city} {day}.",
    ], ten=["{city} weather {day}", "weather {city} {day}?"], zh=[
        "{city}{day}天气怎么样？", "{day}{city}的天气预报是什么？", "帮我查一下{city}{day}的天气。", "{day}{city}天气如何？",
        "{city}{day}会是什么天气？", "想知道{city}{day}的天气情况。", "{city}{day}的天气预报给我看看。", "{city}{day}天气好吗？",
    ], tzh=["{city} {day} 天气", "{day}{city}天气？"], pen=[
        "What's the weather there {day}?", "What's the forecast there {day}?", "How's the weather looking there {day}?",
        "What will it be like there {day}?", "And the weather there {day}?",
    ], pzh=[
        "那边{day}天气怎么样？", "{day}那里天气如何？", "那儿{day}的天气预报呢？", "{day}那边会是什么天气？", "那里{day}天气好吗？",
    ], ren=[
        "{day} in {city}: partly cloudy with a high around {n3}°C and a low of {n5}°C, and a {p10}% chance of showers.",
        "The forecast for {city} {day} is mostly sunny, {n5} to {n3}°C, with light wind. No umbrella needed.",
    ], rzh=[
        "{city}{day}多云间晴，最高气温约{n3}°C，最低{n5}°C，降水概率{p10}%。",
        "{city}{day}以晴为主，气温{n5}到{n3}°C，微风，不用带伞。",
    ]),
    Q("stock", ["company"], ent="company", ctxfree=True, follow=["company"], en=[
        "What's {company}'s stock price right now?", "How much is {company} stock trading at today?",
        "What's the current share price of {company}?", "Can you check where {company} shares are trading?",
        "What's {company} trading at at the moment?", "How is {company}'s stock priced today?",
        "Give me the latest quote for {company} stock.", "What does one {company} share cost right now?",
    ], ten=["{company} stock price", "{company} share price now?"], zh=[
        "{company}现在股价多少？", "{company}的股票今天多少钱一股？", "查一下{company}最新的股价。", "{company}股价目前是多少？",
        "{company}今天的股票报价是多少？", "帮我看看{company}现在的股价。", "{company}的股票现在交易价格多少？", "现在买一股{company}要多少钱？",
    ], tzh=["{company} 股价", "{company}现价？"], pen=[
        "What's its stock price right now?", "How much are its shares trading at?", "And its current share price?",
        "Where is that stock trading now?", "What's it trading at today?",
    ], pzh=[
        "它现在股价多少？", "那它的股价呢？", "这家现在股价是多少？", "它的股票今天多少钱一股？", "查一下它的最新股价。",
    ], ren=[
        "{company} is trading at about {n1} per share right now, up {n2}.{n6}% on the day. Quotes may be delayed by about 15 minutes.",
        "The latest quote for {company} is around {n1}, down {n6}.{n2}% since the open.",
    ], rzh=[
        "{company}最新报价约{n1}，今天涨了{n2}.{n6}%，行情有约15分钟延迟。",
        "{company}目前每股约{n1}，较开盘下跌{n6}.{n2}%。",
    ]),
    Q("exchange", ["amount", "cur_a", "cur_b"], pair=("cur_a", "cur_b"), ctxfree=True, follow=["amount", "cur_b"], en=[
        "How much is {amount} {cur_a} in {cur_b} right now?", "Convert {amount} {cur_a} to {cur_b}.",
        "What do {amount} {cur_a} get me in {cur_b} today?", "If I exchange {amount} {cur_a}, how many {cur_b} do I get?",
        "What's {amount} {cur_a} in {cur_b} at today's rate?", "What's {amount} {cur_a} worth in {cur_b}?",
        "Can you tell me how many {cur_b} {amount} {cur_a} is?", "I have {amount} {cur_a}. How much is that in {cur_b}?",
    ], ten=["{amount} {cur_a} -> {cur_b}", "{amount} {cur_a} in {cur_b}?"], zh=[
        "{amount}{cur_a}现在能换多少{cur_b}？", "把{amount}{cur_a}换算成{cur_b}是多少？", "今天{amount}{cur_a}等于多少{cur_b}？",
        "我有{amount}{cur_a}，换成{cur_b}有多少？", "{amount}{cur_a}兑{cur_b}，按今天汇率是多少？", "帮我算下{amount}{cur_a}合多少{cur_b}。",
        "{amount}{cur_a}能兑换成多少{cur_b}？", "按现在的汇率，{amount}{cur_a}是多少{cur_b}？",
    ], tzh=["{amount}{cur_a}换{cur_b}", "{amount} {cur_a} 兑 {cur_b}"], ren=[
        "At the current rate, {amount} {cur_a} is roughly {n1} {cur_b}. Banks and exchange counters usually add a 1-3% margin on top.",
        "{amount} {cur_a} comes to about {n1} {cur_b} at today's mid-market rate.",
    ], rzh=[
        "按当前汇率，{amount}{cur_a}大约可以换{n1}{cur_b}，银行或兑换点通常还会加收1%到3%的差价。",
        "按今天的中间价，{amount}{cur_a}约合{n1}{cur_b}。",
    ]),
    Q("score", ["team"], ent="team", ctxfree=True, follow=["team"], en=[
        "What was the score in the last game {team} played?", "How did {team} do in their most recent match?",
        "Did {team} win their last game? What was the score?", "What was the final score when {team} last played?",
        "Can you tell me the result of the latest match involving {team}?", "How did the most recent game for {team} end?",
        "What's the latest result for {team}?", "Who won the last game {team} played, and by how much?",
    ], ten=["{team} last game score", "{team} result?"], zh=[
        "{team}上一场比分多少？", "{team}最近一场比赛结果怎么样？", "{team}上场赢了吗？比分是多少？", "查一下{team}最新一场的比分。",
        "{team}最近那场比赛打得怎么样？", "{team}上一场比赛最后比分是多少？", "告诉我{team}最近一场的赛果。", "{team}最新战况如何？",
    ], tzh=["{team} 比分", "{team}上场结果"], pen=[
        "What was the score in their last game?", "How did they do in their most recent match?",
        "Did they win last time? What was the score?", "What's their latest result?",
        "How did their last game end?",
    ], pzh=[
        "他们上一场比分多少？", "他们最近一场结果怎么样？", "他们上场赢了吗？", "他们最新战况如何？", "他们上一场打得怎么样？",
    ], ren=[
        "In their most recent game, {team} finished {n4}-{n2}. Check a live sports site for box scores, since results update quickly.",
        "{team} lost their last match {n2}-{n4} after leading at halftime.",
    ], rzh=[
        "{team}最近一场以{n4}比{n2}结束，详细数据可以看体育网站的实时比分。",
        "{team}上一场{n2}比{n4}输了，上半场其实还领先。",
    ]),
], ["weather_rt", "weather_rt", "stock", "exchange", "score"], topic=None, weight=1.2)

# ---------------------------------------------------------------- health
MEDICAL = Spec("medical", "medical_legal", ["symptom", "duration"], [
    Q("symptom", ["symptom", "duration"], ent="symptom", reqs=True, later=False, follow=["duration"], en=[
        "I've had {symptom} for {duration} days. Should I see a doctor?",
        "It's been {duration} days with {symptom}. Do I need to get it checked?",
        "Is {symptom} lasting {duration} days a reason to see a doctor?",
        "I've been dealing with {symptom} for {duration} days now. Doctor, or wait it out?",
        "After {duration} days of {symptom}, should I book an appointment?",
        "Should I be worried about {symptom} that has lasted {duration} days?",
        "{duration} days of {symptom}: when should I see a doctor?",
        "I've had {symptom} for the past {duration} days. Do I need medical attention?",
    ], ten=["{symptom} {duration} days, see doctor?", "{duration} days {symptom}, doctor?"], zh=[
        "我{symptom}已经{duration}天了，需要去看医生吗？", "{symptom}持续{duration}天了，要不要去医院查一下？",
        "连续{duration}天{symptom}，是不是该看医生了？", "{symptom}{duration}天还没好，需要就医吗？",
        "我这{duration}天一直{symptom}，去医院还是再观察观察？", "{symptom}拖了{duration}天，有必要挂号吗？",
        "已经{symptom}{duration}天了，要看医生吗？", "{duration}天了{symptom}都没缓解，该去看病吗？",
    ], tzh=["{symptom}{duration}天 要看医生吗", "{symptom} {duration}天了 去医院？"], ren=[
        "{symptom} for {duration} days is worth getting checked, especially if it's getting worse or comes with fever or other new symptoms. Seek urgent care if it suddenly becomes severe.",
        "After {duration} days, it's reasonable to see a doctor about {symptom}. Meanwhile rest, stay hydrated, and note anything that makes it better or worse.",
    ], rzh=[
        "{symptom}持续{duration}天，建议去医院看一下，尤其是症状加重或伴随发烧等情况时。如果突然加重请及时就医。",
        "已经{duration}天了，{symptom}还是去看下医生比较稳妥。这期间注意休息、多喝水，记录一下什么情况下会加重。",
    ]),
    Q("dose", ["drug", "condition", "age"], ent="drug", ctxfree=True, follow=["age"], en=[
        "What's the usual dose of {drug} for {condition} in a {age}-year-old?",
        "How much {drug} can a {age}-year-old take for {condition}?",
        "For {condition}, what {drug} dosage is typical for someone aged {age}?",
        "What's the recommended {drug} dose for {condition} if the patient is {age} years old?",
        "How many milligrams of {drug} should a {age}-year-old take for {condition}?",
        "What's a safe amount of {drug} for {condition} at age {age}?",
        "Dosage question: {drug} for {condition}, {age} years old. How much?",
        "Someone who is {age} has {condition}. How much {drug} is appropriate?",
    ], ten=["{drug} dose {condition} age {age}", "{drug} {condition} {age}yo dose?"], zh=[
        "{age}岁的人{condition}吃{drug}，一般用量是多少？", "{condition}的话，{age}岁能吃多少{drug}？",
        "{age}岁{condition}，{drug}的常规剂量是多少？", "家里{age}岁的人{condition}，{drug}吃多少算安全？",
        "{drug}治{condition}，{age}岁一次吃多少？", "请问{age}岁患者因{condition}服用{drug}，推荐剂量是多少？",
        "{condition}想吃{drug}，{age}岁的话剂量怎么掌握？", "{drug}用于{condition}，{age}岁该吃多少？",
    ], tzh=["{drug} {condition} {age}岁 剂量", "{age}岁 {condition} {drug}吃多少"], ren=[
        "Dosing of {drug} for {condition} depends on weight and age; for a {age}-year-old, follow the package label or a pharmacist's advice and don't exceed the daily maximum.",
        "For {condition} at age {age}, use the label dose of {drug} for that age group and space doses evenly. If it doesn't help within a few days, see a doctor.",
    ], rzh=[
        "{drug}用于{condition}的剂量要根据年龄和体重来定，{age}岁请严格按说明书或药师建议服用，不要超过每日最大剂量。",
        "{age}岁因{condition}服用{drug}，按说明书上对应年龄段的剂量、间隔均匀服用即可，几天不见好请就医。",
    ]),
    Q("interaction", ["drug", "drug2"], ent="drug", sym=("drug", "drug2"), ctxfree=True, en=[
        "Can I take {drug} together with {drug2}?", "Is it safe to combine {drug} and {drug2}?",
        "Is there any interaction between {drug} and {drug2}?", "Is it okay to take {drug} and {drug2} at the same time?",
        "Do {drug} and {drug2} interact badly?", "Can {drug} and {drug2} be taken on the same day?",
        "Are there risks in mixing {drug} with {drug2}?", "Should I avoid taking {drug} with {drug2}?",
    ], ten=["{drug} + {drug2} ok?", "{drug} with {drug2} safe?"], zh=[
        "{drug}和{drug2}能一起吃吗？", "{drug}跟{drug2}同时服用安全吗？", "{drug}和{drug2}之间有相互作用吗？",
        "吃{drug}的同时能吃{drug2}吗？", "{drug}和{drug2}一起用会不会有问题？", "同一天服用{drug}和{drug2}可以吗？",
        "{drug}搭配{drug2}有风险吗？", "{drug}和{drug2}需要分开吃吗？",
    ], tzh=["{drug}+{drug2} 能一起吃吗", "{drug} {drug2} 冲突吗"], ren=[
        "{drug} and {drug2} are often fine together, but it depends on your dose and health conditions. Check with a pharmacist, and space them a few hours apart if advised.",
        "There's no major known interaction between {drug} and {drug2} for most people, but tell your pharmacist about everything you take.",
    ], rzh=[
        "{drug}和{drug2}很多情况下可以一起用，但要看剂量和个人情况，建议先问药师，必要时间隔几个小时服用。",
        "对大多数人来说，{drug}和{drug2}没有严重的相互作用，但最好把你在吃的药都告诉药师。",
    ]),
], ["symptom", "symptom", "dose", "interaction"], reqs=MED_REQS, weight=0.7)

LEGAL = Spec("legal", "medical_legal", ["region"], [
    Q("landlord", ["action", "region"], ent="region", ctxfree=True, reqs=True, follow=["region"], en=[
        "Can my landlord {action} without notice in {region}?",
        "In {region}, is a landlord allowed to {action} without giving notice?",
        "Is it legal for a landlord in {region} to {action} with no warning?",
        "My landlord wants to {action} without telling me first. Is that allowed in {region}?",
        "Does the law in {region} let landlords {action} without prior notice?",
        "I live in {region}. Can the landlord {action} without notifying me?",
        "Are landlords in {region} permitted to {action} without advance notice?",
        "Quick legal question: can a landlord {action} without notice in {region}?",
    ], ten=["{region} landlord {action} no notice legal?", "landlord {action} w/o notice, {region}?"], zh=[
        "在{region}，房东可以不提前通知就{action}吗？", "{region}的房东不打招呼就{action}，合法吗？",
        "房东没通知我就要{action}，在{region}这样允许吗？", "{region}法律允许房东不通知租客直接{action}吗？",
        "我住在{region}，房东能不事先告知就{action}吗？", "在{region}租房，房东不提前说就{action}算违法吗？",
        "{region}的房东有权不通知就{action}吗？", "请问{region}这边，房东未经通知{action}是否合法？",
    ], tzh=["{region} 房东不通知{action} 合法吗", "房东直接{action}，{region}合法？"], ren=[
        "In {region}, landlords generally must give written notice before doing that, and the notice period is set by local tenancy law. Keep records and contact a tenant advice service if it happens.",
        "Usually not. Tenancy rules in {region} require advance notice for that, with narrow exceptions for emergencies. Your lease can't override the statutory minimum.",
    ], rzh=[
        "在{region}，房东要这样做一般需要提前书面通知租客，具体通知期限以当地租赁法规为准。建议保留记录，必要时联系租客援助机构。",
        "一般不行。{region}的租赁规定要求提前通知，只有紧急情况等少数例外，租约也不能低于法定最低要求。",
    ]),
    Q("lawyer", ["legal_task", "region"], ent="region", ctxfree=True, follow=["region"], en=[
        "Do I need a lawyer to {legal_task} in {region}?", "Can I {legal_task} in {region} without hiring a lawyer?",
        "Is a lawyer required if I want to {legal_task} in {region}?",
        "In {region}, can someone {legal_task} on their own, or is a lawyer necessary?",
        "Should I get a lawyer to {legal_task}, or can I do it myself in {region}?",
        "Is it possible to {legal_task} in {region} without legal representation?",
        "Do people in {region} usually need an attorney to {legal_task}?",
        "I want to {legal_task} in {region}. Do I have to involve a lawyer?",
    ], ten=["{legal_task} {region} need lawyer?", "lawyer needed to {legal_task}? {region}"], zh=[
        "在{region}{legal_task}需要请律师吗？", "在{region}不请律师能自己{legal_task}吗？", "{region}这边{legal_task}，一定要律师吗？",
        "想在{region}{legal_task}，必须找律师吗？", "{legal_task}的话，在{region}自己办可以吗，还是得请律师？",
        "在{region}{legal_task}没有律师代理行不行？", "{region}的人{legal_task}一般需要律师吗？", "我打算在{region}{legal_task}，要不要请律师？",
    ], tzh=["{region} {legal_task} 要律师吗", "{legal_task}需要律师吗 {region}"], ren=[
        "In {region}, many people handle this without a lawyer in simple cases, using court or government self-help guides. If the other side has a lawyer or the stakes are high, a short consultation is worth it.",
        "It's not strictly required in {region}, but the paperwork is easy to get wrong. A one-off consultation is a good middle ground.",
    ], rzh=[
        "在{region}，简单情况下很多人不请律师也能自己办，可以参考法院或政府的自助指引；如果对方请了律师或涉及金额较大，建议至少咨询一次。",
        "在{region}这不是强制要求，但材料容易出错，做一次单次法律咨询是比较折中的办法。",
    ]),
], ["landlord", "landlord", "lawyer"], reqs=LEGAL_REQS, weight=0.6)

# ---------------------------------------------------------------- other: cooking
COOKING = Spec("cooking", "other", ["dish", "people"], [
    Q("recipe", ["dish", "people"], ent="dish", reqs=True, later=False, follow=["people"], en=[
        "How do I make {dish} for {people} people?", "Can you give me a {dish} recipe that serves {people}?",
        "I want to cook {dish} for {people}. What's the recipe?", "What's a good way to make {dish} for a group of {people}?",
        "I need a recipe for {dish}, {people} servings.", "I'm making {dish} for {people} people tonight. How should I do it?",
        "Walk me through cooking {dish} for {people}.",
        "What ingredients and steps do I need to make {dish} for {people} people?",
    ], ten=["{dish} recipe {people} servings", "{dish} for {people}, how?"], zh=[
        "{people}个人吃的{dish}怎么做？", "给我一个{people}人份的{dish}做法。", "我想给{people}个人做{dish}，菜谱是什么？",
        "做{people}人份的{dish}，需要哪些材料和步骤？", "{dish}怎么做？要够{people}个人吃。", "今晚要给{people}个人做{dish}，教我一下。",
        "一步步教我做{people}人份的{dish}。", "{people}人份{dish}的做法和用量是怎样的？",
    ], tzh=["{dish} {people}人份 做法", "{people}人{dish}怎么做"], ren=[
        "For {dish} serving {people}, prep everything first, cook the aromatics, then the main ingredients, and season at the end. It takes about {n7} minutes.",
        "Scale a standard {dish} recipe to {people} portions. The main thing is not to crowd the pan: cook in batches if needed.",
    ], rzh=[
        "{people}人份的{dish}：先把食材都备好，再按先爆香、后下主料、最后调味的顺序来，整体大约{n7}分钟。",
        "按标准{dish}的用量放大到{people}份即可，关键是锅里别放太满，必要时分批做。",
    ]),
    Q("cooktime", ["dish"], ent="dish", ctxfree=True, follow=["dish"], en=[
        "How long does {dish} take to make?", "What's the total cooking time for {dish}?",
        "How much time should I set aside to cook {dish}?", "Roughly how many minutes does {dish} need from start to finish?",
        "Is {dish} quick to make, or does it take hours?", "How long will it take me to cook {dish}?",
        "Start to finish, how long is {dish}?", "What's the prep plus cook time for {dish}?",
    ], ten=["{dish} cook time?", "how long {dish}"], zh=[
        "{dish}做一次要多长时间？", "{dish}从准备到出锅要多久？", "做{dish}大概得留多少时间？", "{dish}一共需要多少分钟？",
        "{dish}做起来快吗，还是要好几个小时？", "我做{dish}大概要花多久？", "{dish}的准备加烹饪时间是多少？", "做一道{dish}需要多久？",
    ], tzh=["{dish} 多久", "{dish}要做多长时间"], pen=[
        "How long does it take to make?", "What's the total cooking time?", "How much time should I set aside for it?",
        "How long will it take me?", "Start to finish, how long is it?",
    ], pzh=[
        "做这个要多长时间？", "从准备到出锅要多久？", "大概得留多少时间？", "一共需要多少分钟？", "我做它大概要花多久？",
    ], ren=[
        "{dish} takes about {n7} minutes in total, including prep. You can save time by chopping everything in advance.",
        "Plan on roughly {n7} minutes for {dish}; most of that is hands-off simmering or baking.",
    ], rzh=[
        "{dish}连准备带烹饪大约{n7}分钟，提前把食材切好能省不少时间。",
        "{dish}大概留{n7}分钟，其中大部分时间是炖或烤，不用一直守着。",
    ]),
    Q("substitute", ["ingredient", "dish"], ent="dish", ctxfree=True, follow=["ingredient"], en=[
        "What can I use instead of {ingredient} in {dish}?", "I'm out of {ingredient}. What's a good substitute in {dish}?",
        "Is there a replacement for {ingredient} when making {dish}?",
        "Can I make {dish} without {ingredient}? What would I use instead?",
        "What's the best swap for {ingredient} in a {dish} recipe?",
        "If I don't have {ingredient}, what should go into the {dish} instead?",
        "Is there any substitute for {ingredient} that works in {dish}?", "What could replace {ingredient} in {dish}?",
    ], ten=["{ingredient} substitute {dish}", "no {ingredient} for {dish}, swap?"], zh=[
        "做{dish}没有{ingredient}，可以用什么代替？", "{dish}里的{ingredient}能换成别的吗？",
        "家里{ingredient}用完了，做{dish}拿什么替代？", "做{dish}不放{ingredient}的话，用什么顶上？",
        "{dish}中的{ingredient}有什么替代品？", "{ingredient}缺了，做{dish}用什么代替？",
        "{dish}里{ingredient}最好的替代是什么？", "做{dish}时{ingredient}可以用什么替换？",
    ], tzh=["{dish} {ingredient} 替代", "没{ingredient}做{dish}用啥代"], pen=[
        "What can I use instead of {ingredient} in it?", "Is there a substitute for {ingredient} in that?",
        "What could replace {ingredient} in it?", "If I don't have {ingredient}, what should I use in it instead?",
        "Is there a swap for {ingredient} that works there?",
    ], pzh=[
        "里面的{ingredient}可以用什么代替？", "做这个没有{ingredient}的话，用什么替代？", "这道菜的{ingredient}能换成别的吗？",
        "这个菜里{ingredient}用什么顶上比较好？", "它里面的{ingredient}有什么替代品？",
    ], ren=[
        "In {dish}, you can usually replace {ingredient} with a similar-texture ingredient you have on hand; use a little less at first and adjust to taste.",
        "For {dish}, the closest swap for {ingredient} is whatever plays the same role (fat, acid, binder or seasoning). The flavor shifts slightly but it works.",
    ], rzh=[
        "做{dish}时，{ingredient}可以换成口感接近的食材，先少放一点再按口味调整，味道会略有不同但不影响成菜。",
        "{dish}里的{ingredient}可以用起同样作用的东西代替，比如同样提味或增稠的材料，风味会稍有变化。",
    ]),
], ["recipe", "recipe", "cooktime", "substitute"], reqs=COOK_REQS, generic=["price", "time", "alternatives"],
    topic=("the {dish}", "这道{dish}", "minutes", "分钟", 10), weight=0.55)


# ---------------------------------------------------------------- other: personal finance
def _fin(slots):
    a, r, y = slots["amount_f"], slots["rate"] / 100.0, slots["years"]
    i, n = r / 12, y * 12
    fv = a * (1 + r) ** y
    pmt = a * i / (1 - (1 + i) ** -n)
    mon = a * i / ((1 + i) ** n - 1)
    return {"fv": ("{:,.0f}".format(fv), "%d" % round(fv)), "pmt": ("{:,.0f}".format(pmt), "%d" % round(pmt)),
            "mon": ("{:,.0f}".format(mon), "%d" % round(mon))}


FINANCE = Spec("finance", "other", ["amount_f", "rate", "years"], [
    Q("compound", ["amount_f", "rate", "years"], ctxfree=True, follow=["years", "rate", "amount_f"], compute=_fin, en=[
        "If I invest ${amount_f} at {rate}% a year for {years} years, how much will I have?",
        "What does ${amount_f} grow to after {years} years at {rate}% annual interest?",
        "How much will ${amount_f} be worth in {years} years with a {rate}% yearly return?",
        "I put ${amount_f} in an account earning {rate}% per year. What's the balance after {years} years?",
        "If ${amount_f} compounds at {rate}% for {years} years, what's the final amount?",
        "Calculate the future value of ${amount_f} invested for {years} years at {rate}%.",
        "${amount_f} at {rate}% interest, compounded yearly for {years} years: how much at the end?",
        "How big will a ${amount_f} investment get in {years} years if it earns {rate}% annually?",
    ], ten=["${amount_f} @ {rate}% {years} yrs = ?", "future value ${amount_f}, {rate}%, {years}y"], zh=[
        "{amount_f}元按年化{rate}%投资{years}年，最后有多少钱？", "{amount_f}元存{years}年，年利率{rate}%，到期本息多少？",
        "每年收益{rate}%，{amount_f}元放{years}年会变成多少？", "我把{amount_f}元放进年化{rate}%的理财，{years}年后余额是多少？",
        "{amount_f}元按{rate}%复利滚{years}年，最终金额是多少？", "帮我算一下{amount_f}元投资{years}年、年化{rate}%的终值。",
        "本金{amount_f}元，年化收益率{rate}%，{years}年后能拿到多少？", "{amount_f}块按{rate}%的年收益复利{years}年，结果是多少？",
    ], tzh=["{amount_f}元 {rate}% {years}年 终值", "{amount_f} 年化{rate}% {years}年后多少"], ren=[
        "With annual compounding, ${amount_f} at {rate}% for {years} years grows to about ${fv}. That's before taxes and fees.",
        "You'd end up with roughly ${fv} after {years} years, assuming the {rate}% return is steady and compounded once a year.",
    ], rzh=[
        "按年复利计算，{amount_f}元以{rate}%的年化收益放{years}年，大约会变成{fv}元（未计税费）。",
        "假设每年稳定{rate}%、按年复利，{years}年后大约是{fv}元。",
    ]),
    Q("loan", ["amount_f", "rate", "years"], ctxfree=True, follow=["years", "rate"], compute=_fin, en=[
        "What's the monthly payment on a ${amount_f} loan at {rate}% over {years} years?",
        "If I borrow ${amount_f} at {rate}% for {years} years, how much do I pay each month?",
        "What's the monthly installment for a {years}-year, ${amount_f} loan at {rate}% interest?",
        "How much would I repay monthly on ${amount_f} borrowed at {rate}% for {years} years?",
        "Calculate the monthly payment: ${amount_f} principal, {rate}% rate, {years}-year term.",
        "A ${amount_f} loan at {rate}% APR over {years} years: what are the monthly payments?",
        "What will my monthly bill be if I take a ${amount_f} loan for {years} years at {rate}%?",
        "Borrowing ${amount_f} at {rate}% across {years} years: what's the monthly cost?",
    ], ten=["loan ${amount_f} {rate}% {years}y monthly?", "${amount_f} loan, {rate}%, {years} yrs, payment"], zh=[
        "贷款{amount_f}元，年利率{rate}%，分{years}年还，每月还多少？", "借{amount_f}元、利率{rate}%、期限{years}年，月供是多少？",
        "{years}年期的{amount_f}元贷款，利率{rate}%，每个月要还多少？", "我要是贷{amount_f}元，{rate}%的利率还{years}年，月供多少？",
        "帮我算月供：本金{amount_f}元，年利率{rate}%，{years}年。", "{amount_f}元贷款按{rate}%的利率分{years}年等额还款，每月多少？",
        "贷{amount_f}块钱{years}年，利率{rate}%，一个月还多少？", "借款{amount_f}元，年化{rate}%，{years}年还清，月还款额是多少？",
    ], tzh=["贷{amount_f} {rate}% {years}年 月供", "{amount_f}元贷款{years}年{rate}%月供？"], ren=[
        "For a ${amount_f} loan at {rate}% over {years} years with equal monthly payments, you'd pay about ${pmt} a month.",
        "The monthly payment comes to roughly ${pmt}, assuming a fixed {rate}% rate and a {years}-year amortizing loan.",
    ], rzh=[
        "贷款{amount_f}元、年利率{rate}%、{years}年等额本息，月供大约{pmt}元。",
        "按固定利率{rate}%、{years}年等额还款算，每月大约还{pmt}元。",
    ]),
    Q("savings", ["amount_f", "rate", "years"], ctxfree=True, follow=["years", "amount_f"], compute=_fin, en=[
        "How much do I need to save each month to reach ${amount_f} in {years} years at {rate}%?",
        "To have ${amount_f} in {years} years earning {rate}%, what should I put away monthly?",
        "What monthly deposit gets me to ${amount_f} after {years} years at {rate}% interest?",
        "I want ${amount_f} saved in {years} years. At {rate}% a year, how much per month?",
        "What monthly savings do I need for a ${amount_f} goal in {years} years, assuming {rate}% returns?",
        "If my savings earn {rate}%, how much must I add each month to hit ${amount_f} in {years} years?",
        "Reaching ${amount_f} in {years} years at {rate}%: what's the monthly contribution?",
        "How much per month should I invest at {rate}% to end up with ${amount_f} after {years} years?",
    ], ten=["save monthly for ${amount_f} in {years}y @ {rate}%", "${amount_f} goal, {years} yrs, {rate}%, monthly?"], zh=[
        "想{years}年后攒到{amount_f}元，年化{rate}%，每月要存多少？", "{years}年存够{amount_f}元，收益率{rate}%，每个月得存多少？",
        "按年化{rate}%算，每月定投多少{years}年后能有{amount_f}元？", "目标{years}年攒{amount_f}元，年收益{rate}%，月存多少？",
        "要在{years}年内存到{amount_f}元，利率{rate}%，每月存款额是多少？", "如果收益率是{rate}%，每月投多少才能{years}年后拿到{amount_f}元？",
        "{amount_f}元的目标，{years}年，年化{rate}%，每月需要存多少？", "我想{years}年后有{amount_f}元，按{rate}%的收益，每个月该存多少钱？",
    ], tzh=["{years}年攒{amount_f} {rate}% 月存多少", "目标{amount_f}元 {years}年 {rate}%"], ren=[
        "To reach ${amount_f} in {years} years at {rate}% a year, you'd need to save about ${mon} per month.",
        "Roughly ${mon} a month gets you to ${amount_f} in {years} years if the {rate}% return holds.",
    ], rzh=[
        "要在{years}年后攒到{amount_f}元、年化{rate}%，每月大约需要存{mon}元。",
        "如果{rate}%的收益稳定，每月存约{mon}元，{years}年后能到{amount_f}元。",
    ]),
], ["compound", "loan", "savings"], weight=0.5)

# ---------------------------------------------------------------- other: study
STUDY = Spec("study", "other", ["concept", "level"], [
    Q("explain", ["concept", "level"], ent="concept", ctxfree=True, follow=["level"], en=[
        "Explain {concept} to {level}.", "Can you explain {concept} in a way {level} would understand?",
        "How would you describe {concept} to {level}?", "I need a simple explanation of {concept} for {level}.",
        "Break down {concept} so that {level} can follow it.", "What's the easiest way to explain {concept} to {level}?",
        "Help me understand {concept}, pitched at the level of {level}.", "Teach {concept} like you're talking to {level}.",
    ], ten=["explain {concept} for {level}", "{concept}, explained for {level}"], zh=[
        "给{level}讲讲{concept}。", "用{level}能听懂的方式解释一下{concept}。", "怎么向{level}解释{concept}？",
        "我需要一个讲给{level}听的{concept}简单解释。", "把{concept}拆开讲，讲到{level}能听懂。", "用最通俗的话给{level}说明{concept}。",
        "帮我理解{concept}，按{level}的水平来讲。", "假设你在教{level}，讲讲什么是{concept}。",
    ], tzh=["{concept} 讲给{level}听", "{concept}，{level}版解释"], ren=[
        "Here's {concept} for {level}: start from an everyday example, name the key idea in one sentence, then walk through one small case step by step.",
        "Think of {concept} as a simple rule with consequences. For {level}, the best entry point is a concrete example before any definition.",
    ], rzh=[
        "给{level}讲{concept}：先从一个生活中的例子说起，用一句话点出核心概念，再一步步演示一个小例子，最后再给出正式定义。",
        "可以把{concept}理解成一条简单规则和它带来的结果。对{level}来说，先举具体例子，再讲定义最容易懂。",
    ]),
    Q("quiz", ["concept", "nq"], ent="concept", ctxfree=True, follow=["nq"], en=[
        "Give me {nq} practice questions on {concept}.", "Can you write {nq} quiz questions about {concept}?",
        "I'd like {nq} exercises to test myself on {concept}.", "Make a {nq}-question quiz on {concept}.",
        "Create {nq} practice problems covering {concept}.", "Quiz me with {nq} questions about {concept}.",
        "I need {nq} review questions on {concept} for studying.", "Could you put together {nq} test questions on {concept}?",
    ], ten=["{nq} questions {concept}", "quiz {concept} x{nq}"], zh=[
        "出{nq}道关于{concept}的练习题。", "能给我写{nq}道{concept}的测验题吗？", "我想要{nq}道题来检验自己对{concept}的掌握。",
        "做一份{nq}题的{concept}小测验。", "围绕{concept}出{nq}道练习题。", "用{nq}个问题考考我{concept}。",
        "复习{concept}，帮我准备{nq}道题。", "能整理{nq}道{concept}的考试题吗？",
    ], tzh=["{concept} 练习题 {nq}道", "{nq}道{concept}题"], pen=[
        "Give me {nq} practice questions on it.", "Can you write {nq} quiz questions about that?",
        "Quiz me with {nq} questions on it.", "Make a {nq}-question quiz on that topic.", "Now {nq} practice problems on it.",
    ], pzh=[
        "就这个出{nq}道练习题。", "能针对它写{nq}道测验题吗？", "用{nq}个问题考考我这个。", "围绕这个出{nq}道题。",
        "这个知识点给我来{nq}道题。",
    ], ren=[
        "Here are {nq} practice questions on {concept}, going from basic recall to one application problem at the end. Answers are listed after the last question.",
        "{nq} questions on {concept}: the first few check definitions, the rest ask you to apply the idea. Try them before looking at the answer key.",
    ], rzh=[
        "这里有{nq}道关于{concept}的练习题，从基础概念到最后一道应用题，答案附在最后。",
        "{nq}道{concept}的题：前几道考概念，后面考应用，建议做完再看答案。",
    ]),
], ["explain", "explain", "quiz"], weight=0.45)

# ---------------------------------------------------------------- other: fitness
FITNESS = Spec("fitness", "other", ["weeks", "goal_f", "minutes"], [
    Q("plan_fit", ["weeks", "goal_f", "minutes"], ent="goal_f", reqs=True, follow=["weeks", "minutes"], en=[
        "Give me a {weeks}-week plan to {goal_f}, with {minutes}-minute workouts.",
        "Can you design a {weeks}-week program to help me {goal_f}? Sessions should be {minutes} minutes.",
        "I want to {goal_f} in {weeks} weeks, training {minutes} minutes at a time. What's the plan?",
        "Build me a {weeks}-week training schedule to {goal_f}; each workout is {minutes} minutes.",
        "What should a {weeks}-week routine look like if my goal is to {goal_f} and I have {minutes} minutes per session?",
        "Help me {goal_f}: {weeks} weeks, {minutes} minutes per workout.",
        "Make a {weeks}-week workout plan for someone trying to {goal_f} with {minutes}-minute sessions.",
        "I've got {weeks} weeks and {minutes} minutes a session. How do I {goal_f}?",
    ], ten=["{weeks} wk plan {goal_f} {minutes}min", "plan: {goal_f}, {weeks} weeks, {minutes} min sessions"], zh=[
        "给我一个{weeks}周的计划，目标是{goal_f}，每次练{minutes}分钟。", "能帮我设计{weeks}周的训练方案吗？想{goal_f}，每次{minutes}分钟。",
        "我想在{weeks}周内{goal_f}，每次训练{minutes}分钟，怎么安排？", "帮我排一个{weeks}周的训练表，目标{goal_f}，每次{minutes}分钟。",
        "目标{goal_f}，时间{weeks}周，每次{minutes}分钟，计划怎么定？", "{weeks}周想{goal_f}，一次练{minutes}分钟，求训练计划。",
        "做一份{weeks}周、每次{minutes}分钟的训练计划，目标是{goal_f}。", "我有{weeks}周时间，每次能练{minutes}分钟，怎样才能{goal_f}？",
    ], tzh=["{weeks}周 {goal_f} 每次{minutes}分钟", "{goal_f}计划 {weeks}周/{minutes}分钟"], ren=[
        "Here's a {weeks}-week outline for that goal: build a base in the first third, add intensity in the middle, and taper slightly at the end. Each {minutes}-minute session starts with a warm-up and ends with mobility work.",
        "Train three or four times a week for {minutes} minutes, increasing the load about 5-10% each week. Over {weeks} weeks that's enough to reach the goal if you stay consistent.",
    ], rzh=[
        "这是{weeks}周、目标{goal_f}的计划框架：前三分之一打基础，中间逐步加强度，最后稍微减量。每次{minutes}分钟，先热身，最后做拉伸放松。",
        "每周练三到四次，每次{minutes}分钟，每周负荷增加5%到10%。坚持{weeks}周，{goal_f}是可以实现的。",
    ]),
], ["plan_fit"], reqs=FIT_REQS, weight=0.4)

# ---------------------------------------------------------------- other: trivia (role / relation shifts)
TRIVIA = Spec("trivia", "other", [], [
    Q("author", ["book"], ent="book", ctxfree=True, follow=["book"], partner="author_more", en=[
        "Who wrote {book}?", "Who is the author of {book}?", "Who's the writer behind {book}?", "{book} was written by whom?",
        "Do you know who authored {book}?", "Which author wrote {book}?", "Tell me who wrote the book {book}.",
        "I forgot who wrote {book}. Who was it?",
    ], ten=["{book} author?", "author of {book}"], zh=[
        "《{book}》是谁写的？", "《{book}》的作者是谁？", "谁写了《{book}》？", "《{book}》这本书出自谁之手？", "你知道《{book}》的作者吗？",
        "哪位作家写的《{book}》？", "告诉我《{book}》是谁写的。", "我忘了《{book}》的作者是谁了，是谁来着？",
    ], tzh=["《{book}》作者", "{book} 谁写的"], ren=["{book} was written by {fact}.", "That's {fact}; {book} is one of their best-known works."],
      rzh=["《{book}》的作者是{fact}。", "是{fact}写的，这也是其最有名的作品之一。"]),
    Q("author_more", ["book"], ent="book", ctxfree=True, follow=["book"], partner="author", en=[
        "What else did the author of {book} write?", "What other books are by the person who wrote {book}?",
        "Besides {book}, what has its author written?", "Which other works did the writer of {book} publish?",
        "If I liked {book}, what else by the same author should I read?", "What did the author of {book} write after it?",
        "List some other books by the author of {book}.", "Has the author of {book} written anything else worth reading?",
    ], ten=["other books by {book} author", "{book} author's other works?"], zh=[
        "《{book}》的作者还写过哪些书？", "写《{book}》的人还有什么别的作品？", "除了《{book}》，这位作者还写了什么？",
        "《{book}》作者的其他作品有哪些？", "喜欢《{book}》的话，同一作者还有什么可以读？", "《{book}》的作者后来还写了什么？",
        "列几本《{book}》作者的其他书。", "《{book}》的作者还有别的值得看的书吗？",
    ], tzh=["《{book}》作者其他作品", "{book}作者还写过啥"], ren=[
        "Besides {book}, {fact} published several other works, including novels, short stories and essays; the later books are a good next read if you liked this one.",
    ], rzh=["除了《{book}》，{fact}还写过不少作品，包括长篇、短篇和随笔，喜欢这本的话可以接着读后来的书。"]),
    Q("director", ["film"], ent="film", ctxfree=True, follow=["film"], partner="film_music", en=[
        "Who directed {film}?", "Who was the director of {film}?", "Who made the movie {film}?", "{film} was directed by whom?",
        "Do you know who directed {film}?", "Which filmmaker is behind {film}?", "Tell me the director of {film}.",
        "Who was the director on {film}?",
    ], ten=["{film} director?", "director of {film}"], zh=[
        "《{film}》的导演是谁？", "《{film}》是谁导演的？", "谁拍了电影《{film}》？", "《{film}》出自哪位导演？", "你知道《{film}》是谁执导的吗？",
        "哪位导演拍的《{film}》？", "告诉我《{film}》的导演。", "《{film}》这部片子是谁拍的？",
    ], tzh=["《{film}》导演", "{film} 谁导的"], ren=["{film} was directed by {fact}.", "{fact} directed {film}."],
      rzh=["《{film}》的导演是{fact}。", "是{fact}执导的。"]),
    Q("film_music", ["film"], ent="film", ctxfree=True, follow=["film"], partner="director", en=[
        "Who composed the music for {film}?", "Who wrote the score of {film}?", "Who did the soundtrack for {film}?",
        "Which composer worked on {film}?", "Who is responsible for the music in {film}?", "Tell me who scored {film}.",
        "The music in {film} is great. Who composed it?", "Do you know the composer of the {film} soundtrack?",
    ], ten=["{film} composer?", "who scored {film}"], zh=[
        "《{film}》的配乐是谁做的？", "《{film}》的音乐是谁作曲的？", "谁给《{film}》写的原声？", "《{film}》的作曲家是谁？",
        "《{film}》里的音乐出自谁之手？", "告诉我《{film}》的配乐作者。", "《{film}》的配乐太好听了，是谁写的？", "你知道《{film}》原声音乐的作曲吗？",
    ], tzh=["《{film}》配乐谁做的", "{film} 作曲"], ren=[
        "The score for {film} was written in close collaboration with director {fact}, and its main theme became widely known on its own.",
    ], rzh=["《{film}》的配乐是作曲家与导演{fact}紧密合作完成的，主题音乐后来单独流传很广。"]),
    Q("founder", ["tcompany"], ent="tcompany", ctxfree=True, follow=["tcompany"], partner="ceo", en=[
        "Who founded {tcompany}?", "Who started {tcompany}?", "Who are the founders of {tcompany}?", "{tcompany} was founded by whom?",
        "Do you know who set up {tcompany}?", "Who were the people who founded {tcompany}?", "Tell me who created the company {tcompany}.",
        "Who was behind the founding of {tcompany}?",
    ], ten=["{tcompany} founder?", "founders of {tcompany}"], zh=[
        "{tcompany}是谁创立的？", "{tcompany}的创始人是谁？", "谁创办了{tcompany}？", "{tcompany}这家公司是谁建立的？", "你知道{tcompany}是谁创办的吗？",
        "{tcompany}由哪些人创立？", "告诉我{tcompany}的创始人。", "当初是谁一手创办了{tcompany}？",
    ], tzh=["{tcompany} 创始人", "{tcompany}谁创办的"], ren=["{tcompany} was founded by {fact}.", "The founders of {tcompany} were {fact}."],
      rzh=["{tcompany}由{fact}创立。", "{tcompany}的创始人是{fact}。"]),
    Q("ceo", ["tcompany"], ent="tcompany", ctxfree=True, follow=["tcompany"], partner="founder", en=[
        "Who is the current CEO of {tcompany}?", "Who runs {tcompany} today?", "Who's leading {tcompany} as CEO right now?",
        "Who is the chief executive of {tcompany} at the moment?", "Who currently heads {tcompany}?",
        "Tell me who the CEO of {tcompany} is now.", "Do you know who's in charge of {tcompany} these days?",
        "Who is running {tcompany} at present?",
    ], ten=["{tcompany} CEO now?", "current {tcompany} CEO"], zh=[
        "{tcompany}现在的CEO是谁？", "目前谁在掌管{tcompany}？", "{tcompany}现任首席执行官是谁？", "现在是谁在领导{tcompany}？",
        "{tcompany}眼下的一把手是谁？", "告诉我{tcompany}现在的CEO。", "你知道{tcompany}如今由谁执掌吗？", "{tcompany}现在谁当家？",
    ], tzh=["{tcompany} 现任CEO", "{tcompany}现在CEO是谁"], ren=[
        "Leadership at {tcompany} changes over time, so check the company's investor-relations page for the current CEO; it isn't necessarily one of the founders.",
    ], rzh=["{tcompany}的管理层会变动，现任CEO建议以公司官网的投资者关系页面为准，不一定是创始人。"]),
    Q("capital", ["country"], ent="country", ctxfree=True, follow=["country"], partner="capital_pop", en=[
        "What's the capital of {country}?", "Which city is the capital of {country}?", "What city serves as the capital of {country}?",
        "Can you tell me the capital city of {country}?", "The capital of {country} is which city?", "Name the capital of {country}.",
        "What is the capital city of {country}?", "I always forget: what's the capital of {country}?",
    ], ten=["capital of {country}?", "{country} capital"], zh=[
        "{country}的首都是哪里？", "{country}首都是哪个城市？", "哪个城市是{country}的首都？", "你知道{country}的首都吗？",
        "{country}的首都叫什么？", "告诉我{country}的首都。", "我老记不住，{country}首都是哪儿来着？", "请问{country}的首都是？",
    ], tzh=["{country} 首都", "{country}首都是？"], ren=["The capital of {country} is {fact}.", "It's {fact}."],
      rzh=["{country}的首都是{fact}。", "是{fact}。"]),
    Q("capital_pop", ["country"], ent="country", ctxfree=True, follow=["country"], partner="capital", en=[
        "How many people live in the capital of {country}?", "What's the population of the capital of {country}?",
        "How big is the capital of {country} in terms of population?", "What's the population of {country}'s capital city?",
        "Roughly how many residents does the capital of {country} have?", "How populous is the capital of {country}?",
        "Tell me the population of the capital of {country}.", "How many inhabitants does the capital city of {country} have?",
    ], ten=["{country} capital population", "pop. of {country}'s capital?"], zh=[
        "{country}首都有多少人口？", "{country}的首都人口是多少？", "{country}首都住着多少人？", "{country}首都的人口规模有多大？",
        "{country}首都大概有多少居民？", "告诉我{country}首都的人口。", "{country}的首都人口多吗？大概多少？", "{country}首都城市的人口数量是多少？",
    ], tzh=["{country}首都人口", "{country} 首都 人口"], ren=[
        "{fact}, the capital of {country}, has its population reported separately for the city proper and the wider metro area; the metro figure is much larger.",
    ], rzh=["{country}的首都是{fact}，人口数据通常分为市区和都市圈两种口径，都市圈人口要多得多。"]),
], ["author", "director", "founder", "capital", "author_more", "film_music", "ceo", "capital_pop"], weight=0.7)

SPECS = [TRAVEL, SUPPORT, CODE, DOCS, PRODUCTS, CHAT, REALTIME, MEDICAL, LEGAL, COOKING, FINANCE, STUDY, FITNESS, TRIVIA]
SPEC_BY = {s.name: s for s in SPECS}
Q_BY = {q.name: q for s in SPECS for q in s.qs.values()}

# ---------------------------------------------------------------- elliptical turns shared across domains
FOLLOW_T = {"en": ["What about {p}?", "And {p}?", "How about {p}?", "Same question, but {p}.", "What if it's {p} instead?",
                   "{P}?", "Okay, and {p}?", "And if it were {p}?"],
            "zh": ["那{p}呢？", "{p}的话呢？", "换成{p}呢？", "如果是{p}呢？", "改成{p}怎么样？", "{p}呢？", "那要是{p}呢？",
                   "同样的问题，{p}呢？"]}
GENERIC = {
    "price": {"en": ["And the price?", "How much does it cost?", "What's the price?", "How much is that going to cost me?",
                     "What would that cost?", "And how much is it?", "Price?", "Roughly what does it cost?"],
              "zh": ["那要多少钱？", "价格呢？", "那边要多少钱？", "大概多少钱？", "这个多少钱？", "费用是多少？", "要花多少钱？", "多少钱啊？"],
              "ren": ["For {topic}, expect to pay around ${n1} in total, depending on season and options.",
                      "Budget roughly ${n1} for {topic}; prices vary a bit by store and timing."],
              "rzh": ["{topic}的话，总花费大约{n1}元，具体看季节和选项。", "{topic}大概准备{n1}元，不同渠道和时间价格会有些浮动。"]},
    "time": {"en": ["How long does it take?", "How much time will that take?", "And how long is that?",
                    "How long should I expect it to take?", "What's the time frame?", "How long will it all take?",
                    "Time-wise, how long?", "Any idea how long that takes?"],
             "zh": ["要多久？", "需要多长时间？", "那得花多久？", "大概要多长时间？", "时间上要多久？", "多久能好？", "这个要多久？", "整个下来要多久？"],
             "ren": ["For {topic}, allow about {tq} {unit}.", "{topic} usually takes around {tq} {unit}, a bit more at busy times."],
             "rzh": ["{topic}大概需要{tq}{unit}。", "{topic}一般要{tq}{unit}左右，高峰期会更久一点。"]},
    "alternatives": {"en": ["Any alternatives?", "What are some other options?", "Is there anything else you'd suggest instead?",
                            "What else could I consider?", "Are there other choices?", "Any other options worth looking at?",
                            "What would you recommend as an alternative?", "Got any backups?"],
                     "zh": ["有别的选择吗？", "还有其他方案吗？", "有没有替代的？", "还能考虑什么别的？", "换个选项有吗？", "还有其他推荐吗？",
                            "备选方案呢？", "除了这个还有啥？"],
                     "ren": ["Besides what I mentioned for {topic}, two other good options are a cheaper, simpler choice and a more premium one with extra flexibility.",
                             "For {topic}, you could also consider a budget option or a more specialized one; it depends on what you value most."],
                     "rzh": ["除了刚才说的，{topic}还可以考虑两种：一个更便宜简单的，一个更高端灵活的。",
                             "{topic}也可以考虑经济型或者更专业的选择，看你更看重哪方面。"]},
    "shorter": {"en": ["Can you make it shorter?", "Shorter, please.", "Could you trim that down?", "Make it more concise.",
                       "That's too long. Cut it down.", "Can I get a shorter version?", "Condense that a bit?", "Too long, shorten it."],
                "zh": ["能再短一点吗？", "短一点。", "精简一下。", "太长了，缩短点。", "能给个简短版吗？", "再压缩一下。", "写得简洁些。", "能不能短一些？"],
                "ren": ["Here's a shorter version of {topic}, about half the length, keeping only the key points.",
                        "Trimmed {topic} down to the essentials; the main message is unchanged."],
                "rzh": ["这是{topic}的精简版，篇幅大约一半，只保留要点。", "已把{topic}压缩到只剩核心内容，主要意思不变。"]},
}
ADDREQ_T = {"en": ["Also, {rl}", "One more thing: {rl}", "Oh, and {rl}", "{r} Please update it.", "Can you adjust it? {r}",
                   "Update: {rl}", "Just to add, {rl}", "{r} Can you take that into account?", "Forgot to mention: {rl}"],
            "zh": ["另外，{r}", "还有一点：{r}", "补充一下，{r}", "{r}麻烦改一下。", "能调整一下吗？{r}", "忘了说，{r}", "对了，{r}",
                   "{r}请按这个更新。", "再加个要求：{r}"]}
ADDREQ_R = {"en": ["Got it, I've updated it accordingly.", "Sure, I've adjusted it with that in mind; the rest stays the same.",
                   "Noted. Here's the revised version reflecting that change."],
            "zh": ["好的，已经按这个要求调整了。", "收到，已根据这一点修改，其余不变。", "明白，这是按新要求修改后的版本。"]}
ADDREQ_R_SPEC = {
    "medical": {"en": ["Thanks, that detail matters. Given that, check with a doctor or pharmacist before taking anything, and don't wait if it gets worse.",
                       "Good to know; that changes the picture a bit, so mention it when you see a doctor."],
                "zh": ["谢谢补充，这一点很重要。这种情况下用药前请先问医生或药师，症状加重不要拖。", "了解，这会影响判断，看医生时记得把这一点告诉医生。"]},
    "legal": {"en": ["That detail matters: it can change which rules apply, so keep your documents handy and check with a local tenant advice service.",
                     "Thanks. With that in mind the general rule still applies, but there may be extra protections worth checking locally."],
              "zh": ["这个细节很关键，可能会影响适用的规定，建议把相关文件备好，咨询当地的租客援助机构。", "明白，一般规则仍然适用，但你的情况可能还有额外保护，建议在当地核实。"]},
    "support": {"en": ["Thanks, I've added that to the case notes for your order.", "Noted on the ticket; it doesn't change the next steps, but it helps the team."],
                "zh": ["好的，已经把这一点备注到您的工单里了。", "已记录在工单上，后续处理会参考这一点。"]},
}
SWITCH_INTRO = {"en": ["By the way, ", "Unrelated question: ", "Different topic: ", "Switching gears: ", "Also, quick question: ", ""],
                "zh": ["换个话题，", "顺便问一下，", "另外问个事，", "问个别的，", ""]}

# ---------------------------------------------------------------- personas
PERSONAS = {"en": [("neutral", 22), ("terse", 16), ("verbose", 14), ("typo", 16), ("polite", 17), ("blunt", 15)],
            "zh": [("neutral", 20), ("terse", 14), ("verbose", 12), ("typo", 12), ("codemix", 16), ("polite", 14), ("blunt", 12)]}
POLITE_PRE = {"en": ["Hi! ", "Hello there! ", "Hi, hope you're well. ", "Sorry to bother you. ", "Good morning! ", "Hey, could you help me out? "],
              "zh": ["您好，", "你好呀，", "打扰了，", "不好意思打扰一下，", "麻烦您，", "您好，想请教一下，"]}
POLITE_SUF = {"en": [" Thank you!", " Thanks so much.", " Many thanks in advance.", " I'd really appreciate it.", " Thanks a lot!", " Cheers!"],
              "zh": ["谢谢！", "多谢啦。", "先谢过了！", "辛苦了，谢谢。", "感谢！", "麻烦了，谢谢您。"]}
BLUNT_PRE = {"en": ["Look, ", "Okay. ", "Quick one: ", "Right. "], "zh": ["问你个事，", "直接点，", "喂，", "说正事，"]}
BLUNT_SUF = {"en": [" Just answer.", " Answer directly.", " Don't waste my time.", " Need this now.", " No small talk."],
             "zh": ["直接回答。", "别废话。", "赶紧的。", "说重点。", "别绕弯子。"]}
VERBOSE_PRE = {"en": ["I've been going back and forth on this for a while and could use some help. ",
                      "So here's my situation, and sorry if this gets long. ",
                      "I asked a friend but didn't get a clear answer, so I'm asking here. ",
                      "This has been on my mind all week. ", "I'm not an expert at this at all, so bear with me. ",
                      "Okay, I've tried to figure this out myself but I'm stuck. "],
               "zh": ["是这样的，我纠结这个问题好几天了。", "说来话长，我自己查了半天也没弄明白。", "问了朋友也没有个准话，所以来问问你。",
                      "我对这方面完全是外行，见谅。", "先说下背景吧，我最近一直在想这件事。", "不好意思可能有点啰嗦，"]}
VERBOSE_SUF = {"en": [" Any help is appreciated.", " Thanks for reading all of this.", " I'd be grateful for any pointers."],
               "zh": ["有什么建议都可以说说。", "谢谢你耐心看完。", "先谢谢啦，啰嗦了。"]}

# ---------------------------------------------------------------- surface noise
EN_MISSPELL = {"the": "teh", "recommend": "reccomend", "weather": "wether", "because": "becuase", "tomorrow": "tommorow",
               "receive": "recieve", "separate": "seperate", "definitely": "definately", "restaurant": "restaraunt",
               "budget": "budjet", "itinerary": "itinerery", "schedule": "schedual", "necessary": "neccessary",
               "address": "adress", "which": "wich", "their": "thier", "probably": "probly", "really": "realy",
               "please": "plz", "thanks": "thx", "you": "u", "your": "ur", "people": "ppl", "with": "wiht",
               "what": "waht", "about": "abotu", "should": "shoudl", "install": "intsall", "version": "verison",
               "error": "eror", "delivery": "delivry", "refund": "refnud", "apartment": "appartment",
               "neighborhood": "neighbourhood", "weekend": "weeknd", "calculate": "calcualte", "explain": "explian"}
EN_PROTECT = {"not", "don't", "no", "without", "never", "only", "more", "less", "under", "over", "from", "into", "to",
              "before", "after", "instead", "than", "can't", "won't", "doesn't", "isn't", "didn't", "haven't", "skip",
              "worse", "better", "bigger", "smaller", "cheaper", "early", "late"}
KEYB = {"a": "s", "s": "a", "d": "f", "e": "r", "r": "e", "t": "y", "o": "i", "i": "o", "n": "m", "m": "n", "l": "k",
        "h": "j", "u": "y", "c": "v", "p": "o", "g": "h"}
ZH_TYPO = [("应该", "因该"), ("已经", "以经"), ("觉得", "觉的"), ("怎么", "怎摸"), ("什么", "神马"), ("大概", "大慨"), ("安排", "按排"),
           ("建议", "建意"), ("麻烦", "麻凡"), ("比较", "比教"), ("需要", "须要"), ("谢谢", "3q"), ("帮我", "帮窝"), ("一下", "一哈"),
           ("吗？", "嘛？"), ("的", "得"), ("做", "作"), ("推荐", "推见"), ("时候", "时侯"), ("预算", "预箅")]
ZH_MIX = [("行程", "itinerary"), ("攻略", "guide"), ("预算", "budget"), ("酒店", "hotel"), ("航班", "flight"), ("机票", "ticket"),
          ("订单", "order"), ("退款", "refund"), ("物流", "tracking"), ("版本", "version"), ("代码", "code"), ("函数", "function"),
          ("报错", "error"), ("语气", "tone"), ("标题", "title"), ("推荐", "recommend"), ("计划", "plan"), ("方案", "plan"),
          ("邮件", "email"), ("项目", "project"), ("改写", "rewrite"), ("菜谱", "recipe"), ("安装", "install"), ("配置", "config"),
          ("依赖", "dependency"), ("价格", "price"), ("品牌", "brand"), ("性价比", "CP值"), ("训练", "training"), ("练习题", "quiz"),
          ("总结", "summary"), ("检查", "check"), ("笑话", "joke"), ("汇率", "rate"), ("天气", "weather"),
          ("剂量", "dose"), ("律师", "lawyer"), ("首都", "capital"), ("导演", "director")]


# ----------------------------------------------------------------------------------------
# sampling, acts, rendering
# ----------------------------------------------------------------------------------------
def pool_for(slot, ctx, core=False):
    if slot == "library":
        return LIBS.get(ctx.get("language"), LIBS["Python"])
    if slot in ("brand_a", "brand_b"):
        cat = ctx.get("category") or CATEGORY[0]
        return BRANDS[cat[0]]
    if slot == "language" and core:
        return CODE_LANG
    return POOLS[slot]


def sample_value(slot, ctx, rng, exclude=(), core=False):
    ex = list(exclude)
    partner = PARTNER.get(slot)
    if partner and partner in ctx:
        ex.append(ctx[partner])
    cands = [v for v in pool_for(slot, ctx, core) if v not in ex]
    return rng.choice(cands) if cands else None


def _slot_order(slots):
    return sorted(slots, key=lambda s: 0 if s in ("category", "language") else 1)


def decor(persona, lang, rng):
    d = {"pre": "", "suf": "", "typo": None, "mix": None, "flags": [], "numz": False}
    if persona == "polite":
        if rng.random() < 0.65:
            d["pre"] = rng.choice(POLITE_PRE[lang])
        if not d["pre"] or rng.random() < 0.5:
            d["suf"] = rng.choice(POLITE_SUF[lang])
    elif persona == "blunt":
        if rng.random() < 0.35:
            d["pre"] = rng.choice(BLUNT_PRE[lang])
        if rng.random() < 0.7:
            d["suf"] = rng.choice(BLUNT_SUF[lang])
    elif persona == "verbose":
        d["pre"] = rng.choice(VERBOSE_PRE[lang])
        if rng.random() < 0.5:
            d["suf"] = rng.choice(VERBOSE_SUF[lang])
    elif persona == "typo":
        d["typo"] = rng.randrange(1 << 30)
    elif persona == "codemix":
        d["mix"] = rng.randrange(1 << 30)
    elif persona == "terse":
        if lang == "en" and rng.random() < 0.6:
            d["flags"].append("lower")
        if rng.random() < 0.7:
            d["flags"].append("nopunct")
    if lang == "zh" and rng.random() < 0.06:
        d["numz"] = True
    return d


def extras(rng):
    n3 = rng.randint(8, 31)
    return {"n1": rng.choice([85, 120, 150, 180, 240, 300, 360, 450, 600, 750, 900, 1200]), "n2": rng.randint(2, 5),
            "n4": rng.randint(6, 10), "n3": n3, "n5": n3 - rng.randint(5, 10), "n6": rng.randint(1, 9),
            "n7": rng.choice([20, 25, 30, 40, 45, 60, 75, 90, 120]), "p10": rng.choice(range(10, 100, 10)),
            "tq": rng.randint(2, 9)}


def new_act(kind, spec, lang, persona, rng, **kw):
    a = {"kind": kind, "spec": spec, "lang": lang, "persona": persona, "rtpl": rng.randrange(1000), "ex": extras(rng)}
    a.update(decor(persona, lang, rng))
    a.update(kw)
    return a


def pick_tpl(q, form, lang, persona, rng, avoid=None):
    lst = q.tpl[(form, lang)]
    n = q.n_normal[lang] if form == "explicit" else len(lst)
    if form == "explicit" and len(lst) > n and (persona == "terse" and rng.random() < 0.65 or rng.random() < 0.06):
        idx = list(range(n, len(lst)))
    else:
        idx = list(range(n))
    if avoid is not None and len(idx) > 1:
        idx = [i for i in idx if i != avoid] or idx
    return rng.choice(idx)


def make_ask(q, ctx, lang, persona, rng, form="explicit", sample_into=None):
    slots = {}
    for s in _slot_order(q.all_slots()):
        if s in ctx and ctx[s] is not None:
            slots[s] = ctx[s]
        else:
            v = sample_value(s, {**ctx, **slots}, rng)
            slots[s] = v
            if sample_into is not None:
                sample_into[s] = v
    return new_act("ask", q.spec.name, lang, persona, rng, q=q.name, slots=slots, form=form,
                   tpl=pick_tpl(q, form, lang, persona, rng), reqs=[])


def fill(tpl, slots, lang, numz=False):
    return tpl.format(**{k: vtxt(slots[k], lang, numz) for k in placeholders(tpl)})


def req_text(spec, r, lang):
    idx, pol = r
    return spec.reqs[idx][(0 if lang == "en" else 2) + (0 if pol else 1)]


def join_reqs(text, reqs, lang):
    if not reqs:
        return text
    if lang == "en":
        text = text.rstrip()
        return text + (" " if text[-1:] in ".?!" else ". ") + " ".join(reqs)
    return text + ("" if text[-1:] in "。？！" else "，") + "".join(reqs)


def fphrase(q, slot, lang):
    en, zh = q.fp.get(slot, FP[slot])
    return en if lang == "en" else zh


def core_text(a):
    lang = a["lang"]
    k = a["kind"]
    if k == "ask":
        q = Q_BY[a["q"]]
        t = fill(q.tpl[(a["form"], lang)][a["tpl"]], a["slots"], lang, a["numz"])
        return join_reqs(t, [req_text(q.spec, r, lang) for r in a["reqs"]], lang)
    if k == "followup":
        ph = fphrase(Q_BY[a["q"]], a["slot"], lang).format(v=vtxt(a["val"], lang, a["numz"]))
        return FOLLOW_T[lang][a["tpl"]].format(p=ph, P=cap_first(ph))
    if k == "generic":
        return GENERIC[a["key"]][lang][a["tpl"]]
    if k == "addreq":
        rs = [req_text(SPEC_BY[a["spec"]], r, lang) for r in a["reqs"]]
        r = (" " if lang == "en" else "").join(rs)
        return ADDREQ_T[lang][a["tpl"]].format(r=r, rl=low_first(r))
    raise ValueError(k)


_CJK = r"[\u4e00-\u9fff]"
ZH_HALF = {"，": ",", "。": ".", "？": "?", "！": "!", "：": ":", "；": ";", "（": "(", "）": ")"}


def _fullwidth(s):
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


SURFACE = {
    "lower": lambda s: s.lower(),
    "nopunct": lambda s: s.rstrip(" .?!。？！"),
    "multiq": lambda s: s.rstrip(" .?!") + "??",
    "fullwidth": _fullwidth,
    "halfpunct": lambda s: "".join(ZH_HALF.get(c, c) for c in s),
    "latin_space": lambda s: re.sub(r"(?<=[A-Za-z0-9])(?=%s)|(?<=%s)(?=[A-Za-z0-9])" % (_CJK, _CJK), " ", s),
}


def en_typos(t, seed):
    rng = random.Random(seed)
    toks = re.split(r"([A-Za-z']+)", t)
    idx = [i for i in range(1, len(toks), 2) if re.fullmatch(r"[a-z]{3,}", toks[i]) and toks[i] not in EN_PROTECT]
    if not idx:
        return t
    k = max(1, round(len(idx) * 0.15))
    for i in rng.sample(idx, min(k, len(idx))):
        w = toks[i]
        if w in EN_MISSPELL and rng.random() < 0.75:
            toks[i] = EN_MISSPELL[w]
            continue
        if len(w) < 4:
            toks[i] = w + w[-1]
            continue
        j = rng.randrange(1, len(w) - 1)
        op = rng.randrange(4)
        if op == 0 and w[j] != w[j + 1]:
            nw = w[:j] + w[j + 1] + w[j] + w[j + 2:]
        elif op == 1:
            nw = w[:j] + w[j] + w[j:]
        elif op == 2 and w[j] in KEYB:
            nw = w[:j] + KEYB[w[j]] + w[j + 1:]
        else:
            nw = w[:j] + w[j + 1:]
        toks[i] = nw
    return "".join(toks)


def zh_typos(t, seed):
    rng = random.Random(seed)
    cands = [(a, b) for a, b in ZH_TYPO if a in t]
    if cands:
        rng.shuffle(cands)
        for a, b in cands[:rng.choice([1, 1, 2])]:
            pos = [m.start() for m in re.finditer(re.escape(a), t)]
            if pos:
                p = rng.choice(pos)
                t = t[:p] + b + t[p + len(a):]
        return t
    pos = [i for i, c in enumerate(t) if c == "，"]
    if pos:
        p = rng.choice(pos)
        return t[:p] + " " + t[p + 1:]
    pos = [i for i, c in enumerate(t) if "\u4e00" <= c <= "\u9fff"]
    if pos:
        p = rng.choice(pos)
        return t[:p + 1] + t[p] + t[p + 1:]
    return t


def codemix(t, seed):
    rng = random.Random(seed)
    cands = [(a, b) for a, b in ZH_MIX if a in t]
    if not cands:
        return rng.choice(["btw，", "hi，", "hello，"]) + t if rng.random() < 0.5 else t + rng.choice(["thx", " thanks", " pls"])
    rng.shuffle(cands)
    for a, b in cands[:rng.choice([1, 2, 2])]:
        rep = " %s " % b if rng.random() < 0.35 else b
        t = t.replace(a, rep, 1)
    t = re.sub(r" +", " ", t)
    t = re.sub(r" (?=[，。？！、：）])", "", t)
    return t.strip()


def render_user(a):
    lang = a["lang"]
    t = core_text(a)
    if lang == "zh" and a.get("mix") is not None:
        t = codemix(t, a["mix"])
    pre, suf = a.get("pre", ""), a.get("suf", "")
    if lang == "en":
        if pre and pre.endswith((", ", ": ")):
            t = low_first(t)
        if suf and t[-1:].isalnum():
            t += "."
        t = fix_articles(cap_first(pre + t + suf))
    else:
        if suf and t[-1:] not in "。？！，":
            t += "，"
        t = pre + t + suf
    if a.get("typo") is not None:
        t = en_typos(t, a["typo"]) if lang == "en" else zh_typos(t, a["typo"])
    for f in a.get("flags", []):
        t = SURFACE[f](t)
    return t


def resolve(a):
    if a["kind"] == "ask":
        return Q_BY[a["q"]], a["slots"]
    if a["kind"] == "followup":
        s = dict(a["base"])
        s[a["slot"]] = a["val"]
        return Q_BY[a["q"]], s
    return None, None


def topic_slots(spec):
    if not spec.topic:
        return []
    return list(dict.fromkeys(placeholders(spec.topic[0]) + placeholders(spec.topic[1])))


def render_reply(a):
    lang = a["lang"]
    vals = dict(a["ex"])
    k = a["kind"]
    if k in ("ask", "followup"):
        q, slots = resolve(a)
        lst = q.ren if lang == "en" else q.rzh
        tpl = lst[a["rtpl"] % len(lst)]
        for s, v in slots.items():
            vals[s] = vtxt(v, lang)
        ent = slots.get(q.ent) if q.ent else None
        if isinstance(ent, tuple) and len(ent) == 4:
            vals["fact"] = ent[2] if lang == "en" else ent[3]
        if q.compute:
            vals.update({s: vtxt(v, lang) for s, v in q.compute(slots).items()})
        t = tpl.format(**vals)
    elif k == "generic":
        spec = SPEC_BY[a["spec"]]
        vals["topic"] = fill(spec.topic[0 if lang == "en" else 1], a["slots"], lang)
        vals["unit"] = spec.topic[2 if lang == "en" else 3]
        vals["tq"] = a["ex"]["tq"] * spec.topic[4]
        lst = GENERIC[a["key"]]["ren" if lang == "en" else "rzh"]
        t = lst[a["rtpl"] % len(lst)].format(**vals)
    else:
        lst = ADDREQ_R_SPEC.get(a["spec"], ADDREQ_R)[lang]
        t = lst[a["rtpl"] % len(lst)]
    return fix_articles(cap_first(t)) if lang == "en" else t


def msgs_of(acts):
    out = []
    for a in acts:
        out.append({"role": "user", "content": render_user(a)})
        out.append({"role": "assistant", "content": render_reply(a)})
    return out


def followable(q, slots):
    if q is None:
        return []
    return [s for s in q.follow if s in slots and (s in FP or s in q.fp)]


# ----------------------------------------------------------------------------------------
# session simulation (a small state machine per user goal)
# ----------------------------------------------------------------------------------------
def next_act(spec, acts, goal, lang, persona, rng):
    prev = acts[-1]
    pq, pslots = resolve(prev)
    opts = []
    later = [q for q in spec.qs.values() if q.later and (pq is None or q.name != pq.name)]
    if later:
        opts.append(("ask", 4.0))
    fsl = followable(pq, pslots)
    if fsl:
        opts.append(("followup", 3.5))
    main = acts[0]
    n_add = sum(a["kind"] == "addreq" for a in acts)
    if spec.reqs and main["kind"] == "ask" and Q_BY[main["q"]].reqs and n_add < 2:
        opts.append(("addreq", 1.2))
    if spec.generic and pq is not None:
        opts.append(("generic", 1.4))
    if not opts:
        return None
    k = wchoice(rng, opts)
    if k == "ask":
        q = rng.choice(later)
        form = "explicit"
        if (q.tpl[("pron", lang)] and q.ent and pslots is not None and q.ent in goal
                and pslots.get(q.ent) == goal[q.ent] and rng.random() < 0.6):
            form = "pron"
        return make_ask(q, goal, lang, persona, rng, form, sample_into=goal)
    if k == "followup":
        s = rng.choice(fsl)
        v = sample_value(s, pslots, rng, exclude=[pslots[s]])
        if v is None:
            return None
        goal[s] = v
        breqs = list(prev.get("reqs", [])) if prev["kind"] == "ask" else list(prev.get("breqs", []))
        if rng.random() < 0.25:
            slots = dict(pslots)
            slots[s] = v
            return new_act("ask", spec.name, lang, persona, rng, q=pq.name, slots=slots, form="explicit",
                           tpl=pick_tpl(pq, "explicit", lang, persona, rng), reqs=breqs)
        return new_act("followup", spec.name, lang, persona, rng, q=pq.name, base=dict(pslots), slot=s, val=v,
                       breqs=breqs, tpl=rng.randrange(len(FOLLOW_T[lang])))
    if k == "addreq":
        used = {r[0] for a in acts for r in a.get("reqs", [])}
        free = [i for i in range(len(spec.reqs)) if i not in used]
        m = 2 if rng.random() < 0.25 else 1
        reqs = [(i, rng.random() < 0.75) for i in rng.sample(free, min(m, len(free)))]
        mainslots = {s: goal.get(s, v) for s, v in main["slots"].items()}
        return new_act("addreq", spec.name, lang, persona, rng, reqs=reqs, main=mainslots, mq=main["q"],
                       tpl=rng.randrange(len(ADDREQ_T[lang])))
    key = rng.choice(spec.generic)
    tslots = {s: goal[s] for s in topic_slots(spec) if s in goal}
    if len(tslots) < len(topic_slots(spec)):
        return None
    return new_act("generic", spec.name, lang, persona, rng, key=key, slots=tslots, tpl=rng.randrange(len(GENERIC[key][lang])))


def build_session(spec, lang, rng, sid):
    persona = wchoice(rng, PERSONAS[lang])
    goal = {}
    for s in _slot_order(spec.core):
        goal[s] = sample_value(s, goal, rng, core=True)
    n = wchoice(rng, [(1, 0.10), (2, 0.22), (3, 0.28), (4, 0.22), (5, 0.18)])
    q0 = spec.qs[rng.choice(spec.open_qs)]
    first = make_ask(q0, goal, lang, persona, rng, "explicit", sample_into=goal)
    if q0.reqs and spec.reqs and rng.random() < 0.5:
        first["reqs"] = [(rng.randrange(len(spec.reqs)), rng.random() < 0.75)]
    acts = [first]
    while len(acts) < n:
        a = next_act(spec, acts, goal, lang, persona, rng)
        if a is None:
            break
        acts.append(a)
    return {"id": sid, "spec": spec.name, "lang": lang, "persona": persona, "goal": goal, "acts": acts,
            "msgs": msgs_of(acts)}


# ----------------------------------------------------------------------------------------
# pair derivation: each builder returns (new messages, kind, domain of the new request) or None
# ----------------------------------------------------------------------------------------
class Pair:
    def __init__(self, S, t, rng, pool):
        self.S, self.t, self.rng, self.pool = S, t, rng, pool
        self.acts = S["acts"]
        self.last = S["acts"][t - 1]
        self.prefix = S["acts"][:t - 1]
        self.cached = S["msgs"][:2 * t]
        self.pre_msgs = S["msgs"][:2 * t - 2]
        self.lang = S["lang"]
        self.spec = SPEC_BY[S["spec"]]
        self.persona = S["persona"]


def U(text):
    return {"role": "user", "content": text}


def same_turns(P, a, kind, dom=None):
    return P.pre_msgs + [U(render_user(a))], kind, dom or P.spec.domain


def _tokens(s):
    return set(re.findall(r"[A-Za-z]+|[\u4e00-\u9fff]", s.lower()))


def _far_choice(P, a, cands, setter):
    """Pick the candidate whose rendering overlaps least with the cached turn (real paraphrases)."""
    base = _tokens(render_user(P.last))
    if P.rng.random() < 0.6 and len(cands) > 1:
        best, score = None, 2.0
        for c in cands:
            b = copy.deepcopy(a)
            setter(b, c)
            tk = _tokens(render_user(b))
            j = len(tk & base) / max(1, len(tk | base))
            if j < score:
                best, score = c, j
        return best
    return P.rng.choice(cands)


def b_repeat(P):
    return same_turns(P, P.last, "repeat")


def b_paraphrase(P):
    a = copy.deepcopy(P.last)
    k, lang = a["kind"], P.lang
    if k == "ask":
        n = len(Q_BY[a["q"]].tpl[(a["form"], lang)])
    elif k == "followup":
        n = len(FOLLOW_T[lang])
    elif k == "generic":
        n = len(GENERIC[a["key"]][lang])
    else:
        n = len(ADDREQ_T[lang])
    cands = [i for i in range(n) if i != a["tpl"]]
    if k == "ask":
        lst = Q_BY[a["q"]].tpl[(a["form"], lang)]
        want = set(placeholders(lst[a["tpl"]]))
        cands = [i for i in cands if set(placeholders(lst[i])) == want]
    if not cands:
        return None
    a["tpl"] = _far_choice(P, a, cands, lambda b, c: b.__setitem__("tpl", c))
    if P.rng.random() < 0.35:
        d = decor(P.persona, lang, P.rng)
        d["numz"] = a["numz"]
        a.update(d)
    return same_turns(P, a, "paraphrase")


def b_politeness(P):
    a = copy.deepcopy(P.last)
    lang = P.lang
    polite = a["pre"] in POLITE_PRE[lang] or a["suf"] in POLITE_SUF[lang]
    if polite:
        if a["pre"] in POLITE_PRE[lang]:
            a["pre"] = ""
        if a["suf"] in POLITE_SUF[lang]:
            a["suf"] = ""
    else:
        a["pre"] = P.rng.choice(POLITE_PRE[lang]) if P.rng.random() < 0.6 else ""
        a["suf"] = P.rng.choice(POLITE_SUF[lang]) if (not a["pre"] or P.rng.random() < 0.5) else ""
    return same_turns(P, a, "politeness")


def b_typo(P):
    a = copy.deepcopy(P.last)
    a["typo"] = None if a["typo"] is not None else P.rng.randrange(1 << 30)
    return same_turns(P, a, "typo")


def b_surface(P):
    a = copy.deepcopy(P.last)
    text = render_user(a)
    if P.lang == "en":
        opts = ["lower", "nopunct"] + (["multiq"] if text.endswith("?") else [])
    else:
        opts = ["nopunct"]
        if re.search(r"[A-Za-z0-9]", text):
            opts += ["fullwidth", "fullwidth"]
        if re.search("[，。？！：]", text):
            opts += ["halfpunct", "halfpunct"]
        if re.search(r"[A-Za-z0-9]%s|%s[A-Za-z0-9]" % (_CJK, _CJK), text):
            opts.append("latin_space")
    f = P.rng.choice(opts)
    a["flags"] = [x for x in a["flags"] if x != f] if f in a["flags"] else a["flags"] + [f]
    kind = "width" if f in ("fullwidth", "halfpunct") else "punct_case"
    return same_turns(P, a, kind)


def b_numeral(P):
    a = copy.deepcopy(P.last)
    if a["kind"] == "ask":
        tpl = Q_BY[a["q"]].tpl[(a["form"], P.lang)][a["tpl"]]
        ints = [a["slots"][s] for s in placeholders(tpl) if type(a["slots"][s]) is int]
    elif a["kind"] == "followup":
        ints = [a["val"]] if type(a["val"]) is int else []
    else:
        return None
    if P.lang == "en":
        ints = [i for i in ints if i <= 20]
    if not ints:
        return None
    a["numz"] = not a["numz"]
    return same_turns(P, a, "numeral_form")


def _explicit_from(P, q, slots, like, reqs=(), avoid=None):
    b = copy.deepcopy(like)
    b.update({"kind": "ask", "q": q.name, "slots": dict(slots), "form": "explicit", "reqs": list(reqs)})
    for k in ("base", "slot", "val", "breqs"):
        b.pop(k, None)
    b["tpl"] = pick_tpl(q, "explicit", P.lang, P.persona, P.rng, avoid=avoid)
    return b


def b_coref(P):
    if P.t < 2:
        return None
    a = P.last
    prev = P.acts[P.t - 2]
    pq, ps = resolve(prev)
    if a["kind"] == "followup":
        q, slots = resolve(a)
        return same_turns(P, _explicit_from(P, q, slots, a, a.get("breqs", [])), "ellipsis_resolved")
    if a["kind"] != "ask":
        return None
    q = Q_BY[a["q"]]
    if q.ent and ps is not None and ps.get(q.ent) == a["slots"].get(q.ent) and q.tpl[("pron", P.lang)]:
        b = copy.deepcopy(a)
        b["form"] = "pron" if a["form"] == "explicit" else "explicit"
        b["tpl"] = pick_tpl(q, b["form"], P.lang, P.persona, P.rng)
        return same_turns(P, b, "coref_same")
    preqs = prev.get("reqs", []) if prev["kind"] == "ask" else prev.get("breqs", [])
    if pq is not None and pq.name == q.name and list(a["reqs"]) == list(preqs):
        diff = [s for s in q.all_slots() if ps.get(s) != a["slots"].get(s)]
        if len(diff) == 1 and diff[0] in followable(q, a["slots"]):
            s = diff[0]
            b = copy.deepcopy(a)
            b.update({"kind": "followup", "base": dict(ps), "slot": s, "val": a["slots"][s], "breqs": list(preqs),
                      "tpl": P.rng.randrange(len(FOLLOW_T[P.lang]))})
            for k in ("slots", "form"):
                b.pop(k, None)
            return same_turns(P, b, "ellipsis_same")
    return None


def b_order_swap(P):
    a = P.last
    if a["kind"] != "ask":
        return None
    q = Q_BY[a["q"]]
    if not q.sym:
        return None
    x, y = q.sym
    tpl = q.tpl[(a["form"], P.lang)][a["tpl"]]
    if x not in placeholders(tpl) or y not in placeholders(tpl):
        return None
    b = copy.deepcopy(a)
    b["slots"][x], b["slots"][y] = a["slots"][y], a["slots"][x]
    return same_turns(P, b, "order_swap")


def _resolved_explicit(P):
    a = P.last
    if a["kind"] not in ("ask", "followup"):
        return None
    q, slots = resolve(a)
    if not q.ctxfree:
        return None
    reqs = a["reqs"] if a["kind"] == "ask" else a.get("breqs", [])
    avoid = a["tpl"] if a["kind"] == "ask" and a["form"] == "explicit" else None
    return _explicit_from(P, q, slots, a, reqs, avoid=avoid)


def b_standalone(P):
    if P.t < 2:
        return None
    b = _resolved_explicit(P)
    if b is None:
        return None
    return [U(render_user(b))], "standalone_same", P.spec.domain


def b_ctx_irrelevant(P):
    b = _resolved_explicit(P)
    if b is None:
        return None
    others = [S for S in P.pool[P.lang] if SPEC_BY[S["spec"]].domain != P.spec.domain]
    S2 = P.rng.choice(others)
    j = P.rng.randint(1, min(4, len(S2["acts"])))
    return S2["msgs"][:2 * j] + [U(render_user(b))], "context_irrelevant", P.spec.domain


def b_codemix(P):
    if P.lang != "zh":
        return None
    a = copy.deepcopy(P.last)
    a["mix"] = None if a["mix"] is not None else P.rng.randrange(1 << 30)
    return same_turns(P, a, "codemix")


def b_filler(P):
    a = copy.deepcopy(P.last)
    if a["pre"] in VERBOSE_PRE[P.lang]:
        a["pre"] = ""
        if a["suf"] in VERBOSE_SUF[P.lang]:
            a["suf"] = ""
    else:
        a["pre"] = P.rng.choice(VERBOSE_PRE[P.lang])
    return same_turns(P, a, "filler")


# ---------------------------------------------------------------- modify
def b_attr(P):
    a = copy.deepcopy(P.last)
    rng = P.rng
    if a["kind"] == "ask":
        q = Q_BY[a["q"]]
        tpl = q.tpl[(a["form"], P.lang)][a["tpl"]]
        cands = [s for s in placeholders(tpl) if s not in q.nochange]
        if not cands:
            return None
        s = rng.choice(cands)
        ctx = {k: v for k, v in a["slots"].items() if k != s}
        v = sample_value(s, ctx, rng, exclude=[a["slots"][s]])
        if v is None:
            return None
        a["slots"][s] = v
        if rng.random() < 0.25:
            a["tpl"] = pick_tpl(q, a["form"], P.lang, P.persona, rng, avoid=a["tpl"])
    elif a["kind"] == "followup":
        s = a["slot"]
        v = sample_value(s, {k: x for k, x in a["base"].items() if k != s}, rng, exclude=[a["val"], a["base"][s]])
        if v is None:
            return None
        a["val"] = v
        if rng.random() < 0.2:
            a["tpl"] = rng.randrange(len(FOLLOW_T[P.lang]))
    elif a["kind"] == "addreq":
        used = {r[0] for x in P.acts for r in x.get("reqs", [])}
        free = [i for i in range(len(P.spec.reqs)) if i not in used]
        if not free:
            return None
        j = rng.randrange(len(a["reqs"]))
        a["reqs"][j] = (rng.choice(free), a["reqs"][j][1])
    else:
        return None
    return same_turns(P, a, "attribute_change")


def _ctx_slots(a):
    if a["kind"] == "ask":
        q = Q_BY[a["q"]]
        tpl = q.tpl[(a["form"], a["lang"])][a["tpl"]]
        base = list(q.deps) + ([q.ent] if q.ent else [])
        if a["form"] == "pron":
            base += q.slots
        rendered = placeholders(tpl)
        return [s for s in dict.fromkeys(base) if s not in rendered and s in a["slots"]], q.ent
    if a["kind"] == "followup":
        q = Q_BY[a["q"]]
        return [s for s in q.all_slots() if s != a["slot"] and s in a["base"]], q.ent
    if a["kind"] == "generic":
        return list(a["slots"]), None
    if a["kind"] == "addreq":
        return list(a["main"]), Q_BY[a["mq"]].ent
    return [], None


def _effective(a, s):
    if a["kind"] in ("ask", "followup"):
        return resolve(a)[1].get(s)
    if a["kind"] == "generic":
        return a["slots"].get(s)
    return a["main"].get(s)


def b_ctxchange(P):
    if P.t < 2:
        return None
    slots, ent = _ctx_slots(P.last)
    P.rng.shuffle(slots)
    for s in slots:
        old = _effective(P.last, s)
        if old is None or s in ("brand_a", "brand_b"):
            continue
        ctx = {}
        for x in P.prefix:
            for key in ("slots", "base", "main"):
                if key in x:
                    ctx.update({k: v for k, v in x[key].items() if k != s})
        v = sample_value(s, ctx, P.rng, exclude=[old])
        if v is None:
            continue
        newp = copy.deepcopy(P.prefix)
        for x in newp:
            for key in ("slots", "base", "main"):
                if key in x and x[key].get(s) == old:
                    x[key][s] = v
            if x["kind"] == "followup" and x["slot"] == s and x["val"] == old:
                x["val"] = v
        new_msgs = msgs_of(newp)
        if [m["content"] for m in new_msgs[0::2]] == [m["content"] for m in P.pre_msgs[0::2]]:
            continue
        elliptic = P.last["kind"] in ("followup", "generic") or P.last.get("form") == "pron"
        kind = "ellipsis_other_context" if (s == ent or P.last["kind"] == "generic") and elliptic else "context_attribute_change"
        return new_msgs + [U(render_user(P.last))], kind, P.spec.domain
    return None


def b_ellipsis_cross(P):
    a = P.last
    text = render_user(a)
    if a["kind"] == "ask" and a["form"] != "pron":
        return None
    if a["kind"] not in ("ask", "followup", "generic"):
        return None
    q1, r1 = resolve(a)
    for _ in range(25):
        S2 = P.rng.choice(P.pool[P.lang])
        if S2["id"] == P.S["id"]:
            continue
        spec2 = SPEC_BY[S2["spec"]]
        for j in range(min(4, len(S2["acts"]))):
            q2, r2 = resolve(S2["acts"][j])
            if q2 is None:
                continue
            if a["kind"] == "followup":
                s = a["slot"]
                if s not in followable(q2, r2) or r2.get(s) == a["val"]:
                    continue
                if q2.name == q1.name and all(r2.get(k) == r1.get(k) for k in q1.all_slots() if k != s):
                    continue
            elif a["kind"] == "generic":
                if a["key"] not in spec2.generic:
                    continue
                t2 = fill(spec2.topic[0], {k: S2["goal"][k] for k in topic_slots(spec2)}, "en")
                t1 = fill(P.spec.topic[0], a["slots"], "en")
                if t1 == t2:
                    continue
            else:
                if q2.spec is not q1.spec or not q1.ent or r2.get(q1.ent) is None or r2.get(q1.ent) == r1.get(q1.ent):
                    continue
            return S2["msgs"][:2 * (j + 1)] + [U(text)], "ellipsis_other_context", spec2.domain
    return None


def _req_owner(P):
    a = P.last
    if a["kind"] == "ask" and Q_BY[a["q"]].reqs and P.spec.reqs:
        return a
    if a["kind"] == "addreq":
        return a
    return None


def b_add_req(P):
    if _req_owner(P) is None:
        return None
    a = copy.deepcopy(P.last)
    used = {r[0] for x in P.acts for r in x.get("reqs", [])}
    free = [i for i in range(len(P.spec.reqs)) if i not in used]
    if not free:
        return None
    a["reqs"].append((P.rng.choice(free), P.rng.random() < 0.75))
    return same_turns(P, a, "add_requirement")


def b_drop_req(P):
    o = _req_owner(P)
    if o is None or len(o["reqs"]) < (2 if o["kind"] == "addreq" else 1):
        return None
    a = copy.deepcopy(P.last)
    a["reqs"].pop(P.rng.randrange(len(a["reqs"])))
    return same_turns(P, a, "drop_requirement")


def b_negation(P):
    o = _req_owner(P)
    if o is None or not o["reqs"]:
        return None
    a = copy.deepcopy(P.last)
    j = P.rng.randrange(len(a["reqs"]))
    a["reqs"][j] = (a["reqs"][j][0], not a["reqs"][j][1])
    return same_turns(P, a, "negation")


def b_direction(P):
    a = P.last
    if a["kind"] != "ask":
        return None
    q = Q_BY[a["q"]]
    if not q.pair:
        return None
    x, y = q.pair
    tpl = q.tpl[(a["form"], P.lang)][a["tpl"]]
    if x not in placeholders(tpl) or y not in placeholders(tpl):
        return None
    b = copy.deepcopy(a)
    b["slots"][x], b["slots"][y] = a["slots"][y], a["slots"][x]
    return same_turns(P, b, "direction_flip")


def b_followup_cont(P):
    if 2 * P.t > MAX_CONTEXT:
        return None
    q, rs = resolve(P.last)
    fsl = followable(q, rs)
    if not fsl:
        return None
    s = P.rng.choice(fsl)
    v = sample_value(s, {k: x for k, x in rs.items() if k != s}, P.rng, exclude=[rs[s]])
    if v is None:
        return None
    f = new_act("followup", P.spec.name, P.lang, P.persona, P.rng, q=q.name, base=dict(rs), slot=s, val=v,
                breqs=[], tpl=P.rng.randrange(len(FOLLOW_T[P.lang])))
    return P.cached + [U(render_user(f))], "followup_change", P.spec.domain


# ---------------------------------------------------------------- switch
def b_topic(P):
    rng = P.rng
    others = [s for s in SPECS if s.domain != P.spec.domain]
    spec2 = wchoice(rng, [(s, s.weight) for s in others])
    mode = rng.random()
    if mode < 0.8:
        goal2 = {}
        for s in _slot_order(spec2.core):
            goal2[s] = sample_value(s, goal2, rng, core=True)
        q0 = spec2.qs[rng.choice(spec2.open_qs)]
        b = make_ask(q0, goal2, P.lang, P.persona, rng, "explicit")
        if rng.random() < 0.3:
            intro = rng.choice(SWITCH_INTRO[P.lang])
            if intro:
                b["pre"] = intro
        turn = U(render_user(b))
        if mode < 0.55 or 2 * P.t > MAX_CONTEXT:
            return P.pre_msgs + [turn], "topic_switch", spec2.domain
        return P.cached + [turn], "topic_switch", spec2.domain
    cands = [S for S in P.pool[P.lang] if SPEC_BY[S["spec"]].domain != P.spec.domain]
    S2 = rng.choice(cands)
    j = rng.randint(1, min(5, len(S2["acts"])))
    return S2["msgs"][:2 * j - 1], "topic_switch", SPEC_BY[S2["spec"]].domain


def b_intent(P):
    q, rs = resolve(P.last)
    if q is None:
        return None
    near = {"rewrite": "shorten", "shorten": "rewrite"}      # too close to call a switch
    others = [x for x in P.spec.qs.values() if x.name not in (q.name, q.partner, near.get(q.name))]
    if not others:
        return None
    q2 = P.rng.choice(others)
    ctx = dict(P.S["goal"])
    ctx.update(rs)
    form = "explicit"
    if q2.tpl[("pron", P.lang)] and q2.ent and P.t >= 2 and P.rng.random() < 0.5:
        ps = resolve(P.acts[P.t - 2])[1]
        if ps is not None and ps.get(q2.ent) is not None and ps.get(q2.ent) == rs.get(q2.ent):
            form = "pron"
    b = make_ask(q2, ctx, P.lang, P.persona, P.rng, form)
    return same_turns(P, b, "intent_switch")


def b_relation(P):
    q, rs = resolve(P.last)
    if q is None or not q.partner:
        return None
    b = make_ask(Q_BY[q.partner], rs, P.lang, P.persona, P.rng, "explicit")
    return same_turns(P, b, "relation_shift")


KINDS = {
    "same": [(b_paraphrase, 30), (b_politeness, 7), (b_typo, 7), (b_surface, 7), (b_repeat, 4), (b_numeral, 8),
             (b_coref, 22), (b_order_swap, 12), (b_standalone, 7), (b_ctx_irrelevant, 6), (b_codemix, 5), (b_filler, 4)],
    "modify": [(b_attr, 30), (b_ctxchange, 14), (b_ellipsis_cross, 12), (b_add_req, 12), (b_drop_req, 14),
               (b_negation, 18), (b_direction, 20), (b_followup_cont, 8)],
    "switch": [(b_topic, 45), (b_intent, 40), (b_relation, 40)],
}


# ----------------------------------------------------------------------------------------
# assembly
# ----------------------------------------------------------------------------------------
def _check_pair(cached, new, kind):
    for msgs, last in ((cached, "assistant"), (new, "user")):
        if not msgs or msgs[0]["role"] != "user" or msgs[-1]["role"] != last:
            return False
        if any(m["role"] != ("user" if i % 2 == 0 else "assistant") for i, m in enumerate(msgs)):
            return False
        if any(not m["content"].strip() for m in msgs):
            return False
    if len(new) - 1 > MAX_CONTEXT or len(cached) - 2 > MAX_CONTEXT:
        return False
    same_last = new[-1]["content"] == cached[-2]["content"]
    if kind == "repeat":
        return new == cached[:-1]
    if kind in ("ellipsis_other_context", "context_attribute_change") and same_last:
        return new[:-1] != cached[:-2]
    return not same_last


def _weighted_order(rng, items):
    """Weighted sampling without replacement: items is a list of (value, weight)."""
    keyed = [(rng.random() ** (1.0 / w), v) for v, w in items]
    return [v for _, v in sorted(keyed, key=lambda kv: -kv[0])]


def _try_pair(S, label, rng, pool, seed):
    kinds = KINDS[label]
    if S["lang"] == "en":
        kinds = [(f, w) for f, w in kinds if f is not b_codemix]
    n = len(S["acts"])
    for fn in _weighted_order(rng, kinds)[:6]:
        for t in _weighted_order(rng, [(t, 1.0 if t == 1 else 1.7) for t in range(1, n + 1)]):
            P = Pair(S, t, rng, pool)
            res = fn(P)
            if res is None:
                continue
            new, kind, dom = res
            if not _check_pair(P.cached, new, kind):
                continue
            return {"cached": P.cached, "new": new, "label": label, "lang": S["lang"], "kind": kind, "domain": dom,
                    "source": "dialogue_sim", "group": "dlg%d-%s-%05d" % (seed, S["spec"], S["id"])}
    return None


def generate(seed: int, n: int = TARGET_RECORDS) -> list[dict]:
    """Deterministic list of pair records for a seed."""
    rng = random.Random(seed)
    sessions = []
    weights = [(s, s.weight) for s in SPECS]
    for i in range(n // 3 + 300):
        spec = wchoice(rng, weights)
        sessions.append(build_session(spec, "en" if i % 2 == 0 else "zh", rng, i))
    pool = {"en": [S for S in sessions if S["lang"] == "en"], "zh": [S for S in sessions if S["lang"] == "zh"]}
    queue = []
    for label, share in LABEL_SHARE:
        queue += [label] * round(n * share)
    queue = queue[:n] + ["same"] * max(0, n - len(queue))
    rng.shuffle(queue)
    records, seen, i = [], set(), 0
    while queue and i < 50 * len(sessions):
        S = sessions[i % len(sessions)]
        i += 1
        for _ in range(rng.choice([3, 4, 4, 5])):
            if not queue:
                break
            rec = _try_pair(S, queue[-1], rng, pool, seed)
            if rec is None:
                continue
            key = json.dumps([rec["cached"], rec["new"]], ensure_ascii=False)
            if key in seen:
                continue
            seen.add(key)
            queue.pop()
            records.append(rec)
    return records


def _validate_specs():
    names = [q.name for s in SPECS for q in s.qs.values()]
    assert len(names) == len(set(names)), "question names must be unique"
    for name, pool in POOLS.items():
        assert len(pool) >= 20, (name, len(pool))
    assert len({b for v in BRANDS.values() for b in v}) >= 20 and len({l for v in LIBS.values() for l in v}) >= 20
    for s in SPECS:
        assert len(s.reqs) in (0,) or len(s.reqs) >= 20, (s.name, len(s.reqs))
        for q in s.qs.values():
            allowed = set(q.all_slots())
            for lang in ("en", "zh"):
                ex = q.tpl[("explicit", lang)]
                assert len(ex) >= 8, (q.name, lang, len(ex))
                for t in ex:
                    assert set(placeholders(t)) == set(q.slots), (q.name, t)
                for t in q.tpl[("pron", lang)]:
                    assert set(placeholders(t)) <= set(q.slots) - {q.ent}, (q.name, t)
                for t in (q.ren if lang == "en" else q.rzh):
                    extra = set(placeholders(t)) - allowed - {"fact", "fv", "pmt", "mon"} - set(extras(random.Random(0)))
                    assert not extra, (q.name, t, extra)
    for table in (FOLLOW_T, ADDREQ_T):
        assert all(len(v) >= 8 for v in table.values())
    assert all(len(g[l]) >= 8 for g in GENERIC.values() for l in ("en", "zh"))


_validate_specs()


def _summary(records):
    out = []
    n = len(records)
    for field in ("label", "lang", "kind", "domain"):
        c = Counter(r[field] for r in records)
        out.append("%s: %s" % (field, ", ".join("%s=%d" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1]))))
    multi = sum(len(r["new"]) >= 3 for r in records)
    out.append("multi-turn (>=2 earlier messages in new): %d/%d = %.1f%%" % (multi, n, 100.0 * multi / max(1, n)))
    out.append("groups: %d" % len({r["group"] for r in records}))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--n", type=int, default=TARGET_RECORDS)
    ap.add_argument("--show", type=int, default=0, help="print this many random examples")
    args = ap.parse_args(argv)
    records = generate(args.seed, args.n)
    with open(args.out, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print("wrote %d records to %s" % (len(records), args.out))
    print(_summary(records))
    if args.show:
        for r in random.Random(args.seed).sample(records, min(args.show, len(records))):
            print("-" * 80)
            print("%s / %s / %s / %s / %s" % (r["label"], r["kind"], r["lang"], r["domain"], r["group"]))
            for m in r["cached"]:
                print("  C %s: %s" % (m["role"][0], m["content"]))
            for m in r["new"]:
                print("  N %s: %s" % (m["role"][0], m["content"]))


if __name__ == "__main__":
    main()
