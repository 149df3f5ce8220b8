//! Exact decimal numbers: the spelling as written, value equality regardless of scale, and checked
//! conversions that never expand an exponent into digits.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::error::{Error, ErrorKind};

/// Exponents with more significant digits than this are refused (`1e` followed by 19 digits or
/// more), so every exponent and every derived decimal-point position fits an `i64` exactly.
const MAX_EXPONENT_DIGITS: usize = 18;

/// A JSON number with its exact decimal value and its original spelling.
///
/// Equality, ordering and hashing follow the numeric value: `1`, `1.0`, `1E+0` and `10e-1` are
/// equal and hash equal. None of these operations expands an exponent: `1e999999999` costs as
/// little as `1`. [`Display`](fmt::Display) writes the original spelling.
///
/// # Examples
///
/// ```
/// use tollgate_json::JsonNumber;
///
/// let a = JsonNumber::parse("10e-1").unwrap();
/// let b = JsonNumber::from(1);
/// assert_eq!(a, b);
/// assert_eq!(a.to_string(), "10e-1");
/// assert_eq!(a.to_i64(), Some(1));
///
/// let huge = JsonNumber::parse("1e999999999").unwrap();
/// assert!(huge.is_integer());
/// assert_eq!(huge.integer_spelling_len(), Some(1_000_000_000));
/// assert_eq!(huge.to_i64(), None);
/// ```
#[derive(Clone)]
pub struct JsonNumber(Repr);

#[derive(Clone)]
enum Repr {
    /// An integer whose spelling is exactly its canonical decimal form (so never `-0`).
    Int(i64),
    /// Anything else, kept as spelled.
    Decimal(Arc<Decimal>),
}

struct Decimal {
    spelling: Box<str>,
    negative: bool,
    /// Byte range in `spelling` from the first to just past the last nonzero digit. It may contain
    /// one `.`, which is skipped. Empty when the value is zero.
    sig_start: u32,
    sig_end: u32,
    /// Count of significant digits.
    sig_len: u32,
    /// Decimal point position: the value is `0.d1d2…dn × 10^point`.
    point: i64,
}

/// The value of a number in canonical scientific form, borrowed for comparison and hashing.
struct Canon<'a> {
    negative: bool,
    /// Significant digits as ASCII, possibly with one `.` to skip; empty for zero.
    digits: &'a [u8],
    len: u32,
    point: i64,
}

impl Canon<'_> {
    fn is_zero(&self) -> bool {
        self.len == 0
    }
    fn digits(&self) -> impl Iterator<Item = u8> + '_ {
        self.digits.iter().copied().filter(|&b| b != b'.')
    }
    fn signum(&self) -> i8 {
        match (self.is_zero(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }
}

impl JsonNumber {
    /// Parses a number spelled in the JSON grammar, with nothing before or after it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidNumber`] when `text` is not a JSON number, and
    /// [`ErrorKind::NumberExponentLimit`] when its exponent has more than 18 significant digits.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bytes = text.as_bytes();
        match scan(bytes, 0) {
            Ok(end) if end == bytes.len() => from_valid_spelling(text, 0),
            Ok(end) => Err(Error::new(ErrorKind::InvalidNumber, end)),
            Err(e) => Err(e),
        }
    }

    /// Converts a finite `f64` to the shortest spelling that reads back as the same `f64`.
    /// Returns `None` for NaN and the infinities, which JSON cannot spell.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate_json::JsonNumber;
    /// assert_eq!(JsonNumber::from_f64(0.1).unwrap().to_string(), "0.1");
    /// assert!(JsonNumber::from_f64(f64::NAN).is_none());
    /// ```
    pub fn from_f64(value: f64) -> Option<Self> {
        if !value.is_finite() {
            return None;
        }
        // `Debug` prints the shortest round-trip form, switching to exponent notation for very
        // large and very small magnitudes; every such spelling is a valid JSON number.
        let text = format!("{value:?}");
        Self::parse(&text).ok()
    }

    fn canon<'a>(&'a self, buf: &'a mut [u8; 20]) -> Canon<'a> {
        match &self.0 {
            Repr::Int(v) => {
                let negative = *v < 0;
                let mut n = v.unsigned_abs();
                if n == 0 {
                    return Canon {
                        negative: false,
                        digits: &[],
                        len: 0,
                        point: 0,
                    };
                }
                let mut i = buf.len();
                while n > 0 {
                    i -= 1;
                    buf[i] = b'0' + (n % 10) as u8;
                    n /= 10;
                }
                let point = (buf.len() - i) as i64;
                let mut end = buf.len();
                while end > i && buf[end - 1] == b'0' {
                    end -= 1;
                }
                Canon {
                    negative,
                    digits: &buf[i..end],
                    len: (end - i) as u32,
                    point,
                }
            }
            Repr::Decimal(d) => Canon {
                negative: d.negative,
                digits: &d.spelling.as_bytes()[d.sig_start as usize..d.sig_end as usize],
                len: d.sig_len,
                point: d.point,
            },
        }
    }

    /// Whether the value has no fractional part (`1.0` and `1e3` are integers; `1.5` is not).
    pub fn is_integer(&self) -> bool {
        match &self.0 {
            Repr::Int(_) => true,
            Repr::Decimal(d) => d.sig_len == 0 || d.point >= i64::from(d.sig_len),
        }
    }

    fn signum(&self) -> i8 {
        match &self.0 {
            Repr::Int(v) => v.signum() as i8,
            Repr::Decimal(d) if d.sig_len == 0 => 0,
            Repr::Decimal(d) if d.negative => -1,
            Repr::Decimal(_) => 1,
        }
    }

    /// Whether the value is zero (`0`, `-0`, `0.0e5`).
    pub fn is_zero(&self) -> bool {
        match &self.0 {
            Repr::Int(v) => *v == 0,
            Repr::Decimal(d) => d.sig_len == 0,
        }
    }

    /// Whether the value is below zero (`-0` is not).
    pub fn is_negative(&self) -> bool {
        match &self.0 {
            Repr::Int(v) => *v < 0,
            Repr::Decimal(d) => d.negative && d.sig_len > 0,
        }
    }

    /// For an integer value, the number of characters of its expanded decimal spelling, a minus
    /// sign counted (`-120` → 4, `1e3` → 4, `-0` → 1); `None` when the value is not an integer.
    /// Nothing is allocated or expanded.
    pub fn integer_spelling_len(&self) -> Option<u64> {
        if !self.is_integer() {
            return None;
        }
        let mut buf = [0u8; 20];
        let c = self.canon(&mut buf);
        if c.is_zero() {
            return Some(1);
        }
        // For a nonzero integer `point` is its digit count, which is at least 1.
        let digits = u64::try_from(c.point).ok()?;
        Some(digits + u64::from(c.negative))
    }

    /// For an integer value whose expanded spelling has at most `max` characters (see
    /// [`integer_spelling_len`](Self::integer_spelling_len)), that spelling: `1e3` → `"1000"`,
    /// `-12.0` → `"-12"`. `None` for a non-integer or a longer spelling, decided before
    /// anything is expanded.
    pub fn integer_digits(&self, max: u64) -> Option<String> {
        let len = self.integer_spelling_len()?;
        if len > max {
            return None;
        }
        let mut buf = [0u8; 20];
        let c = self.canon(&mut buf);
        if c.is_zero() {
            return Some("0".to_owned());
        }
        let mut out = String::with_capacity(usize::try_from(len).ok()?);
        if c.negative {
            out.push('-');
        }
        for d in c.digits() {
            out.push(char::from(d));
        }
        for _ in 0..(c.point - i64::from(c.len)) {
            out.push('0');
        }
        Some(out)
    }

    /// The magnitude as a `u128` when the value is an integer that fits.
    fn magnitude_u128(&self) -> Option<(bool, u128)> {
        if !self.is_integer() {
            return None;
        }
        let mut buf = [0u8; 20];
        let c = self.canon(&mut buf);
        if c.is_zero() {
            return Some((false, 0));
        }
        if c.point > 39 {
            return None;
        }
        let mut m: u128 = 0;
        for d in c.digits() {
            m = m.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
        }
        for _ in 0..(c.point - i64::from(c.len)) {
            m = m.checked_mul(10)?;
        }
        Some((c.negative, m))
    }

    /// The exact value as an `i64`, if it is an integer in range (`1.0` → 1, `1.5` → `None`).
    pub fn to_i64(&self) -> Option<i64> {
        if let Repr::Int(v) = self.0 {
            return Some(v);
        }
        i64::try_from(self.to_i128()?).ok()
    }

    /// The exact value as a `u64`, if it is a nonnegative integer in range.
    pub fn to_u64(&self) -> Option<u64> {
        u64::try_from(self.to_u128()?).ok()
    }

    /// The exact value as an `i128`, if it is an integer in range.
    pub fn to_i128(&self) -> Option<i128> {
        if let Repr::Int(v) = self.0 {
            return Some(i128::from(v));
        }
        let (negative, m) = self.magnitude_u128()?;
        if negative {
            if m == 1u128 << 127 {
                Some(i128::MIN)
            } else {
                i128::try_from(m).ok().map(|v| -v)
            }
        } else {
            i128::try_from(m).ok()
        }
    }

    /// The exact value as a `u128`, if it is a nonnegative integer in range.
    pub fn to_u128(&self) -> Option<u128> {
        match self.magnitude_u128()? {
            (true, m) if m != 0 => None,
            (_, m) => Some(m),
        }
    }

    /// The nearest `f64`, or `None` when the magnitude is beyond `f64`'s range. Values that
    /// underflow round to zero, as IEEE 754 rounding does.
    pub fn to_f64(&self) -> Option<f64> {
        let value = match &self.0 {
            Repr::Int(v) => *v as f64,
            Repr::Decimal(d) => d.spelling.parse::<f64>().ok()?,
        };
        value.is_finite().then_some(value)
    }

    /// Compares two numbers by value, exactly.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use tollgate_json::JsonNumber;
    /// let a = JsonNumber::parse("0.30000000000000000001").unwrap();
    /// let b = JsonNumber::parse("3e-1").unwrap();
    /// assert_eq!(a.cmp_value(&b), Ordering::Greater);
    /// ```
    pub fn cmp_value(&self, other: &Self) -> Ordering {
        if let (Repr::Int(a), Repr::Int(b)) = (&self.0, &other.0) {
            return a.cmp(b);
        }
        // Different signs (or two zeros) settle it without looking at digits.
        let (sa, sb) = (self.signum(), other.signum());
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let (mut ba, mut bb) = ([0u8; 20], [0u8; 20]);
        let (a, b) = (self.canon(&mut ba), other.canon(&mut bb));
        let (sa, sb) = (a.signum(), b.signum());
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let magnitude = a
            .point
            .cmp(&b.point)
            .then_with(|| a.digits().cmp(b.digits()));
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    pub(crate) fn write_spelling(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::Int(v) => {
                let mut buf = [0u8; 20];
                out.extend_from_slice(format_i64(*v, &mut buf));
            }
            Repr::Decimal(d) => out.extend_from_slice(d.spelling.as_bytes()),
        }
    }

    /// The byte length of the spelling written by [`Display`](fmt::Display).
    pub fn spelling_len(&self) -> usize {
        match &self.0 {
            Repr::Int(v) => {
                let mut buf = [0u8; 20];
                format_i64(*v, &mut buf).len()
            }
            Repr::Decimal(d) => d.spelling.len(),
        }
    }
}

/// Formats an `i64` in decimal into the end of `buf`, returning the written slice.
fn format_i64(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Checks the JSON number grammar from `start`, returning the end offset.
pub(crate) fn scan(bytes: &[u8], start: usize) -> Result<usize, Error> {
    let mut i = start;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while matches!(bytes.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return Err(Error::new(ErrorKind::InvalidNumber, i)),
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
            return Err(Error::new(ErrorKind::InvalidNumber, i));
        }
        while matches!(bytes.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
            return Err(Error::new(ErrorKind::InvalidNumber, i));
        }
        while matches!(bytes.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    Ok(i)
}

/// Builds a number from a spelling already checked by [`scan`]. `offset` positions errors.
pub(crate) fn from_valid_spelling(text: &str, offset: usize) -> Result<JsonNumber, Error> {
    let b = text.as_bytes();
    // Fast path: a plain integer of at most 18 digits, spelled canonically.
    let digits_start = usize::from(b.first() == Some(&b'-'));
    let plain = b[digits_start..].iter().all(u8::is_ascii_digit);
    if plain && b.len() - digits_start <= 18 && text != "-0" {
        let mut v: i64 = 0;
        for &d in &b[digits_start..] {
            v = v * 10 + i64::from(d - b'0');
        }
        return Ok(JsonNumber(Repr::Int(if digits_start == 1 {
            -v
        } else {
            v
        })));
    }
    let negative = digits_start == 1;
    let mantissa_end = b
        .iter()
        .position(|&c| c == b'e' || c == b'E')
        .unwrap_or(b.len());
    let exponent = if mantissa_end < b.len() {
        parse_exponent(&b[mantissa_end + 1..], offset + mantissa_end + 1)?
    } else {
        0
    };
    let mantissa = &b[digits_start..mantissa_end];
    let int_len = mantissa
        .iter()
        .position(|&c| c == b'.')
        .unwrap_or(mantissa.len());
    let Some(first) = mantissa.iter().position(|&c| matches!(c, b'1'..=b'9')) else {
        return Ok(JsonNumber(Repr::Decimal(Arc::new(Decimal {
            spelling: text.into(),
            negative,
            sig_start: 0,
            sig_end: 0,
            sig_len: 0,
            point: 0,
        }))));
    };
    let last = mantissa
        .iter()
        .rposition(|&c| matches!(c, b'1'..=b'9'))
        .unwrap_or(first);
    // Position of the decimal point relative to the first significant digit.
    let point_base: i64 = if first < int_len {
        (int_len - first) as i64
    } else {
        -((first - int_len - 1) as i64)
    };
    let dot_inside = first < int_len && last > int_len;
    let sig_len = (last - first + 1 - usize::from(dot_inside)) as u32;
    let point = point_base
        .checked_add(exponent)
        .ok_or(Error::new(ErrorKind::NumberExponentLimit, offset))?;
    let to_u32 =
        |v: usize| u32::try_from(v).map_err(|_| Error::new(ErrorKind::InputTooLarge, offset));
    Ok(JsonNumber(Repr::Decimal(Arc::new(Decimal {
        spelling: text.into(),
        negative,
        sig_start: to_u32(digits_start + first)?,
        sig_end: to_u32(digits_start + last + 1)?,
        sig_len,
        point,
    }))))
}

fn parse_exponent(b: &[u8], offset: usize) -> Result<i64, Error> {
    let (negative, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let significant = digits
        .iter()
        .position(|&d| d != b'0')
        .map_or(&digits[digits.len()..], |p| &digits[p..]);
    if significant.len() > MAX_EXPONENT_DIGITS {
        return Err(Error::new(ErrorKind::NumberExponentLimit, offset));
    }
    let mut v: i64 = 0;
    for &d in significant {
        v = v * 10 + i64::from(d - b'0');
    }
    Ok(if negative { -v } else { v })
}

impl PartialEq for JsonNumber {
    fn eq(&self, other: &Self) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }
}

impl Eq for JsonNumber {}

impl PartialOrd for JsonNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for JsonNumber {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_value(other)
    }
}

impl Hash for JsonNumber {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut buf = [0u8; 20];
        let c = self.canon(&mut buf);
        if c.is_zero() {
            state.write_u8(0);
            return;
        }
        state.write_u8(if c.negative { 2 } else { 1 });
        state.write_i64(c.point);
        state.write_u32(c.len);
        // Fold digits into words so the hash does not depend on where a '.' sat in the spelling.
        let (mut word, mut n) = (0u64, 0);
        for d in c.digits() {
            word = word * 10 + u64::from(d - b'0');
            n += 1;
            if n == 18 {
                state.write_u64(word);
                word = 0;
                n = 0;
            }
        }
        if n > 0 {
            state.write_u64(word);
        }
    }
}

impl fmt::Display for JsonNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Int(v) => write!(f, "{v}"),
            Repr::Decimal(d) => f.write_str(&d.spelling),
        }
    }
}

impl fmt::Debug for JsonNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonNumber({self})")
    }
}

macro_rules! from_small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for JsonNumber {
            fn from(v: $t) -> Self {
                Self(Repr::Int(i64::from(v)))
            }
        }
    )*};
}
from_small_int!(i8, i16, i32, i64, u8, u16, u32);

macro_rules! from_wide_int {
    ($($t:ty),*) => {$(
        impl From<$t> for JsonNumber {
            fn from(v: $t) -> Self {
                match i64::try_from(v) {
                    Ok(small) => Self(Repr::Int(small)),
                    Err(_) => wide(&v.to_string()),
                }
            }
        }
    )*};
}
from_wide_int!(u64, i128, u128, isize, usize);

fn wide(text: &str) -> JsonNumber {
    match from_valid_spelling(text, 0) {
        Ok(n) => n,
        // A decimal integer's spelling is always a valid JSON number with no exponent.
        Err(_) => JsonNumber(Repr::Int(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn n(s: &str) -> JsonNumber {
        JsonNumber::parse(s).unwrap()
    }
    fn h(v: &JsonNumber) -> u64 {
        let mut s = DefaultHasher::new();
        v.hash(&mut s);
        s.finish()
    }

    #[test]
    fn equal_regardless_of_scale() {
        let group = [
            "1", "1.0", "1E+0", "10e-1", "0.1e1", "1.000", "100e-2", "0.01E2",
        ];
        for a in group {
            for b in group {
                assert_eq!(n(a), n(b), "{a} vs {b}");
                assert_eq!(h(&n(a)), h(&n(b)), "{a} vs {b}");
            }
        }
        assert_eq!(n("-0"), n("0"));
        assert_eq!(n("0.0e99"), n("-0.000"));
        assert_eq!(h(&n("-0")), h(&n("0")));
        assert_eq!(n("120"), n("1.2e2"));
        assert_eq!(h(&n("120")), h(&n("1.2e2")));
        assert_ne!(n("120"), n("12"));
        assert_ne!(n("-1"), n("1"));
    }

    #[test]
    fn ordering_is_exact() {
        assert!(n("0.30000000000000000001") > n("0.3"));
        assert!(n("-2") < n("-1.5"));
        assert!(n("1e999999999") > n("9e999999998"));
        assert!(n("-1e999999999") < n("1"));
        assert!(n("1e-999999999") > n("0"));
        assert!(n("99999999999999999999") > n("9223372036854775807"));
        assert_eq!(n("5").cmp(&n("5.00")), Ordering::Equal);
    }

    #[test]
    fn integer_questions_without_expansion() {
        assert!(n("1.0").is_integer());
        assert!(n("1e3").is_integer());
        assert!(!n("1.5").is_integer());
        assert!(!n("1e-1").is_integer());
        assert!(n("-0").is_integer());
        assert_eq!(n("-120").integer_spelling_len(), Some(4));
        assert_eq!(n("1e3").integer_spelling_len(), Some(4));
        assert_eq!(n("-0").integer_spelling_len(), Some(1));
        assert_eq!(n("0.0").integer_spelling_len(), Some(1));
        assert_eq!(n("-1e9999").integer_spelling_len(), Some(10_001));
        assert_eq!(n("1.5").integer_spelling_len(), None);
    }

    #[test]
    fn checked_conversions() {
        assert_eq!(n("9223372036854775807").to_i64(), Some(i64::MAX));
        assert_eq!(n("9223372036854775808").to_i64(), None);
        assert_eq!(n("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(n("9223372036854775808").to_u64(), Some(1 << 63));
        assert_eq!(n("-1").to_u64(), None);
        assert_eq!(n("-0").to_u64(), Some(0));
        assert_eq!(n("1.0").to_i64(), Some(1));
        assert_eq!(n("1.5").to_i64(), None);
        assert_eq!(n("1e9999").to_i64(), None);
        assert_eq!(
            n("-170141183460469231731687303715884105728").to_i128(),
            Some(i128::MIN)
        );
        assert_eq!(
            n("340282366920938463463374607431768211455").to_u128(),
            Some(u128::MAX)
        );
        assert_eq!(n("340282366920938463463374607431768211456").to_u128(), None);
        assert_eq!(n("1.5").to_f64(), Some(1.5));
        assert_eq!(n("1e400").to_f64(), None);
        assert_eq!(n("1e-400").to_f64(), Some(0.0));
    }

    #[test]
    fn spelling_is_kept() {
        for s in [
            "-0",
            "1.0",
            "1E+0",
            "0.000",
            "12345678901234567890",
            "-5e-3",
        ] {
            assert_eq!(n(s).to_string(), s);
        }
        assert_eq!(
            JsonNumber::from(u64::MAX).to_string(),
            "18446744073709551615"
        );
        assert_eq!(JsonNumber::from(u64::MAX).to_u64(), Some(u64::MAX));
    }

    #[test]
    fn grammar_and_exponent_bound() {
        for bad in [
            "", "-", "01", "1.", ".1", "1e", "+1", "1e+", "NaN", "0x1", "1 ",
        ] {
            assert_eq!(
                JsonNumber::parse(bad).unwrap_err().kind(),
                ErrorKind::InvalidNumber,
                "{bad:?}"
            );
        }
        assert!(JsonNumber::parse("1e999999999999999999").is_ok());
        assert!(JsonNumber::parse("1e000000000000999999999999999999").is_ok());
        assert_eq!(
            JsonNumber::parse("1e1000000000000000000")
                .unwrap_err()
                .kind(),
            ErrorKind::NumberExponentLimit
        );
    }

    #[test]
    fn integer_digits_expand_exactly_within_the_bound() {
        let d = |t: &str, max: u64| {
            JsonNumber::parse(t)
                .ok()
                .and_then(|n| n.integer_digits(max))
        };
        assert_eq!(d("1e3", 10).as_deref(), Some("1000"));
        assert_eq!(d("-12.0", 10).as_deref(), Some("-12"));
        assert_eq!(d("0e99", 10).as_deref(), Some("0"));
        assert_eq!(d("120e-1", 10).as_deref(), Some("12"));
        assert_eq!(d("1e1023", 1024).map(|s| s.len()), Some(1024));
        assert_eq!(d("1e1024", 1024), None);
        assert_eq!(d("1e999999999", 1024), None);
        assert_eq!(d("1.5", 10), None);
    }

    #[test]
    fn from_f64_round_trips() {
        for v in [0.1, 1.0, -2.5, 1e300, 5e-324, 123456789.0, -0.0] {
            assert_eq!(JsonNumber::from_f64(v).unwrap().to_f64(), Some(v));
        }
    }
}
