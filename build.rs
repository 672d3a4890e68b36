//! Rebuilds the service when a migration is added or changed: `sql/` is embedded by
//! `refinery::embed_migrations!` (`src/migrations.rs`), a macro cargo cannot see into,
//! so without this a new `sql/V*.sql` alone left the old schema in the binary.

fn main() {
    println!("cargo:rerun-if-changed=sql");
}
