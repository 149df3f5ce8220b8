//! Streams resumed on another instance: a shared session's events are recorded in the shared
//! store as they are written, and a `GET` with `Last-Event-ID` that lands on an instance which
//! did not write the stream gets it relayed from the store, then follows it until its response.
//!
//! Owns the outbox of events on their way to the store (one writer task per endpoint, so events
//! arrive in order; bounded in bytes), relaying a stream into this instance's session, and the
//! follower that fetches what the writing instance adds (woken by the store, and asking every
//! second in any case). Knows nothing of HTTP: `pipeline/gate/legacy.rs` and `pipeline/session.rs` opens the connection.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::session::store::{SessionEvent, SessionStore};
use crate::session::{SessionTable, Unavailable, bounded};
use crate::stream::event::{Connection, EventStream};
use crate::stream::session::{AttachFailure, SessionStreams};

/// The most bytes of events waiting to be written to the store; past it an event is not shared
/// (its stream still resumes on the instance that wrote it).
pub(crate) const MAX_OUTBOX_BYTES: usize = 16 * 1024 * 1024;

/// The most events one write carries.
const BATCH: usize = 256;

/// How often a follower asks for new events, woken or not.
const POLL: Duration = Duration::from_secs(1);

/// How long a resume waits for a stream the store does not have yet (its first event may still
/// be on its way from the instance that wrote it).
const FIRST_EVENT_WAIT: Duration = Duration::from_secs(2);

/// Events on their way to the store, written in the order they were queued by one task.
pub(crate) struct Outbox {
    events: Mutex<Vec<SessionEvent>>,
    bytes: AtomicUsize,
    wake: tokio::sync::Notify,
    writing: AtomicBool,
    store: Arc<dyn SessionStore>,
}

impl Outbox {
    pub(super) fn new(store: Arc<dyn SessionStore>) -> Self {
        Self {
            events: Mutex::default(),
            bytes: AtomicUsize::new(0),
            wake: tokio::sync::Notify::new(),
            writing: AtomicBool::new(false),
            store,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SessionEvent>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues one event of `session`'s stream `number` for the store. Called while the stream's
    /// own lock is held, so a stream's events are queued in their order; this lock is taken last
    /// everywhere.
    pub(crate) fn record(
        self: &Arc<Self>,
        session: &str,
        number: u64,
        seq: u64,
        frame: &Bytes,
        response: bool,
        keep_from: u64,
    ) {
        let Ok(text) = std::str::from_utf8(frame) else {
            return;
        };
        let size = text.len() + session.len() + 64;
        if self.bytes.fetch_add(size, Ordering::AcqRel) + size > MAX_OUTBOX_BYTES {
            self.bytes.fetch_sub(size, Ordering::AcqRel);
            return;
        }
        self.lock().push(SessionEvent {
            session: session.to_owned(),
            stream: number,
            seq,
            frame: text.to_owned(),
            response,
            keep_from,
        });
        self.wake.notify_one();
        self.start_writer();
    }

    /// How many events wait for the store.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Starts the writer task, once; it ends when nothing can queue events any more.
    fn start_writer(self: &Arc<Self>) {
        let outbox = Arc::downgrade(self);
        super::spawn_once(&self.writing, || async move {
            loop {
                let Some(outbox) = outbox.upgrade() else {
                    return;
                };
                let batch: Vec<SessionEvent> = {
                    let mut events = outbox.lock();
                    let n = events.len().min(BATCH);
                    events.drain(..n).collect()
                };
                if batch.is_empty() {
                    let woken = outbox.wake.notified();
                    let _ = tokio::time::timeout(Duration::from_secs(60), woken).await;
                    continue;
                }
                let size: usize = batch
                    .iter()
                    .map(|e| e.frame.len() + e.session.len() + 64)
                    .sum();
                outbox.bytes.fetch_sub(size, Ordering::AcqRel);
                // Three tries, then the batch is not shared (its streams still resume where
                // they were written).
                for attempt in 0..3u64 {
                    if bounded(outbox.store.record_events(&batch)).await.is_ok() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(200 * (attempt + 1))).await;
                }
            }
        });
    }
}

impl SessionTable {
    /// How many events wait for the store.
    #[cfg(test)]
    pub(crate) fn outbox_len(&self) -> usize {
        self.relay.as_ref().map_or(0, |r| r.events.len())
    }

    /// `GET` in session `id`: the standalone stream, or a stream resumed after `last_event_id`:
    /// here if this instance has it, else relayed from the shared store.
    pub(crate) async fn open_stream(
        self: &Arc<Self>,
        id: &str,
        streams: &Arc<SessionStreams>,
        last_event_id: Option<&str>,
    ) -> Result<Result<Connection, AttachFailure>, Unavailable> {
        match streams.open(last_event_id) {
            Ok(connection) => {
                if connection.stream.relayed.load(Ordering::Acquire) {
                    self.follow(id, &connection.stream);
                }
                Ok(Ok(connection))
            }
            Err(AttachFailure::UnknownEvent) => {
                match last_event_id.and_then(crate::stream::parse_event_id) {
                    // Another instance's stream (this instance's own are all here, or gone).
                    Some((number, after))
                        if self.shared.is_some() && !streams.numbers_here(number) =>
                    {
                        self.relay_stream(id, streams, number, after).await
                    }
                    _ => Ok(Err(AttachFailure::UnknownEvent)),
                }
            }
            Err(failure) => Ok(Err(failure)),
        }
    }

    /// Relays stream `number` of session `id` from the store into this instance's session and
    /// attaches a connection after event `after`.
    async fn relay_stream(
        self: &Arc<Self>,
        id: &str,
        streams: &Arc<SessionStreams>,
        number: u64,
        after: u64,
    ) -> Result<Result<Connection, AttachFailure>, Unavailable> {
        let Some(store) = &self.shared else {
            return Ok(Err(AttachFailure::UnknownEvent));
        };
        let mut kept = bounded(store.stream_events(id, number, 0))
            .await
            .map_err(|_| Unavailable)?;
        if kept.is_none() {
            let _ = tokio::time::timeout(FIRST_EVENT_WAIT, store.events_waiting(id, number)).await;
            kept = bounded(store.stream_events(id, number, 0))
                .await
                .map_err(|_| Unavailable)?;
        }
        let Some(events) = kept else {
            return Ok(Err(AttachFailure::UnknownEvent));
        };
        let stream = EventStream::relayed(self.streams, number);
        for event in events {
            if event.seq > 0 {
                stream.push_relayed(event.seq, Bytes::from(event.frame), event.response);
            }
        }
        if streams.adopt_relayed(&stream) {
            self.follow(id, &stream);
        }
        // Attached to the stream kept (another resume may have relayed it first); not kept
        // (the session ended, or keeps its most streams, all running), the resume fails as for
        // an unknown stream.
        Ok(streams.resume(number, after))
    }

    /// Fetches what the writing instance adds to a relayed stream, until its response, its
    /// session's end, or a replay window without a connection; once per stream at a time.
    fn follow(&self, id: &str, stream: &Arc<EventStream>) {
        let Some(store) = &self.shared else {
            return;
        };
        let Some(number) = crate::stream::stream_number(stream).filter(|_| !stream.is_finished())
        else {
            return;
        };
        let store = Arc::clone(store);
        let session: Arc<str> = Arc::from(id);
        let window = self.streams.get_replay_window();
        super::spawn_once(&stream.following, || {
            follower(store, session, number, Arc::downgrade(stream), window)
        });
    }
}

async fn follower(
    store: Arc<dyn SessionStore>,
    session: Arc<str>,
    number: u64,
    stream: Weak<EventStream>,
    window: Duration,
) {
    let mut unattached: Option<Instant> = None;
    loop {
        let Some(current) = stream.upgrade() else {
            return;
        };
        if current.is_finished() || current.is_closed() {
            current.following.store(false, Ordering::Release);
            return;
        }
        if current.connections.load(Ordering::Acquire) > 0 {
            unattached = None;
        } else if unattached.is_some_and(|since| since.elapsed() >= window) {
            // Nobody reads it here any more; a later resume starts following again. A resume
            // that attached just now saw this follower still running: it keeps following.
            current.following.store(false, Ordering::Release);
            if current.connections.load(Ordering::Acquire) == 0
                || current.following.swap(true, Ordering::AcqRel)
            {
                return;
            }
            unattached = None;
        } else if unattached.is_none() {
            unattached = Some(Instant::now());
        }
        let after = current.next_seq().saturating_sub(1);
        drop(current);
        tokio::select! {
            () = store.events_waiting(&session, number) => {}
            () = tokio::time::sleep(POLL) => {}
        }
        let Ok(Some(events)) = bounded(store.stream_events(&session, number, after)).await else {
            continue;
        };
        let Some(current) = stream.upgrade() else {
            return;
        };
        for event in events {
            if event.seq > 0 {
                current.push_relayed(event.seq, Bytes::from(event.frame), event.response);
            }
        }
    }
}
