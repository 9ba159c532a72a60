"""The promotion pool: session-scoped entries that other sessions may find, but only to gather evidence.

An entry that could cross users (gateway/cache/promotion.py) sits here while it is a candidate or
shadow-promoted, besides its place in its own session's partition of the main index. The pool is small
(first turns of the domains that allow global scope), so each (tenant, domain, version) key is searched
exactly while small, like the main index's partitions. It is rebuilt from the database at start and
follows the same events, so it is not persisted.
"""
from __future__ import annotations

import threading

import numpy as np

from gateway.index.hnsw import EntryTags, SearchFilter, _Partition


class CandidatePool:
    def __init__(self, dim: int, M: int = 16, ef_construction: int = 200, ef_search: int = 128):
        self.dim, self.params = dim, (M, ef_construction, ef_search)
        self._parts: dict[tuple, _Partition] = {}
        self._part_of: dict[int, tuple] = {}
        self._lock = threading.Lock()

    def add(self, label: int, vector: np.ndarray, tags: EntryTags) -> None:
        key = (tags.tenant, tags.intent_domain, tags.system_prompt_version)
        with self._lock:
            old = self._part_of.get(label)
            if old is not None and old != key:
                self._parts[old].remove(label)
            part = self._parts.get(key)
            if part is None:
                part = self._parts[key] = _Partition(self.dim, *self.params)
            vector = np.asarray(vector, dtype=np.float32)
            part.add(label, vector / max(float(np.linalg.norm(vector)), 1e-12))
            self._part_of[label] = key

    def remove(self, label: int) -> None:
        with self._lock:
            key = self._part_of.pop(label, None)
            if key is not None:
                self._parts[key].remove(label)

    def __contains__(self, label: int) -> bool:
        return label in self._part_of

    def __len__(self) -> int:
        return len(self._part_of)

    def labels(self) -> list[int]:
        with self._lock:
            return list(self._part_of)

    def search(self, vector: np.ndarray, k: int, where: SearchFilter) -> list[tuple[int, float]]:
        """Up to k (label, cosine) pairs of the filter's tenant, domain and prompt version, any session."""
        vector = np.asarray(vector, dtype=np.float32)
        vector = vector / max(float(np.linalg.norm(vector)), 1e-12)
        with self._lock:
            part = self._parts.get((where.tenant, where.intent_domain, where.system_prompt_version))
            return sorted(part.search(vector, k), key=lambda h: -h[1]) if part is not None else []
