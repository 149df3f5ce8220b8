//! Answers routed between instances: a shared session's server-to-client request (elicitation,
//! sampling, roots) waits on the instance whose handler sent it, while the client may POST its
//! answer to any instance behind the URL.
//!
//! Owns this instance's name (random, per endpoint), the [`AnswerRoute`] each shared session's
//! streams use (request ids that name the instance; the waiting request recorded in the shared
//! store before it is sent) and the relay task that takes the answers handed to this instance
//! and delivers them. Knows nothing of HTTP or of how a store wakes an instance.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tollgate_json::{JsonObject, JsonValue, OutputLimits};

use crate::session::store::SessionStore;
use crate::session::{SessionTable, bounded};
use crate::stream::session::AnswerRoute;
use crate::wire::unwind::BoxFuture;

/// How often the relay asks for answers while requests wait, whether or not it was woken.
const POLL: Duration = Duration::from_secs(1);

/// One endpoint's share of the routing: its name, its waiting requests, and its events on their
/// way to the store.
pub(super) struct Relay {
    instance: Arc<str>,
    /// Where this instance's stream numbers start.
    stream_base: u64,
    waiting: AtomicUsize,
    wake: tokio::sync::Notify,
    started: std::sync::atomic::AtomicBool,
    pub(super) events: Arc<super::replay::Outbox>,
    /// Whether this instance acts on the others' broadcasts (`bus.rs`).
    pub(super) receiving: std::sync::atomic::AtomicBool,
    /// Broadcasts on their way to the others (`bus.rs`).
    pub(super) outgoing: Arc<super::bus::Outgoing>,
}

impl Relay {
    /// This instance's name.
    pub(super) fn instance(&self) -> &str {
        &self.instance
    }

    /// A relay named by 64 random bits (`None` without randomness).
    pub(super) fn new(store: &Arc<dyn SessionStore>) -> Option<Self> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).ok()?;
        // 40 random bits above the 20 of the counter: stream numbers stay under 2^60, so they
        // fit PostgreSQL's BIGINT and the 19 digits an event id may have.
        let base = (u64::from_le_bytes(bytes) >> 24).max(1) << 20;
        getrandom::fill(&mut bytes).ok()?;
        Some(Self {
            stream_base: base,
            events: Arc::new(super::replay::Outbox::new(Arc::clone(store))),
            outgoing: Arc::new(super::bus::Outgoing::new(Arc::clone(store))),
            receiving: std::sync::atomic::AtomicBool::new(false),
            instance: Arc::from(crate::wire::syntax::hex(&bytes)),
            waiting: AtomicUsize::new(0),
            wake: tokio::sync::Notify::new(),
            started: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// The route of one shared session's requests on this instance.
pub(super) struct Route {
    pub(super) session: Arc<str>,
    pub(super) prefix: String,
    pub(super) stream_base: u64,
    pub(super) outbox: Arc<super::replay::Outbox>,
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) table: Weak<SessionTable>,
}

impl Route {
    pub(super) fn new(
        table: &Arc<SessionTable>,
        store: &Arc<dyn SessionStore>,
        session: &str,
    ) -> Option<Self> {
        let relay = table.relay.as_ref()?;
        Some(Self {
            session: Arc::from(session),
            prefix: format!("tollgate-{}-", relay.instance),
            stream_base: relay.stream_base,
            outbox: Arc::clone(&relay.events),
            store: Arc::clone(store),
            table: Arc::downgrade(table),
        })
    }
}

impl AnswerRoute for Route {
    fn prefix(&self) -> &str {
        &self.prefix
    }

    fn stream_base(&self) -> u64 {
        self.stream_base
    }

    fn record(&self, number: u64, seq: u64, frame: &bytes::Bytes, response: bool, keep_from: u64) {
        self.outbox
            .record(&self.session, number, seq, frame, response, keep_from);
    }

    fn expect<'a>(&'a self, id: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let Some(table) = self.table.upgrade() else {
                return false;
            };
            let Some(relay) = &table.relay else {
                return false;
            };
            let instance = Arc::clone(&relay.instance);
            if bounded(self.store.expect_answer(&self.session, id, &instance))
                .await
                .is_err()
            {
                return false;
            }
            relay.waiting.fetch_add(1, Ordering::AcqRel);
            relay.wake.notify_one();
            start(&table);
            true
        })
    }

    fn forget(&self, id: &str) {
        if let Some(table) = self.table.upgrade()
            && let Some(relay) = &table.relay
        {
            let _ = relay
                .waiting
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, session, id) = (
            Arc::clone(&self.store),
            Arc::clone(&self.session),
            id.to_owned(),
        );
        runtime.spawn(async move {
            let _ = bounded(store.forget_answer(&session, &id)).await;
        });
    }
}

/// Starts the relay task of `table`, once; it ends with the table.
fn start(table: &Arc<SessionTable>) {
    let (Some(relay), Some(store)) = (&table.relay, &table.shared) else {
        return;
    };
    let store = Arc::clone(store);
    let weak = Arc::downgrade(table);
    super::spawn_once(&relay.started, || async move {
        loop {
            let Some(relay) = weak.upgrade().and_then(|t| t.relay.clone()) else {
                return;
            };
            let instance = Arc::clone(&relay.instance);
            if relay.waiting.load(Ordering::Acquire) == 0 {
                // Nothing waits: sleep until a request is recorded (holding the relay, never
                // the table, which may end meanwhile).
                let _ = tokio::time::timeout(Duration::from_secs(60), relay.wake.notified()).await;
                continue;
            }
            tokio::select! {
                () = store.answers_waiting(&instance) => {}
                () = tokio::time::sleep(POLL) => {}
            }
            let Ok(answers) = bounded(store.take_answers(&instance)).await else {
                continue;
            };
            let Some(table) = weak.upgrade() else {
                return;
            };
            for answer in answers {
                table.deliver(&answer.session, &answer.answer);
            }
        }
    });
}

impl SessionTable {
    /// Delivers an answer another instance handed over to the request waiting here.
    fn deliver(&self, session: &str, answer: &str) {
        let Some(streams) = self.streams_of(session) else {
            return;
        };
        if let Ok(JsonValue::Object(response)) = tollgate_json::from_str(answer, &self.limits) {
            crate::client_request::deliver(&streams, &response);
        }
    }

    /// A client's answer POSTed here: delivered to the request waiting here, else handed to the
    /// instance where it waits; whether one waits. `session` is the admitted principal's.
    pub(crate) async fn answer(
        &self,
        session: &str,
        streams: &crate::stream::session::SessionStreams,
        response: &JsonObject,
    ) -> Result<bool, super::Unavailable> {
        if crate::client_request::deliver(streams, response) {
            return Ok(true);
        }
        let (Some(store), Some(id)) =
            (&self.shared, response.get("id").and_then(JsonValue::as_str))
        else {
            return Ok(false);
        };
        // Written under bounds as wide as the ones it was read under.
        let limits = OutputLimits::default()
            .with_max_output_bytes(self.limits.max_input_bytes())
            .and_then(|l| l.with_max_string_units(self.limits.max_string_units()))
            .unwrap_or_default();
        let Ok(text) = tollgate_json::to_string(&JsonValue::Object(response.clone()), &limits)
        else {
            return Ok(false);
        };
        bounded(store.answer(session, id, &text))
            .await
            .map_err(|_| super::Unavailable)
    }
}
