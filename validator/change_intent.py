"""Change-intent classifier: does a new request ask the same thing as a cached one (`same`),
change a constraint of it (`modify`), or ask something else (`switch`)?

A small MLP head over the encoder's embeddings of the current turn and of the
cached context, plus rule features. The head ships as `data/change_intent.onnx`
and is retrained by `validator/training/train_change_intent.py`. The encoder is
passed in (`embed`: list of texts -> unit vectors), so this package depends on
no other package of ours.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from validator.key_facts import EN_SMALL, message_text

LABELS = ("same", "modify", "switch")
MODEL_FILE = Path(__file__).parent / "data" / "change_intent.onnx"
METRICS_FILE = Path(__file__).parent / "data" / "change_intent_metrics.json"

NEGATION = re.compile(r"(?<![A-Za-z])(don'?t|do not|not|no|without|remove|drop|skip|exclude|cancel|never)(?![A-Za-z])|"
                      r"不要|去掉|取消|排除|删掉|别|不用|不想|不坐|不去", re.I)
ADDITION = re.compile(r"(?<![A-Za-z])(also|add|plus|another|extra|more|second|too|as well)(?![A-Za-z])|"
                      r"加上|补充|还有|还要|另外|再加|再写|多加|增加", re.I)
CHANGE = re.compile(r"(?<![A-Za-z])(instead|change|make it|switch|swap|replace|rather|actually|raise|lower|increase|"
                    r"reduce|cheaper|upgrade|rewrite|translate|update|what about|how about|only)(?![A-Za-z])|"
                    r"改成|换成|改为|改到|换|改|提高|降低|便宜|其实|如果是|只要|翻译", re.I)
REFERENCE = re.compile(r"(?<![A-Za-z])(it|that|this|them|those|the plan|the list|the code|the rest)(?![A-Za-z])|"
                       r"它|那个|这个|那家|这家|上面|刚才|其他的", re.I)
NUMBER = re.compile(r"\d+(?:\.\d+)?")
NUMBER_WORD = re.compile(r"(?<![A-Za-z])(%s)(?![A-Za-z])" % "|".join(EN_SMALL), re.I)
TOPIC_SWITCH = re.compile(r"(?<![A-Za-z])(by the way|another question|unrelated|different topic|new question|"
                          r"switching gears|separate question|also, quick question)(?![A-Za-z])|"
                          r"换个话题|另外问|顺便问|还有个问题|别的问题|换个问题|问个别的", re.I)
NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z]+(?:\s+[A-Z][A-Za-z]+)*|[\"“「『][^\"”」』]{2,40}[\"”」』]")


@dataclass
class IntentResult:
    label: str
    probs: dict[str, float]


def _bigrams(text: str) -> set[str]:
    text = re.sub(r"\s+", " ", text.lower())
    return {text[i:i + 2] for i in range(len(text) - 1)}


def views(messages: list[dict], cached_messages: list[dict]) -> tuple[str, str, str]:
    """(current turn, cached last user turn, cached context summary)."""
    current = next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
    cached_users = [message_text(m) for m in cached_messages if m.get("role") == "user"]
    cached_answer = next((message_text(m) for m in reversed(cached_messages) if m.get("role") == "assistant"), "")
    last_user = cached_users[-1] if cached_users else ""
    summary = " ".join(cached_users[-2:]) + " " + cached_answer[:200]
    return current, last_user, summary.strip()


def numbers(text: str) -> set[str]:
    """The quantities of a text, digits or English words (so "three-day" equals "3-day")."""
    text = NUMBER_WORD.sub(lambda m: str(EN_SMALL[m.group(1).lower()]), text)
    return set(NUMBER.findall(text))


def rule_features(messages: list[dict], cached_messages: list[dict]) -> np.ndarray:
    current, last_user, _ = views(messages, cached_messages)
    in_conversation = float(len([m for m in messages if m.get("role") == "user"]) > 1)
    now_numbers, then_numbers = numbers(current), numbers(last_user)
    now_names, then_names = set(NAME.findall(current)), set(NAME.findall(last_user))
    # an entity swap: the request names things, none of which the cached request named
    swapped = bool(then_names) and bool(now_names - then_names) and not now_names & then_names
    a, b = _bigrams(current), _bigrams(last_user)
    overlap = len(a & b) / max(len(a | b), 1)
    return np.array([
        float(bool(NEGATION.search(current))), float(bool(ADDITION.search(current))),
        float(bool(CHANGE.search(current))), float(bool(REFERENCE.search(current))),
        float(bool(now_numbers - then_numbers)), float(bool(now_numbers) and bool(then_numbers)
                                                      and now_numbers != then_numbers),
        overlap, min(len(current) / max(len(last_user), 1), 3.0) / 3.0, in_conversation,
        float(swapped),
        float(bool(TOPIC_SWITCH.search(current))),
    ], dtype=np.float32)


def features(messages: list[dict], cached_messages: list[dict], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    current, last_user, summary = views(messages, cached_messages)
    e_cur, e_user, e_ctx = embed([current, last_user or summary, summary or last_user])
    return np.concatenate([e_cur * e_user, np.abs(e_cur - e_user), e_cur * e_ctx,
                           np.array([e_cur @ e_user, e_cur @ e_ctx], dtype=np.float32),
                           rule_features(messages, cached_messages)]).astype(np.float32)


class ChangeIntentClassifier:
    def __init__(self, embed: Callable[[list[str]], np.ndarray], model: Path = MODEL_FILE):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1          # a tiny head: threads cost more than they save
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.embed = embed
        metrics = model.with_name("change_intent_metrics.json")
        # "same" needs at least this probability: chosen in training to keep missed changes rare
        self.same_threshold = json.loads(metrics.read_text())["same_threshold"] if metrics.exists() else 0.5

    def prime(self, cached_messages: list[dict]) -> None:
        """Encode the cached side of future comparisons now (when an entry is written), off the hit path."""
        _, last_user, summary = views([], cached_messages)
        self.embed([last_user or summary, summary or last_user])

    def classify(self, messages: list[dict], cached_messages: list[dict]) -> IntentResult:
        x = features(messages, cached_messages, self.embed)[None, :]
        probs = self.session.run(None, {"features": x})[0][0]
        label = "same" if probs[0] >= self.same_threshold else LABELS[1 + int(np.argmax(probs[1:]))]
        return IntentResult(label, {name: float(p) for name, p in zip(LABELS, probs)})
