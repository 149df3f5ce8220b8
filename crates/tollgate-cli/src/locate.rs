//! Finds where a JSON Pointer's value starts in a document's source text, so a schema error can
//! be reported by line and column. The text is already known to be valid JSON.

/// The byte offset of the value `pointer` names, or of the deepest ancestor found.
pub(crate) fn offset_of(text: &str, pointer: &str) -> usize {
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let bytes = text.as_bytes();
    let mut at = skip_ws(bytes, 0);
    for segment in &segments {
        match bytes.get(at) {
            Some(b'{') => match member(text, at, segment) {
                Some(next) => at = next,
                None => return at,
            },
            Some(b'[') => match segment
                .parse::<usize>()
                .ok()
                .and_then(|i| element(bytes, at, i))
            {
                Some(next) => at = next,
                None => return at,
            },
            _ => return at,
        }
    }
    at
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the string token starting at `i` (just past its closing quote).
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The end of the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            j
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

fn member(text: &str, object: usize, name: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, object + 1);
    while b.get(i) == Some(&b'"') {
        let key_end = string_end(b, i);
        let key = tollgate_json::from_str(&text[i..key_end], &tollgate_json::JsonLimits::default())
            .ok()?;
        let colon = skip_ws(b, key_end);
        let value = skip_ws(b, colon + 1);
        if key.as_str() == Some(name) {
            return Some(value);
        }
        i = skip_ws(b, value_end(b, value));
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    None
}

fn element(b: &[u8], array: usize, index: usize) -> Option<usize> {
    let mut i = skip_ws(b, array + 1);
    for _ in 0..index {
        if b.get(i) == Some(&b']') {
            return None;
        }
        i = skip_ws(b, value_end(b, i));
        if b.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(b, i + 1);
    }
    (b.get(i) != Some(&b']')).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_resolve_to_their_values() {
        let text = "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"a/b\": {\"pattern\": \"x\"},\n    \"q\": {\"anyOf\": [true, {\"not\": {}}]}\n  }\n}";
        assert_eq!(
            line_column(text, offset_of(text, "/properties/a~1b/pattern")),
            (4, 24)
        );
        assert_eq!(
            line_column(text, offset_of(text, "/properties/q/anyOf/1/not")),
            (5, 35)
        );
        assert_eq!(line_column(text, offset_of(text, "")), (1, 1));
        assert_eq!(line_column(text, offset_of(text, "/missing")), (1, 1));
    }
}
