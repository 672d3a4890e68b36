//! A page's rows as columns (D29): an Arrow IPC stream or a Parquet file, one column per
//! field of the page in its order. Decimals are `decimal128` at the field's scale (exact:
//! the wire's digits, never a float), dates `date32`, instants UTC timestamps in
//! microseconds, text UTF-8, integers `int32`, booleans `bool`; every column nullable,
//! absent values null.
//!
//! Encoded from the database rows when a request that asks for columns loads its page
//! ([`encode_rows`]), and kept with the cached page ([`super::Page::columnar`]): the
//! values the JSON answer of the same rows would carry, decimals rounded to the
//! field's scale as the JSON's text is. The writers are arrow-rs's; this module only
//! fills their builders, and must never format a value itself.

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
use tokio_postgres::Row;

use super::cell_text::Numeric;
use crate::catalogue::{FieldDef, ValueKind};
use crate::decimal::round_half_away;
use crate::gzip;
use crate::ApiError;

/// The two column formats a query may be answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// `rows` (each holding the page's `fields` at the positions `columns` give) in
/// `format`.
pub fn encode_rows(
    format: Columnar,
    fields: &[&'static FieldDef],
    columns: &[(usize, ValueKind)],
    rows: &[Row],
) -> Result<Encoded, ApiError> {
    let mut builders: Vec<Column> = columns.iter().map(|&(_, kind)| Column::new(kind)).collect();
    for row in rows {
        for (column, &(i, _)) in builders.iter_mut().zip(columns) {
            column.append_from(row, i)?;
        }
    }
    let body = write(format, &record_batch(fields, builders)?)?;
    Ok(Encoded {
        body: body.into(),
        gzipped: OnceLock::new(),
    })
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
            // Rounded half away from zero to the column's scale, as the JSON's text is:
            // the wire's digits, exactly.
            Column::Decimal(b, scale) => {
                b.append_option(get::<Numeric>(row, i)?.map(|Numeric(value)| {
                    let mut value = round_half_away(value, *scale);
                    value.rescale(*scale);
                    value.mantissa()
                }))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;

    #[test]
    fn both_formats_write_an_empty_page_with_its_schema() {
        let dataset = catalogue::dataset("index_daily").unwrap();
        let fields: Vec<_> = dataset.fields.iter().collect();
        let columns: Vec<_> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.kind))
            .collect();
        for format in Columnar::ALL {
            let encoded = encode_rows(format, &fields, &columns, &[]).unwrap();
            assert!(!encoded.body.is_empty(), "{format:?}");
            assert_eq!(&encoded.gzipped()[..2], &[0x1f, 0x8b], "{format:?}");
        }
        let arrow = encode_rows(Columnar::Arrow, &fields, &columns, &[]).unwrap();
        let mut reader =
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(arrow.body), None)
                .unwrap();
        let schema = reader.schema();
        assert_eq!(schema.fields().len(), fields.len());
        for (field, def) in schema.fields().iter().zip(&fields) {
            assert_eq!(field.name(), def.name);
            assert_eq!(field.data_type(), &data_type(def.kind));
        }
        assert!(reader
            .next()
            .is_none_or(|batch| batch.unwrap().num_rows() == 0));
    }
}
