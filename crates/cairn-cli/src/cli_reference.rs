//! The CLI reference (`docs/cli.md`), written from the command's own clap definitions so it
//! cannot drift from them, and the check that every `cairn …` command the README and the docs
//! name exists, with each of its flags.
//!
//! `cairn cli-reference` (hidden) prints the reference; a test compares it with the checked-in
//! file and another reads every backticked `cairn …` span in `README.md` and `docs/`.
use clap::{Arg, ArgAction, Command};

/// The whole reference as Markdown: every visible command, in the order `cairn --help` lists
/// them, each with its usage, what it does and its arguments.
pub fn markdown(root: &Command) -> String {
    let mut out = String::new();
    out.push_str(
        "# The `cairn` command\n\n\
         <!-- Generated from the command's clap definitions by `cairn cli-reference`; a test \
         fails when this file differs from what it prints. Do not edit by hand. -->\n\n",
    );
    if let Some(about) = root.get_about() {
        out.push_str(&format!("{}\n\n", sentence(&about.to_string())));
    }
    let globals: Vec<&Arg> = root
        .get_arguments()
        .filter(|a| a.is_global_set() && !a.is_hide_set())
        .collect();
    if !globals.is_empty() {
        out.push_str("Options every command takes:\n\n");
        for a in &globals {
            out.push_str(&arg_line(a));
        }
        out.push('\n');
    }
    if let Some(after) = root.get_after_help() {
        out.push_str(&format!(
            "```text\n{}\n```\n\n",
            after.to_string().trim_end()
        ));
    }
    out.push_str("## Commands\n\n");
    let mut index = String::new();
    walk(root, &mut vec!["cairn".to_owned()], &mut |path, _| {
        if path.len() > 1 {
            let name = path.join(" ");
            index.push_str(&format!(
                "{}- [`{name}`](#{})\n",
                "  ".repeat(path.len() - 2),
                anchor(&name)
            ));
        }
    });
    out.push_str(&index);
    walk(root, &mut vec!["cairn".to_owned()], &mut |path, cmd| {
        if path.len() > 1 {
            section(&mut out, path, cmd);
        }
    });
    out
}

/// Visits a command and, depth first, every visible subcommand (not clap's own `help`).
fn walk(cmd: &Command, path: &mut Vec<String>, visit: &mut dyn FnMut(&[String], &Command)) {
    visit(path, cmd);
    for sub in visible_subcommands(cmd) {
        path.push(sub.get_name().to_owned());
        walk(sub, path, visit);
        path.pop();
    }
}

fn visible_subcommands(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// The anchor GitHub makes of a heading `` `cairn eval replay` ``.
fn anchor(name: &str) -> String {
    name.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// Arguments a reader may give: not hidden, not clap's own help and version.
fn visible_args(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments().filter(|a| {
        !a.is_hide_set()
            && !a.is_global_set()
            && !matches!(a.get_action(), ArgAction::Help | ArgAction::HelpLong)
            && !matches!(a.get_action(), ArgAction::Version)
    })
}

fn value_name(a: &Arg) -> String {
    a.get_value_names()
        .and_then(|v| v.first())
        .map_or_else(|| a.get_id().as_str().to_uppercase(), ToString::to_string)
}

fn usage(path: &[String], cmd: &Command) -> String {
    let mut u = path.join(" ");
    if visible_args(cmd).any(|a| !a.is_positional()) {
        u.push_str(" [OPTIONS]");
    }
    for a in visible_args(cmd).filter(|a| a.is_positional()) {
        let many = matches!(a.get_action(), ArgAction::Append);
        let name = format!("{}{}", value_name(a), if many { "..." } else { "" });
        if a.is_required_set() {
            u.push_str(&format!(" <{name}>"));
        } else {
            u.push_str(&format!(" [{name}]"));
        }
    }
    if visible_subcommands(cmd).next().is_some() {
        u.push_str(" <COMMAND>");
    }
    u
}

/// One argument as a list line: its spelling, then its help, its choices and default.
fn arg_line(a: &Arg) -> String {
    let takes = a.get_action().takes_values();
    let name = if a.is_positional() {
        format!("<{}>", value_name(a))
    } else {
        let mut n = String::new();
        if let Some(s) = a.get_short() {
            n.push_str(&format!("-{s}"));
        }
        if let Some(l) = a.get_long() {
            if !n.is_empty() {
                n.push_str(", ");
            }
            n.push_str(&format!("--{l}"));
        }
        if takes {
            n.push_str(&format!(" <{}>", value_name(a)));
        }
        n
    };
    let repeatable = matches!(a.get_action(), ArgAction::Append) && !a.is_positional();
    let help = a
        .get_long_help()
        .or_else(|| a.get_help())
        .map(|h| one_line(&h.to_string()))
        .unwrap_or_default();
    let mut line = format!("- `{name}`");
    if repeatable {
        line.push_str(" (repeatable)");
    }
    if !help.is_empty() {
        line.push_str(&format!(": {help}"));
    }
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if takes && !choices.is_empty() && !matches!(a.get_action(), ArgAction::SetTrue) {
        line.push_str(&format!(" One of {}.", choices.join(", ")));
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes && !defaults.is_empty() {
        line.push_str(&format!(" Default: `{}`.", defaults.join(",")));
    }
    line.push('\n');
    line
}

/// A help text's paragraphs joined on one line (the list item holds it), ending as a
/// sentence (clap drops the last full stop of a one-paragraph help).
fn one_line(text: &str) -> String {
    sentence(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn sentence(text: &str) -> String {
    let t = text.trim_end();
    if t.ends_with(|c: char| c.is_alphanumeric() || matches!(c, ')' | '`' | '"')) {
        format!("{t}.")
    } else {
        t.to_owned()
    }
}

fn section(out: &mut String, path: &[String], cmd: &Command) {
    let name = path.join(" ");
    out.push_str(&format!("\n## `{name}`\n\n"));
    let about = cmd
        .get_long_about()
        .or_else(|| cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.trim().is_empty() {
        out.push_str(&format!("{}\n\n", sentence(&about)));
    }
    out.push_str(&format!("```text\n{}\n```\n", usage(path, cmd)));
    let subs: Vec<&Command> = visible_subcommands(cmd).collect();
    if !subs.is_empty() {
        out.push_str("\nCommands:\n\n");
        for s in subs {
            let full = format!("{name} {}", s.get_name());
            let about = s
                .get_about()
                .map(|a| one_line(&a.to_string()))
                .unwrap_or_default();
            out.push_str(&format!("- [`{full}`](#{}): {about}\n", anchor(&full)));
        }
    }
    let args: Vec<&Arg> = visible_args(cmd).collect();
    if !args.is_empty() {
        out.push_str("\nArguments:\n\n");
        for a in args {
            out.push_str(&arg_line(a));
        }
    }
}

#[cfg(test)]
/// What is wrong with the `cairn …` command a span of documentation names, if anything: a
/// subcommand that does not exist, a flag the command does not take. Words after the last
/// subcommand that are not flags are its values (paths, queries) and are not checked, nor are
/// placeholders such as `<words>`.
pub fn check_command(root: &Command, span: &str) -> Result<(), String> {
    let words = shell_words(span);
    let mut words = words.iter().map(String::as_str);
    if words.next() != Some("cairn") {
        return Err(format!("`{span}` does not start with cairn"));
    }
    let mut cmd = root;
    let mut path = vec!["cairn".to_owned()];
    let mut values_started = false;
    let mut skip_value = false;
    for w in words {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if w == "|" || w == ">" || w == "&&" || w == ";" || w.starts_with('#') {
            break;
        }
        if let Some(flag) = w.strip_prefix("--") {
            if flag.is_empty() {
                break;
            }
            let (flag, inline) = match flag.split_once('=') {
                Some((f, _)) => (f, true),
                None => (flag, false),
            };
            let arg = cmd
                .get_arguments()
                .chain(root.get_arguments().filter(|a| a.is_global_set()))
                .find(|a| {
                    a.get_long() == Some(flag)
                        || a.get_all_aliases().is_some_and(|al| al.contains(&flag))
                });
            match arg {
                Some(a) => skip_value = !inline && a.get_action().takes_values(),
                None if flag == "help" || (path.len() == 1 && flag == "version") => {}
                None => return Err(format!("`{}` takes no flag --{flag}", path.join(" "))),
            }
            continue;
        }
        if w.starts_with('-') || values_started || w.starts_with('<') || w.starts_with('[') {
            continue;
        }
        let has_subs = cmd.get_subcommands().next().is_some();
        if has_subs {
            match cmd
                .get_subcommands()
                .find(|s| s.get_name() == w || s.get_all_aliases().any(|a| a == w))
            {
                Some(sub) => {
                    cmd = sub;
                    path.push(w.to_owned());
                }
                None if w == "help" => {}
                None => {
                    return Err(format!("`{}` has no command {w:?}", path.join(" ")));
                }
            }
        } else {
            values_started = true;
        }
    }
    // `cairn eval` alone names the family of commands, which is fine in prose.
    Ok(())
}

#[cfg(test)]
/// Words of a command line as a shell splits them (quotes grouped, not kept).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
/// Every inline-code span of a Markdown text that names a `cairn` command, with its line
/// number; fenced blocks are read line by line for lines that start with `cairn `.
pub fn named_commands(markdown: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // Inside a fence: `None` outside, else whether it holds shell commands.
    let mut fence: Option<bool> = None;
    for (n, line) in markdown.lines().enumerate() {
        let t = line.trim_start();
        if let Some(lang) = t.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(matches!(
                    lang.trim(),
                    "sh" | "bash" | "shell" | "console" | "sh-session"
                )),
            };
            continue;
        }
        if let Some(shell) = fence {
            if !shell {
                continue;
            }
            let t = t.trim_start_matches("$ ");
            if t.starts_with("cairn ") {
                found.push((n + 1, t.to_owned()));
            }
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('`') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('`') else { break };
            let span = &after[..end];
            if span == "cairn" || span.starts_with("cairn ") {
                found.push((n + 1, span.to_owned()));
            }
            rest = &after[end + 1..];
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use clap::CommandFactory;

    use super::*;

    fn root() -> Command {
        let mut c = crate::cli::Cli::command();
        c.build();
        c
    }

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// `docs/cli.md` is what `cairn cli-reference` prints: a flag added, renamed or re-worded
    /// without regenerating it fails here.
    #[test]
    fn the_checked_in_cli_reference_is_the_generated_one() {
        let path = repo().join("docs/cli.md");
        let want = markdown(&root());
        let have = fs_err::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/cli.md differs from the command's own definitions; regenerate it with \
             `cargo run -p cairn-cli -- cli-reference > docs/cli.md`"
        );
    }

    #[test]
    fn the_reference_names_every_visible_command_and_flag() {
        let text = markdown(&root());
        for needle in [
            "## `cairn search`",
            "## `cairn eval replay`",
            "## `cairn bench replay`",
            "`--home <DIR>`",
            "`--set <KEY=VALUE>` (repeatable)",
            "```text\ncairn eval replay [OPTIONS]",
        ] {
            assert!(text.contains(needle), "{needle} missing");
        }
        assert!(
            !text.contains("## `cairn cli-reference`"),
            "hidden commands stay out"
        );
    }

    #[test]
    fn a_named_command_is_checked_word_by_word() {
        let r = root();
        assert!(check_command(&r, "cairn eval replay --since 2026-01-01 --json").is_ok());
        assert!(check_command(&r, "cairn search \"port 8080\" --mode bm25").is_ok());
        assert!(check_command(&r, "cairn --set hook.deadline_ms=500 status").is_ok());
        assert!(check_command(&r, "cairn eval").is_ok());
        let e = check_command(&r, "cairn eval replayy").unwrap_err();
        assert!(e.contains("replayy"), "{e}");
        let e = check_command(&r, "cairn eval replay --sinse 2026-01-01").unwrap_err();
        assert!(e.contains("--sinse"), "{e}");
        assert_eq!(
            named_commands(
                "Run `cairn status` or `cairn`.\n```sh\ncairn bench note --load\n```\n\
                 ```text\ncairn CLI ── Client\n```"
            ),
            vec![
                (1, "cairn status".to_owned()),
                (1, "cairn".to_owned()),
                (3, "cairn bench note --load".to_owned())
            ]
        );
    }

    /// Every `cairn …` command the README and the docs name exists, with each flag it is given.
    #[test]
    fn every_command_the_docs_name_exists() {
        let r = root();
        let mut files = vec![repo().join("README.md"), repo().join("ARCHITECTURE.md")];
        let mut dirs = vec![repo().join("docs")];
        while let Some(d) = dirs.pop() {
            for e in fs_err::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "md") {
                    files.push(p);
                }
            }
        }
        let mut wrong = Vec::new();
        let mut checked = 0;
        for f in &files {
            let text = fs_err::read_to_string(f).unwrap();
            for (line, span) in named_commands(&text) {
                checked += 1;
                if let Err(e) = check_command(&r, &span) {
                    wrong.push(format!("{}:{line}: {e}", f.display()));
                }
            }
        }
        assert!(checked > 50, "only {checked} commands found in the docs");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
