#!/usr/bin/env python3
"""Split the real-history corpus by repository: a seeded shuffle holds a third out.

Reads data/real/sources.json and data/real/split.json and writes split.json as
{"seed": 27, "train": [repos], "heldout": [repos]}.

A repository already in split.json keeps its side: figures reported on the held-out side
stay on repositories nothing was chosen on, and nothing chosen on the train side moves
into the held-out figures. Repositories added since (in sources.json, not in split.json)
are shuffled among themselves with the seed and a third of them (rounded) held out, so
the rule that first split the corpus splits each addition the same way.
"""
import json
import os
import random

SEED = 27
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "real")
with open(os.path.join(root, "sources.json")) as fh:
    repos = sorted(s["repo"] for s in json.load(fh))
split_path = os.path.join(root, "split.json")
train, held = [], []
if os.path.exists(split_path):
    with open(split_path) as fh:
        old = json.load(fh)
    train = [r for r in old["train"] if r in repos]
    held = [r for r in old["heldout"] if r in repos]
new = [r for r in repos if r not in train and r not in held]
random.Random(SEED).shuffle(new)
n_held = round(len(new) / 3)
held += new[:n_held]
train += new[n_held:]
split = {"seed": SEED, "train": sorted(train), "heldout": sorted(held)}
with open(split_path, "w") as fh:
    json.dump(split, fh, indent=1)
    fh.write("\n")
print(json.dumps(split, indent=1))
