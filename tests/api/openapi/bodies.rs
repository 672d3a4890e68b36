//! The request bodies the document describes are the ones the domain reads: each
//! documented body names exactly the fields of the type its route deserializes.

use std::collections::BTreeSet;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

use super::conformance::Conformance;
use super::{operations, resolve};

/// The field names a `Deserialize` struct reads, as serde hands them to a deserializer.
fn field_names<T: DeserializeOwned>() -> BTreeSet<String> {
    struct Names<'a>(&'a mut BTreeSet<String>);

    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend(fields.iter().map(|f| f.to_string()));
            Err(de::Error::custom("names taken"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut names = BTreeSet::new();
    let _ = T::deserialize(Names(&mut names));
    assert!(
        !names.is_empty(),
        "{} is not a struct",
        std::any::type_name::<T>()
    );
    names
}

#[test]
fn documented_request_bodies_are_the_ones_the_domain_reads() {
    use iq_actors::accounts as a;
    let doc: Value = serde_json::from_str(iq_service::routes::json()).unwrap();
    let bodies: Vec<(&str, &str, BTreeSet<String>)> = vec![
        ("POST", "/api/v1/setup", field_names::<a::SetupRequest>()),
        (
            "POST",
            "/api/v1/auth/login",
            field_names::<a::LoginRequest>(),
        ),
        ("POST", "/api/v1/keys", field_names::<a::NewKey>()),
        ("PATCH", "/api/v1/keys/{id}", field_names::<a::KeyRename>()),
        ("POST", "/api/v1/admin/users", field_names::<a::NewUser>()),
        (
            "PATCH",
            "/api/v1/admin/users/{id}",
            field_names::<a::UserPatch>(),
        ),
        (
            "PUT",
            "/api/v1/admin/tiers/{tier}",
            field_names::<a::TierSettings>(),
        ),
        (
            "PATCH",
            "/api/v1/admin/keys/{id}",
            field_names::<a::KeyPatch>(),
        ),
        (
            "PATCH",
            "/api/v1/admin/indexes/{index_code}",
            field_names::<a::IndexPatch>(),
        ),
        (
            "PUT",
            "/api/v1/admin/calendar",
            field_names::<iq_actors::calendar::CalendarChange>(),
        ),
        (
            "POST",
            "/api/v1/webhooks",
            field_names::<iq_actors::webhooks::NewWebhook>(),
        ),
        (
            "POST",
            "/api/v1/auth/password",
            field_names::<a::PasswordChange>(),
        ),
        (
            "POST",
            "/api/v1/webhooks/{id}/recover",
            field_names::<iq_actors::webhooks::Recover>(),
        ),
    ];
    let conformance = Conformance { doc: &doc };
    for (method, path, operation) in operations(&doc) {
        let Some(schema) = operation["requestBody"]["content"]["application/json"].get("schema")
        else {
            continue;
        };
        if path == "/api/v1/query" {
            continue; // from the catalogue, checked above
        }
        // Tushare's body is read as JSON by its own keys (D24).
        let tushare: BTreeSet<String> = iq_actors::tushare::TOP_LEVEL_KEYS
            .iter()
            .map(|k| k.to_string())
            .collect();
        let fields = if path.starts_with("/tushare") {
            &tushare
        } else {
            &bodies
                .iter()
                .find(|(m, p, _)| *m == method && *p == path)
                .unwrap_or_else(|| panic!("{method} {path}: add its body's type to this test"))
                .2
        };
        // One form or several (`oneOf`): together they name the type's fields.
        let schema = resolve(&doc, schema);
        let forms: Vec<&Value> = match schema["oneOf"].as_array() {
            Some(forms) => forms.iter().collect(),
            None => vec![schema],
        };
        let mut documented = BTreeSet::new();
        for form in forms {
            documented.extend(conformance.documented(form).expect("an object"));
        }
        assert_eq!(&documented, fields, "{method} {path}");
    }
}
