//! `GET /plans`: the tiers exactly as the super administrator set them, the caller's
//! own marked. It must never describe a plan in any terms but the tiers' settings.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::reading_page;
use crate::site::chrome::Chrome;
use crate::site::format::delay;
use crate::site::reading::Reading;
use crate::site::respond::PageResult;
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
    reading_page(&req, &state, "plans", |chrome, reading| Plans {
        chrome,
        plans: plans_of(reading),
    })
    .await
}

/// The tiers as plans, the caller's own marked.
fn plans_of(reading: &Reading) -> Vec<Plan> {
    let yours = reading.signed_in().then(|| reading.membership.tier.clone());
    reading
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
        .collect()
}
