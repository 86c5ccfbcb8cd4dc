//! Units that travel through reports: a byte count is a [`Bytes`], not a bare `u64`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A number of bytes. Serialized as a plain JSON integer.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// `self` as a share of `whole` (0.0 when `whole` is zero).
    pub fn ratio_of(self, whole: Bytes) -> f64 {
        if whole.0 == 0 {
            0.0
        } else {
            self.0 as f64 / whole.0 as f64
        }
    }
}

impl fmt::Display for Bytes {
    /// Binary units with one decimal: `512 B`, `3.4 KiB`, `97.0 MiB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit < UNITS.len() - 1 {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_display_in_binary_units() {
        assert_eq!(Bytes(0).to_string(), "0 B");
        assert_eq!(Bytes(1023).to_string(), "1023 B");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(100 * 1024 * 1024).to_string(), "100.0 MiB");
    }

    #[test]
    fn ratio_of_zero_whole_is_zero() {
        assert_eq!(Bytes(5).ratio_of(Bytes(0)), 0.0);
        assert_eq!(Bytes(5).ratio_of(Bytes(10)), 0.5);
    }
}
