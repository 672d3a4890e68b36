//! A page's rows as columns (D29): an Arrow IPC stream or a Parquet file, one column per
//! field of the page in its order. Decimals are `decimal128` at the field's scale (exact:
//! the wire's digits, never a float), dates `date32`, instants UTC timestamps in
//! microseconds, text UTF-8, integers `int32`, booleans `bool`; every column nullable,
//! absent values null.
//!
//! Encoded once per page and format, and kept with the cached page
//! ([`super::Page::columnar`]): from the database rows when the request that loads the
//! page asks for columns ([`encode_rows`]: no JSON to parse), else from the page's JSON
//! when a cached page is first asked for them ([`Encodings::get`]). Both fill the same
//! column builders with the JSON answer's values: decimals rounded to the field's scale
//! as the JSON's text is. The writers are arrow-rs's; this module only fills their
//! builders, and must never format a value itself.

use std::fmt;
use std::sync::{Arc, OnceLock};

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Int32Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::types::Date32Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit, DECIMAL128_MAX_PRECISION};
use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;
use tokio_postgres::Row;

use super::cell_text::Numeric;
use crate::catalogue::{FieldDef, ValueKind};
use crate::decimal::round_half_away;
use crate::gzip;
use crate::wire_date::WireDate;
use crate::ApiError;

/// The two column formats a query may be answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columnar {
    /// An Arrow IPC stream: `application/vnd.apache.arrow.stream`.
    Arrow,
    /// A Parquet file (Snappy-compressed pages): `application/vnd.apache.parquet`.
    Parquet,
}

impl Columnar {
    pub const ALL: [Columnar; 2] = [Columnar::Arrow, Columnar::Parquet];

    /// The media type of an answer in this format.
    pub fn media_type(self) -> &'static str {
        match self {
            Columnar::Arrow => "application/vnd.apache.arrow.stream",
            Columnar::Parquet => "application/vnd.apache.parquet",
        }
    }
}

/// One page in one format, and its gzip form once an answer has asked for it (D16).
pub struct Encoded {
    pub body: bytes::Bytes,
    gzipped: OnceLock<bytes::Bytes>,
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoded")
            .field("body", &self.body.len())
            .finish()
    }
}

impl Encoded {
    /// The body gzip-compressed: the first call compresses, a cache hit reuses it.
    pub fn gzipped(&self) -> bytes::Bytes {
        self.gzipped
            .get_or_init(|| gzip::whole(&self.body).into())
            .clone()
    }
}

/// Per page, each format's encoding once asked for.
#[derive(Debug, Default)]
pub(super) struct Encodings {
    arrow: OnceLock<Encoded>,
    parquet: OnceLock<Encoded>,
}

impl Encodings {
    /// The page `data` (its JSON) of `fields` in `format`, encoded on the first call.
    pub(super) fn get(
        &self,
        format: Columnar,
        fields: &[&'static FieldDef],
        data: &str,
    ) -> Result<&Encoded, ApiError> {
        if let Some(encoded) = self.slot(format).get() {
            return Ok(encoded);
        }
        let body = encode(format, fields, data)?;
        // Two answers may encode the same page at once; both bodies are the same.
        Ok(self.keep(format, body))
    }

    /// Keeps `body` as the page's encoding in `format` (unless one is kept already).
    pub(super) fn keep(&self, format: Columnar, body: Vec<u8>) -> &Encoded {
        self.slot(format).get_or_init(|| Encoded {
            body: body.into(),
            gzipped: OnceLock::new(),
        })
    }

    fn slot(&self, format: Columnar) -> &OnceLock<Encoded> {
        match format {
            Columnar::Arrow => &self.arrow,
            Columnar::Parquet => &self.parquet,
        }
    }
}

/// The rows of `data` (a page's JSON, `items` holding one cell per field) in `format`.
pub fn encode(
    format: Columnar,
    fields: &[&'static FieldDef],
    data: &str,
) -> Result<Vec<u8>, ApiError> {
    write(format, &batch(fields, data)?)
}

/// `rows` (each holding the page's `fields` at the positions `columns` give) in
/// `format`, as [`encode`] would write the page's JSON of them.
pub fn encode_rows(
    format: Columnar,
    fields: &[&'static FieldDef],
    columns: &[(usize, ValueKind)],
    rows: &[Row],
) -> Result<Vec<u8>, ApiError> {
    let mut builders: Vec<Column> = columns.iter().map(|&(_, kind)| Column::new(kind)).collect();
    for row in rows {
        for (column, &(i, _)) in builders.iter_mut().zip(columns) {
            column.append_from(row, i)?;
        }
    }
    write(format, &record_batch(fields, builders)?)
}

fn write(format: Columnar, batch: &RecordBatch) -> Result<Vec<u8>, ApiError> {
    let failed = |e: &dyn fmt::Display| ApiError::internal(format_args!("a {format:?} page: {e}"));
    let mut out = Vec::with_capacity(batch.get_array_memory_size());
    match format {
        Columnar::Arrow => {
            let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema())
                .map_err(|e| failed(&e))?;
            writer.write(batch).map_err(|e| failed(&e))?;
            writer.finish().map_err(|e| failed(&e))?;
        }
        Columnar::Parquet => {
            let properties = parquet::file::properties::WriterProperties::builder()
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let mut writer =
                parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(properties))
                    .map_err(|e| failed(&e))?;
            writer.write(batch).map_err(|e| failed(&e))?;
            writer.close().map_err(|e| failed(&e))?;
        }
    }
    Ok(out)
}

/// The Arrow type of a field's values.
pub fn data_type(kind: ValueKind) -> DataType {
    match kind {
        ValueKind::Text => DataType::Utf8,
        ValueKind::Date => DataType::Date32,
        ValueKind::Integer => DataType::Int32,
        ValueKind::Boolean => DataType::Boolean,
        ValueKind::Decimal { scale } | ValueKind::Number { scale } => {
            DataType::Decimal128(DECIMAL128_MAX_PRECISION, scale_of(scale))
        }
        ValueKind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
    }
}

/// Catalogue scales are single digits; anything else is our own mistake, kept in range.
fn scale_of(scale: u32) -> i8 {
    i8::try_from(scale).unwrap_or(i8::MAX)
}

fn batch(fields: &[&'static FieldDef], data: &str) -> Result<RecordBatch, ApiError> {
    let mut columns: Vec<Column> = fields.iter().map(|f| Column::new(f.kind)).collect();
    let mut reader = serde_json::Deserializer::from_str(data);
    PageSeed {
        columns: &mut columns,
    }
    .deserialize(&mut reader)
    .and_then(|()| reader.end())
    .map_err(|e| ApiError::internal(format_args!("a page's data as columns: {e}")))?;
    record_batch(fields, columns)
}

fn record_batch(
    fields: &[&'static FieldDef],
    columns: Vec<Column>,
) -> Result<RecordBatch, ApiError> {
    let schema = Schema::new(
        fields
            .iter()
            .map(|f| Field::new(f.name, data_type(f.kind), true))
            .collect::<Vec<_>>(),
    );
    let arrays = columns.into_iter().map(Column::finish).collect();
    RecordBatch::try_new(Arc::new(schema), arrays)
        .map_err(|e| ApiError::internal(format_args!("a page's columns: {e}")))
}

/// One field's values as they are read, by wire type.
enum Column {
    Text(StringBuilder),
    Date(Date32Builder),
    Integer(Int32Builder),
    Boolean(BooleanBuilder),
    Decimal(Decimal128Builder, u32),
    Timestamp(TimestampMicrosecondBuilder),
}

impl Column {
    fn new(kind: ValueKind) -> Column {
        match kind {
            ValueKind::Text => Column::Text(StringBuilder::new()),
            ValueKind::Date => Column::Date(Date32Builder::new()),
            ValueKind::Integer => Column::Integer(Int32Builder::new()),
            ValueKind::Boolean => Column::Boolean(BooleanBuilder::new()),
            ValueKind::Decimal { scale } | ValueKind::Number { scale } => Column::Decimal(
                Decimal128Builder::new().with_data_type(data_type(kind)),
                scale,
            ),
            ValueKind::Timestamp => Column::Timestamp(
                TimestampMicrosecondBuilder::new().with_data_type(data_type(kind)),
            ),
        }
    }

    fn finish(self) -> ArrayRef {
        let mut builder: Box<dyn ArrayBuilder> = match self {
            Column::Text(b) => Box::new(b),
            Column::Date(b) => Box::new(b),
            Column::Integer(b) => Box::new(b),
            Column::Boolean(b) => Box::new(b),
            Column::Decimal(b, _) => Box::new(b),
            Column::Timestamp(b) => Box::new(b),
        };
        builder.finish()
    }

    fn append_null(&mut self) {
        match self {
            Column::Text(b) => b.append_null(),
            Column::Date(b) => b.append_null(),
            Column::Integer(b) => b.append_null(),
            Column::Boolean(b) => b.append_null(),
            Column::Decimal(b, _) => b.append_null(),
            Column::Timestamp(b) => b.append_null(),
        }
    }

    /// A decimal's mantissa at the column's scale, rounded half away from zero as the
    /// JSON's text is: the wire's digits, exactly.
    fn append_decimal<E: de::Error>(&mut self, value: Decimal) -> Result<(), E> {
        let Column::Decimal(b, scale) = self else {
            return Err(E::custom("a number where the field is not a decimal"));
        };
        let mut value = round_half_away(value, *scale);
        value.rescale(*scale);
        b.append_value(value.mantissa());
        Ok(())
    }

    /// Cell `i` of `row`, read as this column's type (SQL NULL a null).
    fn append_from(&mut self, row: &Row, i: usize) -> Result<(), ApiError> {
        fn get<'r, T: tokio_postgres::types::FromSql<'r>>(
            row: &'r Row,
            i: usize,
        ) -> Result<Option<T>, ApiError> {
            row.try_get(i)
                .map_err(|e| ApiError::internal(format_args!("a page's cell {i}: {e}")))
        }
        match self {
            Column::Text(b) => b.append_option(get::<&str>(row, i)?),
            Column::Date(b) => {
                b.append_option(get::<NaiveDate>(row, i)?.map(Date32Type::from_naive_date))
            }
            Column::Integer(b) => b.append_option(get::<i32>(row, i)?),
            Column::Boolean(b) => b.append_option(get::<bool>(row, i)?),
            Column::Timestamp(b) => {
                b.append_option(get::<DateTime<Utc>>(row, i)?.map(|t| t.timestamp_micros()))
            }
            Column::Decimal(..) => match get::<Numeric>(row, i)? {
                Some(Numeric(value)) => self
                    .append_decimal::<serde_json::Error>(value)
                    .map_err(ApiError::internal)?,
                None => self.append_null(),
            },
        }
        Ok(())
    }
}

/// The page object: only `items` is read.
struct PageSeed<'c> {
    columns: &'c mut [Column],
}

impl<'de> DeserializeSeed<'de> for PageSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a page object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<&str>()? {
            if key == "items" {
                map.next_value_seed(Rows {
                    columns: &mut *self.columns,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// `items`: rows, each visited into the columns.
struct Rows<'c> {
    columns: &'c mut [Column],
}

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of rows")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut rows: A) -> Result<(), A::Error> {
        while rows
            .next_element_seed(RowSeed {
                columns: &mut *self.columns,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// One row: exactly one cell per column.
struct RowSeed<'c> {
    columns: &'c mut [Column],
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a row of {} cells", self.columns.len())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut cells: A) -> Result<(), A::Error> {
        let count = self.columns.len();
        for (i, column) in self.columns.iter_mut().enumerate() {
            if cells.next_element_seed(Cell(column))?.is_none() {
                return Err(de::Error::invalid_length(i, &"a cell per field"));
            }
        }
        match cells.next_element::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(de::Error::invalid_length(count + 1, &"a cell per field")),
        }
    }
}

/// One cell, appended to its column as the column's type.
struct Cell<'c>(&'c mut Column);

impl<'de> DeserializeSeed<'de> for Cell<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Cell<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a cell")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.append_null();
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        let Column::Boolean(b) = self.0 else {
            return Err(E::custom("a boolean where the field is not one"));
        };
        b.append_value(v);
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        match self.0 {
            Column::Integer(b) => {
                b.append_value(i32::try_from(v).map_err(E::custom)?);
                Ok(())
            }
            column => column.append_decimal(Decimal::from(v)),
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(E::custom("an integer out of range")),
        }
    }
    /// Tushare's wire writes decimals as JSON numbers (D24) with at most 15 significant
    /// digits; rounded back to the field's scale, the float gives those digits exactly.
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let Column::Decimal(_, scale) = self.0 else {
            return Err(E::custom("a number where the field is not a decimal"));
        };
        let value = Decimal::from_f64(v)
            .ok_or_else(|| E::custom("a number out of a decimal's range"))?
            .round_dp(*scale);
        self.0.append_decimal(value)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        match self.0 {
            Column::Text(b) => b.append_value(v),
            Column::Date(b) => {
                let date = WireDate::parse_compact(v)
                    .map_err(|_| E::custom(format_args!("not a date: {v:?}")))?;
                b.append_value(Date32Type::from_naive_date(date.0));
            }
            Column::Timestamp(b) => {
                let at = DateTime::parse_from_rfc3339(v).map_err(E::custom)?;
                b.append_value(at.timestamp_micros());
            }
            Column::Decimal(..) => {
                let value = Decimal::from_str_exact(v).map_err(E::custom)?;
                return self.0.append_decimal(value);
            }
            Column::Integer(_) | Column::Boolean(_) => {
                return Err(E::custom("text where the field is a number or a boolean"))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, TimestampMicrosecondType};
    use arrow_array::Array;

    fn fields(api_name: &str, names: &[&str]) -> Vec<&'static FieldDef> {
        let dataset = catalogue::dataset(api_name).unwrap();
        names
            .iter()
            .map(|n| dataset.fields.iter().find(|f| f.name == *n).unwrap())
            .collect()
    }

    #[test]
    fn cells_become_typed_columns_exactly() {
        let fields = fields("index_daily", &["index_code", "trade_date", "index_value"]);
        let data = r#"{"fields":["index_code","trade_date","index_value"],"items":[
            ["GPU_Index","20261110","1003.417711"],
            ["GPU_\"Index\"","20261111",null],
            [null,null,"-99999999999999.000001"]],"limit":3,"offset":0,"returned":3,"has_more":false}"#;
        let batch = batch(&fields, data).unwrap();
        assert_eq!(batch.num_rows(), 3);
        let codes = batch.column(0).as_string::<i32>();
        assert_eq!(codes.value(1), "GPU_\"Index\"");
        assert!(codes.is_null(2));
        let dates = batch.column(1).as_primitive::<Date32Type>();
        assert_eq!(
            Date32Type::to_naive_date_opt(dates.value(0))
                .unwrap()
                .to_string(),
            "2026-11-10"
        );
        let closes = batch.column(2).as_primitive::<Decimal128Type>();
        assert_eq!(closes.value_as_string(0), "1003.417711");
        assert!(closes.is_null(1));
        assert_eq!(closes.value_as_string(2), "-99999999999999.000001");
        assert_eq!(
            batch.schema().field(2).data_type(),
            &DataType::Decimal128(38, 6)
        );
    }

    #[test]
    fn instants_are_utc_microseconds() {
        let column = Column::new(ValueKind::Timestamp);
        let mut columns = [column];
        let data = r#"{"items":[["2026-11-23T10:15:30.123456Z"]]}"#;
        PageSeed {
            columns: &mut columns,
        }
        .deserialize(&mut serde_json::Deserializer::from_str(data))
        .unwrap();
        let [column] = columns;
        let array = column.finish();
        let micros = array.as_primitive::<TimestampMicrosecondType>().value(0);
        assert_eq!(micros, 1_795_428_930_123_456);
    }

    #[test]
    fn a_row_of_the_wrong_width_is_an_error_not_a_panic() {
        let fields = fields("index_daily", &["index_code", "index_value"]);
        for data in [
            r#"{"items":[["GPU_Index"]]}"#,
            r#"{"items":[["GPU_Index","1.000000","extra"]]}"#,
            r#"{"items":[["GPU_Index",true]]}"#,
            r#"{"items":[["GPU_Index","1.0x"]]}"#,
        ] {
            assert!(batch(&fields, data).is_err(), "{data}");
        }
    }

    #[test]
    fn both_formats_write_an_empty_page() {
        let fields = fields("index_daily", &["index_code", "index_value"]);
        for format in Columnar::ALL {
            let body = encode(format, &fields, r#"{"items":[]}"#).unwrap();
            assert!(!body.is_empty(), "{format:?}");
        }
    }
}
