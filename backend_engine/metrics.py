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
                                  "decoding (reference text or context)", value=s.draft_tokens)
        yield CounterMetricFamily("semcache_engine_spec_accepted_tokens", "Draft tokens the model agreed with",
                                  value=s.accepted_draft_tokens)
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
        cumulative, buckets = 0, []
        for bound, count in zip(list(TTFT_BUCKETS) + [float("inf")], s.ttft_bucket_counts):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else str(bound), cumulative))
        yield HistogramMetricFamily("semcache_engine_time_to_first_token_seconds", "Time to first token",
                                    buckets=buckets, sum_value=s.ttft_sum)


def render(engine: LLMEngine) -> bytes:
    registry = CollectorRegistry(auto_describe=True)
    registry.register(EngineCollector(engine))
    return generate_latest(registry)
