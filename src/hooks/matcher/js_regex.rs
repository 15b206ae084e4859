//! Translation of a JavaScript `RegExp` source (no flags, Annex B syntax, as `new RegExp(m)`
//! reads it) into the syntax of Rust's `regex` / `fancy-regex` crates.
//!
//! Why a translator and not the pattern as-is: the two dialects disagree in ways a hook author
//! can notice. JS rejects `(?i)`; JS `\d`, `\w`, `\b` are ASCII-only; JS `.` also refuses `\r`,
//! U+2028 and U+2029; JS treats unknown escapes (`\/`, `\A`, `\z`), a lone `{` and a `]` outside a
//! class as literals; `[` inside a class is a literal; `\1` with no such group is an octal
//! escape. Every literal is emitted escaped, so nothing in the output can be misread.

/// The Rust pattern for a JS source, and whether it needs a backtracking engine.
#[derive(Debug)]
pub(crate) struct Translated {
    pub pattern: String,
    /// Look-around or backreferences: only `fancy-regex` can run it.
    pub needs_backtracking: bool,
}

/// JS `\s` (WhiteSpace + LineTerminator), as the inside of a class.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const JS_DOT: &str = r"[^\n\r\x{2028}\x{2029}]";
/// Never matches (for `[]` and lone surrogates, which cannot occur in a Rust string).
const NOTHING: &str = r"[^\x00-\x{10FFFF}]";
/// Deeper group nesting is refused (fancy-regex has the same limit); keeps recursion small.
const MAX_NESTING: usize = 64;

/// Translates `src`; the error is a JS-style reason (`Nothing to repeat`, …).
pub(crate) fn translate(src: &str) -> Result<Translated, String> {
    let first = translate_for(src, false)?;
    if first.needs_backtracking {
        // fancy-regex cannot switch Unicode off, so word boundaries are spelled differently.
        translate_for(src, true)
    } else {
        Ok(first)
    }
}

/// ASCII word boundaries as look-arounds, for the backtracking engine.
const FANCY_WORD_BOUNDARY: &str =
    r"(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))";
const FANCY_NOT_WORD_BOUNDARY: &str =
    r"(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<![0-9A-Za-z_])(?![0-9A-Za-z_]))";

fn translate_for(src: &str, fancy: bool) -> Result<Translated, String> {
    let chars: Vec<char> = src.chars().collect();
    let names = prescan_groups(&chars);
    let mut t = Translator {
        chars,
        pos: 0,
        out: String::with_capacity(src.len() * 2),
        group_total: names.total,
        names: names.names,
        needs_backtracking: false,
        fancy,
    };
    t.disjunction(0)?;
    if t.pos < t.chars.len() {
        // Only a `)` can stop the top-level disjunction early.
        return Err("Unmatched ')'".to_string());
    }
    Ok(Translated {
        pattern: t.out,
        needs_backtracking: t.needs_backtracking,
    })
}

struct GroupNames {
    total: usize,
    /// Named groups and their 1-based capture index.
    names: Vec<(String, usize)>,
}

/// Counts capturing groups and collects names up front: JS decides whether `\2` is a
/// backreference or an octal escape by the total number of groups in the whole pattern.
fn prescan_groups(chars: &[char]) -> GroupNames {
    let mut total = 0;
    let mut names = Vec::new();
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => {
                if chars.get(i + 1) != Some(&'?') {
                    total += 1;
                } else if chars.get(i + 2) == Some(&'<')
                    && !matches!(chars.get(i + 3), Some('=') | Some('!'))
                {
                    total += 1;
                    let name: String = chars[i + 3..].iter().take_while(|c| **c != '>').collect();
                    names.push((name, total));
                }
            }
            _ => {}
        }
        i += 1;
    }
    GroupNames { total, names }
}

/// One class member before emission.
enum ClassAtom {
    Char(char),
    /// A Rust class (with brackets) such as `[0-9]`.
    Set(String),
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
    group_total: usize,
    names: Vec<(String, usize)>,
    needs_backtracking: bool,
    /// Emit for fancy-regex rather than regex.
    fancy: bool,
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn disjunction(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_NESTING {
            return Err("pattern nests groups too deeply".to_string());
        }
        self.alternative(depth)?;
        while self.peek() == Some('|') {
            self.pos += 1;
            self.out.push('|');
            self.alternative(depth)?;
        }
        Ok(())
    }

    fn alternative(&mut self, depth: usize) -> Result<(), String> {
        loop {
            match self.peek() {
                None | Some('|') | Some(')') => return Ok(()),
                Some(_) => self.term(depth)?,
            }
        }
    }

    fn term(&mut self, depth: usize) -> Result<(), String> {
        let Some(c) = self.peek() else {
            return Ok(());
        };
        let quantifiable = match c {
            '^' | '$' => {
                self.pos += 1;
                self.out.push(c);
                false
            }
            '\\' if matches!(self.peek_at(1), Some('b') | Some('B')) => {
                let neg = self.peek_at(1) == Some('B');
                self.pos += 2;
                // JS word boundaries are ASCII-only.
                self.out.push_str(match (neg, self.fancy) {
                    (false, false) => r"(?-u:\b)",
                    (true, false) => r"(?-u:\B)",
                    (false, true) => FANCY_WORD_BOUNDARY,
                    (true, true) => FANCY_NOT_WORD_BOUNDARY,
                });
                false
            }
            '(' => self.group(depth)?,
            '*' | '+' | '?' => return Err("Nothing to repeat".to_string()),
            '{' if self.braced_quantifier_len().is_some() => {
                return Err("Nothing to repeat".to_string());
            }
            '[' => {
                self.class()?;
                true
            }
            '.' => {
                self.pos += 1;
                self.out.push_str(JS_DOT);
                true
            }
            '\\' => {
                self.pos += 1;
                self.atom_escape()?;
                true
            }
            _ => {
                self.pos += 1;
                push_literal(&mut self.out, c);
                true
            }
        };
        if self.at_quantifier() {
            if !quantifiable {
                return Err("Nothing to repeat".to_string());
            }
            self.quantifier()?;
        }
        Ok(())
    }

    /// `(`…`)` in all its forms; returns whether a quantifier may follow.
    fn group(&mut self, depth: usize) -> Result<bool, String> {
        let quantifiable;
        if self.starts_with("(?=") || self.starts_with("(?!") {
            self.out.push_str(if self.starts_with("(?=") {
                "(?="
            } else {
                "(?!"
            });
            self.pos += 3;
            self.needs_backtracking = true;
            // Annex B allows quantified lookaheads.
            quantifiable = true;
        } else if self.starts_with("(?<=") || self.starts_with("(?<!") {
            self.out.push_str(if self.starts_with("(?<=") {
                "(?<="
            } else {
                "(?<!"
            });
            self.pos += 4;
            self.needs_backtracking = true;
            quantifiable = false;
        } else if self.starts_with("(?:") {
            self.out.push_str("(?:");
            self.pos += 3;
            quantifiable = true;
        } else if self.starts_with("(?<") {
            self.pos += 3;
            let start = self.pos;
            while let Some(c) = self.peek() {
                if c == '>' {
                    break;
                }
                if !(c.is_alphanumeric() || c == '_' || c == '$') {
                    return Err("Invalid capture group name".to_string());
                }
                self.pos += 1;
            }
            let name: String = self.chars[start..self.pos].iter().collect();
            if self.peek() != Some('>')
                || name.is_empty()
                || name.starts_with(|c: char| c.is_ascii_digit())
            {
                return Err("Invalid capture group name".to_string());
            }
            if self.names.iter().filter(|(n, _)| *n == name).count() > 1 {
                return Err("Duplicate capture group name".to_string());
            }
            self.pos += 1;
            // Names only matter for `\k<name>`, which is emitted by number, so the group
            // is emitted unnamed (JS allows names Rust does not).
            self.out.push('(');
            quantifiable = true;
        } else if self.starts_with("(?") {
            return Err("Invalid group".to_string());
        } else {
            self.pos += 1;
            self.out.push('(');
            quantifiable = true;
        }
        self.disjunction(depth + 1)?;
        if self.peek() != Some(')') {
            return Err("Unterminated group".to_string());
        }
        self.pos += 1;
        self.out.push(')');
        Ok(quantifiable)
    }

    fn at_quantifier(&self) -> bool {
        match self.peek() {
            Some('*') | Some('+') | Some('?') => true,
            Some('{') => self.braced_quantifier_len().is_some(),
            _ => false,
        }
    }

    /// Length of `{n}`, `{n,}` or `{n,m}` at the cursor, if that is what is there.
    fn braced_quantifier_len(&self) -> Option<usize> {
        let mut i = 1;
        let digits = |i: &mut usize| {
            let start = *i;
            while self.peek_at(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            *i > start
        };
        if !digits(&mut i) {
            return None;
        }
        if self.peek_at(i) == Some(',') {
            i += 1;
            digits(&mut i);
        }
        (self.peek_at(i) == Some('}')).then_some(i + 1)
    }

    fn quantifier(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                self.out.push(c);
            }
            Some('{') => {
                let Some(len) = self.braced_quantifier_len() else {
                    return Ok(());
                };
                let body: String = self.chars[self.pos + 1..self.pos + len - 1]
                    .iter()
                    .collect();
                self.pos += len;
                let (lo, hi) = match body.split_once(',') {
                    Some((lo, hi)) => (lo, Some(hi)),
                    None => (body.as_str(), None),
                };
                let parse = |s: &str| {
                    s.parse::<u32>()
                        .map_err(|_| "repetition count is too large".to_string())
                };
                let lo = parse(lo)?;
                match hi {
                    None => self.out.push_str(&format!("{{{lo}}}")),
                    Some("") => self.out.push_str(&format!("{{{lo},}}")),
                    Some(hi) => {
                        let hi = parse(hi)?;
                        if hi < lo {
                            return Err("numbers out of order in {} quantifier".to_string());
                        }
                        self.out.push_str(&format!("{{{lo},{hi}}}"));
                    }
                }
            }
            _ => return Ok(()),
        }
        if self.peek() == Some('?') {
            self.pos += 1;
            self.out.push('?');
        }
        Ok(())
    }

    /// After a `\` outside a class.
    fn atom_escape(&mut self) -> Result<(), String> {
        let Some(c) = self.peek() else {
            return Err("\\ at end of pattern".to_string());
        };
        match c {
            '1'..='9' => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let digits: String = self.chars[start..self.pos].iter().collect();
                match digits.parse::<usize>() {
                    Ok(n) if n <= self.group_total => {
                        self.needs_backtracking = true;
                        self.out.push_str(&format!(r"(?:\{n})"));
                        return Ok(());
                    }
                    _ => self.pos = start,
                }
                let ch = self.legacy_octal_or_digit();
                push_literal(&mut self.out, ch);
            }
            'k' if !self.names.is_empty() => {
                self.pos += 1;
                if self.peek() != Some('<') {
                    return Err("Invalid named reference".to_string());
                }
                let start = self.pos + 1;
                let Some(len) = self.chars[start..].iter().position(|c| *c == '>') else {
                    return Err("Invalid named reference".to_string());
                };
                let name: String = self.chars[start..start + len].iter().collect();
                let Some(index) = self.names.iter().find(|(n, _)| *n == name).map(|(_, i)| *i)
                else {
                    return Err("Invalid named capture referenced".to_string());
                };
                self.pos = start + len + 1;
                self.needs_backtracking = true;
                self.out.push_str(&format!(r"(?:\{index})"));
            }
            _ => match self.common_escape(false)? {
                ClassAtom::Char(ch) => push_literal(&mut self.out, ch),
                ClassAtom::Set(set) => self.out.push_str(&set),
            },
        }
        Ok(())
    }

    /// Annex B: `\1`…`\7` without such a group start an octal escape; `\8`, `\9` are the digit.
    fn legacy_octal_or_digit(&mut self) -> char {
        let Some(first) = self.peek() else {
            return '\\';
        };
        self.pos += 1;
        let Some(mut value) = first.to_digit(8) else {
            return first;
        };
        let max_more = if value <= 3 { 2 } else { 1 };
        for _ in 0..max_more {
            match self.peek().and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    value = value * 8 + d;
                    self.pos += 1;
                }
                None => break,
            }
        }
        char::from_u32(value).unwrap_or('\u{FFFD}')
    }

    /// Escapes shared by atoms and classes; the cursor is after the `\`.
    fn common_escape(&mut self, in_class: bool) -> Result<ClassAtom, String> {
        let Some(c) = self.peek() else {
            return Err("\\ at end of pattern".to_string());
        };
        self.pos += 1;
        let atom = match c {
            'd' => ClassAtom::Set("[0-9]".to_string()),
            'D' => ClassAtom::Set("[^0-9]".to_string()),
            'w' => ClassAtom::Set("[0-9A-Za-z_]".to_string()),
            'W' => ClassAtom::Set("[^0-9A-Za-z_]".to_string()),
            's' => ClassAtom::Set(format!("[{JS_SPACE}]")),
            'S' => ClassAtom::Set(format!("[^{JS_SPACE}]")),
            'f' => ClassAtom::Char('\x0C'),
            'n' => ClassAtom::Char('\n'),
            'r' => ClassAtom::Char('\r'),
            't' => ClassAtom::Char('\t'),
            'v' => ClassAtom::Char('\x0B'),
            'b' if in_class => ClassAtom::Char('\x08'),
            'c' => {
                let letter = self.peek().filter(|l| {
                    l.is_ascii_alphabetic() || (in_class && (l.is_ascii_digit() || *l == '_'))
                });
                match letter {
                    Some(l) => {
                        self.pos += 1;
                        ClassAtom::Char(char::from((l as u8) % 32))
                    }
                    None => {
                        // `\c` without a control letter is a literal backslash; the `c` is
                        // read again as itself.
                        self.pos -= 1;
                        ClassAtom::Char('\\')
                    }
                }
            }
            '0'..='9' => {
                self.pos -= 1;
                if c == '0' && !self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) {
                    self.pos += 1;
                    ClassAtom::Char('\0')
                } else {
                    ClassAtom::Char(self.legacy_octal_or_digit())
                }
            }
            'x' => match self.hex(2) {
                Some(v) => ClassAtom::Char(char::from_u32(v).unwrap_or('\u{FFFD}')),
                None => ClassAtom::Char('x'),
            },
            'u' => match self.hex(4) {
                Some(hi) if (0xD800..0xDC00).contains(&hi) => {
                    let save = self.pos;
                    let lo = if self.starts_with("\\u") {
                        self.pos += 2;
                        self.hex(4).filter(|lo| (0xDC00..0xE000).contains(lo))
                    } else {
                        None
                    };
                    match lo {
                        Some(lo) => {
                            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            ClassAtom::Char(char::from_u32(cp).unwrap_or('\u{FFFD}'))
                        }
                        None => {
                            self.pos = save;
                            ClassAtom::Set(NOTHING.to_string())
                        }
                    }
                }
                Some(v) => match char::from_u32(v) {
                    Some(ch) => ClassAtom::Char(ch),
                    None => ClassAtom::Set(NOTHING.to_string()),
                },
                None => ClassAtom::Char('u'),
            },
            other => ClassAtom::Char(other),
        };
        Ok(atom)
    }

    /// Exactly `n` hex digits at the cursor (consumed), else nothing consumed.
    fn hex(&mut self, n: usize) -> Option<u32> {
        let digits: String = (0..n).filter_map(|i| self.peek_at(i)).collect();
        if digits.chars().count() != n || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += n;
        u32::from_str_radix(&digits, 16).ok()
    }

    fn class(&mut self) -> Result<(), String> {
        self.pos += 1;
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut body = String::new();
        let mut empty = true;
        loop {
            let Some(c) = self.peek() else {
                return Err("Unterminated character class".to_string());
            };
            if c == ']' {
                self.pos += 1;
                break;
            }
            empty = false;
            let first = self.class_atom()?;
            let is_range = self.peek() == Some('-') && !matches!(self.peek_at(1), Some(']') | None);
            if !is_range {
                push_class_atom(&mut body, &first);
                continue;
            }
            self.pos += 1;
            let second = self.class_atom()?;
            match (&first, &second) {
                (ClassAtom::Char(a), ClassAtom::Char(b)) => {
                    if a > b {
                        return Err("Range out of order in character class".to_string());
                    }
                    push_class_char(&mut body, *a);
                    body.push('-');
                    push_class_char(&mut body, *b);
                }
                // Annex B: a range with a class escape at either end is three atoms.
                _ => {
                    push_class_atom(&mut body, &first);
                    push_class_char(&mut body, '-');
                    push_class_atom(&mut body, &second);
                }
            }
        }
        match (empty, negated) {
            (true, false) => self.out.push_str(NOTHING),
            (true, true) => self.out.push_str(r"[\x00-\x{10FFFF}]"),
            (false, neg) => {
                self.out.push('[');
                if neg {
                    self.out.push('^');
                }
                self.out.push_str(&body);
                self.out.push(']');
            }
        }
        Ok(())
    }

    fn class_atom(&mut self) -> Result<ClassAtom, String> {
        match self.peek() {
            Some('\\') => {
                self.pos += 1;
                self.common_escape(true)
            }
            Some(c) => {
                self.pos += 1;
                Ok(ClassAtom::Char(c))
            }
            None => Err("Unterminated character class".to_string()),
        }
    }
}

fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
        out.push(c);
    } else {
        out.push_str(&format!(r"\x{{{:X}}}", c as u32));
    }
}

fn push_class_char(out: &mut String, c: char) {
    push_literal(out, c);
}

fn push_class_atom(out: &mut String, atom: &ClassAtom) {
    match atom {
        ClassAtom::Char(c) => push_class_char(out, *c),
        ClassAtom::Set(set) => out.push_str(set),
    }
}
