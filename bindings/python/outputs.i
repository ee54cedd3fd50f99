/*
 * Out-parameters become return values. A call either succeeds (status 0)
 * or raises, so the value simply replaces the status: comm_rank(comm)
 * returns the rank, comm_init(None) the communicator, and a communication
 * call given a true `handle` argument returns its comm_handle_t (None/False
 * means "block until done").
 */

%typemap(in, numinputs=0) int *out (int temp = 0), int64_t *out_ms (int64_t temp = 0),
    const char **out (const char *temp = NULL), comm_t **out (comm_t *temp = NULL),
    comm_batch_t **out (comm_batch_t *temp = NULL), comm_config_t **out (comm_config_t *temp = NULL) {
  $1 = ($1_ltype)&temp;
}

%typemap(argout) int *out {
  Py_DECREF($result);
  $result = PyLong_FromLong((long)temp$argnum);
}

%typemap(argout) int64_t *out_ms {
  Py_DECREF($result);
  $result = PyLong_FromLongLong((long long)temp$argnum);
}

%typemap(argout) const char **out {
  Py_DECREF($result);
  $result = PyUnicode_DecodeUTF8(temp$argnum, (Py_ssize_t)strlen(temp$argnum), "replace");
}

/* comm_cuda_device_count(): (devices, why none or ""). */
%typemap(in, numinputs=0) (int *out_count, const char **out_reason) (int count = 0, const char *reason = NULL) {
  $1 = &count;
  $2 = &reason;
}
%typemap(argout) (int *out_count, const char **out_reason) {
  Py_DECREF($result);
  $result = Py_BuildValue("(is)", count$argnum, reason$argnum != NULL ? reason$argnum : "");
}

/* comm_split hands a NULL communicator to ranks that join no group: None. */
%typemap(argout) comm_t **out, comm_batch_t **out, comm_config_t **out {
  Py_DECREF($result);
  $result = SWIG_NewPointerObj(temp$argnum, $*1_descriptor, 0);
}

%typemap(in) comm_handle_t **handle (comm_handle_t *temp = NULL) {
  int wanted = PyObject_IsTrue($input);
  if (wanted < 0) SWIG_fail;
  $1 = wanted ? &temp : NULL;
}

%typemap(argout) comm_handle_t **handle {
  if ($1 != NULL) {
    Py_DECREF($result);
    $result = SWIG_NewPointerObj(temp$argnum, $*1_descriptor, 0);
  }
}

/* Groups from a sequence of ranks. */
%typemap(in) (int nranks, const int *ranks) (int *temp = NULL) {
  PyObject *fast = PySequence_Fast($input, "ranks must be a sequence of int");
  if (fast == NULL) SWIG_fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  temp = (int *)PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  for (Py_ssize_t i = 0; temp != NULL && i < n; ++i) {
    long value = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
    if (value == -1 && PyErr_Occurred()) break;
    temp[i] = (int)value;
  }
  Py_DECREF(fast);
  if (temp == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  if (PyErr_Occurred()) SWIG_fail;
  $1 = (int)n;
  $2 = temp;
}

%typemap(freearg) (int nranks, const int *ranks) {
  PyMem_Free(temp$argnum);
}
