//! Reading a request body under its byte limit, and lingering close: a body refused for its size
//! is still read and discarded, within bounds, so a client that writes it all before reading gets
//! the answer rather than a reset. Knows nothing of JSON or MCP.

use bytes::{Buf, Bytes};
use http_body::Body;
use http_body_util::BodyExt;

use crate::service::BoxError;

/// How long, and how many bytes more, a refused body is still read and discarded (lingering
/// close): a client that writes its whole body before reading (many do) then reads the refusal
/// instead of a connection reset. Bounded both ways; past either, the connection closes.
pub(crate) const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);
pub(crate) const LINGER_BYTES: usize = 16 * 1024 * 1024;

/// Why a body was not read.
pub(crate) enum BodyError {
    /// Over the endpoint's byte limit (the rest was drained, within bounds).
    TooLarge,
    /// The transport failed while reading it.
    Broken,
}

/// Reads a body of at most `max` bytes. One over the limit is refused, after lingering.
pub(crate) async fn read_body<B>(
    mut body: std::pin::Pin<&mut B>,
    max: usize,
) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let read = http_body_util::Limited::new(body.as_mut(), max)
        .collect()
        .await;
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            linger(body).await;
            Err(BodyError::TooLarge)
        }
        Err(_) => Err(BodyError::Broken),
    }
}

/// Reads and discards what is left of a refused body: at most [`LINGER_BYTES`] more, for at
/// most [`LINGER_TIME`].
pub(crate) async fn linger<B>(mut body: std::pin::Pin<&mut B>)
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
        let read = read_body(std::pin::pin!(body), 64).await;
        assert_eq!(read.ok().map(|b| b.len()), Some(64));
        let (body, pulled) = frames(5, 16);
        let read = read_body(std::pin::pin!(body), 64).await;
        assert!(matches!(read, Err(BodyError::TooLarge)));
        assert_eq!(pulled.load(Ordering::SeqCst), 80, "the rest was drained");
    }
}
