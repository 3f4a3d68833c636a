//! The command line's definitions (clap): every command, its flags and its help. The doc
//! comments are the help text `cairn --help` prints and `docs/cli.md` holds; an arguments
//! struct carries none of its own, so its command's doc comment stays the help.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "Exit codes:
  0  success
  1  the command failed
  2  bad usage or an invalid setting (the message names the key, value and file)
  3  another Cairn is already running (cairn daemon)
  4  the service or the store is unavailable";

#[derive(Debug, Parser)]
#[command(name = "cairn", version, about = "Memory for AI coding agents", after_help = EXIT_CODES)]
pub struct Cli {
    /// Override a setting for this run: section.key=value (repeatable).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the CLI reference (docs/cli.md) from these definitions.
    #[command(hide = true)]
    CliReference,
    /// Run the headless service: owns the store, serves the API and the UI on loopback.
    Daemon(DaemonArgs),
    /// Show the memory switch, counts, workers and where the data lives.
    Status(StatusArgs),
    /// Switch memory on or off, or pause it (off stops capture and the search service).
    Memory {
        #[command(subcommand)]
        cmd: MemoryCmd,
    },
    /// Wipe everything remembered: logs, index, cursors (and notes with --notes).
    Clear(ClearArgs),
    /// Read every agent's session stores now.
    Capture(CaptureArgs),
    /// Write everything remembered to a new or empty folder in open formats: Markdown notes
    /// and items, JSONL records and item events, a manifest with a sha256 per file.
    Export(ExportArgs),
    /// Read a folder `cairn export` wrote: everything checked first (a malformed file refuses
    /// the whole import), ids kept, what is stored already skipped.
    Import(ImportArgs),
    /// The review inbox: likely duplicates, contradictions, stale items (citing files or
    /// symbols gone from the project's working tree) and junk; `act` on an entry (merge,
    /// supersede, archive, keep) and `undo` any action.
    Review(ReviewArgs),
    /// A project's procedures and pitfalls as the instruction file a framework reads
    /// (CLAUDE.md, AGENTS.md, GEMINI.md, QWEN.md, a Cursor rule), in a section Cairn marks:
    /// shown first; written only with --write; taken out with --remove.
    Skills(SkillsArgs),
    /// Search everything remembered by its words.
    Search(SearchArgs),
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
    Mcp(McpArgs),
    /// Answer memory-tool commands (the `memory_20250818` tool's JSON, as a model sends it)
    /// with Cairn's notes: one command on stdin, or JSON lines of them; prints the tool
    /// result to hand back to the model.
    #[command(
        after_help = "Paths: /memories is the caller's notes (the user's, or the project's with --project); /memories/NAME is a store added with --mount.\nOutput: the result's text (exit 5 when the command was refused: return it with is_error), or with --json, --stream or several commands one JSON object per command: {\"content\", \"is_error\", \"sha256\"}.\nExample: echo '{\"command\":\"view\",\"path\":\"/memories\"}' | cairn memory-tool"
    )]
    MemoryTool(MemoryToolArgs),
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
    Integrate(IntegrateArgs),
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
    Open(OpenArgs),
    /// The turn note an agent's hook would get for a message: at most three earlier things
    /// this turn needs, or nothing (logged, like a hook's, unless --dry-run).
    TurnNote(TurnNoteArgs),
    /// Why a turn's note said what it said: each candidate's probability and the ranker's
    /// inputs. --not-useful / --useful mark a shown entry (a label for the next ranker
    /// training); --undo removes the mark.
    Why(WhyArgs),
    /// The turn note's ranker (LightGBM).
    Ranker {
        #[command(subcommand)]
        what: RankerCmd,
    },
    /// List memory items, newest first.
    Items(ItemsArgs),
    /// Distil settled conversations into memory items (the service also does it on its own
    /// when the machine is quiet).
    #[command(
        after_help = "A conversation is settled when quiet for an hour or a day old. One model request per settled window; the day's budget (llm.daily_calls, llm.daily_usd) applies."
    )]
    #[command(group(clap::ArgGroup::new("what").required(true).args(["now", "rebuild", "sleep"])))]
    Distill(DistillArgs),
    /// Answer an agent's hook: reads the hook's JSON on standard input and prints what the
    /// agent adds to its context (at session start, the project's note titles). Fails open:
    /// prints nothing and exits 0 within 150 ms when Cairn is not running or memory is off.
    #[command(
        after_help = "Hooks (framework event): claude-code SessionStart|UserPromptSubmit, codex SessionStart|UserPromptSubmit, gemini-cli SessionStart|BeforeAgent, qwen-code SessionStart|UserPromptSubmit, cursor sessionStart|beforeSubmitPrompt, opencode session.created|chat.message (run by Cairn's OpenCode plugin).\nAn unknown framework or event exits 2 with a message on standard error."
    )]
    Hook(HookArgs),
    /// Show the config file's path or the effective settings.
    Config {
        #[command(subcommand)]
        what: ConfigCmd,
    },
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Folder of the built web UI to serve (default: service.ui_dir, else the UI installed
    /// with the program; never the current directory).
    #[arg(long, value_name = "DIR")]
    pub ui_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ClearArgs {
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// Also delete notes.
    #[arg(long)]
    pub notes: bool,
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Run one pass and exit (the service also captures on its own schedule).
    #[arg(long, required = true)]
    pub once: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The folder (created; an existing one must be empty).
    pub dir: PathBuf,
    /// Only this project's records, items and notes.
    #[arg(long)]
    pub project: Option<String>,
    /// Only what happened on or after this date (YYYY-MM-DD) or time (RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The folder.
    pub dir: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub command: Option<ReviewCommand>,
    /// Only this project's entries.
    #[arg(long)]
    pub project: Option<String>,
    /// Only duplicate, contradiction, stale or junk.
    #[arg(long)]
    pub category: Option<String>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// claude-code, codex, opencode, gemini-cli, qwen-code or cursor.
    #[arg(long)]
    pub framework: String,
    /// The project (default: the one of the working directory).
    #[arg(long)]
    pub project: Option<String>,
    /// The project's folder (default: the working directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Write the section (create or update it; nothing else in the file changes).
    #[arg(long, conflicts_with = "remove")]
    pub write: bool,
    /// Take Cairn's section out of the file.
    #[arg(long)]
    pub remove: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The words (quotes for phrases).
    #[arg(required = true)]
    pub words: Vec<String>,
    /// Only this project (as `cairn search` prints it).
    #[arg(long)]
    pub project: Option<String>,
    /// Only this framework (claude-code, codex, gemini-cli, …).
    #[arg(long)]
    pub framework: Option<String>,
    /// Results from this date (YYYY-MM-DD or RFC 3339) come first.
    #[arg(long)]
    pub since: Option<String>,
    /// Results up to this date come first.
    #[arg(long)]
    pub until: Option<String>,
    /// At most this many results (1 to 200).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=200))]
    pub limit: u32,
    /// bm25 (keywords), dense (meaning) or hybrid (both, fused 0.7 / 0.3).
    #[arg(long, default_value = "hybrid", value_parser = ["bm25", "dense", "hybrid"])]
    pub mode: String,
    /// Re-rank the top 30 with the cross-encoder (when it is present).
    #[arg(long, overrides_with = "no_rerank")]
    pub rerank: bool,
    /// Do not re-rank.
    #[arg(long = "no-rerank", overrides_with = "rerank")]
    pub no_rerank: bool,
    /// Print one JSON array instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Notes are read-only for this client.
    #[arg(long)]
    pub read_only: bool,
    /// The project the agent works in (default: from the working directory).
    #[arg(long)]
    pub project: Option<String>,
    /// Mount another store under /memories/NAME: NAME=user or NAME=project:<identity>,
    /// read-only unless it ends in :rw (repeatable; at most 7).
    #[arg(long = "mount", value_name = "NAME=STORE[:rw]")]
    pub mounts: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MemoryToolArgs {
    /// The caller's own notes are this project's (default: the user's notes).
    #[arg(long)]
    pub project: Option<String>,
    /// Refuse every write.
    #[arg(long)]
    pub read_only: bool,
    /// Mount another store under /memories/NAME: NAME=user or NAME=project:<identity>,
    /// read-only unless it ends in :rw (repeatable; at most 7).
    #[arg(long = "mount", value_name = "NAME=STORE[:rw]")]
    pub mounts: Vec<String>,
    /// Print each result as JSON: {"content", "is_error", "sha256"}.
    #[arg(long)]
    pub json: bool,
    /// Answer each JSON line of stdin as it arrives (one JSON result per line).
    #[arg(long)]
    pub stream: bool,
    /// The application's name, kept in the notes' versions as agent:<client>.
    #[arg(long, default_value = "memory-tool")]
    pub client: String,
}

#[derive(Debug, Args)]
pub struct IntegrateArgs {
    /// The framework.
    #[arg(required_unless_present = "list")]
    pub framework: Option<String>,
    /// Remove the registration instead.
    #[arg(long)]
    pub remove: bool,
    /// Show what is registered where.
    #[arg(long, conflicts_with_all = ["framework", "remove"])]
    pub list: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct OpenArgs {
    /// The id, as search prints it (r_…, i_…, n_…).
    pub id: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TurnNoteArgs {
    /// The user's message.
    pub prompt: String,
    /// The asking framework (as `cairn integrate --list` names it).
    #[arg(long, default_value = "claude-code")]
    pub framework: String,
    /// The project identity the turn is in (default: the current folder's, as a hook
    /// would name it).
    #[arg(long)]
    pub project: Option<String>,
    /// The asking session: its own records and items are left out.
    #[arg(long)]
    pub session: Option<String>,
    /// Compute the note but log nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Ask as at this moment (RFC 3339): only what was remembered before it can be shown,
    /// and dates in the message ("yesterday") are read against it.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The turn (`t_…`), or `last`.
    #[arg(default_value = "last")]
    pub turn: String,
    /// Mark this shown entry not useful (repeatable).
    #[arg(long, value_name = "ID")]
    pub not_useful: Vec<String>,
    /// Mark this shown entry useful (repeatable).
    #[arg(long, value_name = "ID")]
    pub useful: Vec<String>,
    /// Remove this entry's mark (repeatable).
    #[arg(long, value_name = "ID")]
    pub undo: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ItemsArgs {
    /// Only this project's.
    #[arg(long)]
    pub project: Option<String>,
    /// Only those distilled from this conversation (FRAMEWORK:SESSION_ID).
    #[arg(long, value_name = "FRAMEWORK:SESSION_ID")]
    pub conversation: Option<String>,
    /// Include archived and superseded items.
    #[arg(long)]
    pub all: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DistillArgs {
    /// Every settled window now, whatever the machine is doing.
    #[arg(long)]
    pub now: bool,
    /// The nightly tidy-up now: relate neighbouring items, re-score, archive the old unused
    /// ones, rewrite the profiles whose items changed (the service does it once a day).
    #[arg(long)]
    pub sleep: bool,
    /// Distil again over the whole log (or since --since) with the current provider and
    /// prompts; items found again keep their ids; prints what was added, changed, dropped.
    #[arg(long)]
    pub rebuild: bool,
    /// With --rebuild: only requests made from this date on (YYYY-MM-DD).
    #[arg(long, requires = "rebuild", value_name = "DATE")]
    pub since: Option<String>,
    /// Print JSON: windows distilled, items kept and dropped with reasons, model calls, tokens.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The framework, as `cairn integrate --list` names it.
    pub framework: String,
    /// The event, as the framework spells it.
    pub event: String,
}

/// What `cairn review` was asked to do.
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Act on an entry: merge, supersede, archive or keep.
    Act {
        /// The entry's key, as `cairn review` prints it (`duplicate:i_…+i_…`).
        entry: String,
        /// merge, supersede, archive or keep.
        action: String,
        /// For a pair: the id that stays (default: the first one listed).
        #[arg(long)]
        keep: Option<String>,
    },
    /// Undo an action (its id, `rv_…`, as `act` and the inbox print it).
    Undo {
        /// The action's id.
        action: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryCmd {
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
pub enum IndexCmd {
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
pub enum RankerCmd {
    /// Train the ranker on a labelled LoCoMo-format file (the owned set:
    /// data/ranker/histories.json), each question asked of a real service holding its
    /// conversation; print the cross-fitted figures. Writes the model to --out (default:
    /// this machine's ranker, used by the service instead of the shipped one) and the
    /// figures beside it. With --from-store instead of a file: a personal model from this
    /// machine's own turn notes (entries marked useful or not useful, and those the answer
    /// used or ignored), written only when it beats the shipped model on them.
    Train {
        /// The labelled file.
        #[arg(required_unless_present = "from_store")]
        file: Option<PathBuf>,
        /// Train on this machine's turn notes and their outcomes instead of a file (folds by
        /// project); refuses with fewer than 200 labelled entries or 20 needed ones. Sleep
        /// runs the same each night; after `cairn ranker reset` only this turns that back on.
        #[arg(long, conflicts_with_all = ["file", "labels"])]
        from_store: bool,
        /// Where to write the model.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Add this machine's shown turn-note entries that were marked useful or not useful,
        /// or whose answer used or ignored them (the entries `--from-store` learns from).
        #[arg(long)]
        labels: bool,
        /// Add the train split of this real-history corpus (`data/real`): each hand-labelled
        /// request asked of a service holding its repository's history; folds by repository.
        #[arg(long, value_name = "DIR", conflicts_with = "from_store")]
        real: Option<PathBuf>,
        /// How much each real request's candidates count in fitting against the labelled
        /// file's (the figures count each once). The default (as much as a made one) was
        /// chosen on the real train split, every repository scored by models fitted without
        /// it (`scripts/ranker-real-weight.py`).
        #[arg(long, value_name = "W", default_value_t = 1.0)]
        real_weight: f32,
        /// Also write every labelled candidate to this file, one JSON line each (request,
        /// fold key, ranker inputs, label, weight, and the factor the note's rule on earlier
        /// showings applies after the model): what the model learned from.
        #[arg(long, value_name = "FILE", conflicts_with = "from_store")]
        examples: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Which model the turn note uses (shipped or personal), its bar and figures, and for a
    /// personal model the shipped model's figures on the same turns.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove the personal model so the turn note uses the shipped one again.
    Reset,
}

#[derive(Debug, Subcommand)]
pub enum EvalCmd {
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
    /// Cairn's own code; each labelled request searched as it was asked. The retriever with
    /// search's settings, with the settings for a request (the turn note's candidates) and
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
        /// With --note: one line per request with every candidate, its ranker inputs (by
        /// name), probability, whether it was shown and whether it is needed.
        #[arg(long, value_name = "FILE")]
        rows: Option<PathBuf>,
        /// Measure the turn note instead of retrieval: every labelled request asked of a real
        /// service holding its repository's history, as the hook would have asked it then;
        /// precision, hit rate and silence, with search's top three beside it.
        #[arg(long, conflicts_with_all = ["tunings"])]
        note: bool,
        /// With --note: the note's ranker is this model file (as `cairn ranker train --out`
        /// writes it, its figures beside it) instead of the shipped one.
        #[arg(long, value_name = "FILE", requires = "note")]
        ranker: Option<PathBuf>,
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
pub enum BenchCmd {
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
        /// Vectors per record: its body chunks (a record is embedded as chunks only).
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
        /// Also measure the service query at each of these numbers of candidates re-scored
        /// per kind of vector (comma-separated), with how much of its top 10 stays as at the
        /// default.
        #[arg(long, value_delimiter = ',')]
        candidates: Vec<usize>,
        /// Put the vectors on this Qdrant server (its gRPC URL, e.g. http://127.0.0.1:6334;
        /// the key `cairn index set-key` stored, if any) in the collection `cairn-bench`,
        /// emptied first, instead of the embedded index.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
    /// The measuring half of `bench items`, run in a fresh process.
    #[command(hide = true)]
    ItemsPhase {
        #[arg(long)]
        home: PathBuf,
        #[arg(long)]
        queries: usize,
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
        #[arg(long, value_delimiter = ',')]
        candidates: Vec<usize>,
        #[arg(long)]
        remote: Option<String>,
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
        /// Hook runs with the service up (default 30, or 200 with --load).
        #[arg(long, value_name = "N")]
        runs: Option<usize>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Memory items at scale, through a real service: the items indexed the first time, item,
    /// record and combined search, the turn note, one item changed, a restart, and sleep,
    /// beside the in-memory index built again after each change that items had before.
    Items {
        /// Records in the synthetic store.
        #[arg(long, default_value_t = 150_000)]
        records: usize,
        /// Active items (each with a summary, two cues and two body chunks embedded).
        #[arg(long, default_value_t = 20_000)]
        items: usize,
        /// Searches and turn notes per measurement.
        #[arg(long, default_value_t = 100)]
        queries: usize,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// How fast the embedder turns captured text into vectors: synthetic record chunks in
    /// calls of an indexing page, one batch at a time against batches side by side (texts a
    /// second, peak memory, and whether the vectors are the same).
    Embed {
        /// Texts embedded per setting.
        #[arg(long, default_value_t = 480)]
        texts: usize,
        /// Texts in one call (the indexing worker embeds a page of 16 records' chunks at once).
        #[arg(long, default_value_t = 48)]
        per_call: usize,
        /// Texts in one batch through the model (the embedder's default: 4).
        #[arg(long, default_value_t = 4)]
        batch_size: usize,
        /// Batches embedded at once, each setting measured in turn (0: the default on this
        /// machine, its cores up to 2), comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 0])]
        parallel: Vec<usize>,
        /// The embedding model's folder (default: `models.embedder`, else the PyPI test copy).
        #[arg(long)]
        embedder: Option<PathBuf>,
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
pub enum NotesCmd {
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
pub enum LlmCmd {
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
pub enum KeyApi {
    Anthropic,
    Openai,
}

impl KeyApi {
    pub fn name(self) -> &'static str {
        match self {
            KeyApi::Anthropic => "anthropic",
            KeyApi::Openai => "openai",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ConfigCmd {
    /// Print the config file's path.
    Path,
    /// Print the effective settings (defaults, file, environment and --set layered).
    Show,
}
