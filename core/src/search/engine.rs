//! Query execution: exact statistics over the live documents, then block-max WAND over every
//! segment and the delta with one shared top-k heap.
//!
//! Upper bounds: a term's contribution at a document is `idf · tf_part(tf, len) · recency`
//! (the recency factor is distributed over the terms, which is exact because it multiplies
//! the whole sum), and each factor is bounded by the block's largest tf, smallest length and
//! newest `created_at`. A document is scored only when the bounds of the clauses on it can
//! reach the current k-th score.

use super::interrupt::Ticker;
use super::postings::{TermCursor, END};
use super::query::{Matcher, Query, MAX_PREFIX_TERMS};
use super::scoring::{idf, recency, tf_part, SearchParams, Stats};
use super::segment::Segment;
use crate::Result;
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
    /// Units of work: WAND iterations, seeded documents and the cursor moves of phrases. The
    /// cost bound of a query is asserted on it (never on time).
    pub steps: u64,
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

/// A phrase over its distinct terms: one cursor per distinct term, however often the phrase
/// repeats it, so a phrase's cost is bounded by the postings of its terms, not by its length
/// times the corpus. A document qualifies only when each term occurs at least as often as the
/// phrase needs it; positions are then checked from the term with the fewest positions, with
/// an early exit per start.
struct PhraseC<'a> {
    /// The distinct terms.
    terms: Vec<TermC<'a>>,
    /// For each phrase position, its term (an index into `terms`).
    atoms: Vec<usize>,
    /// For each distinct term, how many times the phrase holds it.
    need: Vec<u32>,
    doc: u32,
    scratch: Vec<Vec<u32>>,
    /// Cursor moves made (for [`SearchStats::steps`]).
    work: u64,
}

impl<'a> PhraseC<'a> {
    fn new(terms: Vec<TermC<'a>>, atoms: Vec<usize>) -> Self {
        let mut need = vec![0u32; terms.len()];
        for &a in &atoms {
            need[a] += 1;
        }
        let n = terms.len();
        let mut p = PhraseC {
            terms,
            atoms,
            need,
            doc: 0,
            scratch: vec![Vec::new(); n],
            work: 0,
        };
        p.find(0);
        p
    }

    fn find(&mut self, mut target: u32) {
        loop {
            if target == END || self.terms.is_empty() {
                self.doc = END;
                return;
            }
            let mut d = target;
            let mut stable = false;
            while !stable {
                stable = true;
                for t in self.terms.iter_mut() {
                    self.work += 1;
                    t.c.advance(d);
                    let x = t.c.doc();
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
        if self
            .terms
            .iter()
            .zip(&self.need)
            .any(|(t, &need)| t.c.tf() < need)
        {
            return false;
        }
        for (t, s) in self.terms.iter_mut().zip(self.scratch.iter_mut()) {
            s.clear();
            s.extend_from_slice(t.c.positions());
        }
        // Anchor on the phrase position whose term has the fewest positions.
        let Some((anchor, _)) = self
            .atoms
            .iter()
            .enumerate()
            .min_by_key(|&(_, &a)| self.scratch[a].len())
        else {
            return false;
        };
        let anchor_pos = &self.scratch[self.atoms[anchor]];
        anchor_pos.iter().any(|&p| {
            let Some(start) = p.checked_sub(anchor as u32) else {
                return false;
            };
            self.atoms.iter().enumerate().all(|(j, &a)| {
                j == anchor
                    || start
                        .checked_add(j as u32)
                        .is_some_and(|q| self.scratch[a].binary_search(&q).is_ok())
            })
        })
    }

    /// Each phrase position's upper bound (a repeated term counts each time).
    fn max_ub(&self) -> f64 {
        self.atoms.iter().map(|&a| self.terms[a].max_ub).sum()
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
                let mut distinct: Vec<usize> = Vec::new();
                let atoms: Vec<usize> = ts
                    .iter()
                    .map(|t| match distinct.iter().position(|d| d == t) {
                        Some(i) => i,
                        None => {
                            distinct.push(*t);
                            distinct.len() - 1
                        }
                    })
                    .collect();
                let terms: Option<Vec<TermC<'a>>> = distinct.iter().map(|t| term(*t)).collect();
                terms.map(|terms| Cur::Phrase(PhraseC::new(terms, atoms)))
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

    /// Cursor moves this phrase made.
    fn work(&self) -> u64 {
        match self {
            Cur::Term(_) => 0,
            Cur::Phrase(p) => p.work,
        }
    }

    fn max_ub(&self) -> f64 {
        match self {
            Cur::Term(t) => t.max_ub,
            Cur::Phrase(p) => p.max_ub(),
        }
    }

    fn block_ub(&mut self, target: u32, sc: &Scorer) -> (f64, u32) {
        match self {
            Cur::Term(t) => t.block_ub(target, sc),
            Cur::Phrase(p) => {
                let mut last = END - 1;
                let ubs: Vec<f64> = p
                    .terms
                    .iter_mut()
                    .map(|t| {
                        let (u, l) = t.block_ub(target, sc);
                        last = last.min(l);
                        u
                    })
                    .collect();
                (p.atoms.iter().map(|&a| ubs[a]).sum(), last)
            }
        }
    }

    /// The BM25 contribution at the current document (no recency).
    fn contribution(&self, len: u32, sc: &Scorer) -> f64 {
        match self {
            Cur::Term(t) => t.idf * sc.tf(t.c.tf(), len),
            Cur::Phrase(p) => {
                let mut s = 0.0;
                for &a in &p.atoms {
                    let t = &p.terms[a];
                    s += t.idf * sc.tf(t.c.tf(), len);
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

/// What one query's execution accumulates across views: the top k, the statistics, the
/// documents the seeding pass scored, and the ticker that lets the host cancel.
struct Collector<'t> {
    top: TopK,
    stats: SearchStats,
    seeded: std::collections::HashSet<i64>,
    tick: Ticker<'t>,
}

/// Runs a query over views (segments and the delta). Fails only when the host cancels it.
pub fn execute(
    views: &[View],
    q: &Query,
    params: &SearchParams,
    now: i64,
    filter: Option<&dyn Fn(i64) -> bool>,
    tick: Ticker<'_>,
) -> Result<SearchResult> {
    let stats = SearchStats {
        total_docs: views.iter().map(View::live_docs).sum(),
        ..Default::default()
    };
    if q.is_empty() || params.limit == 0 || stats.total_docs == 0 {
        return Ok(SearchResult {
            hits: Vec::new(),
            stats,
        });
    }
    let mut col = Collector {
        top: TopK {
            k: params.limit,
            heap: BinaryHeap::new(),
        },
        stats,
        seeded: std::collections::HashSet::new(),
        tick,
    };
    let st = Stats {
        docs: col.stats.total_docs,
        total_len: views.iter().map(View::live_len).sum(),
    };
    let plan = plan(views, q);
    col.stats.terms = plan.terms.len();
    let mut idfs = Vec::with_capacity(plan.terms.len());
    for t in &plan.terms {
        let mut df = 0;
        for v in views {
            if let Some(id) = v.seg.term_id(t) {
                col.tick.ticks(v.dead.len())?;
                df += v.live_df(id);
            }
        }
        idfs.push(idf(st.docs, df));
    }
    let sc = Scorer {
        k1: params.k1,
        b: params.b,
        avgdl: st.avgdl(),
        now,
        w: params.recency_weight,
        half_life: params.half_life_ms,
    };
    for view in views {
        run_view(view, &plan, &idfs, &sc, filter, &mut col)?;
    }
    let mut hits: Vec<Entry> = col.top.heap.into_vec();
    hits.sort();
    Ok(SearchResult {
        hits: hits
            .into_iter()
            .map(|e| Hit {
                doc: e.doc,
                score: e.score,
                bm25: e.bm25,
                recency: e.rec,
            })
            .collect(),
        stats: col.stats,
    })
}

/// The cursors of one view: scoring cursors with their clause index (the canonical
/// summation order), then the constraint cursors. `None` when nothing in the view can match.
struct Cursors<'a> {
    curs: Vec<(usize, Cur<'a>)>,
    must: Vec<Vec<Cur<'a>>>,
    must_not: Vec<Vec<Cur<'a>>>,
}

impl Cursors<'_> {
    /// Cursor moves all phrase cursors made.
    fn work(&self) -> u64 {
        let scoring: u64 = self.curs.iter().map(|(_, c)| c.work()).sum();
        let constraints: u64 = self
            .must
            .iter()
            .chain(&self.must_not)
            .flatten()
            .map(Cur::work)
            .sum();
        scoring + constraints
    }
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
fn seed(
    view: &View,
    plan: &Plan,
    tids: &[Option<usize>],
    idfs: &[f64],
    sc: &Scorer,
    filter: Option<&dyn Fn(i64) -> bool>,
    col: &mut Collector,
) -> Result<()> {
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
    let Some((_, id, lo, hi)) = best else {
        return Ok(());
    };
    let mut c = seg.cursor(id);
    c.advance(lo);
    let mut docs = Vec::new();
    while c.doc() <= hi && c.doc() != END {
        docs.push(c.doc());
        c.next();
    }
    let Some(mut cs) = cursors(view, plan, tids, idfs, sc) else {
        return Ok(());
    };
    let mut contrib = vec![0.0f64; plan.should.len()];
    for d in docs {
        col.tick.tick()?;
        col.stats.steps += 1;
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
        col.stats.scored_docs += 1;
        col.seeded.insert(key);
        col.top.push(Entry {
            score: bm25 * rec,
            doc: key,
            bm25,
            rec,
        });
    }
    col.stats.steps += cs.work();
    Ok(())
}

fn run_view(
    view: &View,
    plan: &Plan,
    idfs: &[f64],
    sc: &Scorer,
    filter: Option<&dyn Fn(i64) -> bool>,
    col: &mut Collector,
) -> Result<()> {
    let seg = &*view.seg;
    let tids: Vec<Option<usize>> = plan.terms.iter().map(|t| seg.term_id(t)).collect();
    let tids = &tids[..];
    let Some(mut cs) = cursors(view, plan, tids, idfs, sc) else {
        return Ok(());
    };
    seed(view, plan, tids, idfs, sc, filter, col)?;
    let r = wand(view, plan, sc, filter, col, &mut cs);
    col.stats.steps += cs.work();
    r
}

/// Block-max WAND over one view's cursors.
fn wand(
    view: &View,
    plan: &Plan,
    sc: &Scorer,
    filter: Option<&dyn Fn(i64) -> bool>,
    col: &mut Collector,
    cs: &mut Cursors,
) -> Result<()> {
    let seg = &*view.seg;
    let Cursors {
        curs,
        must,
        must_not,
    } = cs;
    let mut contrib = vec![0.0f64; plan.should.len()];
    let mut order: Vec<usize> = (0..curs.len()).collect();
    loop {
        col.tick.tick()?;
        col.stats.steps += 1;
        order.sort_by_key(|&i| curs[i].1.doc());
        let theta = col.top.threshold();
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
        let Some(p) = pivot else {
            return Ok(());
        };
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
                col.stats.skipped_blocks += 1;
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
            if !col.seeded.contains(&seg.keys[pd as usize])
                && accept(view, pd, must, must_not, filter)
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
                col.stats.scored_docs += 1;
                col.top.push(Entry {
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
