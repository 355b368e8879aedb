//! The languages the code graph parses, named as files name them: by extension, or by the
//! name a caller gives.

/// A language with a grammar.
#[cfg_attr(feature = "testing", visibility::make(pub))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
}

/// Every language, with its name and the extensions that mean it.
const ALL: &[(Lang, &str, &[&str])] = &[
    (Lang::Rust, "rust", &["rs"]),
    (Lang::Python, "python", &["py", "pyi"]),
    (Lang::TypeScript, "typescript", &["ts", "mts", "cts"]),
    (Lang::Tsx, "tsx", &["tsx"]),
    (Lang::JavaScript, "javascript", &["js", "jsx", "mjs", "cjs"]),
    (Lang::Go, "go", &["go"]),
];

impl Lang {
    /// The language called `name` (`rust`, `python`, `typescript`, `tsx`, `javascript`, `go`).
    pub(crate) fn named(name: &str) -> Option<Lang> {
        ALL.iter().find(|(_, n, _)| *n == name).map(|(l, ..)| *l)
    }

    /// The language of `path`, by its extension.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn of_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.')?.1;
        ALL.iter()
            .find(|(_, _, exts)| exts.contains(&ext))
            .map(|(l, ..)| *l)
    }

    pub(crate) fn name(self) -> &'static str {
        ALL.iter().find(|(l, ..)| *l == self).map_or("", |(_, n, _)| n)
    }

    /// The names, for errors.
    pub(crate) fn names() -> Vec<&'static str> {
        ALL.iter().map(|(_, n, _)| *n).collect()
    }

    /// The grammar.
    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_come_from_extensions_and_names() {
        assert_eq!(Lang::of_path("src/a.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::of_path("pkg/mod.py"), Some(Lang::Python));
        assert_eq!(Lang::of_path("Makefile"), None);
        assert_eq!(Lang::of_path("a.min.js"), Some(Lang::JavaScript));
        assert_eq!(Lang::named("go"), Some(Lang::Go));
        assert_eq!(Lang::Go.name(), "go");
    }
}
