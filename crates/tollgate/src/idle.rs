//! The head-or-idle timeout of one HTTP/1.1 connection: a connection with no request in flight
//! (just accepted, or since its last response ended) must bring a complete request head within
//! the timeout, or it is closed unanswered.
//!
//! One timer per connection, registered when the connection opens and again only when it fires
//! (at most once per timeout): the timer fires at the deadline it was set for, and the
//! connection's real deadline (moved by every request since) is checked then. A request marks
//! its start when the connection hands it on (`Began`) and its end when its response body is
//! dropped (`Ended`); both write a per-thread count that the connection's wrapper reads around
//! its own poll, so a request costs no shared write and no timer work, only one clock read when
//! it ends. hyper's own header timeout made and cancelled a timer per request.
//!
//! Knows hyper's connection futures and bodies as plain futures and bodies; nothing of MCP.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// Requests begun and response bodies ended on this thread while a connection's wrapper polls
/// its connection (each wrapper keeps the count of any wrapper it runs inside).
#[derive(Clone, Copy, Default)]
struct Marks {
    began: u32,
    ended: u32,
}

thread_local! {
    static MARKS: Cell<Marks> = const { Cell::new(Marks { began: 0, ended: 0 }) };
}

/// Marks a request handed on by the connection now being polled on this thread.
pub(crate) fn began() {
    let _ = MARKS.try_with(|m| {
        let now = m.get();
        m.set(Marks {
            began: now.began.wrapping_add(1),
            ..now
        });
    });
}

fn ended() {
    let _ = MARKS.try_with(|m| {
        let now = m.get();
        m.set(Marks {
            ended: now.ended.wrapping_add(1),
            ..now
        });
    });
}

pin_project_lite::pin_project! {
    /// A response body that marks its request ended when it is dropped (its connection drops it
    /// once its last byte is written, or the connection ends).
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
    /// A request's answer whose response body marks the request ended when dropped.
    pub(crate) struct Answer<F> {
        #[pin]
        answer: F,
    }
}

impl<F> Answer<F> {
    /// `answer`, for a request just marked begun (with [`began`]).
    pub(crate) fn new(answer: F) -> Self {
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

/// Where a connection's timer stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// Set (or reset) and not yet polled: it must be polled to register the task's waker.
    Unpolled,
    /// Registered with the waker kept in `waker`; it wakes the task when due.
    Registered,
    /// Fired while a request was in flight: nothing to time until the request ends (which
    /// happens inside this wrapper's poll, so that poll sets it again).
    Dormant,
}

pin_project_lite::pin_project! {
    /// A connection closed (its future dropped) once it has had no request in flight for
    /// `timeout`: it yields `None` then, else the connection's own output.
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
        if marks.began != 0 || marks.ended != 0 {
            *this.in_flight = this
                .in_flight
                .saturating_add(marks.began)
                .saturating_sub(marks.ended);
            if marks.ended != 0 && *this.in_flight == 0 {
                *this.idle_since = Instant::now();
            }
        }
        loop {
            let current = this.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
            match *this.state {
                Timer::Dormant if *this.in_flight > 0 => return Poll::Pending,
                Timer::Dormant => {
                    this.timer
                        .as_mut()
                        .reset(deadline(*this.idle_since, *this.timeout));
                    *this.state = Timer::Unpolled;
                    continue;
                }
                // Registered with this task's waker and not fired: it wakes the task when due.
                Timer::Registered if current && !this.timer.is_elapsed() => return Poll::Pending,
                Timer::Registered | Timer::Unpolled => {}
            }
            if this.timer.as_mut().poll(cx).is_pending() {
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

    /// A response body handed over and dropped, as a connection does once it is written.
    fn end_a_response() {
        drop(Ended {
            body: Full::new(Bytes::from_static(b"{}")),
        });
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_brings_no_request_is_closed_at_the_timeout() {
        let opened = Instant::now();
        let closed = Idle::new(pending::<()>(), TIMEOUT).await;
        assert!(closed.is_none());
        assert_eq!(opened.elapsed(), TIMEOUT);
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
        let opened = Instant::now();
        let connection = async {
            // Just inside the bound, a request, answered at once; again 9.9 s after it.
            for _ in 0..2 {
                sleep(Duration::from_millis(9_900)).await;
                began();
                end_a_response();
            }
            pending::<()>().await;
        };
        assert!(Idle::new(connection, TIMEOUT).await.is_none());
        // Closed exactly one timeout after the last response ended.
        assert_eq!(opened.elapsed(), Duration::from_millis(19_800) + TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn no_timeout_runs_while_a_request_is_in_flight() {
        let opened = Instant::now();
        let connection = async {
            sleep(Duration::from_secs(1)).await;
            began();
            // Served (or its response streamed) for four timeouts.
            sleep(Duration::from_secs(40)).await;
            end_a_response();
            pending::<()>().await;
        };
        assert!(Idle::new(connection, TIMEOUT).await.is_none());
        assert_eq!(opened.elapsed(), Duration::from_secs(41) + TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn marks_made_while_no_connection_is_polled_do_not_count() {
        began();
        began();
        let opened = Instant::now();
        assert!(Idle::new(pending::<()>(), TIMEOUT).await.is_none());
        assert_eq!(opened.elapsed(), TIMEOUT);
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
        let opened = Instant::now();
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
        assert!(Idle::new(outer, TIMEOUT).await.is_none());
        assert_eq!(opened.elapsed(), TIMEOUT);
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
