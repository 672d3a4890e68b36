//! `GET /methodology`: how the numbers are made, in words and formulas, with the tiers'
//! delays. The text is the template's; this must never read market data.

use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::caller::Tier;

use super::reading_page;
use crate::site::chrome::Chrome;
use crate::site::respond::PageResult;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "methodology.html")]
struct Methodology {
    chrome: Chrome,
    tiers: Vec<Tier>,
}

/// `GET /methodology`: how the numbers are made, in words and formulas.
pub async fn methodology(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    reading_page(&req, &state, "methodology", |chrome, reading| Methodology {
        chrome,
        tiers: reading.tiers.to_vec(),
    })
    .await
}
