/*
 * _fastpath_eager.c: the fast callers' no-level case and the tape's recording of their nodes
 *
 * Part of dualad._fastpath, included by _fastpath.c after its shared declarations (one
 * translation unit: the parts share its static state). See _fastpath.c's top comment.
 */

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
    PyObject *r = new_tensor(out);
    if (r == NULL)
        return NULL;
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
    if (records && record(PyTuple_GET_ITEM(state, 0), a, b, nargs, ta, tb, r) < 0) {
        Py_DECREF(r);
        return NULL;
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
