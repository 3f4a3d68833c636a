use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The prefix every id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// Wraps an id read back from storage or from a caller.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// A stable id derived from the given parts: the same parts always give the same
            /// id, so re-reading a source never duplicates what is stored.
            pub fn derive(a: &str, b: &str, c: &str) -> Self {
                let mut h = Sha256::new();
                for part in [a, b, c] {
                    h.update((part.len() as u64).to_le_bytes());
                    h.update(part.as_bytes());
                }
                let digest = h.finalize();
                Self(format!("{}{}", $prefix, hex::encode(&digest[..12])))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// The id of a record in the short-term log: one request with its replies and tool steps.
    RecordId,
    "r_"
);
id_type!(
    /// The id of a typed memory item in the long-term log.
    ItemId,
    "i_"
);
id_type!(
    /// The id of a titled Markdown note.
    NoteId,
    "n_"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_are_stable_and_separate_their_parts() {
        let a = RecordId::derive("codex", "s1", "m1");
        assert_eq!(a, RecordId::derive("codex", "s1", "m1"));
        assert!(a.as_str().starts_with("r_"));
        assert_eq!(a.as_str().len(), 2 + 24);
        // Moving a character from one part to the next must not collide.
        assert_ne!(
            RecordId::derive("ab", "c", ""),
            RecordId::derive("a", "bc", "")
        );
        assert_ne!(ItemId::derive("x", "y", "z").as_str(), a.as_str());
    }
}
