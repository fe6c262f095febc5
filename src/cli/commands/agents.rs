//! `candor agents`: the rules block from the merge base's policy, written into (or, with
//! `--check`, compared with) each instruction file.

use crate::agents;
use crate::cli::error::CliError;
use crate::cli::output::Printer;
use crate::cli::settings::{AgentsSettings, PolicyChoice};
use crate::exit_codes;
use crate::reliability::write_atomic;

pub(super) fn run(
    settings: &AgentsSettings,
    repo_root: &std::path::Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let source = crate::app::verdicts::resolve_source(
        repo_root,
        &settings.workspace,
        PolicyChoice::Base,
        false,
    )?;
    printer.note(&format!("the rules come from {}", source.reason))?;
    let block = agents::render(&source.source.load()?.config);
    if settings.print {
        if printer.is_json() {
            printer.json("agents-block", &crate::events::AgentsBlock { text: block })?;
        } else {
            printer.line(block.trim_end_matches('\n'))?;
        }
        return Ok(exit_codes::OK);
    }
    // Every file is checked before any is written: a bad marker in the second file must
    // not leave the first one updated alone.
    let mut planned = Vec::new();
    for path in &settings.files {
        crate::confine::check_write_if_under(repo_root, path)?;
        let old = match fs_err::read_to_string(path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(CliError::Read {
                    path: path.clone(),
                    source,
                });
            }
        };
        let new =
            agents::splice(old.as_deref(), &block).map_err(|source| CliError::AgentsMarkers {
                path: path.clone(),
                source,
            })?;
        planned.push((path, old, new));
    }
    let mut stale = false;
    for (path, old, new) in planned {
        let shown = path
            .strip_prefix(repo_root)
            .unwrap_or(path)
            .display()
            .to_string();
        let status = if old.as_deref() == Some(new.as_str()) {
            "current"
        } else if settings.check {
            stale = true;
            "stale"
        } else {
            write_atomic(path, &new).map_err(|source| CliError::Write {
                path: path.clone(),
                source,
            })?;
            if old.is_some() { "updated" } else { "created" }
        };
        let diff =
            (status == "stale").then(|| agents::diff(&shown, old.as_deref().unwrap_or(""), &new));
        if printer.is_json() {
            printer.json(
                "agents",
                &crate::events::AgentsEvent {
                    file: shown,
                    status: status.to_owned(),
                    diff: diff.clone(),
                },
            )?;
        } else {
            printer.info(&format!("{shown}: {status}"))?;
            if let Some(diff) = &diff {
                printer.line(diff.trim_end_matches('\n'))?;
            }
        }
    }
    if stale {
        printer.warning("the candor block is stale: run `candor agents` and commit the files")?;
        return Ok(exit_codes::NEGATIVE);
    }
    Ok(exit_codes::OK)
}
