"""Reading the JSON-lines files the evaluations write (`cairn eval real --rows`, `cairn
ranker train --examples`), for the scripts beside this one."""
import json


def read(path):
    """Every non-blank line of `path` as JSON; exits naming the file and line of one that is
    not, or when the file holds none."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise SystemExit(f"{path} line {n}: not JSON ({e})")
    if not rows:
        raise SystemExit(f"{path} holds no rows")
    return rows
