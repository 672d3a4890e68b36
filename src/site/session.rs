//! The session a page acts for, as the pages that need one read it: the member area's
//! session list and the back office's guard.

use actix_web::HttpRequest;
use iq_actors::accounts::ActiveSession;
use iq_actors::ErrorCode;

use super::respond::PageError;
use crate::http::guard::signed_in;

/// The signed-in session. Whatever is wrong with it, the answer is the way to the login
/// form; a fault of the service stays a fault.
pub async fn required(req: &HttpRequest) -> Result<ActiveSession, PageError> {
    signed_in(req).await.map_err(|e| match e.code {
        ErrorCode::Internal => PageError::from(e),
        _ => PageError::log_in_first(),
    })
}
