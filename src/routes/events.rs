//! `GET /api/v1/events` (D22): the event feed of a key's owner, narrowed to the key's
//! index range, oldest first, with a long poll (`wait`). A key is required; the call
//! counts toward no quota, and each key is held to the keyless per-minute limit (D15).
//! It answers facts about availability, never a market value.

use std::time::Duration;

use actix_web::{get, web, HttpRequest};
use iq_actors::caller::{Caller, Credentials};
use iq_actors::catalogue::Scope;
use iq_actors::events::{EventId, FeedPage, FeedRequest, DEFAULT_EVENTS, EVENT_TYPES, MAX_EVENTS};
use iq_actors::indexes::MAX_CODE_CHARS;
use iq_actors::{ApiError, ErrorCode};
use serde::Serialize;
use tracing::Span;

use super::params::{self, FeedQuery};
use crate::front_actor::Identify;
use crate::http::credentials;
use crate::http::protection::KeylessSubject;
use crate::http::{Answer, HttpError};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Read events
///
/// The key owner's events after `after`, oldest first: `index.published` when trading
/// days of an index became visible to the account (for a delayed tier, when the day
/// enters its window), `index.revised` when values it could see changed. Events name
/// what to fetch (`index_code`, `trade_dates`, `published_at`), never a value. Only
/// indexes the key may read appear. With `wait`, an empty answer is held until an
/// event arrives or `wait` seconds pass. Pass `next` as `after` to continue. Never
/// counted toward the quota; each key may call it as often a minute as a caller
/// without a key may query.
#[utoipa::path(
    tag = "events",
    operation_id = "events",
    params(FeedQuery),
    responses(
        (status = 200, description = "A page of events.", body = FeedPage),
        CallerRefusals,
        (status = 429, response = TooManyRequests),
    ),
    security(("api_key" = []), ("bearer" = [])),
)]
#[get("/events")]
pub async fn events(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let credentials = credentials::presented(&req)?;
    if !matches!(credentials, Credentials::ApiKey(_)) {
        return Err(ApiError::new(
            ErrorCode::AuthenticationRequired,
            "the event feed needs an API key (X-API-Key or Authorization: Bearer)",
        )
        .into());
    }
    let identity = state
        .front
        .send(Identify {
            credentials,
            client_ip: state.client_ip(&req),
            span: Span::current(),
        })
        .await??;
    let Caller::Key { key_id, .. } = &identity.caller else {
        return Err(ApiError::internal("a key identified as another caller").into());
    };
    if let Some(scopes) = &identity.grant.scopes {
        if !scopes.contains(&Scope::IndexRead) {
            return Err(ApiError::forbidden(
                "the event feed needs a key with the index:read scope",
            )
            .into());
        }
    }
    state
        .protection
        .admit(&state.protection.events, KeylessSubject::Key(key_id))?;
    let query: FeedQuery = params::parse(req.query_string())?;
    let after = match query.after.as_deref() {
        None => EventId::default(),
        Some(text) => EventId::parse(text).ok_or_else(|| {
            ApiError::invalid("after must be an event id (evt_ and a number), as `next` gives")
        })?,
    };
    let limit = params::bounded(
        "limit",
        query.limit.as_deref(),
        1,
        MAX_EVENTS.into(),
        DEFAULT_EVENTS.into(),
    )?;
    let wait = params::bounded("wait", query.wait.as_deref(), 0, params::feed_max_wait(), 0)?;
    let types = query.types.as_deref().map(event_types).transpose()?;
    let index_code = query.index_code.map(index_code).transpose()?;
    let request = FeedRequest {
        tier: identity.tier.name.clone(),
        member_indexes: identity.grant.member_indexes,
        index_range: identity.grant.index_range.clone(),
        after,
        limit: u32::try_from(limit).unwrap_or(DEFAULT_EVENTS),
        wait: Duration::from_secs(u64::try_from(wait).unwrap_or(0)),
        types,
        index_code,
    };
    let page = state.events.read(&request, state.draining.wait()).await?;
    Ok(Answer(page))
}

/// `types`: event types, comma-separated, each known (duplicates folded).
fn event_types(text: &str) -> Result<Vec<String>, ApiError> {
    let mut types: Vec<String> = Vec::new();
    for name in text.split(',').map(str::trim) {
        if !EVENT_TYPES.contains(&name) {
            return Err(ApiError::invalid(format!(
                "parameter 'types': {:?} is not an event type; expected a comma-separated list \
                 of {}",
                name.chars().take(40).collect::<String>(),
                EVENT_TYPES.join(", ")
            )));
        }
        if !types.iter().any(|t| t == name) {
            types.push(name.to_string());
        }
    }
    Ok(types)
}

/// `index_code`: the shape of an index code (the feed checks that it names one).
fn index_code(text: String) -> Result<String, ApiError> {
    let shaped = !text.is_empty()
        && text.len() <= MAX_CODE_CHARS
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if shaped {
        Ok(text)
    } else {
        Err(ApiError::invalid(
            "parameter 'index_code' must be an index code such as GPU_Index",
        ))
    }
}
