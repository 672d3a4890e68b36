//! `GET /tushare-guide` and `GET /zh-CN/tushare-guide`: "Coming from Tushare", in English
//! and in Simplified Chinese, each linking the other. The language is the address's,
//! chosen by a link, never guessed from `Accept-Language`. Like `/examples`, each is
//! rendered for each request (its code names the request's host), not kept with the
//! visitors' pages; it reads no market data and must never show a key.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;

use super::{caching, chrome};
use crate::site::chrome::Chrome;
use crate::site::reading::read;
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

/// The menu entry the guides mark: none (they are not in the menu).
const NAV: &str = "tushare-guide";

#[derive(Template)]
#[template(path = "tushare_guide.html")]
struct English {
    chrome: Chrome,
    base_url: String,
    signed_in: bool,
}

#[derive(Template)]
#[template(path = "tushare_guide_zh.html")]
struct Chinese {
    chrome: Chrome,
    base_url: String,
    signed_in: bool,
}

/// `GET /tushare-guide`: the guide in English.
pub async fn tushare_guide(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    let page = English {
        chrome: chrome(&req, &state, &reading, NAV),
        base_url: state.site.base_url(&req),
        signed_in: reading.signed_in(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}

/// `GET /zh-CN/tushare-guide`: the guide in Simplified Chinese.
pub async fn tushare_guide_zh(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    let page = Chinese {
        chrome: chrome(&req, &state, &reading, NAV),
        base_url: state.site.base_url(&req),
        signed_in: reading.signed_in(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}
