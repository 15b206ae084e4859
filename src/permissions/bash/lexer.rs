//! Lexing: words, quotes, `$…` expansions, backticks, redirections and heredocs, read into
//! [`Word`]s and [`Token`]s; every construct the parser cannot see through is flagged.

use super::*;

impl Parser {
    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    /// Parses commands until `term` (consumed) or the end of input.
    pub(super) fn parse_list(&mut self, term: Option<char>) {
        if self.nest >= MAX_NEST {
            self.flag(Unchecked::Syntax("brackets nested too deeply"));
            self.pos = self.chars.len();
            return;
        }
        self.nest += 1;
        self.parse_list_inner(term);
        self.nest -= 1;
    }

    pub(super) fn parse_list_inner(&mut self, term: Option<char>) {
        let mut tokens: Vec<Token> = Vec::new();
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\r')) {
                self.pos += 1;
            }
            let Some(c) = self.peek() else {
                self.finish(&mut tokens);
                if term.is_some() {
                    self.flag(Unchecked::Unbalanced);
                }
                return;
            };
            if Some(c) == term {
                self.pos += 1;
                self.finish(&mut tokens);
                return;
            }
            match c {
                '\n' => {
                    self.pos += 1;
                    self.finish(&mut tokens);
                    self.read_heredoc_bodies();
                }
                ';' | '|' => {
                    self.pos += 1;
                    self.finish(&mut tokens);
                }
                '&' => {
                    if self.peek_at(1) == Some('>') {
                        self.read_redirect(&mut tokens, term);
                    } else {
                        self.pos += 1;
                        self.finish(&mut tokens);
                    }
                }
                '#' => {
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.pos += 1;
                    }
                }
                '(' => {
                    let array =
                        matches!(tokens.last(), Some(Token::Word(w)) if w.raw.ends_with('='));
                    if array {
                        // `a=(x y)`: the elements run nothing unless they hold substitutions,
                        // which the list below reads; allow rules still do not vouch for it.
                        self.flag(Unchecked::Variable);
                    } else if !tokens.is_empty() {
                        self.flag(Unchecked::HiddenCommand("a function defined on the line"));
                    }
                    self.pos += 1;
                    self.finish(&mut tokens);
                    self.parse_list(Some(')'));
                }
                ')' => {
                    self.flag(Unchecked::Syntax("an unmatched `)`"));
                    self.pos += 1;
                    self.finish(&mut tokens);
                }
                '<' | '>' => self.read_redirect(&mut tokens, term),
                _ => {
                    let before = self.pos;
                    let word = self.read_word(term);
                    let fd_prefix = !word.raw.is_empty()
                        && word.raw.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'));
                    if fd_prefix {
                        self.read_redirect(&mut tokens, term);
                    } else if !word.raw.is_empty() {
                        tokens.push(Token::Word(word));
                    } else if self.pos == before {
                        // A character read_word refuses: skip it so the loop always advances.
                        self.pos += 1;
                    }
                }
            }
        }
    }

    /// Reads one redirection starting at `<`, `>` or `&>`.
    pub(super) fn read_redirect(&mut self, tokens: &mut Vec<Token>, term: Option<char>) {
        let mut op = String::new();
        while let Some(c @ ('<' | '>' | '&' | '|' | '-')) = self.peek() {
            // `-` only belongs to `<<-`; `|` only to `>|`; `&` to `>&`, `&>`.
            if (c == '-' && op != "<<") || (c == '|' && op != ">") {
                break;
            }
            if c == '&' && !(op.is_empty() || op.ends_with('>') || op.ends_with('<')) {
                break;
            }
            op.push(c);
            self.pos += 1;
            if op.len() >= 3 {
                break;
            }
        }
        if (op == "<" || op == ">") && self.peek() == Some('(') {
            // Process substitution: a command whose output is a file name.
            self.pos += 1;
            self.parse_list(Some(')'));
            return;
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let target = self.read_word(term);
        if target.raw.is_empty() {
            self.flag(Unchecked::Syntax("a redirection without a target"));
            return;
        }
        match op.as_str() {
            "<<" | "<<-" => self.heredocs.push(PendingHeredoc {
                delimiter: target.text.clone(),
                strip_tabs: op == "<<-",
                quoted: target.raw != target.text,
            }),
            "<" | "<&" if !target.expanded && !target.text.chars().all(|c| c.is_ascii_digit()) => {
                tokens.push(Token::Read(target));
            }
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" | ">&" => {
                if op == "<>" && !target.expanded {
                    tokens.push(Token::Read(target.clone()));
                }
                let dup = op == ">&"
                    && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()));
                let harmless = matches!(
                    target.text.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
                );
                if target.expanded {
                    self.flag(Unchecked::Variable);
                } else if !dup && !harmless {
                    tokens.push(Token::Write(target));
                }
            }
            _ => {}
        }
    }

    /// Reads one word; stops at whitespace, an operator or `term`.
    pub(super) fn read_word(&mut self, term: Option<char>) -> Word {
        let mut w = Word::default();
        // Unquoted `*?[{` (offsets in `w.text`): whether they glob is decided at the end.
        let mut specials: Vec<(usize, char)> = Vec::new();
        while let Some(c) = self.peek() {
            if Some(c) == term {
                break;
            }
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(n) => {
                        w.raw.push('\\');
                        w.raw.push(n);
                        w.text.push(n);
                        self.pos += 2;
                    }
                    None => {
                        w.raw.push('\\');
                        w.text.push('\\');
                        self.pos += 1;
                    }
                },
                '\'' => {
                    let start = self.pos;
                    self.pos += 1;
                    while !matches!(self.peek(), None | Some('\'')) {
                        self.pos += 1;
                    }
                    if self.peek().is_none() {
                        self.flag(Unchecked::Unbalanced);
                        w.raw.extend(&self.chars[start..self.pos]);
                        w.text.extend(&self.chars[start + 1..self.pos]);
                        break;
                    }
                    self.pos += 1;
                    w.raw.extend(&self.chars[start..self.pos]);
                    w.text.extend(&self.chars[start + 1..self.pos - 1]);
                }
                '"' => self.read_double_quoted(&mut w),
                '`' => self.read_backticks(&mut w),
                '$' => self.read_dollar(&mut w),
                _ => {
                    if matches!(c, '*' | '?' | '[' | '{') {
                        specials.push((w.text.len(), c));
                    }
                    w.raw.push(c);
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        w.glob_at = specials.into_iter().find_map(|(at, c)| {
            let rest = &w.text[at..];
            let globs = match c {
                '[' => rest[1..].contains(']'),
                '{' => rest.contains('}') && (rest.contains(',') || rest.contains("..")),
                _ => true,
            };
            globs.then_some(at)
        });
        w
    }

    pub(super) fn read_double_quoted(&mut self, w: &mut Word) {
        w.raw.push('"');
        self.pos += 1;
        loop {
            match self.peek() {
                None => {
                    self.flag(Unchecked::Unbalanced);
                    return;
                }
                Some('"') => {
                    w.raw.push('"');
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    let next = self.peek_at(1);
                    w.raw.push('\\');
                    match next {
                        Some(n @ ('$' | '`' | '"' | '\\')) => {
                            w.raw.push(n);
                            w.text.push(n);
                            self.pos += 2;
                        }
                        Some('\n') => self.pos += 2,
                        _ => {
                            w.text.push('\\');
                            self.pos += 1;
                        }
                    }
                }
                Some('`') => self.read_backticks(w),
                Some('$') => self.read_dollar(w),
                Some(c) => {
                    w.raw.push(c);
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    pub(super) fn read_backticks(&mut self, w: &mut Word) {
        let start = self.pos;
        self.pos += 1;
        self.parse_list(Some('`'));
        let seg: String = self.chars[start..self.pos].iter().collect();
        w.mark_expansion();
        w.raw.push_str(&seg);
        w.text.push_str(&seg);
    }

    /// `$…` at `self.pos`: substitution, arithmetic, parameter, ANSI-C quote or a plain `$`.
    pub(super) fn read_dollar(&mut self, w: &mut Word) {
        let start = self.pos;
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                // Arithmetic: no command runs unless it nests a substitution.
                self.pos += 3;
                let mut depth = 2usize;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        '$' | '`' => {
                            self.flag(Unchecked::Syntax("a substitution inside arithmetic"))
                        }
                        _ => {}
                    }
                }
                if depth != 0 {
                    self.flag(Unchecked::Unbalanced);
                }
                w.mark_expansion();
            }
            Some('(') => {
                self.pos += 2;
                self.parse_list(Some(')'));
                w.mark_expansion();
            }
            Some('{') => {
                self.pos += 2;
                let mut depth = 1usize;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        '$' | '`' => self.flag(Unchecked::Variable),
                        _ => {}
                    }
                }
                if depth != 0 {
                    self.flag(Unchecked::Unbalanced);
                }
                w.mark_expansion();
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                w.mark_expansion();
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                w.mark_expansion();
            }
            Some('\'') => {
                // ANSI-C quoting `$'…'`: literal text for our purposes.
                self.pos += 2;
                let body_start = self.pos;
                while let Some(c) = self.peek() {
                    if c == '\\' {
                        self.pos += 2;
                        continue;
                    }
                    if c == '\'' {
                        break;
                    }
                    self.pos += 1;
                }
                let end = self.pos.min(self.chars.len());
                if self.peek().is_none() {
                    self.flag(Unchecked::Unbalanced);
                }
                let body: String = self.chars[body_start..end].iter().collect();
                w.text.push_str(&decode_ansi_c(&body));
                self.pos = (self.pos + 1).min(self.chars.len());
                let seg: String = self.chars[start..self.pos].iter().collect();
                w.raw.push_str(&seg);
                return;
            }
            _ => {
                self.pos += 1;
            }
        }
        let end = self.pos.min(self.chars.len());
        let seg: String = self.chars[start..end].iter().collect();
        w.raw.push_str(&seg);
        w.text.push_str(&seg);
    }

    /// After a newline: the bodies of the here-documents opened on the line just ended.
    pub(super) fn read_heredoc_bodies(&mut self) {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut closed = false;
            while self.pos < self.chars.len() {
                let line_start = self.pos;
                while !matches!(self.peek(), None | Some('\n')) {
                    self.pos += 1;
                }
                let line: String = self.chars[line_start..self.pos].iter().collect();
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == doc.delimiter {
                    closed = true;
                    break;
                }
                if !doc.quoted && (line.contains("$(") || line.contains('`')) {
                    self.flag(Unchecked::Heredoc);
                }
            }
            if !closed {
                self.flag(Unchecked::Heredoc);
            }
        }
    }

    pub(super) fn finish_heredocs_at_eof(&mut self) {
        if !self.heredocs.is_empty() {
            self.heredocs.clear();
            self.flag(Unchecked::Heredoc);
        }
    }
}

/// The value of an ANSI-C quoted string `$'…'` (bash's escapes), so `$'\x72m'` reads as `rm`.
pub(super) fn decode_ansi_c(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    let take_digits =
        |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
            let mut v = 0u32;
            let mut n = 0;
            while n < max {
                match chars.peek().and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v.saturating_mul(radix).saturating_add(d);
                        chars.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' => {
                let (v, n) = take_digits(&mut chars, 16, 2);
                if n == 0 {
                    out.push_str("\\x");
                } else if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            'u' | 'U' => {
                let (v, n) = take_digits(&mut chars, 16, if e == 'u' { 4 } else { 8 });
                match char::from_u32(v).filter(|_| n > 0) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            'c' => {
                if let Some(ch) = chars.next() {
                    out.push(char::from_u32(ch as u32 & 0x1f).unwrap_or(ch));
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let (rest, n) = take_digits(&mut chars, 8, 2);
                if n > 0 {
                    v = v * 8u32.pow(n as u32) + rest;
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}
