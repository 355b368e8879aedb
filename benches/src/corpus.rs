//! The real-text corpus: coding-agent conversations over the sources of pinned crates, and
//! agent-style queries built from its code-search questions (benches/corpus/README.md).
//!
//! The corpus file is built once by `benches/corpus/build_code_corpus.py` (cargo fetches the
//! crates; nothing is compiled) into `target/bench-corpus/`, git-ignored, and reused: the
//! stream is prefix-stable, so the largest file built serves every smaller size.

use crate::generator::{Dataset, Message, Rng, Role, Thread};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where corpus files live.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("bench-corpus")
}

fn files(n: usize) -> (PathBuf, PathBuf) {
    (
        dir().join(format!("code-{n}.jsonl")),
        dir().join(format!("code-{n}-queries.jsonl")),
    )
}

/// The smallest built corpus holding at least `n` messages, building one of `build` messages
/// (at least `n`) when none does.
fn ensure(n: usize, build: usize) -> Result<(PathBuf, PathBuf), String> {
    let mut have: Vec<usize> = std::fs::read_dir(dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let size = name.strip_prefix("code-")?.strip_suffix(".jsonl")?;
            size.parse::<usize>().ok()
        })
        .filter(|&s| s >= n && files(s).1.is_file())
        .collect();
    have.sort_unstable();
    if let Some(&s) = have.first() {
        return Ok(files(s));
    }
    let size = build.max(n);
    let (msgs, queries) = files(size);
    eprintln!(
        "[corpus] building {size} messages into {} (once)",
        dir().display()
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join("build_code_corpus.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg("--messages")
        .arg(size.to_string())
        .arg("--out")
        .arg(&msgs)
        .arg("--queries")
        .arg(&queries)
        .arg("--cache-dir")
        .arg(dir())
        .status()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !status.success() {
        return Err(format!("{} failed ({status})", script.display()));
    }
    Ok((msgs, queries))
}

/// A code-search question: its text, the item it describes, the messages that answer it.
pub struct Question {
    pub text: String,
    pub item: String,
    pub relevant: Vec<usize>,
}

fn field<'a>(v: &'a serde_json::Value, k: &str) -> Result<&'a serde_json::Value, String> {
    v.get(k).ok_or_else(|| format!("corpus line without {k}"))
}

/// The first `n` messages of the corpus; `build` is the size to build when no corpus is large
/// enough.
pub fn messages(n: usize, build: usize) -> Result<Dataset, String> {
    let (msgs, _) = ensure(n, build)?;
    let mut threads: Vec<Thread> = Vec::new();
    let mut thread_of: HashMap<String, u32> = HashMap::new();
    let mut messages = Vec::with_capacity(n);
    for (i, line) in read_lines(&msgs)?.take(n).enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(&line?).map_err(|e| format!("{}: {e}", msgs.display()))?;
        let text = |k: &str| -> Result<String, String> {
            Ok(field(&v, k)?.as_str().unwrap_or_default().to_owned())
        };
        let thread_key = text("thread")?;
        let thread = match thread_of.get(&thread_key) {
            Some(&t) => t,
            None => {
                threads.push(Thread {
                    resource_id: text("resource")?,
                    title: thread_key.clone(),
                });
                let t = threads.len() as u32 - 1;
                thread_of.insert(thread_key, t);
                t
            }
        };
        let role = match field(&v, "role")?.as_str() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system") => Role::System,
            _ => Role::Tool,
        };
        messages.push(Message {
            id: format!("00000000-0000-7000-8000-{i:012x}"),
            thread,
            role,
            content: text("content")?,
            created_at: field(&v, "created_at")?.as_i64().unwrap_or(0),
        });
    }
    if messages.len() < n {
        return Err(format!(
            "{} holds {} messages, {n} asked",
            msgs.display(),
            messages.len()
        ));
    }
    Ok(Dataset { threads, messages })
}

/// The questions answered among the first `n` messages (relevant messages past `n` dropped).
pub fn questions(n: usize, build: usize) -> Result<Vec<Question>, String> {
    let (_, queries) = ensure(n, build)?;
    let mut questions = Vec::new();
    for line in read_lines(&queries)? {
        let v: serde_json::Value =
            serde_json::from_str(&line?).map_err(|e| format!("{}: {e}", queries.display()))?;
        let relevant: Vec<usize> = field(&v, "relevant")?
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x as usize)
                    .collect()
            })
            .unwrap_or_default();
        let relevant: Vec<usize> = relevant.into_iter().filter(|&r| r < n).collect();
        if relevant.is_empty() {
            continue;
        }
        questions.push(Question {
            text: field(&v, "query")?.as_str().unwrap_or_default().to_owned(),
            item: field(&v, "item")?.as_str().unwrap_or_default().to_owned(),
            relevant,
        });
    }
    Ok(questions)
}

fn read_lines(p: &Path) -> Result<impl Iterator<Item = Result<String, String>>, String> {
    let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(BufReader::new(f)
        .lines()
        .map(|l| l.map_err(|e| e.to_string())))
}

/// Agent-style queries from the questions, deterministic for a seed: 40% an item's name as
/// code spells it (`forward_mut`, `Cache::forward_mut`), 30% the question as prose, 30% the
/// name with two words of the question (`forward_mut mutable reference`).
pub fn queries(questions: &[Question], seed: u64, n: usize) -> Vec<String> {
    if questions.is_empty() {
        return Vec::new();
    }
    let mut rng = Rng::fork(seed, 0xC0DE);
    (0..n)
        .map(|_| {
            let q = &questions[rng.below(questions.len())];
            let parts: Vec<&str> = q.item.split("::").collect();
            let name = parts.last().copied().unwrap_or_default();
            let owner = parts
                .len()
                .checked_sub(2)
                .and_then(|i| parts.get(i))
                .filter(|p| p.starts_with(|c: char| c.is_uppercase()));
            match rng.below(10) {
                0..=3 => match owner {
                    Some(o) if rng.chance(0.5) => format!("{o}::{name}"),
                    _ => name.to_owned(),
                },
                4..=6 => q.text.clone(),
                _ => {
                    let words: Vec<&str> = q
                        .text
                        .split_whitespace()
                        .filter(|w| w.len() > 3 && w.chars().all(char::is_alphabetic))
                        .take(2)
                        .collect();
                    format!("{name} {}", words.join(" ")).trim().to_owned()
                }
            }
        })
        .collect()
}
