//! A session as a shared store's row: what `initialize` told the session (its revision, the
//! client's capabilities and implementation) written as one JSON object, read back by any
//! instance under the endpoint's own request limits.
//!
//! Owns the row's `data` format (`{"v":"1","revision":…,"capabilities":…,"clientInfo":…}`) and the
//! log level's spelling. Knows nothing of stores or streams: the caller makes the streams.

use std::sync::Arc;

use tollgate_json::{JsonLimits, JsonObject, JsonValue, OutputLimits};

use crate::facts::context::{ClientCapabilities, ClientInfo};
use crate::session::Session;
use crate::session::store::SessionRow;
use crate::stream::session::SessionStreams;
use crate::version::ProtocolVersion;
use crate::wire::level::LogLevel;

/// The format's version: a row of any other is not read.
const FORMAT: &str = "1";

/// The row for session `id`; `None` if it cannot be written within the response limits.
pub(super) fn row(id: &str, session: &Session) -> Option<SessionRow> {
    let mut data = JsonObject::builder()
        .insert("v", FORMAT)
        .insert("revision", session.revision.as_str())
        .insert("capabilities", session.capabilities.raw().clone());
    if let Some(info) = &session.client_info {
        data = data.insert("clientInfo", info.raw().clone());
    }
    let data = tollgate_json::to_string(&data.build().into(), &OutputLimits::default()).ok()?;
    Some(SessionRow {
        id: id.to_owned(),
        owner: session.owner.as_deref().map(str::to_owned),
        data,
        log_level: session.log_level.map(|l| l.as_str().to_owned()),
    })
}

/// The session a row records, with streams from `streams`; `None` for a row that is not this
/// format or names a revision that is not a 2025 one.
pub(super) fn session(
    row: &SessionRow,
    limits: &JsonLimits,
    streams: impl FnOnce(ProtocolVersion) -> Arc<SessionStreams>,
) -> Option<Session> {
    let JsonValue::Object(data) = tollgate_json::from_str(&row.data, limits).ok()? else {
        return None;
    };
    if data.get("v").and_then(JsonValue::as_str) != Some(FORMAT) {
        return None;
    }
    let revision = data
        .get("revision")
        .and_then(JsonValue::as_str)
        .and_then(ProtocolVersion::from_wire)
        .filter(|r| crate::version::is_legacy(*r))?;
    let Some(JsonValue::Object(capabilities)) = data.get("capabilities") else {
        return None;
    };
    let client_info = match data.get("clientInfo") {
        Some(JsonValue::Object(info)) => Some(ClientInfo::from_object(info.clone())?),
        Some(_) => return None,
        None => None,
    };
    Some(Session {
        owner: row.owner.as_deref().map(Arc::from),
        revision,
        capabilities: ClientCapabilities::from_json(capabilities.clone()),
        client_info,
        log_level: level(row),
        streams: streams(revision),
    })
}

/// The log level a row records (an unknown spelling counts as none).
pub(super) fn level(row: &SessionRow) -> Option<LogLevel> {
    row.log_level.as_deref().and_then(LogLevel::from_wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn streams(revision: ProtocolVersion) -> Arc<SessionStreams> {
        Arc::new(SessionStreams::new(
            crate::stream::StreamConfig::default(),
            revision,
            Duration::from_secs(60),
        ))
    }

    fn sample() -> Session {
        let info = JsonObject::builder()
            .insert("name", "client")
            .insert("version", "1.0")
            .build();
        let capabilities = JsonObject::builder()
            .insert("elicitation", JsonObject::new())
            .build();
        Session {
            owner: Some(Arc::from("alice")),
            revision: ProtocolVersion::V2025_06_18,
            capabilities: ClientCapabilities::from_json(capabilities),
            client_info: ClientInfo::from_object(info),
            log_level: Some(LogLevel::Warning),
            streams: streams(ProtocolVersion::V2025_06_18),
        }
    }

    #[test]
    fn a_session_survives_its_row() {
        let original = sample();
        let row = row("0123", &original);
        let row = row.unwrap_or_else(|| unreachable!("written"));
        assert_eq!(row.owner.as_deref(), Some("alice"));
        assert_eq!(row.log_level.as_deref(), Some("warning"));
        let back = session(&row, &JsonLimits::default(), streams);
        let back = back.unwrap_or_else(|| unreachable!("read"));
        assert_eq!(back.owner, original.owner);
        assert_eq!(back.revision, ProtocolVersion::V2025_06_18);
        assert!(back.capabilities.elicitation());
        assert_eq!(
            back.client_info.map(|i| i.raw().clone()),
            original.client_info.map(|i| i.raw().clone())
        );
        assert_eq!(back.log_level, Some(LogLevel::Warning));
    }

    #[test]
    fn rows_it_cannot_read_are_refused() {
        let good = row("0123", &sample()).unwrap_or_else(|| unreachable!("written"));
        for data in [
            "not json",
            "[]",
            r#"{"v":1,"revision":"2025-11-25","capabilities":{}}"#,
            r#"{"v":"2","revision":"2025-11-25","capabilities":{}}"#,
            r#"{"v":"1","revision":"2026-07-28","capabilities":{}}"#,
            r#"{"v":"1","revision":"2025-11-25"}"#,
            r#"{"v":"1","revision":"2025-11-25","capabilities":{},"clientInfo":{"name":1}}"#,
        ] {
            let bad = SessionRow {
                data: data.into(),
                ..good.clone()
            };
            assert!(
                session(&bad, &JsonLimits::default(), streams).is_none(),
                "{data}"
            );
        }
        // Within the limits the endpoint reads requests under, and not past them.
        let tight = JsonLimits::default()
            .with_max_input_bytes(good.data.len())
            .unwrap_or_default();
        assert!(session(&good, &tight, streams).is_some());
        let tighter = JsonLimits::default()
            .with_max_input_bytes(good.data.len() - 1)
            .unwrap_or_default();
        assert!(session(&good, &tighter, streams).is_none());
    }
}
