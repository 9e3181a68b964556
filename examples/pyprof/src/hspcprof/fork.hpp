// A forked child has only the thread that forked, none of the consumers: a profiler enabled at
// fork stops in the child, whose calls go unprofiled. Right after fork(), before any Python runs
// (pthread_atfork), the profilers are made inert: each thread's object loses its session and the
// frame function its profiler, so nothing is pushed into a channel nobody drains; the sessions
// and their pool stay as they are (its consumers are not in this process: never joined, never
// freed). Once Python runs again (os.register_at_fork), after_in_child() takes the hooks off.
#pragma once

#include "here.hpp"
#include "threads.hpp"

#include <algorithm>
#include <vector>

namespace hspcprof::fork {

// Borrowed: a profiler leaves both lists when disabled or freed (forget()).
inline std::vector<PyObject*> g_enabled;  // the enabled profilers, in the order enabled
inline std::vector<PyObject*> g_forked;   // in a child: those enabled at fork, hooks still on

inline void enabled(PyObject* self) { g_enabled.push_back(self); }

inline void disabled(PyObject* self) {
  g_enabled.erase(std::remove(g_enabled.begin(), g_enabled.end(), self), g_enabled.end());
}

inline void forget(PyObject* self) {
  disabled(self);
  g_forked.erase(std::remove(g_forked.begin(), g_forked.end(), self), g_forked.end());
}

// pthread_atfork's child handler: no Python here, and no thread but this one (which held the
// GIL when it called os.fork(); a fork from C without it is not covered).
inline void make_inert() {
  for (PyObject* self : g_enabled) {
    Profiler& p = impl_of(self);
    for (ThreadObject* t : p.threads) t->session = nullptr;
    p.threads.clear();
    for (auto& s : p.sessions) static_cast<void>(s.release());
    p.sessions.clear();
    static_cast<void>(p.pool.release());  // its threads are not in this process either
    p.enabled = false;
  }
  here::make_inert();
  g_forked.insert(g_forked.end(), g_enabled.begin(), g_enabled.end());  // a fork before the last
  g_enabled.clear();                                                    // child's hooks came off
}

}  // namespace hspcprof::fork
