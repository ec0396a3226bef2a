//! From a parsed query (sqlparser's AST) to a plan: names resolved against the mappings,
//! expressions typed ([`crate::expr`]), parameters bound, aggregates collected, and the keys
//! of point lookups (`WHERE __key = ?`) found so that the member reads only their partitions.
//!
//! A row, while a query runs, is every column of every source (hidden ones included), one
//! source after another in FROM order; after grouping it is the group keys, then the
//! aggregates' results.

pub mod virtual_tables;

use crate::catalog::{Catalog, Mapping};
use crate::error::{Result, SqlError};
use crate::expr::functions;
use crate::expr::{bits_of, integer_bits, Arithmetic, Comparison, Expr, Kind, MAX_DEPTH};
use crate::types::{self, SqlType};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use sqlparser::ast;
use sqlparser::ast::Spanned;
use sqlparser::tokenizer::Span;

/// One source of rows: a mapping and where its columns start in a row.
#[derive(Debug, Clone)]
pub struct Source {
    pub mapping: Mapping,
    pub alias: String,
    pub offset: usize,
    /// The serialized keys a point lookup reads (None: every entry).
    pub keys: Option<Vec<Vec<u8>>>,
    /// Entries the statement itself supplies (a table function, `information_schema`): not
    /// scanned from any map.
    pub inline: Option<crate::catalog::Entries>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
}

/// How source `i + 1` joins the sources before it.
#[derive(Debug, Clone)]
pub struct Join {
    pub kind: JoinKind,
    pub on: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateFunction {
    CountAll,
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// One aggregate call of a grouped query.
#[derive(Debug, Clone)]
pub struct AggregateCall {
    pub function: AggregateFunction,
    pub argument: Option<Expr>,
    pub distinct: bool,
    pub ty: SqlType,
    /// Its text, so the same call written twice is computed once.
    text: String,
}

#[derive(Debug, Clone)]
pub struct Grouping {
    pub keys: Vec<Expr>,
    pub calls: Vec<AggregateCall>,
    pub having: Option<Expr>,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMeta {
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
}

#[derive(Debug, Clone)]
pub struct OrderKey {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

/// A SELECT ready to run over its sources' entries.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    pub sources: Vec<Source>,
    pub joins: Vec<Join>,
    pub filter: Option<Expr>,
    pub grouping: Option<Grouping>,
    pub projection: Vec<Expr>,
    pub columns: Vec<ColumnMeta>,
    pub order: Vec<OrderKey>,
    pub distinct: bool,
    pub offset: usize,
    pub limit: Option<usize>,
    /// A UNION: its branches (whose sources are this plan's, in order) and whether it keeps
    /// duplicates (UNION ALL). This plan's projection is then the identity over their rows.
    pub union: Option<Box<Union>>,
}

#[derive(Debug, Clone)]
pub struct Union {
    pub branches: Vec<SelectPlan>,
    pub all: bool,
}

/// Placeholders (`?`) numbered by where they are in the text.
#[derive(Debug, Default)]
pub struct Parameters {
    pub values: Vec<Value>,
    /// The statement's text (to widen sqlparser's spans of CAST and calls to their ')').
    pub text: String,
    /// (line, column) of each `?`, in text order.
    pub positions: Vec<(u64, u64)>,
}

impl Parameters {
    fn value(&self, span: &sqlparser::tokenizer::Span) -> Result<(usize, Value)> {
        let index = self
            .positions
            .iter()
            .position(|position| *position == (span.start.line, span.start.column))
            .ok_or_else(|| SqlError::parsing("Unexpected parameter"))?;
        match self.values.get(index) {
            Some(value) => Ok((index, value.clone())),
            None => Err(SqlError::data(format!(
                "Unexpected parameter count: expected {}, got {}",
                self.positions.len(),
                self.values.len()
            ))),
        }
    }
}

#[derive(Debug)]
enum Mode {
    Row,
    Grouped { keys: Vec<(String, Expr)>, calls: Vec<AggregateCall> },
}

/// Translates AST expressions over a scope of sources.
#[derive(Debug)]
pub struct Translator<'a> {
    sources: &'a [Source],
    parameters: &'a Parameters,
    mode: Mode,
    depth: usize,
    /// Aliases of the select list (for ORDER BY).
    aliases: Vec<(String, Expr)>,
}

fn ident_name(ident: &ast::Ident) -> String {
    ident.value.clone()
}

impl<'a> Translator<'a> {
    pub fn new(sources: &'a [Source], parameters: &'a Parameters) -> Translator<'a> {
        Translator { sources, parameters, mode: Mode::Row, depth: 0, aliases: Vec::new() }
    }

    fn column(&self, parts: &[ast::Ident]) -> Result<Expr> {
        let (qualifier, name) = match parts {
            [name] => (None, ident_name(name)),
            [table, name] => (Some(ident_name(table)), ident_name(name)),
            _ => {
                let text: Vec<String> = parts.iter().map(ident_name).collect();
                return Err(SqlError::parsing(format!("Column '{}' not found in any table", text.join("."))));
            }
        };
        let mut found = None;
        for source in self.sources {
            if let Some(qualifier) = &qualifier {
                if &source.alias != qualifier {
                    continue;
                }
            }
            if let Some((index, column)) = source.mapping.column(&name) {
                if found.is_some() {
                    return Err(SqlError::parsing(format!("Column '{name}' is ambiguous")));
                }
                found = Some(Expr::column(source.offset + index, column.ty));
            }
        }
        match (found, qualifier) {
            (Some(expr), _) => Ok(expr),
            (None, Some(table)) if !self.sources.iter().any(|s| s.alias == table) => {
                Err(SqlError::parsing(format!("Table '{table}' not found")))
            }
            (None, Some(table)) => Err(SqlError::parsing(format!("Column '{name}' not found in table '{table}'"))),
            (None, None) => Err(SqlError::parsing(format!("Column '{name}' not found in any table"))),
        }
    }

    /// Translates `expr`, with the depth bound.
    pub fn expr(&mut self, expr: &ast::Expr) -> Result<Expr> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SqlError::generic(format!("The expression is nested more than {MAX_DEPTH} levels deep")));
        }
        let result = self.expr_inner(expr).map_err(|error| match expr {
            _ if !needs_location(&error) => error,
            ast::Expr::CompoundIdentifier(parts) => located(parts.last().map_or(expr.span(), |p| p.span), error),
            ast::Expr::Cast { .. } | ast::Expr::Function(_) => located(
                to_closing_paren(expr.span(), &self.parameters.text, matches!(expr, ast::Expr::Cast { .. })),
                error,
            ),
            _ => located(expr.span(), error),
        });
        self.depth -= 1;
        result
    }

    fn grouped(&mut self, expr: &ast::Expr) -> Result<Option<Expr>> {
        let Mode::Grouped { keys, .. } = &self.mode else { return Ok(None) };
        let text = expr.to_string();
        if let Some(index) = keys.iter().position(|(key, _)| *key == text) {
            return Ok(Some(Expr::column(index, keys[index].1.ty)));
        }
        if let ast::Expr::Function(function) = expr {
            if let Some(aggregate) = aggregate_function(function)? {
                return self.aggregate(aggregate, function, text).map(Some);
            }
        }
        if let ast::Expr::Identifier(ident) = expr {
            if self.aliases.iter().any(|(name, _)| *name == ident.value) {
                return Ok(None);
            }
        }
        if let ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) = expr {
            return Err(SqlError::parsing(format!("Expression '{text}' is not being grouped")));
        }
        Ok(None)
    }

    fn aggregate(&mut self, function: AggregateFunction, call: &ast::Function, text: String) -> Result<Expr> {
        let key_count = match &self.mode {
            Mode::Grouped { keys, calls } => {
                if let Some(index) = calls.iter().position(|c| c.text == text) {
                    return Ok(Expr::column(keys.len() + index, calls[index].ty));
                }
                keys.len()
            }
            Mode::Row => unreachable!("aggregates are translated in grouped mode"),
        };
        let (args, distinct) = function_args(call)?;
        let mut row = Translator::new(self.sources, self.parameters);
        let (function, argument) = match (function, args.as_slice()) {
            (AggregateFunction::Count, [FnArg::Wildcard]) => (AggregateFunction::CountAll, None),
            (_, [FnArg::Expr(arg)]) => {
                if contains_aggregate(arg)? {
                    return Err(SqlError::parsing("Aggregate expressions cannot be nested"));
                }
                (function, Some(row.expr(arg)?))
            }
            _ => return Err(SqlError::parsing(format!("Invalid number of arguments to function '{}'", call.name))),
        };
        let ty = match (function, argument.as_ref().map(|a| a.ty)) {
            (AggregateFunction::CountAll | AggregateFunction::Count, _) => SqlType::BigInt,
            (AggregateFunction::Sum | AggregateFunction::Avg, Some(SqlType::BigInt)) => SqlType::Decimal,
            (AggregateFunction::Sum, Some(ty)) if ty.is_integer() => SqlType::BigInt,
            (AggregateFunction::Sum, Some(SqlType::Real)) => SqlType::Real,
            (AggregateFunction::Sum | AggregateFunction::Avg, Some(ty)) if ty.is_numeric() => {
                if function == AggregateFunction::Avg && ty.is_integer() {
                    SqlType::Decimal
                } else {
                    ty
                }
            }
            (AggregateFunction::Sum | AggregateFunction::Avg, Some(ty)) => {
                return Err(SqlError::parsing(format!(
                    "Cannot apply '{}' function to [{}] (consider adding an explicit CAST)",
                    call.name.to_string().to_uppercase(),
                    ty.name()
                )))
            }
            (_, Some(ty)) => ty,
            (_, None) => SqlType::Null,
        };
        let Mode::Grouped { calls, .. } = &mut self.mode else { unreachable!() };
        calls.push(AggregateCall { function, argument, distinct, ty, text });
        Ok(Expr::column(key_count + calls.len() - 1, ty))
    }

    fn expr_inner(&mut self, expr: &ast::Expr) -> Result<Expr> {
        if let Some(grouped) = self.grouped(expr)? {
            return Ok(grouped);
        }
        use ast::Expr as E;
        match expr {
            E::Identifier(ident) => {
                if let Some((_, aliased)) = self.aliases.iter().find(|(name, _)| *name == ident.value) {
                    return Ok(aliased.clone());
                }
                self.column(std::slice::from_ref(ident))
            }
            E::CompoundIdentifier(parts) => self.column(parts),
            E::Nested(inner) => self.expr(inner),
            E::Value(value) => self.literal(value),
            E::UnaryOp { op, expr: operand } => {
                let operand = self.expr(operand)?;
                match op {
                    ast::UnaryOperator::Not => {
                        Ok(Expr::new(Kind::Not(Box::new(boolean(operand, "NOT")?)), SqlType::Boolean))
                    }
                    ast::UnaryOperator::Minus => {
                        if let Some(value) = operand.constant() {
                            return Ok(negate_literal(value, operand.ty));
                        }
                        if !operand.ty.is_numeric() {
                            return Err(cannot_apply("-", &[operand.ty]));
                        }
                        let ty = if operand.ty.is_integer() {
                            SqlType::integer_of_bits(operand.ty.bits() + 1)
                        } else {
                            operand.ty
                        };
                        Ok(Expr::new(Kind::Negate(Box::new(operand)), ty))
                    }
                    ast::UnaryOperator::Plus => Ok(operand),
                    other => Err(SqlError::parsing(format!("Unsupported operator {other}"))),
                }
            }
            E::BinaryOp { left, op, right } => self.binary(left, op, right),
            E::IsNull(operand) => Ok(Expr::new(Kind::IsNull(Box::new(self.expr(operand)?), false), SqlType::Boolean)),
            E::IsNotNull(operand) => Ok(Expr::new(Kind::IsNull(Box::new(self.expr(operand)?), true), SqlType::Boolean)),
            E::IsTrue(o) => self.is_bool(o, true, false),
            E::IsNotTrue(o) => self.is_bool(o, true, true),
            E::IsFalse(o) => self.is_bool(o, false, false),
            E::IsNotFalse(o) => self.is_bool(o, false, true),
            E::Between { expr: operand, negated, low, high } => {
                let operand = self.expr(operand)?;
                let low = self.expr(low)?;
                let high = self.expr(high)?;
                let (operand, low) = unify_comparison("BETWEEN", operand, low)?;
                let (operand, high) = unify_comparison("BETWEEN", operand, high)?;
                Ok(Expr::new(
                    Kind::Between {
                        operand: Box::new(operand),
                        low: Box::new(low),
                        high: Box::new(high),
                        negated: *negated,
                        symmetric: false,
                    },
                    SqlType::Boolean,
                ))
            }
            E::InList { expr: operand, list, negated } => {
                let mut operand = self.expr(operand)?;
                let mut items = Vec::with_capacity(list.len());
                for item in list {
                    let item = self.expr(item)?;
                    let (o, item) = unify_comparison("IN", operand, item)?;
                    operand = o;
                    items.push(item);
                }
                Ok(Expr::new(Kind::In { operand: Box::new(operand), list: items, negated: *negated }, SqlType::Boolean))
            }
            E::Like { negated, any: false, expr: operand, pattern, escape_char } => {
                let operand = varchar(self.expr(operand)?, "LIKE")?;
                let pattern = varchar(self.expr(pattern)?, "LIKE")?;
                let escape = escape_char.as_ref().map(|escape| {
                    let text = match escape {
                        ast::Value::SingleQuotedString(text) => text.clone(),
                        other => other.to_string(),
                    };
                    Box::new(Expr::literal(Value::String(text), SqlType::Varchar))
                });
                Ok(Expr::new(
                    Kind::Like { operand: Box::new(operand), pattern: Box::new(pattern), escape, negated: *negated },
                    SqlType::Boolean,
                ))
            }
            E::Cast { expr: operand, data_type, .. } => {
                let ty = data_type_of(data_type)?;
                let operand = self.expr(operand)?;
                if is_parameter(&operand) {
                    let value = operand.constant().cloned().unwrap_or(Value::Null);
                    let converted = crate::types::convert(value, ty)?;
                    return Ok(Expr::literal(converted, ty));
                }
                check_cast(operand.ty, ty)?;
                if let Some(value) = operand.constant() {
                    // Hazelcast converts literals while it validates: a bad one is a parse error
                    if value.is_null() {
                        return Ok(Expr::literal(Value::Null, ty));
                    }
                    if let Value::Double(double) = value {
                        if ty == SqlType::Varchar {
                            return Ok(Expr::literal(Value::String(calcite_double(*double)), ty));
                        }
                        if ty.is_integer() {
                            // Hazelcast parses the literal's text as an integer
                            let text = crate::types::format_java_double(*double);
                            return Err(SqlError::generic(format!("For input string: \"{text}\"")));
                        }
                    }
                    let converted = Expr::new(Kind::Cast(Box::new(operand.clone())), ty).eval(&[]);
                    return match converted {
                        Ok(value) => Ok(Expr::literal(value, ty)),
                        Err(error) => Err(SqlError::parsing(format!(
                            "CAST function cannot convert literal {} to type {}: {}",
                            literal_text(value),
                            ty.name(),
                            error.message
                        ))),
                    };
                }
                Ok(Expr::new(Kind::Cast(Box::new(operand)), ty))
            }
            E::Case { operand, conditions, else_result, .. } => {
                let base = match operand {
                    Some(operand) => Some(self.expr(operand)?),
                    None => None,
                };
                let mut whens = Vec::new();
                for when in conditions {
                    let condition = self.expr(&when.condition)?;
                    let condition = match &base {
                        Some(base) => {
                            let (l, r) = unify_comparison("=", base.clone(), condition)?;
                            Expr::new(Kind::Compare(Comparison::Equal, Box::new(l), Box::new(r)), SqlType::Boolean)
                        }
                        None => boolean(condition, "CASE")?,
                    };
                    whens.push((condition, self.expr(&when.result)?));
                }
                let otherwise = match else_result {
                    Some(result) => Some(Box::new(self.expr(result)?)),
                    None => None,
                };
                let ty = functions::common_type(whens.iter().map(|(_, r)| r.ty).chain(otherwise.iter().map(|o| o.ty)))?;
                Ok(Expr::new(Kind::Case { whens, otherwise }, ty))
            }
            E::Function(function) => self.function(function),
            E::Substring { expr: operand, substring_from, substring_for, .. } => {
                let mut args = vec![varchar(self.expr(operand)?, "SUBSTRING")?];
                args.push(match substring_from {
                    Some(from) => self.expr(from)?,
                    None => Expr::literal(Value::Int(1), SqlType::Integer),
                });
                if let Some(length) = substring_for {
                    args.push(self.expr(length)?);
                }
                Ok(Expr::new(Kind::Call(crate::expr::Function::Substring, args), SqlType::Varchar))
            }
            E::Trim { expr: operand, trim_where, trim_what, .. } => {
                let (leading, trailing) = match trim_where {
                    Some(ast::TrimWhereField::Leading) => (true, false),
                    Some(ast::TrimWhereField::Trailing) => (false, true),
                    _ => (true, true),
                };
                let mut args = vec![varchar(self.expr(operand)?, "TRIM")?];
                if let Some(what) = trim_what {
                    args.push(varchar(self.expr(what)?, "TRIM")?);
                }
                Ok(Expr::new(Kind::Call(crate::expr::Function::Trim { leading, trailing }, args), SqlType::Varchar))
            }
            E::Position { expr: needle, r#in } => {
                let args = vec![varchar(self.expr(needle)?, "POSITION")?, varchar(self.expr(r#in)?, "POSITION")?];
                Ok(Expr::new(Kind::Call(crate::expr::Function::Position, args), SqlType::Integer))
            }
            E::Ceil { expr: operand, .. } => {
                let args = vec![self.expr(operand)?];
                let ty = functions::result_type(crate::expr::Function::Ceil, "CEIL", &args)?;
                Ok(Expr::new(Kind::Call(crate::expr::Function::Ceil, args), ty))
            }
            E::Floor { expr: operand, .. } => {
                let args = vec![self.expr(operand)?];
                let ty = functions::result_type(crate::expr::Function::Floor, "FLOOR", &args)?;
                Ok(Expr::new(Kind::Call(crate::expr::Function::Floor, args), ty))
            }
            E::TypedString(typed) => {
                let ty = data_type_of(&typed.data_type)?;
                let text = match &typed.value.value {
                    ast::Value::SingleQuotedString(text) => text.clone(),
                    other => other.to_string(),
                };
                types::convert(Value::String(text), ty).map(|value| Expr::literal(value, ty))
            }
            E::InSubquery { .. } => Err(SqlError::parsing("Sub-queries are not supported for IN operator.")),
            E::IsNotDistinctFrom(..) => Err(SqlError::parsing("IS NOT DISTINCT FROM not supported")),
            E::IsDistinctFrom(..) => Err(SqlError::parsing("IS DISTINCT FROM not supported")),
            E::Subquery(_) | E::Exists { .. } => Err(SqlError::parsing("Sub-queries are not supported")),
            other => Err(SqlError::parsing(format!("Unsupported expression: {other}"))),
        }
    }

    fn is_bool(&mut self, operand: &ast::Expr, wanted: bool, negated: bool) -> Result<Expr> {
        let operand = boolean(self.expr(operand)?, "IS TRUE")?;
        Ok(Expr::new(Kind::IsBool(Box::new(operand), wanted, negated), SqlType::Boolean))
    }

    fn literal(&mut self, value: &ast::ValueWithSpan) -> Result<Expr> {
        match &value.value {
            ast::Value::Number(text, _) => number_literal(text),
            ast::Value::SingleQuotedString(text) => Ok(Expr::literal(Value::String(text.clone()), SqlType::Varchar)),
            ast::Value::Boolean(v) => Ok(Expr::literal(Value::Bool(*v), SqlType::Boolean)),
            ast::Value::Null => Ok(Expr::literal(Value::Null, SqlType::Null)),
            ast::Value::Placeholder(_) => {
                let (index, value) = self.parameters.value(&value.span)?;
                let value = match value {
                    Value::Char(c) => Value::String(String::from_utf16_lossy(&[c])),
                    Value::BigInteger(v) => Value::BigDecimal(BigDecimal::new(v, 0)),
                    other => other,
                };
                let ty = SqlType::of_value(&value);
                let at = self.parameters.positions[index];
                Ok(Expr { kind: Kind::Parameter { index, at, value }, ty })
            }
            other => Err(SqlError::parsing(format!("Unsupported literal: {other}"))),
        }
    }

    fn binary(&mut self, left: &ast::Expr, op: &ast::BinaryOperator, right: &ast::Expr) -> Result<Expr> {
        use ast::BinaryOperator as B;
        if matches!(op, B::And | B::Or) {
            // A chain `a AND b AND c ...` is a left-deep tree as deep as it is long: walk its
            // left spine in a loop, so that its length costs no stack.
            let mut operands = vec![right];
            let mut spine = left;
            loop {
                match spine {
                    ast::Expr::BinaryOp { left, op: inner, right } if inner == op => {
                        operands.push(right);
                        spine = left;
                    }
                    _ => break,
                }
            }
            operands.push(spine);
            let name = if *op == B::And { "AND" } else { "OR" };
            let mut items = Vec::with_capacity(operands.len());
            for operand in operands.into_iter().rev() {
                let translated = boolean(self.expr(operand)?, name)?;
                match translated.kind {
                    Kind::And(inner) if *op == B::And => items.extend(inner),
                    Kind::Or(inner) if *op == B::Or => items.extend(inner),
                    kind => items.push(Expr { kind, ty: translated.ty }),
                }
            }
            let kind = if *op == B::And { Kind::And(items) } else { Kind::Or(items) };
            return Ok(Expr::new(kind, SqlType::Boolean));
        }
        let (l, r) = (self.expr(left)?, self.expr(right)?);
        let comparison = match op {
            B::Eq => Some(Comparison::Equal),
            B::NotEq => Some(Comparison::NotEqual),
            B::Lt => Some(Comparison::Less),
            B::LtEq => Some(Comparison::LessOrEqual),
            B::Gt => Some(Comparison::Greater),
            B::GtEq => Some(Comparison::GreaterOrEqual),
            _ => None,
        };
        if let Some(comparison) = comparison {
            let (l, r) = unify_comparison(comparison.symbol(), l, r)?;
            return Ok(Expr::new(Kind::Compare(comparison, Box::new(l), Box::new(r)), SqlType::Boolean));
        }
        let arithmetic = match op {
            B::Plus => Some(Arithmetic::Add),
            B::Minus => Some(Arithmetic::Subtract),
            B::Multiply => Some(Arithmetic::Multiply),
            B::Divide => Some(Arithmetic::Divide),
            B::Modulo => Some(Arithmetic::Remainder),
            _ => None,
        };
        if let Some(arithmetic) = arithmetic {
            let l = arithmetic_parameter(l, &r)?;
            let r = arithmetic_parameter(r, &l)?;
            let ty = arithmetic_type(arithmetic, &l, &r)?;
            return Ok(Expr::new(Kind::Arithmetic(arithmetic, Box::new(l), Box::new(r)), ty));
        }
        match op {
            B::And => Ok(Expr::new(Kind::And(flatten(boolean(l, "AND")?, boolean(r, "AND")?, true)), SqlType::Boolean)),
            B::Or => Ok(Expr::new(Kind::Or(flatten(boolean(l, "OR")?, boolean(r, "OR")?, false)), SqlType::Boolean)),
            B::StringConcat => {
                let (l, r) = (varchar(l, "||")?, varchar(r, "||")?);
                Ok(Expr::new(Kind::Call(crate::expr::Function::Concat, vec![l, r]), SqlType::Varchar))
            }
            other => Err(SqlError::parsing(format!("Unsupported operator {other}"))),
        }
    }

    fn function(&mut self, call: &ast::Function) -> Result<Expr> {
        let name = call.name.to_string();
        if aggregate_function(call)?.is_some() {
            return Err(SqlError::parsing(format!("Aggregate function {} is not allowed here", name.to_uppercase())));
        }
        let Some(mut function) = functions::by_name(&name) else {
            return Err(SqlError::parsing(format!("Function '{name}' does not exist")));
        };
        let (args, _) = function_args(call)?;
        let mut translated = Vec::new();
        for arg in args {
            match arg {
                FnArg::Expr(arg) => translated.push(self.expr(arg)?),
                FnArg::Wildcard => return Err(SqlError::parsing(format!("'*' is not an argument of {name}"))),
            }
        }
        // JSON_VALUE(x, p RETURNING t) and JSON_QUERY(x, p WITH WRAPPER) arrive with the
        // clause as a third, text argument (statement.rs rewrites them: sqlparser has no syntax
        // for them).
        let mut returning = None;
        if matches!(function, crate::expr::Function::JsonValue | crate::expr::Function::JsonQuery)
            && translated.len() == 3
        {
            let clause = translated
                .pop()
                .and_then(|e| e.constant().cloned())
                .map(|v| crate::types::to_text(&v))
                .unwrap_or_default();
            if let Some(ty) = clause.strip_prefix("RETURNING ") {
                returning = Some(SqlType::parse(ty).ok_or_else(|| SqlError::parsing(format!("Unknown type: {ty}")))?);
            } else if clause == "WITH WRAPPER" {
                function = crate::expr::Function::JsonQueryWrapped;
            }
        }
        let ty = functions::result_type(function, &name.to_uppercase(), &translated)?;
        if let Some(returning) = returning {
            let call = Expr::new(Kind::Call(function, translated), ty);
            return Ok(Expr::new(Kind::Cast(Box::new(call)), returning));
        }
        if let crate::expr::Function::Coalesce = function {
            translated = translated.into_iter().map(|arg| widen(arg, ty)).collect::<Result<_>>()?;
        }
        Ok(Expr::new(Kind::Call(function, translated), ty))
    }
}

enum FnArg<'a> {
    Expr(&'a ast::Expr),
    Wildcard,
}

fn function_args(call: &ast::Function) -> Result<(Vec<FnArg<'_>>, bool)> {
    match &call.args {
        ast::FunctionArguments::None => Ok((Vec::new(), false)),
        ast::FunctionArguments::List(list) => {
            let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct));
            let mut args = Vec::new();
            for arg in &list.args {
                match arg {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(expr)) => args.push(FnArg::Expr(expr)),
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => args.push(FnArg::Wildcard),
                    other => return Err(SqlError::parsing(format!("Unsupported function argument: {other}"))),
                }
            }
            Ok((args, distinct))
        }
        ast::FunctionArguments::Subquery(_) => Err(SqlError::parsing("Sub-queries are not supported")),
    }
}

fn aggregate_function(call: &ast::Function) -> Result<Option<AggregateFunction>> {
    Ok(match call.name.to_string().to_ascii_uppercase().as_str() {
        "COUNT" => Some(AggregateFunction::Count),
        "SUM" => Some(AggregateFunction::Sum),
        "AVG" => Some(AggregateFunction::Avg),
        "MIN" => Some(AggregateFunction::Min),
        "MAX" => Some(AggregateFunction::Max),
        _ => None,
    })
}

/// Whether an AST expression contains an aggregate call (looked for at most
/// [`MAX_DEPTH`] levels down: deeper expressions fail translation anyway).
pub fn contains_aggregate(expr: &ast::Expr) -> Result<bool> {
    fn walk(expr: &ast::Expr, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        use ast::Expr as E;
        match expr {
            E::Function(f) => {
                matches!(aggregate_function(f), Ok(Some(_)))
                    || function_args(f).is_ok_and(|(args, _)| {
                        args.iter().any(|arg| matches!(arg, FnArg::Expr(e) if walk(e, depth + 1)))
                    })
            }
            E::BinaryOp { left, right, .. } => walk(left, depth + 1) || walk(right, depth + 1),
            E::UnaryOp { expr, .. }
            | E::Nested(expr)
            | E::IsNull(expr)
            | E::IsNotNull(expr)
            | E::IsTrue(expr)
            | E::IsFalse(expr)
            | E::IsNotTrue(expr)
            | E::IsNotFalse(expr)
            | E::Cast { expr, .. } => walk(expr, depth + 1),
            E::Between { expr, low, high, .. } => {
                walk(expr, depth + 1) || walk(low, depth + 1) || walk(high, depth + 1)
            }
            E::InList { expr, list, .. } => walk(expr, depth + 1) || list.iter().any(|e| walk(e, depth + 1)),
            E::Like { expr, pattern, .. } => walk(expr, depth + 1) || walk(pattern, depth + 1),
            E::Case { operand, conditions, else_result, .. } => {
                operand.as_deref().is_some_and(|e| walk(e, depth + 1))
                    || conditions.iter().any(|w| walk(&w.condition, depth + 1) || walk(&w.result, depth + 1))
                    || else_result.as_deref().is_some_and(|e| walk(e, depth + 1))
            }
            _ => false,
        }
    }
    Ok(walk(expr, 0))
}

fn flatten(l: Expr, r: Expr, and: bool) -> Vec<Expr> {
    let mut items = Vec::new();
    for side in [l, r] {
        match side.kind {
            Kind::And(inner) if and => items.extend(inner),
            Kind::Or(inner) if !and => items.extend(inner),
            kind => items.push(Expr { kind, ty: side.ty }),
        }
    }
    items
}

fn cannot_apply(op: &str, types: &[SqlType]) -> SqlError {
    let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
    SqlError::parsing(format!(
        "Cannot apply '{op}' operator to [{}] (consider adding an explicit CAST)",
        names.join(", ")
    ))
}

fn boolean(expr: Expr, op: &str) -> Result<Expr> {
    match expr.ty {
        SqlType::Boolean => Ok(expr),
        SqlType::Null => Ok(Expr { ty: SqlType::Boolean, ..expr }),
        ty => Err(cannot_apply(op, &[ty])),
    }
}

fn varchar(expr: Expr, op: &str) -> Result<Expr> {
    match expr.ty {
        SqlType::Varchar => Ok(expr),
        SqlType::Null => Ok(Expr { ty: SqlType::Varchar, ..expr }),
        _ if op == "||" => Ok(Expr::new(Kind::Cast(Box::new(expr)), SqlType::Varchar)),
        ty => Err(SqlError::parsing(format!(
            "Cannot apply '{op}' function to [{}] (consider adding an explicit CAST)",
            ty.name()
        ))),
    }
}

/// `expr` converted to `ty` (a literal now, anything else when evaluated).
pub fn widen(expr: Expr, ty: SqlType) -> Result<Expr> {
    if expr.ty == ty || ty == SqlType::Object {
        return Ok(expr);
    }
    if let Some(value) = expr.constant() {
        let value = crate::expr::to_type(value.clone(), ty)?;
        return Ok(Expr::literal(value, ty));
    }
    Ok(Expr::new(Kind::Cast(Box::new(expr)), ty))
}

/// Both sides of a comparison as one type: numbers widen, a VARCHAR literal or parameter is
/// converted to the other side's type, anything else must already agree.
fn unify_comparison(op: &str, l: Expr, r: Expr) -> Result<(Expr, Expr)> {
    let (l, r) = match (is_parameter(&l), is_parameter(&r)) {
        (false, true) => {
            let ty = l.ty;
            (l, bind_parameter(r, ty)?)
        }
        (true, false) => {
            let ty = r.ty;
            (bind_parameter(l, ty)?, r)
        }
        _ => (l, r),
    };
    let (lt, rt) = (l.ty, r.ty);
    if lt == rt || lt == SqlType::Null || rt == SqlType::Null || lt == SqlType::Object || rt == SqlType::Object {
        return Ok((l, r));
    }
    if lt.is_numeric() && rt.is_numeric() {
        let ty = lt.wider(rt);
        return Ok((widen(l, ty)?, widen(r, ty)?));
    }
    if lt.is_temporal() && rt.is_temporal() {
        return Ok((l, widen(r, lt)?));
    }
    Err(cannot_apply(op, &[lt, rt]))
}

pub fn is_parameter(expr: &Expr) -> bool {
    matches!(expr.kind, Kind::Parameter { .. })
}

/// A parameter given the type its context expects: its value converted, or Hazelcast's error
/// when the value is of another type (integers widen, numbers become approximate or decimal).
pub fn bind_parameter(expr: Expr, ty: SqlType) -> Result<Expr> {
    let Kind::Parameter { index, at, value } = expr.kind else { return Ok(expr) };
    let from = SqlType::of_value(&value);
    let fits = value.is_null()
        || from == ty
        || matches!(ty, SqlType::Object | SqlType::Null)
        || (from.is_integer()
            && ty.is_integer()
            && crate::types::to_integer(&value).is_some_and(|v| crate::types::integer_value(v, ty).is_some()))
        || (from.is_numeric() && matches!(ty, SqlType::Real | SqlType::Double | SqlType::Decimal))
        || (from == SqlType::Varchar && ty == SqlType::Json);
    if !fits {
        return Err(SqlError::data(format!(
            "At line {}, column {}: Parameter at position {index} must be of {} type, but {} was found (consider adding an explicit CAST)",
            at.0,
            at.1,
            ty.name(),
            from.name()
        )));
    }
    let value = crate::expr::to_type(value, ty)?;
    Ok(Expr { kind: Kind::Parameter { index, at, value }, ty })
}

/// A parameter in arithmetic: BIGINT beside an integer, else the other side's type.
fn arithmetic_parameter(expr: Expr, other: &Expr) -> Result<Expr> {
    if !is_parameter(&expr) || is_parameter(other) && other.ty == SqlType::Null {
        return Ok(expr);
    }
    let ty = if other.ty.is_integer() || is_parameter(other) { SqlType::BigInt } else { other.ty };
    if !ty.is_numeric() {
        return Ok(expr);
    }
    bind_parameter(expr, ty)
}

/// sqlparser's span of `CAST(x AS t)` covers `x` only, and a call's stops before its `)`:
/// the span from the keyword (CAST) to the closing parenthesis, found in the text.
fn to_closing_paren(span: Span, text: &str, cast: bool) -> Span {
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
fn needs_location(error: &SqlError) -> bool {
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

fn literal_text(value: &Value) -> String {
    match value {
        Value::String(text) => format!("'{text}'"),
        other => types::to_text(other),
    }
}

fn check_cast(from: SqlType, to: SqlType) -> Result<()> {
    let allowed = from == to
        || from == SqlType::Null
        || to == SqlType::Varchar
        || from == SqlType::Varchar
        || to == SqlType::Object
        || from == SqlType::Object
        || (from.is_numeric() && to.is_numeric())
        || (from.is_temporal() && to.is_temporal())
        || (from == SqlType::Json && to == SqlType::Varchar);
    if allowed {
        Ok(())
    } else {
        Err(SqlError::parsing(format!(
            "CAST function cannot convert value of type {} to type {}",
            from.name(),
            to.name()
        )))
    }
}

/// Hazelcast's literal types: the narrowest integer type that holds the value, DECIMAL for
/// exact numbers with a fraction, DOUBLE for approximate (exponent) ones.
fn number_literal(text: &str) -> Result<Expr> {
    if text.contains(['e', 'E']) {
        let value: f64 = text.parse().map_err(|_| SqlError::parsing(format!("Invalid number {text}")))?;
        return Ok(Expr::literal(Value::Double(value), SqlType::Double));
    }
    if !text.contains('.') {
        if let Ok(value) = text.parse::<i64>() {
            let ty = SqlType::integer_of_bits(bits_of(value as i128));
            return Ok(Expr::literal(types::integer_value(value as i128, ty).expect("fits its own type"), ty));
        }
    }
    let decimal = BigDecimal::parse(text).ok_or_else(|| SqlError::parsing(format!("Invalid number {text}")))?;
    Ok(Expr::literal(Value::BigDecimal(decimal), SqlType::Decimal))
}

/// A DOUBLE literal's text as Calcite prints it: `2.5E0`, `1.0E3`.
fn calcite_double(value: f64) -> String {
    let text = format!("{value:E}");
    match text.split_once('E') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0E{exponent}"),
        _ => text,
    }
}

fn negate_literal(value: &Value, ty: SqlType) -> Expr {
    match value {
        Value::Null => Expr::literal(Value::Null, ty),
        Value::Double(v) => Expr::literal(Value::Double(-v), ty),
        Value::Float(v) => Expr::literal(Value::Float(-v), ty),
        Value::BigDecimal(v) => Expr::literal(Value::BigDecimal(BigDecimal::new(-v.unscaled().clone(), v.scale())), ty),
        other => {
            let integer = -types::to_integer(other).unwrap_or(0);
            let ty = SqlType::integer_of_bits(bits_of(integer));
            Expr::literal(types::integer_value(integer, ty).expect("fits"), ty)
        }
    }
}

fn arithmetic_type(op: Arithmetic, l: &Expr, r: &Expr) -> Result<SqlType> {
    let (lt, rt) = (l.ty, r.ty);
    let lt = if lt == SqlType::Null { rt } else { lt };
    let rt = if rt == SqlType::Null { lt } else { rt };
    if !(lt.is_numeric() || lt == SqlType::Null) || !(rt.is_numeric() || rt == SqlType::Null) {
        return Err(cannot_apply(op.symbol(), &[l.ty, r.ty]));
    }
    if lt.is_integer() && rt.is_integer() {
        let (lb, rb) = (integer_bits(l), integer_bits(r));
        let bits = match op {
            Arithmetic::Add | Arithmetic::Subtract => lb.max(rb) + 1,
            Arithmetic::Multiply => lb + rb,
            Arithmetic::Divide => lb + 1,
            Arithmetic::Remainder => lb.min(rb),
        };
        return Ok(SqlType::integer_of_bits(bits));
    }
    Ok(lt.wider(rt))
}

/// A type named in SQL (CAST target, column list).
pub fn data_type_of(data_type: &ast::DataType) -> Result<SqlType> {
    use ast::DataType as D;
    Ok(match data_type {
        D::Varchar(_) | D::CharVarying(_) | D::CharacterVarying(_) | D::Text | D::String(_) => SqlType::Varchar,
        D::Boolean | D::Bool => SqlType::Boolean,
        D::TinyInt(_) => SqlType::TinyInt,
        D::SmallInt(_) => SqlType::SmallInt,
        D::Int(_) | D::Integer(_) => SqlType::Integer,
        D::BigInt(_) => SqlType::BigInt,
        D::Decimal(_) | D::Numeric(_) | D::Dec(_) => SqlType::Decimal,
        D::Real | D::Float(_) => SqlType::Real,
        D::Double(_) | D::DoublePrecision => SqlType::Double,
        D::Date => SqlType::Date,
        D::Time(_, _) => SqlType::Time,
        D::Timestamp(_, ast::TimezoneInfo::WithTimeZone) => SqlType::TimestampWithTimeZone,
        D::Timestamp(_, _) => SqlType::Timestamp,
        D::JSON => SqlType::Json,
        D::Custom(name, _) => {
            SqlType::parse(&name.to_string()).ok_or_else(|| SqlError::parsing(format!("Unknown type: {name}")))?
        }
        other => return Err(SqlError::parsing(format!("Unknown type: {other}"))),
    })
}

/// A join as written: its kind and ON condition.
type JoinSpec = (JoinKind, Option<ast::Expr>);

/// The sources a FROM clause names.
fn sources(
    from: &[ast::TableWithJoins],
    catalog: &Catalog,
    parameters: &Parameters,
) -> Result<(Vec<Source>, Vec<JoinSpec>)> {
    let mut sources = Vec::new();
    let mut joins = Vec::new();
    let add = |factor: &ast::TableFactor, sources: &mut Vec<Source>| -> Result<()> {
        let offset = sources.iter().map(|s: &Source| s.mapping.columns.len()).sum();
        if let ast::TableFactor::TableFunction { expr, alias } = factor {
            let mut source = virtual_tables::table_function(expr, parameters)?;
            source.offset = offset;
            if let Some(alias) = alias {
                source.alias = alias.name.value.clone();
            }
            sources.push(source);
            return Ok(());
        }
        let ast::TableFactor::Table { name, alias, .. } = factor else {
            return Err(SqlError::parsing(format!("Unsupported FROM item: {factor}")));
        };
        let parts: Vec<String> = name.0.iter().map(|part| part.to_string().trim_matches('"').to_owned()).collect();
        if let Some(mut source) = virtual_tables::information_schema(&parts, catalog) {
            source.offset = offset;
            if let Some(alias) = alias {
                source.alias = alias.name.value.clone();
            }
            sources.push(source);
            return Ok(());
        }
        let parts: Vec<String> = name.0.iter().map(|part| part.to_string().trim_matches('"').to_owned()).collect();
        let mapping_name = match parts.as_slice() {
            [name] => name.clone(),
            [schema, name] if schema == "public" => name.clone(),
            [catalog_name, schema, name] if catalog_name == "hazelcast" && schema == "public" => name.clone(),
            _ => return Err(SqlError::parsing(format!("Object '{name}' not found"))),
        };
        let Some(mapping) = catalog.get(&mapping_name) else {
            return Err(object_not_found(&mapping_name));
        };
        let offset = sources.iter().map(|s: &Source| s.mapping.columns.len()).sum();
        let alias = alias.as_ref().map_or(mapping_name.clone(), |a| a.name.value.clone());
        sources.push(Source { mapping: mapping.clone(), alias, offset, keys: None, inline: None });
        Ok(())
    };
    for (index, table) in from.iter().enumerate() {
        add(&table.relation, &mut sources)?;
        if index > 0 {
            joins.push((JoinKind::Inner, None));
        }
        for join in &table.joins {
            add(&join.relation, &mut sources)?;
            let (kind, constraint) = match &join.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => (JoinKind::Inner, c),
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (JoinKind::Left, c),
                ast::JoinOperator::CrossJoin(c) => (JoinKind::Inner, c),
                other => return Err(SqlError::parsing(format!("Unsupported join: {other:?}"))),
            };
            let on = match constraint {
                ast::JoinConstraint::On(on) => Some(on.clone()),
                ast::JoinConstraint::None => None,
                other => return Err(SqlError::parsing(format!("Unsupported join condition: {other:?}"))),
            };
            joins.push((kind, on));
        }
    }
    Ok((sources, joins))
}

/// "Object 'x' not found, did you forget to CREATE MAPPING?"
pub fn object_not_found(name: &str) -> SqlError {
    SqlError::new(
        crate::error::Code::ObjectNotFound,
        format!("Object '{name}' not found, did you forget to CREATE MAPPING?"),
    )
}

/// Plans a query.
pub fn select(query: &ast::Query, catalog: &Catalog, parameters: &Parameters) -> Result<SelectPlan> {
    if query.with.is_some() {
        return Err(SqlError::parsing("WITH is not supported"));
    }
    if let ast::SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier, left, right } = query.body.as_ref()
    {
        return union(query, left, right, !matches!(set_quantifier, ast::SetQuantifier::All), catalog, parameters);
    }
    if let ast::SetExpr::Query(inner) = query.body.as_ref() {
        if query.order_by.is_none() && query.limit_clause.is_none() {
            return select(inner, catalog, parameters);
        }
    }
    let ast::SetExpr::Select(select) = query.body.as_ref() else {
        return Err(SqlError::parsing(format!("Unsupported query: {}", query.body)));
    };
    let (sources, join_specs) = sources(&select.from, catalog, parameters)?;
    let mut row = Translator::new(&sources, parameters);
    let mut joins = Vec::new();
    for (kind, on) in &join_specs {
        let on = match on {
            Some(on) => Some(boolean(row.expr(on)?, "ON")?),
            None => None,
        };
        joins.push(Join { kind: *kind, on });
    }
    let filter = match &select.selection {
        Some(selection) => {
            if contains_aggregate(selection)? {
                return Err(SqlError::parsing("Aggregate functions are not allowed in WHERE"));
            }
            Some(boolean(row.expr(selection)?, "WHERE")?)
        }
        None => None,
    };
    let group_exprs: Vec<&ast::Expr> = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => exprs.iter().collect(),
        ast::GroupByExpr::All(_) => return Err(SqlError::parsing("GROUP BY ALL is not supported")),
    };
    let has_aggregate = select.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e).unwrap_or(false)
        }
        _ => false,
    }) || select.having.is_some();
    let grouped = !group_exprs.is_empty() || has_aggregate;
    let mut translator = Translator::new(&sources, parameters);
    if grouped {
        let mut keys = Vec::new();
        for expr in &group_exprs {
            keys.push((expr.to_string(), row.expr(expr)?));
        }
        translator.mode = Mode::Grouped { keys, calls: Vec::new() };
    }
    let mut projection = Vec::new();
    let mut columns = Vec::new();
    for (index, item) in select.projection.iter().enumerate() {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                if grouped {
                    return Err(SqlError::parsing("Expression '*' is not being grouped"));
                }
                let qualifier = match item {
                    ast::SelectItem::QualifiedWildcard(kind, _) => Some(kind.to_string()),
                    _ => None,
                };
                for source in &sources {
                    if qualifier.as_ref().is_some_and(|q| *q != source.alias) {
                        continue;
                    }
                    for (column_index, column) in source.mapping.visible() {
                        projection.push(Expr::column(source.offset + column_index, column.ty));
                        // `SELECT *` of a join names a repeated column `name0`, `name1`, ...
                        let mut name = column.name.clone();
                        let mut suffix = 0;
                        while columns.iter().any(|c: &ColumnMeta| c.name == name) {
                            name = format!("{}{suffix}", column.name);
                            suffix += 1;
                        }
                        columns.push(ColumnMeta { name, ty: column.ty, nullable: true });
                    }
                }
            }
            ast::SelectItem::UnnamedExpr(expr) => {
                let translated = translator.expr(expr)?;
                if is_parameter(&translated) {
                    return Err(located(expr.span(), SqlError::parsing("Illegal use of dynamic parameter")));
                }
                let name = match expr {
                    ast::Expr::Identifier(ident) => ident.value.clone(),
                    ast::Expr::CompoundIdentifier(parts) => parts.last().map_or(String::new(), |p| p.value.clone()),
                    _ => format!("EXPR${index}"),
                };
                columns.push(meta(&name, &translated));
                projection.push(translated);
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let translated = translator.expr(expr)?;
                columns.push(meta(&alias.value, &translated));
                translator.aliases.push((alias.value.clone(), translated.clone()));
                projection.push(translated);
            }
        }
    }
    let having = match &select.having {
        Some(having) => Some(boolean(translator.expr(having)?, "HAVING")?),
        None => None,
    };
    let mut order = Vec::new();
    if let Some(order_by) = &query.order_by {
        let ast::OrderByKind::Expressions(items) = &order_by.kind else {
            return Err(SqlError::parsing("ORDER BY ALL is not supported"));
        };
        for item in items {
            let expr = match &item.expr {
                ast::Expr::Value(ast::ValueWithSpan { value: ast::Value::Number(text, _), .. }) => {
                    let ordinal: usize = text.parse().map_err(|_| SqlError::parsing("Invalid ORDER BY ordinal"))?;
                    if ordinal == 0 || ordinal > projection.len() {
                        return Err(SqlError::parsing(format!("Ordinal out of range: {ordinal}")));
                    }
                    projection[ordinal - 1].clone()
                }
                other => translator.expr(other)?,
            };
            let descending = item.options.asc == Some(false);
            if let Some(first) = item.options.nulls_first {
                let text = if first { "NULLS FIRST not supported" } else { "NULLS LAST not supported" };
                return Err(located(order_item_span(item), SqlError::parsing(text)));
            }
            // Hazelcast sorts nulls as the smallest values: first ascending, last descending.
            let nulls_first = !descending;
            order.push(OrderKey { expr, descending, nulls_first });
        }
    }
    let grouping = match translator.mode {
        Mode::Grouped { keys, calls } => {
            Some(Grouping { keys: keys.into_iter().map(|(_, expr)| expr).collect(), calls, having })
        }
        Mode::Row => None,
    };
    let (offset, limit) = limits(query, parameters)?;
    let mut plan = SelectPlan {
        union: None,
        sources,
        joins,
        filter,
        grouping,
        projection,
        columns,
        order,
        distinct: matches!(select.distinct, Some(ast::Distinct::Distinct)),
        offset,
        limit,
    };
    point_lookup(&mut plan)?;
    Ok(plan)
}

/// An ORDER BY item's extent (its expression to its last keyword).
fn order_item_span(item: &ast::OrderByExpr) -> Span {
    let text = item.to_string();
    let start = item.expr.span().start;
    let length = text.chars().count() as u64;
    Span::new(start, sqlparser::tokenizer::Location::new(start.line, start.column + length))
}

/// `left UNION [ALL] right`: both branches planned alone, the order and limits over their rows.
fn union(
    query: &ast::Query,
    left: &ast::SetExpr,
    right: &ast::SetExpr,
    distinct: bool,
    catalog: &Catalog,
    parameters: &Parameters,
) -> Result<SelectPlan> {
    let branch = |body: &ast::SetExpr| -> Result<SelectPlan> {
        let mut inner = query.clone();
        *inner.body = body.clone();
        inner.order_by = None;
        inner.limit_clause = None;
        inner.fetch = None;
        select(&inner, catalog, parameters)
    };
    let (left, right) = (branch(left)?, branch(right)?);
    let types = |plan: &SelectPlan| plan.columns.iter().map(|c| c.ty).collect::<Vec<_>>();
    if types(&left) != types(&right) {
        let describe = |plan: &SelectPlan| {
            let fields: Vec<String> = plan.columns.iter().map(|c| format!("{} {}", c.ty.name(), c.name)).collect();
            format!("RecordType({})", fields.join(", "))
        };
        let op = if distinct { "UNION" } else { "UNION ALL" };
        return Err(SqlError::parsing(format!(
            "Cannot infer return type for {op}; operand types: [{}, {}]",
            describe(&left),
            describe(&right)
        )));
    }
    let columns = left.columns.clone();
    let projection: Vec<Expr> = columns.iter().enumerate().map(|(i, c)| Expr::column(i, c.ty)).collect();
    let mut order = Vec::new();
    if let Some(order_by) = &query.order_by {
        let ast::OrderByKind::Expressions(items) = &order_by.kind else {
            return Err(SqlError::parsing("ORDER BY ALL is not supported"));
        };
        for item in items {
            let index = match &item.expr {
                ast::Expr::Value(ast::ValueWithSpan { value: ast::Value::Number(text, _), .. }) => {
                    text.parse::<usize>().ok().filter(|n| *n >= 1 && *n <= columns.len()).map(|n| n - 1)
                }
                ast::Expr::Identifier(ident) => columns.iter().position(|c| c.name == ident.value),
                _ => None,
            };
            let Some(index) = index else {
                return Err(located(
                    item.expr.span(),
                    SqlError::parsing(format!("Column '{}' not found in any table", item.expr)),
                ));
            };
            let descending = item.options.asc == Some(false);
            order.push(OrderKey { expr: projection[index].clone(), descending, nulls_first: !descending });
        }
    }
    let (offset, limit) = limits(query, parameters)?;
    let sources = left.sources.iter().chain(&right.sources).cloned().collect();
    Ok(SelectPlan {
        sources,
        joins: Vec::new(),
        filter: None,
        grouping: None,
        projection,
        columns,
        order,
        distinct,
        offset,
        limit,
        union: Some(Box::new(Union { branches: vec![left, right], all: !distinct })),
    })
}

fn meta(name: &str, expr: &Expr) -> ColumnMeta {
    let nullable = !matches!(&expr.kind, Kind::Literal(value) if !value.is_null());
    let ty = if expr.ty == SqlType::Null { SqlType::Null } else { expr.ty };
    ColumnMeta { name: name.to_owned(), ty, nullable }
}

fn limits(query: &ast::Query, parameters: &Parameters) -> Result<(usize, Option<usize>)> {
    let mut translator = Translator::new(&[], parameters);
    let mut count = |expr: &ast::Expr, what: &str| -> Result<usize> {
        let value = translator.expr(expr)?;
        match value.constant().and_then(types::to_integer) {
            Some(n) if n >= 0 => Ok(n.min(usize::MAX as i128) as usize),
            _ => Err(SqlError::parsing(format!("{what} value must be a non-negative integer"))),
        }
    };
    let fetched = match &query.fetch {
        Some(fetch) => match &fetch.quantity {
            Some(quantity) => Some(count(quantity, "FETCH")?),
            None => Some(1),
        },
        None => None,
    };
    match &query.limit_clause {
        None => Ok((0, fetched)),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let offset = match offset {
                Some(offset) => count(&offset.value, "OFFSET")?,
                None => 0,
            };
            let limit = match limit {
                Some(limit) => Some(count(limit, "LIMIT")?),
                None => fetched,
            };
            Ok((offset, limit))
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            Ok((count(offset, "OFFSET")?, Some(count(limit, "LIMIT")?)))
        }
    }
}

/// `WHERE __key = <constant>` (alone or in an AND) on a single source: only that key is read.
fn point_lookup(plan: &mut SelectPlan) -> Result<()> {
    if plan.sources.len() != 1 {
        return Ok(());
    }
    let Some(filter) = &plan.filter else { return Ok(()) };
    let source = &plan.sources[0];
    let Some((key_index, _)) = source.mapping.column("__key") else { return Ok(()) };
    let crate::catalog::Format::Primitive(key_type) = source.mapping.key else { return Ok(()) };
    let conjuncts: Vec<&Expr> = match &filter.kind {
        Kind::And(items) => items.iter().collect(),
        _ => vec![filter],
    };
    for conjunct in conjuncts {
        let Kind::Compare(Comparison::Equal, l, r) = &conjunct.kind else { continue };
        let constant = match (&l.kind, &r.kind) {
            (Kind::Column(i), Kind::Literal(v) | Kind::Parameter { value: v, .. })
            | (Kind::Literal(v) | Kind::Parameter { value: v, .. }, Kind::Column(i))
                if *i == key_index =>
            {
                v
            }
            _ => continue,
        };
        let keys = match crate::expr::to_type(constant.clone(), key_type) {
            Ok(Value::Null) => Vec::new(),
            Ok(value) => match ferrogrid_query::write::write_data(&value) {
                Ok(bytes) => vec![bytes],
                Err(_) => continue,
            },
            Err(_) => continue,
        };
        plan.sources[0].keys = Some(keys);
        return Ok(());
    }
    Ok(())
}
