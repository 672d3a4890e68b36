//! Where a back-office list page stands (its page number, how many pages, how many rows
//! in all) and the links to the pages around it, which keep the list's filters.

use iq_actors::paging::PageRequest;

use crate::site::respond::PageError;

/// Rows of a list page.
const PAGE_ROWS: i64 = 50;

/// Where a list page stands: the page number and whether others exist.
pub struct Pager {
    pub page: i64,
    pub pages: i64,
    pub total: i64,
    /// The query string without `page`, for the links.
    pub base: String,
}

impl Pager {
    /// The page the query asks for (the first without one) and the rows to read for it.
    pub fn request(page: Option<i64>) -> Result<(i64, PageRequest), PageError> {
        let page = page.unwrap_or(1).max(1);
        let offset = (page - 1).saturating_mul(PAGE_ROWS);
        Ok((page, PageRequest::standard(Some(PAGE_ROWS), Some(offset))?))
    }

    /// Page `page` of a list of `total` rows shown with `filters` (name and value, in
    /// the order of the query string), which the links to other pages keep.
    pub fn new(page: i64, total: i64, filters: &[(&str, &str)]) -> Pager {
        let base = filters
            .iter()
            .map(|(name, value)| format!("{name}={}", url_encode(value)))
            .collect::<Vec<_>>()
            .join("&");
        Pager {
            page,
            pages: ((total + PAGE_ROWS - 1) / PAGE_ROWS).max(1),
            total,
            base,
        }
    }
}

/// A query-string value, percent-encoded.
fn url_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
