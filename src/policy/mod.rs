//! Policy: `candor.toml` (humans own it) read, validated and resolved into settings the
//! rest of candor uses. Errors name the file, line and key.

pub mod config;

pub use config::{Config, ConfigError, ReliabilityConfig};
