//! `.ci/module_cycles.py`, the check CI runs on both crates: each is free of circles,
//! and the check finds one that only a re-export hides, while a test module's
//! `use super::*` and a parent's re-export of its own child are no circle.

use std::path::Path;
use std::process::Command;

fn check(root: &Path) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/module_cycles.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(root)
        .output()
        .expect("python3 runs the layering check");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn both_crates_read_in_one_direction() {
    iq_test_support::require!(Python);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for root in ["src", "actors/src"] {
        let (ok, said) = check(&repo.join(root));
        assert!(ok, "{root}:\n{said}");
    }
}

#[test]
fn a_circle_through_a_re_export_is_found() {
    iq_test_support::require!(Python);
    // b uses the crate root's re-export of a's item; a uses b: a circle the paths
    // alone (`crate::Thing`, a name of lib.rs) would hide.
    let hidden = tree(&[
        ("lib.rs", "mod a;\nmod b;\npub use a::Thing;\n"),
        (
            "a.rs",
            "pub struct Thing;\nfn f() -> crate::b::Other { todo!() }\n",
        ),
        ("b.rs", "use crate::Thing;\npub struct Other(Thing);\n"),
    ]);
    let (ok, said) = check(hidden.path());
    assert!(!ok, "{said}");
    assert!(said.contains("a circle of 2 files"), "{said}");
    assert!(said.contains("a.rs") && said.contains("b.rs"), "{said}");

    // A parent's re-export of its child, and a test module's `super::*`, are not.
    let ordinary = tree(&[
        ("lib.rs", "pub mod a;\npub use a::Thing;\n"),
        (
            "a/mod.rs",
            "mod inner;\npub use inner::Thing;\npub const N: u8 = 1;\n",
        ),
        (
            "a/inner.rs",
            "pub struct Thing(u8);\nfn n() -> u8 { super::N }\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        ("b.rs", "use crate::Thing;\n"),
    ]);
    let (ok, said) = check(ordinary.path());
    assert!(ok, "{said}");
}
