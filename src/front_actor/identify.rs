//! [`Identify`]: steps 1-4 of the check chain alone, for an endpoint that must know its
//! caller but is not a query and counts toward nothing (the event feed, D22). A refused
//! key gets the answer a query would. It must never charge a quota or read data.

use std::net::IpAddr;

use actix::prelude::*;
use iq_actors::auth::Authenticate;
use iq_actors::caller::{Credentials, Identity};
use iq_actors::ApiError;
use tracing::Span;

use super::FrontActor;
use crate::http::request_span::record_caller;

#[derive(Message)]
#[rtype(result = "Result<Identity, ApiError>")]
pub struct Identify {
    pub credentials: Credentials,
    pub client_ip: Option<IpAddr>,
    pub span: Span,
}

impl Handler<Identify> for FrontActor {
    type Result = ResponseFuture<Result<Identity, ApiError>>;

    fn handle(&mut self, msg: Identify, _: &mut Context<Self>) -> Self::Result {
        let links = self.links.clone();
        Box::pin(async move {
            let identity = links
                .auth
                .send(Authenticate {
                    credentials: msg.credentials,
                    client_ip: msg.client_ip,
                    span: msg.span.clone(),
                })
                .await??;
            record_caller(&msg.span, &identity.caller);
            Ok(identity)
        })
    }
}
