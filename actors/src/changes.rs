//! Cache coherence across instances: writes announce what they changed with Postgres
//! `NOTIFY`, every instance `LISTEN`s and tells its actors to drop what went stale.
//!
//! A writer calls [`ChangeBus::notify`] inside its transaction (Postgres delivers the notification
//! only if, and when, the transaction commits) and then [`ChangeBus::publish`]es the
//! change to its own actors at once, so the writing instance never serves stale data
//! even for the next request. The listener reconnects by itself; once back it
//! invalidates everything, because notifications sent meanwhile are lost (while it is
//! away the caches keep serving, which is what keeps the service up in a database
//! outage). Nothing here
//! carries data: a message names a kind of change, never a row or a secret.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use rand::distributions::{Alphanumeric, DistString};
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::db::Traced;

/// The one Postgres channel every instance listens on.
pub const CHANNEL: &str = "iq_changes";

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Keys, users, sessions or tiers: what the AuthActor caches.
    Auth,
    /// Indexes, quotes, daily rows or the calendar: what the DatasetActor caches.
    Data,
    /// Events only (a window moved at a day boundary): no cache holds them.
    Events,
    /// Unknown: notifications may have been missed.
    All,
}

impl Change {
    fn payload(self) -> &'static str {
        match self {
            Change::Auth => "auth",
            Change::Data => "data",
            Change::Events => "events",
            Change::All => "all",
        }
    }

    fn parse(text: &str) -> Change {
        match text {
            "auth" => Change::Auth,
            "data" => Change::Data,
            "events" => Change::Events,
            _ => Change::All,
        }
    }

    /// Whether an actor caching `kind` must drop it on this change.
    pub fn touches(self, kind: Change) -> bool {
        self == Change::All || self == kind
    }
}

/// Drop the cache entries `Change` makes stale.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Invalidate(pub Change);

/// The actors of this instance that cache data, and this instance's name on the
/// channel (a payload is `<change> <instance>`, so an instance skips its own
/// announcements: it applied them itself before answering).
#[derive(Clone)]
pub struct ChangeBus {
    targets: Arc<[Recipient<Invalidate>]>,
    instance: Arc<str>,
    /// Set at shutdown: the listener closes its connection instead of reconnecting.
    stopping: Arc<tokio::sync::watch::Sender<bool>>,
}

impl ChangeBus {
    pub fn new(targets: Vec<Recipient<Invalidate>>) -> Self {
        let instance = Alphanumeric.sample_string(&mut rand::rngs::OsRng, 12);
        ChangeBus {
            targets: targets.into(),
            instance: instance.into(),
            stopping: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }

    /// Closes the listener's connection for good (shutdown), so stopping the database
    /// afterwards is not taken for an outage to recover from.
    pub fn stop_listening(&self) {
        self.stopping.send_replace(true);
    }

    /// Set once the bus stops listening (shutdown): what background work that lives as
    /// long as the bus waits on to end.
    pub fn stopping(&self) -> tokio::sync::watch::Receiver<bool> {
        self.stopping.subscribe()
    }

    /// Announces a change to the other instances, delivered when the enclosing
    /// transaction commits (or at once outside a transaction).
    pub async fn notify(
        &self,
        client: &impl Traced,
        change: Change,
    ) -> Result<(), tokio_postgres::Error> {
        let payload = format!("{} {}", change.payload(), self.instance);
        client
            .execute_named(
                "changes.notify",
                "SELECT pg_notify($1, $2)",
                &[&CHANNEL, &payload],
            )
            .await
            .map(drop)
    }

    /// Runs `write` in a transaction that announces `change` on commit, then drops this
    /// instance's stale cache entries before returning: the one way a write is made.
    pub async fn write<T>(
        &self,
        pool: &deadpool_postgres::Pool,
        change: Change,
        write: impl AsyncFnOnce(&tokio_postgres::Transaction<'_>) -> Result<T, crate::ApiError>,
    ) -> Result<T, crate::ApiError> {
        self.write_announcing(pool, async |tx| Ok((write(tx).await?, Some(change))))
            .await
    }

    /// [`ChangeBus::write`] for a write that learns only as it goes whether it changed
    /// anything: `write` answers the change to announce, if any.
    pub async fn write_announcing<T>(
        &self,
        pool: &deadpool_postgres::Pool,
        write: impl AsyncFnOnce(
            &tokio_postgres::Transaction<'_>,
        ) -> Result<(T, Option<Change>), crate::ApiError>,
    ) -> Result<T, crate::ApiError> {
        let mut client = pool.get().await?;
        let tx = client.transaction().await?;
        let (out, change) = write(&tx).await?;
        if let Some(change) = change {
            self.notify(&*tx, change).await?;
        }
        tx.commit().await?;
        if let Some(change) = change {
            self.publish(change).await;
        }
        Ok(out)
    }

    /// Tells every local actor, one after the other in the order given to
    /// [`ChangeBus::new`], and waits until each has dropped its stale entries. The
    /// order matters where one cache is made from another: the website's rendered
    /// pages come after the data they show, so a page rendered from stale data is
    /// always one its own cache then drops.
    pub async fn publish(&self, change: Change) {
        for target in self.targets.iter() {
            let _ = target.send(Invalidate(change)).await;
        }
    }

    /// Listens for other instances' changes. Returns once the first `LISTEN` is in
    /// place (so the instance is coherent from its first request), then keeps listening
    /// and reconnecting in the background.
    pub async fn listen(&self, mut config: tokio_postgres::Config) -> Result<(), String> {
        // The connection only ever waits: without keepalives a half-open one would go
        // unnoticed for hours while other instances' changes went unheard.
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(15))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3);
        let first = subscribe(&config)
            .await
            .map_err(|e| format!("cannot LISTEN for changes: {e}"))?;
        let bus = self.clone();
        let mut stopping = self.stopping.subscribe();
        tokio::spawn(async move {
            let mut subscription = first;
            loop {
                tokio::select! {
                    () = bus.forward(subscription) => {}
                    // Dropping the subscription closes its connection cleanly.
                    _ = stopping.wait_for(|stop| *stop) => return,
                }
                if *stopping.borrow() {
                    return;
                }
                tracing::warn!("change listener lost its connection; reconnecting");
                subscription = loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    match subscribe(&config).await {
                        Ok(sub) => break sub,
                        Err(e) => tracing::warn!(error = %e, "change listener cannot reconnect"),
                    }
                };
                // Whatever was announced while we were away is unknown. Until now the
                // caches kept serving: during a database outage that is all there is.
                bus.publish(Change::All).await;
            }
        });
        Ok(())
    }

    async fn forward(&self, mut sub: Subscription) {
        while let Some(payload) = sub.messages.recv().await {
            let (change, instance) = payload.split_once(' ').unwrap_or((&payload, ""));
            if instance == &*self.instance {
                continue;
            }
            let change = Change::parse(change);
            tracing::debug!(?change, "change announced by another instance");
            self.publish(change).await;
        }
        drop(sub.client);
    }
}

struct Subscription {
    /// Kept alive: dropping the client closes the connection.
    client: tokio_postgres::Client,
    messages: mpsc::UnboundedReceiver<String>,
}

async fn subscribe(config: &tokio_postgres::Config) -> Result<Subscription, tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (tx, messages) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        // Drives the connection; ends (dropping `tx`) when it closes or fails.
        while let Some(message) =
            futures_util::future::poll_fn(|cx| connection.poll_message(cx)).await
        {
            match message {
                Ok(AsyncMessage::Notification(n)) if n.channel() == CHANNEL => {
                    if tx.send(n.payload().to_string()).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "change listener connection failed");
                    return;
                }
            }
        }
    });
    client
        .batch_execute_named("changes.listen", &format!("LISTEN {CHANNEL}"))
        .await?;
    Ok(Subscription { client, messages })
}
