"""Testing helpers: the op database (``dualad.testing.opdb``); gradcheck wrappers and hypothesis
strategies come with the gradcheck issue."""
