//! Parameter descriptions for parameters whose schema comes from a function.
//!
//! utoipa's `#[param(schema_with = f)]` (how a derived query struct takes its bounds
//! from the domain's constants) drops the field's doc comment. Such a function puts the
//! description in the schema instead, and [`Described`] moves it to the parameter,
//! where readers and code generators look for it. Nothing else is changed.

use utoipa::openapi::schema::Schema;
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

use super::operations_mut;

pub struct Described;

impl Modify for Described {
    fn modify(&self, openapi: &mut OpenApi) {
        for (_, _, operation) in operations_mut(openapi) {
            for parameter in operation.parameters.iter_mut().flatten() {
                if parameter.description.is_some() {
                    continue;
                }
                if let Some(RefOr::T(Schema::Object(schema))) = parameter.schema.as_mut() {
                    parameter.description = schema.description.take();
                }
            }
        }
    }
}
