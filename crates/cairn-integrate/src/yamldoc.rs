//! YAML edited as text, line by line.
//!
//! Only one shape is edited: a top-level block mapping key (`extensions:`) whose value is a
//! block mapping (or empty, or `{}`), with Cairn's entry a block `cairn:` at the children's
//! indentation. Anything else around that key (flow style, anchors, tags, tabs) is refused
//! with an error rather than guessed at. `yaml-rust2` parses the whole file before and after
//! the edit to make sure it is valid and holds what it should.

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use crate::framework::{Fields, V};
use crate::text::{Edit, apply, insert_lines, newline, remove_lines};

/// Parse `text` as one YAML document into a `serde_json::Value`. An empty document (or one
/// holding only comments) is an empty mapping.
pub(crate) fn to_value(text: &str) -> Result<Value, String> {
    let docs =
        YamlLoader::load_from_str(text).map_err(|error| format!("not valid YAML: {error}"))?;
    match docs.as_slice() {
        [] | [Yaml::Null] => Ok(Value::Object(serde_json::Map::new())),
        [doc] => Ok(yaml_json(doc)),
        _ => Err("holds more than one YAML document".to_owned()),
    }
}

fn yaml_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Real(real) => real
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(real.clone()), Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(yaml_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.iter()
                .map(|(key, value)| (key_string(key), yaml_json(value)))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

fn key_string(key: &Yaml) -> String {
    match key {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null => "null".to_owned(),
        other => format!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Lines.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    Comment,
    Content,
}

#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    /// Before the line break.
    end: usize,
    /// After the line break (the next line's start, or the end of text).
    next: usize,
    /// Leading spaces.
    indent: usize,
    kind: Kind,
    /// A tab among the leading whitespace.
    tab: bool,
}

fn lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let next = text[start..]
            .find('\n')
            .map_or(text.len(), |at| start + at + 1);
        let mut end = next;
        if text[start..end].ends_with('\n') {
            end -= 1;
        }
        if text[start..end].ends_with('\r') {
            end -= 1;
        }
        let line = &text[start..end];
        let lead = line
            .bytes()
            .take_while(|&b| b == b' ' || b == b'\t')
            .count();
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[lead..];
        let kind = if rest.is_empty() {
            Kind::Blank
        } else if rest.starts_with('#') {
            Kind::Comment
        } else {
            Kind::Content
        };
        out.push(Line {
            start,
            end,
            next,
            indent,
            kind,
            tab: line[..lead].contains('\t'),
        });
        start = next;
    }
    out
}

/// A mapping key at the start of `line` (after its indentation): the key and the offset of
/// its `:`. `None` for anything that is not a simple `key:` (sequence items, `? ` keys, …).
fn mapping_key(text: &str, line: &Line) -> Option<(String, usize)> {
    let from = line.start + line.indent;
    let rest = &text[from..line.end];
    let (key, after) = match rest.as_bytes().first()? {
        b'"' => {
            let mut i = 1;
            let bytes = rest.as_bytes();
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            let key: String = serde_json::from_str(rest.get(..=i)?).ok()?;
            (key, i + 1)
        }
        b'\'' => {
            let mut i = 1;
            let mut key = String::new();
            loop {
                let c = rest[i..].chars().next()?;
                if c == '\'' {
                    if rest[i + 1..].starts_with('\'') {
                        key.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                key.push(c);
                i += c.len_utf8();
            }
            (key, i + 1)
        }
        b'?' | b'[' | b'{' | b'&' | b'*' | b'!' | b'|' | b'>' | b'#' => return None,
        b'-' if rest == "-" || rest.starts_with("- ") || rest.starts_with("-\t") => return None,
        _ => plain_key(rest)?,
    };
    let spaces = rest[after..]
        .bytes()
        .take_while(|&b| b == b' ' || b == b'\t')
        .count();
    let colon = after + spaces;
    if !rest[colon..].starts_with(':') {
        return None;
    }
    let following = rest[colon + 1..].bytes().next();
    if !matches!(following, None | Some(b' ' | b'\t')) {
        return None;
    }
    Some((key, from + colon))
}

/// A plain key: up to the first `:` followed by a space or the end of the line.
fn plain_key(rest: &str) -> Option<(String, usize)> {
    let bytes = rest.as_bytes();
    let colon = (0..bytes.len())
        .find(|&i| bytes[i] == b':' && matches!(bytes.get(i + 1), None | Some(b' ' | b'\t')))?;
    let key = rest[..colon].trim_end();
    if key.is_empty() || key.contains(" #") {
        return None;
    }
    Some((key.to_owned(), key.len()))
}

/// What follows `key:` on its line.
#[derive(Debug, PartialEq, Eq)]
enum Tail {
    /// Nothing, or only a comment: a block value (or null) follows.
    Block,
    /// `{}`: an empty flow mapping, from the `:` to the closing brace.
    EmptyFlow { end: usize },
    /// Anything else.
    Other,
}

fn tail(text: &str, line: &Line, colon: usize) -> Tail {
    let rest = &text[colon + 1..line.end];
    let trimmed = rest.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Tail::Block;
    }
    if let Some(after) = trimmed.strip_prefix("{}") {
        let after_trimmed = after.trim_start();
        if after_trimmed.is_empty()
            || (after.len() > after_trimmed.len() && after_trimmed.starts_with('#'))
        {
            return Tail::EmptyFlow {
                end: line.end - after.len(),
            };
        }
    }
    Tail::Other
}

/// The top-level `container:` key and the block under it.
struct Section {
    /// Index of the `container:` line.
    line: usize,
    colon: usize,
    tail: Tail,
    /// One past the last line of the block (the next top-level content line, or the end).
    block_end: usize,
    /// The children's indentation, if there are children.
    child_indent: Option<usize>,
    /// The children: index of the key line, one past the index of its last content line, key.
    children: Vec<(usize, usize, String)>,
}

fn section(text: &str, all: &[Line], container: &str) -> Result<Option<Section>, String> {
    let mut found = None;
    for (index, line) in all.iter().enumerate() {
        if line.kind != Kind::Content || line.indent != 0 || line.tab {
            continue;
        }
        if let Some((key, colon)) = mapping_key(text, line)
            && key == container
        {
            if found.is_some() {
                return Err(format!("has the top-level key `{container}` twice"));
            }
            found = Some((index, colon));
        }
    }
    let Some((index, colon)) = found else {
        return Ok(None);
    };
    let block_end = (index + 1..all.len())
        .find(|&i| all[i].kind == Kind::Content && all[i].indent == 0 && !all[i].tab)
        .unwrap_or(all.len());
    let cant = |why: &str| {
        format!(
            "`{container}` {why}; Cairn edits only a block mapping there (`{container}:` with \
             one indented `name:` block per entry) — change it by hand"
        )
    };
    let content: Vec<usize> = (index + 1..block_end)
        .filter(|&i| all[i].kind == Kind::Content)
        .collect();
    if content.iter().any(|&i| all[i].tab) {
        return Err(cant("is indented with tabs"));
    }
    let child_indent = content.first().map(|&i| all[i].indent);
    let mut children: Vec<(usize, usize, String)> = Vec::new();
    for &i in &content {
        let line = &all[i];
        if Some(line.indent) == child_indent {
            let Some((key, _)) = mapping_key(text, line) else {
                return Err(cant("is not a block mapping"));
            };
            children.push((i, i + 1, key));
        } else if child_indent.is_some_and(|indent| line.indent < indent) {
            return Err(cant("has uneven indentation"));
        } else if let Some(last) = children.last_mut() {
            last.1 = i + 1;
        }
    }
    let tail = tail(text, &all[index], colon);
    match (&tail, children.is_empty()) {
        (Tail::Block, _) | (Tail::EmptyFlow { .. }, true) => {}
        (Tail::EmptyFlow { .. }, false) | (Tail::Other, _) => {
            return Err(cant(
                "is written in flow style (`{ … }`), with an anchor or tag, or inline",
            ));
        }
    }
    Ok(Some(Section {
        line: index,
        colon,
        tail,
        block_end,
        child_indent,
        children,
    }))
}

// ---------------------------------------------------------------------------------------------
// Rendering.

fn plain_ok(s: &str) -> bool {
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~",
    ];
    !s.is_empty()
        && !s.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@` \t".contains(c))
        && !s.ends_with([' ', '\t', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains([',', '[', ']', '{', '}'])
        && !s.chars().any(char::is_control)
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
        && s.parse::<f64>().is_err()
        && !s.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

fn render(value: &V) -> String {
    match value {
        V::Str(s) if plain_ok(s) => s.clone(),
        V::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::List(items) => {
            let items: Vec<_> = items.iter().map(render).collect();
            format!("[{}]", items.join(", "))
        }
        V::Map(members) => {
            let members: Vec<_> = members
                .iter()
                .map(|(key, value)| format!("{}: {}", render(&V::Str(key.clone())), render(value)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
    }
}

fn entry_lines(name: &str, fields: &Fields, indent: usize, unit: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let inner = " ".repeat(indent + unit);
    let mut out = vec![format!("{pad}{}:", render(&V::Str(name.to_owned())))];
    out.extend(
        fields
            .iter()
            .map(|(key, value)| format!("{inner}{key}: {}", render(value))),
    );
    out
}

/// The indentation step used elsewhere in the file (the first indented content line), or 2.
fn file_unit(all: &[Line]) -> usize {
    all.iter()
        .find(|line| line.kind == Kind::Content && line.indent > 0 && !line.tab)
        .map_or(2, |line| line.indent)
}

// ---------------------------------------------------------------------------------------------
// Editing.

/// Add or replace `container.name` so it holds `fields`.
pub(crate) fn install(
    text: &str,
    container: &str,
    name: &str,
    fields: &Fields,
) -> Result<String, String> {
    let all = lines(text);
    let nl = newline(text);
    let Some(section) = section(text, &all, container)? else {
        let flow = all.iter().any(|line| {
            line.kind == Kind::Content
                && line.indent == 0
                && text[line.start..line.end].starts_with(['{', '['])
        });
        if flow {
            return Err(
                "the top level is written in flow style (`{ … }`); Cairn edits only block \
                 mappings — change it by hand"
                    .to_owned(),
            );
        }
        let unit = file_unit(&all);
        let mut block = vec![format!("{container}:")];
        block.extend(entry_lines(name, fields, unit, unit));
        return apply(text, vec![insert_lines(text, text.len(), &block, nl)]);
    };
    let unit_of_children = || {
        section.children.iter().find_map(|&(key_line, end, _)| {
            (key_line + 1..end)
                .find(|&i| all[i].kind == Kind::Content)
                .map(|i| all[i].indent.saturating_sub(all[key_line].indent))
                .filter(|&unit| unit > 0)
        })
    };
    let mut edits = Vec::new();
    if let Some(&(key_line, end, _)) = section.children.iter().find(|child| child.2 == name) {
        let indent = all[key_line].indent;
        let unit = unit_of_children().unwrap_or(indent.max(1));
        let block = entry_lines(name, fields, indent, unit);
        let last = &all[end - 1];
        edits.push(Edit::replace(all[key_line].start, last.end, block.join(nl)));
    } else if let Some(&(_, end, _)) = section.children.last() {
        let indent = section.child_indent.unwrap_or(2);
        let unit = unit_of_children().unwrap_or(indent.max(1));
        let block = entry_lines(name, fields, indent, unit);
        edits.push(insert_lines(text, all[end - 1].next, &block, nl));
    } else {
        let unit = file_unit(&all);
        let block = entry_lines(name, fields, unit, unit);
        let line = &all[section.line];
        if let Tail::EmptyFlow { end } = section.tail {
            edits.push(Edit::delete(section.colon + 1, end));
        }
        edits.push(insert_lines(text, line.next, &block, nl));
    }
    apply(text, edits)
}

/// Remove `container.name`. A container left empty becomes `container: {}` again, or goes
/// entirely with `drop_container` (Cairn added it).
pub(crate) fn remove(
    text: &str,
    container: &str,
    name: &str,
    drop_container: bool,
) -> Result<String, String> {
    let all = lines(text);
    let Some(section) = section(text, &all, container)? else {
        return Ok(text.to_owned());
    };
    let Some(&(key_line, end, _)) = section.children.iter().find(|child| child.2 == name) else {
        return Ok(text.to_owned());
    };
    let last_line = all[end - 1];
    let alone = section.children.len() == 1;
    if alone
        && drop_container
        && key_line == section.line + 1
        && (end..section.block_end).all(|i| all[i].kind == Kind::Blank)
    {
        return apply(
            text,
            vec![remove_lines(text, all[section.line].start, last_line.next)],
        );
    }
    let mut edits = vec![remove_lines(text, all[key_line].start, last_line.next)];
    if alone {
        edits.push(Edit::insert(section.colon + 1, " {}"));
    }
    apply(text, edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        vec![
            ("cmd".into(), V::Str("/bin/cairn".into())),
            ("args".into(), V::List(vec![V::Str("mcp".into())])),
            ("enabled".into(), V::Bool(true)),
        ]
    }

    #[test]
    fn round_trips() {
        for (original, created) in [
            ("", true),
            ("GOOSE_MODEL: x", true),
            ("GOOSE_MODEL: x\r\n", true),
            ("extensions: {}\n", false),
            ("extensions: {} # none\nGOOSE_MODEL: x\n", false),
            (
                "extensions:\n    dev:\n        enabled: true\n# end\nx: 1\n",
                false,
            ),
            ("extensions:\n  dev:\n    enabled: true", false),
        ] {
            let installed = install(original, "extensions", "cairn", &fields()).unwrap();
            let value = to_value(&installed).unwrap();
            assert_eq!(
                value["extensions"]["cairn"]["cmd"], "/bin/cairn",
                "{installed}"
            );
            let removed = remove(&installed, "extensions", "cairn", created).unwrap();
            assert_eq!(removed, original, "installed:\n{installed}");
        }
    }

    #[test]
    fn an_empty_block_becomes_an_empty_mapping() {
        let text = "extensions:\nx: 1\n";
        let installed = install(text, "extensions", "cairn", &fields()).unwrap();
        assert!(
            installed.starts_with("extensions:\n  cairn:\n"),
            "{installed}"
        );
        let removed = remove(&installed, "extensions", "cairn", false).unwrap();
        assert_eq!(removed, "extensions: {}\nx: 1\n");
    }

    #[test]
    fn quoted_keys_and_crlf() {
        let text = "\"extensions\":\r\n  'dev':\r\n    enabled: true\r\n";
        let installed = install(text, "extensions", "cairn", &fields()).unwrap();
        assert!(installed.ends_with(
            "  cairn:\r\n    cmd: /bin/cairn\r\n    args: [mcp]\r\n    enabled: true\r\n"
        ));
        assert_eq!(
            remove(&installed, "extensions", "cairn", false).unwrap(),
            text
        );
    }

    #[test]
    fn follows_the_childrens_indentation() {
        let text = "extensions:\n    dev:\n        enabled: true\n";
        let installed = install(text, "extensions", "cairn", &fields()).unwrap();
        assert!(installed.ends_with(
            "    cairn:\n        cmd: /bin/cairn\n        args: [mcp]\n        enabled: true\n"
        ));
    }

    #[test]
    fn refuses_flow_style() {
        let text = "extensions: {dev: {enabled: true}}\n";
        let error = install(text, "extensions", "cairn", &fields()).unwrap_err();
        assert!(error.contains("flow style"), "{error}");
    }

    #[test]
    fn quotes_what_is_not_plain() {
        assert_eq!(render(&V::Str("/usr/bin/cairn".into())), "/usr/bin/cairn");
        assert_eq!(render(&V::Str("C:\\a b: c".into())), "\"C:\\\\a b: c\"");
        assert_eq!(render(&V::Str("true".into())), "\"true\"");
    }
}
