//! `GET /plans`: the tiers exactly as the super administrator set them, the caller's
//! own marked. It must never describe a plan in any terms but the tiers' settings.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;

use super::{cached, caching, chrome};
use crate::site::chrome::Chrome;
use crate::site::format::delay;
use crate::site::reading::read;
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

pub struct Plan {
    pub name: String,
    pub per_minute: i64,
    pub per_day: i64,
    pub max_rows: u32,
    pub max_keys: String,
    pub delay: String,
    pub member_indexes: bool,
    pub yours: bool,
}

#[derive(Template)]
#[template(path = "plans.html")]
struct Plans {
    chrome: Chrome,
    plans: Vec<Plan>,
}

/// `GET /plans`: the tiers exactly as the super administrator set them.
pub async fn plans(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    cached(&req, &state, || render_plans(&req, &state)).await
}

async fn render_plans(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let reading = read(req, state, Vec::new()).await?;
    let yours = reading.signed_in().then(|| reading.membership.tier.clone());
    let plans = reading
        .tiers
        .iter()
        .map(|t| Plan {
            name: t.name.clone(),
            per_minute: t.per_minute,
            per_day: t.per_day,
            max_rows: t.max_rows,
            max_keys: t
                .max_keys
                .map_or_else(|| "unlimited".to_owned(), |n| n.to_string()),
            delay: delay(t.delay_days),
            member_indexes: t.member_indexes,
            yours: yours.as_deref() == Some(t.name.as_str()),
        })
        .collect();
    let page = Plans {
        chrome: chrome(req, state, &reading, "plans"),
        plans,
    };
    render(&page, StatusCode::OK, caching(&reading))
}
