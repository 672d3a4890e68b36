//! The index calculation of D8 and D26, as pure decimal arithmetic (never binary
//! floating point).
//!
//! A quote-bearing index's level is a ratio to its base day (D26): `index_value(t) =
//! round6(base_value x weighted_price(t) / weighted_price(first))`. Each day's value
//! depends on that day's and the base day's weighted prices alone, so correcting one
//! day moves that day (and the next day's change), never a later level through
//! rounding drift. The composite keeps D8's chain on its bases' daily changes.
//!
//! `round6` is half away from zero to 6 places, applied once per step exactly where D8
//! and D26 say: the weighted price, each level, each percent change.

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

/// Where a recalculated range of a quote-bearing index starts, when it does not start
/// on the index's base day: the last stored value before the range, and the base day's
/// weighted price every level is a ratio to.
#[derive(Debug, Clone, Copy)]
pub struct Previous {
    pub index_value: Decimal,
    pub base_weighted_price: Option<Decimal>,
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

/// The levels of an index over `days` (date, weighted price), ascending, as ratios to
/// its base day (D26). Without a `previous` row the first day is the base day and takes
/// `base_value`.
pub fn ratio_index(
    index_code: &str,
    base_value: Decimal,
    previous: Option<Previous>,
    days: &[(NaiveDate, Decimal)],
) -> Result<Vec<DailyRow>, ApiError> {
    let mut rows = Vec::with_capacity(days.len());
    let mut pre = previous.map(|p| p.index_value);
    let mut base_wp = match previous {
        Some(p) => Some(p.base_weighted_price.ok_or_else(|| {
            overflow(
                "the base day's weighted_price",
                days.first().map_or(NaiveDate::MIN, |d| d.0),
                index_code,
            )
        })?),
        None => None,
    };
    for &(trade_date, wp) in days {
        let row = match (pre, base_wp) {
            (Some(pre), Some(base_wp)) => {
                let value = base_value
                    .checked_mul(wp)
                    .and_then(|x| x.checked_div(base_wp))
                    .map(round6)
                    .ok_or_else(|| overflow("index_value", trade_date, index_code))?;
                let (change, pct) = link(index_code, trade_date, pre, value)?;
                DailyRow {
                    trade_date,
                    index_code: index_code.to_string(),
                    index_value: value,
                    weighted_price: Some(wp),
                    pre_value: Some(pre),
                    change: Some(change),
                    pct_change: Some(pct),
                }
            }
            _ => {
                base_wp = Some(wp);
                DailyRow {
                    trade_date,
                    index_code: index_code.to_string(),
                    index_value: base_value,
                    weighted_price: Some(wp),
                    pre_value: None,
                    change: None,
                    pct_change: None,
                }
            }
        };
        pre = Some(row.index_value);
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
    fn levels_are_ratios_to_the_base_day() {
        let rows = ratio_index(
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
        // 1000 x 79.333333 / 80 = 991.6666625 exactly: half away from zero -> 991.666663
        assert_eq!(rows[2].index_value, d("991.666663"));
        assert_eq!(rows[2].pre_value, Some(d("1012.5")));
        // (991.666663 - 1012.5) x 100 / 1012.5 = -2.05761353...
        assert_eq!(rows[2].pct_change, Some(d("-2.057614")));
    }

    #[test]
    fn a_range_continues_from_the_base_day_not_the_previous_day() {
        let prev = Previous {
            index_value: d("1200.000001"),
            base_weighted_price: Some(d("50")),
        };
        let rows = ratio_index("X", d("1000"), Some(prev), &[(day(5), d("66"))]).unwrap();
        // 1000 x 66 / 50, whatever the previous level's last digit.
        assert_eq!(rows[0].index_value, d("1320"));
        assert_eq!(rows[0].pre_value, Some(d("1200.000001")));
        assert_eq!(rows[0].change, Some(d("119.999999")));
    }

    #[test]
    fn a_correction_moves_its_day_and_no_later_level() {
        let days = [
            (day(2), d("3")),
            (day(3), d("7")),
            (day(4), d("11")),
            (day(5), d("13")),
        ];
        let mut fixed = days;
        fixed[1].1 = d("7.000001");
        let a = ratio_index("X", d("1000"), None, &days).unwrap();
        let b = ratio_index("X", d("1000"), None, &fixed).unwrap();
        let differs: Vec<bool> = a.iter().zip(&b).map(|(x, y)| x != y).collect();
        assert_eq!(differs, [false, true, true, false]);
        assert_eq!(a[3].index_value, b[3].index_value);
        assert_eq!(a[2].index_value, b[2].index_value, "day 4's level stays");
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
