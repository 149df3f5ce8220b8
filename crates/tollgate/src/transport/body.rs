//! Reading a request body under its byte limit and its pace, and lingering close: a body refused
//! for its size is still read and discarded, within bounds, so a client that writes it all before
//! reading gets the answer rather than a reset. The pace ([`Pace`]) is timed by the connection's
//! one timer (`idle/`), which tells the read when the body is past it. Knows nothing of JSON or
//! MCP.

use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tokio::time::Instant;

/// The error type of the bodies the transport reads (any body's error, boxed).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long, and how many bytes more, a refused body is still read and discarded (lingering
/// close): a client that writes its whole body before reading (many do) then reads the refusal
/// instead of a connection reset. Bounded both ways; past either, the connection closes.
pub(crate) const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);
pub(crate) const LINGER_BYTES: usize = 16 * 1024 * 1024;

/// How fast a request body must arrive once its head has: whole within `timeout`, and, after
/// `grace`, at no less than `min_rate` bytes a second on average since its head (a body that has
/// brought `n` bytes is due `grace + n / min_rate` after its head). A zero rate sets no rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pace {
    pub(crate) timeout: Duration,
    pub(crate) grace: Duration,
    pub(crate) min_rate: u32,
}

impl Pace {
    /// No bound (a year, and no rate).
    pub(crate) const UNBOUNDED: Self = Self {
        timeout: crate::transport::idle::MAX_TIMEOUT,
        grace: Duration::ZERO,
        min_rate: 0,
    };

    /// When a body whose head arrived at `since`, and which has brought `bytes` since, is past
    /// its pace.
    pub(crate) fn due(&self, since: Instant, bytes: u64) -> Instant {
        let whole = crate::transport::idle::deadline(since, self.timeout);
        if self.min_rate == 0 {
            return whole;
        }
        let earned = Duration::from_millis(bytes.saturating_mul(1000) / u64::from(self.min_rate));
        let slow = crate::transport::idle::deadline(since, self.grace.saturating_add(earned));
        whole.min(slow)
    }
}

/// A request body of at most this many bytes is not counted against its peer's budget
/// ([`BodyBudget`]): the per-peer connection cap bounds those.
pub(crate) const UNCOUNTED_BODY: usize = 64 * 1024;

/// The bytes of request bodies past [`UNCOUNTED_BODY`] that each peer has in requests not yet
/// answered, at most `per_peer` each: read before the request is admitted, so bounded for
/// callers nobody has admitted yet.
pub(crate) struct BodyBudget {
    per_peer: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
}

impl BodyBudget {
    pub(crate) fn new(per_peer: usize) -> Self {
        Self {
            per_peer,
            held: Mutex::default(),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        // A count per peer: consistent whatever a panic interrupted.
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes `bytes` from `peer`'s budget, if they fit.
    fn take(&self, peer: IpAddr, bytes: usize) -> bool {
        let mut held = self.held();
        let now = held.get(&peer).copied().unwrap_or(0);
        match now.checked_add(bytes).filter(|&n| n <= self.per_peer) {
            Some(n) => {
                held.insert(peer, n);
                true
            }
            None => false,
        }
    }

    fn give(&self, peer: IpAddr, bytes: usize) {
        let mut held = self.held();
        if let Some(now) = held.get_mut(&peer) {
            *now = now.saturating_sub(bytes);
            if *now == 0 {
                held.remove(&peer);
            }
        }
    }
}

/// The bytes a request's body holds against its peer's budget, given back when dropped (when
/// the request is answered).
pub(crate) struct Held<'a> {
    budget: &'a BodyBudget,
    peer: IpAddr,
    bytes: usize,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.give(self.peer, self.bytes);
        }
    }
}

/// Why a body was not read.
pub(crate) enum BodyError {
    /// Over the endpoint's byte limit (the rest was drained, within bounds).
    TooLarge,
    /// Past its pace: the connection's timer cut it.
    TooSlow,
    /// Past its peer's budget of bytes in requests not yet answered (the rest was drained,
    /// within bounds).
    OverBudget,
    /// The transport failed while reading it.
    Broken,
}

/// Why a body read stopped early.
#[derive(Debug)]
enum Stopped {
    TooSlow,
    OverBudget,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TooSlow => "request body past its pace",
            Self::OverBudget => "request body past its peer's budget",
        })
    }
}

impl std::error::Error for Stopped {}

pin_project_lite::pin_project! {
    /// A body that fails, when it has nothing ready, if the connection polling it has cut it, and
    /// whose bytes past [`UNCOUNTED_BODY`] are taken from its peer's budget as they arrive.
    struct Paced<'a, B> {
        #[pin]
        body: B,
        seen: usize,
        held: Option<Held<'a>>,
    }
}

impl<B> Body for Paced<'_, B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, BoxError>>> {
        let this = self.project();
        match this.body.poll_frame(cx) {
            Poll::Pending if crate::transport::idle::body_cut() => {
                Poll::Ready(Some(Err(Box::new(Stopped::TooSlow))))
            }
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(frame))) => {
                let size = frame.data_ref().map_or(0, Buf::remaining);
                *this.seen = this.seen.saturating_add(size);
                if let Some(held) = this.held
                    && *this.seen > UNCOUNTED_BODY
                {
                    // The first bytes past the free allowance are charged with it.
                    let charge = *this.seen - held.bytes;
                    if !held.budget.take(held.peer, charge) {
                        return Poll::Ready(Some(Err(Box::new(Stopped::OverBudget))));
                    }
                    held.bytes = *this.seen;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(Into::into))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Reads a body of at most `max` bytes within its pace, its bytes past [`UNCOUNTED_BODY`] taken
/// from `budget` for the peer (when both are known), and returned with what it holds there. One
/// over the limit or the budget is refused, after lingering; one the connection cut for its pace
/// is refused at once. Either way the body is marked read for the connection's timer.
pub(crate) async fn read_body<'a, B>(
    mut body: Pin<&mut B>,
    max: usize,
    budget: Option<(&'a BodyBudget, IpAddr)>,
) -> Result<(Bytes, Option<Held<'a>>), BodyError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let held = budget.map(|(budget, peer)| Held {
        budget,
        peer,
        bytes: 0,
    });
    let mut paced = Paced {
        body: body.as_mut(),
        seen: 0,
        held,
    };
    let read = http_body_util::Limited::new(&mut paced, max)
        .collect()
        .await;
    let read = match read {
        Ok(collected) => Ok((collected.to_bytes(), paced.held.take())),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge),
        Err(e) => match e.downcast_ref::<Stopped>() {
            Some(Stopped::TooSlow) => Err(BodyError::TooSlow),
            Some(Stopped::OverBudget) => Err(BodyError::OverBudget),
            None => Err(BodyError::Broken),
        },
    };
    drop(paced);
    if matches!(read, Err(BodyError::TooLarge | BodyError::OverBudget)) {
        linger(body).await;
    }
    crate::transport::idle::body_read();
    read
}

/// Reads and discards what is left of a refused body: at most [`LINGER_BYTES`] more, for at
/// most [`LINGER_TIME`].
pub(crate) async fn linger<B>(mut body: Pin<&mut B>)
where
    B: Body,
{
    let drain = async {
        let mut seen = 0usize;
        loop {
            let size = match body.as_mut().frame().await {
                Some(Ok(frame)) => frame.data_ref().map_or(0, Buf::remaining),
                _ => break,
            };
            seen = seen.saturating_add(size);
            if seen > LINGER_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drain).await;
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use http_body::Frame;

    use super::*;

    /// A body of `frames` frames of `size` bytes each (or one that never yields), counting the
    /// bytes pulled from it.
    struct Frames {
        frames: usize,
        size: usize,
        pulled: Arc<AtomicUsize>,
        stalls: bool,
    }

    impl Body for Frames {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            if self.stalls {
                return Poll::Pending;
            }
            if self.frames == 0 {
                return Poll::Ready(None);
            }
            self.frames -= 1;
            self.pulled.fetch_add(self.size, Ordering::SeqCst);
            Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![0u8; self.size])))))
        }
    }

    fn frames(frames: usize, size: usize) -> (Frames, Arc<AtomicUsize>) {
        let pulled = Arc::new(AtomicUsize::new(0));
        let body = Frames {
            frames,
            size,
            pulled: Arc::clone(&pulled),
            stalls: false,
        };
        (body, pulled)
    }

    #[tokio::test]
    async fn lingering_reads_at_most_its_bytes() {
        let size = 1024 * 1024;
        let at = LINGER_BYTES / size;
        // At the bound, everything is drained (and the end is seen).
        let (body, pulled) = frames(at, size);
        linger(std::pin::pin!(body)).await;
        assert_eq!(pulled.load(Ordering::SeqCst), LINGER_BYTES);
        // Past it, draining stops at the first frame over the bound.
        let (body, pulled) = frames(at + 4, size);
        linger(std::pin::pin!(body)).await;
        assert_eq!(pulled.load(Ordering::SeqCst), LINGER_BYTES + size);
    }

    #[tokio::test(start_paused = true)]
    async fn lingering_waits_at_most_its_time() {
        let (mut body, _) = frames(1, 1);
        body.stalls = true;
        let start = tokio::time::Instant::now();
        linger(std::pin::pin!(body)).await;
        assert_eq!(start.elapsed(), LINGER_TIME);
    }

    #[tokio::test]
    async fn a_body_at_its_limit_is_read_and_one_past_is_refused() {
        let (body, _) = frames(4, 16);
        let read = read_body(std::pin::pin!(body), 64, None).await;
        assert_eq!(read.ok().map(|(b, _)| b.len()), Some(64));
        let (body, pulled) = frames(5, 16);
        let read = read_body(std::pin::pin!(body), 64, None).await;
        assert!(matches!(read, Err(BodyError::TooLarge)));
        assert_eq!(pulled.load(Ordering::SeqCst), 80, "the rest was drained");
    }
}

#[cfg(test)]
mod budget_tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::pin::pin;

    use http_body_util::Full;

    use super::*;

    const PEER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    const OTHER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    fn body(bytes: usize) -> Full<Bytes> {
        Full::new(Bytes::from(vec![b' '; bytes]))
    }

    async fn read<'a>(
        bytes: usize,
        budget: &'a BodyBudget,
        peer: IpAddr,
    ) -> Result<Option<Held<'a>>, BodyError> {
        let read = read_body(pin!(body(bytes)), usize::MAX, Some((budget, peer))).await;
        read.map(|(_, held)| held)
    }

    #[tokio::test]
    async fn bodies_past_the_allowance_hold_their_bytes_until_answered() {
        let budget = BodyBudget::new(3 * UNCOUNTED_BODY);
        // Within the allowance: nothing held.
        let small = read(UNCOUNTED_BODY, &budget, PEER).await.ok().flatten();
        assert_eq!(small.map(|h| h.bytes), Some(0));
        assert!(budget.held().is_empty());
        // At the budget: one body of three allowances, held.
        let at = read(3 * UNCOUNTED_BODY, &budget, PEER).await.ok().flatten();
        assert_eq!(budget.held().get(&PEER), Some(&(3 * UNCOUNTED_BODY)));
        // One byte past it, while that is held: refused; another peer is not.
        let past = read(UNCOUNTED_BODY + 1, &budget, PEER).await;
        assert!(matches!(past, Err(BodyError::OverBudget)));
        assert!(read(UNCOUNTED_BODY + 1, &budget, OTHER).await.is_ok());
        // Answered (dropped): given back, and the peer's next body fits.
        drop(at);
        assert!(budget.held().is_empty());
        assert!(read(UNCOUNTED_BODY + 1, &budget, PEER).await.is_ok());
    }
}
