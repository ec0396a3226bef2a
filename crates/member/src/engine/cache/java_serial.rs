//! Reads the few Java-serialized objects a JCache client sends as data (type −100, Java's
//! `ObjectOutputStream`): its expiry policies and their factories (`expiry.rs` reads those
//! from the tree this builds), and the class of an entry processor the member cannot run.
//! No class is ever loaded: the stream's grammar (objects, class descriptors, strings, enums,
//! references, block data) is walked into [`Value`]s.
//!
//! Hand-written because it is small and bounded (the stream of one `Data`, at most
//! [`MAX_DEPTH`] nested objects and [`MAX_HANDLES`] handles) and no kept crate reads Java
//! serialization without also aiming to run it. A stream outside this grammar (arrays, class
//! objects, proxies) is refused with the construct it met.

use std::rc::Rc;

/// Hazelcast's type id of Java serialization.
pub(crate) const JAVA_SERIALIZATION: i32 = -100;
/// Nesting this reader follows at most (an expiry policy factory nests 4).
const MAX_DEPTH: usize = 16;
/// Handles one stream may assign at most.
const MAX_HANDLES: usize = 1024;
const BASE_HANDLE: u32 = 0x7E_0000;

const TC_NULL: u8 = 0x70;
const TC_REFERENCE: u8 = 0x71;
const TC_CLASSDESC: u8 = 0x72;
const TC_OBJECT: u8 = 0x73;
const TC_STRING: u8 = 0x74;
const TC_BLOCKDATA: u8 = 0x77;
const TC_ENDBLOCKDATA: u8 = 0x78;
const TC_BLOCKDATALONG: u8 = 0x7A;
const TC_LONGSTRING: u8 = 0x7C;
const TC_ENUM: u8 = 0x7E;
const SC_WRITE_METHOD: u8 = 0x01;
const SC_SERIALIZABLE: u8 = 0x02;

/// A value of the stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    /// Any primitive, widened (a `float` or `double` is kept as its bits).
    Primitive(i64),
    Text(Rc<str>),
    Enum {
        class: Rc<str>,
        constant: Rc<str>,
    },
    /// An object: its class and its serializable fields, superclasses' first.
    Object {
        class: Rc<str>,
        fields: Vec<(Rc<str>, Value)>,
    },
}

impl Value {
    /// The object's class name (None for anything else).
    pub(crate) fn class(&self) -> Option<&str> {
        match self {
            Value::Object { class, .. } | Value::Enum { class, .. } => Some(class),
            _ => None,
        }
    }

    /// The object's field `name`.
    pub(crate) fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object { fields, .. } => fields.iter().find(|(field, _)| &**field == name).map(|(_, value)| value),
            _ => None,
        }
    }
}

#[derive(Debug)]
struct ClassDesc {
    name: Rc<str>,
    flags: u8,
    /// (type code, name) in stream order.
    fields: Vec<(u8, Rc<str>)>,
    superclass: Option<Rc<ClassDesc>>,
}

#[derive(Debug, Clone)]
enum Handle {
    Class(Rc<ClassDesc>),
    Value(Value),
}

struct Stream<'a> {
    bytes: &'a [u8],
    at: usize,
    handles: Vec<Handle>,
}

/// The class named first in a Java-serialized payload (what Hazelcast's member would have
/// failed to load), if the payload starts as `ObjectOutputStream` writes an object.
pub(crate) fn top_class(payload: &[u8]) -> Option<String> {
    let rest = payload.strip_prefix(&[0xAC, 0xED, 0x00, 0x05, TC_OBJECT, TC_CLASSDESC])?;
    let length = u16::from_be_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    Some(String::from_utf8_lossy(rest.get(2..2 + length)?).into_owned())
}

/// Reads the one object a Java-serialized payload (a `Data`'s payload, after its 8-byte header)
/// holds.
pub(crate) fn read(payload: &[u8]) -> Result<Value, String> {
    let body = payload.strip_prefix(&[0xAC, 0xED, 0x00, 0x05]).ok_or("not a Java serialization stream")?;
    let mut stream = Stream { bytes: body, at: 0, handles: Vec::new() };
    stream.content(0)
}

impl Stream<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len()).ok_or("a truncated stream")?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn number(&mut self, n: usize) -> Result<i64, String> {
        let bytes = self.take(n)?;
        let mut value = if bytes[0] & 0x80 != 0 { -1i64 } else { 0 };
        for byte in bytes {
            value = value << 8 | i64::from(*byte);
        }
        Ok(value)
    }

    fn utf(&mut self, long: bool) -> Result<Rc<str>, String> {
        let length = if long { self.number(8)? as usize } else { self.number(2)? as u16 as usize };
        let bytes = self.take(length)?;
        Ok(String::from_utf8_lossy(bytes).into())
    }

    fn assign(&mut self, handle: Handle) -> Result<usize, String> {
        if self.handles.len() >= MAX_HANDLES {
            return Err(format!("more than {MAX_HANDLES} handles"));
        }
        self.handles.push(handle);
        Ok(self.handles.len() - 1)
    }

    fn reference(&mut self) -> Result<Handle, String> {
        let handle = self.number(4)? as u32;
        let index = handle.checked_sub(BASE_HANDLE).ok_or("a reference below the first handle")? as usize;
        self.handles.get(index).cloned().ok_or_else(|| "a reference to no handle".to_owned())
    }

    fn content(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("objects nested deeper than {MAX_DEPTH}"));
        }
        match self.u8()? {
            TC_NULL => Ok(Value::Null),
            TC_REFERENCE => match self.reference()? {
                Handle::Value(value) => Ok(value),
                Handle::Class(_) => Err("a reference to a class where an object belongs".into()),
            },
            TC_STRING | TC_LONGSTRING => {
                let long = self.bytes[self.at - 1] == TC_LONGSTRING;
                let text = Value::Text(self.utf(long)?);
                self.assign(Handle::Value(text.clone()))?;
                Ok(text)
            }
            TC_ENUM => {
                let class = self.class_desc(depth)?.ok_or("an enum without a class")?;
                let handle = self.assign(Handle::Value(Value::Null))?;
                let Value::Text(constant) = self.content(depth + 1)? else { return Err("an enum constant".into()) };
                let value = Value::Enum { class: class.name.clone(), constant };
                self.handles[handle] = Handle::Value(value.clone());
                Ok(value)
            }
            TC_OBJECT => self.object(depth),
            other => Err(format!("the stream construct 0x{other:02x}")),
        }
    }

    fn class_desc(&mut self, depth: usize) -> Result<Option<Rc<ClassDesc>>, String> {
        match self.u8()? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.reference()? {
                Handle::Class(class) => Ok(Some(class)),
                Handle::Value(_) => Err("a reference to an object where a class belongs".into()),
            },
            TC_CLASSDESC => {
                let name = self.utf(false)?;
                self.take(8)?; // serialVersionUID
                let handle = self.assign(Handle::Value(Value::Null))?;
                let flags = self.u8()?;
                let count = self.number(2)? as u16;
                let mut fields = Vec::new();
                for _ in 0..count {
                    let code = self.u8()?;
                    let field = self.utf(false)?;
                    if code == b'L' || code == b'[' {
                        self.content(depth + 1)?; // the field's class name
                    }
                    fields.push((code, field));
                }
                self.skip_annotation(depth)?;
                let superclass = self.class_desc(depth + 1)?;
                let class = Rc::new(ClassDesc { name, flags, fields, superclass });
                self.handles[handle] = Handle::Class(class.clone());
                Ok(Some(class))
            }
            other => Err(format!("the class construct 0x{other:02x}")),
        }
    }

    fn skip_annotation(&mut self, depth: usize) -> Result<(), String> {
        loop {
            match self.bytes.get(self.at).copied().ok_or("a truncated stream")? {
                TC_ENDBLOCKDATA => {
                    self.at += 1;
                    return Ok(());
                }
                TC_BLOCKDATA => {
                    self.at += 1;
                    let length = self.u8()? as usize;
                    self.take(length)?;
                }
                TC_BLOCKDATALONG => {
                    self.at += 1;
                    let length = self.number(4)? as u32 as usize;
                    self.take(length)?;
                }
                _ => {
                    self.content(depth + 1)?;
                }
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        let class = self.class_desc(depth)?.ok_or("an object without a class")?;
        let handle = self.assign(Handle::Value(Value::Null))?;
        let mut chain = Vec::new();
        let mut next = Some(class.clone());
        while let Some(desc) = next {
            next = desc.superclass.clone();
            chain.push(desc);
        }
        let mut fields = Vec::new();
        for desc in chain.iter().rev() {
            if desc.flags & SC_SERIALIZABLE == 0 {
                return Err(format!("{} is not Serializable (Externalizable objects are not read)", desc.name));
            }
            for (code, name) in &desc.fields {
                let value = match code {
                    b'B' | b'Z' => Value::Primitive(self.number(1)?),
                    b'C' | b'S' => Value::Primitive(self.number(2)?),
                    b'I' | b'F' => Value::Primitive(self.number(4)?),
                    b'J' | b'D' => Value::Primitive(self.number(8)?),
                    b'L' | b'[' => self.content(depth + 1)?,
                    other => return Err(format!("the field type code {:?}", *other as char)),
                };
                fields.push((name.clone(), value));
            }
            if desc.flags & SC_WRITE_METHOD != 0 {
                self.skip_annotation(depth)?;
            }
        }
        let value = Value::Object { class: class.name.clone(), fields };
        self.handles[handle] = Handle::Value(value.clone());
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `EternalExpiryPolicy.factoryOf()` as the Hazelcast 5.6.0 client serializes it (the
    /// payload after the Data header; `tests/python/cache_codec.py` has the whole Data).
    pub(crate) const ETERNAL_FACTORY: &str = "aced0005737200396a617661782e63616368652e636f6e66696775726174696f6e2e466163746f72794275696c6465722453696e676c65746f6e466163746f72790000002edeb815420200014c0008696e7374616e63657400124c6a6176612f6c616e672f4f626a6563743b7870737200266a617661782e63616368652e6578706972792e457465726e616c457870697279506f6c6963790000002edeb815230200007870";

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn a_factory_of_the_eternal_policy_reads_as_its_object_tree() {
        let value = read(&hex(ETERNAL_FACTORY)).unwrap();
        assert_eq!(value.class(), Some("javax.cache.configuration.FactoryBuilder$SingletonFactory"));
        let instance = value.field("instance").unwrap();
        assert_eq!(instance.class(), Some("javax.cache.expiry.EternalExpiryPolicy"));
        assert_eq!(top_class(&hex(ETERNAL_FACTORY)).as_deref(), value.class());
    }

    #[test]
    fn every_truncation_is_refused_never_a_panic() {
        let bytes = hex(ETERNAL_FACTORY);
        for end in 0..bytes.len() {
            assert!(read(&bytes[..end]).is_err(), "truncated at {end}");
        }
        let mut corrupt = bytes.clone();
        corrupt[4] = 0x7B;
        assert!(read(&corrupt).unwrap_err().contains("0x7b"));
    }
}
