"""Other attacks of the supplement that only reinterpret the prior (Kazan and Reiter §S1.2).

Each attack maps onto the single-level (and two-level) machinery with the prior ``p``
replaced by the attack's prior; the released-count model is unchanged:

* ``characteristics`` (main text): ``p`` = P[the target has characteristics c];
* ``participation``: the adversary knows all ``n1`` residents' data and believes with
  ``p_f`` that the target filled out the census (§S1.2, participation attack);
* ``misreporting``: ``p_ℓ`` = P[the target reported correctly] (misreporting attack);
* ``unknown-variable``: the adversary knows every variable of the target but one (e.g.
  ethnicity) and ``p_v`` = P[the target has the value c_e] (unknown-variable attack).

The ℓ-level uniqueness attack (§S1.3) changes the likelihood and lives in
:mod:`exactdp.risk.uniqueness`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.numerics.exact import InputError
from exactdp.risk._validate import check_prior
from exactdp.risk.single import Decision, ExpectedRisk, decision, expected_risk

__all__ = ["Attack", "ATTACKS", "AttackAssessment", "assess_attack"]


@dataclass(frozen=True)
class Attack:
    """One attack scenario of the paper.

    Attributes
    ----------
    name : str
    prior_symbol : str
        How the paper writes the prior of this attack.
    question : str
        What the adversary wants to learn ("has c" in the formulas).
    knowledge : str
        What the adversary is assumed to know.
    """

    name: str
    prior_symbol: str
    question: str
    knowledge: str


ATTACKS = {
    "characteristics": Attack(
        "characteristics", "p", "does the target have characteristics c?",
        "the records of every other resident of the block (main text, §3.1)",
    ),
    "participation": Attack(
        "participation", "p_f", "did the target fill out the census?",
        "complete data of all n1 residents; the other n1-1 responded accurately (§S1.2)",
    ),
    "misreporting": Attack(
        "misreporting", "p_ℓ", "did the target report the correct information?",
        "complete data of all n1 residents; the other n1-1 responded accurately (§S1.2)",
    ),
    "unknown-variable": Attack(
        "unknown-variable", "p_v", "does the target have value c_e of the unknown variable?",
        "complete data of all n1 residents except one variable of the target (§S1.2)",
    ),
}


def get_attack(name: str) -> Attack:
    try:
        return ATTACKS[name]
    except KeyError:
        raise InputError("attack", name, f"must be one of {sorted(ATTACKS)}") from None


@dataclass(frozen=True)
class AttackAssessment:
    """Single-level risk of one attack at one prior.

    Attributes
    ----------
    attack : Attack
    prior : Fraction
        The attack's prior (``p``, ``p_f``, ``p_ℓ`` or ``p_v``).
    decision : Decision
        Threshold and probabilities of a correct decision (with error bounds).
    expected : ExpectedRisk
        Expected posterior and risk given that the answer is "yes" (with error bounds).
    """

    attack: Attack
    prior: Fraction
    decision: Decision
    expected: ExpectedRisk


def assess_attack(name: str, prior, rho, *, convention: str = "paper", known=0) -> AttackAssessment:
    """Evaluate an attack by reinterpreting the prior (exact, via :mod:`.single`).

    Parameters
    ----------
    name : {"characteristics", "participation", "misreporting", "unknown-variable"}
    prior : rational
        The attack's prior probability (0 < prior < 1).
    rho : rational
        Budget of the block count.
    convention : {"paper", "production"}
    known : int

    Returns
    -------
    AttackAssessment

    Notes
    -----
    Exactly the single-level formulas with ``p`` replaced (Kazan and Reiter §S1.2); the
    error bounds are those of :func:`exactdp.risk.single.decision` and
    :func:`exactdp.risk.single.expected_risk`.
    """
    attack = get_attack(name)
    p = check_prior(prior, attack.prior_symbol)
    return AttackAssessment(
        attack=attack,
        prior=p,
        decision=decision(p, rho, convention=convention, known=known),
        expected=expected_risk(p, rho, convention=convention),
    )
