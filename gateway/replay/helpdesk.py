"""A generated help-desk set for promotion by evidence: FAQ traffic in EN and ZH from many users.

Users ask a product's frequent questions with Zipf-distributed popularity: the canonical wording (a
suggested question clicked), small edits of it (politeness, punctuation, case), or a paraphrase. Near
neighbours are separate FAQs with their own answers (reset the password vs reset the PIN, return vs
cancel): serving one for the other is a false hit. Some users add personal details (order numbers,
e-mail addresses, phone numbers, names); those answers quote them and must never reach anyone else.
Every answer of a FAQ is the same text, so a HIT is right only when it serves the request's own answer
(`exact_answer`). Each conversation is a session of its own; some go on with a follow-up turn.
"""
from __future__ import annotations

import random

# (id, lang, canonical question, paraphrases, answer). Pairs that differ in one word are deliberate.
FAQS: list[tuple[str, str, str, list[str], str]] = [
    ("pw-reset", "en", "How do I reset my password?",
     ["I forgot my password, how can I reset it?", "What are the steps to reset my account password?",
      "Can you tell me how to change a forgotten password?"],
     "Open the sign-in page, choose 'Forgot password', and follow the link we e-mail you. The link is valid "
     "for 30 minutes."),
    ("pin-reset", "en", "How do I reset my PIN?",
     ["I forgot my PIN, how can I reset it?", "What are the steps to reset the card PIN?"],
     "Go to Cards, pick the card, and choose 'Reset PIN'. You will confirm with a code sent by SMS."),
    ("order-cancel", "en", "How do I cancel an order?",
     ["Can I cancel my order before it ships?", "What is the way to cancel an order I placed?"],
     "Open Orders, select the order and press 'Cancel order'. Orders can be cancelled until they ship."),
    ("order-return", "en", "How do I return an order?",
     ["Can I send back something I bought?", "What is the process to return an item?"],
     "Start a return from Orders within 30 days of delivery. Print the label and drop the parcel at any "
     "post office."),
    ("refund-time", "en", "How long does a refund take?",
     ["When will I get my refund?", "How many days until my money is refunded?"],
     "Refunds reach your original payment method 5 to 7 business days after we receive the return."),
    ("ship-canada", "en", "Do you ship to Canada?",
     ["Can I get my order delivered in Canada?", "Is shipping to Canada available?"],
     "Yes. Shipping to Canada takes 4 to 6 business days and costs 12 dollars."),
    ("ship-mexico", "en", "Do you ship to Mexico?",
     ["Can I get my order delivered in Mexico?", "Is shipping to Mexico available?"],
     "Yes. Shipping to Mexico takes 6 to 9 business days and costs 18 dollars."),
    ("email-change", "en", "How do I change my email address?",
     ["Can I update the email on my account?", "Where do I edit my account email?"],
     "Go to Settings > Account > Email, enter the new address and confirm it from the message we send."),
    ("phone-change", "en", "How do I change my phone number?",
     ["Can I update the phone number on my account?", "Where do I edit my phone number?"],
     "Go to Settings > Account > Phone, enter the new number and type the 6-digit code we text you."),
    ("plan-diff", "en", "What is the difference between the Basic and Pro plans?",
     ["How does the Pro plan differ from Basic?", "Basic vs Pro: what do I get extra?"],
     "Pro adds unlimited projects, priority support and 100 GB of storage; Basic has 3 projects and 10 GB."),
    ("plan-cancel", "en", "How do I cancel my subscription?",
     ["Can I stop my subscription?", "How can I end my monthly plan?"],
     "Go to Settings > Billing and choose 'Cancel subscription'. You keep access until the end of the period."),
    ("invoice", "en", "Where can I download my invoices?",
     ["How do I get a copy of my invoice?", "Where are my billing receipts?"],
     "Invoices are under Settings > Billing > History. Each one can be downloaded as a PDF."),
    ("2fa", "en", "How do I turn on two-factor authentication?",
     ["How can I enable 2FA on my account?", "Where do I set up two-step login?"],
     "Go to Settings > Security, choose 'Two-factor authentication' and scan the QR code with an "
     "authenticator app."),
    ("delete-account", "en", "How do I delete my account?",
     ["Can I close my account permanently?", "How do I remove my account and data?"],
     "Go to Settings > Privacy and choose 'Delete account'. Deletion is final after 14 days."),
    ("hours", "en", "What are your customer support hours?",
     ["When is customer support available?", "What hours can I contact support?"],
     "Support is available Monday to Friday, 8 am to 8 pm Eastern time."),
    ("gift-card", "en", "Can I pay with a gift card?",
     ["Do you accept gift cards as payment?", "Is it possible to use a gift card at checkout?"],
     "Yes. Enter the gift card code at checkout; any remaining balance stays on the card."),
    ("pw-reset", "zh", "怎么重置密码？",
     ["我忘记密码了，怎么找回？", "重置账户密码的步骤是什么？", "密码忘了该怎么办？"],
     "在登录页点击“忘记密码”，按邮件里的链接操作即可，链接30分钟内有效。"),
    ("pin-reset", "zh", "怎么重置支付密码？",
     ["支付密码忘了怎么办？", "重置银行卡支付密码的步骤是什么？"],
     "进入“卡片”，选择对应的卡，点击“重置支付密码”，再输入短信验证码确认。"),
    ("order-cancel", "zh", "怎么取消订单？",
     ["订单还没发货能取消吗？", "下单后想取消怎么操作？"],
     "在“我的订单”里选中订单，点击“取消订单”。发货前都可以取消。"),
    ("order-return", "zh", "怎么退货？",
     ["买的东西想退回去怎么办？", "退货流程是什么？"],
     "签收后30天内在“我的订单”申请退货，打印面单后交给任意快递网点即可。"),
    ("refund-time", "zh", "退款多久能到账？",
     ["退款什么时候到？", "钱多少天能退回来？"],
     "我们收到退货后，退款会在5到7个工作日内原路返回。"),
    ("ship-hk", "zh", "可以寄到香港吗？",
     ["香港能收货吗？", "支持发货到香港吗？"],
     "可以，寄往香港需要3到5个工作日，运费20元。"),
    ("ship-tw", "zh", "可以寄到台湾吗？",
     ["台湾能收货吗？", "支持发货到台湾吗？"],
     "可以，寄往台湾需要5到8个工作日，运费35元。"),
    ("email-change", "zh", "怎么修改绑定邮箱？",
     ["账号的邮箱能换吗？", "在哪里更改邮箱地址？"],
     "进入“设置 > 账号 > 邮箱”，填写新邮箱并点击我们发送的确认链接。"),
    ("phone-change", "zh", "怎么修改绑定手机号？",
     ["账号的手机号能换吗？", "在哪里更改手机号码？"],
     "进入“设置 > 账号 > 手机”，填写新号码并输入收到的6位验证码。"),
    ("plan-diff", "zh", "基础版和专业版有什么区别？",
     ["专业版比基础版多什么功能？", "基础版跟专业版差在哪？"],
     "专业版不限项目数量，提供优先客服和100GB存储；基础版最多3个项目、10GB存储。"),
    ("plan-cancel", "zh", "怎么取消自动续费？",
     ["会员自动续费怎么关？", "怎样停止包月订阅？"],
     "进入“设置 > 账单”，点击“取消订阅”。本期结束前仍可正常使用。"),
    ("invoice", "zh", "在哪里下载发票？",
     ["怎么开发票？", "我的付款凭证在哪看？"],
     "发票在“设置 > 账单 > 历史记录”中，每张都可以下载PDF。"),
    ("2fa", "zh", "怎么开启两步验证？",
     ["如何打开双重认证？", "账号登录保护怎么设置？"],
     "进入“设置 > 安全”，选择“两步验证”，用验证器应用扫描二维码即可。"),
    ("delete-account", "zh", "怎么注销账号？",
     ["能永久删除账户吗？", "如何注销并删除我的数据？"],
     "进入“设置 > 隐私”，选择“注销账号”。14天后注销生效且无法恢复。"),
    ("hours", "zh", "客服几点上班？",
     ["人工客服什么时候在线？", "客服工作时间是几点到几点？"],
     "客服工作时间为周一至周五，早上8点到晚上8点。"),
    ("gift-card", "zh", "可以用礼品卡付款吗？",
     ["支持礼品卡支付吗？", "结账时能用礼品卡吗？"],
     "可以，结账时输入礼品卡卡密，余额会保留在卡内。"),
]

EN_WRAP = ["{q}", "{q}", "Hi, {q}", "{q} Thanks!", "Hello! {q}", "{l}", "{q} Please help."]
ZH_WRAP = ["{q}", "{q}", "你好，{q}", "{q}谢谢！", "请问{q}", "{q}麻烦了"]
FOLLOW_UPS = {"en": [("Thanks, that helped!", "You're welcome! Anything else I can do?"),
                     ("Is there a fee for that?", "No, there is no fee.")],
              "zh": [("好的，谢谢！", "不客气，还有其他问题吗？"), ("这个要收费吗？", "不收费。")]}
FIRST = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jia", "Kofi", "Lena"]
LAST = ["Nakamura", "Okafor", "Petrov", "Quinn", "Rossi", "Silva", "Tanaka", "Usman", "Varga", "Weber"]
ZH_NAMES = ["王小明", "李华", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "黄婷"]


def _personal(lang: str, rng: random.Random) -> tuple[str, str, list[str]]:
    """A request with someone's own details, its answer quoting them, and the details."""
    order = f"{rng.randint(10, 99)}{rng.randint(100000, 999999)}"
    if lang == "en":
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        email = f"{name.split()[0].lower()}.{rng.randint(1, 999)}@example.com"
        phone = f"+1 {rng.randint(201, 989)} 555 {rng.randint(1000, 9999)}"
        kind = rng.randrange(4)
        if kind == 0:
            return (f"My order #{order} has not arrived yet. Where is it?",
                    f"Order #{order} left our warehouse yesterday and should arrive in 2 days.", [order])
        if kind == 1:
            return (f"I can't log in. My email is {email}.",
                    f"We sent a sign-in link to {email}. It is valid for 30 minutes.", [email])
        if kind == 2:
            return (f"Hi, my name is {name}. Please update my phone number to {phone}.",
                    f"Thanks {name.split()[0]}, the phone number on your account is now {phone}.", [name, phone])
        return (f"Where is my refund for order {order}?",
                f"The refund for order {order} was issued today and arrives in 5 to 7 business days.", [order])
    name = rng.choice(ZH_NAMES)
    phone = f"1{rng.choice('3456789')}{rng.randint(100000000, 999999999)}"
    kind = rng.randrange(3)
    if kind == 0:
        return (f"我的订单号是{order}，怎么还没到？", f"订单{order}昨天已出库，预计2天内送达。", [order])
    if kind == 1:
        return (f"我叫{name}，手机号{phone}，帮我查一下会员到期时间。",
                f"{name}您好，尾号{phone[-4:]}的会员将在下月15日到期。", [name, phone])
    return (f"订单号{order}的退款到哪了？", f"订单{order}的退款今天已发出，5到7个工作日到账。", [order])


def _zipf_weights(n: int, s: float = 1.1) -> list[float]:
    return [1.0 / (rank + 1) ** s for rank in range(n)]


def _surface(faq, lang: str, rng: random.Random) -> tuple[str, str]:
    """How a user words the FAQ: (text, kind) with kind canonical, edit or paraphrase."""
    _, _, canonical, paraphrases, _ = faq
    roll = rng.random()
    if roll < 0.5:
        return canonical, "canonical"
    if roll < 0.75:
        wraps = EN_WRAP if lang == "en" else ZH_WRAP
        text = rng.choice(wraps).format(q=canonical, l=canonical.lower())
        if text == canonical:
            text = canonical.rstrip("?？") + ("?" if lang == "en" else "？")
        return text, "edit"
    return rng.choice(paraphrases), "paraphrase"


def generate_helpdesk(users: int = 200, seed: int = 0, personal_share: float = 0.15,
                      max_conversations: int = 3, follow_up_share: float = 0.2) -> list[dict]:
    """Conversations (sessions) of `users` users, in the order they arrive. Labels: `hit` when the same FAQ
    (same language) was asked before by anyone and the request carries no personal details, else `miss`."""
    rng = random.Random(seed)
    by_lang = {lang: [f for f in FAQS if f[1] == lang] for lang in ("en", "zh")}
    for lang in by_lang:                 # popularity order differs per language and seed
        rng.shuffle(by_lang[lang])
    weights = {lang: _zipf_weights(len(faqs)) for lang, faqs in by_lang.items()}
    conversations = []
    for u in range(users):
        lang = "en" if rng.random() < 0.5 else "zh"
        for c in range(rng.randint(1, max_conversations)):
            conversations.append((rng.random(), u, c, lang))
    conversations.sort()                 # users' conversations interleave in time
    seen: set[tuple[str, str]] = set()
    sessions = []
    for _, u, c, lang in conversations:
        if rng.random() < personal_share:
            question, answer, details = _personal(lang, rng)
            request = {"messages": [{"role": "user", "content": question}], "answer": answer, "label": "miss",
                       "kind": "personal", "lang": lang, "faq": None, "personal": details, "exact_answer": True}
        else:
            faq = rng.choices(by_lang[lang], weights[lang])[0]
            question, kind = _surface(faq, lang, rng)
            key = (faq[0], lang)
            request = {"messages": [{"role": "user", "content": question}], "answer": faq[4],
                       "label": "hit" if key in seen else "miss", "kind": kind, "lang": lang, "faq": faq[0],
                       "exact_answer": True}
            seen.add(key)
        requests = [request]
        if rng.random() < follow_up_share:
            follow, reply = rng.choice(FOLLOW_UPS[lang])
            requests.append({"messages": request["messages"] + [{"role": "assistant", "content": request["answer"]},
                                                                {"role": "user", "content": follow}],
                             "answer": reply, "label": "miss", "kind": "follow_up", "lang": lang, "faq": None,
                             "exact_answer": True})
        sessions.append({"session_id": f"user{u:03d}-c{c}", "user": u, "requests": requests})
    return sessions
