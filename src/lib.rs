//! candor makes red and green mean something again: it keeps every test's history, tells a
//! real regression from a known flake by the failure's exact shape, makes every rerun leave
//! a receipt, and gates agent-authored diffs in a lane with zero flake budget.
//!
//! Where things live: `results` reads runners' files into the model, `history` stores it,
//! `ingest` carries files from one to the other, `stats` and `reliability` give tests their
//! tiers, `policy` reads `candor.toml` and matches fingerprints, `triage` gives a red test
//! its verdict, `ledger` keeps the rerun receipts, `runner` drives the test runners, `cli`
//! resolves arguments and prints. See
//! `docs/architecture.md`.

pub mod agents;
pub mod app;
pub mod ci_env;
pub mod classify;
pub mod cli;
pub mod compare;
pub mod confine;
pub mod env_vars;
pub mod events;
pub mod exit_codes;
pub mod file_hashes;
pub mod gate;
pub mod git;
pub mod history;
pub mod ingest;
pub mod ledger;
pub mod mcp;
pub mod order;
pub mod policy;
pub mod quote;
pub mod records;
pub mod reliability;
pub mod report;
pub mod results;
pub mod runner;
pub mod stats;
pub mod triage;

#[cfg(test)]
pub(crate) mod test_support;
