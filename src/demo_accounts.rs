//! The demo users of D10: a free and a professional member, each with one API key,
//! created when demo data is first loaded. Their keys and passwords are printed once,
//! to standard output (not to the log), because only their hashes are kept.

use iq_actors::accounts::{Accounts, NewKey, NewUser};
use iq_actors::audit::Author;
use iq_actors::ApiError;
use rand::distributions::{Alphanumeric, DistString};

pub async fn create(accounts: &Accounts) -> Result<(), ApiError> {
    let mut lines = Vec::new();
    for (username, tier) in [("demo_free", "free"), ("demo_pro", "pro")] {
        let password = Alphanumeric.sample_string(&mut rand::rngs::OsRng, 16);
        let user = accounts
            .create_user(
                &Author::system(),
                NewUser {
                    username: username.into(),
                    password: password.clone(),
                    role: None,
                    tier: Some(tier.into()),
                },
            )
            .await?;
        let key = accounts
            .create_key(
                &Author {
                    account: Some(user.account.clone()),
                    request_id: None,
                },
                NewKey {
                    name: "demo".into(),
                    index_codes: None,
                    ip_allowlist: None,
                    expires_at: None,
                },
            )
            .await?;
        lines.push(format!(
            "  {tier:<4}  user {username:<9}  password {password}  X-API-Key: {}",
            key.key
        ));
    }
    println!(
        "\nDemo accounts (shown once; delete the data folder to start again):\n{}\n",
        lines.join("\n")
    );
    Ok(())
}
