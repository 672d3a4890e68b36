//! What a page reads, and how: typed [`Read`]s, checked by the API's own parser, sent
//! in one [`Browse`] to the FrontActor under the request's website identity (the
//! session cookie or none, never a key), after the keyless protection of D15 that API
//! calls without a key pass too. Answers come back as the API's `data` objects and are
//! read here as [`Table`]s. A page never writes a query body by hand.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpMessage, HttpRequest};
use chrono::NaiveDate;
use iq_actors::caller::Tier;
use iq_actors::catalogue;
use iq_actors::dataset::Page;
use iq_actors::query::{Query, LIMIT_CAP};
use iq_actors::ApiError;
use serde::Deserialize;
use serde_json::{Map, Value};
use tracing::Span;

use super::format::wire;
use super::respond::PageError;
use super::visitor_cache::Admitted;
use crate::front_actor::{Browse, Membership};
use crate::http::credentials;
use crate::state::AppState;

pub struct Reading {
    pub membership: Membership,
    pub tiers: Arc<Vec<Tier>>,
    answers: Vec<Result<Arc<Page>, ApiError>>,
}

/// One query a page reads: the parts of a `POST /api/v1/query` body, typed, and turned
/// into the API's own [`Query`] by its own parser ([`Query::of`]), so a page can ask
/// nothing the API would refuse or read differently.
#[derive(Debug, Clone)]
pub struct Read {
    dataset: &'static str,
    params: Map<String, Value>,
    fields: Option<Vec<&'static str>>,
    limit: Option<u32>,
    offset: usize,
}

impl Read {
    /// The first page of `dataset` (its `api_name`), every parameter at its default.
    pub fn of(dataset: &'static str) -> Read {
        Read {
            dataset,
            params: Map::new(),
            fields: None,
            limit: None,
            offset: 0,
        }
    }

    /// Sets the parameter `name` to `value`, as a client would write it.
    pub fn param(mut self, name: &'static str, value: impl Into<String>) -> Read {
        self.params
            .insert(name.to_owned(), Value::String(value.into()));
        self
    }

    /// Sets the date parameter `name` to `day`, when there is one.
    pub fn day(self, name: &'static str, day: Option<NaiveDate>) -> Read {
        match day {
            Some(day) => self.param(name, wire(day)),
            None => self,
        }
    }

    /// The columns to return, in this order (else the dataset's defaults).
    pub fn fields(mut self, fields: &[&'static str]) -> Read {
        self.fields = Some(fields.to_vec());
        self
    }

    /// At most `rows` rows.
    pub fn limit(mut self, rows: u32) -> Read {
        self.limit = Some(rows);
        self
    }

    /// As many rows as one answer holds ([`LIMIT_CAP`]): for pages that read a whole
    /// range, page after page.
    pub fn whole(self) -> Read {
        self.limit(LIMIT_CAP)
    }

    /// The rows from the `offset`th on.
    pub fn starting_at(mut self, offset: usize) -> Read {
        self.offset = offset;
        self
    }

    /// The API's query for this read, checked as `POST /api/v1/query` checks a body.
    fn query(self) -> Result<Query, ApiError> {
        let dataset = catalogue::dataset(self.dataset)
            .ok_or_else(|| ApiError::internal(format_args!("no dataset {}", self.dataset)))?;
        let mut body = Map::new();
        body.insert("params".into(), Value::Object(self.params));
        if let Some(fields) = self.fields {
            body.insert("fields".into(), fields.into());
        }
        if let Some(limit) = self.limit {
            body.insert("limit".into(), limit.into());
        }
        body.insert("offset".into(), self.offset.into());
        Query::of(dataset, &body)
    }
}

/// Reads `reads` as the request's website identity.
pub async fn read(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    reads: Vec<Read>,
) -> Result<Reading, PageError> {
    let credentials = credentials::website(req);
    let client_ip = state.client_ip(req);
    // A visitor's page served through the page cache was counted there already.
    if req.extensions().get::<Admitted>().is_none() {
        let subject = state.keyless_subject(&credentials, client_ip).await?;
        state.protection.admit(&state.protection.website, subject)?;
    }
    let queries = reads
        .into_iter()
        .map(Read::query)
        .collect::<Result<_, _>>()?;
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

/// Reads on after `table`, one page at a time, while the API says there is more and
/// `max_pages` pages (the first included) are not reached; `next(offset)` is the read
/// of the rows from `offset` on. `table.has_more` says afterwards whether it stopped
/// short.
pub async fn read_on(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    table: &mut Table,
    next: impl Fn(usize) -> Read,
    max_pages: usize,
) -> Result<(), PageError> {
    let mut pages = 1;
    while table.has_more && pages < max_pages {
        let more = read(req, state, vec![next(table.items.len())])
            .await?
            .table(0)?;
        table.has_more = more.has_more;
        table.items.extend(more.items);
        pages += 1;
    }
    Ok(())
}

/// `index_basic`'s answer for the index `code` a page is about: a member index the
/// caller's plan does not cover is the page's 403, saying so (an empty table means the
/// caller cannot see it at all: the page's 404).
pub fn visible_index(answer: Result<Table, PageError>, code: &str) -> Result<Table, PageError> {
    answer.map_err(|e| {
        if e.status == StatusCode::FORBIDDEN {
            PageError::forbidden(format!(
                "{code} is for members whose plan includes member indexes: see the plans."
            ))
        } else {
            e
        }
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
        serde_json::from_str(page.json()?.get())
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
