//! Reading the audit trail: `GET /api/v1/admin/audit` and the back office's page, newest
//! first, filtered by actor, action, target and a range of UTC days, one page at a time.
//!
//! Filters are checked here so the page and the endpoint refuse the same inputs, and the
//! statement names only the filters given, so each page is a range scan of the index
//! that filter has (sql/V23). Read-only: nothing here may change a record.

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

use crate::wire_date::WireDate;
use serde::Serialize;
use serde_json::Value;
use tokio_postgres::types::ToSql;

use super::{Action, Kind};
use crate::db::Traced;
use crate::paging::{Page, PageRequest};
use crate::ApiError;

/// The longest user name or target id a filter may hold.
const MAX_FILTER_CHARS: usize = 200;

/// Which records to list; every part optional, all given parts must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// the acting user's name, exactly
    pub actor: Option<String>,
    pub action: Option<Action>,
    pub kind: Option<Kind>,
    /// with `kind`: one thing's history
    pub target_id: Option<String>,
    /// first UTC day, inclusive
    pub from: Option<NaiveDate>,
    /// last UTC day, inclusive
    pub to: Option<NaiveDate>,
}

impl AuditFilter {
    /// Reads the filters as the query string and the page's form send them; empty
    /// values count as absent. Bad ones are 40001 naming the parameter.
    pub fn parse(
        actor: Option<&str>,
        action: Option<&str>,
        target: Option<&str>,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<AuditFilter, ApiError> {
        fn given(v: Option<&str>) -> Option<&str> {
            v.map(str::trim).filter(|v| !v.is_empty())
        }
        let bounded = |name: &str, v: &str| -> Result<String, ApiError> {
            if v.chars().count() > MAX_FILTER_CHARS || v.chars().any(char::is_control) {
                return Err(ApiError::invalid(format!(
                    "{name} must be at most {MAX_FILTER_CHARS} characters without control \
                     characters"
                )));
            }
            Ok(v.to_owned())
        };
        let actor = given(actor).map(|v| bounded("actor", v)).transpose()?;
        let action = given(action)
            .map(|v| {
                Action::parse(v).ok_or_else(|| {
                    ApiError::invalid(format!(
                        "action must be one of {}",
                        Action::ALL.map(Action::as_str).join(", ")
                    ))
                })
            })
            .transpose()?;
        let (kind, target_id) = match given(target) {
            None => (None, None),
            Some(target) => {
                let (kind, id) = match target.split_once(':') {
                    Some((kind, id)) => (kind, Some(bounded("target", id)?)),
                    None => (target, None),
                };
                let kind = Kind::parse(kind).ok_or_else(|| {
                    ApiError::invalid(format!(
                        "target must be a kind ({}) or kind:id, as user:42",
                        Kind::ALL.map(Kind::as_str).join(", ")
                    ))
                })?;
                (Some(kind), id.filter(|id| !id.is_empty()))
            }
        };
        let day = |name: &str, v: Option<&str>| -> Result<Option<NaiveDate>, ApiError> {
            given(v)
                .map(|v| {
                    WireDate::parse_dashed(v)
                        .ok()
                        .map(|d| d.0)
                        .filter(|d| (1..=9999).contains(&chrono::Datelike::year(d)))
                        .ok_or_else(|| {
                            ApiError::invalid(format!(
                                "{name} must be a date as YYYY-MM-DD, years 1 to 9999"
                            ))
                        })
                })
                .transpose()
        };
        let (from, to) = (day("from", from)?, day("to", to)?);
        if let (Some(from), Some(to)) = (from, to) {
            if from > to {
                return Err(ApiError::invalid("from must not be after to"));
            }
        }
        Ok(AuditFilter {
            actor,
            action,
            kind,
            target_id,
            from,
            to,
        })
    }
}

/// One change as the trail shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditRecord {
    /// opaque, increasing with each record
    pub id: String,
    pub at: DateTime<Utc>,
    /// the acting user; `null` when no one was signed in (set-up, a reset link, the
    /// command line)
    pub actor: Option<AuditActor>,
    /// as `user.changed`, `key.deleted`, `import.accepted`
    pub action: String,
    pub target: AuditTarget,
    /// the target before the change (`null` for a creation); never a secret
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub before: Option<Value>,
    /// the target after the change (`null` for a deletion); never a secret
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub after: Option<Value>,
    /// the request that made the change; `null` for the command line
    pub request_id: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditActor {
    pub id: String,
    /// the user name when the change was made
    pub username: String,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditTarget {
    /// `user`, `key`, `tier`, `index`, `calendar`, `import` or `webhook`
    pub kind: String,
    pub id: String,
}

/// The page of records matching `filter`, newest first.
pub async fn list(
    client: &impl Traced,
    filter: &AuditFilter,
    page: PageRequest,
) -> Result<Page<AuditRecord>, ApiError> {
    let from = filter.from.map(start_of);
    let to = filter.to.map(|d| start_of(d) + TimeDelta::days(1));
    let action = filter.action.map(Action::as_str);
    let kind = filter.kind.map(Kind::as_str);
    // Each filter given is one condition on its column, its value a parameter.
    let tests: [(&str, Option<&(dyn ToSql + Sync)>); 6] = [
        ("actor =", filter.actor.as_ref().map(|v| v as _)),
        ("action =", action.as_ref().map(|v| v as _)),
        ("target_kind =", kind.as_ref().map(|v| v as _)),
        ("target_id =", filter.target_id.as_ref().map(|v| v as _)),
        ("at >=", from.as_ref().map(|v| v as _)),
        ("at <", to.as_ref().map(|v| v as _)),
    ];
    let mut conditions = Vec::new();
    let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
    for (test, value) in tests {
        if let Some(value) = value {
            params.push(value);
            conditions.push(format!("{test} ${}", params.len()));
        }
    }
    let filtered = if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    };
    let total: i64 = client
        .query_value_named(
            "audit.count",
            &format!("SELECT count(*) FROM audit_log {filtered}"),
            &params,
        )
        .await?;
    let (limit, offset) = (page.limit(), page.offset());
    let n = params.len();
    params.push(&limit);
    params.push(&offset);
    let rows = client
        .query_named(
            "audit.page",
            &format!(
                "SELECT audit_id, at, actor_id, actor, action, target_kind, target_id, \
                        before, after, request_id \
                 FROM audit_log {filtered} ORDER BY audit_id DESC LIMIT ${} OFFSET ${}",
                n + 1,
                n + 2
            ),
            &params,
        )
        .await?;
    page.page_of(&rows, total, |row| {
        let actor_id: Option<i64> = row.try_get("actor_id")?;
        Ok(AuditRecord {
            id: row.try_get::<_, i64>("audit_id")?.to_string(),
            at: row.try_get("at")?,
            actor: match actor_id {
                Some(id) => Some(AuditActor {
                    id: id.to_string(),
                    username: row.try_get("actor")?,
                }),
                None => None,
            },
            action: row.try_get("action")?,
            target: AuditTarget {
                kind: row.try_get("target_kind")?,
                id: row.try_get("target_id")?,
            },
            before: row.try_get("before")?,
            after: row.try_get("after")?,
            request_id: row.try_get("request_id")?,
        })
    })
}

fn start_of(day: NaiveDate) -> DateTime<Utc> {
    day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(
        actor: &str,
        action: &str,
        target: &str,
        from: &str,
        to: &str,
    ) -> Result<AuditFilter, ApiError> {
        AuditFilter::parse(
            Some(actor),
            Some(action),
            Some(target),
            Some(from),
            Some(to),
        )
    }

    #[test]
    fn empty_filters_are_absent_and_a_target_is_a_kind_or_kind_and_id() {
        assert_eq!(parse("", "", "", "", "").unwrap(), AuditFilter::default());
        let f = parse(
            " root ",
            "tier.changed",
            "user:42",
            "2026-01-01",
            "2026-01-31",
        )
        .unwrap();
        assert_eq!(f.actor.as_deref(), Some("root"));
        assert_eq!(f.action, Some(Action::TierChanged));
        assert_eq!(
            (f.kind, f.target_id.as_deref()),
            (Some(Kind::User), Some("42"))
        );
        let kind_only = parse("", "", "index", "", "").unwrap();
        assert_eq!(
            (kind_only.kind, kind_only.target_id),
            (Some(Kind::Index), None)
        );
    }

    #[test]
    fn bad_filters_name_their_parameter() {
        for (bad, name) in [
            (parse("", "user.exploded", "", "", ""), "action"),
            (parse("", "", "planet:3", "", ""), "target"),
            (parse("", "", "", "2026-02-30", ""), "from"),
            (parse("", "", "", "", "yesterday"), "to"),
            (parse("", "", "", "2026-02-02", "2026-02-01"), "from"),
            (parse("", "", "", "", "+262142-12-31"), "to"),
            (parse("", "", "", "-5000-01-01", ""), "from"),
            (parse(&"x".repeat(201), "", "", "", ""), "actor"),
            (parse("a\u{7}b", "", "", "", ""), "actor"),
        ] {
            let error = bad.unwrap_err();
            assert!(error.message.starts_with(name), "{}", error.message);
        }
    }
}
