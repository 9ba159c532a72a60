"""Typos are not changes (a lexicon word against a non-word one slip away); two real words are."""
import json
import random
import re
from pathlib import Path

import pytest

from validator.alignment import EN_CLOSED, align
from validator.typos import edits, english_lexicon, is_typo

CORPUS = Path(__file__).resolve().parents[2] / "validator" / "training" / "corpus" / "real_turns.jsonl"


def test_the_lexicon_is_the_packaged_vocabulary():
    lexicon = english_lexicon()
    assert len(lexicon) > 15000
    assert {"shipping", "night", "print"} <= lexicon and "shiipping" not in lexicon


@pytest.mark.parametrize("a,b,distance", [("print", "prnit", 1), ("how", "howw", 1), ("night", "niight", 1),
                                          ("itinerary", "itinerery", 1), ("abc", "xyz", 2), ("stack", "sack", 1)])
def test_edit_distance_counts_a_swap_as_one_slip(a, b, distance):
    assert edits(a, b, 1) == distance


@pytest.mark.parametrize("a,b", [("shipping", "shiipping"), ("print", "prnit"), ("suddenly", "sudednly"),
                                 ("options", "optinos")])
def test_a_misspelt_lexicon_word_is_a_typo(a, b):
    assert is_typo(a, b) and is_typo(b, a)


@pytest.mark.parametrize("a,b", [
    ("stack", "sack"),           # two words: the user may mean either
    ("third", "second"),
    ("add", "end"),
    ("warranty", "warrenty"),    # the lexicon does not know the word: never assumed misspelt
    ("v2", "v3"),
    ("cat", "bat"),
    ("print", "xrint"),          # another first letter
])
def test_real_words_and_unknown_words_are_not_typos(a, b):
    assert not is_typo(a, b)


def test_a_typo_fixed_leaves_no_change_and_a_real_word_swap_stays_one():
    fixed = align("I'm interested in rooms for the niight with free wifi", "I'm interested in rooms for the night with free wifi")
    assert not fixed.changed and fixed.typos == 1
    swapped = align("Can you give me the code for a pern stack app", "Can you give me the code for a pern sack app")
    assert swapped.changed and swapped.removed == ["stack"] and swapped.added == ["sack"]
    both = align("Prnit the shiipping labels", "Print the shipping forms")
    assert both.removed == ["label"] and both.added == ["form"] and both.typos == 2


def _slip(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "double", "drop"))
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "double":
        return word[:i] + word[i] + word[i:]
    return word[:i] + word[i + 1:]


def _neighbours(word: str, lexicon: frozenset) -> list[str]:
    """Other lexicon words one edit from this one, with its first letter ("sport" / "short", "spot")."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    forms = {word[:i] + c + word[i + 1:] for i in range(1, len(word)) for c in letters}
    forms |= {word[:i] + word[i + 1:] for i in range(1, len(word))}
    forms |= {word[:i] + c + word[i:] for i in range(1, len(word) + 1) for c in letters}
    return sorted(f for f in forms - {word} if f in lexicon)


def test_slips_in_real_user_turns_are_found_and_real_word_edits_are_not():
    """MT-Bench and ShareGPT turns (the training corpus, not the eval set): one slip in a lexicon word that
    makes a non-word is found as a typo; another lexicon word one edit away put in its place is a change."""
    rng = random.Random(5)
    lexicon = english_lexicon()
    turns = [json.loads(line)["text"] for line in CORPUS.read_text().splitlines()]
    turns = [t for t in turns if re.fullmatch(r"[\x20-\x7e]{20,300}", t)]
    slips = found = swaps = leaked = 0
    for text in rng.sample(turns, 300):
        candidates = [m for m in re.finditer(r"\b[a-z]{5,}\b", text) if m.group() in lexicon]
        if not candidates:
            continue
        m = rng.choice(candidates)
        wrong = _slip(m.group(), rng)
        if wrong not in lexicon and wrong != m.group():
            slips += 1
            found += not align(text, text[:m.start()] + wrong + text[m.end():]).changed
        for other in _neighbours(m.group(), lexicon)[:3]:
            if other.rstrip("s") == m.group().rstrip("s") or m.group() in EN_CLOSED:   # inflection, or grammar
                continue
            swaps += 1
            leaked += not align(text, text[:m.start()] + other + text[m.end():]).changed
    assert slips >= 150 and swaps >= 100, (slips, swaps)
    assert found / slips >= 0.95, (found, slips)      # floor: a slip in an inflected word can hide (acces)
    assert leaked == 0, (leaked, swaps)
