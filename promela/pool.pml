/* A spin model of BasicConsumerPool's ordered mode (runtime/hspc/pool.hpp, pool_lane.hpp,
 * pool_parking.hpp): consumers that claim a producer's lane for a turn and release it, park with
 * a bit in the parked word and a token, and the notifies of producers (at each hand-off and at
 * close), of consumers leaving a lane with work in it, and of wait()'s stop.
 *
 * Checked (safety run, every interleaving): no two consumers in one lane at once (assert), every
 * buffer taken once (assert at the end), and no invalid end state: a consumer asleep with work
 * waiting and nobody left to wake it, or wait() never returning, both leave processes blocked.
 *
 * What is abstracted (promela/README.md, "Abstractions"): each waiter is "sleep until token[k]",
 * which every primitive implements (handoff.pml checks the waiters themselves); the channel is
 * its counters (head: buffers published, tail: buffers taken) with room for CAP untaken buffers;
 * sequential consistency, which the seq_cst fences on both sides of each Dekker pair restore
 * (claim release / parked bit against the lane's and the word's loads). A consumer's look over
 * the lanes is one step: every change that makes a lane wanted (a hand-off, a close, a release)
 * is followed by its maker's look at the parked bits, so a look split between lanes can miss a
 * lane only where that maker then sees the looker's bit, as it does for a single lane.
 *
 * Mutants (each must be reported): MUTANT_NO_RECHECK (parks without looking for work again
 * after setting its bit), MUTANT_NO_NOTIFY (a producer's hand-off wakes nobody), MUTANT_NO_CLAIM
 * (a consumer takes a lane without the claim's CAS), MUTANT_STOP_NO_WAKE (wait() sets stop but
 * wakes no parked consumer).
 */

#ifndef P
#define P 2 /* producers */
#endif
#ifndef C
#define C 2 /* consumers */
#endif
#ifndef BUFS
#define BUFS 2 /* buffers each producer hands over */
#endif
#ifndef CAP
#define CAP 1 /* untaken buffers a channel holds: a producer waits beyond */
#endif
#ifndef TURN
#define TURN 1 /* buffers a consumer takes per turn (the pool: Buffers) */
#endif

byte head[P];      /* buffers published (the channel's head) */
byte tail[P];      /* buffers taken (the channel's tail) */
bool closed[P];
bool claimed[P];   /* the lane's claim word */
bool finished[P];  /* its end seen by a consumer */
byte nfinished;
byte inside[P];    /* consumers in lane p now */
bool parked[C];    /* the parked word's bits */
bool token[C];     /* each seat's wake token (its waiter's predicate) */
bool stop;

/* wanted(): unclaimed, not finished, and a published buffer or an unseen end. */
#define WANTED(p) (!claimed[p] && !finished[p] && (head[p] != tail[p] || closed[p]))

/* notify_one(): after the caller's store and fence, one look at the parked word that clears its
 * lowest set bit (the fetch_and that makes one waker own the wake; a lost race there moves on to
 * the next bit, the same outcome as clearing it at one instant), then the token to that seat. */
inline notify_one() {
  atomic {
    k = 0;
    do
    :: k == C -> break
    :: k < C && parked[k] -> parked[k] = 0; woke = 1; break
    :: k < C && !parked[k] -> k++
    od
  }
  if
  :: woke -> token[k] = 1
  :: else -> skip
  fi;
  k = 0;
  woke = 0
}

proctype Producer(byte p) {
  byte i, k;
  bool woke;
  for (i : 1 .. BUFS) {
    (head[p] - tail[p] < CAP);  /* push blocks while every buffer is in use */
    head[p]++;                  /* the hand-off's release store (and the fence) */
#ifndef MUTANT_NO_NOTIFY
    notify_one();
#endif
  }
  closed[p] = 1;                /* close() */
  notify_one()
}

proctype Consumer(byte c) {
  byte p, at, k, runs, next;
  bool found, got, woke, work;
  next = c % P;
  do
  :: stop -> break
  :: else ->
     /* find_lane: the first wanted lane from `next` on (one step: see the note at the top) */
     atomic {
       found = 0;
       at = 0;
       do
       :: at == P -> break
       :: at < P ->
          p = (next + at) % P;
          if
          :: WANTED(p) -> found = 1; next = (p + 1) % P; break
          :: else -> at++
          fi
       od;
       at = 0
     }
     if
     :: found ->
#ifdef MUTANT_NO_CLAIM
        got = 1;
#else
        atomic {
          if
          :: !claimed[p] -> claimed[p] = 1; got = 1
          :: else -> got = 0
          fi
        }
#endif
        if
        :: got ->
           inside[p]++;
           assert(inside[p] == 1);
           atomic {  /* the turn: up to TURN buffers taken, the end noted (claim held) */
             runs = 0;
             do
             :: runs < TURN && tail[p] != head[p] -> tail[p]++; runs++
             :: else -> break
             od;
             runs = 0;
             if
             :: closed[p] && head[p] == tail[p] && !finished[p] -> finished[p] = 1; nfinished++
             :: else -> skip
             fi;
             inside[p]--
           }
           claimed[p] = 0;      /* release(): store, fence, then the look */
           if
           :: WANTED(p) -> notify_one()
           :: else -> skip
           fi
        :: else -> skip
        fi;
        p = 0;
        got = 0
     :: else ->
        /* park(): bit, fence, one more look, then sleep for the token */
        parked[c] = 1;
#ifdef MUTANT_NO_RECHECK
        work = stop;
#else
        atomic {
          work = stop;
          at = 0;
          do
          :: at == P -> break
          :: at < P -> if :: WANTED(at) -> work = 1; break :: else -> at++ fi
          od;
          at = 0
        }
#endif
        if
        :: work -> parked[c] = 0
        :: else ->
           token[c] == 1;
           token[c] = 0;
           parked[c] = 0
        fi;
        work = 0
     fi
  od
}

/* wait(): every lane finished, then stop and wake every parked consumer. */
proctype Waiter() {
  byte k;
  nfinished == P;
  stop = 1;
#ifndef MUTANT_STOP_NO_WAKE
  atomic {  /* notify_all(): the word exchanged for 0, a token to every bit that was set */
    for (k : 0 .. C - 1) {
      if
      :: parked[k] -> parked[k] = 0; token[k] = 1
      :: else -> skip
      fi
    }
    k = 0
  }
#endif
}

init {
  byte i;
  atomic {
    for (i : 0 .. P - 1) { run Producer(i) }
    for (i : 0 .. C - 1) { run Consumer(i) }
    run Waiter()
  }
  (_nr_pr == 1);  /* everyone else ended */
  for (i : 0 .. P - 1) { assert(tail[i] == BUFS && finished[i]) }
}
