"""Statistical privacy audits: exact binomial bounds and a one-pair audit harness.

See ``docs/specs/privacy-testing.md`` section 3.  An audit can only falsify a privacy
claim; passing is evidence, not proof.
"""

from oracledp.audit._bounds import (
    ALPHA,
    clopper_pearson_interval,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    gaussian_mu_max,
    mu_lower_bound,
)
from oracledp.audit._harness import (
    FAILURE,
    AuditResult,
    audit,
    failure_aware_sampler,
    is_failure,
)

__all__ = [
    "ALPHA",
    "FAILURE",
    "AuditResult",
    "audit",
    "clopper_pearson_interval",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "failure_aware_sampler",
    "gaussian_mu_max",
    "is_failure",
    "mu_lower_bound",
]
