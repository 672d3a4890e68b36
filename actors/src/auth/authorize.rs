//! Steps 5 and 6 of the check chain: the dataset's scope, then the key's index range.
//!
//! Runs after body validation (D1), so a key error always comes before a body error
//! and a body error before these. Website identities need no scopes and have no range.

use crate::caller::Identity;
use crate::query::{ParamValue, Query};
use crate::{ApiError, ErrorCode};

pub fn authorize(identity: &Identity, query: &Query) -> Result<(), ApiError> {
    let grant = &identity.grant;
    if let Some(scopes) = &grant.scopes {
        let needed = query.dataset.scope;
        if !scopes.contains(&needed) {
            return Err(ApiError::forbidden(format!(
                "this key lacks the scope '{}' that dataset {} needs",
                needed.as_str(),
                query.dataset.api_name
            )));
        }
    }
    if let Some(range) = &grant.index_range {
        // Tushare's codes (several, upper-cased) match in any letter case.
        let several = query
            .params
            .values()
            .any(|v| matches!(v, ParamValue::Codes(_)));
        for code in query.named_indexes() {
            let within = if several {
                range.iter().any(|r| r.eq_ignore_ascii_case(code))
            } else {
                range.contains(code)
            };
            if !within {
                return Err(ApiError::new(
                    ErrorCode::IndexNotPermitted,
                    format!("index '{code}' is outside this key's index range"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller::{Audience, Caller, Grant, Tier};
    use crate::catalogue::Scope;
    use serde_json::json;
    use std::collections::BTreeSet;
    use std::sync::Arc;

    fn key_identity(scopes: &[Scope], range: Option<&[&str]>) -> Identity {
        let tier = Arc::new(Tier {
            name: "free".into(),
            per_minute: 10,
            per_day: 10,
            max_rows: 5000,
            max_keys: Some(1),
            delay_days: 7,
            member_indexes: false,
            max_webhooks: 1,
        });
        Identity {
            caller: Caller::Visitor,
            tier,
            grant: Grant {
                audience: Audience::ApiKey,
                member_indexes: false,
                index_range: range.map(|r| Arc::new(r.iter().map(|s| s.to_string()).collect())),
                scopes: Some(Arc::new(scopes.iter().copied().collect::<BTreeSet<_>>())),
                delay_days: 7,
                max_rows: 5000,
            },
        }
    }

    fn query(body: serde_json::Value) -> Query {
        Query::parse(&body).unwrap()
    }

    #[test]
    fn scope_is_checked_before_range() {
        let id = key_identity(&[Scope::IndexRead], Some(&["GPU_Index"]));
        let q = query(json!({"api_name": "index_quote", "params": {"index_code": "SSD_Index"}}));
        assert_eq!(authorize(&id, &q).unwrap_err().code, ErrorCode::Forbidden);
        let q = query(json!({"api_name": "index_daily", "params": {"index_code": "SSD_Index"}}));
        assert_eq!(
            authorize(&id, &q).unwrap_err().code,
            ErrorCode::IndexNotPermitted
        );
        let q = query(json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"}}));
        assert!(authorize(&id, &q).is_ok());
        let q = query(json!({"api_name": "index_daily"}));
        assert!(authorize(&id, &q).is_ok());
    }
}
