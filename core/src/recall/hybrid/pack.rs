//! Packing recalled candidates into a token budget: a phase
//! reserves a share of the budget for each class of memory, so that the gotchas of an
//! implementation step are not crowded out by one long decision; what the shares leave unused
//! goes to the best of the rest.

use super::phases::OTHER;

/// A candidate to pack: its class (a memory type, or [`OTHER`]) and its exact token count.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Item<'a> {
    pub class: &'a str,
    pub tokens: i64,
}

/// The indices of the items packed, in the order given (best first).
///
/// With an `allocation`, a first pass takes, best first, each item that fits both the budget
/// and its class's share (`share × budget`, rounded down; a class the allocation does not name
/// uses the share of [`OTHER`], or none); a second pass fills what is left of the budget,
/// best first, with items the shares turned away. Without one, only the second pass runs.
/// At most `limit` items are taken; an item longer than the budget is never taken.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn pack<'a>(
    items: &[Item<'a>],
    budget: i64,
    allocation: Option<&[(&str, f64)]>,
    limit: usize,
) -> Vec<usize> {
    let mut taken = vec![false; items.len()];
    let mut count = 0;
    let mut total = 0i64;
    if let Some(shares) = allocation {
        let share_of = |class: &'a str| -> (&'a str, i64) {
            let named = shares.iter().find(|(c, _)| *c == class);
            let share = named
                .or_else(|| shares.iter().find(|(c, _)| *c == OTHER))
                .map_or(0.0, |(_, s)| *s);
            // The unnamed classes share OTHER's part between them.
            let class = if named.is_some() { class } else { OTHER };
            (class, (share * budget as f64).floor() as i64)
        };
        let mut used: Vec<(&str, i64)> = Vec::new();
        for (i, it) in items.iter().enumerate() {
            if count == limit {
                break;
            }
            let (class, room) = share_of(it.class);
            let slot = match used.iter().position(|(c, _)| *c == class) {
                Some(p) => p,
                None => {
                    used.push((class, 0));
                    used.len() - 1
                }
            };
            if used[slot].1 + it.tokens <= room && total + it.tokens <= budget {
                used[slot].1 += it.tokens;
                total += it.tokens;
                taken[i] = true;
                count += 1;
            }
        }
    }
    for (i, it) in items.iter().enumerate() {
        if count == limit {
            break;
        }
        if !taken[i] && total + it.tokens <= budget {
            total += it.tokens;
            taken[i] = true;
            count += 1;
        }
    }
    (0..items.len()).filter(|&i| taken[i]).collect()
}
