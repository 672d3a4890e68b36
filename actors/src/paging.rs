//! Paged lists of the back office: what a client may ask for ([`PageRequest`],
//! [`SearchText`]) with the bounds every such list keeps, and what it gets back
//! ([`Page`]). The HTTP layer reads query strings into these; the checks live here so
//! the website's pages and the JSON endpoints refuse the same inputs.

use serde::Serialize;

use crate::ApiError;

/// Rows a page holds when the client does not say.
pub const DEFAULT_LIST_ROWS: i64 = 50;
/// The most rows one page may hold.
pub const MAX_LIST_ROWS: i64 = 500;
/// The furthest a page may start: far past any list the back office holds, and small
/// enough that no statement is asked to skip an absurd number of rows.
pub const MAX_OFFSET: i64 = 10_000_000;
/// The longest search text.
pub const MAX_SEARCH_CHARS: usize = 100;

/// Which rows of a list: `limit` rows from `offset` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    limit: i64,
    offset: i64,
}

impl PageRequest {
    /// `limit` 1..=`max_limit` (default `default_limit`), `offset` 0..=[`MAX_OFFSET`]
    /// (default 0); a value out of range is 40001 naming the parameter.
    pub fn new(
        limit: Option<i64>,
        offset: Option<i64>,
        default_limit: i64,
        max_limit: i64,
    ) -> Result<PageRequest, ApiError> {
        let limit = limit.unwrap_or(default_limit);
        if !(1..=max_limit).contains(&limit) {
            return Err(ApiError::invalid(format!(
                "limit must be a whole number from 1 to {max_limit}"
            )));
        }
        let offset = offset.unwrap_or(0);
        if !(0..=MAX_OFFSET).contains(&offset) {
            return Err(ApiError::invalid(format!(
                "offset must be a whole number from 0 to {MAX_OFFSET}"
            )));
        }
        Ok(PageRequest { limit, offset })
    }

    /// The back office's lists: 50 rows by default, at most 500.
    pub fn standard(limit: Option<i64>, offset: Option<i64>) -> Result<PageRequest, ApiError> {
        Self::new(limit, offset, DEFAULT_LIST_ROWS, MAX_LIST_ROWS)
    }

    pub fn limit(&self) -> i64 {
        self.limit
    }

    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The page of `items` (this request's rows) out of `total` matching rows.
    pub fn page<T>(&self, items: Vec<T>, total: i64) -> Page<T> {
        let shown = self.offset.saturating_add(items.len() as i64);
        Page {
            has_more: shown < total,
            items,
            total,
            limit: self.limit,
            offset: self.offset,
        }
    }

    /// The page of the items `read` makes of `rows` (this request's rows), out of
    /// `total` matching rows; the first row it cannot read is the answer.
    pub fn page_of<R, T>(
        &self,
        rows: &[R],
        total: i64,
        read: impl FnMut(&R) -> Result<T, ApiError>,
    ) -> Result<Page<T>, ApiError> {
        let items = rows.iter().map(read).collect::<Result<Vec<_>, _>>()?;
        Ok(self.page(items, total))
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest {
            limit: DEFAULT_LIST_ROWS,
            offset: 0,
        }
    }
}

/// One page of a list: `{items, total, limit, offset, has_more}`. `total` counts every
/// matching row; `has_more` says whether rows follow this page (ask again with
/// `offset + items.len()`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page<T> {
    #[cfg_attr(feature = "openapi", schema(schema_with = rows_of::<T>))]
    pub items: Vec<T>,
    /// rows matching the filters
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
    /// whether rows follow this page
    pub has_more: bool,
}

/// The schema of a page's `items`: references to `T`'s schema. utoipa would inline `T`'s
/// whole schema into every page of it, a second copy of the contract.
#[cfg(feature = "openapi")]
fn rows_of<T: utoipa::ToSchema>() -> utoipa::openapi::schema::Array {
    utoipa::openapi::schema::Array::new(utoipa::openapi::Ref::from_schema_name(T::name()))
}

/// A case-insensitive substring to look for, checked (at most [`MAX_SEARCH_CHARS`]
/// characters, no control character) and trimmed; empty means "no filter".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchText(String);

impl SearchText {
    /// `name` is the parameter's name, for the error message.
    pub fn new(name: &str, text: Option<&str>) -> Result<SearchText, ApiError> {
        let text = text.unwrap_or_default();
        if text.chars().count() > MAX_SEARCH_CHARS || text.chars().any(char::is_control) {
            return Err(ApiError::invalid(format!(
                "{name} must be at most {MAX_SEARCH_CHARS} characters, without control characters"
            )));
        }
        Ok(SearchText(text.trim().to_string()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A `LIKE` pattern matching any text that contains this one, with `\` as the
    /// escape character: `%`, `_` and `\` in the search text match only themselves.
    /// `None` when there is nothing to look for.
    pub fn like_pattern(&self) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        let mut pattern = String::with_capacity(self.0.len() + 2);
        pattern.push('%');
        for c in self.0.chars() {
            if matches!(c, '%' | '_' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push('%');
        Some(pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_bounded() {
        let page = PageRequest::standard(None, None).unwrap();
        assert_eq!((page.limit(), page.offset()), (50, 0));
        assert!(PageRequest::standard(Some(0), None).is_err());
        assert!(PageRequest::standard(Some(501), None).is_err());
        assert!(PageRequest::standard(Some(500), Some(MAX_OFFSET)).is_ok());
        assert!(PageRequest::standard(None, Some(-1)).is_err());
        assert!(PageRequest::standard(None, Some(MAX_OFFSET + 1)).is_err());
        let imports = PageRequest::new(None, None, 100, 500).unwrap();
        assert_eq!(imports.limit(), 100);
    }

    #[test]
    fn has_more_follows_the_total() {
        let page = PageRequest::standard(Some(2), Some(0)).unwrap();
        assert!(page.page(vec![1, 2], 3).has_more);
        assert!(!page.page(vec![1, 2], 2).has_more);
        let past = PageRequest::standard(Some(2), Some(10)).unwrap();
        let empty = past.page(Vec::<i32>::new(), 3);
        assert!(!empty.has_more);
        assert_eq!((empty.total, empty.offset, empty.limit), (3, 10, 2));
    }

    #[test]
    fn search_text_escapes_like_wildcards() {
        let q = |t: &str| SearchText::new("q", Some(t)).unwrap().like_pattern();
        assert_eq!(q(""), None);
        assert_eq!(q("  "), None);
        assert_eq!(q(" bob "), Some("%bob%".into()));
        assert_eq!(q("50%_off\\"), Some("%50\\%\\_off\\\\%".into()));
        assert!(SearchText::new("q", Some(&"x".repeat(100))).is_ok());
        assert!(SearchText::new("q", Some(&"x".repeat(101))).is_err());
        assert!(SearchText::new("q", Some("a\u{0}b")).is_err());
        assert!(SearchText::new("q", Some("a\nb")).is_err());
    }
}
