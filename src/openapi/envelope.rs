//! The success envelope `{request_id, code: 0, message: "ok", data}`.
//!
//! A `#[utoipa::path]` in this module names only what goes in `data`; [`Wrap`] then
//! puts every JSON success body in the envelope, as `envelope::success` does on the
//! wire, so no operation can forget it. The one JSON answer outside the envelope is this
//! document itself.

use std::borrow::Cow;

use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{OpenApi, Ref, RefOr};
use utoipa::{Modify, PartialSchema, ToSchema};

use super::{headers, operations_mut, typed};

/// Answers that are not in our envelope: the document itself, and Tushare's wire (D24),
/// whose answers are Tushare's own envelope.
const RAW: [&str; 3] = [super::DOCUMENT_PATH, "/tushare", "/tushare/{api_name}"];

pub struct Success;

impl PartialSchema for Success {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "Every successful answer (HTTP 200). `data` is described with each operation.",
            ))
            .property("request_id", headers::request_id_schema())
            .required("request_id")
            .property(
                "code",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .enum_values(Some([0])),
            )
            .required("code")
            .property(
                "message",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["ok"])),
            )
            .required("message")
            .property("data", typed(SchemaType::AnyValue, "the answer itself"))
            .required("data")
            .into()
    }
}

impl ToSchema for Success {
    fn name() -> Cow<'static, str> {
        "Success".into()
    }
}

/// Puts each JSON success body in the envelope, as its `data`.
pub struct Wrap;

impl Modify for Wrap {
    fn modify(&self, openapi: &mut OpenApi) {
        for (path, _, operation) in operations_mut(openapi) {
            if RAW.contains(&path.as_str()) {
                continue;
            }
            for (status, response) in operation.responses.responses.iter_mut() {
                let RefOr::T(response) = response else {
                    continue;
                };
                if !status.starts_with('2') {
                    continue;
                }
                let Some(content) = response.content.get_mut("application/json") else {
                    continue;
                };
                let data = content.schema.take().unwrap_or_else(|| {
                    ObjectBuilder::new()
                        .schema_type(SchemaType::AnyValue)
                        .into()
                });
                let narrowed = ObjectBuilder::new().property("data", data);
                content.schema = Some(
                    AllOfBuilder::new()
                        .item(Ref::from_schema_name(Success::name()))
                        .item(narrowed)
                        .into(),
                );
            }
        }
    }
}
