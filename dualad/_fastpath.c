/*
 * dualad._fastpath: eager mode's hot path, compiled (optional).
 *
 * What it is: the hottest cases of Python code of dualad, in C, each doing exactly what that
 * code does for the cases it takes and returning ``MISS`` (having run nothing) for the rest,
 * where the Python code runs. The Python code stays the reference, and the whole path where
 * this module is not built (the build is optional; DUALAD_PURE_PYTHON=1 switches it off).
 * The parts, one subject each (included below, one translation unit):
 * - _fastpath_eager.c: ``_dispatch``'s fast callers (``unary_caller`` / ``binary_caller``)
 *   with no level, and the tape's recorder (``rev.record.record_node``) for their nodes;
 * - _fastpath_match.c: ``tracing.graph_match``'s matcher, its checks read from a plan;
 * - _fastpath_forward.c: ``fwd.compiled``'s rule branch, rules' replays run as plans;
 * - _fastpath_methods.c: Tensor's operator methods (``Method``: ``x * y`` with no frame).
 *
 * Why C: per op, the Python callers, recorder and matcher executed ~150 bytecodes around a
 * NumPy call of ~0.25 us on small arrays; that interpretation, not the maths, was most of
 * eager mode's cost (issue 15 item 6).
 *
 * Layout: Python objects' slots are read and written at the offsets of their member
 * descriptors, taken once at install time from the classes themselves (``Tensor``, ``OpDef``,
 * ``OpNode``, ``ArgMeta``, ``ViewInfo``, ``DualLevel``), so the C code never assumes a layout
 * the Python classes do not have. A slot that is unset (NULL) or holds an unexpected type
 * sends the call back to Python. CPython with its GIL only (``_dispatch`` checks).
 *
 * Layers: the module imports nothing. The core (``_dispatch``) installs the core's objects
 * (``install_core``); the tape (``rev.record``, above it) its node layout and helpers
 * (``install_tape``, through ``_dispatch.install_tape``); forward mode (``fwd.compiled``) its
 * rule table and the dual level's layout (``install_forward``).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* ---- installed by the core (install_core) ---- */
static PyTypeObject *TensorType = NULL;
static PyTypeObject *NdarrayType = NULL; /* numpy.ndarray */
static PyObject *ACTIVE = NULL;     /* list: non-empty while some thread has a level */
static PyObject *GRAD = NULL;       /* the per-thread state (threading.local) */
static PyObject *MODULES = NULL;    /* dict: array type -> array module */
static PyObject *NP_SCALARS = NULL; /* frozenset of NumPy scalar types made 0-d arrays */
static PyObject *ASARRAY = NULL;    /* numpy.asarray */
static PyObject *EMPTY = NULL;      /* the shared empty params dict */
static PyObject *MISS = NULL;       /* returned for "take the Python path" */
static PyObject *RECORD_PY = NULL;  /* the Python recorder (record_node) */
static PyObject *ZERO = NULL;
static PyObject *str_enabled = NULL, *str_shape = NULL, *str_dtype = NULL, *str_variable = NULL;
static Py_ssize_t T_data, T_out_nr, T_meta, T_fw, T_vc, T_view, T_rg, T_node, T_fwsig;
static Py_ssize_t O_node_cls, O_save_args, O_save_masks, O_save_out;

/* ---- installed by the tape (install_tape) ---- */
static int tape_ready = 0;
static PyTypeObject *OpNodeType = NULL;
static PyTypeObject *ArgMetaType = NULL;
static PyObject *SEQ = NULL;          /* itertools.count of node sequence numbers */
static PyObject *ACCUMULATOR = NULL;  /* rev.record._accumulator(tensor) */
static PyObject *RECORD_HOOKS = NULL; /* list: non-empty while hooks/anomaly need every node */
static PyObject *DUALS_LIVE = NULL;   /* list: non-empty while some dual level lives */
static PyObject *FIRST = NULL, *BOTH = NULL, *FIRST_OF_TWO = NULL, *SECOND_OF_TWO = NULL;
static PyObject *NO_EDGE = NULL;
static Py_ssize_t N_seq, N_extra, N_op, N_params, N_freed, N_out_data, N_edges, N_needs,
    N_args, N_versions, N_nout, N_out_meta, N_out_versions, M_shape, M_dtype;

static int
offset_of(PyObject *cls, const char *name, Py_ssize_t *out)
{
    PyObject *d = PyObject_GetAttrString(cls, name);
    if (d == NULL)
        return -1;
    if (Py_TYPE(d) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "_fastpath: %R.%s is not a slot", cls, name);
        Py_DECREF(d);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "_fastpath: %R.%s is not an object slot", cls, name);
        Py_DECREF(d);
        return -1;
    }
    *out = m->offset;
    Py_DECREF(d);
    return 0;
}

static void
keep(PyObject **target, PyObject *value)
{
    Py_XINCREF(value);
    Py_XSETREF(*target, value);
}

static PyObject *
install_core(PyObject *mod, PyObject *args)
{
    PyObject *tensor, *active, *grad, *modules, *np_scalars, *asarray, *empty, *miss, *record,
        *opdef, *ndarray;
    if (!PyArg_ParseTuple(args, "O!OOO!O!OO!OOO!O!", &PyType_Type, &tensor, &active, &grad,
                          &PyDict_Type, &modules, &PyFrozenSet_Type, &np_scalars, &asarray,
                          &PyDict_Type, &empty, &miss, &record, &PyType_Type, &opdef,
                          &PyType_Type, &ndarray))
        return NULL;
    if (!PyList_CheckExact(active)) {
        PyErr_SetString(PyExc_TypeError, "_fastpath: ACTIVE must be a list");
        return NULL;
    }
    if (offset_of(tensor, "_data", &T_data) || offset_of(tensor, "_out_nr", &T_out_nr) ||
        offset_of(tensor, "_meta", &T_meta) || offset_of(tensor, "_fw", &T_fw) ||
        offset_of(tensor, "_vc", &T_vc) || offset_of(tensor, "_view", &T_view) ||
        offset_of(tensor, "_rg", &T_rg) || offset_of(tensor, "_node", &T_node) ||
        offset_of(tensor, "_fwsig", &T_fwsig) ||
        offset_of(opdef, "node_cls", &O_node_cls) || offset_of(opdef, "save_args", &O_save_args) ||
        offset_of(opdef, "save_masks", &O_save_masks) ||
        offset_of(opdef, "save_out", &O_save_out))
        return NULL;
    keep((PyObject **)&TensorType, tensor);
    keep((PyObject **)&NdarrayType, ndarray);
    keep(&ACTIVE, active);
    keep(&GRAD, grad);
    keep(&MODULES, modules);
    keep(&NP_SCALARS, np_scalars);
    keep(&ASARRAY, asarray);
    keep(&EMPTY, empty);
    keep(&MISS, miss);
    keep(&RECORD_PY, record);
    Py_RETURN_NONE;
}

static PyObject *
set_recorder(PyObject *mod, PyObject *record)
{
    keep(&RECORD_PY, record);
    Py_RETURN_NONE;
}

static PyObject *
install_tape(PyObject *mod, PyObject *args)
{
    PyObject *opnode, *argmeta, *seq, *accumulator, *record_hooks, *duals_live, *first, *both,
        *first_of_two, *second_of_two, *no_edge;
    if (!PyArg_ParseTuple(args, "O!O!OOO!O!O!O!O!O!O!", &PyType_Type, &opnode, &PyType_Type,
                          &argmeta, &seq, &accumulator, &PyList_Type, &record_hooks,
                          &PyList_Type, &duals_live, &PyTuple_Type, &first, &PyTuple_Type, &both,
                          &PyTuple_Type, &first_of_two, &PyTuple_Type, &second_of_two,
                          &PyTuple_Type, &no_edge))
        return NULL;
    if (offset_of(opnode, "_seq", &N_seq) || offset_of(opnode, "_extra", &N_extra) ||
        offset_of(opnode, "_op", &N_op) || offset_of(opnode, "_params", &N_params) ||
        offset_of(opnode, "_freed", &N_freed) || offset_of(opnode, "_out_data", &N_out_data) ||
        offset_of(opnode, "_edges", &N_edges) || offset_of(opnode, "_needs", &N_needs) ||
        offset_of(opnode, "_args", &N_args) || offset_of(opnode, "_versions", &N_versions) ||
        offset_of(opnode, "_nout", &N_nout) || offset_of(opnode, "_out_meta", &N_out_meta) ||
        offset_of(opnode, "_out_versions", &N_out_versions) ||
        offset_of(argmeta, "shape", &M_shape) || offset_of(argmeta, "dtype", &M_dtype))
        return NULL;
    keep((PyObject **)&OpNodeType, opnode);
    keep((PyObject **)&ArgMetaType, argmeta);
    keep(&SEQ, seq);
    keep(&ACCUMULATOR, accumulator);
    keep(&RECORD_HOOKS, record_hooks);
    keep(&DUALS_LIVE, duals_live);
    keep(&FIRST, first);
    keep(&BOTH, both);
    keep(&FIRST_OF_TWO, first_of_two);
    keep(&SECOND_OF_TWO, second_of_two);
    keep(&NO_EDGE, no_edge);
    tape_ready = 1;
    Py_RETURN_NONE;
}

/* A fresh Tensor holding ``data`` (a reference it steals): ``_tensor.wrap``'s slots (no grad,
 * no node, no tangent); NULL on error (``data`` released). The recorder then sets ``_rg`` and
 * ``_node`` of a result it records. */
static PyObject *
new_tensor(PyObject *data)
{
    PyObject *t = TensorType->tp_alloc(TensorType, 0);
    if (t == NULL) {
        Py_DECREF(data);
        return NULL;
    }
    SLOT(t, T_data) = data;
    SLOT(t, T_rg) = Py_NewRef(Py_False);
    SLOT(t, T_out_nr) = Py_NewRef(ZERO);
    SLOT(t, T_node) = Py_NewRef(Py_None);
    SLOT(t, T_meta) = Py_NewRef(Py_None);
    SLOT(t, T_vc) = Py_NewRef(Py_None);
    SLOT(t, T_view) = Py_NewRef(Py_None);
    SLOT(t, T_fw) = Py_NewRef(Py_None);
    SLOT(t, T_fwsig) = Py_NewRef(Py_None);
    return t;
}

/* the parts, by subject (one translation unit: they share the state above) */
#include "_fastpath_eager.c"
#include "_fastpath_match.c"
#include "_fastpath_forward.c"
#include "_fastpath_methods.c"

static PyMethodDef methods[] = {
    {"install_core", install_core, METH_VARARGS,
     "install_core(Tensor, ACTIVE, GRAD, modules, np_scalars, asarray, EMPTY, MISS, record, "
     "OpDef, ndarray): the core's objects."},
    {"install_tape", install_tape, METH_VARARGS,
     "install_tape(OpNode, ArgMeta, sequence, accumulator, RECORD_HOOKS, DUALS_LIVE, FIRST, "
     "BOTH, FIRST_OF_TWO, SECOND_OF_TWO, NO_EDGE): the tape's node layout and helpers."},
    {"set_recorder", set_recorder, METH_O, "set_recorder(record_node): the Python recorder."},
    {"unary", (PyCFunction)(void (*)(void))unary, METH_FASTCALL,
     "unary(state, x): the fast path of a one-argument op, or MISS."},
    {"binary", (PyCFunction)(void (*)(void))binary, METH_FASTCALL,
     "binary(state, a, b): the fast path of a two-argument op, or MISS."},
    {"install_forward", install_forward, METH_VARARGS,
     "install_forward(RULES, DEFAULT_DTYPE, DualLevel): forward mode's rule table and slots."},
    {"forward_alone", (PyCFunction)(void (*)(void))forward_alone, METH_FASTCALL,
     "forward_alone(level, op, args): a compiled forward rule's dual result, or MISS."},
    {"run_plan", (PyCFunction)(void (*)(void))run_plan_entry, METH_FASTCALL,
     "run_plan(plan, a, ta, b, tb): a forward rule's plan (tracing.tangents._plan) run."},
    {"forward_entry", (PyCFunction)(void (*)(void))forward_entry, METH_FASTCALL,
     "forward_entry(level, fallback, op, args, stack): forward_alone, else fallback."},
    {"match_graph", (PyCFunction)(void (*)(void))match_graph, METH_FASTCALL,
     "match_graph(plan, root, grad_data): (arrays, nodes, leaves) when the graph from root has "
     "the plan's structure, else None."},
    {"release_graph", (PyCFunction)(void (*)(void))release_graph, METH_FASTCALL,
     "release_graph(kinds, nodes): the nodes drop what they saved (kind 1 arguments, 2 output)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "dualad._fastpath",
    "The eager fast path of one- and two-argument ops and their graph nodes, in C (optional; "
    "see the comment at the top of _fastpath.c).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__fastpath(void)
{
    ZERO = PyLong_FromLong(0);
    str_enabled = PyUnicode_InternFromString("enabled");
    str_shape = PyUnicode_InternFromString("shape");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_variable = PyUnicode_InternFromString("variable");
    if (ZERO == NULL || str_enabled == NULL || str_shape == NULL || str_dtype == NULL ||
        str_variable == NULL)
        return NULL;
    str_levels = PyUnicode_InternFromString("levels");
    str_process_alone = PyUnicode_InternFromString("process_alone");
    if (str_levels == NULL || str_process_alone == NULL || PyType_Ready(&MethodType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Method", (PyObject *)&MethodType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
