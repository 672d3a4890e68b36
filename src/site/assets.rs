//! The website's stylesheet, script and icon, embedded in the binary and served under
//! content-hashed names (`/assets/site.<hash>.css`) with a year-long, immutable cache
//! lifetime: a new build with changed bytes gets a new name, so no browser keeps a
//! stale copy. Nothing is fetched from elsewhere at run time. What they are and their
//! names only: `public::asset_file` serves them, pages link to them.

use std::sync::LazyLock;

use sha2::{Digest, Sha256};

pub struct Asset {
    /// `site.<hash>.css`: the name pages link to.
    pub name: String,
    pub content_type: &'static str,
    pub body: &'static str,
}

impl Asset {
    fn new(stem: &str, extension: &str, content_type: &'static str, body: &'static str) -> Self {
        let digest = Sha256::digest(body.as_bytes());
        let hash: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        Asset {
            name: format!("{stem}.{hash}.{extension}"),
            content_type,
            body,
        }
    }

    /// The path pages link to.
    pub fn href(&self) -> String {
        format!("/assets/{}", self.name)
    }
}

pub static CSS: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "site",
        "css",
        "text/css; charset=utf-8",
        include_str!("../../assets/site.css"),
    )
});

pub static ICON: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "favicon",
        "svg",
        "image/svg+xml",
        include_str!("../../assets/favicon.svg"),
    )
});

pub static SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "site",
        "js",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/site.js"),
    )
});
