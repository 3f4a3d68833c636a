#!/usr/bin/env python3
"""Can a request alone say whether it needs earlier work? Read on the real train split.

Reads the rows `cairn eval real data/real --split train --note --rows ROWS` wrote (each
hand-labelled request, its candidates and their inputs) and fits a logistic regression per
repository left out, predicting "this request needs a turn of an earlier session" (its hand
label names one) from what the request itself carries:

- position: how many of its session's requests came before it (`session_turns`), how many
  words it has, the share of its words and of its names the memory holds (`query_words`,
  `query_known`, `names_known`), as the ranker reads them;
- meaning: the request's embedding (all-MiniLM-L6-v2), read from the evaluations' cache
  (`<data>/eval-embeddings/model_*.bin`, keyed by the text's SHA-256; a request the cache
  lacks, such as a short one searched together with the one before, is left out and counted);
- words: TF-IDF of its words (unigrams and bigrams);

and each together. It prints the area under the ROC curve of the out-of-fold predictions
(every repository scored by a model fitted without it), and at the gate's threshold that
keeps 90 % of the requests needing earlier work, the share of the others it would silence.

    python3 scripts/real-gate.py ROWS --cache EVAL_EMBEDDINGS.bin

Needs `numpy` and `scikit-learn` (PyPI). Reads only the rows given: run it on the train split.
"""
import argparse
import hashlib
import sys

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

import jsonl

POSITION = ["session_turns", "query_words", "query_known", "names_known"]


def load_cache(path):
    """{sha256(text): vector} of a cache file `cairn_eval::embed_cache` wrote."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != b"CRNEMB01":
        sys.exit(f"{path}: not an embedding cache of the evaluations (no CRNEMB01 header)")
    dim = int.from_bytes(data[8:12], "little")
    size = 32 + 4 * dim
    body = data[12:]
    n = len(body) // size
    table = np.frombuffer(body[: n * size], dtype=np.uint8).reshape(n, size)
    vectors = table[:, 32:].copy().view(np.float32).reshape(n, dim)
    return {bytes(table[i, :32]): vectors[i] for i in range(n)}


def position(r):
    feats = r["candidates"][0]["features"] if r["candidates"] else {}
    out = []
    for name in POSITION:
        v = feats.get(name)
        # Missing (no names, no session) as its own value, beside a flag.
        out += [0.0 if v is None else float(v), float(v is None)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows")
    ap.add_argument("--cache", required=True, help="the evaluations' embedding cache file")
    args = ap.parse_args()
    rows = jsonl.read(args.rows)
    if "candidates" not in rows[0]:
        sys.exit(f"{args.rows}: expected the rows of `cairn eval real --note --rows`")
    cache = load_cache(args.cache)
    kept = [r for r in rows if hashlib.sha256(r["request"].encode()).digest() in cache]
    repos = np.array([r["repo"] for r in kept])
    y = np.array([bool(r["needed"]) for r in kept])
    print(f"{len(rows)} requests from {len(set(r['repo'] for r in rows))} repositories; "
          f"{len(kept)} with their embedding in the cache ({len(rows) - len(kept)} left out), "
          f"{int(y.sum())} of them need earlier work")
    if len(set(repos)) < 2 or y.all() or not y.any():
        sys.exit("need requests of two repositories or more, some needing earlier work and some not")
    pos = np.array([position(r) for r in kept])
    emb = np.array([cache[hashlib.sha256(r["request"].encode()).digest()] for r in kept])
    texts = [r["request"] for r in kept]

    def oof(build, c):
        p = np.zeros(len(y))
        for repo in sorted(set(repos)):
            fit = repos != repo
            x_fit, x_out = build(fit)
            model = LogisticRegression(C=c, max_iter=5000).fit(x_fit, y[fit])
            p[~fit] = model.predict_proba(x_out)[:, 1]
        return p

    def dense(*blocks):
        x = np.hstack(blocks)

        def build(fit):
            mu, sd = x[fit].mean(0), x[fit].std(0) + 1e-9
            return (x[fit] - mu) / sd, (x[~fit] - mu) / sd
        return build

    def words(*blocks):
        def build(fit):
            vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
            a = vec.fit_transform([t for t, f in zip(texts, fit) if f]).toarray()
            b = vec.transform([t for t, f in zip(texts, fit) if not f]).toarray()
            if blocks:
                x = np.hstack(blocks)
                mu, sd = x[fit].mean(0), x[fit].std(0) + 1e-9
                a = np.hstack([a, (x[fit] - mu) / sd])
                b = np.hstack([b, (x[~fit] - mu) / sd])
            return a, b
        return build

    print(f"\n{'inputs':<26} {'C':>5} {'AUC':>6} {'silenced at 90 % kept':>22}")
    for name, build in [("position", dense(pos)), ("meaning (embedding)", dense(emb)),
                        ("words (TF-IDF)", words()), ("position + meaning", dense(pos, emb)),
                        ("position + words", words(pos))]:
        for c in (0.01, 0.1, 1.0):
            p = oof(build, c)
            cut = np.quantile(p[y], 0.10)
            silenced = float(np.mean(p[~y] < cut))
            print(f"{name:<26} {c:>5g} {roc_auc_score(y, p):>6.3f} {silenced:>22.3f}")


if __name__ == "__main__":
    main()
