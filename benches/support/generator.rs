//! A seeded generator of large pytest-style JUnit files, written straight to disk so that a
//! 1 GiB file never sits in memory.
//!
//! Every test case is a pure function of (seed, index): a dry pass over the same function
//! counts outcomes and bytes for the suite headers, then the real pass writes the file.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// How large the file should be.
#[derive(Debug, Clone, Copy)]
pub enum Size {
    /// Exactly this many test cases.
    Cases(u64),
    /// Test cases until the file is at least this many bytes.
    Bytes(u64),
}

/// What was written.
#[derive(Debug, Clone, Copy, Default)]
pub struct Generated {
    /// Test cases in the file (each has a unique id).
    pub cases: u64,
    /// Cases with a `<failure>`.
    pub failures: u64,
    /// Cases with an `<error>`.
    pub errors: u64,
    /// Cases with a `<skipped>`.
    pub skipped: u64,
    /// Cases with captured `<system-out>`.
    pub with_output: u64,
    /// Size of the file.
    pub bytes: u64,
}

/// Writes a pytest-style JUnit file of the requested size to `path`.
pub fn generate(path: &Path, seed: u64, size: Size) -> io::Result<Generated> {
    let layout = Layout::plan(seed, size);
    let file = File::create(path)?;
    let mut out = CountingWriter {
        inner: BufWriter::with_capacity(1 << 20, file),
        bytes: 0,
    };
    let mut totals = Generated::default();
    let mut case = String::with_capacity(16 * 1024);

    out.write_all(
        b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites name=\"pytest tests\">\n",
    )?;
    for (index, suite) in layout.suites.iter().enumerate() {
        if index == 1 {
            let nested = layout.suites[1].tally.plus(&layout.suites[2].tally);
            write_suite_open(&mut out, "integration", &nested, 1)?;
        }
        let depth = if index == 0 { 1 } else { 2 };
        write_suite_open(&mut out, suite.name, &suite.tally, depth)?;
        if index == 0 {
            out.write_all(
                b"    <properties>\n      <property name=\"python\" value=\"3.12.4\"/>\n      <property name=\"ci_job\" value=\"tests (shard 1/1)\"/>\n    </properties>\n",
            )?;
        }
        for case_index in suite.first..suite.end {
            case.clear();
            let shape = write_case(&mut case, seed, case_index, depth + 1);
            totals.count(shape);
            out.write_all(case.as_bytes())?;
        }
        out.write_all(indent(depth).as_bytes())?;
        out.write_all(b"</testsuite>\n")?;
        if index == 2 {
            out.write_all(b"  </testsuite>\n")?;
        }
    }
    out.write_all(b"</testsuites>\n")?;
    out.inner.flush()?;
    totals.bytes = out.bytes;
    Ok(totals)
}

/// Parses `200000`, `64KiB`, `512MiB`, `1GiB` (binary units; `KB`/`MB`/`GB` are decimal).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    let scale: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        other => return Err(format!("unknown size unit `{other}` (use KiB, MiB or GiB)")),
    };
    Ok((number * scale) as u64)
}

impl Generated {
    fn count(&mut self, shape: CaseShape) {
        self.cases += 1;
        match shape.kind {
            Kind::Pass => {}
            Kind::Failure => self.failures += 1,
            Kind::Error => self.errors += 1,
            Kind::Skipped => self.skipped += 1,
        }
        if shape.output {
            self.with_output += 1;
        }
    }
}

/// The suites and the case range each holds: most cases in a flat `pytest` suite, and a
/// tenth each in two suites nested under `integration`, as tools that merge shard
/// reports write them.
struct Layout {
    suites: [SuitePlan; 3],
}

struct SuitePlan {
    name: &'static str,
    first: u64,
    end: u64,
    tally: Tally,
}

#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
    micros: u64,
}

impl Tally {
    fn plus(&self, other: &Tally) -> Tally {
        Tally {
            tests: self.tests + other.tests,
            failures: self.failures + other.failures,
            errors: self.errors + other.errors,
            skipped: self.skipped + other.skipped,
            micros: self.micros + other.micros,
        }
    }
}

impl Layout {
    /// Decides the number of cases (for a byte target, by formatting them once without
    /// keeping them), then tallies each suite's range for its header.
    fn plan(seed: u64, size: Size) -> Layout {
        let total = match size {
            Size::Cases(cases) => cases,
            Size::Bytes(target) => {
                let mut scratch = String::with_capacity(16 * 1024);
                let mut bytes = 0u64;
                let mut index = 0u64;
                while bytes < target {
                    scratch.clear();
                    write_case(&mut scratch, seed, index, 2);
                    bytes += scratch.len() as u64;
                    index += 1;
                }
                index
            }
        };
        let cut_a = total * 8 / 10;
        let cut_b = total * 9 / 10;
        let tally = |first: u64, end: u64| {
            let mut tally = Tally::default();
            for index in first..end {
                let shape = CaseShape::of(seed, index).0;
                tally.tests += 1;
                tally.micros += shape.micros;
                match shape.kind {
                    Kind::Pass => {}
                    Kind::Failure => tally.failures += 1,
                    Kind::Error => tally.errors += 1,
                    Kind::Skipped => tally.skipped += 1,
                }
            }
            tally
        };
        let suite = |name, first, end| SuitePlan {
            name,
            first,
            end,
            tally: tally(first, end),
        };
        Layout {
            suites: [
                suite("pytest", 0, cut_a),
                suite("integration.db", cut_a, cut_b),
                suite("integration.http", cut_b, total),
            ],
        }
    }
}

fn write_suite_open(
    out: &mut impl Write,
    name: &str,
    tally: &Tally,
    depth: usize,
) -> io::Result<()> {
    writeln!(
        out,
        "{}<testsuite name=\"{name}\" errors=\"{}\" failures=\"{}\" skipped=\"{}\" tests=\"{}\" time=\"{}.{:06}\" timestamp=\"2026-05-14T10:21:55.123456+00:00\" hostname=\"ci-runner-7\">",
        indent(depth),
        tally.errors,
        tally.failures,
        tally.skipped,
        tally.tests,
        tally.micros / 1_000_000,
        tally.micros % 1_000_000,
    )
}

fn indent(depth: usize) -> &'static str {
    const SPACES: &str = "                ";
    &SPACES[..(depth * 2).min(SPACES.len())]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pass,
    Failure,
    Error,
    Skipped,
}

#[derive(Debug, Clone, Copy)]
struct CaseShape {
    kind: Kind,
    output: bool,
    micros: u64,
}

impl CaseShape {
    /// The outcome, output and duration of case `index`, drawn first so that suite
    /// tallies need not format the case; the generator continues with the same stream.
    fn of(seed: u64, index: u64) -> (CaseShape, SplitMix64) {
        let mut rng = SplitMix64::new(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let kind = match rng.below(1000) {
            0..40 => Kind::Failure,
            40..50 => Kind::Error,
            50..80 => Kind::Skipped,
            _ => Kind::Pass,
        };
        let red = matches!(kind, Kind::Failure | Kind::Error);
        let output = if red {
            rng.below(2) == 0
        } else {
            rng.below(20) == 0
        };
        let micros = duration_micros(&mut rng);
        (
            CaseShape {
                kind,
                output,
                micros,
            },
            rng,
        )
    }
}

const PACKAGES: [&str; 12] = [
    "payments",
    "billing",
    "accounts",
    "search",
    "inventory",
    "shipping",
    "auth",
    "reports",
    "notifications",
    "catalog",
    "checkout",
    "admin",
];
const MODULES: [&str; 10] = [
    "webhook",
    "models",
    "views",
    "serializers",
    "tasks",
    "api",
    "pool",
    "cache",
    "export",
    "permissions",
];
const CLASSES: [&str; 8] = [
    "TestCreate",
    "TestUpdate",
    "TestDelete",
    "TestList",
    "TestRetry",
    "TestLimits",
    "TestMigration",
    "TestConcurrency",
];
const VERBS: [&str; 12] = [
    "creates",
    "rejects",
    "retries",
    "rounds",
    "expires",
    "paginates",
    "serializes",
    "locks",
    "refunds",
    "imports",
    "notifies",
    "validates",
];
const NOUNS: [&str; 9] = [
    "invoice",
    "customer",
    "order",
    "token",
    "webhook",
    "session",
    "discount",
    "ledger_row",
    "shipment",
];
const PARAMS: [&str; 8] = [
    "postgres",
    "sqlite",
    "utf8-empty",
    "eur-2",
    "usd-0",
    "True",
    "None",
    "large-payload",
];

/// Test cases per module file: 4 classes of 12 tests.
const CASES_PER_FILE: u64 = 48;

/// Appends one `<testcase>` for `index` and says what it was. The id
/// (`tests/<pkg>/test_<module>.py::<Class>::<test>[param]`) is unique per index.
fn write_case(out: &mut String, seed: u64, index: u64, depth: usize) -> CaseShape {
    let (shape, mut rng) = CaseShape::of(seed, index);
    let CaseShape {
        kind,
        output,
        micros,
    } = shape;
    let red = matches!(kind, Kind::Failure | Kind::Error);
    let group = index / CASES_PER_FILE;
    let class_slot = (index % CASES_PER_FILE) / 12;
    let test_slot = index % 12;
    let package = PACKAGES[(group % PACKAGES.len() as u64) as usize];
    let module_round = group / PACKAGES.len() as u64;
    let module_base = MODULES[(module_round % MODULES.len() as u64) as usize];
    let module = match module_round / MODULES.len() as u64 {
        0 => format!("test_{module_base}"),
        round => format!("test_{module_base}_{round}"),
    };
    let class = CLASSES[((class_slot + group) % CLASSES.len() as u64) as usize];
    let verb = VERBS[test_slot as usize];
    let noun = NOUNS[((group + class_slot) % NOUNS.len() as u64) as usize];
    let file = format!("tests/{package}/{module}.py");
    let line = 12 + test_slot * 14 + rng.below(9);

    let mut name = format!("test_{verb}_{noun}");
    if rng.below(3) == 0 {
        let param = PARAMS[rng.below(PARAMS.len() as u64) as usize];
        let _ = write!(name, "[{param}-{}]", rng.below(64));
    }

    let pad = indent(depth);
    let classname = format!("tests.{package}.{module}.{class}");
    let _ = write!(out, "{pad}<testcase classname=\"{classname}\" name=\"");
    escape_into(out, &name);
    let _ = write!(
        out,
        "\" file=\"{file}\" line=\"{line}\" time=\"{}.{:03}\"",
        micros / 1_000_000,
        micros % 1_000_000 / 1000
    );
    if kind == Kind::Pass && !output {
        out.push_str("/>\n");
        return shape;
    }
    out.push_str(">\n");
    let inner = indent(depth + 1);
    match kind {
        Kind::Pass => {}
        Kind::Skipped => {
            let reason = SKIP_REASONS[rng.below(SKIP_REASONS.len() as u64) as usize];
            let _ = writeln!(
                out,
                "{inner}<skipped type=\"pytest.skip\" message=\"{reason}\">{file}:{line}: {reason}</skipped>"
            );
        }
        Kind::Failure | Kind::Error => {
            let traceback =
                Traceback::new(&mut rng, &classname, &file, line, (verb, noun, package));
            let element = if kind == Kind::Failure {
                "failure"
            } else {
                "error"
            };
            let _ = write!(out, "{inner}<{element} message=\"");
            if kind == Kind::Error {
                out.push_str("failed on setup with &quot;");
            }
            escape_into(out, &traceback.headline());
            if kind == Kind::Error {
                out.push_str("&quot;");
            }
            out.push_str("\">");
            traceback.write_long(out, &mut rng);
            let _ = writeln!(out, "</{element}>");
        }
    }
    if output {
        let _ = write!(out, "{inner}<system-out>");
        write_captured_log(out, &mut rng, package, noun);
        out.push_str("</system-out>\n");
        if red {
            let _ = write!(out, "{inner}<system-err>");
            let _ = writeln!(
                out,
                "WARNING: retrying connection to 127.0.0.1:{} (attempt 2 of 3)",
                20_000 + rng.below(40_000)
            );
            out.push_str("</system-err>\n");
        }
    }
    let _ = writeln!(out, "{pad}</testcase>");
    shape
}

const SKIP_REASONS: [&str; 5] = [
    "needs redis",
    "legacy codes retired in 2025",
    "only runs on linux",
    "flaky on shared runners, see PLAT-1182",
    "requires the s3 emulator",
];

/// A pytest `--tb=long` traceback: a test frame, library frames, `E   ` lines and the
/// `path.py:N: ExceptionName` last line.
struct Traceback {
    exception: &'static str,
    short_name: &'static str,
    message: String,
    frames: Vec<TraceFrame>,
}

struct TraceFrame {
    file: String,
    line: u64,
    function: String,
    arguments: String,
    statement: String,
}

impl Traceback {
    fn new(
        rng: &mut SplitMix64,
        classname: &str,
        test_file: &str,
        test_line: u64,
        (verb, noun, package): (&str, &str, &str),
    ) -> Traceback {
        let port = 20_000 + rng.below(40_000);
        let (exception, short_name, message) = match rng.below(6) {
            0 => (
                "AssertionError",
                "AssertionError",
                format!("assert {} == {}", rng.below(600), rng.below(600)),
            ),
            1 => (
                "TimeoutError",
                "TimeoutError",
                format!(
                    "Timed out after {}.{}s waiting for webhook stub on port {port}",
                    1 + rng.below(9),
                    rng.below(10)
                ),
            ),
            2 => ("KeyError", "KeyError", format!("'{noun}_id'")),
            3 => (
                "requests.exceptions.ConnectionError",
                "ConnectionError",
                format!(
                    "HTTPConnectionPool(host='localhost', port={port}): Max retries exceeded with url: /api/v1/{noun}s/{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
                    rng.next() as u32,
                    rng.below(0x10000),
                    rng.below(0x1000),
                    rng.below(0x1000),
                    rng.next() & 0xFFFF_FFFF_FFFF
                ),
            ),
            4 => (
                "sqlalchemy.exc.OperationalError",
                "OperationalError",
                "(psycopg2.OperationalError) could not connect to server: Connection refused"
                    .to_string(),
            ),
            _ => (
                "ValueError",
                "ValueError",
                format!(
                    "invalid literal for int() with base 10: '{noun}-{}'",
                    rng.below(1000)
                ),
            ),
        };
        let mut frames = vec![TraceFrame {
            file: test_file.to_string(),
            line: test_line + 2 + rng.below(6),
            function: format!("test_{verb}_{noun}"),
            arguments: format!(
                "self = <{classname} object at 0x7f{:010x}>\nclient = <FlaskClient <Flask 'app'>>",
                rng.next() & 0xFF_FFFF_FFFF
            ),
            statement: format!("result = client.post(\"/api/v1/{noun}s\", json=payload)"),
        }];
        let depth = 1 + rng.below(4);
        for level in 0..depth {
            let (file, function, statement) = match (level + rng.below(3)) % 4 {
                0 => (
                    format!("src/{package}/service.py"),
                    format!("{verb}_{noun}"),
                    format!("return self.repository.save({noun})"),
                ),
                1 => (
                    format!("src/{package}/repository.py"),
                    "save".to_string(),
                    "self.session.flush()".to_string(),
                ),
                2 => (
                    "/usr/lib/python3.12/site-packages/requests/adapters.py".to_string(),
                    "send".to_string(),
                    "raise ConnectionError(e, request=request)".to_string(),
                ),
                _ => (
                    "src/app/client.py".to_string(),
                    "_send".to_string(),
                    "response = self.http.request(method, url, timeout=self.timeout)".to_string(),
                ),
            };
            frames.push(TraceFrame {
                file,
                line: 20 + rng.below(500),
                function,
                arguments: format!(
                    "self = <app.{package}.Service object at 0x7f{:010x}>, {noun} = <{noun} id={}>",
                    rng.next() & 0xFF_FFFF_FFFF,
                    rng.below(100_000)
                ),
                statement,
            });
        }
        Traceback {
            exception,
            short_name,
            message,
            frames,
        }
    }

    fn headline(&self) -> String {
        format!("{}: {}", self.exception, self.message)
    }

    /// Writes the traceback escaped for XML text.
    fn write_long(&self, out: &mut String, rng: &mut SplitMix64) {
        let mut text = String::with_capacity(2048);
        let last = self.frames.len() - 1;
        for (position, frame) in self.frames.iter().enumerate() {
            if position > 0 {
                text.push_str("_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n\n");
            }
            let _ = writeln!(text, "{}\n", frame.arguments);
            let parameters = if position == 0 {
                "self, client"
            } else {
                "self, *args, **kwargs"
            };
            let _ = writeln!(text, "    def {}({parameters}):", frame.function);
            for _ in 0..rng.below(4) {
                let _ = writeln!(text, "        log.debug(\"step %s\", {})", rng.below(100));
            }
            let _ = writeln!(text, ">       {}", frame.statement);
            if position == last {
                let _ = writeln!(text, "E       {}: {}", self.exception, self.message);
                if self.exception == "AssertionError" {
                    text.push_str("E        +  where 503 = <Response [503]>.status_code\n");
                }
                let _ = write!(text, "\n{}:{}: {}", frame.file, frame.line, self.short_name);
            } else {
                let _ = writeln!(text, "\n{}:{}: ", frame.file, frame.line);
            }
        }
        escape_into(out, &text);
    }
}

fn write_captured_log(out: &mut String, rng: &mut SplitMix64, package: &str, noun: &str) {
    let mut text = String::with_capacity(512);
    for line in 0..=rng.below(6) {
        let _ = writeln!(
            text,
            "2026-05-14 10:22:{:02},{:03} INFO {package}.service: {noun} {} -> {} in {}ms & <ok>",
            line,
            rng.below(1000),
            rng.below(100_000),
            200 + rng.below(4) * 100,
            rng.below(900)
        );
    }
    escape_into(out, &text);
}

fn duration_micros(rng: &mut SplitMix64) -> u64 {
    // Most tests take milliseconds; a long tail takes seconds.
    let unit = rng.below(1_000_000) as f64 / 1_000_000.0;
    (200.0 + unit.powi(8) * 5_000_000.0) as u64
}

fn escape_into(out: &mut String, text: &str) {
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            other => out.push(other),
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): tiny, seedable, and good enough to vary names and sizes.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

struct CountingWriter<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
