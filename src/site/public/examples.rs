//! `GET /examples`: curl and Python for the caller's own datasets and indexes. It is
//! rendered for each request (its base URL is the request's host), not kept with the
//! visitors' pages, and it must never show a key: the examples say where one goes.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;

use super::{caching, chrome};
use crate::site::chrome::Chrome;
use crate::site::reading::read;
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "examples.html")]
struct Examples {
    chrome: Chrome,
    base_url: String,
    index_code: String,
    end_date: String,
    datasets: Vec<&'static str>,
    signed_in: bool,
}

/// `GET /examples`: curl and Python for the caller's own datasets and indexes.
pub async fn examples(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    let page = Examples {
        chrome: chrome(&req, &state, &reading, "examples"),
        base_url: state.site.base_url(&req),
        index_code: reading
            .membership
            .indexes
            .first()
            .cloned()
            .unwrap_or_else(|| "GPU_Index".into()),
        end_date: reading.membership.data_cutoff.clone().unwrap_or_default(),
        datasets: iq_actors::catalogue::api_names(),
        signed_in: reading.signed_in(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}
