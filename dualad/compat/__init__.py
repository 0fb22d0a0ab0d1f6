"""Other libraries' interfaces on dualad, so that their users switch by changing imports:
``dualad.compat.autograd`` is HIPS autograd's (``grad``, ``jacobian``, ``make_vjp`` ...,
``test_util.check_grads``), to be used with ``import dualad.numpy as np``."""
