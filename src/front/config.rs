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

use super::FrontActor;

/// `GET /api/v1/config` (D9).
#[derive(Message)]
#[rtype(result = "Result<SiteConfig, ApiError>")]
pub struct ShowConfig {
    pub span: Span,
}

#[derive(Debug, Serialize)]
pub struct SiteConfig {
    pub site_name: String,
    pub initialized: bool,
    pub api_version: &'static str,
    pub datasets: Vec<&'static str>,
    pub max_limit: u32,
    pub login: LoginPolicy,
}

#[derive(Debug, Serialize)]
pub struct LoginPolicy {
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
                    max_failures_per_minute: login_limit::PER_USER,
                },
            })
        })
    }
}
