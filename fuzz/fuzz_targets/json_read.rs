//! The JSON reader on arbitrary bytes, with a round-trip oracle: whatever it accepts, the writer
//! writes and the reader reads back as the identical tree (same member order, same number
//! spellings), and writing that tree again gives the same bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate_json::{JsonLimits, OutputLimits, from_slice, to_vec};


fuzz_target!(|data: &[u8]| {
    let limits = JsonLimits::default();
    let Ok(value) = from_slice(data, &limits) else {
        return;
    };
    // Every string that was read fits the input ceilings, and an escaped spelling is at most six
    // times its characters; raise the output ceilings so only a real defect fails the write.
    let out = OutputLimits::default()
        .with_max_output_bytes(OutputLimits::MAX_OUTPUT_BYTES_CEILING)
        .and_then(|o| o.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING))
        .expect("valid output limits");
    let written = to_vec(&value, &out).expect("an accepted tree can be written");
    let back = from_slice(&written, &limits).expect("written output reads back");
    assert!(value.is_identical(&back), "round trip changed the tree");
    assert_eq!(value, back);
    let again = to_vec(&back, &out).expect("second write");
    assert_eq!(written, again, "writing is not deterministic");
});
