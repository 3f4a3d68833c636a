#!/usr/bin/env python3
"""Check the hand labels of the real-history corpus against the history files.

Parses every history file listed in data/real/sources.json (Aider
`.aider.chat.history.md`: a session per `# aider chat started at` header, a
request per run of consecutive `#### ` lines; SpecStory `.specstory/history/*.md`:
a session per file, a request per `_**User**_` block) and verifies that every
label in data/real/labels/hand.jsonl names a real session and turn, that its
request prefix matches the file exactly, and that every needed turn lies in an
EARLIER session of the same repository.

Usage: scripts/real-labels-check.py [--root DIR] [--list REPO]
  --list REPO  print the repository's sessions and requests (for labelling).
"""
import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict

AIDER_HDR = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
USER_HDR = re.compile(r"^_\*\*User(?: \([^)]*\))?\*\*_\s*$")
OTHER_HDR = re.compile(r"^_\*\*(?:Assistant|Agent)\b.*\*\*_\s*$")
PREFIX = 160


def clean(lines):
    """Request text: trailing whitespace of each line dropped, outer blank lines dropped."""
    text = "\n".join(line.rstrip() for line in lines).strip()
    if text.endswith("\n---") or text == "---":
        text = text[:-3].rstrip()
    return text


def parse_aider(text):
    """[(session_start, [(request, answer)])] in file order."""
    sessions = []
    turn = None
    in_req = False
    for line in text.split("\n"):
        m = AIDER_HDR.match(line)
        if m:
            sessions.append((m.group(1), []))
            turn = None
            in_req = False
            continue
        if not sessions:
            continue
        if line.startswith("#### "):
            if not in_req:
                turn = ([], [])
                sessions[-1][1].append(turn)
                in_req = True
            turn[0].append(line[5:])
        else:
            in_req = False
            if turn is not None:
                turn[1].append(line)
    return [(s, [(clean(r), "\n".join(a)) for r, a in turns]) for s, turns in sessions]


def parse_specstory(text):
    """[(request, answer)] of one SpecStory file."""
    turns = []
    mode = None
    for line in text.split("\n"):
        if USER_HDR.match(line):
            turns.append(([], []))
            mode = 0
            continue
        if OTHER_HDR.match(line):
            mode = 1
            continue
        if turns and mode is not None:
            turns[-1][mode].append(line)
    return [(clean(u), "\n".join(a)) for u, a in turns]


def load_repo(root, src):
    """Sessions of one repository in order: [(session_key, kind, file, turns)]."""
    sessions = []
    base = os.path.join(root, "raw", src["repo"].replace("/", "__"))
    for f in src["files"]:
        with open(os.path.join(base, f["path"]), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if f["kind"] == "aider":
            for start, turns in parse_aider(text):
                sessions.append((start, "aider", f["path"], turns))
        else:
            sessions.append((os.path.basename(f["path"]), "specstory", f["path"],
                             parse_specstory(text)))
    sessions.sort(key=lambda s: s[0])
    return sessions


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "data", "real"))
    ap.add_argument("--list")
    ap.add_argument("--by-turn", metavar="SPLIT",
                    help="also print, for one split (train or heldout), how many labelled "
                         "requests need an earlier turn when they open their session and "
                         "when they do not, and where the nearest needed turn of each "
                         "request that needs one lies (sessions back, turns before the end "
                         "of its session)")
    args = ap.parse_args()
    root = args.root
    with open(os.path.join(root, "sources.json")) as fh:
        sources = json.load(fh)
    repos = {s["repo"]: load_repo(root, s) for s in sources}
    if args.list:
        for i, (key, kind, path, turns) in enumerate(repos[args.list]):
            print(f"== S{i} {key} ({len(turns)} turns)")
            for t, (req, _ans) in enumerate(turns, 1):
                print(f"  {t}: {req[:200]!r}")
        return 0
    index = {}
    for repo, sessions in repos.items():
        for order, (key, kind, path, turns) in enumerate(sessions):
            index[(repo, key)] = (order, kind, path, turns)
    errors = []
    counts = Counter()
    per_repo = defaultdict(Counter)
    by_turn = defaultdict(Counter)
    # Per repository: for each request needing an earlier turn, where the nearest needed
    # turn lies (sessions back, turns before its session's end) and whether it opens its own.
    nearest = defaultdict(list)
    seen = set()
    labels_path = os.path.join(root, "labels", "hand.jsonl")
    with open(labels_path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    for n, line in enumerate(lines, 1):
        where = f"hand.jsonl line {n}"
        try:
            lab = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"{where}: not JSON ({e})")
            continue
        for k in ("repo", "file", "kind", "session", "turn", "request", "needed", "why"):
            if k not in lab:
                errors.append(f"{where}: missing field {k!r}")
        if any(k not in lab for k in ("repo", "session", "turn", "request", "needed")):
            continue
        key = (lab["repo"], lab["session"])
        if key not in index:
            errors.append(f"{where}: no session {lab['session']!r} in {lab['repo']}")
            continue
        order, kind, path, turns = index[key]
        if lab.get("file") != path or lab.get("kind") != kind:
            errors.append(f"{where}: file/kind {lab.get('file')!r}/{lab.get('kind')!r}, "
                          f"expected {path!r}/{kind!r}")
        if (lab["repo"], lab["session"], lab["turn"]) in seen:
            errors.append(f"{where}: duplicate label for this turn")
        seen.add((lab["repo"], lab["session"], lab["turn"]))
        if order == 0:
            errors.append(f"{where}: session {lab['session']!r} has no earlier session")
        t = lab["turn"]
        if not (isinstance(t, int) and 1 <= t <= len(turns)):
            errors.append(f"{where}: turn {t!r} out of range 1..{len(turns)}")
            continue
        want = turns[t - 1][0][:PREFIX]
        if lab["request"] != want:
            errors.append(f"{where}: request prefix differs: {lab['request']!r} vs {want!r}")
        for need in lab["needed"]:
            nkey = (lab["repo"], need.get("session"))
            if nkey not in index:
                errors.append(f"{where}: needed session {need.get('session')!r} unknown")
                continue
            norder, _, _, nturns = index[nkey]
            if norder >= order:
                errors.append(f"{where}: needed session {need['session']!r} is not earlier")
            nt = need.get("turn")
            if not (isinstance(nt, int) and 1 <= nt <= len(nturns)):
                errors.append(f"{where}: needed turn {nt!r} out of range")
                continue
            if need.get("request") != nturns[nt - 1][0][:PREFIX]:
                errors.append(f"{where}: needed request prefix differs for "
                              f"{need['session']} turn {nt}")
        verdict = "needed" if lab["needed"] else "none"
        near = [(order - index[(lab["repo"], nd["session"])][0],
                 len(index[(lab["repo"], nd["session"])][3]) - nd["turn"])
                for nd in lab["needed"] if (lab["repo"], nd.get("session")) in index
                and isinstance(nd.get("turn"), int)]
        if near:
            nearest[lab["repo"]].append((min(near), t == 1))
        counts[verdict] += 1
        by_turn[(lab["repo"], "opens" if t == 1 else "later")][verdict] += 1
        per_repo[lab["repo"]][verdict] += 1
    for e in errors:
        print(e)
    split_path = os.path.join(root, "split.json")
    split = {}
    if os.path.exists(split_path):
        with open(split_path) as fh:
            sp = json.load(fh)
        split = {r: part for part in ("train", "heldout") for r in sp[part]}
    per_split = defaultdict(Counter)
    for repo, c in sorted(per_repo.items()):
        per_split[split.get(repo, "?")].update(c)
        print(f"{repo}: {c['needed'] + c['none']} labelled, {c['needed']} needed, "
              f"{c['none']} none [{split.get(repo, '?')}]")
    for part, c in sorted(per_split.items()):
        print(f"split {part}: {c['needed'] + c['none']} labelled, {c['needed']} needed, "
              f"{c['none']} none")
    print(f"total: {len(lines)} labels, {counts['needed']} needed, {counts['none']} none; "
          f"{len(errors)} errors")
    if args.by_turn:
        for where in ("opens", "later"):
            c = Counter()
            for (repo, w), n in by_turn.items():
                if w == where and split.get(repo) == args.by_turn:
                    c.update(n)
            what = "opening their session" if where == "opens" else "later in their session"
            print(f"split {args.by_turn}, requests {what}: {c['needed'] + c['none']}, "
                  f"{c['needed']} need an earlier turn")
        near = [x for repo, xs in nearest.items() if split.get(repo) == args.by_turn for x in xs]
        cap = lambda v: f"{v}" if v < 3 else "3+"
        back = Counter(cap(b) for (b, _), _o in near)
        end = Counter(cap(e) for (_b, e), _o in near)
        print(f"split {args.by_turn}, the nearest needed turn of {len(near)} requests, "
              "sessions back: " + ", ".join(f"{k}: {back[k]}" for k in ("1", "2", "3+")))
        print(f"split {args.by_turn}, the same, turns before its session's end: "
              + ", ".join(f"{k}: {end[k]}" for k in ("0", "1", "2", "3+")))
        opening = sum(1 for (b, e), o in near if o and b == 1 and e == 0)
        print(f"split {args.by_turn}, requests opening their session whose nearest need is the "
              f"previous session's last turn: {opening}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
