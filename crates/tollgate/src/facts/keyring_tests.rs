//! Tests of the request-state key ring: its text form, every bound at and one past it, and that
//! no error or debug output holds a secret.

use super::*;

/// The hex spelling of a 32-byte secret with many distinct bytes, different for each `seed`.
fn hex_secret(seed: u8) -> String {
    (0u8..32)
        .map(|i| {
            format!(
                "{:02x}",
                i.wrapping_mul(37).wrapping_add(seed.wrapping_mul(101))
            )
        })
        .collect()
}

fn entries(n: usize) -> String {
    (0..n)
        .map(|i| format!("k{i}=hex:{}", hex_secret(u8::try_from(i).unwrap_or(0))))
        .collect::<Vec<_>>()
        .join(",")
}

fn detail(text: &str) -> Option<&'static str> {
    RequestStateKeyRing::parse(text)
        .err()
        .and_then(|e| e.detail())
}

#[test]
fn the_text_form_lists_the_sealing_key_first() {
    let text = format!(
        "# rotated 2026-12-05\n\n  k2 = hex:{} \n k1=base64:{} ,\n",
        hex_secret(2),
        crate::wire::syntax::base64_encode(&(32u8..64).collect::<Vec<_>>()),
    );
    let ring = RequestStateKeyRing::parse(&text).unwrap_or_else(|_| unreachable!());
    assert_eq!(ring.sealing_id(), "k2");
    assert_eq!(ring.ids().collect::<Vec<_>>(), ["k2", "k1"]);
    assert!(ring.get("k1").is_some() && ring.get("k3").is_none());
    assert_eq!(
        format!("{ring:?}"),
        r#"RequestStateKeyRing { sealing: "k2", opening: ["k1"] }"#
    );
    let one = RequestStateKeyRing::from(
        RequestStateKey::from_secret(&(0u8..32).collect::<Vec<_>>())
            .unwrap_or_else(|_| unreachable!()),
    );
    assert_eq!(one.sealing_id(), "default");
}

#[test]
fn at_most_sixteen_keys() {
    assert_eq!(
        RequestStateKeyRing::parse(&entries(16))
            .map(|r| r.ids().count())
            .ok(),
        Some(16)
    );
    assert_eq!(detail(&entries(17)), Some(DETAIL_TOO_MANY));
    assert_eq!(detail(""), Some(DETAIL_EMPTY));
    assert_eq!(detail("# only a comment\n\n"), Some(DETAIL_EMPTY));
}

#[test]
fn ids_are_short_and_plain_and_never_repeated() {
    let with_id = |id: &str| format!("{id}=hex:{}", hex_secret(1));
    assert!(RequestStateKeyRing::parse(&with_id(&"a".repeat(32))).is_ok());
    assert_eq!(detail(&with_id(&"a".repeat(33))), Some(DETAIL_ID));
    assert!(RequestStateKeyRing::parse(&with_id("Key-1_2.b")).is_ok());
    for bad in ["", "k 1", "k/1", "ké", "k:1"] {
        assert_eq!(detail(&with_id(bad)), Some(DETAIL_ID), "{bad:?}");
    }
    let twice = format!("a=hex:{},a=hex:{}", hex_secret(1), hex_secret(2));
    assert_eq!(detail(&twice), Some(DETAIL_DUPLICATE));
    let key = || RequestStateKey::from_secret(&(0u8..32).collect::<Vec<_>>());
    let ring = key()
        .and_then(|k| RequestStateKeyRing::new("a", k))
        .unwrap_or_else(|_| unreachable!());
    assert!(key().and_then(|k| ring.also_opening("a", k)).is_err());
    assert!(key().and_then(|k| RequestStateKeyRing::new("", k)).is_err());
}

#[test]
fn secrets_are_32_bytes_or_more_in_base64_or_hex() {
    // 32 bytes is the bound; 31 is refused.
    let bytes: Vec<u8> = (100u8..132).collect();
    let b64 = |b: &[u8]| format!("k=base64:{}", crate::wire::syntax::base64_encode(b));
    assert!(RequestStateKeyRing::parse(&b64(&bytes)).is_ok());
    assert_eq!(detail(&b64(&bytes[..31])), Some(DETAIL_WEAK));
    let hex = hex_secret(4);
    assert_eq!(detail(&format!("k=hex:{}", &hex[..62])), Some(DETAIL_WEAK));
    // Weak: one repeated byte.
    assert_eq!(
        detail(&format!("k=hex:{}", "ab".repeat(32))),
        Some(DETAIL_WEAK)
    );
    // Not base64 or hex, an odd number of hex digits, no prefix, no `=`.
    assert_eq!(detail("k=base64:***="), Some(DETAIL_ENCODING));
    assert_eq!(detail(&format!("k=hex:{}0", hex)), Some(DETAIL_ENCODING));
    assert_eq!(
        detail(&format!("k=hex:{}zz", &hex[..62])),
        Some(DETAIL_ENCODING)
    );
    assert_eq!(detail(&format!("k={hex}")), Some(DETAIL_ENTRY));
    assert_eq!(detail(&format!("k:hex:{hex}")), Some(DETAIL_ENTRY));
}

#[test]
fn errors_name_the_entry_and_never_the_secret() {
    let secret = "c0ffee".repeat(5);
    let text = format!("k1=hex:{},k2=hex:{secret}", hex_secret(1));
    let error = RequestStateKeyRing::parse(&text)
        .err()
        .unwrap_or_else(|| unreachable!());
    assert_eq!(error.location(), Some("entry 2"));
    // Entries are counted, not lines: comments and blank lines between them do not count.
    let spaced = format!(
        "# first\n\nk1=hex:{}\n# then\n\nk2=hex:{secret}",
        hex_secret(1)
    );
    let error = RequestStateKeyRing::parse(&spaced)
        .err()
        .unwrap_or_else(|| unreachable!());
    assert_eq!(error.location(), Some("entry 2"));
    for shown in [format!("{error}"), format!("{error:?}")] {
        assert!(!shown.contains(&secret), "{shown}");
        assert!(!shown.contains(&hex_secret(1)), "{shown}");
    }
}

#[test]
fn the_text_is_at_most_16_kib() {
    let entry = format!("k=hex:{}", hex_secret(1));
    let padded = |n: usize| format!("{}\n{entry}", "#".repeat(n - entry.len() - 1));
    let at = padded(MAX_REQUEST_STATE_KEYS_TEXT_BYTES);
    assert_eq!(at.len(), MAX_REQUEST_STATE_KEYS_TEXT_BYTES);
    assert!(RequestStateKeyRing::parse(&at).is_ok());
    assert_eq!(
        detail(&padded(MAX_REQUEST_STATE_KEYS_TEXT_BYTES + 1)),
        Some(DETAIL_TEXT)
    );
}

#[test]
fn from_a_file_and_the_environment() {
    let dir = std::env::temp_dir().join(format!("tollgate-keyring-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("keys");
    let _ = std::fs::write(
        &path,
        format!(
            "# keys\nk2=hex:{}\nk1=hex:{}\n",
            hex_secret(2),
            hex_secret(1)
        ),
    );
    let ring = RequestStateKeyRing::from_file(&path).unwrap_or_else(|_| unreachable!());
    assert_eq!(ring.ids().collect::<Vec<_>>(), ["k2", "k1"]);
    // At the bound, a file is read whole; one byte past it is refused.
    let entry = format!("k=hex:{}", hex_secret(1));
    let at = format!(
        "{}\n{entry}",
        "#".repeat(MAX_REQUEST_STATE_KEYS_TEXT_BYTES - entry.len() - 1)
    );
    let _ = std::fs::write(&path, &at);
    assert!(RequestStateKeyRing::from_file(&path).is_ok());
    // One byte past the bound is refused without reading further.
    let _ = std::fs::write(&path, vec![b'#'; MAX_REQUEST_STATE_KEYS_TEXT_BYTES + 1]);
    assert_eq!(
        RequestStateKeyRing::from_file(&path)
            .err()
            .and_then(|e| e.detail()),
        Some(DETAIL_TEXT)
    );
    let _ = std::fs::write(&path, [0xff, 0xfe]);
    assert_eq!(
        RequestStateKeyRing::from_file(&path)
            .err()
            .and_then(|e| e.detail()),
        Some(DETAIL_TEXT)
    );
    assert_eq!(
        RequestStateKeyRing::from_file(dir.join("missing"))
            .err()
            .and_then(|e| e.detail()),
        Some(DETAIL_FILE)
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        RequestStateKeyRing::from_env("TOLLGATE_TEST_KEYRING_NEVER_SET")
            .err()
            .and_then(|e| e.detail()),
        Some(DETAIL_UNSET)
    );
}

/// 32 bytes with many distinct values.
fn key_bytes() -> Vec<u8> {
    (0u8..32)
        .map(|i| i.wrapping_mul(37).wrapping_add(101))
        .collect()
}

#[test]
fn weak_secrets_are_refused() {
    assert!(RequestStateKey::from_secret(&[0u8; 32]).is_err());
    assert!(RequestStateKey::from_secret(&[0xffu8; 48]).is_err());
    let pattern: Vec<u8> = (0..64).map(|i| b"abcdefg"[i % 7]).collect();
    assert!(
        RequestStateKey::from_secret(&pattern).is_err(),
        "7 distinct bytes"
    );
    let eight: Vec<u8> = (0..64).map(|i| b"abcdefgh"[i % 8]).collect();
    assert!(
        RequestStateKey::from_secret(&eight).is_ok(),
        "8 distinct bytes"
    );
    assert!(
        RequestStateKey::from_secret(&key_bytes()[..31]).is_err(),
        "31 bytes"
    );
    assert!(
        RequestStateKey::from_secret(&key_bytes()).is_ok(),
        "32 bytes"
    );
}

#[test]
fn a_key_is_its_secret_or_the_digest_of_a_longer_one_and_clones_equal() {
    let exact = key_bytes();
    let key = RequestStateKey::from_secret(&exact).unwrap_or_else(|_| unreachable!());
    assert_eq!(&key.secret()[..], &exact[..]);
    assert_eq!(key.clone().secret(), key.secret());
    let long: Vec<u8> = (0u8..48).map(|i| i.wrapping_mul(53)).collect();
    let key = RequestStateKey::from_secret(&long).unwrap_or_else(|_| unreachable!());
    #[cfg(feature = "request-state")]
    {
        use sha2::Digest as _;
        assert_eq!(&key.secret()[..], &sha2::Sha256::digest(&long)[..]);
    }
    #[cfg(not(feature = "request-state"))]
    assert_eq!(&key.secret()[..], &long[..32]);
}
