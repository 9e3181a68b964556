/* CondvarWaiter (runtime/hspc/condvar_waiter.hpp), included by handoff.pml. */

inline lock(w) {
  atomic { !w.locked -> w.locked = 1 }
}

inline unlock(w) {
  w.locked = 0
}

/* cv.wait(lock) / cv.wait_until(lock, deadline): releasing the mutex and joining the condvar's
 * queue are one atomic step; it returns on notify_one, spuriously (a budget for the whole run)
 * or, when timed, at the deadline (timedout = 1); it re-acquires the mutex in every case. */
inline cond_wait(w, timed, timedout) {
  atomic { w.asleep = 1; w.locked = 0 };
  if
  :: !w.asleep -> skip
  :: atomic { timed && CAN_IDLE && w.asleep -> IDLE_SPENT; w.asleep = 0; timedout = 1 }
  :: atomic { spurious > 0 && w.asleep -> spurious--; w.asleep = 0 }
  fi;
  lock(w)
}

/* wait_steady(ready, deadline):
 *   if (ready()) return true;
 *   lock m; waiting = 1; fence;
 *   while (!ready()) { wait or wait_until; on timeout { ok = ready(); break; } }
 *   waiting = 0; unlock m; return ok;
 * MUTANT_NO_RECHECK sets the flag only after the first failed check under the mutex, so a
 * notifier storing in between reads waiting == 0 and does not signal. */
inline wait_until(w, PRED, timed, ok) {
  ok = 1;
  if
  :: PRED -> skip
  :: else ->
    lock(w);
#ifndef MUTANT_NO_RECHECK
    w.waiting = 1;
#endif
    do
    :: PRED -> break
    :: else ->
#ifdef MUTANT_NO_RECHECK
      w.waiting = 1;
#endif
      timedout = 0;
      cond_wait(w, timed, timedout);
      if
      :: timedout ->
        ok = PRED;
        break
      :: else -> skip
      fi
    od;
    w.waiting = 0;
    unlock(w)
  fi
}

/* notify(), once the state store is done and the flag read as set: lock m; notify_one; unlock.
 * Taking the mutex orders the signal after the sleeper's check or its entry into the wait.
 * MUTANT_SIGNAL_UNLOCKED signals without it. */
inline wake(w) {
#ifdef MUTANT_SIGNAL_UNLOCKED
  w.asleep = 0
#else
  lock(w);
  w.asleep = 0;
  unlock(w)
#endif
}
