//! A plugin registry shared by the whole process: a test that registers a plugin changes
//! what the next test sees, so one test passes or fails by the order the tests run in.

use std::sync::Mutex;

static REGISTRY: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// Adds a plugin.
pub fn register(name: &'static str) {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).push(name);
}

/// Every plugin registered so far.
pub fn registered() -> Vec<&'static str> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::{register, registered};

    #[test]
    fn registers_the_defaults() {
        register("csv");
        register("json");
        assert!(registered().contains(&"csv"));
    }

    #[test]
    fn starts_empty() {
        assert_eq!(registered(), Vec::<&str>::new(), "plugins left over from another test");
    }
}
