#!/usr/bin/env python3
"""Figures of `cairn eval real --rows FILE` by repository, or over a set of repositories.

Reads the rows a run wrote and prints, for each repository (and for `--set NAME=a/b,c/d`
groups, repeatable):
- retrieval rows (`cairn eval real --rows`): per setup, the needed requests measured and how
  many had a needed turn in the top 1 / 3 / 10;
- note rows (`cairn eval real --note --rows`): requests, needing ones, entries shown, right
  ones, precision, hit rate and silence on the requests needing nothing; and the ceiling of
  a perfect gate: over the requests with a needed turn among the candidates, how often the
  most probable candidate is needed (the precision a note of one entry would have if it
  spoke exactly on those requests) or, not needed, lies in a needed turn's session, and how
  often the retriever's first candidate is needed.

`--against OTHER` compares two runs' rows instead: for each repository, how many requests'
candidates (their ids, order and inputs) differ between ROWS and OTHER.

Usage: scripts/real-rows.py ROWS [--set NAME=owner/repo,owner/repo ...] [--against OTHER]
"""
import argparse
import jsonl
from collections import Counter, defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=REPO,REPO")
    ap.add_argument("--against", metavar="OTHER", help="another run's rows to compare with")
    args = ap.parse_args()
    if args.against:
        return compare(jsonl.read(args.rows), jsonl.read(args.against), args.against)
    sets = {}
    for s in args.set:
        name, _, repos = s.partition("=")
        sets[name] = set(r for r in repos.split(",") if r)
    rows = jsonl.read(args.rows)
    groups = lambda repo: [repo, "ALL"] + [k for k, v in sets.items() if repo in v]
    tally = defaultdict(Counter)
    note = "candidates" in rows[0]
    for r in rows:
        for g in groups(r["repo"]):
            if note:
                c = tally[g]
                shown = [x for x in r["candidates"] if x["shown"]]
                need = bool(r["needed"])
                c["requests"] += 1
                c["need"] += need
                c["entries"] += len(shown)
                c["right"] += sum(1 for x in shown if x["needed"])
                c["hit"] += need and any(x["needed"] for x in shown)
                c["no_need"] += not need
                c["silent"] += (not need) and not shown
                cands = r["candidates"]
                if any(x["needed"] for x in cands):
                    c["reach"] += 1
                    best = max(cands, key=lambda x: x["probability"])
                    c["best"] += best["needed"]
                    sessions = {x["session"] for x in cands if x["needed"]}
                    c["beside"] += (not best["needed"]) and best["session"] in sessions
                    ranked = [x for x in cands if x["features"].get("rank") is not None]
                    if ranked:
                        first = min(ranked, key=lambda x: x["features"]["rank"])
                        c["first"] += first["needed"]
            else:
                c = tally[(g, r["setup"])]
                c["n"] += 1
                for k in (1, 3, 10):
                    c[k] += r["rank"] is not None and r["rank"] <= k
    share = lambda a, b: f"{a / b:.3f}" if b else "-"
    for key in sorted(tally, key=str):
        c = tally[key]
        if note:
            print(f"{key}: {c['requests']} requests, {c['need']} need; {c['entries']} entries, "
                  f"{c['right']} right: precision {share(c['right'], c['entries'])}, hit rate "
                  f"{share(c['hit'], c['need'])}, silence {share(c['silent'], c['no_need'])}; "
                  f"{c['reach']} with a needed turn among the candidates: the most probable "
                  f"is needed for {c['best']} ({share(c['best'], c['reach'])}; another "
                  f"{c['beside']} lie in a needed turn's session), the "
                  f"retriever's first for {c['first']} ({share(c['first'], c['reach'])})")
        else:
            g, setup = key
            print(f"{g} [{setup}]: {c['n']} needed; top 1 / 3 / 10: {c[1]} / {c[3]} / {c[10]} "
                  f"({share(c[1], c['n'])} / {share(c[3], c['n'])} / {share(c[10], c['n'])})")


def compare(rows, other, name):
    """Prints, by repository, the requests whose candidates differ from the other run's."""
    key = lambda r: (r["repo"], r["group"])
    theirs = {key(r): r for r in other}
    if set(theirs) != {key(r) for r in rows}:
        raise SystemExit(f"{name} holds other requests than the rows compared with it")
    tally = defaultdict(Counter)
    for r in rows:
        for g in (r["repo"], "ALL"):
            tally[g]["requests"] += 1
            tally[g]["differ"] += r.get("candidates") != theirs[key(r)].get("candidates")
    for g in sorted(tally):
        print(f"{g}: {tally[g]['differ']} of {tally[g]['requests']} requests' candidates differ")


if __name__ == "__main__":
    main()
