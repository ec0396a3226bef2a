//! A statement's text to what the member must do: the DDL of mappings (parsed here, as
//! sqlparser does not know Hazelcast's `CREATE MAPPING`), queries ([`crate::plan`]) and DML.

use crate::catalog::{Catalog, ColumnSpec, Half, Mapping, Samples};
use crate::error::{Result, SqlError};
use crate::exec::ResultSet;
use crate::expr::Expr;
use crate::plan::{self, ColumnMeta, Parameters, SelectPlan, Source, Translator};
use crate::types::SqlType;
pub use crate::write::Change;
use ferrogrid_query::Value;
use sqlparser::ast::Spanned;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

/// The longest statement text accepted (characters).
pub const MAX_STATEMENT_LENGTH: usize = 1 << 20;

/// What a statement asks of the member.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// Add or replace a mapping on every member (`replace`: OR REPLACE; `if_not_exists`).
    CreateMapping { mapping: Mapping, replace: bool, if_not_exists: bool },
    /// Drop a mapping on every member.
    DropMapping { name: String, if_exists: bool },
    /// Answered from the statement alone (SHOW MAPPINGS, SELECT without FROM).
    Rows(ResultSet),
    /// A query over maps.
    Select(Box<SelectPlan>),
    /// EXPLAIN of a query: its steps as rows ([`crate::exec::explain::explain`]), answered by
    /// the member, which knows the maps' indexes.
    Explain(Box<SelectPlan>),
    /// INSERT / SINK: entries to write, and the Compact schemas their records use (which the
    /// member must know before anyone reads them).
    Insert {
        map: String,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        overwrite: bool,
        schemas: Vec<ferrogrid_query::schema::Schema>,
    },
    /// INSERT / SINK of a query's rows: the query runs first.
    InsertSelect(Box<InsertSelect>),
    /// UPDATE / DELETE over a map's entries.
    Change(Box<Change>),
}

/// A statement's text parsed: what planning starts from, kept by [`StatementCache`].
#[derive(Debug)]
pub struct Parsed {
    text: String,
    sink: bool,
    /// Where each `?` is (line, column), in text order.
    positions: Vec<(u64, u64)>,
    statement: Box<sqlparser::ast::Statement>,
}

/// What reading a statement's text gives: mapping DDL done, or a statement to plan.
enum Front {
    Done(Box<Prepared>),
    Parsed(Parsed),
}

/// Statements parsed before, by their text, so that a statement a client repeats (a point
/// lookup with new parameters) is planned without being tokenized and parsed again. Holds at
/// most [`StatementCache::CAPACITY`] statements (starting over when full).
#[derive(Debug, Default)]
pub struct StatementCache {
    parsed: std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<Parsed>>>,
}

impl StatementCache {
    pub const CAPACITY: usize = 1024;

    fn get(&self, text: &str) -> Option<std::sync::Arc<Parsed>> {
        self.parsed.lock().ok()?.get(text).cloned()
    }

    fn put(&self, text: &str, parsed: std::sync::Arc<Parsed>) {
        if let Ok(mut cache) = self.parsed.lock() {
            if cache.len() >= Self::CAPACITY {
                cache.clear();
            }
            cache.insert(text.to_owned(), parsed);
        }
    }

    pub fn len(&self) -> usize {
        self.parsed.lock().map_or(0, |cache| cache.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Parses and plans `text` with `parameters` against `catalog`.
pub fn prepare(text: &str, parameters: Vec<Value>, catalog: &Catalog, samples: &dyn Samples) -> Result<Prepared> {
    match front(text, catalog, samples)? {
        Front::Done(prepared) => Ok(*prepared),
        Front::Parsed(parsed) => plan_parsed(&parsed, parameters, catalog),
    }
}

/// [`prepare`], with the parsing of a text seen before taken from `cache`.
pub fn prepare_cached(
    text: &str,
    parameters: Vec<Value>,
    catalog: &Catalog,
    samples: &dyn Samples,
    cache: &StatementCache,
) -> Result<Prepared> {
    if let Some(parsed) = cache.get(text) {
        return plan_parsed(&parsed, parameters, catalog);
    }
    match front(text, catalog, samples)? {
        Front::Done(prepared) => Ok(*prepared),
        Front::Parsed(parsed) => {
            let parsed = std::sync::Arc::new(parsed);
            cache.put(text, parsed.clone());
            plan_parsed(&parsed, parameters, catalog)
        }
    }
}

/// Reads a statement's text: mapping DDL is prepared at once, anything else parsed.
fn front(text: &str, catalog: &Catalog, samples: &dyn Samples) -> Result<Front> {
    if text.chars().count() > MAX_STATEMENT_LENGTH {
        return Err(SqlError::parsing(format!("The statement is longer than {MAX_STATEMENT_LENGTH} characters")));
    }
    let (text, sink) = rewrite_sink(text);
    let text = rewrite_json_clauses(&text);
    let dialect = GenericDialect {};
    let positions = placeholders(&text)?;
    let mut parser = Parser::new(&dialect).try_with_sql(&text).map_err(parse_error)?;
    if let Some(ddl) = mapping_ddl(&mut parser, catalog, samples)? {
        return Ok(Front::Done(Box::new(ddl)));
    }
    // (mapping_ddl only peeked: the same parser, over the same tokens, reads the statement)
    let mut statements = parser.parse_statements().map_err(|error| parse_error_in(error, &text))?;
    if statements.len() != 1 {
        return Err(SqlError::parsing(if statements.is_empty() {
            "Empty statement".to_owned()
        } else {
            "Only one statement is allowed".to_owned()
        }));
    }
    let statement = statements.pop().expect("one statement");
    Ok(Front::Parsed(Parsed { text, sink, positions, statement: Box::new(statement) }))
}

/// Plans a parsed statement with its parameters.
fn plan_parsed(parsed: &Parsed, parameters: Vec<Value>, catalog: &Catalog) -> Result<Prepared> {
    let Parsed { text, sink, positions, statement } = parsed;
    let (text, sink) = (text.as_str(), *sink);
    let parameters = Parameters { values: parameters, positions: positions.clone(), text: text.to_owned() };
    if parameters.values.len() != parameters.positions.len() {
        return Err(SqlError::data(format!(
            "Unexpected parameter count: expected {}, got {}",
            parameters.positions.len(),
            parameters.values.len()
        )));
    }
    use sqlparser::ast::Statement as S;
    match &**statement {
        S::Query(query) => {
            let plan = plan::select(query, catalog, &parameters)?;
            if plan.sources.iter().all(|source| source.inline.is_some()) {
                let result = crate::exec::run(&plan, &[], &NoSchemas, crate::plan::virtual_tables::MAX_SERIES as usize)
                    .map_err(|error| crate::exec::runtime_error(&plan, error, text.len() as u64))?;
                return Ok(Prepared::Rows(result));
            }
            Ok(Prepared::Select(Box::new(plan)))
        }
        S::Insert(insert) => insert_statement(insert, sink, catalog, &parameters),
        S::Update { table, assignments, from, selection, returning, .. } => {
            if from.is_some() || returning.is_some() || !table.joins.is_empty() {
                return Err(SqlError::parsing("UPDATE with FROM, joins or RETURNING is not supported"));
            }
            update_statement(table, assignments, selection.as_ref(), catalog, &parameters)
        }
        S::Delete(delete) => delete_statement(delete, catalog, &parameters),
        S::Explain { statement, .. } => {
            let S::Query(query) = statement.as_ref() else {
                return Err(SqlError::parsing("EXPLAIN of a query only"));
            };
            Ok(Prepared::Explain(Box::new(plan::select(query, catalog, &parameters)?)))
        }
        S::ShowTables { .. } => Err(SqlError::parsing("SHOW TABLES is not supported; use SHOW MAPPINGS")),
        other => Err(SqlError::parsing(format!("Unsupported SQL statement: {}", first_words(&other.to_string())))),
    }
}

/// UPDATE of one mapping: the entries the filter selects get the assigned columns.
fn update_statement(
    table: &sqlparser::ast::TableWithJoins,
    assignments: &[sqlparser::ast::Assignment],
    selection: Option<&sqlparser::ast::Expr>,
    catalog: &Catalog,
    parameters: &Parameters,
) -> Result<Prepared> {
    let source = single_source(&table.relation, catalog)?;
    let sources = [source.clone()];
    let mut translator = Translator::new(&sources, parameters);
    let filter = match selection {
        Some(selection) => Some(plan::simplify::filter(translator.expr(selection)?)),
        None => None,
    };
    let mut changes = Vec::new();
    for assignment in assignments {
        let name = match &assignment.target {
            sqlparser::ast::AssignmentTarget::ColumnName(name) => name.to_string().trim_matches('"').to_owned(),
            other => return Err(SqlError::parsing(format!("Unsupported assignment target: {other}"))),
        };
        let Some((index, column)) = source.mapping.column(&name) else {
            return Err(SqlError::parsing(format!("Unknown target column '{name}'")));
        };
        if column.half == Half::Key {
            return Err(SqlError::generic(format!("Cannot update '{name}'")));
        }
        let value = translator.expr(&assignment.value)?;
        let source = format!("EXPR${}", changes.len());
        let value = assignable(value, column.ty, &name, &source)
            .map_err(|error| plan::located(assignment.value.span(), error))?;
        changes.push((index, plan::simplify::value(value)));
    }
    Ok(Prepared::Change(Box::new(Change { source, filter, assignments: changes, delete: false })))
}

/// DELETE from one mapping: the entries the filter selects are removed.
fn delete_statement(delete: &sqlparser::ast::Delete, catalog: &Catalog, parameters: &Parameters) -> Result<Prepared> {
    let tables = match &delete.from {
        sqlparser::ast::FromTable::WithFromKeyword(tables) | sqlparser::ast::FromTable::WithoutKeyword(tables) => {
            tables
        }
    };
    if tables.len() != 1 || !tables[0].joins.is_empty() || delete.using.is_some() || delete.returning.is_some() {
        return Err(SqlError::parsing("DELETE from one mapping only is supported"));
    }
    let source = single_source(&tables[0].relation, catalog)?;
    let sources = [source.clone()];
    let mut translator = Translator::new(&sources, parameters);
    let filter = match &delete.selection {
        Some(selection) => Some(plan::simplify::filter(translator.expr(selection)?)),
        None => None,
    };
    Ok(Prepared::Change(Box::new(Change { source, filter, assignments: Vec::new(), delete: true })))
}

fn first_words(text: &str) -> String {
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

#[derive(Debug)]
struct NoSchemas;

impl ferrogrid_query::compact::SchemaSource for NoSchemas {
    fn schema(&self, _id: i64) -> Option<std::sync::Arc<ferrogrid_query::schema::Schema>> {
        None
    }
}

/// A row's key as Hazelcast prints it in an error: the whole key, or its fields.
fn key_text(mapping: &Mapping, row: &[Value]) -> String {
    let fields: Vec<String> = (mapping.columns.iter().zip(row))
        .filter(|(column, _)| column.half == Half::Key)
        .map(|(column, value)| match &column.field {
            None => crate::types::to_text(value),
            Some(_) => format!("{}={}", column.name, crate::types::to_text(value)),
        })
        .collect();
    fields.join(", ")
}

/// `SINK INTO` is `INSERT INTO` that overwrites: parsed as INSERT.
fn rewrite_sink(text: &str) -> (String, bool) {
    let trimmed = text.trim_start();
    if trimmed.len() >= 4 && trimmed[..4].eq_ignore_ascii_case("sink") && trimmed[4..].starts_with(char::is_whitespace)
    {
        let offset = text.len() - trimmed.len();
        return (format!("{}INSERT{}", &text[..offset], &trimmed[4..]), true);
    }
    (text.to_owned(), false)
}

/// `'path' RETURNING type)` and `'path' WITH [ARRAY] WRAPPER)` of JSON_VALUE and JSON_QUERY as
/// a third argument text (`'path', 'RETURNING INT')`), which sqlparser can read.
fn rewrite_json_clauses(text: &str) -> String {
    use std::sync::OnceLock;
    static PATTERNS: OnceLock<[regex::Regex; 3]> = OnceLock::new();
    let [returning, wrapper, without] = PATTERNS.get_or_init(|| {
        [
            regex::Regex::new(r"(?i)('(?:[^']|'')*')\s+RETURNING\s+([A-Za-z][A-Za-z ]*?)\s*\)").expect("valid"),
            regex::Regex::new(
                r"(?i)('(?:[^']|'')*')\s+WITH\s+(?:(?:UNCONDITIONAL|CONDITIONAL)\s+)?(?:ARRAY\s+)?WRAPPER\s*\)",
            )
            .expect("valid"),
            regex::Regex::new(r"(?i)('(?:[^']|'')*')\s+WITHOUT\s+(?:ARRAY\s+)?WRAPPER\s*\)").expect("valid"),
        ]
    });
    if !text.to_ascii_uppercase().contains("JSON_") {
        return text.to_owned();
    }
    let text = if text.to_ascii_uppercase().contains("JSON_OBJECT") {
        // JSON_OBJECT('k': v) and JSON_OBJECT(KEY 'k' VALUE v) as JSON_OBJECT('k', v)
        static PAIRS: OnceLock<[regex::Regex; 2]> = OnceLock::new();
        let [colon, key_value] = PAIRS.get_or_init(|| {
            [
                regex::Regex::new(r"('(?:[^']|'')*')\s*:\s*").expect("valid"),
                regex::Regex::new(r"(?i)\bKEY\s+('(?:[^']|'')*')\s+VALUE\s+").expect("valid"),
            ]
        });
        key_value.replace_all(&colon.replace_all(text, "$1, "), "$1, ").into_owned()
    } else {
        text.to_owned()
    };
    let text = returning
        .replace_all(&text, |c: &regex::Captures<'_>| format!("{}, 'RETURNING {}')", &c[1], c[2].to_ascii_uppercase()));
    let text = wrapper.replace_all(&text, "$1, 'WITH WRAPPER')");
    without.replace_all(&text, "$1)").into_owned()
}

/// Where each `?` is (line, column), in text order.
fn placeholders(text: &str) -> Result<Vec<(u64, u64)>> {
    let dialect = GenericDialect {};
    let tokens = Tokenizer::new(&dialect, text).tokenize_with_location().map_err(|error| {
        SqlError::parsing(format!(
            "Encountered an error at line {}, column {}: {}",
            error.location.line, error.location.column, error.message
        ))
    })?;
    Ok(tokens
        .iter()
        .filter(|token| matches!(&token.token, Token::Placeholder(p) if p == "?"))
        .map(|token| (token.span.start.line, token.span.start.column))
        .collect())
}

fn parse_error(error: ParserError) -> SqlError {
    parse_error_in(error, "")
}

/// sqlparser's error as Hazelcast's parser words it: `Encountered "x" at line 1, column 8.`
/// and what it expected (sqlparser names one thing where Calcite lists them all).
fn parse_error_in(error: ParserError, text: &str) -> SqlError {
    let message = match error {
        ParserError::TokenizerError(message) | ParserError::ParserError(message) => message,
        ParserError::RecursionLimitExceeded => return SqlError::parsing("The statement is nested too deeply"),
    };
    let Some(rest) = message.strip_prefix("Expected: ") else { return SqlError::parsing(message) };
    let Some((expected, found)) = rest.split_once(", found: ") else { return SqlError::parsing(message) };
    if expected == "an SQL statement" {
        return SqlError::parsing("Non-query expression encountered in illegal context");
    }
    let (token, line, column) = match found.split_once(" at Line: ") {
        Some((token, location)) => {
            let (line, column) = location.split_once(", Column: ").unwrap_or((location, "1"));
            (token.to_owned(), line.trim().parse().unwrap_or(1), column.trim().parse().unwrap_or(1))
        }
        None => {
            // The end of the text: Calcite puts it at the last character.
            let lines: Vec<&str> = text.trim_end().split('\n').collect();
            let line = lines.len().max(1);
            let column = lines.last().map_or(1, |l| l.chars().count().max(1));
            ("<EOF>".to_owned(), line, column)
        }
    };
    let token = if token == "EOF" { "<EOF>".to_owned() } else { token };
    let alternatives = match expected {
        "identifier" => "    <IDENTIFIER> ...\n    <QUOTED_IDENTIFIER> ...\n    \"LATERAL\" ...\n    \"TABLE\" ...\n    \"UNNEST\" ...\n    \"(\" ...\n".to_owned(),
        "an expression" => "    \"NOT\" ...\n    \"+\" ...\n    \"-\" ...\n    <UNSIGNED_INTEGER_LITERAL> ...\n    <QUOTED_STRING> ...\n    <IDENTIFIER> ...\n    \"(\" ...\n".to_owned(),
        other => format!("    {other} ...\n"),
    };
    SqlError::parsing(format!(
        "Encountered \"{token}\" at line {line}, column {column}.\nWas expecting one of:\n{alternatives}"
    ))
}

/// Calcite's reserved words that Hazelcast refuses as column names.
const RESERVED: &[&str] = &[
    "ABS",
    "ALL",
    "AND",
    "AS",
    "AVG",
    "BETWEEN",
    "BIGINT",
    "BOOLEAN",
    "BY",
    "CASE",
    "CAST",
    "CEIL",
    "CEILING",
    "CHAR",
    "COUNT",
    "CREATE",
    "CROSS",
    "CURRENT_DATE",
    "DATE",
    "DAY",
    "DECIMAL",
    "DELETE",
    "DISTINCT",
    "DOUBLE",
    "DROP",
    "ELSE",
    "END",
    "EXISTS",
    "FALSE",
    "FLOOR",
    "FROM",
    "FULL",
    "GROUP",
    "HAVING",
    "HOUR",
    "IN",
    "INNER",
    "INSERT",
    "INT",
    "INTEGER",
    "INTERVAL",
    "INTO",
    "IS",
    "JOIN",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LOWER",
    "MAX",
    "MIN",
    "MINUTE",
    "MONTH",
    "NOT",
    "NULL",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "REAL",
    "RIGHT",
    "SECOND",
    "SELECT",
    "SET",
    "SMALLINT",
    "SUM",
    "TABLE",
    "THEN",
    "TIME",
    "TIMESTAMP",
    "TRUE",
    "UNION",
    "UPDATE",
    "UPPER",
    "USER",
    "VALUE",
    "VALUES",
    "VARCHAR",
    "WHEN",
    "WHERE",
    "WITH",
    "YEAR",
];

fn word(parser: &Parser<'_>, index: usize) -> Option<String> {
    let token = parser.peek_nth_token(index);
    match token.token {
        Token::Word(word) => Some(word.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn expect_word(parser: &mut Parser<'_>, expected: &str) -> Result<()> {
    let token = parser.next_token();
    match &token.token {
        Token::Word(word) if word.value.eq_ignore_ascii_case(expected) => Ok(()),
        other => Err(SqlError::parsing(format!(
            "Encountered \"{other}\" at line {}, column {}. Was expecting {expected}",
            token.span.start.line, token.span.start.column
        ))),
    }
}

fn identifier(parser: &mut Parser<'_>) -> Result<String> {
    let name = parser.parse_object_name(false).map_err(parse_error)?;
    let parts: Vec<String> =
        name.0.iter().map(|part| part.as_ident().map_or(part.to_string(), |i| i.value.clone())).collect();
    match parts.as_slice() {
        [name] => Ok(name.clone()),
        [schema, name] if schema == "public" => Ok(name.clone()),
        [catalog, schema, name] if catalog == "hazelcast" && schema == "public" => Ok(name.clone()),
        _ => Err(SqlError::parsing(format!("The mapping must be created in the \"public\" schema: {name}"))),
    }
}

/// CREATE [OR REPLACE] MAPPING, DROP MAPPING, SHOW MAPPINGS (None: another statement).
fn mapping_ddl(parser: &mut Parser<'_>, catalog: &Catalog, samples: &dyn Samples) -> Result<Option<Prepared>> {
    let (first, second, third) = (word(parser, 0), word(parser, 1), word(parser, 2));
    let is_mapping = |w: &Option<String>| w.as_deref() == Some("MAPPING");
    match first.as_deref() {
        Some("SHOW") if second.as_deref() == Some("MAPPINGS") => {
            parser.next_token();
            parser.next_token();
            end(parser)?;
            let rows = catalog.names().map(|name| vec![Value::String(name.to_owned())]).collect();
            let columns = vec![ColumnMeta { name: "name".into(), ty: SqlType::Varchar, nullable: false }];
            Ok(Some(Prepared::Rows(ResultSet { columns, rows })))
        }
        Some("DROP") if is_mapping(&second) => {
            parser.next_token();
            parser.next_token();
            let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
            let name = identifier(parser)?;
            end(parser)?;
            Ok(Some(Prepared::DropMapping { name, if_exists }))
        }
        Some("CREATE")
            if is_mapping(&second)
                || (second.as_deref() == Some("EXTERNAL") && is_mapping(&third))
                || (second.as_deref() == Some("OR")
                    && matches!(word(parser, 3).as_deref(), Some("MAPPING") | Some("EXTERNAL"))) =>
        {
            create_mapping(parser, samples).map(Some)
        }
        _ => Ok(None),
    }
}

/// `CREATE [OR REPLACE] [EXTERNAL] MAPPING [IF NOT EXISTS] name [EXTERNAL NAME n] [(columns)]
/// TYPE IMap [OPTIONS (...)]`, from its first word.
fn create_mapping(parser: &mut Parser<'_>, samples: &dyn Samples) -> Result<Prepared> {
    parser.next_token();
    let replace = parser.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    // (EXTERNAL MAPPING is MAPPING: Hazelcast's suggested DDL says it)
    let _ = parser.parse_keyword(Keyword::EXTERNAL);
    expect_word(parser, "MAPPING")?;
    let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    if replace && if_not_exists {
        return Err(SqlError::parsing("OR REPLACE in conjunction with IF NOT EXISTS not supported"));
    }
    let name = identifier(parser)?;
    let mut external = None;
    if parser.parse_keyword(Keyword::EXTERNAL) {
        expect_word(parser, "NAME")?;
        external = Some(identifier(parser)?);
    }
    let mut columns = Vec::new();
    if parser.consume_token(&Token::LParen) {
        loop {
            columns.push(column_spec(parser)?);
            if parser.consume_token(&Token::Comma) {
                continue;
            }
            parser.expect_token(&Token::RParen).map_err(parse_error)?;
            break;
        }
    }
    parser.expect_keyword(Keyword::TYPE).map_err(parse_error)?;
    let kind = identifier(parser)?;
    if !kind.eq_ignore_ascii_case("IMap") {
        return Err(SqlError::generic(format!("Unknown connector type: {kind}")));
    }
    let mut options = Vec::new();
    if parser.parse_keyword(Keyword::OPTIONS) {
        parser.expect_token(&Token::LParen).map_err(parse_error)?;
        if !parser.consume_token(&Token::RParen) {
            loop {
                let key = parser.parse_literal_string().map_err(parse_error)?;
                parser.expect_token(&Token::Eq).map_err(parse_error)?;
                let value = parser.parse_literal_string().map_err(parse_error)?;
                if options.iter().any(|(k, _): &(String, String)| *k == key) {
                    return Err(SqlError::parsing(format!("Option '{key}' specified more than once")));
                }
                options.push((key, value));
                if parser.consume_token(&Token::Comma) {
                    continue;
                }
                parser.expect_token(&Token::RParen).map_err(parse_error)?;
                break;
            }
        }
    }
    end(parser)?;
    let mapping = Mapping::new(&name, external.as_deref(), &columns, options, samples)?;
    Ok(Prepared::CreateMapping { mapping, replace, if_not_exists })
}

fn end(parser: &mut Parser<'_>) -> Result<()> {
    while parser.consume_token(&Token::SemiColon) {}
    let token = parser.next_token();
    match token.token {
        Token::EOF => Ok(()),
        other => Err(SqlError::parsing(format!(
            "Encountered \"{other}\" at line {}, column {}",
            token.span.start.line, token.span.start.column
        ))),
    }
}

fn column_spec(parser: &mut Parser<'_>) -> Result<ColumnSpec> {
    let token = parser.peek_token();
    if let Token::Word(word) = &token.token {
        if word.quote_style.is_none() && RESERVED.contains(&word.value.to_ascii_uppercase().as_str()) {
            return Err(SqlError::parsing(format!(
                "Encountered \"{}\" at line {}, column {}.\nWas expecting one of:\n    <IDENTIFIER> ...\n    <QUOTED_IDENTIFIER> ...\n",
                word.value, token.span.start.line, token.span.start.column
            )));
        }
    }
    let name = parser.parse_identifier().map_err(parse_error)?.value;
    let mut words = Vec::new();
    loop {
        let token = parser.peek_token();
        match &token.token {
            Token::Word(w) if w.keyword == Keyword::EXTERNAL => break,
            Token::Word(w) => {
                words.push(w.value.clone());
                parser.next_token();
            }
            Token::LParen => {
                // precision and scale (DECIMAL(10, 2), VARCHAR(20)) are accepted and ignored
                while !matches!(parser.next_token().token, Token::RParen | Token::EOF) {}
            }
            _ => break,
        }
    }
    let type_name = words.join(" ");
    let ty = SqlType::parse(&type_name).ok_or_else(|| SqlError::parsing(format!("Unknown type: {type_name}")))?;
    let mut external = None;
    if parser.parse_keyword(Keyword::EXTERNAL) {
        expect_word(parser, "NAME")?;
        let name = parser.parse_object_name(false).map_err(parse_error)?;
        let parts: Vec<String> =
            name.0.iter().map(|part| part.as_ident().map_or(part.to_string(), |i| i.value.clone())).collect();
        external = Some(parts.join("."));
    }
    Ok(ColumnSpec { name, ty, external })
}

fn single_source(relation: &sqlparser::ast::TableFactor, catalog: &Catalog) -> Result<Source> {
    let sqlparser::ast::TableFactor::Table { name, alias, .. } = relation else {
        return Err(SqlError::parsing(format!("Unsupported target: {relation}")));
    };
    let parts: Vec<String> =
        name.0.iter().map(|part| part.as_ident().map_or(part.to_string(), |i| i.value.clone())).collect();
    let mapping_name = parts.last().cloned().unwrap_or_default();
    let mapping = catalog.get(&mapping_name).ok_or_else(|| plan::object_not_found(&mapping_name))?;
    let alias = alias.as_ref().map_or(mapping_name.clone(), |a| a.name.value.clone());
    Ok(Source { mapping: mapping.clone(), alias, offset: 0, keys: None, inline: None })
}

/// A value expression as a column's type: numbers widen, a parameter keeps its value (so a
/// json-flat field is written as the client gave it), anything else must be of the type.
fn assignable(value: Expr, ty: SqlType, column: &str, source: &str) -> Result<Expr> {
    if plan::is_parameter(&value) {
        let original = value.clone();
        plan::bind_parameter(value, ty)?;
        return Ok(Expr { ty, ..original });
    }
    let compatible = value.ty == ty
        || value.ty == SqlType::Null
        || ty == SqlType::Object
        || (value.ty.is_numeric() && ty.is_numeric())
        || (value.ty.is_temporal() && ty.is_temporal())
        || (value.ty == SqlType::Varchar && ty == SqlType::Json);
    if compatible {
        return plan::widen(value, ty);
    }
    Err(SqlError::parsing(format!(
        "Cannot assign to target field '{column}' of type {} from source field '{source}' of type {}",
        ty.name(),
        value.ty.name()
    )))
}

fn insert_statement(
    insert: &sqlparser::ast::Insert,
    sink: bool,
    catalog: &Catalog,
    parameters: &Parameters,
) -> Result<Prepared> {
    let sqlparser::ast::TableObject::TableName(name) = &insert.table else {
        return Err(SqlError::parsing("INSERT into a table function is not supported"));
    };
    let parts: Vec<String> =
        name.0.iter().map(|part| part.as_ident().map_or(part.to_string(), |i| i.value.clone())).collect();
    let mapping_name = parts.last().cloned().unwrap_or_default();
    let mapping = catalog.get(&mapping_name).ok_or_else(|| plan::object_not_found(&mapping_name))?.clone();
    let targets: Vec<usize> = if insert.columns.is_empty() {
        mapping.visible().map(|(index, _)| index).collect()
    } else {
        let mut targets = Vec::new();
        for column in &insert.columns {
            let (index, _) = mapping
                .column(&column.value)
                .ok_or_else(|| SqlError::parsing(format!("Unknown target column '{}'", column.value)))?;
            targets.push(index);
        }
        targets
    };
    let Some(source) = &insert.source else {
        return Err(SqlError::parsing("INSERT without VALUES is not supported"));
    };
    let sqlparser::ast::SetExpr::Values(values) = source.body.as_ref() else {
        return insert_select(source, name, &mapping, targets, sink, catalog, parameters);
    };
    let mut entries = Vec::with_capacity(values.rows.len());
    let mut keys = std::collections::HashSet::new();
    let mut translator = Translator::new(&[], parameters);
    for row in &values.rows {
        if row.len() != targets.len() {
            return Err(plan::located(
                name.span(),
                SqlError::parsing(format!(
                    "Number of INSERT target columns ({}) does not equal number of source items ({})",
                    targets.len(),
                    row.len()
                )),
            ));
        }
        let mut full = vec![Value::Null; mapping.columns.len()];
        for (position, (target, item)) in targets.iter().zip(row).enumerate() {
            let column = &mapping.columns[*target];
            let where_ = insert.columns.get(position).map_or(name.span(), |c| c.span);
            let source = format!("EXPR${position}");
            let expr = assignable(translator.expr(item)?, column.ty, &column.name, &source)
                .map_err(|error| plan::located(where_, error))?;
            full[*target] = crate::exec::constant(&expr)?;
        }
        let entry = crate::write::encode(&mapping, &full)?;
        if sink && !keys.insert(entry.0.clone()) {
            // Hazelcast collects a SINK's rows into a map by key before writing any.
            return Err(SqlError::generic(format!("Duplicate key {}", key_text(&mapping, &full))));
        }
        entries.push(entry);
    }
    let schemas = mapping.compact_schemas().unwrap_or_default();
    Ok(Prepared::Insert { map: mapping.map.clone(), entries, overwrite: sink, schemas })
}

/// `INSERT INTO m SELECT ...`: the query's columns must be assignable to the targets; the
/// member runs the query, then writes its rows ([`Prepared::InsertSelect`]).
fn insert_select(
    query: &sqlparser::ast::Query,
    name: &sqlparser::ast::ObjectName,
    mapping: &Mapping,
    targets: Vec<usize>,
    overwrite: bool,
    catalog: &Catalog,
    parameters: &Parameters,
) -> Result<Prepared> {
    let plan = plan::select(query, catalog, parameters)?;
    if plan.columns.len() != targets.len() {
        return Err(plan::located(
            name.span(),
            SqlError::parsing(format!(
                "Number of INSERT target columns ({}) does not equal number of source items ({})",
                targets.len(),
                plan.columns.len()
            )),
        ));
    }
    for (position, (target, column)) in targets.iter().zip(&plan.columns).enumerate() {
        let target = &mapping.columns[*target];
        let probe = Expr::new(crate::expr::Kind::Column(position), column.ty);
        assignable(probe, target.ty, &target.name, &column.name).map_err(|error| plan::located(name.span(), error))?;
    }
    let schemas = mapping.compact_schemas().unwrap_or_default();
    Ok(Prepared::InsertSelect(Box::new(InsertSelect { plan, target: mapping.clone(), targets, overwrite, schemas })))
}

/// A planned `INSERT ... SELECT`.
#[derive(Debug, Clone)]
pub struct InsertSelect {
    pub plan: SelectPlan,
    pub target: Mapping,
    /// The target column of each of the query's columns.
    pub targets: Vec<usize>,
    pub overwrite: bool,
    pub schemas: Vec<ferrogrid_query::schema::Schema>,
}

impl InsertSelect {
    /// The query's result rows as the target map's entries.
    pub fn entries(&self, rows: Vec<Vec<Value>>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut entries = Vec::with_capacity(rows.len());
        for row in rows {
            let mut full = vec![Value::Null; self.target.columns.len()];
            for (value, target) in row.into_iter().zip(&self.targets) {
                full[*target] = crate::expr::to_type(value, self.target.columns[*target].ty)?;
            }
            entries.push(crate::write::encode(&self.target, &full)?);
        }
        Ok(entries)
    }
}
