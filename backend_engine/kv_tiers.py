"""KV tiers below the block pool: host memory, then disk.

Keyed by the chained block hash (the tenant salt is inside it); an entry also
keeps its token ids, and a lookup compares them, so a hash collision cannot
hand out a wrong block. An entry lives in one tier. A block evicted from the
pool comes here (unless its hash is already here: the copy is kept, so a
block that goes up and down is quantized once). When a tier is over its byte
capacity, its lowest-priority entry moves down (host -> disk) or, from the
bottom tier, is dropped. The priority is the pool's own eviction priority
(evict_policy), carried over with the block's access statistics, so one cost
model ranks blocks across tiers. The bottom tier only drops leaves (no
descendant anywhere in the tiers): a chain goes tail first, as in the pool.

The engine thread writes (put, eviction); the loader thread reads; a lock
guards the index. A read can miss (evicted meanwhile, a corrupt file): the
loader then stops, and the rest of the prefix is recomputed.
"""
from __future__ import annotations

import heapq
import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from backend_engine import kv_codec
from backend_engine.disk_tier import DiskFiles
from backend_engine.evict_policy import POLICIES

HOST, DISK = "host", "disk"
HOST_SHARE, HOST_CAP = 0.25, 8 * 2**30          # default host tier: a quarter of available memory, at most 8 GiB
DISK_SHARE, DISK_CAP = 0.25, 32 * 2**30         # default disk tier: a quarter of the free space, at most 32 GiB


def default_host_bytes() -> int:
    """A safe share of the memory available now (/proc/meminfo; 1 GiB where it cannot be read)."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        available = 4 * 2**30
    return int(min(available * HOST_SHARE, HOST_CAP))


def default_disk_bytes(directory: str | Path) -> int:
    import shutil
    Path(directory).mkdir(parents=True, exist_ok=True)
    return int(min(shutil.disk_usage(directory).free * DISK_SHARE, DISK_CAP))


@dataclass(eq=False)
class TierEntry:
    hash: int
    parent: int | None
    token_ids: tuple[int, ...]
    depth_tokens: int
    protected: bool
    dtype: str                  # fp | int8 | int4 (protected blocks: always fp)
    nbytes: int = 0
    tier: str = HOST
    frequency: float = 1.0
    last_access: float = 0.0
    num_users: int = 1
    payload: dict[str, torch.Tensor] | None = field(default=None, repr=False)   # host tier only
    version: int = 0

    def meta(self) -> dict:
        return {"hash": f"{self.hash:032x}", "parent": None if self.parent is None else f"{self.parent:032x}",
                "tokens": list(self.token_ids), "depth": self.depth_tokens, "protected": self.protected,
                "dtype": self.dtype, "users": self.num_users}


@dataclass
class TierStats:
    stored: int = 0             # blocks put into a tier from the pool
    moved_down: int = 0         # host -> disk
    dropped: int = 0            # left the bottom tier
    hits: dict[str, int] = field(default_factory=lambda: {HOST: 0, DISK: 0})     # blocks read for a load
    bytes_loaded: int = 0


class Tier:
    def __init__(self, name: str, capacity: int, dtype: str):
        self.name, self.capacity, self.dtype = name, capacity, dtype
        self.used = 0
        self.count = 0
        self.heap: list[tuple[float, int, int, int]] = []      # (priority, tie, hash, version)


class TierStore:
    def __init__(self, host_capacity: int, host_dtype: str = "int8", disk_dir: str | Path | None = None,
                 disk_capacity: int = 0, disk_dtype: str = "int4", policy: str = "cost",
                 half_life_s: float = 600.0, clock: Callable[[], float] = time.monotonic):
        for dtype in (host_dtype, disk_dtype):
            if dtype not in kv_codec.DTYPES:
                raise ValueError(f"tier dtype must be one of {', '.join(kv_codec.DTYPES)}, got {dtype!r}")
        self.tiers: dict[str, Tier] = {}
        if host_capacity > 0:
            self.tiers[HOST] = Tier(HOST, host_capacity, host_dtype)
        self.disk: DiskFiles | None = None
        if disk_dir is not None and disk_capacity > 0:
            self.tiers[DISK] = Tier(DISK, disk_capacity, disk_dtype)
            self.disk = DiskFiles(disk_dir)
        self.entries: dict[int, TierEntry] = {}
        self.children: dict[int, int] = {}       # parent hash -> entries below it in the tiers
        self.priority = POLICIES[policy]
        self.decay = math.log(2) / half_life_s
        self.clock = clock
        self.lock = threading.RLock()
        self.stats = TierStats()
        self._tie = 0
        if self.disk is not None:
            self._rebuild_disk_index()

    @property
    def enabled(self) -> bool:
        return bool(self.tiers)

    @property
    def num_corrupt(self) -> int:
        return self.disk.num_corrupt if self.disk is not None else 0

    def _order(self) -> list[str]:
        return [name for name in (HOST, DISK) if name in self.tiers]

    # ---- from the pool --------------------------------------------------
    def contains(self, block_hash: int) -> bool:
        with self.lock:
            return block_hash in self.entries

    def refresh(self, block_hash: int, frequency: float, last_access: float, num_users: int) -> None:
        """A block evicted from the pool whose copy is still here: carry its newer statistics over."""
        with self.lock:
            entry = self.entries.get(block_hash)
            if entry is not None and last_access >= entry.last_access:
                entry.frequency, entry.last_access = frequency, last_access
                entry.num_users = max(entry.num_users, num_users)
                self._push(entry)

    def put(self, entry: TierEntry, data: torch.Tensor) -> bool:
        """Store a block evicted from the pool (`data` [L, 2, bs, Hkv, D]) in the top tier."""
        order = self._order()
        if not order:
            return False
        top = self.tiers[order[0]]
        dtype = "fp" if entry.protected else top.dtype
        payload = {name: t.cpu() for name, t in kv_codec.encode(data, dtype).items()}
        with self.lock:
            if entry.hash in self.entries:
                return True
            entry.dtype, entry.tier = dtype, top.name
            entry.nbytes = kv_codec.nbytes(payload)
            if top.name == HOST:
                entry.payload = kv_codec.pin(payload)
            elif not self._write_disk(entry, payload):
                return False
            if not self._add(entry, top):
                self._remove_data(entry)
                return False
            self.stats.stored += 1
            return True

    # ---- lookup and reads (the loader thread) -----------------------------
    def lookup(self, block_hash: int, token_ids: tuple[int, ...]) -> TierEntry | None:
        with self.lock:
            entry = self.entries.get(block_hash)
            return entry if entry is not None and entry.token_ids == token_ids else None

    def read(self, entry: TierEntry) -> tuple[dict[str, torch.Tensor], str] | None:
        """(payload, its dtype) of an entry, or None if it has left the tiers or its file is corrupt."""
        with self.lock:
            if self.entries.get(entry.hash) is not entry:
                return None
            tier, dtype, payload = entry.tier, entry.dtype, entry.payload
        if tier == DISK:
            payload = self.disk.read(entry.hash)           # outside the lock: file I/O and a digest
            if payload is None:
                with self.lock:
                    if self.entries.get(entry.hash) is entry and entry.tier == DISK:
                        self._drop(entry, delete_file=False)
                return None
        with self.lock:
            self.stats.hits[tier] += 1
            self.stats.bytes_loaded += entry.nbytes
            self._touch(entry)
        return payload, dtype

    # ---- capacity -------------------------------------------------------
    def _add(self, entry: TierEntry, tier: Tier) -> bool:
        """Account an entry into a tier, making room below; False if no room can be made."""
        if entry.nbytes > tier.capacity or not self._make_room(tier, entry.nbytes, entry):
            return False
        tier.used += entry.nbytes
        tier.count += 1
        entry.tier = tier.name
        if entry.hash not in self.entries:
            self.entries[entry.hash] = entry
            if entry.parent is not None:
                self.children[entry.parent] = self.children.get(entry.parent, 0) + 1
        self._push(entry)
        return True

    def _make_room(self, tier: Tier, need: int, incoming: TierEntry) -> bool:
        bottom = self._order()[-1] == tier.name
        while tier.used + need > tier.capacity:
            victim = self._pop(tier, leaves_only=bottom, skip=incoming)
            if victim is None:
                return False
            if bottom:
                self._drop(victim)
            else:
                self._move_down(victim)
        return True

    def _pop(self, tier: Tier, leaves_only: bool, skip: TierEntry) -> TierEntry | None:
        stale = []
        victim = None
        while tier.heap:
            item = heapq.heappop(tier.heap)
            entry = self.entries.get(item[2])
            if entry is None or entry.version != item[3] or entry.tier != tier.name or entry is skip:
                continue
            if leaves_only and self.children.get(entry.hash):
                stale.append(item)          # pushed again when its last descendant leaves
                continue
            victim = entry
            break
        for item in stale:
            heapq.heappush(tier.heap, item)
        return victim

    def _move_down(self, entry: TierEntry) -> None:
        """Host -> disk, re-encoded in the disk's dtype (protected blocks stay fp)."""
        host, disk = self.tiers[HOST], self.tiers[DISK]
        payload = entry.payload
        host.used -= entry.nbytes
        host.count -= 1
        entry.payload = None
        dtype = "fp" if entry.protected else disk.dtype
        if dtype != entry.dtype:
            payload = kv_codec.encode(kv_codec.decode(payload, entry.dtype, torch.float32), dtype)
        entry.dtype, entry.nbytes = dtype, kv_codec.nbytes(payload)
        entry.tier = DISK
        self.stats.moved_down += 1
        if not self._write_disk(entry, payload) or not self._add(entry, disk):
            self.disk.delete(entry.hash)
            self._forget(entry)
            self.stats.dropped += 1

    def _write_disk(self, entry: TierEntry, payload: dict[str, torch.Tensor]) -> bool:
        """Write the block's file; its size (header and digest included) is what the disk tier counts."""
        try:
            entry.nbytes = self.disk.write(entry.hash, entry.meta(), payload)
            return True
        except OSError:
            return False

    def _drop(self, entry: TierEntry, delete_file: bool = True) -> None:
        tier = self.tiers[entry.tier]
        tier.used -= entry.nbytes
        tier.count -= 1
        self._remove_data(entry, delete_file)
        self._forget(entry)
        self.stats.dropped += 1

    def _remove_data(self, entry: TierEntry, delete_file: bool = True) -> None:
        entry.payload = None
        if entry.tier == DISK and delete_file and self.disk is not None:
            self.disk.delete(entry.hash)

    def _forget(self, entry: TierEntry) -> None:
        if self.entries.get(entry.hash) is not entry:
            return
        del self.entries[entry.hash]
        entry.version += 1
        if entry.parent is not None:
            left = self.children.get(entry.parent, 1) - 1
            if left:
                self.children[entry.parent] = left
            else:
                self.children.pop(entry.parent, None)
                parent = self.entries.get(entry.parent)
                if parent is not None:
                    self._push(parent)      # a leaf now: the bottom tier may drop it

    # ---- ranking --------------------------------------------------------
    def _touch(self, entry: TierEntry) -> None:
        now = self.clock()
        entry.frequency = entry.frequency * math.exp(-self.decay * max(now - entry.last_access, 0.0)) + 1.0
        entry.last_access = now
        self._push(entry)

    def _push(self, entry: TierEntry) -> None:
        tier = self.tiers.get(entry.tier)
        if tier is None or self.entries.get(entry.hash) is not entry:
            return
        entry.version += 1
        self._tie += 1
        heapq.heappush(tier.heap, (self.priority(entry, self.decay), self._tie, entry.hash, entry.version))

    def _rebuild_disk_index(self) -> None:
        """After a restart: every intact header becomes an entry (statistics start fresh)."""
        now = self.clock()
        disk = self.tiers[DISK]
        for header, size in self.disk.scan():
            block_hash = int(header["hash"], 16)
            entry = TierEntry(block_hash, None if header["parent"] is None else int(header["parent"], 16),
                              tuple(header["tokens"]), int(header["depth"]), bool(header["protected"]),
                              header["dtype"], size, DISK, last_access=now, num_users=int(header.get("users", 1)))
            if disk.used + size > disk.capacity:
                self.disk.delete(block_hash)        # the capacity shrank since the last run
                continue
            disk.used += size
            disk.count += 1
            self.entries[block_hash] = entry
            if entry.parent is not None:
                self.children[entry.parent] = self.children.get(entry.parent, 0) + 1
        for entry in self.entries.values():
            self._push(entry)
