"""Vector index of cache entries: one HNSW graph (hnswlib, cosine) over everything, plus partitions.

Labels are the entries' `seq` numbers. The cache's query is always filtered
to one tenant, one domain, one prompt version, and the tenant's global pool
or one session. Such a filter keeps a tiny fraction of a large index, and a
filtered walk of one big graph then visits most of it (163 ms at 100k). So
each (tenant, domain, version, global|session) key has its own partition:
exact search over a matrix while it is small, its own HNSW graph once it is
large. A filtered query searches two partitions and merges them. A compact
label -> tags table (small integer codes) is kept for persistence and for
filter callbacks.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import hnswlib
import numpy as np

log = logging.getLogger("semcache.index")
GLOBAL, SESSION = 1, 0
STALE_TMP_S = 3600.0            # temp files of a saver that died are removed after this long
PARTITION_HNSW_AT = 4096        # a partition switches from exact search to its own graph at this size


class _Partition:
    """Entries sharing one filter key: exact search while small, an HNSW graph once large."""

    def __init__(self, dim: int, M: int, ef_construction: int, ef_search: int):
        self.dim, self.M, self.ef_construction, self.ef_search = dim, M, ef_construction, ef_search
        self.labels: list[int] = []
        self.rows: dict[int, int] = {}
        self.matrix = np.zeros((2, dim), dtype=np.float32)      # most partitions (sessions) stay tiny
        self.dead = np.zeros(2, dtype=bool)
        self.graph: hnswlib.Index | None = None
        self.live = 0

    def add(self, label: int, vector: np.ndarray) -> None:
        row = self.rows.get(label)
        if row is None:
            row = len(self.labels)
            if row >= len(self.matrix):
                self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
                self.dead = np.concatenate([self.dead, np.zeros_like(self.dead)])
            self.labels.append(label)
            self.rows[label] = row
        self.matrix[row] = vector
        if self.dead[row] or row == len(self.labels) - 1:
            self.live += 1
        self.dead[row] = False
        if self.graph is not None:
            if self.graph.get_current_count() >= self.graph.get_max_elements():
                self.graph.resize_index(self.graph.get_max_elements() * 2)
            try:
                self.graph.add_items(vector.reshape(1, -1), np.array([label]))
            except RuntimeError:
                self.graph.unmark_deleted(label)
        elif self.live >= PARTITION_HNSW_AT:
            self._build_graph()

    def _build_graph(self) -> None:
        n = len(self.labels)
        graph = hnswlib.Index(space="cosine", dim=self.dim)
        graph.init_index(max_elements=max(2 * n, 1024), M=self.M, ef_construction=self.ef_construction)
        graph.set_ef(self.ef_search)
        graph.add_items(self.matrix[:n], np.asarray(self.labels))
        for row in np.flatnonzero(self.dead[:n]):
            graph.mark_deleted(self.labels[row])
        self.graph = graph

    def remove(self, label: int) -> None:
        row = self.rows.get(label)
        if row is None or self.dead[row]:
            return
        self.dead[row] = True
        self.live -= 1
        if self.graph is not None:
            self.graph.mark_deleted(label)

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if self.live <= 0:
            return []
        k = min(k, self.live)
        if self.graph is not None:
            labels, distances = self.graph.knn_query(vector.reshape(1, -1), k=k)
            return [(int(l), float(1 - d)) for l, d in zip(labels[0], distances[0])]
        n = len(self.labels)
        sims = self.matrix[:n] @ vector
        sims[self.dead[:n]] = -np.inf
        top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        return [(self.labels[i], float(sims[i])) for i in top if np.isfinite(sims[i])]


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
        self._parts: dict[tuple, _Partition] = {}
        self._part_of: dict[int, tuple] = {}
        # a session's partitions by (tenant, version, session): its own entries are searched in every domain
        self._session_domains: dict[tuple, set[str]] = {}
        self.high_water = 0          # largest seq ever added (the replay cursor)
        self.checkpoint_at = 0.0     # unix time of the last save

    @staticmethod
    def _key(tags: EntryTags) -> tuple:
        scope = "*global*" if tags.scope == "global" else (tags.session_id or "")
        return tags.tenant, tags.intent_domain, tags.system_prompt_version, scope

    def _place(self, label: int, vector: np.ndarray, key: tuple) -> None:
        old = self._part_of.get(label)
        if old is not None and old != key:
            self._parts[old].remove(label)
            self._drop_if_empty(old)
        part = self._parts.get(key)
        if part is None:
            part = self._parts[key] = _Partition(self.dim, self.M, self.ef_construction, self.ef_search)
            tenant, domain, version, scope = key
            if scope != "*global*":
                self._session_domains.setdefault((tenant, version, scope), set()).add(domain)
        part.add(label, np.asarray(vector, dtype=np.float32))
        self._part_of[label] = key

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
            self._place(label, vector, self._key(tags))
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
            for label, i in zip(labels, fresh):
                self._place(label, vectors[i], self._key(tags[i]))
            self.high_water = max(self.high_water, max(labels))

    def set_scope(self, label: int, scope: str) -> None:
        with self._lock:
            if label in self._live:
                self._table[label, 2] = GLOBAL if scope == "global" else SESSION
                tenant, domain, version, _ = self._part_of[label]
                session = self._names["session"].values[self._table[label, 1]]
                key = (tenant, domain, version, "*global*" if scope == "global" else session)
                vector = self._index.get_items([label])[0]
                self._place(label, np.asarray(vector, dtype=np.float32), key)

    def remove(self, label: int) -> None:
        with self._lock:
            if label in self._live:
                self._index.mark_deleted(label)
                self._live.discard(label)
                key = self._part_of.pop(label)
                self._parts[key].remove(label)
                self._drop_if_empty(key)

    def _drop_if_empty(self, key: tuple) -> None:
        # sessions come and go: an emptied partition (and its place in the session's domains) is freed, so
        # memory follows the live entries
        if self._parts[key].live > 0:
            return
        del self._parts[key]
        tenant, domain, version, scope = key
        domains = self._session_domains.get((tenant, version, scope))
        if domains is not None:
            domains.discard(domain)
            if not domains:
                del self._session_domains[(tenant, version, scope)]

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

    def labels(self) -> list[int]:
        with self._lock:
            return list(self._live)

    def scope_of(self, label: int) -> str | None:
        """"global" or "session" for an indexed label, None otherwise."""
        with self._lock:
            if label not in self._live:
                return None
            return "global" if self._table[label, 2] == GLOBAL else "session"

    def search(self, vector: np.ndarray, k: int, where: SearchFilter | None = None) -> list[tuple[int, float]]:
        """Up to k (label, cosine similarity) pairs, best first, among entries passing the filter."""
        vector = np.asarray(vector, dtype=np.float32)
        vector = vector / max(float(np.linalg.norm(vector)), 1e-12)
        if where is not None and where.intent_domain and where.system_prompt_version:
            with self._lock:
                # the global pool of the request's domain, and the session's own entries in any domain: a
                # conversation's turns are often classified into different domains, and the gates then apply
                # the stricter policy of the two (DecisionPipeline)
                keys = [(where.tenant, where.intent_domain, where.system_prompt_version, "*global*")]
                if where.session_id:
                    domains = self._session_domains.get((where.tenant, where.system_prompt_version,
                                                         where.session_id), ())
                    keys += [(where.tenant, d, where.system_prompt_version, where.session_id) for d in domains]
                hits: list[tuple[int, float]] = []
                for key in keys:
                    part = self._parts.get(key)
                    if part is not None:
                        hits += part.search(vector, k)
                return sorted(hits, key=lambda h: -h[1])[:k]
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
        """A checkpoint in `folder` (index.bin, tags.npy, meta.json), safe with several processes saving to
        the same folder (gateway workers): each writes its own temp files, then swaps them in under an
        exclusive lock; meta.json goes last and carries the other files' checksums, so a load never
        takes a torn set (it falls back to a replay from the database instead)."""
        folder.mkdir(parents=True, exist_ok=True)
        suffix = f".{os.getpid()}-{threading.get_ident()}.tmp"
        paths = {name: folder / (name + suffix) for name in ("index.bin", "tags.npy", "meta.json")}
        try:
            with self._lock:
                self._index.save_index(str(paths["index.bin"]))
                with open(paths["tags.npy"], "wb") as f:
                    np.save(f, self._table)
                meta = {"dim": self.dim, "M": self.M, "ef_construction": self.ef_construction,
                        "ef_search": self.ef_search, "high_water": self.high_water, "checkpoint_at": at,
                        "live": sorted(self._live), "names": {k: v.values for k, v in self._names.items()}}
            meta["files"] = {name: _checksum(paths[name]) for name in ("index.bin", "tags.npy")}
            paths["meta.json"].write_text(json.dumps(meta))
            for path in paths.values():
                _fsync(path)
            with _folder_lock(folder, exclusive=True):
                for name in ("index.bin", "tags.npy", "meta.json"):
                    paths[name].replace(folder / name)
                _fsync(folder)
                _remove_stale_temp_files(folder)
        finally:
            for path in paths.values():
                path.unlink(missing_ok=True)
        self.checkpoint_at = at

    @classmethod
    def load(cls, folder: Path) -> "VectorIndex | None":
        """The checkpoint in `folder`, or None when there is none or it is unreadable (a torn or corrupt
        checkpoint only costs a replay from the database)."""
        if not (folder / "meta.json").exists():
            return None
        try:
            with _folder_lock(folder, exclusive=False):
                meta = json.loads((folder / "meta.json").read_text())
                for name, expected in (meta.get("files") or {}).items():
                    if _checksum(folder / name) != expected:
                        raise ValueError(f"{name} does not match meta.json")
                index = cls(meta["dim"], 1, meta["M"], meta["ef_construction"], meta["ef_search"])
                index._index = hnswlib.Index(space="cosine", dim=meta["dim"])
                index._index.load_index(str(folder / "index.bin"), allow_replace_deleted=False)
                index._table = np.load(folder / "tags.npy")
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            log.warning("index checkpoint in %s is unreadable (%s); rebuilding from the database", folder, exc)
            return None
        index._index.set_ef(meta["ef_search"])
        index._names = {k: _Interner(v) for k, v in meta["names"].items()}
        index._live = set(meta["live"])
        live = sorted(index._live)
        if live:
            vectors = np.asarray(index._index.get_items(live), dtype=np.float32)
            names = index._names
            for label, vector in zip(live, vectors):
                row = index._table[label]
                tags = EntryTags(names["tenant"].values[row[0]], names["session"].values[row[1]] or None,
                                 "global" if row[2] == GLOBAL else "session", names["domain"].values[row[3]],
                                 names["version"].values[row[4]])
                index._place(label, vector, index._key(tags))
        index.high_water = meta["high_water"]
        index.checkpoint_at = meta["checkpoint_at"]
        return index


# ---- checkpoint files ----------------------------------------------------------
@contextlib.contextmanager
def _folder_lock(folder: Path, exclusive: bool):
    """An fcntl lock on `<folder>/.lock`: savers exclusive, loaders shared (between processes and threads)."""
    with open(folder / ".lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _checksum(path: Path) -> str:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return f"crc32:{crc:08x}:{path.stat().st_size}"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_temp_files(folder: Path) -> None:
    now = time.time()
    for path in folder.glob("*.tmp"):
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > STALE_TMP_S:
                path.unlink()
