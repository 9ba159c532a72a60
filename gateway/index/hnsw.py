"""HNSW vector index (hnswlib, cosine) with a compact label -> tags table for filtered search.

Labels are the entries' `seq` numbers. The tags table keeps small integer
codes (tenant, session, scope, domain, system-prompt version) in numpy arrays
so the filter callback hnswlib calls per visited node is a few array reads.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import hnswlib
import numpy as np

GLOBAL, SESSION = 1, 0


@dataclass(frozen=True)
class EntryTags:
    tenant: str
    session_id: str | None
    scope: str
    intent_domain: str
    system_prompt_version: str


@dataclass(frozen=True)
class SearchFilter:
    tenant: str
    session_id: str | None
    intent_domain: str | None
    system_prompt_version: str | None


class _Interner:
    def __init__(self, values: list[str] | None = None):
        self.values = list(values or [""])
        self.codes = {v: i for i, v in enumerate(self.values)}

    def code(self, value: str | None, add: bool = True) -> int:
        value = value or ""
        code = self.codes.get(value)
        if code is None:
            if not add:
                return -1
            code = self.codes[value] = len(self.values)
            self.values.append(value)
        return code


class VectorIndex:
    def __init__(self, dim: int, max_elements: int = 10_000, M: int = 16, ef_construction: int = 200,
                 ef_search: int = 128):
        self.dim, self.M, self.ef_construction, self.ef_search = dim, M, ef_construction, ef_search
        self._index = hnswlib.Index(space="cosine", dim=dim)
        self._index.init_index(max_elements=max_elements, M=M, ef_construction=ef_construction,
                               allow_replace_deleted=False)
        self._index.set_ef(ef_search)
        self._lock = threading.RLock()
        self._names = {k: _Interner() for k in ("tenant", "session", "domain", "version")}
        self._table = np.full((max_elements, 5), -1, dtype=np.int32)   # tenant, session, scope, domain, version
        self._live: set[int] = set()
        self.high_water = 0          # largest seq ever added (the replay cursor)
        self.checkpoint_at = 0.0     # unix time of the last save

    # ---- writes --------------------------------------------------------
    def add(self, label: int, vector: np.ndarray, tags: EntryTags) -> None:
        with self._lock:
            if label in self._live:
                return
            self._ensure_capacity(label + 1)
            if self._index.get_current_count() >= self._index.get_max_elements():
                self._index.resize_index(max(self._index.get_max_elements() * 2, 1024))
            try:
                self._index.add_items(vector.reshape(1, -1).astype(np.float32), np.array([label]))
            except RuntimeError:      # the label was added before and marked deleted: bring it back
                self._index.unmark_deleted(label)
            n = self._names
            self._table[label] = (n["tenant"].code(tags.tenant), n["session"].code(tags.session_id),
                                  GLOBAL if tags.scope == "global" else SESSION, n["domain"].code(tags.intent_domain),
                                  n["version"].code(tags.system_prompt_version))
            self._live.add(label)
            self.high_water = max(self.high_water, label)

    def add_many(self, labels: list[int], vectors: np.ndarray, tags: list[EntryTags]) -> None:
        """Bulk insert (rebuilds, replay, benchmarks): one hnswlib call, all cores."""
        with self._lock:
            fresh = [i for i, label in enumerate(labels) if label not in self._live]
            if not fresh:
                return
            labels = [labels[i] for i in fresh]
            self._ensure_capacity(max(labels) + 1)
            needed = self._index.get_current_count() + len(labels)
            if needed > self._index.get_max_elements():
                self._index.resize_index(max(needed, self._index.get_max_elements() * 2))
            self._index.add_items(vectors[fresh].astype(np.float32), np.asarray(labels))
            n = self._names
            for label, i in zip(labels, fresh):
                t = tags[i]
                self._table[label] = (n["tenant"].code(t.tenant), n["session"].code(t.session_id),
                                      GLOBAL if t.scope == "global" else SESSION, n["domain"].code(t.intent_domain),
                                      n["version"].code(t.system_prompt_version))
            self._live.update(labels)
            self.high_water = max(self.high_water, max(labels))

    def set_scope(self, label: int, scope: str) -> None:
        with self._lock:
            if label in self._live:
                self._table[label, 2] = GLOBAL if scope == "global" else SESSION

    def remove(self, label: int) -> None:
        with self._lock:
            if label in self._live:
                self._index.mark_deleted(label)
                self._live.discard(label)

    def _ensure_capacity(self, size: int) -> None:
        if size > len(self._table):
            grown = np.full((max(size, len(self._table) * 2), 5), -1, dtype=np.int32)
            grown[:len(self._table)] = self._table
            self._table = grown

    # ---- reads ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, label: int) -> bool:
        return label in self._live

    def search(self, vector: np.ndarray, k: int, where: SearchFilter | None = None) -> list[tuple[int, float]]:
        """Up to k (label, cosine similarity) pairs, best first, among entries passing the filter."""
        with self._lock:
            if not self._live:
                return []
            predicate = self._predicate(where) if where is not None else None
            if where is not None and predicate is None:
                return []                   # a tenant/domain/version never seen: nothing can match
            k = min(k, len(self._live))
            try:
                labels, distances = self._index.knn_query(vector.reshape(1, -1).astype(np.float32), k=k,
                                                          filter=predicate)
            except RuntimeError:            # fewer than k elements pass the filter
                return self._search_small(vector, k, predicate)
            return [(int(l), float(1 - d)) for l, d in zip(labels[0], distances[0])]

    def _search_small(self, vector, k, predicate):
        for smaller in range(k - 1, 0, -1):
            try:
                labels, distances = self._index.knn_query(vector.reshape(1, -1).astype(np.float32), k=smaller,
                                                          filter=predicate)
                return [(int(l), float(1 - d)) for l, d in zip(labels[0], distances[0])]
            except RuntimeError:
                continue
        return []

    def _predicate(self, where: SearchFilter):
        n = self._names
        tenant = n["tenant"].code(where.tenant, add=False)
        if tenant < 0:
            return None
        session = n["session"].code(where.session_id, add=False) if where.session_id else -2
        domain = n["domain"].code(where.intent_domain, add=False) if where.intent_domain else None
        version = n["version"].code(where.system_prompt_version, add=False) if where.system_prompt_version else None
        if (where.intent_domain and domain < 0) or (where.system_prompt_version and version < 0):
            return None
        table = self._table

        def allowed(label: int) -> bool:
            row = table[label]
            return (row[0] == tenant and (row[2] == GLOBAL or row[1] == session)
                    and (domain is None or row[3] == domain) and (version is None or row[4] == version))
        return allowed

    # ---- persistence ---------------------------------------------------
    def save(self, folder: Path, at: float) -> None:
        with self._lock:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / "index.bin.tmp"
            self._index.save_index(str(tmp))
            np.save(folder / "tags.npy.tmp.npy", self._table)
            meta = {"dim": self.dim, "M": self.M, "ef_construction": self.ef_construction,
                    "ef_search": self.ef_search, "high_water": self.high_water, "checkpoint_at": at,
                    "live": sorted(self._live), "names": {k: v.values for k, v in self._names.items()}}
            (folder / "meta.json.tmp").write_text(json.dumps(meta))
            tmp.replace(folder / "index.bin")
            (folder / "tags.npy.tmp.npy").replace(folder / "tags.npy")
            (folder / "meta.json.tmp").replace(folder / "meta.json")
            self.checkpoint_at = at

    @classmethod
    def load(cls, folder: Path) -> "VectorIndex | None":
        if not (folder / "meta.json").exists():
            return None
        meta = json.loads((folder / "meta.json").read_text())
        index = cls(meta["dim"], 1, meta["M"], meta["ef_construction"], meta["ef_search"])
        index._index = hnswlib.Index(space="cosine", dim=meta["dim"])
        index._index.load_index(str(folder / "index.bin"), allow_replace_deleted=False)
        index._index.set_ef(meta["ef_search"])
        index._table = np.load(folder / "tags.npy")
        index._names = {k: _Interner(v) for k, v in meta["names"].items()}
        index._live = set(meta["live"])
        index.high_water = meta["high_water"]
        index.checkpoint_at = meta["checkpoint_at"]
        return index
