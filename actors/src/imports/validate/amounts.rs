//! The rules of the two amounts: a weight (greater than 0, at most 1, at most 8 decimal
//! places) and a price (greater than 0, `numeric(24,6)`), read from their decimal text.
//!
//! It must never use binary floating point: the digits go straight into a `Decimal`, so
//! nothing is rounded, and exponent notation is refused rather than expanded.

use rust_decimal::Decimal;

use super::cells::{holds, trim_ascii, MISSING};
use crate::imports::bounds::echo;
use crate::imports::workbook::Cell;

/// Most decimal places of a weight and of a price (`numeric(10,8)`, `numeric(24,6)`).
const WEIGHT_PLACES: usize = 8;
const PRICE_PLACES: usize = 6;
/// `numeric(24,6)`: 18 digits before the decimal point.
const PRICE_INTEGER_DIGITS: usize = 18;

pub(super) fn weight(cell: &Cell) -> Result<Decimal, String> {
    let (text, number) = positive_amount(cell, "weight")?;
    let above_one = match number.integer {
        "" => false,
        "1" => !number.fraction.is_empty(),
        _ => true,
    };
    if above_one {
        return Err(format!(
            "the weight must be at most 1, found {}",
            echo(text)
        ));
    }
    number.to_decimal(text, "weight", WEIGHT_PLACES)
}

pub(super) fn price(cell: &Cell) -> Result<Decimal, String> {
    let (text, number) = positive_amount(cell, "price")?;
    if number.integer.len() > PRICE_INTEGER_DIGITS {
        return Err(format!(
            "the price {} is too large: at most {PRICE_INTEGER_DIGITS} digits before the \
             decimal point",
            echo(text)
        ));
    }
    number.to_decimal(text, "price", PRICE_PLACES)
}

/// A plain decimal number's parts, without leading integer or trailing fraction zeros
/// (`-007.50` is negative, `7`, `5`): the digit counts the rules need, taken from the
/// text so no conversion can round them.
struct PlainNumber<'t> {
    negative: bool,
    integer: &'t str,
    fraction: &'t str,
}

impl PlainNumber<'_> {
    fn is_zero(&self) -> bool {
        self.integer.is_empty() && self.fraction.is_empty()
    }

    fn to_decimal(&self, text: &str, what: &str, places: usize) -> Result<Decimal, String> {
        if self.fraction.len() > places {
            return Err(format!(
                "the {what} {} has {} decimal places; at most {places} are allowed",
                echo(text),
                self.fraction.len()
            ));
        }
        let out_of_range = || format!("the {what} {} is out of range", echo(text));
        // The digits as one integer and the fraction's length as the scale: exact, and
        // no text to build. 28 digits fit a u128 and a Decimal's 96-bit mantissa is
        // checked by the conversion.
        if self.integer.len() + self.fraction.len() > 28 {
            return Err(out_of_range());
        }
        let mantissa = self
            .integer
            .bytes()
            .chain(self.fraction.bytes())
            .fold(0u128, |m, digit| m * 10 + u128::from(digit - b'0'));
        let signed = i128::try_from(mantissa).map_err(|_| out_of_range())?;
        let signed = if self.negative { -signed } else { signed };
        let scale = u32::try_from(self.fraction.len()).map_err(|_| out_of_range())?;
        Decimal::try_from_i128_with_scale(signed, scale).map_err(|_| out_of_range())
    }
}

/// The text of a weight or price cell (`what`) and its parts, the number greater than 0:
/// the rule both amounts share.
fn positive_amount<'c>(cell: &'c Cell, what: &str) -> Result<(&'c str, PlainNumber<'c>), String> {
    let text = match cell {
        Cell::Text(s) | Cell::Number(s) => trim_ascii(s),
        other => return Err(holds(other, &format!("a {what} (a decimal number)"))),
    };
    if text.is_empty() {
        return Err(MISSING.to_owned());
    }
    let number = plain_number(text)?;
    if number.is_zero() || number.negative {
        return Err(format!(
            "the {what} must be greater than 0, found {}",
            echo(text)
        ));
    }
    Ok((text, number))
}

/// `[+-]digits[.digits]` (either side of the point may be empty, not both).
///
/// Exponent notation is refused: a spreadsheet shows `2.5E+11` for a long number it has
/// rounded for display, and a CSV exported that way has lost the digits.
fn plain_number(text: &str) -> Result<PlainNumber<'_>, String> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (integer, fraction) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let valid = all_digits(integer)
        && all_digits(fraction)
        && (!integer.is_empty() || !fraction.is_empty());
    if !valid {
        let exponent = body.contains(['e', 'E'])
            && body
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        return Err(if exponent {
            format!(
                "'{}' is in exponent notation; write the number out in full (such as \
                 0.001), since exponent notation may mean the spreadsheet rounded it",
                echo(text)
            )
        } else {
            format!(
                "'{}' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
                echo(text)
            )
        });
    }
    Ok(PlainNumber {
        negative,
        integer: integer.trim_start_matches('0'),
        fraction: fraction.trim_end_matches('0'),
    })
}
