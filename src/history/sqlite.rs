//! TODO(store): the embedded SQLite history store.

/// The embedded SQLite history.
pub struct SqliteStore;
