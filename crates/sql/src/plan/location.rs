//! Where an expression is in the statement's text, for the positions Hazelcast puts before a
//! validation error.

use crate::error::SqlError;
use sqlparser::tokenizer::Span;

/// sqlparser's span of `CAST(x AS t)` covers `x` only, and a call's stops before its `)`:
/// the span from the keyword (CAST) to the closing parenthesis, found in the text.
pub(super) fn to_closing_paren(span: Span, text: &str, cast: bool) -> Span {
    use sqlparser::tokenizer::Location;
    let lines: Vec<&str> = text.split('\n').collect();
    let offset = |location: Location| -> Option<usize> {
        let line = lines.get((location.line as usize).checked_sub(1)?)?;
        let before: usize = lines[..location.line as usize - 1].iter().map(|l| l.chars().count() + 1).sum();
        Some(before + (location.column as usize).saturating_sub(1).min(line.chars().count()))
    };
    let chars: Vec<char> = text.chars().collect();
    let (Some(mut start), Some(end)) = (offset(span.start), offset(span.end)) else { return span };
    if cast {
        // back to the '(' before the operand, then over the keyword
        let mut depth = 0;
        while start > 0 {
            start -= 1;
            match chars[start] {
                ')' => depth += 1,
                '(' if depth == 0 => break,
                '(' => depth -= 1,
                _ => {}
            }
        }
        while start > 0 && chars[start - 1].is_whitespace() {
            start -= 1;
        }
        while start > 0 && chars[start - 1].is_alphabetic() {
            start -= 1;
        }
    }
    let mut close = end;
    let mut depth = 0;
    while close < chars.len() {
        match chars[close] {
            '(' => depth += 1,
            ')' if depth == 0 => break,
            ')' => depth -= 1,
            _ => {}
        }
        close += 1;
    }
    let location = |index: usize| {
        let before = &chars[..index];
        let line = before.iter().filter(|c| **c == '\n').count() + 1;
        let column = before.iter().rev().take_while(|c| **c != '\n').count() + 1;
        Location::new(line as u64, column as u64)
    };
    if close >= chars.len() {
        return Span::new(location(start), span.end);
    }
    Span::new(location(start), location(close + 1))
}

/// Whether an error still needs its position (a validation error not yet located).
pub(super) fn needs_location(error: &SqlError) -> bool {
    error.code == crate::error::Code::Parsing
        && !error.message.starts_with("From line")
        && !error.message.starts_with("At line")
        && !error.message.starts_with("Encountered")
        && !error.message.starts_with("Function '")
}

/// Prefixes a validation error with where the offending expression is, as Hazelcast does:
/// "From line 1, column 8 to line 1, column 25: " ("At line 1, column 8: " for one character).
pub fn located(span: Span, error: SqlError) -> SqlError {
    if !needs_location(&error) || span == Span::empty() {
        return error;
    }
    let (start, end) = (span.start, span.end);
    let end_column = end.column.saturating_sub(1).max(start.column);
    let prefix = if (start.line, start.column) == (end.line, end_column) {
        format!("At line {}, column {}: ", start.line, start.column)
    } else {
        format!("From line {}, column {} to line {}, column {}: ", start.line, start.column, end.line, end_column)
    };
    SqlError { message: prefix + &error.message, ..error }
}
