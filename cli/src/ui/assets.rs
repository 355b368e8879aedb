//! The panel's pages, built into the binary: one HTML shell, one script, one style sheet. No
//! CDN, no build step, nothing fetched at run time.

/// A file the panel serves: its path, its media type and its bytes.
pub struct Asset {
    pub path: &'static str,
    pub media_type: &'static str,
    pub body: &'static str,
}

pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        media_type: "text/html; charset=utf-8",
        body: include_str!("../../ui/index.html"),
    },
    Asset {
        path: "/app.js",
        media_type: "text/javascript; charset=utf-8",
        body: include_str!("../../ui/app.js"),
    },
    Asset {
        path: "/app.css",
        media_type: "text/css; charset=utf-8",
        body: include_str!("../../ui/app.css"),
    },
];

/// The asset at `path`.
pub fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}
