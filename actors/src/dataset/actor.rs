//! The DatasetActor: check-chain steps 8 (member coverage) and 9 (delay), then the rows.
//!
//! It owns four caches: rendered pages keyed by everything a page depends on (dataset,
//! normalised params, fields, limit, offset, the resolved visible and detailed index
//! sets, the delay cutoff, the resolved point in time) and never by who asked; page
//! boundaries per walk (the same key without fields, limit and offset), so a deep page
//! seeks instead of skipping every row before it ([`super::boundaries`]); the index
//! registry; and delay cutoffs per (day, delay). [`Invalidate`] drops them all when data
//! changes, so a page read `as_of` a future instant never outlives the next import, and
//! no boundary outlives the data it was read from.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use chrono::NaiveDate;
use chrono_tz::Tz;
use deadpool_postgres::Pool;
use tracing::{Instrument, Span};

use super::boundaries::{self, Boundaries, Start};
use super::columnar::Columnar;
use super::keyset;
use super::page::Page;
use super::sql::{self, PointInTime};
use crate::answer::EagerReply;
use crate::calendar::{delay_cutoff, end_of_day, service_today};
use crate::caller::Grant;
use crate::catalogue::ParamRole;
use crate::changes::{Change, Invalidate};
use crate::clock::Clock;
use crate::coherent_cache::CoherentCache;
use crate::db::Traced;
use crate::indexes::{IndexRegistry, View};
use crate::query::{ParamValue, Query};
use crate::ApiError;

#[derive(Debug, Clone)]
pub struct DatasetSettings {
    pub service_tz: Tz,
    /// Server-wide cap on `limit` (at most 5000).
    pub max_limit: u32,
    /// Budget of the page cache, in bytes of rendered JSON.
    pub page_cache_bytes: u64,
    /// Longest a cached page lives when nothing invalidates it first.
    pub page_ttl: Duration,
}

/// One per worker thread (see [`DatasetActor::reading_from`]), all sharing one
/// [`DatasetService`]: its caches, and the loads of a page several workers want at once.
#[derive(Clone)]
pub struct DatasetActor {
    service: Arc<DatasetService>,
    /// Where this actor's statements run: the worker's own read pool, whose
    /// connections' driver tasks run on the worker's thread, so a statement and its
    /// rows never cross threads; the shared pool where there is none.
    pool: Pool,
}

struct DatasetService {
    clock: Arc<dyn Clock>,
    settings: DatasetSettings,
    pages: CoherentCache<PageKey, Arc<Page>>,
    boundaries: Boundaries<WalkKey>,
    registry: CoherentCache<(), Arc<IndexRegistry>>,
    cutoffs: CoherentCache<(NaiveDate, u32), Option<NaiveDate>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PageKey {
    walk: WalkKey,
    fields: Vec<&'static str>,
    limit: u32,
    offset: u64,
    /// The form the page is kept in: JSON, or columns in one format (D29).
    columnar: Option<Columnar>,
}

/// Everything the sequence of a query's rows depends on: a page is a slice of it. Not
/// `fields` (a statement selects every field whatever the client picks), `limit` or
/// `offset`, so every page size and field choice of one walk shares its boundaries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct WalkKey {
    api_name: &'static str,
    params: BTreeMap<&'static str, ParamValue>,
    /// Empty where the dataset does not depend on it, so all callers share the entry.
    view: Option<View>,
    cutoff: Option<NaiveDate>,
    point: PointInTime,
}

/// Walks whose boundaries are kept; each keeps at most 128, about 100 bytes apiece.
const WALKS: u64 = 512;

impl DatasetActor {
    pub fn new(pool: Pool, clock: Arc<dyn Clock>, settings: DatasetSettings) -> Self {
        let ttl = settings.page_ttl;
        let pages = CoherentCache::weighted(
            "pages",
            settings.page_cache_bytes,
            ttl,
            |page: &Arc<Page>| u32::try_from(page.size()).unwrap_or(u32::MAX),
        );
        DatasetActor {
            pool,
            service: Arc::new(DatasetService {
                clock,
                settings,
                pages,
                boundaries: Boundaries::new(WALKS, ttl),
                registry: CoherentCache::new("registry", 1, ttl),
                cutoffs: CoherentCache::new("cutoffs", 64, ttl),
            }),
        }
    }

    /// This actor's caches, reading through `pool`: a worker thread's own read pool.
    pub fn reading_from(&self, pool: Pool) -> DatasetActor {
        DatasetActor {
            service: self.service.clone(),
            pool,
        }
    }
}

impl Actor for DatasetActor {
    type Context = Context<Self>;
}

/// Steps 8-9 and the data of one validated query.
#[derive(Message)]
#[rtype(result = "Result<Arc<Page>, ApiError>")]
pub struct Fetch {
    pub query: Query,
    pub grant: Grant,
    /// The columns the answer is to carry (D29), if any: a page loaded for it encodes
    /// them from its rows.
    pub columnar: Option<Columnar>,
    pub span: Span,
}

/// What a grant resolves to now, for the membership endpoint.
#[derive(Message)]
#[rtype(result = "Result<Entitlements, ApiError>")]
pub struct Describe {
    pub grant: Grant,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Entitlements {
    /// Visible index codes in display order.
    pub indexes: Vec<String>,
    /// The newest date the caller's delayed data reaches; `None` if the calendar is empty.
    pub data_cutoff: Option<NaiveDate>,
}

impl Handler<Fetch> for DatasetActor {
    /// Sent at once for a page in memory (see [`EagerReply`]).
    type Result = EagerReply<Result<Arc<Page>, ApiError>>;

    /// Runs in the sender's span, with no span of its own: a page in memory takes less
    /// than a span costs. A lookup that misses opens its `cache.lookup` span (with the
    /// page's statement) under the sender's, and the sender's span, when it declares
    /// them, gets `dataset.rows` and `dataset.cache.hit` (whether the page came from
    /// memory).
    fn handle(&mut self, msg: Fetch, _: &mut Context<Self>) -> Self::Result {
        let actor = self.clone();
        let fetch = async move { actor.fetch(msg.query, msg.grant, msg.columnar).await };
        EagerReply::new(fetch.instrument(msg.span))
    }
}

impl Handler<Describe> for DatasetActor {
    type Result = ResponseFuture<Result<Entitlements, ApiError>>;

    fn handle(&mut self, msg: Describe, _: &mut Context<Self>) -> Self::Result {
        let span = tracing::info_span!(parent: &msg.span, "dataset.describe");
        let actor = self.clone();
        Box::pin(
            async move {
                let registry = actor.registry().await?;
                let view = registry.view(&msg.grant);
                Ok(Entitlements {
                    indexes: view.visible.to_vec(),
                    data_cutoff: actor.cutoff(msg.grant.delay_days).await?,
                })
            }
            .instrument(span),
        )
    }
}

impl Handler<Invalidate> for DatasetActor {
    type Result = ();

    /// Drops every cached page and boundary, the index registry and the cutoffs on a
    /// data change. Boundaries go first: a request that begins between the two then
    /// finds no boundary rather than an old boundary beside new pages.
    fn handle(&mut self, msg: Invalidate, _: &mut Context<Self>) {
        if !msg.0.touches(Change::Data) {
            return;
        }
        self.service.boundaries.invalidate_all();
        self.service.pages.invalidate_all();
        self.service.registry.invalidate_all();
        self.service.cutoffs.invalidate_all();
    }
}

impl DatasetActor {
    async fn fetch(
        &self,
        mut query: Query,
        grant: Grant,
        columnar: Option<Columnar>,
    ) -> Result<Arc<Page>, ApiError> {
        let dataset = query.dataset;
        let registry = self.registry().await?;
        // Tushare's codes, in any letter case, as the indexes spell them.
        for value in query.params.values_mut() {
            if let ParamValue::Codes(codes) = value {
                for code in codes.iter_mut() {
                    if let Some(def) = registry.find_ignoring_case(code) {
                        *code = def.index_code.clone();
                    }
                }
            }
        }
        for code in query.named_indexes() {
            registry.check_named(&grant, dataset, code)?;
        }
        let view = dataset.uses_indexes().then(|| registry.view(&grant));
        // An on-demand field may read the caller's cutoff (index_basic's
        // `latest_trade_date`); the cutoff is then part of the page's key, as for a
        // delayed dataset. (A query of default fields pays one flag test a field.)
        let cutoff = if dataset.delayed
            || query
                .fields
                .iter()
                .any(|f| f.on_demand && f.sql.contains("{cutoff}"))
        {
            self.cutoff(grant.delay_days).await?
        } else {
            None
        };
        let point = self.point_in_time(&query, grant.delay_days).await?;
        let limit = query
            .limit
            .min(self.service.settings.max_limit)
            .min(grant.max_rows)
            .max(1);
        let key = PageKey {
            walk: WalkKey {
                api_name: dataset.api_name,
                params: query.params.clone(),
                view,
                cutoff,
                point,
            },
            fields: query.fields.iter().map(|f| f.name).collect(),
            limit,
            offset: query.offset,
            columnar,
        };
        let lookup = self
            .service
            .pages
            .get_or_load(&key, || self.load_page(&query, &key))
            .await?;
        // A miss also has the page lookup's own span (`cache.lookup`), with its SQL.
        let page = lookup.value;
        let span = Span::current();
        tracing::record_all!(
            span,
            dataset.rows = page.place.returned,
            dataset.cache.hit = !lookup.loaded
        );
        Ok(page)
    }

    async fn load_page(&self, query: &Query, key: &PageKey) -> Result<Arc<Page>, ApiError> {
        if query.dataset.delayed && key.walk.cutoff.is_none() {
            // No open day is old enough for this caller's delay: nothing is visible yet.
            return Ok(Arc::new(Page::empty(
                query.dataset.wire,
                &query.fields,
                key.limit,
                key.offset,
                key.columnar,
            )?));
        }
        let walk = self.service.boundaries.walk(&key.walk).await?;
        let mut start = walk.start(key.offset);
        let rows = loop {
            let rows = self.read_rows(query, key, &start).await?;
            if start.after.is_some() && !self.service.boundaries.is_current(&walk) {
                // The data changed while we read from a boundary learnt before the
                // change: it may not be the row before `offset` any more.
                start = Start {
                    after: None,
                    skip: key.offset,
                };
                continue;
            }
            break rows;
        };
        // The last row shown bounds the next page: remember it for that page's request.
        let shown = rows.len().min(key.limit as usize);
        if rows.len() > shown && shown > 0 {
            let positions = keyset::sort_positions(query.dataset);
            if let Some(last) = boundaries::sort_key(&rows[shown - 1], &positions)? {
                self.service
                    .boundaries
                    .record(&walk, key.offset, shown, last);
            }
        }
        Ok(Arc::new(Page::render(
            (query.dataset.fields, query.dataset.wire),
            &query.fields,
            &rows,
            (key.limit, key.offset),
            key.columnar,
        )?))
    }

    /// The rows of the page `key`, read from `start`: at most limit + 1 of them.
    async fn read_rows(
        &self,
        query: &Query,
        key: &PageKey,
        start: &Start,
    ) -> Result<Vec<tokio_postgres::Row>, ApiError> {
        let no_view = View {
            visible: Arc::from(Vec::new()),
            detailed: Arc::from(Vec::new()),
        };
        let view = key.walk.view.as_ref().unwrap_or(&no_view);
        let statement = sql::build(
            query,
            view,
            key.walk.cutoff,
            self.service.settings.service_tz,
            &key.walk.point,
            i64::from(key.limit) + 1,
            start,
        )
        .map_err(ApiError::internal)?;
        let client = self.pool.get().await?;
        let prepared = client.prepare_cached(&statement.text).await?;
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = statement
            .params
            .iter()
            .map(|p| p.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        Ok(client
            .query_named(query.dataset.api_name, &prepared, &params)
            .await?)
    }

    async fn registry(&self) -> Result<Arc<IndexRegistry>, ApiError> {
        self.service
            .registry
            .get(&(), || async {
                let client = self.pool.get().await?;
                Ok(Arc::new(IndexRegistry::load(&**client).await?))
            })
            .await
    }

    /// The instants of `as_of` and `updated_since` (D17), and the caller's cutoffs on
    /// the days they fall in, by today's calendar.
    async fn point_in_time(&self, query: &Query, delay_days: u32) -> Result<PointInTime, ApiError> {
        let tz = self.service.settings.service_tz;
        let mut point = PointInTime::default();
        if query.dataset.versioned.is_none() {
            return Ok(point);
        }
        for param in query.dataset.params {
            let Some(value) = query.params.get(param.name) else {
                continue;
            };
            match (param.role, value) {
                (ParamRole::AsOf, ParamValue::Instant(at)) => point.as_of = Some(*at),
                (ParamRole::AsOf, ParamValue::Date(day)) => {
                    point.as_of = Some(end_of_day(*day, tz))
                }
                (ParamRole::UpdatedSince, ParamValue::Instant(since)) => {
                    let day = service_today(*since, tz);
                    point.since = Some((*since, self.cutoff_on(day, delay_days).await?));
                }
                _ => {}
            }
        }
        if let (Some(at), Some(_)) = (point.as_of, point.since) {
            point.as_of_cutoff = self.cutoff_on(service_today(at, tz), delay_days).await?;
        }
        Ok(point)
    }

    /// The delay cutoff of D5 for `delay_days`, today in the service time zone.
    async fn cutoff(&self, delay_days: u32) -> Result<Option<NaiveDate>, ApiError> {
        let today = service_today(self.service.clock.now(), self.service.settings.service_tz);
        self.cutoff_on(today, delay_days).await
    }

    /// The delay cutoff of D5 for `delay_days` on `today`, by the current calendar.
    async fn cutoff_on(
        &self,
        today: NaiveDate,
        delay_days: u32,
    ) -> Result<Option<NaiveDate>, ApiError> {
        self.service
            .cutoffs
            .get(&(today, delay_days), || async move {
                let client = self.pool.get().await?;
                let rows = client
                    .query_named(
                        "calendar.cutoff",
                        "SELECT trade_date FROM trade_calendar WHERE trade_date <= $1 \
                         ORDER BY trade_date DESC LIMIT $2",
                        &[&today, &(i64::from(delay_days) + 1)],
                    )
                    .await?;
                let days = rows
                    .iter()
                    .map(|r| r.try_get::<_, NaiveDate>(0))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(delay_cutoff(days, delay_days))
            })
            .await
    }
}
