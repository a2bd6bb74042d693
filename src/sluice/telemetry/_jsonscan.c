/*
 * Whether an OTLP JSON body needs the exact (slower) read of
 * sluice.telemetry.otlp_pbjson, in one pass over its bytes.
 *
 * orjson keeps only the last value of a key given twice in an object and
 * reads -0 as the integer 0; pdata's jsoniter reader sees every occurrence of
 * a key (a list given twice is appended to, a message merged) and reads -0 as
 * a double's -0.0 and refuses it where an unsigned integer is due. A body
 * with neither reads the same either way. The body is valid JSON (orjson read
 * it). The answer is conservative: a key with an escape, an object with more
 * than MAX_KEYS keys or nesting past MAX_DEPTH also say yes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_KEYS 64
#define MAX_DEPTH 1024

typedef struct {
    const char *start;
    Py_ssize_t size;
} Key;

typedef struct {
    char object;        /* an object (else an array) */
    char expect_key;    /* the next string is a key */
    Py_ssize_t first;   /* its first key in the key stack */
} Frame;

/* 1 when the body needs the exact read, 0 when not, -1 on a memory error. */
static int
needs_exact(const char *text, Py_ssize_t size)
{
    Frame frames[MAX_DEPTH];
    Py_ssize_t depth = 0;
    Key *keys = NULL;
    Py_ssize_t count = 0, capacity = 0;
    int answer = 0;
    Py_ssize_t i = 0;

    while (i < size && !answer) {
        char c = text[i];
        if (c == '"') {
            Py_ssize_t j = i + 1;
            int escaped = 0;
            while (j < size && text[j] != '"') {
                if (text[j] == '\\') {
                    escaped = 1;
                    j++;
                }
                j++;
            }
            if (depth > 0 && frames[depth - 1].object && frames[depth - 1].expect_key) {
                Frame *frame = &frames[depth - 1];
                Key key = {text + i + 1, j - i - 1};
                if (escaped || count - frame->first >= MAX_KEYS) {
                    answer = 1;
                    break;
                }
                for (Py_ssize_t k = frame->first; k < count; k++) {
                    if (keys[k].size == key.size && memcmp(keys[k].start, key.start, key.size) == 0) {
                        answer = 1;
                        break;
                    }
                }
                if (count == capacity) {
                    Py_ssize_t larger = capacity ? capacity * 2 : 64;
                    Key *grown = PyMem_Realloc(keys, larger * sizeof(Key));
                    if (grown == NULL) {
                        PyMem_Free(keys);
                        return -1;
                    }
                    keys = grown;
                    capacity = larger;
                }
                keys[count++] = key;
                frame->expect_key = 0;
            }
            i = j + 1;
            continue;
        }
        switch (c) {
        case '{':
        case '[':
            if (depth == MAX_DEPTH) {
                answer = 1;
                break;
            }
            frames[depth].object = c == '{';
            frames[depth].expect_key = c == '{';
            frames[depth].first = count;
            depth++;
            break;
        case '}':
        case ']':
            if (depth > 0) {
                depth--;
                count = frames[depth].first;
            }
            break;
        case ',':
            if (depth > 0 && frames[depth - 1].object)
                frames[depth - 1].expect_key = 1;
            break;
        case '-':
            if (i + 1 < size && text[i + 1] == '0'
                && (i + 2 >= size || (text[i + 2] != '.' && text[i + 2] != 'e' && text[i + 2] != 'E')))
                answer = 1;
            break;
        default:
            break;
        }
        i++;
    }
    PyMem_Free(keys);
    return answer;
}

static PyObject *
needs_exact_read(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    int answer = needs_exact((const char *)view.buf, view.len);
    PyBuffer_Release(&view);
    if (answer < 0)
        return PyErr_NoMemory();
    return PyBool_FromLong(answer);
}

static PyMethodDef methods[] = {
    {"needs_exact_read", needs_exact_read, METH_O,
     "Whether a valid JSON body repeats a key in an object or holds -0 (or may)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jsonscan", NULL, -1, methods,
};

PyMODINIT_FUNC
PyInit__jsonscan(void)
{
    return PyModule_Create(&module);
}
