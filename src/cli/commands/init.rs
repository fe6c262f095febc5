//! `candor init`: the commented starter candor.toml, written once (or printed).

use std::path::Path;

use crate::cli::error::CliError;
use crate::cli::output::Printer;
use crate::cli::settings::InitSettings;
use crate::exit_codes;
use crate::policy::config::{CONFIG_FILE, DEFAULT_CONFIG};
use crate::reliability::write_atomic;

pub(super) fn run(
    settings: &InitSettings,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    if settings.print {
        printer.line(DEFAULT_CONFIG.trim_end_matches('\n'))?;
        return Ok(exit_codes::OK);
    }
    let path = crate::confine::check_write(repo_root, Path::new(CONFIG_FILE))?;
    if path.exists() && !settings.force {
        return Err(CliError::ConfigExists { path });
    }
    write_atomic(&path, DEFAULT_CONFIG).map_err(|source| CliError::Write {
        path: path.clone(),
        source,
    })?;
    if printer.is_json() {
        printer.json("init", &serde_json::json!({ "path": path }))?;
    } else {
        printer.info(&format!(
            "wrote {} (every key at its default; see docs/configuration.md)",
            path.display()
        ))?;
    }
    Ok(exit_codes::OK)
}
