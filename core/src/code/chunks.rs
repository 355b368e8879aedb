//! A file cut into chunks for search and recall, where its syntax allows: a function or a
//! method is one chunk, whole, whatever its length (with what it nests); a type or a module
//! is one chunk of its own lines, without those of the symbols it holds, which are chunks
//! of their own; the lines outside every symbol (imports, top-level statements, a file of
//! a language without grammar) are cut into windows. Each chunk opens with a context line —
//! the path and the enclosing symbols — so a search for a path or a type finds its members.

use super::outline::Outline;

/// Most lines in a window.
pub(crate) const WINDOW_LINES: usize = 60;

/// A chunk of a file.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Chunk {
    /// The symbol it is, by index in the outline; `None` for a window.
    pub symbol: Option<usize>,
    /// 1-based, inclusive: the symbol's lines, or the window's.
    pub start_line: usize,
    pub end_line: usize,
    /// The context line, then the chunk's lines (a line `…` where a member was cut out).
    pub content: String,
}

/// Symbols whose bodies are never cut.
fn is_callable(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "macro")
}

/// The chunks of `source`, whose outline is `out` (empty for a language without grammar),
/// in the order of their first line.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn chunks(path: &str, source: &str, out: &Outline) -> Vec<Chunk> {
    let lines: Vec<&str> = source.lines().collect();
    let n = lines.len();
    let syms = &out.symbols;
    let clamp = |l: usize| l.clamp(1, n.max(1));
    // A symbol inside the body of a callable belongs to that chunk.
    let inside_callable = |i: usize| {
        let mut p = syms[i].parent;
        while let Some(j) = p {
            if is_callable(syms[j].kind) && syms[j].start_line <= syms[i].start_line && syms[i].end_line <= syms[j].end_line {
                return true;
            }
            p = syms[j].parent;
        }
        false
    };
    let chunked: Vec<usize> = (0..syms.len()).filter(|&i| !inside_callable(i)).collect();
    // Lines a chunk already holds; what stays uncovered goes into windows.
    let mut covered = vec![false; n + 1];
    let mut found = Vec::new();
    for &i in &chunked {
        let s = &syms[i];
        let (a, b) = (clamp(s.start_line), clamp(s.end_line));
        if n == 0 {
            break;
        }
        // The members written inside its lines are chunks of their own.
        let mut cut: Vec<(usize, usize)> = if is_callable(s.kind) {
            Vec::new()
        } else {
            chunked
                .iter()
                .filter(|&&j| j != i && syms[j].parent == Some(i) && a <= syms[j].start_line && syms[j].end_line <= b)
                .map(|&j| (syms[j].start_line, syms[j].end_line))
                .collect()
        };
        cut.sort_unstable();
        let mut body = String::new();
        let mut line = a;
        for (ca, cb) in cut.iter().copied().chain([(b + 1, b + 1)]) {
            if ca > line {
                for text in &lines[line - 1..(ca - 1).min(b)] {
                    body.push_str(text);
                    body.push('\n');
                }
            }
            if ca <= b {
                body.push_str("…\n");
            }
            line = line.max(cb + 1);
        }
        for l in a..=b {
            covered[l] = true;
        }
        found.push(Chunk {
            symbol: Some(i),
            start_line: a,
            end_line: b,
            content: format!("{}\n{}", context(path, out, Some(i), a, b), body.trim_end()),
        });
    }
    for (a, b) in windows(&lines, &covered) {
        let body = lines[a - 1..b].join("\n");
        found.push(Chunk { symbol: None, start_line: a, end_line: b, content: format!("{}\n{body}", context(path, out, None, a, b)) });
    }
    found.sort_by_key(|c| (c.start_line, c.end_line));
    found
}

/// The context line: the path, then each enclosing symbol and the chunk's own (`struct Foo ›
/// method new`), or the window's lines.
fn context(path: &str, out: &Outline, symbol: Option<usize>, a: usize, b: usize) -> String {
    let Some(i) = symbol else {
        return format!("{path} › lines {a}-{b}");
    };
    let mut chain = Vec::new();
    let mut p = Some(i);
    while let Some(j) = p {
        chain.push(format!("{} {}", out.symbols[j].kind, out.symbols[j].name));
        p = out.symbols[j].parent;
    }
    chain.reverse();
    format!("{path} › {}", chain.join(" › "))
}

/// The windows over the uncovered lines: each run of them, blank lines trimmed at both
/// ends, cut at a blank line (else at the limit) when longer than [`WINDOW_LINES`].
fn windows(lines: &[&str], covered: &[bool]) -> Vec<(usize, usize)> {
    let blank = |l: usize| lines[l - 1].trim().is_empty();
    let mut out = Vec::new();
    let mut l = 1;
    while l <= lines.len() {
        if covered[l] || blank(l) {
            l += 1;
            continue;
        }
        let mut end = l;
        while end < lines.len() && !covered[end + 1] {
            end += 1;
        }
        while blank(end) {
            end -= 1;
        }
        let mut start = l;
        while end - start + 1 > WINDOW_LINES {
            let limit = start + WINDOW_LINES - 1;
            let cut = (start + WINDOW_LINES / 2..=limit).rev().find(|&k| blank(k)).unwrap_or(limit);
            let mut e = cut;
            while blank(e) {
                e -= 1;
            }
            out.push((start, e));
            start = cut + 1;
            while blank(start) {
                start += 1;
            }
        }
        out.push((start, end));
        l = end + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::language::Lang;
    use crate::code::outline::outline;

    fn cut(path: &str, source: &str) -> Vec<Chunk> {
        let out = Lang::of_path(path).map(|l| outline(l, source)).unwrap_or_default();
        chunks(path, source, &out)
    }

    #[test]
    fn a_class_keeps_its_own_lines_and_its_methods_are_whole() {
        let src = "import os\n\nclass A:\n    x = 1\n\n    def f(self):\n        def inner():\n            pass\n        return 1\n\n    def g(self):\n        return 2\n";
        let c = cut("m.py", src);
        let heads: Vec<&str> = c.iter().map(|c| c.content.lines().next().unwrap()).collect();
        assert_eq!(heads, ["m.py › lines 1-1", "m.py › class A", "m.py › class A › method f", "m.py › class A › method g"]);
        assert_eq!(c[1].content, "m.py › class A\nclass A:\n    x = 1\n\n…\n\n…");
        assert!(c[2].content.contains("def inner():"), "a nested function stays in its parent");
        assert_eq!((c[2].start_line, c[2].end_line), (6, 9));
    }

    #[test]
    fn every_nonblank_line_is_in_exactly_one_chunk_body() {
        let src = "use std::fmt;\n\nstruct S { a: u8 }\n\nimpl S {\n    fn new() -> S {\n        S { a: 0 }\n    }\n}\n\nconst X: u8 = 1;\n";
        let c = cut("lib.rs", src);
        let bodies: Vec<String> = c.iter().map(|c| c.content.split_once('\n').unwrap().1.to_owned()).collect();
        for line in src.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("impl") && *l != "}") {
            let n = bodies.iter().filter(|b| b.lines().any(|x| x == line)).count();
            assert_eq!(n, 1, "{line:?} in {n} chunks: {bodies:#?}");
        }
    }

    #[test]
    fn a_file_without_grammar_is_cut_into_windows_at_blank_lines() {
        let mut src = String::new();
        for i in 0..150 {
            src.push_str(if i % 40 == 39 { "\n" } else { "text\n" });
        }
        let c = cut("notes.txt", &src);
        assert!(c.iter().all(|c| c.symbol.is_none() && c.end_line - c.start_line < WINDOW_LINES));
        assert_eq!(c.iter().map(|c| (c.start_line, c.end_line)).collect::<Vec<_>>(), [(1, 39), (41, 79), (81, 119), (121, 150)]);
        assert!(cut("empty.rs", "").is_empty());
    }
}
