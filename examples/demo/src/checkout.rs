//! Checkout: a connection, then the order.

/// Places an order; returns the milliseconds it waited for a connection.
pub fn place_order(items: u32) -> u64 {
    assert!(items > 0, "an order has items");
    crate::pool::connect("checkout", 250)
}

#[cfg(test)]
mod tests {
    #[test]
    fn completes_within_deadline() {
        assert!(super::place_order(3) < 250);
    }
}
