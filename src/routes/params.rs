//! Query-string parameters of the back office's GET endpoints. Each endpoint names the
//! parameters it takes; any other, one given twice, or a value out of its bounds is
//! 400 / 40001 naming the parameter. The bounds themselves are the domain's
//! ([`PageRequest`], [`SearchText`], [`usage::MAX_DAYS`]).

use actix_web::web;
use iq_actors::accounts::usage;
use iq_actors::paging::{PageRequest, SearchText};
use iq_actors::ApiError;

/// The longest id a filter takes (ids are opaque, and short).
const MAX_ID_CHARS: usize = 64;
/// The days of usage shown when the client does not say.
const DEFAULT_DAYS: u32 = 30;

pub struct Params(Vec<(String, String)>);

impl Params {
    /// The parameters of `query`, each one of `allowed` and at most once.
    pub fn parse(query: &str, allowed: &[&str]) -> Result<Params, ApiError> {
        let pairs = web::Query::<Vec<(String, String)>>::from_query(query)
            .map_err(|_| ApiError::invalid("the query string is not valid"))?
            .into_inner();
        for (i, (name, _)) in pairs.iter().enumerate() {
            if !allowed.contains(&name.as_str()) {
                return Err(ApiError::invalid(format!(
                    "unknown query parameter '{}'; expected {}",
                    name.chars().take(50).collect::<String>(),
                    allowed.join(", ")
                )));
            }
            if pairs[..i].iter().any(|(other, _)| other == name) {
                return Err(ApiError::invalid(format!(
                    "query parameter '{name}' is given twice"
                )));
            }
        }
        Ok(Params(pairs))
    }

    /// A parameter's text as given, when given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A whole number, when given; `what` completes "`name` must be a whole number ...".
    fn integer(&self, name: &str, what: &str) -> Result<Option<i64>, ApiError> {
        self.get(name)
            .map(|text| {
                text.parse::<i64>()
                    .map_err(|_| ApiError::invalid(format!("{name} must be a whole number {what}")))
            })
            .transpose()
    }

    /// `limit` (1..=`max_limit`, default `default_limit`) and `offset` (default 0).
    pub fn page(&self, default_limit: i64, max_limit: i64) -> Result<PageRequest, ApiError> {
        let limit = self.integer("limit", &format!("from 1 to {max_limit}"))?;
        let offset = self.integer(
            "offset",
            &format!("from 0 to {}", iq_actors::paging::MAX_OFFSET),
        )?;
        PageRequest::new(limit, offset, default_limit, max_limit)
    }

    /// The back office's lists: `limit` 1..=500, default 50.
    pub fn standard_page(&self) -> Result<PageRequest, ApiError> {
        self.page(
            iq_actors::paging::DEFAULT_LIMIT,
            iq_actors::paging::MAX_LIMIT,
        )
    }

    /// A search text (`q`): at most 100 characters, no control character.
    pub fn search(&self, name: &str) -> Result<SearchText, ApiError> {
        SearchText::new(name, self.get(name))
    }

    /// A whole number from `min` to `max`, `default` when not given.
    pub fn bounded(&self, name: &str, min: i64, max: i64, default: i64) -> Result<i64, ApiError> {
        match self.integer(name, &format!("from {min} to {max}"))? {
            None => Ok(default),
            Some(n) if (min..=max).contains(&n) => Ok(n),
            Some(_) => Err(ApiError::invalid(format!(
                "{name} must be a whole number from {min} to {max}"
            ))),
        }
    }

    /// An opaque id to filter by, at most 64 characters.
    pub fn id(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.get(name) {
            Some(id) if id.chars().count() > MAX_ID_CHARS => Err(ApiError::invalid(format!(
                "{name} must be at most {MAX_ID_CHARS} characters"
            ))),
            other => Ok(other),
        }
    }

    /// `days`: 1..=366, default 30.
    pub fn days(&self) -> Result<u32, ApiError> {
        let invalid = || {
            ApiError::invalid(format!(
                "days must be a whole number from 1 to {}",
                usage::MAX_DAYS
            ))
        };
        match self.get("days") {
            None => Ok(DEFAULT_DAYS),
            Some(text) => text
                .parse()
                .ok()
                .filter(|d| (1..=usage::MAX_DAYS).contains(d))
                .ok_or_else(invalid),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_named_parameters_once_each() {
        assert!(Params::parse("", &["limit"]).is_ok());
        assert!(Params::parse("limit=5", &["limit"]).is_ok());
        let unknown = Params::parse("limt=5", &["limit", "offset"]).err().unwrap();
        assert!(unknown.message.contains("limt"), "{}", unknown.message);
        let twice = Params::parse("limit=5&limit=6", &["limit"]).err().unwrap();
        assert!(twice.message.contains("twice"), "{}", twice.message);
    }

    #[test]
    fn pages_and_days_are_bounded() {
        let page = |q: &str| {
            Params::parse(q, &["limit", "offset"])
                .unwrap()
                .standard_page()
        };
        assert_eq!(
            page("").unwrap(),
            PageRequest::standard(None, None).unwrap()
        );
        assert_eq!(page("limit=500&offset=7").unwrap().offset(), 7);
        for bad in [
            "limit=0",
            "limit=501",
            "limit=abc",
            "limit=1.5",
            "offset=-1",
            "limit=",
        ] {
            assert!(page(bad).is_err(), "{bad}");
        }
        let days = |q: &str| Params::parse(q, &["days"]).unwrap().days();
        assert_eq!(days("").unwrap(), 30);
        assert_eq!(days("days=366").unwrap(), 366);
        for bad in ["days=0", "days=367", "days=-1", "days=x"] {
            assert!(days(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn search_text_is_decoded_then_checked() {
        let q = |q: &str| Params::parse(q, &["q"]).unwrap().search("q");
        assert_eq!(q("q=a%25b").unwrap().as_str(), "a%b");
        assert_eq!(q("q=a+b").unwrap().as_str(), "a b");
        assert!(q("q=a%00b").is_err());
        assert!(q(&format!("q={}", "x".repeat(101))).is_err());
    }
}
