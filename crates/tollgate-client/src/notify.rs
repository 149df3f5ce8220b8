//! Notifications routed to whoever asked for them: a call's progress to the callback that call
//! took (matched by its `progressToken`), every other notification to the open listen streams
//! ([`Listen`]) and to the application's handler. It owns the routing, the listen stream and its
//! buffer bound; it must not know transports, nor methods beyond the notifications it routes.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tollgate_json::{JsonObject, JsonValue};

use crate::error::{Error, ErrorKind};
use crate::handler::{Handler, HandlerFuture};

/// A notification the server sent: its method and parameters.
#[derive(Debug, Clone)]
pub struct Notification {
    method: String,
    params: JsonObject,
}

impl Notification {
    /// The method (`notifications/resources/updated`, `notifications/message`, ...).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The parameters (empty when the server sent none).
    pub fn params(&self) -> &JsonObject {
        &self.params
    }
}

/// One `notifications/progress` for a call that asked for progress
/// ([`CallOptions::on_progress`](crate::CallOptions::on_progress)).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

impl Progress {
    fn from_params(params: &JsonObject) -> Option<Self> {
        let number = |key: &str| params.get(key)?.as_number()?.to_f64();
        Some(Self {
            progress: number("progress")?,
            total: number("total"),
            message: params
                .get("message")
                .and_then(JsonValue::as_str)
                .map(str::to_owned),
        })
    }

    /// The progress so far (it increases with each notification).
    pub fn progress(&self) -> f64 {
        self.progress
    }

    /// The total, when the server knows it.
    pub fn total(&self) -> Option<f64> {
        self.total
    }

    /// The server's message, when it sent one.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

/// A call's progress callback.
pub(crate) type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

struct Listener {
    tx: mpsc::Sender<Notification>,
    overflowed: Arc<AtomicBool>,
}

/// Where notifications go: calls waiting for progress by token, open listen streams.
#[derive(Default)]
pub(crate) struct Router {
    calls: Mutex<HashMap<String, ProgressFn>>,
    listeners: Mutex<Vec<Listener>>,
    next_token: AtomicU64,
}

/// A call's progress token, withdrawn when the call ends (this is dropped).
pub(crate) struct ProgressToken {
    router: Arc<Router>,
    token: String,
}

impl ProgressToken {
    pub(crate) fn as_str(&self) -> &str {
        &self.token
    }
}

impl Drop for ProgressToken {
    fn drop(&mut self) {
        self.router.calls().remove(&self.token);
    }
}

impl Router {
    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, ProgressFn>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, Vec<Listener>> {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh progress token whose notifications go to `callback` until the token is dropped.
    pub(crate) fn progress(self: &Arc<Self>, callback: ProgressFn) -> ProgressToken {
        let n = self.next_token.fetch_add(1, Ordering::Relaxed);
        let token = format!("tollgate-progress-{n}");
        self.calls().insert(token.clone(), callback);
        ProgressToken {
            router: Arc::clone(self),
            token,
        }
    }

    /// A listen stream's receiving end, holding at most `capacity` notifications.
    fn listener(&self, capacity: usize) -> (mpsc::Receiver<Notification>, Arc<AtomicBool>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let overflowed = Arc::new(AtomicBool::new(false));
        self.listeners().push(Listener {
            tx,
            overflowed: Arc::clone(&overflowed),
        });
        (rx, overflowed)
    }

    /// Routes one notification; `true` when a call's progress callback took it.
    fn route(&self, method: &str, params: Option<&JsonObject>) -> bool {
        if method == "notifications/progress" {
            let callback = params
                .and_then(|p| p.get("progressToken")?.as_str())
                .and_then(|token| self.calls().get(token).cloned());
            if let Some(callback) = callback {
                if let Some(progress) = params.and_then(Progress::from_params) {
                    callback(&progress);
                }
                return true;
            }
        }
        let mut listeners = self.listeners();
        if listeners.is_empty() {
            return false;
        }
        let notification = Notification {
            method: method.to_owned(),
            params: params.cloned().unwrap_or_default(),
        };
        listeners.retain(
            |listener| match listener.tx.try_send(notification.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Closed(_)) => false,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    // The reader fell behind: it gets what is held, then the limit error.
                    listener.overflowed.store(true, Ordering::Release);
                    false
                }
            },
        );
        false
    }
}

/// The handler the transports see: routed notifications first, the application's handler for
/// the rest and for every server request.
pub(crate) struct Routing {
    pub(crate) router: Arc<Router>,
    pub(crate) inner: Arc<dyn Handler>,
}

impl Handler for Routing {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        if !self.router.route(method, params) {
            self.inner.notification(method, params);
        }
    }

    fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        self.inner.request(method, params)
    }
}

impl crate::Client {
    /// Listens for what the server sends outside calls, as a stream ([`Listen`]): on
    /// 2026-07-28 a `subscriptions/listen` request whose `notifications` filter is `filter`
    /// (such as `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`; the server
    /// first sends `notifications/subscriptions/acknowledged`), sent when the stream is first
    /// polled and
    /// ended when the stream is dropped; on 2025 the session's own stream (the `GET` stream over
    /// HTTP, the pipe over stdio), where `filter` is not sent (subscribe with
    /// `resources/subscribe` through [`Client::request`](crate::Client::request)). Every
    /// notification but a call's own progress reaches each open listen and the handler.
    ///
    /// # Errors
    ///
    /// None yet; the listen's own errors come as the stream's last item.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tollgate_client::{Client, json::JsonObject};
    ///
    /// # async fn run(client: &Client) -> Result<(), tollgate_client::Error> {
    /// let filter = JsonObject::builder().insert("toolsListChanged", true).build();
    /// let mut listen = client.listen(filter)?;
    /// while let Some(notification) = listen.next().await {
    ///     println!("{}", notification?.method());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn listen(&self, filter: JsonObject) -> Result<Listen<'_>, Error> {
        let capacity = self.limits().max_listen_buffer();
        let request: Option<ListenRequest<'_>> = if self.revision().is_stateless() {
            let params = JsonObject::builder()
                .insert("notifications", filter)
                .build();
            Some(Box::pin(self.send(
                "subscriptions/listen",
                Some(params),
                Vec::new(),
            )))
        } else {
            None
        };
        Ok(Listen::new(&self.parts.router, capacity, request))
    }
}

/// The future of a 2026-07-28 `subscriptions/listen` request.
type ListenRequest<'a> = Pin<Box<dyn Future<Output = Result<JsonValue, Error>> + Send + 'a>>;

/// The notifications of a listen ([`Client::listen`](crate::Client::listen)), as a
/// [`Stream`](futures_core::Stream) of `Result<Notification, Error>` (or one by one with
/// [`Listen::next`]).
///
/// It ends when the server ends the listen (2026-07-28; [`Listen::result`] then holds the
/// listen's result), with an error item when the listen failed or the reader fell more than
/// [`ClientLimits::max_listen_buffer`](crate::ClientLimits::max_listen_buffer) notifications
/// behind. Dropping it ends the listen: on 2026-07-28 the request is closed (over stdio,
/// cancelled); on 2025 it stops receiving.
pub struct Listen<'a> {
    request: Option<ListenRequest<'a>>,
    rx: mpsc::Receiver<Notification>,
    overflowed: Arc<AtomicBool>,
    end: Option<Result<JsonValue, Error>>,
    done: bool,
}

impl std::fmt::Debug for Listen<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listen")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<'a> Listen<'a> {
    /// A listen receiving from `router`, driving `request` (2026-07-28) when there is one.
    pub(crate) fn new(
        router: &Router,
        capacity: usize,
        request: Option<ListenRequest<'a>>,
    ) -> Self {
        let (rx, overflowed) = router.listener(capacity);
        Self {
            request,
            rx,
            overflowed,
            end: None,
            done: false,
        }
    }

    /// The next notification; `None` once the stream has ended.
    ///
    /// # Errors
    ///
    /// An item is [`ErrorKind::Limit`] when the reader fell behind, or the listen request's own
    /// error; the stream ends after it.
    pub async fn next(&mut self) -> Option<Result<Notification, Error>> {
        std::future::poll_fn(|cx| self.poll_item(cx)).await
    }

    /// The listen's result once the server ended it (2026-07-28).
    pub fn result(&self) -> Option<&JsonValue> {
        self.end.as_ref().and_then(|end| end.as_ref().ok())
    }

    fn finish(&mut self) -> Option<Result<Notification, Error>> {
        self.done = true;
        self.request = None;
        if self.overflowed.load(Ordering::Acquire) {
            return Some(Err(Error::new(
                ErrorKind::Limit,
                "the listen stream's reader fell behind",
            )));
        }
        match &self.end {
            Some(Err(e)) => Some(Err(e.clone())),
            _ => None,
        }
    }

    fn poll_item(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Notification, Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(request) = self.request.as_mut()
            && let Poll::Ready(outcome) = request.as_mut().poll(cx)
        {
            self.request = None;
            self.end = Some(outcome);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(notification)) => return Poll::Ready(Some(Ok(notification))),
            Poll::Ready(None) => return Poll::Ready(self.finish()),
            Poll::Pending => {}
        }
        if self.end.is_some() {
            return Poll::Ready(self.finish());
        }
        Poll::Pending
    }
}

impl futures_core::Stream for Listen<'_> {
    type Item = Result<Notification, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_item(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    fn object(text: &str) -> JsonObject {
        match from_str(text, &JsonLimits::default()).unwrap() {
            JsonValue::Object(o) => o,
            _ => unreachable!("an object"),
        }
    }

    fn update(router: &Router, n: usize) {
        let params = object(&format!(r#"{{"uri":"file:///{n}"}}"#));
        assert!(!router.route("notifications/resources/updated", Some(&params)));
    }

    async fn drain(listen: &mut Listen<'_>) -> (usize, Option<ErrorKind>) {
        let mut seen = 0;
        while let Some(item) = listen.next().await {
            match item {
                Ok(n) => {
                    assert_eq!(
                        n.params().get("uri").unwrap().as_str().unwrap(),
                        format!("file:///{seen}")
                    );
                    seen += 1;
                }
                Err(e) => return (seen, Some(e.kind())),
            }
        }
        (seen, None)
    }

    #[tokio::test]
    async fn a_listen_holds_its_buffer_and_one_past_ends_it_with_the_limit() {
        let router = Router::default();
        // At the bound: every notification held; the listen's end comes after them.
        let done: ListenRequest<'_> = Box::pin(async { Ok(JsonValue::Null) });
        let mut at = Listen::new(&router, 3, Some(done));
        let dropped = Listen::new(&router, 2, None);
        drop(dropped);
        let mut past = Listen::new(&router, 2, None);
        for n in 0..3 {
            update(&router, n);
        }
        assert_eq!(drain(&mut at).await, (3, None));
        assert_eq!(at.result(), Some(&JsonValue::Null));
        // One past: what was held, then the limit, then the end.
        assert_eq!(drain(&mut past).await, (2, Some(ErrorKind::Limit)));
        assert!(past.next().await.is_none());
        // Every stream is gone from the router once dropped (or overflowed).
        drop(at);
        update(&router, 0);
        assert!(router.listeners().is_empty());
    }

    #[tokio::test]
    async fn a_failed_listen_ends_with_its_error() {
        let router = Router::default();
        let failed: ListenRequest<'_> = Box::pin(async { Err(Error::new(ErrorKind::Closed, "")) });
        let mut listen = Listen::new(&router, 4, Some(failed));
        assert_eq!(drain(&mut listen).await, (0, Some(ErrorKind::Closed)));
        assert!(listen.next().await.is_none());
    }

    #[test]
    fn progress_goes_to_its_call_only_while_the_call_lasts() {
        let router = Arc::new(Router::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let token = router.progress(Arc::new(move |p: &Progress| {
            sink.lock()
                .unwrap()
                .push((p.progress(), p.total(), p.message().map(str::to_owned)));
        }));
        let mine = object(&format!(
            r#"{{"progressToken":"{}","progress":1,"total":4,"message":"one"}}"#,
            token.as_str()
        ));
        let other = object(r#"{"progressToken":"someone-else","progress":1}"#);
        assert!(router.route("notifications/progress", Some(&mine)));
        assert!(!router.route("notifications/progress", Some(&other)));
        drop(token);
        assert!(!router.route("notifications/progress", Some(&mine)));
        assert_eq!(
            *seen.lock().unwrap(),
            vec![(1.0, Some(4.0), Some("one".to_owned()))]
        );
    }
}
