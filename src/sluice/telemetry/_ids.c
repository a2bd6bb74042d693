/*
 * The id-length check of sluice.telemetry.otlp_ids (whose walk is the
 * reference this must answer as) in C: one walk over an export request's
 * wire, down only the fields that lead to a trace or span id, every other
 * field stepped over by its length. It runs on every protobuf request the
 * collector receives, so it must cost little next to the parse. The tables
 * have no cycle, so the walk goes no deeper than they do.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define TRACE_ID (-16)
#define SPAN_ID (-8)
#define RESOURCE 1
#define DEPRECATED_SCOPES 1000
#define SEEN_DEPRECATED 1

typedef struct {
    uint32_t field;
    int action; /* the kind of the message the field holds, or TRACE_ID / SPAN_ID */
} Step;

typedef struct {
    const Step *steps;
    int count;
} Kind;

#define KIND(steps) {steps, (int)(sizeof(steps) / sizeof(steps[0]))}

/* The same tables as otlp_ids.SCHEMAS (kinds by index). */
static const Step request[] = {{1, 1}};
static const Step resource[] = {{2, 2}, {1000, 2}};
static const Step scope[] = {{2, 3}};
static const Step span[] = {{1, TRACE_ID}, {2, SPAN_ID}, {4, SPAN_ID}, {13, 4}};
static const Step span_link[] = {{1, TRACE_ID}, {2, SPAN_ID}};
static const Step log_record[] = {{9, TRACE_ID}, {10, SPAN_ID}};
static const Step metric[] = {{5, 4}, {7, 4}, {9, 5}, {10, 6}};
static const Step number_points[] = {{1, 7}};
static const Step histogram_points[] = {{1, 8}};
static const Step exponential_points[] = {{1, 9}};
static const Step number_point[] = {{5, 10}};
static const Step histogram_point[] = {{8, 10}};
static const Step exponential_point[] = {{11, 10}};
static const Step exemplar[] = {{4, SPAN_ID}, {5, TRACE_ID}};

static const Kind traces[] = {
    KIND(request), KIND(resource), KIND(scope), KIND(span), KIND(span_link),
};
static const Kind logs[] = {
    KIND(request), KIND(resource), KIND(scope), KIND(log_record),
};
static const Kind metrics[] = {
    KIND(request), KIND(resource), KIND(scope), KIND(metric),
    KIND(number_points), KIND(histogram_points), KIND(exponential_points),
    KIND(number_point), KIND(histogram_point), KIND(exponential_point),
    KIND(exemplar),
};
/* By otlp_ids._SIGNALS' order: traces, logs, metrics. */
static const Kind *const schemas[] = {traces, logs, metrics};

/* The varint at *at (before end) into *value; 0 when it runs past end. */
static int
read_varint(const unsigned char **at, const unsigned char *end, uint64_t *value)
{
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*at >= end)
            return 0;
        unsigned char byte = *(*at)++;
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *value = result;
            return 1;
        }
    }
    return 0;
}

/* TRACE_ID or SPAN_ID for the first id of a wrong length; else
 * SEEN_DEPRECATED if a resource has a field 1000, else 0. Bytes that do not
 * read are not looked into. */
static int
walk(const Kind *schema, int kind, const unsigned char *at, const unsigned char *end)
{
    const Kind *fields = &schema[kind];
    int seen = 0;
    while (at < end) {
        uint64_t tag, length;
        if (!read_varint(&at, end, &tag))
            return seen;
        if (kind == RESOURCE && tag >> 3 == DEPRECATED_SCOPES)
            seen = SEEN_DEPRECATED;
        switch (tag & 7) {
        case 0:
            if (!read_varint(&at, end, &length))
                return seen;
            break;
        case 1:
            if (end - at < 8)
                return seen;
            at += 8;
            break;
        case 5:
            if (end - at < 4)
                return seen;
            at += 4;
            break;
        case 2: {
            if (!read_varint(&at, end, &length) || length > (uint64_t)(end - at))
                return seen;
            uint64_t number = tag >> 3;
            for (int i = 0; i < fields->count; i++) {
                if (fields->steps[i].field != number)
                    continue;
                int action = fields->steps[i].action;
                if (action < 0) {
                    if (length != 0 && length != (uint64_t)-action)
                        return action;
                } else {
                    int found = walk(schema, action, at, at + length);
                    if (found < 0)
                        return found;
                    seen |= found;
                }
                break;
            }
            at += length;
            break;
        }
        default:
            return seen; /* a group (only ever an unknown field): not looked into */
        }
    }
    return seen;
}

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyLong_Check(args[0]) || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "scan takes (signal: int, wire: bytes)");
        return NULL;
    }
    long signal = PyLong_AsLong(args[0]);
    if (signal < 0 || signal > 2) {
        PyErr_SetString(PyExc_ValueError, "signal is 0, 1 or 2");
        return NULL;
    }
    const unsigned char *wire = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    return PyLong_FromLong(walk(schemas[signal], 0, wire, wire + size));
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(signal, wire) -> int: -16 or -8 for the first trace or span id of a wrong length, "
     "else 1 if a resource has deprecated scopes, else 0."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice.telemetry._ids",
    .m_doc = "The id-length check of sluice.telemetry.otlp_ids in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__ids(void)
{
    return PyModule_Create(&module_def);
}
