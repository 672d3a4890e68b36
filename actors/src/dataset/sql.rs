//! Builds one parameterised SELECT from the catalogue and a validated query.
//!
//! The statement text is assembled only from the catalogue's static SQL and `$n`
//! placeholders; every value (index codes, dates, specifications, limits) is bound.
//!
//! Every statement selects all of the dataset's fields, in catalogue order, whatever
//! the client asked for; the page picks and orders the requested ones when it renders
//! ([`super::page::Page::render`]). So the statements a connection prepares and keeps
//! are bounded by the catalogue (dataset x the parameters given), never by the clients:
//! permuting `fields` cannot grow the statement cache in this process or in PostgreSQL.

use chrono::NaiveDate;
use tokio_postgres::types::ToSql;

use crate::catalogue::ParamRole;
use crate::indexes::View;
use crate::query::{ParamValue, Query};

pub type SqlParam = Box<dyn ToSql + Sync + Send>;

pub struct Statement {
    pub text: String,
    pub params: Vec<SqlParam>,
}

#[derive(Default)]
struct Binder {
    params: Vec<SqlParam>,
}

impl Binder {
    fn bind(&mut self, value: SqlParam) -> String {
        self.params.push(value);
        format!("${}", self.params.len())
    }
}

fn bind_value(binder: &mut Binder, value: &ParamValue) -> String {
    match value {
        ParamValue::Text(text) => binder.bind(Box::new(text.clone())),
        ParamValue::Date(date) => binder.bind(Box::new(*date)),
    }
}

/// The SELECT for one page. `fetch` is the number of rows to read (limit + 1, to learn
/// `has_more`). `cutoff` must be `Some` for delayed datasets.
pub fn build(
    query: &Query,
    view: &View,
    cutoff: Option<NaiveDate>,
    fetch: i64,
    offset: i64,
) -> Statement {
    let ds = query.dataset;
    let mut binder = Binder::default();

    let mut detailed: Option<String> = None;
    let columns: Vec<String> = ds
        .fields
        .iter()
        .map(|f| {
            if f.sql.contains("{detailed}") {
                let placeholder = detailed
                    .get_or_insert_with(|| binder.bind(Box::new(view.detailed.to_vec())))
                    .clone();
                f.sql.replace("{detailed}", &placeholder)
            } else {
                f.sql.to_string()
            }
        })
        .collect();

    let mut conditions = Vec::new();
    if let Some(column) = ds.index_column {
        let allowed = if ds.detail_only {
            &view.detailed
        } else {
            &view.visible
        };
        let placeholder = binder.bind(Box::new(allowed.to_vec()));
        conditions.push(format!("{column} = ANY({placeholder})"));
    }
    for (name, value) in &query.params {
        let Some(def) = ds.param(name) else { continue };
        let placeholder = bind_value(&mut binder, value);
        let condition = match (def.role, ds.index_column, ds.date_column) {
            (ParamRole::IndexCode, Some(column), _) => format!("{column} = {placeholder}"),
            (ParamRole::TradeDate, _, Some(column)) => format!("{column} = {placeholder}"),
            (ParamRole::StartDate, _, Some(column)) => format!("{column} >= {placeholder}"),
            (ParamRole::EndDate, _, Some(column)) => format!("{column} <= {placeholder}"),
            (ParamRole::Exact { column }, _, _) => format!("{column} = {placeholder}"),
            // The catalogue test guarantees a column for every role a dataset declares.
            _ => continue,
        };
        conditions.push(condition);
    }
    let where_clause = if conditions.is_empty() {
        "TRUE".to_string()
    } else {
        conditions.join(" AND ")
    };

    let mut from = ds.from.replace("{where}", &where_clause);
    if from.contains("{cutoff}") {
        let placeholder = binder.bind(Box::new(cutoff));
        from = from.replace("{cutoff}", &placeholder);
    }
    let limit = binder.bind(Box::new(fetch));
    let offset = binder.bind(Box::new(offset));
    Statement {
        text: format!(
            "SELECT {} {from} ORDER BY {} LIMIT {limit} OFFSET {offset}",
            columns.join(", "),
            ds.order_by
        ),
        params: binder.params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    #[test]
    fn client_text_is_bound_never_inlined() {
        let evil = "x'; DROP TABLE indexes; --";
        let q = Query::parse(&json!({
            "api_name": "index_quote",
            "params": {"index_code": evil, "specification": evil, "start_date": "20240101"},
            "fields": ["price", "weight"]
        }))
        .unwrap();
        let view = View {
            visible: Arc::from(vec!["Server_Index".to_string()]),
            detailed: Arc::from(vec!["Server_Index".to_string()]),
        };
        let stmt = build(&q, &view, NaiveDate::from_ymd_opt(2024, 6, 1), 11, 0);
        assert!(!stmt.text.contains("DROP"), "{}", stmt.text);
        // Every field, in catalogue order, whatever the client listed.
        assert!(
            stmt.text.starts_with(
                "SELECT q.trade_date, q.index_code, q.specification, \
                 q.weight, q.price FROM index_quotes q"
            ),
            "{}",
            stmt.text
        );
        assert!(stmt.text.contains("q.specification = $"));
        assert!(stmt
            .text
            .ends_with("ORDER BY q.trade_date, q.index_code, q.specification LIMIT $6 OFFSET $7"));
        assert_eq!(stmt.params.len(), 7);
    }
}

#[cfg(test)]
mod bounded {
    use super::*;
    use crate::catalogue;
    use serde_json::json;
    use std::collections::BTreeSet;
    use std::sync::Arc;

    /// However a client orders or picks `fields`, the statement text is one per
    /// dataset and set of parameters given.
    #[test]
    fn field_choices_do_not_make_new_statements() {
        let view = View {
            visible: Arc::from(vec!["GPU_Index".to_string()]),
            detailed: Arc::from(Vec::new()),
        };
        for dataset in &catalogue::DATASETS {
            let names: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
            let mut texts = BTreeSet::new();
            for rotation in 0..names.len() {
                let mut fields = names.clone();
                fields.rotate_left(rotation);
                fields.truncate(1 + rotation % names.len());
                let query = Query::parse(&json!({
                    "api_name": dataset.api_name,
                    "fields": fields,
                }))
                .unwrap();
                let cutoff = NaiveDate::from_ymd_opt(2026, 11, 20);
                texts.insert(build(&query, &view, cutoff, 11, 0).text);
            }
            assert_eq!(texts.len(), 1, "{}: {texts:?}", dataset.api_name);
        }
    }
}
