//! `candor init`: the commented starter candor.toml, written once (or printed), and
//! `.candor/` (the history and run logs) kept out of commits through .gitignore.

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
    let starter = crate::runner::package_json::starter_config(DEFAULT_CONFIG, repo_root);
    write_atomic(&path, &starter).map_err(|source| CliError::Write {
        path: path.clone(),
        source,
    })?;
    let gitignore = ignore_candor_dir(repo_root)?;
    if printer.is_json() {
        printer.json(
            "init",
            &serde_json::json!({ "path": path, "gitignore": gitignore.as_str() }),
        )?;
    } else {
        printer.info(&format!(
            "wrote {} (every key at its default, explained in the file's comments)",
            path.display()
        ))?;
        printer.info(&match gitignore {
            Gitignore::Added => {
                "added .candor/ to .gitignore: candor's history and run logs stay out of commits"
                    .to_owned()
            }
            Gitignore::Present => ".gitignore already keeps .candor/ out of commits".to_owned(),
        })?;
        printer.info(
            "agents: `candor agents` writes candor's rules (reruns, fingerprints, bans, tiers, tools) into AGENTS.md and CLAUDE.md once candor.toml is committed; `candor mcp` serves them as MCP tools",
        )?;
        printer.info(
            "next: `candor test` runs the suite and keeps its history; `candor help` lists every command; every key of candor.toml is explained in its comments",
        )?;
    }
    Ok(exit_codes::OK)
}

/// What `init` did to .gitignore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gitignore {
    /// Appended `.candor/`.
    Added,
    /// A line already ignores it; nothing written.
    Present,
}

impl Gitignore {
    fn as_str(self) -> &'static str {
        match self {
            Gitignore::Added => "added",
            Gitignore::Present => "present",
        }
    }
}

/// Appends `.candor/` to the repository's .gitignore unless a line already ignores the
/// folder; the rest of the file is kept byte for byte.
fn ignore_candor_dir(repo_root: &Path) -> Result<Gitignore, CliError> {
    let path = repo_root.join(".gitignore");
    let text = match fs_err::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(CliError::Read { path, source });
        }
    };
    if text.lines().any(ignores_candor_dir) {
        return Ok(Gitignore::Present);
    }
    let mut updated = text;
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    updated.push_str(".candor/\n");
    write_atomic(&path, &updated).map_err(|source| CliError::Write { path, source })?;
    Ok(Gitignore::Added)
}

/// Whether a .gitignore line ignores the `.candor` folder at the root.
fn ignores_candor_dir(line: &str) -> bool {
    let pattern = line.trim_end();
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    matches!(pattern, ".candor" | ".candor/" | ".candor/*" | ".candor/**")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_line_that_ignores_the_whole_folder_counts() {
        for line in [
            ".candor",
            ".candor/",
            "/.candor/",
            ".candor/**",
            ".candor/  ",
        ] {
            assert!(ignores_candor_dir(line), "{line:?}");
        }
        for line in [
            "# .candor/",
            "!.candor/",
            ".candor/runs",
            "x.candor",
            ".candorx",
        ] {
            assert!(!ignores_candor_dir(line), "{line:?}");
        }
    }
}
