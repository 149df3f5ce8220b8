//! A task's record (status, owner binding, lease, input requests and answers, result or error),
//! and its encoding to and from a store row.

use std::sync::Arc;

use tollgate_json::{
    JsonLimits, JsonObject, JsonValue, OutputLimits, from_str, to_string, write_into,
    write_str_into,
};

use crate::facts::context::ClientCapability;
use crate::model::tool::options::InputRequestKind;
use crate::tasks::model::{TaskStatus, iso8601};
use crate::tasks::store::TaskRow;

/// The record every store keeps (encoded as JSON text in [`TaskRow::data`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TaskRecord {
    pub(crate) id: Arc<str>,
    pub(crate) version: u64,
    /// Endpoint path and admitted principal: lookups by anyone else find nothing.
    pub(crate) owner: Arc<str>,
    pub(crate) tool: Arc<str>,
    /// Whether the tool was typed: its result is checked against the tool's output schema
    /// whenever it is read (and refused, failing closed, if the tool is no longer typed).
    pub(crate) typed: bool,
    /// The arguments the creating call sent, kept only when the endpoint has a sanitizer (which
    /// sees them when `tasks/get` returns the result); empty otherwise.
    pub(crate) arguments: JsonObject,
    pub(crate) status: TaskStatus,
    pub(crate) message: Option<Arc<str>>,
    pub(crate) created_ms: u64,
    pub(crate) updated_ms: u64,
    pub(crate) ttl_ms: u64,
    pub(crate) poll_ms: u64,
    /// Until when the worker running it is known alive (renewed every poll interval): a task
    /// not yet terminal whose lease ran out lost its worker and is failed when next read.
    pub(crate) lease_ms: u64,
    /// Outstanding input requests, key → `{method, params}`.
    pub(crate) requests: JsonObject,
    /// Every key ever asked (keys are unique over a task's lifetime).
    pub(crate) asked: Vec<JsonValue>,
    /// Answers received and not yet taken by the worker.
    pub(crate) responses: JsonObject,
    /// The completed tool result, as written JSON text.
    pub(crate) result: Option<Arc<str>>,
    /// The failure's JSON-RPC error, as written JSON text.
    pub(crate) error: Option<Arc<str>>,
}

/// Limits for decoding stored records: shallow (results and errors are text inside), but
/// with room for a whole output-limited result.
pub(crate) fn record_limits() -> JsonLimits {
    JsonLimits::default()
        .with_max_input_bytes(JsonLimits::MAX_INPUT_BYTES_CEILING)
        .and_then(|l| l.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING))
        .and_then(|l| l.with_max_nodes(1_000_000))
        // As deep as a row is written ([`record_output_limits`]), so a row Tollgate wrote reads
        // back (its kept copy in `decoded` is then exactly what reading it gives).
        .and_then(|l| l.with_max_depth(JsonLimits::MAX_DEPTH_CEILING))
        .unwrap_or_default()
}

/// Limits for reading back text the record keeps (a completed result, a call's arguments): as
/// wide as anything Tollgate can have written (the output ceilings, depth included), so what was
/// stored always reads back.
pub(crate) fn stored_text_limits() -> JsonLimits {
    JsonLimits::default()
        .with_max_input_bytes(JsonLimits::MAX_INPUT_BYTES_CEILING)
        .and_then(|l| l.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING))
        .and_then(|l| l.with_max_nodes(JsonLimits::MAX_NODES_CEILING))
        .and_then(|l| l.with_max_depth(JsonLimits::MAX_DEPTH_CEILING))
        .unwrap_or_default()
}

pub(crate) fn record_output_limits() -> OutputLimits {
    OutputLimits::default()
        .with_max_output_bytes(OutputLimits::MAX_OUTPUT_BYTES_CEILING)
        .and_then(|l| l.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING))
        .unwrap_or_default()
}

impl TaskRecord {
    /// The completed result, read back through the content model's checks: `None` when
    /// there is none or it does not read back.
    pub(crate) fn stored_result(&self) -> Option<crate::model::result::CompleteResult> {
        let text = self.result.as_deref()?;
        let stored = from_str(text, &stored_text_limits()).ok()?;
        crate::model::result::CompleteResult::from_wire(stored.as_object()?)
    }

    pub(crate) fn expires_at_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// The record's row ([`TaskRecord::encode`] without saying whether it is whole).
    #[cfg(test)]
    pub(crate) fn to_row(&self) -> Option<TaskRow> {
        self.encode().map(|(row, _)| row)
    }

    /// The record's row, and whether the row holds all of the record (it does not when the
    /// call's arguments were left out, too large for a record), so that it decodes to it.
    /// `None` when the record does not fit a row: a string past its ceiling, a value nested past
    /// what a row is read back with, or past the row's byte bound.
    pub(crate) fn encode(&self) -> Option<(TaskRow, bool)> {
        let limits = record_output_limits();
        let texts = [
            ("message", self.message.as_deref()),
            ("result", self.result.as_deref()),
            ("error", self.error.as_deref()),
        ];
        let capacity = texts
            .iter()
            .filter_map(|(_, t)| *t)
            .fold(256 + self.owner.len() + self.tool.len(), |sum, t| {
                sum.saturating_add(t.len() + t.len() / 8)
            });
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(b"{\"v\":1");
        let written = out.len();
        let mut w = MemberWriter::new(&mut out, written, 1, &limits)?;
        let mut whole = true;
        w.text("owner", &self.owner)?;
        w.text("tool", &self.tool)?;
        w.raw("typed", if self.typed { b"true" } else { b"false" })?;
        w.text("status", self.status.as_str())?;
        w.number("created", self.created_ms)?;
        w.number("updated", self.updated_ms)?;
        w.number("ttl", self.ttl_ms)?;
        w.number("poll", self.poll_ms)?;
        w.number("lease", self.lease_ms)?;
        w.value("requests", &JsonValue::Object(self.requests.clone()))?;
        w.array("asked", &self.asked)?;
        w.value("responses", &JsonValue::Object(self.responses.clone()))?;
        // The creating call's arguments, as text (kept only for a sanitizer; dropped if they do
        // not fit a record).
        if !self.arguments.is_empty() {
            match to_string(&self.arguments.clone().into(), &limits) {
                Ok(text) => w.text("arguments", &text)?,
                Err(_) => whole = false,
            }
        }
        for (key, text) in texts {
            if let Some(text) = text {
                w.text(key, text)?;
            }
        }
        out.push(b'}');
        if out.len() > limits.max_output_bytes() {
            return None;
        }
        // The writer only emits valid UTF-8: text from `str`, the rest ASCII.
        let data = String::from_utf8(out).ok()?;
        let row = TaskRow {
            id: self.id.to_string(),
            version: self.version,
            expires_at_ms: self.expires_at_ms(),
            data,
        };
        Some((row, whole))
    }

    pub(crate) fn from_row(row: &TaskRow) -> Option<Self> {
        let value = from_str(&row.data, &record_limits()).ok()?;
        let o = value.as_object()?;
        if o.get("v")?.as_number()?.to_u64()? != 1 {
            return None;
        }
        let num = |k: &str| o.get(k).and_then(JsonValue::as_number)?.to_u64();
        let text = |k: &str| o.get(k).and_then(JsonValue::as_str).map(Arc::<str>::from);
        Some(Self {
            id: row.id.as_str().into(),
            version: row.version,
            owner: text("owner")?,
            tool: text("tool")?,
            // Rows written before typed task-required tools existed are untyped.
            typed: o.get("typed").and_then(JsonValue::as_bool).unwrap_or(false),
            // Rows written before arguments were kept, or without a sanitizer, have none.
            arguments: o
                .get("arguments")
                .and_then(JsonValue::as_str)
                .and_then(|t| from_str(t, &stored_text_limits()).ok())
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default(),
            status: TaskStatus::from_wire(o.get("status")?.as_str()?)?,
            message: text("message"),
            created_ms: num("created")?,
            updated_ms: num("updated")?,
            ttl_ms: num("ttl")?,
            poll_ms: num("poll")?,
            lease_ms: num("lease")?,
            requests: o.get("requests")?.as_object()?.clone(),
            asked: o.get("asked")?.as_array()?.iter().cloned().collect(),
            responses: o.get("responses")?.as_object()?.clone(),
            result: text("result"),
            error: text("error"),
        })
    }

    /// The capabilities the outstanding input requests need that `declared` lacks, each once;
    /// `None` when a stored request names a method Tollgate never asks (a corrupt record).
    pub(crate) fn missing_capabilities(
        &self,
        declared: &crate::facts::context::ClientCapabilities,
    ) -> Option<Vec<ClientCapability>> {
        let mut missing = Vec::new();
        for (_, request) in self.requests.iter() {
            let method = request.get("method").and_then(JsonValue::as_str)?;
            let capability = InputRequestKind::of_method(method)?.capability();
            if !declared.declares(&capability) && !missing.contains(&capability) {
                missing.push(capability);
            }
        }
        Some(missing)
    }

    /// The fields every task shape shares, in wire order: the one list both
    /// [`TaskRecord::push_common`] and [`TaskRecord::write_common`] write.
    fn common(&self) -> impl Iterator<Item = (&'static str, Field<'_>)> {
        self.fields(self.status, ("ttlMs", "pollIntervalMs"))
    }

    /// The task as 2025-11-25's experimental tasks write it (`ttl` and `pollInterval` in
    /// milliseconds), with `status` as shown there (a completed tool result with `isError`
    /// is `failed` on that revision).
    pub(crate) fn push_requested(
        &self,
        b: &mut tollgate_json::JsonObjectBuilder,
        status: TaskStatus,
    ) {
        for (key, field) in self.fields(status, ("ttl", "pollInterval")) {
            match field {
                Field::Text(text) => b.push(key, &*text),
                Field::Number(n) => b.push(key, n),
            }
        }
    }

    /// The fields in wire order, with the status shown and the names of the two durations.
    fn fields(
        &self,
        status: TaskStatus,
        (ttl, poll): (&'static str, &'static str),
    ) -> impl Iterator<Item = (&'static str, Field<'_>)> {
        fn text(t: &str) -> Field<'_> {
            Field::Text(t.into())
        }
        [
            Some(("taskId", text(&self.id))),
            Some(("status", text(status.as_str()))),
            self.message.as_deref().map(|m| ("statusMessage", text(m))),
            Some(("createdAt", Field::Text(iso8601(self.created_ms).into()))),
            Some((
                "lastUpdatedAt",
                Field::Text(iso8601(self.updated_ms).into()),
            )),
            Some((ttl, Field::Number(self.ttl_ms))),
            Some((poll, Field::Number(self.poll_ms))),
        ]
        .into_iter()
        .flatten()
    }

    /// The common fields, written straight into an answer's text.
    pub(crate) fn write_common(&self, w: &mut MemberWriter<'_>) -> Option<()> {
        for (key, field) in self.common() {
            match field {
                Field::Text(text) => w.text(key, &text)?,
                Field::Number(n) => w.number(key, n)?,
            }
        }
        Some(())
    }

    /// The common fields, into an object being built.
    pub(crate) fn push_common(&self, b: &mut tollgate_json::JsonObjectBuilder) {
        for (key, field) in self.common() {
            match field {
                Field::Text(text) => b.push(key, &*text),
                Field::Number(n) => b.push(key, n),
            }
        }
    }
}

/// The extension's `CreateTaskResult` (`resultType: "task"` and the task's fields) as 2025-11-25
/// writes it: `{"task": {...}}`, the durations named `ttl` and `pollInterval`.
pub(crate) fn requested_created(extension: &JsonObject) -> tollgate_json::JsonObjectBuilder {
    let mut task = JsonObject::builder();
    for (key, value) in extension.iter() {
        let key = match key.as_str() {
            "resultType" => continue,
            "ttlMs" => "ttl",
            "pollIntervalMs" => "pollInterval",
            other => other,
        };
        task.push(key, value.clone());
    }
    JsonObject::builder().insert("task", task.build())
}

/// One of the common fields' values.
enum Field<'a> {
    Text(std::borrow::Cow<'a, str>),
    Number(u64),
}

/// An object's members written one by one into a buffer, as a tree of the same members would be
/// written (compact JSON) without making the tree: a record's row, a `tasks/get` answer. The
/// caller writes the opening brace and the first member, the writer each member after, under
/// the document's limits: each string under its ceilings, each member's value under the nesting
/// bound less the levels above it, and the buffer never past the document's byte bound.
pub(crate) struct MemberWriter<'a> {
    out: &'a mut Vec<u8>,
    limits: &'a OutputLimits,
    /// `limits` with the levels above a member's value taken off the nesting bound.
    nested: OutputLimits,
    /// The buffer's length past which the document is refused.
    end: usize,
}

impl<'a> MemberWriter<'a> {
    /// A writer of the members of an object `depth` levels deep (1: the document's root) in a
    /// document that starts `written` bytes before the buffer's end. `None` when no value fits.
    pub(crate) fn new(
        out: &'a mut Vec<u8>,
        written: usize,
        depth: usize,
        limits: &'a OutputLimits,
    ) -> Option<Self> {
        let nested = limits
            .with_max_depth(limits.max_depth().checked_sub(depth)?)
            .ok()?;
        let end = out
            .len()
            .checked_sub(written)?
            .saturating_add(limits.max_output_bytes());
        Some(Self {
            out,
            limits,
            nested,
            end,
        })
    }

    /// Whether the document is still within its byte bound.
    fn bounded(&self) -> Option<()> {
        (self.out.len() <= self.end).then_some(())
    }

    /// `,"key":` (every member but the first, which opens the object).
    fn key(&mut self, key: &str) {
        self.out.extend_from_slice(b",\"");
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    pub(crate) fn text(&mut self, key: &str, text: &str) -> Option<()> {
        self.key(key);
        write_str_into(text, self.out, self.limits).ok()?;
        self.bounded()
    }

    pub(crate) fn value(&mut self, key: &str, value: &JsonValue) -> Option<()> {
        self.key(key);
        write_into(value, self.out, &self.nested).ok()?;
        self.bounded()
    }

    /// An array of `items`, each one level deeper than a member's value.
    pub(crate) fn array(&mut self, key: &str, items: &[JsonValue]) -> Option<()> {
        let inner = self
            .nested
            .with_max_depth(self.nested.max_depth().checked_sub(1)?)
            .ok()?;
        self.key(key);
        self.out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write_into(item, self.out, &inner).ok()?;
            self.bounded()?;
        }
        self.out.push(b']');
        self.bounded()
    }

    /// `json`, text that is JSON already (a literal, or a stored text Tollgate wrote), as it is.
    pub(crate) fn raw(&mut self, key: &str, json: &[u8]) -> Option<()> {
        self.key(key);
        self.out.extend_from_slice(json);
        self.bounded()
    }

    pub(crate) fn number(&mut self, key: &str, mut n: u64) -> Option<()> {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + u8::try_from(n % 10).unwrap_or(0);
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.raw(key, &digits[at..])
    }
}
