"""Configuration mistakes are errors, not silent defaults: unknown keys in semcache.toml, unknown SEMCACHE_*
variables (each named with the nearest valid key) and thresholds that contradict each other."""
from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path

# SEMCACHE_* variables that are not gateway settings: read by the engine, the kernels, the CLI or the tests
OTHER_VARIABLES = {"SEMCACHE_CONFIG", "SEMCACHE_KERNELS"}
OTHER_PREFIXES = ("SEMCACHE_TEST_",)


def _nearest(name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown_keys(fields: set[str], config: Path | None, environ: dict[str, str] | None = None) -> list[str]:
    """One message per key in the file or the environment that no setting reads."""
    errors = []
    if config is not None and config.exists():
        try:
            data = tomllib.loads(config.read_text())
        except tomllib.TOMLDecodeError as exc:
            return [f"{config} is not valid TOML: {exc}"]
        for key in data:
            if key not in fields:
                errors.append(f"{config}: unknown key {key!r}{_nearest(key, sorted(fields))}")
    variables = sorted("SEMCACHE_" + f.upper() for f in fields)
    for name in sorted(environ if environ is not None else os.environ):
        if not name.startswith("SEMCACHE_") or name in OTHER_VARIABLES or name.startswith(OTHER_PREFIXES):
            continue
        if name not in variables:
            errors.append(f"unknown environment variable {name}{_nearest(name, variables + sorted(OTHER_VARIABLES))}")
    return errors


def threshold_errors(thresholds: dict[str, dict[str, float]]) -> list[str]:
    errors = []
    for domain, values in thresholds.items():
        unknown = set(values) - {"accept", "candidate"}
        if unknown:
            errors.append(f"thresholds.{domain}: unknown key(s) {sorted(unknown)}; use 'accept' and 'candidate'")
        for key in ("accept", "candidate"):
            value = values.get(key)
            if value is not None and not 0.0 <= float(value) <= 1.0:
                errors.append(f"thresholds.{domain}.{key} = {value} is outside [0, 1] (a cosine similarity)")
        accept, candidate = values.get("accept"), values.get("candidate")
        if accept is not None and candidate is not None and float(accept) < float(candidate):
            errors.append(f"thresholds.{domain}: accept ({accept}) is below candidate ({candidate}); a hit must "
                          "clear the candidate band first")
    return errors
