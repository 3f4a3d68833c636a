#!/usr/bin/env python3
"""Split the real-history corpus by repository: a seeded shuffle holds a third out.

Reads data/real/sources.json and writes data/real/split.json as
{"seed": 27, "train": [repos], "heldout": [repos]}.
"""
import json
import os
import random

SEED = 27
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "real")
with open(os.path.join(root, "sources.json")) as fh:
    repos = sorted(s["repo"] for s in json.load(fh))
order = repos[:]
random.Random(SEED).shuffle(order)
n_held = round(len(order) / 3)
split = {"seed": SEED, "train": sorted(order[n_held:]), "heldout": sorted(order[:n_held])}
with open(os.path.join(root, "split.json"), "w") as fh:
    json.dump(split, fh, indent=1)
    fh.write("\n")
print(json.dumps(split, indent=1))
