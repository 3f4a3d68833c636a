//! Schema-constrained decoding for the local model: the request's JSON schema compiled into a
//! character-level state machine, and a token chooser that holds generation to it.
//!
//! [`Grammar::compile`] accepts the keywords Cairn's prompts use — `type` (one name or a list),
//! `properties`, `required`, `additionalProperties`, `items`, `minItems`, `maxItems`,
//! `minLength`, `maxLength`, `minimum`, `maximum`, `enum`, `const` — plus annotations
//! (`description`, `title`, `default`, `examples`, `$schema`, `$id`, `$comment`). Any other
//! keyword (`pattern`, `oneOf`, `anyOf`, `format`, …) and any impossible schema (`minItems`
//! above `maxItems`, an empty `enum`, a required key with no property, …) is refused before a
//! token is written, with the place and the problem named.
//!
//! The JSON written is compact with one optional space after `:` and `,`. Objects write their
//! required properties in the order `required` lists them, then the optional ones in
//! alphabetical order; no other key is ever written, so `additionalProperties` always
//! holds. Strings take no `\u` escapes and no control characters; numbers have at most 15
//! digits before the point and 9 after it, no exponent.
//!
//! [`State::feed`] takes one character and says whether it may come next; [`State::completion`]
//! is the shortest text that closes the value from where it stands (required keys, minimum
//! items and lengths, numbers within their bounds). [`JsonConstraint`] picks each token: the
//! highest-scoring token whose whole text the state accepts — the same choice as masking every
//! other token's logit and taking the largest — and which still leaves room, within the tokens
//! that remain, to write the completion; when the budget (or the deadline) leaves no more room
//! than that, it writes the completion itself.
use std::collections::HashMap;

use serde_json::Value;

/// Digits before the decimal point a number may have.
const INT_DIGITS: usize = 15;
/// Digits after the decimal point a number may have.
const FRAC_DIGITS: usize = 9;
/// The best-scoring tokens tried before every token of the vocabulary is checked.
const TOP_K: usize = 24;

/// Keywords that say nothing about which values match.
const ANNOTATIONS: [&str; 7] = [
    "description",
    "title",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
];
/// Keywords the decoder enforces (or, for `additionalProperties`, always satisfies).
const ENFORCED: [&str; 13] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "enum",
    "const",
];

/// A JSON schema compiled for decoding.
#[derive(Debug, Clone)]
pub struct Grammar {
    nodes: Vec<Node>,
    /// The shortest JSON text of each node's values.
    shortest: Vec<String>,
    root: usize,
}

#[derive(Debug, Clone)]
enum Node {
    Object {
        props: Vec<Prop>,
    },
    Array {
        items: usize,
        min: usize,
        max: usize,
    },
    Str {
        min: usize,
        max: usize,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    /// The exact JSON texts allowed (`enum`, `const`, booleans, null).
    Literal(Vec<String>),
    /// One of several types (a `type` list); the first character decides which.
    Union(Vec<usize>),
}

#[derive(Debug, Clone)]
struct Prop {
    /// The key as JSON text, quotes included.
    key: String,
    node: usize,
    required: bool,
}

impl Grammar {
    /// Compiles `schema`; the error names the place (`$.items.kind`) and the problem.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        let mut g = Self {
            nodes: Vec::new(),
            shortest: Vec::new(),
            root: 0,
        };
        g.root = g.node(schema, "$")?;
        let shortest = g.shortest[g.root].clone();
        let value: Value = serde_json::from_str(&shortest)
            .map_err(|e| format!("$: the shortest answer {shortest} is not JSON: {e}"))?;
        crate::schema::validate(schema, &value).map_err(|e| {
            format!(
                "$: the schema cannot be held to while decoding (its shortest answer fails: {e})"
            )
        })?;
        Ok(g)
    }

    /// A state at the start of the answer.
    pub fn start(&self) -> State<'_> {
        State {
            g: self,
            stack: vec![Frame::Value {
                node: self.root,
                space: false,
            }],
        }
    }

    fn push(&mut self, node: Node, at: &str) -> Result<usize, String> {
        let id = self.nodes.len();
        self.nodes.push(node);
        self.shortest.push(String::new());
        let mut s = State {
            g: self,
            stack: vec![Frame::Value {
                node: id,
                space: false,
            }],
        };
        let text = s
            .close()
            .ok_or_else(|| format!("{at}: no value can match this schema"))?;
        self.shortest[id] = text;
        Ok(id)
    }

    fn node(&mut self, s: &Value, at: &str) -> Result<usize, String> {
        let obj = match s {
            Value::Object(o) => o,
            Value::Bool(true) => return self.any_scalar(at),
            Value::Bool(false) => return Err(format!("{at}: the schema `false` matches nothing")),
            _ => return Err(format!("{at}: a schema must be an object, found {s}")),
        };
        for key in obj.keys() {
            if !ENFORCED.contains(&key.as_str()) && !ANNOTATIONS.contains(&key.as_str()) {
                return Err(format!(
                    "{at}: the schema keyword \"{key}\" cannot be enforced while decoding"
                ));
            }
        }
        let mut options: Option<Vec<Value>> = match (obj.get("enum"), obj.get("const")) {
            (Some(Value::Array(list)), _) if list.is_empty() => {
                return Err(format!("{at}: enum is empty: no value can match"));
            }
            (Some(Value::Array(list)), _) => Some(list.clone()),
            (Some(other), _) => return Err(format!("{at}: enum must be a list, found {other}")),
            (None, Some(c)) => Some(vec![c.clone()]),
            (None, None) => None,
        };
        if let Some(list) = options.as_mut() {
            let mut rest = obj.clone();
            rest.remove("enum");
            rest.remove("const");
            let rest = Value::Object(rest);
            list.retain(|v| crate::schema::validate(&rest, v).is_ok());
            if list.is_empty() {
                return Err(format!(
                    "{at}: no value of enum/const matches the rest of the schema"
                ));
            }
            let texts = list.iter().map(Value::to_string).collect();
            return self.push(Node::Literal(texts), at);
        }
        let types: Vec<String> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) if ts.is_empty() => {
                return Err(format!("{at}: type is an empty list: no value can match"));
            }
            Some(Value::Array(ts)) => ts
                .iter()
                .map(|t| {
                    t.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("{at}: type lists names, found {t}"))
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(format!(
                    "{at}: type must be a name or a list, found {other}"
                ));
            }
            None if obj.contains_key("properties") || obj.contains_key("required") => {
                vec!["object".into()]
            }
            None if obj.contains_key("items") => vec!["array".into()],
            None => return self.any_scalar(at),
        };
        let has_number = types.iter().any(|t| t == "number");
        let mut branches = Vec::new();
        for t in &types {
            let id = match t.as_str() {
                "object" => self.object(obj, at)?,
                "array" => self.array(obj, at)?,
                "string" => {
                    let min = count(obj, "minLength", at)?.unwrap_or(0);
                    let max = count(obj, "maxLength", at)?.unwrap_or(usize::MAX);
                    if min > max {
                        return Err(format!("{at}: minLength {min} is above maxLength {max}"));
                    }
                    self.push(Node::Str { min, max }, at)?
                }
                "integer" if has_number => continue,
                "number" | "integer" => {
                    let bound = |k: &str| -> Result<Option<f64>, String> {
                        match obj.get(k) {
                            None => Ok(None),
                            Some(v) => v
                                .as_f64()
                                .map(Some)
                                .ok_or_else(|| format!("{at}: {k} must be a number, found {v}")),
                        }
                    };
                    let (min, max) = (bound("minimum")?, bound("maximum")?);
                    let integer = t == "integer";
                    if let (Some(lo), Some(hi)) = (min, max) {
                        let empty = if integer {
                            lo.ceil() > hi.floor()
                        } else {
                            lo > hi
                        };
                        if empty {
                            return Err(format!(
                                "{at}: no {t} lies between minimum {lo} and maximum {hi}"
                            ));
                        }
                    }
                    self.push(Node::Number { integer, min, max }, at)?
                }
                "boolean" => self.push(Node::Literal(vec!["true".into(), "false".into()]), at)?,
                "null" => self.push(Node::Literal(vec!["null".into()]), at)?,
                other => return Err(format!("{at}: \"{other}\" is not a JSON schema type")),
            };
            branches.push(id);
        }
        match branches.as_slice() {
            [one] => Ok(*one),
            _ => self.push(Node::Union(branches), at),
        }
    }

    /// Any string, number, boolean or null (a schema that does not say).
    fn any_scalar(&mut self, at: &str) -> Result<usize, String> {
        let s = self.push(
            Node::Str {
                min: 0,
                max: usize::MAX,
            },
            at,
        )?;
        let n = self.push(
            Node::Number {
                integer: false,
                min: None,
                max: None,
            },
            at,
        )?;
        let b = self.push(Node::Literal(vec!["true".into(), "false".into()]), at)?;
        let z = self.push(Node::Literal(vec!["null".into()]), at)?;
        self.push(Node::Union(vec![s, n, b, z]), at)
    }

    fn object(&mut self, obj: &serde_json::Map<String, Value>, at: &str) -> Result<usize, String> {
        let empty = serde_json::Map::new();
        let props = match obj.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(other) => {
                return Err(format!("{at}: properties must be an object, found {other}"));
            }
        };
        let mut required: Vec<&str> = Vec::new();
        match obj.get("required") {
            None => {}
            Some(Value::Array(list)) => {
                for k in list {
                    let k = k
                        .as_str()
                        .ok_or_else(|| format!("{at}: required lists names, found {k}"))?;
                    if !props.contains_key(k) {
                        return Err(format!(
                            "{at}: the required key \"{k}\" is not in properties"
                        ));
                    }
                    if !required.contains(&k) {
                        required.push(k);
                    }
                }
            }
            Some(other) => return Err(format!("{at}: required must be a list, found {other}")),
        }
        // The optional ones in alphabetical order, whatever order the schema's map keeps.
        let mut optional: Vec<&str> = props
            .keys()
            .map(String::as_str)
            .filter(|k| !required.contains(k))
            .collect();
        optional.sort_unstable();
        let order = required.iter().copied().chain(optional);
        let mut out = Vec::new();
        for k in order {
            let node = self.node(&props[k], &format!("{at}.{k}"))?;
            out.push(Prop {
                key: Value::String(k.to_owned()).to_string(),
                node,
                required: required.contains(&k),
            });
        }
        self.push(Node::Object { props: out }, at)
    }

    fn array(&mut self, obj: &serde_json::Map<String, Value>, at: &str) -> Result<usize, String> {
        let min = count(obj, "minItems", at)?.unwrap_or(0);
        let max = count(obj, "maxItems", at)?.unwrap_or(usize::MAX);
        if min > max {
            return Err(format!("{at}: minItems {min} is above maxItems {max}"));
        }
        let items = match obj.get("items") {
            None => self.any_scalar(&format!("{at}[]"))?,
            Some(Value::Array(_)) => {
                return Err(format!(
                    "{at}: items as a list (a tuple) cannot be enforced while decoding"
                ));
            }
            Some(s) => self.node(s, &format!("{at}[]"))?,
        };
        self.push(Node::Array { items, min, max }, at)
    }
}

/// A non-negative integer keyword.
fn count(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<Option<usize>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("{at}: {key} must be a whole number of at least 0, found {v}")),
    }
}

/// Where the answer stands: a stack of open values, innermost last.
#[derive(Debug, Clone)]
pub struct State<'g> {
    g: &'g Grammar,
    stack: Vec<Frame>,
}

#[derive(Debug, Clone)]
enum Frame {
    /// A value of `node` is expected (after one optional space when `space`).
    Value {
        node: usize,
        space: bool,
    },
    Object {
        node: usize,
        next: usize,
        stage: Obj,
    },
    Array {
        node: usize,
        count: usize,
        stage: Arr,
    },
    /// Inside a string: characters so far, and whether a `\` was just written.
    Str {
        node: usize,
        len: usize,
        escape: bool,
    },
    Number {
        node: usize,
        text: String,
    },
    Literal {
        node: usize,
        text: String,
    },
}

#[derive(Debug, Clone)]
enum Obj {
    /// After `{`.
    Open,
    /// Writing a key (its text so far, the opening quote included).
    Key(String),
    /// After the key of the property at this index: `:` is next.
    Colon(usize),
    /// The value is being written.
    Value,
    /// After a value: `,` or `}`.
    AfterValue,
    /// After `,`; `true` while a space may still come.
    Comma(bool),
}

#[derive(Debug, Clone, Copy)]
enum Arr {
    Open,
    Item,
    AfterItem,
}

/// What one character did to the innermost value.
enum Step {
    Reject,
    Accept,
    /// The value is complete.
    Done,
    /// The value had ended before this character; the character belongs to the outer one.
    EndRefeed,
    /// A new inner value starts with this character.
    PushRefeed(Frame),
    /// The character is taken and a new inner value is expected after it.
    Push(Frame),
}

/// The shortest text that closes the innermost value one move further.
enum Close {
    Text(String),
    End,
}

impl<'g> State<'g> {
    /// Whether `c` may come next; the state moves on when it may. After `false` the state is
    /// no longer meaningful: feed a clone when unsure.
    pub fn feed(&mut self, c: char) -> bool {
        loop {
            let g = self.g;
            let Some(top) = self.stack.last_mut() else {
                return false;
            };
            match step(g, top, c) {
                Step::Reject => return false,
                Step::Accept => return true,
                Step::Done => {
                    self.pop_done();
                    return true;
                }
                Step::EndRefeed => self.pop_done(),
                Step::PushRefeed(frame) => self.stack.push(frame),
                Step::Push(frame) => {
                    self.stack.push(frame);
                    return true;
                }
            }
        }
    }

    /// Feeds every character of `text`; false at the first one refused.
    pub fn feed_str(&mut self, text: &str) -> bool {
        text.chars().all(|c| self.feed(c))
    }

    /// The whole value has been written.
    pub fn is_done(&self) -> bool {
        self.stack.is_empty()
    }

    /// The answer may end here: done, or a top-level number or literal that is complete.
    pub fn can_end(&self) -> bool {
        match self.stack.as_slice() {
            [] => true,
            [only] => self.terminable(only),
            _ => false,
        }
    }

    /// The shortest text that completes the value from here (`""` when it may end here).
    pub fn completion(&self) -> Option<String> {
        let mut s = self.clone();
        s.close()
    }

    /// Within a string that any plain character may extend: how many more it may take.
    fn free_string_room(&self) -> Option<usize> {
        match self.stack.last()? {
            Frame::Str {
                node,
                len,
                escape: false,
            } => match self.g.nodes[*node] {
                Node::Str { max, .. } => Some(max - len),
                _ => None,
            },
            _ => None,
        }
    }

    fn terminable(&self, f: &Frame) -> bool {
        match f {
            Frame::Number { node, text } => number_complete(&self.g.nodes[*node], text),
            Frame::Literal { node, text } => literal_options(&self.g.nodes[*node])
                .iter()
                .any(|o| o == text),
            _ => false,
        }
    }

    fn pop_done(&mut self) {
        self.stack.pop();
        match self.stack.last_mut() {
            Some(Frame::Object { stage, .. }) => *stage = Obj::AfterValue,
            Some(Frame::Array { count, stage, .. }) => {
                *count += 1;
                *stage = Arr::AfterItem;
            }
            _ => {}
        }
    }

    /// Writes the shortest completion into this state and returns it.
    fn close(&mut self) -> Option<String> {
        let mut out = String::new();
        for _ in 0..100_000 {
            let Some(top) = self.stack.last() else {
                return Some(out);
            };
            match self.closing(top)? {
                Close::End => {
                    if !self.terminable(top) {
                        return None;
                    }
                    self.pop_done();
                }
                Close::Text(t) => {
                    if !self.feed_str(&t) {
                        return None;
                    }
                    out.push_str(&t);
                }
            }
        }
        None
    }

    fn closing(&self, top: &Frame) -> Option<Close> {
        let g = self.g;
        let text = |s: &str| Some(Close::Text(s.to_owned()));
        match top {
            Frame::Value { node, .. } => {
                if !g.shortest[*node].is_empty() {
                    return text(&g.shortest[*node]);
                }
                // The node's own shortest value is being worked out: open it.
                match &g.nodes[*node] {
                    Node::Object { .. } => text("{"),
                    Node::Array { .. } => text("["),
                    Node::Str { .. } => text("\""),
                    Node::Number { .. } => number_step(&g.nodes[*node], "").map(Close::Text),
                    Node::Literal(options) => options
                        .iter()
                        .min_by_key(|o| o.len())
                        .map(|o| Close::Text(o.clone())),
                    Node::Union(branches) => branches
                        .iter()
                        .map(|b| &g.shortest[*b])
                        .filter(|s| !s.is_empty())
                        .min_by_key(|s| s.len())
                        .map(|s| Close::Text(s.clone())),
                }
            }
            Frame::Object { node, next, stage } => {
                let Node::Object { props } = &g.nodes[*node] else {
                    return None;
                };
                let wanted = props[*next..].iter().find(|p| p.required);
                match stage {
                    Obj::Open | Obj::AfterValue => {
                        let open = matches!(stage, Obj::Open);
                        match (wanted, open) {
                            (Some(_), true) => text("\""),
                            (Some(_), false) => text(","),
                            (None, _) => text("}"),
                        }
                    }
                    Obj::Comma(_) => text("\""),
                    Obj::Key(so_far) => {
                        let candidates = key_candidates(props, *next);
                        let pick = candidates
                            .iter()
                            .filter(|p| p.key.starts_with(so_far.as_str()))
                            .min_by_key(|p| (!p.required, p.key.len()))?;
                        text(&pick.key[so_far.len()..])
                    }
                    Obj::Colon(_) => text(":"),
                    Obj::Value => None,
                }
            }
            Frame::Array { node, count, stage } => {
                let Node::Array { items, min, .. } = &g.nodes[*node] else {
                    return None;
                };
                match stage {
                    Arr::Open if *min > 0 => text(&g.shortest[*items]),
                    Arr::Open => text("]"),
                    Arr::AfterItem if count < min => text(","),
                    Arr::AfterItem => text("]"),
                    Arr::Item => None,
                }
            }
            Frame::Str { node, len, escape } => {
                let Node::Str { min, .. } = &g.nodes[*node] else {
                    return None;
                };
                if *escape {
                    return text("\\");
                }
                let pad = min.saturating_sub(*len);
                Some(Close::Text(format!("{}\"", "a".repeat(pad))))
            }
            Frame::Number { node, text: so_far } => {
                if number_complete(&g.nodes[*node], so_far) {
                    Some(Close::End)
                } else {
                    number_step(&g.nodes[*node], so_far).map(Close::Text)
                }
            }
            Frame::Literal { node, text: so_far } => {
                let options = literal_options(&g.nodes[*node]);
                if options.iter().any(|o| o == so_far) {
                    return Some(Close::End);
                }
                options
                    .iter()
                    .filter(|o| o.starts_with(so_far.as_str()))
                    .min_by_key(|o| o.len())
                    .map(|o| Close::Text(o[so_far.len()..].to_owned()))
            }
        }
    }
}

fn literal_options(node: &Node) -> &[String] {
    match node {
        Node::Literal(options) => options,
        _ => &[],
    }
}

/// The keys that may come next in an object whose first unwritten property is `next`: each
/// property from there up to and including the first required one.
fn key_candidates(props: &[Prop], next: usize) -> Vec<&Prop> {
    let mut out = Vec::new();
    for p in &props[next.min(props.len())..] {
        out.push(p);
        if p.required {
            break;
        }
    }
    out
}

/// The frame a value of `node` becomes when its first character is `c`, if it may start so.
fn open(g: &Grammar, node: usize, c: char) -> Option<Frame> {
    match &g.nodes[node] {
        Node::Object { .. } => (c == '{').then_some(Frame::Object {
            node,
            next: 0,
            stage: Obj::Open,
        }),
        Node::Array { .. } => (c == '[').then_some(Frame::Array {
            node,
            count: 0,
            stage: Arr::Open,
        }),
        Node::Str { .. } => (c == '"').then_some(Frame::Str {
            node,
            len: 0,
            escape: false,
        }),
        Node::Number { .. } => {
            let text = c.to_string();
            number_ok(&g.nodes[node], &text).then_some(Frame::Number { node, text })
        }
        Node::Literal(options) => {
            let text = c.to_string();
            options
                .iter()
                .any(|o| o.starts_with(&text))
                .then_some(Frame::Literal { node, text })
        }
        Node::Union(branches) => branches.iter().find_map(|b| open(g, *b, c)),
    }
}

fn step(g: &Grammar, top: &mut Frame, c: char) -> Step {
    match top {
        Frame::Value { node, space } => {
            if c == ' ' && *space {
                *space = false;
                return Step::Accept;
            }
            let Some(frame) = open(g, *node, c) else {
                return Step::Reject;
            };
            *top = frame;
            // A one-character literal (an enum of `1`) is complete at once.
            if let Frame::Literal { node, text } = top {
                let options = literal_options(&g.nodes[*node]);
                let exact = options.iter().any(|o| o == text);
                let longer = options
                    .iter()
                    .any(|o| o.len() > text.len() && o.starts_with(text.as_str()));
                if exact && !longer {
                    return Step::Done;
                }
            }
            Step::Accept
        }
        Frame::Object { node, next, stage } => {
            let Node::Object { props } = &g.nodes[*node] else {
                return Step::Reject;
            };
            let required_left = props[*next..].iter().any(|p| p.required);
            match stage {
                Obj::Open | Obj::AfterValue if c == '}' && !required_left => Step::Done,
                Obj::Comma(true) if c == ' ' => {
                    *stage = Obj::Comma(false);
                    Step::Accept
                }
                Obj::Open | Obj::Comma(_) if c == '"' && *next < props.len() => {
                    *stage = Obj::Key("\"".into());
                    Step::Accept
                }
                Obj::AfterValue if c == ',' && *next < props.len() => {
                    *stage = Obj::Comma(true);
                    Step::Accept
                }
                Obj::Key(so_far) => {
                    so_far.push(c);
                    let candidates = key_candidates(props, *next);
                    if let Some(i) = props[*next..]
                        .iter()
                        .position(|p| p.key == *so_far)
                        .filter(|i| *i < candidates.len())
                    {
                        *stage = Obj::Colon(*next + i);
                        return Step::Accept;
                    }
                    if candidates
                        .iter()
                        .any(|p| p.key.starts_with(so_far.as_str()))
                    {
                        Step::Accept
                    } else {
                        Step::Reject
                    }
                }
                Obj::Colon(i) if c == ':' => {
                    let child = props[*i].node;
                    *next = *i + 1;
                    *stage = Obj::Value;
                    Step::Push(Frame::Value {
                        node: child,
                        space: true,
                    })
                }
                _ => Step::Reject,
            }
        }
        Frame::Array { node, count, stage } => {
            let Node::Array { items, min, max } = g.nodes[*node] else {
                return Step::Reject;
            };
            match stage {
                Arr::Open if c == ']' && min == 0 => Step::Done,
                Arr::Open if max > 0 => {
                    *stage = Arr::Item;
                    Step::PushRefeed(Frame::Value {
                        node: items,
                        space: false,
                    })
                }
                Arr::AfterItem if c == ']' && *count >= min => Step::Done,
                Arr::AfterItem if c == ',' && *count < max => {
                    *stage = Arr::Item;
                    Step::Push(Frame::Value {
                        node: items,
                        space: true,
                    })
                }
                _ => Step::Reject,
            }
        }
        Frame::Str { node, len, escape } => {
            let Node::Str { min, max } = g.nodes[*node] else {
                return Step::Reject;
            };
            if *escape {
                if matches!(c, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') {
                    *escape = false;
                    *len += 1;
                    return Step::Accept;
                }
                return Step::Reject;
            }
            match c {
                '"' if *len >= min => Step::Done,
                '"' => Step::Reject,
                '\\' if *len < max => {
                    *escape = true;
                    Step::Accept
                }
                c if (c as u32) < 0x20 || *len >= max => Step::Reject,
                _ => {
                    *len += 1;
                    Step::Accept
                }
            }
        }
        Frame::Number { node, text } => {
            let n = &g.nodes[*node];
            text.push(c);
            if number_ok(n, text) {
                return Step::Accept;
            }
            text.pop();
            if number_complete(n, text) {
                Step::EndRefeed
            } else {
                Step::Reject
            }
        }
        Frame::Literal { node, text } => {
            let options = literal_options(&g.nodes[*node]);
            let mut longer = text.clone();
            longer.push(c);
            if options.iter().any(|o| o.starts_with(&longer)) {
                let exact = options.contains(&longer);
                let more = options
                    .iter()
                    .any(|o| o.len() > longer.len() && o.starts_with(&longer));
                *text = longer;
                return if exact && !more {
                    Step::Done
                } else {
                    Step::Accept
                };
            }
            if options.iter().any(|o| o == text) {
                Step::EndRefeed
            } else {
                Step::Reject
            }
        }
    }
}

/// The parts of a number's text: sign, digits before the point, the point, digits after it.
struct NumberText<'a> {
    negative: bool,
    int: &'a str,
    dot: bool,
    frac: &'a str,
}

/// Splits a number's text, `None` when it cannot begin a JSON number of at most
/// [`INT_DIGITS`] + [`FRAC_DIGITS`] digits.
fn split_number(text: &str) -> Option<NumberText<'_>> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (int, dot, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, true, f),
        None => (rest, false, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let ok = digits(int)
        && digits(frac)
        && !(dot && int.is_empty())
        && !(int.len() > 1 && int.starts_with('0'))
        && int.len() <= INT_DIGITS
        && frac.len() <= FRAC_DIGITS;
    ok.then_some(NumberText {
        negative,
        int,
        dot,
        frac,
    })
}

/// Whether `text` can still become a number of `node` (its type and bounds).
fn number_ok(node: &Node, text: &str) -> bool {
    let Node::Number { integer, min, max } = *node else {
        return false;
    };
    let Some(n) = split_number(text) else {
        return false;
    };
    if integer && n.dot {
        return false;
    }
    let lo_bound = min.unwrap_or(f64::NEG_INFINITY);
    let hi_bound = max.unwrap_or(f64::INFINITY);
    // Magnitudes the text can still reach, as (lo, hi, hi excluded).
    let mut spans: Vec<(f64, f64, bool)> = Vec::new();
    let whole = |s: &str| s.parse::<f64>().unwrap_or(0.0);
    let top = 10f64.powi(INT_DIGITS as i32);
    if n.int.is_empty() {
        spans.push(if integer {
            (0.0, top - 1.0, false)
        } else {
            (0.0, top, true)
        });
    } else if !n.dot {
        let i = whole(n.int);
        spans.push(if integer {
            (i, i, false)
        } else {
            (i, i + 1.0, true)
        });
        if n.int != "0" {
            for k in 1..=(INT_DIGITS - n.int.len()) {
                let scale = 10f64.powi(k as i32);
                spans.push(if integer {
                    (i * scale, (i + 1.0) * scale - 1.0, false)
                } else {
                    (i * scale, (i + 1.0) * scale, true)
                });
            }
        }
    } else {
        let base: f64 = format!("{}.{}0", n.int, n.frac).parse().unwrap_or(0.0);
        if n.frac.len() < FRAC_DIGITS {
            let step = 10f64.powi(-(n.frac.len() as i32));
            spans.push((base, base + step, true));
        } else {
            spans.push((base, base, false));
        }
    }
    spans.into_iter().any(|(lo, hi, open)| {
        let (lo, hi, lo_open, hi_open) = if n.negative {
            (-hi, -lo, open, false)
        } else {
            (lo, hi, false, open)
        };
        let from = lo.max(lo_bound);
        let to = hi.min(hi_bound);
        if integer {
            from.ceil() <= to.floor()
        } else if (lo_open && from == lo) || (hi_open && to == hi) {
            from < to
        } else {
            from <= to
        }
    })
}

/// Whether `text` is a whole number of `node` that may end here.
fn number_complete(node: &Node, text: &str) -> bool {
    let Node::Number { integer, min, max } = *node else {
        return false;
    };
    let Some(n) = split_number(text) else {
        return false;
    };
    if n.int.is_empty() || (n.dot && n.frac.is_empty()) || (integer && n.dot) {
        return false;
    }
    let Ok(v) = text.parse::<f64>() else {
        return false;
    };
    min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m)
}

/// One more character that keeps `text` on the way to a number of `node`, digits first.
fn number_step(node: &Node, text: &str) -> Option<String> {
    let first: &[char] = if text.is_empty() {
        &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-']
    } else {
        &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.']
    };
    // Prefer a digit that completes the number at once, then any that keeps it possible.
    let fits = |c: &char| {
        let t = format!("{text}{c}");
        number_ok(node, &t).then_some(t)
    };
    first
        .iter()
        .filter_map(|c| fits(c).map(|t| (number_complete(node, &t), *c)))
        .max_by_key(|(done, c)| (*done, std::cmp::Reverse(*c as u32)))
        .map(|(_, c)| c.to_string())
}

/// The vocabulary's texts, indexed for [`JsonConstraint`]: built once per model.
#[derive(Debug, Clone)]
pub struct TokenTable {
    texts: Vec<Option<Box<str>>>,
    by_first: HashMap<char, Vec<u32>>,
    /// Tokens any string may take (no quote, backslash or control character), shortest first,
    /// with their lengths in characters.
    plain: Vec<(usize, u32)>,
    /// The other tokens that could appear inside a string (those with a quote or backslash).
    special: Vec<u32>,
}

impl TokenTable {
    /// Indexes the texts of a vocabulary by token id (`None`: never written).
    pub fn new(texts: Vec<Option<String>>) -> Self {
        let mut by_first: HashMap<char, Vec<u32>> = HashMap::new();
        let mut plain = Vec::new();
        let mut special = Vec::new();
        let texts: Vec<Option<Box<str>>> = texts
            .into_iter()
            .map(|t| t.filter(|t| !t.is_empty()).map(String::into_boxed_str))
            .collect();
        for (id, text) in texts.iter().enumerate() {
            let (Some(text), Ok(id)) = (text, u32::try_from(id)) else {
                continue;
            };
            let Some(first) = text.chars().next() else {
                continue;
            };
            by_first.entry(first).or_default().push(id);
            if text
                .chars()
                .all(|c| c != '"' && c != '\\' && (c as u32) >= 0x20)
            {
                plain.push((text.chars().count(), id));
            } else if text.contains('"') || text.contains('\\') {
                special.push(id);
            }
        }
        plain.sort_unstable();
        Self {
            texts,
            by_first,
            plain,
            special,
        }
    }

    /// How many token ids the table covers.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when no token can be written.
    pub fn is_empty(&self) -> bool {
        self.by_first.is_empty()
    }

    /// The text of token `id`.
    pub fn text(&self, id: u32) -> Option<&str> {
        self.texts.get(id as usize)?.as_deref()
    }

    /// Every token `state` accepts whole (the mask): by first character, and for the inside of
    /// a string by the precomputed plain tokens that fit its room.
    pub fn allowed(&self, state: &State<'_>) -> Vec<u32> {
        let takes = |id: u32| {
            let mut s = state.clone();
            self.text(id).is_some_and(|t| s.feed_str(t))
        };
        let mut out = Vec::new();
        if let Some(room) = state.free_string_room() {
            let fit = self.plain.partition_point(|(len, _)| *len <= room);
            out.extend(self.plain[..fit].iter().map(|(_, id)| *id));
            out.extend(self.special.iter().copied().filter(|id| takes(*id)));
        } else {
            for (first, ids) in &self.by_first {
                let mut probe = state.clone();
                if probe.feed(*first) {
                    out.extend(ids.iter().copied().filter(|id| takes(*id)));
                }
            }
        }
        out.sort_unstable();
        out
    }
}

/// Holds a local model's generation to a [`Grammar`] (see the module docs).
#[derive(Debug, Clone)]
pub struct JsonConstraint<'a> {
    table: &'a TokenTable,
    state: State<'a>,
    /// Tokens written by the closing path (the budget ran short).
    pub forced: usize,
}

impl<'a> JsonConstraint<'a> {
    /// A constraint for an answer that starts with `prefill` (already part of the answer);
    /// an error when the grammar does not accept it.
    pub fn new(grammar: &'a Grammar, table: &'a TokenTable, prefill: &str) -> Result<Self, String> {
        let mut state = grammar.start();
        if !state.feed_str(prefill) {
            return Err(format!(
                "the answer's start {prefill:?} does not fit the schema"
            ));
        }
        Ok(Self {
            table,
            state,
            forced: 0,
        })
    }

    /// Where the answer stands.
    pub fn state(&self) -> &State<'a> {
        &self.state
    }

    /// The state after token `id`, if it accepts the token and can still close within
    /// `room` more tokens.
    fn after(&self, id: u32, room: usize) -> Option<State<'a>> {
        let text = self.table.text(id)?;
        let mut s = self.state.clone();
        if !s.feed_str(text) {
            return None;
        }
        let need = s.completion()?.chars().count();
        (need <= room).then_some(s)
    }

    /// The best-scoring token that is a prefix of `closing`.
    fn closing_token(&self, logits: &[f32], closing: &str) -> Option<u32> {
        let first = closing.chars().next()?;
        self.table
            .by_first
            .get(&first)?
            .iter()
            .copied()
            .filter(|id| self.table.text(*id).is_some_and(|t| closing.starts_with(t)))
            .max_by(|a, b| {
                score(logits, *a)
                    .total_cmp(&score(logits, *b))
                    .then(b.cmp(a))
            })
    }

    fn take(&mut self, id: u32) -> Result<Option<u32>, String> {
        let text = self.table.text(id).unwrap_or_default();
        if !self.state.feed_str(text) {
            return Err(format!("the token {text:?} does not fit the schema"));
        }
        Ok(Some(id))
    }
}

fn score(logits: &[f32], id: u32) -> f32 {
    logits
        .get(id as usize)
        .copied()
        .unwrap_or(f32::NEG_INFINITY)
}

/// The ids of the `k` largest logits, largest first (lower id first on ties).
fn top_k(logits: &[f32], k: usize) -> Vec<u32> {
    let mut best: Vec<(f32, u32)> = Vec::with_capacity(k + 1);
    for (i, &v) in logits.iter().enumerate() {
        if best.len() == k && best.last().is_some_and(|(w, _)| v <= *w) {
            continue;
        }
        let Ok(id) = u32::try_from(i) else { break };
        let at = best.partition_point(|(w, _)| *w >= v);
        best.insert(at, (v, id));
        best.truncate(k);
    }
    best.into_iter().map(|(_, id)| id).collect()
}

impl cairn_models::gguf::Constraint for JsonConstraint<'_> {
    fn next(&mut self, logits: &[f32], remaining: usize) -> Result<Option<u32>, String> {
        if self.state.is_done() {
            return Ok(None);
        }
        let closing = self
            .state
            .completion()
            .ok_or("the answer cannot be completed under the schema")?;
        if closing.is_empty() && self.state.can_end() {
            return Ok(None);
        }
        let need = closing.chars().count();
        if need < remaining {
            let room = remaining - 1;
            for id in top_k(logits, TOP_K) {
                if let Some(s) = self.after(id, room) {
                    self.state = s;
                    return Ok(Some(id));
                }
            }
            let mut allowed = self.table.allowed(&self.state);
            allowed.sort_by(|a, b| {
                score(logits, *b)
                    .total_cmp(&score(logits, *a))
                    .then(a.cmp(b))
            });
            for id in allowed {
                if let Some(s) = self.after(id, room) {
                    self.state = s;
                    return Ok(Some(id));
                }
            }
        }
        // No room for anything but the shortest way to close the value.
        let id = self
            .closing_token(logits, &closing)
            .ok_or_else(|| format!("no token of the vocabulary writes the start of {closing:?}"))?;
        self.forced += 1;
        self.take(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_models::gguf::Constraint;
    use serde_json::json;

    fn consolidate_like() -> Value {
        json!({
            "type": "object",
            "required": ["items"],
            "additionalProperties": false,
            "properties": {"items": {"type": "array", "maxItems": 3, "items": {
                "type": "object",
                "required": ["kind", "title", "importance", "sources"],
                "properties": {
                    "kind": {"type": "string", "enum": ["fact", "decision"]},
                    "title": {"type": "string", "minLength": 3, "maxLength": 12},
                    "importance": {"type": "integer", "minimum": 1, "maximum": 5},
                    "sources": {"type": "array", "minItems": 1, "maxItems": 2,
                                "items": {"type": "integer", "minimum": 1}},
                    "needed": {"type": "number", "minimum": 0, "maximum": 1},
                    "ok": {"type": "boolean"},
                    "happened_at": {"type": ["string", "null"]}
                }
            }}}
        })
    }

    fn accepts(g: &Grammar, text: &str) -> bool {
        g.start().feed_str(text)
    }

    #[test]
    fn valid_prefixes_are_accepted_and_invalid_ones_refused() {
        let g = Grammar::compile(&consolidate_like()).unwrap();
        let good = [
            "",
            "{",
            "{\"items\": [",
            "{\"items\":[]}",
            "{\"items\": [{\"kind\": \"fa",
            "{\"items\": [{\"kind\":\"fact\", \"title\": \"Port \\\"x\\\"\", \"importance\": 5",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[12, 3]",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[1],\
             \"happened_at\": null, \"needed\": 0.25, \"ok\": false}]}",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[1],\
             \"happened_at\": \"2024\"}]}",
        ];
        for text in good {
            assert!(accepts(&g, text), "refused {text:?}");
        }
        let bad = [
            // Not JSON, or not this schema's JSON.
            "[",
            "{\"itemz",
            "{\"other\"",
            "{}",
            "{\"items\": [{\"kind\": \"opinion\"",
            "{\"items\": [{\"title\"",
            "{\"items\": [{\"kind\": \"fact\", \"title\": \"ab\"}",
            "{\"items\": [{\"kind\": \"fact\", \"title\": \"abcdefghijklm",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":6",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":0",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3.5",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":03",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[]",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[1,2,3",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[1],\
             \"needed\": 1.5",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[1],\
             \"ok\": 1",
            "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\"sources\":[1],\
             \"extra\"",
            "{\"items\": [{\"kind\": \"fact\", \"title\": \"a\nb",
            "{\"items\": [{\"kind\": \"fact\", \"title\": \"a\\u0041",
            "{\"items\":[]}}",
            "{\"items\":  [",
        ];
        for text in bad {
            assert!(!accepts(&g, text), "accepted {text:?}");
        }
        let mut s = g.start();
        assert!(s.feed_str("{\"items\":[]}"));
        assert!(s.is_done());
        // Four items are one more than maxItems.
        let item = "{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":1,\"sources\":[1]}";
        assert!(accepts(
            &g,
            &format!("{{\"items\":[{item},{item},{item}]}}")
        ));
        assert!(!accepts(&g, &format!("{{\"items\":[{item},{item},{item},")));
    }

    #[test]
    fn the_completion_closes_every_state_with_a_valid_value() {
        let schema = consolidate_like();
        let g = Grammar::compile(&schema).unwrap();
        let text = "{\"items\": [{\"kind\":\"fact\",\"title\":\"abc\",\"importance\":3,\
                    \"sources\":[1],\"happened_at\": null, \"needed\": 0.25, \"ok\": false}]}";
        // Every prefix of a valid answer closes into a valid answer.
        let mut s = g.start();
        for (i, c) in text.char_indices() {
            let closing = s.completion().unwrap();
            let whole = format!("{}{closing}", &text[..i]);
            let v: Value = serde_json::from_str(&whole).unwrap_or_else(|e| panic!("{whole}: {e}"));
            assert_eq!(crate::schema::validate(&schema, &v), Ok(()), "{whole}");
            assert!(s.feed(c));
        }
        assert!(s.is_done());
        assert_eq!(g.start().completion().unwrap(), "{\"items\":[]}");
        let mut s = g.start();
        assert!(s.feed_str("{\"items\": [{\"kind\": \"de"));
        assert_eq!(
            s.completion().unwrap(),
            "cision\",\"title\":\"aaa\",\"importance\":1,\"sources\":[1]}]}"
        );
        let mut s = g.start();
        assert!(s.feed_str("{\"items\": [{\"kind\": \"fact\", \"title\": \"x\\"));
        assert_eq!(
            s.completion().unwrap(),
            "\\a\",\"importance\":1,\"sources\":[1]}]}"
        );
    }

    #[test]
    fn numbers_keep_to_their_bounds() {
        let g = |s: Value| Grammar::compile(&s).unwrap();
        let unit = g(json!({"type": "number", "minimum": 0, "maximum": 1}));
        for ok in ["0", "0.5", "1", "1.0", "0.999"] {
            assert!(accepts(&unit, ok), "{ok}");
        }
        for bad in ["2", "1.5", "-1", "10", "01", "."] {
            assert!(!accepts(&unit, bad), "{bad}");
        }
        let neg = g(json!({"type": "integer", "minimum": -20, "maximum": -10}));
        assert!(accepts(&neg, "-15"));
        assert!(!accepts(&neg, "-9"));
        assert!(
            !accepts(&neg, "-3"),
            "no integer in [-20, -10] starts with -3"
        );
        assert_eq!(neg.start().completion().unwrap(), "-10");
        let big = g(json!({"type": "integer", "minimum": 1000}));
        assert_eq!(big.start().completion().unwrap(), "1000");
        let frac = g(json!({"type": "number", "minimum": 0.25, "maximum": 0.5}));
        assert_eq!(frac.start().completion().unwrap(), "0.3");
        let mut s = frac.start();
        assert!(s.feed_str("0.4"));
        assert!(s.can_end() && !s.is_done());
        assert_eq!(s.completion().unwrap(), "");
    }

    #[test]
    fn impossible_or_unenforceable_schemas_are_refused_with_the_place() {
        let cases = [
            (
                json!({"type": "string", "pattern": "^a"}),
                "$: the schema keyword \"pattern\"",
            ),
            (
                json!({"oneOf": [{"type": "string"}]}),
                "$: the schema keyword \"oneOf\"",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "format": "date"}}}),
                "$.a: the schema keyword \"format\"",
            ),
            (
                json!({"type": "array", "minItems": 3, "maxItems": 2}),
                "$: minItems 3 is above maxItems 2",
            ),
            (
                json!({"type": "string", "minLength": 5, "maxLength": 2}),
                "$: minLength 5 is above maxLength 2",
            ),
            (json!({"type": "string", "enum": []}), "$: enum is empty"),
            (
                json!({"type": "string", "enum": [1, 2]}),
                "$: no value of enum/const matches",
            ),
            (
                json!({"type": "object", "required": ["a"], "properties": {"b": {}}}),
                "$: the required key \"a\" is not in properties",
            ),
            (
                json!({"type": "integer", "minimum": 1.2, "maximum": 1.8}),
                "$: no integer lies between",
            ),
            (
                json!({"type": "number", "minimum": 3, "maximum": 1}),
                "$: no number lies between",
            ),
            (
                json!({"type": "text"}),
                "$: \"text\" is not a JSON schema type",
            ),
            (
                json!({"type": "array", "items": [{"type": "string"}]}),
                "$: items as a list",
            ),
            (
                json!({"type": "integer", "minimum": 1e20}),
                "$: no value can match",
            ),
        ];
        for (schema, want) in cases {
            let err = Grammar::compile(&schema).unwrap_err();
            assert!(err.starts_with(want), "{schema}: {err}");
        }
    }

    /// A made-up vocabulary: single characters, common JSON pieces and long words.
    fn table() -> TokenTable {
        let mut texts: Vec<Option<String>> = (0x20u8..0x7f)
            .map(|b| Some((b as char).to_string()))
            .collect();
        for t in [
            "{\"", "\":", "\": ", ", \"", "\",", "\"}", "\"]", "}]", "]}", "true", "false", "null",
            "items", "kind", "title", " the", " port", " relay", "12", "345", "0.", "\n", "\"\n",
            "é", "日本",
        ] {
            texts.push(Some(t.to_owned()));
        }
        texts.push(None);
        TokenTable::new(texts)
    }

    /// Logits from a seeded generator: a model with no idea of JSON.
    fn noise(seed: &mut u64, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                (*seed % 10_000) as f32 / 100.0
            })
            .collect()
    }

    #[test]
    fn any_scores_within_any_budget_give_a_valid_answer() {
        let schema = consolidate_like();
        let g = Grammar::compile(&schema).unwrap();
        let t = table();
        for seed0 in 1..40u64 {
            for budget in [14usize, 30, 60, 200] {
                let mut seed = seed0 * 7919;
                let mut c = JsonConstraint::new(&g, &t, "{\"items\": [").unwrap();
                let mut out = String::from("{\"items\": [");
                let mut written = 0;
                while let Some(id) = c
                    .next(&noise(&mut seed, t.len()), budget - written)
                    .unwrap()
                {
                    out.push_str(t.text(id).unwrap());
                    written += 1;
                    assert!(written <= budget, "over budget: {out}");
                }
                let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
                assert_eq!(crate::schema::validate(&schema, &v), Ok(()), "{out}");
            }
        }
    }

    #[test]
    fn the_mask_holds_exactly_the_tokens_that_fit() {
        let g = Grammar::compile(&consolidate_like()).unwrap();
        let t = table();
        let mut s = g.start();
        assert!(s.feed_str("{\"items\": [{\"kind\":"));
        let allowed: Vec<&str> = t
            .allowed(&s)
            .iter()
            .map(|id| t.text(*id).unwrap())
            .collect();
        assert_eq!(allowed, vec![" ", "\""]);
        assert!(s.feed_str(" \"fact\", \"title\": \"a"));
        let allowed: Vec<&str> = t
            .allowed(&s)
            .iter()
            .map(|id| t.text(*id).unwrap())
            .collect();
        // Inside the title: plain text, an escape, and no closing quote before 3 characters.
        assert!(allowed.contains(&" relay") && allowed.contains(&"é") && allowed.contains(&"\\"));
        assert!(!allowed.contains(&"\"") && !allowed.contains(&"\",") && !allowed.contains(&"\n"));
    }

    #[test]
    fn a_prefill_the_schema_refuses_is_an_error() {
        let g = Grammar::compile(&json!({"type": "array", "items": {"type": "string"}})).unwrap();
        let t = table();
        let err = JsonConstraint::new(&g, &t, "{\"a\": ").unwrap_err();
        assert!(err.contains("does not fit the schema"), "{err}");
    }
}
