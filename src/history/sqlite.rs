//! The embedded SQLite history store: opening and migrating the database file, ingest
//! transactions, and the queries behind [`HistoryStore`]. No SQLite type leaves this file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::types::Type;
use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Row, Statement, Transaction, TransactionBehavior,
    params,
};

use super::{
    Conditions, HistoryError, HistoryStore, IngestReport, IngestSession, NewRun, RunContent,
    RunRecord, Source, StoredExecution, TestSummary, TestWindow, WindowEntry,
};
use crate::results::{Execution, Failure, Outcome};

/// The numbered migrations: entry `n` (0-based) brings `PRAGMA user_version` from `n` to
/// `n + 1`. Append only; never edit one that has shipped.
const MIGRATIONS: &[&str] = &[include_str!("migrations/0001_init.sql")];

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Page size of a new database. Larger than SQLite's 4 KiB default because an ingest
/// appends hundreds of thousands of small rows and index entries: fewer, larger pages
/// mean fewer page splits and less bookkeeping per row (a sixth less CPU than 4 KiB pages
/// for the 200,000-case benchmark file; 32 and 64 KiB gained little more).
const PAGE_BYTES: i64 = 16 * 1024;

/// Page cache per connection, in KiB. Big enough that the index pages one ingest touches
/// stay in memory, small enough for ingest to stay far below 100 MiB.
const CACHE_KIB: i64 = 32 * 1024;

/// A checkpoint cuts the WAL back to this size, so that one big ingest does not leave a
/// WAL file as big as itself behind.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// The embedded SQLite history: one file, WAL journal, schema version in
/// `PRAGMA user_version`.
pub struct SqliteStore {
    conn: Connection,
    origin: Origin,
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
        let store = SqliteStore { conn, origin };
        store.configure()?;
        Ok(store)
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

    fn configure(&self) -> Result<(), HistoryError> {
        let conn = &self.conn;
        let error = |e| self.error(e);
        conn.busy_timeout(self.origin.busy_timeout).map_err(error)?;
        // The first read of the file: a file that is not SQLite fails here, not later.
        let found = user_version(conn).map_err(error)?;
        if found > SCHEMA_VERSION {
            return Err(self.origin.too_new(found));
        }
        // Takes effect only while the file is still empty (before WAL is set): an
        // existing database keeps its page size.
        conn.pragma_update(None, "page_size", PAGE_BYTES)
            .map_err(error)?;
        // WAL lets readers (`candor tests`) work while an ingest writes. A file system
        // without shared memory keeps the old journal, which is slower but correct.
        conn.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get::<_, String>(0))
            .map_err(error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
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

    /// Applies the missing migrations, each in its own transaction. The version is read
    /// again under the write lock because another process may have migrated meanwhile.
    fn migrate(&self) -> Result<(), HistoryError> {
        let error = |e| self.error(e);
        loop {
            let transaction =
                Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
                    .map_err(error)?;
            let current = user_version(&transaction).map_err(error)?;
            if current > SCHEMA_VERSION {
                return Err(self.origin.too_new(current));
            }
            let Some(sql) = usize::try_from(current)
                .ok()
                .and_then(|index| MIGRATIONS.get(index))
            else {
                return if current == SCHEMA_VERSION {
                    transaction.commit().map_err(error)
                } else {
                    Err(error(unreadable(
                        0,
                        Type::Integer,
                        format!("schema version {current} is not one candor writes"),
                    )))
                };
            };
            transaction.execute_batch(sql).map_err(error)?;
            transaction
                .pragma_update(None, "user_version", current + 1)
                .map_err(error)?;
            transaction.commit().map_err(error)?;
        }
    }

    fn query_tests(&self, failing_only: bool) -> rusqlite::Result<Vec<TestSummary>> {
        let mut statement = self.conn.prepare(&summaries_sql())?;
        let mut rows = statement.query([])?;
        let mut summaries = Vec::new();
        while let Some(row) = rows.next()? {
            let latest_ran = match row.get_ref(6)?.as_i64_or_null()? {
                Some(_) => Some(outcome(row, 6)?),
                None => None,
            };
            if failing_only && !latest_ran.is_some_and(Outcome::is_red) {
                continue;
            }
            summaries.push(TestSummary {
                test_id: row.get(0)?,
                runs: row.get(1)?,
                failures: row.get(2)?,
                skips: row.get(3)?,
                last_failure: match row.get_ref(4)?.as_i64_or_null()? {
                    Some(_) => Some(timestamp(row, 4)?),
                    None => None,
                },
                last_seen: timestamp(row, 5)?,
            });
        }
        Ok(summaries)
    }

    fn query_executions(
        &self,
        test_id: &str,
        limit: usize,
    ) -> rusqlite::Result<Vec<StoredExecution>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {STORED_COLUMNS}
             FROM tests t
             JOIN executions e ON e.test = t.id
             JOIN runs r ON r.id = e.run_id
             {DETAILS_JOIN}
             WHERE t.test_id = ?1
             ORDER BY e.run_started_at DESC, e.run_id DESC
             LIMIT ?2"
        ))?;
        statement
            .query_map(params![test_id, sql_limit(limit)], stored_execution)?
            .collect()
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

    fn query_run_failures(&self, run_id: i64) -> rusqlite::Result<Vec<StoredExecution>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {STORED_COLUMNS}
             FROM executions e
             JOIN tests t ON t.id = e.test
             JOIN runs r ON r.id = e.run_id
             {DETAILS_JOIN}
             WHERE e.run_id = ?1 AND e.outcome IN ({FAILED_AT_LEAST_ONCE})
             ORDER BY t.test_id"
        ))?;
        statement.query_map([run_id], stored_execution)?.collect()
    }

    fn query_windows(
        &self,
        size: usize,
        visit: &mut dyn FnMut(TestWindow),
    ) -> rusqlite::Result<()> {
        // One read transaction, so that every window comes from the same snapshot even
        // while another process ingests.
        let snapshot = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)?;
        {
            let mut tests = snapshot.prepare("SELECT id, test_id FROM tests ORDER BY test_id")?;
            let mut recent = snapshot.prepare(&window_sql())?;
            let limit = sql_limit(size);
            let mut rows = tests.query([])?;
            while let Some(row) = rows.next()? {
                let test: i64 = row.get(0)?;
                let entries = recent
                    .query_map(params![test, limit], |row| {
                        Ok(WindowEntry {
                            run_id: row.get(0)?,
                            started_at: timestamp(row, 1)?,
                            outcome: outcome(row, 2)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                if !entries.is_empty() {
                    visit(TestWindow {
                        test_id: row.get(1)?,
                        entries,
                    });
                }
            }
        }
        snapshot.commit()
    }
}

impl HistoryStore for SqliteStore {
    fn begin_ingest<'a>(
        &'a mut self,
        run: &NewRun,
    ) -> Result<Box<dyn IngestSession + 'a>, HistoryError> {
        let this: &'a SqliteStore = self;
        let session =
            SqliteIngest::begin(&this.conn, &this.origin, run).map_err(|e| this.error(e))?;
        Ok(Box::new(session))
    }

    fn tests(&self, failing_only: bool) -> Result<Vec<TestSummary>, HistoryError> {
        self.query_tests(failing_only).map_err(|e| self.error(e))
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
        self.query_run_failures(run_id).map_err(|e| self.error(e))
    }

    fn windows(&self, size: usize, visit: &mut dyn FnMut(TestWindow)) -> Result<(), HistoryError> {
        self.query_windows(size, visit).map_err(|e| self.error(e))
    }
}

/// One file's ingest: a write transaction holding the run row and its executions.
///
/// Memory stays flat however many executions arrive: test ids are looked up through a
/// prepared statement on the unique index rather than cached, at most
/// [`ROWS_PER_INSERT`] executions wait to be written, and the tests already seen in this
/// run are one bit per test of the history (see [`SeenTests`]).
struct SqliteIngest<'a> {
    // Declared before `transaction` so that they are finalized before it rolls back.
    find_test: Statement<'a>,
    insert_test: Statement<'a>,
    insert_execution: Statement<'a>,
    insert_executions: Statement<'a>,
    insert_details: Statement<'a>,
    read_execution: Statement<'a>,
    update_execution: Statement<'a>,
    delete_details: Statement<'a>,
    transaction: Transaction<'a>,
    /// Declared after `transaction`: foreign keys come back on once it has ended.
    _checks: ForeignKeysPaused<'a>,
    origin: &'a Origin,
    run_id: i64,
    started_at: i64,
    tests: u64,
    red: u64,
    /// Whether the last test id was new to the history. A file's tests are nearly all new
    /// (a first ingest) or nearly all known (every later one), so trying the statement
    /// that served the last one first saves a statement per execution either way.
    expect_new_test: bool,
    /// The tests this run holds so far: a second execution of one is a retry.
    seen: SeenTests,
    /// Executions waiting to be written by one multi-row statement.
    pending: Vec<PendingRow>,
}

/// Executions written by one statement. A statement's own cost (opening cursors on the
/// table and its index, binding, finishing) is about as large as writing one narrow row;
/// sharing it among 16 rows took a fifth off the storing thread's instructions (8 rows
/// gained a little less, 32 to 128 rows less again).
const ROWS_PER_INSERT: usize = 16;

/// An execution row waiting for [`INSERT_EXECUTION`]'s multi-row form.
struct PendingRow {
    test: i64,
    outcome: i64,
    duration: Option<f64>,
    attempts: u32,
    file: Option<String>,
    line: Option<u32>,
}

/// `?1` is the run, `?2` the test, `?3` the run's start, then the execution's own
/// columns; [`UPDATE_EXECUTION`] takes the same eight parameters so one binding serves
/// both. No conflict clause: a retry never reaches it ([`SeenTests`] sends it to the
/// update instead), so a conflict would be a bug worth failing on.
const INSERT_EXECUTION: &str = "INSERT INTO executions (
        run_id, test, run_started_at, outcome, duration, attempts, file, line)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

const UPDATE_EXECUTION: &str = "UPDATE executions SET
        outcome = ?4, duration = ?5, attempts = ?6, file = ?7, line = ?8
    WHERE run_id = ?1 AND test = ?2 AND run_started_at = ?3";

/// [`INSERT_EXECUTION`] for `rows` rows at once.
///
/// `OR IGNORE` keeps SQLite from opening a statement journal: a multi-row insert that
/// could abort halfway has to be able to undo its own first rows, and SQLite writes every
/// page such a statement touches to a temporary file first (700 MB of writes for the
/// 200,000-case benchmark file). Nothing is meant to be ignored: a conflict cannot happen
/// (see [`SeenTests`]) and every value is valid by construction, and
/// [`SqliteIngest::write_pending`] fails unless every row was written.
fn insert_executions_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT OR IGNORE INTO executions (
            run_id, test, run_started_at, outcome, duration, attempts, file, line)
        VALUES ",
    );
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push_str("(?, ?, ?, ?, ?, ?, ?, ?)");
    }
    sql
}

/// `?1` is the run, `?2` the test.
const INSERT_DETAILS: &str = "INSERT INTO execution_details (
        run_id, test, signature, exception, message, failure_text, frames, failing_frame,
        skip_message, stdout, stderr)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

impl<'a> SqliteIngest<'a> {
    fn begin(conn: &'a Connection, origin: &'a Origin, run: &NewRun) -> rusqlite::Result<Self> {
        let checks = ForeignKeysPaused::new(conn)?;
        // IMMEDIATE takes the write lock now: a busy database fails here, before any
        // parsing, and a WAL snapshot cannot go stale under the transaction.
        let transaction = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let started_at = run.started_at.as_microsecond();
        transaction.execute(
            "INSERT INTO runs (
                commit_sha, branch, merge_base, started_at, source, ci_provider, job, workers,
                seed, ci, runner, os, format, producer, source_path, ingested_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                run.commit,
                run.branch,
                run.merge_base,
                started_at,
                run.source.as_str(),
                run.ci_provider,
                run.job,
                run.workers,
                run.seed,
                run.conditions.ci,
                run.conditions.runner,
                run.conditions.os,
                run.format,
                run.producer,
                run.source_path,
                Timestamp::now().as_microsecond(),
            ],
        )?;
        let run_id = transaction.last_insert_rowid();
        Ok(SqliteIngest {
            find_test: conn.prepare("SELECT id FROM tests WHERE test_id = ?1")?,
            insert_test: conn.prepare(
                "INSERT INTO tests (test_id) VALUES (?1) ON CONFLICT (test_id) DO NOTHING",
            )?,
            insert_execution: conn.prepare(INSERT_EXECUTION)?,
            insert_executions: conn.prepare(&insert_executions_sql(ROWS_PER_INSERT))?,
            insert_details: conn.prepare(INSERT_DETAILS)?,
            read_execution: conn.prepare(&format!(
                "SELECT {EXECUTION_COLUMNS} FROM executions e {DETAILS_JOIN}
                 WHERE e.run_id = ?1 AND e.test = ?2"
            ))?,
            update_execution: conn.prepare(UPDATE_EXECUTION)?,
            delete_details: conn
                .prepare("DELETE FROM execution_details WHERE run_id = ?1 AND test = ?2")?,
            transaction,
            _checks: checks,
            origin,
            run_id,
            started_at,
            tests: 0,
            red: 0,
            expect_new_test: false,
            seen: SeenTests::default(),
            pending: Vec::with_capacity(ROWS_PER_INSERT),
        })
    }

    fn test_row(&mut self, test_id: &str) -> rusqlite::Result<i64> {
        if !self.expect_new_test
            && let Some(id) = self
                .find_test
                .query_row([test_id], |row| row.get(0))
                .optional()?
        {
            return Ok(id);
        }
        if self.insert_test.execute([test_id])? > 0 {
            self.expect_new_test = true;
            return Ok(self.transaction.last_insert_rowid());
        }
        self.expect_new_test = false;
        self.find_test.query_row([test_id], |row| row.get(0))
    }

    fn try_add(
        &mut self,
        mut execution: Execution,
        signature: Option<&str>,
    ) -> rusqlite::Result<()> {
        let test = self.test_row(&execution.test_id)?;
        let keys = (self.run_id, test, self.started_at);
        if self.seen.insert(test) {
            // Written before its execution row, which waits in `pending`: foreign keys
            // are not checked during an ingest (see `ForeignKeysPaused`).
            write_details(&mut self.insert_details, keys, &execution, signature)?;
            self.tests += 1;
            self.red += u64::from(execution.outcome.is_red());
            self.pending.push(PendingRow {
                test,
                outcome: outcome_code(execution.outcome),
                duration: execution.duration,
                attempts: execution.attempts,
                file: execution.file.take(),
                line: execution.line,
            });
            if self.pending.len() == ROWS_PER_INSERT {
                self.write_pending()?;
            }
            return Ok(());
        }
        // The same test again in this run: a retry. Rare, so the earlier execution is
        // read back rather than kept.
        self.write_pending()?;
        let mut earlier = self.read_execution.query_row([self.run_id, test], |row| {
            read_execution(row, 0, execution.test_id.clone())
        })?;
        let was_red = earlier.outcome.is_red();
        earlier.absorb_retry(execution);
        write_execution(&mut self.update_execution, keys, &earlier)?;
        self.delete_details.execute([self.run_id, test])?;
        let signature = earlier.signature();
        write_details(
            &mut self.insert_details,
            keys,
            &earlier,
            signature.as_deref(),
        )?;
        match (was_red, earlier.outcome.is_red()) {
            (true, false) => self.red = self.red.saturating_sub(1),
            (false, true) => self.red += 1,
            _ => {}
        }
        Ok(())
    }

    /// Writes the waiting execution rows: whole groups with the multi-row statement, a
    /// short rest (at a retry or the commit) one by one.
    fn write_pending(&mut self) -> rusqlite::Result<()> {
        let (run_id, started_at) = (self.run_id, self.started_at);
        if self.pending.len() == ROWS_PER_INSERT {
            let statement = &mut self.insert_executions;
            for (index, row) in self.pending.iter().enumerate() {
                let at = index * 8;
                statement.raw_bind_parameter(at + 1, run_id)?;
                statement.raw_bind_parameter(at + 2, row.test)?;
                statement.raw_bind_parameter(at + 3, started_at)?;
                statement.raw_bind_parameter(at + 4, row.outcome)?;
                statement.raw_bind_parameter(at + 5, row.duration)?;
                statement.raw_bind_parameter(at + 6, row.attempts)?;
                statement.raw_bind_parameter(at + 7, row.file.as_deref())?;
                statement.raw_bind_parameter(at + 8, row.line)?;
            }
            let written = statement.raw_execute()?;
            if written != ROWS_PER_INSERT {
                return Err(rusqlite::Error::StatementChangedRows(written));
            }
        } else {
            for row in &self.pending {
                self.insert_execution.execute(params![
                    run_id,
                    row.test,
                    started_at,
                    row.outcome,
                    row.duration,
                    row.attempts,
                    row.file,
                    row.line,
                ])?;
            }
        }
        self.pending.clear();
        Ok(())
    }
}

/// The tests a run holds so far, by their integer id: one bit per id up to
/// [`SeenTests::BITS`] (ids are the `tests` table's dense row ids, so a history of
/// millions of tests needs a few hundred KiB), a set for any beyond.
#[derive(Default)]
struct SeenTests {
    bits: Vec<u64>,
    beyond: std::collections::HashSet<i64>,
}

impl SeenTests {
    /// Ids below this are kept as bits (8 MiB at most).
    const BITS: i64 = 1 << 26;

    /// Records `test`; false when it was recorded already.
    fn insert(&mut self, test: i64) -> bool {
        let Some(bit) = usize::try_from(test).ok().filter(|_| test < Self::BITS) else {
            return self.beyond.insert(test);
        };
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        let Some(slot) = self.bits.get_mut(word) else {
            return self.beyond.insert(test);
        };
        let fresh = *slot & mask == 0;
        *slot |= mask;
        fresh
    }
}

/// Foreign-key enforcement switched off for one ingest transaction and back on when
/// dropped (SQLite ignores the pragma inside a transaction, so it brackets one).
///
/// An ingest keeps the references true by construction: every row it writes names the
/// run it has just inserted and a test id it has just read or inserted, and its only
/// delete is of a details row it rewrites at once. Checking that again costs two index
/// probes per execution, about a tenth of a large ingest. Everything else that writes
/// (deleting runs, when retention comes) runs with enforcement on, which the cascades
/// need.
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

impl IngestSession for SqliteIngest<'_> {
    fn add(&mut self, execution: Execution) -> Result<(), HistoryError> {
        let signature = execution.signature();
        self.add_with_signature(execution, signature)
    }

    fn add_with_signature(
        &mut self,
        execution: Execution,
        signature: Option<String>,
    ) -> Result<(), HistoryError> {
        self.try_add(execution, signature.as_deref())
            .map_err(|e| self.origin.error(e))
    }

    fn commit(mut self: Box<Self>, content: &RunContent) -> Result<IngestReport, HistoryError> {
        self.write_pending().map_err(|e| self.origin.error(e))?;
        let SqliteIngest {
            find_test,
            insert_test,
            insert_execution,
            insert_executions,
            insert_details,
            read_execution,
            update_execution,
            delete_details,
            transaction,
            _checks: checks,
            origin,
            run_id,
            tests,
            red,
            ..
        } = *self;
        drop((
            find_test,
            insert_test,
            insert_execution,
            insert_executions,
            insert_details,
            read_execution,
            update_execution,
            delete_details,
        ));
        let error = |e| origin.error(e);
        let existing = transaction
            .query_row(
                "SELECT id, tests, red FROM runs WHERE content_key = ?1",
                [&content.content_key],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(error)?;
        if let Some((existing_id, existing_tests, existing_red)) = existing {
            transaction.rollback().map_err(error)?;
            return Ok(IngestReport {
                run_id: existing_id,
                added: false,
                tests: existing_tests,
                red: existing_red,
            });
        }
        transaction
            .execute(
                "UPDATE runs SET content_key = ?2, format = ?3, producer = ?4, tests = ?5, red = ?6
                 WHERE id = ?1",
                params![
                    run_id,
                    content.content_key,
                    content.format,
                    content.producer,
                    tests,
                    red
                ],
            )
            .map_err(error)?;
        transaction.commit().map_err(error)?;
        drop(checks);
        Ok(IngestReport {
            run_id,
            added: true,
            tests,
            red,
        })
    }
}

/// Binds an execution to [`INSERT_EXECUTION`] or [`UPDATE_EXECUTION`] and runs it.
fn write_execution(
    statement: &mut Statement<'_>,
    (run_id, test, started_at): (i64, i64, i64),
    execution: &Execution,
) -> rusqlite::Result<usize> {
    statement.execute(params![
        run_id,
        test,
        started_at,
        outcome_code(execution.outcome),
        execution.duration,
        execution.attempts,
        execution.file,
        execution.line,
    ])
}

/// Stores what only some executions have, when this one has any of it. `signature` is
/// the execution's ([`Execution::signature`]).
fn write_details(
    statement: &mut Statement<'_>,
    (run_id, test, _): (i64, i64, i64),
    execution: &Execution,
    signature: Option<&str>,
) -> rusqlite::Result<()> {
    let failure = execution.failure.as_ref();
    if failure.is_none()
        && execution.skip_message.is_none()
        && execution.stdout.is_none()
        && execution.stderr.is_none()
    {
        return Ok(());
    }
    let frames = failure.map(|f| to_json(&f.frames)).transpose()?;
    let failing_frame = failure
        .and_then(|f| f.failing_frame.as_ref())
        .map(to_json)
        .transpose()?;
    statement.execute(params![
        run_id,
        test,
        signature,
        failure.and_then(|f| f.exception.as_deref()),
        failure.map(|f| f.message.as_str()),
        failure.map(|f| f.text.as_str()),
        frames,
        failing_frame,
        execution.skip_message,
        execution.stdout,
        execution.stderr,
    ])?;
    Ok(())
}

/// Joins each execution `e` to its details `d`, which most executions do not have.
const DETAILS_JOIN: &str =
    "LEFT JOIN execution_details d ON d.run_id = e.run_id AND d.test = e.test";

/// The columns [`read_execution`] reads, in its order.
const EXECUTION_COLUMNS: &str = "e.outcome, e.duration, e.attempts, d.exception, d.message,
    d.failure_text, d.frames, d.failing_frame, d.skip_message, e.file, e.line, d.stdout,
    d.stderr";

/// The columns [`stored_execution`] reads: the run's, the test id, the signature, then
/// [`EXECUTION_COLUMNS`].
const STORED_COLUMNS: &str = "e.run_id, e.run_started_at, r.commit_sha, r.branch, r.source,
    t.test_id, d.signature, e.outcome, e.duration, e.attempts, d.exception, d.message,
    d.failure_text, d.frames, d.failing_frame, d.skip_message, e.file, e.line, d.stdout,
    d.stderr";

/// The columns [`run_record`] reads, in its order.
const RUN_COLUMNS: &str = "r.id, r.commit_sha, r.branch, r.merge_base, r.started_at, r.source,
    r.ci_provider, r.job, r.workers, r.seed, r.ci, r.runner, r.os, r.format, r.producer,
    r.source_path, r.content_key, r.tests, r.red";

fn read_execution(row: &Row<'_>, at: usize, test_id: String) -> rusqlite::Result<Execution> {
    let message: Option<String> = row.get(at + 4)?;
    let failure = match message {
        Some(message) => Some(Failure {
            exception: row.get(at + 3)?,
            message,
            text: row.get::<_, Option<String>>(at + 5)?.unwrap_or_default(),
            frames: match row.get_ref(at + 6)?.as_str_or_null()? {
                Some(json) => from_json(at + 6, json)?,
                None => Vec::new(),
            },
            failing_frame: row
                .get_ref(at + 7)?
                .as_str_or_null()?
                .map(|json| from_json(at + 7, json))
                .transpose()?,
        }),
        None => None,
    };
    Ok(Execution {
        test_id,
        outcome: outcome(row, at)?,
        duration: row.get(at + 1)?,
        attempts: row.get(at + 2)?,
        failure,
        skip_message: row.get(at + 8)?,
        file: row.get(at + 9)?,
        line: row.get(at + 10)?,
        stdout: row.get(at + 11)?,
        stderr: row.get(at + 12)?,
    })
}

fn stored_execution(row: &Row<'_>) -> rusqlite::Result<StoredExecution> {
    Ok(StoredExecution {
        run_id: row.get(0)?,
        started_at: timestamp(row, 1)?,
        commit: row.get(2)?,
        branch: row.get(3)?,
        source: source(row, 4)?,
        execution: read_execution(row, 7, row.get(5)?)?,
        signature: row.get(6)?,
    })
}

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

/// Per-test counts, computed inside SQLite over the covering index in test order so that
/// only one row per test crosses into Rust; the last column is the outcome of the latest
/// execution that ran.
fn summaries_sql() -> String {
    format!(
        "SELECT t.test_id, s.runs, s.failures, s.skips, s.last_failure, s.last_seen,
             (SELECT x.outcome FROM executions x
              WHERE x.test = s.test AND x.outcome != {SKIP}
              ORDER BY x.run_started_at DESC, x.run_id DESC
              LIMIT 1)
         FROM (SELECT test,
                   sum(outcome != {SKIP}) AS runs,
                   sum(outcome IN ({FAILED_AT_LEAST_ONCE})) AS failures,
                   sum(outcome = {SKIP}) AS skips,
                   max(CASE WHEN outcome IN ({FAILED_AT_LEAST_ONCE}) THEN run_started_at END)
                       AS last_failure,
                   max(run_started_at) AS last_seen
               FROM executions GROUP BY test) s
         JOIN tests t ON t.id = s.test
         ORDER BY t.test_id",
        SKIP = outcome_code(Outcome::Skip),
    )
}

/// A test's last `?2` executions that ran, newest first in run order.
fn window_sql() -> String {
    format!(
        "SELECT run_id, run_started_at, outcome FROM executions
         WHERE test = ?1 AND outcome != {SKIP}
         ORDER BY run_started_at DESC, run_id DESC
         LIMIT ?2",
        SKIP = outcome_code(Outcome::Skip),
    )
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// The stored code of an outcome: its index in [`Outcome::ALL`], spelled out so that the
/// schema does not change if that list is reordered.
fn outcome_code(outcome: Outcome) -> i64 {
    match outcome {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::Error => 2,
        Outcome::Skip => 3,
        Outcome::FlakyPass => 4,
    }
}

/// The codes of [`Outcome::failed_at_least_once`] (fail, error, flaky-pass), for SQL.
const FAILED_AT_LEAST_ONCE: &str = "1, 2, 4";

fn outcome(row: &Row<'_>, at: usize) -> rusqlite::Result<Outcome> {
    let code: i64 = row.get(at)?;
    [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Error,
        Outcome::Skip,
        Outcome::FlakyPass,
    ]
    .into_iter()
    .find(|o| outcome_code(*o) == code)
    .ok_or_else(|| unreadable(at, Type::Integer, format!("unknown outcome code {code}")))
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

fn to_json<T: serde::Serialize>(value: &T) -> rusqlite::Result<String> {
    serde_json::to_string(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn from_json<T: serde::de::DeserializeOwned>(at: usize, json: &str) -> rusqlite::Result<T> {
    serde_json::from_str(json)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(at, Type::Text, Box::new(e)))
}

/// A stored value this build cannot read back.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Unreadable(String);

fn unreadable(at: usize, kind: Type, why: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(at, kind, Box::new(Unreadable(why)))
}

/// A `LIMIT` value; SQLite takes a signed 64-bit one.
fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_codes_follow_the_model_order() {
        for (index, outcome) in Outcome::ALL.into_iter().enumerate() {
            assert_eq!(outcome_code(outcome), index as i64, "{outcome}");
        }
        let failed: Vec<String> = Outcome::ALL
            .into_iter()
            .filter(|o| o.failed_at_least_once())
            .map(|o| outcome_code(o).to_string())
            .collect();
        assert_eq!(failed.join(", "), FAILED_AT_LEAST_ONCE);
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

    #[test]
    fn planner_reads_windows_and_summaries_from_the_covering_index() {
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
        let window = plan(&window_sql().replace("?1", "1").replace("?2", "200"));
        assert!(
            window.contains("COVERING INDEX executions_by_test"),
            "{window}"
        );
        assert!(!window.contains("TEMP B-TREE"), "{window}");
        let summary = plan(&summaries_sql());
        assert!(
            summary.contains("COVERING INDEX executions_by_test"),
            "{summary}"
        );
        assert!(!summary.contains("TEMP B-TREE FOR GROUP BY"), "{summary}");
    }
}
