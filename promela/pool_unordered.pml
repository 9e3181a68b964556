/* A spin model of BasicConsumerPool's unordered mode and of a producer's place reused
 * (runtime/hspc/pool.hpp, pool_deal.hpp, pool_lane.hpp, pool_roster.hpp, pool_parking.hpp): one
 * producer deals its buffers round robin over L lanes (PoolDeal); consumers claim any lane for a
 * turn and release it, park and are woken as in pool.pml; each lane's end is counted once, the
 * deal is finished when all L were, and the pool's count of finished producers follows, after
 * the release. With REUSE the producer then comes back as a new one in the same place (what
 * add_producer does once the deal is finished and its producer left close()): every lane reopened
 * while the claim is held, the deal's counts reset, GENS = 2 streams in all.
 *
 * Checked (safety run, every interleaving): no two consumers in one lane at once (assert), no
 * lane's end counted twice in one stream (assert), every buffer of every stream taken and every
 * stream finished at the end (assert), and no invalid end state: a consumer asleep with work
 * waiting and nobody left to wake it, a producer blocked on a full lane nobody drains, or wait()
 * never returning, all leave processes blocked.
 *
 * Abstractions: those of pool.pml (see its header and promela/README.md): SC, restored by the
 * seq_cst fences of each Dekker pair; a look over the lanes in one step; a turn in one step once
 * the claim is held; a waiter as "sleep until token[c]".
 *
 * Mutants (each must be reported): MUTANT_NO_CLAIM (a consumer takes a lane without the claim's
 * CAS), MUTANT_CLOSE_ONE (close() ends only the lane whose turn it is, as a channel's close
 * would), MUTANT_NO_NOTIFY (a hand-off wakes nobody), MUTANT_REOPEN_UNCLAIMED (with REUSE: a lane
 * reopened without holding its claim, its stores seen in the other order, which nothing then
 * forbids), MUTANT_REUSE_UNDRAINED (with REUSE: a place reused once its producer left close(),
 * before every lane's end was seen).
 */

#ifndef L
#define L 2 /* lanes of the deal: the pool's max consumers */
#endif
#ifndef C
#define C 2 /* consumers */
#endif
#ifndef BUFS
#define BUFS 2 /* buffers the producer hands over per stream */
#endif
#ifndef CAP
#define CAP 1 /* untaken buffers a lane's channel holds: the producer waits beyond */
#endif
#ifndef TURN
#define TURN 1 /* buffers a consumer takes per turn (the pool: Buffers) */
#endif
#ifdef REUSE
#define GENS 2
#else
#define GENS 1
#endif

byte head[L];      /* buffers published (each lane's channel head; they go on across streams) */
byte tail[L];      /* buffers taken */
bool closed[L];
bool claimed[L];   /* each lane's claim word */
bool finished[L];  /* its end seen by a consumer */
byte ended;        /* PoolDeal::ended_: lanes whose end was seen in this stream */
bool left;         /* PoolDeal::left_: the producer left close() */
byte nfinished;    /* the roster's finished producers (streams) */
byte inside[L];    /* consumers in lane j now */
bool parked[C];    /* the parked word's bits */
bool token[C];     /* each seat's wake token (its waiter's predicate) */
bool stop;

/* wanted(): unclaimed, not finished, and a published buffer or an unseen end. */
#define WANTED(j) (!claimed[j] && !finished[j] && (head[j] != tail[j] || closed[j]))

/* notify_one(), as in pool.pml. */
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

/* PoolLane::reopen(), for every lane, then the deal's counts (the caller saw it reusable). */
inline reopen() {
  for (j : 0 .. L - 1) {
#ifdef MUTANT_REOPEN_UNCLAIMED
    finished[j] = 0;
    closed[j] = 0
#else
    atomic { !claimed[j] -> claimed[j] = 1 };  /* waits out a turn that found it finished */
    closed[j] = 0;
    finished[j] = 0;
    claimed[j] = 0
#endif
  }
  j = 0;
  ended = 0;
  left = 0
}

proctype Producer() {
  byte g, i, at, j, k;
  bool woke;
  for (g : 1 .. GENS) {
    if
#ifdef MUTANT_REUSE_UNDRAINED
    :: g > 1 -> left; reopen(); at = 0
#else
    :: g > 1 -> (ended == L && left); reopen(); at = 0  /* add_producer(): a reusable place */
#endif
    :: else -> skip
    fi;
    for (i : 1 .. BUFS) {
      (head[at] - tail[at] < CAP);  /* push blocks while the lane's buffers are all in use */
      head[at]++;                   /* the hand-off's release store (and the fence) */
#ifndef MUTANT_NO_NOTIFY
      notify_one();
#endif
      at = (at + 1) % L             /* the next lane's turn */
    }
#ifdef MUTANT_CLOSE_ONE
    closed[at] = 1;
#else
    for (j : 0 .. L - 1) { closed[j] = 1 }  /* close(): every lane's channel */
    j = 0;
#endif
    notify_one();                   /* one: a woken consumer looks over every lane */
    left = 1
  }
}

proctype Consumer(byte c) {
  byte p, at, k, runs;
  bool found, got, woke, work, last;
  do
  :: stop -> break
  :: else ->
     /* wanted_lane(c): the first wanted lane from lane c on (one step) */
     atomic {
       found = 0;
       at = 0;
       do
       :: at == L -> break
       :: at < L ->
          p = (c + at) % L;
          if
          :: WANTED(p) -> found = 1; break
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
           atomic {  /* the turn: up to TURN buffers, the lane's end counted once per stream */
             runs = 0;
             do
             :: runs < TURN && tail[p] != head[p] -> tail[p]++; runs++
             :: else -> break
             od;
             runs = 0;
             if
             :: closed[p] && head[p] == tail[p] && !finished[p] ->
                finished[p] = 1;
                assert(ended < L);
                ended++;
                last = (ended == L)
             :: else -> skip
             fi;
             inside[p]--
           }
           claimed[p] = 0;      /* release(): store, fence, then the look */
           if
           :: WANTED(p) -> notify_one()
           :: else -> skip
           fi;
           if
           :: last -> nfinished++; last = 0  /* finished_one(), after the release */
           :: else -> skip
           fi
        :: else -> skip
        fi;
        p = 0;
        got = 0
     :: else ->
        /* park(): bit, fence, one more look, then sleep for the token */
        parked[c] = 1;
        atomic {
          work = stop;
          at = 0;
          do
          :: at == L -> break
          :: at < L -> if :: WANTED(at) -> work = 1; break :: else -> at++ fi
          od;
          at = 0
        }
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

/* wait(): every stream finished, then stop and wake every parked consumer. */
proctype Waiter() {
  byte k;
  nfinished == GENS;
  stop = 1;
  atomic {  /* notify_all() */
    for (k : 0 .. C - 1) {
      if
      :: parked[k] -> parked[k] = 0; token[k] = 1
      :: else -> skip
      fi
    }
    k = 0
  }
}

init {
  byte i, taken;
  atomic {
    run Producer();
    for (i : 0 .. C - 1) { run Consumer(i) }
    run Waiter()
  }
  (_nr_pr == 1);  /* everyone else ended */
  for (i : 0 .. L - 1) {
    assert(finished[i]);
    taken = taken + tail[i]
  }
  assert(taken == GENS * BUFS)
}
