//! Which form a query's page is answered in (D18, D29): the JSON envelope unless
//! `Accept` names CSV, an Arrow stream or a Parquet file. A media range counts unless
//! refused with `q=0`; of several, the highest weight wins, the first on a tie; other
//! ranges (`application/json`, `*/*`) leave the envelope. Only a page changes form:
//! refusals stay JSON envelopes whatever `Accept` says.

use actix_web::http::header::ACCEPT;
use actix_web::HttpRequest;
use iq_actors::dataset::Columnar;

/// The form of a successful query's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFormat {
    Json,
    Csv,
    Columnar(Columnar),
}

impl PageFormat {
    /// The media type `Accept` names this form by (the envelope has none of its own).
    fn media_type(self) -> Option<&'static str> {
        match self {
            PageFormat::Json => None,
            PageFormat::Csv => Some("text/csv"),
            PageFormat::Columnar(format) => Some(format.media_type()),
        }
    }
}

const CHOICES: [PageFormat; 3] = [
    PageFormat::Csv,
    PageFormat::Columnar(Columnar::Arrow),
    PageFormat::Columnar(Columnar::Parquet),
];

/// The form the request asks for.
pub fn asked(req: &HttpRequest) -> PageFormat {
    let mut best = (PageFormat::Json, 0.0_f32);
    let ranges = req
        .headers()
        .get_all(ACCEPT)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    for range in ranges {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or_default();
        let Some(format) = CHOICES.into_iter().find(|f| {
            f.media_type()
                .is_some_and(|m| m.eq_ignore_ascii_case(media))
        }) else {
            continue;
        };
        let weight = parts
            .find_map(|p| p.strip_prefix("q="))
            .map_or(1.0, |q| q.parse::<f32>().unwrap_or(0.0));
        if weight > best.1 {
            best = (format, weight);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn asks(accept: &str) -> PageFormat {
        asked(
            &TestRequest::default()
                .insert_header((ACCEPT, accept))
                .to_http_request(),
        )
    }

    #[test]
    fn accept_is_read_as_media_ranges() {
        assert_eq!(asks("text/csv"), PageFormat::Csv);
        assert_eq!(asks("application/json;q=0.5, Text/CSV"), PageFormat::Csv);
        assert_eq!(asks("application/json, text/csv"), PageFormat::Csv);
        assert_eq!(asks("text/csv; charset=utf-8"), PageFormat::Csv);
        assert_eq!(asks("application/json"), PageFormat::Json);
        assert_eq!(asks("*/*"), PageFormat::Json);
        assert_eq!(asks("text/csv;q=0"), PageFormat::Json);
        assert_eq!(asks("text/csv;q=x"), PageFormat::Json);
        assert_eq!(asks("text/csvx"), PageFormat::Json);
        assert_eq!(
            asked(&TestRequest::default().to_http_request()),
            PageFormat::Json
        );
    }

    #[test]
    fn the_heaviest_named_form_wins() {
        let arrow = PageFormat::Columnar(Columnar::Arrow);
        let parquet = PageFormat::Columnar(Columnar::Parquet);
        assert_eq!(asks("application/vnd.apache.arrow.stream"), arrow);
        assert_eq!(asks("application/vnd.apache.parquet"), parquet);
        assert_eq!(
            asks("application/vnd.apache.parquet;q=0.9, application/vnd.apache.arrow.stream"),
            arrow
        );
        assert_eq!(
            asks("application/vnd.apache.arrow.stream, application/vnd.apache.parquet"),
            arrow
        );
        assert_eq!(
            asks("text/csv;q=0.2, application/vnd.apache.parquet;q=0.3"),
            parquet
        );
        assert_eq!(
            asks("application/vnd.apache.arrow.stream;q=0"),
            PageFormat::Json
        );
    }
}
