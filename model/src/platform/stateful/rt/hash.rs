//! Hashing: the word mixer and finaliser of the local hashes and the fingerprint, and the
//! terms of the fingerprint's incrementally maintained object and lock part (see the
//! platform's docs, "Local hashes and the fingerprint").

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
pub(super) const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
const P3: u64 = 0x5899_65cc_7537_4cc3;
pub(super) const TAG_INIT: u64 = 0x1d8e_4e27_c47d_124f;
pub(super) const TAG_RESET: u64 = 0x9e37_79b9_7f4a_7c15;

/// The folded 64x64->128 multiply (wyhash's `mum`).
#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let r = (a as u128) * (b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Mixes two words into one (wyhash's `wymix`): one multiply.
#[inline(always)]
pub(super) fn mix(a: u64, b: u64) -> u64 {
    mum(a ^ P0, b ^ P1)
}

/// The murmur3 finaliser: a bijective avalanche.
#[inline(always)]
pub(super) fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[inline(always)]
pub(super) fn obj_term(i: usize, v: u64) -> u64 {
    mix(v, (i as u64 + 1).wrapping_mul(P2))
}

#[inline(always)]
pub(super) fn lock_term(l: usize, owner: usize) -> u64 {
    mix(owner as u64, (l as u64 + 1).wrapping_mul(P3))
}
