//! The index series and who may see which (D4), plus the member-coverage check (step 8).
//!
//! The registry is a snapshot of the `indexes` table; the dataset actor caches it and
//! drops it on invalidation. Nothing here touches the database except [`IndexRegistry::load`].

use std::sync::Arc;

use crate::caller::{Audience, Grant};
use crate::catalogue::Dataset;
use crate::db::Traced;
use crate::ApiError;

/// The longest index code a page or parameter may name: every code is far shorter, so a
/// longer one names no index and is turned away before any lookup.
pub const MAX_CODE_CHARS: usize = 64;

/// The back-office public level of an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    Aggregate,
    IndexOnly,
    Member,
    Private,
}

impl Visibility {
    pub fn parse(text: &str) -> Option<Visibility> {
        Some(match text {
            "aggregate" => Visibility::Aggregate,
            "index_only" => Visibility::IndexOnly,
            "member" => Visibility::Member,
            "private" => Visibility::Private,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    pub index_code: String,
    pub sort_no: i32,
    pub visibility: Visibility,
}

/// Which indexes a grant resolves to, in display order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct View {
    /// Indexes whose rows the caller sees.
    pub visible: Arc<[String]>,
    /// Of those, the ones whose detail (`weighted_price`, quotes) the caller sees.
    pub detailed: Arc<[String]>,
}

/// All index definitions, in display order (`sort_no`, then `index_code` by code point).
#[derive(Debug, Clone, Default)]
pub struct IndexRegistry {
    indexes: Vec<IndexDef>,
    /// The views of grants without a key's index range, by audience and member
    /// coverage: nearly every query's, made once instead of per query.
    common: Vec<((Audience, bool), View)>,
}

impl IndexRegistry {
    pub fn new(mut indexes: Vec<IndexDef>) -> Self {
        indexes.sort_by(|a, b| {
            (a.sort_no, a.index_code.as_bytes()).cmp(&(b.sort_no, b.index_code.as_bytes()))
        });
        let mut registry = IndexRegistry {
            indexes,
            common: Vec::new(),
        };
        for audience in [Audience::Website, Audience::ApiKey] {
            for member_indexes in [false, true] {
                let grant = Grant {
                    audience,
                    member_indexes,
                    index_range: None,
                    scopes: None,
                    delay_days: 0,
                    max_rows: 0,
                };
                let view = registry.view(&grant);
                registry.common.push(((audience, member_indexes), view));
            }
        }
        registry
    }

    pub async fn load(client: &impl Traced) -> Result<Self, ApiError> {
        let rows = client
            .query_named(
                "indexes.load",
                "SELECT index_code, sort_no, visibility FROM indexes",
                &[],
            )
            .await?;
        let mut indexes = Vec::with_capacity(rows.len());
        for row in rows {
            let visibility: String = row.try_get("visibility")?;
            indexes.push(IndexDef {
                index_code: row.try_get("index_code")?,
                sort_no: row.try_get("sort_no")?,
                visibility: Visibility::parse(&visibility).ok_or_else(|| {
                    ApiError::internal(format_args!("unknown visibility {visibility:?}"))
                })?,
            });
        }
        Ok(IndexRegistry::new(indexes))
    }

    pub fn get(&self, index_code: &str) -> Option<&IndexDef> {
        self.indexes.iter().find(|i| i.index_code == index_code)
    }

    /// The index whose code is `index_code` in any letter case (Tushare's, D24).
    pub fn find_ignoring_case(&self, index_code: &str) -> Option<&IndexDef> {
        self.indexes
            .iter()
            .find(|i| i.index_code.eq_ignore_ascii_case(index_code))
    }

    fn covers(&self, grant: &Grant, def: &IndexDef) -> bool {
        let tier_covers = match def.visibility {
            Visibility::Aggregate | Visibility::IndexOnly => true,
            Visibility::Member => grant.member_indexes,
            Visibility::Private => false,
        };
        let in_range = grant
            .index_range
            .as_ref()
            .is_none_or(|range| range.contains(&def.index_code));
        tier_covers && in_range
    }

    fn shows_detail(grant: &Grant, def: &IndexDef) -> bool {
        grant.audience == Audience::ApiKey || def.visibility != Visibility::IndexOnly
    }

    /// The indexes `grant` sees, in display order.
    pub fn view(&self, grant: &Grant) -> View {
        if grant.index_range.is_none() {
            let class = (grant.audience, grant.member_indexes);
            if let Some((_, view)) = self.common.iter().find(|(c, _)| *c == class) {
                return view.clone();
            }
        }
        let visible: Vec<&IndexDef> = self
            .indexes
            .iter()
            .filter(|d| self.covers(grant, d))
            .collect();
        let detailed = visible
            .iter()
            .filter(|d| Self::shows_detail(grant, d))
            .map(|d| d.index_code.clone())
            .collect();
        View {
            visible: visible.iter().map(|d| d.index_code.clone()).collect(),
            detailed,
        }
    }

    /// Step 8 for a named index: a member index the grant does not cover is 40301, and
    /// so are the quotes of an `index_only` index for a website identity (D4). Unknown
    /// and private codes pass: they simply match no rows (D2).
    pub fn check_named(
        &self,
        grant: &Grant,
        dataset: &Dataset,
        index_code: &str,
    ) -> Result<(), ApiError> {
        let Some(def) = self.get(index_code) else {
            return Ok(());
        };
        match def.visibility {
            Visibility::Member if !grant.member_indexes => Err(ApiError::forbidden(format!(
                "index '{index_code}' is available to professional members only"
            ))),
            Visibility::IndexOnly if dataset.detail_only && grant.audience == Audience::Website => {
                Err(ApiError::forbidden(format!(
                    "specification quotes of index '{index_code}' are available through an API key only"
                )))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::dataset;
    use crate::ErrorCode;
    use std::collections::BTreeSet;

    fn registry() -> IndexRegistry {
        let def = |code: &str, sort_no, visibility| IndexDef {
            index_code: code.to_string(),
            sort_no,
            visibility,
        };
        IndexRegistry::new(vec![
            def("Server_Index", 10, Visibility::Aggregate),
            def("SSD_Index", 50, Visibility::IndexOnly),
            def("GPU_Index", 50, Visibility::IndexOnly),
            def("Hardware_Index", 80, Visibility::Member),
            def("Secret_Index", 5, Visibility::Private),
        ])
    }

    fn grant(audience: Audience, member: bool) -> Grant {
        Grant {
            audience,
            member_indexes: member,
            index_range: None,
            scopes: None,
            delay_days: 0,
            max_rows: 5000,
        }
    }

    #[test]
    fn website_free_sees_public_indexes_with_detail_only_for_aggregate() {
        let view = registry().view(&grant(Audience::Website, false));
        assert_eq!(&*view.visible, ["Server_Index", "GPU_Index", "SSD_Index"]);
        assert_eq!(&*view.detailed, ["Server_Index"]);
    }

    #[test]
    fn keys_see_detail_and_members_see_member_indexes_never_private() {
        let view = registry().view(&grant(Audience::ApiKey, true));
        assert_eq!(
            &*view.visible,
            ["Server_Index", "GPU_Index", "SSD_Index", "Hardware_Index"]
        );
        assert_eq!(view.visible, view.detailed);
    }

    #[test]
    fn a_view_made_once_is_the_view_a_range_of_every_index_makes() {
        let reg = registry();
        let every = Arc::new(reg.indexes.iter().map(|d| d.index_code.clone()).collect());
        for audience in [Audience::Website, Audience::ApiKey] {
            for member in [false, true] {
                let mut ranged = grant(audience, member);
                ranged.index_range = Some(Arc::clone(&every));
                assert_eq!(reg.view(&grant(audience, member)), reg.view(&ranged));
            }
        }
    }

    #[test]
    fn a_key_range_narrows_the_view() {
        let mut g = grant(Audience::ApiKey, true);
        g.index_range = Some(Arc::new(BTreeSet::from([
            "GPU_Index".to_string(),
            "Secret_Index".to_string(),
        ])));
        assert_eq!(&*registry().view(&g).visible, ["GPU_Index"]);
    }

    #[test]
    fn named_member_index_and_website_quotes_of_index_only_are_refused() {
        let reg = registry();
        let daily = dataset("index_daily").unwrap();
        let quote = dataset("index_quote").unwrap();
        let free = grant(Audience::Website, false);
        assert_eq!(
            reg.check_named(&free, daily, "Hardware_Index")
                .unwrap_err()
                .code,
            ErrorCode::Forbidden
        );
        assert_eq!(
            reg.check_named(&free, quote, "GPU_Index").unwrap_err().code,
            ErrorCode::Forbidden
        );
        assert!(reg.check_named(&free, daily, "GPU_Index").is_ok());
        assert!(reg.check_named(&free, daily, "Secret_Index").is_ok());
        assert!(reg.check_named(&free, daily, "Nope").is_ok());
        assert!(reg
            .check_named(&grant(Audience::ApiKey, false), quote, "GPU_Index")
            .is_ok());
        assert!(reg
            .check_named(&grant(Audience::Website, true), daily, "Hardware_Index")
            .is_ok());
    }
}
