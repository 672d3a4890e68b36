//! Tiers (super administrators): every setting of each tier in a form, checked by the
//! same rules as `PUT /api/v1/admin/tiers/{tier}`, with a preview of what changes and
//! for how many users before anything is saved.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::TierSettings;
use iq_actors::caller::Tier;
use iq_actors::ApiError;

use super::{Staff, SuperAdmin};
use crate::site::chrome::Chrome;
use crate::site::form::{Form, Sent};
use crate::site::path_part::PathPart;
use crate::site::respond::{render, see_other, Caching, PageResult};
use crate::state::AppState;

/// A tier's settings as its form shows them.
pub struct TierForm {
    pub name: String,
    pub per_minute: String,
    pub per_day: String,
    pub max_rows: String,
    /// Empty: unlimited.
    pub max_keys: String,
    pub delay_days: String,
    pub member_indexes: bool,
    pub max_webhooks: String,
}

impl From<&Tier> for TierForm {
    fn from(t: &Tier) -> Self {
        TierForm {
            name: t.name.clone(),
            per_minute: t.per_minute.to_string(),
            per_day: t.per_day.to_string(),
            max_rows: t.max_rows.to_string(),
            max_keys: t.max_keys.map(|n| n.to_string()).unwrap_or_default(),
            delay_days: t.delay_days.to_string(),
            member_indexes: t.member_indexes,
            max_webhooks: t.max_webhooks.to_string(),
        }
    }
}

impl TierForm {
    fn read(name: &str, form: &Form) -> TierForm {
        let field = |f: &str| form.one(f).unwrap_or_default().trim().to_owned();
        TierForm {
            name: name.to_owned(),
            per_minute: field("per_minute"),
            per_day: field("per_day"),
            max_rows: field("max_rows"),
            max_keys: field("max_keys"),
            delay_days: field("delay_days"),
            member_indexes: form.one("member_indexes").is_some(),
            max_webhooks: field("max_webhooks"),
        }
    }

    /// The settings the form asks for; the domain checks their ranges.
    fn settings(&self) -> Result<TierSettings, ApiError> {
        let number = |label: &str, text: &str| {
            text.parse::<i32>()
                .map_err(|_| ApiError::invalid(format!("{label} must be a whole number.")))
        };
        Ok(TierSettings {
            per_minute: number("Calls a minute", &self.per_minute)?,
            per_day: number("Calls a day", &self.per_day)?,
            max_rows: number("Rows per request", &self.max_rows)?,
            max_keys: Some(match self.max_keys.as_str() {
                "" => None,
                n => Some(number("API keys", n)?),
            }),
            delay_days: number("Delay", &self.delay_days)?,
            member_indexes: self.member_indexes,
            max_webhooks: Some(number("Webhooks", &self.max_webhooks)?),
        })
    }
}

#[derive(Template)]
#[template(path = "admin/tiers.html")]
struct TiersPage {
    chrome: Chrome,
    tiers: Vec<TierForm>,
    problem: Option<(String, String)>,
    /// The tier just saved, for the notice.
    saved: String,
}

/// `GET /admin/tiers`.
pub async fn list(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    state: web::Data<AppState>,
) -> PageResult {
    let tiers = state.tiers.list().await?;
    let page = TiersPage {
        chrome: staff.chrome(&req, &state),
        tiers: tiers.iter().map(TierForm::from).collect(),
        problem: None,
        saved: saved_tier(&req),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// One changed setting: its label, before and after.
pub struct TierChange {
    pub label: &'static str,
    pub before: String,
    pub after: String,
}

#[derive(Template)]
#[template(path = "admin/tier_preview.html")]
struct Preview {
    chrome: Chrome,
    tier: TierForm,
    changes: Vec<TierChange>,
    users: i64,
    keys: i64,
}

/// `POST /admin/tiers/{tier}`: `action=preview` shows what would change and for whom;
/// `action=save` saves.
pub async fn save(
    req: HttpRequest,
    Sent(staff, form): Sent<Staff<SuperAdmin>>,
    name: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let tiers = state.tiers.list().await?;
    let current = tiers
        .iter()
        .find(|t| t.name == *name)
        .ok_or_else(|| crate::site::respond::PageError::not_found("There is no such tier."))?;
    let mut wanted = TierForm::read(&name, &form);
    // A form from before webhooks (D22) has no such field: the setting stays.
    if wanted.max_webhooks.is_empty() {
        wanted.max_webhooks = current.max_webhooks.to_string();
    }
    let refused = |message: String, tiers: &[Tier], wanted: TierForm| {
        let mut forms: Vec<TierForm> = tiers.iter().map(TierForm::from).collect();
        if let Some(slot) = forms.iter_mut().find(|f| f.name == wanted.name) {
            *slot = wanted;
        }
        TiersPage {
            chrome: staff.chrome(&req, &state),
            tiers: forms,
            problem: Some((name.to_string(), message)),
            saved: String::new(),
        }
    };
    let settings = match wanted.settings() {
        Ok(settings) => settings,
        Err(error) => {
            let page = refused(error.message, &tiers, wanted);
            return render(&page, StatusCode::BAD_REQUEST, Caching::Private);
        }
    };
    if form.one("action") == Some("save") {
        return match state.tiers.replace(&staff.author(), &name, settings).await {
            Ok(_) => Ok(see_other(&format!("/admin/tiers?saved={name}")).finish()),
            Err(error) if error.code == iq_actors::ErrorCode::InvalidRequest => {
                let page = refused(error.message, &tiers, wanted);
                render(&page, StatusCode::BAD_REQUEST, Caching::Private)
            }
            Err(error) => Err(error.into()),
        };
    }
    let before = TierForm::from(current);
    let changes = changes(&before, &wanted);
    let (users, keys) = state.tiers.reach(&name).await?;
    let page = Preview {
        chrome: staff.chrome(&req, &state),
        tier: wanted,
        changes,
        users,
        keys,
    };
    render(&page, StatusCode::OK, Caching::Private)
}

fn changes(before: &TierForm, after: &TierForm) -> Vec<TierChange> {
    let keys = |t: &TierForm| {
        if t.max_keys.is_empty() {
            "unlimited".to_owned()
        } else {
            t.max_keys.clone()
        }
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_owned();
    [
        (
            "Calls a minute",
            before.per_minute.clone(),
            after.per_minute.clone(),
        ),
        ("Calls a day", before.per_day.clone(), after.per_day.clone()),
        (
            "Rows per request",
            before.max_rows.clone(),
            after.max_rows.clone(),
        ),
        ("API keys", keys(before), keys(after)),
        (
            "Delay (trading days)",
            before.delay_days.clone(),
            after.delay_days.clone(),
        ),
        (
            "Member indexes",
            yes_no(before.member_indexes),
            yes_no(after.member_indexes),
        ),
        (
            "Webhooks",
            before.max_webhooks.clone(),
            after.max_webhooks.clone(),
        ),
    ]
    .into_iter()
    .filter(|(_, b, a)| b != a)
    .map(|(label, before, after)| TierChange {
        label,
        before,
        after,
    })
    .collect()
}

/// The longest `saved` echoed: far longer than any tier's name.
const MAX_SAVED_CHARS: usize = 32;

/// The `saved` tier of the query string, if it names one.
fn saved_tier(req: &HttpRequest) -> String {
    web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .ok()
        .and_then(|q| q.get("saved").cloned())
        .filter(|t| t.len() <= MAX_SAVED_CHARS)
        .unwrap_or_default()
}
