//! What the client does with time and notifications, in-process on every revision: the request
//! timeout (tokio's paused clock: an answer just inside it, one just past it, a call that never
//! answers cancelled on the server), a call's own progress callback, and listen streams.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tollgate::context::ProgressReporter;
use tollgate::endpoint::ProtocolVersions;
use tollgate::json::{JsonObject, JsonValue};
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};
use tollgate_client::handler::Handler;
use tollgate_client::{CallOptions, Client, ClientLimits, ErrorKind, Revision};

const TIMEOUT: Duration = Duration::from_secs(10);

fn revisions() -> ProtocolVersions {
    [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ]
    .into_iter()
    .collect()
}

fn number(args: &JsonObject, key: &str) -> u64 {
    args.get(key)
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0)
}

macro_rules! tool {
    ($name:expr, $handler:expr) => {
        ToolRegistration::with_name($name, revisions())
            .json_object_arguments()
            .handler($handler)
            .build()
            .unwrap()
    };
}

/// `sleep {ms}` answers after `ms`; `hang` never answers (`ended` counts the calls the server
/// ended by cancellation); `count {n}` reports progress 1..=n.
fn endpoint(ended: Arc<AtomicUsize>) -> Endpoint {
    let sleep = |_: &RequestContext, args: ToolArguments<JsonObject>, _: &InvocationFeatures| {
        let ms = number(args.converted(), "ms");
        async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("awake").into())
        }
    };
    let hang = move |_: &RequestContext, _: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let token = f.cancellation().clone();
        let guard = Ended(Arc::clone(&ended));
        async move {
            token.cancelled().await;
            drop(guard);
            Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("ended").into())
        }
    };
    let count = |_: &RequestContext, args: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let n = number(args.converted(), "n");
        if let Some(progress) = f.find::<ProgressReporter>() {
            for i in 1..=n {
                progress.report(i as f64, Some(n as f64), None).unwrap();
            }
        }
        async move {
            Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("counted").into())
        }
    };
    Endpoint::with_path("/mcp", revisions(), Implementation::new("t", "1"))
        .live_catalogs()
        .add_tool(tool!("sleep", sleep))
        .add_tool(tool!("hang", hang))
        .add_tool(tool!("count", count))
        .build()
        .unwrap()
}

/// Counts, when dropped, a `hang` call the server ended (its future dropped or its
/// cancellation token fired).
struct Ended(Arc<AtomicUsize>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts the progress notifications the handler sees.
#[derive(Clone, Default)]
struct Seen(Arc<AtomicUsize>);

impl Handler for Seen {
    fn notification(&self, method: &str, _: Option<&JsonObject>) {
        if method == "notifications/progress" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn connect(revision: Revision, endpoint: Endpoint, seen: &Seen) -> Client {
    Client::builder()
        .revisions([revision])
        .limits(ClientLimits::default().with_request_timeout(TIMEOUT))
        .handler(seen.clone())
        .connect_in_process(endpoint)
        .await
        .unwrap()
}

fn ms(n: u128) -> JsonObject {
    JsonObject::builder()
        .insert("ms", tollgate::json::JsonNumber::from(n as u64))
        .build()
}

#[tokio::test(start_paused = true)]
async fn the_request_timeout_at_the_bound_and_one_past() {
    for revision in Revision::ALL {
        let client = connect(revision, endpoint(Arc::default()), &Seen::default()).await;
        client.list_tools().await.unwrap();
        let within = client.call_tool("sleep", ms(TIMEOUT.as_millis() - 1)).await;
        assert!(within.is_ok(), "{revision}: {within:?}");
        let start = tokio::time::Instant::now();
        let past = client.call_tool("sleep", ms(TIMEOUT.as_millis() + 1)).await;
        assert_eq!(past.unwrap_err().kind(), ErrorKind::TimedOut, "{revision}");
        assert!(start.elapsed() >= TIMEOUT, "{revision}");
        // The client is still usable after a timed-out call.
        assert!(client.call_tool("sleep", ms(0)).await.is_ok(), "{revision}");
        client.close().await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_is_cancelled_on_the_server() {
    for revision in Revision::ALL {
        let ended = Arc::new(AtomicUsize::new(0));
        let client = connect(revision, endpoint(Arc::clone(&ended)), &Seen::default()).await;
        client.list_tools().await.unwrap();
        let hung = client.call_tool("hang", JsonObject::new()).await;
        assert_eq!(hung.unwrap_err().kind(), ErrorKind::TimedOut, "{revision}");
        // Counted, not timed: the cancellation reaches the tool within a bounded number of
        // scheduler turns (the clock is paused; a lost cancellation fails here).
        for _ in 0..10_000 {
            if ended.load(Ordering::SeqCst) == 1 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(ended.load(Ordering::SeqCst), 1, "{revision}");
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn progress_goes_to_the_call_that_asked_for_it() {
    for revision in Revision::ALL {
        let seen = Seen::default();
        let client = connect(revision, endpoint(Arc::default()), &seen).await;
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        let options = CallOptions::new().on_progress(move |p| {
            sink.lock().unwrap().push((p.progress(), p.total()));
        });
        let n = JsonObject::builder().insert("n", 3).build();
        let result = client.call_tool_with("count", n.clone(), options).await;
        assert!(result.is_ok(), "{revision}: {result:?}");
        let expected: Vec<_> = (1..=3).map(|i| (f64::from(i), Some(3.0))).collect();
        assert_eq!(*got.lock().unwrap(), expected, "{revision}");
        // The handler saw none of them; a call without a callback asks for no progress.
        client.call_tool("count", n).await.unwrap();
        assert_eq!(seen.0.load(Ordering::SeqCst), 0, "{revision}");
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_listen_streams_list_changes() {
    for revision in Revision::ALL {
        let endpoint = endpoint(Arc::default());
        let catalogs = endpoint.catalogs().unwrap();
        let client = connect(revision, endpoint, &Seen::default()).await;
        hears_a_list_change(&client, &catalogs, revision).await;
    }
}

/// Over loopback HTTP too: a 2025 session's `GET` stream (2025-03-26's without a revision
/// header), the 2026-07-28 `subscriptions/listen`.
#[tokio::test]
async fn a_listen_streams_list_changes_over_http() {
    for revision in Revision::ALL
        .into_iter()
        .filter(|r| *r != Revision::V2024_11_05)
    {
        // A server each: a change undone within the announcement window is no change.
        let endpoint = endpoint(Arc::default());
        let catalogs = endpoint.catalogs().unwrap();
        let server = tollgate::Server::bind(
            "127.0.0.1:0".parse().unwrap(),
            tollgate::McpService::new(endpoint),
        )
        .await
        .unwrap();
        let url = format!("http://{}/mcp", server.local_addr().unwrap());
        tokio::spawn(server.serve_with_shutdown(std::future::pending()));
        let client = Client::builder()
            .revisions([revision])
            .connect_http(&url)
            .await
            .unwrap();
        hears_a_list_change(&client, &catalogs, revision).await;
    }
}

async fn hears_a_list_change(
    client: &Client,
    catalogs: &tollgate::endpoint::Catalogs,
    revision: Revision,
) {
    {
        let filter = JsonObject::builder()
            .insert("toolsListChanged", true)
            .build();
        let mut listen = client.listen(filter).unwrap();
        if revision.is_stateless() {
            let first = listen.next().await.unwrap().unwrap();
            assert_eq!(first.method(), "notifications/subscriptions/acknowledged");
        }
        let bounded = Duration::from_secs(10);
        catalogs
            .add_tool(tool!(
                "late",
                |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
                    Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("late").into())
                }
            ))
            .unwrap();
        // A generous bound so a lost notification fails rather than hangs (not a timing check).
        let changed = tokio::time::timeout(bounded, listen.next()).await;
        let changed = changed
            .unwrap_or_else(|_| panic!("{revision}: no list change heard"))
            .unwrap()
            .unwrap();
        assert_eq!(
            changed.method(),
            "notifications/tools/list_changed",
            "{revision}"
        );
        drop(listen);
        // Dropping the stream ended the listen; the client goes on.
        assert!(client.list_tools().await.unwrap().len() == 4, "{revision}");
        client.close().await.unwrap();
    }
}
