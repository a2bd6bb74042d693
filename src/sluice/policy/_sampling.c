/*
 * 64-bit FNV-1a, the hash sampling keys records by (sluice.policy.sampling,
 * whose fnv1a64 is the reference this must equal): one multiply per byte in
 * machine integers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *
fnv1a64(PyObject *module, PyObject *data)
{
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "fnv1a64 takes bytes");
        return NULL;
    }
    const unsigned char *at = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    uint64_t hash = 0xCBF29CE484222325ull;
    for (Py_ssize_t i = 0; i < size; i++) {
        hash ^= at[i];
        hash *= 0x100000001B3ull;
    }
    return PyLong_FromUnsignedLongLong(hash);
}

static PyMethodDef methods[] = {
    {"fnv1a64", fnv1a64, METH_O, "fnv1a64(data: bytes) -> int: 64-bit FNV-1a."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice.policy._sampling",
    .m_doc = "Sampling's hash in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__sampling(void)
{
    return PyModule_Create(&module_def);
}
