"""One request's token state inside the engine."""
from __future__ import annotations

import itertools
import random
import time
from enum import Enum, auto

from backend_engine.sampling import SamplingParams
from backend_engine.speculative import SpecState

_ids = itertools.count()


class SequenceStatus(Enum):
    WAITING = auto()
    RUNNING = auto()
    FINISHED = auto()


class Sequence:
    def __init__(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                 cache_salt: str = "", session_id: str | None = None, num_protected_tokens: int = 0):
        self.seq_id = next(_ids)
        self.request_id = request_id
        self.token_ids: list[int] = list(prompt_token_ids)
        self.num_prompt_tokens = len(prompt_token_ids)
        self.params = params
        self.cache_salt = cache_salt
        self.session_id = session_id
        self.num_protected_tokens = num_protected_tokens   # leading tokens (system prompt) kept in full precision
        self.status = SequenceStatus.WAITING
        self.block_table: list[int] = []
        self.block_hashes: list[int] = []       # chained hashes of the full blocks computed so far
        self.num_computed_tokens = 0            # tokens whose K/V are in the cache
        self.num_cached_tokens = 0              # prompt tokens served from the prefix cache
        self.finish_reason: str | None = None
        self.arrival_time = time.monotonic()
        self.first_token_time: float | None = None
        # the sampler's noise key: the client's seed makes the text repeatable; without one, fresh per request
        self.noise_seed = params.seed if params.seed is not None else random.getrandbits(64)
        self.spec = SpecState()                 # speculative decoding (drafts from a reference text, the context)
        self.num_draft = 0                      # draft tokens at the end of token_ids during a step
        # KV tiers: the job loading this sequence's prefix from host/disk (not scheduled until it is done),
        # whether the tiers were searched for its prefix, and pool blocks held for it until admission
        self.loading = None
        self.tier_checked = False
        self.pinned: list[int] = []
        # detokenization state
        self.output_text = ""
        self.num_sent_chars = 0

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens:]

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def num_uncomputed_tokens(self) -> int:
        return len(self.token_ids) - self.num_computed_tokens

    @property
    def is_finished(self) -> bool:
        return self.status == SequenceStatus.FINISHED
