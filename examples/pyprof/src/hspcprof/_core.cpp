// hspcprof._core: cProfile's deterministic profile with its work split in two. Each profiled
// thread's hook (the producer) only stamps each call and return and pushes it into a channel of
// its own, tuned for this host by hspc-gen; one pool of C++ threads (the consumers, at most one
// per CPU, session.hpp's SessionPool) drains every thread's channel, computing each thread's
// per-function totals and caller -> callee edges (aggregate.hpp). Names are
// resolved under the GIL when stats are taken, and the threads' profiles are summed then.
//
// The producer: on CPython 3.11, enable() installs the hook on every thread of the interpreter
// and, through threading.setprofile, on each thread started later (or, for builtins=False, takes
// the frame evaluation function, frames.hpp); from 3.12 on, sys.monitoring's callbacks
// (monitoring.hpp). Either way every Python thread gets its own session, so each channel has
// exactly one producer. disable() closes them all.

#include "fork.hpp"
#include "frames.hpp"
#include "here.hpp"
#include "monitoring.hpp"
#include "stats.hpp"
#include "threads.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace {

using hspcprof::detach;
using hspcprof::g_clock;
using hspcprof::g_thread_type;
using hspcprof::impl_of;
using hspcprof::Mode;
using hspcprof::Producer;
using hspcprof::Profiler;
using hspcprof::ProfilerObject;
using hspcprof::reap;
using hspcprof::Ref;
using hspcprof::ThreadObject;

#if HSPCPROF_HOOK
using hspcprof::attach;
using hspcprof::hook_for;
using hspcprof::uninstall_hooks;

// threading.setprofile(self._thread_started), keeping what was there; or back to it.
bool follow_new_threads(PyObject* self, Profiler& p) {
  const Ref threading(PyImport_ImportModule("threading"));
  if (!threading) return false;
  Ref previous(PyObject_CallMethod(threading.get(), "getprofile", nullptr));
  const Ref started(PyObject_GetAttrString(self, "_thread_started"));
  if (!previous || !started) return false;
  if (!Ref(PyObject_CallMethod(threading.get(), "setprofile", "O", started.get()))) return false;
  p.previous_thread_hook = previous.release();
  return true;
}

bool stop_following_new_threads(Profiler& p) {
  const Ref previous(p.previous_thread_hook);
  p.previous_thread_hook = nullptr;
  const Ref threading(PyImport_ImportModule("threading"));
  return threading && Ref(PyObject_CallMethod(threading.get(), "setprofile", "O", previous.get()));
}

// The hook on every thread running now, and on each started later.
bool enable_hooks(PyObject* self, Profiler& p) {
  if (!follow_new_threads(self, p)) return false;
  p.enabled = true;
  hspcprof::fork::enabled(self);
  PyThreadState* ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
  for (; ts != nullptr; ts = PyThreadState_Next(ts)) {
    if (attach(self, ts) == nullptr) return false;
  }
  return true;
}

bool disable_hooks(Profiler& p, std::int64_t now) {
  while (!p.threads.empty()) detach(*p.threads.back(), now);
  const bool uninstalled = uninstall_hooks(p);
  return stop_following_new_threads(p) && uninstalled;
}
#endif

// Every thread's session closes, the consumers drain and the profiles are summed.
PyObject* profiler_disable(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (!p.enabled) Py_RETURN_NONE;
  const std::int64_t now = g_clock->now();
  p.enabled = false;
  hspcprof::fork::disabled(self);
  bool ok = true;
  switch (p.producer) {
    case Producer::kFrames:
      hspcprof::frames::disable(p, now);
      break;
    case Producer::kMonitoring:
      ok = hspcprof::monitoring::disable(p, now);
      break;
    case Producer::kSetprofile:
#if HSPCPROF_HOOK
      ok = disable_hooks(p, now);
#endif
      break;
  }
  if (!reap(p, true)) ok = false;
  if (!ok) return nullptr;
  Py_RETURN_NONE;
}

// The producer this version has: sys.monitoring from 3.12, else the frame function when free
// and no C function is asked for, else the hook.
bool enable_producer(PyObject* self, Profiler& p) {
  if (HSPCPROF_MONITORING) {
    p.producer = Producer::kMonitoring;
    if (!hspcprof::monitoring::enable(self)) return false;
    p.enabled = true;
    hspcprof::fork::enabled(self);
    return true;
  }
  if (!p.builtins && hspcprof::frames::available()) {
    p.producer = Producer::kFrames;
    p.enabled = true;
    hspcprof::fork::enabled(self);
    hspcprof::frames::enable(self);
    return true;
  }
  p.producer = Producer::kSetprofile;
#if HSPCPROF_HOOK
  return enable_hooks(self, p);
#else
  return false;
#endif
}

PyObject* profiler_enable(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (p.enabled) Py_RETURN_NONE;
  p.seconds_per_tick = 0;
  if (enable_producer(self, p)) Py_RETURN_NONE;
  if (p.enabled) {  // part-way: what was installed comes off, the error stays
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    Ref(profiler_disable(self, nullptr));
    PyErr_Restore(type, value, traceback);
  }
  return nullptr;
}

#if HSPCPROF_HOOK
int what_of(PyObject* event) {
  const char* name = PyUnicode_Check(event) ? PyUnicode_AsUTF8(event) : nullptr;
  if (name == nullptr) return -1;
  if (std::strcmp(name, "call") == 0) return PyTrace_CALL;
  if (std::strcmp(name, "c_call") == 0) return PyTrace_C_CALL;
  return -1;  // a return: with no call open in the new session, the profile ignores it
}

// threading's bootstrap installs this in each new thread (sys.setprofile): the thread gets its
// session and the C hook, which takes over from here, starting with this very event.
PyObject* profiler_thread_started(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  if (n != 3) {
    PyErr_SetString(PyExc_TypeError, "_thread_started(frame, event, arg)");
    return nullptr;
  }
  Profiler& p = impl_of(self);
  if (!p.enabled) {
    PyEval_SetProfile(nullptr, nullptr);
    Py_RETURN_NONE;
  }
  (void)reap(p, false);
  ThreadObject* t = attach(self, PyThreadState_Get());
  if (t == nullptr) return nullptr;
  const int what = what_of(args[1]);
  if (what >= 0 && PyFrame_Check(args[0])) {
    hook_for(p.mode)(reinterpret_cast<PyObject*>(t), reinterpret_cast<PyFrameObject*>(args[0]),
                     what, args[2]);
  }
  Py_RETURN_NONE;
}
#endif

void release_objects(Profiler& p) {
  p.objects.for_each_value([](void* obj) { Py_DECREF(static_cast<PyObject*>(obj)); });
  p.objects.clear();
}

bool refuse_while_enabled(const Profiler& p, const char* what) {
  if (!p.enabled) return false;
  PyErr_Format(PyExc_RuntimeError, "hspcprof: disable the profiler before %s", what);
  return true;
}

PyObject* profiler_clear(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (refuse_while_enabled(p, "clear()")) return nullptr;
  p.merged.clear();
  p.events = p.stalls = 0;
  p.consumer_cpu = 0;
  p.consumers = 0;
  release_objects(p);
  Py_RETURN_NONE;
}

// One rate for every view of a profile between two enables: the TSC's rate is refined at each
// reading, and the stacks' own times must sum to the stats' own times exactly.
double seconds_per_tick(Profiler& p) {
  if (p.seconds_per_tick == 0) p.seconds_per_tick = 1.0 / g_clock->ticks_per_second();
  return p.seconds_per_tick;
}

PyObject* profiler_getstats(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (refuse_while_enabled(p, "taking stats")) return nullptr;
  return hspcprof::stats_list(p.objects, p.merged, seconds_per_tick(p));
}

PyObject* profiler_getstacks(PyObject* self, PyObject* /*unused*/) {
  Profiler& p = impl_of(self);
  if (refuse_while_enabled(p, "taking stacks")) return nullptr;
  return hspcprof::stacks_list(p.objects, p.merged, seconds_per_tick(p));
}

PyObject* profiler_stalls(PyObject* self, void* /*closure*/) {
  return PyLong_FromUnsignedLongLong(impl_of(self).stalls);
}

PyObject* profiler_events(PyObject* self, void* /*closure*/) {
  return PyLong_FromUnsignedLongLong(impl_of(self).events);
}

PyObject* profiler_consumer_cpu(PyObject* self, void* /*closure*/) {
  return PyFloat_FromDouble(impl_of(self).consumer_cpu);
}

PyObject* profiler_consumers(PyObject* self, void* /*closure*/) {
  const Profiler& p = impl_of(self);
  const std::size_t now = p.pool ? p.pool->peak_consumers() : 0;
  return PyLong_FromSize_t(std::max(p.consumers, now));
}

constexpr const char* kModes[] = {"null", "empty", "channel", "inline"};

constexpr const char* kProducers[] = {"setprofile", "frames", "monitoring"};

PyObject* profiler_producer(PyObject* self, void* /*closure*/) {
  return PyUnicode_FromString(kProducers[static_cast<int>(impl_of(self).producer)]);
}

PyObject* profiler_mode(PyObject* self, void* /*closure*/) {
  return PyUnicode_FromString(kModes[static_cast<int>(impl_of(self).mode)]);
}

bool parse_mode(const char* name, Mode& mode) {
  for (int i = 0; i < 4; ++i) {
    if (std::strcmp(name, kModes[i]) == 0) {
      mode = static_cast<Mode>(i);
      return true;
    }
  }
  PyErr_Format(PyExc_ValueError, "hspcprof: mode must be null, empty, channel or inline, not '%s'",
               name);
  return false;
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
  static const char* keywords[] = {"builtins", "mode", "stack_nodes", nullptr};
  int builtins = 1;
  const char* mode = "channel";
  Py_ssize_t stack_nodes = hspcprof::StackTree::kDefaultNodes;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$psn", const_cast<char**>(keywords), &builtins,
                                   &mode, &stack_nodes)) {
    return -1;
  }
  Profiler& p = impl_of(self);
  if (refuse_while_enabled(p, "changing its mode")) return -1;
  if (stack_nodes < 0 || stack_nodes > 0x7fffffff) {
    PyErr_Format(PyExc_ValueError, "hspcprof: stack_nodes must be 0 to 2**31 - 1, not %zd",
                 stack_nodes);
    return -1;
  }
  p.stack_nodes = static_cast<std::size_t>(stack_nodes);
  p.merged = hspcprof::Aggregator(p.stack_nodes);
  p.builtins = builtins != 0;
  return parse_mode(mode, p.mode) ? 0 : -1;
}

// While enabled the profiler is referenced (the 3.11 hook's object, or here::g_owner for the frame
// function and the 3.12+ callbacks) and every thread's object holds one, so every session is
// closed by now; the last consumers may still be draining.
void profiler_dealloc(PyObject* self) {
  Profiler* p = reinterpret_cast<ProfilerObject*>(self)->impl;
  hspcprof::fork::forget(self);  // enabled still if its hooks were taken off by others
  if (p != nullptr) {
    if (!reap(*p, true)) PyErr_WriteUnraisable(nullptr);
    Py_CLEAR(p->previous_thread_hook);
    release_objects(*p);
    delete p;
  }
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMethodDef profiler_methods[] = {
    {"enable", profiler_enable, METH_NOARGS,
     "Start profiling every thread, and each thread started from now on."},
    {"disable", profiler_disable, METH_NOARGS,
     "Stop profiling; returns once every event is counted."},
    {"clear", profiler_clear, METH_NOARGS, "Forget every count and release the functions."},
    {"_getstats", profiler_getstats, METH_NOARGS,
     "[((label, calls, reccalls, totaltime, inlinetime), [callee tuples])] by key."},
    {"_getstacks", profiler_getstacks, METH_NOARGS,
     "[(parent, label, calls, totaltime, owntime)]: the calling-context tree, parents first."},
#if HSPCPROF_HOOK
    {"_thread_started",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(profiler_thread_started)),
     METH_FASTCALL, "threading.setprofile's hook: profiles the new thread."},
#endif
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef profiler_getset[] = {
    {"stalls", profiler_stalls, nullptr,
     "How often the interpreter waited for a consumer (a full channel).", nullptr},
    {"events", profiler_events, nullptr, "Events the hooks produced, every thread.", nullptr},
    {"consumer_cpu", profiler_consumer_cpu, nullptr,
     "CPU seconds the consumer threads took (mode channel), once they have ended.", nullptr},
    {"consumers", profiler_consumers, nullptr,
     "The most consumer threads the profiler ran at once (mode channel: one pool drains every "
     "thread's channel).",
     nullptr},
    {"mode", profiler_mode, nullptr, "null, empty, channel or inline.", nullptr},
    {"producer", profiler_producer, nullptr,
     "What feeds the channels: 'monitoring' (CPython 3.12 on: sys.monitoring's callbacks), "
     "'frames' (builtins=False on CPython 3.11: the frame evaluation function) or 'setprofile' "
     "(a profile hook per thread, 3.11).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot profiler_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(profiler_new)},
    {Py_tp_init, reinterpret_cast<void*>(profiler_init)},
    {Py_tp_dealloc, reinterpret_cast<void*>(profiler_dealloc)},
    {Py_tp_methods, profiler_methods},
    {Py_tp_getset, profiler_getset},
    {Py_tp_doc, const_cast<char*>("Profiler(*, builtins=True, mode='channel'): "
                                  "a cProfile-compatible core.")},
    {0, nullptr},
};

void thread_dealloc(PyObject* obj) {
  auto* t = reinterpret_cast<ThreadObject*>(obj);
  hspcprof::here::forget(t->session);
  detach(*t, g_clock->now());
  PyObject* profiler = t->profiler;
  PyTypeObject* type = Py_TYPE(obj);
  PyObject_Free(obj);
  Py_DECREF(type);
  Py_DECREF(profiler);
}

PyType_Slot thread_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(thread_dealloc)},
    {Py_tp_doc, const_cast<char*>("One profiled thread's hook (internal).")},
    {0, nullptr},
};

PyType_Spec thread_spec = {
    "hspcprof._core._Thread", sizeof(ThreadObject), 0, Py_TPFLAGS_DEFAULT, thread_slots,
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

// os.register_at_fork's after_in_child: the hooks of the profilers enabled at fork come off
// (fork.hpp made them inert already).
PyObject* after_fork_in_child(PyObject* /*module*/, PyObject* /*unused*/) {
  auto& forked = hspcprof::fork::g_forked;
  while (!forked.empty()) {  // the last enabled first: each puts back what it found
    const Ref self(Py_NewRef(forked.back()));  // its last hook may hold the last reference
    forked.pop_back();
    Profiler& p = impl_of(self.get());
    bool ok = true;
    if (p.producer == Producer::kFrames) hspcprof::frames::disable(p, 0);
    if (p.producer == Producer::kMonitoring) ok = hspcprof::monitoring::disable(p, 0);
#if HSPCPROF_HOOK
    if (p.producer == Producer::kSetprofile) {
      const bool restored = stop_following_new_threads(p);
      ok = uninstall_hooks(p) && restored;
    }
#endif
    if (!ok) PyErr_WriteUnraisable(self.get());
  }
  Py_RETURN_NONE;
}

PyMethodDef module_methods[] = {
    {"clock_info", clock_info, METH_NOARGS, "(uses the TSC, ticks per second)"},
    {"channel_info", channel_info, METH_NOARGS, "The channel's tuned parameters."},
    {"_after_fork_in_child", after_fork_in_child, METH_NOARGS,
     "os.register_at_fork's hook: a child stops the profilers enabled at fork."},
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
  static const int at_fork = pthread_atfork(nullptr, nullptr, hspcprof::fork::make_inert);
  static_cast<void>(at_fork);
  Ref module(PyModule_Create(&module_def));
  if (!module) return nullptr;
  g_thread_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&thread_spec));
  if (g_thread_type == nullptr) return nullptr;
  PyObject* type = PyType_FromSpec(&profiler_spec);
  if (type == nullptr || PyModule_AddObject(module.get(), "Profiler", type) != 0) {
    Py_XDECREF(type);
    return nullptr;
  }
  return module.release();
}
