//! Block-max WAND over one view, after a seeding pass.
//!
//! Upper bounds: a term's contribution at a document is `idf · tf_part(tf, len) · recency`
//! (the recency factor is distributed over the terms, which is exact because it multiplies
//! the whole sum), and each factor is bounded by the block's largest tf, smallest length and
//! newest `created_at`. A document is scored only when the bounds of the clauses on it can
//! reach the current k-th score, and a block is read only when a cursor lands in it.

use super::collector::{Collector, Entry};
use super::cursor::{Cur, PhraseC};
use super::plan::{PClause, Plan};
use super::scorer::Scorer;
use super::view::{Docs, SegView};
use crate::search::pages::PageSource;
use crate::search::postings::END;
use crate::search::segment::{Segment, TermInfo};
use crate::Result;

/// Upper bounds are inflated by this factor so that rounding can never prune a document whose
/// real score equals the bound.
const UB_SLACK: f64 = 1.0 + 1e-9;

/// The cursors of one view: scoring cursors with their clause index (the canonical summation
/// order), the proximity clauses checked where a document is scored, then the constraint
/// cursors.
struct Cursors {
    curs: Vec<(usize, Cur)>,
    near: Vec<Near>,
    must: Vec<Vec<Cur>>,
    must_not: Vec<Vec<Cur>>,
}

/// A proximity clause: it can only match where all its terms occur, so instead of a cursor of
/// its own that WAND would walk (checking positions at every document holding its words), its
/// bound rides on the term cursor of its rarest word (`carrier`, an index into
/// `Cursors::curs`) and it is checked only for the documents that get scored.
struct Near {
    clause: usize,
    phrase: PhraseC,
    carrier: usize,
}

impl Near {
    /// Its contribution at `d`, which is being scored, or 0.
    fn score(
        &mut self,
        curs: &[(usize, Cur)],
        src: &mut dyn PageSource,
        d: u32,
        len: u32,
        sc: &Scorer,
    ) -> Result<f64> {
        if curs[self.carrier].1.doc() == d && self.phrase.at(src, d)? {
            Ok(self.phrase.contribution(len, sc))
        } else {
            Ok(0.0)
        }
    }
}

impl Cursors {
    /// `None` when nothing in the view can match.
    fn open(
        seg: &Segment,
        src: &mut dyn PageSource,
        plan: &Plan,
        infos: &[Option<TermInfo>],
        idfs: &[f64],
        sc: &Scorer,
    ) -> Result<Option<Cursors>> {
        let mut curs = Vec::new();
        for (i, c) in plan.should.iter().enumerate() {
            if matches!(c, PClause::Near(..)) {
                continue;
            }
            if let Some(cur) = Cur::open(seg, src, c, infos, idfs, sc)? {
                if cur.doc() != END {
                    curs.push((i, cur));
                }
            }
        }
        let mut near = Vec::new();
        for (i, c) in plan.should.iter().enumerate() {
            let PClause::Near(ts, w) = c else {
                continue;
            };
            let Some(phrase) = PhraseC::open(seg, src, ts, *w, infos, idfs, sc)? else {
                continue; // a word of it is not in this segment
            };
            // The carrier: the term cursor of its rarest word.
            let carrier = curs
                .iter()
                .enumerate()
                .filter_map(|(k, (ci, _))| match &plan.should[*ci] {
                    PClause::Term(t) if ts.contains(t) => {
                        infos[*t].as_ref().map(|info| (info.bounds.df, k))
                    }
                    _ => None,
                })
                .min()
                .map(|(_, k)| k);
            match carrier {
                Some(k) => {
                    if let Cur::Term(t) = &mut curs[k].1 {
                        t.carried += phrase.max_ub();
                    }
                    near.push(Near {
                        clause: i,
                        phrase,
                        carrier: k,
                    });
                }
                // None of its words scores on its own (a weight of 0): it drives itself.
                None => {
                    let cur = phrase.driving(src)?;
                    if cur.doc() != END {
                        curs.push((i, cur));
                    }
                }
            }
        }
        if curs.is_empty() {
            return Ok(None);
        }
        let mut must = Vec::new();
        for any in &plan.must {
            let mut cs = Vec::new();
            for c in any {
                if let Some(cur) = Cur::open(seg, src, c, infos, idfs, sc)? {
                    cs.push(cur);
                }
            }
            if cs.is_empty() {
                return Ok(None); // nothing in this segment can satisfy the constraint
            }
            must.push(cs);
        }
        let mut must_not = Vec::new();
        for any in &plan.must_not {
            let mut cs = Vec::new();
            for c in any {
                if let Some(cur) = Cur::open(seg, src, c, infos, idfs, sc)? {
                    cs.push(cur);
                }
            }
            must_not.push(cs);
        }
        Ok(Some(Cursors {
            curs,
            near,
            must,
            must_not,
        }))
    }

    fn all(&self) -> impl Iterator<Item = &Cur> {
        self.curs
            .iter()
            .map(|(_, c)| c)
            .chain(self.must.iter().flatten())
            .chain(self.must_not.iter().flatten())
    }

    fn work(&self) -> u64 {
        self.all().map(Cur::work).sum::<u64>()
            + self.near.iter().map(|n| n.phrase.work()).sum::<u64>()
    }

    fn bytes_read(&self) -> u64 {
        self.all().map(Cur::bytes_read).sum::<u64>()
            + self.near.iter().map(|n| n.phrase.bytes_read()).sum::<u64>()
    }

    /// Whether a document whose term clauses contribute `contrib` (recency `rec`) can still
    /// reach `theta` once its proximity clauses are added at their bounds. When it cannot, its
    /// positions need not be read: it would not enter the top k whatever they say.
    fn near_may_reach(&self, contrib: &[f64], rec: f64, theta: Option<f64>) -> bool {
        let Some(t) = theta.filter(|_| !self.near.is_empty()) else {
            return true;
        };
        let terms: f64 = contrib.iter().sum();
        let near: f64 = self.near.iter().map(|n| n.phrase.max_ub()).sum();
        (terms * rec + near) * UB_SLACK >= t
    }

    /// Adds the proximity clauses' contributions at `d` to `contrib`.
    fn score_near(
        &mut self,
        src: &mut dyn PageSource,
        d: u32,
        len: u32,
        sc: &Scorer,
        contrib: &mut [f64],
    ) -> Result<()> {
        for n in self.near.iter_mut() {
            contrib[n.clause] = n.score(&self.curs, src, d, len, sc)?;
        }
        Ok(())
    }
}

/// Whether ordinal `d` is live, satisfies the constraints and passes the caller's filter.
fn accept(
    view: &SegView,
    src: &mut dyn PageSource,
    d: u32,
    key: i64,
    cs: &mut Cursors,
    filter: Option<&dyn Fn(i64) -> bool>,
) -> Result<bool> {
    if view.is_dead(d) {
        return Ok(false);
    }
    for any in cs.must.iter_mut() {
        let mut on = false;
        for c in any.iter_mut() {
            c.advance(src, d)?;
            if c.doc() == d {
                on = true;
                break;
            }
        }
        if !on {
            return Ok(false);
        }
    }
    for any in cs.must_not.iter_mut() {
        for c in any.iter_mut() {
            c.advance(src, d)?;
            if c.doc() == d {
                return Ok(false);
            }
        }
    }
    Ok(filter.is_none_or(|f| f(key)))
}

/// One view's search: the view, the query plan with its terms' dictionary entries in this
/// view and their idfs, the scorer, and the caller's filter.
#[derive(Clone, Copy)]
pub(crate) struct ViewQuery<'a> {
    pub view: &'a SegView,
    pub plan: &'a Plan,
    pub infos: &'a [Option<TermInfo>],
    pub idfs: &'a [f64],
    pub sc: &'a Scorer,
    pub filter: Option<&'a dyn Fn(i64) -> bool>,
}

/// Searches one view: seeds the heap, then block-max WAND.
pub(crate) fn run_view(q: &ViewQuery, src: &mut dyn PageSource, col: &mut Collector) -> Result<()> {
    let mut docs = Docs::default();
    seed(q, src, col, &mut docs)?;
    let Some(mut cs) = Cursors::open(&q.view.seg, src, q.plan, q.infos, q.idfs, q.sc)? else {
        return Ok(());
    };
    let r = wand(q, src, col, &mut cs, &mut docs);
    col.stats.steps += cs.work();
    col.stats.postings_bytes += cs.bytes_read();
    r
}

/// Primes the heap before WAND: scores every document of the block with the highest upper
/// bound (over the view's term clauses). Its real scores give WAND a threshold from the
/// start, which matters when scores grow with the document order (recency with keys in time
/// order). Exactness is unaffected: these are real candidates, and WAND skips them later.
fn seed(
    q: &ViewQuery,
    src: &mut dyn PageSource,
    col: &mut Collector,
    docs: &mut Docs,
) -> Result<()> {
    let ViewQuery {
        view,
        plan,
        infos,
        idfs,
        sc,
        filter,
    } = *q;
    let Some(mut cs) = Cursors::open(&view.seg, src, plan, infos, idfs, sc)? else {
        return Ok(());
    };
    // The best block among the term clauses' cursors.
    let mut best: Option<(f64, usize, u32, u32)> = None;
    for (k, (ci, cur)) in cs.curs.iter().enumerate() {
        let (PClause::Term(t), Cur::Term(tc)) = (&plan.should[*ci], cur) else {
            continue;
        };
        for (j, b) in tc.c.blocks.iter().enumerate() {
            let ub = sc.ub(idfs[*t], b.max_tf, b.min_len, b.max_created);
            if best.is_none_or(|x| ub > x.0) {
                let lo = if j == 0 {
                    0
                } else {
                    tc.c.blocks[j - 1].last + 1
                };
                best = Some((ub, k, lo, b.last));
            }
        }
    }
    let Some((_, k, lo, hi)) = best else {
        return Ok(());
    };
    let mut ords = Vec::new();
    {
        let cur = &mut cs.curs[k].1;
        cur.advance(src, lo)?;
        while cur.doc() <= hi && cur.doc() != END {
            ords.push(cur.doc());
            cur.next(src)?;
        }
    }
    // Fresh cursors for scoring (the one above has moved past the block).
    let Some(mut cs2) = Cursors::open(&view.seg, src, plan, infos, idfs, sc)? else {
        return Ok(());
    };
    let mut contrib = vec![0.0f64; plan.should.len()];
    for d in ords {
        col.tick.tick(|| src.check_interrupt())?;
        col.stats.steps += 1;
        contrib.iter_mut().for_each(|c| *c = 0.0);
        let (key, len, created) = docs.get(&view.seg, src, d)?;
        let mut any = false;
        for (ci, cur) in cs2.curs.iter_mut() {
            cur.advance(src, d)?;
            if cur.doc() == d {
                contrib[*ci] = cur.contribution(len, sc);
                any = true;
            }
        }
        if !any || !accept(view, src, d, key, &mut cs2, filter)? {
            continue;
        }
        cs2.score_near(src, d, len, sc, &mut contrib)?;
        let mut bm25 = 0.0;
        for &c in &contrib {
            bm25 += c;
        }
        let rec = sc.rec(created);
        col.stats.scored_docs += 1;
        col.seeded.insert(key);
        col.top.push(Entry {
            score: bm25 * rec,
            doc: key,
            bm25,
            rec,
        });
    }
    col.stats.steps += cs.work() + cs2.work();
    col.stats.postings_bytes += cs.bytes_read() + cs2.bytes_read();
    Ok(())
}

/// Orders the cursors by their document. Between two steps only the cursors that moved are
/// out of place, so an insertion sort (stable, like the sort it replaces) does little work.
fn sort_by_doc(order: &mut [usize], curs: &[(usize, Cur)]) {
    for i in 1..order.len() {
        let mut j = i;
        while j > 0 && curs[order[j - 1]].1.doc() > curs[order[j]].1.doc() {
            order.swap(j - 1, j);
            j -= 1;
        }
    }
}

fn wand(
    q: &ViewQuery,
    src: &mut dyn PageSource,
    col: &mut Collector,
    cs: &mut Cursors,
    docs: &mut Docs,
) -> Result<()> {
    let ViewQuery {
        view,
        plan,
        sc,
        filter,
        ..
    } = *q;
    let mut contrib = vec![0.0f64; plan.should.len()];
    let mut order: Vec<usize> = (0..cs.curs.len()).collect();
    loop {
        col.tick.tick(|| src.check_interrupt())?;
        col.stats.steps += 1;
        sort_by_doc(&mut order, &cs.curs);
        let theta = col.top.threshold();
        let mut acc = 0.0;
        let mut pivot = None;
        for (k, &i) in order.iter().enumerate() {
            if cs.curs[i].1.doc() == END {
                break;
            }
            acc += cs.curs[i].1.max_ub();
            if theta.is_none_or(|t| acc * UB_SLACK >= t) {
                pivot = Some(k);
                break;
            }
        }
        let Some(p) = pivot else {
            return Ok(());
        };
        let pd = cs.curs[order[p]].1.doc();
        let mut last = p;
        while last + 1 < order.len() && cs.curs[order[last + 1]].1.doc() == pd {
            last += 1;
        }
        if let Some(t) = theta {
            let mut bsum = 0.0;
            let mut min_last = END - 1;
            for &i in &order[..=last] {
                let (u, l) = cs.curs[i].1.block_ub(pd, sc);
                bsum += u;
                min_last = min_last.min(l);
            }
            if bsum * UB_SLACK < t {
                col.stats.skipped_blocks += 1;
                let next_doc = if last + 1 < order.len() {
                    cs.curs[order[last + 1]].1.doc()
                } else {
                    END
                };
                let target = min_last.saturating_add(1).min(next_doc);
                for &i in &order[..=last] {
                    cs.curs[i].1.advance(src, target)?;
                }
                continue;
            }
        }
        if cs.curs[order[0]].1.doc() == pd {
            // Evaluate pd: every cursor on it is in order[..=last].
            let (key, len, created) = docs.get(&view.seg, src, pd)?;
            if !col.seeded.contains(&key) && accept(view, src, pd, key, cs, filter)? {
                contrib.iter_mut().for_each(|c| *c = 0.0);
                for &i in &order[..=last] {
                    let (ci, ref cur) = cs.curs[i];
                    contrib[ci] = cur.contribution(len, sc);
                }
                let rec = sc.rec(created);
                if cs.near_may_reach(&contrib, rec, theta) {
                    cs.score_near(src, pd, len, sc, &mut contrib)?;
                    let mut bm25 = 0.0;
                    for &c in &contrib {
                        bm25 += c;
                    }
                    col.stats.scored_docs += 1;
                    col.top.push(Entry {
                        score: bm25 * rec,
                        doc: key,
                        bm25,
                        rec,
                    });
                }
            }
            for &i in &order[..=last] {
                cs.curs[i].1.next(src)?;
            }
        } else {
            for &i in &order[..p] {
                cs.curs[i].1.advance(src, pd)?;
            }
        }
    }
}
