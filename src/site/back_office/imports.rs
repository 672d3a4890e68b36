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
use iq_actors::imports::{ImportOutcome, ImportRecord, IndexChanges, RowError, Source};
use iq_actors::ApiError;
use tracing::Instrument;

use super::{Admin, Staff};
use crate::http::{author, csv_answer, upload};
use crate::site::chrome::Chrome;
use crate::site::form_token::{self, FIELD};
use crate::site::format::{long_date, parse_wire, second};
use crate::site::path_part::PathPart;
use crate::site::respond::{page_builder, render, Caching, PageError, PageResult};
use crate::state::AppState;

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
            when: second(r.finished_at),
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
        chrome: staff.chrome(&req, &state),
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
    pub counts: Option<IndexChanges>,
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
                            counts: outcome
                                .changes
                                .iter()
                                .find(|c| &c.index_code == code)
                                .cloned(),
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
                let total = error.errors_total.max(error.errors.len());
                // The API's message points at its JSON field; the page says it plainly.
                let message = match total {
                    0 => error.message,
                    1 => "The file was refused: 1 problem, listed below.".to_owned(),
                    n => format!("The file was refused: {n} problems, listed below."),
                };
                Outcome {
                    accepted: None,
                    changed: Vec::new(),
                    message,
                    errors_total: error.errors_total.max(error.errors.len()),
                    errors: error.errors,
                    columns,
                }
            }
        }
    }
}

/// The form's optional reason for the import (D26).
const NOTE: &str = "note";

/// `POST /admin/imports` (multipart: `csrf`, `note`, then `file`): runs the import, streaming
/// its stages and then its outcome into the page.
pub async fn upload(
    req: HttpRequest,
    staff: Staff<Admin>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    let upload = upload::read(
        &req,
        payload,
        "file",
        &[FIELD, NOTE],
        state.import_max_bytes,
    )
    .await?;
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
    let [top, middle, bottom] = run_page(staff.chrome(&req, &state), &upload.file_name)?;
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let _ = sender.send(Bytes::from(top));
    let importer = state.importer.clone();
    // Made here, in the request: the spawned task does not carry the request's id.
    let by = author(&staff.account);
    let note = upload.field(NOTE).map(str::to_owned);
    let task = async move {
        let progress = |stage: &str| {
            let line = Stage { text: stage }.render().unwrap_or_default();
            let _ = sender.send(Bytes::from(line));
        };
        let result = importer
            .import(
                &by,
                Source::Http,
                &upload.file_name,
                (upload.bytes, note.as_deref()),
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

/// The running import's page in three parts: up to where its stages go, from there to
/// where its outcome goes, and the rest.
fn run_page(chrome: Chrome, file_name: &str) -> Result<[String; 3], PageError> {
    let page = RunPage {
        chrome,
        file_name: file_name.to_owned(),
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
    Ok([top.to_owned(), middle.to_owned(), bottom.to_owned()])
}

#[derive(serde::Deserialize)]
pub struct DetailQuery {
    column: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/import.html")]
struct DetailPage {
    chrome: Chrome,
    line: ImportLine,
    changes: Vec<IndexChanges>,
    errors: Vec<RowError>,
    errors_listed: usize,
    columns: Vec<String>,
    column: String,
    /// Whether the reader may open the audit trail (super administrators).
    super_admin: bool,
}

/// `GET /admin/imports/{id}?column=`: one import, what it changed per index, and a
/// refused file's problems, filtered by column on the server.
pub async fn show(
    req: HttpRequest,
    staff: Staff<Admin>,
    id: PathPart,
    query: web::Query<DetailQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let detail = state.importer.detail(&id).await?;
    let errors = detail.row_errors.unwrap_or_default();
    let mut columns: Vec<String> = errors.iter().map(|e| e.column.clone()).collect();
    columns.sort();
    columns.dedup();
    let column = query
        .column
        .clone()
        .filter(|c| columns.contains(c))
        .unwrap_or_default();
    let errors_listed = errors.len();
    let changes = detail.record.changes.clone().unwrap_or_default();
    let page = DetailPage {
        chrome: staff.chrome(&req, &state),
        line: ImportLine::from(detail.record),
        changes,
        errors: errors
            .into_iter()
            .filter(|e| column.is_empty() || e.column == column)
            .collect(),
        errors_listed,
        columns,
        column,
        super_admin: staff.account.role >= iq_actors::caller::Role::SuperAdmin,
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `GET /admin/imports/{id}/errors.csv`: a refused file's problems as CSV (row,
/// column, problem), safe to open in a spreadsheet: a cell that would start a formula
/// is prefixed with an apostrophe.
pub async fn errors_csv(_: Staff<Admin>, id: PathPart, state: web::Data<AppState>) -> PageResult {
    let detail = state.importer.detail(&id).await?;
    let mut csv = String::from("row,column,problem\r\n");
    for e in detail.row_errors.unwrap_or_default() {
        csv.push_str(&format!(
            "{},{},{}\r\n",
            e.row,
            csv_cell(&e.column),
            csv_cell(&e.reason)
        ));
    }
    Ok(actix_web::HttpResponse::Ok()
        .insert_header(("content-type", "text/csv; charset=utf-8"))
        .insert_header((
            "content-disposition",
            format!(
                "attachment; filename=\"import-{}-problems.csv\"",
                detail.record.id
            ),
        ))
        .insert_header(("cache-control", "private, no-store"))
        .body(csv))
}

/// One CSV cell: quoted when it must be (RFC 4180), and never a formula.
fn csv_cell(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        csv_answer::quote(&format!("'{text}")).into_owned()
    } else {
        csv_answer::quote(text).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::csv_cell;

    #[test]
    fn cells_are_quoted_when_needed_and_never_formulas() {
        assert_eq!(csv_cell("weight"), "weight");
        assert_eq!(csv_cell("a, b"), "\"a, b\"");
        assert_eq!(csv_cell("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_cell("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_cell("-1,5"), "\"'-1,5\"");
    }
}
