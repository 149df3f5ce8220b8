//! What passes between the gateway's caller and an upstream while one forwarded call runs:
//! the upstream's progress relayed to the caller that asked for it (under the caller's own
//! progress token, through the endpoint's `ProgressReporter`), and the caller's going away
//! relayed to the upstream (the upstream call is dropped, which its client cancels as its
//! revision says: `notifications/cancelled`, or the request's stream closed). Knows nothing of
//! tools, catalogs or names.

use std::future::Future;

use tokio::sync::mpsc;
use tollgate::InvocationFeatures;
use tollgate::context::ProgressReporter;
use tollgate_client::{CallOptions, Error, Progress};

use crate::error::ForwardError;
use crate::link::Link;

/// The most upstream progress reports waiting to be relayed; past it a report is dropped (a
/// later one supersedes it).
const PROGRESS_QUEUE: usize = 32;

/// Runs `call` (made with the options it is given) on `link` within `timeout`, relaying the
/// upstream's progress to the caller when the caller asked for progress, and dropping the
/// call (so cancelling it upstream) when the caller's request is cancelled.
pub(crate) async fn relayed<T, F>(
    link: &Link,
    timeout: std::time::Duration,
    features: &InvocationFeatures,
    call: impl FnOnce(CallOptions) -> F,
) -> Result<T, ForwardError>
where
    F: Future<Output = Result<T, Error>>,
{
    let reporter = features.find::<ProgressReporter>();
    let (tx, mut rx) = mpsc::channel::<Progress>(PROGRESS_QUEUE);
    let options = if reporter.is_some() {
        CallOptions::new().on_progress(move |progress| {
            let _ = tx.try_send(progress.clone());
        })
    } else {
        CallOptions::new()
    };
    let bounded = link.bounded(timeout, call(options));
    let relay = async {
        while let Some(progress) = rx.recv().await {
            report(reporter, &progress);
        }
        // The sender went with the call's options: nothing more to relay; the call decides.
        std::future::pending::<()>().await;
    };
    let result = tokio::select! {
        result = bounded => result,
        () = relay => Err(ForwardError::Upstream),
        () = features.cancellation().cancelled() => Err(ForwardError::Cancelled),
    };
    // Reports that came with the answer go before it.
    while let Ok(progress) = rx.try_recv() {
        report(reporter, &progress);
    }
    result
}

/// One upstream report relayed; one the caller's reporter refuses (decreasing, not finite) is
/// dropped.
fn report(reporter: Option<&ProgressReporter>, progress: &Progress) {
    if let Some(reporter) = reporter {
        let _ = reporter.report(progress.progress(), progress.total(), progress.message());
    }
}
