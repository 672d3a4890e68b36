//! [`ShowConfig`]: `GET /api/v1/config` (D9), what a client reads before it logs in:
//! the site's name, whether it is initialised, the datasets and the bounds. It must
//! never depend on who asks.

use actix::prelude::*;

use iq_actors::accounts::login_limit;
use iq_actors::auth::SiteStatus;
use iq_actors::catalogue;
use iq_actors::ApiError;
use serde::Serialize;
use tracing::Span;
use utoipa::ToSchema;

use super::FrontActor;
use iq_actors::catalogue::DatasetName;

/// `GET /api/v1/config` (D9).
#[derive(Message)]
#[rtype(result = "Result<SiteConfig, ApiError>")]
pub struct ShowConfig {
    pub span: Span,
}

/// Site configuration before login.
#[derive(Debug, Serialize, ToSchema)]
pub struct SiteConfig {
    /// `SITE_NAME`
    pub site_name: String,
    /// whether the first super administrator exists (`POST /api/v1/setup` is closed)
    pub initialized: bool,
    /// `v1`
    #[schema(value_type = String)]
    pub api_version: &'static str,
    /// the datasets of `POST /api/v1/query`
    #[schema(value_type = Vec<DatasetName>)]
    pub datasets: Vec<&'static str>,
    /// the server's cap on `limit` (`MAX_LIMIT`)
    #[schema(minimum = 1, maximum = 5000)]
    pub max_limit: u32,
    pub login: LoginPolicy,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LoginPolicy {
    /// failed logins for one user name from one address in a calendar minute before
    /// logins of that name from that address answer 429 (D23)
    #[schema(value_type = u32)]
    pub max_failures_per_minute: i32,
}

impl Handler<ShowConfig> for FrontActor {
    type Result = ResponseFuture<Result<SiteConfig, ApiError>>;

    fn handle(&mut self, msg: ShowConfig, _: &mut Context<Self>) -> Self::Result {
        let links = self.links.clone();
        let site_name = self.site_name.to_string();
        let max_limit = self.max_limit;
        Box::pin(async move {
            let initialized = links.auth.send(SiteStatus { span: msg.span }).await??;
            Ok(SiteConfig {
                site_name,
                initialized,
                api_version: "v1",
                datasets: catalogue::api_names(),
                max_limit,
                login: LoginPolicy {
                    max_failures_per_minute: login_limit::PER_USER_AND_ADDRESS,
                },
            })
        })
    }
}
