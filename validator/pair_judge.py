"""Judge a new request against a cached one as a pair: same, modify or switch.

The pair is the whole request: the last user turn and the turns before it, on
both sides. First the two last turns are aligned (`validator.alignment`):
- no content word changed, and the conversation around them is the same one:
  `same`, without a model;
- another quantity, or a negation added or dropped: `modify`, whatever a model
  would say;
- anything else goes to the pair model, a cross-encoder fine-tuned from
  multilingual-e5-small (`pair_network`), which reads both sides at once.
  `same` must reach the probability chosen in training to keep changes out
  (`same_threshold` in the model card).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from validator.alignment import Alignment, align, content_words
from validator.key_facts import message_text

LABELS = ("same", "modify", "switch")
CARD_FILE = Path(__file__).parent / "data" / "pair_model.json"

LAST_TOKENS = 48             # each side's last user turn, in tokens
CONTEXT_TOKENS = 24          # each side's earlier user turns, most recent kept
CONTEXT_TURNS = 2
BOS, EOS = 0, 2


def card() -> dict:
    """The model card: threshold, training data, held-out numbers (written by train_pair_model.py)."""
    return json.loads(CARD_FILE.read_text())


@dataclass
class PairView:
    last: str
    context: list[str]        # earlier user turns, oldest first
    history: list[tuple[str, str]] = field(default_factory=list)    # the messages before `last`, as compared
    answer: str | None = None  # a cached request's answer (the last assistant message after `last`)


@dataclass
class Verdict:
    label: str
    probs: dict[str, float]
    by: str                              # alignment | veto:<what> | model
    alignment: dict = field(default_factory=dict)


HISTORY_MESSAGES = 3          # the messages before the last user turn that are compared (the store keeps 4 turns)
HISTORY_CHARS = 600           # each compared as the store keeps it


def _said(text: str) -> str:
    return " ".join(text[:HISTORY_CHARS].split())


def view(messages: list[dict]) -> PairView:
    dialogue = [(m.get("role"), message_text(m)) for m in messages if m.get("role") in ("user", "assistant")]
    last_user = max((i for i, (role, _) in enumerate(dialogue) if role == "user"), default=None)
    if last_user is None:
        return PairView("", [])
    users = [text for role, text in dialogue[:last_user] if role == "user"]
    after = [text for role, text in dialogue[last_user + 1:] if role == "assistant"]
    history = [(role, _said(text)) for role, text in dialogue[:last_user]][-HISTORY_MESSAGES:]
    return PairView(dialogue[last_user][1], users[-CONTEXT_TURNS:], history, _said(after[-1]) if after else None)


def conversation_relation(new: PairView, cached: PairView) -> str:
    """`same`: the new turn is asked where the cached one was (the same earlier messages, or right after the
    cached turn and its answer); `answers`: the same user turns, but an earlier answer differs, so a
    reference ("the second one", "那家") may point elsewhere; `other`: another conversation."""
    if new.history == cached.history:
        return "same"
    if cached.answer is not None:
        after = (cached.history + [("user", _said(cached.last)), ("assistant", cached.answer)])[-HISTORY_MESSAGES:]
        if new.history == after[-len(new.history):] and len(new.history) >= min(2, len(after)):
            return "same"
    def users(history):
        return [content_words(text) for role, text in history if role == "user"]
    roles = [role for role, _ in new.history] == [role for role, _ in cached.history]
    return "answers" if roles and users(new.history) == users(cached.history) else "other"


class PairTokens:
    """Both sides as one sequence: <s> new last </s> new context </s></s> cached last </s> cached context </s>."""

    def __init__(self, folder: Path):
        from tokenizers import Tokenizer
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        norm = folder / "normalization.json"
        self.table = {int(k): v for k, v in json.loads(norm.read_text()).items()} if norm.exists() else None

    def _ids(self, text: str, limit: int, keep_end: bool = False) -> list[int]:
        text = text[:4 * limit * 4] if not keep_end else text[-4 * limit * 4:]      # bounded work on long text
        if self.table is not None:
            text = text.translate(self.table)
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids if text.strip() else []
        return ids[-limit:] if keep_end else ids[:limit]

    def side(self, v: PairView) -> list[int]:
        return self._ids(v.last, LAST_TOKENS) + [EOS] + self._ids(" | ".join(v.context), CONTEXT_TOKENS, keep_end=True)

    def pair(self, new: PairView, cached: PairView) -> list[int]:
        return [BOS] + self.side(new) + [EOS, EOS] + self.side(cached) + [EOS]


def batch(sequences: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(s) for s in sequences)
    ids = np.ones((len(sequences), width), dtype=np.int64)          # <pad> is 1
    mask = np.zeros((len(sequences), width), dtype=np.int64)
    for i, s in enumerate(sequences):
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    return ids, mask


def prejudge(new: PairView, cached: PairView) -> Verdict:
    """What alignment settles on its own; an empty label: the pair model decides."""
    alignment: Alignment = align(cached.last, new.last)
    record = alignment.record()
    relation = conversation_relation(new, cached)
    if not alignment.changed and relation == "same":
        return Verdict("same", {"same": 1.0, "modify": 0.0, "switch": 0.0}, "alignment", record)
    # no content word in common ("thanks, that helped" after the question): never the same request, whatever
    # the model reads into a short reply; `modify` keeps it a PARTIAL where it continues the conversation
    veto = alignment.vetoed or ("disjoint" if alignment.disjoint else None) or \
        ("answers" if relation == "answers" else None) or \
        ("context_names" if relation == "other" and _names_replaced(cached.context, new.context) else None)
    if veto:
        return Verdict("modify", {"same": 0.0, "modify": 1.0, "switch": 0.0}, f"veto:{veto}", record)
    return Verdict("", {}, "model", record)


def _names_replaced(cached: list[str], new: list[str]) -> bool:
    """The earlier user turns of another conversation put another name where this one had its own (weather
    in Oslo / in Rome, then "and tomorrow?"): the same last message asks about something else. Only names:
    on the project's held-out pairs left to the model, a name replaced in the context marked 44 changes and 1
    same request, while other numbers or negations there marked more same requests (168, 21) than changes."""
    if not cached or not new:
        return False
    context = align(" | ".join(cached), " | ".join(new))
    return context.names_replaced and not context.disjoint


def decide(probs: np.ndarray, same_threshold: float) -> str:
    """`same` only at the card's threshold; below it, `switch` only where the model reads a switch above both
    other labels: a pair the model thinks is probably the same request, but not surely, is the same task
    (`modify`), not another one."""
    if probs[0] >= same_threshold:
        return "same"
    return "switch" if int(np.argmax(probs)) == 2 else "modify"


class PairJudge:
    def __init__(self, folder: Path, threads: int | None = None, runner=None):
        """`folder`: the assembled model (ONNX, tokenizer). `runner`: another way to run the same network (an
        object whose `run(ids, mask)` gives the probabilities, e.g. the gateway's bf16 runner over
        `pair_network.hf_state`); then no ONNX Runtime session is opened."""
        self.runner = runner
        self.session = None
        if runner is None:
            import onnxruntime as ort
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads or min(os.cpu_count() or 1, 2)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.session = ort.InferenceSession(str(folder / "model.onnx"), options,
                                                providers=["CPUExecutionProvider"])
        self.tokens = PairTokens(folder)
        self.same_threshold = float(card()["same_threshold"])

    @property
    def backend(self) -> str:
        return "onnx" if self.runner is None else getattr(self.runner, "name", "runner")

    @classmethod
    def prepared(cls, e5_folder: Path, models_dir: Path, threads: int | None = None, runner=None) -> "PairJudge":
        """The judge from the data dir's models, assembled there from e5 and the trained layers on first use."""
        from validator.pair_network import assemble         # torch: only to assemble, never to judge
        return cls(assemble(e5_folder, models_dir / "pair-judge"), threads, runner)

    def probs(self, pairs: list[tuple[PairView, PairView]]) -> np.ndarray:
        ids, mask = batch([self.tokens.pair(n, c) for n, c in pairs])
        if self.runner is not None:
            return self.runner.run(ids, mask)
        return self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

    def judge(self, messages: list[dict], cached_messages: list[dict]) -> Verdict:
        new, cached = view(messages), view(cached_messages)
        verdict = prejudge(new, cached)
        if verdict.label:
            return verdict
        p = self.probs([(new, cached)])[0]
        verdict.label, verdict.probs = decide(p, self.same_threshold), {n: float(x) for n, x in zip(LABELS, p)}
        return verdict
