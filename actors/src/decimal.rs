//! Fixed-scale decimal text, the wire form of every amount, weight, price and index point.
//!
//! Values are `rust_decimal::Decimal` end to end; this module must never go through `f64`.

use rust_decimal::{Decimal, RoundingStrategy};

/// `round6(x)` of the specification: half away from zero to `scale` places.
pub fn round_half_away(value: Decimal, scale: u32) -> Decimal {
    value.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero)
}

/// Formats `value` with exactly `scale` fractional digits (`1000` -> `"1000.000000"`).
/// Rounds half away from zero when the value carries more digits, and never prints a
/// negative zero (`-0.0000001` at scale 6 is `"0.000000"`).
pub fn to_fixed(value: Decimal, scale: u32) -> String {
    let mut rounded = round_half_away(value, scale);
    if rounded.is_zero() {
        rounded = Decimal::ZERO;
    }
    rounded.rescale(scale);
    rounded.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn pads_to_the_scale() {
        assert_eq!(to_fixed(d("1000"), 6), "1000.000000");
        assert_eq!(to_fixed(d("0.6"), 8), "0.60000000");
        assert_eq!(to_fixed(d("12.5"), 0), "13");
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(to_fixed(d("1.0000005"), 6), "1.000001");
        assert_eq!(to_fixed(d("-1.0000005"), 6), "-1.000001");
        assert_eq!(to_fixed(d("2.0000025"), 6), "2.000003");
        assert_eq!(to_fixed(d("1.00000049999"), 6), "1.000000");
    }

    #[test]
    fn never_prints_negative_zero() {
        assert_eq!(to_fixed(d("-0.0000001"), 6), "0.000000");
        assert_eq!(to_fixed(-Decimal::ZERO, 6), "0.000000");
    }

    #[test]
    fn keeps_large_values_exact() {
        assert_eq!(
            to_fixed(d("123456789012345.123456"), 6),
            "123456789012345.123456"
        );
        assert_eq!(to_fixed(d("-42.1"), 6), "-42.100000");
    }
}
