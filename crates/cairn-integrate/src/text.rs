//! Text edits shared by the format modules: byte-range replacements applied back to front,
//! line helpers that respect the file's newline style and a missing final newline.

/// Replace `start..end` with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) text: String,
}

impl Edit {
    pub(crate) fn insert(at: usize, text: impl Into<String>) -> Self {
        Self {
            start: at,
            end: at,
            text: text.into(),
        }
    }

    pub(crate) fn delete(start: usize, end: usize) -> Self {
        Self {
            start,
            end,
            text: String::new(),
        }
    }

    pub(crate) fn replace(start: usize, end: usize, text: impl Into<String>) -> Self {
        Self {
            start,
            end,
            text: text.into(),
        }
    }
}

/// Apply edits that do not overlap. Fails (a bug in the caller) when they do or when a range
/// falls outside the text or inside a character.
pub(crate) fn apply(text: &str, mut edits: Vec<Edit>) -> Result<String, String> {
    edits.sort_by_key(|edit| (edit.start, edit.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for edit in &edits {
        if edit.start < at || edit.end < edit.start || edit.end > text.len() {
            return Err("overlapping or out-of-range edits".to_owned());
        }
        let (Some(keep), true) = (text.get(at..edit.start), text.is_char_boundary(edit.end)) else {
            return Err("an edit splits a character".to_owned());
        };
        out.push_str(keep);
        out.push_str(&edit.text);
        at = edit.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    Ok(out)
}

/// The newline style of a file: CRLF when its first line break is CRLF, else LF.
pub(crate) fn newline(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// The start of the line holding byte `pos`.
pub(crate) fn line_start(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// The end of the line holding byte `pos`, before its `\r\n` or `\n` (or the end of text).
pub(crate) fn line_end(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    let nl = bytes[pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| pos + i);
    if nl < bytes.len() && nl > pos && bytes[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    }
}

/// The start of the line after the one holding byte `pos` (or the end of text).
pub(crate) fn line_next(text: &str, pos: usize) -> usize {
    text.as_bytes()[pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| pos + i + 1)
}

/// The leading spaces and tabs of the line holding byte `pos`.
pub(crate) fn indent_of_line(text: &str, pos: usize) -> &str {
    let start = line_start(text, pos);
    let rest = &text[start..];
    let len = rest
        .bytes()
        .take_while(|&b| b == b' ' || b == b'\t')
        .count();
    &rest[..len]
}

/// Whether only spaces and tabs stand between the start of its line and `pos`.
pub(crate) fn first_on_line(text: &str, pos: usize) -> bool {
    text[line_start(text, pos)..pos]
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
}

/// Whether only spaces, tabs (and a `\r`) stand between `pos` and the end of its line.
pub(crate) fn rest_of_line_blank(text: &str, pos: usize) -> bool {
    text[pos..line_end(text, pos)]
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || b == b'\r')
}

/// Insert whole lines at a line boundary `at`. At the end of a text that has no final newline,
/// the lines go after a newline and keep the file without one, so [`remove_lines`] undoes it.
pub(crate) fn insert_lines(text: &str, at: usize, lines: &[String], nl: &str) -> Edit {
    let body = lines.join(nl);
    if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        Edit::insert(at, format!("{nl}{body}"))
    } else {
        Edit::insert(at, format!("{body}{nl}"))
    }
}

/// Remove the whole lines `start..end` (`start` a line start, `end` a line start or the end of
/// text). When they end the text without a final newline, the newline before them goes too,
/// so the text again ends without one: the exact inverse of [`insert_lines`].
pub(crate) fn remove_lines(text: &str, start: usize, end: usize) -> Edit {
    if end == text.len() && start > 0 && !text.ends_with('\n') {
        let bytes = text.as_bytes();
        let mut from = start - 1;
        if from > 0 && bytes[from - 1] == b'\r' {
            from -= 1;
        }
        Edit::delete(from, end)
    } else {
        Edit::delete(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_with_and_without_final_newline() {
        for text in ["a\nb", "a\nb\n", "a\r\nb", "a\r\nb\r\n", ""] {
            let nl = newline(text);
            let insert = insert_lines(text, text.len(), &["x".into(), "y".into()], nl);
            let added = apply(text, vec![insert.clone()]).unwrap();
            let start = insert.start + usize::from(insert.text.starts_with(nl)) * nl.len();
            let removal = remove_lines(&added, start, added.len());
            assert_eq!(apply(&added, vec![removal]).unwrap(), text, "{text:?}");
        }
    }

    #[test]
    fn line_ends() {
        let text = "ab\r\ncd\nef";
        assert_eq!(line_end(text, 0), 2);
        assert_eq!(line_end(text, 4), 6);
        assert_eq!(line_end(text, 7), 9);
        assert_eq!(line_next(text, 0), 4);
        assert_eq!(line_start(text, 5), 4);
    }
}
