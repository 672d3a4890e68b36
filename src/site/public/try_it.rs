//! `GET /docs/try/{api_name}` and `POST` to it: a dataset of `POST /api/v1/query` tried
//! from the reference, as a plain form (no script needed, none inline: the CSP holds).
//! The form's parameters, fields and page become the query's JSON body, which is sent
//! exactly as the API receives it (the FrontActor's `RunQuery`, so a pasted key is
//! checked and counted like any call with it, and a call without one is held to the
//! keyless limit); the page shows the body sent and the answer with its `request_id`.
//!
//! A pasted key is used for this one query and never stored, logged or shown again
//! (the form comes back without it). Without one, the query runs as the reader's
//! website identity: their session, or a visitor.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::caller::Credentials;
use iq_actors::catalogue::{self, Dataset};
use iq_actors::dataset::Page;
use iq_actors::ApiError;
use serde_json::{json, Map, Value};

use crate::front_actor::Ask;
use crate::http::envelope::status_for;
use crate::http::{credentials, RequestId};
use crate::site::chrome::Chrome;
use crate::site::form::Form;
use crate::site::path_part::PathPart;
use crate::site::pre_session;
use crate::site::respond::{PageError, PageResult};
use crate::state::AppState;

/// The longest value a field of the form may hold.
const MAX_VALUE: usize = 200;
/// The most of an answer the page shows (the API's answer can be far longer).
const SHOWN_BYTES: usize = 20_000;

/// A parameter's input.
pub struct ParamInput {
    pub name: &'static str,
    pub description: &'static str,
    pub value: String,
}

/// What the last try sent and got.
pub struct Tried {
    pub body: String,
    pub status: u16,
    pub code: u32,
    pub request_id: String,
    pub answer: String,
    pub cut: bool,
    pub with_key: bool,
}

#[derive(Template)]
#[template(path = "try_it.html")]
struct TryPage {
    chrome: Chrome,
    api_name: &'static str,
    description: &'static str,
    params: Vec<ParamInput>,
    fields: String,
    limit: String,
    signed_in: bool,
    tried: Option<Tried>,
}

fn dataset(name: &str) -> Result<&'static Dataset, PageError> {
    catalogue::dataset(name).ok_or_else(|| PageError::not_found("There is no such dataset."))
}

fn show(req: &HttpRequest, state: &AppState, page: TryPage, status: StatusCode) -> PageResult {
    pre_session::render(req, state, status, "docs", |chrome| TryPage {
        chrome,
        ..page
    })
}

fn blank(req: &HttpRequest, state: &AppState, dataset: &'static Dataset) -> TryPage {
    TryPage {
        chrome: Chrome::new(req, state, None, "docs"),
        api_name: dataset.api_name,
        description: dataset.description,
        params: dataset
            .params
            .iter()
            .map(|p| ParamInput {
                name: p.name,
                description: p.description,
                value: String::new(),
            })
            .collect(),
        fields: String::new(),
        limit: "10".to_owned(),
        signed_in: matches!(credentials::website(req), Credentials::Session(_)),
        tried: None,
    }
}

/// `GET /docs/try/{api_name}`: the empty form.
pub async fn try_form(req: HttpRequest, name: PathPart, state: web::Data<AppState>) -> PageResult {
    let dataset = dataset(&name)?;
    show(&req, &state, blank(&req, &state, dataset), StatusCode::OK)
}

/// `POST /docs/try/{api_name}`: sends the query and shows the answer beside the form.
/// An unknown dataset is a 404 whatever the form holds: the form's refusal waits.
pub async fn try_query(
    req: HttpRequest,
    name: PathPart,
    form: Result<Form, PageError>,
    state: web::Data<AppState>,
) -> PageResult {
    let dataset = dataset(&name)?;
    let form = form?;
    let mut page = blank(&req, &state, dataset);
    let (body, key) = fill(&mut page, dataset.api_name, &form)?;
    let request_id = RequestId::current();
    let client_ip = state.client_ip(&req);
    let with_key = !key.is_empty();
    let credentials = if with_key {
        Credentials::ApiKey(key)
    } else {
        credentials::website(&req)
    };
    let sent = serde_json::to_string_pretty(&body).map_err(ApiError::internal)?;
    let result = match state
        .run_query(&request_id, credentials, client_ip, Ask::Native(body, None))
        .await
    {
        Ok(outcome) => outcome.result,
        Err(refused) => Err(refused.error),
    };
    // A fault of the service is the error page, not an answer to show.
    if let Err(error) = &result {
        if error.code == iq_actors::ErrorCode::Internal {
            return Err(error.clone().into());
        }
    }
    let (status, code, answer) = envelope(&request_id, &result)?;
    let (answer, cut) = shown(serde_json::to_string_pretty(&answer).map_err(ApiError::internal)?);
    page.tried = Some(Tried {
        body: sent,
        status,
        code,
        request_id: request_id.as_str().to_owned(),
        answer,
        cut,
        with_key,
    });
    // The page is answered: its status is the page's, the query's is shown in it.
    show(&req, &state, page, StatusCode::OK)
}

/// Fills `page`'s inputs from `form` and builds the query body they say, as a client
/// would send it, with the key typed (empty for none). A value past [`MAX_VALUE`]
/// characters is the page's 400.
fn fill(page: &mut TryPage, api_name: &str, form: &Form) -> Result<(Value, String), PageError> {
    let value = |field: &str| -> Result<String, PageError> {
        let text = form.one(field).unwrap_or_default().trim();
        if text.chars().count() > MAX_VALUE {
            return Err(PageError::bad_request(format!(
                "{field} must be at most {MAX_VALUE} characters."
            )));
        }
        Ok(text.to_owned())
    };
    let mut params = Map::new();
    for input in &mut page.params {
        input.value = value(&format!("param_{}", input.name))?;
        if !input.value.is_empty() {
            params.insert(input.name.to_owned(), json!(input.value));
        }
    }
    page.fields = value("fields")?;
    page.limit = value("limit")?;
    let mut body = json!({"api_name": api_name});
    if !params.is_empty() {
        body["params"] = Value::Object(params);
    }
    if !page.fields.is_empty() {
        let fields: Vec<&str> = page.fields.split(',').map(str::trim).collect();
        body["fields"] = json!(fields);
    }
    if !page.limit.is_empty() {
        // A number when it reads as one; else as typed, for the API to refuse by name.
        body["limit"] = page
            .limit
            .parse::<i64>()
            .map_or_else(|_| json!(page.limit), |n| json!(n));
    }
    Ok((body, value("key")?))
}

/// The answer's envelope as the API would send it, with its status and code.
fn envelope(
    request_id: &RequestId,
    result: &Result<Arc<Page>, ApiError>,
) -> Result<(u16, u32, Value), PageError> {
    Ok(match result {
        Ok(page) => {
            let data: Value =
                serde_json::from_str(page.json()?.get()).map_err(ApiError::internal)?;
            let envelope = json!({"request_id": request_id.as_str(), "code": 0,
                                  "message": "ok", "data": data});
            (200, 0, envelope)
        }
        Err(error) => {
            let envelope = json!({"request_id": request_id.as_str(), "code": error.code.as_u32(),
                                  "message": error.message, "data": null});
            (
                status_for(error.code).as_u16(),
                error.code.as_u32(),
                envelope,
            )
        }
    })
}

/// The answer as shown: at most [`SHOWN_BYTES`] of it (on a character's boundary), and
/// whether it was cut.
fn shown(mut text: String) -> (String, bool) {
    let cut = text.len() > SHOWN_BYTES;
    if cut {
        let mut end = SHOWN_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    (text, cut)
}
