//! The composite indexes (D8) as the `composite_bases` table holds them: each with its
//! base indexes and their weights. Read by an import with its other rules, so a
//! composite's definition is data, not code.
//!
//! Read only; this must never compute a composite value (see `quotes::recalc`).

use rust_decimal::Decimal;

use crate::db::Traced;
use crate::ApiError;

/// A composite index and the base indexes it is derived from, with their weights (D8:
/// the six public indexes but the rental one, equal weights by default), as the
/// `composite_bases` table holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct Composite {
    pub code: String,
    /// Base index codes, in a fixed order (by code).
    pub bases: Vec<String>,
    /// The weight of each base, in the order of `bases`.
    pub weights: Vec<Decimal>,
}

/// Every composite index with its bases.
pub async fn composites(client: &impl Traced) -> Result<Vec<Composite>, ApiError> {
    let rows = client
        .query_named(
            "recalc.read_composites",
            "SELECT composite_code, base_code, weight FROM composite_bases \
             ORDER BY composite_code, base_code",
            &[],
        )
        .await?;
    let mut composites: Vec<Composite> = Vec::new();
    for row in &rows {
        let code: String = row.try_get("composite_code")?;
        if composites.last().is_none_or(|c| c.code != code) {
            composites.push(Composite {
                code,
                bases: Vec::new(),
                weights: Vec::new(),
            });
        }
        if let Some(composite) = composites.last_mut() {
            composite.bases.push(row.try_get("base_code")?);
            composite.weights.push(row.try_get("weight")?);
        }
    }
    Ok(composites)
}
