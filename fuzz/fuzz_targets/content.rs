//! The content model's construction parsers on arbitrary text: media types, absolute URIs, icon
//! sizes, RFC 3339 timestamps and mirrored header values. Never a panic; an accepted value keeps
//! its spelling; an encoded mirrored value is plain visible ASCII.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate::json::JsonValue;
use tollgate::{
    content::{Annotations, Icon, ImageContent, ResourceLink}, tool::encode_mirrored_value,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(image) = ImageContent::new(b"x", text) {
        assert_eq!(image.mime_type(), text);
    }
    if let Ok(mut icon) = Icon::with_source(text) {
        assert_eq!(icon.src(), text);
        let before = icon.sizes().iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let sizes: Vec<&str> = text.split(',').collect();
        if icon.set_sizes(&sizes).is_err() {
            assert_eq!(icon.sizes(), before, "an invalid replacement keeps the previous sizes");
        }
        let _ = icon.set_mime_type(text);
    }
    let _ = ResourceLink::new(text, "n");
    let _ = Annotations::new().last_modified(text);
    if let Some(header) = encode_mirrored_value(&JsonValue::from(text)) {
        assert!(header.bytes().all(|b| (0x20..=0x7e).contains(&b)));
        assert!(!header.starts_with(' ') && !header.ends_with(' '));
    }
});
