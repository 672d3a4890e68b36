//! The audit trail's page (super administrators: its records hold every user's and key's
//! settings): every back-office change, newest first,
//! filtered like `GET /api/v1/admin/audit` (actor, action, target, UTC days), each with
//! what it changed field by field and the `request_id` to find its logs by. The users,
//! keys, indexes and imports pages link here for one thing's history. Read only.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::audit::{Action, AuditFilter, AuditRecord, Kind};
use serde::Deserialize;
use serde_json::Value;

use super::pager::Pager;
use super::{Staff, SuperAdmin};
use crate::site::chrome::Chrome;
use crate::site::respond::{render, Caching, PageResult};
use crate::state::AppState;

/// The longest a value is shown in a change before it is cut (the API has it whole).
const SHOWN_CHARS: usize = 120;

#[derive(Deserialize)]
pub struct AuditFilters {
    actor: Option<String>,
    action: Option<String>,
    target: Option<String>,
    from: Option<String>,
    to: Option<String>,
    page: Option<i64>,
}

/// One record as a row of the table.
pub struct AuditLine {
    pub at: String,
    pub actor: String,
    pub action: String,
    pub target: String,
    /// `field: before → after`, one per field that changed.
    pub changes: Vec<String>,
    pub request_id: String,
}

impl From<AuditRecord> for AuditLine {
    fn from(r: AuditRecord) -> Self {
        AuditLine {
            at: r.at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            actor: r
                .actor
                .map_or_else(|| "(no one signed in)".to_owned(), |a| a.username),
            action: r.action,
            target: format!("{}:{}", r.target.kind, r.target.id),
            changes: changes(r.before.as_ref(), r.after.as_ref()),
            request_id: r.request_id.unwrap_or_default(),
        }
    }
}

/// What a change did, field by field: the fields whose value differs between `before`
/// and `after` (all of them for a creation or a deletion).
fn changes(before: Option<&Value>, after: Option<&Value>) -> Vec<String> {
    let fields = |v: Option<&Value>| match v {
        Some(Value::Object(map)) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let (before, after) = (fields(before), fields(after));
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|name| before.get(*name) != after.get(*name))
        .map(|name| match (before.get(name), after.get(name)) {
            (Some(b), Some(a)) => format!("{name}: {} → {}", shown(b), shown(a)),
            (None, Some(a)) => format!("{name}: {}", shown(a)),
            (Some(b), None) => format!("{name}: {} (removed)", shown(b)),
            (None, None) => String::new(),
        })
        .collect()
}

fn shown(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > SHOWN_CHARS {
        let cut: String = text.chars().take(SHOWN_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[derive(Template)]
#[template(path = "admin/audit.html")]
struct AuditPage {
    chrome: Chrome,
    lines: Vec<AuditLine>,
    actor: String,
    action: String,
    target: String,
    from: String,
    to: String,
    actions: Vec<&'static str>,
    kinds: Vec<&'static str>,
    pager: Pager,
}

/// `GET /admin/audit?actor=&action=&target=&from=&to=&page=`; a bad filter is a 400
/// page naming it.
pub async fn list(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    query: web::Query<AuditFilters>,
    state: web::Data<AppState>,
) -> PageResult {
    // The words the form shows again are the ones the filter reads (it trims them, and
    // an empty one filters nothing).
    let text = |v: &Option<String>| v.as_deref().unwrap_or_default().trim().to_owned();
    let (actor, action, target, from, to) = (
        text(&query.actor),
        text(&query.action),
        text(&query.target),
        text(&query.from),
        text(&query.to),
    );
    let filters = [
        ("actor", actor.as_str()),
        ("action", action.as_str()),
        ("target", target.as_str()),
        ("from", from.as_str()),
        ("to", to.as_str()),
    ];
    let filter = AuditFilter::parse(
        Some(&actor),
        Some(&action),
        Some(&target),
        Some(&from),
        Some(&to),
    )?;
    let (page, request) = Pager::request(query.page)?;
    let found = state.accounts.audit_trail(&filter, request).await?;
    let page = AuditPage {
        chrome: staff.chrome(&req, &state),
        pager: Pager::new(page, found.total, &filters),
        lines: found.items.into_iter().map(AuditLine::from).collect(),
        actor,
        action,
        target,
        from,
        to,
        actions: Action::ALL.map(Action::as_str).to_vec(),
        kinds: Kind::ALL.map(Kind::as_str).to_vec(),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_shows_only_the_fields_that_moved() {
        let before = json!({"tier": "free", "active": true, "name": "x"});
        let after = json!({"tier": "pro", "active": true, "name": "x"});
        assert_eq!(changes(Some(&before), Some(&after)), ["tier: free → pro"]);
        assert_eq!(changes(None, Some(&json!({"a": 1}))), ["a: 1"]);
        assert_eq!(changes(Some(&json!({"a": 1})), None), ["a: 1 (removed)"]);
        let long = json!({"open_days": "1".repeat(500)});
        assert!(changes(None, Some(&long))[0].ends_with('…'));
    }
}
