//! The one way a handler succeeds: [`Answer`], its data in the envelope (`code` 0,
//! `message` "ok") with the request's `request_id`; [`Answer::unstored`] for one whose
//! body holds a secret.

use actix_web::body::BoxBody;
use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{CustomizeResponder, HttpRequest, HttpResponse, Responder};
use serde::Serialize;

use super::envelope;
use super::RequestId;

/// `data` of a successful answer.
pub struct Answer<T>(pub T);

impl<T: Serialize> Responder for Answer<T> {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        envelope::success(&RequestId::current(), self.0)
    }
}

impl<T: Serialize> Answer<T> {
    /// This answer with `Cache-Control: no-store`: its body holds a secret shown once (a
    /// new key, a session's CSRF token), which no cache may keep.
    pub fn unstored(self) -> CustomizeResponder<Self> {
        self.customize()
            .insert_header(CacheControl(vec![CacheDirective::NoStore]))
    }
}
