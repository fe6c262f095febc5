//! `cargo bench --bench order`: how many probes `candor order`'s bisection needs to find
//! what flips a test among n preceding tests, against a linear search (each preceding
//! test run alone before the test, nearest first). Probes are counted, not timed: each is
//! one runner process in real use, so their number is the cost. Prints a Markdown table;
//! see docs/benchmarks.md and docs/order.md.
//!
//! Cases: one polluter at every position (every n); two polluters needed together, and
//! two polluters either of which suffices, at seeded random positions.

use std::convert::Infallible;
use std::process::ExitCode;

use candor::order::bisect::{ProbeOutcome, bisect, linear_search};
use candor::order::seeds::SplitMix64;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(about = "Counts bisection probes against a linear search")]
struct Options {
    /// Numbers of preceding tests.
    #[arg(long, value_delimiter = ',', default_values_t = [10usize, 50, 200, 1000])]
    n: Vec<usize>,
    /// Seeded random cases per n for the two-polluter cases.
    #[arg(long, default_value_t = 500)]
    trials: usize,
    /// Seed of the random positions (printed); the same seed gives the same table.
    #[arg(long, default_value_t = 0x0_0DE4)]
    seed: u64,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// How the test's flip depends on the tests before it.
#[derive(Clone, Copy)]
enum Cause<'a> {
    /// It flips when all of these ran before it.
    All(&'a [usize]),
    /// It flips when any of these ran before it.
    Any(&'a [usize]),
}

fn world(ran: &[usize], cause: Cause<'_>) -> ProbeOutcome {
    let flipped = match cause {
        Cause::All(tests) => tests.iter().all(|t| ran.contains(t)),
        Cause::Any(tests) => tests.iter().any(|t| ran.contains(t)),
    };
    if flipped {
        ProbeOutcome::Flipped
    } else {
        ProbeOutcome::Unchanged
    }
}

#[derive(Default)]
struct Counts {
    probes: Vec<u32>,
}

impl Counts {
    fn min(&self) -> u32 {
        self.probes.iter().copied().min().unwrap_or(0)
    }
    fn max(&self) -> u32 {
        self.probes.iter().copied().max().unwrap_or(0)
    }
    fn mean(&self) -> f64 {
        if self.probes.is_empty() {
            return 0.0;
        }
        self.probes.iter().map(|&p| f64::from(p)).sum::<f64>() / self.probes.len() as f64
    }
    fn cell(&self) -> String {
        format!("{} / {:.1} / {}", self.min(), self.mean(), self.max())
    }
}

/// Probes to find the cause, checked against the answer expected.
fn search(n: usize, cause: Cause<'_>, expected: &[usize]) -> Result<u32, String> {
    let prefix: Vec<usize> = (0..n).collect();
    let found = bisect(&prefix, |ran: &[usize]| {
        Ok::<_, Infallible>(world(ran, cause))
    })
    .unwrap_or_else(|never| match never.error {});
    if found.culprits != expected {
        return Err(format!(
            "n={n}: expected {expected:?}, found {:?}",
            found.culprits
        ));
    }
    Ok(found.probes)
}

fn main() -> ExitCode {
    let options = Options::parse();
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<(), String> {
    println!(
        "bisection probes (min / mean / max), seed {}, {} random cases per n\n",
        options.seed, options.trials
    );
    println!(
        "| n | target 2·log2(n)+10 | one polluter, every position | linear search, same cases | two polluters needed together | two polluters, either suffices |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut random = SplitMix64::new(options.seed);
    let mut over_target = Vec::new();
    for &n in &options.n {
        if n < 2 {
            continue;
        }
        let target = 2.0 * (n as f64).log2() + 10.0;
        let mut single = Counts::default();
        let mut linear = Counts::default();
        for at in 0..n {
            single.probes.push(search(n, Cause::All(&[at]), &[at])?);
            let prefix: Vec<usize> = (0..n).collect();
            let (found, probes) = linear_search(&prefix, |ran: &[usize]| {
                Ok::<_, Infallible>(world(ran, Cause::All(&[at])))
            })
            .unwrap_or_else(|never: Infallible| match never {});
            if found != Some(at) {
                return Err(format!("linear search missed {at} of {n}"));
            }
            linear.probes.push(probes);
        }
        if f64::from(single.max()) > target {
            over_target.push(n);
        }
        let mut together = Counts::default();
        let mut either = Counts::default();
        for _ in 0..options.trials {
            let (a, b) = (random.below(n), random.below(n));
            if a == b {
                continue;
            }
            let pair = [a.min(b), a.max(b)];
            together.probes.push(search(n, Cause::All(&pair), &pair)?);
            // The shortest flipping prefix ends at the earlier one.
            either
                .probes
                .push(search(n, Cause::Any(&pair), &pair[..1])?);
        }
        println!(
            "| {n} | {target:.1} | {} | {} | {} | {} |",
            single.cell(),
            linear.cell(),
            together.cell(),
            either.cell()
        );
    }
    println!(
        "\nVerification adds 2 × 3 runs (culprits then the test, the test alone) to every case."
    );
    if over_target.is_empty() {
        println!("One polluter: every position within the target.");
        Ok(())
    } else {
        Err(format!(
            "one polluter over the target for n = {over_target:?}"
        ))
    }
}
