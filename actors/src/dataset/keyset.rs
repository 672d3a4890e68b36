//! The sort key of a dataset, for pages that start after a boundary (issue 14): which
//! columns its ORDER BY sorts on, and where each is in the rows a statement returns.
//!
//! A keyset start `(sort columns) > (key of the row before)` answers exactly the rows of
//! `OFFSET` only if the sort is a total order on plain columns; the tests here hold
//! every dataset of the catalogue to that. Nothing here may read client input: it only
//! takes apart the catalogue's own `order_by`.

use crate::catalogue::Dataset;

/// One column of a dataset's ORDER BY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortColumn {
    pub column: &'static str,
    pub descending: bool,
}

/// The columns of the dataset's ORDER BY, as its catalogue writes them. Every one is a
/// plain column of a NOT NULL key (ascending, or followed by `DESC`), and together they
/// are unique: the sort is a total order, which a keyset start needs (the
/// `every_order_by_is_the_documented_total_order_on_plain_columns` test below and the
/// primary keys and unique indexes in sql/ hold this up).
pub fn sort_columns(ds: &Dataset) -> impl Iterator<Item = SortColumn> {
    ds.order_by.split(',').map(|part| {
        let part = part.trim();
        match part.strip_suffix(" DESC") {
            Some(column) => SortColumn {
                column,
                descending: true,
            },
            None => SortColumn {
                column: part,
                descending: false,
            },
        }
    })
}

/// Where each sort column is in a statement's rows: the position of a field selecting
/// exactly that column (and always computed), or an extra column after the fields.
pub fn sort_positions(ds: &Dataset) -> Vec<usize> {
    let mut extra = ds.fields.len();
    sort_columns(ds)
        .map(|sort| match field_for(ds, sort.column) {
            Some(i) => i,
            None => {
                extra += 1;
                extra - 1
            }
        })
        .collect()
}

pub(super) fn field_for(ds: &Dataset, column: &str) -> Option<usize> {
    ds.fields
        .iter()
        .position(|f| !f.on_demand && f.sql == column)
}

/// The condition "sorts after the row whose sort key is bound at `values`". All
/// ascending, it is one row-value comparison: lexicographic with each column's own
/// collation, exactly the ORDER BY, and a btree on the columns seeks to it. With a
/// descending column it is spelt out column by column (a row comparison has one
/// direction): `a < $1 OR (a = $1 AND (b > $2 OR (b = $2 AND ...)))`.
pub(super) fn after(ds: &Dataset, values: &[String]) -> String {
    let columns: Vec<SortColumn> = sort_columns(ds).collect();
    if columns.iter().all(|c| !c.descending) {
        let names: Vec<&str> = columns.iter().map(|c| c.column).collect();
        return format!("({}) > ({})", names.join(", "), values.join(", "));
    }
    columns
        .iter()
        .zip(values)
        .rev()
        .fold(None, |inner: Option<String>, (sort, value)| {
            let column = sort.column;
            let op = if sort.descending { "<" } else { ">" };
            Some(match inner {
                None => format!("{column} {op} {value}"),
                Some(inner) => {
                    format!("({column} {op} {value} OR ({column} = {value} AND {inner}))")
                }
            })
        })
        .unwrap_or_else(|| "TRUE".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use crate::dataset::boundaries::{SortValue, Start};
    use crate::dataset::sql::{build, PointInTime};
    use crate::indexes::View;
    use crate::query::Query;
    use chrono::NaiveDate;
    use serde_json::json;
    use std::sync::Arc;

    /// The statement of a first page of 10 (11 rows read) of `q` starting at `start`,
    /// for a caller seeing GPU_Index with the cutoff on 20 Nov 2026.
    fn statement(q: &Query, start: &Start) -> crate::dataset::sql::Statement {
        let cutoff = NaiveDate::from_ymd_opt(2026, 11, 20);
        let point = PointInTime::default();
        build(
            q,
            &view(),
            cutoff,
            chrono_tz::Asia::Shanghai,
            &point,
            11,
            start,
        )
        .unwrap()
    }

    fn view() -> View {
        View {
            visible: Arc::from(vec!["GPU_Index".to_string()]),
            detailed: Arc::from(vec!["GPU_Index".to_string()]),
        }
    }

    /// A keyset start needs a total order on plain columns: each dataset's ORDER BY is
    /// its documented sort key (spec 4.3), column for column, ascending, and ends in a
    /// column unique among the rows it ranks (a primary key in sql/V1; for index_latest
    /// one row per index by construction), so no two rows share a sort key.
    #[test]
    fn every_order_by_is_the_documented_total_order_on_plain_columns() {
        let unique_tail = |api_name| match api_name {
            "index_basic" | "index_latest" => &["index_code"][..],
            // A period's trade_date is one of its days: one row per (date, index).
            "index_daily" | "index_weekly" | "index_monthly" => &["trade_date", "index_code"][..],
            "index_quote" => &["trade_date", "index_code", "specification"][..],
            "trade_calendar" => &["trade_date"][..],
            // One row per (date, index) a vintage replaced, and vintages' instants are
            // unique (the unique index in sql/V20).
            "index_revisions" => &["published_at", "index_code", "trade_date"][..],
            other => panic!("{other}: which of its sort columns are unique?"),
        };
        for ds in &catalogue::DATASETS {
            let names: Vec<String> = sort_columns(ds)
                .map(|c| {
                    let (alias, name) = c.column.split_once('.').expect("alias.column");
                    let plain = |s: &str| s.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_');
                    assert!(plain(alias) && plain(name), "{}: {c:?}", ds.api_name);
                    if c.descending {
                        format!("{name} desc")
                    } else {
                        name.to_string()
                    }
                })
                .collect();
            assert_eq!(names, ds.sort_key, "{}", ds.api_name);
            let plain: Vec<&str> = names.iter().map(|n| n.trim_end_matches(" desc")).collect();
            assert!(plain.ends_with(unique_tail(ds.api_name)), "{}", ds.api_name);
        }
    }

    #[test]
    fn sort_columns_come_from_the_fields_or_after_them() {
        let ds = |name| {
            catalogue::DATASETS
                .iter()
                .find(|d| d.api_name == name)
                .unwrap()
        };
        assert_eq!(sort_positions(ds("index_quote")), [0, 1, 2]);
        assert_eq!(sort_positions(ds("index_basic")), [2, 0]);
        let latest = ds("index_latest");
        let n = latest.fields.len();
        assert_eq!(sort_positions(latest), [n, n + 1]);
        let q = Query::parse(&json!({"api_name": "index_latest"})).unwrap();
        let start = Start {
            after: None,
            skip: 0,
        };
        let stmt = statement(&q, &start);
        assert!(
            stmt.text
                .contains(", NULL, i.sort_no, i.index_code FROM indexes i"),
            "{}",
            stmt.text
        );
    }

    #[test]
    fn a_start_after_a_boundary_is_a_bound_row_comparison_and_a_short_offset() {
        let q = Query::parse(&json!({
            "api_name": "index_quote",
            "params": {"end_date": "20261120"},
        }))
        .unwrap();
        let key = vec![
            SortValue::Date(NaiveDate::from_ymd_opt(2026, 11, 2).unwrap()),
            SortValue::Text("GPU_Index".into()),
            SortValue::Text("x'); DROP TABLE indexes; --".into()),
        ];
        let start = Start {
            after: Some(key.into()),
            skip: 3,
        };
        let stmt = statement(&q, &start);
        assert!(!stmt.text.contains("DROP"), "{}", stmt.text);
        assert!(
            stmt.text
                .contains("(q.trade_date, q.index_code, q.specification) > ($3, $4, $5)"),
            "{}",
            stmt.text
        );
        assert!(stmt.text.ends_with("LIMIT $7 OFFSET $8"), "{}", stmt.text);
        assert_eq!(stmt.params.len(), 8);
        assert_eq!(format!("{:?}", stmt.params[7]), format!("{:?}", 3i64));
    }

    /// A descending first column: the start is spelt out, newest first, so the page
    /// after a boundary holds exactly the rows the ORDER BY puts after it.
    #[test]
    fn a_start_after_a_boundary_with_a_descending_column_is_spelt_out() {
        let revisions = catalogue::dataset("index_revisions").unwrap();
        let values = ["$1".to_string(), "$2".to_string(), "$3".to_string()];
        assert_eq!(
            after(revisions, &values),
            "(r.published_at < $1 OR (r.published_at = $1 AND \
             (r.index_code > $2 OR (r.index_code = $2 AND r.trade_date > $3))))"
        );
        let quotes = catalogue::dataset("index_quote").unwrap();
        assert_eq!(
            after(quotes, &values),
            "(q.trade_date, q.index_code, q.specification) > ($1, $2, $3)"
        );
    }
}
