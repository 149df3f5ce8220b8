//! The rows an endpoint's tasks lately wrote or decoded here, with their records, so a row read
//! back byte for byte as it was kept is not decoded again: a task's `tasks/get` polls read what
//! its creation or its worker just wrote, and decoding a record (a JSON parse of its text, the
//! result inside it) was the largest part of a poll's own work.
//!
//! A hit is exact. A kept row is used only when the row read has the same id, version, expiry
//! and encoded text (compared in full), and the record kept with it is the one decoding that
//! text gives: a decoded row keeps what [`TaskRecord::from_row`] returned, and a written row
//! keeps its record only when [`TaskRecord::encode`] wrote all of it (see
//! [`Decoded::to_keep`]; a row is written only within the limits it is read back with). Rows
//! written by another instance sharing the store are decoded as before.
//!
//! Bounded: [`SLOTS`] slots, one per id by a hash of the id (a newer row replaces the one in
//! its slot), and no row whose text is longer than [`MAX_KEPT_BYTES`]. A kept row stays until
//! its slot is reused, also after its task is gone: like the store, this memory holds results.
//!
//! A kept terminal record also answers a read of its task with no store call
//! ([`Decoded::terminal`]): no transition leaves a terminal status (every change in
//! `runner.rs`, `work.rs` and `methods/tasks.rs` leaves a completed, failed or cancelled record
//! as it is, on every instance), so the store holds that very row until it expires and is
//! purged. The caller still checks expiry and owner on the record, as on one it loaded.
//!
//! Knows records and rows; nothing of stores, requests or revisions.

use std::sync::{Mutex, PoisonError};

use crate::tasks::record::TaskRecord;
use crate::tasks::store::TaskRow;

/// How many rows are kept at most.
pub(crate) const SLOTS: usize = 256;

/// The longest encoded record kept, in bytes.
pub(crate) const MAX_KEPT_BYTES: usize = 16 * 1024;

/// A row and the record it decodes to.
struct Kept {
    row: TaskRow,
    record: TaskRecord,
}

/// Rows kept with their records (see the module's doc).
pub(crate) struct Decoded {
    slots: Box<[Mutex<Option<Kept>>]>,
}

impl Default for Decoded {
    fn default() -> Self {
        Self {
            slots: (0..SLOTS).map(|_| Mutex::new(None)).collect(),
        }
    }
}

impl Decoded {
    /// The slot of task `id` (FNV-1a over its bytes).
    fn slot(&self, id: &str) -> std::sync::MutexGuard<'_, Option<Kept>> {
        let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let index = usize::try_from(hash % SLOTS as u64).unwrap_or(0);
        self.slots[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The record `row` encodes: the one kept with it when it is kept unchanged, else decoded
    /// (and kept). `None` when the row does not decode.
    pub(crate) fn decode(&self, row: &TaskRow) -> Option<TaskRecord> {
        if let Some(kept) = self.slot(&row.id).as_ref().filter(|k| k.row == *row) {
            return Some(kept.record.clone());
        }
        let record = TaskRecord::from_row(row)?;
        if row.data.len() <= MAX_KEPT_BYTES {
            *self.slot(&row.id) = Some(Kept {
                row: row.clone(),
                record: record.clone(),
            });
        }
        Some(record)
    }

    /// The kept record of task `id` when it is terminal: the store's row for it, which no
    /// transition changes again (see the module's doc). `None` when none is kept for `id` or
    /// the kept one may still change.
    pub(crate) fn terminal(&self, id: &str) -> Option<TaskRecord> {
        self.slot(id)
            .as_ref()
            .filter(|k| k.row.id == id && k.record.status.is_terminal())
            .map(|k| k.record.clone())
    }

    /// A copy of `row`, which [`TaskRecord::encode`] wrote, to keep once the store has taken it,
    /// when it may be kept: short enough, and `whole` (holding all of its record: a call's
    /// arguments that did not fit were left out, so the row does not decode to the record).
    pub(crate) fn to_keep(row: &TaskRow, whole: bool) -> Option<TaskRow> {
        (whole && row.data.len() <= MAX_KEPT_BYTES).then(|| row.clone())
    }

    /// Keeps `row` (from [`Decoded::to_keep`]), which the store now holds, with `record`.
    pub(crate) fn wrote(&self, row: Option<TaskRow>, record: &TaskRecord) {
        if let Some(row) = row {
            let mut slot = self.slot(&row.id);
            *slot = Some(Kept {
                row,
                record: record.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use tollgate_json::JsonLimits;

    fn record() -> TaskRecord {
        crate::tasks::tests::record()
    }

    #[test]
    fn a_row_read_back_unchanged_gives_its_record_and_a_changed_one_is_decoded() {
        let decoded = Decoded::default();
        let r = record();
        let row = r.to_row().expect("encodes");
        decoded.wrote(Decoded::to_keep(&row, true), &r);
        assert_eq!(decoded.decode(&row), Some(r.clone()));
        // The same id and version with other text (a store that rewrote it): decoded from the
        // text, never the kept record.
        let mut other = r.clone();
        other.message = Some("other".into());
        let mut rewritten = other.to_row().expect("encodes");
        rewritten.version = row.version;
        assert_eq!(decoded.decode(&rewritten), Some(other.clone()));
        // Now that one is kept, and the first is decoded again.
        assert_eq!(decoded.decode(&rewritten), Some(other));
        assert_eq!(decoded.decode(&row), Some(r));
        // A row that does not decode is not kept as anything.
        let mut broken = row.clone();
        broken.data.push('x');
        assert_eq!(decoded.decode(&broken), None);
        assert_eq!(decoded.decode(&broken), None);
    }

    #[test]
    fn only_a_kept_terminal_record_answers_for_its_id() {
        use crate::tasks::model::TaskStatus;
        let decoded = Decoded::default();
        let mut r = record();
        let row = r.to_row().expect("encodes");
        decoded.wrote(Decoded::to_keep(&row, true), &r);
        assert_eq!(decoded.terminal("abc"), None, "input_required may change");
        for status in [
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ] {
            r.status = status;
            r.version += 1;
            let row = r.to_row().expect("encodes");
            decoded.wrote(Decoded::to_keep(&row, true), &r);
            assert_eq!(decoded.terminal("abc"), Some(r.clone()));
        }
        // Another id, in whatever slot: not this record.
        assert_eq!(decoded.terminal("abd"), None);
        r.status = TaskStatus::Working;
        r.version += 1;
        let row = r.to_row().expect("encodes");
        assert_eq!(decoded.decode(&row), Some(r));
        assert_eq!(
            decoded.terminal("abc"),
            None,
            "a newer row read replaces it"
        );
    }

    #[test]
    fn rows_past_the_bound_are_not_kept() {
        let mut r = record();
        r.message = Some("m".repeat(MAX_KEPT_BYTES).into());
        let row = r.to_row().expect("encodes");
        assert!(row.data.len() > MAX_KEPT_BYTES);
        assert!(Decoded::to_keep(&row, true).is_none());
        let decoded = Decoded::default();
        assert_eq!(decoded.decode(&row), Some(r));
        assert!(decoded.slot(&row.id).is_none(), "decoded, not kept");
        // At the bound it is kept.
        let mut at = record();
        at.message = Some(String::new().into());
        let base = at.to_row().expect("encodes").data.len();
        at.message = Some("m".repeat(MAX_KEPT_BYTES - base).into());
        let row = at.to_row().expect("encodes");
        assert_eq!(row.data.len(), MAX_KEPT_BYTES);
        assert!(Decoded::to_keep(&row, true).is_some());
    }

    #[test]
    fn a_row_that_left_out_arguments_is_not_kept_as_written() {
        // Arguments too large for a record's output limits are left out of its row.
        let mut r = record();
        let big = "a".repeat(JsonLimits::MAX_STRING_UNITS_CEILING + 1);
        r.arguments = tollgate_json::JsonObject::builder()
            .insert("big", big)
            .build();
        let (row, whole) = r.encode().expect("encodes");
        assert!(!whole);
        assert!(Decoded::to_keep(&row, whole).is_none());
        let decoded = Decoded::default();
        decoded.wrote(Decoded::to_keep(&row, whole), &r);
        let read = decoded.decode(&row).expect("decodes");
        assert!(read.arguments.is_empty());
        // With arguments that fit, the row is whole and decodes to its record.
        r.arguments = tollgate_json::JsonObject::builder().insert("a", 1).build();
        let (row, whole) = r.encode().expect("encodes");
        assert!(whole);
        assert_eq!(TaskRecord::from_row(&row), Some(r));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// What a kept written row answers is what decoding it gives, for any record: any text
        /// (controls, quotes, astral characters), any number, nested input requests, answers.
        #[test]
        fn a_written_row_decodes_to_its_record(
            owner in "[\\PC\\n\\t\\x01\"\\\\]{0,40}",
            message in proptest::option::of("[\\PC\\n\\t\\x01\"\\\\]{0,60}"),
            result in proptest::option::of("[\\PC\\n\\t\\x01\"\\\\]{0,60}"),
            numbers in proptest::array::uniform6(proptest::num::u64::ANY),
            keys in proptest::collection::vec("[a-z\"\\\\\\n\u{1}é]{1,8}", 0..4),
            depth in 0usize..6,
            typed in proptest::bool::ANY,
        ) {
            let mut r = record();
            r.owner = owner.into();
            r.message = message.map(Into::into);
            r.result = result.map(Into::into);
            r.version = numbers[0];
            r.created_ms = numbers[1] / 2;
            r.ttl_ms = numbers[2] / 2;
            r.updated_ms = numbers[3];
            r.poll_ms = numbers[4];
            r.lease_ms = numbers[5];
            r.typed = typed;
            let mut nested = tollgate_json::from_str("-1.50e-3", &JsonLimits::default()).expect("a number");
            for _ in 0..depth {
                nested = tollgate_json::JsonObject::builder().insert("n", nested).build().into();
            }
            let mut requests = tollgate_json::JsonObject::builder();
            for key in &keys {
                requests.push(key.as_str(), nested.clone());
            }
            r.requests = requests.build();
            r.responses = r.requests.clone();
            r.asked = keys.iter().map(|k| tollgate_json::JsonValue::from(k.as_str())).collect();
            r.arguments = tollgate_json::JsonObject::builder().insert("q", keys.concat()).build();
            let (row, whole) = r.encode().expect("encodes");
            proptest::prop_assert!(whole);
            proptest::prop_assert_eq!(TaskRecord::from_row(&row), Some(r.clone()));
            let decoded = Decoded::default();
            decoded.wrote(Decoded::to_keep(&row, whole), &r);
            proptest::prop_assert_eq!(decoded.decode(&row), Some(r));
        }
    }
}
