#!/usr/bin/env python3
"""Checks scripts/real-rows.py on rows made here: its note figures, the perfect gate's
ceiling, and --against. Standard library only; run by scripts/test.sh.

    python3 scripts/check-real-rows.py
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def cand(cid, session, p, rank, needed, shown):
    return {"id": cid, "kind": "record", "session": session, "needed": needed, "shown": shown,
            "probability": p, "features": {"rank": rank}, "text": cid}


ROWS = [
    # Needs r1: the most probable (r2) is not it but shares its session; the retriever's
    # first is r1; the note shows r2 (wrong).
    {"repo": "a/x", "group": "real:a/x:0", "request": "q0", "needed": ["r1"], "candidates": [
        cand("r1", "s1", 0.2, 0.0, True, False), cand("r2", "s1", 0.6, 1.0, False, True)]},
    # Needs r3: most probable and shown.
    {"repo": "a/x", "group": "real:a/x:1", "request": "q1", "needed": ["r3"], "candidates": [
        cand("r3", "s2", 0.7, 1.0, True, True), cand("r4", "s3", 0.1, 0.0, False, False)]},
    # Needs nothing, silent.
    {"repo": "b/y", "group": "real:b/y:0", "request": "q2", "needed": [], "candidates": [
        cand("r5", "s4", 0.1, 0.0, False, False)]},
]


def run(*args):
    out = subprocess.run([sys.executable, os.path.join(HERE, "real-rows.py"), *args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"real-rows.py {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def expect(text, want):
    if want not in text:
        sys.exit(f"real-rows.py printed:\n{text}\nwithout: {want}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        first, second = os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl")
        with open(first, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in ROWS)
        changed = json.loads(json.dumps(ROWS))
        changed[1]["candidates"][1]["probability"] = 0.2
        with open(second, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in changed)
        out = run(first)
        expect(out, "ALL: 3 requests, 2 need; 2 entries, 1 right: precision 0.500, hit rate "
                    "0.500, silence 1.000; 2 with a needed turn among the candidates: the most "
                    "probable is needed for 1 (0.500; another 1 lie in a needed turn's session), "
                    "the retriever's first for 1 (0.500)")
        out = run(first, "--against", second)
        expect(out, "a/x: 1 of 2 requests' candidates differ")
        expect(out, "ALL: 1 of 3 requests' candidates differ")
    print("real-rows.py: note figures, the perfect gate's ceiling and --against as expected")


if __name__ == "__main__":
    main()
