//! The one error type every actor and domain function returns.
//!
//! An [`ApiError`] carries a stable business code (spec part 7) and a message a client
//! may read. Internal failures are logged with their cause where they are created (so
//! the log line carries the request's `request_id` from the current span) and reach the
//! client only as code 50000 with a generic message: never a database or Rust detail.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Declares [`ErrorCode`] from its one table: each row is the variant, the numeric code
/// clients decide on, the HTTP status it answers with, and what it tells a client (the
/// variant's doc, the OpenAPI document's description and docs/api.md's table). A new
/// code is one new row; nothing else maps codes to numbers, statuses or meanings.
macro_rules! error_table {
    ($($variant:ident => $code:literal, $status:literal, $meaning:literal;)+) => {
        /// Business error codes of the interface specification, part 7.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $(#[doc = $meaning] $variant,)+
        }

        impl ErrorCode {
            /// Every code, in numeric order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The numeric code clients decide on.
            pub const fn as_u32(self) -> u32 {
                match self {
                    $(ErrorCode::$variant => $code,)+
                }
            }

            /// The HTTP status the code answers with (Tushare's wire, D24, answers 200
            /// instead for every code below 500; `/readyz` answers 503 with 50000).
            pub const fn http_status(self) -> u16 {
                match self {
                    $(ErrorCode::$variant => $status,)+
                }
            }

            /// What the code tells a client, in one line.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $meaning,)+
                }
            }
        }
    };
}

error_table! {
    InvalidRequest => 40001, 400, "bad body, parameter, field, header or date; the message names the culprit";
    ImportRejected => 40002, 422, "the quote file was rejected: `errors` lists its first bad rows (at most 1,000) and `errors_total` counts them all";
    AuthenticationRequired => 40101, 401, "authentication required: this endpoint needs a session";
    InvalidCredentials => 40102, 401, "credentials (API key, password, session) invalid";
    CredentialsExpired => 40103, 401, "credentials (API key, session) expired";
    Forbidden => 40301, 403, "not allowed (role, CSRF token, key, user, IP address, scope, member index, website quotes)";
    IndexNotPermitted => 40302, 403, "index outside the key's range";
    NotFound => 40401, 404, "no such resource or endpoint (also a method an endpoint does not take)";
    Conflict => 40901, 409, "duplicate or conflict (already initialised, taken name, key limit, an import running, days holding data)";
    RateLimited => 42901, 429, "per-minute limit (key, account, website caller, login attempts); `Retry-After` says when to come back";
    DailyQuotaExhausted => 42902, 429, "daily quota used up; waiting a minute does not help";
    Internal => 50000, 500, "internal error; quote the `request_id`";
}

/// A refusal or failure with the business code and the client-facing message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    /// The first bad rows of a rejected import (40002, D8), at most 1,000, in row
    /// order; empty otherwise.
    pub errors: Vec<RowError>,
    /// How many problems the rejected import has in all, listed or not (at least
    /// `errors.len()`); 0 when `errors` is empty.
    pub errors_total: usize,
    /// For a limit's refusal (42901) counted in the domain: seconds until it may be
    /// tried again (`Retry-After`).
    pub retry_after: Option<i64>,
}

// Defined here, with the error that carries it, so the error type every module uses
// depends on no import code (imports::validate re-exports it). Its doc comment is the
// OpenAPI schema's description.
/// One problem, as the `errors` array of a 422 / 40002 lists it (and the import's
/// record keeps it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RowError {
    /// As the spreadsheet shows it: the header is row 1.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub row: u32,
    /// The column's header name (`trade_date`, `index_code`, ...).
    pub column: String,
    /// what is wrong with it
    pub reason: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code.as_u32(), self.message)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            errors: Vec::new(),
            errors_total: 0,
            retry_after: None,
        }
    }

    /// 42901: a limit used up, to be tried again in `seconds` (at least 1).
    pub fn limited(message: impl Into<String>, seconds: i64) -> Self {
        ApiError {
            retry_after: Some(seconds.max(1)),
            ..Self::new(ErrorCode::RateLimited, message)
        }
    }

    /// 40002: an import with bad rows: `errors` are the first of them in row order
    /// (at most 1,000) and `total` counts them all (D8: "`errors` lists at most 1,000
    /// entries, in row order, and `errors_total` gives the full count").
    pub fn rejected(errors: Vec<RowError>, total: usize) -> Self {
        let total = total.max(errors.len());
        let message = match (total, errors.len()) {
            (1, _) => "the file was rejected: 1 problem, listed in errors".to_string(),
            (n, listed) if listed == n => {
                format!("the file was rejected: {n} problems, listed in errors")
            }
            (n, listed) => format!(
                "the file was rejected: {n} problems; the first {listed} are listed in errors"
            ),
        };
        ApiError {
            errors,
            errors_total: total,
            ..Self::new(ErrorCode::ImportRejected, message)
        }
    }

    /// 40001: the request itself is wrong; the message names the offending part.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    /// 50000. The cause is logged here, inside the request's span, and never sent.
    pub fn internal(cause: impl fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ErrorCode::Internal, "internal error")
    }
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(err: tokio_postgres::Error) -> Self {
        // The driver's `Display` says only "db error"; the server's words say what.
        match err.as_db_error() {
            Some(db) => ApiError::internal(format_args!(
                "database: {} {}: {}",
                db.severity(),
                db.code().code(),
                db.message()
            )),
            None => ApiError::internal(format_args!("database: {err}")),
        }
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(err: deadpool_postgres::PoolError) -> Self {
        ApiError::internal(format_args!("database pool: {err}"))
    }
}

impl From<actix::MailboxError> for ApiError {
    fn from(err: actix::MailboxError) -> Self {
        ApiError::internal(format_args!("actor mailbox: {err}"))
    }
}
