"""Names vulture reports as unused that are used where it cannot see (``[tool.vulture]``).

Only true false positives belong here: attributes read by another library, protocol
methods, public fields of result dataclasses, pytest fixtures requested for their side
effect.
"""

from types import SimpleNamespace

_ = SimpleNamespace()

# selenium reads the browser's path from the options (tests/browser.py)
_.binary_location

# argparse reads these: Action.__call__'s parameter, subparsers.required, the parser's
# negative-number matcher (exactdp/cli/__init__.py, _common.py, countdep.py, risk.py)
option_string
_.required
_._negative_number_matcher

# numba.pycc / functools read these (kernels/aot.py, kernels/aot_build.py)
_.__wrapped__
_._customize_tm_features
_.target_cpu
_.output_dir

# the import system calls a meta-path finder's find_spec (tests/test_sweep_runtime.py)
_.find_spec

# a pytest fixture requested for its side effect (tests/test_interop_opendp.py)
features

# public fields of frozen result dataclasses (the API; read by users, not by the package)
continuous  # conversions/edgeworth.py EdgeworthPoint
entropy  # countdep/bounds.py, countdep/prior_opt.py
explanation  # countdep/checks.py
parameter  # countdep/constants.py
quad_error_estimate  # countdep/utility.py
question  # risk/attacks.py
knowledge  # risk/attacks.py
rounding_bound  # risk/hierarchical.py DecisionProbability
delta_before  # tune/run.py TuneResult
pair_before  # tune/run.py TuneResult
_.objective_change  # tune/run.py TuneResult (docs/tune.rst)
