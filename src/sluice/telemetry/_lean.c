/*
 * Reading the fields policies scan from a batch of lean log records (each
 * record one `bytes` object of LogRecord wire bytes), in one call per batch.
 *
 * This is sluice.telemetry.otlp_lean.RecordReader's reading, done in C for
 * records in the layout SDKs write: the walk over the record's fields, the
 * body's string, and which attributes a policy reads. What a value hits is
 * still answered by the scanners (Python callables, memoized): only values
 * some policy reads cross into Python (bodies not even those, when their
 * field has a matcher: see body_at), and an attribute's answer is
 * remembered here, by its wire bytes, so that a value seen before costs a
 * hash and a compare. A record outside that layout (a field
 * written twice, a body that is not a plain string, an attribute not written
 * key first) gets None, and the caller reads it the usual way; so does a
 * record whose scan raised (the usual way raises it again, where the engine
 * counts it).
 *
 * attribute() reads one attribute's typed value from a record the same way
 * (sample keys, typed checks), and answers NotImplemented where the usual
 * reading must answer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_found.h"
#include "_memo.h"
#include "_keys.h"
#include "../policy/_hsnative.h"

enum {
    SEVERITY_TEXT = 3,
    BODY = 5,
    ATTRIBUTES = 6,
    TRACE_ID = 9,
    SPAN_ID = 10,
    EVENT_NAME = 12,
};

typedef struct {
    PyObject_HEAD
    unsigned char tags[128];
    PyObject *body;     /* callable(bytes) -> tuple, or NULL */
    PyObject *body_matcher;  /* answers an ASCII body as `body` does, or NULL */
    const ScanApi *body_api; /* how to scan with it */
    PyObject *severity; /* callable(bytes) -> tuple, or NULL */
    PyObject *event;    /* callable(bytes) -> tuple, or NULL */
    PyObject *keys;     /* tuple of bytes: the attribute keys read */
    KeyTable key_table; /* their indexes by their bytes */
    PyObject *attribute; /* callable(kv bytes) -> tuple, or NULL */
    Memo memo;          /* attribute kv bytes -> what `attribute` answered */
    Joins joins;        /* records' hits joined lately (_found.h) */
} Reader;

static void
Reader_dealloc(Reader *self)
{
    Py_XDECREF(self->body);
    Py_XDECREF(self->body_matcher);
    Py_XDECREF(self->severity);
    Py_XDECREF(self->event);
    Py_XDECREF(self->keys);
    key_table_free(&self->key_table);
    Py_XDECREF(self->attribute);
    memo_free(&self->memo);
    joins_free(&self->joins);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
optional_callable(PyObject *value)
{
    if (value == Py_None)
        return NULL;
    Py_INCREF(value);
    return value;
}

static int
Reader_init(Reader *self, PyObject *args, PyObject *kwargs)
{
    Py_buffer tags;
    PyObject *body, *severity, *event, *keys, *attribute, *body_matcher = Py_None;
    static char *names[] = {"tags", "body",      "severity_text", "event_name",
                            "keys", "attribute", "body_matcher",  NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*OOOO!O|O", names, &tags, &body, &severity,
                                     &event, &PyTuple_Type, &keys, &attribute, &body_matcher))
        return -1;
    const ScanApi *body_api;
    if (scan_api_matcher(body_matcher, &body_api) < 0) {
        PyBuffer_Release(&tags);
        return -1;
    }
    if (body_api != NULL && body == Py_None) {
        PyBuffer_Release(&tags);
        PyErr_SetString(PyExc_TypeError, "Reader: a body matcher without a body scan");
        return -1;
    }
    if (tags.len != 128) {
        PyBuffer_Release(&tags);
        PyErr_SetString(PyExc_ValueError, "tags must be 128 bytes");
        return -1;
    }
    memcpy(self->tags, tags.buf, 128);
    PyBuffer_Release(&tags);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keys); i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(keys, i))) {
            PyErr_SetString(PyExc_TypeError, "keys must be bytes");
            return -1;
        }
    }
    if (key_table_init(&self->key_table, PyTuple_GET_SIZE(keys)) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(keys); k++) {
        PyObject *key = PyTuple_GET_ITEM(keys, k);
        key_table_add(&self->key_table, k, 0, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
    }
    Py_XSETREF(self->body, optional_callable(body));
    Py_XSETREF(self->body_matcher, body_api == NULL ? NULL : Py_NewRef(body_matcher));
    self->body_api = body_api;
    Py_XSETREF(self->severity, optional_callable(severity));
    Py_XSETREF(self->event, optional_callable(event));
    Py_INCREF(keys);
    Py_XSETREF(self->keys, keys);
    Py_XSETREF(self->attribute, optional_callable(attribute));
    memo_clear(&self->memo); /* answers of the scan it had */
    joins_clear(&self->joins);
    return 0;
}

/* A varint of at most 5 bytes at *at (before end); -1 when there is none. */
static int64_t
read_varint(const unsigned char *data, Py_ssize_t *at, Py_ssize_t end)
{
    int64_t value = 0;
    for (int shift = 0; shift < 35 && *at < end; shift += 7) {
        unsigned char byte = data[(*at)++];
        value |= (int64_t)(byte & 0x7F) << shift;
        if (byte < 0x80)
            return value;
    }
    return -1;
}

typedef struct {
    Py_ssize_t start, end;
} Span;

/* Whether data[:size] is ASCII (so UTF-8 the body scan takes as it is). */
static int
ascii(const unsigned char *data, Py_ssize_t size)
{
    uint64_t seen = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        seen |= word;
    }
    for (; i < size; i++)
        seen |= data[i];
    return (seen & 0x8080808080808080ULL) == 0;
}

/* Adds to `f` what scan(raw[span]) finds (nothing for an absent or empty
 * field). */
static int
scan_span(Found *f, PyObject *scan, const unsigned char *data, Span span)
{
    if (scan == NULL || span.end <= span.start)
        return 0;
    PyObject *value = PyBytes_FromStringAndSize((const char *)data + span.start,
                                                span.end - span.start);
    if (value == NULL)
        return -1;
    PyObject *found = PyObject_CallOneArg(scan, value);
    Py_DECREF(value);
    return found == NULL ? -1 : found_add(f, found);
}

/* Adds to `f` what the attribute at data[kv] hits: its remembered answer, or
 * the attribute scan's (then remembered). */
static int
scan_attribute(Reader *self, Found *f, const unsigned char *data, Span kv)
{
    const unsigned char *at = data + kv.start;
    Py_ssize_t size = kv.end - kv.start;
    uint64_t hash = memo_hash(0, at, size);
    PyObject *found = memo_get(&self->memo, hash, 0, at, size);
    if (found != NULL) {
        Py_INCREF(found);
        return found_add(f, found);
    }
    PyObject *value = PyBytes_FromStringAndSize((const char *)at, size);
    if (value == NULL)
        return -1;
    found = PyObject_CallOneArg(self->attribute, value);
    Py_DECREF(value);
    if (found == NULL)
        return -1;
    if (PyTuple_CheckExact(found) && memo_put(&self->memo, hash, 0, at, size, found) < 0) {
        Py_DECREF(found);
        return -1;
    }
    return found_add(f, found);
}

/* Whether the KeyValue at `kv` is written as otlp_raw.split_kv reads it: key
 * field (under 128 bytes) then value field (under 16 KiB), each once. */
static int
sdk_layout(const unsigned char *data, Span kv)
{
    Py_ssize_t size = kv.end - kv.start;
    const unsigned char *at = data + kv.start;
    if (size < 2 || at[0] != 0x0A || at[1] > 0x7F)
        return 0;
    Py_ssize_t end = 2 + at[1];
    if (end == size)
        return 1;
    if (end + 2 > size || at[end] != 0x12)
        return 0;
    Py_ssize_t length = at[end + 1], start = end + 2;
    if (length > 0x7F) {
        if (start >= size || at[start] > 0x7F)
            return 0;
        length = (length & 0x7F) | (Py_ssize_t)at[start] << 7;
        start++;
    }
    return start + length == size;
}

#define MAX_ATTRIBUTES 256

/* Where a record's fields lie, as locate() finds them. */
typedef struct {
    Span body, severity, event;
    Span attributes[MAX_ATTRIBUTES];
    int attribute_count;
} Walk;

/* What walk_record() notes besides the single fields. */
enum {
    WALK_ATTRIBUTES = 1, /* the attributes */
    WALK_TO_BODY = 2,    /* nothing: it stops at the body (0 when it has one) */
};

/* Walk a record's fields as otlp_lean.locate() does, noting what `how` asks
 * for: 0, or -1 when the record is not in that layout (a tag outside `tags`,
 * a field written twice, a truncated field; or more than MAX_ATTRIBUTES
 * attributes). A record in that layout writes its body once, so the body
 * walked to is the body of the whole walk, when that walk succeeds. */
static int
walk_record(const unsigned char *data, Py_ssize_t size, const unsigned char *tags, int how,
            Walk *walk)
{
    walk->body = walk->severity = walk->event = (Span){-1, -1};
    walk->attribute_count = 0;
    uint32_t seen = 0;
    Py_ssize_t i = 0;
    while (i < size) {
        unsigned char tag = data[i];
        if (tag > 0x7F || !tags[tag])
            return -1;
        int number = tag >> 3, wire = tag & 7;
        i++;
        if (wire == 2) {
            int64_t length = read_varint(data, &i, size);
            if (length < 0 || length > size - i)
                return -1;
            Span span = {i, i + (Py_ssize_t)length};
            i = span.end;
            if (number == ATTRIBUTES) {
                if (how & WALK_ATTRIBUTES) {
                    if (walk->attribute_count == MAX_ATTRIBUTES)
                        return -1;
                    walk->attributes[walk->attribute_count++] = span;
                }
                continue;
            }
            if (seen & (1u << number)) /* written twice: protobuf merges */
                return -1;
            seen |= 1u << number;
            if (number == BODY) {
                walk->body = span;
                if (how & WALK_TO_BODY)
                    return 0;
            } else if (number == SEVERITY_TEXT) {
                walk->severity = span;
            } else if (number == EVENT_NAME) {
                walk->event = span;
            }
        } else if (wire == 0) {
            Py_ssize_t stop = i + 10 < size ? i + 10 : size;
            while (i < stop && data[i] > 0x7F)
                i++;
            if (i == stop)
                return -1;
            i++;
        } else if (wire == 1) {
            i += 8;
        } else {
            i += 4;
        }
    }
    return i == size ? 0 : -1;
}

/* The string a record's body holds into *text: 0, or -1 when the body's
 * AnyValue is not a string_value alone (read the usual way). */
static int
body_text(const unsigned char *data, Span body, Span *text)
{
    Py_ssize_t at = body.start;
    if (body.end - at < 2 || data[at] != 0x0A)
        return -1;
    at++;
    int64_t length = read_varint(data, &at, body.end);
    if (length < 0 || at + length != body.end)
        return -1;
    *text = (Span){at, body.end};
    return 0;
}

/* Where the body scanned ahead lies (see Batch in _found.h): in the record's
 * bytes, the record walked up to its body. An empty body is not scanned (nor
 * is it by the record's read); one that is not an ASCII string_value is left
 * to its record's read. */
static int
body_at(void *reader, PyObject *record, Text *text, PyObject **holder)
{
    Reader *self = reader;
    if (!PyBytes_Check(record))
        return 0;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(record);
    Walk walk;
    Span body;
    if (walk_record(data, PyBytes_GET_SIZE(record), self->tags, WALK_TO_BODY, &walk) < 0 ||
        walk.body.start < 0 || body_text(data, walk.body, &body) < 0 ||
        body.end == body.start || !ascii(data + body.start, body.end - body.start))
        return 0;
    *text = (Text){(const char *)data + body.start, body.end - body.start};
    *holder = Py_NewRef(record);
    return 1;
}

/* `prefix` and the hits of the batch's record at `position`, a new
 * reference; Py_None (new) when the record is not in the layout read here;
 * NULL with an exception set when a scan raised. */
static PyObject *
read_record(void *context, PyObject *record, Py_ssize_t position, PyObject *prefix)
{
    Batch *batch = context;
    Reader *self = batch->reader;
    if (!PyBytes_Check(record))
        Py_RETURN_NONE;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(record);
    Py_ssize_t size = PyBytes_GET_SIZE(record);
    int want_attributes = self->attribute != NULL && PyTuple_GET_SIZE(self->keys) > 0;
    Walk walk;
    if (walk_record(data, size, self->tags, want_attributes ? WALK_ATTRIBUTES : 0, &walk) < 0)
        Py_RETURN_NONE;
    Span body = walk.body;

    Found f;
    found_start(&f, prefix);
    PyObject *ahead = batch_take(batch, position);
    if (ahead != NULL) {
        if (found_add(&f, ahead) < 0)
            goto failed;
    } else if (self->body != NULL && body.start >= 0) {
        Span text;
        if (body_text(data, body, &text) < 0)
            goto usual;
        if (scan_span(&f, self->body, data, text) < 0)
            goto failed;
    }
    if (scan_span(&f, self->severity, data, walk.severity) < 0 ||
        scan_span(&f, self->event, data, walk.event) < 0)
        goto failed;
    if (walk.attribute_count) {
        Py_ssize_t met[MAX_ATTRIBUTES]; /* keys met: only a key's first entry counts */
        int met_count = 0;
        for (int a = 0; a < walk.attribute_count; a++) {
            Span kv = walk.attributes[a];
            if (!sdk_layout(data, kv))
                goto usual;
            Py_ssize_t k = key_table_find(&self->key_table, 0, data + kv.start + 2,
                                          data[kv.start + 1]);
            if (k < 0)
                continue;
            int m = 0;
            while (m < met_count && met[m] != k)
                m++;
            if (m < met_count)
                continue;
            met[met_count++] = k;
            if (scan_attribute(self, &f, data, kv) < 0)
                goto failed;
        }
    }
    return found_join(&f, &self->joins);
usual:
    found_clear(&f);
    Py_RETURN_NONE;
failed:
    found_clear(&f);
    return NULL;
}

/* read(records, prefix=()) -> list: per record `prefix` and its hits (a
 * tuple), or None for a record to read the usual way. */
static PyObject *
Reader_read(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (self->keys == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Reader was not initialized");
        return NULL;
    }
    Batch batch = {self, body_at, self->body_api, self->body_matcher, NULL, NULL, 0};
    BatchRead how = {&batch, batch_ahead, read_record};
    PyObject *out = read_each(&how, args, nargs);
    batch_free(&batch);
    return out;
}

/* A varint of up to 10 bytes at *at (before end) into *value; 0, or -1
 * when there is none. */
static int
read_varint64(const unsigned char *data, Py_ssize_t *at, Py_ssize_t end, uint64_t *value)
{
    uint64_t result = 0;
    for (int shift = 0; shift < 70 && *at < end; shift += 7) {
        unsigned char byte = data[(*at)++];
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *value = result;
            return 0;
        }
    }
    return -1;
}

enum {
    STRING_VALUE = 1,
    BOOL_VALUE = 2,
    INT_VALUE = 3,
    DOUBLE_VALUE = 4,
    ARRAY_VALUE = 5,
    KVLIST_VALUE = 6,
    BYTES_VALUE = 7,
};

/* The typed value of the AnyValue at data[span] (str, bool, int, float or
 * bytes; the last member written wins, as protobuf reads a oneof), a new
 * reference; Py_NotImplemented (new) for anything else: no member, an array
 * or kvlist, an unknown field, a wrong wire type, a string that is not
 * UTF-8. */
static PyObject *
any_value(const unsigned char *data, Span span)
{
    int kind = 0;
    Span bytes = {0, 0};
    uint64_t number = 0;
    Py_ssize_t i = span.start;
    while (i < span.end) {
        unsigned char tag = data[i++];
        int field = tag >> 3, wire = tag & 7;
        if (tag > 0x7F)
            Py_RETURN_NOTIMPLEMENTED;
        if (field == STRING_VALUE || field == BYTES_VALUE || field == ARRAY_VALUE ||
            field == KVLIST_VALUE) {
            int64_t length = wire == 2 ? read_varint(data, &i, span.end) : -1;
            if (length < 0 || length > span.end - i)
                Py_RETURN_NOTIMPLEMENTED;
            bytes = (Span){i, i + (Py_ssize_t)length};
            i = bytes.end;
        } else if (field == BOOL_VALUE || field == INT_VALUE) {
            if (wire != 0 || read_varint64(data, &i, span.end, &number) < 0)
                Py_RETURN_NOTIMPLEMENTED;
        } else if (field == DOUBLE_VALUE) {
            if (wire != 1 || span.end - i < 8)
                Py_RETURN_NOTIMPLEMENTED;
            number = 0;
            for (int b = 7; b >= 0; b--) /* little-endian on the wire */
                number = number << 8 | data[i + b];
            i += 8;
        } else {
            Py_RETURN_NOTIMPLEMENTED;
        }
        kind = field;
    }
    switch (kind) {
    case STRING_VALUE: {
        PyObject *text = PyUnicode_DecodeUTF8((const char *)data + bytes.start,
                                              bytes.end - bytes.start, NULL);
        if (text == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
        return text;
    }
    case BYTES_VALUE:
        return PyBytes_FromStringAndSize((const char *)data + bytes.start,
                                         bytes.end - bytes.start);
    case BOOL_VALUE:
        return PyBool_FromLong(number != 0);
    case INT_VALUE:
        return PyLong_FromLongLong((long long)(int64_t)number);
    case DOUBLE_VALUE: {
        double value;
        memcpy(&value, &number, 8);
        return PyFloat_FromDouble(value);
    }
    default:
        Py_RETURN_NOTIMPLEMENTED;
    }
}

/* attribute(record, key, tags) -> the typed value of the record's first
 * attribute `key`; None when it has none; NotImplemented when the answer
 * needs the usual reading (a record outside the layout locate() reads, an
 * attribute before it or the value itself not in the SDK layout, a value
 * that is not a plain str/bool/int/float/bytes). */
static PyObject *
attribute(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[1]) ||
        !PyBytes_Check(args[2]) || PyBytes_GET_SIZE(args[2]) != 128) {
        PyErr_SetString(PyExc_TypeError, "attribute(record: bytes, key: bytes, tags: 128 bytes)");
        return NULL;
    }
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    const char *key = PyBytes_AS_STRING(args[1]);
    Py_ssize_t key_size = PyBytes_GET_SIZE(args[1]);
    const unsigned char *tags = (const unsigned char *)PyBytes_AS_STRING(args[2]);
    Walk walk;
    if (walk_record(data, size, tags, WALK_ATTRIBUTES, &walk) < 0)
        Py_RETURN_NOTIMPLEMENTED;
    Span found = {-1, -1};
    for (int a = 0; a < walk.attribute_count && found.start < 0; a++) {
        Span kv = walk.attributes[a];
        if (!sdk_layout(data, kv))
            Py_RETURN_NOTIMPLEMENTED; /* its key may be ours: read it the usual way */
        if (data[kv.start + 1] == key_size &&
            memcmp(data + kv.start + 2, key, (size_t)key_size) == 0)
            found = kv;
    }
    if (found.start < 0)
        Py_RETURN_NONE;
    /* Key field, then the value field's tag and length (sdk_layout checked). */
    Py_ssize_t at = found.start + 2 + key_size;
    if (at == found.end)
        Py_RETURN_NOTIMPLEMENTED; /* no value: present, untyped */
    at++;
    if (read_varint(data, &at, found.end) < 0)
        Py_RETURN_NOTIMPLEMENTED;
    return any_value(data, (Span){at, found.end});
}

static PyMethodDef module_methods[] = {
    {"attribute", (PyCFunction)(void (*)(void))attribute, METH_FASTCALL,
     "attribute(record, key, tags) -> the typed value of the record's first attribute key, "
     "None without one, NotImplemented to read it the usual way."},
    {NULL},
};

static PyMethodDef Reader_methods[] = {
    {"read", (PyCFunction)(void (*)(void))Reader_read, METH_FASTCALL,
     "read(records, prefix=()) -> list: each record's hits after prefix, or None to read it "
     "the usual way."},
    {NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sluice.telemetry._lean.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reader(tags, body, severity_text, event_name, keys, attribute, body_matcher=None)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reader_init,
    .tp_methods = Reader_methods,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice.telemetry._lean",
    .m_doc = "The scanned fields of lean log records, read in C a batch at a time.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__lean(void)
{
    if (PyType_Ready(&ReaderType) < 0)
        return NULL;
    if (memo_seed_init() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(module, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
