"""What a request asks of its answer beyond the messages (model, length, stop strings, sampling), and whether
a stored answer honours it. A stored answer is served only where the backend could have produced it for this
request: otherwise the request is answered by the backend (the conversation's prefix is still reused)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from gateway.cache.responses import approx_tokens


MISMATCHES = ("model", "max_tokens", "stop", "temperature", "penalty")      # the order in which `mismatch` looks


@dataclass(frozen=True)
class GenerationParams:
    model: str | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    temperature: float = 1.0            # OpenAI's default when the field is absent
    top_p: float = 1.0
    seed: int | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0

    @classmethod
    def from_body(cls, body: dict) -> "GenerationParams":
        """From a validated chat body (types are checked by gateway.validation)."""
        stop = body.get("stop")
        stops = (stop,) if isinstance(stop, str) else tuple(s for s in (stop or ()) if isinstance(s, str) and s)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        temperature, top_p = body.get("temperature"), body.get("top_p")

        def penalty(name: str) -> float:
            value = body.get(name)
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
        return cls(model=body.get("model") if isinstance(body.get("model"), str) else None,
                   max_tokens=limit if isinstance(limit, int) else None, stop=stops,
                   temperature=1.0 if temperature is None else float(temperature),
                   top_p=1.0 if top_p is None else float(top_p),
                   seed=body.get("seed") if isinstance(body.get("seed"), int) else None,
                   presence_penalty=penalty("presence_penalty"), frequency_penalty=penalty("frequency_penalty"))

    def record(self) -> dict:
        """Stored with the entry (`usage.request`)."""
        return {**asdict(self), "stop": list(self.stop)}

    @property
    def key(self) -> tuple:
        """Requests that may share one in-flight answer (coalescing) have equal keys."""
        return (self.model, self.max_tokens, self.stop, self.temperature, self.top_p, self.seed,
                self.presence_penalty, self.frequency_penalty)

    @property
    def plain(self) -> bool:
        """Asks for the model's answer as any user would get it: no stop strings, penalties or seed, and
        sampling at most at OpenAI's default. Only such an answer may cross users (promotion): another one is
        shaped by what its own request asked."""
        return not self.stop and not self.presence_penalty and not self.frequency_penalty and self.seed is None \
            and self.temperature <= 1.0 and self.top_p == 1.0


def mismatch(params: GenerationParams, entry: dict, allow_sampled: bool) -> str | None:
    """Why `entry`'s answer cannot serve a request with `params`, or None when it can.

    - another model: the answer was produced by, and is labelled with, another model;
    - `max_tokens` below the stored answer's length: the backend would have cut it (finish_reason "length");
    - a `stop` string inside the stored answer: the backend would have stopped before it;
    - a stop string of the stored answer's own request that this request lacks: the answer may have been cut
      there ("Who wrote Moby Dick?" with stop "Herman" ends before the name);
    - sampling (temperature > 0) when the operator does not allow hits for sampled requests;
    - a sampled answer (its request's temperature > 0) for a request that samples otherwise or not at all: a
      draw at temperature 1.6 is not what a greedy request gets;
    - other presence or frequency penalties than the stored answer's request had.
    An entry without a stored request (warmed by an admin) is taken as the model's plain answer.
    """
    stored = (entry.get("usage") or {}).get("request") or {}
    if (params.model or None) != (stored.get("model") or None) and stored:
        return "model"
    text = entry.get("answer_text") or ""
    # a warmed answer has no token count of its own: estimated from its text
    answer_tokens = int(entry.get("answer_tokens") or (entry.get("usage") or {}).get("completion_tokens")
                        or approx_tokens(text))
    if params.max_tokens is not None and answer_tokens > params.max_tokens:
        return "max_tokens"
    if any(s in text for s in params.stop) or not set(stored.get("stop") or ()) <= set(params.stop):
        return "stop"
    if params.temperature > 0 and not allow_sampled:
        return "temperature"
    sampled_at = float(stored.get("temperature") or 0.0), float(stored.get("top_p", 1.0))
    if sampled_at[0] > 0 and sampled_at != (params.temperature, params.top_p):
        return "temperature"
    if (float(stored.get("presence_penalty") or 0.0), float(stored.get("frequency_penalty") or 0.0)) != \
            (params.presence_penalty, params.frequency_penalty):
        return "penalty"
    return None
