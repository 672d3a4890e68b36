//! Renders database rows as the `data` object of a query response (spec 4.1), with the
//! wire formats of spec part 1: fixed-scale decimal strings, `YYYYMMDD` dates, `null`
//! for absent values.

use std::sync::OnceLock;

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio_postgres::Row;

use crate::catalogue::{FieldDef, ValueKind};
use crate::decimal::to_fixed;
use crate::gzip::Deflated;
use crate::wire_date::WireDate;
use crate::ApiError;

/// A rendered page: the JSON of `data`, ready to be embedded in the envelope. Kept
/// serialised so a cache hit costs no re-encoding, and compressed at most once, by the
/// first answer that asks for gzip ([`Page::deflated`]).
#[derive(Debug)]
pub struct Page {
    pub data: Box<RawValue>,
    pub returned: usize,
    deflated: OnceLock<Deflated>,
}

#[derive(Serialize)]
struct PageData<'a> {
    fields: Vec<&'static str>,
    items: &'a [Vec<Value>],
    limit: u32,
    offset: u64,
    returned: usize,
    has_more: bool,
}

impl Page {
    /// `rows` hold every field of `all` (the dataset's, in catalogue order: what the
    /// statement selects); the page shows `fields`, in their order. `rows` may hold
    /// one row more than `limit`: its presence means `has_more`.
    pub fn render(
        all: &'static [FieldDef],
        fields: &[&'static FieldDef],
        rows: &[Row],
        limit: u32,
        offset: u64,
    ) -> Result<Page, ApiError> {
        let columns = fields
            .iter()
            .map(|f| {
                all.iter().position(|d| std::ptr::eq(d, *f)).ok_or_else(|| {
                    ApiError::internal(format_args!("field {} not in its dataset", f.name))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let shown = rows.len().min(limit as usize);
        let items = rows[..shown]
            .iter()
            .map(|row| {
                columns
                    .iter()
                    .zip(fields)
                    .map(|(&i, f)| cell(row, i, f.kind))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_items(fields, &items, limit, offset, rows.len() > shown)
    }

    pub fn empty(fields: &[&'static FieldDef], limit: u32, offset: u64) -> Result<Page, ApiError> {
        Self::from_items(fields, &[], limit, offset, false)
    }

    fn from_items(
        fields: &[&'static FieldDef],
        items: &[Vec<Value>],
        limit: u32,
        offset: u64,
        has_more: bool,
    ) -> Result<Page, ApiError> {
        let data = PageData {
            fields: fields.iter().map(|f| f.name).collect(),
            items,
            limit,
            offset,
            returned: items.len(),
            has_more,
        };
        Ok(Page {
            data: serde_json::value::to_raw_value(&data).map_err(ApiError::internal)?,
            returned: items.len(),
            deflated: OnceLock::new(),
        })
    }

    /// `data` compressed, for answers spliced around it ([`crate::gzip::splice`]); the
    /// first call compresses, every later one (a cache hit) reuses it.
    pub fn deflated(&self) -> &Deflated {
        self.deflated
            .get_or_init(|| Deflated::piece(self.data.get().as_bytes()))
    }
}

fn cell(row: &Row, i: usize, kind: ValueKind) -> Result<Value, ApiError> {
    Ok(match kind {
        ValueKind::Text => row
            .try_get::<_, Option<String>>(i)?
            .map(Value::String)
            .unwrap_or(Value::Null),
        ValueKind::Integer => row
            .try_get::<_, Option<i32>>(i)?
            .map(Value::from)
            .unwrap_or(Value::Null),
        ValueKind::Boolean => row
            .try_get::<_, Option<bool>>(i)?
            .map(Value::Bool)
            .unwrap_or(Value::Null),
        ValueKind::Date => row
            .try_get::<_, Option<NaiveDate>>(i)?
            .map(|d| Value::String(WireDate(d).to_string()))
            .unwrap_or(Value::Null),
        ValueKind::Decimal { scale } => row
            .try_get::<_, Option<Decimal>>(i)?
            .map(|d| Value::String(to_fixed(d, scale)))
            .unwrap_or(Value::Null),
        ValueKind::Timestamp => row
            .try_get::<_, Option<DateTime<Utc>>>(i)?
            .map(|t| Value::String(t.to_rfc3339_opts(SecondsFormat::Micros, true)))
            .unwrap_or(Value::Null),
    })
}
