//! One run's executions of one block of test ids: the entries blob (everything but the
//! texts only some executions have) and the outcomes blob of half a byte per slot.

use super::{BLOCK_TESTS, Corrupt, outcome_code, outcome_of, put_varint, take_varint};
use crate::results::{Execution, Failure, Outcome};

/// What a block holds of one execution: everything but the texts that only some
/// executions have (those stay one row each in `execution_details`).
#[derive(Debug, Clone, PartialEq)]
pub struct Narrow {
    /// The outcome after the run's own retries.
    pub outcome: Outcome,
    /// Seconds.
    pub duration: Option<f64>,
    /// Attempts inside the run.
    pub attempts: u32,
    /// Source file as the runner reported it.
    pub file: Option<String>,
    /// Source line as the runner reported it.
    pub line: Option<u32>,
}

impl Narrow {
    /// The execution this entry describes, with the parts its details hold.
    pub fn into_execution(
        self,
        test_id: String,
        failure: Option<Box<Failure>>,
        skip_message: Option<String>,
        stdout: Option<String>,
        stderr: Option<String>,
    ) -> Execution {
        Execution {
            test_id,
            outcome: self.outcome,
            duration: self.duration,
            attempts: self.attempts,
            failure,
            skip_message,
            file: self.file,
            line: self.line,
            stdout,
            stderr,
        }
    }
}

/// One slot of a [`BlockBuilder`]; `file` is 0 for none, else an index into its file
/// table plus one; `details` is the `execution_details` row that holds this execution's
/// details, if it has any.
#[derive(Debug, Clone, Copy)]
struct Slot {
    code: u8,
    attempts: u32,
    line: Option<u32>,
    duration: Option<f64>,
    file: u32,
    details: Option<i64>,
}

/// First byte of every entries blob; a new packing gets a new one.
const ENTRIES_FORMAT: u8 = 1;
const BITMAP_BYTES: usize = BLOCK_TESTS / 8;
const HAS_DURATION: u8 = 0x08;
const HAS_FILE: u8 = 0x10;
const HAS_LINE: u8 = 0x20;
const HAS_ATTEMPTS: u8 = 0x40;
const HAS_DETAILS: u8 = 0x80;
const CODE_MASK: u8 = 0x07;

/// One run's executions of one block while they are gathered, and the two blobs they are
/// stored as.
///
/// The entries blob (`execution_blocks.entries`):
///
/// ```text
/// format byte (1)
/// presence bitmap: BLOCK_TESTS bits, bit s of byte s / 8 set when slot s holds a test
/// file table: varint count, then each file as varint length + UTF-8 bytes
/// per present slot, ascending:
///   flags: outcome code (bits 0-2), duration 0x08, file 0x10, line 0x20, attempts ≠ 1 0x40,
///          details 0x80
///   [varint attempts] [duration] [varint file index] [varint line]
///   [varint id of the `execution_details` row holding this execution's details]
/// duration: a varint whose two low bits say what it is: 0 — the rest is milliseconds,
///   1 — microseconds, 2 — an f64 follows (8 bytes little-endian); runners print
///   durations with a few decimals, which come back exactly from a count of either unit
/// ```
///
/// Varints are unsigned LEB128. The outcomes blob (`outcome_blocks.outcomes`) is half a
/// byte per slot, slot s in byte s / 2 (low half for even s): 0 when absent, else the
/// outcome code plus one; it ends at the last present slot.
#[derive(Debug, Clone)]
pub struct BlockBuilder {
    slots: Vec<Option<Slot>>,
    files: Vec<String>,
    present: usize,
}

impl Default for BlockBuilder {
    fn default() -> Self {
        BlockBuilder {
            slots: vec![None; BLOCK_TESTS],
            files: Vec::new(),
            present: 0,
        }
    }
}

impl BlockBuilder {
    /// Slots that hold an execution.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.present
    }

    /// No slot holds an execution.
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    /// Every slot holds an execution: nothing more can arrive but retries.
    pub fn is_full(&self) -> bool {
        self.present == BLOCK_TESTS
    }

    /// Puts `narrow` in `slot`, replacing what was there.
    pub fn set(&mut self, slot: usize, mut narrow: Narrow) {
        let file = narrow.file.take().map_or(0, |file| self.intern_owned(file));
        self.put_entry(slot, &narrow, file);
    }

    /// [`BlockBuilder::set`] from a borrowed entry: its file is copied only when the
    /// block has not met it yet.
    pub fn set_ref(&mut self, slot: usize, narrow: &Narrow) {
        let file = narrow.file.as_deref().map_or(0, |file| self.intern(file));
        self.put_entry(slot, narrow, file);
    }

    /// Puts `narrow` in `slot` with `file`, its index in the file table (0: none).
    fn put_entry(&mut self, slot: usize, narrow: &Narrow, file: u32) {
        let entry = Slot {
            code: outcome_code(narrow.outcome),
            attempts: narrow.attempts,
            line: narrow.line,
            duration: stored_duration(narrow.duration),
            file,
            details: None,
        };
        if let Some(place) = self.slots.get_mut(slot) {
            if place.is_none() {
                self.present += 1;
            }
            *place = Some(entry);
        }
    }

    /// Records that the details of the execution in `slot` are in `execution_details`
    /// row `row` (`None`: it has none, or they are not written yet).
    pub fn set_details(&mut self, slot: usize, row: Option<i64>) {
        if let Some(Some(entry)) = self.slots.get_mut(slot) {
            entry.details = row;
        }
    }

    /// The `execution_details` row holding the details of the execution in `slot`.
    pub fn details_row(&self, slot: usize) -> Option<i64> {
        self.slots.get(slot).copied().flatten()?.details
    }

    /// What `slot` holds.
    pub fn get(&self, slot: usize) -> Option<Narrow> {
        let entry = (*self.slots.get(slot)?)?;
        Some(Narrow {
            outcome: outcome_of(entry.code)?,
            duration: entry.duration,
            attempts: entry.attempts,
            file: self.file(entry.file).map(str::to_owned),
            line: entry.line,
        })
    }

    fn file(&self, index: u32) -> Option<&str> {
        let index = usize::try_from(index).ok()?.checked_sub(1)?;
        self.files.get(index).map(String::as_str)
    }

    /// A block's tests mostly share a handful of files, so they are stored once; the
    /// latest one is the likeliest match.
    fn intern(&mut self, file: &str) -> u32 {
        if let Some(at) = self.files.iter().rposition(|known| known == file) {
            return at as u32 + 1;
        }
        self.files.push(file.to_owned());
        self.files.len() as u32
    }

    /// [`BlockBuilder::intern`] of a file already owned.
    fn intern_owned(&mut self, file: String) -> u32 {
        if let Some(at) = self.files.iter().rposition(|known| *known == file) {
            return at as u32 + 1;
        }
        self.files.push(file);
        self.files.len() as u32
    }

    /// The entries blob.
    pub fn entries(&self) -> Vec<u8> {
        let mut blob = Vec::with_capacity(64 + self.present * 12);
        blob.push(ENTRIES_FORMAT);
        let mut bitmap = [0u8; BITMAP_BYTES];
        for (slot, entry) in self.slots.iter().enumerate() {
            if entry.is_some() {
                bitmap[slot / 8] |= 1 << (slot % 8);
            }
        }
        blob.extend_from_slice(&bitmap);
        put_varint(&mut blob, self.files.len() as u64);
        for file in &self.files {
            put_varint(&mut blob, file.len() as u64);
            blob.extend_from_slice(file.as_bytes());
        }
        for entry in self.slots.iter().flatten() {
            let mut flags = entry.code;
            flags |= if entry.duration.is_some() {
                HAS_DURATION
            } else {
                0
            };
            flags |= if entry.file != 0 { HAS_FILE } else { 0 };
            flags |= if entry.line.is_some() { HAS_LINE } else { 0 };
            flags |= if entry.attempts == 1 { 0 } else { HAS_ATTEMPTS };
            flags |= if entry.details.is_some() {
                HAS_DETAILS
            } else {
                0
            };
            blob.push(flags);
            if entry.attempts != 1 {
                put_varint(&mut blob, u64::from(entry.attempts));
            }
            if let Some(duration) = entry.duration {
                put_duration(&mut blob, duration);
            }
            if entry.file != 0 {
                put_varint(&mut blob, u64::from(entry.file - 1));
            }
            if let Some(line) = entry.line {
                put_varint(&mut blob, u64::from(line));
            }
            if let Some(row) = entry.details {
                put_varint(&mut blob, row as u64);
            }
        }
        blob
    }

    /// The outcomes blob.
    pub fn outcomes(&self) -> Vec<u8> {
        let last = self.slots.iter().rposition(Option::is_some).unwrap_or(0);
        let mut blob = vec![0u8; last / 2 + 1];
        for (slot, entry) in self.slots.iter().enumerate() {
            if let Some(entry) = entry {
                blob[slot / 2] |= (entry.code + 1) << ((slot % 2) * 4);
            }
        }
        blob
    }

    /// A builder holding what an entries blob holds, to add to it (a retry, or more of
    /// the run's tests of a block already written).
    pub fn decode(blob: &[u8]) -> Result<BlockBuilder, Corrupt> {
        let mut entries = Entries::new(blob)?;
        let mut builder = BlockBuilder {
            files: entries
                .files
                .iter()
                .map(|file| (*file).to_owned())
                .collect(),
            ..BlockBuilder::default()
        };
        while let Some((slot, raw)) = entries.next_raw()? {
            builder.present += 1;
            builder.slots[slot] = Some(raw);
        }
        Ok(builder)
    }
}

/// Durations as counts of milliseconds or microseconds when that gives the same f64
/// back (it does for what runners print: a few decimals), else the f64 itself.
fn put_duration(out: &mut Vec<u8>, seconds: f64) {
    for (scale, tag) in [(1e3, 0), (1e6, 1)] {
        let count = (seconds * scale).round();
        if (0.0..4.0e15).contains(&count) && (count / scale).to_bits() == seconds.to_bits() {
            put_varint(out, ((count as u64) << 2) | tag);
            return;
        }
    }
    put_varint(out, 2);
    out.extend_from_slice(&seconds.to_le_bytes());
}

fn take_duration(input: &mut &[u8]) -> Result<f64, Corrupt> {
    let value = take_varint(input)?;
    match value & 3 {
        0 => Ok((value >> 2) as f64 / 1e3),
        1 => Ok((value >> 2) as f64 / 1e6),
        2 => {
            if input.len() < 8 {
                return Err(Corrupt("duration past the end"));
            }
            let (bytes, rest) = input.split_at(8);
            let mut raw = [0u8; 8];
            raw.copy_from_slice(bytes);
            *input = rest;
            Ok(f64::from_le_bytes(raw))
        }
        _ => Err(Corrupt("unknown duration form")),
    }
}

/// SQLite kept durations in a REAL column, which turns NaN into NULL and stores -0.0 as
/// the integer 0; the blocks keep what that column gave back.
pub(super) fn stored_duration(duration: Option<f64>) -> Option<f64> {
    duration
        .filter(|seconds| !seconds.is_nan())
        .map(|seconds| if seconds == 0.0 { 0.0 } else { seconds })
}

/// Reads the entries blob of a block, slot by slot.
pub struct Entries<'a> {
    bitmap: &'a [u8],
    files: Vec<&'a str>,
    rest: &'a [u8],
    next_slot: usize,
}

impl<'a> Entries<'a> {
    /// Starts reading `blob`.
    pub fn new(blob: &'a [u8]) -> Result<Entries<'a>, Corrupt> {
        let (&format, rest) = blob.split_first().ok_or(Corrupt("empty entries"))?;
        if format != ENTRIES_FORMAT {
            return Err(Corrupt("unknown entries format"));
        }
        if rest.len() < BITMAP_BYTES {
            return Err(Corrupt("entries shorter than their bitmap"));
        }
        let (bitmap, mut rest) = rest.split_at(BITMAP_BYTES);
        let count = take_varint(&mut rest)?;
        let mut files = Vec::new();
        for _ in 0..count {
            let length = usize::try_from(take_varint(&mut rest)?)
                .map_err(|_| Corrupt("file name too long"))?;
            if rest.len() < length {
                return Err(Corrupt("file name past the end"));
            }
            let (text, after) = rest.split_at(length);
            files.push(std::str::from_utf8(text).map_err(|_| Corrupt("file name not UTF-8"))?);
            rest = after;
        }
        Ok(Entries {
            bitmap,
            files,
            rest,
            next_slot: 0,
        })
    }

    fn next_present(&mut self) -> Option<usize> {
        while self.next_slot < BLOCK_TESTS {
            let slot = self.next_slot;
            self.next_slot += 1;
            if self.bitmap[slot / 8] & (1 << (slot % 8)) != 0 {
                return Some(slot);
            }
        }
        None
    }

    fn next_raw(&mut self) -> Result<Option<(usize, Slot)>, Corrupt> {
        let Some(slot) = self.next_present() else {
            return Ok(None);
        };
        let (&flags, rest) = self
            .rest
            .split_first()
            .ok_or(Corrupt("entry past the end"))?;
        self.rest = rest;
        let code = flags & CODE_MASK;
        outcome_of(code).ok_or(Corrupt("unknown outcome code"))?;
        let attempts = if flags & HAS_ATTEMPTS == 0 {
            1
        } else {
            u32::try_from(take_varint(&mut self.rest)?).map_err(|_| Corrupt("attempts"))?
        };
        let duration = if flags & HAS_DURATION == 0 {
            None
        } else {
            Some(take_duration(&mut self.rest)?)
        };
        let file = if flags & HAS_FILE == 0 {
            0
        } else {
            let index = take_varint(&mut self.rest)?;
            if index >= self.files.len() as u64 {
                return Err(Corrupt("file index out of range"));
            }
            index as u32 + 1
        };
        let line = if flags & HAS_LINE == 0 {
            None
        } else {
            Some(u32::try_from(take_varint(&mut self.rest)?).map_err(|_| Corrupt("line"))?)
        };
        let details = if flags & HAS_DETAILS == 0 {
            None
        } else {
            Some(i64::try_from(take_varint(&mut self.rest)?).map_err(|_| Corrupt("details row"))?)
        };
        Ok(Some((
            slot,
            Slot {
                code,
                attempts,
                line,
                duration,
                file,
                details,
            },
        )))
    }

    fn narrow(&self, raw: Slot) -> Result<Narrow, Corrupt> {
        let file = usize::try_from(raw.file)
            .ok()
            .and_then(|index| index.checked_sub(1))
            .and_then(|index| self.files.get(index))
            .map(|file| (*file).to_owned());
        Ok(Narrow {
            outcome: outcome_of(raw.code).ok_or(Corrupt("unknown outcome code"))?,
            duration: raw.duration,
            attempts: raw.attempts,
            file,
            line: raw.line,
        })
    }

    /// The next present slot, what it holds, and the `execution_details` row holding its
    /// details.
    pub fn next_entry(&mut self) -> Result<Option<(usize, Narrow, Option<i64>)>, Corrupt> {
        match self.next_raw()? {
            Some((slot, raw)) => Ok(Some((slot, self.narrow(raw)?, raw.details))),
            None => Ok(None),
        }
    }

    /// What `slot` holds and the `execution_details` row holding its details, reading
    /// past the slots before it.
    pub fn find(mut self, slot: usize) -> Result<Option<(Narrow, Option<i64>)>, Corrupt> {
        while let Some((at, raw)) = self.next_raw()? {
            if at == slot {
                return Ok(Some((self.narrow(raw)?, raw.details)));
            }
            if at > slot {
                break;
            }
        }
        Ok(None)
    }
}

/// The half byte of `slot` in an outcomes blob: 0 when the slot holds no execution, else
/// the outcome code plus one.
pub fn outcome_nibble(outcomes: &[u8], slot: usize) -> u8 {
    outcomes
        .get(slot / 2)
        .map_or(0, |byte| (byte >> ((slot % 2) * 4)) & 0x0F)
}

/// The outcome a non-zero [`outcome_nibble`] stands for.
pub fn outcome_of_nibble(nibble: u8) -> Result<Outcome, Corrupt> {
    nibble
        .checked_sub(1)
        .and_then(outcome_of)
        .ok_or(Corrupt("unknown outcome code"))
}
