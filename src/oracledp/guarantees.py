"""Compatibility path: the guarantee types live in :mod:`oracledp.privacy.guarantees`."""

from oracledp.privacy.composition import gaussian_delta, rho_for_epsilon, zcdp_epsilon  # noqa: F401
from oracledp.privacy.guarantees import (  # noqa: F401
    GuaranteeKind,
    PrivacyGuarantee,
)
