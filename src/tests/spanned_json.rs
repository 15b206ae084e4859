//! The span-tracking JSON reader agrees with serde_json (a strict RFC 8259 parser) on what is
//! JSON and what it means.

use crate::settings::spanned;
use proptest::prelude::*;

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        (-1e12f64..1e12).prop_map(|f| serde_json::json!(f)),
        ".*".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::vec((".{0,8}", inner), 0..8)
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn round_trips_what_serde_json_writes(v in json_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        let doc = spanned::parse(&text).unwrap();
        prop_assert_eq!(doc.root.value.to_serde(), v);
    }

    #[test]
    fn accepts_only_what_serde_json_accepts(text in r#"[\[\]{}",:0-9a-z \n.\-+\\]{0,24}"#) {
        // Exponents can overflow f64, which serde_json rejects and JSON.parse accepts.
        prop_assume!(!text.contains('e') && !text.contains('E'));
        let ours = spanned::parse(&text);
        let theirs = serde_json::from_str::<serde_json::Value>(&text);
        match (ours, theirs) {
            // Values are compared by the round-trip property; here only acceptance.
            (Ok(_), Ok(_)) => {}
            (Err(_), Err(_)) => {}
            (Ok(_), Err(e)) => prop_assert!(false, "we accepted {text:?}, serde_json: {e}"),
            (Err(e), Ok(_)) => prop_assert!(false, "we rejected valid {text:?}: {e}"),
        }
    }
}

#[test]
fn offsets_point_at_values() {
    let text = "{\n  \"a\": [true, {\"b\": null}]\n}";
    let doc = spanned::parse(text).unwrap();
    let a = &doc.root.value.as_object().unwrap()[0];
    assert_eq!(&text[a.key_offset..a.key_offset + 3], "\"a\"");
    let spanned::JsonValue::Array(items) = &a.value.value else {
        panic!("array expected")
    };
    assert!(text[items[1].offset..].starts_with("{\"b\""));
    let idx = spanned::LineIndex::new(text);
    assert_eq!(idx.line_col(text, items[1].offset), (2, 15));
}
