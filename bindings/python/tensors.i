/*
 * Arrays in place of tensor descriptors. Python passes each tensor argument
 * as None (NULL) or as a pair (object, comm_dtype_t) where the object has the
 * buffer protocol and is C-contiguous (libcomm hands over numpy arrays), or
 * is a libcomm CudaArray (device memory: its _comm_cuda says where). The
 * wrapper borrows the object's memory for the call, with no copy, and
 * describes it with a descriptor that lives for the call only: the C API
 * copies descriptors, and for asynchronous calls libcomm keeps the objects
 * themselves alive until the handle completes.
 *
 * Python builds descriptors itself, so the comm_tensor_* functions are not
 * wrapped.
 */

%ignore comm_tensor_create;
%ignore comm_tensor_destroy;
%ignore comm_tensor_set_data;
%ignore comm_tensor_set_memory;
%ignore comm_tensor_data;
%ignore comm_tensor_dtype;
%ignore comm_tensor_ndim;
%ignore comm_tensor_dim;
%ignore comm_tensor_numel;
%ignore comm_tensor_nbytes;
%ignore comm_tensor_memory;

%{
typedef struct {
  comm_tensor_t *tensor;
  Py_buffer view;
  int viewHeld;
} PyCommTensor;

/* Initial value of typemap locals: the fail path closes every argument. */
static const PyCommTensor pycomm_tensor_none;

/* A CUDA array (libcomm.arrays.CudaArray's _comm_cuda: (address, shape,
   device)) as a descriptor of device memory; 0 with an exception set on
   failure (comm_tensor_set_memory's, where no device is visible). */
static int pycomm_cuda_tensor_open(PyObject *cuda, comm_dtype_t dtype, PyCommTensor *t) {
  unsigned long long address = 0;
  PyObject *shapeTuple = NULL;
  int device = 0;
  if (!PyArg_ParseTuple(cuda, "KO!i", &address, &PyTuple_Type, &shapeTuple, &device)) return 0;
  int64_t shape[COMM_MAX_DIMS];
  Py_ssize_t given = PyTuple_GET_SIZE(shapeTuple);
  int ndim = given < COMM_MAX_DIMS ? (int)given : COMM_MAX_DIMS;
  for (Py_ssize_t d = 0; d < given; ++d) {
    int64_t extent = (int64_t)PyLong_AsLongLong(PyTuple_GET_ITEM(shapeTuple, d));
    if (extent == -1 && PyErr_Occurred()) return 0;
    if (d < ndim) shape[d] = extent;
    else shape[ndim - 1] *= extent;
  }
  comm_status_t status = comm_tensor_create(&t->tensor, (void *)(uintptr_t)address, dtype, ndim, shape);
  if (status == COMM_OK) status = comm_tensor_set_memory(t->tensor, COMM_MEMORY_CUDA, device);
  if (status != COMM_OK) {
    pycomm_raise(status);
    return 0;
  }
  return 1;
}

/* Describe `spec` (None or (object, dtype)) in `t`; 0 with an exception set on failure. */
static int pycomm_tensor_open(PyObject *spec, PyCommTensor *t) {
  if (spec == Py_None) return 1;
  if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2) {
    PyErr_SetString(PyExc_TypeError, "a tensor argument is None or (buffer, comm_dtype_t)");
    return 0;
  }
  long dtype = PyLong_AsLong(PyTuple_GET_ITEM(spec, 1));
  if (dtype == -1 && PyErr_Occurred()) return 0;
  size_t elementSize = comm_dtype_size((comm_dtype_t)dtype);
  if (elementSize == 0) {
    PyErr_Format(PyExc_ValueError, "%ld is not a comm_dtype_t", dtype);
    return 0;
  }
  PyObject *cuda = PyObject_GetAttrString(PyTuple_GET_ITEM(spec, 0), "_comm_cuda");
  if (cuda != NULL) {
    int ok = pycomm_cuda_tensor_open(cuda, (comm_dtype_t)dtype, t);
    Py_DECREF(cuda);
    return ok;
  }
  PyErr_Clear();
  if (PyObject_GetBuffer(PyTuple_GET_ITEM(spec, 0), &t->view, PyBUF_C_CONTIGUOUS) != 0) return 0;
  t->viewHeld = 1;
  if ((size_t)t->view.itemsize != elementSize) {
    PyErr_Format(PyExc_ValueError, "the buffer's items have %zd bytes but %s has %zu",
                 t->view.itemsize, comm_dtype_name((comm_dtype_t)dtype), elementSize);
    return 0;
  }
  /* The C API reads rows (dim 0) and element counts only, so dims past
     COMM_MAX_DIMS fold into the last one. */
  int64_t shape[COMM_MAX_DIMS];
  int ndim = t->view.ndim < COMM_MAX_DIMS ? t->view.ndim : COMM_MAX_DIMS;
  for (int d = 0; d < t->view.ndim; ++d) {
    int64_t extent = (int64_t)t->view.shape[d];
    if (d < ndim) shape[d] = extent;
    else shape[ndim - 1] *= extent;
  }
  comm_status_t status = comm_tensor_create(&t->tensor, t->view.buf, (comm_dtype_t)dtype, ndim, shape);
  if (status != COMM_OK) {
    pycomm_raise(status);
    return 0;
  }
  return 1;
}

static void pycomm_tensor_close(PyCommTensor *t) {
  comm_tensor_destroy(t->tensor);
  if (t->viewHeld) PyBuffer_Release(&t->view);
}

typedef struct {
  Py_ssize_t count;
  PyCommTensor *items;
  comm_tensor_t **tensors;
} PyCommTensorList;

static const PyCommTensorList pycomm_tensor_list_none;

static int pycomm_tensor_list_open(PyObject *specs, PyCommTensorList *l) {
  PyObject *fast = PySequence_Fast(specs, "a tensor list must be a sequence");
  if (fast == NULL) return 0;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  size_t slots = (size_t)(n > 0 ? n : 1);
  l->items = (PyCommTensor *)PyMem_Calloc(slots, sizeof *l->items);
  l->tensors = (comm_tensor_t **)PyMem_Calloc(slots, sizeof *l->tensors);
  int ok = l->items != NULL && l->tensors != NULL;
  if (!ok) PyErr_NoMemory();
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    l->count = i + 1;
    ok = pycomm_tensor_open(PySequence_Fast_GET_ITEM(fast, i), &l->items[i]);
    l->tensors[i] = l->items[i].tensor;
  }
  Py_DECREF(fast);
  return ok;
}

static void pycomm_tensor_list_close(PyCommTensorList *l) {
  for (Py_ssize_t i = 0; i < l->count; ++i) pycomm_tensor_close(&l->items[i]);
  PyMem_Free(l->items);
  PyMem_Free(l->tensors);
}

typedef struct {
  int64_t *values;
} PyCommCounts;

static const PyCommCounts pycomm_counts_none;

/* None -> NULL; a sequence of int -> int64_t[]. The C call reads one entry per
   rank, so libcomm checks the length before calling. */
static int pycomm_counts_open(PyObject *seq, PyCommCounts *c) {
  if (seq == Py_None) return 1;
  PyObject *fast = PySequence_Fast(seq, "split sizes must be a sequence of int");
  if (fast == NULL) return 0;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  c->values = (int64_t *)PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  int ok = c->values != NULL;
  if (!ok) PyErr_NoMemory();
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    c->values[i] = (int64_t)PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    ok = !(c->values[i] == -1 && PyErr_Occurred());
  }
  Py_DECREF(fast);
  return ok;
}
%}

%typemap(in) const comm_tensor_t *in (PyCommTensor temp = pycomm_tensor_none) {
  if (!pycomm_tensor_open($input, &temp)) SWIG_fail;
  $1 = ($1_ltype)temp.tensor;
}
%typemap(freearg) const comm_tensor_t *in {
  pycomm_tensor_close(&temp$argnum);
}
%apply const comm_tensor_t *in { comm_tensor_t *out, const comm_tensor_t *tensor, comm_tensor_t *tensor };

%typemap(in) (int nins, const comm_tensor_t *const *ins) (PyCommTensorList temp = pycomm_tensor_list_none) {
  if (!pycomm_tensor_list_open($input, &temp)) SWIG_fail;
  $1 = (int)temp.count;
  $2 = ($2_ltype)temp.tensors;
}
%typemap(freearg) (int nins, const comm_tensor_t *const *ins) {
  pycomm_tensor_list_close(&temp$argnum);
}
%apply (int nins, const comm_tensor_t *const *ins) { (int nouts, comm_tensor_t *const *outs) };

%typemap(in) const int64_t *counts (PyCommCounts temp = pycomm_counts_none) {
  if (!pycomm_counts_open($input, &temp)) SWIG_fail;
  $1 = ($1_ltype)temp.values;
}
%typemap(freearg) const int64_t *counts {
  PyMem_Free(temp$argnum.values);
}
%apply const int64_t *counts { const int64_t *out_splits, const int64_t *in_splits };
