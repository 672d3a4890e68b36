//! Renders database rows as the `data` object of a query response (spec 4.1), with the
//! wire formats of spec part 1: fixed-scale decimal strings, `YYYYMMDD` dates, `null`
//! for absent values.

use std::sync::OnceLock;

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::ser::{self, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio_postgres::types::FromSql;
use tokio_postgres::Row;

use super::cell_text::{fixed, wire_date, Numeric};
use super::columnar::{self, Columnar, Encoded, Encodings};
use crate::catalogue::{FieldDef, ValueKind, Wire};
use crate::gzip::Deflated;
use crate::ApiError;

/// A rendered page: the JSON of `data`, ready to be embedded in the envelope. Kept
/// serialised so a cache hit costs no re-encoding, and compressed at most once, by the
/// first answer that asks for gzip ([`Page::deflated`]). Its columns (D29) are encoded
/// from that JSON when first asked for, and kept too ([`Page::columnar`]).
#[derive(Debug)]
pub struct Page {
    pub data: Box<RawValue>,
    /// Where the page is in its walk: `data`'s `limit`, `offset`, `returned` and
    /// `has_more`, for answers that carry them in headers (D18, D29).
    pub place: Place,
    /// The fields shown, in order: what the columns of [`Page::columnar`] are.
    fields: Box<[&'static FieldDef]>,
    deflated: OnceLock<Deflated>,
    encodings: Encodings,
}

/// A page's place in its walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub limit: u32,
    pub offset: u64,
    pub returned: usize,
    pub has_more: bool,
}

#[derive(Serialize)]
struct PageData<'a> {
    fields: Vec<&'static str>,
    items: Items<'a>,
    limit: u32,
    offset: u64,
    returned: usize,
    has_more: bool,
}

/// A page on Tushare's wire (D24): what its SDK reads, and `has_more`.
#[derive(Serialize)]
struct TusharePageData<'a> {
    fields: Vec<&'static str>,
    items: Items<'a>,
    has_more: bool,
}

impl Page {
    /// `rows` hold every field of `all` (the dataset's, in catalogue order: what the
    /// statement selects); the page shows `fields`, in their order. `rows` may hold
    /// one row more than `limit`: its presence means `has_more`. With `columnar`, the
    /// page's columns in that format are encoded from the rows too (D29), for the
    /// request that loads the page asks for them.
    pub fn render(
        (all, wire): (&'static [FieldDef], Wire),
        fields: &[&'static FieldDef],
        rows: &[Row],
        (limit, offset): (u32, u64),
        columnar: Option<Columnar>,
    ) -> Result<Page, ApiError> {
        let columns = fields
            .iter()
            .map(|f| {
                let i = all
                    .iter()
                    .position(|d| std::ptr::eq(d, *f))
                    .ok_or_else(|| {
                        ApiError::internal(format_args!("field {} not in its dataset", f.name))
                    })?;
                Ok((i, f.kind))
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        let shown = rows.len().min(limit as usize);
        let items = Items {
            rows: &rows[..shown],
            columns: &columns,
        };
        let page = Self::from_items(wire, fields, items, limit, offset, rows.len() > shown)?;
        if let Some(format) = columnar {
            let body = columnar::encode_rows(format, fields, &columns, &rows[..shown])?;
            page.encodings.keep(format, body);
        }
        Ok(page)
    }

    pub fn empty(
        wire: Wire,
        fields: &[&'static FieldDef],
        limit: u32,
        offset: u64,
    ) -> Result<Page, ApiError> {
        let items = Items {
            rows: &[],
            columns: &[],
        };
        Self::from_items(wire, fields, items, limit, offset, false)
    }

    fn from_items(
        wire: Wire,
        fields: &[&'static FieldDef],
        items: Items<'_>,
        limit: u32,
        offset: u64,
        has_more: bool,
    ) -> Result<Page, ApiError> {
        let returned = items.rows.len();
        let names = fields.iter().map(|f| f.name).collect();
        let data = match wire {
            Wire::Native => serde_json::value::to_raw_value(&PageData {
                fields: names,
                items,
                limit,
                offset,
                returned,
                has_more,
            }),
            Wire::Tushare => serde_json::value::to_raw_value(&TusharePageData {
                fields: names,
                items,
                has_more,
            }),
        };
        Ok(Page {
            data: data.map_err(ApiError::internal)?,
            place: Place {
                limit,
                offset,
                returned,
                has_more,
            },
            fields: fields.into(),
            deflated: OnceLock::new(),
            encodings: Encodings::default(),
        })
    }

    /// `data` compressed, for answers spliced around it ([`crate::gzip::splice`]); the
    /// first call compresses, every later one (a cache hit) reuses it.
    pub fn deflated(&self) -> &Deflated {
        self.deflated
            .get_or_init(|| Deflated::piece(self.data.get().as_bytes()))
    }

    /// The page's rows in `format` (D29): the first call encodes, every later one (a
    /// cache hit) reuses it.
    pub fn columnar(&self, format: Columnar) -> Result<&Encoded, ApiError> {
        self.encodings.get(format, &self.fields, self.data.get())
    }
}

/// The rows of a page, each cell serialised straight from the row: no `Value` per
/// cell and no `String` per text cell, which was most of a 5000-row page's cost.
struct Items<'a> {
    rows: &'a [Row],
    /// (column in the row, wire type) of each field shown, in order.
    columns: &'a [(usize, ValueKind)],
}

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.rows.len()))?;
        for row in self.rows {
            seq.serialize_element(&Cells {
                row,
                columns: self.columns,
            })?;
        }
        seq.end()
    }
}

struct Cells<'a> {
    row: &'a Row,
    columns: &'a [(usize, ValueKind)],
}

impl Serialize for Cells<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.columns.len()))?;
        for &(i, kind) in self.columns {
            seq.serialize_element(&Cell {
                row: self.row,
                i,
                kind,
            })?;
        }
        seq.end()
    }
}

/// One cell in its wire format (spec part 1); SQL NULL is `null`.
struct Cell<'a> {
    row: &'a Row,
    i: usize,
    kind: ValueKind,
}

impl Serialize for Cell<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        fn get<'r, T: FromSql<'r>, E: ser::Error>(row: &'r Row, i: usize) -> Result<T, E> {
            row.try_get(i).map_err(E::custom)
        }
        let (row, i) = (self.row, self.i);
        match self.kind {
            ValueKind::Text => match get::<Option<&str>, S::Error>(row, i)? {
                Some(text) => serializer.serialize_str(text),
                None => serializer.serialize_none(),
            },
            ValueKind::Integer => match get::<Option<i32>, S::Error>(row, i)? {
                Some(n) => serializer.serialize_i32(n),
                None => serializer.serialize_none(),
            },
            ValueKind::Boolean => match get::<Option<bool>, S::Error>(row, i)? {
                Some(b) => serializer.serialize_bool(b),
                None => serializer.serialize_none(),
            },
            ValueKind::Date => match get::<Option<NaiveDate>, S::Error>(row, i)? {
                Some(d) => serializer.serialize_str(&wire_date(d)),
                None => serializer.serialize_none(),
            },
            ValueKind::Decimal { scale } => match get::<Option<Numeric>, S::Error>(row, i)? {
                Some(Numeric(d)) => serializer.serialize_str(&fixed(d, scale)),
                None => serializer.serialize_none(),
            },
            ValueKind::Number { scale } => match get::<Option<Numeric>, S::Error>(row, i)? {
                // The digits as they are, unquoted: exact, as a string would be.
                Some(Numeric(d)) => RawValue::from_string(fixed(d, scale).to_string())
                    .map_err(ser::Error::custom)?
                    .serialize(serializer),
                None => serializer.serialize_none(),
            },
            ValueKind::Timestamp => match get::<Option<DateTime<Utc>>, S::Error>(row, i)? {
                Some(t) => {
                    serializer.serialize_str(&t.to_rfc3339_opts(SecondsFormat::Micros, true))
                }
                None => serializer.serialize_none(),
            },
        }
    }
}
