//! Telemetry sparklines: SM clock, power, temperature, utilization, with a
//! throttle warning.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline, Widget};

use crate::metrics::format::{bytes, fixed};
use crate::session::event::TelemetrySample;
use crate::ui::{state::UiState, theme};

type Series = (
    &'static str,
    fn(&TelemetrySample) -> f64,
    fn(&TelemetrySample) -> String,
);

const SERIES: [Series; 4] = [
    (
        "SM clk",
        |t| t.sm_clock_mhz as f64,
        |t| format!("{} MHz", t.sm_clock_mhz),
    ),
    (
        "power",
        |t| t.power_w,
        |t| format!("{}/{} W", fixed(t.power_w, 0), fixed(t.power_limit_w, 0)),
    ),
    ("temp", |t| t.temp_c as f64, |t| format!("{} °C", t.temp_c)),
    (
        "util",
        |t| t.util_gpu_pct as f64,
        |t| format!("{}%", t.util_gpu_pct),
    ),
];

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let inner = super::panel(area, buf, " Telemetry (NVML) ");
    let samples = &state.session.telemetry;
    let Some(last) = samples.back() else {
        let why = match &state.session.telemetry_error {
            Some(e) => format!("no telemetry: {e}"),
            None => "no telemetry in this session".to_string(),
        };
        Paragraph::new(why)
            .style(theme::dim())
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(inner, buf);
        return;
    };
    let throttles = state.session.throttle_now();
    // Rows by priority when the panel is short: the SM clock, the status,
    // the power, the probe, then temperature and utilization.
    // The busy fraction rides on the probe's row: both say under what load
    // the latencies were taken.
    let (mhz, busy) = (state.session.probe_mhz, state.session.busy);
    let probe = (mhz.is_some() || busy.is_some()).then(|| {
        let mut spans = vec![Span::styled("probe  ", theme::label())];
        if let Some(mhz) = mhz {
            spans.push(Span::styled(format!("{mhz} MHz"), theme::value()));
            spans.push(Span::styled(
                format!(" in-kernel (NVML {} MHz)", last.sm_clock_mhz),
                theme::dim(),
            ));
        }
        if let Some(b) = busy {
            spans.push(Span::styled(" busy ", theme::dim()));
            spans.push(Span::styled(
                format!("{}%", fixed(b * 100.0, 1)),
                theme::value(),
            ));
        }
        Line::from(spans)
    });
    // "Now" is the last sample; the latency panel counts batches over the whole run, so a
    // throttle seen earlier is said here too rather than contradicted.
    let earlier = samples
        .iter()
        .filter(|t| !crate::model::state::active_throttles(&t.throttle_reasons).is_empty())
        .count();
    let status = if throttles.is_empty() && earlier > 0 {
        Line::styled(
            format!("throttled earlier: {earlier} of {} samples", samples.len()),
            theme::warn(),
        )
    } else if throttles.is_empty() {
        Line::styled(
            format!(
                "mem {} of {} · no throttling",
                bytes(last.mem_used_bytes as f64),
                bytes(last.mem_total_bytes as f64)
            ),
            theme::dim(),
        )
    } else {
        Line::styled(
            format!("⚠ THROTTLED: {}", throttles.join(", ")),
            theme::fail(),
        )
    };
    // Row ids: 0..4 the sparklines, 4 the probe, 5 the status.
    let priority = [0usize, 5, 1, 4, 2, 3];
    let mut shown: Vec<usize> = priority
        .iter()
        .copied()
        .filter(|&r| r != 4 || probe.is_some())
        .take(inner.height as usize)
        .collect();
    shown.sort_unstable();
    let areas = Layout::vertical(vec![Constraint::Length(1); shown.len()]).split(inner);
    for (row, area) in shown.iter().zip(areas.iter()) {
        match *row {
            i @ 0..=3 => {
                let (name, get, show) = &SERIES[i];
                let [label, spark, value] = Layout::horizontal([
                    Constraint::Length(7),
                    Constraint::Fill(1),
                    Constraint::Length(13),
                ])
                .areas(*area);
                Paragraph::new(Span::styled(*name, theme::label())).render(label, buf);
                let width = spark.width as usize;
                let data: Vec<u64> = samples
                    .iter()
                    .rev()
                    .take(width)
                    .rev()
                    .map(|t| scaled(get(t)))
                    .collect();
                Sparkline::default()
                    .data(&data)
                    .max(sparkline_max(samples.iter().map(get)))
                    .style(theme::value())
                    .render(spark, buf);
                Paragraph::new(Span::styled(format!(" {}", show(last)), theme::value()))
                    .render(value, buf);
            }
            4 => {
                if let Some(p) = &probe {
                    Paragraph::new(p.clone()).render(*area, buf);
                }
            }
            _ => Paragraph::new(status.clone()).render(*area, buf),
        }
    }
}

/// Sparklines take integers: keep one decimal of resolution.
pub fn scaled(v: f64) -> u64 {
    (v.max(0.0) * 10.0).round() as u64
}

/// The sparkline's top: the largest value seen, so bars are comparable over time.
pub fn sparkline_max(values: impl Iterator<Item = f64>) -> u64 {
    scaled(values.fold(0.0, f64::max)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_scaling() {
        assert_eq!(scaled(1980.0), 19800);
        assert_eq!(scaled(-3.0), 0);
        assert_eq!(sparkline_max([345.0, 1980.0, 1200.0].into_iter()), 19800);
        assert_eq!(sparkline_max(std::iter::empty()), 1);
    }
}
