// The calling thread's session, for the producers the interpreter calls on whichever thread runs
// Python: the frame evaluation function (CPython 3.11, frames.hpp) and sys.monitoring's
// callbacks (3.12 on, monitoring.hpp). Both are the interpreter's, not a thread's: one profiler
// uses them at a time (and is held while enabled), each thread gets its session on its first
// event, found again through a thread-local, and an epoch tells a thread that its session is
// from an earlier enable(). The session's object (threads.hpp) lives in the thread state's dict,
// so a thread that ends closes its session then, as a hook's would, and the pool drains it.
#pragma once

#include "threads.hpp"

#include <cstdint>

namespace hspcprof::here {

// The OS thread's session in an epoch, for one thread state: a native thread that enters Python
// again and again (PyGILState_Ensure) gets a new thread state, and a session, each time. Found
// good at a generation, it stays good until the next: sys.monitoring's callbacks are not handed
// the thread state, and reading it (a call, and a TLS lookup inside libpython) cost them a fifth
// of their own work, so they ask for it only when the generation moved.
struct ThreadSession {
  std::uint64_t generation = 0;
  std::uint64_t epoch = 0;
  std::uint64_t thread_state = 0;  // PyThreadState::id, unique in the process
  Session* session = nullptr;
};

inline PyObject* g_owner = nullptr;     // the profiler object served: a reference
inline Profiler* g_profiler = nullptr;  // its state; both null when off
inline std::uint64_t g_epoch = 0;       // advances at every enable() and disable()
// Advances with the epoch and whenever a profiled thread state ends: only then can an OS thread
// run another thread state (its last one ended, so a new one was made) or its session be gone.
// (A thread state swapped in by hand, PyThreadState_Swap, without the last one ending, has its
// events go to the last one's session until then, as cProfile's one stack takes every thread's.)
inline std::uint64_t g_generation = 0;
inline thread_local ThreadSession t_here __attribute__((tls_model("initial-exec")));
constexpr const char* kDictKey = "hspcprof.session";  // where a thread state's dict holds it

// A session for the calling thread, its object owned by the thread state's dict; the sessions of
// threads that ended since are folded in first. Null on failure. The exception a frame may be
// entered with (a generator's throw()) is kept, and any of its own dropped.
inline Session* open_here() {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  (void)reap(*g_profiler, false);
  PyObject* dict = PyThreadState_GetDict();
  ThreadObject* t = dict != nullptr ? new_thread_object(g_owner) : nullptr;
  Session* session = nullptr;
  if (t != nullptr) {
    const bool failed = PyDict_SetItemString(dict, kDictKey, reinterpret_cast<PyObject*>(t)) != 0;
    session = failed ? nullptr : t->session;
    Py_DECREF(t);  // on failure: its session closes at once (threads.hpp, detach)
  }
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
  return session;
}

// The calling thread's session in this epoch, for thread state `ts` (null: the current one):
// opened on the thread state's first event (under the GIL); null once disabled or the thread
// state's end has closed it, or if it could not be opened (the thread goes unprofiled). Only a
// session found is good until the next generation: without one, the thread state is checked
// at every event, so that the next thread state of this OS thread gets a session of its own.
[[gnu::noinline]] inline Session* find_here(const PyThreadState* ts, bool open) {
  ThreadSession& here = t_here;
  if (ts == nullptr) ts = PyThreadState_Get();
  if (here.epoch == g_epoch && here.thread_state == ts->id) {
    if (here.session != nullptr) here.generation = g_generation;
    return here.session;
  }
  if (!open || g_profiler == nullptr) return nullptr;
  here = ThreadSession{g_generation, g_epoch, ts->id, nullptr};  // first: Python may run next
  here.session = open_here();
  if (here.session == nullptr) here.generation = 0;  // no generation is 0 once enabled
  return here.session;
}

// As find_here, for the frame producer, which is handed `ts`.
inline Session* session_here(const PyThreadState* ts, bool open) {
  const ThreadSession& here = t_here;
  if (here.epoch == g_epoch && here.thread_state == ts->id) return here.session;
  return find_here(ts, open);
}

// As find_here for the current thread state, which is only read when the generation moved.
inline Session* session_here(bool open) {
  const ThreadSession& here = t_here;
  if (here.generation == g_generation) return here.session;
  return find_here(nullptr, open);
}

// The thread state's end closed `session`: events still seen then (finalizers) must not reach
// it, since the next thread to open a session may free it. Every thread checks its thread state
// again at its next event (the ended one may have been another OS thread's, cleared from here).
inline void forget(const Session* session) {
  if (t_here.session == session) t_here.session = nullptr;
  ++g_generation;
}

// The profiler the producer serves from now on: a new epoch.
inline void start(PyObject* self) {
  g_owner = Py_NewRef(self);
  g_profiler = &impl_of(self);
  ++g_epoch;
  ++g_generation;
}

// In a forked child (fork.hpp): no session is opened or reached any more.
inline void make_inert() {
  g_profiler = nullptr;
  ++g_epoch;
  ++g_generation;
}

// Takes the profiler's objects out of every thread state's dict, once their sessions are closed.
inline void drop_thread_objects(const Profiler& p) {
  PyThreadState* ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
  for (; ts != nullptr; ts = PyThreadState_Next(ts)) {
    PyObject* held = ts->dict != nullptr ? PyDict_GetItemString(ts->dict, kDictKey) : nullptr;
    if (is_hook_of(held, p) && PyDict_DelItemString(ts->dict, kDictKey) != 0) PyErr_Clear();
  }
}

// After the producer is off: every thread's session closes, the calls still open end at `now`.
inline void stop(Profiler& p, std::int64_t now) {
  g_profiler = nullptr;
  ++g_epoch;
  ++g_generation;
  while (!p.threads.empty()) detach(*p.threads.back(), now);
  drop_thread_objects(p);
  Py_CLEAR(g_owner);  // last: the caller holds a reference of its own
}

}  // namespace hspcprof::here
