"""Phrases of other answers as a draft source (retrieval-based speculation, as REST does): when neither the
request's reference nor its own context continues the last tokens, the answers of a corpus often do. Chat
answers share their connective tissue ("Here's a simple", "This can be done by", list and code scaffolding),
and a model's next few tokens there are predictable from what most answers wrote after the same words.

The store is a token stream (answers separated by -1) and its positions sorted by the four tokens that start
there, so the occurrences of any 1–4-gram are one contiguous range found by binary search. A proposal takes
the longest gram of the sequence's last tokens that occurs at least MIN_COUNT times, then walks forward
token by token through the continuation most of those occurrences share, stopping where fewer than
MIN_COUNT agree. Drafts are verified, so the store changes only the speed, never the tokens; it is built
once from a fixed corpus (`semcache models prepare`), never from live traffic, so one client's answers
cannot show in another's timing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

FILE_NAME = "phrases.npz"
MAX_NGRAM = 4
MIN_NGRAM = 2                    # one token is followed by too many things to predict from
MIN_COUNT = 2                    # occurrences that must agree on each proposed token
SAMPLE = 256                     # occurrences looked at per proposal, spread over the range
SEPARATOR = -1


class PhraseStore:
    """Token stream + positions sorted by their 4-gram; `propose(suffix, k)` gives up to k tokens."""

    def __init__(self, stream: np.ndarray, order: np.ndarray):
        self.stream = stream.astype(np.int32, copy=False)
        self.order = order.astype(np.int32, copy=False)

    @classmethod
    def build(cls, answers: Iterable[list[int]]) -> "PhraseStore":
        parts: list[int] = []
        for ids in answers:
            if ids:
                parts.extend(ids)
                parts.append(SEPARATOR)
        parts.extend([SEPARATOR] * MAX_NGRAM)       # every gram read below stays inside the array
        stream = np.asarray(parts, dtype=np.int32)
        starts = np.nonzero(stream[:-MAX_NGRAM] != SEPARATOR)[0]
        # lexsort sorts by its last key first: the first token of the gram is the primary key
        order = starts[np.lexsort([stream[starts + j] for j in range(MAX_NGRAM - 1, -1, -1)])]
        return cls(stream, order.astype(np.int32))

    @classmethod
    def load(cls, path: Path) -> "PhraseStore":
        with np.load(path) as data:
            return cls(data["stream"], data["order"])

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, stream=self.stream, order=self.order)
        tmp.replace(path)

    def __len__(self) -> int:
        return int(len(self.order))

    def _range(self, gram: list[int]) -> tuple[int, int]:
        """[lo, hi) of the positions in `order` whose first len(gram) tokens are `gram`."""
        n, s, order = len(gram), self.stream, self.order
        lo, hi = 0, len(order)
        while lo < hi:                               # first position whose gram is >= the one sought
            mid = (lo + hi) // 2
            p = int(order[mid])
            if s[p:p + n].tolist() < gram:
                lo = mid + 1
            else:
                hi = mid
        start, hi = lo, len(order)
        while lo < hi:                               # first position whose gram is > it
            mid = (lo + hi) // 2
            p = int(order[mid])
            if s[p:p + n].tolist() <= gram:
                lo = mid + 1
            else:
                hi = mid
        return start, lo

    def propose(self, suffix: list[int], k: int) -> list[int]:
        if k <= 0 or not len(self.order):
            return []
        for n in range(min(MAX_NGRAM, len(suffix)), MIN_NGRAM - 1, -1):
            gram = [int(t) for t in suffix[-n:]]
            lo, hi = self._range(gram)
            if hi - lo < MIN_COUNT:
                continue
            step = max(1, (hi - lo) // SAMPLE)       # spread: a range is sorted by the tokens after the gram
            positions = self.order[lo:hi:step].astype(np.int64) + n
            out: list[int] = []
            for _ in range(k):
                following = self.stream[positions]
                keep = following != SEPARATOR
                following, positions = following[keep], positions[keep]
                if len(following) < MIN_COUNT:
                    break
                values, counts = np.unique(following, return_counts=True)
                best = int(counts.argmax())
                if counts[best] < MIN_COUNT:
                    break
                token = int(values[best])
                out.append(token)
                positions = positions[following == token] + 1
            if out:
                return out
        return []


def prepare(folder: Path, answers: Iterable[str], batch: int = 512) -> Path:
    """<folder>/phrases.npz, built once from answer texts tokenized with the model's own tokenizer."""
    path = folder / FILE_NAME
    if path.exists():
        return path
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(str(folder))

    def token_lists():
        texts: list[str] = []
        for text in answers:
            texts.append(text)
            if len(texts) == batch:
                yield from tokenizer(texts, add_special_tokens=False)["input_ids"]
                texts = []
        if texts:
            yield from tokenizer(texts, add_special_tokens=False)["input_ids"]

    PhraseStore.build(token_lists()).save(path)
    return path
