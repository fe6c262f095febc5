//! Pooled connections. A client's first connection opens the pool's sockets, which takes
//! longer than any deadline: that is the timing flake the fingerprints describe. Whether a
//! client's pool is warm is a file in the crate's folder, so the demo can make it cold.

use std::path::PathBuf;

fn marker(client: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(".pool-warm-{client}"))
}

/// How long a connection for `client` takes, in milliseconds.
fn connect_ms(client: &str) -> u64 {
    let warm = marker(client);
    if warm.exists() {
        3
    } else {
        let _ = std::fs::write(&warm, "");
        1250
    }
}

/// A connection for `client` within `deadline_ms`; panics when the pool is too slow.
pub fn connect(client: &str, deadline_ms: u64) -> u64 {
    let took = connect_ms(client);
    if took > deadline_ms {
        panic!("timed out after {deadline_ms}ms waiting for a pooled connection ({took}ms)");
    }
    took
}
