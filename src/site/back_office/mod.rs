//! The back office's pages (D19): imports, the calendar, every account's webhooks and the
//! audit trail (D23) for administrators; users, keys, tiers and indexes for super administrators.
//! Server-rendered like the rest of the site, usable without script, every form with its
//! CSRF token, the same headers.
//!
//! [`Staff`] is the pages' guard, as `SessionGuard` is the JSON endpoints': no session
//! sends the browser to the login form, a role too low gets a 403 page (never a blank
//! one). Handlers call the same domain services as the JSON endpoints; this module must
//! never write to the database or a cache itself.

mod audit;
mod calendar;
mod imports;
mod indexes;
mod keys;
mod pager;
mod tiers;
mod users;
mod webhooks;

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest};
use askama::Template;
use iq_actors::audit::Author;
use iq_actors::caller::{Account, Role};

use super::chrome::Chrome;
use super::respond::{render, Caching, PageError, PageResult};
use super::session;
use crate::http::author;
use crate::http::guard::{staff_second_factor, Rank};
use crate::state::AppState;

pub use crate::http::{Admin, SuperAdmin};

/// A signed-in user with at least the role `R`.
pub struct Staff<R: Rank> {
    pub account: Account,
    rank: PhantomData<R>,
}

impl<R: Rank> FromRequest for Staff<R> {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, PageError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let session = session::required(&req).await?;
            if session.account.role < R::ROLE {
                return Err(PageError::forbidden(match R::ROLE {
                    Role::SuperAdmin => "This page is for super administrators.",
                    _ => "This page is for administrators.",
                }));
            }
            staff_second_factor::<R>(&req, &session).map_err(|_| {
                PageError::forbidden(
                    "Administrators sign in with a second factor here. Set it up under \
                     Account, Password and sessions.",
                )
            })?;
            Ok(Staff {
                account: session.account,
                rank: PhantomData,
            })
        })
    }
}

impl<R: Rank> Staff<R> {
    /// The signed-in staff member as the author of a change this request makes.
    pub fn author(&self) -> Author {
        author(&self.account)
    }

    /// The frame of a back-office page: signed in as this staff member, under "admin".
    pub fn chrome(&self, req: &HttpRequest, state: &AppState) -> Chrome {
        Chrome::new(req, state, Some(&self.account), "admin")
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/admin", web::get().to(home))
        .route("/admin/imports", web::get().to(imports::list))
        .route("/admin/imports", web::post().to(imports::upload))
        .route("/admin/imports/{id}", web::get().to(imports::show))
        .route(
            "/admin/imports/{id}/errors.csv",
            web::get().to(imports::errors_csv),
        )
        .route("/admin/calendar", web::get().to(calendar::show))
        .route("/admin/calendar", web::post().to(calendar::save))
        .route("/admin/webhooks", web::get().to(webhooks::list))
        .route("/admin/audit", web::get().to(audit::list))
        .route("/admin/users", web::get().to(users::list))
        .route("/admin/users", web::post().to(users::create))
        .route("/admin/users/{id}", web::get().to(users::show))
        .route("/admin/users/{id}", web::post().to(users::save))
        .route(
            "/admin/users/{id}/reset",
            web::post().to(users::issue_reset),
        )
        .route("/admin/keys", web::get().to(keys::list))
        .route("/admin/keys/{id}", web::get().to(keys::show))
        .route("/admin/keys/{id}", web::post().to(keys::save))
        .route("/admin/tiers", web::get().to(tiers::list))
        .route("/admin/tiers/{tier}", web::post().to(tiers::save))
        .route("/admin/indexes", web::get().to(indexes::list))
        .route("/admin/indexes/{code}", web::post().to(indexes::save));
}

#[derive(Template)]
#[template(path = "admin/home.html")]
struct Home {
    chrome: Chrome,
    super_admin: bool,
}

/// `GET /admin`: what this role may do here.
async fn home(req: HttpRequest, staff: Staff<Admin>, state: web::Data<AppState>) -> PageResult {
    let page = Home {
        chrome: staff.chrome(&req, &state),
        super_admin: staff.account.role >= Role::SuperAdmin,
    };
    render(&page, StatusCode::OK, Caching::Private)
}
