//! Page boundaries, so that a deep page costs what a first page costs (issue 14).
//!
//! Clients page with `limit`/`offset` (spec 4.3), and `OFFSET n` makes PostgreSQL read
//! and drop n rows before the page: a sync of a large dataset would cost O(n) a page.
//! So for each *walk* (everything a page's rows depend on except `limit` and `offset`)
//! we remember *marks*: offset -> the sort key of the row just before it, learnt from
//! the pages we served. A request at offset O starts from the nearest mark B <= O with
//! `WHERE (sort columns) > (mark) ... OFFSET O - B` (a keyset seek, then a short skip),
//! which answers exactly the rows `OFFSET O` would because every dataset's ORDER BY is
//! a total order (a unique key; see [`super::keyset`]).
//!
//! A mark must never outlive the data it was read from: the dataset actor's
//! `Invalidate` drops every walk together with the page cache, and a walk knows the
//! generation it was made in, so a load that straddles an invalidation neither records
//! its marks nor keeps a page it read from an older mark (it re-reads with a plain
//! OFFSET). This module never reads the database and never decides what a page holds:
//! a mark only chooses where PostgreSQL starts reading.

use std::collections::{BTreeMap, VecDeque};
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use tokio_postgres::types::Type;
use tokio_postgres::Row;

use crate::coherent_cache::CoherentCache;
use crate::ApiError;

/// Marks kept per walk. A sequential sync needs only its latest one; the rest serve
/// retries, several clients syncing the same walk, and out-of-order requests. When full
/// the oldest-recorded mark goes: a sequential walk's marks are recorded in order.
const MARKS_PER_WALK: usize = 128;

/// One value of a sort key, of a type we can bind back into the statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortValue {
    Int(i32),
    BigInt(i64),
    Text(String),
    Date(NaiveDate),
    Instant(DateTime<Utc>),
}

impl SortValue {
    /// Column `i` of `row`; `None` if it is NULL or of a type not listed here (then the
    /// row yields no mark: a NULL would not compare, and the page keeps using OFFSET).
    fn read(row: &Row, i: usize) -> Result<Option<SortValue>, ApiError> {
        let ty = row.columns()[i].type_();
        Ok(if *ty == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)?.map(SortValue::Int)
        } else if *ty == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)?.map(SortValue::BigInt)
        } else if *ty == Type::TEXT || *ty == Type::VARCHAR {
            row.try_get::<_, Option<String>>(i)?.map(SortValue::Text)
        } else if *ty == Type::DATE {
            row.try_get::<_, Option<NaiveDate>>(i)?.map(SortValue::Date)
        } else if *ty == Type::TIMESTAMPTZ {
            row.try_get::<_, Option<DateTime<Utc>>>(i)?
                .map(SortValue::Instant)
        } else {
            None
        })
    }
}

/// The values of a row's sort columns, in ORDER BY order.
pub type SortKey = Arc<[SortValue]>;

/// The sort key of `row`, its sort columns at `positions`; `None` if one is unusable.
pub fn sort_key(row: &Row, positions: &[usize]) -> Result<Option<SortKey>, ApiError> {
    let mut key = Vec::with_capacity(positions.len());
    for &i in positions {
        match SortValue::read(row, i)? {
            Some(value) => key.push(value),
            None => return Ok(None),
        }
    }
    Ok(Some(key.into()))
}

/// Where a page's statement starts: after the row with sort key `after` (from the
/// first row when `None`), skipping `skip` rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub after: Option<SortKey>,
    pub skip: u64,
}

/// The marks of one walk, made in one generation of the data.
pub struct Walk {
    generation: u64,
    marks: Mutex<Marks>,
}

#[derive(Default)]
struct Marks {
    by_offset: BTreeMap<u64, SortKey>,
    /// Offsets in the order they were recorded, oldest first, for eviction.
    recorded: VecDeque<u64>,
}

impl Walk {
    fn new(generation: u64) -> Walk {
        Walk {
            generation,
            marks: Mutex::new(Marks::default()),
        }
    }

    /// Where to read the page at `offset`: after the nearest mark at or below it, or
    /// from the first row (offset 0 is always a boundary and needs no mark).
    pub fn start(&self, offset: u64) -> Start {
        let marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        match marks.by_offset.range(..=offset).next_back() {
            Some((&mark, key)) => Start {
                after: Some(key.clone()),
                skip: offset - mark,
            },
            None => Start {
                after: None,
                skip: offset,
            },
        }
    }

    /// Remembers that the row before `offset` has sort key `key`.
    fn record(&self, offset: u64, key: SortKey) {
        if offset == 0 {
            return;
        }
        let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        if marks.by_offset.insert(offset, key).is_some() {
            // Known already (the same key: the data has not changed in this generation).
            return;
        }
        marks.recorded.push_back(offset);
        while marks.recorded.len() > MARKS_PER_WALK {
            if let Some(old) = marks.recorded.pop_front() {
                marks.by_offset.remove(&old);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.marks.lock().unwrap().by_offset.len()
    }
}

/// The walks of one dataset actor, at most `capacity` of them (least used go first).
/// A walk lives at most the cache TTL from when it was made, however busy: a sync
/// longer than that reads one page with a plain OFFSET each TTL, then seeks again.
pub struct Boundaries<K> {
    walks: CoherentCache<K, Arc<Walk>>,
    generation: AtomicU64,
}

impl<K> Boundaries<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    pub fn new(capacity: u64, ttl: Duration) -> Self {
        Boundaries {
            walks: CoherentCache::new("boundaries", capacity, ttl),
            generation: AtomicU64::new(0),
        }
    }

    /// The walk of `key` in the current generation (empty if new).
    pub async fn walk(&self, key: &K) -> Result<Arc<Walk>, ApiError> {
        // Stamped when made: a new walk has no marks, and every mark recorded into it
        // comes from a read that began after it was made (see `record`), so the
        // generation then is the right one. Read earlier, a walk made across an
        // invalidation would stay useless (never current) until its TTL.
        self.walks
            .get(key, || async {
                Ok(Arc::new(Walk::new(self.generation.load(Ordering::Acquire))))
            })
            .await
    }

    /// Whether no invalidation has happened since `walk` was made: its marks still
    /// describe the data, and a page read from one of them is the OFFSET page.
    pub fn is_current(&self, walk: &Walk) -> bool {
        walk.generation == self.generation.load(Ordering::Acquire)
    }

    /// Records the mark a page read at `offset` teaches: the key of its last row
    /// (`shown` rows), the boundary of the next page. Ignored unless `walk` is current
    /// now, so a page read before an invalidation leaves nothing behind.
    pub fn record(&self, walk: &Walk, offset: u64, shown: usize, key: SortKey) {
        if shown > 0 && self.is_current(walk) {
            walk.record(offset + shown as u64, key);
        }
    }

    /// Drops every walk; marks recorded by loads still in flight are discarded.
    pub fn invalidate_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.walks.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: i32) -> SortKey {
        Arc::from(vec![SortValue::Int(n)])
    }

    fn boundaries() -> Boundaries<&'static str> {
        Boundaries::new(8, Duration::from_secs(60))
    }

    #[tokio::test]
    async fn a_page_starts_after_the_nearest_mark_at_or_below_its_offset() {
        let b = boundaries();
        let walk = b.walk(&"w").await.unwrap();
        let plain = |skip| Start { after: None, skip };
        assert_eq!(walk.start(0), plain(0));
        assert_eq!(walk.start(70), plain(70), "no mark yet: plain OFFSET");
        // Page [0, 10) ends with key 9 and page [30, 40) with key 39.
        b.record(&walk, 0, 10, key(9));
        b.record(&walk, 30, 10, key(39));
        let after = |n, skip| Start {
            after: Some(key(n)),
            skip,
        };
        assert_eq!(walk.start(5), plain(5), "below the first mark");
        assert_eq!(
            walk.start(10),
            after(9, 0),
            "exactly at a mark: keyset only"
        );
        assert_eq!(walk.start(25), after(9, 15), "between marks: the lower one");
        assert_eq!(walk.start(40), after(39, 0));
        assert_eq!(walk.start(1_000), after(39, 960));
        // A page of no rows (past the end) teaches nothing.
        b.record(&walk, 2_000, 0, key(0));
        assert_eq!(walk.start(2_000), after(39, 1_960));
    }

    #[tokio::test]
    async fn an_invalidation_drops_the_marks_and_refuses_late_ones() {
        let b = boundaries();
        let old = b.walk(&"w").await.unwrap();
        b.record(&old, 0, 10, key(9));
        assert!(b.is_current(&old));
        b.invalidate_all();
        // A page that read from `old` finishes after the change: not current, so its
        // page is re-read and its mark is not kept.
        assert!(!b.is_current(&old));
        b.record(&old, 10, 10, key(19));
        assert_eq!(old.len(), 1);
        let new = b.walk(&"w").await.unwrap();
        assert!(b.is_current(&new));
        assert_eq!(
            new.start(10),
            Start {
                after: None,
                skip: 10
            },
            "a new walk knows no marks"
        );
    }

    #[tokio::test]
    async fn walks_are_separate_and_bounded() {
        let b = boundaries();
        let one = b.walk(&"one").await.unwrap();
        b.record(&one, 0, 10, key(9));
        let two = b.walk(&"two").await.unwrap();
        assert_eq!(two.start(10).after, None);
        for page in 0..(MARKS_PER_WALK as u64 + 20) {
            b.record(&two, page * 10, 10, key(page as i32 * 10 + 9));
        }
        assert_eq!(two.len(), MARKS_PER_WALK);
        // The oldest went; the latest, which the next page of a sequential walk needs,
        // stayed.
        assert_eq!(two.start(10).after, None);
        let last = MARKS_PER_WALK as u64 + 20;
        assert_eq!(two.start(last * 10).after, Some(key(last as i32 * 10 - 1)));
        // The same walk is shared by every lookup of its key.
        assert!(Arc::ptr_eq(&one, &b.walk(&"one").await.unwrap()));
    }
}
