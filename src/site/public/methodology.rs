//! `GET /methodology`: how the numbers are made, in words and formulas, with the tiers'
//! delays. The text is the template's; this must never read market data.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::caller::Tier;

use super::{cached, caching, chrome};
use crate::site::chrome::Chrome;
use crate::site::reading::read;
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "methodology.html")]
struct Methodology {
    chrome: Chrome,
    tiers: Vec<Tier>,
}

/// `GET /methodology`: how the numbers are made, in words and formulas.
pub async fn methodology(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    cached(&req, &state, || render_methodology(&req, &state)).await
}

async fn render_methodology(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let reading = read(req, state, Vec::new()).await?;
    let page = Methodology {
        chrome: chrome(req, state, &reading, "methodology"),
        tiers: reading.tiers.to_vec(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}
