//! The event feed (D22): a tier's events after an id, oldest first, narrowed to what
//! the reader may see now (the tier's indexes; a key's index range), waiting up to
//! [`MAX_WAIT`] for the first one when asked. Waiting costs no query: it sleeps on the
//! change bus's signal and reads again when something was announced.
//!
//! It reads only `events` and `indexes`: never a market value, never another tier's
//! events.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool_postgres::Pool;
use serde::Serialize;

use super::signal::ChangeSignal;
use crate::db::Traced;
use crate::prefixed_id::prefixed_id;
use crate::wire_date::WireDate;
use crate::ApiError;

/// The longest a reader may ask the feed to wait for an event.
pub const MAX_WAIT: Duration = Duration::from_secs(30);
/// The most events a page holds.
pub const MAX_EVENTS: u32 = 1000;
/// Events a page holds when the reader does not say.
pub const DEFAULT_EVENTS: u32 = 100;
/// The types of events, in the order they are documented.
pub const EVENT_TYPES: [&str; 2] = ["index.published", "index.revised"];

prefixed_id!(
    /// An event's id: `evt_` and a number, in the order events were committed. The same
    /// id is the `webhook-id` of its deliveries.
    EventId,
    "evt_"
);

/// What happened: names what to fetch, never a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    /// opaque, in commit order; pass the last one seen as `after`
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "evt_42"))]
    pub id: EventId,
    /// `index.published` or `index.revised`
    #[serde(rename = "type")]
    pub event_type: String,
    /// when it happened (RFC 3339)
    pub timestamp: DateTime<Utc>,
    pub data: EventData,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventData {
    pub index_code: String,
    /// the trading days concerned, `YYYYMMDD`, ascending
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["20261120"])))]
    pub trade_dates: Vec<WireDate>,
    /// when the newest of their values was published (RFC 3339): the `as_of` that reads them
    pub published_at: DateTime<Utc>,
    /// `index.revised` only: why the values changed, as the correction's publisher said
    /// (D26); null when no reason was given
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, nullable, required = false))]
    pub reason: Option<Option<String>>,
}

impl EventData {
    /// An event's data from a row holding the `events` columns `event_type`,
    /// `index_code`, `trade_dates`, `published_at` and `reason`.
    pub fn from_row(row: &tokio_postgres::Row) -> Result<EventData, ApiError> {
        let dates: Vec<NaiveDate> = row.try_get("trade_dates")?;
        let event_type: &str = row.try_get("event_type")?;
        Ok(EventData {
            index_code: row.try_get("index_code")?,
            trade_dates: dates.into_iter().map(WireDate).collect(),
            published_at: row.try_get("published_at")?,
            reason: match event_type {
                "index.revised" => Some(row.try_get("reason")?),
                _ => None,
            },
        })
    }
}

/// A page of the feed.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FeedPage {
    pub events: Vec<Event>,
    /// the id to pass as `after` for the next page (the last event's, or `after` itself
    /// when there was none)
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "evt_42"))]
    pub next: EventId,
}

/// Whose events, after which, how many, and how long to wait for the first.
#[derive(Debug, Clone)]
pub struct FeedRequest {
    pub tier: String,
    /// Whether the reader's tier covers `member` indexes.
    pub member_indexes: bool,
    /// A key's index range; `None`: every index the tier may see.
    pub index_range: Option<Arc<BTreeSet<String>>>,
    pub after: EventId,
    pub limit: u32,
    pub wait: Duration,
    /// Only events of these types (each one of [`EVENT_TYPES`]); `None`: every type.
    pub types: Option<Vec<String>>,
    /// Only events of this index; `None`: every index the reader may see.
    pub index_code: Option<String>,
}

#[derive(Clone)]
pub struct EventFeed {
    pool: Pool,
    signal: ChangeSignal,
}

impl EventFeed {
    pub fn new(pool: Pool, signal: ChangeSignal) -> Self {
        EventFeed { pool, signal }
    }

    /// The page after `request.after`; when it is empty and `request.wait` is not zero,
    /// waits until an event arrives or the wait is over. `stop` ends a wait early (the
    /// instance is draining) with the page as it is.
    pub async fn read(
        &self,
        request: &FeedRequest,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<FeedPage, ApiError> {
        // Subscribed before the first read: a change between the read and the wait
        // still wakes it.
        let mut signal = self.signal.subscribe();
        self.check(request).await?;
        let deadline = tokio::time::Instant::now() + request.wait.min(MAX_WAIT);
        let mut stop = std::pin::pin!(stop);
        loop {
            let events = self.fetch(request).await?;
            if !events.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(page(events, request.after));
            }
            tokio::select! {
                changed = tokio::time::timeout_at(deadline, signal.changed()) => {
                    if !matches!(changed, Ok(Ok(()))) {
                        return Ok(page(events, request.after));
                    }
                }
                () = &mut stop => return Ok(page(events, request.after)),
            }
        }
    }

    /// Refuses a cursor beyond the newest event (D27: a stale or made-up cursor would
    /// otherwise skip every event up to it in silence) and an index filter naming no
    /// index.
    async fn check(&self, request: &FeedRequest) -> Result<(), ApiError> {
        let client = self.pool.get().await?;
        let row = client
            .query_one_named(
                "events.feed_check",
                "SELECT (SELECT coalesce(max(event_id), 0) FROM events), \
                        $1::text IS NULL OR EXISTS (SELECT 1 FROM indexes WHERE index_code = $1)",
                &[&request.index_code],
            )
            .await?;
        let (newest, known): (i64, bool) = (row.try_get(0)?, row.try_get(1)?);
        if request.after.0 > newest {
            return Err(ApiError::invalid(format!(
                "parameter 'after' is {} but the newest event is {}: pass a `next` this \
                 feed answered, or leave after out to start from the first event",
                request.after,
                EventId(newest)
            )));
        }
        if !known {
            return Err(ApiError::invalid(format!(
                "parameter 'index_code': no index {}",
                request.index_code.as_deref().unwrap_or_default()
            )));
        }
        Ok(())
    }

    async fn fetch(&self, request: &FeedRequest) -> Result<Vec<Event>, ApiError> {
        let range: Option<Vec<&str>> = request
            .index_range
            .as_ref()
            .map(|r| r.iter().map(String::as_str).collect());
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "events.feed",
                "SELECT e.event_id, e.event_type, e.created_at, e.index_code, e.trade_dates, \
                        e.published_at, e.reason \
                 FROM events e JOIN indexes i ON i.index_code = e.index_code \
                 WHERE e.tier = $1 AND e.event_id > $2 \
                   AND (i.visibility IN ('aggregate', 'index_only') \
                        OR (i.visibility = 'member' AND $3)) \
                   AND ($4::text[] IS NULL OR e.index_code = ANY($4)) \
                   AND ($6::text[] IS NULL OR e.event_type = ANY($6)) \
                   AND ($7::text IS NULL OR e.index_code = $7) \
                 ORDER BY e.event_id LIMIT $5",
                &[
                    &request.tier,
                    &request.after.0,
                    &request.member_indexes,
                    &range,
                    &i64::from(request.limit),
                    &request.types,
                    &request.index_code,
                ],
            )
            .await?;
        rows.iter()
            .map(|row| {
                Ok(Event {
                    id: EventId(row.try_get("event_id")?),
                    event_type: row.try_get("event_type")?,
                    timestamp: row.try_get("created_at")?,
                    data: EventData::from_row(row)?,
                })
            })
            .collect()
    }
}

fn page(events: Vec<Event>, after: EventId) -> FeedPage {
    let next = events.last().map_or(after, |e| e.id);
    FeedPage { events, next }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_evt_and_a_number() {
        assert_eq!(EventId::parse("evt_42"), Some(EventId(42)));
        assert_eq!(EventId(42).to_string(), "evt_42");
        for bad in [
            "",
            "evt_",
            "42",
            "evt_-1",
            "evt_+1",
            "evt_1x",
            "EVT_1",
            "evt_99999999999999999999",
            "evt_9223372036854775808",
        ] {
            assert_eq!(EventId::parse(bad), None, "{bad}");
        }
    }

    proptest::proptest! {
        /// Any text is an id or not, without a panic; every id reads back as itself.
        #[test]
        fn any_text_parses_or_is_refused(text in "\\PC{0,40}", n in 0i64..i64::MAX) {
            if let Some(id) = EventId::parse(&text) {
                proptest::prop_assert!(id.0 >= 0);
            }
            proptest::prop_assert_eq!(EventId::parse(&EventId(n).to_string()), Some(EventId(n)));
        }
    }
}
