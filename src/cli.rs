//! The command line: what `iq-service` was asked to do and with which settings, parsed
//! by clap before anything else runs, so `--help`, `--version`, a typo or a bad setting
//! never touches a database or a data folder (clap prints usage and exits 2 for
//! anything it does not accept).
//!
//! Every setting is an option of every command (`iq-service serve --help` lists them
//! too) and reads its environment variable when the option is not given; a variable
//! set to blanks counts as unset.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::settings::{Settings, OTEL_VARIABLES};

/// The AI-hardware price index service: the API, the website and the back office in
/// one binary. Each setting below is an option or its environment variable; with no
/// DATABASE_URL it runs an embedded PostgreSQL in IQ_DATA_DIR (./.iq-data) with demo
/// data.
#[derive(Debug, Parser)]
#[command(name = "iq-service", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub settings: Settings,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service (the default when no command is given).
    Serve,
    /// Import quote files (.xlsx or .csv) through the back office's import path, then
    /// exit: all-or-nothing per file, every rejected row listed.
    Import {
        /// The files, imported in order.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Why: kept with each file's publication as the reason of every revision it
        /// makes (at most 500 characters).
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Print the dataset catalogue (parameters, fields, defaults) as JSON.
    Catalogue,
    /// Print the OpenAPI 3.1 document of the HTTP API as JSON (what
    /// /api/v1/openapi.json serves).
    Openapi,
}

impl Cli {
    /// The command line as it is parsed: the settings apply to every command, and the
    /// OpenTelemetry SDK's variables are listed after them.
    pub fn clap_command() -> clap::Command {
        let sdk: String = OTEL_VARIABLES
            .iter()
            .map(|(name, default, meaning)| {
                format!("  {name}\n          {meaning} [default: {default}]\n")
            })
            .collect();
        let sdk = format!(
            "OpenTelemetry SDK variables (traces), read as its specification defines:\n{sdk}"
        );
        <Cli as CommandFactory>::command()
            .mut_args(|arg| without_blank_variable(arg).global(true))
            .mut_subcommands(|command| command.after_help(sdk.clone()))
            .after_help(sdk)
    }

    /// The command line and the environment, read; `Err` says what was wrong (or is the
    /// help or version text: see [`clap::Error::exit`]).
    pub fn try_parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = Self::clap_command().try_get_matches_from(args)?;
        Cli::from_arg_matches(&matches)
    }

    /// The process's own command line, or an exit with clap's message and status.
    pub fn parse_or_exit() -> Cli {
        Self::try_parse_args(std::env::args_os()).unwrap_or_else(|err| err.exit())
    }

    /// The command to run: `serve` when none was named.
    pub fn chosen(self) -> (Command, Settings) {
        (self.command.unwrap_or(Command::Serve), self.settings)
    }
}

/// `arg` without its variable when that is set to blanks: unset, as an empty
/// `TRUSTED_PROXIES=` in a manifest means.
fn without_blank_variable(arg: Arg) -> Arg {
    let blank = arg
        .get_env()
        .and_then(std::env::var_os)
        .is_some_and(|value| value.to_string_lossy().trim().is_empty());
    if blank {
        arg.env(None::<&str>)
    } else {
        arg
    }
}

/// Writes `text` and a line break to standard output, as `println!` would, except that
/// a reader that went away (`iq-service openapi | head`) ends the output quietly rather
/// than with a panic: what it wanted, it read. Any other write error is reported.
pub fn print_line(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::clap_command().debug_assert();
    }

    #[test]
    fn no_command_serves_and_typos_are_refused() {
        let (command, _) = Cli::try_parse_args(["iq-service"]).unwrap().chosen();
        assert!(matches!(command, Command::Serve));
        let import = Cli::try_parse_args(["iq-service", "import", "a.csv", "b.xlsx"]).unwrap();
        assert!(matches!(import.chosen().0, Command::Import { files, .. } if files.len() == 2));
        let typo = Cli::try_parse_args(["iq-service", "catalog"]).unwrap_err();
        assert_eq!(typo.exit_code(), 2);
        assert_eq!(
            Cli::try_parse_args(["iq-service", "import"])
                .unwrap_err()
                .exit_code(),
            2
        );
    }

    #[test]
    fn settings_are_options_of_every_command() {
        for args in [
            &["iq-service", "--max-limit", "10", "serve"][..],
            &["iq-service", "serve", "--max-limit", "10"],
            &["iq-service", "import", "--max-limit", "10", "a.csv"],
        ] {
            let (_, settings) = Cli::try_parse_args(args).unwrap().chosen();
            assert_eq!(settings.site.max_limit, 10, "{args:?}");
        }
    }

    #[test]
    fn a_bad_setting_names_its_variable_and_never_shows_a_secret() {
        let err = Cli::try_parse_args(["iq-service", "--max-limit", "0"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let text = err.to_string();
        assert!(
            text.contains("MAX_LIMIT") && text.contains("1..=5000"),
            "{text}"
        );

        let err = Cli::try_parse_args(["iq-service", "--key-secret", "hunter2-short"]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("KEY_SECRET") && text.contains("32"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");

        let err = Cli::try_parse_args(["iq-service", "--quota-flush-ms", "5"]).unwrap_err();
        assert!(err.to_string().contains("QUOTA_FLUSH_MS"), "{err}");
        let err = Cli::try_parse_args(["iq-service", "--trusted-proxies", "10.0.0.0/8,nope"])
            .unwrap_err();
        assert!(err.to_string().contains("\"nope\""), "{err}");
    }
}
