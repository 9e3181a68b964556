// The fast producer, for Profile(builtins=False): Python functions only, seen through the
// interpreter's frame evaluation function (PEP 523) instead of a profile hook. A profile hook,
// even one that does nothing, sends every instruction through the interpreter's tracing path
// and turns its specialisation off (CPython 3.11); the evaluation function is called once per
// frame run (a call, or a generator's or coroutine's resume) and leaves the instructions alone.
// It sees what cProfile(builtins=False) sees: a frame's run starts as a call and ends as a
// return, whether by return, yield or exception.
//
// The function is the interpreter's, not a thread's: each thread finds its session as here.hpp
// says. Only CPython 3.11's frame layout is known here; elsewhere available() is false (from 3.12
// on, sys.monitoring's callbacks are the producer, monitoring.hpp).
#pragma once

#include "here.hpp"
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

using here::session_here;

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
  remember(*here::g_profiler, code);
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
  return here::g_profiler == nullptr &&
         _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) == _PyEval_EvalFrameDefault;
}

inline void enable(PyObject* self) {
  here::start(self);
  _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(),
                                       function_for(here::g_profiler->mode));
}

inline void disable(Profiler& p, std::int64_t now) {
  _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), _PyEval_EvalFrameDefault);
  here::stop(p, now);
}

#else

inline bool available() { return false; }
inline void enable(PyObject* /*self*/) {}
inline void disable(Profiler& /*p*/, std::int64_t /*now*/) {}

#endif

}  // namespace hspcprof::frames
