//! RFC 6570 Level 1 URI templates, bounded: the parser (failing closed on anything past
//! Level 1, with limits on length, variables and names) and the matcher (no regex engine; a
//! fixed work budget), with the bounds they enforce. Knows nothing of registrations.

use std::sync::Arc;

/// The longest URI template source, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 8_192;
/// The most variables in one URI template.
pub const MAX_TEMPLATE_VARIABLES: usize = 32;
/// The longest variable name, in bytes.
pub const MAX_VARIABLE_NAME_BYTES: usize = 128;
/// The most URI templates on one endpoint.
pub const MAX_TEMPLATES_PER_ENDPOINT: usize = 256;
/// The longest URI a read may route through a template, in bytes.
pub const MAX_TEMPLATE_ROUTED_URI_BYTES: usize = 65_535;
/// The matching work one read may spend across every template, in steps.
pub(crate) const MATCH_BUDGET: usize = 8_388_608;

/// One part of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(Box<str>),
    Variable(Arc<str>),
}

/// A parsed RFC 6570 Level 1 template.
#[derive(Debug)]
pub(crate) struct UriTemplate {
    pub(crate) source: Arc<str>,
    parts: Vec<Part>,
}

/// Characters a Level 1 expansion leaves as they are (RFC 3986 unreserved).
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Literal characters RFC 6570 allows outside expressions (ASCII only here).
pub(crate) fn is_literal(b: u8) -> bool {
    matches!(b, 0x21 | 0x23 | 0x24 | 0x26 | 0x28..=0x3B | 0x3D | 0x3F..=0x5B | 0x5D | 0x5F | 0x61..=0x7A | 0x7E)
}

impl UriTemplate {
    pub(crate) fn parse(source: &Arc<str>) -> Option<Self> {
        if source.is_empty() || source.len() > MAX_TEMPLATE_BYTES {
            return None;
        }
        let bytes = source.as_bytes();
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut names: Vec<Arc<str>> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => {
                    let end = i + 1 + bytes.get(i + 1..)?.iter().position(|b| *b == b'}')?;
                    let name = source.get(i + 1..end)?;
                    let valid = !name.is_empty()
                        && name.len() <= MAX_VARIABLE_NAME_BYTES
                        && !name.starts_with('.')
                        && !name.ends_with('.')
                        && !name.contains("..")
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
                    if !valid || names.iter().any(|n| &**n == name) {
                        return None;
                    }
                    if literal.is_empty() && matches!(parts.last(), Some(Part::Variable(_))) {
                        // `{a}{b}`: where one ends and the next begins is undecidable.
                        return None;
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal).into_boxed_str()));
                    }
                    let name: Arc<str> = Arc::from(name);
                    names.push(name.clone());
                    parts.push(Part::Variable(name));
                    if names.len() > MAX_TEMPLATE_VARIABLES {
                        return None;
                    }
                    i = end + 1;
                }
                b'%' => {
                    let hex = bytes.get(i + 1..i + 3)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    literal.push_str(source.get(i..i + 3)?);
                    i += 3;
                }
                b if is_literal(b) => {
                    literal.push(char::from(b));
                    i += 1;
                }
                _ => return None,
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal.into_boxed_str()));
        }
        // A template must be an absolute URI template: it starts with a scheme.
        match parts.first() {
            Some(Part::Literal(l))
                if l.split_once(':')
                    .is_some_and(|(s, _)| crate::wire::syntax::is_scheme(s)) => {}
            _ => return None,
        }
        Some(Self {
            source: source.clone(),
            parts,
        })
    }

    /// Whether `name` is one of its variables.
    pub(crate) fn has_variable(&self, name: &str) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::Variable(v) if &**v == name))
    }

    /// The variables if `uri` is one of this template's expansions, each non-empty and
    /// percent-decoded to UTF-8. `budget` counts the steps spent; past it nothing matches.
    pub(crate) fn matches(
        &self,
        uri: &str,
        budget: &mut usize,
    ) -> Option<Vec<(Arc<str>, Arc<str>)>> {
        let mut spans = Vec::with_capacity(self.parts.len());
        if !self.match_from(0, uri.as_bytes(), 0, &mut spans, budget) {
            return None;
        }
        let mut variables = Vec::new();
        for (part, (start, end)) in self.parts.iter().zip(spans) {
            if let Part::Variable(name) = part {
                let decoded = percent_decode(uri.get(start..end)?)?;
                variables.push((name.clone(), Arc::from(decoded)));
            }
        }
        Some(variables)
    }

    fn match_from(
        &self,
        index: usize,
        uri: &[u8],
        pos: usize,
        spans: &mut Vec<(usize, usize)>,
        budget: &mut usize,
    ) -> bool {
        *budget = budget.saturating_sub(1);
        if *budget == 0 {
            return false;
        }
        let Some(part) = self.parts.get(index) else {
            return pos == uri.len();
        };
        match part {
            Part::Literal(l) => {
                if uri.get(pos..pos + l.len()) != Some(l.as_bytes()) {
                    return false;
                }
                spans.push((pos, pos + l.len()));
                if self.match_from(index + 1, uri, pos + l.len(), spans, budget) {
                    return true;
                }
                spans.pop();
                false
            }
            Part::Variable(_) => {
                // The longest run an expansion can produce here: unreserved characters and
                // percent-encoded triplets.
                let mut ends = Vec::new();
                let mut end = pos;
                loop {
                    match uri.get(end) {
                        Some(b'%')
                            if uri
                                .get(end + 1..end + 3)
                                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
                        {
                            end += 3
                        }
                        Some(b) if is_unreserved(*b) => end += 1,
                        _ => break,
                    }
                    ends.push(end);
                    *budget = budget.saturating_sub(1);
                    if *budget == 0 {
                        return false;
                    }
                }
                // Longest first: a following literal made of unreserved characters still gets
                // its chance at every shorter split.
                for &end in ends.iter().rev() {
                    spans.push((pos, end));
                    if self.match_from(index + 1, uri, end, spans, budget) {
                        return true;
                    }
                    spans.pop();
                    if *budget == 0 {
                        return false;
                    }
                }
                false
            }
        }
    }
}

/// Parses `template` and matches `uri` against it under the read budget (the fuzz hook).
pub(crate) fn fuzz_match(template: &str, uri: &str) -> Option<Option<Vec<(String, String)>>> {
    let parsed = UriTemplate::parse(&Arc::from(template))?;
    let mut budget = MATCH_BUDGET;
    Some(parsed.matches(uri, &mut budget).map(|v| {
        v.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }))
}

pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Option<UriTemplate> {
        UriTemplate::parse(&Arc::from(s))
    }

    fn vars(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let mut budget = MATCH_BUDGET;
        parse(t)?.matches(uri, &mut budget).map(|v| {
            v.into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
    }

    #[test]
    fn level_one_only() {
        for ok in [
            "test://template/{id}/data",
            "file:///{path}",
            "https://example.com/{a}-{b}?q={q}",
            "urn:x:{a.b}",
            "test://a%20b/{x}",
        ] {
            assert!(parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "",
            "{id}",
            "noscheme/{id}",
            "test://{+path}",
            "test://{#frag}",
            "test://{a,b}",
            "test://{a*}",
            "test://{a:3}",
            "test://{}",
            "test://{a}{b}",
            "test://{a}/{a}",
            "test://{a",
            "test://a}",
            "test://a b/{x}",
            "test://%zz/{x}",
            "test://{.a}",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        let many: String = (0..=MAX_TEMPLATE_VARIABLES)
            .map(|i| format!("/{{v{i}}}"))
            .collect();
        assert!(parse(&format!("test:{many}")).is_none());
        let at_limit: String = (0..MAX_TEMPLATE_VARIABLES)
            .map(|i| format!("/{{v{i}}}"))
            .collect();
        assert!(parse(&format!("test:{at_limit}")).is_some());
        let long_name = "a".repeat(MAX_VARIABLE_NAME_BYTES);
        assert!(parse(&format!("test://{{{long_name}}}")).is_some());
        assert!(parse(&format!("test://{{{long_name}a}}")).is_none());
        let long = format!("test://{}", "a".repeat(MAX_TEMPLATE_BYTES - 7));
        assert_eq!(long.len(), MAX_TEMPLATE_BYTES);
        assert!(parse(&long).is_some());
        assert!(parse(&format!("{long}a")).is_none());
    }

    #[test]
    fn matching_decodes_variables_and_respects_separators() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            vars("test://t/{name}", "test://t/caf%C3%A9%2F"),
            Some(vec![("name".into(), "café/".into())])
        );
        assert_eq!(vars("test://t/{name}", "test://t/%FF"), None, "not UTF-8");
        // An unreserved separator: every split is tried.
        assert_eq!(
            vars("test://{a}-{b}.txt", "test://x-y-z.txt"),
            Some(vec![("a".into(), "x-y".into()), ("b".into(), "z".into())])
        );
    }

    #[test]
    fn matching_is_bounded() {
        // Worst case for backtracking: many unreserved separators and no final match.
        let template = parse("test://{a}-{b}-{c}-{d}-{e}!").unwrap_or_else(|| unreachable!());
        let uri = format!("test://{}", "-".repeat(60_000));
        let mut budget = MATCH_BUDGET;
        assert!(template.matches(&uri, &mut budget).is_none());
        assert_eq!(
            budget, 0,
            "the budget ran out instead of the search running on"
        );
    }
}
