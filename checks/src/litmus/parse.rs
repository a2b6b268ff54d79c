//! The parser: a hand-written lexer and recursive-descent parser for C litmus tests.
//!
//! The lexer has two modes. Outside the threads (header, initial state, final condition)
//! `(* ... *)` is a comment, as in herd's litmus syntax; inside a thread (`Pn(...) { ... }`)
//! it is not, since `READ_ONCE(*x)` contains `(*`. `/* ... */` and `// ...` are comments
//! everywhere. The parser switches the mode at a thread's first and last token.
//!
//! Every error carries the file and a line; no input makes the parser panic (nesting is
//! bounded by [`MAX_DEPTH`], integers are checked, slicing is on character boundaries).

use std::collections::HashSet;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::ast::*;

/// The deepest nesting of blocks, parentheses and unary operators the parser accepts.
pub const MAX_DEPTH: usize = 64;

/// The largest file [`parse_file`] reads.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Why a file is not a [`Litmus`] value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LitmusError {
    /// A valid litmus test that uses something outside the supported fragment (RCU, plain C
    /// accesses, pointer values, `filter`, `spin_is_locked()`, ...). `construct` names it.
    Unsupported {
        /// The file.
        file: PathBuf,
        /// The line of the construct.
        line: usize,
        /// What it is, e.g. ``RCU: `rcu_read_lock()` ``.
        construct: String,
    },
    /// Text that is not a C litmus test (a syntax error, an unknown register, ...).
    Malformed {
        /// The file.
        file: PathBuf,
        /// The line where the problem was found.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file could not be read.
    Io {
        /// The file.
        file: PathBuf,
        /// The reason.
        message: String,
    },
}

impl fmt::Display for LitmusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LitmusError::Unsupported { file, line, construct } => {
                write!(f, "unsupported: {construct} at {}:{line}", file.display())
            }
            LitmusError::Malformed { file, line, message } => write!(f, "{}:{line}: {message}", file.display()),
            LitmusError::Io { file, message } => write!(f, "{}: {message}", file.display()),
        }
    }
}

impl std::error::Error for LitmusError {}

/// Reads and parses a litmus file (at most [`MAX_FILE_BYTES`] bytes, UTF-8).
pub fn parse_file(path: &Path) -> Result<Litmus, LitmusError> {
    let io = |message: String| LitmusError::Io { file: path.to_path_buf(), message };
    let meta = std::fs::metadata(path).map_err(|e| io(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(io("not a regular file".to_string()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| io(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        LitmusError::Malformed { file: path.to_path_buf(), line, message: "not UTF-8 text".to_string() }
    })?;
    parse(path, &text)
}

/// Parses the text of a litmus test; `path` is only used in the result and in errors.
pub fn parse(path: &Path, text: &str) -> Result<Litmus, LitmusError> {
    Parser::new(path, text).litmus()
}

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str,
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
    /// Byte offset of the token's first character.
    start: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Header, initial state, final condition: `(* *)` is a comment.
    Litmus,
    /// Thread code: `(*` is two tokens.
    C,
}

/// Punctuation, longest first.
const PUNCTS: &[&str] = &[
    "/\\", "\\/", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "++", "--", "+=", "-=", "*=", "/=", "|=", "&=", "^=",
    "->", "{", "}", "(", ")", "[", "]", ";", ",", "*", "&", "=", "!", "~", "+", "-", "|", "^", ":", "<", ">", ".", "/",
    "%", "?",
];

struct Comment {
    text: String,
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    comments: Vec<Comment>,
    /// End of the last recorded comment: a comment lexed again after a rewind is not
    /// recorded twice.
    comments_end: usize,
}

type LexError = (usize, String);

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0, line: 1, comments: Vec::new(), comments_end: 0 }
    }

    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek_char(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn bump_n(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }

    fn record_comment(&mut self, start: usize) {
        if start >= self.comments_end {
            let text = self.src.get(start..self.pos).unwrap_or("").to_string();
            self.comments.push(Comment { text });
            self.comments_end = self.pos;
        }
    }

    fn skip_trivia(&mut self, mode: Mode) -> Result<(), LexError> {
        loop {
            let rest = self.rest();
            let Some(c) = rest.chars().next() else { return Ok(()) };
            if c.is_whitespace() {
                self.bump();
            } else if rest.starts_with("//") {
                let start = self.pos;
                while let Some(c) = self.peek_char() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
                self.record_comment(start);
            } else if rest.starts_with("/*") {
                let (start, line) = (self.pos, self.line);
                self.bump_n(2);
                loop {
                    if self.rest().starts_with("*/") {
                        self.bump_n(2);
                        break;
                    }
                    if self.bump().is_none() {
                        return Err((line, "unterminated `/*` comment".to_string()));
                    }
                }
                self.record_comment(start);
            } else if mode == Mode::Litmus && rest.starts_with("(*") {
                let (start, line) = (self.pos, self.line);
                self.bump_n(2);
                let mut depth = 1usize;
                while depth > 0 {
                    let rest = self.rest();
                    if rest.starts_with("*)") {
                        depth -= 1;
                        self.bump_n(2);
                    } else if rest.starts_with("(*") {
                        depth += 1;
                        self.bump_n(2);
                    } else if self.bump().is_none() {
                        return Err((line, "unterminated `(*` comment".to_string()));
                    }
                }
                self.record_comment(start);
            } else {
                return Ok(());
            }
        }
    }

    /// The next whitespace-delimited word on the current line (the test's name).
    fn word_on_line(&mut self) -> String {
        while let Some(c) = self.peek_char() {
            if c == '\n' || !c.is_whitespace() {
                break;
            }
            self.bump();
        }
        let start = self.pos;
        while let Some(c) = self.peek_char() {
            if c.is_whitespace() {
                break;
            }
            self.bump();
        }
        self.src.get(start..self.pos).unwrap_or("").to_string()
    }

    fn next(&mut self, mode: Mode) -> Result<Token, LexError> {
        self.skip_trivia(mode)?;
        let (start, line) = (self.pos, self.line);
        let tok = |tok| Ok(Token { tok, line, start });
        let rest = self.rest();
        let Some(c) = rest.chars().next() else { return tok(Tok::Eof) };
        if c.is_ascii_alphabetic() || c == '_' {
            let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            self.bump_n(len);
            return tok(Tok::Ident(rest[..len].to_string()));
        }
        if c.is_ascii_digit() {
            let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let word = &rest[..len];
            self.bump_n(len);
            let value = if let Some(hex) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
                i64::from_str_radix(hex, 16)
            } else {
                word.parse::<i64>()
            };
            return match value {
                Ok(v) => tok(Tok::Int(v)),
                Err(_) if word.bytes().all(|b| b.is_ascii_digit()) => {
                    Err((line, format!("integer `{word}` is out of range")))
                }
                Err(_) => Err((line, format!("bad number `{word}`"))),
            };
        }
        if c == '"' {
            self.bump();
            loop {
                match self.bump() {
                    Some('"') => return tok(Tok::Str),
                    Some('\\') => {
                        self.bump();
                    }
                    Some(_) => {}
                    None => return Err((line, "unterminated string".to_string())),
                }
            }
        }
        for p in PUNCTS {
            if rest.starts_with(p) {
                self.bump_n(p.chars().count());
                return tok(Tok::Punct(p));
            }
        }
        Err((line, format!("unexpected character {c:?}")))
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Int(v) => format!("`{v}`"),
        Tok::Str => "a string".to_string(),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Eof => "the end of the file".to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Names

/// herd7's architecture names other than `C`: a test that starts with one is a litmus test,
/// just not a C one.
const OTHER_ARCHS: &[&str] =
    &["X86", "X86_64", "AArch64", "ARM", "PPC", "MIPS", "RISCV", "LISA", "BPF", "ASL", "PTX", "GPU_PTX", "OpenCL"];

/// Words that make up a plain integer type.
const INT_TYPE_WORDS: &[&str] = &[
    "int", "long", "unsigned", "signed", "short", "char", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
    "volatile", "const",
];

fn is_int_type_word(s: &str) -> bool {
    INT_TYPE_WORDS.contains(&s)
}

/// A primitive's argument kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArgKind {
    Loc,
    Val,
}

use ArgKind::{Loc as L, Val as V};

/// How a name is parsed as a call.
enum Callee {
    /// A primitive with its argument list.
    Prim(Prim, &'static [ArgKind]),
    /// `atomic_*_and_test` (`== 0`) and `atomic_add_negative*` (`< 0`): the comparison of a
    /// value-returning RMW with 0, as linux-kernel.def defines them.
    Compare(BinOp, Prim, &'static [ArgKind]),
}

fn order_suffix(name: &str) -> (&str, Order) {
    for (suffix, order) in [("_relaxed", Order::Relaxed), ("_acquire", Order::Acquire), ("_release", Order::Release)] {
        if let Some(base) = name.strip_suffix(suffix) {
            return (base, order);
        }
    }
    (name, Order::Full)
}

fn rmw_op(word: &str) -> Option<RmwOp> {
    Some(match word {
        "add" => RmwOp::Add,
        "sub" => RmwOp::Sub,
        "inc" => RmwOp::Inc,
        "dec" => RmwOp::Dec,
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        "andnot" => RmwOp::AndNot,
        _ => return None,
    })
}

fn rmw_args(op: RmwOp) -> &'static [ArgKind] {
    if matches!(op, RmwOp::Inc | RmwOp::Dec) {
        &[L]
    } else {
        &[V, L]
    }
}

/// The primitives of the fragment, as linux-kernel.def names them.
fn callee(name: &str) -> Option<Callee> {
    let prim = |p, a| Some(Callee::Prim(p, a));
    match name {
        "READ_ONCE" => return prim(Prim::ReadOnce, &[L]),
        "WRITE_ONCE" => return prim(Prim::WriteOnce, &[L, V]),
        "smp_load_acquire" => return prim(Prim::LoadAcquire, &[L]),
        "smp_store_release" => return prim(Prim::StoreRelease, &[L, V]),
        "smp_mb" => return prim(Prim::Mb, &[]),
        "smp_rmb" => return prim(Prim::Rmb, &[]),
        "smp_wmb" => return prim(Prim::Wmb, &[]),
        "smp_mb__before_atomic" => return prim(Prim::MbBeforeAtomic, &[]),
        "smp_mb__after_atomic" => return prim(Prim::MbAfterAtomic, &[]),
        "smp_mb__after_spinlock" => return prim(Prim::MbAfterSpinlock, &[]),
        "smp_mb__after_unlock_lock" => return prim(Prim::MbAfterUnlockLock, &[]),
        "atomic_read" => return prim(Prim::AtomicRead, &[L]),
        "atomic_read_acquire" => return prim(Prim::AtomicReadAcquire, &[L]),
        "atomic_set" => return prim(Prim::AtomicSet, &[L, V]),
        "atomic_set_release" => return prim(Prim::AtomicSetRelease, &[L, V]),
        "spin_lock" => return prim(Prim::SpinLock, &[L]),
        "spin_unlock" => return prim(Prim::SpinUnlock, &[L]),
        "spin_trylock" => return prim(Prim::SpinTrylock, &[L]),
        "atomic_sub_and_test" => {
            let p = Prim::AtomicRmw { op: RmwOp::Sub, ret: Ret::New, order: Order::Full };
            return Some(Callee::Compare(BinOp::Eq, p, &[V, L]));
        }
        "atomic_dec_and_test" | "atomic_inc_and_test" => {
            let op = if name == "atomic_dec_and_test" { RmwOp::Dec } else { RmwOp::Inc };
            let p = Prim::AtomicRmw { op, ret: Ret::New, order: Order::Full };
            return Some(Callee::Compare(BinOp::Eq, p, &[L]));
        }
        _ => {}
    }
    let (base, order) = order_suffix(name);
    match base {
        "xchg" => return prim(Prim::Xchg(order), &[L, V]),
        "cmpxchg" => return prim(Prim::Cmpxchg(order), &[L, V, V]),
        "atomic_xchg" => return prim(Prim::AtomicXchg(order), &[L, V]),
        "atomic_cmpxchg" => return prim(Prim::AtomicCmpxchg(order), &[L, V, V]),
        "atomic_add_negative" => {
            let p = Prim::AtomicRmw { op: RmwOp::Add, ret: Ret::New, order };
            return Some(Callee::Compare(BinOp::Lt, p, &[V, L]));
        }
        _ => {}
    }
    // atomic_OP (void, no ordering suffix), atomic_OP_return*, atomic_fetch_OP*.
    let rest = base.strip_prefix("atomic_")?;
    if let Some(op) = rest.strip_prefix("fetch_").and_then(rmw_op) {
        return prim(Prim::AtomicRmw { op, ret: Ret::Old, order }, rmw_args(op));
    }
    if let Some(op) = rest.strip_suffix("_return").and_then(rmw_op) {
        // Only add/sub/inc/dec have _return forms in the kernel and in linux-kernel.def.
        if matches!(op, RmwOp::Add | RmwOp::Sub | RmwOp::Inc | RmwOp::Dec) {
            return prim(Prim::AtomicRmw { op, ret: Ret::New, order }, rmw_args(op));
        }
        return None;
    }
    if order == Order::Full {
        if let Some(op) = rmw_op(rest) {
            return prim(Prim::AtomicRmw { op, ret: Ret::Void, order: Order::Relaxed }, rmw_args(op));
        }
    }
    None
}

/// How an unsupported call is named in an [`LitmusError::Unsupported`].
fn unsupported_call(name: &str) -> String {
    if name.starts_with("srcu_") || name.starts_with("synchronize_srcu") || name.contains("srcu_read") {
        format!("SRCU: `{name}()`")
    } else if name.starts_with("rcu_") || name.starts_with("synchronize_rcu") {
        format!("RCU: `{name}()`")
    } else if matches!(name, "spin_is_locked" | "smp_store_mb" | "barrier" | "atomic_add_unless")
        || name.starts_with("atomic_")
        || name.starts_with("smp_")
        || name.starts_with("spin_")
    {
        format!("`{name}()`")
    } else {
        format!("unknown function `{name}()`")
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

struct Parser<'a> {
    file: &'a Path,
    lx: Lexer<'a>,
    mode: Mode,
    peeked: Option<Token>,
    depth: usize,
    locations: Vec<String>,
    /// Registers initialised in the initial-state block, per thread index.
    init_regs: Vec<(usize, String, usize)>,
    /// The current thread's parameters.
    params: Vec<Param>,
    /// The registers the current thread has declared or assigned so far.
    regs: HashSet<String>,
    /// The index of the current thread (for messages).
    thread: usize,
}

type R<T> = Result<T, LitmusError>;

impl<'a> Parser<'a> {
    fn new(file: &'a Path, text: &'a str) -> Self {
        Parser {
            file,
            lx: Lexer::new(text),
            mode: Mode::Litmus,
            peeked: None,
            depth: 0,
            locations: Vec::new(),
            init_regs: Vec::new(),
            params: Vec::new(),
            regs: HashSet::new(),
            thread: 0,
        }
    }

    fn malformed<T>(&self, line: usize, message: impl Into<String>) -> R<T> {
        Err(LitmusError::Malformed { file: self.file.to_path_buf(), line, message: message.into() })
    }

    fn unsupported<T>(&self, line: usize, construct: impl Into<String>) -> R<T> {
        Err(LitmusError::Unsupported { file: self.file.to_path_buf(), line, construct: construct.into() })
    }

    fn peek(&mut self) -> R<Token> {
        if self.peeked.is_none() {
            match self.lx.next(self.mode) {
                Ok(t) => self.peeked = Some(t),
                Err((line, m)) => return self.malformed(line, m),
            }
        }
        Ok(self.peeked.clone().expect("just set"))
    }

    fn next(&mut self) -> R<Token> {
        let t = self.peek()?;
        self.peeked = None;
        Ok(t)
    }

    /// Switches the lexer's mode; a token already looked at is lexed again in the new mode.
    fn set_mode(&mut self, mode: Mode) {
        if self.mode != mode {
            self.mode = mode;
            if let Some(t) = self.peeked.take() {
                self.lx.pos = t.start;
                self.lx.line = t.line;
            }
        }
    }

    fn at_punct(&mut self, p: &str) -> R<bool> {
        Ok(matches!(self.peek()?.tok, Tok::Punct(q) if q == p))
    }

    fn eat_punct(&mut self, p: &str) -> R<bool> {
        let at = self.at_punct(p)?;
        if at {
            self.next()?;
        }
        Ok(at)
    }

    fn expect_punct(&mut self, p: &str, context: &str) -> R<Token> {
        let t = self.next()?;
        match t.tok {
            Tok::Punct(q) if q == p => Ok(t),
            ref other => self.malformed(t.line, format!("expected `{p}` {context}, found {}", describe(other))),
        }
    }

    fn at_ident(&mut self, name: &str) -> R<bool> {
        Ok(matches!(self.peek()?.tok, Tok::Ident(ref s) if s == name))
    }

    fn expect_ident(&mut self, context: &str) -> R<(String, usize)> {
        let t = self.next()?;
        match t.tok {
            Tok::Ident(s) => Ok((s, t.line)),
            ref other => self.malformed(t.line, format!("expected a name {context}, found {}", describe(other))),
        }
    }

    fn enter(&mut self, line: usize) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.malformed(line, format!("nested more than {MAX_DEPTH} deep"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn add_location(&mut self, name: &str) {
        if !self.locations.iter().any(|l| l == name) {
            self.locations.push(name.to_string());
        }
    }

    // -- The whole test -----------------------------------------------------------------------

    fn litmus(mut self) -> R<Litmus> {
        let first = self.next()?;
        match first.tok {
            Tok::Ident(ref a) if a == "C" => {}
            Tok::Ident(ref a) if OTHER_ARCHS.contains(&a.as_str()) => {
                return self.unsupported(first.line, format!("{a} litmus test (only C tests are supported)"));
            }
            ref other => {
                return self
                    .malformed(first.line, format!("expected `C NAME` to start the test, found {}", describe(other)))
            }
        }
        let name = self.lx.word_on_line();
        if name.is_empty() {
            return self.malformed(first.line, "expected the test's name after `C`");
        }
        while matches!(self.peek()?.tok, Tok::Str) {
            self.next()?;
        }
        let brace = self.peek()?;
        if !matches!(brace.tok, Tok::Punct("{")) {
            return self.malformed(
                brace.line,
                format!("expected `{{` to open the initial state, found {}", describe(&brace.tok)),
            );
        }
        let result = self.lx.comments.iter().find_map(|c| result_in(&c.text));
        let init = self.init_block()?;
        let mut threads = Vec::new();
        let mut thread_regs = Vec::new();
        loop {
            let t = self.peek()?;
            let Tok::Ident(ref id) = t.tok else { break };
            let Some(index) = thread_index(id) else { break };
            self.next()?;
            if index != threads.len() {
                return self.malformed(t.line, format!("expected P{}, found {id}", threads.len()));
            }
            let (thread, regs) = self.thread(index, t.line)?;
            threads.push(thread);
            thread_regs.push(regs);
        }
        if threads.is_empty() {
            let t = self.peek()?;
            return self.malformed(t.line, format!("expected a thread `P0(...)`, found {}", describe(&t.tok)));
        }
        for (thread, reg, line) in &self.init_regs {
            if *thread >= threads.len() {
                return self.malformed(*line, format!("initial value for `{thread}:{reg}`, but there is no P{thread}"));
            }
        }
        let cond = self.condition(&thread_regs)?;
        let t = self.peek()?;
        if t.tok != Tok::Eof {
            return self.malformed(t.line, format!("unexpected {} after the final condition", describe(&t.tok)));
        }
        Ok(Litmus { path: self.file.to_path_buf(), name, result, init, locations: self.locations, threads, cond })
    }

    // -- Initial state ------------------------------------------------------------------------

    fn init_block(&mut self) -> R<Vec<Init>> {
        self.expect_punct("{", "to open the initial state")?;
        let mut init = Vec::new();
        loop {
            if self.eat_punct("}")? {
                return Ok(init);
            }
            if self.eat_punct(";")? {
                continue;
            }
            self.init_item(&mut init)?;
            if !self.at_punct("}")? {
                self.expect_punct(";", "after an initial value")?;
            }
        }
    }

    fn init_value(&mut self, target: &str) -> R<i64> {
        let t = self.next()?;
        match t.tok {
            Tok::Int(v) => Ok(v),
            Tok::Punct("-") => {
                let n = self.next()?;
                match n.tok {
                    Tok::Int(v) => Ok(-v),
                    ref other => {
                        self.malformed(n.line, format!("expected a number after `-`, found {}", describe(other)))
                    }
                }
            }
            Tok::Ident(ref s) if s == "ATOMIC_INIT" => {
                self.expect_punct("(", "after `ATOMIC_INIT`")?;
                let v = self.init_value(target)?;
                self.expect_punct(")", "to close `ATOMIC_INIT(`")?;
                Ok(v)
            }
            Tok::Ident(ref s) => self.unsupported(t.line, format!("pointer-valued init `{target}={s}`")),
            Tok::Punct("&") => self.unsupported(t.line, format!("pointer-valued init `{target}=&...`")),
            ref other => self.malformed(t.line, format!("expected a value for `{target}`, found {}", describe(other))),
        }
    }

    fn init_item(&mut self, init: &mut Vec<Init>) -> R<()> {
        let t = self.next()?;
        let line = t.line;
        match t.tok {
            Tok::Int(thread) => {
                self.expect_punct(":", "after a thread number")?;
                let (reg, _) = self.expect_ident("(a register) after `N:`")?;
                self.init_reg(init, thread, reg, line)
            }
            Tok::Ident(word) => {
                if self.at_punct(":")? {
                    let Some(thread) = thread_index(&word) else {
                        return self.malformed(line, format!("expected a thread `N:` or `PN:`, found `{word}:`"));
                    };
                    self.next()?;
                    let (reg, _) = self.expect_ident("(a register) after `PN:`")?;
                    return self.init_reg(init, thread as i64, reg, line);
                }
                if self.eat_punct("=")? {
                    let value = self.init_value(&word)?;
                    self.add_location(&word);
                    init.push(Init { target: InitTarget::Loc(word), value, line });
                    return Ok(());
                }
                // A declaration: TYPE [*] NAME [= VALUE]
                let kind = if is_int_type_word(&word) {
                    while let Tok::Ident(ref w) = self.peek()?.tok {
                        if !is_int_type_word(w) {
                            break;
                        }
                        self.next()?;
                    }
                    ParamKind::Int
                } else if word == "atomic_t" {
                    ParamKind::Atomic
                } else if word == "spinlock_t" {
                    ParamKind::SpinLock
                } else if matches!(self.peek()?.tok, Tok::Ident(_)) || self.at_punct("*")? {
                    return self.unsupported(line, format!("type `{word}` in the initial state"));
                } else {
                    return self.malformed(line, format!("expected `NAME=VALUE` or a declaration, found `{word}`"));
                };
                if self.eat_punct("*")? {
                    let target = self.plain_target()?;
                    return self.unsupported(line, format!("pointer-valued init `{word} *{target}`"));
                }
                let (name, _) = self.expect_ident("to declare")?;
                if self.at_punct("[")? {
                    return self.unsupported(line, format!("array `{name}[]`"));
                }
                self.add_location(&name);
                if self.eat_punct("=")? {
                    if kind == ParamKind::SpinLock {
                        return self.unsupported(line, format!("initialiser for spinlock `{name}`"));
                    }
                    let value = self.init_value(&name)?;
                    init.push(Init { target: InitTarget::Loc(name), value, line });
                }
                Ok(())
            }
            ref other => self.malformed(line, format!("expected an initial value, found {}", describe(other))),
        }
    }

    fn init_reg(&mut self, init: &mut Vec<Init>, thread: i64, reg: String, line: usize) -> R<()> {
        self.expect_punct("=", "after a register in the initial state")?;
        let value = self.init_value(&format!("{thread}:{reg}"))?;
        let Ok(thread) = usize::try_from(thread) else { return self.malformed(line, "bad thread number") };
        self.init_regs.push((thread, reg.clone(), line));
        init.push(Init { target: InitTarget::Reg { thread, reg }, value, line });
        Ok(())
    }

    // -- Threads ------------------------------------------------------------------------------

    /// Parses `(params) { body }` after `Pn`; returns the thread and the registers it knows.
    fn thread(&mut self, index: usize, line: usize) -> R<(Thread, HashSet<String>)> {
        self.set_mode(Mode::C);
        self.thread = index;
        self.params = Vec::new();
        self.regs = self.init_regs.iter().filter(|(t, _, _)| *t == index).map(|(_, r, _)| r.clone()).collect();
        self.expect_punct("(", &format!("after P{index}"))?;
        if !self.eat_punct(")")? {
            loop {
                self.param()?;
                if self.eat_punct(")")? {
                    break;
                }
                self.expect_punct(",", "between parameters")?;
            }
        }
        let open = self.expect_punct("{", &format!("to open P{index}'s body"))?;
        let mut body = Vec::new();
        while !self.at_punct("}")? {
            if self.peek()?.tok == Tok::Eof {
                return self.malformed(open.line, format!("P{index}'s body is not closed"));
            }
            self.stmt(&mut body)?;
        }
        self.next()?;
        self.set_mode(Mode::Litmus);
        let params = std::mem::take(&mut self.params);
        Ok((Thread { index, params, body, line }, std::mem::take(&mut self.regs)))
    }

    fn param(&mut self) -> R<()> {
        let (word, line) = self.expect_ident("(a parameter type)")?;
        let kind = if is_int_type_word(&word) {
            while let Tok::Ident(ref w) = self.peek()?.tok {
                if !is_int_type_word(w) {
                    break;
                }
                self.next()?;
            }
            ParamKind::Int
        } else if word == "atomic_t" {
            ParamKind::Atomic
        } else if word == "spinlock_t" {
            ParamKind::SpinLock
        } else {
            return self.unsupported(line, format!("parameter type `{word}`"));
        };
        let mut stars = 0;
        while self.eat_punct("*")? {
            stars += 1;
        }
        let (name, _) = self.expect_ident("(a parameter)")?;
        match stars {
            1 => {}
            0 => return self.unsupported(line, format!("non-pointer parameter `{word} {name}`")),
            _ => return self.unsupported(line, format!("pointer-to-pointer parameter `{word} **{name}`")),
        }
        if self.params.iter().any(|p| p.name == name) {
            return self.malformed(line, format!("parameter `{name}` appears twice"));
        }
        self.add_location(&name);
        self.params.push(Param { name, kind });
        Ok(())
    }

    fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name == name)
    }

    // -- Statements ---------------------------------------------------------------------------

    fn stmt(&mut self, out: &mut Vec<Stmt>) -> R<()> {
        let t = self.peek()?;
        self.enter(t.line)?;
        let r = self.stmt_inner(out, t);
        self.leave();
        r
    }

    fn stmt_inner(&mut self, out: &mut Vec<Stmt>, t: Token) -> R<()> {
        let line = t.line;
        match t.tok {
            Tok::Punct("{") => {
                self.next()?;
                while !self.at_punct("}")? {
                    if self.peek()?.tok == Tok::Eof {
                        return self.malformed(line, "block is not closed");
                    }
                    self.stmt(out)?;
                }
                self.next()?;
                Ok(())
            }
            Tok::Punct(";") => {
                self.next()?;
                Ok(())
            }
            Tok::Punct("*") => {
                self.next()?;
                let target = self.plain_target()?;
                self.unsupported(line, format!("plain C access `*{target} = ...`"))
            }
            Tok::Punct("(") => {
                // `(void)CALL;`
                self.next()?;
                if self.at_ident("void")? {
                    self.next()?;
                    self.expect_punct(")", "after `(void`")?;
                    let expr = self.effect_call()?;
                    self.expect_punct(";", "after a call")?;
                    out.push(Stmt::Do { expr, line });
                    Ok(())
                } else {
                    self.malformed(line, "a statement cannot start with `(` (only `(void)` is taken)")
                }
            }
            Tok::Ident(ref word) => {
                let word = word.clone();
                match word.as_str() {
                    "if" => {
                        self.next()?;
                        let stmt = self.if_stmt(line)?;
                        out.push(stmt);
                        Ok(())
                    }
                    "else" => self.malformed(line, "`else` without `if`"),
                    "while" | "for" | "do" | "goto" => self.unsupported(line, format!("loop (`{word}`)")),
                    "switch" | "return" | "break" | "continue" => self.unsupported(line, format!("`{word}` statement")),
                    "atomic_t" | "spinlock_t" => self.unsupported(line, format!("local `{word}` variable")),
                    w if is_int_type_word(w) => self.decl(out),
                    _ => {
                        self.next()?;
                        self.name_stmt(out, word, line)
                    }
                }
            }
            ref other => self.malformed(line, format!("expected a statement, found {}", describe(other))),
        }
    }

    /// A statement starting with a name: `r = EXPR;` or `CALL(...);`.
    fn name_stmt(&mut self, out: &mut Vec<Stmt>, word: String, line: usize) -> R<()> {
        let t = self.peek()?;
        match t.tok {
            Tok::Punct("=") => {
                self.next()?;
                if self.is_param(&word) {
                    return self.unsupported(line, format!("assignment to pointer parameter `{word}`"));
                }
                let expr = self.expr()?;
                self.expect_punct(";", "after an assignment")?;
                self.regs.insert(word.clone());
                out.push(Stmt::Assign { reg: word, expr, line });
                Ok(())
            }
            Tok::Punct("(") => {
                let expr = self.call(word, line)?;
                self.expect_punct(";", "after a call")?;
                out.push(Stmt::Do { expr, line });
                Ok(())
            }
            Tok::Punct(p @ ("++" | "--" | "+=" | "-=" | "*=" | "/=" | "|=" | "&=" | "^=")) => {
                self.unsupported(line, format!("`{p}` on `{word}`"))
            }
            Tok::Punct(p @ ("->" | "." | "[")) => self.unsupported(line, format!("`{p}` on `{word}`")),
            ref other => self.malformed(line, format!("expected `=` or `(` after `{word}`, found {}", describe(other))),
        }
    }

    /// The call of `(void)CALL;`.
    fn effect_call(&mut self) -> R<Expr> {
        let (name, line) = self.expect_ident("(a call) after `(void)`")?;
        if !self.at_punct("(")? {
            return self.malformed(line, format!("expected a call after `(void)`, found `{name}`"));
        }
        self.call(name, line)
    }

    fn decl(&mut self, out: &mut Vec<Stmt>) -> R<()> {
        while let Tok::Ident(ref w) = self.peek()?.tok {
            if !is_int_type_word(w) {
                break;
            }
            self.next()?;
        }
        loop {
            let t = self.peek()?;
            if matches!(t.tok, Tok::Punct("*")) {
                return self.unsupported(t.line, "pointer-valued register (`int *r`)");
            }
            let (reg, line) = self.expect_ident("(a register) in a declaration")?;
            if self.is_param(&reg) {
                return self.malformed(line, format!("`{reg}` is a parameter of P{}", self.thread));
            }
            if self.at_punct("[")? {
                return self.unsupported(line, format!("array `{reg}[]`"));
            }
            let init = if self.eat_punct("=")? { Some(self.expr()?) } else { None };
            self.regs.insert(reg.clone());
            out.push(Stmt::Decl { reg, init, line });
            if !self.eat_punct(",")? {
                break;
            }
        }
        self.expect_punct(";", "after a declaration")?;
        Ok(())
    }

    fn if_stmt(&mut self, line: usize) -> R<Stmt> {
        self.expect_punct("(", "after `if`")?;
        let cond = self.expr()?;
        self.expect_punct(")", "after the `if` condition")?;
        let mut then = Vec::new();
        self.stmt(&mut then)?;
        let mut els = Vec::new();
        if self.at_ident("else")? {
            self.next()?;
            self.stmt(&mut els)?;
        }
        Ok(Stmt::If { cond, then, els, line })
    }

    // -- Expressions --------------------------------------------------------------------------

    fn expr(&mut self) -> R<Expr> {
        self.expr_bp(0)
    }

    fn binop(tok: &Tok) -> Option<(BinOp, u8)> {
        let Tok::Punct(p) = tok else { return None };
        Some(match *p {
            "||" => (BinOp::Or, 1),
            "&&" => (BinOp::And, 2),
            "|" => (BinOp::BitOr, 3),
            "^" => (BinOp::BitXor, 4),
            "&" => (BinOp::BitAnd, 5),
            "==" => (BinOp::Eq, 6),
            "!=" => (BinOp::Ne, 6),
            "<" => (BinOp::Lt, 7),
            "<=" => (BinOp::Le, 7),
            ">" => (BinOp::Gt, 7),
            ">=" => (BinOp::Ge, 7),
            "+" => (BinOp::Add, 8),
            "-" => (BinOp::Sub, 8),
            _ => return None,
        })
    }

    fn expr_bp(&mut self, min: u8) -> R<Expr> {
        let mut lhs = self.unary()?;
        loop {
            let t = self.peek()?;
            if let Tok::Punct(p @ ("*" | "/" | "%" | "<<" | ">>" | "?")) = t.tok {
                return self.unsupported(t.line, format!("operator `{p}`"));
            }
            let Some((op, prec)) = Self::binop(&t.tok) else { break };
            if prec < min {
                break;
            }
            self.next()?;
            let rhs = self.expr_bp(prec + 1)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> R<Expr> {
        let t = self.peek()?;
        self.enter(t.line)?;
        let r = self.unary_inner(t);
        self.leave();
        r
    }

    fn unary_inner(&mut self, t: Token) -> R<Expr> {
        let line = t.line;
        match t.tok {
            Tok::Int(v) => {
                self.next()?;
                Ok(Expr::Int(v))
            }
            Tok::Punct(p @ ("!" | "-" | "~")) => {
                self.next()?;
                let e = self.unary()?;
                Ok(match (p, e) {
                    ("-", Expr::Int(v)) if v.checked_neg().is_some() => Expr::Int(-v),
                    ("!", e) => Expr::Unary(UnOp::Not, Box::new(e)),
                    ("-", e) => Expr::Unary(UnOp::Neg, Box::new(e)),
                    (_, e) => Expr::Unary(UnOp::BitNot, Box::new(e)),
                })
            }
            Tok::Punct("(") => {
                self.next()?;
                if let Tok::Ident(ref w) = self.peek()?.tok {
                    if is_int_type_word(w) || w == "void" {
                        return self.unsupported(line, format!("cast `({w} ...)`"));
                    }
                }
                let e = self.expr()?;
                self.expect_punct(")", "to close `(`")?;
                Ok(e)
            }
            Tok::Punct("*") => {
                self.next()?;
                let target = self.plain_target()?;
                self.unsupported(line, format!("plain C access `*{target}`"))
            }
            Tok::Punct("&") => self.unsupported(line, "address-of (`&x`)"),
            Tok::Ident(name) => {
                self.next()?;
                if self.at_punct("(")? {
                    let e = self.call(name.clone(), line)?;
                    if let Expr::Call { prim, .. } = &e {
                        if !prim.returns_value() {
                            return self.malformed(line, format!("`{name}()` returns no value"));
                        }
                    }
                    return Ok(e);
                }
                if self.is_param(&name) {
                    return self.unsupported(line, format!("pointer value `{name}`"));
                }
                if !self.regs.contains(&name) {
                    return self.malformed(line, format!("`{name}` is not a register of P{}", self.thread));
                }
                Ok(Expr::Reg(name))
            }
            ref other => self.malformed(line, format!("expected an expression, found {}", describe(other))),
        }
    }

    /// The name after the `*` of a plain access, for the message (`...` if none).
    fn plain_target(&mut self) -> R<String> {
        Ok(match self.peek()?.tok {
            Tok::Ident(s) => s,
            _ => "...".to_string(),
        })
    }

    /// A call `NAME(ARGS)`, the name consumed and `(` next.
    fn call(&mut self, name: String, line: usize) -> R<Expr> {
        let Some(callee) = callee(&name) else { return self.unsupported(line, unsupported_call(&name)) };
        let (compare, prim, kinds) = match callee {
            Callee::Prim(p, k) => (None, p, k),
            Callee::Compare(op, p, k) => (Some(op), p, k),
        };
        self.expect_punct("(", &format!("after `{name}`"))?;
        let mut args = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            if i > 0 && !self.eat_punct(",")? {
                return self.malformed(line, format!("`{name}` takes {} arguments", kinds.len()));
            }
            args.push(match kind {
                ArgKind::Loc => Arg::Loc(self.loc_arg(&name)?),
                ArgKind::Val => Arg::Val(self.expr()?),
            });
        }
        if !self.eat_punct(")")? {
            let t = self.peek()?;
            return self.malformed(
                t.line,
                format!("`{name}` takes {} argument(s); expected `)`, found {}", kinds.len(), describe(&t.tok)),
            );
        }
        let call = Expr::Call { prim, args, line };
        Ok(match compare {
            None => call,
            Some(op) => Expr::Binary(op, Box::new(call), Box::new(Expr::Int(0))),
        })
    }

    /// A location argument: `*x` or `x`, `x` a parameter.
    fn loc_arg(&mut self, callee: &str) -> R<String> {
        let t = self.next()?;
        let line = t.line;
        let name = match t.tok {
            Tok::Punct("*") => self.expect_ident("after `*`")?.0,
            Tok::Ident(s) => s,
            Tok::Punct("&") => return self.unsupported(line, "address-of (`&x`)"),
            ref other => {
                return self.malformed(line, format!("expected a location for `{callee}`, found {}", describe(other)))
            }
        };
        if self.is_param(&name) {
            Ok(name)
        } else if self.regs.contains(&name) {
            self.unsupported(line, format!("access through register `{name}`"))
        } else {
            self.malformed(line, format!("`{name}` is not a parameter of P{}", self.thread))
        }
    }

    // -- Final condition ----------------------------------------------------------------------

    fn condition(&mut self, thread_regs: &[HashSet<String>]) -> R<Condition> {
        loop {
            let t = self.next()?;
            let line = t.line;
            match t.tok {
                Tok::Ident(ref w) if w == "locations" => {
                    self.expect_punct("[", "after `locations`")?;
                    while !self.eat_punct("]")? {
                        if self.next()?.tok == Tok::Eof {
                            return self.malformed(line, "`locations [` is not closed");
                        }
                    }
                }
                Tok::Ident(ref w) if w == "filter" => return self.unsupported(line, "`filter` clause"),
                Tok::Ident(ref w) if w == "exists" || w == "forall" => {
                    let quant = if w == "exists" { Quant::Exists } else { Quant::Forall };
                    let prop = self.prop(thread_regs)?;
                    return Ok(Condition { quant, prop, line });
                }
                Tok::Punct("~") if self.at_ident("exists")? => {
                    self.next()?;
                    let prop = self.prop(thread_regs)?;
                    return Ok(Condition { quant: Quant::NotExists, prop, line });
                }
                ref other => {
                    return self.malformed(
                        line,
                        format!(
                            "expected a thread or the final condition (`exists`, `~exists`, `forall`), found {}",
                            describe(other)
                        ),
                    )
                }
            }
        }
    }

    fn prop(&mut self, regs: &[HashSet<String>]) -> R<Prop> {
        let mut lhs = self.prop_and(regs)?;
        while self.eat_punct("\\/")? {
            let rhs = self.prop_and(regs)?;
            lhs = Prop::Or(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn prop_and(&mut self, regs: &[HashSet<String>]) -> R<Prop> {
        let mut lhs = self.prop_unary(regs)?;
        while self.eat_punct("/\\")? {
            let rhs = self.prop_unary(regs)?;
            lhs = Prop::And(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn prop_unary(&mut self, regs: &[HashSet<String>]) -> R<Prop> {
        let t = self.peek()?;
        self.enter(t.line)?;
        let r = self.prop_unary_inner(regs, t);
        self.leave();
        r
    }

    fn prop_unary_inner(&mut self, regs: &[HashSet<String>], t: Token) -> R<Prop> {
        match t.tok {
            Tok::Punct("~") | Tok::Punct("!") => {
                self.next()?;
                Ok(Prop::Not(Box::new(self.prop_unary(regs)?)))
            }
            Tok::Punct("(") => {
                self.next()?;
                let p = self.prop(regs)?;
                self.expect_punct(")", "to close `(` in the condition")?;
                Ok(p)
            }
            Tok::Ident(ref w) if w == "true" => {
                self.next()?;
                Ok(Prop::True)
            }
            Tok::Ident(ref w) if w == "false" => {
                self.next()?;
                Ok(Prop::False)
            }
            _ => self.atom(regs),
        }
    }

    fn atom(&mut self, regs: &[HashSet<String>]) -> R<Prop> {
        let t = self.next()?;
        let line = t.line;
        let var = match t.tok {
            Tok::Int(n) => {
                self.expect_punct(":", "after a thread number in the condition")?;
                let (reg, _) = self.expect_ident("(a register) after `N:`")?;
                self.cond_reg(regs, n, reg, line)?
            }
            Tok::Ident(ref w) if self.at_punct(":")? => {
                let Some(n) = thread_index(w) else {
                    return self.malformed(line, format!("expected `N:reg` or `PN:reg`, found `{w}:`"));
                };
                self.next()?;
                let (reg, _) = self.expect_ident("(a register) after `PN:`")?;
                self.cond_reg(regs, n as i64, reg, line)?
            }
            Tok::Ident(w) => self.cond_loc(w, line)?,
            Tok::Punct("[") => {
                let (w, _) = self.expect_ident("(a location) after `[`")?;
                self.expect_punct("]", "after a location")?;
                self.cond_loc(w, line)?
            }
            ref other => {
                return self.malformed(line, format!("expected `N:reg=V` or `x=V`, found {}", describe(other)))
            }
        };
        let op = self.next()?;
        let negated = match op.tok {
            Tok::Punct("=") | Tok::Punct("==") => false,
            Tok::Punct("!=") => true,
            ref other => {
                return self
                    .malformed(op.line, format!("expected `=` or `!=` in the condition, found {}", describe(other)))
            }
        };
        let v = self.next()?;
        let value = match v.tok {
            Tok::Int(n) => n,
            Tok::Punct("-") => match self.next()?.tok {
                Tok::Int(n) => -n,
                ref other => {
                    return self.malformed(v.line, format!("expected a number after `-`, found {}", describe(other)))
                }
            },
            Tok::Ident(ref s) => return self.unsupported(v.line, format!("pointer value `{s}` in the condition")),
            ref other => return self.malformed(v.line, format!("expected a value, found {}", describe(other))),
        };
        Ok(Prop::Atom { var, negated, value })
    }

    fn cond_reg(&self, regs: &[HashSet<String>], thread: i64, reg: String, line: usize) -> R<CondVar> {
        let Some(known) = usize::try_from(thread).ok().and_then(|t| regs.get(t)) else {
            return self.malformed(line, format!("the condition names `{thread}:{reg}`, but there is no P{thread}"));
        };
        if !known.contains(&reg) {
            return self.malformed(
                line,
                format!("the condition names `{thread}:{reg}`, but P{thread} has no register `{reg}`"),
            );
        }
        Ok(CondVar::Reg { thread: thread as usize, reg })
    }

    fn cond_loc(&self, name: String, line: usize) -> R<CondVar> {
        if !self.locations.contains(&name) {
            return self.malformed(line, format!("the condition names `{name}`, which is not a shared location"));
        }
        Ok(CondVar::Loc(name))
    }
}

/// `Pn` -> n.
fn thread_index(id: &str) -> Option<usize> {
    let digits = id.strip_prefix('P')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 6 {
        return None;
    }
    digits.parse().ok()
}

/// The answer of a `Result: WORD` line in a comment.
fn result_in(comment: &str) -> Option<Expect> {
    let (_, after) = comment.split_once("Result:")?;
    let word: String = after.trim_start().chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    match word.to_ascii_lowercase().as_str() {
        "never" => Some(Expect::Never),
        "sometimes" => Some(Expect::Sometimes),
        "always" => Some(Expect::Always),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Litmus, LitmusError> {
        parse(Path::new("t.litmus"), text)
    }

    fn ok(text: &str) -> Litmus {
        match p(text) {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        }
    }

    /// The construct and line of an `Unsupported`.
    fn unsupported(text: &str) -> (String, usize) {
        match p(text) {
            Err(LitmusError::Unsupported { construct, line, .. }) => (construct, line),
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }

    /// The message and line of a `Malformed`.
    fn malformed(text: &str) -> (String, usize) {
        match p(text) {
            Err(LitmusError::Malformed { message, line, .. }) => (message, line),
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    const MP: &str = "C MP+rel+acq
\"a doc string\"
(*
 * Result: Never
 *
 * Message passing with a release and an acquire.
 *)

{ flag=0; }

P0(int *data, int *flag)  // producer
{
\tWRITE_ONCE(*data, 1);
\tsmp_store_release(flag, 1);
}

(* between threads *)
P1(int *data, int *flag)
{
\tint r0;
\tint r1;

\tr0 = smp_load_acquire(flag);
\tr1 = READ_ONCE(*data);
}

exists (1:r0=1 /\\ 1:r1=0) (* the bad outcome *)
";

    fn call(prim: Prim, args: Vec<Arg>, line: usize) -> Expr {
        Expr::Call { prim, args, line }
    }

    #[test]
    fn message_passing() {
        let l = ok(MP);
        assert_eq!(l.name, "MP+rel+acq");
        assert_eq!(l.path, Path::new("t.litmus"));
        assert_eq!(l.result, Some(Expect::Never));
        assert_eq!(l.init, vec![Init { target: InitTarget::Loc("flag".into()), value: 0, line: 9 }]);
        assert_eq!(l.locations, vec!["flag".to_string(), "data".to_string()]);
        assert_eq!(l.threads.len(), 2);
        let p0 = &l.threads[0];
        assert_eq!((p0.index, p0.line), (0, 11));
        assert_eq!(
            p0.params,
            vec![
                Param { name: "data".into(), kind: ParamKind::Int },
                Param { name: "flag".into(), kind: ParamKind::Int }
            ]
        );
        assert_eq!(
            p0.body,
            vec![
                Stmt::Do {
                    expr: call(Prim::WriteOnce, vec![Arg::Loc("data".into()), Arg::Val(Expr::Int(1))], 13),
                    line: 13
                },
                Stmt::Do {
                    expr: call(Prim::StoreRelease, vec![Arg::Loc("flag".into()), Arg::Val(Expr::Int(1))], 14),
                    line: 14
                },
            ]
        );
        let p1 = &l.threads[1];
        assert_eq!((p1.index, p1.line), (1, 18));
        assert_eq!(
            p1.body,
            vec![
                Stmt::Decl { reg: "r0".into(), init: None, line: 20 },
                Stmt::Decl { reg: "r1".into(), init: None, line: 21 },
                Stmt::Assign {
                    reg: "r0".into(),
                    expr: call(Prim::LoadAcquire, vec![Arg::Loc("flag".into())], 23),
                    line: 23
                },
                Stmt::Assign {
                    reg: "r1".into(),
                    expr: call(Prim::ReadOnce, vec![Arg::Loc("data".into())], 24),
                    line: 24
                },
            ]
        );
        let atom = |thread, reg: &str, value| Prop::Atom {
            var: CondVar::Reg { thread, reg: reg.into() },
            negated: false,
            value,
        };
        assert_eq!(
            l.cond,
            Condition {
                quant: Quant::Exists,
                prop: Prop::And(Box::new(atom(1, "r0", 1)), Box::new(atom(1, "r1", 0))),
                line: 27
            }
        );
    }

    #[test]
    fn initial_state_forms() {
        let l = ok("C init
{
  int x;
  int y = 2; unsigned long z = -3;
  atomic_t v = ATOMIC_INIT(4);
  atomic_t w;
  spinlock_t s;
  u = 0x10;
  0:r1 = 5;
  P1:r2=-6
}
P0(int *x, volatile int *y, atomic_t *v, spinlock_t *s, int *q) { int r0 = r1 + 1; }
P1(int *u) { r3 = r2; }
forall (0:r0=6 /\\ 1:r3=-6 /\\ x=0 /\\ q=0 /\\ [u]=16)
");
        let loc = |n: &str, value, line| Init { target: InitTarget::Loc(n.into()), value, line };
        let reg =
            |thread, r: &str, value, line| Init { target: InitTarget::Reg { thread, reg: r.into() }, value, line };
        assert_eq!(
            l.init,
            vec![
                loc("y", 2, 4),
                loc("z", -3, 4),
                loc("v", 4, 5),
                loc("u", 16, 8),
                reg(0, "r1", 5, 9),
                reg(1, "r2", -6, 10)
            ]
        );
        assert_eq!(l.locations, ["x", "y", "z", "v", "w", "s", "u", "q"]);
        let kinds: Vec<_> = l.threads[0].params.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [ParamKind::Int, ParamKind::Int, ParamKind::Atomic, ParamKind::SpinLock, ParamKind::Int]);
        assert_eq!(l.cond.quant, Quant::Forall);
        assert_eq!(l.result, None);
    }

    #[test]
    fn conditions() {
        let base = "C c\n{}\nP0(int *x) { int r0; r0 = READ_ONCE(*x); }\nP1(int *x) { WRITE_ONCE(*x, 1); }\n";
        let c = |cond: &str| ok(&format!("{base}{cond}\n")).cond;
        let a = |negated, value| Prop::Atom { var: CondVar::Reg { thread: 0, reg: "r0".into() }, negated, value };
        let x = |value| Prop::Atom { var: CondVar::Loc("x".into()), negated: false, value };
        assert_eq!(c("~exists (0:r0=1)").quant, Quant::NotExists);
        assert_eq!(c("~ exists 0:r0=1").prop, a(false, 1));
        assert_eq!(c("exists (P0:r0 != 1)").prop, a(true, 1));
        assert_eq!(c("exists (0:r0==-1)").prop, a(false, -1));
        assert_eq!(c("exists true").prop, Prop::True);
        assert_eq!(c("exists (false)").prop, Prop::False);
        // /\ binds tighter than \/; ~ tighter than both.
        assert_eq!(
            c("exists 0:r0=1 \\/ x=1 /\\ ~x=2").prop,
            Prop::Or(Box::new(a(false, 1)), Box::new(Prop::And(Box::new(x(1)), Box::new(Prop::Not(Box::new(x(2)))))))
        );
        assert_eq!(
            c("exists ((0:r0=1 \\/ x=1) /\\ x=2)").prop,
            Prop::And(Box::new(Prop::Or(Box::new(a(false, 1)), Box::new(x(1)))), Box::new(x(2)))
        );
        assert_eq!(c("locations [x; 0:r0;] exists (x=1)").prop, x(1));
        assert_eq!(c("locations[x]\nexists\n(x=1)").line, 6);
    }

    #[test]
    fn statements() {
        let l = ok("C s
{}
P0(int *x, int *y, spinlock_t *s)
{
\tint r0, r1 = 1;
\tr0 = READ_ONCE(*x);
\tif (r0)
\t\tWRITE_ONCE(*y, 1);
\tif (r0 == 1 && !(r1 != 2) || r0 - 1 + 2 & 3 | 4 ^ 5) {
\t\t{ r2 = 7; }
\t} else if (spin_trylock(s)) {
\t\tspin_unlock(s);
\t} else
\t\t;
\t(void)xchg(y, -r2);
\t;
}
exists (0:r2=7)
");
        let body = &l.threads[0].body;
        assert_eq!(body.len(), 6);
        assert_eq!(body[0], Stmt::Decl { reg: "r0".into(), init: None, line: 5 });
        assert_eq!(body[1], Stmt::Decl { reg: "r1".into(), init: Some(Expr::Int(1)), line: 5 });
        let Stmt::If { cond, then, els, line: 7 } = &body[3] else { panic!("{:?}", body[3]) };
        assert_eq!(cond, &Expr::Reg("r0".into()));
        assert_eq!(then.len(), 1);
        assert!(els.is_empty());
        let Stmt::If { cond, then, els, line: 9 } = &body[4] else { panic!("{:?}", body[4]) };
        // || is the root: (A && B) || (((r0 - 1 + 2) & 3) | (4 ^ 5))
        let Expr::Binary(BinOp::Or, l, r) = cond else { panic!("{cond:?}") };
        assert!(matches!(**l, Expr::Binary(BinOp::And, _, ref b) if matches!(**b, Expr::Unary(UnOp::Not, _))));
        let Expr::Binary(BinOp::BitOr, l, r) = &**r else { panic!("{r:?}") };
        assert!(matches!(**l, Expr::Binary(BinOp::BitAnd, ref s, _) if matches!(**s, Expr::Binary(BinOp::Add, _, _))));
        assert!(matches!(**r, Expr::Binary(BinOp::BitXor, _, _)));
        assert_eq!(then, &vec![Stmt::Assign { reg: "r2".into(), expr: Expr::Int(7), line: 10 }]);
        let [Stmt::If { cond: Expr::Call { prim: Prim::SpinTrylock, .. }, then, els, line: 11 }] = &els[..] else {
            panic!("{els:?}")
        };
        assert_eq!(then.len(), 1);
        assert!(els.is_empty());
        assert_eq!(
            body[5],
            Stmt::Do {
                expr: call(
                    Prim::Xchg(Order::Full),
                    vec![Arg::Loc("y".into()), Arg::Val(Expr::Unary(UnOp::Neg, Box::new(Expr::Reg("r2".into()))))],
                    15
                ),
                line: 15
            }
        );
        assert_eq!(body[5].line(), 15);
    }

    /// Every primitive name of the fragment, with its argument list.
    #[test]
    fn primitives() {
        use Order::*;
        let rmw = |op, ret, order| Prim::AtomicRmw { op, ret, order };
        let cases: Vec<(&str, Prim)> = vec![
            ("r = READ_ONCE(*x)", Prim::ReadOnce),
            ("WRITE_ONCE(*x, 1)", Prim::WriteOnce),
            ("r = smp_load_acquire(x)", Prim::LoadAcquire),
            ("smp_store_release(x, 1)", Prim::StoreRelease),
            ("smp_mb()", Prim::Mb),
            ("smp_rmb()", Prim::Rmb),
            ("smp_wmb()", Prim::Wmb),
            ("smp_mb__before_atomic()", Prim::MbBeforeAtomic),
            ("smp_mb__after_atomic()", Prim::MbAfterAtomic),
            ("smp_mb__after_spinlock()", Prim::MbAfterSpinlock),
            ("smp_mb__after_unlock_lock()", Prim::MbAfterUnlockLock),
            ("r = xchg(x, 1)", Prim::Xchg(Full)),
            ("r = xchg_relaxed(x, 1)", Prim::Xchg(Relaxed)),
            ("r = xchg_acquire(x, 1)", Prim::Xchg(Acquire)),
            ("r = xchg_release(x, 1)", Prim::Xchg(Release)),
            ("r = cmpxchg(x, 0, 1)", Prim::Cmpxchg(Full)),
            ("r = cmpxchg_relaxed(x, 0, 1)", Prim::Cmpxchg(Relaxed)),
            ("r = cmpxchg_acquire(x, 0, 1)", Prim::Cmpxchg(Acquire)),
            ("r = cmpxchg_release(x, 0, 1)", Prim::Cmpxchg(Release)),
            ("r = atomic_read(v)", Prim::AtomicRead),
            ("r = atomic_read_acquire(v)", Prim::AtomicReadAcquire),
            ("atomic_set(v, 1)", Prim::AtomicSet),
            ("atomic_set_release(v, 1)", Prim::AtomicSetRelease),
            ("atomic_add(2, v)", rmw(RmwOp::Add, Ret::Void, Relaxed)),
            ("atomic_sub(2, v)", rmw(RmwOp::Sub, Ret::Void, Relaxed)),
            ("atomic_and(2, v)", rmw(RmwOp::And, Ret::Void, Relaxed)),
            ("atomic_or(2, v)", rmw(RmwOp::Or, Ret::Void, Relaxed)),
            ("atomic_xor(2, v)", rmw(RmwOp::Xor, Ret::Void, Relaxed)),
            ("atomic_andnot(2, v)", rmw(RmwOp::AndNot, Ret::Void, Relaxed)),
            ("atomic_inc(v)", rmw(RmwOp::Inc, Ret::Void, Relaxed)),
            ("atomic_dec(v)", rmw(RmwOp::Dec, Ret::Void, Relaxed)),
            ("r = atomic_add_return(2, v)", rmw(RmwOp::Add, Ret::New, Full)),
            ("r = atomic_sub_return_relaxed(2, v)", rmw(RmwOp::Sub, Ret::New, Relaxed)),
            ("r = atomic_inc_return_acquire(v)", rmw(RmwOp::Inc, Ret::New, Acquire)),
            ("r = atomic_dec_return_release(v)", rmw(RmwOp::Dec, Ret::New, Release)),
            ("r = atomic_fetch_add(2, v)", rmw(RmwOp::Add, Ret::Old, Full)),
            ("r = atomic_fetch_sub_acquire(2, v)", rmw(RmwOp::Sub, Ret::Old, Acquire)),
            ("r = atomic_fetch_inc_relaxed(v)", rmw(RmwOp::Inc, Ret::Old, Relaxed)),
            ("r = atomic_fetch_dec_release(v)", rmw(RmwOp::Dec, Ret::Old, Release)),
            ("r = atomic_fetch_and(2, v)", rmw(RmwOp::And, Ret::Old, Full)),
            ("r = atomic_fetch_or_relaxed(2, v)", rmw(RmwOp::Or, Ret::Old, Relaxed)),
            ("r = atomic_fetch_xor_acquire(2, v)", rmw(RmwOp::Xor, Ret::Old, Acquire)),
            ("r = atomic_fetch_andnot_release(2, v)", rmw(RmwOp::AndNot, Ret::Old, Release)),
            ("r = atomic_xchg(v, 1)", Prim::AtomicXchg(Full)),
            ("r = atomic_xchg_relaxed(v, 1)", Prim::AtomicXchg(Relaxed)),
            ("r = atomic_cmpxchg(v, 0, 1)", Prim::AtomicCmpxchg(Full)),
            ("r = atomic_cmpxchg_acquire(v, 0, 1)", Prim::AtomicCmpxchg(Acquire)),
            ("spin_lock(s)", Prim::SpinLock),
            ("spin_unlock(s)", Prim::SpinUnlock),
            ("r = spin_trylock(s)", Prim::SpinTrylock),
        ];
        for (stmt, want) in cases {
            let text = format!(
                "C p\n{{}}\nP0(int *x, atomic_t *v, spinlock_t *s)\n{{\n\tint r;\n\t{stmt};\n}}\nexists (x=0)\n"
            );
            let l = p(&text).unwrap_or_else(|e| panic!("{stmt}: {e}"));
            let (Stmt::Assign { expr, .. } | Stmt::Do { expr, .. }) = &l.threads[0].body[1] else { panic!("{stmt}") };
            let Expr::Call { prim, args, line: 6 } = expr else { panic!("{stmt}: {expr:?}") };
            assert_eq!(*prim, want, "{stmt}");
            assert_eq!(prim.returns_value(), stmt.starts_with("r = "), "{stmt}");
            // The location is where the kernel API puts it: last for the atomic_OP family.
            let loc_at = if matches!(prim, Prim::AtomicRmw { op, .. } if !matches!(op, RmwOp::Inc | RmwOp::Dec)) {
                1
            } else {
                0
            };
            if !args.is_empty() {
                assert!(args[loc_at].loc().is_some(), "{stmt}: {args:?}");
                assert!(args.iter().enumerate().all(|(i, a)| (i == loc_at) == a.val().is_none()), "{stmt}");
            }
        }
    }

    #[test]
    fn compare_forms() {
        let l = ok("C t\n{}\nP0(atomic_t *v)\n{\n\tint r;\n\tr = atomic_dec_and_test(v);\n\tatomic_inc_and_test(v);\n\tr = atomic_sub_and_test(1, v) + atomic_add_negative_relaxed(1, v);\n}\nexists (v=0)\n");
        let body = &l.threads[0].body;
        let dec =
            call(Prim::AtomicRmw { op: RmwOp::Dec, ret: Ret::New, order: Order::Full }, vec![Arg::Loc("v".into())], 6);
        assert_eq!(
            body[1],
            Stmt::Assign {
                reg: "r".into(),
                expr: Expr::Binary(BinOp::Eq, Box::new(dec), Box::new(Expr::Int(0))),
                line: 6
            }
        );
        assert!(matches!(&body[2], Stmt::Do { expr: Expr::Binary(BinOp::Eq, _, _), line: 7 }));
        let Stmt::Assign { expr: Expr::Binary(BinOp::Add, _, neg), .. } = &body[3] else { panic!() };
        let Expr::Binary(BinOp::Lt, c, _) = &**neg else { panic!("{neg:?}") };
        assert!(matches!(
            **c,
            Expr::Call { prim: Prim::AtomicRmw { op: RmwOp::Add, ret: Ret::New, order: Order::Relaxed }, .. }
        ));
    }

    #[test]
    fn comments_and_results() {
        // (* is code inside a thread, a comment outside; /* */ and // anywhere.
        let l = ok("C c (* after the name *)
/* Result: Sometimes */
(* (* nested *) Result: Always *)
{ x = 1; (* c *) }
// a line comment
P0(int *x /* c */) { int r0; r0 = READ_ONCE(*x); // c
}
(* Result: Never, after the initial state: not read *)
exists (0:r0=1)
");
        assert_eq!(l.result, Some(Expect::Sometimes));
        assert_eq!(l.name, "c");
        for (comment, want) in [
            ("(* Result: Never *)", Some(Expect::Never)),
            ("(*\n * Result:   sometimes\n *)", Some(Expect::Sometimes)),
            ("(* Result: DEADLOCK *)", None),
            ("(* no result *)", None),
            ("", None),
        ] {
            let l = ok(&format!("C c\n{comment}\n{{}}\nP0(int *x) {{ WRITE_ONCE(*x, 1); }}\nexists (x=1)\n"));
            assert_eq!(l.result, want, "{comment}");
        }
    }

    #[test]
    fn unsupported_constructs() {
        let t = |init: &str, body: &str, cond: &str| {
            format!("C u\n{{ {init} }}\nP0(int *x, int *y, spinlock_t *s)\n{{\n\tint r0;\n\t{body}\n}}\n{cond}\n")
        };
        let ex = "exists (x=1)";
        for (text, want, line) in [
            (t("", "rcu_read_lock();", ex), "RCU: `rcu_read_lock()`", 6),
            (t("", "synchronize_rcu();", ex), "RCU: `synchronize_rcu()`", 6),
            (t("", "r0 = srcu_read_lock(s);", ex), "SRCU: `srcu_read_lock()`", 6),
            (t("", "r0 = spin_is_locked(s);", ex), "`spin_is_locked()`", 6),
            (t("", "smp_store_mb(*x, 1);", ex), "`smp_store_mb()`", 6),
            (t("", "barrier();", ex), "`barrier()`", 6),
            (t("", "r0 = atomic_add_unless(x, 1, 0);", ex), "`atomic_add_unless()`", 6),
            (t("", "r0 = atomic_and_return(1, x);", ex), "`atomic_and_return()`", 6),
            (t("", "foo(x);", ex), "unknown function `foo()`", 6),
            (t("", "*x = 1;", ex), "plain C access `*x = ...`", 6),
            (t("", "r0 = *y;", ex), "plain C access `*y`", 6),
            (t("", "r0 = *(y);", ex), "plain C access `*...`", 6),
            (t("", "r0 = &x;", ex), "address-of (`&x`)", 6),
            (t("", "r0 = x;", ex), "pointer value `x`", 6),
            (t("", "x = 0;", ex), "assignment to pointer parameter `x`", 6),
            (t("", "int *r1;", ex), "pointer-valued register (`int *r`)", 6),
            (t("", "while (1) ;", ex), "loop (`while`)", 6),
            (t("", "r0 = (int)READ_ONCE(*x);", ex), "cast `(int ...)`", 6),
            (t("", "r0 = READ_ONCE(*x) * 2;", ex), "operator `*`", 6),
            (t("", "r0++;", ex), "`++` on `r0`", 6),
            (t("y=&x;", "", ex), "pointer-valued init `y=&...`", 2),
            (t("y=x;", "", ex), "pointer-valued init `y=x`", 2),
            (t("int *y = &x;", "", ex), "pointer-valued init `int *y`", 2),
            (t("struct foo z;", "", ex), "type `struct` in the initial state", 2),
            (t("", "", "filter (x=1)\nexists (x=1)"), "`filter` clause", 8),
            (t("", "", "exists (x=y)"), "pointer value `y` in the condition", 8),
        ] {
            assert_eq!(unsupported(&text), (want.to_string(), line), "{text}");
        }
        assert_eq!(
            unsupported("C u\n{}\nP0(int **p) { }\nexists (x=1)\n"),
            ("pointer-to-pointer parameter `int **p`".to_string(), 3)
        );
        assert_eq!(unsupported("C u\n{}\nP0(int p) { }\nexists (x=1)\n").0, "non-pointer parameter `int p`");
        assert_eq!(unsupported("AArch64 u\n{}\n").0, "AArch64 litmus test (only C tests are supported)");
        let e = p(&t("", "rcu_read_lock();", ex)).unwrap_err();
        assert_eq!(e.to_string(), "unsupported: RCU: `rcu_read_lock()` at t.litmus:6");
    }

    #[test]
    fn malformed_texts() {
        let good_thread = "P0(int *x) { int r0; r0 = READ_ONCE(*x); }\n";
        for (text, want, line) in [
            ("", "expected `C NAME` to start the test, found the end of the file", 1),
            ("hello world", "expected `C NAME` to start the test, found `hello`", 1),
            ("C\n{}", "expected the test's name after `C`", 1),
            ("C t\nP0(int *x) {}", "expected `{` to open the initial state, found `P0`", 2),
            ("C t\n{}\nexists (x=1)", "expected a thread `P0(...)`, found `exists`", 3),
            ("C t\n{}\nP1(int *x) {}\nexists (x=1)", "expected P0, found P1", 3),
            ("C t\n(* open\n{}", "unterminated `(*` comment", 2),
            ("C t\n{}\nP0(int *x) { /* open }", "unterminated `/*` comment", 3),
            ("C t\n{}\nP0(int *x) { WRITE_ONCE(*x, 1);\n", "P0's body is not closed", 3),
            ("C t\n{}\nP0(int *x) { r0 = r1; }\nexists (x=1)", "`r1` is not a register of P0", 3),
            ("C t\n{}\nP0(int *x) { WRITE_ONCE(*z, 1); }\nexists (x=1)", "`z` is not a parameter of P0", 3),
            ("C t\n{}\nP0(int *x) { int r0; r0 = smp_mb(); }\nexists (x=1)", "`smp_mb()` returns no value", 3),
            ("C t\n{}\nP0(int *x) { WRITE_ONCE(*x); }\nexists (x=1)", "`WRITE_ONCE` takes 2 arguments", 3),
            ("C t\n{}\nP0(int *x) { smp_mb() }\nexists (x=1)", "expected `;` after a call, found `}`", 3),
            ("C t\n{}\nP0(int *x) { int x; }\nexists (x=1)", "`x` is a parameter of P0", 3),
            ("C t\n{}\nP0(int *x, int *x) { }\nexists (x=1)", "parameter `x` appears twice", 3),
            ("C t\n{}\nP0(int *x) { else ; }\nexists (x=1)", "`else` without `if`", 3),
            ("C t\n{}\nP0(int *x) { $ }\nexists (x=1)", "unexpected character '$'", 3),
            ("C t\n{ x = 99999999999999999999; }", "integer `99999999999999999999` is out of range", 2),
            (
                &format!("C t\n{{}}\n{good_thread}exists (z=1)"),
                "the condition names `z`, which is not a shared location",
                4,
            ),
            (&format!("C t\n{{}}\n{good_thread}exists (1:r0=1)"), "the condition names `1:r0`, but there is no P1", 4),
            (
                &format!("C t\n{{}}\n{good_thread}exists (0:r9=1)"),
                "the condition names `0:r9`, but P0 has no register `r9`",
                4,
            ),
            (&format!("C t\n{{}}\n{good_thread}exists (x=1) junk"), "unexpected `junk` after the final condition", 4),
            (
                &format!("C t\n{{}}\n{good_thread}exists (x=1"),
                "expected `)` to close `(` in the condition, found the end of the file",
                4,
            ),
            (
                &format!("C t\n{{ 3:r0=1; }}\n{good_thread}exists (x=1)"),
                "initial value for `3:r0`, but there is no P3",
                2,
            ),
        ] {
            assert_eq!(malformed(text), (want.to_string(), line), "{text}");
        }
        let e = p("C t\n{}\nP0(int *x) { r0 = r1; }\nexists (x=1)").unwrap_err();
        assert_eq!(e.to_string(), "t.litmus:3: `r1` is not a register of P0");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let n = 100_000;
        let deep_expr =
            format!("C d\n{{}}\nP0(int *x) {{ int r0; r0 = {}1{}; }}\nexists (x=1)\n", "(".repeat(n), ")".repeat(n));
        let deep_not = format!("C d\n{{}}\nP0(int *x) {{ int r0; r0 = {}1; }}\nexists (x=1)\n", "!".repeat(n));
        let deep_block = format!("C d\n{{}}\nP0(int *x) {{ {}{} }}\nexists (x=1)\n", "{".repeat(n), "}".repeat(n));
        let deep_prop = format!("C d\n{{}}\nP0(int *x) {{ }}\nexists {}x=1{}\n", "(".repeat(n), ")".repeat(n));
        let deep_if = format!("C d\n{{}}\nP0(int *x) {{ {} ; }}\nexists (x=1)\n", "if (1) ".repeat(n));
        for text in [deep_expr, deep_not, deep_block, deep_prop, deep_if] {
            let (message, _) = malformed(&text);
            assert_eq!(message, format!("nested more than {MAX_DEPTH} deep"));
        }
        // Within the bound it parses.
        let ok_depth = MAX_DEPTH - 2;
        ok(&format!(
            "C d\n{{}}\nP0(int *x) {{ int r0; r0 = {}1{}; }}\nexists (x=1)\n",
            "(".repeat(ok_depth),
            ")".repeat(ok_depth)
        ));
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// No input makes the parser panic: random bytes, random token soup, every prefix of a
    /// valid test, and random edits of it.
    #[test]
    fn never_panics() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let len = rng.below(200);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let text = String::from_utf8_lossy(&bytes);
            let _ = p(&text);
            let _ = p(&format!("C r\n{text}"));
        }
        let pieces = [
            "C",
            "t",
            "\n",
            "{",
            "}",
            "(",
            ")",
            "(*",
            "*)",
            "/*",
            "*/",
            "//",
            "*",
            "x",
            "r0",
            "0",
            ":",
            "=",
            ";",
            ",",
            "P0",
            "P1",
            "int",
            "if",
            "else",
            "exists",
            "~",
            "/\\",
            "\\/",
            "READ_ONCE",
            "WRITE_ONCE",
            "smp_mb",
            "-",
            "!",
            "&",
            "\"",
            "locations",
            "[",
            "]",
            "atomic_t",
            "spinlock_t",
            "(void)",
            "99999999999999999999",
            "é",
        ];
        for _ in 0..3000 {
            let n = rng.below(60);
            let text: String = (0..n).map(|_| pieces[rng.below(pieces.len())]).collect::<Vec<_>>().join(" ");
            let _ = p(&text);
        }
        // Every strict prefix of a valid test ending before the condition's `)` is an error (cut in
        // the middle of a name, it can be an unsupported type or function, or a bad one).
        let close = MP.find("1:r1=0)").expect("the condition") + "1:r1=0".len();
        for (i, _) in MP.char_indices().filter(|&(i, _)| i <= close) {
            assert!(p(&MP[..i]).is_err(), "prefix of {i} bytes");
        }
        // Random single-character edits of the valid test.
        let chars: Vec<char> = MP.chars().collect();
        let alphabet: Vec<char> = "(){}[]*;:,=!~/\\ \n\"01xrP_-&|^é".chars().collect();
        for _ in 0..3000 {
            let mut c = chars.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(c.len());
                match rng.below(3) {
                    0 => {
                        c.remove(at);
                    }
                    1 => c.insert(at, alphabet[rng.below(alphabet.len())]),
                    _ => c[at] = alphabet[rng.below(alphabet.len())],
                }
            }
            let _ = p(&c.into_iter().collect::<String>());
        }
    }

    #[test]
    fn files() {
        let dir = std::env::temp_dir().join(format!("mmcheck-litmus-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let f = dir.join("mp.litmus");
        std::fs::write(&f, MP).expect("write");
        assert_eq!(parse_file(&f).expect("parses").path, f);
        let bad = dir.join("bad.litmus");
        std::fs::write(&bad, b"C t\n{\xff}").expect("write");
        assert_eq!(parse_file(&bad).unwrap_err().to_string(), format!("{}:2: not UTF-8 text", bad.display()));
        assert!(matches!(parse_file(&dir.join("missing.litmus")), Err(LitmusError::Io { .. })));
        assert!(matches!(parse_file(&dir), Err(LitmusError::Io { .. })));
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    /// Every shipped test in scenarios/litmus/ parses and records its expected result.
    #[test]
    fn shipped_litmus_tests_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/litmus");
        let mut names = HashSet::new();
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).expect("scenarios/litmus") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "litmus") {
                let l = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(l.result.is_some(), "{}: no Result: line", path.display());
                assert_eq!(Some(l.name.as_str()), path.file_stem().and_then(|s| s.to_str()), "{}", path.display());
                assert!(names.insert(l.name.clone()), "{}: duplicate name", path.display());
                n += 1;
            }
        }
        assert!(n >= 30, "only {n} litmus tests in {}", dir.display());
    }

    /// A local check over the kernel's own tests, which are not in the repository: set
    /// MMCHECK_KERNEL_LITMUS to a folder of `.litmus` files (searched recursively) and run
    /// `cargo test -p mmcheck --lib litmus -- --ignored --nocapture kernel`. Every file must
    /// parse or be `Unsupported`, never `Malformed`; one line per file is printed.
    #[test]
    #[ignore = "needs a kernel checkout: MMCHECK_KERNEL_LITMUS=linux/tools/memory-model/litmus-tests"]
    fn kernel_litmus_tests() {
        let Ok(dir) = std::env::var("MMCHECK_KERNEL_LITMUS") else { return };
        let mut files = Vec::new();
        let mut stack = vec![PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read dir") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "litmus") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let mut bad = Vec::new();
        for f in &files {
            match parse_file(f) {
                Ok(l) => println!("PARSED\t{}\t{}", f.display(), l.result.map_or("-".to_string(), |r| r.to_string())),
                Err(e @ LitmusError::Unsupported { .. }) => println!("UNSUPPORTED\t{}\t{e}", f.display()),
                Err(e) => {
                    println!("MALFORMED\t{}\t{e}", f.display());
                    bad.push(e.to_string());
                }
            }
        }
        assert!(!files.is_empty());
        assert!(bad.is_empty(), "{bad:#?}");
    }
}
