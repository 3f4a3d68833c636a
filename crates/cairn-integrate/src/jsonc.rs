//! JSON and JSONC (comments, trailing commas) edited as text.
//!
//! The file is read by `jsonc-parser` (dprint's maintained, lossless JSONC parser) into its
//! concrete syntax tree, which holds every byte: comments, whitespace, newlines and commas.
//! Walking that tree gives where every object member starts and ends; Cairn's member is then
//! inserted as one span of text in the file's own indentation and newline style, and removal
//! takes out exactly that span (and the comma it added), so install → remove gives back the
//! original bytes. The edits are text splices at the tree's offsets rather than tree edits:
//! the tree's own editing API re-formats neighbouring separators, and Cairn promises that
//! nothing but its own entry changes. Values are compared with `serde_json` after comments and
//! trailing commas (found in the same tree) are blanked out, so offsets — and error
//! positions — stay the same.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstContainerNode, CstLeafNode, CstNode, CstObjectProp, CstRootNode};
use serde_json::Value;

use crate::framework::{Fields, V};
use crate::text::{
    Edit, apply, first_on_line, indent_of_line, line_end, line_next, line_start, newline,
    rest_of_line_blank,
};

/// Parse `text` as JSON (`jsonc == false`, strict) or JSONC into a `serde_json::Value`.
pub(crate) fn to_value(text: &str, jsonc: bool) -> Result<Value, String> {
    let kind = if jsonc {
        "JSON (with comments)"
    } else {
        "JSON"
    };
    let source = if jsonc {
        strip(text).map_err(|error| format!("not valid {kind}: {error}"))?
    } else {
        blank_bom(text)
    };
    serde_json::from_str(&source).map_err(|error| format!("not valid {kind}: {error}"))
}

/// The text with a UTF-8 byte order mark replaced by three spaces (so offsets do not move).
fn blank_bom(text: &str) -> String {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => format!("   {rest}"),
        None => text.to_owned(),
    }
}

/// What Cairn accepts in a config file: JSON plus comments and trailing commas — the JSONC
/// that VS Code-style editors write — and none of JSON5's other liberties.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The text with comments and trailing commas replaced by spaces (newlines kept), byte for byte
/// the same length, ready for `serde_json`. Fails when the text is not JSONC.
pub(crate) fn strip(text: &str) -> Result<String, String> {
    let tree = Tree::read(text)?;
    let mut out = blank_bom(text).into_bytes();
    for (start, end) in tree.blanks {
        for byte in &mut out[start..end] {
            if *byte != b'\n' && *byte != b'\r' {
                *byte = b' ';
            }
        }
    }
    // Whole characters (comments, commas) were replaced by ASCII, but a comment's multi-byte
    // characters become several spaces: still valid UTF-8, checked rather than assumed.
    String::from_utf8(out).map_err(|error| format!("blanking comments broke the text: {error}"))
}

// ---------------------------------------------------------------------------------------------
// Spans, from jsonc-parser's concrete syntax tree.

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

/// The top-level value of a JSONC text with its spans, and the spans `serde_json` must not see
/// (comments and trailing commas).
struct Tree {
    top: Option<Node>,
    blanks: Vec<(usize, usize)>,
}

impl Tree {
    /// Parse `text` with `jsonc-parser` and walk its syntax tree, adding up the length of every
    /// leaf to learn each node's byte offsets.
    fn read(text: &str) -> Result<Self, String> {
        // The parser does not keep a byte order mark; offsets start after it.
        let (body, base) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (rest, text.len() - rest.len()),
            None => (text, 0),
        };
        let root = CstRootNode::parse(body, &options()).map_err(|error| error.to_string())?;
        let mut walk = Walk {
            pos: base,
            blanks: Vec::new(),
        };
        let mut top = None;
        for child in root.children() {
            match child {
                CstNode::Leaf(leaf) if child.is_trivia() => {
                    walk.leaf(&leaf);
                }
                value if top.is_none() => top = Some(walk.value(&value)?),
                _ => return Err("unexpected text after the top-level value".to_owned()),
            }
        }
        if walk.pos != text.len() {
            // The tree is lossless by design; should it ever not be, no offset can be trusted.
            return Err(format!(
                "the JSONC syntax tree covers {} of the file's {} bytes",
                walk.pos,
                text.len()
            ));
        }
        Ok(Self {
            top,
            blanks: walk.blanks,
        })
    }
}

/// A walk over the syntax tree in text order: `pos` is the byte offset of the next node.
struct Walk {
    pos: usize,
    blanks: Vec<(usize, usize)>,
}

impl Walk {
    /// Step over a leaf; returns its start. Comments are noted for blanking.
    fn leaf(&mut self, leaf: &CstLeafNode) -> usize {
        let start = self.pos;
        self.pos += leaf.to_string().len();
        if matches!(leaf, CstLeafNode::Comment(_)) {
            self.blanks.push((start, self.pos));
        }
        start
    }

    /// Step over a value (a literal, an object or an array).
    fn value(&mut self, node: &CstNode) -> Result<Node, String> {
        match node {
            CstNode::Leaf(leaf) if !node.is_trivia() && !matches!(leaf, CstLeafNode::Token(_)) => {
                self.leaf(leaf);
                Ok(Node::Other)
            }
            CstNode::Container(CstContainerNode::Object(object)) => {
                Ok(Node::Object(self.container(object.children(), false)?))
            }
            CstNode::Container(CstContainerNode::Array(array)) => {
                Ok(Node::Array(self.container(array.children(), true)?))
            }
            _ => Err(format!("expected a value at byte {}", self.pos)),
        }
    }

    /// Step over an object's or an array's children.
    fn container(&mut self, children: Vec<CstNode>, is_array: bool) -> Result<Object, String> {
        let (mut open, mut close) = (None, None);
        let mut members: Vec<Member> = Vec::new();
        // A comma not yet followed by a member: trailing if the container closes next.
        let mut pending_comma = None;
        for child in children {
            match &child {
                CstNode::Leaf(leaf @ CstLeafNode::Token(token)) => {
                    let at = self.leaf(leaf);
                    match token.value() {
                        '{' | '[' => open = Some(at),
                        '}' | ']' => {
                            close = Some(at);
                            if let Some(comma) = pending_comma.take() {
                                self.blanks.push((comma, comma + 1));
                            }
                        }
                        ',' => {
                            if let Some(member) = members.last_mut() {
                                member.comma = Some(at);
                            }
                            pending_comma = Some(at);
                        }
                        other => return Err(format!("unexpected `{other}` at byte {at}")),
                    }
                }
                CstNode::Leaf(leaf) if child.is_trivia() => {
                    self.leaf(leaf);
                }
                CstNode::Container(CstContainerNode::ObjectProp(prop)) if !is_array => {
                    pending_comma = None;
                    members.push(self.member(prop)?);
                }
                item if is_array => {
                    pending_comma = None;
                    let start = self.pos;
                    let value = self.value(item)?;
                    members.push(Member {
                        key: String::new(),
                        key_start: start,
                        value_start: start,
                        value_end: self.pos,
                        value,
                        comma: None,
                    });
                }
                _ => return Err(format!("unexpected text in an object at byte {}", self.pos)),
            }
        }
        match (open, close) {
            (Some(open), Some(close)) => Ok(Object {
                open,
                close,
                members,
                is_array,
            }),
            _ => Err(format!(
                "an unclosed object or array before byte {}",
                self.pos
            )),
        }
    }

    /// Step over one `"key": value` member of an object.
    fn member(&mut self, prop: &CstObjectProp) -> Result<Member, String> {
        let mut key: Option<(String, usize)> = None;
        let mut value = None;
        for child in prop.children() {
            match &child {
                CstNode::Leaf(leaf) if child.is_trivia() => {
                    self.leaf(leaf);
                }
                CstNode::Leaf(leaf @ CstLeafNode::Token(_)) => {
                    self.leaf(leaf);
                }
                CstNode::Leaf(leaf @ CstLeafNode::StringLit(_)) if key.is_none() => {
                    let raw = leaf.to_string();
                    let start = self.leaf(leaf);
                    let name: String = serde_json::from_str(&raw)
                        .map_err(|error| format!("bad key at byte {start}: {error}"))?;
                    key = Some((name, start));
                }
                node if key.is_some() && value.is_none() => {
                    let start = self.pos;
                    value = Some((self.value(node)?, start, self.pos));
                }
                _ => return Err(format!("unexpected text in a member at byte {}", self.pos)),
            }
        }
        match (key, value) {
            (Some((key, key_start)), Some((value, value_start, value_end))) => Ok(Member {
                key,
                key_start,
                value_start,
                value_end,
                value,
                comma: None,
            }),
            _ => Err(format!(
                "a member without a key or a value before byte {}",
                self.pos
            )),
        }
    }
}

/// Parse the text's top-level value with spans. The text has already passed [`to_value`], so
/// errors here are unexpected; they are still reported, never panicked on.
pub(crate) fn parse(text: &str) -> Result<Node, String> {
    Tree::read(text)?
        .top
        .ok_or_else(|| "unexpected end of text: there is no value".to_owned())
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
        let stripped = strip(text).unwrap();
        assert_eq!(stripped.len(), text.len());
        let value: Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(value["b"][1], 2);
        assert_eq!(strip("\"a,//\"").unwrap(), "\"a,//\"");
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

    #[test]
    fn the_syntax_tree_gives_exact_spans() {
        let text =
            "\u{feff}{ /* a */ \"a\" /* b */ : [1, /* c */ 2 ,] /* d */ , \"b\\u0041\": {} }";
        let Node::Object(top) = parse(text).unwrap() else {
            panic!("not an object")
        };
        assert_eq!(&text[top.open..=top.open], "{");
        assert_eq!(&text[top.close..=top.close], "}");
        let a = &top.members[0];
        assert_eq!(a.key, "a");
        assert_eq!(&text[a.key_start..a.key_start + 3], "\"a\"");
        assert_eq!(&text[a.value_start..a.value_end], "[1, /* c */ 2 ,]");
        assert_eq!(a.comma.map(|at| &text[at..=at]), Some(","));
        let Node::Array(items) = &a.value else {
            panic!("not an array")
        };
        assert_eq!(items.members.len(), 2);
        assert_eq!(
            &text[items.members[1].value_start..items.members[1].end()],
            "2 ,"
        );
        // An escaped key is decoded the way serde_json decodes it.
        assert_eq!(top.members[1].key, "bA");
        assert_eq!(top.members[1].comma, None);
    }

    #[test]
    fn strip_blanks_every_comment_kind_and_nested_trailing_commas() {
        let text = "{\r\n  // é line\r\n  \"a\": [[1,],{\"x\":2,},], /* ü\n block */\n  \"b\": \"/* kept */\",\n}";
        let stripped = strip(text).unwrap();
        assert_eq!(stripped.len(), text.len());
        assert_eq!(stripped.matches('\n').count(), text.matches('\n').count());
        assert_eq!(stripped.matches('\r').count(), text.matches('\r').count());
        let value: Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(value["a"][1]["x"], 2);
        assert_eq!(value["b"], "/* kept */");
    }

    #[test]
    fn only_comments_and_trailing_commas_are_allowed_beyond_json() {
        for bad in [
            "{'a': 1}",
            "{a: 1}",
            "{\"a\": 0x10}",
            "{\"a\": 1 \"b\": 2}",
            "{\"a\": NaN}",
            "{\"a\": +1}",
            "{\"a\": 1",
            "{\"a\": 1} x",
            "{\"a\": 1 /* open",
        ] {
            let error = to_value(bad, true).unwrap_err();
            assert!(
                error.starts_with("not valid JSON (with comments): "),
                "{bad}: {error}"
            );
        }
        // Comments are not JSON.
        assert!(to_value("{\"a\": 1 // c\n}", false).is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
        assert!(to_value(&deep, true).is_err());
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn install_is_idempotent_and_keeps_comments_and_trailing_commas() {
        let original = "{\n  // servers\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}, // theirs\n  },\n}\n";
        let once = round_trip(original, true);
        let twice = install(&once, true, "mcpServers", "cairn", &fields()).unwrap();
        assert_eq!(once, twice);
        assert!(
            once.contains("// servers") && once.contains("// theirs"),
            "{once}"
        );
    }
}
