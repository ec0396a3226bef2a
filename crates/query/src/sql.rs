//! The text of `sql(...)` predicates, parsed into [`Predicate`] trees with Hazelcast's meaning
//! (its `SqlPredicate`): the predicate language of the map API, not Hazelcast's SQL engine.
//!
//! Grammar (keywords in any case; loosest binding first, as Hazelcast's precedences
//! OR 3 < AND 5 < NOT 8 < comparisons 10):
//!
//! ```text
//! predicate  := or
//! or         := and ("OR" and)*
//! and        := not ("AND" not)*
//! not        := "NOT" not | primary
//! primary    := "(" predicate ")"
//!             | attribute                                   -- attribute = 'true'
//!             | attribute ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") value
//!             | attribute ["NOT"] "BETWEEN" value "AND" value
//!             | attribute ["NOT"] "IN" "(" value ("," value)* ")"
//!             | attribute ["NOT"] ("LIKE" | "ILIKE" | "REGEX") value
//! attribute  := word | string
//! value      := word | string                                -- "null" unquoted is null
//! word       := characters up to whitespace or one of ( ) = < > ! ' ,
//! string     := "'" (any character but ', or '') "'"
//! ```
//!
//! Hazelcast behaviours kept on purpose, so results match a Hazelcast member's:
//! - values stay text ([`Operand::Text`]), quoted or not (`5`, `'5'`, `true`): Hazelcast converts
//!   them to the attribute's type when it compares;
//! - unquoted `null` is null, except inside `IN (...)`, where Hazelcast keeps it as the text
//!   `null`;
//! - a bare attribute means `attribute = 'true'`; `a AND b AND c` and parenthesised operands of
//!   the same connective flatten into one `And`/`Or`;
//! - `''` inside a string is one quote, except that the string `''''` is two quotes (Hazelcast
//!   unescapes only strings longer than two characters);
//! - an attribute written `%name` in a comparison or `IN` means "do not use an index":
//!   [`Predicate::SkipIndex`] around the predicate on `name`;
//! - a leading `this.` is dropped from attributes (`this.a` is `a`), as Hazelcast's predicate
//!   constructors drop it; `BETWEEN` bounds cannot be null.
//!
//! Hazelcast's tokenizer misreads a few texts: it rejects `NOT NOT a` and `a In (1, 2)` (lists
//! with spaces are read only after `in` or `IN`), and accepts `a = 1)`, `a BETWEEN 1 OR 2` and
//! `a = (5)`. This parser reads such texts by the grammar above: the first two as written, the
//! others as errors. Every error is an [`SqlError`] naming the position and what was expected.
//! `tests/sql.rs` checks all this against Hazelcast's own parser.
//!
//! Invariant: parentheses and `NOT`s nest at most [`MAX_NESTING`] deep; malformed text is an
//! error, never a panic.

use crate::tree::{Operand, Predicate};

/// How deeply parentheses and `NOT`s may nest.
pub const MAX_NESTING: usize = 64;

/// Text that is not a predicate: where (a character index from 0), what was expected there and
/// what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid SQL at character {position}: expected {expected}, found {found}")]
pub struct SqlError {
    pub position: usize,
    pub expected: &'static str,
    pub found: String,
}

/// Parses the text of a `sql(...)` predicate.
pub fn parse(text: &str) -> Result<Predicate, SqlError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser { tokens, next: 0, depth: 0 };
    let predicate = parser.or()?;
    // Hazelcast drops an unmatched ')' after a whole predicate (the Python client's own
    // query sample writes "active AND age BETWEEN 18 AND 21)").
    while parser.peek().kind == Kind::Close {
        parser.next += 1;
    }
    match parser.peek().kind {
        Kind::End => Ok(predicate),
        _ => Err(parser.error("AND, OR or the end of the text")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keyword {
    And,
    Or,
    Not,
    Between,
    In,
    Like,
    ILike,
    Regex,
}

impl Keyword {
    fn of(word: &str) -> Option<Keyword> {
        const KEYWORDS: [(&str, Keyword); 8] = [
            ("and", Keyword::And),
            ("or", Keyword::Or),
            ("not", Keyword::Not),
            ("between", Keyword::Between),
            ("in", Keyword::In),
            ("like", Keyword::Like),
            ("ilike", Keyword::ILike),
            ("regex", Keyword::Regex),
        ];
        KEYWORDS.iter().find(|(name, _)| name.eq_ignore_ascii_case(word)).map(|(_, keyword)| *keyword)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Word(String),
    /// A quoted string, unescaped.
    Text(String),
    Keyword(Keyword),
    Comparison(Comparison),
    Open,
    Close,
    Comma,
    End,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Token {
    kind: Kind,
    /// Character index of the token's first character.
    position: usize,
    /// The token as written (for error messages).
    source: String,
}

/// Characters that end a word.
fn is_delimiter(character: char) -> bool {
    character.is_whitespace() || "()=<>!',".contains(character)
}

fn tokenize(text: &str) -> Result<Vec<Token>, SqlError> {
    let characters: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < characters.len() {
        let character = characters[at];
        if character.is_whitespace() {
            at += 1;
            continue;
        }
        let (kind, length) = match character {
            '\'' => quoted(&characters, at)?,
            '(' => (Kind::Open, 1),
            ')' => (Kind::Close, 1),
            ',' => (Kind::Comma, 1),
            '=' | '!' | '<' | '>' => comparison(&characters, at)?,
            _ => {
                let length = characters[at..].iter().take_while(|next| !is_delimiter(**next)).count();
                let word: String = characters[at..at + length].iter().collect();
                (Keyword::of(&word).map_or(Kind::Word(word), Kind::Keyword), length)
            }
        };
        tokens.push(Token { kind, position: at, source: characters[at..at + length].iter().collect() });
        at += length;
    }
    tokens.push(Token { kind: Kind::End, position: characters.len(), source: String::new() });
    Ok(tokens)
}

/// A comparison operator starting at `at`, and its length.
fn comparison(characters: &[char], at: usize) -> Result<(Kind, usize), SqlError> {
    let next = characters.get(at + 1).copied();
    let (operator, length) = match (characters[at], next) {
        ('=', Some('=')) => (Comparison::Equal, 2),
        ('=', _) => (Comparison::Equal, 1),
        ('!', Some('=')) => (Comparison::NotEqual, 2),
        ('<', Some('>')) => (Comparison::NotEqual, 2),
        ('<', Some('=')) => (Comparison::LessOrEqual, 2),
        ('<', _) => (Comparison::Less, 1),
        ('>', Some('=')) => (Comparison::GreaterOrEqual, 2),
        ('>', _) => (Comparison::Greater, 1),
        _ => {
            let found = format!("'{}'", characters[at]);
            return Err(SqlError { position: at, expected: "'!=' (a lone '!' is not an operator)", found });
        }
    };
    Ok((Kind::Comparison(operator), length))
}

/// A string starting with the quote at `at`, and its length with both quotes.
fn quoted(characters: &[char], at: usize) -> Result<(Kind, usize), SqlError> {
    let mut raw = String::new();
    let mut index = at + 1;
    loop {
        match (characters.get(index), characters.get(index + 1)) {
            (Some('\''), Some('\'')) => {
                raw.push_str("''");
                index += 2;
            }
            (Some('\''), _) => break,
            (Some(character), _) => {
                raw.push(*character);
                index += 1;
            }
            (None, _) => {
                let found = "the end of the text".to_owned();
                return Err(SqlError { position: at, expected: "a closing ' for the string starting here", found });
            }
        }
    }
    // Hazelcast unescapes `''` only in strings longer than two characters.
    let text = if raw.chars().count() > 2 { raw.replace("''", "'") } else { raw };
    Ok((Kind::Text(text), index + 1 - at))
}

struct Parser {
    tokens: Vec<Token>,
    next: usize,
    /// Open parentheses and `NOT`s around the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.next.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != Kind::End {
            self.next += 1;
        }
        token
    }

    /// An error at the next token.
    fn error(&self, expected: &'static str) -> SqlError {
        let token = self.peek();
        let found = match &token.kind {
            Kind::End => "the end of the text".to_owned(),
            Kind::Text(_) => format!("the string {}", token.source),
            _ => format!("'{}'", token.source),
        };
        SqlError { position: token.position, expected, found }
    }

    fn eat_keyword(&mut self, keyword: Keyword) -> bool {
        if self.peek().kind == Kind::Keyword(keyword) {
            self.next += 1;
            return true;
        }
        false
    }

    fn nest(&mut self) -> Result<(), SqlError> {
        if self.depth >= MAX_NESTING {
            return Err(self.error("at most 64 nested parentheses and NOTs"));
        }
        self.depth += 1;
        Ok(())
    }

    fn or(&mut self) -> Result<Predicate, SqlError> {
        let mut operands = vec![self.and()?];
        while self.eat_keyword(Keyword::Or) {
            operands.push(self.and()?);
        }
        Ok(connect(operands, Keyword::Or))
    }

    fn and(&mut self) -> Result<Predicate, SqlError> {
        let mut operands = vec![self.not()?];
        while self.eat_keyword(Keyword::And) {
            operands.push(self.not()?);
        }
        Ok(connect(operands, Keyword::And))
    }

    fn not(&mut self) -> Result<Predicate, SqlError> {
        if !self.eat_keyword(Keyword::Not) {
            return self.primary();
        }
        self.nest()?;
        let negated = self.not()?;
        self.depth -= 1;
        Ok(Predicate::Not(Box::new(negated)))
    }

    fn primary(&mut self) -> Result<Predicate, SqlError> {
        if self.peek().kind == Kind::Open {
            self.nest()?;
            self.advance();
            let inner = self.or()?;
            if self.peek().kind != Kind::Close {
                return Err(self.error("')'"));
            }
            self.advance();
            self.depth -= 1;
            return Ok(inner);
        }
        let attribute = self.attribute()?;
        let negated = self.peek().kind == Kind::Keyword(Keyword::Not)
            && matches!(
                self.tokens.get(self.next + 1).map(|token| &token.kind),
                Some(Kind::Keyword(Keyword::Between | Keyword::In | Keyword::Like | Keyword::ILike | Keyword::Regex))
            );
        if negated {
            self.advance();
        }
        let predicate = self.condition(attribute)?;
        Ok(if negated { Predicate::Not(Box::new(predicate)) } else { predicate })
    }

    fn attribute(&mut self) -> Result<String, SqlError> {
        match &self.peek().kind {
            Kind::Word(word) if !word.eq_ignore_ascii_case("null") => {
                let word = word.clone();
                self.advance();
                Ok(word)
            }
            Kind::Text(text) => {
                let text = text.clone();
                self.advance();
                Ok(text)
            }
            _ => Err(self.error("an attribute, NOT or '('")),
        }
    }

    /// What follows an attribute: an operator and its operands, or nothing (`attribute = 'true'`).
    fn condition(&mut self, written: String) -> Result<Predicate, SqlError> {
        let attribute = canonical(&written);
        let kind = self.peek().kind.clone();
        match kind {
            Kind::Comparison(operator) => {
                self.advance();
                let value = self.value()?;
                Ok(skipping_index(&written, |attribute| compare(attribute, operator, value)))
            }
            Kind::Keyword(Keyword::Between) => {
                self.advance();
                let from = self.bound()?;
                if !self.eat_keyword(Keyword::And) {
                    return Err(self.error("AND"));
                }
                let to = self.bound()?;
                Ok(Predicate::Between { attribute, from, to })
            }
            Kind::Keyword(Keyword::In) => {
                self.advance();
                let values = self.list()?;
                Ok(skipping_index(&written, |attribute| Predicate::In { attribute, values }))
            }
            Kind::Keyword(keyword @ (Keyword::Like | Keyword::ILike | Keyword::Regex)) => {
                self.advance();
                let pattern = match self.value()? {
                    Operand::Text(text) => Some(text),
                    Operand::Object(_) => None,
                };
                Ok(match keyword {
                    Keyword::Like => Predicate::Like { attribute, pattern },
                    Keyword::ILike => Predicate::ILike { attribute, pattern },
                    _ => Predicate::Regex { attribute, pattern },
                })
            }
            _ => Ok(Predicate::Equal { attribute, value: Operand::Text("true".to_owned()) }),
        }
    }

    /// A value: a word or a string; the unquoted word `null` is null.
    fn value(&mut self) -> Result<Operand, SqlError> {
        match &self.peek().kind {
            Kind::Word(word) if word.eq_ignore_ascii_case("null") => {
                self.advance();
                Ok(Operand::null())
            }
            Kind::Word(text) | Kind::Text(text) => {
                let text = text.clone();
                self.advance();
                Ok(Operand::Text(text))
            }
            _ => Err(self.error("a value")),
        }
    }

    /// A bound of BETWEEN: a value, not null (Hazelcast's `between` rejects null bounds).
    fn bound(&mut self) -> Result<Operand, SqlError> {
        let position = self.next;
        match self.value()? {
            Operand::Object(_) => {
                self.next = position;
                Err(self.error("a value that is not null (BETWEEN bounds cannot be null)"))
            }
            bound => Ok(bound),
        }
    }

    /// `( value, ... )`, values as text (`null` too, as Hazelcast reads `IN` lists).
    fn list(&mut self) -> Result<Vec<Operand>, SqlError> {
        if self.peek().kind != Kind::Open {
            return Err(self.error("'(' and the values IN compares with"));
        }
        self.advance();
        let mut values = Vec::new();
        loop {
            match &self.peek().kind {
                Kind::Word(text) | Kind::Text(text) => values.push(Operand::Text(text.clone())),
                _ => return Err(self.error("a value")),
            }
            self.advance();
            match self.peek().kind {
                Kind::Comma => {}
                Kind::Close => break,
                _ => return Err(self.error("',' or ')'")),
            }
            self.advance();
        }
        self.advance();
        Ok(values)
    }
}

fn compare(attribute: String, operator: Comparison, value: Operand) -> Predicate {
    let (equal, less) = match operator {
        Comparison::Equal => return Predicate::Equal { attribute, value },
        Comparison::NotEqual => return Predicate::NotEqual { attribute, value },
        Comparison::Less => (false, true),
        Comparison::LessOrEqual => (true, true),
        Comparison::Greater => (false, false),
        Comparison::GreaterOrEqual => (true, false),
    };
    Predicate::GreaterLess { attribute, value, equal, less }
}

/// `build` on the attribute, or, for an attribute written `%name` (only comparisons and IN
/// read the `%`, as in Hazelcast), `build` on `name` evaluated without indexes.
fn skipping_index(written: &str, build: impl FnOnce(String) -> Predicate) -> Predicate {
    match written.strip_prefix('%') {
        Some(name) => Predicate::SkipIndex(Box::new(build(canonical(name)))),
        None => build(canonical(written)),
    }
}

/// An attribute path without a leading `this.` (`this.a` is `a`), as Hazelcast's predicate
/// constructors store it.
fn canonical(attribute: &str) -> String {
    attribute.strip_prefix("this.").unwrap_or(attribute).to_owned()
}

/// One operand as is; several joined by AND or OR, operands of the same connective flattened.
fn connect(mut operands: Vec<Predicate>, connective: Keyword) -> Predicate {
    if operands.len() == 1 {
        return operands.pop().expect("one operand");
    }
    let mut flat = Vec::with_capacity(operands.len());
    for operand in operands {
        match (operand, connective) {
            (Predicate::And(inner), Keyword::And) | (Predicate::Or(inner), Keyword::Or) => flat.extend(inner),
            (operand, _) => flat.push(operand),
        }
    }
    match connective {
        Keyword::And => Predicate::And(flat),
        _ => Predicate::Or(flat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> Operand {
        Operand::Text(value.to_owned())
    }

    fn equal(attribute: &str, value: &str) -> Predicate {
        Predicate::Equal { attribute: attribute.to_owned(), value: text(value) }
    }

    #[test]
    fn texts_give_trees() {
        let greater = |attribute: &str, value: &str| Predicate::GreaterLess {
            attribute: attribute.to_owned(),
            value: text(value),
            equal: false,
            less: false,
        };
        let cases = [
            ("a = 1", equal("a", "1")),
            ("a = 'it''s'", equal("a", "it's")),
            ("a = ''''", equal("a", "''")),
            ("a = ''", equal("a", "")),
            ("'a b' = x", equal("a b", "x")),
            ("this.a = 1", equal("a", "1")),
            ("a > 1 AnD b > 2", Predicate::And(vec![greater("a", "1"), greater("b", "2")])),
            ("a = nUlL", Predicate::Equal { attribute: "a".into(), value: Operand::null() }),
            ("a LIKE null", Predicate::Like { attribute: "a".into(), pattern: None }),
            ("a IN (null)", Predicate::In { attribute: "a".into(), values: vec![text("null")] }),
            ("%this.a = 1", Predicate::SkipIndex(Box::new(equal("a", "1")))),
            ("NOT (a OR b)", Predicate::Not(Box::new(Predicate::Or(vec![equal("a", "true"), equal("b", "true")])))),
            ("a\t=\n1", equal("a", "1")),
        ];
        for (sql, expected) in cases {
            assert_eq!(parse(sql), Ok(expected), "{sql}");
        }
    }

    #[test]
    fn errors_name_the_position_and_what_was_expected() {
        let cases = [
            ("", 0, "an attribute, NOT or '('", "the end of the text"),
            ("a =", 3, "a value", "the end of the text"),
            ("= 5", 0, "an attribute, NOT or '('", "'='"),
            ("a = 1 AND", 9, "an attribute, NOT or '('", "the end of the text"),
            ("a = 1 b = 2", 6, "AND, OR or the end of the text", "'b'"),
            ("(a = 1", 6, "')'", "the end of the text"),
            ("a = 1) b", 7, "AND, OR or the end of the text", "'b'"),
            ("a IN ()", 6, "a value", "')'"),
            ("a IN (1 2)", 8, "',' or ')'", "'2'"),
            ("a IN 1", 5, "'(' and the values IN compares with", "'1'"),
            ("a BETWEEN 1 OR 2", 12, "AND", "'OR'"),
            ("a BETWEEN null AND 2", 10, "a value that is not null (BETWEEN bounds cannot be null)", "'null'"),
            ("a ! 5", 2, "'!=' (a lone '!' is not an operator)", "'!'"),
            ("name = 'abc", 7, "a closing ' for the string starting here", "the end of the text"),
            ("null = 1", 0, "an attribute, NOT or '('", "'null'"),
            ("a = AND", 4, "a value", "'AND'"),
            ("é = 'x' AND", 11, "an attribute, NOT or '('", "the end of the text"),
            ("a = 1 AND 'x' 'y'", 14, "AND, OR or the end of the text", "the string 'y'"),
        ];
        for (sql, position, expected, found) in cases {
            let error = parse(sql).expect_err(sql);
            assert_eq!(error, SqlError { position, expected, found: found.to_owned() }, "{sql}");
        }
        let message = parse("a =").unwrap_err().to_string();
        assert_eq!(message, "Invalid SQL at character 3: expected a value, found the end of the text");
    }

    #[test]
    fn nesting_is_bounded() {
        let nested = |depth: usize| format!("{}a{}", "(".repeat(depth), ")".repeat(depth));
        assert_eq!(parse(&nested(MAX_NESTING)), Ok(equal("a", "true")));
        assert_eq!(parse(&nested(MAX_NESTING + 1)).unwrap_err().position, MAX_NESTING);
        let negated = format!("{}a", "NOT ".repeat(MAX_NESTING + 1));
        assert!(parse(&negated).is_err());
    }
}
