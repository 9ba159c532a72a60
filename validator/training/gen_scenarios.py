#!/usr/bin/env python3
"""Compositional scenario-grammar generator of (cached, new) request pairs.

Each record pairs an earlier request whose answer is cached with a new request
and labels whether the cached answer can be reused:

  same    - the cached answer fully answers the new request
  modify  - same task, but the answer must change (number, entity, constraint...)
  switch  - an unrelated request, or a really different question on the same words

Usage:
    python3 validator/training/gen_scenarios.py --out /tmp/scenarios.jsonl --seed 7

Standard library only; deterministic for a given seed.
"""
from __future__ import annotations

import argparse
import collections
import json
import random
import re
import sys

SOURCE = "scenario_grammar"
TARGET_RECORDS = 9000
PAIRS_PER_BASE = 6

LABEL_WEIGHTS = {"same": 0.385, "modify": 0.365, "switch": 0.25}
KIND_WEIGHTS = {
    "same": {"paraphrase": 14, "politeness": 6, "punctuation": 5, "typo": 6,
             "width": 6, "case": 6, "reorder": 5, "repeat": 3, "coref_same": 8},
    # weights apply before applicability: negation/constraint exist in fewer frames
    "modify": {"number": 7, "entity": 8, "add_requirement": 5,
               "drop_requirement": 5, "negation": 16, "constraint": 14,
               "ellipsis_other_context": 9},
    "switch": {"topic_switch": 16, "relation_flip": 9},
}


# ---------------------------------------------------------------------------
# slot value tables: "en|zh; en|zh; ..."
# ---------------------------------------------------------------------------

def V(spec: str) -> list[tuple[str, str]]:
    out = []
    for item in spec.split(";"):
        item = item.strip()
        if not item:
            continue
        en, zh = item.split("|")
        out.append((en.strip(), zh.strip()))
    return out


TYPES: dict[str, list[tuple[str, str]]] = {}
# slot types whose change counts as a "constraint" change rather than an entity swap
CONSTRAINT_TYPES = set()

FRAMES: list[dict] = []


def frame(**kw) -> None:
    kw.setdefault("req", [])
    kw.setdefault("rel_en", [])
    kw.setdefault("rel_zh", [])
    kw.setdefault("reorder_en", [])
    kw.setdefault("reorder_zh", [])
    kw.setdefault("follow", [])
    kw.setdefault("coref", None)
    kw.setdefault("neg", None)
    kw.setdefault("flip", None)
    FRAMES.append(kw)


TYPES.update({
    "city": V("Paris|巴黎; Rome|罗马; Tokyo|东京; Barcelona|巴塞罗那; Bangkok|曼谷; "
              "Seoul|首尔; London|伦敦; New York|纽约; Sydney|悉尼; Istanbul|伊斯坦布尔; "
              "Lisbon|里斯本; Prague|布拉格; Vienna|维也纳; Singapore|新加坡; Dubai|迪拜; "
              "Kyoto|京都; Amsterdam|阿姆斯特丹; Chengdu|成都; Shanghai|上海; Beijing|北京; "
              "Hong Kong|香港; Berlin|柏林; Vancouver|温哥华; Hanoi|河内; Osaka|大阪"),
    "day": V("today|今天; tomorrow|明天; this weekend|这个周末; on Monday|周一; "
             "on Tuesday|周二; on Wednesday|周三; on Thursday|周四; on Friday|周五; "
             "on Saturday|周六; on Sunday|周日; tonight|今晚; next week|下周; "
             "the day after tomorrow|后天; this afternoon|今天下午; tomorrow morning|明天早上"),
    "month": V("January|一月; February|二月; March|三月; April|四月; May|五月; June|六月; "
               "July|七月; August|八月; September|九月; October|十月; November|十一月; "
               "December|十二月; early spring|早春; late autumn|深秋; the summer holidays|暑假"),
    "hotel_style": V("cheap|便宜的; luxury|豪华的; mid-range|中档的; boutique|精品; "
                     "family-friendly|适合家庭的; pet-friendly|可以带宠物的; quiet|安静的; "
                     "central|市中心的; eco-friendly|环保的; business|商务; all-inclusive|全包式的; "
                     "romantic|浪漫的; budget|经济型; beachfront|海景; historic|有历史感的"),
    "trip_style": V("relaxed|轻松的; packed|紧凑的; budget|省钱的; foodie|美食主题的; "
                    "family|亲子; romantic|浪漫的; backpacking|背包客式的; luxury|奢华的; "
                    "museum-focused|以博物馆为主的; outdoorsy|户外为主的; nightlife|夜生活为主的; "
                    "photography|摄影主题的; slow-paced|慢节奏的; shopping|购物为主的; "
                    "history-themed|历史主题的"),
    "product": V("wireless earbuds|无线耳机; laptop|笔记本电脑; running shoes|跑鞋; "
                 "coffee machine|咖啡机; office chair|办公椅; robot vacuum|扫地机器人; "
                 "mechanical keyboard|机械键盘; smartwatch|智能手表; air purifier|空气净化器; "
                 "e-reader|电子阅读器; tablet|平板电脑; electric toothbrush|电动牙刷; "
                 "hiking backpack|登山包; rice cooker|电饭煲; monitor|显示器; "
                 "blender|料理机; mattress|床垫; camera|相机; gaming mouse|游戏鼠标; "
                 "hair dryer|吹风机"),
    "buyer": V("a student|学生; a beginner|新手; my dad|我爸; my mom|我妈; a programmer|程序员; "
               "a gamer|游戏玩家; a photographer|摄影爱好者; a runner|跑步爱好者; "
               "my grandmother|我奶奶; a teenager|青少年; a nurse|护士; a designer|设计师; "
               "a frequent traveler|经常出差的人; a small office|小办公室; a new parent|新手爸妈"),
    "plang": V("Python|Python; JavaScript|JavaScript; TypeScript|TypeScript; Go|Go; Rust|Rust; "
               "Java|Java; C++|C++; C#|C#; Ruby|Ruby; Kotlin|Kotlin; Swift|Swift; PHP|PHP; "
               "Scala|Scala; Haskell|Haskell; Elixir|Elixir; Dart|Dart; Lua|Lua"),
    "ctask": V("reverse a string|反转字符串; read a CSV file|读取 CSV 文件; "
               "sort a dictionary by value|按值对字典排序; make an HTTP GET request|发送 HTTP GET 请求; "
               "parse a JSON string|解析 JSON 字符串; remove duplicates from a list|给列表去重; "
               "read a file line by line|逐行读取文件; get the current timestamp|获取当前时间戳; "
               "split a string by commas|按逗号分割字符串; check if a file exists|判断文件是否存在; "
               "merge two lists|合并两个列表; convert a string to an integer|把字符串转成整数; "
               "generate a random number|生成随机数; write text to a file|把文本写入文件; "
               "count word frequencies|统计词频; format a date|格式化日期; "
               "create a thread|创建线程; flatten a nested list|展开嵌套列表"),
    "cerror": V("NullPointerException|NullPointerException; segmentation fault|段错误; "
                "KeyError|KeyError; index out of range|下标越界; stack overflow|栈溢出; "
                "CORS error|跨域错误; undefined is not a function|undefined is not a function; "
                "deadlock|死锁; memory leak|内存泄漏; import error|导入错误; "
                "connection timeout|连接超时; permission denied|权限不足; "
                "type mismatch|类型不匹配; out of memory|内存不足; infinite loop|死循环; "
                "race condition|竞态条件"),
    "tool": V("git|git; Docker|Docker; Kubernetes|Kubernetes; npm|npm; pip|pip; webpack|webpack; "
              "nginx|nginx; PostgreSQL|PostgreSQL; Redis|Redis; MySQL|MySQL; VS Code|VS Code; "
              "Terraform|Terraform; Jenkins|Jenkins; Kafka|Kafka; MongoDB|MongoDB; Vim|Vim"),
    "doc": V("email|邮件; cover letter|求职信; product description|产品描述; "
             "meeting summary|会议纪要; apology letter|道歉信; blog intro|博客开头; "
             "project update|项目进展汇报; resignation letter|辞职信; job posting|招聘启事; "
             "press release|新闻稿; thank-you note|感谢信; abstract|摘要; "
             "LinkedIn bio|领英简介; event invitation|活动邀请函; complaint letter|投诉信; "
             "performance review|绩效评语"),
    "tone": V("formal|正式; casual|随意; friendly|友好; persuasive|有说服力; concise|简洁; "
              "humorous|幽默; professional|专业; enthusiastic|热情; apologetic|诚恳致歉; "
              "neutral|中立; academic|学术; diplomatic|委婉; warm|温暖; confident|自信; "
              "playful|俏皮"),
    "audience": V("my boss|我的老板; a client|客户; my team|我的团队; a professor|教授; "
                  "customers|顾客; investors|投资人; a recruiter|招聘官; my landlord|房东; "
                  "new hires|新员工; parents|家长; students|学生; a supplier|供应商; "
                  "the board|董事会; my neighbours|邻居; a journalist|记者"),
    "company": V("Apple|苹果; Microsoft|微软; Tesla|特斯拉; Amazon|亚马逊; Google|谷歌; "
                 "Nvidia|英伟达; Meta|Meta; Netflix|奈飞; Alibaba|阿里巴巴; Tencent|腾讯; "
                 "Samsung|三星; Sony|索尼; Toyota|丰田; Intel|英特尔; BYD|比亚迪; "
                 "Huawei|华为; Nike|耐克; Disney|迪士尼"),
    "team": V("Real Madrid|皇马; Barcelona|巴萨; Manchester United|曼联; Liverpool|利物浦; Arsenal|阿森纳; "
              "Bayern Munich|拜仁; Juventus|尤文图斯; Chelsea|切尔西; PSG|巴黎圣日耳曼; Inter Milan|国际米兰; "
              "AC Milan|AC米兰; Manchester City|曼城; Tottenham|热刺; Borussia Dortmund|多特蒙德; "
              "Atletico Madrid|马德里竞技; Napoli|那不勒斯; Ajax|阿贾克斯"),
    "news_topic": V("the election|大选; the earthquake|地震; the interest rate decision|利率决议; "
                    "the tech layoffs|科技公司裁员; the oil price|油价; the climate summit|气候峰会; "
                    "the housing market|楼市; the new iPhone launch|新款 iPhone 发布; "
                    "the strike|罢工; the typhoon|台风; the trade talks|贸易谈判; "
                    "the space launch|航天发射; the wildfire|山火; the Olympics|奥运会; "
                    "the AI regulation bill|人工智能监管法案"),
    "symptom": V("a headache|头疼; a sore throat|嗓子疼; a cough|咳嗽; back pain|腰疼; "
                 "a stomach ache|肚子疼; dizziness|头晕; a rash|起疹子; insomnia|失眠; "
                 "a runny nose|流鼻涕; knee pain|膝盖疼; heartburn|烧心; nausea|恶心; "
                 "itchy eyes|眼睛痒; a toothache|牙疼; muscle cramps|肌肉抽筋; "
                 "a stiff neck|脖子僵硬"),
    "drug": V("ibuprofen|布洛芬; acetaminophen|对乙酰氨基酚; aspirin|阿司匹林; "
              "loratadine|氯雷他定; omeprazole|奥美拉唑; amoxicillin|阿莫西林; "
              "cetirizine|西替利嗪; melatonin|褪黑素; metformin|二甲双胍; "
              "vitamin D|维生素D; naproxen|萘普生; diphenhydramine|苯海拉明; "
              "montelukast|孟鲁司特; loperamide|洛哌丁胺; famotidine|法莫替丁"),
    "patient": V("an adult|成年人; a child|小孩; a 5-year-old|5岁孩子; a pregnant woman|孕妇; "
                 "an elderly person|老人; a teenager|青少年; a breastfeeding mother|哺乳期妈妈; "
                 "someone with kidney disease|肾病患者; a toddler|幼儿; someone with asthma|哮喘患者; "
                 "someone with high blood pressure|高血压患者; a diabetic|糖尿病患者; "
                 "a 10-year-old|10岁孩子; someone with an ulcer|胃溃疡患者; "
                 "someone on blood thinners|在吃抗凝药的人"),
    "contract": V("lease|租房合同; NDA|保密协议; employment contract|劳动合同; "
                  "freelance contract|自由职业合同; sales agreement|买卖合同; "
                  "loan agreement|借款合同; partnership agreement|合伙协议; "
                  "service agreement|服务协议; gym membership|健身房会员合同; "
                  "phone contract|手机套餐合约; software license|软件许可协议; "
                  "car lease|汽车租赁合同; franchise agreement|加盟合同; "
                  "prenuptial agreement|婚前协议; consulting agreement|咨询服务合同"),
    "jurisdiction": V("California|加州; New York State|纽约州; Texas|德州; England|英格兰; "
                      "Germany|德国; France|法国; Ontario|安大略省; Australia|澳大利亚; "
                      "Japan|日本; Singapore|新加坡; mainland China|中国大陆; Hong Kong|香港; "
                      "Taiwan|台湾; Ireland|爱尔兰; the Netherlands|荷兰"),
    "dish": V("lasagna|千层面; fried rice|炒饭; banana bread|香蕉面包; chicken curry|咖喱鸡; "
              "pancakes|松饼; mapo tofu|麻婆豆腐; tiramisu|提拉米苏; beef stew|炖牛肉; "
              "dumplings|饺子; pad thai|泰式炒河粉; risotto|意式烩饭; brownies|布朗尼; "
              "miso soup|味噌汤; kung pao chicken|宫保鸡丁; apple pie|苹果派; "
              "scrambled eggs|炒鸡蛋; sourdough bread|酸面包"),
    "diet": V("vegan|纯素; gluten-free|无麸质; low-sugar|低糖; dairy-free|无乳制品; "
              "keto|生酮; low-salt|低盐; nut-free|无坚果; vegetarian|素食; "
              "high-protein|高蛋白; low-fat|低脂; egg-free|无鸡蛋; halal|清真; "
              "low-carb|低碳水; kid-friendly|适合小孩; spicy|辣味"),
    "plant": V("tomatoes|番茄; basil|罗勒; roses|玫瑰; orchids|兰花; succulents|多肉; "
               "a fiddle-leaf fig|琴叶榕; strawberries|草莓; lavender|薰衣草; mint|薄荷; "
               "peppers|辣椒; a monstera|龟背竹; lemon trees|柠檬树; hydrangeas|绣球花; "
               "a pothos|绿萝; cucumbers|黄瓜; blueberries|蓝莓"),
    "pet": V("dog|狗; cat|猫; puppy|小狗; kitten|小猫; rabbit|兔子; hamster|仓鼠; "
             "parrot|鹦鹉; guinea pig|豚鼠; goldfish|金鱼; turtle|乌龟; "
             "senior dog|老年犬; senior cat|老年猫; corgi|柯基; golden retriever|金毛; "
             "ferret|雪貂"),
    "food_item": V("chocolate|巧克力; grapes|葡萄; onions|洋葱; cheese|奶酪; apples|苹果; "
                   "bananas|香蕉; carrots|胡萝卜; chicken bones|鸡骨头; garlic|大蒜; "
                   "peanut butter|花生酱; watermelon|西瓜; milk|牛奶; avocado|牛油果; "
                   "eggs|鸡蛋; rice|米饭; blueberries|蓝莓"),
    "exercise": V("squats|深蹲; push-ups|俯卧撑; running|跑步; swimming|游泳; cycling|骑车; "
                  "deadlifts|硬拉; yoga|瑜伽; planks|平板支撑; jumping rope|跳绳; "
                  "pull-ups|引体向上; lunges|弓步蹲; rowing|划船机; HIIT|HIIT; "
                  "bench press|卧推; stair climbing|爬楼梯"),
    "goal": V("lose weight|减肥; build muscle|增肌; improve endurance|提高耐力; "
              "fix my posture|改善体态; run a 5K|跑完五公里; get stronger legs|练腿部力量; "
              "reduce back pain|缓解腰疼; sleep better|睡得更好; tone my arms|练手臂线条; "
              "increase flexibility|提高柔韧性; lower my blood pressure|降血压; "
              "train for a marathon|备战马拉松; gain weight|增重; improve balance|提高平衡能力; "
              "get a six-pack|练出六块腹肌"),
    "event": V("the French Revolution|法国大革命; World War I|第一次世界大战; "
               "the fall of the Roman Empire|罗马帝国的衰亡; the Industrial Revolution|工业革命; "
               "the Cold War|冷战; the Renaissance|文艺复兴; the Opium War|鸦片战争; "
               "the Meiji Restoration|明治维新; the American Civil War|美国南北战争; "
               "the collapse of the Soviet Union|苏联解体; the Reformation|宗教改革; "
               "the Xinhai Revolution|辛亥革命; the Great Depression|大萧条; "
               "the Black Death|黑死病; the moon landing|登月"),
    "concept": V("photosynthesis|光合作用; black holes|黑洞; inflation|通货膨胀; "
                 "quantum entanglement|量子纠缠; natural selection|自然选择; "
                 "the greenhouse effect|温室效应; compound interest|复利; DNA replication|DNA 复制; "
                 "plate tectonics|板块构造; supply and demand|供求关系; relativity|相对论; "
                 "vaccines|疫苗; blockchain|区块链; entropy|熵; tides|潮汐; "
                 "machine learning|机器学习"),
    "level": V("a five-year-old|五岁小孩; a high school student|高中生; a beginner|初学者; "
               "an expert|专家; my grandma|我奶奶; a college freshman|大一新生; "
               "a busy executive|忙碌的高管; a ten-year-old|十岁小孩; a non-native speaker|非母语者; "
               "an engineer|工程师; a history buff|历史爱好者; a middle schooler|初中生; "
               "a journalist|记者; a lawyer|律师; a doctor|医生"),
    "mood": V("stressed|压力很大; bored|无聊; tired|累; anxious|焦虑; lonely|孤单; "
              "frustrated|沮丧; sad|难过; confused|迷茫; nervous|紧张; overwhelmed|不知所措; "
              "grumpy|烦躁; unmotivated|没动力; homesick|想家; burned out|身心俱疲; "
              "restless|坐立不安"),
    "joke_topic": V("cats|猫; programmers|程序员; coffee|咖啡; math|数学; Mondays|周一; "
                    "dentists|牙医; penguins|企鹅; chemistry|化学; teachers|老师; "
                    "pizza|披萨; dinosaurs|恐龙; accountants|会计; the weather|天气; "
                    "cooking|做饭; airplanes|飞机"),
    "account_item": V("order|订单; subscription|订阅; refund|退款; package|包裹; "
                      "invoice|发票; membership|会员; reservation|预订; "
                      "gift card|礼品卡; warranty claim|保修申请; return|退货; "
                      "payment|付款; delivery|配送; booking|预约; exchange|换货; "
                      "account|账户"),
    "channel": V("email|邮件; phone|电话; live chat|在线客服; the app|App; text message|短信; "
                 "the website|官网; WeChat|微信; the help center|帮助中心; a store visit|门店; "
                 "mail|邮寄; the hotline|热线; social media|社交媒体; a callback|回电; "
                 "video call|视频通话; the kiosk|自助终端"),
})
CONSTRAINT_TYPES.update({"hotel_style", "trip_style", "tone", "diet", "level", "buyer"})


# ---------------------------------------------------------------------------
# context snippets
# ---------------------------------------------------------------------------

# (user, assistant) openers that introduce an entity of a slot type, for coreference
INTRO = {
    "city": {"en": [("I'm planning a trip to {x} next month.", "Nice! {x} is a great choice. What would you like to know?"),
                    ("My sister just moved to {x}.", "How exciting for her! Is there anything about {x} I can help with?"),
                    ("I'll be in {x} for work soon.", "Good to know. Happy to help you prepare for {x}.")],
             "zh": [("我下个月打算去{x}。", "不错！{x}是个好选择，想了解些什么？"),
                    ("我姐姐刚搬到{x}。", "真好！关于{x}有什么需要帮忙的吗？"),
                    ("过几天我要去{x}出差。", "好的，我可以帮你提前做些准备。")]},
    "product": {"en": [("I'm thinking about buying a new {x}.", "Sure, happy to help you pick a {x}."),
                       ("My old {x} just broke.", "Sorry to hear that! Let's find you a replacement.")],
                "zh": [("我想买个新的{x}。", "好的，我来帮你挑{x}。"),
                       ("我家的{x}坏了。", "真遗憾，我们来看看换个什么。")]},
    "company": {"en": [("I've been reading a lot about {x} lately.", "{x} is an interesting company. What would you like to know?"),
                       ("I have an interview at {x} next week.", "Congrats! Ask me anything about {x}.")],
                "zh": [("最近我在研究{x}这家公司。", "{x}确实很有意思，你想了解什么？"),
                       ("我下周要去{x}面试。", "恭喜！关于{x}你想知道什么？")]},
    "team": {"en": [("I'm a huge fan of {x}.", "Great team! What do you want to know?")],
             "zh": [("我是{x}的铁杆球迷。", "好球队！你想了解什么？")]},
    "drug": {"en": [("My doctor mentioned {x} to me.", "Okay. What would you like to know about {x}?"),
                    ("I have some {x} at home.", "Got it. How can I help?")],
             "zh": [("医生跟我提到了{x}。", "好的，关于{x}你想了解什么？"),
                    ("我家里有{x}。", "明白，需要我帮什么忙？")]},
    "contract": {"en": [("I was just handed a {x} to sign.", "Okay, I can help you think it through. What's your question?")],
                 "zh": [("我刚拿到一份{x}要签。", "好的，我可以帮你看看，有什么问题？")]},
    "dish": {"en": [("I want to cook {x} this weekend.", "Sounds delicious! How can I help?")],
             "zh": [("这周末我想做{x}。", "听起来很好吃！需要我帮什么？")]},
    "pet": {"en": [("We just adopted a {x}.", "Congratulations on the new {x}! What would you like to know?")],
            "zh": [("我们刚领养了一只{x}。", "恭喜！关于{x}你想了解什么？")]},
    "plant": {"en": [("I'm growing {x} on my balcony.", "Nice! What do you want to know?")],
              "zh": [("我在阳台上种了{x}。", "不错！想了解什么？")]},
    "event": {"en": [("I'm studying {x} for an exam.", "Great topic. What would you like to know?")],
              "zh": [("我在复习{x}，准备考试。", "好题目，你想了解哪方面？")]},
    "concept": {"en": [("I keep hearing about {x}.", "It's a fascinating topic. What would you like to know?")],
                "zh": [("我老是听人说{x}。", "这是个很有意思的话题，你想了解什么？")]},
    "plang": {"en": [("I'm learning {x} right now.", "Great choice! What are you stuck on?")],
              "zh": [("我最近在学{x}。", "好选择！遇到什么问题了？")]},
    "tool": {"en": [("We use {x} at work.", "Okay! What do you need help with?")],
             "zh": [("我们公司在用{x}。", "好的，需要帮什么？")]},
    "symptom": {"en": [("I've had {x} since yesterday.", "Sorry to hear that. Tell me more.")],
                "zh": [("我从昨天开始{x}。", "听起来不太舒服，跟我说说情况。")]},
    "doc": {"en": [("I need to write a {x}.", "Sure, I can help with the {x}.")],
            "zh": [("我得写一封{x}。", "好的，我来帮你写{x}。")]},
}
GENERIC_INTRO = {"en": [("Let's talk about {x}.", "Sure, what would you like to know about {x}?")],
                 "zh": [("我们聊聊{x}吧。", "好的，关于{x}你想了解什么？")]}

GREETINGS = {
    "en": [("Hi there!", "Hello! How can I help you today?"),
           ("Hey, are you free to help with something?", "Of course. What do you need?"),
           ("Good morning!", "Good morning! What can I do for you?"),
           ("I have a few questions.", "Sure, go ahead."),
           ("Thanks for the help earlier.", "You're welcome! Anything else?")],
    "zh": [("你好！", "你好！有什么可以帮你的？"),
           ("在吗？想问你点事。", "在的，请说。"),
           ("早上好！", "早上好！需要我做什么？"),
           ("我有几个问题想问。", "好的，请讲。"),
           ("谢谢你刚才的帮助。", "不客气！还有别的需要吗？")],
}

SWITCH_CONNECTORS = {
    "en": ["", "", "Thanks. ", "Got it. ", "Different question: ", "Okay, another thing. ",
           "Unrelated, but ", "By the way, ", "Also, "],
    "zh": ["", "", "谢谢。", "好的。", "换个话题，", "另外问一下，", "顺便问下，", "还有，"],
}

POLITE = {
    "en": {"pre": ["Hi! ", "Hello. ", "Hey there! ", "Quick question. ", "Good morning! ",
                   "Sorry to bother you. ", "Hi, hope you're well. "],
           "post": [" Thanks!", " Thank you.", " Thanks in advance!", " Much appreciated.",
                    " Thank you so much!", " Cheers."]},
    "zh": {"pre": ["请问，", "你好，", "麻烦问一下，", "您好！", "打扰一下，", "劳驾，", "想请教一下，"],
           "post": ["谢谢！", "谢谢你。", "麻烦了。", "多谢～", "先谢过啦。", "辛苦了！"]},
}


# ---------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------

_AN = re.compile(r"\b([Aa]) (?=[aeiAEIO]|o(?!ne|nce)|u(?!ni|se|su|ti|k)|U(?!ni|S)|hour)")
_PH = re.compile(r"\{([#A-Za-z_0-9\-]+)\}")


def slot_text(value, lang: str) -> str:
    if isinstance(value, tuple):
        return value[0] if lang == "en" else value[1]
    return str(value)


def sample_value(stype: str, rng: random.Random, avoid=None):
    if stype.startswith("int:"):
        parts = [int(p) for p in stype.split(":")[1:]]
        lo, hi = parts[0], parts[1]
        step = parts[2] if len(parts) > 2 else 1
        for _ in range(50):
            v = rng.randrange(lo, hi + 1, step)
            if v != avoid:
                return v
        return v
    vals = TYPES[stype]
    for _ in range(50):
        v = rng.choice(vals)
        if v != avoid:
            return v
    return v


NO_CAP = {"npm", "pip", "git", "nginx", "webpack"}


def cap_first(text: str) -> str:
    first = re.match(r"[A-Za-z]+", text.lstrip("\"'("))
    if first and first.group(0) in NO_CAP:
        return text
    for i, ch in enumerate(text):
        if ch.isalpha():
            if ch.islower() and ch.isascii():
                return text[:i] + ch.upper() + text[i + 1:]
            return text
        if not ch.isspace() and ch not in "\"'(":
            return text
    return text


def insert_before_end(text: str, piece: str) -> str:
    m = re.search(r"[\s?？。.!！]*$", text)
    return text[:m.start()] + piece + text[m.start():]


def fill(tpl: str, values: dict, lang: str, rng: random.Random) -> str:
    def rep(m):
        key = m.group(1)
        if key.startswith("#"):
            lo, hi = key[1:].split("-")
            return str(rng.randint(int(lo), int(hi)))
        if key not in values:
            raise KeyError(f"missing slot {key!r} in template {tpl!r}")
        return values[key]
    out = _PH.sub(rep, tpl)
    out = re.sub(r"  +", " ", out).strip()
    out = re.sub(r" ([,?.!])", r"\1", out).lstrip("，, ")
    if lang == "en":
        out = _AN.sub(lambda m: m.group(1) + "n ", out)
        out = cap_first(out)
    return out


def slot_values(fr: dict, st: dict, lang: str) -> dict:
    vals = {k: slot_text(v, lang) for k, v in st["slots"].items()}
    req = st.get("req")
    if req is not None:
        r = fr["req"][req][0 if lang == "en" else 1]
        if lang == "en":
            vals["req"] = " " + r
        elif r.startswith("@"):  # inline requirement, no comma
            vals["req"] = r[1:]
        else:
            vals["req"] = r if r.startswith(("的", "，")) else "，" + r
    else:
        vals["req"] = ""
    if fr["neg"]:
        vals["neg"] = fr["neg"][lang][1 if st.get("neg") else 0]
    if fr.get("derive"):
        vals.update(fr["derive"](st["slots"]))
    return vals


def render_q(fr: dict, st: dict, lang: str, rng: random.Random, tpl: str | None = None) -> str:
    if tpl is None:
        tpl = fr[lang][st["phr"] % len(fr[lang])]
    vals = slot_values(fr, st, lang)
    had_req = "{req}" in tpl
    out = fill(tpl, vals, lang, rng)
    if not had_req and vals["req"]:
        piece = vals["req"]
        if lang == "zh" and not piece.startswith("，"):
            piece = "，" + piece
        out = insert_before_end(out, piece)
    return out


def render_a(fr: dict, st: dict, lang: str, rng: random.Random) -> str:
    tpls = fr["ans_" + lang]
    tpl = tpls[rng.randrange(len(tpls))]
    vals = slot_values(fr, st, lang)
    return fill(tpl, vals, lang, rng)


def U(text):
    return {"role": "user", "content": text}


def A(text):
    return {"role": "assistant", "content": text}


# ---------------------------------------------------------------------------
# surface edits (meaning preserving)
# ---------------------------------------------------------------------------

def edit_politeness(text: str, lang: str, rng: random.Random) -> str:
    p = POLITE[lang]
    r = rng.random()
    if r < 0.4:
        return rng.choice(p["pre"]) + text
    if lang == "en" and text[-1:].isalnum():
        text_end = text + "."
    elif lang == "zh" and "\u4e00" <= text[-1:] <= "\u9fff":
        text_end = text + "，"
    else:
        text_end = text
    if r < 0.75:
        return text_end + rng.choice(p["post"])
    return rng.choice(p["pre"]) + text_end + rng.choice(p["post"])


def edit_punctuation(text: str, lang: str, rng: random.Random) -> str:
    if lang == "en":
        ops = [lambda t: t.rstrip("?.!"),
               lambda t: t.rstrip("?.!") + "??",
               lambda t: t.rstrip("?.!") + "?!",
               lambda t: t.replace(",", "").rstrip("?.!"),
               lambda t: t.rstrip("?.!") + "...",
               lambda t: t.replace(", ", " - "),
               lambda t: t.rstrip("?.!") + " ?"]
    else:
        ops = [lambda t: t.rstrip("？。！"),
               lambda t: t.rstrip("？。！") + "？？",
               lambda t: t.replace("，", " ").rstrip("？。！"),
               lambda t: t.rstrip("？。！") + "。。。",
               lambda t: t.rstrip("？。！") + "～",
               lambda t: t.replace("，", "、"),
               lambda t: t.rstrip("？。！") + "！？"]
    rng.shuffle(ops)
    for op in ops:
        out = op(text).strip()
        if out and out != text:
            return out
    return text + ("!" if lang == "en" else "！")


KEYB = {"a": "qs", "b": "vn", "c": "xv", "d": "sf", "e": "wr", "f": "dg", "g": "fh", "h": "gj",
        "i": "uo", "j": "hk", "k": "jl", "l": "k", "m": "n", "n": "bm", "o": "ip", "p": "o",
        "q": "w", "r": "et", "s": "ad", "t": "ry", "u": "yi", "v": "cb", "w": "qe", "x": "zc",
        "y": "tu", "z": "x"}
ZH_TYPO = [("的", "得"), ("吗", "嘛"), ("在", "再"), ("再", "在"), ("做", "作"), ("哪", "那"),
           ("时候", "时后"), ("已经", "以经"), ("怎么", "怎莫"), ("什么", "什莫"), ("推荐", "推见"),
           ("一下", "一夏"), ("应该", "因该"), ("需要", "须要"), ("帮我", "帮窝"), ("可以", "可已"),
           ("这个", "这各"), ("吧", "把"), ("账", "帐"), ("部", "步"), ("候", "后")]


def _typo_word(w: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(w) - 1)
    op = rng.randrange(4)
    if op == 0:
        return w[:i] + w[i + 1] + w[i] + w[i + 2:]
    if op == 1:
        return w[:i] + w[i + 1:]
    if op == 2:
        return w[:i] + w[i] + w[i:]
    c = w[i].lower()
    return w[:i] + rng.choice(KEYB.get(c, c)) + w[i + 1:]


def edit_typo(text: str, lang: str, rng: random.Random, protect=()) -> str:
    if lang == "en":
        words = text.split(" ")
        prot = set()
        for p in protect:
            prot.update(p.lower().split())
        cand = [i for i, w in enumerate(words)
                if len(w) >= 4 and w.isalpha() and w.islower() and w not in prot]
        if not cand:
            cand = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha() and w.lower() not in prot]
        if not cand:
            return text
        n = 1 if rng.random() < 0.6 or len(cand) < 3 else 2
        for i in rng.sample(cand, n):
            words[i] = _typo_word(words[i], rng)
        return " ".join(words)
    opts = [(a, b) for a, b in ZH_TYPO if a in text and not any(a in p for p in protect)]
    if opts:
        a, b = rng.choice(opts)
        idx = [m.start() for m in re.finditer(re.escape(a), text)]
        k = rng.choice(idx)
        return text[:k] + b + text[k + len(a):]
    # fallback: a doubled character, a common slip when typing fast
    cand = [i for i, ch in enumerate(text) if "\u4e00" <= ch <= "\u9fff"]
    if not cand:
        return text
    k = rng.choice(cand)
    return text[:k + 1] + text[k] + text[k + 1:]


HALF2FULL_PUNCT = {",": "，", "?": "？", "!": "！", ":": "：", ";": "；", "(": "（", ")": "）"}
FULL2HALF_PUNCT = {v: k for k, v in HALF2FULL_PUNCT.items()}


def edit_width(text: str, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45 and any(c in FULL2HALF_PUNCT for c in text):
        return "".join(FULL2HALF_PUNCT.get(c, c) for c in text)
    if r < 0.8 and re.search(r"[A-Za-z0-9]", text):
        return "".join(chr(ord(c) + 0xFEE0) if (c.isascii() and c.isalnum()) else c for c in text)
    if any(c in HALF2FULL_PUNCT for c in text):
        return "".join(HALF2FULL_PUNCT.get(c, c) for c in text)
    out = "".join(FULL2HALF_PUNCT.get(c, c) for c in text)
    if out == text:
        out = "".join(chr(ord(c) + 0xFEE0) if (c.isascii() and c.isalnum()) else c for c in text)
    return out


def edit_case(text: str, lang: str, rng: random.Random) -> str:
    if lang == "zh":
        if not re.search(r"[A-Za-z]", text):
            return text
        return text.upper() if rng.random() < 0.5 else text.lower()
    r = rng.random()
    if r < 0.55:
        return text.lower()
    if r < 0.75:
        return text.upper()
    return " ".join(w[:1].upper() + w[1:] for w in text.split(" "))


# ---------------------------------------------------------------------------
# base requests and conversations
# ---------------------------------------------------------------------------

def slot_kind(stype: str) -> str:
    if stype.startswith("int:"):
        return "number"
    if stype in CONSTRAINT_TYPES:
        return "constraint"
    return "entity"


def make_base(fr: dict, lang: str, rng: random.Random) -> dict:
    slots = {}
    used = collections.defaultdict(list)
    for name, stype in fr["slots"].items():
        for _ in range(20):
            v = sample_value(stype, rng)
            if v not in used[stype]:
                break
        used[stype].append(v)
        slots[name] = v
    st = {"slots": slots, "req": None, "neg": False, "phr": rng.randrange(len(fr[lang]))}
    if fr["req"] and rng.random() < 0.4:
        st["req"] = rng.randrange(len(fr["req"]))
    if fr["neg"] and rng.random() < 0.45:
        st["neg"] = True
    return st


def clone(st: dict, **kw) -> dict:
    out = {"slots": dict(st["slots"]), "req": st["req"], "neg": st["neg"], "phr": st["phr"]}
    for k, v in kw.items():
        if k == "slots":
            out["slots"].update(v)
        else:
            out[k] = v
    return out


def change_slot(fr: dict, st: dict, name: str, rng: random.Random) -> dict:
    stype = fr["slots"][name]
    others = [v for k, v in st["slots"].items() if k != name and fr["slots"][k] == stype]
    cur = st["slots"][name]
    for _ in range(30):
        v = sample_value(stype, rng, avoid=cur)
        if v != cur and v not in others:
            break
    return clone(st, slots={name: v})


def intro_pair(stype: str, value, lang: str, rng: random.Random):
    opts = INTRO.get(stype, GENERIC_INTRO)[lang]
    u, a = rng.choice(opts)
    x = slot_text(value, lang)
    return [U(fill(u, {"x": x}, lang, rng)), A(fill(a, {"x": x}, lang, rng))]


def preamble(lang: str, rng: random.Random, exclude: dict) -> list:
    r = rng.random()
    out = []
    if r < 0.35:
        u, a = rng.choice(GREETINGS[lang])
        out += [U(u), A(a)]
    if r >= 0.2:
        fr2 = rng.choice([f for f in FRAMES if f is not exclude])
        st2 = make_base(fr2, lang, rng)
        out += [U(render_q(fr2, st2, lang, rng)), A(render_a(fr2, st2, lang, rng))]
    return out


def with_preambles(cached_core: list, new_core: list, fr: dict, lang: str, rng: random.Random):
    """Optionally prepend neutral earlier turns to single-turn requests."""
    pc = preamble(lang, rng, fr) if rng.random() < 0.3 else []
    r = rng.random()
    if pc:
        pn = pc if r < 0.5 else (preamble(lang, rng, fr) if r < 0.75 else [])
    else:
        pn = preamble(lang, rng, fr) if r < 0.3 else []
    return pc + cached_core, pn + new_core


def follow_text(fu: dict, lang: str, value, rng: random.Random, idx=None) -> str:
    tpls = fu[lang]
    tpl = tpls[idx % len(tpls)] if idx is not None else rng.choice(tpls)
    vals = {fu["slot"]: slot_text(value, lang)} if fu.get("slot") else {}
    return fill(tpl, vals, lang, rng)


def follow_answer(fr: dict, fu: dict, st: dict, lang: str, rng: random.Random) -> str:
    if fu.get("slot"):
        return render_a(fr, st, lang, rng)
    vals = slot_values(fr, st, lang)
    return fill(rng.choice(fu["ans_" + lang]), vals, lang, rng)


def followed_state(fu: dict, st: dict, value) -> dict:
    return clone(st, slots={fu["slot"]: value}) if fu.get("slot") else st


def pick_follow_value(fr: dict, fu: dict, st: dict, rng: random.Random):
    stype = fr["slots"][fu["slot"]]
    return sample_value(stype, rng, avoid=st["slots"][fu["slot"]])


# ---------------------------------------------------------------------------
# edit operations -> (cached messages, new messages[, domain])
# ---------------------------------------------------------------------------

def _tokens(text: str) -> set:
    return set(re.findall(r"[a-z0-9']+|[\u4e00-\u9fff]", text.lower()))


def other_phrasing(fr: dict, st: dict, lang: str, rng: random.Random) -> int:
    n = len(fr[lang])
    cands = [i for i in range(n) if i != st["phr"] % n]
    if not cands:
        return st["phr"]
    base = _tokens(fr[lang][st["phr"] % n])
    picks = rng.sample(cands, min(2, len(cands)))
    # prefer the phrasing that shares fewer words with the original one
    return min(picks, key=lambda i: len(base & _tokens(fr[lang][i])) / max(1, len(base | _tokens(fr[lang][i]))))


def qa(fr, st, lang, rng):
    return [U(render_q(fr, st, lang, rng)), A(render_a(fr, st, lang, rng))]


def op_paraphrase(fr, st, lang, rng):
    st2 = clone(st, phr=other_phrasing(fr, st, lang, rng))
    return with_preambles(qa(fr, st, lang, rng), [U(render_q(fr, st2, lang, rng))], fr, lang, rng)


def _surface(fn):
    def op(fr, st, lang, rng):
        q = render_q(fr, st, lang, rng)
        q2 = fn(q, lang, rng, fr, st)
        if not q2 or q2 == q:
            return None
        return with_preambles([U(q), A(render_a(fr, st, lang, rng))], [U(q2)], fr, lang, rng)
    return op


def _typo(q, lang, rng, fr, st):
    protect = [slot_text(v, lang) for v in st["slots"].values()]
    return edit_typo(q, lang, rng, protect)


op_politeness = _surface(lambda q, lang, rng, fr, st: edit_politeness(q, lang, rng))
op_punctuation = _surface(lambda q, lang, rng, fr, st: edit_punctuation(q, lang, rng))
op_typo = _surface(_typo)
op_width = _surface(lambda q, lang, rng, fr, st: edit_width(q, rng) if lang == "zh" else None)
op_case = _surface(lambda q, lang, rng, fr, st: edit_case(q, lang, rng))


def op_reorder(fr, st, lang, rng):
    pairs = fr["reorder_" + lang]
    if not pairs:
        return None
    t1, t2 = rng.choice(pairs)
    if rng.random() < 0.5:
        t1, t2 = t2, t1
    q1 = render_q(fr, st, lang, rng, tpl=t1)
    q2 = render_q(fr, st, lang, rng, tpl=t2)
    return with_preambles([U(q1), A(render_a(fr, st, lang, rng))], [U(q2)], fr, lang, rng)


def op_repeat(fr, st, lang, rng):
    cached = qa(fr, st, lang, rng)
    if rng.random() < 0.35:
        pre = preamble(lang, rng, fr)
        return pre + cached, pre + cached[:1]
    return with_preambles(cached, cached[:1], fr, lang, rng)


def slot_follows(fr):
    return [fu for fu in fr["follow"] if fu.get("slot")]


def op_coref_same(fr, st, lang, rng):
    variants = []
    if fr["coref"]:
        variants.append("intro")
    if slot_follows(fr):
        variants += ["follow", "explicit"]
    if not variants:
        return None
    v = rng.choice(variants)
    if v == "intro":
        co = fr["coref"]
        name = co["slot"]
        intro = intro_pair(fr["slots"][name], st["slots"][name], lang, rng)
        cq = render_q(fr, st, lang, rng, tpl=rng.choice(co[lang]))
        explicit = qa(fr, st, lang, rng)
        if rng.random() < 0.6:
            return explicit, intro + [U(cq)]
        return intro + [U(cq), A(render_a(fr, st, lang, rng))], explicit[:1]
    fu = rng.choice(slot_follows(fr))
    val = pick_follow_value(fr, fu, st, rng)
    stf = followed_state(fu, st, val)
    if v == "follow":
        i1 = rng.randrange(len(fu[lang]))
        i2 = i1 if rng.random() < 0.5 else rng.randrange(len(fu[lang]))
        st_b = clone(st, phr=other_phrasing(fr, st, lang, rng)) if rng.random() < 0.6 else st
        cached = qa(fr, st, lang, rng) + [U(follow_text(fu, lang, val, rng, i1)),
                                          A(follow_answer(fr, fu, stf, lang, rng))]
        new = qa(fr, st_b, lang, rng) + [U(follow_text(fu, lang, val, rng, i2))]
        return cached, new
    # explicit: the follow-up in context resolves to exactly the cached explicit request
    cached = qa(fr, clone(stf, phr=rng.randrange(len(fr[lang]))), lang, rng)
    new = qa(fr, st, lang, rng) + [U(follow_text(fu, lang, val, rng))]
    if rng.random() < 0.3:
        return new + [A(render_a(fr, stf, lang, rng))], cached[:1]
    return cached, new


def _modify_slot(kind):
    def op(fr, st, lang, rng):
        names = [n for n, t in fr["slots"].items() if slot_kind(t) == kind]
        fol = [fu for fu in slot_follows(fr) if slot_kind(fr["slots"][fu["slot"]]) == kind]
        opts = []
        if names:
            opts += ["plain"] * 3
        if fol:
            opts.append("follow")
        if kind == "entity" and fr["flip"]:
            opts.append("flip")
        if not opts:
            return None
        v = rng.choice(opts)
        if v == "follow":
            fu = rng.choice(fol)
            val = pick_follow_value(fr, fu, st, rng)
            val2 = sample_value(fr["slots"][fu["slot"]], rng, avoid=val)
            if val2 == st["slots"][fu["slot"]]:
                return None
            i = rng.randrange(len(fu[lang]))
            first = qa(fr, st, lang, rng)
            cached = first + [U(follow_text(fu, lang, val, rng, i)),
                              A(follow_answer(fr, fu, followed_state(fu, st, val), lang, rng))]
            return cached, first + [U(follow_text(fu, lang, val2, rng, i))]
        if v == "flip":
            a, b = fr["flip"]
            st2 = clone(st, slots={a: st["slots"][b], b: st["slots"][a]})
        else:
            st2 = change_slot(fr, st, rng.choice(names), rng)
        if rng.random() < 0.25:
            st2 = clone(st2, phr=other_phrasing(fr, st, lang, rng))
        return with_preambles(qa(fr, st, lang, rng), [U(render_q(fr, st2, lang, rng))], fr, lang, rng)
    return op


op_number = _modify_slot("number")
op_entity = _modify_slot("entity")
op_constraint = _modify_slot("constraint")


def _modify_state(fr, st, lang, rng, st2):
    if rng.random() < 0.2:
        st2 = clone(st2, phr=other_phrasing(fr, st, lang, rng))
    return with_preambles(qa(fr, st, lang, rng), [U(render_q(fr, st2, lang, rng))], fr, lang, rng)


def op_add_requirement(fr, st, lang, rng):
    if not fr["req"] or st["req"] is not None:
        return None
    return _modify_state(fr, st, lang, rng, clone(st, req=rng.randrange(len(fr["req"]))))


def op_drop_requirement(fr, st, lang, rng):
    if st["req"] is None:
        return None
    return _modify_state(fr, st, lang, rng, clone(st, req=None))


def op_negation(fr, st, lang, rng):
    if not fr["neg"]:
        return None
    return _modify_state(fr, st, lang, rng, clone(st, neg=not st["neg"]))


def op_ellipsis_other_context(fr, st, lang, rng):
    variants = []
    if fr["coref"]:
        variants.append("coref")
    if fr["follow"]:
        variants.append("follow")
    if slot_follows(fr):
        variants.append("explicit")
    if not variants:
        return None
    v = rng.choice(variants)
    if v == "coref":
        co = fr["coref"]
        name = co["slot"]
        stY = change_slot(fr, st, name, rng)
        stype = fr["slots"][name]
        cq = rng.choice(co[lang])
        cached = intro_pair(stype, st["slots"][name], lang, rng) + [
            U(render_q(fr, st, lang, rng, tpl=cq)), A(render_a(fr, st, lang, rng))]
        new = intro_pair(stype, stY["slots"][name], lang, rng) + [U(render_q(fr, stY, lang, rng, tpl=cq))]
        return cached, new
    fu = rng.choice(fr["follow"] if v == "follow" else slot_follows(fr))
    names = [n for n, t in fr["slots"].items()
             if n != fu.get("slot") and not t.startswith("int:")]
    if not fu.get("slot"):
        # a fixed follow-up only changes meaning if its answer depends on the changed slot
        used = set(_PH.findall(" ".join(fu["ans_en"] + fu["ans_zh"])))
        names = [n for n in fr["slots"] if n in used]
    if not names:
        return None
    stY = change_slot(fr, st, rng.choice(names), rng)
    if rng.random() < 0.3:
        stY = clone(stY, phr=other_phrasing(fr, st, lang, rng))
    val = pick_follow_value(fr, fu, st, rng) if fu.get("slot") else None
    i = rng.randrange(len(fu[lang]))
    ftxt = follow_text(fu, lang, val, rng, i)
    new = qa(fr, stY, lang, rng) + [U(ftxt)]
    if v == "follow":
        cached = qa(fr, st, lang, rng) + [U(ftxt), A(follow_answer(fr, fu, followed_state(fu, st, val), lang, rng))]
    else:
        cached = qa(fr, followed_state(fu, st, val), lang, rng)
    return cached, new


COMMON_START = {"what", "what's", "how", "how's", "can", "could", "is", "are", "do", "does", "find",
                "give", "suggest", "recommend", "write", "tell", "explain", "any", "which", "where",
                "when", "who", "why", "should", "rewrite", "help", "make", "show", "list", "compare",
                "translate", "draft", "plan", "best", "good", "cheap", "will", "would", "the", "a", "an",
                "did", "was", "summarize", "polish", "turn", "need", "looking", "fix", "create",
                "convert", "whats", "hows", "got", "have", "has", "i'd", "i'm"}


def join_connector(conn: str, q: str, lang: str) -> str:
    if not conn:
        return q
    if lang == "en" and conn[-2] == ",":
        first = q.split(" ", 1)[0].lower().strip("?,.!")
        if first in COMMON_START:
            q = q[0].lower() + q[1:]
        else:
            return q
    return conn + q


def op_topic_switch(fr, st, lang, rng):
    same_dom = [f for f in FRAMES if f is not fr and f["domain"] == fr["domain"]]
    my_types = {t for t in fr["slots"].values() if not t.startswith("int:")}
    shared = [f for f in FRAMES if f is not fr and my_types & set(f["slots"].values())]
    r = rng.random()
    if shared and r < 0.4:  # another task about the same kind of entity (hard negative)
        pool = shared
    elif same_dom and r < 0.65:
        pool = same_dom
    else:
        pool = [f for f in FRAMES if f is not fr]
    fr2 = rng.choice(pool)
    st2 = make_base(fr2, lang, rng)
    if rng.random() < 0.6:  # share an entity so the surface overlap is misleading
        for n2, t2 in fr2["slots"].items():
            for n1, t1 in fr["slots"].items():
                if t1 == t2 and not t1.startswith("int:"):
                    st2["slots"][n2] = st["slots"][n1]
                    break
    q2 = render_q(fr2, st2, lang, rng)
    cached = qa(fr, st, lang, rng)
    if rng.random() < 0.5:
        conn = rng.choice(SWITCH_CONNECTORS[lang])
        pre = preamble(lang, rng, fr) if rng.random() < 0.2 else []
        return pre + cached, pre + cached + [U(join_connector(conn, q2, lang))], fr2["domain"]
    c, n = with_preambles(cached, [U(q2)], fr, lang, rng)
    return c, n, fr2["domain"]


def op_relation_flip(fr, st, lang, rng):
    rels = fr["rel_" + lang]
    if not rels:
        return None
    q2 = render_q(fr, clone(st, req=None), lang, rng, tpl=rng.choice(rels))
    cached = qa(fr, st, lang, rng)
    if rng.random() < 0.3:
        return cached, cached + [U(q2)]
    return with_preambles(cached, [U(q2)], fr, lang, rng)


OPS = {
    "paraphrase": op_paraphrase, "politeness": op_politeness, "punctuation": op_punctuation,
    "typo": op_typo, "width": op_width, "case": op_case, "reorder": op_reorder,
    "repeat": op_repeat, "coref_same": op_coref_same,
    "number": op_number, "entity": op_entity, "add_requirement": op_add_requirement,
    "drop_requirement": op_drop_requirement, "negation": op_negation,
    "constraint": op_constraint, "ellipsis_other_context": op_ellipsis_other_context,
    "topic_switch": op_topic_switch, "relation_flip": op_relation_flip,
}
LABEL_OF = {k: lab for lab, ks in KIND_WEIGHTS.items() for k in ks}


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def _valid(cached: list, new: list, label: str) -> bool:
    if not cached or not new or cached[0]["role"] != "user" or new[0]["role"] != "user":
        return False
    if cached[-1]["role"] != "assistant" or new[-1]["role"] != "user":
        return False
    for conv in (cached, new):
        for i, m in enumerate(conv):
            if m["role"] != ("user" if i % 2 == 0 else "assistant") or not m["content"].strip():
                return False
            if "{" in m["content"] or "}" in m["content"]:
                return False
    if len(new) > 7 or len(cached) > 8:
        return False
    last_c = cached[-2]["content"]
    if label != "same" and new == cached[:-1]:
        return False
    if label == "modify" and new[-1]["content"] == last_c and new[:-1] == cached[:-2]:
        return False
    return True


def _weighted(rng: random.Random, weights: dict) -> str:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


def generate(seed: int, n_records: int = TARGET_RECORDS) -> list[dict]:
    rng = random.Random(seed)
    records: list[dict] = []
    seen = set()
    base_no = 0
    by_domain = collections.defaultdict(list)
    for fr in FRAMES:
        by_domain[fr["domain"]].append(fr)
    domains = sorted(by_domain)
    while len(records) < n_records:
        # one base request per domain per round, so every domain gets a similar share
        rng.shuffle(domains)
        for dom in domains:
            if len(records) >= n_records:
                break
            fr = rng.choice(by_domain[dom])
            lang = "en" if base_no % 2 == 0 else "zh"
            base_no += 1
            st = make_base(fr, lang, rng)
            group = f"{fr['id']}-{lang}-{base_no:05d}"
            made = 0
            for _ in range(PAIRS_PER_BASE * 4):
                if made >= PAIRS_PER_BASE or len(records) >= n_records:
                    break
                label = _weighted(rng, LABEL_WEIGHTS)
                out = None
                for _ in range(8):  # retry within the label until an applicable edit is found
                    kind = _weighted(rng, KIND_WEIGHTS[label])
                    out = OPS[kind](fr, st, lang, rng)
                    if out is not None:
                        break
                if out is None:
                    continue
                domain = out[2] if len(out) == 3 else fr["domain"]
                cached, new = out[0], out[1]
                if not _valid(cached, new, label):
                    continue
                if label == "same" and [m["content"] for m in new if m["role"] == "user"] == \
                        [m["content"] for m in cached if m["role"] == "user"]:
                    kind = "repeat"  # e.g. an identical follow-up after the identical question
                key = json.dumps([cached[:-1], new], ensure_ascii=False)
                if key in seen:
                    continue
                seen.add(key)
                records.append({"cached": cached, "new": new, "label": label, "lang": lang,
                                "kind": kind, "domain": domain, "source": SOURCE, "group": group})
                made += 1
    return records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--n", type=int, default=TARGET_RECORDS)
    args = ap.parse_args(argv)
    recs = generate(args.seed, args.n)
    with open(args.out, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(recs)} records to {args.out}")
    multi = sum(1 for r in recs if len(r["new"]) > 1)
    print(f"multi-turn new: {multi} ({multi / max(1, len(recs)):.1%})")
    for field in ("label", "lang", "kind", "domain"):
        c = collections.Counter(r[field] for r in recs)
        print(field + ": " + ", ".join(f"{k}={v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1])))
    return 0




# ===========================================================================
# scenario frames
# ===========================================================================
# Templates use {slot}; {req} is an optional requirement (inserted before the final
# punctuation when a template has no {req}); {neg} a polarity phrase; {#a-b} a random
# integer in answers.  follow: elliptical follow-ups; coref: the request with a slot
# replaced by a pronoun; rel_*: same words, different question (switch).

# --------------------------- travel_planning -------------------------------
frame(id="flight", domain="travel_planning",
      slots={"a": "city", "b": "city", "day": "day"}, flip=("a", "b"),
      req=V("with no layovers|要直飞; under $500|500美元以内; with a checked bag included|含托运行李; "
            "leaving in the morning|早上出发; in business class|商务舱; with a window seat|要靠窗的座位"),
      en=["Find me a flight from {a} to {b} {day}{req}.",
          "Are there any flights from {a} to {b} {day}{req}?",
          "{a} to {b} flights {day}{req}",
          "I need to fly from {a} to {b} {day}{req}. What are my options?",
          "What's the best plane ticket I can get {day} going from {a} to {b}{req}?",
          "Can you look up flights {day}{req}? I'm going from {a} to {b}."],
      zh=["帮我查一下{day}从{a}飞{b}的航班{req}。",
          "{day}从{a}到{b}的机票{req}，有推荐吗？",
          "{a}飞{b}，{day}{req}",
          "我{day}要从{a}去{b}{req}，坐飞机有什么选择？",
          "想订{day}{a}到{b}的机票{req}。",
          "{day}有没有{a}到{b}的航班{req}？"],
      ans_en=["There are several flights from {a} to {b} {day}; the cheapest I found is about ${#90-480} with one stop, and a direct one is around ${#300-900}.",
              "I found a {a}–{b} flight {day} departing at {#6-11}:30 for about ${#120-700}. Want me to compare a few more?"],
      ans_zh=["{day}从{a}到{b}有好几班航班，最便宜的约{#600-3000}元（经停一次），直飞大约{#1500-6000}元。",
              "{day}{a}飞{b}有一班早上{#6-11}点半的航班，票价约{#800-5000}元，要不要我再多比较几家？"],
      rel_en=["How long is the flight from {a} to {b}?", "What's the time difference between {a} and {b}?",
              "Is it cheaper to take the train than to fly from {a} to {b}?"],
      rel_zh=["从{a}飞{b}要飞多久？", "{a}和{b}有时差吗？差几个小时？", "从{a}到{b}坐火车比坐飞机便宜吗？"],
      reorder_en=[("{day}, I need a flight from {a} to {b}.", "I need a flight from {a} to {b} {day}.")],
      reorder_zh=[("{day}我需要一张从{a}到{b}的机票。", "我需要一张从{a}到{b}的机票，{day}的。")],
      follow=[{"slot": "day", "en": ["And {day}?", "What about {day}?", "How about {day}?"],
               "zh": ["那{day}呢？", "{day}的呢？", "换成{day}呢？"]},
              {"en": ["Do I need a visa to go there?", "Do I need a visa for that trip?"],
               "zh": ["去那里需要签证吗？", "这趟要办签证吗？"],
               "ans_en": ["It depends on your passport; many travellers can visit {b} visa-free for short stays, but check the official entry rules before booking."],
               "ans_zh": ["这取决于你的护照，很多国家的游客短期去{b}可以免签，但订票前最好查一下官方入境规定。"]}],
      coref={"slot": "b", "en": ["Find me a flight there from {a} {day}.", "Are there flights from {a} to there {day}?"],
             "zh": ["帮我查{day}从{a}飞过去的航班。", "{day}从{a}飞那边有航班吗？"]})

frame(id="hotel", domain="travel_planning",
      slots={"city": "city", "style": "hotel_style", "n": "int:2:7"},
      req=V("with free breakfast|含早餐; with a pool|带泳池; near the metro|靠近地铁站; "
            "with parking|有停车位; with a gym|有健身房; that allows late check-out|可以延迟退房"),
      en=["Recommend a {style} hotel in {city} for {n} nights{req}.",
          "Looking for a {style} place to stay in {city}, {n} nights{req}.",
          "{style} hotels in {city}{req}, {n} nights?",
          "Can you suggest {style} accommodation in {city} for a {n}-night stay{req}?",
          "I'm spending {n} nights in {city} and need a {style} hotel{req}. Any ideas?",
          "Which {style} hotel should I book for {n} nights in {city}{req}?"],
      zh=["推荐一家{city}的{style}酒店，住{n}晚{req}。",
          "我要在{city}住{n}晚，想找{style}酒店{req}，有推荐吗？",
          "{city}有什么{style}酒店{req}？住{n}晚。",
          "帮我找个{city}的{style}酒店{req}，{n}个晚上。",
          "去{city}待{n}晚，住哪家{style}酒店比较好{req}？"],
      ans_en=["For {n} nights in {city}, I'd stay near the old town; a {style} hotel there typically runs about ${#60-400} a night. Book early for the best rates.",
              "A solid {style} pick in {city} is a small hotel near the main station at about ${#60-400} per night; book soon if you need all {n} nights."],
      ans_zh=["在{city}住{n}晚的话，建议住老城区附近，{style}酒店一晚大约{#300-2500}元，早点订更划算。",
              "{city}火车站附近有几家不错的{style}酒店，每晚约{#300-2500}元，要住{n}晚的话建议尽快预订。"],
      rel_en=["What time is check-out at most hotels in {city}?", "Do I need to tip hotel staff in {city}?",
              "Which neighbourhood of {city} is safest at night?"],
      rel_zh=["{city}的酒店一般几点退房？", "在{city}住酒店需要给小费吗？", "{city}哪个区晚上最安全？"],
      reorder_en=[("For {n} nights in {city}, which {style} hotel would you recommend?",
                   "Which {style} hotel would you recommend in {city} for {n} nights?")],
      reorder_zh=[("住{n}晚的话，{city}哪家{style}酒店好？", "{city}哪家{style}酒店好？住{n}晚。")],
      follow=[{"slot": "n", "en": ["What if I stay {n} nights?", "And for {n} nights?"],
               "zh": ["如果住{n}晚呢？", "那{n}晚呢？"]},
              {"en": ["Is it safe to walk around there at night?", "Is that area safe at night?"],
               "zh": ["那里晚上出门安全吗？", "那一带晚上安全吗？"],
               "ans_en": ["Central {city} is generally safe at night, but stick to busy, well-lit streets and watch your belongings."],
               "ans_zh": ["{city}市中心晚上总体比较安全，但尽量走人多、灯光亮的街道，注意看好随身物品。"]}],
      coref={"slot": "city", "en": ["Recommend a {style} hotel there for {n} nights.", "Any {style} hotels there? I'll stay {n} nights."],
             "zh": ["那边有什么{style}酒店推荐吗？住{n}晚。", "在那儿住{n}晚，哪家{style}酒店好？"]})

frame(id="itinerary", domain="travel_planning",
      slots={"city": "city", "n": "int:2:7", "style": "trip_style"},
      req=V("with kids|带小孩; without a car|不租车; including a day trip|包含一日游; "
            "avoiding crowds|避开人多的地方; with a vegetarian in the group|有人吃素"),
      en=["Plan a {n}-day {style} itinerary for {city}{req}.",
          "I have {n} days in {city}. Can you put together a {style} schedule{req}?",
          "{n} days in {city}, {style} trip{req} - what should I do each day?",
          "What would a good {style} {n}-day trip to {city} look like{req}?",
          "Help me organize a {style} trip to {city} lasting {n} days{req}."],
      zh=["帮我规划一个{city}{n}天的{style}行程{req}。",
          "我在{city}有{n}天时间，想要{style}行程{req}，怎么安排？",
          "{city}{n}日游，{style}路线{req}",
          "去{city}玩{n}天{req}，给个{style}安排吧。",
          "能帮我排一下{city}{n}天的行程吗？要{style}{req}。"],
      ans_en=["Day 1: explore the historic center of {city}; after that, mix one museum, one market and a neighbourhood walk each day to keep the {n}-day plan {style}.",
              "For {n} days in {city}, start with the main sights, keep day {n} light, and plan {style} evenings near your hotel. I can add restaurant picks if you like."],
      ans_zh=["第1天逛{city}老城区，之后每天安排一个博物馆、一个市场和一段街区散步，让{n}天的行程保持{style}风格。",
              "{city}{n}天可以先看主要景点，最后一天安排轻松些，晚上就在酒店附近活动，整体是{style}路线。需要的话我再推荐餐厅。"],
      rel_en=["Is {n} days enough to see {city}?", "How many days do people usually spend in {city}?",
              "What's the best way to get around {city}?"],
      rel_zh=["{n}天够玩{city}吗？", "一般去{city}玩几天比较合适？", "在{city}怎么出行最方便？"],
      reorder_en=[("If I have {n} days in {city}, how should I plan a {style} trip?",
                   "How should I plan a {style} trip to {city} if I have {n} days?")],
      reorder_zh=[("如果在{city}有{n}天，{style}行程怎么安排？", "{style}行程怎么安排？我在{city}有{n}天。")],
      follow=[{"slot": "n", "en": ["What if I have {n} days instead?", "And for {n} days?"],
               "zh": ["如果是{n}天呢？", "改成{n}天呢？"]},
              {"en": ["What should I pack?", "What should I bring for that?"],
               "zh": ["我该带些什么？", "需要准备什么行李？"],
               "ans_en": ["For {city}, pack comfortable walking shoes, a light jacket and a power adapter; {n} days fits in a carry-on."],
               "ans_zh": ["去{city}建议带双好走的鞋、一件薄外套和转换插头，{n}天的行程一个登机箱就够了。"]}],
      coref={"slot": "city", "en": ["Plan a {n}-day {style} itinerary there.", "I have {n} days there. Can you put together a {style} schedule?"],
             "zh": ["帮我在那边规划{n}天的{style}行程。", "我在那儿有{n}天，怎么安排{style}行程？"]})

frame(id="best_time", domain="travel_planning",
      slots={"city": "city", "month": "month"},
      req=V("with kids|@带孩子; for hiking|@去徒步; for the beaches|@去海边玩; to avoid crowds|@想避开人潮; "
            "on a tight budget|@预算不多"),
      en=["Is {month} a good time to visit {city}{req}?",
          "Should I go to {city} in {month}{req}?",
          "{city} in {month}{req}: good idea or not?",
          "Thinking of visiting {city} in {month}{req}. Would you recommend it?",
          "How is {month} for a trip to {city}{req}?"],
      zh=["{month}去{city}{req}合适吗？",
          "{month}适合去{city}{req}吗？",
          "打算{month}去{city}{req}，你觉得怎么样？",
          "{city}，{month}{req}，值得去吗？",
          "{month}去{city}玩{req}，时机好不好？"],
      ans_en=["{month} is a decent time for {city}: expect around {#5-30}°C and moderate crowds. Book accommodation early if you go.",
              "Yes, {city} in {month} is pleasant, with mild weather around {#8-28}°C; just expect higher prices on weekends."],
      ans_zh=["{month}去{city}还不错，气温大约{#5-30}°C，人不算太多，建议提前订住宿。",
              "{month}的{city}挺舒服的，气温{#8-28}°C左右，不过周末价格会贵一些。"],
      rel_en=["What festivals take place in {city} in {month}?", "What should I pack for {city} in {month}?"],
      rel_zh=["{month}的{city}有什么节庆活动？", "{month}去{city}要带什么衣服？"],
      reorder_en=[("In {month}, is {city} worth visiting?", "Is {city} worth visiting in {month}?")],
      reorder_zh=[("{month}的话，{city}值得去吗？", "{city}值得去吗？我想{month}去。")],
      follow=[{"slot": "month", "en": ["What about {month}?", "And in {month}?"], "zh": ["那{month}呢？", "{month}呢？"]}],
      coref={"slot": "city", "en": ["Is {month} a good time to go there?", "Should I go there in {month}?"],
             "zh": ["{month}去那边合适吗？", "{month}适合去那儿吗？"]})


# --------------------------- customer_support ------------------------------
TYPES["plan"] = V("Premium|高级版; Family|家庭版; Student|学生版; Pro|专业版; Basic|基础版; "
                  "Annual|年度会员; Monthly|月度会员; Business|商务版; Plus|Plus; Starter|入门版; "
                  "Team|团队版; Ultimate|旗舰版; Lite|轻量版; Enterprise|企业版; Gold|黄金会员")

frame(id="order_status", domain="customer_support",
      slots={"product": "product", "oid": "int:100000:999999"},
      neg={"en": ("has already shipped", "still hasn't shipped"), "zh": ("已经发货了", "还没发货")},
      en=["My {product} order #{oid} {neg}. When will it get here?",
          "Order #{oid} ({product}) {neg} - can you tell me the delivery date?",
          "When will order #{oid} arrive? It's a {product} and it {neg}.",
          "Delivery date for #{oid}? The {product} {neg}.",
          "I ordered a {product}, order number {oid}, and it {neg}. Any idea when I'll receive it?"],
      zh=["我的{product}订单{oid}{neg}，什么时候能到？",
          "订单号{oid}，买的是{product}，{neg}，请问几号送达？",
          "{product}的订单（{oid}）{neg}，大概哪天能收到？",
          "请帮我查下订单{oid}什么时候到，{product}{neg}。",
          "订单{oid}{neg}，里面是{product}，预计送达时间是？"],
      ans_en=["Thanks for checking on order #{oid}. Since it {neg}, the estimated delivery for your {product} is in {#2-6} business days, and you'll get tracking updates by email.",
              "Your {product} (order #{oid}) {neg}; it should reach you within {#2-6} business days. I've flagged it so the warehouse prioritises it."],
      ans_zh=["订单{oid}{neg}，{product}预计{#2-6}个工作日内送达，物流更新会短信通知你。",
              "查到了，订单{oid}的{product}{neg}，预计{#2-6}天内送到，我已经帮你催促仓库了。"],
      rel_en=["Can I change the delivery address for order #{oid}?", "How do I return the {product} from order #{oid}?",
              "Why was I charged twice for order #{oid}?"],
      rel_zh=["订单{oid}能改收货地址吗？", "订单{oid}里的{product}怎么退货？", "订单{oid}为什么扣了两次钱？"],
      reorder_en=[("It's a {product}, order #{oid}, and it {neg}. When will it arrive?",
                   "When will my order #{oid} arrive? It's a {product} and it {neg}.")],
      reorder_zh=[("订单{oid}{neg}，是{product}，什么时候到？", "{product}什么时候到？订单号{oid}，{neg}。")],
      follow=[{"en": ["Can I cancel it instead?", "Could I just cancel it?"], "zh": ["那我能取消吗？", "可以直接取消吗？"],
               "ans_en": ["Yes, order #{oid} can still be cancelled from your Orders page; the refund takes 3-5 business days."],
               "ans_zh": ["可以，订单{oid}现在还能在“我的订单”里取消，退款3到5个工作日到账。"]}])

frame(id="refund", domain="customer_support",
      slots={"product": "product", "n": "int:3:60"},
      neg={"en": ("already opened it", "haven't opened it"), "zh": ("已经拆封了", "还没拆封")},
      req=V("with a gift card payment|用礼品卡付的款; without the receipt|@没有小票; bought on sale|@是打折时买的; "
            "with a coupon applied|用了优惠券; bought as a gift|@是别人送的"),
      en=["I bought a {product} {n} days ago and {neg}. Can I get a refund{req}?",
          "Can I return a {product} I bought {n} days ago{req}? I {neg}.",
          "Refund for a {product} bought {n} days ago{req} - I {neg}.",
          "Is it too late to get my money back on a {product} from {n} days ago{req}? I {neg}.",
          "What's your refund policy for a {product} purchased {n} days ago{req}? I {neg}."],
      zh=["{n}天前买的{product}{req}，{neg}，能退款吗？",
          "我{n}天前买了{product}{req}，{neg}，还能退吗？",
          "{product}买了{n}天了{req}，{neg}，怎么申请退款？",
          "请问买了{n}天{req}、{neg}的{product}可以退款吗？",
          "想退{n}天前买的{product}{req}，{neg}，行不行？"],
      ans_en=["Purchases can be refunded within 30 days, so a {product} bought {n} days ago may still qualify; start a return from your order page and the refund goes back to your original payment method in 5-7 days.",
              "Since you {neg}, a {product} from {n} days ago is handled under our 30-day policy; request the return online and we'll email a prepaid label."],
      ans_zh=["我们支持30天内退款，{n}天前买的{product}还在期限内的话，在订单页面申请退货即可，退款5到7个工作日原路返回。",
              "{product}{neg}的情况按30天退货政策处理，你在线提交申请后我们会发送免费退货面单。"],
      rel_en=["How long does a refund for a {product} take to show up on my card?",
              "Can I exchange the {product} instead of getting a refund?"],
      rel_zh=["{product}的退款多久能到账？", "{product}可以换货而不是退款吗？"],
      reorder_en=[("I bought a {product} {n} days ago and I {neg}; can I get a refund?",
                   "Can I get a refund on the {product} I bought {n} days ago? I {neg}.")],
      reorder_zh=[("{neg}的{product}，{n}天前买的，能退吗？", "{n}天前买的{product}能退吗？{neg}。")],
      follow=[{"slot": "n", "en": ["What if I bought it {n} days ago?", "And if it was {n} days ago?"],
               "zh": ["如果是{n}天前买的呢？", "那{n}天前买的呢？"]}])

frame(id="contact", domain="customer_support",
      slots={"channel": "channel", "item": "account_item"},
      req=V("outside business hours|@在非工作时间; in Spanish|@用西班牙语; as a business customer|@以企业客户身份; "
            "on a weekend|@周末; with a hearing impairment|@作为听障人士"),
      en=["How can I contact support via {channel} about my {item}{req}?",
          "What's the best way to reach you through {channel} regarding a {item}{req}?",
          "{item} issue - can I get help over {channel}{req}?",
          "I'd like to talk to someone about my {item} using {channel}{req}. How do I do that?",
          "Is {channel} support available for {item} questions{req}?"],
      zh=["我的{item}有问题，怎么{req}通过{channel}联系客服？",
          "{item}的问题{req}能用{channel}找客服吗？",
          "想{req}用{channel}咨询{item}的事，怎么操作？",
          "{req}{channel}可以处理{item}问题吗？",
          "请问{item}相关的问题，{req}{channel}渠道怎么联系？"],
      ans_en=["You can reach us through {channel} from the Help section of your account; choose '{item}' as the topic and an agent usually replies within {#5-60} minutes.",
              "Yes - pick {channel} on the Contact Us page and select the {item} category; typical wait time is about {#5-60} minutes."],
      ans_zh=["你可以在账户的帮助页面选择{channel}联系我们，主题选“{item}”，客服一般{#5-60}分钟内回复。",
              "可以，在“联系我们”页面选择{channel}，问题类型选{item}，平均等待{#5-60}分钟左右。"],
      rel_en=["What are your support hours on {channel}?", "Why was my {item} flagged for review?"],
      rel_zh=["{channel}客服几点上班？", "我的{item}为什么被审核了？"],
      reorder_en=[("About my {item}: can I reach support through {channel}?", "Can I reach support through {channel} about my {item}?")],
      reorder_zh=[("关于{item}的问题，可以通过{channel}联系客服吗？", "可以通过{channel}联系客服咨询{item}的问题吗？")],
      follow=[{"slot": "channel", "en": ["What about {channel}?", "And via {channel}?"], "zh": ["那{channel}呢？", "用{channel}可以吗？"]}])

frame(id="cancel_sub", domain="customer_support",
      slots={"plan": "plan", "n": "int:7:30"},
      req=V("from the app|最好在App里操作; on an iPhone|我用的是苹果手机; without calling anyone|不想打电话; "
            "and keep my data|并且保留数据; and get a prorated refund|并按比例退款"),
      en=["How do I cancel my {plan} subscription before the {n}-day trial ends{req}?",
          "I want to cancel the {plan} plan during my {n}-day free trial{req}. How?",
          "Cancel {plan} subscription within {n}-day trial{req}",
          "Can I stop my {plan} membership before the {n}-day trial is over{req}?",
          "What are the steps to end a {plan} trial ({n} days) without paying{req}?"],
      zh=["怎么在{n}天试用期结束前取消{plan}订阅{req}？",
          "我想在{n}天免费试用期内退订{plan}{req}，怎么弄？",
          "{plan}试用{n}天，到期前取消{req}",
          "{plan}还在{n}天试用期，能提前取消吗{req}？",
          "试用期{n}天的{plan}{req}，怎样取消才不扣费？"],
      ans_en=["Go to Settings > Subscription, select {plan} and tap Cancel trial; as long as you do it before the {n} days are up, you won't be charged.",
              "You can cancel {plan} any time during the {n}-day trial under Account > Billing, and access continues until the trial ends."],
      ans_zh=["进入设置→订阅，选择{plan}后点击取消试用，只要在{n}天内操作就不会扣费。",
              "在“账户→账单”里随时可以取消{plan}，{n}天试用期内取消不收费，试用结束前仍可正常使用。"],
      rel_en=["What's included in the {plan} plan?", "How much does {plan} cost after the {n}-day trial?"],
      rel_zh=["{plan}包含哪些功能？", "{n}天试用结束后{plan}多少钱？"],
      reorder_en=[("Before my {n}-day trial ends, how can I cancel {plan}?", "How can I cancel {plan} before my {n}-day trial ends?")],
      reorder_zh=[("试用期{n}天结束前，{plan}怎么取消？", "{plan}怎么取消？要在{n}天试用期结束前。")],
      follow=[{"slot": "plan", "en": ["And the {plan} plan?", "What about {plan}?"], "zh": ["那{plan}呢？", "{plan}也是这样吗？"]}])


# --------------------------------- code_qa ---------------------------------
TYPES["sqlent"] = V("customers|客户; products|商品; employees|员工; stores|门店; cities|城市; suppliers|供应商; "
                    "authors|作者; songs|歌曲; movies|电影; students|学生; courses|课程; drivers|司机; "
                    "hotels|酒店; apps|应用; restaurants|餐厅")
TYPES["metric"] = V("total revenue|总收入; number of orders|订单数; average rating|平均评分; total sales|总销量; "
                    "profit|利润; page views|浏览量; refunds|退款额; monthly growth|月增长率; "
                    "active users|活跃用户数; complaints|投诉数; delivery time|配送时长; return rate|退货率; "
                    "click-through rate|点击率; downloads|下载量; revenue per user|人均收入")

frame(id="howto", domain="code_qa",
      slots={"task": "ctask", "pl": "plang"},
      req=V("without external libraries|不用第三方库; in one line|用一行代码; efficiently for large inputs|处理大数据时要高效; "
            "with error handling|要带错误处理; using only the standard library|只用标准库; asynchronously|异步地"),
      en=["How do I {task} in {pl}{req}?",
          "{pl}: {task}{req}",
          "What's the idiomatic way to {task} with {pl}{req}?",
          "Show me {pl} code to {task}{req}.",
          "I'm writing {pl} and need to {task}{req}. What's the best approach?",
          "Could you give an example of how to {task} using {pl}{req}?"],
      zh=["{pl}里怎么{task}{req}？",
          "用{pl}{task}{req}",
          "{pl}中{task}的标准写法是什么{req}？",
          "给我一段{pl}代码，实现{task}{req}。",
          "我在写{pl}，需要{task}{req}，怎么做最好？"],
      ans_en=["In {pl} you can {task} with a short helper built on the standard library; add a unit test for edge cases such as empty input.",
              "The usual {pl} approach to {task} is a small function that wraps the built-in API and handles errors; I can paste a full snippet if you want."],
      ans_zh=["在{pl}里可以用标准库写一个小函数来{task}，记得为空输入等边界情况加上单元测试。",
              "{pl}里{task}一般封装成一个小函数，调用内置接口并处理异常，需要的话我可以给完整代码。"],
      rel_en=["What's the time complexity when you {task} in {pl}?", "Why does my {pl} code to {task} throw an error?"],
      rel_zh=["{pl}里{task}的时间复杂度是多少？", "为什么我用{pl}{task}的代码报错了？"],
      reorder_en=[("In {pl}, how do I {task}?", "How do I {task} in {pl}?")],
      reorder_zh=[("在{pl}里，{task}怎么写？", "{task}在{pl}里怎么写？")],
      follow=[{"slot": "pl", "en": ["And in {pl}?", "What about {pl}?", "How would that look in {pl}?"],
               "zh": ["那{pl}呢？", "用{pl}怎么写？", "换成{pl}呢？"]}],
      coref={"slot": "pl", "en": ["How do I {task} in it?", "What's the idiomatic way to {task} with it?"],
             "zh": ["用它怎么{task}？", "在这个语言里{task}怎么写？"]})

frame(id="debug", domain="code_qa",
      slots={"err": "cerror", "pl": "plang"},
      neg={"en": ("also happens", "doesn't happen"), "zh": ("本地运行也会出现", "本地运行不会出现")},
      en=["I'm getting a {err} in my {pl} app. It {neg} when I run it locally. How do I fix it?",
          "How do I debug a {err} in {pl}? It {neg} locally.",
          "{pl} {err} - it {neg} locally. Ideas?",
          "What usually causes a {err} in {pl} code? In my case it {neg} locally.",
          "Help me fix a {err} in my {pl} service; it {neg} locally."],
      zh=["我的{pl}程序报{err}，{neg}，怎么解决？",
          "{pl}出现{err}怎么排查？{neg}。",
          "{pl} {err}，{neg}，求思路",
          "{pl}代码里的{err}一般是什么原因？我这边{neg}。",
          "帮我修一下{pl}服务的{err}问题，{neg}。"],
      ans_en=["A {err} in {pl} usually comes from state that differs between environments; since it {neg} locally, compare configs, add logging around the failing call and reproduce with the same inputs.",
              "Start by capturing the full stack trace of the {err}, then bisect recent {pl} changes; the fact that it {neg} locally narrows it to environment or data."],
      ans_zh=["{pl}里出现{err}通常和运行环境的差异有关，既然{neg}，建议对比配置、在出错位置加日志，并用相同输入复现。",
              "先拿到{err}的完整堆栈，再二分排查最近的{pl}改动；{neg}这一点能帮你把范围缩小到环境或数据上。"],
      rel_en=["What exactly is a {err} in {pl}?", "How do I write a test that reproduces a {err} in {pl}?"],
      rel_zh=["{pl}里的{err}到底是什么意思？", "怎么写测试来复现{pl}的{err}？"],
      reorder_en=[("My {pl} app throws a {err} and it {neg} locally; why?", "Why does my {pl} app throw a {err}? It {neg} locally.")],
      reorder_zh=[("{pl}程序报{err}，{neg}，为什么？", "为什么{pl}程序会报{err}？{neg}。")],
      follow=[{"slot": "err", "en": ["What if it's a {err} instead?", "And a {err}?"], "zh": ["如果是{err}呢？", "那{err}呢？"]}])

frame(id="compare_tools", domain="code_qa",
      slots={"a": "tool", "b": "tool"},
      req=V("for a small startup|对小创业公司来说; for beginners|对新手来说; in terms of performance|从性能角度看; "
            "for a side project|用于个人项目; on Windows|在Windows上"),
      en=["What's the difference between {a} and {b}{req}?",
          "{a} vs {b}{req}?",
          "Can you compare {a} and {b} for me{req}?",
          "How does {a} differ from {b}{req}?",
          "I'm trying to decide between {a} and {b}{req}. What are the main differences?"],
      zh=["{a}和{b}有什么区别{req}？",
          "{a} vs {b}{req}",
          "帮我比较一下{a}和{b}{req}。",
          "{a}跟{b}差在哪{req}？",
          "我在{a}和{b}之间纠结{req}，主要区别是什么？"],
      ans_en=["{a} and {b} solve different problems: {a} is usually picked for its ecosystem and simplicity, while {b} shines when you need more control. The choice mostly depends on what you already run.",
              "In short, {a} is easier to start with and {b} scales better for complex setups; many teams end up using both."],
      ans_zh=["{a}和{b}定位不同：{a}胜在生态和易用，{b}更适合需要精细控制的场景，最终取决于你们现有的技术栈。",
              "简单说，{a}上手更快，{b}在复杂场景下扩展性更好，很多团队两个都会用。"],
      rel_en=["Can I use {a} together with {b}?", "Should I learn {a} before {b}?", "How do I migrate from {a} to {b}?"],
      rel_zh=["{a}和{b}能一起用吗？", "应该先学{a}还是先学{b}？", "怎么从{a}迁移到{b}？"],
      reorder_en=[("Between {a} and {b}, what are the key differences?", "What are the key differences between {a} and {b}?")],
      reorder_zh=[("在{a}和{b}之间，主要区别是什么？", "主要区别是什么？我说的是{a}和{b}。")],
      follow=[{"slot": "b", "en": ["And compared with {b}?", "What about {b}?"], "zh": ["那跟{b}比呢？", "和{b}比呢？"]}])

frame(id="sql_top", domain="code_qa",
      slots={"n": "int:3:20", "ent": "sqlent", "metric": "metric"},
      neg={"en": ("including", "excluding"), "zh": ("包含", "不包含")},
      req=V("in PostgreSQL|用PostgreSQL; for MySQL 5.7|用MySQL 5.7; grouped by month|按月分组; with ties included|并列的也要算上"),
      en=["Write a SQL query that returns the top {n} {ent} by {metric}, {neg} cancelled orders{req}.",
          "SQL for top {n} {ent} ranked by {metric} ({neg} cancelled orders){req}",
          "How would I query the {n} {ent} with the highest {metric}, {neg} cancelled orders{req}?",
          "I need a query{req}: {n} best {ent} by {metric}, {neg} cancelled orders.",
          "Can you give me SQL to list the top {n} {ent} sorted by {metric}, {neg} cancelled orders{req}?"],
      zh=["写一个SQL{req}，查询{metric}最高的前{n}个{ent}，{neg}已取消的订单。",
          "SQL：按{metric}排序取前{n}名{ent}（{neg}已取消订单）{req}",
          "怎么用SQL查出{metric}排名前{n}的{ent}{req}？{neg}已取消的订单。",
          "帮我写个查询：{metric}前{n}的{ent}，{neg}取消的订单{req}。",
          "想查{ent}里{metric}最高的{n}个{req}，SQL怎么写？{neg}已取消订单。"],
      ans_en=["Group by the {ent} key, aggregate {metric}, then ORDER BY it DESC LIMIT {n}; cancelled orders are handled in the WHERE clause ({neg} them as you asked).",
              "Use a CTE that computes {metric} per {ent}, rank it with ROW_NUMBER() and keep rank <= {n}, {neg} cancelled orders in the base filter."],
      ans_zh=["先按{ent}分组汇总{metric}，再降序排列并 LIMIT {n}，已取消订单在 WHERE 里处理（按你的要求{neg}）。",
              "可以用 CTE 先算出每个{ent}的{metric}，再用 ROW_NUMBER() 排名并保留前{n}，基础过滤里{neg}已取消订单。"],
      rel_en=["Why is my query for the top {n} {ent} by {metric} so slow?", "How do I add an index to speed up sorting {ent} by {metric}?"],
      rel_zh=["为什么查{metric}前{n}的{ent}这么慢？", "怎么加索引来加快按{metric}排序{ent}？"],
      reorder_en=[("Top {n} {ent} by {metric}, {neg} cancelled orders: how do I write that in SQL?",
                   "How do I write SQL for the top {n} {ent} by {metric}, {neg} cancelled orders?")],
      reorder_zh=[("{metric}前{n}的{ent}，{neg}已取消订单，SQL怎么写？", "SQL怎么写：{metric}前{n}的{ent}，{neg}已取消订单？")],
      follow=[{"slot": "n", "en": ["What about the top {n}?", "And top {n}?"], "zh": ["那前{n}呢？", "改成前{n}名呢？"]}])


# ------------------------------- doc_rewrite -------------------------------
TYPES["snip"] = V("I can't attend Friday's meeting|我周五的会参加不了; the shipment will be two weeks late|这批货要晚两周到; "
                  "we are raising prices next month|我们下个月要涨价; your application was not successful|你的申请没有通过; "
                  "the server was down for three hours|服务器宕机了三个小时; I'd like to ask for a raise|我想申请加薪; "
                  "the launch is moved to June|发布推迟到六月; we loved working with you|和你合作非常愉快; "
                  "the invoice is 30 days overdue|发票已经逾期30天; I'm leaving the company|我要离职了; "
                  "the office will be closed on Monday|周一办公室关闭; we need the report by Thursday|周四前需要报告; "
                  "our budget was cut by 20%|我们的预算被砍了20%; the event is sold out|活动票已经卖完了; "
                  "thank you for your patience|感谢你的耐心等待; the rent will go up in May|五月起房租要上涨")
TYPES["report"] = V("quarterly report|季度报告; research paper|研究论文; meeting transcript|会议记录; "
                    "annual review|年度总结; user survey|用户调研报告; incident report|事故报告; "
                    "market analysis|市场分析; policy document|政策文件; product spec|产品需求文档; "
                    "news article|新闻报道; court ruling|法院判决书; earnings call|财报电话会议纪要; "
                    "white paper|白皮书; grant proposal|项目申请书; case study|案例分析")
TYPES["keep"] = V("main point|核心观点; deadline|截止日期; apology|道歉; numbers|数据; call to action|行动号召; "
                  "key dates|关键日期; pricing details|价格信息; names|人名; joke at the end|结尾的笑点; "
                  "technical terms|专业术语; thank-you|感谢语; contact details|联系方式; main request|主要请求; "
                  "legal disclaimer|免责声明; product names|产品名称")
TYPES["tlang"] = V("French|法语; German|德语; Japanese|日语; Spanish|西班牙语; Korean|韩语; Italian|意大利语; "
                   "Portuguese|葡萄牙语; Russian|俄语; Arabic|阿拉伯语; Thai|泰语; Vietnamese|越南语; "
                   "Dutch|荷兰语; Turkish|土耳其语; Indonesian|印尼语; Polish|波兰语")

frame(id="rewrite_tone", domain="doc_rewrite",
      slots={"doc": "doc", "aud": "audience", "tone": "tone", "snip": "snip"},
      req=V("under 100 words|100字以内; with a clear call to action|加一个明确的行动号召; in three sentences|控制在三句话; "
            "with bullet points|用要点列出; without exclamation marks|不要用感叹号"),
      en=["Rewrite this {doc} for {aud} in a {tone} tone{req}: \"{snip}\"",
          "Make this sound {tone}{req} - it's a {doc} to {aud}: \"{snip}\"",
          "Can you turn \"{snip}\" into a {tone} {doc} for {aud}{req}?",
          "Polish my {doc} to {aud} so it sounds {tone}{req}. Text: \"{snip}\"",
          "\"{snip}\" - please rephrase as a {tone} {doc} addressed to {aud}{req}."],
      zh=["把这封给{aud}的{doc}改成{tone}的语气{req}：“{snip}”",
          "帮我润色一下给{aud}的{doc}，要{tone}一点{req}：“{snip}”",
          "“{snip}”——请改写成写给{aud}的{doc}，语气{tone}{req}。",
          "我要给{aud}写{doc}，内容是“{snip}”，帮我改得{tone}些{req}。",
          "用{tone}的风格重写这段{doc}（收件人：{aud}）{req}：“{snip}”"],
      ans_en=["Here's a {tone} version for {aud}: \"I wanted to let you know that {snip}. Please let me know if you have any questions.\"",
              "Try this {tone} wording: \"Quick update - {snip}. Thanks for understanding, and I'm happy to discuss.\""],
      ans_zh=["给{aud}的{tone}版本：“您好，特此告知：{snip}。如有任何问题，请随时联系我。”",
              "可以这样写（{tone}）：“跟您同步一下，{snip}。感谢理解，有问题随时沟通。”"],
      rel_en=["Is it appropriate to send \"{snip}\" to {aud} in a {doc}?", "Translate \"{snip}\" into Spanish."],
      rel_zh=["把“{snip}”这句话直接发给{aud}合适吗？", "把“{snip}”翻译成英文。"],
      reorder_en=[("For {aud}, rewrite this {doc} in a {tone} tone: \"{snip}\"", "Rewrite this {doc} in a {tone} tone for {aud}: \"{snip}\"")],
      reorder_zh=[("给{aud}的{doc}，用{tone}的语气改写：“{snip}”", "用{tone}的语气改写这封给{aud}的{doc}：“{snip}”")],
      follow=[{"slot": "tone", "en": ["Make it {tone} instead.", "Can you make it more {tone}?", "Now a {tone} version, please."],
               "zh": ["改成{tone}一点的。", "能再{tone}些吗？", "换成{tone}的语气。"]}])

frame(id="summarize", domain="doc_rewrite",
      slots={"report": "report", "n": "int:2:8", "level": "level"},
      req=V("keeping all numbers|保留所有数字; with a one-line headline|加一个一句话标题; in plain language|用大白话; "
            "highlighting risks|突出风险点; in bullet points|用要点形式"),
      en=["Summarize the attached {report} in {n} sentences for {level}{req}.",
          "Give me a {n}-sentence summary of this {report}, aimed at {level}{req}.",
          "TL;DR of the {report} in {n} sentences{req}? Audience: {level}.",
          "Can you condense this {report} into {n} sentences that {level} would understand{req}?",
          "I need the {report} boiled down to {n} sentences for {level}{req}."],
      zh=["用{n}句话给{level}总结一下这份{report}{req}。",
          "把这份{report}概括成{n}句话，读者是{level}{req}。",
          "{report}太长了，帮我压缩成{n}句，要让{level}看得懂{req}。",
          "请为{level}写一个{n}句话的{report}摘要{req}。",
          "这份{report}，{n}句话总结{req}，给{level}看的。"],
      ans_en=["Here's a {n}-sentence summary of the {report} for {level}: the main finding is a {#5-30}% improvement over the last period, driven by two key changes, with one open risk to watch.",
              "In {n} sentences for {level}: the {report} argues that costs rose {#3-20}% while output held steady, and it recommends a phased fix over the next two quarters."],
      ans_zh=["给{level}的{n}句话{report}摘要：核心结论是比上期提升了{#5-30}%，主要来自两项关键改动，另有一个风险需要关注。",
              "用{n}句话讲给{level}：这份{report}指出成本上升了{#3-20}%而产出持平，建议在接下来两个季度分阶段解决。"],
      rel_en=["What's the best way to structure a {report}?", "Translate this {report} into English.", "Who should sign off on a {report} like this?"],
      rel_zh=["{report}一般怎么安排结构比较好？", "把这份{report}翻译成英文。", "这种{report}应该由谁审批？"],
      reorder_en=[("For {level}, summarize this {report} in {n} sentences.", "Summarize this {report} in {n} sentences for {level}.")],
      reorder_zh=[("给{level}看的话，这份{report}用{n}句话怎么总结？", "这份{report}用{n}句话怎么总结？给{level}看的。")],
      follow=[{"slot": "n", "en": ["Now make it {n} sentences.", "Can you do it in {n} sentences?"],
               "zh": ["改成{n}句话。", "能压缩到{n}句吗？"]}])

frame(id="shorten", domain="doc_rewrite",
      slots={"doc": "doc", "n": "int:50:300:10", "keep": "keep"},
      en=["Shorten this {doc} to under {n} words without losing the {keep}.",
          "Can you cut my {doc} down to {n} words max? Keep the {keep}.",
          "Trim this {doc} to fewer than {n} words, but the {keep} must stay.",
          "{doc} too long - get it under {n} words, keep the {keep}",
          "Please condense my {doc} so it's below {n} words while preserving the {keep}."],
      zh=["把这封{doc}缩短到{n}字以内，{keep}不能丢。",
          "帮我把{doc}删减到最多{n}字，保留{keep}。",
          "{doc}太长了，压到{n}字以下，{keep}要留着。",
          "能把我的{doc}精简到{n}字内吗？{keep}得保留。",
          "请在保留{keep}的前提下，把{doc}压缩到{n}字以内。"],
      ans_en=["I trimmed the {doc} to about {n} words by cutting repeated phrases, and kept the {keep} in the opening sentence.",
              "Here's a version under {n} words: I merged the first two paragraphs and left the {keep} untouched."],
      ans_zh=["已把{doc}压缩到{n}字左右，删掉了重复表达，{keep}放在了第一句。",
              "这是{n}字以内的版本：我合并了前两段，{keep}原样保留。"],
      rel_en=["How long should a {doc} usually be?", "Is {n} words too long for a {doc}?"],
      rel_zh=["{doc}一般写多长合适？", "{n}字的{doc}算长吗？"],
      reorder_en=[("Keeping the {keep}, shorten my {doc} to under {n} words.", "Shorten my {doc} to under {n} words, keeping the {keep}.")],
      reorder_zh=[("保留{keep}，把{doc}缩到{n}字以内。", "把{doc}缩到{n}字以内，保留{keep}。")],
      follow=[{"slot": "n", "en": ["Now under {n} words.", "Can you get it under {n}?"], "zh": ["再压到{n}字以内。", "能缩到{n}字吗？"]}])

frame(id="translate", domain="doc_rewrite",
      slots={"doc": "doc", "tl": "tlang", "tone": "tone", "snip": "snip"},
      en=["Translate this line from my {doc} into {tl}, keeping it {tone}: \"{snip}\"",
          "How would I say \"{snip}\" in {tl}? It's for a {tone} {doc}.",
          "\"{snip}\" -> {tl}, {tone} tone please (it goes in a {doc})",
          "Can you put \"{snip}\" into {tl}? Keep the {tone} register, it's part of a {doc}.",
          "I need a {tone} {tl} translation of this {doc} sentence: \"{snip}\""],
      zh=["把{doc}里的这句话翻译成{tl}，保持{tone}的语气：“{snip}”",
          "“{snip}”用{tl}怎么说？是{tone}风格的{doc}里用的。",
          "“{snip}”→{tl}，语气{tone}（用在{doc}里）",
          "帮我把“{snip}”翻成{tl}，{doc}用的，要{tone}。",
          "需要一个{tone}的{tl}译文，是{doc}里的一句：“{snip}”"],
      ans_en=["Here's a {tone} {tl} rendering of \"{snip}\" that fits a {doc}; I kept the structure close to the original.",
              "In {tl}, a {tone} way to put it in your {doc} keeps the same sentence order; I can also give a more literal version."],
      ans_zh=["这是适合{doc}的{tone}{tl}译文，我尽量保留了原句结构。",
              "用{tl}表达时可以保持原来的语序，语气偏{tone}，也可以再给你一个直译版本。"],
      rel_en=["Is \"{snip}\" grammatically correct?", "How do you pronounce this in {tl}: \"{snip}\"?"],
      rel_zh=["“{snip}”这句话有语病吗？", "“{snip}”用{tl}怎么念？"],
      reorder_en=[("Keeping a {tone} tone, translate into {tl}: \"{snip}\"", "Translate into {tl} with a {tone} tone: \"{snip}\"")],
      reorder_zh=[("保持{tone}的语气，翻译成{tl}：“{snip}”", "翻译成{tl}，保持{tone}的语气：“{snip}”")],
      follow=[{"slot": "tl", "en": ["And in {tl}?", "Now {tl}, please."], "zh": ["那{tl}呢？", "再翻成{tl}。"]}])


# -------------------------- product_recommendation -------------------------
TYPES["brand"] = V("Sony|索尼; Bose|Bose; Apple|苹果; Samsung|三星; Dell|戴尔; Lenovo|联想; Dyson|戴森; "
                   "Xiaomi|小米; Philips|飞利浦; Logitech|罗技; Garmin|佳明; Asus|华硕; HP|惠普; "
                   "Panasonic|松下; Huawei|华为; Anker|安克")
TYPES["recipient"] = V("my wife|老婆; my husband|老公; my boss|老板; a coworker|同事; my best friend|好朋友; "
                       "my 10-year-old nephew|10岁的侄子; my grandpa|爷爷; my teacher|老师; my girlfriend|女朋友; "
                       "my boyfriend|男朋友; a new neighbour|新邻居; my mother-in-law|婆婆; a client|客户; "
                       "my brother|哥哥; my daughter|女儿")
TYPES["hobby"] = V("hiking|徒步; cooking|做饭; photography|摄影; gardening|园艺; gaming|打游戏; reading|看书; "
                   "coffee|咖啡; yoga|瑜伽; music|音乐; travel|旅行; painting|画画; fishing|钓鱼; tea|喝茶; "
                   "cycling|骑行; board games|桌游")

frame(id="rec_budget", domain="product_recommendation",
      slots={"product": "product", "buyer": "buyer", "price": "int:50:2000:50"},
      req=V("with long battery life|续航要长; that's lightweight|要轻便; in black|要黑色的; with good reviews|口碑要好; "
            "that's easy to repair|要方便维修"),
      en=["Recommend a {product} for {buyer} under ${price}{req}.",
          "What's the best {product} I can get for {buyer} with a ${price} budget{req}?",
          "{product} for {buyer}, max ${price}{req} - suggestions?",
          "I'm shopping for a {product} for {buyer}. Budget is ${price}{req}. What should I buy?",
          "Which {product} would you suggest for {buyer} if I don't want to spend more than ${price}{req}?"],
      zh=["推荐一款适合{buyer}的{product}，预算{price}元以内{req}。",
          "给{buyer}买{product}，{price}块钱以内{req}，有什么推荐？",
          "{price}元以内{req}，适合{buyer}用的{product}哪款好？",
          "想给{buyer}挑个{product}{req}，不超过{price}元，买哪个？",
          "预算{price}元，{buyer}用的{product}{req}，求推荐。"],
      ans_en=["For {buyer}, a well-reviewed mid-range {product} around ${price} is the sweet spot; last year's model is often discounted and nearly as good.",
              "With ${price} for {buyer}, I'd pick a {product} from a reliable brand with a 2-year warranty rather than the flashiest option."],
      ans_zh=["给{buyer}的话，{price}元以内选口碑好的中端{product}就够了，上一代型号经常打折，性价比更高。",
              "预算{price}元给{buyer}买{product}，建议选保修两年的可靠品牌，不必追求最花哨的型号。"],
      rel_en=["How long does a typical {product} last?", "How do I clean a {product} properly?", "When do {product} prices usually drop?"],
      rel_zh=["{product}一般能用几年？", "{product}怎么清洁保养？", "{product}一般什么时候降价？"],
      reorder_en=[("With a ${price} budget, which {product} is best for {buyer}?", "Which {product} is best for {buyer} with a ${price} budget?")],
      reorder_zh=[("预算{price}元的话，哪款{product}适合{buyer}？", "哪款{product}适合{buyer}？预算{price}元。")],
      follow=[{"slot": "price", "en": ["What if my budget is ${price}?", "And under ${price}?"],
               "zh": ["如果预算是{price}元呢？", "那{price}元以内呢？"]},
              {"en": ["Where can I buy it?", "Is it on sale anywhere?"], "zh": ["在哪儿买比较好？", "哪里有打折？"],
               "ans_en": ["Check the brand's official store and big retailers; {product} deals under ${price} show up often around holidays."],
               "ans_zh": ["可以看看品牌官方店和大型电商，节假日常有{price}元以内的{product}优惠。"]}],
      coref={"slot": "product", "en": ["Which one is best for {buyer} under ${price}?", "Any good ones for {buyer} under ${price}?"],
             "zh": ["适合{buyer}的，{price}元以内买哪款？", "{price}元以内有适合{buyer}的吗？"]})

frame(id="brand_compare", domain="product_recommendation",
      slots={"a": "brand", "b": "brand", "product": "product"},
      req=V("for travel|出差用; for a small apartment|小户型用; for heavy daily use|每天高强度使用的话; "
            "mainly on price|主要看价格; for durability|看重耐用性的话"),
      en=["Should I get a {a} or a {b} {product}{req}?",
          "{a} vs {b} {product}{req} - which is better?",
          "Which brand makes the better {product}, {a} or {b}{req}?",
          "I'm torn between {a} and {b} for a new {product}{req}. Thoughts?",
          "Compare the {a} and {b} {product} options for me{req}."],
      zh=["买{product}选{a}还是{b}{req}？",
          "{a}和{b}的{product}哪个好{req}？",
          "{product}：{a} vs {b}{req}，怎么选？",
          "我在{a}和{b}的{product}之间纠结{req}，你怎么看？",
          "帮我对比下{a}和{b}的{product}{req}。"],
      ans_en=["Both are solid, but for a {product} I'd lean {a}: slightly better build and support, while {b} usually wins on price. If {b} is {#10-30}% cheaper, take it.",
              "{a} tends to have the better {product} software and resale value; {b} offers more features per dollar."],
      ans_zh=["两家都不错，{product}的话我更倾向{a}，做工和售后略好；{b}通常价格更有优势，如果便宜{#10-30}%以上就选{b}。",
              "{a}的{product}在软件和保值方面更好，{b}则是同价位功能更多。"],
      rel_en=["Which is the older company, {a} or {b}?", "Where are {a} {product} models manufactured?"],
      rel_zh=["{a}和{b}哪个品牌历史更久？", "{a}的{product}是在哪里生产的？"],
      reorder_en=[("For a {product}, is {a} or {b} better?", "Is {a} or {b} better for a {product}?")],
      reorder_zh=[("{product}的话，{a}和{b}哪个好？", "{a}和{b}哪个好？我要买{product}。")],
      follow=[{"slot": "b", "en": ["What about {b}?", "And compared to {b}?"], "zh": ["那{b}呢？", "跟{b}比呢？"]}])

frame(id="gift", domain="product_recommendation",
      slots={"rcp": "recipient", "hobby": "hobby", "price": "int:20:500:10"},
      req=V("that can ship in two days|两天内能到货; that's handmade|要手工制作的; that's not too bulky|不要太占地方; "
            "with gift wrapping|要有礼品包装"),
      en=["Gift ideas for {rcp} who loves {hobby}, under ${price}{req}?",
          "What should I buy {rcp}? They're into {hobby} and my budget is ${price}{req}.",
          "Suggest a present under ${price} for {rcp}, a {hobby} fan{req}.",
          "{hobby} lover, ${price} max{req}: what's a good gift for {rcp}?",
          "I need a gift for {rcp} that's {hobby}-related and under ${price}{req}."],
      zh=["给喜欢{hobby}的{rcp}送什么礼物好？{price}元以内{req}。",
          "{rcp}很爱{hobby}，预算{price}元{req}，买什么礼物？",
          "推荐一个{price}元以内的礼物{req}，送{rcp}，对方平时喜欢{hobby}。",
          "送{rcp}的礼物，跟{hobby}相关，不超过{price}元{req}",
          "{price}块以内{req}，{rcp}喜欢{hobby}，送啥好？"],
      ans_en=["For {rcp} who loves {hobby}, a quality accessory is a safe bet: a {hobby} book plus a small gadget fits comfortably under ${price}.",
              "Since {rcp} is into {hobby}, consider a subscription box or a beginner-friendly upgrade kit; good ones cost about ${#15-90}."],
      ans_zh=["{rcp}喜欢{hobby}的话，送相关的实用小物最稳妥，比如一本{hobby}主题的书加个小配件，{price}元以内完全够。",
              "既然{rcp}爱{hobby}，可以考虑订阅礼盒或入门升级套装，好一点的大约{#100-600}元。"],
      rel_en=["How do I get {rcp} more into {hobby}?", "Is {hobby} an expensive hobby to start?"],
      rel_zh=["怎么让{rcp}更喜欢{hobby}？", "{hobby}这个爱好入门贵吗？"],
      reorder_en=[("Under ${price}, what gift would suit {rcp} who loves {hobby}?", "What gift would suit {rcp} who loves {hobby}, under ${price}?")],
      reorder_zh=[("{price}元以内，送喜欢{hobby}的{rcp}什么好？", "送喜欢{hobby}的{rcp}什么好？{price}元以内。")],
      follow=[{"slot": "rcp", "en": ["And for {rcp}?", "What about for {rcp}?"], "zh": ["那送{rcp}呢？", "如果是送{rcp}呢？"]},
              {"slot": "price", "en": ["What if I can spend ${price}?", "And with ${price}?"], "zh": ["如果能花{price}元呢？", "预算{price}元呢？"]}])


# --------------------------------- chitchat --------------------------------
frame(id="joke", domain="chitchat",
      slots={"topic": "joke_topic", "n": "int:2:5"},
      req=V("that a kid would get|要小孩能听懂的; in one line each|每个一句话; that are puns|要谐音梗; without swearing|不要脏话"),
      en=["Tell me {n} jokes about {topic}{req}.",
          "Got {n} good {topic} jokes{req}?",
          "I need {n} funny jokes about {topic}{req}, go!",
          "Make me laugh with {n} {topic} jokes{req}.",
          "Can you share {n} jokes involving {topic}{req}?"],
      zh=["讲{n}个关于{topic}的笑话{req}。",
          "有没有{n}个{topic}的笑话{req}？",
          "来{n}个{topic}相关的段子{req}！",
          "逗我笑一下，讲{n}个{topic}笑话{req}。",
          "能分享{n}个跟{topic}有关的笑话吗{req}？"],
      ans_en=["Here you go: why don't {topic} ever play hide and seek? Because good luck hiding from them! I've got {n} lined up, want the rest?",
              "Joke one of {n}: I told a story about {topic}, but it didn't land - it was too dry. Ready for the next?"],
      ans_zh=["来啦：为什么{topic}从来不玩捉迷藏？因为根本藏不住！一共给你准备了{n}个，还要听吗？",
              "第一个（共{n}个）：有人讲了个关于{topic}的故事，结果大家都没笑——太冷了。要听下一个吗？"],
      rel_en=["Why are there so many jokes about {topic}?", "Write a short poem about {topic}."],
      rel_zh=["为什么关于{topic}的笑话这么多？", "写一首关于{topic}的小诗。"],
      reorder_en=[("About {topic}: tell me {n} jokes.", "Tell me {n} jokes about {topic}.")],
      reorder_zh=[("关于{topic}的笑话，讲{n}个。", "讲{n}个关于{topic}的笑话。")],
      follow=[{"slot": "topic", "en": ["Now some about {topic}.", "What about {topic}?"], "zh": ["再来几个关于{topic}的。", "那{topic}的呢？"]}])

frame(id="mood", domain="chitchat",
      slots={"mood": "mood"},
      req=V("that doesn't involve my phone|不用手机的; that takes five minutes|五分钟就能做的; that I can do at work|上班时能做的; "
            "without spending money|最好不花钱"),
      en=["I'm feeling {mood} today. Any advice{req}?",
          "Feeling really {mood} right now - what should I do{req}?",
          "What can I do when I'm {mood}{req}?",
          "Ugh, so {mood} today. Got any ideas to help{req}?",
          "Any tips for someone who feels {mood}{req}?"],
      zh=["我今天感觉{mood}，有什么建议{req}？",
          "现在觉得{mood}，该做点什么{req}？",
          "{mood}的时候可以做些什么{req}？",
          "唉，今天一整天都{mood}，有什么办法{req}？",
          "觉得{mood}的人有什么调节小技巧{req}？"],
      ans_en=["Sorry you're feeling {mood}. Try a short walk, a glass of water and writing down one small thing you can do next; it often helps more than you'd expect.",
              "Feeling {mood} happens to everyone. Put on a song you love, stretch for a minute and text a friend - small resets add up."],
      ans_zh=["感觉{mood}的时候，可以先出去走走、喝杯水，再写下接下来能做的一件小事，往往比想象中有用。",
              "谁都会有{mood}的时候。放首喜欢的歌、伸展一分钟、给朋友发个消息，小小的调整会慢慢起作用。"],
      rel_en=["Why do people feel {mood} on Sunday evenings?", "Is feeling {mood} all the time a sign of depression?"],
      rel_zh=["为什么人在周日晚上容易{mood}？", "总是{mood}是抑郁的表现吗？"],
      reorder_en=[("Today I feel {mood}; what should I do?", "What should I do? I feel {mood} today.")],
      reorder_zh=[("今天觉得{mood}，我该怎么办？", "我该怎么办？今天觉得{mood}。")],
      follow=[{"slot": "mood", "en": ["What if I'm {mood} instead?", "And when I'm {mood}?"], "zh": ["如果是{mood}呢？", "那{mood}的时候呢？"]}])

frame(id="would_rather", domain="chitchat",
      slots={"a": "city", "b": "city"},
      req=V("for a year|只住一年的话; with a family|带着全家的话; as a student|作为学生的话; in winter|冬天的话"),
      en=["Would you rather live in {a} or {b}{req}?",
          "{a} or {b}{req} - where would you rather live?",
          "If you had to pick between living in {a} and {b}{req}, which one?",
          "Quick one: {a} or {b} as a place to live{req}?",
          "Which city would you choose to live in, {a} or {b}{req}?"],
      zh=["让你选，住{a}还是住{b}{req}？",
          "{a}和{b}，你更愿意住哪个{req}？",
          "如果必须在{a}和{b}里挑一个住{req}，你选哪个？",
          "{a}还是{b}{req}？选一个住。",
          "你会选择住在{a}还是{b}{req}？"],
      ans_en=["Tough call! I'd pick {a} for the food and walkability, though {b} has the better weather. What about you?",
              "I'd go with {b} - great neighbourhoods and easy day trips - but {a} would be a close second."],
      ans_zh=["好难选！我会选{a}，吃的多、适合步行，不过{b}的天气更好。你呢？",
              "我会选{b}，街区有意思、周边一日游方便，不过{a}也很接近。"],
      rel_en=["Which is bigger, {a} or {b}?", "How far is {a} from {b}?"],
      rel_zh=["{a}和{b}哪个城市更大？", "{a}离{b}有多远？"],
      reorder_en=[("Between {a} and {b}, where would you rather live?", "Where would you rather live, {a} or {b}?")],
      reorder_zh=[("在{a}和{b}之间，你愿意住哪？", "你愿意住哪，{a}还是{b}？")])

# --------------------------------- realtime --------------------------------
frame(id="weather", domain="realtime",
      slots={"city": "city", "day": "day"},
      req=V("hour by hour|要按小时的; in Fahrenheit|用华氏度; including wind speed|包括风速; with the UV index|带紫外线指数"),
      en=["What's the weather in {city} {day}{req}?",
          "Weather forecast for {city} {day}{req}",
          "How's the weather looking {day} in {city}{req}?",
          "Can you check the forecast for {city} {day}{req}?",
          "{city} weather {day}{req}?",
          "I'm in {city}. What's the forecast {day}{req}?"],
      zh=["{city}{day}天气怎么样{req}？",
          "{day}{city}的天气预报{req}",
          "帮我查一下{city}{day}的天气{req}。",
          "{day}{city}天气如何{req}？",
          "我在{city}，{day}天气会怎样{req}？"],
      ans_en=["{city} {day}: around {#2-33}°C and partly cloudy, with a {#10-80}% chance of rain.",
              "Expect a high of {#5-35}°C in {city} {day}, light winds and mostly sunny skies."],
      ans_zh=["{city}{day}多云，气温约{#2-33}°C，降雨概率{#10-80}%。",
              "{city}{day}最高气温{#5-35}°C左右，微风，大部分时间晴。"],
      rel_en=["What time is sunset in {city} {day}?", "How's the air quality in {city} {day}?", "What's the traffic like in {city} {day}?"],
      rel_zh=["{city}{day}几点日落？", "{city}{day}空气质量怎么样？", "{city}{day}路上堵不堵？"],
      reorder_en=[("{day}, what's the weather going to be in {city}?", "What's the weather going to be in {city} {day}?")],
      reorder_zh=[("{day}的话，{city}天气怎么样？", "{city}天气怎么样，{day}的？")],
      follow=[{"slot": "day", "en": ["And {day}?", "What about {day}?", "How about {day}?"], "zh": ["那{day}呢？", "{day}呢？", "{day}怎么样？"]},
              {"en": ["Do I need an umbrella?", "Should I bring a jacket?"], "zh": ["需要带伞吗？", "要带外套吗？"],
               "ans_en": ["For {city} {day}, yes, bring one just in case; showers are possible in the afternoon."],
               "ans_zh": ["{city}{day}下午可能有阵雨，建议带上以防万一。"]}],
      coref={"slot": "city", "en": ["What's the weather there {day}?", "How's the forecast there {day}?"],
             "zh": ["那边{day}天气怎么样？", "那里{day}天气如何？"]})

frame(id="stock", domain="realtime",
      slots={"company": "company"},
      req=V("in pre-market trading|盘前; in euros|用欧元计价; compared to yesterday's close|和昨天收盘比"),
      en=["What's {company}'s stock price right now{req}?",
          "Current {company} share price{req}?",
          "How much is {company} stock trading at today{req}?",
          "Check the latest price of {company} shares for me{req}.",
          "Where is {company} stock at the moment{req}?"],
      zh=["{company}现在股价多少{req}？",
          "{company}当前股价{req}",
          "{company}的股票今天多少钱一股{req}？",
          "帮我看下{company}最新股价{req}。",
          "此刻{company}股票报多少{req}？"],
      ans_en=["{company} is trading at about ${#20-900}.{#10-99} right now, up {#0-3}.{#1-9}% on the day.",
              "{company} shares are at ${#20-900}.{#10-99} as of a few minutes ago, down {#0-3}.{#1-9}% since the open."],
      ans_zh=["{company}目前股价约{#20-900}.{#10-99}美元，今日上涨{#0-3}.{#1-9}%。",
              "截至几分钟前，{company}报{#20-900}.{#10-99}美元，较开盘下跌{#0-3}.{#1-9}%。"],
      rel_en=["Who is the CEO of {company}?", "When does {company} report earnings next?", "Who founded {company}?"],
      rel_zh=["{company}的CEO是谁？", "{company}下次财报什么时候发布？", "{company}是谁创办的？"],
      reorder_en=[("Right now, what's {company} trading at?", "What's {company} trading at right now?")],
      reorder_zh=[("现在这个时候，{company}股价多少？", "{company}股价现在多少？")],
      follow=[{"slot": "company", "en": ["What about {company}?", "And {company}?"], "zh": ["那{company}呢？", "{company}呢？"]},
              {"en": ["Is that higher than last week?", "How does that compare to last week?"], "zh": ["比上周高吗？", "跟上周比怎么样？"],
               "ans_en": ["Yes, {company} is about {#1-9}% higher than a week ago."], "ans_zh": ["是的，{company}比一周前高了约{#1-9}%。"]}],
      coref={"slot": "company", "en": ["What's its stock price right now?", "How much is its stock trading at today?"],
             "zh": ["它现在股价多少？", "它的股票今天多少钱一股？"]})

frame(id="score", domain="realtime",
      slots={"a": "team", "b": "team"},
      req=V("in the second half|下半场; including the scorers|包括谁得分; with the quarter-by-quarter breakdown|带分节比分"),
      en=["What's the score of {a} vs {b} right now{req}?",
          "Who's winning, {a} or {b}{req}?",
          "Live score: {a} - {b}{req}",
          "How is the {a} game against {b} going so far{req}?",
          "Any update on {a} versus {b}{req}?"],
      zh=["{a}对{b}现在比分多少{req}？",
          "{a}和{b}现在谁领先{req}？",
          "{a} vs {b} 实时比分{req}",
          "{a}打{b}那场比赛现在怎么样了{req}？",
          "{a}对阵{b}有最新比分吗{req}？"],
      ans_en=["Right now it's {a} {#0-4}, {b} {#0-4}, with about {#5-40} minutes left.",
              "{a} lead {b} by {#1-3} at the moment; it's been a tight game so far."],
      ans_zh=["目前{a} {#0-4} 比 {#0-4} {b}，还剩大约{#5-40}分钟。",
              "{a}暂时领先{b} {#1-3} 分，目前比赛很胶着。"],
      rel_en=["When did {a} last beat {b}?", "Where are {a} and {b} playing?", "How can I watch {a} vs {b}?"],
      rel_zh=["{a}上次赢{b}是什么时候？", "{a}和{b}在哪里比赛？", "去哪能看{a}对{b}的直播？"],
      reorder_en=[("Right now, what's the score between {a} and {b}?", "What's the score between {a} and {b} right now?")],
      reorder_zh=[("现在{a}和{b}比分多少？", "{a}和{b}比分现在多少？")],
      follow=[{"en": ["Who scored?", "Who's the top scorer so far?"], "zh": ["谁进的球？", "目前谁得分最多？"],
               "ans_en": ["So far the standout has been {a}'s captain, while {b} have struggled in defence."],
               "ans_zh": ["目前表现最好的是{a}的队长，{b}的防守有些吃力。"]}],
      coref={"slot": "a", "en": ["What's the score of their game against {b} right now?", "Are they beating {b}?"],
             "zh": ["他们对{b}现在比分多少？", "他们现在赢{b}了吗？"]})

frame(id="news", domain="realtime",
      slots={"topic": "news_topic"},
      req=V("in one paragraph|用一段话; with sources|附上来源; from the last hour|只要最近一小时的"),
      en=["What's the latest on {topic}{req}?",
          "Any news about {topic} today{req}?",
          "Give me an update on {topic}{req}.",
          "What's happening with {topic} right now{req}?",
          "Latest headlines on {topic}{req}"],
      zh=["{topic}最新进展是什么{req}？",
          "今天有{topic}的新消息吗{req}？",
          "给我说说{topic}的最新情况{req}。",
          "{topic}现在怎么样了{req}？",
          "{topic}最新头条{req}"],
      ans_en=["As of this morning, reports on {topic} say officials will give a new update at {#1-6} pm, and markets are watching closely.",
              "The latest on {topic}: negotiations resumed overnight and a statement is expected within {#2-24} hours."],
      ans_zh=["截至今天上午，关于{topic}的报道称官方将在下午{#1-6}点发布新消息，市场正密切关注。",
              "{topic}的最新情况：相关谈判昨夜恢复，预计{#2-24}小时内会有正式声明。"],
      rel_en=["What caused {topic} in the first place?", "How might {topic} affect my savings?"],
      rel_zh=["{topic}最初是怎么引起的？", "{topic}会对我的存款有什么影响？"],
      reorder_en=[("Right now, what's happening with {topic}?", "What's happening with {topic} right now?")],
      reorder_zh=[("现在{topic}情况如何？", "{topic}现在情况如何？")],
      follow=[{"slot": "topic", "en": ["And {topic}?", "What about {topic}?"], "zh": ["那{topic}呢？", "{topic}有什么新消息？"]}])


# ------------------------------ medical_legal ------------------------------
frame(id="dosage", domain="medical_legal",
      slots={"drug": "drug", "patient": "patient"},
      req=V("taken with food|随餐服用的话; in liquid form|用液体剂型的话; while also taking antibiotics|同时在吃抗生素"),
      en=["What's the maximum daily dose of {drug} for {patient}{req}?",
          "How much {drug} can {patient} safely take in a day{req}?",
          "{drug} daily limit for {patient}{req}?",
          "Is there a max dose of {drug} per day for {patient}{req}?",
          "I need to know the safe daily amount of {drug} for {patient}{req}."],
      zh=["{patient}每天最多能吃多少{drug}{req}？",
          "{drug}给{patient}用{req}，一天最大剂量是多少？",
          "{patient}的{drug}日剂量上限{req}",
          "{patient}一天服用{drug}的安全剂量是多少{req}？",
          "想知道{patient}每天吃{drug}最多不能超过多少{req}。"],
      ans_en=["For {patient}, {drug} should stay within the label's daily maximum; the right amount depends on weight and health, so confirm it with a pharmacist or doctor.",
              "Daily limits for {drug} are lower for {patient} than for healthy adults in many cases; follow the package insert and ask your pharmacist before combining it with other medicines."],
      ans_zh=["{patient}服用{drug}要严格遵守说明书上的每日最大剂量，具体用量和体重、健康状况有关，请向药师或医生确认。",
              "很多情况下{patient}的{drug}每日上限低于健康成年人，请按说明书服用，和其他药物同服前先咨询药师。"],
      rel_en=["What are the side effects of {drug}?", "How does {drug} work in the body?", "Can {patient} drink alcohol while taking {drug}?"],
      rel_zh=["{drug}有哪些副作用？", "{drug}在体内是怎么起作用的？", "{patient}吃{drug}期间能喝酒吗？"],
      reorder_en=[("For {patient}, what's the max daily dose of {drug}?", "What's the max daily dose of {drug} for {patient}?")],
      reorder_zh=[("对{patient}来说，{drug}一天最多吃多少？", "{drug}一天最多吃多少？给{patient}吃的。")],
      follow=[{"slot": "patient", "en": ["And for {patient}?", "What about {patient}?"], "zh": ["那{patient}呢？", "{patient}的话呢？"]},
              {"en": ["Can it be taken on an empty stomach?", "Should it be taken with food?"], "zh": ["可以空腹吃吗？", "要饭后吃吗？"],
               "ans_en": ["{drug} is generally easier on the stomach with food; for {patient}, the pharmacist can confirm timing."],
               "ans_zh": ["{drug}一般随餐或饭后服用对胃更友好，{patient}的具体服用时间可以请药师确认。"]}],
      coref={"slot": "drug", "en": ["What's the maximum daily dose of it for {patient}?", "How much of it can {patient} take per day?"],
             "zh": ["这个药{patient}一天最多吃多少？", "{patient}每天最多能吃多少这个药？"]})

frame(id="symptom", domain="medical_legal",
      slots={"symptom": "symptom", "n": "int:2:14"},
      neg={"en": ("and a fever", "but no fever"), "zh": ("还发烧", "但没有发烧")},
      en=["I've had {symptom} for {n} days {neg}. Should I see a doctor?",
          "{symptom} for {n} days, {neg} - is it time to see a doctor?",
          "Do I need to see a doctor? I've had {symptom} for {n} days {neg}.",
          "When should I worry about {symptom}? It's been {n} days, {neg}.",
          "I've been dealing with {symptom} for {n} days {neg}. Doctor or wait it out?"],
      zh=["我{symptom}{n}天了，{neg}，需要去看医生吗？",
          "{symptom}已经{n}天，{neg}，要不要去医院？",
          "需要看医生吗？{symptom}持续了{n}天，{neg}。",
          "{symptom}{n}天{neg}，什么情况下该担心？",
          "连续{n}天{symptom}，{neg}，是该就医还是再观察？"],
      ans_en=["With {symptom} lasting {n} days {neg}, it's reasonable to book a doctor's visit; seek urgent care if it suddenly gets worse or you have trouble breathing.",
              "{n} days of {symptom} {neg} is worth getting checked. Meanwhile rest, drink fluids and note any new symptoms for the doctor."],
      ans_zh=["{symptom}持续{n}天、{neg}的情况，建议预约医生看看；如果突然加重或呼吸困难，请立即就医。",
              "{symptom}{n}天{neg}，最好去医院检查一下，这期间多休息、多喝水，并记录新出现的症状。"],
      rel_en=["What usually causes {symptom}?", "What home remedies help with {symptom}?"],
      rel_zh=["{symptom}一般是什么原因引起的？", "有什么缓解{symptom}的家庭小方法？"],
      reorder_en=[("For {n} days I've had {symptom} {neg}; should I see a doctor?", "Should I see a doctor? I've had {symptom} for {n} days {neg}.")],
      reorder_zh=[("{n}天了，一直{symptom}，{neg}，要看医生吗？", "要看医生吗？{symptom}{n}天了，{neg}。")],
      follow=[{"slot": "n", "en": ["What if it lasts {n} days?", "And if it's been {n} days?"], "zh": ["如果持续{n}天呢？", "要是{n}天了呢？"]}])

frame(id="contract_exit", domain="medical_legal",
      slots={"contract": "contract", "jur": "jurisdiction"},
      neg={"en": ("already signed it", "haven't signed it yet"), "zh": ("已经签了", "还没签")},
      req=V("without paying a penalty|不付违约金; because I'm moving for work|因为工作调动; by email|通过邮件通知"),
      en=["Can I get out of a {contract} early in {jur}{req}? I {neg}.",
          "How do I terminate a {contract} in {jur}{req}? I {neg}.",
          "Breaking a {contract} in {jur}{req} - I {neg}. What are my options?",
          "Is it legal to cancel a {contract} in {jur}{req}? I {neg}.",
          "What happens if I want to exit my {contract} in {jur}{req}? Note: I {neg}."],
      zh=["在{jur}，{contract}能提前解除吗{req}？我{neg}。",
          "{jur}的{contract}怎么终止{req}？我{neg}。",
          "我在{jur}，{contract}{neg}，想解约{req}，有什么办法？",
          "{jur}法律允许取消{contract}吗{req}？{neg}。",
          "想退出{jur}的一份{contract}{req}，{neg}，会怎么样？"],
      ans_en=["In {jur}, a {contract} can usually be ended early if it has a termination clause or the other side breached it; since you {neg}, check the notice period and get local legal advice before acting.",
              "Under {jur} law, exiting a {contract} depends on its termination terms and any cooling-off period; you {neg}, so read the penalty clause first. This isn't legal advice."],
      ans_zh=["在{jur}，如果{contract}有解约条款或对方违约，通常可以提前解除；你{neg}，请先确认通知期限，并咨询当地律师。",
              "按{jur}的规定，能否解除{contract}取决于解约条款和冷静期；你{neg}，先看清违约金条款。以上不构成法律意见。"],
      rel_en=["What should a {contract} in {jur} include?", "Do I need a lawyer to draft a {contract} in {jur}?"],
      rel_zh=["{jur}的{contract}应该包含哪些条款？", "在{jur}起草{contract}需要请律师吗？"],
      reorder_en=[("In {jur}, can I end a {contract} early? I {neg}.", "Can I end a {contract} early in {jur}? I {neg}.")],
      reorder_zh=[("在{jur}，{contract}{neg}，能提前解除吗？", "{contract}{neg}，在{jur}能提前解除吗？")],
      follow=[{"slot": "jur", "en": ["What about in {jur}?", "And in {jur}?"], "zh": ["那在{jur}呢？", "{jur}呢？"]}],
      coref={"slot": "contract", "en": ["Can I get out of it early in {jur}? I {neg}.", "How do I terminate it in {jur}? I {neg}."],
             "zh": ["在{jur}能提前解除吗？我{neg}。", "在{jur}这个合同怎么终止？我{neg}。"]})

frame(id="notice_period", domain="medical_legal",
      slots={"jur": "jurisdiction", "n": "int:2:20"},
      req=V("on a fixed-term contract|签的是固定期限合同; during probation|目前在试用期; as a part-time worker|我是兼职员工"),
      en=["How much notice must an employer give in {jur} if I've worked there {n} years{req}?",
          "Required notice period for dismissal in {jur} after {n} years of service{req}?",
          "I've been at my job {n} years in {jur}{req}. How much notice is my employer legally required to give?",
          "{jur}: minimum notice for firing someone with {n} years' tenure{req}",
          "What's the statutory notice period in {jur} for an employee with {n} years{req}?"],
      zh=["在{jur}工作了{n}年{req}，被辞退的话公司要提前多久通知？",
          "{jur}法律规定，工作{n}年的员工{req}辞退通知期是多久？",
          "我在{jur}这份工作干了{n}年{req}，老板辞退我得提前多久说？",
          "{jur}：司龄{n}年{req}，最低辞退通知期",
          "{jur}对工龄{n}年的员工{req}，法定通知期是多长？"],
      ans_en=["In {jur}, the statutory notice for an employee with {n} years of service is typically {#1-12} weeks, though your contract can give you more; check the labour authority's guidance.",
              "For {n} years of service in {jur}, expect a minimum of about {#1-12} weeks' notice or pay in lieu, unless you were dismissed for serious misconduct."],
      ans_zh=["在{jur}，工龄{n}年的员工法定通知期一般为{#1-12}周，合同约定更长的以合同为准，具体可查当地劳动部门规定。",
              "在{jur}工作{n}年，公司一般至少要提前约{#1-12}周通知或支付代通知金，严重违纪被辞退的除外。"],
      rel_en=["How is severance calculated in {jur} after {n} years?", "Can I be fired without a reason in {jur}?"],
      rel_zh=["{jur}工作{n}年的经济补偿怎么算？", "在{jur}公司可以无理由辞退员工吗？"],
      reorder_en=[("After {n} years in {jur}, how much notice must my employer give?", "How much notice must my employer give after {n} years in {jur}?")],
      reorder_zh=[("工作{n}年后，在{jur}公司要提前多久通知辞退？", "在{jur}公司要提前多久通知辞退？我工作{n}年了。")],
      follow=[{"slot": "n", "en": ["What if it's {n} years?", "And after {n} years?"], "zh": ["如果是{n}年呢？", "那{n}年呢？"]},
              {"slot": "jur", "en": ["And in {jur}?"], "zh": ["那{jur}呢？"]}])


# ---------------------------------- other ----------------------------------
TYPES["reason"] = V("a wedding|参加婚礼; a family emergency|家里有急事; a medical appointment|看病; moving house|搬家; "
                    "a vacation|度假; my child's graduation|孩子的毕业典礼; a funeral|参加葬礼; "
                    "my mental health|调整心理状态; an exam|考试; a religious holiday|过宗教节日; jury duty|履行陪审义务; "
                    "a conference|参加行业会议; caring for a parent|照顾父母; renovating my flat|装修房子; "
                    "a sports competition|参加比赛")


def _num(x: float) -> str:
    if abs(x - round(x)) < 1e-9:
        return f"{int(round(x)):,}"
    return f"{x:,.2f}".rstrip("0").rstrip(".")


frame(id="recipe", domain="other",
      slots={"dish": "dish", "diet": "diet", "n": "int:2:12"},
      req=V("in under 30 minutes|要30分钟内做完; without an oven|不用烤箱; using an air fryer|用空气炸锅; that freezes well|适合冷冻保存"),
      en=["Give me a {diet} recipe for {dish} that serves {n}{req}.",
          "How do I make {diet} {dish} for {n} people{req}?",
          "{diet} {dish} recipe, {n} servings{req}",
          "I'm cooking for {n} tonight and want to make {dish}, but it has to be {diet}{req}. How?",
          "Can you walk me through a {diet} version of {dish} for {n}{req}?"],
      zh=["给我一个{diet}版{dish}的做法，{n}人份{req}。",
          "{n}个人吃，{diet}版{dish}怎么做{req}？",
          "{diet}版{dish}食谱，{n}人份{req}",
          "今晚要做{n}人份的{dish}，必须是{diet}的{req}，怎么做？",
          "教我做{diet}版的{dish}吧，{n}个人的量{req}。"],
      ans_en=["For a {diet} {dish} serving {n}, swap in {diet}-friendly ingredients, scale everything to {n} portions and cook for about {#20-70} minutes. I can list exact quantities if you like.",
              "A {diet} {dish} for {n} is very doable: prep the base first, season generously and taste as you go; total time is around {#25-80} minutes."],
      ans_zh=["做{n}人份的{diet}版{dish}，把食材换成符合{diet}要求的，按{n}人份配比，大约需要{#20-70}分钟，需要的话我可以列出具体用量。",
              "{n}人份的{diet}版{dish}不难：先准备好底料，调味足一点，边做边尝，总共大约{#25-80}分钟。"],
      rel_en=["What's the origin of {dish}?", "How many calories are in a serving of {dish}?", "What wine goes well with {dish}?"],
      rel_zh=["{dish}起源于哪里？", "一份{dish}有多少卡路里？", "{dish}配什么酒好？"],
      reorder_en=[("For {n} people, how do I make a {diet} {dish}?", "How do I make a {diet} {dish} for {n} people?")],
      reorder_zh=[("{n}个人吃的话，{diet}版{dish}怎么做？", "{diet}版{dish}怎么做？{n}个人吃。")],
      follow=[{"slot": "n", "en": ["What if it's for {n} people?", "And for {n}?"], "zh": ["如果是{n}个人呢？", "{n}人份呢？"]},
              {"en": ["How long does it keep in the fridge?", "Can I make it a day ahead?"], "zh": ["冰箱里能放多久？", "可以提前一天做吗？"],
               "ans_en": ["{dish} keeps about {#2-4} days in the fridge in an airtight container, so making it a day ahead is fine."],
               "ans_zh": ["{dish}密封冷藏可以放{#2-4}天左右，提前一天做没问题。"]}],
      coref={"slot": "dish", "en": ["How do I make a {diet} version of it for {n} people?", "Can you give me a {diet} recipe for it that serves {n}?"],
             "zh": ["{diet}版的怎么做？{n}个人吃。", "给我一个{diet}版的做法，{n}人份。"]})

frame(id="pet_food", domain="other",
      slots={"pet": "pet", "food": "food_item"},
      req=V("in small amounts|如果只给一点; every day|如果每天都吃; as an occasional treat|偶尔当零食的话"),
      en=["Is it safe for my {pet} to eat {food}{req}?",
          "Can a {pet} have {food}{req}?",
          "Should I let my {pet} eat {food}{req}?",
          "{food} for a {pet}{req}: safe or not?",
          "Is it okay to give a {pet} {food}{req}?",
          "Is feeding {food} to a {pet} a bad idea{req}?"],
      zh=["我家{pet}能吃{food}吗{req}？",
          "{pet}可以吃{food}吗{req}？",
          "给{pet}喂{food}安全吗{req}？",
          "{food}对{pet}来说能吃吗{req}？",
          "{pet}吃{food}有没有问题{req}？"],
      ans_en=["{food} can be risky for a {pet}: some foods that are fine for people are harmful to animals, so skip it unless your vet says otherwise, and call them if you notice vomiting or lethargy.",
              "For a {pet}, {food} is best avoided or kept to a tiny amount; check with your vet, since tolerance varies by species and size."],
      ans_zh=["{food}对{pet}可能有风险，有些人能吃的东西对动物有害，除非兽医同意最好别喂；如果出现呕吐或精神不振，请及时联系兽医。",
              "{pet}最好不要吃{food}，或者只给极少量；不同动物和体型耐受度不同，建议先问问兽医。"],
      rel_en=["How much should a {pet} eat per day?", "Why does my {pet} keep begging for {food}?"],
      rel_zh=["{pet}每天应该吃多少？", "为什么我家{pet}老是讨{food}吃？"],
      reorder_en=[("If I give my {pet} {food}, is that safe?", "Is it safe to give my {pet} {food}?")],
      reorder_zh=[("要是给{pet}吃{food}，安全吗？", "给{pet}吃{food}安全吗？")],
      follow=[{"slot": "food", "en": ["What about {food}?", "And {food}?"], "zh": ["那{food}呢？", "{food}可以吗？"]}],
      coref={"slot": "pet", "en": ["Is it safe for it to eat {food}?", "Can it eat {food}?"],
             "zh": ["它能吃{food}吗？", "给它喂{food}安全吗？"]})

frame(id="history_cause", domain="other",
      slots={"event": "event", "level": "level"},
      req=V("in three bullet points|用三点概括; for a school essay|写作文用; with key dates|附上关键年份"),
      en=["What caused {event}? Explain it for {level}{req}.",
          "Explain the causes of {event} to {level}{req}.",
          "Why did {event} happen? Keep it suitable for {level}{req}.",
          "Causes of {event}, explained for {level}{req}",
          "Can you help {level} understand why {event} happened{req}?"],
      zh=["{event}是什么原因导致的？讲给{level}听{req}。",
          "给{level}解释一下{event}的起因{req}。",
          "为什么会发生{event}？用{level}能懂的方式说{req}。",
          "{event}的原因，面向{level}讲解{req}",
          "能帮{level}理解{event}为什么会发生吗{req}？"],
      ans_en=["In short, {event} grew out of long-running economic strain, political tension and a trigger that brought them to a head; for {level}, think of pressure building until something gives.",
              "{event} had several causes: deep social divisions, money problems and leaders who misjudged the moment. I can go through each one in more detail for {level}."],
      ans_zh=["简单来说，{event}源于长期的经济压力和政治矛盾，再加上一个导火索；讲给{level}听，可以理解为压力越积越多，最后爆发。",
              "{event}有几方面原因：社会矛盾尖锐、财政困难，以及当权者判断失误。需要的话我可以按{level}的水平逐条展开。"],
      rel_en=["What were the consequences of {event}?", "Who were the key figures in {event}?", "When did {event} end?"],
      rel_zh=["{event}带来了什么影响？", "{event}中有哪些关键人物？", "{event}是什么时候结束的？"],
      reorder_en=[("For {level}, explain why {event} happened.", "Explain why {event} happened, for {level}.")],
      reorder_zh=[("面向{level}，解释一下{event}为什么发生。", "解释一下{event}为什么发生，面向{level}。")],
      follow=[{"slot": "event", "en": ["And {event}?", "What about {event}?"], "zh": ["那{event}呢？", "{event}又是为什么？"]}],
      coref={"slot": "event", "en": ["What caused it? Explain it for {level}.", "Why did it happen? Keep it suitable for {level}."],
             "zh": ["它是怎么引起的？讲给{level}听。", "为什么会发生？用{level}能懂的方式说。"]})

frame(id="science_explain", domain="other",
      slots={"concept": "concept", "level": "level"},
      req=V("using an analogy|打个比方; in under 100 words|100字以内; with an example|举个例子"),
      en=["Explain {concept} to {level}{req}.",
          "How would you describe {concept} to {level}{req}?",
          "{concept} explained for {level}{req}, please.",
          "Can you break down {concept} so {level} could follow it{req}?",
          "I want {level} to understand {concept}{req}. How should I explain it?"],
      zh=["给{level}解释一下{concept}{req}。",
          "怎么向{level}讲清楚{concept}{req}？",
          "{concept}是什么？讲给{level}听{req}。",
          "用{level}听得懂的话说说{concept}{req}。",
          "想让{level}理解{concept}{req}，该怎么解释？"],
      ans_en=["Here's {concept} for {level}: start from an everyday example, name the one key idea behind it, then show how it explains what we observe.",
              "Think of {concept} as a simple rule that shows up everywhere once you notice it; for {level}, one concrete picture beats a formula."],
      ans_zh=["给{level}讲{concept}：先从一个生活中的例子入手，点出背后的关键概念，再说明它如何解释我们看到的现象。",
              "可以把{concept}看成一个随处可见的简单规律；对{level}来说，一个具体的画面比公式更好懂。"],
      rel_en=["Who discovered {concept}?", "How is {concept} measured?", "Why does {concept} matter in everyday life?"],
      rel_zh=["{concept}是谁发现的？", "{concept}怎么测量？", "{concept}和日常生活有什么关系？"],
      reorder_en=[("For {level}, explain {concept}.", "Explain {concept} for {level}.")],
      reorder_zh=[("面向{level}，解释一下{concept}。", "解释一下{concept}，面向{level}。")],
      follow=[{"slot": "concept", "en": ["And {concept}?", "Now do {concept}."], "zh": ["那{concept}呢？", "再讲讲{concept}。"]},
              {"slot": "level", "en": ["Now explain it for {level}.", "What about for {level}?"], "zh": ["再讲给{level}听。", "那对{level}怎么讲？"]}],
      coref={"slot": "concept", "en": ["Explain it to {level}.", "How would you describe it to {level}?"],
             "zh": ["给{level}解释一下它。", "这个怎么讲给{level}听？"]})

frame(id="compound", domain="other",
      slots={"amount": "int:1000:50000:500", "rate": "int:2:12", "years": "int:2:30"},
      derive=lambda s: {"fv": _num(round(s["amount"] * (1 + s["rate"] / 100) ** s["years"]))},
      req=V("compounded monthly|按月复利; with $100 added each month|每月再追加100; after inflation|扣除通胀后"),
      en=["If I invest ${amount} at {rate}% a year for {years} years, how much will I have{req}?",
          "What will ${amount} grow to in {years} years at a {rate}% annual return{req}?",
          "${amount}, {rate}% per year, {years} years{req} - final value?",
          "Calculate the future value of ${amount} invested for {years} years at {rate}%{req}.",
          "How much would ${amount} be worth after {years} years earning {rate}% annually{req}?"],
      zh=["投资{amount}元，年化{rate}%，{years}年后有多少钱{req}？",
          "{amount}元按每年{rate}%的收益，{years}年后变成多少{req}？",
          "{amount}元，年利率{rate}%，{years}年{req}，终值多少？",
          "帮我算一下{amount}元投资{years}年、年化{rate}%的终值{req}。",
          "每年赚{rate}%，{amount}元放{years}年能涨到多少{req}？"],
      ans_en=["With annual compounding, ${amount} at {rate}% for {years} years grows to about ${fv}, assuming no withdrawals.",
              "You'd end up with roughly ${fv}: ${amount} x (1 + {rate}%)^{years}."],
      ans_zh=["按年复利计算，{amount}元以{rate}%的年化收益投资{years}年，约为{fv}元（不考虑取出）。",
              "大约是{fv}元，计算方式：{amount} ×（1 + {rate}%）^{years}。"],
      rel_en=["Is {rate}% a good annual return?", "How long does it take to double money at {rate}% a year?"],
      rel_zh=["年化{rate}%的收益算高吗？", "按每年{rate}%，钱翻倍要多久？"],
      reorder_en=[("At {rate}% a year for {years} years, what does ${amount} become?", "What does ${amount} become at {rate}% a year for {years} years?")],
      reorder_zh=[("年化{rate}%、投{years}年的话，{amount}元会变成多少？", "{amount}元会变成多少？年化{rate}%，投{years}年。")],
      follow=[{"slot": "years", "en": ["What about after {years} years?", "And in {years} years?"], "zh": ["那{years}年后呢？", "如果是{years}年呢？"]},
              {"slot": "rate", "en": ["And at {rate}%?", "What if the return is {rate}%?"], "zh": ["那{rate}%呢？", "如果收益率是{rate}%呢？"]}])


frame(id="fitness_plan", domain="other",
      slots={"goal": "goal", "exercise": "exercise", "n": "int:2:16"},
      req=V("at home|在家; without equipment|不用器械; in 20 minutes a day|每天只练20分钟; with a knee injury|膝盖有伤"),
      en=["Make me a {n}-week plan to {goal} using {exercise}{req}.",
          "How can I {goal} in {n} weeks with {exercise}{req}?",
          "{n}-week {exercise} program to {goal}{req}",
          "I want to {goal}. Can you build a {n}-week routine around {exercise}{req}?",
          "What would a {n}-week {exercise} schedule look like if my goal is to {goal}{req}?"],
      zh=["帮我制定一个{n}周的{exercise}计划，目标是{goal}{req}。",
          "想在{n}周内通过{exercise}{goal}{req}，怎么练？",
          "{n}周{exercise}训练计划，{goal}{req}",
          "我想{goal}，能围绕{exercise}排一个{n}周的计划吗{req}？",
          "目标{goal}，{n}周的{exercise}安排应该怎么做{req}？"],
      ans_en=["Here's a {n}-week outline to {goal}: do {exercise} 3 times a week, add about 10% volume each week, and make every fourth week lighter. Pair it with enough sleep and protein.",
              "Weeks 1-2: learn good {exercise} form; after that, build up gradually toward your goal to {goal}, ending week {n} with a test session."],
      ans_zh=["{n}周计划：每周练3次{exercise}，每周增加约10%的训练量，每4周安排一次减量周，同时保证睡眠和蛋白质，帮助你{goal}。",
              "前两周先把{exercise}动作练标准，之后逐步加量，朝着{goal}的目标推进，第{n}周做一次测试。"],
      rel_en=["Which muscles does {exercise} work?", "Is {exercise} bad for my knees?", "How many calories does {exercise} burn?"],
      rel_zh=["{exercise}主要练哪些肌肉？", "{exercise}伤膝盖吗？", "{exercise}能消耗多少卡路里？"],
      reorder_en=[("To {goal} in {n} weeks, how should I train with {exercise}?", "How should I train with {exercise} to {goal} in {n} weeks?")],
      reorder_zh=[("要在{n}周内{goal}，{exercise}该怎么练？", "{exercise}该怎么练才能在{n}周内{goal}？")],
      follow=[{"slot": "n", "en": ["What if I only have {n} weeks?", "And for {n} weeks?"], "zh": ["如果只有{n}周呢？", "改成{n}周呢？"]},
              {"slot": "exercise", "en": ["What about with {exercise}?", "And using {exercise}?"], "zh": ["那用{exercise}呢？", "换成{exercise}呢？"]}])

frame(id="watering", domain="other",
      slots={"plant": "plant", "month": "month"},
      neg={"en": ("gets direct sun", "doesn't get direct sun"), "zh": ("有阳光直射", "没有阳光直射")},
      req=V("in a pot|@种在花盆里; in sandy soil|@种在沙质土里; while I'm on vacation|@我出门度假期间"),
      en=["How often should I water {plant} in {month}{req}? The spot {neg}.",
          "Watering schedule for {plant} during {month}{req} - the spot {neg}.",
          "In {month}, how frequently should {plant} be watered{req} if the spot {neg}?",
          "What's the right watering frequency for {plant} in {month}{req}? Note the spot {neg}.",
          "I grow {plant} in a spot that {neg}{req}. How often should I water in {month}?"],
      zh=["{month}{plant}{req}多久浇一次水？放的地方{neg}。",
          "{month}期间{plant}{req}怎么浇水？放的地方{neg}。",
          "{plant}{req}在{month}该多久浇一次？位置{neg}。",
          "{plant}放在{neg}的地方{req}，{month}多久浇水一次？",
          "请问{month}的时候，{plant}{req}浇水频率是多少？放的位置{neg}。"],
      ans_en=["In {month}, water {plant} when the top few centimetres of soil feel dry - roughly every {#2-10} days, since the spot {neg}. Always check the soil first.",
              "For {plant} in {month} in a spot that {neg}, a deep watering about every {#2-10} days works; cut back if the leaves droop from soggy soil."],
      ans_zh=["{month}等表层几厘米土干了再给{plant}浇水，放的地方{neg}，大约每{#2-10}天一次，浇之前先摸摸土。",
              "{month}里{plant}放在{neg}的位置，大约每{#2-10}天浇透一次；如果土一直湿、叶子发蔫就少浇点。"],
      rel_en=["Why are the leaves on my {plant} turning yellow in {month}?", "Should I fertilize {plant} in {month}?"],
      rel_zh=["为什么我的{plant}在{month}叶子发黄？", "{month}要给{plant}施肥吗？"],
      reorder_en=[("In {month}, in a spot that {neg}, how often do I water {plant}?", "How often do I water {plant} in {month} in a spot that {neg}?")],
      reorder_zh=[("{month}，放的地方{neg}，{plant}多久浇一次？", "{plant}多久浇一次？{month}，放的地方{neg}。")],
      follow=[{"slot": "month", "en": ["And in {month}?", "What about {month}?"], "zh": ["那{month}呢？", "{month}呢？"]}],
      coref={"slot": "plant", "en": ["How often should I water them in {month}? The spot {neg}.", "In {month}, how often do they need water? The spot {neg}."],
             "zh": ["{month}多久浇一次水？放的地方{neg}。", "它们{month}该多久浇一次？位置{neg}。"]})

frame(id="percent", domain="other",
      slots={"a": "int:2:95", "b": "int:20:5000:10"},
      derive=lambda s: {"pct": _num(s["a"] * s["b"] / 100), "ratio": _num(s["a"] / s["b"] * 100)},
      en=["What's {a}% of {b}?",
          "Calculate {a} percent of {b}.",
          "{a}% of {b} = ?",
          "How much is {a}% of {b}?",
          "If I take {a}% of {b}, what do I get?"],
      zh=["{b}的{a}%是多少？",
          "算一下{b}乘以{a}%。",
          "{b}的百分之{a}等于多少？",
          "{a}% × {b} = ?",
          "{b}里面取{a}%，是多少？"],
      ans_en=["{a}% of {b} is {pct}.", "That's {pct} ({b} x {a} / 100)."],
      ans_zh=["{b}的{a}%是{pct}。", "结果是{pct}（{b} × {a} ÷ 100）。"],
      rel_en=["What percentage of {b} is {a}?", "{a} is what percent of {b}?"],
      rel_zh=["{a}是{b}的百分之几？", "{a}占{b}的百分比是多少？"],
      reorder_en=[("Of {b}, what is {a}%?", "What is {a}% of {b}?")],
      reorder_zh=[("{a}%的{b}是多少？", "{b}的{a}%是多少？")],
      follow=[{"slot": "a", "en": ["And {a}%?", "What about {a}%?"], "zh": ["那{a}%呢？", "{a}%呢？"]}])

frame(id="leave_request", domain="other",
      slots={"n": "int:2:15", "reason": "reason"},
      req=V("during our busiest month|在公司最忙的月份; on short notice|临时请; by email|通过邮件"),
      en=["How should I ask my manager for {n} days off for {reason}{req}?",
          "What's a good way to request {n} days of leave for {reason}{req}?",
          "Help me ask my boss for {n} days off - it's for {reason}{req}.",
          "I need {n} days off for {reason}{req}. How do I bring it up with my manager?",
          "Time-off request: {n} days, reason: {reason}{req}. How should I phrase it?"],
      zh=["因为{reason}要请{n}天假，怎么跟领导开口{req}？",
          "想请{n}天假去{reason}{req}，怎么跟老板说比较好？",
          "帮我想想怎么向上司请{n}天假，原因是{reason}{req}。",
          "{reason}需要{n}天假{req}，怎么和经理提？",
          "请假{n}天，理由是{reason}{req}，怎么措辞？"],
      ans_en=["Keep it short and early: tell your manager you need {n} days off for {reason}, propose the dates, and explain how your work will be covered.",
              "Try: \"I'd like to request {n} days of leave for {reason}. I'll hand over my open tasks beforehand and stay reachable for anything urgent.\""],
      ans_zh=["尽早、简洁地说明：因为{reason}需要请{n}天假，给出具体日期，并说明请假期间工作怎么交接。",
              "可以这样说：“因为{reason}，我想请{n}天假，走之前会把手头工作交接好，紧急情况可以联系我。”"],
      rel_en=["Is my employer allowed to refuse {n} days off for {reason}?", "Do I get paid for days off taken for {reason}?"],
      rel_zh=["公司可以拒绝我因为{reason}请{n}天假吗？", "因为{reason}请假有工资吗？"],
      reorder_en=[("For {reason}, how do I ask my manager for {n} days off?", "How do I ask my manager for {n} days off for {reason}?")],
      reorder_zh=[("因为{reason}，怎么找经理请{n}天假？", "怎么找经理请{n}天假？因为{reason}。")],
      follow=[{"slot": "n", "en": ["What if it's {n} days?", "And for {n} days?"], "zh": ["如果是{n}天呢？", "那{n}天呢？"]}])


if __name__ == "__main__":
    sys.exit(main())
