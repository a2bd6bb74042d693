/*
 * Reading the fields policies scan from a scope's OTLP JSON records (decoded
 * dicts), in one call per scope.
 *
 * This is the reading of sluice.telemetry.otlp_json's record reader, done in
 * C: the body, the plain string fields, the getters and multi-valued getters
 * it is given, and the attributes some policy reads (one walk of the list,
 * only a key's first entry counts). What a value hits is still answered by
 * the scanners (Python callables); a scanner that remembers its answers in a
 * dict is looked up there first, without a call; bodies are scanned with
 * their field's matcher in C when it has one (see body_at). The attribute
 * keys read are found in a hash table of their own, and what a key's value
 * hit is remembered here (_memo.h). The small dicts an attribute is made of
 * are walked rather than looked up, and a record is read in steps that ask
 * for memory ahead of its use (see attributes_meet). Nested attribute paths
 * go to a Python function.
 * A record that is not a dict, one with more distinct read keys than
 * MAX_KEYS, or one where a getter or scan raised gets None: the caller reads
 * it the usual way (which raises again, where the engine counts it).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_found.h"
#include "_memo.h"
#include "_keys.h"
#include "../policy/_hsnative.h"

#define MAX_KEYS 64

/* A str is stored at the narrowest width its characters fit (1, 2 or 4
 * bytes), so equal strs have equal bytes: a key is found by its width (the
 * tag) and bytes, and a value's answer is remembered under
 * k * TEXT_KINDS + width, k its key's index. */
#define TEXT_KINDS 8

typedef struct {
    PyObject_HEAD
    PyObject *body;          /* (scan, memo or None), or NULL */
    PyObject *body_matcher;  /* answers an ASCII body as `body` does, or NULL */
    const ScanApi *body_api; /* how to scan with it */
    PyObject *plain;      /* tuple of (key, scan, memo or None) */
    PyObject *getters;    /* tuple of (getter, scan, memo or None) */
    PyObject *multi;      /* tuple of (getter of a list, scan, memo or None) */
    PyObject *attributes; /* str: the record's key of its attribute list; a
                             callable(record) -> list; or NULL */
    PyObject *keys;       /* tuple of str: the attribute keys read */
    PyObject *entries;    /* tuple: each key's (scan, memo or None) or (None, entries) */
    KeyTable key_table;   /* the keys' indexes by their width and bytes */
    Memo memo;            /* (key, value) -> what the key's scan answered */
    Joins joins;          /* records' hits joined lately (_found.h) */
    PyObject *nested;     /* callable(entries, value) -> tuple */
    PyObject *present;    /* what a scan sees of a value with no string */
} Reader;

/* The interned name of a record's body. */
static PyObject *BODY;

/* What `scanner` (scan, memo or None, at `offset` in its tuple) finds in
 * `value` (a new reference): the memo's answer when it has one, else the
 * scan's. */
static PyObject *
answer(PyObject *scanner, Py_ssize_t offset, PyObject *value)
{
    PyObject *memo = PyTuple_GET_ITEM(scanner, offset + 1);
    if (memo != Py_None) {
        PyObject *known = PyDict_GetItemWithError(memo, value); /* borrowed */
        if (known != NULL)
            return Py_NewRef(known);
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_CallOneArg(PyTuple_GET_ITEM(scanner, offset), value);
}

/* Adds to `f` what `scanner` finds in `value` (see answer()). */
static int
scan_value(Found *f, PyObject *scanner, Py_ssize_t offset, PyObject *value)
{
    PyObject *hits = answer(scanner, offset, value);
    return hits == NULL ? -1 : found_add(f, hits);
}

/* `holder[key]` when present (borrowed), NULL when absent or on error. */
static PyObject *
member(PyObject *holder, PyObject *key)
{
    return PyDict_GetItemWithError(holder, key);
}

/* A member name of the small dicts read per attribute, with the equal str
 * last met as a key of one (a strong reference, or NULL). A decoder makes one
 * str per distinct key of a batch, so after a batch's first record its keys
 * are told by their address: no hash, probe or compare of characters. */
typedef struct {
    PyObject *name; /* interned */
    PyObject *met;
} Name;

static Name KEY_NAME, VALUE_NAME, TEXT_NAME;

/* Whether `key` (an exact str) is `n`'s name; when it is, it is remembered. */
static int
name_equals(Name *n, PyObject *key)
{
    if (key == n->met || key == n->name)
        return 1;
    if (PyUnicode_READY(key) < 0) {
        PyErr_Clear(); /* not equal to anything this reader asks for */
        return 0;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(n->name);
    if (PyUnicode_GET_LENGTH(key) != length || PyUnicode_KIND(key) != PyUnicode_1BYTE_KIND ||
        memcmp(PyUnicode_DATA(key), PyUnicode_DATA(n->name), (size_t)length) != 0)
        return 0;
    Py_XSETREF(n->met, Py_NewRef(key));
    return 1;
}

/* At most this many entries are walked by members(); a larger dict is looked
 * up. */
#define WALKED 4

/* The members named `first` and `second` (or NULL) of dict `holder`
 * (borrowed, NULL when absent) into *one and *two: 0, or -1 with an exception
 * set. The dicts an attribute is made of hold a key or two, so they are
 * walked: a dict with a key that is not an exact str, whose equality only a
 * lookup decides, is looked up. */
static int
members(PyObject *holder, Name *first, PyObject **one, Name *second, PyObject **two)
{
    *one = NULL;
    if (second != NULL)
        *two = NULL;
    if (PyDict_GET_SIZE(holder) <= WALKED) {
        Py_ssize_t at = 0;
        PyObject *key, *value;
        while (PyDict_Next(holder, &at, &key, &value)) {
            if (key == first->met) {
                *one = value;
            } else if (second != NULL && key == second->met) {
                *two = value;
            } else if (!PyUnicode_CheckExact(key)) {
                goto look_up;
            } else if (name_equals(first, key)) {
                *one = value;
            } else if (second != NULL && name_equals(second, key)) {
                *two = value;
            }
            /* A dict holds a key once: what a lookup would find is found. */
            if (*one != NULL && (second == NULL || *two != NULL))
                return 0;
        }
        return 0;
    }
look_up:
    *one = member(holder, first->name);
    if (*one == NULL && PyErr_Occurred())
        return -1;
    if (second != NULL) {
        *two = member(holder, second->name);
        if (*two == NULL && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* What a scan sees of an attribute's AnyValue (borrowed): its string when
 * non-empty, else `present` (otlp_json.scan_any). */
static PyObject *
scan_any(Reader *self, PyObject *value)
{
    if (value != NULL && PyDict_Check(value)) {
        PyObject *text;
        if (members(value, &TEXT_NAME, &text, NULL, NULL) < 0)
            return NULL;
        if (text != NULL && PyUnicode_Check(text) && PyUnicode_GET_LENGTH(text) > 0)
            return text;
    }
    return self->present;
}

/* What the body scan sees of `record` (borrowed) into *seen: its body's
 * string when non-empty, `present` for a body with something else, NULL for
 * none or an empty one (otlp_json._body_value); 0, or -1 with an exception
 * set. */
static int
body_seen(Reader *self, PyObject *record, PyObject **seen)
{
    *seen = NULL;
    PyObject *body = member(record, BODY);
    if (body == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (body == Py_None)
        return 0;
    if (PyDict_CheckExact(body)) {
        PyObject *text;
        if (members(body, &TEXT_NAME, &text, NULL, NULL) < 0)
            return -1;
        if (text != NULL && PyUnicode_CheckExact(text)) {
            if (PyUnicode_GET_LENGTH(text) > 0)
                *seen = text;
            return 0;
        }
        if (PyDict_GET_SIZE(body) == 0)
            return 0;
    }
    *seen = self->present;
    return 0;
}

static int
read_body(Reader *self, Found *f, PyObject *record)
{
    PyObject *seen;
    if (body_seen(self, record, &seen) < 0)
        return -1;
    return seen == NULL ? 0 : scan_value(f, self->body, 0, seen);
}

/* Where the body scanned ahead lies (see Batch in _found.h): a str's
 * characters. A body that is not an ASCII str (nothing to scan, another
 * value, a str whose UTF-8 is a new object) is left to its record's read. */
static int
body_at(void *reader, PyObject *record, Text *text, PyObject **holder)
{
    PyObject *seen;
    if (!PyDict_CheckExact(record))
        return 0;
    if (body_seen(reader, record, &seen) < 0)
        return -1;
    if (seen == NULL || !PyUnicode_CheckExact(seen) || !PyUnicode_IS_COMPACT_ASCII(seen))
        return 0;
    *text = (Text){PyUnicode_DATA(seen), PyUnicode_GET_LENGTH(seen)};
    *holder = Py_NewRef(seen);
    return 1;
}

static int
read_getters(Reader *self, Found *f, PyObject *record)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->getters); i++) {
        PyObject *getter = PyTuple_GET_ITEM(self->getters, i);
        PyObject *value = PyObject_CallOneArg(PyTuple_GET_ITEM(getter, 0), record);
        if (value == NULL)
            return -1;
        int result = value == Py_None ? 0 : scan_value(f, getter, 1, value);
        Py_DECREF(value);
        if (result < 0)
            return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->multi); i++) {
        PyObject *getter = PyTuple_GET_ITEM(self->multi, i);
        PyObject *values = PyObject_CallOneArg(PyTuple_GET_ITEM(getter, 0), record);
        if (values == NULL)
            return -1;
        PyObject *iterator = PyObject_GetIter(values);
        Py_DECREF(values);
        if (iterator == NULL)
            return -1;
        PyObject *value;
        while ((value = PyIter_Next(iterator)) != NULL) {
            int result = scan_value(f, getter, 1, value);
            Py_DECREF(value);
            if (result < 0) {
                Py_DECREF(iterator);
                return -1;
            }
        }
        Py_DECREF(iterator);
        if (PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* Adds to `f` what key `k`'s scanner (`entry`) finds in its value's `text`
 * (an exact str): the answer remembered for (k, text), or the scanner's (then
 * remembered). */
static int
scan_text(Reader *self, Found *f, Py_ssize_t k, PyObject *entry, PyObject *text)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text) * kind, tag = k * TEXT_KINDS + kind;
    uint64_t hash = memo_hash(tag, data, size);
    PyObject *hits = memo_get(&self->memo, hash, tag, data, size);
    if (hits != NULL)
        return found_add(f, Py_NewRef(hits));
    Py_INCREF(text); /* `data` is its characters: keep them through the scan */
    hits = answer(entry, 0, text);
    if (hits != NULL && PyTuple_CheckExact(hits) &&
        memo_put(&self->memo, hash, tag, data, size, hits) < 0)
        Py_CLEAR(hits);
    Py_DECREF(text);
    return hits == NULL ? -1 : found_add(f, hits);
}

/* An attribute some policy reads, as met on a record. */
typedef struct {
    Py_ssize_t k;    /* its key's index */
    PyObject *value; /* its AnyValue (borrowed from the record), or NULL */
    PyObject *seen;  /* what its scan sees (borrowed from value), when scanned */
} Met;

/* A record's attributes that some policy reads: only a key's first entry
 * counts. */
typedef struct {
    PyObject *kvs; /* the record's attribute list (a new reference), or NULL */
    int count;
    Met met[MAX_KEYS];
} Attributes;

/* Asks for the memory at `at` ahead of its use (a hint: never faults). */
#define FETCH_AHEAD(at) __builtin_prefetch((const void *)(at))

/*
 * A record's objects are, in a fresh batch, in none of the CPU's caches, and
 * each value read is a chain of them (the attribute's dict, its AnyValue dict,
 * that dict's table, the string). So a record is read in steps: each step
 * asks for the next link of every attribute's chain ahead of its use, and the
 * body is scanned between the steps, while those links arrive. The hits are
 * still added in the order of a record read in one go: body, plain fields,
 * getters, attributes.
 */

/* The attribute list of `record` into `a`, and which of its entries are read,
 * their values asked for; 0, 1 when the record has more distinct read keys
 * than MAX_KEYS (read it the usual way), or -1 with an exception set. */
static int
attributes_meet(Reader *self, Attributes *a, PyObject *record)
{
    a->kvs = NULL;
    a->count = 0;
    if (self->attributes == NULL)
        return 0;
    PyObject *kvs;
    if (PyUnicode_Check(self->attributes)) {
        kvs = Py_XNewRef(member(record, self->attributes));
        if (kvs == NULL && PyErr_Occurred())
            return -1;
    } else {
        kvs = PyObject_CallOneArg(self->attributes, record);
        if (kvs == NULL)
            return -1;
    }
    if (kvs == NULL || !PyList_CheckExact(kvs)) {
        Py_XDECREF(kvs);
        return 0;
    }
    a->kvs = kvs;
    Py_ssize_t size = PyList_GET_SIZE(kvs);
    for (Py_ssize_t i = 0; i < size && i < MAX_KEYS; i++)
        FETCH_AHEAD(PyList_GET_ITEM(kvs, i));
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(kvs); i++) {
        PyObject *kv = PyList_GET_ITEM(kvs, i);
        if (!PyDict_CheckExact(kv))
            continue;
        PyObject *name, *value;
        if (members(kv, &KEY_NAME, &name, &VALUE_NAME, &value) < 0)
            return -1;
        if (name == NULL || !PyUnicode_CheckExact(name))
            continue;
        if (PyUnicode_READY(name) < 0)
            return -1;
        int kind = PyUnicode_KIND(name);
        Py_ssize_t k = key_table_find(&self->key_table, kind, PyUnicode_DATA(name),
                                      PyUnicode_GET_LENGTH(name) * kind);
        if (k < 0)
            continue;
        int m = 0;
        while (m < a->count && a->met[m].k != k)
            m++;
        if (m < a->count)
            continue;
        if (a->count == MAX_KEYS)
            return 1;
        if (value != NULL)
            FETCH_AHEAD(value);
        a->met[a->count++] = (Met){k, value, NULL};
    }
    return 0;
}

/* Asks for the read values' tables. */
static void
attributes_fetch_tables(Attributes *a)
{
    for (int m = 0; m < a->count; m++)
        if (a->met[m].value != NULL && PyDict_CheckExact(a->met[m].value))
            FETCH_AHEAD(((PyDictObject *)a->met[m].value)->ma_keys);
}

/* Finds what each read value's scan sees, and asks for its characters; 0, or
 * -1 with an exception set. */
static int
attributes_fetch_texts(Reader *self, Attributes *a)
{
    for (int m = 0; m < a->count; m++) {
        Met *met = &a->met[m];
        if (PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->entries, met->k), 0) == Py_None)
            continue; /* a nested path: read in Python */
        met->seen = scan_any(self, met->value);
        if (met->seen == NULL)
            return -1;
        FETCH_AHEAD(met->seen);
        FETCH_AHEAD((const char *)met->seen + 64);
    }
    return 0;
}

/* Adds to `f` what the read attributes hit; 0, or -1 with an exception set. */
static int
attributes_scan(Reader *self, Found *f, Attributes *a)
{
    for (int m = 0; m < a->count; m++) {
        Met *met = &a->met[m];
        PyObject *entry = PyTuple_GET_ITEM(self->entries, met->k);
        int result;
        if (met->seen == NULL) {
            PyObject *hits = PyObject_CallFunctionObjArgs(
                self->nested, PyTuple_GET_ITEM(entry, 1), met->value ? met->value : Py_None,
                NULL);
            result = hits == NULL ? -1 : found_add(f, hits);
        } else if (PyUnicode_CheckExact(met->seen)) {
            result = PyUnicode_READY(met->seen) < 0
                         ? -1
                         : scan_text(self, f, met->k, entry, met->seen);
        } else {
            result = scan_value(f, entry, 0, met->seen);
        }
        if (result < 0)
            return -1;
    }
    return 0;
}

/* Adds to `f` what the record's plain fields hit; 0, or -1 with an exception
 * set. */
static int
read_plain(Reader *self, Found *f, PyObject *record)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->plain); i++) {
        PyObject *field = PyTuple_GET_ITEM(self->plain, i);
        PyObject *value = member(record, PyTuple_GET_ITEM(field, 0));
        if (value == NULL) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        if (PyUnicode_CheckExact(value) && PyUnicode_GET_LENGTH(value) > 0 &&
            scan_value(f, field, 1, value) < 0)
            return -1;
    }
    return 0;
}

/* `prefix` and the hits of the batch's record at `position` (a new
 * reference); Py_None (new) to read it the usual way; NULL on an error the
 * caller passes on. */
static PyObject *
read_record(void *context, PyObject *record, Py_ssize_t position, PyObject *prefix)
{
    Batch *batch = context;
    Reader *self = batch->reader;
    if (!PyDict_CheckExact(record))
        Py_RETURN_NONE;
    Found f;
    found_start(&f, prefix);
    Attributes a;
    int met = attributes_meet(self, &a, record);
    if (met > 0) {
        Py_XDECREF(a.kvs);
        found_clear(&f);
        Py_RETURN_NONE;
    }
    if (met < 0)
        goto failed;
    attributes_fetch_tables(&a);
    PyObject *ahead = batch_take(batch, position);
    if (ahead != NULL) {
        if (found_add(&f, ahead) < 0)
            goto failed;
    } else if (self->body != NULL && read_body(self, &f, record) < 0) {
        goto failed;
    }
    if (attributes_fetch_texts(self, &a) < 0 || read_plain(self, &f, record) < 0 ||
        read_getters(self, &f, record) < 0 || attributes_scan(self, &f, &a) < 0)
        goto failed;
    Py_XDECREF(a.kvs);
    return found_join(&f, &self->joins);
failed:
    Py_XDECREF(a.kvs);
    found_clear(&f);
    return NULL;
}

/* read(records, prefix=()) -> list: per record `prefix` and its hits (a
 * tuple), or None for a record to read the usual way. */
static PyObject *
Reader_read(Reader *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (self->plain == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Reader was not initialized");
        return NULL;
    }
    Batch batch = {self, body_at, self->body_api, self->body_matcher, NULL, NULL, 0};
    BatchRead how = {&batch, batch_ahead, read_record};
    PyObject *out = read_each(&how, args, nargs);
    batch_free(&batch);
    return out;
}

/* Whether `item` is a tuple of `size` whose items from `scanner` on are a
 * scanner: (callable, dict or None). */
static int
scanner_valid(PyObject *item, Py_ssize_t size, Py_ssize_t scanner)
{
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != size ||
        !PyCallable_Check(PyTuple_GET_ITEM(item, scanner)))
        return 0;
    PyObject *memo = PyTuple_GET_ITEM(item, scanner + 1);
    return memo == Py_None || PyDict_Check(memo);
}

/* Whether every item of `items` is a scanner_valid() one. */
static int
scanners_valid(PyObject *items, Py_ssize_t size, Py_ssize_t scanner)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
        if (!scanner_valid(PyTuple_GET_ITEM(items, i), size, scanner))
            return 0;
    return 1;
}

static int
Reader_init(Reader *self, PyObject *args, PyObject *kwargs)
{
    PyObject *body, *plain, *getters, *multi, *attributes, *index, *nested, *present;
    PyObject *body_matcher = Py_None;
    static char *names[] = {"body",   "plain",   "getters",      "multi", "attributes", "index",
                            "nested", "present", "body_matcher", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!O!OO!OO|O:Reader", names, &body,
                                     &PyTuple_Type, &plain, &PyTuple_Type, &getters,
                                     &PyTuple_Type, &multi, &attributes, &PyDict_Type, &index,
                                     &nested, &present, &body_matcher))
        return -1;
    const ScanApi *body_api;
    if (scan_api_matcher(body_matcher, &body_api) < 0)
        return -1;
    if (body_api != NULL && body == Py_None) {
        PyErr_SetString(PyExc_TypeError, "Reader: a body matcher without a body scanner");
        return -1;
    }
    int valid = (body == Py_None || scanner_valid(body, 2, 0)) && scanners_valid(plain, 3, 1) &&
                scanners_valid(getters, 3, 1) && scanners_valid(multi, 3, 1) &&
                PyCallable_Check(nested) &&
                (attributes == Py_None || PyUnicode_Check(attributes) ||
                 PyCallable_Check(attributes));
    for (Py_ssize_t i = 0; valid && i < PyTuple_GET_SIZE(plain); i++)
        valid = PyUnicode_Check(PyTuple_GET_ITEM(PyTuple_GET_ITEM(plain, i), 0));
    PyObject *key, *entry;
    Py_ssize_t at = 0;
    while (valid && PyDict_Next(index, &at, &key, &entry)) /* (scan, memo) or (None, entries) */
        valid = PyUnicode_CheckExact(key) && PyUnicode_READY(key) == 0 &&
                PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2 &&
                (PyTuple_GET_ITEM(entry, 0) == Py_None || scanner_valid(entry, 2, 0));
    if (!valid) {
        PyErr_SetString(PyExc_TypeError,
                        "Reader(body, plain, getters, multi, attributes, index, nested, present, "
                        "body_matcher=None): "
                        "a scanner is (callable, dict or None), an index key a str");
        return -1;
    }
    Py_ssize_t count = PyDict_GET_SIZE(index);
    PyObject *keys = PyTuple_New(count), *entries = PyTuple_New(count);
    if (keys == NULL || entries == NULL || key_table_init(&self->key_table, count) < 0) {
        Py_XDECREF(keys);
        Py_XDECREF(entries);
        return -1;
    }
    at = 0;
    for (Py_ssize_t k = 0; PyDict_Next(index, &at, &key, &entry); k++) {
        PyTuple_SET_ITEM(keys, k, Py_NewRef(key));
        PyTuple_SET_ITEM(entries, k, Py_NewRef(entry));
        int kind = PyUnicode_KIND(key);
        key_table_add(&self->key_table, k, kind, PyUnicode_DATA(key),
                      PyUnicode_GET_LENGTH(key) * kind);
    }
    Py_XSETREF(self->keys, keys);
    Py_XSETREF(self->entries, entries);
    memo_clear(&self->memo); /* answers of the scanners it had */
    joins_clear(&self->joins);
    Py_XSETREF(self->body, body == Py_None ? NULL : Py_NewRef(body));
    Py_XSETREF(self->body_matcher, body_api == NULL ? NULL : Py_NewRef(body_matcher));
    self->body_api = body_api;
    Py_XSETREF(self->plain, Py_NewRef(plain));
    Py_XSETREF(self->getters, Py_NewRef(getters));
    Py_XSETREF(self->multi, Py_NewRef(multi));
    Py_XSETREF(self->attributes, attributes == Py_None ? NULL : Py_NewRef(attributes));
    Py_XSETREF(self->nested, Py_NewRef(nested));
    Py_XSETREF(self->present, Py_NewRef(present));
    return 0;
}

static void
Reader_dealloc(Reader *self)
{
    Py_XDECREF(self->body);
    Py_XDECREF(self->body_matcher);
    Py_XDECREF(self->plain);
    Py_XDECREF(self->getters);
    Py_XDECREF(self->multi);
    Py_XDECREF(self->attributes);
    Py_XDECREF(self->keys);
    Py_XDECREF(self->entries);
    key_table_free(&self->key_table);
    memo_free(&self->memo);
    joins_free(&self->joins);
    Py_XDECREF(self->nested);
    Py_XDECREF(self->present);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Reader_methods[] = {
    {"read", (PyCFunction)(void (*)(void))Reader_read, METH_FASTCALL,
     "read(records, prefix=()) -> list: each record's hits after prefix, or None to read it "
     "the usual way."},
    {NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sluice.telemetry._jsonread.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reader(body, plain, getters, multi, attributes, index, nested, present, "
              "body_matcher=None)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reader_init,
    .tp_methods = Reader_methods,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice.telemetry._jsonread",
    .m_doc = "The scanned fields of OTLP JSON records, read in C a scope at a time.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__jsonread(void)
{
    BODY = PyUnicode_InternFromString("body");
    KEY_NAME.name = PyUnicode_InternFromString("key");
    VALUE_NAME.name = PyUnicode_InternFromString("value");
    TEXT_NAME.name = PyUnicode_InternFromString("stringValue");
    if (BODY == NULL || KEY_NAME.name == NULL || VALUE_NAME.name == NULL || TEXT_NAME.name == NULL)
        return NULL;
    if (PyType_Ready(&ReaderType) < 0 || memo_seed_init() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(module, "Reader", (PyObject *)&ReaderType) < 0 ||
        PyModule_AddIntConstant(module, "MAX_KEYS", MAX_KEYS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
