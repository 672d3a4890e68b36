//! Writing the trading calendar: a [`CalendarPlan`] applied all or nothing, and the
//! whole list of open days written at once (also for the demo data).
//!
//! The write runs through [`ChangeBus::write`] with [`Change::Data`], so every instance
//! drops its delay cutoffs and cached pages, and this one before the answer is sent. It
//! must never close a day that holds quotes or `index_daily` rows (those rows would
//! vanish from the datasets and break the index chain): such a change is refused whole
//! with 409 / 40901 and nothing changes. It never builds SQL from client text.

use chrono::NaiveDate;
use deadpool_postgres::Pool;
use tokio_postgres::Transaction;

use super::change::{CalendarChange, CalendarPlan, CalendarSummary};
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::changes::{Change, ChangeBus};
use crate::db::Traced;
use crate::wire_date::WireDate;
use crate::{ApiError, ErrorCode};

/// How many blocking dates a refusal lists.
const LISTED_CONFLICTS: i64 = 10;

/// The trading calendar's writer.
#[derive(Clone)]
pub struct Calendar {
    pool: Pool,
    bus: ChangeBus,
}

impl Calendar {
    pub fn new(pool: Pool, bus: ChangeBus) -> Self {
        Calendar { pool, bus }
    }

    /// Applies a calendar change, all or nothing, and answers the calendar's new extent.
    /// The record holds the calendar's extent before and after, and the span changed
    /// with the open days it now has.
    pub async fn replace(
        &self,
        by: &Author,
        change: CalendarChange,
    ) -> Result<CalendarSummary, ApiError> {
        let plan = change.plan()?;
        self.bus
            .write(&self.pool, Change::Data, async |tx| {
                lock(tx).await?;
                let before = summary(tx).await?;
                refuse_closing_days_with_data(tx, &plan).await?;
                match &plan {
                    CalendarPlan::Whole { open } => replace_all(tx, open).await?,
                    CalendarPlan::Span { from, to, open } => {
                        replace_span(tx, *from, *to, open).await?
                    }
                }
                let after = summary(tx).await?;
                let (span, open) = match &plan {
                    CalendarPlan::Whole { open } => (None, open),
                    CalendarPlan::Span { from, to, open } => (Some((from, to)), open),
                };
                let day = |d: &NaiveDate| d.format("%Y%m%d").to_string();
                let changed = serde_json::json!({
                    "summary": &after,
                    "span": span.map(|(from, to)| [day(from), day(to)]),
                    "open_days": open.iter().map(day).collect::<Vec<_>>(),
                });
                let entry = Entry::new(
                    Action::CalendarChanged,
                    Target::new(Kind::Calendar, "trading"),
                );
                by.record(tx, entry.before(&before).after(&changed)).await?;
                Ok(after)
            })
            .await
    }
}

/// Replaces the whole trading calendar with `open_days` (no checks: the demo data and
/// a checked plan use it).
pub async fn replace_all(tx: &Transaction<'_>, open_days: &[NaiveDate]) -> Result<(), ApiError> {
    tx.execute_named("calendar.delete_all", "DELETE FROM trade_calendar", &[])
        .await?;
    tx.execute_named(
        "calendar.insert_all",
        "INSERT INTO trade_calendar (trade_date) SELECT DISTINCT d FROM UNNEST($1::date[]) AS d",
        &[&open_days],
    )
    .await?;
    Ok(())
}

/// Calendar changes run one at a time (EXCLUSIVE conflicts with itself), and while one
/// runs no quote or daily row can be written or deleted (SHARE waits for, and then
/// holds off, every writer of those tables), so the check below stays true until commit.
/// Readers are never blocked. Calendar first, then the data: one order everywhere.
async fn lock(tx: &Transaction<'_>) -> Result<(), ApiError> {
    tx.batch_execute_named(
        "calendar.lock",
        "LOCK TABLE trade_calendar IN EXCLUSIVE MODE; \
         LOCK TABLE index_quotes, index_daily IN SHARE MODE",
    )
    .await?;
    Ok(())
}

/// 409 / 40901 when the plan would close a day that is open now and holds quotes or
/// daily rows, naming up to [`LISTED_CONFLICTS`] of them.
async fn refuse_closing_days_with_data(
    tx: &Transaction<'_>,
    plan: &CalendarPlan,
) -> Result<(), ApiError> {
    let (from, to) = plan.span().unzip();
    let open = plan.open();
    let rows = tx
        .query_named(
            "calendar.check_conflicts",
            "SELECT c.trade_date, count(*) OVER () AS conflicts FROM trade_calendar c \
             WHERE ($1::date IS NULL OR c.trade_date BETWEEN $1 AND $2) \
               AND NOT (c.trade_date = ANY($3::date[])) \
               AND (EXISTS (SELECT 1 FROM index_quotes q WHERE q.trade_date = c.trade_date) \
                 OR EXISTS (SELECT 1 FROM index_daily d WHERE d.trade_date = c.trade_date)) \
             ORDER BY c.trade_date LIMIT $4",
            &[&from, &to, &open, &LISTED_CONFLICTS],
        )
        .await?;
    let Some(first) = rows.first() else {
        return Ok(());
    };
    let total: i64 = first.try_get("conflicts")?;
    let mut listed = Vec::with_capacity(rows.len());
    for row in &rows {
        let day: NaiveDate = row.try_get("trade_date")?;
        listed.push(day.format("%Y-%m-%d").to_string());
    }
    let more = total - rows.len() as i64;
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Err(ApiError::new(
        ErrorCode::Conflict,
        format!(
            "cannot close {}{more}: quotes exist on them; re-import or delete them first",
            listed.join(", ")
        ),
    ))
}

/// Replaces the days `from..=to` with `open` (all within the span); other days stay.
async fn replace_span(
    tx: &Transaction<'_>,
    from: NaiveDate,
    to: NaiveDate,
    open: &[NaiveDate],
) -> Result<(), ApiError> {
    tx.execute_named(
        "calendar.delete_span",
        "DELETE FROM trade_calendar WHERE trade_date BETWEEN $1 AND $2",
        &[&from, &to],
    )
    .await?;
    tx.execute_named(
        "calendar.insert_span",
        "INSERT INTO trade_calendar (trade_date) SELECT d FROM UNNEST($1::date[]) AS d",
        &[&open],
    )
    .await?;
    Ok(())
}

async fn summary(tx: &Transaction<'_>) -> Result<CalendarSummary, ApiError> {
    let row = tx
        .query_one_named(
            "calendar.summary",
            "SELECT count(*) AS open_days, min(trade_date) AS first, max(trade_date) AS last \
             FROM trade_calendar",
            &[],
        )
        .await?;
    let day = |name: &str| -> Result<Option<String>, ApiError> {
        let day: Option<NaiveDate> = row.try_get(name)?;
        Ok(day.map(|d| WireDate(d).to_string()))
    };
    Ok(CalendarSummary {
        open_days: row.try_get("open_days")?,
        first: day("first")?,
        last: day("last")?,
    })
}
