//! The error envelope, every business code with its HTTP status, and one reusable
//! response per status. Codes, statuses and meanings are all read from [`ErrorCode`]'s
//! one table (the service answers with the same statuses), so the document cannot drift
//! from them: a response lists exactly the codes whose status is its status.

use std::borrow::Cow;

use actix_web::http::StatusCode;
use iq_actors::imports::RowError;
use iq_actors::ErrorCode;
use serde_json::json;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{AllOfBuilder, ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{PartialSchema, ToResponse, ToSchema};

use super::{headers, typed};
use crate::http::envelope::status_for;

/// `InvalidRequest` for 40001: the variant's name, for readers and code generators.
fn name(code: ErrorCode) -> String {
    format!("{code:?}")
}

/// The `code` of an error envelope: every business code, with its status and meaning.
pub struct ErrorCodeSchema;

impl PartialSchema for ErrorCodeSchema {
    fn schema() -> RefOr<Schema> {
        let mut table = String::from(
            "The business code of an error; programs decide on it, never on `message`.\n\n\
             | code | HTTP | name | meaning |\n|---|---|---|---|\n",
        );
        let mut listed = Vec::new();
        for &code in ErrorCode::ALL {
            table.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                code.as_u32(),
                code.http_status(),
                name(code),
                code.meaning()
            ));
            listed.push(json!({
                "code": code.as_u32(),
                "status": code.http_status(),
                "name": name(code),
                "meaning": code.meaning(),
            }));
        }
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .enum_values(Some(ErrorCode::ALL.iter().map(|c| c.as_u32())))
            .description(Some(table))
            .extensions(Some(
                ExtensionsBuilder::new()
                    .add("x-error-codes", listed)
                    .build(),
            ))
            .into()
    }
}

impl ToSchema for ErrorCodeSchema {
    fn name() -> Cow<'static, str> {
        "ErrorCode".into()
    }
}

/// `{request_id, code, message, data: null, errors?, errors_total?}`.
pub struct ErrorEnvelope;

impl PartialSchema for ErrorEnvelope {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "Every refusal and failure: `data` is null; `errors` and `errors_total` \
                 appear only with code 40002 (a rejected quote file).",
            ))
            .property("request_id", headers::request_id_schema())
            .required("request_id")
            .property("code", Ref::from_schema_name(ErrorCodeSchema::name()))
            .required("code")
            .property(
                "message",
                typed(Type::String, "for people: it may change; decide on `code`"),
            )
            .required("message")
            .property("data", typed(Type::Null, "always null in an error"))
            .required("data")
            .property(
                "errors",
                ArrayBuilder::new()
                    .items(Ref::from_schema_name(RowError::name()))
                    .max_items(Some(1000))
                    .description(Some(
                        "40002 only: the file's first problems, in row order (at most 1,000)",
                    )),
            )
            .property(
                "errors_total",
                typed(
                    Type::Integer,
                    "40002 only: how many problems the file has in all",
                )
                .minimum(Some(1)),
            )
            .into()
    }
}

impl ToSchema for ErrorEnvelope {
    fn name() -> Cow<'static, str> {
        "ErrorEnvelope".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((ErrorCodeSchema::name().into(), ErrorCodeSchema::schema()));
        schemas.push((RowError::name().into(), RowError::schema()));
    }
}

/// The response for `status`: the error envelope narrowed to the codes the service maps
/// to that status, each listed with its meaning.
pub fn response_for(status: StatusCode, summary: &str) -> Response {
    let codes: Vec<ErrorCode> = ErrorCode::ALL
        .iter()
        .copied()
        .filter(|&c| status_for(c) == status)
        .collect();
    assert!(!codes.is_empty(), "no business code answers {status}");
    let mut description = format!("{summary}\n\n");
    for &code in &codes {
        description.push_str(&format!("- `{}`: {}\n", code.as_u32(), code.meaning()));
    }
    let mut narrowed = ObjectBuilder::new().property(
        "code",
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .enum_values(Some(codes.iter().map(|c| c.as_u32()))),
    );
    if codes.contains(&ErrorCode::ImportRejected) {
        narrowed = narrowed.required("errors").required("errors_total");
    }
    let schema = AllOfBuilder::new()
        .item(Ref::from_schema_name(ErrorEnvelope::name()))
        .item(narrowed);
    let mut response = ResponseBuilder::new()
        .description(description.trim_end())
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(schema)).build(),
        )
        .header("X-Request-Id", headers::request_id());
    if status == StatusCode::TOO_MANY_REQUESTS {
        response = response.header("Retry-After", headers::retry_after());
    }
    response.build()
}

macro_rules! error_responses {
    ($($name:ident => $status:ident, $summary:literal;)+) => {
        $(
            #[doc = $summary]
            pub struct $name;

            impl<'r> ToResponse<'r> for $name {
                fn response() -> (&'r str, RefOr<Response>) {
                    (stringify!($name), response_for(StatusCode::$status, $summary).into())
                }
            }
        )+
    };
}

error_responses! {
    BadRequest => BAD_REQUEST, "The request is malformed: body, parameter, header or a key in the URL.";
    ImportRejected => UNPROCESSABLE_ENTITY, "The quote file breaks the import rules; nothing was stored.";
    Unauthorized => UNAUTHORIZED, "Credentials are missing, unknown or expired.";
    Forbidden => FORBIDDEN, "The caller may not do this.";
    NotFound => NOT_FOUND, "No such resource (or someone else's).";
    Conflict => CONFLICT, "The change conflicts with the current state.";
    TooManyRequests => TOO_MANY_REQUESTS, "A limit is used up; `Retry-After` gives the seconds to wait.";
    InternalError => INTERNAL_SERVER_ERROR, "The service failed; quote the `request_id`.";
}

/// What any operation that checks its caller may be refused with: a malformed request
/// (400), no valid credentials (401), not allowed (403), a fault (500). An operation
/// lists it in its `responses(...)` beside its own answers.
pub struct CallerRefusals;

impl utoipa::IntoResponses for CallerRefusals {
    fn responses() -> std::collections::BTreeMap<String, RefOr<Response>> {
        refusals([
            ("400", BadRequest::response()),
            ("401", Unauthorized::response()),
            ("403", Forbidden::response()),
            ("500", InternalError::response()),
        ])
    }
}

/// [`CallerRefusals`] and 404: what an operation on one thing named in its path (a
/// user, a key, an import) may be refused with; someone else's is not found either.
pub struct ResourceRefusals;

impl utoipa::IntoResponses for ResourceRefusals {
    fn responses() -> std::collections::BTreeMap<String, RefOr<Response>> {
        let mut responses = CallerRefusals::responses();
        responses.extend(refusals([("404", NotFound::response())]));
        responses
    }
}

/// Each `(status, response)` as a reference to the shared response.
fn refusals<'r>(
    listed: impl IntoIterator<Item = (&'static str, (&'r str, RefOr<Response>))>,
) -> std::collections::BTreeMap<String, RefOr<Response>> {
    listed
        .into_iter()
        .map(|(status, (name, _))| (status.to_owned(), Ref::from_response_name(name).into()))
        .collect()
}

/// 503 / 50000: up but not ready (`/readyz` only, the one answer whose status is not its
/// code's).
pub struct NotReady;

impl<'r> ToResponse<'r> for NotReady {
    fn response() -> (&'r str, RefOr<Response>) {
        let description = format!(
            "Not ready: the database does not answer or lacks this build's migrations; \
             code `{}` with the reason in `message`.",
            ErrorCode::Internal.as_u32()
        );
        let schema = Ref::from_schema_name(ErrorEnvelope::name());
        let content = ContentBuilder::new().schema(Some(schema)).build();
        let response = ResponseBuilder::new().description(description);
        let response = response.content("application/json", content);
        let response = response.header("X-Request-Id", headers::request_id());
        ("NotReady", response.build().into())
    }
}
