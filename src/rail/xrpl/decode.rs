//! The XRPL binary codec's decoding walk over a serialized transaction, held to its canonical form and to the caps
//! of `decoder-caps.json`.
//!
//! A field header names its type code and field code; the walk reads each field's value by its type (fixed-width
//! integers and hashes, amounts, length-prefixed blobs, accounts and 256-bit vectors, path sets, issues, bridges,
//! numbers, and nested objects and arrays closed by their end markers). The input must be the canonical
//! serialization of what it decodes to (xrpl.org Binary Format): each object's fields in ascending order of type
//! code and then field code with none repeated, no end marker and nothing after the top-level object's last field,
//! every nested object and array closed by its own end marker, and every array member an object. A field the
//! definitions do not name, or an enumeration value they do not name, is malformed, as in the reference's codec.
//!
//! Caps (`decoder-caps.json`): an STObject or STArray field sits at most [`MAX_DEPTH`] levels deep (a top-level
//! container at level 1, a container inside it one level below, an array's member object one level below the
//! array), and a blob holds at most [`MAX_FIELDS`] fields and array members. Both are checked as the walk goes, so
//! a blob past them is refused after reading at most that far.

use super::fields::{self, ACCOUNT, ARRAY, BLOB, Code, OBJECT, VECTOR256};
use super::values;

/// The deepest level an STObject or STArray field sits at.
pub const MAX_DEPTH: usize = 64;
/// The most fields and array members one blob holds.
pub const MAX_FIELDS: usize = 2048;

/// Why bytes do not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not a canonical serialization the codec reads.
    Malformed,
    /// A container field deeper than [`MAX_DEPTH`].
    TooDeep,
    /// More than [`MAX_FIELDS`] fields and array members.
    TooManyFields,
}

/// A field's value as decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value<'a> {
    /// A leaf value's bytes, without the length prefix of a variable-length type.
    Bytes(&'a [u8]),
    /// An object's fields, in order.
    Object(Vec<Field<'a>>),
    /// An array's members: each member's header (an STObject field) and its fields.
    Array(Vec<Field<'a>>),
}

/// One decoded field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// Its type code and field code.
    pub code: Code,
    /// Its value.
    pub value: Value<'a>,
}

impl<'a> Field<'a> {
    /// The leaf bytes, `None` for an object or array.
    pub fn bytes(&self) -> Option<&'a [u8]> {
        match self.value {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// An object's fields or an array's members, `None` for a leaf.
    pub fn children(&self) -> Option<&[Self]> {
        match &self.value {
            Value::Object(f) | Value::Array(f) => Some(f),
            Value::Bytes(_) => None,
        }
    }
}

/// The bytes being read.
pub(super) struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    fields: usize,
}

impl<'a> Reader<'a> {
    pub(super) const fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0, fields: 0 }
    }

    pub(super) const fn end(&self) -> bool {
        self.at >= self.data.len()
    }

    pub(super) fn peek(&self) -> Result<u8, DecodeError> {
        self.data.get(self.at).copied().ok_or(DecodeError::Malformed)
    }

    pub(super) fn read(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).ok_or(DecodeError::Malformed)?;
        let out = self.data.get(self.at..end).ok_or(DecodeError::Malformed)?;
        self.at = end;
        Ok(out)
    }

    pub(super) fn u8(&mut self) -> Result<u8, DecodeError> {
        let b = self.peek()?;
        self.at += 1;
        Ok(b)
    }

    /// A variable-length prefix: one, two or three bytes.
    fn length(&mut self) -> Result<usize, DecodeError> {
        let b1 = usize::from(self.u8()?);
        match b1 {
            0..=192 => Ok(b1),
            193..=240 => Ok(193 + (b1 - 193) * 256 + usize::from(self.u8()?)),
            241..=254 => {
                let (b2, b3) = (usize::from(self.u8()?), usize::from(self.u8()?));
                Ok(12_481 + (b1 - 241) * 65_536 + b2 * 256 + b3)
            }
            _ => Err(DecodeError::Malformed),
        }
    }

    /// A field header's codes; a code of 16 and above takes its own byte, and one below 16 never does.
    fn field(&mut self) -> Result<Code, DecodeError> {
        let head = self.u8()?;
        let (mut type_code, mut nth) = (head >> 4, head & 0x0F);
        if type_code == 0 {
            type_code = self.u8()?;
            if type_code < 16 {
                return Err(DecodeError::Malformed);
            }
        }
        if nth == 0 {
            nth = self.u8()?;
            if nth < 16 {
                return Err(DecodeError::Malformed);
            }
        }
        if !fields::is_known((type_code, nth)) {
            return Err(DecodeError::Malformed);
        }
        Ok((type_code, nth))
    }

    fn count(&mut self) -> Result<(), DecodeError> {
        self.fields += 1;
        if self.fields > MAX_FIELDS { Err(DecodeError::TooManyFields) } else { Ok(()) }
    }
}

/// Whether a type's value carries a length prefix.
pub(super) const fn is_variable(type_code: u8) -> bool {
    matches!(type_code, BLOB | ACCOUNT | VECTOR256)
}

/// A field's leaf value; `empty_account` lets an AccountID be empty (a UNLModify's Account), and then only empty.
fn leaf<'a>(r: &mut Reader<'a>, code: Code, empty_account: bool) -> Result<&'a [u8], DecodeError> {
    let (type_code, _) = code;
    if is_variable(type_code) {
        let n = r.length()?;
        let data = r.read(n)?;
        let ok = match type_code {
            ACCOUNT => data.len() == if empty_account { 0 } else { 20 },
            VECTOR256 => data.len().is_multiple_of(32),
            _ => true,
        };
        return if ok { Ok(data) } else { Err(DecodeError::Malformed) };
    }
    let start = r.at;
    values::fixed(r, code)?;
    Ok(r.data.get(start..r.at).unwrap_or_default())
}

/// The fields of an object whose fields sit one level below `level` (the top-level object is at level 0), up to its
/// end marker, or to the end of the bytes for the top-level object.
fn object<'a>(r: &mut Reader<'a>, level: usize) -> Result<Vec<Field<'a>>, DecodeError> {
    let mut out = Vec::new();
    let mut last: u32 = 0;
    let mut unl_modify = false;
    let mut closed = false;
    while !r.end() {
        let code = r.field()?;
        if code == fields::OBJECT_END {
            closed = true;
            break;
        }
        if code == fields::ARRAY_END {
            return Err(DecodeError::Malformed);
        }
        let ordinal = u32::from(code.0) << 16 | u32::from(code.1);
        if ordinal <= last {
            return Err(DecodeError::Malformed);
        }
        last = ordinal;
        r.count()?;
        let value = match code.0 {
            OBJECT => Value::Object(object(r, container_level(level)?)?),
            ARRAY => Value::Array(array(r, container_level(level)?)?),
            _ => {
                let bytes = leaf(r, code, unl_modify && code == fields::ACCOUNT_FIELD)?;
                let modify = match code {
                    fields::TRANSACTION_TYPE => bytes == fields::UNL_MODIFY.to_be_bytes(),
                    (fields::UINT32, 52) => bytes == (u32::from(fields::UNL_MODIFY) + 1).to_be_bytes(),
                    _ => false,
                };
                unl_modify |= modify;
                Value::Bytes(bytes)
            }
        };
        out.push(Field { code, value });
    }
    if closed == (level == 0) {
        return Err(DecodeError::Malformed);
    }
    Ok(out)
}

/// The level of a container field read inside an object at `level`, within [`MAX_DEPTH`].
fn container_level(level: usize) -> Result<usize, DecodeError> {
    let next = level + 1;
    if next > MAX_DEPTH { Err(DecodeError::TooDeep) } else { Ok(next) }
}

/// The members of an array at `level`, up to its end marker: each an object (not an end marker) one level below.
fn array<'a>(r: &mut Reader<'a>, level: usize) -> Result<Vec<Field<'a>>, DecodeError> {
    let mut out = Vec::new();
    loop {
        if r.end() {
            return Err(DecodeError::Malformed);
        }
        let code = r.field()?;
        if code == fields::ARRAY_END {
            return Ok(out);
        }
        if code.0 != OBJECT || code == fields::OBJECT_END {
            return Err(DecodeError::Malformed);
        }
        r.count()?;
        let member = container_level(level)?;
        out.push(Field { code, value: Value::Object(object(r, member)?) });
    }
}

/// The fields of a serialized transaction (or any top-level STObject), held to the canonical form and the caps.
pub fn decode(data: &[u8]) -> Result<Vec<Field<'_>>, DecodeError> {
    let mut r = Reader::new(data);
    object(&mut r, 0)
}

/// The bytes of `fields`, written back in the canonical form.
pub fn encode(fields: &[Field<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    write_fields(&mut out, fields);
    out
}

fn write_fields(out: &mut Vec<u8>, fields: &[Field<'_>]) {
    for f in fields {
        write_header(out, f.code);
        match &f.value {
            Value::Bytes(b) => {
                if is_variable(f.code.0) {
                    write_length(out, b.len());
                }
                out.extend_from_slice(b);
            }
            Value::Object(inner) => {
                write_fields(out, inner);
                out.push(0xE1);
            }
            Value::Array(members) => {
                for m in members {
                    write_header(out, m.code);
                    write_fields(out, m.children().unwrap_or_default());
                    out.push(0xE1);
                }
                out.push(0xF1);
            }
        }
    }
}

/// A field header.
pub(super) fn write_header(out: &mut Vec<u8>, (type_code, nth): Code) {
    match (type_code < 16, nth < 16) {
        (true, true) => out.push(type_code << 4 | nth),
        (true, false) => out.extend([type_code << 4, nth]),
        (false, true) => out.extend([nth, type_code]),
        (false, false) => out.extend([0, type_code, nth]),
    }
}

/// A variable-length prefix (lengths up to 918,744).
pub(super) fn write_length(out: &mut Vec<u8>, n: usize) {
    if n <= 192 {
        out.push(n as u8);
    } else if n <= 12_480 {
        let n = n - 193;
        out.extend([193 + (n >> 8) as u8, (n & 0xFF) as u8]);
    } else {
        let n = n - 12_481;
        out.extend([241 + (n >> 16) as u8, ((n >> 8) & 0xFF) as u8, (n & 0xFF) as u8]);
    }
}

/// The field of `fields` with `code`.
pub fn find<'f, 'a>(fields: &'f [Field<'a>], code: Code) -> Option<&'f Field<'a>> {
    fields.iter().find(|f| f.code == code)
}

/// The leaf bytes of the field of `fields` with `code`.
pub fn leaf_of<'a>(fields: &[Field<'a>], code: Code) -> Option<&'a [u8]> {
    find(fields, code).and_then(Field::bytes)
}

/// A UInt32 field's value.
pub fn u32_of(fields: &[Field<'_>], code: Code) -> Option<u32> {
    leaf_of(fields, code).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes)
}
