"""Prometheus exposition of the engine's counters, read at scrape time."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from backend_engine.llm_engine import TTFT_BUCKETS, LLMEngine


class EngineCollector:
    def __init__(self, engine: LLMEngine):
        self.engine = engine

    def collect(self):
        e = self.engine
        s, sched, bm = e.stats, e.scheduler, e.block_manager
        yield CounterMetricFamily("semcache_engine_prefix_cache_queries_tokens",
                                  "Prompt tokens looked up in the prefix cache", value=sched.prefix_query_tokens)
        yield CounterMetricFamily("semcache_engine_prefix_cache_hits_tokens",
                                  "Prompt tokens found in the prefix cache", value=sched.prefix_hit_tokens)
        yield CounterMetricFamily("semcache_engine_cached_prompt_tokens",
                                  "Prompt tokens of finished requests served from cached blocks",
                                  value=s.cached_prompt_tokens)
        yield CounterMetricFamily("semcache_engine_prompt_tokens", "Prompt tokens of finished requests",
                                  value=s.prompt_tokens)
        yield CounterMetricFamily("semcache_engine_generation_tokens", "Generated tokens", value=s.generation_tokens)
        yield CounterMetricFamily("semcache_engine_requests_finished", "Finished requests", value=s.requests_finished)
        yield CounterMetricFamily("semcache_engine_preemptions", "Sequences preempted for recompute",
                                  value=sched.num_preemptions)
        yield CounterMetricFamily("semcache_engine_kv_block_evictions", "Cached KV blocks evicted",
                                  value=bm.num_evictions)
        yield GaugeMetricFamily("semcache_engine_kv_blocks_used", "KV blocks referenced by live sequences",
                                value=bm.num_used)
        yield GaugeMetricFamily("semcache_engine_kv_blocks_total", "KV blocks in the pool", value=bm.num_blocks)
        yield GaugeMetricFamily("semcache_engine_kv_blocks_cached", "KV blocks holding a reusable prefix",
                                value=len(bm.cached))
        yield GaugeMetricFamily("semcache_engine_kv_cold_blocks_total", "INT8 cold KV blocks in the pool",
                                value=0 if bm.cold is None else bm.cold.count)
        yield GaugeMetricFamily("semcache_engine_kv_cold_blocks_cached", "Cached blocks held as INT8",
                                value=bm.num_cold_cached)
        yield GaugeMetricFamily("semcache_engine_kv_cold_bytes_saved",
                                "Bytes saved by holding cached blocks as INT8 instead of the model dtype",
                                value=bm.num_cold_cached * (e.hot_block_bytes - e.cold_block_bytes))
        yield CounterMetricFamily("semcache_engine_kv_block_demotions", "Cached blocks demoted to INT8",
                                  value=bm.num_demotions)
        yield CounterMetricFamily("semcache_engine_spec_draft_tokens", "Draft tokens proposed by speculative "
                                  "decoding (reference text, context or phrase store)", value=s.draft_tokens)
        yield CounterMetricFamily("semcache_engine_spec_accepted_tokens", "Draft tokens the model agreed with",
                                  value=s.accepted_draft_tokens)
        yield CounterMetricFamily("semcache_engine_spec_phrase_draft_tokens", "Draft tokens proposed from the "
                                  "phrase store (part of spec_draft_tokens)", value=s.phrase_draft_tokens)
        yield CounterMetricFamily("semcache_engine_spec_phrase_accepted_tokens", "Phrase-store draft tokens the "
                                  "model agreed with", value=s.phrase_accepted_tokens)
        yield CounterMetricFamily("semcache_engine_decode_steps", "Decode forward steps of sequences",
                                  value=s.decode_steps)
        yield CounterMetricFamily("semcache_engine_decode_tokens", "Tokens emitted by decode steps (more than the "
                                  "steps when drafts are accepted)", value=s.decode_tokens)
        yield GaugeMetricFamily("semcache_engine_spec_acceptance_rate", "Accepted / proposed draft tokens",
                                value=s.accepted_draft_tokens / s.draft_tokens if s.draft_tokens else 0.0)
        yield GaugeMetricFamily("semcache_engine_tokens_per_decode_step", "Decode tokens per forward step",
                                value=s.decode_tokens / s.decode_steps if s.decode_steps else 0.0)
        yield GaugeMetricFamily("semcache_engine_requests_running", "Running sequences", value=len(sched.running))
        yield GaugeMetricFamily("semcache_engine_requests_waiting", "Waiting sequences", value=len(sched.waiting))
        yield from _tier_metrics(e)
        cumulative, buckets = 0, []
        for bound, count in zip(list(TTFT_BUCKETS) + [float("inf")], s.ttft_bucket_counts):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else str(bound), cumulative))
        yield HistogramMetricFamily("semcache_engine_time_to_first_token_seconds", "Time to first token",
                                    buckets=buckets, sum_value=s.ttft_sum)


def _tier_metrics(e: LLMEngine):
    """The KV tiers: hits per tier, bytes loaded, loads vs recomputes, prefill time saved, start-up rates."""
    if e.tiers is None:
        return
    t, store, rates = e.tiers.counters, e.tiers.store, e.tiers.rates
    hits = CounterMetricFamily("semcache_engine_kv_tier_hits_blocks", "Blocks read from a KV tier for a load",
                               labels=["tier"])
    used = GaugeMetricFamily("semcache_engine_kv_tier_bytes", "Bytes held in a KV tier", labels=["tier"])
    capacity = GaugeMetricFamily("semcache_engine_kv_tier_capacity_bytes", "Capacity of a KV tier",
                                 labels=["tier"])
    blocks = GaugeMetricFamily("semcache_engine_kv_tier_blocks", "Blocks held in a KV tier", labels=["tier"])
    bandwidth = GaugeMetricFamily("semcache_engine_kv_tier_load_bandwidth_bytes_per_second",
                                  "Measured at start-up: read, verify, dequantize and copy into the pool",
                                  labels=["tier"])
    for name, tier in store.tiers.items():
        hits.add_metric([name], store.stats.hits[name])
        used.add_metric([name], tier.used)
        capacity.add_metric([name], tier.capacity)
        blocks.add_metric([name], tier.count)
        bandwidth.add_metric([name], 1.0 / rates.byte_s[name] if rates.byte_s.get(name) else 0.0)
    yield from (hits, used, capacity, blocks, bandwidth)
    yield CounterMetricFamily("semcache_engine_kv_tier_bytes_loaded", "Bytes read from the KV tiers",
                              value=store.stats.bytes_loaded)
    yield CounterMetricFamily("semcache_engine_kv_tier_loaded_blocks", "Blocks loaded into the pool from a tier",
                              value=t.loaded_blocks)
    yield CounterMetricFamily("semcache_engine_kv_tier_recomputed_blocks", "Blocks found in a tier but recomputed "
                              "(cheaper by the cost rule, no room, or a failed read)", value=t.recomputed_blocks)
    yield CounterMetricFamily("semcache_engine_kv_tier_prefetches", "Prefetch hints received", value=t.prefetches)
    yield CounterMetricFamily("semcache_engine_kv_tier_prefill_seconds_saved",
                              "Estimated prefill time of the loaded blocks minus the time spent loading them",
                              value=t.prefill_seconds_saved)
    yield CounterMetricFamily("semcache_engine_kv_tier_stored_blocks", "Blocks evicted from the pool into a tier",
                              value=store.stats.stored)
    yield CounterMetricFamily("semcache_engine_kv_tier_demoted_blocks", "Blocks moved from host memory to disk",
                              value=store.stats.moved_down)
    yield CounterMetricFamily("semcache_engine_kv_tier_dropped_blocks", "Blocks dropped from the bottom tier",
                              value=store.stats.dropped)
    yield CounterMetricFamily("semcache_engine_kv_tier_corrupt_files", "Disk tier files that failed their "
                              "checksum: skipped, deleted, never served", value=store.num_corrupt)
    yield GaugeMetricFamily("semcache_engine_prefill_tokens_per_second", "Measured at start-up (linear part)",
                            value=1.0 / rates.token_s)
    yield GaugeMetricFamily("semcache_engine_prefill_attention_seconds_per_token_pair",
                            "Measured at start-up: attention cost per (new token, visible token)", value=rates.attn_s)


def render(engine: LLMEngine) -> bytes:
    registry = CollectorRegistry(auto_describe=True)
    registry.register(EngineCollector(engine))
    return generate_latest(registry)
