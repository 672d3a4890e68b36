//! The text of a page's date and amount cells, made without heap work per cell, and
//! PostgreSQL `numeric` read straight into a `Decimal` (issue 14: a 5000-row page spent
//! most of its time allocating, and dividing `Decimal`s to decode numerics).
//!
//! Every function here answers exactly what the plain path answers (`WireDate`'s
//! `Display`, [`to_fixed`], `Decimal`'s own `FromSql`); the tests hold them to that.
//! Amounts stay `rust_decimal::Decimal` throughout: nothing here may go through `f64`,
//! and a value a fast path does not cover takes the plain path.

use std::error::Error;

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use tokio_postgres::types::{FromSql, Type};

use crate::decimal::{round_half_away, to_fixed};
use crate::wire_date::WireDate;

/// Short text made on the stack, or on the heap by the plain path.
pub enum Text {
    Stack { buf: [u8; 48], start: usize },
    Heap(String),
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            // Only ASCII digits, '.' and '-' are ever written to the buffer.
            Text::Stack { buf, start } => std::str::from_utf8(&buf[*start..]).unwrap_or(""),
            Text::Heap(text) => text,
        }
    }
}

/// Writes `n`'s decimal digits right-aligned before `end`, at least `min` of them
/// (zero-padded); answers where they start.
fn digits(buf: &mut [u8; 48], end: usize, mut n: u64, min: usize) -> usize {
    let mut at = end;
    while n > 0 || end - at < min {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    at
}

/// `YYYYMMDD`, exactly as [`WireDate`] prints it.
pub fn wire_date(d: NaiveDate) -> Text {
    let year = d.year();
    if !(0..=9999).contains(&year) {
        return Text::Heap(WireDate(d).to_string());
    }
    let mut buf = [0u8; 48];
    let n = year as u64 * 10_000 + u64::from(d.month()) * 100 + u64::from(d.day());
    let start = digits(&mut buf, 48, n, 8);
    Text::Stack { buf, start }
}

/// `value` with exactly `scale` fractional digits, exactly as [`to_fixed`] prints it:
/// the same rounding (half away from zero), no negative zero, and the same digits,
/// taken from the mantissa of the rescaled `Decimal` instead of its formatter.
pub fn fixed(value: Decimal, scale: u32) -> Text {
    // Most cells carry the column's scale or fewer places: nothing to round, and the
    // digits are the mantissa times a power of ten (no 96-bit rescaling).
    if value.scale() <= scale && scale <= 19 {
        let shifted = u64::try_from(value.mantissa().unsigned_abs())
            .ok()
            .and_then(|m| m.checked_mul(10u64.pow(scale - value.scale())));
        if let Some(n) = shifted {
            return placed(n, scale as usize, value.is_sign_negative() && n != 0);
        }
    }
    let mut rounded = round_half_away(value, scale);
    if rounded.is_zero() {
        rounded = Decimal::ZERO;
    }
    rounded.rescale(scale);
    let mantissa = rounded.mantissa();
    let Ok(n) = u64::try_from(mantissa.unsigned_abs()) else {
        return Text::Heap(to_fixed(value, scale));
    };
    placed(n, rounded.scale() as usize, mantissa < 0)
}

/// The digits of `n` with the last `places` of them after a point, and a sign.
fn placed(mut n: u64, places: usize, negative: bool) -> Text {
    // At most 20 digits of a u64, or 28 fractional ones and a leading zero, a point
    // and a sign: within 48.
    let mut buf = [0u8; 48];
    let mut start = 48;
    if places > 0 {
        let (whole, fraction) = if places > 19 {
            (0, n)
        } else {
            let unit = 10u64.pow(places as u32);
            (n / unit, n % unit)
        };
        start = digits(&mut buf, start, fraction, places);
        start -= 1;
        buf[start] = b'.';
        n = whole;
    }
    start = digits(&mut buf, start, n, 1);
    if negative {
        start -= 1;
        buf[start] = b'-';
    }
    Text::Stack { buf, start }
}

/// A `numeric` column as a `Decimal`: the same value `Decimal`'s own `FromSql` gives.
pub struct Numeric(pub Decimal);

impl<'a> FromSql<'a> for Numeric {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        match exact(raw) {
            Some(value) => Ok(Numeric(value)),
            // NaN, infinities, more than 28 places or 96 bits: the plain path decides.
            None => Decimal::from_sql(ty, raw).map(Numeric),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Decimal as FromSql>::accepts(ty)
    }
}

/// The binary `numeric` (ndigits, weight, sign, dscale, then base-10000 digits, most
/// significant first, the first worth 10000^weight) as the integer mantissa at scale
/// dscale, when that is exact and fits a `Decimal`.
fn exact(raw: &[u8]) -> Option<Decimal> {
    let word = |i: usize| raw.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let (count, weight) = (word(0)? as usize, word(2)? as i16);
    let (sign, scale) = (word(4)?, word(6)?);
    if !matches!(sign, 0x0000 | 0x4000) || scale > 28 || raw.len() != 8 + 2 * count {
        return None;
    }
    let mut n: u128 = 0;
    for i in 0..count {
        let digit = word(8 + 2 * i)?;
        if digit >= 10_000 || n >= 1 << 100 {
            return None;
        }
        n = n * 10_000 + u128::from(digit);
    }
    // n x 10000^(weight - count + 1) is the value; at `scale` places the mantissa is
    // n x 10^shift. PostgreSQL writes no digit past dscale, so a division is exact.
    let shift = 4 * (i32::from(weight) - count as i32 + 1) + i32::from(scale);
    let n = if shift >= 0 {
        n.checked_mul(10u128.checked_pow(shift as u32)?)?
    } else {
        let unit = 10u128.checked_pow(shift.unsigned_abs())?;
        if n % unit != 0 {
            return None;
        }
        n / unit
    };
    let mantissa = i128::try_from(n).ok()?;
    let mantissa = if sign == 0x4000 { -mantissa } else { mantissa };
    Decimal::try_from_i128_with_scale(mantissa, u32::from(scale)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same_as_to_fixed(value: Decimal, scale: u32) {
        assert_eq!(
            &*fixed(value, scale),
            to_fixed(value, scale),
            "{value:?} at {scale}"
        );
    }

    /// What PostgreSQL itself sends for `text::numeric` (psql: `SELECT
    /// numeric_send('1234.567891')`), where Decimal's own ToSql would not write it so.
    fn sent(count: u16, weight: i16, sign: u16, scale: u16, digits: &[u16]) -> Vec<u8> {
        let mut raw = Vec::new();
        for word in [count, weight as u16, sign, scale].iter().chain(digits) {
            raw.extend_from_slice(&word.to_be_bytes());
        }
        raw
    }

    /// `value` as PostgreSQL sends it: base-10000 groups aligned on the point, leading
    /// and trailing zero groups left out, dscale the value's scale.
    fn numeric(value: Decimal) -> Vec<u8> {
        let places = value.scale() as usize;
        let magnitude = value.mantissa().unsigned_abs();
        let text = format!("{magnitude:0>width$}", width = places + 1);
        let (whole, fraction) = text.split_at(text.len() - places);
        let whole = format!("{}{whole}", "0".repeat((4 - whole.len() % 4) % 4));
        let fraction = format!("{fraction}{}", "0".repeat((4 - fraction.len() % 4) % 4));
        let mut groups: Vec<u16> = whole
            .as_bytes()
            .chunks(4)
            .chain(fraction.as_bytes().chunks(4))
            .map(|c| std::str::from_utf8(c).unwrap().parse().unwrap())
            .collect();
        let mut weight = (whole.len() / 4) as i16 - 1;
        while groups.first() == Some(&0) {
            groups.remove(0);
            weight -= 1;
        }
        while groups.last() == Some(&0) {
            groups.pop();
        }
        if groups.is_empty() {
            weight = 0;
        }
        let sign = if value.is_sign_negative() && magnitude != 0 {
            0x4000
        } else {
            0
        };
        sent(groups.len() as u16, weight, sign, places as u16, &groups)
    }

    fn decoded(raw: &[u8]) -> (Decimal, Decimal) {
        let ours = Numeric::from_sql(&Type::NUMERIC, raw).unwrap().0;
        let plain = Decimal::from_sql(&Type::NUMERIC, raw).unwrap();
        (ours, plain)
    }

    #[test]
    fn amounts_print_as_to_fixed_does() {
        for text in [
            "0",
            "-0",
            "1000",
            "0.6",
            "12.5",
            "1.0000005",
            "-1.0000005",
            "2.0000025",
            "-0.0000001",
            "-42.1",
            "123456789012345.123456",
            "0.00000001",
            "99999999.999999995",
            "79228162514264337593543950335",
            "-79228162514264337593543950335",
            "7.9228162514264337593543950335",
            "0.0000000000000000000000000001",
            "18446744073709551615",
            "18446744073709551616.5",
        ] {
            let value: Decimal = text.parse().unwrap();
            for scale in [0, 1, 2, 6, 8, 19, 20, 28] {
                same_as_to_fixed(value, scale);
            }
        }
    }

    #[test]
    fn numerics_as_postgres_sends_them_decode_as_decimal_decodes_them() {
        let cases = [
            sent(3, 0, 0, 6, &[1234, 5678, 9100]), // 1234.567891
            sent(2, 0, 0x4000, 6, &[1234, 5600]),  // -1234.560000
            sent(0, 0, 0, 6, &[]),                 // 0.000000
            sent(1, -1, 0, 8, &[6000]),            // 0.60000000
            sent(1, 2, 0, 0, &[12]),               // 12 0000 0000
            sent(1, -2, 0, 8, &[1]),               // 0.00000001
            sent(2, 5, 0, 6, &[1, 2345]),          // 1 2345 x 10000^4 (24 digits)
        ];
        for raw in &cases {
            let (ours, plain) = decoded(raw);
            assert_eq!(ours, plain, "{raw:?}");
            assert_eq!(ours.scale(), plain.scale(), "{raw:?}");
        }
        for special in [0xC000, 0xD000, 0xF000] {
            let raw = sent(0, 0, special, 0, &[]);
            assert!(Numeric::from_sql(&Type::NUMERIC, &raw).is_err());
        }
        // More places than a Decimal holds: the plain path rounds, as before.
        let long = sent(8, -1, 0, 32, &[1234; 8]);
        assert_eq!(decoded(&long).0, decoded(&long).1);
    }

    proptest! {
        #[test]
        fn any_amount_prints_as_to_fixed_does(
            lo in any::<u32>(), mid in any::<u32>(), hi in 0u32..4,
            negative in any::<bool>(), value_scale in 0u32..=28, scale in 0u32..=21,
        ) {
            same_as_to_fixed(Decimal::from_parts(lo, mid, hi, negative, value_scale), scale);
        }

        #[test]
        fn any_numeric_decodes_as_decimal_decodes_it(
            lo in any::<u32>(), mid in any::<u32>(), hi in any::<u32>(),
            negative in any::<bool>(), scale in 0u32..=28,
        ) {
            let raw = numeric(Decimal::from_parts(lo, mid, hi, negative, scale));
            let (ours, plain) = decoded(&raw);
            prop_assert_eq!(ours, plain);
            prop_assert_eq!(ours.scale(), plain.scale());
        }

        #[test]
        fn any_date_prints_as_wire_date_does(days in -800_000i32..3_000_000) {
            let d = NaiveDate::from_num_days_from_ce_opt(days).unwrap();
            prop_assert_eq!(&*wire_date(d), WireDate(d).to_string());
        }
    }
}
