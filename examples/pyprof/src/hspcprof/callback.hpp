// The object sys.monitoring calls for an event (CPython 3.12 on): a callable whose type's
// vectorcall slot is the callback itself. sys.monitoring calls its callbacks through vectorcall;
// a builtin function (PyCFunction, as _lsprof registers) adds a layer there, its METH_FASTCALL
// wrapper, which checks the recursion limit (reading the thread state) on each of the three
// callbacks a Python call makes: as much work as the producer's own per event. This type adds
// nothing: the interpreter calls the function straight from the object.
#pragma once

#include <Python.h>
#include <structmember.h>

#include <cstddef>

#if PY_VERSION_HEX >= 0x030C0000

namespace hspcprof {

struct CallbackObject {
  PyObject_HEAD vectorcallfunc call;
};

inline PyMemberDef callback_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(CallbackObject, call)),
     READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

inline PyType_Slot callback_slots[] = {
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, callback_members},
    {Py_tp_doc, const_cast<char*>("A sys.monitoring callback of hspcprof's (internal).")},
    {0, nullptr},
};

inline PyType_Spec callback_spec = {
    "hspcprof._core._Callback",
    sizeof(CallbackObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION |
        Py_TPFLAGS_IMMUTABLETYPE,  // no __call__ assigned from Python: the slot stays ours
    callback_slots,
};

inline PyTypeObject* g_callback_type = nullptr;  // made at the first callback, kept

// A new reference to a callable running `call`; null with an exception set.
inline PyObject* new_callback(vectorcallfunc call) {
  if (g_callback_type == nullptr) {
    g_callback_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&callback_spec));
    if (g_callback_type == nullptr) return nullptr;
  }
  auto* made = PyObject_New(CallbackObject, g_callback_type);
  if (made != nullptr) made->call = call;
  return reinterpret_cast<PyObject*>(made);
}

}  // namespace hspcprof

#endif
