//! The one way a page reads a part of its path (`/account/keys/{id}/rotate`,
//! `/admin/indexes/{code}`): decoded as `web::Path` decodes it, then refused as a
//! client error, a 400 page with the request id, when it holds NUL or another control
//! character. Such a value names nothing the service stores, and PostgreSQL refuses NUL
//! in text: passed on, it was a 500.
//!
//! It must never pass a control character on to a handler.

use std::future::{ready, Ready};
use std::ops::Deref;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};

use super::respond::PageError;

/// A page's one path parameter, free of control characters.
#[derive(Debug)]
pub struct PathPart(String);

impl Deref for PathPart {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PathPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for PathPart {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromRequest for PathPart {
    type Error = PageError;
    type Future = Ready<Result<PathPart, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let part = actix_web::web::Path::<String>::extract(req)
            .into_inner()
            .map_err(|_| PageError::not_found("There is no such page."))
            .and_then(|path| {
                let part = path.into_inner();
                if part.chars().any(char::is_control) {
                    Err(PageError::bad_request(
                        "The address holds a control character (such as NUL), which no page \
                         name holds.",
                    ))
                } else {
                    Ok(PathPart(part))
                }
            });
        ready(part)
    }
}
