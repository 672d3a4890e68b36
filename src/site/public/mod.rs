//! The public pages: home, one page per index, the trading calendar, the methodology,
//! the plans, example code and the guide for Tushare users. Each shows what the caller's
//! website identity may see (a visitor: the free tier's; a member: their tier's) and
//! nothing more.
//!
//! One page a file, named after its route; what every page shares is here: how it is
//! cached, its chrome, a page made from what the caller may see alone, and the "data as
//! of" line ([`Freshness`]). A page must never read market data but through
//! [`read`](super::reading::read) (the FrontActor's `Browse`), and never cache a
//! member's page for visitors ([`caching`]).

mod asset_file;
mod calendar;
mod compare;
mod download;
mod examples;
mod home;
mod index_page;
mod methodology;
mod plans;
mod reference;
mod try_it;
mod tushare_guide;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;

use super::chrome::Chrome;
use super::format::{delay, long_date, parse_wire, wire};
use super::reading::{read, Reading};
use super::respond::{render, Caching, PageResult};
use crate::state::AppState;

pub use asset_file::{asset_file, favicon};
pub use calendar::calendar;
pub use compare::compare;
pub use download::download;
pub use examples::examples;
pub use home::home;
pub use index_page::index;
pub use methodology::methodology;
pub use plans::plans;
pub use reference::{docs_page, Reference};
pub use try_it::{try_form, try_query};
pub use tushare_guide::{tushare_guide, tushare_guide_zh};

/// Visitors share their pages; a member's are theirs alone.
fn caching(reading: &Reading) -> Caching {
    if reading.signed_in() {
        Caching::Private
    } else {
        Caching::Visitor
    }
}

/// The page from the visitors' page cache, which renders it with `render` on a miss
/// (and for a member, whose pages it never keeps).
async fn cached<F, Fut>(req: &HttpRequest, state: &AppState, render: F) -> PageResult
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = PageResult>,
{
    state.site.visitor_pages.serve(req, state, render).await
}

/// A page made from what the caller may see alone, no market data asked for (the
/// tiers, the membership): read, built by `build` around its chrome (menu `nav`), and
/// served from the visitors' page cache.
async fn reading_page<T: Template>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    nav: &'static str,
    build: impl Fn(Chrome, &Reading) -> T,
) -> PageResult {
    let build = &build;
    cached(req, state, move || async move {
        let reading = read(req, state, Vec::new()).await?;
        let page = build(chrome(req, state, &reading, nav), &reading);
        render(&page, StatusCode::OK, caching(&reading))
    })
    .await
}

fn chrome(req: &HttpRequest, state: &AppState, reading: &Reading, nav: &'static str) -> Chrome {
    Chrome::new(req, state, reading.membership.user.as_ref(), nav)
}

/// "Data as of ..." for the caller, and what a better plan would show.
pub struct Freshness {
    pub cutoff_long: String,
    pub cutoff_wire: String,
    pub delay: String,
    /// "Members on the pro plan see ..." when some plan sees fresher data.
    pub better: Option<String>,
}

fn freshness(reading: &Reading) -> Freshness {
    let membership = &reading.membership;
    let cutoff = membership.data_cutoff.as_deref().and_then(parse_wire);
    let better = reading
        .tiers
        .iter()
        .filter(|t| t.delay_days < membership.delay_days)
        .min_by_key(|t| t.delay_days)
        .map(|t| match t.delay_days {
            0 => format!("members on the {} plan see today's", t.name),
            n => format!("members on the {} plan see {}", t.name, delay(n)),
        });
    Freshness {
        cutoff_long: cutoff
            .map(long_date)
            .unwrap_or_else(|| "no data yet".into()),
        cutoff_wire: cutoff.map(wire).unwrap_or_default(),
        delay: delay(membership.delay_days),
        better,
    }
}
