/*
 * _fastpath_match.c: the graph matcher (tracing.graph_match's checks, from a plan)
 *
 * Part of dualad._fastpath, included by _fastpath.c after its shared declarations (one
 * translation unit: the parts share its static state). See _fastpath.c's top comment.
 */

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
