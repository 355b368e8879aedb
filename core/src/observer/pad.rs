//! A session's scratchpad in memory, and what each event does to it.
//!
//! Applying an event is plain Rust over maps: no statement runs, so an event costs what its
//! analytics cost (the seed's budget is the point of the design). The tables learn the
//! changes at each checkpoint (`observer::store`); until then the session's log holds the
//! events, so a crash loses nothing a commit saved. Past the session's bound the
//! lowest-value rows go (pairs seen least first, then patterns, then files), counted in
//! `evicted`.

use super::event::{Call, Event, What};
use super::fingerprint::fingerprint;
use super::keyed::Keyed;
use super::language::{self, Cue};
use super::tools::{self, Kind};
use crate::text::head_chars;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

/// Tool calls remembered for co-access and sequences (the seed's circular buffer).
pub(crate) const RECENT: usize = 8;

/// Notes (self-corrections, dead ends, spikes, backtracks) a session keeps.
pub(crate) const MAX_NOTES: i64 = 200;

/// Longest error sample kept, in characters.
const MAX_SAMPLE: usize = 500;

/// A step is a spike when its tokens pass this many times the session's mean so far …
const SPIKE_RATIO: f64 = 3.0;
/// … and at least this many tokens, after this many steps.
const SPIKE_MIN_TOKENS: i64 = 2000;
const SPIKE_MIN_STEPS: i64 = 3;

/// The session's counters (its row holds them as of the last checkpoint).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct State {
    pub(crate) step: i64,
    pub(crate) events: i64,
    pub(crate) steps_completed: i64,
    pub(crate) input_tokens: i64,
    pub(crate) max_step_tokens: i64,
    pub(crate) external_step: Option<i64>,
    pub(crate) self_corrections: i64,
    pub(crate) recent: Vec<Recent>,
    pub(crate) scratch_rows: i64,
    pub(crate) evicted: i64,
    pub(crate) early: Vec<String>,
    pub(crate) notes: i64,
}

/// One remembered tool call: `[tool, kind, [paths]]` (the `recent` column's form).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Recent(pub(crate) String, pub(crate) Kind, pub(crate) Vec<String>);

pub(crate) struct File {
    pub(crate) reads: i64,
    pub(crate) edits: i64,
    pub(crate) config: bool,
    pub(crate) left_for_search: bool,
    pub(crate) first_step: i64,
    pub(crate) last_step: i64,
    pub(crate) first_event: i64,
    pub(crate) last_event: i64,
}

pub(crate) struct Pattern {
    pub(crate) count: i64,
    pub(crate) first_step: i64,
    pub(crate) last_step: i64,
    pub(crate) first_event: i64,
}

pub(crate) struct ErrorRow {
    pub(crate) tool: String,
    pub(crate) sample: String,
    pub(crate) count: i64,
    pub(crate) first_step: i64,
    pub(crate) last_step: i64,
    pub(crate) resolved_step: Option<i64>,
}

pub(crate) struct Pair {
    pub(crate) count: i64,
    pub(crate) last_step: i64,
}

pub(crate) struct Note {
    pub(crate) class: &'static str,
    pub(crate) step: i64,
    pub(crate) text: String,
    pub(crate) data: Json,
}

/// The scratchpad: the session's state and its tables, keyed as the tables are.
#[derive(Default)]
pub(crate) struct Pad {
    pub(crate) state: State,
    pub(crate) max_rows: i64,
    pub(crate) files: Keyed<String, File>,
    /// By (kind, pattern).
    pub(crate) patterns: Keyed<(String, String), Pattern>,
    /// By fingerprint.
    pub(crate) errors: Keyed<String, ErrorRow>,
    /// By (file_a, file_b), file_a < file_b.
    pub(crate) pairs: Keyed<(String, String), Pair>,
    /// Notes kept since the last checkpoint.
    pub(crate) notes: Vec<Note>,
}

impl Pad {
    /// Applies `e`; the in-session triggers that fired for the first time go to `fired`.
    pub(crate) fn apply(&mut self, e: &Event, fired: &mut Vec<&'static str>) {
        self.state.events += 1;
        let step = e.step.unwrap_or(self.state.step);
        self.state.step = self.state.step.max(step);
        match &e.what {
            What::Call(c) => self.call(step, c, fired),
            What::Result { tool, ok, error, .. } => self.result(step, tool, *ok, error.as_deref(), fired),
            What::Reasoning { text } => {
                for (cue, sentence) in language::cues(text) {
                    let class = match cue {
                        Cue::SelfCorrection => {
                            self.state.self_corrections += 1;
                            self.fire(fired, "self_correction");
                            "self_correction"
                        }
                        Cue::DeadEnd => "dead_end",
                    };
                    self.note(class, step, sentence, json!({}));
                }
            }
            What::StepComplete { tokens } => self.step_complete(step, *tokens),
        }
        self.evict();
    }

    /// Records that an in-session trigger fired; answered the first time only.
    fn fire(&mut self, fired: &mut Vec<&'static str>, trigger: &'static str) {
        if !self.state.early.iter().any(|t| t == trigger) {
            self.state.early.push(trigger.to_owned());
            fired.push(trigger);
        }
    }

    fn step_complete(&mut self, step: i64, tokens: i64) {
        let s = &self.state;
        if s.steps_completed >= SPIKE_MIN_STEPS && tokens >= SPIKE_MIN_TOKENS {
            let mean = s.input_tokens as f64 / s.steps_completed as f64;
            if tokens as f64 > SPIKE_RATIO * mean {
                let text = format!(
                    "step {step} took {tokens} tokens, {:.1}× the session's mean",
                    tokens as f64 / mean.max(1.0)
                );
                self.note("token_spike", step, text, json!({"tokens": tokens, "mean": mean.round()}));
            }
        }
        let s = &mut self.state;
        s.steps_completed += 1;
        s.input_tokens = s.input_tokens.saturating_add(tokens);
        s.max_step_tokens = s.max_step_tokens.max(tokens);
    }

    fn call(&mut self, step: i64, c: &Call, fired: &mut Vec<&'static str>) {
        let ev = self.state.events;
        if c.kind == Kind::Web && self.state.external_step.is_none_or(|x| step < x) {
            self.state.external_step = Some(step);
        }
        if matches!(c.kind, Kind::Grep | Kind::Glob) {
            self.left_for_search();
        }
        let counted = matches!(c.kind, Kind::Read | Kind::Edit);
        if counted {
            let edit = c.kind == Kind::Edit;
            for path in &c.paths {
                let (f, made) = self.files.upsert(path, || File {
                    reads: 0,
                    edits: 0,
                    config: tools::is_config(path),
                    left_for_search: false,
                    first_step: step,
                    last_step: step,
                    first_event: ev,
                    last_event: ev,
                });
                if edit {
                    f.edits += 1;
                } else {
                    f.reads += 1;
                }
                f.first_step = f.first_step.min(step);
                f.last_step = f.last_step.max(step);
                f.last_event = ev;
                let (edits, config) = (f.edits, f.config);
                if made {
                    self.state.scratch_rows += 1;
                }
                if edit {
                    self.backtrack(step, path, edits);
                }
                // The trigger's condition changes only when a file is edited for the first
                // time or a configuration file is touched.
                if (edit && edits == 1) || config {
                    self.config_touch(fired);
                }
            }
            self.co_access(step, &c.paths);
        }
        if let (Some(p), Some(kind)) = (&c.pattern, pattern_kind(c.kind)) {
            let n = self.pattern(step, kind, p);
            if n >= 3 && kind == "grep" {
                self.fire(fired, "repeated_grep");
            }
        }
        if let Some(t) = &c.test {
            self.pattern(step, "test", t);
        }
        // A way of working changes something: a sequence of reads and searches alone is how
        // any session looks around, not a recipe.
        let r = &self.state.recent;
        let n = r.len();
        if n >= 2 && [r[n - 2].1, r[n - 1].1, c.kind].iter().any(|k| matches!(k, Kind::Edit | Kind::Shell)) {
            let seq = format!("{} > {} > {}", r[n - 2].0, r[n - 1].0, c.tool);
            self.pattern(step, "sequence", &seq);
        }
        let r = &mut self.state.recent;
        if r.len() == RECENT {
            r.remove(0);
        }
        r.push(Recent(c.tool.clone(), c.kind, if counted { c.paths.clone() } else { Vec::new() }));
    }

    /// Counts a pattern; its count after this one.
    fn pattern(&mut self, step: i64, kind: &str, p: &str) -> i64 {
        let ev = self.state.events;
        let key = (kind.to_owned(), p.to_owned());
        let (row, made) = self.patterns.upsert(&key, || Pattern {
            count: 0,
            first_step: step,
            last_step: step,
            first_event: ev,
        });
        row.count += 1;
        row.last_step = row.last_step.max(step);
        let n = row.count;
        if made {
            self.state.scratch_rows += 1;
        }
        n
    }

    /// A search right after reading one file: the file was not where the answer was.
    fn left_for_search(&mut self) {
        let Some(Recent(_, Kind::Read, paths)) = self.state.recent.last() else {
            return;
        };
        let [path] = paths.as_slice() else {
            return;
        };
        if self.files.get(path).is_some_and(|f| f.edits == 0 && !f.left_for_search) {
            if let Some(f) = self.files.get_mut(path) {
                f.left_for_search = true;
            }
        }
    }

    /// Files read or edited within the last tool calls count as accessed together.
    fn co_access(&mut self, step: i64, paths: &[String]) {
        let mut others: Vec<&str> = Vec::new();
        for r in &self.state.recent {
            for p in &r.2 {
                if !paths.contains(p) && !others.contains(&p.as_str()) {
                    others.push(p);
                }
            }
        }
        let mut made = 0;
        for p in paths {
            for o in &others {
                let (a, b) = if p.as_str() < *o { (p.as_str(), *o) } else { (*o, p.as_str()) };
                let (pair, new) = self
                    .pairs
                    .upsert(&(a.to_owned(), b.to_owned()), || Pair { count: 0, last_step: step });
                pair.count += 1;
                pair.last_step = step;
                made += i64::from(new);
            }
        }
        self.state.scratch_rows += made;
    }

    /// An edit of a file the session edited before and then left for other edits: the agent
    /// came back to it.
    fn backtrack(&mut self, step: i64, path: &str, edits: i64) {
        let recent = &self.state.recent;
        if edits < 2 || recent.iter().any(|r| r.2.iter().any(|p| p == path)) {
            return;
        }
        let elsewhere = recent.iter().filter(|r| r.1 == Kind::Edit && !r.2.is_empty()).count();
        if elsewhere >= 2 {
            let text = format!("returned to edit {path} after editing other files");
            self.note("backtrack", step, text, json!({"file": path}));
        }
    }

    /// The seed's trigger: a configuration file touched while two or more files were edited.
    fn config_touch(&mut self, fired: &mut Vec<&'static str>) {
        if self.state.early.iter().any(|t| t == "config_touch") {
            return;
        }
        let edited = self.files.rows().filter(|f| f.edits > 0).count();
        if edited >= 2 && self.files.rows().any(|f| f.config) {
            self.fire(fired, "config_touch");
        }
    }

    fn result(&mut self, step: i64, tool: &str, ok: bool, error: Option<&str>, fired: &mut Vec<&'static str>) {
        if ok {
            // A success of the tool that failed resolves its open errors: error, retry,
            // success.
            self.errors.update(|_, e| {
                let open = e.tool == tool && e.resolved_step.is_none();
                if open {
                    e.resolved_step = Some(step);
                }
                open
            });
            return;
        }
        let text = error.unwrap_or("");
        let fp = fingerprint(text).unwrap_or_else(|| format!("{tool} failed"));
        let (e, made) = self.errors.upsert(&fp, || ErrorRow {
            tool: String::new(),
            sample: head_chars(text.trim(), MAX_SAMPLE).to_owned(),
            count: 0,
            first_step: step,
            last_step: step,
            resolved_step: None,
        });
        e.count += 1;
        tool.clone_into(&mut e.tool);
        e.last_step = step;
        e.resolved_step = None;
        if made {
            self.state.scratch_rows += 1;
            if self.errors.len() >= 2 {
                self.fire(fired, "error_retry");
            }
        }
    }

    /// Keeps a note, while the session holds fewer than [`MAX_NOTES`].
    fn note(&mut self, class: &'static str, step: i64, text: impl Into<String>, data: Json) {
        if self.state.notes >= MAX_NOTES {
            self.state.evicted += 1;
            return;
        }
        self.state.notes += 1;
        self.notes.push(Note { class, step, text: text.into(), data });
    }

    /// Past the session's bound, drops the lowest-value rows until it holds 90% of it: pairs,
    /// then patterns, then files, each the least counted and longest unseen first. Errors and
    /// notes stay: they are few and each may be a memory.
    fn evict(&mut self) {
        if self.state.scratch_rows <= self.max_rows {
            return;
        }
        let mut excess = (self.state.scratch_rows - self.max_rows * 9 / 10) as usize;
        let mut gone = self.pairs.evict(excess, |p| (p.count, p.last_step));
        excess -= gone;
        if excess > 0 {
            let n = self.patterns.evict(excess, |p| (p.count, p.last_step));
            excess -= n;
            gone += n;
        }
        if excess > 0 {
            gone += self.files.evict(excess, |f| (f.reads + f.edits, f.last_step));
        }
        self.state.scratch_rows -= gone as i64;
        self.state.evicted += gone as i64;
    }
}

fn pattern_kind(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Grep => Some("grep"),
        Kind::Glob => Some("glob"),
        Kind::Web => Some("web"),
        _ => None,
    }
}
