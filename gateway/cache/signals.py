"""What a user turn says about the conversation itself: start over, or "that answer was wrong".

Both are short, formulaic turns, so cues anchored to the start of a short
message (or explicit long phrases anywhere) are precise; a turn that goes on to
ask something new ("forget the museum, add a beach") is a change, not a reset.
"""
from __future__ import annotations

import re

RESET = re.compile(
    r"^(?:ok(?:ay)?[,. ]+|please[,. ]+|let'?s[,. ]+)*(?:start (?:over|again|afresh|from scratch)|"
    r"(?:forget|ignore|disregard) (?:everything|all(?: of)? (?:that|this|the above)|what i (?:said|asked|wrote)|"
    r"(?:our|the|this) (?:previous |whole )?(?:conversation|chat|context)|(?:all )?(?:the )?previous (?:messages|turns))|"
    r"reset(?: (?:the )?(?:conversation|chat|context))?|new (?:conversation|chat)|clear (?:the )?(?:context|chat))"
    r"(?=\s*(?:please|thanks|thank you)?\s*(?:[.!,;:]|$))"
    r"|^(?:好吧|那|请)?[，, ]*(?:重新开始|从头(?:开始|来)|重来|忘了之前的|忘掉之前的|忘记之前的|忘了我(?:刚才|之前)说的|"
    r"清空(?:上下文|对话)|新(?:的)?对话|我们重新来)(?:[吧啊呀了]|一遍|一下)*(?=[\s。！!，,.]*$)", re.I)
NEGATIVE = re.compile(
    r"^(?:no[,.! ]+)?(?:that'?s|that is|this is|it'?s|you'?re|your answer is) (?:wrong|incorrect|not (?:right|correct|"
    r"it|what i (?:asked|meant|wanted)))|^(?:wrong|incorrect|nope)\b|^no[,.! ]+i meant\b|not what i (?:asked|meant|wanted)|"
    r"you misunderstood|you got (?:it|that) wrong|"
    r"^(?:不对|错了|不是的|答错了)(?=[\s，,。.!！吧啊呀]|$)|不是这个意思|不是我要的|理解错了|答非所问|搞错了|说错了", re.I)
REFINE = re.compile(
    r"^(?:ok(?:ay)?[,. ]+|now[,. ]+|please[,. ]+|can you[,. ]+|could you[,. ]+)*(?:continue|go on|keep going|"
    r"more\b|again\b|expand|elaborate|shorter|longer|simpler|redo|retry|try again|another (?:one|version)|"
    r"one more|make (?:it|this|that) |rewrite (?:it|this|that)|say (?:it|that) differently|rephrase)"
    r"|^(?:好的?[，, ]*|请|那)?(?:继续|接着|再来|再写|再给|再说|再长|再短|再详细|再简单|更(?:加)?(?:简洁|简短|详细|正式|口语|通俗|长|短|简单|专业|生动|有趣|礼貌|具体)|展开|详细(?:一)?点|"
    r"简短(?:一)?点|换(?:一|个)(?:种)?(?:写法|说法|版本|方式)|重写|改写一下)", re.I)
MAX_SIGNAL_CHARS = 80           # a longer turn is a new request that happens to begin with a cue


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_SIGNAL_CHARS else ""


def is_reset(text: str) -> bool:
    return bool(RESET.search(_short(text)))


def is_refinement(text: str) -> bool:
    """"more", "continue", "make it shorter", "继续", "再详细点": the answer depends on the previous output,
    not on the words, so the same words again ask for something new."""
    return bool(REFINE.search(_short(text)))


def is_negative(text: str) -> bool:
    return bool(NEGATIVE.search(_short(text)))
