//! The one way a handler succeeds: [`Answer`], its data in the envelope (`code` 0,
//! `message` "ok") with the request's `request_id`.

use actix_web::body::BoxBody;
use actix_web::{HttpRequest, HttpResponse, Responder};
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
