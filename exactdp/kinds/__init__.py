"""Mechanism kinds beside the discrete Gaussian, each one small class under the loss-group
protocol (:mod:`exactdp.kinds.protocol`), and :class:`Mixture`, a design that mixes them.

>>> from exactdp.kinds import DiscreteLaplace, RandomizedResponse, Mixture
>>> mix = Mixture(((DiscreteLaplace("5/2", 1), 3), (RandomizedResponse("1/2"), 2)))
>>> mix.size, mix.pure_epsilon
(5, Fraction(11, 5))
"""

from exactdp.kinds.approx_dp import ApproxDP
from exactdp.kinds.discrete_laplace import DiscreteLaplace
from exactdp.kinds.gaussian import Gaussian
from exactdp.kinds.laplace import Laplace
from exactdp.kinds.mixture import Mixture
from exactdp.kinds.protocol import LossGroup
from exactdp.kinds.randomized_response import RandomizedResponse, RandomizedResponseNoise

__all__ = ["ApproxDP", "DiscreteLaplace", "Gaussian", "Laplace", "LossGroup", "Mixture", "RandomizedResponse",
           "RandomizedResponseNoise"]
