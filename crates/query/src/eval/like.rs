//! LIKE patterns as the Java regular expressions Hazelcast's `LikePredicate` compiles them to.

/// `LikePredicate.createPattern`'s Java regular expression for a LIKE pattern: the pattern
/// quoted (`Pattern.quote`), each `%` and `_` not preceded by a backslash (in the quoted text)
/// replaced by `\E.*\Q` and `\E.\Q`, then every `\%` and `\_` by `%` and `_`.
pub fn like_to_regex(pattern: &str) -> String {
    let quoted = java_quote(pattern);
    let wildcards = replace_unescaped(&replace_unescaped(&quoted, '%', r"\E.*\Q"), '_', r"\E.\Q");
    wildcards.replace(r"\%", "%").replace(r"\_", "_")
}

/// Java's `Pattern.quote`.
fn java_quote(text: &str) -> String {
    format!(r"\Q{}\E", text.replace(r"\E", r"\E\\E\Q"))
}

/// `text.replaceAll("(?<!\\\\)[c]", replacement)`: lookbehind sees the original text.
fn replace_unescaped(text: &str, target: char, replacement: &str) -> String {
    let mut replaced = String::with_capacity(text.len());
    let mut previous = None;
    for c in text.chars() {
        if c == target && previous != Some('\\') {
            replaced.push_str(replacement);
        } else {
            replaced.push(c);
        }
        previous = Some(c);
    }
    replaced
}
