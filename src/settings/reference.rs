//! The settings as a reader looks them up: every variable with its flag, default and
//! meaning, part by part, rendered from the declaration. docs/operations.md holds this
//! text between its `settings` markers, and a test keeps the two equal; the deploy test
//! reads [`variables`] rather than the source.

use std::fmt::Write;

use clap::Args;

use super::{Settings, OTEL_VARIABLES};

/// The marker lines around the rendered reference in docs/operations.md.
pub const BEGIN: &str = "<!-- settings: rendered from the declaration; do not edit by hand -->";
pub const END: &str = "<!-- settings: end -->";

/// The heading of the OpenTelemetry SDK's own variables.
const TELEMETRY: &str = "Telemetry";

/// One setting as a reader sees it.
pub struct SettingEntry {
    pub heading: String,
    pub variable: String,
    pub flag: Option<String>,
    pub default: Option<String>,
    pub meaning: String,
}

fn declared() -> clap::Command {
    let mut command = Settings::augment_args(clap::Command::new("iq-service"));
    // Built, so that flags show the default clap gives them.
    command.build();
    command
}

/// Every setting the service reads, in declaration order, then the SDK's variables.
pub fn entries() -> Vec<SettingEntry> {
    let command = declared();
    let mut entries: Vec<SettingEntry> = command
        .get_arguments()
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_string_lossy().into_owned();
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            Some(SettingEntry {
                heading: arg.get_help_heading().unwrap_or("Other").to_owned(),
                variable,
                flag: arg.get_long().map(|l| format!("--{l}")),
                default: (!defaults.is_empty()).then(|| defaults.join(",")),
                meaning: arg.get_help().map(|h| h.to_string()).unwrap_or_default(),
            })
        })
        .collect();
    entries.extend(
        OTEL_VARIABLES
            .iter()
            .map(|(variable, default, meaning)| SettingEntry {
                heading: TELEMETRY.into(),
                variable: (*variable).into(),
                flag: None,
                default: Some((*default).into()),
                meaning: format!("OpenTelemetry SDK: {meaning}"),
            }),
    );
    entries
}

/// Every variable the service reads, its own and the SDK's it documents.
pub fn variables() -> Vec<String> {
    entries().into_iter().map(|e| e.variable).collect()
}

/// The reference as Markdown: a table per part, in the order `--help` shows them.
pub fn markdown() -> String {
    let entries = entries();
    let mut headings: Vec<&str> = Vec::new();
    for entry in &entries {
        if !headings.contains(&entry.heading.as_str()) {
            headings.push(&entry.heading);
        }
    }
    let mut out = String::new();
    for heading in headings {
        let _ = write!(
            out,
            "\n### {heading}\n\n| variable | flag | default | meaning |\n|---|---|---|---|\n"
        );
        for entry in entries.iter().filter(|e| e.heading == heading) {
            let code = |text: &str| format!("`{text}`");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                code(&entry.variable),
                entry.flag.as_deref().map_or("-".into(), code),
                match entry.default.as_deref() {
                    None => "unset".into(),
                    Some(plain) if plain.starts_with("unset") => plain.into(),
                    Some(value) => code(value),
                },
                entry.meaning.replace('|', "\\|"),
            );
        }
    }
    out
}
