//! Where the demo keeps what must outlive a request: its tasks and the request states already
//! used (`catalog.reserve`'s state is single use) in an embedded SQLite file by default, or, with
//! `TOLLGATE_CATALOG_POSTGRES` naming a PostgreSQL database, its tasks, used states and 2025
//! sessions there, shared with every other instance behind the same URL (`scripts/cluster`),
//! and the catalog events (`catalog.seasonal`'s) logged there for every instance to apply.

use std::sync::Arc;

use tollgate::endpoint::{
    EndpointBuilder, PostgresCatalogBus, PostgresReplayStore, PostgresSessionStore, ReplayStore,
    SqliteReplayStore,
};
use tollgate::task::{PostgresTaskStore, SqliteTaskStore, TaskStore};

pub(crate) struct Stores {
    pub(crate) tasks: Arc<dyn TaskStore>,
    /// Where single-use request state is consumed.
    pub(crate) uses: Arc<dyn ReplayStore>,
    sessions: Option<PostgresSessionStore>,
    catalog_bus: Option<PostgresCatalogBus>,
}

impl Stores {
    /// Gives the endpoint the shared session store and catalog bus, if there are.
    pub(crate) fn sessions(&self, builder: EndpointBuilder) -> EndpointBuilder {
        let builder = match &self.sessions {
            Some(sessions) => builder.session_store(sessions.clone()),
            None => builder,
        };
        match &self.catalog_bus {
            Some(bus) => builder.catalog_bus(bus.clone()),
            None => builder,
        }
    }

    /// What the startup line says of them.
    pub(crate) fn describe(&self) -> &'static str {
        if self.sessions.is_some() {
            "tasks, used request states, sessions and catalog events in PostgreSQL"
        } else {
            "tasks and used request states in SQLite"
        }
    }
}

pub(crate) async fn from_env() -> Result<Stores, Box<dyn std::error::Error>> {
    match std::env::var("TOLLGATE_CATALOG_POSTGRES") {
        Ok(url) if !url.is_empty() => Ok(Stores {
            tasks: Arc::new(PostgresTaskStore::connect(&url).await?),
            uses: Arc::new(PostgresReplayStore::connect(&url).await?),
            sessions: Some(PostgresSessionStore::connect(&url).await?),
            catalog_bus: Some(PostgresCatalogBus::connect(&url).await?),
        }),
        _ => Ok(Stores {
            tasks: Arc::new(SqliteTaskStore::open(crate::endpoint::task_database()).await?),
            // The same file: one database beside the demo.
            uses: Arc::new(SqliteReplayStore::open(crate::endpoint::task_database()).await?),
            sessions: None,
            catalog_bus: None,
        }),
    }
}
