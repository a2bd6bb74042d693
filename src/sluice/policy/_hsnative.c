/*
 * Scanning Hyperscan/Vectorscan block-mode databases without a Python call
 * per match.
 *
 * The `hyperscan` binding calls a Python function for every match and hides
 * the library's symbols, so this module loads a shared libhs (the one the
 * `vectorgrep` wheel ships, same Vectorscan release) with dlopen() at run
 * time: nothing of Hyperscan is needed to build it. A field's databases are
 * scanned in one call that turns each database's match ids into the field's
 * pattern ids in C.
 *
 * The record readers in C scan with a field's Matcher through the C API in
 * _hsnative.h (the SCAN_API capsule), on a value's bytes where they lie.
 *
 * The GIL stays held while scanning: one scratch per matcher is then never
 * used by two threads at once, and the values scanned (log bodies, attribute
 * values) take microseconds. It is released while a database is loaded (a
 * few MB copied and checked, on the thread that swaps policy sets in).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hsnative.h"

typedef struct hs_database hs_database_t;
typedef struct hs_scratch hs_scratch_t;
typedef int hs_error_t;
typedef int (*hs_match_t)(unsigned int id, unsigned long long from, unsigned long long to,
                          unsigned int flags, void *context);

#define HS_SUCCESS 0
#define HS_SCAN_TERMINATED (-3)

static struct {
    void *handle;
    const char *(*version)(void);
    hs_error_t (*deserialize)(const char *bytes, size_t length, hs_database_t **db);
    hs_error_t (*free_database)(hs_database_t *db);
    hs_error_t (*database_size)(const hs_database_t *db, size_t *size);
    hs_error_t (*alloc_scratch)(const hs_database_t *db, hs_scratch_t **scratch);
    hs_error_t (*free_scratch)(hs_scratch_t *scratch);
    hs_error_t (*scan)(const hs_database_t *db, const char *data, unsigned int length,
                       unsigned int flags, hs_scratch_t *scratch, hs_match_t on_match,
                       void *context);
} hs;

static int
require_library(void)
{
    if (hs.handle == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "libhs is not loaded (call load() first)");
        return -1;
    }
    return 0;
}

/* load(path) -> the library's version string. */
static PyObject *
load(PyObject *module, PyObject *arg)
{
    PyObject *encoded;
    if (!PyUnicode_FSConverter(arg, &encoded))
        return NULL;
    if (hs.handle != NULL) {
        Py_DECREF(encoded);
        return PyUnicode_FromString(hs.version());
    }
    void *handle = dlopen(PyBytes_AS_STRING(encoded), RTLD_NOW | RTLD_LOCAL);
    Py_DECREF(encoded);
    if (handle == NULL) {
        PyErr_Format(PyExc_OSError, "cannot load libhs: %s", dlerror());
        return NULL;
    }
    struct {
        const char *name;
        void **slot;
    } wanted[] = {
        {"hs_version", (void **)&hs.version},
        {"hs_deserialize_database", (void **)&hs.deserialize},
        {"hs_free_database", (void **)&hs.free_database},
        {"hs_database_size", (void **)&hs.database_size},
        {"hs_alloc_scratch", (void **)&hs.alloc_scratch},
        {"hs_free_scratch", (void **)&hs.free_scratch},
        {"hs_scan", (void **)&hs.scan},
    };
    for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
        *wanted[i].slot = dlsym(handle, wanted[i].name);
        if (*wanted[i].slot == NULL) {
            PyErr_Format(PyExc_OSError, "libhs has no %s", wanted[i].name);
            dlclose(handle);
            return NULL;
        }
    }
    hs.handle = handle;
    return PyUnicode_FromString(hs.version());
}

/* ---- Database: one deserialized block-mode database ---- */

typedef struct {
    PyObject_HEAD
    hs_database_t *db;
} Database;

static void
Database_dealloc(Database *self)
{
    if (self->db != NULL)
        hs.free_database(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
Database_init(Database *self, PyObject *args, PyObject *kwargs)
{
    Py_buffer blob;
    static char *names[] = {"blob", NULL};
    if (require_library() < 0)
        return -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*", names, &blob))
        return -1;
    hs_database_t *db = NULL;
    hs_error_t err;
    Py_BEGIN_ALLOW_THREADS
    err = hs.deserialize(blob.buf, (size_t)blob.len, &db);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&blob);
    if (err != HS_SUCCESS) {
        PyErr_Format(PyExc_ValueError, "not a database this libhs reads (error %d)", err);
        return -1;
    }
    if (self->db != NULL)
        hs.free_database(self->db);
    self->db = db;
    return 0;
}

static PyObject *
Database_size(Database *self, void *closure)
{
    size_t size = 0;
    if (self->db == NULL || hs.database_size(self->db, &size) != HS_SUCCESS)
        return PyLong_FromLong(0);
    return PyLong_FromSize_t(size);
}

static PyGetSetDef Database_getset[] = {
    {"size", (getter)Database_size, NULL, "Bytes the database holds.", NULL},
    {NULL},
};

static PyTypeObject DatabaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sluice.policy._hsnative.Database",
    .tp_basicsize = sizeof(Database),
    .tp_dealloc = (destructor)Database_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Database(blob): a serialized block-mode database, loaded.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Database_init,
    .tp_getset = Database_getset,
};

/* ---- Matcher: a field's databases and how their ids map to pattern ids ---- */

typedef struct {
    Database *database; /* strong reference */
    Py_ssize_t count;   /* patterns in the database */
    long *first;        /* per local id: the first pattern id, or -1 */
    PyObject **extra;   /* per local id: a tuple of more pattern ids, or NULL */
    long *ends;         /* per local id: how a report is confirmed (shardplan.end_check:
                         * 0 always, L ends at L, -L ends at L = the value's length),
                         * or NULL when every report is a match */
} Shard;

typedef struct {
    PyObject_HEAD
    Shard *shards;
    Py_ssize_t shard_count;
    hs_scratch_t *scratch;
    /* The ids found by the scan in progress (grown as needed). */
    long *found;
    Py_ssize_t found_size;
    Py_ssize_t found_len;
    /* Which (shard, local id) pairs with extra ids matched. */
    Shard *current;
    unsigned long long length; /* of the value being scanned */
    PyObject *pending;
    int failed;
    /* A copy of a value that ends too close to a page boundary (see
     * safe_to_scan), with OVERREAD bytes of slack after it (grown as needed). */
    char *padded;
    Py_ssize_t padded_size;
} Matcher;

static void
Matcher_clear_shards(Matcher *self)
{
    for (Py_ssize_t s = 0; s < self->shard_count; s++) {
        Shard *shard = &self->shards[s];
        if (shard->extra != NULL) {
            for (Py_ssize_t i = 0; i < shard->count; i++)
                Py_XDECREF(shard->extra[i]);
            PyMem_Free(shard->extra);
        }
        PyMem_Free(shard->first);
        PyMem_Free(shard->ends);
        Py_XDECREF(shard->database);
    }
    PyMem_Free(self->shards);
    self->shards = NULL;
    self->shard_count = 0;
}

static void
Matcher_dealloc(Matcher *self)
{
    Matcher_clear_shards(self);
    if (self->scratch != NULL)
        hs.free_scratch(self->scratch);
    PyMem_Free(self->found);
    PyMem_Free(self->padded);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Fill shard->ends from a sequence of `count` ints (see Shard). */
static int
Shard_fill_ends(Shard *shard, PyObject *ends)
{
    PyObject *fast = PySequence_Fast(ends, "a shard's ends are a sequence of ints");
    if (fast == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != shard->count) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "a shard has one end check per pattern");
        return -1;
    }
    shard->ends = PyMem_Calloc(shard->count ? shard->count : 1, sizeof(long));
    if (shard->ends == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t local = 0; local < shard->count; local++) {
        long end = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, local));
        if (end == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        shard->ends[local] = end;
    }
    Py_DECREF(fast);
    return 0;
}

/* Fill `shard` from (database, ids) or (database, ids, ends): ids[local] is a
 * sequence of the pattern ids that local id stands for (maybe none), ends
 * (None or one int per local id) how its reports are confirmed. */
static int
Shard_fill(Shard *shard, PyObject *item)
{
    PyObject *database, *ids;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 2 || PyTuple_GET_SIZE(item) > 3) {
        PyErr_SetString(PyExc_TypeError, "a shard is a (Database, ids[, ends]) tuple");
        return -1;
    }
    database = PyTuple_GET_ITEM(item, 0);
    ids = PyTuple_GET_ITEM(item, 1);
    if (!PyObject_TypeCheck(database, &DatabaseType) || ((Database *)database)->db == NULL) {
        PyErr_SetString(PyExc_TypeError, "a shard's first item is a loaded Database");
        return -1;
    }
    PyObject *fast = PySequence_Fast(ids, "a shard's ids are a sequence");
    if (fast == NULL)
        return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    Py_INCREF(database);
    shard->database = (Database *)database;
    shard->count = count;
    shard->first = PyMem_Calloc(count ? count : 1, sizeof(long));
    if (shard->first == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t local = 0; local < count; local++) {
        PyObject *of = PySequence_Fast(PySequence_Fast_GET_ITEM(fast, local),
                                       "a shard's ids are sequences of ints");
        if (of == NULL) {
            Py_DECREF(fast);
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(of);
        shard->first[local] = -1;
        if (n > 0) {
            long id = PyLong_AsLong(PySequence_Fast_GET_ITEM(of, 0));
            if (id == -1 && PyErr_Occurred()) {
                Py_DECREF(of);
                Py_DECREF(fast);
                return -1;
            }
            shard->first[local] = id;
        }
        if (n > 1) {
            if (shard->extra == NULL) {
                shard->extra = PyMem_Calloc(count, sizeof(PyObject *));
                if (shard->extra == NULL) {
                    Py_DECREF(of);
                    Py_DECREF(fast);
                    PyErr_NoMemory();
                    return -1;
                }
            }
            PyObject *rest = PySequence_GetSlice(of, 1, n);
            shard->extra[local] = rest == NULL ? NULL : PySequence_Tuple(rest);
            Py_XDECREF(rest);
            if (shard->extra[local] == NULL) {
                Py_DECREF(of);
                Py_DECREF(fast);
                return -1;
            }
        }
        Py_DECREF(of);
    }
    Py_DECREF(fast);
    if (PyTuple_GET_SIZE(item) == 3 && PyTuple_GET_ITEM(item, 2) != Py_None)
        return Shard_fill_ends(shard, PyTuple_GET_ITEM(item, 2));
    return 0;
}

static int
Matcher_init(Matcher *self, PyObject *args, PyObject *kwargs)
{
    PyObject *shards;
    static char *names[] = {"shards", NULL};
    if (require_library() < 0)
        return -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", names, &shards))
        return -1;
    PyObject *fast = PySequence_Fast(shards, "shards must be a sequence");
    if (fast == NULL)
        return -1;
    Matcher_clear_shards(self);
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    self->shards = PyMem_Calloc(count ? count : 1, sizeof(Shard));
    if (self->shards == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    self->shard_count = count;
    for (Py_ssize_t s = 0; s < count; s++) {
        if (Shard_fill(&self->shards[s], PySequence_Fast_GET_ITEM(fast, s)) < 0) {
            Py_DECREF(fast);
            return -1;
        }
        /* One scratch grown to fit every database of the field. */
        if (hs.alloc_scratch(self->shards[s].database->db, &self->scratch) != HS_SUCCESS) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_MemoryError, "hs_alloc_scratch failed");
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

static int
Matcher_push(Matcher *self, long id)
{
    if (self->found_len == self->found_size) {
        Py_ssize_t size = self->found_size ? self->found_size * 2 : 64;
        long *grown = PyMem_Realloc(self->found, size * sizeof(long));
        if (grown == NULL)
            return -1;
        self->found = grown;
        self->found_size = size;
    }
    self->found[self->found_len++] = id;
    return 0;
}

static int
on_match(unsigned int local, unsigned long long from, unsigned long long to, unsigned int flags,
         void *context)
{
    Matcher *self = context;
    Shard *shard = self->current;
    if ((Py_ssize_t)local >= shard->count)
        return 0; /* cannot happen with the ids the database was built with */
    if (shard->ends != NULL) {
        long end = shard->ends[local];
        if (end > 0 && to != (unsigned long long)end)
            return 0; /* a start-anchored literal found after the start */
        if (end < 0 && (to != (unsigned long long)-end || to != self->length))
            return 0; /* an exact literal that is not the whole value */
    }
    long id = shard->first[local];
    if (id >= 0 && Matcher_push(self, id) < 0) {
        self->failed = 1;
        return 1;
    }
    if (shard->extra != NULL && shard->extra[local] != NULL) {
        if (self->pending == NULL && (self->pending = PyList_New(0)) == NULL) {
            self->failed = 1;
            return 1;
        }
        if (PyList_Append(self->pending, shard->extra[local]) < 0) {
            self->failed = 1;
            return 1;
        }
    }
    return 0;
}

/* How far past the end of a block hs_scan may read. Vectorscan 5.4.12 (the
 * libhs vectorgrep 1.2.0 ships) loads a whole vector from the block in the
 * tail of shuftiDoubleExecReal (VectorCamp/vectorscan#381, after #325): with
 * AVX-512 up to 63 bytes past the end of a block shorter than 64 bytes. Those
 * bytes are ignored, but a block that ends that close to an unmapped page
 * (the end of a pymalloc arena or of a malloc mmap, with the mapping above it
 * freed) faults: SIGSEGV in avx512vbmi_hs_scan -> nfaExecMcClellan8_B ->
 * run_accel -> shuftiDoubleExecReal<64>. */
#define OVERREAD 64
/* Pages are at least this large: a read that stays inside one of them stays
 * inside one page whatever the real page size. */
#define PAGE_FLOOR 4096

/* Whether hs_scan may read data[:length] and OVERREAD bytes after it: true
 * when those bytes lie in the page of the value's last byte, so mapped. */
static int
safe_to_scan(const char *data, Py_ssize_t length)
{
    uintptr_t end = (uintptr_t)data + (uintptr_t)length;
    uintptr_t last = length > 0 ? end - 1 : end;
    return last / PAGE_FLOOR == (end + OVERREAD - 1) / PAGE_FLOOR;
}

/* The tuple of the pattern ids that hit data[:length] (UTF-8), database by
 * database in match order; NULL with an exception set. */
static PyObject *
matcher_scan(Matcher *self, const char *data, Py_ssize_t length)
{
    if (length > 0xFFFFFFFFLL) {
        PyErr_SetString(PyExc_ValueError, "value too long to scan");
        return NULL;
    }
    if (!safe_to_scan(data, length)) {
        /* About 1 value in 64 (64 of each page's 4096 end positions):
         * scanned from a copy with readable slack after it. */
        if (self->padded_size < length + OVERREAD) {
            char *grown = PyMem_Realloc(self->padded, (size_t)(length + OVERREAD));
            if (grown == NULL) {
                PyErr_NoMemory();
                return NULL;
            }
            self->padded = grown;
            self->padded_size = length + OVERREAD;
        }
        memcpy(self->padded, data, (size_t)length);
        memset(self->padded + length, 0, OVERREAD);
        data = self->padded;
    }
    self->found_len = 0;
    self->length = (unsigned long long)length;
    self->failed = 0;
    self->pending = NULL;
    for (Py_ssize_t s = 0; s < self->shard_count; s++) {
        self->current = &self->shards[s];
        hs_error_t err = hs.scan(self->current->database->db, data, (unsigned int)length, 0,
                                 self->scratch, on_match, self);
        if (self->failed) {
            Py_CLEAR(self->pending);
            if (!PyErr_Occurred())
                PyErr_NoMemory();
            return NULL;
        }
        if (err != HS_SUCCESS && err != HS_SCAN_TERMINATED) {
            Py_CLEAR(self->pending);
            PyErr_Format(PyExc_RuntimeError, "hs_scan failed (error %d)", err);
            return NULL;
        }
    }
    Py_ssize_t total = self->found_len;
    PyObject *pending = self->pending;
    self->pending = NULL;
    if (pending != NULL) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pending); i++)
            total += PyTuple_GET_SIZE(PyList_GET_ITEM(pending, i));
    }
    PyObject *out = PyTuple_New(total);
    if (out == NULL) {
        Py_XDECREF(pending);
        return NULL;
    }
    Py_ssize_t at = 0;
    for (; at < self->found_len; at++) {
        PyObject *id = PyLong_FromLong(self->found[at]);
        if (id == NULL) {
            Py_XDECREF(pending);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, at, id);
    }
    if (pending != NULL) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pending); i++) {
            PyObject *more = PyList_GET_ITEM(pending, i);
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(more); j++) {
                PyObject *id = PyTuple_GET_ITEM(more, j);
                Py_INCREF(id);
                PyTuple_SET_ITEM(out, at++, id);
            }
        }
        Py_DECREF(pending);
    }
    return out;
}

/* scan(data) -> tuple of the pattern ids that hit `data` (UTF-8 bytes). */
static PyObject *
Matcher_scan(Matcher *self, PyObject *arg)
{
    char *data;
    Py_ssize_t length;
    if (PyBytes_AsStringAndSize(arg, &data, &length) < 0)
        return NULL;
    return matcher_scan(self, data, length);
}

static PyMethodDef Matcher_methods[] = {
    {"scan", (PyCFunction)Matcher_scan, METH_O,
     "scan(data: bytes) -> tuple[int, ...]: the pattern ids that hit data."},
    {NULL},
};

static PyTypeObject MatcherType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sluice.policy._hsnative.Matcher",
    .tp_basicsize = sizeof(Matcher),
    .tp_dealloc = (destructor)Matcher_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Matcher(shards): scans a field's databases; shards are (Database, ids) "
              "pairs where ids[local] lists the pattern ids of the database's id `local`.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Matcher_init,
    .tp_methods = Matcher_methods,
};

static PyObject *
api_scan(PyObject *matcher, const char *data, Py_ssize_t length)
{
    return matcher_scan((Matcher *)matcher, data, length);
}

static const ScanApi SCAN_API = {SCAN_API_VERSION, &MatcherType, api_scan};

static PyMethodDef module_methods[] = {
    {"load", load, METH_O, "load(path) -> version: dlopen a libhs shared library."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice.policy._hsnative",
    .m_doc = "Hyperscan block-mode scans without a Python call per match.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__hsnative(void)
{
    if (PyType_Ready(&DatabaseType) < 0 || PyType_Ready(&MatcherType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    Py_INCREF(&DatabaseType);
    Py_INCREF(&MatcherType);
    PyObject *api = PyCapsule_New((void *)&SCAN_API, SCAN_API_NAME, NULL);
    if (api == NULL || PyModule_AddObject(module, "SCAN_API", api) < 0) {
        Py_XDECREF(api);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddObject(module, "Database", (PyObject *)&DatabaseType) < 0 ||
        PyModule_AddObject(module, "Matcher", (PyObject *)&MatcherType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
