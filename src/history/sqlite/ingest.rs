//! One file's ingest into the SQLite store: finding or adding each test's id, gathering
//! the run's executions into blocks, and the write transaction that holds them.

use std::collections::HashSet;
use std::rc::Rc;

use jiff::Timestamp;
use rusqlite::{
    Connection, OptionalExtension, Statement, Transaction, TransactionBehavior, params,
};

use super::{
    ForeignKeysPaused, Origin, Tuning, corrupt, execution_of, index_candidates, merge_into_index,
    read_details, read_names,
};
use crate::history::packed::{
    BLOCK_TESTS, BlockBuilder, BlockMap, BlockSet, Corrupt, Details, NameFilter, NamesPacking,
    Narrow, NewNames, block_and_slot, decode_index, decode_names, encode_names, find_details,
    name_hash, put_details, seal_details_in, test_of,
};
use crate::history::{HistoryError, IngestReport, IngestSession, NewRun, RunContent};
use crate::results::{Execution, Outcome};

/// One file's ingest: a write transaction holding the run row, its new tests, its blocks
/// and its details rows.
///
/// Memory stays flat however many executions arrive: [`Tuning`] bounds the blocks
/// gathered at once, the details and names held, and the new tests waiting for the name
/// index; what grows with the history's tests is a few bits each ([`SeenTests`],
/// [`NameFilter`]).
pub(super) struct SqliteIngest<'a> {
    // Declared before `transaction` so that they are finalized before it ends.
    statements: Statements<'a>,
    transaction: Transaction<'a>,
    /// Declared after `transaction`: foreign keys come back on once it has ended.
    _checks: ForeignKeysPaused<'a>,
    origin: &'a Origin,
    run_id: i64,
    started_at: i64,
    tests: u64,
    red: u64,
    /// The tests this run holds so far: a second execution of one is a retry.
    seen: SeenTests,
    names: Names,
    blocks: OpenBlocks,
    tuning: Tuning,
    /// The name hashes of the batch being added (kept for its allocation).
    batch_hashes: Vec<i64>,
}

struct Statements<'a> {
    write_names: Statement<'a>,
    insert_outcomes: Statement<'a>,
    insert_entries: Statement<'a>,
    insert_details: Statement<'a>,
    read_entries: Statement<'a>,
    delete_outcomes: Statement<'a>,
    delete_entries: Statement<'a>,
}

impl<'a> SqliteIngest<'a> {
    pub(super) fn begin(
        conn: &'a Connection,
        origin: &'a Origin,
        run: &NewRun,
        tuning: Tuning,
    ) -> rusqlite::Result<Self> {
        let checks = ForeignKeysPaused::new(conn)?;
        // IMMEDIATE takes the write lock now: a busy database fails here, before any
        // parsing, and a WAL snapshot cannot go stale under the transaction. Holding it
        // is also what keeps test names unique: no other writer can add one meanwhile.
        let transaction = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let started_at = run.started_at.as_microsecond();
        transaction.execute(
            "INSERT INTO runs (
                commit_sha, branch, merge_base, started_at, source, ci_provider, job, workers,
                seed, ci, runner, os, format, producer, source_path, ingested_at,
                ci_repository, ci_run_id, ci_attempt)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19)",
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
                run.ci_run.repository,
                run.ci_run.run_id,
                run.ci_run.attempt,
            ],
        )?;
        let run_id = transaction.last_insert_rowid();
        // New tests go on from the last block of names, which may be part full.
        let last = transaction
            .query_row(
                "SELECT block, names FROM test_names ORDER BY block DESC LIMIT 1",
                [],
                |row| {
                    let names = decode_names(row.get_ref(1)?.as_blob()?).map_err(corrupt)?;
                    Ok((row.get::<_, i64>(0)?, names))
                },
            )
            .optional()?;
        let names = match last {
            Some((block, names)) if names.len() < BLOCK_TESTS => {
                Names::new(block, names, tuning.name_cache_bytes)
            }
            Some((block, _)) => Names::new(block + 1, Vec::new(), tuning.name_cache_bytes),
            // A history without tests: its filter is empty from the start, so that no
            // name of a first ingest is looked up in the index.
            None => Names {
                filter: Some(NameFilter::with_capacity(0)),
                ..Names::new(0, Vec::new(), tuning.name_cache_bytes)
            },
        };
        let statements = Statements {
            write_names: conn
                .prepare("INSERT OR REPLACE INTO test_names (block, names) VALUES (?1, ?2)")?,
            insert_outcomes: conn.prepare(
                "INSERT INTO outcome_blocks (block, run_started_at, run_id, outcomes)
                 VALUES (?1, ?2, ?3, ?4)",
            )?,
            insert_entries: conn.prepare(
                "INSERT INTO execution_blocks (run_id, block, entries) VALUES (?1, ?2, ?3)",
            )?,
            read_entries: conn
                .prepare("SELECT entries FROM execution_blocks WHERE run_id = ?1 AND block = ?2")?,
            delete_outcomes: conn.prepare(
                "DELETE FROM outcome_blocks
                 WHERE block = ?1 AND run_started_at = ?2 AND run_id = ?3",
            )?,
            delete_entries: conn
                .prepare("DELETE FROM execution_blocks WHERE run_id = ?1 AND block = ?2")?,
            insert_details: conn
                .prepare("INSERT INTO execution_details (run_id, details) VALUES (?1, ?2)")?,
        };
        Ok(SqliteIngest {
            statements,
            transaction,
            _checks: checks,
            origin,
            run_id,
            started_at,
            tests: 0,
            red: 0,
            seen: SeenTests::default(),
            names,
            blocks: OpenBlocks::default(),
            tuning,
            batch_hashes: Vec::new(),
        })
    }

    /// The id of the test named `name`, added to the history when it is new.
    ///
    /// Names stay unique because this is the only code that adds them, it looks every
    /// name up first, and it holds the write lock. The cheapest answer is tried first:
    /// the filter ("not in the name index": only the tests this ingest has added are
    /// asked, no SQL), the name after the last one found (a file in the order its tests
    /// were first seen), the tests this ingest has added, and last the name index.
    /// Every answer but "new" is a name compared. A new
    /// test's name is taken out of `name` (left empty) rather than copied.
    fn test_row(&mut self, name: &mut String, hash: i64) -> rusqlite::Result<i64> {
        self.names.lookups += 1;
        if self.names.filter.is_none() && self.names.lookups > self.tuning.filter_after {
            let tests = usize::try_from(self.names.next_id()).unwrap_or(0);
            self.build_filter(self.tuning.filter_capacity.max(2 * tests))?;
        }
        if let Some(filter) = &self.names.filter
            && !filter.may_contain(hash)
        {
            // Not in the history: one of this ingest's new tests, or a new one.
            for test in self.names.new.find(hash) {
                if self.name_is(test, name)? {
                    return Ok(self.names.found(test));
                }
            }
            return self.add_test(std::mem::take(name), hash);
        }
        let predicted = self.names.predicted;
        if (0..self.names.next_id()).contains(&predicted) {
            let load = self.names.in_order >= 2;
            if let Some(test) = self.find_in_block(predicted, name, hash, load)? {
                return Ok(self.names.found(test));
            }
        }
        for test in self.names.new.find(hash) {
            if self.name_is(test, name)? {
                return Ok(self.names.found(test));
            }
        }
        for test in index_candidates(&self.transaction, hash)? {
            if self.name_is(test, name)? {
                return Ok(self.names.found(test));
            }
        }
        self.add_test(std::mem::take(name), hash)
    }

    /// Looks for `name` at test `predicted`, then among the other names of its block (a
    /// file in nearly the order its tests were first seen). Reads the block only when
    /// `load` or it is at hand.
    fn find_in_block(
        &mut self,
        predicted: i64,
        name: &str,
        hash: i64,
        load: bool,
    ) -> rusqlite::Result<Option<i64>> {
        let (block, slot) = block_and_slot(predicted);
        if block == self.names.open_block {
            if self.names.open.get(slot).is_some_and(|known| known == name) {
                return Ok(Some(predicted));
            }
            let found = self.names.open.iter().position(|known| known == name);
            return Ok(found.map(|slot| test_of(block, slot)));
        }
        if !load && !self.names.cache.holds(block) {
            return Ok(None);
        }
        let names = self.cached_names(block)?;
        if names.get(slot).is_some_and(|(_, known)| known == name) {
            return Ok(Some(predicted));
        }
        Ok(names
            .iter()
            .position(|(known_hash, known)| *known_hash == hash && known == name)
            .map(|slot| test_of(block, slot)))
    }

    /// Whether test `test` is named `name`.
    fn name_is(&mut self, test: i64, name: &str) -> rusqlite::Result<bool> {
        let (block, slot) = block_and_slot(test);
        if block == self.names.open_block {
            return Ok(self.names.open.get(slot).is_some_and(|known| known == name));
        }
        Ok(self
            .cached_names(block)?
            .get(slot)
            .is_some_and(|(_, known)| known == name))
    }

    /// The hashes and names of a written block, read once and kept while there is room.
    fn cached_names(&mut self, block: i64) -> rusqlite::Result<CachedNames> {
        if let Some(names) = self.names.cache.get(block) {
            return Ok(names);
        }
        let names: Vec<(i64, String)> = read_names(&self.transaction, block)?
            .ok_or_else(|| corrupt(Corrupt::unnamed()))?
            .into_iter()
            .map(|name| (name_hash(&name), name))
            .collect();
        Ok(self.names.cache.insert(block, names))
    }

    fn add_test(&mut self, name: String, hash: i64) -> rusqlite::Result<i64> {
        let test = self.names.new.push(hash);
        self.names.open.push(name);
        if self.names.open.len() == BLOCK_TESTS {
            self.write_open_names()?;
            self.names.open_block += 1;
            self.names.open.clear();
        }
        if self.names.new.len() >= self.tuning.new_names_merged {
            self.merge_new_names()?;
            if let Some(filter) = &self.names.filter
                && filter.len() > filter.capacity()
            {
                let capacity = 2 * filter.len();
                self.build_filter(capacity)?;
            }
        }
        Ok(test)
    }

    /// Fills a new filter with every name of the name index: the history's, and this
    /// ingest's merged into it. The names not merged yet are not in it (the filter
    /// answers for the index; [`NewNames`] for the rest, looked up in either case).
    fn build_filter(&mut self, capacity: usize) -> rusqlite::Result<()> {
        let mut filter = NameFilter::with_capacity(capacity);
        {
            let mut statement = self
                .transaction
                .prepare("SELECT entries FROM test_name_index")?;
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                for (hash, _) in decode_index(row.get_ref(0)?.as_blob()?).map_err(corrupt)? {
                    filter.insert(hash);
                }
            }
        }
        self.names.filter = Some(filter);
        Ok(())
    }

    /// Writes the block of names new tests are being added to (again, as it grows).
    fn write_open_names(&mut self) -> rusqlite::Result<()> {
        if self.names.open.is_empty() {
            return Ok(());
        }
        self.statements.write_names.execute(params![
            self.names.open_block,
            encode_names(&self.names.open, NamesPacking::FrontCoded)
        ])?;
        Ok(())
    }

    /// Moves this ingest's new tests into the name index, and so into the filter.
    fn merge_new_names(&mut self) -> rusqlite::Result<()> {
        if let Some(filter) = &mut self.names.filter {
            for &hash in self.names.new.hashes() {
                filter.insert(hash);
            }
        }
        let entries = self.names.new.take_sorted().map_err(corrupt)?;
        merge_into_index(&self.transaction, &entries)
    }

    /// The builder of `block`, opened (or read back, when it was written already) if
    /// needed.
    fn open_block(&mut self, block: i64) -> rusqlite::Result<&mut OpenBlock> {
        self.blocks.clock += 1;
        let clock = self.blocks.clock;
        if !self.blocks.open.contains_key(&block) {
            let open = if self.blocks.written.remove(&block) {
                self.read_block_back(block)?
            } else {
                OpenBlock {
                    details: self.blocks.spare_details.pop().unwrap_or_default(),
                    ..OpenBlock::default()
                }
            };
            self.blocks.open.insert(block, open);
        }
        let open = self
            .blocks
            .open
            .get_mut(&block)
            .ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        open.touched = clock;
        Ok(open)
    }

    /// Takes a block of this run out of the database again, to add to it. Its rows of
    /// details stay; new details go to a new row.
    fn read_block_back(&mut self, block: i64) -> rusqlite::Result<OpenBlock> {
        let statements = &mut self.statements;
        let builder = statements
            .read_entries
            .query_row([self.run_id, block], |row| {
                BlockBuilder::decode(row.get_ref(0)?.as_blob()?).map_err(corrupt)
            })?;
        statements.delete_entries.execute([self.run_id, block])?;
        statements
            .delete_outcomes
            .execute([block, self.started_at, self.run_id])?;
        Ok(OpenBlock {
            builder,
            ..OpenBlock::default()
        })
    }

    /// Writes the details a block holds as one row, and points their entries at it.
    fn write_details_part(&mut self, block: i64) -> rusqlite::Result<()> {
        let Some(open) = self.blocks.open.get_mut(&block) else {
            return Ok(());
        };
        if open.details.is_empty() {
            return Ok(());
        }
        let sealed = seal_details_in(&open.details, &mut self.blocks.sealed);
        self.statements
            .insert_details
            .execute(params![self.run_id, sealed])?;
        let row = self.transaction.last_insert_rowid();
        for slot in 0..BLOCK_TESTS {
            if open.pending.contains(slot) {
                open.builder.set_details(slot, Some(row));
            }
        }
        open.pending = SlotSet::default();
        self.blocks.details_held -= open.details.len();
        open.details.clear();
        Ok(())
    }

    /// Writes the largest parts of details held until half the allowance is free.
    fn write_largest_details(&mut self) -> rusqlite::Result<()> {
        let mut by_size: Vec<(usize, i64)> = self
            .blocks
            .open
            .iter()
            .map(|(&block, open)| (open.details.len(), block))
            .collect();
        by_size.sort_unstable_by(|a, b| b.cmp(a));
        for (_, block) in by_size {
            if self.blocks.details_held <= self.tuning.details_held / 2 {
                break;
            }
            self.write_details_part(block)?;
        }
        Ok(())
    }

    fn write_block(&mut self, block: i64) -> rusqlite::Result<()> {
        self.write_details_part(block)?;
        let Some(mut open) = self.blocks.open.remove(&block) else {
            return Ok(());
        };
        if self.blocks.spare_details.len() < SPARE_DETAILS {
            open.details.clear();
            self.blocks
                .spare_details
                .push(std::mem::take(&mut open.details));
        }
        if open.builder.is_empty() {
            return Ok(());
        }
        self.statements.insert_outcomes.execute(params![
            block,
            self.started_at,
            self.run_id,
            open.builder.outcomes()
        ])?;
        self.statements.insert_entries.execute(params![
            self.run_id,
            block,
            open.builder.entries()
        ])?;
        self.blocks.written.insert(block);
        Ok(())
    }

    /// Puts an execution in its slot of `block`, its details with the block's unwritten
    /// ones, and writes what has grown big enough: a full block, a full part of details,
    /// or the oldest blocks and largest parts when too much is held.
    fn put(
        &mut self,
        block: i64,
        slot: usize,
        narrow: &Narrow,
        details: Option<&Details>,
    ) -> rusqlite::Result<()> {
        let open = self.open_block(block)?;
        open.builder.set_ref(slot, narrow);
        let added = if let Some(details) = details {
            let before = open.details.len();
            put_details(&mut open.details, slot, details);
            open.pending.insert(slot);
            open.details.len() - before
        } else {
            open.pending.remove(slot);
            0
        };
        let full = open.builder.is_full();
        let part_full = open.details.len() >= self.tuning.details_part_bytes;
        self.blocks.details_held += added;
        if full {
            self.write_block(block)?;
        } else if part_full {
            self.write_details_part(block)?;
        }
        if self.blocks.details_held > self.tuning.details_held {
            self.write_largest_details()?;
        }
        if self.blocks.open.len() > self.tuning.open_blocks {
            self.write_oldest_blocks()?;
        }
        Ok(())
    }

    /// Writes the half of the open blocks touched longest ago.
    fn write_oldest_blocks(&mut self) -> rusqlite::Result<()> {
        let mut by_age: Vec<(u64, i64)> = self
            .blocks
            .open
            .iter()
            .map(|(&block, open)| (open.touched, block))
            .collect();
        by_age.sort_unstable();
        for &(_, block) in &by_age[..by_age.len() / 2] {
            self.write_block(block)?;
        }
        Ok(())
    }

    /// Stores `execution`. Its texts are read, not kept: what is left of it (all but a
    /// new test's name, or all of a retry) is for the caller to drop, so that the thread
    /// that allocated them frees them ([`IngestSession::add_batch`]).
    fn try_add(
        &mut self,
        execution: &mut Execution,
        signature: &mut Option<String>,
        hash: i64,
    ) -> rusqlite::Result<()> {
        let test = self.test_row(&mut execution.test_id, hash)?;
        let (block, slot) = block_and_slot(test);
        if self.seen.insert(test) {
            self.tests += 1;
            self.red += u64::from(execution.outcome.is_red());
            let details = Details::take(execution, signature.take());
            let narrow = Narrow {
                outcome: execution.outcome,
                duration: execution.duration,
                attempts: execution.attempts,
                file: execution.file.take(),
                line: execution.line,
            };
            let put = self.put(block, slot, &narrow, details.as_ref());
            execution.file = narrow.file;
            if let Some(details) = details {
                *signature = details.signature;
                execution.failure = details.failure;
                execution.skip_message = details.skip_message;
                execution.stdout = details.stdout;
                execution.stderr = details.stderr;
            }
            return put;
        }
        let execution = std::mem::replace(execution, Execution::new(String::new(), Outcome::Pass));
        // The same test again in this run: a retry. The earlier execution is put back
        // together from the block and its details, merged, and put back.
        let open = self.open_block(block)?;
        let earlier = open
            .builder
            .get(slot)
            .ok_or_else(|| corrupt(Corrupt::missing()))?;
        let earlier_details = if open.pending.contains(slot) {
            find_details(&open.details, slot)
                .map_err(corrupt)?
                .ok_or_else(|| corrupt(Corrupt::missing()))?
        } else {
            let row = open.builder.details_row(slot);
            read_details(&self.transaction, row, slot)?
        };
        let (mut earlier, _) = execution_of(execution.test_id.clone(), earlier, earlier_details);
        let was_red = earlier.outcome.is_red();
        earlier.absorb_retry(execution);
        match (was_red, earlier.outcome.is_red()) {
            (true, false) => self.red = self.red.saturating_sub(1),
            (false, true) => self.red += 1,
            _ => {}
        }
        let signature = earlier.signature();
        let details = Details::take(&mut earlier, signature);
        let narrow = Narrow {
            outcome: earlier.outcome,
            duration: earlier.duration,
            attempts: earlier.attempts,
            file: earlier.file,
            line: earlier.line,
        };
        self.put(block, slot, &narrow, details.as_ref())
    }

    /// Writes everything still held: the open blocks in block order, the new tests.
    fn write_all(&mut self) -> rusqlite::Result<()> {
        let mut blocks: Vec<i64> = self.blocks.open.keys().copied().collect();
        blocks.sort_unstable();
        for block in blocks {
            self.write_block(block)?;
        }
        self.write_open_names()?;
        // No name is looked up after this: the filter need not learn them.
        self.names.filter = None;
        self.merge_new_names()
    }
}

/// The test dictionary as one ingest sees it.
struct Names {
    /// The block new tests' names are added to, and its names so far.
    open_block: i64,
    open: Vec<String>,
    /// Tests added by this ingest and not yet in the name index.
    new: NewNames,
    /// The name index's names: built once the ingest has looked up
    /// [`Tuning::filter_after`] names, or empty from the start for a history without
    /// tests.
    filter: Option<NameFilter>,
    lookups: usize,
    cache: NameCache,
    /// The id after the last one found: where a file in first-seen order goes on.
    predicted: i64,
    /// How many finds in a row were the predicted id.
    in_order: u32,
}

impl Names {
    fn new(open_block: i64, open: Vec<String>, cache_bytes: usize) -> Names {
        let next_id = test_of(open_block, open.len());
        Names {
            open_block,
            open,
            new: NewNames::new(next_id),
            filter: None,
            lookups: 0,
            cache: NameCache {
                limit: cache_bytes,
                ..NameCache::default()
            },
            predicted: -1,
            in_order: 0,
        }
    }

    /// The id the next new test gets: ids are dense and follow first sight.
    fn next_id(&self) -> i64 {
        self.new.next_id()
    }

    /// Reads the places of these names in the filter and among this ingest's new names,
    /// ahead of their lookups: both are tables of megabytes read at random, so each
    /// lookup's first read misses the cache, and read back to back the misses overlap
    /// (a lookup waits on one before it can make the next).
    fn reach(&self, hashes: &[i64]) {
        let mut seen = 0u64;
        for &hash in hashes {
            if let Some(filter) = &self.filter {
                seen += u64::from(filter.may_contain(hash));
            }
            seen += u64::from(self.new.home(hash));
        }
        std::hint::black_box(seen);
    }

    /// Records that the name looked up is `test`.
    fn found(&mut self, test: i64) -> i64 {
        self.in_order = if test == self.predicted {
            self.in_order.saturating_add(1)
        } else {
            0
        };
        self.predicted = test + 1;
        test
    }
}

/// A block's names with their hashes, in id order.
type CachedNames = Rc<Vec<(i64, String)>>;

/// Decoded blocks of names with their hashes; past `limit` bytes the quarter used
/// longest ago is dropped.
#[derive(Default)]
struct NameCache {
    blocks: BlockMap<(CachedNames, u64)>,
    bytes: usize,
    limit: usize,
    clock: u64,
}

impl NameCache {
    fn holds(&self, block: i64) -> bool {
        self.blocks.contains_key(&block)
    }

    fn get(&mut self, block: i64) -> Option<CachedNames> {
        self.clock += 1;
        let clock = self.clock;
        self.blocks.get_mut(&block).map(|(names, used)| {
            *used = clock;
            Rc::clone(names)
        })
    }

    fn insert(&mut self, block: i64, names: Vec<(i64, String)>) -> CachedNames {
        let bytes = Self::size(&names);
        if self.bytes + bytes > self.limit && !self.blocks.is_empty() {
            let mut by_use: Vec<(u64, i64)> = self
                .blocks
                .iter()
                .map(|(&block, (_, used))| (*used, block))
                .collect();
            by_use.sort_unstable();
            for &(_, old) in &by_use[..by_use.len().div_ceil(4)] {
                if let Some((names, _)) = self.blocks.remove(&old) {
                    self.bytes -= Self::size(&names);
                }
            }
        }
        self.clock += 1;
        let names = Rc::new(names);
        self.bytes += bytes;
        self.blocks.insert(block, (Rc::clone(&names), self.clock));
        names
    }

    fn size(names: &[(i64, String)]) -> usize {
        names.iter().map(|(_, name)| 40 + name.len()).sum()
    }
}

/// The blocks of this run being gathered, and those written already.
#[derive(Default)]
struct OpenBlocks {
    open: BlockMap<OpenBlock>,
    written: BlockSet,
    /// Bytes of details the open blocks hold.
    details_held: usize,
    clock: u64,
    /// Emptied buffers of written blocks' details, for the next blocks opened: a block's
    /// details grow to tens of KiB, and growing each block's from nothing copied them
    /// over again at every doubling.
    spare_details: Vec<Vec<u8>>,
    /// Where each part of details is sealed before it is written (kept for its
    /// allocation).
    sealed: Vec<u8>,
}

/// Buffers of details kept for reuse at most. A buffer is at most twice
/// [`Tuning::details_part_bytes`], so they hold a few MiB at worst.
const SPARE_DETAILS: usize = 4;

/// One block of this run being gathered: its entries, and the details not yet written,
/// of the slots in `pending`.
#[derive(Default)]
struct OpenBlock {
    builder: BlockBuilder,
    details: Vec<u8>,
    pending: SlotSet,
    touched: u64,
}

/// A set of slots of one block.
#[derive(Default, Clone, Copy)]
struct SlotSet([u64; BLOCK_TESTS / 64]);

impl SlotSet {
    fn insert(&mut self, slot: usize) {
        if let Some(word) = self.0.get_mut(slot / 64) {
            *word |= 1 << (slot % 64);
        }
    }

    fn remove(&mut self, slot: usize) {
        if let Some(word) = self.0.get_mut(slot / 64) {
            *word &= !(1 << (slot % 64));
        }
    }

    fn contains(&self, slot: usize) -> bool {
        self.0
            .get(slot / 64)
            .is_some_and(|word| word & (1 << (slot % 64)) != 0)
    }
}

/// The tests a run holds so far, by their integer id: one bit per id up to
/// [`SeenTests::BITS`] (ids are the `tests` table's dense row ids, so a history of
/// millions of tests needs a few hundred KiB), a set for any beyond.
#[derive(Default)]
struct SeenTests {
    bits: Vec<u64>,
    beyond: HashSet<i64>,
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

impl IngestSession for SqliteIngest<'_> {
    fn add_with_signature(
        &mut self,
        mut execution: Execution,
        mut signature: Option<String>,
    ) -> Result<(), HistoryError> {
        let hash = name_hash(&execution.test_id);
        self.try_add(&mut execution, &mut signature, hash)
            .map_err(|e| self.origin.error(e))
    }

    fn add_batch(
        &mut self,
        batch: &mut Vec<(Execution, Option<String>)>,
    ) -> Result<(), HistoryError> {
        let mut hashes = std::mem::take(&mut self.batch_hashes);
        hashes.clear();
        hashes.extend(
            batch
                .iter()
                .map(|(execution, _)| name_hash(&execution.test_id)),
        );
        self.names.reach(&hashes);
        // What is left of the executions stays in `batch`, for the thread that made
        // them to free.
        let added = batch
            .iter_mut()
            .zip(hashes.iter().copied())
            .try_for_each(|((execution, signature), hash)| self.try_add(execution, signature, hash))
            .map_err(|e| self.origin.error(e));
        self.batch_hashes = hashes;
        added
    }

    fn commit(mut self: Box<Self>, content: &RunContent) -> Result<IngestReport, HistoryError> {
        self.write_all().map_err(|e| self.origin.error(e))?;
        let SqliteIngest {
            statements,
            transaction,
            _checks: checks,
            origin,
            run_id,
            tests,
            red,
            ..
        } = *self;
        drop(statements);
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
