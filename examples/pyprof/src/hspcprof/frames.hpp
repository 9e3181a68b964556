// The fast producer, for Profile(builtins=False): Python functions only, seen through the
// interpreter's frame evaluation function (PEP 523) instead of a profile hook. A profile hook,
// even one that does nothing, sends every instruction through the interpreter's tracing path
// and turns its specialisation off (CPython 3.11); the evaluation function is called once per
// frame run (a call, or a generator's or coroutine's resume) and leaves the instructions alone.
// It sees what cProfile(builtins=False) sees: a frame's run starts as a call and ends as a
// return, whether by return, yield or exception.
//
// The function is the interpreter's, not a thread's: one profiler uses it at a time (and holds
// a reference to it while enabled), each thread gets its session on its first frame, and an
// epoch tells a thread that its session is from an earlier enable(). The session's object
// (threads.hpp) lives in the thread state's dict, so a thread that ends closes its session then,
// as a hook's would, and its consumer drains and ends. Only CPython 3.11's frame layout is known
// here; elsewhere available() is false and the profile hook does the work.
#pragma once

#include "threads.hpp"

#include <cstdint>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define HSPCPROF_FRAMES 1
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#else
#define HSPCPROF_FRAMES 0
#endif

namespace hspcprof::frames {

#if HSPCPROF_FRAMES

// The OS thread's session in an epoch, for one thread state: a native thread that enters Python
// again and again (PyGILState_Ensure) gets a new thread state, and a session, each time.
struct ThreadSession {
  std::uint64_t epoch = 0;
  std::uint64_t thread_state = 0;  // PyThreadState::id, unique in the process
  Session* session = nullptr;
};

inline PyObject* g_owner = nullptr;     // the profiler object the function serves: a reference
inline Profiler* g_profiler = nullptr;  // its state; both null when off
inline std::uint64_t g_epoch = 0;       // advances at every enable() and disable()
inline thread_local ThreadSession t_here __attribute__((tls_model("initial-exec")));
constexpr const char* kDictKey = "hspcprof.frames";  // where a thread state's dict holds it

// A session for the calling thread, its object owned by the thread state's dict; the sessions of
// threads that ended since are folded in first. Null on failure. The exception a frame may be
// entered with (a generator's throw()) is kept, and any of its own dropped.
inline Session* open_here() {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  reap(*g_profiler, false);
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

// The calling thread's session in this epoch: opened on the thread state's first frame (under
// the GIL); null once disabled or the thread state's end has closed it, or if it could not be
// opened (the thread goes unprofiled).
inline Session* session_here(const PyThreadState* ts, bool open) {
  ThreadSession& here = t_here;
  if (here.epoch == g_epoch && here.thread_state == ts->id) return here.session;
  if (!open || g_profiler == nullptr) return nullptr;
  here = ThreadSession{g_epoch, ts->id, nullptr};  // set first: Python may run in open_here()
  here.session = open_here();
  return here.session;
}

// The thread state's end closed `session`: frames still run then (finalizers) must not reach it,
// since the next thread to open a session may free it.
inline void forget(const Session* session) {
  if (t_here.session == session) t_here.session = nullptr;
}

// A call to a generator or coroutine function only makes the object (it runs to
// RETURN_GENERATOR, before RESUME): cProfile sees no call there, only at each resume.
inline bool makes_a_generator(const _PyInterpreterFrame* frame) {
  constexpr int kGenerators = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
  return (frame->f_code->co_flags & kGenerators) != 0 && frame->owner != FRAME_OWNED_BY_GENERATOR;
}

template <Mode M>
PyObject* evaluate(PyThreadState* ts, _PyInterpreterFrame* frame, int throwflag) {
  Session* session = M == Mode::kNull ? nullptr : session_here(ts, true);
  if (session == nullptr || makes_a_generator(frame)) {
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
  }
  PyCodeObject* code = frame->f_code;  // the frame is gone after the run; the code stays
  remember(*g_profiler, code);
  session->push<M>(make_event(g_clock->now(), code, kEnter));
  PyObject* result = _PyEval_EvalFrameDefault(ts, frame, throwflag);
  session = session_here(ts, false);  // disable() may have come in between
  if (session != nullptr) session->push<M>(make_event(g_clock->now(), code, kLeave));
  return result;
}

inline _PyFrameEvalFunction function_for(Mode mode) {
  switch (mode) {
    case Mode::kNull:
      return evaluate<Mode::kNull>;
    case Mode::kEmpty:
      return evaluate<Mode::kEmpty>;
    case Mode::kInline:
      return evaluate<Mode::kInline>;
    case Mode::kChannel:
      break;
  }
  return evaluate<Mode::kChannel>;
}

// True when a profiler may take the function: no other profiler has it and no debugger or JIT set
// one.
inline bool available() {
  return g_profiler == nullptr &&
         _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) == _PyEval_EvalFrameDefault;
}

inline void enable(PyObject* self) {
  g_owner = Py_NewRef(self);
  g_profiler = &impl_of(self);
  ++g_epoch;
  _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), function_for(g_profiler->mode));
}

// In a forked child (fork.hpp): no session is opened or reached any more.
inline void make_inert() {
  g_profiler = nullptr;
  ++g_epoch;
}

// Takes the profiler's objects out of every thread state's dict, once their sessions are closed.
inline void drop_thread_objects(const Profiler& p) {
  PyThreadState* ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
  for (; ts != nullptr; ts = PyThreadState_Next(ts)) {
    PyObject* held = ts->dict != nullptr ? PyDict_GetItemString(ts->dict, kDictKey) : nullptr;
    if (is_hook_of(held, p) && PyDict_DelItemString(ts->dict, kDictKey) != 0) PyErr_Clear();
  }
}

inline void disable(Profiler& p, std::int64_t now) {
  _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), _PyEval_EvalFrameDefault);
  g_profiler = nullptr;
  ++g_epoch;
  while (!p.threads.empty()) detach(*p.threads.back(), now);
  drop_thread_objects(p);
  Py_CLEAR(g_owner);  // last: the caller holds a reference of its own
}

#else

inline bool available() { return false; }
inline void enable(PyObject* /*self*/) {}
inline void disable(Profiler& /*p*/, std::int64_t /*now*/) {}
inline void forget(const Session* /*session*/) {}
inline void make_inert() {}

#endif

}  // namespace hspcprof::frames
