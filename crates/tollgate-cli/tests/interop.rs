//! tollgate-client against the catalog demo in-process (the third transport of
//! `scripts/interop`, which runs the same checks over HTTP and stdio): every revision offered
//! and the one negotiation picks, then each revision alone (a listen hearing `catalog.seasonal`
//! change the tool list included).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

#[path = "../examples/interop/checks.rs"]
#[allow(
    dead_code,
    reason = "the profiles of the other servers are for scripts/interop"
)]
mod checks;
#[path = "../examples/catalog/endpoint.rs"]
#[allow(dead_code, unreachable_pub, reason = "shared with the catalog example")]
mod demo;

use std::sync::Arc;

use tollgate::task::InMemoryTaskStore;
use tollgate_client::Revision;

async fn check(endpoint: &tollgate::Endpoint, offer: Option<Revision>, expected: Revision) {
    let endpoint = endpoint.clone();
    let recorder = checks::Recorder::default();
    let client = checks::builder(offer, &recorder)
        .connect_in_process(endpoint)
        .await
        .unwrap();
    assert_eq!(client.revision(), expected);
    if let Err(failure) = checks::run(&client, &recorder, &checks::CATALOG).await {
        panic!("{expected}: {failure}");
    }
}

#[tokio::test]
async fn the_catalog_in_process_on_every_revision() {
    // One endpoint for every run: `catalog.seasonal` changes the first demo endpoint of the
    // process (a process-wide handle, as in the demo binary).
    let endpoint = demo::endpoint(Arc::new(InMemoryTaskStore::with_capacity(64)), None).unwrap();
    check(&endpoint, None, Revision::V2026_07_28).await;
    for revision in Revision::ALL {
        check(&endpoint, Some(revision), revision).await;
    }
}
