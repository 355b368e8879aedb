#!/usr/bin/env python3
"""Build a knowledge graph of real Rust code: the module and `use` graph of the crates in the
local cargo registry (sources cargo downloaded: this workspace's dependencies and the bench
corpus's pinned crates), as the input of `graph_load`.

    build_code_graph.py --out target/bench-graph/graph.json [--max-crates N] [--items]

Nodes: one per crate (type `crate`), one per source file (type `file`), and with --items one
per public fn / struct / enum / trait (type `function` / `class`). Edges (all `from` uses or
contains `to`):
  declares  file -> file      `mod x;` in the parent
  imports   file -> file      `use crate::a::b…` / `self::` / `super::`, resolved to the
                              longest module path that is a file of the crate
  depends   file -> crate     `use other_crate::…` for another crate of the registry
  defines   file -> item      with --items
Standard library only; deterministic (crates and files in sorted order).
"""

import argparse
import json
import os
import re
import sys

USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)
ITEM = re.compile(r"^\s*pub\s+(?:async\s+|const\s+|unsafe\s+)*(fn|struct|enum|trait)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def crate_dirs(registry):
    out = []
    for index in sorted(os.listdir(registry)):
        base = os.path.join(registry, index)
        for name in sorted(os.listdir(base)):
            src = os.path.join(base, name, "src")
            if os.path.isfile(os.path.join(src, "lib.rs")):
                out.append((name, src))
    return out


def crate_name(dirname):
    # "serde_json-1.0.140" -> "serde_json"
    m = re.match(r"^(.*?)-\d+\.\d+", dirname)
    return (m.group(1) if m else dirname).replace("-", "_")


def module_files(src):
    """{module path tuple: relative file} for every .rs file under src/."""
    mods = {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            if "bin" in parts or "tests" in parts or "examples" in parts:
                continue
            mods.setdefault(tuple(parts), rel)
    return mods


def use_paths(text):
    """Flattened paths of the use declarations (groups expanded one level)."""
    for m in USE.finditer(text):
        body = re.sub(r"\s+", "", m.group(1))
        if "{" in body:
            head, _, rest = body.partition("{")
            for part in rest.rstrip("}").split(","):
                part = part.split("{")[0].strip("}")
                if part:
                    yield head + part
        else:
            yield body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--registry", default=os.path.expanduser("~/.cargo/registry/src"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-crates", type=int, default=0)
    ap.add_argument("--items", action="store_true")
    a = ap.parse_args()
    crates = crate_dirs(a.registry)
    seen = set()
    crates = [c for c in crates if not (crate_name(c[0]) in seen or seen.add(crate_name(c[0])))]
    if a.max_crates:
        crates = crates[: a.max_crates]
    names = {crate_name(d): d for d, _ in crates}
    nodes, edges = [], []
    for dirname, src in crates:
        cname = crate_name(dirname)
        nodes.append({"id": f"c:{cname}", "type": "crate", "label": cname})
        mods = module_files(src)
        for path, rel in mods.items():
            fid = f"f:{cname}/{rel}"
            nodes.append({"id": fid, "type": "file", "label": rel, "file_path": f"{cname}/{rel}"})
        for path, rel in mods.items():
            fid = f"f:{cname}/{rel}"
            try:
                text = open(os.path.join(src, rel), encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            targets = set()
            for m in MOD.finditer(text):
                child = path + (m.group(1),)
                if child in mods:
                    targets.add(("declares", f"f:{cname}/{mods[child]}"))
            for u in use_paths(text):
                segs = [s for s in u.split("::") if s]
                if not segs:
                    continue
                if segs[0] == "crate":
                    base, rest = (), segs[1:]
                elif segs[0] == "self":
                    base, rest = path, segs[1:]
                elif segs[0] == "super":
                    base, rest = path[:-1], segs[1:]
                    while rest and rest[0] == "super":
                        base, rest = base[:-1], rest[1:]
                elif segs[0] in names and segs[0] != cname:
                    targets.add(("depends", f"c:{segs[0]}"))
                    continue
                else:
                    continue
                best = None
                for i in range(len(rest), -1, -1):
                    if base + tuple(rest[:i]) in mods:
                        best = mods[base + tuple(rest[:i])]
                        break
                if best is not None and best != rel:
                    targets.add(("imports", f"f:{cname}/{best}"))
            for ty, to in sorted(targets):
                edges.append({"from": fid, "to": to, "type": ty})
            if a.items:
                for m in ITEM.finditer(text):
                    kind = "function" if m.group(1) == "fn" else "class"
                    iid = f"i:{cname}/{rel}:{m.group(2)}:{m.start()}"
                    nodes.append({"id": iid, "type": kind, "label": m.group(2), "file_path": f"{cname}/{rel}"})
                    edges.append({"from": fid, "to": iid, "type": "defines"})
    # Compact ids (node ids are at most 200 bytes): a letter for the kind and a number.
    short = {}
    for n in nodes:
        short[n["id"]] = f"{n['id'][0]}{len(short)}"
        n["id"] = short[n["id"]]
    for e in edges:
        e["from"], e["to"] = short[e["from"]], short[e["to"]]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        json.dump({"nodes": nodes, "edges": edges}, f)
    os.replace(a.out + ".tmp", a.out)
    kinds = {}
    for e in edges:
        kinds[e["type"]] = kinds.get(e["type"], 0) + 1
    print(f"{len(crates)} crates, {len(nodes)} nodes, {len(edges)} edges {kinds}", file=sys.stderr)


if __name__ == "__main__":
    main()
