//! The head-or-idle timeout of one HTTP/1.1 connection: a connection with no request in flight
//! must bring a complete request head within the timeout of becoming idle, or it is closed
//! unanswered. It becomes idle when accepted, and when its last answer has been handed to it
//! whole; while the answer's bytes still go out (a client reading a large answer slowly), each
//! write the socket accepts starts the timeout again. So a client that takes in too little of
//! its answer for the socket to accept more within the timeout is closed too (the kernel still
//! delivers what its buffer holds).
//!
//! One timer per connection, registered at its first poll and again only when it fires (at
//! most once per timeout, or once when a request that outlasted it ends) or when the task's
//! waker changes: the timer fires at the deadline it was set for, and the connection's real
//! deadline (moved by every request since) is checked then. A request marks its start when the
//! connection hands it on ([`Answer`]), its end when its response body is dropped ([`Ended`]),
//! and each write of the connection that makes progress is marked too ([`Written`]); all three
//! add to a per-thread count that the connection's wrapper ([`Idle`]) reads around its own
//! poll. So a request costs no shared write and, most of the time, no timer work: a clock read
//! when it ends (and at each poll in which the socket accepted more of its answer after that).
//! hyper's own header timeout made, registered and cancelled a timer per request.
//!
//! Knows hyper's connection futures, bodies and I/O traits as such; nothing of MCP.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use hyper::rt::{Read, ReadBufCursor, Write};
use tokio::time::{Instant, Sleep};

/// Requests begun, response bodies ended and writes that made progress on this thread while a
/// connection's wrapper polls its connection (each wrapper keeps the count of any wrapper it
/// runs inside).
#[derive(Clone, Copy, Default)]
struct Marks {
    began: u32,
    ended: u32,
    wrote: u32,
}

thread_local! {
    static MARKS: Cell<Marks> = const { Cell::new(Marks { began: 0, ended: 0, wrote: 0 }) };
}

fn mark(add: impl FnOnce(&mut Marks)) {
    let _ = MARKS.try_with(|m| {
        let mut now = m.get();
        add(&mut now);
        m.set(now);
    });
}

/// Marks a request handed on by the connection now being polled on this thread.
fn began() {
    mark(|m| m.began = m.began.wrapping_add(1));
}

fn ended() {
    mark(|m| m.ended = m.ended.wrapping_add(1));
}

fn wrote() {
    mark(|m| m.wrote = m.wrote.wrapping_add(1));
}

pin_project_lite::pin_project! {
    /// A response body that marks its request ended when it is dropped (its connection drops it
    /// once it has taken its last frame to write, or when the connection ends).
    pub(crate) struct Ended<B> {
        #[pin]
        body: B,
    }

    impl<B> PinnedDrop for Ended<B> {
        fn drop(_this: Pin<&mut Self>) {
            ended();
        }
    }
}

impl<B: Body> Body for Ended<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

pin_project_lite::pin_project! {
    /// A request's answer, the request marked begun when it is made and ended when its
    /// response body is dropped.
    pub(crate) struct Answer<F> {
        #[pin]
        answer: F,
    }
}

impl<F> Answer<F> {
    /// `answer`, for a request the connection now being polled on this thread just handed on.
    pub(crate) fn new(answer: F) -> Self {
        began();
        Self { answer }
    }
}

impl<F, B, E> Future for Answer<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
{
    type Output = Result<http::Response<Ended<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project()
            .answer
            .poll(cx)
            .map(|answered| answered.map(|response| response.map(|body| Ended { body })))
    }
}

pin_project_lite::pin_project! {
    /// A connection's socket whose writes that make progress are marked (an answer still going
    /// out keeps its connection from counting as idle).
    pub(crate) struct Written<T> {
        #[pin]
        io: T,
    }
}

impl<T> Written<T> {
    pub(crate) fn new(io: T) -> Self {
        Self { io }
    }
}

/// Marks a write that made progress.
fn progress(written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
    if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
        wrote();
    }
    written
}

impl<T: Read> Read for Written<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        self.project().io.poll_read(cx, buf)
    }
}

impl<T: Write> Write for Written<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        progress(self.project().io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        progress(self.project().io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_shutdown(cx)
    }
}

/// Where a connection's timer stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// Set (or reset) and not yet polled: it must be polled to register the task's waker.
    Unpolled,
    /// Registered with the waker kept in `waker`; it wakes the task when due.
    Registered,
    /// Fired while a request was in flight: nothing to time until the request ends (which
    /// happens inside this wrapper's poll, so that poll sets it again from the fired timer).
    Dormant,
}

pin_project_lite::pin_project! {
    /// A connection that ends (yields `None`, for its caller to drop it, which closes it) once
    /// it has been idle for `timeout`; else it yields the connection's own output.
    pub(crate) struct Idle<C> {
        #[pin]
        connection: C,
        #[pin]
        timer: Sleep,
        state: Timer,
        timeout: Duration,
        // Requests begun and not yet ended (at most one on HTTP/1.1), and since when there has
        // been none.
        in_flight: u32,
        idle_since: Instant,
        // The waker the timer was last registered with.
        waker: Option<Waker>,
    }
}

impl<C: Future> Idle<C> {
    /// `connection`, accepted now, under a head-or-idle `timeout`.
    pub(crate) fn new(connection: C, timeout: Duration) -> Self {
        let now = Instant::now();
        Self {
            connection,
            timer: tokio::time::sleep_until(deadline(now, timeout)),
            state: Timer::Unpolled,
            timeout,
            in_flight: 0,
            idle_since: now,
            waker: None,
        }
    }
}

/// `from + timeout`; a year on when that overflows, else `from` (the server's limits keep a
/// timeout within a year).
fn deadline(from: Instant, timeout: Duration) -> Instant {
    from.checked_add(timeout)
        .or_else(|| from.checked_add(MAX_TIMEOUT))
        .unwrap_or(from)
}

/// The longest head-or-idle timeout the server takes.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 86_400);

impl<C: Future> Future for Idle<C> {
    type Output = Option<C::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<C::Output>> {
        let mut this = self.project();
        let outer = MARKS.try_with(|m| m.replace(Marks::default())).ok();
        let polled = this.connection.poll(cx);
        let marks = MARKS
            .try_with(|m| m.replace(outer.unwrap_or_default()))
            .unwrap_or_default();
        if let Poll::Ready(output) = polled {
            return Poll::Ready(Some(output));
        }
        if marks.began != 0 || marks.ended != 0 || marks.wrote != 0 {
            *this.in_flight = this
                .in_flight
                .saturating_add(marks.began)
                .saturating_sub(marks.ended);
            // Idle from the end of the answer, or from the last of its bytes to go out.
            if (marks.ended != 0 || marks.wrote != 0) && *this.in_flight == 0 {
                *this.idle_since = Instant::now();
            }
        }
        loop {
            let current = this.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
            match *this.state {
                Timer::Dormant if *this.in_flight > 0 => return Poll::Pending,
                // Registered with this task's waker and not fired: it wakes the task when due.
                Timer::Registered if current && !this.timer.is_elapsed() => return Poll::Pending,
                // Otherwise polled: an unpolled one registers; a fired one (dormant until the
                // request just ended) answers at once and is set again below.
                Timer::Registered | Timer::Unpolled | Timer::Dormant => {}
            }
            // Outside the task's cooperative budget: a poll refused for an exhausted budget
            // would register nothing, and the timer would never wake the task.
            let mut polled = tokio::task::coop::unconstrained(this.timer.as_mut());
            if Pin::new(&mut polled).poll(cx).is_pending() {
                *this.state = Timer::Registered;
                if !current {
                    *this.waker = Some(cx.waker().clone());
                }
                return Poll::Pending;
            }
            // Fired at the deadline it was set for: closed if the connection has been idle that
            // long, else set again for the real deadline.
            if *this.in_flight > 0 {
                *this.state = Timer::Dormant;
                continue;
            }
            let due = deadline(*this.idle_since, *this.timeout);
            if due <= this.timer.deadline() {
                return Poll::Ready(None);
            }
            this.timer.as_mut().reset(due);
            *this.state = Timer::Unpolled;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::future::pending;

    use bytes::Bytes;
    use http_body_util::Full;
    use tokio::time::sleep;

    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(10);

    /// Asserts that `connection`, opened now under `TIMEOUT`, is closed (not ended) exactly
    /// `after` later.
    async fn assert_closed_after(connection: impl Future<Output = ()>, after: Duration) {
        let opened = Instant::now();
        let closed = tokio::time::timeout(after + TIMEOUT * 10, Idle::new(connection, TIMEOUT));
        assert!(matches!(closed.await, Ok(None)), "not closed");
        assert_eq!(opened.elapsed(), after);
    }

    /// A response body handed over and dropped, as a connection does once it is written.
    fn end_a_response() {
        drop(Ended {
            body: Full::new(Bytes::from_static(b"{}")),
        });
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_brings_no_request_is_closed_at_the_timeout() {
        assert_closed_after(pending(), TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_ends_first_gives_its_output() {
        let connection = async {
            sleep(Duration::from_secs(3)).await;
            7
        };
        assert_eq!(Idle::new(connection, TIMEOUT).await, Some(7));
    }

    #[tokio::test(start_paused = true)]
    async fn the_timeout_restarts_when_each_response_ends() {
        let connection = async {
            // Just inside the bound, a request, answered at once; again 9.9 s after it.
            for _ in 0..2 {
                sleep(Duration::from_millis(9_900)).await;
                began();
                end_a_response();
            }
            pending::<()>().await;
        };
        // Closed exactly one timeout after the last response ended.
        assert_closed_after(connection, Duration::from_millis(19_800) + TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn no_timeout_runs_while_a_request_is_in_flight() {
        let connection = async {
            sleep(Duration::from_secs(1)).await;
            began();
            // Served (or its response streamed) for four timeouts.
            sleep(Duration::from_secs(40)).await;
            end_a_response();
            pending::<()>().await;
        };
        assert_closed_after(connection, Duration::from_secs(41) + TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_marks_its_request_begun_and_ended_when_its_body_is_dropped() {
        let connection = async {
            // Made when the request is handed on; answered 5 s later, past half the timeout.
            let answer = Answer::new(async {
                sleep(Duration::from_secs(5)).await;
                Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(
                    Bytes::from_static(b"{}"),
                )))
            });
            sleep(Duration::from_secs(8)).await;
            let response = answer.await.unwrap();
            assert_eq!(response.body().size_hint().exact(), Some(2));
            drop(response);
            pending::<()>().await;
        };
        // Not closed at 10 s (the request was in flight), closed a timeout after the drop.
        assert_closed_after(connection, Duration::from_secs(13) + TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn writes_that_make_progress_after_the_answer_start_the_timeout_again() {
        let (socket, mut client) = tokio::io::duplex(64);
        let connection = async move {
            let mut socket = Written::new(hyper_util::rt::TokioIo::new(socket));
            began();
            end_a_response();
            // The answer's last bytes go out slowly: one every 6 s for 18 s.
            for _ in 0..3 {
                sleep(Duration::from_secs(6)).await;
                let wrote = std::future::poll_fn(|cx| Pin::new(&mut socket).poll_write(cx, b"x"))
                    .await
                    .unwrap();
                assert_eq!(wrote, 1);
            }
            // An empty write makes no progress.
            sleep(Duration::from_secs(6)).await;
            let wrote = std::future::poll_fn(|cx| Pin::new(&mut socket).poll_write(cx, b""))
                .await
                .unwrap();
            assert_eq!(wrote, 0);
            pending::<()>().await;
        };
        // One timeout after the last write that made progress.
        assert_closed_after(connection, Duration::from_secs(18) + TIMEOUT).await;
        let mut received = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut client, &mut received)
            .await
            .unwrap();
        assert_eq!(received, b"xxx");
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_first_polled_under_another_waker_wakes_the_task_that_awaits_it() {
        let opened = Instant::now();
        let mut idle = Box::pin(Idle::new(pending::<()>(), TIMEOUT));
        let mut elsewhere = Context::from_waker(Waker::noop());
        assert!(idle.as_mut().poll(&mut elsewhere).is_pending());
        let closed = tokio::time::timeout(TIMEOUT * 2, idle).await;
        assert!(matches!(closed, Ok(None)));
        assert_eq!(opened.elapsed(), TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn the_timer_is_registered_even_when_the_task_has_spent_its_budget() {
        let connection = async {
            while tokio::task::coop::has_budget_remaining() {
                tokio::task::coop::consume_budget().await;
            }
            pending::<()>().await;
        };
        assert_closed_after(connection, TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn marks_made_while_no_connection_is_polled_do_not_count() {
        began();
        began();
        assert_closed_after(pending(), TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_polled_inside_another_keeps_its_marks_and_the_outer_ones() {
        let opened = Instant::now();
        // The inner connection takes a request and answers it; the outer one takes a request
        // just before polling the inner one and never answers it.
        let inner = Idle::new(
            async {
                began();
                end_a_response();
                pending::<()>().await;
            },
            TIMEOUT * 10,
        );
        let outer = async {
            began();
            let _ = inner.await;
        };
        // The outer connection stays busy; it ends when the inner one times out.
        assert_eq!(Idle::new(outer, TIMEOUT).await, Some(()));
        assert_eq!(opened.elapsed(), TIMEOUT * 10);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_one_connection_does_not_keep_the_connection_around_it() {
        let inner = Idle::new(
            async {
                began();
                pending::<()>().await;
            },
            TIMEOUT * 10,
        );
        let outer = async {
            let _ = inner.await;
        };
        assert_closed_after(outer, TIMEOUT).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_timeout_closes_an_idle_connection_at_once_and_a_huge_one_is_a_year() {
        let opened = Instant::now();
        assert!(Idle::new(pending::<()>(), Duration::ZERO).await.is_none());
        assert_eq!(opened.elapsed(), Duration::ZERO);
        let later = Instant::now();
        assert_eq!(
            deadline(later, Duration::MAX).duration_since(later),
            MAX_TIMEOUT
        );
    }
}
