//! The command line: what `iq-service` was asked to do, parsed by clap before anything
//! else runs, so `--help`, `--version` or a typo never touches a database or a data
//! folder (clap prints usage and exits 2 for anything it does not know).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// The AI-hardware price index service: the API, the website and the back office in
/// one binary. Configuration comes from environment variables (see the README); with
/// no DATABASE_URL it runs an embedded PostgreSQL in IQ_DATA_DIR (./.iq-data) with
/// demo data.
#[derive(Debug, Parser)]
#[command(name = "iq-service", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
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
    },
    /// Print the dataset catalogue (parameters, fields, defaults) as JSON.
    Catalogue,
    /// Print the OpenAPI 3.1 document of the HTTP API as JSON (what
    /// /api/v1/openapi.json serves).
    Openapi,
}

impl Cli {
    /// The command to run: `serve` when none was named.
    pub fn chosen(self) -> Command {
        self.command.unwrap_or(Command::Serve)
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
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn no_command_serves_and_typos_are_refused() {
        assert!(matches!(
            Cli::try_parse_from(["iq-service"]).unwrap().chosen(),
            Command::Serve
        ));
        let import = Cli::try_parse_from(["iq-service", "import", "a.csv", "b.xlsx"]).unwrap();
        assert!(matches!(import.chosen(), Command::Import { files } if files.len() == 2));
        let typo = Cli::try_parse_from(["iq-service", "catalog"]).unwrap_err();
        assert_eq!(typo.exit_code(), 2);
        assert_eq!(
            Cli::try_parse_from(["iq-service", "import"])
                .unwrap_err()
                .exit_code(),
            2
        );
    }
}
