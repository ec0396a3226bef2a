//! Java regular expressions (`java.util.regex.Pattern`) translated to the `regex` crate's syntax,
//! matched as `Matcher.matches()` does: against the whole text.
//!
//! Translated so that they match what Java matches:
//! - `.` excludes Java's line terminators (`\n`, `\r`, U+0085, U+2028, U+2029) unless DOTALL
//!   (`(?s)`) is on, or only `\n` with UNIX_LINES (`(?d)`);
//! - `\d`, `\w`, `\s` and the POSIX classes (`\p{Alpha}`, `\p{Punct}`, ...) are ASCII-only, as in
//!   Java without UNICODE_CHARACTER_CLASS;
//! - CASE_INSENSITIVE (`(?i)`) folds ASCII letters only unless UNICODE_CASE (`(?u)`) is on too;
//!   flags are scoped to their group as in Java;
//! - `\Q...\E` quotes, `[...]` classes nest (union) and intersect (`&&`) as in Java; `[:` is not
//!   a POSIX class; `(?<name>...)` groups are named.
//!
//! Java features the `regex` crate lacks are refused ([`RegexError::Unsupported`]) rather than
//! matched differently: backreferences, lookahead and lookbehind, atomic groups, possessive
//! quantifiers, `\G`, `\R`, `\X`, `\h`, `\v`, `\Z`, Unicode blocks (`\p{InGreek}`), `java*`
//! properties, and the COMMENTS, CANON_EQ and UNICODE_CHARACTER_CLASS flags.
//!
//! Known approximations: with case folding the crate also folds a few non-ASCII letters into
//! ASCII ones (the Kelvin sign into `k`, the long s into `s`), and does so inside classes that
//! hold non-ASCII characters even without UNICODE_CASE; `\b` uses Unicode word characters;
//! MULTILINE `^` and `$` see only `\n` as a line end.
//!
//! Invariant: the translation is linear in the pattern's length and never panics; patterns
//! nest at most [`MAX_GROUPS`] groups deep and compile within [`SIZE_LIMIT`] bytes.

use regex::{Regex, RegexBuilder};

/// The deepest nesting of groups and classes a pattern may have.
pub const MAX_GROUPS: usize = 64;

/// The most memory a compiled pattern may use.
pub const SIZE_LIMIT: usize = 4 << 20;

/// Why a Java pattern cannot be matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegexError {
    /// Java would refuse it too (`PatternSyntaxException`).
    Syntax(String),
    /// Java accepts it but the `regex` crate cannot match it.
    Unsupported(String),
}

/// Java's flags that change how the pattern is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub case_insensitive: bool,
    pub unicode_case: bool,
    pub dotall: bool,
    pub unix_lines: bool,
    pub multiline: bool,
}

/// Compiles Java `pattern` with `flags` into a regex that matches only whole texts.
pub fn compile(pattern: &str, flags: Flags) -> Result<Regex, RegexError> {
    let translated = translate(pattern, flags)?;
    RegexBuilder::new(&format!(r"\A(?:{translated})\z"))
        .size_limit(SIZE_LIMIT)
        .nest_limit(MAX_GROUPS as u32 * 2)
        .build()
        .map_err(|error| match error {
            regex::Error::CompiledTooBig(_) => RegexError::Unsupported(format!("pattern too large: {pattern}")),
            error => RegexError::Syntax(format!("{error}")),
        })
}

/// The pattern in the `regex` crate's syntax (without the whole-text anchors).
pub fn translate(pattern: &str, flags: Flags) -> Result<String, RegexError> {
    let mut translator =
        Translator { chars: pattern.chars().collect(), at: 0, output: String::new(), flags: vec![flags] };
    translator.sequence()?;
    Ok(translator.output)
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    output: String,
    /// The flags in force, innermost group last (never empty).
    flags: Vec<Flags>,
}

fn unsupported(what: &str) -> RegexError {
    RegexError::Unsupported(format!("Java regex feature not supported by ferrogrid: {what}"))
}

fn syntax(what: &str, at: usize) -> RegexError {
    RegexError::Syntax(format!("{what} near index {at}"))
}

const ASCII_DIGIT: &str = "0-9";
const ASCII_WORD: &str = "a-zA-Z_0-9";
const JAVA_SPACE: &str = r"\t\n\x0B\x0C\r ";

impl Translator {
    fn flags(&self) -> Flags {
        self.flags.last().copied().unwrap_or_default()
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn sequence(&mut self) -> Result<(), RegexError> {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\\' => self.escape()?,
                '.' => self.dot(),
                '(' => self.open_group()?,
                ')' => self.close_group()?,
                '[' => {
                    let class = self.class(1)?;
                    self.emit_cased(&class, class.is_ascii());
                }
                '*' | '+' | '?' => self.quantifier(c.to_string())?,
                '{' => self.counted()?,
                '^' | '$' | '|' => self.output.push(c),
                c => self.literal(c),
            }
        }
        if self.flags.len() > 1 {
            return Err(syntax("Unclosed group", self.chars.len()));
        }
        Ok(())
    }

    /// Text that matches case-insensitively when the flags say so (`ascii`: it holds only ASCII
    /// characters, which Java folds without UNICODE_CASE).
    fn emit_cased(&mut self, text: &str, ascii: bool) {
        let flags = self.flags();
        if flags.case_insensitive && (ascii || flags.unicode_case) {
            self.output.push_str(&format!("(?i:{text})"));
        } else {
            self.output.push_str(&format!("(?:{text})"));
        }
    }

    fn literal(&mut self, c: char) {
        let escaped = regex::escape(c.encode_utf8(&mut [0; 4]));
        self.emit_cased(&escaped, c.is_ascii());
    }

    fn dot(&mut self) {
        let flags = self.flags();
        self.output.push_str(match (flags.dotall, flags.unix_lines) {
            (true, _) => "(?s:.)",
            (false, true) => r"[^\n]",
            (false, false) => r"[^\n\r\x{85}\x{2028}\x{2029}]",
        });
    }

    /// `*`, `+`, `?` or `{...}` just read, then Java's lazy (`?`) or possessive (`+`) suffix.
    fn quantifier(&mut self, quantifier: String) -> Result<(), RegexError> {
        self.output.push_str(&quantifier);
        match self.peek(0) {
            Some('?') => {
                self.at += 1;
                self.output.push('?');
            }
            Some('+') => return Err(unsupported("possessive quantifiers")),
            _ => {}
        }
        Ok(())
    }

    /// `{n}`, `{n,}` or `{n,m}`; Java refuses anything else after `{`.
    fn counted(&mut self) -> Result<(), RegexError> {
        let start = self.at;
        let mut text = String::from("{");
        while let Some(c) = self.peek(0) {
            self.at += 1;
            text.push(c);
            if c == '}' {
                let inside = &text[1..text.len() - 1];
                let valid = !inside.is_empty()
                    && inside.split(',').count() <= 2
                    && inside.split(',').next().is_some_and(|first| !first.is_empty())
                    && inside.chars().all(|c| c.is_ascii_digit() || c == ',');
                if !valid {
                    return Err(syntax("Illegal repetition", start));
                }
                return self.quantifier(text);
            }
        }
        Err(syntax("Unclosed counted closure", start))
    }

    fn open_group(&mut self) -> Result<(), RegexError> {
        if self.flags.len() > MAX_GROUPS {
            return Err(unsupported("groups nested too deeply"));
        }
        let inherited = self.flags();
        if self.peek(0) != Some('?') {
            self.flags.push(inherited);
            self.output.push('(');
            return Ok(());
        }
        self.at += 1;
        match (self.peek(0), self.peek(1)) {
            (Some(':'), _) => {
                self.at += 1;
                self.flags.push(inherited);
                self.output.push_str("(?:");
                Ok(())
            }
            (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => Err(unsupported("lookahead and lookbehind")),
            (Some('>'), _) => Err(unsupported("atomic groups")),
            (Some('<'), _) => self.named_group(inherited),
            _ => self.inline_flags(inherited),
        }
    }

    fn named_group(&mut self, inherited: Flags) -> Result<(), RegexError> {
        self.at += 1;
        let start = self.at;
        while self.peek(0).is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.at += 1;
        }
        if self.peek(0) != Some('>') || self.at == start || !self.chars[start].is_ascii_alphabetic() {
            return Err(syntax("named capturing group is missing trailing '>'", self.at));
        }
        let name: String = self.chars[start..self.at].iter().collect();
        self.at += 1;
        self.flags.push(inherited);
        self.output.push_str(&format!("(?P<{name}>"));
        Ok(())
    }

    /// `(?idmsux-idmsux)` (changing the enclosing group's flags) or `(?flags:...)`.
    fn inline_flags(&mut self, inherited: Flags) -> Result<(), RegexError> {
        let mut flags = inherited;
        let mut on = true;
        loop {
            let c = self.peek(0).ok_or_else(|| syntax("Unknown inline modifier", self.at))?;
            self.at += 1;
            match c {
                '-' if on => on = false,
                'i' => flags.case_insensitive = on,
                'u' => flags.unicode_case = on,
                's' => flags.dotall = on,
                'd' => flags.unix_lines = on,
                'm' => flags.multiline = on,
                'x' => return Err(unsupported("the COMMENTS flag")),
                'U' | 'c' => return Err(unsupported("the UNICODE_CHARACTER_CLASS and CANON_EQ flags")),
                ')' => {
                    if let Some(current) = self.flags.last_mut() {
                        *current = flags;
                    }
                    self.output.push_str(if flags.multiline { "(?m)" } else { "(?-m)" });
                    return Ok(());
                }
                ':' => {
                    self.flags.push(flags);
                    self.output.push_str(if flags.multiline { "(?m:" } else { "(?-m:" });
                    return Ok(());
                }
                _ => return Err(syntax("Unknown inline modifier", self.at - 1)),
            }
        }
    }

    fn close_group(&mut self) -> Result<(), RegexError> {
        if self.flags.len() <= 1 {
            return Err(syntax("Unmatched closing ')'", self.at - 1));
        }
        self.flags.pop();
        self.output.push(')');
        Ok(())
    }

    /// An escape outside a class (the backslash just read).
    fn escape(&mut self) -> Result<(), RegexError> {
        let c = self.peek(0).ok_or_else(|| syntax("Unexpected internal error", self.at))?;
        self.at += 1;
        match c {
            'Q' => {
                let quoted = self.quoted();
                for c in quoted.chars() {
                    self.literal(c);
                }
            }
            'A' | 'z' | 'b' | 'B' => self.output.push_str(&format!("\\{c}")),
            '1'..='9' | 'k' => return Err(unsupported("backreferences")),
            'G' | 'R' | 'X' | 'h' | 'H' | 'v' | 'V' | 'Z' | 'N' => return Err(unsupported(&format!("\\{c}"))),
            _ => {
                let item = self.escape_item(c)?;
                self.emit_cased(&item.text, item.ascii);
            }
        }
        Ok(())
    }

    /// The text of `\Q...\E` after `\Q` (to the end when there is no `\E`).
    fn quoted(&mut self) -> String {
        let mut quoted = String::new();
        while let Some(c) = self.peek(0) {
            if c == '\\' && self.peek(1) == Some('E') {
                self.at += 2;
                return quoted;
            }
            quoted.push(c);
            self.at += 1;
        }
        quoted
    }
}

/// An escape that stands for characters, in the crate's syntax, usable in and out of classes.
struct Item {
    text: String,
    ascii: bool,
}

fn item(text: String, ascii: bool) -> Item {
    Item { text, ascii }
}

impl Translator {
    /// `\c` (the backslash and `c` already read) as characters: a class escape, a property, a
    /// control or code-point escape, or an escaped punctuation character.
    fn escape_item(&mut self, c: char) -> Result<Item, RegexError> {
        let class = |set: &str, negated: bool| item(format!("[{}{set}]", if negated { "^" } else { "" }), true);
        Ok(match c {
            'd' | 'D' => class(ASCII_DIGIT, c == 'D'),
            'w' | 'W' => class(ASCII_WORD, c == 'W'),
            's' | 'S' => class(JAVA_SPACE, c == 'S'),
            'p' | 'P' => self.property(c == 'P')?,
            't' => item(r"\t".into(), true),
            'n' => item(r"\n".into(), true),
            'r' => item(r"\r".into(), true),
            'f' => item(r"\x0C".into(), true),
            'a' => item(r"\x07".into(), true),
            'e' => item(r"\x1B".into(), true),
            '0' => self.octal()?,
            'x' => self.hexadecimal()?,
            'u' => self.unicode()?,
            'c' => {
                let control = self.peek(0).ok_or_else(|| syntax("Illegal control escape sequence", self.at))?;
                self.at += 1;
                item(format!(r"\x{{{:X}}}", u32::from(control) ^ 64), true)
            }
            c if c.is_ascii_alphabetic() => return Err(syntax("Illegal/unsupported escape sequence", self.at - 1)),
            c => item(regex::escape(c.encode_utf8(&mut [0; 4])), c.is_ascii()),
        })
    }

    fn code_point(&self, value: u32, at: usize) -> Result<Item, RegexError> {
        match char::from_u32(value) {
            Some(c) => Ok(item(regex::escape(c.encode_utf8(&mut [0; 4])), c.is_ascii())),
            None => Err(syntax("Illegal character", at)),
        }
    }

    /// `\0n`, `\0nn` or `\0mnn` (m at most 3).
    fn octal(&mut self) -> Result<Item, RegexError> {
        let start = self.at;
        let mut value = 0u32;
        while self.at - start < 3 {
            match self.peek(0).and_then(|c| c.to_digit(8)) {
                Some(digit) if self.at - start < 2 || value < 32 => {
                    value = value * 8 + digit;
                    self.at += 1;
                }
                _ => break,
            }
        }
        if self.at == start {
            return Err(syntax("Illegal octal escape sequence", start));
        }
        self.code_point(value, start)
    }

    /// `\xhh` or `\x{h...h}`.
    fn hexadecimal(&mut self) -> Result<Item, RegexError> {
        let start = self.at;
        if self.peek(0) == Some('{') {
            let close = (self.at..self.chars.len()).find(|&at| self.chars[at] == '}');
            let close = close.ok_or_else(|| syntax("Unclosed hexadecimal escape sequence", start))?;
            let digits: String = self.chars[self.at + 1..close].iter().collect();
            self.at = close + 1;
            let value = u32::from_str_radix(&digits, 16).map_err(|_| syntax("Illegal hexadecimal escape", start))?;
            return self.code_point(value, start);
        }
        self.fixed_hex(2, start)
    }

    /// `\uhhhh`.
    fn unicode(&mut self) -> Result<Item, RegexError> {
        let start = self.at;
        self.fixed_hex(4, start)
    }

    fn fixed_hex(&mut self, count: usize, start: usize) -> Result<Item, RegexError> {
        let digits: String = self.chars.iter().skip(self.at).take(count).collect();
        if digits.chars().count() != count || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(syntax("Illegal hexadecimal escape sequence", start));
        }
        self.at += count;
        let value = u32::from_str_radix(&digits, 16).map_err(|_| syntax("Illegal hexadecimal escape", start))?;
        self.code_point(value, start)
    }

    /// `\p{Name}`, `\pL` and their negations: Java's ASCII POSIX classes, general categories,
    /// scripts and binary properties (`Is...`).
    fn property(&mut self, negated: bool) -> Result<Item, RegexError> {
        let start = self.at;
        let name: String = match self.peek(0) {
            Some('{') => {
                let close = (self.at..self.chars.len()).find(|&at| self.chars[at] == '}');
                let close = close.ok_or_else(|| syntax("Unclosed character family", start))?;
                let name = self.chars[self.at + 1..close].iter().collect();
                self.at = close + 1;
                name
            }
            Some(c) => {
                self.at += 1;
                c.to_string()
            }
            None => return Err(syntax("Illegal character family", start)),
        };
        let not = if negated { "^" } else { "" };
        if let Some(posix) = posix_class(&name) {
            return Ok(item(format!("[{not}[:{posix}:]]"), true));
        }
        if name.starts_with("In") || name.starts_with("java") || name.contains('=') {
            return Err(unsupported(&format!("\\p{{{name}}}")));
        }
        let property = name.strip_prefix("Is").unwrap_or(&name);
        if property.is_empty() || !property.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(syntax("Unknown character property name", start));
        }
        let text = format!(r"\{}{{{property}}}", if negated { 'P' } else { 'p' });
        Ok(item(text, false))
    }
}

/// Java's POSIX character class names (ASCII-only in Java) as the crate's `[:name:]` classes.
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "Lower" => "lower",
        "Upper" => "upper",
        "ASCII" => "ascii",
        "Alpha" => "alpha",
        "Digit" => "digit",
        "Alnum" => "alnum",
        "Punct" => "punct",
        "Graph" => "graph",
        "Print" => "print",
        "Blank" => "blank",
        "Cntrl" => "cntrl",
        "XDigit" => "xdigit",
        "Space" => "space",
        _ => return None,
    })
}

impl Translator {
    /// A character class (its `[` just read) in the crate's syntax: nested classes are unions
    /// and `&&` intersects, as in Java.
    fn class(&mut self, depth: usize) -> Result<String, RegexError> {
        if depth > MAX_GROUPS {
            return Err(unsupported("classes nested too deeply"));
        }
        let start = self.at - 1;
        let mut class = String::from("[");
        if self.peek(0) == Some('^') {
            self.at += 1;
            class.push('^');
        }
        let mut empty = true;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                ']' if !empty => {
                    class.push(']');
                    return Ok(class);
                }
                '[' => class.push_str(&self.class(depth + 1)?),
                '&' if self.peek(0) == Some('&') => {
                    self.at += 1;
                    class.push_str("&&");
                }
                '\\' => class.push_str(&self.class_escape()?),
                '-' if self.peek(0) == Some('-') => class.push_str(r"\-"),
                '-' if empty || self.peek(0) == Some(']') => class.push_str(r"\-"),
                '-' => class.push('-'),
                c => class.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
            }
            empty = false;
        }
        Err(syntax("Unclosed character class", start))
    }

    /// An escape inside a class (the backslash just read).
    fn class_escape(&mut self) -> Result<String, RegexError> {
        let c = self.peek(0).ok_or_else(|| syntax("Unclosed character class", self.at))?;
        self.at += 1;
        match c {
            'Q' => Ok(self.quoted().chars().map(|c| regex::escape(c.encode_utf8(&mut [0; 4]))).collect()),
            '1'..='9' | 'k' => Err(unsupported("backreferences")),
            'h' | 'H' | 'v' | 'V' | 'R' | 'X' | 'N' => Err(unsupported(&format!("\\{c}"))),
            'b' | 'B' | 'A' | 'z' | 'Z' | 'G' => Err(syntax("Illegal/unsupported escape sequence", self.at - 1)),
            c => self.escape_item(c).map(|item| item.text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        compile(pattern, Flags::default()).unwrap().is_match(text)
    }

    #[test]
    fn whole_text_matches_like_java_matches() {
        assert!(matches("a.*", "abc"));
        assert!(!matches("Al", "Alice"));
        assert!(matches("a|ab", "ab"), "alternatives are tried until the whole text matches");
        assert!(matches("", ""));
        assert!(!matches("a.b", "a\rb"), "Java's dot excludes \\r");
        assert!(!matches("a.b", "a\u{2028}b"));
        assert!(matches("(?s)a.b", "a\rb"));
        assert!(matches("(?d)a.b", "a\rb"));
        assert!(!matches("(?d)a.b", "a\nb"));
    }

    #[test]
    fn classes_are_ascii_as_in_java() {
        assert!(matches(r"\w+", "A1_2"));
        assert!(!matches(r"\w+", "äöü"));
        assert!(!matches(r"\d", "٣"), "Arabic-Indic digits are not \\d in Java");
        assert!(matches(r"\p{Alpha}+", "apple"));
        assert!(!matches(r"\p{Alpha}+", "straße"));
        assert!(matches(r"\p{Lu}.*", "Äpfel"));
        assert!(matches(r"\p{IsLatin}+", "abc"));
        assert!(matches(r"[[:a]]+", ":a:"), "[: is no POSIX class in Java");
        assert!(matches(r"[a[x]]%?b", "a%b"));
        assert!(matches(r"[a-z&&[^b]]+", "xzy"));
        assert!(!matches(r"[a-z&&[^b]]+", "banana"));
        assert!(matches(r"[\d-]+", "1-2"));
        assert!(matches(r"\Qx.y\E", "x.y"));
        assert!(!matches(r"\Qx.y\E", "xzy"));
        assert!(matches(r"\Qa.b", "a.b"), "\\Q runs to the end without \\E");
        assert!(matches(r"\x41\u0042\0103\x{44}\cI", "ABCD\t"));
    }

    #[test]
    fn case_folding_is_ascii_unless_unicode_case() {
        assert!(matches("(?i)apple", "APPLE"));
        assert!(!matches("(?i)äöü", "ÄÖÜ"));
        assert!(matches("(?iu)äöü", "ÄÖÜ"));
        assert!(matches("a(?i:b)c", "aBc"));
        assert!(!matches("a(?i:b)c", "aBC"));
        assert!(matches("(a(?i)b)B", "aBB"));
        assert!(!matches("(a(?i)b)B", "aBb"), "flags end with their group");
        let ilike = Flags { case_insensitive: true, unicode_case: true, dotall: true, ..Flags::default() };
        assert!(compile("ǆ", ilike).unwrap().is_match("ǅ"));
        assert!(!compile("STRASSE", ilike).unwrap().is_match("straße"));
    }

    #[test]
    fn java_only_features_are_refused() {
        for pattern in [r"(a)\1", "(?=a).*", "(?<!a)b", "(?>a)", "a++", "a*+", r"\h", r"\R", "(?x)a", r"\p{InGreek}"] {
            assert!(
                matches!(compile(pattern, Flags::default()), Err(RegexError::Unsupported(_))),
                "{pattern} is unsupported"
            );
        }
        for pattern in ["(", "[a", ")", "a{", "a{x}", r"\y", "*", "(?<1a>x)", "(?q)"] {
            assert!(matches!(compile(pattern, Flags::default()), Err(RegexError::Syntax(_))), "{pattern} is invalid");
        }
        assert!(matches("(?<word>a+)b", "aab"));
        assert!(matches("a{2,3}?", "aa"));
    }
}
