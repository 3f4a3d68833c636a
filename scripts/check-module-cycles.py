#!/usr/bin/env python3
"""No import circles between a crate's top-level modules.

For every crate under crates/ (and src-tauri/), each top-level module (`foo.rs` or `foo/`,
with everything under it) is a node; `crate::foo…` in another module's code is an edge
(`crate::Name` counts toward the module the crate root re-exports `Name` from). Test
modules (`#[cfg(test)] mod tests`) are left out: a test may reach across. A circle
(modules that reach each other, directly or through others) is printed with one reference
for each of its edges, and the check fails. Prints "ok: …" otherwise.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(text: str) -> str:
    """Code without comments, string and char literals, and the trailing test module."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            i = n if j < 0 else j + len(close)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and (m := re.match(r"'(?:\\.[^']*|[^'\\])'", text[i:i + 12])):
            i += m.end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))?\s+)?mod\s+tests?\b", code)
    return code[: cut.start()] if cut else code


def group_heads(body: str) -> list[str]:
    """The first path segment of each entry of a `{…}` use group (depth one)."""
    heads, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            heads.append(cur)
            cur = ""
            continue
        if depth == 0 and ch != "}":
            cur += ch
    heads.append(cur)
    out = []
    for h in heads:
        m = re.match(rf"\s*({IDENT})", h)
        if m:
            out.append(m.group(1))
    return out


def references(code: str) -> list[str]:
    """First segments after `crate::` (groups opened)."""
    found = []
    i = 0
    for m in re.finditer(r"\bcrate\s*::\s*", code):
        rest = code[m.end() :]
        if rest.startswith("{"):
            depth, j = 0, 0
            for j, ch in enumerate(rest):
                depth += ch == "{"
                depth -= ch == "}"
                if depth == 0:
                    break
            found.extend(group_heads(rest[1:j]))
        else:
            h = re.match(IDENT, rest)
            if h:
                found.append(h.group(0))
        i += 1
    return found


def reexports(root_code: str, modules: set[str]) -> dict[str, str]:
    """Names the crate root re-exports, mapped to the module they come from."""
    names = {}
    for m in re.finditer(rf"\bpub(?:\([a-z]+\))?\s+use\s+(?:self::|crate::)?({IDENT})\s*::\s*", root_code):
        module = m.group(1)
        if module not in modules:
            continue
        rest = root_code[m.end() :]
        if rest.startswith("{"):
            end = rest.find(";")
            body = rest[1:end]
            for entry in re.findall(rf"({IDENT})(?:\s+as\s+({IDENT}))?\s*(?:,|}}|$)", body):
                names[entry[1] or entry[0]] = module
        else:
            e = re.match(rf"(?:{IDENT}\s*::\s*)*({IDENT}|\*)(?:\s+as\s+({IDENT}))?", rest)
            if e and e.group(1) != "*":
                names[e.group(2) or e.group(1)] = module
    return names


def crate_cycles(src: pathlib.Path) -> list[str]:
    roots = [p for p in (src / "lib.rs", src / "main.rs") if p.exists()]
    if not roots:
        return []
    modules: dict[str, list[pathlib.Path]] = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src)
        if rel.parts[0] in ("lib.rs", "main.rs") or rel.parts[0] == "bin":
            continue
        name = rel.parts[0].removesuffix(".rs")
        modules.setdefault(name, []).append(f)
    names = set(modules)
    alias = {}
    for r in roots:
        alias.update(reexports(strip(r.read_text()), names))
    edges: dict[str, dict[str, str]] = {m: {} for m in names}
    for module, files in modules.items():
        for f in sorted(files):
            code = strip(f.read_text())
            for head in references(code):
                target = head if head in names else alias.get(head)
                if target and target != module and target not in edges[module]:
                    edges[module][target] = f"{f.relative_to(ROOT)} uses crate::{head}"
    # Tarjan's strongly connected components.
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(names):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:
        lines = [f"{src.parent.name}: {' ↔ '.join(comp)}"]
        for a in comp:
            for b in comp:
                if b in edges[a]:
                    lines.append(f"    {a} → {b}: {edges[a][b]}")
        out.append("\n".join(lines))
    return out


def main() -> int:
    crates = sorted(ROOT.glob("crates/*/src")) + [p for p in [ROOT / "src-tauri" / "src"] if p.exists()]
    problems = []
    for src in crates:
        problems.extend(crate_cycles(src))
    if problems:
        for p in problems:
            print(f"error: an import circle between modules of {p}", file=sys.stderr)
        print("Break each circle: move what both sides need into a module both may use, or one way only.", file=sys.stderr)
        return 1
    print(f"ok: no import circle between the modules of {len(crates)} crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
