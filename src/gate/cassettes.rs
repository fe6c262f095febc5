//! Cassettes: one `cassette.v1` JSON file per test, pinning what the test may not get from
//! the world (the clock, the random seed, the files it reads, the HTTP it exchanges). Every
//! `.json` file under the cassettes folder is validated (errors carry the file, line and
//! column), hashed into the cassette lock, and compared between the base and the change: a
//! cassette deleted, or a pin it had taken away, is a loss the lane refuses without a
//! human's approval. docs/gate.md describes the schema.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::locks::{
    self, Hashes, LockError, Sha256Hex, check_key, json_error_position, render_json, sha256_hex,
    strip_position,
};
use crate::git::{GitError, Repository};

/// The `schema` of a cassette.
pub const CASSETTE_SCHEMA: &str = "cassette.v1";
/// The `schema` of a cassette lock.
pub const CASSETTE_LOCK_SCHEMA: &str = "cassettes-lock.v1";

/// Something a cassette fixes for its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pin {
    /// The time the test sees.
    Clock,
    /// The files the test reads, by sha256.
    Fs,
    /// The HTTP exchanges the test makes (an empty list pins "none").
    Http,
    /// The random seed.
    RngSeed,
}

impl Pin {
    /// The cassette key: `clock`, `fs`, `http`, `rng_seed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Pin::Clock => "clock",
            Pin::Fs => "fs",
            Pin::Http => "http",
            Pin::RngSeed => "rng_seed",
        }
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A valid `cassette.v1`. Each pin is `None` when the cassette leaves it free (`null`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cassette {
    /// The test it belongs to.
    pub test: String,
    /// The instant the test's clock reads.
    pub clock: Option<Timestamp>,
    /// The seed of the test's random numbers.
    pub rng_seed: Option<u64>,
    /// The files the test reads: sha256 by repository-relative path.
    pub fs: Option<BTreeMap<String, String>>,
    /// The HTTP exchanges, in order.
    pub http: Option<Vec<Interaction>>,
}

impl Cassette {
    /// The pins the cassette holds, in key order.
    pub fn pins(&self) -> Vec<Pin> {
        let mut pins = Vec::new();
        if self.clock.is_some() {
            pins.push(Pin::Clock);
        }
        if self.fs.is_some() {
            pins.push(Pin::Fs);
        }
        if self.http.is_some() {
            pins.push(Pin::Http);
        }
        if self.rng_seed.is_some() {
            pins.push(Pin::RngSeed);
        }
        pins
    }

    /// Reads and validates one cassette.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Cassette, CassetteError> {
        let raw: RawCassette = serde_json::from_slice(bytes).map_err(|error| {
            let (line, column) = json_error_position(bytes, &error);
            CassetteError {
                path: path.to_owned(),
                line,
                column,
                message: strip_position(&error.to_string()),
            }
        })?;
        Ok(Cassette {
            test: raw.test.0,
            clock: raw.clock.map(|clock| clock.0),
            rng_seed: raw.rng_seed,
            fs: raw
                .fs
                .map(|files| files.into_iter().map(|(k, v)| (k.0, v.0)).collect()),
            http: raw.http,
        })
    }
}

/// One HTTP request and the response it got.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// What the test sent.
    pub request: Request,
    /// What it got back.
    pub response: Response,
}

/// A recorded request.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// `GET`, `POST`, …: uppercase letters.
    #[serde(deserialize_with = "method")]
    pub method: String,
    /// An absolute `http://` or `https://` URL.
    #[serde(deserialize_with = "url")]
    pub url: String,
    /// Headers that must match, when given.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body that must match, when given.
    #[serde(default)]
    pub body: Option<String>,
}

/// A recorded response.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    /// An HTTP status, 100 to 599.
    #[serde(deserialize_with = "status")]
    pub status: u16,
    /// Its headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Its body.
    #[serde(default)]
    pub body: Option<String>,
}

/// A cassette that is not a valid `cassette.v1`, located in the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct CassetteError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl CassetteError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        "fix the cassette or record it again; docs/gate.md describes cassette.v1 (schema, test, clock, rng_seed, fs, http; a pin left free is null)"
    }
}

/// The file as written. Every key is required; a pin left free is written `null`, so a
/// missing key is a mistake rather than a silent "not pinned".
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCassette {
    #[expect(dead_code, reason = "checked while deserializing")]
    schema: Schema,
    test: TestId,
    #[serde(deserialize_with = "nullable")]
    clock: Option<Clock>,
    #[serde(deserialize_with = "nullable")]
    rng_seed: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    fs: Option<BTreeMap<RepoPath, Sha256Hex>>,
    #[serde(deserialize_with = "nullable")]
    http: Option<Vec<Interaction>>,
}

fn nullable<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(deserializer)
}

struct Schema;

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == CASSETTE_SCHEMA {
            Ok(Schema)
        } else {
            Err(serde::de::Error::custom(format!(
                "`schema` is {text:?}: this candor reads {CASSETTE_SCHEMA:?}"
            )))
        }
    }
}

struct TestId(String);

impl<'de> Deserialize<'de> for TestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.trim().is_empty() || text.trim() != text {
            return Err(serde::de::Error::custom(format!(
                "`test` is {text:?}: give the test's id, as `candor tests` lists it, without spaces at its ends"
            )));
        }
        Ok(TestId(text))
    }
}

struct Clock(Timestamp);

impl<'de> Deserialize<'de> for Clock {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse::<Timestamp>().map(Clock).map_err(|_| {
            serde::de::Error::custom(format!(
                "`clock` is {text:?}: write an RFC 3339 instant with its offset, like \"2026-10-07T08:00:00Z\""
            ))
        })
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct RepoPath(String);

impl<'de> Deserialize<'de> for RepoPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        check_key(&text, Path::new("")).map_err(|_| {
            serde::de::Error::custom(format!(
                "`fs` names {text:?}: give paths relative to the repository root, with `/`"
            ))
        })?;
        Ok(RepoPath(text))
    }
}

fn method<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(serde::de::Error::custom(format!(
            "`method` is {text:?}: expected an HTTP method in capitals, like \"GET\""
        )));
    }
    Ok(text)
}

fn url<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    let host = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .and_then(|rest| rest.split(['/', '?', '#']).next())
        .filter(|host| !host.is_empty());
    if host.is_none() || text.chars().any(char::is_whitespace) {
        return Err(serde::de::Error::custom(format!(
            "`url` is {text:?}: expected an absolute http:// or https:// URL"
        )));
    }
    Ok(text)
}

fn status<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u16, D::Error> {
    let number = u64::deserialize(deserializer)?;
    match u16::try_from(number) {
        Ok(status @ 100..=599) => Ok(status),
        _ => Err(serde::de::Error::custom(format!(
            "`status` is {number}: an HTTP status is between 100 and 599"
        ))),
    }
}

/// One cassette's entry in the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedCassette {
    /// The pins it holds, in key order.
    pub pins: Vec<Pin>,
    /// The file's sha256.
    pub sha256: String,
    /// Its test.
    pub test: String,
}

/// Cassettes read from a folder: the valid ones as a lock, and the errors of the others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Every valid cassette.
    pub lock: CassetteLock,
    /// Every invalid one's error, in path order.
    pub invalid: Vec<CassetteError>,
}

/// The cassette lock: every cassette's hash, test and pins, by repository-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CassetteLock {
    /// The cassettes.
    pub cassettes: BTreeMap<String, LockedCassette>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawCassetteLock {
    cassettes: BTreeMap<String, RawLocked>,
    schema: String,
}

/// Fields in alphabetical order, so the JSON's keys are sorted.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawLocked {
    pins: Vec<Pin>,
    sha256: Sha256Hex,
    test: String,
}

impl CassetteLock {
    /// Validates and hashes cassettes given as (repository-relative path, content). Every
    /// invalid cassette is reported, not just the first, and left out of the lock.
    pub fn from_cassettes<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Scan {
        let mut scan = Scan::default();
        for (path, bytes) in files {
            match Cassette::parse(bytes, Path::new(path)) {
                Ok(cassette) => {
                    scan.lock.cassettes.insert(
                        path.to_owned(),
                        LockedCassette {
                            pins: cassette.pins(),
                            sha256: sha256_hex(bytes),
                            test: cassette.test,
                        },
                    );
                }
                Err(error) => scan.invalid.push(error),
            }
        }
        scan
    }

    /// Every cassette file's hash, for [`locks::drift`].
    pub fn hashes(&self) -> Hashes {
        self.cassettes
            .iter()
            .map(|(path, cassette)| (path.clone(), cassette.sha256.clone()))
            .collect()
    }

    /// Reads a lock written by [`CassetteLock::render`].
    pub fn parse(bytes: &[u8], path: &Path) -> Result<CassetteLock, LockError> {
        let raw: RawCassetteLock =
            serde_json::from_slice(bytes).map_err(|error| LockError::json(path, bytes, &error))?;
        if raw.schema != CASSETTE_LOCK_SCHEMA {
            return Err(LockError::whole(
                path,
                format!(
                    "`schema` is {:?}: this candor reads {CASSETTE_LOCK_SCHEMA:?}",
                    raw.schema
                ),
            ));
        }
        let mut lock = CassetteLock::default();
        for (key, locked) in raw.cassettes {
            check_key(&key, path)?;
            let mut pins = locked.pins;
            pins.sort();
            pins.dedup();
            lock.cassettes.insert(
                key,
                LockedCassette {
                    pins,
                    sha256: locked.sha256.0,
                    test: locked.test,
                },
            );
        }
        Ok(lock)
    }

    /// The lock's text: JSON, keys sorted, two-space indents, a final newline.
    pub fn render(&self) -> String {
        let raw = RawCassetteLock {
            cassettes: self
                .cassettes
                .iter()
                .map(|(path, locked)| {
                    (
                        path.clone(),
                        RawLocked {
                            pins: locked.pins.clone(),
                            sha256: Sha256Hex(locked.sha256.clone()),
                            test: locked.test.clone(),
                        },
                    )
                })
                .collect(),
            schema: CASSETTE_LOCK_SCHEMA.to_owned(),
        };
        render_json(&raw)
    }

    /// Writes the lock to `path` atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::reliability::write_atomic(path, &self.render())
    }
}

/// What a change took away from a cassette.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "pin")]
pub enum LossKind {
    /// The cassette is gone.
    Deleted,
    /// The cassette no longer holds this pin.
    PinRemoved(Pin),
}

/// A cassette the change weakened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// The cassette, repository-relative.
    pub path: String,
    /// Its test (at the base).
    pub test: String,
    /// What was lost.
    #[serde(flatten)]
    pub kind: LossKind,
}

/// Cassettes of `base` that `head` deleted, and pins `head` took away, by path. A
/// cassette that moved is a deletion here (the lane cannot tell a move from a loss).
pub fn losses(base: &CassetteLock, head: &CassetteLock) -> Vec<Loss> {
    let mut found = Vec::new();
    for (path, before) in &base.cassettes {
        let loss = |kind| Loss {
            path: path.clone(),
            test: before.test.clone(),
            kind,
        };
        match head.cassettes.get(path) {
            None => found.push(loss(LossKind::Deleted)),
            Some(after) => {
                for pin in &before.pins {
                    if !after.pins.contains(pin) {
                        found.push(loss(LossKind::PinRemoved(*pin)));
                    }
                }
            }
        }
    }
    found
}

/// Whether the file at `path` is read as a cassette (a `.json` under the folder).
pub fn is_cassette_file(path: &str, folder: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("json"))
        && super::files::is_under(path, folder)
        && path != folder
}

/// Every cassette under `folder` at `revision`, read from git's objects, validated and
/// hashed.
pub fn at_revision(git: &dyn Repository, revision: &str, folder: &str) -> Result<Scan, GitError> {
    let files: Vec<_> = git
        .tree_files(revision, folder)?
        .into_iter()
        .filter(|file| is_cassette_file(&file.path, folder))
        .collect();
    let oids: Vec<String> = files.iter().map(|file| file.oid.clone()).collect();
    let mut contents: Vec<(String, Vec<u8>)> = Vec::with_capacity(files.len());
    git.read_blobs(&oids, &mut |index, bytes| {
        if let Some(file) = files.get(index) {
            contents.push((file.path.clone(), bytes.to_vec()));
        }
    })?;
    Ok(CassetteLock::from_cassettes(
        contents
            .iter()
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice())),
    ))
}

/// Every listed work-tree file that is a cassette under `folder`, validated and hashed.
pub fn from_work_tree(
    repo_root: &Path,
    folder: &str,
    paths: &[String],
) -> Result<Scan, locks::ReadError> {
    let mut contents = Vec::new();
    for path in paths.iter().filter(|path| is_cassette_file(path, folder)) {
        let full = repo_root.join(path);
        match std::fs::read(&full) {
            Ok(bytes) => contents.push((path.clone(), bytes)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(locks::ReadError { path: full, source }),
        }
    }
    Ok(CassetteLock::from_cassettes(
        contents
            .iter()
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
  "schema": "cassette.v1",
  "test": "tests/test_api.py::test_fetch_user",
  "clock": "2026-10-07T08:00:00Z",
  "rng_seed": 118204,
  "fs": {"tests/fixtures/users.json": "9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c"},
  "http": [
    {
      "request": {"method": "GET", "url": "https://api.example.invalid/users/1"},
      "response": {"status": 200, "headers": {"content-type": "application/json"}, "body": "{\"id\": 1}"}
    }
  ]
}
"#;

    fn parse(text: &str) -> Result<Cassette, CassetteError> {
        Cassette::parse(text.as_bytes(), Path::new("tests/cassettes/fetch.json"))
    }

    #[test]
    fn a_good_cassette_holds_every_pin() {
        let cassette = parse(GOOD).unwrap();
        assert_eq!(cassette.test, "tests/test_api.py::test_fetch_user");
        assert_eq!(cassette.rng_seed, Some(118_204));
        assert_eq!(
            cassette.pins(),
            [Pin::Clock, Pin::Fs, Pin::Http, Pin::RngSeed]
        );
        assert_eq!(cassette.http.as_ref().unwrap()[0].response.status, 200);
        let free = GOOD
            .replace("\"2026-10-07T08:00:00Z\"", "null")
            .replace("118204", "null");
        assert_eq!(parse(&free).unwrap().pins(), [Pin::Fs, Pin::Http]);
    }

    #[test]
    fn errors_name_the_line_and_what_to_write() {
        let cases = [
            (
                "\"cassette.v1\"",
                "\"cassette.v2\"",
                2,
                "this candor reads \"cassette.v1\"",
            ),
            (
                "\"2026-10-07T08:00:00Z\"",
                "\"2026-10-07 08:00\"",
                4,
                "RFC 3339",
            ),
            ("118204", "-1", 5, "invalid value"),
            ("\"9e1c9e1c", "\"XX9e1c9e1c", 6, "not a sha256"),
            (
                "\"tests/fixtures/users.json\"",
                "\"../users.json\"",
                6,
                "relative to the repository root",
            ),
            ("\"GET\"", "\"get\"", 9, "HTTP method"),
            (
                "\"https://api.example.invalid/users/1\"",
                "\"/users/1\"",
                9,
                "absolute",
            ),
            (
                "\"status\": 200",
                "\"status\": 42",
                10,
                "between 100 and 599",
            ),
            (
                "\"rng_seed\": 118204,\n",
                "",
                12,
                "missing field `rng_seed`",
            ),
            ("\"rng_seed\"", "\"seed\"", 5, "unknown field `seed`"),
            (
                "\"test\": \"tests/test_api.py::test_fetch_user\"",
                "\"test\": \" \"",
                3,
                "`test` is",
            ),
        ];
        for (from, to, line, message) in cases {
            assert!(GOOD.contains(from), "{from}");
            let error = parse(&GOOD.replacen(from, to, 1)).unwrap_err();
            assert_eq!(error.line, line, "{from} -> {to}: {error}");
            assert!(error.message.contains(message), "{from} -> {to}: {error}");
            assert!(!error.message.contains(" at line "), "{error}");
        }
        let error = parse("{").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("tests/cassettes/fetch.json:1:"),
            "{error}"
        );
    }

    #[test]
    fn losses_are_deleted_cassettes_and_removed_pins() {
        let free_clock = GOOD.replace("\"2026-10-07T08:00:00Z\"", "null");
        let base = CassetteLock::from_cassettes([
            ("c/a.json", GOOD.as_bytes()),
            ("c/b.json", GOOD.as_bytes()),
        ])
        .lock;
        let head = CassetteLock::from_cassettes([("c/a.json", free_clock.as_bytes())]).lock;
        let found: Vec<_> = losses(&base, &head)
            .into_iter()
            .map(|loss| (loss.path, loss.kind))
            .collect();
        assert_eq!(
            found,
            [
                ("c/a.json".to_owned(), LossKind::PinRemoved(Pin::Clock)),
                ("c/b.json".to_owned(), LossKind::Deleted),
            ]
        );
        assert!(losses(&head, &base).is_empty(), "adding pins loses nothing");
    }

    #[test]
    fn the_lock_round_trips_and_reports_every_bad_cassette() {
        let lock = CassetteLock::from_cassettes([("c/a.json", GOOD.as_bytes())]).lock;
        let text = lock.render();
        assert!(text.contains("\"pins\": [\n        \"clock\",\n        \"fs\",\n        \"http\",\n        \"rng_seed\"\n      ]"), "{text}");
        let back = CassetteLock::parse(text.as_bytes(), Path::new("l.json")).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.render(), text);
        let scan = CassetteLock::from_cassettes([
            ("c/a.json", &b"{}"[..]),
            ("c/b.json", GOOD.as_bytes()),
            ("c/c.json", &b"[]"[..]),
        ]);
        assert_eq!(scan.invalid.len(), 2);
        assert_eq!(scan.invalid[1].path, Path::new("c/c.json"));
        assert_eq!(scan.lock.cassettes.len(), 1);
        assert!(is_cassette_file("c/x.json", "c") && !is_cassette_file("c/x.yaml", "c"));
        assert!(!is_cassette_file("cx/x.json", "c"));
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        /// Damage to a good cassette is an error located inside the file, or still a
        /// cassette; never a panic.
        #[test]
        fn damaged_cassettes_are_located(
            cut in 0usize..700,
            insert in r#"(\PC|[\n{}\[\]",:0-9]|null){0,8}"#,
        ) {
            let mut at = cut.min(GOOD.len());
            while !GOOD.is_char_boundary(at) {
                at -= 1;
            }
            let text = format!("{}{insert}{}", &GOOD[..at], &GOOD[at..]);
            if let Err(error) = parse(&text) {
                proptest::prop_assert!(error.line >= 1 && error.line <= text.lines().count() + 1);
                proptest::prop_assert!(error.column >= 1);
            }
        }
    }
}
