//! The outline of a file in each language: its symbols (kind, name, the symbol they belong
//! to, their lines) and the references it makes, from small files written to hold each rule.
#![cfg(feature = "code")]

use agentmem_core::code::language::Lang;
use agentmem_core::code::outline::{outline, Outline};

/// (kind, name, parent's name, start line, end line) of every symbol.
fn symbols(o: &Outline) -> Vec<(&str, &str, &str, usize, usize)> {
    o.symbols
        .iter()
        .map(|s| {
            let parent = s.parent.map_or("", |p| o.symbols[p].name.as_str());
            (s.kind, s.name.as_str(), parent, s.start_line, s.end_line)
        })
        .collect()
}

/// (kind, from's name, target, qualifier) of every reference.
fn refs(o: &Outline) -> Vec<(&str, &str, &str, Option<&str>)> {
    o.refs
        .iter()
        .map(|r| {
            let from = r.from.map_or("", |f| o.symbols[f].name.as_str());
            (
                r.kind.name(),
                from,
                r.target.as_str(),
                r.qualifier.as_deref(),
            )
        })
        .collect()
}

#[test]
fn rust() {
    let src = "use crate::store::Pool;
mod wire;

pub struct Server { pool: Pool }

pub trait Handler {
    fn handle(&self) -> u32;
}

impl Handler for Server {
    fn handle(&self) -> u32 {
        helper(1) + self.pool.size()
    }
}

impl Server {
    pub fn new() -> Self { Server { pool: Pool::open() } }
}

fn helper(x: u32) -> u32 { x }

macro_rules! twice { ($e:expr) => { $e * 2 } }
";
    let o = outline(Lang::Rust, src);
    assert_eq!(
        symbols(&o),
        vec![
            ("module", "wire", "", 2, 2),
            ("struct", "Server", "", 4, 4),
            ("trait", "Handler", "", 6, 8),
            ("method", "handle", "Handler", 7, 7),
            ("method", "handle", "Server", 11, 13),
            ("method", "new", "Server", 17, 17),
            ("function", "helper", "", 20, 20),
            ("macro", "twice", "", 22, 22),
        ]
    );
    assert_eq!(
        refs(&o),
        vec![
            ("imports", "", "crate::store::Pool", None),
            ("imports", "", "mod wire", None),
            ("implements", "Server", "Handler", None),
            ("calls", "handle", "helper", None),
            ("calls", "handle", "size", Some("self.pool")),
            ("calls", "new", "open", Some("Pool")),
        ]
    );
    assert_eq!(o.symbols[4].signature, "fn handle(&self) -> u32 {");
    assert!(o.errors.is_empty());
}

#[test]
fn python() {
    let src = "import os.path
from . import models, views
from ..core.db import Session

class Repo(Base, mixins.Audit):
    def save(self, item):
        self.session.add(item)
        return validate(item)

def validate(item):
    return item
";
    let o = outline(Lang::Python, src);
    assert_eq!(
        symbols(&o),
        vec![
            ("class", "Repo", "", 5, 8),
            ("method", "save", "Repo", 6, 8),
            ("function", "validate", "", 10, 11),
        ]
    );
    assert_eq!(
        refs(&o),
        vec![
            ("imports", "", "os.path", None),
            ("imports", "", ".models", None),
            ("imports", "", ".views", None),
            ("imports", "", "..core.db", None),
            ("extends", "Repo", "Base", None),
            ("extends", "Repo", "Audit", None),
            ("calls", "save", "add", Some("self.session")),
            ("calls", "save", "validate", None),
        ]
    );
}

#[test]
fn typescript_and_tsx() {
    let src = "import { db } from './db';
export { x } from '../x';
const fs = require('fs');

export interface Store extends Base { get(id: string): Item; }

export class Cache extends Base implements Store {
  get(id: string): Item { return lookup(id); }
}

export const lookup = (id: string) => db.find(id);
export type Item = { id: string };
enum Color { Red }
function main() {}
";
    for lang in [Lang::TypeScript, Lang::Tsx] {
        let o = outline(lang, src);
        assert_eq!(
            symbols(&o),
            vec![
                ("interface", "Store", "", 5, 5),
                ("method", "get", "Store", 5, 5),
                ("class", "Cache", "", 7, 9),
                ("method", "get", "Cache", 8, 8),
                ("function", "lookup", "", 11, 11),
                ("type", "Item", "", 12, 12),
                ("enum", "Color", "", 13, 13),
                ("function", "main", "", 14, 14),
            ],
            "{lang:?}"
        );
        assert_eq!(
            refs(&o),
            vec![
                ("imports", "", "./db", None),
                ("imports", "", "../x", None),
                ("imports", "", "fs", None),
                ("extends", "Store", "Base", None),
                ("extends", "Cache", "Base", None),
                ("implements", "Cache", "Store", None),
                ("calls", "get", "lookup", None),
                ("calls", "lookup", "find", Some("db")),
            ],
            "{lang:?}"
        );
    }
}

#[test]
fn javascript() {
    let src = "import React from 'react';
class View extends React.Component {
  render() { return h('div'); }
}
function h(tag) { return tag; }
";
    let o = outline(Lang::JavaScript, src);
    assert_eq!(
        symbols(&o),
        vec![
            ("class", "View", "", 2, 4),
            ("method", "render", "View", 3, 3),
            ("function", "h", "", 5, 5)
        ]
    );
    assert_eq!(
        refs(&o),
        vec![
            ("imports", "", "react", None),
            ("extends", "View", "Component", None),
            ("calls", "render", "h", None),
        ]
    );
}

#[test]
fn go() {
    let src = "package server

import (
\t\"fmt\"
\t\"example.com/app/store\"
)

type Server struct{ db *store.DB }

type Handler interface{ Handle() error }

func (s *Server) Handle() error {
\treturn fmt.Errorf(\"x %d\", count())
}

func count() int { return 1 }
";
    let o = outline(Lang::Go, src);
    assert_eq!(
        symbols(&o),
        vec![
            ("struct", "Server", "", 8, 8),
            ("interface", "Handler", "", 10, 10),
            ("method", "Handle", "Server", 12, 14),
            ("function", "count", "", 16, 16),
        ]
    );
    assert_eq!(
        refs(&o),
        vec![
            ("imports", "", "fmt", None),
            ("imports", "", "example.com/app/store", None),
            ("calls", "Handle", "Errorf", Some("fmt")),
            ("calls", "Handle", "count", None),
        ]
    );
}

#[test]
fn syntax_errors_are_reported_and_the_rest_is_read() {
    let src = "fn good() {}\nfn broken( {\nfn after() {}\n";
    let o = outline(Lang::Rust, src);
    assert!(!o.errors.is_empty(), "{o:?}");
    assert!(o.symbols.iter().any(|s| s.name == "good"), "{o:?}");
}

#[test]
fn deep_nesting_does_not_exhaust_the_stack() {
    let src = format!("x = {}1{}\n", "[".repeat(50_000), "]".repeat(50_000));
    let o = outline(Lang::Python, &src);
    assert!(o.symbols.is_empty());
}

/// Pieces real code is made of, for random files that are mostly almost code.
const PIECES: &[&str] = &[
    "fn ",
    "def ",
    "class ",
    "impl ",
    "trait ",
    "struct ",
    "func ",
    "interface ",
    "enum ",
    "type ",
    "import ",
    "from ",
    "use ",
    "mod ",
    "export ",
    "const ",
    "a",
    "B",
    "x.y",
    "::",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    ";",
    ",",
    "=",
    "=>",
    "->",
    "\"s\"",
    "'c'",
    "\n",
    "    ",
    "#",
    "//",
    "/*",
    "*/",
    "extends ",
    "implements ",
    "return ",
    "new ",
    "é",
    "\u{1F600}",
    "\\",
    "`",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// Whatever the text, the outline is consistent: every symbol's parent is another symbol,
    /// its lines are within the file and in order, every reference's symbol exists.
    #[test]
    fn any_text_gives_a_consistent_outline(picks in proptest::collection::vec(0..PIECES.len(), 0..400), lang in 0..6usize) {
        let src: String = picks.iter().map(|&i| PIECES[i]).collect();
        let lang = [Lang::Rust, Lang::Python, Lang::TypeScript, Lang::Tsx, Lang::JavaScript, Lang::Go][lang];
        let o = outline(lang, &src);
        let lines = src.split('\n').count();
        for (i, s) in o.symbols.iter().enumerate() {
            proptest::prop_assert!(s.parent.is_none_or(|p| p < o.symbols.len() && p != i), "{s:?}");
            proptest::prop_assert!(1 <= s.start_line && s.start_line <= s.end_line && s.end_line <= lines, "{s:?}");
            proptest::prop_assert!(!s.name.is_empty());
        }
        for r in &o.refs {
            proptest::prop_assert!(r.from.is_none_or(|f| f < o.symbols.len()), "{r:?}");
            proptest::prop_assert!(1 <= r.line && r.line <= lines, "{r:?}");
        }
        for (a, b) in &o.errors {
            proptest::prop_assert!(1 <= *a && a <= b && *b <= lines);
        }
    }
}
