/*
 * A negative comm_status_t becomes a Python exception carrying the C
 * message. The classes live in libcomm/errors.py, which registers one per
 * status at import; the message is read here, right after the call, before
 * any other comm_* call on this thread can replace it.
 */

%{
#define PYCOMM_STATUS_SLOTS 32

/* Indexed by -status; NULL until libcomm.errors registers a class. */
static PyObject *pycomm_error_classes[PYCOMM_STATUS_SLOTS];

static void pycomm_raise(comm_status_t status) {
  const char *text = comm_last_error();
  if (text[0] == '\0') text = comm_status_string(status);
  int slot = -(int)status;
  PyObject *cls = slot > 0 && slot < PYCOMM_STATUS_SLOTS && pycomm_error_classes[slot]
                      ? pycomm_error_classes[slot] : PyExc_RuntimeError;
  PyObject *message = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  if (message == NULL) return;
  PyObject *args = Py_BuildValue("(Ni)", message, (int)status);
  if (args == NULL) return;
  PyErr_SetObject(cls, args);
  Py_DECREF(args);
}
%}

%typemap(out) comm_status_t {
  if ($1 < 0) {
    pycomm_raise($1);
    SWIG_fail;
  }
  $result = PyLong_FromLong((long)$1);
}

%nothread set_error_class;
%inline %{
/* Raise `cls(message, status)` for `status` from now on. */
PyObject *set_error_class(int status, PyObject *cls) {
  int slot = -status;
  if (slot <= 0 || slot >= PYCOMM_STATUS_SLOTS) {
    PyErr_Format(PyExc_ValueError, "status %d is not an error status", status);
    return NULL;
  }
  Py_INCREF(cls);
  Py_XSETREF(pycomm_error_classes[slot], cls);
  Py_RETURN_NONE;
}
%}
