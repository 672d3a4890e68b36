//! The schemas of `POST /tushare` (handled in `src/routes/tushare.rs`): Tushare's own
//! call and answer (D24), as its official SDK sends and reads them. Neither is built:
//! the route reads the body as JSON and the domain crate's `tushare` module checks it.

use std::collections::BTreeMap;

use utoipa::ToSchema;

/// A Tushare call.
#[derive(ToSchema)]
#[allow(dead_code)] // never built: it only derives the schema
pub struct TushareRequest {
    /// index_basic, index_daily, index_weekly, index_monthly, trade_cal or
    /// index_weight (`POST /tushare/{api_name}` may name it in the path instead)
    api_name: Option<String>,
    /// an API key (`iq_...`); empty or absent: the visitor
    token: Option<String>,
    /// the dataset's params (`ts_code` up to 8 codes, comma-separated, any letter case;
    /// dates as YYYYMMDD); `null` and `""` mean absent, `ts_type_name` is ignored,
    /// `limit` and `offset` page
    #[schema(value_type = Object)]
    params: Option<BTreeMap<String, serde_json::Value>>,
    /// the columns: a comma-separated string or an array; `""`: the defaults
    fields: Option<serde_json::Value>,
}

/// Tushare's envelope.
#[derive(ToSchema)]
#[allow(dead_code)] // never built: it only derives the schema
pub struct TushareAnswer {
    /// the request's id, as in `X-Request-Id`
    request_id: String,
    /// 0, or the service's error code
    code: u32,
    /// empty, or what was wrong
    msg: String,
    /// null on a refusal
    data: Option<TushareData>,
}

/// The rows of a Tushare answer, newest day first (`index_basic` in display order).
#[derive(ToSchema)]
#[allow(dead_code)] // never built: it only derives the schema
pub struct TushareData {
    /// Tushare's column names, in the order asked
    fields: Vec<String>,
    /// one array per row: decimals as JSON numbers, dates as YYYYMMDD text
    items: Vec<Vec<serde_json::Value>>,
    /// whether rows are left past this page (ask again with `offset`)
    has_more: bool,
}
