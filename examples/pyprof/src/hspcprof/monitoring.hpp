// The producer on CPython 3.12 and later: sys.monitoring's callbacks (PEP 669), as cProfile's are
// there (Modules/_lsprof.c). The callbacks are the extension's own C functions, registered for
// the events cProfile registers and read as cProfile reads them: a function's start, resume or
// throw-in is a call and its return, yield or unwind a return (PY_START/RESUME/THROW,
// PY_RETURN/YIELD/UNWIND); a CALL of a C function (or of a method descriptor on an object of its
// type, named as the bound method cProfile makes of it) is a call, and its C_RETURN or C_RAISE a
// return. With builtins=False the three C events are not registered at all. Each callback finds
// its thread's session (here.hpp) and pushes one event; nothing else runs on the interpreter's
// thread but keeping a function's object alive the first time it is seen (threads.hpp).
//
// The tool id is sys.monitoring's PROFILER_ID (2), the one _lsprof takes: PEP 669 sets it aside
// for profilers, so two profilers never stack their callbacks (each would time the other's as
// the program's work), while a debugger or a coverage tool (ids 0 and 1) runs beside. One
// profiler holds it at a time: enable() names the tool that holds it, disable() frees it.
#pragma once

#include "callback.hpp"
#include "here.hpp"
#include "threads.hpp"

#include <cstddef>
#include <cstdint>

#define HSPCPROF_MONITORING (PY_VERSION_HEX >= 0x030C0000)

namespace hspcprof::monitoring {

#if HSPCPROF_MONITORING

constexpr int kToolId = 2;  // PY_MONITORING_PROFILER_ID, in no public header of 3.12
constexpr const char* kToolName = "hspcprof";

inline PyObject* g_missing = nullptr;  // sys.monitoring.MISSING: a call with no argument

// The callbacks are callable from Python too (sys.monitoring.register_callback returns them):
// a call with fewer arguments than the event's is refused, not read past.
template <Py_ssize_t K>
[[gnu::always_inline]] inline bool too_few(std::size_t n) {
  if (PyVectorcall_NARGS(n) >= K) [[likely]]
    return false;
  PyErr_Format(PyExc_TypeError, "hspcprof: a sys.monitoring callback takes %zd arguments", K);
  return true;
}

// PY_START, PY_RESUME, PY_THROW (code, offset): a call.
template <Mode M>
PyObject* started(PyObject* /*self*/, PyObject* const* args, std::size_t n, PyObject* /*kw*/) {
  if constexpr (M != Mode::kNull) {
    if (too_few<2>(n)) return nullptr;
    Session* session = here::session_here(true);
    if (session != nullptr) {
      auto* code = reinterpret_cast<PyCodeObject*>(args[0]);
      remember(*here::g_profiler, code);
      session->push<M>(make_event(g_clock->now(), code, kEnter));
    }
  }
  Py_RETURN_NONE;
}

// PY_RETURN, PY_YIELD, PY_UNWIND (code, offset[, value]): a return. One with no session yet
// opens none: its profile would ignore it.
template <Mode M>
PyObject* ended(PyObject* /*self*/, PyObject* const* args, std::size_t n, PyObject* /*kw*/) {
  if constexpr (M != Mode::kNull) {
    if (too_few<2>(n)) return nullptr;
    Session* session = here::session_here(false);
    if (session != nullptr) session->push<M>(make_event(g_clock->now(), args[0], kLeave));
  }
  Py_RETURN_NONE;
}

// The PyMethodDef cProfile keys a C call by (get_cfunc_from_callable): a builtin function's or
// method's, or that of a method descriptor called on an object of its type, which cProfile binds
// to the object (the bound method's definition is the descriptor's); null for anything else. Most
// CALLs call Python functions or methods, or classes: their types are ruled out first, before
// the subtype check PyCFunction_Check makes of anything else.
[[gnu::always_inline]] inline const PyMethodDef* c_function(PyObject* callable, PyObject* arg0) {
  const PyTypeObject* type = Py_TYPE(callable);
  if (type == &PyFunction_Type || type == &PyMethod_Type || type == &PyType_Type) return nullptr;
  if (PyCFunction_Check(callable)) return reinterpret_cast<PyCFunctionObject*>(callable)->m_ml;
  if (!Py_IS_TYPE(callable, &PyMethodDescr_Type) || arg0 == g_missing) return nullptr;
  auto* descr = reinterpret_cast<PyMethodDescrObject*>(callable);
  return PyObject_TypeCheck(arg0, descr->d_common.d_type) ? descr->d_method : nullptr;
}

// Named the first time it is seen, as a callable cProfile would name: a descriptor is bound then
// (and only then) to make one. False if no name can be made: the call goes unrecorded.
inline bool known(Profiler& p, const PyMethodDef* def, PyObject* callable, PyObject* arg0) {
  if (PyCFunction_Check(callable)) return remember(p, def, callable);
  if (p.objects.find(reinterpret_cast<std::uintptr_t>(def)) != nullptr) return true;
  const Ref bound(
      Py_TYPE(callable)->tp_descr_get(callable, arg0, reinterpret_cast<PyObject*>(Py_TYPE(arg0))));
  if (!bound) PyErr_Clear();
  return bound && remember(p, def, bound.get());
}

// CALL (code, offset, callable, arg0): a call if the callable is a C function.
template <Mode M>
PyObject* c_called(PyObject* /*self*/, PyObject* const* args, std::size_t n, PyObject* /*kw*/) {
  if constexpr (M != Mode::kNull) {
    if (too_few<4>(n)) return nullptr;
    const PyMethodDef* def = c_function(args[2], args[3]);
    Session* session = def != nullptr ? here::session_here(true) : nullptr;
    if (session != nullptr && known(*here::g_profiler, def, args[2], args[3])) {
      session->push<M>(make_event(g_clock->now(), def, kEnter));
    }
  }
  Py_RETURN_NONE;
}

// C_RETURN, C_RAISE (code, offset, callable, arg0): its return.
template <Mode M>
PyObject* c_ended(PyObject* /*self*/, PyObject* const* args, std::size_t n, PyObject* /*kw*/) {
  if constexpr (M != Mode::kNull) {
    if (too_few<4>(n)) return nullptr;
    const PyMethodDef* def = c_function(args[2], args[3]);
    Session* session = def != nullptr ? here::session_here(false) : nullptr;
    if (session != nullptr) session->push<M>(make_event(g_clock->now(), def, kLeave));
  }
  Py_RETURN_NONE;
}

enum Callback { kStarted, kEnded, kCCalled, kCEnded };

// The callbacks of one mode, by Callback; the null mode's do nothing (the floor of this API).
template <Mode M>
const vectorcallfunc* callbacks() {
  static constexpr vectorcallfunc calls[] = {started<M>, ended<M>, c_called<M>, c_ended<M>};
  return calls;
}

inline vectorcallfunc callback_for(Mode mode, Callback callback) {
  switch (mode) {
    case Mode::kNull:
      return callbacks<Mode::kNull>()[callback];
    case Mode::kEmpty:
      return callbacks<Mode::kEmpty>()[callback];
    case Mode::kInline:
      return callbacks<Mode::kInline>()[callback];
    case Mode::kChannel:
      break;
  }
  return callbacks<Mode::kChannel>()[callback];
}

struct Registration {
  const char* event;  // sys.monitoring.events' name
  Callback callback;
  bool builtin;  // only with builtins=True
};

// _lsprof's callback_table.
constexpr Registration kRegistrations[] = {
    {"PY_START", kStarted, false}, {"PY_RESUME", kStarted, false}, {"PY_THROW", kStarted, false},
    {"PY_RETURN", kEnded, false},  {"PY_YIELD", kEnded, false},    {"PY_UNWIND", kEnded, false},
    {"CALL", kCCalled, true},      {"C_RETURN", kCEnded, true},    {"C_RAISE", kCEnded, true},
};

inline PyObject* sys_monitoring() {
  const Ref sys(PyImport_ImportModule("sys"));
  return sys ? PyObject_GetAttrString(sys.get(), "monitoring") : nullptr;
}

// Registers the mode's callback (on) or None (off) for each event this profiler takes; their
// mask, or -1 with an exception set.
inline long register_all(PyObject* monitoring, const Profiler& p, bool on) {
  const Ref events(PyObject_GetAttrString(monitoring, "events"));
  if (!events) return -1;
  long mask = 0;
  for (const Registration& r : kRegistrations) {
    if (r.builtin && !p.builtins) continue;
    const Ref event(PyObject_GetAttrString(events.get(), r.event));
    const long bit = event ? PyLong_AsLong(event.get()) : -1;
    const Ref callback(on ? new_callback(callback_for(p.mode, r.callback)) : Py_NewRef(Py_None));
    if (bit < 0 || !callback) return -1;
    if (!Ref(PyObject_CallMethod(monitoring, "register_callback", "ilO", kToolId, bit,
                                 callback.get()))) {
      return -1;
    }
    mask |= bit;
  }
  return mask;
}

// The callbacks off and the tool id free; false with an exception set if sys.monitoring refused.
inline bool release(PyObject* monitoring, const Profiler& p) {
  const bool unregistered = register_all(monitoring, p, false) >= 0;
  return Ref(PyObject_CallMethod(monitoring, "set_events", "ii", kToolId, 0)) &&
         Ref(PyObject_CallMethod(monitoring, "free_tool_id", "i", kToolId)) && unregistered;
}

// Takes the tool id, as cProfile does, and turns the events on; false with an exception set: a
// ValueError (cProfile's) naming the tool that holds the id.
inline bool enable(PyObject* self) {
  Profiler& p = impl_of(self);
  const Ref monitoring(sys_monitoring());
  const Ref holder(monitoring ? PyObject_CallMethod(monitoring.get(), "get_tool", "i", kToolId)
                              : nullptr);
  if (!holder) return false;
  if (holder.get() != Py_None) {
    PyErr_Format(PyExc_ValueError,
                 "hspcprof: sys.monitoring's profiler tool id (%d) is held by %R: another "
                 "profiler is enabled (disable it first)",
                 kToolId, holder.get());
    return false;
  }
  Py_XSETREF(g_missing, PyObject_GetAttrString(monitoring.get(), "MISSING"));
  if (g_missing == nullptr ||
      !Ref(PyObject_CallMethod(monitoring.get(), "use_tool_id", "is", kToolId, kToolName))) {
    return false;
  }
  here::start(self);
  const long mask = register_all(monitoring.get(), p, true);
  if (mask >= 0 && Ref(PyObject_CallMethod(monitoring.get(), "set_events", "il", kToolId, mask))) {
    return true;
  }
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (!release(monitoring.get(), p)) PyErr_Clear();
  here::stop(p, g_clock->now());
  PyErr_Restore(type, value, traceback);
  return false;
}

// The events off, the id free, then every thread's session closes (calls open end at `now`);
// false with an exception set if sys.monitoring refused (the sessions close all the same).
inline bool disable(Profiler& p, std::int64_t now) {
  const Ref monitoring(sys_monitoring());
  const bool released = monitoring && release(monitoring.get(), p);
  here::stop(p, now);
  return released;
}

#else

inline bool enable(PyObject* /*self*/) { return false; }
inline bool disable(Profiler& /*p*/, std::int64_t /*now*/) { return true; }

#endif

}  // namespace hspcprof::monitoring
