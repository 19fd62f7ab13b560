"""`Frozen` under its old name (its home is `commandcode.values`), for importers not yet moved."""

from ..values import Frozen as Frozen
