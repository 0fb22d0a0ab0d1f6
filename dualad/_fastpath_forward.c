/*
 * _fastpath_forward.c: forward mode's compiled rules and their plans (fwd.compiled)
 *
 * Part of dualad._fastpath, included by _fastpath.c after its shared declarations (one
 * translation unit: the parts share its static state). See _fastpath.c's top comment.
 */

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
static PyObject *str_prune = NULL, *str_copy = NULL;

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
    PyObject *out = new_tensor(Py_NewRef(y)), *tangent = new_tensor(Py_NewRef(ty));
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
