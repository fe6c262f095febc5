//! The embedded SQLite history store: opening and migrating the database file, ingest
//! transactions, and the queries behind [`HistoryStore`]. No SQLite type leaves this
//! module. Executions are packed per run in blocks of test ids ([`super::packed`]);
//! docs/storage-layout.md says what each query reads.

mod ingest;
mod migrate;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::types::Type;
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Row, Statement, Transaction,
    TransactionBehavior, params,
};

use super::packed::{
    self, Details, Entries, IndexEntry, Narrow, block_and_slot, decode_index, decode_names,
    outcome_nibble, outcome_of_nibble,
};
use super::{
    Conditions, HistoryError, HistoryStore, IngestSession, NewRun, RunRecord, Source,
    StoredExecution, TestSummary, TestWindow, WindowEntry,
};
use crate::results::{Execution, Outcome};

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = migrate::MIGRATIONS.len() as i64;

/// Page size of a new database. Larger than SQLite's 4 KiB default because an ingest
/// appends long runs of rows: fewer, larger pages mean fewer page splits and less
/// bookkeeping per row (a sixth less CPU than 4 KiB pages for the 200,000-case benchmark
/// file with one row per execution; 32 and 64 KiB gained little more).
const PAGE_BYTES: i64 = 16 * 1024;

/// Page cache per connection, in KiB. An ingest appends, so it needs few pages at a time;
/// the questions over every test read each page once.
const CACHE_KIB: i64 = 4 * 1024;

/// A checkpoint cuts the WAL back to this size, so that one big ingest does not leave a
/// WAL file as big as itself behind.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// How much the store holds in memory while it ingests and answers. The defaults suit
/// every history; the limits only decide when something is written or read early, never
/// what is stored or answered, which is why tests shrink them to reach every such path
/// with small histories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Blocks of a run gathered at once. A file whose tests come in id order (every file
    /// after a project's first is mostly in the order its tests were first seen) fills
    /// one block at a time; a shuffled one keeps many open, about 10 KiB each. Past this
    /// many, the half touched longest ago are written, and read back should more of their
    /// tests come.
    pub open_blocks: usize,
    /// Bytes of details (failures, skip messages, captured output) the open blocks hold
    /// together; past it the largest are written early.
    pub details_held: usize,
    /// A block's details are written as one row once they reach this size, so that
    /// reading one execution's details reads little more than its own.
    pub details_part_bytes: usize,
    /// Bytes of decoded test names kept for finding known tests: all of a history of
    /// about 100,000 tests by default, the most recently used of a larger one.
    pub name_cache_bytes: usize,
    /// New tests merged into the name index at once (16 bytes each while they wait); an
    /// ingest with fewer merges once, when it commits.
    pub new_names_merged: usize,
    /// Names looked up before the filter of known names is built: a small ingest asks
    /// the name index for each of its few tests rather than read every hash of the
    /// history.
    pub filter_after: usize,
    /// Names the first filter is sized for (two bytes each); it doubles when full.
    pub filter_capacity: usize,
    /// Window entries one pass of [`HistoryStore::windows`] gathers before handing them
    /// over, 4 bytes each.
    pub window_entries_per_pass: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            open_blocks: 512,
            details_held: 8 * 1024 * 1024,
            details_part_bytes: 256 * 1024,
            name_cache_bytes: 12 * 1024 * 1024,
            new_names_merged: 1 << 18,
            filter_after: 512,
            filter_capacity: 1 << 20,
            window_entries_per_pass: 4 * 1024 * 1024,
        }
    }
}

/// The embedded SQLite history: one file, WAL journal, schema version in
/// `PRAGMA user_version`.
pub struct SqliteStore {
    conn: Connection,
    origin: Origin,
    tuning: Tuning,
    /// The file was empty when opened, so it keeps SQLite's rollback journal until this
    /// store closes; see [`SqliteStore::configure`].
    wal_pending: std::cell::Cell<bool>,
}

/// What every error names: the file and the busy timeout that applied.
struct Origin {
    path: PathBuf,
    busy_timeout: Duration,
}

impl Origin {
    fn error(&self, error: rusqlite::Error) -> HistoryError {
        let path = self.path.clone();
        match error.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => HistoryError::NotADatabase { path },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => HistoryError::Locked {
                path,
                timeout: self.busy_timeout,
            },
            _ => HistoryError::Database {
                path,
                source: Box::new(error),
            },
        }
    }

    fn too_new(&self, found: i64) -> HistoryError {
        HistoryError::TooNew {
            path: self.path.clone(),
            found,
            supported: SCHEMA_VERSION,
        }
    }
}

impl SqliteStore {
    /// Opens (creating it and its folders if needed) and migrates the history at `path`.
    /// Another process holding the database longer than `busy_timeout` is an error
    /// ([`HistoryError::Locked`]), as is a file that is not SQLite or was written by a
    /// newer candor.
    pub fn open(path: impl AsRef<Path>, busy_timeout: Duration) -> Result<Self, HistoryError> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs_err::create_dir_all(parent).map_err(|source| HistoryError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let origin = Origin { path, busy_timeout };
        let conn = Connection::open(&origin.path).map_err(|e| origin.error(e))?;
        let store = SqliteStore {
            conn,
            origin,
            tuning: Tuning::default(),
            wal_pending: std::cell::Cell::new(false),
        };
        store.configure()?;
        Ok(store)
    }

    /// Opens an existing history for reading only, where [`SqliteStore::open`] cannot:
    /// a copy in a read-only folder, without its `-wal` and `-shm` files, which SQLite
    /// would have to create. Opened as `immutable` (SQLite's URI parameter): no locks,
    /// no journal, so it must be a copy no process writes to, which is what a read-only
    /// file in a read-only folder is. A history that needs migrating cannot be read so.
    pub fn open_read_only(
        path: impl AsRef<Path>,
        busy_timeout: Duration,
    ) -> Result<Self, HistoryError> {
        let path = path.as_ref().to_path_buf();
        let origin = Origin { path, busy_timeout };
        // `%`, `?` and `#` would end or escape the path part of the URI.
        let mut uri = String::from("file:");
        for c in origin.path.to_string_lossy().chars() {
            match c {
                '%' => uri.push_str("%25"),
                '?' => uri.push_str("%3F"),
                '#' => uri.push_str("%23"),
                _ => uri.push(c),
            }
        }
        uri.push_str("?immutable=1");
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| origin.error(e))?;
        let store = SqliteStore {
            conn,
            origin,
            tuning: Tuning::default(),
            wal_pending: std::cell::Cell::new(false),
        };
        let found = user_version(&store.conn).map_err(|e| store.error(e))?;
        if found > SCHEMA_VERSION {
            return Err(store.origin.too_new(found));
        }
        if found < SCHEMA_VERSION {
            return Err(store.error(unreadable(
                0,
                Type::Integer,
                format!(
                    "schema version {found} needs migrating to {SCHEMA_VERSION}, which a read-only copy cannot be: copy the history somewhere writable"
                ),
            )));
        }
        store
            .conn
            .pragma_update(None, "cache_size", -CACHE_KIB)
            .map_err(|e| store.error(e))?;
        Ok(store)
    }

    /// Changes how much the store holds in memory; see [`Tuning`].
    pub fn set_tuning(&mut self, tuning: Tuning) {
        self.tuning = tuning;
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.origin.path
    }

    /// The schema version of the open database (after migration, [`SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<i64, HistoryError> {
        user_version(&self.conn).map_err(|e| self.error(e))
    }

    fn error(&self, error: rusqlite::Error) -> HistoryError {
        self.origin.error(error)
    }

    /// Checks what no SQL constraint enforces in this layout: test ids dense and every
    /// name stored once; the name index holding every test exactly once, under its
    /// name's hash, in the row its hash falls in; every block readable, naming only
    /// tests that exist, with outcomes equal to its entries' at its run's start; every
    /// details row an entry names holding that execution's details; and each run's
    /// counts those of its blocks. It reads the whole history: for tests, and for looking
    /// into a damaged one.
    pub fn check(&self) -> Result<(), HistoryError> {
        let snapshot = self.snapshot().map_err(|e| self.error(e))?;
        let checked = check_layout(&snapshot);
        snapshot.commit().map_err(|e| self.error(e))?;
        checked.map_err(|e| self.error(e))
    }

    fn configure(&self) -> Result<(), HistoryError> {
        let conn = &self.conn;
        let error = |e| self.error(e);
        conn.busy_timeout(self.origin.busy_timeout).map_err(error)?;
        // The first read of the file: a file that is not SQLite fails here, not later.
        let found = user_version(conn).map_err(error)?;
        if found > SCHEMA_VERSION {
            return Err(self.origin.too_new(found));
        }
        let pages: i64 = conn
            .pragma_query_value(None, "page_count", |row| row.get(0))
            .map_err(error)?;
        // Takes effect only while the file is still empty (before WAL is set): an
        // existing database keeps its page size.
        conn.pragma_update(None, "page_size", PAGE_BYTES)
            .map_err(error)?;
        if pages == 0 {
            // A new file keeps the rollback journal until this store closes: its first
            // ingest only appends pages, which that journal does not copy, where the WAL
            // writes each of them twice (into the WAL, then by the checkpoint into the
            // database). It is as all-or-nothing: a process that dies mid-ingest leaves
            // a journal the next open rolls back.
            self.wal_pending.set(true);
        } else {
            self.switch_to_wal().map_err(error)?;
        }
        // NORMAL is crash-safe in WAL mode only; the rollback journal needs FULL for a
        // power loss to leave the file whole (a few more fsyncs per transaction).
        let synchronous = if self.wal_pending.get() {
            "FULL"
        } else {
            "NORMAL"
        };
        conn.pragma_update(None, "synchronous", synchronous)
            .map_err(error)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(error)?;
        conn.pragma_update(None, "cache_size", -CACHE_KIB)
            .map_err(error)?;
        conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)
            .map_err(error)?;
        if found < SCHEMA_VERSION {
            self.migrate()?;
        }
        Ok(())
    }

    /// WAL lets readers (`candor tests`) work while an ingest writes. A file system
    /// without shared memory keeps the old journal, which is slower but correct.
    ///
    /// Asked without waiting: while another process writes a new history's first ingest
    /// in the rollback journal, the file cannot switch, and this store works in that
    /// journal meanwhile (SQLite's locks keep readers and writers apart as they do in
    /// WAL, with less overlap) and tries again when it closes.
    fn switch_to_wal(&self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(Duration::ZERO)?;
        let mode = self
            .conn
            .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get::<_, String>(0));
        self.conn.busy_timeout(self.origin.busy_timeout)?;
        let switched = match mode {
            Ok(mode) => mode.eq_ignore_ascii_case("wal"),
            Err(error)
                if matches!(
                    error.sqlite_error_code(),
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                ) =>
            {
                false
            }
            Err(error) => return Err(error),
        };
        self.wal_pending.set(!switched);
        if switched {
            self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        Ok(())
    }

    /// Applies the missing migrations in one transaction: a new database gets its whole
    /// schema in one commit (each commit of the rollback journal costs a new file's
    /// creation several fsyncs), and a history is never left between two versions. The
    /// version is read again under the write lock because another process may have
    /// migrated meanwhile.
    fn migrate(&self) -> Result<(), HistoryError> {
        let error = |e| self.error(e);
        // A migration rebuilds tables that reference each other; it keeps the references
        // true itself, as an ingest does.
        let _checks = ForeignKeysPaused::new(&self.conn).map_err(error)?;
        let transaction = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(error)?;
        let mut current = user_version(&transaction).map_err(error)?;
        if current > SCHEMA_VERSION {
            return Err(self.origin.too_new(current));
        }
        while current < SCHEMA_VERSION {
            let migration = usize::try_from(current)
                .ok()
                .and_then(|index| migrate::MIGRATIONS.get(index))
                .ok_or_else(|| {
                    error(unreadable(
                        0,
                        Type::Integer,
                        format!("schema version {current} is not one candor writes"),
                    ))
                })?;
            migration(&transaction).map_err(error)?;
            current += 1;
        }
        transaction
            .pragma_update(None, "user_version", current)
            .map_err(error)?;
        transaction.commit().map_err(error)
    }

    /// One read transaction, so that a question answered with several statements sees one
    /// snapshot even while another process ingests.
    fn snapshot(&self) -> rusqlite::Result<Transaction<'_>> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)
    }

    fn query_tests(
        &self,
        failing_only: bool,
        only: Option<&HashSet<i64>>,
    ) -> rusqlite::Result<Vec<TestSummary>> {
        let snapshot = self.snapshot()?;
        let mut summaries = Vec::new();
        {
            let mut tallies: Vec<Tally> = Vec::new();
            let mut scan = snapshot.prepare(
                "SELECT block, run_started_at, outcomes, run_id FROM outcome_blocks
                 ORDER BY block, run_started_at, run_id",
            )?;
            let mut rows = scan.query([])?;
            while let Some(row) = rows.next()? {
                if let Some(only) = only
                    && !only.contains(&row.get::<_, i64>(3)?)
                {
                    continue;
                }
                let block: i64 = row.get(0)?;
                let started_at: i64 = row.get(1)?;
                let outcomes = row.get_ref(2)?.as_blob()?;
                let first = usize::try_from(packed::test_of(block, 0))
                    .map_err(|_| unreadable(0, Type::Integer, format!("block {block}")))?;
                let last = first + outcomes.len() * 2;
                if tallies.len() < last {
                    tallies.resize(last, Tally::default());
                }
                for (slot, tally) in tallies[first..last].iter_mut().enumerate() {
                    let nibble = outcome_nibble(outcomes, slot);
                    if nibble != 0 {
                        let outcome = outcome_of_nibble(nibble).map_err(corrupt)?;
                        tally.add(outcome, started_at);
                    }
                }
            }
            for (name, test) in names_in_order(&snapshot)? {
                let Some(tally) = usize::try_from(test)
                    .ok()
                    .and_then(|test| tallies.get(test))
                else {
                    continue;
                };
                let Some(last_seen) = tally.last_seen else {
                    continue;
                };
                if failing_only && !tally.latest_ran.is_some_and(Outcome::is_red) {
                    continue;
                }
                summaries.push(TestSummary {
                    test_id: name,
                    runs: tally.runs,
                    failures: tally.failures,
                    skips: tally.skips,
                    last_failure: tally.last_failure.map(microseconds).transpose()?,
                    last_seen: microseconds(last_seen)?,
                });
            }
        }
        snapshot.commit()?;
        Ok(summaries)
    }

    fn query_executions(
        &self,
        test_id: &str,
        limit: usize,
    ) -> rusqlite::Result<Vec<StoredExecution>> {
        let snapshot = self.snapshot()?;
        let mut found = Vec::new();
        if limit > 0
            && let Some(test) = find_test(&snapshot, test_id)?
        {
            let (block, slot) = block_and_slot(test);
            let mut runs = Vec::new();
            {
                let mut scan = snapshot.prepare(
                    "SELECT run_id, run_started_at, outcomes FROM outcome_blocks
                     WHERE block = ?1 ORDER BY run_started_at DESC, run_id DESC",
                )?;
                let mut rows = scan.query([block])?;
                while let Some(row) = rows.next()? {
                    if outcome_nibble(row.get_ref(2)?.as_blob()?, slot) != 0 {
                        runs.push((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?));
                        if runs.len() == limit {
                            break;
                        }
                    }
                }
            }
            let mut one = snapshot.prepare(
                "SELECT r.commit_sha, r.branch, r.source, b.entries
                 FROM runs r
                 JOIN execution_blocks b ON b.run_id = r.id AND b.block = ?2
                 WHERE r.id = ?1",
            )?;
            for (run_id, started_at) in runs {
                let (commit, branch, source, narrow, part) =
                    one.query_row(params![run_id, block], |row| {
                        let (narrow, part) = Entries::new(row.get_ref(3)?.as_blob()?)
                            .and_then(|entries| entries.find(slot))
                            .map_err(corrupt)?
                            .ok_or_else(|| corrupt(packed::Corrupt::missing()))?;
                        Ok((row.get(0)?, row.get(1)?, source(row, 2)?, narrow, part))
                    })?;
                let details = read_details(&snapshot, part, slot)?;
                let (execution, signature) = execution_of(test_id.to_owned(), narrow, details);
                found.push(StoredExecution {
                    run_id,
                    started_at: microseconds(started_at)?,
                    commit,
                    branch,
                    source,
                    execution,
                    signature,
                });
            }
        }
        snapshot.commit()?;
        Ok(found)
    }

    fn query_runs(&self, limit: usize) -> rusqlite::Result<Vec<RunRecord>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.started_at DESC, r.id DESC LIMIT ?1"
        ))?;
        statement
            .query_map([sql_limit(limit)], run_record)?
            .collect()
    }

    fn query_run(&self, run_id: i64) -> rusqlite::Result<Option<RunRecord>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1"),
                [run_id],
                run_record,
            )
            .optional()
    }

    /// The run's blocks' entries only: a duration needs no details, names or frames.
    fn query_red_seconds(&self, run_id: i64) -> rusqlite::Result<f64> {
        let snapshot = self.snapshot()?;
        let mut blocks =
            snapshot.prepare("SELECT entries FROM execution_blocks WHERE run_id = ?1")?;
        let mut rows = blocks.query([run_id])?;
        let mut seconds = 0.0;
        while let Some(row) = rows.next()? {
            let mut entries = Entries::new(row.get_ref(0)?.as_blob()?).map_err(corrupt)?;
            while let Some((_, narrow, _)) = entries.next_entry().map_err(corrupt)? {
                if narrow.outcome.failed_at_least_once() {
                    seconds += narrow.duration.unwrap_or(0.0);
                }
            }
        }
        Ok(seconds)
    }

    fn query_run_executions(
        &self,
        run_id: i64,
        failed_only: bool,
    ) -> rusqlite::Result<Vec<StoredExecution>> {
        let snapshot = self.snapshot()?;
        let mut found = Vec::new();
        let run = snapshot
            .query_row(
                "SELECT started_at, commit_sha, branch, source FROM runs WHERE id = ?1",
                [run_id],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, Option<String>>(1)?,
                        row.get::<_, Option<String>>(2)?,
                        source(row, 3)?,
                    ))
                },
            )
            .optional()?;
        if let Some((started_at, commit, branch, source)) = run {
            let mut failed: Vec<(i64, Narrow, Option<i64>)> = Vec::new();
            {
                let mut blocks = snapshot
                    .prepare("SELECT block, entries FROM execution_blocks WHERE run_id = ?1")?;
                let mut rows = blocks.query([run_id])?;
                while let Some(row) = rows.next()? {
                    let block: i64 = row.get(0)?;
                    let mut entries = Entries::new(row.get_ref(1)?.as_blob()?).map_err(corrupt)?;
                    while let Some((slot, narrow, part)) = entries.next_entry().map_err(corrupt)? {
                        if !failed_only || narrow.outcome.failed_at_least_once() {
                            failed.push((packed::test_of(block, slot), narrow, part));
                        }
                    }
                }
            }
            let mut names: HashMap<i64, Vec<String>> = HashMap::new();
            for (test, narrow, part) in failed {
                let (block, slot) = block_and_slot(test);
                if let std::collections::hash_map::Entry::Vacant(vacant) = names.entry(block) {
                    vacant.insert(read_names(&snapshot, block)?.unwrap_or_default());
                }
                let name = names
                    .get(&block)
                    .and_then(|names| names.get(slot))
                    .cloned()
                    .ok_or_else(|| corrupt(packed::Corrupt::unnamed()))?;
                let details = read_details(&snapshot, part, slot)?;
                let (execution, signature) = execution_of(name, narrow, details);
                found.push(StoredExecution {
                    run_id,
                    started_at: microseconds(started_at)?,
                    commit: commit.clone(),
                    branch: branch.clone(),
                    source,
                    execution,
                    signature,
                });
            }
            found.sort_by(|a, b| a.execution.test_id.cmp(&b.execution.test_id));
        }
        snapshot.commit()?;
        Ok(found)
    }

    /// Every test's window, in passes: each pass takes the next tests in id order (as many
    /// as [`Tuning::window_entries_per_pass`] entries allow), reads the outcome rows of their
    /// blocks newest first until every one of them has its window or the rows run out,
    /// and hands the windows over.
    fn query_windows(
        &self,
        size: usize,
        only: Option<&HashSet<i64>>,
        visit: &mut dyn FnMut(TestWindow),
    ) -> rusqlite::Result<()> {
        let snapshot = self.snapshot()?;
        if size > 0 {
            let runs = if let Some(only) = only {
                only.len()
            } else {
                let runs: i64 =
                    snapshot.query_row("SELECT count(*) FROM runs", [], |row| row.get(0))?;
                usize::try_from(runs).unwrap_or(usize::MAX)
            };
            let depth = size.min(runs).max(1);
            let per_pass = (self.tuning.window_entries_per_pass / depth).max(1);
            let mut names = names_in_order(&snapshot)?.into_iter();
            let mut scan = snapshot.prepare(
                "SELECT run_id, run_started_at, outcomes FROM outcome_blocks
                 WHERE block = ?1 ORDER BY run_started_at DESC, run_id DESC",
            )?;
            let mut pass = WindowPass::new(per_pass, depth);
            loop {
                pass.clear();
                pass.tests.extend(
                    names
                        .by_ref()
                        .take(per_pass)
                        .map(|(name, test)| (test, name)),
                );
                if pass.tests.is_empty() {
                    break;
                }
                pass.gather(&mut scan, size, only)?;
                pass.hand_over(visit)?;
            }
        }
        snapshot.commit()
    }
}

/// One pass of [`SqliteStore::query_windows`]: some tests, their entries packed as the
/// run's index in `runs` shifted left by 3 bits, or'ed with the outcome code.
struct WindowPass {
    tests: Vec<(i64, String)>,
    depth: usize,
    entries: Vec<u32>,
    lengths: Vec<usize>,
    runs: Vec<(i64, i64)>,
    run_index: HashMap<i64, u32>,
}

impl WindowPass {
    fn new(tests: usize, depth: usize) -> WindowPass {
        WindowPass {
            tests: Vec::with_capacity(tests),
            depth,
            entries: Vec::new(),
            lengths: Vec::new(),
            runs: Vec::new(),
            run_index: HashMap::new(),
        }
    }

    fn clear(&mut self) {
        self.tests.clear();
        self.runs.clear();
        self.run_index.clear();
    }

    fn gather(
        &mut self,
        scan: &mut Statement<'_>,
        size: usize,
        only: Option<&HashSet<i64>>,
    ) -> rusqlite::Result<()> {
        let wanted = size.min(self.depth);
        self.lengths.clear();
        self.lengths.resize(self.tests.len(), 0);
        self.entries.resize(self.tests.len() * self.depth, 0);
        // The pass's tests by block: (block, slot, index in `tests`).
        let mut members: Vec<(i64, usize, usize)> = self
            .tests
            .iter()
            .enumerate()
            .map(|(index, (test, _))| {
                let (block, slot) = block_and_slot(*test);
                (block, slot, index)
            })
            .collect();
        members.sort_unstable();
        let skip_nibble = packed::outcome_code(Outcome::Skip) + 1;
        let mut open: Vec<(usize, usize)> = Vec::new();
        for group in members.chunk_by(|a, b| a.0 == b.0) {
            let block = group[0].0;
            open.clear();
            open.extend(group.iter().map(|&(_, slot, index)| (slot, index)));
            let mut rows = scan.query([block])?;
            while !open.is_empty() {
                let Some(row) = rows.next()? else { break };
                if let Some(only) = only
                    && !only.contains(&row.get::<_, i64>(0)?)
                {
                    continue;
                }
                let outcomes = row.get_ref(2)?.as_blob()?;
                let mut run = None;
                let mut at = 0;
                while at < open.len() {
                    let (slot, index) = open[at];
                    let nibble = outcome_nibble(outcomes, slot);
                    if nibble == 0 || nibble == skip_nibble {
                        at += 1;
                        continue;
                    }
                    outcome_of_nibble(nibble).map_err(corrupt)?;
                    let run = if let Some(run) = run {
                        run
                    } else {
                        let id: i64 = row.get(0)?;
                        let started_at: i64 = row.get(1)?;
                        let next = self.runs.len() as u32;
                        let found = *self.run_index.entry(id).or_insert(next);
                        if found == next {
                            self.runs.push((id, started_at));
                        }
                        run = Some(found);
                        found
                    };
                    let length = &mut self.lengths[index];
                    self.entries[index * self.depth + *length] = (run << 3) | u32::from(nibble - 1);
                    *length += 1;
                    if *length == wanted {
                        open.swap_remove(at);
                    } else {
                        at += 1;
                    }
                }
            }
        }
        Ok(())
    }

    fn hand_over(&mut self, visit: &mut dyn FnMut(TestWindow)) -> rusqlite::Result<()> {
        for (index, (_, name)) in self.tests.drain(..).enumerate() {
            let length = self.lengths[index];
            if length == 0 {
                continue;
            }
            let packed = &self.entries[index * self.depth..index * self.depth + length];
            let mut entries = Vec::with_capacity(length);
            for &entry in packed {
                let (run_id, started_at) = self.runs[(entry >> 3) as usize];
                entries.push(WindowEntry {
                    run_id,
                    started_at: microseconds(started_at)?,
                    outcome: packed::outcome_of((entry & 7) as u8)
                        .ok_or_else(|| corrupt(packed::Corrupt::missing()))?,
                });
            }
            visit(TestWindow {
                test_id: name,
                entries,
            });
        }
        Ok(())
    }
}

/// One test's counts while the outcome rows are read in run order, oldest first (the
/// primary key's order), so that each later row overwrites the "last" fields.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    runs: u64,
    failures: u64,
    skips: u64,
    last_failure: Option<i64>,
    last_seen: Option<i64>,
    latest_ran: Option<Outcome>,
}

impl Tally {
    fn add(&mut self, outcome: Outcome, started_at: i64) {
        self.last_seen = Some(started_at);
        if outcome == Outcome::Skip {
            self.skips += 1;
            return;
        }
        self.runs += 1;
        self.latest_ran = Some(outcome);
        if outcome.failed_at_least_once() {
            self.failures += 1;
            self.last_failure = Some(started_at);
        }
    }
}

fn check_layout(conn: &Connection) -> rusqlite::Result<()> {
    let fail = |why: String| Err(unreadable(0, Type::Null, why));
    // The names: dense ids, each name once.
    let mut names: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    {
        let mut statement = conn.prepare("SELECT block, names FROM test_names ORDER BY block")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let block: i64 = row.get(0)?;
            if packed::test_of(block, 0) != names.len() as i64 {
                return fail(format!("name block {block} follows {} names", names.len()));
            }
            let decoded = decode_names(row.get_ref(1)?.as_blob()?).map_err(corrupt)?;
            if decoded.is_empty() || decoded.len() > packed::BLOCK_TESTS {
                return fail(format!("name block {block} holds {} names", decoded.len()));
            }
            if !names.len().is_multiple_of(packed::BLOCK_TESTS) {
                return fail(format!(
                    "name block {block} follows a block that is not full"
                ));
            }
            for name in decoded {
                if !seen.insert(name.clone()) {
                    return fail(format!("test name {name:?} stored twice"));
                }
                names.push(name);
            }
        }
    }
    // The index: every test once, under its hash, in its row.
    {
        let mut indexed = vec![false; names.len()];
        let mut statement =
            conn.prepare("SELECT first_hash, entries FROM test_name_index ORDER BY first_hash")?;
        let rows: Vec<(i64, Vec<IndexEntry>)> = statement
            .query_map([], |row| {
                let entries = decode_index(row.get_ref(1)?.as_blob()?).map_err(corrupt)?;
                Ok((row.get(0)?, entries))
            })?
            .collect::<rusqlite::Result<_>>()?;
        if rows.first().is_some_and(|(first, _)| *first != i64::MIN) {
            return fail("the name index does not start at the smallest hash".into());
        }
        for (at, (first, entries)) in rows.iter().enumerate() {
            let end = rows.get(at + 1).map(|(next, _)| *next);
            if entries.is_empty() || !entries.is_sorted() {
                return fail(format!("name index row {first} empty or out of order"));
            }
            for &(hash, id) in entries {
                if hash < *first || end.is_some_and(|end| hash >= end) {
                    return fail(format!("hash {hash} outside name index row {first}"));
                }
                let Some(name) = names.get(id as usize) else {
                    return fail(format!("the name index names test {id}, which has no name"));
                };
                if packed::name_hash(name) != hash {
                    return fail(format!("the name index has the wrong hash for {name:?}"));
                }
                if std::mem::replace(&mut indexed[id as usize], true) {
                    return fail(format!("the name index holds {name:?} twice"));
                }
            }
        }
        if let Some(missing) = indexed.iter().position(|found| !found) {
            return fail(format!("the name index misses {:?}", names[missing]));
        }
    }
    // The blocks, their outcomes and details, and the runs' counts.
    let runs: HashMap<i64, (i64, u64, u64)> = conn
        .prepare("SELECT id, started_at, tests, red FROM runs WHERE content_key IS NOT NULL")?
        .query_map([], |row| {
            Ok((row.get(0)?, (row.get(1)?, row.get(2)?, row.get(3)?)))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut counted: HashMap<i64, (u64, u64)> = HashMap::new();
    let mut outcome_of_block = conn.prepare(
        "SELECT outcomes FROM outcome_blocks
         WHERE block = ?1 AND run_started_at = ?2 AND run_id = ?3",
    )?;
    let mut statement = conn.prepare("SELECT run_id, block, entries FROM execution_blocks")?;
    let mut rows = statement.query([])?;
    let mut blocks = 0u64;
    while let Some(row) = rows.next()? {
        let (run_id, block): (i64, i64) = (row.get(0)?, row.get(1)?);
        let Some(&(started_at, _, _)) = runs.get(&run_id) else {
            return fail(format!(
                "block {block} of run {run_id}, which is not stored"
            ));
        };
        blocks += 1;
        let blob = row.get_ref(2)?.as_blob()?;
        let stored: Option<Vec<u8>> = outcome_of_block
            .query_row(params![block, started_at, run_id], |row| row.get(0))
            .optional()?;
        let builder = packed::BlockBuilder::decode(blob).map_err(corrupt)?;
        if stored != Some(builder.outcomes()) {
            return fail(format!(
                "the outcomes of block {block} of run {run_id} differ"
            ));
        }
        let count = counted.entry(run_id).or_default();
        let mut entries = Entries::new(blob).map_err(corrupt)?;
        while let Some((slot, narrow, details)) = entries.next_entry().map_err(corrupt)? {
            let test = packed::test_of(block, slot);
            if test as usize >= names.len() {
                return fail(format!("run {run_id} holds test {test}, which has no name"));
            }
            count.0 += 1;
            count.1 += u64::from(narrow.outcome.is_red());
            if let Some(details) = details {
                let owner: Option<i64> = conn
                    .query_row(
                        "SELECT run_id FROM execution_details WHERE id = ?1",
                        [details],
                        |row| row.get(0),
                    )
                    .optional()?;
                if owner != Some(run_id) {
                    return fail(format!("details row {details} is not run {run_id}'s"));
                }
                read_details(conn, Some(details), slot)?;
            }
        }
    }
    let outcome_rows: u64 =
        conn.query_row("SELECT count(*) FROM outcome_blocks", [], |row| row.get(0))?;
    if outcome_rows != blocks {
        return fail(format!("{outcome_rows} outcome rows for {blocks} blocks"));
    }
    for (run_id, (_, tests, red)) in runs {
        let (found, found_red) = counted.get(&run_id).copied().unwrap_or_default();
        if (found, found_red) != (tests, red) {
            return fail(format!(
                "run {run_id} counts {tests} tests ({red} red), its blocks {found} ({found_red})"
            ));
        }
    }
    Ok(())
}

/// The id of the test named `name`: the name index, then the names themselves, since two
/// names may share a hash.
fn find_test(conn: &Connection, name: &str) -> rusqlite::Result<Option<i64>> {
    for test in index_candidates(conn, packed::name_hash(name))? {
        let (block, slot) = block_and_slot(test);
        if read_names(conn, block)?.is_some_and(|names| names.get(slot).is_some_and(|n| n == name))
        {
            return Ok(Some(test));
        }
    }
    Ok(None)
}

/// The tests the name index holds for `hash`.
fn index_candidates(conn: &Connection, hash: i64) -> rusqlite::Result<Vec<i64>> {
    let mut statement = conn.prepare_cached(
        "SELECT entries FROM test_name_index WHERE first_hash <= ?1
         ORDER BY first_hash DESC LIMIT 1",
    )?;
    let ids = statement
        .query_row([hash], |row| {
            packed::index_lookup(row.get_ref(0)?.as_blob()?, hash).map_err(corrupt)
        })
        .optional()?
        .unwrap_or_default();
    Ok(ids.into_iter().map(i64::from).collect())
}

/// The names of the tests of `block`, in id order.
fn read_names(conn: &Connection, block: i64) -> rusqlite::Result<Option<Vec<String>>> {
    let mut statement = conn.prepare_cached("SELECT names FROM test_names WHERE block = ?1")?;
    statement
        .query_row([block], |row| {
            decode_names(row.get_ref(0)?.as_blob()?).map_err(corrupt)
        })
        .optional()
}

/// Every test's name and id, sorted by name (bytewise, as SQLite's `ORDER BY` on text
/// did): the order the questions over every test answer in. Held in memory, a name and
/// an id per test; the callers hold at least as much per test themselves.
fn names_in_order(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut all = Vec::new();
    let mut statement = conn.prepare("SELECT block, names FROM test_names ORDER BY block")?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let block: i64 = row.get(0)?;
        let names = decode_names(row.get_ref(1)?.as_blob()?).map_err(corrupt)?;
        all.extend(
            names
                .into_iter()
                .enumerate()
                .map(|(slot, name)| (name, packed::test_of(block, slot))),
        );
    }
    all.sort_unstable();
    Ok(all)
}

/// Merges sorted new entries into the name index: each row they fall in is read,
/// merged, and written back, split in two or more when it grows past
/// `packed::index::INDEX_ROW_ENTRIES`. An empty index is cut from the new entries alone.
fn merge_into_index(conn: &Connection, new: &[IndexEntry]) -> rusqlite::Result<()> {
    if new.is_empty() {
        return Ok(());
    }
    let mut insert =
        conn.prepare_cached("INSERT INTO test_name_index (first_hash, entries) VALUES (?1, ?2)")?;
    let mut containing = conn.prepare_cached(
        "SELECT first_hash, entries FROM test_name_index WHERE first_hash <= ?1
         ORDER BY first_hash DESC LIMIT 1",
    )?;
    let mut following = conn.prepare_cached(
        "SELECT first_hash FROM test_name_index WHERE first_hash > ?1
         ORDER BY first_hash LIMIT 1",
    )?;
    let mut update =
        conn.prepare_cached("UPDATE test_name_index SET entries = ?2 WHERE first_hash = ?1")?;
    let mut at = 0;
    while let Some(&(hash, _)) = new.get(at) {
        let row = containing
            .query_row([hash], |row| {
                let entries = decode_index(row.get_ref(1)?.as_blob()?).map_err(corrupt)?;
                Ok((row.get::<_, i64>(0)?, entries))
            })
            .optional()?;
        let Some((first, old)) = row else {
            // No row yet: the first one starts at the smallest hash there is.
            return packed::write_merged_rows(None, &[], new, |_, first, entries| {
                insert.execute(params![first, entries]).map(drop)
            });
        };
        let end: Option<i64> = following.query_row([first], |row| row.get(0)).optional()?;
        let until = at + new[at..].partition_point(|&(hash, _)| end.is_none_or(|end| hash < end));
        packed::write_merged_rows(
            Some(first),
            &old,
            &new[at..until],
            |stored, key, entries| {
                if stored {
                    update.execute(params![key, entries]).map(drop)
                } else {
                    insert.execute(params![key, entries]).map(drop)
                }
            },
        )?;
        at = until;
    }
    Ok(())
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        if self.wal_pending.get() {
            // A store that cannot switch now (another process has the file open) leaves
            // it to the next open, which switches every file it opens.
            let _ = self.switch_to_wal();
        }
    }
}

impl HistoryStore for SqliteStore {
    fn begin_ingest<'a>(
        &'a mut self,
        run: &NewRun,
    ) -> Result<Box<dyn IngestSession + 'a>, HistoryError> {
        let this: &'a SqliteStore = self;
        let session = ingest::SqliteIngest::begin(&this.conn, &this.origin, run, this.tuning)
            .map_err(|e| this.error(e))?;
        Ok(Box::new(session))
    }

    fn tests_in(
        &self,
        failing_only: bool,
        runs: Option<&HashSet<i64>>,
    ) -> Result<Vec<TestSummary>, HistoryError> {
        self.query_tests(failing_only, runs)
            .map_err(|e| self.error(e))
    }

    fn executions(
        &self,
        test_id: &str,
        limit: usize,
    ) -> Result<Vec<StoredExecution>, HistoryError> {
        self.query_executions(test_id, limit)
            .map_err(|e| self.error(e))
    }

    fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, HistoryError> {
        self.query_runs(limit).map_err(|e| self.error(e))
    }

    fn run(&self, run_id: i64) -> Result<Option<RunRecord>, HistoryError> {
        self.query_run(run_id).map_err(|e| self.error(e))
    }

    fn run_failures(&self, run_id: i64) -> Result<Vec<StoredExecution>, HistoryError> {
        self.query_run_executions(run_id, true)
            .map_err(|e| self.error(e))
    }

    fn run_executions(&self, run_id: i64) -> Result<Vec<StoredExecution>, HistoryError> {
        self.query_run_executions(run_id, false)
            .map_err(|e| self.error(e))
    }

    fn red_seconds(&self, run_id: i64) -> Result<f64, HistoryError> {
        self.query_red_seconds(run_id).map_err(|e| self.error(e))
    }

    fn windows_in(
        &self,
        size: usize,
        runs: Option<&HashSet<i64>>,
        visit: &mut dyn FnMut(TestWindow),
    ) -> Result<(), HistoryError> {
        self.query_windows(size, runs, visit)
            .map_err(|e| self.error(e))
    }
}

/// Foreign-key enforcement switched off for one write transaction and back on when
/// dropped (SQLite ignores the pragma inside a transaction, so it brackets one).
///
/// An ingest keeps the references true by construction: every row it writes names the
/// run it has just inserted and a test id it has just read or inserted, and its only
/// deletes are of rows of its own run that it rewrites at once. Checking that again costs
/// index probes per row. Everything else that writes (deleting runs, when retention
/// comes) runs with enforcement on, which the cascades need.
struct ForeignKeysPaused<'a> {
    conn: &'a Connection,
}

impl<'a> ForeignKeysPaused<'a> {
    fn new(conn: &'a Connection) -> rusqlite::Result<Self> {
        conn.pragma_update(None, "foreign_keys", false)?;
        Ok(ForeignKeysPaused { conn })
    }
}

impl Drop for ForeignKeysPaused<'_> {
    fn drop(&mut self) {
        // Failing to switch a pragma back on is not possible short of a closed
        // connection, which has nothing left to enforce.
        let _ = self.conn.pragma_update(None, "foreign_keys", true);
    }
}

/// The details of the execution in `slot` of a block, from the `execution_details` row
/// its entry names (none when it names none).
fn read_details(conn: &Connection, row: Option<i64>, slot: usize) -> rusqlite::Result<Details> {
    let Some(row) = row else {
        return Ok(Details::default());
    };
    let mut statement =
        conn.prepare_cached("SELECT details FROM execution_details WHERE id = ?1")?;
    statement.query_row([row], |row| {
        let part = packed::open_details(row.get_ref(0)?.as_blob()?).map_err(corrupt)?;
        packed::find_details(&part, slot)
            .map_err(corrupt)?
            .ok_or_else(|| corrupt(packed::Corrupt::missing()))
    })
}

/// An execution put together from its block entry and its details, with its signature.
fn execution_of(test_id: String, narrow: Narrow, details: Details) -> (Execution, Option<String>) {
    let execution = narrow.into_execution(
        test_id,
        details.failure,
        details.skip_message,
        details.stdout,
        details.stderr,
    );
    (execution, details.signature)
}

/// The columns [`run_record`] reads, in its order.
const RUN_COLUMNS: &str = "r.id, r.commit_sha, r.branch, r.merge_base, r.started_at, r.source,
    r.ci_provider, r.job, r.workers, r.seed, r.ci, r.runner, r.os, r.format, r.producer,
    r.source_path, r.content_key, r.tests, r.red, r.ci_repository, r.ci_run_id, r.ci_attempt";

fn run_record(row: &Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        id: row.get(0)?,
        run: NewRun {
            commit: row.get(1)?,
            branch: row.get(2)?,
            merge_base: row.get(3)?,
            started_at: timestamp(row, 4)?,
            source: source(row, 5)?,
            ci_provider: row.get(6)?,
            job: row.get(7)?,
            ci_run: crate::history::CiRun {
                repository: row.get(19)?,
                run_id: row.get(20)?,
                attempt: row.get(21)?,
            },
            workers: row.get(8)?,
            seed: row.get(9)?,
            conditions: Conditions {
                ci: row.get(10)?,
                runner: row.get(11)?,
                os: row.get(12)?,
            },
            format: row.get(13)?,
            producer: row.get(14)?,
            source_path: row.get(15)?,
        },
        content_key: row.get::<_, Option<String>>(16)?.unwrap_or_default(),
        executions: row.get(17)?,
        red: row.get(18)?,
    })
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

fn source(row: &Row<'_>, at: usize) -> rusqlite::Result<Source> {
    let text = row.get_ref(at)?.as_str()?;
    Source::from_str_opt(text)
        .ok_or_else(|| unreadable(at, Type::Text, format!("unknown run source {text:?}")))
}

fn timestamp(row: &Row<'_>, at: usize) -> rusqlite::Result<Timestamp> {
    let microseconds: i64 = row.get(at)?;
    Timestamp::from_microsecond(microseconds)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(at, Type::Integer, Box::new(e)))
}

fn microseconds(value: i64) -> rusqlite::Result<Timestamp> {
    Timestamp::from_microsecond(value)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, Type::Integer, Box::new(e)))
}

/// A stored value this build cannot read back.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Unreadable(String);

fn unreadable(at: usize, kind: Type, why: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(at, kind, Box::new(Unreadable(why)))
}

fn corrupt(error: packed::Corrupt) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, Type::Blob, Box::new(error))
}

/// A `LIMIT` value; SQLite takes a signed 64-bit one.
fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::RunContent;

    #[test]
    fn outcome_codes_follow_the_model_order() {
        for (index, outcome) in Outcome::ALL.into_iter().enumerate() {
            assert_eq!(
                usize::from(packed::outcome_code(outcome)),
                index,
                "{outcome}"
            );
            assert_eq!(packed::outcome_of(index as u8), Some(outcome));
        }
        assert_eq!(packed::outcome_of(Outcome::ALL.len() as u8), None);
    }

    fn test_run() -> NewRun {
        NewRun {
            commit: None,
            branch: None,
            merge_base: None,
            started_at: Timestamp::from_second(1_700_000_000).unwrap(),
            source: Source::Ci,
            ci_provider: None,
            job: None,
            ci_run: crate::history::CiRun::default(),
            workers: None,
            seed: None,
            conditions: Conditions::default(),
            format: None,
            producer: None,
            source_path: None,
        }
    }

    fn foreign_keys(store: &SqliteStore) -> bool {
        store
            .conn
            .pragma_query_value(None, "foreign_keys", |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn foreign_keys_are_enforced_again_after_every_ingest() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(dir.path().join("h.db"), Duration::from_secs(1)).unwrap();
        assert!(foreign_keys(&store));
        let mut session = store.begin_ingest(&test_run()).unwrap();
        session.add(Execution::new("a", Outcome::Pass)).unwrap();
        drop(session);
        assert!(foreign_keys(&store), "after a rolled-back ingest");
        let mut session = store.begin_ingest(&test_run()).unwrap();
        session.add(Execution::new("a", Outcome::Pass)).unwrap();
        let content = RunContent {
            content_key: "k".into(),
            ..RunContent::default()
        };
        assert!(session.commit(&content).unwrap().added);
        assert!(foreign_keys(&store), "after a committed ingest");
        let session = store.begin_ingest(&test_run()).unwrap();
        assert!(!session.commit(&content).unwrap().added);
        assert!(foreign_keys(&store), "after an ingest that added nothing");
        let violations: i64 = store
            .conn
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(violations, 0);
    }

    /// The questions over every test read a block's outcome rows in run order straight
    /// from the primary key, and a name's index row is one search: no sort, no scan.
    #[test]
    fn planner_reads_blocks_in_key_order_and_names_by_hash() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("h.db"), Duration::from_secs(1)).unwrap();
        let plan = |sql: &str| -> String {
            let mut statement = store
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let details: Vec<String> = statement
                .query_map([], |row| row.get(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            details.join("\n")
        };
        let block = plan(
            "SELECT run_id, run_started_at, outcomes FROM outcome_blocks
             WHERE block = 1 ORDER BY run_started_at DESC, run_id DESC",
        );
        assert!(block.contains("USING PRIMARY KEY (block=?)"), "{block}");
        assert!(!block.contains("TEMP B-TREE"), "{block}");
        let all = plan(
            "SELECT block, run_started_at, outcomes FROM outcome_blocks
             ORDER BY block, run_started_at, run_id",
        );
        assert!(!all.contains("TEMP B-TREE"), "{all}");
        let name = plan(
            "SELECT entries FROM test_name_index WHERE first_hash <= 1
             ORDER BY first_hash DESC LIMIT 1",
        );
        assert!(name.contains("SEARCH test_name_index"), "{name}");
        assert!(!name.contains("TEMP B-TREE"), "{name}");
        let run = plan("SELECT block, entries FROM execution_blocks WHERE run_id = 1");
        assert!(run.contains("USING PRIMARY KEY (run_id=?)"), "{run}");
    }
}
