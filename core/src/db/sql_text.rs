//! Statement texts that hot paths assemble from a few known parts, assembled once per thread.
//!
//! A statement's text is the key the connection finds its prepared statement by, so a path
//! that formats its text at every call pays for the formatting, the allocation and the hashing
//! of a new string each time: a plain `INSERT` of a message formatted five such texts. Each key
//! here stands for one text, made only of the program's own names (never of data), and there
//! are few keys, so they are kept for the life of the thread.

use crate::db::dialect::Dialect;
use crate::memo::FastState;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What a text is for (a name of the statement), what it is about (a table), the dialect, and
/// which of its forms (its optional clauses, as bits the caller chooses).
type Key = (&'static str, &'static str, Dialect, u64);

thread_local! {
    static TEXTS: RefCell<HashMap<Key, Rc<str>, FastState>> = RefCell::default();
}

/// The text `build` makes for `(what, about, dialect, form)`, made on the thread's first call
/// with that key. `build` must depend on nothing but the key.
pub(crate) fn cached(
    what: &'static str,
    about: &'static str,
    dialect: Dialect,
    form: u64,
    build: impl FnOnce() -> String,
) -> Rc<str> {
    let key = (what, about, dialect, form);
    if let Some(text) = TEXTS.with(|t| t.borrow().get(&key).cloned()) {
        return text;
    }
    let text: Rc<str> = build().into();
    TEXTS.with(|t| t.borrow_mut().insert(key, text.clone()));
    text
}
