//! Statement texts that hot paths assemble from a few known parts, assembled once per thread.
//!
//! A statement's text is the key the connection finds its prepared statement by, so a path
//! that formats its text at every call pays for the formatting, the allocation and the hashing
//! of a new string each time: a plain `INSERT` of a message formatted five such texts. Each key
//! here stands for one text, made only of the program's own names (never of data), and there
//! are few keys, so they are kept for the life of the thread. Texts made from a template the
//! caller holds as a string ([`templated`]) are kept by that template, in a bounded memo.

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

/// Templates whose texts [`templated`] keeps, at most this many per thread (then forgotten all
/// at once): the templates are the program's, a few dozen.
const TEMPLATES: usize = 256;

/// A template's texts by the form they were made in.
type Forms = Vec<((usize, usize), Rc<str>)>;

thread_local! {
    static TEMPLATED: RefCell<HashMap<String, Forms, FastState>> = RefCell::default();
}

/// The text `build` makes of `template` in `form` (two numbers the caller chooses, such as a
/// list's length and its first mark), made on the thread's first call with that pair. `build`
/// must depend on nothing but the two.
pub(crate) fn templated(
    template: &str,
    form: (usize, usize),
    build: impl FnOnce() -> String,
) -> Rc<str> {
    let found = TEMPLATED.with(|t| {
        let t = t.borrow();
        let forms = t.get(template)?;
        forms
            .iter()
            .find(|(f, _)| *f == form)
            .map(|(_, text)| text.clone())
    });
    if let Some(text) = found {
        return text;
    }
    let text: Rc<str> = build().into();
    TEMPLATED.with(|t| {
        let mut t = t.borrow_mut();
        if t.len() >= TEMPLATES && !t.contains_key(template) {
            t.clear();
        }
        t.entry(template.to_owned())
            .or_default()
            .push((form, text.clone()));
    });
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn templated_texts_are_the_texts_built() {
        // Twice over, the second time from the memo, and past its bound.
        for _ in 0..2 {
            for t in 0..(super::TEMPLATES + 8) {
                let template = format!("SELECT {t} FROM x WHERE b IN ({{keys}})");
                for form in [(1, 2), (4, 2), (4, 3), (64, 2)] {
                    let want = template.replace("{keys}", &format!("{form:?}"));
                    let got = super::templated(&template, form, || want.clone());
                    assert_eq!(&*got, want.as_str());
                }
            }
        }
    }
}
