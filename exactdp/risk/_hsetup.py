"""Parameters of the two-level (block + block group) model (private module).

Kept separate so that the exact evaluators, the Gibbs sampler and the public API share
one validated, frozen description.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.dgauss.conventions import check_convention, coefficient
from exactdp.numerics.exact import InputError
from exactdp.risk._validate import check_int, check_positive_int, check_prior, check_rho

__all__ = ["HierarchicalSetup", "Y_NOISE_MODELS", "MODELS", "DEFAULT_D"]

#: How the adversary models the noise of ``Y1*`` (sum of the d sibling blocks' noisy counts).
Y_NOISE_MODELS = {
    "approx": "the paper's approximation: one discrete Gaussian with variance d·σ1²",
    "exact": "the exact law: convolution of d discrete Gaussians DG(0, σ1²)",
}

#: Posterior models.
MODELS = {
    "joint": (
        "coherent Bayes posterior of the joint law p^x1 (1-p)^(1-x1) f1 f2 k 1{X2 ≥ X1} with the flat "
        "prior on X2 | X1 (the paper's eqs. (3.8)-(3.9) with their indicators)"
    ),
    "gibbs-variant": (
        "stationary X1-marginal of the Gibbs sampler whose X1 update omits the indicator "
        "1{k1 ≤ k2} (a reconstruction hypothesis for the paper's Figures 4-6, see hierarchical.py)"
    ),
}

#: Default number of sibling groups: enumeration district 39-14 is one of 28 in
#: Granville County (Kazan and Reiter §4.2), so d = 27.
DEFAULT_D = 27


@dataclass(frozen=True)
class HierarchicalSetup:
    """Everything that defines the adversary's two-level inference.

    Parameters
    ----------
    rho1 : rational
        Budget of the block counts (X1* and each sibling block's count).
    rho2 : rational
        Budget of the block-group count X2*.
    d : int
        Number of sibling blocks summed into Y1*.
    p : rational
        Prior probability that the target has ``c``.
    convention : {"paper", "production"}
        σ² = 1/(2ρ) or σ² = 1/ρ for every noisy count.
    y_noise : {"approx", "exact"}
        The adversary's model of the Y1* noise (see ``Y_NOISE_MODELS``).  The data are
        always generated with the exact law.
    model : {"joint", "gibbs-variant"}
        See ``MODELS``.
    known : int
        ``x_{1,-t}``; all released block and block-group values shift by it.
    """

    rho1: Fraction
    rho2: Fraction
    d: int
    p: Fraction
    convention: str = "paper"
    y_noise: str = "approx"
    model: str = "joint"
    known: int = 0

    def __post_init__(self):
        object.__setattr__(self, "rho1", check_rho(self.rho1, "rho1"))
        object.__setattr__(self, "rho2", check_rho(self.rho2, "rho2"))
        object.__setattr__(self, "d", check_positive_int(self.d, "d"))
        object.__setattr__(self, "p", check_prior(self.p))
        object.__setattr__(self, "known", check_int(self.known, "known"))
        check_convention(self.convention)
        if self.y_noise not in Y_NOISE_MODELS:
            raise InputError("y_noise", self.y_noise, f"must be one of {sorted(Y_NOISE_MODELS)}")
        if self.model not in MODELS:
            raise InputError("model", self.model, f"must be one of {sorted(MODELS)}")

    @property
    def a1(self) -> Fraction:
        """Kernel coefficient of the block noise (``exp(-a1 z²)``)."""
        return coefficient(self.rho1, self.convention)

    @property
    def a2(self) -> Fraction:
        """Kernel coefficient of the block-group noise."""
        return coefficient(self.rho2, self.convention)

    @property
    def b(self) -> Fraction:
        """Kernel coefficient of the approximated Y1* noise: ``a1/d`` (variance d·σ1²)."""
        return self.a1 / self.d

    def replace(self, **changes) -> HierarchicalSetup:
        """A copy with some fields changed (validated again)."""
        fields: dict[str, Any] = {
            "rho1": self.rho1,
            "rho2": self.rho2,
            "d": self.d,
            "p": self.p,
            "convention": self.convention,
            "y_noise": self.y_noise,
            "model": self.model,
            "known": self.known,
        }
        fields.update(changes)
        return HierarchicalSetup(**fields)
