//! FNV-1a, 64 bits: a short hash that is stable across builds and platforms, for change
//! detectors and content fingerprints (never for security). Each caller decides the byte
//! stream (its separators between parts), so a stored fingerprint keeps its value.

/// An FNV-1a hasher: [`Fnv1a::write`] bytes in, [`Fnv1a::finish`] the hash out.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    /// Adds bytes.
    pub fn write(&mut self, bytes: &[u8]) -> &mut Self {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }

    /// The hash of everything written.
    pub fn finish(&self) -> u64 {
        self.0
    }

    /// The hash as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_of_fnv1a_64() {
        assert_eq!(Fnv1a::default().finish(), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a::default().write(b"a").finish(), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a::default().write(b"foobar").hex(), "85944171f73967e8");
        // Writing in parts is writing the whole.
        assert_eq!(
            Fnv1a::default().write(b"foo").write(b"bar").finish(),
            Fnv1a::default().write(b"foobar").finish()
        );
    }
}
