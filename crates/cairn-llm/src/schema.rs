//! Finding the JSON value in a model's answer and checking it against a JSON schema.
//!
//! The keywords checked are the ones Cairn's prompts use: `type` (one name or a list),
//! `properties`, `required`, `additionalProperties: false`, `enum`, `items`, `minItems`,
//! `maxItems`, `minLength`, `maxLength`, `minimum`, `maximum`. Others are ignored. Errors name
//! the place (`$.items[2].importance`) and the rule broken, so the model can be told.
use serde_json::Value;

/// The JSON value in an answer: the whole text, or the text inside a code fence, or the
/// first balanced `{…}` / `[…]` in it. `None` when there is none.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Some(v);
    }
    if let Some(start) = t.find("```") {
        let after = &t[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        let body = &after[body_start..];
        if let Some(end) = body.find("```")
            && let Ok(v) = serde_json::from_str::<Value>(body[..end].trim())
        {
            return Some(v);
        }
    }
    // The first balanced object or array (strings and escapes respected).
    for (i, c) in t.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        if let Some(end) = balanced_end(&t[i..])
            && let Ok(v) = serde_json::from_str::<Value>(&t[i..i + end])
        {
            return Some(v);
        }
    }
    None
}

fn balanced_end(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + c.len_utf8());
                }
            }
            _ => {}
        }
    }
    None
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(want: &str, v: &Value) -> bool {
    let have = type_name(v);
    want == have
        || (want == "number" && have == "integer")
        || (want == "integer" && v.as_f64().is_some_and(|f| f.fract() == 0.0))
}

/// Checks `value` against `schema`; the error names the first place that breaks a rule.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, value, "$")
}

fn check(schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        return Ok(());
    };
    match s.get("type") {
        Some(Value::String(t)) if !type_matches(t, v) => {
            return Err(format!("{at}: expected {t}, found {}", type_name(v)));
        }
        Some(Value::Array(ts))
            if !ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| type_matches(t, v)) =>
        {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            return Err(format!(
                "{at}: expected {}, found {}",
                names.join(" or "),
                type_name(v)
            ));
        }
        _ => {}
    }
    if let Some(Value::Array(allowed)) = s.get("enum")
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!("{at}: {v} is not one of {}", list.join(", ")));
    }
    let bound = |key: &str| s.get(key).and_then(Value::as_f64);
    if let Some(n) = v.as_f64() {
        if let Some(min) = bound("minimum")
            && n < min
        {
            return Err(format!("{at}: {v} is below the minimum {min}"));
        }
        if let Some(max) = bound("maximum")
            && n > max
        {
            return Err(format!("{at}: {v} is above the maximum {max}"));
        }
    }
    if let Some(text) = v.as_str() {
        let len = text.chars().count() as f64;
        if let Some(min) = bound("minLength")
            && len < min
        {
            return Err(format!("{at}: the text is shorter than {min} characters"));
        }
        if let Some(max) = bound("maxLength")
            && len > max
        {
            return Err(format!("{at}: the text is longer than {max} characters"));
        }
    }
    if let Some(list) = v.as_array() {
        let len = list.len() as f64;
        if let Some(min) = bound("minItems")
            && len < min
        {
            return Err(format!(
                "{at}: {} entries, at least {min} needed",
                list.len()
            ));
        }
        if let Some(max) = bound("maxItems")
            && len > max
        {
            return Err(format!(
                "{at}: {} entries, at most {max} allowed",
                list.len()
            ));
        }
        if let Some(items) = s.get("items") {
            for (i, e) in list.iter().enumerate() {
                check(items, e, &format!("{at}[{i}]"))?;
            }
        }
    }
    if let Some(obj) = v.as_object() {
        if let Some(Value::Array(req)) = s.get("required") {
            for key in req.iter().filter_map(Value::as_str) {
                if !obj.contains_key(key) {
                    return Err(format!("{at}: the field \"{key}\" is missing"));
                }
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (key, val) in obj {
            match props.and_then(|p| p.get(key)) {
                Some(sub) => check(sub, val, &format!("{at}.{key}"))?,
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}: the field \"{key}\" is not allowed"));
                }
                None => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["items"],
            "additionalProperties": false,
            "properties": {
                "items": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "required": ["kind", "importance"],
                        "properties": {
                            "kind": {"type": "string", "enum": ["fact", "decision"]},
                            "importance": {"type": "integer", "minimum": 1, "maximum": 5},
                            "cues": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 2}}
                        }
                    }
                }
            }
        })
    }

    #[test]
    fn a_valid_answer_passes_and_each_broken_rule_is_named_with_its_place() {
        let s = schema();
        assert_eq!(
            validate(&s, &json!({"items": [{"kind": "fact", "importance": 3}]})),
            Ok(())
        );
        let cases = [
            (json!({}), "$: the field \"items\" is missing"),
            (
                json!({"items": {}}),
                "$.items: expected array, found object",
            ),
            (
                json!({"items": [], "x": 1}),
                "$: the field \"x\" is not allowed",
            ),
            (
                json!({"items": [{"kind": "fact", "importance": 7}]}),
                "$.items[0].importance: 7 is above the maximum 5",
            ),
            (
                json!({"items": [{"kind": "fact", "importance": 2.5}]}),
                "$.items[0].importance: expected integer, found number",
            ),
            (
                json!({"items": [{"kind": "opinion", "importance": 2}]}),
                "$.items[0].kind: \"opinion\" is not one of \"fact\", \"decision\"",
            ),
            (
                json!({"items": [{"kind": "fact", "importance": 2, "cues": []}]}),
                "$.items[0].cues: 0 entries, at least 1 needed",
            ),
            (
                json!({"items": [{"kind": "fact", "importance": 2, "cues": ["a"]}]}),
                "$.items[0].cues[0]: the text is shorter than 2 characters",
            ),
            (
                json!({"items": [{"kind": "fact", "importance": 1}, {"kind": "fact", "importance": 1}, {"kind": "fact", "importance": 1}, {"kind": "fact", "importance": 1}]}),
                "$.items: 4 entries, at most 3 allowed",
            ),
        ];
        for (value, want) in cases {
            assert_eq!(validate(&s, &value), Err(want.to_owned()), "{value}");
        }
    }

    #[test]
    fn json_is_found_in_fences_and_prose_and_not_made_up() {
        assert_eq!(extract_json(" {\"a\": 1} "), Some(json!({"a": 1})));
        assert_eq!(
            extract_json("Here:\n```json\n{\"a\": [1, 2]}\n```\nDone."),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            extract_json("Sure! {\"a\": \"x } y\", \"b\": {\"c\": \"\\\"\"}} trailing {"),
            Some(json!({"a": "x } y", "b": {"c": "\""}}))
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("{\"a\": 1"), None);
    }
}
