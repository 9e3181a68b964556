/* BasicChannel (runtime/hspc/channel.hpp, its hand-off steps in slot_ring.hpp): the producer and
 * consumer, included by handoff.pml after one waiter flavour. Names follow the C++: fill, publish,
 * next_slot, enter_slot, take, release_slot, consume, done. */

/* Waiter::publish(store): the state store, a seq_cst fence, then a relaxed read of the sleeper's
 * flag. The model is sequentially consistent, so the fence is the order of the two steps;
 * MUTANT_NOTIFY_REORDER reads the flag before the store, as the hardware may without the fence
 * (store->load is the one reordering x86 does). */
inline before_store(w) {
#ifdef MUTANT_NOTIFY_REORDER
  seen = w.waiting
#else
  skip
#endif
}

inline after_store(w) {
#ifndef MUTANT_NOTIFY_REORDER
  seen = w.waiting;
#endif
  if
  :: seen -> wake(w)
  :: else -> skip
  fi
}

/* Producer: the slot's count, the next slot index, then head += 1 (release), then notify. */
inline publish() {
  count[PRODUCER_SLOT] = fill;
  fill = 0;
  ADVANCE(pslot);
  before_store(cw);
  NEXT(head);
  after_store(cw)
}

/* push/emplace into the slot being filled; full: publish; otherwise maybe flush() now. The
 * nondeterministic publish of a partial slot after any push is also the latency bound's early
 * hand-off (BasicChannel with MaxLatencyNs != 0 calls flush() when its clock says the slot is due;
 * its clock is producer-private state with no effect on the hand-off), so the model covers it. */
inline put() {
  slot_ev[PRODUCER_SLOT * CAP + fill] = seq;
  seq++;
  fill++;
  if
  :: fill == CAP -> publish()
  :: fill < CAP -> skip
  :: fill < CAP -> publish()
  fi
}

proctype Producer() {
  byte seq;   /* sequence number of the next event */
  byte fill;  /* events in the slot being filled; 0 = no slot taken yet */
  byte pslot; /* ProducerCursor::slot: the slot being filled */
  bool ok, timedout, seen;
  do
  :: seq < EVENTS && fill > 0 -> put()
  :: seq < EVENTS && fill == 0 ->
    /* take_free_slot(); try_push is this without the wait, and its failure changes nothing */
    wait_until(pw, PRODUCER_READY, 0, ok);
    assert(PRODUCER_READY);
    put()
  :: else -> break
  od;
  /* close(): flush, then closed = true through data_ready's publish */
  if
  :: fill > 0 -> publish()
  :: else -> skip
  fi;
#ifdef MUTANT_CLOSE_NO_NOTIFY
  closed = 1;
#else
  before_store(cw);
  closed = 1;
  after_store(cw);
#endif
  producer_done = 1
}

/* Consumer: the slot at tail is published; hold it (read = 0, count = its count). */
inline enter_slot() {
  s = CONSUMER_SLOT;
  cnt = count[s];
  assert(cnt >= 1 && cnt <= CAP);
  idx = 0;
  entered = 1
}

/* next_slot(deadline): wait until a slot is published (entered = 1), the stream ended
 * (entered = 0, ok = 1) or the deadline passed (ok = 0). When head says nothing is published,
 * closed is read, then waited for, and head read again: closed's acquire makes the final head
 * visible, so "nothing" seen after it is the end. MUTANT_END_EARLY skips that second read. */
inline next_slot(timed) {
  entered = 0;
  ok = 1;
  h = head;
  if
  :: tail != h -> skip
  :: else ->
    if
    :: !closed -> wait_until(cw, CONSUMER_READY, timed, ok)
    :: else -> skip
    fi;
#ifndef MUTANT_END_EARLY
    if
    :: ok -> h = head
    :: else -> skip
    fi
#endif
  fi;
  if
  :: ok && tail != h -> enter_slot()
  :: else -> skip
  fi
}

/* Read the next event of the held slot: it must be the next of the stream. */
inline deliver() {
  assert(slot_ev[s * CAP + idx] == expect);
  expect++;
  idx++
}

/* release_slot(): the next slot index, then tail += 1 (release) through space_ready's publish. */
inline release_slot() {
  idx = 0;
  cnt = 0;
  ADVANCE(cslot);
  before_store(pw);
  NEXT(tail);
  after_store(pw)
}

/* take(out): one event; the slot goes back after its last event. MUTANT_EARLY_RELEASE gives the
 * slot back before reading its last event, so the producer may overwrite it. */
inline take() {
  s = CONSUMER_SLOT;
#ifdef MUTANT_EARLY_RELEASE
  if
  :: idx + 1 == cnt ->
    ADVANCE(cslot);
    before_store(pw);
    NEXT(tail);
    after_store(pw);
    deliver();
    idx = 0;
    cnt = 0
  :: else -> deliver()
  fi
#else
  deliver();
  if
  :: idx == cnt -> release_slot()
  :: else -> skip
  fi
#endif
}

/* consume(f): the rest of the held slot in one run, then release_slot(). */
inline drain() {
  s = CONSUMER_SLOT;
  do
  :: idx < cnt -> deliver()
  :: else -> break
  od;
  release_slot()
}

/* pop or consume returned false / 0, pop_for returned false without timing out, or done() said
 * true: the end of the stream was reported, so everything must have been delivered. */
inline end_of_stream() {
  assert(expect == EVENTS && idx == cnt);
  ended = 1
}

proctype Consumer() {
  byte expect;  /* sequence number of the next event to deliver */
  byte idx;     /* ConsumerCursor::read: events taken from the held slot */
  byte cnt;     /* ConsumerCursor::count: its events; idx == cnt means no slot held */
  byte s, h;
  byte cslot;   /* ConsumerCursor::slot: the slot being emptied */
  bool ok, timedout, seen, entered, ended;
  do
  :: !ended ->
    if
    :: idx != cnt -> take()  /* pop, try_pop, pop_for while holding a slot */
    :: idx != cnt -> drain()  /* consume while holding a slot */
    :: idx == cnt ->  /* pop */
      next_slot(0);
      if
      :: entered -> take()
      :: else -> end_of_stream()
      fi
    :: idx == cnt ->  /* consume */
      next_slot(0);
      if
      :: entered -> drain()
      :: else -> end_of_stream()
      fi
    :: idx == cnt ->  /* pop_for */
      next_slot(1);
      if
      :: entered -> take()
      :: !entered && ok -> end_of_stream()
      :: else -> skip  /* timed out */
      fi
    :: idx == cnt && CAN_IDLE ->  /* try_pop: false when nothing is published right now */
      h = head;
      if
      :: tail != h ->
        enter_slot();
        take()
      :: else -> IDLE_SPENT
      fi
    :: idx == cnt && CAN_IDLE ->  /* done(): closed read first, then head */
      if
      :: closed ->
        h = head;
        if
        :: tail == h -> end_of_stream()
        :: else -> IDLE_SPENT
        fi
      :: else -> IDLE_SPENT
      fi
    fi
  :: else -> break
  od;
  /* After the end every call reports it again and delivers nothing. */
  if
  :: next_slot(0); assert(!entered)  /* pop, consume */
  :: next_slot(1); assert(!entered && ok)  /* pop_for */
  :: h = head; assert(tail == h)  /* try_pop */
  fi;
  assert(closed && tail == head && expect == EVENTS);
  consumer_done = 1
}

init {
  atomic {
    run Producer();
    run Consumer()
  }
}

#ifdef LIVENESS
ltl finishes { <> (producer_done && consumer_done) }
#endif
