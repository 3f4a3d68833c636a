//! # cairn
//!
//! The command-line face of Cairn: flags and glue only; every operation is a call into
//! `cairn-api` (through the running service when there is one, else on the store directly).
//!
//! `main` answers hooks (`commands::hook`) and the CLI reference before settings, logging or
//! the async runtime exist; for every other command it loads the settings, starts logging
//! and the runtime, and dispatches. The flags are in `cli`, each command's body in
//! `commands`; the evaluations and benchmarks behind `eval`, `bench` and `ranker train` are
//! the `cairn-eval` crate's.
//!
//! Exit codes: 0 success; 1 failure; 2 bad usage or bad settings; 3 another Cairn already
//! runs (for `daemon`); 4 the service or store is unavailable.
use std::process::ExitCode;

mod cli;
mod cli_reference;
mod commands;

use anyhow::Context;
use cairn_config::{Overrides, Paths, Settings};
use clap::Parser;

use cli::{Cli, Command, HookArgs};
use commands::{Ctx, Failure};

fn main() -> ExitCode {
    // Before any thread starts (see the function).
    cairn_api::cap_malloc_arenas();
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
    if let Command::Hook(HookArgs { framework, event }) = &cli.command {
        return commands::hook::main(framework, event);
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

/// Loads the settings, starts logging and the runtime, and runs the command.
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
        Command::Daemon(_) => "daemon",
        Command::Mcp(_) => "mcp",
        Command::MemoryTool(_) => "memory-tool",
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
    let ctx = Ctx {
        paths,
        settings: loaded.settings,
        file: loaded.file,
    };
    runtime.block_on(async move {
        match cli.command {
            Command::Daemon(args) => commands::daemon::run(ctx, args).await,
            Command::Status(args) => commands::status::run(&ctx, args).await,
            Command::Memory { cmd } => commands::memory::run(&ctx, cmd).await,
            Command::Clear(args) => commands::clear::run(&ctx, args).await,
            Command::Capture(args) => commands::capture::run(&ctx, args).await,
            Command::Export(args) => commands::export::export(&ctx, args).await,
            Command::Import(args) => commands::export::import(&ctx, args).await,
            Command::Review(args) => commands::review::run(&ctx, args).await,
            Command::Skills(args) => commands::skills::run(&ctx, args).await,
            Command::Search(args) => commands::search::run(&ctx, args).await,
            Command::Index { what } => commands::index::run(&ctx, what).await,
            Command::Eval { what } => commands::eval::run(&ctx, what).await,
            Command::Bench { what } => commands::bench::run(&ctx, what).await,
            Command::Mcp(args) => commands::mcp::run(&ctx, args).await,
            Command::MemoryTool(args) => commands::memory_tool::run(&ctx, args).await,
            Command::Notes { what } => commands::notes::run(&ctx, what).await,
            Command::Integrate(args) => commands::integrate::run(&ctx, args).await,
            Command::Llm { what } => commands::llm::run(&ctx, what).await,
            Command::Open(args) => commands::open::run(&ctx, args).await,
            Command::TurnNote(args) => commands::turn::turn_note(&ctx, args).await,
            Command::Why(args) => commands::turn::why(&ctx, args).await,
            Command::Ranker { what } => commands::ranker::run(&ctx, what).await,
            Command::Items(args) => commands::items::run(&ctx, args).await,
            Command::Distill(args) => commands::distill::run(&ctx, args).await,
            Command::Config { what } => commands::config::run(&ctx, what),
            // Answered in `main` before settings, logging and the runtime.
            Command::Hook(_) | Command::CliReference => Ok(()),
        }
    })
}
