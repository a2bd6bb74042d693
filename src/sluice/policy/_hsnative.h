/*
 * What sluice.policy._hsnative offers other C extensions (the lean log reader
 * scans record bodies with it), through the capsule
 * sluice.policy._hsnative._C_API.
 */
#ifndef SLUICE_HSNATIVE_H
#define SLUICE_HSNATIVE_H

#include <Python.h>

#define HSNATIVE_CAPSULE "sluice.policy._hsnative._C_API"

typedef struct {
    /* The type of _hsnative.Matcher objects. */
    PyTypeObject *matcher_type;
    /* Matcher.hits on UTF-8 bytes, without a bytes object: the tuple of ids
     * that hit data[:length]; NULL with UnicodeDecodeError when they are not
     * UTF-8. */
    PyObject *(*scan_utf8)(PyObject *matcher, const char *data, Py_ssize_t length);
} HsNativeApi;

#endif
