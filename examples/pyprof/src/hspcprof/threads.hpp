// The profiler's threads: each Python thread it profiles has an object of its own (a
// ThreadObject, owned by the thread state: its profile hook's object, or an entry of its dict for
// the frame producer) and a Session (session.hpp) the profiler owns. A session is opened when
// the hook is installed (or on the thread's first frame) and closed when the thread state ends or
// the profiler is disabled; its profile is summed into the profiler's once the pool has drained
// it. All of it runs under the GIL, which is also what keeps two threads' producers from
// ever running at once; the one exception is a forked child's first moment (fork.hpp).
#pragma once

#include "aggregate.hpp"
#include "clock.hpp"
#include "keyset.hpp"
#include "names.hpp"
#include "session.hpp"
#include "stacks.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

// The profile hook is a producer on CPython 3.11 only: from 3.12 on, sys.monitoring's callbacks
// are (monitoring.hpp), as cProfile's are.
#define HSPCPROF_HOOK (PY_VERSION_HEX < 0x030C0000)

namespace hspcprof {

// What feeds the channels: a profile hook per thread, the frame evaluation function (3.11,
// builtins=False) or sys.monitoring's callbacks (3.12 on).
enum class Producer { kSetprofile, kFrames, kMonitoring };

inline Clock* g_clock = nullptr;
inline PyTypeObject* g_thread_type = nullptr;  // hspcprof._core._Thread, the hook's object

struct ThreadObject;

struct Profiler {
  KeySet objects;                     // key -> owned label: the code object, or a C function's name
  Aggregator merged;                  // the closed sessions' profiles, summed
  std::unique_ptr<SessionPool> pool;  // Mode::kChannel, from the first session to the last reap
  std::vector<std::unique_ptr<Session>> sessions;  // open, or closed and not yet merged
  std::vector<ThreadObject*> threads;              // the threads whose hook is installed
  PyObject* previous_thread_hook = nullptr;        // threading.getprofile() before enable()
  Mode mode = Mode::kChannel;
  std::size_t stack_nodes = StackTree::kDefaultNodes;  // each calling-context tree's bound
  bool builtins = true;
  bool enabled = false;
  Producer producer = Producer::kSetprofile;
  unsigned long long events = 0;
  unsigned long long stalls = 0;
  double consumer_cpu = 0;
  std::size_t consumers = 0;    // the most consumer threads a pool ran at once
  double seconds_per_tick = 0;  // the clock's rate as the profile was last read; 0: not read yet
};

struct ProfilerObject {
  PyObject_HEAD Profiler* impl;
};

// One per profiled thread, owned by its thread state (as its profile hook's object, or in its
// dict for the frame producer): it ends with the thread (PyThreadState_Clear) or when disable()
// takes it off.
struct ThreadObject {
  PyObject_HEAD Profiler* impl;
  Session* session;    // null once closed
  PyObject* profiler;  // a reference: the profiler outlives its hooks
};

inline Profiler& impl_of(PyObject* self) { return *reinterpret_cast<ProfilerObject*>(self)->impl; }

inline void remember(Profiler& p, PyCodeObject* code) {
  if (p.objects.insert(reinterpret_cast<std::uintptr_t>(code), code)) Py_INCREF(code);
}

// A C function is named when first seen, as _lsprof does: holding the callable instead would
// hold its __self__, and outliving its owner would move finalizers out of the profile. False if
// no name can be made: the call then goes unrecorded, as in _lsprof when it lacks memory.
inline bool remember(Profiler& p, const PyMethodDef* def, PyObject* fn) {
  const auto key = reinterpret_cast<std::uintptr_t>(def);
  if (p.objects.find(key) != nullptr) return true;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* name = user_object(fn);
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
  if (name == nullptr) return false;
  p.objects.insert(key, name);
  return true;
}

#if HSPCPROF_HOOK
// The producer, one instance per mode. A call takes a reference to its function the first time
// it is seen; a return needs none, since the consumer ignores a return for a function it has no
// entry for.
template <Mode M>
int profile_hook(PyObject* obj, PyFrameObject* frame, int what, PyObject* arg) {
  const ThreadObject& t = *reinterpret_cast<ThreadObject*>(obj);
  if (t.session == nullptr) return 0;  // closed, its hook about to be taken off
  Profiler& p = *t.impl;
  switch (what) {
    case PyTrace_CALL:
    case PyTrace_RETURN: {
      PyCodeObject* code = PyFrame_GetCode(frame);
      if (what == PyTrace_CALL) remember(p, code);
      const auto kind = what == PyTrace_CALL ? kEnter : kLeave;
      t.session->push<M>(make_event(g_clock->now(), code, kind));
      Py_DECREF(code);
      break;
    }
    case PyTrace_C_CALL:
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
      if (p.builtins && PyCFunction_Check(arg)) {
        const PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(arg)->m_ml;
        if (what == PyTrace_C_CALL && !remember(p, def, arg)) break;
        const auto kind = what == PyTrace_C_CALL ? kEnter : kLeave;
        t.session->push<M>(make_event(g_clock->now(), def, kind));
      }
      break;
    default:
      break;
  }
  return 0;
}

inline int null_hook(PyObject* /*obj*/, PyFrameObject* /*frame*/, int /*what*/, PyObject* /*arg*/) {
  return 0;
}

inline Py_tracefunc hook_for(Mode mode) {
  switch (mode) {
    case Mode::kNull:
      return null_hook;
    case Mode::kEmpty:
      return profile_hook<Mode::kEmpty>;
    case Mode::kInline:
      return profile_hook<Mode::kInline>;
    case Mode::kChannel:
      break;
  }
  return profile_hook<Mode::kChannel>;
}
#endif

// The session ends here: its producer pushes no more, and the calls still open end at `now`.
inline void detach(ThreadObject& t, std::int64_t now) {
  if (t.session == nullptr) return;
  t.session->close(now);
  t.session = nullptr;
  auto& threads = t.impl->threads;
  threads.erase(std::find(threads.begin(), threads.end(), &t));
}

// Folds the closed sessions into the profile: every one (waiting for the pool, whose consumers
// never take the GIL, so holding it is safe and keeps other threads out of the session list), or
// only those the pool has drained already. Once every session is closed and folded, the pool
// stops (its threads end) until the next session. False with an exception set if the pool's
// handler failed (the profile could not grow): the profile is then incomplete.
inline bool reap(Profiler& p, bool wait) {
  auto& sessions = p.sessions;
  const bool last = wait && std::all_of(sessions.begin(), sessions.end(),
                                        [](const auto& s) { return s->closed(); });
  bool ok = true;
  if (last && p.pool) {
    try {
      p.pool->wait();
    } catch (const std::exception& e) {
      PyErr_Format(PyExc_RuntimeError, "hspcprof: a consumer failed: %s", e.what());
      ok = false;
    }
  }
  auto done = [&p, wait](std::unique_ptr<Session>& s) {
    if (!s->closed() || !(wait || s->drained())) return false;
    s->finish();
    p.merged.absorb(s->aggregate());
    p.events += s->events();
    p.stalls += s->stalls();
    return true;
  };
  sessions.erase(std::remove_if(sessions.begin(), sessions.end(), done), sessions.end());
  if (last && p.pool) {
    p.consumers = std::max(p.consumers, p.pool->peak_consumers());
    p.consumer_cpu += p.pool->consumer_cpu();
    p.pool.reset();
  }
  return ok;
}

// A new session, owned by the profiler; null with an exception set if the pool won't take it.
inline Session* open_session(Profiler& p) {
  try {
    p.threads.reserve(p.threads.size() + 1);
    p.sessions.reserve(p.sessions.size() + 1);
    if (p.mode == Mode::kChannel && !p.pool) p.pool = std::make_unique<SessionPool>();
    p.sessions.push_back(std::make_unique<Session>(p.mode, p.pool.get(), p.stack_nodes));
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "hspcprof: cannot start a consumer: %s", e.what());
    return nullptr;
  }
  Session& made = *p.sessions.back();
  for (auto& s : p.sessions) s->opened(made);
  return &made;
}

// A new reference to a thread's object with a session of its own, listed in p.threads; null
// with an exception set if the pool would not take the session.
inline ThreadObject* new_thread_object(PyObject* self) {
  Profiler& p = impl_of(self);
  auto* t = PyObject_New(ThreadObject, g_thread_type);
  if (t == nullptr) return nullptr;
  t->impl = &p;
  t->session = nullptr;
  t->profiler = Py_NewRef(self);
  t->session = open_session(p);
  if (t->session == nullptr) {
    Py_DECREF(t);
    return nullptr;
  }
  p.threads.push_back(t);
  return t;
}

#if HSPCPROF_HOOK
// Installs the hook on `ts` with a session of its own; the thread state owns the hook's object.
inline ThreadObject* attach(PyObject* self, PyThreadState* ts) {
  Profiler& p = impl_of(self);
  ThreadObject* t = new_thread_object(self);
  if (t == nullptr) return nullptr;
  const int failed = _PyEval_SetProfile(ts, hook_for(p.mode), reinterpret_cast<PyObject*>(t));
  Py_DECREF(t);
  return failed != 0 ? nullptr : t;
}
#endif

inline bool is_hook_of(PyObject* obj, const Profiler& p) {
  return obj != nullptr && Py_IS_TYPE(obj, g_thread_type) &&
         reinterpret_cast<ThreadObject*>(obj)->impl == &p;
}

#if HSPCPROF_HOOK
// Takes this profiler's hook off every thread that has it; false with an exception if an audit
// hook refused one (the others come off all the same).
inline bool uninstall_hooks(const Profiler& p) {
  bool ok = true;
  PyThreadState* ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
  for (; ts != nullptr; ts = PyThreadState_Next(ts)) {
    if (is_hook_of(ts->c_profileobj, p) && _PyEval_SetProfile(ts, nullptr, nullptr) != 0) {
      ok = false;
    }
  }
  return ok;
}
#endif

}  // namespace hspcprof
