//! The parsed form of a C litmus test: what [`parse()`](super::parse()) returns.
//!
//! Every name here is the one in the test's text (registers, locations, parameters); nothing
//! is renamed or numbered. Line numbers are 1-based lines of the file.

use std::fmt;
use std::path::PathBuf;

/// One C litmus test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Litmus {
    /// The file it was read from (as given to the parser).
    pub path: PathBuf,
    /// The test's name: the rest of the `C NAME` first line.
    pub name: String,
    /// The expected result from a `Result: Never|Sometimes|Always` line in a comment between
    /// the `C` line and the initial-state block; `None` if there is none (or it says
    /// something else, such as the `DEADLOCK` of some kernel tests).
    pub result: Option<Expect>,
    /// Initial values given explicitly in the initial-state block, in order. A location or
    /// register without one starts at 0; `spinlock_t` locations start unlocked.
    pub init: Vec<Init>,
    /// The shared locations (variables), in order of first mention: the initial-state block
    /// first, then the threads' parameter lists. The threads' bodies and the condition can
    /// only name locations that are already here.
    pub locations: Vec<String>,
    /// The threads, `P0` first; `threads[i].index == i`.
    pub threads: Vec<Thread>,
    /// The final condition.
    pub cond: Condition,
}

/// The LKMM's answer recorded in a test's header comment: how often the final condition's
/// `exists` clause can be satisfied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expect {
    /// In every execution.
    Always,
    /// In some executions but not all.
    Sometimes,
    /// In no execution.
    Never,
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expect::Always => "Always",
            Expect::Sometimes => "Sometimes",
            Expect::Never => "Never",
        })
    }
}

/// One explicit initial value: `x=1;`, `int x = 1;`, `atomic_t x = ATOMIC_INIT(1);` or
/// `0:r1=1;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Init {
    /// What is initialised.
    pub target: InitTarget,
    /// Its initial value.
    pub value: i64,
    /// The line of the item.
    pub line: usize,
}

/// What an [`Init`] sets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InitTarget {
    /// A shared location.
    Loc(String),
    /// A register of one thread (`0:r1=1`): its value before the thread's first statement.
    Reg {
        /// The thread's index (`0` for `P0`).
        thread: usize,
        /// The register's name.
        reg: String,
    },
}

/// One thread, `Pn(params) { body }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// `n` in `Pn`.
    pub index: usize,
    /// The parameters in order. Each is a pointer to the shared location of the same name.
    pub params: Vec<Param>,
    /// The statements in order.
    pub body: Vec<Stmt>,
    /// The line of `Pn`.
    pub line: usize,
}

/// A thread parameter: `int *x`, `atomic_t *v` or `spinlock_t *s`. The parameter names the
/// shared location of the same name (herd's convention).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The parameter's (and the location's) name.
    pub name: String,
    /// What it points to.
    pub kind: ParamKind,
}

/// The type a parameter points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A plain integer (`int`, `long`, `unsigned int`, ..., with or without `volatile`).
    Int,
    /// An `atomic_t`.
    Atomic,
    /// A `spinlock_t`.
    SpinLock,
}

/// A statement of a thread body. Blocks `{ ... }` are flattened into the enclosing list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `int r0;` or `int r0 = EXPR;` (`int r0, r1 = 1;` gives one `Decl` per register).
    Decl {
        /// The register.
        reg: String,
        /// Its initialiser, if any.
        init: Option<Expr>,
        /// The line.
        line: usize,
    },
    /// `r0 = EXPR;` (also to a register never declared, which herd allows).
    Assign {
        /// The register.
        reg: String,
        /// The value.
        expr: Expr,
        /// The line.
        line: usize,
    },
    /// A call made for its effect: `WRITE_ONCE(*x, 1);`, `smp_mb();`, `(void)xchg(x, 1);`.
    /// `expr` is always an [`Expr::Call`] (or, for `atomic_dec_and_test(v);` and the like, a
    /// comparison of one with a constant).
    Do {
        /// The call.
        expr: Expr,
        /// The line.
        line: usize,
    },
    /// `if (COND) THEN else ELSE`; a missing `else` gives an empty `els`, `else if` gives an
    /// `els` holding one `If`.
    If {
        /// The condition: true when non-zero, as in C.
        cond: Expr,
        /// The statements run when it holds.
        then: Vec<Stmt>,
        /// The statements run otherwise.
        els: Vec<Stmt>,
        /// The line of `if`.
        line: usize,
    },
}

impl Stmt {
    /// The statement's line.
    pub fn line(&self) -> usize {
        match self {
            Stmt::Decl { line, .. } | Stmt::Assign { line, .. } | Stmt::Do { line, .. } | Stmt::If { line, .. } => {
                *line
            }
        }
    }
}

/// An integer expression over registers and primitive calls. Values are `i64`; `==`, `!=`,
/// `<`, `&&`, `!` and the like give 0 or 1 as in C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A constant.
    Int(i64),
    /// A register of the thread.
    Reg(String),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation (`&&` and `||` short-circuit as in C).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A call of an LKMM primitive. `args` are in the order of the C call; see [`Prim`] for
    /// each primitive's argument list.
    Call {
        /// The primitive.
        prim: Prim,
        /// Its arguments, in source order.
        args: Vec<Arg>,
        /// The line of the primitive's name.
        line: usize,
    },
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `!e`: 1 if `e` is 0, else 0.
    Not,
    /// `-e`.
    Neg,
    /// `~e`: bitwise complement.
    BitNot,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+` (wrapping).
    Add,
    /// `-` (wrapping).
    Sub,
    /// `&`.
    BitAnd,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
    /// `&&` (short-circuit).
    And,
    /// `||` (short-circuit).
    Or,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// A primitive's argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A shared location: `*x` (as in `READ_ONCE(*x)`) or `x` (as in `smp_load_acquire(x)`),
    /// where `x` is a parameter of the thread. Both spellings are taken for every primitive.
    Loc(String),
    /// A value.
    Val(Expr),
}

impl Arg {
    /// The location, if this is one.
    pub fn loc(&self) -> Option<&str> {
        match self {
            Arg::Loc(l) => Some(l),
            Arg::Val(_) => None,
        }
    }

    /// The value, if this is one.
    pub fn val(&self) -> Option<&Expr> {
        match self {
            Arg::Loc(_) => None,
            Arg::Val(e) => Some(e),
        }
    }
}

/// The LKMM primitives of the supported fragment, as tools/memory-model/linux-kernel.def
/// defines them. In the argument lists `L` is an [`Arg::Loc`], `V`, `OLD`, `NEW` are
/// [`Arg::Val`]s; "returns" says what the call's value is (a call that returns nothing may
/// only stand as a statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    /// `READ_ONCE(*L)`: a relaxed (marked, "once") load; returns the value read.
    ReadOnce,
    /// `WRITE_ONCE(*L, V)`: a relaxed (marked) store.
    WriteOnce,
    /// `smp_load_acquire(L)`: an acquire load; returns the value read.
    LoadAcquire,
    /// `smp_store_release(L, V)`: a release store.
    StoreRelease,
    /// `smp_mb()`: full fence.
    Mb,
    /// `smp_rmb()`: orders loads against loads.
    Rmb,
    /// `smp_wmb()`: orders stores against stores.
    Wmb,
    /// `smp_mb__before_atomic()`: a full fence between what precedes it and the next
    /// read-modify-write (and what follows that).
    MbBeforeAtomic,
    /// `smp_mb__after_atomic()`: a full fence between the previous read-modify-write (and what
    /// precedes that) and what follows.
    MbAfterAtomic,
    /// `smp_mb__after_spinlock()`: a full fence after the previous `spin_lock()`.
    MbAfterSpinlock,
    /// `smp_mb__after_unlock_lock()`: makes a preceding unlock and the following lock of the
    /// same or another lock a full fence.
    MbAfterUnlockLock,
    /// `xchg(L, V)` and its `_relaxed/_acquire/_release` forms: returns the old value.
    Xchg(Order),
    /// `cmpxchg(L, OLD, NEW)` and its forms: stores `NEW` if the value is `OLD`; returns the
    /// value read. A failed one is only a (relaxed) load: it gives no ordering.
    Cmpxchg(Order),
    /// `atomic_read(L)`: a relaxed load of an `atomic_t`; returns its value.
    AtomicRead,
    /// `atomic_read_acquire(L)`: an acquire load; returns its value.
    AtomicReadAcquire,
    /// `atomic_set(L, V)`: a relaxed store.
    AtomicSet,
    /// `atomic_set_release(L, V)`: a release store.
    AtomicSetRelease,
    /// The arithmetic and bitwise atomic read-modify-writes, as a family:
    ///
    /// - `ret: Void`: `atomic_{add,sub,and,or,xor,andnot}(V, L)`, `atomic_{inc,dec}(L)`;
    ///   unordered (`order` is `Relaxed`), return nothing.
    /// - `ret: New`: `atomic_{add,sub}_return*(V, L)`, `atomic_{inc,dec}_return*(L)`; return
    ///   the new value.
    /// - `ret: Old`: `atomic_fetch_{add,sub,and,or,xor,andnot}*(V, L)`,
    ///   `atomic_fetch_{inc,dec}*(L)`; return the old value.
    ///
    /// Note the argument order of the kernel API: the operand comes first, the location last.
    /// `atomic_{sub,dec,inc}_and_test` and `atomic_add_negative*` are parsed as a comparison
    /// of a `New` call with 0, as linux-kernel.def defines them.
    AtomicRmw {
        /// The operation.
        op: RmwOp,
        /// What the call returns.
        ret: Ret,
        /// Its ordering (`Full` for the unsuffixed value-returning forms).
        order: Order,
    },
    /// `atomic_xchg(L, V)` and its forms: returns the old value.
    AtomicXchg(Order),
    /// `atomic_cmpxchg(L, OLD, NEW)` and its forms: returns the value read; a failed one
    /// gives no ordering.
    AtomicCmpxchg(Order),
    /// `spin_lock(L)`.
    SpinLock,
    /// `spin_unlock(L)`.
    SpinUnlock,
    /// `spin_trylock(L)`: returns 1 if it took the lock, else 0.
    SpinTrylock,
}

impl Prim {
    /// Whether a call returns a value (and so may stand in an expression).
    pub fn returns_value(&self) -> bool {
        match self {
            Prim::ReadOnce
            | Prim::LoadAcquire
            | Prim::Xchg(_)
            | Prim::Cmpxchg(_)
            | Prim::AtomicRead
            | Prim::AtomicReadAcquire
            | Prim::AtomicXchg(_)
            | Prim::AtomicCmpxchg(_)
            | Prim::SpinTrylock => true,
            Prim::AtomicRmw { ret, .. } => *ret != Ret::Void,
            Prim::WriteOnce
            | Prim::StoreRelease
            | Prim::Mb
            | Prim::Rmb
            | Prim::Wmb
            | Prim::MbBeforeAtomic
            | Prim::MbAfterAtomic
            | Prim::MbAfterSpinlock
            | Prim::MbAfterUnlockLock
            | Prim::AtomicSet
            | Prim::AtomicSetRelease
            | Prim::SpinLock
            | Prim::SpinUnlock => false,
        }
    }
}

/// The ordering of a read-modify-write, from its name's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// No suffix on a value-returning operation: fully ordered (a full fence on each side
    /// when it succeeds).
    Full,
    /// `_relaxed`, and every operation that returns nothing: no ordering.
    Relaxed,
    /// `_acquire`: the read is an acquire.
    Acquire,
    /// `_release`: the write is a release.
    Release,
}

/// The operation of an [`Prim::AtomicRmw`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// `add`: `*L + V`.
    Add,
    /// `sub`: `*L - V`.
    Sub,
    /// `inc`: `*L + 1`.
    Inc,
    /// `dec`: `*L - 1`.
    Dec,
    /// `and`: `*L & V`.
    And,
    /// `or`: `*L | V`.
    Or,
    /// `xor`: `*L ^ V`.
    Xor,
    /// `andnot`: `*L & !V`.
    AndNot,
}

/// What an [`Prim::AtomicRmw`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// Nothing (`atomic_add`).
    Void,
    /// The new value (`atomic_add_return`).
    New,
    /// The old value (`atomic_fetch_add`).
    Old,
}

/// The final condition: `exists PROP`, `~exists PROP` or `forall PROP`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// The quantifier.
    pub quant: Quant,
    /// The proposition over final register and location values.
    pub prop: Prop,
    /// The line of the quantifier.
    pub line: usize,
}

/// The final condition's quantifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quant {
    /// `exists`: some execution ends in a state satisfying the proposition.
    Exists,
    /// `~exists`: no execution does.
    NotExists,
    /// `forall`: every execution does.
    Forall,
}

/// A proposition over the final state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prop {
    /// `true`.
    True,
    /// `false`.
    False,
    /// `VAR=VALUE` (also `==`), or `VAR!=VALUE` when `negated`.
    Atom {
        /// The register or location.
        var: CondVar,
        /// Whether it is `!=`.
        negated: bool,
        /// The value compared with.
        value: i64,
    },
    /// `~P`.
    Not(Box<Prop>),
    /// `P /\ Q`.
    And(Box<Prop>, Box<Prop>),
    /// `P \/ Q`.
    Or(Box<Prop>, Box<Prop>),
}

/// A variable of the final condition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CondVar {
    /// `N:reg` (or `PN:reg`): thread N's register.
    Reg {
        /// The thread's index.
        thread: usize,
        /// The register.
        reg: String,
    },
    /// A shared location, `x` (or `[x]`).
    Loc(String),
}
