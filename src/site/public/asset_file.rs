//! `GET /assets/{name}`: the website's stylesheet, script and icon (see `site::assets`)
//! under their hashed names, cached for a year; any other name is a 404 page. And
//! `GET /favicon.ico`, the icon where browsers and crawlers look for it unasked.

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::HttpResponse;

use crate::site::assets::{Asset, CSS, ICON, SCRIPT};
use crate::site::path_part::PathPart;
use crate::site::respond::{PageError, PageResult};

/// `GET /assets/{name}`: an asset by its hashed name; any other name is a 404.
pub async fn asset_file(name: PathPart) -> PageResult {
    let asset = [&*CSS, &*SCRIPT, &*ICON]
        .into_iter()
        .find(|a| a.name == *name)
        .ok_or_else(|| PageError::not_found("There is no such file."))?;
    Ok(answer(asset, immutable()))
}

/// `GET /favicon.ico`: the site icon (SVG), kept a day: its name never changes.
pub async fn favicon() -> HttpResponse {
    answer(
        &ICON,
        vec![CacheDirective::Public, CacheDirective::MaxAge(86_400)],
    )
}

fn immutable() -> Vec<CacheDirective> {
    vec![
        CacheDirective::Public,
        CacheDirective::MaxAge(31_536_000),
        CacheDirective::Extension("immutable".into(), None),
    ]
}

fn answer(asset: &Asset, cache: Vec<CacheDirective>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(ContentType(
            asset.content_type.parse().expect("a MIME type"),
        ))
        .insert_header(CacheControl(cache))
        .body(asset.body)
}
