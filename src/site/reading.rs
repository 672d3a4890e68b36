//! What a page reads, and how: one [`Browse`] to the FrontActor under the request's
//! website identity (the session cookie or none, never a key), after the keyless
//! protection of D15 that API calls without a key pass too. Answers come back as the
//! API's `data` objects and are read here as [`Table`]s.

use std::sync::Arc;

use actix_web::{web, HttpMessage, HttpRequest};
use iq_actors::caller::Tier;
use iq_actors::dataset::Page;
use iq_actors::ApiError;
use serde::Deserialize;
use serde_json::Value;
use tracing::Span;

use super::respond::PageError;
use super::visitor_cache::Admitted;
use crate::front::{Browse, Membership};
use crate::http::credentials;
use crate::state::AppState;

pub struct Reading {
    pub membership: Membership,
    pub tiers: Arc<Vec<Tier>>,
    answers: Vec<Result<Arc<Page>, ApiError>>,
}

/// Reads `queries` (bodies of `POST /api/v1/query`) as the request's website identity.
pub async fn read(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    queries: Vec<Value>,
) -> Result<Reading, PageError> {
    let credentials = credentials::website(req);
    let client_ip = state.client_ip(req);
    // A visitor's page served through the page cache was counted there already.
    if req.extensions().get::<Admitted>().is_none() {
        let subject = state.keyless_subject(&credentials, client_ip).await?;
        state.protection.admit(&state.protection.website, subject)?;
    }
    let browsed = state
        .front
        .send(Browse {
            credentials,
            queries,
            span: Span::current(),
        })
        .await??;
    Ok(Reading {
        membership: browsed.membership,
        tiers: browsed.tiers,
        answers: browsed.answers,
    })
}

impl Reading {
    /// The answer to the `i`th query as a table; a refusal stays the API's refusal.
    pub fn table(&self, i: usize) -> Result<Table, PageError> {
        let page = match self.answers.get(i) {
            Some(Ok(page)) => page,
            Some(Err(error)) => return Err(PageError::from(error.clone())),
            None => {
                return Err(ApiError::internal("a page read fewer answers than it asked").into())
            }
        };
        serde_json::from_str(page.data.get())
            .map_err(|e| ApiError::internal(format_args!("a page's data: {e}")).into())
    }

    /// Whether the caller is signed in.
    pub fn signed_in(&self) -> bool {
        self.membership.user.is_some()
    }
}

/// A query's `data`: column names and rows aligned with them.
#[derive(Debug, Deserialize)]
pub struct Table {
    pub fields: Vec<String>,
    pub items: Vec<Vec<Value>>,
    pub has_more: bool,
}

impl Table {
    /// The rows, each read by field name.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.items.iter().map(move |values| Row {
            fields: &self.fields,
            values,
        })
    }
}

pub struct Row<'a> {
    fields: &'a [String],
    values: &'a [Value],
}

impl Row<'_> {
    /// The value of `field` as the API printed it; `None` for null or absent.
    pub fn get(&self, field: &str) -> Option<String> {
        let i = self.fields.iter().position(|f| f == field)?;
        match self.values.get(i)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }

    /// [`Row::get`], or an empty string.
    pub fn text(&self, field: &str) -> String {
        self.get(field).unwrap_or_default()
    }
}
