/*
 * The check of sluice.telemetry.otlp_ids (whose walk is the reference this
 * must answer as) in C: one walk over an export request's wire, every field
 * of every message, as pdata's gogoproto Unmarshal methods read it, stopping
 * at the first problem they would report (a wrong wire type, a cut varint
 * or length, an id of a wrong length...). It runs on every protobuf request
 * the collector receives, so it must cost little next to the parse. Nesting
 * past MAX_DEPTH is not looked into, so the C stack stays small.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MAX_DEPTH 100
#define VARINT 0
#define FIXED64 1
#define LENGTH 2
#define FIXED32 5
#define PACKED_FIXED64 8
#define PACKED_VARINT 9
#define TEXT (-1)
#define TRACE_ID (-16)
#define SPAN_ID (-8)
#define UNEXPECTED_EOF (-1)
#define INTEGER_OVERFLOW (-2)
#define NEGATIVE_LENGTH (-3)
#define WRONG_WIRE_TYPE (-4)
#define ILLEGAL_TAG (-5)
#define END_GROUP_FOR_NON_GROUP (-6)
#define ILLEGAL_WIRE_TYPE (-7)
#define UNEXPECTED_END_OF_GROUP (-9)
#define SEEN_DEPRECATED 1
#define DEPRECATED_SCOPES 1000

typedef struct {
    int32_t number;
    int wire;   /* VARINT, FIXED64, LENGTH, FIXED32, PACKED_FIXED64 or PACKED_VARINT */
    int action; /* the kind of the message a LENGTH field holds, or TEXT, TRACE_ID, SPAN_ID */
} Field;

typedef struct {
    const Field *fields;
    int count;
} Kind;

#define KIND(fields) {fields, (int)(sizeof(fields) / sizeof(fields[0]))}

/* The same tables as otlp_ids.KINDS (kinds by index). */
static const Field export_trace_service_request[] = {{1, LENGTH, 3}}; /* 0 */
static const Field export_logs_service_request[] = {{1, LENGTH, 4}}; /* 1 */
static const Field export_metrics_service_request[] = {{1, LENGTH, 5}}; /* 2 */
static const Field resource_spans[] = { /* 3 */
    {1, LENGTH, 27}, {2, LENGTH, 6}, {3, LENGTH, TEXT}, {1000, LENGTH, 6},
};
static const Field resource_logs[] = { /* 4 */
    {1, LENGTH, 27}, {2, LENGTH, 7}, {3, LENGTH, TEXT}, {1000, LENGTH, 7},
};
static const Field resource_metrics[] = { /* 5 */
    {1, LENGTH, 27}, {2, LENGTH, 8}, {3, LENGTH, TEXT}, {1000, LENGTH, 8},
};
static const Field scope_spans[] = {{1, LENGTH, 28}, {2, LENGTH, 9}, {3, LENGTH, TEXT}}; /* 6 */
static const Field scope_logs[] = {{1, LENGTH, 28}, {2, LENGTH, 13}, {3, LENGTH, TEXT}}; /* 7 */
static const Field scope_metrics[] = {{1, LENGTH, 28}, {2, LENGTH, 14}, {3, LENGTH, TEXT}}; /* 8 */
static const Field span[] = { /* 9 */
    {1, LENGTH, TRACE_ID}, {2, LENGTH, SPAN_ID}, {3, LENGTH, TEXT}, {4, LENGTH, SPAN_ID},
    {5, LENGTH, TEXT}, {6, VARINT, 0}, {7, FIXED64, 0}, {8, FIXED64, 0}, {9, LENGTH, 29},
    {10, VARINT, 0}, {11, LENGTH, 10}, {12, VARINT, 0}, {13, LENGTH, 11}, {14, VARINT, 0},
    {15, LENGTH, 12}, {16, FIXED32, 0},
};
static const Field span_event[] = { /* 10 */
    {1, FIXED64, 0}, {2, LENGTH, TEXT}, {3, LENGTH, 29}, {4, VARINT, 0},
};
static const Field span_link[] = { /* 11 */
    {1, LENGTH, TRACE_ID}, {2, LENGTH, SPAN_ID}, {3, LENGTH, TEXT}, {4, LENGTH, 29},
    {5, VARINT, 0}, {6, FIXED32, 0},
};
static const Field status[] = {{2, LENGTH, TEXT}, {3, VARINT, 0}}; /* 12 */
static const Field log_record[] = { /* 13 */
    {1, FIXED64, 0}, {2, VARINT, 0}, {3, LENGTH, TEXT}, {5, LENGTH, 30}, {6, LENGTH, 29},
    {7, VARINT, 0}, {8, FIXED32, 0}, {9, LENGTH, TRACE_ID}, {10, LENGTH, SPAN_ID},
    {11, FIXED64, 0},
};
static const Field metric[] = { /* 14 */
    {1, LENGTH, TEXT}, {2, LENGTH, TEXT}, {3, LENGTH, TEXT}, {5, LENGTH, 15}, {7, LENGTH, 16},
    {9, LENGTH, 17}, {10, LENGTH, 18}, {11, LENGTH, 19}, {12, LENGTH, 29},
};
static const Field gauge[] = {{1, LENGTH, 20}}; /* 15 */
static const Field sum[] = {{1, LENGTH, 20}, {2, VARINT, 0}, {3, VARINT, 0}}; /* 16 */
static const Field histogram[] = {{1, LENGTH, 21}, {2, VARINT, 0}}; /* 17 */
static const Field exponential_histogram[] = {{1, LENGTH, 22}, {2, VARINT, 0}}; /* 18 */
static const Field summary[] = {{1, LENGTH, 24}}; /* 19 */
static const Field number_data_point[] = { /* 20 */
    {2, FIXED64, 0}, {3, FIXED64, 0}, {4, FIXED64, 0}, {5, LENGTH, 26}, {6, FIXED64, 0},
    {7, LENGTH, 29}, {8, VARINT, 0},
};
static const Field histogram_data_point[] = { /* 21 */
    {2, FIXED64, 0}, {3, FIXED64, 0}, {4, FIXED64, 0}, {5, FIXED64, 0}, {6, PACKED_FIXED64, 0},
    {7, PACKED_FIXED64, 0}, {8, LENGTH, 26}, {9, LENGTH, 29}, {10, VARINT, 0}, {11, FIXED64, 0},
    {12, FIXED64, 0},
};
static const Field exponential_histogram_data_point[] = { /* 22 */
    {1, LENGTH, 29}, {2, FIXED64, 0}, {3, FIXED64, 0}, {4, FIXED64, 0}, {5, FIXED64, 0},
    {6, VARINT, 0}, {7, FIXED64, 0}, {8, LENGTH, 23}, {9, LENGTH, 23}, {10, VARINT, 0},
    {11, LENGTH, 26}, {12, FIXED64, 0}, {13, FIXED64, 0}, {14, FIXED64, 0},
};
static const Field buckets[] = {{1, VARINT, 0}, {2, PACKED_VARINT, 0}}; /* 23 */
static const Field summary_data_point[] = { /* 24 */
    {2, FIXED64, 0}, {3, FIXED64, 0}, {4, FIXED64, 0}, {5, FIXED64, 0}, {6, LENGTH, 25},
    {7, LENGTH, 29}, {8, VARINT, 0},
};
static const Field value_at_quantile[] = {{1, FIXED64, 0}, {2, FIXED64, 0}}; /* 25 */
static const Field exemplar[] = { /* 26 */
    {2, FIXED64, 0}, {3, FIXED64, 0}, {4, LENGTH, SPAN_ID}, {5, LENGTH, TRACE_ID}, {6, FIXED64, 0},
    {7, LENGTH, 29},
};
static const Field resource[] = {{1, LENGTH, 29}, {2, VARINT, 0}}; /* 27 */
static const Field instrumentation_scope[] = { /* 28 */
    {1, LENGTH, TEXT}, {2, LENGTH, TEXT}, {3, LENGTH, 29}, {4, VARINT, 0},
};
static const Field key_value[] = {{1, LENGTH, TEXT}, {2, LENGTH, 30}}; /* 29 */
static const Field any_value[] = { /* 30 */
    {1, LENGTH, TEXT}, {2, VARINT, 0}, {3, VARINT, 0}, {4, FIXED64, 0}, {5, LENGTH, 31},
    {6, LENGTH, 32}, {7, LENGTH, TEXT},
};
static const Field array_value[] = {{1, LENGTH, 30}}; /* 31 */
static const Field key_value_list[] = {{1, LENGTH, 29}}; /* 32 */
static const Kind kinds[] = {
    KIND(export_trace_service_request), KIND(export_logs_service_request),
    KIND(export_metrics_service_request), KIND(resource_spans), KIND(resource_logs),
    KIND(resource_metrics), KIND(scope_spans), KIND(scope_logs), KIND(scope_metrics), KIND(span),
    KIND(span_event), KIND(span_link), KIND(status), KIND(log_record), KIND(metric), KIND(gauge), KIND(sum),
    KIND(histogram), KIND(exponential_histogram), KIND(summary), KIND(number_data_point),
    KIND(histogram_data_point), KIND(exponential_histogram_data_point), KIND(buckets),
    KIND(summary_data_point), KIND(value_at_quantile), KIND(exemplar), KIND(resource),
    KIND(instrumentation_scope), KIND(key_value), KIND(any_value), KIND(array_value),
    KIND(key_value_list),
};

/* What a walk found: the kind, the field number and the detail of a problem. */
typedef struct {
    int kind;
    int64_t number;
    uint64_t detail;
} Found;

/* The varint at *at (before end), modulo 2**64, into *value, as gogo reads
 * it: 0, or INTEGER_OVERFLOW or UNEXPECTED_EOF when it does not read. */
static inline int
read_varint(const unsigned char **at, const unsigned char *end, uint64_t *value)
{
    if (*at < end && **at < 0x80) { /* most tags and lengths are one byte */
        *value = *(*at)++;
        return 0;
    }
    uint64_t result = 0;
    for (int shift = 0;; shift += 7) {
        if (shift >= 64)
            return INTEGER_OVERFLOW;
        if (*at >= end)
            return UNEXPECTED_EOF;
        unsigned char byte = *(*at)++;
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *value = result;
            return 0;
        }
    }
}

/* The end of the unknown field at at (gogo's skip*) into *next, or the code
 * of why it does not read. Offsets are counted from at, as Go's are. */
static int
skip(const unsigned char *at, const unsigned char *end, const unsigned char **next, Found *found)
{
    uint64_t size = (uint64_t)(end - at), i = 0, value;
    int depth = 0, code;
    while (i < size) {
        const unsigned char *cursor = at + i;
        if ((code = read_varint(&cursor, end, &value)) != 0)
            return code;
        i = (uint64_t)(cursor - at);
        int wire = (int)(value & 7);
        switch (wire) {
        case 0:
            if ((code = read_varint(&cursor, end, &value)) != 0)
                return code;
            i = (uint64_t)(cursor - at);
            break;
        case 1:
            i += 8;
            break;
        case 2:
            if ((code = read_varint(&cursor, end, &value)) != 0)
                return code;
            i = (uint64_t)(cursor - at);
            if (value > (uint64_t)INT64_MAX || i + value > (uint64_t)INT64_MAX)
                return NEGATIVE_LENGTH;
            i += value;
            break;
        case 3:
            depth++;
            break;
        case 4:
            if (depth == 0)
                return UNEXPECTED_END_OF_GROUP;
            depth--;
            break;
        case 5:
            i += 4;
            break;
        default:
            found->detail = (uint64_t)wire;
            return ILLEGAL_WIRE_TYPE;
        }
        if (depth == 0) {
            if (i > size)
                return UNEXPECTED_EOF;
            *next = at + i;
            return 0;
        }
    }
    return UNEXPECTED_EOF;
}

/* Field numbers up to this are found by index (see field_of). */
#define INDEXED 17
#define KIND_COUNT ((int)(sizeof(kinds) / sizeof(kinds[0])))

/* Per kind, its fields by number (up to INDEXED), or NULL. */
static const Field *indexed[KIND_COUNT][INDEXED];

static void
index_fields(void)
{
    for (int k = 0; k < KIND_COUNT; k++)
        for (int i = 0; i < kinds[k].count; i++)
            if (kinds[k].fields[i].number < INDEXED)
                indexed[k][kinds[k].fields[i].number] = &kinds[k].fields[i];
}

static inline const Field *
field_of(int kind, int32_t number)
{
    if (number < INDEXED)
        return indexed[kind][number];
    const Kind *fields = &kinds[kind];
    for (int i = 0; i < fields->count; i++)
        if (fields->fields[i].number == number)
            return &fields->fields[i];
    return NULL;
}

/* SEEN_DEPRECATED or 0 when the message of kind at [at, end) reads as gogo
 * reads it (SEEN_DEPRECATED: some resource in it has a field 1000), else the
 * code of the first problem, noted in *found. */
static int
walk(int kind, const unsigned char *at, const unsigned char *end, int depth, Found *found)
{
    const unsigned char *origin = at;
    int seen = 0, code;
    while (at < end) {
        const unsigned char *start = at;
        uint64_t tag, value;
        if ((code = read_varint(&at, end, &tag)) != 0)
            return code;
        int wire = (int)(tag & 7);
        int32_t number = (int32_t)(uint32_t)(tag >> 3); /* Go's int32(wire >> 3) */
        if (wire == 4) {
            found->kind = kind;
            return END_GROUP_FOR_NON_GROUP;
        }
        if (number <= 0) {
            found->kind = kind;
            found->number = number;
            found->detail = tag;
            return ILLEGAL_TAG;
        }
        if (number == DEPRECATED_SCOPES && kind >= 3 && kind <= 5)
            seen = SEEN_DEPRECATED;
        const Field *field = field_of(kind, number);
        if (field == NULL) {
            if ((code = skip(start, end, &at, found)) != 0)
                return code;
            continue;
        }
        int accepted = wire == field->wire || (field->wire == PACKED_FIXED64 && (wire == 1 || wire == 2))
                       || (field->wire == PACKED_VARINT && (wire == 0 || wire == 2));
        if (!accepted) {
            found->kind = kind;
            found->number = number;
            found->detail = (uint64_t)wire;
            return WRONG_WIRE_TYPE;
        }
        if (wire == 0) {
            if ((code = read_varint(&at, end, &value)) != 0)
                return code;
            continue;
        }
        if (wire == 1 || wire == 5) {
            if (end - at < (wire == 1 ? 8 : 4))
                return UNEXPECTED_EOF;
            at += wire == 1 ? 8 : 4;
            continue;
        }
        if ((code = read_varint(&at, end, &value)) != 0)
            return code;
        if (value > (uint64_t)INT64_MAX || (uint64_t)(at - origin) + value > (uint64_t)INT64_MAX)
            return NEGATIVE_LENGTH;
        if (value > (uint64_t)(end - at))
            return UNEXPECTED_EOF;
        const unsigned char *post = at + value;
        if (field->wire == PACKED_FIXED64) {
            /* gogo reads whole numbers while before the list's end, each
             * bounded only by the message's end. */
            while (at < post) {
                if (end - at < 8)
                    return UNEXPECTED_EOF;
                at += 8;
            }
            continue;
        }
        if (field->wire == PACKED_VARINT) {
            while (at < post)
                if ((code = read_varint(&at, end, &value)) != 0)
                    return code;
            continue;
        }
        if (field->action >= 0) {
            if (depth < MAX_DEPTH) {
                code = walk(field->action, at, post, depth + 1, found);
                if (code < 0)
                    return code;
                seen |= code;
            }
        } else if (field->action != TEXT && value != 0 && value != (uint64_t)-field->action) {
            return field->action;
        }
        at = post;
    }
    return seen;
}

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyLong_Check(args[0]) || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "scan takes (kind: int, wire: bytes)");
        return NULL;
    }
    long kind = PyLong_AsLong(args[0]);
    if (kind < 0 || kind >= (long)(sizeof(kinds) / sizeof(kinds[0]))) {
        PyErr_SetString(PyExc_ValueError, "no such kind");
        return NULL;
    }
    const unsigned char *wire = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    Found found = {0, 0, 0};
    int code = walk((int)kind, wire, wire + size, 0, &found);
    return Py_BuildValue("(iiLK)", code, found.kind, (long long)found.number,
                         (unsigned long long)found.detail);
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(kind, wire) -> (code, kind, number, detail): otlp_ids.walk's answer."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice.telemetry._ids",
    .m_doc = "The check of sluice.telemetry.otlp_ids in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__ids(void)
{
    index_fields();
    return PyModule_Create(&module_def);
}
