//! The PostgreSQL server the store tests use: `CANDOR_TEST_PG` (a `postgres://` URL, as
//! `.ci/pg-cluster start` prints), one fresh schema per test. Without the variable the
//! PostgreSQL tests say once that they were skipped; under CI (`CI=true`) they fail
//! instead, so that a CI without a server cannot pass them silently.

#![allow(dead_code)]

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

use candor::history::PgStore;
use candor::history::pg::Target;

static SKIPPED: Once = Once::new();
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The test server's URL, or `None` (after one line saying so) when there is none.
pub fn server() -> Option<String> {
    match std::env::var("CANDOR_TEST_PG") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
            assert!(
                !ci,
                "CI=true but CANDOR_TEST_PG is not set: the PostgreSQL store tests must run in CI (.ci/run starts a server)"
            );
            SKIPPED.call_once(|| {
                eprintln!(
                    "PostgreSQL store tests skipped: set CANDOR_TEST_PG (e.g. the URL `.ci/pg-cluster start DIR` prints)"
                );
            });
            None
        }
    }
}

/// `url` with the session's `search_path` set to `schema`.
pub fn in_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}

/// A connection of the test's own, outside candor, to look at or prepare the database.
pub fn admin(url: &str) -> postgres::Client {
    let env = |name: &str| std::env::var(name).ok();
    let target = Target::parse(url, &env).expect("CANDOR_TEST_PG parses");
    target
        .client_config()
        .unwrap()
        .connect(postgres::NoTls)
        .expect("connect to CANDOR_TEST_PG")
}

/// Whether the server comes to report `application`'s session waiting on `event`
/// (`advisory`, `transactionid`, …): a wait the test's worker must reach, asked of the
/// server again and again rather than timed; false when `finished` says the worker ended
/// before it waited.
pub fn reaches_wait(
    url: &str,
    application: &str,
    event: &str,
    finished: impl Fn() -> bool,
) -> bool {
    let mut watcher = admin(url);
    loop {
        let waiting: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE application_name = $1 AND wait_event = $2",
                &[&application, &event],
            )
            .expect("pg_stat_activity answers")
            .get(0);
        if waiting == 1 {
            return true;
        }
        if finished() {
            return false;
        }
    }
}

/// A schema of its own for one test, dropped with everything in it at the end.
pub struct Schema {
    server: String,
    pub name: String,
    /// The URL that puts candor in this schema.
    pub url: String,
}

impl Schema {
    /// A fresh schema on `server`.
    pub fn new(server: &str) -> Schema {
        let name = format!(
            "candor_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        admin(server)
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .unwrap();
        Schema {
            server: server.to_owned(),
            url: in_schema(server, &name),
            name,
        }
    }

    /// A fresh schema on the test server, or `None` when there is no server.
    pub fn on_test_server() -> Option<Schema> {
        server().map(|url| Schema::new(&url))
    }

    /// Opens candor's store in it.
    pub fn open(&self) -> PgStore {
        let env = |name: &str| std::env::var(name).ok();
        PgStore::open(&Target::parse(&self.url, &env).unwrap())
            .expect("open the PostgreSQL history")
    }

    /// A connection with `search_path` set to the schema.
    pub fn client(&self) -> postgres::Client {
        admin(&self.url)
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(mut client) = std::panic::catch_unwind(|| admin(&self.server)) {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
        }
    }
}
