"""Train the change-intent head and export it to validator/data/change_intent.onnx.

    python validator/training/build_dataset.py      # once: the labelled set
    python validator/training/train_change_intent.py

Features: multilingual-e5-small embeddings (fingerprint.TextEncoder) of the current
turn and the cached context, plus rule features (validator.change_intent). Model:
a one-hidden-layer MLP (torch, 64 units), class-weighted towards modify/switch,
since missing a change is the costly error. Prints held-out accuracy and the
recall of modify+switch, and writes the model card's numbers to
validator/data/change_intent_metrics.json.
"""
from __future__ import annotations

import json
import zlib
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fingerprint import Fingerprinter, TextEncoder  # noqa: E402
from validator.change_intent import LABELS, MODEL_FILE, features  # noqa: E402

DATA = Path(__file__).parent / "change_intent.jsonl"
METRICS = MODEL_FILE.with_name("change_intent_metrics.json")
HIDDEN = 64
CHANGE_RECALL = 0.995      # a change served as a hit is a wrong answer: keep 99.5% of them caught


def load(split: str, embed) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    rows = [r for r in rows if r["split"] == split]
    x = np.stack([features(r["new"], r["cached"], embed) for r in rows])
    y = np.array([LABELS.index(r["label"]) for r in rows])
    return x, y, rows


def fit(x: np.ndarray, y: np.ndarray) -> torch.nn.Module:
    """One small hidden layer: whether the turn is in a conversation changes what the embeddings mean."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], HIDDEN), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                torch.nn.Linear(HIDDEN, len(LABELS)), torch.nn.Softmax(dim=1))
    weights = torch.tensor([1.5, 1.0, 1.0])        # a missed change is the costly error
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(600):
        optimizer.zero_grad()
        loss = torch.nn.functional.nll_loss(torch.log(model(xt) + 1e-9), yt, weight=weights)
        loss.backward()
        optimizer.step()
    return model.eval()


def predict(model: torch.nn.Module, x: np.ndarray, same_threshold: float) -> np.ndarray:
    with torch.no_grad():
        probs = model(torch.from_numpy(x)).numpy()
    changed = 1 + probs[:, 1:].argmax(1)
    return np.where(probs[:, 0] >= same_threshold, 0, changed)


def evaluate(model: torch.nn.Module, x: np.ndarray, y: np.ndarray, same_threshold: float) -> dict:
    pred = predict(model, x, same_threshold)
    changed = y != 0
    return {"accuracy": float((pred == y).mean()), "change_recall": float((pred[changed] != 0).mean()),
            "same_recall": float((pred[~changed] == 0).mean()), "n": int(len(y))}


def main() -> None:
    torch.manual_seed(0)
    # the gateway embeds through the fingerprint (normalised text, shared cache): train on the same vectors
    embed = Fingerprinter(TextEncoder("e5-small")).embed
    x_train, y_train, _ = load("train", embed)
    x_test, y_test, rows_test = load("test", embed)
    # "same" must be earned: the smallest threshold that keeps 99.5% of the changes caught, chosen on a fifth of
    # the training groups that a first model did not see (the final model fits its training set too well)
    rows_train = [r for r in (json.loads(line) for line in DATA.read_text().splitlines()) if r["split"] == "train"]
    held = np.array([zlib.crc32(r["group"].encode()) % 5 == 0 for r in rows_train])
    probe = fit(x_train[~held], y_train[~held])
    same_threshold = next((t / 100 for t in range(50, 100) if evaluate(
        probe, x_train[held], y_train[held], t / 100)["change_recall"] >= CHANGE_RECALL), 0.99)
    model = fit(x_train, y_train)
    metrics = {"same_threshold": same_threshold, "train": evaluate(model, x_train, y_train, same_threshold),
               "test": evaluate(model, x_test, y_test, same_threshold)}
    for lang in ("en", "zh"):
        keep = np.array([r["lang"] == lang for r in rows_test])
        metrics[f"test_{lang}"] = evaluate(model, x_test[keep], y_test[keep], same_threshold)
    print(json.dumps(metrics, indent=2))
    torch.onnx.export(model.eval(), torch.from_numpy(x_test[:1]), str(MODEL_FILE), dynamo=False,
                      input_names=["features"], output_names=["probs"],
                      dynamic_axes={"features": {0: "batch"}, "probs": {0: "batch"}}, opset_version=17)
    METRICS.write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"wrote {MODEL_FILE} ({MODEL_FILE.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
