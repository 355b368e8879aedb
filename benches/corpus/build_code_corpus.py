#!/usr/bin/env python3
"""Build a real-text corpus of coding-agent messages from the sources of pinned Rust crates.

    build_code_corpus.py --messages 200000 --out corpus.jsonl --queries queries.jsonl

1. Fetch: a throwaway Cargo project (target/bench-corpus/fetch/) depends on the crates of
   CRATES at exact versions; `cargo fetch` downloads them (nothing is compiled). The .crate
   archives of exactly those crates are checked against Cargo.lock's checksums and copied to
   target/bench-corpus/crates/. Later runs find them there and skip cargo entirely.
2. Messages: threads of 40-200 messages, one crate per thread, in the rhythm of an agent loop:
   the user asks about an item of the crate, the assistant announces tool calls, tools print
   file chunks (`read src/lib.rs lines 120-160`), `rg -n` matches and `cargo test` output, and
   the assistant explains the item with its doc comment and a few lines of its code. File chunks
   come from a per-crate stream that walks every file in windows of 1-4 KB; when a crate's
   files are exhausted the next pass walks them again in another order with other window
   sizes and offsets, so text repeats but messages differ. The stream does not depend on N:
   the first 20k messages of a 200k corpus are the 20k corpus.
3. Questions: for every documented fn / method / struct / enum / trait under src/, the first
   sentence of its doc comment (markdown removed); relevant = the corpus messages that contain
   the item's definition line (`pub fn name(`), i.e. file chunks covering it, `rg` output
   listing it, and assistant replies quoting it. Questions with fewer than 4 words, and
   questions shared by two or more different items, are dropped; only questions with at least
   one relevant message within the first N are written, in a seeded random order.

Standard library only. Deterministic for a given --seed (CPython's `random`).
"""

import argparse
import bisect
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

# name, exact version. Only these crates' own .rs and .md files are read (not their
# dependencies, which `cargo fetch` downloads too but which stay unread).
CRATES = [
    ("tokio", "1.47.1"),
    ("tantivy", "0.27.0"),
    ("regex-automata", "0.4.11"),
    ("syn", "2.0.106"),
    ("regex-syntax", "0.8.6"),
    ("clap_builder", "4.5.48"),
    ("rayon", "1.11.0"),
    ("futures-util", "0.3.31"),
    ("aho-corasick", "1.1.3"),
    ("hashbrown", "0.16.0"),
    ("serde_json", "1.0.145"),
    ("hyper", "1.7.0"),
    ("itertools", "0.13.0"),
    ("nom", "7.1.3"),
    ("memchr", "2.7.6"),
    ("crossbeam-channel", "0.5.15"),
    ("regex", "1.11.3"),
    ("indexmap", "2.11.4"),
    ("rand", "0.9.2"),
    ("bytes", "1.10.1"),
    ("serde_core", "1.0.226"),
    ("fst", "0.4.7"),
    ("rayon-core", "1.13.0"),
    ("anyhow", "1.0.100"),
    ("log", "0.4.28"),
    ("serde", "1.0.226"),
    ("smallvec", "1.15.1"),
]

# Generated tables and fixtures an agent would not read; left out of the text.
SKIP_FILES = {
    ("syn", "tests/debug/gen.rs"),
    ("tantivy", "src/tokenizer/ascii_folding_filter.rs"),
}
SKIP_PREFIXES = {("regex-syntax", "src/unicode_tables/")}
MAX_FILE_BYTES = 300_000

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = REPO / "target" / "bench-corpus"
START_MS = 1_672_531_200_000  # 2023-01-01T00:00:00Z; about 40 s per message on average after it
QUESTION_KINDS = ("fn", "method", "struct", "enum", "trait")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# 1. Fetch


def fetch_crates(cache: Path):
    """Return [(name, version, path to .crate)], downloading through cargo when needed."""
    crates_dir = cache / "crates"
    manifest_path = crates_dir / "manifest.json"
    wanted = [f"{n}-{v}" for n, v in CRATES]
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if all(k in manifest and (crates_dir / f"{k}.crate").exists() for k in wanted):
            return [(n, v, crates_dir / f"{n}-{v}.crate") for n, v in CRATES]

    proj = cache / "fetch"
    (proj / "src").mkdir(parents=True, exist_ok=True)
    (proj / "src" / "lib.rs").write_text("")
    deps = "\n".join(f'{n} = "={v}"' for n, v in CRATES)
    (proj / "Cargo.toml").write_text(
        "# Throwaway project: only used by `cargo fetch` to download the corpus crates.\n"
        '[package]\nname = "agentmem-bench-corpus-fetch"\nversion = "0.0.0"\n'
        'edition = "2021"\npublish = false\n\n[workspace]\n\n'
        f"[dependencies]\n{deps}\n"
    )
    cmd = ["cargo", "fetch"]
    try:
        host = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True)
        triple = re.search(r"^host: (\S+)", host.stdout, re.M).group(1)
        cmd += ["--target", triple]  # skip e.g. windows-only dependencies
    except (OSError, subprocess.CalledProcessError, AttributeError):
        pass
    log(f"fetch: {' '.join(cmd)} in {proj}")
    subprocess.run(cmd, cwd=proj, check=True)

    lock = tomllib.loads((proj / "Cargo.lock").read_text())
    checksums = {}
    for pkg in lock.get("package", []):
        if "checksum" in pkg:
            checksums[(pkg["name"], pkg["version"])] = pkg["checksum"]
    cargo_home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    crates_dir.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for n, v in CRATES:
        want = checksums.get((n, v))
        if want is None:
            sys.exit(f"{n} {v} is not in {proj / 'Cargo.lock'}")
        found = None
        for src in sorted((cargo_home / "registry" / "cache").glob(f"*/{n}-{v}.crate")):
            if hashlib.sha256(src.read_bytes()).hexdigest() == want:
                found = src
                break
        if found is None:
            sys.exit(f"{n}-{v}.crate with sha256 {want} not found under {cargo_home}")
        shutil.copyfile(found, crates_dir / f"{n}-{v}.crate")
        manifest[f"{n}-{v}"] = want
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return [(n, v, crates_dir / f"{n}-{v}.crate") for n, v in CRATES]


# ---------------------------------------------------------------------------------------------
# 2. Sources and items

FN_RE = re.compile(
    r'^(\s*)(?:pub(?:\s*\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?'
    r'(?:unsafe\s+)?(?:extern\s+(?:"[^"]*"\s+)?)?fn\s+([A-Za-z_][A-Za-z0-9_]*)'
)
TYPE_RE = re.compile(
    r'^(\s*)(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?(?:auto\s+)?'
    r'(struct|enum|trait|union|type)\s+([A-Za-z_][A-Za-z0-9_]*)'
)
IMPL_RE = re.compile(r"^(\s*)(?:unsafe\s+)?impl\b(.*)")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


class File:
    __slots__ = ("fid", "crate", "path", "lines", "nbytes", "is_rs", "item_lines", "items")

    def __init__(self, fid, crate, path, lines):
        self.fid = fid
        self.crate = crate
        self.path = path
        self.lines = lines
        self.nbytes = sum(len(l) + 1 for l in lines)
        self.is_rs = path.endswith(".rs")
        self.items = []  # sorted by line
        self.item_lines = []


class Item:
    __slots__ = ("name", "kind", "file", "line", "doc_line", "doc", "path", "is_test", "qid")

    def __init__(self, name, kind, file, line, doc_line, doc, path, is_test):
        self.name = name
        self.kind = kind
        self.file = file
        self.line = line  # 0-based line of the definition (`pub fn name(`)
        self.doc_line = doc_line  # 0-based line where its doc comment starts, or None
        self.doc = doc  # first paragraph of the doc comment, raw markdown, or ""
        self.path = path
        self.is_test = is_test
        self.qid = None


def module_path(crate, path):
    root = crate.replace("-", "_")
    if not path.startswith("src/"):
        return None
    parts = path[4:-3].split("/")
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return "::".join([root] + parts)


def impl_type(rest):
    s = rest.strip()
    if s.startswith("<"):  # impl<T: Foo<U>> ...
        depth = 0
        for i, ch in enumerate(s):
            depth += ch == "<"
            depth -= ch == ">"
            if depth == 0:
                s = s[i + 1 :]
                break
    if " for " in s:
        s = s.split(" for ", 1)[1]
    s = s.strip().lstrip("&").strip()
    for pre in ("mut ", "dyn ", "'static "):
        if s.startswith(pre):
            s = s[len(pre) :]
    m = re.match(r"(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Za-z_][A-Za-z0-9_]*)", s)
    return m.group(1) if m else None


def parse_items(f: File, crate_mod):
    """Find fn / method / struct / enum / trait / type items with their doc comments."""
    items = []
    doc, doc_line, in_attr_depth, is_test = [], None, 0, False
    containers = []  # (indent, type name)
    for ln, line in enumerate(f.lines):
        s = line.strip()
        if in_attr_depth > 0:
            in_attr_depth += s.count("[") + s.count("(") - s.count("]") - s.count(")")
            continue
        if not s:
            doc, is_test = [], False
            continue
        indent = len(line) - len(line.lstrip())
        if s.startswith("}"):
            while containers and containers[-1][0] >= indent:
                containers.pop()
        if s.startswith("///") and not s.startswith("////"):
            if not doc:
                doc_line = ln
            doc.append(s[3:].strip())
            continue
        if s.startswith("#[") or s.startswith("#!["):
            if s.startswith("#[test]") or s.startswith("#[tokio::test"):
                is_test = True
            depth = s.count("[") + s.count("(") - s.count("]") - s.count(")")
            if depth > 0:
                in_attr_depth = depth
            continue
        m = IMPL_RE.match(line)
        if m:
            while containers and containers[-1][0] >= indent:
                containers.pop()
            t = impl_type(m.group(2))
            if t:
                containers.append((indent, t))
            doc, is_test = [], False
            continue
        m = FN_RE.match(line)
        kind = name = None
        if m:
            kind, name = "fn", m.group(2)
        else:
            m = TYPE_RE.match(line)
            if m:
                kind, name = m.group(2), m.group(3)
        if name:
            while containers and containers[-1][0] >= indent:
                containers.pop()
            owner = containers[-1][1] if containers else None
            if kind == "fn" and owner:
                kind = "method"
            path = None
            if crate_mod is not None:
                path = crate_mod + (f"::{owner}" if owner else "") + f"::{name}"
            para = []
            for d in doc:
                if not d:
                    break
                para.append(d)
            items.append(Item(name, kind, f, ln, doc_line if doc else None, " ".join(para), path, is_test))
            if kind == "trait" and not s.endswith(";"):
                containers.append((indent, name))
        doc, is_test = [], False
    return items


class Crate:
    def __init__(self, name, version):
        self.name = name
        self.version = version
        self.files = []
        self.items = []
        self.focus_items = []  # non-test items, documented ones listed 3 times
        self.test_files = []  # (file, [test items])
        self.nbytes = 0
        self._occ = None

    def occurrences(self):
        """identifier -> [(file, line)] for every item name of the crate, over its .rs files."""
        if self._occ is None:
            names = {it.name for it in self.items if len(it.name) >= 3}
            occ = {}
            for f in self.files:
                if not f.is_rs:
                    continue
                for ln, line in enumerate(f.lines):
                    for tok in set(IDENT_RE.findall(line)):
                        if tok in names:
                            occ.setdefault(tok, []).append((f, ln))
            self._occ = occ
        return self._occ


def load_sources(crate_files):
    crates, files = [], []
    for name, version, archive in crate_files:
        c = Crate(name, version)
        prefix = f"{name}-{version}/"
        with tarfile.open(archive, "r:gz") as tf:
            members = sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name)
            for m in members:
                if not m.name.startswith(prefix):
                    continue
                rel = m.name[len(prefix) :]
                if not (rel.endswith(".rs") or rel.endswith(".md")):
                    continue
                if m.size > MAX_FILE_BYTES or (name, rel) in SKIP_FILES:
                    continue
                if any(name == cn and rel.startswith(p) for cn, p in SKIP_PREFIXES):
                    continue
                text = tf.extractfile(m).read().decode("utf-8", errors="replace")
                text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
                lines = [l.rstrip() for l in text.split("\n")]
                while lines and not lines[-1]:
                    lines.pop()
                if not lines:
                    continue
                f = File(len(files), c, rel, lines)
                files.append(f)
                c.files.append(f)
                c.nbytes += f.nbytes
                if f.is_rs:
                    f.items = parse_items(f, module_path(name, rel))
                    f.item_lines = [it.line for it in f.items]
                    c.items.extend(f.items)
        for f in c.files:
            tests = [it for it in f.items if it.is_test]
            if tests:
                c.test_files.append((f, tests))
        for it in c.items:
            if not it.is_test:
                c.focus_items.extend([it] * (3 if it.doc else 1))
        crates.append(c)
    return crates, files


# ---------------------------------------------------------------------------------------------
# 3. Questions

ABBREV = {"e.g", "i.e", "etc", "vs", "cf", "approx", "resp", "incl", "eg", "ie"}


def clean_markdown(s):
    s = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", s)  # [text](url)
    s = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", s)  # [text][ref]
    s = re.sub(r"\[(`[^`]*`|[^\]\s]+)\]", r"\1", s)  # [`Foo`], [Foo]
    s = s.replace("`", "").replace("**", "")
    s = re.sub(r"(?<![\w*])\*(\w[^*]*\w)\*(?![\w*])", r"\1", s)  # *emphasis*
    return re.sub(r"\s+", " ", s).strip()


def first_sentence(doc):
    s = clean_markdown(doc)
    if not s or s[0] in "#<|>!-" or s.startswith("```"):
        return None
    for m in re.finditer(r"[.!?](?=\s|$)", s):
        before = s[: m.start()].rsplit(" ", 1)[-1].lower()
        if before in ABBREV or before.endswith(".."):
            continue
        return s[: m.end()]
    if len(s) <= 200 and not s.endswith(":"):
        return s
    return None


def build_questions(crates):
    by_text = {}  # normalized text -> [text, {item path: [items]}]
    for c in crates:
        for it in c.items:
            if it.kind not in QUESTION_KINDS or not it.doc or it.path is None or it.is_test:
                continue
            q = first_sentence(it.doc)
            if not q or q.endswith(":"):
                continue
            words = q.split()
            if len(words) < 4 or len(words) > 50:
                continue
            key = " ".join(q.lower().rstrip(".!?").split())
            by_text.setdefault(key, [q, {}])[1].setdefault(it.path, []).append(it)
    questions, ambiguous = [], 0
    for key, (q, paths) in by_text.items():
        if len(paths) > 1:
            ambiguous += 1
            continue
        (path, items), = paths.items()
        qid = len(questions)
        for it in items:  # cfg variants of one item share a question
            it.qid = qid
        questions.append({"query": q, "item": path, "kind": items[0].kind,
                          "location": f"{items[0].file.crate.name}-{items[0].file.crate.version}/"
                                      f"{items[0].file.path}:{items[0].line + 1}"})
    return questions, ambiguous


# ---------------------------------------------------------------------------------------------
# 4. Messages

USER_ASK = [
    "where is `{name}` handled?",
    "Where is `{name}` defined, and who calls it?",
    "Can you explain what `{name}` in {file} does? I'm not sure when it gets called.",
    "I think `{name}` misbehaves when the input is empty. Can you check {file}?",
    "Please add a unit test covering `{name}`.",
    "We need `{name}` to be faster on large inputs; look at how it's implemented first.",
    "Rename `{name}` to `{name}_impl` across {crate} and fix the call sites.",
    "Is `{name}` part of the public API of {crate} {version}? Check before we depend on it.",
    "Review the error handling around `{name}` in `{file}`.",
    "How does `{path}` work?",
    "what does {name} return when nothing matches?",
    "Find every caller of `{name}` and tell me which ones are on a hot path.",
    "Can `{name}` panic? Look at {file} and tell me under which conditions.",
    "Document `{name}` properly, the current docs don't say what happens on error.",
    "why is {kind} `{name}` generic over so many parameters?",
    "Show me the definition of `{name}`.",
]
USER_ASK_MD = [
    "What does {file} say about {heading}?",
    "Summarise {file} for me, especially the part about {heading}.",
    "Is there anything in {file} about {heading} that affects an upgrade to {crate} {version}?",
    "Check the docs in {file}: how is {heading} supposed to be used?",
]
USER_EXTRA = [
    "This is blocking the release.",
    "Keep the change minimal.",
    "The CI failure started after we upgraded {crate}.",
    "Don't touch the public signatures.",
    "I only have a few minutes, so a short answer is fine.",
    "We hit this in production yesterday, see the incident notes.",
    "Please cite file paths and line numbers.",
    "No need to run the full test suite, the unit tests are enough.",
    "I'd rather not add a new dependency for this.",
    "Compare with what {crate} did in the previous minor version if you can.",
]
ASSIST_CALL = [
    "Let me open `{file}`.",
    "Reading `{file}` lines {a}-{b}.",
    "I'll look at `{file}` around line {a} next.",
    "The rest of `{file}` should have what we need; reading on.",
    "Checking `{file}` ({a}-{b}) before changing anything.",
    "Opening `{file}` to see the surrounding code.",
    "`{name}` is probably in `{file}`; reading lines {a}-{b}.",
    "Before changing `{name}` I want to see how `{file}` is organised, so reading lines {a}-{b}.",
    "Reading `{file}` lines {a}-{b} to follow the call path of `{name}`.",
    "Next chunk of `{file}` (lines {a}-{b}); I'm looking for where `{name}` is used.",
    "That part didn't show `{name}` yet. Continuing with `{file}` from line {a}.",
]
ASSIST_GREP = [
    "Searching the crate for `{name}` first.",
    "Let me find where `{name}` is used.",
    "I'll grep for `{name}` to see the call sites.",
]
ASSIST_REMARK = [
    "So the change belongs there, not in the callers.",
    "I'll keep the public signature and adjust the body.",
    "That answers the question; nothing else in the crate overrides it.",
    "The callers rely on this behaviour, so a test should pin it down.",
    "Next I'll check the tests that exercise it.",
    "",
    "",
]
SYSTEM = [
    "You are a coding agent working in the {crate} {version} repository. Tools: read (file "
    "chunks), rg (search), cargo (build and test). Cite file paths and line numbers.",
    "You are an expert Rust engineer helping on {crate} {version}. Prefer small, reviewed "
    "changes; run the tests you touch; answer concisely.",
]


def fmt(t, **kw):
    return t.format(**kw)


def cap_text(s, limit):
    if len(s) <= limit:
        return s
    cut = s.rfind(" ", 0, limit - 3)
    return s[: cut if cut > limit // 2 else limit - 3] + "..."


class Chunker:
    """Infinite stream of (file, first line, last line) windows over one crate's files."""

    def __init__(self, crate, seed):
        self.crate = crate
        self.rng = random.Random(f"{seed}:chunks:{crate.name}")
        self.pass_no = -1
        self.gen = self._stream()

    def _stream(self):
        rng = self.rng
        while True:
            self.pass_no += 1
            order = list(self.crate.files)
            if self.pass_no > 0:
                rng.shuffle(order)
            for f in order:
                n = len(f.lines)
                start = 0
                if self.pass_no > 0 and n > 8:
                    start = rng.randrange(0, min(60, n // 2))
                ln = start
                while ln < n:
                    target = min(5000, max(700, int(rng.lognormvariate(math.log(2100), 0.4))))
                    size, end = 0, ln
                    while end < n and (size == 0 or size + len(f.lines[end]) + 1 <= target):
                        size += len(f.lines[end]) + 1
                        end += 1
                    yield f, ln, end - 1
                    ln = end

    def next(self):
        return next(self.gen)


class Corpus:
    def __init__(self, crates, questions, seed):
        self.crates = crates
        self.seed = seed
        self.rng = random.Random(f"{seed}:threads")
        self.chunkers = {c.name: Chunker(c, seed) for c in crates}
        self.weights = [c.nbytes for c in crates]
        self.relevant = [[] for _ in questions]
        self.partial = [[] for _ in questions]
        self.clock = START_MS
        # question definition lines by file: fid -> (sorted lines, qids)
        self.qlines = {}
        self.qdocs = {}  # fid -> (sorted doc start lines, [(doc line, def line, qid)])
        for c in crates:
            for f in c.files:
                pairs = [(it.line, it.qid) for it in f.items if it.qid is not None]
                if pairs:
                    self.qlines[f.fid] = ([p[0] for p in pairs], [p[1] for p in pairs])
                docs = sorted((it.doc_line, it.line, it.qid) for it in f.items
                              if it.qid is not None and it.doc_line is not None)
                if docs:
                    self.qdocs[f.fid] = ([d[0] for d in docs], docs)

    # relevance -----------------------------------------------------------------------------
    def _hits_range(self, f, a, b, out):
        q = self.qlines.get(f.fid)
        if q:
            lo = bisect.bisect_left(q[0], a)
            hi = bisect.bisect_right(q[0], b)
            out.extend(q[1][lo:hi])

    def _partial_range(self, f, a, b, out):
        """Questions whose doc comment starts in [a, b] but whose definition line is after b."""
        q = self.qdocs.get(f.fid)
        if q:
            lo = bisect.bisect_left(q[0], a)
            hi = bisect.bisect_right(q[0], b)
            out.extend(qid for _, line, qid in q[1][lo:hi] if line > b)

    # message texts ---------------------------------------------------------------------------
    def render_read(self, f, a, b):
        rng = self.rng
        lines = f.lines[a : b + 1]
        r = rng.random()
        if r < 0.55:
            head = f"read {f.path} lines {a + 1}-{b + 1}"
            body = "\n".join(lines)
        elif r < 0.85:
            head = f"read {f.path} (lines {a + 1}-{b + 1} of {len(f.lines)})"
            body = "\n".join(f"{a + 1 + i:>6}\t{l}" for i, l in enumerate(lines))
        else:
            head = f"$ sed -n '{a + 1},{b + 1}p' {f.path}"
            body = "\n".join(lines)
        return head + "\n" + body

    def render_rg(self, c, name, hits):
        occ = c.occurrences().get(name, [])
        shown = occ[:40]
        out = [f"$ rg -n '\\b{name}\\b' --type rust"]
        for f, ln in shown:
            out.append(f"{f.path}:{ln + 1}:{cap_text(f.lines[ln], 200)}")
            self._hits_range(f, ln, ln, hits)
        if len(occ) > len(shown):
            out.append(f"... {len(occ) - len(shown)} more matches")
        if not occ:
            out.append("(no matches)")
        return "\n".join(out)

    def render_test(self, c):
        rng = self.rng
        f, tests = rng.choice(c.test_files)
        k = min(len(tests), rng.randint(1, 14))
        start = rng.randrange(0, len(tests) - k + 1)
        chosen = tests[start : start + k]
        mod = module_path(c.name, f.path)
        if mod is None:
            target = f"--test {Path(f.path).stem}"
            prefix = ""
            running = f"{f.path} (target/debug/deps/{Path(f.path).stem}-{rng.getrandbits(64):016x})"
        else:
            target = "--lib"
            prefix = "::".join(mod.split("::")[1:] + ["tests"]) + "::"
            prefix = prefix.lstrip(":")
            running = f"unittests src/lib.rs (target/debug/deps/{c.name.replace('-', '_')}-{rng.getrandbits(64):016x})"
        failed = None
        if rng.random() < 0.12:
            failed = rng.choice(chosen)
        out = [
            f"$ cargo test -p {c.name} {target}",
            f"   Compiling {c.name} v{c.version} (/work/{c.name})",
            f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {rng.uniform(0.8, 40):.2f}s",
            f"     Running {running}",
            "",
            f"running {len(chosen)} test{'s' if len(chosen) != 1 else ''}",
        ]
        for t in chosen:
            out.append(f"test {prefix}{t.name} ... {'FAILED' if t is failed else 'ok'}")
        n_fail = 1 if failed else 0
        if failed:
            out += ["", "failures:", "", f"---- {prefix}{failed.name} stdout ----",
                    f"thread '{prefix}{failed.name}' panicked at {f.path}:{failed.line + rng.randint(2, 12)}:{rng.randint(5, 40)}:",
                    "assertion `left == right` failed", f"  left: {rng.randint(0, 99)}",
                    f" right: {rng.randint(100, 999)}", "", "failures:", f"    {prefix}{failed.name}"]
        out.append("")
        out.append(
            f"test result: {'FAILED' if failed else 'ok'}. {len(chosen) - n_fail} passed; {n_fail} failed; "
            f"0 ignored; 0 measured; {len(tests) - len(chosen)} filtered out; finished in {rng.uniform(0, 2):.2f}s"
        )
        return "\n".join(out), f, chosen, failed

    def render_explain(self, it, hits):
        rng = self.rng
        f = it.file
        loc = f"{f.path}:{it.line + 1}"
        intro = rng.choice([
            f"`{it.path or it.name}` is defined in `{f.path}` at line {it.line + 1}.",
            f"Found it: `{it.name}` lives in `{loc}`.",
            f"The {it.kind} `{it.name}` ({f.path}, line {it.line + 1}):",
            f"Here is `{it.name}` in `{loc}`.",
        ])
        doc = ""
        if it.doc:
            d = cap_text(it.doc, rng.randint(120, 260))
            doc = rng.choice([" Its doc comment says: ", " ", " The docs: "]) + d
        else:
            doc = " It has no doc comment, so here is the code:"
        # code: definition line plus a few following lines, dedented, under ~330 bytes
        base = f.lines[it.line]
        ind = len(base) - len(base.lstrip())
        code, size = [], 0
        for l in f.lines[it.line : it.line + rng.randint(3, 9)]:
            l2 = l[ind:] if l[:ind].strip() == "" else l.strip()
            if code and size + len(l2) > 330:
                break
            code.append(l2)
            size += len(l2) + 1
            if l2.startswith("}") and len(code) > 1:
                break
        self._hits_range(f, it.line, it.line, hits)
        remark = rng.choice(ASSIST_REMARK)
        return f"{intro}{doc}\n\n```rust\n" + "\n".join(code) + "\n```" + (f"\n\n{remark}" if remark else "")

    def md_heading(self, f, a, b):
        """The section the chunk starts in, else the first heading inside it."""
        for l in reversed(f.lines[: a + 1]):
            if l.startswith("#") and l.lstrip("#").strip():
                return l.lstrip("#").strip()
        for l in f.lines[a : b + 1]:
            if l.startswith("#") and l.lstrip("#").strip():
                return l.lstrip("#").strip()
        return "usage"

    def md_summary(self, f, a, b):
        rng = self.rng
        heading = self.md_heading(f, a, b)
        prose = [l.strip() for l in f.lines[a : b + 1]
                 if l.strip() and not l.startswith(("#", "```", "|", "    ", "<", "[")) and len(l.split()) > 4]
        text = ""
        if prose:
            text = " ".join(prose[:8])
            limit = rng.randint(150, 420)
            ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", text) if m.end() <= limit]
            text = text[: ends[-1]] if ends else cap_text(text, limit)
        if not text:
            return f"`{f.path}` lines {a + 1}-{b + 1} are mostly code and links under \"{heading}\"; nothing there changes the plan."
        return rng.choice([
            f"The \"{heading}\" part of `{f.path}` says: {text}",
            f"From `{f.path}` ({heading}): {text}",
            f"Summary of `{f.path}` lines {a + 1}-{b + 1}: {text}",
        ])

    # threads -------------------------------------------------------------------------------
    def threads(self):
        """Yield (thread id, resource, [(role, content, created_at, qids, partial qids)])."""
        rng = self.rng
        tno = 0
        while True:
            c = rng.choices(self.crates, weights=self.weights)[0]
            chunker = self.chunkers[c.name]
            tid = f"t{tno:06d}-{c.name}"
            tno += 1
            resource = f"project:{c.name}"
            length = rng.randint(40, 200)
            self.clock += rng.randint(120_000, 3_600_000)
            msgs = []

            def add(role, content, hits=(), partial=()):
                if role == "user":
                    gap = int(rng.lognormvariate(math.log(60_000), 0.8))
                elif role == "tool":
                    gap = rng.randint(200, 8_000)
                else:
                    gap = int(rng.lognormvariate(math.log(9_000), 0.7))
                self.clock += gap
                msgs.append((role, content, self.clock, hits, partial))

            add("system", fmt(rng.choice(SYSTEM), crate=c.name, version=c.version))
            while len(msgs) < length:
                k = rng.choices((1, 2, 3, 4), weights=(3, 4, 2, 1))[0]
                chunks = [chunker.next() for _ in range(k)]
                in_chunks = []
                for f, a, b in chunks:
                    if f.items:
                        lo = bisect.bisect_left(f.item_lines, a)
                        hi = bisect.bisect_right(f.item_lines, b)
                        in_chunks.extend(it for it in f.items[lo:hi] if not it.is_test)
                focus = None
                if in_chunks:
                    documented = [it for it in in_chunks if it.doc]
                    focus = rng.choice(documented if documented and rng.random() < 0.8 else in_chunks)
                elif c.focus_items and (chunks[0][0].is_rs or rng.random() < 0.3):
                    focus = rng.choice(c.focus_items)
                f0, a0, b0 = chunks[0]
                kw = dict(crate=c.name, version=c.version)
                if focus is not None:
                    ask = fmt(rng.choice(USER_ASK), name=focus.name, path=focus.path or focus.name,
                              file=focus.file.path, kind=focus.kind, **kw)
                else:
                    ask = fmt(rng.choice(USER_ASK_MD), file=f0.path, heading=self.md_heading(f0, a0, b0), **kw)
                for _ in range(rng.choices((0, 1, 2), weights=(3, 5, 2))[0]):
                    ask += " " + fmt(rng.choice(USER_EXTRA), **kw)
                add("user", ask)
                if focus is not None and rng.random() < 0.25:
                    add("assistant", fmt(rng.choice(ASSIST_GREP), name=focus.name))
                    hits = []
                    add("tool", self.render_rg(c, focus.name, hits), hits)
                for f, a, b in chunks:
                    if rng.random() < 0.6:
                        add("assistant", fmt(rng.choice(ASSIST_CALL), file=f.path, a=a + 1, b=b + 1,
                                             name=focus.name if focus is not None else f.path))
                    hits, partial = [], []
                    self._hits_range(f, a, b, hits)
                    self._partial_range(f, a, b, partial)
                    add("tool", self.render_read(f, a, b), hits, partial)
                if focus is not None:
                    hits = []
                    add("assistant", self.render_explain(focus, hits), hits)
                else:
                    add("assistant", self.md_summary(f0, a0, b0))
                if c.test_files and rng.random() < 0.15:
                    out, tf, chosen, failed = self.render_test(c)
                    add("tool", out)
                    if failed:
                        add("assistant", f"`{failed.name}` fails in `{tf.path}` (line {failed.line + 1}); "
                                         f"the other {len(chosen) - 1} tests pass. Looking at the assertion next.")
                    else:
                        add("assistant", f"All {len(chosen)} selected tests in `{tf.path}` pass.")
            yield tid, resource, msgs


def build(args):
    t0 = time.time()
    cache = Path(args.cache_dir)
    crate_files = fetch_crates(cache)
    t_fetch = time.time()
    crates, files = load_sources(crate_files)
    questions, ambiguous = build_questions(crates)
    t_load = time.time()
    total_bytes = sum(c.nbytes for c in crates)
    log(f"sources: {len(crates)} crates, {len(files)} files, {total_bytes / 1e6:.1f} MB, "
        f"{sum(len(c.items) for c in crates)} items, {len(questions)} candidate questions "
        f"({ambiguous} ambiguous dropped); fetch {t_fetch - t0:.1f}s, parse {t_load - t_fetch:.1f}s")

    corpus = Corpus(crates, questions, args.seed)
    n = args.messages
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    roles, role_bytes = {}, {}
    written, content_bytes, threads, resources = 0, 0, 0, set()
    first_ms = last_ms = None
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
        for tid, resource, msgs in corpus.threads():
            if written >= n:
                break
            threads += 1
            resources.add(resource)
            for role, content, ts, hits, partial in msgs:
                if written >= n:
                    break
                fh.write(dumps({"thread": tid, "resource": resource, "role": role,
                                "content": content, "created_at": ts}))
                fh.write("\n")
                for q in hits:
                    rel = corpus.relevant[q]
                    if not rel or rel[-1] != written:
                        rel.append(written)
                for q in partial:
                    corpus.partial[q].append(written)
                b = len(content.encode("utf-8"))
                content_bytes += b
                roles[role] = roles.get(role, 0) + 1
                role_bytes[role] = role_bytes.get(role, 0) + b
                first_ms = ts if first_ms is None else first_ms
                last_ms = ts
                written += 1
    os.replace(tmp, out)
    t_gen = time.time()

    nq = 0
    rel_sizes = []
    if args.queries:
        qout = Path(args.queries)
        qout.parent.mkdir(parents=True, exist_ok=True)
        qtmp = qout.with_name(f".{qout.name}.tmp{os.getpid()}")
        order = list(range(len(questions)))
        random.Random(f"{args.seed}:queries").shuffle(order)
        with open(qtmp, "w", encoding="utf-8") as fh:
            for qid in order:
                rel = corpus.relevant[qid]
                if not rel:
                    continue
                q = questions[qid]
                fh.write(json.dumps({"query": q["query"], "relevant": rel, "item": q["item"],
                                     "kind": q["kind"], "location": q["location"],
                                     "partial": corpus.partial[qid]},
                                    ensure_ascii=False) + "\n")
                nq += 1
                rel_sizes.append(len(rel))
        os.replace(qtmp, qout)
    t_end = time.time()

    size = out.stat().st_size
    passes = {c.name: corpus.chunkers[c.name].pass_no + 1 for c in crates}
    log(f"messages: {written} in {threads} threads, {len(resources)} resources -> {out} "
        f"({size / 1e6:.1f} MB, {size / max(written, 1):.0f} bytes/line)")
    log(f"content: {content_bytes / max(written, 1):.0f} bytes/message on average; "
        + ", ".join(f"{r} {roles[r]} ({100 * roles[r] / written:.1f}%, {role_bytes[r] / roles[r]:.0f} B avg)"
                    for r in ("user", "assistant", "tool", "system") if r in roles))
    log(f"created_at: {first_ms} .. {last_ms} "
        f"({time.strftime('%Y-%m-%d', time.gmtime(first_ms / 1000))} .. "
        f"{time.strftime('%Y-%m-%d', time.gmtime(last_ms / 1000))})")
    log(f"passes over the sources: min {min(passes.values())}, max {max(passes.values())}")
    if args.queries:
        rel_sizes.sort()
        med = rel_sizes[len(rel_sizes) // 2] if rel_sizes else 0
        log(f"queries: {nq} -> {args.queries} (relevant per query: median {med}, "
            f"max {rel_sizes[-1] if rel_sizes else 0})")
    log(f"time: total {t_end - t0:.1f}s (fetch {t_fetch - t0:.1f}s, parse {t_load - t_fetch:.1f}s, "
        f"generate {t_gen - t_load:.1f}s, queries {t_end - t_gen:.1f}s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, required=True, help="number of messages (<= 2,000,000 tested)")
    ap.add_argument("--out", required=True, help="JSON lines file of messages")
    ap.add_argument("--queries", help="JSON lines file of code-search questions")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--cache-dir", default=str(DEFAULT_CACHE),
                    help="where the throwaway cargo project and the .crate files live")
    args = ap.parse_args()
    if args.messages <= 0:
        ap.error("--messages must be positive")
    build(args)


if __name__ == "__main__":
    main()
