//! Compression of answers (D16): an answer of 1 KiB or more is sent gzip-compressed when
//! the request's `Accept-Encoding` allows gzip, with `Vary: Accept-Encoding`.
//!
//! Query answers made from a cached page arrive here already compressed (the page was
//! compressed once and spliced into this answer's envelope, see
//! [`super::envelope::success_page`]); everything else of a known size is compressed
//! here. A streamed body (an import's progress page) is never held back to be
//! compressed: its parts must reach the browser as they happen.

use actix_web::body::{self, BodySize, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, AcceptEncoding, Encoding, HeaderMap, HeaderValue};
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use iq_actors::gzip;

/// Smaller answers go as they are: compressing them saves too little to pay for itself.
pub const MIN_SIZE: usize = 1024;

/// Whether the request accepts a gzip-encoded answer.
pub fn accepts_gzip(request: &impl HttpMessage) -> bool {
    gzip_accepted(request.headers())
}

/// Whether these headers' `Accept-Encoding` lines allow gzip (no line: they do not ask
/// for it). What nearly every client sends (none; `identity`; `gzip, deflate`, as
/// Python's http.client and requests do) is answered without the full negotiation,
/// which cost more than the rest of the compression decision.
fn gzip_accepted(headers: &HeaderMap) -> bool {
    let lines = || headers.get_all(header::ACCEPT_ENCODING);
    plain_list(lines()).unwrap_or_else(|| negotiated(lines()))
}

/// actix-web's negotiation between gzip and no encoding: weights, wildcards and all.
fn negotiated<'a>(lines: impl Iterator<Item = &'a HeaderValue> + 'a) -> bool {
    header::from_comma_delimited(lines).is_ok_and(|ranked| {
        AcceptEncoding(ranked).negotiate([Encoding::gzip(), Encoding::identity()].iter())
            == Some(Encoding::gzip())
    })
}

/// For `Accept-Encoding` lines that only list common codings, without weights or
/// wildcards: whether gzip is among them. `None` for anything else, which the full
/// negotiation decides.
fn plain_list<'a>(lines: impl Iterator<Item = &'a HeaderValue>) -> Option<bool> {
    const PLAIN: [&str; 6] = ["gzip", "deflate", "br", "zstd", "identity", "compress"];
    let mut gzip = false;
    for line in lines {
        for coding in line.to_str().ok()?.split(',') {
            let coding = coding.trim();
            if !PLAIN.iter().any(|plain| coding.eq_ignore_ascii_case(plain)) {
                return None;
            }
            gzip |= coding.eq_ignore_ascii_case("gzip");
        }
    }
    Some(gzip)
}

/// Marks an answer body as gzip, varying by `Accept-Encoding`.
pub fn mark_gzip(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
}

/// Middleware: compresses answers of a known size of at least [`MIN_SIZE`] bytes.
pub async fn compress(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let res = next.call(req).await?.map_into_boxed_body();
    let sized = match res.response().body().size() {
        BodySize::Sized(n) => usize::try_from(n).unwrap_or(usize::MAX),
        _ => return Ok(res),
    };
    if sized < MIN_SIZE || res.headers().contains_key(header::CONTENT_ENCODING) {
        return Ok(res);
    }
    // Read only once the answer turns out large enough to compress (most answers,
    // probes and small envelopes, never need it), from the request the answer carries.
    if !accepts_gzip(res.request()) {
        let mut res = res;
        res.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        return Ok(res);
    }
    let (req, res) = res.into_parts();
    let (mut res, body) = res.into_parts();
    // A sized body is in memory already; reading it cannot wait on anything.
    let bytes = body::to_bytes(body)
        .await
        .map_err(|e| actix_web::error::ErrorInternalServerError(format!("answer body: {e}")))?;
    let compressed = gzip::whole(&bytes);
    mark_gzip(res.headers_mut());
    let res = res.set_body(BoxBody::new(compressed));
    Ok(ServiceResponse::new(req, res))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn common_lists_are_answered_without_the_parser() {
        let plain = |lines: &[&'static str]| {
            plain_list(
                lines
                    .iter()
                    .map(|l| HeaderValue::from_static(l))
                    .collect::<Vec<_>>()
                    .iter(),
            )
        };
        assert_eq!(plain(&[]), Some(false));
        assert_eq!(plain(&["identity"]), Some(false));
        assert_eq!(plain(&["gzip, deflate"]), Some(true));
        assert_eq!(plain(&["br", "GZip"]), Some(true));
        assert_eq!(plain(&["gzip;q=0"]), None);
        assert_eq!(plain(&["*"]), None);
    }

    proptest::proptest! {
        /// Whatever the lines, the answer is the full negotiation's.
        #[test]
        fn the_answer_is_the_negotiations(lines in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(vec![
                "gzip", "GZIP", "deflate", "br", "zstd", "identity", "compress", "*",
                "x-gzip", "gzip;q=0", "identity;q=0", "*;q=0", "gzip;q=0.5", "", " ", "bogus",
            ]), 0..5).prop_map(|codings| codings.join(",")),
            0..3,
        )) {
            let mut headers = HeaderMap::new();
            for line in &lines {
                headers.append(header::ACCEPT_ENCODING, HeaderValue::from_str(line).unwrap());
            }
            let asked = negotiated(headers.get_all(header::ACCEPT_ENCODING));
            proptest::prop_assert_eq!(gzip_accepted(&headers), asked, "{:?}", lines);
        }
    }
}
