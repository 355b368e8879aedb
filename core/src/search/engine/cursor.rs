//! The cursors a search moves over one view: a term's postings with its score bounds, and a
//! phrase over the cursors of its distinct terms.

use super::plan::PClause;
use super::scorer::Scorer;
use crate::search::pages::PageSource;
use crate::search::postings::{TermCursor, END};
use crate::search::segment::{Segment, TermInfo};
use crate::Result;

pub(crate) struct TermC {
    pub c: TermCursor,
    pub idf: f64,
    pub max_ub: f64,
    /// The bounds of the proximity clauses this cursor carries (see [`PhraseC::at`]): added
    /// to its own, since such a clause can only match where this term occurs.
    pub carried: f64,
    cached_last: u32,
    cached_ub: f64,
}

impl TermC {
    pub(crate) fn open(
        seg: &Segment,
        src: &mut dyn PageSource,
        info: &TermInfo,
        idf: f64,
        sc: &Scorer,
    ) -> Result<Self> {
        let b = &info.bounds;
        Ok(TermC {
            c: seg.cursor(src, info)?,
            idf,
            max_ub: sc.ub(idf, b.max_tf, b.min_len, b.max_created),
            carried: 0.0,
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
                (self.cached_ub + self.carried, b.last)
            }
        }
    }
}

/// A phrase over its distinct terms: one cursor per distinct term, however often the phrase
/// repeats it, so a phrase's cost is bounded by the postings of its terms, not by its length
/// times the corpus. A document qualifies only when each term occurs at least as often as the
/// phrase needs it; positions are then checked from the term with the fewest positions, with
/// an early exit per start.
pub(crate) struct PhraseC {
    /// The distinct terms.
    terms: Vec<TermC>,
    /// For each phrase position, its term (an index into `terms`).
    atoms: Vec<usize>,
    /// For each distinct term, how many times the phrase holds it.
    need: Vec<u32>,
    doc: u32,
    scratch: Vec<Vec<u32>>,
    /// Cursor moves made (for `SearchStats::steps`).
    work: u64,
    /// The clause's weight (1 for a quoted phrase, `proximity_weight` for words typed side by
    /// side).
    weight: f64,
}

impl PhraseC {
    /// A phrase over `terms`, not yet positioned: [`PhraseC::driving`] puts it on its first
    /// match, otherwise it is only asked [`PhraseC::at`].
    fn new(terms: Vec<TermC>, atoms: Vec<usize>, weight: f64) -> Self {
        let mut need = vec![0u32; terms.len()];
        for &a in &atoms {
            need[a] += 1;
        }
        let n = terms.len();
        PhraseC {
            terms,
            atoms,
            need,
            doc: 0,
            scratch: vec![Vec::new(); n],
            work: 0,
            weight,
        }
    }

    /// The phrase as a cursor of its own, on its first match.
    pub(crate) fn driving(mut self, src: &mut dyn PageSource) -> Result<Cur> {
        self.find(src, 0)?;
        Ok(Cur::Phrase(self))
    }

    /// Opens a phrase clause's cursor in a view; `None` when a term of it is not in the
    /// segment (nothing there can match).
    pub(crate) fn open(
        seg: &Segment,
        src: &mut dyn PageSource,
        ts: &[usize],
        weight: f64,
        infos: &[Option<TermInfo>],
        idfs: &[f64],
        sc: &Scorer,
    ) -> Result<Option<Self>> {
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
        let mut terms = Vec::with_capacity(distinct.len());
        for t in &distinct {
            let Some(info) = &infos[*t] else {
                return Ok(None);
            };
            terms.push(TermC::open(seg, src, info, idfs[*t], sc)?);
        }
        Ok(Some(PhraseC::new(terms, atoms, weight)))
    }

    /// Whether the phrase occurs in document `d`, looking no further than `d`: its cursors
    /// only move forward, so the calls must come in ascending order. A proximity clause is
    /// checked this way only for the documents a search scores, never walked on its own.
    pub(crate) fn at(&mut self, src: &mut dyn PageSource, d: u32) -> Result<bool> {
        for t in self.terms.iter_mut() {
            self.work += 1;
            t.c.advance(src, d)?;
            if t.c.doc() != d {
                return Ok(false);
            }
        }
        Ok(self.matches_here())
    }

    /// The clause's BM25 contribution at the current document (no recency).
    pub(crate) fn contribution(&self, len: u32, sc: &Scorer) -> f64 {
        let mut s = 0.0;
        for &a in &self.atoms {
            let t = &self.terms[a];
            s += t.idf * sc.tf(t.c.tf(), len);
        }
        self.weight * s
    }

    /// Cursor moves made.
    pub(crate) fn work(&self) -> u64 {
        self.work
    }

    /// Bytes of postings read.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.terms.iter().map(|t| t.c.bytes_read).sum()
    }

    fn find(&mut self, src: &mut dyn PageSource, mut target: u32) -> Result<()> {
        loop {
            if target == END || self.terms.is_empty() {
                self.doc = END;
                return Ok(());
            }
            let mut d = target;
            let mut stable = false;
            while !stable {
                stable = true;
                for t in self.terms.iter_mut() {
                    self.work += 1;
                    t.c.advance(src, d)?;
                    let x = t.c.doc();
                    if x == END {
                        self.doc = END;
                        return Ok(());
                    }
                    if x > d {
                        d = x;
                        stable = false;
                    }
                }
            }
            if self.matches_here() {
                self.doc = d;
                return Ok(());
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
    pub(crate) fn max_ub(&self) -> f64 {
        self.weight
            * self
                .atoms
                .iter()
                .map(|&a| self.terms[a].max_ub)
                .sum::<f64>()
    }
}

pub(crate) enum Cur {
    Term(TermC),
    Phrase(PhraseC),
}

impl Cur {
    /// The cursor of a clause in a view; `None` when a term of it is not in the segment.
    /// `infos[i]` is the segment's entry for plan term `i`.
    pub(crate) fn open(
        seg: &Segment,
        src: &mut dyn PageSource,
        c: &PClause,
        infos: &[Option<TermInfo>],
        idfs: &[f64],
        sc: &Scorer,
    ) -> Result<Option<Self>> {
        match c {
            PClause::Term(t) => match &infos[*t] {
                Some(info) => Ok(Some(Cur::Term(TermC::open(seg, src, info, idfs[*t], sc)?))),
                None => Ok(None),
            },
            PClause::Phrase(ts, weight) | PClause::Near(ts, weight) => {
                match PhraseC::open(seg, src, ts, *weight, infos, idfs, sc)? {
                    Some(p) => Ok(Some(p.driving(src)?)),
                    None => Ok(None),
                }
            }
        }
    }

    #[inline]
    pub(crate) fn doc(&self) -> u32 {
        match self {
            Cur::Term(t) => t.c.doc(),
            Cur::Phrase(p) => p.doc,
        }
    }

    pub(crate) fn next(&mut self, src: &mut dyn PageSource) -> Result<()> {
        match self {
            Cur::Term(t) => t.c.next(src),
            Cur::Phrase(p) => {
                if p.doc != END {
                    p.find(src, p.doc + 1)?;
                }
                Ok(())
            }
        }
    }

    pub(crate) fn advance(&mut self, src: &mut dyn PageSource, target: u32) -> Result<()> {
        match self {
            Cur::Term(t) => t.c.advance(src, target),
            Cur::Phrase(p) => {
                if p.doc < target {
                    p.find(src, target)?;
                }
                Ok(())
            }
        }
    }

    /// Cursor moves this phrase made.
    pub(crate) fn work(&self) -> u64 {
        match self {
            Cur::Term(_) => 0,
            Cur::Phrase(p) => p.work(),
        }
    }

    /// Bytes of postings this cursor read.
    pub(crate) fn bytes_read(&self) -> u64 {
        match self {
            Cur::Term(t) => t.c.bytes_read,
            Cur::Phrase(p) => p.bytes_read(),
        }
    }

    pub(crate) fn max_ub(&self) -> f64 {
        match self {
            Cur::Term(t) => t.max_ub + t.carried,
            Cur::Phrase(p) => p.max_ub(),
        }
    }

    pub(crate) fn block_ub(&mut self, target: u32, sc: &Scorer) -> (f64, u32) {
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
                (
                    p.weight * p.atoms.iter().map(|&a| ubs[a]).sum::<f64>(),
                    last,
                )
            }
        }
    }

    /// The BM25 contribution at the current document (no recency).
    pub(crate) fn contribution(&self, len: u32, sc: &Scorer) -> f64 {
        match self {
            Cur::Term(t) => t.idf * sc.tf(t.c.tf(), len),
            Cur::Phrase(p) => p.contribution(len, sc),
        }
    }
}
