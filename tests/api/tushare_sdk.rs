//! The official `tushare` package (pinned) against `POST /tushare` (D24): a Tushare
//! user's script with only its URL changed gets Tushare's frames of every dataset,
//! `pro_bar` for indexes (daily, weekly, monthly), several codes, `fields` as a string,
//! the values the native API answers, and the service's message raised for a bad
//! token, a free key's delay, and a member index.

use serde_json::json;

use crate::helpers::quotes::{every_base_on, import, spawn_for_imports};
use crate::python_run;
use crate::python_venv::{self, Venv};

/// The version Tushare users have; its `DataApi` is what the tests drive.
const TUSHARE: &str = "tushare==1.4.29";
const SIX: &str = "six==1.16.0";

/// What a script does with the official SDK, each call's frame (columns and rows as
/// JSON) or the message it raised, keyed by a name.
const SCRIPT: &str = r#"
import json, sys
import tushare as ts

url, pro_key, free_key = sys.argv[1], sys.argv[2], sys.argv[3]
out = {}

def frame(df):
    return {"columns": list(df.columns), "rows": json.loads(df.to_json(orient="values")),
            "dtypes": [str(t) for t in df.dtypes]}

def run(name, call):
    try:
        out[name] = frame(call())
    except Exception as e:
        out[name] = {"raised": str(e)}

pro = ts.pro_api(pro_key)
pro._DataApi__http_url = url
run("index_basic", lambda: pro.index_basic())
run("index_daily", lambda: pro.index_daily(ts_code="GPU_Index"))
run("several", lambda: pro.index_daily(ts_code="gpu_index,SSD_Index", start_date="20261110"))
run("fields", lambda: pro.index_daily(ts_code="GPU_Index", fields="ts_code,trade_date,close"))
run("query", lambda: pro.query("index_daily", ts_code="GPU_Index", end_date="20261110"))
run("index_weekly", lambda: pro.index_weekly(ts_code="GPU_Index"))
run("index_monthly", lambda: pro.index_monthly(ts_code="GPU_Index"))
run("trade_cal", lambda: pro.trade_cal(exchange="", start_date="20261106", end_date="20261109"))
run("index_weight", lambda: pro.index_weight(index_code="Server_Index", trade_date="20261110"))
for freq in ("D", "W", "M"):
    run("pro_bar_" + freq, lambda: ts.pro_bar(ts_code="GPU_Index", api=pro, asset="I", freq=freq))
run("open", lambda: pro.index_daily(ts_code="GPU_Index", fields="ts_code,open"))

bad = ts.pro_api("iq_0000000000000000000000000000000000000000")
bad._DataApi__http_url = url
run("bad_token", lambda: bad.index_daily(ts_code="GPU_Index"))
free = ts.pro_api(free_key)
free._DataApi__http_url = url
run("free", lambda: free.index_daily(ts_code="GPU_Index"))
run("free_member", lambda: free.index_daily(ts_code="Hardware_Index"))
print(json.dumps(out))
"#;

/// Runs `script` with the official package (`args` after it, `env` beside the
/// machine's) on a thread of its own, since the service answers on the test's; its
/// output, once it has succeeded.
pub(crate) async fn run_script(script: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    // The package imports `six` without declaring it.
    let python = python_venv::prepared(|| {
        python_venv::build(&Venv {
            stamp: format!("{TUSHARE}\n{SIX}\n"),
            requirements: vec![TUSHARE.into(), SIX.into()],
            ..Venv::pinned(
                "tushare-venv",
                ".iq-tushare-stamp",
                TUSHARE,
                "the Tushare tests need python3 with the venv module \
                 (Debian: apt-get install python3-venv)",
            )
        })
    })
    .await;
    python_run::script(python, "tushare", script, args, env).await
}

#[actix_web::test]
async fn the_official_tushare_package_runs_unchanged_but_for_its_url() {
    iq_test_support::require!(Python);
    let (app, admin, pro) = spawn_for_imports().await;
    let days = ["20261109", "20261110", "20261111", "20261112", "20261113"];
    import(&app, &admin, "quotes.csv", &every_base_on(&days)).await;
    let free = app.key_of_tier(&admin, "fred", "free").await;
    let output = run_script(
        SCRIPT,
        &[&format!("{}/tushare", app.address), &pro.key, &free.key],
        &[],
    )
    .await;
    let out = python_run::last_json(&output);
    let frame = |name: &str| {
        let f = &out[name];
        assert!(f.get("raised").is_none(), "{name} raised: {f}");
        f.clone()
    };

    // index_daily: Tushare's columns, newest first, floats, the native values.
    let daily = frame("index_daily");
    assert_eq!(
        daily["columns"],
        json!([
            "ts_code",
            "trade_date",
            "close",
            "pre_close",
            "change",
            "pct_chg"
        ])
    );
    assert_eq!(daily["dtypes"][2], "float64");
    let rows = daily["rows"].as_array().unwrap();
    assert_eq!(rows.len(), days.len());
    assert_eq!(rows[0][1], "20261113");
    let native = app
        .query_with(
            json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"},
                   "fields": ["trade_date", "index_value"]}),
            Some(&pro.key),
        )
        .await;
    let mut want: Vec<(String, f64)> = native
        .items()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().into(),
                r[1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    want.reverse();
    let got: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (r[1].as_str().unwrap().into(), r[2].as_f64().unwrap()))
        .collect();
    assert_eq!(got, want);
    // pro_bar upper-cases the code and sends offset/limit as null: the same frame.
    assert_eq!(frame("pro_bar_D")["rows"], daily["rows"]);
    assert_eq!(frame("pro_bar_W")["rows"], frame("index_weekly")["rows"]);
    assert_eq!(frame("pro_bar_M")["rows"], frame("index_monthly")["rows"]);
    assert_eq!(
        frame("index_weekly")["columns"],
        json!([
            "ts_code",
            "trade_date",
            "close",
            "open",
            "high",
            "low",
            "pre_close",
            "change",
            "pct_chg"
        ])
    );

    // Several codes in any case, fields as a string, pro.query.
    let several = frame("several");
    let codes: Vec<&str> = several["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 2 * 4);
    assert!(codes.iter().all(|c| *c == "GPU_Index" || *c == "SSD_Index"));
    assert_eq!(
        frame("fields")["columns"],
        json!(["ts_code", "trade_date", "close"])
    );
    assert_eq!(frame("query")["rows"].as_array().unwrap().len(), 2);
    assert_eq!(frame("index_basic")["columns"][0], "ts_code");
    assert_eq!(
        frame("trade_cal")["columns"],
        json!(["exchange", "cal_date", "is_open", "pretrade_date"])
    );
    assert_eq!(frame("trade_cal")["rows"].as_array().unwrap().len(), 4);
    assert_eq!(frame("index_weight")["rows"][0][3], 100.0);

    // The service's messages, raised by the SDK rather than an empty frame.
    let raised = |name: &str| out[name]["raised"].as_str().unwrap_or_default().to_string();
    assert!(
        raised("open").contains("one value a day"),
        "{}",
        out["open"]
    );
    assert!(
        raised("bad_token").contains("invalid API key"),
        "{}",
        out["bad_token"]
    );
    assert!(
        raised("free_member").contains("professional members"),
        "{}",
        out["free_member"]
    );
    // A free key sees what its delay allows: 20 Nov's cutoff is 11 Nov.
    let free_rows = frame("free")["rows"].as_array().unwrap().clone();
    assert_eq!(free_rows[0][1], "20261111");
}
