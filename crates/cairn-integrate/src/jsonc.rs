//! JSON and JSONC (comments, trailing commas) edited as text.
//!
//! A small parser records where every object member starts and ends; Cairn's member is then
//! inserted as one span of text in the file's own indentation and newline style, and removal
//! takes out exactly that span (and the comma it added), so install → remove gives back the
//! original bytes. Values are compared with `serde_json` after comments and trailing commas
//! are blanked out (offsets stay the same, so error positions stay right).

use serde_json::Value;

use crate::framework::{Fields, V};
use crate::text::{
    Edit, apply, first_on_line, indent_of_line, line_end, line_next, line_start, newline,
    rest_of_line_blank,
};

/// The deepest nesting accepted; `serde_json` stops at 128 as well.
const MAX_DEPTH: usize = 128;

/// Parse `text` as JSON (`jsonc == false`, strict) or JSONC into a `serde_json::Value`.
pub(crate) fn to_value(text: &str, jsonc: bool) -> Result<Value, String> {
    let text = blank_bom(text);
    let source = if jsonc {
        strip(&text)
    } else {
        text.into_owned()
    };
    serde_json::from_str(&source).map_err(|error| {
        let kind = if jsonc {
            "JSON (with comments)"
        } else {
            "JSON"
        };
        format!("not valid {kind}: {error}")
    })
}

/// A UTF-8 byte order mark replaced by three spaces (so offsets do not move).
fn blank_bom(text: &str) -> std::borrow::Cow<'_, str> {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => format!("   {rest}").into(),
        None => text.into(),
    }
}

/// The text with comments and trailing commas replaced by spaces (newlines kept), byte for byte
/// the same length, ready for `serde_json`.
pub(crate) fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    // Index in `out` of a comma whose fate depends on the next significant character.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let close = text[i + 2..].find("*/").map(|at| i + 2 + at + 2);
                let end = close.unwrap_or(bytes.len());
                for (at, &byte) in bytes.iter().enumerate().take(end).skip(i) {
                    if byte != b'\n' && byte != b'\r' {
                        out[at] = b' ';
                    }
                }
                if close.is_none() {
                    // Leave an unterminated comment visible so serde_json reports an error.
                    out[i] = b'/';
                }
                i = end;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, so this is still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The span parser.

#[derive(Debug)]
pub(crate) enum Node {
    Object(Object),
    /// An array: an [`Object`] whose members have no keys (`is_array`).
    Array(Object),
    Other,
}

/// An object, or an array (then its members are the items, with empty keys and
/// `key_start == value_start`).
#[derive(Debug)]
pub(crate) struct Object {
    /// Byte offset of `{` (or `[`).
    pub(crate) open: usize,
    /// Byte offset of `}` (or `]`).
    pub(crate) close: usize,
    pub(crate) members: Vec<Member>,
    /// Whether this is an array.
    pub(crate) is_array: bool,
}

#[derive(Debug)]
pub(crate) struct Member {
    /// The key (empty for an array item).
    pub(crate) key: String,
    pub(crate) key_start: usize,
    pub(crate) value_start: usize,
    pub(crate) value_end: usize,
    pub(crate) value: Node,
    /// Byte offset of the comma after the value, if any.
    pub(crate) comma: Option<usize>,
}

impl Member {
    /// Where the member's text ends: after its comma, or after its value.
    pub(crate) fn end(&self) -> usize {
        self.comma.map_or(self.value_end, |comma| comma + 1)
    }
}

impl Object {
    /// The last member with this key (JSON parsers keep the last of duplicate keys).
    pub(crate) fn last(&self, key: &str) -> Option<(usize, &Member)> {
        self.members
            .iter()
            .enumerate()
            .rev()
            .find(|(_, member)| member.key == key)
    }

    pub(crate) fn multiline(&self, text: &str) -> bool {
        text[self.open..self.close].contains('\n')
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

/// Parse the text's top-level value with spans. The text has already passed [`to_value`], so
/// errors here are unexpected; they are still reported, never panicked on.
pub(crate) fn parse(text: &str) -> Result<Node, String> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    if text.starts_with('\u{feff}') {
        parser.pos = 3;
    }
    parser.trivia();
    let node = parser.value(0)?.0;
    parser.trivia();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("unexpected text after the top-level value"));
    }
    Ok(node)
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        let line = self.text[..self.pos].matches('\n').count() + 1;
        format!("{what} (line {line})")
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skip whitespace and comments.
    fn trivia(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.bytes.get(self.pos + 1) == Some(&b'*') => {
                    match self.text[self.pos + 2..].find("*/") {
                        Some(at) => self.pos += 2 + at + 2,
                        None => self.pos = self.bytes.len(),
                    }
                }
                _ => return,
            }
        }
    }

    /// A value; returns it and its end offset.
    fn value(&mut self, depth: usize) -> Result<(Node, usize), String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                self.string()?;
                Ok((Node::Other, self.pos))
            }
            Some(_) => {
                let start = self.pos;
                while let Some(b) = self.peek() {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.') {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                if self.pos == start {
                    return Err(self.error("expected a value"));
                }
                Ok((Node::Other, self.pos))
            }
            None => Err(self.error("unexpected end of text")),
        }
    }

    /// A string; returns its start offset and leaves `pos` after the closing quote.
    fn string(&mut self) -> Result<usize, String> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(start);
                }
                Some(_) => self.pos += 1,
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(Node, usize), String> {
        let open = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        self.trivia();
        while self.peek() != Some(b']') {
            let value_start = self.pos;
            let (value, value_end) = self.value(depth + 1)?;
            self.trivia();
            let comma = match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    let comma = self.pos - 1;
                    self.trivia();
                    Some(comma)
                }
                Some(b']') => None,
                _ => return Err(self.error("expected `,` or `]`")),
            };
            members.push(Member {
                key: String::new(),
                key_start: value_start,
                value_start,
                value_end,
                value,
                comma,
            });
        }
        let close = self.pos;
        self.pos += 1;
        Ok((
            Node::Array(Object {
                open,
                close,
                members,
                is_array: true,
            }),
            self.pos,
        ))
    }

    fn object(&mut self, depth: usize) -> Result<(Node, usize), String> {
        let open = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.trivia();
            match self.peek() {
                Some(b'}') => break,
                Some(b'"') => {}
                _ => return Err(self.error("expected a key or `}`")),
            }
            let key_start = self.string()?;
            let key: String = serde_json::from_str(&self.text[key_start..self.pos])
                .map_err(|error| self.error(&format!("bad key: {error}")))?;
            self.trivia();
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:`"));
            }
            self.pos += 1;
            self.trivia();
            let value_start = self.pos;
            let (value, value_end) = self.value(depth + 1)?;
            self.trivia();
            let comma = match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    Some(self.pos - 1)
                }
                Some(b'}') => None,
                _ => return Err(self.error("expected `,` or `}`")),
            };
            members.push(Member {
                key,
                key_start,
                value_start,
                value_end,
                value,
                comma,
            });
            if comma.is_none() {
                self.trivia();
                break;
            }
        }
        let close = self.pos;
        self.pos += 1;
        Ok((
            Node::Object(Object {
                open,
                close,
                members,
                is_array: false,
            }),
            self.pos,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering.

/// The file's newline and one level of indentation.
pub(crate) struct Style {
    nl: &'static str,
    unit: String,
}

impl Style {
    pub(crate) fn detect(text: &str, top: &Object) -> Self {
        let nl = newline(text);
        let unit = top
            .members
            .first()
            .filter(|_| top.multiline(text))
            .filter(|first| first_on_line(text, first.key_start))
            .map(|first| indent_of_line(text, first.key_start).to_owned())
            .filter(|indent| !indent.is_empty())
            .unwrap_or_else(|| "  ".to_owned());
        Self { nl, unit }
    }
}

/// How a value is laid out: on one line, or over lines starting at the given indentation.
#[derive(Clone, Copy)]
enum Layout<'a> {
    Inline,
    Lines(&'a str),
}

fn key(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_default()
}

fn render(value: &V, layout: Layout<'_>, style: &Style) -> String {
    match value {
        V::Str(s) => key(s),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::List(items)
            if matches!(layout, Layout::Lines(_))
                && items
                    .iter()
                    .any(|item| matches!(item, V::Map(m) if !m.is_empty())) =>
        {
            // A list of objects (hook entries) goes over lines, one item per line.
            let Layout::Lines(indent) = layout else {
                return String::new();
            };
            let inner = format!("{indent}{}", style.unit);
            let rendered: Vec<_> = items
                .iter()
                .map(|item| render(item, Layout::Lines(&inner), style))
                .collect();
            format!(
                "[{nl}{inner}{body}{nl}{indent}]",
                nl = style.nl,
                body = rendered.join(&format!(",{}{inner}", style.nl))
            )
        }
        V::List(items) => {
            let items: Vec<_> = items
                .iter()
                .map(|item| render(item, Layout::Inline, style))
                .collect();
            format!("[{}]", items.join(", "))
        }
        V::Map(members) if members.is_empty() => "{}".to_owned(),
        V::Map(members) => match layout {
            Layout::Inline => format!(
                "{{{}}}",
                render_members(members, Layout::Inline, style, true)
            ),
            Layout::Lines(indent) => {
                let inner = format!("{indent}{}", style.unit);
                format!(
                    "{{{nl}{inner}{body}{nl}{indent}}}",
                    nl = style.nl,
                    body = render_members(members, Layout::Lines(&inner), style, true)
                )
            }
        },
    }
}

/// Members as `"key": value` (or, not `keyed`, array items as `value`), joined for the
/// layout (the first one not indented).
fn render_members(
    members: &[(String, V)],
    layout: Layout<'_>,
    style: &Style,
    keyed: bool,
) -> String {
    let rendered: Vec<_> = members
        .iter()
        .map(|(name, value)| {
            if keyed {
                format!("{}: {}", key(name), render(value, layout, style))
            } else {
                render(value, layout, style)
            }
        })
        .collect();
    match layout {
        Layout::Inline => rendered.join(", "),
        Layout::Lines(indent) => rendered.join(&format!(",{}{indent}", style.nl)),
    }
}

// ---------------------------------------------------------------------------------------------
// Editing.

/// Edits that add `members` at the end of `object`. `parent_multiline` says whether the object
/// holding `object` spans lines (the top level counts as such), which decides how an empty
/// `{}` is filled.
pub(crate) fn insert_members(
    text: &str,
    object: &Object,
    parent_multiline: bool,
    members: &[(String, V)],
    style: &Style,
) -> Vec<Edit> {
    let keyed = !object.is_array;
    let inline = || render_members(members, Layout::Inline, style, keyed);
    let Some(last) = object.members.last() else {
        let interior = &text[object.open + 1..object.close];
        if interior.trim().is_empty() {
            // `{}` (or only whitespace): fill it; removal gives back `{}`.
            if !parent_multiline {
                return vec![Edit::replace(object.open + 1, object.close, inline())];
            }
            let outer = indent_of_line(text, object.open);
            let inner = format!("{outer}{}", style.unit);
            let body = render_members(members, Layout::Lines(&inner), style, keyed);
            let nl = style.nl;
            return vec![Edit::replace(
                object.open + 1,
                object.close,
                format!("{nl}{inner}{body}{nl}{outer}"),
            )];
        }
        // Only comments inside: add a line before the closing brace, or inline before it.
        if first_on_line(text, object.close) {
            let inner = format!("{}{}", indent_of_line(text, object.open), style.unit);
            let body = render_members(members, Layout::Lines(&inner), style, keyed);
            let at = line_start(text, object.close);
            return vec![Edit::insert(at, format!("{inner}{body}{}", style.nl))];
        }
        let space = if text[..object.close].ends_with([' ', '\t']) {
            ""
        } else {
            " "
        };
        return vec![Edit::insert(object.close, format!("{space}{}", inline()))];
    };
    let after = last.end();
    if object.multiline(text)
        && let Some(at) = end_of_line_after(text, after)
    {
        let indent = if first_on_line(text, last.key_start) {
            indent_of_line(text, last.key_start).to_owned()
        } else {
            format!("{}{}", indent_of_line(text, object.open), style.unit)
        };
        let body = render_members(members, Layout::Lines(&indent), style, keyed);
        let mut edits = Vec::new();
        let trailing = if last.comma.is_some() {
            ","
        } else {
            edits.push(Edit::insert(last.value_end, ","));
            ""
        };
        edits.push(Edit::insert(
            at,
            format!("{}{indent}{body}{trailing}", style.nl),
        ));
        return edits;
    }
    match last.comma {
        None => vec![Edit::insert(last.value_end, format!(", {}", inline()))],
        Some(comma) => vec![Edit::insert(comma + 1, format!(" {},", inline()))],
    }
}

/// From `pos`, skip spaces, tabs and comments that end on this line; the offset of the line
/// break reached, or `None` if something else follows on the line.
fn end_of_line_after(text: &str, pos: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = pos;
    loop {
        match bytes.get(i) {
            Some(b' ' | b'\t') => i += 1,
            Some(b'\r' | b'\n') => return Some(i),
            Some(b'/') if bytes.get(i + 1) == Some(&b'/') => return Some(line_end(text, i)),
            Some(b'/') if bytes.get(i + 1) == Some(&b'*') => {
                let close = i + 2 + text[i + 2..].find("*/")? + 2;
                if text[i..close].contains('\n') {
                    return None;
                }
                i = close;
            }
            _ => return None,
        }
    }
}

/// Edits that remove member `index` of `object`: the exact inverse of [`insert_members`] for a
/// member it added, and a tidy removal otherwise.
pub(crate) fn remove_member(text: &str, object: &Object, index: usize) -> Vec<Edit> {
    let member = &object.members[index];
    let end = member.end();
    let own_line = first_on_line(text, member.key_start) && rest_of_line_blank(text, end);
    if object.members.len() == 1
        && text[object.open + 1..member.key_start].trim().is_empty()
        && text[end..object.close].trim().is_empty()
    {
        return vec![Edit::delete(object.open + 1, object.close)];
    }
    let last = index + 1 == object.members.len();
    if last && index > 0 {
        let previous = &object.members[index - 1];
        let start = line_start(text, member.key_start);
        if own_line && start > 0 {
            let before_newline = if text[..start].ends_with("\r\n") {
                start - 2
            } else {
                start - 1
            };
            let mut edits = vec![Edit::delete(before_newline, line_end(text, end))];
            if member.comma.is_none()
                && let Some(comma) = previous.comma
            {
                edits.push(Edit::delete(comma, comma + 1));
            }
            return edits;
        }
        return match (member.comma, previous.comma) {
            (None, _) => vec![Edit::delete(previous.value_end, member.value_end)],
            (Some(comma), Some(previous_comma)) => {
                vec![Edit::delete(previous_comma + 1, comma + 1)]
            }
            (Some(comma), None) => vec![Edit::delete(member.key_start, comma + 1)],
        };
    }
    if own_line {
        return vec![Edit::delete(
            line_start(text, member.key_start),
            line_next(text, end),
        )];
    }
    if last {
        // The only member, among comments: undo the space `insert_members` put before it.
        let mut start = member.key_start;
        if text[..start].ends_with(' ') && !text[..start - 1].ends_with([' ', '\t', '\n']) {
            start -= 1;
        }
        return vec![Edit::delete(start, end)];
    }
    let mut until = end;
    while matches!(text.as_bytes().get(until), Some(b' ' | b'\t')) {
        until += 1;
    }
    vec![Edit::delete(member.key_start, until)]
}

pub(crate) fn top_object(text: &str) -> Result<Object, String> {
    match parse(text)? {
        Node::Object(object) => Ok(object),
        Node::Array(_) | Node::Other => Err("the top level is not an object".to_owned()),
    }
}

/// Add or update `container.name` so it holds `fields`.
pub(crate) fn install(
    text: &str,
    jsonc: bool,
    container: &str,
    name: &str,
    fields: &Fields,
) -> Result<String, String> {
    let top = top_object(text)?;
    let style = Style::detect(text, &top);
    let entry = V::Map(fields.clone());
    let edits = match top.last(container) {
        None => insert_members(
            text,
            &top,
            true,
            &[(container.to_owned(), V::Map(vec![(name.to_owned(), entry)]))],
            &style,
        ),
        Some((_, holder)) => {
            let Node::Object(servers) = &holder.value else {
                return Err(format!("`{container}` is not an object"));
            };
            match servers.last(name) {
                None => insert_members(
                    text,
                    servers,
                    top.multiline(text),
                    &[(name.to_owned(), entry)],
                    &style,
                ),
                Some((_, current)) => update(text, jsonc, servers, current, fields, &style)?,
            }
        }
    };
    apply(text, edits)
}

/// Edits that bring an existing entry to `fields`, touching only the values that differ (and
/// adding missing ones); other keys the user put in the entry stay.
fn update(
    text: &str,
    jsonc: bool,
    servers: &Object,
    current: &Member,
    fields: &Fields,
    style: &Style,
) -> Result<Vec<Edit>, String> {
    let Node::Object(entry) = &current.value else {
        let indent = indent_of_line(text, current.key_start);
        let layout = if servers.multiline(text) {
            Layout::Lines(indent)
        } else {
            Layout::Inline
        };
        return Ok(vec![Edit::replace(
            current.value_start,
            current.value_end,
            render(&V::Map(fields.clone()), layout, style),
        )]);
    };
    let mut edits = Vec::new();
    let mut missing = Vec::new();
    for (name, value) in fields {
        match entry.last(name) {
            Some((_, member)) => {
                let existing = to_value(&text[member.value_start..member.value_end], jsonc)?;
                if existing != value.to_json() {
                    let indent = indent_of_line(text, member.key_start);
                    edits.push(Edit::replace(
                        member.value_start,
                        member.value_end,
                        render(value, Layout::Lines(indent), style),
                    ));
                }
            }
            None => missing.push((name.clone(), value.clone())),
        }
    }
    if !missing.is_empty() {
        edits.extend(insert_members(
            text,
            entry,
            servers.multiline(text),
            &missing,
            style,
        ));
    }
    Ok(edits)
}

/// Remove `container.name`. With `drop_container`, a container left holding nothing else is
/// removed too (Cairn added it).
pub(crate) fn remove(
    text: &str,
    container: &str,
    name: &str,
    drop_container: bool,
) -> Result<String, String> {
    let top = top_object(text)?;
    let Some((holder_index, holder)) = top.last(container) else {
        return Ok(text.to_owned());
    };
    let Node::Object(servers) = &holder.value else {
        return Err(format!("`{container}` is not an object"));
    };
    let Some((index, member)) = servers.last(name) else {
        return Ok(text.to_owned());
    };
    let alone = servers.members.len() == 1
        && text[servers.open + 1..member.key_start].trim().is_empty()
        && text[member.end()..servers.close].trim().is_empty();
    let edits = if drop_container && alone {
        remove_member(text, &top, holder_index)
    } else {
        remove_member(text, servers, index)
    };
    apply(text, edits)
}

// ---------------------------------------------------------------------------------------------
// Hook lists: `hooks.<event>` arrays.

/// Whether `member` is all `object` holds (no other member, no comment beside it).
fn alone(text: &str, object: &Object, member: &Member) -> bool {
    object.members.len() == 1
        && text[object.open + 1..member.key_start].trim().is_empty()
        && text[member.end()..object.close].trim().is_empty()
}

/// Append `item` to the array `hooks.<event>`, adding `hooks` and the array if they are
/// missing. Returns the new text.
pub(crate) fn hook_append(text: &str, event: &str, item: &V) -> Result<String, String> {
    let top = top_object(text)?;
    let style = Style::detect(text, &top);
    let list = || V::List(vec![item.clone()]);
    let edits = match top.last("hooks") {
        None => insert_members(
            text,
            &top,
            true,
            &[("hooks".to_owned(), V::Map(vec![(event.to_owned(), list())]))],
            &style,
        ),
        Some((_, holder)) => {
            let Node::Object(hooks) = &holder.value else {
                return Err("`hooks` is not an object".to_owned());
            };
            match hooks.last(event) {
                None => insert_members(
                    text,
                    hooks,
                    top.multiline(text),
                    &[(event.to_owned(), list())],
                    &style,
                ),
                Some((_, member)) => {
                    let Node::Array(items) = &member.value else {
                        return Err(format!("`hooks.{event}` is not a list"));
                    };
                    insert_members(
                        text,
                        items,
                        hooks.multiline(text),
                        &[(String::new(), item.clone())],
                        &style,
                    )
                }
            }
        }
    };
    apply(text, edits)
}

/// Take the last of Cairn's handlers out of `hooks.<event>`; `None` when there is none.
///
/// `grouped`: the list holds matcher groups (`{"hooks": [handler, …]}`), and a group holding
/// only Cairn's handler goes with it; otherwise the list holds handlers. `is_cairns` says
/// whether a handler's parsed value is Cairn's. With `drop_event`, a list left holding
/// nothing else is removed too, and with `drop_hooks` then also a `hooks` left empty
/// (Cairn added them): the exact inverse of [`hook_append`].
pub(crate) fn hook_remove(
    text: &str,
    jsonc: bool,
    event: &str,
    grouped: bool,
    is_cairns: &dyn Fn(&Value) -> bool,
    drop_event: bool,
    drop_hooks: bool,
) -> Result<Option<String>, String> {
    let top = top_object(text)?;
    let Some((hooks_index, holder)) = top.last("hooks") else {
        return Ok(None);
    };
    let Node::Object(hooks) = &holder.value else {
        return Err("`hooks` is not an object".to_owned());
    };
    let Some((event_index, member)) = hooks.last(event) else {
        return Ok(None);
    };
    let Node::Array(items) = &member.value else {
        return Err(format!("`hooks.{event}` is not a list"));
    };
    let value = |m: &Member| to_value(&text[m.value_start..m.value_end], jsonc);
    let remove_item = |index: usize| {
        let item = &items.members[index];
        if drop_event && alone(text, items, item) {
            if drop_hooks && alone(text, hooks, member) {
                return remove_member(text, &top, hooks_index);
            }
            return remove_member(text, hooks, event_index);
        }
        remove_member(text, items, index)
    };
    for (index, item) in items.members.iter().enumerate().rev() {
        if !grouped {
            if is_cairns(&value(item)?) {
                return apply(text, remove_item(index)).map(Some);
            }
            continue;
        }
        let Node::Object(group) = &item.value else {
            continue;
        };
        let Some((_, inner)) = group.last("hooks") else {
            continue;
        };
        let Node::Array(handlers) = &inner.value else {
            continue;
        };
        for (at, handler) in handlers.members.iter().enumerate().rev() {
            if !is_cairns(&value(handler)?) {
                continue;
            }
            let edits = if handlers.members.len() == 1 && alone(text, group, inner) {
                remove_item(index)
            } else {
                remove_member(text, handlers, at)
            };
            return apply(text, edits).map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        vec![
            ("command".into(), V::Str("/bin/cairn".into())),
            ("args".into(), V::List(vec![V::Str("mcp".into())])),
        ]
    }

    fn round_trip(original: &str, jsonc: bool) -> String {
        let installed = install(original, jsonc, "mcpServers", "cairn", &fields()).unwrap();
        let value = to_value(&installed, jsonc).unwrap();
        assert_eq!(
            value["mcpServers"]["cairn"]["command"], "/bin/cairn",
            "{installed}"
        );
        let had_container = to_value(original, jsonc)
            .unwrap()
            .get("mcpServers")
            .is_some();
        let removed = remove(&installed, "mcpServers", "cairn", !had_container).unwrap();
        assert_eq!(removed, original, "installed:\n{installed}");
        installed
    }

    #[test]
    fn strip_keeps_offsets_and_drops_trailing_commas() {
        let text = "{\"a\": 1, // c\n \"b\": [1,2,], /* x */}";
        let stripped = strip(text);
        assert_eq!(stripped.len(), text.len());
        let value: Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(value["b"][1], 2);
        assert_eq!(strip("\"a,//\""), "\"a,//\"");
    }

    #[test]
    fn round_trips() {
        round_trip("{}", false);
        round_trip("{}\n", false);
        round_trip("{\"a\":1}", false);
        round_trip("{\n  \"a\": 1\n}\n", false);
        round_trip("{\n\t\"a\": 1,\n\t\"mcpServers\": {}\n}", false);
        round_trip(
            "{\r\n    \"mcpServers\": {\r\n        \"x\": {}\r\n    }\r\n}\r\n",
            false,
        );
        round_trip("{\n  \"a\": 1, // note\n  \"b\": 2 // last\n}\n", true);
        round_trip("{\n  \"a\": 1,\n  \"mcpServers\": {\"x\": {},},\n}\n", true);
        round_trip("{\n  \"mcpServers\": {\n    // none yet\n  }\n}\n", true);
        round_trip("{\"mcpServers\": {/* none */}}", true);
        round_trip("{ \"a\": 1,\n  \"b\": 2 }", false);
        round_trip("\u{feff}{\n  \"a\": 1\n}\n", false);
        round_trip(
            "{\n  \"a\": \"// not a comment, }\" // but this is\n}\n",
            true,
        );
    }

    #[test]
    fn inserts_in_the_files_style() {
        let installed = round_trip("{\n    \"a\": 1\n}\n", false);
        assert_eq!(
            installed,
            "{\n    \"a\": 1,\n    \"mcpServers\": {\n        \"cairn\": {\n            \
             \"command\": \"/bin/cairn\",\n            \"args\": [\"mcp\"]\n        }\n    }\n}\n"
        );
    }

    #[test]
    fn updates_only_what_differs() {
        let text = "{\"mcpServers\": {\"cairn\": {\"command\": \"/old\", \"env\": {}}}}";
        let updated = install(text, false, "mcpServers", "cairn", &fields()).unwrap();
        assert_eq!(
            updated,
            "{\"mcpServers\": {\"cairn\": {\"command\": \"/bin/cairn\", \"env\": {}, \"args\": [\"mcp\"]}}}"
        );
    }
}
