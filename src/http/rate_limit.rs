//! The rate-limit headers of a key-authenticated query (D6): `X-RateLimit-Limit`,
//! `X-RateLimit-Remaining` and `X-RateLimit-Reset` for the binding window, the IETF
//! draft fields `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers,
//! structured-field syntax) for both windows, and `Retry-After` on a 429.
//!
//! Rendering only: the numbers come from the QuotaActor's [`Status`].

use actix_web::http::header::{HeaderName, HeaderValue, RETRY_AFTER};
use actix_web::HttpResponse;
use iq_actors::quota::{Status, Window, WindowStatus};

const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");
const POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// A structured-field list of both windows, each an item with two integer parameters:
/// `"minute";q=10;w=60, "day";q=10;w=86400` (the policy) or `"minute";r=9;t=42,
/// "day";r=9;t=72000` (the current state). Written straight into one string: it is on
/// every key-authenticated answer, and formatting it piece by piece cost more than the
/// quota decision it reports.
fn windows(status: &Status, parameters: impl Fn(&WindowStatus) -> [(char, i64); 2]) -> String {
    let mut out = String::with_capacity(64);
    let mut digits = itoa::Buffer::new();
    for (i, window) in [status.minute, status.day].iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(window.window.as_str());
        out.push('"');
        for (name, value) in parameters(window) {
            out.push(';');
            out.push(name);
            out.push('=');
            out.push_str(digits.format(value));
        }
    }
    out
}

fn policy(status: &Status) -> String {
    windows(status, |w| [('q', w.limit), ('w', w.window.seconds())])
}

fn current(status: &Status) -> String {
    windows(status, |w| [('r', w.remaining), ('t', w.reset)])
}

/// Adds the headers to `response`; `refused` is the window that refused a 429.
pub fn apply(response: &mut HttpResponse, status: &Status, refused: Option<Window>) {
    let binding: WindowStatus = status.binding(refused);
    let headers = response.headers_mut();
    let number = |n: i64| HeaderValue::from(n);
    headers.insert(LIMIT, number(binding.limit));
    headers.insert(REMAINING, number(binding.remaining));
    headers.insert(RESET, number(binding.reset));
    if refused.is_some() {
        headers.insert(RETRY_AFTER, number(binding.reset));
    }
    for (name, value) in [(POLICY, policy(status)), (RATELIMIT, current(status))] {
        // Built from integers and fixed names: always a valid header value.
        if let Ok(value) = HeaderValue::try_from(value) {
            headers.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> Status {
        Status {
            day: WindowStatus {
                window: Window::Day,
                limit: 100,
                remaining: 0,
                reset: 3600,
            },
            minute: WindowStatus {
                window: Window::Minute,
                limit: 10,
                remaining: 7,
                reset: 42,
            },
        }
    }

    #[test]
    fn a_refusal_reports_the_refusing_window_and_retry_after() {
        let mut response = HttpResponse::TooManyRequests().finish();
        apply(&mut response, &status(), Some(Window::Day));
        let header = |name: &str| response.headers().get(name).unwrap().to_str().unwrap();
        assert_eq!(header("x-ratelimit-limit"), "100");
        assert_eq!(header("x-ratelimit-remaining"), "0");
        assert_eq!(header("x-ratelimit-reset"), "3600");
        assert_eq!(header("retry-after"), "3600");
        assert_eq!(
            header("ratelimit-policy"),
            "\"minute\";q=10;w=60, \"day\";q=100;w=86400"
        );
        assert_eq!(
            header("ratelimit"),
            "\"minute\";r=7;t=42, \"day\";r=0;t=3600"
        );
    }

    #[test]
    fn a_success_reports_the_window_with_fewer_calls_left() {
        let mut status = status();
        status.day.remaining = 50;
        let mut response = HttpResponse::Ok().finish();
        apply(&mut response, &status, None);
        let header = |name: &str| response.headers().get(name).unwrap().to_str().unwrap();
        assert_eq!(header("x-ratelimit-limit"), "10");
        assert_eq!(header("x-ratelimit-remaining"), "7");
        assert!(response.headers().get("retry-after").is_none());
    }
}
