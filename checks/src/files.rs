//! Finding and reading scenario files without trusting the file system.
//!
//! What `mmcheck` is given on the command line may be a file, a folder, a symbolic link, a
//! named pipe or a device. [`collect`] turns the named paths into the list of scenario files
//! to check and [`read_scenario`] reads one of them; neither can hang, loop or exhaust memory,
//! and every refusal is a [`FileError`] that names the path and says what to do instead (the
//! CLI prints it and exits with status 2).
//!
//! The rules:
//!
//! - A **named file** (or a symbolic link to one) is taken whatever its extension.
//! - A **named folder** (or a link to one) is walked recursively. Inside folders only regular
//!   `*.toml` files (or links to them) are taken; every other file is skipped, at the top of
//!   the named folder as in its subfolders.
//! - A **special file** (FIFO, socket, device, or a link to one, such as a `x.toml` link to
//!   `/dev/zero`) is an error when it is named on the command line or is called `*.toml`
//!   inside a folder. Its metadata is read with `stat`, which never blocks; it is never opened.
//! - A file larger than [`MAX_BYTES`] (1 MiB) is an error naming it and its size; at most
//!   `MAX_BYTES + 1` bytes are ever read from any file.
//! - A **dangling symbolic link** is an error when it is named on the command line or is
//!   called `*.toml` inside a folder (any other dangling link in a folder is not a scenario and
//!   is skipped, like any other non-`.toml` file).
//! - Every folder is walked once: folders are keyed on (device, inode). A symbolic link that
//!   leads back into a folder that is being walked (the folder itself or one containing it) is
//!   a **loop** and an error naming the link. A second route to a folder that is not being
//!   walked (a link to a sibling folder, or a folder named twice or inside another named
//!   folder) is not an error: that folder is simply not walked again. A chain of links that
//!   never ends (`a -> b -> a`) is a loop too when it is named or called `*.toml`.
//! - The same file reached twice (named twice, named and inside a named folder, or reached
//!   through a link) appears once, under the path by which it was first reached. Files are
//!   keyed on (device, inode).
//! - A named folder that contains no scenario file is an error (`FOLDER: no *.toml scenario
//!   files`); one whose scenario files were all reached already through an earlier path is not.
//! - Output: each named path's files sorted (folders are walked in name order, depth first),
//!   the named paths in the order given. The first error stops the collection.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, FileType, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::term::escape_control;

/// The largest scenario file accepted, in bytes (1 MiB). The shipped ones are under 2 KiB.
pub const MAX_BYTES: u64 = 1 << 20;

/// Why a path was refused. Every kind maps to exit status 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileErrorKind {
    /// Nothing there, or a dangling symbolic link.
    Missing,
    /// A FIFO, socket, device (or a link to one), or something else that is not a regular file.
    NotRegular,
    /// Larger than [`MAX_BYTES`].
    TooLarge,
    /// A symbolic link back into a folder being walked, or a chain of links that never ends.
    Loop,
    /// A named folder with no `*.toml` file in it.
    Empty,
    /// Permissions or another I/O error.
    Unreadable,
    /// The file is not UTF-8 text.
    NotUtf8,
}

/// A path that cannot be used as (or searched for) scenario files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub path: PathBuf,
    pub kind: FileErrorKind,
    /// What is wrong and what to do instead (without the path).
    pub message: String,
}

impl FileError {
    fn new(path: &Path, kind: FileErrorKind, message: impl Into<String>) -> FileError {
        FileError { path: path.to_path_buf(), kind, message: message.into() }
    }

    /// The exit status the CLI uses for this error: 2 (unusable input), whatever the kind.
    pub fn exit_status(&self) -> u8 {
        2
    }
}

/// `PATH: message`, with control characters in the path and message shown as escapes.
impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", escape_control(&self.path.display().to_string()), escape_control(&self.message))
    }
}

impl std::error::Error for FileError {}

// ---------------------------------------------------------------- identity of files

/// What makes two paths the same file or folder: (device, inode) on Unix.
#[cfg(unix)]
type Key = (u64, u64);
#[cfg(not(unix))]
type Key = PathBuf;

#[cfg(unix)]
fn key(_path: &Path, meta: &Metadata) -> Key {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn key(path: &Path, _meta: &Metadata) -> Key {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// "a FIFO (named pipe)", "a socket", ...: what a non-regular, non-folder file is.
fn special_kind(ft: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_dir() {
        return "a folder";
    }
    "not a regular file"
}

/// True for "too many levels of symbolic links" (ELOOP).
fn is_link_loop(e: &io::Error) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const ELOOP: i32 = 40;
    #[cfg(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))]
    const ELOOP: i32 = 62;
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))]
    if e.raw_os_error() == Some(ELOOP) {
        return true;
    }
    e.to_string().contains("symbolic links")
}

/// " (a symbolic link to TARGET)" when `path` is a link, else "".
fn via_link(path: &Path) -> String {
    match fs::read_link(path) {
        Ok(t) => format!(" (a symbolic link to {})", t.display()),
        Err(_) => String::new(),
    }
}

/// The error for a path whose `stat` failed (`named`: given on the command line).
fn stat_error(path: &Path, e: &io::Error, named: bool) -> FileError {
    if is_link_loop(e) {
        return FileError::new(
            path,
            FileErrorKind::Loop,
            "a chain of symbolic links that never ends (too many levels of symbolic links); fix or remove the link",
        );
    }
    if e.kind() == io::ErrorKind::NotFound {
        if let Ok(target) = fs::read_link(path) {
            return FileError::new(
                path,
                FileErrorKind::Missing,
                format!(
                    "a dangling symbolic link (to {}, which does not exist); fix or remove the link",
                    target.display()
                ),
            );
        }
        let what = if named { "name an existing scenario file (*.toml) or a folder of them" } else { "check the path" };
        return FileError::new(path, FileErrorKind::Missing, format!("no such file or folder; {what}"));
    }
    FileError::new(path, FileErrorKind::Unreadable, format!("cannot read: {e}; check its permissions"))
}

fn not_regular(path: &Path, meta: &Metadata, named: bool) -> FileError {
    let fix = if named {
        "name a regular scenario file (save the input to a file first)"
    } else {
        "remove it from the folder or rename it so that its name does not end in .toml"
    };
    FileError::new(
        path,
        FileErrorKind::NotRegular,
        format!(
            "{}{}, not a regular file; scenario files must be regular files: {fix}",
            special_kind(&meta.file_type()),
            via_link(path)
        ),
    )
}

/// `len`: the size `stat` reported, or (`at_least`) the bytes read before giving up.
fn too_large(path: &Path, len: u64, at_least: bool) -> FileError {
    FileError::new(
        path,
        FileErrorKind::TooLarge,
        format!(
            "{}{len} bytes; a scenario file may be at most {MAX_BYTES} bytes (1 MiB): this is not a scenario file, remove it or \
             name the scenario files you mean",
            if at_least { "at least " } else { "" },
        ),
    )
}

/// Whether `a` and `b` name the same file (through any path or link): the same (device, inode)
/// on Unix. False when either cannot be read.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(ma), Ok(mb)) => key(a, &ma) == key(b, &mb),
        _ => false,
    }
}

// ---------------------------------------------------------------- collect

struct Walk {
    /// Every file taken so far, by identity.
    files: HashMap<Key, ()>,
    /// Every folder walked completely, with the number of `*.toml` files found under it
    /// (counting files already taken through another route).
    folders: HashMap<Key, usize>,
    /// The folders being walked now, outermost first, with their paths.
    open: Vec<(Key, PathBuf)>,
}

fn is_toml(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "toml")
}

impl Walk {
    /// Take a regular file unless it was taken already.
    fn take(&mut self, path: &Path, meta: &Metadata, out: &mut Vec<PathBuf>) -> Result<(), FileError> {
        if meta.len() > MAX_BYTES {
            return Err(too_large(path, meta.len(), false));
        }
        if self.files.insert(key(path, meta), ()).is_none() {
            out.push(path.to_path_buf());
        }
        Ok(())
    }

    /// Walk the folder `dir` (whose metadata is `meta`); return how many `*.toml` files are in it.
    fn folder(&mut self, dir: &Path, meta: &Metadata, out: &mut Vec<PathBuf>) -> Result<usize, FileError> {
        let k = key(dir, meta);
        if let Some(n) = self.folders.get(&k) {
            return Ok(*n);
        }
        if let Some((_, outer)) = self.open.iter().find(|(o, _)| *o == k) {
            let what = match fs::read_link(dir) {
                Ok(t) => format!("a symbolic link to {} that leads back", t.display()),
                Err(_) => "leads back".to_string(),
            };
            return Err(FileError::new(
                dir,
                FileErrorKind::Loop,
                format!(
                    "{what} to {}, a folder being walked already (a loop); remove the link, or name the folder it points to \
                     on the command line instead",
                    outer.display()
                ),
            ));
        }
        let rd = fs::read_dir(dir).map_err(|e| {
            FileError::new(
                dir,
                FileErrorKind::Unreadable,
                format!("cannot read the folder: {e}; check its permissions"),
            )
        })?;
        let mut entries = Vec::new();
        for e in rd {
            let e = e.map_err(|e| {
                FileError::new(
                    dir,
                    FileErrorKind::Unreadable,
                    format!("cannot read the folder: {e}; check its permissions"),
                )
            })?;
            entries.push(e.path());
        }
        entries.sort();
        self.open.push((k, dir.to_path_buf()));
        let mut found = 0;
        for p in entries {
            let meta = match fs::metadata(&p) {
                Ok(m) => m,
                // A dangling link or a link chain not called *.toml is not a scenario, and
                // could not be walked as a folder either.
                Err(_) if !is_toml(&p) && fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) => {
                    continue
                }
                Err(e) => {
                    self.open.pop();
                    return Err(stat_error(&p, &e, false));
                }
            };
            let r = if meta.is_dir() {
                self.folder(&p, &meta, out).map(|n| found += n)
            } else if !is_toml(&p) {
                Ok(())
            } else if meta.is_file() {
                found += 1;
                self.take(&p, &meta, out)
            } else {
                Err(not_regular(&p, &meta, false))
            };
            if let Err(e) = r {
                self.open.pop();
                return Err(e);
            }
        }
        let (k, _) = self.open.pop().expect("pushed above");
        self.folders.insert(k, found);
        Ok(found)
    }
}

/// The scenario files the named `paths` stand for: see the module documentation for the rules.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileError> {
    let mut walk = Walk { files: HashMap::new(), folders: HashMap::new(), open: Vec::new() };
    let mut out = Vec::new();
    for p in paths {
        let meta = fs::metadata(p).map_err(|e| stat_error(p, &e, true))?;
        if meta.is_file() {
            walk.take(p, &meta, &mut out)?;
        } else if meta.is_dir() {
            let start = out.len();
            if walk.folder(p, &meta, &mut out)? == 0 {
                return Err(FileError::new(p, FileErrorKind::Empty, "no *.toml scenario files"));
            }
            out[start..].sort();
        } else {
            return Err(not_regular(p, &meta, true));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- read

/// `O_NONBLOCK`, so that a FIFO swapped in after the type check cannot block the open.
#[cfg(all(
    target_os = "linux",
    not(any(target_arch = "mips", target_arch = "mips64", target_arch = "sparc", target_arch = "sparc64"))
))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
const O_NONBLOCK: i32 = 0x4;
#[cfg(all(
    unix,
    not(any(
        all(
            target_os = "linux",
            not(any(target_arch = "mips", target_arch = "mips64", target_arch = "sparc", target_arch = "sparc64"))
        ),
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))
))]
const O_NONBLOCK: i32 = 0;

fn open(path: &Path) -> io::Result<fs::File> {
    let mut o = fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(O_NONBLOCK);
    }
    o.open(path)
}

/// The text of the scenario file `path`: refused, never blocked on, if it is not a regular
/// file (checked with `stat` before opening, and again on the opened file, which is opened
/// non-blocking); refused if it is larger than [`MAX_BYTES`] (at most `MAX_BYTES + 1` bytes are
/// read) or not UTF-8.
pub fn read_scenario(path: &Path) -> Result<String, FileError> {
    let meta = fs::metadata(path).map_err(|e| stat_error(path, &e, true))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta, true));
    }
    if meta.len() > MAX_BYTES {
        return Err(too_large(path, meta.len(), false));
    }
    let unreadable = |e: io::Error| {
        FileError::new(path, FileErrorKind::Unreadable, format!("cannot read the file: {e}; check its permissions"))
    };
    let file = open(path).map_err(|e| stat_error(path, &e, true))?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta, true));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_BYTES) as usize + 1);
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_large(path, bytes.len() as u64, true));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        FileError::new(
            path,
            FileErrorKind::NotUtf8,
            format!("not UTF-8 text (byte 0x{:02x} on line {line}); scenario files are TOML, which is UTF-8: save it as UTF-8", bytes[at]),
        )
    })
}
