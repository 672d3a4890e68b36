//! The website's stylesheet and script, embedded in the binary and served under
//! content-hashed names (`/assets/site.<hash>.css`) with a year-long, immutable cache
//! lifetime: a new build with changed bytes gets a new name, so no browser keeps a
//! stale copy. Nothing is fetched from elsewhere at run time.

use std::sync::LazyLock;

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::HttpResponse;
use sha2::{Digest, Sha256};

use super::path_part::PathPart;
use super::respond::{PageError, PageResult};

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

pub static SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "site",
        "js",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/site.js"),
    )
});

/// `GET /assets/{name}`: an asset by its hashed name; any other name is a 404.
pub async fn serve(name: PathPart) -> PageResult {
    let asset = [&*CSS, &*SCRIPT]
        .into_iter()
        .find(|a| a.name == *name)
        .ok_or_else(|| PageError::not_found("There is no such file."))?;
    Ok(HttpResponse::Ok()
        .insert_header(ContentType(
            asset.content_type.parse().expect("a MIME type"),
        ))
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(31_536_000),
            CacheDirective::Extension("immutable".into(), None),
        ]))
        .body(asset.body))
}
