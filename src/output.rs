//! Where `run` and `export` put what they write: a file or standard output.
//!
//! Every file destination is checked before a run starts ([`Destination::prepare`]), so a
//! bad path fails in a second rather than after minutes of measuring, and files appear
//! whole or not at all ([`Destination::write`] writes beside the file and renames).

use std::ffi::OsStr;
use std::fmt;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The longest file name Linux file systems take, in bytes.
const NAME_MAX: usize = 255;

/// A file, or standard output (`-` on the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output.
    Stdout,
    /// A file.
    File(PathBuf),
}

impl From<PathBuf> for Destination {
    fn from(path: PathBuf) -> Destination {
        if path.as_os_str() == OsStr::new("-") {
            Destination::Stdout
        } else {
            Destination::File(path)
        }
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Destination::Stdout => f.write_str("standard output"),
            Destination::File(path) => write!(f, "`{}`", path.display()),
        }
    }
}

/// A destination that cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {what} to `{}`: {why}", path.display())]
pub struct Error {
    what: String,
    path: PathBuf,
    why: String,
}

impl Destination {
    /// Checks that `what` (e.g. "the report") can be written here, and that it would not
    /// overwrite any of `inputs`. Nothing is left behind: missing folders are made when
    /// the file is written.
    pub fn prepare(&self, what: &str, inputs: &[&Path]) -> Result<(), Error> {
        let Destination::File(path) = self else {
            return Ok(());
        };
        let fail = |why: String| Error {
            what: what.to_owned(),
            path: path.clone(),
            why,
        };
        if path.is_dir() {
            return Err(fail("it is a directory".to_owned()));
        }
        if path.file_name().is_none() {
            return Err(fail("it names no file".to_owned()));
        }
        for input in inputs {
            if same_file(path, input) {
                return Err(fail(format!(
                    "that is the input `{}`; choose another path",
                    input.display()
                )));
            }
        }
        let dir = folder_of(path);
        // The nearest folder that exists: the rest is created when the file is written.
        let existing = dir
            .ancestors()
            .find(|a| a.as_os_str().is_empty() || a.exists())
            .map(|a| {
                if a.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    a
                }
            })
            .unwrap_or(Path::new("/"));
        if !existing.is_dir() {
            return Err(fail(format!(
                "`{}` is a file, not a folder",
                existing.display()
            )));
        }
        tempfile::NamedTempFile::new_in(existing)
            .map_err(|e| fail(format!("cannot write in `{}`: {e}", existing.display())))?;
        if existing == dir {
            // Open the file itself, so that permissions and the name's length are tried
            // now; a file that did not exist is removed again.
            let existed = path.exists();
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .map_err(|e| fail(e.to_string()))?;
            if !existed {
                std::fs::remove_file(path).map_err(|e| fail(e.to_string()))?;
            }
        } else if let Some(long) = path.components().find(|c| c.as_os_str().len() > NAME_MAX) {
            return Err(fail(format!(
                "`{}` is longer than {NAME_MAX} bytes",
                long.as_os_str().display()
            )));
        }
        Ok(())
    }

    /// Writes `bytes`: to standard output, or to the file whole (written beside it, then
    /// renamed into place, so a reader never sees half of it).
    pub fn write(&self, what: &str, bytes: &[u8]) -> Result<(), Error> {
        match self {
            Destination::Stdout => {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(bytes)
                    .and_then(|()| stdout.flush())
                    .map_err(|e| Error {
                        what: what.to_owned(),
                        path: PathBuf::from("-"),
                        why: e.to_string(),
                    })
            }
            Destination::File(path) => write_file(path, bytes).map_err(|e| Error {
                what: what.to_owned(),
                path: path.clone(),
                why: e.to_string(),
            }),
        }
    }
}

/// Writes `bytes` to `path` whole or not at all, creating its folder.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = folder_of(path);
    std::fs::create_dir_all(dir)?;
    // Created as any file is (0666 less the umask), not with a temporary file's 0600.
    let mut file = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_data()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dash_is_standard_output() {
        assert_eq!(Destination::from(PathBuf::from("-")), Destination::Stdout);
        assert_eq!(
            Destination::from(PathBuf::from("r.json")),
            Destination::File(PathBuf::from("r.json"))
        );
    }

    #[test]
    fn bad_destinations_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let refused = |path: PathBuf, inputs: &[&Path]| {
            Destination::File(path)
                .prepare("the report", inputs)
                .unwrap_err()
                .to_string()
        };
        assert!(refused(dir.path().to_owned(), &[]).contains("it is a directory"));
        let e = refused(file.join("r.json"), &[]);
        assert!(e.contains("is a file, not a folder"), "{e}");
        let e = refused(file.clone(), &[&file]);
        assert!(e.contains("that is the input"), "{e}");
        let e = refused(dir.path().join("x".repeat(300)), &[]);
        assert!(e.contains("cannot write the report"), "{e}");
        let e = refused(dir.path().join("new").join("x".repeat(300)), &[]);
        assert!(e.contains("longer than 255 bytes"), "{e}");
        // A good destination in a new folder: nothing is made until it is written.
        let good = dir.path().join("new/r.json");
        Destination::File(good.clone())
            .prepare("the report", &[&file])
            .unwrap();
        assert!(!good.parent().unwrap().exists());
        write_file(&good, b"{}").unwrap();
        assert_eq!(std::fs::read(&good).unwrap(), b"{}");
        // The mode any new file gets (0666 less the umask), not a temporary file's 0600.
        let plain = dir.path().join("new/plain");
        std::fs::File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&good), mode(&plain));
        // An existing file is kept as it is until it is written.
        Destination::File(file.clone()).prepare("x", &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }
}
