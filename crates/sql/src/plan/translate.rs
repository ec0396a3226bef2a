//! Expressions translated from sqlparser's AST over a scope of sources: columns resolved,
//! calls and operators typed, aggregates of a grouped query collected, nesting bounded by
//! [`MAX_DEPTH`].

use super::location::{located, needs_location, to_closing_paren};
use super::typing::{
    arithmetic_parameter, arithmetic_type, boolean, calcite_double, cannot_apply, check_cast, data_type_of, flatten,
    is_parameter, literal_text, negate_literal, number_literal, unify_comparison, varchar, widen,
};
use super::{AggregateCall, AggregateFunction, Parameters, Source};
use crate::error::{Result, SqlError};
use crate::expr::functions;
use crate::expr::{Arithmetic, Comparison, Expr, Kind, MAX_DEPTH};
use crate::types::{self, SqlType};
use ferrogrid_query::number::BigDecimal;
use ferrogrid_query::Value;
use sqlparser::ast;
use sqlparser::ast::Spanned;

#[derive(Debug)]
pub(super) enum Mode {
    Row,
    Grouped { keys: Vec<(String, Expr)>, calls: Vec<AggregateCall> },
}

/// Translates AST expressions over a scope of sources.
#[derive(Debug)]
pub struct Translator<'a> {
    sources: &'a [Source],
    parameters: &'a Parameters,
    pub(super) mode: Mode,
    depth: usize,
    /// Aliases of the select list (for ORDER BY).
    pub(super) aliases: Vec<(String, Expr)>,
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
            E::UnaryOp { op, expr: operand } => self.unary(op, operand),
            E::BinaryOp { left, op, right } => self.binary(left, op, right),
            E::IsNull(operand) => Ok(Expr::new(Kind::IsNull(Box::new(self.expr(operand)?), false), SqlType::Boolean)),
            E::IsNotNull(operand) => Ok(Expr::new(Kind::IsNull(Box::new(self.expr(operand)?), true), SqlType::Boolean)),
            E::IsTrue(o) => self.is_bool(o, true, false),
            E::IsNotTrue(o) => self.is_bool(o, true, true),
            E::IsFalse(o) => self.is_bool(o, false, false),
            E::IsNotFalse(o) => self.is_bool(o, false, true),
            E::Between { expr: operand, negated, low, high } => self.between(operand, low, high, *negated),
            E::InList { expr: operand, list, negated } => self.in_list(operand, list, *negated),
            E::Like { negated, any: false, expr: operand, pattern, escape_char } => {
                self.like(operand, pattern, escape_char.as_ref(), *negated)
            }
            E::Cast { expr: operand, data_type, .. } => self.cast(operand, data_type),
            E::Case { operand, conditions, else_result, .. } => {
                self.case(operand.as_deref(), conditions, else_result.as_deref())
            }
            E::Function(function) => self.function(function),
            E::Substring { expr: operand, substring_from, substring_for, .. } => {
                self.substring(operand, substring_from.as_deref(), substring_for.as_deref())
            }
            E::Trim { expr: operand, trim_where, trim_what, .. } => {
                self.trim(operand, trim_where.as_ref(), trim_what.as_deref())
            }
            E::Position { expr: needle, r#in } => {
                let args = vec![varchar(self.expr(needle)?, "POSITION")?, varchar(self.expr(r#in)?, "POSITION")?];
                Ok(Expr::new(Kind::Call(crate::expr::Function::Position, args), SqlType::Integer))
            }
            E::Ceil { expr: operand, .. } => self.rounding(crate::expr::Function::Ceil, "CEIL", operand),
            E::Floor { expr: operand, .. } => self.rounding(crate::expr::Function::Floor, "FLOOR", operand),
            E::TypedString(typed) => typed_string(typed),
            E::InSubquery { .. } => Err(SqlError::parsing("Sub-queries are not supported for IN operator.")),
            E::IsNotDistinctFrom(..) => Err(SqlError::parsing("IS NOT DISTINCT FROM not supported")),
            E::IsDistinctFrom(..) => Err(SqlError::parsing("IS DISTINCT FROM not supported")),
            E::Subquery(_) | E::Exists { .. } => Err(SqlError::parsing("Sub-queries are not supported")),
            other => Err(SqlError::parsing(format!("Unsupported expression: {other}"))),
        }
    }

    /// `NOT x`, `-x`, `+x`.
    fn unary(&mut self, op: &ast::UnaryOperator, operand: &ast::Expr) -> Result<Expr> {
        let operand = self.expr(operand)?;
        match op {
            ast::UnaryOperator::Not => Ok(Expr::new(Kind::Not(Box::new(boolean(operand, "NOT")?)), SqlType::Boolean)),
            ast::UnaryOperator::Minus => {
                if let Some(value) = operand.constant() {
                    return Ok(negate_literal(value, operand.ty));
                }
                if !operand.ty.is_numeric() {
                    return Err(cannot_apply("-", &[operand.ty]));
                }
                let ty =
                    if operand.ty.is_integer() { SqlType::integer_of_bits(operand.ty.bits() + 1) } else { operand.ty };
                Ok(Expr::new(Kind::Negate(Box::new(operand)), ty))
            }
            ast::UnaryOperator::Plus => Ok(operand),
            other => Err(SqlError::parsing(format!("Unsupported operator {other}"))),
        }
    }

    fn between(&mut self, operand: &ast::Expr, low: &ast::Expr, high: &ast::Expr, negated: bool) -> Result<Expr> {
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
                negated,
                symmetric: false,
            },
            SqlType::Boolean,
        ))
    }

    fn in_list(&mut self, operand: &ast::Expr, list: &[ast::Expr], negated: bool) -> Result<Expr> {
        let mut operand = self.expr(operand)?;
        let mut items = Vec::with_capacity(list.len());
        for item in list {
            let item = self.expr(item)?;
            let (o, item) = unify_comparison("IN", operand, item)?;
            operand = o;
            items.push(item);
        }
        Ok(Expr::new(Kind::In { operand: Box::new(operand), list: items, negated }, SqlType::Boolean))
    }

    fn like(
        &mut self,
        operand: &ast::Expr,
        pattern: &ast::Expr,
        escape_char: Option<&ast::Value>,
        negated: bool,
    ) -> Result<Expr> {
        let operand = varchar(self.expr(operand)?, "LIKE")?;
        let pattern = varchar(self.expr(pattern)?, "LIKE")?;
        let escape = escape_char.map(|escape| {
            let text = match escape {
                ast::Value::SingleQuotedString(text) => text.clone(),
                other => other.to_string(),
            };
            Box::new(Expr::literal(Value::String(text), SqlType::Varchar))
        });
        Ok(Expr::new(
            Kind::Like { operand: Box::new(operand), pattern: Box::new(pattern), escape, negated },
            SqlType::Boolean,
        ))
    }

    /// `CAST(x AS t)`: a literal or parameter converted now (Hazelcast's errors for a bad one),
    /// anything else when evaluated.
    fn cast(&mut self, operand: &ast::Expr, data_type: &ast::DataType) -> Result<Expr> {
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
                if ty == SqlType::Decimal {
                    // Calcite keeps an approximate literal's decimal text: 0.1E0 is 0.1
                    return Ok(Expr::literal(crate::types::convert(value.clone(), ty)?, ty));
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

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
    ) -> Result<Expr> {
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

    fn substring(&mut self, operand: &ast::Expr, from: Option<&ast::Expr>, length: Option<&ast::Expr>) -> Result<Expr> {
        let mut args = vec![varchar(self.expr(operand)?, "SUBSTRING")?];
        args.push(match from {
            Some(from) => self.expr(from)?,
            None => Expr::literal(Value::Int(1), SqlType::Integer),
        });
        if let Some(length) = length {
            args.push(self.expr(length)?);
        }
        Ok(Expr::new(Kind::Call(crate::expr::Function::Substring, args), SqlType::Varchar))
    }

    fn trim(
        &mut self,
        operand: &ast::Expr,
        trim_where: Option<&ast::TrimWhereField>,
        trim_what: Option<&ast::Expr>,
    ) -> Result<Expr> {
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

    /// `CEIL(x)` or `FLOOR(x)`, typed as the function's other calls are.
    fn rounding(&mut self, function: crate::expr::Function, name: &str, operand: &ast::Expr) -> Result<Expr> {
        let args = vec![self.expr(operand)?];
        let ty = functions::result_type(function, name, &args)?;
        Ok(Expr::new(Kind::Call(function, args), ty))
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

/// `DATE '2024-01-01'` and other typed strings: the text converted to the type now.
fn typed_string(typed: &ast::TypedString) -> Result<Expr> {
    let ty = data_type_of(&typed.data_type)?;
    let text = match &typed.value.value {
        ast::Value::SingleQuotedString(text) => text.clone(),
        other => other.to_string(),
    };
    types::convert(Value::String(text), ty).map(|value| Expr::literal(value, ty))
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
