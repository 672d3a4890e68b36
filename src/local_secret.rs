//! The key secret of a service running on its embedded database: generated once and
//! kept beside the cluster, readable by its owner only. An external database needs
//! `KEY_SECRET` instead, because every instance must share it.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use rand::distributions::{Alphanumeric, DistString};

pub fn load_or_create(path: &Path) -> Result<Vec<u8>, String> {
    let problem = |e: std::io::Error| format!("key secret {}: {e}", path.display());
    match fs::read(path) {
        Ok(secret) => return Ok(secret),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(problem(e)),
        Err(_) => {}
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(problem)?;
    }
    let secret = Alphanumeric.sample_string(&mut rand::rngs::OsRng, 48);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(problem)?;
    file.write_all(secret.as_bytes()).map_err(problem)?;
    Ok(secret.into_bytes())
}
