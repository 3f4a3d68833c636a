#!/usr/bin/env python3
"""How much the real train split should weigh in the ranker's training.

Reads the examples `cairn ranker train … --real data/real --examples FILE` wrote (the owned
set's candidates and the real train split's, one JSON line each) and, for each weight given,
fits the ranker's LightGBM model once per real repository with that repository left out
(the owned set always in), scoring the left-out repository's candidates. It prints the
turn note's figures over the real requests at each bar (at most three entries at or above
it): entries shown, precision, hit rate (requests needing an earlier turn whose note shows
one), silence (requests needing none with no note), and the lowest bar silent on 90 % of the
requests needing nothing.

Only the train split is in the file; the held-out split is never read here.

    python3 scripts/ranker-real-weight.py EXAMPLES.jsonl [--weights 1,3,10,30]
        [--most N] [--near SHARE] [--repos OWNER/NAME,...]
        [--settings LEAVES:PER_LEAF:TREES,...]

`--most` and `--near` read a rule on how many entries a note shows (at most N; an entry
after the first only when its probability is at least SHARE of the first's) on the same
out-of-fold probabilities. `--repos` prints the figures over those repositories' requests only
(every repository is still scored by models fitted without it). `--settings` reads LightGBM's
regularisation: each LEAVES:PER_LEAF:TREES (leaves a tree, fewest examples a leaf, trees) is
fitted and read the same way (by default only the command's own, 15:20:150).

After each table it prints the ceiling of a perfect gate on the same probabilities: over the
requests with a needed turn among the candidates, how often the most probable candidate is
needed and how often the retriever's first is, and, bar by bar, the precision a note of one
entry would have if it spoke on those requests only.

Needs `numpy` and `lightgbm` (PyPI). Unless `--settings` names others, the settings are the ones `cairn ranker train` uses
(150 trees, learning rate 0.05, 15 leaves, 20 examples a leaf, the monotone directions of
`cairn_turn::note::MONOTONE`), so the figures are of the model the command would make.
"""
import argparse
import collections
import sys

import lightgbm as lgb
import numpy as np

import jsonl

# cairn_turn::note::MONOTONE, by input name.
MONOTONE = {
    "fused": 1, "dense": 1, "keyword": 1, "rank": -1, "gap_to_best_other": -1,
    "same_project": 0, "item_kind": 0, "importance": 1, "uses": 1,
    "query_words": 0, "names_in": 1, "overlap": 1, "query_known": 1, "names_known": 1,
    "sessions_since": -1, "turns_after": 0, "quoted": 1, "session_turns": 0,
}
NAMES = list(MONOTONE)
BARS = [round(b, 2) for b in np.arange(0.1, 0.95, 0.05)]


def notes(p, y, groups, idx, bar, most=3, near=0.0):
    by_group = collections.defaultdict(list)
    for i in idx:
        by_group[groups[i]].append(i)
    shown = right = hits = need = silent = none = 0
    for members in by_group.values():
        members = np.array(members)
        order = members[np.argsort(-p[members], kind="stable")]
        kept = [i for i in order if p[i] >= bar][:most]
        # A second or third entry only when its probability is near the first's.
        kept = [i for i in kept if p[i] >= near * p[kept[0]]]
        shown += len(kept)
        right += sum(int(y[i]) for i in kept)
        if y[members].any():
            need += 1
            hits += int(any(y[i] for i in kept))
        else:
            none += 1
            silent += int(not kept)
    share = lambda a, b: a / b if b else 0.0
    return shown, share(right, shown), share(hits, need), share(silent, none)


def ceiling(p, X, y, groups, idx, bars):
    """What a perfect gate would leave: the requests with a needed candidate, the share whose
    most probable candidate is needed, the share whose retriever's first is, and per bar the
    entries and precision of one entry shown on those requests only."""
    by_group = collections.defaultdict(list)
    for i in idx:
        by_group[groups[i]].append(i)
    rank = X[:, NAMES.index("rank")]
    tops, firsts = [], []
    for members in by_group.values():
        members = np.array(members)
        if not y[members].any():
            continue
        tops.append((p[members].max(), y[members[np.argmax(p[members])]]))
        firsts.append(y[members[np.argmin(np.where(np.isnan(rank[members]), np.inf,
                                                    rank[members]))]])
    if not tops:
        return
    n = len(tops)
    best = sum(t for _, t in tops)
    print(f"a perfect gate: {n} requests with a needed turn among the candidates; the most "
          f"probable candidate is needed for {best} ({best / n:.3f}), the retriever's first "
          f"for {sum(firsts)} ({sum(firsts) / n:.3f})")
    print(f"{'bar':>5} {'entries':>8} {'precision':>10}   (one entry, on those requests only)")
    for bar in bars:
        kept = [t for q, t in tops if q >= bar]
        if kept:
            print(f"{bar:>5.2f} {len(kept):>8} {sum(kept) / len(kept):>10.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples")
    ap.add_argument("--weights", default="1,3,10,30")
    ap.add_argument("--most", type=int, default=3,
                    help="the most entries a note shows (the note's MAX_ENTRIES is 3)")
    ap.add_argument("--near", type=float, default=0.0,
                    help="show an entry after the first only when its probability is at "
                         "least this share of the first's (0: no such rule)")
    ap.add_argument("--settings", default="15:20:150",
                    help="LightGBM settings to read, LEAVES:PER_LEAF:TREES comma-separated "
                         "(the command's: 15:20:150)")
    ap.add_argument("--repos", default="",
                    help="print the figures over these repositories' requests only "
                         "(comma-separated owner/name)")
    args = ap.parse_args()
    rows = jsonl.read(args.examples)
    if not rows or len(rows[0]["features"]) != len(NAMES):
        sys.exit(f"{args.examples}: expected examples with {len(NAMES)} inputs ({', '.join(NAMES)})")
    X = np.array([[np.nan if v is None else v for v in r["features"]] for r in rows], float)
    y = np.array([int(r["label"]) for r in rows])
    groups = np.array([r["group"] for r in rows])
    # What the note does after the model (earlier showings not used), as the cross-fit scores.
    after = np.array([r.get("after", 1.0) for r in rows], float)
    keys = np.array([r["fold"] or r["group"] for r in rows])
    real = np.array([k.startswith("repository:") for k in keys])
    repos = sorted(set(keys[real]))
    if len(repos) < 2:
        sys.exit("fewer than two real repositories in the file: train with --real")
    print(f"{len(rows)} candidates, {real.sum()} of them real ({y[real].sum()} needed) "
          f"from {len(repos)} repositories")
    idx = np.where(real)[0]
    if args.repos:
        only = {f"repository:{r.strip()}" for r in args.repos.split(",") if r.strip()}
        missing = sorted(r[len("repository:"):] for r in only - set(repos))
        if missing:
            sys.exit(f"not in the file: {', '.join(missing)}")
        idx = np.where(np.isin(keys, sorted(only)))[0]
        print(f"figures over {len(only)} of them: {len(set(groups[idx]))} requests")
    settings = []
    for item in args.settings.split(","):
        try:
            leaves, per_leaf, trees = (int(v) for v in item.split(":"))
        except ValueError:
            sys.exit(f"--settings: {item!r} is not LEAVES:PER_LEAF:TREES (three whole numbers)")
        if leaves < 2 or per_leaf < 1 or trees < 1:
            sys.exit(f"--settings: {item!r} needs at least 2 leaves, 1 example a leaf, 1 tree")
        settings.append((leaves, per_leaf, trees))
    summary = []
    for w, (leaves, per_leaf, trees) in [(float(x), s) for x in args.weights.split(",")
                                          for s in settings]:
        p = np.full(len(y), np.nan)
        for repo in repos:
            fit = keys != repo
            data = lgb.Dataset(X[fit], y[fit], weight=np.where(real, w, 1.0)[fit],
                               feature_name=NAMES)
            model = lgb.train(dict(objective="binary", verbosity=-1, seed=7, deterministic=True,
                                   learning_rate=0.05, num_leaves=leaves,
                                   min_data_in_leaf=per_leaf,
                                   force_row_wise=True,
                                   monotone_constraints=[MONOTONE[n] for n in NAMES]),
                              data, trees)
            p[keys == repo] = model.predict(X[keys == repo]) * after[keys == repo]
        print(f"\nreal weight {w:g}, {leaves} leaves, {per_leaf} a leaf, {trees} trees "
              f"(each real repository scored by a model that never saw it; "
              f"at most {args.most} entries"
              + (f", each after the first at least {args.near:g} of the first's" if args.near else "")
              + ")")
        print(f"{'bar':>5} {'entries':>8} {'precision':>10} {'hit rate':>9} {'silence':>8}")
        quiet = None
        for bar in BARS:
            shown, prec, hit, sil = notes(p, y, groups, idx, bar, args.most, args.near)
            if quiet is None and sil >= 0.9:
                quiet = (bar, shown, prec, hit, sil)
            print(f"{bar:>5.2f} {shown:>8} {prec:>10.3f} {hit:>9.3f} {sil:>8.3f}")
        print(f"lowest bar silent on 90 % of the requests needing nothing: "
              f"{quiet[0] if quiet else None}")
        ceiling(p, X, y, groups, idx, BARS)
        summary.append((w, leaves, per_leaf, trees, quiet))
    if len(summary) > 1:
        print("\nat each one's lowest bar silent on 90 % of the requests needing nothing:")
        print(f"{'weight':>6} {'leaves':>6} {'a leaf':>6} {'trees':>5} {'bar':>5} {'entries':>8} "
              f"{'precision':>10} {'hit rate':>9} {'silence':>8}")
        for w, leaves, per_leaf, trees, quiet in summary:
            cells = (f"{quiet[0]:>5.2f} {quiet[1]:>8} {quiet[2]:>10.3f} {quiet[3]:>9.3f} "
                     f"{quiet[4]:>8.3f}" if quiet else f"{'none':>5}")
            print(f"{w:>6g} {leaves:>6} {per_leaf:>6} {trees:>5} {cells}")


if __name__ == "__main__":
    main()
