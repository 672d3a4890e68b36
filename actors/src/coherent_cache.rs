//! A moka cache that invalidation cannot race; every cache of the actors is one.
//!
//! `invalidate_all` on a plain cache leaves a hole: a load that read the database just
//! before a change committed can insert its stale value just after the invalidation,
//! and that value would then live until its TTL. Here every value is tagged with the
//! generation current when its load began, and invalidation bumps the generation, so a
//! value loaded before an invalidation is never served to a request that began after
//! it. Concurrent loads of one key are coalesced (moka's `try_get_with`), so a popular
//! entry that was just invalidated costs one database read, not one per request. A cache
//! given no capacity keeps nothing: every lookup loads (`PAGE_CACHE_MB=0` switches the
//! page cache off; moka alone would keep an entry until its next housekeeping).

use std::borrow::Borrow;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::future::{Cache, CacheBuilder};

use tracing::Instrument;

use crate::metrics::{metrics, Outcomes};
use crate::ApiError;

/// The entries' hasher. A cached query's page key (its dataset, parameters and the
/// indexes its caller sees) was hashed with std's SipHash on every lookup, the largest
/// single cost of finding a page. foldhash is seeded at random per cache too, so a
/// caller who picks keys cannot aim them at one bucket.
type Hasher = foldhash::fast::RandomState;

#[derive(Clone)]
struct Tagged<V> {
    generation: u64,
    value: V,
}

pub struct CoherentCache<K, V> {
    /// The `cache` label of its metrics and spans.
    name: &'static str,
    entries: Cache<K, Tagged<V>, Hasher>,
    generation: AtomicU64,
    lookups: Outcomes,
}

/// How often a request steps over stale entries before loading on its own; each step
/// means an invalidation landed while a load of this very key was in flight.
const STALE_STEPS: usize = 3;

impl<K, V> CoherentCache<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// At most `capacity` entries. `ttl` is only a safety net: changes reach the cache
    /// through [`Self::invalidate_all`].
    pub fn new(name: &'static str, capacity: u64, ttl: Duration) -> Self {
        Self::build(
            name,
            Cache::builder().max_capacity(capacity).time_to_live(ttl),
        )
    }

    /// At most `budget` in the units `weigh` measures entries in.
    pub fn weighted(
        name: &'static str,
        budget: u64,
        ttl: Duration,
        weigh: impl Fn(&V) -> u32 + Send + Sync + 'static,
    ) -> Self {
        Self::build(
            name,
            Cache::builder()
                .max_capacity(budget)
                .weigher(move |_, tagged: &Tagged<V>| weigh(&tagged.value))
                .time_to_live(ttl),
        )
    }

    fn build(name: &'static str, builder: CacheBuilder<K, Tagged<V>, Cache<K, Tagged<V>>>) -> Self {
        CoherentCache {
            name,
            entries: builder.build_with_hasher(Hasher::default()),
            generation: AtomicU64::new(0),
            lookups: metrics().cache_lookups(name),
        }
    }

    /// The cached value, or `load`'s. `loaded` tells whether this call ran `load` (a
    /// cache miss) or was served (a hit, or a wait on another request's load). Each
    /// lookup is a sample of `iq_cache_lookups_total`. A lookup that finds a current
    /// entry at once is only that: a span for it would cost more than the lookup (a
    /// cached key query makes five), so callers whose trace needs it record the hit on
    /// their own span. Any other lookup is a `cache.lookup` span, whose children are
    /// the miss's statements.
    pub async fn get_or_load<Q, F, Fut>(&self, key: &Q, load: F) -> Result<Lookup<V>, ApiError>
    where
        K: Borrow<Q>,
        Q: ToOwned<Owned = K> + Hash + Eq + ?Sized,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, ApiError>>,
    {
        // Derived from moka's own setting, so no flag can disagree with it.
        let keeps = self.entries.policy().max_capacity() != Some(0);
        let found = match keeps {
            true => self.entries.get(key).await,
            false => None,
        };
        if let Some(tagged) = found {
            if tagged.generation >= self.generation.load(Ordering::Acquire) {
                self.lookups.count(true);
                return Ok(Lookup {
                    value: tagged.value,
                    loaded: false,
                });
            }
        }
        // On the heap: a miss's future holds the load's (a pool checkout and a
        // statement, kilobytes), and inline it would make every caller's future that
        // large, moved on every hit as well.
        Box::pin(self.miss(key, load, keeps)).await
    }

    /// [`get_or_load`](Self::get_or_load)'s value alone, for callers that need not know
    /// whether it was loaded.
    pub async fn get<Q, F, Fut>(&self, key: &Q, load: F) -> Result<V, ApiError>
    where
        K: Borrow<Q>,
        Q: ToOwned<Owned = K> + Hash + Eq + ?Sized,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, ApiError>>,
    {
        Ok(self.get_or_load(key, load).await?.value)
    }

    async fn miss<Q, F, Fut>(&self, key: &Q, load: F, keeps: bool) -> Result<Lookup<V>, ApiError>
    where
        K: Borrow<Q>,
        Q: ToOwned<Owned = K> + Hash + Eq + ?Sized,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, ApiError>>,
    {
        let span = tracing::info_span!(
            "cache.lookup",
            cache.name = self.name,
            cache.hit = tracing::field::Empty,
        );
        let lookup = match keeps {
            true => self.lookup(key, load).instrument(span.clone()).await?,
            false => Lookup {
                value: load().instrument(span.clone()).await?,
                loaded: true,
            },
        };
        span.record("cache.hit", !lookup.loaded);
        self.lookups.count(!lookup.loaded);
        Ok(lookup)
    }

    async fn lookup<Q, F, Fut>(&self, key: &Q, load: F) -> Result<Lookup<V>, ApiError>
    where
        K: Borrow<Q>,
        Q: ToOwned<Owned = K> + Hash + Eq + ?Sized,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, ApiError>>,
    {
        let generation = self.generation.load(Ordering::Acquire);
        let mut load = Some(load);
        for _ in 0..STALE_STEPS {
            let tagged = self
                .entries
                .try_get_with_by_ref(key, async {
                    let load = load.take().expect("moka runs an init future at most once");
                    let value = load().await?;
                    Ok::<_, ApiError>(Tagged { generation, value })
                })
                .await
                .map_err(|e| (*e).clone())?;
            let loaded = load.is_none();
            if loaded || tagged.generation >= generation {
                return Ok(Lookup {
                    value: tagged.value,
                    loaded,
                });
            }
            // Loaded before an invalidation this request has seen: drop it, look again.
            self.entries.invalidate(key).await;
        }
        let load = load
            .take()
            .expect("not run: every step found a stale entry");
        Ok(Lookup {
            value: load().await?,
            loaded: true,
        })
    }

    pub fn invalidate_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries.invalidate_all();
    }
}

/// A value from [`CoherentCache::get_or_load`].
pub struct Lookup<V> {
    pub value: V,
    pub loaded: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_load_that_straddles_an_invalidation_is_not_served_after_it() {
        let cache = CoherentCache::<String, u32>::new("test", 10, Duration::from_secs(60));
        // The load reads the old value, then the change lands before it is inserted.
        let stale = cache
            .get_or_load("k", || async {
                cache.invalidate_all();
                Ok(1)
            })
            .await
            .unwrap();
        assert_eq!(
            (stale.value, stale.loaded),
            (1, true),
            "the load itself answers with what it read"
        );
        let fresh = cache.get_or_load("k", || async { Ok(2) }).await.unwrap();
        assert_eq!(fresh.value, 2, "the straddling value must not be served");
        let cached = cache.get_or_load("k", || async { Ok(3) }).await.unwrap();
        assert_eq!(
            (cached.value, cached.loaded),
            (2, false),
            "an undisturbed load is cached"
        );
    }

    /// Eight lookups of one key at once, each load yielding once so that they overlap:
    /// the lookups and how many loads ran.
    async fn eight_at_once(cache: &CoherentCache<String, u32>) -> (Vec<Lookup<u32>>, u64) {
        let loads = AtomicU64::new(0);
        let lookups = (0..8).map(|_| {
            cache.get_or_load("k", || async {
                loads.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                Ok(7)
            })
        });
        let lookups = futures_util::future::join_all(lookups).await;
        let lookups = lookups.into_iter().map(|l| l.expect("loaded")).collect();
        (lookups, loads.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn a_cache_without_capacity_loads_every_time() {
        // Concurrent lookups, so that a cache that kept anything, even only while a
        // load is in flight, would answer some of them without loading.
        let cache = CoherentCache::<String, u32>::new("test", 0, Duration::from_secs(60));
        let (lookups, loads) = eight_at_once(&cache).await;
        assert!(lookups.iter().all(|l| l.loaded));
        assert_eq!(loads, 8);
    }

    #[tokio::test]
    async fn concurrent_misses_of_one_key_load_once() {
        let cache = CoherentCache::<String, u32>::new("test", 10, Duration::from_secs(60));
        let (lookups, loads) = eight_at_once(&cache).await;
        assert!(lookups.iter().all(|l| l.value == 7));
        assert_eq!(loads, 1);
    }
}
