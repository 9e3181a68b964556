// hspcprof._core: cProfile's deterministic profile with its work split in two. The interpreter
// thread (the producer) only stamps each call and return and pushes it into a channel tuned for
// this host by hspc-gen; a C++ thread (the consumer) computes the per-function totals and the
// caller -> callee edges (aggregate.hpp). Names are resolved under the GIL when stats are taken.
//
// One profiler profiles the thread that enabled it, as cProfile does: the channel has exactly
// one producer, so enable() and disable() from any other thread are refused.

#include "aggregate.hpp"
#include "clock.hpp"
#include "keyset.hpp"
#include "names.hpp"
#include "pyprof_channel.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace {

using hspcprof::Aggregator;
using hspcprof::Entry;
using hspcprof::Event;
using hspcprof::Ref;
using hspcprof::Totals;

hspcprof::Clock* g_clock = nullptr;

struct Session {
  pyprof::Channel<Event> channel;
  std::thread consumer;
};

struct Profiler {
  hspcprof::KeySet objects;  // key -> owned label: the code object, or a C function's name
  Aggregator aggregate;      // the consumer's while a session runs, then the GIL holder's
  std::unique_ptr<Session> session;
  PyThreadState* owner = nullptr;  // the one thread whose events the channel carries
  unsigned long long stalls = 0;
  bool builtins = true;
};

struct ProfilerObject {
  PyObject_HEAD Profiler* impl;
};

Profiler& impl_of(PyObject* self) { return *reinterpret_cast<ProfilerObject*>(self)->impl; }

void remember(Profiler& p, PyCodeObject* code) {
  if (p.objects.insert(reinterpret_cast<std::uintptr_t>(code), code)) Py_INCREF(code);
}

// A C function is named when first seen, as _lsprof does: holding the callable instead would
// hold its __self__, and outliving its owner would move finalizers out of the profile. False if
// no name can be made: the call then goes unrecorded, as in _lsprof when it lacks memory.
bool remember(Profiler& p, const PyMethodDef* def, PyObject* fn) {
  const auto key = reinterpret_cast<std::uintptr_t>(def);
  if (p.objects.find(key) != nullptr) return true;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* name = hspcprof::user_object(fn);
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
  if (name == nullptr) return false;
  p.objects.insert(key, name);
  return true;
}

void emit(Profiler& p, const void* key, hspcprof::Kind kind) {
  p.session->channel.push(hspcprof::make_event(g_clock->now(), key, kind));
}

// The producer. A call takes a reference to its function the first time it is seen; a return
// needs none, since the consumer ignores a return for a function it has no entry for.
int profile_hook(PyObject* self, PyFrameObject* frame, int what, PyObject* arg) {
  Profiler& p = impl_of(self);
  switch (what) {
    case PyTrace_CALL:
    case PyTrace_RETURN: {
      PyCodeObject* code = PyFrame_GetCode(frame);
      if (what == PyTrace_CALL) remember(p, code);
      emit(p, code, what == PyTrace_CALL ? hspcprof::kEnter : hspcprof::kLeave);
      Py_DECREF(code);
      break;
    }
    case PyTrace_C_CALL:
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
      if (p.builtins && PyCFunction_Check(arg)) {
        const PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(arg)->m_ml;
        if (what == PyTrace_C_CALL && !remember(p, def, arg)) break;
        emit(p, def, what == PyTrace_C_CALL ? hspcprof::kEnter : hspcprof::kLeave);
      }
      break;
    default:
      break;
  }
  return 0;
}

void consume(Session* s, Aggregator* aggregate) {
  pyprof::pin_current_thread(pyprof::kTuning.consumer_cpu);
  while (s->channel.consume([aggregate](const Event* events, std::size_t n) {
    aggregate->apply(events, n);
  }) != 0) {
  }
}

// The channel closes, the consumer drains it, and the calls still open end at `now`.
void finish_session(Profiler& p, std::int64_t now) {
  p.session->channel.close();
  // The consumer never takes the GIL, but other Python threads may run meanwhile.
  PyThreadState* saved = PyEval_SaveThread();
  p.session->consumer.join();
  PyEval_RestoreThread(saved);
  p.stalls += p.session->channel.producer_waits();
  p.aggregate.close_open_calls(now);
  p.session.reset();
  p.owner = nullptr;
}

void release_objects(Profiler& p) {
  p.objects.for_each_value([](void* obj) { Py_DECREF(static_cast<PyObject*>(obj)); });
  p.objects.clear();
}

bool refuse_other_thread(const Profiler& p) {
  if (p.owner == nullptr || p.owner == PyThreadState_Get()) return false;
  PyErr_SetString(PyExc_RuntimeError, "hspcprof: the profiler is enabled on another thread");
  return true;
}

PyObject* profiler_enable(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (refuse_other_thread(p)) return nullptr;
  if (!p.session) {
    try {
      p.session = std::make_unique<Session>();
      p.session->consumer = std::thread(consume, p.session.get(), &p.aggregate);
    } catch (const std::exception& e) {
      p.session.reset();
      PyErr_Format(PyExc_RuntimeError, "hspcprof: cannot start the consumer: %s", e.what());
      return nullptr;
    }
    p.owner = PyThreadState_Get();
  }
  PyEval_SetProfile(profile_hook, self);
  Py_RETURN_NONE;
}

PyObject* profiler_disable(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (!p.session) Py_RETURN_NONE;
  if (refuse_other_thread(p)) return nullptr;
  const std::int64_t now = g_clock->now();
  PyEval_SetProfile(nullptr, nullptr);
  finish_session(p, now);
  Py_RETURN_NONE;
}

PyObject* profiler_clear(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (p.session) {
    PyErr_SetString(PyExc_RuntimeError, "hspcprof: disable the profiler before clear()");
    return nullptr;
  }
  p.aggregate.clear();
  release_objects(p);
  Py_RETURN_NONE;
}

// (label, callcount, reccallcount, totaltime, inlinetime): the fields of _lsprof's entries.
// The label is the one object stored for the key: cProfile's snapshot code matches an edge to
// its callee by the label's identity (id(code)), so entry and edges must share it.
PyObject* totals_tuple(const Profiler& p, std::uintptr_t key, const Totals& t, double scale) {
  PyObject* label = static_cast<PyObject*>(p.objects.find(key));
  return Py_BuildValue("(Olldd)", label, t.calls, t.recursive_calls,
                       static_cast<double>(t.total) * scale,
                       static_cast<double>(t.inline_) * scale);
}

template <class Map>
std::vector<std::uintptr_t> sorted_keys(const Map& map) {
  std::vector<std::uintptr_t> keys;
  keys.reserve(map.size());
  for (const auto& kv : map) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

PyObject* entry_tuple(const Profiler& p, const Entry& e, double scale) {
  const Ref callees(PyList_New(0));
  if (!callees) return nullptr;
  for (const std::uintptr_t key : sorted_keys(e.callees)) {
    const Ref edge(totals_tuple(p, key, e.callees.at(key), scale));
    if (!edge || PyList_Append(callees.get(), edge.get()) != 0) return nullptr;
  }
  const Ref head(totals_tuple(p, e.key, e, scale));
  if (!head) return nullptr;
  return Py_BuildValue("(OO)", head.get(), callees.get());
}

// Entries in ascending key order, as _lsprof's rotating tree enumerates them: when two
// functions share a pstats label, the same one wins in both profilers.
PyObject* profiler_getstats(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (p.session) {
    PyErr_SetString(PyExc_RuntimeError, "hspcprof: disable the profiler before taking stats");
    return nullptr;
  }
  const double scale = 1.0 / g_clock->ticks_per_second();
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (const std::uintptr_t key : sorted_keys(p.aggregate.entries())) {
    const Ref entry(entry_tuple(p, p.aggregate.entries().at(key), scale));
    if (!entry || PyList_Append(list.get(), entry.get()) != 0) return nullptr;
  }
  return list.release();
}

PyObject* profiler_stalls(PyObject* self, void* /*closure*/) {
  return PyLong_FromUnsignedLongLong(impl_of(self).stalls);
}

PyObject* profiler_new(PyTypeObject* type, PyObject* /*args*/, PyObject* /*kwds*/) {
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  try {
    reinterpret_cast<ProfilerObject*>(self)->impl = new Profiler();
  } catch (const std::bad_alloc&) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return self;
}

int profiler_init(PyObject* self, PyObject* args, PyObject* kwds) {
  static const char* keywords[] = {"builtins", nullptr};
  int builtins = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$p", const_cast<char**>(keywords), &builtins)) {
    return -1;
  }
  impl_of(self).builtins = builtins != 0;
  return 0;
}

// The hook holds a reference to the profiler while it is installed, so no session is left here
// unless enable() failed half-way; the consumer is stopped all the same.
void profiler_dealloc(PyObject* self) {
  Profiler* p = reinterpret_cast<ProfilerObject*>(self)->impl;
  if (p != nullptr) {
    if (p->session) finish_session(*p, g_clock->now());
    release_objects(*p);
    delete p;
  }
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMethodDef profiler_methods[] = {
    {"enable", profiler_enable, METH_NOARGS, "Start profiling the calling thread."},
    {"disable", profiler_disable, METH_NOARGS,
     "Stop profiling; returns once every event is counted."},
    {"clear", profiler_clear, METH_NOARGS, "Forget every count and release the functions."},
    {"_getstats", profiler_getstats, METH_NOARGS,
     "[((label, calls, reccalls, totaltime, inlinetime), [callee tuples])] by key."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef profiler_getset[] = {
    {"stalls", profiler_stalls, nullptr,
     "How often the interpreter waited for the consumer (a full channel).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot profiler_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(profiler_new)},
    {Py_tp_init, reinterpret_cast<void*>(profiler_init)},
    {Py_tp_dealloc, reinterpret_cast<void*>(profiler_dealloc)},
    {Py_tp_methods, profiler_methods},
    {Py_tp_getset, profiler_getset},
    {Py_tp_doc, const_cast<char*>("Profiler(*, builtins=True): a cProfile-compatible core.")},
    {0, nullptr},
};

PyType_Spec profiler_spec = {
    "hspcprof._core.Profiler",
    sizeof(ProfilerObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    profiler_slots,
};

PyObject* clock_info(PyObject* /*module*/, PyObject* /*unused*/) {
  return Py_BuildValue("(Od)", g_clock->uses_tsc() ? Py_True : Py_False,
                       g_clock->ticks_per_second());
}

// What the channel was tuned to: hspc-gen's choice for this host, for reports and tests.
PyObject* channel_info(PyObject* /*module*/, PyObject* /*unused*/) {
  const auto& t = pyprof::kTuning;
  return Py_BuildValue("{sssnsnsisi}", "primitive", pyprof::primitive_name(t.primitive), "buffers",
                       static_cast<Py_ssize_t>(t.buffers), "buffer_bytes",
                       static_cast<Py_ssize_t>(t.buffer_bytes), "producer_cpu", t.producer_cpu,
                       "consumer_cpu", t.consumer_cpu);
}

PyMethodDef module_methods[] = {
    {"clock_info", clock_info, METH_NOARGS, "(uses the TSC, ticks per second)"},
    {"channel_info", channel_info, METH_NOARGS, "The channel's tuned parameters."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "hspcprof._core",
    "cProfile's profile, aggregated off the interpreter thread.",
    -1,
    module_methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__core() {
  // Made once per process: its construction is the start of the TSC's calibration span.
  static hspcprof::Clock clock;
  g_clock = &clock;
  Ref module(PyModule_Create(&module_def));
  if (!module) return nullptr;
  PyObject* type = PyType_FromSpec(&profiler_spec);
  if (type == nullptr || PyModule_AddObject(module.get(), "Profiler", type) != 0) {
    Py_XDECREF(type);
    return nullptr;
  }
  return module.release();
}
