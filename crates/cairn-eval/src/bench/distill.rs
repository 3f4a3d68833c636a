//! `cairn bench distill`: what distillation costs per 100 captured requests. A synthetic
//! Claude Code store (sessions of 3 to 60 requests, tool outputs of 40 to 2,000 words) is
//! captured for real, then every window is distilled with a provider that counts what it is
//! sent and answers no item: the model calls and prompt size per 100 requests, whatever model
//! is used later. Prompt tokens are estimated at 4 characters per token.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_distill::{Distiller, Settle};
use cairn_llm::{Budget, Llm, Policy, Provider, ProviderError, Reply, Request, Usage};
use cairn_store::Store;

use super::{Lcg, claude_turn_with, pass_options};

/// Counts what it is sent; answers no item.
#[derive(Default)]
struct Counting {
    calls: Mutex<(u64, u64)>,
}

impl Provider for Counting {
    fn name(&self) -> &str {
        "counting"
    }
    fn model(&self) -> &str {
        "none"
    }
    fn complete(&self, r: &Request, _deadline: Instant) -> Result<Reply, ProviderError> {
        let chars = (r.system.chars().count() + r.prompt.chars().count()) as u64;
        let mut c = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        c.0 += 1;
        c.1 += chars;
        Ok(Reply {
            text: r#"{"items": []}"#.into(),
            model: "none".into(),
            usage: Usage {
                input_tokens: chars / 4,
                output_tokens: 4,
            },
            cost_usd: Some(0.0),
        })
    }
}

/// Runs the benchmark over about `requests` captured requests.
pub async fn run(requests: usize) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("temp dir")?;
    let home = tmp.path().join("home");
    let dir = home.join(".claude/projects/-home-dev-projects-bench");
    fs_err::create_dir_all(&dir)?;
    let mut rng = Lcg(7);
    let (mut made, mut sessions, mut minute) = (0usize, 0usize, 0usize);
    while made < requests {
        let id = format!("bench-{sessions:05}");
        let len = (3 + rng.next(58)).min(requests - made);
        let mut body = String::new();
        for t in 0..len {
            let output = 40 + rng.next(1_960);
            body.push_str(&claude_turn_with(&mut rng, &id, t, minute, output));
            minute += 3;
        }
        fs_err::write(dir.join(format!("{id}.jsonl")), body)?;
        made += len;
        sessions += 1;
    }
    let store = Store::open(&tmp.path().join("cairn.db")).await?;
    let report = cairn_capture::pass::run(&store, &pass_options(&home), &|_| {}).await?;
    let captured: u64 = report.frameworks.iter().map(|f| f.added).sum();
    let counting = Arc::new(Counting::default());
    let llm = Llm::new(
        counting.clone(),
        store.clone(),
        Policy {
            timeout: Duration::from_secs(60),
            retries: 0,
            backoff: Duration::from_millis(1),
            budget: Budget {
                calls: u32::MAX,
                usd: f64::MAX,
            },
        },
    );
    let d = Distiller::new(store.clone(), llm, None, Settle::default());
    let t = Instant::now();
    let run = d
        .run(chrono::Utc::now() + chrono::Duration::days(1), &|_, _| {})
        .await?;
    let took = t.elapsed();
    let (calls, chars) = *counting.calls.lock().unwrap_or_else(|p| p.into_inner());
    let per100 = |x: f64| 100.0 * x / captured.max(1) as f64;
    println!("synthetic Claude Code store: {sessions} sessions, {captured} requests captured");
    println!(
        "windows distilled: {} · model calls: {calls} ({:.1} per 100 requests; one per window)",
        run.windows,
        per100(calls as f64)
    );
    println!(
        "prompt: {chars} characters, about {} tokens ({:.0} tokens per 100 requests at 4 characters per token)",
        chars / 4,
        per100(chars as f64 / 4.0)
    );
    println!(
        "distillation's own work (windows, prompts, marks; no model time): {:.2} s",
        took.as_secs_f64()
    );
    Ok(())
}
