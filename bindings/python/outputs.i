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
  $2 = ($2_ltype)&reason;
}
%typemap(argout) (int *out_count, const char **out_reason) {
  Py_DECREF($result);
  $result = Py_BuildValue("(is)", count$argnum, reason$argnum != NULL ? reason$argnum : "");
}

/* Ranks after a failure: the caller passes `capacity` (the communicator's
   size always suffices) and gets a list of at most that many ranks.
   comm_failed_ranks(capacity, comm) returns the list; comm_agree(flags,
   capacity, comm) returns (flags, list): its flags argout has replaced the
   status by then. */
%{
static PyObject *pycomm_rank_list(const int *ranks, int count, int capacity) {
  Py_ssize_t n = count < capacity ? count : capacity;
  PyObject *list = PyList_New(n > 0 ? n : 0);
  for (Py_ssize_t i = 0; list != NULL && i < n; ++i) {
    PyObject *rank = PyLong_FromLong((long)ranks[i]);
    if (rank == NULL) Py_CLEAR(list);
    else PyList_SET_ITEM(list, i, rank);
  }
  return list;
}
%}

%typemap(in) (int *out_count, int *out_ranks, int capacity) (int count = 0, int *ranks = NULL) {
  int overflow = 0;
  long capacity = PyLong_AsLongAndOverflow($input, &overflow);
  if (capacity == -1 && PyErr_Occurred()) SWIG_fail;
  if (overflow != 0 || capacity > INT_MAX || capacity < INT_MIN) {
    PyErr_SetString(PyExc_OverflowError, "capacity does not fit a C int");
    SWIG_fail;
  }
  /* A negative capacity goes to C, which refuses it with its message. */
  ranks = (int *)PyMem_Calloc((size_t)(capacity > 0 ? capacity : 1), sizeof(int));
  if (ranks == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  $1 = &count;
  $2 = ranks;
  $3 = (int)capacity;
}
%apply (int *out_count, int *out_ranks, int capacity) { (int *out_failed_count, int *out_failed_ranks, int capacity) };

%typemap(freearg) (int *out_count, int *out_ranks, int capacity),
    (int *out_failed_count, int *out_failed_ranks, int capacity) {
  PyMem_Free(ranks$argnum);
}

%typemap(argout) (int *out_count, int *out_ranks, int capacity) {
  Py_DECREF($result);
  $result = pycomm_rank_list(ranks$argnum, count$argnum, $3);
  if ($result == NULL) SWIG_fail;
}

%typemap(argout) (int *out_failed_count, int *out_failed_ranks, int capacity) {
  PyObject *failed = pycomm_rank_list(ranks$argnum, count$argnum, $3);
  PyObject *pair = failed != NULL ? PyTuple_New(2) : NULL;
  if (pair == NULL) {
    Py_XDECREF(failed);
    SWIG_fail;
  }
  PyTuple_SET_ITEM(pair, 0, $result);
  PyTuple_SET_ITEM(pair, 1, failed);
  $result = pair;
}

/* comm_agree's flags: a Python int of 32 bits in, the agreed flags out. */
%typemap(in) uint32_t *flags (uint32_t temp = 0) {
  unsigned long value = PyLong_AsUnsignedLong($input);
  if (value == (unsigned long)-1 && PyErr_Occurred()) SWIG_fail;
  if (value > 0xFFFFFFFFul) {
    PyErr_SetString(PyExc_OverflowError, "flags do not fit 32 bits");
    SWIG_fail;
  }
  temp = (uint32_t)value;
  $1 = &temp;
}

%typemap(argout) uint32_t *flags {
  Py_DECREF($result);
  $result = PyLong_FromUnsignedLong((unsigned long)temp$argnum);
  if ($result == NULL) SWIG_fail;
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

/* The _async makings (comm_swig.i) return (communicator, handle): the
   communicator is None for a split with COMM_UNDEFINED, the handle always
   there. */
%typemap(in, numinputs=0) comm_handle_t **making (comm_handle_t *temp = NULL) {
  $1 = &temp;
}

%typemap(argout) comm_handle_t **making {
  PyObject *handle = SWIG_NewPointerObj(temp$argnum, $*1_descriptor, 0);
  PyObject *pair = handle != NULL ? PyTuple_Pack(2, $result, handle) : NULL;
  Py_XDECREF(handle);
  if (pair == NULL) SWIG_fail;
  Py_DECREF($result);
  $result = pair;
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
