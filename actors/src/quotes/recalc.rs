//! The index calculation of D8, as pure decimal arithmetic (never binary floating point).
//!
//! `round6` is half away from zero to 6 places, applied once per step exactly where D8
//! says: the weighted price, each chain-linked value, each percent change.

use chrono::NaiveDate;
use rust_decimal::Decimal;

use crate::decimal::round_half_away;
use crate::wire_date::WireDate;
use crate::{ApiError, ErrorCode};

fn round6(x: Decimal) -> Decimal {
    round_half_away(x, 6)
}

/// One specification's quote on one day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteRow {
    pub trade_date: NaiveDate,
    pub index_code: String,
    pub specification: String,
    pub weight: Decimal,
    pub price: Decimal,
}

/// One computed `index_daily` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyRow {
    pub trade_date: NaiveDate,
    pub index_code: String,
    pub index_value: Decimal,
    pub weighted_price: Option<Decimal>,
    pub pre_value: Option<Decimal>,
    pub change: Option<Decimal>,
    pub pct_change: Option<Decimal>,
}

/// The last stored row before the recalculated range.
#[derive(Debug, Clone, Copy)]
pub struct Previous {
    pub index_value: Decimal,
    pub weighted_price: Option<Decimal>,
}

fn overflow(what: &str, date: NaiveDate, index_code: &str) -> ApiError {
    ApiError::new(
        ErrorCode::ImportRejected,
        format!(
            "recalculation of {index_code} on {} failed: {what} is out of range",
            WireDate(date)
        ),
    )
}

/// `round6(sum of weight x price)`.
pub fn weighted_price(quotes: impl IntoIterator<Item = (Decimal, Decimal)>) -> Option<Decimal> {
    let mut sum = Decimal::ZERO;
    for (weight, price) in quotes {
        sum = sum.checked_add(weight.checked_mul(price)?)?;
    }
    Some(round6(sum))
}

fn link(
    index_code: &str,
    date: NaiveDate,
    pre: Decimal,
    value: Decimal,
) -> Result<(Decimal, Decimal), ApiError> {
    let change = value - pre;
    let pct = change
        .checked_mul(Decimal::ONE_HUNDRED)
        .and_then(|c| c.checked_div(pre))
        .ok_or_else(|| overflow("pct_change", date, index_code))?;
    Ok((change, round6(pct)))
}

/// Chain-links an index over `days` (date, weighted price), ascending. Without a
/// `previous` row the first day is the base day and takes `base_value`.
pub fn chain_index(
    index_code: &str,
    base_value: Decimal,
    previous: Option<Previous>,
    days: &[(NaiveDate, Decimal)],
) -> Result<Vec<DailyRow>, ApiError> {
    let mut rows = Vec::with_capacity(days.len());
    let mut prev = previous;
    for &(trade_date, wp) in days {
        let row = match prev {
            None => DailyRow {
                trade_date,
                index_code: index_code.to_string(),
                index_value: base_value,
                weighted_price: Some(wp),
                pre_value: None,
                change: None,
                pct_change: None,
            },
            Some(p) => {
                let prev_wp = p
                    .weighted_price
                    .ok_or_else(|| overflow("previous weighted_price", trade_date, index_code))?;
                let value = p
                    .index_value
                    .checked_mul(wp)
                    .and_then(|x| x.checked_div(prev_wp))
                    .map(round6)
                    .ok_or_else(|| overflow("index_value", trade_date, index_code))?;
                let (change, pct) = link(index_code, trade_date, p.index_value, value)?;
                DailyRow {
                    trade_date,
                    index_code: index_code.to_string(),
                    index_value: value,
                    weighted_price: Some(wp),
                    pre_value: Some(p.index_value),
                    change: Some(change),
                    pct_change: Some(pct),
                }
            }
        };
        prev = Some(Previous {
            index_value: row.index_value,
            weighted_price: row.weighted_price,
        });
        rows.push(row);
    }
    Ok(rows)
}

/// The composite of D8 over `days`: each entry is a date on which every base index has
/// a value, with the base indexes' stored `pct_change` in the order of `weights`.
/// Without `previous` the first day takes `base_value`; after that, a day on which a
/// base index has no change yet (its own first day) has no composite row.
pub fn composite_index(
    index_code: &str,
    base_value: Decimal,
    previous: Option<Decimal>,
    weights: &[Decimal],
    days: &[(NaiveDate, Vec<Option<Decimal>>)],
) -> Result<Vec<DailyRow>, ApiError> {
    let total: Decimal = weights.iter().sum();
    let mut rows = Vec::with_capacity(days.len());
    let mut prev = previous;
    for (trade_date, pcts) in days {
        let trade_date = *trade_date;
        let Some(pre) = prev else {
            rows.push(DailyRow {
                trade_date,
                index_code: index_code.to_string(),
                index_value: base_value,
                weighted_price: None,
                pre_value: None,
                change: None,
                pct_change: None,
            });
            prev = Some(base_value);
            continue;
        };
        let Some(pcts) = pcts.iter().copied().collect::<Option<Vec<Decimal>>>() else {
            continue;
        };
        let weighted: Decimal = pcts.iter().zip(weights).map(|(p, w)| p * w).sum();
        let pct = weighted
            .checked_div(total)
            .map(round6)
            .ok_or_else(|| overflow("pct_change", trade_date, index_code))?;
        let value = pre
            .checked_mul(Decimal::ONE_HUNDRED + pct)
            .map(|x| round6(x / Decimal::ONE_HUNDRED))
            .ok_or_else(|| overflow("index_value", trade_date, index_code))?;
        rows.push(DailyRow {
            trade_date,
            index_code: index_code.to_string(),
            index_value: value,
            weighted_price: None,
            pre_value: Some(pre),
            change: Some(value - pre),
            pct_change: Some(pct),
        });
        prev = Some(value);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn day(n: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2024, 1, n).unwrap()
    }

    #[test]
    fn weighted_price_rounds_once_half_away() {
        // 0.5 x 1.0000005 + 0.5 x 1.0000005 = 1.0000005 -> 1.000001
        assert_eq!(
            weighted_price([(d("0.5"), d("1.0000005")), (d("0.5"), d("1.0000005"))]),
            Some(d("1.000001"))
        );
        assert_eq!(
            weighted_price([(d("0.6"), d("100")), (d("0.4"), d("50"))]),
            Some(d("80"))
        );
    }

    #[test]
    fn chain_links_on_stored_rounded_values() {
        let rows = chain_index(
            "X",
            d("1000"),
            None,
            &[
                (day(2), d("80")),
                (day(3), d("81")),
                (day(4), d("79.333333")),
            ],
        )
        .unwrap();
        assert_eq!(rows[0].index_value, d("1000"));
        assert_eq!(rows[0].pct_change, None);
        assert_eq!(rows[1].index_value, d("1012.5"));
        assert_eq!(rows[1].change, Some(d("12.5")));
        assert_eq!(rows[1].pct_change, Some(d("1.25")));
        // 1012.5 x 79.333333 / 81 = 991.6666625 exactly: half away from zero -> 991.666663
        assert_eq!(rows[2].index_value, d("991.666663"));
        assert_eq!(rows[2].pre_value, Some(d("1012.5")));
        // (991.666663 - 1012.5) x 100 / 1012.5 = -2.05761353...
        assert_eq!(rows[2].pct_change, Some(d("-2.057614")));
    }

    #[test]
    fn chain_continues_from_a_previous_row() {
        let prev = Previous {
            index_value: d("1200"),
            weighted_price: Some(d("60")),
        };
        let rows = chain_index("X", d("1000"), Some(prev), &[(day(5), d("66"))]).unwrap();
        assert_eq!(rows[0].index_value, d("1320"));
        assert_eq!(rows[0].pct_change, Some(d("10")));
    }

    #[test]
    fn composite_uses_the_weighted_mean_of_changes() {
        let w = vec![Decimal::ONE; 3];
        let days = vec![
            (day(2), vec![None, None, None]),
            (day(3), vec![Some(d("1")), Some(d("2")), Some(d("-0.5"))]),
            (day(4), vec![Some(d("1")), None, Some(d("1"))]),
            (
                day(5),
                vec![Some(d("0.1")), Some(d("0.1")), Some(d("0.1000005"))],
            ),
        ];
        let rows = composite_index("H", d("1000"), None, &w, &days).unwrap();
        assert_eq!(rows.len(), 3, "day 4 lacks a change and has no row");
        assert_eq!(rows[0].index_value, d("1000"));
        // mean(1, 2, -0.5) = 0.833333...
        assert_eq!(rows[1].pct_change, Some(d("0.833333")));
        assert_eq!(rows[1].index_value, d("1008.33333"));
        assert_eq!(rows[2].trade_date, day(5));
        // mean = 0.10000016666.. -> 0.1; 1008.33333 x 100.1 / 100 = 1009.341663...
        assert_eq!(rows[2].pct_change, Some(d("0.1")));
        assert_eq!(rows[2].index_value, d("1009.341663"));
        assert_eq!(rows[2].pre_value, Some(d("1008.33333")));
    }
}
