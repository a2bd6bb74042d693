/*
 * The hits a record's scans found, gathered as the tuples the scans returned
 * and joined into one tuple once per record (instead of a new tuple at every
 * scan that found something), and the loop over a batch's records. Shared by
 * the batch readers in C (_lean.c, _jsonread.c); include it after Python.h.
 */
#ifndef SLUICE_FOUND_H
#define SLUICE_FOUND_H

#include <stdint.h>

#include "../policy/_hsnative.h"

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

/* Starts `f` with `prefix` (a tuple: the hits of the record's resource and
 * scope, found once for all of its records). */
static inline void
found_start(Found *f, PyObject *prefix)
{
    found_init(f);
    if (PyTuple_GET_SIZE(prefix) > 0)
        f->found[f->count++] = Py_NewRef(prefix);
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

/*
 * The tuples joined lately, by the parts they were joined from. A record's
 * parts are its container's hits and the answers its reader remembers (the
 * same objects for the same values), and a batch's records repeat a few
 * combinations of them: a join met before is the same tuple again, with no
 * tuple built and freed, and a lookup of it by the engine matches its key by
 * identity. Keyed by the parts' addresses; an entry holds its parts, so that
 * no address is reused while the entry stands. Direct-mapped: a new join
 * takes its slot.
 */
#define JOIN_SLOTS 128
#define JOIN_PARTS 6

typedef struct {
    uint64_t hash;
    Py_ssize_t count; /* 0 for an empty slot */
    PyObject *parts[JOIN_PARTS];
    PyObject *joined;
} JoinSlot;

typedef struct {
    JoinSlot *slots; /* JOIN_SLOTS of them, or NULL until the first join */
} Joins;

static inline void
joins_clear(Joins *joins)
{
    if (joins->slots == NULL)
        return;
    for (Py_ssize_t i = 0; i < JOIN_SLOTS; i++) {
        JoinSlot *slot = &joins->slots[i];
        for (Py_ssize_t p = 0; p < slot->count; p++)
            Py_DECREF(slot->parts[p]);
        Py_CLEAR(slot->joined);
        slot->count = 0;
    }
}

static inline void
joins_free(Joins *joins)
{
    joins_clear(joins);
    PyMem_Free(joins->slots);
    joins->slots = NULL;
}

static inline uint64_t
joins_hash(Found *f)
{
    uint64_t hash = (uint64_t)f->count;
    for (Py_ssize_t i = 0; i < f->count; i++) {
        hash = (hash ^ (uint64_t)(uintptr_t)f->found[i]) * 0x9E3779B97F4A7C15ull;
        hash ^= hash >> 29;
    }
    return hash;
}

/* The slot `f`'s parts are joined in, or NULL (too many parts, or no room
 * for the table); *hash their hash. */
static inline JoinSlot *
joins_slot(Joins *joins, Found *f, uint64_t *hash)
{
    if (f->count > JOIN_PARTS)
        return NULL;
    if (joins->slots == NULL) {
        joins->slots = PyMem_Calloc(JOIN_SLOTS, sizeof(JoinSlot));
        if (joins->slots == NULL)
            return NULL; /* joins are then built each time */
    }
    *hash = joins_hash(f);
    return &joins->slots[*hash % JOIN_SLOTS];
}

/* Whether `slot` holds `f`'s parts. */
static inline int
join_met(JoinSlot *slot, Found *f, uint64_t hash)
{
    if (slot->count != f->count || slot->hash != hash)
        return 0;
    for (Py_ssize_t i = 0; i < f->count; i++)
        if (slot->parts[i] != f->found[i])
            return 0;
    return 1;
}

/* Puts `joined` (of `f`'s parts) in `slot`, unless a part is held by `f`
 * alone (a fresh answer, as a scan of a body gives: its join is not met
 * again). */
static inline void
join_keep(JoinSlot *slot, Found *f, uint64_t hash, PyObject *joined)
{
    for (Py_ssize_t i = 0; i < f->count; i++)
        if (Py_REFCNT(f->found[i]) == 1)
            return;
    for (Py_ssize_t p = 0; p < slot->count; p++)
        Py_DECREF(slot->parts[p]);
    Py_XDECREF(slot->joined);
    for (Py_ssize_t i = 0; i < f->count; i++)
        slot->parts[i] = Py_NewRef(f->found[i]);
    slot->count = f->count;
    slot->hash = hash;
    slot->joined = Py_NewRef(joined);
}

/* One tuple of everything found (a new reference); `f` is emptied. A join
 * of the same parts as one met lately (in `joins`) is that join's tuple. */
static inline PyObject *
found_join(Found *f, Joins *joins)
{
    PyObject *joined;
    uint64_t hash = 0;
    JoinSlot *slot = f->count > 1 ? joins_slot(joins, f, &hash) : NULL;
    if (slot != NULL && join_met(slot, f, hash)) {
        joined = Py_NewRef(slot->joined);
    } else if (f->count == 0) {
        joined = PyTuple_New(0); /* the shared empty tuple */
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
            if (slot != NULL)
                join_keep(slot, f, hash, joined);
        }
    }
    found_clear(f);
    return joined;
}

/*
 * A batch being read, with the bodies scanned ahead of its records
 * (batch_ahead): a batch reader with a body matcher first notes where each
 * body it can scan lies, then scans them all one after the other, with no
 * Python call and no bytes object. So the field's databases (a few MB with
 * thousands of patterns) stay in the CPU's caches from one scan to the next,
 * and the records' objects from one note to the next: reading a record
 * between two scans pushes the databases out, and a scan between two reads
 * the record's objects. A body it leaves, or whose scan raised, is read with
 * its record (and raises again there).
 */
typedef struct {
    const char *data; /* NULL: nothing to scan ahead */
    Py_ssize_t length;
} Text;

/* Where a reader finds `record`'s body to scan ahead: 1 with *text and
 * *holder (a new reference keeping the characters alive, whatever a finalizer
 * run by a collection during a scan does to the records) set; 0 for a body
 * left to the record's read; -1 with an exception set, which the record's
 * read meets again. Both are left as they are unless it answers 1. */
typedef int (*BodyAt)(void *reader, PyObject *record, Text *text, PyObject **holder);

typedef struct {
    void *reader;
    BodyAt body_at;
    const ScanApi *api;
    PyObject *matcher; /* the body field's; NULL: no body is scanned ahead */
    /* per record its body's hits (new references), or NULL; while the
     * bodies are noted, what keeps its text alive (a new reference) */
    PyObject **ahead;
    Text *texts; /* per record the body noted to scan, until they are scanned */
    Py_ssize_t count;
} Batch;

/* Keeps what a scan answered for the body of record `r` (a new reference,
 * or NULL when it raised: an Exception is cleared, the record's read raises
 * it again); 0, or -1 when it raised anything else. */
static inline int
batch_keep(Batch *batch, Py_ssize_t r, PyObject *hits)
{
    if (hits == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear();
    }
    batch->ahead[r] = hits;
    return 0;
}

/* A BatchRead's `begin` for a Batch (`context`): notes the bodies its
 * `body_at` finds in `records`, then scans them with its matcher, in order.
 * 0, or -1 with an exception set (MemoryError, or a scan or body_at raised
 * something other than an Exception). */
static inline int
batch_ahead(void *context, PyObject *const *records, Py_ssize_t count)
{
    Batch *batch = context;
    if (batch->matcher == NULL || count == 0)
        return 0;
    batch->ahead = PyMem_Calloc((size_t)count, sizeof(PyObject *));
    batch->texts = PyMem_Calloc((size_t)count, sizeof(Text));
    batch->count = count;
    if (batch->ahead == NULL || batch->texts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t r = 0; r < count; r++) {
        int found = batch->body_at(batch->reader, records[r], &batch->texts[r], &batch->ahead[r]);
        if (found < 0 && batch_keep(batch, r, NULL) < 0)
            return -1;
    }
    for (Py_ssize_t r = 0; r < count; r++) {
        Text text = batch->texts[r];
        if (text.data == NULL)
            continue;
        PyObject *holder = batch->ahead[r];
        batch->ahead[r] = NULL;
        PyObject *hits = batch->api->scan(batch->matcher, text.data, text.length);
        Py_XDECREF(holder);
        if (batch_keep(batch, r, hits) < 0)
            return -1;
    }
    PyMem_Free(batch->texts);
    batch->texts = NULL;
    return 0;
}

/* The hits of record `r`'s body scanned ahead (a new reference, taken out
 * of the batch), or NULL when it was not. */
static inline PyObject *
batch_take(Batch *batch, Py_ssize_t r)
{
    if (batch->ahead == NULL)
        return NULL;
    PyObject *hits = batch->ahead[r];
    batch->ahead[r] = NULL;
    return hits;
}

/* Drops what the batch's reads did not take. */
static inline void
batch_free(Batch *batch)
{
    if (batch->ahead != NULL) {
        for (Py_ssize_t r = 0; r < batch->count; r++)
            Py_XDECREF(batch->ahead[r]);
    }
    PyMem_Free(batch->ahead);
    PyMem_Free(batch->texts);
    batch->ahead = NULL;
    batch->texts = NULL;
}

/* How a batch reader reads a batch's records, for read_each(). */
typedef struct {
    void *context;
    /* Sees the batch's records once, before any is read (NULL: nothing to
     * do): 0, or -1 with an exception set. */
    int (*begin)(void *context, PyObject *const *records, Py_ssize_t count);
    /* The record at `position`: `prefix` and its hits joined in one tuple (a
     * new reference), Py_None (new) to read it the usual way, or NULL with
     * an exception set. */
    PyObject *(*read)(void *context, PyObject *record, Py_ssize_t position, PyObject *prefix);
} BatchRead;

/* A batch reader's read(records, prefix=()) -> list: per record what
 * `how->read` answers, or None for a record to read the usual way (where it
 * answered None, or raised an Exception: the usual way raises it again, where
 * the engine counts it). NULL when it raised anything else (MemoryError,
 * KeyboardInterrupt), or `how->begin` failed. `args` are the method's
 * arguments (METH_FASTCALL). */
static PyObject *
read_each(const BatchRead *how, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "read(records, prefix=()) takes 1 or 2 arguments");
        return NULL;
    }
    if (nargs == 2 && !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "read(records, prefix): prefix must be a tuple");
        return NULL;
    }
    /* without one, CPython's shared empty tuple */
    PyObject *prefix = nargs == 2 ? Py_NewRef(args[1]) : PyTuple_New(0);
    PyObject *fast = PySequence_Fast(args[0], "records must be a sequence");
    if (fast == NULL) {
        Py_DECREF(prefix);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    PyObject *out = NULL;
    if (how->begin == NULL || how->begin(how->context, PySequence_Fast_ITEMS(fast), count) == 0)
        out = PyList_New(count);
    for (Py_ssize_t r = 0; out != NULL && r < count; r++) {
        PyObject *hits = how->read(how->context, PySequence_Fast_GET_ITEM(fast, r), r, prefix);
        if (hits == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                Py_CLEAR(out);
                break;
            }
            PyErr_Clear();
            hits = Py_NewRef(Py_None);
        }
        PyList_SET_ITEM(out, r, hits);
    }
    Py_DECREF(fast);
    Py_DECREF(prefix);
    return out;
}

#endif
