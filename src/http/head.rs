//! `HEAD` answered as `GET` would be, without the body: a general-purpose server must
//! take `HEAD` wherever it takes `GET` (RFC 9110, 9.1), and uptime monitors and
//! `curl -I` send it. The request is routed as a `GET`; actix-http's encoder decided from
//! the request line it parsed that only the answer's head is written (its headers keep
//! the `Content-Length` the body would have).
//!
//! It must never let `HEAD` reach a handler that only `POST`, `PUT`, `PATCH` or `DELETE`
//! take: those find no `GET` route and answer 404, like any method a path does not take.

use actix_web::dev::ServiceRequest;
use actix_web::http::Method;

/// Routes a `HEAD` request as the `GET` of the same path.
pub fn route_as_get(req: &mut ServiceRequest) {
    if req.method() == Method::HEAD {
        req.head_mut().method = Method::GET;
    }
}
