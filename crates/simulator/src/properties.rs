//! Java `.properties` files, the format of Simulator test files and YCSB workload files.
//!
//! Follows `java.util.Properties.load`: `#` and `!` start comment lines; a key ends at the
//! first unescaped `=`, `:` or whitespace; one separator (with whitespace around it) is
//! skipped; a line ending in an odd number of backslashes continues on the next line (leading
//! whitespace of the continuation dropped); `\t \n \r \f \uXXXX` and `\<char>` escapes.
//! One difference: trailing whitespace of a value is trimmed (Java keeps it, so YCSB would
//! reject `requestdistribution=zipfian␠`; here it just works). A key given twice keeps the
//! last value, as in Java.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::SimulatorError;

/// The properties of one file, with the line each key was read from (for error messages).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    /// Where the properties came from (a path, or a label in tests).
    pub source: String,
    entries: BTreeMap<String, (String, usize)>,
}

impl Properties {
    pub fn read(path: &Path) -> Result<Properties, SimulatorError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| SimulatorError::Input(format!("cannot read {}: {error}", path.display())))?;
        Properties::parse(&path.display().to_string(), &text)
    }

    /// Parses `text`; `source` names it in error messages.
    pub fn parse(source: &str, text: &str) -> Result<Properties, SimulatorError> {
        let mut properties = Properties { source: source.to_owned(), entries: BTreeMap::new() };
        let mut lines = text.lines().enumerate();
        while let Some((index, line)) = lines.next() {
            let line_number = index + 1;
            let mut logical = line.trim_start().to_owned();
            if logical.is_empty() || logical.starts_with('#') || logical.starts_with('!') {
                continue;
            }
            while ends_with_odd_backslashes(&logical) {
                logical.pop();
                match lines.next() {
                    Some((_, next)) => logical.push_str(next.trim_start()),
                    None => break,
                }
            }
            let (key, value) = split_entry(&logical)
                .map_err(|reason| SimulatorError::Input(format!("{source}:{line_number}: {reason}")))?;
            properties.entries.insert(key, (value, line_number));
        }
        Ok(properties)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|(value, _)| value.as_str())
    }

    /// The keys in sorted order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// `source:line` of `key`, for error messages.
    pub fn location(&self, key: &str) -> String {
        match self.entries.get(key) {
            Some((_, line)) => format!("{}:{line}", self.source),
            None => self.source.clone(),
        }
    }

    /// The value of `key` parsed as `T`, or `default` when absent; an unparsable value is an
    /// error naming the key, its location and what was expected.
    pub fn parsed_or<T: std::str::FromStr>(&self, key: &str, default: T, expected: &str) -> Result<T, SimulatorError> {
        match self.get(key) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| self.invalid(key, expected)),
        }
    }

    /// An error for `key`'s value: "`source:line`: key=value: expected …".
    pub fn invalid(&self, key: &str, expected: &str) -> SimulatorError {
        let value = self.get(key).unwrap_or("");
        SimulatorError::Input(format!("{}: {key}={value}: expected {expected}", self.location(key)))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn ends_with_odd_backslashes(line: &str) -> bool {
    line.bytes().rev().take_while(|&byte| byte == b'\\').count() % 2 == 1
}

/// Splits a logical line into its unescaped key and value.
fn split_entry(line: &str) -> Result<(String, String), String> {
    let mut chars = line.chars().peekable();
    let mut raw_key = String::new();
    while let Some(&c) = chars.peek() {
        if c == '\\' {
            raw_key.push(chars.next().expect("peeked"));
            if let Some(escaped) = chars.next() {
                raw_key.push(escaped);
            }
            continue;
        }
        if c == '=' || c == ':' || c.is_whitespace() {
            break;
        }
        raw_key.push(c);
        chars.next();
    }
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    if chars.peek().is_some_and(|&c| c == '=' || c == ':') {
        chars.next();
    }
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    let raw_value: String = chars.collect();
    let key = unescape(&raw_key)?;
    if key.is_empty() {
        return Err(format!("no key in line {line:?}"));
    }
    Ok((key, unescape(raw_value.trim_end())?))
}

fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let digits: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&digits, 16)
                    .ok()
                    .filter(|_| digits.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("malformed \\u escape \\u{digits}"))?;
                out.push(code);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Properties {
        Properties::parse("test", text).unwrap()
    }

    #[test]
    fn reads_the_seeds_test_file_shape() {
        let properties =
            parse("class=StringStringMapTest\nthreadCount=40\n# comment\n\n! also\nprobe-getLatency=latency\n");
        assert_eq!(properties.get("class"), Some("StringStringMapTest"));
        assert_eq!(properties.get("threadCount"), Some("40"));
        assert_eq!(properties.get("probe-getLatency"), Some("latency"));
        assert_eq!(properties.len(), 3);
        assert_eq!(properties.location("threadCount"), "test:2");
    }

    #[test]
    fn separators_whitespace_and_continuations() {
        let properties = parse("a = 1\nb:2\nc 3\n  d=x \\\n    y\ne=\nf=trailing   \n");
        assert_eq!(properties.get("a"), Some("1"));
        assert_eq!(properties.get("b"), Some("2"));
        assert_eq!(properties.get("c"), Some("3"));
        assert_eq!(properties.get("d"), Some("x y"));
        assert_eq!(properties.get("e"), Some(""));
        assert_eq!(properties.get("f"), Some("trailing"));
    }

    #[test]
    fn escapes_and_last_value_wins() {
        let properties = parse("key\\=with\\:sep=v\\tx\\u0041\nk=1\nk=2\n");
        assert_eq!(properties.get("key=with:sep"), Some("v\txA"));
        assert_eq!(properties.get("k"), Some("2"));
        assert_eq!(properties.location("k"), "test:3");
    }

    #[test]
    fn bad_input_names_the_line() {
        let error = Properties::parse("file.properties", "ok=1\nbad=\\u00zz\n").unwrap_err();
        assert!(error.to_string().contains("file.properties:2"), "{error}");
        let error = Properties::parse("f", "=value\n").unwrap_err();
        assert!(error.to_string().contains("no key"), "{error}");
    }

    #[test]
    fn parsed_values_name_the_key_on_error() {
        let properties = parse("threadCount=forty\n");
        let error = properties.parsed_or::<u32>("threadCount", 1, "a whole number").unwrap_err();
        assert!(error.to_string().contains("threadCount=forty: expected a whole number"), "{error}");
        assert_eq!(properties.parsed_or::<u32>("missing", 7, "n").unwrap(), 7);
    }
}
