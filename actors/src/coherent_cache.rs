//! A moka cache that invalidation cannot race.
//!
//! `invalidate_all` on a plain cache leaves a hole: a load that read the database just
//! before a change committed can insert its stale value just after the invalidation,
//! and that value would then live until its TTL. Here every value is tagged with the
//! generation current when its load began, and invalidation bumps the generation, so a
//! value loaded before an invalidation is never served after it.

use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::future::Cache;

use crate::ApiError;

pub struct CoherentCache<K, V> {
    entries: Cache<K, (u64, V)>,
    generation: AtomicU64,
}

impl<K, V> CoherentCache<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// `ttl` is only a safety net: changes reach the cache through [`Self::invalidate_all`].
    pub fn new(capacity: u64, ttl: Duration) -> Self {
        CoherentCache {
            entries: Cache::builder()
                .max_capacity(capacity)
                .time_to_live(ttl)
                .build(),
            generation: AtomicU64::new(0),
        }
    }

    /// The cached value, or `load`'s (cached unless an invalidation happened meanwhile).
    pub async fn get_or_load<F, Fut>(&self, key: K, load: F) -> Result<V, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, ApiError>>,
    {
        let generation = self.generation.load(Ordering::Acquire);
        if let Some((tag, value)) = self.entries.get(&key).await {
            if tag == generation {
                return Ok(value);
            }
        }
        let value = load().await?;
        self.entries.insert(key, (generation, value.clone())).await;
        Ok(value)
    }

    pub fn invalidate_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_load_that_straddles_an_invalidation_is_not_served_after_it() {
        let cache = CoherentCache::<&str, u32>::new(10, Duration::from_secs(60));
        // The load reads the old value, then the change lands before it is inserted.
        let stale = cache
            .get_or_load("k", || async {
                cache.invalidate_all();
                Ok(1)
            })
            .await
            .unwrap();
        assert_eq!(stale, 1, "the load itself answers with what it read");
        let fresh = cache.get_or_load("k", || async { Ok(2) }).await.unwrap();
        assert_eq!(fresh, 2, "the straddling value must not be served");
        let cached = cache.get_or_load("k", || async { Ok(3) }).await.unwrap();
        assert_eq!(cached, 2, "an undisturbed load is cached");
    }
}
