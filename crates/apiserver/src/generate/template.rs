//! Templates: the JSON that every object of a class shares, with holes where each object's
//! own values go.
//!
//! Building an object through k8s-openapi's structs, and its managedFields and
//! last-applied annotation through `serde_json::Value` trees, costs about 100 µs and
//! hundreds of allocations per pod, more than an informer takes to decode it: a LIST
//! measured the generator as much as the informer. Objects of one class (one kind, one
//! shape, one app) differ only in values (names, UIDs, timestamps, hashes), never in which
//! fields they have or in the order of their keys. So the builder runs once per class on
//! values replaced by markers, the markers' places in its JSON split it into literal runs
//! and holes, and every object after that is its values written into the holes: the same
//! bytes, with a handful of allocations for the values themselves.
//!
//! A value that decides structure or key order cannot be a hole; it belongs to the class.
//! The property test in [`super`] holds the two paths to the same bytes.

use std::io::Write as _;
use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use k8s_openapi::jiff::Timestamp;
use prost::encoding::{encode_varint, encoded_len_varint};

use super::EPOCH;
use crate::protobuf::{self, Filled, HoleAs, Skeleton};

/// One value of one object, ready to write into its hole.
#[derive(Debug)]
pub(super) enum Slot {
    /// Written as is: text that JSON does not escape (names, hashes, numbers in strings).
    Text(String),
    /// Bytes written as base64, as a `ByteString` serializes.
    Base64(Vec<u8>),
    /// Seconds after [`EPOCH`], written as a `Time` serializes (RFC 3339, UTC).
    Time(i64),
    /// A JSON integer.
    Int(i64),
}

impl Slot {
    fn write(&self, buf: &mut Vec<u8>) {
        match self {
            Slot::Text(text) => {
                debug_assert!(
                    !text.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20),
                    "a text hole's value must need no JSON escaping: {text:?}"
                );
                buf.extend_from_slice(text.as_bytes());
            }
            Slot::Base64(bytes) => {
                let start = buf.len();
                buf.resize(
                    start + base64::encoded_len(bytes.len(), true).unwrap_or(0),
                    0,
                );
                let written = BASE64
                    .encode_slice(bytes, &mut buf[start..])
                    .expect("the buffer was sized for the encoding");
                buf.truncate(start + written);
            }
            Slot::Time(seconds) => write_time(buf, *seconds),
            Slot::Int(n) => buf.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        }
    }
}

/// One object's values, in marker order.
#[derive(Debug)]
pub(crate) struct Slots(Vec<Slot>);

impl protobuf::Values for Slots {
    fn len(&self, n: u32, how: HoleAs) -> usize {
        match (&self.0[n as usize], how) {
            (Slot::Text(text), _) => text.len(),
            (Slot::Base64(bytes), HoleAs::Bytes) => bytes.len(),
            (Slot::Base64(bytes), _) => base64::encoded_len(bytes.len(), true).unwrap_or(0),
            (Slot::Int(n), HoleAs::Varint) => encoded_len_varint(*n as u64),
            (Slot::Int(n), _) => itoa::Buffer::new().format(*n).len(),
            (Slot::Time(seconds), HoleAs::Varint) => encoded_len_varint((EPOCH + seconds) as u64),
            (slot @ Slot::Time(_), _) => {
                let mut text = Vec::with_capacity(32);
                slot.write(&mut text);
                text.len()
            }
        }
    }

    fn write(&self, n: u32, how: HoleAs, out: &mut Vec<u8>) {
        match (&self.0[n as usize], how) {
            (Slot::Base64(bytes), HoleAs::Bytes) => out.extend_from_slice(bytes),
            (Slot::Int(n), HoleAs::Varint) => encode_varint(*n as u64, out),
            (Slot::Time(seconds), HoleAs::Varint) => encode_varint((EPOCH + seconds) as u64, out),
            (slot, _) => slot.write(out),
        }
    }
}

/// Writes `seconds` after [`EPOCH`] as k8s-openapi's `Time` does: `%Y-%m-%dT%H:%M:%SZ`,
/// in UTC. Years 0 to 9999 (every timestamp a scenario makes, markers included) are
/// written here, digit by digit; jiff's formatter, which a test holds this to, takes the
/// rest.
fn write_time(buf: &mut Vec<u8>, seconds: i64) {
    let unix = EPOCH + seconds;
    let (days, second_of_day) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        let at = Timestamp::from_second(unix).expect("scenario timestamps are in range");
        write!(buf, "{}", at.strftime("%Y-%m-%dT%H:%M:%SZ")).expect("writing to a Vec cannot fail");
        return;
    }
    let two = |n: i64| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let [y0, y1] = two(year / 100);
    let [y2, y3] = two(year % 100);
    let [mo0, mo1] = two(month);
    let [d0, d1] = two(day);
    let [h0, h1] = two(second_of_day / 3600);
    let [mi0, mi1] = two(second_of_day / 60 % 60);
    let [s0, s1] = two(second_of_day % 60);
    buf.extend_from_slice(&[
        y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T', h0, h1, b':', mi0, mi1, b':', s0, s1,
        b'Z',
    ]);
}

/// The proleptic Gregorian (year, month, day) of a count of days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months counted from March, so that February's leap day comes last.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A per-object value (or a group of them) that fills holes of a template.
///
/// `marked` and `push` visit the same values in the same order: the `n`th marker handed
/// out is the `n`th slot pushed. [`holes!`] writes both for a struct of holes.
pub(super) trait Hole: Sized {
    /// The same shape of values, each replaced by a marker from `markers`.
    fn marked(&self, markers: &mut Markers) -> Self;
    /// Appends the values as slots, in marker order.
    fn into_slots(self, slots: &mut Vec<Slot>);
}

impl Hole for String {
    fn marked(&self, markers: &mut Markers) -> Self {
        markers.text()
    }
    fn into_slots(self, slots: &mut Vec<Slot>) {
        slots.push(Slot::Text(self));
    }
}

/// Bytes a `ByteString` carries (a Secret's values).
#[derive(Debug)]
pub(super) struct Base64(pub Vec<u8>);

impl Hole for Base64 {
    fn marked(&self, markers: &mut Markers) -> Self {
        Base64(markers.base64())
    }
    fn into_slots(self, slots: &mut Vec<Slot>) {
        slots.push(Slot::Base64(self.0));
    }
}

/// A timestamp, in seconds after [`EPOCH`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Seconds(pub i64);

impl Hole for Seconds {
    fn marked(&self, markers: &mut Markers) -> Self {
        Seconds(markers.time())
    }
    fn into_slots(self, slots: &mut Vec<Slot>) {
        slots.push(Slot::Time(self.0));
    }
}

/// A JSON integer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Int(pub i64);

impl Hole for Int {
    fn marked(&self, markers: &mut Markers) -> Self {
        Int(markers.int())
    }
    fn into_slots(self, slots: &mut Vec<Slot>) {
        slots.push(Slot::Int(self.0));
    }
}

impl<H: Hole> Hole for Vec<H> {
    fn marked(&self, markers: &mut Markers) -> Self {
        self.iter().map(|h| h.marked(markers)).collect()
    }
    fn into_slots(self, slots: &mut Vec<Slot>) {
        for h in self {
            h.into_slots(slots);
        }
    }
}

/// Declares a struct of holes and implements [`Hole`] for it, visiting the fields in
/// declaration order.
macro_rules! holes {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug)]
        $vis struct $name {
            $($(#[$field_meta])* $field: $ty,)*
        }

        impl $crate::generate::template::Hole for $name {
            fn marked(&self, markers: &mut $crate::generate::template::Markers) -> Self {
                // A struct expression evaluates its fields in the order written.
                $name { $($field: self.$field.marked(markers),)* }
            }
            fn into_slots(self, slots: &mut Vec<$crate::generate::template::Slot>) {
                $(self.$field.into_slots(slots);)*
            }
        }
    };
}
pub(super) use holes;

/// Hands out markers, one per hole, and remembers what kind each is.
///
/// A marker is what its hole's type turns into in JSON, unmistakable for anything a
/// builder writes itself:
/// - text: `§n§` (JSON leaves `§` as it is, also inside a string embedded in a string);
/// - base64: bytes whose encoding is `M4RK` and `n` in four base64 digits;
/// - time: `3000-01-01T` and `n` as the time of day;
/// - integer: 9·10^18 + `n`.
#[derive(Debug, Default)]
pub(super) struct Markers {
    kinds: Vec<Kind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Base64,
    Time,
    Int,
}

const TEXT_MARK: &str = "\u{a7}";
const BASE64_MARK: &[u8] = b"M4RK";
/// The bytes `M4RK` decodes to: how a base64 marker starts in a bytes field.
const BASE64_MARK_BYTES: [u8; 3] = [0x33, 0x84, 0x4a];
const BASE64_DIGITS: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const TIME_MARK: &[u8] = b"3000-01-01T";
/// 3000-01-01T00:00:00Z, in seconds after [`EPOCH`].
const TIME_BASE: i64 = 32_503_680_000 - EPOCH;
const INT_BASE: i64 = 9_000_000_000_000_000_000;
/// Most holes per template: what a time of day and four base64 digits can number.
const MAX_HOLES: usize = 86_400;

impl Markers {
    fn next(&mut self, kind: Kind) -> usize {
        self.kinds.push(kind);
        self.kinds.len() - 1
    }

    fn text(&mut self) -> String {
        let n = self.next(Kind::Text);
        format!("{TEXT_MARK}{n}{TEXT_MARK}")
    }

    fn base64(&mut self) -> Vec<u8> {
        let n = self.next(Kind::Base64);
        let mut encoded = BASE64_MARK.to_vec();
        encoded.extend((0..4).rev().map(|d| BASE64_DIGITS[(n >> (6 * d)) & 63]));
        BASE64
            .decode(encoded)
            .expect("eight base64 digits decode to six bytes")
    }

    fn time(&mut self) -> i64 {
        TIME_BASE + self.next(Kind::Time) as i64
    }

    fn int(&mut self) -> i64 {
        INT_BASE + self.next(Kind::Int) as i64
    }

    /// Hole `n` if it is of `kind`.
    fn of_kind(&self, n: u64, kind: Kind) -> Option<u32> {
        let n = usize::try_from(n).ok()?;
        (self.kinds.get(n) == Some(&kind)).then_some(n as u32)
    }

    /// The marker of a hole starting at `json[at..]`, and its length.
    fn find(&self, json: &[u8], at: usize) -> Option<(usize, usize)> {
        let rest = &json[at..];
        let (n, len, kind) = if let Some(after) = rest.strip_prefix(TEXT_MARK.as_bytes()) {
            let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
            after[digits..].strip_prefix(TEXT_MARK.as_bytes())?;
            let n = std::str::from_utf8(&after[..digits]).ok()?.parse().ok()?;
            (n, 2 * TEXT_MARK.len() + digits, Kind::Text)
        } else if let Some(after) = rest.strip_prefix(BASE64_MARK) {
            let digits = after.get(..4)?;
            let n = digits.iter().try_fold(0, |n, d| {
                let digit = BASE64_DIGITS.iter().position(|c| c == d)?;
                Some(n * 64 + digit)
            })?;
            (n, BASE64_MARK.len() + 4, Kind::Base64)
        } else if let Some(after) = rest.strip_prefix(TIME_MARK) {
            // HH:MM:SSZ
            let clock = after.get(..9)?;
            let field = |i: usize| -> Option<usize> {
                std::str::from_utf8(&clock[i..i + 2]).ok()?.parse().ok()
            };
            let n = field(0)? * 3600 + field(3)? * 60 + field(6)?;
            (n, TIME_MARK.len() + 9, Kind::Time)
        } else if rest.starts_with(b"90000") {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let value: i64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
            (usize::try_from(value - INT_BASE).ok()?, digits, Kind::Int)
        } else {
            return None;
        };
        (self.kinds.get(n) == Some(&kind)).then_some((n, len))
    }
}

/// In a class's protobuf: markers as the JSON writes them in strings, a base64 marker's
/// bytes in bytes fields, integer and time markers as whole varints.
impl protobuf::Markers for Markers {
    fn in_text(&self, content: &[u8], at: usize) -> Option<(u32, usize)> {
        self.find(content, at).map(|(n, len)| (n as u32, len))
    }

    fn in_bytes(&self, content: &[u8], at: usize) -> Option<(u32, usize)> {
        let marker = content.get(at..at + 6)?;
        if marker[..3] != BASE64_MARK_BYTES {
            return None;
        }
        // The four digits after the mark are `n`'s 24 bits.
        let n = marker[3..]
            .iter()
            .fold(0u64, |n, &b| (n << 8) | u64::from(b));
        Some((self.of_kind(n, Kind::Base64)?, 6))
    }

    fn in_varint(&self, value: u64) -> Option<u32> {
        let time_base = (EPOCH + TIME_BASE) as u64;
        if let Some(n) = value.checked_sub(INT_BASE as u64) {
            return self.of_kind(n, Kind::Int);
        }
        self.of_kind(value.checked_sub(time_base)?, Kind::Time)
    }
}

/// The JSON of a class of objects: literal runs and holes, in order; and the class's
/// protobuf message, made on first use.
#[derive(Debug)]
pub(super) struct Template {
    literal: Vec<u8>,
    parts: Vec<Part>,
    holes: usize,
    /// `None` inside when the class's message cannot be kept as a skeleton (then each
    /// object's JSON is encoded). Boxed: a server that never writes protobuf keeps a
    /// pointer per class.
    protobuf: OnceLock<Option<Box<Skeleton>>>,
}

/// The JSON of `values`' class with a marker in each hole (`render` builds the JSON of an
/// object from values), and the markers; `None` if there are too many holes to mark.
pub(super) fn marked<V: Hole>(
    values: &V,
    render: impl FnOnce(&V) -> Vec<u8>,
) -> Option<(Vec<u8>, Markers)> {
    let mut markers = Markers::default();
    let marked = values.marked(&mut markers);
    if markers.kinds.len() > MAX_HOLES {
        return None;
    }
    Some((render(&marked), markers))
}

#[derive(Debug, Clone, Copy)]
enum Part {
    /// `literal[start..end]`.
    Literal { start: u32, end: u32 },
    /// The value of hole `n`.
    Hole(u32),
}

impl Template {
    /// The template of `values`' class: `render` builds the JSON of an object from values
    /// (it runs once, on markers). `None` if a marker is missing from what `render` wrote
    /// or there are too many holes to mark.
    pub(super) fn new<V: Hole>(values: &V, render: impl FnOnce(&V) -> Vec<u8>) -> Option<Template> {
        let (json, markers) = marked(values, render)?;
        let mut literal = Vec::with_capacity(json.len());
        let mut parts = Vec::new();
        let (mut at, mut run_start) = (0, 0);
        let flush = |literal: &mut Vec<u8>, parts: &mut Vec<Part>, run: &[u8]| {
            if !run.is_empty() {
                let start = literal.len() as u32;
                literal.extend_from_slice(run);
                let end = literal.len() as u32;
                parts.push(Part::Literal { start, end });
            }
        };
        while at < json.len() {
            match markers.find(&json, at) {
                Some((n, len)) => {
                    flush(&mut literal, &mut parts, &json[run_start..at]);
                    parts.push(Part::Hole(n as u32));
                    at += len;
                    run_start = at;
                }
                None => at += 1,
            }
        }
        flush(&mut literal, &mut parts, &json[run_start..]);
        literal.shrink_to_fit();
        parts.shrink_to_fit();
        Some(Template {
            literal,
            parts,
            holes: markers.kinds.len(),
            protobuf: OnceLock::new(),
        })
    }

    fn slots<V: Hole>(&self, values: V) -> Slots {
        let mut slots = Vec::with_capacity(self.holes);
        values.into_slots(&mut slots);
        debug_assert_eq!(slots.len(), self.holes, "values of another class");
        Slots(slots)
    }

    /// Appends the JSON of the object whose values are `values` to `buf`.
    pub(super) fn write<V: Hole>(&self, buf: &mut Vec<u8>, values: V) {
        let slots = self.slots(values);
        for part in &self.parts {
            match *part {
                Part::Literal { start, end } => {
                    buf.extend_from_slice(&self.literal[start as usize..end as usize]);
                }
                Part::Hole(n) => slots.0[n as usize].write(buf),
            }
        }
    }

    /// The protobuf message of the object whose values are `values`: through the class's
    /// skeleton, which `make` makes (from the class's JSON with markers, see [`marked`])
    /// on first use. `None` if the class has none (its objects' JSON is encoded instead).
    pub(super) fn protobuf<V: Hole>(
        &self,
        values: V,
        make: impl FnOnce(&V) -> Option<Skeleton>,
    ) -> Option<Filled<'_, Slots>> {
        let skeleton = self
            .protobuf
            .get_or_init(|| make(&values).filter(|s| self.same_holes(s)).map(Box::new))
            .as_ref()?;
        Some(skeleton.fill(self.slots(values)))
    }

    /// Whether `skeleton` has every hole of the JSON as often: none lost to an encoding
    /// that does not keep a marker whole.
    fn same_holes(&self, skeleton: &Skeleton) -> bool {
        let mut count = vec![0i64; self.holes];
        for part in &self.parts {
            if let Part::Hole(n) = part {
                count[*n as usize] += 1;
            }
        }
        for n in skeleton.holes() {
            count[n as usize] -= 1;
        }
        count.iter().all(|&c| c == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    holes! {
        struct Example {
            name: String,
            data: Base64,
            at: Seconds,
            count: Int,
            more: Vec<String>,
        }
    }

    fn example(name: &str) -> Example {
        Example {
            name: name.to_owned(),
            data: Base64(b"secret\n".to_vec()),
            at: Seconds(75),
            count: Int(-3),
            more: vec!["a".to_owned(), "b".to_owned()],
        }
    }

    fn render(v: &Example) -> Vec<u8> {
        let mut json = format!(r#"{{"name":"{}","again":"x-{}-y","data":""#, v.name, v.name);
        json.push_str(&BASE64.encode(&v.data.0));
        json.push_str(r#"","at":""#);
        let mut out = json.into_bytes();
        write_time(&mut out, v.at.0);
        write!(
            out,
            r#"","count":{},"more":"{}"}}"#,
            v.count.0,
            v.more.join(",")
        )
        .unwrap();
        out
    }

    #[test]
    fn every_kind_of_hole_writes_what_the_builder_would() {
        let template = Template::new(&example("first"), render).unwrap();
        assert_eq!(template.holes, 6);
        for name in ["first", "second", "a-much-longer-name"] {
            let mut buf = Vec::new();
            template.write(&mut buf, example(name));
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                String::from_utf8(render(&example(name))).unwrap()
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn times_are_written_as_jiff_formats_them(
            // Around the years scenarios use (2026 to the markers' 3000), and jiff's
            // whole range, edges included, where years below 0 take the fallback.
            unix in proptest::prop_oneof![
                0_i64..=32_600_000_000,
                Timestamp::MIN.as_second()..=Timestamp::MAX.as_second(),
                proptest::strategy::Just(Timestamp::MIN.as_second()),
                proptest::strategy::Just(Timestamp::MAX.as_second()),
                proptest::strategy::Just(-62_167_219_200_i64),
            ],
        ) {
            let mut fast = Vec::new();
            write_time(&mut fast, unix - EPOCH);
            let at = Timestamp::from_second(unix).unwrap();
            let expected = at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            proptest::prop_assert_eq!(String::from_utf8(fast).unwrap(), expected);
        }
    }

    #[test]
    fn days_around_leap_years_and_centuries_map_to_their_dates() {
        let date = |y: i16, m: i8, d: i8| {
            let at = k8s_openapi::jiff::civil::date(y, m, d)
                .to_zoned(k8s_openapi::jiff::tz::TimeZone::UTC)
                .unwrap();
            at.timestamp().as_second().div_euclid(86_400)
        };
        for (y, m, d) in [
            (1970, 1, 1),
            (1969, 12, 31),
            (2000, 2, 29),
            (2000, 3, 1),
            (1900, 2, 28),
            (1900, 3, 1),
            (2024, 12, 31),
            (3000, 1, 1),
            (1, 1, 1),
            (9999, 12, 30),
        ] {
            let days = date(y, m, d);
            assert_eq!(
                civil_from_days(days),
                (i64::from(y), i64::from(m), i64::from(d)),
                "{y}-{m}-{d}"
            );
        }
    }

    #[test]
    fn a_base64_marker_is_found_in_bytes_too() {
        assert_eq!(BASE64.decode(BASE64_MARK).unwrap(), BASE64_MARK_BYTES);
        let mut markers = Markers::default();
        markers.text();
        let bytes = markers.base64();
        let mut content = b"xy".to_vec();
        content.extend(&bytes);
        let found = protobuf::Markers::in_bytes(&markers, &content, 2);
        assert_eq!(found, Some((1, 6)));
        assert_eq!(protobuf::Markers::in_bytes(&markers, &content, 1), None);
    }

    #[test]
    fn markers_are_found_where_they_were_written() {
        let mut markers = Markers::default();
        let text = markers.text();
        let bytes = markers.base64();
        let time = markers.time();
        let int = markers.int();
        let mut json = format!("x{text}").into_bytes();
        json.extend(BASE64.encode(&bytes).bytes());
        write_time(&mut json, time);
        write!(json, "{int}").unwrap();
        assert_eq!(markers.find(&json, 0), None);
        let mut at = 1;
        for n in 0..4 {
            let (found, len) = markers.find(&json, at).unwrap();
            assert_eq!(found, n);
            at += len;
        }
        assert_eq!(at, json.len());
    }
}
