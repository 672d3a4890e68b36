//! Settings of quote imports: the bounds a file must keep before it is read.

use clap::Args;
use iq_actors::imports::ImportLimits;

const MIB: u64 = 1024 * 1024;

#[derive(Debug, Clone, Args)]
pub struct ImportsConfig {
    /// The largest quote file an import accepts, in MiB.
    #[arg(long, env, value_parser = clap::value_parser!(u64).range(1..=4096), default_value_t = 64)]
    pub import_max_mb: u64,

    /// The most cells a quote file may hold.
    #[arg(long, env, value_parser = clap::value_parser!(u64).range(1..),
          default_value_t = ImportLimits::default().max_cells)]
    pub import_max_cells: u64,

    /// The most one part of an .xlsx may inflate to, in MiB.
    #[arg(long, env, value_parser = clap::value_parser!(u64).range(1..),
          default_value_t = ImportLimits::default().max_entry_bytes / MIB)]
    pub import_max_entry_mb: u64,
}

impl ImportsConfig {
    pub fn max_bytes(&self) -> usize {
        usize::try_from(self.import_max_mb * MIB).unwrap_or(usize::MAX)
    }

    pub fn limits(&self) -> ImportLimits {
        ImportLimits {
            max_cells: self.import_max_cells,
            max_entry_bytes: self.import_max_entry_mb.saturating_mul(MIB),
        }
    }
}
