/*
 * The C API of sluice.policy._hsnative for the record readers in C
 * (sluice.telemetry._jsonread, _lean): a field's Matcher scanned on a value's
 * bytes where they lie (a str's characters, a record's wire bytes), with no
 * bytes object and no Python call per value. Include it after Python.h.
 */
#ifndef SLUICE_HSNATIVE_H
#define SLUICE_HSNATIVE_H

#define SCAN_API_NAME "sluice.policy._hsnative.SCAN_API"
#define SCAN_API_VERSION 1

typedef struct {
    int version; /* SCAN_API_VERSION */
    /* Matcher's type: what scan() takes. */
    PyTypeObject *matcher_type;
    /* What `matcher` (a Matcher) finds in data[:length] (UTF-8), as
     * Matcher.scan answers: a new tuple, or NULL with an exception set. */
    PyObject *(*scan)(PyObject *matcher, const char *data, Py_ssize_t length);
} ScanApi;

/* The API (imports _hsnative), or NULL with an exception set. */
static inline const ScanApi *
scan_api_import(void)
{
    static const ScanApi *api;
    if (api == NULL) {
        const ScanApi *found = PyCapsule_Import(SCAN_API_NAME, 0);
        if (found == NULL)
            return NULL;
        if (found->version != SCAN_API_VERSION) {
            PyErr_Format(PyExc_ImportError, "%s: version %d, expected %d", SCAN_API_NAME,
                         found->version, SCAN_API_VERSION);
            return NULL;
        }
        api = found;
    }
    return api;
}

/* Whether `value` is a Matcher the API scans with; an error when it is
 * something else than None. 1, 0 (None), or -1 with an exception set. */
static inline int
scan_api_matcher(PyObject *value, const ScanApi **api)
{
    *api = NULL;
    if (value == Py_None)
        return 0;
    const ScanApi *found = scan_api_import();
    if (found == NULL)
        return -1;
    if (!PyObject_TypeCheck(value, found->matcher_type)) {
        PyErr_SetString(PyExc_TypeError, "a body matcher is an _hsnative.Matcher or None");
        return -1;
    }
    *api = found;
    return 1;
}

#endif
