//! Leases with fencing.
//!
//! A lease names an owner and a fresh operation id and expires by the database's clock. Every
//! lease-guarded write compares owner *and* operation id in the same statement that writes,
//! so an owner whose lease expired and was taken over can never commit over the new owner's
//! work, even if it comes back. Taking a lease clears the in-progress flags a crashed owner
//! left behind.

use super::record::{self, Key};
use crate::cluster::route;
use crate::{ids, Conn, Error, Result, Value};

/// Default lease length: 30 s (the seed's).
pub(crate) const DEFAULT_LEASE_MS: i64 = 30_000;
const MAX_LEASE_MS: i64 = 3_600_000;

fn lease_ms(v: Option<i64>) -> Result<i64> {
    let ms = v.unwrap_or(DEFAULT_LEASE_MS);
    // 0 is allowed: a lease that has already expired (tests use it to play a crashed owner).
    if !(0..=MAX_LEASE_MS).contains(&ms) {
        return Err(Error::invalid(
            "lease_ms",
            format!("must be between 0 and {MAX_LEASE_MS}"),
        ));
    }
    Ok(ms)
}

fn owner(o: &str) -> Result<&str> {
    ids::check_id("owner_id", o)?;
    Ok(o)
}

/// What a lease is taken for: its flag is set with the lease, so
/// another process sees the work in progress, and a crashed owner's flag is stale once its
/// lease expires (`om_status` reports flags of live leases only).
pub(crate) const PURPOSES: &[(&str, &str)] = &[
    ("observe", "is_observing"),
    ("reflect", "is_reflecting"),
    ("buffer_observation", "is_buffering_observation"),
    ("buffer_reflection", "is_buffering_reflection"),
];

/// `om_acquire_lease(lookup_key, owner_id [, lease_ms [, purpose]])` → a new operation id, or
/// `None` while another owner holds a live lease. The same owner may take a new operation at
/// any time, which fences its own older operation. `purpose` (one of [`PURPOSES`]) sets the
/// matching in-progress flag; the other flags are cleared.
pub(crate) fn acquire(
    conn: &mut dyn Conn,
    key: &str,
    owner_id: &str,
    ms: Option<i64>,
    purpose: Option<&str>,
) -> Result<Option<String>> {
    let owner = owner(owner_id)?;
    let ms = lease_ms(ms)?;
    let flag = match purpose {
        None => None,
        Some(p) => Some(
            PURPOSES
                .iter()
                .find(|(name, _)| *name == p)
                .map(|(_, col)| *col)
                .ok_or_else(|| {
                    let names: Vec<&str> = PURPOSES.iter().map(|(n, _)| *n).collect();
                    Error::invalid(
                        "purpose",
                        format!(
                            "must be one of {} (got {})",
                            names.join(", "),
                            crate::error::echo(p)
                        ),
                    )
                })?,
        ),
    };
    let flag_of = |col: &str| i64::from(flag == Some(col));
    let key = Key::parse(conn, key)?;
    let now = conn.now_ms()?;
    record::load_or_create(conn, &key, now)?;
    let op = ids::new_id();
    let n = route::execute(
        conn,
        "UPDATE mem_om_records SET lock_owner_id = ?2, lock_operation_id = ?3, lock_expires_at = ?4 + ?5, \
           last_heartbeat_at = ?4, is_observing = ?6, is_reflecting = ?7, is_buffering_observation = ?8, \
           is_buffering_reflection = ?9 \
         WHERE lookup_key = ?1 AND is_active = 1 \
           AND (lock_expires_at IS NULL OR lock_expires_at <= ?4 OR lock_owner_id = ?2){home}",
        &[
            key.text.as_str().into(),
            owner.into(),
            op.as_str().into(),
            Value::Int(now),
            Value::Int(ms),
            Value::Int(flag_of("is_observing")),
            Value::Int(flag_of("is_reflecting")),
            Value::Int(flag_of("is_buffering_observation")),
            Value::Int(flag_of("is_buffering_reflection")),
        ],
    )?;
    Ok((n == 1).then_some(op))
}

/// `om_heartbeat(lookup_key, owner_id, operation_id [, lease_ms])` → whether the live lease
/// was extended.
pub(crate) fn heartbeat(
    conn: &mut dyn Conn,
    key: &str,
    owner_id: &str,
    op: &str,
    ms: Option<i64>,
) -> Result<bool> {
    let owner = owner(owner_id)?;
    let ms = lease_ms(ms)?;
    let key = Key::parse(conn, key)?;
    let now = conn.now_ms()?;
    let n = route::execute(
        conn,
        "UPDATE mem_om_records SET lock_expires_at = ?4 + ?5, last_heartbeat_at = ?4 \
         WHERE lookup_key = ?1 AND is_active = 1 AND lock_owner_id = ?2 AND lock_operation_id = ?3 \
           AND lock_expires_at > ?4{home}",
        &[
            key.text.as_str().into(),
            owner.into(),
            op.into(),
            Value::Int(now),
            Value::Int(ms),
        ],
    )?;
    Ok(n == 1)
}

/// `om_release_lease(lookup_key, owner_id, operation_id)` → whether this operation's lease was
/// released (false when it had been superseded).
pub(crate) fn release(conn: &mut dyn Conn, key: &str, owner_id: &str, op: &str) -> Result<bool> {
    let owner = owner(owner_id)?;
    let key = Key::parse(conn, key)?;
    let n = route::execute(
        conn,
        "UPDATE mem_om_records SET lock_owner_id = NULL, lock_operation_id = NULL, lock_expires_at = NULL, \
           is_observing = 0, is_reflecting = 0, is_buffering_observation = 0, is_buffering_reflection = 0 \
         WHERE lookup_key = ?1 AND is_active = 1 AND lock_owner_id = ?2 AND lock_operation_id = ?3{home}",
        &[key.text.as_str().into(), owner.into(), op.into()],
    )?;
    Ok(n == 1)
}

/// A call made under a lease, as its arguments arrive: the record's lookup key, and the owner
/// and operation the lease was granted to.
#[derive(Clone, Copy)]
pub(crate) struct Fenced<'a> {
    pub key: &'a str,
    pub owner_id: &'a str,
    pub operation_id: &'a str,
}

impl<'a> Fenced<'a> {
    pub(crate) fn new(key: &'a str, owner_id: &'a str, operation_id: &'a str) -> Fenced<'a> {
        Fenced {
            key,
            owner_id,
            operation_id,
        }
    }

    /// The owner (checked for shape) and the operation.
    pub(crate) fn checked(&self) -> Result<(&'a str, &'a str)> {
        Ok((owner(self.owner_id)?, self.operation_id))
    }
}

/// A call that hands over an agent's answer under a lease, as its arguments arrive: the
/// record's lookup key, the owner and operation the lease was granted to, and the answer.
#[derive(Clone, Copy)]
pub(crate) struct Answered<'a> {
    pub fenced: Fenced<'a>,
    pub answer: Option<&'a str>,
}

impl<'a> Answered<'a> {
    pub(crate) fn new(
        key: &'a str,
        owner_id: &'a str,
        operation_id: &'a str,
        answer: Option<&'a str>,
    ) -> Answered<'a> {
        Answered {
            fenced: Fenced::new(key, owner_id, operation_id),
            answer,
        }
    }

    /// The owner and operation ([`Fenced::checked`]) and the parsed answer.
    pub(crate) fn checked(&self) -> Result<(&'a str, &'a str, super::parse::Parsed)> {
        let (owner, op) = self.fenced.checked()?;
        let parsed = super::parse::parse("answer", self.answer.unwrap_or(""))?;
        Ok((owner, op, parsed))
    }
}
