//! What goes through a watch in [`super::Faults`]: its events, read as they pass, and how
//! far it has been sent (the resourceVersion of the newest event that went through it).
//!
//! A watch's stream is JSON lines or, for a client that asks for it (client-go's typed
//! clients against kube-apiserver, at v0.35 and later), protobuf frames: a four-byte
//! big-endian length, then a `WatchEvent` message. Both are read: each event's type, and
//! its object's `metadata.resourceVersion`.
//!
//! A watch starts at the resourceVersion it asked for (a watch from a LIST is sent nothing
//! older), and every event moves it to the event's object's version (a BOOKMARK's too:
//! watch-list's initial events end on one carrying the LIST's version). A stream in
//! another encoding has no position that can be read: it counts as sent everything once
//! it has carried nothing for a while.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// An event longer than this is not looked into (none is this long); the watch's
/// position then stops moving, and it counts as sent once idle.
const LONGEST_EVENT: usize = 64 << 20;

/// How a watch's stream is encoded, from its response's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Encoding {
    /// JSON, one event per line.
    Json,
    /// `application/vnd.kubernetes.protobuf;stream=watch`: length-prefixed frames.
    Protobuf,
    /// Anything else: events cannot be told apart.
    Other,
}

impl Encoding {
    pub(super) fn of(content_type: Option<&str>) -> Encoding {
        match content_type {
            Some(t) if t.contains("json") => Encoding::Json,
            Some(t) if t.contains("protobuf") => Encoding::Protobuf,
            _ => Encoding::Other,
        }
    }
}

/// Where one open watch stands.
#[derive(Debug, Clone)]
pub(super) struct Position {
    /// The newest resourceVersion sent; `None` when the stream cannot be read.
    sent: Option<u64>,
    /// When the stream last carried bytes.
    last_data: Instant,
}

impl Position {
    /// A watch that asked for `from`, answered in `encoding`.
    pub(super) fn start(from: Option<u64>, encoding: Encoding) -> Position {
        Position {
            sent: (encoding != Encoding::Other).then(|| from.unwrap_or(0)),
            last_data: Instant::now(),
        }
    }

    /// Whether everything up to `target` has gone through: by its position, or for a
    /// stream that cannot be read, by having carried nothing for `idle`.
    pub(super) fn reached(&self, target: u64, idle: Duration) -> bool {
        match self.sent {
            Some(sent) => sent >= target,
            None => self.last_data.elapsed() >= idle,
        }
    }

    fn saw(&mut self, rv: Option<u64>) {
        if let (Some(sent), Some(rv)) = (self.sent.as_mut(), rv) {
            *sent = (*sent).max(rv);
        }
    }
}

/// Splits a watch's stream into events.
pub(super) struct Events {
    encoding: Encoding,
    /// For a stream sent gzipped (`Content-Encoding: gzip`, which kube-apiserver uses
    /// for a watch too when the client accepts it), what unzips it.
    gunzip: Option<Gunzip>,
    /// The current event's bytes so far (a frame's with its length).
    event: Vec<u8>,
    /// The current line is too long to look into.
    skipping: bool,
    /// Of a frame too long to look into, the bytes still to come.
    skip_left: usize,
}

impl Events {
    /// Events of a stream in `encoding`, gzipped or not.
    pub(super) fn new(encoding: Encoding, gzipped: bool) -> Events {
        Events {
            encoding,
            gunzip: gzipped.then(Gunzip::default),
            event: Vec::new(),
            skipping: false,
            skip_left: 0,
        }
    }

    /// Reads `data`, handing `each` every event it completes: what it says, or `None` for
    /// one that cannot be read (too long, or not an event). A stream in another encoding
    /// has no events.
    pub(super) fn read(&mut self, data: &[u8], mut each: impl FnMut(Option<Head>)) {
        if let Some(gunzip) = self.gunzip.as_mut() {
            match gunzip.unzip(data) {
                Some(unzipped) => self.split(&unzipped, each),
                None => {
                    // Not gzip after all: nothing more is read of it.
                    self.gunzip = None;
                    self.encoding = Encoding::Other;
                    each(None);
                }
            }
        } else {
            self.split(data, each);
        }
    }

    fn split(&mut self, data: &[u8], mut each: impl FnMut(Option<Head>)) {
        match self.encoding {
            Encoding::Json => self.lines(data, |line| each(line.and_then(json_head))),
            Encoding::Protobuf => self.frames(data, |frame| each(frame.and_then(proto_head))),
            Encoding::Other => {}
        }
    }

    /// Reads `data` of a watch at `position`, moving it by every event it completes, and
    /// hands `each` every event.
    pub(super) fn advance(
        &mut self,
        data: &[u8],
        position: &mut Position,
        mut each: impl FnMut(Option<&Head>),
    ) {
        position.last_data = Instant::now();
        self.read(data, |head| {
            match &head {
                Some(head) => position.saw(head.resource_version),
                None => position.sent = None,
            }
            each(head.as_ref());
        });
    }

    fn lines(&mut self, data: &[u8], mut each: impl FnMut(Option<&[u8]>)) {
        let mut rest = data;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let (line, tail) = rest.split_at(end);
            if self.skipping {
                each(None);
            } else if self.event.is_empty() {
                each(Some(line));
            } else {
                self.event.extend_from_slice(line);
                each(Some(&self.event));
            }
            self.event.clear();
            self.skipping = false;
            rest = &tail[1..];
        }
        if !self.skipping {
            self.event.extend_from_slice(rest);
            if self.event.len() > LONGEST_EVENT {
                self.skipping = true;
                self.event = Vec::new();
            }
        }
    }

    fn frames(&mut self, data: &[u8], mut each: impl FnMut(Option<&[u8]>)) {
        let mut rest = data;
        while !rest.is_empty() {
            if self.skip_left > 0 {
                let n = self.skip_left.min(rest.len());
                self.skip_left -= n;
                rest = &rest[n..];
                if self.skip_left == 0 {
                    each(None);
                }
                continue;
            }
            let want = match self.event.first_chunk::<4>() {
                Some(length) => 4 + u32::from_be_bytes(*length) as usize,
                None => 4,
            };
            if want > LONGEST_EVENT {
                self.skip_left = want - self.event.len();
                self.event.clear();
                continue;
            }
            let n = (want - self.event.len()).min(rest.len());
            self.event.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if self.event.len() == want && want > 4 {
                each(Some(&self.event[4..]));
                self.event.clear();
            } else if self.event.len() == want && self.event == [0; 4] {
                // A frame of no bytes: no event.
                self.event.clear();
            }
        }
    }
}

/// Unzips a gzip stream as it comes, piece by piece. kube-apiserver's is a run of gzip
/// members, one after another (each a header, deflate data, and a trailer).
struct Gunzip {
    member: Member,
}

/// Where the stream is within a member.
enum Member {
    /// The header's bytes until it is whole.
    Header(Vec<u8>),
    /// The deflate data after it.
    Body(Box<flate2::Decompress>),
    /// The trailer (CRC-32 and length), with this many bytes still to come.
    Trailer(usize),
}

impl Default for Gunzip {
    fn default() -> Gunzip {
        Gunzip {
            member: Member::Header(Vec::new()),
        }
    }
}

impl Gunzip {
    /// What `data` unzips to; `None` when it is not gzip.
    fn unzip(&mut self, data: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(data.len() * 4 + 4096);
        let mut data = data;
        let mut carried: Vec<u8>;
        while !data.is_empty() {
            match &mut self.member {
                Member::Header(header) => {
                    header.extend_from_slice(data);
                    let Some(length) = gzip_header(header)? else {
                        break;
                    };
                    carried = header.split_off(length);
                    data = &carried;
                    self.member = Member::Body(Box::new(flate2::Decompress::new(false)));
                }
                Member::Body(inflate) => {
                    let (taken, ended) = inflate_into(inflate, data, &mut out)?;
                    data = &data[taken..];
                    if ended {
                        self.member = Member::Trailer(8);
                    }
                }
                Member::Trailer(left) => {
                    let n = (*left).min(data.len());
                    *left -= n;
                    data = &data[n..];
                    if *left == 0 {
                        self.member = Member::Header(Vec::new());
                    }
                }
            }
        }
        Some(out)
    }
}

/// Inflates `data` into `out` until it is all in and `inflate` holds nothing back, or its
/// stream ends: the bytes taken, and whether it ended.
fn inflate_into(
    inflate: &mut flate2::Decompress,
    mut data: &[u8],
    out: &mut Vec<u8>,
) -> Option<(usize, bool)> {
    let mut taken = 0;
    loop {
        if out.capacity() == out.len() {
            out.reserve(out.len().max(4096));
        }
        let (before, made) = (inflate.total_in(), out.len());
        let status = inflate
            .decompress_vec(data, out, flate2::FlushDecompress::Sync)
            .ok()?;
        let n = (inflate.total_in() - before) as usize;
        taken += n;
        data = &data[n..];
        if status == flate2::Status::StreamEnd {
            return Some((taken, true));
        }
        let room = out.len() < out.capacity();
        if room && (data.is_empty() || (n == 0 && out.len() == made)) {
            return Some((taken, false));
        }
    }
}

/// The length of the gzip header at the start of `bytes`: `Some(None)` while it is not
/// whole yet, `None` when it is not a gzip header (RFC 1952, section 2.3).
fn gzip_header(bytes: &[u8]) -> Option<Option<usize>> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    if bytes.len() < 10 {
        return (bytes.iter().zip([0x1f, 0x8b, 8]).all(|(a, b)| *a == b)).then_some(None);
    }
    if bytes[..3] != [0x1f, 0x8b, 8] {
        return None;
    }
    let flags = bytes[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let Some(length) = bytes.get(at..at + 2) else {
            return Some(None);
        };
        at += 2 + usize::from(u16::from_le_bytes([length[0], length[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match bytes
                .get(at..)
                .and_then(|rest| rest.iter().position(|b| *b == 0))
            {
                Some(end) => at += end + 1,
                None => return Some(None),
            }
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    Some((bytes.len() >= at).then_some(at))
}

/// What the run reads of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Head {
    /// The event's type.
    pub kind: EventType,
    /// Its object's `metadata.resourceVersion` (not read of an ERROR event's Status).
    pub resource_version: Option<u64>,
}

/// A watch event's `type`: read without allocating, since the proxy reads every event a
/// program is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub(super) enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl EventType {
    fn from_bytes(name: &[u8]) -> Option<EventType> {
        Some(match name {
            b"ADDED" => EventType::Added,
            b"MODIFIED" => EventType::Modified,
            b"DELETED" => EventType::Deleted,
            b"BOOKMARK" => EventType::Bookmark,
            b"ERROR" => EventType::Error,
            _ => return None,
        })
    }
}

/// A JSON watch event's type and its object's `metadata.resourceVersion`, when the line
/// is an event.
fn json_head(line: &[u8]) -> Option<Head> {
    #[derive(Deserialize)]
    struct Event<'a> {
        #[serde(rename = "type")]
        kind: EventType,
        #[serde(borrow)]
        object: Object<'a>,
    }
    #[derive(Deserialize)]
    struct Object<'a> {
        #[serde(borrow)]
        metadata: Metadata<'a>,
    }
    #[derive(Deserialize)]
    struct Metadata<'a> {
        #[serde(rename = "resourceVersion", borrow)]
        resource_version: Option<Cow<'a, str>>,
    }
    let event: Event = serde_json::from_slice(line).ok()?;
    Some(Head {
        kind: event.kind,
        resource_version: event
            .object
            .metadata
            .resource_version
            .and_then(|rv| rv.parse().ok()),
    })
}

/// A protobuf `WatchEvent`'s type and its object's `metadata.resourceVersion`: the event
/// is `{1: type, 2: RawExtension {1: raw}}`, the raw object `k8s\0` and a
/// `runtime.Unknown {2: raw}`, and the object's field 1 is its `ObjectMeta`, whose field
/// 6 is `resourceVersion` (a Status's field 1 is a `ListMeta`: an ERROR event's version
/// is not read).
fn proto_head(frame: &[u8]) -> Option<Head> {
    let kind = EventType::from_bytes(proto_field(frame, 1)?)?;
    let object = proto_field(proto_field(frame, 2)?, 1)?;
    let unknown = object.strip_prefix(b"k8s\0")?;
    let resource_version = if kind == EventType::Error {
        None
    } else {
        let meta = proto_field(proto_field(unknown, 2)?, 1)?;
        proto_field(meta, 6).and_then(|rv| std::str::from_utf8(rv).ok()?.parse().ok())
    };
    Some(Head {
        kind,
        resource_version,
    })
}

/// The first length-delimited field `number` of protobuf message `message`.
fn proto_field(message: &[u8], number: u64) -> Option<&[u8]> {
    let mut rest = message;
    while !rest.is_empty() {
        let key = varint(&mut rest)?;
        match key & 7 {
            0 => {
                varint(&mut rest)?;
            }
            1 => rest = rest.get(8..)?,
            2 => {
                let length = usize::try_from(varint(&mut rest)?).ok()?;
                let value = rest.get(..length)?;
                rest = &rest[length..];
                if key >> 3 == number {
                    return Some(value);
                }
            }
            5 => rest = rest.get(4..)?,
            _ => return None,
        }
    }
    None
}

/// A base-128 varint from the front of `bytes`, which move past it.
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, rv: u64) -> String {
        format!(
            r#"{{"type":"{kind}","object":{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"a","namespace":"n","uid":"u","resourceVersion":"{rv}","labels":{{"resourceVersion":"999"}}}}}}}}"#
        ) + "\n"
    }

    /// Every event of `stream` read in two pieces cut at each byte: the heads, and the
    /// position from `from`.
    fn read_cut_anywhere(
        stream: &[u8],
        encoding: Encoding,
        from: u64,
    ) -> (Vec<Option<Head>>, Position) {
        let mut whole = None;
        for cut in 0..stream.len() {
            let mut position = Position::start(Some(from), encoding);
            let mut events = Events::new(encoding, false);
            let mut heads = Vec::new();
            let (a, b) = stream.split_at(cut);
            events.advance(a, &mut position, |h| heads.push(h.copied()));
            events.advance(b, &mut position, |h| heads.push(h.copied()));
            if let Some((first, _)) = &whole {
                assert_eq!(&heads, first, "cut at {cut}");
            }
            whole.get_or_insert((heads, position));
        }
        whole.unwrap()
    }

    #[test]
    fn follows_json_events_split_anywhere() {
        let stream = event("ADDED", 7) + &event("MODIFIED", 9) + &event("BOOKMARK", 12);
        let (heads, position) = read_cut_anywhere(stream.as_bytes(), Encoding::Json, 5);
        let kinds: Vec<_> = heads.iter().flatten().map(|h| h.kind).collect();
        use EventType::*;
        assert_eq!(kinds, [Added, Modified, Bookmark]);
        assert_eq!(position.sent, Some(12));
        assert!(position.reached(12, Duration::MAX));
        assert!(!position.reached(13, Duration::ZERO));
    }

    /// A watch of ConfigMaps as kube-apiserver 1.37 sent it in protobuf: one ADDED (at
    /// resourceVersion 4298) and its DELETED.
    #[test]
    fn follows_protobuf_frames_split_anywhere() {
        let stream = include_bytes!("../../tests/fixtures/watch/configmaps.protobuf");
        let (heads, position) = read_cut_anywhere(stream, Encoding::Protobuf, 4000);
        let heads: Vec<Head> = heads.into_iter().flatten().collect();
        assert_eq!(heads.len(), 2);
        assert_eq!(
            heads[0],
            Head {
                kind: EventType::Added,
                resource_version: Some(4298)
            }
        );
        assert_eq!(heads[1].kind, EventType::Deleted);
        assert!(heads[1].resource_version > Some(4298));
        assert_eq!(position.sent, heads[1].resource_version);
    }

    #[test]
    fn reads_a_gzipped_stream() {
        use std::io::Write;
        let stream = event("ADDED", 7) + &event("DELETED", 9);
        let mut zip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        zip.write_all(stream.as_bytes()).unwrap();
        let zipped = zip.finish().unwrap();
        let mut position = Position::start(Some(5), Encoding::Json);
        let mut events = Events::new(Encoding::Json, true);
        let mut kinds = Vec::new();
        for byte in zipped.chunks(3) {
            events.advance(byte, &mut position, |h| kinds.push(h.map(|h| h.kind)));
        }
        assert_eq!(kinds, [Some(EventType::Added), Some(EventType::Deleted)]);
        assert_eq!(position.sent, Some(9));
    }

    /// kube-apiserver's gzip: members one after another, each flushed as it goes.
    #[test]
    fn reads_a_gzipped_stream_flushed_as_it_goes() {
        use std::io::Write;
        let one = include_bytes!("../../tests/fixtures/watch/configmaps.protobuf");
        let mut pieces = Vec::new();
        for _ in 0..5 {
            let mut zip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            for _ in 0..10 {
                zip.write_all(one).unwrap();
                zip.flush().unwrap();
                pieces.push(std::mem::take(zip.get_mut()));
            }
            pieces.push(zip.finish().unwrap());
        }
        // And cut anywhere: a member's end and the next one's start in one piece.
        let joined = pieces.concat();
        pieces.extend(joined.chunks(7).map(<[u8]>::to_vec));
        let mut position = Position::start(Some(5), Encoding::Protobuf);
        let mut events = Events::new(Encoding::Protobuf, true);
        let mut count = 0;
        for piece in &pieces {
            events.advance(piece, &mut position, |h| {
                assert!(h.is_some());
                count += 1;
            });
        }
        assert_eq!(count, 200, "every event of every piece, twice");
    }

    #[test]
    fn starts_where_the_watch_asked_and_never_moves_back() {
        let mut position = Position::start(Some(20), Encoding::Json);
        let mut events = Events::new(Encoding::Json, false);
        events.advance(event("ADDED", 7).as_bytes(), &mut position, |_| {});
        assert_eq!(position.sent, Some(20));
        let error = r#"{"type":"ERROR","object":{"kind":"Status","metadata":{},"code":410}}"#;
        let mut kinds = Vec::new();
        events.advance(format!("{error}\n").as_bytes(), &mut position, |h| {
            kinds.push(h.map(|h| h.kind));
        });
        assert_eq!(kinds, [Some(EventType::Error)]);
        assert_eq!(position.sent, Some(20), "a Status has no resourceVersion");
    }

    #[test]
    fn a_stream_that_cannot_be_read_is_sent_once_idle() {
        let mut position = Position::start(Some(5), Encoding::Other);
        let mut count = 0;
        Events::new(Encoding::Other, false).advance(b"\x00\x01binary\n", &mut position, |_| {
            count += 1;
        });
        assert_eq!(count, 0, "no events told apart");
        assert!(!position.reached(1, Duration::from_secs(3600)));
        assert!(position.reached(u64::MAX, Duration::ZERO));
        let mut position = Position::start(Some(5), Encoding::Json);
        Events::new(Encoding::Json, false).advance(b"not json\n", &mut position, |_| {});
        assert!(
            !position.reached(6, Duration::from_secs(3600)),
            "no longer read"
        );
    }
}
