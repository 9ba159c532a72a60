"""The replay's PNG: latency CDFs by mode, and hit rate and false-hit rate against the threshold."""
from __future__ import annotations

from pathlib import Path


def plot_results(results: dict, path: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install matplotlib") from None
    from gateway.replay.calibrate import curves
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for mode, rows in results["rows"].items():
        latencies = sorted(r["ms"] for r in rows if r["status"] == 200)
        if latencies:
            left.plot(latencies, [(i + 1) / len(latencies) for i in range(len(latencies))], label=mode)
    left.set_xscale("log")
    left.set_xlabel("latency (ms, log scale)")
    left.set_ylabel("fraction of requests")
    left.set_title("Latency CDF by mode")
    left.grid(True, alpha=0.3)
    left.legend()
    sweep = results.get("sweep")
    if sweep:
        c = curves(sweep)
        right.plot(c["threshold"], c["hit_rate"], label="hit rate")
        right.plot(c["threshold"], c["false_hit_rate"], label="false-hit rate")
        right.set_yscale("symlog", linthresh=1e-3)
        right.set_xlabel("threshold (cosine of the best candidate; gates always on)")
        right.set_title("Hit and false-hit rate against the threshold")
        right.grid(True, alpha=0.3)
        right.legend()
    else:
        right.text(0.5, 0.5, "no labels: no threshold sweep", ha="center", va="center")
        right.set_axis_off()
    fig.suptitle(f"semcache replay: {results['dataset']['name']}, {results['dataset']['requests']} requests, "
                 f"model {results['model']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
