//! What every page shows around its content: the site's name, the navigation, who is
//! signed in (with a logout form carrying its CSRF token), the asset links and the
//! request id (in the footer, as in the `X-Request-Id` header).

use actix_web::HttpRequest;
use iq_actors::caller::{Account, Role};

use super::assets::{CSS, ICON, SCRIPT};
use super::form_token;
use crate::http::RequestId;
use crate::state::AppState;

pub struct Chrome {
    pub site_name: String,
    pub request_id: String,
    pub css: String,
    /// The site icon's address.
    pub icon: String,
    pub script: String,
    /// The signed-in user's name.
    pub user: Option<String>,
    /// The CSRF token of this browser's forms, where it holds a cookie to bind it to.
    pub form_token: String,
    /// The navigation entry of this page.
    pub nav: &'static str,
    /// Whether the signed-in user may use the back office (administrators).
    pub back_office: bool,
}

impl Chrome {
    pub fn new(
        req: &HttpRequest,
        state: &AppState,
        user: Option<&Account>,
        nav: &'static str,
    ) -> Chrome {
        let form_token = form_token::binding(req)
            .map(|binding| state.site.forms.token(&binding))
            .unwrap_or_default();
        Chrome {
            site_name: state.site.name.clone(),
            request_id: RequestId::current().to_string(),
            css: CSS.href(),
            icon: ICON.href(),
            script: SCRIPT.href(),
            user: user.map(|u| u.username.clone()),
            form_token,
            nav,
            back_office: user.is_some_and(|u| u.role >= Role::Admin),
        }
    }
}
