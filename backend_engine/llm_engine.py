"""The engine: one step is schedule() -> run() -> postprocess()."""
from __future__ import annotations

import bisect
import hashlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import torch

from backend_engine.block_manager import BlockManager
from backend_engine.config import EngineConfig
from backend_engine.kv_tiers import TierStore, default_disk_bytes, default_host_bytes
from backend_engine.dtype_choice import choose_dtype
from backend_engine.loader import LoadedModel, load_model
from backend_engine.model_runner import ModelRunner, kv_bytes_per_block
from backend_engine.sampling import SamplingParams, sample
from backend_engine.scheduler import Scheduler
from backend_engine.sequence import Sequence
from backend_engine.speculative import PassCost, SpecState, verify
from backend_engine.tier_cost import Rates, calibrate_loads, calibrate_prefill
from backend_engine.tier_manager import TierManager
from kernels import ColdBlocks

log = logging.getLogger("semcache.engine")

TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class PromptTooLong(ValueError):
    pass


@dataclass
class RequestOutput:
    request_id: str
    text_delta: str
    new_token_ids: list[int]
    finished: bool
    finish_reason: str | None
    num_prompt_tokens: int
    num_cached_tokens: int
    num_output_tokens: int
    num_draft_tokens: int = 0             # speculation: proposed and accepted draft tokens so far
    num_accepted_tokens: int = 0


@dataclass
class EngineStats:
    prompt_tokens: int = 0
    generation_tokens: int = 0
    cached_prompt_tokens: int = 0
    requests_finished: int = 0
    ttft_bucket_counts: list[int] = field(default_factory=lambda: [0] * (len(TTFT_BUCKETS) + 1))
    ttft_sum: float = 0.0
    ttft_count: int = 0
    # decode steps of sequences (one forward pass each) and the tokens they emitted; speculation's drafts
    decode_steps: int = 0
    decode_tokens: int = 0
    draft_tokens: int = 0
    accepted_draft_tokens: int = 0
    phrase_draft_tokens: int = 0          # the share of both that came from the phrase store
    phrase_accepted_tokens: int = 0

    def observe_ttft(self, seconds: float) -> None:
        self.ttft_bucket_counts[bisect.bisect_left(TTFT_BUCKETS, seconds)] += 1
        self.ttft_sum += seconds
        self.ttft_count += 1


LATE_DRAFT_KEYS = 1024              # keys (and early drafts) remembered; far more than requests in flight


def _remember(table: OrderedDict, key: str, value) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > LATE_DRAFT_KEYS:
        table.popitem(last=False)


class LLMEngine:
    def __init__(self, config: EngineConfig, loaded: LoadedModel | None = None):
        self.config = config
        self._own_threads()                     # the load measures passes (matmul_choice) as steps will run them
        loaded = loaded or load_model(config.model, config.max_model_len,
                                      Path(config.data_dir) if config.data_dir else None,
                                      models_dir=Path(config.models_dir) if config.models_dir else None)
        self.model_name = loaded.name
        self.tokenizer = loaded.tokenizer
        self.model_config = loaded.config
        model = loaded.model
        if config.dtype != "auto" or next(model.parameters()).dtype == torch.float32:
            model.to_dtype(choose_dtype(config.dtype))
        dtype = next(model.parameters()).dtype
        cfg = loaded.config
        self.hot_block_bytes = kv_bytes_per_block(model, config.block_size, dtype)
        self.cold_block_bytes = ColdBlocks.bytes_per_block(config.block_size, cfg.num_kv_heads, cfg.head_dim,
                                                           cfg.num_layers)
        cold = config.kv_cold_dtype == "int8"
        if config.num_blocks:
            num_blocks = config.num_blocks
            num_cold = (config.num_cold_blocks or num_blocks) if cold else 0
        else:
            # with a cold pool, half the bytes go to each pool
            budget = config.kv_cache_memory // 2 if cold else config.kv_cache_memory
            num_blocks = max(budget // self.hot_block_bytes, 1)
            num_cold = (config.num_cold_blocks or max(budget // self.cold_block_bytes, 1)) if cold else 0
        self.block_manager = BlockManager(num_blocks, config.block_size, config.eviction, num_cold_blocks=num_cold)
        self.scheduler = Scheduler(config, self.block_manager)
        self.runner = ModelRunner(model, config.block_size, num_blocks, dtype=dtype, num_cold_blocks=num_cold,
                                  dense_rows=config.dense_rows)
        self.capacity_tokens = min(config.max_model_len, num_blocks * config.block_size)
        window = loaded.config.sliding_window
        if window and window < self.capacity_tokens:
            # attention is full, not windowed: within the window the two are the same
            log.warning("model has a %d-token sliding window; context limited to it", window)
            self.capacity_tokens = window
        self.stats = EngineStats()
        self.phrases = loaded.phrases if config.phrase_drafts else None
        self.pass_cost = PassCost()
        self.tiers = self._build_tiers(config)
        self.sequences: dict[str, Sequence] = {}
        # late drafts (attach_draft): key -> request id, and drafts that came before their request
        self._draft_keys: OrderedDict[str, str] = OrderedDict()
        self._early_drafts: OrderedDict[str, list[int]] = OrderedDict()
        eos = set(loaded.config.eos_token_ids)
        if getattr(self.tokenizer, "eos_token_id", None) is not None:
            eos.add(self.tokenizer.eos_token_id)
        self.eos_token_ids = eos
        log.info("engine ready: model=%s dtype=%s blocks=%d x %d tokens (+%d int8 cold), max_model_len=%d, "
                 "eviction=%s", self.model_name, str(dtype).removeprefix("torch."), num_blocks, config.block_size,
                 num_cold, config.max_model_len, config.eviction)

    def _build_tiers(self, config: EngineConfig) -> TierManager | None:
        """Host and disk tiers under the pool, and the start-up rates for the recompute-or-load rule."""
        if not config.enable_prefix_caching:
            return None
        host = default_host_bytes() if config.kv_host_tier is None else config.kv_host_tier
        # block hashes cover tokens and salt, not the model: each model (and block shape) gets its own folder
        disk_dir = Path(config.data_dir) / "kv_tier" / self._kv_identity() if config.data_dir else None
        disk = 0
        if disk_dir is not None:
            disk = default_disk_bytes(disk_dir) if config.kv_disk_tier is None else config.kv_disk_tier
        if not host and not disk:
            return None
        head_dim = self.model_config.head_dim
        host_dtype, disk_dtype = config.kv_host_dtype, config.kv_disk_dtype
        if head_dim % 32 and "int4" in (host_dtype, disk_dtype):
            log.warning("head_dim %d is not a multiple of the INT4 group (32): int8 instead", head_dim)
            host_dtype, disk_dtype = (d if d != "int4" else "int8" for d in (host_dtype, disk_dtype))
        store = TierStore(host, host_dtype, disk_dir, disk, disk_dtype, policy=config.eviction)
        rates = Rates()
        calibrate_prefill(self, rates)
        calibrate_loads(self, store, rates)
        log.info("kv tiers: host %d MiB (%s), disk %d MiB (%s, %d blocks found), policy=%s; prefill %.0f tok/s, "
                 "load %s", host >> 20, host_dtype, disk >> 20, disk_dtype, len(store.entries),
                 config.kv_tier_policy, 1 / rates.token_s,
                 {t: f"{1 / b / 2**20:.0f} MiB/s" for t, b in rates.byte_s.items() if t in store.tiers})
        return TierManager(store, self.block_manager, self.runner, rates, config.kv_tier_policy,
                           config.max_num_batched_tokens)

    def _kv_identity(self) -> str:
        """Names what a block's K/V depend on besides its tokens: the weights (a fingerprint) and the shapes."""
        cfg, model = self.model_config, self.runner.model
        h = hashlib.blake2b(digest_size=8)
        h.update(f"{self.model_name}|{cfg.num_layers}|{cfg.num_kv_heads}|{cfg.head_dim}|{self.config.block_size}|"
                 f"{next(model.parameters()).dtype}".encode())
        for _, param in list(model.named_parameters())[:3] + list(model.named_parameters())[-2:]:
            h.update(param.detach().flatten()[:4096].float().cpu().numpy().tobytes())
        return h.hexdigest()

    def prefetch(self, prompt_token_ids: list[int], cache_salt: str = "") -> int:
        """Start bringing a prompt's prefix up from the KV tiers; returns the blocks requested."""
        if self.tiers is None or not prompt_token_ids:
            return 0
        return self.tiers.prefetch(list(prompt_token_ids), cache_salt)

    def close(self) -> None:
        if self.tiers is not None:
            self.tiers.close()

    # ---- requests -------------------------------------------------------
    def apply_chat_template(self, messages: list[dict]) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        return self.tokenizer.encode(text, add_special_tokens=False)

    def check_prompt(self, num_prompt_tokens: int) -> None:
        if num_prompt_tokens == 0:
            raise PromptTooLong("the prompt is empty")
        if num_prompt_tokens >= self.capacity_tokens:
            raise PromptTooLong(
                f"the prompt has {num_prompt_tokens} tokens; this model's context window is "
                f"{self.capacity_tokens} tokens, including at least one generated token")

    def protected_prefix_len(self, messages: list[dict], prompt_ids: list[int]) -> int:
        """Tokens of the leading system messages: blocks there stay in full precision."""
        system = []
        for message in messages:
            if message["role"] != "system":
                break
            system.append(message)
        if not system:
            return 0
        try:
            ids = self.tokenizer.encode(self.tokenizer.apply_chat_template(system, add_generation_prompt=False))
        except ValueError:
            return 0
        return len(ids) if prompt_ids[:len(ids)] == ids else 0

    def add_request(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                    cache_salt: str = "", session_id: str | None = None, protected_tokens: int = 0) -> Sequence:
        self.check_prompt(len(prompt_token_ids))
        if request_id in self.sequences:
            raise ValueError(f"duplicate request id {request_id}")
        params.max_tokens = min(params.max_tokens, self.capacity_tokens - len(prompt_token_ids))
        salt = cache_salt if self.config.enable_prefix_caching else f"{cache_salt}\0{request_id}"
        seq = Sequence(request_id, prompt_token_ids, params, salt, session_id, protected_tokens)
        if params.draft_text and self.config.speculative in ("auto", "draft"):
            seq.spec = SpecState(self.tokenizer.encode(params.draft_text, add_special_tokens=False))
        self.sequences[request_id] = seq
        if params.draft_key:
            _remember(self._draft_keys, params.draft_key, request_id)
            early = self._early_drafts.pop(params.draft_key, None)
            if early is not None:
                self._use_draft(seq, early)
        self.scheduler.add(seq)
        return seq

    def attach_draft(self, key: str, draft_ids: list[int]) -> bool:
        """A reference text for a request already running under `semcache.draft_key` = key: the gateway
        forwards a request while it decides, and only then knows the PARTIAL's matched answer. From the next
        step the sequence proposes from it (output unchanged: drafts are verified). A draft that comes before
        its request waits for it (a few, the oldest dropped). Returns whether a running request took it."""
        seq = self.sequences.get(self._draft_keys.get(key, ""))
        if seq is None:
            _remember(self._early_drafts, key, draft_ids)
            return False
        return self._use_draft(seq, draft_ids)

    def _use_draft(self, seq: Sequence, draft_ids: list[int]) -> bool:
        if seq.is_finished or self.config.speculative not in ("auto", "draft") or seq.params.draft_text:
            return False
        seq.spec.draft_ids = draft_ids
        seq.spec.cursor = 0
        return True

    def abort(self, request_id: str) -> None:
        seq = self.sequences.pop(request_id, None)
        if seq is not None and not seq.is_finished:
            self.scheduler.finish(seq, "abort")

    def has_work(self) -> bool:
        return self.scheduler.has_work()

    # ---- one step -------------------------------------------------------
    def step(self) -> list[RequestOutput]:
        self._own_threads()
        if self.tiers is not None:
            self.tiers.before_schedule(self.scheduler.waiting)
        proposing = self._propose()
        scheduled = self.scheduler.schedule()
        self._fit_drafts(proposing, scheduled)
        self.runner.apply_demotions(self.block_manager.take_demotions())
        if not scheduled:
            if self.tiers is not None:
                self.tiers.wait_for_loads(0.02)      # only loads are left to wait for
            return []
        started = time.perf_counter()
        logits = self.runner.run(scheduled)
        elapsed = time.perf_counter() - started
        if self.tiers is not None:
            self.tiers.observe_step(scheduled, elapsed)
        if len(scheduled) == 1:                  # one decoding sequence: what a pass over its drafts costs
            seq, num = scheduled[0]
            if seq.num_output_tokens and num == 1 + seq.num_draft:
                self.pass_cost.observe(num, elapsed)
        return self.postprocess(scheduled, logits)

    def _own_threads(self) -> None:
        threads = self.config.threads
        if threads and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    # ---- speculation ----------------------------------------------------
    def _propose(self) -> list[Sequence]:
        """Append draft tokens to decoding sequences (verified in this step's forward pass)."""
        mode = self.config.speculative
        if mode == "off":
            return []
        proposing = []
        # PassCost is what drafts cost a sequence decoding alone, so it rules only then: with others in the
        # step (another decode, a prefill chunk) the pass takes the extend path anyway and drafts cost less
        alone = len(self.scheduler.running) == 1 and not self.scheduler.waiting
        cost = self.pass_cost if alone else None
        for seq in self.scheduler.running:
            if seq.num_uncomputed_tokens != 1 or seq.num_output_tokens == 0:
                continue
            params = seq.params
            # room: the draft and the model's own token stay within max_tokens and the context
            limit = min(params.max_tokens - seq.num_output_tokens, self.capacity_tokens - len(seq)) - 1
            if params.forced_token_ids:
                limit = min(limit, len(params.forced_token_ids) - seq.num_output_tokens - 1)
            draft = seq.spec.propose(seq.token_ids, mode, limit, self.phrases, cost)
            if draft:
                seq.token_ids.extend(draft)
                seq.num_draft = len(draft)
                proposing.append(seq)
        return proposing

    @staticmethod
    def _fit_drafts(proposing: list[Sequence], scheduled: list[tuple[Sequence, int]]) -> None:
        """Drafts of a sequence the step does not compute in full (budget, preemption) are taken back."""
        steps = {seq.seq_id: num for seq, num in scheduled}
        for seq in proposing:
            keep = max(0, min(seq.num_draft, steps.get(seq.seq_id, 0) - 1)) if seq.num_computed_tokens else 0
            if keep < seq.num_draft:
                del seq.token_ids[len(seq.token_ids) - (seq.num_draft - keep):]
                seq.num_draft = keep

    def _take_draft(self, seq: Sequence) -> list[int]:
        draft = seq.token_ids[len(seq.token_ids) - seq.num_draft:] if seq.num_draft else []
        if draft:
            del seq.token_ids[len(seq.token_ids) - seq.num_draft:]
        seq.num_draft = 0
        return draft

    def postprocess(self, scheduled: list[tuple[Sequence, int]], logits: dict[int, torch.Tensor]) -> list[RequestOutput]:
        outputs = []
        now = time.monotonic()
        for seq, num in scheduled:
            if seq.num_draft:
                outputs.append(self._postprocess_draft(seq, num, logits[seq.seq_id], now))
                continue
            seq.num_computed_tokens += num
            self.block_manager.commit_full_blocks(seq)
            row = logits.get(seq.seq_id)
            if row is None:
                continue
            if seq.num_output_tokens:
                self.stats.decode_steps += 1
                self.stats.decode_tokens += 1
            token = sample(row, seq.params, seq.noise_seed, seq.num_output_tokens)
            forced = seq.params.forced_token_ids
            if forced:                        # replay: the step's cost is real, its token is given
                token = forced[seq.num_output_tokens]
            seq.token_ids.append(token)
            if seq.first_token_time is None:
                seq.first_token_time = now
                self.stats.observe_ttft(now - seq.arrival_time)
            reason = self._finish_reason(seq, token)
            delta = self._detokenize(seq, reason is not None)
            if seq.finish_reason == "stop":      # a stop string matched
                reason = "stop"
            if reason is not None:
                self._finish(seq, reason)
            outputs.append(self._output(seq, delta, [token], reason))
        return outputs

    def _output(self, seq: Sequence, delta: str, tokens: list[int], reason: str | None) -> RequestOutput:
        return RequestOutput(seq.request_id, delta, tokens, reason is not None, reason, seq.num_prompt_tokens,
                             seq.num_cached_tokens, seq.num_output_tokens, seq.spec.proposed, seq.spec.accepted)

    def _postprocess_draft(self, seq: Sequence, num: int, rows: torch.Tensor, now: float) -> RequestOutput:
        """Verify a step that computed the last token and `num - 1` drafts: keep the agreeing prefix and the
        model's own next token, give back the slots of the rest."""
        base = len(seq.token_ids) - seq.num_draft          # real tokens before this step's drafts
        draft = self._take_draft(seq)
        forced = seq.params.forced_token_ids
        tokens = verify(rows, draft, seq.params, seq.noise_seed, seq.num_output_tokens,
                        forced[seq.num_output_tokens:] if forced else None)
        accepted = 0                    # the draft tokens kept: the leading tokens that agree with it
        while accepted < min(len(tokens), len(draft)) and tokens[accepted] == draft[accepted]:
            accepted += 1
        seq.spec.update(len(draft), accepted)
        self.stats.draft_tokens += len(draft)
        self.stats.accepted_draft_tokens += accepted
        if seq.spec.from_store:
            self.stats.phrase_draft_tokens += len(draft)
            self.stats.phrase_accepted_tokens += accepted
        self.stats.decode_steps += 1
        emitted, delta, reason = [], "", None
        for token in tokens:
            seq.token_ids.append(token)
            emitted.append(token)
            reason = self._finish_reason(seq, token)
            delta += self._detokenize(seq, reason is not None)
            if seq.finish_reason == "stop":
                reason = "stop"
            if reason is not None:
                break
        self.stats.decode_tokens += len(emitted)
        # K/V were computed for the last token and the drafts: they hold for it and the accepted drafts
        seq.num_computed_tokens = min(base + accepted, len(seq.token_ids))
        self.block_manager.commit_full_blocks(seq)
        if reason is not None:
            self._finish(seq, reason)
        else:
            self.block_manager.trim(seq, seq.num_computed_tokens)
        return self._output(seq, delta, emitted, reason)

    def _finish_reason(self, seq: Sequence, token: int) -> str | None:
        params = seq.params
        if params.forced_token_ids and seq.num_output_tokens >= len(params.forced_token_ids):
            return "stop" if seq.num_output_tokens <= params.max_tokens else "length"
        if not params.ignore_eos and token in self.eos_token_ids:
            return "stop"
        if token in params.stop_token_ids:
            return "stop"
        if seq.num_output_tokens >= params.max_tokens or len(seq) >= self.capacity_tokens:
            return "length"
        return None

    def _detokenize(self, seq: Sequence, final: bool) -> str:
        ids = seq.output_token_ids
        if ids and (ids[-1] in self.eos_token_ids or ids[-1] in seq.params.stop_token_ids):
            ids = ids[:-1]
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        if not final and text.endswith("\ufffd"):
            return ""                           # an incomplete UTF-8 sequence: wait for the next token
        hold = 0
        for stop in seq.params.stop:
            idx = text.find(stop, max(seq.num_sent_chars - len(stop), 0))
            if idx != -1:
                text = text[:idx]
                seq.finish_reason = "stop"
                final = True
                break
            if not final:
                # do not stream what may turn out to be the start of a stop string
                for k in range(min(len(stop) - 1, len(text)), 0, -1):
                    if text.endswith(stop[:k]):
                        hold = max(hold, k)
                        break
        visible = text[:len(text) - hold] if hold else text
        delta = visible[seq.num_sent_chars:]
        seq.num_sent_chars = max(seq.num_sent_chars, len(visible))
        seq.output_text = text
        return delta

    def _finish(self, seq: Sequence, reason: str) -> None:
        self.scheduler.finish(seq, reason)
        self.sequences.pop(seq.request_id, None)
        self.stats.prompt_tokens += seq.num_prompt_tokens
        self.stats.generation_tokens += seq.num_output_tokens
        self.stats.cached_prompt_tokens += seq.num_cached_tokens
        self.stats.requests_finished += 1

    # ---- offline use (tests, benchmarks) --------------------------------
    def generate(self, prompts: list[list[int]], params: SamplingParams | list[SamplingParams],
                 cache_salt: str = "", protected_tokens: int = 0) -> list[dict]:
        """Run prompts to completion; returns per prompt {token_ids, text, cached_tokens, finish_reason}."""
        if isinstance(params, SamplingParams):
            params = [SamplingParams(**vars(params)) for _ in prompts]
        ids = [f"offline-{id(self)}-{time.monotonic_ns()}-{i}" for i in range(len(prompts))]
        seqs = [self.add_request(rid, p, sp, cache_salt, protected_tokens=protected_tokens)
                for rid, p, sp in zip(ids, prompts, params)]
        while any(not s.is_finished for s in seqs):
            self.step()
        return [{"token_ids": s.output_token_ids, "text": s.output_text, "cached_tokens": s.num_cached_tokens,
                 "finish_reason": s.finish_reason, "prompt_tokens": s.num_prompt_tokens} for s in seqs]
