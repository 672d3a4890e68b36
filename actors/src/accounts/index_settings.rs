//! Index settings a super administrator may change (D7): display name, sort order and
//! visibility (the back-office public level), and the facts of D20 (description, unit,
//! currency, what a price includes, source, publication time, methodology version),
//! through the [`IndexSettings`] service.
//!
//! It owns these columns of the `indexes` table and nothing else: it never adds or
//! removes an index, and never touches quotes or daily rows. Every change goes through
//! [`ChangeBus::write`] with `Change::Data`, so every instance drops its index registry
//! and cached pages.

use deadpool_postgres::Pool;
use serde::{Deserialize, Serialize};

use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::changes::{Change, ChangeBus};
use crate::db::Traced;
use crate::safe_text::text_problem;
use crate::{ApiError, ErrorCode};

/// The index settings as the back office reads and changes them, held in the service's
/// state.
#[derive(Clone)]
pub struct IndexSettings {
    pool: Pool,
    bus: ChangeBus,
}

impl IndexSettings {
    pub fn new(pool: Pool, bus: ChangeBus) -> Self {
        IndexSettings { pool, bus }
    }

    /// Every index with its settings, private ones included, in display order.
    pub async fn list(&self) -> Result<Vec<IndexView>, ApiError> {
        let client = self.pool.get().await?;
        list(&**client).await
    }

    /// `PATCH /api/v1/admin/indexes/{index_code}`: the fields sent, changed.
    pub async fn patch(
        &self,
        by: &Author,
        index_code: &str,
        patch: IndexPatch,
    ) -> Result<IndexView, ApiError> {
        self.bus
            .write(&self.pool, Change::Data, async |tx| {
                let before = list(tx)
                    .await?
                    .into_iter()
                    .find(|i| i.index_code == index_code);
                let after = self::patch(tx, index_code, patch).await?;
                let mut entry =
                    Entry::new(Action::IndexChanged, Target::new(Kind::Index, index_code));
                if let Some(before) = &before {
                    entry = entry.before(before);
                }
                by.record(tx, entry.after(&after)).await?;
                Ok(after)
            })
            .await
    }

    /// Moves an index one place up or down in the display order; the record holds the
    /// order before and after.
    pub async fn shift(&self, by: &Author, index_code: &str, up: bool) -> Result<(), ApiError> {
        let order = async |tx: &tokio_postgres::Transaction<'_>| -> Result<_, ApiError> {
            let codes: Vec<String> = list(tx).await?.into_iter().map(|i| i.index_code).collect();
            Ok(serde_json::json!({ "order": codes }))
        };
        self.bus
            .write(&self.pool, Change::Data, async |tx| {
                let before = order(tx).await?;
                shift(tx, index_code, up).await?;
                let after = order(tx).await?;
                if before != after {
                    let entry =
                        Entry::new(Action::IndexMoved, Target::new(Kind::Index, index_code));
                    by.record(tx, entry.before(&before).after(&after)).await?;
                }
                Ok(())
            })
            .await
    }
}

/// `PATCH /api/v1/admin/indexes/{index_code}`: the fields sent are changed, absent ones
/// left alone. Texts are trimmed, must not be blank, and may not start with `=`, `+` or
/// `@` or hold a control character; a bad field is 400 / 40001 naming it.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct IndexPatch {
    /// `aggregate`, `index_only`, `member` or `private`
    pub visibility: Option<String>,
    pub sort_no: Option<i32>,
    /// 1 to 200 characters
    pub index_name: Option<String>,
    /// what the index measures, 1 to 1,000 characters
    pub description: Option<String>,
    /// unit of the index points, 1 to 50 characters
    pub unit: Option<String>,
    /// ISO 4217 code of the index's prices: three capital letters
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Z]{3}$", example = "USD"))]
    pub currency: Option<String>,
    /// what a price includes, 1 to 500 characters
    pub price_basis: Option<String>,
    /// where prices come from, 1 to 500 characters
    pub source: Option<String>,
    /// `HH:MM` in the service time zone: when a trading day's values are published
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "18:00")
    )]
    pub publish_time: Option<String>,
    /// the methodology's version, 1 to 50 characters
    pub methodology_version: Option<String>,
}

/// One index's settings and facts (D20), as the back office shows them.
// Its schema is named `IndexSettings` in the document, as it always was (the service of
// that name here has no schema).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = IndexSettings))]
pub struct IndexView {
    pub index_code: String,
    pub index_name: String,
    pub sort_no: i32,
    /// `aggregate`, `index_only`, `member` or `private`
    pub visibility: String,
    pub description: String,
    pub unit: String,
    /// ISO 4217 code of the index's prices; null for an index of points only (the
    /// composite)
    pub currency: Option<String>,
    pub price_basis: String,
    pub source: String,
    /// `HH:MM` in the service time zone
    pub publish_time: String,
    pub methodology_version: String,
}

const VISIBILITIES: [&str; 4] = ["aggregate", "index_only", "member", "private"];

/// The columns a view reads, in [`from_row`]'s names (a macro, so statements can be
/// whole literals).
macro_rules! view_columns {
    () => {
        "index_code, index_name, sort_no, visibility, description, unit, currency, \
         price_basis, source, publish_time, methodology_version"
    };
}

pub async fn patch(
    client: &impl Traced,
    index_code: &str,
    patch: IndexPatch,
) -> Result<IndexView, ApiError> {
    if let Some(v) = &patch.visibility {
        if !VISIBILITIES.contains(&v.as_str()) {
            return Err(ApiError::invalid(
                "field 'visibility' must be one of aggregate, index_only, member, private",
            ));
        }
    }
    let texts = [
        ("index_name", &patch.index_name, 200),
        ("description", &patch.description, 1000),
        ("unit", &patch.unit, 50),
        ("price_basis", &patch.price_basis, 500),
        ("source", &patch.source, 500),
        ("methodology_version", &patch.methodology_version, 50),
    ];
    for (field, value, longest) in texts {
        if let Some(value) = value {
            check_text(field, value, longest)?;
        }
    }
    if let Some(currency) = &patch.currency {
        if !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())) {
            return Err(ApiError::invalid(
                "field 'currency' must be three capital letters, an ISO 4217 code such as USD",
            ));
        }
    }
    if let Some(time) = &patch.publish_time {
        if !is_hh_mm(time) {
            return Err(ApiError::invalid(
                "field 'publish_time' must be a time of day HH:MM, 00:00 to 23:59, in the \
                 service time zone",
            ));
        }
    }
    let trimmed = |value: &Option<String>| value.as_deref().map(str::trim).map(str::to_owned);
    let row = client
        .query_opt_named(
            "index_settings.update",
            concat!(
                "UPDATE indexes SET visibility = COALESCE($2, visibility), \
                 sort_no = COALESCE($3, sort_no), index_name = COALESCE($4, index_name), \
                 description = COALESCE($5, description), unit = COALESCE($6, unit), \
                 currency = COALESCE($7, currency), \
                 price_basis = COALESCE($8, price_basis), source = COALESCE($9, source), \
                 publish_time = COALESCE($10, publish_time), \
                 methodology_version = COALESCE($11, methodology_version), \
                 updated_at = now() WHERE index_code = $1 RETURNING ",
                view_columns!()
            ),
            &[
                &index_code,
                &patch.visibility,
                &patch.sort_no,
                &trimmed(&patch.index_name),
                &trimmed(&patch.description),
                &trimmed(&patch.unit),
                &patch.currency,
                &trimmed(&patch.price_basis),
                &trimmed(&patch.source),
                &patch.publish_time,
                &trimmed(&patch.methodology_version),
            ],
        )
        .await?
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("no index named '{index_code}'"),
            )
        })?;
    from_row(&row)
}

/// A text an administrator writes, served as stored (into CSV answers and DataFrames
/// too): 1 to `longest` characters once trimmed, and nothing a spreadsheet would run or
/// a terminal would obey ([`text_problem`]).
fn check_text(field: &str, value: &str, longest: usize) -> Result<(), ApiError> {
    let trimmed = value.trim();
    if trimmed.is_empty() || trimmed.chars().count() > longest {
        return Err(ApiError::invalid(format!(
            "field '{field}' must be 1 to {longest} characters"
        )));
    }
    match text_problem(trimmed) {
        Some(problem) => Err(ApiError::invalid(format!("field '{field}' {problem}"))),
        None => Ok(()),
    }
}

/// `HH:MM` on a 24-hour clock, two digits each.
fn is_hh_mm(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |a: u8, b: u8| -> Option<u8> {
        (a.is_ascii_digit() && b.is_ascii_digit()).then(|| (a - b'0') * 10 + (b - b'0'))
    };
    match bytes {
        [h1, h2, b':', m1, m2] => {
            matches!((digits(*h1, *h2), digits(*m1, *m2)), (Some(h), Some(m)) if h < 24 && m < 60)
        }
        _ => false,
    }
}

fn from_row(row: &tokio_postgres::Row) -> Result<IndexView, ApiError> {
    Ok(IndexView {
        index_code: row.try_get("index_code")?,
        index_name: row.try_get("index_name")?,
        sort_no: row.try_get("sort_no")?,
        visibility: row.try_get("visibility")?,
        description: row.try_get("description")?,
        unit: row.try_get("unit")?,
        currency: row.try_get("currency")?,
        price_basis: row.try_get("price_basis")?,
        source: row.try_get("source")?,
        publish_time: row.try_get("publish_time")?,
        methodology_version: row.try_get("methodology_version")?,
    })
}

/// Every index (private ones included) in display order.
pub async fn list(client: &impl Traced) -> Result<Vec<IndexView>, ApiError> {
    let rows = client
        .query_named(
            "index_settings.list",
            concat!(
                "SELECT ",
                view_columns!(),
                " FROM indexes ORDER BY sort_no, index_code"
            ),
            &[],
        )
        .await?;
    rows.iter().map(from_row).collect()
}

/// Moves `index_code` one place up (earlier) or down in the display order: the order
/// is renumbered 10, 20, 30... with the two neighbours swapped, so indexes that shared
/// a number get distinct ones. Moving past either end changes nothing.
pub async fn shift(client: &impl Traced, index_code: &str, up: bool) -> Result<(), ApiError> {
    let mut order: Vec<String> = list(client)
        .await?
        .into_iter()
        .map(|i| i.index_code)
        .collect();
    let at = order
        .iter()
        .position(|c| c == index_code)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no index '{index_code}'")))?;
    let other = if up { at.checked_sub(1) } else { Some(at + 1) };
    match other {
        Some(other) if other < order.len() => order.swap(at, other),
        _ => return Ok(()),
    }
    let numbers: Vec<i32> = (1..=order.len() as i32).map(|n| n * 10).collect();
    client
        .execute_named(
            "index_settings.renumber",
            "UPDATE indexes i SET sort_no = o.sort_no, updated_at = now() \
             FROM unnest($1::text[], $2::int[]) AS o(index_code, sort_no) \
             WHERE i.index_code = o.index_code AND i.sort_no <> o.sort_no",
            &[&order, &numbers],
        )
        .await?;
    Ok(())
}
