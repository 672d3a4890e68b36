//! The JSON a log line is made of, written straight into a byte buffer: strings
//! (escaped only when they must be), keys, hex ids and RFC 3339 timestamps.
//!
//! Writing only: it must never allocate on a line's common path (a string with
//! nothing to escape, a timestamp in four-digit years).

/// `"name":`, what every value follows.
pub(super) fn key(out: &mut Vec<u8>, name: &str) {
    string(out, name);
    out.push(b':');
}

/// `"name":"text"`.
pub(super) fn text_entry(out: &mut Vec<u8>, name: &str, text: &str) {
    key(out, name);
    string(out, text);
}

/// The low `digits` hex digits of `id`, lower case and quoted.
pub(super) fn hex(out: &mut Vec<u8>, id: u128, digits: usize) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for shift in (0..digits).rev() {
        out.push(DIGITS[(id >> (shift * 4)) as usize & 0xf]);
    }
    out.push(b'"');
}

/// `text` as a JSON string. Names and most values (ids, routes, messages) need no
/// escape, and a line has about twenty of each: they are checked eight bytes at a time
/// and copied whole; anything else is escaped by `serde_json`.
pub(super) fn string(out: &mut Vec<u8>, text: &str) {
    if needs_escape(text.as_bytes()) {
        let _ = serde_json::to_writer(&mut *out, text);
    } else {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

/// Whether `bytes` holds a control character, `"` or `\\` (what JSON escapes).
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Some byte of `x` is zero / below 0x20: the classic word-at-a-time tests, exact
    // for "any byte" (what they may get wrong is which byte, never whether one is).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
        if control || zero(x ^ (ONES * u64::from(b'"'))) || zero(x ^ (ONES * u64::from(b'\\'))) {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// `now` as RFC 3339 in UTC with microseconds (`"2026-11-26T18:47:10.569250Z"`), written
/// digit by digit: chrono's formatter allocated and cost more than the rest of a line.
pub(super) fn timestamp(out: &mut Vec<u8>, now: chrono::DateTime<chrono::Utc>) {
    use chrono::{Datelike, Timelike};
    let year = now.year();
    // A leap second, or a clock outside four-digit years: chrono knows how.
    if !(0..=9999).contains(&year) || now.nanosecond() >= 1_000_000_000 {
        let text = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        return string(out, &text);
    }
    fn digits(out: &mut Vec<u8>, mut n: u32, width: usize) {
        let mut buffer = [b'0'; 6];
        for slot in buffer[..width].iter_mut().rev() {
            *slot = b'0' + (n % 10) as u8;
            n /= 10;
        }
        out.extend_from_slice(&buffer[..width]);
    }
    out.push(b'"');
    for (n, width, then) in [
        (year as u32, 4, b'-'),
        (now.month(), 2, b'-'),
        (now.day(), 2, b'T'),
        (now.hour(), 2, b':'),
        (now.minute(), 2, b':'),
        (now.second(), 2, b'.'),
    ] {
        digits(out, n, width);
        out.push(then);
    }
    digits(out, now.nanosecond() / 1_000, 6);
    out.extend_from_slice(b"Z\"");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_with_microseconds() {
        use chrono::TimeZone;
        let at = chrono::Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap()
            + chrono::TimeDelta::microseconds(60_789);
        let mut out = Vec::new();
        timestamp(&mut out, at);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"2026-01-02T03:04:05.060789Z\""
        );
    }

    proptest::proptest! {
        /// Names and values are copied unescaped only when JSON needs no escape: the
        /// result is always what `serde_json` writes.
        #[test]
        fn strings_are_written_as_serde_json_writes_them(text in ".*", bytes in proptest::collection::vec(0u8..128, 0..40)) {
            for text in [text, String::from_utf8(bytes).unwrap()] {
                let mut out = Vec::new();
                string(&mut out, &text);
                proptest::prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
            }
        }

        /// Any moment from year 0 to 9999 reads back as itself, to the microsecond.
        #[test]
        fn timestamps_read_back(seconds in -62_167_219_200i64..253_402_300_799, micros in 0u32..1_000_000) {
            let at = chrono::DateTime::from_timestamp(seconds, micros * 1_000).unwrap();
            let mut out = Vec::new();
            timestamp(&mut out, at);
            let text: String = serde_json::from_slice(&out).unwrap();
            proptest::prop_assert_eq!(chrono::DateTime::parse_from_rfc3339(&text).unwrap(), at);
            proptest::prop_assert_eq!(text, at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
        }
    }
}
