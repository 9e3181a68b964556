/*
 * The buffer hand-off protocol of runtime/hspc/channel.hpp, for the spin model checker.
 * See promela/README.md for the correspondence to the C++ and how to run it.
 *
 * One producer and one consumer share B slots used round robin. head counts published slots,
 * tail counts released slots; the producer may fill its next slot while head-tail < B, the
 * consumer may empty its next slot while tail != head. Each side sleeps on its own waiter (futex or condvar
 * flavour, or spins) and the other side wakes it after the store the sleeper waits for.
 *
 * Compile-time choices (spin -D...):
 *   B, CAP, EVENTS       slots, events per slot, events in the stream
 *   COUNTER_MOD, START   where head and tail wrap (256) and their first value (2 below the wrap)
 *   FLAVOUR_CONDVAR      condvar waiters (default: futex waiters)
 *   FLAVOUR_SPIN         spinning waiters (a loop on the predicate)
 *   SPURIOUS             budget of spurious wake-ups for the whole run (default 1)
 *   LIVENESS             adds the LTL property; IDLE bounds empty-handed returns (default 2)
 *   MUTANT_*             a deliberate bug the checker must report (see README.md)
 */

#ifndef B
#define B 2
#endif
#ifndef CAP
#define CAP 2
#endif
#ifndef EVENTS
#define EVENTS (B + 2)
#endif
#ifndef COUNTER_MOD
#define COUNTER_MOD 256
#endif
#ifndef START
#define START (COUNTER_MOD - 2)
#endif
#ifndef SPURIOUS
#define SPURIOUS 1
#endif

/* Coming back empty-handed: a timeout, a try_pop that finds nothing, a done() that says no.
 * The safety run allows it anywhere, any number of times. The liveness run allows it IDLE times:
 * a consumer that only polls never has to finish, and a timeout needs time to pass, during which
 * the other thread runs; weak fairness cannot say so (a consumer timing out in a tight loop could
 * take and drop a condvar's mutex forever while the producer waits for it). */
#ifdef LIVENESS
#ifndef IDLE
#define IDLE 2
#endif
byte idle = IDLE;
#define CAN_IDLE (idle > 0)
#define IDLE_SPENT idle--
#else
#define CAN_IDLE 1
#define IDLE_SPENT skip
#endif

typedef Waiter {
  bool waiting;  /* the sleeping side's flag; the notifier skips the syscall when it reads 0 */
  bool bumped;   /* futex flavour: the epoch word moved since the sleeper read it (see README) */
  bool asleep;   /* inside futex_wait / cond_wait, not yet woken */
  bool locked;   /* condvar flavour: the mutex */
}

byte head = START;       /* slots published (producer-written) */
byte tail = START;       /* slots released (consumer-written) */
bool closed;             /* set by close() after its flush */
byte count[B];           /* events in each published slot */
byte slot_ev[B * CAP];   /* event sequence numbers, CAP per slot */
Waiter cw;               /* the consumer sleeps here, the producer notifies it */
Waiter pw;               /* the producer sleeps here, the consumer notifies it */
byte spurious = SPURIOUS;
bool producer_done;
bool consumer_done;

/* The C++ counters are uint32 and wrap; these wrap at COUNTER_MOD and start at START, just
 * below the wrap, so that every run crosses it (the C++ tests do the same with CounterStart).
 * Differences are taken modulo COUNTER_MOD like the C++'s unsigned subtraction. */
#define NEXT(x) x = (x + 1) % COUNTER_MOD
#define IN_FLIGHT ((head + COUNTER_MOD - tail) % COUNTER_MOD)
#define CONSUMER_READY (closed || head != tail)
#define PRODUCER_READY (IN_FLIGHT < B)

/* Which slot each side is at: the cursors keep the index (ProducerCursor::slot,
 * ConsumerCursor::slot) and advance it modulo Buffers at each hand-off. MUTANT_SLOT_MODULO takes
 * `counter % B` instead, which jumps at the wrap unless B divides the counter range. */
#ifdef MUTANT_SLOT_MODULO
#define PRODUCER_SLOT (head % B)
#define CONSUMER_SLOT (tail % B)
#define ADVANCE(i) skip
#else
#define PRODUCER_SLOT pslot
#define CONSUMER_SLOT cslot
#define ADVANCE(i) i = (i + 1) % B
#endif

#if defined(FLAVOUR_CONDVAR)
#include "condvar.pml"
#elif defined(FLAVOUR_SPIN)
#include "spinning.pml"
#else
#include "futex.pml"
#endif

#include "channel.pml"
