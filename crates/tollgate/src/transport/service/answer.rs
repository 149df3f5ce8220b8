//! How a POST request with an id is answered: in the request's own future, or behind an event
//! stream its notifications can go out on before the response. A request that may stream runs in
//! the request's own future until its answer's shape is known, and moves, once it streams, to a
//! task of its own, or (a listen) into its response body, polled where its frames are read. A
//! listen's work hands the rest of it (its loop, once acknowledged) over to the stream: the
//! rest is polled in the work's place from then on, and ends the stream itself.
//!
//! Owns the choice and the move. Knows nothing of the HTTP checks before it (the service's
//! `mod.rs`) nor of what the request does (`pipeline::receive`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

use sync_wrapper::SyncWrapper;

use tollgate_json::JsonValue;

use super::{McpBody, Outcome};
use crate::facts::request::OriginatingRequest;
use crate::model::features::NotificationSink;
use crate::pipeline::envelope::asks_for_progress;
use crate::pipeline::receive;
use crate::registry::Endpoint;
use crate::stream::event::{Answer, Connection, EventStream, FinishOnDrop};
use crate::stream::lock;
use crate::wire::head::Head;
use crate::wire::method::Method as McpMethod;

/// How a request with an id is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answering {
    /// In the request's own future.
    Inline,
    /// Behind an event stream, so its notifications can stream while it works.
    InTask,
    /// Behind an event stream, for as long as the stream lasts (`subscriptions/listen`).
    Listen,
}

/// A request is answered behind an event stream when it is a listen, asks for progress, the
/// endpoint lets handlers log, or it is a tool call, `prompts/get`, `resources/read` or
/// `tasks/result` inside a 2025 session (whose handler may ask the client, close the
/// connection, and whose client may resume it); otherwise inline.
pub(super) fn answering(endpoint: &Endpoint, in_session: bool, value: &JsonValue) -> Answering {
    if value.get("id").is_none() {
        return Answering::Inline;
    }
    // The envelope is read later (in the task, or inline): the few methods asked about here
    // are each one comparison, rather than the method read twice.
    let method = value
        .get("method")
        .and_then(JsonValue::as_str)
        .unwrap_or_default();
    if McpMethod::SubscriptionsListen.is_named(method) {
        Answering::Listen
    } else if endpoint.inner.logging
        || asks_for_progress(value)
        || (endpoint.inner.sessions.is_some()
            && in_session
            && (McpMethod::ToolsCall.is_named(method)
                || McpMethod::PromptsGet.is_named(method)
                || McpMethod::ResourcesRead.is_named(method)
                || McpMethod::TasksResult.is_named(method)))
    {
        Answering::InTask
    } else {
        Answering::Inline
    }
}

/// Runs the request behind an event stream. It is polled in the request's own future until its
/// answer's shape is known: if it finishes before notifying, the answer is the usual JSON reply
/// and no task was spawned. Once it sends a notification (or its handler closes the
/// connection), the rest of its work moves, as it is, to a task of its own, and the answer
/// becomes an event stream carrying the notifications and then the response.
///
/// With `in_body` (a listen) and a stream that cannot be resumed, the work moves into the
/// response body instead of a task (issue 50): an idle listen holds one state machine, woken
/// once per event, where a task, its wake-up and then the connection's were needed.
///
/// Cancellation (`notifications/cancelled`, the session's end) drops the work where it runs:
/// here before it streams, by aborting its task (or in the body) after. A client that goes away
/// before the answer streams drops the work with the request's future; from a stream it cannot
/// resume, its connection aborts the task (or drops the body and the work in it); a resumable
/// stream keeps running, for a `GET` with `Last-Event-ID`.
pub(super) async fn answer_in_task(
    endpoint: Endpoint,
    origin: Arc<OriginatingRequest>,
    value: JsonValue,
    in_body: bool,
) -> Outcome {
    let stream = EventStream::new(endpoint.inner.streams);
    let finish = if in_body {
        // A listen hands its loop over once acknowledged: its pipeline then ends.
        stream.take_rest_over();
        FinishOnDrop::handing_off(Arc::clone(&stream))
    } else {
        FinishOnDrop::new(Arc::clone(&stream))
    };
    let sink = NotificationSink::Stream(Arc::clone(&stream));
    // The work carries the caller's telemetry context (feature `otel`), wherever it is polled.
    // Boxed: the request's large future is written once, on the heap, and a task takes the box
    // as it is (a polled future may move only behind its pin).
    let running: Work = Box::pin(crate::facts::telemetry::carry(async move {
        let head = Head::read(origin.headers());
        let reply = receive(&endpoint, &origin, &head, &value, Some(&sink)).await;
        drop(sink);
        // (After a hand-off the rest finishes the stream, and this does nothing.)
        finish.finish(reply);
    }));
    let mut work = Some(match in_body {
        true => Box::pin(then_rest(running, Arc::clone(&stream))),
        false => running,
    });
    let answer = std::future::poll_fn(|cx| {
        if work.is_some() && stream.is_cancelled() {
            // As an aborted task would be: dropped unpolled, its stream finished without a reply.
            work = None;
        }
        if let Some(running) = work.as_mut()
            && running.as_mut().poll(cx).is_ready()
        {
            work = None;
        }
        stream.poll_answer(cx)
    })
    .await;
    match answer {
        Answer::Json(reply) => Outcome::Reply(reply),
        Answer::Stream if in_body && !stream.is_numbered() => {
            // Still running: on in the body, polled by this same connection (whose waker the
            // work registered here).
            let connection = Connection::for_post(stream);
            Outcome::Stream(McpBody::events_with_work(connection, work))
        }
        Answer::Stream => {
            // Still running: on in a task of its own, which a cancellation can abort. A future
            // polled here registered this connection's waker; its next poll, in the task,
            // registers the task's.
            let task = work.map(tokio::spawn).map(|task| task.abort_handle());
            if let Some(task) = &task {
                stream.set_task(task.clone());
            }
            let mut guard = AbortOnDrop(task);
            if stream.is_numbered() {
                guard.disarm();
            }
            Outcome::Stream(McpBody::events(Connection::for_post(stream), guard))
        }
    }
}

/// A listen's work, then the rest it hands over (its loop, once acknowledged) in its place,
/// polled at once (so the rest registers the waker of whoever polls it), wherever it runs.
async fn then_rest(mut work: Work, stream: Arc<EventStream>) {
    // A rest handed over and not taken (this future dropped, or a panic, between the two)
    // would hold its own stream, and its place among the open listens, for ever.
    let untaken = UntakenRest(stream);
    loop {
        work.as_mut().await;
        match untaken.0.take_rest() {
            // The work's own future is freed here.
            Some(rest) => work = rest,
            None => return,
        }
    }
}

/// Drops a rest handed over to the stream that no one took (see [`then_rest`]).
struct UntakenRest(Arc<EventStream>);

impl Drop for UntakenRest {
    fn drop(&mut self) {
        drop(self.0.take_rest());
    }
}

/// A request's work that goes on in its response body once it streams (a listen's).
pub(super) use crate::stream::event::Work;

/// A request's work in its response body, and the waker it is polled with: the body polls it
/// only when it was woken (an event it waits for, its timers), not at each of the body's polls
/// (hyper polls a body again after each frame, and the work's chain of futures is deep).
pub(super) struct InBody {
    /// Wrapped so the body stays `Sync`: the work is only ever reached through `&mut`.
    work: SyncWrapper<Work>,
    woken: Arc<Woken>,
    waker: Waker,
}

impl InBody {
    pub(super) fn new(work: Work) -> Self {
        // Woken at first: the work registered the connection's own waker where it ran before,
        // and registers its own at its first poll in the body.
        let woken = Arc::new(Woken {
            flag: AtomicBool::new(true),
            body: Mutex::new(None),
        });
        Self {
            work: SyncWrapper::new(work),
            waker: Waker::from(Arc::clone(&woken)),
            woken,
        }
    }
}

/// The work's waker: marks it woken, then wakes the connection polling the body.
struct Woken {
    flag: AtomicBool,
    /// The waker of the body's last poll.
    body: Mutex<Option<Waker>>,
}

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::Release);
        if let Some(body) = lock(&self.body).as_ref() {
            body.wake_by_ref();
        }
    }
}

/// Polls the work a response body carries, when it was woken, before the body reads its
/// stream's frames: what the work queues is read in the same poll. The stream's waker is
/// forgotten first (the frames are read right after, and the read registers it again), so
/// queuing them does not wake this connection a second time. Cancelled, the work is dropped
/// unpolled (its stream finishes without a reply), as an aborted task's would be; finished, it
/// is dropped.
pub(super) fn poll_work(connection: &Connection, work: &mut Option<InBody>, cx: &mut Context<'_>) {
    let Some(running) = work.as_mut() else {
        return;
    };
    {
        let mut body = lock(&running.woken.body);
        if !body.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *body = Some(cx.waker().clone());
        }
    }
    if !running.woken.flag.swap(false, Ordering::AcqRel) {
        return;
    }
    if connection.stream.forget_waker() {
        *work = None;
        return;
    }
    let mut own = Context::from_waker(&running.waker);
    if running.work.get_mut().as_mut().poll(&mut own).is_ready() {
        *work = None;
    }
}

/// After a body's read found no frame: work cancelled since it was last polled is dropped now
/// (its stream finishes without a reply, which wakes the body again to end it).
pub(super) fn drop_if_cancelled(connection: &Connection, work: &mut Option<InBody>) {
    if work.is_some() && connection.stream.is_cancelled() {
        *work = None;
    }
}

/// Aborts the request's task when dropped, unless disarmed.
pub(super) struct AbortOnDrop(pub(super) Option<tokio::task::AbortHandle>);

impl AbortOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::task::Poll;

    use super::*;
    use crate::stream::StreamConfig;

    /// Counts the wake-ups of the connection polling a body.
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counted() -> (Arc<Wakes>, Waker) {
        let wakes = Arc::new(Wakes(AtomicUsize::new(0)));
        (Arc::clone(&wakes), Waker::from(wakes))
    }

    /// The frames a body's work queues are read in the poll that made them, queuing them does
    /// not wake the connection a second time (one wake-up per event, not two), and the work is
    /// polled once per event, not at each of the body's polls.
    #[tokio::test(start_paused = true)]
    async fn work_in_the_body_is_polled_once_per_event_and_wakes_it_once() {
        let stream = EventStream::new(StreamConfig::new());
        let mut connection = Connection::for_post(Arc::clone(&stream));
        let (events, mut heard) = tokio::sync::mpsc::unbounded_channel::<()>();
        let pushing = Arc::clone(&stream);
        let polls = Arc::new(AtomicUsize::new(0));
        let counting = Arc::clone(&polls);
        let mut listening = Box::pin(async move {
            while heard.recv().await.is_some() {
                pushing.push_notification(b"{}");
            }
        });
        let running: Work = Box::pin(std::future::poll_fn(move |cx| {
            counting.fetch_add(1, Ordering::SeqCst);
            listening.as_mut().poll(cx)
        }));
        let mut work = Some(InBody::new(running));
        let (wakes, waker) = counted();
        let mut cx = Context::from_waker(&waker);
        poll_work(&connection, &mut work, &mut cx);
        assert!(connection.poll_frame(&mut cx).is_pending());
        for n in 1..=3 {
            assert!(events.send(()).is_ok());
            assert_eq!(wakes.0.load(Ordering::SeqCst), n, "the event's wake-up");
            poll_work(&connection, &mut work, &mut cx);
            assert!(matches!(
                connection.poll_frame(&mut cx),
                Poll::Ready(Some(_))
            ));
            // The body polled again after its frame, as hyper does: the work is not.
            poll_work(&connection, &mut work, &mut cx);
            assert!(connection.poll_frame(&mut cx).is_pending());
            assert_eq!(wakes.0.load(Ordering::SeqCst), n, "no second wake-up");
            assert_eq!(polls.load(Ordering::SeqCst), n + 1, "one poll per event");
        }
        assert!(work.is_some(), "still listening");
    }

    /// Work cancelled in the body is dropped, as an aborted task would be, whether the
    /// cancellation comes before the body's next poll or just after its work was polled: its
    /// stream finishes without a reply and the body ends.
    #[tokio::test(start_paused = true)]
    async fn cancelled_work_in_the_body_is_dropped_and_the_stream_ends() {
        for after_polling in [false, true] {
            let stream = EventStream::new(StreamConfig::new());
            let mut connection = Connection::for_post(Arc::clone(&stream));
            let finish = FinishOnDrop::new(Arc::clone(&stream));
            let running: Work = Box::pin(async move {
                std::future::pending::<()>().await;
                drop(finish);
            });
            let mut work = Some(InBody::new(running));
            let (wakes, waker) = counted();
            let mut cx = Context::from_waker(&waker);
            if after_polling {
                poll_work(&connection, &mut work, &mut cx);
                assert!(connection.poll_frame(&mut cx).is_pending());
                stream.cancel();
                drop_if_cancelled(&connection, &mut work);
                assert!(wakes.0.load(Ordering::SeqCst) >= 1, "woken to end");
            } else {
                stream.cancel();
                poll_work(&connection, &mut work, &mut cx);
            }
            assert!(work.is_none(), "dropped");
            assert!(stream.is_finished());
            assert!(matches!(connection.poll_frame(&mut cx), Poll::Ready(None)));
        }
    }

    /// A work that hands the rest of it over (a listen, once acknowledged) ends there, and its
    /// own reply is not the stream's; the rest is polled in the body from then on and ends the
    /// stream with its reply. A stream that does not take a rest over gives it back, and a rest
    /// dropped unfinished (the client gone) ends its stream without a reply.
    #[tokio::test(start_paused = true)]
    async fn a_rest_handed_over_goes_on_in_the_body_and_ends_the_stream() {
        use crate::wire::reply::Reply;
        for dropped in [false, true] {
            let stream = EventStream::new(StreamConfig::new());
            let kept: Work = Box::pin(async {});
            assert!(stream.hand_off(kept).is_err(), "not taken over");
            stream.take_rest_over();
            let mut connection = Connection::for_post(Arc::clone(&stream));
            let (go, wait) = tokio::sync::oneshot::channel::<()>();
            let finish = FinishOnDrop::handing_off(Arc::clone(&stream));
            let handing = Arc::clone(&stream);
            let running: Work = Box::pin(async move {
                handing.push_notification(b"{\"ack\":1}");
                let ends = FinishOnDrop::new(Arc::clone(&handing));
                let rest: Work = Box::pin(async move {
                    let _ = wait.await;
                    let mut reply = Reply::empty(http::StatusCode::OK);
                    reply.body = Some(b"{\"rest\":1}".to_vec());
                    ends.finish(reply);
                });
                assert!(handing.hand_off(rest).is_ok(), "taken over");
                let mut own = Reply::empty(http::StatusCode::OK);
                own.body = Some(b"{\"own\":1}".to_vec());
                finish.finish(own);
            });
            let mut work = Some(InBody::new(Box::pin(then_rest(
                running,
                Arc::clone(&stream),
            ))));
            let (_wakes, waker) = counted();
            let mut cx = Context::from_waker(&waker);
            poll_work(&connection, &mut work, &mut cx);
            assert!(work.is_some(), "the rest goes on in the body");
            assert!(
                !stream.is_finished(),
                "the work's own reply is not the stream's"
            );
            let Poll::Ready(Some(ack)) = connection.poll_frame(&mut cx) else {
                unreachable!("the acknowledgement")
            };
            assert!(String::from_utf8_lossy(&ack).contains("ack"));
            if dropped {
                drop(work.take());
                assert!(stream.is_finished(), "ended without a reply");
                assert!(matches!(connection.poll_frame(&mut cx), Poll::Ready(None)));
                continue;
            }
            let _ = go.send(());
            tokio::task::yield_now().await;
            poll_work(&connection, &mut work, &mut cx);
            assert!(work.is_none(), "the rest ended");
            let Poll::Ready(Some(last)) = connection.poll_frame(&mut cx) else {
                unreachable!("the rest's reply")
            };
            let last = String::from_utf8_lossy(&last).into_owned();
            assert!(last.contains("rest") && !last.contains("own"), "{last}");
        }
    }

    /// A rest handed over that no one took (its work panicked right after handing it over) is
    /// dropped with the work (its stream, and what it holds, freed: no cycle through the
    /// stream), and one handed over in a task runs there after its work.
    #[tokio::test]
    async fn a_rest_is_never_left_in_its_stream() {
        let stream = EventStream::new(StreamConfig::new());
        stream.take_rest_over();
        let handing = Arc::clone(&stream);
        let work: Work = Box::pin(async move {
            let held = Arc::clone(&handing);
            let rest: Work = Box::pin(async move { drop(held) });
            assert!(handing.hand_off(rest).is_ok());
            std::panic::resume_unwind(Box::new("after the hand-off"));
        });
        let task = tokio::spawn(then_rest(work, Arc::clone(&stream)));
        assert!(task.await.is_err_and(|e| e.is_panic()));
        assert_eq!(
            Arc::strong_count(&stream),
            1,
            "the untaken rest was dropped"
        );

        let ran = Arc::new(AtomicBool::new(false));

        let stream = EventStream::new(StreamConfig::new());
        stream.take_rest_over();
        let (handing, flag) = (Arc::clone(&stream), Arc::clone(&ran));
        let work: Work = Box::pin(async move {
            let rest: Work = Box::pin(async move { flag.store(true, Ordering::SeqCst) });
            assert!(handing.hand_off(rest).is_ok());
        });
        let task = tokio::spawn(then_rest(work, Arc::clone(&stream)));
        assert!(task.await.is_ok());
        assert!(ran.load(Ordering::SeqCst), "the rest ran after its work");
        assert!(stream.take_rest().is_none());
    }
}
