/*
 * The hits a record's scans found, gathered as the tuples the scans returned
 * and joined into one tuple once per record (instead of a new tuple at every
 * scan that found something). Shared by the batch readers in C (_lean.c,
 * _jsonread.c); include it after Python.h.
 */
#ifndef SLUICE_FOUND_H
#define SLUICE_FOUND_H

#define INLINE_FOUND 16

/* The tuples a record's scans found, in order (strong references). */
typedef struct {
    PyObject *inline_found[INLINE_FOUND];
    PyObject **found;
    Py_ssize_t count, capacity;
} Found;

static inline void
found_init(Found *f)
{
    f->found = f->inline_found;
    f->count = 0;
    f->capacity = INLINE_FOUND;
}

static inline void
found_clear(Found *f)
{
    for (Py_ssize_t i = 0; i < f->count; i++)
        Py_DECREF(f->found[i]);
    if (f->found != f->inline_found)
        PyMem_Free(f->found);
    found_init(f);
}

/* Keeps `hits` (a new reference, a tuple) when it is not empty. */
static inline int
found_add(Found *f, PyObject *hits)
{
    if (!PyTuple_CheckExact(hits)) {
        Py_DECREF(hits);
        PyErr_SetString(PyExc_TypeError, "a scan returned something other than a tuple");
        return -1;
    }
    if (PyTuple_GET_SIZE(hits) == 0) {
        Py_DECREF(hits);
        return 0;
    }
    if (f->count == f->capacity) {
        Py_ssize_t capacity = f->capacity * 2;
        PyObject **grown = PyMem_Malloc((size_t)capacity * sizeof(PyObject *));
        if (grown == NULL) {
            Py_DECREF(hits);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(grown, f->found, (size_t)f->count * sizeof(PyObject *));
        if (f->found != f->inline_found)
            PyMem_Free(f->found);
        f->found = grown;
        f->capacity = capacity;
    }
    f->found[f->count++] = hits;
    return 0;
}

/* One tuple of everything found (a new reference); `f` is emptied. */
static inline PyObject *
found_join(Found *f, PyObject *empty)
{
    PyObject *joined;
    if (f->count == 0) {
        joined = empty;
        Py_INCREF(joined);
    } else if (f->count == 1) {
        joined = f->found[0];
        Py_INCREF(joined);
    } else {
        Py_ssize_t size = 0;
        for (Py_ssize_t i = 0; i < f->count; i++)
            size += PyTuple_GET_SIZE(f->found[i]);
        joined = PyTuple_New(size);
        if (joined != NULL) {
            Py_ssize_t at = 0;
            for (Py_ssize_t i = 0; i < f->count; i++) {
                PyObject *part = f->found[i];
                for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(part); j++) {
                    PyObject *id = PyTuple_GET_ITEM(part, j);
                    Py_INCREF(id);
                    PyTuple_SET_ITEM(joined, at++, id);
                }
            }
        }
    }
    found_clear(f);
    return joined;
}

#endif
