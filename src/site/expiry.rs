//! A key's expiry as the site's forms write it: a date (`2027-01-31`) through which the
//! key works, UTC, stored as the midnight after it. The member's new-key form and the
//! back office's key form both take it, and must read it alike.

use chrono::{DateTime, NaiveTime, TimeDelta, Utc};
use iq_actors::ApiError;

/// The instant a key expires at from the form's `expires_on`: none when the field is
/// absent or blank, else the midnight after the date (the key works through that day).
pub fn expiry_of(expires_on: Option<&str>) -> Result<Option<DateTime<Utc>>, ApiError> {
    let expires_at = match expires_on.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(text) => {
            let date = iq_actors::wire_date::WireDate::parse(text)
                .map_err(|_| ApiError::invalid("The expiry date must be a date like 2027-01-31."))?
                .0;
            Some(
                (date + TimeDelta::days(1))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )
        }
    };
    Ok(expires_at)
}
