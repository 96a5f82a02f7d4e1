//! Lenient borrowed JSON field types for the extractors' line structs.
//!
//! Transcript formats change every release: a field that is a string today
//! may be an object tomorrow. Deriving `Deserialize` with plain `String`
//! fields would reject the whole line on such a change. These types accept
//! any JSON value and keep only the shape they expect (everything else reads
//! as absent), and they borrow from the line when it has no escapes, so a
//! line parses without copying its text.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Implements the scalar visits (bool, numbers, null) as "absent".
macro_rules! scalar_as_none {
    ($none:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// A JSON string (borrowed when possible); any other value reads as `None`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'a> Str<'a> {
    /// The string, if the value was one.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The string, if the value was a non-empty one.
    pub fn non_empty(&self) -> Option<&str> {
        self.get().filter(|s| !s.is_empty())
    }
}

/// `true` only when the value was JSON `true`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

/// A non-negative integer; any other value reads as `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Uint(pub Option<u64>);

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Str<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Str(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Str(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Str(Some(Cow::Owned(v))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|_| Str(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|_| Str(None))
    }

    scalar_as_none!(Str(None));
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor)
    }
}

struct FlagVisitor;

impl<'de> Visitor<'de> for FlagVisitor {
    type Value = Flag;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Flag(v))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Flag(false))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|_| Flag(false))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|_| Flag(false))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Flag(false))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Flag(false))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Flag(false))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Flag(false))
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FlagVisitor)
    }
}

struct UintVisitor;

impl<'de> Visitor<'de> for UintVisitor {
    type Value = Uint;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Uint(Some(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Uint(u64::try_from(v).ok()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Uint(
            (v >= 0.0 && v.fract() == 0.0 && v < 1e18).then_some(v as u64),
        ))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Uint(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Uint(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Uint(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|_| Uint(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|_| Uint(None))
    }
}

impl<'de> Deserialize<'de> for Uint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UintVisitor)
    }
}

/// Consumes the rest of a sequence.
pub fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Consumes the rest of a map.
pub fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A list of `T`; a value that is not an array reads as empty. Elements that
/// fail to parse as `T` make the whole list fail, so `T` should be lenient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

struct ListVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = List<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element::<T>()? {
            v.push(x);
        }
        Ok(List(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|_| List(Vec::new()))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(List(Vec::new()))
    }

    scalar_as_none!(List(Vec::new()));
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor(std::marker::PhantomData))
    }
}

/// An object parsed as `T`; any other value reads as `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

struct ObjVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|_| Obj(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    scalar_as_none!(Obj(None));
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(default, borrow)]
        s: Str<'a>,
        #[serde(default)]
        f: Flag,
        #[serde(default)]
        n: Uint,
        #[serde(default)]
        l: List<Str<'a>>,
    }

    #[test]
    fn wrong_shapes_read_as_absent() {
        let t: T = serde_json::from_str(r#"{"s":{"a":[1]},"f":"yes","n":-1,"l":{"x":1}}"#).unwrap();
        assert_eq!(
            (t.s.get(), t.f.0, t.n.0, t.l.0.len()),
            (None, false, None, 0)
        );
        let t: T = serde_json::from_str(r#"{"s":"a\nb","f":true,"n":7,"l":["x",2]}"#).unwrap();
        assert_eq!((t.s.get(), t.f.0, t.n.0), (Some("a\nb"), true, Some(7)));
        assert_eq!(
            t.l.0.iter().map(|s| s.get()).collect::<Vec<_>>(),
            vec![Some("x"), None]
        );
    }

    #[test]
    fn plain_strings_are_borrowed() {
        let t: T = serde_json::from_str(r#"{"s":"plain"}"#).unwrap();
        assert!(matches!(t.s.0, Some(Cow::Borrowed("plain"))));
    }
}
