//! A parsed query resolved against the index: prefixes expanded to live dictionary terms,
//! the distinct terms numbered, the clauses in canonical order.

use super::view::{live_df, View};
use crate::search::query::{Matcher, Query, MAX_PREFIX_TERMS};
use crate::search::scoring::SearchParams;
use crate::{Conn, Result};
use std::collections::BTreeMap;

/// A scoring or constraint clause resolved to term numbers in [`Plan::terms`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PClause {
    Term(usize),
    /// Atoms at consecutive positions, and the weight of the clause.
    Phrase(Vec<usize>, f64),
    /// Two typed words standing side by side: a phrase that only adds to documents that
    /// already match its words, so a search checks it only where it scores a document.
    Near(Vec<usize>, f64),
}

/// Distinct terms, scoring clauses in canonical order, constraints as any-of lists.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
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

/// The live terms starting with `prefix` in any view, ascending, at most
/// [`MAX_PREFIX_TERMS`]. Each view reads its dictionary from the prefix until it has seen
/// that many terms live in it: a term among the first live ones overall is among the first
/// live ones of every view that holds it live, so the union of what the views read is enough.
pub(crate) fn expand_prefix(conn: &mut dyn Conn, views: &mut [View], prefix: &str) -> Result<Vec<String>> {
    let mut live: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for v in views.iter_mut() {
        let (seg, dead, pending) = (&v.seg.seg, &v.seg.dead, &v.seg.pending);
        let mut src = v.src.open(conn);
        let mut seen_live = 0;
        seg.terms_with_prefix(&mut src, prefix.as_bytes(), &mut |t, info| {
            let df = live_df(dead, pending, t, info);
            if df > 0 {
                *live.entry(t.to_vec()).or_default() += df;
                seen_live += 1;
            }
            Ok(seen_live < MAX_PREFIX_TERMS)
        })?;
    }
    Ok(live
        .into_keys()
        .take(MAX_PREFIX_TERMS)
        .map(|t| String::from_utf8_lossy(&t).into_owned())
        .collect())
}

fn resolve(
    conn: &mut dyn Conn,
    plan: &mut Plan,
    views: &mut [View],
    m: &Matcher,
    params: &SearchParams,
) -> Result<Vec<PClause>> {
    Ok(match m {
        Matcher::Term(t) => vec![PClause::Term(plan.term(t))],
        Matcher::Phrase(atoms) => vec![PClause::Phrase(
            atoms.iter().map(|a| plan.term(a)).collect(),
            Query::clause_weight(m, params),
        )],
        Matcher::Near(atoms) => vec![PClause::Near(
            atoms.iter().map(|a| plan.term(a)).collect(),
            Query::clause_weight(m, params),
        )],
        Matcher::Prefix(p) => expand_prefix(conn, views, p)?
            .iter()
            .map(|t| PClause::Term(plan.term(t)))
            .collect(),
    })
}

/// Resolves a parsed query: prefixes expanded, `Term` scoring clauses deduplicated.
pub(crate) fn plan(
    conn: &mut dyn Conn,
    views: &mut [View],
    q: &Query,
    params: &SearchParams,
) -> Result<Plan> {
    let mut plan = Plan::default();
    for m in &q.should {
        for c in resolve(conn, &mut plan, views, m, params)? {
            if !plan.should.contains(&c) {
                plan.should.push(c);
            }
        }
    }
    for m in &q.must {
        let any = resolve(conn, &mut plan, views, m, params)?;
        plan.must.push(any);
    }
    for m in &q.must_not {
        let any = resolve(conn, &mut plan, views, m, params)?;
        plan.must_not.push(any);
    }
    Ok(plan)
}
