//! The evaluations' embedding cache: a vector kept for each text an evaluation embedded, so a
//! second run over the same corpus (another tuning, the other split, a rebuilt binary) reads
//! the vectors instead of computing them again. Embedding is nearly all of a cold
//! `cairn eval real` (about 3.5 KB of text a second on two cores).
//!
//! A vector depends only on its text and the model (the embedder cuts and pads each text on
//! its own, so its batch does not change it), so a cached vector is the one the model would
//! give. The cache is one append-only file per model id under the data folder
//! (`eval-embeddings/`): records of the text's SHA-256 and its vector. A file cut short by a
//! killed run loses only its last record; a file of another dimension is set aside.
//! Only evaluations use it: the service embeds what it captures itself.
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_core::ports::{BackendError, BackendErrorKind, Embedder};
use sha2::{Digest, Sha256};

/// The file's first bytes: its format.
const MAGIC: &[u8; 8] = b"CRNEMB01";

type Key = [u8; 32];

/// An embedder that keeps every vector it gives in a file and reads it back next time.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    path: PathBuf,
    state: Mutex<State>,
}

struct State {
    vectors: HashMap<Key, Vec<f32>>,
    file: Option<fs_err::File>,
    hits: u64,
    misses: u64,
}

fn key(text: &str) -> Key {
    Sha256::digest(text.as_bytes()).into()
}

/// The cache file of a model: its id with anything but letters, digits, `.`, `-` and `_`
/// replaced.
fn file_name(model_id: &str) -> String {
    let safe: String = model_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.bin")
}

/// Reads a cache file: its vectors of dimension `dim`, or `None` when it is not one.
fn read(path: &Path, dim: usize) -> std::io::Result<Option<HashMap<Key, Vec<f32>>>> {
    let mut bytes = Vec::new();
    fs_err::File::open(path)?.read_to_end(&mut bytes)?;
    let Some(rest) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return Ok(None);
    };
    let Some((d, rest)) = rest.split_first_chunk::<4>() else {
        return Ok(None);
    };
    if u32::from_le_bytes(*d) as usize != dim {
        return Ok(None);
    }
    let size = 32 + 4 * dim;
    let mut vectors = HashMap::with_capacity(rest.len() / size);
    // A record cut short at the end (a killed run) is left out.
    for record in rest.chunks_exact(size) {
        let (k, v) = record.split_at(32);
        let mut key = [0u8; 32];
        key.copy_from_slice(k);
        let vector = v
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        vectors.insert(key, vector);
    }
    Ok(Some(vectors))
}

impl CachedEmbedder {
    /// Wraps `inner` with the cache file for its model under `dir`. A cache that cannot be
    /// read or written is said on standard error and the embedder works without it.
    pub fn open(inner: Arc<dyn Embedder>, dir: &Path) -> Self {
        let path = dir.join(file_name(inner.model_id()));
        let dim = inner.dim();
        let mut vectors = HashMap::new();
        let mut fresh = true;
        if path.exists() {
            match read(&path, dim) {
                Ok(Some(v)) => {
                    vectors = v;
                    fresh = false;
                }
                Ok(None) => {
                    let aside = path.with_extension("bin.old");
                    eprintln!(
                        "note: {} is not an embedding cache of dimension {dim}; moved to {}",
                        path.display(),
                        aside.display()
                    );
                    if let Err(e) = fs_err::rename(&path, &aside) {
                        eprintln!("note: {e}");
                    }
                }
                Err(e) => eprintln!("note: the embedding cache is not used: {e}"),
            }
        }
        let file = Self::writer(&path, dim, fresh)
            .map_err(|e| eprintln!("note: embeddings will not be cached: {e}"))
            .ok();
        Self {
            inner,
            path,
            state: Mutex::new(State {
                vectors,
                file,
                hits: 0,
                misses: 0,
            }),
        }
    }

    fn writer(path: &Path, dim: usize, fresh: bool) -> std::io::Result<fs_err::File> {
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        let mut file = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        if fresh {
            file.set_len(0)?;
            file.write_all(MAGIC)?;
            file.write_all(&u32::try_from(dim).unwrap_or(u32::MAX).to_le_bytes())?;
        } else {
            // Records start after the header: a record cut short by a killed run is dropped
            // so the next one lands on its boundary.
            let size = (32 + 4 * dim) as u64;
            let len = file.metadata()?.len();
            let header = (MAGIC.len() + 4) as u64;
            let whole = header + (len.saturating_sub(header)) / size * size;
            if whole != len {
                file.set_len(whole)?;
            }
        }
        Ok(file)
    }

    /// The cache's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Texts found in the cache and texts embedded, so far.
    pub fn counts(&self) -> (u64, u64) {
        let s = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (s.hits, s.misses)
    }
}

impl Embedder for CachedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
        let keys: Vec<Key> = texts.iter().map(|t| key(t)).collect();
        let mut missing: Vec<usize> = Vec::new();
        {
            let mut s = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut seen = std::collections::HashSet::new();
            for (i, k) in keys.iter().enumerate() {
                if !s.vectors.contains_key(k) && seen.insert(*k) {
                    missing.push(i);
                }
            }
            s.hits += (texts.len() - missing.len()) as u64;
            s.misses += missing.len() as u64;
        }
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let vectors = self.inner.embed(&batch)?;
            if vectors.len() != batch.len() {
                return Err(BackendError::new(
                    BackendErrorKind::Other,
                    format!(
                        "the embedder gave {} vectors for {} texts",
                        vectors.len(),
                        batch.len()
                    ),
                ));
            }
            let mut s = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut bytes = Vec::with_capacity(missing.len() * (32 + 4 * self.dim()));
            for (&i, v) in missing.iter().zip(vectors) {
                bytes.extend_from_slice(&keys[i]);
                for x in &v {
                    bytes.extend_from_slice(&x.to_le_bytes());
                }
                s.vectors.insert(keys[i], v);
            }
            if let Some(f) = s.file.as_mut()
                && let Err(e) = f.write_all(&bytes)
            {
                eprintln!("note: embeddings are no longer cached: {e}");
                s.file = None;
            }
        }
        let s = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        keys.iter()
            .map(|k| {
                s.vectors.get(k).cloned().ok_or_else(|| {
                    BackendError::new(BackendErrorKind::Other, "a cached vector went missing")
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the texts it embeds; a text's vector is its length and its first byte.
    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting@1"
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| vec![t.len() as f32, f32::from(t.bytes().next().unwrap_or(0))])
                .collect())
        }
    }

    #[test]
    fn a_second_run_reads_the_vectors_and_a_torn_record_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let first = CachedEmbedder::open(inner.clone(), dir.path());
        let v = first.embed(&["alpha", "be", "alpha"]).unwrap();
        assert_eq!(v, vec![vec![5.0, 97.0], vec![2.0, 98.0], vec![5.0, 97.0]]);
        assert_eq!(
            inner.0.load(Ordering::SeqCst),
            2,
            "a repeated text is embedded once"
        );
        let path = first.path().to_path_buf();
        drop(first);

        // A killed run leaves half a record behind.
        let mut f = fs_err::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[7u8; 20]).unwrap();
        drop(f);

        let second = CachedEmbedder::open(inner.clone(), dir.path());
        let v = second.embed(&["be", "gamma"]).unwrap();
        assert_eq!(v, vec![vec![2.0, 98.0], vec![5.0, 103.0]]);
        assert_eq!(
            inner.0.load(Ordering::SeqCst),
            3,
            "only the new text is embedded"
        );
        assert_eq!(second.counts(), (1, 1));
        drop(second);

        let third = CachedEmbedder::open(inner.clone(), dir.path());
        third.embed(&["alpha", "be", "gamma"]).unwrap();
        assert_eq!(
            inner.0.load(Ordering::SeqCst),
            3,
            "every vector came from the file"
        );
    }

    #[test]
    fn a_cache_of_another_dimension_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name("counting@1"));
        fs_err::write(&path, [MAGIC.as_slice(), &9u32.to_le_bytes()].concat()).unwrap();
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let cache = CachedEmbedder::open(inner.clone(), dir.path());
        cache.embed(&["x"]).unwrap();
        assert_eq!(inner.0.load(Ordering::SeqCst), 1);
        assert!(path.with_extension("bin.old").exists());
    }
}
