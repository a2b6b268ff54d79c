/*
 * kswapd-stall.pml: an independent cross-check of the kswapd stall protocol with SPIN.
 *
 * This is NOT the code mmcheck checks with loom and shuttle (that is model/src/reclaim/).
 * It is a second, hand-written model of the same protocol in Promela, for two reasons:
 * SPIN's search stores states, so it checks configurations exhaustively that loom's
 * stateless search cannot finish (2 kswapds + writer + allocator has no preemption bound
 * here), and a disagreement between two independently written models points at a modelling
 * mistake in one of them. SPIN interleaves statements under sequential consistency: it says
 * nothing about the barriers (loom's mutants no-barrier-after-clear-congested and friends
 * cover those). Run it with checks/spin/run (see docs/model.md, "SPIN cross-check").
 *
 * Kernel sources, as in model/src/reclaim/vmscan.rs: remove_mapping_list()'s contended path
 * (patches 3/4 and 4/4 of the 2016 tree_lock series), zone_balanced()'s release, the
 * wakeup_kswapd() path that runs it from an allocating task, and kernel/sched/wait.c's
 * prepare_to_wait / __wake_up (autoremove) / finish_wait.
 *
 * Compile-time parameters (spin -D...):
 *   RECHECK    1: the corrected protocol (re-check kswapd_exclusive after prepare_to_wait);
 *              0: patch 3/4 + 4/4 as posted (directcongest-v1; waitqueue-v1 differs only in
 *              not setting PGDAT_CONGESTED, which no check below depends on).
 *   ANYTIME    1: io_schedule_timeout() may time out at any point (the "any-time" timer);
 *              0: it returns only when woken (the "never" timer).
 *   NK         number of kswapds (nodes 0..NK-1), 2 or 3.
 *   BATCHES    remove_mapping_list() calls per kswapd.
 *   ALLOCATOR  1: an allocating task calls wakeup_kswapd(node 0) once.
 *   MUTANT_*   seeded bugs, named as mmcheck's (model/src/mutation.rs), each of which one of the
 *              checks below must catch: checks/spin/run runs every one and fails if it survives.
 *
 * Checks (mmcheck's invariant ids):
 *   single-exclusive     at most one kswapd is inside the exclusive window (it won the cmpxchg and
 *                        has not yet been released), asserted at every win;
 *   exclusive-never-waits the exclusive kswapd never queues itself on kswapd_contended_wait;
 *   no-lost-wakeup       timer never: no kswapd is left asleep when every other process has
 *                        finished (SPIN's invalid end state); any-time: when a sleeping kswapd's
 *                        timer fires it must still have a reason to sleep, i.e. an owner that will
 *                        wake it or a wake in progress; otherwise its wake-up went to an empty
 *                        queue before it queued itself and it slept for nothing;
 *   stall-once           at most one prepare_to_wait() per failed trylock;
 *   exclusive-released   at the end kswapd_exclusive is NUMA_NO_NODE again;
 *   congested-cleared    at the end no node is left tagged PGDAT_CONGESTED;
 *   lock-released        at the end tree_lock and the wait queue's lock are free.
 */

#ifndef RECHECK
#define RECHECK 1
#endif
#ifndef ANYTIME
#define ANYTIME 0
#endif
#ifndef NK
#define NK 2
#endif
#ifndef BATCHES
#define BATCHES 1
#endif
#ifndef ALLOCATOR
#define ALLOCATOR 1
#endif

#define NUMA_NO_NODE 255
#define RUNNING 0
#define INTERRUPTIBLE 1

byte kswapd_exclusive = NUMA_NO_NODE;
bool tree_lock;                 /* mapping->tree_lock */
bool wq_lock;                   /* kswapd_contended_wait.lock */
bool queued[NK];                /* kswapd_contended_wait's entries, one per kswapd */
byte state[NK];                 /* each kswapd's task state */
bool congested[NK];             /* PGDAT_CONGESTED, per node */
bool asleep[NK];                /* kswapd has gone to sleep (waitqueue_active(&pgdat->kswapd_wait)) */

/* ghosts, for the checks only */
byte in_exclusive;              /* kswapds that won the cmpxchg and were not yet released */
byte wakes_in_flight;           /* zone_balanced() calls that found their node exclusive and have not
                                 * finished their wake_up_interruptible() */

#define spin_lock(l)    atomic { !l -> l = true }
#define spin_unlock(l)  l = false

/* wake_up_interruptible(&kswapd_contended_wait): under the queue's lock, wake every queued
 * task in TASK_INTERRUPTIBLE; autoremove takes woken entries off the queue. */
inline wake_up_interruptible() {
    spin_lock(wq_lock);
    i = 0;
    do
    :: i < NK ->
        if
        :: queued[i] && state[i] == INTERRUPTIBLE -> state[i] = RUNNING; queued[i] = false
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    spin_unlock(wq_lock)
}

/* cmpxchg(&kswapd_exclusive, nid, NUMA_NO_NODE) */
inline release_exclusive(nid) {
    atomic {
        if
        :: kswapd_exclusive == nid ->
            kswapd_exclusive = NUMA_NO_NODE; in_exclusive--
        :: else -> skip
        fi
    }
}

/* zone_balanced(nid)'s balanced path: clear PGDAT_CONGESTED; if nid is the exclusive
 * kswapd's node, reset kswapd_exclusive, then wake kswapd_contended_wait. */
inline zone_balanced(nid) {
#ifndef MUTANT_BALANCED_KEEPS_CONGESTED
    congested[nid] = false;
#endif
    if
    :: atomic { kswapd_exclusive == nid -> wakes_in_flight++ }
#if defined(MUTANT_BALANCED_KEEPS_EXCLUSIVE)
        skip;
#elif defined(MUTANT_WAKE_BEFORE_RESET)
        wake_up_interruptible();
        release_exclusive(nid);
#elif defined(MUTANT_RELEASE_WITHOUT_WAKE)
        release_exclusive(nid);
#else
        release_exclusive(nid);
        wake_up_interruptible();
#endif
        wakes_in_flight--
    :: else -> skip
    fi
}

/* the loser's one stall: prepare_to_wait(); [re-check]; io_schedule_timeout(HZ/100);
 * finish_wait() */
inline contended_stall(nid) {
#if RECHECK && defined(MUTANT_RECHECK_BEFORE_ENQUEUE)
    sleep = (kswapd_exclusive != NUMA_NO_NODE && kswapd_exclusive != nid);
#endif
    spin_lock(wq_lock);
    queued[nid] = true;
    state[nid] = INTERRUPTIBLE;
    spin_unlock(wq_lock);
    assert(kswapd_exclusive != nid);                         /* exclusive-never-waits */
    stalls++;
    assert(stalls == 1);                                     /* stall-once */
#if RECHECK && !defined(MUTANT_RECHECK_BEFORE_ENQUEUE)
    sleep = (kswapd_exclusive != NUMA_NO_NODE && kswapd_exclusive != nid);
#elif !RECHECK
    sleep = true;
#endif
    if
    :: sleep ->
#if ANYTIME
        if
        :: state[nid] == RUNNING -> skip                     /* woken */
        :: true ->                                           /* the timer fires */
            assert(state[nid] == RUNNING || wakes_in_flight > 0
                   || (kswapd_exclusive != NUMA_NO_NODE && kswapd_exclusive != nid))  /* no-lost-wakeup */
        fi
#else
        state[nid] == RUNNING                                /* no timer: only a wake ends it */
#endif
    :: else -> skip
    fi;
    state[nid] = RUNNING;                                    /* finish_wait() */
    if
    :: queued[nid] -> spin_lock(wq_lock); queued[nid] = false; spin_unlock(wq_lock)
    :: else -> skip
    fi
}

proctype kswapd(byte nid) {
    byte b = 0, i, owner, stalls;
    bool trylocked, sleep, won;
    do
    :: b < BATCHES ->
        won = false;
        if
#ifndef MUTANT_EXCLUSIVE_TRYLOCKS
        :: kswapd_exclusive == nid -> spin_lock(tree_lock)    /* exclusive: blocking lock */
#endif
        :: else ->
            atomic {                                         /* spin_trylock */
                if
                :: !tree_lock -> tree_lock = true; trylocked = true
                :: else -> trylocked = false
                fi
            }
            if
            :: trylocked -> skip
            :: else ->
                atomic {
#ifdef MUTANT_STORE_NOT_CMPXCHG
                    owner = NUMA_NO_NODE; kswapd_exclusive = nid; /* a plain store */
#else
                    owner = kswapd_exclusive;                /* cmpxchg(NUMA_NO_NODE -> nid) */
                    if
                    :: owner == NUMA_NO_NODE -> kswapd_exclusive = nid
                    :: else -> skip
                    fi;
#endif
                    if
                    :: owner == NUMA_NO_NODE ->
                        won = true; in_exclusive++;
                        assert(in_exclusive == 1)            /* single-exclusive */
                    :: else -> skip
                    fi
                }
                if
                :: !won ->
                    congested[nid] = true;                   /* 4/4: set_bit(PGDAT_CONGESTED) */
                    stalls = 0;
                    contended_stall(nid);
#ifdef MUTANT_STALL_TWICE
                    contended_stall(nid);
#endif
                :: else -> skip
                fi;
                spin_lock(tree_lock)
            fi
        fi;
        /* __remove_mapping() for each page: nothing shared beyond tree_lock */
#ifdef MUTANT_EXCLUSIVE_KEEPS_LOCK
        if
        :: won -> skip
        :: else -> spin_unlock(tree_lock)
        fi;
#else
        spin_unlock(tree_lock);
#endif
        b++
    :: else -> break
    od;
    asleep[nid] = true;                                      /* kswapd goes to sleep */
    zone_balanced(nid)
}

proctype writer() {
    spin_lock(tree_lock);                                    /* add_to_page_cache */
    spin_unlock(tree_lock)
}

proctype allocator() {
    byte i;
    /* wakeup_kswapd(node 0): if the node's kswapd is asleep (and the zone balanced), run
     * zone_balanced() in this task */
    if
    :: asleep[0] -> zone_balanced(0)
    :: else -> skip
    fi
}

init {
    byte n;
    atomic {
        n = 0;
        do
        :: n < NK -> run kswapd(n); n++
        :: else -> break
        od;
        run writer();
#if ALLOCATOR
        run allocator();
#endif
    }
    _nr_pr == 1;                                             /* every other process finished */
    assert(kswapd_exclusive == NUMA_NO_NODE);                /* exclusive-released */
    n = 0;
    do
    :: n < NK -> assert(!congested[n]); n++                  /* congested-cleared */
    :: else -> break
    od;
    assert(!tree_lock && !wq_lock)                           /* lock-released */
}
