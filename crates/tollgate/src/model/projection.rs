//! The `CallToolResult` projection: a completed tool result rendered straight to bytes, with each
//! revision's projection, under the output limits (no tree is built for the envelope).

use std::sync::Arc;

use http::StatusCode;
use tollgate_json::{JsonValue, OutputLimits};

use crate::model::result::CompleteResult;
use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::reply::{Overflow, Reply, fail, fault_reply, put};

/// Renders a completed `tools/call` result under the output limits.
pub(crate) fn complete(
    limits: &OutputLimits,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    result: &CompleteResult,
) -> Reply {
    let Some(id) = id else {
        return fault_reply(None, Fault::Internal, None);
    };
    let mut body = Vec::with_capacity(256);
    match write_complete(&mut body, limits, revision, id, result) {
        Ok(()) => Reply::json(StatusCode::OK, body),
        Err(Overflow) => fail(revision, Some(id), Fault::Internal, None),
    }
}

/// Writes a completed `tools/call` response straight into `out`, without building a tree for
/// the envelope.
fn write_complete(
    out: &mut Vec<u8>,
    limits: &OutputLimits,
    revision: ProtocolVersion,
    id: &RequestId,
    result: &CompleteResult,
) -> Result<(), Overflow> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    put(&id.to_json(), out, limits)?;
    out.extend_from_slice(br#","result":"#);
    write_result_object(out, limits, revision, result)?;
    out.push(b'}');
    if out.len() > limits.max_output_bytes() {
        Err(Overflow)
    } else {
        Ok(())
    }
}

/// A completed tool result rendered alone (a task's stored result), under `limits`.
pub(crate) fn render_tool_result(
    limits: &OutputLimits,
    revision: ProtocolVersion,
    result: &CompleteResult,
) -> Option<Arc<str>> {
    let mut out = Vec::with_capacity(256);
    write_result_object(&mut out, limits, revision, result).ok()?;
    String::from_utf8(out).ok().map(Arc::from)
}

/// Writes a `CallToolResult` object into `out`.
fn write_result_object(
    out: &mut Vec<u8>,
    limits: &OutputLimits,
    revision: ProtocolVersion,
    result: &CompleteResult,
) -> Result<(), Overflow> {
    let legacy = is_legacy(revision);
    let output = result.tool_output();
    out.extend_from_slice(if legacy {
        br#"{"content":["#
    } else {
        br#"{"resultType":"complete","content":["#
    });
    // A block the revision has no type for is left out (as icons are), never rewritten.
    let shown = output
        .content()
        .iter()
        .filter(|b| b.representable(revision));
    for (i, block) in shown.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        block
            .write_into(revision, out, limits)
            .map_err(|_| Overflow)?;
        if out.len() > limits.max_output_bytes() {
            return Err(Overflow);
        }
    }
    let structured = output.structured_content();
    // Before 2025-06-18 there is no structured output: the structured content travels as its
    // text mirror alone (written here when the result carries no content of its own).
    let structured = match structured {
        Some(value) if !revision.carries_titles_and_structure() => {
            if !output.content().iter().any(|b| b.representable(revision)) {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                let text = tollgate_json::to_string(value, limits).map_err(|_| Overflow)?;
                tollgate_json::write_str_into(&text, out, limits).map_err(|_| Overflow)?;
                out.push(b'}');
            }
            None
        }
        other => other,
    };
    out.push(b']');
    if let Some(structured) = structured {
        // The 2025 revisions can only carry an object: anything else fails the projection,
        // never wrapped or dropped.
        if legacy && structured.as_object().is_none() {
            return Err(Overflow);
        }
        out.extend_from_slice(br#","structuredContent":"#);
        put(structured, out, limits)?;
    }
    if output.is_error() {
        out.extend_from_slice(br#","isError":true"#);
    }
    if let Some(meta) = result.meta() {
        out.extend_from_slice(br#","_meta":"#);
        put(&JsonValue::Object(meta.clone()), out, limits)?;
    }
    out.push(b'}');
    if out.len() > limits.max_output_bytes() {
        Err(Overflow)
    } else {
        Ok(())
    }
}
