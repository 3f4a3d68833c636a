//! A loopback OpenAI-compatible endpoint standing in for the user's model as the turn
//! note's LLM judge (shared by the service's and the hook's tests).
use serde_json::{Value, json};

/// A loopback OpenAI-compatible endpoint standing in for the user's model as the LLM judge.
/// It answers each chat completion after `delay` the way a small model does for this prompt:
/// the numbered record about the staging port is needed, the rest are not. It counts the
/// requests it got.
pub fn fake_judge(
    delay: std::time::Duration,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let (base, count, _prompts) = recording_judge(delay);
    (base, count)
}

/// The texts the judge endpoint received, one per request (system and user messages joined).
pub type Prompts = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// [`fake_judge`] that also keeps every prompt it was sent.
pub fn recording_judge(
    delay: std::time::Duration,
) -> (
    String,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    Prompts,
) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let prompts = Prompts::default();
    let seen = count.clone();
    let kept = prompts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen = seen.clone();
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let l = line.to_ascii_lowercase();
                    if let Some(v) = l.strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                seen.fetch_add(1, Ordering::SeqCst);
                let req: Value = serde_json::from_slice(&body).unwrap();
                let prompt = req["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|m| m["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                kept.lock().unwrap().push(prompt.clone());
                let judgments: Vec<Value> = prompt
                    .split("<record n=\"")
                    .skip(1)
                    .map(|r| {
                        let n: u64 = r.split('"').next().unwrap().parse().unwrap();
                        let needed = if r.split("</record>").next().unwrap().contains("6543") {
                            0.93
                        } else {
                            0.04
                        };
                        json!({"n": n, "needed": needed})
                    })
                    .collect();
                std::thread::sleep(delay);
                let answer = json!({
                    "id": "chatcmpl-7f3a", "object": "chat.completion", "model": "qwen2.5:3b",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant",
                        "content": json!({"judgments": judgments}).to_string()}}],
                    "usage": {"prompt_tokens": 512, "completion_tokens": 61, "total_tokens": 573}
                })
                .to_string();
                let _ignored: std::io::Result<()> = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            });
        }
    });
    (base, count, prompts)
}
