//! The application state every handler reads: the domain's services and actors, the
//! keyless protections, the stop flag and the website's part ([`Site`]: its name, form
//! tokens, clock and visitor page cache), built once by `startup` and shared by the JSON
//! API's handlers (`routes`) and the website's (`site`).
//!
//! It sits below both and above the HTTP edge: it must never depend on `routes`, `site`
//! or `startup`, and the edge (`http`) never depends on it (the edge takes only the
//! narrow pieces it needs, such as the accounts and the stop flag, as app data of their
//! own).

use actix_web::HttpRequest;
use ipnet::IpNet;
use iq_actors::accounts::{Accounts, IndexSettings, Tiers};
use iq_actors::calendar::Calendar;
use iq_actors::caller::Credentials;
use iq_actors::events::EventFeed;
use iq_actors::imports::Importer;
use iq_actors::webhooks::Webhooks;

use std::sync::atomic::AtomicBool;

use crate::front_actor::{Ask, Fronts, QueryOutcome, RunQuery};
use crate::http::client_ip::client_ip;
use crate::http::drain::Draining;
use crate::http::protection::{KeylessSubject, Protection};
use crate::http::{HttpError, RequestId};

mod site;
pub use site::{FormTokens, Rendered, Site, VisitorPages};

pub struct AppState {
    /// The FrontActors, one per worker thread: `front.send` asks this thread's.
    pub front: Fronts,
    /// Users, sessions, API keys and their usage.
    pub accounts: Accounts,
    /// Tier settings.
    pub tiers: Tiers,
    /// The indexes' names, visibility and display order.
    pub index_settings: IndexSettings,
    pub trusted_proxies: Vec<IpNet>,
    pub cookie_secure: bool,
    /// `SETUP_TOKEN_REQUIRED`: `POST /api/v1/setup` needs the printed token (D28).
    pub setup_token_required: bool,
    /// The largest quote file an import accepts.
    pub import_max_bytes: usize,
    /// Quote imports, under the configured bounds.
    pub importer: Importer,
    /// The trading calendar's writer.
    pub calendar: Calendar,
    /// The event feed (D22).
    pub events: EventFeed,
    /// Members' webhook endpoints (D22).
    pub webhooks: Webhooks,
    /// For `/readyz` and `/metrics` only; every other handler goes through an actor or
    /// one of the services above.
    pub pool: deadpool_postgres::Pool,
    /// The keyless protections (D15).
    pub protection: Protection,
    /// Set once the service is known to be initialised; it never becomes unset, so a
    /// late `POST /setup` is answered from memory (D15).
    pub initialized: AtomicBool,
    /// The website's name, form tokens, clock and visitor page cache.
    pub site: Site,
    /// Set by a stop signal: `/readyz` answers 503 and answers close their connections.
    pub draining: Draining,
}

impl AppState {
    pub(crate) fn client_ip(&self, req: &HttpRequest) -> Option<std::net::IpAddr> {
        client_ip(req, &self.trusted_proxies)
    }

    /// Runs `body` as `POST /api/v1/query` does for `credentials`: a caller without a
    /// key (a session, a visitor) is first held to the website's per-minute limit
    /// (D15), then this thread's FrontActor runs the check chain. The endpoint and the
    /// reference's "Try it" both run queries through here, so the page answers exactly
    /// what the endpoint would.
    pub(crate) async fn run_query(
        &self,
        request_id: &RequestId,
        credentials: Credentials,
        client_ip: Option<std::net::IpAddr>,
        body: Ask,
    ) -> Result<QueryOutcome, HttpError> {
        if !matches!(credentials, Credentials::ApiKey(_)) {
            let subject = self.keyless_subject(&credentials, client_ip).await?;
            self.protection.admit(&self.protection.website, subject)?;
        }
        let message = RunQuery {
            request_id: request_id.shared(),
            credentials,
            client_ip,
            body,
            span: tracing::Span::current(),
        };
        Ok(match self.front.send(message).await {
            Ok(outcome) => outcome,
            Err(error) => QueryOutcome::from(iq_actors::ApiError::from(error)),
        })
    }

    /// Who a caller without a key is, for the website's per-minute limit (D15): its
    /// address, or the user its session belongs to (D28: every session of a user
    /// counts together).
    pub(crate) async fn keyless_subject<'a>(
        &self,
        credentials: &'a Credentials,
        client_ip: Option<std::net::IpAddr>,
    ) -> Result<KeylessSubject<'a>, HttpError> {
        let Credentials::Session(id) = credentials else {
            return Ok(KeylessSubject::Address(client_ip));
        };
        let digest = iq_actors::accounts::token::digest(id);
        if let Some(user) = self.protection.session_owners.get(&digest) {
            return Ok(KeylessSubject::User(user));
        }
        Ok(match self.accounts.session_owner(id).await? {
            Some(user) => {
                self.protection.session_owners.insert(digest, user);
                KeylessSubject::User(user)
            }
            // An unknown session is refused right after; it is counted by its cookie.
            None => KeylessSubject::Session(id),
        })
    }

    /// Where a login comes from: the client's address and its browser's `User-Agent`.
    pub(crate) fn origin(&self, req: &HttpRequest) -> iq_actors::accounts::Origin {
        iq_actors::accounts::Origin {
            address: self.client_ip(req),
            user_agent: req
                .headers()
                .get(actix_web::http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            device: crate::http::session::device(req),
        }
    }
}
