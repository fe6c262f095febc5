//! The small pieces of XML candor checks itself: attributes of a start tag (with exact
//! error offsets), entity and character references, line-end and attribute-value
//! normalization, bounded text accumulation, and JUnit's many spellings of `time`.

use std::ops::Range;

use crate::results::model::MAX_TEXT_BYTES;

/// A problem at a byte offset inside the markup being looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MarkupError {
    /// Offset into the slice that was being read.
    pub(super) at: usize,
    pub(super) message: String,
}

impl MarkupError {
    fn new(at: usize, message: impl Into<String>) -> MarkupError {
        MarkupError {
            at,
            message: message.into(),
        }
    }
}

/// One `key="value"` of a start tag, as ranges into the tag's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AttributeSpan {
    pub(super) key: Range<usize>,
    /// The raw value between the quotes: still escaped.
    pub(super) value: Range<usize>,
    /// The value holds no reference and no raw tab or line end: it is its own decoding.
    pub(super) plain: bool,
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

const RAW_LT: &str = "a raw `<` inside a tag (an attribute value must write it as `&lt;`)";

/// Checks a start tag's content (everything between `<` and `>`, name included) and
/// lists its attributes into `out`. Returns whether any value needs decoding (holds a
/// reference or a raw tab or line end).
///
/// quick-xml finds the end of a tag by quotes but does not look inside values, so a raw
/// `<` there (`time="<<computed>>"`) and duplicate attributes are caught here.
pub(super) fn scan_attributes(
    content: &[u8],
    name_len: usize,
    out: &mut Vec<AttributeSpan>,
) -> Result<bool, MarkupError> {
    out.clear();
    if simple_attributes(content, name_len, out) {
        return Ok(false);
    }
    out.clear();
    if let Some(at) = first_forbidden(content) {
        return Err(MarkupError::new(at, forbidden_message(content[at])));
    }
    if let Some(at) = memchr::memchr(b'<', content.get(..name_len).unwrap_or(content)) {
        return Err(MarkupError::new(at, RAW_LT));
    }
    let mut needs_decoding = false;
    let mut at = name_len;
    loop {
        let spaces_from = at;
        while content.get(at).copied().is_some_and(is_space) {
            at += 1;
        }
        if at >= content.len() {
            return Ok(needs_decoding);
        }
        if at == spaces_from && at > name_len {
            return Err(MarkupError::new(
                at,
                "attributes must be separated by spaces",
            ));
        }
        let key_start = at;
        while let Some(&byte) = content.get(at) {
            match byte {
                b'<' => return Err(MarkupError::new(at, RAW_LT)),
                b'=' | b'"' | b'\'' => break,
                _ if is_space(byte) => break,
                _ => at += 1,
            }
        }
        let key = key_start..at;
        if key.is_empty() {
            return Err(MarkupError::new(at, "an attribute without a name"));
        }
        while content.get(at).copied().is_some_and(is_space) {
            at += 1;
        }
        if content.get(at) != Some(&b'=') {
            return Err(MarkupError::new(
                key_start,
                format!(
                    "the attribute `{}` has no `=\"value\"`",
                    String::from_utf8_lossy(&content[key.clone()])
                ),
            ));
        }
        at += 1;
        while content.get(at).copied().is_some_and(is_space) {
            at += 1;
        }
        let Some(&quote) = content.get(at).filter(|q| matches!(q, b'"' | b'\'')) else {
            return Err(MarkupError::new(at, "an attribute value must be quoted"));
        };
        let value_start = at + 1;
        let rest = content.get(value_start..).unwrap_or_default();
        let (length, plain) = match scan_value(rest, quote) {
            ValueEnd::Closed { length, plain } => (length, plain),
            ValueEnd::RawLessThan(offset) => {
                return Err(MarkupError::new(value_start + offset, RAW_LT));
            }
            ValueEnd::Unclosed => {
                return Err(MarkupError::new(at, "an attribute value is not closed"));
            }
        };
        needs_decoding |= !plain;
        let value = value_start..value_start + length;
        at = value.end + 1;
        let name = &content[key.clone()];
        let duplicate = out.iter().any(|seen| {
            let seen = &content[seen.key.clone()];
            seen.len() == name.len() && seen.first() == name.first() && seen == name
        });
        if duplicate {
            return Err(MarkupError::new(
                key.start,
                format!(
                    "the attribute `{}` appears twice",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        out.push(AttributeSpan { key, value, plain });
    }
}

/// The attributes of a tag that holds none of `<`, `&` and control characters, all plain;
/// `false` for any other tag, which [`scan_attributes`] must read.
pub(super) fn simple_attributes(
    content: &[u8],
    name_len: usize,
    out: &mut Vec<AttributeSpan>,
) -> bool {
    out.clear();
    if !plain_tag(content) || !simple_name(content, name_len) {
        return false;
    }
    let mut at = name_len;
    loop {
        match next_simple_attribute(content, &mut at) {
            SimpleStep::End => return true,
            SimpleStep::Unusual => return false,
            SimpleStep::Attribute { key, value } => {
                if is_duplicate(content, out, key.clone()) {
                    return false;
                }
                out.push(AttributeSpan {
                    key,
                    value,
                    plain: true,
                });
            }
        }
    }
}

/// Whether `content` holds none of `<`, `&` and the control characters (tab and line
/// ends included): nothing in it needs decoding or refusing, and the attribute reader
/// that follows need look only for `=` and quotes. One pass without branches or an
/// early exit, which the compiler makes vector compares of: tags are short.
#[expect(
    clippy::needless_bitwise_bool,
    reason = "branch-free, so that the loop vectorizes"
)]
pub(super) fn plain_tag(content: &[u8]) -> bool {
    !content.iter().fold(false, |any, &byte| {
        any | (byte == b'<') | (byte == b'&') | (byte < 0x20)
    })
}

/// Whether a key is duplicated in `seen`.
pub(super) fn is_duplicate(content: &[u8], seen: &[AttributeSpan], key: Range<usize>) -> bool {
    let name = content.get(key).unwrap_or_default();
    seen.iter().any(|seen| {
        let seen = content.get(seen.key.clone()).unwrap_or_default();
        seen.len() == name.len() && seen.first() == name.first() && seen == name
    })
}

/// Whether the element name (the first `name_len` bytes) is plain.
pub(super) fn simple_name(content: &[u8], name_len: usize) -> bool {
    content
        .get(..name_len)
        .is_some_and(|name| name.iter().all(|&b| KEY_BYTES[usize::from(b)]))
}

/// One step through the attributes of a simple tag.
pub(super) enum SimpleStep {
    Attribute {
        key: Range<usize>,
        value: Range<usize>,
    },
    End,
    /// Something the careful scanner must look at: a tab or line end between attributes,
    /// spaces around `=`, an unquoted value, a byte that needs decoding or refusing.
    Unusual,
}

/// Reads the attribute starting at `*at` (spaces first) and moves past it, in a tag that
/// [`plain_tag`] passed. This is the hot path of large files, so it reads the tag once:
/// keys byte by byte in a table (they are short), values eight bytes at a time.
#[inline]
pub(super) fn next_simple_attribute(content: &[u8], at: &mut usize) -> SimpleStep {
    debug_assert!(plain_tag(content));
    let spaces_from = *at;
    while content.get(*at) == Some(&b' ') {
        *at += 1;
    }
    if *at >= content.len() {
        return SimpleStep::End;
    }
    if *at == spaces_from {
        return SimpleStep::Unusual;
    }
    let key_start = *at;
    loop {
        match content.get(*at) {
            Some(b'=') => break,
            Some(&byte) if KEY_BYTES[usize::from(byte)] => *at += 1,
            _ => return SimpleStep::Unusual,
        }
    }
    let key = key_start..*at;
    let Some(&quote) = content.get(*at + 1).filter(|q| matches!(q, b'"' | b'\'')) else {
        return SimpleStep::Unusual;
    };
    let value_start = *at + 2;
    let Some(length) = closing_quote(content.get(value_start..).unwrap_or_default(), quote) else {
        return SimpleStep::Unusual;
    };
    *at = value_start + length + 1;
    if key.is_empty() {
        return SimpleStep::Unusual;
    }
    SimpleStep::Attribute {
        key,
        value: value_start..value_start + length,
    }
}

/// A byte that can be part of a name in a simple tag.
const fn is_key_byte(byte: u8) -> bool {
    byte > b' ' && !matches!(byte, b'"' | b'\'' | b'<' | b'&' | b'=' | b'/')
}

/// [`is_key_byte`] for every byte.
static KEY_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = is_key_byte(byte as u8);
        byte += 1;
    }
    table
};

/// Where the closing `quote` of a value is, in a tag [`plain_tag`] passed (so nothing
/// before it needs decoding or refusing). Eight bytes at a time: values are short, and
/// a vector search costs more to set up than this costs to run.
#[inline]
pub(super) fn closing_quote(rest: &[u8], quote: u8) -> Option<usize> {
    let mut words = rest.chunks_exact(8);
    let mut offset = 0;
    for chunk in words.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let found = equal_bytes(word, quote);
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|&byte| byte == quote)
        .map(|index| offset + index)
}

enum ValueEnd {
    Closed { length: usize, plain: bool },
    RawLessThan(usize),
    Unclosed,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` equal to `byte`. Only bytes above a true match can
/// be flagged wrongly (a borrow runs upwards), so the lowest flag, and whether any flag
/// is set below a given byte, are exact.
fn equal_bytes(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The high bit of each byte of `word` below 0x20, with the same caveat.
fn control_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES * 0x20) & !word & HIGHS
}

/// Finds the closing `quote` of a value, eight bytes at a time: attribute values are
/// short, and a vector search would cost more to set up than to run.
fn scan_value(rest: &[u8], quote: u8) -> ValueEnd {
    let mut plain = true;
    let mut words = rest.chunks_exact(8);
    let mut offset = 0;
    for chunk in words.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let stop = equal_bytes(word, quote) | equal_bytes(word, b'<');
        let special = equal_bytes(word, b'&') | control_bytes(word);
        if stop != 0 {
            let bits = stop.trailing_zeros();
            let index = (bits / 8) as usize;
            let below = (1u64 << bits) - 1;
            plain &= special & below == 0;
            return if chunk.get(index) == Some(&b'<') {
                ValueEnd::RawLessThan(offset + index)
            } else {
                ValueEnd::Closed {
                    length: offset + index,
                    plain,
                }
            };
        }
        plain &= special == 0;
        offset += 8;
    }
    for (index, &byte) in words.remainder().iter().enumerate() {
        if byte == quote {
            return ValueEnd::Closed {
                length: offset + index,
                plain,
            };
        }
        match byte {
            b'<' => return ValueEnd::RawLessThan(offset + index),
            b'&' => plain = false,
            _ if byte < 0x20 => plain = false,
            _ => {}
        }
    }
    ValueEnd::Unclosed
}

/// XML 1.0 `Char` excludes every C0 control except tab, line feed and carriage return;
/// quick-xml lets them through, so text and attribute values are checked here.
#[expect(
    clippy::needless_bitwise_bool,
    reason = "branch-free, so that the loops calling it vectorize"
)]
fn is_forbidden(byte: u8) -> bool {
    (byte < 0x20) & (byte != b'\t') & (byte != b'\n') & (byte != b'\r')
}

/// Where the first character XML forbids is in `bytes`, after a branch-free pass (which
/// the compiler vectorizes) has said there is one.
pub(super) fn first_forbidden(bytes: &[u8]) -> Option<usize> {
    // Eight bytes at a time: a control byte is rare, and tab, line feed and carriage
    // return (the allowed ones) are told apart only in a word that holds a control byte.
    let mut words = bytes.chunks_exact(8);
    let mut any = false;
    for chunk in words.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        if control_bytes(word) != 0 && chunk.iter().any(|&byte| is_forbidden(byte)) {
            any = true;
            break;
        }
    }
    if !any && !words.remainder().iter().any(|&byte| is_forbidden(byte)) {
        return None;
    }
    bytes.iter().position(|&byte| is_forbidden(byte))
}

/// The refusal of a forbidden character.
pub(super) fn forbidden_message(byte: u8) -> String {
    format!(
        "the control character U+{byte:04X} is not allowed in XML 1.0 (a writer that did not escape it)"
    )
}

/// Resolves the name between `&` and `;`: the five entities XML predefines and character
/// references. Anything else is an error: candor never reads a DTD, so no other entity
/// can be defined.
///
/// Character references to C0 controls (`&#27;`, which Surefire writes for ANSI escapes)
/// are accepted: they are escaped on purpose and decode to the character. `&#0;` and
/// references to surrogates or beyond U+10FFFF are refused.
pub(super) fn resolve_reference(name: &[u8]) -> Result<char, String> {
    let character = match name {
        b"lt" => '<',
        b"gt" => '>',
        b"amp" => '&',
        b"quot" => '"',
        b"apos" => '\'',
        _ => {
            let code = match name {
                [b'#', b'x', hex @ ..] => parse_radix(hex, 16),
                [b'#', decimal @ ..] => parse_radix(decimal, 10),
                _ => {
                    return Err(format!(
                        "unknown entity `&{};` (candor reads no DTD, so only &lt; &gt; &amp; &quot; &apos; and character references exist)",
                        String::from_utf8_lossy(name)
                    ));
                }
            };
            match code.filter(|&c| c != 0).and_then(char::from_u32) {
                Some(character) => character,
                None => {
                    return Err(format!(
                        "`&{};` is not a valid character reference",
                        String::from_utf8_lossy(name)
                    ));
                }
            }
        }
    };
    Ok(character)
}

fn parse_radix(digits: &[u8], radix: u32) -> Option<u32> {
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, radix).ok()
}

/// Decodes a raw attribute value into `out`: references resolved, and, as XML requires
/// for attribute values, each raw tab, line feed or carriage return (a CR LF pair
/// counting as one) turned into a space. Escaped `&#10;` stays a line feed.
pub(super) fn decode_value(raw: &str, out: &mut String) -> Result<(), MarkupError> {
    // Tab, LF and CR are the only controls that get this far; a branch-free fold over a
    // short value is cheaper than searching for each.
    let special = raw.bytes().fold(0u8, |special, b| {
        special | u8::from(b < 0x20) | u8::from(b == b'&')
    });
    if special == 0 {
        out.push_str(raw);
        return Ok(());
    }
    let mut rest = raw;
    let mut at = 0;
    while let Some(special) = rest.find(['&', '\t', '\n', '\r']) {
        out.push_str(&rest[..special]);
        at += special;
        rest = &rest[special..];
        let consumed = match rest.as_bytes().first() {
            Some(b'&') => {
                let Some(length) = rest.find(';') else {
                    return Err(MarkupError::new(at, super::content::UNCLOSED_REFERENCE));
                };
                let character = resolve_reference(&rest.as_bytes()[1..length])
                    .map_err(|message| MarkupError::new(at, message))?;
                out.push(character);
                length + 1
            }
            Some(b'\r') if rest.as_bytes().get(1) == Some(&b'\n') => {
                out.push(' ');
                2
            }
            _ => {
                out.push(' ');
                1
            }
        };
        at += consumed;
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    Ok(())
}

/// The refusal of bytes that are not UTF-8.
pub(super) const INVALID_UTF8: &str = "invalid UTF-8 (the file declares no other encoding)";

fn utf8(bytes: &[u8], offset: usize) -> Result<&str, MarkupError> {
    simdutf8::compat::from_utf8(bytes)
        .map_err(|error| MarkupError::new(offset + error.valid_up_to(), INVALID_UTF8))
}

/// Checks a whole tag's content for UTF-8 once, so that its values need no more checks.
pub(super) fn tag_text(content: &[u8]) -> Result<&str, MarkupError> {
    utf8(content, 0)
}

/// Text kept from one test case (failure text, captured output), never longer than
/// [`MAX_TEXT_BYTES`] however much the file holds: what does not fit is counted, not
/// stored, so memory stays bounded while reading.
///
/// Held as bytes that are always UTF-8 (only `&str`, ASCII and chars go in), so that
/// text the reader has already found to be ASCII is not checked again piece by piece:
/// [`CappedText::take`] checks the whole once.
#[derive(Debug, Default)]
pub(super) struct CappedText {
    text: Vec<u8>,
    dropped: usize,
}

impl CappedText {
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.dropped = 0;
    }

    /// What has been kept so far, as it was pushed.
    #[cfg(test)]
    pub(super) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.text).expect("pushed as UTF-8")
    }

    /// Whether nothing but whitespace was kept.
    pub(super) fn is_blank(&self) -> bool {
        if self.dropped > 0 {
            return false;
        }
        // Most texts start with a visible ASCII character: settled at the first byte.
        for (at, &byte) in self.text.iter().enumerate() {
            match byte {
                b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => {}
                0x80.. => {
                    return std::str::from_utf8(&self.text[at..])
                        .is_ok_and(|rest| rest.chars().all(char::is_whitespace));
                }
                _ => return false,
            }
        }
        true
    }

    pub(super) fn push_str(&mut self, piece: &str) {
        self.push_bytes(piece.as_bytes());
    }

    /// Appends text that is ASCII (what the content reader found between two stops).
    #[inline]
    pub(super) fn push_ascii(&mut self, piece: &[u8]) {
        debug_assert!(piece.is_ascii());
        self.push_bytes(piece);
    }

    /// Appends `piece`, which is UTF-8, cut at a character boundary when it does not fit.
    #[inline]
    fn push_bytes(&mut self, piece: &[u8]) {
        if self.dropped == 0 && piece.len() <= MAX_TEXT_BYTES.saturating_sub(self.text.len()) {
            self.text.extend_from_slice(piece);
            return;
        }
        self.push_bytes_capped(piece);
    }

    /// [`CappedText::push_bytes`] when `piece` may not fit.
    fn push_bytes_capped(&mut self, piece: &[u8]) {
        if self.dropped > 0 {
            self.dropped += piece.len();
            return;
        }
        let room = MAX_TEXT_BYTES.saturating_sub(self.text.len());
        if piece.len() <= room {
            self.text.extend_from_slice(piece);
            return;
        }
        let mut cut = room;
        while piece.get(cut).is_some_and(|&byte| byte & 0xC0 == 0x80) {
            cut -= 1;
        }
        self.text.extend_from_slice(&piece[..cut]);
        self.dropped = piece.len() - cut;
    }

    /// Appends one ASCII byte (a resolved `&lt;`).
    pub(super) fn push_ascii_byte(&mut self, byte: u8) {
        debug_assert!(byte.is_ascii());
        if self.dropped == 0 && self.text.len() < MAX_TEXT_BYTES {
            self.text.push(byte);
        } else {
            self.push_bytes(&[byte]);
        }
    }

    pub(super) fn push_char(&mut self, character: char) {
        // References in failure texts are nearly all `&lt;`, `&gt;`, `&quot;`, `&apos;`:
        // one ASCII byte, pushed without the general path's encoding and slicing.
        if character.is_ascii() && self.dropped == 0 && self.text.len() < MAX_TEXT_BYTES {
            self.text.push(character as u8);
            return;
        }
        self.push_str(character.encode_utf8(&mut [0; 4]));
    }

    /// Appends raw character data (text or CDATA), normalizing line ends as XML requires:
    /// CR LF and a lone CR become LF.
    pub(super) fn push_raw(&mut self, raw: &[u8]) -> Result<(), MarkupError> {
        if memchr::memchr(b'\r', raw).is_none() {
            self.push_str(utf8(raw, 0)?);
            return Ok(());
        }
        let mut at = 0;
        for piece in raw.split(|&b| b == b'\r') {
            if at > 0 && !piece.starts_with(b"\n") {
                self.push_str("\n");
            }
            self.push_str(utf8(piece, at)?);
            at += piece.len() + 1;
        }
        Ok(())
    }

    /// The kept text with blank lines around it removed (the indentation of its first line
    /// stays), and a note of how much was cut, in [`crate::results::model::cap_text`]'s
    /// words. `None` when only whitespace was kept.
    ///
    /// The text is copied out at its exact size and the buffer keeps its capacity for the
    /// next test case: growing a fresh buffer by doubling for every case cost more than
    /// the one copy.
    pub(super) fn take(&mut self) -> Option<String> {
        if self.text.is_empty() && self.dropped == 0 {
            return None;
        }
        // Always UTF-8 (see the type): checked once here rather than as each piece
        // arrived (`from_utf8` first: the lossy reader has no fast path for ASCII).
        let text = match simdutf8::basic::from_utf8(&self.text) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&self.text),
        };
        if self.dropped == 0 && text.trim().is_empty() {
            self.clear();
            return None;
        }
        let kept = text.trim_end();
        let leading = kept.len() - kept.trim_start().len();
        let start = kept[..leading]
            .rfind('\n')
            .map_or(0, |last_newline| last_newline + 1);
        let kept = &kept[start..];
        let mut taken = if self.dropped > 0 {
            // The words of `model::cap_text`, so that both cuts read alike.
            format!("{kept}\n[candor: {} more bytes not kept]", self.dropped)
        } else {
            kept.to_owned()
        };
        taken.shrink_to_fit();
        self.clear();
        Some(taken)
    }
}

/// What a `time` attribute said.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Seconds {
    /// A usable duration.
    Known(f64),
    /// No attribute, or an empty one.
    Missing,
    /// Present but unusable: negative, not a number, implausibly large.
    Unusable,
}

/// Above this a `time` is not seconds (container-structure-test writes nanoseconds):
/// eleven and a half days.
const MAX_PLAUSIBLE_SECONDS: f64 = 1e6;

/// Reads a JUnit `time`: seconds as a decimal (`0.004`), in scientific notation
/// (`1.4e-05`), with thousands separators (`2,503.1`), with a decimal comma (`0,5`, from
/// writers that follow the locale) or with a trailing `s`.
///
/// A comma is a thousands separator when a dot follows it or when there are several,
/// and a decimal comma when it is the only one: `1,234` is 1.234.
/// [`parse_seconds`] on raw bytes, without a UTF-8 check for the common plain decimal.
pub(super) fn parse_seconds_bytes(raw: &[u8]) -> Seconds {
    if let Some(seconds) = plain_decimal(raw) {
        return if seconds <= MAX_PLAUSIBLE_SECONDS {
            Seconds::Known(seconds)
        } else {
            Seconds::Unusable
        };
    }
    match std::str::from_utf8(raw) {
        Ok(text) => parse_seconds(text),
        Err(_) => Seconds::Unusable,
    }
}

pub(super) fn parse_seconds(raw: &str) -> Seconds {
    if let Some(seconds) = plain_decimal(raw.as_bytes()) {
        return if seconds <= MAX_PLAUSIBLE_SECONDS {
            Seconds::Known(seconds)
        } else {
            Seconds::Unusable
        };
    }
    let text = raw.trim();
    if text.is_empty() {
        return Seconds::Missing;
    }
    let text = text.strip_suffix('s').unwrap_or(text).trim_end();
    let commas = text.matches(',').count();
    let normalized;
    let text = if commas == 0 {
        text
    } else {
        normalized = if commas == 1 && !text.contains('.') {
            text.replace(',', ".")
        } else {
            text.replace(',', "")
        };
        normalized.as_str()
    };
    // Rust's float syntax also takes `inf` and `NaN`; no writer means those as a time.
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return Seconds::Unusable;
    }
    match text.parse::<f64>() {
        Ok(seconds) if (0.0..=MAX_PLAUSIBLE_SECONDS).contains(&seconds) => Seconds::Known(seconds),
        _ => Seconds::Unusable,
    }
}

/// The common `123.456` without going through the general float parser: with at most 15
/// digits the digits are an exact integer and the power of ten is exact, so one division
/// rounds exactly as `str::parse` does (Clinger's fast path).
fn plain_decimal(text: &[u8]) -> Option<f64> {
    const POWERS: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let mut digits: u64 = 0;
    let mut count = 0usize;
    let mut fraction: Option<usize> = None;
    for &byte in text {
        match byte {
            b'0'..=b'9' => {
                digits = digits * 10 + u64::from(byte - b'0');
                count += 1;
                if count > 15 {
                    return None;
                }
                if let Some(places) = fraction.as_mut() {
                    *places += 1;
                }
            }
            b'.' if fraction.is_none() => fraction = Some(0),
            _ => return None,
        }
    }
    if count == 0 {
        return None;
    }
    Some(digits as f64 / POWERS[fraction.unwrap_or(0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(content: &str) -> Result<Vec<(String, String)>, MarkupError> {
        let name_len = content.find(' ').unwrap_or(content.len());
        let mut out = Vec::new();
        scan_attributes(content.as_bytes(), name_len, &mut out)?;
        Ok(out
            .into_iter()
            .map(|s| (content[s.key].to_owned(), content[s.value].to_owned()))
            .collect())
    }

    #[test]
    fn attributes_in_both_quotes_and_odd_spacing() {
        assert_eq!(
            spans("testcase name='a \"b\"'\n   time = \"1\" xsi:x=\"\"").unwrap(),
            vec![
                ("name".into(), "a \"b\"".into()),
                ("time".into(), "1".into()),
                ("xsi:x".into(), String::new()),
            ]
        );
        assert_eq!(spans("testsuites").unwrap(), vec![]);
    }

    #[test]
    fn a_raw_less_than_in_a_value_is_refused_where_it_is() {
        let error = spans("testcase name=\"a\" time=\"<<computed>>\"").unwrap_err();
        assert_eq!(error.at, 24);
    }

    #[test]
    fn values_are_scanned_word_by_word_with_exact_ends() {
        for length in 0..40 {
            for special in ["", "&amp;", "\n", "\t"] {
                let value = format!("{}{special}{}", "x".repeat(length), "y".repeat(length % 9));
                let content = format!("a v=\"{value}\" w='z'");
                let mut out = Vec::new();
                let decoding = scan_attributes(content.as_bytes(), 1, &mut out).unwrap();
                assert_eq!(&content[out[0].value.clone()], value);
                assert_eq!(out[0].plain, special.is_empty(), "{value:?}");
                assert_eq!(decoding, !special.is_empty());
                assert_eq!(&content[out[1].value.clone()], "z");
            }
            let content = format!("a v=\"{}<\"", "x".repeat(length));
            let error = scan_attributes(content.as_bytes(), 1, &mut Vec::new()).unwrap_err();
            assert_eq!(error.at, 5 + length);
        }
        assert!(scan_attributes(b"a v=\"never closed", 1, &mut Vec::new()).is_err());
        // Bytes at or above 0x80 (UTF-8) are plain text.
        let mut out = Vec::new();
        assert!(!scan_attributes("a v=\"éèà✓ü\"".as_bytes(), 1, &mut out).unwrap());
    }

    #[test]
    fn malformed_attributes_are_refused() {
        assert!(spans("testcase name").is_err());
        assert!(spans("testcase name=a").is_err());
        assert!(spans("testcase name=\"a\"time=\"1\"").is_err());
        assert_eq!(spans("testcase name=\"a\" name=\"b\"").unwrap_err().at, 18);
    }

    #[test]
    fn values_decode_references_and_normalize_whitespace() {
        let mut out = String::new();
        decode_value("a&lt;b&#10;c\r\nd\te&#x41;&amp;quot;", &mut out).unwrap();
        assert_eq!(out, "a<b\nc d eA&quot;");
    }

    #[test]
    fn unknown_entities_and_bad_character_references_are_refused() {
        let mut out = String::new();
        assert_eq!(decode_value("ab&oob;", &mut out).unwrap_err().at, 2);
        assert_eq!(decode_value("é\n&bad;", &mut out).unwrap_err().at, 3);
        assert!(decode_value("&#0;", &mut out).is_err());
        assert!(decode_value("&#xD800;", &mut out).is_err());
        assert!(decode_value("&#x110000;", &mut out).is_err());
        assert!(decode_value("a & b", &mut out).is_err());
        assert_eq!(resolve_reference(b"#27"), Ok('\u{1b}'));
    }

    #[test]
    fn capped_text_keeps_at_most_the_limit_and_says_how_much_was_cut() {
        let mut text = CappedText::default();
        text.push_str(&"é".repeat(MAX_TEXT_BYTES));
        text.push_str("tail");
        let kept = text.take().unwrap();
        let expected =
            crate::results::model::cap_text(format!("{}tail", "é".repeat(MAX_TEXT_BYTES)));
        assert_eq!(kept, expected);
    }

    #[test]
    fn capped_text_trims_blank_lines_but_keeps_indentation() {
        let mut text = CappedText::default();
        text.push_raw(b"\r\n\n    main_test.go:6: Error\r\n  more\r\n  ")
            .unwrap();
        assert_eq!(
            text.take().as_deref(),
            Some("    main_test.go:6: Error\n  more")
        );
        text.push_raw(b"\n   \n").unwrap();
        assert_eq!(text.take(), None);
        text.push_raw(b"a\rb").unwrap();
        assert_eq!(text.take().as_deref(), Some("a\nb"));
    }

    #[test]
    fn forbidden_bytes_are_found_at_every_place_in_a_word() {
        for length in 0..40 {
            let clean: Vec<u8> = (0..length).map(|i| b"a\t\n\r b"[i % 6]).collect();
            assert_eq!(first_forbidden(&clean), None, "{clean:?}");
            for at in 0..length {
                for bad in [0x01, 0x08, 0x0B, 0x0C, 0x1B, 0x1F] {
                    let mut bytes = clean.clone();
                    bytes[at] = bad;
                    assert_eq!(first_forbidden(&bytes), Some(at), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn a_reused_capped_text_gives_each_text_its_own_and_keeps_nothing_over() {
        let mut text = CappedText::default();
        text.push_str("first, and longer than the second");
        text.push_char('<');
        assert_eq!(
            text.take().as_deref(),
            Some("first, and longer than the second<")
        );
        text.push_char('é');
        text.push_char('>');
        assert_eq!(text.take().as_deref(), Some("é>"));
        text.push_str(&"x".repeat(MAX_TEXT_BYTES));
        text.push_char('<');
        text.push_char('é');
        let kept = text.take().unwrap();
        assert_eq!(
            kept,
            crate::results::model::cap_text(format!("{}<é", "x".repeat(MAX_TEXT_BYTES)))
        );
        assert_eq!(text.take(), None);
    }

    #[test]
    fn seconds_in_every_spelling() {
        assert_eq!(parse_seconds("0.004"), Seconds::Known(0.004));
        assert_eq!(parse_seconds(" 2,503.1 "), Seconds::Known(2503.1));
        assert_eq!(parse_seconds("1,234.5"), Seconds::Known(1234.5));
        assert_eq!(parse_seconds("1,234,567"), Seconds::Unusable);
        assert_eq!(parse_seconds("12,345"), Seconds::Known(12.345));
        assert_eq!(parse_seconds("0,5"), Seconds::Known(0.5));
        assert_eq!(parse_seconds("1.4e-05"), Seconds::Known(1.4e-05));
        assert_eq!(
            parse_seconds("4.50611114501953e-05"),
            Seconds::Known(4.506_111_145_019_53e-5)
        );
        assert_eq!(parse_seconds("3.5s"), Seconds::Known(3.5));
        assert_eq!(parse_seconds("10"), Seconds::Known(10.0));
        assert_eq!(parse_seconds(""), Seconds::Missing);
        assert_eq!(parse_seconds("  "), Seconds::Missing);
        assert_eq!(parse_seconds("-345345"), Seconds::Unusable);
        assert_eq!(parse_seconds("-4416.244657678726"), Seconds::Unusable);
        assert_eq!(parse_seconds("<<computed>>"), Seconds::Unusable);
        assert_eq!(parse_seconds("NaN"), Seconds::Unusable);
        assert_eq!(parse_seconds("inf"), Seconds::Unusable);
        assert_eq!(parse_seconds("1e400"), Seconds::Unusable);
        assert_eq!(parse_seconds("999638317"), Seconds::Unusable);
        assert_eq!(parse_seconds("1.2.3"), Seconds::Unusable);
        assert_eq!(parse_seconds("."), Seconds::Unusable);
        assert_eq!(parse_seconds("0.1"), Seconds::Known(0.1));
        assert_eq!(parse_seconds("123456789012345.6"), Seconds::Unusable);
    }

    #[test]
    fn the_decimal_fast_path_rounds_as_the_float_parser_does() {
        for text in [
            "0.1",
            "0.004",
            "157.980",
            "2.0000",
            "0.0000001",
            "999999.999999999",
            "3",
        ] {
            assert_eq!(plain_decimal(text.as_bytes()), text.parse().ok(), "{text}");
        }
        assert_eq!(
            plain_decimal(b"1234567890.1234567"),
            None,
            "too many digits"
        );
    }
}
