//! Reading a maps file: JSON syntax first (errors with line and column), then the bpftool shape.

use super::{entry_error, CpuValue, Entry, EntryValue, JsonError, MapEntries, MapsFile};
use serde_json::Value;

/// Parses a maps file. Byte values are checked here; sizes are checked against the maps by [`super::preload`].
pub fn parse(text: &str) -> Result<MapsFile, JsonError> {
    let root: Value = serde_json::from_str(text).map_err(|e| JsonError::Syntax {
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    let Value::Object(object) = root else {
        return Err(JsonError::NotAnObject);
    };
    let mut maps = Vec::with_capacity(object.len());
    for (name, list) in object {
        let Value::Array(items) = list else {
            return Err(JsonError::NotAList { map: name });
        };
        let entries = items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_entry(&name, i, item))
            .collect::<Result<Vec<_>, _>>()?;
        maps.push(MapEntries { name, entries });
    }
    Ok(MapsFile { maps })
}

/// serde_json appends " at line L column C", which [`JsonError::Syntax`] already shows.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn parse_entry(map: &str, index: usize, item: &Value) -> Result<Entry, JsonError> {
    let err = |problem: String| entry_error(map, index, problem);
    let Value::Object(fields) = item else {
        return Err(err(
            "an entry must be an object with \"key\" and \"value\" or \"values\"".into(),
        ));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !matches!(k.as_str(), "key" | "value" | "values" | "formatted"))
    {
        return Err(err(format!("unknown field \"{unknown}\"")));
    }
    let key = match fields.get("key") {
        Some(k) => bytes(k, "key").map_err(err)?,
        None => return Err(err("no \"key\"".into())),
    };
    let value = match (fields.get("value"), fields.get("values")) {
        (Some(v), None) => EntryValue::Shared(bytes(v, "value").map_err(err)?),
        (None, Some(vs)) => EntryValue::PerCpu(cpu_values(vs).map_err(err)?),
        (Some(_), Some(_)) => return Err(err("both \"value\" and \"values\"".into())),
        (None, None) => return Err(err("no \"value\" or \"values\"".into())),
    };
    Ok(Entry { key, value })
}

fn cpu_values(v: &Value) -> Result<Vec<CpuValue>, String> {
    let Value::Array(items) = v else {
        return Err("\"values\" must be an array of {\"cpu\", \"value\"} objects".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let cpu = item
                .get("cpu")
                .and_then(Value::as_u64)
                .and_then(|c| u32::try_from(c).ok())
                .ok_or_else(|| format!("values[{i}] has no \"cpu\" number"))?;
            let value = item
                .get("value")
                .ok_or_else(|| format!("values[{i}] has no \"value\""))
                .and_then(|v| bytes(v, &format!("value of cpu {cpu}")))?;
            Ok(CpuValue { cpu, value })
        })
        .collect()
}

/// A byte array: `"0x.."` strings (one or two hex digits) or numbers 0-255.
fn bytes(v: &Value, what: &str) -> Result<Vec<u8>, String> {
    let Value::Array(items) = v else {
        return Err(format!("{what} must be an array of bytes"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, b)| {
            byte(b).ok_or_else(|| {
                format!("{what} byte {i}: {b} is not \"0x..\" hex or a number 0-255")
            })
        })
        .collect()
}

fn byte(v: &Value) -> Option<u8> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u8::try_from(n).ok()),
        Value::String(s) => {
            let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
            if digits.is_empty()
                || digits.len() > 2
                || !digits.bytes().all(|c| c.is_ascii_hexdigit())
            {
                return None;
            }
            u8::from_str_radix(digits, 16).ok()
        }
        _ => None,
    }
}
