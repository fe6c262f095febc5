//! One file's ingest into the PostgreSQL store (schema 5): each test's id found on the
//! client through the packed name index (its base rows and deltas) and name blocks, the executions gathered into
//! blocks by id (retries merged there), the names the history lacks given ids and
//! committed in a short transaction under an advisory lock of their own only when there
//! are any, then the run's row and block rows (binary `COPY`) in one transaction of
//! their own. docs/postgres.md (Ingest).

use std::collections::BTreeMap;

use postgres::Client;

use super::blocks::{BlockRow, block_row, read_details};
use super::names::{self, NamesError};
use super::{
    LOCK_SPACE, Target, bytes, copy_blocks, decode_details, encode_details, micros, server_error,
};
use crate::history::packed::{
    BLOCK_TESTS, BlockBuilder, BlockMap, Corrupt, IndexEntry, NamesPacking, Narrow, NewNames,
    block_and_slot, encode_names, name_hash, outcome_code, outcome_of, test_of,
};
use crate::history::{HistoryError, IngestReport, IngestSession, NewRun, RunContent};
use crate::results::Execution;

/// Executions whose names are looked up together: one or two round trips per batch.
const RESOLVE_BATCH: usize = 4096;

/// Bytes of executions of names the history lacked that wait for the commit; past it the
/// names lock is taken at once and new names get their ids as they come (a file that
/// large is adding a test suite: other jobs adding names wait for it a little longer,
/// and its memory stays bounded).
const DEFERRED_BYTES: usize = 6 << 20;

/// Bytes of full blocks (their details mostly) held before they are sent to a temporary
/// table of this session, from which the commit moves them into the history: what a run
/// of any size holds in memory.
const HELD_BLOCK_BYTES: usize = 8 << 20;

/// Bytes of decoded name blocks kept to confirm names (the hash only narrows).
const NAME_CACHE_BYTES: usize = 24 << 20;

/// One execution as the ingest holds it: its details compressed, its signature beside.
struct Item {
    name: String,
    hash: i64,
    narrow: Narrow,
    signature: Option<Vec<u8>>,
    details: Option<Vec<u8>>,
}

impl Item {
    fn of(mut execution: Execution, signature: Option<String>) -> Item {
        let details = encode_details(&mut execution);
        Item {
            hash: name_hash(&execution.test_id),
            narrow: Narrow {
                outcome: execution.outcome,
                duration: execution.duration,
                attempts: execution.attempts,
                file: execution.file.take(),
                line: execution.line,
            },
            signature: signature.map(String::into_bytes),
            details,
            name: execution.test_id,
        }
    }
}

/// The execution `narrow` and `details` describe, to merge a retry into.
fn execution_of(name: String, narrow: Narrow, details: Option<&[u8]>) -> Result<Execution, String> {
    let details = decode_details(details)?;
    Ok(narrow.into_execution(
        name,
        details.failure,
        details.skip_message,
        details.stdout,
        details.stderr,
    ))
}

/// Executions of names the history did not hold when they were looked up, in arrival
/// order, packed into one buffer (a few dozen bytes each beside the name) until the
/// names lock gives them ids.
#[derive(Default)]
struct Deferred {
    bytes: Vec<u8>,
    count: usize,
    /// Their names' hashes (already hashes: the multiply hasher, not SipHash).
    hashes: crate::history::packed::BlockSet,
}

impl Deferred {
    fn put_part(&mut self, part: Option<&[u8]>) {
        match part {
            Some(part) => {
                let len = u32::try_from(part.len()).unwrap_or(u32::MAX - 1);
                self.bytes.extend_from_slice(&(len + 1).to_le_bytes());
                self.bytes.extend_from_slice(part);
            }
            None => self.bytes.extend_from_slice(&0u32.to_le_bytes()),
        }
    }

    fn push(&mut self, item: &Item) {
        self.hashes.insert(item.hash);
        self.count += 1;
        self.put_part(Some(item.name.as_bytes()));
        self.bytes.push(outcome_code(item.narrow.outcome));
        self.bytes
            .extend_from_slice(&item.narrow.attempts.to_le_bytes());
        let duration = item.narrow.duration.map(f64::to_le_bytes);
        self.put_part(duration.as_ref().map(<[u8; 8]>::as_slice));
        let line = item.narrow.line.map(u32::to_le_bytes);
        self.put_part(line.as_ref().map(<[u8; 4]>::as_slice));
        self.put_part(item.narrow.file.as_ref().map(String::as_bytes));
        self.put_part(item.signature.as_deref());
        self.put_part(item.details.as_deref());
    }

    /// The executions pushed, in order.
    fn items(&self) -> impl Iterator<Item = Result<Item, Corrupt>> + '_ {
        fn part<'a>(input: &mut &'a [u8]) -> Result<Option<&'a [u8]>, Corrupt> {
            let (len, rest) = input
                .split_first_chunk::<4>()
                .ok_or_else(Corrupt::truncated)?;
            *input = rest;
            let Some(len) = (u32::from_le_bytes(*len) as usize).checked_sub(1) else {
                return Ok(None);
            };
            let (bytes, rest) = input.split_at_checked(len).ok_or_else(Corrupt::truncated)?;
            *input = rest;
            Ok(Some(bytes))
        }
        fn text(bytes: &[u8]) -> Result<String, Corrupt> {
            String::from_utf8(bytes.to_vec()).map_err(|_| Corrupt::truncated())
        }
        let mut input = self.bytes.as_slice();
        std::iter::from_fn(move || {
            if input.is_empty() {
                return None;
            }
            let mut next = || -> Result<Item, Corrupt> {
                let name = text(part(&mut input)?.ok_or_else(Corrupt::truncated)?)?;
                let (&code, rest) = input.split_first().ok_or_else(Corrupt::truncated)?;
                let (attempts, rest) = rest
                    .split_first_chunk::<4>()
                    .ok_or_else(Corrupt::truncated)?;
                input = rest;
                let duration = part(&mut input)?
                    .and_then(|b| b.try_into().ok())
                    .map(f64::from_le_bytes);
                let line = part(&mut input)?
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_le_bytes);
                let file = part(&mut input)?.map(text).transpose()?;
                let signature = part(&mut input)?.map(<[u8]>::to_vec);
                let details = part(&mut input)?.map(<[u8]>::to_vec);
                Ok(Item {
                    hash: name_hash(&name),
                    name,
                    narrow: Narrow {
                        outcome: outcome_of(code).ok_or_else(Corrupt::unknown_outcome)?,
                        duration,
                        attempts: u32::from_le_bytes(*attempts),
                        file,
                        line,
                    },
                    signature,
                    details,
                })
            };
            Some(next())
        })
    }
}

/// One block of names, decoded: the names one after another, and where each ends.
struct NameBlock {
    text: String,
    ends: Vec<u32>,
}

impl NameBlock {
    fn new(names: &[String]) -> NameBlock {
        let mut text = String::with_capacity(names.iter().map(String::len).sum());
        let mut ends = Vec::with_capacity(names.len());
        for name in names {
            text.push_str(name);
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        NameBlock { text, ends }
    }

    fn get(&self, slot: usize) -> Option<&str> {
        let end = *self.ends.get(slot)? as usize;
        let start = slot
            .checked_sub(1)
            .map_or(0, |before| self.ends[before] as usize);
        self.text.get(start..end)
    }

    fn size(&self) -> usize {
        self.text.len() + 4 * self.ends.len() + 64
    }
}

/// New names being given ids, under the names lock.
struct Adding {
    /// The block new names go to, and its names so far (the history's last block, when
    /// it had room).
    open_block: i64,
    open: Vec<String>,
    /// Blocks filled by this ingest, encoded: `sealed_from` (where the first new name
    /// went) and on.
    sealed_from: i64,
    sealed: Vec<Vec<u8>>,
    /// The id the first new name got: the key of this ingest's delta row.
    first_id: i64,
    new: NewNames,
}

/// What the ingest knows of the history's names.
#[derive(Default)]
struct Names {
    /// The first hash of every index row (read once, and again under the lock).
    keys: Option<Vec<i64>>,
    index: BlockMap<Vec<IndexEntry>>,
    /// Every delta row of the index (read with the keys), each sorted.
    deltas: Vec<(i64, Vec<IndexEntry>)>,
    blocks: BlockMap<NameBlock>,
    cached_bytes: usize,
    adding: Option<Adding>,
}

impl Names {
    fn remember(&mut self, block: i64, names: &[String]) {
        let decoded = NameBlock::new(names);
        if self.cached_bytes + decoded.size() > NAME_CACHE_BYTES {
            self.blocks.clear();
            self.cached_bytes = 0;
        }
        self.cached_bytes += decoded.size();
        if let Some(old) = self.blocks.insert(block, decoded) {
            self.cached_bytes -= old.size();
        }
    }

    /// The ids the index rows and deltas read so far give for each of `hashes` (not the
    /// names this ingest is adding), looked up in hash order as a merge: consecutive
    /// lookups read the same index row and the same part of each delta, where binary
    /// searches in the file's order each missed the caches (a third of the CPU of an
    /// ingest of known names, measured with `perf`).
    fn candidates_of(&self, hashes: &[i64]) -> Candidates {
        let mut order: Vec<u32> = (0..u32::try_from(hashes.len()).unwrap_or(u32::MAX)).collect();
        order.sort_unstable_by_key(|&at| hashes[at as usize]);
        let mut found = Candidates {
            ids: Vec::with_capacity(hashes.len()),
            ranges: vec![(0, 0); hashes.len()],
        };
        // Cursors: the index row last read and where in it, where in each delta; each
        // moves forward only (hashes ascending), by galloping.
        let mut row: Option<(i64, usize)> = None;
        let mut in_deltas = vec![0usize; self.deltas.len()];
        for at in order {
            let hash = hashes[at as usize];
            let start = found.ids.len();
            if let Some(key) = self
                .keys
                .as_deref()
                .and_then(|keys| names::row_of(keys, hash))
                && let Some(entries) = self.index.get(&key)
            {
                let from = match row {
                    Some((held, from)) if held == key => from,
                    _ => 0,
                };
                let from = gallop(entries, from, hash);
                row = Some((key, from));
                push_equal(&entries[from..], hash, &mut found.ids);
            }
            for ((_, entries), from) in self.deltas.iter().zip(&mut in_deltas) {
                *from = gallop(entries, *from, hash);
                push_equal(&entries[*from..], hash, &mut found.ids);
            }
            found.ranges[at as usize] = (start, found.ids.len());
        }
        found
    }

    /// Whether the names of test `id`'s block are at hand.
    fn has_block_of(&self, id: i64) -> bool {
        self.is(id, "").is_some()
    }

    /// Whether test `id` is named `name`: `None` when its block is not at hand.
    fn is(&self, id: i64, name: &str) -> Option<bool> {
        let (block, slot) = block_and_slot(id);
        if let Some(adding) = &self.adding {
            if block == adding.open_block {
                return Some(adding.open.get(slot).is_some_and(|known| known == name));
            }
            if (adding.sealed_from..adding.open_block).contains(&block) {
                let at = usize::try_from(block - adding.sealed_from).ok()?;
                let names = crate::history::packed::decode_names(adding.sealed.get(at)?).ok()?;
                return Some(names.get(slot).is_some_and(|known| known == name));
            }
        }
        let names = self.blocks.get(&block)?;
        // A block cached while it was the history's last may have grown since.
        names.get(slot).map(|known| known == name)
    }
}

/// Where the first entry at or above `hash` is in `entries` (sorted), at or after `from`,
/// whose entries are all below `hash`: steps doubling from `from`, then a binary search
/// in the last step (reads near `from` when the next hash is near, as in a merge).
fn gallop(entries: &[IndexEntry], from: usize, hash: i64) -> usize {
    let mut low = from;
    let mut step = 1;
    while low + step < entries.len() && entries[low + step].0 < hash {
        low += step;
        step *= 2;
    }
    let high = (low + step).min(entries.len());
    low + entries[low.min(high)..high].partition_point(|&(known, _)| known < hash)
}

/// The ids of the entries at the start of `entries` whose hash is `hash`.
fn push_equal(entries: &[IndexEntry], hash: i64, ids: &mut Vec<i64>) {
    ids.extend(
        entries
            .iter()
            .take_while(|&&(known, _)| known == hash)
            .map(|&(_, id)| i64::from(id)),
    );
}

/// The stored candidate ids of a batch of hashes: `ids[ranges[i].0..ranges[i].1]` are
/// those of the batch's `i`-th hash.
struct Candidates {
    ids: Vec<i64>,
    ranges: Vec<(usize, usize)>,
}

impl Candidates {
    fn of(&self, at: usize) -> &[i64] {
        self.ranges
            .get(at)
            .map_or(&[][..], |&(start, end)| &self.ids[start..end])
    }
}

/// An execution's signature and compressed details.
type SlotExtra = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The distinct names of the waiting executions in first-seen order, found by the hash
/// they carry (a chain per hash: two names may share one), so no name is hashed again.
#[derive(Default)]
struct DistinctNames {
    order: Vec<(String, i64)>,
    first: BlockMap<usize>,
    next: Vec<Option<usize>>,
}

impl DistinctNames {
    fn add(&mut self, name: String, hash: i64) {
        if self.find(&name, hash).is_some() {
            return;
        }
        let at = self.order.len();
        self.next.push(self.first.insert(hash, at));
        self.order.push((name, hash));
    }

    /// Where `name` is in the order.
    fn find(&self, name: &str, hash: i64) -> Option<usize> {
        let mut at = self.first.get(&hash).copied();
        while let Some(here) = at {
            if self.order[here].0 == name {
                return Some(here);
            }
            at = self.next[here];
        }
        None
    }
}

/// One block of this run being gathered.
#[derive(Default)]
struct OpenBlock {
    builder: BlockBuilder,
    /// Per slot with either: the signature and the compressed details.
    details: BTreeMap<usize, SlotExtra>,
}

/// One run being stored: its names' ids are found outside any transaction (each read
/// sees what is committed), new names are committed in a short transaction of their own
/// under the names lock, and the run (its row and blocks) in a second one: nothing of the
/// run reaches the history's tables before that commit.
pub(super) struct PgIngest<'a> {
    client: &'a mut Client,
    /// A transaction is open on `client` holding the names lock (`BEGIN` sent by
    /// [`PgIngest::take_lock`]; committed by the commit, rolled back if dropped).
    names_open: bool,
    target: &'a Target,
    run: NewRun,
    waiting: Vec<Item>,
    deferred: Deferred,
    names: Names,
    blocks: BlockMap<OpenBlock>,
    /// Full blocks, encoded (a retry of one of their tests takes it out again).
    done: Vec<Option<BlockRow>>,
    done_at: BlockMap<usize>,
    done_bytes: usize,
    /// Full blocks sent to the temporary table `candor_blocks` (created on first use).
    spilled: Option<crate::history::packed::BlockSet>,
    tests: u64,
    red: u64,
}

impl<'a> PgIngest<'a> {
    pub(super) fn new(client: &'a mut Client, target: &'a Target, run: NewRun) -> PgIngest<'a> {
        PgIngest {
            client,
            names_open: false,
            target,
            run,
            waiting: Vec::with_capacity(RESOLVE_BATCH),
            deferred: Deferred::default(),
            names: Names::default(),
            blocks: BlockMap::default(),
            done: Vec::new(),
            done_at: BlockMap::default(),
            done_bytes: 0,
            spilled: None,
            tests: 0,
            red: 0,
        }
    }

    fn server(&self, e: &postgres::Error) -> HistoryError {
        server_error(self.target, e, false)
    }

    fn names_error(&self, e: NamesError) -> HistoryError {
        match e {
            NamesError::Server(e) => self.server(&e),
            NamesError::Corrupt(e) => self.corrupt(e.to_string()),
        }
    }

    fn corrupt(&self, message: String) -> HistoryError {
        HistoryError::Server {
            target: self.target.to_string(),
            message,
            code: None,
        }
    }

    /// Finds the ids of the waiting executions' names and puts each in its block; a name
    /// the history lacks waits for the lock (or, under it, gets the next id).
    fn resolve(&mut self) -> Result<(), HistoryError> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let items = std::mem::take(&mut self.waiting);
        let locked = self.names.adding.is_some();
        let hashes: Vec<i64> = items.iter().map(|item| item.hash).collect();
        let found = self
            .read_names_for(&hashes, locked)
            .map_err(|e| self.names_error(e))?;
        for (at, item) in items.into_iter().enumerate() {
            if !locked && self.deferred.hashes.contains(&item.hash) {
                // A name already waiting (a retry of a new test, or one sharing its
                // hash): settled under the lock, in order.
                self.deferred.push(&item);
                continue;
            }
            match self.find(&item.name, item.hash, found.of(at))? {
                Some(id) => self.put(id, item)?,
                None if locked => {
                    let id = self.add_name(&item.name, item.hash)?;
                    self.put(id, item)?;
                }
                None => self.deferred.push(&item),
            }
        }
        if !locked && self.deferred.bytes.len() > DEFERRED_BYTES {
            self.take_lock()?;
        }
        Ok(())
    }

    /// The id of the test named `name` among its stored candidates `stored` and the
    /// names this ingest is adding (a name block not at hand is read).
    fn find(&mut self, name: &str, hash: i64, stored: &[i64]) -> Result<Option<i64>, HistoryError> {
        let adding = self
            .names
            .adding
            .as_ref()
            .map(|adding| adding.new.find(hash))
            .unwrap_or_default();
        for &id in stored.iter().chain(&adding) {
            let known = if let Some(known) = self.names.is(id, name) {
                known
            } else {
                let block = block_and_slot(id).0;
                let read = names::read_blocks(&mut *self.client, &[block])
                    .map_err(|e| self.names_error(e))?;
                for (block, names) in read {
                    self.names.remember(block, &names);
                }
                self.names.is(id, name).unwrap_or(false)
            };
            if known {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// Reads the index rows the batch's hashes fall in and the name blocks of their
    /// candidates, those not read already; returns the candidates of each hash.
    fn read_names_for(&mut self, hashes: &[i64], locked: bool) -> Result<Candidates, NamesError> {
        self.read_index_keys()?;
        let keys = self.names.keys.as_deref().unwrap_or_default();
        if keys.is_empty() && self.names.deltas.is_empty() {
            return Ok(Candidates {
                ids: Vec::new(),
                ranges: Vec::new(),
            });
        }
        let mut rows: Vec<i64> = hashes
            .iter()
            .filter(|&hash| locked || !self.deferred.hashes.contains(hash))
            .filter_map(|&hash| names::row_of(keys, hash))
            .filter(|key| !self.names.index.contains_key(key))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        for (key, entries) in names::read_index_rows(&mut *self.client, &rows)? {
            self.names.index.insert(key, entries);
        }
        let found = self.names.candidates_of(hashes);
        let mut blocks: Vec<i64> = found
            .ids
            .iter()
            .filter(|&&id| !self.names.has_block_of(id))
            .map(|&id| block_and_slot(id).0)
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        for (block, names) in names::read_blocks(&mut *self.client, &blocks)? {
            self.names.remember(block, &names);
        }
        Ok(found)
    }

    /// Reads the index's keys and its delta rows, unless read already (since the lock
    /// was taken, when it is held).
    fn read_index_keys(&mut self) -> Result<(), NamesError> {
        if self.names.keys.is_none() {
            self.names.keys = Some(names::index_keys(&mut *self.client)?);
            self.names.deltas = names::read_deltas(&mut *self.client)?;
        }
        Ok(())
    }

    /// Opens the names transaction and takes the names lock in it (once): from here on
    /// no other ingest adds names until this one's names are committed. The names that
    /// waited are looked up again (another job may have added them since this one
    /// looked) and the rest get ids after the last.
    fn take_lock(&mut self) -> Result<(), HistoryError> {
        if self.names.adding.is_some() {
            return Ok(());
        }
        self.lock_names()?;
        let deferred = std::mem::take(&mut self.deferred);
        for item in deferred.items() {
            let item = item.map_err(|e| self.corrupt(e.to_string()))?;
            self.waiting.push(item);
            if self.waiting.len() >= RESOLVE_BATCH {
                self.resolve()?;
            }
        }
        self.resolve()
    }

    /// Opens the names transaction, takes the names lock in it and reads where new ids
    /// start; what was read of the index before is read again.
    fn lock_names(&mut self) -> Result<(), HistoryError> {
        self.client
            .batch_execute("BEGIN")
            .map_err(|e| self.server(&e))?;
        self.names_open = true;
        self.client
            .execute(
                "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || ' names'))",
                &[&LOCK_SPACE],
            )
            .map_err(|e| self.server(&e))?;
        // What was read before may be missing what others added meanwhile.
        self.names.keys = None;
        self.names.index.clear();
        self.names.deltas.clear();
        let last = names::last_block(&mut *self.client).map_err(|e| self.names_error(e))?;
        let (open_block, open) = match last {
            Some((block, names)) if names.len() < BLOCK_TESTS => (block, names),
            Some((block, _)) => (block + 1, Vec::new()),
            None => (0, Vec::new()),
        };
        let next = test_of(open_block, open.len());
        self.names.adding = Some(Adding {
            open_block,
            open,
            sealed_from: open_block,
            sealed: Vec::new(),
            first_id: next,
            new: NewNames::new(next),
        });
        Ok(())
    }

    /// At the commit: gives the names that waited their ids and commits them, under the
    /// names lock for that only (their names looked up again, the rest given the ids
    /// after the last), then puts their executions in their blocks with the lock
    /// released: what other jobs adding names wait for is a few reads and writes of
    /// names, not this run's blocks.
    fn add_deferred_names(&mut self) -> Result<(), HistoryError> {
        let mut distinct = DistinctNames::default();
        for item in self.deferred.items() {
            let item = item.map_err(|e| self.corrupt(e.to_string()))?;
            distinct.add(item.name, item.hash);
        }
        self.lock_names()?;
        let mut ids = Vec::with_capacity(distinct.order.len());
        for chunk in distinct.order.chunks(RESOLVE_BATCH) {
            let hashes: Vec<i64> = chunk.iter().map(|&(_, hash)| hash).collect();
            let found = self
                .read_names_for(&hashes, true)
                .map_err(|e| self.names_error(e))?;
            for (at, (name, hash)) in chunk.iter().enumerate() {
                let id = match self.find(name, *hash, found.of(at))? {
                    Some(id) => id,
                    None => self.add_name(name, *hash)?,
                };
                ids.push(id);
            }
        }
        self.commit_names()?;
        let deferred = std::mem::take(&mut self.deferred);
        for item in deferred.items() {
            let item = item.map_err(|e| self.corrupt(e.to_string()))?;
            let id = distinct
                .find(&item.name, item.hash)
                .and_then(|at| ids.get(at))
                .copied()
                .ok_or_else(|| self.corrupt("a waiting name without its id".into()))?;
            self.put(id, item)?;
        }
        Ok(())
    }

    /// Writes the names added under the lock and commits them, releasing the lock.
    fn commit_names(&mut self) -> Result<(), HistoryError> {
        if self.names_open {
            self.write_names()?;
            self.client
                .batch_execute("COMMIT")
                .map_err(|e| self.server(&e))?;
            self.names_open = false;
        }
        Ok(())
    }

    /// Gives the name `name` (hashing to `hash`) the next id (under the names lock).
    fn add_name(&mut self, name: &str, hash: i64) -> Result<i64, HistoryError> {
        let Some(adding) = &mut self.names.adding else {
            return Err(self.corrupt("a new name outside the names lock".into()));
        };
        let id = adding.new.push(hash);
        adding.open.push(name.to_owned());
        if adding.open.len() == BLOCK_TESTS {
            adding
                .sealed
                .push(encode_names(&adding.open, NamesPacking::Lz4));
            adding.open.clear();
            adding.open_block += 1;
        }
        Ok(id)
    }

    /// The builder of `block`, taken out of the full blocks again if it is one.
    fn open_block(&mut self, block: i64) -> Result<&mut OpenBlock, HistoryError> {
        if !self.blocks.contains_key(&block) {
            let mut open = OpenBlock::default();
            let mut row = self
                .done_at
                .remove(&block)
                .and_then(|at| self.done.get_mut(at).and_then(Option::take));
            if row.is_none()
                && self
                    .spilled
                    .as_mut()
                    .is_some_and(|spilled| spilled.remove(&block))
            {
                row = self.read_back(block)?;
            }
            if let Some(row) = row {
                open.builder =
                    BlockBuilder::decode(&row.entries).map_err(|e| self.corrupt(e.to_string()))?;
                if let Some(blob) = &row.details {
                    for (slot, (signature, details)) in
                        read_details(blob).map_err(|e| self.corrupt(e.to_string()))?
                    {
                        open.details.insert(
                            slot,
                            (signature.map(<[u8]>::to_vec), details.map(<[u8]>::to_vec)),
                        );
                    }
                }
            }
            self.blocks.insert(block, open);
        }
        self.blocks
            .get_mut(&block)
            .ok_or_else(|| HistoryError::Server {
                target: String::new(),
                message: "a block vanished".into(),
                code: None,
            })
    }

    /// Puts `item` in its slot of test `test`'s block, merging it into the execution
    /// there when the run holds the test already (a retry: `Execution::absorb_retry`).
    fn put(&mut self, test: i64, item: Item) -> Result<(), HistoryError> {
        let (block, slot) = block_and_slot(test);
        let target = self.target;
        let corrupt = |message: String| HistoryError::Server {
            target: target.to_string(),
            message,
            code: None,
        };
        let open = self.open_block(block)?;
        let (narrow, signature, details) = if let Some(earlier) = open.builder.get(slot) {
            let (_, earlier_details) = open.details.remove(&slot).unwrap_or_default();
            let mut merged = execution_of(item.name.clone(), earlier, earlier_details.as_deref())
                .map_err(corrupt)?;
            let later =
                execution_of(item.name, item.narrow, item.details.as_deref()).map_err(corrupt)?;
            let was_red = merged.outcome.is_red();
            merged.absorb_retry(later);
            match (was_red, merged.outcome.is_red()) {
                (true, false) => self.red = self.red.saturating_sub(1),
                (false, true) => self.red += 1,
                _ => {}
            }
            let signature = merged.signature().map(String::into_bytes);
            let details = encode_details(&mut merged);
            let narrow = Narrow {
                outcome: merged.outcome,
                duration: merged.duration,
                attempts: merged.attempts,
                file: merged.file,
                line: merged.line,
            };
            (narrow, signature, details)
        } else {
            self.tests += 1;
            self.red += u64::from(item.narrow.outcome.is_red());
            (item.narrow, item.signature, item.details)
        };
        let open = self.open_block(block)?;
        open.builder.set(slot, narrow);
        if signature.is_some() || details.is_some() {
            open.details.insert(slot, (signature, details));
        }
        if open.builder.is_full() {
            self.finish_block(block);
            self.spill()?;
        }
        Ok(())
    }

    fn finish_block(&mut self, block: i64) {
        if let Some(open) = self.blocks.remove(&block) {
            let row = block_row(
                block,
                &open.builder,
                open.details
                    .iter()
                    .map(|(slot, (s, d))| (*slot, s.as_deref(), d.as_deref())),
            );
            self.done_bytes +=
                row.outcomes.len() + row.entries.len() + row.details.as_ref().map_or(0, Vec::len);
            self.done_at.insert(block, self.done.len());
            self.done.push(Some(row));
        }
    }

    /// Sends the full blocks held to the temporary table, when they have grown past
    /// [`HELD_BLOCK_BYTES`].
    fn spill(&mut self) -> Result<(), HistoryError> {
        if self.done_bytes < HELD_BLOCK_BYTES {
            return Ok(());
        }
        if self.spilled.is_none() {
            // A session's table, dropped by the run's transaction; one left by an ingest
            // of this session that failed before is dropped here. Its byte strings are
            // packed already: stored as they are (`EXTERNAL`), as `execution_blocks`
            // stores them, not compressed again (pglz on LZ4 output took 170 ms of the
            // server's 330 for the benchmark's file) and carried compressed into it.
            self.client
                .batch_execute(
                    "DROP TABLE IF EXISTS pg_temp.candor_blocks; \
                     CREATE TEMPORARY TABLE candor_blocks (block bigint NOT NULL, \
                     outcomes bytea NOT NULL, entries bytea NOT NULL, details bytea); \
                     ALTER TABLE candor_blocks ALTER COLUMN entries SET STORAGE EXTERNAL, \
                     ALTER COLUMN details SET STORAGE EXTERNAL",
                )
                .map_err(|e| self.server(&e))?;
            self.spilled = Some(crate::history::packed::BlockSet::default());
        }
        let rows: Vec<BlockRow> = std::mem::take(&mut self.done)
            .into_iter()
            .flatten()
            .collect();
        self.done_at.clear();
        self.done_bytes = 0;
        let result = (|| -> Result<(), postgres::Error> {
            let writer = self.client.copy_in(
                "COPY candor_blocks (block, outcomes, entries, details) FROM STDIN BINARY",
            )?;
            let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(
                writer,
                &[
                    postgres::types::Type::INT8,
                    postgres::types::Type::BYTEA,
                    postgres::types::Type::BYTEA,
                    postgres::types::Type::BYTEA,
                ],
            );
            for row in &rows {
                writer.write(&[&row.block, &row.outcomes, &row.entries, &row.details])?;
            }
            writer.finish()?;
            Ok(())
        })();
        result.map_err(|e| self.server(&e))?;
        if let Some(spilled) = &mut self.spilled {
            spilled.extend(rows.iter().map(|row| row.block));
        }
        Ok(())
    }

    /// Takes a full block sent to the temporary table out again (a retry of one of its
    /// tests came).
    fn read_back(&mut self, block: i64) -> Result<Option<BlockRow>, HistoryError> {
        let row = self
            .client
            .query_opt(
                "DELETE FROM candor_blocks WHERE block = $1 RETURNING outcomes, entries, details",
                &[&block],
            )
            .map_err(|e| self.server(&e))?;
        Ok(row.map(|row| BlockRow {
            block,
            outcomes: row.get(0),
            entries: row.get(1),
            details: row.get(2),
        }))
    }

    /// Writes the names this ingest added: their blocks, and their entries merged into
    /// the index.
    fn write_names(&mut self) -> Result<(), HistoryError> {
        let Some(mut adding) = self.names.adding.take() else {
            return Ok(());
        };
        if adding.new.is_empty() {
            return Ok(());
        }
        let mut rows: Vec<(i64, Vec<u8>)> = Vec::with_capacity(adding.sealed.len() + 2);
        // The block the first new name went to (the history's last, maybe part full).
        let first_block = adding.sealed_from;
        let sealed = std::mem::take(&mut adding.sealed);
        for (at, names) in sealed.into_iter().enumerate() {
            rows.push((first_block + i64::try_from(at).unwrap_or(0), names));
        }
        if !adding.open.is_empty() {
            rows.push((
                adding.open_block,
                encode_names(&adding.open, NamesPacking::Lz4),
            ));
        }
        names::write_blocks(&mut *self.client, &rows).map_err(|e| self.server(&e))?;
        let entries = adding
            .new
            .take_sorted()
            .map_err(|e| self.corrupt(e.to_string()))?;
        // The keys, rows and deltas read under the lock are current: nobody else writes
        // them (and the deltas must all be known to merge them).
        self.read_index_keys().map_err(|e| self.names_error(e))?;
        let known = self
            .names
            .keys
            .as_deref()
            .map(|keys| (keys, &self.names.index));
        names::add_to_index(
            &mut *self.client,
            adding.first_id,
            &entries,
            known,
            &self.names.deltas,
        )
        .map_err(|e| self.names_error(e))
    }
}

impl Drop for PgIngest<'_> {
    /// An ingest dropped under the names lock (its run failed, or was abandoned) adds
    /// no name: its names transaction is rolled back, the lock released with it.
    fn drop(&mut self) {
        if self.names_open {
            // A connection that is lost ends the transaction on the server anyway.
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

impl IngestSession for PgIngest<'_> {
    fn add_with_signature(
        &mut self,
        execution: Execution,
        signature: Option<String>,
    ) -> Result<(), HistoryError> {
        self.waiting.push(Item::of(execution, signature));
        if self.waiting.len() >= RESOLVE_BATCH {
            self.resolve()?;
        }
        Ok(())
    }

    fn commit(mut self: Box<Self>, content: &RunContent) -> Result<IngestReport, HistoryError> {
        self.resolve()?;
        // The names first, in their own transaction: the lock is held for them only, not
        // for the run's blocks and commit. A name whose run then fails has no execution:
        // no question lists it, and a retried upload finds it.
        if self.deferred.count > 0 {
            self.add_deferred_names()?;
        }
        // A file too large to wait for the commit took the lock while it was read.
        self.commit_names()?;
        let mut open: Vec<i64> = self.blocks.keys().copied().collect();
        open.sort_unstable();
        for block in open {
            self.finish_block(block);
        }
        let mut rows: Vec<BlockRow> = std::mem::take(&mut self.done)
            .into_iter()
            .flatten()
            .collect();
        rows.sort_unstable_by_key(|row| row.block);
        let target = self.target;
        let fail = |e: postgres::Error| server_error(target, &e, false);
        let tests = i64::try_from(self.tests).unwrap_or(i64::MAX);
        let red = i64::try_from(self.red).unwrap_or(i64::MAX);
        let run = &self.run;
        let started = micros(run.started_at);
        let workers = run.workers.map(i64::from);
        let mut tx = self.client.transaction().map_err(fail)?;
        let inserted = tx
            .query_opt(
                "INSERT INTO runs (content_key, commit_sha, branch, merge_base, started_us, source, \
                 ci_provider, job, workers, seed, ci, runner, os, format, producer, source_path, \
                 executions, red, ci_repository, ci_run_id, ci_attempt) VALUES ($1, $2, $3, $4, $5, \
                 $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) \
                 ON CONFLICT (content_key) DO NOTHING RETURNING id",
                &[
                    &content.content_key,
                    &bytes(run.commit.as_ref()),
                    &bytes(run.branch.as_ref()),
                    &bytes(run.merge_base.as_ref()),
                    &started,
                    &run.source.as_str(),
                    &bytes(run.ci_provider.as_ref()),
                    &bytes(run.job.as_ref()),
                    &workers,
                    &bytes(run.seed.as_ref()),
                    &run.conditions.ci,
                    &bytes(run.conditions.runner.as_ref()),
                    &bytes(run.conditions.os.as_ref()),
                    &bytes(content.format.as_ref()),
                    &bytes(content.producer.as_ref()),
                    &bytes(run.source_path.as_ref()),
                    &tests,
                    &red,
                    &bytes(run.ci_run.repository.as_ref()),
                    &bytes(run.ci_run.run_id.as_ref()),
                    &run.ci_run.attempt.map(i64::from),
                ],
            )
            .map_err(fail)?;
        let Some(inserted) = inserted else {
            // Stored already (by this or a concurrent job, which the insert waited for).
            let row = tx
                .query_one(
                    "SELECT id, executions, red FROM runs WHERE content_key = $1",
                    &[&content.content_key],
                )
                .map_err(fail)?;
            let report = IngestReport {
                run_id: row.get(0),
                added: false,
                tests: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
                red: u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
            };
            tx.rollback().map_err(fail)?;
            return Ok(report);
        };
        let run_id: i64 = inserted.get(0);
        for chunk in rows.chunks(super::COPY_ROWS) {
            copy_blocks(&mut tx, run_id, started, chunk).map_err(fail)?;
        }
        if self.spilled.is_some() {
            tx.batch_execute(&format!(
                "INSERT INTO execution_blocks (run_id, block, started_us, outcomes, entries, \
                 details) SELECT {run_id}, block, {started}, outcomes, entries, details \
                 FROM candor_blocks; DROP TABLE candor_blocks"
            ))
            .map_err(fail)?;
        }
        tx.commit().map_err(fail)?;
        Ok(IngestReport {
            run_id,
            added: true,
            tests: u64::try_from(tests).unwrap_or(0),
            red: u64::try_from(red).unwrap_or(0),
        })
    }
}
