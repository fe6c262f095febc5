//! Receipts, stored through the pool.

/// The receipt's total line.
pub fn total_line(cents: u64) -> String {
    crate::pool::connect("receipts", 500);
    format!("TOTAL {}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    #[test]
    fn prints_the_total() {
        assert_eq!(super::total_line(1999), "TOTAL 19.99");
    }
}
