#!/usr/bin/env python3
"""Secret scanner benchmark: recall on a corpus of fake secrets, ours against detect-secrets,
and false positives on real text.

    python3 -m venv target/secrets-venv && target/secrets-venv/bin/pip install detect-secrets
    target/secrets-venv/bin/python benches/secrets/secret_bench.py

1. Recall: every line of tests/fixtures/secrets/*.jsonl ({"text", "secret", "source"}) is
   scanned by detect-secrets (its Python API, every default plugin and filter, line by line
   as `detect-secrets scan --string` does) and by ours (core/examples/secret_scan.rs, JSON
   lines in and out). A `secret: true` line counts as found when anything is reported in it;
   a `secret: false` line as a false alarm when anything is.
2. With --upstream-detect-secrets DIR / --upstream-gitleaks DIR (checkouts of those
   repositories), their own test cases are read at run time and scored the same way:
   detect-secrets' plugin tests (parametrised `(line, should_flag)` literals) and gitleaks'
   rule tests (literal `tps` / `fps` strings). They are not copied into this repository.
3. False positives on real text: the messages of the code corpus
   (benches/corpus/build_code_corpus.py: coding-agent conversations over the sources of 27
   Rust crates; built if missing), all of them for ours and the first --ds-messages for
   detect-secrets, which is far slower. Every message is text an agent stored that holds no
   secret (the crates' test keys aside; flagged ones are listed for review).

Prints a markdown report (and writes it with --out).
"""

import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def load_corpus(d):
    rows = []
    for p in sorted(Path(d).glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            r["file"] = p.name
            rows.append(r)
    return rows


def upstream_detect_secrets(repo):
    """(line, should_flag) literals of detect-secrets' parametrised plugin tests."""
    rows = []
    for p in sorted(Path(repo, "tests", "plugins").glob("*_test.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"):
                continue
            if len(node.args) < 2 or not isinstance(node.args[1], (ast.List, ast.Tuple)):
                continue
            for item in node.args[1].elts:
                if not isinstance(item, ast.Tuple) or len(item.elts) < 2:
                    continue
                line, flag = item.elts[0], item.elts[-1]
                if (isinstance(line, ast.Constant) and isinstance(line.value, str)
                        and isinstance(flag, ast.Constant) and isinstance(flag.value, bool)):
                    rows.append({"text": line.value, "secret": flag.value,
                                 "source": f"detect-secrets tests/plugins/{p.name}"})
    return rows


GO_LITERAL = re.compile(r'^\s*("(?:[^"\\]|\\.)*"|`[^`]*`)\s*,?\s*(?://.*)?$')


def upstream_gitleaks(repo):
    """Literal strings of the `tps` (true) and `fps` (false) lists of gitleaks' rule tests."""
    rows = []
    for p in sorted(Path(repo, "cmd", "generate", "config", "rules").glob("*.go")):
        flag = None
        for line in p.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*(tps|fps)\s*:?=\s*(?:append\(\w+,|\[\]string\{)\s*$", line)
            if m:
                flag = m.group(1) == "tps"
                continue
            if flag is None:
                continue
            if re.match(r"\s*[})]", line):
                flag = None
                continue
            lit = GO_LITERAL.match(line)
            if lit:
                s = lit.group(1)
                text = s[1:-1] if s[0] == "`" else json.loads(s) if "\\x" not in s else None
                if text:
                    rows.append({"text": text, "secret": flag,
                                 "source": f"gitleaks {p.name} {'tps' if flag else 'fps'}"})
    return rows


def build_scanner():
    cmd = ["cargo", "build", "--release", "-q", "-p", "agentmem-core", "--example", "secret_scan"]
    subprocess.run(cmd, cwd=ROOT, check=True, env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)})
    return TARGET / "release" / "examples" / "secret_scan"


def ours(binary, texts):
    """Our findings for each text, and the seconds it took."""
    payload = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    t0 = time.perf_counter()
    out = subprocess.run([str(binary)], input=payload, capture_output=True, text=True, check=True)
    secs = time.perf_counter() - t0
    return [json.loads(l)["findings"] for l in out.stdout.splitlines()], secs


def detect_secrets_scanner(eager=False):
    """detect-secrets over one text, returning the secret types it reports. As it scans files
    (`detect-secrets scan`): every default plugin and filter, each text written once as
    `memory.txt` and once as `memory.conf` (its keyword rules differ by file type: quoted
    values only, or bare ones too), the union counted. With eager=True, as
    `detect-secrets scan --string` does: line by line with eager search, which makes the
    high-entropy plugins report nearly every word."""
    import tempfile
    from detect_secrets import SecretsCollection
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    ctx = default_settings()
    ctx.__enter__()
    tmp = Path(tempfile.mkdtemp(prefix="secret-bench-"))

    def scan(text):
        if eager:
            return [s.type for line in text.splitlines() for s in scan_line(line)]
        found = []
        for name in ("memory.txt", "memory.conf"):
            path = tmp / name
            path.write_text(text, encoding="utf-8")
            coll = SecretsCollection(root=str(tmp))
            coll.scan_file(name)
            found += [s.type for _, s in coll]
        return found

    scan.settings = ctx  # closing it (when collected) would restore the empty settings
    return scan


def score(rows, found):
    pos = [f for r, f in zip(rows, found) if r["secret"]]
    neg = [f for r, f in zip(rows, found) if not r["secret"]]
    return sum(map(bool, pos)), len(pos), sum(map(bool, neg)), len(neg)


def pct(a, b):
    return f"{100 * a / b:.1f}% ({a}/{b})" if b else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=ROOT / "tests/fixtures/secrets")
    ap.add_argument("--messages", default=TARGET / "bench-corpus/code-200k.jsonl")
    ap.add_argument("--n", type=int, default=200000, help="messages for our false-positive count")
    ap.add_argument("--ds-messages", type=int, default=10000, help="messages for detect-secrets'")
    ap.add_argument("--upstream-detect-secrets", help="a detect-secrets checkout")
    ap.add_argument("--upstream-gitleaks", help="a gitleaks checkout")
    ap.add_argument("--scanner", help="a built secret_scan example (default: build it)")
    ap.add_argument("--out", help="also write the report here")
    ap.add_argument("--misses", action="store_true", help="list what each scanner missed")
    args = ap.parse_args()

    binary = Path(args.scanner) if args.scanner else build_scanner()
    ds = detect_secrets_scanner()
    ds_eager = detect_secrets_scanner(eager=True)

    sets = [("this repository's corpus (tests/fixtures/secrets)", load_corpus(args.corpus))]
    if args.upstream_detect_secrets:
        sets.append(("detect-secrets' plugin tests (upstream checkout)", upstream_detect_secrets(args.upstream_detect_secrets)))
    if args.upstream_gitleaks:
        sets.append(("gitleaks' rule tests, literal cases (upstream checkout)", upstream_gitleaks(args.upstream_gitleaks)))

    report = ["| corpus | lines (secret / not) | recall: ours | recall: detect-secrets | recall: detect-secrets --string | false alarms: ours | false alarms: detect-secrets | false alarms: detect-secrets --string |",
              "|---|---|---|---|---|---|---|---|"]
    by_source = []
    for name, rows in sets:
        texts = [r["text"] for r in rows]
        o, _ = ours(binary, texts)
        d = [ds(t) for t in texts]
        so, sd, se = score(rows, o), score(rows, d), score(rows, [ds_eager(t) for t in texts])
        report.append(f"| {name} | {so[1]} / {so[3]} | {pct(so[0], so[1])} | {pct(sd[0], sd[1])} | {pct(se[0], se[1])} "
                      f"| {pct(so[2], so[3])} | {pct(sd[2], sd[3])} | {pct(se[2], se[3])} |")
        groups = collections.defaultdict(lambda: [0, 0, 0])
        for r, fo, fd in zip(rows, o, d):
            if r["secret"]:
                g = groups[r["source"].split(" (")[0] if "probe" not in r["source"] else r["source"]]
                g[0] += 1
                g[1] += bool(fo)
                g[2] += bool(fd)
            if args.misses and bool(fo) != r["secret"]:
                print(f"OURS {'MISS' if r['secret'] else 'FALSE'} [{r['source']}] {r['text'][:160]!r}", file=sys.stderr)
            if args.misses and bool(fd) != r["secret"]:
                print(f"DS   {'MISS' if r['secret'] else 'FALSE'} [{r['source']}] {r['text'][:160]!r}", file=sys.stderr)
        by_source.append((name, groups))

    # False positives on real text.
    msgs = Path(args.messages)
    if not msgs.exists():
        subprocess.run([sys.executable, str(ROOT / "benches/corpus/build_code_corpus.py"), "--messages",
                        str(args.n), "--out", str(msgs)], cwd=ROOT, check=True)
    contents = []
    with open(msgs, encoding="utf-8") as f:
        for line in f:
            contents.append(json.loads(line)["content"])
            if len(contents) >= args.n:
                break
    o, secs = ours(binary, contents)
    flagged = [(i, f) for i, f in enumerate(o) if f]
    kinds = collections.Counter(x["kind"] for _, f in flagged for x in f)
    t0 = time.perf_counter()
    dflag = [i for i, t in enumerate(contents[: args.ds_messages]) if ds(t)]
    ds_secs = time.perf_counter() - t0
    n_ds = min(args.ds_messages, len(contents))
    ours_small = sum(1 for i, _ in flagged if i < n_ds)
    mb = sum(len(c.encode()) for c in contents) / 1e6

    fp = ["| scanner | messages | flagged | per 10,000 messages | time |", "|---|---:|---:|---:|---:|",
          f"| ours | {len(contents):,} | {len(flagged)} | {10000 * len(flagged) / len(contents):.2f} | {secs:.1f} s ({mb / secs:.0f} MB/s) |",
          f"| ours, first {n_ds:,} | {n_ds:,} | {ours_small} | {10000 * ours_small / n_ds:.2f} | |",
          f"| detect-secrets, first {n_ds:,} | {n_ds:,} | {len(dflag)} | {10000 * len(dflag) / n_ds:.2f} | {ds_secs:.1f} s |"]

    import datetime
    from importlib.metadata import version
    cmd = "target/secrets-venv/bin/python benches/secrets/secret_bench.py " + " ".join(
        a if not a.startswith("/") else os.path.relpath(a, ROOT) for a in sys.argv[1:])
    lines = [f"# Secret scanner: recall and false positives ({datetime.date.today()})", "",
             f"Command: `{cmd.strip()}`", "",
             f"detect-secrets {version('detect-secrets')}, default plugins and filters; ours: "
             f"`core/examples/secret_scan.rs` (release). A line counts as found when the scanner "
             f"reports anything in it.", "",
             "## Recall (secret lines found) and false alarms (non-secret lines flagged)", "", *report, ""]
    for name, groups in by_source:
        lines += [f"<details><summary>By source: {name}</summary>", "", "| source | secret lines | ours | detect-secrets |", "|---|---:|---:|---:|"]
        lines += [f"| {s} | {n} | {a} | {b} |" for s, (n, a, b) in sorted(groups.items())]
        lines += ["", "</details>", ""]
    lines += [f"## False positives on real text ({msgs.name}: {mb:.0f} MB of coding-agent messages)", "", *fp, ""]
    if flagged:
        lines += ["Flagged messages of ours (kind: the flagged text):", ""]
        for i, f in flagged[:20]:
            c = contents[i].encode()
            lines += [f"- message {i}: " + "; ".join(f"{x['kind']}: `{c[x['start']:x['end']].decode(errors='replace')[:80]}`" for x in f)]
        lines += [""]
    lines += ["Kinds flagged by ours: " + (", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none"), ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
