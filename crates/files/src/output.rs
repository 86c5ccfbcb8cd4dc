//! Where the commands put what they write: a file or standard output. Every writer goes
//! through here (`run`'s report, chart and exports, `export`, `serve`'s kubeconfig).
//!
//! What a path names decides how it is written ([`Destination::write`]):
//! - a regular file, new or existing: written beside it and renamed over it, so a reader
//!   never sees half of it;
//! - a symbolic link: followed, and its target written as above; the link stays;
//! - anything else (a character device such as `/dev/null`, a FIFO, a socket, or this
//!   process's own descriptors such as `/dev/stdout`): opened and written in place, never
//!   renamed over;
//! - `-`: standard output.
//!
//! Every destination is checked before a command starts ([`Destination::prepare`],
//! [`refuse_overlaps`]), so a bad path fails in a second rather than after minutes of
//! measuring, and two outputs, or an output and an input, that are one file under two
//! spellings (`r.json` and `./r.json`, a symlinked folder) are refused, naming both.

/// `eprintln!` that cannot panic: a message to a standard error that is gone (a closed
/// pipe, `2>&1 | head`) is lost, and the command goes on to write its results.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// [`say!`] without the line's end (`eprint!`).
#[macro_export]
macro_rules! say_text {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

use std::ffi::OsStr;
use std::fmt;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
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
        let resolved = match target(path).map_err(|e| fail(e.to_string()))? {
            // A device, a FIFO or a descriptor: nothing to try without writing to it.
            Target::InPlace(_) => return Ok(()),
            Target::Atomic(resolved) => resolved,
        };
        let dir = folder_of(&resolved);
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
            let existed = resolved.exists();
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&resolved)
                .map_err(|e| fail(e.to_string()))?;
            if !existed {
                std::fs::remove_file(&resolved).map_err(|e| fail(e.to_string()))?;
            }
        } else if let Some(long) = resolved
            .components()
            .find(|c| c.as_os_str().len() > NAME_MAX)
        {
            return Err(fail(format!(
                "`{}` is longer than {NAME_MAX} bytes",
                long.as_os_str().display()
            )));
        }
        Ok(())
    }

    /// Writes `bytes`: to standard output (see [`print`]), or to the file whole (written
    /// beside it, then renamed into place, so a reader never sees half of it).
    pub fn write(&self, what: &str, bytes: &[u8]) -> Result<(), Error> {
        match self {
            Destination::Stdout => print(what, bytes),
            Destination::File(path) => write_file(path, bytes).map_err(|e| Error {
                what: what.to_owned(),
                path: path.clone(),
                why: e.to_string(),
            }),
        }
    }
}

/// Writes `bytes` (`what`: "the table") to standard output and flushes. A reader that went
/// away (a closed pipe, as with `| head`) is not an error: the rest is dropped quietly,
/// as other command-line tools do, and the command ends with the exit code it would have
/// had. Any other failure (`> /dev/full`) is an error.
pub fn print(what: &str, bytes: &[u8]) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written.map_err(|e| Error {
            what: what.to_owned(),
            path: PathBuf::from("-"),
            why: e.to_string(),
        }),
    }
}

/// Where the bytes for a path really go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A regular file, new or existing, at this path (symbolic links followed): written
    /// beside it and renamed over it.
    Atomic(PathBuf),
    /// Not a regular file (a device, a FIFO, a socket, or one of this process's
    /// descriptors): opened and written in place.
    InPlace(PathBuf),
}

/// Most symbolic links followed from one path, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// What `path` names, its symbolic links followed by hand so that a dangling link's target
/// is still known (and created).
fn target(path: &Path) -> std::io::Result<Target> {
    let mut at = path.to_owned();
    for _ in 0..MAX_LINKS {
        // `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: a descriptor of this process,
        // whatever it is open on; renaming over its link would not reach it.
        if std::fs::canonicalize(folder_of(&at)).is_ok_and(|dir| dir.starts_with("/proc")) {
            return Ok(Target::InPlace(path.to_owned()));
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&at)?;
                if link.starts_with("/proc") {
                    return Ok(Target::InPlace(path.to_owned()));
                }
                at = folder_of(&at).join(link);
            }
            Ok(meta) if meta.is_file() => return Ok(Target::Atomic(at)),
            Ok(meta) if meta.is_dir() => {
                return Err(std::io::Error::other(format!(
                    "`{}` is a directory",
                    at.display()
                )));
            }
            Ok(_) => return Ok(Target::InPlace(at)),
            // Not there yet (or under a file, which `prepare` names): made when written.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Target::Atomic(at));
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links from `{}`",
        path.display()
    )))
}

/// Writes `bytes` to what `path` names (see the module's doc): a regular file whole or
/// not at all, creating its folder; anything else in place.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match target(path)? {
        Target::Atomic(file) => write_atomically(&file, bytes),
        Target::InPlace(other) => {
            let mut file = std::fs::OpenOptions::new().write(true).open(other)?;
            file.write_all(bytes)?;
            file.flush()
        }
    }
}

/// Writes `bytes` to the regular file at `path` itself, whole or not at all, creating its
/// folder: a link there is replaced by the file, never followed. For the files a command
/// names itself beside another (a heap profile beside its report), where a link is
/// nobody's choice.
pub fn write_unfollowed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically(path, bytes)
}

/// Refuses a default path (`what` at `path`, one the command chose, not the user) that is
/// a symbolic link or lies in a folder that is one: written through, it would put the
/// file wherever whoever made the link chose.
pub fn refuse_links(what: &str, path: &Path) -> Result<(), Error> {
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error {
                what: what.to_owned(),
                path: path.to_owned(),
                why: format!(
                    "`{}` is a symbolic link, and a command follows none at a path it chose \
                     itself; remove it, or name the file yourself",
                    at.display()
                ),
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to a new file at `path` that only this user may read (0600): a secret
/// (a kubeconfig with the run's token). Nothing at `path` is followed or written over: a
/// file or a link already there (planted by someone else) is an error (`O_CREAT|O_EXCL`
/// never follows a link), so the bytes reach only a file this call made.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Writes `bytes` to the regular file `path` whole or not at all, creating its folder.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

/// What a path is on disk, to tell two spellings of one file apart from two files.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileId {
    /// An existing file: its device and inode.
    Inode(u64, u64),
    /// A file not made yet: its folder's canonical path and its name.
    New(PathBuf),
}

fn file_id(path: &Path) -> Option<FileId> {
    match std::fs::metadata(path) {
        Ok(meta) => Some(FileId::Inode(meta.dev(), meta.ino())),
        Err(_) => match target(path).ok()? {
            Target::Atomic(file) => {
                // The nearest folder that exists, with the rest of the path after it.
                let dir = folder_of(&file);
                let existing = dir
                    .ancestors()
                    .find(|a| a.exists())
                    .unwrap_or(Path::new("."));
                let rest = dir.strip_prefix(existing).ok()?;
                let canonical = std::fs::canonicalize(existing).ok()?;
                Some(FileId::New(canonical.join(rest).join(file.file_name()?)))
            }
            Target::InPlace(_) => None,
        },
    }
}

/// Whether `a` and `b` are one regular file (or would be once written). Devices, FIFOs
/// and descriptors are written in place and may take any number of outputs.
fn same_file(a: &Path, b: &Path) -> bool {
    let regular = |p: &Path| std::fs::metadata(p).map_or(true, |m| m.is_file());
    regular(a) && regular(b) && file_id(a).is_some_and(|id| Some(id) == file_id(b))
}

/// Two outputs that would go to one place, or an output onto an input.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Overlap(String);

/// Refuses, before anything runs, outputs that would go to one file (or both to standard
/// output), and outputs that would overwrite an input; each entry is (what it is, where),
/// and the refusal names both.
pub fn refuse_overlaps(
    outputs: &[(&str, &Destination)],
    inputs: &[(&str, &Path)],
) -> Result<(), Overlap> {
    for (i, (what, destination)) in outputs.iter().enumerate() {
        for (other, earlier) in &outputs[..i] {
            let overlap = match (destination, earlier) {
                (Destination::Stdout, Destination::Stdout) => true,
                (Destination::File(a), Destination::File(b)) => same_file(a, b),
                _ => false,
            };
            if overlap {
                return Err(Overlap(format!(
                    "{other} ({earlier}) and {what} ({destination}) would both go to \
                     {earlier}; give each its own path"
                )));
            }
        }
        let Destination::File(path) = destination else {
            continue;
        };
        for (input, input_path) in inputs {
            if same_file(path, input_path) {
                return Err(Overlap(format!(
                    "cannot write {what} to `{}`: that is the input `{}` ({input}); choose \
                     another path",
                    path.display(),
                    input_path.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_path_through_a_link_is_refused_and_a_named_file_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"mine").unwrap();
        let planted = dir.path().join("runs");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &planted).unwrap();
        let e = refuse_links("the report", &planted.join("x.json")).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert!(refuse_links("the report", &dir.path().join("real/x.json")).is_ok());
        let link = dir.path().join("profile.pb.gz");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_unfollowed(&link, b"profile").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&link).unwrap(), b"profile");
    }

    #[test]
    fn a_private_file_is_the_users_alone_and_never_follows_a_planted_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kubeconfig");
        write_private(&file, b"secret").unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(write_private(&file, b"again").is_err(), "written over");
        assert_eq!(std::fs::read(&file).unwrap(), b"secret");
        // A link planted where the file goes, to a file or to nothing yet: not followed.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"mine").unwrap();
        let planted = dir.path().join("planted");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(write_private(&planted, b"secret").is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("made-by-a-link"), &dangling).unwrap();
        assert!(write_private(&dangling, b"secret").is_err());
        assert!(!dir.path().join("made-by-a-link").exists());
    }

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
