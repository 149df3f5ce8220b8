//! What a connection's request and socket tell its wrapper ([`Idle`](super::Idle)) while it is
//! polled: requests begun, bodies read, answers ready, response bodies ended, bytes the socket
//! delivered and writes that made progress, kept in a per-thread count that the wrapper swaps
//! out and back around its own poll; and the per-thread signal by which the wrapper tells the
//! request it polls that its body is past its deadline.
//!
//! Knows hyper's bodies and tokio's I/O traits as such; nothing of MCP.

use std::cell::Cell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Where the last request seen in a poll stands: nothing seen, begun with its body still to
/// read, or its body read (or its answer ready without one).
pub(super) const NOTHING: u8 = 0;
pub(super) const BEGUN: u8 = 1;
pub(super) const READ: u8 = 2;

/// Requests begun, bodies read, response bodies ended, bytes read and writes that made progress
/// on this thread while a connection's wrapper polls its connection (each wrapper keeps the
/// count of any wrapper it runs inside).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Marks {
    pub(super) began: u32,
    pub(super) ended: u32,
    pub(super) wrote: u32,
    /// Bytes the socket delivered.
    pub(super) read: u64,
    /// The last request's phase ([`BEGUN`] or [`READ`]; [`NOTHING`] when none was marked): a
    /// request begun and read in one poll ends it [`READ`], and one begun after another ended
    /// (pipelined) ends it [`BEGUN`].
    pub(super) last: u8,
}

thread_local! {
    static MARKS: Cell<Marks> = const {
        Cell::new(Marks { began: 0, ended: 0, wrote: 0, read: 0, last: NOTHING })
    };
    /// Set while a wrapper polls a connection whose request body is past its deadline.
    static CUT: Cell<bool> = const { Cell::new(false) };
}

fn mark(add: impl FnOnce(&mut Marks)) {
    let _ = MARKS.try_with(|m| {
        let mut now = m.get();
        add(&mut now);
        m.set(now);
    });
}

/// Swaps this thread's marks for `marks`, returning those it held.
pub(super) fn swap(marks: Marks) -> Marks {
    MARKS.try_with(|m| m.replace(marks)).unwrap_or_default()
}

/// Sets whether the request now polled on this thread is past its body's deadline, returning
/// what it was.
pub(super) fn set_cut(cut: bool) -> bool {
    CUT.try_with(|c| c.replace(cut)).unwrap_or(false)
}

/// Whether the request now polled on this thread is past its body's deadline: its body read
/// then fails ([`crate::transport::body`]), and its answer is 408.
pub(crate) fn body_cut() -> bool {
    CUT.try_with(Cell::get).unwrap_or(false)
}

/// Marks a request handed on by the connection now being polled on this thread.
pub(super) fn began() {
    mark(|m| {
        m.began = m.began.wrapping_add(1);
        m.last = BEGUN;
    });
}

/// Marks the body of the request now polled on this thread read (whole, refused or broken):
/// its body deadline no longer runs.
pub(crate) fn body_read() {
    mark(|m| m.last = READ);
}

fn ended() {
    mark(|m| m.ended = m.ended.wrapping_add(1));
}

pin_project_lite::pin_project! {
    /// A response body that marks its request ended when it is dropped (its connection drops it
    /// once it has taken its last frame to write, or when the connection ends).
    pub(crate) struct Ended<B> {
        #[pin]
        pub(super) body: B,
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
    /// A request's answer, the request marked begun when it is made, its body read when the
    /// answer is ready (a request answered without reading its body), and ended when its
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
        let answered = self.project().answer.poll(cx);
        if answered.is_ready() {
            body_read();
        }
        answered.map(|answered| answered.map(|response| response.map(|body| Ended { body })))
    }
}

pin_project_lite::pin_project! {
    /// A connection's socket whose reads are counted and whose writes that make progress are
    /// marked (an answer still going out keeps its connection from counting as idle; a body's
    /// bytes are its pace).
    pub(crate) struct Socket<T> {
        #[pin]
        io: T,
    }
}

impl<T> Socket<T> {
    pub(crate) fn new(io: T) -> Self {
        Self { io }
    }
}

/// Marks a write that made progress.
fn progress(written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
    if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
        mark(|m| m.wrote = m.wrote.wrapping_add(1));
    }
    written
}

impl<T: AsyncRead> AsyncRead for Socket<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = self.project().io.poll_read(cx, buf);
        let delivered = buf.filled().len().saturating_sub(before);
        if delivered > 0 {
            mark(|m| m.read = m.read.saturating_add(delivered as u64));
        }
        read
    }
}

impl<T: AsyncWrite> AsyncWrite for Socket<T> {
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
