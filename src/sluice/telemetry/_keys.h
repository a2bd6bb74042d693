/*
 * The attribute keys a batch reader in C reads (_lean.c: wire bytes,
 * _jsonread.c: a str's stored characters), found by their bytes: open
 * addressing on memo_hash, the table at most half full. A key is given as a
 * tag (what its bytes are: the str width, or 0) and its bytes, which must stay
 * alive as long as the table (the reader keeps the key objects). Include it
 * after _memo.h.
 */
#ifndef SLUICE_KEYS_H
#define SLUICE_KEYS_H

typedef struct {
    uint64_t hash;
    Py_ssize_t index; /* the key's index, -1 for an empty slot */
    Py_ssize_t tag, size;
    const void *data;
} KeySlot;

typedef struct {
    KeySlot *slots;
    size_t mask; /* slot count - 1 */
} KeyTable;

/* An empty table for `count` keys (the old one freed); 0, or -1 with
 * MemoryError set (the table unchanged). */
static int
key_table_init(KeyTable *table, Py_ssize_t count)
{
    size_t slot_count = 8;
    while (slot_count < 2 * (size_t)count)
        slot_count *= 2;
    KeySlot *slots = PyMem_Malloc(slot_count * sizeof(KeySlot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < slot_count; i++)
        slots[i] = (KeySlot){.index = -1};
    PyMem_Free(table->slots);
    *table = (KeyTable){slots, slot_count - 1};
    return 0;
}

static void
key_table_free(KeyTable *table)
{
    PyMem_Free(table->slots);
    table->slots = NULL;
}

/* Adds key `index` (distinct from the keys added before). */
static void
key_table_add(KeyTable *table, Py_ssize_t index, Py_ssize_t tag, const void *data,
              Py_ssize_t size)
{
    uint64_t hash = memo_hash(tag, data, size);
    size_t at = (size_t)hash & table->mask;
    while (table->slots[at].index >= 0)
        at = (at + 1) & table->mask;
    table->slots[at] = (KeySlot){hash, index, tag, size, data};
}

/* The index of the key (tag, data[0:size]), or -1. */
static inline Py_ssize_t
key_table_find(const KeyTable *table, Py_ssize_t tag, const void *data, Py_ssize_t size)
{
    uint64_t hash = memo_hash(tag, data, size);
    for (size_t at = (size_t)hash & table->mask;; at = (at + 1) & table->mask) {
        const KeySlot *slot = &table->slots[at];
        if (slot->index < 0)
            return -1;
        if (slot->hash == hash && slot->tag == tag && slot->size == size &&
            memcmp(slot->data, data, (size_t)size) == 0)
            return slot->index;
    }
}

#endif
