//! The connection to one upstream, replaceable while the gateway serves: the client in use now
//! (swapped whole, so a call in flight keeps the client it started on), and the signal a call
//! raises when it finds the upstream gone (its transport closed, its connection refused, its
//! session lost), which the gateway's reviver answers by connecting again with backoff. Knows
//! nothing of tools, catalogs or configuration.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::Notify;
use tollgate_client::{Client, Error, ErrorKind};

use crate::error::{Failed, ForwardError};

/// One upstream's connection.
pub(crate) struct Link {
    client: ArcSwap<Client>,
    gone: Notify,
}

impl Link {
    pub(crate) fn new(client: Client) -> Arc<Self> {
        Arc::new(Self {
            client: ArcSwap::from_pointee(client),
            gone: Notify::new(),
        })
    }

    /// The client in use now.
    pub(crate) fn client(&self) -> Arc<Client> {
        self.client.load_full()
    }

    /// A call failed with `error`: when it says the upstream is gone, the reviver is woken (one
    /// stored permit: many failed calls wake it once).
    pub(crate) fn failed(&self, error: &Error) {
        if matches!(
            error.kind(),
            ErrorKind::Closed | ErrorKind::Connect | ErrorKind::SessionExpired
        ) {
            self.gone.notify_one();
        }
    }

    /// Waits until a call found the upstream gone.
    pub(crate) async fn gone(&self) {
        self.gone.notified().await;
    }

    /// Awaits `call` (made on [`client`](Self::client)) within `timeout`: its answer, or why
    /// not; a failure saying the upstream is gone wakes the reviver.
    pub(crate) async fn bounded<T>(
        &self,
        timeout: Duration,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Failed> {
        match tokio::time::timeout(timeout, call).await {
            Err(_) => Err(ForwardError::Timeout.into()),
            Ok(Err(error)) => {
                self.failed(&error);
                Err(Failed::upstream(&error))
            }
            Ok(Ok(answer)) => Ok(answer),
        }
    }

    /// Puts `client` in use; returns the one it replaces.
    pub(crate) fn replace(&self, client: Client) -> Arc<Client> {
        self.client.swap(Arc::new(client))
    }
}
