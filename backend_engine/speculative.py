"""Speculative decoding from text the engine already has, verified by the model, so the output is unchanged.

Draft sources: a reference text sent with the request (`{"semcache": {"draft": ...}}`: on a PARTIAL the
gateway sends the matched entry's answer, which a constraint change or a rewrite mostly keeps), and the
context itself (prompt lookup: a rewrite or a code edit repeats long runs of its input). A proposal is the
continuation, in the source, of the last n tokens (n = 4 down to 1 in the reference, down to 2 in the
context, where one token matches too often); the longer match of the two wins, the reference on a tie.
The model then computes the last token and the k proposed
ones in one forward pass through the extend path; the longest agreeing prefix is kept, plus the model's own
next token, and the KV slots of rejected tokens are given back.

Agreement is exact for greedy decoding. With sampling, a deterministic draft token x is kept with
probability p(x), and otherwise a token is drawn from p with x removed (the residual (p - q)+ for a draft
distribution q that puts all its mass on x): the output distribution is that of plain sampling. Under a
forced output (replay) a draft token is kept only when it is the forced token.

k adapts per sequence: it doubles while drafts are fully accepted and halves after a rejection, but never
below K_MIN. No proposal, no cost: a sequence whose last tokens occur in no source runs a plain step.

What a draft is worth depends on the machine: a pass over 5 tokens costs 1.02 plain steps on a CPU with
AMX and 1.6 on one with AVX2 only (docs/benchmarks.md). So the engine measures its own passes (PassCost) and
each sequence keeps, per source, how often its drafts were accepted (a geometric acceptance rate over
recent steps). A proposal is cut to the length j that maximises the expected tokens per step,
(1 - a^(j+1)) / (1 - a), over the pass's relative cost; when no length beats a plain step nothing is
proposed, except every EXPLORE-th such step, so a draft the answer rejoins is picked up again.

A third source comes last: a phrase store (phrase_store.py) of other answers proposes up to STORE_K tokens
where neither the reference nor the context has a continuation. Its guesses are shorter and less sure, so
they neither move the reference cursor nor change k.
"""
from __future__ import annotations

import torch

from backend_engine.sampling import SamplingParams, sample

MAX_NGRAM = 4
K_MAX = 16
K_MIN = 4                        # k after rejections and partial matches, at least
STORE_K = 4                      # tokens proposed from the phrase store
EXPLORE = 8                      # a sequence whose drafts do not pay proposes anyway every EXPLORE-th step
DECAY = 0.8                      # weight of the older acceptance evidence per verified step
SOURCES = ("reference", "context", "store")


class PassCost:
    """Seconds of a forward pass over n tokens of one decoding sequence, measured online; `relative(n)` =
    cost(n) / cost(1). Each count keeps its last WINDOW samples and costs their lower quartile: a pass the
    OS descheduled only runs long, and one such sample must not price drafts out for the rest of an answer,
    while a lasting change of speed moves the quartile within a few samples. A count never measured costs
    what the nearest measured count below it does (optimistic, so it gets proposed and measured)."""

    WINDOW = 16

    def __init__(self, max_tokens: int = K_MAX + 1):
        self.samples: list[list[float]] = [[] for _ in range(max_tokens + 1)]
        self.seconds = [0.0] * (max_tokens + 1)

    def observe(self, n: int, seconds: float) -> None:
        if 1 <= n < len(self.seconds) and seconds > 0:
            kept = self.samples[n]
            kept.append(seconds)
            if len(kept) > self.WINDOW:
                del kept[0]
            self.seconds[n] = sorted(kept)[len(kept) // 4]

    def relative(self, n: int) -> float:
        one = self.seconds[1]
        if one == 0.0 or n <= 1:
            return 1.0
        n = min(n, len(self.seconds) - 1)
        below = next(i for i in range(n, 0, -1) if self.seconds[i] or i == 1)
        above = next((i for i in range(n, len(self.seconds)) if self.seconds[i]), None)
        cost = self.seconds[below]
        if above is not None and above != below:    # between two measured counts: interpolate
            cost += (self.seconds[above] - cost) * (n - below) / (above - below)
        return max(1.0, cost / one)


def worth(length: int, rate: float, cost: PassCost) -> int:
    """The draft length (0..length) with the most expected tokens per unit of pass cost; 0: a plain step."""
    best, best_value = 0, 1.0
    expected, p = 1.0, 1.0
    for j in range(1, length + 1):
        p *= rate
        expected += p
        value = expected / cost.relative(j + 1)
        if value > best_value:
            best, best_value = j, value
    return best
MODES = ("auto", "ngram", "draft", "off")


def find_continuation(source: list[int], suffix: list[int], k: int, min_n: int, hint: int = 0,
                      end: int | None = None) -> tuple[list[int], int, int]:
    """The k tokens that follow the longest n-gram (MAX_NGRAM >= n >= min_n) ending `suffix` that occurs in
    source[:end]; among its occurrences the first whose continuation starts at or after `hint`, else the
    last. Returns (proposal, index in source after the proposal, n); ([], hint, 0) when nothing matches."""
    end = len(source) if end is None else end
    for n in range(min(MAX_NGRAM, len(suffix)), min_n - 1, -1):
        gram = suffix[-n:]
        first = gram[0]
        best = -1
        for i in range(0, end - n):            # a continuation needs at least one token after the gram
            if source[i] == first and source[i:i + n] == gram:
                best = i + n
                if best >= hint:
                    break
        if best >= 0:
            proposal = source[best:min(best + k, end)]
            if proposal:
                return proposal, best + len(proposal), n
    return [], hint, 0


class SpecState:
    """One sequence's speculation: its reference tokens, k, where it is in the reference, and counters."""

    __slots__ = ("draft_ids", "k", "cursor", "proposed", "accepted", "steps", "source", "hits", "misses",
                 "idle")

    def __init__(self, draft_ids: list[int] | None = None):
        self.draft_ids = draft_ids or []
        self.k = K_MAX
        self.cursor = 0                         # where in the reference the last accepted proposal ended
        self.proposed = 0
        self.accepted = 0
        self.steps = 0                          # forward steps that proposed
        self.source = ""                        # where the pending proposal came from
        # per source: decayed counts of accepted draft tokens and of rejections (prior: a rate of 1/2)
        self.hits = dict.fromkeys(SOURCES, 1.0)
        self.misses = dict.fromkeys(SOURCES, 1.0)
        self.idle = 0                           # steps in a row whose proposal did not pay

    @property
    def from_store(self) -> bool:
        return self.source == "store"

    def rate(self, source: str) -> float:
        return self.hits[source] / (self.hits[source] + self.misses[source])

    def propose(self, token_ids: list[int], mode: str, limit: int, store=None, cost: PassCost | None = None
                ) -> list[int]:
        """Up to min(k, limit) draft tokens to follow `token_ids`; `store`: a PhraseStore, or None; `cost`:
        the engine's pass costs (None: propose whatever the sources give)."""
        proposal = self._find(token_ids, mode, limit, store)
        if not proposal or cost is None:
            return proposal
        keep = worth(len(proposal), self.rate(self.source), cost)
        if keep == 0:
            self.idle += 1
            if self.idle < EXPLORE:
                self.source = ""
                return []
            keep = len(proposal)
        self.idle = 0
        return proposal[:keep]

    def _find(self, token_ids: list[int], mode: str, limit: int, store) -> list[int]:
        self.source = ""
        if mode == "off" or limit <= 0:
            return []
        k = min(self.k, limit)
        suffix = token_ids[-MAX_NGRAM:]
        proposal, after, n = [], self.cursor, 0
        if mode in ("auto", "draft") and self.draft_ids:
            proposal, after, n = find_continuation(self.draft_ids, suffix, k, 1, self.cursor)
        if mode in ("auto", "ngram") and n < MAX_NGRAM:
            # the context before the suffix itself (prompt and generated text): prompt lookup, taken over
            # the reference when its gram is longer (the reference's match may be a lone common token)
            context, _, _ = find_continuation(token_ids, suffix, k, max(2, n + 1), end=len(token_ids) - 1)
            if context:
                self.source = "context"
                return context
        if proposal:
            self.cursor = after - len(proposal)
            self.source = "reference"
            return proposal
        if store is not None and mode in ("auto", "ngram"):
            proposal = store.propose(suffix, min(STORE_K, limit))
            self.source = "store" if proposal else ""
        return proposal

    def update(self, proposed: int, accepted: int) -> None:
        self.proposed += proposed
        self.accepted += accepted
        self.steps += 1
        if self.source:
            self.hits[self.source] = DECAY * self.hits[self.source] + accepted
            self.misses[self.source] = DECAY * self.misses[self.source] + (accepted < proposed)
        if self.from_store:
            return
        self.cursor += accepted
        if accepted == proposed:
            self.k = min(K_MAX, self.k * 2)
        elif accepted == 0:
            self.k = max(K_MIN, self.k // 2)
        else:
            self.k = min(K_MAX, max(K_MIN, accepted * 2))


def verify(rows: torch.Tensor, draft: list[int], params: SamplingParams, seed: int, position: int,
           forced: list[int] | None = None) -> list[int]:
    """The tokens to emit: the accepted prefix of `draft` and one token of the model's own.

    rows[i] are the logits after the sequence extended by draft[:i]; len(rows) == len(draft) + 1; `position`
    is the output position of rows[0]. Each position draws exactly the token plain decoding would draw there
    (greedy, or sampled with position-keyed noise), so the output does not depend on the draft. `forced`:
    the tokens a replay must emit from here on (their count bounds the result)."""
    out: list[int] = []
    for i in range(len(draft) + 1):
        proposed = draft[i] if i < len(draft) else None
        token = forced[i] if forced is not None else sample(rows[i], params, seed, position + i)
        out.append(token)
        if token != proposed or (forced is not None and len(out) == len(forced)):
            break
    return out
