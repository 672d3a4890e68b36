//! What every benchmark shares: its settings from the environment, the median of its
//! rounds, and the limit a tier is raised to for them. Included by each bench with
//! `#[path = "support.rs"] mod support;`.

/// The variable `name` as a number, or `default` when unset or unreadable.
pub fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The median of `values` (the mean of the middle two for an even count; NaN if empty).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The pro tier's limits during the rounds of a benchmark that raises them: never
/// reached, so what is measured is the path, not a refusal.
#[allow(dead_code)] // not every benchmark raises them
pub const RAISED: i64 = 1_000_000_000;
