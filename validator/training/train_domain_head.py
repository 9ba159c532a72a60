"""Train the intent-domain head: a linear layer over the fingerprint's e5 vector, exported to ONNX.

    python validator/training/train_domain_head.py      # about 2 minutes on 2 cores

The data is the hand-written groups of `corpus/written/` (docs in corpus/SOURCES.md): every request, its three
rewordings and its three edits carry the group's domain, as the fingerprinter sees them (a follow-up with its
topic's earlier user turns). Writers' domains outside the policy's list are `other`, except `contracts` (legal
advice: `medical_legal`) and `shopping` (`product_recommendation`).

Held out twice: leave-one-writer-out over `written/` (each writer's groups scored by a head trained on the
others), and `written_unseen/`, which nothing here trains on. The risk rule (`medical_legal` as soon as its
probability reaches `medical_at`) is the largest value whose leave-one-writer-out recall of `medical_legal`
reaches the prototype classifier's of before (0.832 on the same rows), so the head does not serve more medical
or legal requests than the classifier it replaces. The card beside the model records the numbers.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fingerprint.domain import CARD_FILE, CLASSES, HEAD_FILE, decide              # noqa: E402
from fingerprint.encoder import TextEncoder                                        # noqa: E402
from fingerprint.fingerprinter import Fingerprinter                                # noqa: E402

CORPUS = Path(__file__).parent / "corpus"
WRITER_DOMAINS = {"contracts": "medical_legal", "shopping": "product_recommendation"}
MEDICAL_RECALL = 0.84           # the prototype classifier's recall of medical_legal on the same rows (0.832)
SCALE = 20.0                    # the vectors are unit length: logits need room


class Recorder:
    """Stands in for the domain classifier inside the fingerprinter, keeping what it is handed."""
    def __init__(self):
        self.seen: list[tuple[str, np.ndarray]] = []

    def classify(self, text, vector=None):
        self.seen.append((text, np.asarray(vector, dtype=np.float32)))
        return "other", 0.0


def writer(path: Path) -> str:
    """The writer session of a file: its name without the running number (en_a_03 -> en_a, mix_c_h2_01 -> mix_c_h2)."""
    return path.stem.rsplit("_", 1)[0]


def encode(folder: Path, fp: Fingerprinter) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    recorder = fp.domains
    recorder.seen.clear()
    vectors, labels, writers = [], [], []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            group = json.loads(line)
            domain = WRITER_DOMAINS.get(group["domain"], group["domain"])
            label = CLASSES.index(domain) if domain in CLASSES else CLASSES.index("other")
            for text in [group["request"], *group["same"], *group["modify"]]:
                fp.fingerprint((group.get("history") or []) + [{"role": "user", "content": text}])
                vectors.append(recorder.seen[-1][1])
                labels.append(label)
                writers.append(writer(path))
    return np.stack(vectors), np.array(labels), np.array(writers)


def fit(x: np.ndarray, y: np.ndarray, epochs: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Class-balanced softmax regression; returns the weights with the scale folded in."""
    torch.manual_seed(0)
    counts = np.bincount(y, minlength=len(CLASSES)).astype(np.float32)
    weight = torch.tensor(counts.sum() / np.maximum(counts, 1) / len(CLASSES))
    layer = torch.nn.Linear(x.shape[1], len(CLASSES))
    optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-2, weight_decay=1e-3)
    xt, yt = torch.tensor(x), torch.tensor(y)
    for _ in range(epochs):
        loss = torch.nn.functional.cross_entropy(layer(xt) * SCALE, yt, weight=weight)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return layer.weight.detach().numpy() * SCALE, layer.bias.detach().numpy() * SCALE


def probabilities(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    z = x @ w.T + b
    z = np.exp(z - z.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


def scores(pred: np.ndarray, y: np.ndarray) -> dict:
    risky = [CLASSES.index("realtime"), CLASSES.index("medical_legal")]
    safe = ~np.isin(y, risky)
    medical = y == CLASSES.index("medical_legal")
    return {"n": int(len(y)), "accuracy": round(float((pred == y).mean()), 4),
            "medical_legal_recall": round(float((pred[medical] == y[medical]).mean()), 4) if medical.any() else None,
            "servable_called_risky": round(float(np.isin(pred[safe], risky).mean()), 4),
            "per_domain": {c: f"{int((pred[y == k] == k).sum())}/{int((y == k).sum())}"
                           for k, c in enumerate(CLASSES) if (y == k).any()}}


def export(w: np.ndarray, b: np.ndarray, path: Path) -> None:
    """vector [n, 384] -> probabilities [n, classes]: a MatMul, an Add and a Softmax."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["vector", "w"], ["z0"]), helper.make_node("Add", ["z0", "b"], ["z"]),
         helper.make_node("Softmax", ["z"], ["probabilities"], axis=-1)],
        "domain_head",
        [helper.make_tensor_value_info("vector", TensorProto.FLOAT, ["n", w.shape[1]])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["n", len(CLASSES)])],
        [numpy_helper.from_array(w.T.astype(np.float32).copy(), "w"), numpy_helper.from_array(b.astype(np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="semcache")
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="write the model and card into this folder instead of "
                                                 "fingerprint/data")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2,
                        help="CPU threads (1 beside another job: two jobs' threads on two cores thrash)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started = time.time()
    fp = Fingerprinter(TextEncoder(backend="bf16", threads=args.threads), domains=Recorder())
    x, y, writers = encode(CORPUS / "written", fp)
    ux, uy, _ = encode(CORPUS / "written_unseen", fp)
    print(f"{len(y)} requests from {len(set(writers))} writers, {len(uy)} unseen, encoded in "
          f"{time.time() - started:.0f}s", flush=True)

    held = np.zeros((len(y), len(CLASSES)), dtype=np.float32)
    for name in sorted(set(writers)):
        w, b = fit(x[writers != name], y[writers != name])
        held[writers == name] = probabilities(w, b, x[writers == name])
    medical = y == CLASSES.index("medical_legal")
    medical_at = 0.5
    for candidate in (0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03):
        medical_at = candidate
        if (decide(held[medical], candidate) == CLASSES.index("medical_legal")).mean() >= MEDICAL_RECALL:
            break
    w, b = fit(x, y)
    card = {"version": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "classes": list(CLASSES),
            "medical_at": medical_at, "input": "the fingerprint's domain vector (e5-small, unit length)",
            "data": {"requests": int(len(y)), "writers": sorted(set(writers)),
                     "writer_domains": WRITER_DOMAINS, "other": "every other writer domain"},
            "leave_one_writer_out": scores(decide(held, medical_at), y),
            "unseen": scores(decide(probabilities(w, b, ux), medical_at), uy),
            "train_seconds": round(time.time() - started)}
    folder = args.out or HEAD_FILE.parent
    folder.mkdir(parents=True, exist_ok=True)
    export(w, b, folder / HEAD_FILE.name)
    (folder / CARD_FILE.name).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(card, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
