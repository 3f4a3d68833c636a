//! Splits long record texts into overlapping chunks for search (the record stays whole), and
//! cuts a text short for showing ([`cut`]).

/// Texts up to this many bytes are one chunk.
pub const SINGLE_CHUNK_MAX: usize = 1_600;
/// The size a chunk aims for.
pub const TARGET: usize = 1_200;
/// How much consecutive chunks overlap, so a phrase across a boundary is still found.
pub const OVERLAP: usize = 200;

/// (byte offset, text) of each chunk. Boundaries fall on paragraph, line, sentence or word
/// breaks where there is one near the target size, and always on character boundaries.
pub fn split(text: &str) -> Vec<(usize, &str)> {
    if text.len() <= SINGLE_CHUNK_MAX {
        return vec![(0, text)];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let hard_end = floor_char(text, (start + TARGET).min(text.len()));
        let end = if hard_end >= text.len() {
            text.len()
        } else {
            let window_start = floor_char(text, start + TARGET / 2);
            let window = &text[window_start..hard_end];
            ["\n\n", "\n", ". ", " "]
                .iter()
                .find_map(|sep| window.rfind(sep).map(|i| window_start + i + sep.len()))
                .unwrap_or(hard_end)
        };
        out.push((start, &text[start..end]));
        if end >= text.len() {
            break;
        }
        let next = floor_char(text, end.saturating_sub(OVERLAP));
        // Move forward to a word start so the overlap does not begin mid-word.
        let next = text[next..end]
            .find(char::is_whitespace)
            .map(|i| next + i + 1)
            .filter(|&n| n < end);
        start = next
            .map(|n| floor_char(text, n))
            .unwrap_or(end)
            .max(start + 1);
        start = ceil_char(text, start);
    }
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A text made one line (its whitespace runs one space) and cut to `max` characters at a word
/// boundary when one is near, with an ellipsis: how the turn note, the review inbox and skills
/// show an entry.
pub fn cut(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let head: String = flat.chars().take(max.saturating_sub(1)).collect();
    let at = head
        .rfind(' ')
        .filter(|&i| i + 40 >= head.len())
        .unwrap_or(head.len());
    format!("{}…", head[..at].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_one_chunk_and_long_ones_cover_everything_with_overlap() {
        assert_eq!(split("hello"), vec![(0, "hello")]);
        let text: String =
            (0..600).map(|i| format!("word{i} ")).collect::<String>() + "ünïcødé end";
        let chunks = split(&text);
        assert!(chunks.len() > 3);
        assert_eq!(chunks[0].0, 0);
        for w in chunks.windows(2) {
            let (a_start, a) = w[0];
            let (b_start, _) = w[1];
            assert!(b_start > a_start, "progress");
            assert!(b_start <= a_start + a.len(), "no gap");
        }
        let (last_start, last) = chunks[chunks.len() - 1];
        assert_eq!(last_start + last.len(), text.len(), "reaches the end");
        for (start, c) in &chunks {
            assert_eq!(&text[*start..*start + c.len()], *c);
            assert!(c.len() <= TARGET + 4);
        }
    }

    #[test]
    fn multibyte_text_without_spaces_splits_on_char_boundaries() {
        let text = "日本語のテキスト".repeat(300);
        let chunks = split(&text);
        assert!(chunks.len() > 1);
        let (s, c) = chunks[chunks.len() - 1];
        assert_eq!(s + c.len(), text.len());
    }
}
