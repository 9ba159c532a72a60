"""Gateway configuration: SEMCACHE_* environment variables, then an optional semcache.toml.

Environment variables win over the file; the file's keys are the field names
below (without the SEMCACHE_ prefix), e.g. `backend_url = "http://..."`.
"""
from __future__ import annotations

import hashlib

import json
import math
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import (BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict,
                               TomlConfigSettingsSource)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SEMCACHE_", extra="ignore")

    # upstream
    backend_url: str = Field("embedded", description="'embedded' (bundled engine in-process) or an OpenAI-compatible base URL")
    backend_model: str = Field("smollm2", description="model of the embedded engine: smollm2, demo, bench, a folder or a .gguf")
    backend_api_key: SecretStr | None = Field(None, description="bearer key sent to the upstream")
    backend_internal_token: SecretStr | None = Field(
        None, description="sent as X-Semcache-Internal with requests of trusted callers (replay) so that "
                          "`semcache backend --internal-token` accepts internal fields; the embedded engine "
                          "gets a random one per process")
    backend_auth_passthrough: bool = Field(False, description="forward the client's Authorization header upstream "
                                                              "(only when SEMCACHE_API_KEYS is not set)")
    backends: str = Field("", description="several OpenAI-compatible backends, comma-separated, each "
                                          "`url` or `url=weight`; wins over backend_url (see docs/operations.md)")
    backend_routing: Literal["affinity", "round_robin"] = Field(
        "affinity", description="affinity: a session sticks to one replica (rendezvous hashing on tenant and "
                                "session, bounded load); round_robin: every request to the next replica")
    backend_load_factor: float = Field(0.25, ge=0, description="a replica takes a request while its in-flight "
                                       "count stays within (1 + this) times its share of all in flight")
    backend_health_path: str = Field("/v1/models", description="active health check of each replica (GET, 200)")
    backend_health_interval_s: float = Field(5.0, gt=0, description="seconds between active checks of a replica")
    backend_eject_failures: int = Field(3, ge=1, description="failures in a row (5xx, timeouts, broken streams, "
                                        "failed checks) that eject a replica; a refused connection ejects at once")
    backend_eject_s: float = Field(5.0, gt=0, description="first back-off of an ejected replica, doubled at each "
                                   "failed check (up to 120 s); a good check brings it back")
    backend_draft: Literal["auto", "on", "off"] = Field(
        "auto", description="on a PARTIAL, send the matched entry's answer as the `semcache.draft` extension "
                            "(speculative decoding in the bundled engine; lossless): auto: only when the "
                            "backend is the bundled engine")
    backend_prefetch: Literal["auto", "on", "off"] = Field(
        "auto", description="as a request arrives, before the decision, send the bundled engine a KV prefetch "
                            "hint (POST /v1/semcache/prefetch with the messages) so that blocks in its host or "
                            "disk tier load while the cache decides: auto: only when the backend is the bundled "
                            "engine")
    backend_early_forward: Literal["auto", "on", "off"] = Field(
        "auto", description="send a request to the backend as it arrives, while the cache decides: a HIT "
                            "cancels it, a PARTIAL's draft follows it to the bundled engine (POST "
                            "/v1/semcache/draft), and a forwarded request no longer waits for the decision; "
                            "auto: only when the backend is the bundled engine (another backend may bill the "
                            "requests a HIT cancels); on: any backend, e.g. a self-hosted vLLM or SGLang")
    connect_timeout_s: float = 5.0
    backend_timeout_s: float = Field(300.0, description="longest wait for the upstream's next byte")
    max_connections: int = 256
    # embedded engine
    engine_kv_cache_memory: str = "512MiB"
    engine_max_model_len: int = 2048
    engine_prefix_caching: bool = Field(True, description="the embedded engine reuses cached KV blocks of prefixes")
    engine_speculative: Literal["auto", "ngram", "draft", "off"] = Field(
        "auto", description="the embedded engine's speculative decoding (lossless): drafts from the PARTIAL's "
                            "reference answer (draft), the context and the model's phrase store (ngram), "
                            "all (auto), or off")
    engine_dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "auto", description="what the embedded engine computes in: auto = bfloat16 on a CPU with native bf16 "
                            "matmuls that keep speculation lossless, float32 elsewhere")
    engine_threads: int = Field(0, ge=0, description="torch threads of the embedded engine's step loop; 0: every "
                                                     "core but one where the engine runs in the gateway's "
                                                     "process beside the semantic cache's models (that core is "
                                                     "theirs: encoder_threads then defaults to the cores left), "
                                                     "every core otherwise")
    # requests
    max_body_bytes: int = 4 * 2**20
    max_messages: int = 512
    max_cache_message_chars: int = Field(16_000, ge=1, description="a request with a longer message is forwarded as BYPASS (unsupported:too_long), never fingerprinted or cached")
    # auth
    api_keys: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict, description="API key -> tenant; 'key:tenant,...' or JSON")
    admin_token: SecretStr | None = None
    # rate limits: a token bucket per caller (the API key, hashed, when keys are set, else the client address),
    # shared through Redis when redis_url is set; a rate of 0 turns a limit off
    rate_limit_chat_rps: float = Field(0.0, ge=0, description="chat requests per second per caller (0: off)")
    rate_limit_chat_burst: float = Field(20.0, ge=0, description="chat requests a caller may send at once")
    rate_limit_feedback_rps: float = Field(1.0, ge=0, description="feedback signals per second per caller (0: off)")
    rate_limit_feedback_burst: float = Field(10.0, ge=0, description="feedback signals a caller may send at once")
    # storage (used by the cache issues)
    data_dir: Path = Field(default_factory=lambda: Path.home() / ".semcache")
    database_url: SecretStr | None = None
    migrate_on_start: bool = Field(True, description="`semcache serve` upgrades the database schema at start-up "
                                                   "(on PostgreSQL under an advisory lock); false: it only checks "
                                                   "the schema is current and stops if not (`--no-migrate`)")
    redis_url: SecretStr | None = None
    redis_prefix: str = Field("semcache", description="namespace of keys and the event channel in Redis")
    models_dir: Path | None = Field(None, description="prepared models (default: <data_dir>/models)")
    embedding_model: str = "e5-small"
    encoder_backend: Literal["auto", "onnx", "int8", "bf16"] = Field(
        "auto", description="how the encoder runs: onnx (ONNX Runtime, fp32), int8 (INT8 weights; the pair judge "
                            "is not quantised), bf16 (torch in bfloat16, for CPUs "
                            "with native bf16 matmuls), or auto: bf16 where the CPU has them and a start-up "
                            "measurement finds it at least 15% cheaper, else onnx; int8 for e5-small on a "
                            "CPU without native bf16")
    ready_delay_s: float = Field(30.0, description="a new answer becomes servable after this many seconds")
    max_entries: int = 100_000
    feedback_floor: float = Field(-2.0, description="entries whose feedback score falls below are not served")
    feedback_max_score: float = Field(2.0, description="positive feedback adds up to this score and no further, so "
                                                       "no caller can pin an entry against later negatives")
    ttl_s: Annotated[dict[str, float], NoDecode] = Field(default_factory=dict,
                                                         description="per-domain TTL overrides, JSON or domain:seconds,...")
    risk_policy: Path | None = Field(None, description="a risk-policy table (JSON) replacing the bundled one")
    cache_mode: Literal["semantic", "exact", "off"] = Field(
        "semantic", description="semantic (semcache); exact: only the same messages hit (a baseline); off: "
                                "every request is forwarded and nothing is cached")
    thresholds: Annotated[dict[str, dict[str, float]], NoDecode] = Field(
        default_factory=dict, description="per-domain {accept, candidate} over the risk policy's; written by "
                                          "`semcache calibrate` as [thresholds.<domain>] tables, or JSON")
    hit_sampled_requests: bool = Field(
        True, description="serve stored answers to requests with temperature > 0: a stored answer is one draw from "
                          "the distribution such a request asks for, and a client that wants another draw "
                          "regenerates, which the cache detects; false: only temperature 0 requests hit")
    promotion: Literal["off", "shadow", "auto"] = Field(
        "shadow", description="promotion by evidence of first-turn answers into the tenant's global pool: shadow "
                              "records and measures promotions without serving them; auto serves them; off "
                              "gathers nothing (see docs/decision.md)")
    promotion_min_sessions: int = Field(3, ge=1, description="distinct sessions whose requests matched an entry "
                                        "through every gate, and whose own answers agreed, before it is promoted")
    promotion_answer_similarity: float = Field(0.93, ge=-1, le=1, description="the least cosine similarity of "
                                               "two answers that agree (their key facts must also be equal)")
    search_k: int = Field(5, description="candidates fetched from the index per request")
    gate_k: int = Field(2, ge=1, description="agreeing candidates put through the hit gates, nearest first, "
                        "until one passes (a session keeps its paraphrases as entries of their own)")
    duplicate_window_s: float = Field(2.0, description="the same messages again within this time are a retry "
                                                       "(served the answer just given), later a regenerate")
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 128
    index_checkpoint_s: float = Field(300.0, description="how often the HNSW index is saved to the data dir")
    index_catch_up_s: float = Field(5.0, description="how often the index replays database rows changed since its last sync (entries whose events were lost, e.g. during a Redis outage)")
    # fail-open: the circuit breaker over the cache's dependencies (database, Redis, encoder)
    breaker_failures: int = Field(3, ge=1, description="consecutive cache dependency failures that open the breaker "
                                                       "(requests then bypass the cache)")
    breaker_cooldown_s: float = Field(5.0, ge=0, description="seconds the breaker stays open before one probe "
                                                             "request tries the cache again")
    # serving
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = Field(1, ge=1, description="gateway worker processes (`serve --workers`); with the embedded "
                                              "engine, N > 1 runs the engine once, in its own process")
    encoder_threads: int = Field(0, ge=0, description="ONNX Runtime threads of the encoder and the pair judge per "
                                                      "process (0: min(cores, 4) and min(cores, 2) with one worker, "
                                                      "cores / workers with several)")
    log_level: str = "info"
    metrics_tenant_label: bool = Field(False, description="label semcache_decisions_total by tenant (off: tenant "
                                                          "names stay out of the metrics)")
    metrics_tenant_cap: int = Field(50, ge=1, description="with tenant labels on, the most distinct tenant "
                                                          "values; later tenants share the value \"other\"")

    @field_validator("thresholds", mode="before")
    @classmethod
    def _parse_thresholds(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) and value.strip() else (value or {})

    @field_validator("backends")
    @classmethod
    def _check_backends(cls, value: str) -> str:
        parse_backends(value)              # a malformed list is a start-up error, not a routing surprise
        return value

    @field_validator("ttl_s", "api_keys", mode="before")
    @classmethod
    def _parse_pairs(cls, value: Any, info) -> Any:
        """`a:1,b:2` or a JSON object, for variables that hold a small mapping."""
        if not isinstance(value, str):
            return value
        value = value.strip()
        if not value:
            return {}
        if value.startswith("{"):
            return json.loads(value)
        pairs = {}
        for item in value.split(","):
            key, sep, val = item.strip().partition(":")
            if not sep or not key.strip() or not val.strip():
                raise ValueError(f"SEMCACHE_{info.field_name.upper()} entries must look like key:value")
            pairs[key.strip()] = val.strip()
        return pairs

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings) -> tuple[PydanticBaseSettingsSource, ...]:
        path = os.environ.get("SEMCACHE_CONFIG", "semcache.toml")
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=path)

    @property
    def model_dir(self) -> Path:
        return self.models_dir or self.data_dir / "models"

    @cached_property
    def shared_tenants(self) -> frozenset[str]:
        """Tenants given several API keys (gateway/auth.py, `client_scope`): counted once, not per request."""
        counts: dict[str, int] = {}
        for tenant in self.api_keys.values():
            counts[tenant] = counts.get(tenant, 0) + 1
        return frozenset(t for t, n in counts.items() if n > 1)

    @property
    def embedded(self) -> bool:
        return self.backend_url == "embedded" and not self.backends.strip()

    def core_split(self) -> tuple[int | None, int | None]:
        """(engine threads, encoder threads) of this process; None: the library's default (every core).
        The in-process engine and the cache's models share the cores: on 2 cores, two threads each made torch's
        teams wait on one another (docs/operations.md, "Cores"), so each side keeps its own cores."""
        if self.embedded and self.cache_mode == "semantic":
            return split_cores(os.cpu_count() or 1, self.engine_threads, self.encoder_threads)
        return self.engine_threads or None, self.encoder_threads or None

    def masked(self) -> dict[str, Any]:
        """The effective configuration, secrets masked (for `semcache config show` and logs)."""
        out = {}
        for name, value in self.model_dump().items():
            if isinstance(value, SecretStr):
                value = "********" if value.get_secret_value() else ""
                if name == "database_url" and value:
                    value = _mask_url(self.database_url.get_secret_value())
            elif name == "api_keys":
                # each key by its tag (the prefix of its scoped session ids), never by its own characters
                value = {key_tag(k): tenant for k, tenant in value.items()}
            elif isinstance(value, Path):
                value = str(value)
            out[name] = value
        return out


def key_tag(key: str) -> str:
    """An API key's public tag: "k" + 12 hex digits of its sha256 (gateway/auth.py keeps a tenant's several
    keys' sessions under it)."""
    return "k" + hashlib.sha256(key.strip().encode()).hexdigest()[:12]


def split_cores(cores: int, engine: int = 0, encoder: int = 0) -> tuple[int, int]:
    """(engine threads, encoder threads) for an engine and the cache's models in one process on `cores`;
    0: not set. Explicit counts win; otherwise the engine takes every core but the encoder's (one by default)."""
    engine = engine or max(1, cores - (encoder or 1))
    return engine, encoder or max(1, cores - engine)


def parse_backends(text: str) -> list[tuple[str, float]]:
    """`url[=weight],url[=weight],...` -> [(url, weight)]; a weight is a positive number (default 1)."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        url, weight = item, 1.0
        head, sep, tail = item.rpartition("=")
        if sep and head and "/" not in tail:
            try:
                url, weight = head, float(tail)
            except ValueError:
                raise ValueError(f"backend weight must be a number: {item!r}") from None
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"a backend must be an http(s) URL: {item!r}")
        if not weight > 0 or math.isinf(weight):
            raise ValueError(f"a backend weight must be positive: {item!r}")
        out.append((url.rstrip("/"), weight))
    if len({url for url, _ in out}) != len(out):
        raise ValueError("a backend URL is listed twice")
    return out


def _mask_url(url: str) -> str:
    """postgresql://user:secret@host/db -> postgresql://user:****@host/db (the host stays visible)."""
    return re.sub(r"(//[^:/@]+:)[^@]*@", r"\1****@", url)


def parse_size(text: str) -> int:
    """'512MiB', '2GiB', '100MB' or a plain number of bytes."""
    units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "kb": 10**3, "mb": 10**6, "gb": 10**9, "b": 1}
    lowered = str(text).strip().lower()
    for unit, scale in units.items():
        if lowered.endswith(unit):
            return int(float(lowered[: -len(unit)]) * scale)
    return int(lowered)


def load_settings(config_file: str | None = None, **overrides: Any) -> Settings:
    """The settings a command runs with; unknown keys or variables and contradictory values are errors
    (ValueError, naming the nearest valid key)."""
    from gateway.config_check import threshold_errors, unknown_keys
    if config_file:
        os.environ["SEMCACHE_CONFIG"] = config_file
        if not Path(config_file).exists():
            raise ValueError(f"config file {config_file} does not exist")
    errors = unknown_keys(set(Settings.model_fields), Path(os.environ.get("SEMCACHE_CONFIG", "semcache.toml")))
    if errors:
        raise ValueError("invalid configuration:\n  " + "\n  ".join(errors))
    settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
    errors = threshold_errors(settings.thresholds)
    if settings.feedback_floor >= settings.feedback_max_score:
        errors.append(f"feedback_floor ({settings.feedback_floor}) must be below feedback_max_score "
                      f"({settings.feedback_max_score})")
    if errors:
        raise ValueError("invalid configuration:\n  " + "\n  ".join(errors))
    return settings
