#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
//! One conformance suite, [`conformance`], run against every backend: the exact in-memory
//! twin, the embedded Qdrant index, and (when a server is configured) a Qdrant sidecar or a
//! remote Qdrant. Plus the embedded index's persistence and damage handling.
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use cairn_core::VectorKind;
use cairn_core::ports::{
    BackendError, BackendErrorKind, PointPayload, VectorFilter, VectorHit, VectorIndex, VectorPoint,
};
use cairn_vectors::{EmbeddedIndex, MemoryIndex, ServerIndex, Sidecar};

const DIM: usize = 384;
const KINDS: [VectorKind; 3] = [VectorKind::Summary, VectorKind::Chunk, VectorKind::Cue];

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A random unit vector (normalised Gaussian: uniform on the sphere).
    fn unit_vector(&mut self, dim: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                let u1 = self.unit_f64().max(f64::MIN_POSITIVE);
                let u2 = self.unit_f64();
                ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
            })
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

fn point(
    owner: &str,
    kind: VectorKind,
    ord: u32,
    vector: Vec<f32>,
    payload: PointPayload,
) -> VectorPoint {
    VectorPoint {
        owner: owner.to_string(),
        vector_kind: kind,
        ord,
        vector,
        payload,
    }
}

/// `n` chunk vectors owned by `{prefix}0`, `{prefix}1`, …, all at `ord`, random directions.
fn random_chunks(rng: &mut Rng, prefix: &str, ord: u32, n: u32) -> Vec<VectorPoint> {
    (0..n)
        .map(|i| {
            point(
                &format!("{prefix}{i}"),
                VectorKind::Chunk,
                ord,
                rng.unit_vector(DIM),
                PointPayload::default(),
            )
        })
        .collect()
}

/// A varied payload, so every filter has something to keep and something to drop.
fn payload(rng: &mut Rng) -> PointPayload {
    let pick = |rng: &mut Rng, values: &[&str]| {
        let i = rng.below(values.len() + 1);
        values.get(i).map(|s| s.to_string())
    };
    PointPayload {
        project: pick(rng, &["alpha", "beta", "gamma"]),
        framework: pick(rng, &["claude-code", "codex"]),
        kind: pick(rng, &["record", "note", "decision", "fact"]),
        session: pick(rng, &["s1", "s2", "s3"]),
        timestamp_ms: 1_700_000_000_000 + rng.below(1_000_000) as i64,
    }
}

fn key(hit: &VectorHit) -> (String, VectorKind, u32) {
    (hit.owner.clone(), hit.vector_kind, hit.ord)
}

fn keys(hits: &[VectorHit]) -> Vec<(String, VectorKind, u32)> {
    hits.iter().map(key).collect()
}

fn overlap(a: &[VectorHit], b: &[VectorHit]) -> f64 {
    let a: HashSet<_> = a.iter().map(key).collect();
    let common = b.iter().filter(|h| a.contains(&key(h))).count();
    common as f64 / b.len().max(1) as f64
}

fn assert_kind(result: Result<impl std::fmt::Debug, BackendError>, kind: BackendErrorKind) {
    match result {
        Err(e) => assert_eq!(e.kind, kind, "wrong error kind: {e}"),
        Ok(v) => panic!("expected a {kind:?} error, got {v:?}"),
    }
}

/// Same hits in the same order, with the same scores (to rounding).
fn assert_same_order(got: &[VectorHit], want: &[VectorHit], what: &str) {
    assert_eq!(
        keys(got),
        keys(want),
        "{what}: order differs from the exact twin"
    );
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.score - w.score).abs() < 1e-3,
            "{what}: score {} vs {}",
            g.score,
            w.score
        );
    }
}

/// The suite every backend passes. `index` may hold anything: it is cleared first.
fn conformance(index: &dyn VectorIndex) {
    let name = index.backend().to_string();
    println!("conformance: {name}");
    let mut rng = Rng(0x5eed_cafe);

    // ensure: idempotent; another dimension is refused.
    index.ensure(DIM).unwrap();
    index.clear().unwrap();
    index.ensure(DIM).unwrap();
    assert_kind(index.ensure(DIM + 1), BackendErrorKind::BadInput);
    assert_eq!(index.count().unwrap(), 0);

    // Wrong dimensions: upsert and query are BadInput, and a bad batch writes nothing.
    let good = point(
        "o-good",
        VectorKind::Chunk,
        0,
        rng.unit_vector(DIM),
        PointPayload::default(),
    );
    let bad = point(
        "o-bad",
        VectorKind::Chunk,
        0,
        rng.unit_vector(DIM - 1),
        PointPayload::default(),
    );
    assert_kind(
        index.upsert(&[good.clone(), bad]),
        BackendErrorKind::BadInput,
    );
    assert_eq!(
        index.count().unwrap(),
        0,
        "{name}: a rejected batch wrote points"
    );
    let short = rng.unit_vector(DIM - 1);
    assert_kind(
        index.search(
            VectorKind::Chunk,
            &short,
            &VectorFilter::default(),
            5,
            false,
        ),
        BackendErrorKind::BadInput,
    );
    assert_kind(
        index.search(VectorKind::Chunk, &short, &VectorFilter::default(), 5, true),
        BackendErrorKind::BadInput,
    );

    // Upsert and replace: the same owner, kind and ord is one point.
    index.upsert(std::slice::from_ref(&good)).unwrap();
    assert_eq!(index.count().unwrap(), 1);
    let replacement = rng.unit_vector(DIM);
    let mut replaced = good.clone();
    replaced.vector = replacement.clone();
    index.upsert(&[replaced]).unwrap();
    assert_eq!(
        index.count().unwrap(),
        1,
        "{name}: a replacement added a point"
    );
    let hits = index
        .search(
            VectorKind::Chunk,
            &replacement,
            &VectorFilter::default(),
            3,
            true,
        )
        .unwrap();
    assert_eq!(
        keys(&hits),
        vec![("o-good".to_string(), VectorKind::Chunk, 0)]
    );
    assert!(
        (hits[0].score - 1.0).abs() < 1e-3,
        "{name}: replaced vector scores {}",
        hits[0].score
    );
    // Another kind or ord of the same owner is another point.
    index
        .upsert(&[
            point(
                "o-good",
                VectorKind::Cue,
                0,
                rng.unit_vector(DIM),
                PointPayload::default(),
            ),
            point(
                "o-good",
                VectorKind::Chunk,
                1,
                rng.unit_vector(DIM),
                PointPayload::default(),
            ),
            point(
                "o-other",
                VectorKind::Chunk,
                0,
                rng.unit_vector(DIM),
                PointPayload::default(),
            ),
        ])
        .unwrap();
    assert_eq!(index.count().unwrap(), 4);

    // delete_owner removes every point of that owner, and only those.
    index.delete_owner("o-good").unwrap();
    assert_eq!(index.count().unwrap(), 1);
    let hits = index
        .search(
            VectorKind::Chunk,
            &replacement,
            &VectorFilter::default(),
            10,
            false,
        )
        .unwrap();
    assert_eq!(
        keys(&hits),
        vec![("o-other".to_string(), VectorKind::Chunk, 0)]
    );
    index.delete_owner("o-missing").unwrap();
    assert_eq!(
        index
            .search(
                VectorKind::Cue,
                &replacement,
                &VectorFilter::default(),
                10,
                false
            )
            .unwrap(),
        vec![]
    );

    // clear empties it and keeps the collection usable.
    index.clear().unwrap();
    assert_eq!(index.count().unwrap(), 0);
    assert_eq!(
        index
            .search(
                VectorKind::Chunk,
                &replacement,
                &VectorFilter::default(),
                10,
                true
            )
            .unwrap(),
        vec![]
    );
    index.ensure(DIM).unwrap();

    // The ordering data set: 2,000 chunk vectors, plus 300 summaries and 300 cues, with
    // varied payloads; the same data in the exact twin.
    let twin = MemoryIndex::new();
    twin.ensure(DIM).unwrap();
    let mut data = Vec::new();
    for i in 0..2_000u32 {
        data.push(point(
            &format!("r{}", i / 4),
            VectorKind::Chunk,
            i % 4,
            rng.unit_vector(DIM),
            payload(&mut rng),
        ));
    }
    for i in 0..300u32 {
        data.push(point(
            &format!("i{i}"),
            VectorKind::Summary,
            0,
            rng.unit_vector(DIM),
            payload(&mut rng),
        ));
        data.push(point(
            &format!("i{i}"),
            VectorKind::Cue,
            i % 3,
            rng.unit_vector(DIM),
            payload(&mut rng),
        ));
    }
    for batch in data.chunks(500) {
        index.upsert(batch).unwrap();
        twin.upsert(batch).unwrap();
    }
    index.flush().unwrap();
    assert_eq!(index.count().unwrap(), data.len() as u64);

    // Search ordering on random unit vectors: exact is the twin's order; the quantized search
    // finds at least 90% of the exact top 10.
    let none = VectorFilter::default();
    let mut overlaps = Vec::new();
    let mut rescored = Vec::new();
    for q in 0..40 {
        let kind = KINDS[q % 3];
        let query = rng.unit_vector(DIM);
        let want = twin.search(kind, &query, &none, 10, true).unwrap();
        let exact = index.search(kind, &query, &none, 10, true).unwrap();
        assert_same_order(&exact, &want, &format!("{name} exact {kind:?}"));
        let approx = index.search(kind, &query, &none, 10, false).unwrap();
        assert_eq!(approx.len(), 10);
        assert!(
            approx.iter().all(|h| h.vector_kind == kind),
            "{name}: a hit of another kind"
        );
        assert!(
            approx.windows(2).all(|w| w[0].score >= w[1].score),
            "{name}: hits not sorted"
        );
        overlaps.push(overlap(&approx, &want));
        // The retriever's search (a hundred results, fewer candidates re-scored than the
        // index's floor) keeps the same order where it overlaps and the same kind.
        let wide = index
            .search_rescoring(kind, &query, &none, 100, 300)
            .unwrap();
        assert_eq!(wide.len(), 100, "{name}: search_rescoring returned too few");
        assert!(
            wide.iter().all(|h| h.vector_kind == kind)
                && wide.windows(2).all(|w| w[0].score >= w[1].score),
            "{name}: search_rescoring hits of another kind or unsorted"
        );
        rescored.push(overlap(&wide[..10], &want));
    }
    let kept = rescored.iter().sum::<f64>() / rescored.len() as f64;
    println!(
        "{name}: top 10 of a 100-result search re-scoring 300, overlap with exact = {kept:.3}"
    );
    assert!(
        kept >= 0.9,
        "{name}: search_rescoring's top-10 overlap {kept:.3} < 0.9"
    );
    let recall = overlaps.iter().sum::<f64>() / overlaps.len() as f64;
    println!("{name}: quantized top-10 overlap with exact = {recall:.3}");
    assert!(
        recall >= 0.9,
        "{name}: quantized top-10 overlap {recall:.3} < 0.9"
    );

    // A query equal to a stored vector finds it first, with a score of ~1.
    let probe = &data[1234];
    let hits = index
        .search(probe.vector_kind, &probe.vector, &none, 1, false)
        .unwrap();
    assert_eq!(
        keys(&hits),
        vec![(probe.owner.clone(), probe.vector_kind, probe.ord)]
    );
    assert!((hits[0].score - 1.0).abs() < 1e-3);

    // Every filter, alone and combined, exact and quantized.
    let by_key: HashMap<_, _> = data
        .iter()
        .map(|p| ((p.owner.clone(), p.vector_kind, p.ord), p.payload.clone()))
        .collect();
    let filters = vec![
        VectorFilter {
            project: Some("alpha".into()),
            ..Default::default()
        },
        VectorFilter {
            framework: Some("codex".into()),
            ..Default::default()
        },
        VectorFilter {
            kinds: vec!["note".into()],
            ..Default::default()
        },
        VectorFilter {
            kinds: vec!["decision".into(), "fact".into()],
            ..Default::default()
        },
        VectorFilter {
            exclude_session: Some("s1".into()),
            ..Default::default()
        },
        VectorFilter {
            since_ms: Some(1_700_000_500_000),
            ..Default::default()
        },
        VectorFilter {
            until_ms: Some(1_700_000_200_000),
            ..Default::default()
        },
        VectorFilter {
            since_ms: Some(1_700_000_300_000),
            until_ms: Some(1_700_000_600_000),
            ..Default::default()
        },
        VectorFilter {
            project: Some("beta".into()),
            framework: Some("claude-code".into()),
            kinds: vec!["record".into(), "note".into()],
            exclude_session: Some("s2".into()),
            since_ms: Some(1_700_000_100_000),
            until_ms: Some(1_700_000_900_000),
        },
        VectorFilter {
            project: Some("nowhere".into()),
            ..Default::default()
        },
    ];
    for filter in &filters {
        for kind in KINDS {
            let query = rng.unit_vector(DIM);
            let want = twin.search(kind, &query, filter, 10, true).unwrap();
            let exact = index.search(kind, &query, filter, 10, true).unwrap();
            assert_same_order(&exact, &want, &format!("{name} exact {kind:?} {filter:?}"));
            let approx = index.search(kind, &query, filter, 10, false).unwrap();
            assert_eq!(
                approx.len(),
                want.len(),
                "{name}: {filter:?} returned too few"
            );
            for hit in &approx {
                assert_eq!(hit.vector_kind, kind);
                let payload = &by_key[&key(hit)];
                assert!(
                    matches_filter(filter, payload),
                    "{name}: {filter:?} let through {hit:?} with {payload:?}"
                );
            }
        }
    }

    // delete_owner on the big set matches the twin.
    for owner in ["r3", "r77", "i5", "i299"] {
        index.delete_owner(owner).unwrap();
        twin.delete_owner(owner).unwrap();
    }
    assert_eq!(index.count().unwrap(), twin.count().unwrap());
    for kind in KINDS {
        let query = rng.unit_vector(DIM);
        let want = twin.search(kind, &query, &none, 20, true).unwrap();
        let got = index.search(kind, &query, &none, 20, true).unwrap();
        assert_same_order(&got, &want, &format!("{name} after delete_owner"));
    }

    // limit 0 is empty; clear empties.
    assert_eq!(
        index
            .search(VectorKind::Chunk, &rng.unit_vector(DIM), &none, 0, false)
            .unwrap(),
        vec![]
    );
    index.clear().unwrap();
    assert_eq!(index.count().unwrap(), 0);
}

/// The filter semantics, restated independently of the backends.
fn matches_filter(filter: &VectorFilter, p: &PointPayload) -> bool {
    filter
        .project
        .as_ref()
        .is_none_or(|v| p.project.as_ref() == Some(v))
        && filter
            .framework
            .as_ref()
            .is_none_or(|v| p.framework.as_ref() == Some(v))
        && (filter.kinds.is_empty() || p.kind.as_ref().is_some_and(|k| filter.kinds.contains(k)))
        && filter
            .exclude_session
            .as_ref()
            .is_none_or(|s| p.session.as_ref() != Some(s))
        && filter.since_ms.is_none_or(|t| p.timestamp_ms >= t)
        && filter.until_ms.is_none_or(|t| p.timestamp_ms <= t)
}

#[test]
fn memory_index_conforms() {
    conformance(&MemoryIndex::new());
}

#[test]
fn embedded_index_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let index = EmbeddedIndex::create(&dir.path().join("index")).unwrap();
    conformance(&index);
}

#[test]
fn before_ensure_there_is_no_collection() {
    let dir = tempfile::tempdir().unwrap();
    let embedded = EmbeddedIndex::create(&dir.path().join("index")).unwrap();
    let memory = MemoryIndex::new();
    for index in [&embedded as &dyn VectorIndex, &memory] {
        assert_eq!(index.count().unwrap(), 0);
        let p = point(
            "o",
            VectorKind::Chunk,
            0,
            vec![1.0; 4],
            PointPayload::default(),
        );
        assert_kind(index.upsert(&[p]), BackendErrorKind::BadInput);
        assert_kind(
            index.search(
                VectorKind::Chunk,
                &[1.0; 4],
                &VectorFilter::default(),
                3,
                false,
            ),
            BackendErrorKind::BadInput,
        );
        assert_kind(index.ensure(0), BackendErrorKind::BadInput);
        index.flush().unwrap();
        index.clear().unwrap();
    }
}

fn small_data(n: u32) -> Vec<VectorPoint> {
    let mut rng = Rng(42);
    (0..n)
        .map(|i| {
            point(
                &format!("o{}", i / 3),
                KINDS[(i % 3) as usize],
                i / 3,
                rng.unit_vector(DIM),
                payload(&mut rng),
            )
        })
        .collect()
}

#[test]
fn embedded_index_persists_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let data = small_data(600);
    let query = Rng(7).unit_vector(DIM);
    let before = {
        let index = EmbeddedIndex::create(&path).unwrap();
        index.ensure(DIM).unwrap();
        index.upsert(&data).unwrap();
        index.delete_owner("o7").unwrap();
        index.flush().unwrap();
        assert_eq!(index.count().unwrap(), 597);
        index
            .search(VectorKind::Cue, &query, &VectorFilter::default(), 10, true)
            .unwrap()
    };
    let index = EmbeddedIndex::open(&path).unwrap();
    assert_eq!(index.dim().unwrap(), Some(DIM));
    assert_eq!(index.count().unwrap(), 597);
    assert_eq!(
        index
            .search(VectorKind::Cue, &query, &VectorFilter::default(), 10, true)
            .unwrap(),
        before
    );
    assert_kind(index.ensure(DIM * 2), BackendErrorKind::BadInput);

    // Dropped without an explicit flush: closing flushes.
    index.upsert(&small_data(603)[600..]).unwrap();
    drop(index);
    let index = EmbeddedIndex::open(&path).unwrap();
    assert_eq!(index.count().unwrap(), 600);

    // Optimizing keeps every point and the exact order, and the index stays writable.
    index.optimize().unwrap();
    assert_eq!(index.count().unwrap(), 600);
    let again = index
        .search(VectorKind::Cue, &query, &VectorFilter::default(), 10, true)
        .unwrap();
    assert_eq!(keys(&again)[..], keys(&before)[..]);
    // Giving back the mapped pages of full vectors loses nothing: the same searches give
    // the same answers after, quantized and exact.
    let quantized = index
        .search(VectorKind::Cue, &query, &VectorFilter::default(), 10, false)
        .unwrap();
    let released = index.release_mapped_pages();
    if cfg!(target_os = "linux") {
        assert!(
            released > 0,
            "the full vectors of the optimized segments are mapped"
        );
    }
    for _ in 0..9 {
        assert_eq!(
            index
                .search(VectorKind::Cue, &query, &VectorFilter::default(), 10, false)
                .unwrap(),
            quantized
        );
    }
    assert_eq!(
        index
            .search(VectorKind::Cue, &query, &VectorFilter::default(), 10, true)
            .unwrap(),
        again
    );
    index
        .upsert(&[point(
            "late",
            VectorKind::Cue,
            0,
            query.clone(),
            PointPayload::default(),
        )])
        .unwrap();
    let hits = index
        .search(VectorKind::Cue, &query, &VectorFilter::default(), 1, false)
        .unwrap();
    assert_eq!(hits[0].owner, "late");
    drop(index);
    assert_eq!(EmbeddedIndex::open(&path).unwrap().count().unwrap(), 601);
}

/// The WAL is pruned at open (qdrant-edge never truncates it): after that, replacing a
/// point must still win over its older version, so operation numbers kept increasing.
#[test]
fn embedded_index_prunes_its_wal_and_keeps_replacing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let mut rng = Rng(11);
    let first = rng.unit_vector(DIM);
    {
        let index = EmbeddedIndex::create(&path).unwrap();
        index.ensure(DIM).unwrap();
        index
            .upsert(&[point(
                "keep",
                VectorKind::Summary,
                0,
                first.clone(),
                PointPayload::default(),
            )])
            .unwrap();
        // ~25 MiB of writes: several 8 MiB WAL segments.
        for round in 0..4 {
            index
                .upsert(&random_chunks(&mut rng, "w", round, 4_000))
                .unwrap();
        }
    }
    let closed = |path: &Path| {
        fs_err::read_dir(path.join("shards/chunk/wal"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("closed-")
            })
            .count()
    };
    assert!(closed(&path) >= 2, "expected several closed WAL segments");
    let second = rng.unit_vector(DIM);
    {
        let index = EmbeddedIndex::open(&path).unwrap();
        assert_eq!(closed(&path), 1);
        assert_eq!(index.count().unwrap(), 16_001);
        // The last point written before closing has the highest version.
        index
            .upsert(&[point(
                "w3999",
                VectorKind::Chunk,
                3,
                second.clone(),
                PointPayload::default(),
            )])
            .unwrap();
        index.delete_owner("w7").unwrap();
    }
    let index = EmbeddedIndex::open(&path).unwrap();
    assert_eq!(index.count().unwrap(), 15_997);
    let hits = index
        .search(
            VectorKind::Chunk,
            &second,
            &VectorFilter::default(),
            1,
            true,
        )
        .unwrap();
    assert_eq!((hits[0].owner.as_str(), hits[0].ord), ("w3999", 3));
    assert!(
        (hits[0].score - 1.0).abs() < 1e-3,
        "the replacement was lost: {}",
        hits[0].score
    );
}

/// A long-running index prunes its WAL when a flush finds it past the limit, and goes on
/// answering and accepting writes with nothing lost.
#[test]
fn embedded_index_prunes_its_wal_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let mut rng = Rng(17);
    let index = EmbeddedIndex::create(&path).unwrap();
    index.ensure(DIM).unwrap();
    index.set_wal_limit(4 << 20);
    let wal_files = |path: &Path| {
        fs_err::read_dir(path.join("shards/chunk/wal"))
            .unwrap()
            .count()
    };
    for round in 0..3 {
        index
            .upsert(&random_chunks(&mut rng, "p", round, 4_000))
            .unwrap();
    }
    let before = wal_files(&path);
    let probe = rng.unit_vector(DIM);
    index
        .upsert(&[point(
            "probe",
            VectorKind::Chunk,
            0,
            probe.clone(),
            PointPayload::default(),
        )])
        .unwrap();
    index.flush().unwrap();
    assert!(
        wal_files(&path) < before,
        "the WAL was not pruned ({before} files before, {} after)",
        wal_files(&path)
    );
    assert_eq!(index.count().unwrap(), 12_001);
    let hits = index
        .search(
            VectorKind::Chunk,
            &probe,
            &VectorFilter::default(),
            1,
            false,
        )
        .unwrap();
    assert_eq!(hits[0].owner, "probe");
    // Still writable, and a replacement still wins after the reopen.
    index
        .upsert(&[point(
            "p5",
            VectorKind::Chunk,
            2,
            probe.clone(),
            PointPayload::default(),
        )])
        .unwrap();
    index.delete_owner("probe").unwrap();
    drop(index);
    let index = EmbeddedIndex::open(&path).unwrap();
    assert_eq!(index.count().unwrap(), 12_000);
    let hits = index
        .search(VectorKind::Chunk, &probe, &VectorFilter::default(), 1, true)
        .unwrap();
    assert_eq!((hits[0].owner.as_str(), hits[0].ord), ("p5", 2));
}

#[test]
fn embedded_index_reports_missing_or_foreign_folders() {
    let dir = tempfile::tempdir().unwrap();
    assert_kind(
        EmbeddedIndex::open(&dir.path().join("missing")),
        BackendErrorKind::Corrupt,
    );
    // A folder that is not an index: open says Corrupt, create refuses to wipe it.
    fs_err::write(dir.path().join("precious.txt"), "keep me").unwrap();
    assert_kind(EmbeddedIndex::open(dir.path()), BackendErrorKind::Corrupt);
    assert_kind(
        EmbeddedIndex::create(dir.path()),
        BackendErrorKind::BadInput,
    );
    assert!(dir.path().join("precious.txt").exists());
    // Another format: Corrupt.
    let path = dir.path().join("index");
    drop(EmbeddedIndex::create(&path).unwrap());
    fs_err::write(
        path.join("cairn-vectors"),
        "cairn-vectors embedded index, format 0\n",
    )
    .unwrap();
    assert_kind(EmbeddedIndex::open(&path), BackendErrorKind::Corrupt);
    // create replaces it with an empty, usable index.
    let index = EmbeddedIndex::create(&path).unwrap();
    index.ensure(8).unwrap();
    assert_eq!(index.count().unwrap(), 0);
}

#[test]
fn embedded_index_is_held_by_one_owner() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let first = EmbeddedIndex::create(&path).unwrap();
    first.ensure(DIM).unwrap();
    assert_kind(EmbeddedIndex::open(&path), BackendErrorKind::Unavailable);
    assert_kind(EmbeddedIndex::create(&path), BackendErrorKind::Unavailable);
    drop(first);
    EmbeddedIndex::open(&path).unwrap();
}

/// Opens a possibly damaged index and uses it: every outcome but a panic is acceptable, and
/// an error at open must say `Corrupt`.
fn open_damaged(path: &Path, what: &str) -> String {
    match EmbeddedIndex::open(path) {
        Err(e) => {
            assert_eq!(e.kind, BackendErrorKind::Corrupt, "{what}: {e}");
            "corrupt at open".to_string()
        }
        Ok(index) => {
            let query = Rng(9).unit_vector(DIM);
            let none = VectorFilter::default();
            let outcomes = [
                ("count", index.count().err()),
                (
                    "search",
                    index
                        .search(VectorKind::Chunk, &query, &none, 5, false)
                        .err(),
                ),
                (
                    "exact search",
                    index
                        .search(VectorKind::Chunk, &query, &none, 5, true)
                        .err(),
                ),
                ("upsert", index.upsert(&small_data(3)).err()),
                ("flush", index.flush().err()),
            ];
            let failed: Vec<String> = outcomes
                .into_iter()
                .filter_map(|(op, e)| e.map(|e| format!("{op}: {:?}", e.kind)))
                .collect();
            if failed.is_empty() {
                "recovered".to_string()
            } else {
                format!("opened, then errors ({})", failed.join(", "))
            }
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs_err::create_dir_all(to).unwrap();
    for entry in fs_err::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != "lock" {
            fs_err::copy(entry.path(), &target).unwrap();
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs_err::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            files_under(&entry.path(), out);
        } else if entry.metadata().unwrap().len() > 0 && entry.file_name() != "lock" {
            out.push(entry.path());
        }
    }
}

#[test]
fn embedded_index_with_a_truncated_file_recovers_or_reports_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine");
    {
        let index = EmbeddedIndex::create(&pristine).unwrap();
        index.ensure(DIM).unwrap();
        index.upsert(&small_data(300)).unwrap();
        index.flush().unwrap();
    }
    let mut files = Vec::new();
    files_under(&pristine, &mut files);
    // The three shards are laid out alike: damage the marker and the `chunk` shard's files.
    files.retain(|f| {
        let relative = f.strip_prefix(&pristine).unwrap();
        !relative.starts_with("shards") || relative.starts_with("shards/chunk")
    });
    files.sort();
    assert!(
        files.len() > 5,
        "expected a real storage tree, found {files:?}"
    );
    let mut outcomes = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let relative = file.strip_prefix(&pristine).unwrap();
        // Each file is cut once, alternately to nothing and to half: opening three shards
        // per case makes cutting every file both ways take minutes.
        let keep = if i % 2 == 0 { 0.0 } else { 0.5 };
        let copy = dir.path().join(format!("damaged-{i}-{keep}"));
        copy_dir(&pristine, &copy);
        let target = copy.join(relative);
        let len = fs_err::metadata(&target).unwrap().len();
        let file = fs_err::OpenOptions::new()
            .write(true)
            .open(&target)
            .unwrap();
        file.set_len((len as f64 * keep) as u64).unwrap();
        drop(file);
        let outcome = open_damaged(&copy, &format!("{} cut to {keep}", relative.display()));
        outcomes.push(format!(
            "{} (cut to {:.0}%): {outcome}",
            relative.display(),
            keep * 100.0
        ));
        fs_err::remove_dir_all(&copy).unwrap();
    }
    println!("{}", outcomes.join("\n"));
}

/// Set by the kill test for the child it starts.
const KILL_DIR_ENV: &str = "CAIRN_VECTORS_KILL_DIR";

/// In the child process: write, flush some, keep writing, then die without closing. Not a
/// test of its own: the kill test runs it (`--ignored`).
#[test]
#[ignore = "the child process of embedded_index_killed_mid_write_recovers_or_reports_corrupt"]
fn kill_child() {
    let path = std::env::var(KILL_DIR_ENV)
        .expect("CAIRN_VECTORS_KILL_DIR names the index (set by the kill test)");
    let index = EmbeddedIndex::create(Path::new(&path)).unwrap();
    index.ensure(DIM).unwrap();
    let data = small_data(900);
    index.upsert(&data[..300]).unwrap();
    index.flush().unwrap();
    for batch in data[300..].chunks(50) {
        index.upsert(batch).unwrap();
    }
    std::process::abort();
}

#[test]
fn embedded_index_killed_mid_write_recovers_or_reports_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(KILL_DIR_ENV, &path)
        .status()
        .unwrap();
    assert!(!status.success(), "the child should have died");
    let outcome = open_damaged(&path, "killed mid-write");
    println!("killed mid-write: {outcome}");
    if let Ok(index) = EmbeddedIndex::open(&path) {
        let n = index.count().unwrap();
        println!("killed mid-write: {n} points survived (300 flushed, 903 written)");
        assert!(n >= 300, "flushed points were lost: {n}");
    }
}

#[test]
fn keyring_is_used_or_reported_unavailable() {
    match cairn_vectors::load_key("conformance-test-no-such-key") {
        Ok(None) => println!("keyring: available"),
        Ok(Some(_)) => panic!("a key nobody stored was found"),
        Err(e) => {
            assert_eq!(e.kind, BackendErrorKind::Unavailable, "{e}");
            println!("keyring: unavailable ({e})");
        }
    }
}

/// Needs a Qdrant server binary, which no package registry ships: without one `npm test`
/// reports it as ignored, never as a pass. Run it with
/// `CAIRN_TEST_QDRANT_BIN=/path/to/qdrant npm test` (or `cargo nextest run -p cairn-vectors
/// --run-ignored only` with it set).
#[test]
#[ignore = "needs a Qdrant server binary (CAIRN_TEST_QDRANT_BIN)"]
fn sidecar_conforms() {
    let bin = std::env::var_os("CAIRN_TEST_QDRANT_BIN")
        .or_else(|| std::env::var_os("QDRANT_BIN"))
        .expect("set CAIRN_TEST_QDRANT_BIN to a qdrant binary to run the sidecar suite");
    let dir = tempfile::tempdir().unwrap();
    let sidecar = Sidecar::start(Path::new(&bin), dir.path()).unwrap();
    let index = ServerIndex::connect_sidecar(&sidecar, "cairn-conformance").unwrap();
    conformance(&index);
    // A wrong key is refused.
    let wrong = ServerIndex::connect(
        &sidecar.grpc_url(),
        Some("wrong".into()),
        "cairn-conformance",
    );
    if let Ok(wrong) = wrong {
        assert_kind(wrong.count(), BackendErrorKind::Unavailable);
    }
    drop(index);
    let pid = sidecar.pid();
    sidecar.stop();
    println!("sidecar {pid} stopped");
}

/// Needs a running Qdrant server (`CAIRN_TEST_QDRANT_URL`, and `CAIRN_TEST_QDRANT_API_KEY`
/// when it has one): reported as ignored by `npm test` without one; with one,
/// `CAIRN_TEST_QDRANT_URL=http://host:6334 npm test` runs it (or `cargo nextest run -p
/// cairn-vectors --run-ignored only` with it set).
#[test]
#[ignore = "needs a running Qdrant server (CAIRN_TEST_QDRANT_URL)"]
fn remote_conforms() {
    let url = std::env::var("CAIRN_TEST_QDRANT_URL")
        .or_else(|_| std::env::var("QDRANT_URL"))
        .expect(
            "set CAIRN_TEST_QDRANT_URL (and CAIRN_TEST_QDRANT_API_KEY) to run the remote suite",
        );
    let key = std::env::var("CAIRN_TEST_QDRANT_API_KEY")
        .or_else(|_| std::env::var("QDRANT_API_KEY"))
        .ok();
    let mut rng = Rng(std::process::id() as u64);
    let collection = format!("cairn-conformance-{:08x}", rng.next_u64() as u32);
    let index = ServerIndex::connect(&url, key, &collection).unwrap();
    conformance(&index);
    index.delete_collection().unwrap();
    // A service drops its last handle to the index inside a task (the migration does):
    // that must not panic.
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move { drop(index) });
}
