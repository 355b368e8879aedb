//! The process-wide caches of immutable index data, each with a memory bound: pages (by
//! segment build and page number), segment headers (by build), deletion sets (by version) and
//! decoded document pages (by build and page).
//! Keys are random per build or version, so an entry can never be stale; entries of a
//! rolled-back transaction are never asked for again and age out.

use super::lru::{CacheStats, Lru};
use super::pages::Page;
use super::segment::{Dead, DocPage, Header};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Default memory bound of the page cache.
pub(crate) const DEFAULT_PAGE_BYTES: usize = 64 * 1024 * 1024;
/// Default memory bound of the header, deletion and decoded-document caches (together): an
/// eighth each for headers and deletion sets, the rest for decoded document pages, 20 bytes a
/// document, so that 2.4M documents fit (a search scores documents scattered over the whole
/// index, and re-decoding their pages cost a quarter of a warm query at 1M messages when only
/// 0.8M fitted).
pub(crate) const DEFAULT_META_BYTES: usize = 64 * 1024 * 1024;
/// Bytes charged per entry beside its data (map entries, the Arc).
const OVERHEAD: usize = 96;

type PageKey = (u64, u32);

struct Caches {
    pages: Lru<PageKey, Page>,
    headers: Lru<u64, Arc<Header>>,
    deads: Lru<u64, Arc<Dead>>,
    docs: Lru<PageKey, Arc<DocPage>>,
}

static CACHES: Mutex<Option<Caches>> = Mutex::new(None);

fn caches() -> MutexGuard<'static, Option<Caches>> {
    CACHES.lock().unwrap_or_else(|e| e.into_inner())
}

fn with<T>(f: impl FnOnce(&mut Caches) -> T) -> T {
    let mut g = caches();
    f(g.get_or_insert_with(|| Caches {
        pages: Lru::new(DEFAULT_PAGE_BYTES),
        headers: Lru::new(DEFAULT_META_BYTES / 8),
        deads: Lru::new(DEFAULT_META_BYTES / 8),
        docs: Lru::new(DEFAULT_META_BYTES / 4 * 3),
    }))
}

pub(crate) fn page(build: u64, no: u32) -> Option<Page> {
    with(|c| c.pages.get(&(build, no)))
}

pub(crate) fn put_page(build: u64, no: u32, p: Page) {
    let w = p.len() + OVERHEAD;
    with(|c| c.pages.put((build, no), p, w))
}

pub(crate) fn header(build: u64) -> Option<Arc<Header>> {
    with(|c| c.headers.get(&build))
}

pub(crate) fn put_header(build: u64, h: Arc<Header>, weight: usize) {
    with(|c| c.headers.put(build, h, weight + OVERHEAD))
}

pub(crate) fn dead(version: u64) -> Option<Arc<Dead>> {
    with(|c| c.deads.get(&version))
}

pub(crate) fn put_dead(version: u64, d: Arc<Dead>, weight: usize) {
    with(|c| c.deads.put(version, d, weight + OVERHEAD))
}

pub(crate) fn doc_page(build: u64, no: u32) -> Option<Arc<DocPage>> {
    with(|c| c.docs.get(&(build, no)))
}

pub(crate) fn put_doc_page(build: u64, no: u32, d: Arc<DocPage>) {
    let w = d.keys.len() * 20 + OVERHEAD;
    with(|c| c.docs.put((build, no), d, w))
}

/// Sets the page cache's memory bound in bytes (evicting at once); 0 disables it.
pub(crate) fn set_page_limit(bytes: usize) {
    with(|c| c.pages.set_limit(bytes))
}

/// The page cache's size and use.
pub(crate) fn page_stats() -> CacheStats {
    with(|c| c.pages.stats())
}

static READ_PAGES: AtomicU64 = AtomicU64::new(0);
static READ_BYTES: AtomicU64 = AtomicU64::new(0);

/// Counts a page read from the database (by any search, flush or merge of the process).
pub(crate) fn note_read(bytes: usize) {
    READ_PAGES.fetch_add(1, Ordering::Relaxed);
    READ_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

/// Pages and bytes read from the database by this process.
pub(crate) fn reads() -> (u64, u64) {
    (
        READ_PAGES.load(Ordering::Relaxed),
        READ_BYTES.load(Ordering::Relaxed),
    )
}

/// Largest page-cache bound accepted (16 GiB).
pub(crate) const MAX_PAGE_BYTES: i64 = 16 << 30;

/// Empties every cache (benchmarks measure cold searches this way).
pub(crate) fn clear() {
    with(|c| {
        c.pages.clear();
        c.headers.clear();
        c.deads.clear();
        c.docs.clear();
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a naive list in recency order, on a fixed pseudo-random mix of gets and puts
    /// of different weights.
    #[test]
    fn lru_matches_a_naive_list() {
        let mut l: Lru<u32, u32> = Lru::new(100);
        let mut naive: Vec<(u32, u32, usize)> = Vec::new(); // oldest first
        let mut x = 12345u64;
        for step in 0..5000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = ((x >> 33) % 24) as u32;
            if (x >> 20) % 3 == 0 {
                let w = 1 + ((x >> 40) % 30) as usize;
                l.put(k, step, w);
                naive.retain(|e| e.0 != k);
                naive.push((k, step, w));
                while naive.iter().map(|e| e.2).sum::<usize>() > 100 {
                    naive.remove(0);
                }
            } else {
                let want = naive.iter().position(|e| e.0 == k).map(|i| {
                    let e = naive.remove(i);
                    naive.push(e);
                    e.1
                });
                assert_eq!(l.get(&k), want, "step {step}");
            }
            let s = l.stats();
            assert_eq!(s.entries, naive.len());
            assert_eq!(s.bytes, naive.iter().map(|e| e.2).sum::<usize>());
        }
        l.set_limit(0);
        assert_eq!(l.stats().entries, 0);
    }
}
