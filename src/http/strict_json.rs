//! JSON text to a `serde_json::Value`, refusing a name that appears twice in one object
//! (D13): `{"limit": 1, "limit": 5000}` must not mean whichever the parser kept last,
//! since a proxy or a log may have read the other one.
//!
//! The error names the repeated member by its path (`index_code`, `params.index_code`,
//! `fields[2].x`), as every other 40001 names what is wrong. This module only parses;
//! it must never build anything but the `Value` (no shape checks: those belong to the
//! handlers), and never recurse without a bound (serde_json's own depth limit of 128
//! applies, since every nested value is read through its deserializer).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses `bytes` as JSON; a repeated name in any object is an error naming it.
pub fn from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = Node { path: Path::Body }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Where a value sits in the body: a chain of borrowed steps back to the body, written
/// out as text only for an error (every request's body is parsed here, and building
/// each member's and item's path as text was a third of the parse's instructions).
#[derive(Clone, Copy)]
enum Path<'p> {
    Body,
    Member(&'p Path<'p>, &'p str),
    Item(&'p Path<'p>, usize),
}

/// `params.index_code`, `fields[2].x`, `[0]`: as the other 40001 errors name a member.
impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Body => Ok(()),
            Path::Member(Path::Body, name) => f.write_str(name),
            Path::Member(parent, name) => write!(f, "{parent}.{name}"),
            Path::Item(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// The value at `path`.
struct Node<'p> {
    path: Path<'p>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // Non-finite numbers cannot come out of JSON text; `Null` is never reached.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = Path::Item(&self.path, items.len());
            match seq.next_element_seed(Node { path })? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let path = Path::Member(&self.path, &name);
            if members.contains_key(&name) {
                return Err(de::Error::custom(format_args!(
                    "the name '{path}' appears twice"
                )));
            }
            let value = map.next_value_seed(Node { path })?;
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn error(text: &str) -> String {
        from_slice(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn a_repeated_name_is_named_by_its_path() {
        assert!(error(r#"{"limit":1,"limit":2}"#).contains("'limit' appears twice"));
        assert!(error(r#"{"params":{"index_code":"a","index_code":"b"}}"#)
            .contains("'params.index_code' appears twice"));
        assert!(error(r#"{"fields":[{"x":1,"x":1}]}"#).contains("'fields[0].x' appears twice"));
        assert!(error(r#"[{"a":1},{"a":1,"a":2}]"#).contains("'[1].a' appears twice"));
        assert!(error(r#"{"a":[0,[{"b":{"c":1,"c":2}}]]}"#).contains("'a[1][0].b.c' appears twice"));
    }

    #[test]
    fn the_same_name_in_different_objects_is_fine() {
        let value = from_slice(br#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#).unwrap();
        assert_eq!(value, json!({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}));
    }

    #[test]
    fn trailing_text_and_bad_json_are_errors() {
        assert!(from_slice(b"{} x").is_err());
        assert!(from_slice(b"{\"a\":").is_err());
        assert!(from_slice(b"").is_err());
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000);
        assert!(from_slice(deep.as_bytes()).is_err());
    }

    proptest! {
        /// Whatever serde_json parses without duplicates, this parses to the same value.
        #[test]
        fn agrees_with_serde_json(value in arb_json()) {
            let text = serde_json::to_vec(&value).unwrap();
            prop_assert_eq!(from_slice(&text).unwrap(), value);
        }

        /// Arbitrary bytes never panic.
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = from_slice(&bytes);
        }

        /// Mutated request bodies never panic, and agree with serde_json when accepted.
        #[test]
        fn mutated_bodies(cut in 0usize..120, byte in any::<u8>()) {
            let mut body = br#"{"api_name":"index_daily","params":{"index_code":"GPU_Index","start_date":"20261101"},"fields":["trade_date"],"limit":10}"#.to_vec();
            let at = cut.min(body.len() - 1);
            body[at] = byte;
            if let Ok(value) = from_slice(&body) {
                prop_assert_eq!(serde_json::from_slice::<Value>(&body).ok(), Some(value));
            }
        }
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-z\\u{0}-\\u{7f}\\u{100}-\\u{10ffff}]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z_]{1,6}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
