//! The stages of the request pipeline as named values, in the order they run, and (in test
//! builds only) a per-thread record of the stages a request actually ran, with the module that
//! ran each. `pipeline/order.rs` lists every check by stage and renders `docs/protocol.md`'s
//! table from it; the pipeline's stage-trace test compares what runs with that table.
//!
//! Knows nothing of requests: a stage is a name. Outside tests, [`stage!`] compiles to nothing.

/// A stage of the pipeline, in the order they run (a request skips those it does not need).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// `transport/`: before a byte of JSON is read (the built-in server, the tower service, the
    /// line framing of stdio).
    Transport,
    /// `pipeline/envelope.rs`: the bounded parse and the JSON-RPC envelope.
    Envelope,
    /// `pipeline/gate/`: which revision, and what it requires of the message.
    Revision,
    /// `pipeline/admission.rs`: admission and the request limiter.
    Admission,
    /// `pipeline/session.rs`: a 2025 message's session, found as the admitted principal's;
    /// `initialize`, `logging/setLevel` and notifications end here.
    Session,
    /// `pipeline/route.rs`: routing by the method table.
    Routing,
    /// `methods/`: parameters, lookup, capability and header checks.
    Lookup,
    /// `policy/rules.rs::charge_tool`, from `methods/tools.rs`.
    Limiter,
    /// `state/request.rs`: a retry's request state opened and verified (and consumed, on a
    /// single-use endpoint).
    RequestState,
    /// `model/intercept.rs`: the endpoint's interceptors, outermost first.
    Interception,
    /// `methods/tools.rs` with Tool Schema Profile 1: input validation and binding.
    Validation,
    /// `model/guard.rs`: the handler, its errors and panics caught.
    Handler,
    /// `model/intercept.rs`: the tool-result sanitizer.
    Sanitizing,
    /// `methods/tools.rs` and `state/request.rs`: an `input_required` result checked against
    /// the tool's declarations and request-state mode, then sealed.
    InputRequired,
    /// `methods/tools.rs` and `model/projection.rs`: output validation, limits, projection.
    Output,
}

impl Stage {
    /// Every stage, in order.
    #[cfg(test)]
    pub(crate) const ALL: [Stage; 15] = [
        Self::Transport,
        Self::Envelope,
        Self::Revision,
        Self::Admission,
        Self::Session,
        Self::Routing,
        Self::Lookup,
        Self::Limiter,
        Self::RequestState,
        Self::Interception,
        Self::Validation,
        Self::Handler,
        Self::Sanitizing,
        Self::InputRequired,
        Self::Output,
    ];

    /// Where the stage's checks live, as the protocol document names them.
    pub(crate) const fn file(self) -> &'static str {
        match self {
            Self::Transport => "`transport/`",
            Self::Envelope => "`pipeline/envelope.rs`",
            Self::Revision => "`pipeline/gate/`",
            Self::Admission => "`pipeline/admission.rs`",
            Self::Session => "`pipeline/session.rs`",
            Self::Routing => "`pipeline/route.rs`",
            Self::Lookup => "`methods/`",
            Self::Limiter => "`policy/rules.rs`",
            Self::RequestState => "`state/request.rs`",
            Self::Interception | Self::Sanitizing => "`model/intercept.rs`",
            Self::Validation => "`methods/tools.rs`",
            Self::Handler => "`model/guard.rs`",
            Self::Output => "`model/projection.rs`",
            Self::InputRequired => "`state/request.rs`",
        }
    }
}

/// Marks that the calling module runs `stage` now (recorded in test builds only).
macro_rules! stage {
    ($stage:ident) => {
        $crate::wire::stage::record($crate::wire::stage::Stage::$stage, module_path!())
    };
}
pub(crate) use stage;

/// Outside tests, nothing.
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn record(_stage: Stage, _module: &'static str) {}

#[cfg(test)]
pub(crate) use trace::{record, traced};

#[cfg(test)]
mod trace {
    use std::cell::RefCell;

    use super::Stage;

    std::thread_local! {
        static TRACE: RefCell<Option<Vec<(Stage, &'static str)>>> = const { RefCell::new(None) };
    }

    /// Records `stage` run by `module` on this thread, when a trace is being taken (a stage
    /// marked twice in a row is recorded once).
    pub(crate) fn record(stage: Stage, module: &'static str) {
        TRACE.with(|t| {
            if let Some(trace) = t.borrow_mut().as_mut()
                && trace.last().map(|(s, _)| *s) != Some(stage)
            {
                trace.push((stage, module));
            }
        });
    }

    /// Runs `work` to completion on a current-thread runtime of this thread and returns the
    /// stages it ran, in order, with the module that ran each. Tasks it spawns run on this
    /// thread too, so their stages are recorded.
    #[allow(
        clippy::panic,
        reason = "test support: a test without a runtime cannot run"
    )]
    pub(crate) fn traced<F: std::future::Future>(
        work: F,
    ) -> (F::Output, Vec<(Stage, &'static str)>) {
        TRACE.with(|t| *t.borrow_mut() = Some(Vec::new()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let output = match runtime {
            Ok(runtime) => runtime.block_on(work),
            Err(error) => panic!("no runtime for the trace: {error}"),
        };
        let trace = TRACE.with(|t| t.borrow_mut().take()).unwrap_or_default();
        (output, trace)
    }
}
