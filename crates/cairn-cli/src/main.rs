//! # cairn
//!
//! The command-line face of Cairn: flags and glue only; every operation is a call into
//! `cairn-api` (through the running service when there is one, else on the store directly).
//!
//! Exit codes: 0 success; 1 failure; 2 bad usage or bad settings; 3 another Cairn already
//! runs (for `daemon`); 4 the service or store is unavailable.
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod bench;
mod bench_distill;
mod bench_note;
mod bench_replay;
mod bench_search;
mod cli_reference;
mod embed_cache;
mod eval;
mod eval_distill;
mod export_cli;
mod hook;
mod llm;
mod memory_tool;
mod note_eval;
mod ranker_data;
mod real_eval;
mod replay_cli;
mod review_cli;
mod turn_cli;

use anyhow::Context;
use cairn_api::{ApiError, Backend, Host, ServiceHandle, ServiceOptions, StartError, StartIntent};
use cairn_config::{Overrides, Paths, Settings};
use cairn_core::ErrorCode;
use cairn_core::api::{
    CaptureReport, ClearReport, ClearReq, MemoryPauseReq, MemorySetReq, MemoryState, SearchHit,
    SearchReq, SearchRes, Status,
};
use clap::{Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "Exit codes:
  0  success
  1  the command failed
  2  bad usage or an invalid setting (the message names the key, value and file)
  3  another Cairn is already running (cairn daemon)
  4  the service or the store is unavailable";

#[derive(Debug, Parser)]
#[command(name = "cairn", version, about = "Memory for AI coding agents", after_help = EXIT_CODES)]
struct Cli {
    /// Override a setting for this run: section.key=value (repeatable).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the CLI reference (docs/cli.md) from these definitions.
    #[command(hide = true)]
    CliReference,
    /// Run the headless service: owns the store, serves the API and the UI on loopback.
    Daemon {
        /// Folder of the built web UI to serve (default: service.ui_dir, else the UI installed
        /// with the program; never the current directory).
        #[arg(long, value_name = "DIR")]
        ui_dir: Option<PathBuf>,
    },
    /// Show the memory switch, counts, workers and where the data lives.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Switch memory on or off, or pause it (off stops capture and the search service).
    Memory {
        #[command(subcommand)]
        cmd: MemoryCmd,
    },
    /// Wipe everything remembered: logs, index, cursors (and notes with --notes).
    Clear {
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
        /// Also delete notes.
        #[arg(long)]
        notes: bool,
    },
    /// Read every agent's session stores now.
    Capture {
        /// Run one pass and exit (the service also captures on its own schedule).
        #[arg(long, required = true)]
        once: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write everything remembered to a new or empty folder in open formats: Markdown notes
    /// and items, JSONL records and item events, a manifest with a sha256 per file.
    Export {
        /// The folder (created; an existing one must be empty).
        dir: std::path::PathBuf,
        /// Only this project's records, items and notes.
        #[arg(long)]
        project: Option<String>,
        /// Only what happened on or after this date (YYYY-MM-DD) or time (RFC 3339).
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Read a folder `cairn export` wrote: everything checked first (a malformed file refuses
    /// the whole import), ids kept, what is stored already skipped.
    Import {
        /// The folder.
        dir: std::path::PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The review inbox: likely duplicates, contradictions, stale items (citing files or
    /// symbols gone from the project's working tree) and junk; `act` on an entry (merge,
    /// supersede, archive, keep) and `undo` any action.
    Review {
        #[command(subcommand)]
        command: Option<review_cli::ReviewCommand>,
        /// Only this project's entries.
        #[arg(long)]
        project: Option<String>,
        /// Only duplicate, contradiction, stale or junk.
        #[arg(long)]
        category: Option<String>,
        /// Print JSON instead of text.
        #[arg(long, global = true)]
        json: bool,
    },
    /// A project's procedures and pitfalls as the instruction file a framework reads
    /// (CLAUDE.md, AGENTS.md, GEMINI.md, QWEN.md, a Cursor rule), in a section Cairn marks:
    /// shown first; written only with --write; taken out with --remove.
    Skills {
        /// claude-code, codex, opencode, gemini-cli, qwen-code or cursor.
        #[arg(long)]
        framework: String,
        /// The project (default: the one of the working directory).
        #[arg(long)]
        project: Option<String>,
        /// The project's folder (default: the working directory).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// Write the section (create or update it; nothing else in the file changes).
        #[arg(long, conflicts_with = "remove")]
        write: bool,
        /// Take Cairn's section out of the file.
        #[arg(long)]
        remove: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Search everything remembered by its words.
    Search {
        /// The words (quotes for phrases).
        #[arg(required = true)]
        words: Vec<String>,
        /// Only this project (as `cairn search` prints it).
        #[arg(long)]
        project: Option<String>,
        /// Only this framework (claude-code, codex, gemini-cli, …).
        #[arg(long)]
        framework: Option<String>,
        /// Results from this date (YYYY-MM-DD or RFC 3339) come first.
        #[arg(long)]
        since: Option<String>,
        /// Results up to this date come first.
        #[arg(long)]
        until: Option<String>,
        /// At most this many results (1 to 200).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=200))]
        limit: u32,
        /// bm25 (keywords), dense (meaning) or hybrid (both, fused 0.7 / 0.3).
        #[arg(long, default_value = "hybrid", value_parser = ["bm25", "dense", "hybrid"])]
        mode: String,
        /// Re-rank the top 30 with the cross-encoder (when it is present).
        #[arg(long, overrides_with = "no_rerank")]
        rerank: bool,
        /// Do not re-rank.
        #[arg(long = "no-rerank", overrides_with = "rerank")]
        no_rerank: bool,
        /// Print one JSON array instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The search indexes.
    Index {
        #[command(subcommand)]
        what: IndexCmd,
    },
    /// Evaluations on public benchmarks.
    Eval {
        #[command(subcommand)]
        what: EvalCmd,
    },
    /// Benchmarks that print figures (use a release build).
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
    /// Serve Cairn's tools to an agent over MCP (stdio): search, open, explore, notes.
    /// A client of the running service; agents start it themselves (see `cairn integrate`).
    Mcp {
        /// Notes are read-only for this client.
        #[arg(long)]
        read_only: bool,
        /// The project the agent works in (default: from the working directory).
        #[arg(long)]
        project: Option<String>,
        /// Mount another store under /memories/NAME: NAME=user or NAME=project:<identity>,
        /// read-only unless it ends in :rw (repeatable; at most 7).
        #[arg(long = "mount", value_name = "NAME=STORE[:rw]")]
        mounts: Vec<String>,
    },
    /// Answer memory-tool commands (the `memory_20250818` tool's JSON, as a model sends it)
    /// with Cairn's notes: one command on stdin, or JSON lines of them; prints the tool
    /// result to hand back to the model.
    #[command(
        after_help = "Paths: /memories is the caller's notes (the user's, or the project's with --project); /memories/NAME is a store added with --mount.\nOutput: the result's text (exit 5 when the command was refused: return it with is_error), or with --json, --stream or several commands one JSON object per command: {\"content\", \"is_error\", \"sha256\"}.\nExample: echo '{\"command\":\"view\",\"path\":\"/memories\"}' | cairn memory-tool"
    )]
    MemoryTool {
        /// The caller's own notes are this project's (default: the user's notes).
        #[arg(long)]
        project: Option<String>,
        /// Refuse every write.
        #[arg(long)]
        read_only: bool,
        /// Mount another store under /memories/NAME: NAME=user or NAME=project:<identity>,
        /// read-only unless it ends in :rw (repeatable; at most 7).
        #[arg(long = "mount", value_name = "NAME=STORE[:rw]")]
        mounts: Vec<String>,
        /// Print each result as JSON: {"content", "is_error", "sha256"}.
        #[arg(long)]
        json: bool,
        /// Answer each JSON line of stdin as it arrives (one JSON result per line).
        #[arg(long)]
        stream: bool,
        /// The application's name, kept in the notes' versions as agent:<client>.
        #[arg(long, default_value = "memory-tool")]
        client: String,
    },
    /// Titled Markdown notes.
    Notes {
        #[command(subcommand)]
        what: NotesCmd,
    },
    /// Register Cairn's MCP server and hooks with an agent framework (or remove them, or
    /// list them).
    #[command(
        after_help = "Frameworks: claude-code, codex, gemini-cli, opencode, cursor, qwen-code, crush, copilot-cli, goose.\nHooks (the turn note, the note titles at session start) go in with the MCP server: claude-code, codex, gemini-cli, qwen-code, cursor (their hook files), opencode (a plugin file); codex asks you to trust them once (open codex, /hooks, Trust).\nEvery edited file is backed up first; --remove puts it back."
    )]
    Integrate {
        /// The framework.
        #[arg(required_unless_present = "list")]
        framework: Option<String>,
        /// Remove the registration instead.
        #[arg(long)]
        remove: bool,
        /// Show what is registered where.
        #[arg(long, conflicts_with_all = ["framework", "remove"])]
        list: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The model provider distillation calls: test it, see today's calls and cost, keep
    /// API keys in the OS keyring.
    #[command(
        after_help = "Providers (llm.provider): claude-cli, gemini-cli (your own agent CLI, run with no tools; codex-cli is refused: it cannot be made tool-less), anthropic, openai (any OpenAI-compatible endpoint), local (a GGUF file)."
    )]
    Llm {
        #[command(subcommand)]
        what: LlmCmd,
    },
    /// Open a record, an item or a note whole (an item with its history, relations and
    /// source requests).
    Open {
        /// The id, as search prints it (r_…, i_…, n_…).
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The turn note an agent's hook would get for a message: at most three earlier things
    /// this turn needs, or nothing (logged, like a hook's, unless --dry-run).
    TurnNote {
        /// The user's message.
        prompt: String,
        /// The asking framework (as `cairn integrate --list` names it).
        #[arg(long, default_value = "claude-code")]
        framework: String,
        /// The project identity the turn is in (default: the current folder's, as a hook
        /// would name it).
        #[arg(long)]
        project: Option<String>,
        /// The asking session: its own records and items are left out.
        #[arg(long)]
        session: Option<String>,
        /// Compute the note but log nothing.
        #[arg(long)]
        dry_run: bool,
        /// Ask as at this moment (RFC 3339): only what was remembered before it can be shown,
        /// and dates in the message ("yesterday") are read against it.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Why a turn's note said what it said: each candidate's probability and the ranker's
    /// inputs. --not-useful / --useful mark a shown entry (a label for the next ranker
    /// training); --undo removes the mark.
    Why {
        /// The turn (`t_…`), or `last`.
        #[arg(default_value = "last")]
        turn: String,
        /// Mark this shown entry not useful (repeatable).
        #[arg(long, value_name = "ID")]
        not_useful: Vec<String>,
        /// Mark this shown entry useful (repeatable).
        #[arg(long, value_name = "ID")]
        useful: Vec<String>,
        /// Remove this entry's mark (repeatable).
        #[arg(long, value_name = "ID")]
        undo: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The turn note's ranker (LightGBM).
    Ranker {
        #[command(subcommand)]
        what: RankerCmd,
    },
    /// List memory items, newest first.
    Items {
        /// Only this project's.
        #[arg(long)]
        project: Option<String>,
        /// Only those distilled from this conversation (FRAMEWORK:SESSION_ID).
        #[arg(long, value_name = "FRAMEWORK:SESSION_ID")]
        conversation: Option<String>,
        /// Include archived and superseded items.
        #[arg(long)]
        all: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Distil settled conversations into memory items (the service also does it on its own
    /// when the machine is quiet).
    #[command(
        after_help = "A conversation is settled when quiet for an hour or a day old. One model request per settled window; the day's budget (llm.daily_calls, llm.daily_usd) applies."
    )]
    #[command(group(clap::ArgGroup::new("what").required(true).args(["now", "rebuild", "sleep"])))]
    Distill {
        /// Every settled window now, whatever the machine is doing.
        #[arg(long)]
        now: bool,
        /// The nightly tidy-up now: relate neighbouring items, re-score, archive the old unused
        /// ones, rewrite the profiles whose items changed (the service does it once a day).
        #[arg(long)]
        sleep: bool,
        /// Distil again over the whole log (or since --since) with the current provider and
        /// prompts; items found again keep their ids; prints what was added, changed, dropped.
        #[arg(long)]
        rebuild: bool,
        /// With --rebuild: only requests made from this date on (YYYY-MM-DD).
        #[arg(long, requires = "rebuild", value_name = "DATE")]
        since: Option<String>,
        /// Print JSON: windows distilled, items kept and dropped with reasons, model calls, tokens.
        #[arg(long)]
        json: bool,
    },
    /// Answer an agent's hook: reads the hook's JSON on standard input and prints what the
    /// agent adds to its context (at session start, the project's note titles). Fails open:
    /// prints nothing and exits 0 within 150 ms when Cairn is not running or memory is off.
    #[command(
        after_help = "Hooks (framework event): claude-code SessionStart|UserPromptSubmit, codex SessionStart|UserPromptSubmit, gemini-cli SessionStart|BeforeAgent, qwen-code SessionStart|UserPromptSubmit, cursor sessionStart|beforeSubmitPrompt, opencode session.created|chat.message (run by Cairn's OpenCode plugin).\nAn unknown framework or event exits 2 with a message on standard error."
    )]
    Hook {
        /// The framework, as `cairn integrate --list` names it.
        framework: String,
        /// The event, as the framework spells it.
        event: String,
    },
    /// Show the config file's path or the effective settings.
    Config {
        #[command(subcommand)]
        what: ConfigCmd,
    },
}

#[derive(Debug, Subcommand)]
enum MemoryCmd {
    /// Switch memory on (also ends a pause).
    On,
    /// Switch memory off until switched on.
    Off,
    /// Pause memory: off now, on again by itself at the end; what happens meanwhile is never
    /// captured, also after the pause.
    #[command(
        after_help = "Examples: cairn memory pause 15m | 1h | 90m | 2h | tomorrow | until-resumed; cairn memory pause --until 2026-12-02T18:00:00+01:00\n\"tomorrow\" is the next midnight in the local time zone of the process that runs the service (the TZ environment variable, else the system's)."
    )]
    Pause {
        /// How long: 15m, 1h, <N>m, <N>h (at most 30 days), tomorrow or until-resumed.
        #[arg(required_unless_present = "until", conflicts_with = "until")]
        duration: Option<String>,
        /// Or until this time (RFC 3339, e.g. 2026-12-02T18:00:00+01:00).
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum IndexCmd {
    /// Rebuild the keyword and vector indexes from the logs alone (no model call).
    Rebuild {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Copy the vector index to a Qdrant server or cluster from the store's vectors (no
    /// model call), check it, and name it in the config file (in use from the next start).
    Migrate {
        /// Where to: remote.
        #[arg(long, value_parser = ["remote"])]
        to: String,
        /// The server's gRPC URL (default: index.url of the config file).
        #[arg(long)]
        url: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Store the remote Qdrant server's API key in the OS keyring (read from stdin).
    SetKey,
}

#[derive(Debug, Subcommand)]
enum RankerCmd {
    /// Train the ranker on a labelled LoCoMo-format file (the owned set:
    /// data/ranker/histories.json), each question asked of a real service holding its
    /// conversation; print the cross-fitted figures. Writes the model to --out (default:
    /// this machine's ranker, used by the service instead of the shipped one) and the
    /// figures beside it.
    Train {
        /// The labelled file.
        file: PathBuf,
        /// Where to write the model.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Add the entries marked useful or not useful in this machine's injection log.
        #[arg(long)]
        labels: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum EvalCmd {
    /// The turn note on a LoCoMo-format file: each question a turn against its own
    /// conversation's memory (note rate, hit rate, precision of shown entries) and against
    /// another conversation's (correct silence), with latency. The figures show in the app.
    Note {
        /// The LoCoMo-format file.
        file: PathBuf,
        /// The audit's corrections (JSON), for audit-corrected evidence.
        #[arg(long)]
        audit: Option<PathBuf>,
        /// Only the first N conversations.
        #[arg(long, value_name = "N")]
        conversations: Option<usize>,
        /// Also write every question's candidates (probability, evidence or not, shown, the
        /// ranker's inputs) to this file, one JSON line per question, for analysis.
        #[arg(long, value_name = "FILE")]
        candidates: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The turn note on your own captured history: each captured request (oldest first)
    /// asked for its note as its hook would have asked at that moment, labelled by what its
    /// answer went on to reuse of earlier sessions; hit rate, precision and silence beside
    /// plain search's top 3 (docs/replay.md). The figures show in the app.
    Replay {
        /// Only requests made on or after this date (YYYY-MM-DD).
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Only requests made on or before this date (YYYY-MM-DD).
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
        /// Only this project's requests (its identity, or a working directory).
        #[arg(long, value_name = "P")]
        project: Option<String>,
        /// At most the latest N requests in range.
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Also write one JSON line per request (request, at, session, needed, shown) to
        /// this file.
        #[arg(long, value_name = "FILE")]
        labels: Option<PathBuf>,
    },
    /// How the turn note would trade at each bar from 0.3 to 0.9, recomputed from the file
    /// `cairn eval note --candidates FILE` wrote (no service, no model).
    Bars {
        /// The candidates file.
        file: PathBuf,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Retrieval recall on a LoCoMo-format file.
    Locomo {
        /// The LoCoMo JSON file.
        file: PathBuf,
        /// The audit's corrections (JSON), for audit-corrected evidence.
        #[arg(long)]
        audit: Option<PathBuf>,
        /// Print JSON rows instead of a table.
        #[arg(long)]
        json: bool,
        /// Instead of the default setups, measure the retriever with these parameters (a
        /// JSON object of tuning fields, e.g. '{"dense_weight":0.4}'); repeatable.
        #[arg(long = "tuning", value_name = "JSON")]
        tunings: Vec<String>,
    },
    /// Retrieval recall on real coding-agent histories (the corpus in `data/real`: public
    /// repositories' Aider and SpecStory histories, hand-labelled), captured and indexed by
    /// Cairn's own code; each labelled request searched as it was asked. The retriever and
    /// plain BM25 side by side, per split.
    Real {
        /// The corpus folder (sources.json, split.json, labels/hand.jsonl, raw/).
        #[arg(default_value = "data/real")]
        dir: PathBuf,
        /// Which repositories: `train` (for choices), `heldout` (final figures only) or `all`.
        #[arg(long, default_value = "train")]
        split: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Instead of the default setups, measure the retriever with these parameters (a
        /// JSON object of tuning fields); repeatable.
        #[arg(long = "tuning", value_name = "JSON")]
        tunings: Vec<String>,
        /// Also write one JSON line per measured request and setup to this file: the
        /// request, the turns it needs, where the first of them ranked, and the top three.
        #[arg(long, value_name = "FILE")]
        rows: Option<PathBuf>,
    },
    /// Distil LoCoMo conversations with the configured model provider and measure how many
    /// questions' evidence turns the items' sources cover, items per session, and model calls
    /// and tokens per 100 requests.
    Distill {
        /// The LoCoMo JSON file.
        file: PathBuf,
        /// The audit's corrections (JSON), for audit-corrected evidence.
        #[arg(long)]
        audit: Option<PathBuf>,
        /// Record the provider's answers in this folder, and replay those already there.
        #[arg(long, value_name = "DIR")]
        recordings: Option<PathBuf>,
        /// Only the first N conversations.
        #[arg(long, value_name = "N")]
        conversations: Option<usize>,
        /// Only the first N sessions of each conversation.
        #[arg(long, value_name = "N")]
        sessions: Option<usize>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCmd {
    /// Model calls and prompt size per 100 captured requests: a synthetic Claude Code store
    /// captured for real, every window distilled with a provider that only counts.
    Distill {
        /// Requests in the synthetic store.
        #[arg(long, default_value_t = 1_000)]
        requests: usize,
    },
    /// Full and incremental capture of a synthetic store, and BM25 query latency. With
    /// --size-mib, instead: one synthetic session file of that size captured in a fresh
    /// process (turns, duration, MiB/s and the process's peak RSS).
    Capture {
        /// Requests in the synthetic store.
        #[arg(long, default_value_t = 100_000)]
        requests: usize,
        /// Records in the store when search latency is measured.
        #[arg(long, default_value_t = 150_000)]
        search_records: usize,
        /// Capture one synthetic Claude Code session file of this many MiB instead.
        #[arg(long, value_name = "MIB", conflicts_with_all = ["requests", "search_records"])]
        size_mib: Option<u64>,
        /// Print the figures as JSON (with --size-mib).
        #[arg(long, requires = "size_mib")]
        json: bool,
    },
    /// The measuring half of `bench capture --size-mib`, run in a fresh process.
    #[command(hide = true)]
    CapturePhase {
        #[arg(long)]
        home: PathBuf,
        #[arg(long)]
        db: PathBuf,
    },
    /// Search at scale: restart, RAM at idle, query-vector and fused-query latency, and
    /// recall@10 of the quantized index, as a synthetic store grows.
    Search {
        /// Record counts at which to measure, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [15_000usize, 150_000])]
        steps: Vec<usize>,
        /// Vectors per record (one summary key, one cue, the rest body chunks).
        #[arg(long, default_value_t = 9)]
        points_per_record: usize,
        /// Queries per measurement.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Keep the synthetic store in this folder.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The embedding model's folder.
        #[arg(long)]
        embedder: Option<PathBuf>,
        /// Print one JSON object per step (records, points, restart_s, rss_idle_mib,
        /// rss_after_mib, recall_at_10, fused_p50_ms, fused_p95_ms, …) instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// The measuring half of `bench search`, run in a fresh process.
    #[command(hide = true)]
    SearchPhase {
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        queries: usize,
        #[arg(long)]
        embedder: PathBuf,
    },
    /// The turn note at 150,000 records (service latency p50/p95, share with a note, RSS)
    /// and the hook's round trip with the service down and up: how many notes the service
    /// decided on reached the agent through the real hook, and the hook's p50/p95/p99.
    Note {
        /// Records in the synthetic store.
        #[arg(long, default_value_t = 150_000)]
        records: usize,
        /// Turn notes asked (dry runs).
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Run the hook with a CPU hog on every core beside it (a build running beside the
        /// agent), 200 hook runs instead of 30.
        #[arg(long)]
        load: bool,
        /// The hooks' deadline the service publishes, in milliseconds (default: the
        /// `hook.deadline_ms` in effect).
        #[arg(long, value_name = "MS")]
        deadline: Option<u32>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// How long `cairn eval replay` takes over a large history: a synthetic Claude Code store
    /// captured by `cairn capture --once` and replayed by `cairn eval replay`, each timed.
    Replay {
        /// Requests in the synthetic store.
        #[arg(long, default_value_t = 10_000)]
        requests: usize,
        /// Keep the history and its captured store in this folder (new or empty); a folder an
        /// earlier run filled with the same number of requests is replayed again without
        /// capturing.
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum NotesCmd {
    /// The note titles for an agent's instructions: the project's first, then yours, at most
    /// 1,500 characters in all.
    Titles {
        /// The project (default: the one of the working directory).
        #[arg(long)]
        project: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum LlmCmd {
    /// Send one tiny request to the configured provider; print the answer, tokens, cost and
    /// how long it took (exits 1 when no valid answer came back).
    Test {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Today's calls and cost against the daily budget, and the latest calls.
    Usage {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Download the local model Cairn offers (Qwen2.5-1.5B-Instruct, Q4_K_M GGUF, 1.1 GB,
    /// Apache-2.0), pinned by revision and sha256: prints its size, memory and speed, then
    /// downloads it (running this is the choice; it asks nothing). HF_ENDPOINT names a mirror.
    Download {
        /// Then make it the model provider (llm.provider = "local", llm.model_path = the file).
        #[arg(long = "use")]
        use_it: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Store an API key in the OS keyring, read from standard input (typed without echo at a
    /// terminal, or piped in); never give it as an argument.
    SetKey {
        /// The API the key is for.
        api: KeyApi,
    },
    /// Remove an API key from the OS keyring.
    ForgetKey {
        /// The API the key is for.
        api: KeyApi,
    },
}

/// The APIs that take a key.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum KeyApi {
    Anthropic,
    Openai,
}

impl KeyApi {
    fn name(self) -> &'static str {
        match self {
            KeyApi::Anthropic => "anthropic",
            KeyApi::Openai => "openai",
        }
    }
}

#[derive(Debug, Subcommand)]
enum ConfigCmd {
    /// Print the config file's path.
    Path,
    /// Print the effective settings (defaults, file, environment and --set layered).
    Show,
}

/// A failure with its exit code.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let error = e.into();
        let code = match error.downcast_ref::<ApiError>().map(|e| e.code) {
            Some(ErrorCode::BadRequest) => 2,
            Some(ErrorCode::Unavailable) => 4,
            _ => 1,
        };
        Self { code, error }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors.
            let code = if e.use_stderr() { 2 } else { 0 };
            if let Err(err) = e.print() {
                eprintln!("cairn: {err}");
            }
            return ExitCode::from(code);
        }
    };
    // Hooks answer before settings, logging or the async runtime exist: they must cost
    // nothing and print only what the agent expects.
    if matches!(cli.command, Command::CliReference) {
        use clap::CommandFactory;
        let mut root = Cli::command();
        root.build();
        print!("{}", cli_reference::markdown(&root));
        return ExitCode::SUCCESS;
    }
    if let Command::Hook { framework, event } = &cli.command {
        return hook::main(framework, event);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // A closed pipe (`cairn status | head`) is not a failure.
            if f.error.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            // A refused memory-tool command has printed its message as the result.
            if !f.error.to_string().is_empty() {
                eprintln!("cairn: {:#}", f.error);
            }
            ExitCode::from(f.code)
        }
    }
}

/// `cairn skills` in text.
fn print_skills(p: &cairn_core::api::SkillsPreview, project: &str) {
    match p.action.as_deref() {
        Some("created") => println!("Wrote Cairn's section into {} (a new section).", p.file),
        Some("updated") => println!("Updated Cairn's section in {}.", p.file),
        Some("unchanged") => println!("{} already holds this section; nothing written.", p.file),
        Some("removed") => println!("Took Cairn's section out of {}.", p.file),
        Some("absent") => println!("{} holds no section of Cairn's; nothing to do.", p.file),
        Some(other) => println!("{}: {other}", p.file),
        None => {
            if p.section.is_empty() {
                println!(
                    "Project {project} has no procedure or pitfall yet; there is nothing to write into {}.",
                    p.file
                );
                return;
            }
            let state = match (&p.current, p.up_to_date) {
                (_, true) => "holds this section already",
                (Some(_), false) => "holds an older section of Cairn's (--write updates it)",
                (None, false) if p.exists => {
                    "has no section of Cairn's yet (--write adds it at the end)"
                }
                (None, false) => "does not exist yet (--write creates it)",
            };
            println!(
                "{} {} ({} procedures and pitfalls). The section:\n",
                p.file,
                state,
                p.entries.len()
            );
            print!("{}", p.section);
        }
    }
}

/// The project of the working directory, as capture identifies projects.
fn current_project() -> Option<String> {
    std::env::current_dir()
        .ok()
        .map(|d| cairn_text::project::identify(&d))
}

fn format_integrations(list: &cairn_core::api::IntegrationList) -> String {
    let mut out = format!(
        "{:<12} {:<58} {:<14} {}\n",
        "FRAMEWORK", "MCP CONFIG", "HOOKS", "MCP"
    );
    let mut footnotes = Vec::new();
    for i in &list.integrations {
        let state = match (i.installed, i.current, i.detected) {
            (true, true, _) => "installed",
            (true, false, _) => "installed (another cairn binary: run `cairn integrate` again)",
            (false, _, true) => "not installed",
            (false, _, false) => "not installed (framework not found)",
        };
        let hooks = match i.hooks.as_deref() {
            None => "-",
            Some("not_installed") => "not installed",
            Some(other) => other,
        };
        out.push_str(&format!(
            "{:<12} {:<58} {:<14} {}\n",
            i.framework, i.path, hooks, state
        ));
        if let Some(path) = &i.hooks_path {
            footnotes.push(format!("{} hooks: {path}", i.framework));
        }
        if let Some(note) = &i.hooks_note {
            footnotes.push(format!("{}: {note}", i.framework));
        }
        if i.installed
            && let Some(manual) = &i.manual
        {
            footnotes.push(format!("{} (by hand): {manual}", i.framework));
        }
    }
    if !footnotes.is_empty() {
        out.push('\n');
        out.push_str(&footnotes.join("\n"));
    }
    out.trim_end().to_owned()
}

fn format_change(c: &cairn_core::api::IntegrationChange) -> String {
    let what = match c.action.as_str() {
        "installed" => "Registered Cairn's MCP server in",
        "updated" => "Updated Cairn's MCP registration in",
        "already_installed" => "Already registered in",
        "removed" => "Removed Cairn's MCP registration from",
        _ => "Cairn was not registered in",
    };
    let mut out = format!("{what} {} ({}).", c.path, c.framework);
    if let Some(b) = &c.backup {
        out.push_str(&format!("\nBackup of the previous file: {b}"));
    }
    if let (Some(action), Some(path)) = (&c.hooks, &c.hooks_path) {
        let what = match action.as_str() {
            "installed" => "Installed Cairn's hooks in",
            "updated" => "Updated Cairn's hooks in",
            "already_installed" => "Cairn's hooks already in",
            "removed" => "Removed Cairn's hooks from",
            _ => "No Cairn hooks in",
        };
        out.push_str(&format!("\n{what} {path}."));
        if let Some(b) = c
            .hooks_backup
            .as_ref()
            .filter(|b| c.backup.as_ref() != Some(*b))
        {
            out.push_str(&format!("\nBackup of the previous hook file: {b}"));
        }
    }
    for n in &c.notes {
        out.push_str(&format!("\nNote: {n}"));
    }
    if let Some(manual) = c.manual.as_ref().filter(|_| c.action != "removed") {
        out.push_str(&format!("\nTo do by hand: {manual}"));
    }
    out
}

fn run(cli: Cli) -> Result<(), Failure> {
    let paths = Paths::from_env().map_err(|e| Failure {
        code: 2,
        error: e.into(),
    })?;
    let loaded =
        Settings::load(&paths, &Overrides(cli.set.clone()), std::env::vars()).map_err(|e| {
            Failure {
                code: 2,
                error: e.into(),
            }
        })?;
    let component = match cli.command {
        Command::Daemon { .. } => "daemon",
        Command::Mcp { .. } => "mcp",
        Command::MemoryTool { .. } => "memory-tool",
        _ => "cli",
    };
    let stderr_level = if component == "daemon" {
        "info"
    } else {
        "error"
    };
    let _log = cairn_api::logging::init(&paths, &loaded.settings, component, stderr_level)
        .with_context(|| format!("cannot open the log dir {}", paths.logs.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cairn")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Daemon { ui_dir } => daemon(paths, loaded.settings, loaded.file, ui_dir).await,
            Command::Bench {
                what:
                    BenchCmd::Capture {
                        size_mib: Some(size_mib),
                        json,
                        ..
                    },
            } => bench::capture_file(size_mib, json)
                .await
                .map_err(Failure::from),
            Command::Bench {
                what:
                    BenchCmd::Capture {
                        requests,
                        search_records,
                        size_mib: None,
                        ..
                    },
            } => bench::capture(requests, search_records)
                .await
                .map_err(Failure::from),
            Command::Bench {
                what: BenchCmd::Distill { requests },
            } => bench_distill::run(requests).await.map_err(Failure::from),
            Command::Bench {
                what: BenchCmd::CapturePhase { home, db },
            } => bench::capture_phase(&home, &db)
                .await
                .map_err(Failure::from),
            Command::Bench {
                what:
                    BenchCmd::Search {
                        steps,
                        points_per_record,
                        queries,
                        dir,
                        embedder,
                        json,
                    },
            } => bench_search::run(bench_search::Args {
                steps,
                points_per_record,
                queries,
                dir,
                embedder,
                json,
            })
            .await
            .map_err(Failure::from),
            Command::Bench {
                what:
                    BenchCmd::SearchPhase {
                        dir,
                        queries,
                        embedder,
                    },
            } => bench_search::phase(&dir, queries, &embedder)
                .await
                .map_err(Failure::from),
            Command::Bench {
                what:
                    BenchCmd::Note {
                        records,
                        queries,
                        load,
                        deadline,
                        json,
                    },
            } => bench_note::run(
                &loaded.settings,
                bench_note::Args {
                    records,
                    queries,
                    load,
                    deadline_ms: deadline.unwrap_or(loaded.settings.hook.deadline_ms),
                    json,
                },
            )
            .await
            .map_err(Failure::from),
            Command::Bench {
                what:
                    BenchCmd::Replay {
                        requests,
                        home,
                        json,
                    },
            } => bench_replay::run(requests, json, home.as_deref()).map_err(Failure::from),
            Command::Index {
                what: IndexCmd::Rebuild { json },
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = call_with_progress::<cairn_core::api::IndexReport>(
                    &backend,
                    "index_rebuild",
                    "indexing",
                    json,
                )
                .await;
                backend.close().await;
                let r = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    println!(
                        "Rebuilt {} records and {} vectors from the logs in {} ms.",
                        r.records, r.vectors, r.duration_ms
                    );
                }
                Ok(())
            }
            Command::Index {
                what: IndexCmd::Migrate { to, url, json },
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let req = cairn_core::api::IndexMigrateReq { to, url };
                let res = call_with_progress_req::<_, cairn_core::api::IndexMigrateReport>(
                    &backend,
                    "index_migrate",
                    &req,
                    "indexing",
                    json,
                )
                .await;
                backend.close().await;
                let r = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    println!(
                        "Copied {} vectors to {} ({} points in its collection) in {} ms. {} now names it (index.backend = \"remote\"): restart Cairn to search it.",
                        r.points, r.url, r.collection_points, r.duration_ms, r.config_file
                    );
                }
                Ok(())
            }
            Command::Index {
                what: IndexCmd::SetKey,
            } => {
                let key = llm::read_key("Qdrant")?;
                cairn_vectors::store_key(cairn_vectors::REMOTE_KEY_USER, &key)
                    .map_err(|e| anyhow::anyhow!("cannot store the key in the OS keyring: {}", e.message))?;
                println!("Stored the remote Qdrant API key in the OS keyring.");
                Ok(())
            }
            Command::Eval {
                what:
                    EvalCmd::Locomo {
                        file,
                        audit,
                        json,
                        tunings,
                    },
            } => eval::run_locomo(
                &paths,
                &loaded.settings,
                &file,
                audit.as_deref(),
                json,
                &tunings,
            )
            .await
            .map_err(Failure::from),
            Command::Eval {
                what:
                    EvalCmd::Note {
                        file,
                        audit,
                        conversations,
                        candidates,
                        json,
                    },
            } => note_eval::eval(
                &paths,
                &loaded.settings,
                &file,
                audit.as_deref(),
                conversations,
                candidates.as_deref(),
                json,
            )
            .await
            .map(|_| ())
            .map_err(Failure::from),
            Command::Eval {
                what:
                    EvalCmd::Real {
                        dir,
                        split,
                        json,
                        tunings,
                        rows,
                    },
            } => real_eval::run(
                &paths,
                &loaded.settings,
                &dir,
                &split,
                json,
                &tunings,
                rows.as_deref(),
            )
                .await
                .map(|_| ())
                .map_err(Failure::from),
            Command::Eval {
                what:
                    EvalCmd::Replay {
                        since,
                        until,
                        project,
                        limit,
                        json,
                        labels,
                    },
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let req = cairn_core::api::ReplayReq {
                    since,
                    until,
                    project,
                    limit,
                    rows: false,
                };
                let res = replay_cli::run(&backend, req, json, labels.as_deref()).await;
                backend.close().await;
                res.map_err(Failure::from)
            }
            Command::Eval {
                what: EvalCmd::Bars { file, json },
            } => note_eval::bars(&file, json)
                .map(|_| ())
                .map_err(Failure::from),
            Command::Ranker {
                what:
                    RankerCmd::Train {
                        file,
                        out,
                        labels,
                        json,
                    },
            } => note_eval::train(&paths, &loaded.settings, &file, out, labels, json)
                .await
                .map(|_| ())
                .map_err(Failure::from),
            Command::TurnNote {
                prompt,
                framework,
                project,
                session,
                dry_run,
                at,
                json,
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                // The project the command runs in, as a hook would name it.
                let project = project.or_else(|| {
                    std::env::current_dir()
                        .ok()
                        .map(|d| cairn_text::project::identify(&d))
                });
                let req = cairn_core::api::TurnNoteReq {
                    framework,
                    project,
                    session_id: session,
                    turn_id: None,
                    prompt,
                    context: Vec::new(),
                    dry_run,
                    at,
                };
                let res = turn_cli::turn_note(&backend, req, json).await;
                backend.close().await;
                res.map_err(Failure::from)
            }
            Command::Why {
                turn,
                not_useful,
                useful,
                undo,
                json,
            } => {
                let marks: Vec<(String, Option<String>)> = not_useful
                    .into_iter()
                    .map(|id| (id, Some("not_useful".to_owned())))
                    .chain(useful.into_iter().map(|id| (id, Some("useful".to_owned()))))
                    .chain(undo.into_iter().map(|id| (id, None)))
                    .collect();
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = turn_cli::why(&backend, turn, marks, json).await;
                backend.close().await;
                res.map_err(Failure::from)
            }
            Command::Eval {
                what:
                    EvalCmd::Distill {
                        file,
                        audit,
                        recordings,
                        conversations,
                        sessions,
                        json,
                    },
            } => eval_distill::run(
                &paths,
                &loaded.settings,
                &file,
                audit.as_deref(),
                recordings,
                conversations,
                sessions,
                json,
            )
            .await
            .map(|_| ())
            .map_err(Failure::from),
            Command::Llm {
                what: LlmCmd::Test { json },
            } => llm::test(&paths, &loaded.settings, loaded.file.clone(), json)
                .await
                .map_err(Failure::from),
            Command::Llm {
                what: LlmCmd::Usage { json },
            } => llm::usage(&paths, &loaded.settings, loaded.file.clone(), json)
                .await
                .map_err(Failure::from),
            Command::Llm {
                what: LlmCmd::Download { use_it, json },
            } => llm::download(&paths, &loaded.settings, loaded.file.clone(), use_it, json)
                .await
                .map_err(Failure::from),
            Command::Llm {
                what: LlmCmd::SetKey { api },
            } => llm::set_key(api.name()).map_err(Failure::from),
            Command::Llm {
                what: LlmCmd::ForgetKey { api },
            } => llm::forget_key(api.name()).map_err(Failure::from),
            // Answered in `main` before settings, logging and the runtime.
            Command::Hook { .. } | Command::CliReference => Ok(()),
            Command::Config {
                what: ConfigCmd::Path,
            } => {
                println!("{}", loaded.file.display());
                Ok(())
            }
            Command::Config {
                what: ConfigCmd::Show,
            } => {
                print!("{}", loaded.settings.to_toml());
                Ok(())
            }
            Command::Status { json } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let status = backend.status().await;
                backend.close().await;
                let status = status?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&status)?);
                } else {
                    print_status(&status)?;
                }
                Ok(())
            }
            Command::Memory { cmd } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res: Result<MemoryState, ApiError> = match cmd {
                    MemoryCmd::On | MemoryCmd::Off => {
                        let req = MemorySetReq {
                            enabled: matches!(cmd, MemoryCmd::On),
                        };
                        backend.call_typed("memory_set", &req).await
                    }
                    MemoryCmd::Pause { duration, until } => {
                        let req = MemoryPauseReq {
                            duration,
                            until,
                        };
                        backend.call_typed("memory_pause", &req).await
                    }
                };
                backend.close().await;
                let res = res?;
                println!("Memory is {}.", memory_text(&res, true));
                Ok(())
            }
            Command::Capture { once: _, json } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = capture_with_progress(&backend, json).await;
                backend.close().await;
                let report = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    print_capture(&report)?;
                }
                Ok(())
            }
            Command::Export {
                dir,
                project,
                since,
                json,
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = export_cli::export(&backend, &dir, project, since, json).await;
                backend.close().await;
                Ok(res?)
            }
            Command::Skills {
                framework,
                project,
                dir,
                write,
                remove,
                json,
            } => {
                let dir = match dir {
                    Some(d) => d,
                    None => std::env::current_dir().context("cannot read the working directory")?,
                };
                let dir = std::path::absolute(&dir)
                    .with_context(|| format!("cannot make {} absolute", dir.display()))?;
                let project = project
                    .or_else(|| Some(cairn_text::project::identify(&dir)))
                    .unwrap_or_default();
                let req = cairn_core::api::SkillsReq {
                    project,
                    framework,
                    dir: dir.display().to_string(),
                    remove,
                };
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let method = if write || remove {
                    "skills_write"
                } else {
                    "skills_preview"
                };
                let res: Result<cairn_core::api::SkillsPreview, ApiError> =
                    backend.call_typed(method, &req).await;
                backend.close().await;
                let p = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&p)?);
                } else {
                    print_skills(&p, &req.project);
                }
                Ok(())
            }
            Command::Review {
                command,
                project,
                category,
                json,
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = review_cli::run(&backend, command, project, category, json).await;
                backend.close().await;
                Ok(res?)
            }
            Command::Import { dir, json } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = export_cli::import(&backend, &dir, json).await;
                backend.close().await;
                Ok(res?)
            }
            Command::Open { id, json } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res: Result<cairn_core::api::OpenRes, ApiError> = backend
                    .call_typed("open", &cairn_core::api::OpenReq { id })
                    .await;
                backend.close().await;
                let opened = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&opened)?);
                } else {
                    print_opened(&opened)?;
                }
                Ok(())
            }
            Command::Items {
                project,
                conversation,
                all,
                json,
            } => {
                let (framework, session_id) = match conversation.as_deref() {
                    Some(c) => match c.split_once(':') {
                        Some((f, s)) if !f.is_empty() && !s.is_empty() => {
                            (Some(f.to_owned()), Some(s.to_owned()))
                        }
                        _ => {
                            return Err(Failure {
                                code: 2,
                                error: anyhow::anyhow!(
                                    "--conversation takes FRAMEWORK:SESSION_ID (for example claude-code:5b0c2a4e-…), got {c:?}"
                                ),
                            });
                        }
                    },
                    None => (None, None),
                };
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let req = cairn_core::api::ItemsReq {
                    framework,
                    session_id,
                    project,
                    all,
                    limit: None,
                };
                let res: Result<cairn_core::api::ItemList, ApiError> =
                    backend.call_typed("items_list", &req).await;
                backend.close().await;
                let list = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&list.items)?);
                } else {
                    let mut out = std::io::stdout().lock();
                    if list.items.is_empty() {
                        writeln!(out, "No items.")?;
                    }
                    for i in &list.items {
                        writeln!(
                            out,
                            "{} · {} · {}{}\n    {}\n    {}\n",
                            i.said_at.as_deref().unwrap_or("-"),
                            i.kind,
                            i.title,
                            if i.superseded_by.is_some() {
                                " · superseded"
                            } else if i.archived {
                                " · archived"
                            } else {
                                ""
                            },
                            i.summary,
                            i.id
                        )?;
                    }
                }
                Ok(())
            }
            Command::Distill {
                rebuild: true,
                since,
                json,
                ..
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let req = cairn_core::api::DistillRebuildReq { since };
                let res: Result<cairn_core::api::DistillRebuildReport, ApiError> =
                    call_with_progress_req(&backend, "distill_rebuild", &req, "distillation", json)
                        .await;
                backend.close().await;
                let report = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    print_distill(&report.run)?;
                    let mut out = std::io::stdout().lock();
                    for (label, list) in [
                        ("added", &report.added),
                        ("changed", &report.changed),
                        ("dropped", &report.dropped),
                    ] {
                        for x in list {
                            writeln!(out, "{label:<8} {:<12} {} ({})", x.kind, x.title, x.id)?;
                        }
                    }
                    writeln!(
                        out,
                        "Rebuilt: {} added, {} changed, {} dropped (archived), {} unchanged.",
                        report.added.len(),
                        report.changed.len(),
                        report.dropped.len(),
                        report.unchanged
                    )?;
                }
                Ok(())
            }
            Command::Distill {
                sleep: true, json, ..
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res: Result<cairn_core::api::SleepReport, ApiError> =
                    call_with_progress(&backend, "sleep_now", "distillation", json).await;
                backend.close().await;
                let r = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    let mut out = std::io::stdout().lock();
                    for id in &r.archived {
                        writeln!(out, "archived {id}")?;
                    }
                    for s in &r.profiles {
                        writeln!(out, "profile  {s}")?;
                    }
                    writeln!(
                        out,
                        "Slept in {:.1} s: {} active item(s), {} related, {} re-scored, {} archived, \
                         {} profile(s) rewritten ({} unchanged, {} left), {} model call(s).",
                        r.took_ms as f64 / 1000.0,
                        r.active,
                        r.related,
                        r.rescored,
                        r.archived.len(),
                        r.profiles.len(),
                        r.profiles_unchanged,
                        r.profiles_left,
                        r.calls
                    )?;
                    if let Some(why) = &r.stopped {
                        writeln!(out, "Profiles stopped: {why}")?;
                    }
                }
                Ok(())
            }
            Command::Distill { json, .. } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res: Result<cairn_core::api::DistillReport, ApiError> =
                    call_with_progress(&backend, "distill_now", "distillation", json).await;
                backend.close().await;
                let report = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    print_distill(&report)?;
                }
                Ok(())
            }
            Command::Mcp {
                read_only,
                project,
                mounts,
            } => {
                let project = project.or_else(current_project);
                let mounts = mounts
                    .iter()
                    .map(|m| memory_tool::parse_mount(m))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .map_err(|e| Failure { code: 2, error: e })?;
                cairn_mcp::serve_stdio(cairn_mcp::Options {
                    service_file: paths.service_file(),
                    project,
                    access: if read_only {
                        cairn_core::api::NoteAccess::ReadOnly
                    } else {
                        cairn_core::api::NoteAccess::ReadWrite
                    },
                    mounts,
                })
                .await
                .map_err(|e| Failure::from(anyhow::anyhow!(e)))
            }
            Command::MemoryTool {
                project,
                read_only,
                mounts,
                json,
                stream,
                client,
            } => {
                let mounts = mounts
                    .iter()
                    .map(|m| memory_tool::parse_mount(m))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .map_err(|e| Failure { code: 2, error: e })?;
                let caller = memory_tool::Caller {
                    project,
                    read_only,
                    mounts,
                    client,
                };
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res = memory_tool::run(&backend, &caller, json, stream).await;
                backend.close().await;
                match res? {
                    0 => Ok(()),
                    code => Err(Failure {
                        code,
                        error: anyhow::anyhow!(""),
                    }),
                }
            }
            Command::Notes {
                what: NotesCmd::Titles { project, json },
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let req = cairn_core::api::NotesTitlesReq {
                    project: project.or_else(current_project),
                    max_chars: None,
                };
                let res: Result<cairn_core::api::NoteTitles, ApiError> =
                    backend.call_typed("notes_titles", &req).await;
                backend.close().await;
                let res = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&res)?);
                } else if !res.text.is_empty() {
                    println!("{}", res.text);
                }
                Ok(())
            }
            Command::Integrate {
                framework,
                remove,
                list,
                json,
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let out = if list {
                    let res: Result<cairn_core::api::IntegrationList, ApiError> = backend
                        .call_typed("integrations_list", &cairn_core::api::Empty {})
                        .await;
                    res.map(|r| {
                        if json {
                            serde_json::to_string_pretty(&r).unwrap_or_default()
                        } else {
                            format_integrations(&r)
                        }
                    })
                } else {
                    let req = cairn_core::api::IntegrationSetReq {
                        framework: framework.unwrap_or_default(),
                        installed: !remove,
                    };
                    let res: Result<cairn_core::api::IntegrationChange, ApiError> =
                        backend.call_typed("integration_set", &req).await;
                    res.map(|c| {
                        if json {
                            serde_json::to_string_pretty(&c).unwrap_or_default()
                        } else {
                            format_change(&c)
                        }
                    })
                };
                backend.close().await;
                println!("{}", out?);
                Ok(())
            }
            Command::Search {
                words,
                project,
                framework,
                since,
                until,
                limit,
                mode,
                rerank,
                no_rerank,
                json,
            } => {
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let req = SearchReq {
                    query: words.join(" "),
                    project,
                    framework,
                    since,
                    until,
                    limit: Some(limit),
                    exclude_session: None,
                    kinds: None,
                    mode: Some(mode),
                    rerank: if rerank {
                        Some(true)
                    } else if no_rerank {
                        Some(false)
                    } else {
                        None
                    },
                };
                let res: Result<SearchRes, ApiError> = backend.call_typed("search", &req).await;
                backend.close().await;
                let res = res?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&res.hits)?);
                } else {
                    print_hits(&res.hits)?;
                }
                for note in &res.notes {
                    eprintln!("note: {note}");
                }
                Ok(())
            }
            Command::Clear { yes, notes } => {
                if !yes && !confirm_clear(notes)? {
                    println!("Nothing was cleared.");
                    return Ok(());
                }
                let backend =
                    Backend::connect_or_open_with(&paths, &loaded.settings, loaded.file.clone())
                        .await?;
                let res: Result<ClearReport, ApiError> =
                    backend.call_typed("clear", &ClearReq { notes }).await;
                backend.close().await;
                let r = res?;
                println!(
                    "Cleared {} records, {} chunks, {} items{}.",
                    r.removed.records,
                    r.removed.chunks,
                    r.removed.items,
                    if r.notes_kept {
                        " (notes kept)".to_owned()
                    } else {
                        format!(" and {} notes", r.removed.notes)
                    }
                );
                Ok(())
            }
        }
    })
}

async fn capture_with_progress(backend: &Backend, quiet: bool) -> Result<CaptureReport, ApiError> {
    call_with_progress(backend, "capture_run", "capture", quiet).await
}

/// Calls a long method while a progress bar follows the named worker on the board.
async fn call_with_progress<Res: serde::de::DeserializeOwned>(
    backend: &Backend,
    method: &str,
    worker: &str,
    quiet: bool,
) -> Result<Res, ApiError> {
    call_with_progress_req(backend, method, &serde_json::json!({}), worker, quiet).await
}

/// Calls `method` with `params`, showing the `worker`'s progress from the status board
/// meanwhile (unless `quiet` or not at a terminal).
async fn call_with_progress_req<Req: serde::Serialize, Res: serde::de::DeserializeOwned>(
    backend: &Backend,
    method: &str,
    params: &Req,
    worker: &str,
    quiet: bool,
) -> Result<Res, ApiError> {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(1000);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {prefix} [{bar:30}] {percent:>3}% {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(worker.to_owned());
        bar
    };
    let run = backend.call_typed::<_, Res>(method, params);
    tokio::pin!(run);
    loop {
        tokio::select! {
            res = &mut run => {
                bar.finish_and_clear();
                return res;
            }
            _ = tokio::time::sleep(std::time::Duration::from_millis(150)) => {
                if bar.is_hidden() {
                    continue;
                }
                if let Ok(status) = backend.status().await
                    && let Some(w) = status.workers.iter().find(|w| w.name == worker)
                {
                    if let Some(p) = w.progress {
                        bar.set_position((p.clamp(0.0, 1.0) * 1000.0) as u64);
                    }
                    if let Some(d) = &w.detail {
                        bar.set_message(d.clone());
                    }
                }
                bar.tick();
            }
        }
    }
}

fn print_opened(o: &cairn_core::api::OpenRes) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if let Some(it) = &o.item {
        let i = &it.item;
        writeln!(
            out,
            "{} · {} (importance {}, {})",
            i.kind, i.title, i.importance, i.certainty
        )?;
        writeln!(out, "{}\n", i.summary)?;
        writeln!(out, "{}\n", i.body)?;
        if !i.cues.is_empty() {
            writeln!(out, "Cues: {}", i.cues.join(" · "))?;
        }
        if !i.concepts.is_empty() {
            writeln!(out, "Concepts: {}", i.concepts.join(", "))?;
        }
        if let Some(by) = &i.superseded_by {
            writeln!(out, "Superseded by {by}")?;
        }
        writeln!(out, "\nHistory:")?;
        for e in &it.history {
            writeln!(
                out,
                "  {} {} {}",
                e.at,
                e.kind,
                e.reason.as_deref().unwrap_or("")
            )?;
        }
        if !it.relations.is_empty() {
            writeln!(out, "\nRelations:")?;
            for r in &it.relations {
                let other = if r.from == i.id { &r.to } else { &r.from };
                writeln!(
                    out,
                    "  {} {} {} ({:.2})",
                    r.kind,
                    other,
                    r.other_title.as_deref().unwrap_or(""),
                    r.weight
                )?;
            }
        }
        writeln!(out, "\nSources:")?;
        for s in &it.sources {
            writeln!(
                out,
                "  {} · {} · {}\n    {}",
                s.turn.started_at, s.framework, s.session_id, s.turn.request
            )?;
        }
        return Ok(());
    }
    if let Some(r) = &o.record {
        writeln!(
            out,
            "{} · {} · request {} of {}\n",
            r.framework, r.session_id, r.position, r.session_turns
        )?;
        writeln!(out, "{}", r.turn.request)?;
        return Ok(());
    }
    if let Some(n) = &o.note {
        writeln!(out, "{}\n\n{}", n.note.title, n.content)?;
    }
    Ok(())
}

fn print_distill(r: &cairn_core::api::DistillReport) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if r.windows == 0 && r.stopped.is_none() {
        writeln!(out, "No settled conversation waits for distillation.")?;
    }
    for w in &r.details {
        writeln!(
            out,
            "{}: {} request(s), {} item(s) proposed",
            w.window, w.requests, w.proposed
        )?;
        for k in &w.kept {
            let extra = match (&k.other, k.similarity) {
                (Some(o), Some(s)) => format!(" ({o}, similarity {s:.2})"),
                (Some(o), None) => format!(" ({o})"),
                (None, Some(s)) => format!(" (similarity {s:.2})"),
                (None, None) => String::new(),
            };
            writeln!(out, "  {:<10} {:<12} {}{extra}", k.action, k.kind, k.title)?;
        }
        for d in &w.dropped {
            writeln!(
                out,
                "  dropped    {:<12} {} — {}",
                d.kind, d.title, d.reason
            )?;
        }
        if let Some(why) = &w.invalid {
            writeln!(out, "  no usable answer: {why}")?;
        }
    }
    writeln!(
        out,
        "{} window(s): {} item(s) kept ({} new, {} merged, {} superseding, {} related), {} dropped; \
         {} model call(s), {} + {} tokens, ${:.4}",
        r.windows,
        r.items_kept,
        r.created,
        r.merged,
        r.superseded,
        r.related,
        r.items_dropped,
        r.calls,
        r.input_tokens,
        r.output_tokens,
        r.cost_usd
    )?;
    if let Some(why) = &r.stopped {
        writeln!(
            out,
            "Stopped early ({} window(s) left for later): {why}",
            r.left
        )?;
    }
    Ok(())
}

fn print_capture(r: &CaptureReport) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if r.frameworks.is_empty() {
        writeln!(out, "No agent session stores found.")?;
    }
    for f in &r.frameworks {
        let skipped: Vec<String> = f
            .skipped
            .iter()
            .map(|s| format!("{} {}", s.count, s.reason))
            .collect();
        writeln!(
            out,
            "{:<14} {:>5} sessions read  {:>6} records added  {:>5} revised{}",
            f.framework,
            f.sessions,
            f.added,
            f.revised,
            if skipped.is_empty() {
                String::new()
            } else {
                format!("  skipped: {}", skipped.join(", "))
            }
        )?;
    }
    if r.secrets_redacted > 0 {
        writeln!(
            out,
            "{} secrets redacted before storage.",
            r.secrets_redacted
        )?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    writeln!(out, "Done in {} ms.", r.duration_ms)
}

fn print_hits(hits: &[SearchHit]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if hits.is_empty() {
        writeln!(out, "No matches.")?;
    }
    for h in hits {
        let what = match (&h.item_kind, &h.title) {
            (Some(kind), Some(title)) => format!("{kind} · {title}"),
            (None, Some(title)) => format!("note · {title}"),
            _ => format!("{} · {}", h.framework, h.outcome),
        };
        writeln!(
            out,
            "{} · {} · {}{}",
            h.timestamp,
            what,
            h.project.as_deref().unwrap_or("(no project)"),
            if h.in_range {
                ""
            } else {
                " · outside the date range"
            }
        )?;
        for line in h.passage.lines() {
            writeln!(out, "    {line}")?;
        }
        writeln!(out, "    {}\n", h.id)?;
    }
    Ok(())
}

fn confirm_clear(notes: bool) -> Result<bool, Failure> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Failure {
            code: 2,
            error: anyhow::anyhow!("clear needs confirmation: run it in a terminal, or pass --yes"),
        });
    }
    let what = if notes {
        "everything Cairn remembers, notes included"
    } else {
        "everything Cairn remembers (notes are kept)"
    };
    print!("This wipes {what}. It cannot be undone. Type 'clear' to confirm: ");
    std::io::stdout().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    Ok(line.trim() == "clear")
}

/// The memory state in words: on, off, or paused and until when (in local time). `long`
/// adds what it means.
fn memory_text(m: &MemoryState, long: bool) -> String {
    let what = if m.enabled {
        "on".to_owned()
    } else if m.paused {
        match m.paused_until.as_deref() {
            Some(until) => format!("paused until {}", local_time(until)),
            None => "paused until resumed (cairn memory on)".to_owned(),
        }
    } else {
        "off".to_owned()
    };
    if long && !m.enabled {
        format!("{what}: Cairn captures nothing and its search service is stopped")
    } else {
        what
    }
}

/// An RFC 3339 time in the local time zone, with its offset (as given when unreadable).
fn local_time(t: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|d| {
            d.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M:%S %:z")
                .to_string()
        })
        .unwrap_or_else(|_| t.to_owned())
}

fn print_status(s: &Status) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Cairn {}", s.version)?;
    writeln!(
        out,
        "Memory:   {}{}",
        memory_text(&s.memory, false),
        s.memory
            .changed_at
            .as_deref()
            .map(|t| format!(" (since {t})"))
            .unwrap_or_default()
    )?;
    let host = match s.service.host {
        Host::Daemon => format!("cairn daemon, pid {}", s.service.pid),
        Host::Desktop => format!("desktop app, pid {}", s.service.pid),
        Host::Direct => "not running (store opened directly)".to_owned(),
    };
    writeln!(out, "Service:  {host}")?;
    if let Some(addr) = &s.service.address {
        writeln!(out, "Address:  {addr}")?;
    }
    writeln!(
        out,
        "Stored:   {} records, {} chunks, {} items, {} notes",
        s.counts.records, s.counts.chunks, s.counts.items, s.counts.notes
    )?;
    writeln!(
        out,
        "Cleared:  {}",
        s.last_clear.as_deref().unwrap_or("never")
    )?;
    writeln!(out, "Data:     {}", s.data_dir)?;
    writeln!(out, "Config:   {}", s.config_file)?;
    for w in &s.workers {
        writeln!(
            out,
            "Worker:   {} — {:?}{}",
            w.name,
            w.state,
            w.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )?;
    }
    for w in &s.warnings {
        writeln!(out, "Warning:  {w}")?;
    }
    Ok(())
}

async fn daemon(
    paths: Paths,
    settings: Settings,
    config_file: PathBuf,
    ui_dir: Option<PathBuf>,
) -> Result<(), Failure> {
    // Listen for SIGTERM before anything is printed: a stop sent the moment the address
    // appears (a service manager, a test) must shut down cleanly, never kill.
    let stop = StopSignals::listen();
    // Made absolute now: the folder served must not change with the working directory.
    let ui_dir = match ui_dir {
        Some(dir) => Some(
            fs_err::canonicalize(&dir)
                .map_err(|e| ApiError::bad_request(format!("--ui-dir {}: {e}", dir.display())))?,
        ),
        None => cairn_api::http::find_ui_dir(&settings)?,
    };
    let opts = ServiceOptions {
        paths,
        settings,
        config_file,
        host: Host::Daemon,
        serve_http: true,
        ui_dir: ui_dir.clone(),
    };
    // CLI calls wait for a service that has declared it is starting instead of opening the
    // store themselves; the intent ends once the service serves (or has failed to start).
    let intent = StartIntent::declare(&opts.paths.lock_file())?;
    let started = ServiceHandle::start(opts).await;
    drop(intent);
    let handle = match started {
        Ok(h) => h,
        Err(StartError::Lock(e)) => {
            return Err(Failure {
                code: 3,
                error: e.into(),
            });
        }
        Err(StartError::Api(e)) => return Err(e.into()),
    };
    if let Some(info) = handle.info() {
        println!("Cairn is running. Open the UI at {}", info.ui_url());
        if ui_dir.is_none() {
            println!(
                "(The web UI is not built: run `npm run app` in the Cairn checkout, or pass --ui-dir.)"
            );
        }
        println!("Press Ctrl-C to stop.");
        std::io::stdout().flush()?;
    }
    stop.wait().await;
    println!("Stopping…");
    handle.shutdown().await;
    Ok(())
}

/// The signals that stop the daemon, registered when made (not when first awaited).
struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let term = match signal(SignalKind::terminate()) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot watch SIGTERM; Ctrl-C still stops");
                    None
                }
            };
            Self { term }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Waits for SIGTERM or Ctrl-C.
    async fn wait(self) {
        #[cfg(unix)]
        if let Some(mut term) = self.term {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot watch Ctrl-C");
        }
    }
}
