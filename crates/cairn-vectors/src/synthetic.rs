//! Synthetic vectors for benchmarks (`cairn bench search`, the `embedded_bench` example):
//! seeded, so two runs measure the same data. Never used for real data.

/// SplitMix64 with Gaussian unit vectors.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniformly random direction in `dim` dimensions (unit length).
    pub fn unit_vector(&mut self, dim: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                let u1 = self.unit_f64().max(f64::MIN_POSITIVE);
                let u2 = self.unit_f64();
                ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
            })
            .collect();
        normalise(&mut v);
        v
    }
}

fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
}

/// The latent dimension of [`Gen::low_rank`] vectors.
pub const LATENT: usize = 48;

/// Makes a data set's vectors: uniformly random (the worst case for 1-bit codes and HNSW),
/// or `normalise(W z + 0.4 noise)` with a 48-dimension latent `z` and a fixed random `W`, a
/// stand-in for real embeddings whose neighbours are meaningfully closer than the rest.
#[derive(Debug, Clone)]
pub struct Gen {
    rng: Rng,
    basis: Option<Vec<Vec<f32>>>,
    real: Option<std::sync::Arc<Vec<Vec<f32>>>>,
}

impl Gen {
    /// Uniformly random unit vectors.
    pub fn random(seed: u64) -> Self {
        Self {
            rng: Rng(seed),
            basis: None,
            real: None,
        }
    }

    /// Vectors shaped by real embeddings (`real`, unit length, all of one dimension): each is
    /// `normalise(a + 0.5 b + 0.25 c + 0.05 noise)` of three of them picked at random. So
    /// there are as many distinct points as asked, they stay in the region real texts
    /// occupy (the common direction and main axes all embeddings of a model share), and
    /// each lies near the real embeddings it was made of.
    pub fn from_real(seed: u64, real: std::sync::Arc<Vec<Vec<f32>>>) -> Self {
        Self {
            rng: Rng(seed),
            basis: None,
            real: Some(real),
        }
    }

    /// Low-rank vectors of `dim` dimensions (the basis is the same for every seed).
    pub fn low_rank(seed: u64, dim: usize) -> Self {
        let mut rng = Rng(0xba5e);
        Self {
            rng: Rng(seed),
            basis: Some((0..LATENT).map(|_| rng.unit_vector(dim)).collect()),
            real: None,
        }
    }

    /// The next vector (unit length).
    pub fn vector(&mut self, dim: usize) -> Vec<f32> {
        if let Some(real) = self.real.clone().filter(|r| !r.is_empty()) {
            let mut v = self.rng.unit_vector(dim);
            v.iter_mut().for_each(|x| *x *= 0.05);
            for weight in [1.0, 0.5, 0.25] {
                let pick = (self.rng.next_u64() % real.len() as u64) as usize;
                v.iter_mut()
                    .zip(&real[pick])
                    .for_each(|(x, r)| *x += weight * r);
            }
            normalise(&mut v);
            return v;
        }
        let Some(basis) = &self.basis else {
            return self.rng.unit_vector(dim);
        };
        let z = self.rng.unit_vector(LATENT);
        let mut v = self.rng.unit_vector(dim);
        v.iter_mut().for_each(|x| *x *= 0.4);
        for (zi, b) in z.iter().zip(basis) {
            v.iter_mut().zip(b).for_each(|(x, bi)| *x += zi * bi);
        }
        normalise(&mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_unit_length_and_seeded() {
        let mut a = Gen::low_rank(7, 64);
        let mut b = Gen::low_rank(7, 64);
        let (va, vb) = (a.vector(64), b.vector(64));
        assert_eq!(va, vb);
        let norm: f32 = va.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
        assert_ne!(Gen::random(1).vector(64), Gen::random(2).vector(64));
    }

    #[test]
    fn vectors_from_real_ones_stay_near_them() {
        let real: Vec<Vec<f32>> = (0..4).map(|i| Gen::random(i).vector(32)).collect();
        let mut g = Gen::from_real(3, std::sync::Arc::new(real.clone()));
        for _ in 0..20 {
            let v = g.vector(32);
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4);
            let best = real
                .iter()
                .map(|r| r.iter().zip(&v).map(|(a, b)| a * b).sum::<f32>())
                .fold(f32::MIN, f32::max);
            assert!(best > 0.6, "closest real vector at cosine {best}");
        }
    }
}
