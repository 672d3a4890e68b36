//! Indexes (super administrators): name, visibility (the public level) and display
//! order, moved one place at a time, and each index's facts (D20: description, unit,
//! currency, what a price includes, source, publication time, methodology version). The same rules as
//! `PATCH /api/v1/admin/indexes/{index_code}`; a change reaches every page and the API
//! at once.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::{IndexPatch, IndexView};

use super::{Staff, SuperAdmin};
use crate::site::chrome::Chrome;
use crate::site::form::Sent;
use crate::site::path_part::PathPart;
use crate::site::respond::{render, see_other, status_with, Caching, PageResult};
use crate::state::AppState;

pub const VISIBILITIES: [&str; 4] = ["aggregate", "index_only", "member", "private"];

#[derive(Template)]
#[template(path = "admin/indexes.html")]
struct IndexesPage {
    chrome: Chrome,
    indexes: Vec<IndexView>,
    visibilities: [&'static str; 4],
    problem: Option<(String, String)>,
}

async fn page(
    req: &HttpRequest,
    staff: &Staff<SuperAdmin>,
    state: &AppState,
    problem: Option<(String, String)>,
) -> PageResult {
    let status = status_with(&problem, StatusCode::BAD_REQUEST);
    let page = IndexesPage {
        chrome: staff.chrome(req, state),
        indexes: state.index_settings.list().await?,
        visibilities: VISIBILITIES,
        problem,
    };
    render(&page, status, Caching::Private)
}

/// `GET /admin/indexes`.
pub async fn list(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    state: web::Data<AppState>,
) -> PageResult {
    page(&req, &staff, &state, None).await
}

/// `POST /admin/indexes/{code}`: `action` is `save` (name and visibility), `facts`
/// (the facts of D20), `up` or `down`.
pub async fn save(
    req: HttpRequest,
    Sent(staff, form): Sent<Staff<SuperAdmin>>,
    code: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let result = match form.one("action") {
        Some(way @ ("up" | "down")) => {
            state
                .index_settings
                .shift(&staff.author(), &code, way == "up")
                .await
        }
        action => {
            let field = |name: &str| form.one(name).map(str::to_owned);
            let patch = if action == Some("facts") {
                IndexPatch {
                    description: field("description"),
                    unit: field("unit"),
                    // Left empty, an index of points only keeps naming no currency.
                    currency: field("currency").filter(|c| !c.is_empty()),
                    price_basis: field("price_basis"),
                    source: field("source"),
                    publish_time: field("publish_time"),
                    methodology_version: field("methodology_version"),
                    ..IndexPatch::default()
                }
            } else {
                IndexPatch {
                    visibility: field("visibility"),
                    index_name: field("index_name"),
                    ..IndexPatch::default()
                }
            };
            state
                .index_settings
                .patch(&staff.author(), &code, patch)
                .await
                .map(drop)
        }
    };
    match result {
        Ok(()) => Ok(see_other("/admin/indexes").finish()),
        Err(error) if error.code == iq_actors::ErrorCode::InvalidRequest => {
            page(
                &req,
                &staff,
                &state,
                Some((code.to_string(), error.message)),
            )
            .await
        }
        Err(error) => Err(error.into()),
    }
}
