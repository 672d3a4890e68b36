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
    /// The series it belongs to (empty on a one-line chart).
    pub series: String,
}

/// One series' line: its points and its colour class (`s0`, `s1`, ...).
pub struct Drawn {
    pub points: String,
    pub class: String,
}

/// A date under the time axis.
pub struct DateTick {
    pub x: String,
    pub label: String,
    /// `start`, `middle` or `end`: labels near an edge lean inwards.
    pub anchor: &'static str,
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
    pub lines: Vec<Drawn>,
    pub marks: Vec<Mark>,
    pub ticks: Vec<Tick>,
    pub date_ticks: Vec<DateTick>,
    pub plot_left: u32,
    pub plot_right: u32,
    pub plot_bottom: u32,
}

/// A named series of (date, value) points, oldest first, values as the API printed
/// them.
pub struct Series<'a> {
    pub name: &'a str,
    pub points: &'a [(NaiveDate, String)],
}

/// The chart of `series` (oldest first, values as the API printed them); `None` when
/// there is nothing to draw.
pub fn line(series: &[(NaiveDate, String)], frame: Frame, label: &str) -> Option<String> {
    lines(
        &[Series {
            name: "",
            points: series,
        }],
        frame,
        label,
    )
}

/// A value as it is drawn: its day, the number, and the text the API printed.
type Point<'a> = (NaiveDate, Decimal, &'a str);

/// Several series on one chart, on one value axis and one time axis (the dates of all
/// of them): each line in its colour class, `s0` for the first. `None` when there is
/// nothing to draw.
pub fn lines(all: &[Series<'_>], frame: Frame, label: &str) -> Option<String> {
    let parsed: Vec<Vec<Point<'_>>> = all
        .iter()
        .map(|series| {
            series
                .points
                .iter()
                .filter_map(|(d, v)| v.parse::<Decimal>().ok().map(|n| (*d, n, v.as_str())))
                .collect()
        })
        .collect();
    let plot = Plot::of(&parsed, frame)?;
    let drawn = parsed
        .iter()
        .enumerate()
        .map(|(n, points)| Drawn {
            points: points
                .iter()
                .map(|p| format!("{},{}", px(plot.x_of_date(p.0)), px(plot.y(p.1))))
                .collect::<Vec<_>>()
                .join(" "),
            class: format!("s{n}"),
        })
        .collect();
    let (marks, date_ticks) = if frame.spark {
        (Vec::new(), Vec::new())
    } else {
        (plot.marks(&parsed, all), plot.date_ticks())
    };
    let chart = Chart {
        frame,
        label: label.to_owned(),
        lines: drawn,
        marks,
        ticks: plot.ticks(),
        date_ticks,
        plot_left: plot.left,
        plot_right: plot.right,
        plot_bottom: plot.bottom,
    };
    chart.render().ok()
}

/// Where days and values fall on a chart's canvas: the plot area's edges, the days of
/// every series in order (spaced evenly, as trading days are), and the value scale.
struct Plot {
    left: u32,
    right: u32,
    top: u32,
    bottom: u32,
    dates: Vec<NaiveDate>,
    /// A full chart's round scale, ticked at each step; none on a sparkline.
    scale: Option<Scale>,
    low: Decimal,
    high: Decimal,
}

impl Plot {
    /// `None` when no series has a point.
    fn of(parsed: &[Vec<Point<'_>>], frame: Frame) -> Option<Plot> {
        let every = || parsed.iter().flatten();
        let min = every().map(|p| p.1).min()?;
        let max = every().map(|p| p.1).max()?;
        let mut dates: Vec<NaiveDate> = every().map(|p| p.0).collect();
        dates.sort_unstable();
        dates.dedup();
        // Sparklines fill their box; full charts leave room for labels.
        let (left, right, top, bottom) = if frame.spark {
            (2, frame.width - 2, 2, frame.height - 2)
        } else {
            (96, frame.width - 12, 12, frame.height - 28)
        };
        // A full chart's scale runs between round values, ticked at each; a
        // sparkline's between the extremes, so its line fills the box.
        let integers = every().all(|p| p.1.fract().is_zero());
        let scale = (!frame.spark).then(|| Scale::nice(min, max, integers));
        let (low, high) = scale.as_ref().map_or((min, max), |s| (s.low, s.high));
        Some(Plot {
            left,
            right,
            top,
            bottom,
            dates,
            scale,
            low,
            high,
        })
    }

    /// The `i`th day's x.
    fn x(&self, i: usize) -> Decimal {
        let width = Decimal::from(self.right - self.left);
        let steps = Decimal::from(self.dates.len().saturating_sub(1).max(1));
        Decimal::from(self.left) + Decimal::from(i) * width / steps
    }

    fn x_of_date(&self, day: NaiveDate) -> Decimal {
        self.x(self.dates.binary_search(&day).unwrap_or_default())
    }

    fn y(&self, value: Decimal) -> Decimal {
        let height = Decimal::from(self.bottom - self.top);
        if self.high == self.low {
            Decimal::from(self.top) + height / Decimal::TWO
        } else {
            Decimal::from(self.top) + (self.high - value) * height / (self.high - self.low)
        }
    }

    /// Every point, for hovering: where it is, its day and its value as printed.
    fn marks(&self, parsed: &[Vec<Point<'_>>], all: &[Series<'_>]) -> Vec<Mark> {
        parsed
            .iter()
            .zip(all)
            .flat_map(|(points, series)| {
                points.iter().map(|p| Mark {
                    x: px(self.x_of_date(p.0)),
                    y: px(self.y(p.1)),
                    date: long_date(p.0),
                    value: p.2.to_owned(),
                    series: series.name.to_owned(),
                })
            })
            .collect()
    }

    /// The grid lines of the value scale.
    fn ticks(&self) -> Vec<Tick> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        scale
            .values()
            .map(|value| Tick {
                y: px(self.y(value)),
                label: value.round_dp(scale.step.scale()).to_string(),
            })
            .collect()
    }

    /// The labels of the time axis, leaning inwards near an edge.
    fn date_ticks(&self) -> Vec<DateTick> {
        calendar_ticks(&self.dates)
            .into_iter()
            .map(|(i, label)| {
                let x = self.x(i);
                let anchor = if x < Decimal::from(self.left + 40) {
                    "start"
                } else if x > Decimal::from(self.right - 40) {
                    "end"
                } else {
                    "middle"
                };
                DateTick {
                    x: px(x),
                    label,
                    anchor,
                }
            })
            .collect()
    }
}

/// A coordinate as the SVG carries it: to a tenth of a pixel.
fn px(d: Decimal) -> String {
    d.round_dp(1).normalize().to_string()
}

/// Where the time axis is labelled: at the first trading day of each week, month,
/// quarter or year, whichever gives a handful of labels over the series' span (at most
/// eight, every other one dropped until they fit); the first and last dates when no
/// such day falls inside.
fn calendar_ticks(dates: &[NaiveDate]) -> Vec<(usize, String)> {
    use chrono::Datelike;
    let (Some(first), Some(last)) = (dates.first(), dates.last()) else {
        return Vec::new();
    };
    let days = (*last - *first).num_days();
    type Period = fn(NaiveDate) -> (i32, u32);
    let (period, format): (Period, &str) = if days > 2 * 366 {
        (|d| (d.year(), 0), "%Y")
    } else if days > 270 {
        (|d| (d.year(), d.month0() / 3), "%b %Y")
    } else if days > 45 {
        (|d| (d.year(), d.month()), "%b %Y")
    } else {
        (|d| (d.iso_week().year(), d.iso_week().week()), "%-d %b")
    };
    let mut ticks: Vec<(usize, String)> = (1..dates.len())
        .filter(|&i| period(dates[i]) != period(dates[i - 1]))
        .map(|i| (i, dates[i].format(format).to_string()))
        .collect();
    while ticks.len() > 8 {
        ticks = ticks.into_iter().step_by(2).collect();
    }
    if ticks.is_empty() {
        ticks = vec![(0, long_date(*first))];
        if dates.len() > 1 {
            ticks.push((dates.len() - 1, long_date(*last)));
        }
    }
    ticks
}

/// A value axis between round values: `low` and `high` are multiples of `step`, which
/// is 1, 2, 2.5 or 5 times a power of ten, chosen so that about four steps span the
/// data; never a fraction for data of whole numbers (call counts).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Scale {
    low: Decimal,
    high: Decimal,
    step: Decimal,
}

impl Scale {
    fn nice(min: Decimal, max: Decimal, integers: bool) -> Scale {
        let span = if max > min {
            max - min
        } else if min.is_zero() {
            Decimal::ONE
        } else {
            // A flat series: a tenth of its value around it.
            min.abs() / Decimal::TEN
        };
        let rough = span / Decimal::from(4);
        let mut magnitude = Decimal::ONE;
        while magnitude * Decimal::TEN <= rough {
            magnitude *= Decimal::TEN;
        }
        while magnitude > rough && magnitude > Decimal::new(1, 12) {
            magnitude /= Decimal::TEN;
        }
        let mut step = [
            Decimal::ONE,
            Decimal::TWO,
            Decimal::new(25, 1),
            Decimal::new(5, 0),
            Decimal::TEN,
        ]
        .into_iter()
        .map(|factor| factor * magnitude)
        .find(|step| *step >= rough)
        .unwrap_or(magnitude * Decimal::TEN)
        .normalize();
        if integers && step < Decimal::ONE {
            step = Decimal::ONE;
        }
        let mut low = (min / step).floor() * step;
        let mut high = (max / step).ceil() * step;
        if max == min {
            // A flat series: a step on each side, so it runs across the middle.
            if low == min {
                low -= step;
            }
            if high == max {
                high += step;
            }
        }
        Scale {
            low: low.normalize(),
            high: high.normalize(),
            step,
        }
    }

    /// The ticks, from the top down.
    fn values(&self) -> impl Iterator<Item = Decimal> + '_ {
        let count = ((self.high - self.low) / self.step)
            .round()
            .try_into()
            .unwrap_or(0u32);
        (0..=count).map(move |i| self.high - self.step * Decimal::from(i))
    }
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

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn the_scale_runs_between_round_values() {
        let scale = Scale::nice(dec("1029.301234"), dec("1032.890001"), false);
        assert_eq!(
            (scale.low, scale.high, scale.step),
            (dec("1029"), dec("1033"), dec("1"))
        );
        let ticks: Vec<String> = scale.values().map(|v| v.to_string()).collect();
        assert_eq!(ticks, ["1033", "1032", "1031", "1030", "1029"]);
        let small = Scale::nice(dec("2.3645"), dec("2.3712"), false);
        assert_eq!(small.step, dec("0.002"));
        assert!(small.low <= dec("2.3645") && small.high >= dec("2.3712"));
        // Call counts: whole numbers only, however few.
        let calls = Scale::nice(dec("0"), dec("10"), true);
        assert_eq!(
            (calls.low, calls.high, calls.step),
            (dec("0"), dec("10"), dec("2.5"))
        );
        let few = Scale::nice(dec("0"), dec("3"), true);
        assert_eq!(few.step, dec("1"));
        assert!(few.values().all(|v| v.fract().is_zero()));
        // A flat series gets a scale around it.
        let flat = Scale::nice(dec("1000"), dec("1000"), true);
        assert!(
            flat.low < dec("1000") && flat.high > dec("1000"),
            "{flat:?}"
        );
    }

    #[test]
    fn the_time_axis_is_labelled_on_calendar_boundaries() {
        let weekdays = |from: NaiveDate, n: usize| -> Vec<NaiveDate> {
            from.iter_days()
                .filter(|d| chrono::Datelike::weekday(d).number_from_monday() <= 5)
                .take(n)
                .collect()
        };
        // Three months of trading days: the first trading day of each month.
        let quarter = weekdays(NaiveDate::from_ymd_opt(2026, 8, 20).unwrap(), 66);
        let labels: Vec<String> = calendar_ticks(&quarter).into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["Sep 2026", "Oct 2026", "Nov 2026"]);
        // Five years: years.
        let years = weekdays(NaiveDate::from_ymd_opt(2021, 6, 1).unwrap(), 1300);
        let labels: Vec<String> = calendar_ticks(&years).into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["2022", "2023", "2024", "2025", "2026"]);
        // Two days: the first and the last.
        let two = [day(9), day(10)];
        let labels: Vec<String> = calendar_ticks(&two).into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["9 Nov 2026", "10 Nov 2026"]);
    }

    #[test]
    fn several_series_share_the_time_and_value_axes() {
        let a = vec![(day(2), "100".to_owned()), (day(4), "110".to_owned())];
        let b = vec![(day(3), "90".to_owned()), (day(4), "100".to_owned())];
        let svg = lines(
            &[
                Series {
                    name: "A",
                    points: &a,
                },
                Series {
                    name: "B",
                    points: &b,
                },
            ],
            FULL,
            "A and B",
        )
        .unwrap();
        // Three dates across: A at the first and last, B at the middle and last.
        assert!(svg.contains(r#"class="line s0""#), "{svg}");
        assert!(svg.contains(r#"class="line s1""#), "{svg}");
        assert!(svg.contains(r#"data-series="B""#), "{svg}");
        let points = |class: &str| {
            let at = svg.find(&format!(r#"class="line {class}""#)).unwrap();
            let start = at + svg[at..].find("points=\"").unwrap() + 8;
            svg[start..start + svg[start..].find('"').unwrap()].to_owned()
        };
        assert!(points("s0").starts_with("96,"), "{}", points("s0"));
        assert!(points("s1").starts_with("402,"), "{}", points("s1"));
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
