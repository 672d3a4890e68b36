//! Line charts as SVG, drawn on the server: a series of (date, value) points in, an
//! SVG document out (rendered by an askama template, so every text is escaped).
//!
//! Coordinates are computed with `Decimal`, like every value they come from, and
//! rounded to a tenth of a pixel. This module draws; it must never round or alter
//! the values it labels (tooltips show them exactly as the API does).

use askama::Template;
use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::format::long_date;

/// A chart's size in SVG units, and whether it is a small sparkline (no axes, no
/// hover marks).
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub spark: bool,
}

pub const SPARKLINE: Frame = Frame {
    width: 160,
    height: 40,
    spark: true,
};

pub const FULL: Frame = Frame {
    width: 720,
    height: 300,
    spark: false,
};

/// One point as drawn.
pub struct Mark {
    pub x: String,
    pub y: String,
    pub date: String,
    pub value: String,
}

/// A horizontal grid line and its label.
pub struct Tick {
    pub y: String,
    pub label: String,
}

#[derive(Template)]
#[template(path = "chart.svg", escape = "html")]
pub struct Chart {
    pub frame: Frame,
    pub label: String,
    pub points: String,
    pub marks: Vec<Mark>,
    pub ticks: Vec<Tick>,
    pub first_date: String,
    pub last_date: String,
    pub plot_left: u32,
    pub plot_right: u32,
    pub plot_bottom: u32,
}

/// The chart of `series` (oldest first, values as the API printed them); `None` when
/// there is nothing to draw.
pub fn line(series: &[(NaiveDate, String)], frame: Frame, label: &str) -> Option<String> {
    let parsed: Vec<(NaiveDate, Decimal, &str)> = series
        .iter()
        .filter_map(|(d, v)| v.parse::<Decimal>().ok().map(|n| (*d, n, v.as_str())))
        .collect();
    let (first, last) = (parsed.first()?, parsed.last()?);
    let min = parsed.iter().map(|p| p.1).min()?;
    let max = parsed.iter().map(|p| p.1).max()?;
    // Sparklines fill their box; full charts leave room for labels.
    let (left, right, top, bottom) = if frame.spark {
        (2, frame.width - 2, 2, frame.height - 2)
    } else {
        (96, frame.width - 12, 12, frame.height - 28)
    };
    let (width, height) = (Decimal::from(right - left), Decimal::from(bottom - top));
    let steps = Decimal::from(parsed.len().saturating_sub(1).max(1));
    let x_of = |i: usize| Decimal::from(left) + Decimal::from(i) * width / steps;
    let y_of = |v: Decimal| {
        if max == min {
            Decimal::from(top) + height / Decimal::TWO
        } else {
            Decimal::from(top) + (max - v) * height / (max - min)
        }
    };
    let px = |d: Decimal| d.round_dp(1).normalize().to_string();
    let points = parsed
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{},{}", px(x_of(i)), px(y_of(p.1))))
        .collect::<Vec<_>>()
        .join(" ");
    let marks = if frame.spark {
        Vec::new()
    } else {
        parsed
            .iter()
            .enumerate()
            .map(|(i, p)| Mark {
                x: px(x_of(i)),
                y: px(y_of(p.1)),
                date: long_date(p.0),
                value: p.2.to_owned(),
            })
            .collect()
    };
    let ticks = if frame.spark {
        Vec::new()
    } else {
        (0..=3)
            .map(|i| {
                let value = max - (max - min) * Decimal::from(i) / Decimal::from(3);
                Tick {
                    y: px(y_of(value)),
                    label: value.round_dp(2).to_string(),
                }
            })
            .collect()
    };
    let chart = Chart {
        frame,
        label: label.to_owned(),
        points,
        marks,
        ticks,
        first_date: long_date(first.0),
        last_date: long_date(last.0),
        plot_left: left,
        plot_right: right,
        plot_bottom: bottom,
    };
    chart.render().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    #[test]
    fn the_line_spans_the_plot_and_the_extremes_touch_its_edges() {
        let series = vec![
            (day(2), "1000.000000".to_owned()),
            (day(3), "1010.000000".to_owned()),
            (day(4), "990.000000".to_owned()),
        ];
        let svg = line(&series, FULL, "GPU_Index").unwrap();
        // x from 96 to 708; the maximum at the top (12), the minimum at the bottom (272).
        assert!(svg.contains(r#"points="96,142 402,12 708,272""#), "{svg}");
        // Values are shown exactly as the API printed them.
        assert!(svg.contains(r#"data-value="1010.000000""#), "{svg}");
        assert!(svg.contains("2 Nov 2026"), "{svg}");
    }

    #[test]
    fn a_flat_or_single_point_series_is_drawn_in_the_middle() {
        let svg = line(&[(day(2), "5.5".to_owned())], SPARKLINE, "x").unwrap();
        assert!(svg.contains(r#"points="2,20""#), "{svg}");
        assert!(line(&[], SPARKLINE, "x").is_none());
    }

    #[test]
    fn labels_are_escaped() {
        let svg = line(
            &[(day(2), "1".to_owned())],
            FULL,
            "<script>alert(1)</script>",
        )
        .unwrap();
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(
            svg.contains("&#60;script&#62;") || svg.contains("&lt;script&gt;"),
            "{svg}"
        );
    }
}
