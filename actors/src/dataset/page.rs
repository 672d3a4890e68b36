//! Renders database rows as the `data` object of a query response (spec 4.1), with the
//! wire formats of spec part 1: fixed-scale decimal strings, `YYYYMMDD` dates, `null`
//! for absent values; or, for a request that asks for columns (D29), as those columns.

use std::sync::OnceLock;

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::ser::{self, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio_postgres::types::FromSql;
use tokio_postgres::Row;

use super::cell_text::{fixed, wire_date, Numeric};
use super::columnar::{self, Columnar, Encoded};
use crate::catalogue::{FieldDef, ValueKind, Wire};
use crate::gzip::Deflated;
use crate::ApiError;

/// A rendered page, in the one form its request asked for: the JSON of `data`, or its
/// columns as an Arrow stream or a Parquet file. A page is cached under its form, so a
/// page loaded for columns never renders JSON nobody reads (rendering it took an Arrow
/// miss from 4.3 to 7.5 ms of service CPU in the bulk-pull bench), and a cache hit costs
/// no re-encoding.
#[derive(Debug)]
pub struct Page {
    /// Where the page is in its walk: `data`'s `limit`, `offset`, `returned` and
    /// `has_more`, for answers that carry them in headers (D18, D29).
    pub place: Place,
    body: Body,
}

#[derive(Debug)]
enum Body {
    /// Kept serialised, and compressed at most once, by the first answer that asks for
    /// gzip ([`Page::deflated`]).
    Json {
        data: Box<RawValue>,
        deflated: OnceLock<Deflated>,
    },
    Columnar(Columnar, Encoded),
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
    /// statement selects); the page shows `fields`, in their order, as JSON or, with
    /// `columnar`, as columns in that format (D29). `rows` may hold one row more than
    /// `limit`: its presence means `has_more`.
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
        let place = Place {
            limit,
            offset,
            returned: shown,
            has_more: rows.len() > shown,
        };
        Self::of(wire, fields, items, place, columnar)
    }

    /// A page of no rows.
    pub fn empty(
        wire: Wire,
        fields: &[&'static FieldDef],
        limit: u32,
        offset: u64,
        columnar: Option<Columnar>,
    ) -> Result<Page, ApiError> {
        let columns: Vec<_> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.kind))
            .collect();
        let items = Items {
            rows: &[],
            columns: &columns,
        };
        let place = Place {
            limit,
            offset,
            returned: 0,
            has_more: false,
        };
        Self::of(wire, fields, items, place, columnar)
    }

    fn of(
        wire: Wire,
        fields: &[&'static FieldDef],
        items: Items<'_>,
        place: Place,
        columnar: Option<Columnar>,
    ) -> Result<Page, ApiError> {
        let body = match columnar {
            Some(format) => Body::Columnar(
                format,
                columnar::encode_rows(format, fields, items.columns, items.rows)?,
            ),
            None => Body::Json {
                data: Self::json_of(wire, fields, items, place)?,
                deflated: OnceLock::new(),
            },
        };
        Ok(Page { place, body })
    }

    fn json_of(
        wire: Wire,
        fields: &[&'static FieldDef],
        items: Items<'_>,
        place: Place,
    ) -> Result<Box<RawValue>, ApiError> {
        let names = fields.iter().map(|f| f.name).collect();
        let Place {
            limit,
            offset,
            returned,
            has_more,
        } = place;
        match wire {
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
        }
        .map_err(ApiError::internal)
    }

    /// The page's `data` as JSON; an error for a page loaded as columns (a request
    /// reads the page it asked for, so that would be our own mistake).
    pub fn json(&self) -> Result<&RawValue, ApiError> {
        match &self.body {
            Body::Json { data, .. } => Ok(data),
            Body::Columnar(..) => Err(self.misread(None)),
        }
    }

    /// `data` compressed, for answers spliced around it ([`crate::gzip::splice`]); the
    /// first call compresses, every later one (a cache hit) reuses it.
    pub fn deflated(&self) -> Result<&Deflated, ApiError> {
        match &self.body {
            Body::Json { data, deflated } => {
                Ok(deflated.get_or_init(|| Deflated::piece(data.get().as_bytes())))
            }
            Body::Columnar(..) => Err(self.misread(None)),
        }
    }

    /// The page's rows in `format` (D29), encoded when the page was loaded.
    pub fn columnar(&self, format: Columnar) -> Result<&Encoded, ApiError> {
        match &self.body {
            Body::Columnar(kept, encoded) if *kept == format => Ok(encoded),
            _ => Err(self.misread(Some(format))),
        }
    }

    /// The bytes the page keeps, before any gzip: what the page cache weighs.
    pub fn size(&self) -> usize {
        match &self.body {
            Body::Json { data, .. } => data.get().len(),
            Body::Columnar(_, encoded) => encoded.body.len(),
        }
    }

    /// A page read in a form it was not loaded in: our own mistake, never the caller's.
    fn misread(&self, asked: Option<Columnar>) -> ApiError {
        let name = |form: Option<Columnar>| form.map_or("JSON", Columnar::media_type);
        let kept = match &self.body {
            Body::Json { .. } => None,
            Body::Columnar(format, _) => Some(*format),
        };
        ApiError::internal(format_args!(
            "a page loaded as {} was read as {}",
            name(kept),
            name(asked)
        ))
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
