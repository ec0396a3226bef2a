//! EXPLAIN: the plan a SELECT runs with, one row per step, outermost first, each indented two
//! spaces deeper than the step it feeds (Hazelcast's shape, and its step names where ferrogrid
//! does what Hazelcast does): how the map is read (a key lookup, an index, or every entry),
//! whether it is aggregated where the data is (accumulated per partition, combined on the
//! coordinator), and what the coordinator then does (join, sort, limit). Attributes in
//! lower case after Hazelcast's are ferrogrid's own: what each partition's part carries
//! (`parts`) and how many rows an ORDER BY with a LIMIT keeps per partition (`perPartition`).

use super::hints::{index_hints, HintTerm};
use super::parts::{mode, Mode};
use crate::plan::{AggregateFunction, SelectPlan, Source};
use ferrogrid_query::Value;

/// An index of a map, as the member has it: SORTED or HASH, on its attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexInfo {
    pub sorted: bool,
    pub attributes: Vec<String>,
}

/// The plan's steps as EXPLAIN's rows (`indexes`: a map's indexes by its name).
pub fn explain(plan: &SelectPlan, indexes: &dyn Fn(&str) -> Vec<IndexInfo>) -> Vec<String> {
    let mut steps: Vec<(usize, String)> = Vec::new();
    let mut depth = 0;
    let step = |steps: &mut Vec<(usize, String)>, depth: &mut usize, text: String| {
        steps.push((*depth, text));
        *depth += 1;
    };
    if plan.limit.is_some() || plan.offset > 0 {
        let fetch = plan.limit.map_or(String::new(), |limit| format!("fetch=[{limit}]"));
        let offset = if plan.offset > 0 { format!("offset=[{}], ", plan.offset) } else { String::new() };
        step(&mut steps, &mut depth, format!("LimitPhysicalRel({offset}{fetch})"));
    }
    if !plan.order.is_empty() {
        let keys: Vec<String> = plan
            .order
            .iter()
            .enumerate()
            .map(|(i, key)| {
                format!("sort{i}=[{}], dir{i}=[{}]", operand(&key.expr), if key.descending { "DESC" } else { "ASC" })
            })
            .collect();
        let top = super::parts::top_of(plan).map_or(String::new(), |k| format!(", perPartition=[{k}]"));
        step(&mut steps, &mut depth, format!("SortPhysicalRel({}{top})", keys.join(", ")));
    }
    if plan.distinct {
        step(&mut steps, &mut depth, "AggregateByKeyPhysicalRel(distinct=[true])".to_owned());
    }
    let parts = mode(plan);
    if let Some(grouping) = &plan.grouping {
        let group: Vec<String> = (0..grouping.keys.len()).map(|i| i.to_string()).collect();
        let group = format!("group=[{{{}}}]", group.join(", "));
        let calls: Vec<String> = grouping.calls.iter().map(call).collect();
        let by_key = if grouping.keys.is_empty() { "" } else { "ByKey" };
        if parts == Mode::Grouped {
            step(&mut steps, &mut depth, format!("AggregateCombine{by_key}PhysicalRel({group}, {})", calls.join(", ")));
            let accumulate = if grouping.keys.is_empty() { String::new() } else { format!("({group})") };
            step(&mut steps, &mut depth, format!("AggregateAccumulate{by_key}PhysicalRel{accumulate}"));
        } else {
            step(&mut steps, &mut depth, format!("Aggregate{by_key}PhysicalRel({group}, {})", calls.join(", ")));
        }
    }
    if let Some(union) = &plan.union {
        step(&mut steps, &mut depth, format!("UnionPhysicalRel(all=[{}])", union.all));
        for branch in &union.branches {
            for (inner, text) in scans(branch, indexes, parts) {
                steps.push((depth + inner, text));
            }
        }
    } else {
        for (inner, text) in scans(plan, indexes, parts) {
            steps.push((depth + inner, text));
        }
    }
    steps.into_iter().map(|(depth, text)| format!("{}{text}", "  ".repeat(depth))).collect()
}

fn call(call: &crate::plan::AggregateCall) -> String {
    let name = match call.function {
        AggregateFunction::CountAll | AggregateFunction::Count => "COUNT",
        AggregateFunction::Sum => "SUM",
        AggregateFunction::Avg => "AVG",
        AggregateFunction::Min => "MIN",
        AggregateFunction::Max => "MAX",
    };
    let distinct = if call.distinct { "DISTINCT " } else { "" };
    format!("{name}({distinct}{})", call.argument.as_ref().map_or(String::new(), operand))
}

/// An expression as a step names it: a column as `$index` (of the row every source's columns
/// make), anything else as `expr`.
fn operand(expr: &crate::expr::Expr) -> String {
    match expr.kind {
        crate::expr::Kind::Column(index) => format!("${index}"),
        _ => "expr".to_owned(),
    }
}

/// The steps reading a plan's sources (a join over them), depths relative to the first.
fn scans(plan: &SelectPlan, indexes: &dyn Fn(&str) -> Vec<IndexInfo>, parts: Mode) -> Vec<(usize, String)> {
    let mut steps = Vec::new();
    for (i, join) in plan.joins.iter().enumerate() {
        let kind = match join.kind {
            crate::plan::JoinKind::Inner => "inner",
            crate::plan::JoinKind::Left => "left",
        };
        let left_width: usize = plan.sources[..=i].iter().map(|source| source.mapping.columns.len()).sum();
        let keys = join.on.as_ref().map(|on| super::join::equalities(on, left_width)).unwrap_or_default();
        let text = if keys.is_empty() {
            format!("JoinNestedLoopPhysicalRel(joinType=[{kind}])")
        } else {
            // (the right side's columns numbered as in the joined row)
            let keys: Vec<String> =
                keys.iter().map(|key| format!("${} = ${}", key.left, key.right + left_width)).collect();
            format!("JoinHashPhysicalRel(joinType=[{kind}], keys=[{}])", keys.join(", "))
        };
        steps.push((i, text));
    }
    let depth = plan.joins.len();
    for source in &plan.sources {
        steps.push((depth, scan(plan, source, indexes, parts)));
    }
    steps
}

fn table(source: &Source) -> String {
    let projects: Vec<String> = (0..source.mapping.visible().count()).map(|i| format!("${i}")).collect();
    format!("table=[[hazelcast, public, {}[projects=[{}]]]]", source.mapping.name, projects.join(", "))
}

/// How one source is read: its keys looked up, an index, or every entry.
fn scan(plan: &SelectPlan, source: &Source, indexes: &dyn Fn(&str) -> Vec<IndexInfo>, parts: Mode) -> String {
    let carried = match parts {
        Mode::Grouped => "grouped",
        Mode::Filtered => "filtered",
        Mode::Sources => "entries",
    };
    // (an unordered scan is read a round of partitions per page the client fetches)
    let streamed = if super::parts::streams(plan) { ", streamed=[rounds as fetched]" } else { "" };
    if let Some(inline) = &source.inline {
        return format!("ValuesPhysicalRel(rows=[{}])", inline.len());
    }
    if let Some(keys) = &source.keys {
        return format!("SelectByKeyMapPhysicalRel({}, keys=[{}], parts=[{carried}])", table(source), keys.len());
    }
    let defined = indexes(&source.mapping.map);
    let mut hints = index_hints(plan);
    hints.sort_by_key(|hint| matches!(hint.term, HintTerm::Range { .. }));
    let single = || {
        hints.iter().find_map(|hint| {
            let ranged = matches!(hint.term, HintTerm::Range { .. });
            let index = defined.iter().find(|index| {
                index.attributes.len() == 1
                    && canonical(&index.attributes[0]) == canonical(&hint.attribute)
                    && (index.sorted || !ranged)
            })?;
            Some((index, vec![hint]))
        })
    };
    // the member's order (`index::Indexes::candidates`): a composite index whose every
    // attribute is compared for equality, one on a single attribute, a sorted composite one
    // whose first attributes are
    let used = composite(&defined, &hints, false).or_else(single).or_else(|| composite(&defined, &hints, true));
    match used {
        Some((index, terms)) => {
            let kind = if index.sorted { "sorted" } else { "hash" };
            let attributes: Vec<String> = index.attributes.iter().map(|a| canonical(a)).collect();
            let name = format!("{}_{kind}_{}", source.mapping.map, attributes.join("_"));
            let terms: Vec<String> = terms.iter().map(|hint| term(&hint.attribute, &hint.term)).collect();
            let expression = if terms.len() == 1 { terms[0].clone() } else { format!("AND({})", terms.join(", ")) };
            format!(
                "IndexScanMapPhysicalRel({}, index=[{name}], indexExp=[{expression}], parts=[{carried}]{streamed})",
                table(source)
            )
        }
        None => format!("FullScanPhysicalRel({}, discriminator=[0], parts=[{carried}]{streamed})", table(source)),
    }
}

/// A composite index the hints' equalities (and INs) serve: on every attribute, or (`prefix`,
/// a sorted index) on its first ones; with the hints it uses, in its attributes' order.
fn composite<'a>(
    defined: &'a [IndexInfo],
    hints: &'a [super::hints::IndexHint],
    prefix: bool,
) -> Option<(&'a IndexInfo, Vec<&'a super::hints::IndexHint>)> {
    defined.iter().filter(|index| index.attributes.len() > 1).find_map(|index| {
        let mut used = Vec::new();
        for attribute in &index.attributes {
            let equal = hints.iter().find(|hint| {
                canonical(&hint.attribute) == canonical(attribute) && !matches!(hint.term, HintTerm::Range { .. })
            });
            match equal {
                Some(hint) => used.push(hint),
                None => break,
            }
        }
        let whole = used.len() == index.attributes.len();
        (whole || prefix && index.sorted && !used.is_empty()).then_some((index, used))
    })
}

/// An attribute as indexes name it (`this.a` is `a`).
fn canonical(attribute: &str) -> String {
    attribute.strip_prefix("this.").unwrap_or(attribute).to_owned()
}

fn term(attribute: &str, term: &HintTerm) -> String {
    let value = |value: &Value| value.java_string().unwrap_or_else(|_| format!("{value:?}"));
    match term {
        HintTerm::Equal(v) => format!("=({attribute}, {})", value(v)),
        HintTerm::In(values) => {
            format!("SEARCH({attribute}, [{}])", values.iter().map(value).collect::<Vec<_>>().join(", "))
        }
        HintTerm::Range { from, to } => {
            let low = from.as_ref().map_or("(-∞".to_owned(), |(v, inclusive)| {
                format!("{}{}", if *inclusive { "[" } else { "(" }, value(v))
            });
            let high = to.as_ref().map_or("+∞)".to_owned(), |(v, inclusive)| {
                format!("{}{}", value(v), if *inclusive { "]" } else { ")" })
            });
            format!("SEARCH({attribute}, {low}..{high})")
        }
    }
}
