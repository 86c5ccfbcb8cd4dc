//! Reading what the commands are given (scenarios, reports) with a size limit, so that a
//! path to an endless or huge file (`/dev/zero`, a log by mistake) is refused at once
//! instead of read until memory runs out.

use std::io::Read;
use std::path::Path;

use units::Bytes;

/// The largest scenario file read: 1 MiB, far beyond any hand-written scenario.
pub const MAX_SCENARIO_BYTES: Bytes = Bytes(1 << 20);

/// The largest report read: 256 MiB (a report with every phase sampled at the timeline's
/// most samples stays far below).
pub const MAX_REPORT_BYTES: Bytes = Bytes(256 << 20);

/// Reads `path` whole, refusing it (`ErrorKind::FileTooLarge`) once it passes `limit`.
pub fn read_limited(path: &Path, limit: Bytes) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.0 + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit.0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("it is larger than {limit}, the most this reads"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_limit() {
        let e = read_limited(Path::new("/dev/zero"), Bytes(4096)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    #[test]
    fn a_file_at_the_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'x'; 4096]).unwrap();
        assert_eq!(read_limited(&path, Bytes(4096)).unwrap().len(), 4096);
        assert!(read_limited(&path, Bytes(4095)).is_err());
    }
}
