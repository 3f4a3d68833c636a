//! TOML edited as text, located with `toml_edit`'s spans.
//!
//! Cairn's entry is a `[container.name]` table appended at the end of the file after one blank
//! line; removal takes out that table and the blank line, so install → remove gives back the
//! original bytes. `toml_edit` is used to parse, to find spans and to check the result, not to
//! re-serialise the document (that could change line endings or spacing elsewhere).

use serde_json::Value;
use toml_edit::{ImDocument, Item, Table};

use crate::framework::{Fields, V};
use crate::text::{Edit, apply, insert_lines, line_next, line_start, newline, remove_lines};

fn parse(text: &str) -> Result<ImDocument<String>, String> {
    ImDocument::parse(text.to_owned()).map_err(|error| format!("not valid TOML: {error}"))
}

/// Parse `text` as TOML into a `serde_json::Value` (dates become strings).
pub(crate) fn to_value(text: &str) -> Result<Value, String> {
    Ok(table_json(parse(text)?.as_table()))
}

fn table_json(table: &Table) -> Value {
    Value::Object(
        table
            .iter()
            .filter_map(|(key, item)| Some((key.to_owned(), item_json(item)?)))
            .collect(),
    )
}

fn item_json(item: &Item) -> Option<Value> {
    match item {
        Item::None => None,
        Item::Value(value) => Some(value_json(value)),
        Item::Table(table) => Some(table_json(table)),
        Item::ArrayOfTables(array) => Some(Value::Array(array.iter().map(table_json).collect())),
    }
}

fn value_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value())
            .map_or_else(|| Value::String(f.value().to_string()), Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(array) => Value::Array(array.iter().map(value_json).collect()),
        T::InlineTable(table) => Value::Object(
            table
                .iter()
                .map(|(key, value)| (key.to_owned(), value_json(value)))
                .collect(),
        ),
    }
}

fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        name.to_owned()
    } else {
        toml_edit::Value::from(name).to_string()
    }
}

fn render(value: &V) -> String {
    match value {
        V::Str(s) => toml_edit::Value::from(s.as_str()).to_string(),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::List(items) => {
            let items: Vec<_> = items.iter().map(render).collect();
            format!("[{}]", items.join(", "))
        }
        V::Map(members) if members.is_empty() => "{}".to_owned(),
        V::Map(members) => {
            let members: Vec<_> = members
                .iter()
                .map(|(name, value)| format!("{} = {}", key(name), render(value)))
                .collect();
            format!("{{ {} }}", members.join(", "))
        }
    }
}

fn unsupported(container: &str, name: &str) -> String {
    format!(
        "`{container}.{name}` is written in a form Cairn does not edit (dotted keys, an array of \
         tables or a non-table value); change it by hand"
    )
}

/// Add or update `[container.name]` so it holds `fields`.
pub(crate) fn install(
    text: &str,
    container: &str,
    name: &str,
    fields: &Fields,
) -> Result<String, String> {
    let doc = parse(text)?;
    let nl = newline(text);
    let append = || {
        let mut lines = Vec::new();
        if !text.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!("[{}.{}]", key(container), key(name)));
        lines.extend(
            fields
                .iter()
                .map(|(field, value)| format!("{} = {}", key(field), render(value))),
        );
        vec![insert_lines(text, text.len(), &lines, nl)]
    };
    let edits = match doc.as_table().get(container) {
        None => append(),
        Some(Item::Table(servers)) => match servers.get(name) {
            None => append(),
            Some(Item::Table(entry)) if !entry.is_dotted() && !entry.is_implicit() => {
                update(text, entry, fields, nl, || unsupported(container, name))?
            }
            Some(Item::Value(value @ toml_edit::Value::InlineTable(_))) => {
                let span = value.span().ok_or_else(|| unsupported(container, name))?;
                vec![Edit::replace(
                    span.start,
                    span.end,
                    render(&V::Map(fields.clone())),
                )]
            }
            Some(_) => return Err(unsupported(container, name)),
        },
        Some(Item::Value(toml_edit::Value::InlineTable(_))) => {
            return Err(format!(
                "`{container}` is written as an inline table (`{container} = {{ … }}`); Cairn \
                 does not edit that form, add `[{container}.{name}]` by hand"
            ));
        }
        Some(_) => return Err(format!("`{container}` is not a table")),
    };
    apply(text, edits)
}

/// Edits that set the fields that differ in an existing `[container.name]` table and add the
/// missing ones after its last line; other keys stay.
fn update(
    text: &str,
    entry: &Table,
    fields: &Fields,
    nl: &str,
    unsupported: impl Fn() -> String,
) -> Result<Vec<Edit>, String> {
    let span = entry.span().ok_or_else(&unsupported)?;
    let mut edits = Vec::new();
    let mut missing = Vec::new();
    for (field, value) in fields {
        match entry.get(field) {
            Some(Item::Value(current)) => {
                if value_json(current) != value.to_json() {
                    let at = current.span().ok_or_else(&unsupported)?;
                    edits.push(Edit::replace(at.start, at.end, render(value)));
                }
            }
            Some(_) => return Err(unsupported()),
            None => missing.push(format!("{} = {}", key(field), render(value))),
        }
    }
    if !missing.is_empty() {
        edits.push(insert_lines(text, line_next(text, span.end), &missing, nl));
    }
    Ok(edits)
}

/// Remove `container.name` (its table and any sub-tables, or its `name = { … }` line).
pub(crate) fn remove(text: &str, container: &str, name: &str) -> Result<String, String> {
    let doc = parse(text)?;
    let Some(Item::Table(servers)) = doc.as_table().get(container) else {
        return Ok(text.to_owned());
    };
    let edits = match servers.get(name) {
        None => return Ok(text.to_owned()),
        Some(Item::Table(entry)) if !entry.is_dotted() && !entry.is_implicit() => {
            remove_table(text, doc.as_table(), entry).ok_or_else(|| unsupported(container, name))?
        }
        Some(Item::Value(value)) => {
            let key_span = servers.key(name).and_then(|key| key.span());
            let (Some(key_span), Some(value_span)) = (key_span, value.span()) else {
                return Err(unsupported(container, name));
            };
            let start = line_start(text, key_span.start);
            vec![remove_lines(text, start, line_next(text, value_span.end))]
        }
        Some(_) => return Err(unsupported(container, name)),
    };
    apply(text, edits)
}

/// Every table header's offset in the document.
fn headers(table: &Table, out: &mut Vec<usize>) {
    for (_, item) in table.iter() {
        match item {
            Item::Table(sub) => {
                if !sub.is_implicit()
                    && !sub.is_dotted()
                    && let Some(span) = sub.span()
                {
                    out.push(span.start);
                }
                headers(sub, out);
            }
            Item::ArrayOfTables(array) => {
                for sub in array.iter() {
                    if let Some(span) = sub.span() {
                        out.push(span.start);
                    }
                    headers(sub, out);
                }
            }
            Item::None | Item::Value(_) => {}
        }
    }
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Edits removing `entry`'s table and its sub-tables. Each runs from its header's line to the
/// next header, less trailing blank and comment lines (those belong to what follows).
fn remove_table(text: &str, root: &Table, entry: &Table) -> Option<Vec<Edit>> {
    let mut all = Vec::new();
    headers(root, &mut all);
    all.sort_unstable();
    let mut own = Vec::new();
    if let Some(span) = entry.span() {
        own.push(span.start);
    }
    headers(entry, &mut own);
    own.sort_unstable();
    if own.is_empty() {
        return None;
    }

    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &header in &own {
        let start = line_start(text, header);
        let next = all
            .iter()
            .find(|&&other| other > header)
            .map_or(text.len(), |&other| line_start(text, other));
        let mut end = next;
        while end > start {
            let previous = line_start(text, end - 1);
            let line = &text[previous..end];
            if previous > start && (is_blank(line) || line.trim_start().starts_with('#')) {
                end = previous;
            } else {
                break;
            }
        }
        match ranges.last_mut() {
            Some(last) if text[last.1..start].trim().is_empty() => last.1 = end,
            _ => ranges.push((start, end)),
        }
    }

    let mut edits = Vec::new();
    for (start, end) in ranges {
        if text[end..].trim().is_empty() {
            // At the end of the file: take the blank line Cairn put before the table too.
            let mut from = start;
            if from > 0 {
                let previous = line_start(text, from - 1);
                if is_blank(&text[previous..from]) {
                    from = previous;
                }
            }
            edits.push(remove_lines(text, from, end));
        } else {
            let mut until = end;
            while until < text.len() && is_blank(&text[until..line_next(text, until)]) {
                until = line_next(text, until);
            }
            edits.push(Edit::delete(start, until));
        }
    }
    Some(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(command: &str) -> Fields {
        vec![
            ("command".into(), V::Str(command.into())),
            ("args".into(), V::List(vec![V::Str("mcp".into())])),
        ]
    }

    #[test]
    fn round_trips() {
        for original in [
            "",
            "\n",
            "model = \"o3\"",
            "model = \"o3\"\n",
            "model = \"o3\"\r\n\r\n[mcp_servers.x]\r\ncommand = \"x\"\r\n",
            "[mcp_servers]\n\n# trailing comment\n",
        ] {
            let installed =
                install(original, "mcp_servers", "cairn", &fields("/bin/cairn")).unwrap();
            let value = to_value(&installed).unwrap();
            assert_eq!(
                value["mcp_servers"]["cairn"]["args"][0], "mcp",
                "{installed}"
            );
            assert_eq!(
                remove(&installed, "mcp_servers", "cairn").unwrap(),
                original
            );
        }
    }

    #[test]
    fn update_keeps_other_keys_and_comments() {
        let text = "[mcp_servers.cairn]\ncommand = \"/old\" # ours\nenv = { A = \"1\" }\n\n[x]\n";
        let updated = install(text, "mcp_servers", "cairn", &fields("/new")).unwrap();
        assert_eq!(
            updated,
            "[mcp_servers.cairn]\ncommand = \"/new\" # ours\nenv = { A = \"1\" }\nargs = [\"mcp\"]\n\n[x]\n"
        );
        assert_eq!(remove(&updated, "mcp_servers", "cairn").unwrap(), "[x]\n");
    }

    #[test]
    fn appends_after_dotted_keys() {
        let text = "mcp_servers.github.command = \"gh\"\n";
        let installed = install(text, "mcp_servers", "cairn", &fields("/c")).unwrap();
        let value = to_value(&installed).unwrap();
        assert_eq!(value["mcp_servers"]["github"]["command"], "gh");
        assert_eq!(value["mcp_servers"]["cairn"]["command"], "/c");
        assert_eq!(remove(&installed, "mcp_servers", "cairn").unwrap(), text);
    }

    #[test]
    fn removes_sub_tables_and_inline_entries() {
        let text =
            "a = 1\n\n[mcp_servers.cairn]\ncommand = \"c\"\n\n[mcp_servers.cairn.env]\nK = \"v\"\n";
        assert_eq!(remove(text, "mcp_servers", "cairn").unwrap(), "a = 1\n");
        let inline = "[mcp_servers]\ncairn = { command = \"c\" }\nother = { command = \"o\" }\n";
        assert_eq!(
            remove(inline, "mcp_servers", "cairn").unwrap(),
            "[mcp_servers]\nother = { command = \"o\" }\n"
        );
    }
}
