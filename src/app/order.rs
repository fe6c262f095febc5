//! `candor order TEST [--from RESULT_FILE] [--seed N] [--budget-seconds N]`: whether the
//! test's red depends on the tests before it, on the seed, or on running twice in one
//! process (`crate::order`). Every probe is a real run through the runner adapter,
//! logged and recorded under `.candor/runs/order-*/`.

use std::path::Path;

use super::{Lap, Ports};
use crate::app::running::scratch;
use crate::cli::error::CliError;
use crate::cli::settings::OrderSettings;
use crate::events::{Event, OrderEvent};
use crate::ingest::{IngestError, parse_failure};
use crate::order::explain::shell_words;
use crate::order::prefix::{go_shuffle_seed, tests_before};
use crate::order::{self, Plan, RecordedOrder, Verdict};
use crate::policy::Config;
use crate::results::{self, Execution, ParseOptions};
use crate::runner::{self, Adapter, GivenOrder};

/// What the investigation found: the `order` event, and what the text says beside it.
#[derive(Debug, Clone)]
pub struct OrderFound {
    /// The event emitted.
    pub event: OrderEvent,
    /// The option that turns reseeding off, when the runner has one (` (-p no:randomly)`).
    pub unseeded_how: &'static str,
    /// Why the runner's order for "as given" is its own, when it is.
    pub fixed_order: Option<&'static str>,
}

/// `candor order`: the investigation, inside the settings' budget, which counts from the
/// call (the listing included). A test the runner did not run at all is an error.
pub fn order(settings: &OrderSettings, ports: &mut Ports<'_>) -> Result<OrderFound, CliError> {
    let clock = Lap::start(ports.clock);
    let repo_root = ports.root;
    let config = Config::load(repo_root)?;
    let executor = ports.executor;
    let dir = scratch(repo_root, "order")?;
    let runner_config = &config.runner;
    let setup_context = runner::Context::new(repo_root, dir.join("setup"), executor)
        .with_timeout(Some(runner_config.timeout), runner_config.grace);
    let adapter = runner::adapter(runner_config, &setup_context)?;
    let test = settings.test_id.as_str();
    let parse = &settings.workspace.parse;
    let recorded = match &settings.from {
        Some(file) => Some(recorded_order(file, test, &*adapter, parse)?),
        None => None,
    };
    let setup = order::Setup {
        adapter: &*adapter,
        executor,
        repo_root,
        dir: &dir,
        timeout: runner_config.timeout,
        grace: runner_config.grace,
        parse,
        commit: settings.workspace.commit.as_deref(),
        fixtures: &config.lane.fixtures,
    };
    ports.progress(format!(
        "listing the tests with {}…",
        adapter.kind().as_str()
    ));
    let (request, dropped) = order::build_request(&setup, test, recorded)?;
    let base_seed = settings.seed.unwrap_or_else(crate::runner::pick_seed);
    let plan = Plan::new(base_seed, settings.budget);
    let finding = {
        let mut on_probe = |probe: &order::Probe, observed: &order::Observation| {
            let outcome = observed.outcome.map_or("did not run", |o| o.as_str());
            // A progress line that cannot be written (stderr gone) is no reason to stop
            // the investigation: the sink keeps the error for the end.
            ports.progress(format!(
                "probe {} ({}, seed {}): {outcome}",
                probe.number,
                probe.purpose.as_str(),
                probe.seed
            ));
        };
        order::investigate(&setup, &request, &plan, &clock, &mut on_probe).map_err(|error| {
            match error {
                // pytest's `not found`, nextest's `no tests to run`: the id names no test.
                runner::RunnerError::CouldNotRun(not_run) if not_run.unknown_test => {
                    CliError::TestDidNotRun {
                        id: test.to_owned(),
                        log: Some(not_run.log.clone()),
                        said: not_run.quoted.clone(),
                    }
                }
                other => CliError::Runner(other),
            }
        })?
    };
    let investigation = &finding.investigation;
    if investigation.verdict == Verdict::NotRun {
        return Err(CliError::TestDidNotRun {
            id: test.to_owned(),
            log: investigation.probes.iter().find_map(|p| p.log.clone()),
            said: Vec::new(),
        });
    }
    let unseeded_how = adapter
        .unseeded_command(test)
        .ok()
        .and_then(|argv| {
            argv.iter()
                .position(|a| a == "no:randomly")
                .map(|_| " (-p no:randomly)")
        })
        .unwrap_or("");
    let fixed_order = match adapter.order_support().given {
        GivenOrder::Fixed(why) => Some(why),
        _ => None,
    };
    let event = OrderEvent {
        runner: adapter.kind().as_str().to_owned(),
        reproduction_command: finding.reproduction.as_deref().map(shell_words),
        recorded_dropped: dropped,
        classified: order::classified(&finding),
        finding,
    };
    ports.emit(Event::Order(event.clone()));
    Ok(OrderFound {
        event,
        unseeded_how,
        fixed_order,
    })
}

/// The tests before `test` in the results file that share its process, and the file's
/// seed where the format records it (`go test -json`).
pub(crate) fn recorded_order(
    file: &Path,
    test: &str,
    adapter: &dyn Adapter,
    parse: &ParseOptions,
) -> Result<RecordedOrder, CliError> {
    let read_error = |source| {
        CliError::Results(IngestError::Read {
            path: file.to_owned(),
            source,
        })
    };
    let bytes = fs_err::read(file).map_err(read_error)?;
    let mut executions: Vec<Execution> = Vec::new();
    results::parse(bytes.as_slice(), parse, &mut |execution| {
        executions.push(execution);
        Ok(())
    })
    .map_err(|error| CliError::Results(parse_failure(file, error)))?;
    let scope = adapter.process_scope(test);
    let before = tests_before(
        &executions,
        test,
        |id| scope.is_some() && adapter.process_scope(id) == scope,
        |id| adapter.selection_unit(id),
    )
    .ok_or_else(|| CliError::NotInResults {
        id: test.to_owned(),
        file: file.to_owned(),
    })?;
    Ok(RecordedOrder {
        source: format!("the order in {}", file.display()),
        before,
        seed: go_shuffle_seed(&String::from_utf8_lossy(&bytes)),
    })
}

/// #13 item 4: `order` in milliseconds, with an executor that plays pytest by a rule (the
/// victim fails exactly when the polluter ran before it in the same process).
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::app::fakes::{
        Answer, RuleExecutor, Scene, TickingClock, junit, said, tree, workspace,
    };
    use crate::events::Collected;

    const POLLUTER: &str = "tests/test_cache.py::test_fills_the_cache";
    const BYSTANDER: &str = "tests/test_cache.py::test_reads_a_file";
    const VICTIM: &str = "tests/test_cache.py::test_starts_empty";

    fn pytest(argv: &[String]) -> Answer {
        let said = |stdout: String| Answer {
            code: 0,
            stdout,
            report: None,
        };
        if argv.iter().any(|a| a == "-VV") {
            return said("pytest 8.3.3\n".to_owned());
        }
        if argv.iter().any(|a| a == "--collect-only") {
            return said(format!(
                "{POLLUTER}\n{BYSTANDER}\n{VICTIM}\n\n3 tests collected in 0.01s\n"
            ));
        }
        let ids: Vec<&str> = argv
            .iter()
            .map(String::as_str)
            .filter(|a| a.contains("::"))
            .collect();
        let polluted = ids
            .iter()
            .position(|id| *id == POLLUTER)
            .zip(ids.iter().position(|id| *id == VICTIM))
            .is_some_and(|(polluter, victim)| polluter < victim);
        let cases: Vec<(&str, &str)> = ids
            .iter()
            .map(|id| {
                (
                    *id,
                    if *id == VICTIM && polluted {
                        "fail"
                    } else {
                        "pass"
                    },
                )
            })
            .collect();
        Answer {
            code: i32::from(polluted),
            stdout: String::new(),
            report: Some(junit(&cases)),
        }
    }

    #[test]
    fn a_test_red_only_after_another_names_its_polluter() {
        let scene = Scene::new(&tree(&[("candor.toml", "[runner]\nkind = \"pytest\"\n")]));
        let executor = RuleExecutor::new(pytest);
        let clock = TickingClock::new(Duration::from_millis(10));
        let mut events = Collected::default();
        let settings = OrderSettings {
            test_id: VICTIM.to_owned(),
            from: None,
            seed: Some(3),
            budget: Duration::from_secs(600),
            workspace: workspace("head0000000000000000000000000000000000000"),
        };
        let found = order(
            &settings,
            &mut Ports {
                root: &scene.root,
                executor: &executor,
                clock: &clock,
                events: &mut events,
            },
        )
        .unwrap_or_else(|error| panic!("{error}"));
        let investigation = &found.event.finding.investigation;
        assert_eq!(
            investigation.verdict,
            Verdict::OrderDependentVictim {
                polluters: vec![POLLUTER.to_owned()]
            },
            "{investigation:?}"
        );
        assert_eq!(investigation.alone.red, 0);
        assert!(investigation.verification.as_ref().is_some_and(|v| v.holds));
        let reproduction = found.event.reproduction_command.clone().unwrap_or_default();
        assert!(
            reproduction.contains(POLLUTER) && reproduction.contains(VICTIM),
            "{reproduction}"
        );
        assert_eq!(found.event.runner, "pytest");
        // The listing line, then one line per probe, in order.
        let said = said(&events);
        assert_eq!(
            said.first(),
            Some(&("progress", "listing the tests with pytest…".to_owned()))
        );
        let probes: Vec<&String> = said
            .iter()
            .map(|(_, text)| text)
            .filter(|text| text.starts_with("probe "))
            .collect();
        assert_eq!(probes.len(), investigation.probes.len());
        assert_eq!(
            probes.first().map(|text| text.as_str()),
            Some(
                format!(
                    "probe 1 (alone, seed {}): pass",
                    investigation.probes[0].seed
                )
                .as_str()
            )
        );
        assert!(
            matches!(events.events.last(), Some(Event::Order(last)) if last.finding.investigation.verdict == investigation.verdict),
            "the finding is the last event"
        );
        // Version, listing, then one process per probe.
        assert_eq!(executor.argvs().len(), investigation.probes.len() + 2);
    }
}
