//! The GGUF loader's other paths, on tiny synthetic files written here (deterministic weights,
//! some Q8_0, a byte-level vocabulary without merges, so a plain text is one token per byte):
//! the qwen2 architecture, the Llama-3 chat template, the prompt layout of each template, and
//! the context bound. Their answers are noise; only the plumbing is checked. Always run.
use std::path::{Path, PathBuf};

use cairn_core::ports::BackendErrorKind;
use cairn_models::gguf::{GenerateRequest, GgufModel};
use candle_core::quantized::gguf_file::{Value, write};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};

const HEADS: usize = 4;
const KV_HEADS: usize = 2;
const BLOCKS: usize = 2;
const CONTEXT: u32 = 64;

/// The width of the model and how its matrices are stored.
#[derive(Clone, Copy)]
struct Shape {
    dim: usize,
    ffn: usize,
    /// Matrices as a Q4_K_M file holds them (Q4_K; Q6_K for the embedding, `attn_v` and
    /// `ffn_down`), which needs rows of a multiple of 256; else Q8_0.
    k_quants: bool,
}

const SMALL: Shape = Shape {
    dim: 64,
    ffn: 128,
    k_quants: false,
};

const K_QUANTS: Shape = Shape {
    dim: 256,
    ffn: 512,
    k_quants: true,
};

#[derive(Clone, Copy, PartialEq)]
enum Template {
    ChatMl,
    Llama3,
}

/// GPT-2's byte-to-character table: the 256 single-byte tokens of a byte-level BPE.
fn byte_chars() -> Vec<String> {
    let printable: Vec<u32> = (33..=126).chain(161..=172).chain(174..=255).collect();
    let mut chars: Vec<(u32, u32)> = printable.iter().map(|&b| (b, b)).collect();
    let mut next = 256;
    for b in 0..256u32 {
        if !printable.contains(&b) {
            chars.push((b, next));
            next += 1;
        }
    }
    chars.sort_unstable();
    chars
        .into_iter()
        .map(|(_, c)| char::from_u32(c).unwrap().to_string())
        .collect()
}

/// Deterministic weights of a shape, as a `matrix` (quantized) or F32 (vectors) GGUF tensor.
fn weight(shape: &[usize], salt: f64, matrix: GgmlDType) -> QTensor {
    let n: usize = shape.iter().product();
    let t = Tensor::arange(0u32, n as u32, &Device::Cpu)
        .unwrap()
        .to_dtype(DType::F64)
        .unwrap()
        .affine(0.37, salt)
        .unwrap()
        .sin()
        .unwrap()
        .affine(0.2, 0.0)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
        .reshape(shape)
        .unwrap();
    let dtype = if shape.len() == 2 {
        matrix
    } else {
        GgmlDType::F32
    };
    QTensor::quantize(&t, dtype).unwrap()
}

/// Writes a tiny GGUF of `arch` (`llama` or `qwen2`) with the given chat template.
fn write_model(dir: &Path, arch: &str, template: Template) -> PathBuf {
    write_shaped(dir, arch, template, SMALL)
}

/// [`write_model`] of a given [`Shape`].
fn write_shaped(dir: &Path, arch: &str, template: Template, shape: Shape) -> PathBuf {
    let Shape { dim, ffn, .. } = shape;
    // The matrix types of a Q4_K_M file: most in Q4_K, the sensitive ones in Q6_K.
    let dtype = |name: &str| match (shape.k_quants, name) {
        (false, _) => GgmlDType::Q8_0,
        (true, "token_embd.weight" | "attn_v.weight" | "ffn_down.weight") => GgmlDType::Q6K,
        (true, _) => GgmlDType::Q4K,
    };
    let mut tokens = byte_chars();
    let specials: &[&str] = match template {
        Template::ChatMl => &["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        Template::Llama3 => &[
            "<|begin_of_text|>",
            "<|end_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
        ],
    };
    tokens.extend(specials.iter().map(|s| (*s).to_owned()));
    let vocab = tokens.len();
    let eos = (vocab - 1) as u32;
    let chat_template = match template {
        Template::ChatMl => "{{'<|im_start|>' + message['role'] + '\\n'}}",
        Template::Llama3 => "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}",
    };
    let pre = if arch == "qwen2" {
        "qwen2"
    } else {
        "llama-bpe"
    };

    let s = |v: &str| Value::String(v.to_owned());
    let u = Value::U32;
    let metadata: Vec<(String, Value)> = vec![
        ("general.architecture".into(), s(arch)),
        (format!("{arch}.attention.head_count"), u(HEADS as u32)),
        (
            format!("{arch}.attention.head_count_kv"),
            u(KV_HEADS as u32),
        ),
        (format!("{arch}.block_count"), u(BLOCKS as u32)),
        (format!("{arch}.embedding_length"), u(dim as u32)),
        (format!("{arch}.context_length"), u(CONTEXT)),
        (
            format!("{arch}.rope.dimension_count"),
            u((dim / HEADS) as u32),
        ),
        (
            format!("{arch}.attention.layer_norm_rms_epsilon"),
            Value::F32(1e-5),
        ),
        ("tokenizer.ggml.model".into(), s("gpt2")),
        ("tokenizer.ggml.pre".into(), s(pre)),
        (
            "tokenizer.ggml.tokens".into(),
            Value::Array(tokens.iter().map(|t| s(t)).collect()),
        ),
        ("tokenizer.ggml.merges".into(), Value::Array(Vec::new())),
        ("tokenizer.ggml.eos_token_id".into(), u(eos)),
        ("tokenizer.chat_template".into(), s(chat_template)),
    ];

    let kv = dim / HEADS * KV_HEADS;
    let mut tensors: Vec<(String, QTensor)> = vec![
        (
            "token_embd.weight".into(),
            weight(&[vocab, dim], 0.1, dtype("token_embd.weight")),
        ),
        (
            "output_norm.weight".into(),
            weight(&[dim], 0.2, GgmlDType::F32),
        ),
    ];
    for b in 0..BLOCKS {
        let salt = b as f64;
        let mut add = |name: &str, shape: &[usize]| {
            tensors.push((
                format!("blk.{b}.{name}"),
                weight(shape, salt + name.len() as f64, dtype(name)),
            ));
        };
        add("attn_q.weight", &[dim, dim]);
        add("attn_k.weight", &[kv, dim]);
        add("attn_v.weight", &[kv, dim]);
        add("attn_output.weight", &[dim, dim]);
        add("ffn_gate.weight", &[ffn, dim]);
        add("ffn_up.weight", &[ffn, dim]);
        add("ffn_down.weight", &[dim, ffn]);
        add("attn_norm.weight", &[dim]);
        add("ffn_norm.weight", &[dim]);
        if arch == "qwen2" {
            add("attn_q.bias", &[dim]);
            add("attn_k.bias", &[kv]);
            add("attn_v.bias", &[kv]);
        }
    }

    let path = dir.join(if shape.k_quants {
        format!("tiny-{arch}-q4_k_m.gguf")
    } else {
        format!("tiny-{arch}.gguf")
    });
    let mut file = std::io::BufWriter::new(fs_err::File::create(&path).unwrap());
    let metadata: Vec<(&str, &Value)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let tensors: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    write(&mut file, &metadata, &tensors).unwrap();
    drop(file);
    path
}

fn request<'a>(system: &'a str, prompt: &'a str, max_tokens: usize) -> GenerateRequest<'a> {
    GenerateRequest {
        system,
        prompt,
        prefill: "",
        max_tokens,
        deadline: None,
        stop: &[],
    }
}

/// Loads, generates twice (same answer), and checks the bound of the context.
fn runs(model: &GgufModel) {
    let req = request("", "Hi", 5);
    let first = model.generate(&req).unwrap();
    assert!(first.output_tokens <= 5, "{first:?}");
    // The same answer again (timings differ from run to run).
    let second = model.generate(&req).unwrap();
    let answer = |g: &cairn_models::gguf::Generation| {
        (g.text.clone(), g.prompt_tokens, g.output_tokens, g.stop)
    };
    assert_eq!(answer(&first), answer(&second));
    assert_eq!(model.context_length(), CONTEXT as usize);
    let err = model.generate(&request("", "Hi", 60)).unwrap_err();
    assert_eq!(err.kind, BackendErrorKind::BadInput);
    assert!(err.message.contains("exceeds the context of 64"), "{err}");
}

#[test]
fn gguf_synthetic_qwen2_loads_and_uses_chatml() {
    let tmp = tempfile::tempdir().unwrap();
    let model = GgufModel::load(&write_model(tmp.path(), "qwen2", Template::ChatMl)).unwrap();
    assert_eq!(model.model_id(), "tiny-qwen2");
    // One token per byte: <|im_start|> "user\nHi" <|im_end|> "\n" <|im_start|> "assistant\n".
    assert_eq!(
        model.prompt_tokens(&request("", "Hi", 1)).unwrap(),
        1 + 7 + 1 + 1 + 1 + 10
    );
    // A system turn adds <|im_start|> "system\nS" <|im_end|> "\n".
    assert_eq!(
        model.prompt_tokens(&request("S", "Hi", 1)).unwrap(),
        21 + 1 + 8 + 1 + 1
    );
    // Digits one by one and punctuation split as Qwen2 does; bytes round-trip.
    let text = "x = 42; // é 日本";
    assert_eq!(model.decode(&model.encode(text).unwrap()).unwrap(), text);
    runs(&model);
}

#[test]
fn gguf_synthetic_llama_with_llama3_template() {
    let tmp = tempfile::tempdir().unwrap();
    let model = GgufModel::load(&write_model(tmp.path(), "llama", Template::Llama3)).unwrap();
    // <|begin_of_text|>, then <|start_header_id|> role <|end_header_id|> "\n\n" content
    // <|eot_id|> per turn, and the assistant's header with "\n\n".
    let user = 1 + 4 + 1 + 4 + 1;
    let assistant = 1 + 9 + 1 + 2;
    assert_eq!(
        model.prompt_tokens(&request("", "Hi", 1)).unwrap(),
        1 + user + assistant
    );
    let system = 1 + 6 + 1 + 3 + 1;
    assert_eq!(
        model.prompt_tokens(&request("S", "Hi", 1)).unwrap(),
        1 + system + user + assistant
    );
    runs(&model);
}

/// A qwen2 file stored as a Q4_K_M file is (Q4_K and Q6_K matrices, F32 vectors and QKV
/// biases, the output tied to the embedding): the types the offered model holds load and run.
#[test]
fn gguf_synthetic_qwen2_with_k_quants_loads_and_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_shaped(tmp.path(), "qwen2", Template::ChatMl, K_QUANTS);
    let mut file = fs_err::File::open(&path).unwrap();
    let content = candle_core::quantized::gguf_file::Content::read(&mut file).unwrap();
    let kind = |name: &str| content.tensor_infos[name].ggml_dtype;
    assert_eq!(kind("token_embd.weight"), GgmlDType::Q6K);
    assert_eq!(kind("blk.0.attn_q.weight"), GgmlDType::Q4K);
    assert_eq!(kind("blk.1.ffn_down.weight"), GgmlDType::Q6K);
    assert_eq!(kind("blk.0.attn_q.bias"), GgmlDType::F32);
    assert!(
        !content.tensor_infos.contains_key("output.weight"),
        "tied embeddings"
    );

    let model = GgufModel::load(&path).unwrap();
    assert_eq!(model.model_id(), "tiny-qwen2-q4_k_m");
    runs(&model);
}
