//! Quote imports (administrators): upload a workbook or CSV and watch it being read,
//! validated and recalculated; see every bad row of a refused file, or what an accepted
//! one changed with links to the affected index pages; the history of imports.
//!
//! The upload's answer is streamed: the page's top goes out at once, each stage of the
//! import as it happens, the outcome last. So progress needs no script, and an import
//! carries on to the end even if the browser goes away.

use std::convert::Infallible;

use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::imports::{ImportOutcome, ImportRecord, RowError, Source};
use iq_actors::ApiError;
use tracing::Instrument;

use super::{Admin, Staff};
use crate::http::upload;
use crate::routes::AppState;
use crate::site::chrome::Chrome;
use crate::site::form_token::{self, FIELD};
use crate::site::format::{long_date, parse_wire};
use crate::site::respond::{page_builder, render, Caching, PageError, PageResult};

/// Imports listed on the page.
const LISTED: i64 = 100;

pub struct ImportLine {
    pub id: String,
    pub when: String,
    pub who: String,
    pub file_name: String,
    pub rows: i32,
    pub result: String,
    pub errors: i32,
    pub message: String,
}

impl From<ImportRecord> for ImportLine {
    fn from(r: ImportRecord) -> Self {
        ImportLine {
            id: r.id,
            when: r.finished_at.format("%-d %b %Y %H:%M:%S UTC").to_string(),
            who: r.username.unwrap_or_else(|| format!("({})", r.source)),
            file_name: r.file_name,
            rows: r.rows,
            result: r.result,
            errors: r.errors,
            message: r.message,
        }
    }
}

#[derive(Template)]
#[template(path = "admin/imports.html")]
struct ImportsPage {
    chrome: Chrome,
    imports: Vec<ImportLine>,
    max_mb: usize,
}

/// `GET /admin/imports`: the upload form and the history.
pub async fn list(req: HttpRequest, staff: Staff<Admin>, state: web::Data<AppState>) -> PageResult {
    let imports = state.importer.list(LISTED).await?;
    let page = ImportsPage {
        chrome: Chrome::new(&req, &state, Some(&staff.account), "admin"),
        imports: imports.into_iter().map(ImportLine::from).collect(),
        max_mb: state.import_max_bytes / (1024 * 1024),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// Where the running page's stages and outcome go.
const PROGRESS: &str = "<!--progress-->";
const OUTCOME: &str = "<!--outcome-->";

#[derive(Template)]
#[template(path = "admin/import_run.html")]
struct RunPage {
    chrome: Chrome,
    file_name: String,
    progress: &'static str,
    outcome: &'static str,
}

#[derive(Template)]
#[template(path = "admin/import_stage.html")]
struct Stage<'a> {
    text: &'a str,
}

pub struct Changed {
    pub code: String,
    pub from_long: String,
    pub from_wire: String,
}

#[derive(Template)]
#[template(path = "admin/import_outcome.html")]
struct Outcome {
    accepted: Option<ImportOutcome>,
    changed: Vec<Changed>,
    message: String,
    errors: Vec<RowError>,
    errors_total: usize,
    columns: Vec<String>,
}

impl Outcome {
    fn of(result: Result<ImportOutcome, ApiError>) -> Outcome {
        match result {
            Ok(outcome) => Outcome {
                changed: outcome
                    .recalculated_from
                    .iter()
                    .map(|(code, from)| {
                        let date = parse_wire(from);
                        Changed {
                            code: code.clone(),
                            from_long: date.map(long_date).unwrap_or_default(),
                            from_wire: from.clone(),
                        }
                    })
                    .collect(),
                message: String::new(),
                accepted: Some(outcome),
                errors: Vec::new(),
                errors_total: 0,
                columns: Vec::new(),
            },
            Err(error) => {
                let mut columns: Vec<String> =
                    error.errors.iter().map(|e| e.column.clone()).collect();
                columns.sort();
                columns.dedup();
                Outcome {
                    accepted: None,
                    changed: Vec::new(),
                    message: error.message,
                    errors_total: error.errors_total.max(error.errors.len()),
                    errors: error.errors,
                    columns,
                }
            }
        }
    }
}

/// `POST /admin/imports` (multipart: `csrf`, then `file`): runs the import, streaming
/// its stages and then its outcome into the page.
pub async fn upload(
    req: HttpRequest,
    staff: Staff<Admin>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    let upload = upload::read(&req, payload, "file", &[FIELD], state.import_max_bytes).await?;
    let verified = form_token::binding(&req).is_some_and(|binding| {
        upload
            .field(FIELD)
            .is_some_and(|token| state.site.forms.verify(&binding, token))
    });
    if !verified {
        return Err(PageError::forbidden(
            "This form has expired or did not come from this site. Reload the page and try again.",
        ));
    }
    let page = RunPage {
        chrome: Chrome::new(&req, &state, Some(&staff.account), "admin"),
        file_name: upload.file_name.clone(),
        progress: PROGRESS,
        outcome: OUTCOME,
    }
    .render()
    .map_err(|e| ApiError::internal(format_args!("template: {e}")))?;
    let (top, rest) = page
        .split_once(PROGRESS)
        .ok_or_else(|| ApiError::internal("the import page has no progress mark"))?;
    let (middle, bottom) = rest
        .split_once(OUTCOME)
        .ok_or_else(|| ApiError::internal("the import page has no outcome mark"))?;
    let (middle, bottom) = (middle.to_owned(), bottom.to_owned());

    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let _ = sender.send(Bytes::from(top.to_owned()));
    let importer = state.importer.clone();
    let account = staff.account.clone();
    let task = async move {
        let progress = |stage: &str| {
            let line = Stage { text: stage }.render().unwrap_or_default();
            let _ = sender.send(Bytes::from(line));
        };
        let result = importer
            .import(
                Some(&account),
                Source::Http,
                &upload.file_name,
                upload.bytes,
                &progress,
            )
            .await;
        let outcome = Outcome::of(result).render().unwrap_or_else(|e| {
            tracing::error!(error = %e, "the import outcome could not be rendered");
            "<p class=\"problem\">The outcome could not be shown; see the history.</p>".into()
        });
        let _ = sender.send(Bytes::from(middle));
        let _ = sender.send(Bytes::from(outcome));
        let _ = sender.send(Bytes::from(bottom));
    };
    // The import runs to its end whether or not the browser stays.
    actix_web::rt::spawn(task.instrument(tracing::Span::current()));
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|chunk| (Ok::<_, Infallible>(chunk), receiver))
    });
    let mut response = page_builder(StatusCode::OK, Caching::Private).streaming(body);
    response
        .extensions_mut()
        .insert(crate::http::envelope::BusinessCode(0));
    Ok(response)
}
