// Names for the functions the consumer knows only by key, resolved under the GIL when the stats
// are taken. A C function's name follows _lsprof's normalizeUserObj (CPython 3.11) exactly, so
// that pstats keys ('~', 0, name) agree with cProfile's.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <memory>

namespace hspcprof {

struct Decref {
  void operator()(PyObject* o) const noexcept { Py_XDECREF(o); }
};
// An owned reference: error paths in the stats code may leave at any step.
using Ref = std::unique_ptr<PyObject, Decref>;

// "<len>" for a builtin function of the builtins module, "<math.sqrt>" for another module's.
inline PyObject* module_function_name(PyCFunctionObject* fn) {
  Ref modname;
  PyObject* mod = fn->m_module;
  if (mod != nullptr && PyUnicode_Check(mod)) {
    Py_INCREF(mod);
    modname.reset(mod);
  } else if (mod != nullptr && PyModule_Check(mod)) {
    modname.reset(PyModule_GetNameObject(mod));
    if (!modname) PyErr_Clear();
  }
  if (modname && PyUnicode_CompareWithASCIIString(modname.get(), "builtins") != 0) {
    return PyUnicode_FromFormat("<%U.%s>", modname.get(), fn->m_ml->ml_name);
  }
  return PyUnicode_FromFormat("<%s>", fn->m_ml->ml_name);
}

// "<method 'append' of 'list' objects>" when the method is found on its object's type, else
// "<built-in method builtins.len>" from the function's module.
inline PyObject* bound_method_name(PyCFunctionObject* fn) {
  const Ref name(PyUnicode_FromString(fn->m_ml->ml_name));
  if (name) {
    PyObject* found = _PyType_Lookup(Py_TYPE(fn->m_self), name.get());
    if (found != nullptr) {
      Py_INCREF(found);
      const Ref method(found);
      PyObject* repr = PyObject_Repr(method.get());
      if (repr != nullptr) return repr;
    }
  }
  PyErr_Clear();
  PyObject* modname = fn->m_module;
  if (modname != nullptr && PyUnicode_Check(modname)) {
    return PyUnicode_FromFormat("<built-in method %S.%s>", modname, fn->m_ml->ml_name);
  }
  return PyUnicode_FromFormat("<built-in method %s>", fn->m_ml->ml_name);
}

// A new reference: the code object itself, or a C function's descriptive name (its label).
inline PyObject* user_object(PyObject* obj) {
  if (!PyCFunction_Check(obj)) {
    Py_INCREF(obj);
    return obj;
  }
  auto* fn = reinterpret_cast<PyCFunctionObject*>(obj);
  return fn->m_self == nullptr ? module_function_name(fn) : bound_method_name(fn);
}

}  // namespace hspcprof
