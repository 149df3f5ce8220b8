//! A call's argument check, shared by the call and its task creation: the arguments are
//! validated against the tool's input schema once, before the handler or, for a task an
//! interceptor creates first, when it creates it; no task is ever created for arguments that
//! fail. Knows nothing of schemas itself: the method supplies the check.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// How a call's arguments fared against its tool's input schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checked {
    Valid,
    Invalid,
    Busy,
}

/// A call's argument check, shared by the call and its task creation: validation runs once,
/// before the handler or, for a task an interceptor creates first, when it creates it; a task is
/// only ever created for arguments that passed.
pub(crate) struct ArgumentCheck {
    /// 0 unchecked, else a [`Checked`] + 1.
    state: AtomicU8,
    /// Set when a task was refused for its arguments (the call answers as for those
    /// arguments), or because its store could not be reached (`Busy`: 503).
    refused: AtomicU8,
    run: Box<dyn Fn() -> Checked + Send + Sync>,
}

impl ArgumentCheck {
    pub(crate) fn new(run: impl Fn() -> Checked + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            state: AtomicU8::new(0),
            refused: AtomicU8::new(0),
            run: Box::new(run),
        })
    }

    fn encode(checked: Checked) -> u8 {
        match checked {
            Checked::Valid => 1,
            Checked::Invalid => 2,
            Checked::Busy => 3,
        }
    }

    fn decode(code: u8) -> Option<Checked> {
        match code {
            1 => Some(Checked::Valid),
            2 => Some(Checked::Invalid),
            3 => Some(Checked::Busy),
            _ => None,
        }
    }

    /// Records the outcome of the call's own validation.
    pub(crate) fn record(&self, checked: Checked) {
        self.state.store(Self::encode(checked), Ordering::Release);
    }

    /// The outcome, validating now if nothing has yet.
    pub(crate) fn ensure(&self) -> Checked {
        if let Some(checked) = Self::decode(self.state.load(Ordering::Acquire)) {
            return checked;
        }
        let checked = (self.run)();
        self.record(checked);
        checked
    }

    /// Records that a task was refused for these arguments.
    pub(crate) fn refuse(&self, checked: Checked) {
        self.refused.store(Self::encode(checked), Ordering::Release);
    }

    /// Forgets a `Busy` refusal: the store answered after all (a handler that retried).
    pub(crate) fn clear_busy(&self) {
        let busy = Self::encode(Checked::Busy);
        let _ = self
            .refused
            .compare_exchange(busy, 0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Why a task was refused, if one was.
    pub(crate) fn refused(&self) -> Option<Checked> {
        Self::decode(self.refused.load(Ordering::Acquire))
    }
}
