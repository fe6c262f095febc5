//! Policy: `candor.toml` (humans own it) read, validated and resolved into settings the
//! rest of candor uses, and the flake fingerprints it declares, matched exactly. Errors
//! name the file, line and key.

pub mod config;
pub mod fingerprint;
pub mod source;

pub use config::{Ban, Freeze, LaneConfig, LinePattern, PathGlob, Preset, ReplayMode};
pub use config::{Config, ConfigError, ReliabilityConfig, RerunConfig, RunsConfig, TriageConfig};
pub use fingerprint::{
    ConditionMismatch, Fingerprint, FingerprintConditions, FingerprintMatch, MessagePattern,
    Mismatch, RunConditions, find_match,
};
pub use source::{Policy, PolicyError, PolicySource};
