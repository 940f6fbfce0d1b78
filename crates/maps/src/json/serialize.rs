//! `Serialize` for [`MapsFile`] with bpftool's spelling: bytes as `"0x%02x"` strings.

use super::{CpuValue, Entry, EntryValue, MapsFile};
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

/// Bytes as bpftool prints them.
struct Hex<'a>(&'a [u8]);

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for b in self.0 {
            seq.serialize_element(&format!("0x{b:02x}"))?;
        }
        seq.end()
    }
}

impl Serialize for MapsFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.maps.len()))?;
        for m in &self.maps {
            map.serialize_entry(&m.name, &m.entries)?;
        }
        map.end()
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Entry", 2)?;
        st.serialize_field("key", &Hex(&self.key))?;
        match &self.value {
            EntryValue::Shared(v) => st.serialize_field("value", &Hex(v))?,
            EntryValue::PerCpu(vs) => st.serialize_field("values", vs)?,
        }
        st.end()
    }
}

impl Serialize for CpuValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("CpuValue", 2)?;
        st.serialize_field("cpu", &self.cpu)?;
        st.serialize_field("value", &Hex(&self.value))?;
        st.end()
    }
}
