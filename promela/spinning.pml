/* SpinWaiter and MutexWaiter (runtime/hspc/spin_waiter.hpp, mutex_waiter.hpp), included by
 * handoff.pml. They poll ready() (under their lock) until it holds or the deadline passes, and
 * notify() does nothing: there is no sleep to miss, so the model blocks on the predicate itself.
 * Their lock only makes the state store and the poll mutually exclusive, which the model's atomic
 * steps already are. */

inline wait_until(w, PRED, timed, ok) {
  ok = 1;
  if
  :: PRED -> skip
  :: atomic { timed && CAN_IDLE -> IDLE_SPENT; ok = 0 }  /* a poll failed, then the deadline */
  fi
}

inline wake(w) {
  skip
}
