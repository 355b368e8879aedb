//! The search index's freed pages, reused before `VACUUM`.
//!
//! A merge deletes its inputs' page rows. Postgres keeps their space until `VACUUM` records it
//! in the free space map, so a load that merges as it goes would append every merge's output
//! to the file of `mem_idx_pages` and leave the freed space behind. The core says where the
//! rows it deletes were ([`agentmem_core::Conn::pages_freed`]); before the next segment is
//! written, the blocks whose deleting transaction no snapshot can still see are pruned (what
//! any scan that reads the block may do) and their free space recorded in the map (what
//! `VACUUM` would record for them), so the rows that follow fill them. A backend that ends
//! forgets its list; `VACUUM` then finds those blocks as before.

use pgrx::pg_sys;
use std::cell::RefCell;

/// Blocks one transaction freed in one relation.
struct Freed {
    rel: pg_sys::Oid,
    xid: pg_sys::TransactionId,
    blocks: Vec<pg_sys::BlockNumber>,
}

/// The most blocks remembered (8 GiB of pages); the oldest go first, to `VACUUM`.
const MOST_BLOCKS: usize = 1 << 20;

thread_local! {
    static FREED: RefCell<Vec<Freed>> = const { RefCell::new(Vec::new()) };
}

/// Remembers the places of rows the current transaction deleted, each `table oid << 32 |
/// block` (what [`agentmem_core::Dialect`] has a deletion return), so the table is the one
/// the deletion touched, not one found again by name.
pub(crate) fn note(places: &[i64]) {
    // SAFETY: reads the backend's transaction state; the rows were just deleted, so the
    // transaction has an id.
    let xid = unsafe { pg_sys::GetCurrentTransactionIdIfAny() };
    if xid == pg_sys::InvalidTransactionId {
        return;
    }
    let mut places: Vec<(u32, pg_sys::BlockNumber)> = places
        .iter()
        .map(|&p| ((p >> 32) as u32, p as u32))
        .collect();
    places.sort_unstable();
    places.dedup();
    FREED.with_borrow_mut(|freed| {
        for chunk in places.chunk_by(|a, b| a.0 == b.0) {
            freed.push(Freed {
                rel: pg_sys::Oid::from(chunk[0].0),
                xid,
                blocks: chunk.iter().map(|&(_, block)| block).collect(),
            });
        }
        let mut total: usize = freed.iter().map(|f| f.blocks.len()).sum();
        while total > MOST_BLOCKS && freed.len() > 1 {
            total -= freed.remove(0).blocks.len();
        }
    });
}

/// Hands back the space of every remembered block whose deleting transaction is over and
/// invisible to every snapshot; keeps the others for a later call.
pub(crate) fn reuse() {
    let ready: Vec<Freed> = FREED.with_borrow_mut(|freed| {
        let (ready, wait): (Vec<Freed>, Vec<Freed>) =
            std::mem::take(freed).into_iter().partition(|f| {
                // SAFETY: reads the backend's transaction state.
                !unsafe { pg_sys::TransactionIdIsCurrentTransactionId(f.xid) }
            });
        *freed = wait;
        ready
    });
    for f in ready {
        // SAFETY: the relation is opened (or found gone) under a lock this transaction keeps;
        // each block is read, pruned and measured under a pin, as a scan would.
        unsafe {
            let rel = pg_sys::try_relation_open(f.rel, pg_sys::RowExclusiveLock as _);
            if rel.is_null() {
                continue;
            }
            if pg_sys::GlobalVisCheckRemovableXid(rel, f.xid) {
                reclaim(rel, &f.blocks);
            } else {
                FREED.with_borrow_mut(|freed| freed.push(f));
            }
            pg_sys::relation_close(rel, pg_sys::NoLock as _);
        }
    }
}

/// Prunes `blocks` (sorted) of `rel` and records their free space in the free space map.
///
/// # Safety
/// `rel` is an open heap relation.
unsafe fn reclaim(rel: pg_sys::Relation, blocks: &[pg_sys::BlockNumber]) {
    let size = pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM);
    let blocks: Vec<pg_sys::BlockNumber> = blocks.iter().copied().filter(|&b| b < size).collect();
    let (Some(&first), Some(&last)) = (blocks.first(), blocks.last()) else {
        return;
    };
    for &block in &blocks {
        let buf = pg_sys::ReadBufferExtended(
            rel,
            pg_sys::ForkNumber::MAIN_FORKNUM,
            block,
            pg_sys::ReadBufferMode::RBM_NORMAL,
            std::ptr::null_mut(),
        );
        pg_sys::heap_page_prune_opt(rel, buf);
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as _);
        let free = pg_sys::PageGetHeapFreeSpace(pg_sys::BufferGetPage(buf));
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_UNLOCK as _);
        pg_sys::ReleaseBuffer(buf);
        pg_sys::RecordPageWithFreeSpace(rel, block, free);
    }
    pg_sys::FreeSpaceMapVacuumRange(rel, first, last + 1);
}
