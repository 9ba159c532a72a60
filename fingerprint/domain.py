"""Intent domain: a trained linear head over the fingerprint's e5 vector (ONNX, `data/domain_head.onnx`).

Trained by validator/training/train_domain_head.py on hand-written requests from several independent writers;
its card (`data/domain_head.json`) holds the held-out numbers and the risk rule: `medical_legal` as soon as
its probability reaches `medical_at`, since a request of that domain must never be served from the cache.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from fingerprint.encoder import TextEncoder

HEAD_FILE = Path(__file__).parent / "data" / "domain_head.onnx"
CARD_FILE = Path(__file__).parent / "data" / "domain_head.json"
CLASSES = ("chitchat", "travel_planning", "product_recommendation", "customer_support", "doc_rewrite", "code_qa",
           "realtime", "medical_legal", "other")
SERVABLE = frozenset({"chitchat", "travel_planning", "product_recommendation", "customer_support", "doc_rewrite"})
UNSURE_BELOW = 0.5      # a servable domain under this probability is `other` (stricter thresholds); a risky one stays


def decide(p: np.ndarray, medical_at: float) -> np.ndarray:
    """Class indices from rows of probabilities: `medical_legal` from `medical_at` on, else the most likely
    class, and `other` for a servable domain below UNSURE_BELOW."""
    out = p.argmax(1)
    unsure = np.isin(out, [CLASSES.index(c) for c in SERVABLE]) & (p.max(1) < UNSURE_BELOW)
    out[unsure] = CLASSES.index("other")
    out[p[:, CLASSES.index("medical_legal")] >= medical_at] = CLASSES.index("medical_legal")
    return out


class DomainClassifier:
    def __init__(self, encoder: TextEncoder, path: Path = HEAD_FILE):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1            # a 384 x 9 product: threads would cost more than they save
        options.inter_op_num_threads = 1
        self.encoder = encoder
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        card = json.loads(Path(path).with_suffix(".json").read_text())
        if tuple(card["classes"]) != CLASSES:
            raise ValueError(f"{path}: classes {card['classes']} are not {list(CLASSES)}")
        self.domains = list(CLASSES)
        self._medical_at = float(card["medical_at"])

    def _probabilities(self, text: str, vector: np.ndarray | None) -> np.ndarray:
        vector = self.encoder.encode_one(text) if vector is None else vector
        return self._session.run(None, {"vector": np.asarray(vector, dtype=np.float32).reshape(1, -1)})[0]

    def scores(self, text: str, vector: np.ndarray | None = None) -> dict[str, float]:
        return dict(zip(self.domains, map(float, self._probabilities(text, vector)[0])))

    def classify(self, text: str, vector: np.ndarray | None = None) -> tuple[str, float]:
        p = self._probabilities(text, vector)
        k = int(decide(p, self._medical_at)[0])
        return CLASSES[k], float(p[0, k])
