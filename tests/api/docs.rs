//! The docs say what the code does: docs/api.md's dataset tables are the catalogue's
//! (every dataset's parameters, its fields in order, which are defaults, and its sort
//! key, as the service validates them), its Errors table is the error table's, and
//! every source file a doc or module documentation names exists. A change the docs do
//! not follow fails here.

use std::path::Path;

use iq_actors::catalogue::DATASETS;

const API_MD: &str = include_str!("../../docs/api.md");

/// The names in the first column of each table row (`| \`name\` | ...`) of a section,
/// table by table, with the row's cells.
fn tables(section: &str) -> Vec<Vec<Vec<String>>> {
    let mut tables = Vec::new();
    let mut current: Vec<Vec<String>> = Vec::new();
    for line in section.lines() {
        if line.starts_with("| `") {
            let cells = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect();
            current.push(cells);
        } else if !current.is_empty() {
            tables.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        tables.push(current);
    }
    tables
}

#[test]
fn the_dataset_tables_are_the_catalogues() {
    for dataset in DATASETS.iter() {
        let heading = format!("\n### {}\n", dataset.api_name);
        let start = API_MD
            .find(&heading)
            .unwrap_or_else(|| panic!("docs/api.md has no section for {}", dataset.api_name))
            + heading.len();
        let end = API_MD[start..]
            .find("\n## ")
            .map_or(API_MD.len(), |e| start + e);
        let end = API_MD[start..end].find("\n### ").map_or(end, |e| start + e);
        let section = &API_MD[start..end];
        let name = dataset.api_name;
        assert!(
            section.contains(&format!("sorted by `{}`", dataset.sort_key.join(", "))),
            "{name}: sort key"
        );
        let tables = tables(section);
        let (params, fields) = match tables.as_slice() {
            [fields] if dataset.params.is_empty() => (&Vec::new(), fields),
            [params, fields] => (params, fields),
            other => panic!(
                "{name}: expected a parameter and a field table, found {}",
                other.len()
            ),
        };
        let documented: Vec<&str> = params.iter().map(|row| row[0].as_str()).collect();
        let real: Vec<&str> = dataset.params.iter().map(|p| p.name).collect();
        assert_eq!(documented, real, "{name}: parameters");
        let documented: Vec<(&str, bool)> = fields
            .iter()
            .map(|row| (row[0].as_str(), row[2] == "yes"))
            .collect();
        let real: Vec<(&str, bool)> = dataset
            .fields
            .iter()
            .map(|f| (f.name, dataset.default_fields.contains(&f.name)))
            .collect();
        assert_eq!(documented, real, "{name}: fields and defaults");
    }
}

/// docs/api.md's Errors table is the one table in `ErrorCode`, row for row: status,
/// code and meaning, in numeric order.
#[test]
fn the_error_table_is_the_services() {
    let start = API_MD
        .find("\n## Errors\n")
        .expect("docs/api.md has an Errors section");
    let documented: Vec<&str> = API_MD[start..]
        .lines()
        .skip_while(|line| !line.starts_with("|---"))
        .skip(1)
        .take_while(|line| line.starts_with('|'))
        .collect();
    let expected: Vec<String> = iq_actors::ErrorCode::ALL
        .iter()
        .map(|code| {
            format!(
                "| {} | {} | {} |",
                code.http_status(),
                code.as_u32(),
                code.meaning()
            )
        })
        .collect();
    assert_eq!(documented, expected);
}

/// Every file path a doc or a module's own documentation names (`foo/bar.rs`, the
/// docs a reader follows) exists: a file moved or removed takes its mentions with it.
/// docs/performance.md is left out: it records what was measured, files since removed
/// included.
#[test]
fn the_files_the_docs_name_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    for dir in ["src", "actors/src", "tests/api", "test-support/src"] {
        rust_files(&root.join(dir), &mut sources);
    }
    let mut named = Vec::new();
    for doc in [
        "api.md",
        "architecture.md",
        "operations.md",
        "scaling.md",
        "website.md",
    ] {
        let path = root.join("docs").join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        named.extend(paths_in(&text).map(|p| (format!("docs/{doc}"), p)));
    }
    for file in &sources {
        let text = std::fs::read_to_string(file).unwrap();
        let docs: String = text
            .lines()
            .filter(|l| l.trim_start().starts_with("//!"))
            .collect::<Vec<_>>()
            .join("\n");
        let shown = file.strip_prefix(root).unwrap().display().to_string();
        named.extend(paths_in(&docs).map(|p| (shown.clone(), p)));
    }
    let all: Vec<String> = sources
        .iter()
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect();
    let missing: Vec<String> = named
        .into_iter()
        .filter(|(_, p)| !all.iter().any(|f| f == p || f.ends_with(&format!("/{p}"))))
        .map(|(doc, p)| format!("{doc}: {p}"))
        .collect();
    assert!(missing.is_empty(), "named but not found: {missing:#?}");
}

/// The `*.rs` paths in `text` (`dataset/sql.rs`, `src/startup.rs`).
fn paths_in(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "_/.-".contains(c)))
        .filter(|word| word.ends_with(".rs") && word.len() > 3)
        .map(|word| word.trim_start_matches("./").to_owned())
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
