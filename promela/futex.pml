/* FutexWaiter (runtime/hspc/futex_waiter.hpp), included by handoff.pml; HybridWaiter's futex
 * phase (runtime/hspc/hybrid_waiter.hpp).
 *
 * The epoch word is abstracted to one bit. Each waiter has one sleeping thread, and the only
 * question the kernel asks is "does the word still hold the value `seen` the sleeper read?". So
 * `seen = epoch` is `bumped = 0`, `epoch == seen` is `!bumped` and `epoch += 1` is `bumped = 1`:
 * exact up to the 2^32 wrap of the real counter, and counter values stay out of the state space. */

/* futex_wait(epoch, seen, timeout): the kernel sleeps only if the word still holds `seen`, checked
 * atomically with going to sleep (else EAGAIN); it returns on a FUTEX_WAKE, spuriously (EINTR; a
 * budget for the whole run keeps the liveness run meaningful) or, when timed, at its timeout. */
inline futex_wait(w, timed) {
  atomic {
    if
    :: !w.bumped -> w.asleep = 1
    :: else -> skip
    fi
  };
  if
  :: !w.asleep -> skip
  :: atomic { timed && CAN_IDLE && w.asleep -> w.asleep = 0 }  /* the loop then gives up */
  :: atomic { spurious > 0 && w.asleep -> spurious--; w.asleep = 0 }
  fi
}

/* wait_until(ready, deadline):
 *   if (ready()) return true;
 *   waiting = 1;
 *   for (;;) { seen = epoch; fence; if (ready()) break;
 *              if (deadline passed) { ok = ready(); break; }  futex_wait(epoch, seen, left); }
 *   waiting = 0; return ok;
 * MUTANT_NO_RECHECK sleeps right after setting the flag, checking ready() only after a wake-up.
 * MUTANT_EPOCH_LATE reads the epoch after the check, so a bump in between goes unseen. */
inline wait_until(w, PRED, timed, ok) {
  ok = 1;
  if
  :: PRED -> skip
  :: else ->
    w.waiting = 1;
    do
    :: true ->
#ifndef MUTANT_EPOCH_LATE
      w.bumped = 0;
#endif
#ifndef MUTANT_NO_RECHECK
      if
      :: PRED -> break
      :: else -> skip
      fi;
#endif
#ifdef MUTANT_EPOCH_LATE
      w.bumped = 0;
#endif
      if
      :: atomic { timed && CAN_IDLE -> IDLE_SPENT; ok = PRED }; break
      :: true -> futex_wait(w, timed)
      fi;
#ifdef MUTANT_NO_RECHECK
      if
      :: PRED -> break
      :: else -> skip
      fi
#endif
    od;
    w.waiting = 0
  fi
}

/* notify(), once the state store is done and the flag read as set: epoch += 1, then FUTEX_WAKE. */
inline wake(w) {
  w.bumped = 1;
  w.asleep = 0
}
