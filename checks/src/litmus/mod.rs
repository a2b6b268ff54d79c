//! # C litmus tests
//!
//! A parser for the "C" litmus-test format of herd7 (herdtools7), the format of the Linux
//! kernel's `tools/memory-model/litmus-tests/` and `Documentation/litmus-tests/`, as checked
//! by herd7 under the Linux-kernel memory model (LKMM: `linux-kernel.cat`, whose primitives
//! `linux-kernel.def` defines). It turns a test into an [`ast::Litmus`] for an interpreter to
//! run; it does not run anything itself.
//!
//! ## The format
//!
//! ```text
//! C MP+release+acquire                         <- `C`, then the test's name
//! "an optional doc string"
//! (*
//!  * Result: Never                             <- the expected answer (optional)
//!  *)
//! { x=0; int y = 0; atomic_t v = ATOMIC_INIT(1); spinlock_t s; 0:r1=2; }   <- initial state
//!
//! P0(int *x, int *y)                           <- threads P0, P1, ... in order; each
//! {                                               parameter is the shared location of
//!     WRITE_ONCE(*x, 1);                          the same name
//!     smp_store_release(y, 1);
//! }
//!
//! P1(int *x, int *y)
//! {
//!     int r0;
//!     int r1 = 0;
//!
//!     r0 = smp_load_acquire(y);
//!     if (r0 == 1)
//!         r1 = READ_ONCE(*x);
//! }
//!
//! locations [x; 1:r0]                          <- optional, ignored
//! exists (1:r0=1 /\ 1:r1=0)                    <- `exists`, `~exists` or `forall`
//! ```
//!
//! Comments are `(* ... *)` (outside thread code only, since `READ_ONCE(*x)` contains `(*`),
//! `/* ... */` and `// ...` anywhere. The expected result is read from a `Result: Never`,
//! `Result: Sometimes` or `Result: Always` line in a comment before the initial state; it
//! says how often the final condition's proposition holds under the LKMM (for `exists`:
//! `Never` means the outcome is forbidden).
//!
//! ## The fragment
//!
//! - **Initial state**: `x=N`, `int x;`, `int x = N;`, `atomic_t x = ATOMIC_INIT(N);`,
//!   `spinlock_t s;`, `N:reg=N`. Unnamed locations and registers start at 0.
//! - **Parameters**: `int *x` (any integer type, `volatile`), `atomic_t *x`, `spinlock_t *x`.
//! - **Statements**: register declarations `int r0;`, `int r0 = EXPR;` (also `int r0, r1;`),
//!   assignments `r0 = EXPR;` (to undeclared registers too, as herd allows), calls for their
//!   effect (`WRITE_ONCE(*x, 1);`, `(void)xchg(x, 1);`), `if (EXPR) ... else ...` with or
//!   without braces, blocks.
//! - **Expressions**: integers, registers, `! - ~`, `+ - & | ^ && || == != < <= > >=`,
//!   parentheses, and calls of the primitives below.
//! - **Primitives** (see [`ast::Prim`]), exactly as linux-kernel.def names them:
//!   `READ_ONCE`, `WRITE_ONCE`, `smp_load_acquire`, `smp_store_release`; the fences `smp_mb`,
//!   `smp_rmb`, `smp_wmb`, `smp_mb__before_atomic`, `smp_mb__after_atomic`,
//!   `smp_mb__after_spinlock`, `smp_mb__after_unlock_lock`; `xchg` and `cmpxchg` with their
//!   `_relaxed`, `_acquire`, `_release` forms; `atomic_read`, `atomic_read_acquire`,
//!   `atomic_set`, `atomic_set_release`; `atomic_{add,sub,and,or,xor,andnot}` and
//!   `atomic_{inc,dec}` (returning nothing, unordered); `atomic_{add,sub,inc,dec}_return` and
//!   `atomic_fetch_{add,sub,inc,dec,and,or,xor,andnot}` with their ordering forms;
//!   `atomic_xchg`, `atomic_cmpxchg` and forms; `atomic_{sub,dec,inc}_and_test` and
//!   `atomic_add_negative` (parsed as a comparison of the value-returning RMW with 0, as the
//!   .def defines them); `spin_lock`, `spin_unlock`, `spin_trylock`. A location argument may
//!   be written `*x` or `x`.
//! - **Final condition**: `exists`, `~exists`, `forall` over `/\`, `\/`, `~`, parentheses,
//!   `true`, `false` and atoms `N:reg=V`, `PN:reg=V`, `x=V`, `[x]=V`, with `=`, `==` or `!=`;
//!   preceded by an optional `locations [...]`, whose content is ignored.
//!
//! ## What is refused
//!
//! A valid test outside the fragment is an [`LitmusError::Unsupported`] naming the first
//! construct found: RCU and SRCU (`rcu_read_lock()`, `synchronize_rcu()`,
//! `rcu_dereference()`, `srcu_read_lock()`, ...), `spin_is_locked()`, `smp_store_mb()`,
//! `barrier()`, `atomic_add_unless()`, any other function; plain C accesses (`*x = 1`,
//! `r0 = *x`); pointers (`y=&x` or `y=z` in the initial state, `int *y = &x`, `int **p`
//! parameters, `int *r0` registers, pointer values in expressions or the condition); `filter`
//! clauses; loops, casts other than `(void)`, `* / % << >> ?:`, compound assignments;
//! non-C tests (`AArch64 ...`). Text that is not a C litmus test is an
//! [`LitmusError::Malformed`]: syntax errors, unknown registers or locations, threads out of
//! order, a value-less call used as a value, nesting deeper than [`parse::MAX_DEPTH`]. Both
//! carry the file and line; the parser never panics.

pub mod ast;
pub mod parse;
pub mod report;
pub mod run;

pub use ast::*;
pub use parse::{parse, parse_file, LitmusError};
