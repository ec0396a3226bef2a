//! Translates a `hazelcast.xml` document into the tree a `hazelcast.yaml` document parses to, so
//! that one walker (`yaml.rs`) reads both syntaxes and every error or unsupported key has the same
//! dotted path in either.
//!
//! The translation follows Hazelcast's own correspondence between its XML and YAML files (its
//! `hazelcast-full-example.xml` and `.yaml` show every element in both):
//!
//! - the root `<hazelcast>` becomes `hazelcast:`; a `<ferrogrid>` element inside it becomes the
//!   sibling `ferrogrid:` section (XML has one root);
//! - an element with only text becomes that text (always a string: the walker accepts numbers
//!   and booleans written as strings, as Hazelcast does); an empty one becomes nothing (`~`);
//! - attributes become keys beside the child elements (`<tcp-ip enabled="true">` is
//!   `tcp-ip: {enabled: true, ..}`); an element with attributes and text keeps its text under its
//!   own name (`<port auto-increment="false">5701</port>` is
//!   `port: {auto-increment: false, port: 5701}`), except where Hazelcast's YAML names it
//!   otherwise ([`TEXT_KEYS`]: a `<merge-policy>`'s text is its `class-name`);
//! - a child of the root with a `name` attribute is an entry of a named section
//!   (`<map name="orders">` is `map: {orders: ..}`);
//! - `<property name="k">v</property>` under `<properties>` is `k: v`;
//! - the lists of Hazelcast's schema ([`LISTS`]) become sequences, under the key the YAML file
//!   uses (`<tcp-ip><member>` and `<member-list><member>` are `member-list: [..]`,
//!   `<interfaces><interface>` is `interfaces: {interfaces: [..]}`, `<simple><user>` is
//!   `users: [..]`);
//! - any other element repeated under one parent becomes a sequence under its name, so no
//!   element is lost; comments and namespaces (prefixes, `xmlns`, `xsi:` attributes) are ignored.
//!
//! Bounds: the text is at most the caller's file bound; a DTD is refused (no entity expansion
//! beyond XML's five); elements nest at most [`MAX_XML_DEPTH`] deep. Every refusal names the line
//! and column.

use roxmltree::{Document, Node, ParsingOptions};
use serde_yaml::{Mapping, Value};

use crate::error::ConfigError;

/// Deepest element nesting accepted (Hazelcast's own files nest about 10 deep).
pub const MAX_XML_DEPTH: usize = 64;

/// Elements whose text goes under another key than their own name, as Hazelcast's YAML names
/// it: (element, key). `<merge-policy batch-size="100">PassThroughMergePolicy</merge-policy>` is
/// `merge-policy: {batch-size: 100, class-name: PassThroughMergePolicy}`.
const TEXT_KEYS: &[(&str, &str)] = &[("merge-policy", "class-name")];

/// The elements whose repeated children form a list: (parent, child, key). The key is where the
/// list goes in the parent's mapping; an empty key means the parent itself is the list.
const LISTS: &[(&str, &str, &str)] = &[
    ("member-list", "member", ""),
    ("tcp-ip", "member", "member-list"),
    ("interfaces", "interface", "interfaces"),
    ("indexes", "index", ""),
    ("attributes", "attribute", ""),
    ("realms", "realm", ""),
    ("simple", "user", "users"),
    ("user", "role", "roles"),
    ("tenants", "tenant", ""),
];

type Result<T> = std::result::Result<T, ConfigError>;

/// Parses `text` as XML and translates it into the YAML tree of the same configuration.
pub(crate) fn parse(text: &str) -> Result<Value> {
    let options = ParsingOptions { allow_dtd: false, ..ParsingOptions::default() };
    let document = Document::parse_with_options(text, options).map_err(|error| {
        let position = error.pos();
        let message = error.to_string();
        let message = message.strip_suffix(&format!(" at {position}")).unwrap_or(&message).to_owned();
        ConfigError::Xml { line: position.row, column: position.col, message }
    })?;
    let root = document.root_element();
    let (ferrogrid, children): (Vec<Node>, Vec<Node>) =
        root.children().filter(Node::is_element).partition(|child| child.tag_name().name() == "ferrogrid");
    let mut hazelcast = Mapping::new();
    fill(&document, root, children, 2, &mut hazelcast)?;
    let hazelcast = if hazelcast.is_empty() { Value::Null } else { Value::Mapping(hazelcast) };
    let mut top = Mapping::new();
    top.insert(key(root.tag_name().name()), hazelcast);
    if let Some(section) = ferrogrid.first() {
        let mut fields = Mapping::new();
        let children = ferrogrid.iter().flat_map(|section| section.children().filter(Node::is_element)).collect();
        fill(&document, *section, children, 3, &mut fields)?;
        top.insert(key("ferrogrid"), Value::Mapping(fields));
    }
    Ok(Value::Mapping(top))
}

/// `<map name="orders">..</map>` as the entry `orders` of the mapping `map`; a second entry of
/// the same name is refused, as YAML refuses a duplicate key.
fn insert_named(document: &Document, section: &mut Mapping, node: Node, name: &str, depth: usize) -> Result<()> {
    let tag = node.tag_name().name();
    let mut value = element(document, node, depth)?;
    if let Value::Mapping(fields) = &mut value {
        fields.remove("name");
    }
    let value = if value.as_mapping().is_some_and(Mapping::is_empty) { Value::Null } else { value };
    let entries = section.entry(key(tag)).or_insert_with(|| Value::Mapping(Mapping::new()));
    let Value::Mapping(entries) = entries else {
        return Err(at(document, node, format!("<{tag} name=\"{name}\"> beside a <{tag}> without a name")));
    };
    if entries.insert(key(name), value).is_some() {
        return Err(at(document, node, format!("a second <{tag} name=\"{name}\">")));
    }
    Ok(())
}

/// The YAML value of one element at `depth` (the root is 1).
fn element(document: &Document, node: Node, depth: usize) -> Result<Value> {
    if depth > MAX_XML_DEPTH {
        return Err(at(document, node, format!("elements nest deeper than {MAX_XML_DEPTH}")));
    }
    let tag = node.tag_name().name();
    let children: Vec<Node> = node.children().filter(Node::is_element).collect();
    let whole_list = children.first().is_some_and(|first| list_key(tag, first) == Some(""));
    if whole_list && node.attributes().all(|attribute| attribute.namespace().is_some()) {
        let items = children.iter().map(|child| element(document, *child, depth + 1));
        return items.collect::<Result<Vec<Value>>>().map(Value::Sequence);
    }
    let mut fields = Mapping::new();
    for attribute in node.attributes().filter(|attribute| attribute.namespace().is_none()) {
        fields.insert(key(attribute.name()), Value::String(attribute.value().to_owned()));
    }
    let text = text(node);
    if let Some((_, text_key)) = TEXT_KEYS.iter().find(|(element, _)| *element == tag) {
        if children.is_empty() && !text.is_empty() {
            fields.insert(key(text_key), Value::String(text));
            return Ok(Value::Mapping(fields));
        }
    }
    if children.is_empty() {
        return Ok(match (fields.is_empty(), text.is_empty()) {
            (true, true) => Value::Null,
            (true, false) => Value::String(text),
            (false, true) => Value::Mapping(fields),
            (false, false) => {
                fields.insert(key(tag), Value::String(text));
                Value::Mapping(fields)
            }
        });
    }
    fill(document, node, children, depth + 1, &mut fields)?;
    Ok(Value::Mapping(fields))
}

/// Adds the `children` of `parent` (each at `depth`) to its mapping `fields`.
fn fill(document: &Document, parent: Node, children: Vec<Node>, depth: usize, fields: &mut Mapping) -> Result<()> {
    let tag = parent.tag_name().name();
    let root = parent.parent().is_some_and(|above| above.is_root());
    let mut slots: Vec<(&str, Slot)> = Vec::new();
    for child in children {
        let child_tag = child.tag_name().name();
        if tag == "properties" && child_tag == "property" {
            if let Some(name) = child.attribute("name") {
                fields.insert(key(name), Value::String(text(child)));
                continue;
            }
        }
        if let Some(name) = child.attribute("name").filter(|_| root) {
            insert_named(document, fields, child, name, depth)?;
            continue;
        }
        let value = element(document, child, depth)?;
        let list = list_key(tag, &child).map(|list| if list.is_empty() { child_tag } else { list });
        let name = list.unwrap_or(child_tag);
        let index = match slots.iter().position(|(slot_name, _)| *slot_name == name) {
            Some(index) => index,
            None => {
                slots.push((name, Slot::Values(Vec::new())));
                slots.len() - 1
            }
        };
        slots[index].1.add(value, list.is_some());
    }
    for (name, slot) in slots {
        if fields.insert(key(name), slot.into_value()).is_some() {
            return Err(at(document, parent, format!("<{name}> both with and without a name under <{tag}>")));
        }
    }
    Ok(())
}

/// The values of the child elements that share one key of their parent's mapping.
enum Slot {
    /// Elements named alike: one is a value, several a sequence.
    Values(Vec<Value>),
    /// Items of a list of the schema (and any sequence given beside them, such as
    /// `<member-list>` beside `<member>`): always a sequence.
    List(Vec<Value>),
}

impl Slot {
    fn add(&mut self, value: Value, list_item: bool) {
        match self {
            Slot::Values(values) if !list_item => values.push(value),
            Slot::Values(values) => {
                let mut items = Vec::new();
                for earlier in std::mem::take(values) {
                    extend(&mut items, earlier);
                }
                items.push(value);
                *self = Slot::List(items);
            }
            Slot::List(items) if list_item => items.push(value),
            Slot::List(items) => extend(items, value),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Slot::Values(mut values) if values.len() == 1 => values.pop().expect("one value"),
            Slot::Values(values) | Slot::List(values) => Value::Sequence(values),
        }
    }
}

/// Adds a sequence's items, or a single value, to `items`.
fn extend(items: &mut Vec<Value>, value: Value) {
    match value {
        Value::Sequence(more) => items.extend(more),
        Value::Null => {}
        single => items.push(single),
    }
}

/// Where a `child` of the element `parent` goes when the schema makes it a list item.
fn list_key(parent: &str, child: &Node) -> Option<&'static str> {
    let child = child.tag_name().name();
    LISTS.iter().find(|(list_parent, item, _)| *list_parent == parent && *item == child).map(|(_, _, key)| *key)
}

/// The element's own text, trimmed as Hazelcast trims it (child elements' text excluded).
fn text(node: Node) -> String {
    let pieces = node.children().filter(Node::is_text).filter_map(|child| child.text());
    pieces.collect::<String>().trim().to_owned()
}

fn key(name: &str) -> Value {
    Value::String(name.to_owned())
}

/// An error about `node`, at its line and column.
fn at(document: &Document, node: Node, message: String) -> ConfigError {
    let position = document.text_pos_at(node.range().start);
    ConfigError::Xml { line: position.row, column: position.col, message }
}

#[cfg(test)]
mod tests;
