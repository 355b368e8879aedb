//! Query execution: exact statistics over the live documents, then block-max WAND over every
//! segment and the delta with one shared top-k heap.
//!
//! Upper bounds: a term's contribution at a document is `idf · tf_part(tf, len) · recency`
//! (the recency factor is distributed over the terms, which is exact because it multiplies
//! the whole sum), and each factor is bounded by the block's largest tf, smallest length and
//! newest `created_at`. A document is scored only when the bounds of the clauses on it can
//! reach the current k-th score.

use super::postings::{TermCursor, END};
use super::query::{Matcher, Query, MAX_PREFIX_TERMS};
use super::scoring::{idf, recency, tf_part, SearchParams, Stats};
use super::segment::Segment;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// Upper bounds are inflated by this factor so that rounding can never prune a document whose
/// real score equals the bound.
const UB_SLACK: f64 = 1.0 + 1e-9;

/// One hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The document key.
    pub doc: i64,
    /// `bm25 × recency`.
    pub score: f64,
    pub bm25: f64,
    pub recency: f64,
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Documents whose score was computed in full.
    pub scored_docs: u64,
    /// Blocks skipped because their upper bound could not reach the k-th score.
    pub skipped_blocks: u64,
    /// Live documents in the namespace (N).
    pub total_docs: u64,
    /// Segments searched (not counting the delta).
    pub segments: usize,
    /// Documents in the delta.
    pub delta_docs: usize,
    /// Distinct terms the query was resolved to (after prefix expansion).
    pub terms: usize,
}

/// The hits (best first) and the statistics of a search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub stats: SearchStats,
}

/// A segment as a search sees it: the segment and its tombstoned ordinals (sorted).
pub struct View {
    pub seg: Arc<Segment>,
    pub dead: Vec<u32>,
}

impl View {
    /// Live documents containing a term number of this segment.
    pub fn live_df(&self, tid: usize) -> u64 {
        let Some(info) = self.seg.info(tid) else {
            return 0;
        };
        let mut df = u64::from(info.df);
        if !self.dead.is_empty() {
            let mut c = self.seg.cursor(tid);
            for &d in &self.dead {
                c.advance(d);
                if c.doc() == END {
                    break;
                }
                if c.doc() == d {
                    df -= 1;
                }
            }
        }
        df
    }

    pub fn live_docs(&self) -> u64 {
        (self.seg.doc_count() - self.dead.len()) as u64
    }

    pub fn live_len(&self) -> u64 {
        let dead: u64 = self
            .dead
            .iter()
            .map(|&o| u64::from(self.seg.lens[o as usize]))
            .sum();
        self.seg.total_len - dead
    }
}

/// A scoring or constraint clause resolved to term numbers in [`Plan::terms`].
#[derive(Clone, Debug, PartialEq)]
pub enum PClause {
    Term(usize),
    Phrase(Vec<usize>),
}

/// A query resolved against the index: distinct terms, scoring clauses in canonical order,
/// constraints as any-of lists.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub terms: Vec<String>,
    pub should: Vec<PClause>,
    pub must: Vec<Vec<PClause>>,
    pub must_not: Vec<Vec<PClause>>,
}

impl Plan {
    fn term(&mut self, t: &str) -> usize {
        if let Some(i) = self.terms.iter().position(|x| x == t) {
            return i;
        }
        self.terms.push(t.to_owned());
        self.terms.len() - 1
    }
}

/// The live terms starting with `prefix`, ascending, at most [`MAX_PREFIX_TERMS`].
pub fn expand_prefix(views: &[View], prefix: &str) -> Vec<String> {
    use fst::{Automaton, IntoStreamer, Streamer};
    let aut = fst::automaton::Str::new(prefix).starts_with();
    let mut op = fst::map::OpBuilder::new();
    for v in views {
        op = op.add(v.seg.dict.search(aut.clone()));
    }
    let mut union = op.union().into_stream();
    let mut out = Vec::new();
    while let Some((term, ivs)) = union.next() {
        let df: u64 = ivs
            .iter()
            .map(|iv| views[iv.index].live_df(iv.value as usize))
            .sum();
        if df > 0 {
            out.push(String::from_utf8_lossy(term).into_owned());
            if out.len() >= MAX_PREFIX_TERMS {
                break;
            }
        }
    }
    out
}

fn resolve(plan: &mut Plan, views: &[View], m: &Matcher) -> Vec<PClause> {
    match m {
        Matcher::Term(t) => vec![PClause::Term(plan.term(t))],
        Matcher::Phrase(atoms) => vec![PClause::Phrase(
            atoms.iter().map(|a| plan.term(a)).collect(),
        )],
        Matcher::Prefix(p) => expand_prefix(views, p)
            .iter()
            .map(|t| PClause::Term(plan.term(t)))
            .collect(),
    }
}

/// Resolves a parsed query: prefixes expanded, `Term` scoring clauses deduplicated.
pub fn plan(views: &[View], q: &Query) -> Plan {
    let mut plan = Plan::default();
    for m in &q.should {
        for c in resolve(&mut plan, views, m) {
            if !plan.should.contains(&c) {
                plan.should.push(c);
            }
        }
    }
    for m in &q.must {
        let any = resolve(&mut plan, views, m);
        plan.must.push(any);
    }
    for m in &q.must_not {
        let any = resolve(&mut plan, views, m);
        plan.must_not.push(any);
    }
    plan
}

/// Everything a score or a bound needs.
struct Scorer {
    k1: f64,
    b: f64,
    avgdl: f64,
    now: i64,
    w: f64,
    half_life: f64,
}

impl Scorer {
    fn tf(&self, tf: u32, len: u32) -> f64 {
        tf_part(tf, u64::from(len), self.avgdl, self.k1, self.b)
    }
    fn rec(&self, created: i64) -> f64 {
        recency(created, self.now, self.w, self.half_life)
    }
    fn ub(&self, idf: f64, max_tf: u32, min_len: u32, max_created: i64) -> f64 {
        idf * self.tf(max_tf, min_len) * self.rec(max_created)
    }
}

struct TermC<'a> {
    c: TermCursor<'a>,
    idf: f64,
    max_ub: f64,
    cached_last: u32,
    cached_ub: f64,
}

impl<'a> TermC<'a> {
    fn new(view: &'a View, tid: usize, idf: f64, sc: &Scorer) -> Option<Self> {
        let info = view.seg.info(tid)?;
        Some(TermC {
            c: view.seg.cursor(tid),
            idf,
            max_ub: sc.ub(idf, info.max_tf, info.min_len, info.max_created),
            cached_last: END,
            cached_ub: 0.0,
        })
    }

    fn block_ub(&mut self, target: u32, sc: &Scorer) -> (f64, u32) {
        match self.c.shallow(target) {
            None => (0.0, END - 1),
            Some(b) => {
                if self.cached_last != b.last {
                    self.cached_last = b.last;
                    self.cached_ub = sc.ub(self.idf, b.max_tf, b.min_len, b.max_created);
                }
                (self.cached_ub, b.last)
            }
        }
    }
}

struct PhraseC<'a> {
    atoms: Vec<TermC<'a>>,
    doc: u32,
    scratch: Vec<Vec<u32>>,
}

impl<'a> PhraseC<'a> {
    fn new(atoms: Vec<TermC<'a>>) -> Self {
        let n = atoms.len();
        let mut p = PhraseC {
            atoms,
            doc: 0,
            scratch: vec![Vec::new(); n],
        };
        p.find(0);
        p
    }

    fn find(&mut self, mut target: u32) {
        loop {
            if target == END || self.atoms.is_empty() {
                self.doc = END;
                return;
            }
            let mut d = target;
            let mut stable = false;
            while !stable {
                stable = true;
                for a in self.atoms.iter_mut() {
                    a.c.advance(d);
                    let x = a.c.doc();
                    if x == END {
                        self.doc = END;
                        return;
                    }
                    if x > d {
                        d = x;
                        stable = false;
                    }
                }
            }
            if self.matches_here() {
                self.doc = d;
                return;
            }
            target = d + 1;
        }
    }

    fn matches_here(&mut self) -> bool {
        for (a, s) in self.atoms.iter_mut().zip(self.scratch.iter_mut()) {
            s.clear();
            s.extend_from_slice(a.c.positions());
        }
        let first = &self.scratch[0];
        first.iter().any(|&p| {
            self.scratch[1..].iter().enumerate().all(|(j, ps)| {
                p.checked_add(j as u32 + 1)
                    .is_some_and(|q| ps.binary_search(&q).is_ok())
            })
        })
    }
}

enum Cur<'a> {
    Term(TermC<'a>),
    Phrase(PhraseC<'a>),
}

impl<'a> Cur<'a> {
    /// `tids[i]` is the segment's number of plan term `i`, if the segment has it.
    fn build(
        view: &'a View,
        c: &PClause,
        tids: &[Option<usize>],
        idfs: &[f64],
        sc: &Scorer,
    ) -> Option<Self> {
        let term = |t: usize| TermC::new(view, tids[t]?, idfs[t], sc);
        match c {
            PClause::Term(t) => term(*t).map(Cur::Term),
            PClause::Phrase(ts) => {
                let atoms: Option<Vec<TermC<'a>>> = ts.iter().map(|t| term(*t)).collect();
                atoms.map(|a| Cur::Phrase(PhraseC::new(a)))
            }
        }
    }

    #[inline]
    fn doc(&self) -> u32 {
        match self {
            Cur::Term(t) => t.c.doc(),
            Cur::Phrase(p) => p.doc,
        }
    }

    fn next(&mut self) {
        match self {
            Cur::Term(t) => t.c.next(),
            Cur::Phrase(p) => {
                if p.doc != END {
                    p.find(p.doc + 1)
                }
            }
        }
    }

    fn advance(&mut self, target: u32) {
        match self {
            Cur::Term(t) => t.c.advance(target),
            Cur::Phrase(p) => {
                if p.doc < target {
                    p.find(target)
                }
            }
        }
    }

    fn max_ub(&self) -> f64 {
        match self {
            Cur::Term(t) => t.max_ub,
            Cur::Phrase(p) => p.atoms.iter().map(|a| a.max_ub).sum(),
        }
    }

    fn block_ub(&mut self, target: u32, sc: &Scorer) -> (f64, u32) {
        match self {
            Cur::Term(t) => t.block_ub(target, sc),
            Cur::Phrase(p) => {
                let mut ub = 0.0;
                let mut last = END - 1;
                for a in p.atoms.iter_mut() {
                    let (u, l) = a.block_ub(target, sc);
                    ub += u;
                    last = last.min(l);
                }
                (ub, last)
            }
        }
    }

    /// The BM25 contribution at the current document (no recency).
    fn contribution(&self, len: u32, sc: &Scorer) -> f64 {
        match self {
            Cur::Term(t) => t.idf * sc.tf(t.c.tf(), len),
            Cur::Phrase(p) => {
                let mut s = 0.0;
                for a in &p.atoms {
                    s += a.idf * sc.tf(a.c.tf(), len);
                }
                s
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    score: f64,
    doc: i64,
    bm25: f64,
    rec: f64,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Greater = worse, so a max-heap keeps the worst on top.
    fn cmp(&self, o: &Self) -> Ordering {
        o.score.total_cmp(&self.score).then(o.doc.cmp(&self.doc))
    }
}

struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
}

impl TopK {
    fn threshold(&self) -> Option<f64> {
        if self.heap.len() >= self.k {
            self.heap.peek().map(|e| e.score)
        } else {
            None
        }
    }
    fn push(&mut self, e: Entry) {
        if self.heap.len() < self.k {
            self.heap.push(e);
        } else if let Some(top) = self.heap.peek() {
            if e < *top {
                self.heap.pop();
                self.heap.push(e);
            }
        }
    }
}

/// Runs a query over views (segments and the delta).
pub fn execute(
    views: &[View],
    q: &Query,
    params: &SearchParams,
    now: i64,
    filter: Option<&dyn Fn(i64) -> bool>,
) -> SearchResult {
    let mut stats = SearchStats {
        total_docs: views.iter().map(View::live_docs).sum(),
        ..Default::default()
    };
    if q.is_empty() || params.limit == 0 || stats.total_docs == 0 {
        return SearchResult {
            hits: Vec::new(),
            stats,
        };
    }
    let st = Stats {
        docs: stats.total_docs,
        total_len: views.iter().map(View::live_len).sum(),
    };
    let plan = plan(views, q);
    stats.terms = plan.terms.len();
    let idfs: Vec<f64> = plan
        .terms
        .iter()
        .map(|t| {
            let df: u64 = views
                .iter()
                .map(|v| v.seg.term_id(t).map_or(0, |id| v.live_df(id)))
                .sum();
            idf(st.docs, df)
        })
        .collect();
    let sc = Scorer {
        k1: params.k1,
        b: params.b,
        avgdl: st.avgdl(),
        now,
        w: params.recency_weight,
        half_life: params.half_life_ms,
    };
    let mut top = TopK {
        k: params.limit,
        heap: BinaryHeap::new(),
    };
    let mut seeded = std::collections::HashSet::new();
    for view in views {
        run_view(
            view,
            &plan,
            &idfs,
            &sc,
            filter,
            &mut top,
            &mut stats,
            &mut seeded,
        );
    }
    let mut hits: Vec<Entry> = top.heap.into_vec();
    hits.sort();
    SearchResult {
        hits: hits
            .into_iter()
            .map(|e| Hit {
                doc: e.doc,
                score: e.score,
                bm25: e.bm25,
                recency: e.rec,
            })
            .collect(),
        stats,
    }
}

/// The cursors of one view: scoring cursors with their clause index (the canonical
/// summation order), then the constraint cursors. `None` when nothing in the view can match.
struct Cursors<'a> {
    curs: Vec<(usize, Cur<'a>)>,
    must: Vec<Vec<Cur<'a>>>,
    must_not: Vec<Vec<Cur<'a>>>,
}

fn cursors<'a>(
    view: &'a View,
    plan: &Plan,
    tids: &[Option<usize>],
    idfs: &[f64],
    sc: &Scorer,
) -> Option<Cursors<'a>> {
    let mut curs: Vec<(usize, Cur)> = Vec::new();
    for (i, c) in plan.should.iter().enumerate() {
        if let Some(cur) = Cur::build(view, c, tids, idfs, sc) {
            if cur.doc() != END {
                curs.push((i, cur));
            }
        }
    }
    if curs.is_empty() {
        return None;
    }
    let mut must: Vec<Vec<Cur>> = Vec::new();
    for any in &plan.must {
        let cs: Vec<Cur> = any
            .iter()
            .filter_map(|c| Cur::build(view, c, tids, idfs, sc))
            .collect();
        if cs.is_empty() {
            return None; // nothing in this segment can satisfy the constraint
        }
        must.push(cs);
    }
    let must_not = plan
        .must_not
        .iter()
        .map(|any| {
            any.iter()
                .filter_map(|c| Cur::build(view, c, tids, idfs, sc))
                .collect()
        })
        .collect();
    Some(Cursors {
        curs,
        must,
        must_not,
    })
}

/// Primes the heap before WAND: scores every document of the block with the highest upper
/// bound (over the view's term clauses). Its real scores give WAND a threshold from the
/// start, which matters when scores grow with the document order (recency with keys in time
/// order). Exactness is unaffected: these are real candidates, and WAND skips them later.
#[allow(clippy::too_many_arguments)]
fn seed(
    view: &View,
    plan: &Plan,
    tids: &[Option<usize>],
    idfs: &[f64],
    sc: &Scorer,
    filter: Option<&dyn Fn(i64) -> bool>,
    top: &mut TopK,
    stats: &mut SearchStats,
    seeded: &mut std::collections::HashSet<i64>,
) {
    let seg = &*view.seg;
    let mut best: Option<(f64, usize, u32, u32)> = None;
    for c in &plan.should {
        let PClause::Term(t) = c else { continue };
        let Some(id) = tids[*t] else { continue };
        let Some(info) = seg.info(id) else { continue };
        let Some(blocks) = seg
            .blocks
            .get(info.first_block as usize..info.first_block as usize + info.n_blocks as usize)
        else {
            continue;
        };
        for (j, b) in blocks.iter().enumerate() {
            let ub = sc.ub(idfs[*t], b.max_tf, b.min_len, b.max_created);
            if best.is_none_or(|x| ub > x.0) {
                let lo = if j == 0 { 0 } else { blocks[j - 1].last + 1 };
                best = Some((ub, id, lo, b.last));
            }
        }
    }
    let Some((_, id, lo, hi)) = best else { return };
    let mut c = seg.cursor(id);
    c.advance(lo);
    let mut docs = Vec::new();
    while c.doc() <= hi && c.doc() != END {
        docs.push(c.doc());
        c.next();
    }
    let Some(mut cs) = cursors(view, plan, tids, idfs, sc) else {
        return;
    };
    let mut contrib = vec![0.0f64; plan.should.len()];
    for d in docs {
        contrib.iter_mut().for_each(|c| *c = 0.0);
        let mut any = false;
        let len = seg.lens[d as usize];
        for (ci, cur) in cs.curs.iter_mut() {
            cur.advance(d);
            if cur.doc() == d {
                contrib[*ci] = cur.contribution(len, sc);
                any = true;
            }
        }
        if !any || !accept(view, d, &mut cs.must, &mut cs.must_not, filter) {
            continue;
        }
        let mut bm25 = 0.0;
        for &c in &contrib {
            bm25 += c;
        }
        let rec = sc.rec(seg.created[d as usize]);
        let key = seg.keys[d as usize];
        stats.scored_docs += 1;
        seeded.insert(key);
        top.push(Entry {
            score: bm25 * rec,
            doc: key,
            bm25,
            rec,
        });
    }
}

#[allow(clippy::too_many_arguments)]
fn run_view(
    view: &View,
    plan: &Plan,
    idfs: &[f64],
    sc: &Scorer,
    filter: Option<&dyn Fn(i64) -> bool>,
    top: &mut TopK,
    stats: &mut SearchStats,
    seeded: &mut std::collections::HashSet<i64>,
) {
    let seg = &*view.seg;
    let tids: Vec<Option<usize>> = plan.terms.iter().map(|t| seg.term_id(t)).collect();
    let tids = &tids[..];
    let Some(Cursors {
        mut curs,
        mut must,
        mut must_not,
    }) = cursors(view, plan, tids, idfs, sc)
    else {
        return;
    };
    seed(view, plan, tids, idfs, sc, filter, top, stats, seeded);
    let mut contrib = vec![0.0f64; plan.should.len()];
    let mut order: Vec<usize> = (0..curs.len()).collect();
    loop {
        order.sort_by_key(|&i| curs[i].1.doc());
        let theta = top.threshold();
        let mut acc = 0.0;
        let mut pivot = None;
        for (k, &i) in order.iter().enumerate() {
            if curs[i].1.doc() == END {
                break;
            }
            acc += curs[i].1.max_ub();
            if theta.is_none_or(|t| acc * UB_SLACK >= t) {
                pivot = Some(k);
                break;
            }
        }
        let Some(p) = pivot else { break };
        let pd = curs[order[p]].1.doc();
        let mut last = p;
        while last + 1 < order.len() && curs[order[last + 1]].1.doc() == pd {
            last += 1;
        }
        if let Some(t) = theta {
            let mut bsum = 0.0;
            let mut min_last = END - 1;
            for &i in &order[..=last] {
                let (u, l) = curs[i].1.block_ub(pd, sc);
                bsum += u;
                min_last = min_last.min(l);
            }
            if bsum * UB_SLACK < t {
                stats.skipped_blocks += 1;
                let next_doc = if last + 1 < order.len() {
                    curs[order[last + 1]].1.doc()
                } else {
                    END
                };
                let target = min_last.saturating_add(1).min(next_doc);
                for &i in &order[..=last] {
                    curs[i].1.advance(target);
                }
                continue;
            }
        }
        if curs[order[0]].1.doc() == pd {
            // Evaluate pd: every cursor on it is in order[..=last].
            if !seeded.contains(&seg.keys[pd as usize])
                && accept(view, pd, &mut must, &mut must_not, filter)
            {
                contrib.iter_mut().for_each(|c| *c = 0.0);
                let len = seg.lens[pd as usize];
                for &i in &order[..=last] {
                    let (ci, ref cur) = curs[i];
                    contrib[ci] = cur.contribution(len, sc);
                }
                let mut bm25 = 0.0;
                for &c in &contrib {
                    bm25 += c;
                }
                let rec = sc.rec(seg.created[pd as usize]);
                stats.scored_docs += 1;
                top.push(Entry {
                    score: bm25 * rec,
                    doc: seg.keys[pd as usize],
                    bm25,
                    rec,
                });
            }
            for &i in &order[..=last] {
                curs[i].1.next();
            }
        } else {
            for &i in &order[..p] {
                curs[i].1.advance(pd);
            }
        }
    }
}

fn accept(
    view: &View,
    d: u32,
    must: &mut [Vec<Cur>],
    must_not: &mut [Vec<Cur>],
    filter: Option<&dyn Fn(i64) -> bool>,
) -> bool {
    if view.dead.binary_search(&d).is_ok() {
        return false;
    }
    let mut on = |cs: &mut Vec<Cur>| {
        cs.iter_mut().any(|c| {
            c.advance(d);
            c.doc() == d
        })
    };
    if !must.iter_mut().all(&mut on) {
        return false;
    }
    if must_not.iter_mut().any(&mut on) {
        return false;
    }
    filter.is_none_or(|f| f(view.seg.keys[d as usize]))
}
