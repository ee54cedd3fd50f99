/*
 * Read a DLPack capsule ("dltensor", from obj.__dlpack__()) without taking
 * it over: libcomm keeps the capsule alive next to the numpy view it makes,
 * and the producer's capsule destructor frees the tensor when both go. This
 * covers every DLPack dtype, bfloat16 included, which numpy.from_dlpack
 * refuses.
 */

%{
/* The DLPack ABI (dlpack.h, v0.x), only as far as it is read here. */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} PyCommDLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} PyCommDLDataType;

typedef struct {
  void *data;
  PyCommDLDevice device;
  int32_t ndim;
  PyCommDLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} PyCommDLTensor;

static PyObject *pycomm_int64_tuple(const int64_t *values, int32_t n) {
  PyObject *tuple = PyTuple_New(n);
  for (int32_t i = 0; tuple != NULL && i < n; ++i) {
    PyObject *item = PyLong_FromLongLong((long long)values[i]);
    if (item == NULL) {
      Py_CLEAR(tuple);
      break;
    }
    PyTuple_SET_ITEM(tuple, i, item);
  }
  return tuple;
}
%}

%nothread dlpack_describe;
%inline %{
/*
 * (address, shape, strides in elements or None, type code, bits, lanes,
 * device type, device id) of the tensor in a "dltensor" capsule.
 */
PyObject *dlpack_describe(PyObject *capsule) {
  /* DLManagedTensor starts with its DLTensor. */
  const PyCommDLTensor *t = (const PyCommDLTensor *)PyCapsule_GetPointer(capsule, "dltensor");
  if (t == NULL) return NULL;
  if (t->ndim < 0) {
    PyErr_Format(PyExc_ValueError, "DLPack tensor has ndim %d", (int)t->ndim);
    return NULL;
  }
  PyObject *shape = pycomm_int64_tuple(t->shape, t->ndim);
  PyObject *strides = t->strides != NULL ? pycomm_int64_tuple(t->strides, t->ndim) : Py_NewRef(Py_None);
  if (shape == NULL || strides == NULL) {
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return NULL;
  }
  unsigned long long address = (unsigned long long)(uintptr_t)t->data + (unsigned long long)t->byte_offset;
  return Py_BuildValue("(KNNiiiii)", address, shape, strides, (int)t->dtype.code, (int)t->dtype.bits,
                       (int)t->dtype.lanes, (int)t->device.device_type, (int)t->device.device_id);
}
%}
