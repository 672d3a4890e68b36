//! The service's Prometheus metrics: one set per process (one process is one instance),
//! recorded where things happen and rendered by `GET /metrics`.
//!
//! Labels are bounded sets (route patterns, dataset names, business codes, statement
//! names): never a request id, key, user or parameter value, so cardinality stays fixed.

use std::sync::LazyLock;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Metric, Registry, Unit};

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct RequestLabels {
    /// The matched route pattern (`/api/v1/keys/{id}`), or `unmatched`.
    pub route: String,
    /// The dataset of a query, empty for other routes.
    pub dataset: &'static str,
    /// The business code of the envelope (0 for success).
    pub code: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct CacheLabels {
    pub cache: &'static str,
    /// `hit` or `miss`.
    pub result: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ChargeLabels {
    /// `memory`: on the caller's thread, from budget in hand; `shard`: sent to the
    /// owning shard's actor (a lease or a report to wait for, or a queue).
    pub settled: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct WindowLabels {
    /// `minute` or `day`.
    pub window: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ReclaimLabels {
    /// `returned` (given back to the windows) or `counted` (counted as used: calls the
    /// dead instance may have made without reporting them).
    pub budget: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct StatementLabels {
    pub statement: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ImportLabels {
    /// `accepted`, `rejected` or `failed`.
    pub result: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct DeliveryLabels {
    /// `delivered`, `retrying` (failed, another attempt is due later) or `failed` (the
    /// last attempt failed).
    pub outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct PoolLabels {
    /// `in_use` or `idle`.
    pub state: &'static str,
}

pub struct Metrics {
    registry: Registry,
    pub requests: Histograms<RequestLabels>,
    pub cache: Family<CacheLabels, Counter>,
    pub quota_charges: Family<ChargeLabels, Counter>,
    pub quota_refusals: Family<WindowLabels, Counter>,
    pub quota_reclaimed_instances: Counter,
    pub quota_reclaimed_calls: Family<ReclaimLabels, Counter>,
    pub db_queries: Histograms<StatementLabels>,
    pub db_errors: Family<StatementLabels, Counter>,
    pub imports: Histograms<ImportLabels>,
    pub import_rows: Counter,
    pub webhook_deliveries: Family<DeliveryLabels, Counter>,
    pub webhook_retries_waiting: Gauge,
    pub webhook_oldest_pending: Gauge,
    pool_connections: Family<PoolLabels, Gauge>,
    pool_max: Gauge,
    pool_waiting: Gauge,
}

/// Latencies from 0.5 ms to about 16 s.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// Import durations from 50 ms to about 7 minutes.
fn import_duration() -> Histogram {
    Histogram::new(exponential_buckets(0.05, 2.0, 14))
}

/// Registers `metric` under `name` (with `unit`, if any) and gives it back to keep.
fn add<M: Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    metric: M,
) -> M {
    match unit {
        Some(unit) => registry.register_with_unit(name, help, unit, metric.clone()),
        None => registry.register(name, help, metric.clone()),
    }
    metric
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    &METRICS
}

/// What the pools look like at scrape time (read by the caller, which owns the pools).
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolUsage {
    pub max: usize,
    pub in_use: usize,
    pub idle: usize,
    pub waiting: usize,
}

impl Metrics {
    /// Every metric the service exports, in the order `/metrics` lists them: each
    /// entry a name, its help, its unit and its type.
    fn new() -> Self {
        let mut registry = Registry::with_prefix("iq");
        let r = &mut registry;
        Metrics {
            requests: add(r, "http_request_duration", "Requests by route, dataset and business code, and how long they took \
             (the _count series is the request count)", Some(Unit::Seconds), Histograms::new_with_constructor(latency as fn() -> _)),
            cache: add(r, "cache_lookups", "Cache lookups by cache (page, registry, cutoff) and result (hit, miss)", None, Family::default()),
            quota_charges: add(r, "quota_charges", "Step 7 charges by where they were settled: memory (at once, on the request's \
             thread) or shard (waited for the shard's actor: a lease, a report, a queue)", None, Family::default()),
            quota_refusals: add(r, "quota_refusals", "Queries refused by step 7, by the window that was used up (42901 minute, 42902 day)", None, Family::default()),
            quota_reclaimed_instances: add(r, "quota_reclaimed_instances", "Instances that stopped renewing their quota leases (QUOTA_LEASE_TTL_MS) \
             while holding budget, whose leases this instance reclaimed", None, Counter::default()),
            quota_reclaimed_calls: add(r, "quota_reclaimed_calls", "Day budget of reclaimed leases: returned to the windows, or counted as used \
             (calls the dead instance may have made without reporting them)", None, Family::default()),
            db_queries: add(r, "db_query_duration", "SQL statements by name, and how long each took including the round trip", Some(Unit::Seconds), Histograms::new_with_constructor(latency as fn() -> _)),
            db_errors: add(r, "db_query_errors", "SQL statements that failed, by name", None, Family::default()),
            imports: add(r, "import_duration", "Quote imports by result (accepted, rejected, failed), and how long each took", Some(Unit::Seconds), Histograms::new_with_constructor(import_duration as fn() -> _)),
            import_rows: add(r, "import_rows", "Quote rows written by accepted imports", None, Counter::default()),
            webhook_deliveries: add(r, "webhook_deliveries", "Webhook delivery attempts by outcome (delivered, retrying, failed)", None, Family::default()),
            webhook_retries_waiting: add(r, "webhook_retries_waiting", "Webhook deliveries that failed and wait for their next attempt", None, Gauge::default()),
            webhook_oldest_pending: add(r, "webhook_oldest_pending_age", "Age of the oldest event not yet delivered to one of its endpoints (0: none)", Some(Unit::Seconds), Gauge::default()),
            pool_connections: add(r, "db_pool_connections", "Database connections held by the pool, by state (in_use, idle)", None, Family::default()),
            pool_max: add(r, "db_pool_max_connections", "The pool's maximum size (DB_POOL_SIZE)", None, Gauge::default()),
            pool_waiting: add(r, "db_pool_waiting", "Requests waiting for a database connection right now", None, Gauge::default()),
            registry,
        }
    }

    /// The hit and the miss counters of `cache`, for a cache to keep: a lookup then
    /// counts with one atomic add instead of hashing its labels into the family.
    pub fn cache_lookups(&self, cache: &'static str) -> Outcomes {
        let counter = |result| {
            self.cache
                .get_or_create(&CacheLabels { cache, result })
                .clone()
        };
        Outcomes {
            yes: counter("hit"),
            no: counter("miss"),
        }
    }

    /// The quota charges' counters: settled in memory (yes) or by the shard (no).
    pub fn quota_charges(&self) -> Outcomes {
        let counter = |settled| {
            self.quota_charges
                .get_or_create(&ChargeLabels { settled })
                .clone()
        };
        Outcomes {
            yes: counter("memory"),
            no: counter("shard"),
        }
    }

    /// The Prometheus text exposition, with the pool read at this moment.
    pub fn render(&self, pool: PoolUsage) -> String {
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.pool_max.set(gauge(pool.max));
        self.pool_waiting.set(gauge(pool.waiting));
        for (state, n) in [("in_use", pool.in_use), ("idle", pool.idle)] {
            self.pool_connections
                .get_or_create(&PoolLabels { state })
                .set(gauge(n));
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// The two series of a family that counts a yes-or-no outcome (a cache's hits and
/// misses, [`Metrics::cache_lookups`]; where quota charges were settled,
/// [`Metrics::quota_charges`]), resolved once so counting hashes no labels.
#[derive(Debug, Clone)]
pub struct Outcomes {
    yes: Counter,
    no: Counter,
}

impl Outcomes {
    pub fn count(&self, yes: bool) {
        match yes {
            true => self.yes.inc(),
            false => self.no.inc(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family_with_its_help_and_the_pool_as_read() {
        let m = Metrics::new();
        let pages = m.cache_lookups("page");
        pages.count(true);
        pages.count(false);
        pages.count(true);
        m.requests
            .get_or_create(&RequestLabels {
                route: "/api/v1/query".into(),
                dataset: "index_daily",
                code: 0,
            })
            .observe(0.002);
        let text = m.render(PoolUsage {
            max: 16,
            in_use: 3,
            idle: 2,
            waiting: 1,
        });
        assert!(
            text.contains("iq_cache_lookups_total{cache=\"page\",result=\"hit\"} 2"),
            "{text}"
        );
        assert!(text.contains("iq_cache_lookups_total{cache=\"page\",result=\"miss\"} 1"));
        assert!(text.contains(
            "iq_http_request_duration_seconds_count{route=\"/api/v1/query\",dataset=\"index_daily\",code=\"0\"} 1"
        ));
        assert!(text.contains("iq_db_pool_connections{state=\"in_use\"} 3"));
        assert!(text.contains("iq_db_pool_max_connections 16"));
        assert!(text.contains("iq_db_pool_waiting 1"));
        // A family without series yet is left out, as Prometheus expects.
        assert!(!text.contains("iq_quota_refusals"));
        assert!(text.ends_with("# EOF\n"));
    }
}
