"""The disk tier's files: one file per KV block, named by its chained hash (the tenant salt is in it).

Layout of `<data_dir>/kv_tier/<hash hex>.kvb`:

    magic  b"SCKVBLK1"
    u32    header length (little endian)
    header JSON: parent hash, token ids, depth, protected, dtype, the tensors' names/dtypes/shapes
    payload: the tensors' bytes, in header order
    16-byte blake2b digest of header + payload

A file is written to a temporary name and renamed into place, so a reader
never sees a half-written file under its real name; a torn or corrupted file
(a crash mid-write before the rename leaves only a temp file, a bad disk or a
truncation leaves a short one) fails the digest. It is then skipped, counted
and deleted: never served. At start-up the directory is scanned (headers
only) to rebuild the index; temp files of a crashed writer are removed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
from pathlib import Path

import torch

log = logging.getLogger("semcache.engine.kv_tier")

MAGIC = b"SCKVBLK1"
SUFFIX = ".kvb"
DIGEST = 16
REQUIRED = {"hash", "parent", "tokens", "depth", "protected", "dtype", "tensors"}
_DTYPES = {str(d): d for d in (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8)}


class CorruptBlock(ValueError):
    pass


def encode_file(meta: dict, payload: dict[str, torch.Tensor]) -> bytes:
    tensors = [[name, str(t.dtype), list(t.shape)] for name, t in payload.items()]
    header = json.dumps({**meta, "tensors": tensors}, separators=(",", ":")).encode()
    # a byte view, not numpy: numpy has no bfloat16
    body = b"".join(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes() for t in payload.values())
    digest = hashlib.blake2b(header + body, digest_size=DIGEST).digest()
    return MAGIC + struct.pack("<I", len(header)) + header + body + digest


def read_header(raw: bytes) -> tuple[dict, int]:
    """(header, offset of the payload); CorruptBlock if the framing is wrong."""
    if len(raw) < len(MAGIC) + 4 or raw[:len(MAGIC)] != MAGIC:
        raise CorruptBlock("bad magic")
    (size,) = struct.unpack_from("<I", raw, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        header = json.loads(raw[start:start + size])
    except (ValueError, UnicodeDecodeError):
        raise CorruptBlock("bad header") from None
    if not isinstance(header, dict) or "tensors" not in header:
        raise CorruptBlock("bad header")
    return header, start + size


def decode_file(raw: bytes) -> tuple[dict, dict[str, torch.Tensor]]:
    header, offset = read_header(raw)
    start = len(MAGIC) + 4
    if len(raw) < offset + DIGEST:
        raise CorruptBlock("truncated")
    body = raw[offset:len(raw) - DIGEST]
    if hashlib.blake2b(raw[start:offset] + body, digest_size=DIGEST).digest() != raw[len(raw) - DIGEST:]:
        raise CorruptBlock("checksum mismatch")
    payload, pos = {}, 0
    for name, dtype, shape in header["tensors"]:
        dt = _DTYPES[dtype]
        n = dt.itemsize
        for s in shape:
            n *= s
        payload[name] = torch.frombuffer(bytearray(body[pos:pos + n]), dtype=torch.uint8).view(dt).reshape(shape)
        pos += n
    if pos != len(body):
        raise CorruptBlock("payload size mismatch")
    return header, payload


class DiskFiles:
    """The directory: write, read (verified), delete, scan. Capacity and ranking live in kv_tiers."""

    def __init__(self, directory: str | Path, fsync: bool = False):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync            # survives power loss too; a killed process needs no fsync
        self.num_corrupt = 0

    def path(self, block_hash: int) -> Path:
        return self.dir / f"{block_hash:032x}{SUFFIX}"

    def write(self, block_hash: int, meta: dict, payload: dict[str, torch.Tensor]) -> int:
        data = encode_file(meta, payload)
        final = self.path(block_hash)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            if self.fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, final)
        return len(data)

    def read(self, block_hash: int) -> dict[str, torch.Tensor] | None:
        """The block's tensors, or None when the file is missing or corrupt (corrupt: counted, deleted)."""
        path = self.path(block_hash)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            header, payload = decode_file(raw)
            if int(header["hash"], 16) != block_hash:
                raise CorruptBlock("hash mismatch")
            return payload
        except (CorruptBlock, KeyError, ValueError, TypeError) as exc:
            self.num_corrupt += 1
            log.warning("disk tier: %s is corrupt (%s); deleted, never served", path.name, exc)
            self.delete(block_hash)
            return None

    def delete(self, block_hash: int) -> None:
        try:
            self.path(block_hash).unlink()
        except FileNotFoundError:
            pass

    def scan(self) -> list[tuple[dict, int]]:
        """(header, file size) of every block file; leftovers of crashed writers and unreadable headers are
        removed (the payload digest is checked on each read)."""
        found = []
        for path in self.dir.iterdir():
            if path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)
                continue
            if not path.name.endswith(SUFFIX):
                continue
            try:
                with open(path, "rb") as f:
                    head = f.read(len(MAGIC) + 4)
                    if len(head) < len(MAGIC) + 4:
                        raise CorruptBlock("truncated")
                    (size,) = struct.unpack_from("<I", head, len(MAGIC))
                    header, _ = read_header(head + f.read(size))
                if f"{int(header['hash'], 16):032x}{SUFFIX}" != path.name:
                    raise CorruptBlock("name does not match hash")
                if not REQUIRED <= header.keys():
                    raise CorruptBlock("incomplete header")
                found.append((header, path.stat().st_size))
            except (CorruptBlock, KeyError, ValueError, TypeError, OSError) as exc:
                self.num_corrupt += 1
                log.warning("disk tier: %s is corrupt (%s); deleted", path.name, exc)
                path.unlink(missing_ok=True)
        return found
