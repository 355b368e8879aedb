//! How the engine names an index: by one string, the namespace (`msg`) for a namespace's
//! shared index, the namespace and the resource (`msg/<resource_id>`) for a resource's in a
//! database partitioned by resource (see [`super::partition`]). [`split`] turns a name back
//! into the two columns the index's tables key rows by.

/// The index name of `resource`'s documents of `ns` in a database partitioned by resource.
pub(crate) fn index_name(ns: &str, resource: &str) -> String {
    if resource.is_empty() {
        ns.to_owned()
    } else {
        format!("{ns}/{resource}")
    }
}

/// An index name's namespace and resource (`""` for a shared index). Namespaces never
/// contain `/`, resources may.
pub(crate) fn split(index: &str) -> (&str, &str) {
    index.split_once('/').unwrap_or((index, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_back() {
        assert_eq!(split("msg"), ("msg", ""));
        assert_eq!(split(&index_name("msg", "a/b")), ("msg", "a/b"));
        assert_eq!(index_name("obs", ""), "obs");
    }
}
