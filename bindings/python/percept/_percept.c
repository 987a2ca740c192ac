/*
 * _percept.c - the C half of the Python package `percept`: a world is an
 * object whose methods call the library directly; a tick's arrays are read
 * through the buffer protocol (any C-contiguous uint32 and float64 buffer,
 * NumPy's among them); a call's events are copied out of the world's event
 * buffer into one NumPy structured array laid out like percept_event. NumPy
 * is reached at run time through plain calls and buffers, so building needs
 * only Python's headers and percept's. percept/__init__.py completes it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <percept.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* percept.Error, and what __init__.py hands over: numpy.empty, the events'
 * dtype (EVENT_DTYPE, made from EVENT_LAYOUT below) and uint32's dtype. */
static PyObject *Error;
static PyObject *numpy_empty, *event_dtype, *id_dtype;

/* PyObject_HEAD brings its own ';', which clang-format cannot know. */
/* clang-format off */
typedef struct World {
    PyObject_HEAD
    percept_world *w;
    /* clang-format on */
    /* A tick runs with the GIL released, so that other threads may run
     * meanwhile; every other call on this world is refused until it ends,
     * since a world is not thread-safe (RuntimeError). */
    int ticking;
    PyObject *senses; /* the senses' names, a tuple: an event's sense indexes it */
    /* A tick's entries and descriptions, kept and grown from tick to tick. */
    percept_change *changes;
    size_t changes_cap;
    percept_entity_desc *descs;
    size_t descs_cap;
    /* The arrays events() fills, kept for its next calls: a tick's events
     * can be megabytes, and memory fresh from the system costs more in page
     * faults than the copy does. One that only the world still refers to
     * is filled again; two let `ev = w.events()` fill one while the last
     * tick's is still held. The caller gets a view of its first rows. */
    PyObject *event_arrays[2];
    size_t event_caps[2];
} World;

/* ---------------------------------------------------------------- errors */

static int set_new_attr(PyObject *o, const char *name, PyObject *value)
{
    if (!value)
        return -1;
    int rc = PyObject_SetAttrString(o, name, value);
    Py_DECREF(value);
    return rc;
}

/* A percept.Error for `status`, its str() the message. The library's
 * messages show control bytes as \xNN, but a path may hold bytes that are
 * not UTF-8: those come out escaped too. */
static PyObject *error_new(int status, const char *message)
{
    PyObject *text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "backslashreplace");
    if (!text)
        return NULL;
    PyObject *e = PyObject_CallFunctionObjArgs(Error, text, NULL);
    if (e &&
        (set_new_attr(e, "status", PyLong_FromLong(status)) < 0 ||
         set_new_attr(e, "status_name", PyUnicode_FromString(percept_status_name(status))) < 0 ||
         PyObject_SetAttrString(e, "message", text) < 0))
        Py_CLEAR(e);
    Py_DECREF(text);
    return e;
}

static PyObject *raise_error(PyObject *e)
{
    if (e) {
        PyErr_SetObject(Error, e);
        Py_DECREF(e);
    }
    return NULL;
}

/* Raise the world's message for a failed change. */
static PyObject *fail(World *self, int status)
{
    return raise_error(error_new(status, percept_errmsg(self->w)));
}

/* Raise for a failed reading call, which leaves the world's message alone. */
static PyObject *fail_read(int status, const char *call)
{
    char text[128];
    snprintf(text, sizeof text, "%s: %s", call, percept_strerror(status));
    return raise_error(error_new(status, text));
}

static percept_world *world_of(World *self)
{
    if (self->ticking) {
        PyErr_SetString(PyExc_RuntimeError, "percept: the world is in the middle of a tick");
        return NULL;
    }
    if (!self->w) {
        PyErr_SetString(PyExc_ValueError, "percept: the world is closed");
        return NULL;
    }
    return self->w;
}

/* ---------------------------------------------------------------- arguments */

/* A 32-bit unsigned value (an ID, tags, a mask) from any integer. */
static int to_u32(PyObject *o, uint32_t *out, const char *what)
{
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 0 || v > (long long)UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s must be 0 to 2**32 - 1", what);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* Whether the str `name` is the ASCII `text`. */
static int name_is(PyObject *name, const char *text)
{
    return PyUnicode_CompareWithASCIIString(name, text) == 0;
}

static int to_double(PyObject *o, double *out)
{
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

/* A sense by name ("sight") or index (an event's sense). */
static int to_sense(World *self, PyObject *o, percept_sense *out)
{
    int count = percept_sense_count(self->w);
    if (PyUnicode_Check(o)) {
        Py_ssize_t len;
        const char *name = PyUnicode_AsUTF8AndSize(o, &len);
        if (!name)
            return -1;
        int s = strlen(name) == (size_t)len ? percept_sense_index(self->w, name) : PERCEPT_ENOENT;
        if (s < 0) {
            char text[128];
            snprintf(text, sizeof text, "percept: the world has no sense '%.60s'", name);
            raise_error(error_new(PERCEPT_ENOENT, text));
            return -1;
        }
        *out = s;
        return 0;
    }
    if (!PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "a sense is a name or an index, not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t s = PyNumber_AsSsize_t(o, NULL);
    if (s == -1 && PyErr_Occurred())
        return -1;
    if (s < 0 || s >= count) {
        char text[96];
        snprintf(text, sizeof text, "percept: the world has no sense %zd (it has %d)", s, count);
        raise_error(error_new(PERCEPT_EINVAL, text));
        return -1;
    }
    *out = (percept_sense)s;
    return 0;
}

/*
 * Gather a method's arguments, named `names`, from the positional ones
 * and then the keywords (METH_FASTCALL | METH_KEYWORDS); the first
 * `required` must be given, the others left NULL when they are not.
 */
static int gather(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  const char *const names[], int count, int required, PyObject **out)
{
    if (nargs > count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, count,
                     nargs);
        return -1;
    }
    for (int i = 0; i < count; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int i = 0;
        while (i < count && !name_is(name, names[i]))
            i++;
        if (i == count) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, name);
            return -1;
        }
        if (out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[i]);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (int i = 0; i < required; i++) {
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- entity fields */

/* The fields of an entity besides its senses, in add()'s order. */
enum { F_X, F_Y, F_Z, F_FACING, F_TAGS, F_HIDDEN, F_COUNT };
static const char *const field_names[F_COUNT] = {"x", "y", "z", "facing", "tags", "hidden"};
static const char *const sense_keys[] = {"range", "margin", "fov", "ignore"};

/* NAME=range, or NAME={"range": R, "margin": M, "fov": DEG, "ignore": MASK},
 * the keys absent keeping their values. */
static int set_sense(percept_sense_params *p, PyObject *value, const char *sense)
{
    if (!PyDict_Check(value)) {
        if (to_double(value, &p->range) == 0)
            return 0;
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "sense '%s' takes a range or a dict, not %.100s", sense,
                         Py_TYPE(value)->tp_name);
        }
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *v;
    while (PyDict_Next(value, &pos, &key, &v)) {
        int k = 0;
        while (k < 4 && !(PyUnicode_Check(key) && name_is(key, sense_keys[k])))
            k++;
        int rc;
        switch (k) {
        case 0:
            rc = to_double(v, &p->range);
            break;
        case 1:
            rc = to_double(v, &p->margin);
            break;
        case 2:
            rc = to_double(v, &p->fov);
            break;
        case 3:
            rc = to_u32(v, &p->ignore, "ignore");
            break;
        default:
            PyErr_Format(PyExc_TypeError, "sense '%s': unknown key %R (range, margin, fov, ignore)",
                         sense, key);
            rc = -1;
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int set_facing(percept_entity_desc *d, PyObject *value)
{
    d->facing[0] = d->facing[1] = d->facing[2] = 0;
    if (value == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(value, "facing is a sequence of 2 or 3 numbers");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n != 2 && n != 3) {
        PyErr_Format(PyExc_ValueError, "facing has 2 or 3 components, not %zd", n);
        rc = -1;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++)
        rc = to_double(PySequence_Fast_GET_ITEM(seq, i), &d->facing[i]);
    Py_DECREF(seq);
    return rc;
}

/* hidden: the senses it is hidden from, an iterable of names or indices. */
static int set_hidden_mask(World *self, percept_entity_desc *d, PyObject *value)
{
    if (PyUnicode_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "hidden is a sequence of senses, not a string");
        return -1;
    }
    PyObject *it = PyObject_GetIter(value);
    if (!it)
        return -1;
    unsigned mask = 0;
    PyObject *item;
    percept_sense s;
    while ((item = PyIter_Next(it))) {
        int rc = to_sense(self, item, &s);
        Py_DECREF(item);
        if (rc < 0)
            break;
        mask |= PERCEPT_SENSE_BIT(s);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    d->hidden = mask;
    return 0;
}

/* Field `f` (F_X ... F_HIDDEN, or F_COUNT + a sense) of *d. */
static int set_field_at(World *self, percept_entity_desc *d, int f, PyObject *value)
{
    switch (f) {
    case F_X:
        return to_double(value, &d->x);
    case F_Y:
        return to_double(value, &d->y);
    case F_Z:
        return to_double(value, &d->z);
    case F_FACING:
        return set_facing(d, value);
    case F_TAGS:
        return to_u32(value, &d->tags, "tags");
    case F_HIDDEN:
        return set_hidden_mask(self, d, value);
    default:
        return set_sense(&d->sense[f - F_COUNT], value, percept_sense_name(self->w, f - F_COUNT));
    }
}

/* The field named `name`, of the world's senses or the others, into *d;
 * `given` has a bit per field set so far, to refuse one given twice. */
static int set_field(World *self, percept_entity_desc *d, PyObject *name, PyObject *value,
                     unsigned *given, const char *fn)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "%s(): a field's name is a string, not %.100s", fn,
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    int f = 0;
    while (f < F_COUNT && !name_is(name, field_names[f]))
        f++;
    if (f == F_COUNT) {
        Py_ssize_t len;
        const char *key = PyUnicode_AsUTF8AndSize(name, &len);
        if (!key)
            return -1;
        int s = strlen(key) == (size_t)len ? percept_sense_index(self->w, key) : -1;
        if (s < 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument '%U' (not a field, nor a "
                         "sense of this world)",
                         fn, name);
            return -1;
        }
        f += s;
    }
    if (*given & (1u << f)) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", fn, name);
        return -1;
    }
    *given |= 1u << f;
    return set_field_at(self, d, f, value);
}

/* ---------------------------------------------------------------- the world */

static void world_dealloc(World *self)
{
    percept_world_close(self->w);
    PyMem_RawFree(self->changes);
    PyMem_RawFree(self->descs);
    Py_XDECREF(self->event_arrays[0]);
    Py_XDECREF(self->event_arrays[1]);
    Py_XDECREF(self->senses);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A path (str, bytes or os.PathLike) or None, as bytes in *out. */
static int optional_path(PyObject *o, PyObject **out)
{
    *out = NULL;
    return o == Py_None || PyUnicode_FSConverter(o, out) ? 0 : -1;
}

/* World(config=None, file=None, backend=None, plugin_dir=None, threads=0) */
static PyObject *world_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"config", "file", "backend", "plugin_dir", "threads", NULL};
    PyObject *config = Py_None, *file = Py_None, *plugin_dir = Py_None;
    const char *backend = NULL;
    Py_ssize_t threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOzOn:World", keywords, &config, &file,
                                     &backend, &plugin_dir, &threads))
        return NULL;
    if (config != Py_None && file != Py_None) {
        PyErr_SetString(PyExc_TypeError, "World() takes config or file, not both");
        return NULL;
    }
    if (config != Py_None && !PyUnicode_Check(config)) {
        PyErr_Format(PyExc_TypeError, "config is INI text (str), not %.100s",
                     Py_TYPE(config)->tp_name);
        return NULL;
    }
    if (threads < 0) {
        PyErr_SetString(PyExc_ValueError, "threads must be 0 (the config's) or more");
        return NULL;
    }
    const char *text = "";
    Py_ssize_t len = 0;
    if (config != Py_None && !(text = PyUnicode_AsUTF8AndSize(config, &len)))
        return NULL;
    if (strlen(text) != (size_t)len) {
        PyErr_SetString(PyExc_ValueError, "config holds a NUL character");
        return NULL;
    }
    PyObject *path = NULL, *dir = NULL;
    if (optional_path(file, &path) < 0 || optional_path(plugin_dir, &dir) < 0) {
        Py_XDECREF(path);
        return NULL;
    }
    percept_options o = PERCEPT_OPTIONS_INIT;
    o.backend = backend;
    o.plugin_dir = dir ? PyBytes_AS_STRING(dir) : NULL;
    o.threads = (size_t)threads;
    percept_world *w = NULL;
    percept_error err;
    int rc = path ? percept_world_open(&w, PyBytes_AS_STRING(path), &o, &err)
                  : percept_world_open_string(&w, text, NULL, &o, &err);
    Py_XDECREF(path);
    Py_XDECREF(dir);
    if (rc != PERCEPT_OK) {
        PyObject *e = error_new(rc, err.text);
        if (e &&
            (set_new_attr(e, "line", PyLong_FromLong(err.line)) < 0 ||
             set_new_attr(
                 e, "section",
                 PyUnicode_DecodeUTF8(err.section, strlen(err.section), "backslashreplace")) < 0 ||
             set_new_attr(e, "key",
                          PyUnicode_DecodeUTF8(err.key, strlen(err.key), "backslashreplace")) < 0))
            Py_CLEAR(e);
        return raise_error(e);
    }
    World *self = (World *)type->tp_alloc(type, 0);
    if (!self) {
        percept_world_close(w);
        return NULL;
    }
    self->w = w;
    rc = percept_set_event_buffer(w, 1);
    if (rc < 0) {
        fail(self, rc);
        Py_DECREF(self);
        return NULL;
    }
    int count = percept_sense_count(w);
    self->senses = PyTuple_New(count);
    for (int s = 0; self->senses && s < count; s++) {
        PyObject *name = PyUnicode_FromString(percept_sense_name(w, s));
        if (!name) {
            Py_CLEAR(self->senses);
            break;
        }
        PyTuple_SET_ITEM(self->senses, s, name);
    }
    if (!self->senses) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* close(): idempotent. */
static PyObject *world_close(World *self, PyObject *unused)
{
    (void)unused;
    if (self->ticking) {
        PyErr_SetString(PyExc_RuntimeError, "percept: the world is in the middle of a tick");
        return NULL;
    }
    percept_world_close(self->w);
    self->w = NULL;
    Py_CLEAR(self->event_arrays[0]);
    Py_CLEAR(self->event_arrays[1]);
    Py_RETURN_NONE;
}

static PyObject *world_closed(World *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->w == NULL);
}

static PyObject *world_senses(World *self, void *unused)
{
    (void)unused;
    Py_INCREF(self->senses);
    return self->senses;
}

/* add(id, x=0, y=0, z=0, facing=None, tags=0, hidden=(), **senses) */
static PyObject *world_add(World *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    percept_world *w = world_of(self);
    if (!w)
        return NULL;
    if (nargs < 1 || nargs > 1 + F_COUNT) {
        PyErr_Format(PyExc_TypeError,
                     "add() takes an ID and at most %d more positional "
                     "arguments (%zd given)",
                     F_COUNT, nargs);
        return NULL;
    }
    percept_id id;
    if (to_u32(args[0], &id, "an ID") < 0)
        return NULL;
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    unsigned given = 0;
    for (Py_ssize_t i = 1; i < nargs; i++) {
        given |= 1u << (i - 1);
        if (set_field_at(self, &d, (int)i - 1, args[i]) < 0)
            return NULL;
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++)
        if (set_field(self, &d, PyTuple_GET_ITEM(kwnames, k), args[nargs + k], &given, "add") < 0)
            return NULL;
    int rc = percept_add(w, id, &d);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* The entity's description as it is, for changing some of its fields. */
static int describe(World *self, percept_id id, percept_entity_desc *d, const char *fn)
{
    int rc = percept_get_entity(self->w, id, d);
    if (rc == PERCEPT_ENOENT) {
        char text[96];
        snprintf(text, sizeof text, "%s: unknown entity %lu", fn, (unsigned long)id);
        raise_error(error_new(rc, text));
    } else if (rc < 0) {
        fail_read(rc, "percept_get_entity");
    }
    return rc;
}

/* update(id, **fields): the fields given change, the others stay. */
static PyObject *world_update(World *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    percept_world *w = world_of(self);
    if (!w)
        return NULL;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError,
                     "update() takes an ID, then fields by keyword (%zd "
                     "positional arguments given)",
                     nargs);
        return NULL;
    }
    percept_id id;
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    if (to_u32(args[0], &id, "an ID") < 0 || describe(self, id, &d, "percept_update") < 0)
        return NULL;
    unsigned given = 0;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++)
        if (set_field(self, &d, PyTuple_GET_ITEM(kwnames, k), args[k + 1], &given, "update") < 0)
            return NULL;
    int rc = percept_update(w, id, &d);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* move(id, x, y, z=None): without z, the height stays. */
static PyObject *world_move(World *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"id", "x", "y", "z"};
    PyObject *a[4];
    percept_world *w = world_of(self);
    percept_id id;
    double x, y, z = 0;
    if (!w || gather("move", args, nargs, kwnames, names, 4, 3, a) < 0 ||
        to_u32(a[0], &id, "an ID") < 0 || to_double(a[1], &x) < 0 || to_double(a[2], &y) < 0)
        return NULL;
    int keep_height = !a[3] || a[3] == Py_None;
    if (!keep_height && to_double(a[3], &z) < 0)
        return NULL;
    int rc = keep_height ? percept_move(w, id, x, y) : percept_move3(w, id, x, y, z);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* turn(id, fx, fy, fz=0) */
static PyObject *world_turn(World *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"id", "fx", "fy", "fz"};
    PyObject *a[4];
    percept_world *w = world_of(self);
    percept_id id;
    double f[3] = {0, 0, 0};
    if (!w || gather("turn", args, nargs, kwnames, names, 4, 3, a) < 0 ||
        to_u32(a[0], &id, "an ID") < 0 || to_double(a[1], &f[0]) < 0 ||
        to_double(a[2], &f[1]) < 0 || (a[3] && to_double(a[3], &f[2]) < 0))
        return NULL;
    int rc = percept_turn(w, id, f[0], f[1], f[2]);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

static PyObject *world_remove(World *self, PyObject *arg)
{
    percept_world *w = world_of(self);
    percept_id id;
    if (!w || to_u32(arg, &id, "an ID") < 0)
        return NULL;
    int rc = percept_remove(w, id);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* set_range(id, sense, range) */
static PyObject *world_set_range(World *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"id", "sense", "range"};
    PyObject *a[3];
    percept_world *w = world_of(self);
    percept_id id;
    percept_sense s;
    double range;
    if (!w || gather("set_range", args, nargs, kwnames, names, 3, 3, a) < 0 ||
        to_u32(a[0], &id, "an ID") < 0 || to_sense(self, a[1], &s) < 0 ||
        to_double(a[2], &range) < 0)
        return NULL;
    int rc = percept_set_range(w, id, s, range);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* set_hidden(id, sense, hidden) */
static PyObject *world_set_hidden(World *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"id", "sense", "hidden"};
    PyObject *a[3];
    percept_world *w = world_of(self);
    percept_id id;
    percept_sense s;
    if (!w || gather("set_hidden", args, nargs, kwnames, names, 3, 3, a) < 0 ||
        to_u32(a[0], &id, "an ID") < 0 || to_sense(self, a[1], &s) < 0)
        return NULL;
    int hidden = PyObject_IsTrue(a[2]);
    if (hidden < 0)
        return NULL;
    int rc = percept_set_hidden(w, id, s, hidden);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* emit(sense, x, y, z=0, strength=0, source=None, tags=0) */
static PyObject *world_emit(World *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"sense", "x", "y", "z", "strength", "source", "tags"};
    PyObject *a[7];
    percept_world *w = world_of(self);
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    if (!w || gather("emit", args, nargs, kwnames, names, 7, 3, a) < 0 ||
        to_sense(self, a[0], &st.sense) < 0 || to_double(a[1], &st.x) < 0 ||
        to_double(a[2], &st.y) < 0 || (a[3] && to_double(a[3], &st.z) < 0) ||
        (a[4] && to_double(a[4], &st.strength) < 0) || (a[6] && to_u32(a[6], &st.tags, "tags") < 0))
        return NULL;
    if (a[5] && a[5] != Py_None) {
        st.has_source = 1;
        if (to_u32(a[5], &st.source, "source") < 0)
            return NULL;
    }
    int rc = percept_emit(w, &st);
    if (rc < 0)
        return fail(self, rc);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- ticks */

/* Whether a buffer's struct-module format is the single native code `code`. */
static int format_is(const char *format, char code)
{
    if (!format)
        return 0;
    if (*format == '@' || *format == '=' || *format == (PY_LITTLE_ENDIAN ? '<' : '>'))
        format++;
    return format[0] == code && format[1] == '\0';
}

/* One of a tick's columns: IDs, and a position or facing for each. */
typedef struct columns {
    Py_buffer ids, values;
    Py_ssize_t n;
    int width; /* 2 or 3 values a row */
} columns;

static void columns_release(columns *c)
{
    if (c->ids.obj)
        PyBuffer_Release(&c->ids);
    if (c->values.obj)
        PyBuffer_Release(&c->values);
}

/* IDs: a 1-D C-contiguous uint32 buffer; values: (n, 2) or (n, 3) float64. */
static int columns_get(columns *c, PyObject *ids, PyObject *values, const char *what)
{
    memset(c, 0, sizeof *c);
    if (ids == Py_None && values == Py_None)
        return 0;
    if (PyObject_GetBuffer(ids, &c->ids, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (PyObject_GetBuffer(values, &c->values, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (c->ids.ndim != 1 || c->ids.itemsize != 4 || !format_is(c->ids.format, 'I')) {
        PyErr_Format(PyExc_TypeError, "%s: the IDs must be a 1-D buffer of uint32", what);
        return -1;
    }
    if (c->values.itemsize != 8 || !format_is(c->values.format, 'd')) {
        PyErr_Format(PyExc_TypeError, "%s: the values must be a buffer of float64", what);
        return -1;
    }
    c->n = c->ids.shape[0];
    if (c->values.ndim != 2 || (c->values.shape[1] != 2 && c->values.shape[1] != 3) ||
        c->values.shape[0] != c->n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd IDs need values of shape (%zd, 2) or (%zd, 3)",
                     what, c->n, c->n, c->n);
        return -1;
    }
    c->width = (int)c->values.shape[1];
    return 0;
}

/* Room for n entries and m descriptions in the world's scratch. */
static int reserve(World *self, size_t n, size_t m)
{
    if (n > self->changes_cap) {
        size_t cap = n > 2 * self->changes_cap ? n : 2 * self->changes_cap;
        void *p = cap <= PY_SSIZE_T_MAX / sizeof *self->changes
                      ? PyMem_RawRealloc(self->changes, cap * sizeof *self->changes)
                      : NULL;
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        self->changes = p;
        self->changes_cap = cap;
    }
    if (m > self->descs_cap) {
        void *p = m <= PY_SSIZE_T_MAX / sizeof *self->descs
                      ? PyMem_RawRealloc(self->descs, m * sizeof *self->descs)
                      : NULL;
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        self->descs = p;
        self->descs_cap = m;
    }
    return 0;
}

/* Moves into ch[0..n): two columns keep each entity's height, as move()
 * does, read from the entity (an unknown ID gets 0, and the tick refuses
 * it by its index). */
static void fill_moves(World *self, percept_change *ch, const columns *c)
{
    const uint32_t *ids = c->ids.buf;
    const double *v = c->values.buf;
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    for (Py_ssize_t i = 0; i < c->n; i++, v += c->width) {
        double z = 0;
        if (c->width == 3)
            z = v[2];
        else if (percept_get_entity(self->w, ids[i], &d) == PERCEPT_OK)
            z = d.z;
        ch[i] = (percept_change){ids[i], PERCEPT_CHANGE_MOVE, v[0], v[1], z, NULL};
    }
}

static void fill_turns(percept_change *ch, const columns *c)
{
    const uint32_t *ids = c->ids.buf;
    const double *v = c->values.buf;
    for (Py_ssize_t i = 0; i < c->n; i++, v += c->width)
        ch[i] = (percept_change){ids[i], PERCEPT_CHANGE_TURN,      v[0],
                                 v[1],   c->width == 3 ? v[2] : 0, NULL};
}

/* Updates, a list of (id, fields) pairs, into ch[0..n) and self->descs. */
static int fill_updates(World *self, percept_change *ch, PyObject *items)
{
    Py_ssize_t n = PyList_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "updates: a mapping of ID to fields");
            return -1;
        }
        PyObject *fields = PyTuple_GET_ITEM(item, 1);
        percept_entity_desc *d = &self->descs[i];
        percept_id id;
        if (to_u32(PyTuple_GET_ITEM(item, 0), &id, "an ID") < 0)
            return -1;
        if (!PyDict_Check(fields)) {
            PyErr_Format(PyExc_TypeError, "updates: entity %lu's fields must be a dict, not %.100s",
                         (unsigned long)id, Py_TYPE(fields)->tp_name);
            return -1;
        }
        *d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
        percept_get_entity(self->w, id, d); /* an unknown ID: the tick refuses it */
        unsigned given = 0;
        Py_ssize_t pos = 0;
        PyObject *name, *value;
        while (PyDict_Next(fields, &pos, &name, &value))
            if (set_field(self, d, name, value, &given, "tick") < 0)
                return -1;
        ch[i] = (percept_change){id, PERCEPT_CHANGE_UPDATE, 0, 0, 0, d};
    }
    return 0;
}

/*
 * _tick(move_ids, positions, turn_ids, facings, updates): one percept_tick()
 * of the moves, then the turns, then the updates (a mapping of ID to a dict
 * of fields), in that order of entries (Error.index counts in it).
 * percept/__init__.py's tick() and move_many() bring arrays to the buffers'
 * form first.
 */
static PyObject *world_tick(World *self, PyObject *const *args, Py_ssize_t nargs)
{
    percept_world *w = world_of(self);
    if (!w)
        return NULL;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "_tick() takes 5 arguments");
        return NULL;
    }
    /* From here on the world refuses other calls: reading the arguments
     * may run Python code (__index__, __float__) that would call it. */
    self->ticking = 1;
    columns moves = {0}, turns = {0};
    PyObject *items = NULL;
    int ok = columns_get(&moves, args[0], args[1], "moves") == 0;
    ok = ok && columns_get(&turns, args[2], args[3], "turns") == 0;
    if (ok && args[4] != Py_None) {
        items = PyMapping_Items(args[4]);
        ok = items != NULL;
    }
    Py_ssize_t nu = items ? PyList_GET_SIZE(items) : 0;
    size_t count = (size_t)moves.n + (size_t)turns.n + (size_t)nu;
    ok = ok && reserve(self, count, (size_t)nu) == 0;
    if (ok) {
        fill_moves(self, self->changes, &moves);
        fill_turns(self->changes + moves.n, &turns);
        ok = !items || fill_updates(self, self->changes + moves.n + turns.n, items) == 0;
    }
    columns_release(&moves);
    columns_release(&turns);
    Py_XDECREF(items);
    if (!ok) {
        self->ticking = 0;
        return NULL;
    }
    PyThreadState *thread = PyEval_SaveThread();
    int rc = percept_tick(w, self->changes, count);
    PyEval_RestoreThread(thread);
    self->ticking = 0;
    if (rc < 0) {
        PyObject *e = error_new(rc, percept_errmsg(w));
        size_t bad = percept_errindex(w);
        if (e && bad != SIZE_MAX && set_new_attr(e, "index", PyLong_FromSize_t(bad)) < 0)
            Py_CLEAR(e);
        return raise_error(e);
    }
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- reading */

/* A new NumPy array of n items of `dtype`, and its memory in *view. */
static PyObject *new_array(Py_ssize_t n, PyObject *dtype, Py_buffer *view)
{
    if (!numpy_empty) {
        PyErr_SetString(PyExc_RuntimeError, "percept._percept: import percept, not its C part");
        return NULL;
    }
    PyObject *arr = PyObject_CallFunction(numpy_empty, "nO", n, dtype);
    if (arr && PyObject_GetBuffer(arr, view, PyBUF_WRITABLE) < 0)
        Py_CLEAR(arr);
    return arr;
}

/* events(): the last call's events, one memcpy from the event buffer into
 * an array the world keeps for reuse, if the caller holds neither (a new
 * one of the size needed, else). */
static PyObject *world_events(World *self, PyObject *unused)
{
    (void)unused;
    percept_world *w = world_of(self);
    if (!w)
        return NULL;
    size_t n;
    const percept_event *ev = percept_events(w, &n);
    int k = -1; /* a kept array the caller holds no more, one with room first */
    for (int i = 0; i < 2; i++) {
        PyObject *a = self->event_arrays[i];
        if ((!a || Py_REFCNT(a) == 1) && (k < 0 || self->event_caps[i] >= n))
            k = i;
    }
    Py_buffer view;
    PyObject *base;
    size_t cap;
    if (k >= 0 && self->event_arrays[k] && self->event_caps[k] >= n) {
        base = self->event_arrays[k];
        cap = self->event_caps[k];
        if (PyObject_GetBuffer(base, &view, PyBUF_WRITABLE) < 0)
            return NULL;
        Py_INCREF(base);
    } else {
        cap = k >= 0 ? n + n / 4 : n; /* a kept one, with room for the ticks to come */
        base = new_array((Py_ssize_t)cap, event_dtype, &view);
        if (!base)
            return NULL;
        if (k >= 0) {
            Py_XDECREF(self->event_arrays[k]);
            Py_INCREF(base);
            self->event_arrays[k] = base;
            self->event_caps[k] = cap;
        }
    }
    PyObject *rows = NULL;
    if ((size_t)view.len != cap * sizeof *ev)
        PyErr_SetString(PyExc_RuntimeError, "percept: EVENT_DTYPE does not fit percept_event");
    else
        rows = PySequence_GetSlice(base, 0, (Py_ssize_t)n);
    if (rows && n)
        memcpy(view.buf, ev, n * sizeof *ev);
    PyBuffer_Release(&view);
    Py_DECREF(base);
    return rows;
}

/* perceives(observer, target, sense) -> bool */
static PyObject *world_perceives(World *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"observer", "target", "sense"};
    PyObject *a[3];
    percept_world *w = world_of(self);
    percept_id o, t;
    percept_sense s;
    if (!w || gather("perceives", args, nargs, kwnames, names, 3, 3, a) < 0 ||
        to_u32(a[0], &o, "an ID") < 0 || to_u32(a[1], &t, "an ID") < 0 ||
        to_sense(self, a[2], &s) < 0)
        return NULL;
    int rc = percept_perceives(w, o, t, s);
    if (rc < 0)
        return fail_read(rc, "percept_perceives");
    return PyBool_FromLong(rc == 1);
}

typedef int (*list_fn)(const percept_world *, percept_id, percept_sense, percept_id *, size_t,
                       size_t *);

/* The IDs a list call gives, as a NumPy uint32 array written in place. */
static PyObject *id_list(World *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const char *fn, list_fn call, const char *call_name)
{
    static const char *const names[] = {"id", "sense"};
    PyObject *a[2];
    percept_world *w = world_of(self);
    percept_id id;
    percept_sense s;
    if (!w || gather(fn, args, nargs, kwnames, names, 2, 2, a) < 0 ||
        to_u32(a[0], &id, "an ID") < 0 || to_sense(self, a[1], &s) < 0)
        return NULL;
    size_t n = 0;
    int rc = call(w, id, s, NULL, 0, &n);
    if (rc < 0)
        return fail_read(rc, call_name);
    Py_buffer view;
    PyObject *arr = new_array((Py_ssize_t)n, id_dtype, &view);
    if (!arr)
        return NULL;
    rc = call(w, id, s, view.buf, n, &n);
    PyBuffer_Release(&view);
    if (rc < 0) {
        Py_DECREF(arr);
        return fail_read(rc, call_name);
    }
    return arr;
}

/* perceived(observer, sense): whom it perceives, ascending. */
static PyObject *world_perceived(World *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    return id_list(self, args, nargs, kwnames, "perceived", percept_perceived, "percept_perceived");
}

/* perceived_by(target, sense): who perceives it, ascending. */
static PyObject *world_perceived_by(World *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    return id_list(self, args, nargs, kwnames, "perceived_by", percept_perceived_by,
                   "percept_perceived_by");
}

static Py_ssize_t world_len(World *self)
{
    return world_of(self) ? (Py_ssize_t)percept_entity_count(self->w) : -1;
}

/* `id in w`: any integer; one that is no ID is in no world. */
static int world_contains(World *self, PyObject *key)
{
    if (!world_of(self))
        return -1;
    uint32_t id;
    if (to_u32(key, &id, "an ID") < 0) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    return percept_contains(self->w, id);
}

/* ---------------------------------------------------------------- the module */

#define FASTCALL_KW(fn) (PyCFunction)(void (*)(void))(fn), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef world_methods[] = {
    {"add", FASTCALL_KW(world_add),
     "add(id, x=0, y=0, z=0, facing=None, tags=0, hidden=(), **senses)\n\n"
     "Add entity `id`. Each sense keyword is a sense's name: a range, or a dict\n"
     "of range, margin, fov and ignore. `hidden`: the senses it is hidden from."},
    {"update", FASTCALL_KW(world_update),
     "update(id, **fields)\n\nChange the given fields of the entity (add()'s keywords)\n"
     "as one change; the others stay."},
    {"move", FASTCALL_KW(world_move),
     "move(id, x, y, z=None)\n\nMove the entity; without z, its height stays."},
    {"turn", FASTCALL_KW(world_turn),
     "turn(id, fx, fy, fz=0)\n\nTurn the entity to face (fx, fy, fz)."},
    {"remove", (PyCFunction)world_remove, METH_O, "remove(id)\n\nRemove the entity."},
    {"set_range", FASTCALL_KW(world_set_range),
     "set_range(id, sense, range)\n\nSet one sense's range (0: the entity lacks it)."},
    {"set_hidden", FASTCALL_KW(world_set_hidden),
     "set_hidden(id, sense, hidden)\n\nHide the entity from a sense, or show it."},
    {"emit", FASTCALL_KW(world_emit),
     "emit(sense, x, y, z=0, strength=0, source=None, tags=0)\n\nA one-shot stimulus."},
    {"_tick", (PyCFunction)(void (*)(void))world_tick, METH_FASTCALL,
     "_tick(move_ids, positions, turn_ids, facings, updates): use tick()."},
    {"events", (PyCFunction)world_events, METH_NOARGS,
     "events()\n\nThe last call's events, a NumPy array of EVENT_DTYPE."},
    {"perceives", FASTCALL_KW(world_perceives), "perceives(observer, target, sense) -> bool"},
    {"perceived", FASTCALL_KW(world_perceived),
     "perceived(observer, sense)\n\nThe IDs the observer perceives, ascending, a uint32 array."},
    {"perceived_by", FASTCALL_KW(world_perceived_by),
     "perceived_by(target, sense)\n\nThe IDs that perceive the target, ascending."},
    {"close", (PyCFunction)world_close, METH_NOARGS,
     "close()\n\nClose the world; a closed world refuses every call but close()."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef world_getset[] = {
    {"senses", (getter)world_senses, NULL, "The senses' names; an event's sense indexes them.",
     NULL},
    {"closed", (getter)world_closed, NULL, "Whether the world is closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods world_as_sequence = {
    .sq_length = (lenfunc)world_len,
    .sq_contains = (objobjproc)world_contains,
};

/* PyVarObject_HEAD_INIT brings its own ','. */
/* clang-format off */
static PyTypeObject WorldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "percept._percept.World",
    .tp_basicsize = sizeof(World),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A percept world: its entities, and who perceives whom.",
    .tp_new = world_new,
    .tp_dealloc = (destructor)world_dealloc,
    .tp_methods = world_methods,
    .tp_getset = world_getset,
    .tp_as_sequence = &world_as_sequence,
};
/* clang-format on */

/* _bind_numpy(empty, event_dtype, id_dtype): what the arrays are made with. */
static PyObject *bind_numpy(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *empty, *events, *ids;
    if (!PyArg_ParseTuple(args, "OOO:_bind_numpy", &empty, &events, &ids))
        return NULL;
    Py_XDECREF(numpy_empty);
    Py_XDECREF(event_dtype);
    Py_XDECREF(id_dtype);
    Py_INCREF(empty);
    Py_INCREF(events);
    Py_INCREF(ids);
    numpy_empty = empty;
    event_dtype = events;
    id_dtype = ids;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"_bind_numpy", bind_numpy, METH_VARARGS, "_bind_numpy(empty, event_dtype, id_dtype)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "percept._percept",
    "The C part of the percept package.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

/* EVENT_LAYOUT: (sizeof, ((name, offset, size, kind), ...)) of percept_event,
 * kind "i", "u" or "f", for the dtype that __init__.py builds on it. */
#define EVENT_FIELD(name, kind)                                                                    \
    Py_BuildValue("(snns)", #name, (Py_ssize_t)offsetof(percept_event, name),                      \
                  (Py_ssize_t)sizeof(((percept_event *)0)->name), kind)

static PyObject *event_layout(void)
{
    return Py_BuildValue("(n(NNNNNNNN))", (Py_ssize_t)sizeof(percept_event), EVENT_FIELD(kind, "i"),
                         EVENT_FIELD(sense, "i"), EVENT_FIELD(observer, "u"),
                         EVENT_FIELD(target, "u"), EVENT_FIELD(x, "f"), EVENT_FIELD(y, "f"),
                         EVENT_FIELD(z, "f"), EVENT_FIELD(has_source, "i"));
}

PyMODINIT_FUNC PyInit__percept(void);
PyMODINIT_FUNC PyInit__percept(void)
{
    if (PyType_Ready(&WorldType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    PyObject *defaults = Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "status", Py_None,
                                       "status_name", Py_None, "message", Py_None, "line", Py_None,
                                       "section", Py_None, "key", Py_None, "index", Py_None);
    if (defaults)
        Error = PyErr_NewExceptionWithDoc(
            "percept.Error",
            "A call percept refused: .status (negative), .status_name, .message; .line,\n"
            ".section and .key when a world could not be opened; .index, the entry a\n"
            "tick was refused for.",
            NULL, defaults);
    Py_XDECREF(defaults);
    static const struct {
        const char *name;
        int value;
    } constants[] = {
        {"ENTER", PERCEPT_ENTER},
        {"LEAVE", PERCEPT_LEAVE},
        {"MOVE", PERCEPT_MOVE},
        {"STIMULUS", PERCEPT_STIMULUS},
        {"EINVAL", PERCEPT_EINVAL},
        {"ENOMEM", PERCEPT_ENOMEM},
        {"EEXIST", PERCEPT_EEXIST},
        {"ENOENT", PERCEPT_ENOENT},
        {"EBUSY", PERCEPT_EBUSY},
        {"ECONFIG", PERCEPT_ECONFIG},
        {"EPLUGIN", PERCEPT_EPLUGIN},
        {"EIO", PERCEPT_EIO},
        {"MAX_SENSES", PERCEPT_MAX_SENSES},
    };
    int ok = Error != NULL;
    for (size_t i = 0; ok && i < sizeof constants / sizeof constants[0]; i++)
        ok = PyModule_AddIntConstant(m, constants[i].name, constants[i].value) == 0;
    Py_INCREF(&WorldType);
    Py_XINCREF(Error);
    ok = ok && PyModule_AddObject(m, "World", (PyObject *)&WorldType) == 0;
    ok = ok && PyModule_AddObject(m, "Error", Error) == 0;
    ok = ok && PyModule_AddObject(m, "EVENT_LAYOUT", event_layout()) == 0;
    ok = ok && PyModule_AddStringConstant(m, "VERSION", percept_version()) == 0;
    if (!ok) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
