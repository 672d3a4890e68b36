//! Response headers: `X-Request-Id` on every answer, `Retry-After` on a 429, and the
//! rate-limit headers of a query made with a key.

use utoipa::openapi::header::{Header, HeaderBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

use super::{operations_mut, QUERY_PATH};

/// The request id's shape: `req_` and a UUIDv7 in hex.
pub fn request_id_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some("^req_"))
        .description(Some(
            "this request's id, also in the `X-Request-Id` header and in every log line of \
             the request; quote it when you report a problem",
        ))
}

pub fn request_id() -> Header {
    let description = "The request's id, as in the body's `request_id`; on every answer.";
    header(request_id_schema(), description)
}

fn header(schema: ObjectBuilder, description: &str) -> Header {
    let header = HeaderBuilder::new().schema(schema);
    header.description(Some(description)).build()
}

fn at_least(minimum: i64) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(minimum))
}

pub fn retry_after() -> Header {
    header(at_least(1), "Whole seconds to wait before trying again.")
}

/// The headers every answer to a query made with a valid key carries, refusals
/// included (D6).
fn rate_limit_headers() -> [(&'static str, Header); 5] {
    let text = || ObjectBuilder::new().schema_type(Type::String);
    [
        (
            "X-RateLimit-Limit",
            at_least(0),
            "With a valid key: the limit of the binding \
          window (of the key's and the account's minute and day windows, the one with the \
          fewest calls left; on a 429 the refusing one).",
        ),
        (
            "X-RateLimit-Remaining",
            at_least(0),
            "With a valid key: calls left in that window.",
        ),
        (
            "X-RateLimit-Reset",
            at_least(1),
            "With a valid key: whole seconds until that \
          window resets.",
        ),
        (
            "RateLimit-Policy",
            text(),
            "With a valid key: both windows, IETF draft syntax \
          (`\"minute\";q=10;w=60, \"day\";q=10;w=86400`).",
        ),
        (
            "RateLimit",
            text(),
            "With a valid key: both windows' state (`\"minute\";r=9;t=42, \
          \"day\";r=9;t=72000`: `r` calls left, `t` seconds to reset).",
        ),
    ]
    .map(|(name, schema, description)| (name, header(schema, description)))
}

/// Adds `X-Request-Id` to every response written in place (the shared error responses
/// carry it themselves), and the rate-limit headers to every answer of the query.
pub struct Common;

impl Modify for Common {
    fn modify(&self, openapi: &mut OpenApi) {
        for (path, _, operation) in operations_mut(openapi) {
            let is_query = path == QUERY_PATH;
            for response in operation.responses.responses.values_mut() {
                let RefOr::T(response) = response else {
                    continue;
                };
                response
                    .headers
                    .entry("X-Request-Id".into())
                    .or_insert_with(request_id);
                if is_query {
                    for (name, header) in rate_limit_headers() {
                        response.headers.insert(name.into(), header);
                    }
                }
            }
        }
    }
}
