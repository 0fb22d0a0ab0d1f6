/*
 * _fastpath_methods.c: Tensor's operator methods (Method)
 *
 * Part of dualad._fastpath, included by _fastpath.c after its shared declarations (one
 * translation unit: the parts share its static state). See _fastpath.c's top comment.
 */

/* ---------------------------------------------------------------------------------------- */
/* Tensor's operator methods (``Method``)                                                    */

/* A fast caller as a Tensor operator method (``Tensor.__mul__`` ...): ``x * y`` calls it
 * without a Python frame. It does what the caller's Python function (``fallback``) does:
 * with one transform level alone on this thread, that level's ``process_alone``; with no
 * level, the compiled fast path; everything else (and every MISS) is the Python function's.
 * Bound like a function (``x.__mul__(y)``); its name, doc and signature are the function's
 * (``__wrapped__``). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *state;    /* (op, impl, kernel, differentiable) */
    PyObject *fallback; /* the Python caller */
    Py_ssize_t nargs;   /* 1 or 2 */
} MethodObject;

static PyObject *str_levels = NULL, *str_process_alone = NULL;

/* the one level alone on this thread takes it (``process_alone``), or MISS */
/* This thread's level stack (``GRAD.levels``, a new reference). A thread's stack is one list
 * for the thread's life (made once by its GRAD state, changed in place only), so the last
 * thread's is kept, keyed by its thread-state id (unique in the process, never reused). */
static unsigned long long levels_thread = 0;
static PyObject *levels_cached = NULL;

static PyObject *
thread_levels(void)
{
    unsigned long long id = PyThreadState_GetID(PyThreadState_Get());
    if (levels_cached != NULL && id == levels_thread)
        return Py_NewRef(levels_cached);
    PyObject *levels = PyObject_GetAttr(GRAD, str_levels);
    if (levels == NULL)
        return NULL;
    levels_thread = id;
    Py_XSETREF(levels_cached, Py_NewRef(levels));
    return levels;
}

static PyObject *
to_level(PyObject *op, PyObject *const *args, Py_ssize_t n)
{
    PyObject *levels = thread_levels();
    if (levels == NULL)
        return NULL;
    PyObject *result = MISS;
    if (PyList_Check(levels) && PyList_GET_SIZE(levels) == 1) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (PyList_CheckExact(args[i]) || PyTuple_CheckExact(args[i]))
                goto miss;
        PyObject *level = PyList_GET_ITEM(levels, 0);
        if (forward_ready && Py_TYPE(level) == DualLevelType) {
            /* a dual level: its compiled rule straight away (what its process_alone does
             * first), its process_alone when there is none */
            PyObject *call = n == 1 ? PyTuple_Pack(1, args[0]) : PyTuple_Pack(2, args[0], args[1]);
            if (call == NULL) {
                Py_DECREF(levels);
                return NULL;
            }
            Py_INCREF(level);
            result = forward(level, op, call);
            Py_DECREF(level);
            Py_DECREF(call);
            if (result != MISS) {
                Py_DECREF(levels);
                return result;
            }
            Py_DECREF(result);
        }
        PyObject *alone = PyObject_GetAttr(level, str_process_alone);
        if (alone == NULL) {
            Py_DECREF(levels);
            return NULL;
        }
        if (alone != Py_None) {
            PyObject *call = n == 1 ? PyTuple_Pack(1, args[0]) : PyTuple_Pack(2, args[0], args[1]);
            if (call == NULL) {
                Py_DECREF(alone);
                Py_DECREF(levels);
                return NULL;
            }
            PyObject *pass[3] = {op, call, levels};
            result = PyObject_Vectorcall(alone, pass, 3, NULL);
            Py_DECREF(call);
            Py_DECREF(alone);
            Py_DECREF(levels);
            return result;
        }
        Py_DECREF(alone);
    }
miss:
    Py_DECREF(levels);
    return Py_NewRef(MISS);
}

static PyObject *
method_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    MethodObject *m = (MethodObject *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n == m->nargs) {
        PyObject *out;
        if (PyList_GET_SIZE(ACTIVE))
            out = to_level(PyTuple_GET_ITEM(m->state, 0), args, n);
        else
            out = n == 1 ? unary_core(m->state, args[0]) : binary_core(m->state, args[0], args[1]);
        if (out != MISS)
            return out;
        Py_DECREF(out);
    }
    return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
}

static PyObject *
method_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *state, *fallback;
    Py_ssize_t nargs;
    if (!PyArg_ParseTuple(args, "OOn:Method", &state, &fallback, &nargs) || !valid_state(state))
        return NULL;
    if ((nargs != 1 && nargs != 2) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Method(state, fallback, nargs): nargs 1 or 2");
        return NULL;
    }
    MethodObject *m = (MethodObject *)type->tp_alloc(type, 0);
    if (m == NULL)
        return NULL;
    m->vectorcall = method_call;
    m->state = Py_NewRef(state);
    m->fallback = Py_NewRef(fallback);
    m->nargs = nargs;
    return (PyObject *)m;
}

static void
method_dealloc(PyObject *self)
{
    MethodObject *m = (MethodObject *)self;
    Py_XDECREF(m->state);
    Py_XDECREF(m->fallback);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
method_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *
method_getattro(PyObject *self, PyObject *name)
{
    PyObject *found = PyObject_GenericGetAttr(self, name);
    if (found != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return found;
    PyErr_Clear();
    return PyObject_GetAttr(((MethodObject *)self)->fallback, name);
}

static PyObject *
method_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<compiled %R>", ((MethodObject *)self)->fallback);
}

#define FORWARD_ATTRIBUTE(attr)                                                                \
    static PyObject *method_##attr(PyObject *self, void *closure)                             \
    {                                                                                          \
        return PyObject_GetAttrString(((MethodObject *)self)->fallback, "__" #attr "__");      \
    }
FORWARD_ATTRIBUTE(name)
FORWARD_ATTRIBUTE(qualname)
FORWARD_ATTRIBUTE(doc)
FORWARD_ATTRIBUTE(module)

static PyObject *
method_wrapped(PyObject *self, void *closure)
{
    return Py_NewRef(((MethodObject *)self)->fallback);
}

static PyGetSetDef method_getset[] = {
    {"__name__", method_name, NULL, NULL, NULL},
    {"__qualname__", method_qualname, NULL, NULL, NULL},
    {"__doc__", method_doc, NULL, NULL, NULL},
    {"__module__", method_module, NULL, NULL, NULL},
    {"__wrapped__", method_wrapped, NULL, "the Python function it stands for", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject MethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dualad._fastpath.Method",
    .tp_basicsize = sizeof(MethodObject),
    .tp_dealloc = method_dealloc,
    .tp_vectorcall_offset = offsetof(MethodObject, vectorcall),
    .tp_repr = method_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = method_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "Method(state, fallback, nargs): a fast caller as a Tensor operator method.",
    .tp_getset = method_getset,
    .tp_descr_get = method_get,
    .tp_new = method_new,
};
