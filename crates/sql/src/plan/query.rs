//! A query's plan: the sources of its FROM, its select list, grouping, order and limits, UNION,
//! and the keys of a point lookup.

use super::location::located;
use super::translate::{contains_aggregate, Mode, Translator};
use super::typing::{boolean, is_parameter};
use super::virtual_tables;
use super::{ColumnMeta, Grouping, Join, JoinKind, OrderKey, Parameters, SelectPlan, Source, Union};
use crate::catalog::Catalog;
use crate::error::{Result, SqlError};
use crate::expr::{Comparison, Expr, Kind};
use crate::types::{self, SqlType};
use ferrogrid_query::Value;
use sqlparser::ast;
use sqlparser::ast::Spanned;
use sqlparser::tokenizer::Span;

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
    let joins = joins(&mut row, &join_specs)?;
    let filter = where_filter(&mut row, select.selection.as_ref())?;
    let group_exprs: Vec<&ast::Expr> = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => exprs.iter().collect(),
        ast::GroupByExpr::All(_) => return Err(SqlError::parsing("GROUP BY ALL is not supported")),
    };
    let grouped = !group_exprs.is_empty() || has_aggregate(select);
    let mut translator = Translator::new(&sources, parameters);
    if grouped {
        let mut keys = Vec::new();
        for expr in &group_exprs {
            keys.push((expr.to_string(), row.expr(expr)?));
        }
        translator.mode = Mode::Grouped { keys, calls: Vec::new() };
    }
    let (projection, columns) = select_list(&mut translator, &select.projection, &sources, grouped)?;
    let having = match &select.having {
        Some(having) => Some(boolean(translator.expr(having)?, "HAVING")?),
        None => None,
    };
    let order = order_keys(&mut translator, query, &projection, &columns)?;
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
    limit_zero(&mut plan, query);
    point_lookup(&mut plan)?;
    Ok(plan)
}

/// A literal `LIMIT 0` as Hazelcast plans it: without OFFSET (even `OFFSET 0`) its planner
/// (PruneEmptyRules) reads no row, so nothing is computed (nor can fail); with one the rows are
/// still filtered, but no select item is computed (the projection sits above the limit).
fn limit_zero(plan: &mut SelectPlan, query: &ast::Query) {
    let Some(ast::LimitClause::LimitOffset { limit: Some(ast::Expr::Value(_)), offset, .. }) = &query.limit_clause
    else {
        return;
    };
    if plan.limit != Some(0) {
        return;
    }
    if offset.is_none() {
        plan.filter = Some(Expr::literal(Value::Bool(false), SqlType::Boolean));
    } else if plan.grouping.is_none() {
        for item in &mut plan.projection {
            *item = Expr::literal(Value::Null, item.ty);
        }
    }
}

/// The ON condition of each join, translated over the row of every source.
fn joins(row: &mut Translator, join_specs: &[JoinSpec]) -> Result<Vec<Join>> {
    let mut joins = Vec::new();
    for (kind, on) in join_specs {
        let on = match on {
            Some(on) => Some(boolean(row.expr(on)?, "ON")?),
            None => None,
        };
        joins.push(Join { kind: *kind, on });
    }
    Ok(joins)
}

/// The WHERE condition (no aggregates in it).
fn where_filter(row: &mut Translator, selection: Option<&ast::Expr>) -> Result<Option<Expr>> {
    match selection {
        Some(selection) => {
            if contains_aggregate(selection)? {
                return Err(SqlError::parsing("Aggregate functions are not allowed in WHERE"));
            }
            Ok(Some(super::simplify::filter(boolean(row.expr(selection)?, "WHERE")?)))
        }
        None => Ok(None),
    }
}

/// Whether the select list calls an aggregate or a HAVING is given: the query is grouped.
fn has_aggregate(select: &ast::Select) -> bool {
    select.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e).unwrap_or(false)
        }
        _ => false,
    }) || select.having.is_some()
}

/// The select list's expressions and result columns (`*` expanded over the sources in scope;
/// aliases recorded for ORDER BY).
fn select_list(
    translator: &mut Translator,
    items: &[ast::SelectItem],
    sources: &[Source],
    grouped: bool,
) -> Result<(Vec<Expr>, Vec<ColumnMeta>)> {
    let mut projection = Vec::new();
    let mut columns = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                if grouped {
                    return Err(SqlError::parsing("Expression '*' is not being grouped"));
                }
                let qualifier = match item {
                    ast::SelectItem::QualifiedWildcard(kind, _) => Some(kind.to_string()),
                    _ => None,
                };
                for source in sources {
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
                projection.push(super::simplify::value(translated));
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let translated = translator.expr(expr)?;
                columns.push(meta(&alias.value, &translated));
                translator.aliases.push((alias.value.clone(), translated.clone()));
                projection.push(super::simplify::value(translated));
            }
        }
    }
    Ok((projection, columns))
}

/// The ORDER BY keys: ordinals of the select list or expressions. A name that two select items
/// bear (`SELECT __key, __key ... ORDER BY __key`) is ambiguous, as Calcite finds it.
fn order_keys(
    translator: &mut Translator,
    query: &ast::Query,
    projection: &[Expr],
    columns: &[ColumnMeta],
) -> Result<Vec<OrderKey>> {
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
                ast::Expr::Identifier(ident) if columns.iter().filter(|c| c.name == ident.value).count() > 1 => {
                    let error = SqlError::parsing(format!("Column '{}' is ambiguous", ident.value));
                    return Err(located(ident.span, error));
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
    Ok(order)
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
    let order = union_order_keys(query, &columns, &projection)?;
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

/// A UNION's ORDER BY keys: ordinals or names of its result columns.
fn union_order_keys(query: &ast::Query, columns: &[ColumnMeta], projection: &[Expr]) -> Result<Vec<OrderKey>> {
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
    Ok(order)
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
    for conjunct in filter.conjuncts() {
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
