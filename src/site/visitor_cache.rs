//! Rendered public pages for visitors, so the pages most people see cost no template
//! rendering and no actor round trip once they are warm.
//!
//! Visitors all see the same thing (D4: a visitor is a free user's session), so a page
//! is kept by its address and the service's date (the delay cutoff moves with the
//! day). Entries are dropped on every data or account change: the [`PageInvalidator`]
//! is the change bus's last recipient, after the actors whose caches the pages are
//! made from, and the cache's generations discard a page whose rendering straddled the
//! change. A page is stored split around its request id, and each answer gets its own.
//!
//! Only 200 answers to visitors (no session cookie) are kept; a member's pages are
//! theirs alone and never enter this cache.

use actix::prelude::*;
use actix_web::body::to_bytes;
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest};
use iq_actors::changes::{Change, Invalidate};
use iq_actors::{ApiError, ErrorCode};

use super::respond::{page_builder, Caching, PageResult};
use crate::http::envelope::BusinessCode;
use crate::http::protection::KeylessSubject;
use crate::http::session::session_id;
use crate::http::RequestId;
use crate::state::{AppState, Rendered, VisitorPages};

/// Marks a request whose keyless protection was already counted, so the page's
/// reading does not count it twice.
#[derive(Clone, Copy)]
pub struct Admitted;

impl VisitorPages {
    /// Serves the page to a visitor from the cache, rendering it with `render` on a
    /// miss; a member's request goes straight to `render`. An answer that is not kept
    /// (an error page, a redirect) leaves the loader as its error, since the cache
    /// keeps no errors, and is given as it is.
    pub async fn serve<F, Fut>(&self, req: &HttpRequest, state: &AppState, render: F) -> PageResult
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = PageResult>,
    {
        if session_id(req).is_some() {
            return render().await;
        }
        let subject = KeylessSubject::Address(state.client_ip(req));
        state.protection.admit(&state.protection.website, subject)?;
        req.extensions_mut().insert(Admitted);
        let key = (req.uri().to_string(), state.site.today());
        let mut uncached = None;
        let lookup = self
            .pages
            .get_or_load(&key, || async {
                let answer = render().await;
                match answer {
                    Ok(response) if response.status() == StatusCode::OK => {
                        let id = RequestId::current();
                        let body = to_bytes(response.into_body())
                            .await
                            .map_err(|_| ApiError::internal("a page's body could not be read"))?;
                        let html = String::from_utf8(body.to_vec())
                            .map_err(|_| ApiError::internal("a page is not UTF-8"))?;
                        split(&html, id.as_str()).ok_or_else(|| {
                            ApiError::internal("a page does not show its request id once")
                        })
                    }
                    other => {
                        uncached = Some(other);
                        Err(ApiError::new(ErrorCode::NotFound, "not kept"))
                    }
                }
            })
            .await;
        match (lookup, uncached) {
            (_, Some(answer)) => answer,
            (Ok(lookup), None) => Ok(answer(&lookup.value)),
            // Another request's rendering, which this one waited for, was not kept.
            (Err(_), None) => render().await,
        }
    }
}

/// The page around `id`, which it must show exactly once (the footer).
fn split(html: &str, id: &str) -> Option<Rendered> {
    let (head, tail) = html.split_once(id)?;
    if tail.contains(id) {
        return None;
    }
    Some(Rendered {
        head: head.into(),
        tail: tail.into(),
    })
}

/// A kept page, with this request's id.
fn answer(page: &Rendered) -> actix_web::HttpResponse {
    let id = RequestId::current();
    let mut body = String::with_capacity(page.head.len() + id.as_str().len() + page.tail.len());
    body.push_str(&page.head);
    body.push_str(id.as_str());
    body.push_str(&page.tail);
    let mut response = page_builder(StatusCode::OK, Caching::Visitor).body(body);
    response.extensions_mut().insert(BusinessCode(0));
    response
}

/// The change bus's recipient that empties the cache.
pub struct PageInvalidator(pub VisitorPages);

impl Actor for PageInvalidator {
    type Context = Context<Self>;
}

impl Handler<Invalidate> for PageInvalidator {
    type Result = ();

    fn handle(&mut self, msg: Invalidate, _: &mut Context<Self>) {
        // Tiers (an auth change) are on the pages too: delays, plans.
        if msg.0.touches(Change::Data) || msg.0.touches(Change::Auth) {
            self.0.invalidate_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_split_around_its_one_request_id() {
        let page = split("<p>a</p><code>req_1</code><p>b</p>", "req_1").unwrap();
        assert_eq!(&*page.head, "<p>a</p><code>");
        assert_eq!(&*page.tail, "</code><p>b</p>");
        assert!(split("req_1 and req_1", "req_1").is_none());
        assert!(split("nothing", "req_1").is_none());
    }
}
