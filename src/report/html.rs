//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network,
//! no external font) laid out from a [`Report`]. Every chart is an `<svg role="img">` with
//! a text alternative, and every mark in it carries `class="mark"` while the chart says
//! how many points its data has (`data-points`), so a browser test can count both.

use std::fmt::Write as _;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::{DurationBucket, FlakyTest, HeatmapRun, Report, StripMark};
use crate::results::Outcome;

const STYLE: &str = r"
:root{--pass:#2e7d32;--fail:#c62828;--error:#6a1b9a;--flaky:#f9a825;--none:#e0e0e0;--ink:#1d1d1f;--muted:#5f6368}
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--ink);margin:24px auto;max-width:1200px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:16px 0 4px;font-family:ui-monospace,Menlo,monospace;word-break:break-all}
.scope{color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 10px}.card b{display:block;font-size:20px}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
th{font-weight:600;background:#fafafa}td.num{text-align:right;font-variant-numeric:tabular-nums}
code,.id{font-family:ui-monospace,Menlo,monospace;font-size:12px;word-break:break-all}
.legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
.pass{fill:var(--pass);background:var(--pass)}.fail{fill:var(--fail);background:var(--fail)}.error{fill:var(--error);background:var(--error)}.flaky-pass{fill:var(--flaky);background:var(--flaky)}
.absent{fill:var(--none)}.p50{stroke:#1565c0}.p95{stroke:#ef6c00}
.tier-trusted{color:var(--pass)}.tier-probation{color:#8d6e00}.tier-quarantined{color:var(--fail)}
details{margin:4px 0}summary{cursor:pointer;color:var(--muted)}
";

/// Renders the report as one HTML document.
pub fn render(report: &Report) -> String {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "candor report" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 { "candor report" }
                    p.scope { (scope_line(report)) }
                }
                (overview(report))
                (flakiest(report))
                (heatmap(report))
                (shapes(report))
                (durations(report))
                (ledger(report))
            }
        }
    };
    page.into_string()
}

fn scope_line(report: &Report) -> String {
    let mut line = String::new();
    match report.overview.as_of {
        Some(at) => {
            let _ = write!(line, "History as of {} (the newest run in scope)", when(at));
        }
        None => line.push_str("No run in scope"),
    }
    if let Some(since) = report.scope.since {
        let _ = write!(line, "; runs since {}", when(since));
    }
    if let Some(branch) = &report.scope.branch {
        let _ = write!(line, "; branch {branch}");
    } else if let Some(counted) = &report.scope.counted {
        let _ = write!(line, "; runs of {counted}, as reliability counts them");
    }
    if let Some(tests) = &report.scope.tests {
        let _ = write!(line, "; tests matching {tests}");
    }
    line.push('.');
    line
}

/// An instant as people read it in the report: UTC, to the minute.
fn when(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

fn overview(report: &Report) -> Markup {
    let o = &report.overview;
    let cards: [(&str, String); 11] = [
        ("runs", o.runs.to_string()),
        ("tests", o.tests.to_string()),
        ("red runs", o.red_runs.to_string()),
        ("confirmed flaky tests", o.confirmed_flaky.to_string()),
        ("trusted", o.trusted.to_string()),
        ("probation", o.probation.to_string()),
        ("quarantined", o.quarantined.to_string()),
        ("unlisted", o.unlisted.to_string()),
        ("tier changes at the next write", o.tier_changes.to_string()),
        ("reruns spent", o.reruns.to_string()),
        (
            "time lost (failures + reruns)",
            format!(
                "{} + {}",
                seconds(o.seconds_lost_to_failures),
                seconds(o.seconds_lost_to_reruns)
            ),
        ),
    ];
    html! {
        section #overview {
            h2 { "Overview" }
            div.cards {
                @for (label, value) in &cards {
                    div.card { b { (value) } (label) }
                }
            }
        }
    }
}

fn seconds(value: f64) -> String {
    if value >= 3600.0 {
        format!("{:.1} h", value / 3600.0)
    } else if value >= 60.0 {
        format!("{:.1} min", value / 60.0)
    } else {
        format!("{value:.1} s")
    }
}

fn outcome_class(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Error => "error",
        Outcome::FlakyPass => "flaky-pass",
        Outcome::Skip => "absent",
    }
}

fn legend() -> Markup {
    html! {
        p.legend {
            @for outcome in [Outcome::Pass, Outcome::Fail, Outcome::Error, Outcome::FlakyPass] {
                span { span class={"sw " (outcome_class(outcome))} {} (outcome.as_str()) }
            }
        }
    }
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

fn flakiest(report: &Report) -> Markup {
    html! {
        section #flakiest {
            h2 { "Flakiest tests" }
            p {
                "Ranked by flakiness: the share of consecutive runs in the test's window whose outcome \
                 differs, a flaky pass (failed, then passed inside one run) counting as a change of \
                 its own. A test that always fails is broken, not flaky, and scores 0. "
                (report.flakiest.len()) " shown."
            }
            (legend())
            table #flakiest-table {
                thead { tr {
                    th { "#" } th { "test" } th { "flakiness" } th { "runs in window" } th { "failures" }
                    th { "pass rate" } th { "Wilson 95%" } th { "tier" } th { "owner" }
                    th { "fingerprints" } th { "outcomes, oldest → newest" }
                } }
                tbody {
                    @for (rank, test) in report.flakiest.iter().enumerate() {
                        tr data-test=(test.test) {
                            td.num { (rank + 1) }
                            td.id { (test.test) }
                            td.num { (format!("{:.3}", test.flakiness)) }
                            td.num.runs { (test.runs) }
                            td.num.failures { (test.failures) }
                            td.num { (percent(test.pass_rate)) }
                            td { (wilson_band(test)) }
                            td.tier {
                                @match test.tier {
                                    Some(tier) => span class={"tier-" (tier.as_str())} { (tier.as_str()) },
                                    None => span { "unlisted" },
                                }
                                @if test.tier != Some(test.next_tier) {
                                    br; small { "→ " (test.next_tier.as_str()) " at the next write" }
                                }
                                (tier_history(test))
                            }
                            td { (test.owner.as_deref().unwrap_or("-")) }
                            td.id { @if test.fingerprints.is_empty() { "-" } @else { (test.fingerprints.join(", ")) } }
                            td { (strip(&test.test, &test.strip)) }
                        }
                    }
                }
            }
        }
    }
}

fn wilson_band(test: &FlakyTest) -> Markup {
    let Some((low, high)) = test.wilson_95 else {
        return html! { "-" };
    };
    let label = format!(
        "pass rate 95% band {:.1}% to {:.1}%",
        low * 100.0,
        high * 100.0
    );
    let x = low * 100.0;
    let width = ((high - low) * 100.0).max(0.5);
    html! {
        svg.band role="img" aria-label=(label) width="100" height="10" viewBox="0 0 100 10" data-points="1" {
            title { (label) }
            rect x="0" y="4" width="100" height="2" fill="#ddd" {}
            rect.mark x=(format!("{x:.2}")) y="1" width=(format!("{width:.2}")) height="8" fill="#1565c0" {}
        }
        br;
        small { (format!("{:.1}–{:.1}%", low * 100.0, high * 100.0)) }
    }
}

fn tier_history(test: &FlakyTest) -> Markup {
    if test.tier_history.is_empty() {
        return html! {};
    }
    html! {
        details {
            summary { "tier history" }
            ul {
                @for step in &test.tier_history {
                    li { (when(step.at)) ": " (step.tier.as_str()) " after run " (step.run_id) }
                }
            }
        }
    }
}

fn strip(test: &str, marks: &[StripMark]) -> Markup {
    const CELL: usize = 4;
    let width = (marks.len() * CELL).max(1);
    let red = marks
        .iter()
        .filter(|m| m.outcome.failed_at_least_once())
        .count();
    let label = format!(
        "{}: {} runs, {} failed at least once",
        test,
        marks.len(),
        red
    );
    html! {
        svg.strip role="img" aria-label=(label) width=(width) height="14"
            viewBox=(format!("0 0 {width} 14")) data-points=(marks.len()) {
            title { (label) }
            @for (i, mark) in marks.iter().enumerate() {
                rect class={"mark " (outcome_class(mark.outcome))} x=(i * CELL) y="0"
                    width=(CELL - 1) height="14" data-run=(mark.run_id) {}
            }
        }
    }
}

fn heatmap(report: &Report) -> Markup {
    const CELL: usize = 8;
    let runs: &[HeatmapRun] = &report.heatmap_runs;
    let tests = &report.flakiest;
    let width = (runs.len() * CELL).max(1);
    let height = (tests.len() * CELL).max(1);
    let points: usize = tests
        .iter()
        .map(|t| t.heatmap.iter().filter(|o| o.is_some()).count())
        .sum();
    let label = format!(
        "heatmap of the {} flakiest tests over the {} newest runs; the table below gives the same counts",
        tests.len(),
        runs.len()
    );
    html! {
        section #heatmap {
            h2 { "Tests × runs" }
            p { "Rows: the flakiest tests in the order above. Columns: the " (runs.len())
                " newest runs in scope, oldest on the left. Grey: the test did not run." }
            (legend())
            svg.heatmap role="img" aria-label=(label) width=(width) height=(height)
                viewBox=(format!("0 0 {width} {height}")) data-points=(points) {
                title { (label) }
                @for (row, test) in tests.iter().enumerate() {
                    @for (column, outcome) in test.heatmap.iter().enumerate() {
                        @match outcome {
                            Some(outcome) => rect class={"mark " (outcome_class(*outcome))}
                                x=(column * CELL) y=(row * CELL) width=(CELL - 1) height=(CELL - 1) {
                                    title { (test.test) ", run " (runs[column].run_id) ": " (outcome.as_str()) }
                                },
                            None => rect.absent x=(column * CELL) y=(row * CELL)
                                width=(CELL - 1) height=(CELL - 1) {},
                        }
                    }
                }
            }
            details {
                summary { "the heatmap as a table" }
                table {
                    thead { tr { th { "test" } th { "ran" } th { "red" } } }
                    tbody {
                        @for test in tests {
                            tr {
                                td.id { (test.test) }
                                td.num { (test.heatmap.iter().filter(|o| o.is_some()).count()) }
                                td.num { (test.heatmap.iter().flatten().filter(|o| o.failed_at_least_once()).count()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn shapes(report: &Report) -> Markup {
    html! {
        section #shapes {
            h2 { "Failure shapes" }
            p { "Each distinct failure signature of the tests above, with the fingerprint that matches it \
                 exactly. A shape with no fingerprint is a regression when it turns up in a change." }
            @for test in report.flakiest.iter().filter(|t| !t.shapes.is_empty()) {
                h3 { (test.test) }
                table.shapes {
                    thead { tr { th { "signature" } th { "failure" } th { "frame" } th { "count" }
                                 th { "first seen" } th { "last seen" } th { "fingerprint" } } }
                    tbody {
                        @for shape in &test.shapes {
                            tr {
                                td.id { (shape.signature.as_deref().map_or("-", |s| &s[..s.len().min(16)])) }
                                td { code { (shape.summary) } }
                                td.id { (shape.frame.as_deref().unwrap_or("-")) }
                                td.num { (shape.count) }
                                td { (when(shape.first_seen)) }
                                td { (when(shape.last_seen)) }
                                td { (shape.fingerprint.as_deref().unwrap_or("no fingerprint")) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn durations(report: &Report) -> Markup {
    html! {
        section #durations {
            h2 { "Durations" }
            p { "Median (p50, blue) and 95th percentile (p95, orange, nearest rank) of each test's \
                 durations over up to 10 equal stretches of its runs, oldest first." }
            @for test in report.flakiest.iter().filter(|t| !t.durations.is_empty()) {
                h3 { (test.test) }
                (trend(&test.test, &test.durations))
            }
        }
    }
}

fn trend(test: &str, buckets: &[DurationBucket]) -> Markup {
    const WIDTH: f64 = 300.0;
    const HEIGHT: f64 = 60.0;
    let top = buckets
        .iter()
        .map(|b| b.p95)
        .fold(0.0_f64, f64::max)
        .max(1e-9);
    let step = if buckets.len() > 1 {
        WIDTH / (buckets.len() - 1) as f64
    } else {
        0.0
    };
    let point =
        |i: usize, value: f64| (i as f64 * step, HEIGHT - value / top * (HEIGHT - 4.0) - 2.0);
    let line = |pick: fn(&DurationBucket) -> f64| {
        buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (x, y) = point(i, pick(b));
                format!("{x:.1},{y:.1}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let label = format!(
        "{test}: durations p50 {} to {}, p95 up to {}",
        seconds(buckets.iter().map(|b| b.p50).fold(f64::INFINITY, f64::min)),
        seconds(buckets.iter().map(|b| b.p50).fold(0.0, f64::max)),
        seconds(top)
    );
    html! {
        svg.trend role="img" aria-label=(label) width=(WIDTH + 8.0) height=(HEIGHT)
            viewBox=(format!("-4 0 {} {HEIGHT}", WIDTH + 8.0)) data-points=(buckets.len() * 2) {
            title { (label) }
            polyline.p50 fill="none" stroke-width="1.5" points=(line(|b| b.p50)) {}
            polyline.p95 fill="none" stroke-width="1.5" points=(line(|b| b.p95)) {}
            @for (i, bucket) in buckets.iter().enumerate() {
                @let (x, y) = point(i, bucket.p50);
                circle.mark.p50 cx=(format!("{x:.1}")) cy=(format!("{y:.1}")) r="2" fill="#1565c0" {}
                @let (x, y) = point(i, bucket.p95);
                circle.mark.p95 cx=(format!("{x:.1}")) cy=(format!("{y:.1}")) r="2" fill="#ef6c00" {}
            }
        }
        details {
            summary { "the durations as a table" }
            table {
                thead { tr { th { "from" } th { "runs" } th { "p50" } th { "p95" } } }
                tbody {
                    @for bucket in buckets {
                        tr { td { (when(bucket.from)) } td.num { (bucket.samples) }
                             td.num { (format!("{:.3} s", bucket.p50)) } td.num { (format!("{:.3} s", bucket.p95)) } }
                    }
                }
            }
        }
    }
}

fn ledger(report: &Report) -> Markup {
    html! {
        section #ledger {
            h2 { "Reruns" }
            @if report.ledger.is_empty() {
                p { "The ledger holds no rerun." }
            } @else {
                table {
                    thead { tr { th { "test" } th { "reruns" } th { "in the budget window" } th { "budget" } th { "signs of a real race" } } }
                    tbody {
                        @for row in &report.ledger {
                            tr {
                                td.id { (row.test) }
                                td.num { (row.reruns) }
                                td.num { (row.in_window) }
                                td.num { (row.budget) }
                                td { @if row.flags.is_empty() { "-" } @else { @for flag in &row.flags { div { (flag) } } } }
                            }
                        }
                    }
                }
            }
        }
    }
}
