//! `graph_outline`: what the code graph reads in one file — its symbols, the references it
//! makes as written, and the ranges that did not parse — without writing anything, so a
//! client sees what an index of the file will hold.

use crate::json_opts::Opts;
use crate::{Error, Result};
#[cfg(feature = "code")]
use serde_json::json;

/// Longest source read, in bytes.
pub(crate) const MAX_SOURCE: usize = 16 << 20;

/// `graph_outline(path, source [, options])` → JSON `{language, symbols, refs, errors}`: the
/// language (from the path's extension, or option `language`; null when none is known, with
/// nothing read), each symbol with its kind, name, enclosing symbol (by index), lines and
/// signature, each reference with its kind, the symbol that makes it (null: the file), its
/// target and qualifier as written and its line, and the line ranges that did not parse.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn outline(path: &str, source: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, &["language"])?;
    if source.len() > MAX_SOURCE {
        return Err(Error::invalid("source", format!("must be at most {MAX_SOURCE} bytes")));
    }
    read(path, source, o.opt_str("language")?)
}

/// The language of `path`: the one option `language` names, else its extension's.
#[cfg(feature = "code")]
pub(crate) fn language(path: &str, named: Option<String>) -> Result<Option<crate::code::language::Lang>> {
    use crate::code::language::Lang;
    Ok(match named {
        Some(name) => Some(Lang::named(&name).ok_or_else(|| {
            Error::invalid("options.language", format!("must be one of {}", Lang::names().join(", ")))
        })?),
        None => Lang::of_path(path),
    })
}

/// The language the code graph reads the file at `path` as, from its extension; `None` when
/// no grammar reads it (or the build has none): `graph_index_file` keeps such a file as a node
/// and windows of lines.
pub fn code_language(path: &str) -> Option<&'static str> {
    #[cfg(feature = "code")]
    return crate::code::language::Lang::of_path(path).map(|l| l.name());
    #[cfg(not(feature = "code"))]
    {
        let _ = path;
        None
    }
}

/// Whether the code graph reads the file at `path`: a language it has a grammar for, or a
/// manifest its imports resolve through (a Go `go.mod`). What `agentmem index` walks.
pub fn code_reads(path: &str) -> bool {
    code_language(path).is_some() || (cfg!(feature = "code") && super::gopkg::is_go_mod(path))
}

#[cfg(feature = "code")]
fn read(path: &str, source: &str, named: Option<String>) -> Result<String> {
    let Some(lang) = language(path, named)? else {
        return Ok(json!({"language": null, "symbols": [], "refs": [], "errors": []}).to_string());
    };
    let o = crate::code::outline::outline(lang, source);
    let symbols: Vec<_> = o
        .symbols
        .iter()
        .map(|s| {
            json!({"kind": s.kind, "name": s.name, "parent": s.parent, "start_line": s.start_line,
                   "end_line": s.end_line, "signature": s.signature})
        })
        .collect();
    let refs: Vec<_> = o
        .refs
        .iter()
        .map(|r| json!({"kind": r.kind.name(), "from": r.from, "target": r.target, "qualifier": r.qualifier, "line": r.line}))
        .collect();
    Ok(json!({"language": lang.name(), "symbols": symbols, "refs": refs, "errors": o.errors}).to_string())
}

#[cfg(not(feature = "code"))]
fn read(_: &str, _: &str, _: Option<String>) -> Result<String> {
    Err(Error::invalid("graph_outline", "this build has no grammars (it was built without the feature `code`)"))
}
