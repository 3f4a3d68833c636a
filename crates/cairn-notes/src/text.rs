//! Text helpers: hashes, titles, numbered views and line edits.
use sha2::{Digest, Sha256};

/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;

/// The sha256 of a text, lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn clip(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.trim();
    if clean.chars().count() <= MAX_TITLE_CHARS {
        clean.to_owned()
    } else {
        let mut t: String = clean.chars().take(MAX_TITLE_CHARS - 1).collect();
        t = t.trim_end().to_owned();
        t.push('…');
        t
    }
}

/// The text of an ATX heading line (`# Title`, `## Title ##`), if the line is one.
fn atx_heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let after = &rest[hashes..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let text = after.trim();
    // An optional closing sequence of `#`s, preceded by a space.
    let stripped = text.trim_end_matches('#');
    let text = if stripped.is_empty() || stripped.ends_with([' ', '\t']) {
        stripped.trim_end()
    } else {
        text
    };
    Some(text)
}

/// A note's title: the first Markdown ATX heading's text, else the first non-empty line,
/// else the file name without its extension; at most [`MAX_TITLE_CHARS`] characters.
/// Headings inside fenced code blocks and a leading YAML front-matter block are skipped.
pub fn title_of(content: &str, file_name: &str) -> String {
    let mut lines = content.lines().peekable();
    if lines.peek().is_some_and(|l| l.trim_end() == "---") {
        lines.next();
        for l in lines.by_ref() {
            if l.trim_end() == "---" || l.trim_end() == "..." {
                break;
            }
        }
    }
    let mut first_line: Option<&str> = None;
    let mut fence: Option<&str> = None;
    for line in lines {
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if t.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        if let Some(h) = atx_heading(line) {
            if !h.is_empty() {
                return clip(h);
            }
            continue;
        }
        if first_line.is_none() && !t.trim().is_empty() {
            first_line = Some(t);
        }
    }
    if let Some(l) = first_line {
        return clip(l);
    }
    let stem = match file_name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s,
        _ => file_name,
    };
    // Content is scrubbed before it is stored; a file name is not, so its title is scrubbed
    // here (whole, before the clip, so no fragment of a secret is left).
    clip(&cairn_text::scrub::scrubber().scrub(stem).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_heading_then_the_first_line_then_the_name() {
        assert_eq!(
            title_of("intro\n# Real title ##\nbody", "a.md"),
            "Real title"
        );
        assert_eq!(title_of("```\n# not a title\n```\n## Yes", "a.md"), "Yes");
        assert_eq!(
            title_of("---\ntitle: x\n---\n\nFirst line\n", "a.md"),
            "First line"
        );
        assert_eq!(title_of("\n\n  plain  \n", "a.md"), "plain");
        assert_eq!(title_of("", "migrations.md"), "migrations");
        assert_eq!(title_of("", "notes"), "notes");
        assert_eq!(title_of("#hashtag only", "x.md"), "#hashtag only");
        // Built from parts so no whole token sits in the source.
        let name = format!("ghp_{}.md", "k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio");
        assert_eq!(title_of("", &name), "[REDACTED:github-token]");
        let long = format!("# {}", "w".repeat(300));
        assert_eq!(title_of(&long, "x.md").chars().count(), MAX_TITLE_CHARS);
    }
}
