//! The timeouts of one HTTP/1.1 connection, on one timer.
//!
//! - **Head or idle.** A connection with no request in flight must bring a complete request
//!   head within the timeout of becoming idle, or it is closed unanswered. It becomes idle when
//!   accepted, and when its last answer has been handed to it whole; while the answer's bytes
//!   still go out (a client reading a large answer slowly), each write the socket accepts
//!   starts the timeout again. So a client that takes in too little of its answer for the
//!   socket to accept more within the timeout is closed too (the kernel still delivers what its
//!   buffer holds).
//! - **The body's pace.** Once a request has been handed on, its body must be read whole within
//!   the body timeout, and after a grace at no less than the minimum rate ([`Pace`]); past
//!   either, the request's body read fails (the service answers 408 and closes) and the
//!   connection is closed a lingering time later at the latest.
//!
//! One timer per connection, registered at its first poll and again only when it fires (at
//! most once per timeout, or once when a request that outlasted it ends), when a request's body
//! is still unread at the end of a poll, or when the task's waker changes: the timer fires at
//! the deadline it was set for, and the connection's real deadline (moved by every request
//! since) is checked then. A request marks its start when the connection hands it on
//! ([`Answer`]), its body read when the service has read it ([`body_read`]) or answered, its
//! end when its response body is dropped ([`Ended`]); the socket marks the bytes it delivers and
//! each write that makes progress ([`Socket`]); all of these add to a per-thread count
//! (`marks.rs`) that the connection's wrapper ([`Idle`]) reads around its own poll. So a request
//! costs no shared write and, most of the time, no timer work: a clock read when it ends (and
//! at each poll in which the socket accepted more of its answer after that). hyper's own header
//! timeout made, registered and cancelled a timer per request.
//!
//! What the connection is doing is also shown to the server's [`Seat`] table, so that under
//! pressure the slowest connection with a request half-read can be shed.
//!
//! Knows hyper's connection futures, bodies and I/O traits as such; nothing of MCP.

mod marks;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

pub(crate) use marks::{Answer, Socket, body_cut, body_read};
use marks::{BEGUN, Marks, READ};

use crate::transport::body::Pace;
use crate::transport::shed::Seat;

/// Where a connection's timer stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// Set (or reset) and not yet polled: it must be polled to register the task's waker.
    Unpolled,
    /// Registered with the waker kept in `waker`; it wakes the task when due.
    Registered,
    /// Fired while a request was in flight with its body read: nothing to time until the
    /// request ends (which happens inside this wrapper's poll, so that poll sets it again from
    /// the fired timer).
    Dormant,
}

/// What a fired timer means.
enum Fired {
    /// Close the connection now.
    Close,
    /// The request's body is past its deadline: cut it, and close at this instant at the latest.
    Cut(Instant),
    /// A request is in flight with its body read.
    Dormant,
    /// Nothing yet: set the timer again for this instant.
    Later(Instant),
}

/// A connection's watch: what its timer is set for and what it has seen.
struct Watch {
    state: Timer,
    timeout: Duration,
    // Requests begun and not yet ended (at most one on HTTP/1.1), and since when there has been
    // none.
    in_flight: u32,
    idle_since: Instant,
    // The waker the timer was last registered with.
    waker: Option<Waker>,
    pace: Pace,
    // The request whose body is still being read: since when, and the bytes read since.
    reading: Option<(Instant, u64)>,
    // Bytes of a request head that has begun arriving on an idle connection.
    partial: u64,
    // Set once a body was past its deadline: the connection closes at this instant at the latest.
    cut: Option<Instant>,
    seat: Option<Seat>,
}

pin_project_lite::pin_project! {
    /// A connection that ends (yields `None`, for its caller to drop it, which closes it) once
    /// it has been idle for `timeout`, a lingering time after its request's body was cut for its
    /// pace, or when its seat is shed; else it yields the connection's own output.
    pub(crate) struct Idle<C> {
        #[pin]
        connection: C,
        #[pin]
        timer: Sleep,
        watch: Watch,
    }
}

impl<C: Future> Idle<C> {
    /// `connection`, accepted now, under a head-or-idle `timeout` (and no body pace).
    pub(crate) fn new(connection: C, timeout: Duration) -> Self {
        let now = Instant::now();
        Self {
            connection,
            timer: tokio::time::sleep_until(deadline(now, timeout)),
            watch: Watch {
                state: Timer::Unpolled,
                timeout,
                in_flight: 0,
                idle_since: now,
                waker: None,
                pace: Pace::UNBOUNDED,
                reading: None,
                partial: 0,
                cut: None,
                seat: None,
            },
        }
    }

    /// The same, with each request's body read at `pace`.
    pub(crate) fn with_pace(mut self, pace: Pace) -> Self {
        self.watch.pace = pace;
        self
    }

    /// The same, showing what it does in `seat`, and closed when the seat is shed.
    pub(crate) fn with_seat(mut self, seat: Seat) -> Self {
        seat.waiting(self.watch.idle_since, 0);
        self.watch.seat = Some(seat);
        self
    }
}

/// `from + timeout`; a year on when that overflows, else `from` (the server's limits keep a
/// timeout within a year).
pub(crate) fn deadline(from: Instant, timeout: Duration) -> Instant {
    from.checked_add(timeout)
        .or_else(|| from.checked_add(MAX_TIMEOUT))
        .unwrap_or(from)
}

/// The longest head-or-idle (or body) timeout the server takes.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 86_400);

impl Watch {
    /// Takes in what one poll of the connection marked; the timer is set earlier when a body
    /// began (or a request ended) with the timer set for later than its deadline.
    fn observe(&mut self, marks: Marks, mut timer: Pin<&mut Sleep>) {
        self.in_flight = self
            .in_flight
            .saturating_add(marks.began)
            .saturating_sub(marks.ended);
        match marks.last {
            BEGUN => {
                // Bytes that came with the head's read are not counted: stricter, and the same
                // for every head's size.
                let since = Instant::now();
                self.reading = Some((since, 0));
                self.partial = 0;
                let due = self.pace.due(since, 0);
                if self.state == Timer::Dormant || timer.deadline() > due {
                    timer.as_mut().reset(due);
                    self.state = Timer::Unpolled;
                }
            }
            READ => self.reading = None,
            _ => {
                if let Some((_, bytes)) = &mut self.reading {
                    *bytes = bytes.saturating_add(marks.read);
                }
            }
        }
        if self.in_flight == 0 {
            // No request: no body to read.
            self.reading = None;
            if marks.ended != 0 || marks.wrote != 0 {
                // Idle from the end of the answer, or from the last of its bytes to go out.
                self.idle_since = Instant::now();
                self.partial = 0;
                let due = deadline(self.idle_since, self.timeout);
                if timer.deadline() > due {
                    timer.as_mut().reset(due);
                    self.state = Timer::Unpolled;
                }
            } else {
                self.partial = self.partial.saturating_add(marks.read);
            }
        }
        if let Some(seat) = &self.seat {
            match self.reading {
                Some((since, bytes)) => seat.reading(since, bytes),
                None if self.in_flight == 0 => seat.waiting(self.idle_since, self.partial),
                None => seat.busy(),
            }
        }
    }

    /// What the timer firing at `fired` means.
    fn fired(&self, fired: Instant) -> Fired {
        if let Some(at) = self.cut {
            return if fired >= at {
                Fired::Close
            } else {
                Fired::Later(at)
            };
        }
        if let Some((since, bytes)) = self.reading {
            let due = self.pace.due(since, bytes);
            return if due <= fired {
                Fired::Cut(deadline(fired, crate::transport::body::LINGER_TIME))
            } else {
                Fired::Later(due)
            };
        }
        if self.in_flight > 0 {
            return Fired::Dormant;
        }
        let due = deadline(self.idle_since, self.timeout);
        if due <= fired {
            Fired::Close
        } else {
            Fired::Later(due)
        }
    }
}

impl<C: Future> Future for Idle<C> {
    type Output = Option<C::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<C::Output>> {
        let mut this = self.project();
        let watch = this.watch;
        if watch.seat.as_ref().is_some_and(Seat::is_shed) {
            return Poll::Ready(None);
        }
        let outer = marks::swap(Marks::default());
        // A request past its body's deadline sees it while it is polled (its body read fails).
        // Set only then: connections are not polled inside one another's poll in the server.
        let cutting = watch.cut.is_some() && watch.reading.is_some();
        let outer_cut = cutting.then(|| marks::set_cut(true));
        let polled = this.connection.poll(cx);
        if let Some(outer_cut) = outer_cut {
            marks::set_cut(outer_cut);
        }
        let marks = marks::swap(outer);
        if let Poll::Ready(output) = polled {
            return Poll::Ready(Some(output));
        }
        if marks != Marks::default() {
            watch.observe(marks, this.timer.as_mut());
        }
        loop {
            let current = watch
                .waker
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()));
            match watch.state {
                Timer::Dormant if watch.in_flight > 0 => return Poll::Pending,
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
                watch.state = Timer::Registered;
                if !current {
                    let waker = cx.waker().clone();
                    if let Some(seat) = &watch.seat {
                        seat.register(&waker);
                    }
                    watch.waker = Some(waker);
                }
                return Poll::Pending;
            }
            // Fired at the deadline it was set for: the connection's real deadlines are
            // checked now.
            match watch.fired(this.timer.deadline()) {
                Fired::Close => return Poll::Ready(None),
                Fired::Dormant => watch.state = Timer::Dormant,
                Fired::Later(due) => {
                    this.timer.as_mut().reset(due);
                    watch.state = Timer::Unpolled;
                }
                Fired::Cut(close_at) => {
                    // Polled again at once with the cut set, so the body read fails and the
                    // request is answered; closed at `close_at` if it is still open then.
                    watch.cut = Some(close_at);
                    this.timer.as_mut().reset(close_at);
                    watch.state = Timer::Unpolled;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use http_body::Body;
    use std::future::pending;

    use bytes::Bytes;
    use http_body_util::Full;
    use tokio::io::AsyncWrite;
    use tokio::time::sleep;

    use super::marks::{Ended, began};
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
            let mut socket = Socket::new(socket);
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
