//! What reaches a terminal from file names, scenario names and tokens: control characters
//! shown as escapes, and command lines quoted so that they can be pasted into a shell.

use std::borrow::Cow;
use std::fmt::Write;
use std::path::Path;

/// Characters that must not reach a terminal raw: the C0 controls (ESC included), DEL, the C1
/// controls (U+0080..=U+009F; U+009B is a one-character CSI on some terminals), and the
/// bidirectional embedding, override and isolate controls (U+202A..=U+202E, U+2066..=U+2069),
/// which make text display in an order other than the one it has.
pub fn is_hazard(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every [`is_hazard`] character replaced by a visible escape: `\n`, `\r`, `\t`,
/// `\x1b` (other ASCII controls and DEL, two hex digits), `\u{9b}` (C1 and bidirectional
/// controls). Everything else, ordinary Unicode and backslashes included, is left alone, so
/// text without hazards comes back borrowed and unchanged.
pub fn escape_control(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hazard) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hazard(c) && c.is_ascii() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_hazard(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A path for a terminal: its lossy display form through [`escape_control`].
pub fn show_path(p: &Path) -> String {
    escape_control(&p.display().to_string()).into_owned()
}

/// Like [`escape_control`], but line breaks (`\n`) are kept: for multi-line messages (TOML
/// syntax errors) whose lines must stay lines.
pub fn escape_control_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_hazard(c)) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.split('\n').map(|l| escape_control(l)).collect::<Vec<_>>().join("\n"))
}

/// Characters that need no quoting anywhere in a POSIX shell word.
fn is_shell_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c)
}

/// `s` as one POSIX shell word: unchanged when it is non-empty and made only of
/// `[A-Za-z0-9_./:=@%+,-]`; otherwise in single quotes, each `'` written `'\''`. The result
/// reads back as exactly `s` in every POSIX shell (`sh -c "printf %s $(shell_quote s)"` prints
/// `s`), whatever `s` contains. Control characters are kept as they are (quoted): this makes
/// `s` safe for a shell, not for a terminal; [`replay_command`] is both.
pub fn shell_quote(s: &str) -> Cow<'_, str> {
    if !s.is_empty() && s.chars().all(is_shell_safe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

/// `bytes` as one `$'...'` word (ANSI-C quoting: bash, zsh, ksh, mksh, busybox sh, and POSIX
/// sh since POSIX.1-2024, but not dash): hazards, other control bytes and bytes that are not
/// UTF-8 as three-digit octal escapes, `\` and `'` escaped, ordinary text as it is. Nothing a
/// terminal acts on is left in it.
fn ansi_c_quote(bytes: &[u8]) -> String {
    let mut out = String::from("$'");
    let mut rest = bytes;
    let octal = |out: &mut String, b: &[u8]| {
        for x in b {
            let _ = write!(out, "\\{x:03o}");
        }
    };
    while !rest.is_empty() {
        let (good, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, 0),
            Err(e) => {
                let good = std::str::from_utf8(&rest[..e.valid_up_to()]).expect("valid up to here");
                (good, e.error_len().unwrap_or(rest.len() - e.valid_up_to()))
            }
        };
        for c in good.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if is_hazard(c) => octal(&mut out, c.encode_utf8(&mut [0; 4]).as_bytes()),
                c => out.push(c),
            }
        }
        let at = good.len();
        octal(&mut out, &rest[at..at + bad]);
        rest = &rest[at + bad..];
    }
    out.push('\'');
    out
}

/// One argument of a pasteable command line: [`shell_quote`] when the text is UTF-8 without
/// hazards (portable to every POSIX shell), else [`ansi_c_quote`] of its exact bytes (no raw
/// control characters on the terminal, and still the exact bytes in bash, zsh and ksh).
fn shell_arg(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(is_hazard) => shell_quote(s).into_owned(),
        _ => ansi_c_quote(bytes),
    }
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    Cow::Borrowed(p.as_os_str().as_bytes())
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Cow<'_, [u8]> {
    match p.to_string_lossy() {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

/// `mmcheck check FILE --replay TOKEN`, ready to paste: each argument is one shell word (see
/// [`shell_quote`]); a relative FILE starting with `-` gets a `./` so that it is not read as an
/// option. When FILE or TOKEN has a control character or (FILE) bytes that are not UTF-8, that
/// argument is written `$'...'` with octal escapes instead: the line then carries nothing a
/// terminal acts on, and names exactly the same bytes in bash, zsh and ksh (dash does not
/// understand `$'...'`).
pub fn replay_command(file: &Path, token: &str) -> String {
    let bytes = path_bytes(file);
    let file_arg = if bytes.first() == Some(&b'-') {
        let mut b = b"./".to_vec();
        b.extend_from_slice(&bytes);
        shell_arg(&b)
    } else {
        shell_arg(&bytes)
    };
    format!("mmcheck check {file_arg} --replay {}", shell_arg(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_leaves_unicode() {
        assert_eq!(escape_control("plain-ünïcödé ✓ \\x"), "plain-ünïcödé ✓ \\x");
        assert!(matches!(escape_control("plain"), Cow::Borrowed(_)));
        assert_eq!(escape_control("a\x1b[31mb\n\t\r\x7f\u{9b}\u{202e}c"), "a\\x1b[31mb\\n\\t\\r\\x7f\\u{9b}\\u{202e}c");
        assert_eq!(escape_control("\0"), "\\x00");
        assert_eq!(escape_control_lines("a\x1b\nb\n"), "a\\x1b\nb\n");
    }

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(shell_quote("scenarios/a-b_c.toml"), "scenarios/a-b_c.toml");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("$(x)"), "'$(x)'");
        assert_eq!(shell_quote("~x"), "'~x'");
    }

    #[test]
    fn replay_lines() {
        assert_eq!(
            replay_command(Path::new("scenarios/x.toml"), "loom-3-ab12"),
            "mmcheck check scenarios/x.toml --replay loom-3-ab12"
        );
        assert_eq!(replay_command(Path::new("my dir/x.toml"), "t"), "mmcheck check 'my dir/x.toml' --replay t");
        assert_eq!(replay_command(Path::new("-x.toml"), "t"), "mmcheck check ./-x.toml --replay t");
        assert_eq!(replay_command(Path::new("e\x1bv'l.toml"), "t"), "mmcheck check $'e\\033v\\'l.toml' --replay t");
        assert!(!replay_command(Path::new("a\u{9b}\nb"), "t\x07").chars().any(is_hazard));
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_paths_are_quoted_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"a\xffb\xc3\xa9.toml"));
        assert_eq!(replay_command(p, "t"), "mmcheck check $'a\\377bé.toml' --replay t");
    }
}
