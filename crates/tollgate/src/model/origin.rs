//! Where a request came from ([`Transport`]: its caller as the transport knows it, HTTP headers
//! and the peer's address, see [`Caller`]) and where its notifications go (an event stream or
//! stdio lines). Every room below
//! the transports reads it; it knows nothing of what the request asks.

use std::sync::Arc;

use http::HeaderMap;

use crate::facts::request::OriginatingRequest;
use crate::model::features::NotificationSink;
use crate::policy::rules::Caller;
use crate::wire::head::Head;

/// Where a message came from: an HTTP POST (its headers and peer) or a stdio line, and where
/// its notifications go.
#[derive(Clone, Copy)]
pub(crate) struct Transport<'a> {
    origin: &'a Arc<OriginatingRequest>,
    caller: Caller<'a>,
    /// The head's fields, read once (HTTP only).
    head: Option<&'a Head<'a>>,
    sink: Option<&'a NotificationSink>,
}

impl<'a> Transport<'a> {
    /// An HTTP request's: `head` is what [`Head::read`] found in `origin`'s headers.
    pub(crate) fn http(
        origin: &'a Arc<OriginatingRequest>,
        head: &'a Head<'a>,
        sink: Option<&'a NotificationSink>,
    ) -> Self {
        Self {
            origin,
            caller: Caller {
                headers: Some(origin.headers()),
                peer: origin.peer_addr().map(|p| p.ip()),
            },
            head: Some(head),
            sink,
        }
    }

    pub(crate) fn stdio(sink: Option<&'a NotificationSink>) -> Self {
        Self {
            origin: OriginatingRequest::stdio(),
            caller: Caller::default(),
            head: None,
            sink,
        }
    }

    /// The request the message arrived in (the shared empty view over stdio).
    pub(crate) fn origin(self) -> &'a Arc<OriginatingRequest> {
        self.origin
    }

    pub(crate) fn headers(self) -> Option<&'a HeaderMap> {
        self.caller.headers
    }

    /// The HTTP head's fields, read once (`None` over stdio).
    pub(crate) fn head(self) -> Option<&'a Head<'a>> {
        self.head
    }

    pub(crate) fn caller(self) -> Caller<'a> {
        self.caller
    }

    pub(crate) fn sink(self) -> Option<&'a NotificationSink> {
        self.sink
    }
}
