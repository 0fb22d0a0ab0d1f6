/*
 * dualad._fastpath: the eager fast path of one- and two-argument ops, compiled (optional).
 *
 * What it is: the body of ``_dispatch``'s fast callers (``unary_caller`` / ``binary_caller``)
 * and of the tape's recorder (``rev.record.record_node``) for their hottest shapes, in C. It
 * does exactly what those Python functions do for the cases it takes and nothing else; every
 * other case returns ``MISS`` before anything ran, and the Python body runs it. The Python code
 * stays the reference (and the whole path where this module is not built: the build is
 * optional, and DUALAD_PURE_PYTHON=1 switches it off).
 *
 * Taken here: no transform level in the process (``ACTIVE`` empty), plain ``Tensor`` arguments
 * that are not views (or exact Python float/int/bool/complex scalars in a binary op), tensor
 * data of one array type, an impl that returns without an exception. Recorded here: nodes of
 * one output for one or two arguments while no saved-tensor hook or anomaly mode is active
 * (``RECORD_HOOKS`` empty) and the op's node class exists; otherwise the Python recorder is
 * called with the same arguments.
 *
 * Why C: per op, the Python callers and recorder execute ~150 bytecodes around a NumPy call
 * of ~0.25 us on small arrays; that interpretation, not the maths, was most of eager reverse
 * mode's cost (issue 15 item 6).
 *
 * Layout: Python objects' slots are read and written at the offsets of their member
 * descriptors, taken once at install time from the classes themselves (``Tensor``, ``OpDef``,
 * ``OpNode``, ``ArgMeta``), so the C code never assumes a layout the Python classes do not
 * have. A slot that is unset (NULL) or holds an unexpected type sends the call back to Python.
 *
 * Layers: the core (``_dispatch``) installs the core's objects (``install_core``); the tape
 * (``rev.record``, above it) installs the node layout and its helpers (``install_tape``),
 * through ``_dispatch.install_tape``, as it installs its Python recorder.
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

/* ---------------------------------------------------------------------------------------- */
/* the recorder (rev.record.record_node's one- and two-argument branches, results=None)      */

/* ``(node, out_nr)`` of a tensor that requires grad, or its leaf's ``(AccumulateGrad, 0)``
 * (record.py's ``_edge``): a new reference, or NULL with an exception set. */
static PyObject *
edge_of(PyObject *t)
{
    PyObject *n = SLOT(t, T_node);
    if (n == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_node");
        return NULL;
    }
    if (n != Py_None) {
        PyObject *nr = SLOT(t, T_out_nr);
        if (nr == NULL) {
            PyErr_SetString(PyExc_AttributeError, "_out_nr");
            return NULL;
        }
        return PyTuple_Pack(2, n, nr);
    }
    PyObject *acc = PyObject_CallOneArg(ACCUMULATOR, t);
    if (acc == NULL)
        return NULL;
    PyObject *edge = PyTuple_Pack(2, acc, ZERO);
    Py_DECREF(acc);
    return edge;
}

/* the saved version of a kept argument: ``0 if box is None else box[0]`` (new reference) */
static PyObject *
version_of(PyObject *t)
{
    PyObject *box = SLOT(t, T_vc);
    if (box == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_vc");
        return NULL;
    }
    if (box == Py_None)
        return Py_NewRef(ZERO);
    return PySequence_GetItem(box, 0);
}

/* an ArgMeta stand-in for a tensor whose value the VJP does not read (new reference) */
static PyObject *
argmeta_of(PyObject *t)
{
    PyObject *data = SLOT(t, T_data);
    PyObject *shape = PyObject_GetAttr(data, str_shape);
    if (shape == NULL)
        return NULL;
    PyObject *dtype = PyObject_GetAttr(data, str_dtype);
    if (dtype == NULL) {
        Py_DECREF(shape);
        return NULL;
    }
    PyObject *meta = ArgMetaType->tp_alloc(ArgMetaType, 0);
    if (meta == NULL) {
        Py_DECREF(shape);
        Py_DECREF(dtype);
        return NULL;
    }
    SLOT(meta, M_shape) = shape;
    SLOT(meta, M_dtype) = dtype;
    return meta;
}

/* OpNode._save_outputs((result,)) for a fresh one-output result */
static int
save_output(PyObject *node, PyObject *r)
{
    PyObject *box = SLOT(r, T_vc);
    if (box == Py_None) {
        box = PyList_New(1);
        if (box == NULL)
            return -1;
        PyList_SET_ITEM(box, 0, Py_NewRef(ZERO));
        Py_SETREF(SLOT(r, T_vc), box);
    }
    PyObject *fw = SLOT(r, T_fw);
    if (fw == Py_None && PyList_GET_SIZE(DUALS_LIVE)) {
        /* a dual level attaches the output's tangent after this node is recorded: share the
         * (still empty) tangent dict so the unpacked output sees it (fwd-over-rev) */
        fw = PyDict_New();
        if (fw == NULL)
            return -1;
        Py_SETREF(SLOT(r, T_fw), fw);
    }
    PyObject *version = PySequence_GetItem(box, 0);
    if (version == NULL)
        return -1;
    PyObject *entry = PyTuple_Pack(3, box, version, fw);
    Py_DECREF(version);
    if (entry == NULL)
        return -1;
    PyObject *versions = PyTuple_Pack(1, entry);
    Py_DECREF(entry);
    if (versions == NULL)
        return -1;
    PyObject *out_data = PyTuple_Pack(1, SLOT(r, T_data));
    if (out_data == NULL) {
        Py_DECREF(versions);
        return -1;
    }
    Py_XSETREF(SLOT(node, N_out_data), out_data);
    Py_XSETREF(SLOT(node, N_out_versions), versions);
    return 0;
}

static PyObject *
record_py(PyObject *op, PyObject *args, PyObject *result)
{
    PyObject *call[4] = {op, args, EMPTY, result};
    return PyObject_Vectorcall(RECORD_PY, call, 4, NULL);
}

/* ``record_node(op, args, EMPTY, result)`` for one or two arguments (``ta``/``tb``: which are
 * tensors; the arguments are exact Tensors or exact Python scalars). 0, or -1 with an error. */
static int
record(PyObject *op, PyObject *a, PyObject *b, int nargs, int ta, int tb, PyObject *result)
{
    /* (the argument tuple: the Python recorder's argument, and a one-argument node's saved
     * arguments; a two-argument node saves a tuple of its own) */
    PyObject *args = nargs == 1 ? PyTuple_Pack(1, a) : NULL;
    if (nargs == 1 && args == NULL)
        return -1;
    PyObject *cls = SLOT(op, O_node_cls);
    PyObject *save_args = SLOT(op, O_save_args), *masks = SLOT(op, O_save_masks);
    PyObject *save_out = SLOT(op, O_save_out);
    if (!tape_ready || PyList_GET_SIZE(RECORD_HOOKS) || cls == NULL || cls == Py_None ||
        !PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, OpNodeType) ||
        save_args == NULL || masks == NULL || save_out == NULL) {
        if (args == NULL && (args = PyTuple_Pack(2, a, b)) == NULL)
            return -1;
        PyObject *r = record_py(op, args, result);
        Py_DECREF(args);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
        return 0;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    PyObject *node = type->tp_alloc(type, 0);
    if (node == NULL)
        goto fail_args;
    PyObject *seq = PyIter_Next(SEQ);
    if (seq == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "_fastpath: the node sequence ended");
        goto fail;
    }
    SLOT(node, N_seq) = seq;
    SLOT(node, N_extra) = Py_NewRef(Py_None);
    SLOT(node, N_op) = Py_NewRef(op);
    SLOT(node, N_params) = Py_NewRef(EMPTY);
    SLOT(node, N_freed) = Py_NewRef(Py_False);
    SLOT(node, N_out_data) = Py_NewRef(Py_None);
    int saves = PyObject_IsTrue(save_args);
    if (saves < 0)
        goto fail;
    if (nargs == 1) {
        PyObject *edge = edge_of(a);
        if (edge == NULL)
            goto fail;
        SLOT(node, N_edges) = PyTuple_Pack(1, edge);
        Py_DECREF(edge);
        if (SLOT(node, N_edges) == NULL)
            goto fail;
        SLOT(node, N_needs) = Py_NewRef(FIRST);
        int kept = saves;
        if (kept && masks != Py_None) {
            PyObject *keep_mask = PyObject_GetItem(masks, FIRST);
            if (keep_mask == NULL)
                goto fail;
            PyObject *first = PySequence_GetItem(keep_mask, 0);
            Py_DECREF(keep_mask);
            if (first == NULL)
                goto fail;
            kept = PyObject_IsTrue(first);
            Py_DECREF(first);
            if (kept < 0)
                goto fail;
        }
        if (kept) {
            PyObject *version = version_of(a);
            if (version == NULL)
                goto fail;
            SLOT(node, N_versions) = PyTuple_Pack(1, version);
            Py_DECREF(version);
            if (SLOT(node, N_versions) == NULL)
                goto fail;
            SLOT(node, N_args) = Py_NewRef(args);
        }
        else {
            PyObject *meta = argmeta_of(a);
            if (meta == NULL)
                goto fail;
            SLOT(node, N_args) = PyTuple_Pack(1, meta);
            Py_DECREF(meta);
            if (SLOT(node, N_args) == NULL)
                goto fail;
            SLOT(node, N_versions) = PyTuple_Pack(1, Py_None);
            if (SLOT(node, N_versions) == NULL)
                goto fail;
        }
    }
    else {
        PyObject *edge_a = NULL, *edge_b = NULL, *needs;
        if (tb && SLOT(b, T_rg) == Py_True) {
            edge_b = edge_of(b);
            if (edge_b == NULL)
                goto fail;
        }
        else
            edge_b = Py_NewRef(NO_EDGE);
        if (ta && SLOT(a, T_rg) == Py_True) {
            edge_a = edge_of(a);
            if (edge_a == NULL) {
                Py_DECREF(edge_b);
                goto fail;
            }
            needs = edge_b != NO_EDGE ? BOTH : FIRST_OF_TWO;
        }
        else {
            edge_a = Py_NewRef(NO_EDGE);
            needs = SECOND_OF_TWO;
        }
        SLOT(node, N_edges) = PyTuple_Pack(2, edge_a, edge_b);
        Py_DECREF(edge_a);
        Py_DECREF(edge_b);
        if (SLOT(node, N_edges) == NULL)
            goto fail;
        SLOT(node, N_needs) = Py_NewRef(needs);
        int keep_a = 0, keep_b = 0;
        if (saves) {
            if (masks == Py_None)
                keep_a = keep_b = 1;
            else {
                PyObject *keep_mask = PyObject_GetItem(masks, needs);
                if (keep_mask == NULL)
                    goto fail;
                PyObject *ka = PySequence_GetItem(keep_mask, 0);
                PyObject *kb = ka == NULL ? NULL : PySequence_GetItem(keep_mask, 1);
                Py_DECREF(keep_mask);
                if (kb == NULL) {
                    Py_XDECREF(ka);
                    goto fail;
                }
                keep_a = PyObject_IsTrue(ka);
                keep_b = PyObject_IsTrue(kb);
                Py_DECREF(ka);
                Py_DECREF(kb);
                if (keep_a < 0 || keep_b < 0)
                    goto fail;
            }
        }
        PyObject *sa, *sb, *va, *vb;
        if (ta && keep_a) {
            sa = Py_NewRef(a);
            va = version_of(a);
        }
        else {
            sa = ta ? argmeta_of(a) : Py_NewRef(a);
            va = Py_NewRef(Py_None);
        }
        if (tb && keep_b) {
            sb = Py_NewRef(b);
            vb = version_of(b);
        }
        else {
            sb = tb ? argmeta_of(b) : Py_NewRef(b);
            vb = Py_NewRef(Py_None);
        }
        if (sa == NULL || sb == NULL || va == NULL || vb == NULL) {
            Py_XDECREF(sa);
            Py_XDECREF(sb);
            Py_XDECREF(va);
            Py_XDECREF(vb);
            goto fail;
        }
        SLOT(node, N_args) = PyTuple_Pack(2, sa, sb);
        SLOT(node, N_versions) = PyTuple_Pack(2, va, vb);
        Py_DECREF(sa);
        Py_DECREF(sb);
        Py_DECREF(va);
        Py_DECREF(vb);
        if (SLOT(node, N_args) == NULL || SLOT(node, N_versions) == NULL)
            goto fail;
    }
    Py_XDECREF(args);
    Py_XSETREF(SLOT(result, T_rg), Py_NewRef(Py_True));
    Py_XSETREF(SLOT(result, T_node), node); /* (the result holds the node's reference) */
    SLOT(node, N_nout) = PyLong_FromLong(1);
    if (SLOT(node, N_nout) == NULL)
        return -1;
    SLOT(node, N_out_meta) = Py_NewRef(Py_None);
    int outs = PyObject_IsTrue(save_out);
    if (outs < 0)
        return -1;
    if (outs && save_output(node, result) < 0)
        return -1;
    return 0;
fail:
    Py_DECREF(node);
fail_args:
    Py_XDECREF(args);
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* the callers                                                                               */

static inline int
is_scalar(PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    return t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type || t == &PyComplex_Type;
}

/* a Tensor's requires-grad flag: 1, 0, or -1 when it is not a bool (the Python path decides) */
static inline int
rg_of(PyObject *t)
{
    PyObject *v = SLOT(t, T_rg);
    return v == Py_True ? 1 : v == Py_False ? 0 : -1;
}

/* ``type(out) in _NP_SCALAR_TYPES``: a 0-d NumPy result becomes a 0-d array (new reference) */
static PyObject *
as_array(PyObject *out, PyObject *like)
{
    if (Py_TYPE(out) == Py_TYPE(like))
        return out;
    int scalar = PySet_Contains(NP_SCALARS, (PyObject *)Py_TYPE(out));
    if (scalar < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (!scalar)
        return out;
    PyObject *array = PyObject_CallOneArg(ASARRAY, out);
    Py_DECREF(out);
    return array;
}

/* the result Tensor (steals ``out``), its node recorded when ``rg`` and grad mode and the op
 * is differentiable */
static PyObject *
finish(PyObject *state, PyObject *out, PyObject *a, PyObject *b, int nargs, int ta, int tb,
       int rg)
{
    PyObject *r = TensorType->tp_alloc(TensorType, 0);
    if (r == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    SLOT(r, T_data) = out;
    SLOT(r, T_out_nr) = Py_NewRef(ZERO);
    SLOT(r, T_meta) = Py_NewRef(Py_None);
    SLOT(r, T_fw) = Py_NewRef(Py_None);
    SLOT(r, T_fwsig) = Py_NewRef(Py_None);
    SLOT(r, T_vc) = Py_NewRef(Py_None);
    SLOT(r, T_view) = Py_NewRef(Py_None);
    int records = 0;
    if (rg && PyTuple_GET_ITEM(state, 3) == Py_True) {
        PyObject *enabled = PyObject_GetAttr(GRAD, str_enabled);
        if (enabled == NULL) {
            Py_DECREF(r);
            return NULL;
        }
        records = PyObject_IsTrue(enabled);
        Py_DECREF(enabled);
        if (records < 0) {
            Py_DECREF(r);
            return NULL;
        }
    }
    if (records) {
        if (record(PyTuple_GET_ITEM(state, 0), a, b, nargs, ta, tb, r) < 0) {
            Py_DECREF(r);
            return NULL;
        }
    }
    else {
        SLOT(r, T_rg) = Py_NewRef(Py_False);
        SLOT(r, T_node) = Py_NewRef(Py_None);
    }
    return r;
}

/* run the op's kernel (or its impl with the array module); NULL with no error set: MISS */
static PyObject *
run(PyObject *state, PyObject *const *arrays, Py_ssize_t n, PyObject *xp_of)
{
    PyObject *kernel = PyTuple_GET_ITEM(state, 2), *out;
    if (kernel != Py_None)
        out = PyObject_Vectorcall(kernel, arrays, n, NULL);
    else {
        PyObject *xp = PyDict_GetItemWithError(MODULES, (PyObject *)Py_TYPE(xp_of));
        if (xp == NULL) {
            if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_Exception))
                PyErr_Clear();
            return NULL;
        }
        PyObject *call[3] = {xp, arrays[0], n == 2 ? arrays[1] : NULL};
        out = PyObject_Vectorcall(PyTuple_GET_ITEM(state, 1), call, n + 1, NULL);
    }
    /* the Python path re-runs it for a clear error (``except Exception``: not KeyboardInterrupt) */
    if (out == NULL && PyErr_ExceptionMatches(PyExc_Exception))
        PyErr_Clear();
    return out;
}

/* ``unary_caller``'s fast path for ``x``: the result, or MISS (nothing run) */
static PyObject *
unary_core(PyObject *state, PyObject *x)
{
    if (PyList_GET_SIZE(ACTIVE) || Py_TYPE(x) != TensorType || SLOT(x, T_view) != Py_None)
        return Py_NewRef(MISS);
    PyObject *data = SLOT(x, T_data);
    int rg = rg_of(x);
    if (data == NULL || rg < 0)
        return Py_NewRef(MISS);
    PyObject *out = run(state, &data, 1, data);
    if (out == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(MISS);
    out = as_array(out, data);
    if (out == NULL)
        return NULL;
    return finish(state, out, x, NULL, 1, 1, 0, rg);
}

/* ``binary_caller``'s fast path for ``a``, ``b``: the result, or MISS (nothing run) */
static PyObject *
binary_core(PyObject *state, PyObject *a, PyObject *b)
{
    if (PyList_GET_SIZE(ACTIVE))
        return Py_NewRef(MISS);
    int ta = Py_TYPE(a) == TensorType, tb = Py_TYPE(b) == TensorType, rg;
    PyObject *arrays[2], *like;
    if (ta) {
        if (SLOT(a, T_view) != Py_None || SLOT(a, T_data) == NULL || (rg = rg_of(a)) < 0)
            return Py_NewRef(MISS);
        arrays[0] = like = SLOT(a, T_data);
        if (tb) {
            int rgb = rg_of(b);
            if (SLOT(b, T_view) != Py_None || SLOT(b, T_data) == NULL || rgb < 0 ||
                Py_TYPE(SLOT(b, T_data)) != Py_TYPE(like))
                return Py_NewRef(MISS);
            arrays[1] = SLOT(b, T_data);
            rg = rg || rgb;
        }
        else if (is_scalar(b))
            arrays[1] = b;
        else
            return Py_NewRef(MISS);
    }
    else if (tb && is_scalar(a)) {
        if (SLOT(b, T_view) != Py_None || SLOT(b, T_data) == NULL || (rg = rg_of(b)) < 0)
            return Py_NewRef(MISS);
        arrays[0] = a;
        arrays[1] = like = SLOT(b, T_data);
    }
    else
        return Py_NewRef(MISS);
    PyObject *out = run(state, arrays, 2, like);
    if (out == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(MISS);
    out = as_array(out, like);
    if (out == NULL)
        return NULL;
    return finish(state, out, a, b, 2, ta, tb, rg);
}

static int
valid_state(PyObject *state)
{
    if (PyTuple_CheckExact(state) && PyTuple_GET_SIZE(state) == 4)
        return 1;
    PyErr_SetString(PyExc_TypeError, "_fastpath: a caller's state is (op, impl, kernel, flag)");
    return 0;
}

/* unary(state, x): ``unary_caller``'s fast path; state = (op, impl, kernel, differentiable) */
static PyObject *
unary(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !valid_state(args[0])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_fastpath.unary(state, x)");
        return NULL;
    }
    return unary_core(args[0], args[1]);
}

/* binary(state, a, b): ``binary_caller``'s fast path */
static PyObject *
binary(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !valid_state(args[0])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_fastpath.binary(state, a, b)");
        return NULL;
    }
    return binary_core(args[0], args[1], args[2]);
}

/* ---------------------------------------------------------------------------------------- */
/* the graph matcher (tracing.graph_match's generated ``match``, for a plan)                 */

/* ``plan`` (made by ``graph_match.make_plan``): (DEFAULT_DTYPE, default dtype, root gradient
 * type, leaf_clean, params_key, nodes, number of names, shapes, dtypes, leaf names, leaf
 * shapes, leaf dtypes); each node: (class, needs, kind, argument specs, parameter key or None,
 * edge specs), in the pass's order (node i has name i; leaves are named after the nodes).
 * Argument spec: (0, check version, check rg) a saved Tensor, (1, shape, dtype) a stand-in,
 * (2, value, sign) a float, (3, type, value) an int or bool, (4,) None. Edge spec: (0,) None,
 * (1, name) a node or leaf met before, (2, name) a new node, (3, name) a new leaf.
 * The checks are the generated matcher's, one for one (its module docstring says why each). */

#define MATCH_NAMES 4096

static int
equal(PyObject *a, PyObject *b)
{
    return a == b ? 1 : PyObject_RichCompareBool(a, b, Py_EQ);
}

/* The first fields of a NumPy array (NumPy's ``PyArrayObject_fields``): part of NumPy's ABI,
 * since its PyArray_NDIM / PyArray_DIMS / PyArray_DESCR are inline reads of these fields in
 * every compiled extension. Read only for exact ``numpy.ndarray`` objects, so that checking a
 * saved array's shape and dtype makes no tuple (no NumPy headers are needed at build time). */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_intptr_t *dimensions;
    Py_intptr_t *strides;
    PyObject *base;
    PyObject *descr;
} ArrayFields;

/* 1 when ``array``'s shape and dtype are ``shape`` and ``dtype``, 0 when not, -1 on error */
static int
layout_is(PyObject *array, PyObject *shape, PyObject *dtype)
{
    if (Py_TYPE(array) == NdarrayType && PyTuple_CheckExact(shape)) {
        ArrayFields *a = (ArrayFields *)array;
        if (a->nd != PyTuple_GET_SIZE(shape))
            return 0;
        for (int i = 0; i < a->nd; i++) {
            Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
            if (n == -1 && PyErr_Occurred())
                return -1;
            if (n != a->dimensions[i])
                return 0;
        }
        return equal(a->descr, dtype);
    }
    PyObject *s = PyObject_GetAttr(array, str_shape);
    if (s == NULL)
        return -1;
    int same = equal(s, shape);
    Py_DECREF(s);
    if (same != 1)
        return same;
    PyObject *d = PyObject_GetAttr(array, str_dtype);
    if (d == NULL)
        return -1;
    same = equal(d, dtype);
    Py_DECREF(d);
    return same;
}

/* one node's checks; 1 match, 0 no match, -1 error. Appends the arrays it reads. */
static int
match_node(PyObject *node, PyObject *spec, PyObject **names, Py_ssize_t n_names,
           PyObject *arrays, PyObject *params_key, PyObject *leaf_clean)
{
    if (Py_TYPE(node) != (PyTypeObject *)PyTuple_GET_ITEM(spec, 0))
        return 0;
    PyObject *extra = SLOT(node, N_extra), *freed = SLOT(node, N_freed);
    PyObject *needs = SLOT(node, N_needs), *args = SLOT(node, N_args);
    PyObject *edges = SLOT(node, N_edges), *params = SLOT(node, N_params);
    PyObject *versions = SLOT(node, N_versions);
    if (extra != Py_None || freed != Py_False || needs == NULL || args == NULL ||
        edges == NULL || params == NULL || !PyTuple_CheckExact(args) ||
        !PyTuple_CheckExact(edges))
        return 0;
    int r = equal(needs, PyTuple_GET_ITEM(spec, 1));
    if (r != 1)
        return r;
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(spec, 2));
    if (kind == 2) {
        PyObject *outs = SLOT(node, N_out_versions), *data = SLOT(node, N_out_data);
        if (outs == NULL || data == NULL || !PyTuple_CheckExact(outs) ||
            PyTuple_GET_SIZE(outs) < 1 || !PyTuple_CheckExact(data) || PyTuple_GET_SIZE(data) < 1)
            return 0;
        PyObject *entry = PyTuple_GET_ITEM(outs, 0);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 2)
            return 0;
        PyObject *now = PySequence_GetItem(PyTuple_GET_ITEM(entry, 0), 0);
        if (now == NULL)
            return -1;
        r = equal(now, PyTuple_GET_ITEM(entry, 1));
        Py_DECREF(now);
        if (r != 1)
            return r;
        if (PyList_Append(arrays, PyTuple_GET_ITEM(data, 0)) < 0)
            return -1;
    }
    PyObject *arg_specs = PyTuple_GET_ITEM(spec, 3);
    Py_ssize_t nargs = PyTuple_GET_SIZE(arg_specs);
    if (PyTuple_GET_SIZE(args) != nargs)
        return 0;
    for (Py_ssize_t j = 0; j < nargs; j++) {
        PyObject *a = PyTuple_GET_ITEM(args, j), *as = PyTuple_GET_ITEM(arg_specs, j);
        long code = PyLong_AsLong(PyTuple_GET_ITEM(as, 0));
        if (code == 0) { /* a saved Tensor */
            if (Py_TYPE(a) != TensorType || SLOT(a, T_fw) != Py_None || SLOT(a, T_data) == NULL)
                return 0;
            if (PyTuple_GET_ITEM(as, 1) == Py_True) { /* its version, as recorded */
                /* (a tuple, or a list from the recorder's general branch) */
                PyObject *recorded;
                if (versions != NULL && PyTuple_CheckExact(versions) &&
                    PyTuple_GET_SIZE(versions) > j)
                    recorded = PyTuple_GET_ITEM(versions, j);
                else if (versions != NULL && PyList_CheckExact(versions) &&
                         PyList_GET_SIZE(versions) > j)
                    recorded = PyList_GET_ITEM(versions, j);
                else
                    return 0;
                PyObject *box = SLOT(a, T_vc), *now;
                if (box == NULL)
                    return 0;
                now = box == Py_None ? Py_NewRef(ZERO) : PySequence_GetItem(box, 0);
                if (now == NULL)
                    return -1;
                r = equal(now, recorded);
                Py_DECREF(now);
                if (r != 1)
                    return r;
                if (PyTuple_GET_ITEM(as, 2) == Py_True && SLOT(a, T_rg) != Py_True)
                    return 0; /* detached in place since */
            }
            if (PyList_Append(arrays, SLOT(a, T_data)) < 0)
                return -1;
        }
        else if (code == 1) { /* a shape/dtype stand-in */
            if (Py_TYPE(a) != ArgMetaType || SLOT(a, M_shape) == NULL || SLOT(a, M_dtype) == NULL)
                return 0;
            r = equal(SLOT(a, M_shape), PyTuple_GET_ITEM(as, 1));
            if (r != 1)
                return r;
            r = equal(SLOT(a, M_dtype), PyTuple_GET_ITEM(as, 2));
            if (r != 1)
                return r;
        }
        else if (code == 2) { /* a float (and its sign at zero) */
            if (!PyFloat_CheckExact(a))
                return 0;
            double v = PyFloat_AS_DOUBLE(a), w = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(as, 1));
            if (v != w || (v == 0.0 && copysign(1.0, v) != copysign(1.0, w)))
                return 0;
        }
        else if (code == 3) { /* an int or a bool */
            if ((PyObject *)Py_TYPE(a) != PyTuple_GET_ITEM(as, 1))
                return 0;
            r = equal(a, PyTuple_GET_ITEM(as, 2));
            if (r != 1)
                return r;
        }
        else if (a != Py_None)
            return 0;
    }
    PyObject *expected_params = PyTuple_GET_ITEM(spec, 4);
    if (expected_params == Py_None) {
        r = PyObject_IsTrue(params);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    else {
        PyObject *key = PyObject_CallOneArg(params_key, params);
        if (key == NULL)
            return -1;
        r = equal(key, expected_params);
        Py_DECREF(key);
        if (r != 1)
            return r;
    }
    PyObject *edge_specs = PyTuple_GET_ITEM(spec, 5);
    Py_ssize_t nedges = PyTuple_GET_SIZE(edge_specs);
    if (PyTuple_GET_SIZE(edges) != nedges)
        return 0;
    for (Py_ssize_t j = 0; j < nedges; j++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, j), *es = PyTuple_GET_ITEM(edge_specs, j);
        if (!PyTuple_CheckExact(edge) || PyTuple_GET_SIZE(edge) != 2)
            return 0;
        PyObject *e = PyTuple_GET_ITEM(edge, 0);
        long code = PyLong_AsLong(PyTuple_GET_ITEM(es, 0));
        if (code == 0) {
            if (e != Py_None)
                return 0;
            continue;
        }
        Py_ssize_t name = PyLong_AsSsize_t(PyTuple_GET_ITEM(es, 1));
        if (name < 0 || name >= n_names)
            return 0;
        if (code == 1) {
            if (e != names[name])
                return 0;
            continue;
        }
        names[name] = e; /* (borrowed: the graph holds it while we run) */
        if (code == 3) {
            PyObject *clean = PyObject_CallOneArg(leaf_clean, e);
            if (clean == NULL)
                return -1;
            r = PyObject_IsTrue(clean);
            Py_DECREF(clean);
            if (r != 1)
                return r;
        }
    }
    return 1;
}

static PyObject *
match_graph(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 12) {
        PyErr_SetString(PyExc_TypeError, "_fastpath.match_graph(plan, root, grad_data)");
        return NULL;
    }
    if (!tape_ready)
        Py_RETURN_NONE;
    PyObject *plan = args[0], *root = args[1], *grad = args[2];
    PyObject *dtype_box = PyTuple_GET_ITEM(plan, 0);
    if (!PyList_CheckExact(dtype_box) || PyList_GET_SIZE(dtype_box) < 1 ||
        PyList_GET_ITEM(dtype_box, 0) != PyTuple_GET_ITEM(plan, 1) ||
        (PyObject *)Py_TYPE(grad) != PyTuple_GET_ITEM(plan, 2))
        Py_RETURN_NONE;
    PyObject *leaf_clean = PyTuple_GET_ITEM(plan, 3), *params_key = PyTuple_GET_ITEM(plan, 4);
    PyObject *specs = PyTuple_GET_ITEM(plan, 5);
    Py_ssize_t n_names = PyLong_AsSsize_t(PyTuple_GET_ITEM(plan, 6));
    Py_ssize_t n_nodes = PyTuple_GET_SIZE(specs);
    if (n_names > MATCH_NAMES || n_nodes < 1 || n_names < n_nodes)
        Py_RETURN_NONE;
    PyObject *names_stack[MATCH_NAMES];
    PyObject **names = names_stack;
    for (Py_ssize_t i = 0; i < n_names; i++)
        names[i] = NULL;
    names[0] = root;
    PyObject *arrays = PyList_New(0);
    if (arrays == NULL)
        return NULL;
    if (PyList_Append(arrays, grad) < 0)
        goto error;
    for (Py_ssize_t i = 0; i < n_nodes; i++) {
        if (names[i] == NULL)
            goto no; /* (the plan names every node before its turn) */
        int r = match_node(names[i], PyTuple_GET_ITEM(specs, i), names, n_names, arrays,
                           params_key, leaf_clean);
        if (r < 0)
            goto error;
        if (r == 0)
            goto no;
    }
    for (Py_ssize_t i = 0; i + 1 < n_nodes; i++) { /* the pass's order */
        if (SLOT(names[i], N_seq) == NULL || SLOT(names[i + 1], N_seq) == NULL)
            goto no;
        int r = PyObject_RichCompareBool(SLOT(names[i], N_seq), SLOT(names[i + 1], N_seq),
                                         Py_GT);
        if (r < 0)
            goto error;
        if (r == 0)
            goto no;
    }
    PyObject *shapes = PyTuple_GET_ITEM(plan, 7), *dtypes = PyTuple_GET_ITEM(plan, 8);
    if (PyList_GET_SIZE(arrays) != PyTuple_GET_SIZE(shapes))
        goto no;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(arrays); i++) {
        int r = layout_is(PyList_GET_ITEM(arrays, i), PyTuple_GET_ITEM(shapes, i),
                          PyTuple_GET_ITEM(dtypes, i));
        if (r < 0)
            goto error;
        if (r == 0)
            goto no;
    }
    PyObject *leaf_names = PyTuple_GET_ITEM(plan, 9);
    PyObject *leaf_shapes = PyTuple_GET_ITEM(plan, 10), *leaf_dtypes = PyTuple_GET_ITEM(plan, 11);
    Py_ssize_t n_leaves = PyTuple_GET_SIZE(leaf_names);
    PyObject *leaves = PyTuple_New(n_leaves);
    if (leaves == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < n_leaves; i++) {
        Py_ssize_t name = PyLong_AsSsize_t(PyTuple_GET_ITEM(leaf_names, i));
        PyObject *leaf = name >= 0 && name < n_names ? names[name] : NULL;
        if (leaf == NULL) {
            Py_DECREF(leaves);
            goto no;
        }
        PyTuple_SET_ITEM(leaves, i, Py_NewRef(leaf));
        PyObject *variable = PyObject_GetAttr(leaf, str_variable);
        if (variable == NULL) {
            Py_DECREF(leaves);
            goto error;
        }
        int r = Py_TYPE(variable) == TensorType && SLOT(variable, T_data) != NULL
                    ? layout_is(SLOT(variable, T_data), PyTuple_GET_ITEM(leaf_shapes, i),
                                PyTuple_GET_ITEM(leaf_dtypes, i))
                    : 0;
        Py_DECREF(variable);
        if (r != 1) {
            Py_DECREF(leaves);
            if (r < 0)
                goto error;
            goto no;
        }
    }
    PyObject *nodes = PyTuple_New(n_nodes);
    if (nodes == NULL) {
        Py_DECREF(leaves);
        goto error;
    }
    for (Py_ssize_t i = 0; i < n_nodes; i++)
        PyTuple_SET_ITEM(nodes, i, Py_NewRef(names[i]));
    PyObject *array_tuple = PyList_AsTuple(arrays);
    Py_DECREF(arrays);
    if (array_tuple == NULL) {
        Py_DECREF(nodes);
        Py_DECREF(leaves);
        return NULL;
    }
    PyObject *found = PyTuple_Pack(3, array_tuple, nodes, leaves);
    Py_DECREF(array_tuple);
    Py_DECREF(nodes);
    Py_DECREF(leaves);
    return found;
no:
    Py_DECREF(arrays);
    Py_RETURN_NONE;
error:
    Py_DECREF(arrays);
    return NULL;
}

/* release(kinds, nodes): each node drops what it saved (graph_match's ``release``) */
static PyObject *
release_graph(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || !PyTuple_CheckExact(args[1]) ||
        PyTuple_GET_SIZE(args[0]) != PyTuple_GET_SIZE(args[1]) || !tape_ready) {
        PyErr_SetString(PyExc_TypeError, "_fastpath.release_graph(kinds, nodes)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[0]); i++) {
        PyObject *node = PyTuple_GET_ITEM(args[1], i);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(args[0], i));
        if (kind == 0)
            continue;
        if (!PyObject_TypeCheck(node, OpNodeType)) {
            PyErr_SetString(PyExc_TypeError, "_fastpath.release_graph: not an OpNode");
            return NULL;
        }
        /* _freed first: see OpNode._unpack_args */
        Py_XSETREF(SLOT(node, N_freed), Py_NewRef(Py_True));
        Py_XSETREF(SLOT(node, kind == 1 ? N_args : N_out_data), Py_NewRef(Py_None));
    }
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------------------------- */
/* forward mode's compiled rules (fwd.compiled.process_alone's rule branch)                  */

/* Installed by fwd.compiled (install_forward): the rule table, the default dtype's box, the
 * dual level's and the tensor's slots. ``forward_alone`` runs what ``process_alone`` runs for
 * a call whose arguments' cached signature parts all hold and whose rule is compiled; MISS
 * (nothing run) for everything else, where ``process_alone`` runs its Python code. */
static int forward_ready = 0;
static PyObject *RULES = NULL, *DTYPE_BOX = NULL;
static PyTypeObject *DualLevelType = NULL, *ViewInfoType = NULL;
static Py_ssize_t V_version, V_base;
static Py_ssize_t L_fw_on, L_holders, L_prune_at;
static PyObject *str_prune = NULL, *str_version = NULL, *str_base = NULL, *str_copy = NULL;

static PyObject *
install_forward(PyObject *mod, PyObject *args)
{
    PyObject *rules, *dtype_box, *level_type, *view_type;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyDict_Type, &rules, &PyList_Type, &dtype_box,
                          &PyType_Type, &level_type, &PyType_Type, &view_type))
        return NULL;
    if (TensorType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastpath: install_core first");
        return NULL;
    }
    if (offset_of(view_type, "version", &V_version) || offset_of(view_type, "base", &V_base) ||
        offset_of(level_type, "fw_on", &L_fw_on) || offset_of(level_type, "holders", &L_holders) ||
        offset_of(level_type, "prune_at", &L_prune_at))
        return NULL;
    keep(&RULES, rules);
    keep(&DTYPE_BOX, dtype_box);
    keep((PyObject **)&DualLevelType, level_type);
    keep((PyObject **)&ViewInfoType, view_type);
    if ((str_prune = PyUnicode_InternFromString("_prune")) == NULL ||
        (str_version = PyUnicode_InternFromString("version")) == NULL ||
        (str_base = PyUnicode_InternFromString("base")) == NULL ||
        (str_copy = PyUnicode_InternFromString("copy")) == NULL)
        return NULL;
    forward_ready = 1;
    Py_RETURN_NONE;
}

/* ``view.version == view.base._vc[0]`` (a ViewInfo): 1, 0, or -1 with no error left set */
static int
view_fresh(PyObject *view)
{
    if (Py_TYPE(view) != ViewInfoType)
        return -1;
    PyObject *version = SLOT(view, V_version), *base = SLOT(view, V_base);
    if (version == NULL || base == NULL || Py_TYPE(base) != TensorType ||
        SLOT(base, T_vc) == NULL || SLOT(base, T_vc) == Py_None)
        return -1;
    PyObject *now = PySequence_GetItem(SLOT(base, T_vc), 0);
    int same = now == NULL ? -1 : equal(now, version);
    Py_XDECREF(now);
    if (same < 0)
        PyErr_Clear();
    return same;
}

/* ``part_of``'s cached case: a Tensor's cached signature tuple (borrowed) while its checks
 * hold, or a Python float/int's part (new reference in ``*made``); NULL when the Python code
 * must decide (``*made`` NULL and no error) or on error. */
static PyObject *
part_of(PyObject *level, PyObject *a, PyObject **made)
{
    *made = NULL;
    PyTypeObject *t = Py_TYPE(a);
    if (t == TensorType) {
        PyObject *sig = SLOT(a, T_fwsig), *data = SLOT(a, T_data), *fw = SLOT(a, T_fw);
        PyObject *view = SLOT(a, T_view);
        if (sig == NULL || !PyTuple_CheckExact(sig) || PyTuple_GET_SIZE(sig) != 4 ||
            PyTuple_GET_ITEM(sig, 0) != data || SLOT(a, T_rg) != Py_False || view == NULL ||
            fw == NULL)
            return NULL;
        if (view != Py_None) { /* a view: while its base was not modified in place since */
            int fresh = view_fresh(view);
            if (fresh != 1)
                return NULL; /* (on error too: the Python code raises it again) */
        }
        PyObject *tangent = PyTuple_GET_ITEM(sig, 1), *held = Py_None;
        if (fw != Py_None) {
            if (!PyDict_CheckExact(fw))
                return NULL;
            held = PyDict_GetItemWithError(fw, level);
            if (held == NULL) {
                if (PyErr_Occurred())
                    return NULL;
                held = Py_None;
            }
        }
        if (held != tangent)
            return NULL;
        if (tangent != Py_None &&
            (Py_TYPE(tangent) != TensorType || SLOT(tangent, T_data) != PyTuple_GET_ITEM(sig, 2) ||
             SLOT(tangent, T_rg) != Py_False || SLOT(tangent, T_fw) != Py_None))
            return NULL;
        return sig;
    }
    if (t == &PyFloat_Type || t == &PyLong_Type) {
        /* (0.0 and -0.0 are equal keys otherwise; NaN is no key at all: never equal to itself) */
        PyObject *value;
        int keyed = PyObject_IsTrue(a);
        if (keyed < 0)
            return NULL;
        if (keyed && t == &PyFloat_Type && PyFloat_AS_DOUBLE(a) != PyFloat_AS_DOUBLE(a))
            keyed = 0;
        value = keyed ? Py_NewRef(a) : PyObject_Repr(a);
        if (value == NULL)
            return NULL;
        PyObject *key = PyTuple_Pack(2, (PyObject *)t, value);
        Py_DECREF(value);
        if (key == NULL)
            return NULL;
        *made = PyTuple_Pack(4, Py_None, Py_None, Py_None, key);
        Py_DECREF(key);
        return *made;
    }
    return NULL;
}

static PyObject *
plain_tensor(PyObject *data)
{
    PyObject *t = TensorType->tp_alloc(TensorType, 0);
    if (t == NULL)
        return NULL;
    SLOT(t, T_data) = Py_NewRef(data);
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

/* A forward rule's plan (``tracing.tangents._plan``): (slots, steps, y, ty), each step
 * (function, out slot, to array, references), a reference a slot number or a 1-tuple holding
 * a constant. Runs the generated replay's calls on ``inputs`` (its four arguments) and returns
 * its ``(y, ty)``, or NULL with the exception a call raised. */
#define PLAN_SLOTS 256

static PyObject *
run_plan(PyObject *plan, PyObject **inputs)
{
    PyObject *slots[PLAN_SLOTS]; /* (the first ``used`` are set: no memset of them all) */
    PyObject *result = NULL;
    Py_ssize_t used = PyLong_AsSsize_t(PyTuple_GET_ITEM(plan, 0));
    if (used < 4 || used > PLAN_SLOTS) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "_fastpath: a plan of too many slots");
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        slots[i] = Py_NewRef(inputs[i]);
    for (Py_ssize_t i = 4; i < used; i++)
        slots[i] = NULL;
    PyObject *steps = PyTuple_GET_ITEM(plan, 1);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(steps); k++) {
        PyObject *step = PyTuple_GET_ITEM(steps, k);
        PyObject *refs = PyTuple_GET_ITEM(step, 3), *args[4];
        Py_ssize_t n = PyTuple_GET_SIZE(refs);
        if (n > 4) {
            PyErr_SetString(PyExc_ValueError, "_fastpath: a plan's call of over four arguments");
            goto done;
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *r = PyTuple_GET_ITEM(refs, j);
            if (PyLong_CheckExact(r)) {
                Py_ssize_t slot = PyLong_AsSsize_t(r);
                args[j] = slot >= 0 && slot < used ? slots[slot] : NULL;
            }
            else
                args[j] = PyTuple_GET_ITEM(r, 0);
            if (args[j] == NULL) {
                PyErr_SetString(PyExc_ValueError, "_fastpath: a plan reads an unset slot");
                goto done;
            }
        }
        PyObject *out = PyObject_Vectorcall(PyTuple_GET_ITEM(step, 0), args, n, NULL);
        if (out == NULL)
            goto done;
        if (PyTuple_GET_ITEM(step, 2) == Py_True) { /* a NumPy scalar: a 0-d array (asarray) */
            PyObject *array = PyObject_CallOneArg(ASARRAY, out);
            Py_DECREF(out);
            if (array == NULL)
                goto done;
            out = array;
        }
        Py_ssize_t target = PyLong_AsSsize_t(PyTuple_GET_ITEM(step, 1));
        if (target < 0 || target >= used) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_ValueError, "_fastpath: a plan writes outside its slots");
            goto done;
        }
        Py_XSETREF(slots[target], out);
    }
    Py_ssize_t y = PyLong_AsSsize_t(PyTuple_GET_ITEM(plan, 2));
    Py_ssize_t ty = PyLong_AsSsize_t(PyTuple_GET_ITEM(plan, 3));
    if (y < 0 || y >= used || ty < 0 || ty >= used || slots[y] == NULL || slots[ty] == NULL) {
        PyErr_SetString(PyExc_ValueError, "_fastpath: a plan's results are unset");
        goto done;
    }
    result = PyTuple_Pack(2, slots[y], slots[ty]);
done:
    for (Py_ssize_t i = 0; i < used; i++)
        Py_XDECREF(slots[i]);
    return result;
}

/* the compiled rule's result for ``op`` on ``call`` (a tuple) at ``level``, or MISS */
static PyObject *
forward(PyObject *level, PyObject *op, PyObject *call)
{
    Py_ssize_t n = PyTuple_GET_SIZE(call);
    if (!forward_ready || SLOT(level, L_fw_on) != Py_True || n < 1 || n > 2 ||
        (n == 2 && PyTuple_GET_ITEM(call, 0) == PyTuple_GET_ITEM(call, 1)) ||
        PyList_GET_SIZE(DTYPE_BOX) < 1)
        return Py_NewRef(MISS);
    PyObject *made1, *made2 = NULL, *second = NULL, *key, *result = NULL;
    PyObject *first = part_of(level, PyTuple_GET_ITEM(call, 0), &made1);
    if (first == NULL)
        goto miss;
    if (n == 2) {
        second = part_of(level, PyTuple_GET_ITEM(call, 1), &made2);
        if (second == NULL)
            goto miss;
        key = PyTuple_Pack(4, op, PyList_GET_ITEM(DTYPE_BOX, 0), PyTuple_GET_ITEM(first, 3),
                           PyTuple_GET_ITEM(second, 3));
    }
    else
        key = PyTuple_Pack(3, op, PyList_GET_ITEM(DTYPE_BOX, 0), PyTuple_GET_ITEM(first, 3));
    if (key == NULL)
        goto error;
    PyObject *rule = PyDict_GetItemWithError(RULES, key);
    Py_DECREF(key);
    if (rule == NULL) {
        if (PyErr_Occurred())
            goto error;
        goto miss;
    }
    if (!PyTuple_CheckExact(rule) || PyTuple_GET_SIZE(rule) != 4)
        goto miss; /* (a marker: the Python code notes or compiles the signature) */
    Py_INCREF(rule); /* (the table may change while the replay runs) */
    PyObject *replay_args[4] = {
        PyTuple_GET_ITEM(first, 0), PyTuple_GET_ITEM(first, 2),
        second == NULL ? Py_None : PyTuple_GET_ITEM(second, 0),
        second == NULL ? Py_None : PyTuple_GET_ITEM(second, 2)};
    PyObject *plan = PyTuple_GET_ITEM(rule, 3);
    PyObject *pair = plan == Py_None
                         ? PyObject_Vectorcall(PyTuple_GET_ITEM(rule, 0), replay_args, 4, NULL)
                         : run_plan(plan, replay_args);
    if (pair == NULL) {
        Py_DECREF(rule);
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto error;
        PyErr_Clear(); /* (the general path raises its clear error) */
        goto miss;
    }
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
        Py_DECREF(rule);
        Py_DECREF(pair);
        PyErr_SetString(PyExc_TypeError, "_fastpath: a forward rule returned no (y, ty) pair");
        goto error;
    }
    PyObject *y = PyTuple_GET_ITEM(pair, 0), *ty = PyTuple_GET_ITEM(pair, 1);
    PyObject *copied = NULL;
    if (PyTuple_GET_ITEM(rule, 2) == Py_True) { /* the rule returned an argument's tangent */
        copied = ty = PyObject_CallMethodNoArgs(ty, str_copy);
        if (copied == NULL) {
            Py_DECREF(rule);
            Py_DECREF(pair);
            goto error;
        }
    }
    PyObject *out = plain_tensor(y), *tangent = plain_tensor(ty);
    PyObject *fw = PyDict_New();
    PyObject *sig = tangent == NULL ? NULL : PyTuple_Pack(4, y, tangent, ty, PyTuple_GET_ITEM(rule, 1));
    Py_DECREF(rule);
    Py_DECREF(pair);
    Py_XDECREF(copied);
    if (out == NULL || tangent == NULL || fw == NULL || sig == NULL ||
        PyDict_SetItem(fw, level, tangent) < 0) {
        Py_XDECREF(out);
        Py_XDECREF(tangent);
        Py_XDECREF(fw);
        Py_XDECREF(sig);
        goto error;
    }
    Py_DECREF(tangent);
    Py_SETREF(SLOT(out, T_fw), fw);
    Py_SETREF(SLOT(out, T_fwsig), sig);
    PyObject *holders = SLOT(level, L_holders), *ref = PyWeakref_NewRef(out, NULL);
    if (ref == NULL || holders == NULL || !PyList_CheckExact(holders) ||
        PyList_Append(holders, ref) < 0) {
        Py_XDECREF(ref);
        Py_DECREF(out);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_fastpath: the level's holders are not a list");
        goto error;
    }
    Py_DECREF(ref);
    PyObject *prune_at = SLOT(level, L_prune_at);
    if (prune_at != NULL && PyLong_Check(prune_at) &&
        PyList_GET_SIZE(holders) > PyLong_AsSsize_t(prune_at)) {
        PyObject *done = PyObject_CallMethodNoArgs(level, str_prune);
        if (done == NULL) {
            Py_DECREF(out);
            goto error;
        }
        Py_DECREF(done);
    }
    result = out;
    goto done;
miss:
    result = Py_NewRef(MISS);
    goto done;
error:
    result = NULL;
done:
    Py_XDECREF(made1);
    Py_XDECREF(made2);
    return result;
}

/* forward_alone(level, op, args): the compiled rule's result, or MISS */
static PyObject *
forward_alone(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "_fastpath.forward_alone(level, op, args)");
        return NULL;
    }
    return forward(args[0], args[1], args[2]);
}

/* run_plan(plan, a, ta, b, tb): a forward rule's plan on its four arguments, (y, ty) */
static PyObject *
run_plan_entry(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 4) {
        PyErr_SetString(PyExc_TypeError, "_fastpath.run_plan(plan, a, ta, b, tb)");
        return NULL;
    }
    PyObject *inputs[4] = {args[1], args[2], args[3], args[4]};
    return run_plan(args[0], inputs);
}

/* forward_entry(level, fallback, op, args, stack): a dual level's ``process_alone`` (bound to
 * the level with functools.partial): the compiled rule's result, else ``fallback(level, op,
 * args, stack)`` (fwd.compiled.process_alone) */
static PyObject *
forward_entry(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "_fastpath.forward_entry(level, fallback, op, args, stack)");
        return NULL;
    }
    PyObject *out = forward(args[0], args[2], args[3]);
    if (out != MISS)
        return out;
    Py_DECREF(out);
    PyObject *call[4] = {args[0], args[2], args[3], args[4]};
    return PyObject_Vectorcall(args[1], call, 4, NULL);
}

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
