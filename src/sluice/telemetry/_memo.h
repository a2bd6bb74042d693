/*
 * Answers remembered by the bytes they were found for: the batch readers in C
 * (_lean.c, _jsonread.c) keep what an attribute's scan answered here, so that
 * a value seen before costs a hash and a compare instead of a call or a dict
 * lookup. An entry is keyed by a tag (which field, for a reader with several)
 * and the bytes.
 *
 * Open addressing on a seeded hash, probing at most MEMO_PROBES slots: a value
 * whose probe run is full is answered by the caller (and takes its run's first
 * slot), so no choice of values costs more than that. The table grows to
 * MEMO_SLOTS and is emptied when half of that is taken, as the scanners' memos
 * are (patterns.MEMO_LIMIT). Include it after Python.h; call memo_seed_init()
 * once, from the module's init.
 */
#ifndef SLUICE_MEMO_H
#define SLUICE_MEMO_H

#include <stdint.h>
#include <string.h>

#define MEMO_PROBES 8
#define MEMO_FIRST_SLOTS 64
#define MEMO_SLOTS 4096

typedef struct {
    uint64_t hash;
    Py_ssize_t tag;
    PyObject *key;   /* bytes, or NULL for an empty slot */
    PyObject *found; /* what was answered */
} MemoSlot;

typedef struct {
    MemoSlot *slots;
    size_t mask; /* slot count - 1 (when slots) */
    Py_ssize_t count;
} Memo;

static uint64_t memo_seed;

/* Seeds the hash with bytes no sender can know, so that no choice of values
 * makes long probe runs on purpose; 0, or -1 with an exception set. */
static int
memo_seed_init(void)
{
    PyObject *os = PyImport_ImportModule("os");
    PyObject *seed = os == NULL ? NULL : PyObject_CallMethod(os, "urandom", "i", 8);
    Py_XDECREF(os);
    if (seed == NULL)
        return -1;
    if (!PyBytes_Check(seed) || PyBytes_GET_SIZE(seed) != 8) {
        Py_DECREF(seed);
        PyErr_SetString(PyExc_RuntimeError, "os.urandom(8) did not return 8 bytes");
        return -1;
    }
    memcpy(&memo_seed, PyBytes_AS_STRING(seed), sizeof memo_seed);
    Py_DECREF(seed);
    return 0;
}

/* A hash of data[0:size] and `tag` under memo_seed, eight bytes at a time. */
static inline uint64_t
memo_hash(Py_ssize_t tag, const void *bytes, Py_ssize_t size)
{
    const unsigned char *data = bytes;
    uint64_t hash = memo_seed ^ ((uint64_t)size * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)tag << 40);
    while (size >= 8) {
        uint64_t word;
        memcpy(&word, data, 8);
        hash = (hash ^ word) * 0xFF51AFD7ED558CCDull;
        hash ^= hash >> 32;
        data += 8;
        size -= 8;
    }
    /* The last 0-7 bytes in whole loads (two may overlap; the size is in the
     * hash): a copy of a variable length into a word would be stored a byte
     * at a time and read back whole, which waits for the stores. */
    uint64_t tail = 0;
    if (size >= 4) {
        uint32_t first, last;
        memcpy(&first, data, 4);
        memcpy(&last, data + size - 4, 4);
        tail = (uint64_t)first << 32 | last;
    } else if (size > 0) {
        tail = (uint64_t)data[0] << 16 | (uint64_t)data[size >> 1] << 8 | data[size - 1];
    }
    hash = (hash ^ tail) * 0xC4CEB9FE1A85EC53ull;
    return hash ^ (hash >> 29);
}

static inline void
memo_clear(Memo *memo)
{
    if (memo->slots == NULL)
        return;
    for (size_t i = 0; i <= memo->mask; i++) {
        Py_CLEAR(memo->slots[i].key);
        Py_CLEAR(memo->slots[i].found);
    }
    memo->count = 0;
}

static inline void
memo_free(Memo *memo)
{
    memo_clear(memo);
    PyMem_Free(memo->slots);
    memo->slots = NULL;
}

/* The remembered answer for (tag, data[0:size]) (borrowed), or NULL. */
static inline PyObject *
memo_get(Memo *memo, uint64_t hash, Py_ssize_t tag, const void *data, Py_ssize_t size)
{
    if (memo->slots == NULL)
        return NULL;
    for (size_t probe = 0, at = (size_t)hash; probe < MEMO_PROBES; probe++, at++) {
        MemoSlot *slot = &memo->slots[at & memo->mask];
        if (slot->key == NULL)
            return NULL;
        if (slot->hash == hash && slot->tag == tag && PyBytes_GET_SIZE(slot->key) == size &&
            memcmp(PyBytes_AS_STRING(slot->key), data, (size_t)size) == 0)
            return slot->found;
    }
    return NULL;
}

/* Places an entry whose references the table takes: the first empty slot of
 * its run, else the run's first slot (whose entry is dropped). */
static inline void
memo_place(Memo *memo, MemoSlot entry)
{
    for (size_t probe = 0, at = (size_t)entry.hash; probe < MEMO_PROBES; probe++, at++) {
        MemoSlot *slot = &memo->slots[at & memo->mask];
        if (slot->key == NULL) {
            *slot = entry;
            memo->count++;
            return;
        }
    }
    MemoSlot *home = &memo->slots[entry.hash & memo->mask];
    Py_DECREF(home->key);
    Py_DECREF(home->found);
    *home = entry;
}

/* A table of `count` slots with what `memo` holds (entries whose runs are
 * full are dropped); 0, or -1 with MemoryError set. */
static inline int
memo_resize(Memo *memo, size_t count)
{
    MemoSlot *slots = PyMem_Calloc(count, sizeof(MemoSlot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Memo old = *memo;
    *memo = (Memo){slots, count - 1, 0};
    if (old.slots != NULL) {
        for (size_t i = 0; i <= old.mask; i++)
            if (old.slots[i].key != NULL)
                memo_place(memo, old.slots[i]);
        PyMem_Free(old.slots);
    }
    return 0;
}

/* Remembers `found` (borrowed) as the answer for (tag, data[0:size]); 0, or
 * -1 with an exception set. The table may have changed since memo_get (a scan
 * can run other readers): this probes afresh. */
static inline int
memo_put(Memo *memo, uint64_t hash, Py_ssize_t tag, const void *data, Py_ssize_t size,
         PyObject *found)
{
    size_t slots = memo->slots == NULL ? 0 : memo->mask + 1;
    if (2 * (size_t)(memo->count + 1) > slots) {
        if (slots == MEMO_SLOTS)
            memo_clear(memo);
        else if (memo_resize(memo, slots == 0 ? MEMO_FIRST_SLOTS : 2 * slots) < 0)
            return -1;
    }
    PyObject *key = PyBytes_FromStringAndSize((const char *)data, size);
    if (key == NULL)
        return -1;
    Py_INCREF(found);
    memo_place(memo, (MemoSlot){hash, tag, key, found});
    return 0;
}

#endif
