//! Reading a maps file in one streaming pass: serde visitors build the entries as the JSON goes by, with no value
//! tree in between, so memory follows the entries rather than the text. Shape errors stop the pass at the offending
//! entry; an error quotes at most [`EXCERPT_CHARS`] characters of the value at fault.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{
    entry_error, short_name, CpuValue, Entry, EntryValue, JsonError, MapEntries, MapsFile,
};

/// The `visit_*` methods of every JSON kind other than the one a visitor reads (`map` or `seq`), each failing with the
/// shape error `$err` (which may use the visitor as `$this`).
macro_rules! serde_other_kinds {
    (@scalars $this:ident => $err:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
    };
    (map, $this:ident => $err:expr) => {
        serde_other_kinds!(@scalars $this => $err);
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
    };
    (seq, $this:ident => $err:expr) => {
        serde_other_kinds!(@scalars $this => $err);
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            let $this = &self;
            Err(fail($this.shape(), $err))
        }
    };
}

/// The longest piece of a value an error message quotes.
pub const EXCERPT_CHARS: usize = 32;

/// Parses a maps file held in memory. Byte values are checked here; sizes are checked against the maps by
/// [`super::preload`].
pub fn parse(text: &str) -> Result<MapsFile, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    run(&mut de)
}

/// Parses a maps file from a reader (a `BufReader` over the file), without holding the text.
pub fn parse_reader<R: Read>(reader: R) -> Result<MapsFile, JsonError> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    run(&mut de)
}

fn run<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
) -> Result<MapsFile, JsonError> {
    let shape = RefCell::new(None);
    let result = FileSeed { shape: &shape }
        .deserialize(&mut *de)
        .and_then(|file| de.end().map(|()| file));
    match result {
        Ok(file) => Ok(file),
        Err(e) => Err(shape.into_inner().unwrap_or_else(|| syntax(&e))),
    }
}

fn syntax(e: &serde_json::Error) -> JsonError {
    JsonError::Syntax {
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    }
}

/// serde_json appends " at line L column C", which [`JsonError::Syntax`] already shows.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// `s` as a JSON string literal, cut to [`EXCERPT_CHARS`] characters with the full length named when longer.
pub(crate) fn excerpt(s: &str) -> String {
    let count = s.chars().count();
    if count <= EXCERPT_CHARS {
        return serde_json::Value::String(s.to_string()).to_string();
    }
    let head: String = s.chars().take(EXCERPT_CHARS).collect();
    let quoted = serde_json::Value::String(head).to_string();
    format!(
        "{}...\" (a string of {count} characters)",
        &quoted[..quoted.len() - 1]
    )
}

/// Where a shape error is kept while serde unwinds: the visitors return a placeholder serde error and the parse
/// reports this one instead.
type Shape<'s> = &'s RefCell<Option<JsonError>>;

fn fail<E: de::Error>(shape: Shape<'_>, error: JsonError) -> E {
    *shape.borrow_mut() = Some(error);
    E::custom("maps file shape")
}

struct FileSeed<'s> {
    shape: Shape<'s>,
}

impl<'s> FileSeed<'s> {
    fn shape(&self) -> Shape<'s> {
        self.shape
    }
}

impl<'de> DeserializeSeed<'de> for FileSeed<'_> {
    type Value = MapsFile;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<MapsFile, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FileSeed<'_> {
    type Value = MapsFile;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object keyed by map name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<MapsFile, A::Error> {
        let mut maps = Vec::new();
        let mut seen = HashSet::new();
        while let Some(name) = access.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                return Err(fail(
                    self.shape,
                    JsonError::DuplicateMap {
                        map: short_name(&name),
                    },
                ));
            }
            let entries = access.next_value_seed(EntriesSeed {
                shape: self.shape,
                map: &name,
            })?;
            maps.push(MapEntries { name, entries });
        }
        Ok(MapsFile { maps })
    }

    serde_other_kinds!(map, _this => JsonError::NotAnObject);
}

struct EntriesSeed<'s, 'm> {
    shape: Shape<'s>,
    map: &'m str,
}

impl<'s> EntriesSeed<'s, '_> {
    fn shape(&self) -> Shape<'s> {
        self.shape
    }
}

impl<'de> DeserializeSeed<'de> for EntriesSeed<'_, '_> {
    type Value = Vec<Entry>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Entry>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EntriesSeed<'_, '_> {
    type Value = Vec<Entry>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Vec<Entry>, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = access.next_element_seed(EntrySeed {
            shape: self.shape,
            map: self.map,
            index: entries.len(),
        })? {
            entries.push(entry);
        }
        Ok(entries)
    }

    serde_other_kinds!(seq, this => JsonError::NotAList {
        map: short_name(this.map)
    });
}

struct EntrySeed<'s, 'm> {
    shape: Shape<'s>,
    map: &'m str,
    index: usize,
}

impl<'s> EntrySeed<'s, '_> {
    fn shape(&self) -> Shape<'s> {
        self.shape
    }

    fn error<E: de::Error>(&self, problem: String) -> E {
        fail(self.shape, entry_error(self.map, self.index, problem))
    }
}

impl<'de> DeserializeSeed<'de> for EntrySeed<'_, '_> {
    type Value = Entry;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Entry, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed<'_, '_> {
    type Value = Entry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Entry, A::Error> {
        let (mut key, mut value, mut values) = (None, None, None);
        while let Some(field) = access.next_key::<String>()? {
            let bytes = |what: &'static str| BytesSeed {
                entry: &self,
                what: what.to_string(),
            };
            let duplicate = match field.as_str() {
                "key" => key.replace(access.next_value_seed(bytes("key"))?).is_some(),
                "value" => value
                    .replace(access.next_value_seed(bytes("value"))?)
                    .is_some(),
                "values" => values
                    .replace(access.next_value_seed(CpuValuesSeed { entry: &self })?)
                    .is_some(),
                "formatted" => access.next_value::<IgnoredAny>().map(|_| false)?,
                _ => return Err(self.error(format!("unknown field {}", excerpt(&field)))),
            };
            if duplicate {
                return Err(self.error(format!("field \"{field}\" is given twice")));
            }
        }
        let Some(key) = key else {
            return Err(self.error("no \"key\"".into()));
        };
        let value = match (value, values) {
            (Some(v), None) => EntryValue::Shared(v),
            (None, Some(vs)) => EntryValue::PerCpu(vs),
            (Some(_), Some(_)) => return Err(self.error("both \"value\" and \"values\"".into())),
            (None, None) => return Err(self.error("no \"value\" or \"values\"".into())),
        };
        Ok(Entry { key, value })
    }

    serde_other_kinds!(map, this => entry_error(
        this.map,
        this.index,
        "an entry must be an object with \"key\" and \"value\" or \"values\"".into()
    ));
}

/// `"values"`: an array of `{"cpu": N, "value": [...]}`.
struct CpuValuesSeed<'e, 's, 'm> {
    entry: &'e EntrySeed<'s, 'm>,
}

impl<'s> CpuValuesSeed<'_, 's, '_> {
    fn shape(&self) -> Shape<'s> {
        self.entry.shape
    }
}

impl<'de> DeserializeSeed<'de> for CpuValuesSeed<'_, '_, '_> {
    type Value = Vec<CpuValue>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<CpuValue>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CpuValuesSeed<'_, '_, '_> {
    type Value = Vec<CpuValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of per-cpu values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Vec<CpuValue>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = access.next_element_seed(CpuValueSeed {
            entry: self.entry,
            index: out.len(),
        })? {
            out.push(v);
        }
        Ok(out)
    }

    serde_other_kinds!(seq, this => entry_error(
        this.entry.map,
        this.entry.index,
        "\"values\" must be an array of {\"cpu\", \"value\"} objects".into()
    ));
}

/// One `{"cpu": N, "value": [...]}`; `index` is its place in `"values"`.
struct CpuValueSeed<'e, 's, 'm> {
    entry: &'e EntrySeed<'s, 'm>,
    index: usize,
}

impl<'s> CpuValueSeed<'_, 's, '_> {
    fn shape(&self) -> Shape<'s> {
        self.entry.shape
    }
}

impl<'de> DeserializeSeed<'de> for CpuValueSeed<'_, '_, '_> {
    type Value = CpuValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CpuValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CpuValueSeed<'_, '_, '_> {
    type Value = CpuValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a {\"cpu\", \"value\"} object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<CpuValue, A::Error> {
        let i = self.index;
        let (mut cpu, mut value) = (None, None);
        while let Some(field) = access.next_key::<String>()? {
            match field.as_str() {
                "cpu" => {
                    let c = access.next_value_seed(CpuSeed)?;
                    let c = c.ok_or_else(|| {
                        self.entry
                            .error::<A::Error>(format!("values[{i}] has no \"cpu\" number"))
                    })?;
                    cpu = Some(c);
                }
                "value" => {
                    let what = match cpu {
                        Some(c) => format!("value of cpu {c}"),
                        None => format!("values[{i}] value"),
                    };
                    value = Some(access.next_value_seed(BytesSeed {
                        entry: self.entry,
                        what,
                    })?);
                }
                _ => {
                    access.next_value::<IgnoredAny>()?;
                }
            }
        }
        let cpu = cpu.ok_or_else(|| {
            self.entry
                .error(format!("values[{i}] has no \"cpu\" number"))
        })?;
        let value =
            value.ok_or_else(|| self.entry.error(format!("values[{i}] has no \"value\"")))?;
        Ok(CpuValue { cpu, value })
    }

    serde_other_kinds!(map, this => entry_error(
        this.entry.map,
        this.entry.index,
        format!("values[{}] has no \"cpu\" number", this.index)
    ));
}

/// A byte array: `"0x.."` strings (one or two hex digits) or numbers 0-255.
struct BytesSeed<'e, 's, 'm> {
    entry: &'e EntrySeed<'s, 'm>,
    what: String,
}

impl<'s> BytesSeed<'_, 's, '_> {
    fn shape(&self) -> Shape<'s> {
        self.entry.shape
    }
}

impl<'de> DeserializeSeed<'de> for BytesSeed<'_, '_, '_> {
    type Value = Vec<u8>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BytesSeed<'_, '_, '_> {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of bytes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Vec<u8>, A::Error> {
        let mut out = Vec::new();
        while let Some(b) = access.next_element_seed(ByteSeed)? {
            match b {
                Ok(b) => out.push(b),
                Err(shown) => {
                    return Err(self.entry.error(format!(
                        "{} byte {}: {shown} is not \"0x..\" hex or a number 0-255",
                        self.what,
                        out.len()
                    )))
                }
            }
        }
        Ok(out)
    }

    serde_other_kinds!(seq, this => entry_error(
        this.entry.map,
        this.entry.index,
        format!("{} must be an array of bytes", this.what)
    ));
}

/// One byte, or what to show of an element that is not one.
struct ByteSeed;

impl<'de> DeserializeSeed<'de> for ByteSeed {
    type Value = Result<u8, String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let scalar = d.deserialize_any(ScalarVisitor)?;
        Ok(match scalar {
            Scalar::Unsigned(n) => u8::try_from(n).map_err(|_| n.to_string()),
            Scalar::Hex(b) => Ok(b),
            Scalar::Other(shown) => Err(shown),
        })
    }
}

/// A CPU number, or nothing when the value is not a `u32`.
struct CpuSeed;

impl<'de> DeserializeSeed<'de> for CpuSeed {
    type Value = Option<u32>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let scalar = d.deserialize_any(ScalarVisitor)?;
        Ok(match scalar {
            Scalar::Unsigned(n) => u32::try_from(n).ok(),
            _ => None,
        })
    }
}

/// A JSON value read where a number or byte string is expected.
enum Scalar {
    /// A non-negative integer.
    Unsigned(u64),
    /// A `"0x.."` string of one or two hex digits.
    Hex(u8),
    /// Anything else, as an error shows it (long strings cut to an excerpt, containers named).
    Other(String),
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a byte")
    }
    fn visit_u64<E>(self, n: u64) -> Result<Scalar, E> {
        Ok(Scalar::Unsigned(n))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Scalar, E> {
        Ok(u64::try_from(n).map_or_else(|_| Scalar::Other(n.to_string()), Scalar::Unsigned))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Scalar, E> {
        let shown =
            serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string());
        Ok(Scalar::Other(shown))
    }
    fn visit_str<E>(self, s: &str) -> Result<Scalar, E> {
        Ok(hex_byte(s).map_or_else(|| Scalar::Other(excerpt(s)), Scalar::Hex))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other(b.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other("null".into()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Scalar, A::Error> {
        while access.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an array".into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Scalar, A::Error> {
        while access.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an object".into()))
    }
}

fn hex_byte(s: &str) -> Option<u8> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}
