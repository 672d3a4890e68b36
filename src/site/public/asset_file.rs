//! `GET /assets/{name}`: the website's stylesheet and script (see `site::assets`) under
//! their hashed names, cached for a year; any other name is a 404 page.

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::HttpResponse;

use crate::site::assets::{CSS, SCRIPT};
use crate::site::path_part::PathPart;
use crate::site::respond::{PageError, PageResult};

/// `GET /assets/{name}`: an asset by its hashed name; any other name is a 404.
pub async fn asset_file(name: PathPart) -> PageResult {
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
