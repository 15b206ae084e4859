//! A strict JSON reader (RFC 8259, what `JSON.parse` accepts) that remembers where every value
//! and key starts, so validation can point at `file:line:col`.
//!
//! Why not serde_json: it reports positions only for syntax errors, and rein's diagnostics need
//! the position of, say, the third handler's `timeout`. The reader is linear, nests at most
//! [`MAX_DEPTH`] levels (deeper input is an error, never a stack overflow), and gives the
//! mistakes people actually make — comments, trailing commas, single quotes — their own message.

use std::fmt;

/// Deepest nesting accepted.
pub const MAX_DEPTH: usize = 256;

/// A value with the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub offset: usize,
    pub value: JsonValue,
}

/// A JSON value; object members keep file order (duplicates included; lookups take the last,
/// as `JSON.parse` does).
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    Null,
    Bool(bool),
    /// The number's source text (already validated against the JSON grammar).
    Number(String),
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

/// An object member: key, where the key starts, value.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_offset: usize,
    pub value: Node,
}

/// A syntax error at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A duplicate key noticed while reading (the later one wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    pub key: String,
    pub first_offset: usize,
    pub offset: usize,
}

/// The parsed document and the duplicate keys found in it.
#[derive(Debug)]
pub struct Document {
    pub root: Node,
    pub duplicates: Vec<DuplicateKey>,
}

impl JsonValue {
    /// The JSON type name used in messages (`object`, `array`, `string`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            JsonValue::Null => "null",
            JsonValue::Bool(_) => "boolean",
            JsonValue::Number(_) => "number",
            JsonValue::String(_) => "string",
            JsonValue::Array(_) => "array",
            JsonValue::Object(_) => "object",
        }
    }

    /// Members if this is an object.
    pub fn as_object(&self) -> Option<&[Member]> {
        match self {
            JsonValue::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsonValue::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            JsonValue::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JsonValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Converts to a `serde_json::Value` (duplicate keys: last wins).
    pub fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            JsonValue::Null => Value::Null,
            JsonValue::Bool(b) => Value::Bool(*b),
            JsonValue::Number(n) => serde_json::from_str::<serde_json::Number>(n)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            JsonValue::String(s) => Value::String(s.clone()),
            JsonValue::Array(items) => {
                Value::Array(items.iter().map(|n| n.value.to_serde()).collect())
            }
            JsonValue::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|m| (m.key.clone(), m.value.value.to_serde()))
                    .collect(),
            ),
        }
    }
}

/// The last member named `key` (JSON.parse semantics for duplicates).
pub fn get<'a>(members: &'a [Member], key: &str) -> Option<&'a Member> {
    members.iter().rev().find(|m| m.key == key)
}

/// The members that count: for a key given twice, only the last (JSON.parse semantics), in
/// file order.
pub fn last_wins(members: &[Member]) -> Vec<&Member> {
    let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, m) in members.iter().enumerate() {
        last.insert(m.key.as_str(), i);
    }
    members
        .iter()
        .enumerate()
        .filter(|(i, m)| last.get(m.key.as_str()) == Some(i))
        .map(|(_, m)| m)
        .collect()
}

/// Maps byte offsets to 1-based line and column (columns count characters).
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    /// Last answer `(line, offset, col)`: queries come mostly in file order, so counting
    /// characters from the previous answer keeps a minified one-line file linear overall.
    cursor: std::cell::Cell<(usize, usize, usize)>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            line_starts,
            cursor: std::cell::Cell::new((0, 0, 0)),
        }
    }

    /// `(line, col)`, both 1-based, for `offset` in `text`.
    pub fn line_col(&self, text: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(text.len());
        let line = self
            .line_starts
            .partition_point(|s| *s <= offset)
            .saturating_sub(1);
        let start = self.line_starts[line];
        let (c_line, c_off, c_col) = self.cursor.get();
        let (from, base) = if c_line == line && c_off <= offset && c_off >= start {
            (c_off, c_col)
        } else {
            (start, 0)
        };
        let col = base
            + text
                .get(from..offset)
                .map(|s| s.chars().count())
                .unwrap_or(offset - from);
        self.cursor.set((line, offset, col));
        (
            u32::try_from(line + 1).unwrap_or(u32::MAX),
            u32::try_from(col + 1).unwrap_or(u32::MAX),
        )
    }
}

/// Parses `text` as one JSON document.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        duplicates: Vec::new(),
    };
    p.skip_ws()?;
    let root = p.value(0)?;
    p.skip_ws()?;
    if p.pos < p.bytes.len() {
        return Err(p.error_here("unexpected content after the end of the JSON value"));
    }
    Ok(Document {
        root,
        duplicates: p.duplicates,
    })
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    duplicates: Vec<DuplicateKey>,
}

impl Parser<'_> {
    fn error(&self, offset: usize, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            offset,
            message: message.into(),
        }
    }

    fn error_here(&self, message: impl Into<String>) -> SyntaxError {
        self.error(self.pos, message)
    }

    fn describe_here(&self) -> String {
        match self.text.get(self.pos..).and_then(|s| s.chars().next()) {
            None => "end of file".to_string(),
            Some(c) if c.is_control() => format!("{c:?}"),
            Some(c) => format!("`{c}`"),
        }
    }

    fn eof(&self, what: &str) -> SyntaxError {
        self.error_here(format!(
            "unexpected end of file {what} (the JSON is truncated)"
        ))
    }

    /// Skips JSON whitespace; a comment here gets a precise error instead of "unexpected `/`".
    fn skip_ws(&mut self) -> Result<(), SyntaxError> {
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if matches!(self.bytes.get(self.pos + 1), Some(b'/') | Some(b'*')) => {
                    return Err(self.error_here(
                        "comments are not allowed in JSON (settings files are plain JSON, not JSONC)",
                    ));
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        let offset = self.pos;
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.eof("where a value was expected"));
        };
        let value = match b {
            b'{' => self.object(depth)?,
            b'[' => self.array(depth)?,
            b'"' => JsonValue::String(self.string()?),
            b'-' | b'0'..=b'9' => JsonValue::Number(self.number()?),
            b't' => self.keyword("true", JsonValue::Bool(true))?,
            b'f' => self.keyword("false", JsonValue::Bool(false))?,
            b'n' => self.keyword("null", JsonValue::Null)?,
            b'\'' => {
                return Err(self.error_here("strings must use double quotes, not single quotes"));
            }
            _ => {
                return Err(self.error_here(format!(
                    "expected a JSON value, found {}",
                    self.describe_here()
                )));
            }
        };
        Ok(Node { offset, value })
    }

    fn keyword(&mut self, word: &str, value: JsonValue) -> Result<JsonValue, SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error_here(format!(
                "expected a JSON value, found {}",
                self.describe_here()
            )))
        }
    }

    fn enter(&self, depth: usize) -> Result<usize, SyntaxError> {
        if depth >= MAX_DEPTH {
            Err(self.error_here(format!("JSON nests deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(depth + 1)
        }
    }

    fn object(&mut self, depth: usize) -> Result<JsonValue, SyntaxError> {
        let depth = self.enter(depth)?;
        self.pos += 1;
        let mut members: Vec<Member> = Vec::new();
        let mut seen: Option<std::collections::HashMap<String, usize>> = None;
        self.skip_ws()?;
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(JsonValue::Object(members));
        }
        loop {
            self.skip_ws()?;
            let key_offset = self.pos;
            match self.bytes.get(self.pos) {
                Some(b'"') => {}
                None => return Err(self.eof("inside an object")),
                Some(b'\'') => {
                    return Err(self.error_here("keys must use double quotes, not single quotes"));
                }
                Some(_) => {
                    return Err(self.error_here(format!(
                        "expected a key in double quotes, found {}",
                        self.describe_here()
                    )));
                }
            }
            let key = self.string()?;
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b':') => self.pos += 1,
                None => return Err(self.eof("after an object key")),
                Some(_) => {
                    return Err(self.error_here(format!(
                        "expected `:` after the key \"{key}\", found {}",
                        self.describe_here()
                    )));
                }
            }
            self.skip_ws()?;
            let value = self.value(depth)?;
            self.note_duplicate(&members, &mut seen, &key, key_offset);
            members.push(Member {
                key,
                key_offset,
                value,
            });
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b',') => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.skip_ws()?;
                    if self.bytes.get(self.pos) == Some(&b'}') {
                        return Err(
                            self.error(comma, "trailing comma before `}` is not allowed in JSON")
                        );
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(JsonValue::Object(members));
                }
                None => return Err(self.eof("inside an object (missing `}`)")),
                Some(_) => {
                    return Err(self.error_here(format!(
                        "expected `,` or `}}` after an object member, found {}",
                        self.describe_here()
                    )));
                }
            }
        }
    }

    /// Small objects are scanned linearly; a hash map kicks in for large ones so 10,000 keys
    /// stay linear.
    fn note_duplicate(
        &mut self,
        members: &[Member],
        seen: &mut Option<std::collections::HashMap<String, usize>>,
        key: &str,
        offset: usize,
    ) {
        const LINEAR: usize = 16;
        let first = if members.len() < LINEAR {
            members.iter().find(|m| m.key == key).map(|m| m.key_offset)
        } else {
            let map = seen.get_or_insert_with(|| {
                let mut map = std::collections::HashMap::new();
                for m in members {
                    map.entry(m.key.clone()).or_insert(m.key_offset);
                }
                map
            });
            match map.get(key) {
                Some(first) => Some(*first),
                None => {
                    map.insert(key.to_string(), offset);
                    None
                }
            }
        };
        if let Some(first_offset) = first {
            self.duplicates.push(DuplicateKey {
                key: key.to_string(),
                first_offset,
                offset,
            });
        }
    }

    fn array(&mut self, depth: usize) -> Result<JsonValue, SyntaxError> {
        let depth = self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws()?;
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(JsonValue::Array(items));
        }
        loop {
            self.skip_ws()?;
            items.push(self.value(depth)?);
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b',') => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.skip_ws()?;
                    if self.bytes.get(self.pos) == Some(&b']') {
                        return Err(
                            self.error(comma, "trailing comma before `]` is not allowed in JSON")
                        );
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(JsonValue::Array(items));
                }
                None => return Err(self.eof("inside an array (missing `]`)")),
                Some(_) => {
                    return Err(self.error_here(format!(
                        "expected `,` or `]` after an array element, found {}",
                        self.describe_here()
                    )));
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            while let Some(&b) = self.bytes.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[run_start..self.pos]);
            match self.bytes.get(self.pos) {
                None => {
                    return Err(self.error(start, "unterminated string (the JSON is truncated)"));
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(_) => {
                    return Err(self.error_here(
                        "control character in a string (write newlines and tabs as \\n, \\t)",
                    ));
                }
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), SyntaxError> {
        let at = self.pos;
        self.pos += 1;
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.eof("inside a string"));
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4(at)?;
                if (0xD800..0xDC00).contains(&hi) && self.bytes[self.pos..].starts_with(b"\\u") {
                    let save = self.pos;
                    self.pos += 2;
                    let lo = self.hex4(at)?;
                    if (0xDC00..0xE000).contains(&lo) {
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        char::from_u32(cp).unwrap_or('\u{FFFD}')
                    } else {
                        self.pos = save;
                        '\u{FFFD}'
                    }
                } else {
                    // Lone surrogates are legal in JSON.parse but cannot live in a Rust string.
                    char::from_u32(hi).unwrap_or('\u{FFFD}')
                }
            }
            _ => {
                return Err(self.error(at, "invalid escape sequence in a string"));
            }
        };
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self, at: usize) -> Result<u32, SyntaxError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        match digits.and_then(|d| u32::from_str_radix(d, 16).ok()) {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error(at, "invalid \\u escape (needs four hex digits)")),
        }
    }

    fn number(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while p.bytes.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 {
            return Err(self.error(start, "invalid number"));
        }
        if n > 1 && self.bytes[int_start] == b'0' {
            return Err(self.error(start, "invalid number (leading zeros are not allowed)"));
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error(start, "invalid number (digits expected after `.`)"));
            }
        }
        if matches!(self.bytes.get(self.pos), Some(b'e') | Some(b'E')) {
            self.pos += 1;
            if matches!(self.bytes.get(self.pos), Some(b'+') | Some(b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error(start, "invalid number (digits expected in the exponent)"));
            }
        }
        Ok(self.text[start..self.pos].to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, String) {
        let e = parse(text).expect_err("should fail");
        (e.offset, e.message)
    }

    #[test]
    fn values_and_offsets() {
        let doc = parse(r#"{"a": [1, -2.5e3, true, null], "b": "x\u00e9\ud83d\ude00"}"#).unwrap();
        let members = doc.root.value.as_object().unwrap();
        assert_eq!(members[0].key_offset, 1);
        assert_eq!(members[0].value.offset, 6);
        assert_eq!(members[1].value.value.as_str(), Some("xé😀"));
        assert_eq!(
            doc.root.value.to_serde(),
            serde_json::json!({"a": [1, -2.5e3, true, null], "b": "xé😀"})
        );
    }

    #[test]
    fn mistakes_have_their_own_messages() {
        assert_eq!(err("{\"a\": 1,}").0, 7);
        assert!(err("{\"a\": 1,}").1.contains("trailing comma"));
        assert!(err("[1,]").1.contains("trailing comma"));
        assert!(err("{ // x\n}").1.contains("comments"));
        assert!(err("{\"a\": /* x */ 1}").1.contains("comments"));
        assert!(err("{'a': 1}").1.contains("double quotes"));
        assert!(err("{\"a\": 1").1.contains("truncated"));
        assert!(err("{\"a\": \"x").1.contains("truncated"));
        assert!(err("{\"a\": 01}").1.contains("leading zeros"));
        assert!(err("{} x").1.contains("after the end"));
        assert!(err("").1.contains("truncated"));
        assert!(err("{\"a\": tru}").1.contains("expected a JSON value"));
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "[".repeat(100_000);
        assert!(err(&deep).1.contains("deeper than 256"));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn duplicates_are_reported_and_last_wins() {
        let doc = parse(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(doc.duplicates.len(), 1);
        let m = doc.root.value.as_object().unwrap();
        assert_eq!(get(m, "a").unwrap().value.value.as_f64(), Some(2.0));
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\": 1", i % 30)).collect();
        let doc = parse(&format!("{{{}}}", many.join(","))).unwrap();
        assert_eq!(doc.duplicates.len(), 10);
    }

    #[test]
    fn line_col_counts_chars() {
        let text = "{\n  \"é\": x";
        let idx = LineIndex::new(text);
        let off = text.find('x').unwrap();
        assert_eq!(idx.line_col(text, off), (2, 8));
        assert_eq!(idx.line_col(text, 0), (1, 1));
    }
}
