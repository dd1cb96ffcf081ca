"""Deprecated path: the guarantee types live in :mod:`oracledp.privacy.guarantees` and the
conversions in :mod:`oracledp.privacy.composition` (this module re-exports them with a
FutureWarning, so old imports and old pickles keep working)."""

import warnings

from oracledp.privacy.composition import gaussian_delta, rho_for_epsilon, zcdp_epsilon
from oracledp.privacy.guarantees import GuaranteeKind, PrivacyGuarantee

warnings.warn("oracledp.guarantees is deprecated: import from oracledp.privacy "
              "(oracledp.privacy.guarantees, oracledp.privacy.composition)",
              FutureWarning, stacklevel=2)

__all__ = ["GuaranteeKind", "PrivacyGuarantee", "gaussian_delta", "rho_for_epsilon",
           "zcdp_epsilon"]
