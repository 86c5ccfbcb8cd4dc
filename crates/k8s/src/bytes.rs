//! A `[]byte` field in JSON as Kubernetes' Go reads it: base64 through `encoding/json`,
//! which decodes with `base64.StdEncoding` (Go's `encoding/base64`, `decodeQuantum`).
//! It is more lenient than RFC 4648 in two ways a client may rely on, and its error
//! names a byte offset of its own: a Secret written with wrapped base64 (`base64` without
//! `-w0`) is accepted by kube-apiserver, and read back in one line.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Go's `base64.CorruptInputError`: the offset in the text of the first byte that is not
/// base64 where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorruptInput(pub usize);

impl fmt::Display for CorruptInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal base64 data at input byte {}", self.0)
    }
}

/// `text` decoded as Go's `base64.StdEncoding.DecodeString` decodes it: carriage returns
/// and newlines skipped anywhere, padding required, the unused low bits of a last,
/// partial quantum ignored (Go's encoding is not strict), nothing after the padding but
/// newlines.
pub fn decode(text: &str) -> Result<Vec<u8>, CorruptInput> {
    let src = text.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        let (quantum, len, end) = quantum(src, si)?;
        let bytes = quantum.to_be_bytes();
        out.extend_from_slice(&bytes[1..len]);
        si = end;
    }
    Ok(out)
}

/// `text` as Go writes the bytes it reads ([`decode`]) back: `None` where that is `text`
/// itself, which allocates nothing.
pub fn canonical(text: &str) -> Result<Option<String>, CorruptInput> {
    if is_canonical(text.as_bytes()) {
        return Ok(None);
    }
    Ok(Some(STANDARD.encode(decode(text)?)))
}

/// One quantum of `src` from `si` (`decodeQuantum`): its bits, how many of its 4 sextets
/// it had (1 + the bytes they make) and where the next one starts.
fn quantum(src: &[u8], mut si: usize) -> Result<(u32, usize, usize), CorruptInput> {
    let skip_newlines = |mut si: usize| {
        while si < src.len() && matches!(src[si], b'\n' | b'\r') {
            si += 1;
        }
        si
    };
    let mut sextets = [0u8; 4];
    let mut j = 0;
    while j < 4 {
        let Some(&byte) = src.get(si) else {
            // The text ended inside a quantum: Go requires the padding.
            return match j {
                0 => Ok((0, 1, si)),
                _ => Err(CorruptInput(si - j)),
            };
        };
        si += 1;
        if let Some(sextet) = sextet(byte) {
            sextets[j] = sextet;
            j += 1;
            continue;
        }
        if matches!(byte, b'\n' | b'\r') {
            continue;
        }
        if byte != b'=' || j < 2 {
            return Err(CorruptInput(si - 1));
        }
        if j == 2 {
            // "==" is due; the first is read.
            si = skip_newlines(si);
            match src.get(si) {
                None => return Err(CorruptInput(src.len())),
                Some(b'=') => si += 1,
                Some(_) => return Err(CorruptInput(si - 1)),
            }
        }
        si = skip_newlines(si);
        if si < src.len() {
            return Err(CorruptInput(si));
        }
        break;
    }
    let bits = sextets
        .iter()
        .fold(0u32, |bits, &sextet| bits << 6 | u32::from(sextet));
    Ok((bits, j, si))
}

fn sextet(byte: u8) -> Option<u8> {
    match byte {
        b'A'..=b'Z' => Some(byte - b'A'),
        b'a'..=b'z' => Some(byte - b'a' + 26),
        b'0'..=b'9' => Some(byte - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Whether `src` is padded base64 in one line whose last quantum has no stray bits: what
/// Go writes, so what it reads back unchanged.
fn is_canonical(src: &[u8]) -> bool {
    if !src.len().is_multiple_of(4) {
        return false;
    }
    let body = src
        .strip_suffix(b"==")
        .or_else(|| src.strip_suffix(b"="))
        .unwrap_or(src);
    if !body.iter().all(|&byte| sextet(byte).is_some()) {
        return false;
    }
    let last = body.last().map_or(0, |&byte| sextet(byte).unwrap_or(0));
    // Two sextets make one byte (4 bits spare), three make two (2 bits spare).
    match src.len() - body.len() {
        2 => last & 0b1111 == 0,
        1 => last & 0b11 == 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text with what Go 1.26's `base64.StdEncoding.DecodeString` (and
    /// `encoding/json` into a `[]byte`) returns for it, checked by a Go program.
    const GO: [(&str, Result<&[u8], usize>); 18] = [
        ("", Ok(b"")),
        ("\n", Ok(b"")),
        ("YWJj", Ok(b"abc")),
        ("YWI=", Ok(b"ab")),
        ("YQ==\n", Ok(b"a")),
        ("YR==", Ok(b"a")),
        ("YW\nJj", Ok(b"abc")),
        ("YW\r\nJj\n", Ok(b"abc")),
        ("YQ=\n=", Ok(b"a")),
        ("!!", Err(0)),
        ("YQ", Err(0)),
        ("Y", Err(0)),
        ("YWJj=", Err(4)),
        ("YW Jj", Err(2)),
        ("YQ==YQ==", Err(4)),
        ("YQ=", Err(3)),
        ("YWJjZA=", Err(7)),
        ("YQ=\n=\nx", Err(6)),
    ];

    #[test]
    fn decodes_as_go_and_names_the_byte_go_names() {
        for (text, go) in GO {
            let ours = decode(text).map_err(|CorruptInput(at)| at);
            assert_eq!(ours.as_deref().map_err(|&at| at), go, "{text:?}");
        }
        assert_eq!(
            decode("YW Jj").unwrap_err().to_string(),
            "illegal base64 data at input byte 2"
        );
    }

    #[test]
    fn only_what_go_would_write_differently_is_rewritten() {
        for (text, go) in GO {
            let Ok(bytes) = go else {
                assert!(canonical(text).is_err(), "{text:?}");
                continue;
            };
            let written = STANDARD.encode(bytes);
            match canonical(text).unwrap() {
                None => assert_eq!(text, written),
                Some(rewritten) => {
                    assert_ne!(text, written);
                    assert_eq!(rewritten, written);
                }
            }
        }
    }
}
