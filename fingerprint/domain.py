"""Zero-shot intent domain: nearest prototype sentences (EN + ZH) on the encoder, plus keyword rules."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from fingerprint.encoder import TextEncoder

DOMAINS_FILE = Path(__file__).parent / "data" / "domains.json"
KEYWORD_BONUS = 0.03          # a keyword tips a close call; it never beats a clear prototype match
OTHER_BELOW = 0.80            # best prototype similarity under which the domain is "other"


class DomainClassifier:
    def __init__(self, encoder: TextEncoder, path: Path = DOMAINS_FILE):
        data = json.loads(Path(path).read_text())
        self.domains = list(data)
        self.encoder = encoder
        self._prototypes = [encoder.encode(data[d]["prototypes"]) for d in self.domains]
        self._keywords = [re.compile("|".join(r"(?<![A-Za-z])%s(?![A-Za-z])" % re.escape(k) if k.isascii()
                                               else re.escape(k) for k in data[d]["keywords"]), re.I)
                          for d in self.domains]

    def scores(self, text: str, vector: np.ndarray | None = None) -> dict[str, float]:
        vector = self.encoder.encode_one(text) if vector is None else vector
        out = {}
        for domain, protos, keywords in zip(self.domains, self._prototypes, self._keywords):
            sims = np.sort(protos @ vector)[-3:]
            out[domain] = float(sims.mean()) + (KEYWORD_BONUS if keywords.search(text) else 0.0)
        return out

    def classify(self, text: str, vector: np.ndarray | None = None) -> tuple[str, float]:
        scores = self.scores(text, vector)
        best = max(scores, key=scores.get)
        return (best if scores[best] >= OTHER_BELOW else "other"), scores[best]
