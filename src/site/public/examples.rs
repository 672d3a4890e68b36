//! `GET /examples`: curl and Python for the caller's own datasets and indexes. It is
//! rendered for each request (its base URL is the request's host), not kept with the
//! visitors' pages, and it must never show a key: the examples say where one goes.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;

use super::{caching, chrome};
use crate::site::chrome::Chrome;
use crate::site::reading::read;
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "examples.html")]
struct Examples {
    chrome: Chrome,
    base_url: String,
    index_code: String,
    end_date: String,
    datasets: Vec<&'static str>,
    signed_in: bool,
    client_version: &'static str,
}

/// The Python client's version, read from the one place it is kept: the wheel the
/// install line names is the one `python -m build` makes of this repository.
fn client_version() -> &'static str {
    const SOURCE: &str = include_str!("../../../clients/python/src/iq_client/_version.py");
    SOURCE
        .lines()
        .find_map(|line| line.strip_prefix("__version__ = \""))
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("0")
}

/// `GET /examples`: curl and Python for the caller's own datasets and indexes.
pub async fn examples(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    let page = Examples {
        chrome: chrome(&req, &state, &reading, "examples"),
        base_url: state.site.base_url(&req),
        index_code: reading
            .membership
            .indexes
            .first()
            .cloned()
            .unwrap_or_else(|| "GPU_Index".into()),
        end_date: reading.membership.data_cutoff.clone().unwrap_or_default(),
        datasets: iq_actors::catalogue::api_names(),
        signed_in: reading.signed_in(),
        client_version: client_version(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_client_version_is_read_from_the_client() {
        let version = super::client_version();
        assert!(
            version.split('.').count() == 3 && version.split('.').all(|p| p.parse::<u32>().is_ok()),
            "{version}"
        );
    }
}
