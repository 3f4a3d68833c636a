//! Synthetic checkpoints written at test time: a cross-encoder with the exact layout of
//! `cross-encoder/ms-marco-MiniLM-L6-v2` (the packaged MiniLM encoder plus a random pooler and
//! classifier), and tiny random BERT folders for the loading and error tests. Their scores mean
//! nothing; they exercise the code path and its shapes.
use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};

/// A small deterministic generator (SplitMix64), so the random heads are the same every run.
pub struct Rng(u64);

impl Rng {
    /// A generator from a fixed seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[-scale, scale)`.
    fn uniform(&mut self, scale: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1_u64 << 24) as f32;
        (unit * 2.0 - 1.0) * scale
    }

    /// A tensor of the given shape, uniform in `[-scale, scale)` around `center`.
    pub fn tensor(&mut self, shape: &[usize], center: f32, scale: f32) -> Tensor {
        let n = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| center + self.uniform(scale)).collect();
        Tensor::from_vec(data, shape, &Device::Cpu).unwrap()
    }
}

/// Writes a cross-encoder folder with the ms-marco-MiniLM-L6-v2 layout into `out`, from the
/// all-MiniLM-L6-v2 folder `minilm`: `bert.*` tensors, a random `bert.pooler.dense.*` and
/// `classifier.*` (one label), a `BertForSequenceClassification` config and the MiniLM tokenizer.
pub fn write_cross_encoder(minilm: &Path, out: &Path, seed: u64) {
    let mut rng = Rng::new(seed);
    let encoder =
        candle_core::safetensors::load(minilm.join("model.safetensors"), &Device::Cpu).unwrap();
    let mut tensors: HashMap<String, Tensor> = encoder
        .into_iter()
        .filter(|(name, _)| !name.starts_with("pooler."))
        .map(|(name, tensor)| (format!("bert.{name}"), tensor))
        .collect();
    let hidden = tensors["bert.embeddings.word_embeddings.weight"]
        .dim(1)
        .unwrap();
    tensors.insert(
        "bert.pooler.dense.weight".into(),
        rng.tensor(&[hidden, hidden], 0.0, 0.05),
    );
    tensors.insert(
        "bert.pooler.dense.bias".into(),
        rng.tensor(&[hidden], 0.0, 0.05),
    );
    tensors.insert(
        "classifier.weight".into(),
        rng.tensor(&[1, hidden], 0.0, 0.5),
    );
    tensors.insert("classifier.bias".into(), rng.tensor(&[1], 0.0, 0.5));
    fs_err::create_dir_all(out).unwrap();
    candle_core::safetensors::save(&tensors, out.join("model.safetensors")).unwrap();

    let text = fs_err::read_to_string(minilm.join("config.json")).unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    config["architectures"] = serde_json::json!(["BertForSequenceClassification"]);
    config["model_type"] = serde_json::json!("bert");
    config["num_labels"] = serde_json::json!(1);
    config["id2label"] = serde_json::json!({"0": "LABEL_0"});
    config["label2id"] = serde_json::json!({"LABEL_0": 0});
    fs_err::write(
        out.join("config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    fs_err::copy(minilm.join("tokenizer.json"), out.join("tokenizer.json")).unwrap();
}

/// The words the tiny tokenizer knows (after `[PAD] [UNK] [CLS] [SEP]`).
pub const TINY_WORDS: &[&str] = &[
    "the", "build", "failed", "cargo", "test", "memory", "note", "linker", "error", "weather",
    "is", "nice", "today", "fix", "path",
];

/// How the tiny folder is made.
#[derive(Clone, Copy)]
pub struct Tiny {
    /// Add `bert.pooler.dense.*` and `classifier.*` (and prefix the encoder with `bert.`).
    pub head: bool,
    /// Number of labels in the config (and classifier rows).
    pub labels: usize,
}

/// Writes a tiny random BERT folder (hidden 8, 2 heads, 2 layers) with a word-level tokenizer.
pub fn write_tiny(out: &Path, seed: u64, tiny: Tiny) {
    const HIDDEN: usize = 8;
    const INTERMEDIATE: usize = 16;
    const LAYERS: usize = 2;
    const POSITIONS: usize = 64;
    let vocab = 4 + TINY_WORDS.len();
    let mut rng = Rng::new(seed);
    let prefix = if tiny.head { "bert." } else { "" };
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    let mut put = |name: String, tensor: Tensor| {
        tensors.insert(format!("{prefix}{name}"), tensor);
    };
    put(
        "embeddings.word_embeddings.weight".into(),
        rng.tensor(&[vocab, HIDDEN], 0.0, 0.5),
    );
    put(
        "embeddings.position_embeddings.weight".into(),
        rng.tensor(&[POSITIONS, HIDDEN], 0.0, 0.1),
    );
    put(
        "embeddings.token_type_embeddings.weight".into(),
        rng.tensor(&[2, HIDDEN], 0.0, 0.1),
    );
    put(
        "embeddings.LayerNorm.weight".into(),
        rng.tensor(&[HIDDEN], 1.0, 0.1),
    );
    put(
        "embeddings.LayerNorm.bias".into(),
        rng.tensor(&[HIDDEN], 0.0, 0.1),
    );
    for layer in 0..LAYERS {
        let l = format!("encoder.layer.{layer}.");
        for part in ["query", "key", "value"] {
            put(
                format!("{l}attention.self.{part}.weight"),
                rng.tensor(&[HIDDEN, HIDDEN], 0.0, 0.3),
            );
            put(
                format!("{l}attention.self.{part}.bias"),
                rng.tensor(&[HIDDEN], 0.0, 0.1),
            );
        }
        put(
            format!("{l}attention.output.dense.weight"),
            rng.tensor(&[HIDDEN, HIDDEN], 0.0, 0.3),
        );
        put(
            format!("{l}attention.output.dense.bias"),
            rng.tensor(&[HIDDEN], 0.0, 0.1),
        );
        put(
            format!("{l}attention.output.LayerNorm.weight"),
            rng.tensor(&[HIDDEN], 1.0, 0.1),
        );
        put(
            format!("{l}attention.output.LayerNorm.bias"),
            rng.tensor(&[HIDDEN], 0.0, 0.1),
        );
        put(
            format!("{l}intermediate.dense.weight"),
            rng.tensor(&[INTERMEDIATE, HIDDEN], 0.0, 0.3),
        );
        put(
            format!("{l}intermediate.dense.bias"),
            rng.tensor(&[INTERMEDIATE], 0.0, 0.1),
        );
        put(
            format!("{l}output.dense.weight"),
            rng.tensor(&[HIDDEN, INTERMEDIATE], 0.0, 0.3),
        );
        put(
            format!("{l}output.dense.bias"),
            rng.tensor(&[HIDDEN], 0.0, 0.1),
        );
        put(
            format!("{l}output.LayerNorm.weight"),
            rng.tensor(&[HIDDEN], 1.0, 0.1),
        );
        put(
            format!("{l}output.LayerNorm.bias"),
            rng.tensor(&[HIDDEN], 0.0, 0.1),
        );
    }
    if tiny.head {
        put(
            "pooler.dense.weight".into(),
            rng.tensor(&[HIDDEN, HIDDEN], 0.0, 0.5),
        );
        put("pooler.dense.bias".into(), rng.tensor(&[HIDDEN], 0.0, 0.1));
        tensors.insert(
            "classifier.weight".into(),
            rng.tensor(&[tiny.labels, HIDDEN], 0.0, 1.0),
        );
        tensors.insert(
            "classifier.bias".into(),
            rng.tensor(&[tiny.labels], 0.0, 0.1),
        );
    }
    fs_err::create_dir_all(out).unwrap();
    candle_core::safetensors::save(&tensors, out.join("model.safetensors")).unwrap();

    let id2label: serde_json::Map<String, serde_json::Value> = (0..tiny.labels)
        .map(|i| (i.to_string(), format!("LABEL_{i}").into()))
        .collect();
    let config = serde_json::json!({
        "architectures": [if tiny.head { "BertForSequenceClassification" } else { "BertModel" }],
        "model_type": "bert",
        "vocab_size": vocab,
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 2,
        "intermediate_size": INTERMEDIATE,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "id2label": id2label,
    });
    fs_err::write(out.join("config.json"), config.to_string()).unwrap();
    fs_err::write(
        out.join("tokenizer.json"),
        tiny_tokenizer_json().to_string(),
    )
    .unwrap();
}

/// A word-level tokenizer with BERT's special tokens and templates.
pub fn tiny_tokenizer_json() -> serde_json::Value {
    let mut vocab = serde_json::Map::new();
    for (i, word) in ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
        .iter()
        .chain(TINY_WORDS)
        .enumerate()
    {
        vocab.insert((*word).to_owned(), i.into());
    }
    let special = |id: u32, content: &str| {
        serde_json::json!({"id": id, "content": content, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true})
    };
    let token = |id: &str, type_id: u32| serde_json::json!({"SpecialToken": {"id": id, "type_id": type_id}});
    let seq =
        |id: &str, type_id: u32| serde_json::json!({"Sequence": {"id": id, "type_id": type_id}});
    serde_json::json!({
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 40}, "direction": "Right", "pad_to_multiple_of": null,
                    "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
        "added_tokens": [special(0, "[PAD]"), special(1, "[UNK]"), special(2, "[CLS]"), special(3, "[SEP]")],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [token("[CLS]", 0), seq("A", 0), token("[SEP]", 0)],
            "pair": [token("[CLS]", 0), seq("A", 0), token("[SEP]", 0), seq("B", 1), token("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    })
}
